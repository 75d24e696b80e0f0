"""The 2-layer LSTMs (Tai Table 1 "2-layer" and "Bidirectional 2-layer"):
forward against Tai eq. 1 stacked and written out in NumPy (with and
without recurrent-dropout masks), model-level gradient checks (tied and
untied, every-node and root supervision), cell-level checks with fixed
masks, and planted bugs the checks must catch."""
from __future__ import annotations

import numpy as np
import pytest

from gradcheck.check import TOLERANCE, assert_passes
from gradcheck.suite import Setting, run_setting
from npcomp.cells import make_cell
from test_cell_lstm import (CHECK_LENGTHS, LENGTHS, cell_gradient_errors, chain_case,
                            lstm_states, random_params, recurrent_masks,
                            without_masks_in_backward)

D, D_X = 3, 4
BIDIRECTIONAL = [("bilstm2", False), ("bilstm2", True)]
CASES = [("lstm2", None)] + BIDIRECTIONAL
IDS = ["lstm2", "bilstm2-tied", "bilstm2-untied"]


def _make(model, untied):
    return make_cell(model, D_X, D, untied=untied)


def _layer(params, suffix, backward=False, untied=False):
    """(W, U, b) of one LSTM: layer suffix '' or '_2'; the backward LSTM's own
    weights only when untied (footnote 2: shared otherwise)."""
    tag = "_backward" if backward and untied else ""
    return tuple(params[name + tag + suffix] for name in ("W", "U", "b"))


def _bidirectional(vectors, weights_forward, weights_backward, mask_forward, mask_backward):
    """(h^F, h^B) per step of one sentence: h^B[t] has read words T..t."""
    forward = lstm_states(vectors, *weights_forward, D, mask_forward)
    backward = lstm_states(vectors[::-1], *weights_backward, D, mask_backward)[::-1]
    return forward, backward


def reference(model, untied, params, vectors, masks):
    """Out (T, output_dim) of one sentence by Tai eq. 1 stacked; ``masks``: the
    sentence's row of each recurrent mask, or Nones."""
    if model == "lstm2":
        h1 = lstm_states(vectors, *_layer(params, ""), D, masks[0])
        return lstm_states(h1, *_layer(params, "_2"), D, masks[1])
    f1, b1 = _bidirectional(vectors, _layer(params, ""), _layer(params, "", True, untied),
                            masks[0], masks[1])
    y = np.hstack([f1, b1])              # layer 1 at every step, the last one included
    f2, b2 = _bidirectional(y, _layer(params, "_2"), _layer(params, "_2", True, untied),
                            masks[2], masks[3])
    out = np.hstack([f2, b2])
    out[-1, D:] = b2[0]                  # the sentence: h2B after reading every word
    return out


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_forward_is_eq_1_stacked(model, untied, masked):
    rng = np.random.default_rng(31)
    cell = _make(model, untied)
    params = random_params(cell, rng)
    forest, vectors, x, index, nodes = chain_case(LENGTHS, D_X, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng) if masked else None
    out, _ = cell.forward(params, forest, x, index, recurrent_masks=masks)
    assert out.shape == (forest.n_nodes, cell.output_dim)
    for k in range(len(LENGTHS)):
        rows = [None] * len(cell.recurrent_widths()) if masks is None else \
            [mask[k] for mask in masks]
        np.testing.assert_allclose(out[nodes[k]], reference(model, untied, params, vectors[k],
                                                            rows), rtol=0, atol=1e-12)


def test_parameter_names_and_shapes():
    assert _make("lstm2", None).parameter_shapes() == [
        ("W", (D_X, 4 * D)), ("U", (D, 4 * D)), ("b", (4 * D,)),
        ("W_2", (D, 4 * D)), ("U_2", (D, 4 * D)), ("b_2", (4 * D,))]
    untied = dict(_make("bilstm2", True).parameter_shapes())
    assert untied["W_2"] == untied["W_backward_2"] == (2 * D, 4 * D)
    assert untied["W_backward"] == (D_X, 4 * D)
    assert [name for name, _ in _make("bilstm2", False).parameter_shapes()] == \
        ["W", "U", "b", "W_2", "U_2", "b_2"]
    assert _make("lstm2", None).recurrent_widths() == [D, D]
    assert _make("bilstm2", True).recurrent_widths() == [D] * 4


