r"""Deep recursive neural network, DRNN (Irsoy & Cardie 2014): recursive layers
stacked over the tree, each node's state at layer i made from its children's
states at layer i and its own state at layer i - 1.

In the paper's column orientation, for a node eta with children l(eta),
r(eta) and layers i = 1..L:

    h^(1)_eta = x_eta                                       at a leaf   (D1)
    h^(1)_eta = f( W_L^(1) h^(1)_l + W_R^(1) h^(1)_r + b^(1) )          (D1)
    h^(i)_eta = f( W_L^(i) h^(i)_l + W_R^(i) h^(i)_r
                   + V^(i) h^(i-1)_eta + b^(i) ),   i = 2..L             (D2)
    y_eta     = softmax( U h^(L)_eta + c )                               (D3)

f the rectifier (the option ``activation``: relu or tanh).  Leaf and
internal weights are untied where the input spaces differ: at layer 1 a leaf
child (a d_x-wide word vector) is read through W_L^(1)x, W_R^(1)x (the
code's ``W_leaf``), an inner child through W_L^(1), W_R^(1); at layer 2 a
leaf's own word vector through V^(2)x (``V_leaf``), an inner node's h^(1)
through V^(2).  A leaf has no children: from layer 2 up its state is
f(V^(i) h^(i-1) + b^(i)).  A unary node's missing child contributes 0 (DR1).
The head (D3) reads the top layer, so L >= 2 (a leaf's h^(1) is a word
vector; the one-layer network is the untied RecNN, ``recnn --untied``).

These equations follow the project's issue and Le & Zuidema's account of the
model; the paper's own text was not available (docs/cells/drnn.md).

Row orientation in the code (``z @ W`` is the paper's W z); layer index
k = i - 1 in 0..L-1; H[k] (n, d) the states of layer i (H[0] is 0 at the
leaves, whose layer-1 state is x):

    layer 1, inner j:   H[0, j] = f( [h_l | h_r] W[0] + b[0] )   (leaf children: x W_leaf halves)
    layer k >= 1, inner j:  H[k, j] = f( [H[k, l] | H[k, r] | H[k-1, j]] [W[k]; V[k-1]] + b[k] )
    layer k >= 1, leaf j:   H[k, j] = f( H[k-1, j] V[k-1] + b[k] )   (k = 1: x V_leaf)

Backward (eps^(i) = dJ/dh^(i), delta^(i) = eps^(i) f'(h^(i))), levels from the
top, and within a level the layers from the top:

    delta^(i)_j   = eps^(i)_j f'(h^(i)_j)                      reverses f of D2 (D1)
    [eps_l | eps_r | eps_below] = delta^(i)_j [W^(i) ; V^(i)]^T   reverses D2
    eps^(i)(l) += eps_l,  eps^(i)(r) += eps_r,  eps^(i-1)_j += eps_below
    dW^(i) += [h_l | h_r]^T delta,  dV^(i) += h^(i-1)_j^T delta,  db^(i) += delta
    leaves: eps at layer 2 through V_leaf and at layer 1 through W_leaf reach x

=========  ==========================  =============================
paper      code                        shape
=========  ==========================  =============================
W_L^(i), W_R^(i) (inner children)  ``W[i-1]``: rows W_L, then W_R   (L, 2d, d)
W_L^(1)x, W_R^(1)x (leaf children) ``W_leaf``                       (2 d_x, d)
V^(i), i = 2..L                    ``V[i-2]``                       (L-1, d, d)
V^(2)x (a leaf's word vector)      ``V_leaf``                       (d_x, d)
b^(i)                              ``b[i-1]``                       (L, d)
h^(i)_eta                          ``H[i-1, eta]``                  (d,)
=========  ==========================  =============================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import (
    activate,
    activation_code,
    derivative_from_output,
    uniform_fan_in,
)
from npcomp.cells.kernels.inputs import sum_by_index
from npcomp.cells.kernels.levels import binary_children
from .interface import (
    BinaryCell,
    Part,
    StateTerm,
    Term,
    TermParts,
    head_part,
    node_rows,
    nudge_rows,
    reasons,
)


@dataclass
class DRNNCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (L,) row of x each leaf reads
    H: np.ndarray  # (layers, n, d) states; H[0] 0 at the leaves
    inputs: np.ndarray  # (layers, n, 3d) what each layer's product read per node
    eps: np.ndarray | None = None  # (layers, n, d)
    delta: np.ndarray | None = None  # (layers, n, d)
    leaf_delta: np.ndarray | None = None  # (L, 2d): a leaf child's parent delta at layer 1


class DRNN(BinaryCell):
    """Deep recursive network; ``forward``/``backward`` over a forest."""

    name = "drnn"

    @property
    def state_symbols(self) -> dict:
        """Each layer's state as the per-node checks move it (h1) and as the
        forward shows it (h^(1))."""
        return {f"h{k + 1}": f"h^({k + 1})" for k in range(self.layers)}

    def __init__(self, input_dim: int, hidden_dim: int, layers: int = 3, activation: str = "relu"):
        if layers < 2:
            raise ValueError(
                f"drnn: layers must be at least 2, not {layers} (the head reads "
                "the top layer, and a leaf's first layer is its word vector; one "
                "layer is the untied RecNN)"
            )
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.layers = int(layers)
        self.activation = activation
        self.code = activation_code(activation)

    def parameter_shapes(self) -> list:
        d, d_x, depth = self.hidden_dim, self.input_dim, self.layers
        return [
            ("W", (depth, 2 * d, d)),
            ("W_leaf", (2 * d_x, d)),
            ("V", (depth - 1, d, d)),
            ("V_leaf", (d_x, d)),
            ("b", (depth, d)),
        ]

    def report_slices(self) -> dict:
        d = self.hidden_dim
        out = {}
        for k in range(self.layers):
            out[f"W.{k + 1}.L"] = ("W", (k, slice(0, d), slice(None)))
            out[f"W.{k + 1}.R"] = ("W", (k, slice(d, 2 * d), slice(None)))
            if k:
                out[f"V.{k + 1}"] = ("V", (k - 1, slice(None), slice(None)))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """U(+-1/sqrt(fan-in)) for every matrix, biases 0.1 (ours): the
        rectifiers start active and off their kink (at b = 0, untrained
        pre-activations crowd around 0, where ``npcomp explain``'s finite
        differences measure corners: errors up to 0.9 on an untrained model)."""
        d, d_x = self.hidden_dim, self.input_dim
        uniform_fan_in(params["W"], 2 * d, rng)
        uniform_fan_in(params["W_leaf"], 2 * d_x, rng)
        uniform_fan_in(params["V"], 3 * d, rng)
        uniform_fan_in(params["V_leaf"], d_x, rng)
        params["b"][...] = 0.1

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d_x) distinct words' vectors; word_index: (L,) row of x per
        leaf.  Returns the top layer's h (n, d) and the cache.  ``nudge``
        moves a node's state at layer i ("h1", "h2", ...) once computed."""
        n, d, leaves, depth = forest.n_nodes, self.hidden_dim, forest.n_leaves, self.layers
        word_index = np.asarray(word_index)[:leaves]
        children = binary_children(forest)
        H = np.zeros((depth, n, d), dtype=x.dtype)
        inputs = np.zeros((depth, n, 3 * d), dtype=x.dtype)
        word_x = x[word_index]  # (L, d_x)
        # leaves: layers 2..L from their own word alone (D2 without children)
        for k in range(1, depth):
            below = word_x @ params["V_leaf"] if k == 1 else H[k - 1, :leaves] @ params["V"][k - 1]
            if k > 1:
                inputs[k, :leaves, 2 * d :] = H[k - 1, :leaves]
            _activate_rows(self.code, below + params["b"][k], H[k, :leaves])
            nudge_rows(nudge, f"h{k + 1}", H[k], 0, leaves)
        word_terms = x @ np.hstack((params["W_leaf"][: self.input_dim], params["W_leaf"][self.input_dim :]))  # (U, 2d)
        stacked = [np.ascontiguousarray(np.vstack((params["W"][k], params["V"][k - 1]))) for k in range(1, depth)]
        for start, stop in forest.levels(first=1):
            for k in range(depth):
                _gather_layer(children, H, inputs, k, start, stop, leaves)
                weights = params["W"][0] if k == 0 else stacked[k - 1]
                width = 2 * d if k == 0 else 3 * d
                z = inputs[k, start:stop, :width] @ weights + params["b"][k]
                if k == 0:
                    _add_word_terms(children, word_index, word_terms, z, start, stop, leaves)
                _activate_rows(self.code, z, H[k, start:stop])
                nudge_rows(nudge, f"h{k + 1}", H[k], start, stop)
        return H[depth - 1], DRNNCache(x, word_index, H, inputs)

    def backward(self, params: dict, forest: Forest, cache: DRNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dJ/dh^(L) from the head.  Adds every weight's gradient;
        returns dJ/dx (U, d_x)."""
        n, d, leaves, depth = forest.n_nodes, self.hidden_dim, forest.n_leaves, self.layers
        d_x = self.input_dim
        children = binary_children(forest)
        H = cache.H
        eps = np.zeros((depth, n, d), dtype=d_h.dtype)
        eps[depth - 1] = d_h
        delta = np.zeros((depth, n, d), dtype=d_h.dtype)
        leaf_delta = np.zeros((leaves, 2 * d), dtype=d_h.dtype)
        transposed = [np.ascontiguousarray(params["W"][0].T)] + [
            np.ascontiguousarray(np.vstack((params["W"][k], params["V"][k - 1])).T) for k in range(1, depth)
        ]
        for start, stop in forest.levels(first=1, downward=True):
            for k in range(depth - 1, -1, -1):
                _deltas(self.code, H[k], eps[k], delta[k], start, stop)  # reverses f
                d_inputs = delta[k, start:stop] @ transposed[k]  # reverses D1, D2
                _route_layer(children, d_inputs, delta, eps, leaf_delta, k, start, stop, leaves)
        # weight gradients over the inner nodes, layer by layer
        inner = slice(leaves, n)
        grads["W"][0] += cache.inputs[0, inner, : 2 * d].T @ delta[0, inner]
        grads["b"][0] += delta[0, inner].sum(axis=0)
        for k in range(1, depth):
            gradient = cache.inputs[k, inner].T @ delta[k, inner]
            grads["W"][k] += gradient[: 2 * d]
            grads["V"][k - 1] += gradient[2 * d :]
            grads["b"][k] += delta[k, inner].sum(axis=0)
        # leaves, from the top layer down to layer 2 (D2 without children)
        word_x = cache.x[cache.word_index]
        d_word_x = np.zeros((leaves, d_x), dtype=d_h.dtype)
        for k in range(depth - 1, 0, -1):
            _deltas(self.code, H[k], eps[k], delta[k], 0, leaves)
            rows = delta[k, :leaves]
            grads["b"][k] += rows.sum(axis=0)
            if k == 1:
                grads["V_leaf"] += word_x.T @ rows
                d_word_x += rows @ params["V_leaf"].T
            else:
                grads["V"][k - 1] += H[k - 1, :leaves].T @ rows
                eps[k - 1, :leaves] += rows @ params["V"][k - 1].T
        # leaf children at layer 1: their parents' delta in their slot (D1, W_leaf)
        grads["W_leaf"][:d_x] += word_x.T @ leaf_delta[:, :d]
        grads["W_leaf"][d_x:] += word_x.T @ leaf_delta[:, d:]
        d_word_x += leaf_delta[:, :d] @ params["W_leaf"][:d_x].T
        d_word_x += leaf_delta[:, d:] @ params["W_leaf"][d_x:].T
        cache.eps, cache.delta, cache.leaf_delta = eps, delta, leaf_delta
        return sum_by_index(d_word_x, cache.word_index, cache.x.shape[0])

    # -- what npcomp explain shows ---------------------------------------------------------

    def forward_terms(self, forest: Forest, cache: DRNNCache) -> list:
        """h^(i) at every node (layer 1: inner nodes only, a leaf's is x)."""
        n, leaves = forest.n_nodes, forest.n_leaves
        inner = np.arange(leaves, n)
        terms = [Term("h^(1)", "D1", node_rows(n, inner, cache.H[0, inner]), "DR1")]
        terms += [Term(f"h^({k + 1})", "D2", cache.H[k], "DR1") for k in range(1, self.layers)]
        return terms

    def backward_terms(self, forest: Forest, cache: DRNNCache) -> list:
        """eps^(i) and delta^(i) at every node (layer 1: inner nodes)."""
        n, leaves = forest.n_nodes, forest.n_leaves
        inner = np.arange(leaves, n)
        terms = [
            Term("eps^(1)", "reverses D1, D2", node_rows(n, inner, cache.eps[0, inner])),
            Term("delta^(1)", "reverses D1", node_rows(n, inner, cache.delta[0, inner])),
        ]
        for k in range(1, self.layers):
            symbol = "eps_h" if k == self.layers - 1 else f"eps^({k + 1})"
            terms += [
                Term(symbol, "reverses D2, D3" if k == self.layers - 1 else "reverses D2", cache.eps[k]),
                Term(f"delta^({k + 1})", "reverses D2", cache.delta[k]),
            ]
        return terms

    def state_terms(self, forest: Forest, cache: DRNNCache) -> list:
        """h^(i) of every layer (layer 1 at inner nodes), the top one's eps_h."""
        states = [StateTerm(f"h{k + 1}", f"eps^({k + 1})") for k in range(self.layers - 1)]
        return states + [StateTerm(f"h{self.layers}", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: DRNNCache, d_out: np.ndarray) -> list:
        """eps_h (the top layer's): the head's and the parent's delta^(L)
        through W_L^(L) or W_R^(L)."""
        n, d, top = forest.n_nodes, self.hidden_dim, self.layers - 1
        parent, slot = forest.parent, forest.position
        child = np.flatnonzero(parent >= 0)
        through_parent = np.zeros((n, d))
        W = params["W"][top]
        for node in child:
            through_parent[node] = cache.delta[top, parent[node]] @ W[slot[node] * d : (slot[node] + 1) * d].T
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses D3"),
                    Part(
                        "delta^(L)_p W_k^(L)T",
                        "reverses D2 (through the parent)",
                        through_parent,
                        reasons(n, (parent < 0, "root: no parent")),
                    ),
                ],
            )
        ]


