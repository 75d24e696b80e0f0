"""Data formats: labelled trees and the files they are read from.

Everything above this module (forest, cells, trainer) sees sentences only as
:class:`Tree` records: parallel integer arrays over the nodes of one tree,
numbered children before parents.  This module turns files into trees and
reports bad input as :class:`DataError` naming the file and the line.

Formats read here:

* PTB bracketed trees with integer labels, one tree per line (the Stanford
  Sentiment Treebank's ``train.txt``/``dev.txt``/``test.txt``).  Non-integer
  labels (``NP``, ``VP``) are accepted where labels are optional and read as
  unlabelled.
* SICK in the layout of the Tree-LSTM authors' preprocessing
  (``a.toks``, ``a.parents``, ``a.cparents``, ``sim.txt`` ...) and the original
  tab-separated SemEval files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

UNLABELLED = -1
NO_TOKEN = -1
NO_PARENT = -1


class DataError(ValueError):
    """Bad input data: the message names the file and line (1-based)."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        super().__init__(where + message)


@dataclass(eq=False)
class Tree:
    """One sentence as a tree of integer arrays (nodes children-before-parents).

    tokens:      the sentence's words, in order (tuple of str, length T)
    parent:      int32 (n_nodes,), index of each node's parent, -1 at the root;
                 the root is the last node, and parent[k] > k for every other node
    token_index: int32 (n_nodes,), which token a node reads as input, -1 for none
                 (constituency trees: leaves read their word, inner nodes none;
                 dependency trees: every node reads its head word)
    label:       int32 (n_nodes,), class of each node, -1 unlabelled
    source:      "file:line" the tree came from, for error messages

    The children of a node, in order, are the nodes whose ``parent`` points
    to it, sorted by node index.
    """

    tokens: tuple
    parent: np.ndarray
    token_index: np.ndarray
    label: np.ndarray
    source: str = ""
    _children: list | None = field(default=None, repr=False)

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def root(self) -> int:
        return self.n_nodes - 1

    @property
    def root_label(self) -> int:
        return int(self.label[self.root])

    def children(self) -> list:
        """List of child-index lists, one per node, in left-to-right order."""
        if self._children is None:
            kids: list = [[] for _ in range(self.n_nodes)]
            for node, up in enumerate(self.parent.tolist()):
                if up >= 0:
                    kids[up].append(node)
            self._children = kids
        return self._children

    def with_labels(self, label: np.ndarray) -> "Tree":
        return Tree(self.tokens, self.parent, self.token_index,
                    np.asarray(label, dtype=np.int32), self.source)

    def validate(self, n_classes: int | None = None) -> "Tree":
        """Check the invariants above; raise DataError naming ``source``."""
        path, line = _split_source(self.source)
        n = self.n_nodes
        if n == 0:
            raise DataError("empty tree", path, line)
        for name in ("parent", "token_index", "label"):
            arr = getattr(self, name)
            if arr.shape != (n,) or arr.dtype != np.int32:
                raise DataError(f"{name} must be int32 of shape ({n},)", path, line)
        parent = self.parent
        if parent[-1] != NO_PARENT:
            raise DataError("the last node must be the root", path, line)
        if n > 1 and np.any(parent[:-1] <= np.arange(n - 1)):
            raise DataError("a node's parent must come after it", path, line)
        if n > 1 and np.any(parent[:-1] >= n):
            raise DataError("parent index out of range", path, line)
        tok = self.token_index
        if np.any((tok < NO_TOKEN) | (tok >= len(self.tokens))):
            raise DataError("token index out of range", path, line)
        if n_classes is not None:
            bad = (self.label != UNLABELLED) & ((self.label < 0) | (self.label >= n_classes))
            if np.any(bad):
                value = int(self.label[np.argmax(bad)])
                raise DataError(f"label {value} out of range 0..{n_classes - 1}", path, line)
        return self

    def to_ptb(self, label: np.ndarray | None = None) -> str:
        """PTB bracketing of the tree (labels from ``label`` or the tree's own)."""
        label = self.label if label is None else label
        kids = self.children()
        text: list = [""] * self.n_nodes
        for node in range(self.n_nodes):  # children before parents: no recursion
            tag = str(int(label[node])) if label[node] != UNLABELLED else "X"
            parts = []
            if self.token_index[node] != NO_TOKEN:
                parts.append(self.tokens[self.token_index[node]])
            parts.extend(text[k] for k in kids[node])
            text[node] = "(" + tag + " " + " ".join(parts) + ")"
        return text[-1]

    def span_tokens(self) -> list:
        """For every node, the tokens it covers (sorted token indices)."""
        spans: list = [[] for _ in range(self.n_nodes)]
        for node in range(self.n_nodes):
            if self.token_index[node] != NO_TOKEN:
                spans[node].append(int(self.token_index[node]))
            up = self.parent[node]
            if up >= 0:
                spans[up].extend(spans[node])
        return [sorted(s) for s in spans]


