r"""Recursive Neural Tensor Network (Socher et al. 2013), as restated by
Nayebi & Blundell, eq. 3.

For a node with left child state a and right child state b, c = [a ; b] is
their concatenation (a row of width 2d).  In the row-vector orientation the
code computes (``c @ W`` is the paper's W [a; b]):

    p_k = f( c V^[k] c^T + (c W)_k + b_k ),   k = 1..d,   f = tanh      (3)

V^[k] (2d x 2d) is slice k of the tensor V^[1:d]; the bias b is Socher's
(omitted from the printed equation "for simplicity").  A leaf's state is
its word vector, h = x (so d_x = d: children and parents have one
dimension).  A missing child of a unary node contributes a = 0 or b = 0.

With ``leaf_activation="tanh"`` a leaf's state is h = tanh(x), as in Socher
et al.'s released code (CoreNLP's ``SentimentCostAndGradient`` applies tanh
to the word vector at every preterminal), which initialises the vectors from
N(0, 1) (later versions N(0, 0.1^2)): every state of the tree, leaves
included, then lies in (-1, 1).  The printed equations, and Nayebi &
Blundell's eq. 3, leave the word vector as it is (the default, "identity").

Two products per level, over the symmetric part of the tensor.  The form
c V^[k] c^T sees only the symmetric part of V^[k], and c^T c is symmetric:
with the pairs r <= s of 0..2d-1 (P = d (2d + 1) of them, row-major: row r
holds s = r..2d-1) and the per-node features

    phi_j = [ (c_r c_s)_{r <= s} | c_j ]            (1, P + 2d)

eq. 3 for all the m nodes of a level is p = tanh(T + c W + b), with the
tensor term

    T = (c_r c_s)_{r <= s} @ U,   (m, d),   U[(r, s)] = S^[.]_rs (r < s), V^[.]_rr (r = s)
    S^[k] = V^[k] + V^[k]^T

(P = 2d^2 + d of the 4d^2 products of vec(c^T c) @ V reshaped (4d^2, d))
and the standard term c W, (m, d).  Both terms are kept for ``npcomp
explain``; the features of every inner node for the backward (P + 2d
numbers per node: 1325 at d = 25).

Backward (eps_h = dLoss/dh, delta = dLoss/d pre-activation), parents first;
the parent has already added its share to eps_h:

    delta_j  = eps_h_j * (1 - p_j^2)                        (reverses f of eq. 3)
    eps_c_j  = sum_k delta_jk c_j S^[k] + delta_j W^T          (reverses eq. 3)
               since d(c V^[k] c^T)/dc = c S^[k]
    eps_h(left child) += eps_c_j[0:d],  eps_h(right child) += eps_c_j[d:2d]

computed per level as one product delta (m, d) @ [S^[.]_rs for r <= s ; W]^T,
whose first P columns hold the symmetric A_j = sum_k delta_jk S^[k] (its
pairs r <= s) and last 2d columns delta_j W^T, then a kernel contracting
A_j with c_j.  Weight gradients, one product over all inner nodes after the
level loop:

    [G ; dW] = Phi^T delta,   G[(r, s)] = sum_j delta_j c_jr c_js,   i.e.
    dV^[k] = sum_j delta_jk c_j^T c_j (symmetric: G at [r, s] and [s, r]),
    dW = sum_j c_j^T delta_j,   db = sum_j delta_j
    leaves: dLoss/dx_w = sum of eps_h over the leaves reading word w

eps_h, delta and eps_c stay on the cache for ``backward_terms``.

Parameters (d = hidden_dim = input_dim):

=======  ====================================  ========================
paper    code                                  shape
=======  ====================================  ========================
V^[1:d]  ``V``; slice V^[k] is ``V[:, :, k]``  (2d, 2d, d)
W        ``W``: rows W_1 (for a), W_2 (for b)  (2d, d), the paper's W^T
b        ``b``                                 (d,)
[a ; b]  ``features[j - L, P:]``               (2d,)
c V c^T  ``tensor[j - L]``, (c V^[k] c^T)_k   (d,)
c W      ``standard[j - L]``                   (d,)
p        ``h[j]``                              (d,)
=======  ====================================  ========================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import ONE
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
class RNTNCache:
    word_index: np.ndarray  # (L,) row of x each leaf reads
    n_words: int  # U, rows of x
    word_h: np.ndarray | None  # (U, d) tanh(x) with leaf_activation="tanh", else None
    h: np.ndarray  # (n, d) node states
    features: np.ndarray  # (n - L, P + 2d) [(c_r c_s)_{r<=s} | c] per inner node
    tensor: np.ndarray  # (n - L, d) (c V^[k] c^T)_k per inner node
    standard: np.ndarray  # (n - L, d) c W per inner node
    # what the backward leaves for ``backward_terms``: eps_h (n, d), and per
    # inner node delta (n - L, d) and eps_c (n - L, 2d) (NaN in a missing child's half)
    eps_h: np.ndarray | None = None
    delta: np.ndarray | None = None
    eps_c: np.ndarray | None = None


class RNTN(BinaryCell):
    """Recursive neural tensor network; ``forward``/``backward`` over a forest."""

    name = "rntn"

    def __init__(self, input_dim: int, hidden_dim: int, leaf_activation: str = "identity"):
        if input_dim != hidden_dim:
            raise ValueError(
                f"rntn: a leaf's state is its word vector, so hidden_dim must "
                f"equal input_dim ({hidden_dim} != {input_dim})"
            )
        self.leaf_activation = leaf_activation
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return [("V", (2 * d, 2 * d, d)), ("W", (2 * d, d)), ("b", (d,))]

    def report_slices(self) -> dict:
        """The tensor's blocks by children (V.12: a's rows, b's columns) and W_1, W_2."""
        d = self.hidden_dim
        halves = (slice(0, d), slice(d, 2 * d))
        out = {f"V.{r + 1}{s + 1}": ("V", (halves[r], halves[s], slice(None))) for r in range(2) for s in range(2)}
        out["W.1"] = ("W", (halves[0], slice(None)))
        out["W.2"] = ("W", (halves[1], slice(None)))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """As Socher et al.'s released code (CoreNLP's sentiment model): each of
        W_1, W_2 is the identity plus U(+-1/(2 sqrt(d))) noise, so a parent
        starts as about the sum of its children and signal survives deep trees
        (a fan-in draw shrinks it at every level); b = 0; V from U(+-1/(4d))."""
        d = self.hidden_dim
        bound = 1.0 / (2.0 * np.sqrt(d))
        params["W"][...] = rng.uniform(-bound, bound, size=(2 * d, d))
        params["W"][:d] += np.eye(d)
        params["W"][d:] += np.eye(d)
        params["b"][...] = 0.0
        params["V"][...] = rng.uniform(-1.0 / (4 * d), 1.0 / (4 * d), size=params["V"].shape)

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d) distinct words' vectors; word_index: (L,) the row of x each
        leaf (nodes 0..L-1) reads.  Returns h (n, d), cache.  ``nudge``
        (interface.Nudge) moves one node's h once it is computed."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        children = binary_children(forest)
        h = np.empty((n, d), dtype=x.dtype)
        word_h = np.tanh(x) if self.leaf_activation == "tanh" else None
        h[:leaves] = (x if word_h is None else word_h)[word_index]  # leaves: h = x or tanh(x)
        nudge_rows(nudge, "h", h, 0, leaves)
        pairs = _pair_count(d)
        features = np.empty((n - leaves, pairs + 2 * d), dtype=x.dtype)
        tensor = np.empty((n - leaves, d), dtype=x.dtype)
        standard = np.empty((n - leaves, d), dtype=x.dtype)
        U = np.empty((pairs, d), dtype=x.dtype)
        _symmetrised(params["V"], U)
        U[_diagonal_pairs(d)] *= 0.5  # S^[k]_rr = 2 V^[k]_rr: exact
        for start, stop in forest.levels(first=1):
            rows = slice(start - leaves, stop - leaves)
            _gather_features(children, h, features, start, stop, leaves)
            # eq. 3: (c_r c_s)_{r<=s} @ U = (c V^[k] c^T)_k and c @ W, then + b, tanh
            np.matmul(features[rows, :pairs], U, out=tensor[rows])
            np.matmul(features[rows, pairs:], params["W"], out=standard[rows])
            p = h[start:stop]
            np.add(tensor[rows], standard[rows], out=p)
            p += params["b"]
            np.tanh(p, out=p)
            nudge_rows(nudge, "h", h, start, stop)
        return h, RNTNCache(word_index, x.shape[0], word_h, h, features, tensor, standard)

    def backward(self, params: dict, forest: Forest, cache: RNTNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten: eps_h accumulates in it).
        Adds dLoss/dV, dW, db into ``grads``; returns dLoss/dx (U, d)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        children = binary_children(forest)
        pairs = _pair_count(d)
        delta = np.empty((n - leaves, d), dtype=d_h.dtype)
        # (d, P + 2d): delta_j @ this = [A_j's pairs r <= s | delta_j W^T]
        theta_transposed = np.empty((d, pairs + 2 * d), dtype=d_h.dtype)
        _symmetrised(params["V"], theta_transposed[:, :pairs].T)
        theta_transposed[:, pairs:] = params["W"].T
        widest = int(np.diff(forest.level_ptr[1:]).max()) if forest.n_levels > 1 else 0
        products = np.empty((widest, pairs + 2 * d), dtype=d_h.dtype)
        eps_c = np.empty((n - leaves, 2 * d), dtype=d_h.dtype)
        for start, stop in forest.levels(first=1, downward=True):
            _tanh_deltas(cache.h, d_h, delta, start, stop, leaves)  # reverses f of eq. 3
            np.matmul(delta[start - leaves : stop - leaves], theta_transposed, out=products[: stop - start])
            _route_to_children(
                children, cache.features, products, d_h, eps_c, start, stop, leaves
            )  # reverses eq. 3's c
        # [G ; dW] = Phi^T delta over all inner nodes at once; dV^[k] is G's
        # symmetric matrix, the pair (r, s) at [r, s] and at [s, r]
        gradient = cache.features.T @ delta
        _add_symmetric(gradient[:pairs], grads["V"])
        grads["W"] += gradient[pairs:]
        grads["b"] += delta.sum(axis=0)
        # leaves: h = x, so a word's gradient is the summed eps_h of its leaves
        # (times tanh'(x) = 1 - h^2 when h = tanh(x), the same at all its leaves)
        d_x = sum_by_index(d_h[:leaves], cache.word_index, cache.n_words)
        if cache.word_h is not None:
            d_x *= ONE - cache.word_h * cache.word_h
        cache.eps_h, cache.delta, cache.eps_c = d_h, delta, eps_c
        return d_x

    def forward_terms(self, forest: Forest, cache: RNTNCache) -> list:
        """At inner nodes c = [a | b] (R2: a missing child is 0), the tensor
        term (c V^[k] c^T)_k, the standard term c W and p (R1: with Socher's
        bias); h, the state, at every node (a leaf's word vector, or its tanh)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        inner = np.arange(leaves, n)
        c = cache.features[:, _pair_count(d) :]
        return [
            Term("c", "3", node_rows(n, inner, c), "R2"),
            Term("c V^[1:d] c^T", "3", node_rows(n, inner, cache.tensor)),
            Term("c W", "3", node_rows(n, inner, cache.standard)),
            Term("p", "3", node_rows(n, inner, cache.h[inner]), "R1"),
            Term("h", "3", cache.h),
        ]

    def backward_terms(self, forest: Forest, cache: RNTNCache) -> list:
        """eps_h at every node; at inner nodes delta = eps_h (1 - p^2) and
        eps_c = sum_k delta_k c S^[k] + delta W^T, whose halves join the
        children's eps_h (NaN in a missing child's half)."""
        n, leaves = forest.n_nodes, forest.n_leaves
        inner = np.arange(leaves, n)
        return [
            Term("eps_h", "reverses 3", cache.eps_h),
            Term("delta", "reverses 3", node_rows(n, inner, cache.delta)),
            Term("eps_c", "reverses 3", node_rows(n, inner, cache.eps_c), "R2"),
        ]

    def state_terms(self, forest: Forest, cache: RNTNCache) -> list:
        """h at every node (a leaf's: its word vector, or its tanh)."""
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: RNTNCache, d_out: np.ndarray) -> list:
        """eps_h: the head's, and the node's half of its parent's eps_c in two
        parts, the tensor's sum_k delta_k c S^[k] and the standard delta W^T."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        parent, slot = forest.parent, forest.position
        child = np.flatnonzero(parent >= 0)
        rows = parent[child] - leaves
        c = cache.features[rows, _pair_count(d) :]  # (m, 2d)
        delta = cache.delta[rows]  # (m, d)
        halves = slot[child][:, None] * d + np.arange(d)
        tensor, standard = np.zeros((n, d)), np.zeros((n, d))
        V = params["V"]
        whole = np.einsum("mr,rsk,mk->ms", c, V + V.transpose(1, 0, 2), delta)
        tensor[child] = np.take_along_axis(whole, halves, axis=1)
        standard[child] = np.take_along_axis(delta @ params["W"].T, halves, axis=1)
        orphan = reasons(n, (parent < 0, "root: no parent"))
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses the classifier"),
                    Part("sum_k delta_p,k c_p S^[k]", "reverses 3 (the tensor, through the parent)", tensor, orphan),
                    Part("delta_p W^T", "reverses 3 (c W, through the parent)", standard, orphan),
                ],
            )
        ]


def _pair_count(d: int) -> int:
    """P = d (2d + 1): the pairs r <= s of 0..2d-1."""
    return d * (2 * d + 1)


def _diagonal_pairs(d: int) -> np.ndarray:
    """(2d,) the rows of the pairs (r, r) in row-major order: row r starts
    after the 2d + (2d - 1) + ... + (2d - r + 1) pairs of the rows before."""
    r = np.arange(2 * d)
    return r * (2 * d) - r * (r - 1) // 2


@njit(cache=True, nogil=True)
def _symmetrised(V, out):
    """out (P, d), any strides: row (r, s) holds S^[k]_rs = V^[k]_rs + V^[k]_sr,
    k = 1..d, for every pair r <= s in row-major order (d(c V^[k] c^T)/dc =
    c S^[k]; S^[k] is symmetric, so its pairs are all of it)."""
    width = V.shape[0]
    pair = 0
    for r in range(width):
        for s in range(r, width):
            for k in range(V.shape[2]):
                out[pair, k] = V[r, s, k] + V[s, r, k]
            pair += 1


@njit(cache=True, nogil=True)
def _add_symmetric(pair_gradient, dV):
    """dV[r, s] += G[(r, s)] and dV[s, r] += G[(r, s)] for every pair r < s,
    dV[r, r] += G[(r, r)]: G (P, d) rows in row-major pair order."""
    width = dV.shape[0]
    pair = 0
    for r in range(width):
        for s in range(r, width):
            for k in range(dV.shape[2]):
                dV[r, s, k] += pair_gradient[pair, k]
                if s != r:
                    dV[s, r, k] += pair_gradient[pair, k]
            pair += 1


@njit(cache=True, nogil=True)
def _gather_features(children, h, features, start, stop, leaves):
    """features[j - leaves] = [(c_r c_s)_{r<=s} | c_j], c_j = [h_left | h_right]
    (a missing child's half is 0), for the nodes of one level."""
    d = h.shape[1]
    width = 2 * d
    pairs = features.shape[1] - width
    for j in range(start, stop):
        phi = features[j - leaves]
        c = phi[pairs:]
        for k in range(2):
            kid = children[j, k]
            for q in range(d):
                c[k * d + q] = h[kid, q] if kid >= 0 else 0.0
        first = 0  # the pair (r, r)
        for r in range(width):
            # row r of the pairs, (c_r c_s)_{s >= r}; slices let the loop vectorise
            row, c_tail, c_r = phi[first : first + width - r], c[r:], c[r]
            for t in range(width - r):
                row[t] = c_r * c_tail[t]
            first += width - r


@njit(cache=True, nogil=True)
def _tanh_deltas(h, d_h, delta, start, stop, leaves):
    """delta_j = eps_h_j * (1 - p_j^2), tanh' from the cached output p."""
    for j in range(start, stop):
        for q in range(h.shape[1]):
            p = h[j, q]
            delta[j - leaves, q] = d_h[j, q] * (ONE - p * p)


@njit(cache=True, nogil=True)
def _route_to_children(children, features, products, d_h, eps_c, start, stop, leaves):
    """eps_c_j = A_j c_j + delta_j W^T, with the symmetric A_j = sum_k delta_jk
    S^[k] as its pairs r <= s in products[j - start, :P] (row-major) and
    delta_j W^T in its last 2d columns; entry r goes to child r // d,
    component r % d, and is kept in eps_c[j - leaves, r] for
    ``backward_terms`` (NaN in a missing child's half)."""
    d = d_h.shape[1]
    width = 2 * d
    pairs = features.shape[1] - width
    for j in range(start, stop):
        A = products[j - start]
        c = features[j - leaves, pairs:]
        eps = eps_c[j - leaves]
        eps[:] = A[pairs:]
        first = 0  # the pair (r, r)
        for r in range(width):
            # row r of A's pairs, A_rs for s >= r: A_sr = A_rs, so A_rs c_r goes
            # to entry s (s >= r), and A_rs c_s for s > r to entry r
            row, c_tail, eps_tail, c_r = A[first : first + width - r], c[r:], eps[r:], c[r]
            for t in range(width - r):
                eps_tail[t] += row[t] * c_r
            eps[r] += _dot_after_first(row, c_tail)
            first += width - r
        for r in range(width):
            kid = children[j, r // d]
            if kid < 0:
                eps[r] = np.nan
            else:
                d_h[kid, r % d] += eps[r]


@njit(cache=True, nogil=True)
def _dot_after_first(a, b):
    """sum_{t >= 1} a_t b_t, in four partial sums: without reordering, each
    addition would wait for the one before."""
    n = a.shape[0]
    t0 = t1 = t2 = t3 = a.dtype.type(0.0)
    t = 1
    while t + 3 < n:
        t0 += a[t] * b[t]
        t1 += a[t + 1] * b[t + 1]
        t2 += a[t + 2] * b[t + 2]
        t3 += a[t + 3] * b[t + 3]
        t += 4
    while t < n:
        t0 += a[t] * b[t]
        t += 1
    return (t0 + t1) + (t2 + t3)
