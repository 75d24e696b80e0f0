"""The chain LSTM's recurrent dropout (Gal 2015, one mask per sequence): the
forward against reference.lstm (Tai eq. 1 step by step, reading h_{t-1} * m_s),
a cell-level finite-difference check with the masks fixed, and a planted bug
(masks applied in the forward only) that the check must catch.

The helpers here (chain forests, random parameters and masks, the cell-level
check) are shared with test_cell_bilstm.py and test_cell_stacked_lstm.py.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gradcheck.check import RESOLUTION, TOLERANCE, assert_passes, numerical_gradient, \
    relative_errors
from gradcheck.suite import Setting
from gradcheck.trees import random_binary_tree
from npcomp.cells import make_cell
from npcomp.cells.reference import lstm as lstm_reference
from npcomp.data.formats import chain_tree
from npcomp.forest import build_forest, node_words
from npcomp.heads import dropout_mask

# chains of every interesting length: one word (no recurrence at all), two,
# and longer ones advancing together level by level
LENGTHS = (1, 2, 5, 9)
# a shorter minibatch for the finite differences (4 evaluations per entry)
CHECK_LENGTHS = (1, 2, 6)


def chain_case(lengths, d_x, rng):
    """A forest of chains in which token t of chain k is a word of its own, with
    random vectors.  Returns (forest, per-chain vectors [(T_k, d_x)], x (U, d_x),
    word_index (n,), nodes [chain k's nodes in word order])."""
    vectors = [rng.normal(size=(n, d_x)) for n in lengths]
    offsets = np.cumsum((0,) + tuple(lengths))
    trees = [chain_tree([f"w{k}" for k in range(n)]) for n in lengths]
    forest = build_forest(trees, [np.arange(n, dtype=np.int32) + offsets[k]
                                  for k, n in enumerate(lengths)])
    words, index = np.unique(forest.word, return_inverse=True)
    x = np.concatenate(vectors)[words]
    # nodes come level by level, so a chain's nodes in index order are its words in order
    nodes = [np.flatnonzero(forest.tree == k) for k in range(len(lengths))]
    return forest, vectors, x, index, nodes


def random_params(cell, rng, scale=0.7):
    """Random float64 parameters, biases included (never zero)."""
    return {name: rng.normal(0, scale, shape) for name, shape in cell.parameter_shapes()}


def recurrent_masks(cell, n_trees, rng, rate=0.5):
    """One inverted-dropout mask per recurrent connection, (trees, width), each
    with dropped and kept units (so a missing mask in the backward shows)."""
    masks = []
    for width in cell.recurrent_widths():
        while True:
            mask = dropout_mask((n_trees, width), rate, rng, np.float64)
            if 0 < np.count_nonzero(mask) < mask.size:
                break
        masks.append(mask)
    return masks


def cell_gradient_errors(cell, params, forest, x, word_index, masks, rng,
                         names=None) -> dict:
    """Max relative error per named parameter and for x of the cell's backward
    against central differences (fourth order, gradcheck's step) of

        J = sum(out * G),  G random (never all ones),

    with the recurrent masks fixed; backward gets d_out = G.  ``names``: only
    these entries (parameter names and/or "x"; default all)."""
    out, cache = cell.forward(params, forest, x, word_index, recurrent_masks=masks)
    upstream = rng.normal(size=out.shape)
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_x = cell.backward(params, forest, cache, upstream.copy(), grads)
    assert d_x.shape == x.shape

    def objective(name):
        def evaluate(flat):
            trial = dict(params)
            inputs = x
            if name == "x":
                inputs = flat.reshape(x.shape)
            else:
                trial[name] = flat.reshape(params[name].shape)
            value, _ = cell.forward(trial, forest, inputs, word_index, recurrent_masks=masks)
            return float(np.sum(value * upstream))
        return evaluate

    floor = RESOLUTION * max(1.0, abs(float(np.sum(out * upstream))))
    errors = {}
    for name, analytic in list(grads.items()) + [("x", d_x)]:
        if names is not None and name not in names:
            continue
        start = x if name == "x" else params[name]
        numeric = numerical_gradient(objective(name), start.ravel().copy(),
                                     np.arange(start.size))
        errors[name] = float(relative_errors(analytic.ravel(), numeric, floor).max())
    return errors


def without_masks_in_backward(backward):
    """A planted bug: the backward run with every recurrent mask dropped from the
    cache (and its sub-caches), as if the forward had used none."""
    def drop(cache):
        if dataclasses.is_dataclass(cache):
            for field in dataclasses.fields(cache):
                if field.name == "node_mask":
                    setattr(cache, field.name, None)
                else:
                    drop(getattr(cache, field.name))

    def buggy(params, forest, cache, d_h, grads):
        drop(cache)
        return backward(params, forest, cache, d_h, grads)
    return buggy


def test_recurrent_widths():
    assert make_cell("lstm", 4, 3).recurrent_widths() == [3]
    # the binary Tree-LSTM has no recurrence over time: no recurrent dropout
    assert make_cell("treelstm-nary", 4, 3).recurrent_widths() == []


def test_forward_with_masks_is_eq_1_with_masked_previous_state():
    rng = np.random.default_rng(11)
    d, d_x = 3, 4
    cell = make_cell("lstm", d_x, d)
    params = random_params(cell, rng)
    forest, vectors, x, index, nodes = chain_case(LENGTHS, d_x, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    h, _ = cell.forward(params, forest, x, index, recurrent_masks=masks)
    plain, _ = cell.forward(params, forest, x, index)
    for k in range(len(LENGTHS)):
        expected = lstm_reference.forward(vectors[k], params, masks=[masks[0][k]])["out"]
        np.testing.assert_allclose(h[nodes[k]], expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(plain[nodes[k]],
                                   lstm_reference.forward(vectors[k], params)["out"],
                                   rtol=0, atol=1e-12)
    # a one-word sentence has no previous state: the mask cannot matter
    np.testing.assert_array_equal(h[nodes[0]], plain[nodes[0]])
    # masks of ones are no dropout
    ones = [np.ones_like(mask) for mask in masks]
    np.testing.assert_array_equal(cell.forward(params, forest, x, index,
                                               recurrent_masks=ones)[0], plain)


def test_gradients_with_fixed_masks():
    rng = np.random.default_rng(12)
    cell = make_cell("lstm", 4, 3)
    params = random_params(cell, rng)
    forest, _, x, index, _ = chain_case(CHECK_LENGTHS, 4, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    assert_passes(cell_gradient_errors(cell, params, forest, x, index, masks, rng))


def test_detects_masks_missing_in_backward(monkeypatch):
    """Masks in the forward but not in the backward: eps_h_{t-1} is not masked,
    so the gradient of everything before the last step is wrong."""
    rng = np.random.default_rng(13)
    cell = make_cell("lstm", 4, 3)
    params = random_params(cell, rng)
    forest, _, x, index, _ = chain_case(CHECK_LENGTHS, 4, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    monkeypatch.setattr(cell, "backward", without_masks_in_backward(cell.backward))
    errors = cell_gradient_errors(cell, params, forest, x, index, masks, rng)
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
    offsets = np.cumsum([0] + [len(t.tokens) for t in trees])
    forest = build_forest(trees, [node_words(t, np.arange(len(t.tokens), dtype=np.int32)
                                             + offsets[k]) for k, t in enumerate(trees)])
    x = rng.normal(size=(offsets[-1], d_x))
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
    rng = np.random.default_rng(15)
    cell = make_cell(model, 4, 3)
    params = random_params(cell, rng)
    forest, _, x, index, _ = chain_case((2, 3), 4, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    with pytest.raises(ValueError, match="recurrent|mask"):
        cell.forward(params, forest, x, index, recurrent_masks=masks + masks[:1])


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
    h, cache = model_.cell.forward(params.prefixed("cell"), forest, params["embedding"][words],
                                   index)
    np.testing.assert_allclose(h, np.tanh(cache.c), rtol=0, atol=1e-15)
    grads = params.zeros_like()
    model_.loss_and_gradient(params, forest, grads, **options)
    d = model_.cell.hidden_dim
    for name in ("W", "b"):
        assert not np.any(grads[f"cell.{name}"][..., d:2 * d])
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
    "slstm": [("b", slice(2, 6))],              # i|fl|fr|x|o: both forget gates
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
