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

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import DataError

UNLABELLED = -1
NO_TOKEN = -1
NO_PARENT = -1


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


def decode_lines(data: bytes, source: str | Path) -> list:
    """The lines of UTF-8 ``data`` (bytes of a file, or of standard input)
    without their line ends (\\n, \\r\\n or \\r); a leading byte-order mark is
    dropped.  Raises DataError naming ``source``, the line and the byte offset
    of an undecodable byte, or UTF-16 text as such."""
    if data.startswith(_UTF16_BOMS) or (len(data) >= 4 and data[1:4:2] == b"\x00\x00"):
        raise DataError("UTF-16 text (a byte-order mark, or NUL bytes between the "
                        "characters): expected UTF-8; convert it, e.g. with "
                        "`iconv -f UTF-16 -t UTF-8`", source)
    start = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    try:
        text = data[start:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = start + error.start
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        raise DataError(f"byte {data[offset]:#04x} at column {column} (byte offset {offset}) "
                        "is not UTF-8 text", source, line) from None
    lines = _LINE_END.split(text)
    return lines[:-1] if lines[-1] == "" else lines  # no line after the last line end


def read_file_bytes(path: Path) -> bytes:
    """A file's bytes; DataError naming it when it is missing or unreadable."""
    if not path.is_file():
        raise DataError("no such file", path)
    try:
        return path.read_bytes()
    except OSError as error:
        raise DataError(f"cannot be read ({error.strerror})", path) from None


def read_text_lines(path: str | Path) -> list:
    """``decode_lines`` of a file's bytes; DataError when it cannot be read."""
    path = Path(path)
    return decode_lines(read_file_bytes(path), path)


# --------------------------------------------------------------------------
# PTB bracketed trees
# --------------------------------------------------------------------------

# brackets, and words: runs of anything but brackets and ASCII white space.  A
# word may hold other white space: a few SST leaves are one token with a
# no-break space inside, (2 8\xa01\/2), read as the token "8 1\/2"
_PTB_TOKEN = re.compile(r"\(|\)|[^()\x20\t\n\r\f\v]+")
_OTHER_SPACE = re.compile(r"[^\S\x20\t\n\r\f\v]")
# the largest label or index an int32 array holds
INT32_MAX = 2**31 - 1


def parse_ptb(text: str, source: str = "", require_labels: bool = True) -> Tree:
    """Parse one bracketed tree, e.g. ``(3 (2 It) (4 (2 's) (4 good)))``.

    A node is ``(LABEL WORD)`` (a leaf reading one WORD) or ``(LABEL node node
    ...)``; ``(3 a good film)``, several words in a leaf, is refused.  Words
    end at brackets and ASCII white space: other white space inside one (the
    SST's ``8\\xa01\\/2``) becomes a space, and ``to_ptb`` writes it back as a
    no-break space.  Integer labels become classes.  Iterative, so trees of
    any depth parse.

    With ``require_labels`` false, labels are optional, node by node
    (:func:`_read_optional`): ``((the movie) good)`` and ``(the movie)`` read
    as unlabelled phrases of words, ``(movie)`` as the word, and a tree
    labelled throughout with tags (``(S (NP it) (VP is))``, or ``to_ptb``'s
    ``X``) as unlabelled nodes.
    """
    path, line = _split_source(source)

    def fail(message: str):
        raise DataError(message, path, line)

    pieces = _ptb_pieces(text)
    if not pieces:
        fail("empty line (expected a bracketed tree)")
    if not require_labels:
        tokens, parent, token_index, label = _read_optional(_nest(pieces, fail), fail)
        return Tree(tuple(tokens), np.array(parent, dtype=np.int32),
                    np.array(token_index, dtype=np.int32), np.array(label, dtype=np.int32),
                    source)
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
            # the label ends at any white space (the word after it at ASCII white space)
            label_text, _, rest = pieces[position + 1].partition(" ")
            stack.append([_read_label(label_text, require_labels, fail), [], None])
            if rest:
                pieces[position + 1] = rest
                position += 1
            else:
                position += 2
            continue
        if piece == ")":
            root_done = _close_node(stack, (tokens, parent, token_index, label), fail)
            position += 1
            continue
        # a bare word: must be the only content of the innermost node
        if not stack:
            fail(f"word {piece!r} outside brackets")
        top = stack[-1]
        if top[1]:
            fail(f"word {piece!r} beside other children (a leaf is '(LABEL word)')")
        if top[2] is not None:
            fail(f"words {top[2]!r} and {piece!r} in one leaf: a leaf is '(LABEL word)', each "
                 "word in brackets of its own, e.g. (3 (2 a) (3 (3 good) (2 film)))")
        top[2] = piece
        position += 1
    if stack:
        fail(f"unbalanced '(': {len(stack)} bracket(s) not closed (truncated line?)")
    return Tree(tuple(tokens), np.array(parent, dtype=np.int32),
                np.array(token_index, dtype=np.int32), np.array(label, dtype=np.int32), source)


# a phrase-structure tag read as a label where labels are optional (NP, PRP$,
# -LRB-, punctuation tags, to_ptb's X), in a tree labelled throughout
_TAG = re.compile(r"[A-Z][A-Z0-9$]*(?:[-=+|][A-Z0-9$]+)*|-[A-Z]+-|[.,:;#$]|``|''")


def _nest(pieces: list, fail) -> list:
    """The bracketing as nested lists: a node is the list of its items, each a
    word (str) or a node; a piece right after '(' that holds other white space
    is two items (the label ends at any white space)."""
    stack: list = []
    root = None
    position = 0
    while position < len(pieces):
        piece = pieces[position]
        if root is not None:
            fail(f"text after the end of the tree: {' '.join(pieces[position:position + 3])!r}")
        if piece == "(":
            stack.append([])
        elif piece == ")":
            if not stack:
                fail("unbalanced ')'")
            node = stack.pop()
            if not node:
                fail("a node has neither a word nor children")
            if stack:
                stack[-1].append(node)
            else:
                root = node
        elif not stack:
            fail(f"word {piece!r} outside brackets")
        elif " " in piece and not stack[-1]:
            first, _, rest = piece.partition(" ")
            stack[-1].append(first)
            pieces[position] = rest
            continue
        else:
            stack[-1].append(piece)
        position += 1
    if stack:
        fail(f"unbalanced '(': {len(stack)} bracket(s) not closed (truncated line?)")
    return root


def _integer(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _labelled_body(items: list) -> bool:
    """Whether what follows a label is a leaf's word or a phrase's nodes."""
    body = items[1:]
    return (len(body) == 1 and isinstance(body[0], str)) or \
        (bool(body) and all(isinstance(item, list) for item in body))


def _tagged_throughout(root: list) -> bool:
    """Every node opens with an integer or a tag and then holds one word or
    only nodes: the tags are labels (read as unlabelled)."""
    stack = [root]
    while stack:
        items = stack.pop()
        first = items[0]
        if not (isinstance(first, str) and (_integer(first) or _TAG.fullmatch(first))
                and _labelled_body(items)):
            return False
        stack.extend(item for item in items[1:] if isinstance(item, list))
    return True


def _check_labelled_body(body: list, fail) -> None:
    """The SST's rule for a labelled node: one word, or nodes only."""
    if not body:
        fail("a node has neither a word nor children")
    words = [index for index, item in enumerate(body) if isinstance(item, str)]
    if len(body) > 1 and words:
        if len(words) > 1 and words[1] == words[0] + 1 and len(body) == len(words):
            fail(f"words {body[words[0]]!r} and {body[words[1]]!r} in one leaf: a leaf is "
                 "'(LABEL word)', each word in brackets of its own, e.g. "
                 "(3 (2 a) (3 (3 good) (2 film)))")
        fail(f"word {body[words[0]]!r} beside other children (a leaf is '(LABEL word)')")


def _read_optional(root: list, fail) -> tuple:
    """(tokens, parent, token_index, label) of a nested bracketing whose labels
    are optional: an integer opening a node is its label; tags are labels only
    in a tree tagged throughout; any other word is a word, and a node of one
    word is that word's leaf.  Nodes children before parents, left to right."""
    tagged = _tagged_throughout(root)
    tokens: list = []
    parent: list = []
    token_index: list = []
    label: list = []

    def add(node_label: int, word) -> int:
        parent.append(NO_PARENT)
        label.append(node_label)
        token_index.append(len(tokens) if word is not None else NO_TOKEN)
        if word is not None:
            tokens.append(word)
        return len(parent) - 1

    def opened(items: list) -> list:
        """[label, body, next item, child ids] of a node about to be read."""
        first = items[0]
        if isinstance(first, str) and (_integer(first) or tagged):
            node_label = _read_label(first, False, fail)
            _check_labelled_body(items[1:], fail)
            return [node_label, items[1:], 0, []]
        return [UNLABELLED, items, 0, []]

    stack = [opened(root)]
    while True:
        node_label, body, position, kids = top = stack[-1]
        if position < len(body) and not (len(body) == 1 and isinstance(body[0], str)):
            top[2] += 1
            item = body[position]
            if isinstance(item, str):
                kids.append(add(UNLABELLED, item))
            else:
                stack.append(opened(item))
            continue
        stack.pop()
        word = body[0] if len(body) == 1 and isinstance(body[0], str) else None
        node = add(node_label, word)
        for kid in kids:
            parent[kid] = node
        if not stack:
            return tokens, parent, token_index, label
        stack[-1][3].append(node)


def _ptb_pieces(text: str) -> list:
    """Brackets and words of a bracketed tree, in order."""
    pieces = _PTB_TOKEN.findall(text)
    if _OTHER_SPACE.search(text):
        # other white space inside a piece: one space inside, none around (none alone)
        pieces = [" ".join(piece.split()) for piece in pieces]
        pieces = [piece for piece in pieces if piece]
    return pieces


def _close_node(stack: list, nodes: tuple, fail) -> bool:
    """Close the innermost open node at a ')': append it to ``nodes`` (the
    lists tokens, parent, token_index, label), make it its children's parent
    and its parent's child; True when it was the root."""
    tokens, parent, token_index, label = nodes
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
    if not stack:
        return True
    if stack[-1][2] is not None:
        fail(f"word {stack[-1][2]!r} beside other children (a leaf is '(LABEL word)')")
    stack[-1][1].append(node)
    return False


def _read_label(text: str, require_labels: bool, fail) -> int:
    try:
        value = int(text)
    except ValueError:
        if require_labels:
            fail(f"label {text!r} is not an integer")
        return UNLABELLED
    if value < 0:
        fail(f"label {value} is negative")
    if value > INT32_MAX:
        fail(f"label {text[:30]!r} is far too large for a class")
    return value


# a process that trains several runs (a sweep's worker, the test suite) parses
# each treebank file once: the trees of the files read last, by their bytes
# (and the path their trees name as their source), so an edited file is
# parsed anew however quickly it changed.  Trees are never modified in place.
_PARSED: dict = {}
_PARSED_FILES = 8


def read_ptb_file(path: str | Path, require_labels: bool = True) -> list:
    """All trees of a PTB file, one per non-blank line."""
    path = Path(path)
    data = read_file_bytes(path)
    key = (str(path), require_labels, hashlib.blake2b(data, digest_size=16).digest())
    if key in _PARSED:
        return list(_PARSED[key])
    trees = []
    for number, text in enumerate(decode_lines(data, path), start=1):
        if not text.strip():
            raise DataError("empty line (expected a bracketed tree)", path, number)
        trees.append(parse_ptb(text, f"{path}:{number}", require_labels))
    if not trees:
        raise DataError("file holds no trees", path)
    if len(_PARSED) >= _PARSED_FILES:
        del _PARSED[next(iter(_PARSED))]   # the file read longest ago
    _PARSED[key] = tuple(trees)
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
        raise DataError(f"node(s) {lost} (counting from 1) do not reach the root: a cycle",
                        *_split_source(tree.source))
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
    return Tree(tree.tokens, new_parent, tree.token_index[order].copy(),
                tree.label[order].copy(), tree.source)
