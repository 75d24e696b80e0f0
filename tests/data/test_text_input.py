"""Text is text where a user says so: the estimators' ``input`` and `npcomp
predict --input` (text, tree, auto); with auto a string that starts with "("
but is no complete tree is read as text with a warning naming it; predict
reports a bad line of standard input in its own record and goes on; a node
tag that is a class name is refused, never read as a word; a label outside
the classes is refused by the estimator as by the command line."""

from __future__ import annotations

import io
import json
import sys
import warnings

import pytest
from sklearn.base import clone

import npcomp.data.datasets.synthetic
from conftest import synthetic_of_size
from npcomp.cli import main
from npcomp.errors import ConfigError, DataError
from npcomp.data.text.text_trees import TextTrees
from npcomp.estimators import PairRegressor, TreeClassifier
from npcomp.estimators.inputs import sentence_trees

TINY = dict(dim=4, embedding_dim=4, epochs=1, batch_size=10, threads=1, seed=1)
CLI_TINY = ["--dim", "4", "--embedding-dim", "4", "--epochs", "1", "--quiet", "--no-baseline"]
PARENTHESISED = [
    "( Taymor ) utilizes the idea of making Kahlo 's art a living part of the movie .",
    "( City ) reminds us how nuanced a performance can be .",
]


# --------------------------------------------------------------------------
# what a string is: TextTrees(input=...)
# --------------------------------------------------------------------------


def test_text_reads_every_line_as_a_sentence():
    trees = TextTrees("gold", "right", input="text")(["(3 (2 a) (3 film))", PARENTHESISED[0]])
    assert trees[0].tokens == ("-LRB-", "3", "-LRB-", "2", "a", "-RRB-", "-LRB-", "3", "film", "-RRB-", "-RRB-")
    assert trees[1].tokens[:4] == ("-LRB-", "Taymor", "-RRB-", "utilizes")


def test_tree_requires_a_tree_on_every_line():
    to_trees = TextTrees("gold", "right", input="tree")
    assert to_trees(["(3 (2 a) (3 film))"])[0].label.tolist() == [2, 3, 3]
    with pytest.raises(DataError, match=r"<stdin>:2: not a bracketed tree"):
        to_trees(["(3 (2 a) (3 film))", "a film"])
    with pytest.raises(DataError, match=r"<stdin>:1: text after the end of the tree"):
        to_trees([PARENTHESISED[0]])


def test_auto_reads_an_incomplete_tree_as_text_and_says_why():
    to_trees = TextTrees("gold", "right", input="auto")
    plans = [
        to_trees.plan(line, "<stdin>", number)
        for number, line in enumerate([PARENTHESISED[0], "((the movie) good)", "plain text"], start=1)
    ]
    assert "text after the end of the tree" in plans[0].not_a_tree
    assert plans[0].tokens[:3] == ["-LRB-", "Taymor", "-RRB-"]
    assert plans[1].given is not None and not plans[1].not_a_tree  # a complete tree
    assert plans[2].given is None and not plans[2].not_a_tree
    # a sentence in one pair of brackets is a sentence, not a flat tree
    flat = to_trees.plan("( Kirshner wins , but it 's close . )", "<stdin>", 5)
    assert flat.given is None and "no tree inside" in flat.not_a_tree
    # a line that opens as a labelled tree, "(3 ", is a tree, refused where broken
    with pytest.raises(DataError, match=r"<stdin>:4: unbalanced"):
        to_trees.plan("(3 (2 a) (3 film)", "<stdin>", 4)
    with pytest.raises(ConfigError) as raised:
        TextTrees("gold", input="words")
    assert raised.value.option == "input"


def test_a_class_name_as_a_node_tag_is_refused_never_a_word():
    names = TextTrees("gold", "right", input="auto", class_names=["negative", "positive"])
    for line in ("(positive (2 it) (3 good))", "(negative it)"):
        with pytest.raises(
            DataError,
            match=r"t:1: the node tag '(positive|negative)' is a "
            r"class name",
        ):
            names([line], "t")
    # a word that is no class, and class numbers, read as before
    assert names(["(good (2 it) (3 fine))"])[0].tokens == ("good", "it", "fine")
    assert TextTrees("gold", class_names=["0", "1"], input="auto")(["(1 (0 a) (1 b))"])[0].label.tolist() == [0, 1, 1]


# --------------------------------------------------------------------------
# the estimators' input parameter
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trees() -> list:
    return synthetic_of_size((40, 10, 10))(seed=2)["train"]


def test_input_is_a_parameter_of_both_estimators():
    for kind in (TreeClassifier, PairRegressor):
        estimator = kind(input="text")
        assert estimator.get_params()["input"] == "text" and kind().input == "auto"
        assert clone(estimator).input == "text"
        assert estimator.set_params(input="tree").input == "tree"
    with pytest.raises(ConfigError, match="input: must be one of auto, text, tree, not 'x'"):
        TreeClassifier(input="x", **TINY).fit(["a", "b"], [0, 1])


def test_fit_on_parenthesised_sentences(trees):
    """Text that starts with "(" trains with input="text" silently, with
    "auto" with one warning naming the sentences; "tree" refuses it."""
    X = [" ".join(tree.tokens) for tree in trees] + PARENTHESISED * 5
    y = [int(tree.root_label >= 3) for tree in trees] + [1, 0] * 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = TreeClassifier(tree="right", input="text", **TINY).fit(X, y)
    assert text.predict(PARENTHESISED).shape == (2,)
    with pytest.warns(
        UserWarning,
        match=r"X\[40\], X\[41\], X\[42\], X\[43\], X\[44\] and 5 "
        r"more start with '\(' but are not complete bracketed "
        r"trees .*read as plain text \(input='text'",
    ):
        auto = TreeClassifier(tree="right", **TINY).fit(X, y)
    assert auto.predict(PARENTHESISED).tolist() == text.predict(PARENTHESISED).tolist()
    with pytest.raises(DataError, match=r"X\[0\]: not a bracketed tree"):
        TreeClassifier(tree="right", input="tree", **TINY).fit(X, y)


