"""Trees for plain sentences: the SST's tokenisation, dependency parses
binarised (documented shapes, non-projective parses, random parses), labels
carried from the SST's phrases, span recall, and `predict --tree` /
`eval --trees` end to end on the small synthetic treebank."""

import io
import json
import re
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npcomp.data.datasets.synthetic
from npcomp.cli import main
from npcomp.data.readers.formats import UNLABELLED, branching_tree
from npcomp.data.readers.ptb import parse_ptb, read_ptb_file
from npcomp.data.text.parsed_trees import (
    ORDERS,
    TextParser,
    binarise,
    cached_heads,
    carry_labels,
    projective_heads,
    span_recall,
    trees_for_scoring,
)
from npcomp.data.text.sst_tokens import sst_tokens
from npcomp.data.text.text_trees import TextTrees
from conftest import synthetic_of_size

TINY = ["--dim", "8", "--embedding-dim", "8", "--epochs", "1", "--quiet", "--no-baseline"]


small_splits = synthetic_of_size((60, 30, 30))


# --------------------------------------------------------------------------
# tokenisation
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("I don't like it (really).", "I do n't like it -LRB- really -RRB- ."),
        ("It's the film's best scene, isn't it?", "It 's the film 's best scene , is n't it ?"),
        ("Can't we -- just once -- watch it?", "Ca n't we -- just once -- watch it ?"),
        ("You cannot miss it!", "You can not miss it !"),
        ('He said "it\'s great."', "He said `` it 's great . ''"),
        ("The '70s were 'weird', ok", "The '70s were ` weird ' , ok"),
        ("we're, they've, I'm, he'd, you'll", "we 're , they 've , I 'm , he 'd , you 'll"),
        (
            "a writer/director of *** films [sic] {x}",
            "a writer\\/director of \\*\\*\\* films -LSB- sic -RSB- -LCB- x -RCB-",
        ),
        ("It costs $1,000 at 8:30; S&M & more...", "It costs $ 1,000 at 8:30 ; S&M & more ..."),
        ("Mr. Smith's well-made U.S. debut.", "Mr. Smith 's well-made U.S. debut ."),
        ("don\u2019t \u201cquote\u201d me", "do n't `` quote '' me"),
        ("good ol' gonna-be fun", "good ol' gonna-be fun"),
    ],
)
def test_sst_tokens(text, tokens):
    assert sst_tokens(text) == tokens.split()


def test_sst_tokens_keep_tokenised_text():
    tokenised = "it 's not -LRB- really -RRB- a `` great '' film , is n't it ?"
    assert sst_tokens(tokenised) == tokenised.split()
    assert sst_tokens("   ") == []


def test_sst_tokens_give_back_the_treebanks_sentences(data_dir):
    """Every dev and test sentence of the SST, joined by spaces, comes back as its tokens."""
    for split in ("dev", "test"):
        for tree in read_ptb_file(data_dir / "sst" / f"{split}.txt"):
            assert sst_tokens(" ".join(tree.tokens)) == list(tree.tokens), tree.source


# --------------------------------------------------------------------------
# the conversion
# --------------------------------------------------------------------------


def brackets(tree) -> str:
    """The tree's bracketing without labels: (she (saw (the film)))."""
    text = tree.with_labels(np.full(tree.n_nodes, UNLABELLED, np.int32)).to_ptb()
    return re.sub(r"\(X ([^()\s]+)\)", r"\1", text).replace("(X ", "(")


def assert_binary_over_tokens(tree, tokens):
    tree.validate()
    kids = tree.children()
    leaves = [node for node in range(tree.n_nodes) if not kids[node]]
    assert all(len(kids[node]) == 2 for node in range(tree.n_nodes) if kids[node])
    assert all(tree.token_index[node] >= 0 for node in leaves)
    assert np.all(tree.token_index[[n for n in range(tree.n_nodes) if kids[n]]] == -1)
    # each token once, as a leaf, left to right
    assert tree.token_index[leaves].tolist() == list(range(len(tokens)))
    assert tree.tokens == tuple(tokens) and tree.n_nodes == 2 * len(tokens) - 1


