"""The multiplicative RNN (Irsoy & Cardie eq. 5): forward against reference.mrnn
(the bilinear term written slice by slice), gradient checks for
every activation, recurrent dropout on both recurrent terms, the kernels,
planted bugs, Sec. 4.3's reduction to the matrix-space model, and the
parameter counts behind Sec. 5.2's "approximately the same number of
parameters"."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import (
    assert_kernel_matches_python,
    backward_gradients,
    backward_while,
    each_kernel,
    random_params,
    shown_terms,
    zeroed,
)
from chain_checks import (
    CHECK_LENGTHS,
    LENGTHS,
    assert_chain_gradients_pass,
    assert_chains_match,
    assert_float32_chain_forward_is_close,
    chain_case,
    chain_cell_case,
    chain_model_case,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case
from npcomp.cells import make_cell, mrnn, registry
from npcomp.cells.kernels import recurrence
from npcomp.cells.kernels.activations import activation_code
from npcomp.cells.reference import mrnn as mrnn_reference
from npcomp.data.readers.formats import chain_tree
from npcomp.forest import build_forest

MODEL = "mrnn"
# the activations its registry entry offers
ACTIVATION_NAMES = registry.model(MODEL).options["activation"]


# ---------------------------------------------------------------------------
# forward against eq. 5
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_forward_is_eq_5(activation):
    case = chain_cell_case(MODEL, np.random.default_rng(1), scale=0.5, activation=activation)
    h, _ = case.forward()
    assert_chains_match(
        h, case.nodes, lambda k: mrnn_reference.forward(case.vectors[k], case.params, activation)["out"]
    )
    if activation == "relu":
        assert np.any(h == 0) and np.any(h > 0)


def test_repeated_words_share_their_matrix():
    """The per-word products (x A, x W) are made once per distinct word: a
    minibatch reading the same word many times equals the reference."""
    rng = np.random.default_rng(2)
    d, d_x = 3, 4
    cell = make_cell(MODEL, d_x, d)
    params = random_params(cell, rng, scale=0.5)
    table = rng.normal(size=(3, d_x))
    lengths = (4, 7, 1)
    words = [rng.integers(0, 3, size=n).astype(np.int32) for n in lengths]
    forest = build_forest([chain_tree([f"w{k}" for k in w]) for w in words], words)
    distinct, index = np.unique(forest.word, return_inverse=True)
    h, cache = cell.forward(params, forest, table[distinct], index)
    assert cache.matrices.shape == (distinct.shape[0], d, d)
    for k, w in enumerate(words):
        expected = mrnn_reference.forward(table[w], params, "tanh")["out"]
        np.testing.assert_allclose(h[forest.tree == k], expected, rtol=0, atol=1e-12)


def test_float32_forward_is_close_to_float64():
    assert_float32_chain_forward_is_close(MODEL, seed=3, scale=0.5)


def test_parameter_counts_of_section_5():
    """A (d_x, d, d), W (d_x, d), V (d, d), b (d,).  Sec. 5.2 compares the
    MPQA RNN (d_h = 315) and mRNN (d_h = 25) "with approximately the same
    number of parameters" on 300-d word2vec vectors: 194,040 and 195,650."""
    cell = make_cell(MODEL, 5, 3)
    assert cell.parameter_shapes() == [("A", (5, 3, 3)), ("W", (5, 3)), ("V", (3, 3)), ("b", (3,))]

    def count(model, d):
        return sum(int(np.prod(shape)) for _, shape in make_cell(model, 300, d).parameter_shapes())

    assert count("rnn", 315) == 194_040 and count(MODEL, 25) == 195_650
    assert abs(count(MODEL, 25) / count("rnn", 315) - 1) < 0.01


# ---------------------------------------------------------------------------
# gradient checks through the model, every activation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_gradients(activation):
    """As the RNN's (seed 1: every relu pre-activation RELU_MARGIN from the kink)."""
    assert_chain_gradients_pass(MODEL, mrnn_reference.forward, activation, seed=1)


# ---------------------------------------------------------------------------
# recurrent dropout at the cell: the mask enters both recurrent terms
# ---------------------------------------------------------------------------


def test_forward_with_masks_masks_both_recurrent_terms():
    case = chain_cell_case(MODEL, np.random.default_rng(6), scale=0.5, masked=True)
    masks, params = case.masks, case.params
    h, _ = case.forward(masks)
    assert_chains_match(
        h, case.nodes, lambda k: mrnn_reference.forward(case.vectors[k], params, "tanh", [masks[0][k]])["out"]
    )
    # V = 0: the bilinear term alone still sees the mask
    params["V"][...] = 0
    h, _ = case.forward(masks)
    plain, _ = case.forward()
    longest = case.nodes[-1]
    assert not np.allclose(h[longest], plain[longest])


