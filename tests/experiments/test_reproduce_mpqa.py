"""`npcomp reproduce irsoy-mpqa`: Irsoy & Cardie's Table 1 on a user's copy
of the MPQA phrases.  Without the file every row the table would train is
*no data*, its reason naming the files looked for and the command that runs
the table; with a small file of made-up phrases in MPQA's format (written
here: a text and an ordinal label 0-4, no MPQA text), the table runs end to
end in three folds of one epoch on a real Dask cluster, and its report's
statistics over the folds are those of the fold runs."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from npcomp.cli import main
from npcomp.experiments import paper_tables
from npcomp.experiments.paper_rows import NO_DATA, NOT_IMPLEMENTED
from npcomp.experiments.report import verdict

REPO_ROOT = Path(__file__).resolve().parents[2]
TABLE = paper_tables.table("irsoy-mpqa")
TRAINED = [row.name for row in TABLE.rows if row.trained]
# words of made-up phrases: the label is the polar word's, moved one step
# towards the end of the scale by an intensifier
POLAR = {
    0: ["disastrous", "appalling"],
    1: ["bad", "flawed", "weak"],
    2: ["the", "report"],
    3: ["good", "sound", "fair"],
    4: ["superb", "excellent"],
}
NOUNS = ["plan", "deal", "talks", "policy", "vote"]


def phrases(n: int, seed: int) -> list:
    """``n`` made-up (phrase, label) rows with ordinal labels 0-4."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        label = int(rng.integers(5))
        words = [str(rng.choice(POLAR[label])), str(rng.choice(NOUNS))]
        if label in (0, 4):
            words.insert(0, "very")
        rows.append((" ".join(words), label))
    return rows


def report(out: Path) -> dict:
    return json.loads((out / "irsoy-mpqa.json").read_text())


def entries(record: dict) -> dict:
    return {entry["row"]: entry for entry in record["rows"]}


