r"""Recursive neural network (Goller & Kuechler 1996; Socher et al. 2011),
as written in Le & Zuidema 2015, Sec. 2.2, eqs. 2-3.

Row-vector orientation (``h @ W1`` is the paper's W1 h):

    p = g( x W_1 + y W_2 + b )                                   (2), (3)

for a node with left child x and right child y (a missing child of a unary
node contributes 0); g in {tanh, sigmoid, softsign}.  Leaves are not
composed: a leaf's vector is its word vector x (d_x = d_w).

* tied (default): one weight set, so d_x must equal d; a leaf's h is x;
* untied: L&Z Sec. 4 read literally (as the LSTM-RNN's, docs/cells/lstm_rnn.md
  L6): a child that is a leaf is read through W_leaf (the d x d_w matrices
  W_1, W_2 of leaf-to-inner links), an inner child through W (d x d):

      p = g( x W_1 + y W_2 + b ),  W_k = W_leaf,k if that child is a leaf, else W_k

  The leaves' own h rows are not defined in d dimensions: they are returned
  as 0 and the model classifies leaves from their word vectors
  (``leaf_classifier_reads_input``, ``softmax_leaf`` in npcomp/models/).

Computation.  A leaf child's term depends on its word only: once per
distinct word, word_terms = x [W_leaf,1 | W_leaf,2] (U, 2d), its left and
right halves; the level kernels add a leaf child's half to its parent's
pre-activation.  Inner children: hc = [x | y] (0 in a leaf child's slot when
untied), one product hc @ W per level.

Backward (eps_h = dLoss/dh, delta = dLoss/d pre-activation), parents first:

    delta_j   = eps_h_j * g'(p_j)          g' from the output: 1-p^2, p(1-p), (1-|p|)^2
    eps_h(x) += delta_j W_1^T,  eps_h(y) += delta_j W_2^T        (inner children)
    dW = sum_j [x_j | y_j]^T delta_j,  db = sum_j delta_j          (inner children)
    leaves, tied:   dx = eps_h (the head's and the parent's)
    leaves, untied: the parent's delta_j in the slot k the leaf fills, summed
                    per word: delta_word (U, 2d) = [sum delta, left | right];
                    dW_leaf,k = x^T delta_word,k;  dx = delta_word [W_leaf,1 | W_leaf,2]^T

The forward keeps z and the backward eps_h, delta and d_hc = delta W^T
(a parent's eps_x | eps_y) on the cache, for ``npcomp explain``.

=========  ==========  ==========================================
paper      code        shape
=========  ==========  ==========================================
W_1; W_2   ``W``       (2d, d): rows W_1 then W_2 (inner children)
W_1; W_2   ``W_leaf``  (2 d_x, d): rows W_1 then W_2 (leaf children, untied)
b          ``b``       (d,)
=========  ==========  ==========================================
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
from npcomp.cells.kernels.levels import binary_children


@dataclass
class RecNNCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (L,) row of x each leaf reads
    hc: np.ndarray  # (n, 2d) inner children's states per node (untied: 0 for a leaf child)
    h: np.ndarray  # (n, d) node states (untied: 0 at the leaves)
    z: np.ndarray  # (n, d) pre-activations x W_1 + y W_2 + b (inner nodes)
    # what the backward leaves for ``backward_terms`` (inner rows, leaves as noted):
    # eps_h (n, d), delta (n, d), d_hc (n, 2d) = delta [W_1 | W_2]^T per parent
    eps_h: np.ndarray | None = None
    delta: np.ndarray | None = None
    d_hc: np.ndarray | None = None


class RecNN(BinaryCell):
    name = "recnn"

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh", untied: bool = False):
        if not untied and input_dim != hidden_dim:
            raise ValueError(
                f"recnn with tied leaves reads a leaf's word vector as its "
                f"state, so hidden_dim must equal input_dim ({hidden_dim} != "
                f"{input_dim}); or untied leaves"
            )
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.activation = activation
        self.code = activation_code(activation)
        self.untied = untied
        # untied leaves live in d_w dimensions: the model classifies them from x
        self.leaf_classifier_reads_input = self.untied

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        shapes = [("W", (2 * d, d)), ("b", (d,))]
        if self.untied:
            shapes.insert(1, ("W_leaf", (2 * self.input_dim, d)))
        return shapes

    def report_slices(self) -> dict:
        d, d_x = self.hidden_dim, self.input_dim
        out = {"W.1": ("W", (slice(0, d), slice(None))), "W.2": ("W", (slice(d, 2 * d), slice(None)))}
        if self.untied:
            out["W_leaf.1"] = ("W_leaf", (slice(0, d_x), slice(None)))
            out["W_leaf.2"] = ("W_leaf", (slice(d_x, 2 * d_x), slice(None)))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """U(+-1/sqrt(n)), n the input units of a node with two children of
        the kind the matrix reads: 2d (inner), 2 d_w (leaves)."""
        uniform_fan_in(params["W"], 2 * self.hidden_dim, rng)
        uniform_fan_in(params["b"], 2 * self.hidden_dim, rng)
        if self.untied:
            uniform_fan_in(params["W_leaf"], 2 * self.input_dim, rng)

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d_x) distinct words' vectors; word_index: (L,) row of x per leaf.
        ``nudge`` (interface.Nudge) moves one node's h after eqs. 2-3 (a tied
        leaf's: its word vector as the parent reads it)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        word_index = np.asarray(word_index)[:leaves]
        h = np.zeros((n, d), dtype=x.dtype)
        if self.untied:
            word_terms = x @ self._leaf_weights(params)  # (U, 2d): [x W_1 | x W_2]
            leaf_children = leaves
        else:
            h[:leaves] = x[word_index]  # a leaf's h is its word
            nudge_rows(nudge, "h", h, 0, leaves)
            word_terms = np.zeros((0, 2 * d), dtype=x.dtype)
            leaf_children = 0  # every child read from h
        hc = np.zeros((n, 2 * d), dtype=x.dtype)
        z = np.empty((n, d), dtype=x.dtype)
        moved = nudge is not None and nudge.state == "h" and nudge.node >= leaves
        _inner_forward(
            self.code,
            forest.level_ptr,
            binary_children(forest),
            leaf_children,
            word_index,
            word_terms,
            params["W"],
            params["b"],
            hc,
            z,
            h,
            nudge.node if moved else -1,
            np.asarray(nudge.offset if moved else np.zeros(d), dtype=x.dtype),
        )
        return h, RecNNCache(x, word_index, hc, h, z)

    def backward(self, params: dict, forest: Forest, cache: RecNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten: eps_h accumulates in
        it; untied: its leaf rows are ignored).  Returns dLoss/dx (U, d_x)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        leaf_children = leaves if self.untied else 0
        delta = np.zeros((n, d), dtype=d_h.dtype)
        d_hc = np.empty((n, 2 * d), dtype=d_h.dtype)
        leaf_delta = np.zeros((leaf_children, 2 * d), dtype=d_h.dtype)
        _inner_backward(
            self.code,
            forest.level_ptr,
            binary_children(forest),
            leaf_children,
            np.ascontiguousarray(params["W"].T),
            cache.h,
            d_h,
            delta,
            d_hc,
            leaf_delta,
        )
        grads["W"] += cache.hc[leaves:].T @ delta[leaves:]
        grads["b"] += delta[leaves:].sum(axis=0)
        cache.eps_h, cache.delta, cache.d_hc = d_h, delta, d_hc
        n_words = cache.x.shape[0]
        if not self.untied:
            return sum_by_index(d_h[:leaves], cache.word_index, n_words)
        # leaf children: their parents' deltas summed per word (reverses x @ [W_1 | W_2])
        delta_word = sum_by_index(leaf_delta, cache.word_index, n_words)  # (U, 2d)
        d_leaf = cache.x.T @ delta_word  # (d_x, 2d)
        d_x = self.input_dim
        grads["W_leaf"][:d_x] += d_leaf[:, :d]
        grads["W_leaf"][d_x:] += d_leaf[:, d:]
        return delta_word @ self._leaf_weights(params).T

    def forward_terms(self, forest: Forest, cache: RecNNCache) -> list:
        """z and p at inner nodes (eqs. 2-3), h at every node (a tied leaf's
        word vector; untied, 0 at the leaves: E4)."""
        n = forest.n_nodes
        inner = np.arange(forest.n_leaves, n)
        return [
            Term("z", "2, 3", node_rows(n, inner, cache.z[inner]), self._reading()),
            Term("p", "2, 3", node_rows(n, inner, cache.h[inner])),
            Term("h", "2, 3", cache.h, "E4" if self.untied else ""),
        ]

    def backward_terms(self, forest: Forest, cache: RecNNCache) -> list:
        """eps_h (untied: NaN at the leaves, whose error is their parent's delta
        read through W_leaf), delta at inner nodes, and at each parent eps_x,
        eps_y = delta W_1^T, delta W_2^T, what it adds to its left and right
        child's eps_h (NaN for a missing child and, untied, a leaf child)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        inner = np.arange(leaves, n)
        eps_h = cache.eps_h
        if self.untied:
            eps_h = node_rows(n, inner, eps_h[inner])
        terms = [
            Term("eps_h", "reverses 2, 3", eps_h, "E4" if self.untied else ""),
            Term("delta", "reverses 2, 3", node_rows(n, inner, cache.delta[inner])),
        ]
        children = binary_children(forest)
        first_inner_child = leaves if self.untied else 0
        for k, symbol in enumerate(("eps_x", "eps_y")):
            parents = np.flatnonzero(children[:, k] >= first_inner_child)
            terms.append(
                Term(
                    symbol,
                    "reverses 2, 3",
                    node_rows(n, parents, cache.d_hc[parents, k * d : (k + 1) * d]),
                    self._reading(),
                )
            )
        return terms

    def state_terms(self, forest: Forest, cache: RecNNCache) -> list:
        """h at every node (untied: the inner nodes; a leaf is its word vector)."""
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: RecNNCache, d_out: np.ndarray) -> list:
        """eps_h: the head's and the parent's delta through the transposed W_k
        of the node's slot k (eps_x, eps_y)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        parent, slot = forest.parent, forest.position
        child = np.flatnonzero(parent >= 0)
        values = np.zeros((n, d))
        values[child] = cache.d_hc[parent[child][:, None], slot[child][:, None] * d + np.arange(d)]
        head = head_part(forest, d_out, equation="reverses the classifier")
        if self.untied:  # leaves: not in d dimensions (E4)
            undefined = np.arange(n) < leaves
            values[undefined] = np.nan
            head = Part(head.label, head.equation, np.where(undefined[:, None], np.nan, head.values), head.zero)
        label = "delta_p W_k^T (eps_x, eps_y of the parent)"
        return [
            TermParts(
                "eps_h",
                [
                    head,
                    Part(
                        label, "reverses 2, 3 (through the parent)", values, reasons(n, (parent < 0, "root: no parent"))
                    ),
                ],
            )
        ]

    def _reading(self) -> str:
        """The erratum behind the children's terms: untied leaf children (E4),
        else a unary node's missing child contributing 0 (E3)."""
        return "E4" if self.untied else "E3"

    def _leaf_weights(self, params: dict) -> np.ndarray:
        """[W_leaf,1 | W_leaf,2] (d_x, 2d): a word's left and right terms in one product."""
        d_x = self.input_dim
        return np.hstack((params["W_leaf"][:d_x], params["W_leaf"][d_x:]))


