"""The mvrnn cell (Socher et al. 2012's matrix-vector RNN).

Forward values against the plain node-by-node NumPy reference of MV1-MV2;
float32 against float64; identity word matrices and W_M as the RecNN; numba
kernels against their Python versions; gradient checks on random and
300-level trees; planted bugs the checker must catch; what the cell rejects.
Every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting.
"""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import (
    assert_composes_binary_trees_with_words_at_the_leaves,
    assert_gradients_pass,
    assert_matches_reference,
    assert_random_trees_pass,
    backward_gradients,
    backward_while,
    deep_branching_tree,
    errors_with_backward,
    forward_on_tokens,
    given_random_trees,
    random_params,
    replaced,
    shown_terms,
    with_swapped_children,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting
from gradcheck.trees import random_binary_tree
from npcomp.cells import make_cell, mvrnn
from npcomp.cells.reference import mvrnn as mvrnn_reference
from tree_cell_cases import binary_forward_case, planted_case

D = 3
WIDTH = D + D * D


def _word_vectors(rng, n, d=D):
    """n words' [x | the word matrix near I, flattened]."""
    return np.concatenate(
        [rng.normal(size=(n, d)), (np.eye(d) + rng.normal(0, 0.4, (n, d, d))).reshape(n, d * d)], axis=1
    )


def _forward_case(dtype, seed=3, d=D):
    cell = make_cell("mvrnn", d + d * d, d)
    return binary_forward_case(cell, dtype, seed, scale=0.5, word_vectors=lambda rng, n: _word_vectors(rng, n, d))


def test_forward_matches_the_node_by_node_reference():
    cell, trees, vectors, params, forest, h = _forward_case(np.float64)
    assert forest.n_levels > 5 and np.any(forest.n_children == 1)
    assert_matches_reference(h, forest, trees, lambda k, tree: mvrnn_reference.forward(tree, vectors[k], params)["out"])


def test_node_matrices_match_the_reference():
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, seed=4)
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    _, cache = cell.forward(params, forest, np.concatenate(vectors)[words], index)
    P = cache.P.reshape(forest.n_nodes, -1)
    assert_matches_reference(P, forest, trees, lambda k, tree: mvrnn_reference.forward(tree, vectors[k], params)["P"])


def test_float32_forward_is_close_to_float64():
    *_, h64 = _forward_case(np.float64)
    *_, h32 = _forward_case(np.float32)
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-4, atol=2e-6)


def test_identity_matrices_make_the_recnn():
    """With every word matrix I and W_M = [I/2 ; I/2], every node's matrix
    stays I: Ba = a, Ab = b, and p = tanh(W [a; b] + b_W), the RecNN's eqs. 2-3
    (tied leaves) on the word vectors."""
    rng = np.random.default_rng(8)
    trees = [random_binary_tree(n, rng, unary_rate=0.0) for n in (5, 9)]
    cell = make_cell("mvrnn", WIDTH, D)
    params = random_params(cell, rng)
    params["W_M"][...] = np.vstack([np.eye(D), np.eye(D)]) / 2
    vectors = [
        np.concatenate([rng.normal(size=(len(t.tokens), D)), np.tile(np.eye(D).ravel(), (len(t.tokens), 1))], axis=1)
        for t in trees
    ]
    forest, h = forward_on_tokens(cell, params, trees, vectors, np.float64)
    recnn = make_cell("recnn", D, D, activation="tanh")
    _, h_recnn = forward_on_tokens(
        recnn, {"W": params["W"], "b": params["b"]}, trees, [v[:, :D] for v in vectors], np.float64
    )
    np.testing.assert_allclose(h, h_recnn, rtol=1e-12, atol=1e-13)


def test_kernels_match_their_python_versions(monkeypatch):
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, seed=9)
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    x = np.concatenate(vectors)[words]
    d_h = np.random.default_rng(1).normal(size=(forest.n_nodes, D))

    def run():
        h, cache = cell.forward(params, forest, x, index)
        grads, d_x = backward_gradients(cell, params, forest, cache, d_h)
        return [h, cache.M, cache.AB, d_x] + [grads[name] for name in sorted(grads)]

    compiled = run()
    for kernel in ("_gather_children", "_route_to_children"):
        monkeypatch.setattr(mvrnn, kernel, getattr(mvrnn, kernel).py_func)
    for jitted, python in zip(compiled, run()):
        np.testing.assert_allclose(jitted, python, rtol=1e-13, atol=1e-15)


def test_parameters_and_word_width():
    d = 25
    cell = make_cell("mvrnn", d + d * d, d)
    shapes = dict(cell.parameter_shapes())
    assert shapes == {"W": (2 * d, d), "b": (d,), "W_M": (2 * d, d)}
    embedding = cell.initial_embedding(7, np.random.default_rng(0))
    assert embedding.shape == (7, d + d * d)
    assert np.abs(embedding[:, :d]).max() <= 1e-4
    matrices = embedding[:, d:].reshape(7, d, d)
    assert np.abs(matrices - np.eye(d)).max() < 0.1


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

