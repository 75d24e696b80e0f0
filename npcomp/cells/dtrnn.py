r"""Dependency-tree recursive neural network, DT-RNN (Socher, Karpathy, Le,
Manning & Ng 2014), as Tai et al. 2015 train it on SICK (Table 3).

Every node i of a dependency tree reads its word x_i; its children j are
weighted by the words under them and read through a matrix chosen by their
position relative to their head (left or right, nearest first).  In the
paper's column orientation:

    h_i = f( (1/l(i)) ( W_v x_i + sum_{j in C(i)} l(j) W_pos(i,j) h_j ) + b )      (DT1)

l(i) the words under node i, itself included (1 at a leaf); f = tanh;
pos(i, j) in l_1, l_2, ..., l_K (the j-th nearest child left of the head)
and r_1, ..., r_K (right of it); children farther than K share W_l_K or
W_r_K (DT2).  The bias b is Tai et al.'s "affine" reading (DT3).  A node
without a word (a constituency tree's inner node) has W_v x_i = 0, and all
its children count as right of it in sentence order (DT2).

These equations follow the project's issue and Tai et al.'s description;
the paper's own text was not available (docs/cells/dtrnn.md).

Row orientation in the code: the children of a level's node i, scaled by
their l(j), are summed into one block per position, S_i (P = 2K blocks of d),
and one product per level composes them all, over the blocks some child of
the level uses (S is 0 in the others):

    z_i = ( x_i W_v + S_i W ) / l(i) + b,   W (P d, d): the P matrices' transposes stacked
    h_i = tanh(z_i)

Backward (eps_h = dJ/dh accumulated in ``d_h``), parents first:

    delta_i = eps_h_i (1 - h_i^2),   g_i = delta_i / l(i)               reverses f, 1/l
    eps_S_i = g_i W^T                  (P d): block p for the children at p
    eps_h(j) += l(j) eps_S_i[pos(i, j)]                                reverses (DT1)
    dW = sum_i S_i^T g_i,  dW_v = sum_i x_i^T g_i,  db = sum_i delta_i,  dx_i = g_i W_v^T

====================  ==================================  ==============
paper                 code                                shape
====================  ==================================  ==============
W_v                   ``W_v``                             (d_x, d)
W_l_1..W_l_K, W_r_1..  ``W[p * d:(p + 1) * d]`` (p = pos)  (2K d, d)
b                     ``b``                               (d,)
l(i)                  ``span[i]``                         (n,)
====================  ==================================  ==============
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import ONE, uniform_fan_in
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import (
    EVERY_LEAF,
    Cell,
    Part,
    StateTerm,
    Term,
    TermParts,
    head_part,
    nudge_rows,
    reasons,
)


@dataclass
class DTRNNCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_nodes: np.ndarray  # (w,) the nodes that read a word
    word_index: np.ndarray  # (w,) their rows of x
    span: np.ndarray  # (n,) l(i)
    slot: np.ndarray  # (n,) pos(parent, i): the matrix a node is read through (-1: root)
    S: np.ndarray  # (n, P d) the children's l(j) h_j, one block per position
    h: np.ndarray  # (n, d)
    eps_h: np.ndarray | None = None
    delta: np.ndarray | None = None
    eps_S: np.ndarray | None = None


class DTRNN(Cell):
    """Dependency-tree RNN; ``forward``/``backward`` over a forest."""

    name = "dtrnn"
    max_children = None
    words = EVERY_LEAF

    def __init__(self, input_dim: int, hidden_dim: int, positions: int = 3):
        if positions < 1:
            raise ValueError(f"dtrnn: positions must be at least 1, not {positions}")
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.positions = int(positions)
        self.n_matrices = 2 * self.positions

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return [("W_v", (self.input_dim, d)), ("W", (self.n_matrices * d, d)), ("b", (d,))]

    def report_slices(self) -> dict:
        d, K = self.hidden_dim, self.positions
        return {
            f"W.{side}{rank + 1}": ("W", (slice(p * d, (p + 1) * d), slice(None)))
            for side, first in (("l", 0), ("r", K))
            for rank in range(K)
            for p in (first + rank,)
        }

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """U(+-1/sqrt(fan-in)) (ours: the papers give none), b = 0."""
        d = self.hidden_dim
        uniform_fan_in(params["W_v"], self.input_dim, rng)
        uniform_fan_in(params["W"], d, rng)
        params["b"][...] = 0.0

    def child_slots(self, forest: Forest) -> np.ndarray:
        """(n,) pos(parent, i) of every node (-1 at a root): left children
        nearest first 0..K-1, right ones K..2K-1, the farthest sharing the
        K-th (DT2); a parent without a word has all its children right."""
        if forest.token is None:
            raise ValueError("dtrnn needs the forest's token positions (build_forest's)")
        return _position_slots(forest.children, forest.token, self.positions)

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d_x) distinct words' vectors; word_index: the row of x of
        each word-reading node (in node order).  Returns h (n, d), cache."""
        n, d = forest.n_nodes, self.hidden_dim
        word_nodes = forest.word_nodes()
        span = _span_sizes(forest.children, forest.word >= 0).astype(x.dtype)
        slot = self.child_slots(forest)
        word_terms = np.zeros((n, d), dtype=x.dtype)
        word_terms[word_nodes] = (x @ params["W_v"])[word_index]  # x_i W_v, per word once
        S = np.zeros((n, self.n_matrices * d), dtype=x.dtype)
        h = np.empty((n, d), dtype=x.dtype)
        for start, stop in forest.levels():
            _gather_positions(forest.children, slot, span, h, S, start, stop)
            used = self._used_columns(forest, slot, start, stop)  # S's non-zero blocks
            z = word_terms[start:stop] + S[start:stop, used] @ params["W"][used]
            z /= span[start:stop, None]
            z += params["b"]
            np.tanh(z, out=h[start:stop])  # (DT1)
            nudge_rows(nudge, "h", h, start, stop)
        return h, DTRNNCache(x, word_nodes, np.asarray(word_index), span, slot, S, h)

    def backward(self, params: dict, forest: Forest, cache: DTRNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dJ/dh from the head (eps_h accumulates in it).  Adds
        dW_v, dW, db; returns dJ/dx (U, d_x)."""
        n, d = forest.n_nodes, self.hidden_dim
        delta = np.empty((n, d), dtype=d_h.dtype)
        eps_S = np.zeros((n, self.n_matrices * d), dtype=d_h.dtype)
        for start, stop in forest.levels(downward=True):
            np.multiply(d_h[start:stop], ONE - cache.h[start:stop] ** 2, out=delta[start:stop])
            g = delta[start:stop] / cache.span[start:stop, None]  # reverses f, 1/l
            used = self._used_columns(forest, cache.slot, start, stop)
            eps_S[start:stop, used] = g @ params["W"][used].T  # the blocks read
            _route_positions(forest.children, cache.slot, cache.span, eps_S, d_h, start, stop)
        g = delta / cache.span[:, None]
        used = self._used_columns(forest, cache.slot, 0, n)
        grads["W"][used] += cache.S[:, used].T @ g
        grads["b"] += delta.sum(axis=0)
        per_word = sum_by_index(g[cache.word_nodes], cache.word_index, cache.x.shape[0])
        grads["W_v"] += cache.x.T @ per_word
        cache.eps_h, cache.delta, cache.eps_S = d_h, delta, eps_S
        return per_word @ params["W_v"].T

    def _used_columns(self, forest: Forest, slot: np.ndarray, start: int, stop: int) -> np.ndarray:
        """The columns of S (and rows of W) of the matrices the children of
        nodes [start, stop) are read through: S is 0 in every other block, so
        the products skip them (most of the SDT-RNN's 49 at every level)."""
        d = self.hidden_dim
        kids = forest.children[start:stop]
        blocks = np.unique(slot[kids[kids >= 0]])
        return (blocks[:, None] * d + np.arange(d)).ravel()

    # -- what npcomp explain shows ---------------------------------------------------------

    def forward_terms(self, forest: Forest, cache: DTRNNCache) -> list:
        """l(i), the children's positional sums S and h at every node."""
        return [
            Term("l", "DT1", cache.span[:, None].astype(np.float64)),
            Term("sum_j l(j) h_j by position", "DT1", cache.S, "DT2"),
            Term("h", "DT1", cache.h, "DT3"),
        ]

    def backward_terms(self, forest: Forest, cache: DTRNNCache) -> list:
        """eps_h and delta at every node; eps_S in the blocks of the matrices
        a node's children are read through (NaN in the others: nothing reads them)."""
        d = self.hidden_dim
        read = np.zeros((forest.n_nodes, self.n_matrices), dtype=bool)
        child = np.flatnonzero(forest.parent >= 0)
        read[forest.parent[child], cache.slot[child]] = True
        eps_S = np.where(np.repeat(read, d, axis=1), cache.eps_S, np.nan)
        return [
            Term("eps_h", "reverses DT1", cache.eps_h),
            Term("delta", "reverses DT1", cache.delta),
            Term("eps_S", "reverses DT1", eps_S, "DT2"),
        ]

    def state_terms(self, forest: Forest, cache: DTRNNCache) -> list:
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: DTRNNCache, d_out: np.ndarray) -> list:
        """eps_h: the head's and the parent's, l(j) times its position's block of eps_S."""
        n, d = forest.n_nodes, self.hidden_dim
        parent = forest.parent
        child = np.flatnonzero(parent >= 0)
        through_parent = np.zeros((n, d))
        blocks = cache.slot[child][:, None] * d + np.arange(d)
        through_parent[child] = cache.span[child, None] * cache.eps_S[parent[child][:, None], blocks]
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses the similarity head or classifier"),
                    Part(
                        "l(j) W_pos^T delta_p / l(p)",
                        "reverses DT1 (through the parent)",
                        through_parent,
                        reasons(n, (parent < 0, "root: no parent")),
                    ),
                ],
            )
        ]


