"""The sentence classifier: a ``SentenceEncoder`` with a classifier head at
each labelled node (softmax or ordinal; ``encoder.py`` gives the objective)."""

from __future__ import annotations

import numpy as np

from npcomp.forest import Forest
from npcomp.heads import dropout_mask, make_head
from npcomp.params import Parameters
from .encoder import AVERAGES, DropoutMasks, HeadPass, SentenceEncoder


class TreeModel(SentenceEncoder):
    """Embedding table + cell + classifier head at labelled nodes.

    ``training_only_classes`` widens the softmax by classes the training labels
    may use (n_classes, n_classes + 1, ...) but that are never predicted: the
    outputs are the probabilities of classes 0..n_classes-1 renormalised, so
    the prediction is the likeliest of them (Tai et al.'s binary SST trains
    neutral phrases as a third class)."""

    def __init__(
        self,
        cell,
        n_classes: int,
        vocab_size: int,
        embedding_dim: int,
        head: str = "softmax",
        training_only_classes: int = 0,
    ):
        super().__init__(cell, vocab_size, embedding_dim)
        if training_only_classes and head != "softmax":
            raise ValueError(
                "classes trained on but never predicted need the softmax head (an ordinal head's classes are ordered)"
            )
        self.head_name = head
        self.head = make_head(head, cell.output_dim, n_classes + training_only_classes)
        self.n_classes = n_classes
        self.training_only_classes = training_only_classes
        # parameters named after the head: softmax.W / ordinal.W, softmax_leaf.W ...
        self.prefix, self.leaf_prefix = head, head + "_leaf"
        shapes = [(f"{self.prefix}.{name}", shape) for name, shape in self.head.parameter_shapes()]
        self.leaf_head = None
        if cell.leaf_classifier_reads_input:
            self.leaf_head = make_head(head, embedding_dim, n_classes + training_only_classes)
            shapes += [(f"{self.leaf_prefix}.{name}", shape) for name, shape in self.leaf_head.parameter_shapes()]
        self._build_layout(shapes)

    def new_parameters(
        self, rng: np.random.Generator, embedding: np.ndarray | None = None, dtype=np.float32
    ) -> Parameters:
        heads = [(self.head, self.prefix)]
        if self.leaf_head is not None:
            heads.append((self.leaf_head, self.leaf_prefix))
        return self._new_parameters(heads, rng, embedding, dtype)

    def _groups(self, forest: Forest) -> list:
        """(head, parameter prefix, labelled nodes) for each classifier."""
        labelled = np.flatnonzero(forest.label >= 0)
        if self.leaf_head is None:
            return [(self.head, self.prefix, labelled)]
        leaves = forest.n_leaves
        return [
            (self.head, self.prefix, labelled[labelled >= leaves]),
            (self.leaf_head, self.leaf_prefix, labelled[labelled < leaves]),
        ]

    def dropout_masks(
        self,
        forest: Forest,
        rate: float,
        rng: np.random.Generator,
        dtype,
        embedding_rate: float = 0.0,
        recurrent_rate=0.0,
    ) -> DropoutMasks:
        """Masks for the forest: classifier inputs at ``rate``, word vectors at
        ``embedding_rate`` and recurrent connections at ``recurrent_rate`` (a
        rate, or one per connection as in ``layer_rates``)."""
        classifier = [
            dropout_mask((nodes.shape[0], head.input_dim), rate, rng, dtype) for head, _, nodes in self._groups(forest)
        ]
        embedding, recurrent = self._sequence_masks(forest, rng, dtype, embedding_rate, recurrent_rate)
        return DropoutMasks(classifier, embedding, recurrent)

    def units(self, forest: Forest, average: str) -> int:
        """What Z counts in ``forest`` (module docstring): its trees
        (``average="sentences"``) or its labelled nodes (``"nodes"``)."""
        if average == "sentences":
            return forest.n_trees
        if average == "nodes":
            return int(np.count_nonzero(forest.label >= 0))
        raise ValueError(f"average must be one of {AVERAGES}, not {average!r}")

    def _objective(
        self, params: Parameters, forest: Forest, h: np.ndarray, encoding: dict, masks: DropoutMasks, normaliser: int
    ) -> tuple:
        """The data term of J, (1/Z) sum of -log p_hat(y_j) over the labelled
        nodes (Z = ``normaliser``), and what its backward needs (HeadPass)."""
        groups = self._groups(forest)
        data_loss = 0.0
        node_loss = np.full(forest.n_nodes, np.nan)
        passes = []
        for (head, prefix, nodes), mask in zip(groups, masks.classifier):
            labels = forest.label[nodes]
            leaf_rows = None
            if head is self.leaf_head:  # classified from their word vectors
                leaf_rows = encoding["word_index"][np.searchsorted(encoding["word_nodes"], nodes)]
                inputs = encoding["x"][leaf_rows]
            else:
                inputs = h[nodes]
            loss, cache = head.loss(params.prefixed(prefix), inputs, labels, mask)
            data_loss += self.cell.head_weight * loss
            node_loss[nodes] = self.cell.head_weight * cache.losses / normaliser
            passes.append((head, prefix, nodes, labels, leaf_rows, cache))
        return data_loss / normaliser, HeadPass(passes, normaliser, {"node_loss": node_loss})

    def _objective_backward(
        self, params: Parameters, forest: Forest, h: np.ndarray, passed: "HeadPass", grads: Parameters
    ) -> tuple:
        """Back through the heads, adding into ``grads``: (dJ/dh (n, d), the
        leaf classifier's gradient on the word vectors as (rows, (r, d_x)), or None)."""
        d_h = np.zeros_like(h)
        d_word_rows = None
        for head, prefix, nodes, labels, leaf_rows, cache in passed.cache:
            d_inputs = head.backward(
                params.prefixed(prefix),
                cache,
                labels,
                self.cell.head_weight / passed.normaliser,
                grads.prefixed(prefix),
            )
            if leaf_rows is not None:
                d_word_rows = (leaf_rows, d_inputs)
            else:
                d_h[nodes] = d_inputs
        return d_h, d_word_rows

    def predict(self, params: Parameters, forest: Forest) -> np.ndarray:
        """The predicted class (n,) of every node of the forest."""
        return self.head.decode(self.outputs(params, forest))

    def outputs(self, params: Parameters, forest: Forest) -> np.ndarray:
        """The head's outputs at every node: class probabilities (n, C), or the
        ordinal head's cumulative probabilities (n, C-1)."""
        h, encoding = self._encode(params, forest)
        out = self.head.outputs(params.prefixed(self.prefix), h)
        if self.leaf_head is not None:
            leaves = np.arange(forest.n_leaves)
            leaf_rows = encoding["word_index"][np.searchsorted(encoding["word_nodes"], leaves)]
            out[leaves] = self.leaf_head.outputs(params.prefixed(self.leaf_prefix), encoding["x"][leaf_rows])
        if self.training_only_classes:
            out = out[:, : self.n_classes]
            out /= out.sum(axis=1, keepdims=True)
        return out
