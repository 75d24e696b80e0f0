r"""Elman recurrent network (Elman 1990), as written in Irsoy & Cardie 2015,
Sec. 3.2, eqs. 3-4.

A sentence is a chain in the forest (node t reads word t and is the only
child of node t+1), so a minibatch of sequences advances one time step per
level.  Row-vector orientation (``x @ W`` is the paper's W x):

    h_t = f( x_t W + h_{t-1} V + b ),   h_0 = 0                          (3)
    y_t = g( h_t U + c )                                                 (4)

f in {tanh, relu, identity, sigmoid} (option ``activation``, default tanh;
Irsoy's superscript "+" is the rectifier).  Eq. 4 is the model's softmax
head (``softmax.W``, ``softmax.b``), read at the labelled nodes; this module
is eq. 3.

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()
== [d]``; with ``recurrent_masks=[m]``, m (sentences, d), sentence s reads
its previous state through its own mask, the same at every step:

    h~_{t-1} = h_{t-1} * m_s;   h_t = f( x_t W + h~_{t-1} V + b )        (3, masked)

h_t itself (what the classifier reads) is not masked.  Without masks m_s = 1.

Computation.  x_t W + b depends on the word only: ``word_terms = x W + b``
once per distinct word (U rows).  Level 0 holds every sentence's first word
(h_0 = 0: h = f(word term)); each further level gathers h~_{t-1} of its
nodes (``previous``), makes one product ``previous @ V`` and adds the word
terms and f in a kernel.

Backward (eps_h_t = dLoss/dh_t, delta_t = dLoss/d pre-activation), levels
from the last word down; when node t is reached its successor t+1 has
already added its share to eps_h_t:

    delta_t       = eps_h_t * f'(h_t)         f' from the output: 1-h^2, 1[h>0], 1, h(1-h)
    eps_h_{t-1}  += (delta_t V^T) * m_s       reverses h~_{t-1} V and the mask
    dV = sum_t h~_{t-1}^T delta_t,   db = sum_t delta_t
    delta_word[w] = sum of delta_t over the nodes t reading word w   (U, d)
    dW = x^T delta_word,   dx = delta_word W^T                         (per distinct word)

=========================  ===================  ==========
paper (Irsoy)              code                 shape
=========================  ===================  ==========
W (d x d_x)                ``W`` (= W^T)        (d_x, d)
V (d x d)                  ``V`` (= V^T)        (d, d)
b                          ``b``                (d,)
h_{t-1} (masked)           ``cache.previous``   (n + 3, d), 0 at first words
h_t                        ``h``                (n, d)
x_t W + h~_{t-1} V + b     ``cache.z``          (n + 3, d)
eps_h_t, delta_t           ``d_h``, ``delta``   (n, d), (n + 3, d)
=========================  ===================  ==========

The forward keeps the pre-activations z and the backward eps_h and delta on
the cache, for ``forward_terms`` and ``backward_terms``.

Parameters: d d_x + d^2 + d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import activate, activation_code, uniform_fan_in
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import Part, SequenceCell, StateTerm, Term, TermParts, head_part, nudge_rows, steps_after
from npcomp.cells.kernels.levels import ROW_PAD, padded_stop
from npcomp.cells.kernels.recurrence import activation_deltas, gather_previous, recurrent_mask


@dataclass
class ElmanRNNCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (n,) row of x each node reads
    previous: np.ndarray  # (n + ROW_PAD, d) h~_{t-1} = h_{t-1} * m_s per node, 0 at first words
    h: np.ndarray  # (n, d) states h_t
    mask: np.ndarray  # (trees, d) recurrent-dropout mask per sentence (ones: none)
    z: np.ndarray  # (n + ROW_PAD, d) pre-activations x_t W + h~_{t-1} V + b
    # what the backward leaves for ``backward_terms``: eps_h (n, d), delta (n + ROW_PAD, d)
    eps_h: np.ndarray | None = None
    delta: np.ndarray | None = None


class ElmanRNN(SequenceCell):
    """Irsoy eq. 3 over chains; ``forward``/``backward`` over a whole forest."""

    name = "rnn"

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh"):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.activation = activation
        self.code = activation_code(activation)

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return [("W", (self.input_dim, d)), ("V", (d, d)), ("b", (d,))]

    def report_slices(self) -> dict:
        return {}

    def recurrent_widths(self) -> list:
        """One recurrent connection, h_{t-1} -> step t, d wide."""
        return [self.hidden_dim]

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """U(+-1/sqrt(fan-in)), each matrix by the inputs it reads: d_x for W,
        d for V and b (as the Tree-LSTMs' U and b)."""
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
        n, d = forest.n_nodes, self.hidden_dim
        dtype = x.dtype
        previous_node = np.ascontiguousarray(forest.children[:, 0])
        mask = recurrent_mask(self.name, forest, recurrent_masks, d, dtype)
        word_terms = x @ params["W"] + params["b"]  # x_t W + b, per word
        previous = np.zeros((n + ROW_PAD, d), dtype=dtype)
        # h~_{t-1} V per level, completed to the pre-activation by _activate_rows
        recurrent = np.zeros((n + ROW_PAD, d), dtype=dtype)
        h = np.empty((n, d), dtype=dtype)
        V = params["V"]
        # level 0: the first words, h_0 = 0 so the recurrent term is 0
        _activate_rows(self.code, recurrent, word_terms, word_index, h, 0, forest.n_leaves)
        nudge_rows(nudge, "h", h, 0, forest.n_leaves)

        def rows_forward(start: int, stop: int) -> None:
            gather_previous(previous_node, forest.tree, mask, h, previous, start, stop)
            padded = padded_stop(start, stop)
            # h~_{t-1} V for the level; padding rows are the next level's, overwritten later
            np.matmul(previous[start:padded], V, out=recurrent[start:padded])
            _activate_rows(self.code, recurrent, word_terms, word_index, h, start, stop)
            nudge_rows(nudge, "h", h, start, stop)

        for start, stop in forest.levels(first=1):
            rows_forward(start, stop)
        return h, ElmanRNNCache(x, word_index, previous, h, mask, recurrent)

    def backward(self, params: dict, forest: Forest, cache: ElmanRNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten: eps_h accumulates in
        it).  Adds dLoss/dW, dV, db into ``grads``; returns dLoss/dx (U, d_x)."""
        n, d = forest.n_nodes, self.hidden_dim
        previous_node = np.ascontiguousarray(forest.children[:, 0])
        delta = np.zeros((n + ROW_PAD, d), dtype=d_h.dtype)
        d_previous = np.zeros((n + ROW_PAD, d), dtype=d_h.dtype)
        v_transposed = np.ascontiguousarray(params["V"].T)

        def rows_backward(start: int, stop: int) -> None:
            activation_deltas(self.code, cache.h, d_h, delta, start, stop)  # reverses f of eq. 3
            padded = padded_stop(start, stop)
            np.matmul(delta[start:padded], v_transposed, out=d_previous[start:padded])
            _route_to_previous(
                previous_node, forest.tree, cache.mask, d_previous, d_h, start, stop
            )  # reverses h~_{t-1} V

        for start, stop in forest.levels(first=1, downward=True):
            rows_backward(start, stop)
        activation_deltas(self.code, cache.h, d_h, delta, 0, forest.n_leaves)
        leaves = forest.n_leaves
        # the first words' h~_0 = 0 adds nothing to dV
        grads["V"] += cache.previous[leaves:n].T @ delta[leaves:n]
        delta_word = sum_by_index(delta[:n], cache.word_index, cache.x.shape[0])
        grads["W"] += cache.x.T @ delta_word
        grads["b"] += delta_word.sum(axis=0)
        cache.eps_h, cache.delta = d_h, delta
        return delta_word @ params["W"].T

    def forward_terms(self, forest: Forest, cache: ElmanRNNCache) -> list:
        """h~_{t-1} (h_0 = 0 at first words, I2), the pre-activation z and h_t."""
        n = forest.n_nodes
        rectifier = "I1" if self.activation == "relu" else ""
        return [
            Term("h~_{t-1}", "3", cache.previous[:n], "I2"),
            Term("z", "3", cache.z[:n]),
            Term("h", "3", cache.h, rectifier),
        ]

    def backward_terms(self, forest: Forest, cache: ElmanRNNCache) -> list:
        """eps_h_t (the head's and step t+1's share) and delta_t = eps_h_t f'(h_t)."""
        n = forest.n_nodes
        return [Term("eps_h", "reverses 4, 3", cache.eps_h), Term("delta", "reverses 3", cache.delta[:n])]

    def state_terms(self, forest: Forest, cache: ElmanRNNCache) -> list:
        """h at every step."""
        return [StateTerm("h", "eps_h")]

    def term_parts(self, params: dict, forest: Forest, cache: ElmanRNNCache, d_out: np.ndarray) -> list:
        """eps_h_t: the head's, and step t+1's (delta_{t+1} V^T) * m_s."""
        steps, after, last = steps_after(forest)
        recurrence = np.zeros(cache.eps_h.shape)
        recurrence[steps] = (cache.delta[after] @ params["V"].T) * cache.mask[forest.tree[steps]]
        return [
            TermParts(
                "eps_h",
                [
                    head_part(forest, d_out, equation="reverses 4"),
                    Part("(delta_{t+1} V^T) * m", "reverses 3 (step t+1)", recurrence, last),
                ],
            )
        ]


@njit(cache=True, nogil=True)
def _activate_rows(code, recurrent, word_terms, word_index, h, start, stop):
    """Eq. 3: h_t = f(h~_{t-1} V + (x_t W + b)), the word term by its row; the
    pre-activation is kept in ``recurrent`` (for ``forward_terms``)."""
    for t in range(start, stop):
        row = word_index[t]
        for q in range(h.shape[1]):
            z = recurrent[t, q] + word_terms[row, q]
            recurrent[t, q] = z
            h[t, q] = activate(code, z)


@njit(cache=True, nogil=True)
def _route_to_previous(previous_node, tree, mask, d_previous, d_h, start, stop):
    """eps_h_{t-1} += dLoss/dh~_{t-1} * m_s (nothing to route at a first word)."""
    for t in range(start, stop):
        before = previous_node[t]
        if before < 0:
            continue
        sentence = tree[t]
        for q in range(d_h.shape[1]):
            d_h[before, q] += d_previous[t, q] * mask[sentence, q]
