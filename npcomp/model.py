"""A tree classifier: word embeddings -> composition cell -> softmax head.

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
``softmax.W``, ``softmax.b``, then ``embedding`` (V, d_x) last, so the
regularised, densely-updated part is the prefix ``flat[:embedding offset]``.

Leaves in a space of their own: a cell whose ``leaf_classifier_reads_input``
is true (Le & Zuidema's untied LSTM-RNN and RecNN, whose leaves are
d_w-dimensional word vectors while inner nodes are d-dimensional) has its leaves classified
from their word vectors by a second softmax, ``softmax_leaf.*`` (d_w inputs);
inner nodes use ``softmax.*`` on the cell's h.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .forest import Forest
from .heads import SoftmaxClassifier, dropout_mask
from .params import Layout, Parameters

AVERAGES = ("sentences", "nodes")


class TreeModel:
    """Embedding table + cell + softmax classifier at labelled nodes."""

    def __init__(self, cell, n_classes: int, vocab_size: int, embedding_dim: int):
        self.cell = cell
        self.head = SoftmaxClassifier(cell.output_dim, n_classes)
        self.n_classes = n_classes
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        shapes = [("cell." + name, shape) for name, shape in cell.parameter_shapes()]
        shapes += [("softmax." + name, shape) for name, shape in self.head.parameter_shapes()]
        self.leaf_head = None
        if getattr(cell, "leaf_classifier_reads_input", False):
            self.leaf_head = SoftmaxClassifier(embedding_dim, n_classes)
            shapes += [("softmax_leaf." + name, shape)
                       for name, shape in self.leaf_head.parameter_shapes()]
        shapes.append(("embedding", (vocab_size, embedding_dim)))
        self.layout = Layout(shapes)
        self.dense_size = self.layout["embedding"].offset

    def new_parameters(self, rng: np.random.Generator, embedding: np.ndarray | None = None,
                       dtype=np.float32) -> Parameters:
        params = Parameters(self.layout, np.float64)
        self.cell.initialise(params.prefixed("cell"), rng)
        self.head.initialise(params.prefixed("softmax"), rng)
        if self.leaf_head is not None:
            self.leaf_head.initialise(params.prefixed("softmax_leaf"), rng)
        if embedding is not None:
            params["embedding"][...] = embedding
        return params.astype(dtype)

    def _groups(self, forest: Forest) -> list:
        """(head, parameter prefix, labelled nodes) for each classifier."""
        labelled = np.flatnonzero(forest.label >= 0)
        if self.leaf_head is None:
            return [(self.head, "softmax", labelled)]
        leaves = forest.n_leaves
        return [(self.head, "softmax", labelled[labelled >= leaves]),
                (self.leaf_head, "softmax_leaf", labelled[labelled < leaves])]

    def dropout_masks(self, forest: Forest, rate: float, rng: np.random.Generator,
                      dtype) -> list:
        """One inverted-dropout mask (m, input dim) per classifier, for its
        labelled nodes in node order (None entries when ``rate`` is 0)."""
        return [dropout_mask((nodes.shape[0], head.input_dim), rate, rng, dtype)
                for head, _, nodes in self._groups(forest)]

    def loss_and_gradient(self, params: Parameters, forest: Forest, grads: Parameters,
                          l2: float = 0.0, dropout: float = 0.0,
                          rng: np.random.Generator | None = None,
                          masks: list | None = None, average: str = "sentences",
                          helper=None):
        """Objective J of the forest; adds dJ/dparams into ``grads``.

        ``grads`` must be zero on entry except the embedding rows, which must be
        zero at least on the rows this forest reads.  ``masks`` (as returned by
        ``dropout_masks``) fixes the dropout masks (gradient checks); otherwise
        they are drawn from ``rng`` when ``dropout`` > 0.  ``helper`` (an
        executor with one thread) lets the cell overlap independent products.
        Returns (J, the embedding rows touched: sorted unique word ids).
        """
        self.cell.check_forest(forest)
        word_nodes = forest.word_nodes()
        words, word_index = np.unique(forest.word[word_nodes], return_inverse=True)
        x = params["embedding"][words]
        cell_params = params.prefixed("cell")
        h, cell_cache = self.cell.forward(cell_params, forest, x, word_index, helper)

        groups = self._groups(forest)
        if masks is None:
            masks = (self.dropout_masks(forest, dropout, rng, h.dtype) if dropout > 0.0
                     else [None] * len(groups))
        if average == "sentences":
            normaliser = forest.n_trees
        elif average == "nodes":
            normaliser = max(sum(nodes.shape[0] for _, _, nodes in groups), 1)
        else:
            raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")
        d_h = np.zeros_like(h)
        leaf_rows = d_leaf_inputs = None
        data_loss = 0.0
        for (head, prefix, nodes), mask in zip(groups, masks):
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
        if d_leaf_inputs is not None:
            np.add.at(d_x, leaf_rows, d_leaf_inputs)
        grads["embedding"][words] += d_x  # distinct rows: a plain fancy-index add
        return loss, words

    def probabilities(self, params: Parameters, forest: Forest) -> np.ndarray:
        """Class probabilities (n, C) at every node of the forest."""
        self.cell.check_forest(forest)
        word_nodes = forest.word_nodes()
        words, word_index = np.unique(forest.word[word_nodes], return_inverse=True)
        x = params["embedding"][words]
        h, _ = self.cell.forward(params.prefixed("cell"), forest, x, word_index)
        out = self.head.probabilities(params.prefixed("softmax"), h)
        if self.leaf_head is not None:
            leaves = np.arange(forest.n_leaves)
            leaf_rows = word_index[np.searchsorted(word_nodes, leaves)]
            out[leaves] = self.leaf_head.probabilities(params.prefixed("softmax_leaf"),
                                                       x[leaf_rows])
        return out


@njit(cache=True, nogil=True)
def _add_scaled(target, source, scale):
    """target += scale * source, in place (no temporary the size of theta)."""
    for k in range(target.shape[0]):
        target[k] += scale * source[k]