@njit(cache=True, nogil=True)
def _inner_forward(
    code, level_ptr, children, leaf_children, word_index, word_terms, W, b, hc, z, h, nudge_node, nudge_offset
):
    """Eqs. 2-3 level by level.  A child below ``leaf_children`` (untied: the
    leaves; tied: none) adds its word's half of ``word_terms`` after the
    product; any other child is gathered into hc and read through W.
    h[nudge_node] += nudge_offset once it is computed (-1: no node)."""
    d = h.shape[1]
    for level in range(1, level_ptr.shape[0] - 1):
        start, stop = level_ptr[level], level_ptr[level + 1]
        for j in range(start, stop):
            for k in range(2):
                kid = children[j, k]
                if kid >= leaf_children:
                    hc[j, k * d : (k + 1) * d] = h[kid]
        np.dot(hc[start:stop], W, z[start:stop])
        for j in range(start, stop):
            for q in range(d):
                z[j, q] += b[q]
            for k in range(2):
                kid = children[j, k]
                if kid >= 0 and kid < leaf_children:
                    row = word_index[kid]
                    for q in range(d):
                        z[j, q] += word_terms[row, k * d + q]
            for q in range(d):
                h[j, q] = activate(code, z[j, q])
            if j == nudge_node:
                for q in range(d):
                    h[j, q] += nudge_offset[q]


@njit(cache=True, nogil=True)
def _inner_backward(code, level_ptr, children, leaf_children, w_transposed, h, d_h, delta, d_hc, leaf_delta):
    """Levels from the top down: delta = eps_h g'(h), one product delta W^T,
    scattered to the inner children's eps_h; a child below ``leaf_children``
    gets its parent's delta in its slot's half of ``leaf_delta`` instead."""
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
                if kid >= leaf_children:
                    d_h[kid] += d_hc[j, k * d : (k + 1) * d]
                elif kid >= 0:
                    leaf_delta[kid, k * d : (k + 1) * d] = delta[j]
