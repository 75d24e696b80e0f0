"""npcomp: compositional sentence models with hand-written, gradient-checked backpropagation.

``npcomp.TreeClassifier``, ``npcomp.PairRegressor`` and
``npcomp.PairClassifier`` are estimators with
scikit-learn's conventions (``npcomp.estimators``); ``npcomp.config`` is the
configuration `npcomp train` runs; ``npcomp.TreeModel`` the model itself and
``npcomp.MODELS`` the registry of models; ``parse_ptb``, ``read_ptb_file``
and ``read_vectors`` read trees and word vectors; ``explain`` lays a cell's
forward and backward open; ``train``, ``evaluate``, ``predict``, ``sweep``,
``reproduce`` and ``plot`` do what the commands of those names do
(``npcomp.runs``).  Each layer's package exports its own names
(``__all__``; docs/API.md).  ``import npcomp`` loads neither NumPy nor
numba: what follows imports them when it is used.
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


# what a user starts from, each loaded (with NumPy and numba where it needs
# them) when first named: the estimators, the model and its registry, reading
# trees and word vectors, the explain document, the two kinds of bad input,
# and what each command does, from Python (npcomp.runs)
_HOMES = {
    "TreeClassifier": "npcomp.estimators",
    "PairRegressor": "npcomp.estimators",
    "PairClassifier": "npcomp.estimators",
    "TreeModel": "npcomp.models",
    "MODELS": "npcomp.cells",
    "Tree": "npcomp.data.readers",
    "parse_ptb": "npcomp.data.readers",
    "read_ptb_file": "npcomp.data.readers",
    "Vocabulary": "npcomp.data.readers",
    "read_vectors": "npcomp.data.readers",
    "explain": "npcomp.study.explain",
    "ConfigError": "npcomp.errors",
    "DataError": "npcomp.errors",
    **{name: "npcomp.runs" for name in ("train", "evaluate", "predict", "sweep", "reproduce", "plot")},
}
__all__ = [
    "TreeClassifier",
    "PairRegressor",
    "PairClassifier",
    "config",
    "train",
    "evaluate",
    "predict",
    "sweep",
    "reproduce",
    "plot",
    "TreeModel",
    "MODELS",
    "Tree",
    "parse_ptb",
    "read_ptb_file",
    "Vocabulary",
    "read_vectors",
    "explain",
    "ConfigError",
    "DataError",
]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'npcomp' has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
