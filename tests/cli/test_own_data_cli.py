"""`npcomp` on a user's own files (--train, --dev, --test): every command on
such runs, end to end, through the command line.

The SST and SICK written out as files (a small subset of each, from the
``data_dir`` fixture; those tests skip without the data) train exactly as
the built-in tasks do, or at all; small files written in ``tmp_path`` carry
the rest: class names, an ordinal head's metrics, runs without a test file,
--resume and the files' digest, K-fold cross-validation on a real Dask
cluster, and each kind of bad input refused with its file and line (exit
status 2, nothing written).  Runs are tiny (d = 4, one or two epochs) and
plain text gets right-branching trees (--tree right), which needs no parser.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from npcomp.cli import main as npcomp_main
from npcomp.data.datasets.tasks import load_task

TINY = ["--dim", "4", "--embedding-dim", "4", "--epochs", "1", "--quiet"]
OWN_DATA_PAGE = Path(__file__).resolve().parents[2] / "docs" / "own-data.md"
SST_NAMES = ("very negative", "negative", "neutral", "positive", "very positive")
SST_SIZES = {"train": 60, "dev": 20, "test": 20}
WORDS = {
    "negative": ["bad", "dull", "awful", "slow", "cold", "boring"],
    "neutral": ["a", "film", "the", "story", "it", "is"],
    "positive": ["good", "fine", "great", "warm", "funny", "lovely"],
}


def main(argv: list) -> int:
    """`npcomp ARGV`'s exit status, paths among the arguments."""
    return npcomp_main([str(word) for word in argv])


def metrics_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def run(argv: list, capsys, stdin: str | None = None, monkeypatch=None) -> tuple:
    """(exit status, stdout, stderr) of `npcomp ARGV`."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    capsys.readouterr()
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def reviews(n: int, seed: int) -> list:
    """``n`` (sentence, label) rows: three words of the label's list and a period."""
    rng = np.random.default_rng(seed)
    names = sorted(WORDS)
    rows = []
    for _ in range(n):
        label = names[rng.integers(len(names))]
        rows.append((" ".join(rng.choice(WORDS[label], size=3)) + " .", label))
    return rows