@njit(cache=True, nogil=True)
def _activate_rows(code, z, out):
    """out = f(z), elementwise."""
    for j in range(z.shape[0]):
        for q in range(z.shape[1]):
            out[j, q] = activate(code, z[j, q])


@njit(cache=True, nogil=True)
def _gather_layer(children, H, inputs, k, start, stop, leaves):
    """inputs[k, j] = [h^(k+1)_l | h^(k+1)_r | h^(k)_j] for one level's nodes
    (layer 1: inner children only, a leaf child's slot 0 and no third block);
    a missing child's block is 0 (DR1)."""
    d = H.shape[2]
    for j in range(start, stop):
        for s in range(2):
            kid = children[j, s]
            use = kid >= 0 and (k > 0 or kid >= leaves)
            for q in range(d):
                inputs[k, j, s * d + q] = H[k, kid, q] if use else 0.0
        if k > 0:
            for q in range(d):
                inputs[k, j, 2 * d + q] = H[k - 1, j, q]


@njit(cache=True, nogil=True)
def _add_word_terms(children, word_index, word_terms, z, start, stop, leaves):
    """z[j - start] += a leaf child's x W_L^(1)x or x W_R^(1)x (layer 1)."""
    d = z.shape[1]
    for j in range(start, stop):
        for s in range(2):
            kid = children[j, s]
            if kid >= 0 and kid < leaves:
                row = word_index[kid]
                for q in range(d):
                    z[j - start, q] += word_terms[row, s * d + q]


@njit(cache=True, nogil=True)
def _deltas(code, H, eps, delta, start, stop):
    """delta = eps f'(h) from the cached output h, rows [start, stop)."""
    for j in range(start, stop):
        for q in range(H.shape[1]):
            delta[j, q] = eps[j, q] * derivative_from_output(code, H[j, q])


@njit(cache=True, nogil=True)
def _route_layer(children, d_inputs, delta, eps, leaf_delta, k, start, stop, leaves):
    """Layer k's [eps_l | eps_r | eps_below] (rows of d_inputs) of one level
    to the children's eps at layer k and the node's own at layer k - 1; at
    layer 1 a leaf child gets its parent's delta in its slot of
    ``leaf_delta`` instead (read through W_leaf after the level loop)."""
    d = eps.shape[2]
    for j in range(start, stop):
        row = j - start
        for s in range(2):
            kid = children[j, s]
            if kid < 0:
                continue
            if k == 0 and kid < leaves:
                for q in range(d):
                    leaf_delta[kid, s * d + q] = delta[k, j, q]
                continue
            for q in range(d):
                eps[k, kid, q] += d_inputs[row, s * d + q]
        if k > 0:
            for q in range(d):
                eps[k - 1, j, q] += d_inputs[row, 2 * d + q]
