"""npcomp's estimator checks: the conventions an estimator of the family
keeps, each checked by fitting it on small data.

scikit-learn's own ``check_estimator`` feeds numeric arrays to ``fit``; an
estimator that declares text input (``__sklearn_tags__``: ``string=True``,
no 2-D arrays) gets one check, ``check_estimator_cloneable``, and a
``SkipTestWarning`` ("Can't test estimator ... which requires input of
type InputTags(...)") in place of the rest.  These are the checks that
matter for a trained model of sentences, run on sentences:

===========================================  ===================================
check                                        what must hold
===========================================  ===================================
``fit_twice_gives_the_same_model``           fitting the same estimator again
                                             gives the same model, bit for bit
``clone_then_fit_equals_fit``                a clone (the constructor given
                                             ``get_params()``, and scikit-learn's
                                             ``clone`` where it is installed)
                                             fits the same model
``pickling_round_trips_predictions``         a pickled and unpickled fitted
                                             estimator predicts the same, as does
                                             one saved and loaded (``save``/``load``)
``set_params_then_fit_equals_construction``  ``set_params(seed=s)`` then ``fit``
                                             equals the estimator constructed
                                             with ``seed=s``
``predict_does_not_change_the_model``        predict, predict_proba, transform and
                                             score change no parameter, attribute
                                             or later prediction
``seeds_decide_the_result``                  another seed gives another model (the
                                             same seed the same: the checks above)
``thread_count_does_not_change_the_result``  ``threads=1`` and ``threads=2`` fit
                                             the same model, bit for bit
===========================================  ===================================

"The same model" is: the parameters (``params_.flat``) byte for byte, the
vocabulary, what fitting found (``classes_``, ``score_range_``: every public
attribute ending in ``_`` that is a plain value), the configuration but its
thread count, every epoch's training loss, and the outputs of ``predict``,
``predict_proba`` and ``transform`` on ``X``, byte for byte.

The estimator is fitted as given (its ``get_params()``; ``warm_start`` off,
since a warm start continues on purpose): give it small settings (``dim``,
``epochs``) and small data.  Any estimator of the family (a subclass of
``estimator.Estimator``) can be checked; one that has no default data
(``_check_data``) is given ``X`` and ``y``.
"""

from __future__ import annotations

import importlib.util
import pickle
import tempfile
from pathlib import Path

import numpy as np

CHECKS = (
    "fit_twice_gives_the_same_model",
    "clone_then_fit_equals_fit",
    "pickling_round_trips_predictions",
    "set_params_then_fit_equals_construction",
    "predict_does_not_change_the_model",
    "seeds_decide_the_result",
    "thread_count_does_not_change_the_result",
)
# what a fitted estimator computes from sentences, compared byte for byte
_OUTPUTS = ("predict", "predict_proba", "transform")
# fitted attributes that are objects (compared through what they compute) or times
_OBJECTS = ("run_", "model_", "params_", "vocabulary_", "metrics_", "config_")


class EstimatorCheckError(AssertionError):
    """One of npcomp's estimator checks failed: ``check`` names it, the
    message says what differed."""

    def __init__(self, check: str, message: str):
        super().__init__(f"{check}: {message}")
        self.check = check


def check_estimator(estimator, X=None, y=None, checks=None) -> list:
    """Run npcomp's estimator checks (module docstring) on ``estimator``.

    estimator: an unfitted (or fitted: it is not changed) estimator of the
               family, with the settings to fit it by (small ones: a few
               seconds a fit; eight fits in all)
    X, y:      the data to fit and predict (None: the estimator's small
               default data, ``type(estimator)._check_data()``)
    checks:    names among ``CHECKS`` (None: all)

    Returns the names of the checks run, all passed; raises
    ``EstimatorCheckError`` (an AssertionError) naming the first that failed.
    """
    names = list(CHECKS if checks is None else checks)
    unknown = [name for name in names if name not in CHECKS]
    if unknown:
        raise ValueError(f"no estimator check {unknown[0]!r}: the checks are {', '.join(CHECKS)}")
    if X is None:
        X, y = _default_data(estimator)
    params = dict(estimator.get_params(), warm_start=False)
    fitted = _construct(estimator, params).fit(X, y)
    base = _snapshot(fitted, X)
    for name in names:
        _RUNNERS[name](name, estimator, params, fitted, base, X, y)
    return names


def _default_data(estimator) -> tuple:
    data = getattr(type(estimator), "_check_data", None)
    try:
        return data()
    except (TypeError, NotImplementedError):
        raise TypeError(f"{type(estimator).__name__} has no default data to check it on: give X and y") from None


def _construct(estimator, params: dict):
    return type(estimator)(**params)


def _seed(estimator, params: dict) -> int:
    """The seed a fit of ``params`` trains with (its configuration's, when not given)."""
    return int(_construct(estimator, params).training_config()["seed"])


