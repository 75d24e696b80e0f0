"""``TreeClassifier``: a compositional model classifying sentences, the
scikit-learn way (``estimator.py`` for what the two estimators share)."""

from __future__ import annotations

import json

import numpy as np

from npcomp.configuration.options import SENTENCE_TASKS, given_on_none_of
from npcomp.data.datasets.class_list import require_two_classes
from npcomp.data.datasets.data_splits import check_fraction
from npcomp.data.readers.formats import Tree
from npcomp.data.datasets.tasks import TaskData, as_structure, restructured
from npcomp.training.encoding import encode
from npcomp.training.evaluation import evaluate, predict_split
from npcomp.training.predictions import class_probabilities
from .estimator import Estimator
from .inputs import check_labels, class_numbers, classes_of, largest_label, sentence_trees, with_root_classes


class TreeClassifier(Estimator):
    """A sentence classifier: a composition cell over each sentence's tree,
    a classifier at its labelled nodes (npcomp train's model and loop).

    Parameters (keywords, but ``model``):

    model:        the model (``npcomp train --help`` lists them)
    task:         whose paper setting the options left None take: sst5, sst2
                  or synthetic (small sizes that train in seconds)
    tree:         what a plain sentence becomes: parsed, right, left or chain
                  (None: the model's own; given trees keep their brackets)
    input:        what a string of X is: "text" (every one a sentence, even
                  one that starts with "("), "tree" (every one a bracketed
                  tree), "auto" (a string that starts with "(" is a tree
                  where it is a complete one, else text, with a warning
                  naming it)
    dev_fraction: without ``dev``, the share of X set aside to choose the
                  best epoch on (drawn by ``seed``)
    warm_start:   a fitted estimator's ``fit`` continues its training (on the
                  same examples) up to ``epochs``, as `npcomp train --resume`
    callbacks:    called after every dev evaluation as ``callback(at, dev,
                  metrics)`` (``trainer.train``); a true return stops training
    verbose:      print each evaluation and show a progress bar
    lr, dim, epochs, ...: every training option of ``npcomp train`` by its
                  config key (``npcomp/configuration/options.py``), None: not given,
                  so the model's paper setting for ``task`` or the option's
                  own default, as ``npcomp.config`` makes it

    Fitted: ``classes_`` (labels sorted, or the class numbers 0..C-1 of the
    trees' own labels), ``config_``, ``model_``, ``params_`` (best dev),
    ``vocabulary_``, ``metrics_`` (metrics.json's record), ``run_``.
    """

    MODEL = "treelstm-nary"
    TASKS = ("synthetic", "sst5", "sst2")
    OWN = {
        "task": None,
        "tree": None,
        "input": "auto",
        "dev_fraction": 0.1,
        "warm_start": False,
        "callbacks": (),
        "verbose": False,
    }
    LEFT_OUT = given_on_none_of(SENTENCE_TASKS)
    _estimator_type = "classifier"

    def fit(self, X, y=None, dev=None, test=None):
        """Train on the sentences ``X`` (Trees, bracketed trees or plain
        sentences), of the classes ``y`` (ints or strings; None: the trees'
        own labels, class numbers, at every node that has one).

        dev:  the sentences to choose the best epoch on: ``(X_dev, y_dev)``,
              or labelled trees; None: ``dev_fraction`` of X
        test: evaluated once by the best model at the end, as npcomp train
              does (``metrics_["test"]``), ``(X_test, y_test)`` or labelled
              trees; its words join the vocabulary, as npcomp train's do

        Returns the estimator."""
        config = self.training_config()
        check_fraction(self.dev_fraction)
        classes = None if y is None else classes_of(y)
        names = None if classes is None or classes.dtype.kind in "iu" else classes.tolist()
        text_trees = self._text_trees(config["structure"], names)
        splits = {"train": sentence_trees(X, text_trees)}
        labels = {"train": y}
        for split, given in (("dev", dev), ("test", test)):
            if given is not None:
                splits[split], labels[split] = _examples(given, text_trees, split)
        if y is None:  # the trees' own class numbers
            classes = np.arange(
                max(
                    max(largest_label(part, "X" if split == "train" else split) for split, part in splits.items()) + 1,
                    2,
                )
            )
        for split, part in splits.items():
            what = "X" if split == "train" else split
            if labels[split] is not None:
                numbers = class_numbers(labels[split], classes, len(part), "y" if split == "train" else f"{split}'s y")
                splits[split] = part = with_root_classes(part, numbers, classes, what)
            check_labels(part, len(classes), what)
        require_two_classes(splits["train"], classes.tolist(), "X")
        if "dev" not in splits:
            splits["train"], splits["dev"] = self._split_dev(splits["train"], config)
        spans = config["supervision"] == "spans"  # the sequence models' phrases
        self._train(
            config,
            restructured(
                TaskData(config["task"], len(classes), splits, class_names=classes.tolist()), config["structure"], spans
            ),
        )
        self.classes_ = classes
        return self

    def _root_outputs(self, trees: list) -> np.ndarray:
        """(n, C): the head's outputs at each tree's root."""
        split = encode(trees, self.vocabulary_)
        outputs = predict_split(self.model_, self.params_, split, self.config_["eval_batch_size"])
        width = len(self.classes_) if self.model_.head_name != "ordinal" else len(self.classes_) - 1
        return np.array([out[tree.root] for tree, out in zip(trees, outputs)]).reshape(-1, width)

    def _given_trees(self, X) -> list:
        """The trees of ``X``, as the run reads them; a tree labelled outside
        the classes refused (DataError naming ``X[i]``), as npcomp predict
        refuses it."""
        trees = self._read_sentences(X, as_read=False)
        check_labels(trees, len(self.classes_), "X", roots=False)
        return as_structure(trees, self.config_["structure"])

    def predict(self, X) -> np.ndarray:
        """(n,): the class of each sentence (of ``classes_``), at its tree's root."""
        self._check_fitted()
        return self.classes_[self.model_.head.decode(self._root_outputs(self._given_trees(X)))]

    def predict_proba(self, X) -> np.ndarray:
        """(n, C): each sentence's class probabilities, columns in ``classes_``'s
        order (the ordinal head's q_(k-1) - q_k, clipped at 0 where its
        cumulative outputs are not monotone, then made to sum to 1)."""
        self._check_fitted()
        outputs = self._root_outputs(self._given_trees(X))
        probabilities = class_probabilities(self.model_.head_name, outputs).astype(np.float64)
        return probabilities / probabilities.sum(axis=1, keepdims=True)

    def score(self, X, y=None) -> float:
        """The share of sentences whose class is predicted right (root
        accuracy, a fraction, as scikit-learn's classifiers score); ``y``
        None: the trees' own root labels."""
        self._check_fitted()
        trees = self._labelled(X, y)
        predicted = self.model_.head.decode(self._root_outputs(trees))
        return float(np.mean(predicted == np.array([tree.root_label for tree in trees])))

    def evaluate(self, X, y=None) -> dict:
        """npcomp's metrics of labelled sentences, as ``metrics_["test"]``:
        root and all-node accuracy (percent), the roots' confusion matrix
        (``root_confusion[gold][predicted]``, rows and columns in ``classes_``'s
        order, which ``classes`` repeats; None past 50 classes)."""
        self._check_fitted()
        return evaluate(
            self.model_,
            self.params_,
            encode(self._labelled(X, y), self.vocabulary_),
            self.config_["eval_batch_size"],
            classes=self.classes_.tolist(),
        )

    def transform(self, X) -> np.ndarray:
        """(n, d): the sentence vectors, the encoder's state at each tree's
        root (``sentence_vectors``): features for another estimator."""
        return self.sentence_vectors(X)

    def _labelled(self, X, y) -> list:
        """The trees of ``X`` labelled with ``y``'s classes (None: their own)."""
        trees = self._read_sentences(X, as_read=False)
        if y is not None:
            trees = with_root_classes(trees, class_numbers(y, self.classes_, len(trees)), self.classes_, "X")
        check_labels(trees, len(self.classes_), "X")
        return as_structure(trees, self.config_["structure"])

    @classmethod
    def _check_data(cls) -> tuple:
        """40 sentences of the synthetic treebank as text, with their polarity."""
        from npcomp.data.datasets.synthetic import generate_treebank

        trees = generate_treebank(40, seed=0)
        polarity = ("negative", "negative", "neutral", "positive", "positive")
        return [" ".join(tree.tokens) for tree in trees], [polarity[tree.root_label] for tree in trees]

    def _fitted_record(self) -> dict:
        return {"classes": self.classes_.tolist(), "n_classes": len(self.classes_)}

    def _take_record(self, record: dict) -> None:
        classes = record["classes"]
        if not isinstance(classes, list) or len(classes) != self.model_.n_classes:
            raise ValueError(
                f"its classes are {json.dumps(classes)[:60]}, not a list of the "
                f"{self.model_.n_classes} its model's head predicts"
            )
        kinds = {type(name) for name in classes}
        if kinds not in ({str}, {int}):
            raise TypeError(
                f"its classes are {json.dumps(classes)[:60]}: class labels are all strings or all whole numbers"
            )
        if classes != sorted(set(classes)):
            raise ValueError(
                f"its classes {json.dumps(classes)[:60]} are not the distinct "
                "labels in sorted order, as fit makes them (edited?)"
            )
        self.classes_ = np.array(classes)


def _examples(given, text_trees, split: str) -> tuple:
    """(trees, labels or None) of a dev or test split: ``(X, y)``, or labelled trees."""
    if isinstance(given, tuple) and len(given) == 2 and not isinstance(given[0], (str, Tree)):
        return sentence_trees(given[0], text_trees, split), given[1]
    return sentence_trees(given, text_trees, split), None
