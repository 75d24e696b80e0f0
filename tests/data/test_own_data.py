"""A user's own labelled files: treebanks, CSV, TSV and JSON lines read into
the tasks the built-in ones are; the class list, the score range, the dev
split and the folds; and a file:line message for each kind of bad input.

The first tests write the real SST and SICK out in these formats and read
them back (the ``data_dir`` fixture; they skip without the data); the rest
use small files written in ``tmp_path``.  Trees of plain text are right-
branching or chains here (``TextTrees``), which needs no parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npcomp.data.datasets.data_splits import dev_split, fold_indices, fold_split
from npcomp.errors import ConfigError, DataError
from npcomp.data.readers.formats import UNLABELLED, branching_tree
from npcomp.data.datasets.labelled_tables import detect_format
from npcomp.data.datasets.own_data import load_files, read_files, read_labelled_file, split_files
from npcomp.data.readers.parents import parents_to_tree, read_parents
from npcomp.data.datasets.score_scale import from_ratings, rating_classes, to_ratings
from npcomp.data.datasets.tasks import load_task
from npcomp.data.text.text_trees import TextTrees

SST_NAMES = ("very negative", "negative", "neutral", "positive", "very positive")
SPLITS = ("train", "dev", "test")


def right(**options) -> TextTrees:
    """Right-branching trees of plain text (no parser needed)."""
    return TextTrees("gold", "right", **options)


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def same_tree(a, b) -> bool:
    return (
        a.tokens == b.tokens
        and np.array_equal(a.parent, b.parent)
        and np.array_equal(a.token_index, b.token_index)
        and np.array_equal(a.label, b.label)
    )


# --------------------------------------------------------------------------
# the real SST and SICK, written out and read back
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sst(data_dir):
    return load_task("sst5", data_dir)


def test_the_sst_as_treebank_files_reads_back_to_the_sst5_task(sst, data_dir, tmp_path):
    paths = {
        split: write(tmp_path / f"{split}.trees", (data_dir / "sst" / f"{split}.txt").read_bytes()) for split in SPLITS
    }
    own = load_files(paths["train"], paths["dev"], paths["test"], text_trees=TextTrees("gold"))
    assert own.task.n_classes == sst.n_classes == 5
    for split in SPLITS:
        read, gold = own.task.splits[split], sst.splits[split]
        assert len(read) == len(gold)
        assert all(same_tree(a, b) for a, b in zip(read, gold)), split
    record = own.record()
    assert record["classes"] == ["0", "1", "2", "3", "4"]
    assert record["class_order"] == "numbers"
    assert record["dev"] == {"from": "file"}
    assert record["trees"]["made"] == {"given": sum(len(sst.splits[s]) for s in SPLITS)}
    assert {role: file["format"] for role, file in record["files"].items()} == {
        "train": "ptb",
        "dev": "ptb",
        "test": "ptb",
    }


def words(tree) -> list:
    """A tree's words as plain text splits them (a few SST words hold a space)."""
    return [word for token in tree.tokens for word in token.split()]


def test_the_sst_as_tsv_of_text_and_class_names(sst, tmp_path):
    paths = {}
    for split in SPLITS:
        rows = [f"{' '.join(tree.tokens)}\t{SST_NAMES[tree.root_label]}\n" for tree in sst.splits[split]]
        paths[split] = write(tmp_path / f"{split}.tsv", "text\tlabel\n" + "".join(rows))
    own = load_files(
        paths["train"], paths["dev"], paths["test"], classes=SST_NAMES, text_trees=right(tokenise=str.split)
    )
    assert own.record()["classes"] == list(SST_NAMES)
    assert own.record()["class_order"] == "given"
    for split in SPLITS:
        read, gold = own.task.splits[split], sst.splits[split]
        assert [tree.root_label for tree in read] == [tree.root_label for tree in gold]
        assert [list(tree.tokens) for tree in read] == [words(tree) for tree in gold]
        # the root alone is labelled: the text says nothing of the phrases
        assert all(np.sum(tree.label != UNLABELLED) == 1 for tree in read)
        assert all(same_tree(tree, branching_tree(tree.tokens, "right", tree.root_label)) for tree in read[:50])


