"""Word vector files: GloVe and word2vec text, word2vec binary, gzip-compressed
or not, read as :class:`WordVectors` (:func:`read_vectors`).

Vector files read here (``fmt`` of :func:`read_vectors`):

* ``glove``: GloVe text, one entry a line, ``word v1 v2 ... vdim``, no header;
  fields separated by spaces or tabs.  The dimension is the commonest
  number of values among the first lines.  GloVe 840B has a few words that
  contain spaces (``". . ."``, ``"at name@domain.com"``): a line with more than
  ``dim + 1`` fields is read as a spaced word followed by the last ``dim``
  fields, unless the field just before those is a number too (then the line
  has too many values and is an error).
* ``word2vec``: the same lines after a header line ``count dim``.
* ``word2vec-binary``: the header line ``count dim\\n``, then per entry the
  word's UTF-8 bytes up to a space, ``dim`` little-endian float32, and an
  optional newline.
* ``auto``: binary if the name ends in ``.bin`` or a ``count dim`` header is
  followed by bytes that are not text; else ``word2vec`` text if the first line
  is exactly two integers; else ``glove``.

Bad input raises :class:`npcomp.errors.DataError` naming the file and the
1-based line (for binary files: the entry number).  A word seen again later in
the file keeps its first vector; :attr:`WordVectors.duplicates` counts the
dropped entries.

A vector-file word is matched to a vocabulary word by its exact form, else
by the lowercase form (``embeddings.build_embedding_matrix``; GloVe 6B is
lowercase, the SST is not).
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from npcomp.errors import DataError

VECTOR_FORMATS = ("auto", "glove", "word2vec", "word2vec-binary")

# Text lines are converted to floats a batch at a time: one numpy call per
# batch is many times faster than float() per value, and the batch bounds the
# memory held in Python strings when reading multi-gigabyte files.
_BATCH_LINES = 4096
_BINARY_CHUNK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
# the dimension of a text file: the commonest number of values among its first lines
_DIM_SAMPLE_LINES = 100
# the largest word2vec binary table read from a gzip file, whose size cannot bound it
_MAX_GZIP_VECTOR_BYTES = 16 << 30


@dataclass(eq=False)
class WordVectors:
    """Vectors read from a file.  Unpacks as the pair ``words, vectors``.

    words:      list of n distinct str, row i of ``vectors`` belongs to words[i]
    vectors:    float32 (n, dim)
    path:       the file read, for error messages ("" if not from a file)
    fmt:        the format it was read as
    duplicates: entries dropped because their word came earlier in the file
    """

    words: list
    vectors: np.ndarray
    path: str = ""
    fmt: str = ""
    duplicates: int = 0
    index: dict = field(default=None, repr=False)

    def __post_init__(self):
        if self.index is None:
            self.index = {word: row for row, word in enumerate(self.words)}

    def __iter__(self):
        return iter((self.words, self.vectors))

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def find(self, word: str) -> tuple:
        """``(row, exact)``: the row of ``word``, else of its lowercase form.

        ``row`` is -1 when neither is present; ``exact`` says whether the word
        itself (not its lowercase form) was found.
        """
        row = self.index.get(word)
        if row is not None:
            return row, True
        return self.index.get(word.lower(), -1), False


def read_vectors(path: str | Path, fmt: str = "auto") -> WordVectors:
    """Read a GloVe / word2vec text / word2vec binary file.

    Returns a :class:`WordVectors`, which unpacks as ``words, vectors``:
    words a list of n distinct str, vectors float32 (n, dim).
    """
    if fmt not in VECTOR_FORMATS:
        raise ValueError(f"fmt must be one of {VECTOR_FORMATS}, not {fmt!r}")
    path = Path(path)
    with _damaged_gzip_named(path):
        if fmt == "auto":
            fmt = _detect_format(path)
        if fmt == "word2vec-binary":
            words, vectors, duplicates = _read_binary(path)
        else:
            words, vectors, duplicates = _read_text(path, has_header=fmt == "word2vec")
    return WordVectors(words, vectors, str(path), fmt, duplicates)


def vector_dimension(path: str | Path) -> int:
    """The dimension :func:`read_vectors` finds in ``path`` (format ``auto``),
    from its header or first lines only, so a command can check it against
    its options before reading the whole file.  DataError as read_vectors
    for a file whose dimension cannot be told."""
    path = Path(path)
    with _damaged_gzip_named(path):
        if _detect_format(path) == "glove":
            return _text_dimension(path)[0]
        with _open(path) as handle:
            header = _parse_header(handle.readline().removeprefix(_UTF8_BOM))
    if header is None:
        raise DataError("expected a word2vec header 'count dim'", path, 1)
    return header[1]


@contextmanager
def _damaged_gzip_named(path: Path):
    """DataError naming ``path`` when it is missing, or a gzip file that
    breaks off or is damaged, while it is read."""
    if not path.is_file():
        raise DataError("no such file", path)
    try:
        yield
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise DataError(f"damaged gzip file ({error or 'it breaks off'})", path) from None


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


def _open(path: Path):
    """The file's bytes, decompressed when it is gzip (by its magic number)."""
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")


