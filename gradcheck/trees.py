"""Random trees of many shapes for gradient checks (no recursion anywhere)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from npcomp.data.readers.formats import Tree, branching_tree, renumber_postorder
from npcomp.data.readers.parents import parents_to_tree

# the dependency relations random dependency trees carry, a few of SICK's commonest
RANDOM_RELATIONS = ("det", "nsubj", "prep", "pobj", "dobj", "amod")


def random_binary_tree(
    n_leaves: int,
    rng: np.random.Generator,
    n_classes: int = 5,
    vocab_size: int = 10,
    unary_rate: float = 0.0,
    label_rate: float = 1.0,
) -> Tree:
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
        roots[k : k + 2] = [node]
    if unary_rate > 0 and rng.random() < unary_rate:
        wrap_in_unary(0)  # a unary node at the root, over a single word too
    n_nodes = len(parent)
    label = rng.integers(0, n_classes, size=n_nodes).astype(np.int32)
    label[rng.random(n_nodes) >= label_rate] = -1
    label[-1] = rng.integers(0, n_classes)
    tree = Tree(tokens, np.array(parent, np.int32), np.array(token_index, np.int32), label, "random")
    # joining adjacent subtrees numbers a new parent after both children, but a
    # left child may have a larger index than its right sibling: renumber so
    # children sorted by index are in sentence order
    return renumber_postorder(tree).validate(n_classes)


def random_forest_trees(
    rng: np.random.Generator,
    n_trees: int = 3,
    max_leaves: int = 12,
    n_classes: int = 5,
    vocab_size: int = 10,
    unary_rate: float = 0.0,
) -> list:
    """A minibatch mixing random shapes, a single-word sentence and a chain-like
    left-branching and right-branching tree."""
    trees = [
        random_binary_tree(int(rng.integers(1, max_leaves + 1)), rng, n_classes, vocab_size, unary_rate)
        for _ in range(n_trees)
    ]
    words = [f"w{k}" for k in rng.integers(0, vocab_size, size=max(3, max_leaves // 2))]
    for direction in ("left", "right"):
        leaf_labels = rng.integers(0, n_classes, size=len(words))
        trees.append(
            branching_tree(words, direction, root_label=int(rng.integers(0, n_classes)), leaf_labels=leaf_labels)
        )
    trees.append(random_binary_tree(1, rng, n_classes, vocab_size))
    return trees


def random_dependency_tree(
    n_words: int,
    rng: np.random.Generator,
    max_children: int = 8,
    n_classes: int = 5,
    vocab_size: int = 10,
    label_rate: float = 1.0,
) -> Tree:
    """A tree in which every node reads a word and has 0..``max_children``
    children (a dependency tree: node i reads token i).

    Heads are drawn at random among the words already attached, so every
    shape with at most ``max_children`` dependents per word can appear; with
    ``max_children`` words or more a node with exactly that many children is
    forced, so wide nodes are always exercised.
    """
    tokens = tuple(f"w{k}" for k in rng.integers(0, vocab_size, size=n_words))
    order = rng.permutation(n_words)
    heads = np.zeros(n_words, dtype=np.int64)  # 1-based, 0 at the root
    count = np.zeros(n_words, dtype=np.int64)
    wide = order[0] if n_words > max_children else -1
    for rank in range(1, n_words):
        word = order[rank]
        if wide >= 0 and count[wide] < max_children:
            head = wide
        else:
            attached = order[:rank]
            open_heads = attached[count[attached] < max_children]
            head = open_heads[rng.integers(0, open_heads.shape[0])]
        heads[word] = head + 1
        count[head] += 1
    # relations to the heads (the SDT-RNN's), drawn without the generator so the
    # trees of every other setting stay as they were
    tree = replace(
        parents_to_tree(heads, tokens, source="random"),
        relations=tuple(RANDOM_RELATIONS[(3 * t + n_words) % len(RANDOM_RELATIONS)] for t in range(n_words)),
    )
    label = rng.integers(0, n_classes, size=tree.n_nodes).astype(np.int32)
    label[rng.random(tree.n_nodes) >= label_rate] = -1
    label[tree.root] = rng.integers(0, n_classes)
    return tree.with_labels(label).validate(n_classes)


def headed_tree(side: int, rng: np.random.Generator, n_classes: int = 5, vocab_size: int = 10) -> Tree:
    """A dependency tree of ``2 side + 1`` random words whose middle word heads
    all the others: ``side`` dependents on each side of it, so a DT-RNN with
    up to ``side`` positions a side reads a child through every one of its
    matrices (random heads leave a far position unused at some seeds)."""
    n_words = 2 * side + 1
    tokens = tuple(f"w{k}" for k in rng.integers(0, vocab_size, size=n_words))
    heads = np.full(n_words, side + 1, dtype=np.int64)  # 1-based
    heads[side] = 0
    tree = replace(
        parents_to_tree(heads, tokens, source="random"),
        relations=tuple(RANDOM_RELATIONS[t % len(RANDOM_RELATIONS)] for t in range(n_words)),
    )
    return tree.with_labels(rng.integers(0, n_classes, size=n_words).astype(np.int32)).validate(n_classes)


def constituency_and_dependency_trees(
    rng: np.random.Generator, side: int = 3, n_classes: int = 5, vocab_size: int = 10
) -> list:
    """A minibatch of both layouts at once: binary constituency trees (inner
    nodes read no word, so every child is right of its head) and dependency
    trees (a word at every node, children on both sides, ``headed_tree``'s
    ``side`` a side), for a cell that reads either."""
    trees = random_forest_trees(rng, n_trees=2, max_leaves=8, n_classes=n_classes, vocab_size=vocab_size)
    return trees + [
        headed_tree(side, rng, n_classes, vocab_size),
        random_dependency_tree(5, rng, n_classes=n_classes, vocab_size=vocab_size),
    ]


def random_dependency_trees(
    rng: np.random.Generator, n_trees: int = 3, max_words: int = 12, n_classes: int = 5, vocab_size: int = 10
) -> list:
    """A minibatch of dependency-shaped trees: random ones, a chain, a single
    word and a node with 8 children."""
    trees = [
        random_dependency_tree(int(rng.integers(1, max_words + 1)), rng, n_classes=n_classes, vocab_size=vocab_size)
        for _ in range(n_trees)
    ]
    trees.append(random_dependency_tree(9, rng, n_classes=n_classes, vocab_size=vocab_size))
    chain = random_dependency_tree(4, rng, max_children=1, n_classes=n_classes, vocab_size=vocab_size)
    trees += [chain, random_dependency_tree(1, rng, n_classes=n_classes, vocab_size=vocab_size)]
    return trees
