"""The mean-vectors baseline: forward values against reference.mean_vectors
(the mean of the word vectors under each node) on dependency trees, binary
trees with unary nodes and a single word.  Its gradient is checked by
tests/cells/test_gradients.py."""

from __future__ import annotations

import numpy as np

from cell_checks import assert_matches_reference, forward_on_tokens, shown_terms
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import make_cell
from npcomp.forest import build_forest, node_words
from npcomp.cells.reference import mean_vectors as mean_vectors_reference


def test_forward_matches_the_span_means():
    rng = np.random.default_rng(23)
    d = 4
    trees = [random_dependency_tree(n, rng, max_children=4) for n in (1, 9)]
    trees += [random_binary_tree(n, rng, unary_rate=0.3) for n in (1, 5, 12)]
    vectors = [rng.normal(size=(len(t.tokens), d)) for t in trees]
    cell = make_cell("mean-vectors", d, d)
    forest, h = forward_on_tokens(cell, {}, trees, vectors, np.float64)
    assert np.any(forest.n_children == 1) and np.any(forest.n_children > 2)
    assert_matches_reference(h, forest, trees, lambda k, tree: mean_vectors_reference.forward(tree, vectors[k])["out"])
    for k, tree in enumerate(trees):
        expected = mean_vectors_reference.forward(tree, vectors[k])
        # the root holds the sentence's mean
        np.testing.assert_allclose(expected["h"][tree.root], vectors[k].mean(axis=0), rtol=1e-12, atol=1e-12)
        assert expected["n"][tree.root] == len(tree.tokens)


def test_error_terms_add_up_to_the_word_gradients():
    """The terms ``backward_terms`` shows are the ones the gradient is made
    of: a word's dx is the sum of eps_s over the nodes reading it, eps_s =
    eps_h / n + the parent's eps_s; forward: h = s / n is the output, n the
    span's words, as the reference counts them."""
    rng = np.random.default_rng(24)
    d = 3
    trees = [random_dependency_tree(n, rng, max_children=3) for n in (1, 8)]
    trees += [random_binary_tree(9, rng, unary_rate=0.3)]
    vocabulary = rng.integers(0, 6, size=sum(len(t.tokens) for t in trees)).astype(np.int32)
    offsets = np.cumsum([0] + [len(t.tokens) for t in trees])
    forest = build_forest(trees, [node_words(t, vocabulary[offsets[k] : offsets[k + 1]]) for k, t in enumerate(trees)])
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    x = rng.normal(size=(len(words), d))
    assert len(words) < len(index)  # words read at several nodes
    cell = make_cell("mean-vectors", d, d)
    h, cache = cell.forward({}, forest, x, index)
    head = rng.normal(size=h.shape)
    d_x = cell.backward({}, forest, cache, head.copy(), {})
    forward, terms = shown_terms(cell, forest, cache)
    np.testing.assert_array_equal(forward["h"], h)
    np.testing.assert_allclose(forward["s"] / forward["n"][:, None], h, rtol=1e-12)
    for k, tree in enumerate(trees):
        nodes = np.flatnonzero(forest.tree == k)
        expected = mean_vectors_reference.forward(tree, np.zeros((len(tree.tokens), d)))["n"]
        np.testing.assert_array_equal(forward["n"][nodes], expected[forest.origin[nodes]])
    eps_s = terms["eps_s"]
    np.testing.assert_array_equal(terms["eps_h"], head)
    parent = forest.parent
    above = np.where(parent[:, None] >= 0, eps_s[np.maximum(parent, 0)], 0.0)
    np.testing.assert_allclose(eps_s, head / forward["n"][:, None] + above, rtol=1e-12)
    per_word = np.zeros_like(d_x)
    np.add.at(per_word, index, eps_s[forest.word_nodes()])
    np.testing.assert_allclose(d_x, per_word, rtol=1e-12)
