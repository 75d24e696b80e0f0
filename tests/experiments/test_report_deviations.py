"""Each row's departures from the paper on the row (vectors, parses, the
paper's protocol, parameter counts), never an option called the paper's
that the paper did not use; Zhu's PHRASES column; where a report's runs
came from and a training time only beside its load."""
import json
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
    return {"mean": mean, "std": 0.1, "ci95": [mean - 0.1, mean + 0.1], "median": mean,
            "min": min(values), "max": max(values), "n": len(values)}


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
            (run / "metrics.json").write_text(json.dumps(
                {"test": figure, "dev": figure, **metrics}))
            names.append(f"runs/{setting}-s{seed}")
            runs[f"{setting}-s{seed}"] = {"status": "finished", "run_dir": names[-1]}
        settings.append({"setting": setting, "runs": names, "seeds": list(range(1, count + 1)),
                         **{f"{split}_{metric}": _stats(found) for metric, found in values.items()
                            for split in ("test", "dev")}})
    return {"settings": settings, "runs": runs}


def test_no_option_is_called_the_papers_that_the_paper_did_not_use():
    for table in paper_tables.TABLES.values():
        for row in table.rows:
            for name, options in row.settings().items():
                if options.get("vectors") not in NOT_A_PAPERS_VECTORS:
                    continue
                sources = {one["option"]: one["source"]
                           for one in setting_options(row, name, None)}
                assert "paper" not in (sources["vectors"], sources["embedding_dim"])
                if table.name in OWN:   # a table of no paper: npcomp's choice
                    continue
                assert sources["vectors"] == sources["embedding_dim"] == "substitute", \
                    (table.name, name)
                assert any(one.what == "vectors" for one in row.deviations), (table.name, name)


def test_a_rows_departures_stand_beside_its_verdict(tmp_path):
    table = paper_tables.table("tai-sst")
    results = _runs(tmp_path / "tai-sst", {"dependency-fine": {
        "root_acc": [44.1, 44.9, 45.3, 44.6, 45.0]}}, parameters=148013)
    record = report_record(table, results, tmp_path)
    entry = next(one for one in record["rows"] if one["setting"] == "dependency-fine")
    assert [one["what"] for one in entry["deviations"]] == ["vectors", "parses", "parameters"]
    assert entry["deviations"][2]["ours"] == 148013 and entry["deviations"][2]["paper"] == 315840
    line = next(line for line in table_lines(record, tmp_path / "tai-sst", results,
                                             lambda name: (tmp_path / name, None))
                if "`dependency-fine`" in line)
    assert line.endswith("| below; 50-d GloVe 6B, not 300-d 840B; spaCy's parses, not the "
                         "Stanford parser's; 148,013 parameters, the paper's 315,840 |")


def test_zhus_own_rows_say_the_paper_printed_one_dev_tuned_run(tmp_path):
    table = paper_tables.table("zhu")
    results = _runs(tmp_path / "zhu", {
        "all-phrases": {"root_acc": [46.0, 46.5, 46.2, 45.9, 46.9]},
        "rvnn": {"root_acc": [43.0, 44.0, 43.5, 44.5, 43.9]}})
    record = report_record(table, results, tmp_path)
    protocol = {one["setting"]: [d["what"] for d in one.get("deviations", [])]
                for one in record["rows"] if one["setting"] in ("all-phrases", "rvnn")}
    # the RvNN's figure is Socher et al.'s, quoted: not Zhu et al.'s protocol
    assert protocol == {"all-phrases": ["protocol"], "rvnn": []}


def test_zhus_phrases_column_is_tested_beside_the_roots(tmp_path):
    table = paper_tables.table("zhu")
    results = _runs(tmp_path / "zhu", {"all-phrases": {
        "root_acc": [46.0, 46.5, 46.2, 45.9, 46.9], "all_acc": [81.6, 81.7, 81.8, 81.6, 81.7]}})
    record = report_record(table, results, tmp_path)
    entry = next(one for one in record["rows"] if one["setting"] == "all-phrases")
    assert entry["also"]["all_acc"]["paper"] == 81.9
    assert entry["also"]["all_acc"]["verdict"] == "below"
    assert entry["also"]["all_acc"]["ours"]["n"] == 5


def test_a_report_names_its_runs_revisions_and_those_before_the_record(tmp_path):
    code = {"version": "0.1.0", "commit": "a" * 40, "clean": True}
    recorded = _runs(tmp_path / "t", {"new": {"root_acc": [1.0, 2.0]}},
                     provenance={"code": code, "data": {},
                                 "load": {"cores": 2, "samples": 3, "mean_1min": 1.5,
                                          "max_1min": 2.0}},
                     train_wall_s=50.0, setup_s=10.0)
    old = _runs(tmp_path / "t", {"old": {"root_acc": [1.0]}}, train_wall_s=500.0)
    results = {"settings": recorded["settings"] + old["settings"],
               "runs": {**recorded["runs"], **old["runs"]}}
    found = run_provenance(tmp_path / "t", results)
    assert found == {"revisions": [dict(code, runs=["new-s1", "new-s2"])],
                     "before_record": ["old-s1"]}
    lines = revision_lines({"provenance": found}, results)
    assert "- npcomp 0.1.0, `aaaaaaaaaaaa`, clean tree: 2 runs: `new` (2)" in lines
    assert any(line.startswith("- **before the record**") and "`old` (1)" in line
               for line in lines)
    # a training time only beside the load it ran under
    assert timing(tmp_path / "t", results["settings"][0]) == {
        "seconds": 60.0, "load": 1.5, "cores": "2", "runs": 2}
    assert timing(tmp_path / "t", results["settings"][1]) is None
