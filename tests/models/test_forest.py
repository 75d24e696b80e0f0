"""build_forest: height order, contiguous levels, children before parents and in
sentence order, roots, consistent permutation of words and labels; supervision
masks; deep trees without recursion; the numba kernel against its .py_func."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npcomp.data.datasets import SUPERVISION_MODES
from npcomp.forest import _heights_and_positions, build_forest, node_words, supervised_labels
from npcomp.data.readers.formats import NO_TOKEN, UNLABELLED, branching_tree, chain_tree
from npcomp.data.readers.ptb import parse_ptb

HAND_MADE = [
    "(3 (2 It) (4 (2 's) (4 good)))",
    "(1 bad)",
    "(2 (2 (2 a) (2 b)) (3 (3 c) (2 (2 d) (1 e))))",
    "(0 (1 (1 (1 (1 deep)))))",  # unary chain above one leaf
    "(4 (2 w1) (3 w2) (1 w3) (0 w4) (2 (2 w5) (3 w6)))",  # a node with five children
    "(2 (2 (2 (2 x) (3 y)) (1 z)) (4 t))",
]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def random_words(trees, rng):
    return [node_words(t, rng.integers(0, 50, len(t.tokens)).astype(np.int32)) for t in trees]


def old_ids(trees):
    """For each tree, a label array giving every node its global (pre-forest) index:
    passed as ``labels`` it reveals the permutation build_forest applied."""
    offsets = np.cumsum([0] + [t.n_nodes for t in trees])
    return [np.arange(offsets[k], offsets[k + 1], dtype=np.int32) for k, t in enumerate(trees)]


def check_forest(trees, words, labels=None):
    """Build a forest of ``trees`` and check every invariant; returns it."""
    forest = build_forest(trees, words, labels)
    n = sum(t.n_nodes for t in trees)
    offsets = np.cumsum([0] + [t.n_nodes for t in trees])
    parent_old = np.concatenate([np.where(t.parent >= 0, t.parent + offsets[k], -1) for k, t in enumerate(trees)])
    tree_old = np.concatenate([np.full(t.n_nodes, k) for k, t in enumerate(trees)])
    local_old = np.concatenate([np.arange(t.n_nodes) for t in trees])
    token_old = np.concatenate([t.token_index for t in trees])
    word_old = np.concatenate(words)
    label_old = np.concatenate([t.label for t in trees] if labels is None else labels)

    assert forest.n_nodes == n and forest.n_trees == len(trees)
    for name in ("word", "children", "n_children", "position", "parent", "label", "height", "root", "tree"):
        assert getattr(forest, name).dtype == np.int32, name

    # the permutation, revealed by labelling every node with its old index
    perm = build_forest(trees, words, old_ids(trees)).label.astype(np.int64)
    assert np.array_equal(np.sort(perm), np.arange(n))
    assert np.array_equal(forest.word, word_old[perm])
    assert np.array_equal(forest.label, label_old[perm])
    assert np.array_equal(forest.tree, tree_old[perm])
    linked = forest.parent >= 0
    assert np.array_equal(linked, parent_old[perm] >= 0)
    assert np.array_equal(perm[forest.parent[linked]], parent_old[perm[linked]])

    # heights: 0 at leaves, 1 + the tallest child elsewhere; sorted ascending
    height = np.zeros(n, dtype=np.int64)
    for node in range(n):  # children before parents (checked below)
        kids = forest.children[node, : forest.n_children[node]]
        if kids.size:
            height[node] = 1 + height[kids].max()
    assert np.array_equal(forest.height, height)
    assert np.all(np.diff(forest.height) >= 0)

    # levels: contiguous blocks, one per height
    assert forest.level_ptr[0] == 0 and forest.level_ptr[-1] == n
    assert forest.n_levels == int(height.max()) + 1
    for level in range(forest.n_levels):
        block = forest.height[forest.level_ptr[level] : forest.level_ptr[level + 1]]
        assert block.size > 0 and np.all(block == level)
    assert forest.n_leaves == int(np.sum(forest.n_children == 0))

    # children precede parents; child table, counts, positions and parents agree
    assert forest.max_children == max(1, max(max(map(len, t.children())) for t in trees))
    for node in range(n):
        count = forest.n_children[node]
        kids = forest.children[node, :count]
        assert np.all(kids >= 0) and np.all(forest.children[node, count:] == -1)
        assert np.all(kids < node)
        assert np.all(forest.parent[kids] == node)
        assert np.array_equal(forest.position[kids], np.arange(count))
        # the same children, in the same order, as in the original tree
        k, old = tree_old[perm[node]], local_old[perm[node]]
        assert [local_old[perm[c]] for c in kids] == trees[k].children()[old]
    assert np.all(forest.parent[linked] > np.flatnonzero(linked))

    # children columns keep sentence order: the tokens under the children, read
    # column by column, are increasing, and with the node's own token they are
    # exactly the original node's span
    spans = [tree.span_tokens() for tree in trees]
    covered: list = [None] * n
    for node in range(n):
        below = [token for c in forest.children[node, : forest.n_children[node]] for token in covered[c]]
        assert below == sorted(below) and len(set(below)) == len(below)
        own = [int(token_old[perm[node]])] if token_old[perm[node]] != NO_TOKEN else []
        covered[node] = sorted(own + below)
        assert covered[node] == spans[tree_old[perm[node]]][local_old[perm[node]]]

    # roots map to the original roots, one per tree, in tree order
    assert np.array_equal(perm[forest.root], offsets[1:] - 1)
    assert np.array_equal(forest.tree[forest.root], np.arange(len(trees)))
    assert np.all(forest.parent[forest.root] == -1)
    assert np.array_equal(np.flatnonzero(forest.parent == -1), np.sort(forest.root))
    assert np.array_equal(forest.word_nodes(), np.flatnonzero(forest.word >= 0))
    return forest


# --------------------------------------------------------------------------
# hand-made and random trees
# --------------------------------------------------------------------------


def test_hand_made_trees_one_by_one_and_together(rng):
    trees = [parse_ptb(text) for text in HAND_MADE]
    for tree in trees:
        check_forest([tree], random_words([tree], rng))
    check_forest(trees, random_words(trees, rng))
    check_forest(trees[::-1], random_words(trees[::-1], rng))


def test_small_example_exactly():
    tree = parse_ptb("(3 (2 It) (4 (2 's) (4 good)))")
    # tree nodes: 0 It, 1 's, 2 good, 3 ('s good), 4 root
    forest = build_forest([tree], [np.array([10, 11, 12, -1, -1], dtype=np.int32)])
    assert forest.word.tolist() == [10, 11, 12, -1, -1]
    assert forest.height.tolist() == [0, 0, 0, 1, 2]
    assert forest.level_ptr.tolist() == [0, 3, 4, 5]
    assert forest.children.tolist() == [[-1, -1]] * 3 + [[1, 2], [0, 3]]
    assert forest.parent.tolist() == [4, 3, 3, 4, -1]
    assert forest.position.tolist() == [0, 0, 1, 1, 0]
    assert forest.label.tolist() == [2, 2, 4, 4, 3]
    assert forest.root.tolist() == [4]


def test_levels_interleave_trees(rng):
    deep = parse_ptb("(2 (2 (2 (2 a) (2 b)) (2 c)) (2 d))")
    flat = parse_ptb("(2 (2 e) (2 f))")
    forest = check_forest([deep, flat], random_words([deep, flat], rng))
    # the leaves of both trees come first, then the two height-1 nodes together
    assert forest.level_ptr.tolist() == [0, 6, 8, 9, 10]
    assert sorted(forest.tree[6:8].tolist()) == [0, 1]


@st.composite
def ptb_trees(draw, max_leaves=12, max_arity=4):
    """A random labelled PTB tree: repeatedly merge a run of 1..max_arity adjacent
    nodes (unary merges allowed, a few) until one node is left.  No recursion."""
    n_leaves = draw(st.integers(1, max_leaves))
    nodes = [f"({draw(st.integers(0, 4))} w{k})" for k in range(n_leaves)]
    unary_left = 3
    while len(nodes) > 1 or (unary_left and draw(st.booleans())):
        width = draw(st.integers(1 if unary_left else 2, min(max_arity, max(len(nodes), 2))))
        width = min(width, len(nodes))
        if width == 1:
            unary_left -= 1
        start = draw(st.integers(0, len(nodes) - width))
        merged = f"({draw(st.integers(0, 4))} " + " ".join(nodes[start : start + width]) + ")"
        nodes[start : start + width] = [merged]
    return parse_ptb(nodes[0])


@given(st.lists(ptb_trees(), min_size=1, max_size=5), st.integers(0, 2**31 - 1))
def test_random_forests(trees, seed):
    rng = np.random.default_rng(seed)
    check_forest(trees, random_words(trees, rng))
    labels = [rng.integers(-1, 5, t.n_nodes).astype(np.int32) for t in trees]
    check_forest(trees, random_words(trees, rng), labels)


@given(st.lists(st.integers(1, 30), min_size=1, max_size=6), st.sampled_from(["left", "right", "chain"]))
def test_branching_trees_and_chains(lengths, shape):
    trees = [
        chain_tree([f"w{k}" for k in range(n)])
        if shape == "chain"
        else branching_tree([f"w{k}" for k in range(n)], shape, root_label=1, leaf_labels=[k % 5 for k in range(n)])
        for n in lengths
    ]
    words = [node_words(t, np.arange(len(t.tokens), dtype=np.int32)) for t in trees]
    forest = check_forest(trees, words)
    assert forest.n_levels == max(lengths)  # height n-1 for n words, either way


def test_single_word_sentence():
    tree = chain_tree(["alone"], [3])
    forest = check_forest([tree], [np.array([7], dtype=np.int32)])
    assert forest.children.shape == (1, 1) and forest.children[0, 0] == -1
    assert forest.level_ptr.tolist() == [0, 1] and forest.root.tolist() == [0]


def test_empty_batch_is_an_error():
    with pytest.raises(ValueError, match="at least one tree"):
        build_forest([], [])


# --------------------------------------------------------------------------
# deep trees: no recursion anywhere
# --------------------------------------------------------------------------


def test_thousand_word_chain():
    tree = chain_tree([f"w{k}" for k in range(1000)], list(np.arange(1000) % 5))
    forest = check_forest([tree], [np.arange(1000, dtype=np.int32)])
    assert forest.n_levels == 1000
    assert np.array_equal(forest.level_ptr, np.arange(1001))
    assert np.array_equal(forest.word, np.arange(1000))  # the chain is already height-ordered
    assert forest.children[1:, 0].tolist() == list(range(999))


@pytest.mark.parametrize("direction", ["left", "right"])
def test_three_hundred_leaf_branching_tree(direction):
    tokens = [f"w{k}" for k in range(300)]
    tree = branching_tree(tokens, direction, root_label=4, leaf_labels=[1] * 300)
    words = node_words(tree, np.arange(300, dtype=np.int32))
    forest = check_forest([tree], [words])
    assert forest.n_levels == 300 and forest.n_leaves == 300
    assert np.array_equal(forest.word[:300], np.arange(300))  # leaves in sentence order
    # every inner node has a leaf child on the outer side and the taller subtree inside
    inner = np.arange(300, 599)
    leaf_side = 1 if direction == "left" else 0
    assert np.all(forest.children[inner, leaf_side] < 300)
    assert np.all(forest.children[inner[1:], 1 - leaf_side] == inner[:-1])


# --------------------------------------------------------------------------
# supervision masks
# --------------------------------------------------------------------------


def test_supervised_labels_modes():
    tree = parse_ptb("(3 (2 It) (4 (2 's) (4 good)))")
    assert supervised_labels(tree, "all") is tree.label
    assert supervised_labels(tree, "root").tolist() == [-1, -1, -1, -1, 3]
    assert supervised_labels(tree, "root+leaves").tolist() == [2, 2, 4, -1, 3]
    for mode in SUPERVISION_MODES:
        assert supervised_labels(tree, mode).dtype == np.int32
    with pytest.raises(ValueError, match="supervision"):
        supervised_labels(tree, "leaves")


def test_supervised_labels_keep_unlabelled_and_single_node():
    tree = parse_ptb("(X (2 a) (X (X b) (1 c)))", require_labels=False)
    assert supervised_labels(tree, "root+leaves").tolist() == [2, -1, 1, -1, -1]
    single = chain_tree(["w"], [4])
    for mode in SUPERVISION_MODES:
        assert supervised_labels(single, mode).tolist() == [4]


@given(ptb_trees())
def test_supervised_labels_random(tree):
    leaves = np.array([not kids for kids in tree.children()])
    root = np.arange(tree.n_nodes) == tree.root
    for mode, keep in (("root", root), ("root+leaves", root | leaves)):
        labels = supervised_labels(tree, mode)
        assert np.array_equal(labels[keep], tree.label[keep])
        assert np.all(labels[~keep] == UNLABELLED)
    # a forest built with the supervised labels carries them to the right nodes
    words = node_words(tree, np.arange(len(tree.tokens), dtype=np.int32))
    labels = supervised_labels(tree, "root+leaves")
    forest = check_forest([tree], [words], [labels])
    assert forest.label[forest.root[0]] == tree.root_label
    assert np.array_equal(np.sort(forest.label[: forest.n_leaves]), np.sort(tree.label[leaves]))


def test_node_words():
    tree = parse_ptb("(3 (2 It) (4 (2 's) (4 good)))")
    assert node_words(tree, np.array([5, 6, 7], dtype=np.int32)).tolist() == [5, 6, 7, -1, -1]
    chain = chain_tree(["a", "b", "c"])
    assert node_words(chain, np.array([9, 8, 7], dtype=np.int32)).tolist() == [9, 8, 7]


# --------------------------------------------------------------------------
# the numba kernel against its Python original
# --------------------------------------------------------------------------


def kernel_cases():
    trees = [parse_ptb(text) for text in HAND_MADE]
    trees += [
        branching_tree([f"w{k}" for k in range(40)], "left"),
        branching_tree([f"w{k}" for k in range(40)], "right"),
        chain_tree([f"w{k}" for k in range(50)]),
    ]
    offsets = np.cumsum([0] + [t.n_nodes for t in trees])
    forest_parent = np.concatenate(
        [np.where(t.parent >= 0, t.parent + offsets[k], -1) for k, t in enumerate(trees)]
    ).astype(np.int64)
    return [t.parent.astype(np.int64) for t in trees] + [forest_parent]


@pytest.mark.parametrize("case", range(len(HAND_MADE) + 4))
def test_heights_and_positions_kernel_matches_py_func(case):
    parent = kernel_cases()[case]
    jitted = _heights_and_positions(parent)
    python = _heights_and_positions.py_func(parent)
    for a, b in zip(jitted, python):
        assert a.dtype == b.dtype == np.int32
        assert np.array_equal(a, b)
    height, position, count = jitted
    assert np.array_equal(count, np.bincount(parent[parent >= 0], minlength=parent.shape[0]))


@given(ptb_trees(max_leaves=20, max_arity=5))
def test_heights_and_positions_kernel_random(tree):
    parent = tree.parent.astype(np.int64)
    for a, b in zip(_heights_and_positions(parent), _heights_and_positions.py_func(parent)):
        assert np.array_equal(a, b)
