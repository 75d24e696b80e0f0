"""What the recurrent sequence cells share: chains in time order, the
recurrent-dropout mask of each sentence (Gal 2015: one mask per sequence),
the previous step's state, and per-word weight gradients.

A sentence is a chain (node t reads word t, its one child is step t - 1);
a forest of chains advances one time step per level.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from npcomp.forest import Forest
from .activations import derivative_from_output


def chain_layout(forest: Forest) -> tuple:
    """(order, chain_ptr): the nodes of sentence k in time order are
    ``order[chain_ptr[k]:chain_ptr[k+1]]`` (its first word first, its root last).

    A forest of chains numbers its nodes by height, i.e. by time step, across
    sentences; attention runs along one sentence, so its kernels walk this
    sentence-major order instead.
    """
    order = np.lexsort((forest.height, forest.tree)).astype(np.int64)
    chain_ptr = np.zeros(forest.n_trees + 1, dtype=np.int64)
    np.cumsum(np.bincount(forest.tree, minlength=forest.n_trees), out=chain_ptr[1:])
    return order, chain_ptr


def recurrent_mask(name: str, forest: Forest, recurrent_masks, width: int, dtype) -> np.ndarray:
    """(trees, width) the recurrent-dropout mask of each sentence: the one
    entry of ``recurrent_masks``, or ones when it is None (no dropout)."""
    if recurrent_masks is None:
        return np.ones((forest.n_trees, width), dtype=dtype)
    if len(recurrent_masks) != 1:
        raise ValueError(f"{name} has one recurrent connection, got {len(recurrent_masks)} masks")
    mask = np.asarray(recurrent_masks[0])
    if mask.shape != (forest.n_trees, width):
        raise ValueError(f"{name}: a recurrent mask must be (trees, d) = {(forest.n_trees, width)}, not {mask.shape}")
    return np.ascontiguousarray(mask, dtype=dtype)


@njit(cache=True, nogil=True)
def gather_previous(previous_node, tree, mask, h, previous, start, stop):
    """previous[t] = h_{t-1} * m_s (s the sentence of t; 0 at a first word)."""
    d = h.shape[1]
    for t in range(start, stop):
        before = previous_node[t]
        sentence = tree[t]
        for q in range(d):
            previous[t, q] = h[before, q] * mask[sentence, q] if before >= 0 else 0.0


@njit(cache=True, nogil=True)
def activation_deltas(code, h, d_h, delta, start, stop):
    """delta_t = eps_h_t * f'(h_t), f' from the cached output."""
    for t in range(start, stop):
        for q in range(h.shape[1]):
            delta[t, q] = d_h[t, q] * derivative_from_output(code, h[t, q])


@njit(cache=True, nogil=True)
def outer_products_by_word(previous, delta, word_index, out, start, stop):
    """out[w] += previous[t]^T delta[t] over the nodes t in start..stop reading
    word w (row word_index[t]): dG_w, a (d, d) block per distinct word."""
    d = delta.shape[1]
    for t in range(start, stop):
        row = word_index[t]
        for k in range(previous.shape[1]):
            state = previous[t, k]
            for i in range(d):
                out[row, k, i] += state * delta[t, i]
