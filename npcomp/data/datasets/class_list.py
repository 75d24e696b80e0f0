"""The classes of a user's labels: their names in order and each label's number.

=====================================  ===========================================
labels                                 classes
=====================================  ===========================================
all whole numbers >= 0 (treebank       the numbers themselves: 0 .. the largest
labels always are)                     (names "0", "1", ...; order ``numbers``)
any other (names)                      the names sorted (``sort_key``); order
                                       ``sorted``
``classes`` given, labels among them   the given names in their order (``given``:
                                       also the ordinal order of an ordinal head)
``classes`` given, labels numbers      class k is the k-th name given (only when
                                       no name given is itself a number)
=====================================  ===========================================

The order of sorted names is a function of the names alone, never of the
order they come in or of Python's string hashing (``PYTHONHASHSEED``): when
every name reads as a number (Python's ``float``: ``-1``, ``2.5``, ``1e3``,
``nan``, ``inf``), in numeric order, NaN after every number, two names of
one value (``1`` and ``1.0``) in text order; otherwise in text order,
character by character (Unicode code points: ``B`` before ``a``).

Sorted names rarely have the order an ordinal head needs ("negative",
"neutral", "positive", "very negative", ...): ``ClassList.order`` says how
the order came, so that the caller can ask for ``classes`` there.

A classifier has at most ``MAX_CLASSES`` classes: more names, or a class
number past it (a stray ``9999`` among 0-4), are refused naming the file
and line before anything is built, as is a training set whose labels are
all one class (``require_two_classes``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from npcomp.data.datasets import TASK_CLASSES
from npcomp.errors import ConfigError, DataError, option

ORDERS = ("numbers", "sorted", "given")
# the most classes a classifier takes: past it the labels are rarely classes
# (identifiers, scores, a stray number), and the head, its optimiser state
# and every evaluation grow with the count
MAX_CLASSES = 1000
_WHOLE_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class ClassList:
    """names: the class names, class k's at k; order: how they were ordered
    (``ORDERS``); by_name: labels are looked up among the names (else they are
    class numbers)."""

    names: tuple
    order: str
    by_name: bool

    def number(self, label: str) -> int:
        """The class number of a label as written (already checked to have one)."""
        return self.names.index(label) if self.by_name else int(label)


def class_names(task: str, n_classes: int, *, given: Sequence | None = None, unnamed: str | None = None) -> list:
    """The names of ``task``'s ``n_classes`` classes by class number:
    ``given`` (a run's own, as its config's ``classes`` on a user's files),
    else a built-in task's (``TASK_CLASSES``), else ``unnamed`` numbered
    (``"class {}"``), or the class numbers themselves when ``unnamed`` is None."""
    names = given or TASK_CLASSES.get(task)
    if names is None or len(names) != n_classes:
        return [k if unnamed is None else unnamed.format(k) for k in range(n_classes)]
    return list(names)


def is_class_number(label: str) -> bool:
    return bool(_WHOLE_NUMBER.fullmatch(label))


def checked_classes(classes: Sequence[str]) -> tuple:
    """The class names a caller gives (``--classes``), checked: ConfigError
    for a blank or repeated name, or fewer than two."""
    names = tuple(str(name).strip() for name in classes)
    if len(names) > MAX_CLASSES:
        raise ConfigError("classes", f"{len(names)} class names: npcomp takes at most {MAX_CLASSES} classes")
    if len(names) < 2:
        raise ConfigError(
            "classes",
            f"{len(names)} class name(s): a classifier needs two or more, in order, e.g. negative,neutral,positive",
        )
    if not all(names):
        raise ConfigError("classes", "a blank class name (two commas in a row?)")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError("classes", f"{', '.join(map(repr, repeated))} named twice")
    return names


# what to do about a label outside the classes given: of the training files,
# and of a further file read by a trained run (whose classes are fixed)
ADD_THE_CLASS = f"correct the label, or add its class to {option('classes', '', '[...]')}"
RUN_CLASSES = "correct the label: a trained run predicts its own classes only"


def class_list(
    labels: Sequence[tuple],
    classes: Sequence[str] | None = None,
    largest_number: int | None = None,
    advice: str = ADD_THE_CLASS,
) -> ClassList:
    """The classes of every label of a task's files.

    labels:         (label as written, path, line) of every labelled table row
    classes:        the class names the caller gives, in order; None: from the labels
    largest_number: the largest label of the treebank files (class numbers),
                    None without any
    advice:         what a message about a label outside ``classes`` says to do
    Raises DataError naming the file and line of a label outside ``classes``,
    or of a name beside a treebank's numbers without ``classes``.
    """
    if classes is not None:
        return _given(labels, checked_classes(classes), advice)
    names = [label for label, _, _ in labels if not is_class_number(label)]
    if not names:
        numbers = [_class_number(label, path, line) for label, path, line in labels]
        largest = max(numbers + ([largest_number] if largest_number is not None else []), default=None)
        if largest is None:
            raise DataError("no labelled examples: nothing says what the classes are")
        return ClassList(tuple(str(number) for number in range(largest + 1)), "numbers", False)
    if largest_number is not None:
        label, path, line = next(entry for entry in labels if not is_class_number(entry[0]))
        raise DataError(
            f"label {label!r} is a name, and the treebank files number their "
            "classes: give the class names in order "
            f"({option('classes', '', '[...]')}) to say which "
            "number each name is",
            path,
            line,
        )
    _check_name_count(labels)
    distinct = set(label for label, _, _ in labels)
    return ClassList(tuple(sorted(distinct, key=sort_key(distinct))), "sorted", True)


def _given(labels: Sequence[tuple], names: tuple, advice: str = ADD_THE_CLASS) -> ClassList:
    known = set(names)
    if all(label in known for label, _, _ in labels):
        return ClassList(names, "given", True)
    if not any(is_class_number(name) for name in names) and all(is_class_number(label) for label, _, _ in labels):
        for label, path, line in labels:
            if _class_number(label, path, line) >= len(names):
                raise DataError(
                    f"label {label}: the {len(names)} classes given number 0..{len(names) - 1} ({', '.join(names)})",
                    path,
                    line,
                )
        return ClassList(names, "given", False)
    label, path, line = next(entry for entry in labels if entry[0] not in known)
    raise DataError(f"label {label!r} is not one of the classes given ({', '.join(names)}): {advice}", path, line)


def _class_number(label: str, path, line: int) -> int:
    digits = label.lstrip("0") or "0"
    # the length first: int() of thousands of digits is slow, then refused by Python
    if len(digits) > len(str(MAX_CLASSES)) or int(digits) >= MAX_CLASSES:
        _past_the_largest(digits if len(digits) <= 30 else f"{digits[:30]}... ({len(digits)} digits)", path, line)
    return int(digits)


def check_largest_number(largest: int, path=None, line: int | None = None) -> None:
    """DataError (naming ``path`` and ``line``) for a class number past ``MAX_CLASSES``."""
    if largest >= MAX_CLASSES:
        _past_the_largest(str(largest), path, line)


def _past_the_largest(shown: str, path, line: int | None) -> None:
    raise DataError(
        f"label {shown} is past the largest class number, {MAX_CLASSES - 1}: "
        f"npcomp takes at most {MAX_CLASSES} classes (a stray number among the "
        "labels?)",
        path,
        line,
    )


def _check_name_count(labels: Sequence[tuple]) -> None:
    """DataError naming the first row whose label is one name past ``MAX_CLASSES``."""
    seen = set()
    for label, path, line in labels:
        seen.add(label)
        if len(seen) > MAX_CLASSES:
            raise DataError(
                f"label {label[:30]!r} is the {MAX_CLASSES + 1}st name among the "
                f"labels: npcomp takes at most {MAX_CLASSES} classes (is this "
                "column the labels?)",
                path,
                line,
            )


def sort_key(names: set):
    """The key that sorts class names (module docstring): numbers in numeric
    order, NaN last, when every name reads as one; else text order."""
    try:
        values = {name: float(name) for name in names}
    except ValueError:
        return str
    return lambda name: (math.isnan(values[name]), 0.0 if math.isnan(values[name]) else values[name], name)


def require_two_classes(trees: Sequence, names: Sequence, path=None) -> None:
    """DataError (naming ``path``) when the labelled nodes of ``trees``, the
    training examples, are all of one class: a classifier learns nothing from
    them (and scores 100% on them).  ``names``: the class names, by number."""
    found = set()
    for tree in trees:
        found.update(int(label) for label in tree.label if label >= 0)
        if len(found) > 1:
            return
    if not found:
        return  # no labels at all: the caller's message
    only = next(iter(found))
    shown = names[only] if 0 <= only < len(names) else only
    raise DataError(f"every training label is {str(shown)!r}: a classifier needs examples of two classes or more", path)
