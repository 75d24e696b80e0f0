"""A user's labelled file: which format it is in, and the rows of a table.

==========  ===================================================================
format      a file of this format
==========  ===================================================================
ptb         bracketed trees, one a line, integer labels (the SST's ``.txt``)
csv         a header row, then comma-separated rows (RFC 4180: a field with a
            comma, a quote or a line break inside is quoted, "" a quote)
tsv         a header row, then tab-separated rows, quoted as Python's csv
            module and pandas write them (``csv.writer(f, delimiter="\t")``,
            ``DataFrame.to_csv(sep="\t")``): a value that starts with a
            quote is quoted, "" a quote inside it, and may hold tabs and
            line breaks; a quote anywhere else is a character like any other
jsonl       one JSON object a line (JSON lines), its keys the columns
==========  ===================================================================

The extension says the format (``.csv``; ``.tsv``, ``.tab``; ``.jsonl``,
``.ndjson``, ``.json``; ``.ptb``, ``.tree``, ``.trees``) and the first line
confirms it; any other extension (``.txt``) leaves it to the first line: a
tree starts with "(", a JSON object with "{", a TSV header holds a tab and a
CSV header a comma.  Column names are read without case or surrounding
space (``Text`` is ``text``); blank lines are skipped.  Every row keeps the
line it starts on, so that a bad value is named by file and line.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from npcomp.errors import DataError

FORMATS = ("ptb", "csv", "tsv", "jsonl")
# the columns a table of sentences or pairs is read by (file_examples.py)
COLUMN_NAMES = (
    "text",
    "sentence",
    "label",
    "tree",
    "parents",
    "score",
    "sentence_a",
    "sentence_b",
    "tree_a",
    "tree_b",
    "parents_a",
    "parents_b",
)
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".ptb": "ptb",
    ".tree": "ptb",
    ".trees": "ptb",
}
_LOOKS = {
    "ptb": "a bracketed tree, e.g. (3 (2 a) (3 film))",
    "jsonl": 'a JSON object, e.g. {"text": "a fine film", "label": "positive"}',
    "tsv": "a header row of tab-separated column names",
    "csv": "a header row of comma-separated column names",
}


@dataclass
class Row:
    """One row of a table: the line it starts on (1-based) and its values by
    column name (str in CSV and TSV; any JSON value in JSON lines)."""

    line: int
    values: dict


@dataclass
class Table:
    """A CSV, TSV or JSON lines file read: its columns (the header's, or the
    first object's keys) and its rows, blank lines left out."""

    path: Path
    format: str
    header_line: int
    columns: tuple
    rows: list


def first_line(lines: list) -> tuple:
    """(1-based number, text) of the first line that is not blank; (None, "") for none."""
    for number, text in enumerate(lines, start=1):
        if text.strip():
            return number, text.strip()
    return None, ""


def content_format(text: str) -> str | None:
    """The format a file's first line looks like, None when it looks like none."""
    if text.startswith("("):
        return "ptb"
    if text.startswith("{"):
        return "jsonl"
    if "\t" in text:
        return "tsv"
    if "," in text:
        return "csv"
    return None


def detect_format(path: str | Path, lines: list) -> str:
    """The format (``FORMATS``) of a file from its extension and first line.

    Raises DataError naming the file (and the first line) when the file is
    empty, when the first line does not fit the extension, or when neither
    says the format."""
    path = Path(path)
    number, text = first_line(lines)
    if number is None:
        raise DataError("the file is empty (expected a header row, JSON objects or bracketed trees)", path)
    named = EXTENSIONS.get(path.suffix.lower())
    looks = content_format(text)
    if text.startswith("[") and named in ("jsonl", None):
        raise DataError(
            "a JSON array: expected JSON lines, one object a line (e.g. `jq -c '.[]' FILE` writes them)", path, number
        )
    if named in ("csv", "tsv") and looks in ("csv", "tsv") and looks != named and _separator(named) not in text:
        other = "tabs" if named == "csv" else "commas"
        raise DataError(
            f"a .{path.suffix.lower().lstrip('.')} file whose header row is "
            f"separated by {other}: {text[:40]!r} (name the file .{looks} for its "
            "format)",
            path,
            number,
        )
    if named is None and looks in ("csv", "tsv") and not _names_a_column(text, looks):
        raise DataError(
            f"the first line looks like {looks.upper()} but names none of the "
            f"columns read ({', '.join(COLUMN_NAMES)}): {text[:40]!r}; a table "
            "starts with its header row (text,label), and a file of plain "
            "sentences needs one, or name the file .csv, .tsv, .jsonl or .ptb",
            path,
            number,
        )
    if named is None:
        if looks is None:
            raise DataError(
                "cannot tell the format from the first line: expected "
                f"{_LOOKS['ptb']}, {_LOOKS['jsonl']}, or a CSV or TSV header "
                "row (text,label); or name the file .csv, .tsv, .jsonl or .ptb",
                path,
                number,
            )
        return looks
    if named in ("ptb", "jsonl") and looks != named or named in ("csv", "tsv") and looks in ("ptb", "jsonl"):
        raise DataError(
            f"a .{path.suffix.lower().lstrip('.')} file should start with "
            f"{_LOOKS[named]}; this one starts {text[:40]!r} (rename the file "
            "for its format)",
            path,
            number,
        )
    return named


def _separator(fmt: str) -> str:
    return "\t" if fmt == "tsv" else ","


def _names_a_column(header: str, fmt: str) -> bool:
    """Whether a header row (by its look, ``fmt``) names a column read."""
    names = {name.strip().strip('"').strip().lower() for name in header.split(_separator(fmt))}
    return bool(names & set(COLUMN_NAMES))


def read_table(path: str | Path, lines: list, fmt: str) -> Table:
    """The rows of a CSV, TSV or JSON lines file (``lines``: its decoded lines)."""
    path = Path(path)
    if fmt == "jsonl":
        return _read_json_lines(path, lines)
    if fmt not in ("csv", "tsv"):
        raise ValueError(f"not a table format: {fmt!r}")
    header_line, _ = first_line(lines)
    if header_line is None:
        raise DataError("the file is empty (expected a header row)", path)
    # a value as long as the file, not the csv module's 131,072 characters
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, sum(len(line) + 1 for line in lines)))
    try:
        records = list(_csv_records(path, lines, header_line, fmt))
    finally:
        csv.field_size_limit(limit)
    columns = None
    rows = []
    for number, fields in records:
        if all(not field.strip() for field in fields):
            continue  # a blank line
        if columns is None:
            columns = _column_names([field.strip() for field in fields], path, number)
            continue
        if len(fields) != len(columns):
            raise DataError(
                f"{len(fields)} field(s), but the header has {len(columns)} "
                f"({', '.join(columns)}): "
                + (
                    'a tab inside a value, or one missing? (quote a value that holds a tab: "a<TAB>b")'
                    if fmt == "tsv"
                    else 'quote a value that holds a comma: "a, b"'
                ),
                path,
                number,
            )
        rows.append(Row(number, dict(zip(columns, fields))))
    return Table(path, fmt, header_line, columns, rows)


