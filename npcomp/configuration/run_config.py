"""A run's configuration: the model's paper setting for the task
(``defaults.py``), the options given over it, and the rules that derive the
rest.  ``build_config`` is the one place a configuration is made: `npcomp
train`, a sweep's runs, a paper table's rows and the time estimates of
`npcomp reproduce --list` all call it, and so does ``npcomp.config``
through ``keyword_config``; ``resume_changes`` reads the options given to a
resumed run the same way.

Options are given as config keys (``lr``, ``data_dir``) mapped to values: the
command line's parsed values, or a sweep's TOML scalars and text, read as
`npcomp train`'s parser reads its arguments (``configuration.read``).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from npcomp.configuration.checks import check, check_value, read
from npcomp.errors import ConfigError
from npcomp.configuration.defaults import (
    SICK_VECTOR_FILES,
    applies,
    defaults_for,
    dim_follows_embedding,
    matrix_embedding_dim,
)
from npcomp.configuration.options import LIST_KINDS, OPTIONS, OptionFormError, default_threads, form
from npcomp.data.datasets import FILE_TASKS, PAIR_CLASS_TASKS, PAIR_TASKS

# a user's files, as an option's message names them
_FILES_OF = {
    "files": "a file of labelled sentences or trees (--train)",
    "file-pairs": "a file of sentence pairs with a score column (--train)",
    "file-pair-labels": "a file of sentence pairs with a label column (--train)",
}


class MissingVectors(ConfigError):
    """The vector file a run is to read is not found (bad input, named by
    its option, as any ConfigError; `npcomp reproduce --list` tells it apart
    as data missing here)."""


def read_options(options: dict) -> dict:
    """The options given (None: not given), each read as its type, in the
    option table's order; OptionFormError names one of the wrong form."""
    for name in options:
        if name not in OPTIONS:
            form(name, None)  # OptionFormError naming the unknown option
    return {name: read(name, options[name]) for name in OPTIONS if options.get(name) is not None}


def build_config(model: str | None, task: str | None, options: dict) -> dict:
    """The configuration of a run of ``model`` on ``task`` (None: the bare
    command's, Constituency Tree-LSTM on the synthetic treebank): the model's
    paper setting for the task under the protocol given, the ``options``
    given over it (config key -> value), the word vectors found, the sizes
    the model's leaves fix (pretrained vectors: their dimension), and every
    value checked.  ConfigError names the option at fault (MissingVectors:
    a vector file not found); a vector file that cannot be read raises
    errors.DataError naming it."""
    given = read_options(options)
    model = model or OPTIONS["model"].default
    task = _task(task, given)
    config = defaults_for(model, task, given.get("protocol"), given.get("supervision"))
    config.pop("source")
    for name, value in given.items():
        check_value(name, value)
    data_dir = given.get("data_dir")
    vectors = _vectors(given.get("vectors"), config.pop("vectors_name", None), data_dir)
    run = {
        "model": model,
        "task": task,
        "seed": given.get("seed", config["seed"]),
        "vectors": vectors,
        "data_dir": data_dir,
        "threads": given.get("threads"),
        "train_eval": given.get("train_eval", OPTIONS["train_eval"].default),
        # the synthetic treebank is made so that trees beat a bag of words
        "baseline": given.get("baseline", task == "synthetic"),
    }
    config.update({name: value for name, value in given.items() if name not in run})
    config.update(run)
    _check_applies(given, task)
    if dim_follows_embedding(config):
        # the leaves' states are the word vectors: one dimension for both
        if "dim" in given and "embedding_dim" not in given:
            config["embedding_dim"] = given["dim"]
        config["dim"] = config["embedding_dim"]
    if matrix_embedding_dim(config) is not None:
        if given.get("vectors"):
            raise ConfigError("vectors", f"{model} learns a matrix per word: it takes no word vectors")
        config["embedding_dim"] = matrix_embedding_dim(config)
    if vectors is not None:
        _take_vector_dimension(config, given)
    check(config)
    return config


def _task(task: str | None, given: dict) -> str:
    """The run's task: the one named (default the synthetic treebank), or for
    a user's files (``train`` given) "files", "file-pairs" or
    "file-pair-labels", as the training file holds labelled sentences,
    scored sentence pairs or labelled ones."""
    if given.get("train") is None:
        return task or OPTIONS["task"].default
    if task is not None:
        raise ConfigError(
            "task", f"{task}, and --train: a run trains on a task's own data or on your files, not both (leave one out)"
        )
    return file_task(given["train"])


def file_task(path) -> str:
    """The task of a run trained on the file ``path``: "files", "file-pairs"
    or "file-pair-labels" (DataError naming the file when it cannot be read
    or holds none of them)."""
    from npcomp.data.datasets.file_examples import file_kind
    from npcomp.data.datasets.own_data import TASK_NAMES

    return TASK_NAMES[file_kind(path)]


