"""Trees for sentences a user types: a PTB bracketed tree, or plain
whitespace-tokenised text given the tree the run's structure reads.

A plain sentence becomes a right-branching binary tree for the models
trained on the SST's gold trees (a left-branching one for ``left``), a
chain for the sequence models, and — through a parser the caller passes —
a dependency tree for a dependency run.  A bracketed tree keeps its own
brackets, re-bracketed for ``left``/``right`` and read as a chain for
``chain``.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .formats import DataError, Tree, branching_tree, parse_ptb
from .tasks import rebracket, sentence_chain


def trees_from_lines(lines: Sequence[str], structure: str, source: str = "<stdin>",
                     dependency_parser: Callable[[str, str], Tree] | None = None) -> list:
    """One tree per line (``source:line`` names a bad one).  ``structure``:
    the run's (gold, left, right, chain, dependency); ``dependency_parser``
    (text, source) -> Tree is required for ``dependency``."""
    if structure == "dependency" and dependency_parser is None:
        raise ValueError("dependency trees need a dependency parser")
    trees = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        where = f"{source}:{number}"
        if not text:
            raise DataError("empty line (expected a sentence or a bracketed tree)", source,
                            number)
        if structure == "dependency":  # parsed as the training sentences were
            tokens = (parse_ptb(text, where, require_labels=False).tokens
                      if text.startswith("(") else text.split())
            trees.append(dependency_parser(" ".join(tokens), where))
        elif text.startswith("("):
            trees.append(parse_ptb(text, where, require_labels=False))
        else:
            direction = "left" if structure == "left" else "right"
            trees.append(branching_tree(text.split(), direction, source=where))
    if structure == "chain":
        return [sentence_chain(tree) for tree in trees]
    if structure in ("left", "right"):
        return [rebracket(tree, structure) for tree in trees]
    return trees
