"""Vocabulary, vector-file readers and the embedding matrix (npcomp.data.readers.embeddings)."""

import struct
from pathlib import Path

import numpy as np
import pytest

from npcomp.data.readers.embeddings import UNKNOWN, Vocabulary, build_embedding_matrix
from npcomp.data.readers.vectors import WordVectors, read_vectors
from npcomp.data.readers.ptb import parse_ptb, read_ptb_file
from npcomp.errors import DataError


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def write_text(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def write_binary(path: Path, entries, header_count=None, newline=True) -> Path:
    """word2vec binary: 'count dim\\n', then per entry word, space, float32s."""
    dim = len(entries[0][1])
    count = len(entries) if header_count is None else header_count
    with open(path, "wb") as out:
        out.write(f"{count} {dim}\n".encode())
        for word, vector in entries:
            out.write(word.encode("utf-8") + b" ")
            out.write(struct.pack(f"<{dim}f", *vector))
            if newline:
                out.write(b"\n")
    return path


def assert_names(error: DataError, path: Path, line: int | None):
    assert error.path == str(path)
    assert error.line == line
    where = f"{path}:{line}:" if line is not None else f"{path}:"
    assert str(error).startswith(where)


GLOVE_LINES = ["the 0.418 0.24968 -0.41242", "Good 1 2 3", "good -1 -2 -3", "cat 0.5 0.25 1e-05"]


# --------------------------------------------------------------------------
# reading vector files
# --------------------------------------------------------------------------


def test_glove_text(tmp_path):
    path = write_text(tmp_path / "vectors.txt", GLOVE_LINES)
    vectors = read_vectors(path)
    assert vectors.fmt == "glove" and vectors.path == str(path)
    words, matrix = vectors
    assert words == ["the", "Good", "good", "cat"]
    assert matrix.dtype == np.float32 and matrix.shape == (4, 3)
    np.testing.assert_array_equal(matrix[0], np.array([0.418, 0.24968, -0.41242], np.float32))
    np.testing.assert_array_equal(matrix[3], np.array([0.5, 0.25, 1e-05], np.float32))
    assert vectors.duplicates == 0


def test_word2vec_text_with_header_and_trailing_spaces(tmp_path):
    # word2vec's own writer ends every line with a space
    lines = ["2 3", "the 0.1 0.2 0.3 ", "a 1 2 3 "]
    path = write_text(tmp_path / "vectors.txt", lines)
    for fmt in ("auto", "word2vec"):
        vectors = read_vectors(path, fmt)
        assert vectors.fmt == "word2vec"
        assert vectors.words == ["the", "a"]
        np.testing.assert_array_equal(vectors.vectors[1], [1, 2, 3])


@pytest.mark.parametrize("name, newline", [("vectors.bin", True), ("vectors.bin", False), ("vectors.w2v", True)])
def test_word2vec_binary(tmp_path, rng, name, newline):
    # ".w2v": no telling extension, so the float bytes after the header must give it away
    matrix = rng.standard_normal((3, 5)).astype(np.float32)
    entries = [("the", matrix[0]), ("naïve", matrix[1]), ("cat", matrix[2])]
    path = write_binary(tmp_path / name, entries, newline=newline)
    vectors = read_vectors(path)
    assert vectors.fmt == "word2vec-binary"
    assert vectors.words == ["the", "naïve", "cat"]
    np.testing.assert_array_equal(vectors.vectors, matrix)


def test_glove_word_with_spaces(tmp_path):
    path = write_text(tmp_path / "vectors.txt", ["the 1 2 3", ". . . 4 5 6", "at name@domain.com 7 8 9"])
    vectors = read_vectors(path)
    assert vectors.words == ["the", ". . .", "at name@domain.com"]
    np.testing.assert_array_equal(vectors.vectors[2], [7, 8, 9])


def test_duplicates_keep_the_first(tmp_path, rng):
    path = write_text(tmp_path / "vectors.txt", ["a 1 1", "b 2 2", "a 3 3", "a 4 4"])
    vectors = read_vectors(path)
    assert vectors.words == ["a", "b"] and vectors.duplicates == 2
    np.testing.assert_array_equal(vectors.vectors, [[1, 1], [2, 2]])
    binary = write_binary(tmp_path / "vectors.bin", [("a", [1, 1]), ("a", [2, 2]), ("b", [3, 3])])
    vectors = read_vectors(binary)
    assert vectors.words == ["a", "b"] and vectors.duplicates == 1
    np.testing.assert_array_equal(vectors.vectors, [[1, 1], [3, 3]])


def test_lines_beyond_the_first_batch(tmp_path):
    lines = [f"w{k} {k} {-k}" for k in range(1, 10001)]
    lines[8999] = "w9000 9000 x9000"
    path = write_text(tmp_path / "vectors.txt", lines)
    with pytest.raises(DataError, match="'x9000' is not a number") as caught:
        read_vectors(path)
    assert_names(caught.value, path, 9000)
    lines[8999] = "w9000 9000 -9000"
    vectors = read_vectors(write_text(path, lines))
    np.testing.assert_array_equal(vectors.vectors[-1], [10000, -10000])


TEXT_ERRORS = [
    # (lines, fmt, line, message)
    (["a 1 2 3", "b 1 2", "c 1 2 3"], "auto", 2, "expected 3 values after the word, found 2"),
    (["a 1 2 3", "b 1 2 3 4"], "auto", 2, "expected 3 values after the word, found 4"),
    (["a 1 2 3", "b 1  2"], "auto", 2, "expected 3 values after the word, found 2"),
    (["a 1 2 3", "b 1 two 3"], "auto", 2, "'two' is not a number"),
    (["a 1 2 3", "b 1 2 3", "c 1 nan 3"], "auto", 3, "NaN or infinite"),
    (["a 1 2 3", "b inf 2 3"], "auto", 2, "NaN or infinite"),
    (["a 1 2 3", "b 1e39 2 3"], "auto", 2, "beyond float32 range"),
    (["3 3", "a 1 2 3", "b 1 2 3"], "auto", 1, "announces 3 vectors but the file holds 2"),
    (["1 3", "a 1 2 3", "b 1 2 3"], "word2vec", 1, "announces 1 vectors but the file holds 2"),
    (["a 1 2 3"], "word2vec", 1, "expected a word2vec header"),
    (["2 3", "a 1 2 3", "b 1 2 3"], "glove", 1, "looks like a word2vec header"),
    (["2 3", "a 1 2 3", "b 1 2"], "auto", 3, "set by the header"),
    (["lonely"], "glove", 1, "expected a word followed by its vector"),
    (["2 0", "a", "b"], "word2vec", 1, "announces dimension 0"),
]


@pytest.mark.parametrize("lines, fmt, line, message", TEXT_ERRORS)
def test_text_errors_name_file_and_line(tmp_path, lines, fmt, line, message):
    path = write_text(tmp_path / "vectors.txt", lines)
    with pytest.raises(DataError, match=message) as caught:
        read_vectors(path, fmt)
    assert_names(caught.value, path, line)


def test_empty_files(tmp_path):
    for text in ("", "\n\n", "0 50\n"):
        path = tmp_path / "empty.txt"
        path.write_text(text)
        with pytest.raises(DataError, match="holds no vectors") as caught:
            read_vectors(path)
        assert_names(caught.value, path, None)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_vectors(tmp_path / "absent.txt")
    with pytest.raises(ValueError, match="fmt must be one of"):
        read_vectors(tmp_path / "absent.txt", fmt="fasttext")


def test_text_not_utf8(tmp_path):
    path = tmp_path / "vectors.txt"
    path.write_bytes(b"a 1 2\nb\xff 1 2\n")
    with pytest.raises(DataError, match="not UTF-8") as caught:
        read_vectors(path, "glove")
    assert_names(caught.value, path, 2)


def test_binary_truncated(tmp_path):
    entries = [("a", [1.0, 2.0]), ("b", [3.0, 4.0]), ("c", [5.0, 6.0])]
    path = write_binary(tmp_path / "vectors.bin", entries)
    data = path.read_bytes()
    for cut, entry in [(len(data) - 3, 3), (len(data) - 11, 3), (len(data) - 14, 2)]:
        path.write_bytes(data[:cut])
        with pytest.raises(DataError, match=f"truncated file: entry {entry} of the 3") as caught:
            read_vectors(path)
        assert_names(caught.value, path, entry)


def test_binary_header_count_too_small(tmp_path):
    entries = [("a", [1.0, 2.0]), ("b", [3.0, 4.0])]
    path = write_binary(tmp_path / "vectors.bin", entries, header_count=1)
    with pytest.raises(DataError, match="data after the 1 entries") as caught:
        read_vectors(path)
    assert_names(caught.value, path, 2)


def test_binary_nan_and_bad_header(tmp_path):
    path = write_binary(tmp_path / "vectors.bin", [("a", [1.0, 2.0]), ("b", [np.nan, 4.0])])
    with pytest.raises(DataError, match="NaN or infinite value .* on entry 2") as caught:
        read_vectors(path)
    assert_names(caught.value, path, 2)
    path.write_bytes(b"two dims\n")
    with pytest.raises(DataError, match="expected a word2vec header") as caught:
        read_vectors(path)
    assert_names(caught.value, path, 1)


# --------------------------------------------------------------------------
# vocabulary
# --------------------------------------------------------------------------


def test_vocabulary_ids_and_lookup():
    vocab = Vocabulary(["the", "Cat", "the", "cat", UNKNOWN, "dog"])
    assert vocab.words == [UNKNOWN, "the", "Cat", "cat", "dog"]
    assert len(vocab) == 5
    assert vocab.lookup("Cat") == 2  # exact form first
    assert vocab.lookup("CAT") == 3  # else the lowercase form
    assert vocab.lookup("The") == 1
    assert vocab.lookup("zebra") == 0
    assert vocab.lookup("Dog") == 4
    ids = vocab.encode(["The", "cat", "sat"])
    assert ids.dtype == np.int32
    np.testing.assert_array_equal(ids, [1, 3, 0])
    assert vocab.encode([]).shape == (0,)


def test_vocabulary_from_trees_and_saved_list():
    trees = [parse_ptb("(3 (2 It) (4 (2 's) (4 good)))"), parse_ptb("(1 (2 It) (0 bad))")]
    vocab = Vocabulary.from_trees(trees)
    assert vocab.words == [UNKNOWN, "It", "'s", "good", "bad"]
    saved = vocab.to_list()
    saved.append("changed")  # a copy: the vocabulary is unaffected
    assert len(vocab) == 5
    restored = Vocabulary.from_list(vocab.to_list())
    assert restored.words == vocab.words
    with pytest.raises(DataError, match="must start with"):
        Vocabulary.from_list(["It", "good"])
    with pytest.raises(DataError, match="repeats words"):
        Vocabulary.from_list([UNKNOWN, "a", "b", "a"])


# --------------------------------------------------------------------------
# embedding matrix and coverage
# --------------------------------------------------------------------------


def test_embedding_matrix_copies_found_rows(tmp_path, rng):
    vectors = read_vectors(write_text(tmp_path / "vectors.txt", GLOVE_LINES))
    vocab = Vocabulary(["The", "Good", "good", "CAT", "zebra", "the"])
    matrix, report = build_embedding_matrix(vocab, 3, rng, vectors)
    assert matrix.shape == (7, 3) and matrix.dtype == np.float32
    np.testing.assert_array_equal(matrix[vocab.lookup("The")], vectors.vectors[0])  # lowercase
    np.testing.assert_array_equal(matrix[vocab.lookup("Good")], [1, 2, 3])  # exact
    np.testing.assert_array_equal(matrix[vocab.lookup("good")], [-1, -2, -3])
    np.testing.assert_array_equal(matrix[vocab.lookup("CAT")], vectors.vectors[3])
    np.testing.assert_array_equal(matrix[vocab.lookup("the")], vectors.vectors[0])
    assert report == {
        "vocab_size": 7,
        "found_exact": 3,
        "found_lowercase": 2,
        "missing": 1,
        "type_coverage": 5 / 6,
        "oov": "normal",
        "scale": 1.0,
    }


def test_random_rows_do_not_depend_on_the_vectors(tmp_path):
    vocab = Vocabulary(["the", "zebra", "okapi"])
    vectors = read_vectors(write_text(tmp_path / "vectors.txt", GLOVE_LINES))
    with_file, _ = build_embedding_matrix(vocab, 3, np.random.default_rng(7), vectors)
    without, report = build_embedding_matrix(vocab, 3, np.random.default_rng(7))
    np.testing.assert_array_equal(with_file[[0, 2, 3]], without[[0, 2, 3]])
    assert report["found_exact"] == 0 and report["missing"] == 3


def test_oov_policies(rng):
    vocab = Vocabulary(f"w{k}" for k in range(4000))
    normal, _ = build_embedding_matrix(vocab, 50, rng)
    assert abs(normal.std() - 1.0) < 0.01 and abs(normal.mean()) < 0.01
    scaled, report = build_embedding_matrix(vocab, 50, rng, oov="normal", scale=0.1)
    assert abs(scaled.std() - 0.1) < 0.001 and report["scale"] == 0.1
    uniform, report = build_embedding_matrix(vocab, 50, rng, oov="uniform")
    assert report["scale"] == 0.05
    assert np.abs(uniform).max() <= 0.05 and np.abs(uniform).max() > 0.0499
    assert abs(uniform.std() - 0.05 / np.sqrt(3)) < 1e-3
    zero, _ = build_embedding_matrix(vocab, 50, rng, oov="zero", dtype=np.float64)
    assert zero.dtype == np.float64 and not zero.any()
    with pytest.raises(ValueError, match="oov must be one of"):
        build_embedding_matrix(vocab, 50, rng, oov="gaussian")
    with pytest.raises(ValueError, match="scale must be"):
        build_embedding_matrix(vocab, 50, rng, scale=-1)


def test_dimension_mismatch_names_the_file(tmp_path, rng):
    path = write_text(tmp_path / "vectors.txt", GLOVE_LINES)
    with pytest.raises(DataError, match="dimension 3 but the model's embeddings have dimension 5") as caught:
        build_embedding_matrix(Vocabulary(["the"]), 5, rng, read_vectors(path))
    assert_names(caught.value, path, None)


def test_plain_pair_of_words_and_matrix(rng):
    pair = (["the", "cat"], np.array([[1.0, 2.0], [3.0, 4.0]]))
    matrix, report = build_embedding_matrix(Vocabulary(["Cat", "dog"]), 2, rng, pair)
    np.testing.assert_array_equal(matrix[1], [3, 4])
    assert report["found_lowercase"] == 1 and report["missing"] == 1
    assert WordVectors(*pair).find("cat") == (1, True)
    assert WordVectors(*pair).find("CAT") == (1, False)
    assert WordVectors(*pair).find("dog") == (-1, False)


def test_type_coverage_counts_the_words_found(tmp_path, rng):
    vectors = read_vectors(write_text(tmp_path / "vectors.txt", GLOVE_LINES))
    trees = [parse_ptb("(1 (2 The) (1 (2 cat) (1 (2 the) (0 zebra))))"), parse_ptb("(2 (2 The) (2 okapi))")]
    # types: The, cat, the, zebra, okapi (3 found, exactly or in lowercase)
    _, report = build_embedding_matrix(Vocabulary.from_trees(trees), 3, rng, vectors)
    assert report["type_coverage"] == 3 / 5


def test_real_glove_6b(data_dir):
    path = data_dir / "vectors" / "glove.6B.50d.sst-sick.txt"
    vectors = read_vectors(path)
    assert vectors.fmt == "glove" and vectors.vectors.shape == (18564, 50)
    assert vectors.duplicates == 0
    np.testing.assert_allclose(vectors.vectors[vectors.index["the"], :3], [0.418, 0.24968, -0.41242], rtol=1e-6)


def test_real_sst_coverage_matches_the_data_notes(data_dir):
    # ../shared/data/SOURCES.md: GloVe 6B 50d covers 91.7% of the SST types,
    # the word2vec subset 58.0% (exact or lowercase form)
    trees = [tree for split in ("train", "dev", "test") for tree in read_ptb_file(data_dir / "sst" / f"{split}.txt")]
    glove = read_vectors(data_dir / "vectors" / "glove.6B.50d.sst-sick.txt")
    vocab = Vocabulary.from_trees(trees)
    _, report = build_embedding_matrix(vocab, 50, np.random.default_rng(0), glove)
    assert round(report["type_coverage"], 3) == 0.917