def write_tsv(path: Path, rows: list, header: str = "text\tlabel") -> Path:
    path.write_text(header + "\n" + "".join("\t".join(map(str, row)) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """train.tsv (30 rows), test.tsv (12 rows) of named labels."""
    root = tmp_path_factory.mktemp("small")
    write_tsv(root / "train.tsv", reviews(30, 1))
    write_tsv(root / "test.tsv", reviews(12, 2))
    return root


@pytest.fixture(scope="module")
def small_run(small) -> Path:
    """A run on the small files, finished."""
    out = small / "run"
    assert (
        main(
            [
                "train",
                "--train",
                small / "train.tsv",
                "--test",
                small / "test.tsv",
                "--tree",
                "right",
                *TINY,
                "--epochs",
                "2",
                "--out",
                out,
            ]
        )
        == 0
    )
    return out


# --------------------------------------------------------------------------
# the SST and SICK as files
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sst_subset(data_dir, tmp_path_factory) -> Path:
    """The first sentences of each SST split, written both as an SST data
    directory (ROOT/data/sst/SPLIT.txt) and as treebank files (ROOT/SPLIT.ptb)."""
    root = tmp_path_factory.mktemp("sst")
    (root / "data" / "sst").mkdir(parents=True)
    for split, size in SST_SIZES.items():
        lines = (data_dir / "sst" / f"{split}.txt").read_text(encoding="utf-8").splitlines()
        text = "".join(line + "\n" for line in lines[:size])
        (root / "data" / "sst" / f"{split}.txt").write_text(text, encoding="utf-8")
        (root / f"{split}.ptb").write_text(text, encoding="utf-8")
    return root


def test_the_sst_as_treebank_files_trains_exactly_as_sst5(sst_subset, tmp_path, capsys):
    options = [*TINY, "--epochs", "2", "--protocol", "paper", "--seed", "3", "--threads", "1"]
    assert (
        main(["train", "--task", "sst5", "--data-dir", sst_subset / "data", *options, "--out", tmp_path / "sst5"]) == 0
    )
    assert (
        main(
            [
                "train",
                *(f"--{split}={sst_subset / f'{split}.ptb'}" for split in SST_SIZES),
                *options,
                "--out",
                tmp_path / "files",
            ]
        )
        == 0
    )
    task, files = metrics_of(tmp_path / "sst5"), metrics_of(tmp_path / "files")
    assert (task["task"], files["task"]) == ("sst5", "files")
    # the treebank files' classes are their numbers; the task's, the SST's names
    assert files["test"]["classes"] == ["0", "1", "2", "3", "4"]
    assert task["test"]["classes"] == list(SST_NAMES)
    for split in ("test", "dev"):
        assert dict(files[split], classes=None) == dict(task[split], classes=None)
    assert [epoch["train_loss"] for epoch in files["epochs"]] == [epoch["train_loss"] for epoch in task["epochs"]]
    assert files["config"]["classes"] == ["0", "1", "2", "3", "4"]
    data = files["data"]
    assert data["class_order"] == "numbers" and data["dev"] == {"from": "file"}
    assert data["splits"] == SST_SIZES
    assert {role: file["format"] for role, file in data["files"].items()} == {
        "train": "ptb",
        "dev": "ptb",
        "test": "ptb",
    }


def _sst_rows(data_dir: Path, split: str) -> list:
    trees = load_task("sst5", data_dir, splits=(split,)).splits[split][: SST_SIZES[split]]
    return [(" ".join(tree.tokens), SST_NAMES[tree.root_label]) for tree in trees]


@pytest.mark.parametrize("form", ["tsv", "jsonl"])
def test_the_sst_as_text_and_class_names_trains_and_predicts_names(form, data_dir, tmp_path, capsys, monkeypatch):
    paths = {}
    for split in SST_SIZES:
        rows = _sst_rows(data_dir, split)
        if form == "tsv":
            paths[split] = write_tsv(tmp_path / f"{split}.tsv", rows)
        else:
            paths[split] = tmp_path / f"{split}.jsonl"
            paths[split].write_text(
                "".join(json.dumps({"text": text, "label": label}) + "\n" for text, label in rows), encoding="utf-8"
            )
    out = tmp_path / "run"
    status, printed, _ = run(
        [
            "train",
            *(f"--{split}={path}" for split, path in paths.items()),
            "--classes",
            ",".join(SST_NAMES),
            "--tree",
            "right",
            *TINY,
            "--out",
            out,
        ],
        capsys,
    )
    assert status == 0 and "macro-F1" in printed
    metrics = metrics_of(out)
    assert metrics["config"]["classes"] == list(SST_NAMES)
    assert metrics["data"]["class_order"] == "given"
    assert metrics["data"]["trees"]["made"] == {"right": sum(SST_SIZES.values())}
    test = metrics["test"]
    confusion = np.array(test["root_confusion"])
    assert confusion.sum() == SST_SIZES["test"] and test["labelled_nodes"] == SST_SIZES["test"]
    assert test["root_acc"] == pytest.approx(100 * np.trace(confusion) / confusion.sum())
    # the same file through eval --file scores what the run scored as its test split
    status, printed, _ = run(["eval", "--run", out, "--file", paths["test"]], capsys)
    assert status == 0
    assert {key: value for key, value in json.loads(printed).items() if key not in ("run", "file")} == test
    status, printed, _ = run(["predict", "--run", out], capsys, "A gripping , funny film .\nDull .\n", monkeypatch)
    records = [json.loads(line) for line in printed.splitlines()]
    assert status == 0 and len(records) == 2
    assert all(record["class"] == SST_NAMES[record["label"]] for record in records)


def test_sick_as_a_tsv_of_scores_and_sentences_trains_relatedness(data_dir, tmp_path, capsys, monkeypatch):
    sick = load_task("sick", data_dir, "chain", splits=("dev", "test"))
    paths = {}
    for role, split, rows in (
        ("train", "dev", slice(0, 150)),
        ("dev", "dev", slice(150, 200)),
        ("test", "test", slice(0, 60)),
    ):
        pairs = sick.splits[split][rows]
        paths[role] = write_tsv(
            tmp_path / f"{role}.tsv",
            [(pair.score, " ".join(pair.tree_a.tokens), " ".join(pair.tree_b.tokens)) for pair in pairs],
            header="score\tsentence_a\tsentence_b",
        )
    out = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--model",
                "treelstm-childsum",
                "--score-range",
                "1,5",
                *(f"--{role}={path}" for role, path in paths.items()),
                "--tree",
                "right",
                "--vectors",
                "random",
                "--tuned-embeddings",
                "--similarity-dim",
                "4",
                *TINY,
                "--epochs",
                "2",
                "--out",
                out,
            ]
        )
        == 0
    )
    metrics = metrics_of(out)
    assert metrics["task"] == "file-pairs" and metrics["data"]["kind"] == "pairs"
    assert metrics["data"]["score_range"] == [1.0, 5.0] and metrics["data"]["n_classes"] == 5
    assert metrics["test"]["pairs"] == 60
    assert all(np.isfinite(metrics["test"][key]) for key in ("pearson", "spearman", "mse"))
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    gold = [pair.score for pair in sick.splits["test"][:60]]
    assert [record["gold"] for record in records] == pytest.approx(gold)
    status, printed, _ = run(
        ["predict", "--run", out], capsys, "A man is playing a guitar .\tA man plays the guitar .\n", monkeypatch
    )
    assert status == 0 and 1.0 <= json.loads(printed)["relatedness"] <= 5.0


