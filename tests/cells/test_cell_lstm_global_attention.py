"""The LSTM with global attention (Nayebi & Blundell eqs. 4-8): forward
against reference.lstm_global_attention, step by step per sentence (with and
without recurrent-dropout masks), float32 against float64, gradient checks
through the model and of the cell alone with fixed masks, a planted
softmax-Jacobian bug, the numba kernels against their Python versions, and
the structures the cell must refuse."""

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
from gradcheck.suite import Setting, build_case, random_trees, run_setting
from npcomp.cells import lstm_global_attention, make_cell
from npcomp.cells.reference import lstm_global_attention as attention_reference


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
def test_forward_is_eqs_4_to_7(masked):
    rng = np.random.default_rng(4)
    d, d_x, attention = 3, 4, 2
    cell = make_cell("lstm-global-attn", d_x, d, attention_dim=attention)
    params = random_params(cell, rng)
    vectors = [rng.normal(size=(n, d_x)) for n in LENGTHS]
    forest, _ = chain_forest(LENGTHS)
    masks = [dropout_masks(rng, len(LENGTHS), d)] if masked else None
    out, _ = run_forward(cell, params, forest, vectors, masks=masks)
    assert out.shape == (forest.n_nodes, attention)
    for k in range(len(LENGTHS)):
        expected = attention_reference.forward(vectors[k], params, None if masks is None else [masks[0][k]])
        nodes = chain_nodes(forest, k)
        assert nodes[-1] == forest.root[k]
        np.testing.assert_allclose(out[nodes], expected["out"], rtol=0, atol=1e-12)
        assert np.all(out[nodes[:-1]] == 0)  # only the last step is read (eq. 8)
    out32, _ = run_forward(cell, params, forest, vectors, np.float32, masks)
    assert out32.dtype == np.float32
    assert np.abs(out32 - out).max() < 1e-5


def test_attention_weights_are_a_softmax_over_each_sentence():
    rng = np.random.default_rng(5)
    cell = make_cell("lstm-global-attn", 4, 3)
    assert cell.output_dim == 25  # Nayebi Sec. 4.1
    params = random_params(cell, rng)
    params["W_a"] *= 40  # large scores: the max must be subtracted
    forest, _ = chain_forest(LENGTHS)
    _, cache = run_forward(cell, params, forest, [rng.normal(size=(n, 4)) for n in LENGTHS])
    assert np.all(np.isfinite(cache.a)) and np.all(cache.a >= 0)
    np.testing.assert_allclose(np.bincount(forest.tree, weights=cache.a), 1.0, atol=1e-12)


SETTINGS = [
    Setting("lstm-global-attn", trees="chain", supervision="root"),
    Setting("lstm-global-attn", trees="chain", supervision="root", extra=dict(attention_dim=2)),
    Setting(
        "lstm-global-attn",
        trees="chain",
        supervision="root",
        dropout=0.5,
        embedding_dropout=0.3,
        recurrent_dropout=0.3,
        l2=0.1,
    ),
]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.describe())
def test_gradient_check(setting):
    assert_passes(run_setting(setting))


def test_cell_gradient_with_fixed_recurrent_masks():
    errors, _ = root_read_cell_errors("lstm-global-attn", mask_rates=(0.3,), attention_dim=2)
    assert max(errors.values()) < 1e-6, errors


def _attention_backward_without_subtraction(order, chain_ptr, h, a, eps_context, w_a, eps_h, eps_a, delta_a):
    """Planted bug: delta_a_t = a_t eps_a_t, the softmax Jacobian's
    -a_t sum_t' a_t' eps_a_t' term dropped."""
    for k in range(chain_ptr.shape[0] - 1):
        for t in order[chain_ptr[k] : chain_ptr[k + 1]]:
            eps_h[t] += a[t] * eps_context[k]
            eps_a[t] = h[t] @ eps_context[k]
            delta_a[t] = a[t] * eps_a[t]
            eps_h[t] += delta_a[t] * w_a


def test_detects_softmax_backward_without_subtraction(monkeypatch):
    model, params, forest, options = small_chain_case("lstm-global-attn", attention_dim=2)
    assert_passes(check_gradients(model, params, forest, **options))
    monkeypatch.setattr(lstm_global_attention, "_attention_backward", _attention_backward_without_subtraction)
    errors = check_gradients(model, params, forest, **options)
    assert errors["cell.W_a"] > TOLERANCE and errors["cell.U"] > TOLERANCE


