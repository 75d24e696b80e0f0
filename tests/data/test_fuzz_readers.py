"""Property tests of every reader and parser against near-valid and arbitrary
input: PTB trees (files and single lines), word vectors (text, word2vec
binary, gzip), the SICK files (the Tree-LSTM authors' layout), sweep SPEC
files (TOML), and what explain and predict
take: lines of bracketed trees or sentences, and --parents heads.

The property: each input either loads into a valid structure (checked
below, reader by reader) or raises the library's own error naming the file
(and the line, where there is one), within a time bound -- never another
exception, never a hang.  The inputs are valid ones generated from their
parts and then damaged the ways people and programs damage them (a bracket
dropped or doubled, a label or value replaced, a line cut, tabs, doubled
spaces, CRLF, byte-order marks, Latin-1 bytes, unicode white space), and
random bytes; and fixed valid files edited byte by byte (a byte replaced,
inserted or deleted, the file cut).  A user's own files (CSV, TSV, JSON
lines) get what hostile files hold: numbers of hundreds or thousands of
digits, JSON nested thousands deep, control characters, quoted TSV values,
fields of 200,000 characters.  The seed is fixed (derandomize) and the
budget small, so the file runs in well under a minute."""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import signal
import string
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from npcomp.runs.explanations import _dependency_tree
from npcomp.data.readers.vectors import read_vectors, vector_dimension
from npcomp.data.readers.formats import Tree, decode_lines
from npcomp.data.readers.ptb import parse_ptb, read_ptb_file
from npcomp.data.readers.sick import read_sick_dir
from npcomp.errors import DataError
from npcomp.experiments.sweep_plan import plan_runs
from npcomp.experiments.sweep_spec import SpecError, read_spec
from npcomp.data.text.text_trees import TextTrees

# every example within this many seconds (each takes milliseconds)
TIME_BOUND = 10.0
# more examples for a longer search: FUZZ_EXAMPLES=5000
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", 40))
PROPERTY = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


class Hang(BaseException):
    """An example over its time bound (a BaseException: no reader catches it)."""


@contextlib.contextmanager
def time_bound(seconds: float = TIME_BOUND):
    def expire(signum, frame):
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def names_the_place(error: DataError, path, line_required: bool = False) -> None:
    """The message starts with the file; a line, where the error has one, is
    within the file's."""
    message = str(error)
    assert message.startswith(str(path)), message
    assert error.path is not None and error.path.startswith(str(path)), message
    if line_required:
        assert error.line is not None and error.line >= 1, message
    if error.line is not None:
        assert message.startswith(f"{error.path}:{error.line}: "), message


@pytest.fixture
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


# --------------------------------------------------------------------------
# damage: what happens to text between the program that wrote it and ours
# --------------------------------------------------------------------------

# pieces of text that readers treat specially
SPECIAL = [
    "(",
    ")",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\xa0",
    "\u2003",
    "\u200b",
    "\x00",
    "\x1c",
    "\ufeff",
    "-",
    "-1",
    "1e999",
    "nan",
    "inf",
    "0",
    "99999999999999999999",
    "é",
    "\U0001f600",
    "\\",
    '"',
    "[",
    "=",
    "#",
    "'''",
    # what hostile files hold: control characters, numbers of hundreds and
    # thousands of digits, the ends of a float's range, JSON's non-numbers,
    # nesting thousands deep
    "\x1b",
    "\x7f",
    "\x85",
    "\x08",
    "9" * 401,
    "7" * 5000,
    "1e308",
    "-1e308",
    "NaN",
    "Infinity",
    "null",
    "[" * 3000,
    '{"a": ' * 3000,
]


