r"""LSTM with global attention (Nayebi & Blundell Sec. 3.4, eqs. 4-8;
after Luong, Pham & Manning 2015).

A sentence is a chain (node t reads word t; the chain's root is its last
word T).  The LSTM of eq. 4 (``lstm.py``, Tai eq. 1) reads it; one score per
time step, a softmax over the steps of the sentence, and the attention-
weighted context c_T together with the last state h_T give the attentional
hidden state the classifier reads.  Row-vector orientation (``x @ W`` is the
paper's W x; every code matrix is the transpose of the paper's):

    h_t  = LSTM(x_t, h_{t-1})                                           (4)
    e_t  = h_t w_a                     score, one number per step
    a_t  = exp(e_t - e*) / sum_{t'=1..T} exp(e_t' - e*),  e* = max_t' e_t'   (6)
    c_T  = sum_{t=1..T} a_t h_t                                          (5)
    h~_T = tanh( [c_T | h_T] W_c + b_c )                                 (7)
    y^   = softmax( h~_T W_p + b_p )      the classifier (heads.py)     (8)

Eq. 6 prints ``a_t = softmax(W_a h_t)`` without naming the axis: a_t is a
scalar and c_T a convex combination, so the softmax runs over the time
steps t = 1..T of one sentence (Luong's global attention).  Subtracting
the sentence's largest score e* changes nothing but the overflow.  A bias on
the score would cancel in that softmax, so w_a has none.  Eq. 7 prints no
bias. npcomp adds b_c, like the affine layers in the other cells
(docs/cells/lstm_global_attention.md, reading G3).

Output: row T of each chain (``forest.root``) holds h~_T, every other row
is 0.  The model classifies whole sequences (eq. 8 at the last step), so a
labelled non-root node is refused by ``check_forest``.  Phrase supervision
works with one chain per phrase (``--supervision spans``).

Recurrent dropout (Gal 2015; Nayebi Sec. 4.1, 0.3 "between each recurrent
connection for the LSTM layer"): ``recurrent_widths() == [d]``, the LSTM's
h_{t-1} -> step t mask, applied inside ``lstm.py``.  h_t as attended and
as read by eq. 7 is not masked.

Backward, with eps = dJ/d(state) and delta = dJ/d(pre-activation), each
line reversing the forward equation named:

    eps_h~_T   = dJ/dh~_T                     from the classifier, the root's row
    delta_c    = eps_h~_T * (1 - h~_T^2)                               reverses (7)
    dW_c      += [c_T | h_T]^T delta_c,   db_c += delta_c
    [eps_cT | eps_hT] = delta_c W_c^T                                  reverses (7)
    eps_a_t    = h_t . eps_cT             dJ/da_t                      reverses (5)
    eps_h_t    = a_t eps_cT   (+ eps_hT at t = T)                      reverses (5), (7)
    delta_a_t  = a_t ( eps_a_t - sum_{t'} a_t' eps_a_t' )   dJ/de_t    reverses (6)
    eps_h_t   += delta_a_t w_a,    dw_a += sum_t delta_a_t h_t         reverses e_t = h_t w_a
    then the LSTM's backward (lstm.py) from eps_h, every step.

The delta_a line is the softmax Jacobian da_t'/de_t = a_t' (1[t = t'] - a_t):
sum_{t'} eps_a_t' a_t' (1[t = t'] - a_t) = a_t (eps_a_t - sum_{t'} a_t' eps_a_t').
The subtracted sum is the term a planted-bug test removes
(tests/cells/test_cell_lstm_global_attention.py).  The backward keeps eps_h~_T,
delta_c, [eps_cT | eps_hT], eps_a and delta_a on the cache (``backward_terms``).

=====================  =========================  ==================
paper                  code                       shape
=====================  =========================  ==================
W_*, U_*, b_* of (4)   ``W``, ``U``, ``b``        (d_x, 4d), (d, 4d), (4d,)
                       (columns i|o|u|f, lstm.py)
W_a                    ``W_a`` (row vector w_a)   (d,)
W_c (acts on [c; h])   ``W_c`` rows c_T | h_T     (2d, A)
bias of (7), ours      ``b_c``                    (A,)
a_t                    ``cache.a[t]``             (n,)
c_T                    ``cache.context[k]``       (sentences, d)
h~_T                   ``out[root]``              (A,); A = attention_dim, 25
=====================  =========================  ==================
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import uniform_fan_in
from .interface import (
    Part,
    SequenceCell,
    StateTerm,
    Term,
    inner_nudge,
    node_rows,
    reasons,
)
from .lstm import ChainLSTM
from npcomp.cells.kernels.recurrence import chain_layout

# Nayebi Sec. 4.1: "the attentional hidden state defined in (7) is 25-dimensional"
ATTENTION_DIM = 25


@dataclass
class GlobalAttentionCache:
    lstm: object  # the LSTM's cache (lstm.py)
    h: np.ndarray  # (n, d) LSTM states
    order: np.ndarray  # chain_layout
    chain_ptr: np.ndarray
    score: np.ndarray  # (n,) e_t
    a: np.ndarray  # (n,) attention weight of each step in its sentence, eq. 6
    features: np.ndarray  # (sentences, 2d) [c_T | h_T]
    h_tilde: np.ndarray  # (sentences, A) eq. 7
    # what the backward leaves for ``backward_terms``: eps_h~_T and delta_c
    # (sentences, A), [eps_cT | eps_hT] (sentences, 2d), eps_a and delta_a (n,)
    eps_h_tilde: np.ndarray | None = None
    delta_c: np.ndarray | None = None
    eps_features: np.ndarray | None = None
    eps_a: np.ndarray | None = None
    delta_a: np.ndarray | None = None


class GlobalAttentionLSTM(SequenceCell):
    """Chain LSTM + softmax attention over the sentence's steps + tanh layer (eqs. 4-7)."""

    name = "lstm-global-attn"
    labels_at_roots_only = True

    def __init__(self, input_dim: int, hidden_dim: int, attention_dim: int = ATTENTION_DIM, forget_bias: float = 0.0):
        if attention_dim < 1:
            raise ValueError(f"{self.name}: attention_dim must be at least 1, not {attention_dim}")
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.attention_dim = attention_dim
        self.output_dim = attention_dim
        self.lstm = ChainLSTM(input_dim, hidden_dim, forget_bias=forget_bias)

    def parameter_shapes(self) -> list:
        d, attention = self.hidden_dim, self.attention_dim
        return self.lstm.parameter_shapes() + [("W_a", (d,)), ("W_c", (2 * d, attention)), ("b_c", (attention,))]

    def report_slices(self) -> dict:
        d = self.hidden_dim
        out = dict(self.lstm.report_slices())
        out["W_c.c"] = ("W_c", (slice(0, d), slice(None)))
        out["W_c.h"] = ("W_c", (slice(d, 2 * d), slice(None)))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """Uniform +-1/sqrt(fan-in), as the other cells."""
        self.lstm.initialise(params, rng)
        uniform_fan_in(params["W_a"], self.hidden_dim, rng)
        uniform_fan_in(params["W_c"], 2 * self.hidden_dim, rng)
        uniform_fan_in(params["b_c"], 2 * self.hidden_dim, rng)

    def recurrent_widths(self) -> list:
        """[d]: the LSTM's h_{t-1} -> step t connection."""
        return [self.hidden_dim]

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d_x) distinct words; word_index: (n,) row of x per node;
        recurrent_masks: None or [m], m (sentences, d).  Returns out (n, A)
        (h~_T at each chain's root, 0 elsewhere) and the cache.  ``nudge``
        (interface.Nudge) moves the LSTM's h or c at a step, a_t once eq. 6
        has made it, or c_T or the h_T that eq. 7 reads (at the last step)."""
        if recurrent_masks is not None and len(recurrent_masks) != 1:
            raise ValueError(f"{self.name} has one recurrent connection, got {len(recurrent_masks)} masks")
        masks = {} if recurrent_masks is None else {"recurrent_masks": recurrent_masks}
        h, lstm_cache = self.lstm.forward(
            params, forest, x, word_index, **masks, nudge=inner_nudge(nudge, {"h": "h", "c": "c"})
        )  # (4)
        d, dtype = self.hidden_dim, h.dtype
        order, chain_ptr = chain_layout(forest)
        score = h @ params["W_a"]  # e_t
        a = np.empty(forest.n_nodes, dtype=dtype)
        features = np.empty((forest.n_trees, 2 * d), dtype=dtype)
        moved = nudge is not None and nudge.state == "a"
        _attention(
            order,
            chain_ptr,
            score,
            h,
            a,
            features,
            nudge.node if moved else -1,
            float(nudge.offset.ravel()[0]) if moved else 0.0,
        )  # (6), (5)
        features[:, d:] = h[forest.root]  # [c_T | h_T]
        if nudge is not None and nudge.state in ("c_T", "h_T"):
            sentence = np.flatnonzero(forest.root == nudge.node)
            columns = slice(0, d) if nudge.state == "c_T" else slice(d, 2 * d)
            features[sentence, columns] += nudge.offset
        h_tilde = np.tanh(features @ params["W_c"] + params["b_c"])  # (7)
        out = np.zeros((forest.n_nodes, self.output_dim), dtype=dtype)
        out[forest.root] = h_tilde
        return out, GlobalAttentionCache(lstm_cache, h, order, chain_ptr, score, a, features, h_tilde)

    def backward(
        self, params: dict, forest: Forest, cache: GlobalAttentionCache, d_out: np.ndarray, grads: dict
    ) -> np.ndarray:
        """d_out: (n, A) dJ/dout (only the roots' rows are read).  Adds dJ/dparams
        into ``grads``; returns dJ/dx (U, d_x)."""
        d = self.hidden_dim
        eps_h_tilde = d_out[forest.root]
        delta_c = eps_h_tilde * (1 - cache.h_tilde**2)  # reverses (7)
        grads["W_c"] += cache.features.T @ delta_c
        grads["b_c"] += delta_c.sum(axis=0)
        eps_features = delta_c @ params["W_c"].T  # [eps_cT | eps_hT]
        eps_h = np.zeros_like(cache.h)
        eps_a = np.empty_like(cache.a)
        delta_a = np.empty_like(cache.a)
        _attention_backward(
            cache.order,
            cache.chain_ptr,
            cache.h,
            cache.a,
            np.ascontiguousarray(eps_features[:, :d]),
            params["W_a"],
            eps_h,
            eps_a,
            delta_a,
        )  # reverses (5), (6)
        eps_h[forest.root] += eps_features[:, d:]  # h_T in (7)
        grads["W_a"] += delta_a @ cache.h
        cache.eps_h_tilde, cache.delta_c, cache.eps_features = eps_h_tilde, delta_c, eps_features
        cache.eps_a, cache.delta_a = eps_a, delta_a
        return self.lstm.backward(params, forest, cache.lstm, eps_h, grads)  # (4)

    def forward_terms(self, forest: Forest, cache: GlobalAttentionCache) -> list:
        """The LSTM's i, f, o, u, c, h (eq. 4), e_t and a_t (one number a step),
        then c_T and h~_T at each sentence's last step."""
        n, d = forest.n_nodes, self.hidden_dim
        return self.lstm.forward_terms(forest, cache.lstm) + [
            Term("e", "6", cache.score, "G2"),
            Term("a", "6", cache.a, "G1"),
            Term("c_T", "5", node_rows(n, forest.root, cache.features[:, :d])),
            Term("h~_T", "7", node_rows(n, forest.root, cache.h_tilde), "G3"),
        ]

    def backward_terms(self, forest: Forest, cache: GlobalAttentionCache) -> list:
        """eps_h~_T, delta_c, eps_cT, eps_hT at the last steps, eps_a and delta_a
        at every step, then the LSTM's error terms (its eps_h every share of
        dJ/dh_t: attention, eq. 7 and the recurrence)."""
        n, d = forest.n_nodes, self.hidden_dim
        root = forest.root
        return [
            Term("eps_h~_T", "reverses 8", node_rows(n, root, cache.eps_h_tilde)),
            Term("delta_c", "reverses 7", node_rows(n, root, cache.delta_c)),
            Term("eps_cT", "reverses 7", node_rows(n, root, cache.eps_features[:, :d])),
            Term("eps_hT", "reverses 7", node_rows(n, root, cache.eps_features[:, d:])),
            Term("eps_a", "reverses 5", cache.eps_a),
            Term("delta_a", "reverses 6", cache.delta_a, "G1"),
        ] + self.lstm.backward_terms(forest, cache.lstm)

    def state_terms(self, forest: Forest, cache: GlobalAttentionCache) -> list:
        """c_T and h_T as eq. 7 reads them (last steps), a_t, then the LSTM's h, c."""
        return [
            StateTerm("c_T", "eps_cT"),
            StateTerm("h_T", "eps_hT"),
            StateTerm("a", "eps_a"),
        ] + self.lstm.state_terms(forest, cache.lstm)

    def term_parts(self, params: dict, forest: Forest, cache: GlobalAttentionCache, d_out: np.ndarray) -> list:
        """The LSTM's eps_h_t from attention (nothing else reads h): a_t eps_cT
        through eq. 5, delta_a_t w_a through the score of eq. 6, and at the
        last step eps_hT through eq. 7; then the LSTM's own parts."""
        n, d = forest.n_nodes, self.hidden_dim
        sentence = forest.tree
        context = cache.a[:, None] * cache.eps_features[sentence, :d]
        last = np.zeros((n, d))
        last[forest.root] = cache.eps_features[:, d:]
        upstream = [
            Part("a_t eps_cT", "reverses 5", context, reasons(n)),
            Part("delta_a_t w_a", "reverses 6 (e_t = h_t w_a)", cache.delta_a[:, None] * params["W_a"], reasons(n)),
            Part(
                "eps_hT",
                "reverses 7 (at the last step)",
                last,
                reasons(n, (forest.parent >= 0, "not the last step: (7) reads h_T")),
            ),
        ]
        return self.lstm.parts_from(params, forest, cache.lstm, upstream, [])


@njit(cache=True, nogil=True)
def _attention(order, chain_ptr, score, h, a, features, nudge_node, nudge_shift):
    """Eqs. 6 and 5 per sentence: a_t = softmax over its steps of e_t (largest
    score subtracted); features[k, :d] = c_T = sum_t a_t h_t.  a[nudge_node]
    += nudge_shift once eq. 6 has made it (-1: no node)."""
    d = h.shape[1]
    for k in range(chain_ptr.shape[0] - 1):
        first, last = chain_ptr[k], chain_ptr[k + 1]
        top = score[order[first]]
        for p in range(first + 1, last):
            top = max(top, score[order[p]])
        total = score[0] * 0
        for p in range(first, last):
            t = order[p]
            a[t] = math.exp(score[t] - top)
            total += a[t]
        for q in range(d):
            features[k, q] = 0
        for p in range(first, last):
            t = order[p]
            a[t] /= total
            if t == nudge_node:
                a[t] += nudge_shift
            for q in range(d):
                features[k, q] += a[t] * h[t, q]


@njit(cache=True, nogil=True)
def _attention_backward(order, chain_ptr, h, a, eps_context, w_a, eps_h, eps_a, delta_a):
    """Reverses eqs. 5 and 6 per sentence k (eps_context[k] = eps_cT):
    eps_h_t += a_t eps_cT;  eps_a_t = h_t . eps_cT;
    delta_a_t = a_t (eps_a_t - sum_t' a_t' eps_a_t');  eps_h_t += delta_a_t w_a."""
    d = h.shape[1]
    for k in range(chain_ptr.shape[0] - 1):
        first, last = chain_ptr[k], chain_ptr[k + 1]
        mean = a[0] * 0  # sum_t' a_t' eps_a_t'
        for p in range(first, last):
            t = order[p]
            total = a[0] * 0
            for q in range(d):
                total += h[t, q] * eps_context[k, q]
                eps_h[t, q] += a[t] * eps_context[k, q]
            eps_a[t] = total
            mean += a[t] * total
        for p in range(first, last):
            t = order[p]
            delta_a[t] = a[t] * (eps_a[t] - mean)
            for q in range(d):
                eps_h[t, q] += delta_a[t] * w_a[q]
