"""The examples of one labelled file: a tree per sentence, or a pair of trees
per row, with the label or score as the file writes it.

A classification file is a treebank (``ptb``: labels at every node, already
numbers) or a table (``labelled_tables``) with these columns:

==============  ===============================================================
column          holds
==============  ===============================================================
``text``        the sentence (or ``sentence``; one of the two)
``label``       its class: a name, or a class number (0, 1, ...)
``tree``        optional: the sentence as a bracketed tree, which replaces the
                parse: ``(X (X a) (X (X fine) (X film)))``, any tag, class
                numbers at phrases that have one
``parents``     optional: its parse, SICK's ``.parents`` convention: a head per
                word (1-based, 0 at the root), space-separated (a list in JSON)
==============  ===============================================================

A file of sentence pairs has ``sentence_a`` and ``sentence_b`` and either
``score`` (their relatedness: kind ``pairs``) or ``label`` (their class, a
name or a class number, e.g. SICK's entailment judgments: kind
``pair-labels``), never both; optionally ``tree_a``/``tree_b`` or
``parents_a``/``parents_b``, and ``id`` (or ``pair_id``). Other columns are
left alone. Each sentence becomes a tree through ``text_trees.TextTrees``, as
``npcomp predict`` makes them: a tree or parents column stands in for the
parse. Nothing here knows the class list or the score range: ``own_data``
reads every file first, then decides them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from npcomp.errors import DataError
from npcomp.data.readers.formats import decode_lines, read_file_bytes
from npcomp.data.readers.ptb import read_ptb_file
from npcomp.data.datasets.labelled_tables import Table, detect_format, read_table
from npcomp.data.readers.parents import _read_ints
from npcomp.data.readers.sick import SickPair
from npcomp.data.text.text_trees import TextTrees

TEXT_COLUMNS = ("text", "sentence")
LABEL_COLUMN = "label"
SCORE_COLUMN = "score"
PAIR_SIDES = {"a": "sentence_a", "b": "sentence_b"}
ID_COLUMNS = ("id", "pair_id")


@dataclass
class FileExamples:
    """One file read: its trees (kind ``labels``) or pairs (``pairs``, scored;
    ``pair-labels``, labelled).

    labels: per tree (pair), its label as written (a str; a number written
            as its digits), None where unlabelled; None for a treebank, whose
            trees carry their labels, and for scored pairs
    given:  per tree, the bracketed tree the file gave (treebank line or
            ``tree`` column), None for a parsed sentence
    scores: per pair, its score (NaN where unlabelled)
    lines:  per example, the line it was read from
    made:   how many trees were made each way (``TextTrees.made``)
    """

    path: Path
    format: str
    kind: str
    sha256: str
    items: list
    lines: list
    labels: list | None = None
    given: list | None = None
    made: dict = field(default_factory=dict)


def read_examples(path: str | Path, text_trees: TextTrees, labelled: bool = True, pairs: str = "pairs") -> FileExamples:
    """The examples of ``path`` in its format (``labelled_tables.detect_format``).

    text_trees: makes the trees (the run's structure and ``--tree``)
    labelled:   every example must have its label or score; without, those
                present are read and the others left out (UNLABELLED, NaN)
    pairs:      the kind of a file of pairs with neither a score nor a label
                column (``labelled`` False: a run's pairs to predict)
    """
    path = Path(path)
    data = read_file_bytes(path)
    lines = decode_lines(data, path)
    fmt = detect_format(path, lines)
    sha256 = hashlib.sha256(data).hexdigest()
    if fmt == "ptb":
        trees = read_ptb_file(path, require_labels=labelled)
        plans = [text_trees.plan_tree(tree) for tree in trees]
        items = text_trees.build(plans)
        return FileExamples(
            path,
            fmt,
            "labels",
            sha256,
            items,
            [int(tree.source.rpartition(":")[2]) for tree in trees],
            given=list(trees),
            made=dict(Counter(text_trees.made)),
        )
    table = read_table(path, lines, fmt)
    if table_kind(table) == "pairs":
        kind = pair_kind(table, labelled) or pairs
        return _read_pairs(table, text_trees, labelled, sha256, kind)
    return _read_sentences(table, text_trees, labelled, sha256)


def file_kind(path: str | Path) -> str:
    """ "labels", "pairs" or "pair-labels": what a file holds, from its format
    and header (a treebank holds labelled trees), no tree made; DataError
    naming the file when it cannot be read or holds none of them."""
    path = Path(path)
    lines = decode_lines(read_file_bytes(path), path)
    fmt = detect_format(path, lines)
    if fmt == "ptb":
        return "labels"
    table = read_table(path, lines, fmt)
    kind = table_kind(table)
    return pair_kind(table) if kind == "pairs" else kind


def pair_kind(table: Table, labelled: bool = True) -> str | None:
    """ "pairs" for a table of pairs with a score column, "pair-labels" for one
    with a label column; DataError naming the file for both, or for neither
    when ``labelled`` (None then: the caller's run decides)."""
    has = {SCORE_COLUMN, LABEL_COLUMN} & set(table.columns)
    if len(has) == 2:
        raise DataError(
            f"both a {SCORE_COLUMN!r} and a {LABEL_COLUMN!r} column: a file of "
            f"sentence pairs has {SCORE_COLUMN!r} (relatedness, regressed) or "
            f"{LABEL_COLUMN!r} (a class, e.g. entailment, classified), not both: "
            "drop or rename the one not to train on",
            table.path,
            table.header_line,
        )
    if not has:
        if not labelled:
            return None
        raise DataError(
            f"no {SCORE_COLUMN!r} or {LABEL_COLUMN!r} column: a file of sentence "
            f"pairs has {SCORE_COLUMN!r} (relatedness) or {LABEL_COLUMN!r} (a class, "
            f"e.g. entailment) beside sentence_a and sentence_b; {_has(table)} "
            "(rename the column, or see docs/DATA.md)",
            table.path,
            table.header_line,
        )
    return "pairs" if SCORE_COLUMN in has else "pair-labels"


def table_kind(table: Table) -> str:
    """ "pairs" for a table of sentence pairs, "labels" for one of sentences."""
    columns = set(table.columns)
    if columns & {"sentence_a", "sentence_b", "tree_a", "tree_b", "parents_a", "parents_b"}:
        return "pairs"
    if columns & {"text", "sentence", "tree"}:
        return "labels"
    raise DataError(
        "no sentences: expected a text column (text or sentence) and a label "
        "column, or sentence_a, sentence_b and score or label for sentence pairs; "
        f"{_has(table)}",
        table.path,
        table.header_line,
    )


def _has(table: Table, row=None) -> str:
    """What a table's header (or a JSON row) holds, for a message."""
    if table.format == "jsonl":
        keys = row.values if row is not None else table.columns
        return f"the object's keys are {', '.join(keys) or 'none'}"
    return f"the header has {', '.join(table.columns)}"


def _read_sentences(table: Table, text_trees: TextTrees, labelled: bool, sha256: str) -> FileExamples:
    if {"text", "sentence"} <= set(table.columns):
        raise DataError(
            "both a text and a sentence column: keep the one that holds the sentences", table.path, table.header_line
        )
    text_column = "sentence" if "sentence" in table.columns else "text"
    if labelled:
        _require(table, [LABEL_COLUMN])
    plans, labels, given, lines = [], [], [], []
    for row in table.rows:
        if labelled and _value(row, LABEL_COLUMN) is None:
            _missing(table, row, LABEL_COLUMN)
        plan = _sentence_plan(table, row, text_trees, text_column, "tree", "parents")
        plans.append(plan)
        given.append(plan.given)
        labels.append(_label(table, row))
        lines.append(row.line)
    if not plans:
        raise DataError("no rows under the header: the file holds no sentences", table.path)
    items = text_trees.build(plans)
    return FileExamples(
        table.path, table.format, "labels", sha256, items, lines, labels, given, dict(Counter(text_trees.made))
    )


def _read_pairs(table: Table, text_trees: TextTrees, labelled: bool, sha256: str, kind: str = "pairs") -> FileExamples:
    """A table's sentence pairs, each with its score (``kind`` "pairs") or
    its label as written ("pair-labels")."""
    column = SCORE_COLUMN if kind == "pairs" else LABEL_COLUMN
    _require(table, list(PAIR_SIDES.values()) + ([column] if labelled else []))
    plans, scores, labels, ids, lines = [], [], [], [], []
    for row in table.rows:
        for side, side_column in PAIR_SIDES.items():
            plans.append(_sentence_plan(table, row, text_trees, side_column, f"tree_{side}", f"parents_{side}"))
        if labelled and _value(row, column) is None:
            _missing(table, row, column)
        score = _value(row, SCORE_COLUMN) if kind == "pairs" else None
        scores.append(math.nan if score is None else _number(table, row, score))
        labels.append(_label(table, row) if kind == "pair-labels" else None)
        pair_id = next((_value(row, column) for column in ID_COLUMNS if _value(row, column) is not None), None)
        ids.append(str(pair_id) if pair_id is not None else f"{table.path}:{row.line}")
        lines.append(row.line)
    if not lines:
        raise DataError("no rows under the header: the file holds no pairs", table.path)
    trees = text_trees.build(plans)
    items = [
        SickPair(trees[2 * index], trees[2 * index + 1], score, pair_id)
        for index, (score, pair_id) in enumerate(zip(scores, ids))
    ]
    return FileExamples(
        table.path,
        table.format,
        kind,
        sha256,
        items,
        lines,
        labels if kind == "pair-labels" else None,
        made=dict(Counter(text_trees.made)),
    )


def _sentence_plan(table: Table, row, text_trees: TextTrees, text_column: str, tree_column: str, parents_column: str):
    """How one sentence of a row becomes a tree: its tree column, else its
    text, with its parents column's parse if there is one."""
    text = _text(table, row, text_column)
    tree = _text(table, row, tree_column)
    heads = _heads(table, row, parents_column)
    if tree is None and text is None:
        raise DataError(
            f"no sentence: {text_column!r} is empty or missing"
            + (f" ({_has(table, row)})" if text_column not in row.values else ""),
            table.path,
            row.line,
        )
    if tree is None:
        return text_trees.plan(text, str(table.path), row.line, bracketed=False, heads=heads)
    plan = text_trees.plan(tree, str(table.path), row.line, bracketed=True, heads=heads)
    if text is not None and plan.tokens not in (text.split(), text_trees.tokenise(text)):
        raise DataError(
            f"the words of {tree_column!r} ({' '.join(plan.tokens)[:60]}) are not "
            f"those of {text_column!r} ({text[:60]}): the tree must be of the "
            "sentence (or leave one of them out)",
            table.path,
            row.line,
        )
    return plan


def _require(table: Table, columns: list) -> None:
    """DataError for a CSV or TSV header without one of ``columns`` (JSON
    lines are checked object by object)."""
    if table.format == "jsonl":
        return
    for column in columns:
        if column not in table.columns:
            raise DataError(
                f"no {column!r} column: {_has(table)} (rename the column, or see docs/DATA.md for the columns read)",
                table.path,
                table.header_line,
            )


def _missing(table: Table, row, column: str) -> None:
    if column not in row.values:
        raise DataError(f"no {column!r}: {_has(table, row)}", table.path, row.line)
    raise DataError(f"{column!r} is empty: every example needs its {column}", table.path, row.line)


def _value(row, column: str):
    """A row's value of ``column``: None where missing, null or blank."""
    value = row.values.get(column)
    if value is None or isinstance(value, str) and not value.strip():
        return None
    return value.strip() if isinstance(value, str) else value


def _text(table: Table, row, column: str) -> str | None:
    value = _value(row, column)
    if value is not None and not isinstance(value, str):
        raise DataError(f"{column!r} holds {json_type(value)}, not text", table.path, row.line)
    return value


def _label(table: Table, row) -> str | None:
    """The label as written: a name, or a whole number as its digits."""
    value = _value(row, LABEL_COLUMN)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise DataError(f"label {json.dumps(value)[:40]}: a label is a class name or a whole number", table.path, row.line)


def _number(table: Table, row, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DataError(f"score {json.dumps(value)[:40]} is not a number", table.path, row.line)
    try:
        number = float(value)
    except ValueError:
        raise DataError(f"score {value[:40]!r} is not a number", table.path, row.line) from None
    except OverflowError:  # a whole number of hundreds of digits
        number = math.inf
    if not math.isfinite(number):
        shown = value if isinstance(value, str) else json.dumps(value)
        if len(shown) > 40:
            shown = f"{shown[:20]}... ({len(shown)} characters)"
        raise DataError(
            f"score {shown} is not a finite number (a score is a number on the file's scale, e.g. 1 to 5)",
            table.path,
            row.line,
        )
    return number


def _heads(table: Table, row, column: str) -> list | None:
    """A parents column's heads (SICK's ``.parents`` convention), None without."""
    value = _value(row, column)
    if value is None:
        return None
    if isinstance(value, str):
        return _read_ints(value, table.path, row.line)
    if isinstance(value, list) and all(isinstance(head, int) and not isinstance(head, bool) for head in value):
        return value
    raise DataError(
        f'{column!r} holds {json_type(value)}: expected heads, e.g. "2 0 2" (1-based, 0 at the root)',
        table.path,
        row.line,
    )


def json_type(value) -> str:
    """A JSON value's kind, for a message."""
    if isinstance(value, bool):
        return "true/false"
    return {dict: "an object", list: "a list", int: "a number", float: "a number", str: "text"}.get(
        type(value), type(value).__name__
    )
