"""Each row's departures from the paper on the row (vectors, parses, the
paper's protocol, parameter counts), never an option called the paper's
that the paper did not use; Zhu's PHRASES column; where a report's runs
came from and a training time only beside its load."""

import json
import subprocess
from pathlib import Path

from npcomp.experiments import paper_tables
from npcomp.experiments.option_sources import setting_options
from npcomp.experiments.own_tables import OWN_TABLES
from npcomp.experiments.report import report_record
from npcomp.experiments.report_markdown import table_lines
from npcomp.experiments.report_provenance import revision_lines, run_provenance, timing
from npcomp.experiments.vector_files import GLOVE_50, WORD2VEC_300

# vector files no paper here used: each is run in place of the paper's
NOT_A_PAPERS_VECTORS = (GLOVE_50, WORD2VEC_300)
OWN = {table.name for table in OWN_TABLES}


def _stats(values: list) -> dict:
    mean = sum(values) / len(values)
    return {
        "mean": mean,
        "std": 0.1,
        "ci95": [mean - 0.1, mean + 0.1],
        "median": mean,
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def _runs(sweep: Path, figures: dict, **metrics) -> dict:
    """Run directories with these test figures (setting -> metric -> values),
    and the results record of their settings, as ``committed_results`` gives it."""
    settings, runs = [], {}
    for setting, values in figures.items():
        names = []
        count = len(next(iter(values.values())))
        for seed in range(1, count + 1):
            run = sweep / "runs" / f"{setting}-s{seed}"
            run.mkdir(parents=True)
            figure = {metric: found[seed - 1] for metric, found in values.items()}
            (run / "metrics.json").write_text(json.dumps({"test": figure, "dev": figure, **metrics}))
            names.append(f"runs/{setting}-s{seed}")
            runs[f"{setting}-s{seed}"] = {"status": "finished", "run_dir": names[-1]}
        settings.append(
            {
                "setting": setting,
                "runs": names,
                "seeds": list(range(1, count + 1)),
                **{f"{split}_{metric}": _stats(found) for metric, found in values.items() for split in ("test", "dev")},
            }
        )
    return {"settings": settings, "runs": runs}


def test_no_option_is_called_the_papers_that_the_paper_did_not_use():
    for table in paper_tables.TABLES.values():
        for row in table.rows:
            for name, options in row.settings().items():
                if options.get("vectors") not in NOT_A_PAPERS_VECTORS:
                    continue
                sources = {one["option"]: one["source"] for one in setting_options(row, name, None)}
                assert "paper" not in (sources["vectors"], sources["embedding_dim"])
                if table.name in OWN:  # a table of no paper: npcomp's choice
                    continue
                assert sources["vectors"] == sources["embedding_dim"] == "substitute", (table.name, name)
                assert any(one.what == "vectors" for one in row.deviations), (table.name, name)


def test_a_rows_departures_stand_beside_its_verdict(tmp_path):
    table = paper_tables.table("tai-sst")
    results = _runs(
        tmp_path / "tai-sst", {"dependency-fine": {"root_acc": [44.1, 44.9, 45.3, 44.6, 45.0]}}, parameters=148013
    )
    record = report_record(table, results, tmp_path)
    entry = next(one for one in record["rows"] if one["setting"] == "dependency-fine")
    assert [one["what"] for one in entry["deviations"]] == ["vectors", "parses", "parameters"]
    assert entry["deviations"][2]["ours"] == 148013 and entry["deviations"][2]["paper"] == 315840
    line = next(
        line
        for line in table_lines(record, tmp_path / "tai-sst", results, lambda name: (tmp_path / name, None))
        if "`dependency-fine`" in line
    )
    assert line.endswith(
        "| below; 50-d GloVe 6B, not 300-d 840B; spaCy's parses, not the "
        "Stanford parser's; 148,013 parameters, the paper's 315,840 |"
    )


def test_zhus_own_rows_say_the_paper_printed_one_dev_tuned_run(tmp_path):
    table = paper_tables.table("zhu")
    results = _runs(
        tmp_path / "zhu",
        {
            "all-phrases": {"root_acc": [46.0, 46.5, 46.2, 45.9, 46.9]},
            "rvnn": {"root_acc": [43.0, 44.0, 43.5, 44.5, 43.9]},
        },
    )
    record = report_record(table, results, tmp_path)
    protocol = {
        one["setting"]: [d["what"] for d in one.get("deviations", [])]
        for one in record["rows"]
        if one["setting"] in ("all-phrases", "rvnn")
    }
    # the RvNN's figure is Socher et al.'s, quoted: not Zhu et al.'s protocol
    assert protocol == {"all-phrases": ["protocol"], "rvnn": []}


def test_zhus_phrases_column_is_tested_beside_the_roots(tmp_path):
    table = paper_tables.table("zhu")
    results = _runs(
        tmp_path / "zhu",
        {"all-phrases": {"root_acc": [46.0, 46.5, 46.2, 45.9, 46.9], "all_acc": [81.6, 81.7, 81.8, 81.6, 81.7]}},
    )
    record = report_record(table, results, tmp_path)
    entry = next(one for one in record["rows"] if one["setting"] == "all-phrases")
    assert entry["also"]["all_acc"]["paper"] == 81.9
    assert entry["also"]["all_acc"]["verdict"] == "below"
    assert entry["also"]["all_acc"]["ours"]["n"] == 5


def test_a_report_names_its_runs_revisions_and_those_before_the_record(tmp_path):
    code = {"version": "0.1.0", "commit": "a" * 40, "tree": "b" * 40, "clean": True}
    recorded = _runs(
        tmp_path / "t",
        {"new": {"root_acc": [1.0, 2.0]}},
        provenance={"code": code, "data": {}, "load": {"cores": 2, "samples": 3, "mean_1min": 1.5, "max_1min": 2.0}},
        train_wall_s=50.0,
        setup_s=10.0,
    )
    old = _runs(tmp_path / "t", {"old": {"root_acc": [1.0]}}, train_wall_s=500.0)
    results = {"settings": recorded["settings"] + old["settings"], "runs": {**recorded["runs"], **old["runs"]}}
    found = run_provenance(tmp_path / "t", results)
    assert found == {
        "revisions": [
            {
                "version": "0.1.0",
                "tree": "b" * 40,
                "tree_from": "recorded",
                "clean": True,
                "commits": ["a" * 40],
                "runs": ["new-s1", "new-s2"],
            }
        ],
        "before_record": ["old-s1"],
    }
    lines = revision_lines({"provenance": found}, results)
    assert (
        "- npcomp 0.1.0, package tree `bbbbbbbbbbbb` (recorded by the runs), clean; "
        "1 commit `aaaaaaaaaaaa`: 2 runs: `new` (2)"
    ) in lines
    assert any(line.startswith("- **before the record**") and "`old` (1)" in line for line in lines)
    # a training time only beside the load it ran under
    assert timing(tmp_path / "t", results["settings"][0]) == {"seconds": 60.0, "load": 1.5, "cores": "2", "runs": 2}
    assert timing(tmp_path / "t", results["settings"][1]) is None


def _git(directory, *arguments) -> str:
    return subprocess.run(
        ["git", "-C", str(directory), *arguments], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_runs_at_two_commits_of_one_code_tree_are_one_revision(tmp_path):
    """Committing runs moves HEAD, not the code: two commits whose package
    trees are one object group as one revision, the tree found from each
    commit with git where the runs did not record it; a third commit that
    changes the code is another revision, and a commit git does not know
    is grouped by itself, its tree said to be unknown."""
    repository = tmp_path / "repository"
    (repository / "npcomp").mkdir(parents=True)
    _git(tmp_path, "init", "-q", str(repository))
    (repository / "npcomp" / "__init__.py").write_text("x = 1\n")
    commits = []
    for message, change in (("code", None), ("runs", "runs.txt"), ("more code", "npcomp/y.py")):
        if change:
            (repository / change).write_text(message + "\n")
        _git(repository, "add", "-A")
        _git(repository, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
        commits.append(_git(repository, "rev-parse", "HEAD"))
    sweep = repository / "results" / "t"
    settings, runs = [], {}
    for name, commit in (("a", commits[0]), ("b", commits[1]), ("c", commits[2]), ("d", "f" * 40)):
        one = _runs(
            sweep,
            {name: {"root_acc": [1.0]}},
            provenance={"code": {"version": "0.1.0", "commit": commit, "clean": True}, "data": {}},
        )
        settings += one["settings"]
        runs.update(one["runs"])
    found = run_provenance(sweep, {"settings": settings, "runs": runs})["revisions"]
    tree = _git(repository, "rev-parse", f"{commits[0]}:npcomp")
    assert tree == _git(repository, "rev-parse", f"{commits[1]}:npcomp")
    assert [(one["tree"], one["tree_from"], one["commits"], one["runs"]) for one in found] == [
        (tree, "commit", commits[:2], ["a-s1", "b-s1"]),
        (_git(repository, "rev-parse", f"{commits[2]}:npcomp"), "commit", commits[2:], ["c-s1"]),
        (None, None, ["f" * 40], ["d-s1"]),
    ]
    lines = revision_lines({"provenance": {"revisions": found}}, None)
    assert lines[-4] == (
        f"- npcomp 0.1.0, package tree `{tree[:12]}` (found from the "
        f"commits), clean; 2 commits `{commits[0][:12]}`, "
        f"`{commits[1][:12]}`: 2 runs: `a-s1` (1), `b-s1` (1)"
    )
    assert lines[-2] == (
        "- npcomp 0.1.0, package tree not known (its commit is not in this "
        "repository), clean; commit `ffffffffffff`: 1 run: `d-s1` (1)"
    )


def test_tai_sicks_rows_on_npcomps_trees_are_compared_row_by_row(tmp_path):
    """A table's rows run again on other data (a Variant, at OUT/DIRECTORY/
    TABLE/): each row there against here with Welch's interval and p; a row
    with too few seeds on either side is not yet measured, and a variant
    whose sweep has no plan is left out."""
    from scipy import stats

    from npcomp.experiments.differences import HIGHER, MEASURED, NO_DIFFERENCE, NOT_YET, variant_records
    from npcomp.experiments.report_markdown import _variants

    table = paper_tables.table("tai-sick")
    assert [variant.directory for variant in table.variants] == ["sick-layout"]
    ours, theirs = [0.870, 0.871, 0.872, 0.869, 0.868], [0.860, 0.861, 0.862, 0.859, 0.858]
    same = [0.850, 0.851, 0.849, 0.852, 0.853]
    here = _runs(tmp_path / "tai-sick", {"dependency": {"pearson": theirs}, "lstm": {"pearson": same}})
    sweep = tmp_path / "sick-layout" / "tai-sick"
    there = _runs(
        sweep,
        {"dependency": {"pearson": ours}, "lstm": {"pearson": same[::-1]}, "constituency": {"pearson": [0.85, 0.85]}},
    )
    assert variant_records(table, here, tmp_path, lambda sweep_dir: there) == []  # no plan
    (sweep / "plan.json").write_text("{}")
    found = variant_records(table, here, tmp_path, lambda sweep_dir: there)
    assert [one["directory"] for one in found] == ["sick-layout"]
    rows = {one["row"]: one for one in found[0]["rows"]}
    assert set(rows) == {row.name for row in table.rows if row.trained}
    dependency = rows["dependency"]
    welch = stats.ttest_ind(ours, theirs, equal_var=False)
    assert dependency["status"] == MEASURED and dependency["verdict"] == HIGHER
    assert abs(dependency["difference"] - 0.01) < 1e-12
    assert abs(dependency["p"] - welch.pvalue) < 1e-12
    assert dependency["ci95"] == list(map(float, welch.confidence_interval(0.95)))
    assert rows["lstm"]["verdict"] == NO_DIFFERENCE and abs(rows["lstm"]["difference"]) < 1e-12
    assert rows["constituency"]["status"] == NOT_YET and rows["constituency"]["n"] == [2, 0]
    lines = _variants({"table": "tai-sick", "variants": found})
    assert lines[0] == "## On SICK's trees made by npcomp"
    assert (
        "| Dependency Tree-LSTM | 0.8600 ± 0.0016 (5) | 0.8700 ± 0.0016 (5) | 0.0100 | "
        f"[{dependency['ci95'][0]:.4f}, {dependency['ci95'][1]:.4f}] | "
        f"{welch.pvalue:.2g} | higher there |"
    ) in lines
    assert ("| Constituency Tree-LSTM | - | - | - | - | - | not yet measured (2 seeds there, 0 here, of 5) |") in lines
