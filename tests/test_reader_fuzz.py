"""Every reader against hostile bytes: random bytes, valid files cut at random
offsets, and valid files with random bytes replaced, inserted or deleted.
Each example parses, or raises DataError naming the file and a line (or the
byte offset inside the message) — never any other exception."""
import gzip
import re
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npcomp.data.embeddings import read_vectors
from npcomp.data.formats import decode_lines
from npcomp.data.ptb import parse_ptb, read_ptb_file
from npcomp.data.sick import read_sick_dir
from npcomp.data.errors import DataError

FUZZ = settings(max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", 40)), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

VALID_PTB = (b"(3 (2 It) (4 (2 's) (4 good)))\n"
             b"(1 (2 not) (1 (2 very) (1 bad)))\n"
             b"(2 (2 a) (2 (2 8\xc2\xa01\\/2) (2 film)))\n")  # a no-break space, as the SST has
VALID_VECTORS = b"the 0.1 0.2 0.3\nfilm -1 2 3.5\ngood 1e-3 4 5\n"


def _binary_vectors() -> bytes:
    rows = {"the": [0.1, 0.2, 0.3], "film": [-1.0, 2.0, 3.5]}
    out = f"{len(rows)} 3\n".encode()
    for word, vector in rows.items():
        out += word.encode() + b" " + np.array(vector, dtype="<f4").tobytes() + b"\n"
    return out


VALID_BINARY = _binary_vectors()
SICK_FILES = {
    "a.toks": b"a dog runs\nthe cat sleeps\n",
    "b.toks": b"a dog is running\na cat sleeps\n",
    "a.parents": b"2 3 0\n2 3 0\n",
    "b.parents": b"2 4 4 0\n2 3 0\n",
    "a.cparents": b"4 4 5 5 0\n4 4 5 5 0\n",
    "b.cparents": b"5 5 6 6 7 7 0\n4 4 5 5 0\n",
    "sim.txt": b"4.5\n3.6\n",
    "id.txt": b"1\n2\n",
}


@st.composite
def edited(draw, valid: bytes):
    """``valid`` cut at a random offset, or with a few bytes replaced,
    inserted or deleted, or random bytes altogether."""
    kind = draw(st.sampled_from(["random", "truncate", "edit"]))
    if kind == "random":
        return draw(st.binary(max_size=200))
    if kind == "truncate":
        return valid[:draw(st.integers(0, len(valid)))]
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


def assert_names_the_place(error: DataError, path) -> None:
    """The message starts with the file and has a line or a byte offset."""
    message = str(error)
    assert message.startswith(str(path)), message
    assert error.line is not None or re.search(r"byte|offset|entry|line", message) \
        or error.path == str(path), message


@FUZZ
@given(data=edited(VALID_PTB))
def test_ptb_files(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("ptb") / "trees.txt"
    path.write_bytes(data)
    try:
        trees = read_ptb_file(path)
    except DataError as error:
        assert_names_the_place(error, path)
    else:
        assert all(tree.n_nodes >= 1 for tree in trees)


@FUZZ
@given(data=edited(VALID_PTB))
def test_predicts_stdin(data):
    """What predict does with its standard input: decode, then a tree per line."""
    try:
        for number, line in enumerate(decode_lines(data, "<stdin>"), start=1):
            if line.strip().startswith("("):
                parse_ptb(line, f"<stdin>:{number}", require_labels=False)
    except DataError as error:
        assert str(error).startswith("<stdin>"), str(error)


@FUZZ
@given(name=st.sampled_from(sorted(SICK_FILES)), data=st.data())
def test_sick_directories(tmp_path_factory, name, data):
    directory = tmp_path_factory.mktemp("sick")
    for file_name, content in SICK_FILES.items():
        (directory / file_name).write_bytes(content)
    (directory / name).write_bytes(data.draw(edited(SICK_FILES[name])))
    for structure in ("dependency", "constituency"):
        try:
            read_sick_dir(directory, structure)
        except DataError as error:
            assert str(error).startswith(str(directory)), str(error)


@FUZZ
@given(data=edited(VALID_VECTORS), compressed=st.booleans())
def test_vector_text_files(tmp_path_factory, data, compressed):
    path = tmp_path_factory.mktemp("vectors") / ("v.txt.gz" if compressed else "v.txt")
    path.write_bytes(gzip.compress(data) if compressed else data)
    try:
        vectors = read_vectors(path)
    except DataError as error:
        assert_names_the_place(error, path)
    else:
        assert vectors.vectors.shape[0] == len(vectors.words)
        assert np.isfinite(vectors.vectors).all()


@FUZZ
@given(data=edited(VALID_BINARY), compressed=st.booleans())
def test_vector_binary_files(tmp_path_factory, data, compressed):
    path = tmp_path_factory.mktemp("vectors") / ("v.bin.gz" if compressed else "v.bin")
    path.write_bytes(gzip.compress(data) if compressed else data)
    try:
        vectors = read_vectors(path)
    except DataError as error:
        assert_names_the_place(error, path)
    else:
        assert vectors.vectors.shape == (len(vectors.words), vectors.dim)


@FUZZ
@given(cut=st.integers(0, 200))
def test_damaged_gzip_streams(tmp_path_factory, cut):
    path = tmp_path_factory.mktemp("vectors") / "v.txt.gz"
    whole = gzip.compress(VALID_VECTORS * 20)
    path.write_bytes(whole[:max(0, len(whole) - cut)])
    try:
        read_vectors(path)
    except DataError as error:
        assert_names_the_place(error, Path(path))