def test_without_the_copy_every_row_is_no_data(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    assert main(["reproduce", "irsoy-mpqa", "--out", "out", "--data-dir", "data", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "irsoy-mpqa: no row of it can be trained here" in printed
    assert not (tmp_path / "out" / "irsoy-mpqa").exists()  # nothing planned or trained
    command = "`npcomp reproduce irsoy-mpqa --seeds 1 --out out --data-dir data`"
    for name, entry in entries(report(tmp_path / "out")).items():
        if name in TRAINED:
            assert entry["status"] == NO_DATA and entry["verdict"] == NO_DATA, name
            assert "`data/mpqa/phrases.tsv`" in entry["reason"] and command in entry["reason"]
            assert entry["options"], name  # what it would train with is listed
        else:
            assert entry["status"] == NOT_IMPLEMENTED, name
    text = (tmp_path / "out" / "irsoy-mpqa.md").read_text()
    assert text.count("*no data*: ") == len(TRAINED) and command in text
    first = [(tmp_path / "out" / f"irsoy-mpqa.{kind}").read_bytes() for kind in ("md", "json")]
    assert (
        main(["reproduce", "irsoy-mpqa", "--report-only", "--out", "out", "--data-dir", str(tmp_path / "data")]) == 0
    )  # shown relative, as given above
    assert [(tmp_path / "out" / f"irsoy-mpqa.{kind}").read_bytes() for kind in ("md", "json")] == first


def test_the_committed_report_is_no_data_with_the_command():
    record = report(REPO_ROOT / "docs" / "results")
    command = "`npcomp reproduce irsoy-mpqa --seeds 1 --out docs/results --data-dir ../shared/data`"
    assert sorted(name for name, entry in entries(record).items() if entry["status"] == NO_DATA) == sorted(TRAINED)
    assert all(command in entry["reason"] for entry in record["rows"] if entry["status"] == NO_DATA)


def test_the_irsoy_report_points_to_table_1_and_holds_none_of_its_rows():
    irsoy = paper_tables.table("irsoy")
    assert "[irsoy-mpqa](irsoy-mpqa.md)" in irsoy.note
    assert not {row.name for row in irsoy.rows if row.task == "mpqa"}
    assert {row.source for row in TABLE.rows} == {"Table 1"}


def test_overrides_that_do_not_apply_are_refused(tmp_path, capsys):
    assert main(["reproduce", "irsoy", "--folds", "3", "--out", str(tmp_path)]) == 2
    assert "--folds: irsoy does not cross-validate" in capsys.readouterr().err
    assert main(["reproduce", "irsoy-mpqa", "--folds", "1", "--out", str(tmp_path)]) == 2
    assert "--folds: must be a whole number >= 2" in capsys.readouterr().err
    assert main(["reproduce", "irsoy-mpqa", "--report-only", "--epochs", "1", "--out", str(tmp_path)]) == 2
    assert "--epochs: goes with training" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.fixture(scope="module")
def table_run(tmp_path_factory):
    """The table's mRNN (random vectors) on 45 made-up phrases: 3 folds, 1 epoch."""
    pytest.importorskip("distributed")
    root = tmp_path_factory.mktemp("mpqa")
    (root / "data" / "mpqa").mkdir(parents=True)
    (root / "data" / "mpqa" / "phrases.tsv").write_text(
        "text\tlabel\n" + "".join(f"{text}\t{label}\n" for text, label in phrases(45, 1)), encoding="utf-8"
    )
    status = main(
        [
            "reproduce",
            "irsoy-mpqa",
            "--rows",
            "mrnn-rand",
            "--folds",
            "3",
            "--epochs",
            "1",
            "--workers",
            "2",
            "--out",
            str(root / "out"),
            "--data-dir",
            str(root / "data"),
            "--quiet",
        ]
    )
    return root / "out", status


def test_the_table_runs_on_a_copy_over_its_folds(table_run):
    out, status = table_run
    assert status == 0
    runs = [
        json.loads((out / "irsoy-mpqa" / "runs" / f"mrnn-rand-fold{fold}-s1" / "metrics.json").read_text())
        for fold in range(3)
    ]
    for fold, run in enumerate(runs):
        config = run["config"]
        assert (config["model"], config["head"], config["activation"], config["dim"]) == (
            "mrnn",
            "ordinal",
            "identity",
            2,
        )
        assert config["classes"] == ["0", "1", "2", "3", "4"] and config["epochs"] == 1
        assert run["data"]["fold"] == {"fold": fold, "folds": 3, "seed": 0}
        assert run["data"]["files"]["train"]["path"].endswith("data/mpqa/phrases.tsv")
    assert sum(run["data"]["splits"]["test"] for run in runs) == 45  # each phrase once
    record = report(out)
    entry = entries(record)["mrnn-rand"]
    assert entry["status"] == "measured" and entry["n"] == 3
    assert entry["over"] == {"folds": 3, "seeds": [1]}
    values = np.array([run["test"]["ranking_loss"] for run in runs])
    ours = entry["ours"]
    assert ours["mean"] == pytest.approx(values.mean(), abs=1e-12)
    assert ours["std"] == pytest.approx(values.std(ddof=1), abs=1e-12)
    assert (ours["median"], ours["min"], ours["max"]) == (pytest.approx(np.median(values)), values.min(), values.max())
    low, high = stats.t.interval(0.95, 2, loc=values.mean(), scale=stats.sem(values))
    assert ours["ci95"] == [pytest.approx(low), pytest.approx(high)]
    assert entry["test"]["mae"]["mean"] == pytest.approx(np.mean([run["test"]["mae"] for run in runs]))
    assert entry["verdict"] == verdict(0.6799, ours, "ranking_loss")
    for name in TRAINED:
        if name != "mrnn-rand":
            assert entries(record)[name]["verdict"] == "not yet measured (0 of 3 folds)"
    assert record["overrides"] == {"folds": 3, "epochs": 1} and record["folds"] == 3
    assert record["rerun"].endswith("--folds 3 --epochs 1")
    text = (out / "irsoy-mpqa.md").read_text()
    assert "over the 3 folds of each setting" in text
    assert "**Not the paper's protocol**: these runs were made with folds 3, epochs 1" in text
    assert (
        f"| Table 1 | mRNN, random, identity (d_h = 2) | `mrnn-rand` (paper) | 0.6799 | "
        f"{ours['mean']:.4f} ± {ours['std']:.4f} |"
    ) in text


def test_the_reports_figures_and_a_rebuild_from_the_runs(table_run):
    out, _ = table_run
    figure = json.loads((out / "irsoy-mpqa-figures" / "seeds_test_ranking_loss.json").read_text())
    assert figure["title"] == "Test ranking loss over folds, per setting"
    (box,) = figure["boxes"]
    assert box["paper"] == 0.6799 and len(box["values"]) == 3
    first = [(out / f"irsoy-mpqa.{kind}").read_bytes() for kind in ("md", "json")]
    assert main(["reproduce", "irsoy-mpqa", "--report-only", "--out", str(out)]) == 0
    assert [(out / f"irsoy-mpqa.{kind}").read_bytes() for kind in ("md", "json")] == first
