"""The bag-of-words baseline trained beside a model.

``npcomp train`` on the synthetic task (or with ``--baseline``) also trains
``mean-vectors`` on the same data into ``RUN_DIR/baseline`` and prints the
two side by side: the tree model should win where negation and contrast
decide the label.  The baseline takes its own paper defaults, except for
the training options the user gave, which both runs share.  Resuming the
model's run resumes (or starts) its baseline too.
"""

from __future__ import annotations

from pathlib import Path

from npcomp.cells import registry
from npcomp.configuration.defaults import defaults_for
from npcomp.configuration.options import LIST_KINDS, OPTIONS
from npcomp.training.trainer import train

BASELINE_MODEL = registry.baseline_model()
# options the baseline shares with the model's run when the user gave them
SHARED = ("lr", "emb_lr", "l2", "dropout", "epochs", "batch_size")
# the model's own settings, which the baseline takes from its own defaults:
# its protocol (the baseline has the paper's alone) and its recurrence's dropout
MODEL_SETTINGS = ("model", "task", "baseline", "dim", "protocol", "recurrent_dropout")


def shared_options_set(config: dict) -> set:
    """The shared options a run's ``config`` sets away from its model's
    defaults: what the user gave, as far as a resumed run can tell."""
    defaults = defaults_for(config["model"], config["task"], config.get("protocol"), config.get("supervision"))
    return {key for key in SHARED if config.get(key) != defaults.get(key)}


def baseline_config(config: dict, given=()) -> dict:
    """The baseline's config beside the model's ``config``, made where every
    configuration is (``run_config.build_config``): the model's settings
    given over the baseline's own defaults, but for the model's cell
    options it does not take, its ``MODEL_SETTINGS`` and the shared options
    (``SHARED``) the user did not set (``given``: the option names the user
    set), which take the baseline's defaults; its state dimension is its
    embedding dimension."""
    from npcomp.configuration.run_config import build_config

    entry = registry.model(BASELINE_MODEL)
    defaults = defaults_for(BASELINE_MODEL, config["task"])
    options = {}
    for key, value in config.items():
        if (
            key not in OPTIONS
            or key in MODEL_SETTINGS
            or (key in registry.CELL_OPTIONS and key not in entry.options)
            or (key in SHARED and key not in given)
        ):
            continue
        if key in defaults and value == defaults[key]:
            continue  # the baseline's own: not given
        # random vectors (none read) are given as such, not left to the task's default
        options[key] = "random" if key == "vectors" and value is None else value
    return build_config(BASELINE_MODEL, config["task"], dict(_as_given(options), baseline=False))


def _as_given(options: dict) -> dict:
    """Values of a built configuration as options are given (a list of
    rates or classes as its comma text)."""
    return {
        key: ",".join(str(item) for item in value)
        if OPTIONS[key].kind in LIST_KINDS and isinstance(value, (list, tuple))
        else value
        for key, value in options.items()
    }


def train_baseline(
    config: dict, run_dir: str | Path, given=(), overwrite: bool = False, progress: bool = True, echo=print
) -> dict:
    """Train (or resume, or find finished) the baseline of the run in
    ``run_dir``; its metrics."""
    from npcomp.runfiles.rundir import RunDirectory

    directory = RunDirectory(Path(run_dir) / "baseline")
    held = directory.run_files()
    if "metrics.json" in held and directory.read_json("metrics.json").get("test") is not None and not overwrite:
        echo(f"the bag-of-words baseline has finished in {directory.path}")
        return directory.read_json("metrics.json")
    if "checkpoint.npz" in held and not overwrite:
        echo(f"resuming the bag-of-words baseline (mean-vectors) in {directory.path}")
        return train({"threads": config.get("threads")}, directory.path, resume=True, progress=progress, echo=echo)
    echo(f"training the bag-of-words baseline (mean-vectors) -> {directory.path}")
    return train(
        baseline_config(config, given),
        directory.path,
        overwrite=overwrite or bool(held),
        progress=progress,
        echo=echo,
        built=True,
    )
