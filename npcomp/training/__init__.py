"""The training loop: a run's named steps (``trainer.py``), from its data
(``run_data.py``) encoded for its model (``encoding.py``) to one step of a
minibatch in shards on threads or helper processes (``step.py``,
``shards.py``, ``shard_processes.py``), its optimiser (``optimizers.py``),
metrics (``evaluation.py``) and predictions (``predictions.py``).

Its configuration is ``npcomp.configuration``'s and its files on disk are
``npcomp.runfiles``'; it sits on the models (``npcomp.models``) and the
data layer, and below experiments, study, estimators and the command line.
"""

# the package's public names, each loaded from its module when first named
_HOMES = {
    "train": "trainer",
    "train_step": "step",
    "TrainingStopped": "step",
    "encode": "encoding",
    "EncodedSplit": "encoding",
    "EncodedPairs": "encoding",
    "evaluate": "evaluation",
    "predict_split": "evaluation",
    "ShardedGradient": "shards",
    "Optimizer": "optimizers",
    "AdaGrad": "optimizers",
    "Adadelta": "optimizers",
    "SGD": "optimizers",
    "make_optimizer": "optimizers",
    "pinned_thread_pools": "thread_pools",
    "write_predictions": "predictions",
}
__all__ = [
    "train",
    "train_step",
    "TrainingStopped",
    "encode",
    "EncodedSplit",
    "EncodedPairs",
    "evaluate",
    "predict_split",
    "ShardedGradient",
    "Optimizer",
    "AdaGrad",
    "Adadelta",
    "SGD",
    "make_optimizer",
    "pinned_thread_pools",
    "write_predictions",
]


def __getattr__(name: str):
    if name in _HOMES:
        from importlib import import_module

        home = _HOMES[name]
        module = import_module(f"{__name__}.{home or name}")
        return module if home is None else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list:
    return sorted({*globals(), *__all__})
