r"""Recursive neural network (Goller & Kuechler 1996; Socher et al. 2011),
as written in Le & Zuidema 2015, Sec. 2.2, eqs. 2-3.

Row-vector orientation (``h @ W1`` is the paper's W1 h):

    p = g( x W_1 + y W_2 + b )                                   (2), (3)

for a node with left child x and right child y (a missing child of a unary
node contributes 0); g in {tanh, sigmoid, softsign}.  Leaves:

* tied (default): a leaf's state is its word vector, h = x (so d_x = d);
* untied: leaves have a weight set of their own, h = g( x W_leaf + b_leaf )
  (W_leaf is d_x x d), and W_1, W_2 act on d-dimensional states only.
  This is our reading of "one weight matrix set for leaf nodes and another
  set for inner nodes" (Le & Zuidema Sec. 4) that keeps one classifier for
  all nodes; see docs/EQUATIONS.md.

Backward (eps_h = dLoss/dh, delta = dLoss/d pre-activation), parents first:

    delta_j   = eps_h_j * g'(p_j)          g' from the output: 1-p^2, p(1-p), (1-|p|)^2
    eps_h(x) += delta_j W_1^T,  eps_h(y) += delta_j W_2^T
    dW = sum_j [x_j ; y_j]^T delta_j,  db = sum_j delta_j
    leaves, untied: delta = eps_h g'(h); dW_leaf = x^T delta; dx = delta W_leaf^T
    leaves, tied:   dx = eps_h

=========  ==========  =================
paper      code        shape
=========  ==========  =================
W_1; W_2   ``W``       (2d, d): rows W_1 then W_2
b          ``b``       (d,)
(untied)   ``W_leaf``  (d_x, d)
(untied)   ``b_leaf``  (d,)
=========  ==========  =================
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from .activations import activate, activation_code, derivative_from_output, uniform_fan_in
from .inputs import sum_by_index


@dataclass
class RecNNCache:
    x: np.ndarray    # (L, d_x) leaf inputs
    word_index: np.ndarray  # (L,) distinct-word row of each leaf
    hc: np.ndarray   # (n, 2d) children's states per node
    h: np.ndarray    # (n, d) node states


class RecNN:
    name = "recnn"
    options = ("activation", "untied")

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh",
                 untied: bool = False):
        if not untied and input_dim != hidden_dim:
            raise ValueError(f"recnn with tied leaves needs --dim equal to the embedding "
                             f"dimension ({hidden_dim} != {input_dim}); use untied leaves")
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.activation = activation
        self.code = activation_code(activation)
        self.untied = untied

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        shapes = [("W", (2 * d, d)), ("b", (d,))]
        if self.untied:
            shapes += [("W_leaf", (self.input_dim, d)), ("b_leaf", (d,))]
        return shapes

    def report_slices(self) -> dict:
        d = self.hidden_dim
        return {"W.1": ("W", (slice(0, d), slice(None))), "W.2": ("W", (slice(d, 2 * d), slice(None)))}

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        uniform_fan_in(params["W"], 2 * self.hidden_dim, rng)
        uniform_fan_in(params["b"], 2 * self.hidden_dim, rng)
        if self.untied:
            uniform_fan_in(params["W_leaf"], self.input_dim, rng)
            uniform_fan_in(params["b_leaf"], self.input_dim, rng)

    def check_forest(self, forest: Forest) -> None:
        if forest.n_children.max() > 2:
            raise ValueError("recnn composes binary trees: a node has more than 2 children")
        if np.any((forest.n_children == 0) != (forest.word >= 0)):
            raise ValueError("recnn reads words at the leaves only")

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray,
                helper=None):
        """x: (U, d_x) distinct words' vectors; word_index: (L,) row of x per leaf."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        x = x[word_index]
        h = np.empty((n, d), dtype=x.dtype)
        if self.untied:
            h[:leaves] = x @ params["W_leaf"] + params["b_leaf"]
            _activate_rows(self.code, h[:leaves])
        else:
            h[:leaves] = x
        hc = np.zeros((n, 2 * d), dtype=x.dtype)
        z = np.empty((n, d), dtype=x.dtype)
        _inner_forward(self.code, forest.level_ptr, _binary_children(forest), params["W"],
                       params["b"], hc, z, h)
        return h, RecNNCache(x, word_index, hc, h)

    def backward(self, params: dict, forest: Forest, cache: RecNNCache, d_h: np.ndarray,
                 grads: dict, helper=None) -> np.ndarray:
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        delta = np.zeros((n, d), dtype=d_h.dtype)
        d_hc = np.empty((n, 2 * d), dtype=d_h.dtype)
        _inner_backward(self.code, forest.level_ptr, _binary_children(forest),
                        np.ascontiguousarray(params["W"].T), cache.h, d_h, delta, d_hc)
        grads["W"] += cache.hc[leaves:].T @ delta[leaves:]
        grads["b"] += delta[leaves:].sum(axis=0)
        n_words = int(cache.word_index.max()) + 1
        if not self.untied:
            return sum_by_index(d_h[:leaves], cache.word_index, n_words)
        delta_leaf = d_h[:leaves] * _derivative_rows(self.code, cache.h[:leaves])
        grads["W_leaf"] += cache.x.T @ delta_leaf
        grads["b_leaf"] += delta_leaf.sum(axis=0)
        return sum_by_index(delta_leaf @ params["W_leaf"].T, cache.word_index, n_words)


def _binary_children(forest: Forest) -> np.ndarray:
    kids = np.full((forest.n_nodes, 2), -1, dtype=np.int32)
    kids[:, :forest.children.shape[1]] = forest.children[:, :2]
    return kids


@njit(cache=True, nogil=True)
def _activate_rows(code, z):
    for j in range(z.shape[0]):
        for q in range(z.shape[1]):
            z[j, q] = activate(code, z[j, q])


@njit(cache=True, nogil=True)
def _derivative_rows(code, g):
    out = np.empty_like(g)
    for j in range(g.shape[0]):
        for q in range(g.shape[1]):
            out[j, q] = derivative_from_output(code, g[j, q])
    return out


@njit(cache=True, nogil=True)
def _inner_forward(code, level_ptr, children, W, b, hc, z, h):
    """Eqs. 2-3 level by level."""
    d = h.shape[1]
    for level in range(1, level_ptr.shape[0] - 1):
        start, stop = level_ptr[level], level_ptr[level + 1]
        for j in range(start, stop):
            for k in range(2):
                kid = children[j, k]
                if kid >= 0:
                    hc[j, k * d:(k + 1) * d] = h[kid]
        np.dot(hc[start:stop], W, z[start:stop])
        for j in range(start, stop):
            for q in range(d):
                h[j, q] = activate(code, z[j, q] + b[q])


@njit(cache=True, nogil=True)
def _inner_backward(code, level_ptr, children, w_transposed, h, d_h, delta, d_hc):
    d = h.shape[1]
    for level in range(level_ptr.shape[0] - 2, 0, -1):
        start, stop = level_ptr[level], level_ptr[level + 1]
        for j in range(start, stop):
            for q in range(d):
                delta[j, q] = d_h[j, q] * derivative_from_output(code, h[j, q])
        np.dot(delta[start:stop], w_transposed, d_hc[start:stop])
        for j in range(start, stop):
            for k in range(2):
                kid = children[j, k]
                if kid >= 0:
                    d_h[kid] += d_hc[j, k * d:(k + 1) * d]
