"""Tasks: sentences as sequences (chains) and labelled phrases as training sequences."""

from __future__ import annotations

import numpy as np
import pytest

from npcomp.data.readers.ptb import parse_ptb
from npcomp.data.datasets.tasks import SpanGroups, load_task
from npcomp.data.readers.restructure import sentence_chain, span_chains

TREE = "(3 (2 (2 The) (2 film)) (4 (2 is) (4 (3 very) (4 good))))"


def test_sentence_chain_reads_every_word_and_ends_with_the_sentence_label():
    chain = sentence_chain(parse_ptb(TREE))
    assert chain.tokens == ("The", "film", "is", "very", "good")
    assert list(chain.parent) == [1, 2, 3, 4, -1]
    assert list(chain.token_index) == [0, 1, 2, 3, 4]
    assert list(chain.label) == [-1, -1, -1, -1, 3]


def test_span_chains_one_per_labelled_phrase():
    tree = parse_ptb(TREE)
    chains = span_chains(tree)
    assert len(chains) == tree.n_nodes == 9
    spans = {(chain.tokens, chain.root_label) for chain in chains}
    assert (("The", "film"), 2) in spans
    assert (("very", "good"), 4) in spans
    assert (("is", "very", "good"), 4) in spans
    assert (("good",), 4) in spans
    assert chains[-1].tokens == tree.tokens and chains[-1].root_label == 3
    for chain in chains:  # labelled at the last word only
        assert np.all(chain.label[:-1] == -1) and chain.label[-1] >= 0


def test_span_chains_skip_unlabelled_nodes():
    tree = parse_ptb(TREE)
    label = tree.label.copy()
    label[:4] = -1
    assert len(span_chains(tree.with_labels(label))) == tree.n_nodes - 4


def test_chain_structure_on_the_synthetic_task():
    gold = load_task("synthetic", seed=2)
    chains = load_task("synthetic", structure="chain", seed=2)
    spans = load_task("synthetic", structure="chain", seed=2, spans=True)
    for split in ("dev", "test"):
        assert len(chains.splits[split]) == len(gold.splits[split])
        assert spans.splits[split][0].tokens == gold.splits[split][0].tokens
    labelled = sum(int(np.sum(tree.label >= 0)) for tree in gold.splits["train"])
    assert len(spans.splits["train"]) == labelled


def test_span_groups_say_which_chains_each_sentence_gave():
    task = load_task("synthetic", structure="chain", seed=2, spans=True)
    groups, chains = task.span_groups, task.splits["train"]
    assert len(groups.whole) == len(task.train_sentences)
    for sentence, start, whole in zip(task.train_sentences, groups.start, groups.whole):
        assert chains[whole].tokens == sentence.tokens
        assert chains[whole].root_label == sentence.root_label
        for chain in chains[start:whole]:  # the sentence's own phrases
            assert " ".join(chain.tokens) in " ".join(sentence.tokens)
    assert groups.start[0] == 0 and groups.whole[-1] == len(chains) - 1
    assert np.array_equal(groups.start[1:], groups.whole[:-1] + 1)


def test_span_draw_takes_every_sentence_and_k_of_its_phrases():
    # three sentences: 3 phrases, none (one word), 5 phrases
    groups = SpanGroups.of([["p", "p", "p", "s"], ["s"], ["p"] * 5 + ["s"]])
    assert list(groups.start) == [0, 4, 5] and list(groups.whole) == [3, 4, 10]
    order = groups.draw(np.random.default_rng(0), 4)
    assert len(order) == 3 + 4 + 4
    counts = np.bincount(order, minlength=11)
    assert all(counts[[3, 4, 10]] == 1)  # each sentence once
    assert counts[0:3].sum() == 4 and counts[5:10].sum() == 4  # k phrases of each
    again = groups.draw(np.random.default_rng(0), 4)
    assert np.array_equal(order, again)
    # uniform over a sentence's phrases, with replacement
    many = groups.draw(np.random.default_rng(1), 20000)
    shares = np.bincount(many, minlength=11)[5:10] / 20000
    assert np.allclose(shares, 0.2, atol=0.01)
    assert sorted(groups.draw(np.random.default_rng(0), 0)) == [3, 4, 10]


def test_spans_need_every_training_sentence_labelled_at_its_root(monkeypatch):
    import npcomp.data.datasets.synthetic

    tree = parse_ptb(TREE)
    label = tree.label.copy()
    label[-1] = -1  # the root (children before parents: last)
    splits = {"train": [tree, tree.with_labels(label)], "dev": [tree], "test": [tree]}
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", lambda seed: splits)
    with pytest.raises(ValueError, match="labelled at its root"):
        load_task("synthetic", structure="chain", spans=True)