@pytest.mark.parametrize(
    "words, heads, order, shape",
    [
        # the verb joins its object, then its subject
        ("she saw the film", [2, 0, 4, 2], "right-first", "(she (saw (the film)))"),
        ("she saw the film", [2, 0, 4, 2], "left-first", "((she saw) (the film))"),
        # a noun its nearest modifier first: (a ((very good) film))
        ("a very good film", [4, 3, 4, 0], "right-first", "(a ((very good) film))"),
        # the copula (spaCy's head) joins its predicate, then the period, then the subject
        ("it is good .", [2, 0, 2, 2], "right-first", "(it ((is good) .))"),
        ("it is good .", [2, 0, 2, 2], "nearest", "((it (is good)) .)"),
        # a tie in distance goes to the right dependent
        ("she saw it", [2, 0, 2], "nearest", "(she (saw it))"),
        ("film about love", [0, 1, 2], "right-first", "(film (about love))"),
        ("word", [0], "right-first", "word"),
    ],
)
def test_binarise_documented_shapes(words, heads, order, shape):
    tokens = words.split()
    tree = binarise(heads, tokens, order)
    assert_binary_over_tokens(tree, tokens)
    assert brackets(tree) == shape


def test_non_projective_parse_is_lifted():
    # w2 hangs from w4 across w3, which hangs from w1: the arc w4 -> w2 crosses
    heads = [0, 4, 1, 1]
    assert projective_heads(heads) == [0, 1, 1, 1]
    tree = binarise(heads, ["w1", "w2", "w3", "w4"])
    assert_binary_over_tokens(tree, ["w1", "w2", "w3", "w4"])
    assert brackets(tree) == "(((w1 w2) w3) w4)"
    # "a hearing is scheduled on the issue today": "on the issue" belongs to
    # "hearing" across "is scheduled"; lifted to the verb
    words = "a hearing is scheduled on the issue today".split()
    heads = [2, 4, 4, 0, 2, 7, 5, 4]
    lifted = projective_heads(heads)
    assert lifted == [2, 4, 4, 0, 4, 7, 5, 4]
    assert_binary_over_tokens(binarise(heads, words), words)


def test_projective_parse_is_unchanged():
    heads = [2, 0, 4, 2, 2]
    assert projective_heads(heads) == heads


@st.composite
def random_parses(draw):
    """Any tree over n tokens (projective or not): each token after the first
    in a random order hangs from one before it."""
    n = draw(st.integers(1, 25))
    order = draw(st.permutations(range(n)))
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = order[draw(st.integers(0, k - 1))] + 1
    return heads


@given(random_parses(), st.sampled_from(ORDERS))
def test_binarise_any_parse(heads, order):
    tokens = [f"w{k}" for k in range(len(heads))]
    assert_binary_over_tokens(binarise(heads, tokens, order), tokens)
    lifted = projective_heads(heads)
    assert projective_heads(lifted) == lifted


def test_deep_parses_need_no_recursion():
    n = 3000
    tokens = [f"w{k}" for k in range(n)]
    for heads in ([k + 2 for k in range(n - 1)] + [0], [0] + list(range(1, n))):
        assert_binary_over_tokens(binarise(heads, tokens), tokens)


def test_bad_heads_name_the_source():
    with pytest.raises(ValueError, match="<stdin>:3"):
        binarise([0, 0], ["a", "b"], source="<stdin>:3")
    with pytest.raises(ValueError, match="2 head"):
        binarise([0, 1], ["a", "b", "c"], source="<stdin>:3")


# --------------------------------------------------------------------------
# labels and span recall
# --------------------------------------------------------------------------

GOLD = parse_ptb("(3 (2 she) (4 (3 saw) (2 (2 the) (2 film))))")


