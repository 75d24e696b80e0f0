"""``*.parents`` files: a parse as each node's head (1-based, 0 for the root),
one sentence per line, space-separated, as SICK ships them (dependency
``*.parents``, constituency ``*.cparents``) and ``npcomp parse`` writes the
SST's; and the tree such a line describes (:func:`parents_to_tree`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from npcomp.errors import DataError
from npcomp.data.readers.formats import (
    INT32_MAX,
    NO_TOKEN,
    UNLABELLED,
    Tree,
    _split_source,
    read_text_lines,
    renumber_postorder,
)


def write_parents(path: str | Path, heads_per_sentence: Sequence[Sequence[int]]) -> Path:
    """Write one sentence's heads per line, space-separated (SICK ``*.parents``).

    Atomic: written to a temporary file beside ``path`` and moved over it, so
    an interrupted run leaves either the old file or the whole new one.
    """
    path = Path(path)
    lines = []
    for number, heads in enumerate(heads_per_sentence, start=1):
        if len(heads) == 0:
            raise ValueError(f"sentence {number} has no heads: its line would be empty")
        lines.append(" ".join(str(int(head)) for head in heads) + "\n")
    # beside the target, so os.replace is a rename within one file system;
    # open() rather than mkstemp so the file gets the usual (umask) mode
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8") as out:
            out.writelines(lines)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path


def read_parents(path: str | Path) -> list:
    """Heads of a ``*.parents`` file: one list of ints per line.

    Raises DataError naming the file and line for an empty line or a
    non-integer entry, and naming the file if it does not exist.
    """
    path = Path(path)
    heads_per_sentence = []
    for number, text in enumerate(read_text_lines(path), start=1):
        if not text.strip():
            raise DataError("empty line (expected head indices)", path, number)
        heads_per_sentence.append(_read_ints(text, path, number))
    return heads_per_sentence


def parents_to_tree(heads: Sequence[int], tokens: Sequence[str], n_tokens: int | None = None, source: str = "") -> Tree:
    """A tree from one line of a ``*.parents`` or ``*.cparents`` file.

    heads:    ints (n_nodes,); ``heads[i - 1]`` is the 1-based parent of node
              i, 0 at the root
    tokens:   the sentence's words (T,)
    n_tokens: None for the dependency layout (``*.parents``): n_nodes == T and
              node i reads token i, so every node reads its word.  An int for the
              binarised constituency layout (``*.cparents``): nodes 1..n_tokens
              are the leaves, reading the tokens in order (n_tokens must be T),
              nodes above n_tokens are inner nodes reading no token.

    Checks: every entry in 0..n_nodes (so -1 is an error), exactly one root,
    no cycle; in the constituency layout, token nodes have no children and
    inner nodes have some (the leaves are exactly the tokens).  Nodes are
    renumbered children before parents, each node's children in sentence order
    (dependents by word position).  All nodes are unlabelled.  Raises DataError
    naming ``source`` ("file:line").
    """
    path, line = _split_source(source)

    def fail(message: str):
        raise DataError(message, path, line)

    n_words = len(tokens)
    if n_words == 0:
        fail("empty sentence")
    heads = np.asarray(heads, dtype=np.int64).reshape(-1)
    n_nodes = heads.shape[0]
    if n_tokens is None:
        if n_nodes != n_words:
            fail(f"{n_nodes} head(s) for {n_words} token(s)")
        token_index = np.arange(n_nodes, dtype=np.int32)
    else:
        if n_tokens != n_words:
            fail(f"{n_tokens} leaves for {n_words} token(s)")
        if n_nodes < n_tokens:
            fail(f"{n_nodes} node(s), fewer than the {n_tokens} token(s)")
        token_index = np.full(n_nodes, NO_TOKEN, dtype=np.int32)
        token_index[:n_tokens] = np.arange(n_tokens, dtype=np.int32)
    out_of_range = np.flatnonzero((heads < 0) | (heads > n_nodes))
    if out_of_range.size:
        node = int(out_of_range[0])
        fail(f"node {node + 1}: parent {int(heads[node])} out of range 0..{n_nodes}")
    roots = np.flatnonzero(heads == 0) + 1
    if roots.size != 1:
        fail(
            "no root (no 0 entry)"
            if roots.size == 0
            else f"{roots.size} roots (nodes {', '.join(map(str, roots[:10]))}); expected one"
        )
    parent = (heads - 1).astype(np.int32)
    if n_tokens is not None:
        n_children = np.bincount(parent[parent >= 0], minlength=n_nodes)
        leaves_with_children = np.flatnonzero(n_children[:n_tokens])
        if leaves_with_children.size:
            fail(f"token node {int(leaves_with_children[0]) + 1} has children: the leaves must be exactly the tokens")
        childless = np.flatnonzero(n_children[n_tokens:] == 0)
        if childless.size:
            fail(f"inner node {int(childless[0]) + n_tokens + 1} has no children")
    label = np.full(n_nodes, UNLABELLED, dtype=np.int32)
    return renumber_postorder(Tree(tuple(tokens), parent, token_index, label, source))


def _read_ints(text: str, path: Path, line: int) -> list:
    values = []
    for piece in text.split():
        try:
            values.append(int(piece))
        except ValueError:
            raise DataError(f"{piece[:30]!r} is not an integer", path, line) from None
        if abs(values[-1]) > INT32_MAX:
            raise DataError(f"{piece[:30]!r} is far too large for an index", path, line)
    return values
