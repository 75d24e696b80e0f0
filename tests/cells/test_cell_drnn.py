"""The drnn cell (Irsoy & Cardie 2014's deep recursive network).

Forward values against the node-by-node NumPy reference of D1-D2 at 2 and 3
layers; float32 against float64; the first layer as the untied RecNN; numba
kernels against their Python versions; gradient checks on random and
300-level trees; planted bugs the checker must catch; what the cell rejects.
Every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting.
"""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import (
    assert_composes_binary_trees_with_words_at_the_leaves,
    assert_matches_reference,
    assert_random_trees_pass,
    backward_gradients,
    errors_with_backward,
    given_random_trees,
    shown_terms,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting
from npcomp.cells import drnn, make_cell
from npcomp.cells.reference import drnn as drnn_reference
from tree_cell_cases import (
    assert_deep_branching_passes,
    assert_kernels_match_python,
    binary_forward_case,
    cell_forward,
    forest_words,
    planted_case,
    with_kernel,
)

D, D_X = 3, 4


def _forward_case(dtype, layers=3, activation="relu", seed=3):
    return binary_forward_case(make_cell("drnn", D_X, D, layers=layers, activation=activation), dtype, seed)


@pytest.mark.parametrize("layers", [2, 3])
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_forward_matches_the_node_by_node_reference(layers, activation):
    cell, trees, vectors, params, forest, h = _forward_case(np.float64, layers, activation)
    assert forest.n_levels > 5 and np.any(forest.n_children == 1)
    assert_matches_reference(
        h, forest, trees, lambda k, tree: drnn_reference.forward(tree, vectors[k], params, layers, activation)["out"]
    )


def test_float32_forward_is_close_to_float64():
    *_, h64 = _forward_case(np.float64, activation="tanh")
    *_, h32 = _forward_case(np.float32, activation="tanh")
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-4, atol=2e-6)


def test_first_layer_is_the_untied_recnn():
    """Layer 1 at the inner nodes is Le & Zuidema's untied RecNN with the same
    weights (W_leaf for leaf children, W^(1) for inner ones)."""
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, 2, "tanh")
    x, index = forest_words(forest, vectors)
    _, cache = cell.forward(params, forest, x, index)
    recnn = make_cell("recnn", D_X, D, activation="tanh", untied=True)
    h_recnn, _ = recnn.forward({"W": params["W"][0], "W_leaf": params["W_leaf"], "b": params["b"][0]}, forest, x, index)
    inner = slice(forest.n_leaves, forest.n_nodes)
    np.testing.assert_allclose(cache.H[0, inner], h_recnn[inner], rtol=1e-12, atol=1e-14)


def test_kernels_match_their_python_versions(monkeypatch):
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, seed=9)
    x, index = forest_words(forest, vectors)
    d_h = np.random.default_rng(1).normal(size=(forest.n_nodes, D))

    def run():
        h, cache = cell.forward(params, forest, x, index)
        grads, d_x = backward_gradients(cell, params, forest, cache, d_h)
        return [h, d_x] + [grads[name] for name in sorted(grads)]

    kernels = ("_activate_rows", "_gather_layer", "_add_word_terms", "_deltas", "_route_layer")
    assert_kernels_match_python(monkeypatch, drnn, kernels, run)


def test_parameter_count():
    d, d_x, layers = 200, 300, 3
    shapes = dict(make_cell("drnn", d_x, d, layers=layers).parameter_shapes())
    assert shapes == {"W": (3, 2 * d, d), "W_leaf": (2 * d_x, d), "V": (2, d, d), "V_leaf": (d_x, d), "b": (3, d)}


# ---------------------------------------------------------------------------
# gradient checks (tanh: the rectifier's kink is checked at the suite's points)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "setting",
    [
        Setting("drnn", input_dim=D_X, hidden_dim=D, activation="tanh", extra=dict(layers=3)),
        Setting(
            "drnn",
            input_dim=D_X,
            hidden_dim=D,
            activation="tanh",
            supervision="root+leaves",
            dropout=0.5,
            l2=0.01,
            extra=dict(layers=2),
        ),
    ],
    ids=lambda s: s.describe(),
)
@given_random_trees(max_trees=3, examples=4)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes)


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    setting = Setting(
        "drnn", input_dim=D_X, hidden_dim=D, activation="tanh", supervision="root+leaves", extra=dict(layers=2)
    )
    assert_deep_branching_passes(setting, direction)


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case():
    return planted_case(Setting("drnn", input_dim=D_X, hidden_dim=D, activation="tanh", extra=dict(layers=3)))


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_a_dropped_vertical_path(monkeypatch):
    """eps^(i-1) += V^(i)T delta^(i) left out at the inner nodes: the layers
    below learn only from their parents."""
    route = drnn._route_layer.py_func

    def no_vertical(children, d_inputs, delta, eps, leaf_delta, k, start, stop, leaves):
        d = eps.shape[2]
        cut = d_inputs.copy()
        if k > 0:
            cut[:, 2 * d :] = 0.0
        route(children, cut, delta, eps, leaf_delta, k, start, stop, leaves)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(drnn, "_route_layer", no_vertical))
    assert errors["cell.W"] > TOLERANCE and errors["cell.W_leaf"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


def test_detects_children_read_from_the_layer_below(monkeypatch):
    """The children's error sent to their layer i - 1 instead of layer i."""
    route = drnn._route_layer.py_func

    def wrong_layer(children, d_inputs, delta, eps, leaf_delta, k, start, stop, leaves):
        route(children, d_inputs, delta, eps, leaf_delta, max(k - 1, 0) if k > 1 else k, start, stop, leaves)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(drnn, "_route_layer", wrong_layer))
    assert errors["cell.W"] > TOLERANCE


# ---------------------------------------------------------------------------
# what npcomp explain shows
# ---------------------------------------------------------------------------


def test_error_terms_add_up_to_the_bias_gradients():
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, 3, "tanh", seed=12)
    h, cache = cell_forward(cell, params, forest, vectors)
    head = np.random.default_rng(2).normal(size=h.shape)
    grads, _ = backward_gradients(cell, params, forest, cache, head)
    _, terms = shown_terms(cell, forest, cache, nan_as_zero=True)
    for k in range(3):
        np.testing.assert_allclose(grads["b"][k], terms[f"delta^({k + 1})"].sum(axis=0), rtol=1e-12, atol=1e-14)
    parts = cell.term_parts(params, forest, cache, head)[0]
    np.testing.assert_allclose(sum(part.values for part in parts.parts), terms["eps_h"], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------
# what the cell cannot compose
# ---------------------------------------------------------------------------


def test_composes_binary_trees_with_words_at_the_leaves():
    assert_composes_binary_trees_with_words_at_the_leaves(make_cell("drnn", D_X, D))


def test_rejects_a_single_layer_and_other_activations():
    with pytest.raises(ValueError, match="layers must be at least 2, not 1"):
        make_cell("drnn", D_X, D, layers=1)
    with pytest.raises(ValueError, match="activation must be one of"):
        make_cell("drnn", D_X, D, activation="sigmoid")
