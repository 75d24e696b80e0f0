"""A tree classifier: word embeddings -> composition cell -> softmax (or ordinal) head.

The objective of one minibatch (a forest of B trees), in one place:

    J = (1/Z) * sum over labelled nodes j of -log p_hat(y_j | {x}_j)
        + (lambda/2) * ||theta||^2

Z is the number of trees in the minibatch (``average="sentences"``: each
sentence's summed node losses, averaged over the sentences actually in the
batch, as in Tai et al.'s code) or the number of labelled nodes
(``average="nodes"``).  theta is every parameter except the embedding table
(Tai et al. regularise the composition and classifier weights, biases
included, once per minibatch).

Parameters live in one flat vector: ``cell.*`` (the cell's own names),
``softmax.W``, ``softmax.b`` (``ordinal.*`` with the ordinal head of
``heads.py``), then ``embedding`` (V, d_x) last, so the
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

from .cells.inputs import sum_by_index
from .forest import Forest
from .heads import dropout_mask, make_head
from .params import Layout, Parameters

AVERAGES = ("sentences", "nodes")


@dataclass
class DropoutMasks:
    """The dropout masks of one minibatch (None: no dropout there).

    classifier: one (m, input dim) mask per classifier, for its labelled nodes
    embedding:  (trees, d_x), one mask per sequence on the word vectors
    recurrent:  one (trees, width) mask per entry of ``cell.recurrent_widths()``
    """
    classifier: list
    embedding: np.ndarray | None = None
    recurrent: list | None = None

    def astype(self, dtype) -> "DropoutMasks":
        def cast(mask):
            return None if mask is None else mask.astype(dtype)
        return DropoutMasks([cast(mask) for mask in self.classifier], cast(self.embedding),
                            None if self.recurrent is None else
                            [cast(mask) for mask in self.recurrent])


def layer_rates(rates, layers: int) -> list:
    """One dropout rate per recurrent connection from a rate or a sequence of
    rates (the last repeats: ``0.25, 0.3`` is 0.25 for the first, 0.3 after)."""
    rates = [float(rates)] if np.isscalar(rates) else [float(rate) for rate in rates]
    if not rates:
        rates = [0.0]
    return [rates[min(k, len(rates) - 1)] for k in range(layers)]


class TreeModel:
    """Embedding table + cell + classifier head at labelled nodes."""

    def __init__(self, cell, n_classes: int, vocab_size: int, embedding_dim: int,
                 head: str = "softmax"):
        self.cell = cell
        self.head_name = head
        self.head = make_head(head, cell.output_dim, n_classes)
        self.n_classes = n_classes
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        shapes = [("cell." + name, shape) for name, shape in cell.parameter_shapes()]
        # parameters named after the head: softmax.W / ordinal.W, softmax_leaf.W ...
        self.prefix, self.leaf_prefix = head, head + "_leaf"
        shapes += [(f"{self.prefix}.{name}", shape)
                   for name, shape in self.head.parameter_shapes()]
        self.leaf_head = None
        if getattr(cell, "leaf_classifier_reads_input", False):
            self.leaf_head = make_head(head, embedding_dim, n_classes)
            shapes += [(f"{self.leaf_prefix}.{name}", shape)
                       for name, shape in self.leaf_head.parameter_shapes()]
        shapes.append(("embedding", (vocab_size, embedding_dim)))
        self.layout = Layout(shapes)
        self.dense_size = self.layout["embedding"].offset

    def new_parameters(self, rng: np.random.Generator, embedding: np.ndarray | None = None,
                       dtype=np.float32) -> Parameters:
        params = Parameters(self.layout, np.float64)
        self.cell.initialise(params.prefixed("cell"), rng)
        self.head.initialise(params.prefixed(self.prefix), rng)
        if self.leaf_head is not None:
            self.leaf_head.initialise(params.prefixed(self.leaf_prefix), rng)
        if embedding is not None:
            params["embedding"][...] = embedding
        return params.astype(dtype)

    def _groups(self, forest: Forest) -> list:
        """(head, parameter prefix, labelled nodes) for each classifier."""
        labelled = np.flatnonzero(forest.label >= 0)
        if self.leaf_head is None:
            return [(self.head, self.prefix, labelled)]
        leaves = forest.n_leaves
        return [(self.head, self.prefix, labelled[labelled >= leaves]),
                (self.leaf_head, self.leaf_prefix, labelled[labelled < leaves])]

    def recurrent_widths(self) -> list:
        """Widths of the cell's recurrent connections ([] for a tree cell)."""
        widths = getattr(self.cell, "recurrent_widths", None)
        return list(widths()) if widths is not None else []

    def dropout_masks(self, forest: Forest, rate: float, rng: np.random.Generator, dtype,
                      embedding_rate: float = 0.0, recurrent_rate=0.0) -> DropoutMasks:
        """Masks for the forest: classifier inputs at ``rate``, word vectors at
        ``embedding_rate`` and recurrent connections at ``recurrent_rate`` (a
        rate, or one per connection as in ``layer_rates``)."""
        classifier = [dropout_mask((nodes.shape[0], head.input_dim), rate, rng, dtype)
                      for head, _, nodes in self._groups(forest)]
        embedding = dropout_mask((forest.n_trees, self.embedding_dim), embedding_rate, rng,
                                 dtype)
        widths = self.recurrent_widths()
        rates = layer_rates(recurrent_rate, len(widths))
        recurrent = None
        if widths and max(rates) > 0.0:  # a connection at rate 0 gets a mask of ones
            recurrent = [dropout_mask((forest.n_trees, width), layer_rate, rng, dtype)
                         if layer_rate > 0.0 else np.ones((forest.n_trees, width), dtype=dtype)
                         for width, layer_rate in zip(widths, rates)]
        return DropoutMasks(classifier, embedding, recurrent)

    def loss_and_gradient(self, params: Parameters, forest: Forest, grads: Parameters,
                          l2: float = 0.0, dropout: float = 0.0,
                          rng: np.random.Generator | None = None,
                          masks: DropoutMasks | None = None, average: str = "sentences",
                          helper=None, embedding_dropout: float = 0.0,
                          recurrent_dropout=0.0):
        """Objective J of the forest; adds dJ/dparams into ``grads``.

        ``grads`` must be zero on entry except the embedding rows, which must be
        zero at least on the rows this forest reads.  ``masks`` (as returned by
        ``dropout_masks``) fixes the dropout masks (gradient checks); otherwise
        they are drawn from ``rng`` at the rates ``dropout`` (classifier input),
        ``embedding_dropout`` and ``recurrent_dropout``.  ``helper`` (an
        executor with one thread) lets the cell overlap independent products.
        Returns (J, the embedding rows touched: sorted unique word ids).
        """
        self.cell.check_forest(forest)
        word_nodes = forest.word_nodes()
        words, word_index = np.unique(forest.word[word_nodes], return_inverse=True)
        x = params["embedding"][words]
        groups = self._groups(forest)
        if masks is None:
            masks = self.dropout_masks(forest, dropout, rng, x.dtype, embedding_dropout,
                                       recurrent_dropout)
        cell_params = params.prefixed("cell")
        cell_x, cell_index, node_mask = x, word_index, None
        if masks.embedding is not None:  # a row per word-reading node, its sequence's mask
            node_mask = masks.embedding[forest.tree[word_nodes]]
            cell_x = x[word_index] * node_mask
            cell_index = np.arange(word_nodes.shape[0])
        recurrent = ({} if not self.recurrent_widths()
                     else {"recurrent_masks": masks.recurrent})
        h, cell_cache = self.cell.forward(cell_params, forest, cell_x, cell_index, helper,
                                          **recurrent)
        if average == "sentences":
            normaliser = forest.n_trees
        elif average == "nodes":
            normaliser = max(sum(nodes.shape[0] for _, _, nodes in groups), 1)
        else:
            raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")
        d_h = np.zeros_like(h)
        leaf_rows = d_leaf_inputs = None
        data_loss = 0.0
        for (head, prefix, nodes), mask in zip(groups, masks.classifier):
            labels = forest.label[nodes]
            if head is self.leaf_head:  # classified from their word vectors
                leaf_rows = word_index[np.searchsorted(word_nodes, nodes)]
                inputs = x[leaf_rows]
            else:
                inputs = h[nodes]
            loss, cache = head.loss(params.prefixed(prefix), inputs, labels, mask)
            data_loss += loss
            d_inputs = head.backward(params.prefixed(prefix), cache, labels, 1.0 / normaliser,
                                     grads.prefixed(prefix))
            if head is self.leaf_head:
                d_leaf_inputs = d_inputs
            else:
                d_h[nodes] = d_inputs

        regularised = params.flat[:self.dense_size]
        loss = data_loss / normaliser + 0.5 * l2 * float(regularised @ regularised)
        _add_scaled(grads.flat[:self.dense_size], regularised, l2)  # + lambda theta

        d_x = self.cell.backward(cell_params, forest, cell_cache, d_h, grads.prefixed("cell"),
                                 helper)
        if node_mask is not None:  # back through the word-vector mask, per distinct word
            d_x = sum_by_index(d_x * node_mask, word_index, words.shape[0])
        if d_leaf_inputs is not None:
            np.add.at(d_x, leaf_rows, d_leaf_inputs)
        grads["embedding"][words] += d_x  # distinct rows: a plain fancy-index add
        return loss, words

    def predict(self, params: Parameters, forest: Forest) -> np.ndarray:
        """The predicted class (n,) of every node of the forest."""
        return self.head.decode(self.outputs(params, forest))

    def outputs(self, params: Parameters, forest: Forest) -> np.ndarray:
        """The head's outputs at every node: class probabilities (n, C), or the
        ordinal head's cumulative probabilities (n, C-1)."""
        self.cell.check_forest(forest)
        word_nodes = forest.word_nodes()
        words, word_index = np.unique(forest.word[word_nodes], return_inverse=True)
        x = params["embedding"][words]
        h, _ = self.cell.forward(params.prefixed("cell"), forest, x, word_index)
        out = self.head.outputs(params.prefixed(self.prefix), h)
        if self.leaf_head is not None:
            leaves = np.arange(forest.n_leaves)
            leaf_rows = word_index[np.searchsorted(word_nodes, leaves)]
            out[leaves] = self.leaf_head.outputs(params.prefixed(self.leaf_prefix), x[leaf_rows])
        return out


@njit(cache=True, nogil=True)
def _add_scaled(target, source, scale):
    """target += scale * source, in place (no temporary the size of theta)."""
    for k in range(target.shape[0]):
        target[k] += scale * source[k]
