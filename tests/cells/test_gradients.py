"""Gradient checks are the specification of the backward passes.

Every model, supervision mode and option, on hypothesis-generated trees
(1..40 leaves, random shapes, unary chains, single words) and on deep
300-leaf left- and right-branching trees; and planted bugs that the checker
must catch.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings as hypothesis_settings, strategies as st

from cell_checks import (
    assert_gradients_pass,
    assert_random_trees_pass,
    backward_while,
    deep_branching_tree,
    errors_with_backward,
    given_random_trees,
    replaced,
    with_swapped_children,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import CHECKED_MODELS, Setting, build_case, run_setting, settings
from gradcheck.trees import random_binary_tree
from npcomp.cells.kernels.activations import activation_code
from npcomp.data.readers.formats import chain_tree

ALL_SETTINGS = [(model, setting) for model in CHECKED_MODELS for setting in settings(model)]


@pytest.mark.parametrize("model,setting", ALL_SETTINGS, ids=[f"{m}-{s.describe()}" for m, s in ALL_SETTINGS])
def test_suite_setting(model, setting):
    assert_passes(run_setting(setting, seed=3))


@pytest.mark.parametrize(
    "setting",
    [
        Setting("treelstm-nary"),
        Setting("treelstm-nary", supervision="root"),
        Setting("treelstm-nary", supervision="root+leaves", dropout=0.5, l2=0.01),
        Setting("recnn", input_dim=3, hidden_dim=3),
        # softsign's second derivative jumps at 0, so a random pre-activation within
        # 2h of 0 spoils the finite difference itself: softsign is checked at the
        # suite's fixed points, random trees use the smooth non-linearities
        Setting("recnn", input_dim=4, hidden_dim=3, untied=True, activation="sigmoid", supervision="root"),
        Setting("mean-vectors", input_dim=4, hidden_dim=4, supervision="root+leaves"),
    ],
    ids=lambda s: f"{s.model}-{s.describe()}",
)
@given_random_trees(max_trees=3, examples=12)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes)


@pytest.mark.parametrize(
    "model, trees, head",
    [
        ("treelstm-childsum", "dependency", "similarity"),
        ("treelstm-nary", "binary", "similarity"),
        ("bilstm", "chain", "similarity"),
        ("treelstm-childsum", "dependency", "pair_softmax"),
    ],
)
@hypothesis_settings(max_examples=8)
@given(seed=st.integers(0, 2**31 - 1), sizes=st.lists(st.integers(1, 15), min_size=2, max_size=6))
def test_random_sentence_pairs(model, trees, head, seed, sizes):
    """The similarity head and KL (the pair classifier and its cross-entropy)
    through both encoders of 1..3 pairs of sentences of 1..15 words: random
    shapes, single words, unequal lengths (the pairs are sentence k with
    sentence half + k)."""
    from gradcheck.trees import random_dependency_tree

    rng = np.random.default_rng(seed)
    if trees == "dependency":
        sentences = [random_dependency_tree(n, rng, vocab_size=10) for n in sizes]
    elif trees == "chain":
        sentences = [chain_tree([f"w{k}" for k in rng.integers(0, 10, n)]) for n in sizes]
    else:
        sentences = [random_binary_tree(n, rng) for n in sizes]
    half = len(sentences) // 2
    # identical sentences put |h_L - h_R| at its kink in every coordinate
    assume(all(sentences[k].tokens != sentences[half + k].tokens for k in range(half)))
    setting = Setting(model, head=head, trees=trees, supervision="root")
    model_, params, batch, options = build_case(setting, sentences[:half], rng, partners=sentences[half : 2 * half])
    assert batch.n_pairs == half
    assert_passes(check_gradients(model_, params, batch, **options))


@pytest.mark.parametrize("model", ["treelstm-nary", "recnn"])
@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(model, direction):
    """300-leaf trees: 300 levels, no recursion; gradients reach the deepest leaf."""
    rng = np.random.default_rng(7)
    tree = deep_branching_tree(direction, rng)
    setting = Setting(model, input_dim=3, hidden_dim=3, supervision="root+leaves")
    assert assert_gradients_pass(setting, [tree], rng).n_levels == 300


def test_long_chain():
    """A 200-word sequence for the chain LSTM: 200 levels, gradients reach the first word."""
    rng = np.random.default_rng(5)
    words = [f"w{k}" for k in rng.integers(0, 10, size=200)]
    labels = np.full(200, -1)
    labels[[0, 99, 199]] = rng.integers(0, 5, size=3)
    tree = chain_tree(words, labels)
    assert assert_gradients_pass(Setting("lstm", trees="chain"), [tree], rng).n_levels == 200


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case(model="treelstm-nary", **options):
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng) for n in (6, 9, 1)]
    return build_case(Setting(model, **options), trees, rng)


def _errors_with(monkeypatch, cell_method_wrapper, model="treelstm-nary", **options):
    return errors_with_backward(monkeypatch, _case(model, **options), cell_method_wrapper)


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_forget_gate_gradient_off_by_a_tenth_of_a_percent(monkeypatch):
    def wrap(backward):
        def buggy(params, forest, cache, d_h, grads):
            before = grads["U"].copy()
            d_x = backward(params, forest, cache, d_h, grads)
            d = params["U"].shape[0] // 2
            grads["U"][:, 3 * d :] += 0.001 * (grads["U"][:, 3 * d :] - before[:, 3 * d :])
            return d_x

        return buggy

    errors = _errors_with(monkeypatch, wrap)
    assert errors["cell.U.f"] > TOLERANCE
    assert errors["cell.U.i"] <= TOLERANCE


def test_detects_dropped_forget_path(monkeypatch):
    """Backward with the forget gates zeroed: no memory flows to the children."""

    def wrap(backward):
        def buggy(params, forest, cache, d_h, grads):
            d = params["U"].shape[0] // 2
            cache.gates[:, 3 * d :] = 0.0
            return backward(params, forest, cache, d_h, grads)

        return buggy

    errors = _errors_with(monkeypatch, wrap)
    assert errors["cell.U"] > TOLERANCE


def test_detects_swapped_children(monkeypatch):
    """Backward routes each node's gradient to the wrong child."""
    errors = _errors_with(monkeypatch, with_swapped_children)
    assert errors["cell.U"] > TOLERANCE and errors["embedding"] > TOLERANCE


