"""Level batching shared by the tree cells.

A forest's nodes come level by level (``forest.level_ptr``); every cell
computes a level with one matrix product over its rows and a few kernels.
What the cells share lives here: the child table in a fixed number of
columns, row padding for small products, weight-gradient products and the
vectorised sigmoid.  A cell computes its levels on the calling thread: a
run's threads each take shards of the minibatch (``training/shards.py``).
"""

from __future__ import annotations

import numpy as np

from npcomp.forest import Forest


def children_columns(forest: Forest, arity: int) -> np.ndarray:
    """(n, arity) the forest's child table with exactly ``arity`` columns, -1
    where absent (a unary node's only child is its first, left one; a forest of
    single words has a one-column table)."""
    kids = forest.children
    if kids.shape[1] == arity:
        return kids
    out = np.full((kids.shape[0], arity), -1, dtype=np.int32)
    out[:, : min(arity, kids.shape[1])] = kids[:, :arity]
    return out


def binary_children(forest: Forest) -> np.ndarray:
    """(n, 2) left and right child of every node, -1 where absent."""
    return children_columns(forest, 2)


# OpenBLAS multiplies a few rows much faster when their number is a multiple
# of 4 (7 rows can take longer than 8): a level's product also runs over the
# rows that follow it (results unused, or overwritten by their own level
# later), so work arrays carry ROW_PAD spare rows
ROW_PAD = 3


def padded_stop(start: int, stop: int) -> int:
    """End of the rows a level's product runs over: a multiple of 4 rows."""
    rows = stop - start
    return stop if rows == 1 else start + -(-rows // 4) * 4


def add_product(target: np.ndarray, left: np.ndarray, right: np.ndarray) -> None:
    """target += left^T right (a weight gradient summed over nodes)."""
    target += left.T @ right


def sigmoid(z: np.ndarray) -> None:
    """In place: sigma(z) = 1 / (1 + e^-z) with NumPy's vectorised exp (SIMD;
    scalar libm calls in numba loops cost several times more).  Overflow of
    e^-z for very negative z gives exactly 0, as it should."""
    np.negative(z, out=z)
    np.exp(z, out=z)
    z += 1
    np.reciprocal(z, out=z)
