"""A user's own labelled files in place of a built-in task.

:func:`load_files` reads a training file and optional dev and test files
(each a treebank, CSV, TSV or JSON lines: ``labelled_tables``,
``file_examples``) into the ``TaskData`` the built-in tasks give: Trees
labelled at their roots (and at phrases where a treebank or a tree column
labels them), or ``sick.SickPair`` for sentence pairs.  With it comes what
a run records (:meth:`OwnData.record`): the class names in order, where the
dev split came from, the score range, each file's format, example count and
SHA-256, and a digest of all the files' bytes that a resumed run compares.

Steps, each a function of its own so that a sweep reads the files once and
splits them K times: :func:`read_files` (every file read, the classes or the
score range decided across all of them) and :func:`split_files` (the dev
split set aside from train where no dev file is given; fold k of K for
cross-validation).  :func:`read_labelled_file` reads one more file (``npcomp
eval --file``) with a run's classes and score range.

Sentences become trees through the ``text_trees.TextTrees`` the caller
passes, made for the run's structure, exactly as ``npcomp predict`` makes
them.  Whether the model can compose those trees is the caller's check
(``training.trainer.check_splits``, which names the file and line).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from npcomp.data.datasets.class_list import (
    RUN_CLASSES,
    ClassList,
    check_largest_number,
    class_list,
    require_two_classes,
)
from npcomp.data.datasets.data_splits import check_fraction, dev_split, fold_split
from npcomp.errors import ConfigError, DataError
from npcomp.data.datasets.file_examples import FileExamples, read_examples
from npcomp.data.readers.formats import UNLABELLED, _split_source
from npcomp.data.datasets.score_scale import check_scores, checked_range, range_of, rating_classes
from npcomp.data.readers.sick import SickPair
from npcomp.data.datasets.tasks import TaskData
from npcomp.data.text.text_trees import TextTrees

ROLES = ("train", "dev", "test")
# the task's name by the kind of its files (choices.FILE_TASKS)
TASK_NAMES = {"labels": "files", "pairs": "file-pairs", "pair-labels": "file-pair-labels"}
_KIND_WORDS = {
    "labels": "labelled sentences",
    "pairs": "scored sentence pairs",
    "pair-labels": "labelled sentence pairs",
}
# the kinds of files whose examples are classes (their names decided across the files)
_CLASS_KINDS = ("labels", "pair-labels")


@dataclass
class OwnFiles:
    """A task's files read, their examples labelled, not yet split.

    kind:        "labels" (trees), "pairs" (scored SickPairs) or "pair-labels"
                 (SickPairs of classes)
    n_classes:   classes (labels), or K, the similarity head's ratings (pairs)
    classes:     the class list (labels, pair-labels; None for pairs)
    score_range: (lo, hi) (pairs; None for labels), from ``score_range_from``:
                 "given" or "train"
    examples:    role -> FileExamples, items labelled, for the roles given
    text_trees:  the TextTrees that made the trees
    """

    kind: str
    n_classes: int
    classes: ClassList | None
    score_range: tuple | None
    score_range_from: str | None
    examples: dict
    text_trees: TextTrees

    @property
    def digest(self) -> str:
        """SHA-256 over every file's role and the SHA-256 of its bytes."""
        digest = hashlib.sha256()
        for role, examples in self.examples.items():
            digest.update(f"{role}:{examples.sha256}\n".encode("ascii"))
        return digest.hexdigest()

    def record(self) -> dict:
        """What a run records of its files (JSON values)."""
        made: dict = {}
        for examples in self.examples.values():
            for action, count in examples.made.items():
                made[action] = made.get(action, 0) + count
        return {
            "kind": self.kind,
            "files": {
                role: {
                    "path": str(examples.path),
                    "format": examples.format,
                    "examples": len(examples.items),
                    "sha256": examples.sha256,
                }
                for role, examples in self.examples.items()
            },
            "n_classes": self.n_classes,
            "classes": list(self.classes.names) if self.classes is not None else None,
            "class_order": self.classes.order if self.classes is not None else None,
            "score_range": list(self.score_range) if self.score_range is not None else None,
            "score_range_from": self.score_range_from,
            "trees": {
                "structure": self.text_trees.structure,
                "tree": self.text_trees.tree,
                "made": made,
                "fell_back": self.text_trees.fell_back,
            },
            "digest": self.digest,
        }


@dataclass
class OwnData:
    """The files split into a task: ``task`` (TaskData named "files", or
    "file-pairs" with its ``score_scale`` for scored sentence pairs,
    "file-pair-labels" for labelled ones), the
    files it came from, and how dev and test were made: ``dev`` is
    {"from": "file"} or {"from": "train", "fraction": f, "seed": s};
    ``fold`` is None or {"fold": k, "folds": K, "seed": s}."""

    task: TaskData
    files: OwnFiles
    dev: dict
    fold: dict | None = None

    def record(self) -> dict:
        """``OwnFiles.record`` with the splits: how dev (and test) were made,
        and how many examples each holds."""
        record = self.files.record()
        record.update(
            dev=dict(self.dev),
            fold=dict(self.fold) if self.fold else None,
            splits={split: len(items) for split, items in self.task.splits.items()},
        )
        return record