@st.composite
def damaged(draw, text: str, max_edits: int = 3) -> bytes:
    """``text`` as UTF-8 with up to ``max_edits`` edits: a special piece
    inserted, a character dropped or doubled, the text cut, a Latin-1 or
    other undecodable byte, a byte-order mark; or random bytes altogether."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.binary(max_size=300))
    pieces = list(text)
    for _ in range(draw(st.integers(0, max_edits))):
        position = draw(st.integers(0, len(pieces)))
        kind = draw(st.sampled_from(["insert", "drop", "double", "cut", "replace"]))
        if kind == "insert" or not pieces:
            pieces.insert(position, draw(st.sampled_from(SPECIAL)))
        elif kind == "cut":
            del pieces[position:]
        else:
            position = min(position, len(pieces) - 1)
            if kind == "drop":
                del pieces[position]
            elif kind == "double":
                pieces.insert(position, pieces[position])
            else:
                pieces[position] = draw(st.sampled_from(SPECIAL))
    data = "".join(pieces).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0:
        data = draw(byte_edits(data))
    ending = draw(st.sampled_from(["", "bom", "latin-1", "crlf"]))
    if ending == "bom":
        data = b"\xef\xbb\xbf" + data
    elif ending == "latin-1" and data:
        position = draw(st.integers(0, len(data)))
        data = data[:position] + b"\xe9" + data[position:]
    elif ending == "crlf":
        data = data.replace(b"\n", b"\r\n")
    return data


@st.composite
def byte_edits(draw, valid: bytes) -> bytes:
    """``valid`` cut at a random offset, or with one to four bytes replaced,
    inserted or deleted (UTF-8 sequences broken where they fall)."""
    if draw(st.booleans()):
        return valid[: draw(st.integers(0, len(valid)))]
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(data)))
        byte = draw(st.integers(0, 255))
        action = draw(st.sampled_from(["replace", "insert", "delete"]))
        if action == "insert" or not data:
            data.insert(position, byte)
        elif action == "replace":
            data[min(position, len(data) - 1)] = byte
        else:
            del data[min(position, len(data) - 1)]
    return bytes(data)


WORD_CHARACTERS = st.sampled_from(
    list(string.ascii_letters + string.digits + "'.,-`\\/") + ["é", "ß", "ł", "語", "\u0301", "\xa0", "\u200b", "😀"]
)
WORDS = st.text(WORD_CHARACTERS, min_size=1, max_size=6).filter(lambda word: word.strip())


# --------------------------------------------------------------------------
# PTB trees
# --------------------------------------------------------------------------


@st.composite
def ptb_text(draw, max_leaves: int = 8) -> str:
    """A valid bracketed tree: integer labels, a word per leaf, any arity."""
    nodes = [f"({draw(st.integers(0, 4))} {draw(WORDS)})" for _ in range(draw(st.integers(1, max_leaves)))]
    while len(nodes) > 1:
        start = draw(st.integers(0, len(nodes) - 1))
        count = draw(st.integers(1, min(3, len(nodes) - start)))
        nodes[start : start + count] = [f"({draw(st.integers(0, 4))} " + " ".join(nodes[start : start + count]) + ")"]
    return nodes[0]


def check_tree(tree: Tree, n_classes: int | None = None) -> None:
    """A valid tree whose bracketing reads back as the same tree."""
    tree.validate(n_classes)
    assert len(tree.tokens) == int(np.count_nonzero(tree.token_index >= 0)) >= 1
    for token in tree.tokens:  # a space inside: the SST's no-break space (2 8\xa01\/2)
        assert token and token == token.strip() and not re.search(r"[()\t\n\r\f\v]| {2}", token), token
    again = parse_ptb(tree.to_ptb(), require_labels=False)
    assert again.tokens == tree.tokens
    assert np.array_equal(again.parent, tree.parent)
    assert np.array_equal(again.label, tree.label)


@PROPERTY
@given(text=ptb_text())
def test_a_valid_tree_parses_and_reads_back(text):
    with time_bound():
        check_tree(parse_ptb(text, "trees.txt:1"), n_classes=5)


@PROPERTY
@given(data=st.data(), lines=st.lists(ptb_text(), min_size=1, max_size=4))
@example(data=None, lines=["(3 a good film)"])
@example(data=None, lines=["(2 (2 8\xa01\\/2) (2 hours))"])
def test_ptb_files_near_valid_and_random(scratch, data, lines):
    text = "\n".join(lines) + "\n"
    content = text.encode() if data is None else data.draw(damaged(text, 4))
    path = scratch / "trees.txt"
    path.write_bytes(content)
    with time_bound():
        try:
            trees = read_ptb_file(path)
        except DataError as error:
            names_the_place(error, path)
            return
    assert trees
    for tree in trees:
        check_tree(tree)


@st.composite
def near_valid_tree_line(draw) -> str:
    """A tree with a bracket dropped or doubled, a label changed, a leaf
    emptied, several words in a leaf, or unicode white space around words."""
    pieces = re.findall(r"\(|\)|[^()\s]+|\s+", draw(ptb_text()))
    for _ in range(draw(st.integers(1, 3))):
        position = draw(st.integers(0, len(pieces) - 1))
        kind = draw(st.sampled_from(["drop", "double", "label", "empty", "words", "space"]))
        if kind == "drop":
            del pieces[position]
        elif kind == "double":
            pieces.insert(position, pieces[position])
        elif kind == "label":
            pieces.insert(
                position, draw(st.sampled_from(["(", "(NP", "(-1", "(7", "(2.5", "(٣", "(+3", "(99999999999999999999"]))
            )
        elif kind == "empty":
            pieces.insert(position, draw(st.sampled_from(["()", "(2 )", "(2)", "( )"])))
        elif kind == "words":
            pieces.insert(position, " " + " ".join(draw(st.lists(WORDS, min_size=1, max_size=3))))
        else:
            pieces.insert(position, draw(st.sampled_from(["\xa0", "\u2003", "\t", "\x0b", "\u3000", "\x1c"])))
        if not pieces:
            pieces = ["("]
    return "".join(pieces)


@PROPERTY
@given(line=st.one_of(near_valid_tree_line(), st.text(max_size=60)), require_labels=st.booleans())
@example(line="(3 a good film)", require_labels=True)
@example(line="(2\u2003(2 a) (2\u3000b))", require_labels=True)
@example(line="(NP (2 a) (2 b))", require_labels=False)
def test_a_tree_line(line, require_labels):
    with time_bound():
        try:
            tree = parse_ptb(line, "<stdin>:3", require_labels=require_labels)
        except DataError as error:
            names_the_place(error, "<stdin>", line_required=True)
            assert error.line == 3
            return
    check_tree(tree)


# --------------------------------------------------------------------------
# what explain and predict take: lines of trees or sentences, --parents
# --------------------------------------------------------------------------


@PROPERTY
@given(
    lines=st.lists(
        st.one_of(
            near_valid_tree_line(),
            ptb_text(),
            st.lists(WORDS, min_size=1, max_size=6).map(" ".join),
            st.text(max_size=40),
        ),
        min_size=1,
        max_size=4,
    ),
    kind=st.sampled_from(
        [("gold", None), ("gold", "right"), ("gold", "left"), ("chain", None), ("left", None), ("right", "chain")]
    ),
    n_classes=st.sampled_from([2, 5]),
)
@example(lines=["(7 (2 a) (2 b))"], kind=("gold", None), n_classes=5)
@example(lines=["(3 (2 a) (2 b))"], kind=("gold", "right"), n_classes=2)
@example(lines=["(3 a good film)"], kind=("gold", None), n_classes=5)
@example(lines=["-LRB- ( ) [ ]"], kind=("chain", None), n_classes=5)
def test_lines_of_trees_or_sentences(lines, kind, n_classes):
    """explain's TREE and predict's standard input, as TextTrees reads them
    (tree kinds that need no parser: plain sentences get a fixed shape)."""
    structure, tree_kind = kind
    if structure == "gold" and tree_kind is None:
        lines = [line if line.lstrip().startswith("(") else f"(2 {line})" for line in lines]
    to_trees = TextTrees(structure, tree_kind, n_classes=n_classes)
    with time_bound():
        try:
            trees = to_trees(lines, "TREE", skip_blank=True)
        except DataError as error:
            names_the_place(error, "TREE", line_required=True)
            assert error.line <= len(lines)
            return
    for tree in trees:
        tree.validate(n_classes)
        assert all(token and token.strip() == token for token in tree.tokens)


@PROPERTY
@given(
    sentence=st.one_of(st.lists(WORDS, min_size=1, max_size=6).map(" ".join), st.text(max_size=30)),
    heads=st.one_of(
        st.lists(st.integers(-2, 8), max_size=8).map(lambda heads: " ".join(map(str, heads))), st.text(max_size=20)
    ),
)
@example(sentence="a man is playing", heads="2 4 4 0")
@example(sentence="a man", heads="2 1")
@example(sentence="a man", heads="٢ 0")
@example(sentence="", heads="")
def test_parents_heads(sentence, heads):
    """explain --parents HEADS with a plain sentence as TREE."""
    with time_bound():
        try:
            tree = _dependency_tree([sentence], heads, "TREE")
        except DataError as error:
            names_the_place(error, "TREE")
            return
    tree.validate()
    assert int(np.count_nonzero(tree.parent < 0)) == 1
    assert sorted(tree.token_index.tolist()) == list(range(len(tree.tokens)))


@PROPERTY
@given(data=st.binary(max_size=200))
@example(data=b"\xff\xfea\x00")
@example(data="a\rb\r\nc\x85d\u2028e".encode())
def test_standard_input_lines(data):
    with time_bound():
        try:
            lines = decode_lines(data, "<stdin>")
        except DataError as error:
            names_the_place(error, "<stdin>")
            return
    assert all("\n" not in line and "\r" not in line for line in lines)


# --------------------------------------------------------------------------
# word vectors
# --------------------------------------------------------------------------

FLOAT_TEXT = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False).map(repr),
    st.integers(-99, 99).map(str),
    st.sampled_from(["1e-3", "-0", ".5", "5.", "1E+2"]),
)


@st.composite
def vector_text(draw) -> str:
    """A GloVe or word2vec text file: words (some with spaces, some repeated)
    and their values, fields separated by spaces or tabs."""
    dim = draw(st.integers(1, 4))
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        word = draw(st.one_of(WORDS, st.lists(WORDS, min_size=2, max_size=2).map(" ".join)))
        separator = draw(st.sampled_from([" ", "\t", " ", "  "]))
        values = separator.join(draw(FLOAT_TEXT) for _ in range(dim))
        end = draw(st.sampled_from(["", " ", "\t"]))
        rows.append(f"{word}{separator}{values}{end}")
    header = f"{len(rows)} {dim}\n" if draw(st.booleans()) else ""
    return header + "\n".join(rows) + "\n"


def check_vectors(path: Path) -> None:
    try:
        found = read_vectors(path)
    except DataError as error:
        names_the_place(error, path)
        return
    assert found.vectors.dtype == np.float32 and np.isfinite(found.vectors).all()
    assert found.vectors.shape == (len(found.words), found.dim) and found.dim >= 1
    assert len(set(found.words)) == len(found.words) >= 1 and all(found.words)
    assert all(found.find(word) == (row, True) for row, word in enumerate(found.words))
    # what a command checks its options against before reading the whole file
    assert vector_dimension(path) == found.dim


@PROPERTY
@given(data=st.data(), text=vector_text(), compressed=st.booleans())
@example(data=None, text="the\t0.1\t0.2\nfilm\t1\t2\n", compressed=False)
@example(data=None, text="café 1 2\n".encode("latin-1").decode("latin-1"), compressed=False)
@example(data=None, text="2 3\na 1 2 3\n", compressed=True)
@example(data=None, text=" 0.0\n0 0.0\n", compressed=False)  # no word: was read as ''
def test_vector_text_files(scratch, data, text, compressed):
    content = text.encode() if data is None else data.draw(damaged(text))
    path = scratch / ("vectors.txt.gz" if compressed else "vectors.txt")
    path.write_bytes(gzip.compress(content) if compressed else content)
    with time_bound():
        check_vectors(path)


@st.composite
def binary_vectors(draw) -> bytes:
    """A word2vec binary file, perhaps with its count off, an entry cut, a
    word not UTF-8, a NaN, or the newlines between entries left out."""
    dim = draw(st.integers(1, 3))
    words = draw(st.lists(WORDS, min_size=1, max_size=4))
    count = len(words) + draw(st.sampled_from([0, 0, 0, -1, 1]))
    newline = draw(st.sampled_from([b"\n", b"", b"\r\n"]))
    data = f"{max(count, 0)} {dim}\n".encode()
    for word in words:
        values = np.array(
            draw(st.lists(st.floats(-10, 10, width=32) | st.just(float("nan")), min_size=dim, max_size=dim)),
            dtype="<f4",
        )
        data += word.encode() + b" " + values.tobytes() + newline
    cut = draw(st.integers(0, 3))
    return data[: len(data) - cut] if cut and draw(st.booleans()) else data


@PROPERTY
@given(data=binary_vectors(), compressed=st.booleans(), suffix=st.sampled_from([".bin", ".txt"]))
@example(data=b"1 2\nthe \x00\x00\x80\x3f\x00\x00\x00\x40\n", compressed=False, suffix=".bin")
@example(data=b"1 2\nthe \x00\x00\x80\x3f\x00\x00\x00\x40\n", compressed=True, suffix=".txt")
def test_vector_binary_files(scratch, data, compressed, suffix):
    path = scratch / (f"vectors{suffix}" + (".gz" if compressed else ""))
    path.write_bytes(gzip.compress(data) if compressed else data)
    with time_bound():
        check_vectors(path)


@PROPERTY
@given(cut=st.integers(0, 200))
def test_damaged_gzip_streams(scratch, cut):
    path = scratch / "v.txt.gz"
    whole = gzip.compress(b"the 0.1 0.2 0.3\nfilm -1 2 3.5\ngood 1e-3 4 5\n" * 20)
    path.write_bytes(whole[: max(0, len(whole) - cut)])
    with time_bound():
        check_vectors(path)


# --------------------------------------------------------------------------
# SICK: the Tree-LSTM authors' layout, and SemEval's tab-separated files
# --------------------------------------------------------------------------


@st.composite
def dependency_heads(draw, n: int) -> list:
    """1-based heads of a random dependency tree over n words."""
    order = draw(st.permutations(range(1, n + 1)))
    heads = [0] * n
    for position, node in enumerate(order[1:], start=1):
        heads[node - 1] = order[draw(st.integers(0, position - 1))]
    return heads


@st.composite
def constituency_heads(draw, n: int) -> list:
    """1-based heads of a random binary tree whose leaves 1..n are the words."""
    heads, pending, next_node = [0] * (2 * n - 1), list(range(1, n + 1)), n + 1
    while len(pending) > 1:
        at = draw(st.integers(0, len(pending) - 2))
        for child in pending[at : at + 2]:
            heads[child - 1] = next_node
        pending[at : at + 2] = [next_node]
        next_node += 1
    return heads


@st.composite
def sick_directory(draw) -> dict:
    """The eight files of a split, file name -> text."""
    files = {
        name: []
        for name in ("a.toks", "b.toks", "a.parents", "b.parents", "a.cparents", "b.cparents", "sim.txt", "id.txt")
    }
    for pair in range(draw(st.integers(1, 3))):
        for side in "ab":
            words = draw(st.lists(WORDS.filter(lambda word: not re.search(r"\s", word)), min_size=1, max_size=4))
            files[f"{side}.toks"].append(" ".join(words))
            files[f"{side}.parents"].append(" ".join(map(str, draw(dependency_heads(len(words))))))
            files[f"{side}.cparents"].append(" ".join(map(str, draw(constituency_heads(len(words))))))
        files["sim.txt"].append(repr(draw(st.floats(1.0, 5.0))))
        files["id.txt"].append(str(pair + 1))
    return {name: "\n".join(lines) + "\n" for name, lines in files.items()}


@PROPERTY
@given(files=sick_directory(), data=st.data(), structure=st.sampled_from(["dependency", "constituency"]))
def test_sick_directories(scratch, files, data, structure):
    damaged_file = data.draw(st.sampled_from(sorted(files) + [None]))
    for name, text in files.items():
        (scratch / name).write_bytes(data.draw(damaged(text, 2)) if name == damaged_file else text.encode())
    with time_bound():
        try:
            pairs = read_sick_dir(scratch, structure)
        except DataError as error:
            names_the_place(error, scratch)
            return
    for pair in pairs:
        pair.tree_a.validate()
        pair.tree_b.validate()
        assert 1.0 <= pair.score <= 5.0 and pair.pair_id
    if damaged_file is None:
        assert len(pairs) == files["id.txt"].count("\n")


# --------------------------------------------------------------------------
# sweep SPEC files (TOML)
# --------------------------------------------------------------------------

TOML_VALUES = st.one_of(
    st.integers(-5, 100).map(str),
    st.sampled_from(
        [
            "0.05",
            "1e-3",
            "true",
            "false",
            '"random"',
            '"a b"',
            "[]",
            "[1, 2]",
            '[0.05, "x"]',
            "{ a = 1 }",
            '"1-3"',
            "[1, [2]]",
            "nan",
            "1979-05-27",
            '"\\u00e9"',
            "''",
        ]
    ),
)
TOML_KEYS = st.sampled_from(
    [
        "lr",
        "epochs",
        "dim",
        "model",
        "task",
        "seeds",
        "vectors",
        "fixed-embeddings",
        "out",
        "no-such-option",
        "a b",
        '"x.y"',
        "dropout",
    ]
)


@st.composite
def spec_text(draw) -> str:
    """A SPEC: seeds, [base], [grid] and [settings.NAME] tables, with keys
    and values drawn from what a person writes there, right or wrong."""
    lines = []
    if draw(st.booleans()):
        seeds = draw(st.sampled_from(['"1-3"', "[1, 2]", '"5-1"', "2", "[-1]", '"a"']))
        lines.append(f"seeds = {seeds}")
    for section in draw(
        st.lists(
            st.sampled_from(["base", "grid", "settings.glove", "settings.random", "settings.a/b", "extra", "settings"]),
            max_size=4,
        )
    ):
        lines.append(f"[{section}]")
        for _ in range(draw(st.integers(0, 3))):
            value = draw(TOML_VALUES)
            if section == "grid" and draw(st.booleans()):
                value = f"[{value}, {draw(TOML_VALUES)}]"
            lines.append(f"{draw(TOML_KEYS)} = {value}")
    return "\n".join(lines) + "\n"


@PROPERTY
@given(data=st.data(), text=spec_text())
@example(data=None, text="[grid]\nlr = [0.1, 0.10]\n")
@example(data=None, text="[base]\nlr = 0.1\n[base]\n")
@example(data=None, text='seeds = "1-3"\n[grid]\nlr = [0.05, 0.1]\n[settings.a]\nlr = 1\n')
def test_sweep_specs(scratch, data, text):
    path = scratch / "sweep.toml"
    path.write_bytes(text.encode() if data is None else data.draw(damaged(text, 2)))
    with time_bound():
        try:
            spec = read_spec(path)
            runs = plan_runs(spec)
        except SpecError as error:
            assert str(error).startswith(str(path)), str(error)
            return
    assert spec.seeds and all(isinstance(seed, int) and seed >= 0 for seed in spec.seeds)
    for options in [spec.base, *spec.settings.values()]:
        assert all(isinstance(value, (str, int, float, bool)) for value in options.values())
    assert all(isinstance(values, list) and values for values in spec.grid.values())
    assert len({run.name for run in runs}) == len(runs) >= 1
    assert all(re.fullmatch(r"[A-Za-z0-9_.+=-]+", run.name) for run in runs)


# --------------------------------------------------------------------------
# a user's own files: CSV, TSV (quoted as Python writes it), JSON lines
# --------------------------------------------------------------------------

# values a column may hold, right or hostile
CELL = st.one_of(
    st.lists(WORDS, min_size=1, max_size=4).map(" ".join),
    st.sampled_from(
        [
            'he said "hi"',
            "a\tb",
            "two\nlines",
            '"quoted"',
            "",
            "a film\x00",
            "esc\x1bape",
            "x" * 200_000,
            "9" * 401,
            "7" * 5000,
            "1e308",
            "-1e308",
            "nan",
            "inf",
            "(3 a)",
            "(Taymor) is",
            "positive",
        ]
    ),
)
SCORE = st.one_of(
    st.floats(0, 5).map(repr), st.sampled_from(["nan", "inf", "-1e308", "1e308", "9" * 401, "7" * 5000, "", "high"])
)


@st.composite
def own_file(draw) -> tuple:
    """(file name, bytes) of a table of sentences or of pairs, written as
    the csv module (and pandas) write CSV and TSV, or as JSON lines with
    the values JSON takes (huge numbers, NaN, null, deep nesting)."""
    import csv
    import io
    import json

    pairs = draw(st.booleans())
    columns = ["score", "sentence_a", "sentence_b"] if pairs else ["text", "label"]
    rows = []
    for _ in range(draw(st.integers(1, 4))):
        if pairs:
            rows.append([draw(SCORE), draw(CELL), draw(CELL)])
        else:
            rows.append([draw(CELL), draw(st.one_of(st.sampled_from(["pos", "neg", "0", "1"]), CELL))])
    kind = draw(st.sampled_from(["csv", "tsv", "jsonl"]))
    if kind == "jsonl":
        lines = []
        for row in rows:
            values = dict(zip(columns, row))
            text = json.dumps(values)
            if draw(st.booleans()):  # a number as JSON writes it, not as text
                key = columns[0] if pairs else "label"
                raw = values[key] if values[key] not in ("", "high") else "null"
                text = text.replace(json.dumps(values[key]), raw.replace("nan", "NaN").replace("inf", "Infinity"), 1)
            if draw(st.integers(0, 5)) == 0:
                text = text[:-1] + ', "deep": ' + "[" * 5000 + "]" * 5000 + "}"
            lines.append(text)
        data = ("\n".join(lines) + "\n").encode("utf-8")
    else:
        out = io.StringIO()
        writer = csv.writer(
            out, delimiter="\t" if kind == "tsv" else ",", quoting=csv.QUOTE_MINIMAL, lineterminator="\n"
        )
        writer.writerow(columns)
        writer.writerows(rows)
        data = out.getvalue().encode("utf-8")
    if draw(st.integers(0, 3)) == 0:
        data = draw(byte_edits(data))
    return f"own.{kind}", data


@settings(PROPERTY, max_examples=max(EXAMPLES // 2, 10))
@given(file=own_file())
def test_own_files(scratch, file):
    """A user's file loads (every row a valid tree, every score finite) or
    is refused naming the file, and the line where there is one."""
    from npcomp.data.datasets.own_data import load_files

    name, data = file
    path = scratch / name
    path.write_bytes(data)
    with time_bound():
        try:
            own = load_files(path, test=path, text_trees=TextTrees("gold", "right"))
        except DataError as error:
            names_the_place(error, path)
            return
    for split in own.task.splits.values():
        for item in split:
            for tree in (item.tree_a, item.tree_b) if hasattr(item, "tree_a") else (item,):
                tree.validate()
                assert not any(re.search(r"[\x00-\x08\x0e-\x1b\x7f]", token) for token in tree.tokens)
            if hasattr(item, "score"):
                assert np.isfinite(item.score)
