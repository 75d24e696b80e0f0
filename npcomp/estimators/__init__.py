"""Estimators with scikit-learn's conventions over npcomp's models and
training loop: ``TreeClassifier`` classifies sentences, ``PairRegressor``
scores the relatedness of sentence pairs, ``PairClassifier`` classifies
them (entailment) (``fit``, ``predict``, ``score``,
``transform``, ``get_params``/``set_params``, ``save``/``load``).  They use
scikit-learn's conventions without importing it: ``NotFittedError``, a
subclass of scikit-learn's where it is installed, is made (and scikit-learn
imported) when first named.  ``check_estimator`` runs npcomp's estimator
checks (``checks.py``)."""

from .checks import EstimatorCheckError, check_estimator
from .estimator import not_fitted_error
from .model_file import EstimatorFileError
from .pair_classifier import PairClassifier
from .pair_regressor import PairRegressor
from .tree_classifier import TreeClassifier

__all__ = [
    "TreeClassifier",
    "PairRegressor",
    "PairClassifier",
    "NotFittedError",
    "EstimatorFileError",
    "check_estimator",
    "EstimatorCheckError",
]


def __getattr__(name: str):
    if name == "NotFittedError":
        return not_fitted_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
