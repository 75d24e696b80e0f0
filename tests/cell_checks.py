"""Test helpers shared by the cell tests (tests/test_cell_*.py and
tests/cells/test_gradients.py): the forests and parameters they build, the
comparisons with a reference or a kernel's Python function, the terms
``npcomp explain`` shows, the gradient checks, and the bugs they plant in a
backward.  What only the sequence cells need is in chain_checks.py; the test
files import from these two, never from each other."""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from gradcheck.check import RESOLUTION, assert_passes, check_gradients, numerical_gradient, relative_errors
from gradcheck.planted import children_swapped
from gradcheck.suite import Setting, build_case
from gradcheck.trees import random_binary_tree
from npcomp.cells import make_cell
from npcomp.data.readers.formats import Tree, branching_tree
from npcomp.forest import build_forest, node_words

# ---------------------------------------------------------------------------
# forests and random parameters
# ---------------------------------------------------------------------------


def token_forest(trees: list, shared_words: bool = False):
    """A forest of ``trees`` in which token t of tree k reads word offsets[k]
    + t, a word of its own (``shared_words``: word t, the same in every tree)."""
    offsets = np.cumsum([0] + [len(t.tokens) for t in trees])
    words = []
    for k, tree in enumerate(trees):
        ids = np.arange(len(tree.tokens), dtype=np.int32)
        words.append(node_words(tree, ids if shared_words else ids + offsets[k]))
    return build_forest(trees, words)


def tree_forest(parent: list, token_index: list):
    """A forest of one tree given by its arrays: each node's parent and the
    token it reads (-1: none); token k is the word w<k>, id k."""
    n_tokens = int(max(token_index)) + 1
    tree = Tree(
        tuple(f"w{k}" for k in range(n_tokens)),
        np.array(parent, np.int32),
        np.array(token_index, np.int32),
        np.zeros(len(parent), np.int32),
    )
    return build_forest([tree], [node_words(tree, np.arange(n_tokens, dtype=np.int32))])


def random_params(cell, rng, scale: float = 0.7) -> dict:
    """Random float64 parameters, biases included (never zero)."""
    return {name: rng.normal(0, scale, shape) for name, shape in cell.parameter_shapes()}


def forward_on_tokens(cell, params: dict, trees: list, vectors: list, dtype):
    """The cell's forward over a forest of ``trees`` in which every token is a
    word of its own (tree k's token t reads ``vectors[k][t]``), so a per-tree
    reference can use the vectors directly.  Returns (forest, h)."""
    forest = token_forest(trees)
    all_vectors = np.concatenate(vectors)
    distinct, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    cast = {name: value.astype(dtype) for name, value in params.items()}
    h, _ = cell.forward(cast, forest, all_vectors[distinct].astype(dtype), index)
    return forest, h


# ---------------------------------------------------------------------------
# the forward against a reference, the kernels against their Python functions
# ---------------------------------------------------------------------------


def assert_matches_reference(
    h: np.ndarray, forest, trees: list, expected_of, rtol: float = 1e-12, atol: float = 1e-12
) -> None:
    """Tree k's rows of ``h`` (forest order) are ``expected_of(k, tree)``, a
    reference's rows in the tree's own node order."""
    for k, tree in enumerate(trees):
        nodes = np.flatnonzero(forest.tree == k)
        np.testing.assert_allclose(h[nodes], expected_of(k, tree)[forest.origin[nodes]], rtol=rtol, atol=atol)


