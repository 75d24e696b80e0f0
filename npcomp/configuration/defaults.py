"""Default hyperparameters: each model's paper setting for each task.

Each model's own paper setting, other papers' protocols and SICK sizes are
declared with the model in ``cells/registry.py``, and the value every model
shares for an option with the option (``options.py``); here is how they
combine and how a task adjusts them.

``npcomp train --model M --task T`` with no further option runs the setting
of M's paper; ``npcomp train --model M --help-defaults`` prints it.  The
synthetic task is ours: small sizes so a fresh install trains in seconds.
"""

from __future__ import annotations

import copy

from npcomp.cells import registry
from npcomp.cells.registry import leaves_are_words, sick_structure
from npcomp.data.datasets import FILE_TASKS, PAIR_CLASS_TASKS, PAIR_TASKS
from npcomp.errors import ConfigError
from npcomp.configuration.options import OPTIONS, PAPER_SETTING

# the options whose value every model shares (the option table's default), in
# the order --help-defaults and metrics.json have always listed them
SHARED = (
    "optimizer",
    "epsilon",
    "adagrad_reset",
    "emb_optimizer",
    "supervision",
    "span_samples",
    "structure",
    "neutral",
    "average",
    "head",
    "embedding_dropout",
    "recurrent_dropout",
    "activation",
    "untied",
    "oov",
    "oov_scale",
    "dtype",
    "fixed_embeddings",
    "seed",
    "eval_batch_size",
    "evals_per_epoch",
    "shards",
)
COMMON = {name: OPTIONS[name].default for name in SHARED}

SYNTHETIC = dict(dim=50, embedding_dim=50, epochs=10, batch_size=25, dropout=0.0, l2=1e-4)

# Tai et al. 2015, Secs. 4.2, 5.2 and 5.3 for SICK: GloVe 840B 300d held fixed, AdaGrad
# 0.05, minibatch 25, lambda 1e-4 per minibatch, no dropout, a 50-unit similarity layer;
# 10 epochs as their released code
SICK_SOURCE = "Tai et al. 2015, Table 1 (relatedness dimensions), Secs. 4.2 and 5.3"
SICK = dict(
    embedding_dim=300,
    fixed_embeddings=True,
    vectors_name="glove.840B.300d",
    lr=0.05,
    emb_lr=0.05,
    batch_size=25,
    l2=1e-4,
    dropout=0.0,
    epochs=10,
    similarity_dim=50,
    supervision="root",
    span_samples=0,
    embedding_dropout=0.0,
    recurrent_dropout=[0.0],
)
# classified pairs (entailment): no paper gives their settings; they take SICK relatedness's
NO_PAPER_FOR_CLASSES = (
    "no paper gives the settings of classified sentence pairs (entailment): Tai et al.'s SICK relatedness settings, "
)
# the vector files the SICK default looks for in DATA_DIR/vectors, in this order: the
# file `npcomp download glove.840B` makes (filtered to the SST + SICK vocabulary), then the whole file
SICK_VECTOR_FILES = ("glove.840B.300d.sick.txt", "glove.840B.300d.txt")


def matrix_embedding_dim(config: dict) -> int | None:
    """The word "vectors" of a model whose words are d x d matrices (registry
    ``word_matrices``): d^2 numbers, d + d^2 with a vector too (``word_vectors``,
    the MV-RNN); None for every other model."""
    entry = registry.model(config["model"])
    if not entry.word_matrices:
        return None
    return config["dim"] ** 2 + (config["dim"] if entry.word_vectors else 0)


def dim_follows_embedding(config: dict) -> bool:
    """True when the model's state dimension is the word vectors' (its leaves'
    states are the word vectors themselves): ``dim`` is then set to
    ``embedding_dim`` (which pretrained vectors fix)."""
    return leaves_are_words(config["model"], config.get("untied"))


# the tasks a model's dev-chosen (``tuned``) settings were chosen on
TUNED_TASKS = ("sst5", "sst2")


def protocols(model: str) -> list:
    """The settings ``--protocol`` can choose for ``model``."""
    entry = registry.model(model)
    return ["paper"] + (["tuned"] if entry.tuned else []) + sorted(entry.protocols)


