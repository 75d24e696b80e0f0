"""The rntn cell (Nayebi & Blundell eq. 3 / Socher et al. 2013).

Forward values against a plain per-node NumPy reference of eq. 3; float32
against float64; the V = 0 special case against the RecNN; numba kernels
against their Python versions; gradient checks on the suite's settings, on
hypothesis-generated trees and on 300-level trees; planted bugs the checker
must catch; structures the cell must reject.
"""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import (
    assert_gradients_pass,
    assert_random_trees_pass,
    backward_gradients,
    backward_while,
    deep_branching_tree,
    errors_with_backward,
    given_random_trees,
    replaced,
    shown_terms,
    with_swapped_children,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import VOCAB_SIZE, Setting, build_case, random_trees
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import make_cell, rntn
from npcomp.cells.reference import rntn as rntn_reference
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.data.readers.ptb import parse_ptb
from npcomp.forest import build_forest, node_words

VOCABULARY = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))  # as build_case's


def _cell_forward(model, params, forest):
    """The cell's forward as the model calls it: distinct words once."""
    words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    return model.cell.forward(params.prefixed("cell"), forest, params["embedding"][words], word_index)


def _reference_forward(params, trees, forest, leaf_activation="identity"):
    """reference.rntn (eq. 3 node by node) over each of ``trees``, its rows
    placed in forest order; words as build_case's vocabulary maps them."""
    expected = np.zeros((forest.n_nodes, params["cell.b"].shape[0]))
    for k, tree in enumerate(trees):
        x = params["embedding"][VOCABULARY.encode(tree.tokens)]
        out = rntn_reference.forward(tree, x, params.prefixed("cell"), leaf_activation)["out"]
        nodes = np.flatnonzero(forest.tree == k)
        expected[nodes] = out[forest.origin[nodes]]
    return expected


@pytest.mark.parametrize("d", [3, 5])
def test_forward_matches_per_node_reference(d):
    rng = np.random.default_rng(5)
    setting = Setting("rntn", input_dim=d, hidden_dim=d, unary_rate=0.3)
    trees = random_trees(setting, rng)
    model, params, forest, _ = build_case(setting, trees, rng)
    assert np.any(forest.n_children == 1) and forest.n_levels > 4
    h, _ = _cell_forward(model, params, forest)
    expected = _reference_forward(params, trees, forest)
    assert np.abs(h - expected).max() < 1e-12
    # float32 end to end stays float32 and close to float64
    h32, _ = _cell_forward(model, params.astype(np.float32), forest)
    assert h32.dtype == np.float32
    assert np.abs(h32 - h).max() < 1e-4


def test_tanh_leaves_match_per_node_reference():
    """leaf_activation="tanh" (Socher et al.'s released code): a leaf's state
    is tanh(x); the word vectors are drawn large enough for tanh to bend."""
    rng = np.random.default_rng(6)
    setting = Setting("rntn", input_dim=3, hidden_dim=3, unary_rate=0.3, extra=dict(leaf_activation="tanh"))
    trees = random_trees(setting, rng)
    model, params, forest, _ = build_case(setting, trees, rng)
    params["embedding"][...] = rng.normal(size=params["embedding"].shape)
    h, _ = _cell_forward(model, params, forest)
    expected = _reference_forward(params, trees, forest, leaf_activation="tanh")
    assert np.abs(h - expected).max() < 1e-12
    leaves = forest.n_leaves
    assert np.abs(h[:leaves] - params["embedding"][forest.word[:leaves]]).max() > 0.1


def test_zero_tensor_is_the_recnn():
    """Nayebi: "the RNN is a special case of the RNTN when V is set to 0"."""
    rng = np.random.default_rng(8)
    setting = Setting("rntn", input_dim=4, hidden_dim=4, unary_rate=0.3)
    model, params, forest, _ = build_case(setting, random_trees(setting, rng), rng)
    params["cell.V"][...] = 0.0
    h, _ = _cell_forward(model, params, forest)
    recnn = make_cell("recnn", 4, 4, activation="tanh")
    words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h_recnn, _ = recnn.forward(
        {"W": params["cell.W"], "b": params["cell.b"]}, forest, params["embedding"][words], word_index
    )
    assert np.abs(h - h_recnn).max() < 1e-12


def test_kernels_match_their_python_versions(monkeypatch):
    rng = np.random.default_rng(9)
    setting = Setting("rntn", input_dim=3, hidden_dim=3, unary_rate=0.3)
    model, params, forest, _ = build_case(setting, random_trees(setting, rng), rng)
    d_h = rng.normal(size=(forest.n_nodes, 3))

    def run():
        h, cache = _cell_forward(model, params, forest)
        grads = {name: np.zeros_like(value) for name, value in params.prefixed("cell").items()}
        d_x = model.cell.backward(params.prefixed("cell"), forest, cache, d_h.copy(), grads)
        return [h, d_x] + [grads[name] for name in sorted(grads)]

    compiled = run()
    for kernel in (
        "_symmetrised",
        "_gather_features",
        "_tanh_deltas",
        "_route_to_children",
        "_dot_after_first",
        "_add_symmetric",
    ):
        monkeypatch.setattr(rntn, kernel, getattr(rntn, kernel).py_func)
    for jitted, python in zip(compiled, run()):
        np.testing.assert_allclose(jitted, python, rtol=1e-13, atol=1e-15)


