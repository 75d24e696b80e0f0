"""Random trees of many shapes for gradient checks (no recursion anywhere)."""
from __future__ import annotations

import numpy as np

from npcomp.formats import Tree, branching_tree, renumber_postorder


def random_binary_tree(n_leaves: int, rng: np.random.Generator, n_classes: int = 5,
                       vocab_size: int = 10, unary_rate: float = 0.0,
                       label_rate: float = 1.0) -> Tree:
    """A binary tree of random shape over ``n_leaves`` random words.

    Repeatedly joins two adjacent subtrees chosen at random (so every binary
    shape can appear); with ``unary_rate`` a subtree is first wrapped in a
    unary node.  Each node is labelled with probability ``label_rate``.
    Tokens are "w0".."w{vocab_size-1}" so a vocabulary can map them.
    """
    tokens = tuple(f"w{k}" for k in rng.integers(0, vocab_size, size=n_leaves))
    parent: list = [-1] * n_leaves
    token_index = list(range(n_leaves))
    roots = list(range(n_leaves))  # current subtrees, in sentence order
    def wrap_in_unary(k: int) -> None:
        node = len(parent)
        parent.append(-1)
        token_index.append(-1)
        parent[roots[k]] = node
        roots[k] = node

    while len(roots) > 1:
        if unary_rate > 0 and rng.random() < unary_rate:
            wrap_in_unary(int(rng.integers(0, len(roots))))
            continue
        k = int(rng.integers(0, len(roots) - 1))
        node = len(parent)
        parent.append(-1)
        token_index.append(-1)
        parent[roots[k]] = node
        parent[roots[k + 1]] = node
        roots[k:k + 2] = [node]
    if unary_rate > 0 and rng.random() < unary_rate:
        wrap_in_unary(0)  # a unary node at the root, over a single word too
    n_nodes = len(parent)
    label = rng.integers(0, n_classes, size=n_nodes).astype(np.int32)
    label[rng.random(n_nodes) >= label_rate] = -1
    label[-1] = rng.integers(0, n_classes)
    tree = Tree(tokens, np.array(parent, np.int32), np.array(token_index, np.int32), label,
                "random")
    # joining adjacent subtrees numbers a new parent after both children, but a
    # left child may have a larger index than its right sibling: renumber so
    # children sorted by index are in sentence order
    return renumber_postorder(tree).validate(n_classes)


def random_forest_trees(rng: np.random.Generator, n_trees: int = 3, max_leaves: int = 12,
                        n_classes: int = 5, vocab_size: int = 10,
                        unary_rate: float = 0.0) -> list:
    """A minibatch mixing random shapes, a single-word sentence and a chain-like
    left-branching and right-branching tree."""
    trees = [random_binary_tree(int(rng.integers(1, max_leaves + 1)), rng, n_classes,
                                vocab_size, unary_rate) for _ in range(n_trees)]
    words = [f"w{k}" for k in rng.integers(0, vocab_size, size=max(3, max_leaves // 2))]
    for direction in ("left", "right"):
        leaf_labels = rng.integers(0, n_classes, size=len(words))
        trees.append(branching_tree(words, direction, root_label=int(rng.integers(0, n_classes)),
                                    leaf_labels=leaf_labels))
    trees.append(random_binary_tree(1, rng, n_classes, vocab_size))
    return trees