def test_the_sst_as_json_lines_gets_its_class_names_sorted(sst, tmp_path):
    paths = {}
    for split in ("dev", "test"):
        lines = [
            json.dumps({"sentence": " ".join(tree.tokens), "label": SST_NAMES[tree.root_label]}) + "\n"
            for tree in sst.splits[split]
        ]
        paths[split] = write(tmp_path / f"{split}.jsonl", "".join(lines))
    own = load_files(paths["dev"], test=paths["test"], seed=3, text_trees=TextTrees("chain", tokenise=str.split))
    names = own.record()["classes"]
    assert names == sorted(SST_NAMES) and own.record()["class_order"] == "sorted"
    read = own.task.splits["train"] + own.task.splits["dev"]
    gold = {tuple(words(tree)): SST_NAMES[tree.root_label] for tree in sst.splits["dev"]}
    assert len(read) == len(sst.splits["dev"])
    assert all(names[tree.root_label] == gold[tree.tokens] for tree in read)
    test = own.task.splits["test"]
    assert [names[tree.root_label] for tree in test] == [SST_NAMES[tree.root_label] for tree in sst.splits["test"]]
    assert [list(tree.tokens) for tree in test] == [words(tree) for tree in sst.splits["test"]]
    chain = test[0]  # a sequence model's chain, labelled at its last word
    assert list(chain.parent[:-1]) == list(range(1, chain.n_nodes))
    assert np.flatnonzero(chain.label != UNLABELLED).tolist() == [chain.n_nodes - 1]


def test_sick_as_tsv_of_scores_and_sentences(data_dir, tmp_path):
    splits = ("dev", "test")  # SICK's training split is more of the same
    sick = load_task("sick", data_dir, structure="dependency", splits=splits)
    paths = {}
    for split in splits:
        directory = data_dir / "sick" / split
        columns = [
            (directory / name).read_text(encoding="utf-8").splitlines()
            for name in ("sim.txt", "a.toks", "b.toks", "id.txt")
        ]
        heads = [[" ".join(map(str, line)) for line in read_parents(directory / f"{side}.parents")] for side in "ab"]
        rows = ["\t".join(fields) + "\n" for fields in zip(*columns, *heads)]
        paths[split] = write(
            tmp_path / f"{split}.tsv", "score\tsentence_a\tsentence_b\tid\tparents_a\tparents_b\n" + "".join(rows)
        )
    own = load_files(paths["dev"], paths["dev"], paths["test"], text_trees=TextTrees("dependency"))
    assert own.record()["score_range"] == [1.0, 5.0]
    assert own.record()["score_range_from"] == "train"
    assert own.task.n_classes == 5
    for split in splits:
        read, gold = own.task.splits[split], sick.splits[split]
        assert [pair.score for pair in read] == [pair.score for pair in gold]
        assert [pair.pair_id for pair in read] == [pair.pair_id for pair in gold]
        assert all(same_tree(a.tree_a, b.tree_a) and same_tree(a.tree_b, b.tree_b) for a, b in zip(read, gold)), split
    # without the parents columns, a sequence model reads the words as chains
    plain = write(
        tmp_path / "plain.csv",
        "score,sentence_a,sentence_b\n"
        + "".join(
            f'{pair.score},"{" ".join(pair.tree_a.tokens)}","{" ".join(pair.tree_b.tokens)}"\n'
            for pair in sick.splits["dev"]
        ),
    )
    chains = load_files(plain, score_range=(1, 5), text_trees=TextTrees("chain", tokenise=str.split))
    read = chains.task.splits["train"] + chains.task.splits["dev"]
    assert sorted(pair.pair_id.rpartition(":")[2] for pair in read) == sorted(
        str(line) for line in range(2, len(sick.splits["dev"]) + 2)
    )
    assert sorted((pair.score, pair.tree_a.tokens) for pair in read) == sorted(
        (pair.score, pair.tree_a.tokens) for pair in sick.splits["dev"]
    )


# --------------------------------------------------------------------------
# formats, columns and trees
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, first, expected",
    [
        ("a.txt", "(3 (2 a) (3 film))", "ptb"),
        ("a.trees", "(3 (2 a) (3 film))", "ptb"),
        ("a.txt", '{"text": "a", "label": 1}', "jsonl"),
        ("a.json", '{"text": "a", "label": 1}', "jsonl"),
        ("a.txt", "text\tlabel", "tsv"),
        ("a.txt", "text,label", "csv"),
        ("a.tsv", "text", "tsv"),
        ("a.CSV", "text;label", "csv"),
    ],
)
def test_the_format_comes_from_the_extension_and_the_first_line(name, first, expected):
    assert detect_format(Path(name), ["", first]) == expected


