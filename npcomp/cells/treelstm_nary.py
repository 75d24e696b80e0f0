r"""N-ary Tree-LSTM (Tai, Socher & Manning 2015, Sec. 3.2, eqs. 9-14).

With N = 2 over binarised constituency trees this is the Constituency
Tree-LSTM.  The input x_j is read only at the leaves (Tai: "a node j receives
an input vector x_j only if it is a leaf node"), so a leaf has no children and
an inner node no input.  Equations in the row-vector orientation the code
computes (x, h are rows; ``x @ W`` is the paper's W x):

    i_j  = sigma( x_j W^(i) + sum_l h_jl U_l^(i) + b^(i) )            (9)
    f_jk = sigma( x_j W^(f) + sum_l h_jl U_kl^(f) + b^(f) ),  k=1..N  (10)
    o_j  = sigma( x_j W^(o) + sum_l h_jl U_l^(o) + b^(o) )            (11)
    u_j  = tanh ( x_j W^(u) + sum_l h_jl U_l^(u) + b^(u) )            (12)
    c_j  = i_j * u_j + sum_l f_jl * c_jl                              (13)
    h_j  = o_j * tanh(c_j)                                            (14)

At a leaf the sums over children vanish (so W^(f) never matters and is not
a parameter); at an inner node the x terms vanish.  A missing child (a unary
node in a binary tree) contributes h = c = 0.  b^(f) is one vector shared by
the N forget gates, as printed.

Backward (eps = dLoss/d state, delta = dLoss/d pre-activation), per node,
parents first; the parent has already added its share to eps_h and eps_c:

    delta_o  = eps_h * tanh(c_j) * o(1-o)                       (reverses 14)
    eps_c   += eps_h * o * (1 - tanh(c_j)^2)                    (reverses 14)
    delta_i  = eps_c * u * i(1-i)                               (reverses 13, 9)
    delta_u  = eps_c * i * (1-u^2)                              (reverses 13, 12)
    delta_fk = eps_c * c_jk * f_k(1-f_k)                        (reverses 13, 10)
    eps_c(child k) = eps_c * f_jk                               (reverses 13)
    eps_h(child l) += sum over gates g of delta_g U_l^(g)^T     (reverses 9-12)
    dU  = sum_j [h_j1 .. h_jN]^T delta_j,  dW = sum_leaves x^T delta,
    db  = sum_j delta_j  (b^(f) gets the sum over k of delta_fk)

Parameters (d = hidden_dim, d_x = input_dim):

=========  ====================  =========================================
paper      code                  shape
=========  ====================  =========================================
W^(i,o,u)  ``W`` columns i|o|u   (d_x, 3d)
U_l^(g)    ``U`` rows l, col. g  (N d, (3+N) d): columns i|o|u|f_1..f_N
b^(g)      ``b``                 (4d,): i|o|u|f
=========  ====================  =========================================
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from .activations import sigmoid, tanh, uniform_fan_in

GATE_NAMES = ("i", "o", "u")


@dataclass
class TreeLSTMNaryCache:
    x: np.ndarray        # (L, d_x) leaf inputs
    hc: np.ndarray       # (n, N d) children's hidden states, per node
    gates: np.ndarray    # (n, (3+N) d) i|o|u|f_1..f_N activations
    c: np.ndarray        # (n, d) memory cells
    tanh_c: np.ndarray   # (n, d)


class TreeLSTMNary:
    """N-ary Tree-LSTM cell; ``forward``/``backward`` over a whole forest."""

    name = "treelstm-nary"

    def __init__(self, input_dim: int, hidden_dim: int, arity: int = 2):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.arity = arity
        self.output_dim = hidden_dim

    def parameter_shapes(self) -> list:
        d, n = self.hidden_dim, self.arity
        return [("W", (self.input_dim, 3 * d)), ("U", (n * d, (3 + n) * d)), ("b", (4 * d,))]

    def report_slices(self) -> dict:
        """Gate-level sub-blocks for per-parameter gradient-check reports."""
        d, n = self.hidden_dim, self.arity
        out = {}
        for g, gate in enumerate(GATE_NAMES):
            out[f"W.{gate}"] = ("W", (slice(None), slice(g * d, (g + 1) * d)))
            out[f"U.{gate}"] = ("U", (slice(None), slice(g * d, (g + 1) * d)))
            out[f"b.{gate}"] = ("b", (slice(g * d, (g + 1) * d),))
        out["U.f"] = ("U", (slice(None), slice(3 * d, (3 + n) * d)))
        out["b.f"] = ("b", (slice(3 * d, 4 * d),))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """Uniform +-1/sqrt(fan-in) (Le & Zuidema; Torch's nn.Linear)."""
        uniform_fan_in(params["W"], self.input_dim, rng)
        uniform_fan_in(params["U"], self.arity * self.hidden_dim, rng)
        uniform_fan_in(params["b"], self.hidden_dim, rng)

    def check_forest(self, forest: Forest) -> None:
        if forest.max_children > self.arity and forest.n_children.max() > self.arity:
            raise ValueError(f"{self.name} with N={self.arity} got a node with "
                             f"{int(forest.n_children.max())} children")
        leaf = forest.n_children == 0
        if np.any(leaf != (forest.word >= 0)):
            raise ValueError(f"{self.name} reads words at the leaves only: every leaf needs "
                             "a word and no inner node may have one")

    def forward(self, params: dict, forest: Forest, x: np.ndarray):
        """x: (L, d_x) inputs of the leaves (nodes 0..L-1).  Returns h (n, d), cache."""
        n, d, arity = forest.n_nodes, self.hidden_dim, self.arity
        dtype = x.dtype
        leaves = forest.n_leaves
        hc = np.zeros((n, arity * d), dtype=dtype)
        gates = np.zeros((n, (3 + arity) * d), dtype=dtype)
        c = np.empty((n, d), dtype=dtype)
        tanh_c = np.empty((n, d), dtype=dtype)
        h = np.empty((n, d), dtype=dtype)
        z_leaf = x @ params["W"]
        children = _children_columns(forest, arity)
        _leaf_forward(z_leaf, params["b"], gates, c, tanh_c, h)
        z = np.empty((n, (3 + arity) * d), dtype=dtype)
        _inner_forward(forest.level_ptr, children, params["U"], params["b"],
                       hc, z, gates, c, tanh_c, h)
        return h, TreeLSTMNaryCache(x, hc, gates, c, tanh_c)

    def backward(self, params: dict, forest: Forest, cache: TreeLSTMNaryCache,
                 d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten).  Adds dLoss/dparams
        into ``grads``; returns dLoss/dx (L, d_x)."""
        n, d, arity = forest.n_nodes, self.hidden_dim, self.arity
        leaves = forest.n_leaves
        delta = np.zeros((n, (3 + arity) * d), dtype=d_h.dtype)
        d_c = np.zeros((n, d), dtype=d_h.dtype)
        d_hc = np.empty((n, arity * d), dtype=d_h.dtype)
        children = _children_columns(forest, arity)
        u_transposed = np.ascontiguousarray(params["U"].T)
        _inner_backward(forest.level_ptr, children, u_transposed, cache.gates, cache.c,
                        cache.tanh_c, d_h, d_c, delta, d_hc)
        _leaf_backward(leaves, cache.gates, cache.tanh_c, d_h, d_c, delta)
        # weight gradients: one product over all inner nodes, one over all leaves
        delta_leaf = delta[:leaves, :3 * d]
        grads["U"] += cache.hc[leaves:].T @ delta[leaves:]
        grads["W"] += cache.x.T @ delta_leaf
        column_sums = delta.sum(axis=0)
        grads["b"][:3 * d] += column_sums[:3 * d]
        grads["b"][3 * d:] += column_sums[3 * d:].reshape(arity, d).sum(axis=0)
        return delta_leaf @ params["W"].T


def _children_columns(forest: Forest, arity: int) -> np.ndarray:
    """The forest's child table with exactly ``arity`` columns (-1 padded)."""
    kids = forest.children
    if kids.shape[1] == arity:
        return kids
    out = np.full((kids.shape[0], arity), -1, dtype=np.int32)
    out[:, :min(arity, kids.shape[1])] = kids[:, :arity]
    return out


@njit(cache=True)
def _leaf_forward(z_leaf, b, gates, c, tanh_c, h):
    """Eqs. 9, 11-14 at the leaves: no children, so c = i * u."""
    d = c.shape[1]
    for j in range(z_leaf.shape[0]):
        for q in range(d):
            i = sigmoid(z_leaf[j, q] + b[q])
            o = sigmoid(z_leaf[j, d + q] + b[d + q])
            u = tanh(z_leaf[j, 2 * d + q] + b[2 * d + q])
            gates[j, q] = i
            gates[j, d + q] = o
            gates[j, 2 * d + q] = u
            c[j, q] = i * u
            t = tanh(i * u)
            tanh_c[j, q] = t
            h[j, q] = o * t


@njit(cache=True)
def _inner_forward(level_ptr, children, U, b, hc, z, gates, c, tanh_c, h):
    """Eqs. 9-14 level by level: gather children, one product, gate arithmetic."""
    d = c.shape[1]
    arity = children.shape[1]
    for level in range(1, level_ptr.shape[0] - 1):
        start, stop = level_ptr[level], level_ptr[level + 1]
        for j in range(start, stop):
            for k in range(arity):
                kid = children[j, k]
                if kid >= 0:
                    hc[j, k * d:(k + 1) * d] = h[kid]
        np.dot(hc[start:stop], U, z[start:stop])
        for j in range(start, stop):
            for q in range(d):
                i = sigmoid(z[j, q] + b[q])                      # (9)
                o = sigmoid(z[j, d + q] + b[d + q])              # (11)
                u = tanh(z[j, 2 * d + q] + b[2 * d + q])      # (12)
                gates[j, q] = i
                gates[j, d + q] = o
                gates[j, 2 * d + q] = u
                cell = i * u                                     # (13)
                for k in range(arity):
                    f = sigmoid(z[j, (3 + k) * d + q] + b[3 * d + q])   # (10)
                    gates[j, (3 + k) * d + q] = f
                    kid = children[j, k]
                    if kid >= 0:
                        cell += f * c[kid, q]
                c[j, q] = cell
                t = tanh(cell)
                tanh_c[j, q] = t
                h[j, q] = o * t                                  # (14)


@njit(cache=True)
def _inner_backward(level_ptr, children, u_transposed, gates, c, tanh_c,
                    d_h, d_c, delta, d_hc):
    """Backward through eqs. 14 -> 9 for the inner nodes, top level first."""
    d = c.shape[1]
    arity = children.shape[1]
    for level in range(level_ptr.shape[0] - 2, 0, -1):
        start, stop = level_ptr[level], level_ptr[level + 1]
        for j in range(start, stop):
            for q in range(d):
                i = gates[j, q]
                o = gates[j, d + q]
                u = gates[j, 2 * d + q]
                t = tanh_c[j, q]
                eps_h = d_h[j, q]
                delta[j, d + q] = eps_h * t * o * (1 - o)        # delta_o
                eps_c = d_c[j, q] + eps_h * o * (1 - t * t)
                delta[j, q] = eps_c * u * i * (1 - i)            # delta_i
                delta[j, 2 * d + q] = eps_c * i * (1 - u * u)    # delta_u
                for k in range(arity):
                    kid = children[j, k]
                    if kid >= 0:
                        f = gates[j, (3 + k) * d + q]
                        delta[j, (3 + k) * d + q] = eps_c * c[kid, q] * f * (1 - f)  # delta_fk
                        d_c[kid, q] = eps_c * f                  # eps_c of child k
        np.dot(delta[start:stop], u_transposed, d_hc[start:stop])
        for j in range(start, stop):
            for k in range(arity):
                kid = children[j, k]
                if kid >= 0:
                    d_h[kid] += d_hc[j, k * d:(k + 1) * d]       # eps_h of child k


@njit(cache=True)
def _leaf_backward(leaves, gates, tanh_c, d_h, d_c, delta):
    """Backward through eqs. 14, 13 (c = i * u), 9, 11, 12 at the leaves."""
    d = tanh_c.shape[1]
    for j in range(leaves):
        for q in range(d):
            i = gates[j, q]
            o = gates[j, d + q]
            u = gates[j, 2 * d + q]
            t = tanh_c[j, q]
            eps_h = d_h[j, q]
            delta[j, d + q] = eps_h * t * o * (1 - o)
            eps_c = d_c[j, q] + eps_h * o * (1 - t * t)
            delta[j, q] = eps_c * u * i * (1 - i)
            delta[j, 2 * d + q] = eps_c * i * (1 - u * u)
