"""A sweep's results: per setting, the statistics of its finished runs
over the seeds (``summary.py``'s) and the best setting, written to
SWEEP_DIR/sweep.json and, as a Markdown table, to sweep.md.

* ``sweep.json``: per setting, n, mean, sample std, 95% confidence interval,
  median, min and max of every test and dev metric over the seeds (and,
  cross-validating, over the folds: each run's test split is one fold)
  (``summary.describe``); the best setting by mean dev metric; every run's
  status, error, fold and the thread counts it saw; paths relative to
  SWEEP_DIR;
* ``sweep.md``: the same as Markdown tables.

The finished runs' files are first brought to the present rules
(``settle_finished``).
"""

from __future__ import annotations

import os
from pathlib import Path

from npcomp.runfiles.rundir import RunDirectory, RunFileError
from .sweep_plan import run_directory, run_state

RESULTS = "sweep.json"
TABLE = "sweep.md"


def settle_finished(sweep_dir: str | Path, runs: list) -> int:
    """Bring the files of the sweep's finished runs to the present rules: their
    config's paths relative (``run_paths.settle_run``, for runs written before)
    and their figures' counts beside their predictions (``test-counts.json``);
    the number of runs changed."""
    from .figures import ensure_counts
    from npcomp.runfiles.run_paths import settle_run

    changed = 0
    for run in runs:
        run_dir = run_directory(sweep_dir, run)
        if run_state(run_dir) == "finished":
            changed += settle_run(run_dir, run.options) | ensure_counts(run_dir)
    return changed


def sweep_results(sweep_dir: str | Path, runs: list, outcomes: dict | None = None) -> dict:
    """The record of SWEEP_DIR/sweep.json: per setting, ``summary.summarise``
    over its finished runs (n, mean, std, ci95, median, min, max of every
    test and dev metric), its options and failed runs; ``best``: the setting
    with the highest mean dev selection metric; ``runs``: each run's status
    (finished, failed, unfinished), error and the thread counts its worker
    reported (``outcomes``: name -> the task's result, for the runs run this
    time)."""
    from npcomp.runfiles.run_paths import relative_where
    from .summary import read_runs, summarise
    from npcomp.training.evaluation import selection_metric

    outcomes = outcomes or {}
    sweep_dir = Path(sweep_dir)
    earlier = _earlier_runs(sweep_dir)
    setting_of, run_records = {}, {}
    for run in runs:
        run_dir = run_directory(sweep_dir, run)
        # a run trained by an earlier invocation keeps what its worker reported then
        outcome = outcomes.get(run.name) or {
            key: value for key, value in earlier.get(run.name, {}).items() if key in ("threads", "resumed", "worker")
        }
        state = run_state(run_dir)
        run_records[run.name] = _run_record(run, run_dir, sweep_dir, state, outcome)
        if state == "finished":
            setting_of[str(run_dir)] = run.setting
    finished = read_runs(list(setting_of))
    summaries = {
        record["setting"]: record
        for record in (
            dict(
                summary,
                setting=setting_of[summary["runs"][0]],
                runs=[Path(path).relative_to(sweep_dir).as_posix() for path in summary["runs"]],
            )
            for summary in summarise(finished, group_of=lambda metrics: setting_of[metrics["run_dir"]])
        )
    }
    settings, best = [], None
    for name in dict.fromkeys(run.setting for run in runs):
        members = [run for run in runs if run.setting == name]
        record = {
            "setting": name,
            "options": relative_where(members[0].options),
            **summaries.get(name, {"seeds": [], "runs": []}),
            "failed": {
                run.name: run_records[run.name].get("error")
                for run in members
                if run_records[run.name]["status"] == "failed"
            },
            "unfinished": [run.name for run in members if run_records[run.name]["status"] == "unfinished"],
        }
        record["setting"] = name
        settings.append(record)
        if "task" in record:
            metric = f"dev_{selection_metric(record['task'])}"
            if metric in record and (best is None or record[metric]["mean"] > best["mean"]):
                best = {"setting": name, "metric": metric, "mean": record[metric]["mean"]}
    shown = os.path.relpath(sweep_dir) if sweep_dir.is_absolute() else str(sweep_dir)
    folds = [run.fold for run in runs if run.fold is not None]
    return {
        "sweep_dir": Path(shown).as_posix(),
        "runs_planned": len(runs),
        "seeds": sorted({run.seed for run in runs}),
        "folds": max(folds) + 1 if folds else None,
        "finished": sum(r["status"] == "finished" for r in run_records.values()),
        "failed": sum(r["status"] == "failed" for r in run_records.values()),
        "unfinished": sum(r["status"] == "unfinished" for r in run_records.values()),
        "best": best,
        "settings": settings,
        "runs": run_records,
    }


