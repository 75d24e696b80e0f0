"""npcomp's estimator checks (``npcomp.estimators.check_estimator``) over
every estimator of the family, the checker itself caught on planted faults,
and ``NotFittedError`` as scikit-learn's.  Tiny models (dim 10, one epoch)
on the checks' own small data: seconds an estimator."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sklearn.exceptions

import npcomp.estimators
from conftest import modules_loaded_by
from npcomp.estimators import EstimatorCheckError, PairClassifier, PairRegressor, TreeClassifier, check_estimator
from npcomp.estimators.checks import CHECKS

TINY = dict(dim=10, embedding_dim=10, epochs=1, batch_size=10, seed=1, tree="right")
# every estimator of the family, as a user would make it small: add new ones here
ESTIMATORS = [TreeClassifier(**TINY), PairRegressor(**TINY, vectors="random"), PairClassifier(**TINY, vectors="random")]


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda estimator: type(estimator).__name__)
def test_every_estimator_passes_npcomps_checks(estimator):
    before = estimator.get_params()
    assert check_estimator(estimator) == list(CHECKS)
    assert estimator.get_params() == before and not hasattr(estimator, "run_")


def test_the_checks_take_the_data_given():
    X, y = TreeClassifier._check_data()
    assert check_estimator(
        TreeClassifier("lstm", **dict(TINY, tree="chain")), X[:20], y[:20], checks=["fit_twice_gives_the_same_model"]
    ) == ["fit_twice_gives_the_same_model"]
    with pytest.raises(ValueError, match="no estimator check 'fit_thrice'"):
        check_estimator(TreeClassifier(**TINY), checks=["fit_thrice"])


# --------------------------------------------------------------------------
# the checker catches what it checks
# --------------------------------------------------------------------------


class PredictMoves(TreeClassifier):
    """Predicting nudges a parameter."""

    def predict(self, X):
        self.params_.flat[0] += 1e-3
        return super().predict(X)


class SeedIgnored(TreeClassifier):
    """Every seed trains as seed 1."""

    def training_config(self) -> dict:
        return dict(super().training_config(), seed=1)


class FitDrifts(TreeClassifier):
    """Each fit adds noise of its own, unseeded."""

    def fit(self, X, y=None, dev=None, test=None):
        super().fit(X, y, dev, test)
        self.params_.flat[:] += np.random.default_rng().normal(0, 1e-6, self.params_.flat.shape)
        return self


class ThreadsMatter(TreeClassifier):
    """Two threads train one epoch more."""

    def training_config(self) -> dict:
        config = super().training_config()
        return dict(config, epochs=config["epochs"] + (self.threads == 2))


class ParamsForgotten(TreeClassifier):
    """set_params keeps nothing."""

    def set_params(self, **params):
        return self


class PickleForgets(TreeClassifier):
    """The classes are not pickled."""

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["classes_"] = state["classes_"][::-1]
        return state


@pytest.mark.parametrize(
    "faulty, check",
    [
        (PredictMoves, "predict_does_not_change_the_model"),
        (SeedIgnored, "seeds_decide_the_result"),
        (FitDrifts, "fit_twice_gives_the_same_model"),
        (ThreadsMatter, "thread_count_does_not_change_the_result"),
        (ParamsForgotten, "set_params_then_fit_equals_construction"),
        (PickleForgets, "pickling_round_trips_predictions"),
    ],
)
def test_the_checker_catches_a_planted_fault(faulty, check):
    X, y = TreeClassifier._check_data()
    with pytest.raises(EstimatorCheckError, match=f"^{check}: ") as raised:
        check_estimator(faulty(**TINY), X[:20], y[:20], checks=[check])
    assert raised.value.check == check and isinstance(raised.value, AssertionError)


# --------------------------------------------------------------------------
# NotFittedError
# --------------------------------------------------------------------------


def test_not_fitted_is_scikit_learns_not_fitted_error():
    with pytest.raises(sklearn.exceptions.NotFittedError, match="not fitted yet"):
        TreeClassifier().predict(["it is good"])
    error = npcomp.estimators.NotFittedError
    assert issubclass(error, sklearn.exceptions.NotFittedError)
    assert issubclass(error, ValueError) and issubclass(error, AttributeError)
    for handled in (error, ValueError, AttributeError):
        with pytest.raises(handled):
            PairRegressor().transform([("a", "b")])
    try:
        TreeClassifier().score(["it is good"], [1])
    except npcomp.estimators.NotFittedError as caught:
        again = pickle.loads(pickle.dumps(caught))
        assert type(again) is error and str(again) == str(caught)
    from npcomp.estimators import NotFittedError

    assert NotFittedError is error


def test_importing_the_estimators_does_not_import_scikit_learn():
    assert modules_loaded_by("import npcomp.estimators", ("sklearn",)) == []
    assert modules_loaded_by("from npcomp.estimators import NotFittedError", ("sklearn",)) == ["sklearn"]
