"""``PairClassifier``: the class of a sentence pair (entailment, paraphrase,
NLI), the scikit-learn way (``estimator.py`` for what the estimators share,
``pair_estimator.py`` for what the two of pairs share)."""

from __future__ import annotations

import numpy as np

from npcomp.configuration.options import given_on_none_of
from npcomp.data.datasets import PAIR_CLASS_TASKS
from npcomp.data.datasets.data_splits import check_fraction
from npcomp.data.readers.sick import SickPair
from npcomp.data.datasets.tasks import TaskData
from npcomp.training.evaluation import evaluate, pair_outputs
from .inputs import class_numbers, classes_of, pair_classes
from .pair_estimator import PairEstimator


class PairClassifier(PairEstimator):
    """The class of two sentences: one composition cell encodes both, the
    pair classifier (Tai et al.'s pair features [h_a * h_b, |h_a - h_b|] and
    the sigmoid layer of their eq. 15, then a softmax over the classes,
    cross-entropy: ``heads.PairClassifierHead``) classifies the pair, as
    `npcomp train --task sick-entailment` trains it.

    Parameters (keywords, but ``model``): as ``TreeClassifier``'s (``tree``,
    ``input``, ``dev_fraction``, ``warm_start``, ``callbacks``, ``verbose`` and the
    training options, None: the setting of ``sick-entailment``, which is
    Tai et al.'s SICK relatedness setting: no paper gives entailment's).

    The word vectors are the fixed GloVe 840B vectors found in
    DATA_DIR/vectors (``vectors``, ``data_dir``); ``vectors="random"`` trains
    without.  Fitted: ``classes_`` (the labels sorted, or the class numbers
    0..C-1 of SickPairs' own labels), ``config_``, ``model_``, ``params_``,
    ``vocabulary_``, ``metrics_``, ``run_``.
    """

    MODEL = "treelstm-childsum"
    TASKS = ("sick-entailment",)
    OWN = {"tree": None, "input": "auto", "dev_fraction": 0.1, "warm_start": False, "callbacks": (), "verbose": False}
    LEFT_OUT = given_on_none_of(PAIR_CLASS_TASKS)
    _estimator_type = "classifier"

    def fit(self, X, y=None, dev=None, test=None):
        """Train on the sentence pairs ``X`` (each a ``SickPair`` or two
        sentences ``(a, b)``: Trees, bracketed trees or plain sentences) of
        the classes ``y`` (strings or ints, one per pair; None: the
        SickPairs' own class numbers, ``label``).

        dev:  pairs to choose the best epoch on (by accuracy), ``(X_dev,
              y_dev)`` or SickPairs; None: ``dev_fraction`` of X
        test: evaluated once by the best model at the end
              (``metrics_["test"]``), as npcomp train does

        Returns the estimator."""
        config = self.training_config()
        check_fraction(self.dev_fraction)
        text_trees = self._text_trees(config["structure"])
        read = {
            split: (*self._read_sides(pairs, split, text_trees)[:2], labels, pair_classes(pairs))
            for split, (pairs, labels) in self._given(X, y, dev, test).items()
        }
        classes = self._classes(y, read)
        splits = {}
        for split, (left, right, labels, own) in read.items():
            numbers = self._numbers(labels, own, classes, split)
            splits[split] = [
                SickPair(a, b, float("nan"), str(index), int(number))
                for index, (a, b, number) in enumerate(zip(left, right, numbers))
            ]
        if "dev" not in splits:
            splits["train"], splits["dev"] = self._split_dev(splits["train"], config)
        self._train(
            config, TaskData(config["task"], len(classes), splits, class_names=tuple(str(name) for name in classes))
        )
        self.classes_ = classes
        return self

    @classmethod
    def _check_data(cls) -> tuple:
        """40 pairs of synthetic sentences as text, labelled "same" where their
        sentiment classes agree, "other" where they do not."""
        from npcomp.data.datasets.synthetic import generate_treebank

        trees = generate_treebank(40, seed=1)
        pairs = [(tree, trees[(index + 1) % len(trees)]) for index, tree in enumerate(trees)]
        return (
            [(" ".join(a.tokens), " ".join(b.tokens)) for a, b in pairs],
            ["same" if a.root_label == b.root_label else "other" for a, b in pairs],
        )

    @staticmethod
    def _classes(y, read: dict) -> np.ndarray:
        """The classes: ``y``'s labels sorted, or with y None the SickPairs'
        own class numbers 0..C-1 (at least two)."""
        if y is not None:
            return classes_of(y)
        own = [number for *_, numbers in read.values() for number in numbers if number is not None]
        return np.arange(max(max(own, default=-1) + 1, 2))

    @staticmethod
    def _numbers(labels, own: list, classes: np.ndarray, split: str) -> np.ndarray:
        """(n,) the class numbers of a split's pairs, from its labels given or
        the SickPairs' own; ValueError naming a pair without a class."""
        what = "y" if split == "train" else f"{split}'s y"
        if labels is not None:
            return class_numbers(labels, classes, len(own), what)
        missing = [index for index, number in enumerate(own) if number is None]
        if missing:
            where = "X" if split == "train" else split
            raise ValueError(
                f"{where}[{missing[0]}] has no class: give the classes (y), or "
                "SickPairs labelled with their class numbers"
            )
        bad = [index for index, number in enumerate(own) if number >= len(classes)]
        if bad:
            raise ValueError(f"{split}[{bad[0]}] is labelled {own[bad[0]]}, not a class number 0..{len(classes) - 1}")
        return np.array(own, dtype=np.int64)

    def _outputs(self, X) -> np.ndarray:
        """(n, C): the pair head's class probabilities p_hat of each pair."""
        return pair_outputs(self.model_, self.params_, self._encoded(*self._pairs(X)), self.config_["eval_batch_size"])

    def predict(self, X) -> np.ndarray:
        """(n,): the class of each pair (of ``classes_``)."""
        self._check_fitted()
        return self.classes_[self.model_.head.decode(self._outputs(X))]

    def predict_proba(self, X) -> np.ndarray:
        """(n, C): each pair's class probabilities, columns in ``classes_``'s order."""
        self._check_fitted()
        return self._outputs(X).astype(np.float64)

    def score(self, X, y=None) -> float:
        """The share of pairs whose class is predicted right (accuracy, a
        fraction, as scikit-learn's classifiers score); ``y`` None: the
        SickPairs' own class numbers."""
        return self.evaluate(X, y)["accuracy"] / 100.0

    def evaluate(self, X, y=None) -> dict:
        """npcomp's metrics of labelled pairs, as ``metrics_["test"]``:
        accuracy and macro-F1 (percent), the confusion matrix
        (``confusion[gold][predicted]``, rows and columns in ``classes_``'s
        order) and the classes' names."""
        self._check_fitted()
        left, right = self._pairs(X)
        numbers = self._numbers(y, pair_classes(X), self.classes_, "train")
        split = self._encoded(left, right, labels=numbers)
        split.class_names = tuple(str(name) for name in self.classes_)
        return evaluate(self.model_, self.params_, split, self.config_["eval_batch_size"])

    def _fitted_record(self) -> dict:
        return {"classes": self.classes_.tolist(), "n_classes": len(self.classes_)}

    def _take_record(self, record: dict) -> None:
        self.classes_ = np.array(record["classes"])