def test_carry_labels_from_matching_phrases():
    tree = carry_labels(GOLD, binarise([2, 0, 4, 2], GOLD.tokens, "left-first"))
    # ((she saw) (the film)): the phrase "the film" and the words match, "she saw" does not
    assert tree.to_ptb() == "(3 (X (2 she) (3 saw)) (2 (2 the) (2 film)))"
    assert span_recall([GOLD], [tree]) == {"phrases": 2, "reproduced": 1, "recall": 0.5}
    right = carry_labels(GOLD, binarise([2, 0, 4, 2], GOLD.tokens))
    assert np.all(right.label != UNLABELLED)
    assert span_recall([GOLD], [right])["recall"] == 1.0


def test_trees_for_scoring():
    assert trees_for_scoring([GOLD], "gold") == [GOLD]
    right = trees_for_scoring([GOLD], "right")[0]
    assert right.root_label == 3 and brackets(right) == "(she (saw (the film)))"
    parsed = trees_for_scoring([GOLD], "parsed", "binary", [[2, 0, 4, 2]])[0]
    assert parsed.root_label == 3 and parsed.n_nodes == 7
    dependency = trees_for_scoring([GOLD], "parsed", "dependency", [[2, 0, 4, 2]])[0]
    assert dependency.n_nodes == 4 and dependency.root_label == 3


def test_cached_heads(tmp_path):
    calls = []

    def parse(sentences):
        calls.append(len(sentences))
        return [[0] + [1] * (len(tokens) - 1) for tokens in sentences]

    sentences = [("a", "b"), ("c",)]
    path = tmp_path / "parses" / "test.parents"
    assert cached_heads(sentences, path, parse) == ([[0, 1], [0]], False)
    assert cached_heads(sentences, path, parse) == ([[0, 1], [0]], True)
    assert calls == [2]
    with pytest.raises(ValueError, match="test.parents:2: 1 head"):
        cached_heads([("a", "b"), ("c", "d")], path, parse)


# --------------------------------------------------------------------------
# plain text to trees, and the commands
# --------------------------------------------------------------------------


class FakeParser:
    """Every token hangs from the first one."""

    model = "fake"

    def parse(self, sentences):
        return [[0] + [1] * (len(tokens) - 1) for tokens in sentences]


def test_text_trees_parse_plain_sentences():
    to_trees = TextTrees("gold", parser=TextParser("binary", parser=FakeParser()))
    trees = to_trees(["it's good", "(3 (2 it) (3 good))"])
    assert to_trees.made == ["parsed", "given"]
    assert brackets(trees[0]) == "((it 's) good)"
    assert trees[1].to_ptb() == "(3 (2 it) (3 good))"
    dependency = TextTrees("dependency", parser=TextParser("dependency", parser=FakeParser()))
    tree = dependency(["(3 (2 it) (3 good))"])[0]
    assert dependency.made == ["parsed"] and tree.n_nodes == 2 and tree.root_label == 3


