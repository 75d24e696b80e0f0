r"""Matrix-vector recursive neural network, MV-RNN (Socher, Huval, Manning &
Ng 2012), with the SST settings of Socher et al. 2013, Sec. 4.2.

Every word and phrase is a vector and a matrix.  A node with left child
(a, A) and right child (b, B) composes, in the paper's column orientation,

    p = g( W [B a ; A b] + b_W )                                     (MV1)
    P = W_M [A ; B]  = W_M,1 A + W_M,2 B                             (MV2)

g = tanh; W (d x 2d), W_M (d x 2d); A, B, P (d x d) act on column vectors.
The issue's and Socher et al. 2013's restatement print no bias: npcomp adds
b_W (MV3, as the RNTN's R1).  A leaf is its word: (a, A) read from the
embedding row [a | vec(A)] (d + d^2 numbers, A row-major).  A unary node's
missing right child is (0, I): the identity leaves the left child's vector
as it is (u = I a) and adds nothing through A b (MV4; the paper's trees are
binary).

In the row-vector orientation the code computes (``uv @ W`` is the paper's
W [Ba; Ab]; code matrices are the transposes of the paper's, except the
node matrices A, B, P, kept as the paper's operators):

    u = B a,  v = A b,  uv = [u | v]                      (2d,) per node
    p = tanh( uv @ W + b )                                   (MV1)
    P = W_M,1 A + W_M,2 B,   W_M,1 = W_M[:d].T,  W_M,2 = W_M[d:].T      (MV2)

Backward (eps_h = dJ/dp accumulated in ``d_h``, eps_P = dJ/dP in
``eps_P``), parents first:

    delta   = eps_h * (1 - p^2)                          reverses tanh of (MV1)
    eps_uv  = delta @ W^T = [eps_u | eps_v]              reverses (MV1)'s W
    eps_a  += B^T eps_u,   eps_B += eps_u a^T            reverses u = B a
    eps_b  += A^T eps_v,   eps_A += eps_v b^T            reverses v = A b
    eps_A  += W_M1^T eps_P, eps_B += W_M2^T eps_P        reverses (MV2)
    dW   = sum_j uv_j^T delta_j,   db = sum_j delta_j
    dW_M[:d] = sum_j A_j eps_P_j^T,  dW_M[d:] = sum_j B_j eps_P_j^T   (the code's W_M)
    leaves: dJ/dx_w = [sum eps_a | sum vec(eps_A)] over the leaves reading w

The head reads p alone: eps_P of a node comes from its parent only (0 at a
root).  The forward keeps uv, h (= p) and every node's matrix; the backward
leaves eps_h, delta, eps_uv and eps_P on the cache for ``npcomp explain``.

=========  ========================  =====================================
paper      code                      shape
=========  ========================  =====================================
W          ``W`` (its transpose)     (2d, d): rows W_1 (for Ba), W_2 (for Ab)
b_W        ``b``                     (d,)
W_M        ``W_M`` (its transpose)   (2d, d): rows W_M,1^T then W_M,2^T
a, A       ``x[w, :d]``, ``x[w, d:]`` (d,), (d, d) row-major
p          ``h[j]``                  (d,)
P          ``M[j]``                  (d, d)
[Ba; Ab]   ``uv[j - L]``             (2d,)
=========  ========================  =====================================
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
class MVRNNCache:
    word_index: np.ndarray  # (L,) row of x each leaf reads
    n_words: int  # U, rows of x
    h: np.ndarray  # (n, d) vectors p (a leaf's: a)
    M: np.ndarray  # (n, d, d) matrices P (a leaf's: A)
    uv: np.ndarray  # (n - L, 2d) [B a | A b] per inner node
    # what the backward leaves for ``backward_terms``
    eps_h: np.ndarray | None = None  # (n, d) eps_h
    eps_P: np.ndarray | None = None  # (n, d, d)
    delta: np.ndarray | None = None  # (n - L, d)
    eps_uv: np.ndarray | None = None  # (n - L, 2d)


class MVRNN(BinaryCell):
    """Matrix-vector RNN; ``forward``/``backward`` over a forest."""

    name = "mvrnn"

    def __init__(self, input_dim: int, hidden_dim: int):
        d = hidden_dim
        if input_dim != d + d * d:
            raise ValueError(
                f"mvrnn: a word is a vector and a d x d matrix, so the embedding "
                f"is d + d^2 = {d + d * d} wide for d = {d}, not {input_dim}"
            )
        self.input_dim = input_dim
        self.hidden_dim = d
        self.output_dim = d

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return [("W", (2 * d, d)), ("b", (d,)), ("W_M", (2 * d, d))]

    def report_slices(self) -> dict:
        d = self.hidden_dim
        halves = (slice(0, d), slice(d, 2 * d))
        return {
            "W.1": ("W", (halves[0], slice(None))),
            "W.2": ("W", (halves[1], slice(None))),
            "W_M.1": ("W_M", (halves[0], slice(None))),
            "W_M.2": ("W_M", (halves[1], slice(None))),
        }

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """W from U(+-1/sqrt(2d)), b = 0; W_M,1 = W_M,2 = I/2 plus
        U(+-1/(2 sqrt(d))) noise, so that near-identity children make a
        near-identity parent (ours: the papers give no initialisation of W_M)."""
        d = self.hidden_dim
        uniform_fan_in(params["W"], 2 * d, rng)
        params["b"][...] = 0.0
        bound = 1.0 / (2.0 * np.sqrt(d))
        params["W_M"][...] = rng.uniform(-bound, bound, size=(2 * d, d)) / d
        params["W_M"][:d] += 0.5 * np.eye(d)
        params["W_M"][d:] += 0.5 * np.eye(d)

    def initial_embedding(self, vocab_size: int, rng: np.random.Generator) -> np.ndarray:
        """(vocab_size, d + d^2): vectors from U(+-0.0001) (Socher et al. 2013,
        Sec. 4.2's r), matrices I + N(0, 0.01^2) ("initialised as the identity
        plus a small Gaussian noise", Socher et al. 2012; the noise's size ours)."""
        d = self.hidden_dim
        out = np.empty((vocab_size, d + d * d))
        out[:, :d] = rng.uniform(-1e-4, 1e-4, size=(vocab_size, d))
        matrices = rng.normal(0.0, 0.01, size=(vocab_size, d, d)) + np.eye(d)
        out[:, d:] = matrices.reshape(vocab_size, d * d)
        return out

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d + d^2) distinct words' [a | vec(A)]; word_index: (L,) row of
        x per leaf.  Returns h (n, d) = p, cache.  ``nudge`` moves a node's
        vector ("h") or matrix ("P", its d^2 entries row-major) once computed."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        word_index = np.asarray(word_index)[:leaves]
        children = binary_children(forest)
        h = np.empty((n, d), dtype=x.dtype)
        M = np.empty((n, d, d), dtype=x.dtype)
        h[:leaves] = x[word_index, :d]
        M[:leaves] = x[word_index, d:].reshape(leaves, d, d)
        nudge_rows(nudge, "h", h, 0, leaves)
        nudge_rows(nudge, "P", M, 0, leaves)
        uv = np.empty((n - leaves, 2 * d), dtype=x.dtype)
        W_M = params["W_M"]
        for start, stop in forest.levels(first=1):
            rows = slice(start - leaves, stop - leaves)
            _gather_uv(children, h, M, uv, start, stop, leaves)  # [B a | A b]
            p = h[start:stop]
            np.matmul(uv[rows], params["W"], out=p)  # (MV1)
            p += params["b"]
            np.tanh(p, out=p)
            _compose_matrices(children, M, W_M, start, stop)  # (MV2)
            nudge_rows(nudge, "h", h, start, stop)
            nudge_rows(nudge, "P", M, start, stop)
        return h, MVRNNCache(word_index, x.shape[0], h, M, uv)

    def backward(self, params: dict, forest: Forest, cache: MVRNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dJ/dp from the head (eps_h accumulates in it).  Adds
        dW, db, dW_M into ``grads``; returns dJ/dx (U, d + d^2)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        children = binary_children(forest)
        eps_P = np.zeros((n, d, d), dtype=d_h.dtype)
        delta = np.empty((n - leaves, d), dtype=d_h.dtype)
        eps_uv = np.empty((n - leaves, 2 * d), dtype=d_h.dtype)
        w_transposed = np.ascontiguousarray(params["W"].T)
        W_M = params["W_M"]
        for start, stop in forest.levels(first=1, downward=True):
            rows = slice(start - leaves, stop - leaves)
            np.multiply(d_h[start:stop], ONE - cache.h[start:stop] ** 2, out=delta[rows])
            np.matmul(delta[rows], w_transposed, out=eps_uv[rows])  # reverses (MV1)
            _route_to_children(
                children, cache.h, cache.M, W_M, eps_uv, d_h, eps_P, start, stop, leaves
            )  # reverses Ba, Ab, (MV2)
        grads["W"] += cache.uv.T @ delta
        grads["b"] += delta.sum(axis=0)
        _add_matrix_gradient(children, cache.M, eps_P, grads["W_M"], leaves)
        cache.eps_h, cache.eps_P, cache.delta, cache.eps_uv = d_h, eps_P, delta, eps_uv
        d_words = np.concatenate([d_h[:leaves], eps_P[:leaves].reshape(leaves, d * d)], axis=1)
        return sum_by_index(d_words, cache.word_index, cache.n_words)

    # -- what npcomp explain shows ---------------------------------------------------------

    def forward_terms(self, forest: Forest, cache: MVRNNCache) -> list:
        """At inner nodes Ba and Ab (MV4: a missing child is (0, I)), p; P at
        every node (a leaf's: its word matrix), h = p at every node."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        inner = np.arange(leaves, n)
        return [
            Term("Ba", "MV1", node_rows(n, inner, cache.uv[:, :d]), "MV4"),
            Term("Ab", "MV1", node_rows(n, inner, cache.uv[:, d:]), "MV4"),
            Term("p", "MV1", node_rows(n, inner, cache.h[inner]), "MV3"),
            Term("P", "MV2", cache.M.reshape(n, d * d), "MV4"),
            Term("h", "MV1", cache.h),
        ]

    def backward_terms(self, forest: Forest, cache: MVRNNCache) -> list:
        """eps_h and eps_P at every node; delta and eps_[Ba;Ab] at inner nodes."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        inner = np.arange(leaves, n)
        return [
            Term("eps_h", "reverses MV1", cache.eps_h),
            Term("eps_P", "reverses MV1, MV2", cache.eps_P.reshape(n, d * d), "MV4"),
            Term("delta", "reverses MV1", node_rows(n, inner, cache.delta)),
            Term("eps_[Ba;Ab]", "reverses MV1", node_rows(n, inner, cache.eps_uv)),
        ]

    def state_terms(self, forest: Forest, cache: MVRNNCache) -> list:
        """p (h) and P at every node."""
        return [StateTerm("h", "eps_h"), StateTerm("P", "eps_P")]

    def term_parts(self, params: dict, forest: Forest, cache: MVRNNCache, d_out: np.ndarray) -> list:
        """eps_h: the head's and the parent's, B^T eps_u (left child) or
        A^T eps_v (right child).  eps_P: the parent's through the sibling's
        vector (eps_u a^T or eps_v b^T) and through W_M (W_M,k^T eps_P)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        parent, slot = forest.parent, forest.position
        children = binary_children(forest)
        through_vector, through_sibling, through_W_M = (np.zeros((n, d)), np.zeros((n, d * d)), np.zeros((n, d * d)))
        W_M = params["W_M"]
        for child in np.flatnonzero(parent >= 0):
            j = parent[child]
            k = slot[child]
            sibling = children[j, 1 - k]
            eps_u, eps_v = cache.eps_uv[j - leaves, :d], cache.eps_uv[j - leaves, d:]
            if sibling >= 0:
                sibling_h, sibling_M = cache.h[sibling], cache.M[sibling]
            else:
                sibling_h, sibling_M = np.zeros(d), np.eye(d)
            if k == 0:  # the left child (a, A): u = B a reads a, v = A b reads A
                through_vector[child] = sibling_M.T @ eps_u
                through_sibling[child] = np.outer(eps_v, sibling_h).ravel()
            else:  # the right child (b, B): v = A b reads b, u = B a reads B
                through_vector[child] = sibling_M.T @ eps_v
                through_sibling[child] = np.outer(eps_u, sibling_h).ravel()
            through_W_M[child] = (W_M[k * d : (k + 1) * d] @ cache.eps_P[j]).ravel()
        orphan = reasons(n, (parent < 0, "root: no parent"))
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses the classifier"),
                    Part(
                        "B^T eps_u (left child), A^T eps_v (right child)",
                        "reverses MV1 (through the parent)",
                        through_vector,
                        orphan,
                    ),
                ],
            ),
            TermParts(
                "eps_P",
                [
                    Part(
                        "eps_v b^T (left child), eps_u a^T (right child)",
                        "reverses MV1 (through the parent)",
                        through_sibling,
                        orphan,
                    ),
                    Part("W_M,k^T eps_P,parent", "reverses MV2 (through the parent)", through_W_M, orphan),
                ],
                unread=reasons(n, (parent < 0, "root: no parent reads P, the head reads p alone")),
            ),
        ]


@njit(cache=True, nogil=True)
def _gather_uv(children, h, M, uv, start, stop, leaves):
    """uv[j - leaves] = [B a | A b] for the nodes of one level: (a, A) the
    left child, (b, B) the right one, (0, I) where it is missing (MV4)."""
    d = h.shape[1]
    for j in range(start, stop):
        left, right = children[j, 0], children[j, 1]
        row = uv[j - leaves]
        for r in range(d):
            u = h[left, r]  # B = I for a missing right child
            v = h.dtype.type(0.0)
            if right >= 0:
                u = h.dtype.type(0.0)
                for c in range(d):
                    u += M[right, r, c] * h[left, c]
                    v += M[left, r, c] * h[right, c]
            row[r] = u
            row[d + r] = v


@njit(cache=True, nogil=True)
def _compose_matrices(children, M, W_M, start, stop):
    """P_j = W_M,1 A + W_M,2 B (MV2) for the nodes of one level, W_M,k the
    transposes of the code's row blocks: P[r, c] = sum_q W_M[q, r] A[q, c] +
    W_M[d + q, r] B[q, c]; B = I for a missing right child."""
    d = M.shape[1]
    for j in range(start, stop):
        left, right = children[j, 0], children[j, 1]
        for r in range(d):
            for c in range(d):
                total = W_M[d + c, r] if right < 0 else M.dtype.type(0.0)
                for q in range(d):
                    total += W_M[q, r] * M[left, q, c]
                    if right >= 0:
                        total += W_M[d + q, r] * M[right, q, c]
                M[j, r, c] = total


@njit(cache=True, nogil=True)
def _route_to_children(children, h, M, W_M, eps_uv, d_h, eps_P, start, stop, leaves):
    """For the nodes of one level, from eps_uv = [eps_u | eps_v] and eps_P of
    the node: eps_a += B^T eps_u, eps_B += eps_u a^T, eps_b += A^T eps_v,
    eps_A += eps_v b^T (reversing u = B a, v = A b), eps_A += W_M,1^T eps_P,
    eps_B += W_M,2^T eps_P (reversing MV2).  Nothing reaches a missing
    child's constant (0, I)."""
    d = h.shape[1]
    for j in range(start, stop):
        left, right = children[j, 0], children[j, 1]
        eps_u = eps_uv[j - leaves, :d]
        eps_v = eps_uv[j - leaves, d:]
        if right < 0:
            for c in range(d):
                d_h[left, c] += eps_u[c]  # u = I a
        else:
            for c in range(d):
                a_part = h.dtype.type(0.0)
                b_part = h.dtype.type(0.0)
                for r in range(d):
                    a_part += M[right, r, c] * eps_u[r]
                    b_part += M[left, r, c] * eps_v[r]
                d_h[left, c] += a_part
                d_h[right, c] += b_part
            for r in range(d):
                for c in range(d):
                    eps_P[right, r, c] += eps_u[r] * h[left, c]
                    eps_P[left, r, c] += eps_v[r] * h[right, c]
        # (MV2): eps_A[q, c] += sum_r W_M,1[r, q] eps_P[r, c] = sum_r W_M[q, r] eps_P[r, c]
        for q in range(d):
            for c in range(d):
                to_left = h.dtype.type(0.0)
                to_right = h.dtype.type(0.0)
                for r in range(d):
                    to_left += W_M[q, r] * eps_P[j, r, c]
                    to_right += W_M[d + q, r] * eps_P[j, r, c]
                eps_P[left, q, c] += to_left
                if right >= 0:
                    eps_P[right, q, c] += to_right


@njit(cache=True, nogil=True)
def _add_matrix_gradient(children, M, eps_P, d_W_M, leaves):
    """d W_M[q, r] += sum_j sum_c A_j[q, c] eps_P_j[r, c] (rows 0..d-1) and
    B_j likewise (rows d..2d-1; B = I for a missing right child)."""
    d = M.shape[1]
    for j in range(leaves, M.shape[0]):
        left, right = children[j, 0], children[j, 1]
        for q in range(d):
            for r in range(d):
                to_left = M.dtype.type(0.0)
                for c in range(d):
                    to_left += M[left, q, c] * eps_P[j, r, c]
                d_W_M[q, r] += to_left
                if right >= 0:
                    to_right = M.dtype.type(0.0)
                    for c in range(d):
                        to_right += M[right, q, c] * eps_P[j, r, c]
                    d_W_M[d + q, r] += to_right
                else:
                    d_W_M[d + q, r] += eps_P[j, r, q]
