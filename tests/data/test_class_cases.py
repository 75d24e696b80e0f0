"""Classes at their edges: many classes (a limit refused before anything is
built, no confusion matrix past a readable size, a huge class number named
by file and line), one class (refused, from a file and from the
estimator), the class order a function of the labels alone (never of
``PYTHONHASHSEED``), the names of the classes and the sentences in eval's
JSON and the predictions files, and ``--dev-fraction``'s range said as it
is.  Small files in ``tmp_path`` and tiny models: seconds each."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score

from npcomp.cli import main
from npcomp.data.datasets.class_list import MAX_CLASSES, class_list, sort_key
from npcomp.errors import ConfigError, DataError
from npcomp.data.datasets.own_data import load_files
from npcomp.data.readers.ptb import parse_ptb
from npcomp.data.datasets.tasks import given_task
from npcomp.data.text.text_trees import TextTrees
from npcomp.estimators import TreeClassifier
from npcomp.configuration.checks import check_value
from npcomp.training.evaluation import CONFUSION_LIMIT

TINY = dict(dim=6, embedding_dim=6, epochs=1, batch_size=10, threads=1, seed=1, tree="right")
WORDS = ("fine", "dull", "good", "bad", "film", "plot", "not", "very")


def _texts(n: int) -> list:
    return [f"{WORDS[i % 8]} {WORDS[(i * 3 + 1) % 8]} {WORDS[(i * 5 + 2) % 8]}" for i in range(n)]


def _table(path: Path, labels: list) -> Path:
    rows = [f"{text},{label}" for text, label in zip(_texts(len(labels)), labels)]
    path.write_text("\n".join(["text,label", *rows]) + "\n", encoding="utf-8")
    return path


def _right() -> TextTrees:
    return TextTrees("gold", "right")


# --------------------------------------------------------------------------
# many classes
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "labels, line, message",
    [
        (
            [f"c{k}" for k in range(MAX_CLASSES + 5)],
            MAX_CLASSES + 2,
            "label 'c1000' is the 1001st name among the labels: npcomp takes at most 1000 classes",
        ),
        ([str(k % 5) for k in range(40)] + ["9999"], 42, "label 9999 is past the largest class number, 999"),
        ([str(k % 5) for k in range(40)] + ["100000000"], 42, "label 100000000 is past the largest class number, 999"),
        (["0", "1", "7" * 5000], 4, r"label 7{30}\.\.\. \(5000 digits\) is past the largest"),
    ],
)
def test_too_many_classes_are_refused_naming_the_file_and_line(tmp_path, labels, line, message):
    path = _table(tmp_path / "train.csv", labels)
    with pytest.raises(DataError, match=message) as raised:
        load_files(path, text_trees=_right())
    assert (str(raised.value.path), raised.value.line) == (str(path), line)


def test_a_huge_class_number_in_json_lines_or_a_treebank_is_named(tmp_path):
    lines = [json.dumps({"text": text, "label": k % 3}) for k, text in enumerate(_texts(9))]
    lines[6] = json.dumps({"text": "a film", "label": 100000000})
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"train\.jsonl:7: label 100000000 is past"):
        load_files(path, text_trees=_right())
    treebank = tmp_path / "train.txt"
    treebank.write_text("(1 (0 a) (1 film))\n(100000000 (0 a) (1 film))\n(0 (0 a) (0 b))\n")
    with pytest.raises(DataError, match=r"train\.txt:2: label 100000000 is past"):
        load_files(treebank, text_trees=_right())


def test_more_class_names_than_the_limit_are_refused_as_an_option():
    with pytest.raises(ConfigError, match="1001 class names: npcomp takes at most 1000") as raised:
        check_value("classes", [f"c{k}" for k in range(MAX_CLASSES + 1)])
    assert raised.value.option == "classes"


def test_the_command_line_refuses_before_it_builds_anything(tmp_path, capsys):
    labels = [str(k % 5) for k in range(40)] + ["100000000"]
    path = _table(tmp_path / "train.csv", labels)
    out = tmp_path / "run"
    status = main(["train", "--train", str(path), "--out", str(out), "--tree", "right", "--dim", "6", "--epochs", "1"])
    assert status != 0
    error = capsys.readouterr().err
    assert f"{path}:42: label 100000000 is past the largest class number" in error
    assert not out.exists()


def test_the_estimator_refuses_too_many_classes_and_a_huge_tree_label():
    with pytest.raises(ValueError, match="y holds 1001 classes: npcomp takes at most 1000"):
        TreeClassifier(**TINY).fit(_texts(MAX_CLASSES + 1), [f"c{k}" for k in range(MAX_CLASSES + 1)])
    with pytest.raises(DataError, match=r"X\[1\]: label 100000000 is past the largest"):
        TreeClassifier(**TINY).fit(["(1 (0 a) (1 film))", "(100000000 (0 a) (1 film))"])
    # the training loop given trees in memory
    trees = [parse_ptb("(1 (0 a) (1 film))"), parse_ptb("(100000000 (0 a) (1 film))")]
    with pytest.raises(DataError, match="dev example 0: label 100000000 is past the largest"):
        given_task({"train": trees[:1], "dev": trees[1:]}, "synthetic")


def test_past_the_limit_of_a_readable_matrix_the_metrics_hold_none():
    n = CONFUSION_LIMIT + 1
    texts = _texts(3 * n)
    labels = [f"c{k % n:02d}" for k in range(3 * n)]
    estimator = TreeClassifier(**TINY).fit(texts, labels, dev=(texts[:n], labels[:n]), test=(texts, labels))
    test = estimator.metrics_["test"]
    assert test["root_confusion"] is None and test["classes"] == sorted(set(labels))
    assert estimator.metrics_["dev"]["root_confusion"] is None
    predicted = estimator.predict(texts)
    assert test["root_acc"] == pytest.approx(100 * np.mean(predicted == np.array(labels)))
    # macro-F1 over the classes that occur, counted without the matrix
    assert test["macro_f1"] == pytest.approx(100 * f1_score(labels, predicted, average="macro"))
    small = TreeClassifier(**TINY).fit(texts[:40], [label[-1] for label in labels[:40]])
    matrix = small.evaluate(texts[:40], [label[-1] for label in labels[:40]])
    assert np.array(matrix["root_confusion"]).shape == (10, 10)
    assert matrix["classes"] == small.classes_.tolist()


# --------------------------------------------------------------------------
# one class
# --------------------------------------------------------------------------


def test_a_training_file_of_one_class_is_refused(tmp_path):
    path = _table(tmp_path / "train.csv", ["pos"] * 60)
    with pytest.raises(
        DataError, match="train.csv: every training label is 'pos': a classifier needs examples of two classes or more"
    ):
        load_files(path, text_trees=_right())
    with pytest.raises(DataError, match="every training label is 'pos'"):
        load_files(path, classes=["neg", "pos"], text_trees=_right())
    numbers = _table(tmp_path / "numbers.csv", ["3"] * 20)
    with pytest.raises(DataError, match="every training label is '3'"):
        load_files(numbers, text_trees=_right())
    # one class in a dev or test file is fine: only training needs two
    dev = _table(tmp_path / "dev.csv", ["pos"] * 5)
    mixed = _table(tmp_path / "mixed.csv", ["pos", "neg"] * 10)
    assert load_files(mixed, dev=dev, test=dev, text_trees=_right()).task.n_classes == 2


def test_the_estimator_refuses_one_class():
    with pytest.raises(
        ValueError, match="every label of y is 'pos': a classifier needs examples of two classes or more"
    ):
        TreeClassifier(**TINY).fit(_texts(60), ["pos"] * 60)
    with pytest.raises(DataError, match="X: every training label is .3."):
        TreeClassifier(**TINY).fit(["(3 (3 a) (3 film))", "(3 (3 so) (3 good))"] * 5)
    # a tree's phrases may carry the second class
    TreeClassifier(**TINY).fit(["(3 (1 a) (3 film))", "(3 (3 so) (3 good))"] * 5)


# --------------------------------------------------------------------------
# class order
# --------------------------------------------------------------------------


def test_the_sort_rule():
    names = ["10", "nan", "-2", "2.5", "1.0", "1", "inf", "1e3"]
    assert sorted(names, key=sort_key(set(names))) == ["-2", "1", "1.0", "2.5", "10", "1e3", "inf", "nan"]
    mixed = ["b", "B", "a", "10", "9", "nan"]
    assert sorted(mixed, key=sort_key(set(mixed))) == ["10", "9", "B", "a", "b", "nan"]
    labels = [(name, "f", k) for k, name in enumerate(["nan", "3", "-1", "nan", "0.5"])]
    assert class_list(labels).names == ("-1", "0.5", "3", "nan")


def test_the_class_order_does_not_depend_on_string_hashing(tmp_path):
    """Before the rule, NaN's comparisons left the order to the set's, which
    PYTHONHASHSEED changes from one process to the next."""
    labels = ["nan", "1", "-2", "10", "2.5", "0", "7", "3.5", "-1", "nan"] * 3
    path = _table(tmp_path / "train.csv", labels)
    probe = (
        "import sys; from npcomp.data.datasets.own_data import read_files; "
        "from npcomp.data.text.text_trees import TextTrees; "
        "print(read_files(sys.argv[1], text_trees=TextTrees('gold', 'right'))"
        ".classes.names)"
    )
    orders = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        environment = dict(os.environ, PYTHONHASHSEED=seed)
        orders.add(
            subprocess.run(
                [sys.executable, "-c", probe, str(path)], env=environment, capture_output=True, text=True, check=True
            ).stdout
        )
    assert orders == {"('-2', '-1', '0', '1', '2.5', '3.5', '7', '10', 'nan')\n"}


# --------------------------------------------------------------------------
# class names and sentences in eval's JSON and the predictions files
# --------------------------------------------------------------------------


def test_eval_and_the_predictions_name_the_classes_and_the_sentences(tmp_path, capsys):
    labels = ["neg", "pos", "so-so"] * 10
    train = _table(tmp_path / "train.csv", labels)
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--train",
                str(train),
                "--test",
                str(train),
                "--out",
                str(run),
                "--tree",
                "right",
                "--dim",
                "6",
                "--epochs",
                "1",
                "--quiet",
            ]
        )
        == 0
    )
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["test"]["classes"] == ["neg", "pos", "so-so"]
    capsys.readouterr()
    assert main(["eval", "--run", str(run)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["classes"] == ["neg", "pos", "so-so"]
    assert printed["root_confusion"] == metrics["test"]["root_confusion"]
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(records) == len(labels)
    texts = _texts(len(labels))
    for index, record in enumerate(records):
        # the old keys kept, the names beside them
        assert {"sentence", "gold", "predicted", "p", "height", "span"} <= set(record)
        assert record["gold_class"] == [labels[index]]
        assert record["predicted_class"] == [printed["classes"][k] for k in record["predicted"]]
        assert record["text"] == texts[index]
        assert record["source"] == f"{train}:{index + 2}"


def test_a_pairs_predictions_carry_both_sentences(tmp_path):
    texts = _texts(24)
    rows = [f"{1 + k % 5},{texts[k]},{texts[(k + 5) % 24]}" for k in range(24)]
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("\n".join(["score,sentence_a,sentence_b", *rows]) + "\n")
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--train",
                str(pairs),
                "--test",
                str(pairs),
                "--out",
                str(run),
                "--tree",
                "right",
                "--dim",
                "6",
                "--epochs",
                "1",
                "--quiet",
                "--model",
                "treelstm-childsum",
                "--vectors",
                "random",
            ]
        )
        == 0
    )
    records = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert records[3]["text_a"] == texts[3] and records[3]["text_b"] == texts[8]
    assert records[3]["source_a"] == records[3]["source_b"] == f"{pairs}:5"
    assert {"pair", "gold", "predicted", "length_a", "length_b"} <= set(records[3])


# --------------------------------------------------------------------------
# --dev-fraction's range
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.5])
def test_the_dev_fraction_range_is_said_as_it_is(tmp_path, capsys, fraction):
    path = _table(tmp_path / "train.csv", ["neg", "pos"] * 10)
    assert main(["train", "--train", str(path), "--dev-fraction", str(fraction), "--out", str(tmp_path / "run")]) != 0
    assert f"--dev-fraction: must be a number in (0, 1), not {fraction}" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"must be a number in \(0, 1\), not"):
        load_files(path, dev_fraction=fraction, text_trees=_right())
    with pytest.raises(ConfigError, match=r"must be a number in \(0, 1\), not"):
        TreeClassifier(**TINY, dev_fraction=fraction).fit(_texts(20), ["neg", "pos"] * 10)
