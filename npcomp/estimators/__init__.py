"""Estimators with scikit-learn's conventions over npcomp's models and
training loop: ``TreeClassifier`` classifies sentences, ``PairRegressor``
scores the relatedness of sentence pairs, ``PairClassifier`` classifies
them (entailment) (``fit``, ``predict``, ``score``,
``transform``, ``get_params``/``set_params``, ``save``/``load``).  They use
scikit-learn's conventions without importing it."""
from .estimator import NotFittedError
from .model_file import EstimatorFileError
from .pair_classifier import PairClassifier
from .pair_regressor import PairRegressor
from .tree_classifier import TreeClassifier

__all__ = ["TreeClassifier", "PairRegressor", "PairClassifier", "NotFittedError",
           "EstimatorFileError"]
