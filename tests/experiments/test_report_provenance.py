"""The committed reports' runs, each report's from one code: every finished
run that recorded its code names one package tree per report (the tree the
run recorded, or for a run recorded before runs recorded the tree, the
tree git finds at its commit), and that tree was clean when it ran."""

import json
import subprocess
from pathlib import Path

import pytest

from npcomp.experiments.report import committed_results

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / "docs" / "results"
# each committed report: DIR/TABLE.json beside its sweep DIR/TABLE/ (the
# reports of other data, such as docs/results/sick-layout/, included)
REPORTS = sorted(
    path.relative_to(RESULTS).with_suffix("").as_posix()
    for path in RESULTS.rglob("*.json")
    if (path.with_suffix("") / "plan.json").is_file()
)


def _tree_at(commit: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", "--quiet", f"{commit}:npcomp"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def test_the_reports_are_found():
    assert {"tai-sst", "tai-sick", "zhu", "vectors", "sick-layout/tai-sick"} <= set(REPORTS)


@pytest.mark.parametrize("report", REPORTS)
def test_a_reports_recorded_runs_come_from_one_clean_code_tree(report):
    if (
        subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, check=False).returncode
        != 0
    ):
        pytest.skip("not a git checkout: no commit to find a tree from")
    sweep = RESULTS / report
    results = committed_results(sweep)
    trees, unclean, absent = {}, [], {}
    for name, record in sorted(results["runs"].items()):
        if record["status"] != "finished":
            continue
        metrics = json.loads((sweep / record["run_dir"] / "metrics.json").read_text())
        code = (metrics.get("provenance") or {}).get("code")
        if not code:
            continue  # before the record: the report says so
        assert code["commit"], f"{report}/{name}: no commit (a wheel) in a committed run"
        tree = code.get("tree") or _tree_at(code["commit"])
        if tree is None:
            absent.setdefault(code["commit"], []).append(name)
            continue
        if code.get("tree"):  # recorded: the commit's tree, where git has the commit
            at_commit = _tree_at(code["commit"])
            assert at_commit in (None, tree), f"{report}/{name}: tree is not its commit's"
        trees.setdefault(tree, []).append(name)
        if code["clean"] is not True:
            unclean.append(name)
    assert len(trees) <= 1, f"{report}: runs from {len(trees)} code trees: " + "; ".join(
        f"{tree[:12]}: {', '.join(names)}" for tree, names in trees.items()
    )
    assert not unclean, f"{report}: runs with changes not committed: {unclean}"
    if absent:
        pytest.skip(
            f"{report}: commits not in this clone, their trees unknown: "
            + ", ".join(f"{commit[:12]} ({len(names)} runs)" for commit, names in absent.items())
        )