@pytest.mark.parametrize("activation", ["tanh", "identity"])
def test_cell_gradients_with_fixed_masks(activation):
    rng = np.random.default_rng(7)
    case = chain_cell_case(MODEL, rng, CHECK_LENGTHS, scale=0.5, activation=activation, masked=True)
    assert_passes(case.gradient_errors(rng))


# ---------------------------------------------------------------------------
# planted bugs: the checks must fail
# ---------------------------------------------------------------------------


def _with_gradient_changed(cell, name, change):
    """A planted bug: the cell's backward with ``change`` applied to what it
    adds to grads[name]."""
    backward = cell.backward

    def buggy(params, forest, cache, d_h, grads):
        before = grads[name].copy()
        d_x = backward(params, forest, cache, d_h, grads)
        grads[name][...] = before + change(grads[name] - before)
        return d_x

    return buggy


def test_detects_tensor_gradient_transposed(monkeypatch):
    """dA with each word's (d, d) block transposed (dA[j, i, k] in place of
    dA[j, k, i]: the slice read as A^[i]^T)."""
    model, params, forest, options, _ = chain_model_case(MODEL, mrnn_reference.forward, "tanh", seed=2)
    assert_passes(check_gradients(model, params, forest, **options))
    monkeypatch.setattr(
        model.cell, "backward", _with_gradient_changed(model.cell, "A", lambda added: added.transpose(0, 2, 1))
    )
    errors = check_gradients(model, params, forest, **options)
    assert errors["cell.A"] > TOLERANCE
    assert errors["cell.W"] <= TOLERANCE and errors["embedding"] <= TOLERANCE


def test_detects_word_gradient_without_the_bilinear_term(monkeypatch):
    """dx = delta_word W^T only, forgetting that M_t = x_t A also depends on x."""
    model, params, forest, options, _ = chain_model_case(MODEL, mrnn_reference.forward, "tanh", seed=2)
    # A is read by the backward only for dx's dG A^T term (G_w is cached)
    monkeypatch.setattr(
        model.cell, "backward", backward_while(model.cell.backward, lambda params_, forest_: zeroed(params_["A"]))
    )
    errors = check_gradients(model, params, forest, **options)
    assert errors["embedding"] > TOLERANCE
    assert errors["cell.A"] <= TOLERANCE and errors["cell.W"] <= TOLERANCE


# ---------------------------------------------------------------------------
# Sec. 4.3: the matrix-space model as a special case
# ---------------------------------------------------------------------------


def test_one_hot_mrnn_is_the_matrix_space_model():
    """Sec. 4.3 / Fig. 1 right: with one-hot words (d_x = |vocabulary|) and
    f = identity, the slice x_w A is word w's matrix.  Eq. 9 as printed (W = V
    = b = 0) starts from the mRNN's h_0 = 0 and stays there (checked below), so
    the reduction needs a non-zero start: one extra unit s held at 1 by its
    bias (eq. 7's bias unit h' = [h; 1]) lets the first step's x_1 W supply
    h_0 M_{w_1}, and A's row for s cancels x_t W at every later step:

        h_1 = x_1 W = h_0 M_{w_1};   h_t = h_{t-1} M_{w_t} + s (-h_0 M_{w_t}) + x_t W
                                         = h_{t-1} M_{w_t}

    Every state then equals the matrix-space model's h_0 M_{w_1} .. M_{w_t}
    (eqs. 1-2, ``matrix_space.py``) to rounding."""
    rng = np.random.default_rng(8)
    d, vocabulary = 3, 6
    word_matrices = rng.normal(0, 0.7, size=(vocabulary, d, d))
    h0 = rng.normal(size=d)
    words = [rng.integers(0, vocabulary, size=n).astype(np.int32) for n in LENGTHS]
    forest = build_forest([chain_tree([f"w{k}" for k in w]) for w in words], words)
    distinct, index = np.unique(forest.word, return_inverse=True)
    space = make_cell("matrix-space", d * d, d)
    h_space, _ = space.forward({"h0": h0}, forest, word_matrices.reshape(vocabulary, d * d)[distinct], index)

    cell = make_cell(MODEL, vocabulary, d + 1, activation="identity")
    start = np.einsum("k,wki->wi", h0, word_matrices)  # h_0 M_w per word
    params = {name: np.zeros(shape) for name, shape in cell.parameter_shapes()}
    params["A"][:, :d, :d] = word_matrices
    params["A"][:, d, :d] = -start
    params["W"][:, :d] = start
    params["b"][d] = 1.0
    one_hot = np.eye(vocabulary)[distinct]
    h, _ = cell.forward(params, forest, one_hot, index)
    np.testing.assert_allclose(h[:, :d], h_space, rtol=1e-12, atol=1e-12)
    assert np.all(h[:, d] == 1.0)

    # eq. 9 (purely multiplicative: W = V = b = 0) from the mRNN's h_0 = 0
    pure = {name: np.zeros(shape) for name, shape in cell.parameter_shapes()}
    pure["A"][...] = params["A"]
    h, _ = cell.forward(pure, forest, one_hot, index)
    assert np.all(h == 0)


