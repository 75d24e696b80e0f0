r"""Semi-supervised recursive autoencoder, RAE (Socher, Pennington, Huang, Ng &
Manning 2011), on the given trees as Socher et al. 2013 compare it.

A node with children c_1 (left) and c_2 (right), in the paper's column
orientation:

    p      = f( W^(1) [c_1; c_2] + b^(1) ),   f = tanh                     (RA1)
    p     <- p / ||p||                                                       (RA2)
    [c_1'; c_2'] = W^(2) p + b^(2)                                           (RA3)
    E_rec  = n_1/(n_1+n_2) (1/2)||c_1 - c_1'||^2
           + n_2/(n_1+n_2) (1/2)||c_2 - c_2'||^2                             (RA4)
    E      = alpha E_rec + (1 - alpha) E_cE   at each node                   (RA5)

n_k the words under child k; E_cE the softmax head's cross-entropy on the
normalised p (at labelled nodes, as every npcomp classifier).  A leaf's state
is its word vector (d_x = d).  A unary node's missing c_2 is 0 with n_2 = 0:
it is neither composed nor reconstructed (RE1).  The objective (RE2): J =
(1/Z) sum over the minibatch's nodes of (RA5), plus (lambda/2)||theta||^2.

The equations above follow the project's issue; the paper's own text was not
available (docs/cells/rae.md).

Row-vector orientation in the code (``c @ W1`` is the paper's W^(1) c):

    c = [h_left | h_right],   a = tanh(c W1 + b1),   h = a / ||a||
    r = h W2 + b2 = [c_1' | c_2'],   e_k = c_k' - c_k

Backward (eps_h = dJ/dh accumulated in ``d_h``, s = alpha / Z the scale of
the reconstruction term, omega_k = n_k / (n_1 + n_2)), parents first:

    eps_r     = s [omega_1 e_1 | omega_2 e_2]           reverses (RA4) in r
    eps_h    += eps_r W2^T                               reverses (RA3)
    eps_h(c_k) -= s omega_k e_k                          reverses (RA4) in the target c_k
    eps_a     = (eps_h - h (h . eps_h)) / ||a||          reverses (RA2)
    delta     = eps_a (1 - a^2)                          reverses f of (RA1)
    eps_c     = delta W1^T -> the children's eps_h       reverses (RA1)
    dW1 = sum c^T delta, db1 = sum delta, dW2 = sum h^T eps_r, db2 = sum eps_r

The model adds alpha sum E_rec / Z to J (``own_loss``) and weighs the head's
term by 1 - alpha (``head_weight``).  Used alone, the cell's backward adds the
gradient of alpha sum E_rec (scale alpha) to the upstream one.

==========  ===========  ======================================
paper       code         shape
==========  ===========  ======================================
W^(1)       ``W1``       (2d, d): rows for c_1, then c_2
b^(1)       ``b1``       (d,)
W^(2)       ``W2``       (d, 2d): columns c_1', then c_2'
b^(2)       ``b2``       (2d,)
alpha       option ``reconstruction_weight``
p (RA1)     ``a[j - L]``  (d,)
p (RA2)     ``h[j]``      (d,)
==========  ===========  ======================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import ONE, uniform_fan_in
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
class RAECache:
    word_index: np.ndarray  # (L,) row of x each leaf reads
    n_words: int  # U, rows of x
    h: np.ndarray  # (n, d) normalised states (a leaf's: its word vector)
    c: np.ndarray  # (n - L, 2d) [c_1 | c_2] per inner node
    a: np.ndarray  # (n - L, d) tanh(c W1 + b1)
    norm: np.ndarray  # (n - L,) ||a||
    errors: np.ndarray  # (n - L, 2d) [e_1 | e_2] = r - c
    omega: np.ndarray  # (n - L, 2) n_k / (n_1 + n_2)
    E_rec: np.ndarray  # (n - L,) (RA4)
    scale: float  # s: the reconstruction term's weight in J (alpha, or alpha / Z)
    eps_h: np.ndarray | None = None
    eps_r: np.ndarray | None = None
    delta: np.ndarray | None = None
    eps_c: np.ndarray | None = None
    target: np.ndarray | None = None  # (n, d) what each node's eps_h got as a parent's target


class RAE(BinaryCell):
    """Recursive autoencoder on given trees; ``forward``/``backward`` over a forest."""

    name = "rae"

    def __init__(self, input_dim: int, hidden_dim: int, reconstruction_weight: float = 0.2):
        if input_dim != hidden_dim:
            raise ValueError(
                f"rae: a leaf's state is its word vector, so hidden_dim must "
                f"equal input_dim ({hidden_dim} != {input_dim})"
            )
        if not 0.0 <= reconstruction_weight < 1.0:
            raise ValueError(f"rae: reconstruction_weight (alpha) must be in [0, 1), not {reconstruction_weight}")
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.reconstruction_weight = float(reconstruction_weight)
        self.head_weight = 1.0 - self.reconstruction_weight

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return [("W1", (2 * d, d)), ("b1", (d,)), ("W2", (d, 2 * d)), ("b2", (2 * d,))]

    def report_slices(self) -> dict:
        d = self.hidden_dim
        halves = (slice(0, d), slice(d, 2 * d))
        return {
            "W1.1": ("W1", (halves[0], slice(None))),
            "W1.2": ("W1", (halves[1], slice(None))),
            "W2.1": ("W2", (slice(None), halves[0])),
            "W2.2": ("W2", (slice(None), halves[1])),
        }

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """W1 from U(+-1/sqrt(2d)), W2 from U(+-1/sqrt(d)), biases 0 (ours)."""
        d = self.hidden_dim
        uniform_fan_in(params["W1"], 2 * d, rng)
        uniform_fan_in(params["W2"], d, rng)
        params["b1"][...] = 0.0
        params["b2"][...] = 0.0

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d) distinct words' vectors; word_index: (L,) row of x per leaf.
        Returns h (n, d), the normalised states, and the cache (with E_rec
        per inner node).  ``nudge`` moves a node's h once computed (before its
        reconstruction reads it)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        word_index = np.asarray(word_index)[:leaves]
        children = binary_children(forest)
        h = np.empty((n, d), dtype=x.dtype)
        h[:leaves] = x[word_index]
        nudge_rows(nudge, "h", h, 0, leaves)
        inner = n - leaves
        c = np.empty((inner, 2 * d), dtype=x.dtype)
        a = np.empty((inner, d), dtype=x.dtype)
        norm = np.empty(inner, dtype=x.dtype)
        errors = np.empty((inner, 2 * d), dtype=x.dtype)
        omega = _child_weights(children, forest.level_ptr, leaves).astype(x.dtype)
        for start, stop in forest.levels(first=1):
            rows = slice(start - leaves, stop - leaves)
            _gather_children(children, h, c, start, stop, leaves)
            np.matmul(c[rows], params["W1"], out=a[rows])  # (RA1)
            a[rows] += params["b1"]
            np.tanh(a[rows], out=a[rows])
            norm[rows] = np.sqrt(np.einsum("ij,ij->i", a[rows], a[rows]))
            np.divide(a[rows], norm[rows, None], out=h[start:stop])  # (RA2)
            nudge_rows(nudge, "h", h, start, stop)
            np.matmul(h[start:stop], params["W2"], out=errors[rows])  # (RA3)
            errors[rows] += params["b2"]
            errors[rows] -= c[rows]  # e = c' - c
        squared = (errors * errors).reshape(inner, 2, d).sum(axis=2)
        E_rec = 0.5 * (omega * squared).sum(axis=1)  # (RA4)
        return h, RAECache(word_index, x.shape[0], h, c, a, norm, errors, omega, E_rec, self.reconstruction_weight)

    def own_loss(self, forest: Forest, cache: RAECache, normaliser: int, node_loss: np.ndarray | None = None) -> float:
        """alpha sum_j E_rec,j / Z (RA5); the backward then takes s = alpha / Z.
        ``node_loss`` (n,) gets each inner node's s E_rec,j added (NaN: 0 before)."""
        cache.scale = self.reconstruction_weight / normaliser
        if node_loss is not None:
            inner = slice(forest.n_leaves, forest.n_nodes)
            node_loss[inner] = np.nan_to_num(node_loss[inner]) + cache.scale * cache.E_rec
        return float(cache.scale * cache.E_rec.sum())

    def backward(self, params: dict, forest: Forest, cache: RAECache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dJ/dh from the head (eps_h accumulates in it).  Adds dW1,
        db1, dW2, db2; returns dJ/dx (U, d)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        children = binary_children(forest)
        inner = n - leaves
        # reverses (RA4) in r: eps_r = s [omega_1 e_1 | omega_2 e_2], every node at once
        eps_r = cache.scale * (cache.errors.reshape(inner, 2, d) * cache.omega[:, :, None]).reshape(inner, 2 * d)
        delta = np.empty((inner, d), dtype=d_h.dtype)
        eps_c = np.empty((inner, 2 * d), dtype=d_h.dtype)
        target = np.zeros((n, d), dtype=d_h.dtype)
        w2_transposed = np.ascontiguousarray(params["W2"].T)
        w1_transposed = np.ascontiguousarray(params["W1"].T)
        for start, stop in forest.levels(first=1, downward=True):
            rows = slice(start - leaves, stop - leaves)
            d_h[start:stop] += eps_r[rows] @ w2_transposed  # reverses (RA3)
            _normalised_tanh_deltas(cache.h, cache.a, cache.norm, d_h, delta, start, stop, leaves)  # (RA2), (RA1)
            np.matmul(delta[rows], w1_transposed, out=eps_c[rows])  # reverses (RA1)
            _route_to_children(children, eps_c, eps_r, cache.omega, d_h, target, start, stop, leaves)
        grads["W1"] += cache.c.T @ delta
        grads["b1"] += delta.sum(axis=0)
        grads["W2"] += cache.h[leaves:].T @ eps_r
        grads["b2"] += eps_r.sum(axis=0)
        cache.eps_h, cache.eps_r, cache.delta, cache.eps_c, cache.target = (d_h, eps_r, delta, eps_c, target)
        return sum_by_index(d_h[:leaves], cache.word_index, cache.n_words)

    # -- what npcomp explain shows ---------------------------------------------------------

    def forward_terms(self, forest: Forest, cache: RAECache) -> list:
        n, leaves = forest.n_nodes, forest.n_leaves
        inner = np.arange(leaves, n)
        reconstruction = cache.errors + cache.c
        return [
            Term("c", "RA1", node_rows(n, inner, cache.c), "RE1"),
            Term("p", "RA1", node_rows(n, inner, cache.a)),
            Term("p/||p||", "RA2", node_rows(n, inner, cache.h[inner])),
            Term("[c_1';c_2']", "RA3", node_rows(n, inner, reconstruction)),
            Term("E_rec", "RA4", node_rows(n, inner, cache.E_rec[:, None]), "RE1"),
            Term("h", "RA2", cache.h),
        ]

    def backward_terms(self, forest: Forest, cache: RAECache) -> list:
        n, leaves = forest.n_nodes, forest.n_leaves
        inner = np.arange(leaves, n)
        return [
            Term("eps_h", "reverses RA1-RA4", cache.eps_h, "RE2"),
            Term("eps_r", "reverses RA4", node_rows(n, inner, cache.eps_r), "RE1, RE2"),
            Term("delta", "reverses RA1, RA2", node_rows(n, inner, cache.delta)),
            Term("eps_c", "reverses RA1", node_rows(n, inner, cache.eps_c), "RE1"),
        ]

    def state_terms(self, forest: Forest, cache: RAECache) -> list:
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: RAECache, d_out: np.ndarray) -> list:
        """eps_h: the head's; the node's own reconstruction, eps_r W2^T; the
        parent's composition, its half of eps_c; the parent's reconstruction
        error read at its target, -s omega_k e_k."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        parent, slot = forest.parent, forest.position
        own = np.zeros((n, d))
        own[leaves:] = cache.eps_r @ params["W2"].T
        composed = np.zeros((n, d))
        child = np.flatnonzero(parent >= 0)
        composed[child] = cache.eps_c[parent[child][:, None] - leaves, slot[child][:, None] * d + np.arange(d)]
        orphan = reasons(n, (parent < 0, "root: no parent"))
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses the classifier"),
                    Part(
                        "eps_r W^(2)T (its own reconstruction)",
                        "reverses RA3",
                        own,
                        reasons(n, (np.arange(n) < leaves, "leaf: nothing reconstructed")),
                    ),
                    Part(
                        "delta_p W^(1)T (the parent's composition)",
                        "reverses RA1 (through the parent)",
                        composed,
                        orphan,
                    ),
                    Part(
                        "-s omega_k e_k (the parent's reconstruction target)",
                        "reverses RA4 (through the parent)",
                        cache.target,
                        orphan,
                    ),
                ],
            )
        ]


def _child_weights(children: np.ndarray, level_ptr: np.ndarray, leaves: int) -> np.ndarray:
    """(n - L, 2) omega_k = n_k / (n_1 + n_2) per inner node, n_k the words
    under child k (0 for a missing child)."""
    span = _span_sizes(children, level_ptr)
    kids = children[leaves:]
    under = np.where(kids >= 0, span[np.maximum(kids, 0)], 0).astype(np.float64)
    return under / under.sum(axis=1, keepdims=True)


@njit(cache=True, nogil=True)
def _span_sizes(children, level_ptr):
    """(n,) the words under every node: 1 at a leaf, its children's sum above."""
    n = children.shape[0]
    span = np.zeros(n, dtype=np.int64)
    for j in range(level_ptr[1]):
        span[j] = 1
    for j in range(level_ptr[1], n):  # children before parents
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                span[j] += span[kid]
    return span


