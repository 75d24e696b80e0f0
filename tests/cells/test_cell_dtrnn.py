"""The dtrnn cell (Socher et al. 2014's dependency-tree RNN, as Tai et al.
2015 train it on SICK).

Forward values against the node-by-node NumPy reference of (DT1) on
dependency trees (many children, chains, single words) and constituency
trees; the position of each child as the paper's l_k / r_k written out;
numba kernels against their Python versions; gradient checks on random
dependency trees and 300-level trees; planted bugs the checker must catch;
what the cell rejects.  Every suite setting is checked by
tests/cells/test_gradients.py::test_suite_setting.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from cell_checks import (
    assert_gradients_pass,
    assert_matches_reference,
    backward_gradients,
    errors_with_backward,
    shown_terms,
    tree_forest,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import dtrnn, make_cell
from npcomp.cells.reference import dtrnn as dtrnn_reference
from tree_cell_cases import (
    assert_deep_branching_passes,
    assert_kernels_match_python,
    cell_forward,
    forest_words,
    forward_case,
    planted_case,
    with_kernel,
)

MODEL = "dtrnn"
D, D_X = 3, 4


def _mixed_trees(seed=5):
    rng = np.random.default_rng(seed)
    trees = [random_dependency_tree(n, rng, max_children=8) for n in (9, 1, 25, 4)]
    trees.append(random_dependency_tree(13, rng, max_children=12))  # a 12-child node
    trees.append(random_dependency_tree(6, rng, max_children=1))  # a chain
    trees += [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1, 12)]
    return trees


@pytest.mark.parametrize("positions", [1, 3])
@pytest.mark.parametrize("dtype,tolerance", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_forward_matches_the_node_by_node_reference(dtype, tolerance, positions):
    cell = make_cell(MODEL, D_X, D, positions=positions)
    _, trees, vectors, params, forest, h = forward_case(cell, _mixed_trees(), np.random.default_rng(3), dtype)
    assert h.dtype == dtype
    assert_matches_reference(
        h,
        forest,
        trees,
        lambda k, tree: dtrnn_reference.forward(tree, vectors[k], params, positions)["out"],
        rtol=tolerance,
        atol=tolerance,
    )


def test_positions_are_counted_outward_from_the_head():
    """Head w2 with children w0, w1 on its left and w3, w4, w5 on its right:
    w1 is l_1, w0 l_2, w3 r_1, w4 r_2, w5 r_3 -> r_2 with K = 2 (DT2)."""
    forest = tree_forest([2, 2, -1, 2, 2, 2], [0, 1, 2, 3, 4, 5])
    slots = make_cell(MODEL, D_X, D, positions=2).child_slots(forest)
    by_token = {int(forest.token[j]): int(slots[j]) for j in range(forest.n_nodes)}
    assert by_token == {0: 1, 1: 0, 2: -1, 3: 2, 4: 3, 5: 3}


def test_kernels_match_their_python_versions(monkeypatch):
    rng = np.random.default_rng(4)
    cell, trees, vectors, params, forest, _ = forward_case(
        make_cell(MODEL, D_X, D), _mixed_trees(seed=9), rng, np.float64
    )
    x, index = forest_words(forest, vectors)
    d_h = rng.normal(size=(forest.n_nodes, D))

    def run():
        h, cache = cell.forward(params, forest, x, index)
        grads, d_x = backward_gradients(cell, params, forest, cache, d_h)
        return [h, d_x] + [grads[name] for name in sorted(grads)]

    kernels = ("_span_sizes", "_position_slots", "_gather_positions", "_route_positions")
    assert_kernels_match_python(monkeypatch, dtrnn, kernels, run)


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

dependency_shapes = st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(1, 40)), min_size=1, max_size=3)


@pytest.mark.parametrize(
    "setting",
    [
        Setting(MODEL, trees="dependency"),
        Setting(MODEL, trees="dependency", supervision="root+leaves", dropout=0.5, l2=0.01, extra=dict(positions=2)),
    ],
    ids=lambda s: s.describe(),
)
@hypothesis_settings(max_examples=6)
@given(shapes=dependency_shapes)
def test_random_dependency_trees(setting, shapes):
    trees = [random_dependency_tree(n_words, np.random.default_rng(seed), max_children=8) for seed, n_words in shapes]
    assert_gradients_pass(setting, trees, np.random.default_rng(shapes[0][0]))


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    assert_deep_branching_passes(Setting(MODEL, input_dim=2, hidden_dim=2, supervision="root+leaves"), direction)


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case():
    return planted_case(Setting(MODEL, trees="dependency"))


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_children_unweighted_by_their_words(monkeypatch):
    """eps_h(j) += eps_S block without its factor l(j)."""
    route = dtrnn._route_positions.py_func

    def unweighted(children, slot, span, eps_S, d_h, start, stop):
        route(children, slot, np.ones_like(span), eps_S, d_h, start, stop)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(dtrnn, "_route_positions", unweighted))
    assert errors["embedding"] > TOLERANCE and errors["cell.W_v"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


def test_detects_left_and_right_matrices_exchanged(monkeypatch):
    """The backward reads each child's error from the mirror position's block."""
    route = dtrnn._route_positions.py_func
    K = 3

    def mirrored(children, slot, span, eps_S, d_h, start, stop):
        route(children, (slot + K) % (2 * K), span, eps_S, d_h, start, stop)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(dtrnn, "_route_positions", mirrored))
    assert errors["embedding"] > TOLERANCE


# ---------------------------------------------------------------------------
# what npcomp explain shows
# ---------------------------------------------------------------------------


def test_error_terms_add_up_to_the_parameter_gradients():
    rng = np.random.default_rng(6)
    cell, trees, vectors, params, forest, _ = forward_case(
        make_cell(MODEL, D_X, D), _mixed_trees(seed=12), rng, np.float64
    )
    h, cache = cell_forward(cell, params, forest, vectors)
    head = rng.normal(size=h.shape)
    grads, _ = backward_gradients(cell, params, forest, cache, head)
    forward, terms = shown_terms(cell, forest, cache)
    np.testing.assert_allclose(grads["b"], terms["delta"].sum(axis=0), rtol=1e-12)
    g = terms["delta"] / forward["l"]
    np.testing.assert_allclose(grads["W"], forward["sum_j l(j) h_j by position"].T @ g, rtol=1e-12, atol=1e-14)
    parts = cell.term_parts(params, forest, cache, head)[0]
    np.testing.assert_allclose(sum(part.values for part in parts.parts), terms["eps_h"], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------
# structures
# ---------------------------------------------------------------------------


def test_composes_any_arity_and_refuses_a_leaf_without_a_word():
    cell = make_cell(MODEL, D_X, D)
    cell.check_forest(tree_forest([4, 4, 4, 4, -1], [0, 1, 2, 3, 4]))  # four children
    with pytest.raises(ValueError, match="every leaf must read a word"):
        cell.check_forest(tree_forest([2, 2, -1], [0, -1, 1]))


def test_rejects_no_positions():
    with pytest.raises(ValueError, match="positions must be at least 1, not 0"):
        make_cell(MODEL, D_X, D, positions=0)