def test_csv_values_quoted_with_commas_quotes_and_line_breaks(tmp_path):
    path = write(
        tmp_path / "a.csv",
        "id,text,label\n"
        '1,"Funny, and sad",pos\n'
        "\n"
        '2,"He said ""no"" twice",neg\n'
        '3,"two\nlines",pos\n'
        "4,plain words,neg\n",
    )
    own = load_files(path, test=path, text_trees=right(tokenise=str.split))
    test = own.task.splits["test"]
    assert [tree.tokens for tree in test] == [
        ("Funny,", "and", "sad"),
        ("He", "said", '"no"', "twice"),
        ("two", "lines"),
        ("plain", "words"),
    ]
    assert [tree.source for tree in test] == [f"{path}:{line}" for line in (2, 4, 5, 7)]
    assert [own.files.classes.names[tree.root_label] for tree in test] == ["pos", "neg", "pos", "neg"]


def test_plain_text_is_tokenised_as_the_sst_is(tmp_path):
    path = write(tmp_path / "a.tsv", 'text\tlabel\nI don\'t like "it" (much).\t0\n(Spoilers) a fine film\t1\n')
    trees = load_files(path, test=path, text_trees=right()).task.splits["test"]
    assert trees[0].tokens == ("I", "do", "n't", "like", "``", "it", "''", "-LRB-", "much", "-RRB-", ".")
    assert trees[1].tokens[:3] == ("-LRB-", "Spoilers", "-RRB-")  # text, not a tree


def test_integer_labels_are_class_numbers(tmp_path):
    train = write(
        tmp_path / "train.jsonl",
        "".join(
            json.dumps({"text": f"word{i}", "label": label}) + "\n" for i, label in enumerate([0, 3, "1", 3, 0, 1])
        ),
    )
    own = load_files(train, dev=train, text_trees=right())
    assert own.task.n_classes == 4
    assert own.record()["classes"] == ["0", "1", "2", "3"]
    assert [tree.root_label for tree in own.task.splits["dev"]] == [0, 3, 1, 3, 0, 1]
    # numbers with names given: class k is the k-th name
    named = load_files(train, dev=train, classes=["none", "low", "mid", "high"], text_trees=right())
    assert [tree.root_label for tree in named.task.splits["dev"]] == [0, 3, 1, 3, 0, 1]
    assert named.record()["classes"] == ["none", "low", "mid", "high"]


def test_given_classes_set_the_order_and_names_sort_numerically(tmp_path):
    rows = "".join(f"w{i}\t{label}\n" for i, label in enumerate(["bad", "good", "ok", "bad"]))
    path = write(tmp_path / "a.tsv", "text\tlabel\n" + rows)
    given = load_files(path, dev=path, classes=["bad", "ok", "good"], text_trees=right())
    assert [tree.root_label for tree in given.task.splits["dev"]] == [0, 2, 1, 0]
    signed = write(
        tmp_path / "b.tsv",
        "text\tlabel\n" + "".join(f"w{i}\t{label}\n" for i, label in enumerate(["-2", "10", "-1", "2", "0"])),
    )
    own = load_files(signed, dev=signed, text_trees=right())
    assert own.record()["classes"] == ["-2", "-1", "0", "2", "10"]
    assert own.record()["class_order"] == "sorted"


def test_a_tree_column_keeps_its_brackets_and_phrase_labels(tmp_path):
    path = write(
        tmp_path / "a.tsv",
        "text\ttree\tlabel\n"
        "a fine film\t(X (X a) (2 (X fine) (X film)))\tpositive\n"
        "\t(X (X dull) (X stuff))\tnegative\n"
        "not good\t\tnegative\n",
    )
    own = load_files(path, test=path, classes=["negative", "neutral", "positive"], text_trees=TextTrees("gold"))
    first, second, third = own.task.splits["test"]
    assert first.to_ptb() == "(2 (X a) (2 (X fine) (X film)))"
    assert second.to_ptb() == "(0 (X dull) (X stuff))"
    assert third.tokens == ("not", "good") and third.root_label == 0
    assert own.record()["trees"]["made"]["given"] == 4  # two rows with trees, two files


def test_a_parents_column_is_the_parse(tmp_path):
    path = write(
        tmp_path / "a.jsonl",
        json.dumps({"text": "she saw the film", "parents": [2, 0, 4, 2], "label": "pos"})
        + "\n"
        + json.dumps({"text": "a dull film", "parents": "3 3 0", "label": "neg"})
        + "\n",
    )
    dependency = load_files(path, test=path, text_trees=TextTrees("dependency"))
    tree = dependency.task.splits["test"][0]
    expected = parents_to_tree([2, 0, 4, 2], ["she", "saw", "the", "film"])
    assert same_tree(tree, expected.with_labels(np.where(np.arange(4) == 3, 1, -1)))
    binary = load_files(path, test=path, text_trees=TextTrees("gold"))
    assert binary.task.splits["test"][0].to_ptb() == "(1 (X she) (X (X saw) (X (X the) (X film))))"
    assert binary.record()["trees"]["made"] == {"parents": 4}  # two rows, two files