# --------------------------------------------------------------------------
# sentence pairs: exactly as SICK, and on a scale of their own
# --------------------------------------------------------------------------


def test_pairs_with_their_parses_train_exactly_as_sick(tmp_path):
    """SICK's files (a small made one) written as TSVs with parents columns,
    trained with the same options, give the `--task sick` metrics."""
    from sick_files import write_small_sick, write_vectors

    data_dir = write_small_sick(tmp_path / "data")
    vectors = write_vectors(tmp_path / "vectors.txt")
    paths = {}
    for split in ("train", "dev", "test"):
        directory = data_dir / "sick" / split
        columns = [
            (directory / name).read_text().splitlines()
            for name in ("sim.txt", "a.toks", "b.toks", "a.parents", "b.parents")
        ]
        paths[split] = write_tsv(
            tmp_path / f"{split}.tsv", list(zip(*columns)), header="score\tsentence_a\tsentence_b\tparents_a\tparents_b"
        )
    options = [
        "--model",
        "treelstm-childsum",
        "--vectors",
        vectors,
        "--dim",
        "4",
        "--epochs",
        "2",
        "--quiet",
        "--seed",
        "2",
        "--threads",
        "1",
    ]
    assert main(["train", "--task", "sick", "--data-dir", data_dir, *options, "--out", tmp_path / "sick"]) == 0
    assert (
        main(
            [
                "train",
                *(f"--{split}={path}" for split, path in paths.items()),
                "--score-range",
                "1,5",
                *options,
                "--out",
                tmp_path / "files",
            ]
        )
        == 0
    )
    sick, files = metrics_of(tmp_path / "sick"), metrics_of(tmp_path / "files")
    assert files["test"] == sick["test"] and files["dev"] == sick["dev"]
    assert files["data"]["trees"]["made"] == {"parents": 2 * sum(files["data"]["splits"].values())}


def test_scores_on_a_scale_of_their_own_are_reported_on_it(tmp_path, capsys, monkeypatch):
    """Scores 0 to 100 train on the head's ratings 1..5 and come back on 0..100."""
    rng = np.random.default_rng(4)
    rows = [
        (
            round(float(rng.uniform(0, 100)), 1),
            " ".join(rng.choice(WORDS["neutral"], 3)),
            " ".join(rng.choice(WORDS["positive"], 2)),
        )
        for _ in range(24)
    ]
    path = write_tsv(tmp_path / "pairs.tsv", rows, header="score\tsentence_a\tsentence_b")
    out = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--model",
                "lstm",
                "--train",
                path,
                "--test",
                path,
                "--score-range",
                "0,100",
                "--vectors",
                "random",
                "--tuned-embeddings",
                "--similarity-dim",
                "4",
                *TINY,
                "--out",
                out,
            ]
        )
        == 0
    )
    metrics = metrics_of(out)
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    gold = np.array([record["gold"] for record in records])
    predicted = np.array([record["predicted"] for record in records])
    assert gold.tolist() == pytest.approx([row[0] for row in rows])
    assert metrics["test"]["mse"] == pytest.approx(np.mean((predicted - gold) ** 2), rel=1e-5)
    assert metrics["test"]["pearson"] == pytest.approx(stats.pearsonr(predicted, gold)[0], abs=1e-5)
    assert predicted.min() >= 0.0 and predicted.max() <= 100.0
    status, printed, _ = run(["predict", "--run", out], capsys, "a film\tgood fine\n", monkeypatch)
    assert status == 0 and 0.0 <= json.loads(printed)["relatedness"] <= 100.0


# --------------------------------------------------------------------------
# every command on a run trained on files
# --------------------------------------------------------------------------


def test_eval_predict_explain_plot_and_summary_on_a_files_run(small, small_run, tmp_path, capsys, monkeypatch):
    names = sorted(WORDS)
    metrics = metrics_of(small_run)
    assert metrics["config"]["classes"] == names and metrics["data"]["class_order"] == "sorted"
    status, printed, _ = run(["eval", "--run", small_run], capsys)
    assert status == 0 and json.loads(printed)["root_acc"] == metrics["test"]["root_acc"]
    status, printed, _ = run(["predict", "--run", small_run, "--file", small / "test.tsv"], capsys)
    records = [json.loads(line) for line in printed.splitlines()]
    assert status == 0 and len(records) == 12
    assert [record["source"] for record in records] == [f"{small / 'test.tsv'}:{line}" for line in range(2, 14)]
    assert all(record["class"] == names[record["label"]] for record in records)
    status, printed, _ = run(["explain", "--run", small_run, "a good film ."], capsys)
    assert status == 0 and any(name in printed for name in names)
    status, printed, _ = run(["plot", small_run, "--out", tmp_path / "figures"], capsys)
    assert status == 0
    confusion = json.loads((tmp_path / "figures" / "root_confusion.json").read_text())
    assert confusion["classes"] == names
    status, printed, _ = run(["summary", small_run], capsys)
    assert status == 0 and "files" in printed and "macro-F1" in printed