def load_files(
    train: str | Path,
    dev: str | Path | None = None,
    test: str | Path | None = None,
    classes: Sequence[str] | None = None,
    dev_fraction: float = 0.1,
    seed: int = 0,
    score_range: Sequence[float] | None = None,
    text_trees: TextTrees | None = None,
    fold: tuple | None = None,
) -> OwnData:
    """A task from a user's files: :func:`read_files`, then :func:`split_files`.

    train, dev, test: the files; without dev, ``dev_fraction`` of train is set
                  aside (seeded by ``seed``: the data's seed, not the model's);
                  without test, no test split
    classes:      the class names in order (``class_list``); None: from the labels
    score_range:  (lo, hi) of pair scores; None: the training file's
    text_trees:   makes the trees (``TextTrees(structure, tree)`` of the run);
                  None: ``TextTrees("gold")``, parsed binary trees
    fold:         (k, K): fold k (0-based) of K is the test split (no test file)
    """
    files = read_files(train, dev, test, classes, score_range, text_trees)
    return split_files(files, dev_fraction, seed, fold)


def read_files(
    train: str | Path,
    dev: str | Path | None = None,
    test: str | Path | None = None,
    classes: Sequence[str] | None = None,
    score_range: Sequence[float] | None = None,
    text_trees: TextTrees | None = None,
) -> OwnFiles:
    """Every file read and labelled, the classes or the score range decided
    across them (DataError naming a bad file and line)."""
    if score_range is not None:
        score_range = checked_range(score_range)
    text_trees = text_trees if text_trees is not None else TextTrees("gold")
    paths = {role: Path(path) for role, path in zip(ROLES, (train, dev, test)) if path is not None}
    examples = {role: read_examples(path, text_trees) for role, path in paths.items()}
    kinds = {role: part.kind for role, part in examples.items()}
    for role, kind in kinds.items():
        if kind != kinds["train"]:
            raise DataError(
                f"{_KIND_WORDS[kind]}, but the training file holds "
                f"{_KIND_WORDS[kinds['train']]}: a task's files are of one kind",
                examples[role].path,
            )
    if kinds["train"] == "pairs":
        if classes is not None:
            raise ConfigError(
                "classes",
                "class names are for labelled sentences or pairs; "
                "these files hold scored sentence pairs (a score "
                "column): give a label column to classify them",
            )
        return _scored(examples, score_range, text_trees)
    if score_range is not None:
        raise ConfigError(
            "score_range", f"a score range is for scored sentence pairs; these files hold {_KIND_WORDS[kinds['train']]}"
        )
    if kinds["train"] == "pair-labels":
        return _labelled_pairs(examples, classes, text_trees)
    return _labelled(examples, classes, text_trees)


def split_files(files: OwnFiles, dev_fraction: float = 0.1, seed: int = 0, fold: tuple | None = None) -> OwnData:
    """The task of ``files``: train, dev (the dev file, else ``dev_fraction``
    of train set aside by ``seed``) and test (the test file, or with ``fold``
    = (k, K) fold k of K of train: ``data_splits``), none without either."""
    check_fraction(dev_fraction)
    train = files.examples["train"].items
    splits = {}
    fold_record = None
    if fold is not None:
        if "test" in files.examples:
            raise ConfigError(
                "folds", "cross-validation takes each fold's test split from the training file: leave the test file out"
            )
        k, n_folds = (int(value) for value in fold)
        rest, held_out = fold_split(len(train), k, n_folds, seed)
        train, splits["test"] = [train[i] for i in rest], [train[i] for i in held_out]
        fold_record = {"fold": k, "folds": n_folds, "seed": int(seed)}
    elif "test" in files.examples:
        splits["test"] = list(files.examples["test"].items)
    if "dev" in files.examples:
        splits["dev"] = list(files.examples["dev"].items)
        dev_record = {"from": "file"}
    else:
        try:
            kept, set_aside = dev_split(len(train), dev_fraction, seed)
        except DataError as error:
            raise DataError(error.reason, files.examples["train"].path) from None
        splits["dev"] = [train[i] for i in set_aside]
        train = [train[i] for i in kept]
        dev_record = {"from": "train", "fraction": float(dev_fraction), "seed": int(seed)}
    splits = {"train": list(train), **{split: splits[split] for split in ROLES if split in splits}}
    scale = (files.score_range, files.n_classes) if files.kind == "pairs" else None
    task = TaskData(
        TASK_NAMES[files.kind],
        files.n_classes,
        splits,
        score_scale=scale,
        class_names=tuple(files.classes.names) if files.classes else None,
    )
    return OwnData(task, files, dev_record, fold_record)


