r"""Multiplicative recurrent network (Sutskever et al. 2011), as written in
Irsoy & Cardie 2015, Sec. 4.1, eqs. 5-6: "mRNN", "mRecurrent".

Over chains as ``rnn.py`` (one time step per level).  Irsoy's tensor A is
d_h x d_x x d_h, (x^T A y)_i = x^T A^[i] y with slice A^[i] (d_x x d_h).  The
code stores it as ``A`` (d_x, d, d) with ``A[j, k, i]`` = A^[i]_jk, so that in
the row-vector orientation the code computes (``x @ W`` is the paper's W x)

    M_t = x_t A           (d, d), M_t[k, i] = sum_j x_tj A[j, k, i]
    h_t = f( h_{t-1} M_t + x_t W + h_{t-1} V + b ),   h_0 = 0            (5)
    y_t = g( h_t U + c )                                                 (6)

(h_{t-1} M_t)_i = sum_jk x_tj A^[i]_jk h_{t-1,k} = (x_t^T A^[i] h_{t-1}): eq. 5's
bilinear term.  M_t is the transpose of Sec. 4.3's M(w_t) = x_t^T A (which
acts on column vectors, eq. 10), i.e. exactly the matrix-space model's M_w
of eq. 2 (row form, ``matrix_space.py``).  f in {identity, relu, tanh}
(option ``activation``, default tanh; Irsoy's "I", "+", "tanh").  Eq. 6 is
the model's softmax head.

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()
== [d]``; sentence s reads h~_{t-1} = h_{t-1} * m_s in place of h_{t-1} in
*both* the bilinear and the V term of eq. 5; h_t itself is not masked.

Computation.  M_t and x_t W + b depend on the word only: per distinct word w,
one product each,

    G_w = (x A.reshape(d_x, d^2)).reshape(U, d, d) + V      (U, d, d): M_t + V
    word_terms = x W + b                                    (U, d)

so eq. 5 is h_t = f( h~_{t-1} G_{w_t} + word_terms[w_t] ): a kernel contracts
each node's h~_{t-1} with its word's G (level 0, the first words: h_0 = 0,
h = f(word term)).

Backward (eps_h_t = dLoss/dh_t, delta_t = dLoss/d pre-activation), levels
from the last word down; node t+1 has already added its share to eps_h_t:

    delta_t      = eps_h_t * f'(h_t)          f' from the output: 1, 1[h>0], 1-h^2
    eps_h_{t-1} += (delta_t G_{w_t}^T) * m_s  reverses h~ M_t + h~ V and the mask
    dG_w  = sum over the nodes t reading w of h~_{t-1}^T delta_t          (U, d, d)
    dV    = sum_w dG_w                        (dV = sum_t h~_{t-1}^T delta_t)
    dA    = (x^T dG.reshape(U, d^2)).reshape(d_x, d, d)
            (dA[j, k, i] = sum_t x_tj h~_{t-1,k} delta_ti: the outer products,
             summed per distinct word first, then one product)
    delta_word[w] = sum of delta_t over the nodes t reading w             (U, d)
    dW = x^T delta_word,   db = sum_t delta_t
    dx = delta_word W^T + dG.reshape(U, d^2) A.reshape(d_x, d^2)^T        (per distinct word)

=========================  ==========================  ==============
paper (Irsoy)              code                        shape
=========================  ==========================  ==============
A (d_h x d_x x d_h)        ``A``, A^[i]_jk = A[j,k,i]  (d_x, d, d)
W (d_h x d_x)              ``W`` (= W^T)               (d_x, d)
V (d_h x d_h)              ``V`` (= V^T)               (d, d)
b                          ``b``                       (d,)
M(w_t)^T (Sec. 4.3)        ``matrices[w] - V``         (d, d)
h_{t-1} (masked)           ``cache.previous``          (n, d), 0 at first words
h~ G_{w_t} + x_t W + b     ``cache.z``                 (n, d)
eps_h_t, delta_t           ``d_h``, ``delta``          (n, d)
=========================  ==========================  ==============

The forward keeps the pre-activations z and the backward eps_h and delta on
the cache, for ``forward_terms`` and ``backward_terms``.

Parameters: d^2 d_x + d d_x + d^2 + d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import activate, activation_code, uniform_fan_in
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import Part, SequenceCell, StateTerm, Term, TermParts, head_part, nudge_rows, steps_after
from npcomp.cells.kernels.recurrence import (
    activation_deltas,
    gather_previous,
    outer_products_by_word,
    recurrent_mask,
)


@dataclass
class MultiplicativeRNNCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (n,) row of x each node reads
    matrices: np.ndarray  # (U, d, d) G_w = x_w A + V per distinct word
    previous: np.ndarray  # (n, d) h~_{t-1} = h_{t-1} * m_s per node, 0 at first words
    h: np.ndarray  # (n, d) states h_t
    mask: np.ndarray  # (trees, d) recurrent-dropout mask per sentence (ones: none)
    z: np.ndarray  # (n, d) pre-activations h~_{t-1} G_{w_t} + x_t W + b
    # what the backward leaves for ``backward_terms``: eps_h, delta (n, d)
    eps_h: np.ndarray | None = None
    delta: np.ndarray | None = None


class MultiplicativeRNN(SequenceCell):
    """Irsoy eq. 5 over chains; ``forward``/``backward`` over a whole forest."""

    name = "mrnn"

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh"):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.activation = activation
        self.code = activation_code(activation)

    def parameter_shapes(self) -> list:
        d, d_x = self.hidden_dim, self.input_dim
        return [("A", (d_x, d, d)), ("W", (d_x, d)), ("V", (d, d)), ("b", (d,))]

    def report_slices(self) -> dict:
        return {}

    def recurrent_widths(self) -> list:
        """One recurrent connection, h_{t-1} -> step t, d wide."""
        return [self.hidden_dim]

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """U(+-1/sqrt(fan-in)): each unit of the bilinear term sums d_x d
        products x_j h_k, so A uses d_x d; W d_x; V and b d (as rnn.py)."""
        uniform_fan_in(params["A"], self.input_dim * self.hidden_dim, rng)
        uniform_fan_in(params["W"], self.input_dim, rng)
        uniform_fan_in(params["V"], self.hidden_dim, rng)
        uniform_fan_in(params["b"], self.hidden_dim, rng)

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d_x) distinct words' vectors; word_index: (n,) the row of x each
        node reads; ``recurrent_masks``: None or [m], m (trees, d).  Returns
        h (n, d), cache.  ``nudge`` (interface.Nudge) moves one step's h once
        it is computed."""
        n, d, d_x = forest.n_nodes, self.hidden_dim, self.input_dim
        dtype = x.dtype
        previous_node = np.ascontiguousarray(forest.children[:, 0])
        mask = recurrent_mask(self.name, forest, recurrent_masks, d, dtype)
        n_words = x.shape[0]
        # per distinct word: G_w = x_w A + V (the bilinear and V terms share h~) and x_w W + b
        matrices = (x @ params["A"].reshape(d_x, d * d)).reshape(n_words, d, d)
        matrices += params["V"]
        word_terms = x @ params["W"] + params["b"]
        previous = np.zeros((n, d), dtype=dtype)
        z = np.empty((n, d), dtype=dtype)
        h = np.empty((n, d), dtype=dtype)

        def rows_forward(start: int, stop: int) -> None:
            gather_previous(previous_node, forest.tree, mask, h, previous, start, stop)
            _bilinear_rows(self.code, previous, matrices, word_terms, word_index, z, h, start, stop)
            nudge_rows(nudge, "h", h, start, stop)

        for start, stop in forest.levels():  # level 0: previous = h_0 = 0
            rows_forward(start, stop)
        return h, MultiplicativeRNNCache(x, word_index, matrices, previous, h, mask, z)

    def backward(
        self, params: dict, forest: Forest, cache: MultiplicativeRNNCache, d_h: np.ndarray, grads: dict
    ) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten: eps_h accumulates in
        it).  Adds dLoss/dA, dW, dV, db into ``grads``; returns dLoss/dx (U, d_x)."""
        n, d, d_x = forest.n_nodes, self.hidden_dim, self.input_dim
        previous_node = np.ascontiguousarray(forest.children[:, 0])
        delta = np.zeros((n, d), dtype=d_h.dtype)

        def rows_backward(start: int, stop: int) -> None:
            activation_deltas(self.code, cache.h, d_h, delta, start, stop)  # reverses f of eq. 5
            _route_to_previous(
                previous_node, forest.tree, cache.mask, cache.matrices, cache.word_index, delta, d_h, start, stop
            )

        for start, stop in forest.levels(first=1, downward=True):
            rows_backward(start, stop)
        activation_deltas(self.code, cache.h, d_h, delta, 0, forest.n_leaves)
        n_words = cache.x.shape[0]
        d_matrices = np.zeros((n_words, d, d), dtype=d_h.dtype)
        # the first words' h~_0 = 0 add nothing to dG
        outer_products_by_word(cache.previous, delta, cache.word_index, d_matrices, forest.n_leaves, n)
        grads["V"] += d_matrices.sum(axis=0)
        d_matrices_flat = d_matrices.reshape(n_words, d * d)
        a_flat = params["A"].reshape(d_x, d * d)
        grads["A"] += (cache.x.T @ d_matrices_flat).reshape(d_x, d, d)
        delta_word = sum_by_index(delta, cache.word_index, n_words)
        grads["W"] += cache.x.T @ delta_word
        grads["b"] += delta_word.sum(axis=0)
        cache.eps_h, cache.delta = d_h, delta
        return delta_word @ params["W"].T + d_matrices_flat @ a_flat.T

    def forward_terms(self, forest: Forest, cache: MultiplicativeRNNCache) -> list:
        """h~_{t-1} (h_0 = 0 at first words; masked in both recurrent terms,
        M6), the pre-activation z and h_t."""
        return [Term("h~_{t-1}", "5", cache.previous, "M6"), Term("z", "5", cache.z), Term("h", "5", cache.h)]

    def backward_terms(self, forest: Forest, cache: MultiplicativeRNNCache) -> list:
        """eps_h_t (the head's and step t+1's share) and delta_t = eps_h_t f'(h_t)."""
        return [Term("eps_h", "reverses 6, 5", cache.eps_h), Term("delta", "reverses 5", cache.delta)]

    def state_terms(self, forest: Forest, cache: MultiplicativeRNNCache) -> list:
        """h at every step."""
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: MultiplicativeRNNCache, d_out: np.ndarray) -> list:
        """eps_h_t: the head's, and step t+1's through h~_t G_{w_{t+1}}, G = x A
        + V: its bilinear (x_{t+1} A) and its V part, each times m_s."""
        n, d, d_x = forest.n_nodes, self.hidden_dim, self.input_dim
        steps, after, last = steps_after(forest)
        mask = cache.mask[forest.tree[steps]]
        delta = cache.delta[after]
        words = cache.x[cache.word_index[after]]  # x_{t+1}
        bilinear, linear = np.zeros((n, d)), np.zeros((n, d))
        tensor = (words @ params["A"].reshape(d_x, d * d)).reshape(-1, d, d)
        bilinear[steps] = np.einsum("mki,mi->mk", tensor, delta) * mask
        linear[steps] = (delta @ params["V"].T) * mask
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses 6"),
                    Part("(delta_{t+1} (x_{t+1} A)^T) * m", "reverses 5 (step t+1)", bilinear, last),
                    Part("(delta_{t+1} V^T) * m", "reverses 5 (step t+1)", linear, last),
                ],
            )
        ]


