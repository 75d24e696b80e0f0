"""Multi-seed summaries of finished runs (``npcomp summary RUN_DIR ...``).

Runs whose configs differ only in the seed (and in where they ran: data
directory, threads) form one group; each group is reported as mean, sample
standard deviation, median, minimum and maximum of its test metrics (SPEC
Sec. 2: the papers report the mean of 5 runs, or medians of 10).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .rundir import RunDirectory, RunFileError

# config keys that do not change what is trained
_NOT_THE_SETTING = ("seed", "data_dir", "threads", "eval_batch_size", "train_eval", "baseline")
METRICS = ("root_acc", "all_acc", "pearson", "spearman", "mse")
# options added after runs were made (or left out when not given): a config
# without one ran its value here
_LATER_OPTIONS = {"neutral": "unlabelled", "leaf_activation": "identity", "evals_per_epoch": 1}


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
        raise RunFileError(f"{path}: damaged run file (its config has no "
                           f"{', '.join(missing)})")
    if metrics.get("test") is None:
        raise ValueError(f"{path}: the run has not finished (no test metrics)")
    test = metrics["test"]
    main = "pearson" if metrics["config"]["task"] == "sick" else "root_acc"
    if not isinstance(test, dict) or not isinstance(test.get(main), (int, float)):
        raise RunFileError(f"{path}: damaged run file (its test record has no {main})")


def setting_key(config: dict) -> str:
    """The run's setting: its config without the seed, as canonical JSON."""
    config = {**_LATER_OPTIONS, **config}
    return json.dumps({key: value for key, value in config.items()
                       if key not in _NOT_THE_SETTING}, sort_keys=True)


def describe(values) -> dict:
    """mean, std (sample, ddof 1; 0 for one value), median, min, max, n."""
    values = np.asarray(values, dtype=np.float64)
    return {"mean": float(values.mean()),
            "std": float(values.std(ddof=1)) if values.size > 1 else 0.0,
            "median": float(np.median(values)), "min": float(values.min()),
            "max": float(values.max()), "n": int(values.size)}


def summarise(runs: list) -> list:
    """One record per setting, in the order the settings first appear: model,
    task, seeds, the run directories, what sets the group apart from the
    others (``differs``), and ``describe`` of each test metric."""
    groups = {}
    for run in runs:
        groups.setdefault(setting_key(run["config"]), []).append(run)
    configs = [json.loads(key) for key in groups]
    varying = sorted({key for config in configs for key in config
                      if any(other.get(key) != config.get(key) for other in configs)})
    out = []
    for key, members in groups.items():
        config = json.loads(key)
        record = {"model": config["model"], "task": config["task"],
                  "seeds": [run["config"]["seed"] for run in members],
                  "runs": [run["run_dir"] for run in members],
                  "differs": {name: config.get(name) for name in varying
                              if name not in ("model", "task")}}
        for metric in METRICS:
            values = [run["test"][metric] for run in members if metric in run["test"]]
            if values:
                record[f"test_{metric}"] = describe(values)
        out.append(record)
    return out


def format_table(records: list) -> str:
    """One line per group: the test root accuracy (percent), or for a
    relatedness task Pearson's r with the mean Spearman's rho and MSE."""
    lines = [f"{'model':<21}{'task':<7}{'n':>3}  {'test metric: mean ± std':<32}"
             f"{'median':>8}{'min':>8}{'max':>8}  setting"]
    for record in records:
        differs = ", ".join(f"{name}={value}" for name, value in record["differs"].items())
        if "test_pearson" in record:
            main, digits = record["test_pearson"], 4
            label = "r"
            others = (f"  (rho {record['test_spearman']['mean']:.4f}, "
                      f"mse {record['test_mse']['mean']:.4f})")
        else:
            main, digits, label, others = record["test_root_acc"], 2, "root", ""
        spread = f"{label} {main['mean']:.{digits}f} ± {main['std']:.{digits}f}"
        lines.append(f"{record['model']:<21}{record['task']:<7}{main['n']:>3}  "
                     f"{spread:<32}{main['median']:>8.{digits}f}"
                     f"{main['min']:>8.{digits}f}{main['max']:>8.{digits}f}  {differs}{others}")
    return "\n".join(lines)