def _detect_format(path: Path) -> str:
    if path.suffix == ".bin" or path.name.endswith(".bin.gz"):
        return "word2vec-binary"
    with _open(path) as handle:
        first_line = handle.readline().removeprefix(_UTF8_BOM)
        sample = handle.read(4096)
    if _parse_header(first_line) is None:
        return "glove"
    return "word2vec-binary" if _looks_binary(sample) else "word2vec"


def _parse_header(line: bytes):
    """``(count, dim)`` if ``line`` is exactly two integers, else None."""
    fields = line.split()
    if len(fields) == 2 and all(f.isdigit() for f in fields):
        return int(fields[0]), int(fields[1])
    return None


def _looks_binary(sample: bytes) -> bool:
    # float32 bytes are almost never valid UTF-8 for long, and text vector
    # files hold no control characters besides line ends.  The incremental
    # decoder tolerates a character cut in half at the end of the sample.
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
    except UnicodeDecodeError:
        return True
    return _has_control_bytes(sample)


def _has_control_bytes(data: bytes) -> bool:
    return any(byte < 32 and byte not in b"\t\n\r" for byte in data)


def _not_utf8(raw: bytes, error: UnicodeDecodeError) -> str:
    """What a text line with an undecodable byte is, most likely."""
    where = f"byte {raw[error.start]:#04x} at column {error.start + 1} is not UTF-8"
    fields = raw.decode("latin-1").split()
    if len(fields) > 1 and all(_is_number(field) for field in fields[1:]):
        # a word and its numbers: text in a one-byte encoding
        return (
            f"{where}: the file is text in another encoding (Latin-1 or Windows-1252?); "
            "convert it to UTF-8, e.g. with `iconv -f latin1 -t utf-8`"
        )
    if _has_control_bytes(raw):
        return (
            f"{where}, and the line holds control bytes: binary data (a word2vec binary "
            "file must start with its header 'count dim' or be named *.bin)"
        )
    return f"{where} (vector files are UTF-8 text)"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _text_dimension(path: Path) -> tuple:
    """(dimension, how it was found) of a header-less text file: the commonest
    number of fields after the word among its first lines, so that one odd
    line (a word with a space in it, a cut line) cannot set it."""
    counts = Counter()
    with _open(path) as handle:
        for raw in handle:
            # fields as _read_text splits them: at spaces and tabs
            fields = raw.decode("utf-8", errors="replace").replace("\t", " ").split(" ")
            fields = [field for field in fields if field.strip("\r\n")]
            if len(fields) > 1:
                counts[len(fields) - 1] += 1
            if sum(counts.values()) >= _DIM_SAMPLE_LINES:
                break
    if not counts:
        raise DataError("expected a word followed by its vector on the first lines", path, 1)
    dim = counts.most_common(1)[0][0]
    return dim, f"most of the first {sum(counts.values())} lines"


