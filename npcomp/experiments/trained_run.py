"""One run as `npcomp train` makes it: its model trained (fresh, replacing
or resumed) into its run directory, its bag-of-words baseline beside it
when the configuration asks for one, and the lines `npcomp train` prints
(the run announced, its result, the two compared).  The runs layer's
``train`` and a sweep's Dask task (``sweep_task.py``) both train so."""

from __future__ import annotations

from pathlib import Path

from npcomp.cells import registry
from npcomp.data.datasets import PAIR_TASKS


def train_run(
    config: dict, run_dir: Path, given: set, overwrite: bool = False, progress: bool = True, echo=print
) -> tuple:
    """Train ``config`` (as ``run_config.build_config`` made it) into
    ``run_dir`` as `npcomp train` does, saying what it says through
    ``echo``, with its baseline when the config asks for one (``given``:
    the options set, which the baseline shares).  Returns (the run's
    metrics, the baseline's or None)."""
    from npcomp.training.trainer import train

    def announce() -> None:  # the directory is found usable: before anything is read
        echo(f"training {config['model']} on {data_named(config)} -> {run_dir}")

    # built by run_config.build_config, which checked it
    metrics = train(config, run_dir, overwrite=overwrite, progress=progress, echo=echo, announce=announce, built=True)
    echo(result_line(metrics))
    return metrics, _baseline_beside(config, run_dir, metrics, given, overwrite, progress, echo)


def resume_run(run_dir, options: dict, progress: bool = True, echo=print) -> tuple:
    """Continue the run in ``run_dir`` as `npcomp train --resume` does, with
    the ``options`` given (those a resumed run may take anew), and its
    baseline: (the run's metrics, the baseline's or None)."""
    from npcomp.experiments.baseline import shared_options_set
    from npcomp.configuration.run_config import resume_changes
    from npcomp.training.trainer import train

    metrics = train(resume_changes(options), run_dir, resume=True, progress=progress, echo=echo)
    echo(result_line(metrics))
    return metrics, _baseline_beside(
        metrics["config"], run_dir, metrics, shared_options_set(metrics["config"]), progress=progress, echo=echo
    )


def _baseline_beside(
    config: dict, run_dir, metrics: dict, given: set, overwrite: bool = False, progress: bool = True, echo=print
):
    """The bag-of-words baseline's metrics beside a run that asks for one
    (the two compared), else None."""
    from npcomp.experiments.baseline import train_baseline

    if not config.get("baseline") or config["model"] == registry.baseline_model():
        return None
    base_metrics = train_baseline(config, run_dir, given, overwrite=overwrite, progress=progress, echo=echo)
    for line in comparison_lines(metrics, base_metrics):
        echo(line)
    return base_metrics


def result_line(metrics: dict) -> str:
    """The line `npcomp train` ends a run with: its best epoch, dev and test
    metrics and speed."""
    from npcomp.training.evaluation import format_metrics

    unit = "pairs" if metrics["task"] in PAIR_TASKS else "sentences"
    # a fractional epoch when the best dev evaluation fell inside an epoch
    best = metrics.get("best_at") or metrics["best_epoch"]
    test = format_metrics(metrics["test"]) if metrics["test"] is not None else "none (no test split: --test FILE)"
    return (
        f"{metrics['model']} on {data_named(metrics['config'])}: best epoch {best:g}, "
        f"dev {format_metrics(metrics['dev'])}; test {test}; "
        f"{metrics['train_sentences_per_s']:.0f} {unit}/s"
    )


def data_named(config: dict) -> str:
    """The task, or a user's training file (and the fold it holds out)."""
    if not config.get("train"):
        return config["task"]
    fold = f", fold {config['fold']} of {config['folds']}" if config.get("folds") is not None else ""
    return f"{config['train']}{fold}"


def comparison_lines(tree_metrics: dict, bag_metrics: dict) -> list:
    """The tree model's test accuracies beside the bag of words' (none
    without a test split, or for sentence pairs: the two runs' lines say it)."""
    if tree_metrics["test"] is None or "root_acc" not in tree_metrics["test"]:
        return []
    lines = ["", f"{'test set':<28}{'root acc':>10}{'all-node acc':>14}"]
    for label, metrics in (
        (tree_metrics["model"] + " (tree)", tree_metrics),
        (f"{registry.baseline_model()} (bag of words)", bag_metrics),
    ):
        lines.append(f"{label:<28}{metrics['test']['root_acc']:>10.2f}{metrics['test']['all_acc']:>14.2f}")
    return lines
