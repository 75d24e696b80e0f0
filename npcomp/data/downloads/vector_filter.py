"""Word vectors kept to the vocabulary of the data sets, as they are unpacked.

GloVe 840B is 5.6 GB of text, of which SICK's 2,400 words take 6 MB.
:func:`filter_vectors` streams a vector file (GloVe text, or word2vec
binary) entry by entry and writes, in GloVe text, the entries whose word is
in the vocabulary: every token of the data sets named, and the lowercase
form of each (npcomp looks a word up as it is, then in lowercase), so
``Good`` keeps ``good`` of a lowercase GloVe.  Nothing is held but the
vocabulary and one entry.

:func:`data_vocabulary` collects the tokens: the SST's trees
(``DATA_DIR/sst/{train,dev,test}.txt``) and SICK's tokens in the Tree-LSTM
layout (``DATA_DIR/sick/{train,dev,test}/{a,b}.toks``; where that layout is
not there, the release files' sentences split as the SST writes tokens).
:func:`vocabulary_digest` names a vocabulary by the SHA-256 of its sorted
words, so a filtered file's record says which words it was made for.

Numbers are written as the source has them: GloVe's lines are copied byte
for byte; word2vec binary's float32 values are written as the shortest
decimal that reads back as the same float32 (``numpy.format_float_positional``),
so the file reads back to the source's exact values.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterable

import numpy as np

from npcomp.errors import DataError

SPLITS = ("train", "dev", "test")
SICK_RELEASES = ("SICK_train.txt", "SICK_trial.txt", "SICK_test_annotated.txt")
# how the vocabulary of each data set is made, as a record says it
VOCABULARY_SOURCES = {
    "sst": "the tokens of DATA_DIR/sst/{train,dev,test}.txt",
    "sick": "the tokens of DATA_DIR/sick/{train,dev,test}/{a,b}.toks",
    "sick-release": "the sentences of DATA_DIR/sick/SICK_*.txt split as the SST writes tokens",
}


class MissingVocabulary(DataError):
    """A data set whose words a filter keeps is not installed."""


@dataclass
class Vocabulary:
    """The words a filter keeps: ``words`` (tokens and their lowercase
    forms), made from ``sources`` ({data set: how its tokens were read})."""

    words: frozenset
    sources: dict

    @property
    def digest(self) -> str:
        return vocabulary_digest(self.words)


def vocabulary_digest(words: Iterable[str]) -> str:
    """SHA-256 of the sorted words, one a line (UTF-8, no final newline)."""
    return hashlib.sha256("\n".join(sorted(words)).encode("utf-8")).hexdigest()


def data_vocabulary(data_dir: str | Path, datasets: Iterable[str]) -> Vocabulary:
    """The tokens of ``datasets`` ("sst", "sick") in ``data_dir``, with their
    lowercase forms.  Raises MissingVocabulary naming the files looked for
    and the command that installs them."""
    data_dir = Path(data_dir)
    tokens, sources = set(), {}
    for name in datasets:
        if name == "sst":
            tokens |= _sst_tokens(data_dir)
            sources["sst"] = VOCABULARY_SOURCES["sst"]
        elif name == "sick":
            sick, how = _sick_tokens(data_dir)
            tokens |= sick
            sources["sick"] = VOCABULARY_SOURCES[how]
        else:
            raise ValueError(f"no vocabulary for {name!r}: sst or sick")
    return Vocabulary(frozenset(tokens | {token.lower() for token in tokens}), sources)


def _sst_tokens(data_dir: Path) -> set:
    from npcomp.data.readers.ptb import read_ptb_file

    paths = [data_dir / "sst" / f"{split}.txt" for split in SPLITS]
    missing = [path for path in paths if not path.is_file()]
    if missing:
        raise MissingVocabulary(
            "no such file: the vectors are kept to the SST's words; "
            f"run `npcomp download sst --data-dir {data_dir}` first",
            missing[0],
        )
    tokens = set()
    for path in paths:
        for tree in read_ptb_file(path):
            tokens.update(tree.tokens)
    return tokens


def _sick_tokens(data_dir: Path) -> tuple:
    """(tokens, which VOCABULARY_SOURCES entry they came from)."""
    toks = [data_dir / "sick" / split / f"{side}.toks" for split in SPLITS for side in "ab"]
    if all(path.is_file() for path in toks):
        tokens = set()
        for path in toks:
            with open(path, encoding="utf-8") as lines:
                for line in lines:
                    tokens.update(line.split())
        return tokens, "sick"
    releases = [data_dir / "sick" / name for name in SICK_RELEASES]
    missing = [path for path in releases if not path.is_file()]
    if missing:
        raise MissingVocabulary(
            "no such file: the vectors are kept to SICK's words; run "
            f"`npcomp download sick --data-dir {data_dir}` first",
            missing[0],
        )
    from npcomp.data.text.sst_tokens import sst_tokens

    tokens = set()
    for path in releases:
        for sentence_a, sentence_b in release_sentences(path):
            tokens.update(sst_tokens(sentence_a))
            tokens.update(sst_tokens(sentence_b))
    return tokens, "sick-release"


def release_sentences(path: Path) -> list:
    """(sentence_A, sentence_B) of every pair of a SICK release file (a
    tab-separated table with those columns).  DataError names the file and
    line of a row that lacks them."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise DataError("empty file: expected SICK's header and pairs", path)
    header = [name.strip() for name in rows[0]]
    try:
        columns = header.index("sentence_A"), header.index("sentence_B")
    except ValueError:
        raise DataError(f"no sentence_A and sentence_B columns (the header has {header})", path, 1) from None
    pairs = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) <= max(columns):
            raise DataError(f"{len(row)} field(s), the header has {len(header)}", path, number)
        pairs.append((row[columns[0]], row[columns[1]]))
    return pairs


