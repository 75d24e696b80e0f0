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

In the row-vector orientation every code matrix is the transpose of the
paper's, the node matrices too: ``M[j]`` holds P^T (a leaf's: A^T), so
that (MV2) over a level is one product, as (MV1) is:

    u = B a = a B^T,  v = A b = b A^T,  uv = [u | v]          (2d,) per node
    p   = tanh( uv @ W + b )                                     (MV1)
    P^T = [A^T | B^T] @ W_M                                      (MV2)

``uv @ W`` is the paper's W [Ba; Ab] and ``[A^T | B^T] @ W_M`` (a d x 2d
block per node, ``AB``) its W_M [A; B], transposed: W_M,1 = W_M[:d].T,
W_M,2 = W_M[d:].T.  Each is one matrix product over the nodes of a level
stacked as rows.

Backward (eps_h = dJ/dp accumulated in ``d_h``, eps_P^T = (dJ/dP)^T in
``eps_P``), parents first:

    delta    = eps_h * (1 - p^2)                        reverses tanh of (MV1)
    eps_uv   = delta @ W^T = [eps_u | eps_v]            reverses (MV1)'s W
    eps_AB   = eps_P^T @ W_M^T = [eps_A^T | eps_B^T]    reverses (MV2); adds to
                                                        the children's eps_P^T
    eps_a   += B^T eps_u,   eps_B^T += a eps_u^T        reverses u = B a
    eps_b   += A^T eps_v,   eps_A^T += b eps_v^T        reverses v = A b
    dW   = sum_j uv_j^T delta_j,   db = sum_j delta_j
    dW_M = sum_j AB_j^T eps_P_j^T                       (the code's W_M)
    leaves: dJ/dx_w = [sum eps_a | sum vec(eps_A)] over the leaves reading w

The head reads p alone: eps_P of a node comes from its parent only (0 at a
root).  The forward keeps uv, AB, h (= p) and every node's matrix; the
backward leaves eps_h, delta, eps_uv and eps_P on the cache for ``npcomp
explain``, which shows P and eps_P as the paper's (``cache.P``,
``cache.eps_P_paper``).