def test_detects_wrong_activation_derivative(monkeypatch):
    """recnn backward using tanh' for a sigmoid network."""

    def wrap(backward):
        return backward_while(
            backward, lambda params, forest: replaced(backward.__self__, "code", activation_code("tanh"))
        )

    errors = _errors_with(monkeypatch, wrap, model="recnn", input_dim=3, hidden_dim=3, activation="sigmoid")
    assert errors["cell.W"] > TOLERANCE


def test_detects_missing_embedding_gradient(monkeypatch):
    def wrap(backward):
        def buggy(params, forest, cache, d_h, grads):
            return 0.0 * backward(params, forest, cache, d_h, grads)

        return buggy

    errors = _errors_with(monkeypatch, wrap)
    assert errors["embedding"] > TOLERANCE
    assert errors["cell.U"] <= TOLERANCE


def test_detects_l2_applied_twice():
    model, params, forest, options = _case(l2=0.1)
    original = model.loss_and_gradient

    def buggy(params_, forest_, grads, **kwargs):
        loss, rows = original(params_, forest_, grads, **kwargs)
        grads.flat[: model.dense_size] += kwargs["l2"] * params_.flat[: model.dense_size]
        return loss, rows

    model.loss_and_gradient = buggy
    from gradcheck.check import numerical_gradient, objective

    # the numerical side must see the true objective, the analytic side the bug
    grads = params.zeros_like()
    buggy(params, forest, grads, **options)
    model.loss_and_gradient = original
    numeric = numerical_gradient(objective(model, forest, **options), params.flat, np.arange(model.dense_size))
    from gradcheck.check import relative_errors

    assert relative_errors(grads.flat[: model.dense_size], numeric).max() > TOLERANCE
