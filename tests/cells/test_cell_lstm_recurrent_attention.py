"""The LSTM with recurrent attention (Nayebi & Blundell eqs. 9-13): forward
against reference.lstm_recurrent_attention, step by step per sentence (prefix
softmax recomputed from scratch at every step; with and without
recurrent-dropout masks), float32 against float64, gradient checks through the model and of
the cell alone with fixed masks, planted bugs (softmax Jacobian, highway
gate, attention leaking future steps), the LSTM backward with a memory-cell
gradient against lstm.py's, the numba kernels against their Python
versions, and a 1000-word chain against the O(T^2) prefix softmax."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import assert_kernel_matches_python, backward_gradients, random_params, shown_terms
from chain_checks import (
    LENGTHS,
    chain_forest,
    chain_nodes,
    dropout_masks,
    lstm_deltas,
    root_read_cell_errors,
    run_forward,
    small_chain_case,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, run_setting
from npcomp.cells import lstm_recurrent_attention, make_cell
from npcomp.cells.reference import lstm_recurrent_attention as attention_reference

MODEL = "lstm-recurrent-attn"


def forward_errors(cell, params, forest, vectors, masks=None):
    """Largest |out - reference| (s^_T at the roots); asserts the other rows are 0."""
    out, _ = run_forward(cell, params, forest, vectors, masks=masks)
    worst = 0.0
    for k in range(forest.n_trees):
        nodes = chain_nodes(forest, k)
        assert np.all(out[nodes[:-1]] == 0)
        expected = attention_reference.forward(
            vectors[k], params, None if masks is None else [masks[0][k], masks[1][k]]
        )
        worst = max(worst, float(np.abs(out[nodes] - expected["out"]).max()))
    return worst


def make_case(seed, d=3, d_x=4, masked=False):
    rng = np.random.default_rng(seed)
    cell = make_cell(MODEL, d_x, d)
    params = random_params(cell, rng)
    vectors = [rng.normal(size=(n, d_x)) for n in LENGTHS]
    forest, _ = chain_forest(LENGTHS)
    masks = [dropout_masks(rng, len(LENGTHS), d, 0.25), dropout_masks(rng, len(LENGTHS), d)] if masked else None
    return cell, params, vectors, forest, masks


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
def test_forward_is_eqs_9_to_12(masked):
    cell, params, vectors, forest, masks = make_case(4, masked=masked)
    assert forward_errors(cell, params, forest, vectors, masks) < 1e-12
    out, _ = run_forward(cell, params, forest, vectors, masks=masks)
    out32, _ = run_forward(cell, params, forest, vectors, np.float32, masks)
    assert out32.dtype == np.float32
    assert np.abs(out32 - out).max() < 1e-5


def _whole_sentence_attention(order, chain_ptr, v, score, v_tilde, run_max, run_sum):
    """Planted bug: every step attends over the whole sentence (eq. 9's
    softmax over j = 1..T instead of 1..t), leaking future steps."""
    for k in range(chain_ptr.shape[0] - 1):
        nodes = order[chain_ptr[k] : chain_ptr[k + 1]]
        top = score[nodes].max()
        weights = np.exp(score[nodes] - top)
        v_tilde[nodes] = (weights / weights.sum()) @ v[nodes]
        run_max[nodes] = top
        run_sum[nodes] = weights.sum()


def test_detects_attention_leaking_future_steps(monkeypatch):
    cell, params, vectors, forest, _ = make_case(5)
    assert forward_errors(cell, params, forest, vectors) < 1e-12
    monkeypatch.setattr(lstm_recurrent_attention, "prefix_attention", _whole_sentence_attention)
    assert forward_errors(cell, params, forest, vectors) > 1e-3


def test_parameters_and_transform_gate_bias():
    cell = make_cell(MODEL, 5, 3)
    d = 3
    assert dict(cell.parameter_shapes()) == {
        "W": (5, 4 * d),
        "U": (d, 4 * d),
        "b": (4 * d,),
        "W_a": (2 * d,),
        "W_r": (d, d),
        "b_r": (d,),
        "W_x": (2 * d, 4 * d),
        "U_s": (d, 4 * d),
        "b_s": (4 * d,),
        "W_H": (d, d),
        "b_H": (d,),
        "W_T": (d, d),
        "b_T": (d,),
    }
    assert cell.output_dim == d and cell.recurrent_widths() == [d, d]
    params = {name: np.full(shape, np.nan) for name, shape in cell.parameter_shapes()}
    cell.initialise(params, np.random.default_rng(0))
    assert np.all(params["b_T"] == -2.0)  # Srivastava; Nayebi Sec. 3.5
    assert all(
        np.all(np.abs(value) <= 1 / np.sqrt(d))
        for name, value in params.items()
        if name not in ("b_T", "W", "W_a", "W_x")
    )
    assert np.all(np.abs(params["W_x"]) <= 1 / np.sqrt(2 * d))


SETTINGS = [
    Setting(MODEL, trees="chain", supervision="root"),
    Setting(MODEL, trees="chain", supervision="root", input_dim=3, l2=0.1),
    Setting(
        MODEL, trees="chain", supervision="root", dropout=0.5, embedding_dropout=0.3, recurrent_dropout=(0.25, 0.3)
    ),
]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.describe())
def test_gradient_check(setting):
    assert_passes(run_setting(setting))


def test_cell_gradient_with_fixed_recurrent_masks():
    errors, masks = root_read_cell_errors(MODEL, mask_rates=(0.25, 0.3))
    assert np.any(masks[1] == 0)
    assert max(errors.values()) < 1e-6, errors


def _prefix_backward_without_subtraction(
    order, chain_ptr, v, score, v_tilde, run_max, run_sum, eps_v_tilde, eps_v, delta_a
):
    """Planted bug: delta_a_j = sum_t alpha_j^t v_j . g_t, the softmax Jacobian's
    -alpha_j^t v~_t . g_t term dropped (O(T^2), alpha recomputed)."""
    for k in range(chain_ptr.shape[0] - 1):
        nodes = order[chain_ptr[k] : chain_ptr[k + 1]]
        # alpha[t, j] = alpha_j^t for j <= t, 0 above the diagonal
        alpha = np.tril(np.exp(score[nodes][None, :] - run_max[nodes][:, None]) / run_sum[nodes][:, None])
        total = alpha.T @ eps_v_tilde[nodes]  # sum_{t>=j} alpha_j^t g_t
        eps_v[nodes] += total
        delta_a[nodes] = (v[nodes] * total).sum(axis=1)


def _highway_backward_without_carry(params, grads, s_T, H, T, eps_out):
    """Planted bug: delta_T = eps * H * T(1-T), forgetting that the carry term
    s_T (1 - T) depends on T too."""
    eps_H = eps_out * T
    delta_T = eps_out * H * T * (1 - T)
    grads["W_H"] += s_T.T @ eps_H
    grads["b_H"] += eps_H.sum(axis=0)
    grads["W_T"] += s_T.T @ delta_T
    grads["b_T"] += delta_T.sum(axis=0)
    return eps_out * (1 - T) + eps_H @ params["W_H"].T + delta_T @ params["W_T"].T, eps_H, delta_T


@pytest.mark.parametrize(
    "kernel, buggy, wrong",
    [
        ("prefix_attention_backward", _prefix_backward_without_subtraction, "cell.W_a"),
        ("_highway_backward", _highway_backward_without_carry, "cell.b_T"),
    ],
    ids=["softmax-without-subtraction", "highway-gate-without-carry"],
)
def test_detects_planted_bug(monkeypatch, kernel, buggy, wrong):
    model, params, forest, options = small_chain_case(MODEL)
    assert_passes(check_gradients(model, params, forest, **options))
    monkeypatch.setattr(lstm_recurrent_attention, kernel, buggy)
    errors = check_gradients(model, params, forest, **options)
    assert errors[wrong] > TOLERANCE and errors["cell.U"] > TOLERANCE


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
def test_lstm_backward_takes_a_gradient_on_the_cells(masked):
    """The LSTM's backward with ``d_c`` (what eq. 9 sends to the memory cells
    m_j): a directional finite difference of J = sum(m * G_m) in x."""
    cell, params, vectors, forest, masks = make_case(8, masked=masked)
    rng = np.random.default_rng(0)
    words, index = np.unique(forest.word, return_inverse=True)
    x = np.concatenate(vectors)[words]
    lstm_masks = {} if masks is None else {"recurrent_masks": [masks[0]]}
    h, cache = cell.lstm.forward(params, forest, x, index, **lstm_masks)
    G_m = rng.normal(size=h.shape)
    grads = {name: np.zeros_like(params[name]) for name in ("W", "U", "b")}
    d_x = cell.lstm.backward_from_states(params, forest, cache, np.zeros_like(h), G_m.copy(), grads)
    direction = rng.normal(size=x.shape)

    def objective(x_):
        return float((cell.lstm.forward(params, forest, x_, index, **lstm_masks)[1].c * G_m).sum())

    step = 1e-5
    numeric = (objective(x + step * direction) - objective(x - step * direction)) / (2 * step)
    assert abs(numeric - (d_x * direction).sum()) < 1e-8 * max(1.0, abs(numeric))


def test_kernels_match_their_python_versions():
    cell, params, vectors, forest, masks = make_case(9, masked=True)
    d, n = cell.hidden_dim, forest.n_nodes
    rng = np.random.default_rng(1)
    _, cache = run_forward(cell, params, forest, vectors, masks=masks)
    module = lstm_recurrent_attention
    from npcomp.cells.kernels.levels import children_columns

    children = children_columns(forest, 1)
    assert_kernel_matches_python(
        module.prefix_attention,
        lambda: [cache.order, cache.chain_ptr, cache.v, cache.score, np.zeros((n, 2 * d)), np.zeros(n), np.zeros(n)],
    )
    eps_v_tilde = rng.normal(size=(n, 2 * d))
    assert_kernel_matches_python(
        module.prefix_attention_backward,
        lambda: [
            cache.order,
            cache.chain_ptr,
            cache.v,
            cache.score,
            cache.v_tilde,
            cache.run_max,
            cache.run_sum,
            eps_v_tilde,
            np.zeros((n, 2 * d)),
            np.zeros(n),
        ],
    )
    for start, stop in zip(forest.level_ptr[:-1], forest.level_ptr[1:]):
        assert_kernel_matches_python(
            module._transfer_cell,
            lambda: [children, cache.gates, cache.r, cache.v_tilde, cache.k.copy(), int(start), int(stop)],
        )
    eps_s = rng.normal(size=(n, d))
    eps_k = rng.normal(size=(n, d))
    assert_kernel_matches_python(
        module._transfer_deltas,
        lambda: [
            children,
            cache.gates,
            cache.k,
            cache.tanh_k,
            cache.r,
            cache.v_tilde,
            eps_s.copy(),
            eps_k.copy(),
            np.zeros((n + 3, 4 * d)),
            np.zeros((n, d)),
            np.zeros((n, d)),
            int(forest.level_ptr[2]),
            int(forest.level_ptr[3]),
        ],
    )


def test_refuses_labels_below_the_root():
    cell = make_cell(MODEL, 4, 3)
    labelled_everywhere, _ = chain_forest((2, 3), labels=[[1, 2], [0, 1, 2]])
    with pytest.raises(ValueError, match="whole sequences"):
        cell.check_forest(labelled_everywhere)
    root_only, _ = chain_forest((2, 3), labels=[[-1, 2], [-1, -1, 2]])
    cell.check_forest(root_only)


def test_thousand_word_chain_is_the_quadratic_prefix_softmax():
    """O(T d) running-max prefix attention on a 1000-word chain with scores
    spread over hundreds (so the maximum keeps growing and the rescaling is
    exercised) against eq. 9 recomputed at every t."""
    rng = np.random.default_rng(10)
    d, d_x = 4, 3
    cell = make_cell(MODEL, d_x, d)
    params = {name: value * 0.3 for name, value in random_params(cell, rng).items()}
    params["W_a"] = rng.normal(0, 60, 2 * d)
    forest, _ = chain_forest((1000, 7))
    x = rng.normal(size=(1007, d_x))
    masks = [dropout_masks(rng, 2, d, 0.25), dropout_masks(rng, 2, d)]
    out, cache = cell.forward(params, forest, x, forest.word, recurrent_masks=masks)
    assert np.ptp(cache.score) > 100
    expected = attention_reference.forward(x[:1000], params, [masks[0][0], masks[1][0]])
    v_tilde = np.concatenate([expected["h~"], expected["m~"]], axis=1)
    np.testing.assert_allclose(cache.v_tilde[chain_nodes(forest, 0)], v_tilde, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[forest.root[0]], expected["s^_T"], rtol=0, atol=1e-12)
    d_out = np.zeros_like(out)
    d_out[forest.root] = rng.normal(size=(2, d))
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_x_ = cell.backward(params, forest, cache, d_out, grads)
    assert np.all(np.isfinite(d_x_)) and all(np.all(np.isfinite(g)) for g in grads.values())


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
def test_error_terms_add_up_to_the_gradients(masked):
    """The error terms ``backward_terms`` shows are the ones the gradients are
    made of: db_s, db_r, db_H, db_T are the sums over the nodes of the
    transfer layer's gate deltas, delta_r, eps_H and delta_T; dw_a =
    sum_j delta_a_j [h_j | m_j]; eps_v~ = delta W_x^T + [delta_r W_r^T | eps_m~];
    the LSTM's db is the sum of its deltas.  eps_s and eps_k are in full
    (every share): delta_o = eps_s tanh(k) o(1-o), delta_i = eps_k k~ i(1-i).
    s^_T at the last steps is the output."""
    cell, params, vectors, forest, masks = make_case(14, masked=masked)
    out, cache = run_forward(cell, params, forest, vectors, masks=masks)
    rng = np.random.default_rng(2)
    grads, _ = backward_gradients(cell, params, forest, cache, rng.normal(size=out.shape))
    forward, terms = shown_terms(cell, forest, cache, nan_as_zero=True)
    close = dict(rtol=1e-12, atol=1e-12)
    transfer = np.concatenate([terms[symbol] for symbol in ("delta_i_s", "delta_o_s", "delta_k", "delta_f_s")], axis=1)
    np.testing.assert_allclose(grads["b_s"], transfer.sum(0), **close)
    np.testing.assert_allclose(grads["b_r"], terms["delta_r"].sum(0), **close)
    np.testing.assert_allclose(grads["b_H"], terms["eps_H"].sum(0), **close)
    np.testing.assert_allclose(grads["b_T"], terms["delta_T"].sum(0), **close)
    v = np.concatenate([forward["h"], forward["m"]], axis=1)
    np.testing.assert_allclose(grads["W_a"], terms["delta_a"] @ v, **close)
    np.testing.assert_allclose(
        terms["eps_v~"],
        transfer @ params["W_x"].T + np.concatenate([terms["delta_r"] @ params["W_r"].T, terms["eps_m~"]], axis=1),
        **close,
    )
    np.testing.assert_allclose(grads["b"], lstm_deltas(terms).sum(0), **close)
    o, i = forward["o_s"], forward["i_s"]
    np.testing.assert_allclose(terms["delta_o_s"], terms["eps_s"] * np.tanh(forward["k"]) * o * (1 - o), **close)
    np.testing.assert_allclose(terms["delta_i_s"], terms["eps_k"] * forward["k~"] * i * (1 - i), **close)
    np.testing.assert_array_equal(forward["s^_T"][forest.root], out[forest.root])
