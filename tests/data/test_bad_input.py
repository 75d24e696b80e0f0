"""Bad input of every kind a user may give refused with a message naming the
file and line (or the flag or argument), exit status 2, and nothing written:
a labelled line whose words lack brackets, vector files separated by tabs or
in Latin-1, vectors of another dimension than the options ask, labels
outside a model's classes, an empty TREE, TABLE left out, an --out that is
a file.  (A --scheduler that is no Dask scheduler: test_sweep_faults.py.)"""

import io
import json
import sys

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
from npcomp.cli import main
from npcomp.data.readers.vectors import read_vectors
from npcomp.data.readers.ptb import parse_ptb
from npcomp.errors import DataError
from conftest import replace_line, synthetic_of_size, synthetic_sst_files

TINY = ["--dim", "4", "--embedding-dim", "4", "--epochs", "1", "--quiet", "--no-baseline"]


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((40, 20, 20)))


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory):
    """A tiny trained treelstm-nary run on synthetic (5 classes)."""
    run_dir = tmp_path_factory.mktemp("bad-input") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((40, 20, 20)))
        assert main(["train", *TINY, "--out", str(run_dir)]) == 0
    return run_dir


def refused(capsys, argv, *named) -> str:
    """Run ``argv``: exit status 2, one line on stderr naming each of ``named``."""
    status = main(argv)
    error = capsys.readouterr().err
    assert status == 2, error
    assert "Traceback" not in error and error.count("\n") == 1, error
    for text in named:
        assert text in error, error
    return error


def predict(capsys, monkeypatch, run_dir, text: str, *named) -> str:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    # right-branching trees for plain sentences: the lines before a bad one are
    # labelled, without the message of a parse that falls back for want of spaCy
    return refused(capsys, ["predict", "--run", str(run_dir), "--tree", "right"], *named)


# --------------------------------------------------------------------------
# trees: a leaf holds one word; labels among the model's classes
# --------------------------------------------------------------------------


def test_a_labelled_line_without_word_brackets_is_refused_in_a_treebank(tmp_path, capsys):
    data_dir = synthetic_sst_files(tmp_path / "data", (40, 20, 20))
    train = replace_line(data_dir / "sst" / "train.txt", 6, "(3 a good film)")
    refused(
        capsys,
        ["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")],
        f"{train}:7: words 'a' and 'good' in one leaf",
    )
    assert not (tmp_path / "run").exists()


def test_a_labelled_line_without_word_brackets_is_refused_by_predict(synthetic_run, capsys, monkeypatch):
    predict(
        capsys,
        monkeypatch,
        synthetic_run,
        "a good film\n(3 a good film)\n",
        "<stdin>:2: words 'a' and 'good' in one leaf",
    )


def test_a_word_with_a_no_break_space_is_one_token_and_reads_back():
    """The SST writes a few tokens with a no-break space inside: (2 8\\xa01\\/2)."""
    tree = parse_ptb("(3 (2 It) (3 (2 8\xa01\\/2) (2 hours)))")
    assert tree.tokens == ("It", "8 1\\/2", "hours")
    again = parse_ptb(tree.to_ptb())
    assert again.tokens == tree.tokens and np.array_equal(again.parent, tree.parent)
    with pytest.raises(DataError, match="in one leaf"):
        parse_ptb(tree.to_ptb().replace("\xa0", " "))


@pytest.mark.parametrize(
    "task, tree, label, classes",
    [
        ("sst5", "(7 (2 a) (2 b))", 7, "0..4"),
        ("sst2", "(1 (1 a) (3 b))", 3, "0..1"),
    ],
)
def test_explain_refuses_a_label_outside_the_models_classes(capsys, task, tree, label, classes):
    refused(
        capsys,
        ["explain", "--model", "treelstm-nary", "--task", task, tree],
        f"TREE:1: label {label} out of range {classes}",
    )


def test_predict_refuses_a_label_outside_the_runs_classes(synthetic_run, capsys, monkeypatch):
    predict(
        capsys, monkeypatch, synthetic_run, "(2 (2 a) (2 b))\n(9 (2 a) (2 b))\n", "<stdin>:2: label 9 out of range 0..4"
    )


def test_explain_of_a_run_refuses_a_label_outside_its_classes(synthetic_run, capsys):
    refused(capsys, ["explain", "--run", str(synthetic_run), "(5 (2 a) (2 b))"], "TREE:1: label 5 out of range 0..4")


@pytest.mark.parametrize("tree", ["", "   ", "\t"])
def test_explain_refuses_an_empty_tree(capsys, tree):
    refused(capsys, ["explain", "--model", "treelstm-nary", tree], "TREE: nothing to explain")


