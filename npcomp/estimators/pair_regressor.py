"""``PairRegressor``: the relatedness of sentence pairs, the scikit-learn way
(``estimator.py`` for what the two estimators share)."""

from __future__ import annotations

import json
import math

import numpy as np

from npcomp.data.datasets.data_splits import check_fraction
from npcomp.errors import ConfigError
from npcomp.data.datasets.score_scale import (
    check_scores,
    checked_range,
    from_ratings,
    range_of,
    rating_classes,
    to_ratings,
)
from npcomp.data.readers.sick import SickPair
from npcomp.data.datasets.tasks import TaskData
from npcomp.training.evaluation import predict_relatedness, relatedness_metrics
from .pair_estimator import PairEstimator


class PairRegressor(PairEstimator):
    """The relatedness of two sentences: one composition cell encodes both,
    Tai et al.'s similarity head scores the pair (eq. 15: a distribution
    over the ratings 1..K, its expectation the score), as `npcomp train
    --task sick` trains it.

    Parameters (keywords, but ``model``): as ``TreeClassifier``'s (``tree``,
    ``input``, ``dev_fraction``, ``warm_start``, ``callbacks``, ``verbose`` and the
    training options, None: SICK's paper setting), and

    score_range:  (lo, hi) of the scores; None: the training scores'
                  smallest and largest.  It maps onto the head's ratings 1..K
                  (``score_scale.py``: SICK's 1..5 is K = 5)

    The paper's word vectors are fixed GloVe 840B vectors found in
    DATA_DIR/vectors (``vectors``, ``data_dir``); ``vectors="random"`` trains
    without.  Fitted: ``score_range_``, ``config_``, ``model_``, ``params_``,
    ``vocabulary_``, ``metrics_``, ``run_``.
    """

    MODEL = "treelstm-childsum"
    TASKS = ("sick",)
    OWN = {
        "tree": None,
        "input": "auto",
        "score_range": None,
        "dev_fraction": 0.1,
        "warm_start": False,
        "callbacks": (),
        "verbose": False,
    }
    _estimator_type = "regressor"

    def fit(self, X, y=None, dev=None, test=None):
        """Train on the sentence pairs ``X`` (each a ``SickPair`` or two
        sentences ``(a, b)``: Trees, bracketed trees or plain sentences)
        with the scores ``y`` (None: the SickPairs' own).

        dev:  pairs to choose the best epoch on, ``(X_dev, y_dev)`` or
              SickPairs; None: ``dev_fraction`` of X
        test: evaluated once by the best model at the end
              (``metrics_["test"]``), as npcomp train does

        Returns the estimator."""
        config = self.training_config()
        check_fraction(self.dev_fraction)
        text_trees = self._text_trees(config["structure"])
        read = {
            split: self._read_pairs(pairs, scores, split, text_trees)
            for split, (pairs, scores) in self._given(X, y, dev, test).items()
        }
        score_range = (
            checked_range(self.score_range)
            if self.score_range is not None
            else range_of([(score, f"y[{index}]", None) for index, score in enumerate(read["train"][2])], "y")
        )
        n_ratings = rating_classes(score_range)
        splits = {}
        for split, (left, right, scores) in read.items():
            what = "y" if split == "train" else f"{split}'s y"
            check_scores(
                [(score, f"{what}[{index}]", None) for index, score in enumerate(scores)],
                score_range,
                given=self.score_range is not None,
            )
            ratings = to_ratings(scores, score_range, n_ratings)
            splits[split] = [
                SickPair(a, b, float(rating), str(index))
                for index, (a, b, rating) in enumerate(zip(left, right, ratings))
            ]
        if "dev" not in splits:
            splits["train"], splits["dev"] = self._split_dev(splits["train"], config)
        self._train(config, TaskData(config["task"], n_ratings, splits))
        self.score_range_ = score_range
        return self

    def _read_pairs(self, pairs, scores, split: str, text_trees) -> tuple:
        """(left trees, right trees, scores) of a split's pairs, every pair
        scored with a finite number (ValueError naming the entry otherwise)."""
        what = "X" if split == "train" else split
        left, right, own = self._read_sides(pairs, split, text_trees)
        if scores is None:
            missing = [index for index, score in enumerate(own) if score is None]
            if missing:
                raise ValueError(f"{what}[{missing[0]}] has no score: give the scores (y), or SickPairs")
            scores, named = own, f"{what}[{{}}].score"
        else:
            scores = list(np.asarray(scores, dtype=object).ravel())
            named = ("y" if split == "train" else f"{split}'s y") + "[{}]"
        if len(scores) != len(left):
            raise ValueError(f"{len(scores)} scores for {len(left)} pairs ({what})")
        return left, right, [self._finite(score, named.format(index)) for index, score in enumerate(scores)]

    def _finite(self, score, name: str) -> float:
        """``score`` as a float; ValueError naming it (``y[3]``) and the scale
        unless it is a finite number."""
        try:
            number = float(score)
        except (TypeError, ValueError, OverflowError):
            number = None
        if number is None or isinstance(score, (bool, np.bool_)) or not math.isfinite(number):
            scale = getattr(self, "score_range_", None) or self.score_range
            on = (
                f"on the scale {_scale(scale)}"
                if scale is not None
                else "(the scale is the training scores' smallest to largest, or score_range=)"
            )
            raise ValueError(f"{name} is {score!r}: a score is a finite number {on}")
        return number

    def _predicted(self, left: list, right: list) -> np.ndarray:
        """(n,): the scores of the pairs of trees ``left[i]``, ``right[i]``."""
        split = self._encoded(left, right)
        ratings = predict_relatedness(self.model_, self.params_, split, self.config_["eval_batch_size"])
        return from_ratings(ratings, self.score_range_, self.model_.head.n_classes)

    def predict(self, X) -> np.ndarray:
        """(n,): each pair's predicted score, on the scale of ``score_range_``."""
        self._check_fitted()
        return self._predicted(*self._pairs(X))

    def score(self, X, y=None) -> float:
        """Pearson's r of the predicted scores with ``y`` (None: the SickPairs' own)."""
        self._check_fitted()
        left, right, scores = self._read_pairs(X, y, "train", self._text_trees(self.config_["structure"]))
        return relatedness_metrics(self._predicted(left, right), np.array(scores))["pearson"]

    @classmethod
    def _check_data(cls) -> tuple:
        """40 pairs of synthetic sentences as text, scored 1 + the distance of
        their sentiment classes (1..5)."""
        from npcomp.data.datasets.synthetic import generate_treebank

        trees = generate_treebank(40, seed=1)
        pairs = [(tree, trees[(index + 1) % len(trees)]) for index, tree in enumerate(trees)]
        return (
            [(" ".join(a.tokens), " ".join(b.tokens)) for a, b in pairs],
            [1.0 + abs(a.root_label - b.root_label) for a, b in pairs],
        )

    def _fitted_record(self) -> dict:
        return {"score_range": list(self.score_range_), "n_classes": int(self.model_.head.n_classes)}

    def _take_record(self, record: dict) -> None:
        score_range = record["score_range"]
        shown = json.dumps(score_range)[:60]
        try:
            score_range = checked_range(score_range)
        except ConfigError:
            raise ValueError(f"its score_range is {shown}, not two finite numbers lo < hi") from None
        if rating_classes(score_range) != self.model_.head.n_classes:
            raise ValueError(
                f"its score_range {shown} maps onto "
                f"{rating_classes(score_range)} ratings, but its head has "
                f"{self.model_.head.n_classes} (edited?)"
            )
        self.score_range_ = score_range


def _scale(score_range) -> str:
    """A score range as a message writes it, [1, 5]."""
    try:
        low, high = (float(end) for end in score_range)
    except (TypeError, ValueError):
        return repr(score_range)
    return f"[{low:g}, {high:g}]"
