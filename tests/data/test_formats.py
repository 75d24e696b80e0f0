"""Data formats: PTB trees, chains, branching trees and the SICK readers.

The last tests read the real SST and SICK files when they are found (the
``data_dir`` fixture: $NPCOMP_DATA, else ../shared/data next to the
repository) and skip otherwise.
"""

import re
from pathlib import Path

import numpy as np
import pytest

from npcomp.data.readers.formats import NO_PARENT, NO_TOKEN, UNLABELLED, branching_tree, chain_tree
from npcomp.data.readers.ptb import parse_ptb, read_ptb_file
from npcomp.data.readers.sick import SickPair, read_sick_dir
from npcomp.data.readers.parents import parents_to_tree
from npcomp.errors import DataError


def assert_children_in_sentence_order(tree):
    """Every node's children, sorted by index, cover tokens left to right."""
    spans = tree.span_tokens()
    for kids in tree.children():
        starts = [spans[kid][0] for kid in kids]
        assert starts == sorted(starts)


def leaf_tokens(tree):
    """Token indices of the leaves in node order."""
    has_kids = np.zeros(tree.n_nodes, dtype=bool)
    has_kids[tree.parent[tree.parent >= 0]] = True
    return tree.token_index[~has_kids].tolist()


# --------------------------------------------------------------------------
# PTB
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "(2 word)",
        "(3 (2 It) (4 (2 's) (4 good)))",
        "(1 (2 (2 a) (2 b)) (0 (1 c) (2 (3 d) (2 e))))",
        "(4 (4 (3 (2 x) (2 y)) (2 z)) (2 w))",
    ],
)
def test_ptb_round_trip(text):
    tree = parse_ptb(text).validate(n_classes=5)
    assert tree.to_ptb() == text
    assert_children_in_sentence_order(tree)


def test_ptb_arrays():
    tree = parse_ptb("(3 (2 It) (4 (2 's) (4 good)))")
    assert tree.tokens == ("It", "'s", "good")
    assert tree.parent.tolist() == [4, 3, 3, 4, NO_PARENT]
    assert tree.token_index.tolist() == [0, 1, 2, NO_TOKEN, NO_TOKEN]
    assert tree.label.tolist() == [2, 2, 4, 4, 3]
    assert tree.root_label == 3


def test_ptb_non_integer_labels_optional():
    tree = parse_ptb("(S (NP it) (VP (V is) (ADJ good)))", require_labels=False)
    assert np.all(tree.label == UNLABELLED)
    assert tree.tokens == ("it", "is", "good")


