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
        shapes.append(("embedding", (vocab_size, embedding_dim)))
        self.layout = Layout(shapes)
        self.dense_size = self.layout["embedding"].offset

    def new_parameters(self, rng: np.random.Generator, embedding: np.ndarray | None = None,
                       dtype=np.float32) -> Parameters:
        params = Parameters(self.layout, np.float64)
        self.cell.initialise(params.prefixed("cell"), rng)
        self.head.initialise(params.prefixed("softmax"), rng)
        if embedding is not None:
            params["embedding"][...] = embedding
        return params.astype(dtype)

    def loss_and_gradient(self, params: Parameters, forest: Forest, grads: Parameters,
                          l2: float = 0.0, dropout: float = 0.0,
                          rng: np.random.Generator | None = None,
                          mask: np.ndarray | None = None, average: str = "sentences",
                          helper=None):
        """Objective J of the forest; adds dJ/dparams into ``grads``.

        ``grads`` must be zero on entry except the embedding rows, which must be
        zero at least on the rows this forest reads.  ``mask`` (m, d), for the
        m labelled nodes in node order, fixes the dropout mask (gradient checks);
        otherwise one is drawn from ``rng`` when ``dropout`` > 0.  ``helper``
        (an executor with one thread) lets the cell overlap independent products.
        Returns (J, the embedding rows touched: sorted unique word ids).
        """
        self.cell.check_forest(forest)
        words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
        x = params["embedding"][words]
        cell_params = params.prefixed("cell")
        h, cell_cache = self.cell.forward(cell_params, forest, x, word_index, helper)

        labelled = np.flatnonzero(forest.label >= 0)
        labels = forest.label[labelled]
        if mask is None and dropout > 0.0:
            mask = dropout_mask((labelled.shape[0], h.shape[1]), dropout, rng, h.dtype)
        head_params = params.prefixed("softmax")
        data_loss, head_cache = self.head.loss(head_params, h[labelled], labels, mask)

        if average == "sentences":
            normaliser = forest.n_trees
        elif average == "nodes":
            normaliser = max(labelled.shape[0], 1)
        else:
            raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")
        regularised = params.flat[:self.dense_size]
        loss = data_loss / normaliser + 0.5 * l2 * float(regularised @ regularised)
        _add_scaled(grads.flat[:self.dense_size], regularised, l2)  # + lambda theta

        d_h = np.zeros_like(h)
        d_h[labelled] = self.head.backward(head_params, head_cache, labels,
                                           1.0 / normaliser, grads.prefixed("softmax"))
        d_x = self.cell.backward(cell_params, forest, cell_cache, d_h, grads.prefixed("cell"),
                                 helper)
        grads["embedding"][words] += d_x  # distinct rows: a plain fancy-index add
        return loss, words

    def probabilities(self, params: Parameters, forest: Forest) -> np.ndarray:
        """Class probabilities (n, C) at every node of the forest."""
        self.cell.check_forest(forest)
        words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
        h, _ = self.cell.forward(params.prefixed("cell"), forest, params["embedding"][words],
                                 word_index)
        return self.head.probabilities(params.prefixed("softmax"), h)


@njit(cache=True, nogil=True)
def _add_scaled(target, source, scale):
    """target += scale * source, in place (no temporary the size of theta)."""
    for k in range(target.shape[0]):
        target[k] += scale * source[k]
