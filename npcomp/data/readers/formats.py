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
  (``a.toks``, ``a.parents``, ``a.cparents``, ``sim.txt`` ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from npcomp.errors import DataError

UNLABELLED = -1
NO_TOKEN = -1
NO_PARENT = -1
# the largest label or index an int32 array holds
INT32_MAX = 2**31 - 1


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
    relations:   per token, its dependency relation to its head (a str), or None

    The children of a node, in order, are the nodes whose ``parent`` points
    to it, sorted by node index.
    """

    tokens: tuple
    parent: np.ndarray
    token_index: np.ndarray
    label: np.ndarray
    source: str = ""
    _children: list | None = field(default=None, repr=False)
    # the dependency relation of each token to its head (SICK's ``*.rels``), or None
    relations: tuple | None = None

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
        return Tree(
            self.tokens,
            self.parent,
            self.token_index,
            np.asarray(label, dtype=np.int32),
            self.source,
            relations=self.relations,
        )

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
                # a space inside a word as the SST writes it, so the text reads back alike
                parts.append(self.tokens[self.token_index[node]].replace(" ", "\xa0"))
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
# text: UTF-8, decoded line by line so a bad byte is named by its place
# --------------------------------------------------------------------------

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_LINE_END = re.compile(r"\r\n|\r|\n")  # the line ends Python's text files recognise


def _utf16(data: bytes) -> bool:
    """Whether ``data`` looks like UTF-16: a byte-order mark, or ASCII text
    with a NUL byte beside every character (the high bytes of UTF-16), not a
    stray NUL or two in UTF-8."""
    if data.startswith(_UTF16_BOMS):
        return True
    head = data[:400]
    if len(head) < 4:
        return False
    halves = (head[0::2], head[1::2])
    return any(
        half.count(0) >= 0.9 * len(half) and other.count(0) <= 0.1 * len(other)
        for half, other in (halves, halves[::-1])
    )


# files that are not text, by the bytes they open with
_NOT_TEXT = (
    (b"\x1f\x8b", "gzip-compressed: decompress it first (`gunzip -k FILE`)"),
    (b"PK\x03\x04", "a zip archive: unpack it first (`unzip FILE`)"),
    (b"BZh", "bzip2-compressed: decompress it first (`bunzip2 -k FILE`)"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it first (`unxz -k FILE`)"),
)


def decode_lines(data: bytes, source: str | Path) -> list:
    """The lines of UTF-8 ``data`` (bytes of a file, or of standard input)
    without their line ends (\\n, \\r\\n or \\r); a leading byte-order mark is
    dropped.  Raises DataError naming ``source``, the line and the byte offset
    of an undecodable byte, UTF-16 text as such, and a compressed file or
    archive as what it is."""
    for magic, what in _NOT_TEXT:
        if data.startswith(magic):
            raise DataError(f"not text but {what}", source)
    if _utf16(data):
        raise DataError(
            "UTF-16 text (a byte-order mark, or NUL bytes between the "
            "characters): expected UTF-8; convert it, e.g. with "
            "`iconv -f UTF-16 -t UTF-8`",
            source,
        )
    start = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = start + error.start
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        raise DataError(
            f"byte {data[offset]:#04x} at column {column} (byte offset {offset}) is not UTF-8 text", source, line
        ) from None
    lines = _LINE_END.split(text)
    return lines[:-1] if lines[-1] == "" else lines  # no line after the last line end


def read_file_bytes(path: Path) -> bytes:
    """A file's bytes; DataError naming it when it is missing, unreadable,
    or no regular file (a directory, a FIFO, a device such as /dev/null)."""
    if not path.is_file():
        raise DataError(_not_a_file(path), path)
    try:
        return path.read_bytes()
    except OSError as error:
        raise DataError(f"cannot be read ({error.strerror})", path) from None


def _not_a_file(path: Path) -> str:
    """What ``path`` is, when it is no regular file."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return "no such file"
    kind = (
        "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    return f"{kind}, not a file: give the path of a file (npcomp reads it more than once)"


# control characters no text holds: C0 and C1 but the white space (tab, line
# ends, \x0b, \x0c, \x1c-\x1f, \x85), and DEL; a NUL at a word's end even
# vanishes from NumPy's string arrays, making two words of a vocabulary one
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")


def check_control(text: str, source, line: int | None = None) -> None:
    """DataError naming ``source``, the line and the column of a control
    character in ``text`` (a sentence or a tree, before its words are read)."""
    found = _CONTROL.search(text)
    if found:
        raise DataError(
            f"a control character, U+{ord(found[0]):04X}, at character "
            f"{found.start() + 1}: text holds none (a NUL, an escape...); remove it, e.g. with "
            "`tr -d '\\000-\\010\\016-\\033\\177'`",
            source,
            line,
        )


def read_text_lines(path: str | Path) -> list:
    """``decode_lines`` of a file's bytes; DataError when it cannot be read."""
    path = Path(path)
    return decode_lines(read_file_bytes(path), path)


def chain_tree(tokens: Sequence[str], labels: Sequence[int] | None = None, source: str = "") -> Tree:
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


def branching_tree(
    tokens: Sequence[str],
    direction: str,
    root_label: int = UNLABELLED,
    leaf_labels: Sequence[int] | None = None,
    source: str = "",
) -> Tree:
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
    return renumber_postorder(tree) if n > 2 else tree


def renumber_postorder(tree: Tree) -> Tree:
    """Renumber nodes in post-order, children before parents and each node's
    children, sorted by index, in sentence order (ordered N-ary cells rely on it).

    ``tree`` may be numbered in any order (the leaves-first construction of
    :func:`branching_tree`, the 1-based node numbers of a ``*.parents`` file)
    but must have exactly one node with parent -1.  Children are ordered by
    their own token if they read one (dependency trees: by word position),
    else by the first token they cover (constituency inner nodes).  Raises
    DataError if some node does not reach the root (a cycle).  Iterative.
    """
    n_nodes = tree.n_nodes
    parent = tree.parent.tolist()  # Python lists: the loops below index scalars
    token_index = tree.token_index.tolist()
    kids: list = [[] for _ in range(n_nodes)]
    for node, up in enumerate(parent):
        if up >= 0:
            kids[up].append(node)
    root = parent.index(NO_PARENT)
    preorder = [root]
    for node in preorder:  # grows while iterating: a breadth-first walk
        preorder.extend(kids[node])
    if len(preorder) < n_nodes:
        reached = np.zeros(n_nodes, dtype=bool)
        reached[preorder] = True
        lost = ", ".join(str(node + 1) for node in np.flatnonzero(~reached)[:10])
        raise DataError(f"node(s) {lost} (counting from 1) do not reach the root: a cycle", *_split_source(tree.source))
    # sort key: the node's own token, else the smallest key among its children
    key = [word if word != NO_TOKEN else n_nodes for word in token_index]
    for node in reversed(preorder):  # children before parents
        up = parent[node]
        if up >= 0 and token_index[up] == NO_TOKEN:
            key[up] = min(key[up], key[node])
    order = []
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        stack.append((node, True))
        for kid in sorted(kids[node], key=key.__getitem__, reverse=True):
            stack.append((kid, False))
    new_id = np.empty(n_nodes, dtype=np.int32)
    new_id[order] = np.arange(n_nodes, dtype=np.int32)
    new_parent = np.full(n_nodes, NO_PARENT, dtype=np.int32)
    old_parent = tree.parent[order]
    has_parent = old_parent >= 0
    new_parent[has_parent] = new_id[old_parent[has_parent]]
    return Tree(tree.tokens, new_parent, tree.token_index[order].copy(), tree.label[order].copy(), tree.source)
