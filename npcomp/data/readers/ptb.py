"""PTB bracketed trees: one tree a line, as the SST writes them.

:func:`parse_ptb` reads a line, strictly (the SST's format: a label on every
node, a leaf ``(LABEL word)``) or with labels optional node by node (trees
users type); :func:`read_ptb_file` reads a file of them, named by file and
line when one is bad.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from npcomp.errors import DataError
from npcomp.data.readers.formats import (
    INT32_MAX,
    NO_PARENT,
    NO_TOKEN,
    UNLABELLED,
    Tree,
    _split_source,
    check_control,
    decode_lines,
    read_file_bytes,
)


# brackets, and words: runs of anything but brackets and ASCII white space.  A
# word may hold other white space: a few SST leaves are one token with a
# no-break space inside, (2 8\xa01\/2), read as the token "8 1\/2"
_PTB_TOKEN = re.compile(r"\(|\)|[^()\x20\t\n\r\f\v]+")
_OTHER_SPACE = re.compile(r"[^\S\x20\t\n\r\f\v]")


def parse_ptb(text: str, source: str = "", require_labels: bool = True, class_names=None) -> Tree:
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
    ``X``) as unlabelled nodes.  ``class_names`` (labels optional): a node
    opening with one of them, ``(positive (2 it) (3 good))``, is refused, as
    a class name where a class number belongs, never read as a word.
    """
    path, line = _split_source(source)

    def fail(message: str):
        raise DataError(message, path, line)

    check_control(text, path, line)
    pieces = _ptb_pieces(text)
    if not pieces:
        fail("empty line (expected a bracketed tree)")
    if not require_labels:
        tokens, parent, token_index, label = _read_optional(_nest(pieces, fail), fail, set(class_names or ()))
        return Tree(
            tuple(tokens),
            np.array(parent, dtype=np.int32),
            np.array(token_index, dtype=np.int32),
            np.array(label, dtype=np.int32),
            source,
        )
    tokens, parent, token_index, label = _read_strict(pieces, fail)
    return Tree(
        tuple(tokens),
        np.array(parent, dtype=np.int32),
        np.array(token_index, dtype=np.int32),
        np.array(label, dtype=np.int32),
        source,
    )


def _read_strict(pieces: list, fail) -> tuple:
    """(tokens, parent, token_index, label) of a tree labelled at every node
    (the SST's format), from its pieces; ``fail(message)`` raises naming the line."""
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
            fail(f"text after the end of the tree: {' '.join(pieces[position : position + 3])!r}")
        if piece == "(":
            if position + 1 >= len(pieces) or pieces[position + 1] in "()":
                fail("'(' must be followed by a label")
            # the label ends at any white space (the word after it at ASCII white space)
            label_text, _, rest = pieces[position + 1].partition(" ")
            stack.append([_read_label(label_text, True, fail), [], None])
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
            fail(
                f"words {top[2]!r} and {piece!r} in one leaf: a leaf is '(LABEL word)', each "
                "word in brackets of its own, e.g. (3 (2 a) (3 (3 good) (2 film)))"
            )
        top[2] = piece
        position += 1
    if stack:
        fail(f"unbalanced '(': {len(stack)} bracket(s) not closed (truncated line?)")
    return tokens, parent, token_index, label


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
            fail(f"text after the end of the tree: {' '.join(pieces[position : position + 3])!r}")
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
    return (len(body) == 1 and isinstance(body[0], str)) or (
        bool(body) and all(isinstance(item, list) for item in body)
    )


def _tagged_throughout(root: list) -> bool:
    """Every node opens with an integer or a tag and then holds one word or
    only nodes: the tags are labels (read as unlabelled)."""
    stack = [root]
    while stack:
        items = stack.pop()
        first = items[0]
        if not (isinstance(first, str) and (_integer(first) or _TAG.fullmatch(first)) and _labelled_body(items)):
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
            fail(
                f"words {body[words[0]]!r} and {body[words[1]]!r} in one leaf: a leaf is "
                "'(LABEL word)', each word in brackets of its own, e.g. "
                "(3 (2 a) (3 (3 good) (2 film)))"
            )
        fail(f"word {body[words[0]]!r} beside other children (a leaf is '(LABEL word)')")


def _read_optional(root: list, fail, class_names: set = frozenset()) -> tuple:
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
        if isinstance(first, str) and first in class_names and len(items) > 1 and not _integer(first):
            fail(
                f"the node tag {first!r} is a class name: a bracketed tree is labelled with "
                "class numbers (0 for the first class, ...), not names"
            )
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
        del _PARSED[next(iter(_PARSED))]  # the file read longest ago
    _PARSED[key] = tuple(trees)
    return trees
