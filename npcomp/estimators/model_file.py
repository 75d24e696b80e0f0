"""An estimator in one file: ``save(path)`` and ``load(path)``.

A NumPy archive, written whole or not at all (``rundir.write_atomically``),
named exactly as given:

==================  ==========================================================
key                 value
==================  ==========================================================
``format``          ``FORMAT``
``estimator``       JSON: its class, its parameters (``get_params``, without
                    the callbacks, which are code) and what fitting found:
                    ``classes`` (TreeClassifier) or ``score_range`` (PairRegressor),
                    and ``n_classes``, the head's classes (ratings for pairs)
``config``          JSON: the run's configuration (``npcomp.config``'s)
``vocab``           the vocabulary, word by id (row 0 the unknown word)
``metrics``         JSON: the run's record, as metrics.json holds it
``param.NAME``      the best-dev parameters, by name, in the config's dtype
``state.*``         the training state at the latest dev evaluation, from
                    which ``warm_start`` continues: ``state.params`` (flat),
                    ``state.optimizer.*`` (the optimiser's state),
                    ``state.rng``, ``state.metrics``, ``state.fingerprints``
                    (digests of the data and configuration), and the epoch's
                    order and progress when it fell inside an epoch
==================  ==========================================================

Reading it back checks the parts against each other, and ``EstimatorFileError``
names the file and what disagrees: the parameters against the model the
configuration makes (its size, the vocabulary's words, the classes), the
training state against the parameters and the configuration's optimiser,
the configuration against the digest recorded when it trained, the
estimator's class and model against the configuration's.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from npcomp.data.readers.embeddings import Vocabulary
from npcomp.errors import ConfigError, DataError
from npcomp.runfiles.checkpoints import config_digest
from npcomp.configuration.checks import check
from npcomp.configuration.defaults import with_defaults
from npcomp.configuration.model_building import DTYPES, build_model
from npcomp.training.optimizers import Optimizer
from npcomp.runfiles.run_in_memory import RunInMemory
from npcomp.runfiles.rundir import write_atomically

FORMAT = "npcomp estimator 1"
_REQUIRED = (
    "format",
    "estimator",
    "config",
    "vocab",
    "metrics",
    "state.params",
    "state.rng",
    "state.metrics",
    "state.fingerprints",
)
# the keys of a checkpoint the file keeps once, at its top level
_SHARED = ("config", "vocab")


class EstimatorFileError(DataError):
    """A saved estimator's file cannot be read, or its parts disagree; the
    message names the file and what."""


def write_estimator(path: str | Path, record: dict, run: RunInMemory, metrics: dict) -> None:
    """The file of an estimator whose run is ``run`` (``record``: the
    ``estimator`` entry)."""
    model, state = run.files["model.npz"], run.files["checkpoint.npz"]
    arrays = {
        "format": np.array(FORMAT),
        "estimator": np.array(json.dumps(record, default=_plain)),
        # the latest configuration: a continued run may have taken more epochs since
        # its best model was saved, nothing that changes the model
        "config": state["config"],
        "vocab": state["vocab"],
        "metrics": np.array(json.dumps(metrics)),
    }
    arrays.update((key, value) for key, value in model.items() if key.startswith("param."))
    arrays.update((f"state.{key}", value) for key, value in state.items() if key not in _SHARED)
    path = Path(path)
    try:
        write_atomically(path, lambda handle: np.savez(handle, **arrays))
    except Exception as error:  # RunFileError: the message names the path
        raise EstimatorFileError(str(error).removeprefix(f"{path}: "), path) from None


def _plain(value):
    """A NumPy scalar among the parameters (a grid search's) as JSON takes it."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a parameter of type {type(value).__name__} cannot be saved")


def read_estimator(path: str | Path, kind: str) -> tuple:
    """(record, run, metrics) of the file of a ``kind`` estimator (its class
    name): the run in memory holds its model.npz and checkpoint.npz again."""
    path = Path(path)
    arrays = _read_archive(path)
    record, config, metrics = (_json_object(arrays, key, path) for key in ("estimator", "config", "metrics"))
    _check_record(path, record, kind)
    try:
        config = with_defaults(config)
    except (KeyError, TypeError, ValueError) as error:
        raise EstimatorFileError(f"its configuration does not make a model ({error})", path) from None
    if record["params"].get("model") != config.get("model"):
        raise EstimatorFileError(
            f"the estimator's model is {record['params'].get('model')!r} "
            f"but its configuration's is {config.get('model')!r}",
            path,
        )
    try:
        vocab = Vocabulary.from_list([str(word) for word in arrays["vocab"]])
    except DataError as error:
        raise EstimatorFileError(f"a damaged vocabulary: {error}", path) from None
    try:
        check(config)
        model = build_model(config, vocab, int(record["n_classes"]))
    except (ConfigError, DataError, KeyError, TypeError, ValueError) as error:
        raise EstimatorFileError(f"its configuration does not make a model ({error})", path) from None
    _check_parameters(path, arrays, model, config, record, len(vocab))
    _check_state(path, arrays, model, config)
    run = RunInMemory()
    run.files["model.npz"] = {
        "config": arrays["config"],
        "vocab": arrays["vocab"],
        "n_classes": np.array(int(record["n_classes"])),
        **{key: value for key, value in arrays.items() if key.startswith("param.")},
    }
    run.files["checkpoint.npz"] = {
        "config": arrays["config"],
        "vocab": arrays["vocab"],
        **{key.removeprefix("state."): value for key, value in arrays.items() if key.startswith("state.")},
    }
    run.files["metrics.json"] = json.dumps(metrics)
    return record, run, metrics


def _read_archive(path: Path) -> dict:
    if not path.is_file():
        raise EstimatorFileError("no such file", path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (zipfile.BadZipFile, EOFError, ValueError, OSError, KeyError, AttributeError) as error:
        raise EstimatorFileError(
            f"not a saved estimator, nor any NumPy archive ({type(error).__name__}: {error})", path
        ) from None
    if "format" not in arrays:
        raise EstimatorFileError(
            f"not a saved estimator (save(path) writes one): it has no format entry {FORMAT!r}", path
        )
    found = str(arrays["format"])
    if found != FORMAT:
        if found.startswith(FORMAT.rpartition(" ")[0]):
            raise EstimatorFileError(
                f"saved in the format {found!r}, and this npcomp reads "
                f"{FORMAT!r} only: load it with the npcomp version that "
                "saved it (and fit again here)",
                path,
            )
        raise EstimatorFileError(
            f"not a saved estimator (save(path) writes one): its format entry is {found[:60]!r}, not {FORMAT!r}", path
        )
    missing = [key for key in _REQUIRED if key not in arrays]
    if missing:
        raise EstimatorFileError(f"a damaged estimator file: it lacks {', '.join(missing)}", path)
    _check_kinds(path, arrays)
    return arrays


# the entries that are one text each (JSON but the format), and the rest by kind
_TEXTS = (
    "format",
    "estimator",
    "config",
    "metrics",
    "state.rng",
    "state.metrics",
    "state.fingerprints",
    "state.epoch_state",
)
_NUMBERS = ("param.", "state.params", "state.optimizer.")


def _check_kinds(path: Path, arrays: dict) -> None:
    """Each entry of the kind ``write_estimator`` writes: one text, the
    vocabulary's words, or numbers."""
    for key, array in arrays.items():
        if key in _TEXTS:
            wrong = array.ndim != 0 or array.dtype.kind != "U"
            kind = "one text"
        elif key == "vocab":
            wrong = array.ndim != 1 or array.dtype.kind != "U"
            kind = "a list of words"
        elif key.startswith(_NUMBERS):
            wrong = array.dtype.kind != "f"
            kind = "floating-point numbers"
        elif key == "state.epoch_order":
            wrong = array.ndim != 1 or array.dtype.kind not in "iu"
            kind = "whole numbers"
        else:
            continue
        if wrong:
            raise EstimatorFileError(
                f"a damaged estimator file: its {key} entry is not "
                f"{kind} (it holds {array.dtype} of shape {array.shape})",
                path,
            )


def _json(arrays: dict, key: str, path: Path):
    try:
        return json.loads(str(arrays[key]))
    except (json.JSONDecodeError, RecursionError) as error:
        raise EstimatorFileError(f"a damaged estimator file: its {key} is not JSON ({error})", path) from None


def _json_object(arrays: dict, key: str, path: Path) -> dict:
    """The JSON object of entry ``key`` (the estimator, config and metrics entries are objects)."""
    value = _json(arrays, key, path)
    if not isinstance(value, dict):
        raise EstimatorFileError(
            f"a damaged estimator file: its {key} entry is a JSON {_json_kind(value)}, not an object", path
        )
    return value


def _json_kind(value) -> str:
    return {dict: "object", list: "array", str: "string", bool: "true or false", type(None): "null"}.get(
        type(value), "number"
    )


def _check_record(path: Path, record: dict, kind: str) -> None:
    """The estimator entry: its class, its parameters (an object), its head's
    ``n_classes`` (a whole number >= 2); what the class found in fitting is
    the class's own check (``Estimator.load``)."""
    if record.get("class") != kind:
        found = record.get("class")
        what = f"a {found}" if isinstance(found, str) else "no estimator class"
        raise EstimatorFileError(f"holds {what}, not a {kind}", path)
    params = record.get("params")
    if not isinstance(params, dict):
        raise EstimatorFileError(
            "a damaged estimator file: its estimator entry has no parameters (params, a JSON object)", path
        )
    n_classes = record.get("n_classes")
    if isinstance(n_classes, bool) or not isinstance(n_classes, int) or n_classes < 2:
        raise EstimatorFileError(
            f"a damaged estimator file: its estimator entry's n_classes "
            f"is {json.dumps(n_classes)[:40]}, not a whole number >= 2",
            path,
        )


def _model_words(config: dict, record: dict, vocabulary: int) -> str:
    """The model the configuration makes, in words, for a message."""
    what = "ratings" if "score_range" in record else "classes"
    return (
        f"{config['model']}, dim {config['dim']}, embedding_dim {config['embedding_dim']}, "
        f"{record['n_classes']} {what}, a vocabulary of {vocabulary} words"
    )


def _check_parameters(path: Path, arrays: dict, model, config: dict, record: dict, vocabulary: int) -> None:
    """The best-dev parameters: the names, shapes and dtype of the model the
    configuration, vocabulary and classes make."""
    found = {key.removeprefix("param."): value for key, value in arrays.items() if key.startswith("param.")}
    names = model.layout.names
    missing = [name for name in names if name not in found]
    unexpected = [name for name in found if name not in names]
    if missing or unexpected:
        parts = ([f"lack {', '.join(missing)}"] if missing else []) + (
            [f"hold {', '.join(unexpected)}"] if unexpected else []
        )
        raise EstimatorFileError(
            f"the parameters {' and '.join(parts)}, but the "
            f"configuration's model ({_model_words(config, record, vocabulary)})"
            f" has {', '.join(names)}",
            path,
        )
    rows, width = model.layout["embedding"].shape
    if found["embedding"].shape != (rows, width):
        found_rows, found_width = (found["embedding"].shape + (None, None))[:2]
        reason = (
            f"{found_rows} rows but the vocabulary holds {rows} words"
            if found_rows != rows
            else f"rows of {found_width} numbers but the configuration's embedding_dim is {width}"
        )
        raise EstimatorFileError(f"the parameters' embedding table has {reason}", path)
    for name in names:
        if found[name].shape != model.layout[name].shape:
            raise EstimatorFileError(
                f"the parameters' {name} has shape {found[name].shape} where the "
                f"configuration's model ({_model_words(config, record, vocabulary)}) has "
                f"{model.layout[name].shape}",
                path,
            )
    dtype = np.dtype(DTYPES[config["dtype"]])
    wrong = sorted({str(array.dtype) for array in found.values() if array.dtype != dtype})
    if wrong:
        raise EstimatorFileError(f"the parameters are {', '.join(wrong)} but the configuration trains in {dtype}", path)


def _check_state(path: Path, arrays: dict, model, config: dict) -> None:
    """The training state: parameters of the model's size, the state of the
    configuration's optimiser, the configuration it was recorded with."""
    if arrays["state.params"].shape != (model.layout.size,):
        raise EstimatorFileError(
            f"the training state holds {arrays['state.params'].size} "
            f"parameters but the configuration's model has "
            f"{model.layout.size}",
            path,
        )
    optimizer = Optimizer.for_model(model, config["optimizer"], lr=config["lr"], dtype=DTYPES[config["dtype"]])
    for name, state in optimizer.state_dict().items():
        key = f"state.{name}"
        if key not in arrays or arrays[key].shape != state.shape:
            found = f"of shape {arrays[key].shape}" if key in arrays else "none"
            raise EstimatorFileError(
                f"the training state's {name} is {found}, but the "
                f"configuration's optimiser ({config['optimizer']}) keeps "
                f"one of shape {state.shape}",
                path,
            )
    dtype = np.dtype(DTYPES[config["dtype"]])
    wrong = sorted(
        {str(arrays[key].dtype) for key in arrays if key.startswith(_NUMBERS[1:]) and arrays[key].dtype != dtype}
    )
    if wrong:
        raise EstimatorFileError(
            f"the training state is {', '.join(wrong)} but the configuration trains in {dtype}", path
        )
    try:
        np.random.default_rng().bit_generator.state = _json_object(arrays, "state.rng", path)
    except (KeyError, TypeError, ValueError, OverflowError) as error:
        raise EstimatorFileError(
            f"a damaged estimator file: its state.rng is not a random generator's state ({error})", path
        ) from None
    _json_object(arrays, "state.metrics", path)
    fingerprints = _json_object(arrays, "state.fingerprints", path)
    if fingerprints.get("config") != config_digest(json.loads(str(arrays["config"]))):
        raise EstimatorFileError(
            "its configuration is not the one its training state was "
            "recorded with (the digest differs: edited after training?)",
            path,
        )
