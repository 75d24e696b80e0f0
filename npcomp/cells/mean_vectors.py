r"""Mean of word vectors (Tai et al. Table 3 "Mean vectors"; Irsoy & Cardie "VecAvg").

The bag-of-words baseline: a node's state is the mean of the word vectors in
its span, so word order and structure play no part:

    s_j = [x_j if node j reads a word] + sum_{k in C(j)} s_k      (sum over the span)
    n_j = [1 if node j reads a word]   + sum_{k in C(j)} n_k      (words in the span)
    h_j = s_j / n_j

Backward, parents first:  eps_s_j = eps_h_j / n_j + eps_s_parent(j);
dLoss/dx_j = eps_s_j.  No parameters of its own.  (The equation numbers
M1-M3 of s, n, h are docs/EQUATIONS.md's: the papers print none.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import Cell, Part, StateTerm, Term, TermParts, head_part, nudge_rows, reasons


@dataclass
class MeanVectorsCache:
    word_nodes: np.ndarray  # nodes that read a word, in node order
    word_index: np.ndarray  # row of x each of them reads
    n_words: int  # U, rows of x
    count: np.ndarray  # (n,) n_j, the words in each span
    span_sum: np.ndarray  # (n, d) s_j
    h: np.ndarray  # (n, d) h_j = s_j / n_j, the forward's output
    # what the backward leaves for ``backward_terms``: eps_h, eps_s (n, d)
    eps_h: np.ndarray | None = None
    eps_s: np.ndarray | None = None


class MeanVectors(Cell):
    name = "mean-vectors"

    def __init__(self, input_dim: int, hidden_dim: int | None = None):
        self.input_dim = input_dim
        self.output_dim = input_dim

    def parameter_shapes(self) -> list:
        return []

    def report_slices(self) -> dict:
        return {}

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        pass

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d) distinct words' vectors; word_index: row of x per word-reading
        node, in node order.  Returns h (n, d) and a cache.  ``nudge``
        (interface.Nudge) moves one node's s (added before the sums go up:
        they are sums) or its h."""
        span_sum = np.zeros((forest.n_nodes, x.shape[1]), dtype=x.dtype)
        count = np.zeros(forest.n_nodes, dtype=x.dtype)
        word_nodes = forest.word_nodes()
        span_sum[word_nodes] = x[word_index]
        count[word_nodes] = 1
        nudge_rows(nudge, "s", span_sum)
        _sum_up(forest.parent, span_sum, count)
        h = span_sum / count[:, None]
        nudge_rows(nudge, "h", h)
        return h, MeanVectorsCache(word_nodes, word_index, x.shape[0], count, span_sum, h)

    def backward(
        self, params: dict, forest: Forest, cache: MeanVectorsCache, d_h: np.ndarray, grads: dict
    ) -> np.ndarray:
        eps_s = d_h / cache.count[:, None]
        _push_down(forest.parent, eps_s)
        cache.eps_h, cache.eps_s = d_h, eps_s
        return sum_by_index(eps_s[cache.word_nodes], cache.word_index, cache.n_words)

    def forward_terms(self, forest: Forest, cache: MeanVectorsCache) -> list:
        """s (the span's sum), n (its words) and the mean vector h."""
        return [Term("s", "M1", cache.span_sum), Term("n", "M2", cache.count), Term("h", "M3", cache.h)]

    def backward_terms(self, forest: Forest, cache: MeanVectorsCache) -> list:
        """eps_h (the head's dLoss/dh) and eps_s = eps_h / n + eps_s of the
        parent: at a word-reading node, dLoss/dx of its word there."""
        return [Term("eps_h", "reverses M3", cache.eps_h), Term("eps_s", "reverses M3, M1", cache.eps_s)]

    def state_terms(self, forest: Forest, cache: MeanVectorsCache) -> list:
        """h and s at every node."""
        return [StateTerm("h", "eps_h"), StateTerm("s", "eps_s")]

    def term_parts(self, params: dict, forest: Forest, cache: MeanVectorsCache, d_out: np.ndarray) -> list:
        """eps_h: the head's alone (nothing else reads h); eps_s: eps_h / n and
        the parent's eps_s (its span sums this one's)."""
        n = forest.n_nodes
        parent = forest.parent
        child = np.flatnonzero(parent >= 0)
        inherited = np.zeros(cache.eps_s.shape)
        inherited[child] = cache.eps_s[parent[child]]
        return [
            TermParts("eps_h", [head_part(forest, d_out, equation="reverses the classifier")]),
            TermParts(
                "eps_s",
                [
                    Part("eps_h / n", "reverses M3", cache.eps_h / cache.count[:, None], reasons(n)),
                    Part(
                        "eps_s,p",
                        "reverses M1 (the parent's sum)",
                        inherited,
                        reasons(n, (parent < 0, "root: no parent")),
                    ),
                ],
            ),
        ]


@njit(cache=True, nogil=True)
def _sum_up(parent, span_sum, count):
    for j in range(parent.shape[0]):  # height order: children first
        up = parent[j]
        if up >= 0:
            span_sum[up] += span_sum[j]
            count[up] += count[j]


@njit(cache=True, nogil=True)
def _push_down(parent, eps_s):
    for j in range(parent.shape[0] - 1, -1, -1):  # parents first
        up = parent[j]
        if up >= 0:
            eps_s[j] += eps_s[up]