def test_macro_f1_is_that_of_the_confusion_matrix(small_run):
    test = metrics_of(small_run)["test"]
    confusion = np.array(test["root_confusion"])
    f1 = []
    for k in range(len(confusion)):
        true_positive = confusion[k, k]
        occurring = confusion[k, :].sum() + confusion[:, k].sum()
        if occurring:
            f1.append(2 * true_positive / occurring)
    assert test["macro_f1"] == pytest.approx(100 * np.mean(f1))


def test_an_ordinal_head_reports_the_ranking_loss_and_mae(small, tmp_path, capsys):
    status, _, error = run(
        [
            "train",
            "--train",
            small / "train.tsv",
            "--test",
            small / "test.tsv",
            "--head",
            "ordinal",
            "--tree",
            "right",
            *TINY,
            "--out",
            tmp_path / "sorted",
        ],
        capsys,
    )
    assert status == 2 and "--classes: not given, and --head ordinal ranks" in error
    assert not (tmp_path / "sorted").exists()
    out = tmp_path / "ordinal"
    assert (
        main(
            [
                "train",
                "--train",
                small / "train.tsv",
                "--test",
                small / "test.tsv",
                "--head",
                "ordinal",
                "--classes",
                "negative,neutral,positive",
                "--tree",
                "right",
                *TINY,
                "--epochs",
                "2",
                "--out",
                out,
            ]
        )
        == 0
    )
    test = metrics_of(out)["test"]
    records = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    gold = np.array([record["gold"][-1] for record in records])
    predicted = np.array([record["predicted"][-1] for record in records])
    assert test["ranking_loss"] == pytest.approx(np.mean(np.abs(predicted - gold)))
    assert 0.0 <= test["mae"] <= 2.0
    from npcomp.runfiles.model_files import load_model
    from npcomp.training.run_data import read_run_file
    from npcomp.training.encoding import encode
    from npcomp.training.evaluation import predict_split

    model, params, config, vocab = load_model(out)
    trees, _ = read_run_file(config, small / "test.tsv")
    outputs = predict_split(model, params, encode(trees, vocab))
    expected = np.array([output[tree.root].sum() for tree, output in zip(trees, outputs)])
    assert test["mae"] == pytest.approx(np.mean(np.abs(expected - gold)), rel=1e-4)


def test_without_a_test_file_there_are_no_test_metrics(small, tmp_path, capsys):
    out = tmp_path / "run"
    status, printed, _ = run(
        [
            "train",
            "--train",
            small / "train.tsv",
            "--dev-fraction",
            "0.3",
            "--data-seed",
            "5",
            "--tree",
            "right",
            *TINY,
            "--out",
            out,
        ],
        capsys,
    )
    assert status == 0 and "test none (no test split" in printed
    metrics = metrics_of(out)
    assert metrics["test"] is None and metrics["ended"] is True
    assert metrics["data"]["dev"] == {"from": "train", "fraction": 0.3, "seed": 5}
    assert metrics["data"]["splits"] == {"train": 21, "dev": 9}
    assert not (out / "predictions.jsonl").exists()
    from npcomp.experiments.sweep_plan import run_state

    assert run_state(out) == "finished"
    status, _, error = run(["eval", "--run", out], capsys)
    assert status == 2 and "no test split" in error
    status, printed, _ = run(["eval", "--run", out, "--split", "dev"], capsys)
    assert status == 0 and json.loads(printed)["root_acc"] == metrics["dev"]["root_acc"]
    status, printed, _ = run(["summary", out], capsys)
    assert status == 0 and f"dev root {metrics['dev']['root_acc']:.2f}" in printed


def test_resume_checks_the_files_bytes(small, tmp_path, capsys):
    train = write_tsv(tmp_path / "train.tsv", reviews(20, 3))
    out = tmp_path / "run"
    assert main(["train", "--train", train, "--tree", "right", *TINY, "--out", out]) == 0
    moved = tmp_path / "moved.tsv"
    train.rename(moved)
    # the same bytes elsewhere: the run goes on
    assert main(["train", "--resume", out, "--train", moved, "--epochs", "2", "--quiet"]) == 0
    assert len(metrics_of(out)["epochs"]) == 2
    edited = moved.read_text().replace("\tpositive\n", "\tnegative\n", 1)
    moved.write_text(edited)
    status, _, error = run(["train", "--resume", out, "--epochs", "3", "--quiet"], capsys)
    assert status == 2 and f"--train: {moved}: not the bytes of the train file" in error
    assert len(metrics_of(out)["epochs"]) == 2
    status, _, error = run(["train", "--resume", out, "--classes", "a,b,c", "--quiet"], capsys)
    assert status == 2 and "cannot take classes" in error


