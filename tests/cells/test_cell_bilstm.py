"""The bidirectional LSTM: forward against reference.bilstm, Tai eq. 1 run
both ways step by step (also with recurrent-dropout masks), gradient checks (tied and untied,
and with fixed masks), and planted routing and mask bugs."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import backward_gradients, shown_terms, without_masks_in_backward
from chain_checks import CHECK_LENGTHS, assert_chains_match, chain_cell_case, chain_forest, lstm_deltas
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case, random_trees
from npcomp.cells import make_cell
from npcomp.forest import reverse_chains
from npcomp.cells.reference import bilstm as bilstm_reference


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_forward_is_eq_1_both_ways(untied):
    case = chain_cell_case("bilstm", np.random.default_rng(4), untied=untied)
    d = case.cell.hidden_dim
    out, _ = case.forward()
    for nodes, vectors in zip(case.nodes, case.vectors):
        expected = bilstm_reference.forward(vectors, case.params, untied)
        np.testing.assert_allclose(out[nodes], expected["out"], rtol=0, atol=1e-12)
        # the root holds the sentence: h^B after reading every word, back to the first
        np.testing.assert_allclose(out[nodes[-1], d:], expected["h^B"][0], rtol=0, atol=1e-12)


def test_reverse_chains_reads_the_words_backwards():
    lengths = (3, 1, 2)
    forest, offsets = chain_forest(lengths)
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
    case = chain_cell_case("bilstm", rng, untied=untied, masked=True)
    assert case.cell.recurrent_widths() == [3, 3]
    masks = case.masks
    out, _ = case.forward(masks)
    assert_chains_match(
        out,
        case.nodes,
        lambda k: bilstm_reference.forward(case.vectors[k], case.params, untied, masks=[masks[0][k], masks[1][k]])[
            "out"
        ],
    )
    # the two directions read different masks: swapping them changes the output
    swapped, _ = case.forward(masks[::-1])
    assert not np.allclose(swapped, out)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_gradients_with_fixed_masks(untied):
    rng = np.random.default_rng(6)
    case = chain_cell_case("bilstm", rng, CHECK_LENGTHS, 3, 2, untied=untied, masked=True)
    assert_passes(case.gradient_errors(rng))


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_detects_masks_missing_in_backward(untied, monkeypatch):
    rng = np.random.default_rng(7)
    case = chain_cell_case("bilstm", rng, CHECK_LENGTHS, 3, 2, untied=untied, masked=True)
    monkeypatch.setattr(case.cell, "backward", without_masks_in_backward(case.cell.backward))
    names = ("W", "W_backward", "x") if untied else ("W", "x")
    errors = case.gradient_errors(rng, names)
    assert all(errors[name] > TOLERANCE for name in names)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_per_direction_word_masks_feed_each_direction_its_own(untied):
    """With embedding_masks="per-direction" the model hands the cell the word
    vectors masked twice, side by side; the forward LSTM reads the first copy
    and the backward LSTM the second (eq. 1 both ways on differently masked
    words).  Unmasked (evaluation), both read the same vectors as "shared"."""
    rng = np.random.default_rng(9)
    d_x = 4
    case = chain_cell_case("bilstm", rng, input_dim=d_x, untied=untied, embedding_masks="per-direction")
    shared = make_cell("bilstm", d_x, 3, untied=untied)
    assert case.cell.input_copies() == 2 and shared.input_copies() == 1
    forest, nodes = case.forest, case.nodes
    word_masks = rng.integers(0, 2, size=(forest.n_trees, 2, d_x)) * 2.0
    rows = np.empty((forest.n_nodes, 2 * d_x))
    for k, vectors in enumerate(case.vectors):
        rows[nodes[k]] = np.concatenate([vectors * word_masks[k, 0], vectors * word_masks[k, 1]], axis=1)
    out, _ = case.cell.forward(case.params, forest, rows, np.arange(forest.n_nodes))
    assert_chains_match(out, nodes, lambda k: bilstm_reference.forward(rows[nodes[k]], case.params, untied)["out"])
    unmasked, _ = case.forward()
    np.testing.assert_array_equal(unmasked, shared.forward(case.params, forest, case.x, case.index)[0])


def test_per_direction_word_masks_are_drawn_per_direction():
    setting = Setting("bilstm", trees="chain", embedding_dropout=0.5, extra=dict(embedding_masks="per-direction"))
    rng = np.random.default_rng(10)
    model, _, forest, options = build_case(setting, random_trees(setting, rng), rng)
    mask = options["masks"].embedding
    assert mask.shape == (forest.n_trees, 2 * setting.input_dim)
    assert not np.array_equal(mask[:, : setting.input_dim], mask[:, setting.input_dim :])


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_detects_per_direction_word_gradients_swapped(untied, monkeypatch):
    """Backward returns the backward direction's d_x in the forward's columns
    and vice versa: the word vectors' gradient (through the two masks) must
    fail the check, the weights' not."""
    rng = np.random.default_rng(11)
    setting = Setting(
        "bilstm",
        trees="chain",
        supervision="root",
        untied=untied,
        embedding_dropout=0.5,
        extra=dict(embedding_masks="per-direction"),
    )
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


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_error_terms_add_up_to_the_gradients(untied):
    """The error terms ``backward_terms`` shows, each direction's at the word
    its row belongs to, are the ones the gradients are made of: db is the sum
    of the deltas over the nodes (both directions' when tied), each word's
    d_x is delta^F W^T + delta^B W^T, and eps_h gets d_out where no later step
    adds to it (h^F_T; h^B_1, read at word 1 and at the root).  The forward's
    terms hold the output."""
    rng = np.random.default_rng(12)
    case = chain_cell_case("bilstm", rng, untied=untied)
    cell, params, forest, index, d = case.cell, case.params, case.forest, case.index, 3
    out, cache = case.forward()
    d_out = rng.normal(size=out.shape)
    grads, d_words = backward_gradients(cell, params, forest, cache, d_out)
    forward, terms = shown_terms(cell, forest, cache)
    forward_deltas, backward_deltas = lstm_deltas(terms, "^F"), lstm_deltas(terms, "^B")
    backward = "_backward" if untied else ""
    if untied:
        np.testing.assert_allclose(grads["b"], forward_deltas.sum(0), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads["b_backward"], backward_deltas.sum(0), rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(grads["b"], (forward_deltas + backward_deltas).sum(0), rtol=1e-12, atol=1e-12)
    expected = np.zeros_like(d_words)
    np.add.at(expected, index, forward_deltas @ params["W"].T + backward_deltas @ params["W" + backward].T)
    np.testing.assert_allclose(d_words, expected, rtol=1e-12, atol=1e-12)
    for chain in case.nodes:
        first, last = chain[0], chain[-1]
        np.testing.assert_array_equal(terms["eps_h^F"][last], d_out[last, :d])
        root_share = d_out[last, d:] if len(chain) > 1 else 0
        np.testing.assert_allclose(terms["eps_h^B"][first], d_out[first, d:] + root_share, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(forward["out"], out)
    np.testing.assert_array_equal(forward["h^F"], out[:, :d])
    inner = np.setdiff1d(np.arange(forest.n_nodes), forest.root)
    np.testing.assert_array_equal(forward["h^B"][inner], out[inner, d:])
