"""What an estimator is given, made into the trees a run reads.

An estimator's ``X`` is a sequence of sentences, each one of

* a ``Tree`` (``npcomp.data.readers.formats``), e.g. a treebank file's
  (``npcomp.data.readers.ptb.read_ptb_file``);
* a bracketed tree as text, ``"(3 (2 it) (4 (2 is) (4 good)))"``, labelled at
  any of its nodes or at none (``"((it is) good)"``);
* a plain sentence, ``"it is good"``, tokenised as the SST is.

Which a string is, the estimator's ``input`` says: ``"text"`` every string
a sentence (one may start with "(": "(Taymor) utilizes ..."), ``"tree"``
every string a bracketed tree, ``"auto"`` (the default) a string that
starts with "(" a tree where it is a complete one, else text, with a
warning naming it (``X[i]``).  A node tag that is one of the classes' names
(``(positive (2 it) (3 good))``) is refused, naming ``X[i]``.

Trees and bracketed trees are kept as they are given, whatever ``tree`` says
(``TextTrees(keep_given=True)``): they are a treebank's trees, which the run
then reads as its structure says, as it reads a task's files
(``tasks.restructured``: chains for a sequence model, re-bracketed for a
left- or right-branching run).  A plain sentence becomes the tree ``tree``
names (``parsed``, ``right``, ``left``, ``chain``; None: the run's own,
``text_trees.default_tree``).  A sentence made from text is named ``X[i]``
in errors (``dev[i]``, ...).

Labels are class numbers, indices into the estimator's ``classes_``: a
tree's own labels (its root's the sentence's class, its phrases' where it
has them), or the root's class from ``y``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from npcomp.data.datasets.class_list import MAX_CLASSES, check_largest_number
from npcomp.errors import DataError
from npcomp.data.readers.formats import UNLABELLED, Tree, _split_source
from npcomp.data.readers.sick import SickPair
from npcomp.data.text.text_trees import TextTrees, read_as_text


def as_sequence(X, what: str) -> list:
    """``X`` as a list; a lone string or Tree is refused (one sentence is ``[text]``)."""
    if isinstance(X, (str, bytes, Tree)) or not isinstance(X, (Sequence, np.ndarray)):
        raise TypeError(f"{what} must be a sequence of sentences (a list), not a {type(X).__name__}")
    return list(X)


def sentence_trees(X, text_trees: TextTrees, what: str = "X", names: list | None = None) -> list:
    """One tree per sentence of ``X`` (module docstring), in order; the
    sentences to parse are parsed together.  A tree made from text is named
    ``names[i]`` (default ``X[i]``) in errors; a Tree keeps its source."""
    items = as_sequence(X, what)
    if not items:
        raise ValueError(f"{what} holds no sentences: give one or more")
    names = names or [f"{what}[{index}]" for index in range(len(items))]
    plans = []
    for index, item in enumerate(items):
        if isinstance(item, Tree):
            plans.append(text_trees.plan_tree(item.validate()))
        elif isinstance(item, str):
            try:
                plans.append(text_trees.plan(item, what, index + 1))
            except DataError as error:
                raise DataError(error.reason, names[index]) from None
        else:
            raise TypeError(
                f"{names[index]} is a {type(item).__name__}: a sentence is a Tree, a bracketed tree or plain text (str)"
            )
    warning = read_as_text(plans, names, "input='text'")
    if warning is not None and text_trees.warn is not None:
        text_trees.warn(warning)
    trees = text_trees.build(plans)
    for index, (item, tree) in enumerate(zip(items, trees)):
        if isinstance(item, str):  # a tree made here from text: named by its place
            tree.source = names[index]
    return trees


def pair_trees(X, text_trees: TextTrees, what: str = "X") -> tuple:
    """(left trees, right trees, their scores or None each) of the pairs of
    ``X``: each a ``SickPair`` or two sentences ``(a, b)``."""
    items = as_sequence(X, what)
    if not items:
        raise ValueError(f"{what} holds no sentence pairs: give one or more")
    left, right, scores = [], [], []
    for index, item in enumerate(items):
        if isinstance(item, SickPair):
            left.append(item.tree_a)
            right.append(item.tree_b)
            scores.append(item.score)
        elif isinstance(item, (Sequence, np.ndarray)) and not isinstance(item, str) and len(item) == 2:
            left.append(item[0])
            right.append(item[1])
            scores.append(None)
        else:
            raise TypeError(f"{what}[{index}] is not a sentence pair: a pair is a SickPair or two sentences (a, b)")
    return (
        sentence_trees(left, text_trees, what, [f"{what}[{i}][0]" for i in range(len(left))]),
        sentence_trees(right, text_trees, what, [f"{what}[{i}][1]" for i in range(len(right))]),
        scores,
    )


def largest_label(trees: list, what: str = "X") -> int:
    """The largest class number of ``trees`` (-1: none labelled); DataError
    naming the tree of one past ``MAX_CLASSES``."""
    largest = max(range(len(trees)), key=lambda index: int(trees[index].label.max()), default=None)
    if largest is None:
        return UNLABELLED
    number = int(trees[largest].label.max())
    check_largest_number(number, *_named(trees[largest], what, largest))
    return number


def check_labels(trees: list, n_classes: int, what: str, roots: bool = True) -> None:
    """DataError naming a tree labelled outside 0..n_classes-1 or, with
    ``roots``, one without its sentence's class at its root."""
    for index, tree in enumerate(trees):
        where = _named(tree, what, index)
        if roots and tree.root_label == UNLABELLED:
            raise DataError(
                "no class at its root: give the sentences' classes (y), or trees labelled at their roots", *where
            )
        bad = tree.label >= n_classes
        if bad.any():
            raise DataError(f"label {int(tree.label[np.argmax(bad)])} is not a class number 0..{n_classes - 1}", *where)


