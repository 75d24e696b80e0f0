"""The Elman RNN (Irsoy & Cardie eq. 3): forward against reference.rnn (the
printed equation step by step per sentence), gradient checks for every activation,
recurrent dropout (forward and a cell-level finite-difference check with the
masks fixed), the kernels against their Python functions, planted bugs, and
the rectifier/identity codes added to activations.py.
"""

from __future__ import annotations


import numpy as np
import pytest

from cell_checks import assert_kernel_matches_python, backward_while, each_kernel, random_params, replaced, shown_terms
from chain_checks import (
    CHECK_LENGTHS,
    LENGTHS,
    assert_chain_gradients_pass,
    assert_chains_match,
    assert_float32_chain_forward_is_close,
    chain_case,
    chain_cell_case,
    chain_model_case,
    recurrent_masks,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case
from npcomp.cells import make_cell, registry, rnn
from npcomp.cells.kernels import recurrence
from npcomp.cells.kernels.activations import activation_code
from npcomp.cells.reference import rnn as rnn_reference

MODEL = "rnn"
# the activations its registry entry offers
ACTIVATION_NAMES = registry.model(MODEL).options["activation"]


# ---------------------------------------------------------------------------
# forward against eq. 3
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_forward_is_eq_3(activation):
    case = chain_cell_case(MODEL, np.random.default_rng(1), activation=activation)
    h, _ = case.forward()
    assert_chains_match(h, case.nodes, lambda k: rnn_reference.forward(case.vectors[k], case.params, activation)["out"])
    if activation == "relu":  # both sides of the kink are exercised
        assert np.any(h == 0) and np.any(h > 0)


def test_float32_forward_is_close_to_float64():
    assert_float32_chain_forward_is_close(MODEL, seed=2)


def test_parameters():
    cell = make_cell(MODEL, 5, 3)
    assert cell.parameter_shapes() == [("W", (5, 3)), ("V", (3, 3)), ("b", (3,))]
    assert cell.output_dim == 3 and cell.recurrent_widths() == [3]


# ---------------------------------------------------------------------------
# gradient checks through the model (gradcheck), every activation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_gradients(activation):
    """Every activation through the model; the relu test point keeps every
    pre-activation RELU_MARGIN from the kink (seed 3: 6e-2).  Root supervision
    and dropout with fixed masks are gradcheck's own rows (test_gradients.py)."""
    assert_chain_gradients_pass(MODEL, rnn_reference.forward, activation, seed=3)


# ---------------------------------------------------------------------------
# recurrent dropout at the cell
# ---------------------------------------------------------------------------


def test_forward_with_masks_is_eq_3_with_masked_previous_state():
    case = chain_cell_case(MODEL, np.random.default_rng(6), masked=True)
    masks, nodes = case.masks, case.nodes
    h, _ = case.forward(masks)
    plain, _ = case.forward()
    assert_chains_match(
        h, nodes, lambda k: rnn_reference.forward(case.vectors[k], case.params, "tanh", [masks[0][k]])["out"]
    )
    np.testing.assert_array_equal(h[nodes[0]], plain[nodes[0]])  # one word: no recurrence
    np.testing.assert_array_equal(case.forward([np.ones_like(masks[0])])[0], plain)


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "identity"])
def test_cell_gradients_with_fixed_masks(activation):
    rng = np.random.default_rng(7)
    case = chain_cell_case(MODEL, rng, CHECK_LENGTHS, activation=activation, masked=True)
    assert_passes(case.gradient_errors(rng))


def test_mask_shape_and_count_are_checked():
    case = chain_cell_case(MODEL, np.random.default_rng(8), (2, 3), masked=True)
    with pytest.raises(ValueError, match="mask"):
        case.forward(case.masks + case.masks)
    with pytest.raises(ValueError, match="mask"):
        case.forward([case.masks[0][:, :2]])


# ---------------------------------------------------------------------------
# planted bugs: the checks must fail
# ---------------------------------------------------------------------------