def _check_applies(given: dict, task: str) -> None:
    """ConfigError for an option given that does not apply to ``task``
    (the option table's ``tasks``)."""
    for name in given:
        if applies(name, task):
            continue
        tasks = OPTIONS[name].tasks
        if task in PAIR_TASKS and not set(tasks) & set(PAIR_TASKS):
            head = "classified by the pair classifier" if task in PAIR_CLASS_TASKS else "scored by the similarity head"
            raise ConfigError(name, f"does not apply to {task}: a pair is {head} at the two sentences' roots")
        if set(tasks) == set(FILE_TASKS):
            raise ConfigError(name, f"goes with --train FILE (your own files), not with the {task} task's own data")
        raise ConfigError(
            name, f"applies to {' or '.join(_FILES_OF.get(t, t) for t in tasks)}, not to {_FILES_OF.get(task, task)}"
        )


def keyword_config(model: str | None, task: str | None, options: dict) -> dict:
    """``npcomp.config``: the configuration `npcomp train` runs for ``model``
    on ``task`` with ``options``, config keys given as Python keywords
    (``lr=0.1``, ``fixed_embeddings=True``, ``recurrent_dropout=[0.25, 0.3]``;
    None: not given), built by ``build_config``.  Like `npcomp train`, a run
    not given ``threads`` takes every core.  ConfigError names the option at
    fault, an unknown one or one given in a form it does not take included."""
    given = {name: value for name, value in options.items() if value is not None}
    for name, value in given.items():
        if name not in OPTIONS:
            close = difflib.get_close_matches(name, OPTIONS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(
                name,
                f"is not a training option{hint}: the options are the "
                "config keys of npcomp/configuration/options.py, the flags of "
                "`npcomp train --help`",
            )
        if OPTIONS[name].kind in LIST_KINDS and isinstance(value, (list, tuple)):
            given[name] = ",".join(str(item) for item in value)
        try:
            form(name, value)
        except OptionFormError as error:
            raise ConfigError(name, str(error).removeprefix(f"{name} ")) from None
    given.setdefault("threads", default_threads())  # as `npcomp train`
    return build_config(read("model", model), read("task", task), given)


def _take_vector_dimension(config: dict, given: dict) -> None:
    """Pretrained vectors fix the embedding dimension (and the state
    dimension of a model whose leaves are the word vectors): a different
    one ``given`` is refused, naming its option."""
    from npcomp.data.readers.vectors import vector_dimension

    dim = vector_dimension(config["vectors"])
    follows = dim_follows_embedding(config)
    for option in ("embedding_dim", "dim") if follows else ("embedding_dim",):
        if option in given and given[option] != dim:
            because = (
                f"{config['model']}'s leaf states are the word vectors, so its dimension is theirs"
                if option == "dim"
                else "they set it"
            )
            raise ConfigError(
                option,
                f"{given[option]}, but the vectors {config['vectors']} "
                f"have dimension {dim} ({because}): leave "
                f"{OPTIONS[option].flag} out, or give vectors of "
                f"dimension {given[option]}",
            )
    config["embedding_dim"] = dim
    if follows:
        config["dim"] = dim


def resume_changes(options: dict) -> dict:
    """The options given to a resumed run, read as ``build_config`` reads
    them (a vector file found), to be checked against the run's own
    settings (``checkpoints.resumed_config``)."""
    changes = read_options(options)
    if changes.get("vectors") not in (None, "random"):
        changes["vectors"] = str(vectors_file(changes.get("data_dir"), changes["vectors"]))
    return changes


def _vectors(given: str | None, task_default: str | None, data_dir) -> str | None:
    """The vector file a run reads: the one given (a path, or a name in
    DATA_DIR/vectors), None for random vectors, or the task's default."""
    if given == "random":
        return None
    if given is not None:
        return str(vectors_file(data_dir, given))
    if task_default:
        return str(_default_vectors(data_dir, task_default))
    return None


def _vectors_directory(data_dir) -> Path:
    """DATA_DIR/vectors, where `npcomp download` puts vector files."""
    from npcomp.data.datasets.tasks import default_data_dir

    return (Path(data_dir) if data_dir else default_data_dir()) / "vectors"


def vectors_file(data_dir, name: str) -> Path:
    """``name`` if it is a file, else DATA_DIR/vectors/``name``, so the commands
    of docs/RESULTS.md run from any directory."""
    path = Path(name)
    if path.is_file():
        return path
    in_data_dir = _vectors_directory(data_dir) / name
    if in_data_dir.is_file():
        return in_data_dir
    raise MissingVectors("vectors", f"{name}: no such file, here or as {in_data_dir}")


def _default_vectors(data_dir, name: str) -> Path:
    """The first of the task's default vector files found in DATA_DIR/vectors."""
    directory = _vectors_directory(data_dir)
    for file_name in SICK_VECTOR_FILES:
        if (directory / file_name).is_file():
            return directory / file_name
    files = ", ".join(str(directory / file_name) for file_name in SICK_VECTOR_FILES)
    raise MissingVectors(
        "vectors",
        f"sentence pairs train on fixed {name} vectors (Tai et "
        "al.'s SICK setting), but "
        f"none of {files} exists: run `npcomp download glove.840B`, "
        "pass --vectors FILE, or --vectors random",
    )