def test_folds_and_dev_split_through_load_files(tmp_path):
    rows = "".join(f"sentence number{i}\t{i % 3}\n" for i in range(23))
    path = write(tmp_path / "a.tsv", "text\tlabel\n" + rows)
    files = read_files(path, text_trees=right())
    seen = []
    for fold in range(5):
        own = split_files(files, dev_fraction=0.2, seed=7, fold=(fold, 5))
        parts = {split: [tree.source for tree in items] for split, items in own.task.splits.items()}
        assert set(parts) == {"train", "dev", "test"}
        assert sum(map(len, parts.values())) == 23
        assert len(set().union(*parts.values())) == 23  # no example in two splits
        assert len(parts["dev"]) == round(0.2 * (23 - len(parts["test"])))
        seen += parts["test"]
        assert own.record()["fold"] == {"fold": fold, "folds": 5, "seed": 7}
        again = load_files(path, dev_fraction=0.2, seed=7, fold=(fold, 5), text_trees=right())
        assert [t.source for t in again.task.splits["dev"]] == parts["dev"]
    assert sorted(seen) == sorted(f"{path}:{line}" for line in range(2, 25))
    plain = split_files(files, dev_fraction=0.2, seed=7)
    assert plain.record()["dev"] == {"from": "train", "fraction": 0.2, "seed": 7}
    assert "test" not in plain.task.splits and len(plain.task.splits["dev"]) == 5


@settings(max_examples=40, derandomize=True, deadline=None)
@given(n=st.integers(2, 300), fraction=st.floats(0.01, 0.99), seed=st.integers(0, 2**31), n_folds=st.integers(2, 12))
def test_dev_splits_and_folds_are_seeded_partitions(n, fraction, seed, n_folds):
    kept, dev = dev_split(n, fraction, seed)
    assert np.array_equal(np.sort(np.concatenate([kept, dev])), np.arange(n))
    assert len(dev) == min(max(round(fraction * n), 1), n - 1)
    assert all(np.array_equal(a, b) for a, b in zip((kept, dev), dev_split(n, fraction, seed)))
    n_folds = min(n_folds, n)
    folds = fold_indices(n, n_folds, seed)
    assert np.array_equal(np.sort(np.concatenate(folds)), np.arange(n))
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    train, test = fold_split(n, n_folds - 1, n_folds, seed)
    assert np.array_equal(test, folds[-1])
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(n))


def test_another_seed_sets_another_dev_split_aside():
    assert not np.array_equal(dev_split(100, 0.1, 0)[1], dev_split(100, 0.1, 1)[1])


def test_score_ranges_and_ratings(tmp_path):
    path = write(tmp_path / "pairs.csv", "score,sentence_a,sentence_b\n0,a b,c\n5,d,e f\n2.5,g,h\n")
    own = load_files(path, dev=path, text_trees=TextTrees("chain"))
    assert own.files.score_range == (0.0, 5.0) and own.task.n_classes == 6
    assert [pair.score for pair in own.task.splits["dev"]] == [0.0, 5.0, 2.5]
    assert rating_classes((1, 5)) == 5 and rating_classes((0.0, 1.0)) == 2
    assert rating_classes((0, 100)) == 5 and rating_classes((0.5, 4.5)) == 5
    scores = np.array([0.0, 2.5, 5.0])
    assert np.allclose(to_ratings(scores, (0, 5), 6), [1, 3.5, 6])
    assert np.allclose(from_ratings(to_ratings(scores, (0, 5), 5), (0, 5), 5), scores)


def test_the_digest_follows_the_bytes(tmp_path):
    first = write(tmp_path / "a.tsv", "text\tlabel\na\tx\nb\ty\n")
    second = write(tmp_path / "b.tsv", "text\tlabel\na\tx\nb\ty\n")
    one, two = (read_files(path, text_trees=right()) for path in (first, second))
    assert one.digest == two.digest
    write(second, "text\tlabel\na\ty\nb\tx\n")
    assert read_files(second, text_trees=right()).digest != one.digest
    assert read_files(first, dev=first, text_trees=right()).digest != one.digest
    json.dumps(load_files(first, text_trees=right()).record())  # JSON values only