def _run_record(run, run_dir: Path, sweep_dir: Path, state: str, outcome: dict) -> dict:
    """A run's entry in sweep.json's ``runs``: its setting, seed (and fold),
    directory, status (finished, failed, unfinished) and, as its worker
    reported them (``outcome``), its error, why it stopped, its threads."""
    status = "finished" if state == "finished" else "failed" if outcome.get("status") not in (None, 0) else "unfinished"
    # relative to the sweep directory, so sweep.json reads the same wherever it is
    record = {
        "setting": run.setting,
        "seed": run.seed,
        "run_dir": run_dir.relative_to(sweep_dir).as_posix(),
        "status": status,
    }
    if run.fold is not None:
        record["fold"] = run.fold
    if status == "failed":
        record["error"] = outcome.get("error")
    if status == "unfinished" and outcome.get("stopped"):
        record["stopped"] = outcome["stopped"]
    for key in ("threads", "resumed", "worker"):
        if key in outcome:
            record[key] = outcome[key]
    return record


def _earlier_runs(sweep_dir: Path) -> dict:
    """The ``runs`` of SWEEP_DIR/sweep.json as the last invocation wrote it
    ({} if there is none, or it cannot be read: it is rewritten anyway)."""
    try:
        return RunDirectory(sweep_dir).read_json(RESULTS).get("runs") or {}
    except (RunFileError, AttributeError):
        return {}


def results_table(results: dict) -> str:
    """SWEEP_DIR/sweep.md: the settings as a Markdown table (summary.py's),
    the best setting, and the runs that failed with their errors."""
    from .summary import format_markdown, format_metrics_markdown

    lines = [
        f"# Sweep {results['sweep_dir']}",
        "",
        f"{results['finished']} of {results['runs_planned']} runs finished, "
        f"{results['failed']} failed, {results['unfinished']} unfinished.",
        "",
    ]
    shown = [record for record in results["settings"] if "model" in record]
    if shown:
        names = [record["setting"] for record in shown]
        lines += [format_markdown(shown, names=names), ""]
        folds = results.get("folds")
        every = format_metrics_markdown(shown, names)
        if every:
            over = (
                f"its {folds} folds" + (" and seeds" if len(results.get("seeds", [])) > 1 else "")
                if folds
                else "its seeds"
            )
            lines += [f"Every test metric of each setting, mean ± std over {over}:", "", every, ""]
    if results["best"]:
        best = results["best"]
        lines += [
            f"Best setting by mean {best['metric'].replace('_', ' ')}: **{best['setting']}** ({best['mean']:.4g}).",
            "",
        ]
    failed = [(name, record["error"]) for name, record in results["runs"].items() if record["status"] == "failed"]
    if failed:
        lines += ["Failed runs:", ""] + [f"- {name}: {error}" for name, error in failed] + [""]
    return "\n".join(lines)


def write_results(sweep_dir: str | Path, results: dict) -> None:
    directory = RunDirectory(sweep_dir)
    directory.write_json(RESULTS, results)
    directory.write_text(TABLE, results_table(results))