def defaults_for(model: str, task: str, protocol: str | None = None, supervision: str | None = None) -> dict:
    """The configuration of ``model`` on ``task`` under ``protocol``, with
    ``source`` saying where it comes from.  ``protocol``: "paper" (its own
    paper's printed setting), "tuned" (the setting chosen on SST dev for
    the supervision mode, registry ``tuned``), another paper's, or None: the
    tuned one where the model has one for the task and ``supervision`` (or
    its default supervision), else the paper's."""
    entry = registry.model(model)
    config = dict(COMMON)
    if protocol in (None, "paper", "tuned"):
        config.update(entry.defaults)
    elif protocol in entry.protocols:
        config.update(entry.protocols[protocol])
    else:
        raise ConfigError("protocol", f"for {model} must be one of {protocols(model)}, not {protocol!r}")
    mode = supervision or config["supervision"]
    tuned = entry.tuned.get(mode) if task in TUNED_TASKS else None
    if protocol == "tuned" and not entry.tuned:
        raise ConfigError("protocol", f"for {model} must be one of {protocols(model)}: it has no setting chosen on dev")
    if protocol == "tuned" and tuned is None:
        raise ConfigError(
            "protocol",
            f"{model}'s setting chosen on dev is for "
            f"{' and '.join(entry.tuned)} supervision on "
            f"{' and '.join(TUNED_TASKS)}, not {mode} on {task}",
        )
    if tuned is not None and protocol in (None, "tuned"):
        config.update(tuned, source=f"{tuned['source']}; otherwise {config['source']}")
        protocol = "tuned"
    config["protocol"] = protocol or "paper"
    if task in FILE_TASKS:  # how a user's files are split, unless given
        config.update(
            (name, option.default)
            for name, option in OPTIONS.items()
            if option.tasks is not None and set(option.tasks) <= set(FILE_TASKS) and option.default is not None
        )
        if config["supervision"] == "spans":
            # a sequence model's phrase spans are the SST's: a user's sentences
            # (chains labelled at their last word) train on what is labelled
            config.update(supervision="all", span_samples=0)
    if task in PAIR_TASKS:  # SICK, or a user's sentence pairs: Tai et al.'s setting
        config.update(SICK, structure=sick_structure(model))
        for name in [name for name in config if not carried(name, task)]:
            del config[name]  # the head: the pair's head (similarity or classes), always
        sick = entry.sick or {}
        # Tai et al.'s relatedness encoders take Table 1's sizes; others keep theirs
        config["source"] = SICK_SOURCE if "dim" in sick else (config["source"] + "; SICK training: " + SICK_SOURCE)
        if task in PAIR_CLASS_TASKS:
            config["source"] = NO_PAPER_FOR_CLASSES + config["source"]
        config.update(sick)
    if task == "synthetic":
        config.update(SYNTHETIC)
        if config["structure"] == "dependency":  # the synthetic treebank has no parses
            config["structure"] = "gold"
        config["source"] = entry.defaults["source"] + ", sizes reduced for the synthetic task"
        if config["untied"] is not None:
            config["untied"] = False  # leaves are the word vectors: dim == embedding_dim
        config.update(entry.synthetic)
    return config


def applies(option: str, task: str) -> bool:
    """Whether ``option`` applies to ``task`` (options.Option.tasks)."""
    tasks = OPTIONS[option].tasks if option in OPTIONS else None
    return tasks is None or task in tasks


def carried(option: str, task: str) -> bool:
    """Whether a configuration for ``task`` holds ``option``: where it
    applies, and on sentence pairs where Tai et al.'s setting fixes it
    (``SICK``: a pair's nodes are not supervised, its head takes no dropout)
    though it may not be given."""
    return applies(option, task) or (task in PAIR_TASKS and option in SICK)


def with_defaults(config: dict, saved: bool = True) -> dict:
    """``config`` with every option of a value shared by all runs that it
    lacks at that value: a configuration built by ``run_config.build_config``
    has them all; one ``saved`` by a run (its checkpoint, metrics.json or
    model file) made before an option existed ran at the option's
    ``before`` value where it has one (``shards``: such a run computed each
    minibatch whole), else at its default; one not saved (made by hand)
    takes the defaults.  Options whose default is the model's paper setting
    or None (not given) are not added."""
    missing = {
        name: copy.copy(option.before if saved and option.before is not None else option.default)
        for name, option in OPTIONS.items()
        if name not in config
        and option.default is not None
        and option.default is not PAPER_SETTING
        and carried(name, config["task"])
    }
    return {**config, **missing}
