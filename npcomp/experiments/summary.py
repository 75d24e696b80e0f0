"""Multi-seed summaries of finished runs (``npcomp summary RUN_DIR ...``).

Runs whose configs differ only in the seed (and in where they ran: data
directory, threads) form one group; each group is reported as mean, sample
standard deviation, 95% confidence interval of the mean, median, minimum and
maximum of its test and dev metrics (the papers report the mean of 5 runs, or
medians of 10).  ``npcomp sweep`` reports its settings with the
same functions, grouping by its setting names instead of the configs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from npcomp.data.datasets import PAIR_CLASS_TASKS, PAIR_TASKS
from npcomp.configuration.options import NOT_A_SETTING, OPTIONS
from npcomp.training.run_data import run_finished
from npcomp.runfiles.rundir import RunDirectory, RunFileError

METRICS = ("root_acc", "all_acc", "accuracy", "macro_f1", "ranking_loss", "mae", "pearson", "spearman", "mse")
# how each metric is shown: (label, digits)
SHOWN = {
    "root_acc": ("root", 2),
    "all_acc": ("all", 2),
    "accuracy": ("accuracy", 2),
    "macro_f1": ("macro-F1", 2),
    "ranking_loss": ("ranking loss", 4),
    "mae": ("mae", 4),
    "pearson": ("r", 4),
    "spearman": ("rho", 4),
    "mse": ("mse", 4),
}
# config keys that tell apart runs of one setting: the fold a cross-validated
# run holds out (a setting's statistics are over its folds and seeds)
_NOT_COMPARED = ("fold",)
# options added after runs were made (or left out when not given): a config
# without one ran its value here, or the value the option table says runs made
# before it ran at (``before``: a minibatch in one piece, shards 1)
_LATER_OPTIONS = {
    "neutral": "unlabelled",
    "leaf_activation": "identity",
    "evals_per_epoch": 1,
    **{name: option.before for name, option in OPTIONS.items() if option.before is not None},
}


def read_runs(run_dirs) -> list:
    """The metrics.json of each run directory that has finished (has test metrics)."""
    runs = []
    for run_dir in run_dirs:
        path = Path(run_dir) / "metrics.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: not a run directory (no metrics.json)")
        metrics = RunDirectory(run_dir).read_json("metrics.json")
        _check_record(metrics, path)
        metrics["run_dir"] = str(run_dir)
        runs.append(metrics)
    return runs


def _check_record(metrics, path: Path) -> None:
    """RunFileError unless ``metrics`` holds what a summary reads: the config
    (model, task, seed) and the test metrics of a finished run."""
    if not isinstance(metrics, dict) or not isinstance(metrics.get("config"), dict):
        raise RunFileError(f"{path}: damaged run file (no config record)")
    missing = [key for key in ("model", "task", "seed") if key not in metrics["config"]]
    if missing:
        raise RunFileError(f"{path}: damaged run file (its config has no {', '.join(missing)})")
    if not run_finished(metrics):
        raise ValueError(f"{path}: the run has not finished (no test metrics)")
    # a run on a user's files without a test file is summarised by its dev metrics
    split = "test" if metrics.get("test") is not None else "dev"
    record = metrics.get(split)
    task = metrics["config"]["task"]
    main = "accuracy" if task in PAIR_CLASS_TASKS else "pearson" if task in PAIR_TASKS else "root_acc"
    if not isinstance(record, dict) or not isinstance(record.get(main), (int, float)):
        raise RunFileError(f"{path}: damaged run file (its {split} record has no {main})")


def setting_key(config: dict) -> str:
    """The run's setting: its config without the seed, as canonical JSON."""
    config = {**_LATER_OPTIONS, **config}
    return json.dumps(
        {key: value for key, value in config.items() if key not in NOT_A_SETTING and key not in _NOT_COMPARED},
        sort_keys=True,
    )


def describe(values) -> dict:
    """mean, std (sample, ddof 1; 0 for one value), ``ci95`` (the 95%
    confidence interval of the mean, [low, high], Student's t with n - 1
    degrees of freedom; None for one value, which bounds nothing), median,
    min, max, n."""
    from scipy.stats import t as student_t

    values = np.asarray(values, dtype=np.float64)
    mean, n = float(values.mean()), int(values.size)
    std = float(values.std(ddof=1)) if n > 1 else 0.0
    ci95 = None
    if n > 1:
        half_width = float(student_t.ppf(0.975, n - 1)) * std / np.sqrt(n)
        ci95 = [mean - half_width, mean + half_width]
    return {
        "mean": mean,
        "std": std,
        "ci95": ci95,
        "median": float(np.median(values)),
        "min": float(values.min()),
        "max": float(values.max()),
        "n": n,
    }


def summarise(runs: list, group_of=None) -> list:
    """One record per group, in the order the groups first appear: model,
    task, seeds, the run directories, what sets the group apart from the
    others (``differs``), and ``describe`` of each test and dev metric
    (``test_root_acc``, ``dev_root_acc``, ...).

    Runs are grouped by ``group_of(run)`` (a run: its metrics.json record with
    ``run_dir``), by default their config without the seed (``setting_key``);
    ``npcomp sweep`` groups by its setting names, so two settings that happen
    to train the same config stay apart."""
    group_of = group_of or (lambda run: setting_key(run["config"]))
    groups = {}
    for run in runs:
        groups.setdefault(group_of(run), []).append(run)
    configs = [json.loads(setting_key(members[0]["config"])) for members in groups.values()]
    varying = sorted(
        {key for config in configs for key in config if any(other.get(key) != config.get(key) for other in configs)}
    )
    out = []
    for config, members in zip(configs, groups.values()):
        record = {
            "model": config["model"],
            "task": config["task"],
            "seeds": [run["config"]["seed"] for run in members],
            "runs": [run["run_dir"] for run in members],
            "differs": {name: config.get(name) for name in varying if name not in ("model", "task")},
        }
        if any(run["config"].get("fold") is not None for run in members):
            record["folds"] = [run["config"].get("fold") for run in members]
        for split in ("test", "dev"):
            for metric in METRICS:
                values = [run[split][metric] for run in members if metric in (run.get(split) or {})]
                if values:
                    record[f"{split}_{metric}"] = describe(values)
        out.append(record)
    return out


