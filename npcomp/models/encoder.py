"""Models: word embeddings -> composition cell -> a head.

``TreeModel`` classifies labelled nodes (softmax or ordinal head);
``PairModel`` encodes both sentences of a pair with one cell and scores their
relatedness with the similarity head (Tai et al. Sec. 4.2, objective in its
docstring).  What both share, the embedding look-up, the cell and dropout on
word vectors and recurrences, is ``SentenceEncoder``; so is the functional
layer every model offers: ``node_states`` and ``sentence_states`` (the
encoder's states), ``loss`` (J alone) and ``loss_and_gradient``.  A model
holds no parameters: each call takes them.

The classifier's objective for one minibatch (a forest of B trees):

    J = (1/Z) * sum over labelled nodes j of -log p_hat(y_j | {x}_j)
        + (lambda/2) * ||theta||^2

Z is the number of trees in the minibatch (``average="sentences"``: each
sentence's summed node losses, averaged over the sentences actually in the
batch, as in Tai et al.'s code) or the number of labelled nodes
(``average="nodes"``); each shard of a minibatch (``training/shards.py``)
takes the minibatch's Z (``normaliser``), so the shards' J and gradients sum
to its.  theta is every parameter except the embedding table (Tai et al.
regularise the composition and classifier weights, biases included, once
per minibatch).  A cell's own term of J (the RAE's) joins over the same Z, the
head's then weighted by the cell's ``head_weight`` (``cells/interface.py``).

Parameters live in one flat vector: ``cell.*`` (the cell's own names),
``softmax.W``, ``softmax.b`` (``ordinal.*`` with the ordinal head of
``heads.py``; ``similarity.*`` for the pair model), then ``embedding`` (V, d_x) last, so the
regularised, densely-updated part is the prefix ``flat[:embedding offset]``.

Dropout, each mask inverted (0 or 1/(1-p), so evaluation uses no mask):
on the classifier input (Tai: 0.5), on the word vectors entering the cell
with one mask per sequence, and on every recurrent connection of a sequence
cell with one mask per sequence (Gal 2015; Nayebi & Blundell Sec. 4.1).  A
sequence's word-vector mask multiplies every word it reads, so under it the
cell receives one input row per word-reading node instead of one per
distinct word.

Leaves in a space of their own: a cell whose ``leaf_classifier_reads_input``
is true (Le & Zuidema's untied LSTM-RNN and RecNN, whose leaves are
d_w-dimensional word vectors while inner nodes are d-dimensional) has its leaves classified
from their word vectors by a second softmax, ``softmax_leaf.*`` (d_w inputs);
inner nodes use ``softmax.*`` on the cell's h.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from npcomp.cells.kernels.inputs import sum_by_index
from npcomp.forest import Forest
from npcomp.heads import dropout_mask
from npcomp.params import Layout, Parameters

AVERAGES = ("sentences", "nodes")


@dataclass
class DropoutMasks:
    """The dropout masks of one minibatch (None: no dropout there).

    classifier: one (m, input dim) mask per classifier, for its labelled nodes
    embedding:  (trees, k d_x), one mask per sequence on the word vectors, k
                the cell's ``input_copies()`` (1 unless it says otherwise)
    recurrent:  one (trees, width) mask per entry of ``cell.recurrent_widths()``
    """

    classifier: list
    embedding: np.ndarray | None = None
    recurrent: list | None = None

    def astype(self, dtype) -> "DropoutMasks":
        def cast(mask):
            return None if mask is None else mask.astype(dtype)

        return DropoutMasks(
            [cast(mask) for mask in self.classifier],
            cast(self.embedding),
            None if self.recurrent is None else [cast(mask) for mask in self.recurrent],
        )


def layer_rates(rates, layers: int) -> list:
    """One dropout rate per recurrent connection from a rate or a sequence of
    rates (the last repeats: ``0.25, 0.3`` is 0.25 for the first, 0.3 after)."""
    rates = [float(rates)] if np.isscalar(rates) else [float(rate) for rate in rates]
    if not rates:
        rates = [0.0]
    return [rates[min(k, len(rates) - 1)] for k in range(layers)]


@dataclass
class HeadPass:
    """What the head's forward leaves for its backward: ``cache`` (the
    head's own; a TreeModel's, one entry per classifier), ``normaliser`` (Z,
    or the pairs m) and ``trace`` (what ``loss_and_gradient``'s ``trace``
    receives from the head)."""

    cache: object
    normaliser: int
    trace: dict


class SentenceEncoder:
    """What every model shares: an embedding table and a cell encoding each
    sentence of a forest, with dropout on its word vectors and recurrences.

    Subclasses put their head's parameters between the cell's and the
    embedding's (``_build_layout``) and define what Z counts (``units``), the
    objective's data term and its backward (``_objective``,
    ``_objective_backward``).
    """

    def __init__(self, cell, vocab_size: int, embedding_dim: int):
        self.cell = cell
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim

    def _build_layout(self, head_shapes: list) -> None:
        shapes = [("cell." + name, shape) for name, shape in self.cell.parameter_shapes()]
        shapes += head_shapes
        shapes.append(("embedding", (self.vocab_size, self.embedding_dim)))
        self.layout = Layout(shapes)
        self.dense_size = self.layout["embedding"].offset

    def _new_parameters(self, heads: list, rng: np.random.Generator, embedding: np.ndarray | None, dtype) -> Parameters:
        """Parameters initialised by the cell and by each (head, prefix) of ``heads``."""
        params = Parameters(self.layout, np.float64)
        self.cell.initialise(params.prefixed("cell"), rng)
        for head, prefix in heads:
            head.initialise(params.prefixed(prefix), rng)
        if embedding is not None:
            params["embedding"][...] = embedding
        return params.astype(dtype)

    def recurrent_widths(self) -> list:
        """Widths of the cell's recurrent connections ([] for a tree cell)."""
        return list(self.cell.recurrent_widths())

    def input_copies(self) -> int:
        """Copies of the word vectors the cell reads, each with a dropout mask
        of its own (1 unless the cell says otherwise)."""
        return self.cell.input_copies()

    def _sequence_masks(
        self, forest: Forest, rng: np.random.Generator, dtype, embedding_rate: float, recurrent_rate
    ) -> tuple:
        """(word-vector mask (trees, copies x d_x) or None, recurrent masks or None)."""
        embedding = dropout_mask((forest.n_trees, self.input_copies() * self.embedding_dim), embedding_rate, rng, dtype)
        widths = self.recurrent_widths()
        rates = layer_rates(recurrent_rate, len(widths))
        recurrent = None
        if widths and max(rates) > 0.0:  # a connection at rate 0 gets a mask of ones
            recurrent = [
                dropout_mask((forest.n_trees, width), layer_rate, rng, dtype)
                if layer_rate > 0.0
                else np.ones((forest.n_trees, width), dtype=dtype)
                for width, layer_rate in zip(widths, rates)
            ]
        return embedding, recurrent

    def _encode(self, params: Parameters, forest: Forest, masks: DropoutMasks | None = None, nudge=None) -> tuple:
        """The cell's states h (n, output_dim) at every node and what the
        backward needs: (h, encoding).  ``nudge`` (cells/interface.Nudge)
        moves one node's state inside the cell's forward (the per-node state
        check's finite differences)."""
        self.cell.check_forest(forest)
        word_nodes = forest.word_nodes()
        words, word_index = np.unique(forest.word[word_nodes], return_inverse=True)
        x = params["embedding"][words]
        cell_x, cell_index, node_mask = x, word_index, None
        if masks is not None and masks.embedding is not None:
            # a row per word-reading node, its sequence's mask
            node_mask = masks.embedding[forest.tree[word_nodes]]
            copies = node_mask.shape[1] // x.shape[1]
            cell_x = np.tile(x[word_index], copies) * node_mask
            cell_index = np.arange(word_nodes.shape[0])
        recurrent = (
            {} if not self.recurrent_widths() else {"recurrent_masks": None if masks is None else masks.recurrent}
        )
        if nudge is not None:
            recurrent["nudge"] = nudge
        h, cell_cache = self.cell.forward(params.prefixed("cell"), forest, cell_x, cell_index, **recurrent)
        encoding = dict(
            word_nodes=word_nodes, words=words, word_index=word_index, x=x, node_mask=node_mask, cell_cache=cell_cache
        )
        return h, encoding

    def node_states(self, params: Parameters, forest: Forest, masks: DropoutMasks | None = None) -> np.ndarray:
        """(forest.n_nodes, cell.output_dim): the cell's state h at every node
        of the forest, in the forest's node order (``forest.origin`` maps it
        to each tree's own), under dropout ``masks`` if given (their word-vector
        and recurrent masks; the classifier's are not the encoder's)."""
        return self._encode(params, forest, masks)[0]

    def sentence_states(self, params: Parameters, forest: Forest, masks: DropoutMasks | None = None) -> np.ndarray:
        """(forest.n_trees, cell.output_dim): each tree's root state, the
        sentence's representation, in the forest's tree order (under dropout
        ``masks`` if given)."""
        return self.node_states(params, forest, masks)[forest.root]

    def loss(
        self,
        params: Parameters,
        batch,
        l2: float = 0.0,
        dropout: float = 0.0,
        rng: np.random.Generator | None = None,
        masks: DropoutMasks | None = None,
        average: str = "sentences",
        embedding_dropout: float = 0.0,
        recurrent_dropout=0.0,
        nudge=None,
    ) -> float:
        """The objective J of ``batch`` (a forest; a ``PairBatch`` for the pair
        model), a Python float, by the forward pass alone: no gradient buffer,
        no backward.  The options are ``loss_and_gradient``'s and give the same
        J (dropout drawn from ``rng`` as it draws them)."""
        if masks is None:
            masks = self.draw_masks(params, batch, rng, dropout, embedding_dropout, recurrent_dropout)
        h, encoding = self._encode(params, self._forest_of(batch), masks, nudge)
        normaliser = self._normaliser(batch, average)
        data_term, _ = self._objective(params, batch, h, encoding, masks, normaliser)
        data_term += self.cell.own_loss(self._forest_of(batch), encoding["cell_cache"], normaliser)
        return data_term + self._penalty(params, l2)

    def loss_and_gradient(
        self,
        params: Parameters,
        batch,
        grads: Parameters | None = None,
        l2: float = 0.0,
        dropout: float = 0.0,
        rng: np.random.Generator | None = None,
        masks: DropoutMasks | None = None,
        average: str = "sentences",
        embedding_dropout: float = 0.0,
        recurrent_dropout=0.0,
        trace: dict | None = None,
        nudge=None,
        accumulate: bool = False,
        normaliser: int | None = None,
    ) -> tuple:
        """Objective J of ``batch`` (a forest; a ``PairBatch`` for the pair
        model) and its gradient dJ/dparams, laid out as ``params``.

        ``grads`` None: a new buffer is allocated; returns (J, grads), grads
        a ``Parameters`` of ``params``' layout and dtype.
        ``grads`` given (that layout): it is zeroed, then holds dJ/dparams;
        returns (J, rows), rows (r,) the embedding rows this batch read
        (sorted unique word ids): those a sparse optimiser step updates.
        ``accumulate=True`` skips the zeroing: dJ/dparams is added into
        ``grads`` as it is, for a gradient summed over minibatches, or a
        buffer its owner keeps zero (the trainer's, whose optimiser zeroes
        each entry a step consumes: zeroing it again is a pass over the whole
        embedding table per step, bench/bench_gradient_buffer.py).

        ``masks`` (as returned by ``dropout_masks``) fixes the dropout masks
        (gradient checks); otherwise they are drawn from ``rng`` at the rates
        ``dropout`` (classifier input), ``embedding_dropout`` and
        ``recurrent_dropout``.  ``average`` sets Z, ``l2`` lambda (module
        docstring); ``normaliser`` gives Z itself, when ``batch`` is one shard
        of a minibatch: the minibatch's (``units`` summed over its shards, at
        least 1), so that the shards' J and gradients sum to the minibatch's
        (with ``l2`` on one shard only).  ``trace``, a dict, receives what
        ``npcomp explain`` shows: the states ``h``, the head's ``d_h`` (dJ/dh
        before the cell's backward), the ``cell_cache`` (with the backward's
        error terms) and, for a TreeModel, ``node_loss`` (n,) each node's term
        of J (NaN where unlabelled).  ``nudge`` (cells/interface.Nudge) moves
        one node's state inside the cell's forward (``_encode``).
        """
        buffer = self._gradient_buffer(params, grads, accumulate)
        if masks is None:
            masks = self.draw_masks(params, batch, rng, dropout, embedding_dropout, recurrent_dropout)
        forest = self._forest_of(batch)
        h, encoding = self._encode(params, forest, masks, nudge)
        if normaliser is None:
            normaliser = self._normaliser(batch, average)
        data_term, passed = self._objective(params, batch, h, encoding, masks, normaliser)
        # a cell's own term of J (the RAE's reconstruction error), over the same Z
        data_term += self.cell.own_loss(forest, encoding["cell_cache"], normaliser, passed.trace.get("node_loss"))
        d_h, d_word_rows = self._objective_backward(params, batch, h, passed, buffer)
        loss = data_term + self._regularise(params, buffer, l2)
        if trace is not None:
            trace.update(h=h, d_h=d_h.copy(), cell_cache=encoding["cell_cache"], **passed.trace)
        self._encode_backward(params, forest, encoding, d_h, buffer, d_word_rows)
        return (loss, buffer) if grads is None else (loss, encoding["words"])

    def _gradient_buffer(self, params: Parameters, grads: Parameters | None, accumulate: bool) -> Parameters:
        """``grads`` ready to take the gradient: a new zero buffer for None,
        else the one given, checked against ``params`` and zeroed unless
        ``accumulate``."""
        if grads is None:
            return params.zeros_like()
        if grads.flat.shape != params.flat.shape:
            raise ValueError(
                f"grads has {grads.flat.shape[0]} entries where the parameters "
                f"have {params.flat.shape[0]}: a buffer of another model"
            )
        if not accumulate:
            grads.flat[...] = 0.0
        return grads

    def draw_masks(
        self,
        params: Parameters,
        batch,
        rng: np.random.Generator | None,
        dropout: float = 0.0,
        embedding_dropout: float = 0.0,
        recurrent_dropout=0.0,
    ) -> DropoutMasks:
        """The dropout masks of ``batch`` as ``loss_and_gradient`` draws them
        from ``rng`` at these rates (nothing is drawn at rate 0; ``rng`` may
        then be None)."""
        rates = [dropout, embedding_dropout, *np.atleast_1d(recurrent_dropout).tolist()]
        if rng is None and max(rates) > 0.0:
            raise ValueError("dropout draws its masks at random: give rng (a numpy.random.Generator), or fixed masks")
        return self.dropout_masks(
            self._forest_of(batch), dropout, rng, params.flat.dtype, embedding_dropout, recurrent_dropout
        )

    @staticmethod
    def _forest_of(batch) -> Forest:
        """The forest of a batch: itself, or a PairBatch's."""
        return batch

    def _normaliser(self, batch, average: str) -> int:
        """Z of ``batch`` on its own: its ``units``, at least 1."""
        return max(self.units(batch, average), 1)

    def _encode_backward(
        self, params: Parameters, forest: Forest, encoding: dict, d_h: np.ndarray, grads: Parameters, d_word_rows=None
    ) -> None:
        """Back through the cell (adding into ``grads``) and into the embedding
        rows read; ``d_word_rows`` = (rows of ``encoding['words']``, (r, d_x))
        adds gradient reaching the word vectors another way (a leaf classifier)."""
        d_x = self.cell.backward(params.prefixed("cell"), forest, encoding["cell_cache"], d_h, grads.prefixed("cell"))
        node_mask = encoding["node_mask"]
        words = encoding["words"]
        if node_mask is not None:  # back through the word-vector masks, per distinct word
            d_x = d_x * node_mask
            if d_x.shape[1] != self.embedding_dim:  # a copy per mask: their sum
                d_x = d_x.reshape(d_x.shape[0], -1, self.embedding_dim).sum(axis=1)
            d_x = sum_by_index(d_x, encoding["word_index"], words.shape[0])
        if d_word_rows is not None:
            np.add.at(d_x, d_word_rows[0], d_word_rows[1])
        grads["embedding"][words] += d_x  # distinct rows: a plain fancy-index add

    def _regularise(self, params: Parameters, grads: Parameters, l2: float) -> float:
        """Adds lambda theta into ``grads``; returns (lambda/2) ||theta||^2."""
        if l2:  # else no pass over theta (a minibatch's shards after the first)
            _add_scaled(grads.flat[: self.dense_size], params.flat[: self.dense_size], l2)
        return self._penalty(params, l2)

    def _penalty(self, params: Parameters, l2: float) -> float:
        """(lambda/2) ||theta||^2 over the regularised prefix of the parameters."""
        regularised = params.flat[: self.dense_size]
        return 0.5 * l2 * float(regularised @ regularised) if l2 else 0.0


@njit(cache=True, nogil=True)
def _add_scaled(target, source, scale):
    """target += scale * source, in place (no temporary the size of theta)."""
    for k in range(target.shape[0]):
        target[k] += scale * source[k]