def test_files_given_relative_are_found_from_another_directory(tmp_path, capsys, monkeypatch):
    """A run trained on relative paths keeps its files relative to its run
    directory (model.npz, checkpoint.npz: no absolute path), so eval and
    --resume find them from anywhere; metrics.json records them as given."""
    (tmp_path / "data").mkdir()
    write_tsv(tmp_path / "data" / "train.tsv", reviews(20, 3))
    write_tsv(tmp_path / "data" / "test.tsv", reviews(8, 4))
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            [
                "train",
                "--train",
                "data/train.tsv",
                "--test",
                "data/test.tsv",
                "--tree",
                "right",
                *TINY,
                "--out",
                "runs/relative",
            ]
        )
        == 0
    )
    out = tmp_path / "runs" / "relative"
    metrics = metrics_of(out)
    assert (metrics["config"]["train"], metrics["config"]["test"]) == ("data/train.tsv", "data/test.tsv")
    for name in ("model.npz", "checkpoint.npz"):
        with np.load(out / name) as archive:
            config = json.loads(str(archive["config"]))
        assert (config["train"], config["test"]) == ("../../data/train.tsv", "../../data/test.tsv"), name
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status, printed, error = run(["eval", "--run", out], capsys)
    assert status == 0, error
    assert json.loads(printed)["root_acc"] == metrics["test"]["root_acc"]
    assert main(["train", "--resume", out, "--epochs", "2", "--quiet"]) == 0
    assert len(metrics_of(out)["epochs"]) == 2
    assert metrics_of(out)["config"]["train"] == "../data/train.tsv"  # from here


def test_options_that_do_not_go_together(small, tmp_path, capsys):
    train = small / "train.tsv"
    cases = [
        (["--task", "sst5", "--train", train], "--task: sst5, and --train"),
        (["--task", "synthetic", "--dev-fraction", "0.2"], "--dev-fraction: goes with --train"),
        (["--train", train, "--score-range", "1,5"], "--score-range: applies to a file of sentence pairs"),
        (
            ["--train", train, "--supervision", "spans", "--model", "lstm"],
            "--supervision: spans: a user's files are not read as phrase spans",
        ),
        (["--train", train, "--folds", "3"], "--folds: a run trains one fold"),
        (["--train", train, "--fold", "1"], "--fold: goes with --folds K"),
        (["--train", train, "--folds", "3", "--fold", "3"], "--fold: fold 3 of 3"),
        (
            ["--train", train, "--test", train, "--folds", "3", "--fold", "0"],
            "--folds: cross-validation takes each fold's test split",
        ),
        (["--train", train, "--classes", "a"], "--classes: 1 class name(s)"),
        (["--train", train, "--dev-fraction", "1.5"], "--dev-fraction: must be"),
    ]
    for options, message in cases:
        status, _, error = run(["train", *options, *TINY, "--out", tmp_path / "none"], capsys)
        assert status == 2 and message in error, (options, error)
        assert not (tmp_path / "none").exists()


def test_a_sequence_model_trains_on_the_sentences(small, tmp_path):
    """Its paper setting's phrase spans are the SST's: a file's sentences
    train as chains labelled at their last word."""
    from npcomp.configuration.run_config import build_config

    config = build_config("lstm", None, {"train": str(small / "train.tsv")})
    assert (config["task"], config["structure"], config["supervision"]) == ("files", "chain", "all")
    out = tmp_path / "lstm"
    assert main(["train", "--model", "lstm", "--train", small / "train.tsv", *TINY, "--out", out]) == 0
    assert metrics_of(out)["data"]["trees"]["made"] == {"chain": 30}


def test_one_fold_trained_alone(small, tmp_path):
    out = tmp_path / "fold"
    assert (
        main(
            [
                "train",
                "--train",
                small / "train.tsv",
                "--folds",
                "3",
                "--fold",
                "1",
                "--tree",
                "right",
                *TINY,
                "--out",
                out,
            ]
        )
        == 0
    )
    data = metrics_of(out)["data"]
    assert data["fold"] == {"fold": 1, "folds": 3, "seed": 0}
    assert data["splits"]["test"] == 10 and sum(data["splits"].values()) == 30