def test_explain_names_the_line_of_a_file_after_blank_lines(tmp_path, capsys):
    trees = tmp_path / "trees.txt"
    trees.write_text("\n(2 (2 a) (2 b))\n\n(2 (2 a) (8 b))\n")
    refused(capsys, ["explain", "--model", "treelstm-nary", str(trees)], f"{trees}:4: label 8 out of range 0..4")
    trees.write_text("\n\n")
    refused(capsys, ["explain", "--model", "treelstm-nary", str(trees)], f"{trees}: nothing to explain")


# --------------------------------------------------------------------------
# vector files: tabs, another encoding, another dimension
# --------------------------------------------------------------------------


def test_tabs_separate_the_fields_of_a_vector_file(tmp_path):
    spaced, tabbed = tmp_path / "spaced.txt", tmp_path / "tabbed.txt"
    spaced.write_text("the 0.1 0.2 0.3 0.4\nfilm -1 2 3 4.5\n")
    tabbed.write_text("the\t0.1\t0.2\t0.3\t0.4\nfilm\t-1 2\t3\t 4.5\t\n")
    expected, found = read_vectors(spaced), read_vectors(tabbed)
    assert found.words == expected.words == ["the", "film"]
    np.testing.assert_array_equal(found.vectors, expected.vectors)


def test_a_latin1_vector_file_is_named_as_text_in_another_encoding(tmp_path, capsys):
    vectors = tmp_path / "latin1.txt"
    vectors.write_bytes("the 0.1 0.2 0.3 0.4\ncafé 1 2 3 4\n".encode("latin-1"))
    with pytest.raises(DataError) as caught:
        read_vectors(vectors)
    message = str(caught.value)
    assert message.startswith(f"{vectors}:2: byte 0xe9 at column 4 is not UTF-8")
    assert "another encoding" in message and "iconv" in message
    assert "binary" not in message
    refused(
        capsys,
        ["train", *TINY[2:], "--vectors", str(vectors), "--out", str(tmp_path / "run")],
        f"{vectors}:2",
        "another encoding",
    )
    assert not (tmp_path / "run").exists()


def test_binary_bytes_without_a_header_are_named_as_such(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_bytes(b"the " + np.array([0.5, -2.0, 1e-30], dtype="<f4").tobytes() + b"\xff\n")
    with pytest.raises(DataError, match="binary data .*word2vec binary file"):
        read_vectors(vectors)


@pytest.mark.parametrize(
    "model, option, given",
    [
        ("treelstm-nary", "--embedding-dim", "50"),  # its leaves take the vectors through W
        ("rntn", "--dim", "50"),  # its leaf states are the word vectors
        ("rntn", "--embedding-dim", "50"),
    ],
)
def test_vectors_of_another_dimension_than_asked_are_refused(tmp_path, capsys, model, option, given):
    vectors = tmp_path / "v4.txt"
    vectors.write_text("the 0.1 0.2 0.3 0.4\nfilm 1 2 3 4\n")
    out = tmp_path / "run"
    refused(
        capsys,
        [
            "train",
            "--model",
            model,
            "--epochs",
            "1",
            "--quiet",
            "--no-baseline",
            option,
            given,
            "--vectors",
            str(vectors),
            "--out",
            str(out),
        ],
        f"{option}: {given}, but the vectors {vectors} have dimension 4",
        f"leave {option} out",
    )
    assert not out.exists()


def test_vectors_set_the_dimension_when_none_is_asked(tmp_path, capsys):
    vectors = tmp_path / "v4.txt"
    vectors.write_text("the 0.1 0.2 0.3 0.4\nfilm 1 2 3 4\n")
    for model in ("treelstm-nary", "rntn"):
        out = tmp_path / model
        assert (
            main(
                [
                    "train",
                    "--model",
                    model,
                    "--epochs",
                    "1",
                    "--quiet",
                    "--no-baseline",
                    "--vectors",
                    str(vectors),
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        config = json.loads((out / "metrics.json").read_text())["config"]
        assert config["embedding_dim"] == 4
        assert config["dim"] == (4 if model == "rntn" else 50)


# --------------------------------------------------------------------------
# arguments named as the command line names them; --out a file
# --------------------------------------------------------------------------


def test_reproduce_without_a_table_names_the_argument(capsys):
    error = refused(capsys, ["reproduce"], "TABLE: name a table")
    assert "--table" not in error


@pytest.mark.parametrize("command", [["parse"], ["reproduce", "tai-sst"], ["plot", "RUN"]])
def test_an_out_that_is_a_file_is_refused_untouched(tmp_path, capsys, command, synthetic_run):
    out = tmp_path / "afile"
    out.write_text("kept\n")
    argv = [str(synthetic_run) if word == "RUN" else word for word in command]
    refused(capsys, [*argv, "--out", str(out)], f"--out: {out} is a file")
    refused(capsys, [*argv, "--out", str(out / "below")], f"--out: {out / 'below'} lies under the file {out}")
    assert out.read_text() == "kept\n" and sorted(tmp_path.iterdir()) == [out]
