"""What the two estimators share: scikit-learn's conventions over the training loop.

An estimator's parameters are its model and a few of its own (``tree``,
``input``, ``dev_fraction``, ``warm_start``, ``callbacks``, ``verbose``), then the
training options of the option table (``npcomp/configuration/options.py``) by
their config keys, every one defaulting to None: not given, so the run takes
what `npcomp train` takes, the model's paper setting for the task or the
option's own default (``npcomp.config``).  The signature of ``__init__`` is
made from the table (``__init_subclass__``), so the table stays the one
source; ``get_params`` and ``set_params`` read it as scikit-learn does, so
``sklearn.base.clone`` and ``GridSearchCV`` work.  No scikit-learn is
imported here: ``__sklearn_tags__`` imports it when scikit-learn asks.

``fit`` trains with ``trainer.train`` on the examples given (``data=``), in
memory (a ``RunInMemory``): the loop `npcomp train` runs, with its
divergence and non-finite checks, writing nothing.  What fitting finds ends
in ``_``: ``config_``, ``model_``, ``params_`` (the best-dev parameters),
``vocabulary_``, ``metrics_`` (what metrics.json would hold) and ``run_``
(the run's files in memory, from which ``warm_start`` continues).

Every method that computes (``fit``, ``predict``, ``score``, ``transform``,
...) runs with BLAS at one thread, as `npcomp train` runs, and gives the
caller's thread limits back after (``training/thread_pools.py``): the
numbers and the speed of the command line from any script.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import warnings

import numpy as np

from npcomp.data.datasets.data_splits import check_fraction, dev_split
from npcomp.errors import ConfigError
from npcomp.data.datasets.tasks import as_structure
from npcomp.data.text.text_trees import TextTrees, check_input, check_tree
from npcomp.training.finite_outputs import naming_the_sentence
from npcomp.training.encoding import encode
from npcomp.configuration.checks import check_value
from npcomp.runfiles.model_files import load_model
from npcomp.configuration.options import OPTIONS
from npcomp.configuration.run_config import keyword_config
from npcomp.runfiles.run_in_memory import RunInMemory
from npcomp.training.thread_pools import pinned_thread_pools
from npcomp.training.trainer import train
from .inputs import sentence_trees
from .model_file import EstimatorFileError, read_estimator, write_estimator


def not_fitted_error() -> type:
    """``NotFittedError``: an estimator asked for what only fitting (or
    ``load``) gives it.  A ValueError and an AttributeError, and with
    scikit-learn installed a subclass of ``sklearn.exceptions.NotFittedError``,
    so that ``except`` of either catches it.  Made on first use: importing
    scikit-learn takes a second or more (its package loads SciPy's
    statistics), which ``import npcomp.estimators`` does not pay."""
    global _NOT_FITTED
    if _NOT_FITTED is None:
        bases = (ValueError, AttributeError)
        if importlib.util.find_spec("sklearn") is not None:
            try:
                from sklearn.exceptions import NotFittedError as sklearns

                bases = (sklearns,)  # itself a ValueError and an AttributeError
            except ImportError:  # a broken installation: npcomp's own then
                pass
        _NOT_FITTED = type(
            "NotFittedError",
            bases,
            {"__doc__": "An estimator asked for what only fitting (or ``load``) gives it.", "__module__": __name__},
        )
    return _NOT_FITTED


_NOT_FITTED = None


def __getattr__(name: str):
    if name == "NotFittedError":
        return not_fitted_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# options of the table no estimator takes: the bag-of-words run `npcomp train`
# trains beside, what only a built-in task's files have, and a user's files
# (an estimator's data come to fit)
_NOT_TAKEN = (
    "model",
    "task",
    "baseline",
    "parses_dir",
    "neutral",
    "train",
    "dev",
    "test",
    "classes",
    "folds",
    "fold",
    "data_seed",
)
# options that say where a run runs, not what it trains: from_paper leaves them unset
_WHERE_IT_RUNS = tuple(name for name, option in OPTIONS.items() if option.where_it_runs)
# the methods that compute: each runs on the thread pools `npcomp train` runs
# on, whatever the caller's process has (thread_pools.py), a subclass's own too
_COMPUTING = ("fit", "predict", "predict_proba", "score", "evaluate", "transform", "sentence_vectors")


def _silent(*_args) -> None:
    return None


class Estimator:
    """The shared part of ``TreeClassifier`` and ``PairRegressor``.

    A subclass declares ``MODEL`` (the default model), ``TASKS`` (the tasks
    whose paper setting it may take, the first its default), ``OWN`` (its
    own parameters after ``model``, name -> default) and ``LEFT_OUT`` (the
    options it does not take)."""

    MODEL: str = ""
    TASKS: tuple = ()
    OWN: dict = {}
    LEFT_OUT: tuple = ()
    _PARAMETERS: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        options = {name: None for name in OPTIONS if name not in _NOT_TAKEN + cls.LEFT_OUT + tuple(cls.OWN)}
        cls._PARAMETERS = {"model": cls.MODEL, **cls.OWN, **options}
        cls.__init__ = _initialiser(cls._PARAMETERS)
        for name in _COMPUTING:
            if name in vars(cls):
                setattr(cls, name, pinned_thread_pools()(vars(cls)[name]))

    @classmethod
    def _options(cls) -> list:
        """The training options the estimator takes, in the table's order."""
        return [name for name in cls._PARAMETERS if name in OPTIONS and name not in _NOT_TAKEN and name not in cls.OWN]

    # ------------------------------------------------------------------
    # parameters, as scikit-learn reads them
    # ------------------------------------------------------------------

    def get_params(self, deep: bool = True) -> dict:
        """The parameters by name (``deep`` makes no difference: none is an estimator)."""
        return {name: getattr(self, name) for name in self._PARAMETERS}

    def set_params(self, **params):
        """Set parameters by name; returns the estimator."""
        for name, value in params.items():
            if name not in self._PARAMETERS:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {self!r}. Valid "
                    f"parameters are: {sorted(self._PARAMETERS)!r}."
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        given = [
            f"{name}={value!r}"
            for name, value in self.get_params().items()
            if value is not self._PARAMETERS[name] and value != self._PARAMETERS[name]
        ]
        return f"{type(self).__name__}({', '.join(given)})"

    def __sklearn_tags__(self):
        """What scikit-learn asks of an estimator (it is loaded when it asks)."""
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags, TransformerTags

        classifier = self._estimator_type == "classifier"
        return Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(required=False),
            transformer_tags=TransformerTags(),
            classifier_tags=ClassifierTags() if classifier else None,
            regressor_tags=None if classifier else RegressorTags(),
            input_tags=InputTags(two_d_array=False, string=True),
        )

    @classmethod
    def _check_data(cls) -> tuple:
        """(X, y): small data ``checks.check_estimator`` fits an estimator of
        the class on when given none."""
        raise NotImplementedError

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "run_")

    def __getstate__(self) -> dict:
        """Pickled without the sentence reader it keeps (a parser, made again on need)."""
        return {name: value for name, value in vars(self).items() if name not in ("_trees", "_trees_key")}

    @classmethod
    def from_paper(cls, model: str, task: str | None = None, **overrides):
        """The estimator of ``model`` with the setting of its paper for
        ``task`` (``npcomp.config(model, task, **overrides)``), every training
        option given its value there; ``overrides``: options or the
        estimator's own parameters.  The options that say where a run runs
        (threads, data_dir, ...) stay unset unless given."""
        task = cls._checked_task(task or cls.TASKS[0])
        unknown = [name for name in overrides if name not in cls._PARAMETERS or name == "model"]
        if unknown:
            raise TypeError(f"{cls.__name__}.from_paper() got an unexpected keyword argument {unknown[0]!r}")
        options = {name: value for name, value in overrides.items() if name in OPTIONS}
        config = keyword_config(model, task, dict(options, baseline=False))
        params = {
            name: tuple(config[name]) if isinstance(config[name], list) else config[name]
            for name in cls._options()
            if config.get(name) is not None and name not in _WHERE_IT_RUNS
        }
        # no vectors: none by default, or "random" given in place of the task's default
        params["vectors"] = config["vectors"] or overrides.get("vectors")
        params.update(overrides)
        if "task" in cls._PARAMETERS:
            params["task"] = task
        return cls(model, **params)

    @classmethod
    def _checked_task(cls, task: str) -> str:
        if task not in cls.TASKS:
            raise ConfigError(
                "task", f"{cls.__name__} takes the paper setting of {' or '.join(cls.TASKS)}, not {task!r}"
            )
        return task

    def training_config(self) -> dict:
        """The configuration ``fit`` trains with: ``npcomp.config`` of the
        model, the task and the options given (not None); ConfigError names
        an option at fault."""
        options = {
            name: list(value) if isinstance(value, tuple) else value
            for name in self._options()
            if (value := getattr(self, name)) is not None
        }
        task = self._checked_task(getattr(self, "task", None) or self.TASKS[0])
        # no bag-of-words run beside (the command line's): the configuration says so
        return keyword_config(self.model, task, dict(options, baseline=False))

    # ------------------------------------------------------------------
    # fitting
    # ------------------------------------------------------------------

    def _text_trees(self, structure: str, class_names=None) -> TextTrees:
        """Trees for sentences as ``tree`` and ``input`` say, given ones kept
        (``inputs.py``); a node tag among ``class_names`` refused."""
        given = getattr(self, "input", "auto")
        check_input(given)
        key = (structure, self.tree, given)
        if getattr(self, "_trees_key", None) != key:
            self._trees = TextTrees(
                structure,
                self.tree,
                keep_given=True,
                input=given,
                warn=lambda message: warnings.warn(message, stacklevel=4),
            )
            self._trees_key = key
        self._trees.class_names = class_names
        return self._trees

    def _split_dev(self, train_items: list, config: dict) -> tuple:
        """(train, dev) of ``train_items`` without a dev split given:
        ``dev_fraction`` of them set aside, drawn by the run's seed."""
        kept, set_aside = dev_split(len(train_items), self.dev_fraction, config["seed"])
        return [train_items[i] for i in kept], [train_items[i] for i in set_aside]

    def _train(self, config: dict, task) -> None:
        """Train on ``task`` (a TaskData), afresh or, with ``warm_start``,
        on from the training state of the estimator's run."""
        warm = bool(self.warm_start) and hasattr(self, "run_")
        run = self.run_ if warm else RunInMemory()
        try:
            metrics = train(
                config,
                run,
                resume=warm,
                progress=bool(self.verbose),
                echo=print if self.verbose else _silent,
                data=task,
                callbacks=tuple(self.callbacks or ()),
            )
        except ConfigError as error:
            if not warm:
                raise
            if error.option == "data_dir":  # check_same_data: other examples
                raise ConfigError(
                    "warm_start",
                    "continues training on the examples it was "
                    "fitted on (X, y, dev and test the same); fit "
                    "without warm_start for others",
                ) from None
            raise ConfigError("warm_start", f"continues the fitted run with its own settings: {error}") from None
        self._take(run, json.loads(json.dumps(metrics)))

    def _take(self, run: RunInMemory, metrics: dict) -> None:
        """The fitted state of a run: its best model, configuration, vocabulary, record."""
        self.run_ = run
        self.model_, self.params_, self.config_, self.vocabulary_ = load_model(run)
        self.metrics_ = metrics

    # ------------------------------------------------------------------
    # the fitted model
    # ------------------------------------------------------------------

    def _check_fitted(self) -> None:
        if not hasattr(self, "run_"):
            raise not_fitted_error()(
                f"this {type(self).__name__} is not fitted yet: call fit, or {type(self).__name__}.load a saved one"
            )

    def _read_sentences(self, X, what: str = "X", as_read: bool = True) -> list:
        """The trees of the sentences ``X``; ``as_read``: as the run reads
        them (its structure's: chains for a sequence model, ...)."""
        structure = self.config_["structure"]
        trees = sentence_trees(X, self._text_trees(structure, self._fitted_class_names()), what)
        return as_structure(trees, structure) if as_read else trees

    def _fitted_class_names(self):
        """The fitted classes where they are names (a node tag among them is
        refused), else None."""
        classes = getattr(self, "classes_", None)
        return None if classes is None or classes.dtype.kind in "iu" else classes.tolist()

    def _states(self, trees: list) -> np.ndarray:
        """(len(trees), d): the encoder's state at each tree's root."""
        split = encode(trees, self.vocabulary_)
        size = self.config_["eval_batch_size"]
        states = [np.zeros((0, self.model_.cell.output_dim), dtype=self.params_.flat.dtype)]
        for start in range(0, len(split), size):
            indices = range(start, min(start + size, len(split)))
            with naming_the_sentence(split.forest_trees(indices)):
                states.append(self.model_.sentence_states(self.params_, split.forest(indices)))
        return np.concatenate(states)

    @pinned_thread_pools()
    def sentence_vectors(self, X) -> np.ndarray:
        """(n, d): each sentence's vector, the encoder's state at its tree's
        root (``model.sentence_states``), in the parameters' dtype."""
        self._check_fitted()
        return self._states(self._read_sentences(X))

    # ------------------------------------------------------------------
    # one file
    # ------------------------------------------------------------------

    def _fitted_record(self) -> dict:
        """What fitting found beyond the run (classes, a score range), as JSON."""
        raise NotImplementedError

    def _take_record(self, record: dict) -> None:
        """Take what ``_fitted_record`` wrote, checked against the fitted
        model: KeyError for a missing entry, TypeError or ValueError saying
        what is wrong (``load`` names the file)."""
        raise NotImplementedError

    def save(self, path) -> None:
        """Write the fitted estimator to the file ``path`` (named exactly so):
        its parameters, the best-dev model, the training state a
        ``warm_start`` continues from (parameters, optimiser state, random
        state), the vocabulary, what fitting found (``classes_``) and the
        configuration (``model_file.py``).  The callbacks are code: not saved."""
        self._check_fitted()
        params = {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in self.get_params().items()
            if name != "callbacks"
        }
        record = {"class": type(self).__name__, "params": params, **self._fitted_record()}
        write_estimator(path, record, self.run_, self.metrics_)

    @classmethod
    def load(cls, path):
        """The estimator ``save`` wrote to ``path``, its parts checked against
        each other (``model_file.EstimatorFileError`` names the file and
        what disagrees)."""
        record, run, metrics = read_estimator(path, cls.__name__)
        params = {
            name: tuple(value) if isinstance(value, list) else value
            for name, value in record["params"].items()
            if name in cls._PARAMETERS
        }
        try:
            _check_params(params, run)
        except (ConfigError, TypeError, ValueError) as error:
            raise EstimatorFileError(
                f"a damaged estimator file: its parameters do not make an estimator ({error})", path
            ) from None
        estimator = cls(**params)
        estimator._take(run, metrics)
        try:
            estimator._take_record(record)
        except KeyError as error:
            raise EstimatorFileError(f"a damaged estimator file: its estimator entry lacks {error}", path) from None
        except (TypeError, ValueError) as error:
            raise EstimatorFileError(f"a damaged estimator file: {error}", path) from None
        return estimator


