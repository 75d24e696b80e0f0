"""The 2-layer LSTMs (Tai Table 1 "2-layer" and "Bidirectional 2-layer"):
forward against Tai eq. 1 stacked, step by step (reference.lstm2,
reference.bilstm2: a 2-layer stack over the words and one over the reversed words, weights
shared or untied; with and without recurrent-dropout masks), parameter
names and Table 1's count, model-level gradient checks (tied and untied,
every-node and root supervision), cell-level checks with fixed masks, and
planted bugs the checks must catch."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import backward_gradients, random_params, shown_terms, without_masks_in_backward
from chain_checks import CHECK_LENGTHS, LENGTHS, assert_chains_match, chain_case, chain_cell_case, lstm_deltas
from gradcheck.check import TOLERANCE, assert_passes
from gradcheck.suite import Setting, run_setting
from npcomp.cells import make_cell
from npcomp.cells.reference import bilstm2 as bilstm2_reference
from npcomp.cells.reference import lstm as lstm_reference
from npcomp.cells.reference import lstm2 as lstm2_reference

D, D_X = 3, 4
BIDIRECTIONAL = [("bilstm2", False), ("bilstm2", True)]
CASES = [("lstm2", None)] + BIDIRECTIONAL
IDS = ["lstm2", "bilstm2-tied", "bilstm2-untied"]


def _make(model, untied):
    return make_cell(model, D_X, D, untied=untied)


def reference(model, untied, params, vectors, masks):
    """Out (T, output_dim) of one sentence by reference.lstm2 / reference.bilstm2
    (Tai eq. 1 stacked, step by step); ``masks``: the sentence's row of each
    recurrent mask, or None."""
    if model == "lstm2":
        return lstm2_reference.forward(vectors, params, masks=masks)["out"]
    return bilstm2_reference.forward(vectors, params, untied, masks=masks)["out"]


@pytest.mark.parametrize("masked", [False, True], ids=["no-dropout", "recurrent-dropout"])
@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_forward_is_eq_1_stacked(model, untied, masked):
    case = chain_cell_case(model, np.random.default_rng(31), input_dim=D_X, hidden_dim=D, untied=untied, masked=masked)
    masks = case.masks
    out, _ = case.forward(masks)
    assert out.shape == (case.forest.n_nodes, case.cell.output_dim)
    assert_chains_match(
        out,
        case.nodes,
        lambda k: reference(
            model, untied, case.params, case.vectors[k], None if masks is None else [mask[k] for mask in masks]
        ),
    )


def test_parameter_names_and_shapes():
    layer_names = [
        ("W", (D_X, 4 * D)),
        ("U", (D, 4 * D)),
        ("b", (4 * D,)),
        ("W_2", (D, 4 * D)),
        ("U_2", (D, 4 * D)),
        ("b_2", (4 * D,)),
    ]
    assert _make("lstm2", None).parameter_shapes() == layer_names
    # shared weights: the backward stack is the forward one, layer 2 reads d inputs
    assert _make("bilstm2", False).parameter_shapes() == layer_names
    assert _make("bilstm2", True).parameter_shapes() == layer_names + [
        (name + "_backward", shape) for name, shape in layer_names
    ]
    assert _make("lstm2", None).recurrent_widths() == [D, D]
    assert _make("bilstm2", True).recurrent_widths() == [D] * 4
    assert _make("bilstm2", False).output_dim == 2 * D


def _count(cell):
    return sum(int(np.prod(shape)) for _, shape in cell.parameter_shapes())


def test_parameter_count_is_table_1s():
    """Tai Table 1, sentiment (d_x = 300, d = 120): "2-layer" and "Bidirectional
    2-layer" both have 318,720 parameters.  Ours has one bias per gate, Tai
    two (x W + b and h U + b'), so ours is 4d = 480 fewer per LSTM layer."""
    d_x, d = 300, 120
    stacked = _count(make_cell("lstm2", d_x, d))
    assert stacked == 4 * (d_x + d + 1) * d + 4 * (d + d + 1) * d == 317_760
    assert _count(make_cell("bilstm2", d_x, d)) == stacked  # shared weights
    assert stacked + 2 * 4 * d == 4 * (d_x + d + 2) * d + 4 * (d + d + 2) * d == 318_720
    assert _count(make_cell("bilstm2", d_x, d, untied=True)) == 2 * stacked


# the finite-difference tests run small: d = 2 still mixes units through U
SMALL = dict(input_dim=3, hidden_dim=2)


def _small_case(model, untied, seed):
    """A masked ``ChainCase`` for a cell-level check, and the rng it was drawn from."""
    rng = np.random.default_rng(seed)
    return chain_cell_case(model, rng, CHECK_LENGTHS, untied=untied, masked=True, **SMALL), rng


@pytest.mark.parametrize("supervision", ["all", "root"])
@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_gradients(model, untied, supervision):
    setting = Setting(model, trees="chain", untied=untied, supervision=supervision, **SMALL)
    assert_passes(run_setting(setting, seed=3))


@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_gradients_with_fixed_masks(model, untied):
    case, rng = _small_case(model, untied, 32)
    errors = case.gradient_errors(rng)
    assert set(errors) == {name for name, _ in case.cell.parameter_shapes()} | {"x"}
    assert_passes(errors)


@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_detects_masks_missing_in_backward(model, untied, monkeypatch):
    case, rng = _small_case(model, untied, 33)
    monkeypatch.setattr(case.cell, "backward", without_masks_in_backward(case.cell.backward))
    names = ("W_2", "W", "x") + (("W_2_backward", "W_backward") if untied else ())
    errors = case.gradient_errors(rng, names)
    # layer 2's unmasked eps_h2_{t-1} already spoils its own W_2, and all below it
    assert all(errors[name] > TOLERANCE for name in names)


def _zero_layer_2_input_gradient(stack, monkeypatch, on_forest=lambda forest: True):
    """A planted bug: the 2-layer ``stack``'s layer 1 back-propagates zeros instead
    of layer 2's input gradient (only when run over a forest ``on_forest`` accepts)."""
    first = stack.layers[0]
    original = first.backward

    def buggy(params_, forest_, cache, d_h, grads):
        if on_forest(forest_):
            d_h = np.zeros_like(d_h)
        return original(params_, forest_, cache, d_h, grads)

    monkeypatch.setattr(first, "backward", buggy)


def test_detects_layer_2_input_gradient_not_passed_down(monkeypatch):
    """lstm2: layer 1 and the inputs learn nothing, and the check must say so."""
    case, rng = _small_case("lstm2", None, 34)
    _zero_layer_2_input_gradient(case.cell, monkeypatch)
    errors = case.gradient_errors(rng, names=("W", "U", "b", "x", "W_2"))
    assert min(errors["W"], errors["U"], errors["b"], errors["x"]) > TOLERANCE
    assert errors["W_2"] <= TOLERANCE  # layer 2 itself is still right


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_detects_backward_stack_layer_2_input_gradient_not_passed_down(untied, monkeypatch):
    """bilstm2: only the backward stack (run over the reversed chains) drops its
    layer 2's input gradient.  Layer 1's weights (shared, or the backward
    stack's own when untied) and the inputs must fail; layer 2 and, untied,
    the forward stack stay right."""
    case, rng = _small_case("bilstm2", untied, 34)
    _zero_layer_2_input_gradient(case.cell.direction, monkeypatch, on_forest=lambda forest_: forest_ is not case.forest)
    tag = "_backward" if untied else ""
    wrong = ("W" + tag, "U" + tag, "b" + tag, "x")
    right = ("W_2", "W_2" + tag) + (("W", "U", "b") if untied else ())
    errors = case.gradient_errors(rng, names=wrong + right)
    assert all(errors[name] > TOLERANCE for name in wrong), errors
    assert all(errors[name] <= TOLERANCE for name in right), errors


@pytest.mark.parametrize("model", ["lstm2", "bilstm2"])
def test_all_layer_outputs_join_both_layers(model):
    """``layer_outputs="all"`` (Tai's released relatedness code): each
    direction's output is [h1_t ; h2_t], the top-only output's h2 unchanged."""
    rng = np.random.default_rng(5)
    top = make_cell(model, D_X, D)
    every = make_cell(model, D_X, D, layer_outputs="all")
    assert every.output_dim == 2 * top.output_dim
    params = random_params(top, rng)
    forest, vectors, x, index, nodes = chain_case(LENGTHS, D_X, rng)
    out_top, _ = top.forward(params, forest, x, index)
    out_every, _ = every.forward(params, forest, x, index)
    halves = out_every.reshape(forest.n_nodes, -1, 2 * D)  # per direction: [h1 | h2]
    np.testing.assert_array_equal(halves[:, :, D:].reshape(forest.n_nodes, -1), out_top)
    for k in range(len(LENGTHS)):  # the forward stack's layer 1 is eq. 1 on the words
        h1 = lstm_reference.forward(vectors[k], params)["h"]
        np.testing.assert_allclose(halves[nodes[k], 0, :D], h1, rtol=0, atol=1e-12)
        stack = lstm2_reference if model == "lstm2" else bilstm2_reference
        expected = stack.forward(vectors[k], params, layer_outputs="all")["out"]
        np.testing.assert_allclose(out_every[nodes[k]], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", ["lstm2", "bilstm2"])
def test_all_layer_outputs_gradient(model):
    setting = Setting(model, trees="chain", supervision="root", extra=dict(layer_outputs="all"))
    assert_passes(run_setting(setting, seed=4))


def test_unknown_layer_outputs_is_an_error():
    with pytest.raises(ValueError, match="layer_outputs"):
        make_cell("lstm2", D_X, D, layer_outputs="middle")


@pytest.mark.parametrize("model, untied", CASES, ids=IDS)
def test_error_terms_add_up_to_the_gradients(model, untied):
    """Per layer (and direction, each row at its own word), the deltas
    ``backward_terms`` shows are the ones the gradients are made of: db and
    db_2 are their sums over the nodes, d_x is delta1 W^T, and layer 1's eps_h
    is layer 2's input gradient delta2 W_2^T plus the next step's delta1 U^T
    (the next step: the next word forwards, the previous one backwards).  The
    forward's layer-2 h is the output."""
    rng = np.random.default_rng(34)
    case = chain_cell_case(model, rng, input_dim=D_X, hidden_dim=D, untied=untied)
    cell, params, forest, index = case.cell, case.params, case.forest, case.index
    out, cache = case.forward()
    grads, d_words = backward_gradients(cell, params, forest, cache, rng.normal(size=out.shape))
    forward, terms = shown_terms(cell, forest, cache)
    if model == "lstm2":
        directions = [("", "", forest.parent)]
    else:
        directions = [("^F", "", forest.parent), ("^B", "_backward" if untied else "", forest.children[:, 0])]
    expected = {name: np.zeros_like(value) for name, value in grads.items()}
    expected_words = np.zeros_like(d_words)
    for suffix, names, following in directions:
        first, second = lstm_deltas(terms, "1" + suffix), lstm_deltas(terms, "2" + suffix)
        expected["b" + names] += first.sum(0)
        expected["b_2" + names] += second.sum(0)
        np.add.at(expected_words, index, first @ params["W" + names].T)
        later = following >= 0
        recurrent = np.zeros((forest.n_nodes, D))
        recurrent[later] = first[following[later]] @ params["U" + names].T
        np.testing.assert_allclose(
            terms["eps_h1" + suffix], second @ params["W_2" + names].T + recurrent, rtol=1e-12, atol=1e-12
        )
    for name in grads:
        if name.startswith("b"):
            np.testing.assert_allclose(grads[name], expected[name], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d_words, expected_words, rtol=1e-12, atol=1e-12)
    if model == "lstm2":
        np.testing.assert_array_equal(forward["h2"], out)
    else:
        np.testing.assert_array_equal(forward["out"], out)
        np.testing.assert_array_equal(forward["h2^F"], out[:, :D])