@njit(cache=True, nogil=True)
def _span_sizes(children, reads_word):
    """(n,) l(i): the word-reading nodes in i's subtree, itself included
    (children come before parents in a forest)."""
    n = children.shape[0]
    span = np.zeros(n, dtype=np.int64)
    for j in range(n):
        span[j] = 1 if reads_word[j] else 0
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                span[j] += span[kid]
    return span


@njit(cache=True, nogil=True)
def _position_slots(children, token, K):
    """(n,) the slot of every child: 0..K-1 left of its head, nearest first,
    K..2K-1 right of it, nearest first; the K-th shared beyond (DT2); -1 at
    roots.  A head without a token has every child on its right."""
    n = children.shape[0]
    slot = np.full(n, -1, dtype=np.int64)
    for j in range(n):
        head = token[j]
        left = 0
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0 and head >= 0 and token[kid] < head:
                left += 1
        # children are in sentence order: the left ones first, the nearest last
        rank_left, rank_right = left, 0
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid < 0:
                continue
            if head >= 0 and token[kid] < head:
                slot[kid] = min(rank_left, K) - 1
                rank_left -= 1
            else:
                rank_right += 1
                slot[kid] = K + min(rank_right, K) - 1
    return slot


@njit(cache=True, nogil=True)
def _gather_positions(children, slot, span, h, S, start, stop):
    """S_i[slot(j)] += l(j) h_j over the children j of one level's nodes (rows
    of S zero on entry)."""
    d = h.shape[1]
    for i in range(start, stop):
        for k in range(children.shape[1]):
            kid = children[i, k]
            if kid < 0:
                continue
            base = slot[kid] * d
            for q in range(d):
                S[i, base + q] += span[kid] * h[kid, q]


@njit(cache=True, nogil=True)
def _route_positions(children, slot, span, eps_S, d_h, start, stop):
    """eps_h(j) += l(j) eps_S_i[slot(j)] for the children j of one level's nodes."""
    d = d_h.shape[1]
    for i in range(start, stop):
        for k in range(children.shape[1]):
            kid = children[i, k]
            if kid < 0:
                continue
            base = slot[kid] * d
            for q in range(d):
                d_h[kid, q] += span[kid] * eps_S[i, base + q]
