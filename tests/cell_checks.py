"""Test helpers shared by the cell tests."""
from __future__ import annotations

import numpy as np

from gradcheck.planted import children_swapped
from npcomp.forest import build_forest, node_words


def assert_kernel_matches_python(kernel, make_args, rtol: float = 1e-12,
                                 atol: float = 1e-12) -> None:
    """Run the compiled ``kernel`` and ``kernel.py_func`` on copies of the same
    arguments (``make_args()``) and compare every array afterwards."""
    compiled_args = make_args()
    python_args = [a.copy() if isinstance(a, np.ndarray) else a for a in compiled_args]
    kernel(*compiled_args)
    kernel.py_func(*python_args)
    for compiled, python in zip(compiled_args, python_args):
        if isinstance(compiled, np.ndarray):
            np.testing.assert_allclose(compiled, python, rtol=rtol, atol=atol)


def forward_on_tokens(cell, params: dict, trees: list, vectors: list, dtype):
    """The cell's forward over a forest of ``trees`` in which every token is a
    word of its own (tree k's token t reads ``vectors[k][t]``), so a per-tree
    reference can use the vectors directly.  Returns (forest, h)."""
    offsets = np.cumsum([0] + [len(t.tokens) for t in trees])
    words = [node_words(t, np.arange(len(t.tokens), dtype=np.int32) + offsets[k])
             for k, t in enumerate(trees)]
    forest = build_forest(trees, words)
    all_vectors = np.concatenate(vectors)
    distinct, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    cast = {name: value.astype(dtype) for name, value in params.items()}
    h, _ = cell.forward(cast, forest, all_vectors[distinct].astype(dtype), index)
    return forest, h


def binary_forward_case(model: str, activation: str, untied: bool, dtype, seed: int = 3):
    """A forward of a binary-tree cell with an activation and tied/untied leaves
    (RecNN, LSTM-RNN) over random trees with unary nodes and a right-branching
    one, d = 4 (d_x = 5 untied): (trees, vectors, params, forest, h, d)."""
    from gradcheck.trees import random_binary_tree
    from npcomp.cells import make_cell
    from npcomp.data.formats import branching_tree

    rng = np.random.default_rng(seed)
    trees = [random_binary_tree(n, rng, unary_rate=0.15) for n in (7, 1, 12, 3, 20)]
    trees += [branching_tree(["w1", "w2", "w3", "w4"], "right")]
    d, d_x = 4, (5 if untied else 4)
    cell = make_cell(model, d_x, d, activation=activation, untied=untied)
    params = {name: rng.normal(0, 0.7, shape) for name, shape in cell.parameter_shapes()}
    vectors = [rng.normal(size=(len(t.tokens), d_x)) for t in trees]
    forest, h = forward_on_tokens(cell, params, trees, vectors, dtype)
    return trees, vectors, params, forest, h, d


def with_swapped_children(backward):
    """A planted bug (gradcheck.planted.children_swapped) on a bound backward:
    every node's children in reverse order, so each child receives its
    sibling's gradient."""
    swapped = children_swapped(lambda cell, *arguments: backward(*arguments))

    def buggy(params, forest, cache, d_h, grads):
        return swapped(None, params, forest, cache, d_h, grads)
    return buggy