def test_parameter_count():
    d = 25
    cell = make_cell("rntn", d, d)
    count = sum(int(np.prod(shape)) for _, shape in cell.parameter_shapes())
    assert count == 4 * d**3 + 2 * d**2 + d == 63_775


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

# every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting


# Finite-difference resolution.  Even with the suite's smaller noise on the
# tensor (each unit sums 4d^2 products c_r c_s), pre-activations of 40-leaf
# trees can pass 15: the objective is then so curved that the O(h^4)
# truncation of the difference at h = 1e-3 comes near 1e-6, and at 5e-4 can
# still pass it (measured on a 33-leaf tree with unary nodes and tanh leaves:
# 2.2e-5, 1.4e-6, 8.5e-8 and 5.3e-9 on W at h = 1e-3, 5e-4, 2.5e-4, 1.25e-4;
# the error falls 16-fold when h halves, so it is the difference's, not the
# gradient's).  The random-tree checks use h = 2.5e-4.
STEP = 2.5e-4


@pytest.mark.parametrize(
    "setting",
    [
        Setting("rntn", input_dim=3),
        Setting("rntn", input_dim=3, supervision="root"),
        Setting("rntn", input_dim=3, supervision="root+leaves", dropout=0.5, l2=0.01),
        Setting("rntn", input_dim=3, supervision="root+leaves", extra=dict(leaf_activation="tanh")),
    ],
    ids=lambda s: s.describe(),
)
@given_random_trees(max_trees=3)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes, step=STEP)


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    """300-leaf trees: 300 levels, no recursion; gradients reach the deepest leaf."""
    rng = np.random.default_rng(7)
    tree = deep_branching_tree(direction, rng)
    setting = Setting("rntn", input_dim=3, hidden_dim=3, supervision="root+leaves")
    assert assert_gradients_pass(setting, [tree], rng).n_levels == 300


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case():
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (6, 9, 1)]
    return build_case(Setting("rntn", input_dim=3), trees, rng)


def _errors_with(monkeypatch, wrapper):
    return errors_with_backward(monkeypatch, _case(), wrapper, step=STEP)


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert_passes(check_gradients(model, params, forest, step=STEP, **options))


def test_detects_forgotten_transpose_term(monkeypatch):
    """Backward uses d(c V^[k] c^T)/dc = c V^[k] instead of c (V^[k] + V^[k]^T)."""

    def forgotten(V, out):  # V^[k]_rs where S^[k]_rs belongs
        out[...] = V[np.triu_indices(V.shape[0])]

    def wrap(backward):
        return backward_while(backward, lambda params, forest: replaced(rntn, "_symmetrised", forgotten))

    errors = _errors_with(monkeypatch, wrap)
    assert errors["cell.V"] > TOLERANCE and errors["embedding"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


def test_detects_tanh_leaves_backpropagated_as_identity(monkeypatch):
    """With tanh leaves, the word-vector gradient forgets the factor 1 - h^2."""
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (6, 9, 1)]
    model, params, forest, options = build_case(
        Setting("rntn", input_dim=3, extra=dict(leaf_activation="tanh")), trees, rng
    )
    params["embedding"][...] = rng.normal(size=params["embedding"].shape)
    assert_passes(check_gradients(model, params, forest, step=STEP, **options))
    backward = model.cell.backward

    def buggy(params, forest, cache, d_h, grads):
        cache.word_h = None  # as if h = x at the leaves
        return backward(params, forest, cache, d_h, grads)

    monkeypatch.setattr(model.cell, "backward", buggy)
    errors = check_gradients(model, params, forest, step=STEP, **options)
    assert errors["embedding"] > TOLERANCE
    assert errors["cell.V"] <= TOLERANCE and errors["softmax.W"] <= TOLERANCE


def test_detects_swapped_children(monkeypatch):
    """Backward routes the left half of eps_c to the right child and vice versa."""
    errors = _errors_with(monkeypatch, with_swapped_children)
    assert errors["cell.W"] > TOLERANCE and errors["cell.V"] > TOLERANCE
    assert errors["embedding"] > TOLERANCE


# ---------------------------------------------------------------------------
# what npcomp explain shows: the cell's own terms
# ---------------------------------------------------------------------------


