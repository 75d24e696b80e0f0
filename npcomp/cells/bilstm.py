r"""Bidirectional LSTM (Tai, Socher & Manning 2015, Sec. 2.2 and footnote 2;
Graves et al. 2013; Nayebi & Blundell Sec. 3.3).

Two chain LSTMs (Tai eq. 1, ``lstm.py``) read the sentence, one from the
first word to the last (forward states h^F_t) and one from the last word to
the first (backward states h^B_t, computed on the reversed chains,
``forest.reverse_chains``):

    h^F_t = LSTM_F(x_t, h^F_{t-1}),   h^B_t = LSTM_B(x_t, h^B_{t+1})          (Tai eq. 1 twice)

"At each time step, the hidden state of the Bidirectional LSTM is the
concatenation of the forward and backward hidden states" (Tai Sec. 2.2), and
the sentence is represented by the two final states, each having read the
whole sentence.  So the cell's output (2d) at word t of a chain of T words is

    out_t = [ h^F_t ; h^B_t ]    for t < T
    out_T = [ h^F_T ; h^B_1 ]    at the chain's root, the sentence (or phrase)
                                  representation the classifier reads

(the chain tasks label only the root).  Footnote 2: "the parameters of the
forward and backward transition functions are shared" (the default); with
``untied=True`` the backward LSTM has weights of its own.

``forward_steps`` gives the per-step outputs instead, out_t = [h^F_t ; h^B_t]
at every row including the root: the input a second bidirectional layer
reads at step t (``bilstm2.py``).

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()
== [d, d]``, the masks [m^F, m^B] (sentences, d) of the forward and the
backward LSTM's h_{t-1} -> step t connections (lstm.py).  They are separate
masks even when the weights are tied: two connections, two masks.  The
reversed forest keeps each node's sentence (``forest.tree``), so m^B is
indexed by sentence in either order.

Backward: d_out splits into dJ/dh^F (first d columns, every row) and
dJ/dh^B (last d columns: row t to h^B_t, the root's row to h^B_1 -- to
h^B_T with ``forward_steps``); each LSTM
back-propagates its share through its own chains (treelstm_nary.py's
backward with one child), adding into the same gradients when tied, and
the two d_x are summed per distinct word.

=====================  ==============================  ==========
paper                  code                            shape
=====================  ==============================  ==========
W, U, b of eq. 1       ``W`` (i|o|u|f), ``U``, ``b``   (d_x, 4d), (d, 4d), (4d,)
backward LSTM, untied  ``W_backward``, ``U_backward``,  the same
                       ``b_backward``
=====================  ==============================  ==========
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..forest import Forest, reverse_chains
from .lstm import ChainLSTM

BACKWARD = "_backward"


@dataclass
class BiLSTMCache:
    forward: object          # the forward LSTM's cache
    backward: object         # the backward LSTM's cache (reversed-forest order)
    reversed_forest: Forest
    order: np.ndarray        # reversed node r is node order[r]
    backward_row: np.ndarray  # (n,) reversed node whose h^B each node's output holds


class BiLSTM:
    """Two chain LSTMs over a forest of chains, outputs concatenated."""

    name = "bilstm"
    options = ("untied",)

    def __init__(self, input_dim: int, hidden_dim: int, untied: bool = False):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = 2 * hidden_dim
        self.untied = untied
        self.lstm = ChainLSTM(input_dim, hidden_dim)

    def parameter_shapes(self) -> list:
        shapes = self.lstm.parameter_shapes()
        if self.untied:
            shapes += [(name + BACKWARD, shape) for name, shape in self.lstm.parameter_shapes()]
        return shapes

    def report_slices(self) -> dict:
        out = dict(self.lstm.report_slices())
        if self.untied:
            out.update({sub + BACKWARD: (block + BACKWARD, index)
                        for sub, (block, index) in self.lstm.report_slices().items()})
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        self.lstm.initialise(params, rng)
        if self.untied:
            self.lstm.initialise(self._backward(params), rng)

    def _backward(self, params: dict) -> dict:
        """The backward LSTM's parameters (or gradients) under the LSTM's names."""
        if not self.untied:
            return params
        return {name: params[name + BACKWARD] for name, _ in self.lstm.parameter_shapes()}

    def check_forest(self, forest: Forest) -> None:
        if forest.n_children.max() > 1 or np.any(forest.word < 0):
            raise ValueError("bilstm reads sequences: every node one child at most and a "
                             "word (train with --structure chain)")

    def recurrent_widths(self) -> list:
        """[d, d]: the forward and the backward LSTM's recurrent connections."""
        return [self.hidden_dim, self.hidden_dim]

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray,
                helper=None, recurrent_masks=None):
        """x: (U, d_x) distinct words; word_index: (n,) row of x per node (every node
        reads a word); recurrent_masks: None or [m^F, m^B], each (sentences, d).
        Returns out (n, 2d), the root holding [h^F_T ; h^B_1], and the cache."""
        return self._forward(params, forest, x, word_index, helper, recurrent_masks,
                             sentence_at_root=True)

    def forward_steps(self, params: dict, forest: Forest, x: np.ndarray,
                      word_index: np.ndarray, helper=None, recurrent_masks=None):
        """As ``forward``, but every row t (the root too) holds [h^F_t ; h^B_t]:
        the per-step states a stacked layer reads.  ``backward`` takes its cache."""
        return self._forward(params, forest, x, word_index, helper, recurrent_masks,
                             sentence_at_root=False)

    def _forward(self, params, forest, x, word_index, helper, recurrent_masks,
                 sentence_at_root: bool):
        d = self.hidden_dim
        forward_masks = backward_masks = None
        if recurrent_masks is not None:
            if len(recurrent_masks) != 2:
                raise ValueError(f"{self.name} has two recurrent connections (forward, "
                                 f"backward), got {len(recurrent_masks)} masks")
            forward_masks, backward_masks = [recurrent_masks[0]], [recurrent_masks[1]]
        h_forward, forward_cache = self.lstm.forward(params, forest, x, word_index, helper,
                                                     forward_masks)
        reversed_forest, order = reverse_chains(forest)
        h_backward, backward_cache = self.lstm.forward(self._backward(params), reversed_forest,
                                                       x, word_index[order], helper,
                                                       backward_masks)
        backward_row = np.empty_like(order)    # node order[r] holds h^B of reversed node r
        backward_row[order] = np.arange(order.shape[0])
        if sentence_at_root:
            # a chain's root reads h^B at the chain's first word: the reversed root
            backward_row[forest.root] = reversed_forest.root
        out = np.empty((forest.n_nodes, 2 * d), dtype=x.dtype)
        out[:, :d] = h_forward
        out[:, d:] = h_backward[backward_row]
        return out, BiLSTMCache(forward_cache, backward_cache, reversed_forest, order,
                                backward_row)

    def backward(self, params: dict, forest: Forest, cache: BiLSTMCache, d_out: np.ndarray,
                 grads: dict, helper=None) -> np.ndarray:
        d = self.hidden_dim
        d_forward = np.ascontiguousarray(d_out[:, :d])
        d_backward = np.zeros_like(d_forward)
        np.add.at(d_backward, cache.backward_row, d_out[:, d:])
        d_x = self.lstm.backward(params, forest, cache.forward, d_forward, grads, helper)
        d_x += self.lstm.backward(self._backward(params), cache.reversed_forest,
                                  cache.backward, d_backward, self._backward(grads), helper)
        return d_x
