"""npcomp: compositional sentence models with hand-written, gradient-checked backpropagation.

``npcomp.TreeClassifier``, ``npcomp.PairRegressor`` and
``npcomp.PairClassifier`` are estimators with
scikit-learn's conventions (``npcomp.estimators``); ``npcomp.config`` is the
configuration `npcomp train` runs.  ``import npcomp`` loads neither NumPy
nor numba: what follows imports them when it is used.
"""
__version__ = "0.1.0"


def config(model: str | None = None, task: str | None = None, **options) -> dict:
    """The configuration `npcomp train --model MODEL --task TASK` runs with
    the same options, checked: the model's paper setting for the task, the
    ``options`` given over it (config keys as keywords: ``lr=0.1``,
    ``dim=150``, ``fixed_embeddings=True``, ``recurrent_dropout=[0.25, 0.3]``),
    the rules that derive the rest, and every core's threads unless
    ``threads`` is given.  None (model, task): `npcomp train`'s default, the
    Constituency Tree-LSTM on the synthetic treebank.

    ``npcomp.errors.ConfigError`` names the option at fault: an unknown
    one, a value out of its range or of the wrong type, options that do not
    go together.
    """
    from npcomp.configuration.run_config import keyword_config
    return keyword_config(model, task, options)


# the estimators, loaded (with NumPy and numba) when first named
_ESTIMATORS = ("TreeClassifier", "PairRegressor", "PairClassifier")


def __getattr__(name: str):
    if name in _ESTIMATORS:
        from npcomp import estimators
        return getattr(estimators, name)
    raise AttributeError(f"module 'npcomp' has no attribute {name!r}")


def __dir__() -> list:
    return sorted([*globals(), *_ESTIMATORS])
