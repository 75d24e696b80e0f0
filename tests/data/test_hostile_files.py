"""What a hostile or careless user gives the readers and the estimators,
answered: a TSV quoted as Python's csv module and pandas write it read
right; huge numbers, deep JSON, control characters, compressed files,
directories, FIFOs and devices, a TSV named .csv, plain text taken for a
header, a 200,000-character field, each refused naming the file and line
(or read); NaN, inf, None and empty inputs to the estimators named by
their index; errors through Python name the parameter, the command line
its flag."""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import warnings

import pytest

from npcomp.cli import main
from npcomp.experiments.failures import flag
from npcomp.errors import ConfigError, DataError
from npcomp.data.datasets.own_data import load_files
from npcomp.data.text.text_trees import TextTrees
from npcomp.estimators import PairRegressor, TreeClassifier

TINY = dict(dim=4, embedding_dim=4, epochs=1, batch_size=10, threads=1, seed=1, tree="right")


def right() -> TextTrees:
    return TextTrees("gold", "right")


def written_as_python_writes(rows: list, delimiter: str = "\t") -> str:
    """A table as ``csv.writer(QUOTE_MINIMAL)`` writes it, which is what
    pandas' ``DataFrame.to_csv(sep="\\t")`` writes too."""
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL, lineterminator="\n").writerows(rows)
    return out.getvalue()


# --------------------------------------------------------------------------
# TSV as Python writes it
# --------------------------------------------------------------------------


def test_a_tsv_quoted_as_python_writes_it_reads_back_its_values(tmp_path):
    texts = [
        'he said "hi" to her',
        '"Sad" is the word',
        "a\ttab inside",
        "two\nlines",
        "plain words",
        "it 's `` quoted '' as the SST writes",
    ]
    rows = [["text", "label"]] + [[text, f"c{index % 2}"] for index, text in enumerate(texts)]
    content = written_as_python_writes(rows)
    assert content.count('"') > 6  # quoted: the case of the pandas files
    path = tmp_path / "quoted.tsv"
    path.write_text(content, encoding="utf-8")
    own = load_files(path, test=path, text_trees=TextTrees("gold", "right", tokenise=str.split))
    read = [" ".join(tree.tokens) for tree in own.task.splits["test"]]
    assert read == [" ".join(text.split()) for text in texts]
    assert [tree.root_label for tree in own.task.splits["test"]] == [0, 1, 0, 1, 0, 1]
    # and the lines each row starts on, a quoted line break counted
    assert own.files.examples["test"].lines == [2, 3, 4, 5, 7, 8]


def test_pandas_writes_what_the_csv_module_writes(tmp_path):
    pandas = pytest.importorskip(
        "pandas", reason="pandas is not a dependency: the csv module's output, the same, is tested above"
    )
    frame = pandas.DataFrame({"text": ['he said "hi"', "a\ttab"], "label": ["a", "b"]})
    frame.to_csv(tmp_path / "frame.tsv", sep="\t", index=False)
    tokens = [
        tree.tokens
        for tree in load_files(
            tmp_path / "frame.tsv",
            test=tmp_path / "frame.tsv",
            text_trees=TextTrees("gold", "right", tokenise=str.split),
        ).task.splits["test"]
    ]
    assert tokens == [("he", "said", '"hi"'), ("a", "tab")]


def test_a_value_opening_with_a_quote_it_does_not_close_is_named(tmp_path):
    """Quoting is the csv module's: a value that starts with a quote is
    quoted, so an unquoted '"Good" film' is refused with its line and the
    way to write it; a quote inside a value is a character."""
    path = tmp_path / "a.tsv"
    path.write_text('text\tlabel\nhe said "hi"\t1\n"Good" film\t0\n', encoding="utf-8")
    with pytest.raises(
        DataError,
        match=r"a\.tsv:3: not TSV: .*a quote inside it is written "
        r"twice",
    ) as raised:
        load_files(path, text_trees=right())
    assert raised.value.line == 3