# --------------------------------------------------------------------------
# cross-validation
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fold_sweep(small):
    pytest.importorskip("distributed")
    out = small / "folds"
    status = main(
        [
            "sweep",
            "--train",
            small / "train.tsv",
            "--folds",
            "3",
            "--seeds",
            "1-2",
            "--tree",
            "right",
            *TINY,
            "--workers",
            "2",
            "--out",
            out,
        ]
    )
    return out, status


def test_the_fold_statistics_are_those_of_the_fold_runs(fold_sweep):
    out, status = fold_sweep
    assert status == 0
    results = json.loads((out / "sweep.json").read_text())
    names = [f"base-fold{fold}-s{seed}" for seed in (1, 2) for fold in range(3)]
    assert list(results["runs"]) == names and results["folds"] == 3
    assert [results["runs"][name]["fold"] for name in names] == [0, 1, 2, 0, 1, 2]
    runs = [metrics_of(out / "runs" / name) for name in names]
    # each fold's test split is its own third of the file: every example tested once a seed
    tested = [run["data"]["splits"]["test"] for run in runs]
    assert tested[:3] == tested[3:] and sum(tested[:3]) == 30
    assert [run["data"]["fold"]["fold"] for run in runs] == [0, 1, 2, 0, 1, 2]
    (setting,) = results["settings"]
    assert setting["folds"] == [0, 1, 2, 0, 1, 2]
    for split in ("test", "dev"):
        for metric in ("root_acc", "all_acc", "macro_f1"):
            values = np.array([run[split][metric] for run in runs])
            summary = setting[f"{split}_{metric}"]
            assert summary["n"] == 6
            assert summary["mean"] == pytest.approx(values.mean(), abs=1e-12)
            assert summary["std"] == pytest.approx(values.std(ddof=1), abs=1e-12)
            assert (summary["median"], summary["min"], summary["max"]) == (
                pytest.approx(np.median(values)),
                values.min(),
                values.max(),
            )
            low, high = stats.t.interval(0.95, 5, loc=values.mean(), scale=stats.sem(values))
            assert summary["ci95"] == [pytest.approx(low), pytest.approx(high)]
    table = (out / "sweep.md").read_text()
    mean = setting["test_root_acc"]["mean"]
    assert "| base | 6 |" in table and f"root {mean:.2f} ± " in table
    assert "over its 3 folds and seeds" in table


