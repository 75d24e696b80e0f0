"""Word inputs shared by the cells: distinct words once, nodes by index.

A minibatch reads each distinct word once: the cells receive ``x`` (U, d_x),
the vectors of the U distinct words, and ``word_index`` (number of
word-reading nodes,), the row of ``x`` each such node reads (nodes in node
order).  Products with the input weights then cost U rows instead of one per
token, and the backward returns dLoss/dx per distinct word: exactly the
embedding rows to update.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def sum_by_index(values: np.ndarray, index: np.ndarray, n_rows: int) -> np.ndarray:
    """out[r] = sum of values[k] over the k with index[k] == r; (n_rows, columns)."""
    out = np.zeros((n_rows, values.shape[1]), dtype=values.dtype)
    _sum_rows(values, index, out)
    return out


@njit(cache=True, nogil=True)
def _sum_rows(values, index, out):
    for k in range(index.shape[0]):
        row = index[k]
        for q in range(values.shape[1]):
            out[row, q] += values[k, q]
