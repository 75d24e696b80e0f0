"""Tasks: sentences as sequences (chains) and labelled phrases as training sequences."""
from __future__ import annotations

import numpy as np
import pytest

from npcomp.formats import parse_ptb
from npcomp.tasks import load_task, sentence_chain, span_chains

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


def test_spans_need_the_chain_structure():
    with pytest.raises(ValueError, match="--structure chain"):
        load_task("synthetic", spans=True)


def test_real_sst_phrase_count(data_dir):
    """Zhu et al. Sec. 4.1: 318,582 training phrases."""
    task = load_task("sst5", data_dir, structure="chain", spans=True)
    assert len(task.splits["train"]) == 318582
    assert len(task.splits["dev"]) == 1101 and len(task.splits["test"]) == 2210
