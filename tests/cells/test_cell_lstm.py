"""The chain LSTM's recurrent dropout (Gal 2015, one mask per sequence): the
forward against reference.lstm (Tai eq. 1 step by step, reading h_{t-1} * m_s),
a cell-level finite-difference check with the masks fixed, and a planted bug
(masks applied in the forward only) that the check must catch; the masks of
the N-ary Tree-LSTM and the 2-layer and bidirectional LSTMs, the output gate
left out, and the forget-gate bias of every LSTM.
"""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import cell_gradient_errors, random_params, token_forest, without_masks_in_backward
from chain_checks import CHECK_LENGTHS, assert_chains_match, chain_cell_case
from gradcheck.check import TOLERANCE, assert_passes
from gradcheck.suite import Setting
from gradcheck.trees import random_binary_tree
from npcomp.cells import make_cell
from npcomp.cells.reference import lstm as lstm_reference
from npcomp.heads import dropout_mask


def test_recurrent_widths():
    assert make_cell("lstm", 4, 3).recurrent_widths() == [3]
    # the binary Tree-LSTM has no recurrence over time: no recurrent dropout
    assert make_cell("treelstm-nary", 4, 3).recurrent_widths() == []


def test_forward_with_masks_is_eq_1_with_masked_previous_state():
    case = chain_cell_case("lstm", np.random.default_rng(11), masked=True)
    masks, nodes, vectors, params = case.masks, case.nodes, case.vectors, case.params
    h, _ = case.forward(masks)
    plain, _ = case.forward()
    assert_chains_match(h, nodes, lambda k: lstm_reference.forward(vectors[k], params, masks=[masks[0][k]])["out"])
    assert_chains_match(plain, nodes, lambda k: lstm_reference.forward(vectors[k], params)["out"])
    # a one-word sentence has no previous state: the mask cannot matter
    np.testing.assert_array_equal(h[nodes[0]], plain[nodes[0]])
    # masks of ones are no dropout
    np.testing.assert_array_equal(case.forward([np.ones_like(mask) for mask in masks])[0], plain)


def test_gradients_with_fixed_masks():
    rng = np.random.default_rng(12)
    case = chain_cell_case("lstm", rng, CHECK_LENGTHS, masked=True)
    assert_passes(case.gradient_errors(rng))


def test_detects_masks_missing_in_backward(monkeypatch):
    """Masks in the forward but not in the backward: eps_h_{t-1} is not masked,
    so the gradient of everything before the last step is wrong."""
    rng = np.random.default_rng(13)
    case = chain_cell_case("lstm", rng, CHECK_LENGTHS, masked=True)
    monkeypatch.setattr(case.cell, "backward", without_masks_in_backward(case.cell.backward))
    errors = case.gradient_errors(rng)
    assert errors["W"] > TOLERANCE and errors["x"] > TOLERANCE


def test_nary_masks_every_child_slot():
    """The general N-ary cell (N = 2 on binary trees with unary nodes) with a
    mask given: every child's h is masked by its tree's mask, checked by finite
    differences (the chain LSTM is the N = 1 case of the same code)."""
    rng = np.random.default_rng(14)
    d, d_x = 3, 4
    cell = make_cell("treelstm-nary", d_x, d)
    params = random_params(cell, rng)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (1, 4, 7)]
    forest = token_forest(trees)
    x = rng.normal(size=(sum(len(t.tokens) for t in trees), d_x))
    index = forest.word[forest.word_nodes()]
    masks = [dropout_mask((forest.n_trees, d), 0.5, rng, np.float64)]
    assert 0 < np.count_nonzero(masks[0]) < masks[0].size
    assert_passes(cell_gradient_errors(cell, params, forest, x, index, masks, rng))
    # and the mask reaches both children: a parent's gates read m_s * [h_l ; h_r]
    h, cache = cell.forward(params, forest, x, index, recurrent_masks=masks)
    inner = np.flatnonzero(forest.n_children == 2)
    left, right = forest.children[inner, 0], forest.children[inner, 1]
    mask = masks[0][forest.tree[inner]]
    np.testing.assert_array_equal(cache.hc[inner], np.hstack([h[left] * mask, h[right] * mask]))


@pytest.mark.parametrize("model", ["lstm", "bilstm", "lstm2", "bilstm2"])
def test_mask_count_is_checked(model):
    case = chain_cell_case(model, np.random.default_rng(15), (2, 3), masked=True)
    with pytest.raises(ValueError, match="recurrent|mask"):
        case.forward(case.masks + case.masks[:1])


@pytest.mark.parametrize("model", ["lstm", "treelstm-childsum", "treelstm-nary"])
def test_without_output_gate_h_is_tanh_c(model):
    """``output_gate=False`` (Tai's released relatedness code, gate_output =
    false): h = tanh(c) at every node, and the o columns get no gradient."""
    from gradcheck.suite import build_case, random_trees

    trees = {"lstm": "chain", "treelstm-childsum": "dependency"}.get(model, "binary")
    setting = Setting(model, trees=trees, extra=dict(output_gate=False))
    rng = np.random.default_rng(6)
    model_, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, cache = model_.cell.forward(params.prefixed("cell"), forest, params["embedding"][words], index)
    np.testing.assert_allclose(h, np.tanh(cache.c), rtol=0, atol=1e-15)
    grads = params.zeros_like()
    model_.loss_and_gradient(params, forest, grads, **options)
    d = model_.cell.hidden_dim
    for name in ("W", "b"):
        assert not np.any(grads[f"cell.{name}"][..., d : 2 * d])
    assert np.any(grads["cell.W"][..., :d])


# cell -> the forget-gate blocks of its biases, as (parameter, slice of columns)
FORGET_BLOCKS = {
    "lstm": [("b", slice(6, 8))],
    "treelstm-nary": [("b", slice(6, 8))],
    "treelstm-childsum": [("b", slice(6, 8))],
    "bilstm": [("b", slice(6, 8))],
    "lstm2": [("b", slice(6, 8)), ("b_2", slice(6, 8))],
    "bilstm2": [("b", slice(6, 8)), ("b_2", slice(6, 8))],
    "lstm-global-attn": [("b", slice(6, 8))],
    "lstm-recurrent-attn": [("b", slice(6, 8))],
    "slstm": [("b", slice(2, 6))],  # i|fl|fr|x|o: both forget gates
}


@pytest.mark.parametrize("model", sorted(FORGET_BLOCKS))
def test_forget_bias_shifts_only_the_forget_gate_biases(model):
    """``forget_bias`` adds its constant to every forget-gate bias at
    initialisation and changes nothing else of the same random draw."""

    def initialised(forget_bias):
        cell = make_cell(model, 2, 2, forget_bias=forget_bias)
        params = {name: np.zeros(shape) for name, shape in cell.parameter_shapes()}
        cell.initialise(params, np.random.default_rng(8))
        return params

    plain, shifted = initialised(0.0), initialised(1.5)
    expected = {name: value.copy() for name, value in plain.items()}
    for name, columns in FORGET_BLOCKS[model]:
        expected[name][columns] += 1.5
    assert plain.keys() == shifted.keys()
    for name in plain:
        np.testing.assert_array_equal(shifted[name], expected[name], err_msg=name)