def read_labelled_file(
    path: str | Path,
    text_trees: TextTrees,
    classes: Sequence[str] | None = None,
    score_range: Sequence[float] | None = None,
    labelled: bool = True,
    pairs: bool = False,
) -> list:
    """The examples of one more file for a run trained on files (``npcomp eval
    --file``, ``predict``): its Trees (with ``pairs``, its SickPairs)
    labelled with the run's ``classes`` (its record's names, in order), or
    its SickPairs checked against the run's ``score_range``.
    ``labelled=False`` allows examples without a label or score
    (UNLABELLED roots, NaN scores)."""
    run_kind = "pairs" if score_range is not None else "labels" if not pairs else "pair-labels"
    examples = read_examples(path, text_trees, labelled, pairs="pair-labels" if run_kind == "pair-labels" else "pairs")
    if examples.kind != run_kind:
        raise DataError(
            f"{_KIND_WORDS[examples.kind]}, but the run was trained on {_KIND_WORDS[run_kind]}", examples.path
        )
    if examples.kind == "pairs":
        check_scores(_scores(examples), checked_range(score_range), given=True)
        return examples.items
    if examples.kind == "pair-labels":
        _label_pairs(examples, class_list(_written_labels({"file": examples}), classes, advice=RUN_CLASSES))
        return examples.items
    _label_trees(examples, class_list(_written_labels({"file": examples}), classes, advice=RUN_CLASSES), len(classes))
    return examples.items


def _labelled(examples: dict, classes: Sequence[str] | None, text_trees: TextTrees) -> OwnFiles:
    # a treebank's own trees: a chain or a parse may leave phrase labels out
    treebank = [tree for part in examples.values() if part.labels is None for tree in part.given]
    largest = max(treebank, key=lambda tree: int(tree.label.max()), default=None)
    if largest is not None:
        check_largest_number(int(largest.label.max()), *_split_source(largest.source))
    classes = class_list(_written_labels(examples), classes, None if largest is None else int(largest.label.max()))
    n_classes = len(classes.names)
    for part in examples.values():
        _label_trees(part, classes, n_classes)
    require_two_classes(examples["train"].items, classes.names, examples["train"].path)
    return OwnFiles("labels", n_classes, classes, None, None, examples, text_trees)


def _written_labels(examples: dict) -> list:
    """(label, path, line) of every labelled table row."""
    return [
        (label, part.path, line)
        for part in examples.values()
        if part.labels is not None
        for label, line in zip(part.labels, part.lines)
        if label is not None
    ]


def _label_trees(part: FileExamples, classes: ClassList | None, n_classes: int) -> None:
    """A table's trees labelled at the root with their row's class (a tree
    column's phrase labels kept), and every tree's labels checked to be classes."""
    if part.labels is not None:
        for index, (tree, label) in enumerate(zip(part.items, part.labels)):
            number = UNLABELLED if label is None else classes.number(label)
            root = tree.root_label
            if root != UNLABELLED and number != UNLABELLED and root != number:
                raise DataError(
                    f"the tree's root is labelled {root}, but its label is "
                    f"{label!r} (class {number}): leave the root's label to the "
                    "label column, or make them agree",
                    part.path,
                    part.lines[index],
                )
            if number != UNLABELLED:
                labels = tree.label.copy()
                labels[tree.root] = number
                part.items[index] = tree.with_labels(labels)
    for tree in part.items + [tree for tree in part.given or () if tree is not None]:
        tree.validate(n_classes)


def _labelled_pairs(examples: dict, classes: Sequence[str] | None, text_trees: TextTrees) -> OwnFiles:
    """Files of labelled sentence pairs: the classes decided across them
    (``class_list``, as for labelled sentences), each pair given its number."""
    classes = class_list(_written_labels(examples), classes)
    for part in examples.values():
        _label_pairs(part, classes)
    return OwnFiles("pair-labels", len(classes.names), classes, None, None, examples, text_trees)


def _label_pairs(part: FileExamples, classes: ClassList) -> None:
    """Each pair of ``part`` labelled with its row's class number (-1 where
    the row has no label: a file to predict)."""
    part.items[:] = [
        SickPair(
            pair.tree_a, pair.tree_b, pair.score, pair.pair_id, UNLABELLED if label is None else classes.number(label)
        )
        for pair, label in zip(part.items, part.labels)
    ]


def _scored(examples: dict, score_range: tuple | None, text_trees: TextTrees) -> OwnFiles:
    source = "given"
    if score_range is None:
        score_range, source = range_of(_scores(examples["train"]), examples["train"].path), "train"
    for part in examples.values():
        check_scores(_scores(part), score_range, given=source == "given")
    return OwnFiles("pairs", rating_classes(score_range), None, score_range, source, examples, text_trees)


def _scores(part: FileExamples) -> list:
    return [(pair.score, part.path, line) for pair, line in zip(part.items, part.lines)]
