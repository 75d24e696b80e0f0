"""Trees for sentences a user types: a PTB bracketed tree, or plain text,
tokenised as the SST is (``sst_tokens.py``) and given the tree ``--tree``
chooses.

==========  ================================================================
``--tree``  a plain sentence becomes
==========  ================================================================
parsed      its spaCy parse, of the kind the run reads (``parsed_kind``): the
            dependency tree for a run trained on dependency trees (the
            Child-Sum Tree-LSTM), the binarised phrase-structure tree
            (``parsed_trees.binarise``) for one trained on binary trees
            (Constituency Tree-LSTM, S-LSTM, LSTM-RNN, RNTN, RecNN)
right       a right-branching binary tree; ``left`` a left-branching one
chain       a chain (what a sequence model reads, and nothing else)
==========  ================================================================

Unset, ``--tree`` is the run's own: ``parsed`` for a run trained on the
treebank's trees or on dependency parses (falling back to ``right``, with a
message saying how to install the parser, when spaCy is not installed),
the direction of a left- or right-branching run (Zhu's S-LSTM-LR/RR), the
chain of a sequence model; a sequence model takes no other.  A bracketed
tree keeps its own brackets unless ``--tree`` is given (a dependency run
parses its words, as its training sentences were), and is re-bracketed,
parsed or read as a chain when it is.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .choices import TREE_CHOICES
from .errors import ConfigError
from .formats import Tree, branching_tree, chain_tree, parse_ptb
from .errors import DataError
from .parsed_trees import TextParser, carry_labels
from .sst_tokens import sst_tokens
from .restructure import rebracket, sentence_chain

def parsed_kind(structure: str) -> str | None:
    """What ``parsed`` means for a run of ``structure`` (its config's): a
    ``dependency`` tree, a ``binary`` tree, or None for a sequence run
    (``chain``), which reads chains whatever the parse."""
    if structure == "chain":
        return None
    return "dependency" if structure == "dependency" else "binary"


def default_tree(structure: str) -> str:
    """The ``--tree`` of a run that was given none."""
    if structure == "chain":
        return "chain"
    return structure if structure in ("left", "right") else "parsed"


def check_tree(structure: str, tree: str | None) -> None:
    """ConfigError (a usage error, naming ``--tree``) for a choice the run cannot take."""
    if tree is None:
        return
    if tree not in TREE_CHOICES:
        raise ConfigError("tree", f"must be one of {', '.join(TREE_CHOICES)}, not {tree!r}")
    if structure == "chain" and tree != "chain":
        raise ConfigError("tree", f"a sequence model reads every sentence as a chain: "
                                  f"--tree {tree} does not apply to it (leave --tree out)")


class TextTrees:
    """Lines of text (bracketed trees or plain sentences) to the trees a run reads.

    structure: the run's structure (its config's: gold, left, right, chain,
               dependency, constituency)
    tree:      ``--tree`` (``TREE_CHOICES``), None for the run's own
               (``default_tree``, falling back to ``right`` without spaCy)
    parser:    a ``parsed_trees.TextParser`` of the run's kind; None: one is
               made on first need
    tokenise:  plain text -> tokens (default: the SST's conventions)
    warn:      called with the fallback message, once, when the default
               ``parsed`` falls back to ``right``
    n_classes: the run's classes: a bracketed line's labels must be among
               them (DataError naming the line otherwise); None: unchecked
    """

    def __init__(self, structure: str, tree: str | None = None, parser: TextParser | None = None,
                 tokenise: Callable[[str], list] = sst_tokens,
                 warn: Callable[[str], None] | None = None, n_classes: int | None = None):
        check_tree(structure, tree)
        self.structure = structure
        self.given = tree
        self.tree = tree if tree is not None else default_tree(structure)
        kind = parsed_kind(structure)
        self.parser = parser if parser is not None or kind is None else TextParser(kind)
        self.tokenise = tokenise
        self.warn = warn
        self.n_classes = n_classes
        self.fell_back = False
        self.made: list = []  # per line of the latest call: how its tree was made

    def __call__(self, lines: Sequence[str], source: str = "<stdin>",
                 skip_blank: bool = False) -> list:
        """One tree per line (``source:line`` names a bad one), in order; a
        blank line is refused, or skipped with ``skip_blank``."""
        plans = []  # (tokens, where, what to do, a bracketed line's tree or None)
        for number, line in enumerate(lines, start=1):
            text = line.strip()
            where = f"{source}:{number}"
            if not text and skip_blank:
                continue
            if not text:
                raise DataError("empty line (expected a sentence or a bracketed tree)", source,
                                number)
            given = parse_ptb(text, where, require_labels=False) if text.startswith("(") else None
            if given is not None and self.n_classes is not None:
                given.validate(self.n_classes)
            tokens = list(given.tokens) if given is not None else self.tokenise(text)
            if not tokens:
                raise DataError("no words (expected a sentence or a bracketed tree)", source,
                                number)
            plans.append((tokens, where, self._action(given), given))
        to_parse = [index for index, plan in enumerate(plans) if plan[2] == "parsed"]
        heads = self._heads([plans[index][0] for index in to_parse]) if to_parse else None
        if heads is None:  # fell back: right-branching trees instead
            plans = [(tokens, where, "right" if action == "parsed" else action, given)
                     for tokens, where, action, given in plans]
        parsed = dict(zip(to_parse, heads or []))
        self.made = [action for _, _, action, _ in plans]
        trees = []
        for index, (tokens, where, action, given) in enumerate(plans):
            if action == "given":
                trees.append(given)
            elif action == "parsed":
                tree = self.parser.tree(parsed[index], tokens, where)
                # a bracketed line's labels go to the nodes with its phrases' words
                trees.append(tree if given is None else carry_labels(given, tree))
            elif action == "chain":
                trees.append(sentence_chain(given) if given is not None
                             else chain_tree(tokens, source=where))
            elif given is not None:
                trees.append(rebracket(given, action))
            else:
                trees.append(branching_tree(tokens, action, source=where))
        return trees

    def _action(self, given: Tree | None) -> str:
        """What becomes of a line: "given" (its own brackets), "parsed",
        "right", "left" or "chain"."""
        if given is not None and self.given is None and self.tree == "parsed" \
                and self.structure != "dependency":
            return "given"
        return self.tree

    def _heads(self, sentences: list) -> list | None:
        """The parses of ``sentences``; None when the default ``parsed`` falls
        back for want of spaCy (an explicit ``--tree parsed`` raises)."""
        try:
            return self.parser.heads(sentences)
        except ImportError as error:
            if self.given is not None:
                raise
            self.fell_back = True
            if self.warn is not None:
                self.warn(f"plain sentences get right-branching trees, not parsed ones: "
                          f"{error} (--tree right chooses them without this message)")
            return None