# --------------------------------------------------------------------------
# hostile files: refused naming the file and line
# --------------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
CASES = [
    # (file name, content, line, words of the message)
    (
        "a.jsonl",
        '{"score": 1, "sentence_a": "a", "sentence_b": "b"}\n'
        '{"score": %s, "sentence_a": "c", "sentence_b": "d"}\n' % ("9" * 401),
        2,
        "score 99999999999999999999... (401 characters) is not a finite number",
    ),
    ("a.jsonl", '{"text": "a", "label": 1}\n{"text": %s, "label": 1}\n' % DEEP, 2, "JSON nested too deeply to read"),
    ("a.csv", "text,label\na,1\nb,%s\n" % ("7" * 5000), 3, "is past the largest class number"),
    (
        "a.jsonl",
        '{"text": "a", "label": %s}\n' % ("7" * 5000),
        1,
        "a whole number of thousands of digits, too long to read",
    ),
    (
        "a.jsonl",
        '{"score": 1, "sentence_a": "a", "sentence_b": "b"}\n{"score": NaN, "sentence_a": "c", "sentence_b": "d"}\n',
        2,
        "score NaN is not a finite number",
    ),
    (
        "a.jsonl",
        '{"score": 1, "sentence_a": "a", "sentence_b": "b"}\n'
        '{"score": -Infinity, "sentence_a": "c", "sentence_b": "d"}\n',
        2,
        "score -Infinity is not a finite number",
    ),
    (
        "a.jsonl",
        '{"score": 1, "sentence_a": "a", "sentence_b": "b"}\n{"score": null, "sentence_a": "c", "sentence_b": "d"}\n',
        2,
        "'score' is empty",
    ),
    (
        "a.jsonl",
        '{"score": 1, "sentence_a": "a", "sentence_b": "b"}\n{"score": 1e308, "sentence_a": "c", "sentence_b": "d"}\n',
        2,
        "score 1e+308 makes the range [1, 1e+308], too wide to compute with",
    ),
    ("a.csv", "score,sentence_a,sentence_b\n-1e308,a,b\n3,c,d\n", 2, "score -1e+308 makes the range [-1e+308, 3]"),
    ("a.csv", b"text,label\na film\x00,1\nb,0\n", 2, "a control character, U+0000, at character 7"),
    ("a.tsv", b"text\tlabel\ngood\t1\nan \x1b[31mescape\t0\n", 3, "a control character, U+001B, at character 4"),
    ("a.txt", b"(3 (2 a) (3 fi\x00lm))\n", 1, "a control character, U+0000"),
    ("a.csv", "text\tlabel\na film\t1\n", 1, "a .csv file whose header row is separated by tabs"),
    ("a.tsv", "text,label\na film,1\n", 1, "a .tsv file whose header row is separated by commas"),
    ("a.txt", "a fine film, really\nbad, bad\n", 1, "the first line looks like CSV but names none of the columns read"),
    ("a.txt", "a fine film\tyes\n", 1, "the first line looks like TSV but names none"),
]