@njit(cache=True, nogil=True)
def _bilinear_rows(code, previous, matrices, word_terms, word_index, z, h, start, stop):
    """Eq. 5: h_t = f( h~_{t-1} G_{w_t} + (x_t W + b) ), G_w = x_w A + V; the
    pre-activation is kept in z (for ``forward_terms``)."""
    d = h.shape[1]
    for t in range(start, stop):
        row = word_index[t]
        for i in range(d):
            h[t, i] = word_terms[row, i]
        for k in range(d):
            state = previous[t, k]
            if state != 0.0:  # a first word's h_0 = 0 (and dropped units) add nothing
                for i in range(d):
                    h[t, i] += state * matrices[row, k, i]
        for i in range(d):
            z[t, i] = h[t, i]
            h[t, i] = activate(code, h[t, i])


@njit(cache=True, nogil=True)
def _route_to_previous(previous_node, tree, mask, matrices, word_index, delta, d_h, start, stop):
    """eps_h_{t-1} += (delta_t G_{w_t}^T) * m_s: reverses h~_{t-1} G_{w_t}."""
    d = d_h.shape[1]
    for t in range(start, stop):
        before = previous_node[t]
        if before < 0:
            continue
        row = word_index[t]
        sentence = tree[t]
        for k in range(d):
            total = 0.0
            for i in range(d):
                total += matrices[row, k, i] * delta[t, i]
            d_h[before, k] += total * mask[sentence, k]
