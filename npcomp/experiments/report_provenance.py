"""Where a report's runs came from: the code revisions their ``metrics.json``
record (``training/provenance.py``), the runs that predate the record, and
each setting's training time beside the load it trained under.

A revision is npcomp's version with the checkout's commit and whether its
package tree was clean (``commit`` None: installed from a wheel).  A run
without a record was trained before runs recorded one: the report counts
and names them rather than guess their code.  A training time is shown
only for runs that recorded the machine's load while they trained (the
same config took 55 s on an idle machine and 3.3 min on a loaded one), so
older runs have none.  Plain Python.
"""
from __future__ import annotations

import json
from pathlib import Path

__all__ = ["revision_lines", "run_provenance", "timing"]


def _metrics(sweep_dir: Path, run_dir: str) -> dict:
    path = Path(sweep_dir) / run_dir / "metrics.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _setting_of(results: dict) -> dict:
    """Run name -> its setting, from the results' settings."""
    out = {}
    for record in results.get("settings", []):
        for run_dir in record.get("runs", []):
            out[Path(run_dir).name] = record["setting"]
    return out


def run_provenance(sweep_dir: str | Path, results: dict | None) -> dict:
    """The report's record of its finished runs' code: ``revisions`` (each
    version, commit, clean, and the runs made under it) and ``before_record``
    (the runs that predate the record), run names sorted."""
    revisions, before = {}, []
    for name, record in sorted(((results or {}).get("runs") or {}).items()):
        if record.get("status") != "finished":
            continue
        code = (_metrics(sweep_dir, record["run_dir"]).get("provenance") or {}).get("code")
        if not code:
            before.append(name)
            continue
        key = (code.get("version"), code.get("commit"), code.get("clean"))
        revisions.setdefault(key, []).append(name)
    return {"revisions": [{"version": version, "commit": commit, "clean": clean, "runs": runs}
                          for (version, commit, clean), runs in revisions.items()],
            "before_record": before}


def _settings_text(runs: list, setting_of: dict) -> str:
    counts = {}
    for run in runs:
        setting = setting_of.get(run, run)
        counts[setting] = counts.get(setting, 0) + 1
    return ", ".join(f"`{setting}` ({count})" for setting, count in counts.items())


def revision_lines(record: dict, results: dict | None) -> list:
    """The report's section on where its runs came from (none without runs)."""
    found = record.get("provenance") or {}
    revisions, before = found.get("revisions") or [], found.get("before_record") or []
    if not revisions and not before:
        return []
    setting_of = _setting_of(results or {})
    lines = ["## Where the runs came from", "",
             ("The code revision each finished run recorded in its `metrics.json` (npcomp's "
              "version, the checkout's commit and whether its package tree was clean; no "
              "commit: installed from a wheel), with the data files' SHA-256 and, for runs on "
              "parses, the parses' digest and parser beside it in the run's file."), ""]
    for one in revisions:
        commit = f"`{one['commit'][:12]}`" if one["commit"] else "no commit (a wheel)"
        tree = {True: "clean tree", False: "changes not committed", None: "tree unknown"}[
            one["clean"]]
        lines.append(f"- npcomp {one['version']}, {commit}, {tree}: {len(one['runs'])} runs: "
                     f"{_settings_text(one['runs'], setting_of)}")
    if before:
        lines.append(f"- **before the record** (trained before runs recorded their code and "
                     f"data): {len(before)} runs: {_settings_text(before, setting_of)}")
    return lines + [""]


def timing(sweep_dir: str | Path, record: dict) -> dict | None:
    """A setting's mean training time per run (training and setup) over the
    runs that recorded the machine's load, with that load (the mean of the
    runs' mean 1-minute load averages) and the machine's logical cores;
    None when no run recorded its load."""
    seconds, loads, cores = [], [], set()
    for run_dir in record.get("runs", []):
        metrics = _metrics(sweep_dir, run_dir)
        load = (metrics.get("provenance") or {}).get("load")
        if not load or metrics.get("train_wall_s") is None:
            continue
        seconds.append(metrics["train_wall_s"] + (metrics.get("setup_s") or 0.0))
        loads.append(load["mean_1min"])
        cores.add(load["cores"])
    if not seconds:
        return None
    return {"seconds": sum(seconds) / len(seconds), "load": sum(loads) / len(loads),
            "cores": "/".join(str(count) for count in sorted(cores)), "runs": len(seconds)}