def test_one_more_file_read_with_a_runs_classes(tmp_path):
    path = write(tmp_path / "eval.csv", "text,label\nfine,positive\nbad,negative\nhm,\n")
    trees = read_labelled_file(path, right(), classes=["negative", "positive"], labelled=False)
    assert [tree.root_label for tree in trees] == [1, 0, UNLABELLED]
    with pytest.raises(DataError, match=r"eval\.csv:4: 'label' is empty"):
        read_labelled_file(path, right(), classes=["negative", "positive"])
    with pytest.raises(
        DataError,
        match=r"eval\.csv:2: label 'positive' is not one of the "
        r"classes given \(bad, good\)",
    ):
        read_labelled_file(path, right(), classes=["bad", "good"], labelled=False)


# --------------------------------------------------------------------------
# bad input: file, line and what to do
# --------------------------------------------------------------------------

BAD_INPUTS = [
    # (file name, content, options, line, words of the message)
    ("a.txt", "(3 (2 a) (3 film))\n(3 (2 a) (3 film)\n", {}, 2, "unbalanced"),
    ("a.txt", "(3 (2 a) (3 film))\n(3 (2 a) (X film))\n", {}, 2, "'X' is not an integer"),
    ("a.tsv", "text\tsentiment\na\tpos\n", {}, 1, "no 'label' column: the header has text, sentiment"),
    ("a.csv", "words,label\na,pos\n", {}, 1, "expected a text column (text or sentence)"),
    (
        "a.jsonl",
        '{"text": "a", "label": "x"}\n{"txt": "b", "label": "y"}\n',
        {},
        2,
        "no sentence: 'text' is empty or missing (the object's keys are txt, label)",
    ),
    ("a.jsonl", '{"text": "a", "label": "x"}\n{"text": "b"}\n', {}, 2, "no 'label': the object's keys are text"),
    (
        "a.tsv",
        "text\tlabel\na\tpos\nb\tneutrl\n",
        {"classes": ["neg", "neutral", "pos"]},
        3,
        "label 'neutrl' is not one of the classes given (neg, neutral, pos)",
    ),
    ("a.tsv", "text\tlabel\na\t1\nb\t5\n", {"classes": ["neg", "pos"]}, 3, "the 2 classes given number 0..1"),
    ("a.txt", "(1 (0 a) (1 b))\n(7 (0 a) (1 b))\n", {"classes": ["neg", "pos"]}, 2, "label 7 out of range 0..1"),
    ("a.tsv", "text\tlabel\n", {}, None, "no rows under the header"),
    ("a.tsv", "\n\n", {}, None, "the file is empty"),
    (
        "a.csv",
        "score,sentence_a,sentence_b\n2,a,b\n7,c,d\n",
        {"score_range": (1, 5)},
        3,
        "score 7 outside the range given, [1, 5]",
    ),
    ("a.csv", "score,sentence_a,sentence_b\n2,a,b\nhigh,c,d\n", {}, 3, "score 'high' is not a number"),
    ("a.csv", "score,sentence_a,sentence_b\n2,a,b\n2,c,d\n", {}, None, "every score is 2"),
    (
        "a.csv",
        "score,label,sentence_a,sentence_b\n2,x,a,b\n",
        {},
        1,
        "both a 'score' and a 'label' column: a file of sentence pairs has 'score' (relatedness",
    ),
    (
        "a.csv",
        "sentence_a,sentence_b\na,b\n",
        {},
        1,
        "no 'score' or 'label' column: a file of sentence pairs has 'score' (relatedness) or 'label' (a class",
    ),
    (
        "a.jsonl",
        '{"sentence_a": "a", "sentence_b": "b", "label": "x"}\n{"sentence_a": "c", "sentence_b": "d"}\n',
        {},
        2,
        "no 'label': the object's keys are",
    ),
    (
        "a.tsv",
        "label\tsentence_a\tsentence_b\nyes\ta\tb\nmaybe\tc\td\n",
        {"classes": ["yes", "no"]},
        3,
        "label 'maybe' is not one of the classes given (yes, no)",
    ),
    ("a.tsv", "text\ttree\tlabel\na b\t(X (X a) (X b)\t1\n", {}, 2, "unbalanced"),
    (
        "a.tsv",
        "text\ttree\tlabel\na b\t(X (X a) (X c))\t1\n",
        {},
        2,
        "the words of 'tree' (a c) are not those of 'text' (a b)",
    ),
    ("a.tsv", "text\tparents\tlabel\na b\t2 0 2\t1\n", {}, 2, "3 head(s) for 2 word(s)"),
    ("a.tsv", "text\tparents\tlabel\na b\t2 1\t1\n", {}, 2, "no root"),
    ("a.tsv", "text\tparents\tlabel\na b\t2 x\t1\n", {}, 2, "'x' is not an integer"),
    ("a.tsv", "text\tlabel\na\t1\nb\t1\textra\n", {}, 3, "3 field(s), but the header has 2"),
    ("a.csv", "text,label\na,1\nb, c,1\n", {}, 3, "quote a value that holds a comma"),
    ("a.csv", 'text,label\n"a"b,1\n', {}, 2, "not CSV"),
    ("a.tsv", b"text\tlabel\ncaf\xe9\t1\n", {}, 2, "is not UTF-8 text"),
    ("a.jsonl", '{"text": "a", "label": 1}\n{"text": "b", "label": 1,}\n', {}, 2, "not JSON"),
    ("a.jsonl", '{"text": "a", "label": 1}\n["b", 1]\n', {}, 2, "a JSON list, not an object"),
    ("a.json", '[{"text": "a", "label": 1}]\n', {}, 1, "a JSON array"),
    ("a.jsonl", '{"text": "a", "label": 2.5}\n', {}, 1, "a label is a class name or a whole"),
    ("a.jsonl", "text,label\na,1\n", {}, 1, "a .jsonl file should start with a JSON object"),
    ("a.dat", "some words\n", {}, 1, "cannot tell the format"),
]


