"""Where a report's runs came from: the code revisions their ``metrics.json``
record (``training/provenance.py``), the runs that predate the record, and
each setting's training time beside the load it trained under.

A revision is npcomp's version with the git object of the checkout's
package tree (``npcomp/`` at the run's commit) and whether that tree was
clean; the commits that share one tree are one code (committing a sweep's
runs as they finish moves HEAD, not the code), so the report groups by
tree and lists each group's commits.  A run recorded before runs recorded
their tree has it found from its commit with git, where the commit is in
the repository the report is written in (``tree_from``: "recorded",
"commit", or None where neither says; ``commit`` None: installed from a
wheel).  A run without a record was trained before runs recorded one: the
report counts and names them rather than guess their code.  A training time is shown
only for runs that recorded the machine's load while they trained (the
same config took 55 s on an idle machine and 3.3 min on a loaded one), so
older runs have none.  Plain Python.
"""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache
from pathlib import Path

__all__ = ["code_tree", "revision_lines", "run_provenance", "timing"]


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


@lru_cache(maxsize=None)
def _tree_of_commit(directory: str, commit: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", directory, "rev-parse", "--verify", "--quiet", f"{commit}:npcomp"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    tree = done.stdout.strip() if done.returncode == 0 else ""
    return tree or None


def code_tree(code: dict, directory: str | Path) -> tuple:
    """A run's package tree and where it comes from: (tree, "recorded") when
    the run recorded it, (tree, "commit") when git finds it from the run's
    commit in the repository holding ``directory``, else (None, None)."""
    if code.get("tree"):
        return code["tree"], "recorded"
    if code.get("commit") and Path(directory).is_dir():
        tree = _tree_of_commit(str(Path(directory).resolve()), code["commit"])
        if tree:
            return tree, "commit"
    return None, None


def run_provenance(sweep_dir: str | Path, results: dict | None) -> dict:
    """The report's record of its finished runs' code: ``revisions`` (each
    version, package tree, where the tree was found, clean, the commits
    and the runs made under it; a run whose tree is not known is grouped by
    its commit alone) and ``before_record`` (the runs that predate the
    record), run names sorted."""
    revisions, before = {}, []
    for name, record in sorted(((results or {}).get("runs") or {}).items()):
        if record.get("status") != "finished":
            continue
        code = (_metrics(sweep_dir, record["run_dir"]).get("provenance") or {}).get("code")
        if not code:
            before.append(name)
            continue
        tree, origin = code_tree(code, sweep_dir)
        key = (code.get("version"), tree or code.get("commit"), code.get("clean"))
        found = revisions.setdefault(
            key,
            {
                "version": code.get("version"),
                "tree": tree,
                "tree_from": origin,
                "clean": code.get("clean"),
                "commits": [],
                "runs": [],
            },
        )
        if code.get("commit") not in found["commits"]:
            found["commits"].append(code.get("commit"))
        if origin and found["tree_from"] != origin:  # some recorded, some from commits
            found["tree_from"] = "recorded and commit"
        found["runs"].append(name)
    return {"revisions": list(revisions.values()), "before_record": before}


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
    lines = [
        "## Where the runs came from",
        "",
        (
            "The code revision each finished run recorded in its `metrics.json` (npcomp's "
            "version, the checkout's commit and whether its package tree was clean; no "
            "commit: installed from a wheel), grouped by the package tree (the git object "
            "of `npcomp/` at the commit: commits that only add runs share it, so their runs "
            "ran the same code), as the run recorded it or, for a run recorded before runs "
            "recorded the tree, as git finds it from the run's commit. The data files' "
            "SHA-256 and, for runs on parses, the parses' digest and parser are beside it "
            "in the run's file."
        ),
        "",
    ]
    for one in revisions:
        lines.append(
            f"- {_revision_text(one)}: {_plural(len(one['runs']), 'run')}: {_settings_text(one['runs'], setting_of)}"
        )
    if before:
        lines.append(
            f"- **before the record** (trained before runs recorded their code and "
            f"data): {_plural(len(before), 'run')}: {_settings_text(before, setting_of)}"
        )
    return lines + [""]


def _revision_text(one: dict) -> str:
    """One revision as the report lists it: version, tree, where it was found, commits."""
    commits = [commit for commit in one["commits"] if commit]
    clean = {True: "clean", False: "with changes not committed", None: "cleanliness unknown"}[one["clean"]]
    if one["tree"]:
        found = {
            "recorded": "recorded by the runs",
            "commit": "found from the commits",
            "recorded and commit": "recorded by some runs, found from the commits of the others",
        }[one["tree_from"]]
        where = f"package tree `{one['tree'][:12]}` ({found}), {clean}" + (
            f"; {_plural(len(commits), 'commit')} " if commits else ""
        )
    elif commits:
        where = f"package tree not known (its commit is not in this repository), {clean}; commit "
    else:
        return f"npcomp {one['version']}, no commit (a wheel)"
    return f"npcomp {one['version']}, {where}" + ", ".join(f"`{c[:12]}`" for c in commits)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


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
    return {
        "seconds": sum(seconds) / len(seconds),
        "load": sum(loads) / len(loads),
        "cores": "/".join(str(count) for count in sorted(cores)),
        "runs": len(seconds),
    }