def _split_source(source: str):
    if not source:
        return None, None
    path, _, line = source.rpartition(":")
    if path and line.isdigit():
        return path, int(line)
    return source, None


# --------------------------------------------------------------------------
# PTB bracketed trees
# --------------------------------------------------------------------------

_PTB_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_ptb(text: str, source: str = "", require_labels: bool = True) -> Tree:
    """Parse one bracketed tree, e.g. ``(3 (2 It) (4 (2 's) (4 good)))``.

    A node is ``(LABEL WORD)`` (a leaf reading WORD) or ``(LABEL node node ...)``.
    Integer labels become classes; other labels are allowed only when
    ``require_labels`` is false and read as unlabelled.  Iterative, so trees of
    any depth parse.
    """
    path, line = _split_source(source)

    def fail(message: str):
        raise DataError(message, path, line)

    pieces = _PTB_TOKEN.findall(text)
    if not pieces:
        fail("empty line (expected a bracketed tree)")
    tokens: list = []
    parent: list = []
    token_index: list = []
    label: list = []
    # stack entries: [label, list of child node ids, word or None]
    stack: list = []
    position = 0
    root_done = False
    while position < len(pieces):
        piece = pieces[position]
        if root_done:
            fail(f"text after the end of the tree: {' '.join(pieces[position:position + 3])!r}")
        if piece == "(":
            if position + 1 >= len(pieces) or pieces[position + 1] in "()":
                fail("'(' must be followed by a label")
            stack.append([_read_label(pieces[position + 1], require_labels, fail), [], None])
            position += 2
            continue
        if piece == ")":
            if not stack:
                fail("unbalanced ')'")
            node_label, kids, word = stack.pop()
            if word is None and not kids:
                fail("a node has neither a word nor children")
            node = len(parent)
            parent.append(NO_PARENT)
            label.append(node_label)
            if word is not None:
                token_index.append(len(tokens))
                tokens.append(word)
            else:
                token_index.append(NO_TOKEN)
            for kid in kids:
                parent[kid] = node
            if stack:
                stack[-1][1].append(node)
            else:
                root_done = True
            position += 1
            continue
        # a bare word: must be the only content of the innermost node
        if not stack:
            fail(f"word {piece!r} outside brackets")
        top = stack[-1]
        if top[1] or top[2] is not None:
            fail(f"word {piece!r} beside other children (a leaf is '(LABEL word)')")
        top[2] = piece
        position += 1
    if stack:
        fail(f"unbalanced '(': {len(stack)} bracket(s) not closed (truncated line?)")
    return Tree(tuple(tokens), np.array(parent, dtype=np.int32),
                np.array(token_index, dtype=np.int32), np.array(label, dtype=np.int32), source)


def _read_label(text: str, require_labels: bool, fail) -> int:
    try:
        value = int(text)
    except ValueError:
        if require_labels:
            fail(f"label {text!r} is not an integer")
        return UNLABELLED
    if value < 0:
        fail(f"label {value} is negative")
    return value


