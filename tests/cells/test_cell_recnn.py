"""The RecNN cell (Le & Zuidema 2015, Sec. 2.2 and 4): forward values against a
plain NumPy reading of eqs. 2-3 (tied, and untied read literally), the
parameter and complexity counts, planted bugs, and what the cell rejects.
Every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import (
    assert_composes_binary_trees_with_words_at_the_leaves,
    assert_float32_forward_is_close_to_float64,
    assert_forward_is_the_reference,
    assert_matches_reference,
    assert_untied_leaves_are_classified_from_word_vectors,
    backward_gradients,
    backward_while,
    forward_on_tokens,
    left_branching_links,
    random_params,
    replaced,
    shown_terms,
    token_forest,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case
from gradcheck.trees import random_binary_tree
from npcomp.cells import cell_class, make_cell, registry
from npcomp.cells.reference import recnn as recnn_reference

MODEL = "recnn"
# the activations its registry entry offers
ACTIVATION_NAMES = registry.model(MODEL).options["activation"]


# ---------------------------------------------------------------------------
# forward against eqs. 2-3, node by node
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_forward_matches_the_printed_equations(activation, untied):
    forest = assert_forward_is_the_reference(MODEL, recnn_reference, activation, untied)
    kids = forest.children[forest.n_leaves :]  # leaves and inner nodes as children
    assert np.any((kids >= 0) & (kids < forest.n_leaves)) and np.any(kids >= forest.n_leaves)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_float32_forward_is_close_to_float64(untied):
    assert_float32_forward_is_close_to_float64(MODEL, untied)


def test_parameters_and_complexity_count_of_section_4_1():
    """Untied: W (2d, d), W_leaf (2 d_w, d), b (d,): 2d^2 + 2 d d_w + d; a
    binary tree of N words without unary nodes has N leaf-to-inner links
    (d x d_w each) and N - 2 inner-to-inner links (d x d): L&Z Sec. 4.1's
    N d d_w + (N - 2) d d."""
    d, d_w = 3, 5
    shapes = dict(make_cell(MODEL, d_w, d, untied=True).parameter_shapes())
    assert shapes == {"W": (2 * d, d), "W_leaf": (2 * d_w, d), "b": (d,)}
    assert sum(int(np.prod(s)) for s in shapes.values()) == 2 * d * d + 2 * d * d_w + d
    assert dict(make_cell(MODEL, d, d).parameter_shapes()) == {"W": (2 * d, d), "b": (d,)}
    for n_words in (2, 5, 19):
        leaf_links, inner_links, _ = left_branching_links(n_words)
        assert leaf_links * d * d_w + inner_links * d * d == (n_words * d * d_w + (n_words - 2) * d * d)


def test_untied_leaves_are_classified_from_their_word_vectors():
    assert_untied_leaves_are_classified_from_word_vectors(MODEL)


# ---------------------------------------------------------------------------
# gradients beyond the suite, and planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case(untied=True, input_dim=4, unary_rate=0.0, seed=11):
    rng = np.random.default_rng(seed)
    trees = [random_binary_tree(n, rng, unary_rate=unary_rate) for n in (6, 9, 1)]
    setting = Setting(MODEL, input_dim=input_dim, hidden_dim=3, activation="tanh", untied=untied, supervision="all")
    return build_case(setting, trees, rng)


def test_untied_unary_nodes_and_equal_dimensions_pass():
    """Untied with unary chains (a leaf as a unary node's only child), and
    untied with d_w = d (the case the planted bug below needs)."""
    model, params, forest, options = _case(unary_rate=0.4, seed=5)
    leaf_kids = forest.children[forest.n_children == 1, 0]
    assert np.any(leaf_kids < forest.n_leaves)
    assert_passes(check_gradients(model, params, forest, **options))
    model, params, forest, options = _case(input_dim=3)
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_leaf_child_read_with_the_inner_matrix(monkeypatch):
    """The backward treats a leaf child as read through the inner W (the tied
    path): its error goes back to the word through W^T and W_leaf gets no
    gradient.  d_w = d so that the shapes allow the mistake."""
    model, params, forest, options = _case(input_dim=3)
    monkeypatch.setattr(
        model.cell,
        "backward",
        backward_while(model.cell.backward, lambda params, forest: replaced(model.cell, "untied", False)),
    )
    errors = check_gradients(model, params, forest, **options)
    assert errors["cell.W_leaf"] > TOLERANCE
    assert errors["cell.W_leaf.1"] > TOLERANCE and errors["cell.W_leaf.2"] > TOLERANCE
    assert errors["embedding"] > TOLERANCE
    assert errors["cell.W"] <= TOLERANCE and errors["cell.b"] <= TOLERANCE


def test_detects_leaf_halves_swapped(monkeypatch):
    """dW_leaf with the left and right halves exchanged (a leaf's slot lost)."""
    model, params, forest, options = _case()
    backward = model.cell.backward

    def buggy(params, forest, cache, d_h, grads):
        before = grads["W_leaf"].copy()
        d_x = backward(params, forest, cache, d_h, grads)
        added = grads["W_leaf"] - before
        half = added.shape[0] // 2
        grads["W_leaf"][...] = before + np.concatenate((added[half:], added[:half]))
        return d_x

    monkeypatch.setattr(model.cell, "backward", buggy)
    errors = check_gradients(model, params, forest, **options)
    assert errors["cell.W_leaf.1"] > TOLERANCE and errors["cell.W_leaf.2"] > TOLERANCE
    assert errors["embedding"] <= TOLERANCE and errors["cell.W"] <= TOLERANCE


# ---------------------------------------------------------------------------
# what the cell accepts
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_check_forest_rejects_what_it_cannot_compose(untied):
    assert_composes_binary_trees_with_words_at_the_leaves(make_cell(MODEL, 4 if untied else 3, 3, untied=untied))


def test_the_cell_takes_every_activation_the_kernels_have():
    """The cell keeps no list of activations of its own (the registry entry
    says which the command line offers): built directly it takes the
    rectifier and the identity too, and computes the printed equations."""
    rng = np.random.default_rng(5)
    trees = [random_binary_tree(n, rng, unary_rate=0.15) for n in (7, 12, 3)]
    for activation in ("relu", "identity"):
        for untied in (False, True):
            d, d_x = 4, (5 if untied else 4)
            cell = cell_class(MODEL)(d_x, d, activation=activation, untied=untied)
            params = random_params(cell, rng)
            vectors = [rng.normal(size=(len(tree.tokens), d_x)) for tree in trees]
            forest, h = forward_on_tokens(cell, params, trees, vectors, np.float64)
            assert_matches_reference(
                h,
                forest,
                trees,
                lambda k, tree: recnn_reference.forward(tree, vectors[k], params, activation, untied)["out"],
            )


def test_options_are_validated():
    with pytest.raises(ValueError, match="tied leaves"):
        make_cell(MODEL, 4, 3, untied=False)
    with pytest.raises(ValueError, match="activation must be one of"):
        make_cell(MODEL, 3, 3, activation="relu")


# ---------------------------------------------------------------------------
# what npcomp explain shows: the cell's own terms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_error_terms_add_up_to_the_parameter_gradients(untied):
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: db = sum of delta over inner nodes, a parent's eps_x / eps_y is what
    its inner child's eps_h received on top of the head's, delta = eps_h
    (1 - p^2), and (tied) a word's dx is the sum of eps_h over its leaves.
    The forward's h is the output, and z agrees with eqs. 2-3 node by node."""
    rng = np.random.default_rng(7)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (8, 1, 13)]
    d, d_x = 3, (4 if untied else 3)
    cell = make_cell(MODEL, d_x, d, untied=untied)
    params = random_params(cell, rng, 0.6)
    vectors = [rng.normal(size=(len(t.tokens), d_x)) for t in trees]
    forest = token_forest(trees)
    assert np.any(forest.n_children == 1)  # unary nodes: eps_y NaN there
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    x = np.concatenate(vectors)[words]
    h, cache = cell.forward(params, forest, x, index)
    head = rng.normal(size=h.shape)
    if untied:
        head[: forest.n_leaves] = 0.0  # the model classifies untied leaves from x
    grads, d_x_out = backward_gradients(cell, params, forest, cache, head)
    forward, terms = shown_terms(cell, forest, cache)
    leaves, inner = forest.n_leaves, np.arange(forest.n_leaves, forest.n_nodes)
    np.testing.assert_array_equal(forward["h"], h)
    np.testing.assert_array_equal(forward["p"][inner], h[inner])
    assert np.isnan(forward["p"][:leaves]).all() and np.isnan(terms["delta"][:leaves]).all()
    np.testing.assert_allclose(grads["b"], terms["delta"][inner].sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(terms["delta"][inner], terms["eps_h"][inner] * (1 - h[inner] ** 2), rtol=1e-12)
    first_inner = leaves if untied else 0
    routed = 0
    for k, symbol in enumerate(("eps_x", "eps_y")):
        for parent in inner:
            kid = forest.children[parent, k] if k < forest.children.shape[1] else -1
            if kid >= first_inner:
                np.testing.assert_allclose(
                    terms["eps_h"][kid] - head[kid], terms[symbol][parent], rtol=1e-12, atol=1e-14
                )
                routed += 1
            else:
                assert np.isnan(terms[symbol][parent]).all()
    assert routed > 0
    if untied:
        assert np.isnan(terms["eps_h"][:leaves]).all()
    else:
        per_word = np.zeros_like(d_x_out)
        np.add.at(per_word, index, terms["eps_h"][:leaves])
        np.testing.assert_allclose(d_x_out, per_word, rtol=1e-12)
    assert_matches_reference(
        forward["z"],
        forest,
        trees,
        lambda k, tree: recnn_reference.forward(tree, vectors[k], params, "tanh", untied)["z"],
    )