def assert_kernel_matches_python(kernel, make_args, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """Run the compiled ``kernel`` and ``kernel.py_func`` on copies of the same
    arguments (``make_args()``) and compare every array afterwards."""
    compiled_args = make_args()
    python_args = [a.copy() if isinstance(a, np.ndarray) else a for a in compiled_args]
    kernel(*compiled_args)
    kernel.py_func(*python_args)
    for compiled, python in zip(compiled_args, python_args):
        if isinstance(compiled, np.ndarray):
            np.testing.assert_allclose(compiled, python, rtol=rtol, atol=atol)


def each_kernel(cases: list):
    """Parametrises a test over ``cases``, (kernel, make_args) pairs, each
    named after its kernel."""
    return pytest.mark.parametrize("kernel,make_args", cases, ids=lambda value: getattr(value, "__name__", ""))


# ---------------------------------------------------------------------------
# the terms npcomp explain shows
# ---------------------------------------------------------------------------


def backward_gradients(cell, params: dict, forest, cache, d_out: np.ndarray) -> tuple:
    """(gradients by parameter name, the inputs' gradient) of the cell's
    backward from ``d_out`` (a copy of it: the backward may write there)."""
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    return grads, cell.backward(params, forest, cache, d_out.copy(), grads)


def shown_terms(cell, forest, cache, nan_as_zero: bool = False) -> tuple:
    """(forward terms, backward terms) the cell shows, each {symbol: values};
    ``nan_as_zero``: a backward term a node does not have (NaN) reads 0."""
    forward = {term.symbol: term.values for term in cell.forward_terms(forest, cache)}
    backward = {
        term.symbol: np.nan_to_num(term.values) if nan_as_zero else term.values
        for term in cell.backward_terms(forest, cache)
    }
    return forward, backward


# ---------------------------------------------------------------------------
# gradient checks through the model
# ---------------------------------------------------------------------------

# hypothesis: a tree as (seed, leaves 1..40, unary rate), most without unary nodes
TREE_SHAPES = st.tuples(st.integers(0, 2**31 - 1), st.integers(1, 40), st.sampled_from([0.0, 0.0, 0.25]))


def given_random_trees(max_trees: int, examples: int = 8):
    """Makes a test a hypothesis test of ``examples`` examples over ``shapes``,
    1 to ``max_trees`` TREE_SHAPES."""

    def decorate(test):
        shapes = st.lists(TREE_SHAPES, min_size=1, max_size=max_trees)
        return hypothesis_settings(max_examples=examples)(given(shapes=shapes)(test))

    return decorate


def random_binary_trees(shapes: list) -> list:
    """The binary trees ``shapes`` (TREE_SHAPES) describe, each from its own seed."""
    return [
        random_binary_tree(n_leaves, np.random.default_rng(seed), unary_rate=unary) for seed, n_leaves, unary in shapes
    ]


def assert_random_trees_pass(setting: Setting, shapes: list, **check) -> None:
    """``assert_gradients_pass`` on the random binary trees of ``shapes``,
    the case drawn from the first tree's seed."""
    assert_gradients_pass(setting, random_binary_trees(shapes), np.random.default_rng(shapes[0][0]), **check)


def deep_branching_tree(direction: str, rng, vocabulary: int = 10):
    """A 300-leaf left- or right-branching tree (300 levels) of random words
    w0..w<vocabulary - 1>, the root labelled 3, every leaf labelled."""
    words = [f"w{k}" for k in rng.integers(0, vocabulary, size=300)]
    return branching_tree(words, direction, root_label=3, leaf_labels=rng.integers(0, 5, 300))


def assert_gradients_pass(setting: Setting, trees: list, rng, **check):
    """``setting``'s model on ``trees`` (build_case, drawing from ``rng``)
    passes the gradient check (``check``: check_gradients' options, such as
    its step).  Returns the forest."""
    model, params, forest, options = build_case(setting, trees, rng)
    assert_passes(check_gradients(model, params, forest, **check, **options))
    return forest


def errors_with_backward(monkeypatch, case: tuple, wrapper, **check) -> dict:
    """The gradient-check errors of ``case`` (build_case's model, params,
    forest, options) when the cell's backward is ``wrapper(backward)``."""
    model, params, forest, options = case
    monkeypatch.setattr(model.cell, "backward", wrapper(model.cell.backward))
    return check_gradients(model, params, forest, **check, **options)


# ---------------------------------------------------------------------------
# planted bugs in a backward
# ---------------------------------------------------------------------------


def backward_while(backward, change):
    """A planted bug: ``backward`` run while ``change(params, forest)``, a
    context manager, holds; what it changed is restored afterwards."""

    def buggy(params, forest, cache, d_h, grads):
        with change(params, forest):
            return backward(params, forest, cache, d_h, grads)

    return buggy


@contextmanager
def replaced(owner, name: str, value):
    """``owner.name`` is ``value`` within, its own again afterwards."""
    saved = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


@contextmanager
def zeroed(array: np.ndarray):
    """``array`` holds zeros within, its own values again afterwards."""
    saved = array.copy()
    array[...] = 0.0
    try:
        yield
    finally:
        array[...] = saved


def with_swapped_children(backward):
    """A planted bug (gradcheck.planted.children_swapped) on a bound backward:
    every node's children in reverse order, so each child receives its
    sibling's gradient."""
    swapped = children_swapped(lambda cell, *arguments: backward(*arguments))

    def buggy(params, forest, cache, d_h, grads):
        return swapped(None, params, forest, cache, d_h, grads)

    return buggy


def without_masks_in_backward(backward):
    """A planted bug: the backward run with every recurrent mask dropped from the
    cache (and its sub-caches), as if the forward had used none."""

    def drop(cache):
        if dataclasses.is_dataclass(cache):
            for field in dataclasses.fields(cache):
                if field.name == "node_mask":
                    setattr(cache, field.name, None)
                else:
                    drop(getattr(cache, field.name))

    def buggy(params, forest, cache, d_h, grads):
        drop(cache)
        return backward(params, forest, cache, d_h, grads)

    return buggy


# ---------------------------------------------------------------------------
# Le & Zuidema's binary cells with tied or untied leaves (RecNN, LSTM-RNN)
# ---------------------------------------------------------------------------


def binary_forward_case(model: str, activation: str, untied: bool, dtype, seed: int = 3):
    """A forward of a binary-tree cell with an activation and tied/untied leaves
    (RecNN, LSTM-RNN) over random trees with unary nodes and a right-branching
    one, d = 4 (d_x = 5 untied): (trees, vectors, params, forest, h, d)."""
    rng = np.random.default_rng(seed)
    trees = [random_binary_tree(n, rng, unary_rate=0.15) for n in (7, 1, 12, 3, 20)]
    trees += [branching_tree(["w1", "w2", "w3", "w4"], "right")]
    d, d_x = 4, (5 if untied else 4)
    cell = make_cell(model, d_x, d, activation=activation, untied=untied)
    params = random_params(cell, rng)
    vectors = [rng.normal(size=(len(t.tokens), d_x)) for t in trees]
    forest, h = forward_on_tokens(cell, params, trees, vectors, dtype)
    return trees, vectors, params, forest, h, d


def assert_forward_is_the_reference(model: str, reference, activation: str, untied: bool):
    """``binary_forward_case`` (float64, unary nodes among its many levels)
    is ``reference.forward`` (a per-tree reading of the printed equations)
    node by node.  Returns the forest."""
    trees, vectors, params, forest, h, _ = binary_forward_case(model, activation, untied, np.float64)
    assert forest.n_levels > 5 and np.any(forest.n_children == 1)  # unary nodes present
    assert_matches_reference(
        h, forest, trees, lambda k, tree: reference.forward(tree, vectors[k], params, activation, untied)["out"]
    )
    return forest


def assert_float32_forward_is_close_to_float64(model: str, untied: bool) -> None:
    """``binary_forward_case`` in float32 stays float32 and close to float64."""
    *_, h64, _ = binary_forward_case(model, "tanh", untied, np.float64)
    *_, h32, _ = binary_forward_case(model, "tanh", untied, np.float32)
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-4, atol=2e-6)