@pytest.mark.parametrize("name, content, line, message", CASES, ids=[f"{case[0]}-{case[3][:30]}" for case in CASES])
def test_hostile_files_are_named_by_file_and_line(tmp_path, name, content, line, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as raised:
        load_files(path, dev=path, text_trees=right())
    assert raised.value.path == str(path) and raised.value.line == line, str(raised.value)
    assert message in str(raised.value)


def test_nul_bytes_are_not_taken_for_utf16(tmp_path):
    """A stray NUL is a control character at its line; UTF-16 is still UTF-16."""
    stray = tmp_path / "stray.csv"
    stray.write_bytes(b"text,label\na\x00b\x00c\x00d,1\n")
    with pytest.raises(DataError, match=r"stray\.csv:2: a control character, U\+0000"):
        load_files(stray, dev=stray, text_trees=right())
    wide = tmp_path / "wide.csv"
    wide.write_bytes("text,label\na film,1\nbad,0\n".encode("utf-16-le"))
    with pytest.raises(DataError, match=r"wide\.csv: UTF-16 text"):
        load_files(wide, dev=wide, text_trees=right())


def test_compressed_files_say_what_they_are(tmp_path):
    path = tmp_path / "train.csv"
    path.write_bytes(gzip.compress(b"text,label\na,1\nb,0\n"))
    with pytest.raises(
        DataError,
        match=r"train\.csv: not text but gzip-compressed: "
        r"decompress it first",
    ):
        load_files(path, text_trees=right())


def test_a_field_of_200000_characters_reads_in_every_format(tmp_path):
    long = "x" * 200_000
    for name, content in [
        ("a.csv", f"text,label\n{long},1\nb,0\n"),
        ("a.tsv", f"text\tlabel\n{long}\t1\nb\t0\n"),
        ("a.jsonl", f'{{"text": "{long}", "label": 1}}\n{{"text": "b", "label": 0}}\n'),
    ]:
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        own = load_files(path, dev=path, text_trees=right())
        assert own.task.splits["dev"][0].tokens == (long,)
    assert csv.field_size_limit() == 131072  # the csv module's limit left as it was


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_a_directory_a_fifo_or_a_device_as_the_training_file(tmp_path, capsys, kind):
    if kind == "directory":
        path, what = tmp_path / "data", "a directory, not a file"
        path.mkdir()
    elif kind == "fifo":
        path, what = tmp_path / "train.csv", "a FIFO (named pipe), not a file"
        os.mkfifo(path)
    else:
        path, what = "/dev/null", "a device, not a file"
    assert main(["train", "--train", str(path), "--tree", "right", "--quiet", "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert f"npcomp train: error: {path}: {what}" in error and "Traceback" not in error
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------
# the estimators: NaN, inf, None and empty inputs; parameters, not flags
# --------------------------------------------------------------------------

PAIRS = [("a dog runs", "a dog"), ("the cat", "a cat sleeps"), ("x y", "y"), ("p", "q r")]


@pytest.fixture(scope="module")
def fitted():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        classifier = TreeClassifier(**TINY).fit(
            ["good film", "bad film", "fine", "awful"] * 3, ["pos", "neg", "pos", "neg"] * 3
        )
        regressor = PairRegressor(vectors="random", **TINY).fit(PAIRS * 3, [1, 2, 4, 5] * 3)
    return classifier, regressor


def test_empty_inputs_are_refused(fitted):
    classifier, regressor = fitted
    for call in (
        lambda: classifier.score([], []),
        lambda: classifier.predict([]),
        lambda: classifier.predict_proba([]),
    ):
        with pytest.raises(ValueError, match="X holds no sentences"):
            call()
    for call in (lambda: regressor.score([], []), lambda: regressor.predict([])):
        with pytest.raises(ValueError, match="X holds no sentence pairs"):
            call()
    with pytest.raises(ValueError, match="non-empty"):
        TreeClassifier(**TINY).fit([], [])


@pytest.mark.parametrize("bad", [math.nan, math.inf, None, "high", True])
def test_a_score_that_is_no_finite_number_is_named_with_the_scale(fitted, bad):
    _, regressor = fitted
    with pytest.raises(
        ValueError,
        match=rf"y\[2\] is {bad!r}: a score is a finite number on "
        r"the scale \[1, 5\]".replace("(", r"\("),
    ):
        regressor.score(PAIRS, [1, 2, bad, 4])
    with pytest.raises(
        ValueError,
        match=r"y\[2\] is .*: a score is a finite number on the "
        r"scale \[0, 10\]",
    ):
        PairRegressor(vectors="random", score_range=(0, 10), **TINY).fit(PAIRS, [1, 2, bad, 4])
    with pytest.raises(
        ValueError,
        match=r"y\[2\] is .*: a score is a finite number \(the "
        r"scale is the training scores'",
    ):
        PairRegressor(vectors="random", **TINY).fit(PAIRS, [1, 2, bad, 4])


def test_huge_scores_and_labels_are_named(fitted):
    with pytest.raises(
        DataError,
        match=r"y\[3\]: score -1e\+308 makes the range "
        r"\[-1e\+308, 2\], too wide.*score_range=\(lo, hi\)",
    ):
        PairRegressor(vectors="random", **TINY).fit(PAIRS, [1, 2, 1, -1e308])
    with pytest.raises(ConfigError, match="too wide") as raised:
        PairRegressor(vectors="random", score_range=(-1e308, 1e308), **TINY).fit(PAIRS, [1, 2, 3, 4])
    assert raised.value.option == "score_range"
    for bad in (math.nan, 2.5, None):
        with pytest.raises(ValueError, match=rf"y\[1\] is {bad!r}, not a class label"):
            TreeClassifier(**TINY).fit(["a", "b", "c"], [0, bad, 1])


def test_errors_name_the_parameter_in_python_and_the_flag_on_the_command_line(fitted):
    _, regressor = fitted
    with pytest.raises(DataError) as raised:
        PairRegressor(vectors="random", score_range=(1, 5), **TINY).fit(PAIRS, [1, 2, 9, 4])
    assert str(raised.value).startswith("y[2]: score 9 outside the range given, [1, 5]")
    assert str(raised.value).endswith("(score_range=(lo, hi))")
    assert "--" not in str(raised.value)
    assert raised.value.message(flag).endswith("(--score-range LO,HI)")
    with pytest.raises(DataError) as raised:
        PairRegressor(vectors="random", **TINY).fit(PAIRS, [2, 2, 2, 2])
    assert "give it (score_range=(lo, hi))" in str(raised.value)


def test_the_command_line_still_names_its_flags(tmp_path, capsys):
    train = tmp_path / "pairs.csv"
    train.write_text("score,sentence_a,sentence_b\n1,a,b\n3,c,d\n9,e,f\n", encoding="utf-8")
    assert (
        main(
            [
                "train",
                "--train",
                str(train),
                "--score-range",
                "1,5",
                "--tree",
                "right",
                "--vectors",
                "random",
                "--quiet",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert error.rstrip().endswith("give a range that holds it (--score-range LO,HI)"), error
    assert f"{train}:4: score 9 outside the range given, [1, 5]" in error
    one = tmp_path / "one.txt"  # one example, labelled with two classes at its nodes
    one.write_text("(1 (0 a) (1 b))\n", encoding="utf-8")
    assert main(["train", "--train", str(one), "--tree", "right", "--quiet", "--out", str(tmp_path / "run-1")]) == 2
    assert "give a dev file (--dev)" in capsys.readouterr().err
    with pytest.raises(DataError, match=r"give a dev file \(dev=FILE\)"):
        load_files(one, text_trees=right())
