"""A sentence's tree read another way: re-bracketed left or right, as a chain
labelled at its end, or as one chain per labelled phrase (the sequence models'
phrase supervision)."""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import UNLABELLED, Tree, branching_tree, chain_tree


def rebracket(tree: Tree, direction: str) -> Tree:
    """The tree's words under a left- or right-branching tree; root and leaf labels kept."""
    leaf_of_token = np.full(len(tree.tokens), -1, dtype=np.int64)
    reads = np.flatnonzero(tree.token_index >= 0)
    leaf_of_token[tree.token_index[reads]] = reads
    leaf_labels = tree.label[leaf_of_token]
    return branching_tree(
        tree.tokens, direction, root_label=tree.root_label, leaf_labels=leaf_labels, source=tree.source
    )


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
        words = tree.tokens[first[node] : last[node] + 1]
        labels = np.full(len(words), UNLABELLED, dtype=np.int32)
        labels[-1] = tree.label[node]
        chains.append(chain_tree(words, labels, source=tree.source))
    return chains