def test_spans_need_the_chain_structure():
    with pytest.raises(ValueError, match="structure .chain."):
        load_task("synthetic", spans=True)


def test_real_sst_phrase_count(data_dir):
    """Zhu et al. Sec. 4.1: 318,582 training phrases."""
    task = load_task("sst5", data_dir, structure="chain", spans=True)
    assert len(task.splits["train"]) == 318582
    assert len(task.splits["dev"]) == 1101 and len(task.splits["test"]) == 2210


SST2_TREES = {  # one neutral sentence per split, dropped from sst2
    "train": [
        "(3 (2 (2 The) (2 film)) (4 (2 is) (4 (3 very) (4 good))))",
        "(1 (2 It) (1 (0 bores) (2 me)))",
        "(2 (2 A) (2 film))",
    ],
    "dev": ["(4 (2 Truly) (4 great))", "(2 (2 A) (2 story))"],
    "test": ["(0 (2 Truly) (0 awful))", "(2 (2 The) (2 end))"],
}


@pytest.fixture
def sst2_dir(tmp_path):
    (tmp_path / "sst").mkdir()
    for split, trees in SST2_TREES.items():
        (tmp_path / "sst" / f"{split}.txt").write_text("\n".join(trees) + "\n")
    return tmp_path


def test_sst2_neutral_phrases_unlabelled_by_default(sst2_dir):
    task = load_task("sst2", sst2_dir)
    assert task.training_only_classes == 0 and task.train_sentences is None
    first = task.splits["train"][0]
    assert len(task.splits["train"]) == 2  # the neutral sentence is dropped
    assert first.label[first.label >= 0].tolist() == [1] * 5  # very, good and above


def test_sst2_neutral_phrases_as_a_training_class(sst2_dir):
    """Tai et al.'s released code: neutral training phrases are class 2; dev and
    test are unchanged, and the training accuracy counts negative/positive only."""
    task = load_task("sst2", sst2_dir, neutral="train")
    plain = load_task("sst2", sst2_dir)
    assert task.n_classes == 2 and task.training_only_classes == 1
    first = task.splits["train"][0]
    assert len(task.splits["train"]) == 2  # sentences with a neutral root still dropped
    assert first.label.tolist().count(2) == 4  # The, film, The film, is
    assert np.all(first.label >= 0)
    for split in ("dev", "test"):
        for ours, theirs in zip(task.splits[split], plain.splits[split]):
            assert np.array_equal(ours.label, theirs.label)
    for ours, theirs in zip(task.train_sentences, plain.splits["train"]):
        assert np.array_equal(ours.label, theirs.label)


def test_sst2_neutral_spans_are_training_sequences(sst2_dir):
    task = load_task("sst2", sst2_dir, structure="chain", spans=True, neutral="train")
    plain = load_task("sst2", sst2_dir, structure="chain", spans=True)
    labels = [int(chain.root_label) for chain in task.splits["train"]]
    assert labels.count(2) == 6  # 4 + It, me
    assert len(task.splits["train"]) == len(plain.splits["train"]) + 6
    assert [int(c.root_label) for c in task.train_sentences] == [1, 0]


def test_neutral_training_class_is_sst2_only(sst2_dir):
    with pytest.raises(ValueError, match="only sst2"):
        load_task("sst5", sst2_dir, neutral="train")
    with pytest.raises(ValueError, match="neutral must be one of"):
        load_task("sst2", sst2_dir, neutral="yes")


def test_train_sst2_with_the_neutral_class(sst2_dir, tmp_path, capsys):
    import json

    from npcomp.cli import main
    from npcomp.runfiles.model_files import load_model

    run_dir = tmp_path / "run"
    argv = [
        "train",
        "--model",
        "lstm",
        "--task",
        "sst2",
        "--data-dir",
        str(sst2_dir),
        "--neutral",
        "train",
        "--dim",
        "4",
        "--embedding-dim",
        "4",
        "--epochs",
        "1",
        "--quiet",
        "--threads",
        "1",
        "--out",
        str(run_dir),
    ]
    assert main(argv) == 0
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["config"]["neutral"] == "train"
    assert np.array(metrics["test"]["root_confusion"]).shape == (2, 2)
    model, params, _, _ = load_model(run_dir)
    assert model.n_classes == 2 and params["softmax.W"].shape[1] == 3
    capsys.readouterr()
    assert main([*argv[:4], "sst5", *argv[5:]]) == 2
    assert "--neutral: applies to sst2 alone" in capsys.readouterr().err
