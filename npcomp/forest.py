"""A minibatch of trees as one forest in struct-of-arrays form.

Nodes of all the trees are renumbered by height (distance to the furthest
leaf below them): first every leaf of every tree, then every node of height
1, and so on.  Children therefore always come before parents, and each
*level* ``[level_ptr[l], level_ptr[l+1])`` is a contiguous block of nodes
whose children are all finished: one matrix product computes the gate
pre-activations of a whole level of the minibatch.  Sequences are chains
(every node one child), so a minibatch of sequences advances one time step
per level.

Arrays (n = number of nodes in the forest, K = largest number of children):

==============  ===============  ================================================
name            shape, dtype     meaning
==============  ===============  ================================================
``word``        (n,) int32       word id each node reads, -1 for none
``children``    (n, K) int32     children in sentence order, -1 where absent
``n_children``  (n,) int32       number of children
``position``    (n,) int32       index of the node among its parent's children
``parent``      (n,) int32       parent node, -1 for a root
``label``       (n,) int32       class of the node, -1 unlabelled
``height``      (n,) int32       0 for leaves
``level_ptr``   (levels+1,)      node ranges of the levels
``root``        (trees,) int32   root node of each tree
``tree``        (n,) int32       which tree each node belongs to
``origin``      (n,) int32       the node's index in its own tree
``token``       (n,) int32       the token (sentence position) a node reads, -1
                                 for none (``build_forest``'s; None otherwise)
``relation``    (n,) int32       the dependency relation id of a node's word to
                                 its head (``data/readers/dependency_relations.py``), -1
                                 for none; None when a tree has no relations
==============  ===============  ================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numba import njit

from npcomp.data.readers.dependency_relations import node_relations
from npcomp.data.datasets import SUPERVISION_MODES
from npcomp.data.readers.formats import NO_TOKEN, UNLABELLED, Tree

__all__ = ["Forest", "build_forest", "node_words", "supervised_labels", "depths", "reverse_chains"]


@dataclass
class Forest:
    word: np.ndarray
    children: np.ndarray
    n_children: np.ndarray
    position: np.ndarray
    parent: np.ndarray
    label: np.ndarray
    height: np.ndarray
    level_ptr: np.ndarray
    root: np.ndarray
    tree: np.ndarray
    origin: np.ndarray
    # the sentence position each node reads (a dependency cell's left and right
    # children); forests made otherwise (reversed chains) have none
    token: np.ndarray | None = None
    relation: np.ndarray | None = None

    @property
    def n_nodes(self) -> int:
        return int(self.word.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.root.shape[0])

    @property
    def n_levels(self) -> int:
        return int(self.level_ptr.shape[0] - 1)

    @property
    def n_leaves(self) -> int:
        return int(self.level_ptr[1])

    @property
    def max_children(self) -> int:
        return int(self.children.shape[1])

    def levels(self, first: int = 0, downward: bool = False):
        """The node range (start, stop) of each level from level ``first`` up
        (0: the leaves, or a chain's first words), as a forward pass visits
        them, children first; with ``downward`` from the top level down to
        ``first``, as a backward pass visits them, parents first."""
        bounds = self.level_ptr.tolist()
        order = range(first, self.n_levels)
        for level in reversed(order) if downward else order:
            yield bounds[level], bounds[level + 1]

    def word_nodes(self) -> np.ndarray:
        """Indices of the nodes that read a word, ascending."""
        return np.flatnonzero(self.word >= 0)


def depths(forest: Forest) -> np.ndarray:
    """(n,) each node's distance from its tree's root: parents come after
    their children, so one pass from the last node down."""
    depth = np.zeros(forest.n_nodes, dtype=np.int64)
    for node in range(forest.n_nodes - 1, -1, -1):
        parent = forest.parent[node]
        if parent >= 0:
            depth[node] = depth[parent] + 1
    return depth


def supervised_labels(tree: Tree, mode: str) -> np.ndarray:
    """The tree's labels kept only where ``mode`` supervises (others -1).

    ``all``: every labelled node; ``root``: the root; ``root+leaves``: the root
    and the leaves (Zhu et al., Table 3); ``spans``: every labelled node of a
    phrase chain (labelled at its end only, see ``tasks.span_chains``).
    """
    if mode in ("all", "spans"):
        return tree.label
    if mode not in SUPERVISION_MODES:
        raise ValueError(f"supervision must be one of {SUPERVISION_MODES}, not {mode!r}")
    keep = np.zeros(tree.n_nodes, dtype=bool)
    keep[tree.root] = True
    if mode == "root+leaves":
        is_parent = np.zeros(tree.n_nodes, dtype=bool)
        is_parent[tree.parent[tree.parent >= 0]] = True
        keep |= ~is_parent
    return np.where(keep, tree.label, UNLABELLED).astype(np.int32)


def node_words(tree: Tree, token_ids: np.ndarray) -> np.ndarray:
    """Word id per node of ``tree`` given the ids of its tokens (-1 where none)."""
    words = np.full(tree.n_nodes, -1, dtype=np.int32)
    reads = tree.token_index != NO_TOKEN
    words[reads] = token_ids[tree.token_index[reads]]
    return words


@njit(cache=True)
def _heights_and_positions(parent):
    """Height and sibling position of every node; children precede parents."""
    n = parent.shape[0]
    height = np.zeros(n, dtype=np.int32)
    position = np.zeros(n, dtype=np.int32)
    count = np.zeros(n, dtype=np.int32)
    for node in range(n):
        up = parent[node]
        if up >= 0:
            position[node] = count[up]
            count[up] += 1
            if height[node] + 1 > height[up]:
                height[up] = height[node] + 1
    return height, position, count


def build_forest(
    trees: Sequence[Tree], words: Sequence[np.ndarray], labels: Sequence[np.ndarray] | None = None
) -> Forest:
    """Pack trees into one height-ordered forest.

    trees:  the trees of the minibatch
    words:  for each tree, int32 (n_nodes,) word id per node (see node_words)
    labels: for each tree, labels to use instead of ``tree.label``
    """
    if len(trees) == 0:
        raise ValueError("a forest needs at least one tree")
    sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    parent_old = np.concatenate([t.parent for t in trees]).astype(np.int64)
    has_parent = parent_old >= 0
    tree_old = np.repeat(np.arange(len(trees), dtype=np.int32), sizes)
    parent_old[has_parent] += offsets[:-1][tree_old[has_parent]]
    word_old = np.concatenate(words).astype(np.int32)
    label_old = np.concatenate([t.label for t in trees] if labels is None else labels)

    height_old, position_old, count_old = _heights_and_positions(parent_old)
    order = np.argsort(height_old, kind="stable")
    new_of_old = np.empty_like(order)
    new_of_old[order] = np.arange(order.shape[0])

    parent = np.full(order.shape[0], -1, dtype=np.int32)
    moved_parent = parent_old[order]
    linked = moved_parent >= 0
    parent[linked] = new_of_old[moved_parent[linked]]
    position = position_old[order]
    n_children = count_old[order]
    max_children = max(int(n_children.max()), 1)
    children = np.full((order.shape[0], max_children), -1, dtype=np.int32)
    child_nodes = np.flatnonzero(linked).astype(np.int32)
    children[parent[child_nodes], position[child_nodes]] = child_nodes

    height = height_old[order]
    level_ptr = np.zeros(int(height[-1]) + 2, dtype=np.int64)
    np.cumsum(np.bincount(height), out=level_ptr[1:])
    root = new_of_old[offsets[1:] - 1].astype(np.int32)
    return Forest(
        word=word_old[order],
        children=children,
        n_children=n_children,
        position=position,
        parent=parent,
        label=label_old[order].astype(np.int32),
        height=height,
        level_ptr=level_ptr,
        root=root,
        tree=tree_old[order],
        origin=(order - offsets[tree_old[order]]).astype(np.int32),
        token=np.concatenate([t.token_index for t in trees])[order].astype(np.int32),
        relation=_relations(trees, order),
    )


def _relations(trees: Sequence[Tree], order: np.ndarray) -> np.ndarray | None:
    """(n,) every node's relation id in forest order, or None unless every
    tree carries relations."""
    per_tree = [node_relations(tree) for tree in trees]
    if any(ids is None for ids in per_tree):
        return None
    return np.concatenate(per_tree)[order]


def reverse_chains(forest: Forest) -> tuple:
    """The forest's chains read from their last word to their first.

    For a forest of chains (every node at most one child: node t's child is
    word t-1), returns (reversed forest, order): in the reversed forest node
    t's child is word t+1 and each chain's root is its first word; reversed
    node r is node ``order[r]`` of ``forest`` (same word).  Labels are not
    carried over (all -1): the sequence models classify through ``forest``.
    """
    if forest.max_children > 1:
        raise ValueError("only chains can be reversed: a node has more than one child")
    length = forest.height[forest.root] + 1  # per tree
    height = (length[forest.tree] - 1 - forest.height).astype(np.int32)
    order = np.argsort(height, kind="stable")
    new_of_old = np.empty_like(order)
    new_of_old[order] = np.arange(order.shape[0])
    old_child = forest.parent[order]  # the next word becomes the child
    children = np.full((order.shape[0], 1), -1, dtype=np.int32)
    has_child = old_child >= 0
    children[has_child, 0] = new_of_old[old_child[has_child]]
    old_parent = forest.children[order, 0]  # the previous word becomes the parent
    parent = np.full(order.shape[0], -1, dtype=np.int32)
    parent[old_parent >= 0] = new_of_old[old_parent[old_parent >= 0]]
    first_words = np.flatnonzero(forest.n_children == 0)
    root = new_of_old[first_words[np.argsort(forest.tree[first_words], kind="stable")]]
    new_height = height[order]
    level_ptr = np.zeros(int(new_height[-1]) + 2, dtype=np.int64)
    np.cumsum(np.bincount(new_height), out=level_ptr[1:])
    reversed_forest = Forest(
        word=forest.word[order],
        children=children,
        n_children=has_child.astype(np.int32),
        position=np.zeros(order.shape[0], dtype=np.int32),
        parent=parent,
        label=np.full(order.shape[0], -1, dtype=np.int32),
        height=new_height,
        level_ptr=level_ptr,
        root=root.astype(np.int32),
        tree=forest.tree[order],
        origin=new_height.copy(),
    )
    return reversed_forest, order