def classes_of(y, what: str = "y") -> np.ndarray:
    """The classes of labels ``y`` (ints or strings), sorted (``np.unique``:
    whole numbers in numeric order, strings character by character, by
    Unicode code point); ValueError for labels of one class, or of more
    than ``MAX_CLASSES``."""
    labels = as_sequence(y, what)
    if not labels:
        raise ValueError(f"{what} must be a non-empty list of labels, one per sentence")
    kinds = [_kind(label) for label in labels]
    for index, (label, kind) in enumerate(zip(labels, kinds)):
        if kind is None:
            raise ValueError(
                f"{what}[{index}] is {label!r}, not a class label: labels are all whole numbers or all strings"
            )
        if kind != kinds[0]:
            raise ValueError(
                f"{what}[{index}] is {label!r}, {kind}, but {what}[0] is "
                f"{kinds[0]}: labels are all whole numbers or all strings"
            )
    classes = np.unique(np.asarray(labels))
    if len(classes) < 2:
        raise ValueError(
            f"every label of {what} is {classes[0].item()!r}: a classifier needs examples of two classes or more"
        )
    if len(classes) > MAX_CLASSES:
        raise ValueError(
            f"{what} holds {len(classes)} classes: npcomp takes at most {MAX_CLASSES} (are these the labels?)"
        )
    return classes


def _kind(label) -> str | None:
    """ "a string", "a whole number" (NumPy's too), or None for anything else
    (a float, nan, None, a bool)."""
    if isinstance(label, str):
        return "a string"
    if isinstance(label, numbers.Integral) and not isinstance(label, (bool, np.bool_)):
        return "a whole number"
    return None


def class_numbers(y, classes: np.ndarray, n: int, what: str = "y") -> np.ndarray:
    """Each label of ``y`` (``n`` of them) as its class number in ``classes``;
    ValueError naming a label that is not a class."""
    labels = as_sequence(y, what)
    if len(labels) != n:
        raise ValueError(f"{what} has {len(labels)} labels for {n} sentences")
    numbers = {label: number for number, label in enumerate(classes.tolist())}
    found = []
    for index, label in enumerate(np.asarray(labels).tolist()):
        if label not in numbers:
            raise ValueError(
                f"{what}[{index}] is {label!r}, not one of the classes {classes.tolist()} the estimator was fitted on"
            )
        found.append(numbers[label])
    return np.array(found, dtype=np.int32)


def with_root_classes(trees: list, numbers: np.ndarray, classes: np.ndarray, what: str) -> list:
    """``trees`` labelled at their roots with the class ``numbers`` given
    (``y``'s); their phrase labels kept where the classes are the numbers
    0..C-1 they mean, refused otherwise."""
    numbered = classes.dtype.kind in "iu" and np.array_equal(classes, np.arange(len(classes)))
    labelled = []
    for index, (tree, number) in enumerate(zip(trees, numbers.tolist())):
        where = _named(tree, what, index)
        root = tree.root_label
        if root != UNLABELLED and root != number:
            raise DataError(
                f"the tree's root is labelled {root}, but y gives class {number} "
                f"({classes[number]!r}): leave the root's label to y, or make them "
                "agree",
                *where,
            )
        if not numbered and (tree.label[:-1] >= 0).any():
            raise DataError(
                "the tree is labelled at its phrases with class numbers, but y "
                f"names the classes {classes.tolist()}: give y=None to train on "
                "the trees' own labels, or trees labelled at their roots alone",
                *where,
            )
        label = tree.label.copy()
        label[tree.root] = number
        labelled.append(tree.with_labels(label))
    return labelled


def _named(tree: Tree, what: str, index: int) -> tuple:
    """(path, line) naming a tree in an error: its source, else its place."""
    return _split_source(tree.source) if tree.source else (f"{what}[{index}]", None)


def pair_classes(X) -> list:
    """Each pair's own class number: a ``SickPair``'s ``label`` (None where it
    is -1, or for two sentences ``(a, b)``)."""
    return [int(item.label) if isinstance(item, SickPair) and item.label >= 0 else None for item in X]


def is_x_and_y(given) -> bool:
    """Whether a dev or test split of pairs is given as ``(pairs, targets)``
    rather than as pairs (SickPairs, or two sentences each)."""
    return (
        isinstance(given, tuple)
        and len(given) == 2
        and not isinstance(given[0], SickPair)
        and len(given[0]) > 0
        and not isinstance(given[0][0], (str, Tree))
    )