def _csv_records(path: Path, lines: list, header_line: int, fmt: str = "csv"):
    """(line a record starts on, its fields) of CSV or TSV lines (the csv
    module's dialect, with commas or tabs); a quoted field may run over
    several lines."""
    # with its line end, so that a quoted value's line break stays white space
    reader = csv.reader(
        (line + "\n" for line in lines[header_line - 1 :]), strict=True, delimiter="\t" if fmt == "tsv" else ","
    )
    while True:
        start = header_line + reader.line_num
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise DataError(
                f"not {fmt.upper()}: {error} (a value that starts with a quote is "
                'quoted, and a quote inside it is written twice: "he said '
                '""hi""")',
                path,
                header_line + reader.line_num - 1,
            ) from None
        yield start, fields


def _column_names(names: list, path: Path, line: int) -> tuple:
    names = [name.lower() for name in names]
    seen = set()
    for name in names:
        if name in seen and name:
            raise DataError(f"column {name!r} twice in the header", path, line)
        seen.add(name)
    return tuple(names)


def _read_json_lines(path: Path, lines: list) -> Table:
    rows = []
    columns = None
    header_line = None
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise DataError(
                f"not JSON: {error.msg} at column {error.colno} (JSON lines: one whole object a line)", path, number
            ) from None
        except RecursionError:
            raise DataError(
                'JSON nested too deeply to read: a line is one object of columns, {"text": ..., "label": ...}',
                path,
                number,
            ) from None
        except ValueError:  # Python's limit on the digits of a whole number (4300)
            raise DataError(
                "a whole number of thousands of digits, too long to read: a label or score is a few digits",
                path,
                number,
            ) from None
        if not isinstance(value, dict):
            raise DataError(
                f'a JSON {type(value).__name__}, not an object: each line is one object, {{"text": ..., "label": ...}}',
                path,
                number,
            )
        keys = [str(key).strip().lower() for key in value]
        if len(set(keys)) != len(keys):
            raise DataError("a key twice in the object (keys are read without case)", path, number)
        values = dict(zip(keys, value.values()))
        if columns is None:
            columns, header_line = tuple(keys), number
        rows.append(Row(number, values))
    if columns is None:
        raise DataError("the file is empty (expected JSON objects, one a line)", path)
    return Table(path, "jsonl", header_line, columns, rows)
