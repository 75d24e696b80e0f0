"""The bidirectional LSTM: forward against reference.bilstm, Tai eq. 1 run
both ways step by step (also with recurrent-dropout masks), gradient checks (tied and untied,
and with fixed masks), and planted routing and mask bugs."""
from __future__ import annotations

import numpy as np
import pytest

from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case, random_trees
from npcomp.cells import make_cell
from npcomp.data.formats import chain_tree
from npcomp.forest import build_forest, reverse_chains
from npcomp.cells.reference import bilstm as bilstm_reference
from test_cell_lstm import (CHECK_LENGTHS, LENGTHS, cell_gradient_errors, chain_case,
                            random_params, recurrent_masks, without_masks_in_backward)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_forward_is_eq_1_both_ways(untied):
    rng = np.random.default_rng(4)
    d, d_x = 3, 4
    lengths = (1, 2, 5, 9)
    cell = make_cell("bilstm", d_x, d, untied=untied)
    params = {name: rng.normal(0, 0.7, shape) for name, shape in cell.parameter_shapes()}
    vectors = [rng.normal(size=(n, d_x)) for n in lengths]
    offsets = np.cumsum((0,) + lengths)
    trees = [chain_tree([f"w{k}" for k in range(n)]) for n in lengths]
    forest = build_forest(trees, [np.arange(n, dtype=np.int32) + offsets[k]
                                  for k, n in enumerate(lengths)])
    words, index = np.unique(forest.word, return_inverse=True)
    out, _ = cell.forward(params, forest, np.concatenate(vectors)[words], index)
    for k, n in enumerate(lengths):
        expected = bilstm_reference.forward(vectors[k], params, untied)
        nodes = np.flatnonzero(forest.tree == k)                 # in word order (heights)
        np.testing.assert_allclose(out[nodes], expected["out"], rtol=0, atol=1e-12)
        # the root holds the sentence: h^B after reading every word, back to the first
        np.testing.assert_allclose(out[nodes[-1], d:], expected["h^B"][0], rtol=0, atol=1e-12)


def test_reverse_chains_reads_the_words_backwards():
    lengths = (3, 1, 2)
    trees = [chain_tree([f"w{k}" for k in range(n)]) for n in lengths]
    offsets = np.cumsum((0,) + lengths)
    forest = build_forest(trees, [np.arange(n, dtype=np.int32) + offsets[k]
                                  for k, n in enumerate(lengths)])
    reversed_forest, order = reverse_chains(forest)
    assert np.array_equal(reversed_forest.word, forest.word[order])
    for k, n in enumerate(lengths):
        node, read = reversed_forest.root[k], []
        while node >= 0:  # from the root (first word) down to the leaf (last word)
            read.append(int(reversed_forest.word[node]))
            node = reversed_forest.children[node, 0]
        assert read == list(range(offsets[k], offsets[k] + n))


def test_detects_root_reading_the_wrong_backward_state(monkeypatch):
    """Backward routes the root's h^B gradient to h^B at the last word (the
    per-step state) instead of the first: the check must fail."""
    rng = np.random.default_rng(8)
    setting = Setting("bilstm", trees="chain", supervision="root")
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    original = model.cell.backward

    def buggy(params_, forest_, cache, d_out, grads):
        position = np.empty_like(cache.order)
        position[cache.order] = np.arange(cache.order.shape[0])
        cache.backward_row = position
        return original(params_, forest_, cache, d_out, grads)

    assert_passes(check_gradients(model, params, forest, **options))
    monkeypatch.setattr(model.cell, "backward", buggy)
    errors = check_gradients(model, params, forest, **options)
    assert errors["cell.U"] > TOLERANCE and errors["embedding"] > TOLERANCE