@njit(cache=True, nogil=True)
def _gather_children(children, h, c, start, stop, leaves):
    """c[j - leaves] = [h_left | h_right] for one level (a missing child 0)."""
    d = h.shape[1]
    for j in range(start, stop):
        for k in range(2):
            kid = children[j, k]
            for q in range(d):
                c[j - leaves, k * d + q] = h[kid, q] if kid >= 0 else 0.0


@njit(cache=True, nogil=True)
def _normalised_tanh_deltas(h, a, norm, d_h, delta, start, stop, leaves):
    """delta_j = (eps_h - h (h . eps_h)) / ||a|| * (1 - a^2): reverses h = a /
    ||a|| (RA2), then tanh (RA1), from the cached outputs."""
    for j in range(start, stop):
        row = j - leaves
        projection = h[j, 0] * d_h[j, 0] * 0
        for q in range(h.shape[1]):
            projection += h[j, q] * d_h[j, q]
        for q in range(h.shape[1]):
            eps_a = (d_h[j, q] - h[j, q] * projection) / norm[row]
            delta[row, q] = eps_a * (ONE - a[row, q] * a[row, q])


@njit(cache=True, nogil=True)
def _route_to_children(children, eps_c, eps_r, omega, d_h, target, start, stop, leaves):
    """For one level: child k's eps_h += its half of eps_c (reverses RA1) and
    -e_k s omega_k = -(its half of eps_r), the reconstruction error read at its
    target c_k (reverses RA4); ``target`` keeps the latter for the parts."""
    d = d_h.shape[1]
    for j in range(start, stop):
        row = j - leaves
        for k in range(2):
            kid = children[j, k]
            if kid < 0:
                continue
            for q in range(d):
                d_h[kid, q] += eps_c[row, k * d + q] - eps_r[row, k * d + q]
                target[kid, q] = -eps_r[row, k * d + q]