def left_branching_links(n_words: int) -> tuple:
    """(leaf-to-inner links, inner-to-inner links, inner nodes) of a
    left-branching tree of ``n_words`` words: what L&Z Sec. 4.1 counts."""
    tree = branching_tree([f"w{k}" for k in range(n_words)], "left")
    forest = build_forest([tree], [node_words(tree, np.arange(n_words, dtype=np.int32))])
    kids = forest.children[forest.n_leaves :]
    return (
        int(np.sum((kids >= 0) & (kids < forest.n_leaves))),
        int(np.sum(kids >= forest.n_leaves)),
        forest.n_nodes - forest.n_leaves,
    )


def assert_untied_leaves_are_classified_from_word_vectors(model: str) -> None:
    """Untied: the cell's leaf rows are 0 and the model adds softmax_leaf.* (d_w
    inputs); tied: the leaf rows are the word vectors, one classifier."""
    rng = np.random.default_rng(2)
    trees = [random_binary_tree(5, rng)]
    built, params, forest, _ = build_case(Setting(model, input_dim=4, hidden_dim=3, untied=True), trees, rng)
    assert built.cell.leaf_classifier_reads_input
    assert built.layout["softmax_leaf.W"].shape == (4, 5)
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, _ = built.cell.forward(params.prefixed("cell"), forest, params["embedding"][words], index)
    assert np.all(h[: forest.n_leaves] == 0) and np.all(h[forest.n_leaves :] != 0)
    built, params, forest, _ = build_case(Setting(model, input_dim=3, hidden_dim=3), trees, rng)
    assert not built.cell.leaf_classifier_reads_input and "softmax_leaf.W" not in built.layout
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    x = params["embedding"][words]
    h, _ = built.cell.forward(params.prefixed("cell"), forest, x, index)
    np.testing.assert_array_equal(h[: forest.n_leaves], x[index])