@dataclass
class FilterResult:
    """What :func:`filter_vectors` read and wrote: entries read, words kept,
    the MD5 of what it wrote."""

    read: int
    kept: int
    md5: str


def filter_vectors(
    source: BinaryIO,
    fmt: str,
    dim: int,
    out: BinaryIO,
    keep: Callable[[str], bool] | None,
    name: str = "",
    progress: Callable[[int], None] | None = None,
) -> FilterResult:
    """Stream the vector file ``source`` into GloVe text on ``out``.

    fmt:      "glove" (``word v1 .. vdim`` lines, a word may hold spaces as in
              GloVe 840B) or "word2vec-binary" (``count dim`` header, then
              per entry the word, a space, ``dim`` little-endian float32)
    keep:     which words to write (None: every word, the ``--full`` file)
    name:     the file's name for errors (DataError naming the line or entry)
    progress: called with the bytes read since its last call
    """
    digest = hashlib.md5(usedforsecurity=False)

    def write(data: bytes):
        digest.update(data)
        out.write(data)

    if fmt == "glove":
        read, kept = _filter_glove(source, dim, write, keep, name, progress)
    elif fmt == "word2vec-binary":
        read, kept = _filter_word2vec_binary(source, dim, write, keep, name, progress)
    else:
        raise ValueError(f"fmt must be glove or word2vec-binary, not {fmt!r}")
    if read == 0:
        raise DataError("no word vectors in it", name)
    return FilterResult(read, kept, digest.hexdigest())


def _filter_glove(source, dim, write, keep, name, progress) -> tuple:
    read = kept = 0
    pending = 0
    for number, line in enumerate(source, start=1):
        pending += len(line)
        if progress is not None and pending >= 1 << 22:
            progress(pending)
            pending = 0
        if not line.strip():
            continue
        read += 1
        word = line.split(b" ", 1)[0]
        if keep is not None and not _wanted(word, keep):
            continue  # a word with spaces starts with a field of its own: see below
        fields = line.rstrip(b"\r\n").split(b" ")
        if len(fields) < dim + 1:
            raise DataError(f"{len(fields) - 1} value(s) after the word, expected {dim}", name, number)
        if len(fields) > dim + 1:  # GloVe 840B's few words with spaces in them
            word = b" ".join(fields[: len(fields) - dim])
            if keep is not None and not _wanted(word, keep):
                continue
        write(line if line.endswith(b"\n") else line + b"\n")
        kept += 1
    if progress is not None and pending:
        progress(pending)
    return read, kept


def _wanted(word: bytes, keep: Callable[[str], bool]) -> bool:
    try:
        return keep(word.decode("utf-8"))
    except UnicodeDecodeError:
        return False  # no token of the data sets is anything but UTF-8


def _filter_word2vec_binary(source, dim, write, keep, name, progress) -> tuple:
    header = source.readline(256)
    try:
        count, file_dim = (int(field) for field in header.split())
    except ValueError:
        raise DataError(f"not a word2vec binary header: {header[:40]!r}", name, 1) from None
    if file_dim != dim:
        raise DataError(f"the header gives {file_dim} values an entry, expected {dim}", name, 1)
    size = 4 * dim
    kept = 0
    for number in range(1, count + 1):
        word = bytearray()
        while True:
            byte = source.read(1)
            if not byte:
                raise DataError(f"the file ends in entry {number} of {count}", name)
            if byte == b" ":
                break
            if byte != b"\n" or word:  # the newline some writers put after a vector
                word += byte
        values = source.read(size)
        if len(values) < size:
            raise DataError(f"the file ends in entry {number} of {count}", name)
        if progress is not None:
            progress(len(word) + 1 + size)
        text = bytes(word).decode("utf-8", errors="replace")
        if keep is not None and not keep(text):
            continue
        vector = np.frombuffer(values, dtype="<f4")
        if not np.all(np.isfinite(vector)):
            raise DataError(f"entry {number} ({text!r}) holds a value that is not finite", name)
        write(
            (
                text
                + " "
                + " ".join(np.format_float_positional(value, unique=True, trim="-") for value in vector)
                + "\n"
            ).encode("utf-8")
        )
        kept += 1
    return count, kept
