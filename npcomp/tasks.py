"""Tasks: which files make a task's splits, its classes and label mapping.

==========  =======  =======================================================
task        classes  splits
==========  =======  =======================================================
sst5        5        SST PTB trees, labels 0..4 at every node
sst2        2        SST without sentences whose root is neutral (2);
                     labels 0,1 -> 0 (negative), 3,4 -> 1 (positive),
                     neutral phrases unlabelled: 6920 / 872 / 1821 sentences
synthetic   5        the project's own compositional treebank (no download)
==========  =======  =======================================================

``structure`` re-brackets every sentence: ``gold`` keeps the treebank's
trees; ``left``/``right`` build left- or right-branching binary trees over
the same words, labelled at the root and the leaves only (Zhu et al.'s
S-LSTM-LR / S-LSTM-RR); ``chain`` reads the sentence as a sequence for the
sequence models (node t reads word t, its parent is node t+1), labelled at
its last word with the sentence's label.  With ``spans`` the training split
instead holds one chain per labelled phrase of each sentence (its words,
labelled at the last one): the sequence models' phrase supervision of Tai et
al. and Irsoy & Cardie.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .formats import UNLABELLED, DataError, Tree, branching_tree, chain_tree, read_ptb_file

TASKS = ("sst5", "sst2", "synthetic")
STRUCTURES = ("gold", "left", "right", "chain")
SPLITS = ("train", "dev", "test")

_SST2_LABELS = np.array([0, 0, UNLABELLED, 1, 1], dtype=np.int32)


@dataclass
class TaskData:
    name: str
    n_classes: int
    splits: dict  # split name -> list of Tree
    # the training sentences as whole trees when "train" holds something else
    # (phrase spans): what per-epoch training accuracy is measured on
    train_sentences: list | None = None


def default_data_dir() -> Path:
    """``$NPCOMP_DATA`` if set, else ``./data``."""
    return Path(os.environ.get("NPCOMP_DATA", "data"))


def load_task(name: str, data_dir: str | Path | None = None, structure: str = "gold",
              seed: int = 0, spans: bool = False) -> TaskData:
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {STRUCTURES}, not {structure!r}")
    if spans and structure != "chain":
        raise ValueError("phrase spans as training sequences need --structure chain")
    if name == "synthetic":
        from .synthetic import synthetic_splits
        data = TaskData(name, 5, synthetic_splits(seed=seed))
    elif name in ("sst5", "sst2"):
        data = _load_sst(name, Path(data_dir) if data_dir is not None else default_data_dir())
    else:
        raise ValueError(f"task must be one of {TASKS}, not {name!r}")
    train_trees = data.splits["train"]
    if structure == "chain":
        data.splits = {split: [sentence_chain(tree) for tree in trees]
                       for split, trees in data.splits.items()}
        if spans:
            data.train_sentences = data.splits["train"]
            data.splits["train"] = [chain for tree in train_trees for chain in span_chains(tree)]
    elif structure != "gold":
        data.splits = {split: [rebracket(tree, structure) for tree in trees]
                       for split, trees in data.splits.items()}
    return data


def _load_sst(name: str, data_dir: Path) -> TaskData:
    splits = {}
    for split in SPLITS:
        path = data_dir / "sst" / f"{split}.txt"
        if not path.is_file():
            raise DataError(f"no such file: the SST is read from DATA_DIR/sst/{split}.txt; "
                            f"run `npcomp download sst --data-dir {data_dir}` or pass "
                            "--data-dir (or set NPCOMP_DATA)", path)
        trees = [tree.validate(5) for tree in read_ptb_file(path)]
        if name == "sst2":
            trees = [tree.with_labels(np.where(tree.label >= 0, _SST2_LABELS[tree.label],
                                               UNLABELLED).astype(np.int32))
                     for tree in trees if tree.root_label != 2]
        splits[split] = trees
    return TaskData(name, 5 if name == "sst5" else 2, splits)


def rebracket(tree: Tree, direction: str) -> Tree:
    """The tree's words under a left- or right-branching tree; root and leaf labels kept."""
    leaf_of_token = np.full(len(tree.tokens), -1, dtype=np.int64)
    reads = np.flatnonzero(tree.token_index >= 0)
    leaf_of_token[tree.token_index[reads]] = reads
    leaf_labels = tree.label[leaf_of_token]
    return branching_tree(tree.tokens, direction, root_label=tree.root_label,
                          leaf_labels=leaf_labels, source=tree.source)


def sentence_chain(tree: Tree) -> Tree:
    """The sentence's words as a chain labelled with the sentence's label at
    its last word (root-only supervision of a sequence model)."""
    labels = np.full(len(tree.tokens), UNLABELLED, dtype=np.int32)
    labels[-1] = tree.root_label
    return chain_tree(tree.tokens, labels, source=tree.source)


def span_chains(tree: Tree) -> list:
    """One chain per labelled node of ``tree``: the words it spans, labelled at
    the last one with the node's label; the sentence itself comes last."""
    first = np.full(tree.n_nodes, len(tree.tokens), dtype=np.int64)
    last = np.full(tree.n_nodes, -1, dtype=np.int64)
    reads = tree.token_index >= 0
    first[reads] = last[reads] = tree.token_index[reads]
    for node in range(tree.n_nodes):  # children before parents: spans grow upwards
        up = tree.parent[node]
        if up >= 0:
            first[up] = min(first[up], first[node])
            last[up] = max(last[up], last[node])
    chains = []
    for node in np.flatnonzero(tree.label >= 0):
        words = tree.tokens[first[node]:last[node] + 1]
        labels = np.full(len(words), UNLABELLED, dtype=np.int32)
        labels[-1] = tree.label[node]
        chains.append(chain_tree(words, labels, source=tree.source))
    return chains