def _check_params(params: dict, run: RunInMemory) -> None:
    """A saved estimator's parameters in their ranges (the option table's,
    ``tree`` one the run's structure takes, ``dev_fraction``): ConfigError,
    TypeError or ValueError naming the first out of range."""
    for name, value in params.items():
        check_value(name, value)
    structure = json.loads(str(run.files["model.npz"]["config"]))["structure"]
    check_tree(structure, params.get("tree"))
    if params.get("dev_fraction") is not None:
        check_fraction(params["dev_fraction"])


def _initialiser(parameters: dict):
    """An ``__init__`` taking ``parameters`` (name -> default; ``model`` also
    by position) and keeping each as an attribute, as given: scikit-learn's
    convention (no checking before ``fit``)."""
    model_default = parameters["model"]

    def __init__(self, model=model_default, **given):
        unknown = [name for name in given if name not in parameters]
        if unknown:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {unknown[0]!r}")
        self.model = model
        for name, default in parameters.items():
            if name != "model":
                setattr(self, name, given.get(name, default))

    kind = inspect.Parameter
    __init__.__signature__ = inspect.Signature(
        [kind("self", kind.POSITIONAL_OR_KEYWORD), kind("model", kind.POSITIONAL_OR_KEYWORD, default=model_default)]
        + [kind(name, kind.KEYWORD_ONLY, default=default) for name, default in parameters.items() if name != "model"]
    )
    return __init__
