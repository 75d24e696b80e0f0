"""What the two estimators of sentence pairs share (``PairRegressor``,
``PairClassifier``): their splits as given to ``fit``, the pairs read as the
run reads them, encoded for the model, and ``transform``."""

from __future__ import annotations

import numpy as np

from npcomp.configuration.options import given_on_none_of
from npcomp.data.datasets import PAIR_TASKS
from npcomp.data.datasets.tasks import as_structure
from npcomp.training.encoding import EncodedPairs, encode
from .estimator import Estimator
from .inputs import is_x_and_y, pair_trees


class PairEstimator(Estimator):
    """The shared part of ``PairRegressor`` and ``PairClassifier``: one
    composition cell encodes both sentences of a pair, a pair head (Tai et
    al.'s eq. 15) scores or classifies it."""

    LEFT_OUT = given_on_none_of(PAIR_TASKS)

    @staticmethod
    def _given(X, y, dev, test) -> dict:
        """{split: (pairs, targets or None)} of what ``fit`` is given: dev and
        test as ``(pairs, targets)`` or as pairs alone (SickPairs)."""
        given = {"train": (X, y)}
        for split, pairs in (("dev", dev), ("test", test)):
            if pairs is not None:
                given[split] = pairs if is_x_and_y(pairs) else (pairs, None)
        return given

    @staticmethod
    def _read_sides(pairs, split: str, text_trees) -> tuple:
        """(left trees, right trees, their own scores) of a split's pairs as
        the run reads them; sentences named ``X[i][0]`` (``dev[i][1]``, ...)."""
        what = "X" if split == "train" else split
        left, right, own = pair_trees(pairs, text_trees, what)
        left, right = (as_structure(trees, text_trees.structure) for trees in (left, right))
        return left, right, own

    def _pairs(self, X) -> tuple:
        """(left trees, right trees) of the pairs ``X``, as the run reads them."""
        structure = self.config_["structure"]
        left, right, _ = pair_trees(X, self._text_trees(structure))
        return as_structure(left, structure), as_structure(right, structure)

    def _encoded(self, left: list, right: list, scores=None, labels=None) -> EncodedPairs:
        """The pairs of trees ``left[i]``, ``right[i]`` encoded with the fitted vocabulary."""
        return EncodedPairs(
            encode(left, self.vocabulary_),
            encode(right, self.vocabulary_),
            np.zeros(len(left)) if scores is None else scores,
            None,
            None if labels is None else np.asarray(labels, dtype=np.int64),
        )

    def transform(self, X) -> np.ndarray:
        """(n, 2 d): each pair's two sentence vectors side by side, (h_a, h_b),
        the encoder's states at the two roots."""
        self._check_fitted()
        left, right = self._pairs(X)
        return np.hstack([self._states(left), self._states(right)])