=========  ========================  =====================================
paper      code                      shape
=========  ========================  =====================================
W          ``W`` (its transpose)     (2d, d): rows W_1 (for Ba), W_2 (for Ab)
b_W        ``b``                     (d,)
W_M        ``W_M`` (its transpose)   (2d, d): rows W_M,1^T then W_M,2^T
a, A       ``x[w, :d]``, ``x[w, d:]`` (d,), (d, d) row-major
p          ``h[j]``                  (d,)
P          ``M[j]`` (its transpose)  (d, d)
[Ba; Ab]   ``uv[j - L]``             (2d,)
[A; B]     ``AB[j - L]`` (transpose) (d, 2d): [A^T | B^T]
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
    M: np.ndarray  # (n, d, d) matrices P^T (a leaf's: A^T)
    uv: np.ndarray  # (n - L, 2d) [B a | A b] per inner node
    AB: np.ndarray  # (n - L, d, 2d) [A^T | B^T] per inner node
    # what the backward leaves for ``backward_terms``
    eps_h: np.ndarray | None = None  # (n, d) eps_h
    eps_P: np.ndarray | None = None  # (n, d, d) eps_P^T
    delta: np.ndarray | None = None  # (n - L, d)
    eps_uv: np.ndarray | None = None  # (n - L, 2d)

    @property
    def P(self) -> np.ndarray:
        """(n, d, d) the paper's node matrices P (a view)."""
        return self.M.transpose(0, 2, 1)

    @property
    def eps_P_paper(self) -> np.ndarray:
        """(n, d, d) dJ/dP as the paper's matrices (a view)."""
        return self.eps_P.transpose(0, 2, 1)


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
        M = np.empty((n, d, d), dtype=x.dtype)  # P^T per node
        P = M.transpose(0, 2, 1)  # the paper's, for the nudges
        h[:leaves] = x[word_index, :d]
        P[:leaves] = x[word_index, d:].reshape(leaves, d, d)
        nudge_rows(nudge, "h", h, 0, leaves)
        nudge_rows(nudge, "P", P, 0, leaves)
        uv = np.empty((n - leaves, 2 * d), dtype=x.dtype)
        AB = np.empty((n - leaves, d, 2 * d), dtype=x.dtype)
        for start, stop in forest.levels(first=1):
            rows = slice(start - leaves, stop - leaves)
            _gather_children(children, h, M, uv, AB, start, stop, leaves)  # [Ba | Ab], [A^T | B^T]
            p = h[start:stop]
            np.matmul(uv[rows], params["W"], out=p)  # (MV1)
            p += params["b"]
            np.tanh(p, out=p)
            np.matmul(AB[rows].reshape(-1, 2 * d), params["W_M"], out=M[start:stop].reshape(-1, d))  # (MV2)
            nudge_rows(nudge, "h", h, start, stop)
            nudge_rows(nudge, "P", P, start, stop)
        return h, MVRNNCache(word_index, x.shape[0], h, M, uv, AB)

    def backward(self, params: dict, forest: Forest, cache: MVRNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dJ/dp from the head (eps_h accumulates in it).  Adds
        dW, db, dW_M into ``grads``; returns dJ/dx (U, d + d^2)."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        children = binary_children(forest)
        eps_P = np.zeros((n, d, d), dtype=d_h.dtype)  # eps_P^T per node
        delta = np.empty((n - leaves, d), dtype=d_h.dtype)
        eps_uv = np.empty((n - leaves, 2 * d), dtype=d_h.dtype)
        eps_AB = np.empty((n - leaves, d, 2 * d), dtype=d_h.dtype)
        w_transposed = np.ascontiguousarray(params["W"].T)
        w_m_transposed = np.ascontiguousarray(params["W_M"].T)
        for start, stop in forest.levels(first=1, downward=True):
            rows = slice(start - leaves, stop - leaves)
            np.multiply(d_h[start:stop], ONE - cache.h[start:stop] ** 2, out=delta[rows])
            np.matmul(delta[rows], w_transposed, out=eps_uv[rows])  # reverses (MV1)
            np.matmul(
                eps_P[start:stop].reshape(-1, d), w_m_transposed, out=eps_AB[rows].reshape(-1, 2 * d)
            )  # reverses (MV2)
            _route_to_children(
                children, cache.h, cache.M, eps_uv, eps_AB, d_h, eps_P, start, stop, leaves
            )  # reverses Ba, Ab, [A; B]
        grads["W"] += cache.uv.T @ delta
        grads["b"] += delta.sum(axis=0)
        grads["W_M"] += cache.AB.reshape(-1, 2 * d).T @ eps_P[leaves:].reshape(-1, d)
        cache.eps_h, cache.eps_P, cache.delta, cache.eps_uv = d_h, eps_P, delta, eps_uv
        eps_A = eps_P[:leaves].transpose(0, 2, 1).reshape(leaves, d * d)
        return sum_by_index(np.concatenate([d_h[:leaves], eps_A], axis=1), cache.word_index, cache.n_words)

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
            Term("P", "MV2", cache.P.reshape(n, d * d), "MV4"),
            Term("h", "MV1", cache.h),
        ]

    def backward_terms(self, forest: Forest, cache: MVRNNCache) -> list:
        """eps_h and eps_P at every node; delta and eps_[Ba;Ab] at inner nodes."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        inner = np.arange(leaves, n)
        return [
            Term("eps_h", "reverses MV1", cache.eps_h),
            Term("eps_P", "reverses MV1, MV2", cache.eps_P_paper.reshape(n, d * d), "MV4"),
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
                sibling_h, sibling_M = cache.h[sibling], cache.P[sibling]
            else:
                sibling_h, sibling_M = np.zeros(d), np.eye(d)
            if k == 0:  # the left child (a, A): u = B a reads a, v = A b reads A
                through_vector[child] = sibling_M.T @ eps_u
                through_sibling[child] = np.outer(eps_v, sibling_h).ravel()
            else:  # the right child (b, B): v = A b reads b, u = B a reads B
                through_vector[child] = sibling_M.T @ eps_v
                through_sibling[child] = np.outer(eps_u, sibling_h).ravel()
            through_W_M[child] = (W_M[k * d : (k + 1) * d] @ cache.eps_P_paper[j]).ravel()
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
def _gather_children(children, h, M, uv, AB, start, stop, leaves):
    """For the nodes of one level, (a, A^T) the left child's, (b, B^T) the
    right one's, (0, I) where it is missing (MV4): uv[j - leaves] = [a B^T |
    b A^T] (the paper's [B a ; A b]) and AB[j - leaves] = [A^T | B^T]."""
    d = h.shape[1]
    zero = h.dtype.type(0.0)
    for j in range(start, stop):
        left, right = children[j, 0], children[j, 1]
        row = uv[j - leaves]
        block = AB[j - leaves]
        if right < 0:  # u = I a, v = A 0
            for r in range(d):
                row[r] = h[left, r]
                row[d + r] = zero
                for c in range(d):
                    block[r, c] = M[left, r, c]
                    block[r, d + c] = zero
                block[r, d + r] = h.dtype.type(1.0)
            continue
        for r in range(2 * d):
            row[r] = zero
        for q in range(d):
            a_q, b_q = h[left, q], h[right, q]
            for c in range(d):
                row[c] += a_q * M[right, q, c]  # u = a B^T
                row[d + c] += b_q * M[left, q, c]  # v = b A^T
                block[q, c] = M[left, q, c]
                block[q, d + c] = M[right, q, c]


@njit(cache=True, nogil=True)
def _route_to_children(children, h, M, eps_uv, eps_AB, d_h, eps_P, start, stop, leaves):
    """For the nodes of one level, from eps_uv = [eps_u | eps_v] and eps_AB =
    [eps_A^T | eps_B^T] (MV2's share): eps_a += B^T eps_u, eps_B^T += a
    eps_u^T, eps_b += A^T eps_v, eps_A^T += b eps_v^T (reversing u = B a, v
    = A b), and eps_AB's blocks to the children's eps_P^T.  Nothing reaches a
    missing child's constant (0, I)."""
    d = h.shape[1]
    for j in range(start, stop):
        left, right = children[j, 0], children[j, 1]
        eps_u = eps_uv[j - leaves, :d]
        eps_v = eps_uv[j - leaves, d:]
        block = eps_AB[j - leaves]
        if right < 0:  # u = I a
            for q in range(d):
                d_h[left, q] += eps_u[q]
                for c in range(d):
                    eps_P[left, q, c] += block[q, c]
            continue
        for q in range(d):
            a_part = h.dtype.type(0.0)
            b_part = h.dtype.type(0.0)
            for c in range(d):  # M[right] = B^T: (B^T eps_u)_q = sum_c B^T[q, c] eps_u[c]
                a_part += M[right, q, c] * eps_u[c]
                b_part += M[left, q, c] * eps_v[c]
            d_h[left, q] += a_part
            d_h[right, q] += b_part
            a_q, b_q = h[left, q], h[right, q]
            for c in range(d):
                eps_P[right, q, c] += a_q * eps_u[c] + block[q, d + c]
                eps_P[left, q, c] += b_q * eps_v[c] + block[q, c]
