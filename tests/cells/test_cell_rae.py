"""The rae cell (Socher et al. 2011's semi-supervised recursive autoencoder on
given trees).

Forward values and reconstruction errors against the node-by-node NumPy
reference of RA1-RA4; the model's objective alpha E_rec + (1 - alpha) E_cE
written out; numba kernels against their Python versions; gradient checks on
random and 300-level trees; planted bugs the checker must catch; what the cell
rejects.  Every suite setting is checked by tests/cells/test_gradients.py.
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
from gradcheck.suite import Setting, build_case
from gradcheck.trees import random_binary_tree
from npcomp.cells import make_cell, rae
from npcomp.cells.reference import rae as rae_reference
from tree_cell_cases import (
    assert_deep_branching_passes,
    assert_kernels_match_python,
    binary_forward_case,
    cell_forward,
    planted_case,
    with_kernel,
)

D = 3


def _forward_case(dtype, seed=3, alpha=0.2):
    return binary_forward_case(make_cell("rae", D, D, reconstruction_weight=alpha), dtype, seed)


def test_forward_matches_the_node_by_node_reference():
    cell, trees, vectors, params, forest, h = _forward_case(np.float64)
    assert forest.n_levels > 5 and np.any(forest.n_children == 1)
    assert_matches_reference(h, forest, trees, lambda k, tree: rae_reference.forward(tree, vectors[k], params)["out"])
    inner = np.linalg.norm(h[forest.n_leaves :], axis=1)
    np.testing.assert_allclose(inner, 1.0, rtol=1e-12)  # (RA2)


def test_reconstruction_errors_match_the_reference():
    """E_rec per inner node, weighted by the words under each child (RA4)."""
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, seed=4)
    _, cache = cell_forward(cell, params, forest, vectors)
    forward, _ = shown_terms(cell, forest, cache)
    assert_matches_reference(
        np.nan_to_num(forward["E_rec"], nan=-1.0),
        forest,
        trees,
        lambda k, tree: np.nan_to_num(rae_reference.forward(tree, vectors[k], params)["E_rec"], nan=-1.0),
    )


def test_float32_forward_is_close_to_float64():
    *_, h64 = _forward_case(np.float64)
    *_, h32 = _forward_case(np.float32)
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-4, atol=2e-6)


@pytest.mark.parametrize("alpha", [0.0, 0.2, 0.6])
def test_objective_is_alpha_reconstruction_plus_weighted_cross_entropy(alpha):
    """J = (1/Z) sum_j [alpha E_rec,j + (1 - alpha) E_cE,j] (RA5), Z the
    trees: the head's cross-entropy written out from its own outputs."""
    rng = np.random.default_rng(5)
    setting = Setting("rae", input_dim=D, hidden_dim=D, extra=dict(reconstruction_weight=alpha))
    trees = [random_binary_tree(n, rng) for n in (4, 9, 6)]
    model, params, forest, options = build_case(setting, trees, rng)
    h, encoding = model._encode(params, forest)
    probabilities = model.head.outputs(params.prefixed("softmax"), h)
    labelled = np.flatnonzero(forest.label >= 0)
    cross_entropy = -np.log(probabilities[labelled, forest.label[labelled]]).sum()
    E_rec = encoding["cell_cache"].E_rec.sum()
    expected = (alpha * E_rec + (1 - alpha) * cross_entropy) / forest.n_trees
    assert model.loss(params, forest) == pytest.approx(expected, rel=1e-12)
    assert E_rec > 0


def test_kernels_match_their_python_versions(monkeypatch):
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, seed=9)
    d_h = np.random.default_rng(1).normal(size=(forest.n_nodes, D))

    def run():
        h, cache = cell_forward(cell, params, forest, vectors)
        grads, d_x = backward_gradients(cell, params, forest, cache, d_h)
        return [h, cache.E_rec, d_x] + [grads[name] for name in sorted(grads)]

    kernels = ("_span_sizes", "_gather_children", "_normalised_tanh_deltas", "_route_to_children")
    assert_kernels_match_python(monkeypatch, rae, kernels, run)


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

# Finite-difference resolution.  The normalisation (RA2) divides by ||p||,
# which random weights can make small (0.32 on a 27-leaf tree): the
# objective's curvature then grows, and the error on W1 there is 3.9e-6,
# 2.4e-7 and 1.5e-8 at h = 1e-3, 5e-4 and 2.5e-4, falling 16-fold as h halves
# (the difference's O(h^4) truncation).  Random trees use 2.5e-4.
STEP = 2.5e-4


