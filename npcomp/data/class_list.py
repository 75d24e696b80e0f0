"""The classes of a user's labels: their names in order and each label's number.

=====================================  ===========================================
labels                                 classes
=====================================  ===========================================
all whole numbers >= 0 (treebank       the numbers themselves: 0 .. the largest
labels always are)                     (names "0", "1", ...; order ``numbers``)
any other (names)                      the names sorted, numerically where all
                                       are numbers (-1, 0, 1); order ``sorted``
``classes`` given, labels among them   the given names in their order (``given``:
                                       also the ordinal order of an ordinal head)
``classes`` given, labels numbers      class k is the k-th name given (only when
                                       no name given is itself a number)
=====================================  ===========================================

Sorted names rarely have the order an ordinal head needs ("negative",
"neutral", "positive", "very negative", ...): ``ClassList.order`` says how
the order came, so that the caller can ask for ``classes`` there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .errors import ConfigError, DataError, option
from .formats import INT32_MAX

ORDERS = ("numbers", "sorted", "given")
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


def is_class_number(label: str) -> bool:
    return bool(_WHOLE_NUMBER.fullmatch(label))


def checked_classes(classes: Sequence[str]) -> tuple:
    """The class names a caller gives (``--classes``), checked: ConfigError
    for a blank or repeated name, or fewer than two."""
    names = tuple(str(name).strip() for name in classes)
    if len(names) < 2:
        raise ConfigError("classes", f"{len(names)} class name(s): a classifier needs two or "
                                     "more, in order, e.g. negative,neutral,positive")
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


def class_list(labels: Sequence[tuple], classes: Sequence[str] | None = None,
               largest_number: int | None = None, advice: str = ADD_THE_CLASS) -> ClassList:
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
        largest = max(numbers + ([largest_number] if largest_number is not None else []),
                      default=None)
        if largest is None:
            raise DataError("no labelled examples: nothing says what the classes are")
        return ClassList(tuple(str(number) for number in range(largest + 1)), "numbers", False)
    if largest_number is not None:
        label, path, line = next(entry for entry in labels if not is_class_number(entry[0]))
        raise DataError(f"label {label!r} is a name, and the treebank files number their "
                        "classes: give the class names in order "
                        f"({option('classes', '', '[...]')}) to say which "
                        "number each name is", path, line)
    distinct = set(label for label, _, _ in labels)
    return ClassList(tuple(sorted(distinct, key=_sort_key(distinct))), "sorted", True)


def _given(labels: Sequence[tuple], names: tuple, advice: str = ADD_THE_CLASS) -> ClassList:
    known = set(names)
    if all(label in known for label, _, _ in labels):
        return ClassList(names, "given", True)
    if not any(is_class_number(name) for name in names) \
            and all(is_class_number(label) for label, _, _ in labels):
        for label, path, line in labels:
            if _class_number(label, path, line) >= len(names):
                raise DataError(f"label {label}: the {len(names)} classes given number 0.."
                                f"{len(names) - 1} ({', '.join(names)})", path, line)
        return ClassList(names, "given", False)
    label, path, line = next(entry for entry in labels if entry[0] not in known)
    raise DataError(f"label {label!r} is not one of the classes given ({', '.join(names)}): "
                    f"{advice}", path, line)


def _class_number(label: str, path, line: int) -> int:
    # a long run of digits (Python reads no more than 4300) is no class number either
    number = int(label) if len(label) <= 12 else INT32_MAX + 1
    if number > INT32_MAX:
        raise DataError(f"label {label[:30]} is far too large for a class number", path, line)
    return number


def _sort_key(names: set):
    """Numbers in numeric order when every name is one (-1 before 0), else text order."""
    try:
        for name in names:
            float(name)
    except ValueError:
        return str
    return lambda name: (float(name), name)
