"""The mean-vectors baseline: forward values against reference.mean_vectors
(the mean of the word vectors under each node) on dependency trees, binary
trees with unary nodes and a single word.  Its gradient is checked by
tests/test_gradients.py."""
from __future__ import annotations

import numpy as np

from cell_checks import forward_on_tokens
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import make_cell
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
    for k, tree in enumerate(trees):
        expected = mean_vectors_reference.forward(tree, vectors[k])
        nodes = np.flatnonzero(forest.tree == k)
        np.testing.assert_allclose(h[nodes], expected["out"][forest.origin[nodes]], rtol=1e-12,
                                   atol=1e-12)
        # the root holds the sentence's mean
        np.testing.assert_allclose(expected["h"][tree.root], vectors[k].mean(axis=0),
                                   rtol=1e-12, atol=1e-12)
        assert expected["n"][tree.root] == len(tree.tokens)
