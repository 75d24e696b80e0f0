"""The cases the recursive cells' test files share (the MV-RNN, the RAE,
the DRNN, the DT-RNN and the SDT-RNN): a cell's forward on mixed binary
trees, its forward on a forest's own words, the planted-bug case, the
300-level trees, a kernel replaced for a backward, and the numba kernels
against their Python versions."""

from __future__ import annotations

import numpy as np

from cell_checks import (
    assert_gradients_pass,
    backward_while,
    deep_branching_tree,
    forward_on_tokens,
    random_params,
    replaced,
)
from gradcheck.suite import Setting, build_case
from gradcheck.trees import random_binary_tree, random_dependency_trees
from npcomp.data.readers.formats import branching_tree


def binary_forward_case(cell, dtype, seed: int = 3, scale: float = 0.7, word_vectors=None) -> tuple:
    """(cell, trees, vectors, params, forest, h): ``cell``'s forward in
    ``dtype`` on random binary trees of 7, 1, 12, 3 and 20 words (unary
    nodes at rate 0.2) and a right-branching chain of four, its parameters
    ``random_params(scale)``; ``word_vectors(rng, n)``: a tree's (n, width)
    word vectors (default standard normal, the cell's input width), drawn
    tree by tree after the parameters."""
    rng = np.random.default_rng(seed)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1, 12, 3, 20)]
    trees += [branching_tree(["w1", "w2", "w3", "w4"], "right")]
    return forward_case(cell, trees, rng, dtype, scale, word_vectors)


def forward_case(cell, trees: list, rng, dtype, scale: float = 0.7, word_vectors=None) -> tuple:
    """(cell, trees, vectors, params, forest, h): ``cell``'s forward in
    ``dtype`` on ``trees``, its parameters ``random_params(scale)`` and then
    each tree's word vectors drawn from ``rng`` (``binary_forward_case``)."""
    params = random_params(cell, rng, scale=scale)
    draw = word_vectors or (lambda rng, n: rng.normal(size=(n, cell.input_dim)))
    vectors = [draw(rng, len(tree.tokens)) for tree in trees]
    forest, h = forward_on_tokens(cell, params, trees, vectors, dtype)
    return cell, trees, vectors, params, forest, h


def forest_words(forest, vectors: list) -> tuple:
    """(x, index): the distinct words' vectors of ``forest`` (``vectors``:
    each tree's, in the forest's order) and each word node's row of x."""
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    return np.concatenate(vectors)[words], index


def cell_forward(cell, params, forest, vectors: list) -> tuple:
    """(h, cache): ``cell.forward`` on the forest's words."""
    return cell.forward(params, forest, *forest_words(forest, vectors))


def planted_case(setting: Setting) -> tuple:
    """build_case's (model, params, forest, options) of ``setting`` that the
    planted bugs run on (seed 11): random binary trees of 6, 9 and 1 words
    with unary nodes, or the suite's random dependency trees."""
    rng = np.random.default_rng(11)
    if setting.trees == "dependency":
        trees = random_dependency_trees(rng, n_classes=5, vocab_size=10)
    else:
        trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (6, 9, 1)]
    return build_case(setting, trees, rng)


def assert_deep_branching_passes(setting: Setting, direction: str, **check) -> None:
    """A 300-leaf ``direction``-branching tree (300 levels, no recursion):
    the gradients pass the check down to the deepest leaf."""
    rng = np.random.default_rng(7)
    tree = deep_branching_tree(direction, rng)
    assert assert_gradients_pass(setting, [tree], rng, **check).n_levels == 300


def with_kernel(module, name: str, kernel):
    """A wrapper for ``errors_with_backward``: the backward run with
    ``module.name`` replaced by ``kernel`` (a planted bug)."""
    return lambda backward: backward_while(backward, lambda params, forest: replaced(module, name, kernel))


def assert_kernels_match_python(monkeypatch, module, kernels: tuple, run) -> None:
    """``run()``'s arrays with the numba kernels of ``module`` named in
    ``kernels``, and again with their Python versions: the same to 1e-13."""
    compiled = run()
    for kernel in kernels:
        monkeypatch.setattr(module, kernel, getattr(module, kernel).py_func)
    for jitted, python in zip(compiled, run(), strict=True):
        np.testing.assert_allclose(jitted, python, rtol=1e-13, atol=1e-15)
