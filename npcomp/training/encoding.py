"""A task's splits made ready for a model: checked against its cell, and
encoded as word ids (``EncodedSplit`` for trees, ``EncodedPairs`` for SICK's
sentence pairs) that pack into forests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npcomp.cells.interface import StructureError
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.errors import DataError
from npcomp.data.readers.formats import _split_source
from npcomp.data.readers.sick import SickPair
from npcomp.data.datasets.score_scale import from_ratings, to_ratings
from npcomp.data.datasets.tasks import task_trees
from npcomp.forest import build_forest, node_words
from npcomp.models import PairBatch


@dataclass
class EncodedSplit:
    """A split's trees with each node's word id, ready to pack into forests;
    ``labels`` (per tree) replaces the trees' own labels in training batches
    (the supervision mode's)."""

    trees: list
    words: list
    labels: list | None = None

    def __len__(self) -> int:
        return len(self.trees)

    def forest(self, indices, labels=None):
        return build_forest(
            [self.trees[i] for i in indices],
            [self.words[i] for i in indices],
            None if labels is None else [labels[i] for i in indices],
        )

    def batch(self, indices):
        """The training minibatch of trees ``indices``: a forest."""
        return self.forest(indices, self.labels)

    def forest_trees(self, indices) -> list:
        """The trees of ``batch(indices)``, in the forest's order."""
        return [self.trees[i] for i in indices]

    def node_counts(self, indices) -> np.ndarray:
        """(len(indices),) the nodes of each tree ``indices``."""
        return np.array([self.words[i].shape[0] for i in indices], dtype=np.int64)


@dataclass
class EncodedPairs:
    """A split's sentence pairs: left trees, right trees, word ids, and their
    scores (m,) as the similarity head's ratings 1..K; ``scale`` ((lo, hi),
    K) when the pairs' own scores lie on another scale (a user's file:
    ``data/datasets/score_scale.py``), None when they are the ratings (SICK's);
    ``labels`` (m,) their class numbers (-1: none) and ``class_names`` the
    classes' names, for a task of pair classes."""

    left: EncodedSplit
    right: EncodedSplit
    scores: np.ndarray
    scale: tuple | None = None
    labels: np.ndarray | None = None
    class_names: tuple | None = None

    def __len__(self) -> int:
        return len(self.left)

    def on_their_scale(self, ratings) -> np.ndarray:
        """Ratings (gold or predicted, float64) on the scale of the pairs' own scores."""
        if self.scale is None:
            return np.asarray(ratings, dtype=np.float64)
        return from_ratings(ratings, *self.scale)

    def forest_trees(self, indices) -> list:
        """The trees of ``batch(indices)``, in the forest's order."""
        indices = list(indices)
        return [self.left.trees[i] for i in indices] + [self.right.trees[i] for i in indices]

    def node_counts(self, indices) -> np.ndarray:
        """(len(indices),) the nodes of each pair ``indices``, both sentences."""
        return self.left.node_counts(indices) + self.right.node_counts(indices)

    def batch(self, indices) -> PairBatch:
        """Pairs ``indices`` as one forest, left sentences first."""
        indices = list(indices)
        trees = [self.left.trees[i] for i in indices] + [self.right.trees[i] for i in indices]
        words = [self.left.words[i] for i in indices] + [self.right.words[i] for i in indices]
        return PairBatch(
            build_forest(trees, words), self.scores[indices], None if self.labels is None else self.labels[indices]
        )


def encode(trees, vocab: Vocabulary) -> EncodedSplit:
    return EncodedSplit(list(trees), [node_words(t, vocab.encode(t.tokens)) for t in trees])


def encode_split(items, vocab: Vocabulary, scale: tuple | None = None, class_names: tuple | None = None):
    """A split's trees (EncodedSplit) or sentence pairs (EncodedPairs, their
    scores mapped onto the head's ratings by ``scale``, ((lo, hi), K), when
    given, their class numbers kept, and ``class_names`` when the task has them)."""
    items = list(items)
    if items and isinstance(items[0], SickPair):
        scores = np.array([pair.score for pair in items], dtype=np.float64)
        labels = np.array([pair.label for pair in items], dtype=np.int64)
        return EncodedPairs(
            encode([pair.tree_a for pair in items], vocab),
            encode([pair.tree_b for pair in items], vocab),
            scores if scale is None else to_ratings(scores, *scale),
            scale,
            labels,
            None if class_names is None else tuple(class_names),
        )
    return encode(items, vocab)


def encode_task(task, vocab: Vocabulary) -> dict:
    """Every split the task has, encoded (a user's files may have no test
    split; their pair scores become the head's ratings)."""
    return {name: encode_split(items, vocab, task.score_scale, task.class_names) for name, items in task.splits.items()}


def first_examples(split, count: int):
    """The first ``count`` examples of an encoded split."""
    if isinstance(split, EncodedPairs):
        return EncodedPairs(
            first_examples(split.left, count),
            first_examples(split.right, count),
            split.scores[:count],
            split.scale,
            None if split.labels is None else split.labels[:count],
            split.class_names,
        )
    return EncodedSplit(
        split.trees[:count], split.words[:count], None if split.labels is None else split.labels[:count]
    )


def check_splits(task, cell) -> None:
    """Every split of ``task`` non-empty and every tree one the cell can
    compose, checked before training; DataError names the file and line of a
    bad tree."""
    for split, items in task.splits.items():
        if not items:
            why = " (sst2 drops sentences whose root is neutral)" if task.name == "sst2" else ""
            raise DataError(
                f"the {split} split of {task.name} is empty{why}: nothing to "
                f"{'train on' if split == 'train' else 'evaluate'}"
            )
        trees = task_trees(task, split)
        for start in range(0, len(trees), 1024):
            chunk = trees[start : start + 1024]
            try:
                cell.check_forest(_structure_forest(chunk))
            except ValueError:
                for tree in chunk:  # which tree: a forest of one at a time
                    try:
                        cell.check_forest(_structure_forest([tree]))
                    except StructureError as error:  # the node, in the tree's own numbering
                        raise DataError(
                            f"{error.reason} (node {error.node} of its tree)", *_split_source(tree.source)
                        ) from None
                    except ValueError as error:
                        raise DataError(str(error), *_split_source(tree.source)) from None
                raise


def _structure_forest(trees):
    """A forest of ``trees`` carrying their structure (any word id >= 0 where a node reads one)."""
    return build_forest(trees, [np.where(tree.token_index >= 0, 0, -1) for tree in trees])