@pytest.mark.parametrize(
    "name, content, options, line, message", BAD_INPUTS, ids=[f"{entry[0]}-{entry[4][:24]}" for entry in BAD_INPUTS]
)
def test_bad_input_is_named_by_file_and_line(tmp_path, name, content, options, line, message):
    path = write(tmp_path / name, content)
    with pytest.raises(DataError) as caught:
        load_files(path, dev=path, text_trees=right(), **options)
    assert caught.value.path == str(path)
    assert caught.value.line == line
    assert message in caught.value.reason


def test_labelled_pairs_read_with_their_classes(tmp_path):
    """A file of sentence pairs with a label column: pairs of classes, the
    names sorted or given, the task of classified pairs; its dev file too."""
    train = write(
        tmp_path / "train.csv",
        "sentence_a,sentence_b,label\n"
        "a man sleeps,a man rests,ENTAILMENT\n"
        "a dog runs,a cat eats,NEUTRAL\n"
        "a man sleeps,nobody sleeps,CONTRADICTION\n"
        "a dog runs,a dog moves,ENTAILMENT\n",
    )
    dev = write(
        tmp_path / "dev.jsonl",
        '{"sentence_a": "a cat", "sentence_b": "no cat", "label": "CONTRADICTION", "id": "p7"}\n',
    )
    own = load_files(train, dev=dev, text_trees=right())
    assert own.task.name == "file-pair-labels" and own.files.kind == "pair-labels"
    assert own.task.class_names == ("CONTRADICTION", "ENTAILMENT", "NEUTRAL")
    assert own.task.n_classes == 3 and own.task.score_scale is None
    assert [pair.label for pair in own.task.splits["train"]] == [1, 2, 0, 1]
    assert list(own.task.splits["train"][2].tree_b.tokens) == ["nobody", "sleeps"]
    (pair,) = own.task.splits["dev"]
    assert (pair.label, pair.pair_id) == (0, "p7")
    record = own.record()
    assert record["kind"] == "pair-labels" and record["score_range"] is None
    given = load_files(train, dev=dev, text_trees=right(), classes=["NEUTRAL", "ENTAILMENT", "CONTRADICTION"])
    assert [pair.label for pair in given.task.splits["train"]] == [1, 0, 2, 1]
    with pytest.raises(ConfigError, match="score range is for scored sentence pairs"):
        load_files(train, dev=dev, text_trees=right(), score_range=(1, 5))
    scored = write(tmp_path / "scored.csv", "score,sentence_a,sentence_b\n1,a,b\n3,c,d\n")
    with pytest.raises(ConfigError, match="class names are for labelled sentences or pairs"):
        load_files(scored, dev=scored, text_trees=right(), classes=["x", "y"])
    with pytest.raises(
        DataError,
        match=r"scored\.csv: scored sentence pairs, but the training "
        r"file holds labelled sentence pairs",
    ):
        load_files(train, test=scored, text_trees=right())


