"""Test helpers shared by the cell tests."""
from __future__ import annotations

import numpy as np

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