# --------------------------------------------------------------------------
# what is compared
# --------------------------------------------------------------------------


def _array(value) -> tuple:
    """An output as something ``==`` compares byte for byte (NaN equal to itself)."""
    value = np.asarray(value)
    if value.dtype.kind in "OUS":
        return (str(value.dtype), value.shape, value.tolist())
    return (str(value.dtype), value.shape, value.tobytes())


def _snapshot(estimator, X) -> dict:
    """What "the same model" compares (module docstring)."""
    fitted = {
        name: _array(value)
        for name, value in vars(estimator).items()
        if name.endswith("_") and not name.startswith("_") and name not in _OBJECTS
    }
    config = {key: value for key, value in estimator.config_.items() if key != "threads"}
    return {
        "parameters": _array(estimator.params_.flat),
        "vocabulary": tuple(estimator.vocabulary_.words),
        "fitted attributes": fitted,
        "configuration": config,
        "training losses": [epoch["train_loss"] for epoch in estimator.metrics_["epochs"]],
        **{f"{method}(X)": _array(getattr(estimator, method)(X)) for method in _OUTPUTS if hasattr(estimator, method)},
    }


def _require_same(check: str, first: dict, second: dict, what: str) -> None:
    differing = [key for key in first if first[key] != second.get(key)]
    if differing:
        raise EstimatorCheckError(check, f"{what}: the {', the '.join(differing)} differ")


# --------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------


def _fit_twice(check, estimator, params, fitted, base, X, y) -> None:
    again = pickle.loads(pickle.dumps(fitted))  # the fitted estimator, fitted once more
    _require_same(check, base, _snapshot(again.fit(X, y), X), "one estimator fitted twice")


def _clone(check, estimator, params, fitted, base, X, y) -> None:
    twin = _construct(estimator, estimator.get_params()).set_params(warm_start=False)
    if twin.get_params() != params:
        raise EstimatorCheckError(check, "the constructor given get_params() makes an estimator of other parameters")
    _require_same(check, base, _snapshot(twin.fit(X, y), X), "a clone (the constructor given get_params())")
    if importlib.util.find_spec("sklearn") is not None:
        from sklearn.base import clone

        twin = clone(estimator).set_params(warm_start=False)
        _require_same(check, base, _snapshot(twin.fit(X, y), X), "sklearn.base.clone's clone")


def _pickling(check, estimator, params, fitted, base, X, y) -> None:
    unpickled = pickle.loads(pickle.dumps(fitted))
    _require_same(check, base, _snapshot(unpickled, X), "the estimator pickled and unpickled")
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "estimator.npz"
        fitted.save(path)
        loaded = type(fitted).load(path)
    _require_same(check, base, _snapshot(loaded, X), "the estimator saved and loaded")


def _set_params(check, estimator, params, fitted, base, X, y) -> None:
    seed = _seed(estimator, params) + 1
    changed = _construct(estimator, params).set_params(seed=seed)
    if changed.get_params() != dict(params, seed=seed):
        raise EstimatorCheckError(check, "set_params(seed=...) changed other parameters")
    constructed = _construct(estimator, dict(params, seed=seed))
    _require_same(
        check,
        _snapshot(constructed.fit(X, y), X),
        _snapshot(changed.fit(X, y), X),
        "set_params(seed=...) then fit against the constructor given the seed",
    )


def _predict(check, estimator, params, fitted, base, X, y) -> None:
    state = pickle.dumps(fitted)
    parameters = fitted.get_params()
    attributes = sorted(vars(fitted))
    for method in (*_OUTPUTS, "score"):
        if hasattr(fitted, method):
            getattr(fitted, method)(X, y) if method == "score" else getattr(fitted, method)(X)
    _require_same(check, base, _snapshot(fitted, X), "the model after predicting")
    if fitted.get_params() != parameters or sorted(vars(fitted)) != attributes:
        raise EstimatorCheckError(check, "predicting changed the estimator's parameters or attributes")
    if pickle.dumps(fitted) != state:
        raise EstimatorCheckError(check, "predicting changed the estimator's pickled state")


def _seeds(check, estimator, params, fitted, base, X, y) -> None:
    seed = _seed(estimator, params) + 1
    other = _snapshot(_construct(estimator, dict(params, seed=seed)).fit(X, y), X)
    if other["parameters"] == base["parameters"]:
        raise EstimatorCheckError(
            check, f"seeds {seed - 1} and {seed} fit the same parameters: the seed does not decide the result"
        )


def _threads(check, estimator, params, fitted, base, X, y) -> None:
    one = _snapshot(_construct(estimator, dict(params, threads=1)).fit(X, y), X)
    two = _snapshot(_construct(estimator, dict(params, threads=2)).fit(X, y), X)
    _require_same(check, one, two, "threads=1 against threads=2")


_RUNNERS = dict(zip(CHECKS, (_fit_twice, _clone, _pickling, _set_params, _predict, _seeds, _threads)))
