r"""Mean of word vectors (Tai et al. Table 3 "Mean vectors"; Irsoy & Cardie "VecAvg").

The bag-of-words baseline: a node's state is the mean of the word vectors in
its span, so word order and structure play no part:

    s_j = [x_j if node j reads a word] + sum_{k in C(j)} s_k      (sum over the span)
    n_j = [1 if node j reads a word]   + sum_{k in C(j)} n_k      (words in the span)
    h_j = s_j / n_j

Backward, parents first:  eps_s_j = eps_h_j / n_j + eps_s_parent(j);
dLoss/dx_j = eps_s_j.  No parameters of its own.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..forest import Forest
from .inputs import sum_by_index
from .interface import Cell


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

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray,
                helper=None):
        """x: (U, d) distinct words' vectors; word_index: row of x per word-reading
        node, in node order.  Returns h (n, d) and a cache."""
        span_sum = np.zeros((forest.n_nodes, x.shape[1]), dtype=x.dtype)
        count = np.zeros(forest.n_nodes, dtype=x.dtype)
        word_nodes = forest.word_nodes()
        span_sum[word_nodes] = x[word_index]
        count[word_nodes] = 1
        _sum_up(forest.parent, span_sum, count)
        return span_sum / count[:, None], (word_nodes, word_index, x.shape[0], count)

    def backward(self, params: dict, forest: Forest, cache, d_h: np.ndarray,
                 grads: dict, helper=None) -> np.ndarray:
        word_nodes, word_index, n_words, count = cache
        eps_s = d_h / count[:, None]
        _push_down(forest.parent, eps_s)
        return sum_by_index(eps_s[word_nodes], word_index, n_words)


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