def test_detects_gradient_routed_two_steps_back(monkeypatch):
    """Backward adds eps_h_{t-1}'s share to h_{t-2} instead (every node's
    child replaced by its grandchild): the check must fail."""
    model, params, forest, options, _ = chain_model_case(MODEL, rnn_reference.forward, "tanh", seed=2)
    assert_passes(check_gradients(model, params, forest, **options))

    def grandchildren(forest_):
        before = forest_.children[:, 0]
        grandchild = np.where(before >= 0, before[np.maximum(before, 0)], -1)
        return np.where(before >= 0, grandchild, -1)[:, None].astype(np.int32)

    monkeypatch.setattr(
        model.cell,
        "backward",
        backward_while(
            model.cell.backward, lambda params_, forest_: replaced(forest_, "children", grandchildren(forest_))
        ),
    )
    errors = check_gradients(model, params, forest, **options)
    assert errors["cell.V"] > TOLERANCE and errors["embedding"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


def test_detects_masks_missing_in_backward(monkeypatch):
    rng = np.random.default_rng(9)
    case = chain_cell_case(MODEL, rng, CHECK_LENGTHS, masked=True)
    assert_passes(case.gradient_errors(np.random.default_rng(1)))
    backward = case.cell.backward

    def buggy(params_, forest_, cache, d_h, grads):
        cache.mask = np.ones_like(cache.mask)
        return backward(params_, forest_, cache, d_h, grads)

    monkeypatch.setattr(case.cell, "backward", buggy)
    errors = case.gradient_errors(rng)
    assert errors["V"] > TOLERANCE and errors["x"] > TOLERANCE


# ---------------------------------------------------------------------------
# kernels, threads, activations, what the cell accepts
# ---------------------------------------------------------------------------


def _kernel_cases():
    rng = np.random.default_rng(10)
    forest, _, x, index, _ = chain_case(LENGTHS, 4, rng)
    n, d = forest.n_nodes, 3
    before = np.ascontiguousarray(forest.children[:, 0])
    mask = rng.uniform(0, 2, size=(forest.n_trees, d))
    out = [
        (
            recurrence.gather_previous,
            lambda: (before, forest.tree, mask, rng.normal(size=(n, d)), np.zeros((n + 3, d)), 2, n),
        ),
        (
            rnn._route_to_previous,
            lambda: (before, forest.tree, mask, rng.normal(size=(n + 3, d)), rng.normal(size=(n, d)), 0, n),
        ),
    ]
    for code in map(activation_code, ACTIVATION_NAMES):
        out.append(
            (
                rnn._activate_rows,
                lambda code=code: (
                    code,
                    rng.normal(size=(n + 3, d)),
                    rng.normal(size=(x.shape[0], d)),
                    index,
                    np.zeros((n, d)),
                    0,
                    n,
                ),
            )
        )
        out.append(
            (
                recurrence.activation_deltas,
                lambda code=code: (
                    code,
                    rng.uniform(-0.9, 0.9, size=(n, d)),
                    rng.normal(size=(n, d)),
                    np.zeros((n + 3, d)),
                    0,
                    n,
                ),
            )
        )
    return out


@each_kernel(_kernel_cases())
def test_kernel_matches_its_python_function(kernel, make_args):
    assert_kernel_matches_python(kernel, make_args)


def test_rectifier_and_identity_codes():
    """relu(z) = max(z, 0) with slope 1 where the output is positive (0 at and
    below the kink); identity with slope 1; through the cell's own kernels
    (activations.activate and derivative_from_output inlined).  The recursive
    net's registry entry (Le & Zuidema's three) does not offer them."""
    z = np.concatenate([np.linspace(-40, 40, 2001), [0.0, 1e-300, -1e-300]])
    n = z.shape[0]
    for dtype in (np.float64, np.float32):
        column = z.astype(dtype)[:, None]
        for name, value, slope in (
            ("relu", np.maximum(column, 0), column > 0),
            ("identity", column, np.ones_like(column)),
        ):
            code = activation_code(name)
            out = np.empty_like(column)
            rnn._activate_rows(code, np.zeros_like(column), column, np.arange(n), out, 0, n)
            assert out.dtype == dtype
            np.testing.assert_array_equal(out, value)
            derivative = np.empty_like(column)
            recurrence.activation_deltas(code, out, np.ones_like(column), derivative, 0, n)
            np.testing.assert_array_equal(derivative, slope.astype(dtype))
    with pytest.raises(ValueError, match="activation"):
        make_cell("recnn", 3, 3, activation="relu")


def test_rejects_unknown_activations():
    with pytest.raises(ValueError, match="activation"):
        make_cell(MODEL, 4, 3, activation="softsign")


def test_check_forest_rejects_branching_trees():
    from gradcheck.suite import random_trees

    rng = np.random.default_rng(0)
    setting = Setting(MODEL)
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    with pytest.raises(ValueError, match="structure .chain."):
        check_gradients(model, params, forest, **options)


# ---------------------------------------------------------------------------
# what npcomp explain shows: the cell's own terms
# ---------------------------------------------------------------------------


def test_error_terms_add_up_to_the_parameter_gradients():
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: db = sum of delta, dV = sum of h~_{t-1}^T delta, dx = delta_word W^T
    (delta summed per word), and eps_h_{t-1} holds the head's share plus
    (delta_t V^T) * m_s; forward: h = f(z), z as eq. 3 step by step (with
    recurrent masks), h the output (the kept z must survive the padded
    products)."""
    rng = np.random.default_rng(12)
    cell = make_cell(MODEL, 4, 3)
    params = random_params(cell, rng)
    lengths = tuple(rng.integers(1, 7, size=30))
    forest, vectors, x, index, nodes = chain_case(lengths, 4, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    head = rng.normal(size=(forest.n_nodes, 3))
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    h, cache = cell.forward(params, forest, x, index, recurrent_masks=masks)
    d_x = cell.backward(params, forest, cache, head.copy(), grads)
    forward, terms = shown_terms(cell, forest, cache)
    delta, eps_h = terms["delta"], terms["eps_h"]
    np.testing.assert_array_equal(forward["h"], h)
    np.testing.assert_allclose(h, np.tanh(forward["z"]), rtol=1e-12, atol=1e-15)
    assert_chains_match(
        forward["z"], nodes, lambda k: rnn_reference.forward(vectors[k], params, "tanh", [masks[0][k]])["z"]
    )
    np.testing.assert_allclose(delta, eps_h * (1 - h**2), rtol=1e-12)
    np.testing.assert_allclose(grads["b"], delta.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grads["V"], forward["h~_{t-1}"].T @ delta, rtol=1e-12)
    per_word = np.zeros((x.shape[0], 3))
    np.add.at(per_word, index, delta)
    np.testing.assert_allclose(d_x, per_word @ params["W"].T, rtol=1e-12, atol=1e-14)
    before = forest.children[:, 0]
    later = np.flatnonzero(before >= 0)
    expected_share = (delta[later] @ params["V"].T) * masks[0][forest.tree[later]]
    np.testing.assert_allclose(eps_h[before[later]] - head[before[later]], expected_share, rtol=1e-12, atol=1e-14)