def headline_metric(record: dict) -> tuple:
    """(metric name, digits, label) a record is reported by: Pearson's r for
    relatedness, the accuracy (percent) of classified pairs, else root
    accuracy (percent)."""
    if "test_pearson" in record or "dev_pearson" in record:
        return "pearson", 4, "r"
    if "test_accuracy" in record or "dev_accuracy" in record:
        return "accuracy", 2, "accuracy"
    return "root_acc", 2, "root"


def format_interval(summary: dict, digits: int) -> str:
    """``[low, high]`` of a ``describe`` record, or ``-`` for one value."""
    if summary["ci95"] is None:
        return "-"
    low, high = summary["ci95"]
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def _reported(record: dict) -> tuple:
    """(split, metric, digits, label) a group is reported by: its test
    headline metric, or its dev one for runs without a test split."""
    metric, digits, label = headline_metric(record)
    return ("test" if f"test_{metric}" in record else "dev"), metric, digits, label


def format_markdown(records: list, names=None) -> str:
    """A Markdown table, one row per group (``names``: a row label per
    record, e.g. the sweep's setting names; default what sets it apart):
    n, the dev headline metric, then the test ones as mean ± std, 95%
    confidence interval, median, min, max (dev's again for runs without a
    test split, marked so)."""
    lines = [
        "| setting | n | dev: mean ± std | test: mean ± std | test 95% CI | median | min | max |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for index, record in enumerate(records):
        split, metric, digits, label = _reported(record)
        name = (
            names[index]
            if names
            else (
                ", ".join(f"{key}={value}" for key, value in record["differs"].items())
                or f"{record['model']} {record['task']}"
            )
        )
        dev, main = record.get(f"dev_{metric}"), record.get(f"{split}_{metric}")
        if main is None:
            lines.append(f"| {name} | 0 | - | - | - | - | - | - |")
            continue
        dev_text = f"{dev['mean']:.{digits}f} ± {dev['std']:.{digits}f}" if dev is not None else "-"
        shown = label if split == "test" else f"(no test split) dev {label}"
        lines.append(
            f"| {name} | {main['n']} | {label} {dev_text} | {shown} "
            f"{main['mean']:.{digits}f} ± {main['std']:.{digits}f} | "
            f"{format_interval(main, digits)} | {main['median']:.{digits}f} | "
            f"{main['min']:.{digits}f} | {main['max']:.{digits}f} |"
        )
    return "\n".join(lines)


def format_metrics_markdown(records: list, names: list, split: str = "test") -> str:
    """A Markdown table of every ``split`` metric the groups have, one row per
    group (``names``), each as mean ± std; "" when they have none."""
    metrics = [metric for metric in METRICS if any(f"{split}_{metric}" in record for record in records)]
    if not metrics:
        return ""
    lines = [
        "| setting | n | " + " | ".join(SHOWN[metric][0] for metric in metrics) + " |",
        "|---|---|" + "---|" * len(metrics),
    ]
    for name, record in zip(names, records):
        cells = []
        for metric in metrics:
            summary, digits = record.get(f"{split}_{metric}"), SHOWN[metric][1]
            cells.append("-" if summary is None else f"{summary['mean']:.{digits}f} ± {summary['std']:.{digits}f}")
        n = max((record[f"{split}_{metric}"]["n"] for metric in metrics if f"{split}_{metric}" in record), default=0)
        lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _others(record: dict, split: str, metric: str) -> str:
    """The means of the group's other ``split`` metrics (all-node accuracy
    aside), for a line of text: ``  (rho 0.7901, mse 0.2830)``."""
    shown = [
        f"{SHOWN[other][0]} {record[f'{split}_{other}']['mean']:.{SHOWN[other][1]}f}"
        for other in METRICS
        if other not in (metric, "all_acc") and f"{split}_{other}" in record
    ]
    return f"  ({', '.join(shown)})" if shown else ""


def format_table(records: list) -> str:
    """One line per group: the test root accuracy (percent) with the mean
    macro-F1 (and an ordinal head's ranking loss and mean absolute error),
    or for a relatedness task Pearson's r with the mean Spearman's rho and
    MSE; a group of runs without a test split by its dev metrics."""
    lines = [
        f"{'model':<21}{'task':<11}{'n':>3}  {'test metric: mean ± std':<32}"
        f"{'95% CI':<20}{'median':>8}{'min':>8}{'max':>8}  setting"
    ]
    for record in records:
        differs = ", ".join(f"{name}={value}" for name, value in record["differs"].items())
        split, metric, digits, label = _reported(record)
        main = record[f"{split}_{metric}"]
        label = label if split == "test" else f"dev {label}"
        spread = f"{label} {main['mean']:.{digits}f} ± {main['std']:.{digits}f}"
        lines.append(
            f"{record['model']:<21}{record['task']:<11}{main['n']:>3}  "
            f"{spread:<32}{format_interval(main, digits):<20}"
            f"{main['median']:>8.{digits}f}{main['min']:>8.{digits}f}"
            f"{main['max']:>8.{digits}f}  {differs}{_others(record, split, metric)}"
        )
    return "\n".join(lines)