def test_refuses_trees():
    with pytest.raises(ValueError, match="structure .chain."):
        setting = Setting("bilstm")
        rng = np.random.default_rng(0)
        model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
        check_gradients(model, params, forest, **options)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_forward_with_masks(untied):
    """Separate masks for the two directions (even with tied weights), indexed
    by sentence in the reversed forest too."""
    rng = np.random.default_rng(5)
    d, d_x = 3, 4
    cell = make_cell("bilstm", d_x, d, untied=untied)
    assert cell.recurrent_widths() == [d, d]
    params = random_params(cell, rng)
    forest, vectors, x, index, nodes = chain_case(LENGTHS, d_x, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    out, _ = cell.forward(params, forest, x, index, recurrent_masks=masks)
    for k in range(len(LENGTHS)):
        expected = bilstm_reference.forward(vectors[k], params, untied,
                                            masks=[masks[0][k], masks[1][k]])["out"]
        np.testing.assert_allclose(out[nodes[k]], expected, rtol=0, atol=1e-12)
    # the two directions read different masks: swapping them changes the output
    swapped, _ = cell.forward(params, forest, x, index, recurrent_masks=masks[::-1])
    assert not np.allclose(swapped, out)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_gradients_with_fixed_masks(untied):
    rng = np.random.default_rng(6)
    cell = make_cell("bilstm", 3, 2, untied=untied)
    params = random_params(cell, rng)
    forest, _, x, index, _ = chain_case(CHECK_LENGTHS, 3, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    assert_passes(cell_gradient_errors(cell, params, forest, x, index, masks, rng))


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_detects_masks_missing_in_backward(untied, monkeypatch):
    rng = np.random.default_rng(7)
    cell = make_cell("bilstm", 3, 2, untied=untied)
    params = random_params(cell, rng)
    forest, _, x, index, _ = chain_case(CHECK_LENGTHS, 3, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng)
    monkeypatch.setattr(cell, "backward", without_masks_in_backward(cell.backward))
    names = ("W", "W_backward", "x") if untied else ("W", "x")
    errors = cell_gradient_errors(cell, params, forest, x, index, masks, rng, names)
    assert all(errors[name] > TOLERANCE for name in names)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_per_direction_word_masks_feed_each_direction_its_own(untied):
    """With embedding_masks="per-direction" the model hands the cell the word
    vectors masked twice, side by side; the forward LSTM reads the first copy
    and the backward LSTM the second (eq. 1 both ways on differently masked
    words).  Unmasked (evaluation), both read the same vectors as "shared"."""
    rng = np.random.default_rng(9)
    d, d_x = 3, 4
    cell = make_cell("bilstm", d_x, d, untied=untied, embedding_masks="per-direction")
    shared = make_cell("bilstm", d_x, d, untied=untied)
    assert cell.input_copies() == 2 and shared.input_copies() == 1
    params = random_params(cell, rng)
    forest, vectors, x, index, nodes = chain_case(LENGTHS, d_x, rng)
    word_masks = rng.integers(0, 2, size=(forest.n_trees, 2, d_x)) * 2.0
    rows = np.empty((forest.n_nodes, 2 * d_x))
    for k in range(len(LENGTHS)):
        rows[nodes[k]] = np.concatenate([vectors[k] * word_masks[k, 0],
                                         vectors[k] * word_masks[k, 1]], axis=1)
    out, _ = cell.forward(params, forest, rows, np.arange(forest.n_nodes))
    for k in range(len(LENGTHS)):
        expected = bilstm_reference.forward(rows[nodes[k]], params, untied)
        np.testing.assert_allclose(out[nodes[k]], expected["out"], rtol=0, atol=1e-12)
    unmasked, _ = cell.forward(params, forest, x, index)
    np.testing.assert_array_equal(unmasked, shared.forward(params, forest, x, index)[0])


def test_per_direction_word_masks_are_drawn_per_direction():
    setting = Setting("bilstm", trees="chain", embedding_dropout=0.5,
                      extra=dict(embedding_masks="per-direction"))
    rng = np.random.default_rng(10)
    model, _, forest, options = build_case(setting, random_trees(setting, rng), rng)
    mask = options["masks"].embedding
    assert mask.shape == (forest.n_trees, 2 * setting.input_dim)
    assert not np.array_equal(mask[:, :setting.input_dim], mask[:, setting.input_dim:])


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_detects_per_direction_word_gradients_swapped(untied, monkeypatch):
    """Backward returns the backward direction's d_x in the forward's columns
    and vice versa: the word vectors' gradient (through the two masks) must
    fail the check, the weights' not."""
    rng = np.random.default_rng(11)
    setting = Setting("bilstm", trees="chain", supervision="root", untied=untied,
                      embedding_dropout=0.5, extra=dict(embedding_masks="per-direction"))
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    assert_passes(check_gradients(model, params, forest, **options))
    original = model.cell.backward
    d_x = setting.input_dim

    def buggy(*args, **kwargs):
        gradient = original(*args, **kwargs)
        return np.concatenate([gradient[:, d_x:], gradient[:, :d_x]], axis=1)

    monkeypatch.setattr(model.cell, "backward", buggy)
    errors = check_gradients(model, params, forest, **options)
    assert errors["embedding"] > TOLERANCE and errors["cell.W"] <= TOLERANCE


def lstm_deltas(terms: dict, suffix: str = "") -> np.ndarray:
    """(n, 4d) an LSTM's gate deltas from ``backward_terms`` (by symbol, each
    symbol + ``suffix``) in the columns of its W, U, b: i|o|u|f, a first
    step's missing delta_f as 0."""
    return np.nan_to_num(np.concatenate([terms[f"delta_{gate}{suffix}"]
                                         for gate in ("i", "o", "u", "f")], axis=1))


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_error_terms_add_up_to_the_gradients(untied):
    """The error terms ``backward_terms`` shows, each direction's at the word
    its row belongs to, are the ones the gradients are made of: db is the sum
    of the deltas over the nodes (both directions' when tied), each word's
    d_x is delta^F W^T + delta^B W^T, and eps_h gets d_out where no later step
    adds to it (h^F_T; h^B_1, read at word 1 and at the root).  The forward's
    terms hold the output."""
    rng = np.random.default_rng(12)
    d, d_x = 3, 4
    cell = make_cell("bilstm", d_x, d, untied=untied)
    params = random_params(cell, rng)
    forest, _, x, index, nodes = chain_case(LENGTHS, d_x, rng)
    out, cache = cell.forward(params, forest, x, index)
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_out = rng.normal(size=out.shape)
    d_words = cell.backward(params, forest, cache, d_out.copy(), grads)
    terms = {term.symbol: term.values for term in cell.backward_terms(forest, cache)}
    forward_deltas, backward_deltas = lstm_deltas(terms, "^F"), lstm_deltas(terms, "^B")
    backward = "_backward" if untied else ""
    if untied:
        np.testing.assert_allclose(grads["b"], forward_deltas.sum(0), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads["b_backward"], backward_deltas.sum(0), rtol=1e-12,
                                   atol=1e-12)
    else:
        np.testing.assert_allclose(grads["b"], (forward_deltas + backward_deltas).sum(0),
                                   rtol=1e-12, atol=1e-12)
    expected = np.zeros_like(d_words)
    np.add.at(expected, index,
              forward_deltas @ params["W"].T + backward_deltas @ params["W" + backward].T)
    np.testing.assert_allclose(d_words, expected, rtol=1e-12, atol=1e-12)
    for chain in nodes:
        first, last = chain[0], chain[-1]
        np.testing.assert_array_equal(terms["eps_h^F"][last], d_out[last, :d])
        root_share = d_out[last, d:] if len(chain) > 1 else 0
        np.testing.assert_allclose(terms["eps_h^B"][first], d_out[first, d:] + root_share,
                                   rtol=1e-12, atol=1e-12)
    forward = {term.symbol: term.values for term in cell.forward_terms(forest, cache)}
    np.testing.assert_array_equal(forward["out"], out)
    np.testing.assert_array_equal(forward["h^F"], out[:, :d])
    inner = np.setdiff1d(np.arange(forest.n_nodes), forest.root)
    np.testing.assert_array_equal(forward["h^B"][inner], out[inner, d:])