def read_ptb_file(path: str | Path, require_labels: bool = True) -> list:
    """All trees of a PTB file, one per non-blank line."""
    path = Path(path)
    if not path.is_file():
        raise DataError("no such file", path)
    trees = []
    with open(path, encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                raise DataError("empty line (expected a bracketed tree)", path, number)
            trees.append(parse_ptb(text, f"{path}:{number}", require_labels))
    if not trees:
        raise DataError("file holds no trees", path)
    return trees


def chain_tree(tokens: Sequence[str], labels: Sequence[int] | None = None,
               source: str = "") -> Tree:
    """A sentence as a chain: node t reads token t, its parent is node t+1.

    The sequence models read sentences in this form (the root is the last word).
    """
    n = len(tokens)
    if n == 0:
        raise DataError("empty sentence", *_split_source(source))
    parent = np.arange(1, n + 1, dtype=np.int32)
    parent[-1] = NO_PARENT
    label = np.full(n, UNLABELLED, dtype=np.int32) if labels is None else np.asarray(labels, np.int32)
    return Tree(tuple(tokens), parent, np.arange(n, dtype=np.int32), label, source)


def branching_tree(tokens: Sequence[str], direction: str, root_label: int = UNLABELLED,
                   leaf_labels: Sequence[int] | None = None, source: str = "") -> Tree:
    """A binary tree over ``tokens``, left- or right-branching.

    ``left``: (((w1 w2) w3) w4); ``right``: (w1 (w2 (w3 w4))).  Leaves read
    their words; only the root (and optionally the leaves) carry labels.
    Zhu et al.'s S-LSTM-LR / S-LSTM-RR, and the structure given to plain
    sentences by ``npcomp predict``.
    """
    n = len(tokens)
    if n == 0:
        raise DataError("empty sentence", *_split_source(source))
    if direction not in ("left", "right"):
        raise ValueError(f"direction must be 'left' or 'right', not {direction!r}")
    n_nodes = 2 * n - 1
    parent = np.full(n_nodes, NO_PARENT, dtype=np.int32)
    token_index = np.full(n_nodes, NO_TOKEN, dtype=np.int32)
    label = np.full(n_nodes, UNLABELLED, dtype=np.int32)
    # leaves first (nodes 0..n-1), then the n-1 inner nodes bottom-up
    token_index[:n] = np.arange(n)
    if leaf_labels is not None:
        label[:n] = np.asarray(leaf_labels, dtype=np.int32)
    if n > 1:
        if direction == "left":
            inner_left = 0
            for step in range(n - 1):
                node = n + step
                parent[inner_left] = node
                parent[step + 1] = node
                inner_left = node
        else:
            inner_right = n - 1
            for step in range(n - 1):
                node = n + step
                parent[n - 2 - step] = node
                parent[inner_right] = node
                inner_right = node
    if root_label != UNLABELLED:
        label[-1] = root_label
    tree = Tree(tuple(tokens), parent, token_index, label, source)
    return _renumber_postorder(tree) if n > 2 else tree


def _renumber_postorder(tree: Tree) -> Tree:
    """Renumber nodes in post-order, so a node's children, sorted by index,
    are in sentence order (the leaves-first construction above mixes them up;
    ordered N-ary cells rely on the order)."""
    kids = [[] for _ in range(tree.n_nodes)]
    for node, up in enumerate(tree.parent.tolist()):
        if up >= 0:
            kids[up].append(node)
    # order children by the first token they cover
    first = np.full(tree.n_nodes, np.iinfo(np.int32).max, dtype=np.int64)
    for node in range(tree.n_nodes):
        if tree.token_index[node] != NO_TOKEN:
            first[node] = min(first[node], tree.token_index[node])
    for node in range(tree.n_nodes):  # parent index > child index in both constructions
        up = tree.parent[node]
        if up >= 0:
            first[up] = min(first[up], first[node])
    order = []
    stack = [(tree.root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        stack.append((node, True))
        for kid in sorted(kids[node], key=lambda k: first[k], reverse=True):
            stack.append((kid, False))
    new_id = np.empty(tree.n_nodes, dtype=np.int32)
    new_id[np.array(order)] = np.arange(tree.n_nodes, dtype=np.int32)
    parent = np.full(tree.n_nodes, NO_PARENT, dtype=np.int32)
    old_parent = tree.parent[order]
    has_parent = old_parent >= 0
    parent[has_parent] = new_id[old_parent[has_parent]]
    return Tree(tree.tokens, parent, tree.token_index[order].copy(),
                tree.label[order].copy(), tree.source)