def assert_composes_binary_trees_with_words_at_the_leaves(cell) -> None:
    """``cell.check_forest`` takes binary trees and unary chains, and refuses a
    node of three children, a word at an inner node and a leaf without one."""
    cell.check_forest(tree_forest([3, 3, 4, 4, -1], [0, 1, 2, -1, -1]))  # binary: fine
    cell.check_forest(tree_forest([1, 2, -1], [0, -1, -1]))  # unary chain: fine
    with pytest.raises(ValueError, match="binary trees: a node has 3 children"):
        cell.check_forest(tree_forest([3, 3, 3, -1], [0, 1, 2, -1]))
    with pytest.raises(ValueError, match="words at the leaves only"):
        cell.check_forest(tree_forest([2, 2, -1], [0, 1, 2]))  # a word at the root
    with pytest.raises(ValueError, match="words at the leaves only"):
        cell.check_forest(tree_forest([2, 2, -1], [0, -1, -1]))  # a leaf without word


# ---------------------------------------------------------------------------
# finite differences of a cell alone
# ---------------------------------------------------------------------------


def cell_gradient_errors(cell, params, forest, x, word_index, masks, rng, names=None) -> dict:
    """Max relative error per named parameter and for x of the cell's backward
    against central differences (fourth order, gradcheck's step) of

        J = sum(out * G),  G random (never all ones),

    with the recurrent masks fixed; backward gets d_out = G.  ``names``: only
    these entries (parameter names and/or "x"; default all)."""
    out, cache = cell.forward(params, forest, x, word_index, recurrent_masks=masks)
    upstream = rng.normal(size=out.shape)
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_x = cell.backward(params, forest, cache, upstream.copy(), grads)
    assert d_x.shape == x.shape

    def objective(name):
        def evaluate(flat):
            trial = dict(params)
            inputs = x
            if name == "x":
                inputs = flat.reshape(x.shape)
            else:
                trial[name] = flat.reshape(params[name].shape)
            value, _ = cell.forward(trial, forest, inputs, word_index, recurrent_masks=masks)
            return float(np.sum(value * upstream))

        return evaluate

    floor = RESOLUTION * max(1.0, abs(float(np.sum(out * upstream))))
    errors = {}
    for name, analytic in list(grads.items()) + [("x", d_x)]:
        if names is not None and name not in names:
            continue
        start = x if name == "x" else params[name]
        numeric = numerical_gradient(objective(name), start.ravel().copy(), np.arange(start.size))
        errors[name] = float(relative_errors(analytic.ravel(), numeric, floor).max())
    return errors