@pytest.mark.parametrize(
    "bad_line, reason",
    [
        ("(3 (2 a) (2 b)", "unbalanced '('"),
        ("(3 (2 a) (2 b)))", "text after the end of the tree"),
        ("", "empty line"),
        ("(3 (X a) (2 b))", "label 'X' is not an integer"),
        ("(3 a (2 b))", "word 'a' beside other children"),
        ("(3 (2 a) b)", "word 'b' beside other children"),
        ("(3 (2 a) (2 b)) (2 c)", "text after the end of the tree"),
        ("(3 (2 a) (2 b)) extra", "text after the end of the tree"),
        ("(3)", "neither a word nor children"),
        ("(-1 a)", "negative"),
    ],
)
def test_ptb_file_errors_name_file_and_line(tmp_path, bad_line, reason):
    path = tmp_path / "trees.txt"
    path.write_text("(2 (2 fine) (2 line))\n" + bad_line + "\n(2 after)\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_ptb_file(path)
    assert caught.value.path == str(path)
    assert caught.value.line == 2
    assert str(caught.value).startswith(f"{path}:2: ")
    assert reason in str(caught.value)


def test_ptb_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_ptb_file(tmp_path / "absent.txt")


@pytest.mark.parametrize("n_leaves", [1000, 5000])
def test_ptb_deep_tree_without_recursion(n_leaves):
    """Deeper than Python's default recursion limit (1000 frames)."""
    text = "".join(f"(1 (2 w{k}) " for k in range(n_leaves - 1))
    text += f"(3 w{n_leaves - 1})" + ")" * (n_leaves - 1)
    tree = parse_ptb(text, "deep.txt:1").validate(n_classes=5)
    assert tree.n_nodes == 2 * n_leaves - 1
    assert leaf_tokens(tree) == list(range(n_leaves))
    assert tree.to_ptb() == text


# --------------------------------------------------------------------------
# chains and branching trees
# --------------------------------------------------------------------------


def test_chain_tree():
    tree = chain_tree(["a", "b", "c", "d"], labels=[0, 1, 2, 3], source="s.txt:4").validate()
    assert tree.parent.tolist() == [1, 2, 3, NO_PARENT]
    assert tree.token_index.tolist() == [0, 1, 2, 3]
    assert tree.label.tolist() == [0, 1, 2, 3]
    assert tree.to_ptb() == "(3 d (2 c (1 b (0 a))))"
    with pytest.raises(DataError, match="s.txt:9: empty sentence"):
        chain_tree([], source="s.txt:9")


@pytest.mark.parametrize(
    "direction, expected",
    [
        ("left", "(X (X (X (X a) (X b)) (X c)) (X d))"),
        ("right", "(X (X a) (X (X b) (X (X c) (X d))))"),
    ],
)
def test_branching_tree_shapes(direction, expected):
    tree = branching_tree(list("abcd"), direction).validate()
    assert tree.to_ptb() == expected
    assert_children_in_sentence_order(tree)
    assert leaf_tokens(tree) == [0, 1, 2, 3]


def test_branching_tree_labels_root_and_leaves():
    tree = branching_tree(list("abc"), "right", root_label=4, leaf_labels=[1, 2, 3])
    assert tree.to_ptb() == "(4 (1 a) (X (2 b) (3 c)))"
    single = branching_tree(["only"], "left", root_label=0).validate()
    assert single.to_ptb() == "(0 only)"


@pytest.mark.parametrize("direction", ["left", "right"])
def test_branching_tree_long(direction):
    tokens = [f"w{k}" for k in range(1000)]
    tree = branching_tree(tokens, direction).validate()
    assert tree.n_nodes == 1999
    assert leaf_tokens(tree) == list(range(1000))
    depth = np.zeros(tree.n_nodes, dtype=int)
    for node in range(tree.n_nodes - 2, -1, -1):
        depth[node] = depth[tree.parent[node]] + 1
    assert depth.max() == 999


# --------------------------------------------------------------------------
# SICK: parents_to_tree
# --------------------------------------------------------------------------


def test_dependency_tree():
    tokens = "the cat sat down quietly".split()
    # the -> cat, cat -> sat, sat root, down -> sat, quietly -> sat
    tree = parents_to_tree([2, 3, 0, 3, 3], tokens, source="a.parents:1").validate()
    assert tree.to_ptb() == "(X sat (X cat (X the)) (X down) (X quietly))"
    assert sorted(tree.token_index.tolist()) == [0, 1, 2, 3, 4]
    assert np.all(tree.label == UNLABELLED)
    kids = tree.children()[tree.root]
    assert [tree.tokens[tree.token_index[kid]] for kid in kids] == ["cat", "down", "quietly"]


def test_dependency_children_ordered_by_word_position():
    """Non-projective: 'e' heads 'c' across 'd', yet 'e' follows 'd' among the
    root's children (ordered by their own words, not the words they cover)."""
    tree = parents_to_tree([0, 1, 5, 1, 1], list("abcde")).validate()
    root_kids = tree.children()[tree.root]
    assert [tree.token_index[kid] for kid in root_kids] == [1, 3, 4]


@pytest.mark.parametrize(
    "cparents, expected",
    [
        ([4, 4, 5, 5, 0], "(X (X (X a) (X b)) (X c))"),
        ([4, 5, 5, 0, 4], "(X (X a) (X (X b) (X c)))"),
        ([5, 5, 4, 0, 4], "(X (X (X a) (X b)) (X c))"),
    ],
)
def test_constituency_tree(cparents, expected):
    tree = parents_to_tree(cparents, list("abc"), n_tokens=3).validate()
    assert tree.to_ptb() == expected
    assert leaf_tokens(tree) == [0, 1, 2]
    inner = tree.token_index == NO_TOKEN
    assert inner.sum() == 2


def test_single_token_trees():
    assert parents_to_tree([0], ["hi"]).to_ptb() == "(X hi)"
    assert parents_to_tree([0], ["hi"], n_tokens=1).to_ptb() == "(X hi)"


@pytest.mark.parametrize(
    "heads, n_tokens, reason",
    [
        ([2, 0], None, "2 head(s) for 3 token(s)"),
        ([0, 1, 0, 1], 3, "2 roots"),
        ([2, 3, 1], None, "no root"),
        ([2, 7, 0], None, "node 2: parent 7 out of range 0..3"),
        ([2, -1, 0], None, "node 2: parent -1 out of range"),
        ([0, 3, 2], None, "node(s) 2, 3 (counting from 1) do not reach the root"),
        ([0, 2, 1], None, "do not reach the root"),
        ([4, 4, 1, 0], 3, "token node 1 has children"),
        ([4, 4, 4, 0, 4], 3, "inner node 5 has no children"),
        ([4, 5, 6, 0, 6, 5], 3, "node(s) 2, 3, 5, 6 (counting from 1) do not reach"),
        ([2, 0], 3, "2 node(s), fewer than the 3 token(s)"),
        ([3, 3, 0], 2, "2 leaves for 3 token(s)"),
    ],
)
def test_parents_errors(heads, n_tokens, reason):
    with pytest.raises(DataError) as caught:
        parents_to_tree(heads, list("abc"), n_tokens, source="dir/a.parents:7")
    assert caught.value.path == "dir/a.parents"
    assert caught.value.line == 7
    assert reason in str(caught.value)


def test_parents_long_trees():
    n = 1000
    tokens = [f"w{k}" for k in range(n)]
    chain = parents_to_tree(list(range(2, n + 1)) + [0], tokens).validate()
    assert chain.n_nodes == n
    assert chain.token_index.tolist() == list(range(n))
    # right-branching constituency tree: leaf k under inner node n + k + 1
    cparents = [n + k + 1 for k in range(n - 1)] + [2 * n - 1]
    cparents += [0] + [n + k for k in range(1, n - 1)]
    tree = parents_to_tree(cparents, tokens, n_tokens=n).validate()
    assert tree.n_nodes == 2 * n - 1
    assert leaf_tokens(tree) == list(range(n))
    assert_children_in_sentence_order(tree)


# --------------------------------------------------------------------------
# SICK: directory layout and original files
# --------------------------------------------------------------------------

SMALL_SICK = {
    "a.toks": "A dog runs\nTwo men talk loudly\n",
    "b.toks": "A cat sleeps\nMen talk\n",
    "a.parents": "2 3 0\n2 3 0 3\n",
    "b.parents": "2 3 0\n2 0\n",
    "a.cparents": "4 4 5 5 0\n5 5 6 6 7 7 0\n",
    "b.cparents": "4 4 5 5 0\n3 3 0\n",
    "sim.txt": "3.5\n1\n",
    "id.txt": "10\n11\n",
}


def write_sick(directory: Path, **changes) -> Path:
    directory.mkdir(exist_ok=True)
    for name, text in {**SMALL_SICK, **changes}.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def test_read_sick_dir_dependency(tmp_path):
    pairs = read_sick_dir(write_sick(tmp_path / "train"))
    assert [pair.pair_id for pair in pairs] == ["10", "11"]
    assert [pair.score for pair in pairs] == [3.5, 1.0]
    assert all(isinstance(pair, SickPair) for pair in pairs)
    first = pairs[0]
    assert first.tree_a.tokens == ("A", "dog", "runs")
    assert first.tree_a.to_ptb() == "(X runs (X dog (X A)))"
    assert pairs[1].tree_a.to_ptb() == "(X talk (X men (X Two)) (X loudly))"
    assert first.tree_a.source == f"{tmp_path / 'train' / 'a.parents'}:1"
    for pair in pairs:
        for tree in (pair.tree_a, pair.tree_b):
            tree.validate()
            assert np.all(tree.token_index != NO_TOKEN)


def test_read_sick_dir_constituency(tmp_path):
    pairs = read_sick_dir(write_sick(tmp_path / "train"), structure="constituency")
    assert pairs[0].tree_a.to_ptb() == "(X (X (X A) (X dog)) (X runs))"
    assert pairs[1].tree_a.to_ptb() == "(X (X (X Two) (X men)) (X (X talk) (X loudly)))"
    assert pairs[1].tree_b.to_ptb() == "(X (X Men) (X talk))"
    assert pairs[1].tree_a.source.endswith("a.cparents:2")


@pytest.mark.parametrize(
    "changes, file_name, line, reason",
    [
        ({"sim.txt": "3.5\n"}, "sim.txt", None, "1 line(s), but a.toks has 2"),
        ({"b.parents": "2 3 0\n"}, "b.parents", None, "1 line(s), but a.toks has 2"),
        ({"id.txt": "10\n11\n12\n"}, "a.toks", None, "2 line(s), but id.txt has 3"),
        ({"sim.txt": "3.5\n5.5\n"}, "sim.txt", 2, "outside [1, 5]"),
        ({"sim.txt": "3.5\nhigh\n"}, "sim.txt", 2, "'high' is not a number"),
        ({"a.parents": "2 3 0\n2 x 0 3\n"}, "a.parents", 2, "'x' is not an integer"),
        ({"a.parents": "2 3 0\n2 3 0\n"}, "a.parents", 2, "3 head(s) for 4 token(s)"),
        ({"b.parents": "2 3 0\n0 0\n"}, "b.parents", 2, "2 roots"),
        ({"a.toks": "A dog runs\n \n"}, "a.toks", 2, "empty sentence"),
        ({"id.txt": "10\n\n"}, "id.txt", 2, "empty pair id"),
    ],
)
def test_read_sick_dir_errors(tmp_path, changes, file_name, line, reason):
    directory = write_sick(tmp_path / "train", **changes)
    with pytest.raises(DataError) as caught:
        read_sick_dir(directory)
    assert caught.value.path == str(directory / file_name)
    assert caught.value.line == line
    assert reason in str(caught.value)


def test_read_sick_dir_constituency_errors(tmp_path):
    directory = write_sick(tmp_path / "dev", **{"b.cparents": "4 4 5 5 0\n3 1 0\n"})
    with pytest.raises(DataError, match=r"b\.cparents:2: .*token node 1 has children"):
        read_sick_dir(directory, structure="constituency")
    (directory / "b.cparents").unlink()
    with pytest.raises(DataError, match="no such file"):
        read_sick_dir(directory, structure="constituency")
    with pytest.raises(ValueError, match="structure"):
        read_sick_dir(directory, structure="lexical")


# --------------------------------------------------------------------------
# the real files
# --------------------------------------------------------------------------


@pytest.mark.parametrize("structure", ["dependency", "constituency"])
@pytest.mark.parametrize("split, n_pairs", [("train", 4500), ("dev", 500), ("test", 4927)])
def test_real_sick_dir(split, n_pairs, structure, data_dir):
    pairs = read_sick_dir(data_dir / "sick" / split, structure)
    assert len(pairs) == n_pairs
    assert len({pair.pair_id for pair in pairs}) == n_pairs
    for pair in pairs:
        assert 1.0 <= pair.score <= 5.0
        for tree in (pair.tree_a, pair.tree_b):
            tree.validate()
            assert_children_in_sentence_order(tree)
            if structure == "constituency":
                assert tree.n_nodes == 2 * len(tree.tokens) - 1
                assert leaf_tokens(tree) == list(range(len(tree.tokens)))
                assert all(len(kids) in (0, 2) for kids in tree.children())
            else:
                assert sorted(tree.token_index.tolist()) == list(range(len(tree.tokens)))


def test_real_sst_dev(data_dir):
    trees = read_ptb_file(data_dir / "sst" / "dev.txt")
    assert len(trees) == 1101
    assert sum(tree.n_nodes for tree in trees) == 41447
    assert sum(len(tree.tokens) for tree in trees) == 21274
    for tree in trees:
        tree.validate(n_classes=5)


def test_a_treebank_file_is_parsed_once_and_again_when_it_changes(tmp_path):
    """Runs in one process (a sweep's worker) share the parse of a file; an
    edit of the same size made at once is still read anew."""
    from npcomp.data.readers.ptb import read_ptb_file

    path = tmp_path / "train.txt"
    path.write_text("(3 (2 it) (3 good))\n(1 (2 it) (1 bad))\n")
    first = read_ptb_file(path)
    again = read_ptb_file(path)
    assert again == first and again is not first and again[0] is first[0]
    path.write_text("(1 (2 it) (1 bad))\n(3 (2 it) (3 good))\n")  # same size, lines swapped
    swapped = read_ptb_file(path)
    assert [tree.root_label for tree in swapped] == [1, 3]
    assert swapped[0].source.endswith("train.txt:1")


# --------------------------------------------------------------------------
# labels optional (typed trees): no word lost to a label
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, tokens, labels, shape",
    [
        # a phrase of words: no word is taken for a label
        ("(the movie)", ("the", "movie"), [-1, -1, -1], "(X (X the) (X movie))"),
        # an unlabelled bracketing
        ("((the movie) good)", ("the", "movie", "good"), [-1] * 5, "(X (X (X the) (X movie)) (X good))"),
        # a node of one word is that word, never a label without a word
        ("(movie)", ("movie",), [-1], "(X movie)"),
        ("(I (love NYC))", ("I", "love", "NYC"), [-1] * 5, "(X (X I) (X (X love) (X NYC)))"),
        # integer labels where given, none elsewhere
        ("(3 (2 a) (b c))", ("a", "b", "c"), [2, -1, -1, -1, 3], "(3 (2 a) (X (X b) (X c)))"),
        # a tree tagged throughout: the tags are labels, read as unlabelled
        ("(S (NP it) (VP (V is) (ADJ good)))", ("it", "is", "good"), [-1] * 5, "(X (X it) (X (X is) (X good)))"),
    ],
)
def test_optional_labels_keep_every_word(line, tokens, labels, shape):
    tree = parse_ptb(line, require_labels=False).validate()
    assert tree.tokens == tokens
    assert tree.label.tolist() == labels
    assert tree.to_ptb() == shape
    # what to_ptb writes reads back as the same tree
    again = parse_ptb(shape, require_labels=False)
    assert again.tokens == tree.tokens and again.label.tolist() == labels
    assert np.array_equal(again.parent, tree.parent)


@pytest.mark.parametrize(
    "line, reason",
    [
        ("(3 a good film)", "words 'a' and 'good' in one leaf"),
        ("(3 a (b c))", "word 'a' beside other children"),
        ("(2)", "neither a word nor children"),
        ("()", "neither a word nor children"),
        ("(-1 a)", "negative"),
        ("((a)", "unbalanced '('"),
        ("(a))", "text after the end of the tree"),
    ],
)
def test_optional_labels_still_refuse_what_is_not_a_tree(line, reason):
    with pytest.raises(DataError, match=re.escape(reason)) as caught:
        parse_ptb(line, "typed.txt:4", require_labels=False)
    assert str(caught.value).startswith("typed.txt:4: ")