# the finite-difference tests run small: d = 2 still mixes units through U,
# and the bidirectional layer 2 reads 2d = 4 > d_x inputs
SMALL = dict(input_dim=3, hidden_dim=2)


def _small_case(model, untied, seed):
    """(cell, params, forest, x, word_index, masks) for a cell-level check."""
    rng = np.random.default_rng(seed)
    cell = make_cell(model, SMALL["input_dim"], SMALL["hidden_dim"], untied=untied)
    params = random_params(cell, rng)
    forest, _, x, index, _ = chain_case(CHECK_LENGTHS, SMALL["input_dim"], rng)
    return cell, params, forest, x, index, recurrent_masks(cell, forest.n_trees, rng), rng


@pytest.mark.parametrize("supervision", ["all", "root"])
@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_gradients(model, untied, supervision):
    setting = Setting(model, trees="chain", untied=untied, supervision=supervision, **SMALL)
    assert_passes(run_setting(setting, seed=3))


@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_gradients_with_fixed_masks(model, untied):
    cell, params, forest, x, index, masks, rng = _small_case(model, untied, 32)
    errors = cell_gradient_errors(cell, params, forest, x, index, masks, rng)
    assert set(errors) == {name for name, _ in cell.parameter_shapes()} | {"x"}
    assert_passes(errors)


@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_detects_masks_missing_in_backward(model, untied, monkeypatch):
    cell, params, forest, x, index, masks, rng = _small_case(model, untied, 33)
    monkeypatch.setattr(cell, "backward", without_masks_in_backward(cell.backward))
    errors = cell_gradient_errors(cell, params, forest, x, index, masks, rng,
                                  names=("W_2", "W", "x"))
    # layer 2's unmasked eps_h2_{t-1} already spoils its own W_2, and all below it
    assert errors["W_2"] > TOLERANCE and errors["W"] > TOLERANCE and errors["x"] > TOLERANCE


@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_detects_layer_2_input_gradient_not_passed_down(model, untied, monkeypatch):
    """Layer 1's backward gets zeros instead of layer 2's input gradient: layer 1
    and the inputs learn nothing, and the check must say so."""
    cell, params, forest, x, index, masks, rng = _small_case(model, untied, 34)
    first = cell.layers[0]
    original = first.backward

    def buggy(params_, forest_, cache, d_h, grads, helper=None):
        return original(params_, forest_, cache, np.zeros_like(d_h), grads, helper)

    monkeypatch.setattr(first, "backward", buggy)
    errors = cell_gradient_errors(cell, params, forest, x, index, masks, rng,
                                  names=("W", "U", "b", "x", "W_2"))
    assert min(errors["W"], errors["U"], errors["b"], errors["x"]) > TOLERANCE
    assert errors["W_2"] <= TOLERANCE   # layer 2 itself is still right


@pytest.mark.parametrize("model, untied", BIDIRECTIONAL, ids=IDS[1:])
def test_detects_layer_1_root_routed_as_sentence(model, untied, monkeypatch):
    """Layer 1's backward routes the root row's h^B gradient to h1B_1 (bilstm's
    sentence row) although layer 2 read h1B_T there: the check must fail, in
    layer 1's backward LSTM (its own weights when untied) and the inputs."""
    cell, params, forest, x, index, masks, rng = _small_case(model, untied, 35)
    original = cell.backward

    def buggy(params_, forest_, cache, d_out, grads, helper=None):
        cache.first.backward_row[forest_.root] = cache.first.reversed_forest.root
        return original(params_, forest_, cache, d_out, grads, helper)

    backward_u = "U_backward" if untied else "U"
    names = ("U", backward_u, "x")
    assert_passes(cell_gradient_errors(cell, params, forest, x, index, masks, rng, names))
    monkeypatch.setattr(cell, "backward", buggy)
    errors = cell_gradient_errors(cell, params, forest, x, index, masks, rng, names)
    assert errors[backward_u] > TOLERANCE and errors["x"] > TOLERANCE
    if untied:   # the forward LSTM of layer 1 never reads h^B
        assert errors["U"] <= TOLERANCE