@pytest.mark.parametrize(
    "setting",
    [
        Setting("rae", input_dim=D, hidden_dim=D),
        Setting(
            "rae",
            input_dim=D,
            hidden_dim=D,
            supervision="root+leaves",
            dropout=0.5,
            l2=0.01,
            extra=dict(reconstruction_weight=0.6),
        ),
    ],
    ids=lambda s: s.describe(),
)
@given_random_trees(max_trees=3, examples=4)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes, step=STEP)


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    setting = Setting("rae", input_dim=D, hidden_dim=D, supervision="root+leaves")
    assert_deep_branching_passes(setting, direction, step=STEP)


def test_alpha_zero_is_checked_and_leaves_the_reconstruction_out():
    """alpha = 0 (no autoencoder, RA5), the case the suite leaves out because
    its W2 and b2 rows would check nothing: the other blocks pass the check
    on unary nodes with root labels, and W2, b2 get exactly no gradient."""
    rng = np.random.default_rng(13)
    setting = Setting(
        "rae", input_dim=D, hidden_dim=D, supervision="root", unary_rate=0.3, extra=dict(reconstruction_weight=0.0)
    )
    trees = [random_binary_tree(n, rng, unary_rate=0.3) for n in (6, 9, 1, 4)]
    model, params, forest, options = build_case(setting, trees, rng)
    errors = check_gradients(model, params, forest, **options)
    assert_passes(errors)
    grads = params.zeros_like()
    model.loss_and_gradient(params, forest, grads, **options)
    assert not grads["cell.W2"].any() and not grads["cell.b2"].any()
    assert grads["cell.W1"].any() and grads["embedding"].any()


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case():
    return planted_case(Setting("rae", input_dim=D, hidden_dim=D))


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_the_reconstruction_targets_left_constant(monkeypatch):
    """E_rec's gradient in its targets c_k dropped (as if the children were inputs)."""
    route = rae._route_to_children.py_func

    def constant_targets(children, eps_c, eps_r, *rest):
        return route(children, eps_c, np.zeros_like(eps_r), *rest)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(rae, "_route_to_children", constant_targets))
    assert errors["embedding"] > TOLERANCE and errors["cell.W1"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


def test_detects_normalisation_backpropagated_as_a_division(monkeypatch):
    """eps_a = eps_h / ||p||, the projection -h (h . eps_h) of (RA2) forgotten."""

    def division(h, a, norm, d_h, delta, start, stop, leaves):
        rows = slice(start - leaves, stop - leaves)
        delta[rows] = d_h[start:stop] / norm[rows, None] * (1 - a[rows] ** 2)

    errors = errors_with_backward(monkeypatch, _case(), with_kernel(rae, "_normalised_tanh_deltas", division))
    assert errors["cell.W1"] > TOLERANCE and errors["cell.b1"] > TOLERANCE


def test_detects_the_head_unweighted(monkeypatch):
    """The head's term taken whole instead of times 1 - alpha."""
    model, params, forest, options = _case()
    monkeypatch.setattr(model.cell, "head_weight", 1.0)
    loss = model.loss

    def weighted_loss(*args, **kwargs):
        monkeypatch.setattr(model.cell, "head_weight", 0.8)
        try:
            return loss(*args, **kwargs)
        finally:
            monkeypatch.setattr(model.cell, "head_weight", 1.0)

    monkeypatch.setattr(model, "loss", weighted_loss)
    errors = check_gradients(model, params, forest, **options)
    assert errors["softmax.W"] > TOLERANCE


# ---------------------------------------------------------------------------
# what npcomp explain shows
# ---------------------------------------------------------------------------


def test_parts_add_up_to_eps_h_and_gradients_to_the_terms():
    cell, trees, vectors, params, forest, _ = _forward_case(np.float64, seed=12)
    h, cache = cell_forward(cell, params, forest, vectors)
    head = np.random.default_rng(2).normal(size=h.shape)
    grads, d_x = backward_gradients(cell, params, forest, cache, head)
    forward, terms = shown_terms(cell, forest, cache)
    inner = np.arange(forest.n_leaves, forest.n_nodes)
    np.testing.assert_allclose(grads["b2"], terms["eps_r"][inner].sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grads["W1"], forward["c"][inner].T @ terms["delta"][inner], rtol=1e-12, atol=1e-14)
    parts = cell.term_parts(params, forest, cache, head)[0]
    np.testing.assert_allclose(sum(part.values for part in parts.parts), terms["eps_h"], rtol=1e-12, atol=1e-13)


# ---------------------------------------------------------------------------
# what the cell cannot compose
# ---------------------------------------------------------------------------


def test_composes_binary_trees_with_words_at_the_leaves():
    assert_composes_binary_trees_with_words_at_the_leaves(make_cell("rae", D, D))


def test_rejects_unequal_dimensions_and_alpha_out_of_range():
    with pytest.raises(ValueError, match="hidden_dim must equal input_dim"):
        make_cell("rae", 4, 3)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\), not 1.0"):
        make_cell("rae", 3, 3, reconstruction_weight=1.0)
