"""The N-ary Tree-LSTM (Tai et al. 2015, eqs. 9-14): forward values against
reference.treelstm_nary, node by node, in float64 -- binary trees with unary
nodes (N = 2, words at the leaves), with and without the output gate and a
recurrent-dropout mask, and trees with up to three children and a word at
every node (N = 3, inner inputs).  Its gradients are checked by
tests/cells/test_gradients.py and tests/cells/test_cell_lstm.py (masks); the chain case
(N = 1) by tests/cells/test_cell_treelstm_childsum.py::test_chain_equals_chain_lstm."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import assert_matches_reference, backward_gradients, random_params, shown_terms, token_forest
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import make_cell
from npcomp.cells.reference import treelstm_nary as nary_reference


def _forward(cell, params, trees, vectors, masks=None):
    """The cell's forward over ``trees``, token t of tree k reading
    ``vectors[k][t]``.  Returns (forest, h)."""
    forest = token_forest(trees)
    cell.check_forest(forest)
    index = forest.word[forest.word_nodes()]
    h, _ = cell.forward(params, forest, np.concatenate(vectors), index, recurrent_masks=masks)
    return forest, h


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
@pytest.mark.parametrize("output_gate", [True, False], ids=["o", "no-o"])
def test_binary_trees_match_the_reference(output_gate, masked):
    rng = np.random.default_rng(17)
    d, d_x = 3, 4
    cell = make_cell("treelstm-nary", d_x, d, output_gate=output_gate)
    params = random_params(cell, rng)
    trees = [random_binary_tree(n, rng, unary_rate=0.25) for n in (1, 6, 11, 3)]
    vectors = [rng.normal(size=(len(t.tokens), d_x)) for t in trees]
    masks = [(rng.random((len(trees), d)) >= 0.4) / 0.6] if masked else None
    forest, h = _forward(cell, params, trees, vectors, masks)
    assert np.any(forest.n_children == 1) and np.any(forest.n_children == 2)
    assert_matches_reference(
        h,
        forest,
        trees,
        lambda k, tree: nary_reference.forward(
            tree, vectors[k], params, output_gate=output_gate, masks=None if masks is None else [masks[0][k]]
        )["out"],
    )


def test_three_children_and_inner_inputs_match_the_reference():
    rng = np.random.default_rng(18)
    d, d_x, arity = 3, 2, 3
    cell = make_cell("treelstm-nary", d_x, d, arity=arity, inner_inputs=True)
    params = random_params(cell, rng)
    trees = [random_dependency_tree(n, rng, max_children=arity) for n in (1, 5, 12)]
    vectors = [rng.normal(size=(len(t.tokens), d_x)) for t in trees]
    forest, h = _forward(cell, params, trees, vectors)
    assert forest.n_children.max() == arity and np.any(forest.n_children == 1)
    assert_matches_reference(
        h,
        forest,
        trees,
        lambda k, tree: nary_reference.forward(tree, vectors[k], params, arity=arity, inner_inputs=True)["out"],
    )


def test_reference_quantities_follow_eqs_13_and_14():
    """The named quantities the reference returns fit together: c = i u +
    sum_l f_l c_l, h = o tanh(c), and no forget gates at the leaves."""
    rng = np.random.default_rng(19)
    cell = make_cell("treelstm-nary", 3, 3)
    params = random_params(cell, rng)
    tree = random_binary_tree(7, rng, unary_rate=0.3)
    q = nary_reference.forward(tree, rng.normal(size=(7, 3)), params)
    np.testing.assert_allclose(q["h"], q["o"] * np.tanh(q["c"]), rtol=0, atol=1e-15)
    for j, kids in enumerate(tree.children()):
        expected = q["i"][j] * q["u"][j] + sum(q["f"][j, l] * q["c"][k] for l, k in enumerate(kids))
        np.testing.assert_allclose(q["c"][j], expected, rtol=0, atol=1e-15)
        assert np.isnan(q["f"][j]).all() == (not kids)


@pytest.mark.parametrize("arity", [1, 2, 3])
def test_error_terms_add_up_to_the_parameter_gradients(arity):
    """The deltas ``backward_terms`` shows are the ones the gradients are
    made of: db = sum over nodes of delta (b^(f) the sum over child slots,
    E1), and a leaf's eps_c routes nothing further (no children)."""
    rng = np.random.default_rng(arity)
    trees = [random_dependency_tree(7, rng, max_children=arity) for _ in range(3)]
    cell = make_cell("treelstm-nary", input_dim=4, hidden_dim=3, arity=arity, inner_inputs=True)
    params = random_params(cell, rng, 0.5)
    vectors = [rng.normal(size=(len(t.tokens), 4)) for t in trees]
    forest, h = _forward(cell, params, trees, vectors)
    index = forest.word[forest.word_nodes()]
    _, cache = cell.forward(params, forest, np.concatenate(vectors), index)
    grads, _ = backward_gradients(cell, params, forest, cache, rng.normal(size=h.shape))
    forward, terms = shown_terms(cell, forest, cache, nan_as_zero=True)
    forget = [symbol for symbol in terms if symbol.startswith("delta_f")]
    assert len(forget) == arity
    expected_b = np.concatenate(
        [
            terms["delta_i"].sum(0),
            terms["delta_o"].sum(0),
            terms["delta_u"].sum(0),
            sum(terms[f].sum(0) for f in forget),
        ]
    )
    np.testing.assert_allclose(grads["b"], expected_b, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(forward["h"], h)
