"""A run's data, from its configuration: a built-in task, or a user's own
files (``--train FILE``, ``data/datasets/own_data.py``).

``run_task`` reads either into the ``TaskData`` the trainer trains on.  For
a user's files it also settles in the configuration what reading them
decided, so that the run reads any further file (``npcomp eval --file``,
``predict``) and a resumed run reads its own files alike: ``classes``, the
class names in order (given, or found in the labels), and ``score_range``,
the range of pair scores (given, or the training file's); and it attaches
what the run records of the files (``TaskData.record``: each file's path,
format, size and SHA-256, how the dev split and the trees were made, the
folds), which ``metrics.json`` keeps under ``data``.
"""

from __future__ import annotations

from npcomp.data.datasets import FILE_TASKS, PAIR_TASKS
from npcomp.data.datasets.class_list import class_names
from npcomp.data.readers.sick import ENTAILMENT_CLASSES
from npcomp.errors import ConfigError, DataError
from npcomp.data.datasets.own_data import TASK_NAMES, load_files, read_labelled_file
from npcomp.data.datasets.tasks import TaskData, load_task
from npcomp.data.text.text_trees import TextTrees


def is_file_run(config: dict) -> bool:
    """Whether the run trains on a user's files (``--train``)."""
    return config.get("task") in FILE_TASKS


def run_task(config: dict, echo=None) -> TaskData:
    """The task ``config`` trains on, every split of it; ``echo`` is told
    when plain sentences get right-branching trees for want of spaCy."""
    if not is_file_run(config):
        return load_task(
            config["task"],
            config.get("data_dir"),
            config["structure"],
            seed=config["seed"],
            spans=config["supervision"] == "spans",
            parses_dir=config.get("parses_dir"),
            neutral=config["neutral"],
        )
    folds = config.get("folds")
    own = load_files(
        config["train"],
        config.get("dev"),
        config.get("test"),
        classes=config.get("classes"),
        dev_fraction=config["dev_fraction"],
        seed=config["data_seed"],
        score_range=config.get("score_range"),
        text_trees=text_trees_of(config, echo),
        fold=(config["fold"], folds) if folds is not None else None,
    )
    record = own.record()
    if TASK_NAMES[record["kind"]] != config["task"]:  # the file replaced since
        kinds = {
            "files": "labelled sentences",
            "file-pairs": "scored sentence pairs",
            "file-pair-labels": "labelled sentence pairs",
        }
        raise DataError(
            f"holds {kinds[TASK_NAMES[record['kind']]]}, but the run was made for {kinds[config['task']]}",
            config["train"],
        )
    _check_head(config, record)
    if record["kind"] in ("labels", "pair-labels"):
        config["classes"] = record["classes"]
    else:
        config["score_range"] = record["score_range"]
    own.task.record = record
    return own.task


def text_trees_of(
    config: dict,
    echo=None,
    tree: str | None = None,
    n_classes: int | None = None,
    input: str | None = None,
    class_names: list | None = None,
) -> TextTrees:
    """Plain text to the trees a file run reads (its structure and ``tree``
    option; ``tree`` given here instead: ``--tree`` of predict; ``input``
    and ``class_names``: ``TextTrees``'s, for lines typed or piped)."""
    warn = None if echo is None else (lambda message: echo(f"npcomp: {message}"))
    return TextTrees(
        config["structure"],
        tree if tree is not None else config.get("tree"),
        warn=warn,
        n_classes=n_classes,
        input=input,
        class_names=class_names,
    )


def _check_head(config: dict, record: dict) -> None:
    """An ordinal head ranks the classes in their order: not in names sorted
    as text, unless the names were given in order."""
    if config.get("head") == "ordinal" and record["class_order"] == "sorted":
        names = ",".join(record["classes"])
        raise ConfigError(
            "classes",
            f"not given, and --head ordinal ranks the classes in "
            f"their order: the labels' names sorted ({names}) are "
            "rarely it; give them in order (--classes A,B,...)",
        )


def read_run_file(config: dict, path, labelled: bool = True, echo=None, tree: str | None = None) -> tuple:
    """(examples, how each tree was made) of one more file for a run trained
    on files: its trees labelled with the run's classes, or its pairs'
    scores checked against the run's range (``labelled=False``: labels and
    scores optional); ``tree``: another ``--tree`` than the run's."""
    to_trees = text_trees_of(config, echo, tree)
    scored = config["task"] == "file-pairs"
    items = read_labelled_file(
        path,
        to_trees,
        classes=None if scored else config.get("classes"),
        score_range=config.get("score_range") if scored else None,
        labelled=labelled,
        pairs=config["task"] in PAIR_TASKS,
    )
    return items, list(to_trees.made)


def own_class_names(config: dict, n_classes: int) -> list | None:
    """The names of a run's classes: a file run's (its config's), SICK's
    entailment judgments; None for the other built-in tasks."""
    if config.get("task") == "sick-entailment":
        return list(ENTAILMENT_CLASSES)
    names = config.get("classes")
    return list(names) if is_file_run(config) and names and len(names) == n_classes else None


def named_classes(config: dict, n_classes: int, given: list | None = None) -> list:
    """The names of a run's ``n_classes`` classes by class number, as its
    metrics and predictions name them: ``given`` (``TaskData.class_names``),
    a file run's, SICK's entailment judgments, a built-in task's
    (``class_list.class_names``), else the class numbers themselves."""
    if given is None or len(given) != n_classes:
        given = own_class_names(config, n_classes)
    return class_names(config.get("task"), n_classes, given=given)


def run_finished(metrics: dict) -> bool:
    """Whether a run's metrics record is that of a finished run: its test
    metrics written, or (a user's files without a test file) its end."""
    return metrics.get("test") is not None or bool(metrics.get("ended"))


def check_run_data(config: dict) -> None:
    """A file run's files read and every tree checked against its model as
    training would (``encoding.check_splits``), nothing trained: DataError
    names a bad file and line.  A sweep checks its settings so before it
    writes anything; a built-in task's data are checked by its runs."""
    if not is_file_run(config):
        return
    from npcomp.cells import make_cell
    from npcomp.configuration.defaults import matrix_embedding_dim
    from .encoding import check_splits
    from npcomp.configuration.options import cell_options

    task = run_task(dict(config))
    # the smallest cell of the run's kind: only its structure is checked
    small = dict(config, dim=2)
    cell = make_cell(
        config["model"],
        matrix_embedding_dim(small) or 2,
        2,
        **{option: config.get(option) for option in cell_options()},
    )
    check_splits(task, cell)


def score_scale_of(config: dict, n_ratings: int) -> tuple | None:
    """((lo, hi), K) of a run on a user's sentence pairs: its scores' range
    and the similarity head's ratings; None for any other run."""
    if config.get("task") != "file-pairs":
        return None
    return tuple(config["score_range"]), n_ratings


def file_task_data(config: dict, n_classes: int, items: list, name: str = "file") -> TaskData:
    """One more file's examples (``read_run_file``) as a task of one split,
    ``name``, for ``encoding.check_splits`` and ``encode_task``."""
    return TaskData(
        config["task"],
        n_classes,
        {name: items},
        score_scale=score_scale_of(config, n_classes),
        class_names=tuple(own_class_names(config, n_classes) or ()) or None,
    )
