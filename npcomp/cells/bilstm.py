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

Each direction is one sequence cell, the class attribute ``direction_cell``
(``ChainLSTM`` here): its parameter names (plus ``_backward`` for the untied
backward direction), gate slices, initialisation, recurrent connections,
forward and backward are the direction cell's, and so are the quantities and
error terms ``npcomp explain`` shows, suffixed ^F and ^B (``i^F``, ``eps_c^B``,
as reference/bilstm.py names them), a ^B row at the word it belongs to.
``bilstm2.py`` sets it to the 2-layer ``StackedLSTM``, so h^F and h^B above
become each direction's layer-2 states.

Recurrent dropout (Gal 2015, one mask per sequence): ``recurrent_widths()``
is the direction cell's widths for the forward direction followed by the
same for the backward one, here ``[d, d]``: the masks [m^F, m^B] (sentences,
d) of the forward and the backward LSTM's h_{t-1} -> step t connections
(lstm.py).  They are separate masks even when the weights are tied: two
connections, two masks.  The reversed forest keeps each node's sentence
(``forest.tree``), so m^B is indexed by sentence in either order.

Backward: d_out splits into dJ/dh^F (first d columns, every row) and
dJ/dh^B (last d columns: row t to h^B_t, the root's row to h^B_1, the
cache's ``backward_row``); each direction back-propagates its share through
its own chains (treelstm_nary.py's backward with one child), adding into the
same gradients when tied, and the two d_x are summed per distinct word.

Word-vector dropout (one mask per sentence) masks the words both directions
read with one mask by default (``embedding_masks="shared"``).  Nayebi &
Blundell put dropout "between the Glove embedding layer and each of the two
LSTMs" (Sec. 4.1), as Keras' Bidirectional wrapper does with a dropout
inside each LSTM: with ``embedding_masks="per-direction"`` each direction
reads the words through a mask of its own.  The cell then asks for two
copies of its input (``input_copies()``); the model hands it the masked
vectors side by side, x = [m^F * x_t ; m^B * x_t] (n, 2 d_x), the forward
LSTM reads the first d_x columns and the backward LSTM the last, and the
backward pass returns d_x in the same two blocks.

=====================  ==============================  ==========
paper                  code                            shape
=====================  ==============================  ==========
W, U, b of eq. 1       ``W`` (i|o|u|f), ``U``, ``b``   (d_x, 4d), (d, 4d), (4d,)
backward LSTM, untied  ``W_backward``, ``U_backward``,  the same
                       ``b_backward``
=====================  ==============================  ==========
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..forest import Forest, depths, reverse_chains
from .interface import LAST_WORD, Part, SequenceCell, Term, TermParts
from .lstm import ChainLSTM

BACKWARD = "_backward"


@dataclass
class BiLSTMCache:
    forward: object  # the forward direction's cache
    backward: object  # the backward direction's cache (reversed-forest order)
    reversed_forest: Forest
    order: np.ndarray  # reversed node r is node order[r]
    backward_row: np.ndarray  # (n,) reversed node whose h^B each node's output holds
    split_input: bool  # x held one block per direction
    out: np.ndarray  # (n, 2 d) the cell's output


class BiLSTM(SequenceCell):
    """One sequence cell run over a forest of chains in both directions, the two
    outputs concatenated.  The sequence cell is ``direction_cell`` (here the
    chain LSTM; bilstm2.py's subclass uses the 2-layer ``StackedLSTM``)."""

    name = "bilstm"
    direction_cell = ChainLSTM

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        untied: bool = False,
        embedding_masks: str = "shared",
        **direction_options,
    ):
        # options other than ``untied`` and ``embedding_masks`` are the direction cell's
        # (make_cell checks the values against the registry)
        self.direction = self.direction_cell(input_dim, hidden_dim, **direction_options)
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = 2 * self.direction.output_dim
        self.untied = untied
        self.embedding_masks = embedding_masks

    def input_copies(self) -> int:
        """Copies of the word vectors, each with its own dropout mask, the cell
        reads: one per direction with ``embedding_masks="per-direction"``."""
        return 2 if self.embedding_masks == "per-direction" else 1

    def parameter_shapes(self) -> list:
        shapes = self.direction.parameter_shapes()
        if self.untied:
            shapes += [(name + BACKWARD, shape) for name, shape in self.direction.parameter_shapes()]
        return shapes

    def report_slices(self) -> dict:
        out = dict(self.direction.report_slices())
        if self.untied:
            out.update(
                {
                    sub + BACKWARD: (block + BACKWARD, index)
                    for sub, (block, index) in self.direction.report_slices().items()
                }
            )
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        self.direction.initialise(params, rng)
        if self.untied:
            self.direction.initialise(self._backward(params), rng)

    def _backward(self, params: dict) -> dict:
        """The backward direction's parameters (or gradients) under the direction
        cell's own names."""
        if not self.untied:
            return params
        return {name: params[name + BACKWARD] for name, _ in self.direction.parameter_shapes()}

    def recurrent_widths(self) -> list:
        """The forward direction's recurrent connections, then the backward's."""
        return 2 * self.direction.recurrent_widths()

    def _split_masks(self, recurrent_masks) -> tuple:
        if recurrent_masks is None:
            return None, None
        half = len(self.direction.recurrent_widths())
        if len(recurrent_masks) != 2 * half:
            raise ValueError(
                f"{self.name} has {2 * half} recurrent connections (forward, "
                f"then backward), got {len(recurrent_masks)} masks"
            )
        return list(recurrent_masks[:half]), list(recurrent_masks[half:])

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d_x) distinct words, or (U, 2 d_x) a block per direction (the
        forward's first; ``input_copies``); word_index: (n,) row of x per node
        (every node reads a word); recurrent_masks: None or one (sentences,
        width) mask per recurrent connection (``recurrent_widths``: forward's,
        then backward's).  Returns out (n, output_dim), the root holding
        [h^F_T ; h^B_1], and the cache.  ``nudge`` (interface.Nudge) moves a
        direction's state, named with its suffix (``c^B``), at a word."""
        forward_masks, backward_masks = self._split_masks(recurrent_masks)
        split_input = x.shape[1] == 2 * self.input_dim
        x_forward = x[:, : self.input_dim] if split_input else x
        x_backward = x[:, self.input_dim :] if split_input else x
        reversed_forest, order = reverse_chains(forest)
        nudges = _direction_nudges(nudge, order)
        h_forward, forward_cache = self.direction.forward(
            params, forest, x_forward, word_index, recurrent_masks=forward_masks, **nudges[0]
        )
        h_backward, backward_cache = self.direction.forward(
            self._backward(params),
            reversed_forest,
            x_backward,
            word_index[order],
            recurrent_masks=backward_masks,
            **nudges[1],
        )
        backward_row = np.empty_like(order)  # node order[r] holds h^B of reversed node r
        backward_row[order] = np.arange(order.shape[0])
        # a chain's root reads h^B at the chain's first word: the reversed root
        backward_row[forest.root] = reversed_forest.root
        d = self.direction.output_dim
        out = np.empty((forest.n_nodes, 2 * d), dtype=x.dtype)
        out[:, :d] = h_forward
        out[:, d:] = h_backward[backward_row]
        return out, BiLSTMCache(forward_cache, backward_cache, reversed_forest, order, backward_row, split_input, out)

    def backward(self, params: dict, forest: Forest, cache: BiLSTMCache, d_out: np.ndarray, grads: dict) -> np.ndarray:
        d = self.direction.output_dim
        d_forward = np.ascontiguousarray(d_out[:, :d])
        d_backward = np.zeros_like(d_forward)
        np.add.at(d_backward, cache.backward_row, d_out[:, d:])
        d_x_forward = self.direction.backward(params, forest, cache.forward, d_forward, grads)
        d_x_backward = self.direction.backward(
            self._backward(params), cache.reversed_forest, cache.backward, d_backward, self._backward(grads)
        )
        if cache.split_input:
            return np.concatenate([d_x_forward, d_x_backward], axis=1)
        return d_x_forward + d_x_backward

    def forward_terms(self, forest: Forest, cache: BiLSTMCache) -> list:
        """The direction cell's quantities for each reading, suffixed ^F and ^B
        (row t of a ^B term: the backward reading at word t), then ``out``."""
        terms = _suffixed(self.direction.forward_terms(forest, cache.forward), "^F")
        terms += _suffixed(self.direction.forward_terms(cache.reversed_forest, cache.backward), "^B", cache.order)
        return terms + [Term("out", "Sec. 2.2", cache.out)]

    def backward_terms(self, forest: Forest, cache: BiLSTMCache) -> list:
        """The direction cell's error terms for each reading, suffixed ^F and ^B."""
        terms = _suffixed(self.direction.backward_terms(forest, cache.forward), "^F")
        return terms + _suffixed(
            self.direction.backward_terms(cache.reversed_forest, cache.backward), "^B", cache.order
        )

    def state_terms(self, forest: Forest, cache: BiLSTMCache) -> list:
        """The direction cell's states for each reading, suffixed ^F and ^B; a
        ^B state is checked from the first word on, where its backward starts."""
        out = [
            replace(state, state=state.state + "^F", symbol=state.symbol + "^F")
            for state in self.direction.state_terms(forest, cache.forward)
        ]
        reversed_depth = np.empty(forest.n_nodes, dtype=np.int64)
        reversed_depth[cache.order] = depths(cache.reversed_forest)
        return out + [
            replace(state, state=state.state + "^B", symbol=state.symbol + "^B", depth=reversed_depth)
            for state in self.direction.state_terms(cache.reversed_forest, cache.backward)
        ]

    def term_parts(self, params: dict, forest: Forest, cache: BiLSTMCache, d_out: np.ndarray) -> list:
        """Each reading's parts from its share of the head's gradient (row t's
        second half to h^B_t, the root's to h^B_1), suffixed ^F and ^B."""
        d = self.direction.output_dim
        d_backward = np.zeros((forest.n_nodes, d))
        np.add.at(d_backward, cache.backward_row, d_out[:, d:])
        forward = self.direction.term_parts(params, forest, cache.forward, d_out[:, :d])
        backward = self.direction.term_parts(self._backward(params), cache.reversed_forest, cache.backward, d_backward)
        return [_suffixed_parts(parts, "^F") for parts in forward] + [
            _suffixed_parts(parts, "^B", cache.order) for parts in backward
        ]


def _suffixed(terms: list, suffix: str, order: np.ndarray | None = None) -> list:
    """``terms`` under ``symbol + suffix``; with ``order`` (reversed node r is
    node order[r]) their rows moved from the reversed forest's order to the
    forest's."""

    def moved(rows):
        if order is None or rows is None:
            return rows
        out = np.empty_like(rows)
        out[order] = rows
        return out

    return [
        replace(term, symbol=term.symbol + suffix, values=moved(term.values), node_errata=moved(term.node_errata))
        for term in terms
    ]


# the backward reading ends at a sentence's first word
FIRST_WORD = "the first word: the backward reading ends there"


def _suffixed_parts(term: TermParts, suffix: str, order: np.ndarray | None = None) -> TermParts:
    """``term`` under ``symbol + suffix``; with ``order`` its rows moved from the
    reversed forest's order to the forest's (and "last word" read as the first)."""

    def moved(values):
        if order is None:
            return values
        out = np.empty_like(values)
        out[order] = values
        return out

    def zero(reasons):
        out = moved(reasons)
        return out if order is None else np.where(out == LAST_WORD, FIRST_WORD, out)

    parts = [Part(part.label, part.equation, moved(part.values), zero(part.zero)) for part in term.parts]
    unread = None if term.unread is None else moved(term.unread)
    return TermParts(term.symbol + suffix, parts, unread)


def _direction_nudges(nudge, order: np.ndarray) -> tuple:
    """({"nudge": ...} or {}) for the forward and the backward direction: a
    nudge of a state suffixed ^F or ^B, under the direction cell's name (a ^B
    one at its row of the reversed forest)."""
    if nudge is None:
        return {}, {}
    name, suffix = nudge.state[:-2], nudge.state[-2:]
    if suffix == "^F":
        return {"nudge": nudge.renamed(name)}, {}
    if suffix == "^B":
        row = int(np.flatnonzero(order == nudge.node)[0])
        return {}, {"nudge": nudge.renamed(name, row)}
    return {}, {}
