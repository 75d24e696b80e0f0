r"""Compositional matrix-space model (Rudolph & Giesbrecht 2010; Yessenalina &
Cardie 2011), as written in Irsoy & Cardie 2015, Sec. 3.1, eqs. 1-2.

Every word w is a d x d matrix M_w, stored as its embedding row: x_w (d^2,)
is M_w in row-major order (so ``input_dim`` must be ``hidden_dim**2``).  A
sentence s = w_1 .. w_T is the product

    M(s) = M_{w_1} M_{w_2} ... M_{w_T}                                   (1)
    y(s) = h^T u = h_0^T M(s) u                                          (2)

read as a row vector from the left: over chains (one time step per level)

    h_t = h_{t-1} M_{w_t},   h_0 = ``h0`` (learned),   so h_T = h_0 M(s)

The cell's output at node t is h_t = h_0 M_{w_1} .. M_{w_t}, the h of eq. 2
for the prefix w_1..w_t; the model's softmax head plays the part of u at
the labelled nodes.  No non-linearity and no other parameters.

Backward (eps_h_t = dLoss/dh_t), levels from the last word down; node t+1
has already added its share to eps_h_t (no non-linearity: delta_t = eps_h_t):

    d_previous_t = eps_h_t M_{w_t}^T          dLoss/dh_{t-1} through step t
    eps_h_{t-1} += d_previous_t                (t > 1)
    dh_0         = sum over first words t of d_previous_t
    dM_w         = sum over the nodes t reading w of h_{t-1}^T eps_h_t   (d, d)
    dx_w         = dM_w in row-major order     (d^2,), per distinct word

Initial word matrices (``initial_embedding``): a product of T random
matrices grows or shrinks geometrically, so words start near the identity,
M_w = I + E with E_kl ~ U(-a, a), a = 0.1 / sqrt(d).  For a unit row u,
|u M_w| = 1 + u E u^T + O(a^2), so each word moves log|h| by a step of
standard deviation a / sqrt(3) = 0.058 / sqrt(d) and mean (a^2/3)(d/2 - 1)
< 0.0017: after T words with independent matrices log|h| has spread
0.058 sqrt(T / d) (0.24 for 50 words at d = 3; 0.58 for 300) and drift
< 0.0017 T (measured over 200 draws at d = 3, T = 300: mean 0.23, spread
0.62).  A word repeated in the sentence applies the same E again, which
widens the spread (300 words from a 40-word vocabulary, d = 3: mean 1.2,
spread 1.3), but nothing comes near overflow
(``tests/cells/test_cell_matrix_space.py::test_long_chain_stays_finite``).
h_0 is drawn from U(+-1/sqrt(d)) (fan-in d, as the other cells' biases).

Sentences beyond the floating-point range.  Training can make word matrices
that grow the state: with |h M_w| = g |h| at every word, a T-word sentence
has |h_T| = g^T |h_0|, which for g = 1.2 passes float32's 3.4e38 after about
490 words.  Eq. 1 then has no finite value in that precision, and the head
reads h's scale, so renormalising the product would be another model.  The
forward therefore refuses such a sentence (``StateOverflow``, naming the word
where the product left the range) when every word matrix and h_0 are
finite; ``predict``, ``eval`` and training name the sentence's file and line.
Non-finite parameters are left to the trainer's own checks.

=========================  ==================================  ==========
paper (Irsoy)              code                                shape
=========================  ==================================  ==========
M_w (m x m, m = d)         ``x[w].reshape(d, d)`` (embedding)   (d^2,)
h_0                        ``h0``                              (d,)
h (eq. 2), prefix states   ``h``                               (n, d)
h_{t-1}                    ``cache.previous``                  (n, d)
eps_h_t M_{w_t}^T          ``d_previous`` (kept on the cache)  (n, d)
u (eq. 2)                  the softmax head ``softmax.W``      (d, classes)
=========================  ==================================  ==========

Parameters: d (h0) and the embedding table, |V| d^2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import uniform_fan_in
from .interface import Part, SequenceCell, StateTerm, Term, TermParts, head_part, nudge_rows, steps_after
from npcomp.cells.kernels.overflow import StateOverflow
from npcomp.cells.kernels.recurrence import outer_products_by_word


@dataclass
class MatrixSpaceCache:
    matrices: np.ndarray  # (U, d, d) M_w per distinct word
    word_index: np.ndarray  # (n,) row of x each node reads
    previous: np.ndarray  # (n, d) h_{t-1} per node, h_0 at first words
    h: np.ndarray  # (n, d) prefix states h_t, the forward's output
    # what the backward leaves for ``backward_terms``: eps_h (n, d) and
    # d_previous (n, d), step t's share eps_h_t M_{w_t}^T of dLoss/dh_{t-1}
    eps_h: np.ndarray | None = None
    d_previous: np.ndarray | None = None


class MatrixSpace(SequenceCell):
    """Irsoy eqs. 1-2 over chains: h_t = h_{t-1} M_{w_t} from a learned h_0."""

    name = "matrix-space"

    def __init__(self, input_dim: int, hidden_dim: int):
        if input_dim != hidden_dim * hidden_dim:
            raise ValueError(
                f"matrix-space: a word is a d x d matrix, so the embedding "
                f"dimension must be d^2 = {hidden_dim * hidden_dim} for d = "
                f"{hidden_dim}, not {input_dim}"
            )
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim

    def parameter_shapes(self) -> list:
        return [("h0", (self.hidden_dim,))]

    def report_slices(self) -> dict:
        return {}

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """h_0 from U(+-1/sqrt(d)); the word matrices are the embedding's
        (``initial_embedding``)."""
        uniform_fan_in(params["h0"], self.hidden_dim, rng)

    def initial_embedding(self, vocab_size: int, rng: np.random.Generator) -> np.ndarray:
        """(vocab_size, d^2): every word matrix the identity plus U(+-0.1/sqrt(d))
        noise, row-major (module docstring: products of hundreds stay finite)."""
        d = self.hidden_dim
        bound = 0.1 / np.sqrt(d)
        out = rng.uniform(-bound, bound, size=(vocab_size, d, d))
        out += np.eye(d)
        return out.reshape(vocab_size, d * d)

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d^2) distinct words' matrices (row-major); word_index: (n,) the
        row of x each node reads.  Returns h (n, d), cache.  ``nudge``
        (interface.Nudge) moves one step's h once it is computed."""
        if recurrent_masks is not None:
            raise ValueError("matrix-space has no recurrent dropout (no recurrent weights)")
        n, d = forest.n_nodes, self.hidden_dim
        previous_node = np.ascontiguousarray(forest.children[:, 0])
        matrices = np.ascontiguousarray(x).reshape(x.shape[0], d, d)
        h0 = np.ascontiguousarray(params["h0"], dtype=x.dtype)
        previous = np.empty((n, d), dtype=x.dtype)
        h = np.empty((n, d), dtype=x.dtype)

        def rows_forward(start: int, stop: int) -> None:
            _multiply_rows(previous_node, h0, matrices, word_index, previous, h, start, stop)
            nudge_rows(nudge, "h", h, start, stop)

        for start, stop in forest.levels():
            rows_forward(start, stop)
        _refuse_overflow(forest, h, matrices, h0)
        return h, MatrixSpaceCache(matrices, word_index, previous, h)

    def backward(
        self, params: dict, forest: Forest, cache: MatrixSpaceCache, d_h: np.ndarray, grads: dict
    ) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten: eps_h accumulates in
        it).  Adds dLoss/dh0 into ``grads``; returns dLoss/dx (U, d^2)."""
        n, d = forest.n_nodes, self.hidden_dim
        previous_node = np.ascontiguousarray(forest.children[:, 0])
        d_previous = np.empty((n, d), dtype=d_h.dtype)

        def rows_backward(start: int, stop: int) -> None:
            _route_to_previous(previous_node, cache.matrices, cache.word_index, d_h, d_previous, start, stop)

        for start, stop in forest.levels(downward=True):
            rows_backward(start, stop)
        grads["h0"] += d_previous[previous_node < 0].sum(axis=0)
        n_words = cache.matrices.shape[0]
        d_matrices = np.zeros((n_words, d, d), dtype=d_h.dtype)
        outer_products_by_word(cache.previous, d_h, cache.word_index, d_matrices, 0, n)
        cache.eps_h, cache.d_previous = d_h, d_previous
        return d_matrices.reshape(n_words, d * d)

    def forward_terms(self, forest: Forest, cache: MatrixSpaceCache) -> list:
        """Per node t: its word's matrix M (d, d), h_{t-1} (h_0 at a first
        word, MS2) and the prefix state h_t = h_0 M_{w_1} .. M_{w_t} (MS3)."""
        return [
            Term("M", "1", cache.matrices[cache.word_index]),
            Term("h_{t-1}", "2", cache.previous, "MS2"),
            Term("h", "2", cache.h, "MS3"),
        ]

    def backward_terms(self, forest: Forest, cache: MatrixSpaceCache) -> list:
        """eps_h_t (the head's and step t+1's share; no non-linearity, so it is
        also delta_t) and eps_h_{t-1} = eps_h_t M_{w_t}^T, step t's share of
        dLoss/dh_{t-1} (at a first word, of dLoss/dh_0)."""
        return [Term("eps_h", "reverses 2", cache.eps_h), Term("eps_h_{t-1}", "reverses 2", cache.d_previous)]

    def state_terms(self, forest: Forest, cache: MatrixSpaceCache) -> list:
        """h at every step."""
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: MatrixSpaceCache, d_out: np.ndarray) -> list:
        """eps_h_t: the head's, and step t+1's eps_h_{t+1} M_{w_{t+1}}^T."""
        steps, after, last = steps_after(forest)
        recurrence = np.zeros(cache.eps_h.shape)
        recurrence[steps] = np.einsum("mki,mi->mk", cache.matrices[cache.word_index[after]], cache.eps_h[after])
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses the classifier"),
                    Part("eps_h_{t+1} M_{w_{t+1}}^T", "reverses 2 (step t+1)", recurrence, last),
                ],
            )
        ]


def _refuse_overflow(forest: Forest, h: np.ndarray, matrices: np.ndarray, h0: np.ndarray) -> None:
    """Raise StateOverflow when a prefix product left the floating-point range
    although every word matrix and h_0 are finite: eq. 1's product of a long
    sentence whose matrices grow the state at each word has no finite value
    in this precision, so no score exists to return (renormalising it would
    be another model: its scale is what the head reads)."""
    if np.isfinite(h).all() or not (np.isfinite(matrices).all() and np.isfinite(h0).all()):
        return
    node = int(np.flatnonzero(~np.isfinite(h).all(axis=1))[0])
    tree = int(forest.tree[node])
    length = int(np.count_nonzero(forest.tree == tree))
    limit = np.finfo(h.dtype).max
    raise StateOverflow(
        f"matrix-space: the product of the word matrices of this {length}-word sentence "
        f"leaves the {h.dtype} range (|h| > {limit:.3g}) at word {int(forest.origin[node]) + 1}, "
        "so eq. 1 has no finite value to score",
        tree,
    )


@njit(cache=True, nogil=True)
def _multiply_rows(previous_node, h0, matrices, word_index, previous, h, start, stop):
    """h_t = h_{t-1} M_{w_t}, with h_{t-1} = h_0 at a first word; keeps h_{t-1}."""
    d = h.shape[1]
    for t in range(start, stop):
        before = previous_node[t]
        for k in range(d):
            previous[t, k] = h[before, k] if before >= 0 else h0[k]
        row = word_index[t]
        for i in range(d):
            h[t, i] = 0.0
        for k in range(d):
            state = previous[t, k]
            for i in range(d):
                h[t, i] += state * matrices[row, k, i]


@njit(cache=True, nogil=True)
def _route_to_previous(previous_node, matrices, word_index, d_h, d_previous, start, stop):
    """d_previous_t = eps_h_t M_{w_t}^T, added to eps_h_{t-1} (kept for h_0 at a
    first word)."""
    d = d_h.shape[1]
    for t in range(start, stop):
        row = word_index[t]
        before = previous_node[t]
        for k in range(d):
            total = 0.0
            for i in range(d):
                total += matrices[row, k, i] * d_h[t, i]
            d_previous[t, k] = total
            if before >= 0:
                d_h[before, k] += total