def test_text_trees_fall_back_without_spacy(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)  # makes `import spacy` fail
    messages = []
    to_trees = TextTrees("gold", warn=messages.append)
    trees = to_trees(["a good film", "(3 (2 it) (3 good))"])
    assert to_trees.made == ["right", "given"]
    assert brackets(trees[0]) == brackets(branching_tree(["a", "good", "film"], "right"))
    assert len(messages) == 1 and 'pip install "npcomp[parse]"' in messages[0]
    with pytest.raises(ImportError, match=r'pip install "npcomp\[parse\]"'):
        TextTrees("gold", "parsed")(["a good film"])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A Constituency Tree-LSTM and an LSTM, tiny, on the small synthetic treebank."""
    directory = tmp_path_factory.mktemp("parsed")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)
        patch.setattr(sys, "stdout", io.StringIO())
        for model in ("treelstm-nary", "lstm"):
            assert main(["train", "--model", model, "--task", "synthetic", *TINY, "--out", str(directory / model)]) == 0
    return directory


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)


def predict(run_dir, text, capsys, monkeypatch, *options):
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    status = main(["predict", "--run", str(run_dir), *options])
    captured = capsys.readouterr()
    return status, [json.loads(line) for line in captured.out.splitlines()], captured.err


def spacy_parser(kind="binary"):
    parser = TextParser(kind)
    try:
        parser.parser
    except ImportError as error:
        pytest.skip(f"spaCy parser not available: {error}")
    return parser


def test_predict_parses_plain_text(runs, capsys, monkeypatch):
    parser = spacy_parser()
    status, records, _ = predict(runs / "treelstm-nary", "It's not a good film (really).\n", capsys, monkeypatch)
    assert status == 0 and records[0]["tree_from"] == "parsed"
    tokens = "It 's not a good film -LRB- really -RRB- .".split()
    expected = parser.trees([tokens])[0]
    printed = parse_ptb(records[0]["tree"])
    assert printed.tokens == tuple(tokens)
    assert brackets(printed) == brackets(expected)


def test_predict_without_spacy_falls_back(runs, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)
    status, records, err = predict(runs / "treelstm-nary", "a good film\n", capsys, monkeypatch)
    assert status == 0 and records[0]["tree_from"] == "right"
    assert "right-branching" in err and 'pip install "npcomp[parse]"' in err
    status, records, err = predict(runs / "treelstm-nary", "a good film\n", capsys, monkeypatch, "--tree", "parsed")
    assert status == 1 and records == [] and 'pip install "npcomp[parse]"' in err


def test_predict_tree_choices(runs, capsys, monkeypatch):
    status, records, err = predict(runs / "treelstm-nary", "a good film\n", capsys, monkeypatch, "--tree", "left")
    assert status == 0 and records[0]["tree_from"] == "left" and err == ""
    assert brackets(parse_ptb(records[0]["tree"])) == "((a good) film)"
    status, _, err = predict(runs / "treelstm-nary", "a good film\n", capsys, monkeypatch, "--tree", "chain")
    assert status == 2 and "<stdin>:1" in err
    status, _, err = predict(runs / "lstm", "a good film\n", capsys, monkeypatch, "--tree", "right")
    assert status == 2 and "--tree" in err and "chain" in err
    status, records, _ = predict(runs / "lstm", "don't\n", capsys, monkeypatch)
    assert status == 0 and records[0]["tokens"] == ["do", "n't"]


def eval_json(run_dir, capsys, *options):
    status = main(["eval", "--run", str(run_dir), "--no-predictions", *options])
    captured = capsys.readouterr()
    return status, (json.loads(captured.out) if status == 0 else captured.err)


def test_eval_trees(runs, capsys, tmp_path):
    run_dir = runs / "treelstm-nary"
    _, own = eval_json(run_dir, capsys)
    status, gold = eval_json(run_dir, capsys, "--trees", "gold")
    assert status == 0 and gold["trees"] == "gold" and gold["root_acc"] == own["root_acc"]
    _, left = eval_json(run_dir, capsys, "--trees", "left")
    # parses in which every word hangs from the next: binarised, left-branching trees
    seed = json.loads((run_dir / "metrics.json").read_text())["config"]["seed"]
    test = small_splits(seed)["test"]
    (tmp_path / "test.parents").write_text(
        "".join(" ".join(str(k + 2) for k in range(len(tree.tokens) - 1)) + " 0\n" for tree in test)
    )
    status, parsed = eval_json(run_dir, capsys, "--trees", "parsed", "--parses-dir", str(tmp_path))
    assert status == 0 and parsed["root_acc"] == left["root_acc"]
    expected = span_recall(test, [branching_tree(tree.tokens, "left") for tree in test])
    assert parsed["span_phrases"] == expected["phrases"]
    assert parsed["span_recall"] == round(100 * expected["recall"], 2)
    status, err = eval_json(runs / "lstm", capsys, "--trees", "right")
    assert status == 2 and "--trees" in err
    status, err = eval_json(run_dir, capsys, "--trees", "right", "--parses-dir", str(tmp_path))
    assert status == 2 and "--parses-dir" in err


def test_eval_parsed_trees_with_spacy(runs, capsys):
    spacy_parser()
    run_dir = runs / "treelstm-nary"
    status = main(["eval", "--run", str(run_dir), "--trees", "parsed"])
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert status == 0 and 0 < result["span_recall"] <= 100
    assert (run_dir / "parses" / "test-copula.parents").is_file()
    assert (run_dir / "predictions-test-parsed.jsonl").is_file()
    assert "kept in" in captured.err
    assert main(["eval", "--run", str(run_dir), "--trees", "parsed", "--no-predictions"]) == 0
    again = capsys.readouterr()
    assert json.loads(again.out)["root_acc"] == result["root_acc"]
    assert "read from" in again.err


# --------------------------------------------------------------------------
# training on parsed trees: --structure parsed
# --------------------------------------------------------------------------

SST_LINES = {
    "train": ["(3 (2 it) (3 (2 's) (3 (3 good) (2 .))))", "(1 (2 a) (1 (2 dull) (2 film)))"],
    "dev": ["(4 (2 very) (4 good))"],
    "test": ["(0 (2 bad) (2 .))"],
}
# heads (1-based, 0 the root) as `npcomp parse --copula-head copula` writes them
SST_HEADS = {"train": ["2 0 2 2", "3 3 0"], "dev": ["2 0"], "test": ["0 1"]}


def _parsed_sst(tmp_path):
    from npcomp.data.readers.parents import write_parents

    (tmp_path / "parses").mkdir()
    for split, lines in SST_LINES.items():
        (tmp_path / "sst").mkdir(exist_ok=True)
        (tmp_path / "sst" / f"{split}.txt").write_text("\n".join(lines) + "\n")
        write_parents(
            tmp_path / "parses" / f"{split}.parents",
            [[int(head) for head in line.split()] for line in SST_HEADS[split]],
        )
    return tmp_path


def test_structure_parsed_reads_binarised_parses_labelled_from_the_sst(tmp_path):
    from npcomp.data.text.parsed_trees import binarise
    from npcomp.data.datasets.tasks import load_task

    data_dir = _parsed_sst(tmp_path)
    task = load_task("sst5", data_dir, "parsed", parses_dir=data_dir / "parses")
    first = task.splits["train"][0]
    assert first.tokens == ("it", "'s", "good", ".")
    expected = binarise([2, 0, 2, 2], first.tokens)
    np.testing.assert_array_equal(first.parent, expected.parent)
    assert first.root_label == 3 and first.source.endswith("train.parents:1")
    # every node binary, words at the leaves; the phrase "good ." is not a
    # span of the parse, but "a dull film" (the root) and single words are
    children = np.bincount(first.parent[first.parent >= 0], minlength=first.n_nodes)
    assert set(children.tolist()) <= {0, 2}
    second = task.splits["train"][1]
    assert second.root_label == 1
    assert sorted(second.label[second.token_index >= 0].tolist()) == [2, 2, 2]


def test_a_model_trains_on_parsed_trees(tmp_path):
    from npcomp.cli import main

    data_dir = _parsed_sst(tmp_path)
    run_dir = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--task",
                "sst5",
                "--structure",
                "parsed",
                "--data-dir",
                str(data_dir),
                "--parses-dir",
                str(data_dir / "parses"),
                "--dim",
                "4",
                "--embedding-dim",
                "4",
                "--epochs",
                "1",
                "--quiet",
                "--no-train-eval",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    config = json.loads((run_dir / "metrics.json").read_text())["config"]
    assert config["structure"] == "parsed"


def test_parsed_structure_without_parses_says_how_to_make_them(tmp_path, capsys):
    from npcomp.cli import main

    data_dir = _parsed_sst(tmp_path)
    assert (
        main(
            [
                "train",
                "--task",
                "sst5",
                "--structure",
                "parsed",
                "--data-dir",
                str(data_dir),
                "--quiet",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 2
    )
    assert "npcomp parse" in capsys.readouterr().err