def test_one_more_file_of_pairs_read_with_a_runs_classes(tmp_path):
    """predict and eval --file: a run's classes name the labels; without a
    label column every pair is unlabelled (-1)."""
    from npcomp.data.datasets.own_data import read_labelled_file

    labelled = write(tmp_path / "more.csv", "sentence_a,sentence_b,label\na,b,no\nc,d,yes\n")
    pairs = read_labelled_file(labelled, right(), classes=["yes", "no"], pairs=True)
    assert [pair.label for pair in pairs] == [1, 0]
    bare = write(tmp_path / "bare.csv", "sentence_a,sentence_b\na,b\n")
    pairs = read_labelled_file(bare, right(), classes=["yes", "no"], pairs=True, labelled=False)
    assert [pair.label for pair in pairs] == [-1]
    with pytest.raises(DataError, match=r"bare\.csv:1: no 'score' or 'label' column"):
        read_labelled_file(bare, right(), classes=["yes", "no"], pairs=True)


def test_bad_input_across_files(tmp_path):
    treebank = write(tmp_path / "train.txt", "(1 (0 a) (1 b))\n(0 (0 a) (0 c))\n")
    names = write(tmp_path / "dev.tsv", "text\tlabel\na b\tpos\n")
    with pytest.raises(
        DataError,
        match=r"dev\.tsv:2: label 'pos' is a name, and the "
        r"treebank files number their classes",
    ):
        load_files(treebank, dev=names, text_trees=right())
    named = load_files(treebank, dev=names, classes=["neg", "pos"], text_trees=right())
    assert named.task.splits["dev"][0].root_label == 1
    pairs = write(tmp_path / "pairs.csv", "score,sentence_a,sentence_b\n3,a,b\n")
    with pytest.raises(
        DataError,
        match=r"pairs\.csv: scored sentence pairs, but the training file "
        r"holds labelled sentences",
    ):
        load_files(treebank, test=pairs, text_trees=right())
    train = write(tmp_path / "train.csv", "score,sentence_a,sentence_b\n1,a,b\n3,c,d\n")
    wide = write(tmp_path / "test.csv", "score,sentence_a,sentence_b\n4,a,b\n")
    with pytest.raises(
        DataError,
        match=r"test\.csv:2: score 4 outside the training file's "
        r"range, \[1, 3\].*score_range=\(lo, hi\)",
    ) as raised:
        load_files(train, test=wide, text_trees=right())
    # the command line names its flag where Python names the parameter
    from npcomp.experiments.failures import flag

    assert raised.value.message(flag).endswith("(--score-range LO,HI)")
    # one tree, labelled with two classes at its nodes
    one = write(tmp_path / "one.txt", "(1 (0 a) (1 b))\n")
    with pytest.raises(DataError, match=r"one\.txt: 1 training example\(s\): too few .*\(dev=FILE\)"):
        load_files(one, text_trees=right())


@pytest.mark.parametrize(
    "options, option",
    [
        ({"classes": ["a"]}, "classes"),
        ({"classes": ["a", "b", "a"]}, "classes"),
        ({"dev_fraction": 1.0}, "dev_fraction"),
        ({"fold": (3, 3)}, "fold"),
        ({"fold": (0, 1)}, "folds"),
        ({"fold": (0, 2), "test": True}, "folds"),
        ({"score_range": (5, 1)}, "score_range"),
    ],
)
def test_options_out_of_range(tmp_path, options, option):
    path = write(tmp_path / "a.tsv", "text\tlabel\na\tx\nb\ty\nc\tx\n")
    if options.pop("test", False):
        options["test"] = path
    with pytest.raises(ConfigError) as caught:
        load_files(path, text_trees=right(), **options)
    assert caught.value.option == option


def test_a_treebank_file_for_a_sequence_model_becomes_chains(tmp_path):
    path = write(tmp_path / "a.txt", "(3 (2 a) (4 (2 very) (4 good)))\n(1 (1 bad) (2 .))\n")
    own = load_files(path, dev=path, text_trees=TextTrees("chain"))
    chains = own.task.splits["dev"]
    assert [chain.tokens for chain in chains] == [("a", "very", "good"), ("bad", ".")]
    assert [chain.label.tolist() for chain in chains] == [[-1, -1, 3], [-1, 1]]
    assert [chain.parent.tolist() for chain in chains] == [[1, 2, -1], [1, -1]]


# --------------------------------------------------------------------------
# docs/DATA.md: its example files read, its Python section runs
# --------------------------------------------------------------------------

DATA_PAGE = Path(__file__).resolve().parents[2] / "docs" / "DATA.md"