# ---------------------------------------------------------------------------
# kernels, what the cell accepts
# ---------------------------------------------------------------------------


def _kernel_cases():
    rng = np.random.default_rng(9)
    forest, _, x, index, _ = chain_case(LENGTHS, 4, rng)
    n, d, n_words = forest.n_nodes, 3, x.shape[0]
    before = np.ascontiguousarray(forest.children[:, 0])
    mask = rng.uniform(0, 2, size=(forest.n_trees, d))
    previous = rng.normal(size=(n, d))
    previous[::4] = 0.0  # the kernel skips zero states (first words, dropped units)
    out = [
        (
            mrnn._route_to_previous,
            lambda: (
                before,
                forest.tree,
                mask,
                rng.normal(size=(n_words, d, d)),
                index,
                rng.normal(size=(n, d)),
                rng.normal(size=(n, d)),
                0,
                n,
            ),
        ),
        (
            recurrence.outer_products_by_word,
            lambda: (rng.normal(size=(n, d)), rng.normal(size=(n, d)), index, rng.normal(size=(n_words, d, d)), 2, n),
        ),
    ]
    for code in map(activation_code, ACTIVATION_NAMES):
        out.append(
            (
                mrnn._bilinear_rows,
                lambda code=code: (
                    code,
                    previous,
                    rng.normal(size=(n_words, d, d)),
                    rng.normal(size=(n_words, d)),
                    index,
                    np.zeros((n, d)),
                    np.zeros((n, d)),
                    0,
                    n,
                ),
            )
        )
    return out


@each_kernel(_kernel_cases())
def test_kernel_matches_its_python_function(kernel, make_args):
    assert_kernel_matches_python(kernel, make_args)


def test_rejects_unknown_activations_and_trees():
    for activation in ("sigmoid", "softsign"):
        with pytest.raises(ValueError, match="activation"):
            make_cell(MODEL, 4, 3, activation=activation)
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
    of: db = sum of delta, dV = sum of h~_{t-1}^T delta, dA[j, k, i] = sum_t
    x_tj h~_{t-1,k} delta_ti, and eps_h_{t-1} holds the head's share plus
    (delta_t (M_t + V)^T) * m_s; forward: h = f(z), z as eq. 5 step by step
    (with recurrent masks), h the output."""
    rng = np.random.default_rng(13)
    case = chain_cell_case(MODEL, rng, scale=0.5, masked=True)
    cell, params, forest, x, index, masks = (case.cell, case.params, case.forest, case.x, case.index, case.masks)
    h, cache = case.forward(masks)
    head = rng.normal(size=h.shape)
    grads, _ = backward_gradients(cell, params, forest, cache, head)
    forward, terms = shown_terms(cell, forest, cache)
    delta, eps_h, previous = terms["delta"], terms["eps_h"], forward["h~_{t-1}"]
    np.testing.assert_array_equal(forward["h"], h)
    np.testing.assert_allclose(h, np.tanh(forward["z"]), rtol=1e-12, atol=1e-15)
    assert_chains_match(
        forward["z"], case.nodes, lambda k: mrnn_reference.forward(case.vectors[k], params, "tanh", [masks[0][k]])["z"]
    )
    np.testing.assert_allclose(delta, eps_h * (1 - h**2), rtol=1e-12)
    np.testing.assert_allclose(grads["b"], delta.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(grads["V"], previous.T @ delta, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        grads["A"], np.einsum("tj,tk,ti->jki", x[index], previous, delta), rtol=1e-12, atol=1e-14
    )
    before = forest.children[:, 0]
    later = np.flatnonzero(before >= 0)
    G = np.einsum("tj,jki->tki", x[index[later]], params["A"]) + params["V"]
    expected_share = np.einsum("ti,tki->tk", delta[later], G) * masks[0][forest.tree[later]]
    np.testing.assert_allclose(eps_h[before[later]] - head[before[later]], expected_share, rtol=1e-12, atol=1e-14)