def _read_text(path: Path, has_header: bool):
    """words, float32 (n, dim) vectors and the duplicate count of a text file."""
    count = dim = None
    dim_source = ""
    words: list = []
    seen: set = set()
    keep: list = []  # per entry: False for a repeated word
    blocks: list = []  # float32 (n_batch, dim) arrays
    batch_values: list = []  # per entry of the current batch: its values as text
    batch_lines: list = []  # per entry of the current batch: its line number

    def flush():
        blocks.append(_convert_batch(batch_values, batch_lines, dim, path))
        batch_values.clear()
        batch_lines.clear()

    with _open(path) as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_UTF8_BOM):
                raw = raw[len(_UTF8_BOM) :]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataError(_not_utf8(raw, error), path, number) from None
            if "\t" in text:  # tabs separate the fields as spaces do
                text = text.replace("\t", " ")
            # word2vec's own writer ends every line with a space
            text = text.rstrip("\r\n ")
            if number == 1:
                header = _parse_header(raw)
                if has_header:
                    if header is None:
                        raise DataError("expected a word2vec header 'count dim'", path, number)
                    count, dim = header
                    if dim == 0:
                        raise DataError("the header announces dimension 0", path, number)
                    dim_source = "the header"
                    continue
                if header is not None:
                    raise DataError(
                        "this line looks like a word2vec header 'count dim' in a file read as GloVe text", path, number
                    )
            if not text:
                continue
            if dim is None:
                dim, dim_source = _text_dimension(path)
            word, _, values = text.partition(" ")
            # The usual line is the word and dim values with single spaces
            # between; anything else (spaced words, doubled spaces, wrong
            # length) is split field by field.
            if values.count(" ") + 1 != dim or values.startswith(" ") or "  " in values or not word:
                word, values = _split_irregular(text, dim, dim_source, path, number)
            keep.append(word not in seen)
            seen.add(word)
            words.append(word)
            batch_values.append(values)
            batch_lines.append(number)
            if len(batch_values) == _BATCH_LINES:
                flush()
    if batch_values:
        flush()
    if not words:
        raise DataError("the file holds no vectors", path)
    if count is not None and count != len(words):
        raise DataError(f"the header announces {count} vectors but the file holds {len(words)}", path, 1)
    vectors = np.concatenate(blocks)
    duplicates = len(words) - len(seen)
    if duplicates:
        keep_mask = np.array(keep)
        vectors = vectors[keep_mask]
        words = [word for word, kept in zip(words, keep) if kept]
    return words, vectors, duplicates


def _split_irregular(text: str, dim: int, dim_source: str, path: Path, number: int):
    """``(word, values_text)`` of a line that is not ``word`` + dim single-spaced values."""
    fields = [piece for piece in text.split(" ") if piece]
    if text.startswith(" ") and len(fields) == dim:
        raise DataError(f"no word before the {dim} values (the line starts with white space)", path, number)
    if len(fields) > dim + 1 and not _is_number(fields[-dim - 1]):
        # a word with spaces in it (GloVe 840B)
        return " ".join(fields[:-dim]), " ".join(fields[-dim:])
    if len(fields) == dim + 1:
        return fields[0], " ".join(fields[1:])
    raise DataError(
        f"expected {dim} values after the word, found {len(fields) - 1} (the dimension was set by {dim_source})",
        path,
        number,
    )


def _convert_batch(values: list, lines: list, dim: int, path: Path) -> np.ndarray:
    """float32 (len(values), dim) from the value texts of one batch of lines."""
    try:
        # values beyond float32 range become inf, reported just below
        with np.errstate(over="ignore"):
            block = np.array(" ".join(values).split(" "), dtype=np.float32)
    except ValueError:
        # find the culprit line by line: the slow path runs only on bad input
        for text, number in zip(values, lines):
            for piece in text.split(" "):
                if not _is_number(piece):
                    raise DataError(f"value {piece!r} is not a number", path, number) from None
        raise
    block = block.reshape(len(values), dim)
    _check_finite(block, lines, path, "line")
    return block