@pytest.mark.parametrize("given", ["text", "auto"])
def test_fit_on_the_sst_as_plain_text(data_dir, given):
    """The SST's training sentences as plain text (brackets as typed), those
    that start with "(" among them, fit with input="text", and with the
    default "auto", which says it reads them as text."""
    from npcomp.data.readers.ptb import read_ptb_file

    brackets = {"-LRB-": "(", "-RRB-": ")"}
    sst = read_ptb_file(data_dir / "sst" / "train.txt")
    texts = [" ".join(brackets.get(word, word) for word in tree.tokens) for tree in sst]
    chosen = [index for index, text in enumerate(texts) if text.startswith("(")]
    assert len(chosen) >= 100
    chosen += list(range(200))
    estimator = TreeClassifier(tree="right", input=given, **TINY)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit([texts[i] for i in chosen], [sst[i].root_label for i in chosen])
    said = [str(one.message) for one in caught if "read as plain text" in str(one.message)]
    assert len(said) == (given == "auto")
    assert estimator.classes_.tolist() == [0, 1, 2, 3, 4]
    assert estimator.predict([texts[chosen[0]]]).shape == (1,)


def test_a_class_name_tag_and_a_label_outside_the_classes_are_refused(trees):
    X = [" ".join(tree.tokens) for tree in trees]
    names = TreeClassifier(tree="right", **TINY).fit(
        X, ["positive" if tree.root_label >= 3 else "negative" for tree in trees]
    )
    with pytest.raises(DataError, match=r"X\[1\]: the node tag 'positive' is a class name"):
        names.predict(["good", "(positive (2 it) (3 good))"])
    with pytest.raises(DataError, match=r"X\[0\]: the node tag 'negative' is a class name"):
        TreeClassifier(tree="right", **TINY).fit(
            ["(negative (0 bad) (0 film))"] + X[1:], ["negative"] + ["positive"] * (len(X) - 1)
        )
    numbers = TreeClassifier(tree="right", **TINY).fit(X, [tree.root_label for tree in trees])
    classes = len(numbers.classes_)
    for method in (numbers.predict, numbers.predict_proba):
        with pytest.raises(
            DataError,
            match=rf"X\[1\]: label 9 is not a class number "
            rf"0\.\.{classes - 1}",
        ):
            method(["(2 (2 a) (2 b))", "(9 (2 a) (2 b))"])


def test_sentence_trees_warns_through_the_readers_warn():
    heard = []
    to_trees = TextTrees("gold", "right", keep_given=True, input="auto", warn=heard.append)
    made = sentence_trees(["fine", PARENTHESISED[1]], to_trees, "dev")
    assert made[1].tokens[0] == "-LRB-" and made[1].source == "dev[1]"
    assert len(heard) == 1 and heard[0].startswith("dev[1] starts with '('")


# --------------------------------------------------------------------------
# npcomp predict --input, and a bad line of standard input
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run = tmp_path_factory.mktemp("text-input") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((40, 20, 20)))
        assert main(["train", *CLI_TINY, "--out", str(run)]) == 0
    return run


def predict(capsys, monkeypatch, run, text: str, *options) -> tuple:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    status = main(["predict", "--run", str(run), "--tree", "right", *options])
    out, err = capsys.readouterr()
    return status, [json.loads(line) for line in out.splitlines()], err


def test_predict_goes_on_past_a_bad_line(capsys, monkeypatch, run_dir):
    text = f"a good film\n{PARENTHESISED[0]}\n\n(9 (2 a) (2 b))\n(3 a good film)\nbad\n"
    status, records, err = predict(capsys, monkeypatch, run_dir, text)
    assert status == 2
    assert [record["line"] for record in records] == [1, 2, 3, 4, 5, 6]
    assert [("error" in record) for record in records] == [False, False, True, True, True, False]
    assert records[2]["error"].startswith("empty line")
    assert records[3]["error"] == "label 9 out of range 0..4"
    assert "in one leaf" in records[4]["error"]
    assert records[1]["tree"].count("-LRB-") == 1  # the sentence, as text
    lines = err.splitlines()
    assert lines[0].startswith(
        "npcomp predict: <stdin>:2 starts with '(' but is not a complete bracketed tree (text after the end of the tree"
    )
    assert (
        lines[1].startswith("npcomp predict: error: <stdin>:3: empty line")
        and "(3 of 6 line(s) refused, each in its own output record" in lines[1]
    )
    assert "Traceback" not in err and len(lines) == 2


def test_predict_input_text_and_tree(capsys, monkeypatch, run_dir):
    status, records, err = predict(capsys, monkeypatch, run_dir, f"{PARENTHESISED[0]}\n", "--input", "text")
    assert status == 0 and err == "" and records[0]["tree"].count("-LRB-") == 1
    status, records, err = predict(capsys, monkeypatch, run_dir, "(3 (2 a) (3 film))\na film\n", "--input", "tree")
    assert (
        status == 2
        and "label" in records[0]
        and records[1]
        == {
            "line": 2,
            "error": "not a bracketed tree (every sentence is a tree here, e.g. "
            "(3 (2 a) (3 film)); plain text is read with the text input)",
        }
    )
    with pytest.raises(SystemExit) as raised:  # argparse's usage error
        predict(capsys, monkeypatch, run_dir, "a\n", "--input", "words")
    assert raised.value.code == 2 and "--input" in capsys.readouterr().err