def test_the_data_page_examples_read_and_its_python_runs(tmp_path, monkeypatch):
    import doctest
    import re

    examples = re.findall(
        r"^```([\w.]+\.\w+)\n(.*?)^```", DATA_PAGE.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE
    )
    assert {name for name, _ in examples} >= {
        "train.trees",
        "train.tsv",
        "train.csv",
        "train.jsonl",
        "phrases.tsv",
        "pairs.tsv",
    }
    for name, text in examples:
        write(tmp_path / name, text)
    monkeypatch.chdir(tmp_path)
    for name, _ in examples:
        classes = ["negative", "neutral", "positive"] if name == "phrases.tsv" else None
        own = load_files(name, test=name, classes=classes, text_trees=right())
        assert own.record()["files"]["test"]["examples"] >= 2
    result = doctest.testfile(
        str(DATA_PAGE), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted >= 15 and result.failed == 0


def test_a_treebank_label_outside_the_classes_is_refused_whatever_the_trees(tmp_path):
    path = write(tmp_path / "a.trees", "(1 (0 a) (1 b))\n(0 (4 a) (0 c))\n")
    with pytest.raises(DataError, match=r"a\.trees:2: label 4 out of range 0\.\.1"):
        load_files(path, dev=path, classes=["neg", "pos"], text_trees=TextTrees("chain"))
    assert load_files(path, dev=path, text_trees=TextTrees("chain")).task.n_classes == 5


def test_the_caller_checks_that_the_model_composes_the_trees(tmp_path):
    """The hook the trainer uses: a tree the cell cannot compose is named by
    its file and line (here a node of three children for a binary cell)."""
    from npcomp.cells import make_cell
    from npcomp.data.datasets.tasks import task_trees
    from npcomp.training.encoding import check_splits

    path = write(tmp_path / "a.tsv", "text\ttree\tlabel\nfine\t\t1\na b c\t(X (X a) (X b) (X c))\t0\n")
    own = load_files(path, test=path, text_trees=TextTrees("gold", tokenise=str.split))
    check_splits(own.task, make_cell("treelstm-childsum", input_dim=2, hidden_dim=2))
    with pytest.raises(DataError, match=r"a\.tsv:3: "):
        check_splits(own.task, make_cell("treelstm-nary", input_dim=2, hidden_dim=2))
    pairs = write(tmp_path / "p.tsv", "score\tsentence_a\tsentence_b\n1\ta b\tc\n3\td\te f\n")
    own = load_files(pairs, dev=pairs, text_trees=TextTrees("chain"))
    assert [tree.tokens for tree in task_trees(own.task, "dev")] == [("a", "b"), ("c",), ("d",), ("e", "f")]
    check_splits(own.task, make_cell("lstm", input_dim=2, hidden_dim=2))


VALID_FILES = {
    "a.tsv": b"text\ttree\tparents\tlabel\na fine film\t\t\tpos\nnot good\t(X (X not) (0 good))"
    b"\t\tneg\nshe saw it\t\t2 0 2\tpos\n",
    "a.csv": b'id,text,label\n1,"Funny, and ""sad""",pos\n2,dull,neg\n3,"two\nlines",pos\n',
    "a.jsonl": b'{"text": "a fine film", "label": 1}\n{"sentence": "bad", "label": 0}\n'
    b'{"text": "she saw it", "parents": [2, 0, 2], "label": 1}\n',
    "p.tsv": b"score\tsentence_a\tsentence_b\tparents_a\n4.5\ta dog runs\ta dog\t2 3 0\n1\tx\ty z\t1\n2.5\tp q\tr\t\n",
    "a.trees": b"(3 (2 It) (4 (2 's) (4 good)))\n(1 (2 not) (1 (2 very) (1 bad)))\n(2 (2 a) (2 film))\n",
}


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    name=st.sampled_from(sorted(VALID_FILES)),
    edits=st.lists(
        st.tuples(
            st.floats(0, 1, exclude_max=True),
            st.sampled_from(["replace", "insert", "delete"]),
            st.sampled_from(list(b'\t\n\r,"(){}[]:0 -x\xe9\x00')),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_damaged_files_load_or_say_where_they_are_bad(tmp_path_factory, name, edits):
    data = bytearray(VALID_FILES[name])
    for where, operation, byte in edits:
        position = int(where * len(data))
        if operation == "replace" and data:
            data[position] = byte
        elif operation == "insert":
            data.insert(position, byte)
        elif data:
            del data[position]
    path = write(tmp_path_factory.mktemp("damaged") / name, bytes(data))
    try:
        own = load_files(path, test=path, text_trees=right())
    except DataError as error:
        assert error.path == str(path), error
    else:
        assert own.task.splits["test"] and own.task.splits["train"]