def test_kernels_match_their_python_versions():
    rng = np.random.default_rng(8)
    d = 3
    cell = make_cell("lstm-global-attn", 4, d, attention_dim=2)
    params = random_params(cell, rng)
    forest, _ = chain_forest(LENGTHS)
    _, cache = run_forward(cell, params, forest, [rng.normal(size=(n, 4)) for n in LENGTHS])
    score = cache.h @ params["W_a"]
    eps_context = rng.normal(size=(forest.n_trees, d))
    assert_kernel_matches_python(
        lstm_global_attention._attention,
        lambda: [
            cache.order,
            cache.chain_ptr,
            score,
            cache.h,
            np.zeros(forest.n_nodes),
            np.zeros((forest.n_trees, 2 * d)),
            int(forest.root[0]),
            0.25,
        ],
    )
    assert_kernel_matches_python(
        lstm_global_attention._attention_backward,
        lambda: [
            cache.order,
            cache.chain_ptr,
            cache.h,
            cache.a,
            eps_context,
            params["W_a"],
            rng.normal(size=(forest.n_nodes, d)),
            np.zeros(forest.n_nodes),
            np.zeros(forest.n_nodes),
        ],
    )


def test_refuses_labels_below_the_root_and_trees():
    cell = make_cell("lstm-global-attn", 4, 3)
    labelled_everywhere, _ = chain_forest((2, 3), labels=[[1, 2], [0, 1, 2]])
    with pytest.raises(ValueError, match="whole sequences"):
        cell.check_forest(labelled_everywhere)
    root_only, _ = chain_forest((2, 3), labels=[[-1, 2], [-1, -1, 2]])
    cell.check_forest(root_only)
    setting = Setting("lstm-global-attn")  # binary trees
    rng = np.random.default_rng(0)
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    with pytest.raises(ValueError, match="structure .chain."):
        check_gradients(model, params, forest, **options)


def test_thousand_word_chain():
    rng = np.random.default_rng(9)
    d, d_x = 4, 3
    cell = make_cell("lstm-global-attn", d_x, d)
    params = {name: value * 0.3 for name, value in random_params(cell, rng).items()}
    forest, _ = chain_forest((1000, 7))
    x = rng.normal(size=(1007, d_x))
    masks = [dropout_masks(rng, 2, d)]
    out, cache = cell.forward(params, forest, x, forest.word, recurrent_masks=masks)
    d_out = np.zeros_like(out)
    d_out[forest.root] = rng.normal(size=(2, cell.output_dim))
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_x_ = cell.backward(params, forest, cache, d_out, grads)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(d_x_))
    assert all(np.all(np.isfinite(g)) for g in grads.values())
    np.testing.assert_allclose(
        out[forest.root[0]], attention_reference.forward(x[:1000], params, [masks[0][0]])["h~_T"], rtol=0, atol=1e-12
    )


def test_error_terms_add_up_to_the_gradients():
    """The error terms ``backward_terms`` shows are the ones the gradients are
    made of: db_c is the sum of delta_c over the sentences' last steps, dw_a
    = sum_t delta_a_t h_t, eps_a_t = h_t . eps_cT, delta_a is eps_a through the
    softmax Jacobian (summing to 0 over a sentence, G4), and the LSTM's db is
    the sum of its deltas.  h~_T at the last steps is the output."""
    rng = np.random.default_rng(13)
    d, d_x = 3, 4
    cell = make_cell("lstm-global-attn", d_x, d, attention_dim=2)
    params = random_params(cell, rng)
    forest, _ = chain_forest(LENGTHS)
    out, cache = run_forward(cell, params, forest, [rng.normal(size=(n, d_x)) for n in LENGTHS])
    grads, _ = backward_gradients(cell, params, forest, cache, rng.normal(size=out.shape))
    forward, terms = shown_terms(cell, forest, cache, nan_as_zero=True)
    close = dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads["b_c"], terms["delta_c"].sum(0), **close)
    np.testing.assert_allclose(grads["W_a"], terms["delta_a"] @ forward["h"], **close)
    np.testing.assert_allclose(grads["b"], lstm_deltas(terms).sum(0), **close)
    a, eps_a, delta_a = forward["a"], terms["eps_a"], terms["delta_a"]
    for k in range(forest.n_trees):
        nodes = chain_nodes(forest, k)
        root = forest.root[k]
        np.testing.assert_allclose(eps_a[nodes], forward["h"][nodes] @ terms["eps_cT"][root], **close)
        jacobian = a[nodes] * (eps_a[nodes] - a[nodes] @ eps_a[nodes])
        np.testing.assert_allclose(delta_a[nodes], jacobian, **close)
        assert abs(delta_a[nodes].sum()) < 1e-12
    np.testing.assert_array_equal(forward["h~_T"][forest.root], out[forest.root])