# Finite-difference resolution.  A node's matrix is a product of the word
# matrices below it through W_M, so the objective's curvature grows with the
# tree: on a 32-leaf tree the error on W is 6.7e-6, 4.2e-7 and 2.6e-8 at
# h = 1e-3, 5e-4 and 2.5e-4, falling 16-fold as h halves (the O(h^4)
# truncation of the difference, not the gradient).  Random trees use 2.5e-4.
STEP = 2.5e-4


@pytest.mark.parametrize(
    "setting",
    [
        Setting("mvrnn", input_dim=WIDTH, hidden_dim=D),
        Setting("mvrnn", input_dim=6, hidden_dim=2, supervision="root+leaves", dropout=0.5, l2=0.01),
    ],
    ids=lambda s: s.describe(),
)
@given_random_trees(max_trees=3, examples=4)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes, step=STEP)


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    """300-leaf trees: 300 levels, no recursion; gradients reach the deepest leaf."""
    rng = np.random.default_rng(7)
    tree = deep_branching_tree(direction, rng)
    setting = Setting("mvrnn", input_dim=6, hidden_dim=2, supervision="root+leaves")
    assert assert_gradients_pass(setting, [tree], rng, step=STEP).n_levels == 300


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case():
    return planted_case(Setting("mvrnn", input_dim=WIDTH, hidden_dim=D))


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_untransposed_word_matrix(monkeypatch):
    """eps_a += B eps_u instead of B^T eps_u (the operator not transposed)."""
    route = mvrnn._route_to_children.py_func

    def untransposed(children, h, M, *rest):
        return route(children, h, np.ascontiguousarray(M.transpose(0, 2, 1)), *rest)

    wrap = lambda backward: backward_while(
        backward,
        lambda params, forest: replaced(  # noqa: E731
            mvrnn, "_route_to_children", untransposed
        ),
    )
    errors = errors_with_backward(monkeypatch, _case(), wrap)
    assert errors["embedding"] > TOLERANCE and errors["cell.W_M"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


def test_detects_a_dropped_matrix_path(monkeypatch):
    """dJ/dW_M left out: the matrices' own composition (MV2) unlearned."""

    def wrap(backward):
        def buggy(params, forest, cache, d_h, grads):
            saved = grads["W_M"].copy()
            out = backward(params, forest, cache, d_h, grads)
            grads["W_M"][...] = saved
            return out

        return buggy

    errors = errors_with_backward(monkeypatch, _case(), wrap)
    assert errors["cell.W_M"] > TOLERANCE and errors["cell.W"] <= TOLERANCE


def test_detects_swapped_children(monkeypatch):
    errors = errors_with_backward(monkeypatch, _case(), with_swapped_children)
    assert errors["cell.W"] > TOLERANCE and errors["embedding"] > TOLERANCE


# ---------------------------------------------------------------------------
# what npcomp explain shows
# ---------------------------------------------------------------------------


def test_error_terms_add_up_to_the_parameter_gradients():
    """db = sum delta, dW = sum [Ba; Ab]^T delta, eps_[Ba;Ab] = delta W^T, and
    a word's gradient is the sum of [eps_h | eps_P] over its leaves."""
    cell, trees, vectors, params, forest, h = _forward_case(np.float64, seed=12)
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, cache = cell.forward(params, forest, np.concatenate(vectors)[words], index)
    head = np.random.default_rng(2).normal(size=h.shape)
    grads, d_x = backward_gradients(cell, params, forest, cache, head)
    forward, terms = shown_terms(cell, forest, cache)
    inner = np.arange(forest.n_leaves, forest.n_nodes)
    uv = np.concatenate([forward["Ba"][inner], forward["Ab"][inner]], axis=1)
    delta = terms["delta"][inner]
    np.testing.assert_allclose(grads["b"], delta.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grads["W"], uv.T @ delta, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(terms["eps_[Ba;Ab]"][inner], delta @ params["W"].T, rtol=1e-12, atol=1e-14)
    leaves = forest.n_leaves
    per_word = np.zeros_like(d_x)
    np.add.at(per_word, index[:leaves], np.concatenate([terms["eps_h"][:leaves], terms["eps_P"][:leaves]], axis=1))
    np.testing.assert_allclose(d_x, per_word, rtol=1e-12, atol=1e-14)
    # the parts of eps_h and eps_P add up to them
    parts = {tp.symbol: tp for tp in cell.term_parts(params, forest, cache, head)}
    for symbol in ("eps_h", "eps_P"):
        total = sum(part.values for part in parts[symbol].parts)
        np.testing.assert_allclose(total, terms[symbol], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------
# what the cell cannot compose
# ---------------------------------------------------------------------------


def test_composes_binary_trees_with_words_at_the_leaves():
    assert_composes_binary_trees_with_words_at_the_leaves(make_cell("mvrnn", WIDTH, D))


def test_rejects_an_embedding_of_the_wrong_width():
    with pytest.raises(ValueError, match=r"d \+ d\^2 = 12 wide for d = 3, not 9"):
        make_cell("mvrnn", 9, 3)
    with pytest.raises(ValueError, match="takes no option activation"):
        make_cell("mvrnn", WIDTH, D, activation="sigmoid")
