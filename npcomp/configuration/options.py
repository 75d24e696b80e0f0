"""Every training option, declared once.

An ``Option`` says what a training option is (its type, the values it may
take, its default and where that comes from, its help text) and how the rest
of npcomp treats it: whether a resumed run may take it anew, whether a run's
default directory name shows it, and whether it says where a run runs
rather than what it trains.  The command line's parsers (``cli/train.py``,
``cli/sweep.py``), the range checks (``configuration.py``), the defaults
(``defaults.py``), ``run_config.build_config``, a sweep's plan and
``--resume`` all read this table.

The options of the cells (``activation``, ``untied``, ...) are declared with
the models in ``cells/registry.py``, which also says which model takes which
value; the table takes them from there.  A default of ``PAPER_SETTING`` is the
model's paper setting for the task (``cells/registry.py``, ``defaults.py``).

The tasks (the ``task`` option's values) are the data layer's
(``npcomp.data.datasets``), the trees of plain text ``npcomp.data.text``'s.  The module
imports neither NumPy nor the cells' code (only their registry): the command
line builds its parsers from it before anything heavy loads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from npcomp.cells import registry
from npcomp.data.datasets import (
    FILE_TASKS,
    NEUTRAL_POLICIES,
    PAIR_CLASS_TASKS,
    PAIR_TASKS,
    STRUCTURES,
    SUPERVISION_MODES,
    TASKS,
)
from npcomp.data.text import TREE_CHOICES


class _Paper:
    def __repr__(self) -> str:
        return "PAPER_SETTING"


# the default of an option whose value is the model's paper setting for the task
PAPER_SETTING = _Paper()
PAPER_SOURCE = "the model's paper for the task (cells/registry.py, defaults.py)"


def rates(text) -> list:
    """``0.25,0.3`` -> [0.25, 0.3]: one rate per recurrent layer (checked by the range)."""
    return [float(part) for part in str(text).split(",")]


def class_name_list(text) -> list:
    """``negative,neutral,positive`` -> the class names in order (checked by the range)."""
    return [part.strip() for part in str(text).split(",")]


def score_range(text) -> list:
    """``1,5`` -> [1.0, 5.0]: the lowest and highest score (checked by the range)."""
    parts = str(text).split(",")
    if len(parts) != 2:
        raise ValueError(f"{len(parts)} value(s)")
    return [float(part) for part in parts]


# the kinds whose value is a comma list, and what the list holds (for a message)
LIST_KINDS = {
    rates: "rates separated by commas",
    class_name_list: "class names separated by commas",
    score_range: "two numbers, LO,HI",
}


@dataclass(frozen=True)
class Option:
    """A training option: a config key and its flag.

    kind:       int, float, str, bool, or a comma list (``LIST_KINDS``: ``rates``,
                ``class_name_list``, ``score_range``)
    choices:    the values allowed (None: any value of the kind)
    lowest:     the lowest value allowed (numbers), allowed itself unless
                ``above``; ``below``: a bound the values stay under
    counts:     what a whole-number option counts, for its range message
    default:    the value a run takes when the option is not given, or PAPER_SETTING;
                ``source`` says where it comes from
    before:     the value runs made before the option existed ran at, when not
                ``default``: a saved configuration without the option reads as
                it (``defaults.with_defaults``, ``experiments/summary.py``)
    resumable:  a resumed run may take it anew (``--resume``)
    in_run_name: a run's default directory shows it when given
    where_it_runs: it says where or how a run runs, not what it trains (two
                plans of a sweep may differ in it)
    computation: it says how the numbers are computed (the floating-point
                type, a minibatch's shards), not the model or its training:
                runs that differ in it are different settings (their numbers
                differ), but no paper sets it (a report leaves it out of a
                setting's options)
    tasks:      the tasks it applies to (None: every task)
    flags:      a switch's flags, (on, off), None for a side without one
    off_help:   the help of a switch's off flag
    metavar:    how the help shows its value (default: its choices or name)
    cell:       an option of the cells: the registry says which models take it
    """

    name: str
    kind: object
    help: str
    choices: tuple | None = None
    lowest: float | None = None
    above: bool = False
    below: float | None = None
    counts: str = ""
    default: object = None
    source: str = ""
    before: object = None
    resumable: bool = False
    in_run_name: bool = True
    where_it_runs: bool = False
    computation: bool = False
    tasks: tuple | None = None
    flags: tuple = ()
    off_help: str | None = None
    metavar: str | None = None
    cell: bool = False

    @property
    def flag(self) -> str:
        """The flag of a valued option, or the flag(s) of a switch (``--untied/--tied``)."""
        if self.kind is bool:
            return "/".join(flag for flag in self.flags if flag)
        return "--" + self.name.replace("_", "-")


def _counted(name, help, counts, lowest=1, **fields) -> Option:
    """A whole-number option of at least ``lowest``."""
    return Option(name, int, help, lowest=lowest, counts=counts, **fields)


# a dropout rate's range, [0, 1): every rate option's (``dropout``,
# ``embedding_dropout``, each of ``recurrent_dropout``'s)
RATE_RANGE = dict(lowest=0.0, below=1.0)


def _rate(name, help, **fields) -> Option:
    """A dropout rate, in ``RATE_RANGE``."""
    return Option(name, float, help, **RATE_RANGE, **fields)


def _tuned_models() -> str:
    """The models with a setting chosen on dev, and for which labels."""
    return ", ".join(
        f"{name} ({' or '.join(entry.tuned)} labels)" for name, entry in registry.MODELS.items() if entry.tuned
    )


def _other_protocols() -> str:
    """Each other paper's setting, its source and the models that take it."""
    protocols = {}
    for name, entry in registry.MODELS.items():
        for protocol, setting in entry.protocols.items():
            protocols.setdefault(protocol, (setting["source"], []))[1].append(name)
    return "; ".join(
        f"'{protocol}' ({source}) for {', '.join(models)}" for protocol, (source, models) in protocols.items()
    )


def _fixed_by_their_papers() -> str:
    """The models whose papers keep the word vectors fixed."""
    return "/".join(name for name, entry in registry.MODELS.items() if entry.defaults.get("fixed_embeddings"))


_OURS = "ours"
# the tasks whose examples are single sentences, and those of sentence pairs: a
# pair is scored (classified) by its head at the two sentences' roots, so the
# options of a sentence's labelled nodes and of its classifier are given for
# sentences alone, the pair head's for pairs alone (each option's ``tasks``)
SENTENCE_TASKS = tuple(task for task in TASKS + FILE_TASKS if task not in PAIR_TASKS)
# a user's files of classes (labelled sentences, labelled pairs) and of scores (scored pairs)
_LABELS = tuple(task for task in FILE_TASKS if task not in PAIR_TASKS or task in PAIR_CLASS_TASKS)
_PAIRS = tuple(task for task in FILE_TASKS if task not in _LABELS)
# a user's own files in place of --task (docs/DATA.md, data/datasets/own_data.py); the
# paths are resumable: the files' digest checks that they hold the same bytes
# fmt: off
_FILE_OPTIONS = (
    Option("train", str, "a labelled file to train on in place of --task: bracketed trees "
           "(the SST's format), or CSV, TSV or JSON lines of text and label, or of "
           "sentence_a, sentence_b and score (sentence pairs' relatedness) or label (their "
           "class, e.g. entailment); docs/DATA.md", metavar="FILE",
           resumable=True, tasks=FILE_TASKS),
    Option("dev", str, "with --train: the dev file (default: --dev-fraction of the training "
           "file set aside)", metavar="FILE", resumable=True, in_run_name=False,
           tasks=FILE_TASKS),
    Option("test", str, "with --train: the test file (default: none, and no test metrics)",
           metavar="FILE", resumable=True, in_run_name=False, tasks=FILE_TASKS),
    Option("classes", class_name_list, "with --train of labelled sentences or pairs: the class "
           "names in order, e.g. negative,neutral,positive (also the order --head ordinal "
           "ranks them in; default: "
           "whole-number labels as themselves, names sorted)", metavar="A,B,...",
           in_run_name=False, tasks=_LABELS),
    Option("score_range", score_range, "with --train of sentence pairs: the lowest and "
           "highest score, mapped onto the similarity head's ratings (default: the training "
           "file's)", metavar="LO,HI", tasks=_PAIRS),
    Option("dev_fraction", float, "with --train and no --dev: the part of the training file "
           "set aside as dev, drawn by --data-seed (default 0.1)", lowest=0.0, above=True,
           below=1.0, default=0.1, source=_OURS, tasks=FILE_TASKS),
    _counted("folds", "with --train: cross-validation in K folds of the training file, each "
             "the test split of one run (npcomp sweep --folds K trains them all; npcomp train "
             "one, --fold)", "the number of folds", lowest=2, tasks=FILE_TASKS),
    _counted("fold", "with --folds K: the fold held out as the test split, 0 to K-1",
             "the fold held out", lowest=0, tasks=FILE_TASKS),
    _counted("data_seed", "with --train: the seed of the dev split set aside and of the "
             "folds (the data's, not the model's: runs compared share it; default 0)",
             "the data's seed", lowest=0, default=0, source=_OURS, tasks=FILE_TASKS),
    Option("tree", str, "with --train: the tree of a plain sentence, as npcomp predict "
           "--tree (parsed: spaCy's parse, the dependency tree for a dependency model; right, "
           "left, chain; default: the model's own, parsed, right-branching without spaCy)",
           choices=TREE_CHOICES, tasks=FILE_TASKS),
)
# a bare `npcomp train`: the Constituency Tree-LSTM on the synthetic treebank
_MODEL, _TASK = "treelstm-nary", "synthetic"
_TRAINING_OPTIONS = (
    Option("model", str, f"the model (default {_MODEL}; the list below)",
           choices=tuple(registry.MODELS), default=_MODEL, metavar="MODEL",
           source="ours: the Constituency Tree-LSTM", in_run_name=False),
    Option("task", str, f"the task (default {_TASK}; sick-entailment: SICK's entailment "
           "judgments, at sick's settings, as no paper gives this task's; --train FILE trains "
           "on your own files instead)", choices=TASKS, default=_TASK,
           source="ours: trains in seconds on a fresh install", in_run_name=False),
    Option("data_dir", str, "data directory (default $NPCOMP_DATA, else ./data)",
           source="$NPCOMP_DATA, else ./data", resumable=True, in_run_name=False,
           where_it_runs=True),
    *_FILE_OPTIONS,
    _counted("seed", "random seed (default 1)", "the random seed", lowest=0, default=1,
             source=_OURS, in_run_name=False),
    Option("protocol", str, "whose setting the defaults follow: 'paper' (the model's "
           "paper's printed setting), 'tuned' (chosen on SST dev where the printed one falls "
           f"far below it here: {_tuned_models()}; the default wherever it exists, see "
           f"--help-defaults), or another paper's: {_other_protocols()}",
           source="'tuned' where the model has a setting chosen on dev, else 'paper'"),
    Option("vectors", str, "pretrained vectors: GloVe text, word2vec text or binary, a path "
           "or a file name in DATA_DIR/vectors (sick: default GloVe 840B 300d from "
           "DATA_DIR/vectors, as Tai et al.; 'random' for random vectors)",
           source="random vectors; sick: GloVe 840B 300d (Tai et al.)"),
    Option("fixed_embeddings", bool, "keep the word vectors fixed (default: tuned, but fixed "
           f"on sick and for {_fixed_by_their_papers()} as their papers)", default=False, source=PAPER_SOURCE,
           flags=("--fixed-embeddings", "--tuned-embeddings"),
           off_help="update the word vectors during training"),
    _counted("dim", "hidden (memory) dimension d (models whose leaves are the word vectors: "
             "the embedding dimension)", "the hidden dimension", default=PAPER_SETTING,
             source=PAPER_SOURCE),
    _counted("embedding_dim", "word vector dimension when vectors are random",
             "the word vector dimension", default=PAPER_SETTING, source=PAPER_SOURCE),
    _counted("epochs", "training epochs", "the number of epochs", default=PAPER_SETTING,
             source=PAPER_SOURCE, resumable=True),
    _counted("evals_per_epoch", "dev evaluations per epoch, evenly spaced over its "
             "minibatches (the last at its end); the best-dev checkpoint is chosen among all "
             "of them (default 1)", "dev evaluations per epoch", default=1, source=_OURS),
    _counted("batch_size", "sentences per minibatch", "sentences per minibatch",
             default=PAPER_SETTING, source=PAPER_SOURCE),
    # 2: a run on the typical 2-core machine computes on both cores; runs made
    # before minibatches had shards computed each one whole
    _counted("shards", "shards of each minibatch, runs of its sentences (pairs) of about "
             "equal size, computed at once on up to that many threads (--threads) and their "
             "gradients summed in a fixed order before one update: the result depends on the "
             "shards, never on the threads (default 2; a run made before this option "
             "computed each minibatch whole, as 1)", "shards of a minibatch", default=2,
             source="ours: both cores of a 2-core machine", before=1, computation=True),
    Option("optimizer", str, "optimiser", choices=("adagrad", "adadelta", "sgd"),
           default="adagrad", source="the papers' (Tai, Socher, Zhu, Irsoy)"),
    Option("lr", float, "learning rate of the composition and classifier weights",
           lowest=0.0, above=True, default=PAPER_SETTING, source=PAPER_SOURCE),
    Option("emb_lr", float, "learning rate of the word embeddings", lowest=0.0,
           default=PAPER_SETTING, source=PAPER_SOURCE),
    Option("epsilon", float, "the optimiser's epsilon (AdaGrad default 1e-10, Adadelta 1e-6)",
           lowest=0.0, above=True, source="the optimiser's own (optimizers.py)"),
    _counted("adagrad_reset", "reset the optimiser's state every N epochs (Socher et al.'s "
             "RNTN code: 1; default 0, never)",
             "epochs between resets of the optimiser (0: never)", lowest=0, default=0,
             source=_OURS),
    Option("emb_optimizer", str, "rule for the word embeddings: the optimiser's (same) or "
           "plain SGD (sgd, Tai et al.'s released code)", choices=("same", "sgd"),
           default="same", source=_OURS),
    Option("l2", float, "L2 strength lambda: J += lambda/2 ||theta||^2 per minibatch "
           "(embeddings not regularised)", lowest=0.0, default=PAPER_SETTING, source=PAPER_SOURCE),
    _rate("dropout", "dropout rate on the classifier input (the pair heads take none, Tai et "
          "al.: use embedding_dropout)", default=PAPER_SETTING, source=PAPER_SOURCE,
          tasks=SENTENCE_TASKS),
    _rate("embedding_dropout", "dropout rate on the word vectors entering the cell, one mask "
          "per sentence", default=0.0, source=_OURS),
    Option("recurrent_dropout", rates, "sequence models: dropout rate on the state entering "
           "each recurrence, one mask per sentence (Gal); a comma list gives one rate per "
           "recurrent layer, the last repeating (lstm-recurrent-attn: LSTM,transfer layer)",
           default=[0.0], source=_OURS, **RATE_RANGE),
    Option("head", str, "output layer: softmax, or ordinal regression (Irsoy & Cardie Sec. "
           "4.2)", choices=("softmax", "ordinal"), default="softmax", source=_OURS,
           tasks=SENTENCE_TASKS),
    Option("supervision", str, "labelled nodes trained on (spans: every labelled phrase as a "
           "sequence of its own, with --structure chain)",
           choices=SUPERVISION_MODES, default="all", source=_OURS,
           tasks=SENTENCE_TASKS),
    _counted("span_samples", "with --supervision spans: train each epoch on every sentence "
             "and N of its phrases drawn at random (Tai et al.'s released code: 4) instead of "
             "on every labelled phrase (default 0: every phrase)",
             "phrases drawn per sentence (0: every phrase)", lowest=0, default=0,
             source=_OURS, tasks=SENTENCE_TASKS),
    Option("structure", str, "tree structure (left/right: re-bracketed; chain: the sentence "
           "as a sequence, for the sequence models; dependency: SICK's *.parents or the SST "
           "parses of `npcomp parse`; parsed: the SST as the binary trees of those parses, "
           "best made with `npcomp parse --copula-head copula`; constituency: SICK's "
           "*.cparents)",
           choices=STRUCTURES,
           default="gold", source=_OURS),
    Option("neutral", str, "sst2: the training sentences' neutral phrases left unlabelled, "
           "or trained on as a third class that is never predicted (train: Tai et al.'s "
           "released code)", choices=NEUTRAL_POLICIES, default="unlabelled",
           source=_OURS),
    Option("parses_dir", str, "sst with --structure dependency: the directory of `npcomp "
           "parse`'s {train,dev,test}.parents (default DATA_DIR/sst)",
           source="DATA_DIR/sst", where_it_runs=True),
    _counted("similarity_dim", "sentence pairs (sick, sick-entailment, a file of pairs): "
             "units of the pair head's hidden layer, h_s of Tai et al.'s eq. 15 (Tai: 50 for "
             "relatedness; no paper gives it for entailment, which takes the same)",
             "the similarity layer's units", default=PAPER_SETTING, source=PAPER_SOURCE,
             tasks=PAIR_TASKS),
    Option("average", str, "loss average per minibatch: sentences (Tai) or labelled nodes",
           choices=("sentences", "nodes"), default="sentences", source=_OURS),
    Option("oov", str, "distribution of random embedding rows",
           choices=("uniform", "normal", "zero"), default="uniform", source=_OURS),
    Option("oov_scale", float, "scale of random embedding rows", lowest=0.0, default=0.05,
           source=_OURS),
    Option("dtype", str, "floating-point type of training", choices=("float32", "float64"),
           default="float32", source=_OURS, computation=True),
    _counted("eval_batch_size", "sentences per forest when evaluating",
             "sentences per evaluation forest", default=512, source=_OURS, resumable=True,
             in_run_name=False, where_it_runs=True),
)
# fmt: on


def _cell_option(name: str, option: registry.CellOption) -> Option:
    """The table's record of a cell option the registry declares."""
    source = "the cell's own (cells/registry.py)"
    if option.kind is bool:
        on = "--" + name.replace("_", "-")
        off = option.off_flag or "--no-" + name.replace("_", "-")
        return Option(
            name, bool, option.help, flags=(on, off), off_help=f"the opposite of {on}", cell=True, source=source
        )
    return Option(name, option.kind, option.help, choices=registry.choices(name), cell=True, source=source)


# fmt: off
_RUN_OPTIONS = (
    _counted("threads", "compute threads: shards 1.. of a minibatch (--shards) go to N - 1 "
             "helper processes (helper threads where the process cannot fork), evaluation's "
             "forests to helper threads; BLAS and numba run one thread each; the result "
             "does not depend on it (default: all cores)", "compute threads",
             source="all cores", resumable=True, in_run_name=False, where_it_runs=True),
    Option("baseline", bool, "also train the bag-of-words baseline (default on for "
           "synthetic)", source="on for the synthetic task", in_run_name=False,
           flags=("--baseline", "--no-baseline")),
    Option("train_eval", bool, "skip the per-epoch accuracy on the training sentences (the "
           "learning curve in metrics.json)", default=True, source=_OURS, resumable=True,
           in_run_name=False, where_it_runs=True, flags=(None, "--no-train-eval")),
)
# fmt: on

# config key -> Option, in the order of `npcomp train --help` (and of the
# parts of a run's default directory name)
OPTIONS = {
    option.name: option
    for option in (
        *_TRAINING_OPTIONS,
        *(_cell_option(name, option) for name, option in registry.CELL_OPTIONS.items() if option.command_line),
        *_RUN_OPTIONS,
    )
}

RESUMABLE = tuple(name for name, option in OPTIONS.items() if option.resumable)
# the options that do not set one setting apart from another: those a run's
# default directory name leaves out, but the model and task, which lead it
NOT_A_SETTING = tuple(
    name for name, option in OPTIONS.items() if not option.in_run_name and name not in ("model", "task")
)


def given_on_none_of(tasks) -> tuple:
    """The options that apply to none of ``tasks`` (each option's ``tasks``),
    in the table's order: those an estimator of those tasks does not take."""
    return tuple(
        name for name, option in OPTIONS.items() if option.tasks is not None and not set(option.tasks) & set(tasks)
    )


def default_threads() -> int:
    """The compute threads of a run not given ``threads``: every core."""
    return os.cpu_count() or 1


def cell_options() -> tuple:
    """The cell options a run's config may set."""
    return tuple(name for name, option in OPTIONS.items() if option.cell)


# --------------------------------------------------------------------------
# options given as text or TOML scalars (a sweep's SPEC, the command line)
# --------------------------------------------------------------------------


class OptionFormError(ValueError):
    """An option given in a form it cannot take (an unknown name, a switch given
    a value, a valued option given true/false); the message names it."""


def form(name: str, value):
    """A known option's value in the form it takes: a switch's True or False
    (given as a bool or as true/false text), any other option's value as
    given (not true/false).  OptionFormError otherwise."""
    if name not in OPTIONS:
        raise OptionFormError(f"{name} is not an npcomp train option (npcomp train --help lists them)")
    option = OPTIONS[name]
    if option.kind is bool:
        found = {"true": True, "false": False}.get(value.lower()) if isinstance(value, str) else value
        if not isinstance(found, bool):
            raise OptionFormError(f"{name} is a switch: true or false, not {value!r}")
        return found
    if isinstance(value, bool):
        raise OptionFormError(f"{name} takes a value ({option.flag} VALUE), not {str(value).lower()}")
    return value


def command_line(options: dict) -> list:
    """The `npcomp train` arguments that give ``options`` (config key ->
    value): a switch by the flag of its side (none for the side without one,
    which is the default), any other option as FLAG VALUE."""
    arguments = []
    for name, value in options.items():
        value = form(name, value)
        option = OPTIONS[name]
        if option.kind is bool:
            flag = option.flags[0] if value else option.flags[1]
            arguments += [flag] if flag else []
        else:
            arguments += [option.flag, str(value)]
    return arguments