def test_a_fold_sweeps_confusion_matrix_names_the_runs_classes(fold_sweep, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out, _ = fold_sweep
    status, _, error = run(["plot", out, "--out", tmp_path / "figures"], capsys)
    assert status == 0, error
    figure = json.loads((tmp_path / "figures" / "root_confusion_base.json").read_text())
    assert figure["classes"] == sorted(WORDS)
    assert figure["title"].endswith("(files test, 3 folds x 2 seeds)")
    runs = [metrics_of(out / "runs" / f"base-fold{fold}-s{seed}") for seed in (1, 2) for fold in range(3)]
    assert figure["counts"] == np.sum([run["test"]["root_confusion"] for run in runs], axis=0).tolist()


def test_a_fold_sweep_run_again_is_finished_and_a_fold_is_refused(fold_sweep, small, capsys):
    out, _ = fold_sweep
    status, printed, _ = run(
        [
            "sweep",
            "--train",
            small / "train.tsv",
            "--folds",
            "3",
            "--seeds",
            "1-2",
            "--tree",
            "right",
            *TINY,
            "--out",
            out,
        ],
        capsys,
    )
    assert status == 0 and "6 finished before" in printed
    status, _, error = run(
        ["sweep", "--train", small / "train.tsv", "--folds", "3", "--fold", "1", *TINY, "--out", small / "other"],
        capsys,
    )
    assert status == 2 and "fold is set by the sweep: with folds K it trains every fold" in error
    assert not (small / "other").exists()


# --------------------------------------------------------------------------
# bad files: file and line, what to do, exit status 2, nothing written
# --------------------------------------------------------------------------

BAD = {
    "malformed line": ("train.tsv", "text\tlabel\ngood film\tpositive\ndull\tnegative\textra\n", [], "train.tsv:3: "),
    "missing column": (
        "train.tsv",
        "text\tscore\ngood film\tpositive\n",
        [],
        "train.tsv:1: no 'label' column: the header has text, score",
    ),
    "label not in --classes": (
        "train.tsv",
        "text\tlabel\ngood\tpositive\nbad\tgreat\n",
        ["--classes", "negative,positive"],
        "train.tsv:3: label 'great' is not one of the classes given",
    ),
    "empty split": ("dev.tsv", "text\tlabel\n", [], "dev.tsv: no rows under the header"),
    "tree the model cannot compose": (
        "train.tsv",
        "text\ttree\tlabel\ngood\t\tpositive\na b c\t(X (X a) (X b) (X c))\tnegative\n",
        [],
        "train.tsv:3: ",
    ),
    "score outside the range": (
        "train.tsv",
        "score\tsentence_a\tsentence_b\n3\ta\tb\n7\tc\td\n",
        ["--score-range", "1,5", "--vectors", "random"],
        "train.tsv:3: score 7 outside the range given, [1, 5]",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_each_bad_file_is_named_by_file_and_line(case, tmp_path, capsys, monkeypatch):
    name, text, options, message = BAD[case]
    monkeypatch.chdir(tmp_path)
    good = write_tsv(tmp_path / "good.tsv", reviews(6, 5))
    (tmp_path / name).write_text(text, encoding="utf-8")
    files = ["--train", name] if name == "train.tsv" else ["--train", good, "--dev", name]
    status, _, error = run(["train", *files, *options, *TINY, "--out", "run"], capsys)
    assert status == 2, error
    assert error.startswith(f"npcomp train: error: {message}"), error
    assert len(error.splitlines()) == 1 and "Traceback" not in error
    assert not (tmp_path / "run").exists()
    # a sweep refuses it before anything is written, naming the file as given
    status, _, error = run(["sweep", *files, *options, *TINY, "--out", "sweep"], capsys)
    assert status == 2 and f"(the command line): {message}" in error, error
    assert str(tmp_path) not in error
    assert not (tmp_path / "sweep").exists()


def test_a_bad_file_to_eval_or_predict(small, small_run, tmp_path, capsys):
    bad = write_tsv(tmp_path / "bad.tsv", [("good film .", "positive"), ("dull .", "awful")])
    status, _, error = run(["eval", "--run", small_run, "--file", bad], capsys)
    assert (
        status == 2
        and f"{bad}:3: label 'awful' is not one of the classes given "
        "(negative, neutral, positive): correct the label: a trained run predicts its own "
        "classes only"
        in error
    )
    assert not (small_run / "predictions-file-bad.jsonl").exists()
    pairs = write_tsv(tmp_path / "pairs.tsv", [(1, "a", "b")], header="score\tsentence_a\tsentence_b")
    status, _, error = run(["predict", "--run", small_run, "--file", pairs], capsys)
    assert status == 2 and "sentence pairs, but the run was trained on labelled" in error


# --------------------------------------------------------------------------
# the example of docs/own-data.md
# --------------------------------------------------------------------------


def readme_example() -> tuple:
    """The page "Your own data" (docs/own-data.md): its files (name -> text)
    and its commands."""
    section = OWN_DATA_PAGE.read_text(encoding="utf-8")
    files = dict(re.findall(r"^```([\w.-]+\.\w+)\n(.*?)^```", section, re.DOTALL | re.MULTILINE))
    commands = [line.strip() for line in section.splitlines() if line.startswith("    ") and "npcomp " in line]
    return files, commands


def test_the_own_data_page_example_runs(tmp_path, capsys, monkeypatch):
    """Each command as printed, the training runs made tiny (d = 4, one epoch)."""
    files, commands = readme_example()
    assert sorted(files) == ["reviews-test.tsv", "reviews.tsv"]
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for command in commands:
        stdin = None
        if " | " in command:
            echo, command = command.split(" | ")
            stdin = shlex.split(echo)[1] + "\n"
        argv = shlex.split(command)[1:]
        if argv[0] in ("train", "sweep"):
            argv += TINY
        status, printed, error = run(argv, capsys, stdin, monkeypatch)
        assert status == 0, f"{command}: {error}"
        outputs.append((argv[0], printed))
    assert [command for command, _ in outputs] == ["train", "eval", "predict", "sweep"]
    names = ["negative", "neutral", "positive"]
    metrics = metrics_of(tmp_path / "runs" / "reviews")
    assert metrics["config"]["classes"] == names and metrics["test"]["sentences"] == 5
    scored = json.loads(outputs[1][1])
    assert scored["root_acc"] == metrics["test"]["root_acc"]
    predicted = json.loads(outputs[2][1])
    assert predicted["class"] == names[predicted["label"]]
    results = json.loads((tmp_path / "sweeps" / "reviews" / "sweep.json").read_text())
    assert (results["folds"], results["finished"]) == (5, 5)
    assert (
        sum(
            metrics_of(tmp_path / "sweeps" / "reviews" / "runs" / f"base-fold{k}-s1")["data"]["splits"]["test"]
            for k in range(5)
        )
        == 15
    )


# --------------------------------------------------------------------------
# sentence pairs of classes: a label column in place of score
# --------------------------------------------------------------------------


def _labelled_pair_rows(n: int, seed: int) -> list:
    """``n`` rows of a pairs file as a Python script writes one: sentence_a,
    sentence_b and a class name (the same sentence: same; another of the
    same class of words: alike; of the other: opposite)."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(n):
        first, other = ("positive", "negative") if index % 2 else ("negative", "positive")
        a = " ".join(rng.choice(WORDS[first], 3))
        kind = ("same", "alike", "opposite")[index % 3]
        b = a if kind == "same" else " ".join(rng.choice(WORDS[first if kind == "alike" else other], 3))
        rows.append({"sentence_a": a, "sentence_b": b, "label": kind})
    return rows


def _write_csv(path: Path, rows: list, columns: list) -> Path:
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_a_file_of_labelled_pairs_trains_a_pair_classifier(tmp_path, capsys, monkeypatch):
    columns = ["sentence_a", "sentence_b", "label"]
    train = _write_csv(tmp_path / "train.csv", _labelled_pair_rows(45, 1), columns)
    test = _write_csv(tmp_path / "test.csv", _labelled_pair_rows(15, 2), columns)
    out = tmp_path / "run"
    status, _, error = run(
        [
            "train",
            "--model",
            "lstm",
            "--train",
            train,
            "--test",
            test,
            "--classes",
            "same,alike,opposite",
            "--vectors",
            "random",
            "--similarity-dim",
            "4",
            "--threads",
            "1",
            *TINY,
            "--out",
            out,
        ],
        capsys,
    )
    assert status == 0, error
    metrics = metrics_of(out)
    assert metrics["task"] == "file-pair-labels" and metrics["data"]["kind"] == "pair-labels"
    assert metrics["config"]["classes"] == ["same", "alike", "opposite"]
    assert metrics["test"]["classes"] == ["same", "alike", "opposite"]
    assert np.array(metrics["test"]["confusion"]).sum(axis=1).tolist() == [5, 5, 5]
    status, printed, _ = run(["eval", "--run", out, "--no-predictions"], capsys)
    assert status == 0 and json.loads(printed)["accuracy"] == pytest.approx(metrics["test"]["accuracy"], abs=1e-9)
    status, printed, _ = run(["predict", "--run", out], capsys, "good fine great\tbad dull awful\n", monkeypatch)
    record = json.loads(printed)
    assert status == 0 and record["class"] in ("same", "alike", "opposite")
    assert record["class"] == ["same", "alike", "opposite"][record["label"]]
    # a file of pairs to predict needs no label column
    bare = _write_csv(tmp_path / "bare.csv", _labelled_pair_rows(3, 3), columns[:2])
    status, printed, _ = run(["predict", "--run", out, "--file", bare], capsys)
    assert status == 0 and [json.loads(line)["source"] for line in printed.splitlines()] == [
        f"{bare}:{line}" for line in (2, 3, 4)
    ]


@pytest.mark.parametrize(
    "columns, message",
    [
        (
            ["sentence_a", "sentence_b", "score", "label"],
            "both a 'score' and a 'label' column: a file of sentence pairs has 'score' (relatedness, "
            "regressed) or 'label' (a class, e.g. entailment, classified), not both",
        ),
        (
            ["sentence_a", "sentence_b"],
            "no 'score' or 'label' column: a file of sentence pairs has 'score' (relatedness) or "
            "'label' (a class, e.g. entailment)",
        ),
    ],
)
def test_a_pairs_file_with_both_columns_or_neither_is_refused(columns, message, tmp_path, capsys):
    rows = [dict(row, score=3) for row in _labelled_pair_rows(12, 1)]
    train = _write_csv(tmp_path / "pairs.csv", rows, columns)
    status, _, error = run(["train", "--train", train, *TINY, "--out", tmp_path / "run"], capsys)
    assert status == 2 and f"{train}:1: {message}" in error
    assert not (tmp_path / "run").exists()


def test_classes_and_score_range_apply_where_the_option_table_says(tmp_path, capsys):
    labelled = _write_csv(tmp_path / "labelled.csv", _labelled_pair_rows(12, 1), ["sentence_a", "sentence_b", "label"])
    scored = _write_csv(
        tmp_path / "scored.csv",
        [dict(row, score=1 + index % 5) for index, row in enumerate(_labelled_pair_rows(12, 1))],
        ["sentence_a", "sentence_b", "score"],
    )
    for train, options, message in (
        (
            scored,
            ["--classes", "a,b"],
            "--classes: applies to a file of labelled sentences "
            "or trees (--train) or a file of sentence pairs with a label column (--train), "
            "not to a file of sentence pairs with a score column",
        ),
        (
            labelled,
            ["--score-range", "1,5"],
            "--score-range: applies to a file of sentence "
            "pairs with a score column (--train), not to a file of sentence pairs with a "
            "label column",
        ),
    ):
        status, _, error = run(
            ["train", "--train", train, *options, "--vectors", "random", *TINY, "--out", tmp_path / "none"], capsys
        )
        assert status == 2 and message in error, error