def _check_finite(block: np.ndarray, numbers: Sequence[int], path: Path, unit: str):
    finite = np.isfinite(block).all(axis=1)
    if not finite.all():
        row = int(np.argmin(finite))
        raise DataError(
            f"NaN or infinite value in the vector (or beyond float32 range) on {unit} {numbers[row]}",
            path,
            numbers[row],
        )


def _binary_header(handle, path: Path, size: int | None) -> tuple:
    """count, dim and the rows to allocate of a word2vec binary file whose
    header line ``handle`` reads next; ``size`` its bytes (None: gzip)."""
    header_line = handle.readline()
    header = _parse_header(header_line)
    if header is None:
        raise DataError("expected a word2vec header 'count dim'", path, 1)
    count, dim = header
    if count == 0 or dim == 0:
        raise DataError("the file holds no vectors", path)
    # Allocate no more rows than the file can hold (each entry takes a
    # word of at least one byte, a space and the floats), so a corrupt
    # header cannot ask for terabytes; a short file is then reported at
    # the entry that breaks off.
    # (A gzip file's size says nothing of its content: rows grow as read.)
    if size is None:
        if count * 4 * dim > _MAX_GZIP_VECTOR_BYTES:
            raise DataError(
                f"the header announces {count} vectors of dimension {dim}, more "
                "than npcomp reads from a gzip file (decompress it first)",
                path,
                1,
            )
        return count, dim, count
    return count, dim, min(count, (size - len(header_line)) // (4 * dim + 2))


def _read_binary(path: Path):
    """words, float32 (n, dim) vectors and the duplicate count of a word2vec binary file."""
    size = None if _is_gzip(path) else path.stat().st_size
    with _open(path) as handle:
        count, dim, capacity = _binary_header(handle, path, size)
        entry_bytes = 4 * dim
        vectors = np.empty((capacity, dim), dtype=np.float32)
        keep = np.ones(capacity, dtype=bool)
        words: list = []
        seen: set = set()
        buffer = b""
        position = 0  # next unread byte of buffer

        def make_available(length: int, entry: int):
            """Read on until buffer[position:position + length] exists."""
            nonlocal buffer, position
            if len(buffer) - position >= length:
                return
            buffer = buffer[position:]
            position = 0
            while len(buffer) < length:
                more = handle.read(max(_BINARY_CHUNK, length - len(buffer)))
                if not more:
                    raise DataError(
                        f"truncated file: entry {entry} of the {count} the header announces breaks off", path, entry
                    )
                buffer += more

        for entry in range(1, count + 1):
            space = buffer.find(b" ", position)
            while space < 0:
                make_available(len(buffer) - position + 1, entry)
                space = buffer.find(b" ", position)
            # the newline that may end the previous entry comes before the word
            raw_word = buffer[position:space].lstrip(b"\r\n")
            if not raw_word:
                raise DataError(f"entry {entry} has an empty word", path, entry)
            try:
                word = raw_word.decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(f"entry {entry}: the word {raw_word!r} is not UTF-8", path, entry) from None
            position = space + 1
            make_available(entry_bytes, entry)
            row = entry - 1
            vectors[row] = np.frombuffer(buffer, dtype="<f4", count=dim, offset=position)
            position += entry_bytes
            keep[row] = word not in seen
            seen.add(word)
            words.append(word)
        rest = buffer[position:] + handle.read()
    if rest.strip():
        raise DataError(f"data after the {count} entries the header announces", path, count + 1)
    _check_finite(vectors, range(1, count + 1), path, "entry")
    duplicates = count - len(seen)
    if duplicates:
        vectors = vectors[keep]
        words = [word for word, kept in zip(words, keep) if kept]
    return words, vectors, duplicates
