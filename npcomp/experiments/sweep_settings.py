"""A sweep directory's settings, as its figures draw them (``sweep_figures.py``):
its finished runs (``SWEEP_DIR/runs/*``) grouped by setting as ``npcomp
summary`` groups them, or by the setting names of its ``plan.json``, each
with its label, runs and their metrics.  Plain Python.
"""

from __future__ import annotations

import json
from pathlib import Path

from .figures import FigureError


def sweep_settings(sweep_dir: str | Path) -> tuple:
    """(settings, notes): the finished runs of ``SWEEP_DIR/runs/*`` grouped by
    setting (``summary.summarise``), in the plan's order when it names them,
    each with its label, its runs and their metrics; notes name the runs
    left out (unfinished)."""
    from .summary import read_runs, summarise

    runs_dir = Path(sweep_dir) / "runs"
    runs, notes = [], []
    for run_dir in sorted(path for path in runs_dir.iterdir() if path.is_dir()):
        if not (run_dir / "metrics.json").is_file():
            notes.append(f"{run_dir}: left out, no metrics.json")
            continue
        try:
            runs.extend(read_runs([run_dir]))
        except ValueError as error:  # not finished yet: no test metrics
            notes.append(f"{error}; left out")
    if not runs:
        raise FigureError(f"{runs_dir}: no finished run to draw")
    by_dir = {run["run_dir"]: run for run in runs}
    # a sweep of npcomp sweep names its settings (plan.json): group and label by them
    named = _planned_settings(Path(sweep_dir))
    records = summarise(runs, group_of=(lambda run: named.get(Path(run["run_dir"]).name)) if named else None)
    models = {record["model"] for record in records}
    tasks = {record["task"] for record in records}
    settings = []
    for record in records:
        parts = [record["model"]] if len(models) > 1 or not record["differs"] else []
        parts += [record["task"]] if len(tasks) > 1 else []
        parts += [f"{key}={_shown(value)}" for key, value in record["differs"].items()]
        label = named.get(Path(record["runs"][0]).name) if named else ", ".join(parts)
        settings.append(
            {
                "label": label,
                "model": record["model"],
                "task": record["task"],
                "seeds": record["seeds"],
                "runs": record["runs"],
                "metrics": [by_dir[run_dir] for run_dir in record["runs"]],
            }
        )
    if named:
        order = list(dict.fromkeys(named.values()))
        settings.sort(key=lambda setting: order.index(setting["label"]))
    return settings, notes


def _planned_settings(sweep_dir: Path) -> dict:
    """Run directory name -> its setting's name, from SWEEP_DIR/plan.json, in
    the plan's order ({} for a directory of runs without one)."""
    path = sweep_dir / "plan.json"
    if not path.is_file():
        return {}
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
        return {name: run["setting"] for name, run in runs.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise FigureError(f"{path}: damaged sweep file (no runs with their settings)") from None


def _shown(value):
    """A setting's value as a label shows it: a file by its name."""
    return Path(value).name if isinstance(value, str) and "/" in value else value


def _label(setting: dict) -> str:
    return setting["label"] or setting["model"]