def test_forward_terms_are_eq_3_term_by_term():
    """The tensor term and the standard term are those of eq. 3 at every inner
    node ((c V^[k] c^T)_k and c W, written out here), p = tanh of their sum
    plus b, and h is the forward's output."""
    rng = np.random.default_rng(8)
    setting = Setting("rntn", input_dim=3, hidden_dim=3, unary_rate=0.3)
    model, params, forest, _ = build_case(setting, random_trees(setting, rng), rng)
    h, cache = _cell_forward(model, params, forest)
    terms = {term.symbol: term.values for term in model.cell.forward_terms(forest, cache)}
    inner = np.arange(forest.n_leaves, forest.n_nodes)
    c = terms["c"][inner]
    V, W, b = params["cell.V"], params["cell.W"], params["cell.b"]
    np.testing.assert_allclose(
        terms["c V^[1:d] c^T"][inner], np.einsum("jr,rsk,js->jk", c, V, c), rtol=1e-12, atol=1e-13
    )
    np.testing.assert_allclose(terms["c W"][inner], c @ W, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(
        terms["p"][inner], np.tanh(terms["c V^[1:d] c^T"][inner] + terms["c W"][inner] + b), rtol=1e-12, atol=1e-13
    )
    np.testing.assert_array_equal(terms["h"], h)
    for symbol in ("c", "c V^[1:d] c^T", "c W", "p"):
        assert np.isnan(terms[symbol][: forest.n_leaves]).all()


@pytest.mark.parametrize("leaf_activation", ["identity", "tanh"])
def test_error_terms_add_up_to_the_parameter_gradients(leaf_activation):
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: db = sum of delta, dW = sum of c^T delta, dV^[k] = sum of delta_k
    c^T c; each half of a parent's eps_c is what that child's eps_h received
    on top of the head's (NaN for a missing child); a word's dx is the sum of
    eps_h over its leaves (times 1 - h^2 with tanh leaves)."""
    rng = np.random.default_rng(9)
    setting = Setting("rntn", input_dim=3, hidden_dim=3, unary_rate=0.3, extra=dict(leaf_activation=leaf_activation))
    model, params, forest, _ = build_case(setting, random_trees(setting, rng), rng)
    assert np.any(forest.n_children == 1)
    h, cache = _cell_forward(model, params, forest)
    head = rng.normal(size=h.shape)
    grads, d_x = backward_gradients(model.cell, params.prefixed("cell"), forest, cache, head)
    forward, terms = shown_terms(model.cell, forest, cache)
    leaves, inner = forest.n_leaves, np.arange(forest.n_leaves, forest.n_nodes)
    c, delta = forward["c"][inner], terms["delta"][inner]
    np.testing.assert_allclose(grads["b"], delta.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grads["W"], c.T @ delta, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads["V"], np.einsum("jk,jr,js->rsk", delta, c, c), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(delta, terms["eps_h"][inner] * (1 - h[inner] ** 2), rtol=1e-12)
    d = h.shape[1]
    for parent in inner:
        for k in range(2):
            kid = forest.children[parent, k] if k < forest.children.shape[1] else -1
            half = terms["eps_c"][parent, k * d : (k + 1) * d]
            if kid >= 0:
                np.testing.assert_allclose(terms["eps_h"][kid] - head[kid], half, rtol=1e-12, atol=1e-14)
            else:
                assert np.isnan(half).all()
    words = np.unique(forest.word[forest.word_nodes()], return_inverse=True)[1]
    per_word = np.zeros_like(d_x)
    np.add.at(per_word, words, terms["eps_h"][:leaves] * (1 - h[:leaves] ** 2 if leaf_activation == "tanh" else 1))
    np.testing.assert_allclose(d_x, per_word, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------
# what the cell cannot compose
# ---------------------------------------------------------------------------


def _forest(tree):
    vocab = Vocabulary(tree.tokens)
    return build_forest([tree], [node_words(tree, vocab.encode(tree.tokens))])


def test_rejects_a_node_with_three_children():
    forest = _forest(parse_ptb("(3 (2 a) (2 b) (2 c))"))
    with pytest.raises(ValueError, match="binary trees: a node has 3 children"):
        make_cell("rntn", 3, 3).check_forest(forest)


def test_rejects_words_at_inner_nodes():
    tree = random_dependency_tree(5, np.random.default_rng(2), max_children=2)
    with pytest.raises(ValueError, match="words at the leaves only"):
        make_cell("rntn", 3, 3).check_forest(_forest(tree))


def test_accepts_binary_trees_with_unary_nodes_and_single_words():
    rng = np.random.default_rng(4)
    trees = [random_binary_tree(n, rng, unary_rate=0.3) for n in (1, 7)]
    vocab = Vocabulary(f"w{k}" for k in range(10))
    forest = build_forest(trees, [node_words(t, vocab.encode(t.tokens)) for t in trees])
    make_cell("rntn", 3, 3).check_forest(forest)


def test_rejects_unequal_dimensions_and_options():
    with pytest.raises(ValueError, match="hidden_dim must equal input_dim"):
        make_cell("rntn", 4, 3)
    with pytest.raises(ValueError, match="takes no option activation"):
        make_cell("rntn", 3, 3, activation="sigmoid")
    with pytest.raises(ValueError, match="leaf_activation must be one of"):
        make_cell("rntn", 3, 3, leaf_activation="relu")
