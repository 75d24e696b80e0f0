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
parsed or read as a chain when it is.  With ``keep_given`` (the estimators
of ``npcomp.estimators``) a bracketed tree, or a Tree already read, is kept
as given whatever ``--tree`` says for plain sentences: such trees are a
treebank's, which the caller reads as the run's structure says
(``tasks.restructured``), as a task's files are read.

What a line is: ``input`` says.  ``"text"`` reads every line as a
sentence (a sentence may start with "(": 115 of the SST's training
sentences do, "(Taymor) utilizes ..."); ``"tree"`` requires every line to
be a bracketed tree; ``"auto"`` takes a line that starts with "(" for a
tree where it is a complete one with a bracket inside, and reads it as
text otherwise, a sentence in one pair of brackets included (the plan says
why, ``TreePlan.not_a_tree``, so that the caller warns naming it),
except a line that opens as a labelled tree does, "(" and a class number
("(3 (2 a) (3 film)") or name: that is a tree, refused where it is broken;
None (explain's TREE, where a bracket typed wrong is a typo to show) takes
every line that starts with "(" for a tree, refusing a broken one.

A node tag that is one of ``class_names`` (a run or estimator whose classes
are names: ``(positive (2 it) (3 good))``) is refused naming the line:
never read as the word "positive".

A sentence may come with its parse (``TextTrees.plan``'s ``heads``: a file's
``parents`` column, SICK's ``.parents`` convention): where ``parsed`` would
parse it, that parse is used instead of spaCy's.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple, Sequence

from npcomp.data.text import TREE_CHOICES
from npcomp.errors import ConfigError
from npcomp.data.readers.formats import Tree, _split_source, branching_tree, chain_tree, check_control
from npcomp.data.readers.ptb import parse_ptb
from npcomp.errors import DataError
from npcomp.data.readers.parents import parents_to_tree
from npcomp.data.text.parsed_trees import TextParser, carry_labels
from npcomp.data.text.sst_tokens import sst_tokens
from npcomp.data.readers.restructure import rebracket, sentence_chain


class TreePlan(NamedTuple):
    """One sentence on its way to a tree (``TextTrees.plan``)."""

    tokens: list
    where: str  # "file:line", the tree's source
    action: str  # given, parsed, parents, right, left or chain
    given: Tree | None  # a bracketed line's tree
    heads: list | None  # a given parse (1-based, 0 at the root)
    not_a_tree: str = ""  # input "auto": why a line opening with "(" was read as text


INPUT_CHOICES = ("auto", "text", "tree")
# how a labelled tree opens, "(3 ": with input "auto" such a line is a tree,
# and a broken one is refused as a broken tree, not read as text
_LABELLED_TREE = re.compile(r"\(\s*[0-9]+\s")


def check_input(value) -> None:
    """ConfigError (naming the option ``input``) for anything but ``INPUT_CHOICES``."""
    if value not in INPUT_CHOICES:
        raise ConfigError("input", f"must be one of {', '.join(INPUT_CHOICES)}, not {value!r}")


def read_as_text(plans: Sequence[TreePlan], names: Sequence[str], switch: str) -> str | None:
    """The warning for the plans read as text though they start with "("
    (input "auto"), each named by ``names[i]``; None when there are none.
    ``switch``: how the caller says "this is text" (``input='text'``)."""
    found = [(name, plan.not_a_tree) for name, plan in zip(names, plans) if plan.not_a_tree]
    if not found:
        return None
    shown = ", ".join(name for name, _ in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    first, reason = found[0]
    what = (
        "starts with '(' but is not a complete bracketed tree"
        if len(found) == 1
        else "start with '(' but are not complete bracketed trees"
    )
    why = reason if len(found) == 1 else f"{first}: {reason}"
    return f"{shown}{more} {what} ({why}): read as plain text ({switch} reads every sentence as text, and says nothing)"


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
        raise ConfigError(
            "tree",
            f"a sequence model reads every sentence as a chain: --tree {tree} does not apply to it (leave --tree out)",
        )


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
    keep_given: a bracketed tree (or a Tree) keeps its brackets whatever
               ``tree`` says: ``tree`` is for plain sentences only
    input:     what a line is (module docstring): "auto", "text", "tree", or
               None for a line that opens with "(" is a tree
    class_names: the run's class names where they are names: a node tag
               among them is refused (module docstring); None: none checked
    """

    def __init__(
        self,
        structure: str,
        tree: str | None = None,
        parser: TextParser | None = None,
        tokenise: Callable[[str], list] = sst_tokens,
        warn: Callable[[str], None] | None = None,
        n_classes: int | None = None,
        keep_given: bool = False,
        input: str | None = None,
        class_names: Sequence[str] | None = None,
    ):
        check_tree(structure, tree)
        if input is not None:
            check_input(input)
        self.input = input
        self.class_names = class_names
        self.structure = structure
        self.keep_given = keep_given
        self.given = tree
        self.tree = tree if tree is not None else default_tree(structure)
        kind = parsed_kind(structure)
        self.parser = parser if parser is not None or kind is None else TextParser(kind)
        self.tokenise = tokenise
        self.warn = warn
        self.n_classes = n_classes
        self.fell_back = False
        self.made: list = []  # per line of the latest call: how its tree was made

    def __call__(self, lines: Sequence[str], source: str = "<stdin>", skip_blank: bool = False) -> list:
        """One tree per line (``source:line`` names a bad one), in order; a
        blank line is refused, or skipped with ``skip_blank``."""
        plans = [
            self.plan(line, source, number)
            for number, line in enumerate(lines, start=1)
            if line.strip() or not skip_blank
        ]
        return self.build(plans)

    def plan(
        self, text: str, source: str, number: int, bracketed: bool | None = None, heads: Sequence[int] | None = None
    ) -> TreePlan:
        """What becomes of one sentence, the ``number``-th line of ``source``.

        bracketed: whether ``text`` is a bracketed tree; None: as ``input``
                   says (a line typed or piped), False for a text column,
                   where "(" is a word
        heads:     the sentence's parse (1-based heads, 0 at the root, one per
                   word): used in place of spaCy's; plain text is then split at
                   white space only, so that the heads meet their words
        """
        check_control(text, source, number)  # before any word is read
        text = text.strip()
        where = f"{source}:{number}"
        if not text:
            raise DataError("empty line (expected a sentence or a bracketed tree)", source, number)
        not_a_tree = ""
        if bracketed is None and self.input == "auto" and text.startswith("(") and not self._opens_labelled(text):
            try:
                given = self._parsed(text, where)
            except DataError as error:
                given, not_a_tree = None, error.reason
            if given is not None and "(" not in text[1:]:
                # "( Kirshner wins , but it 's close . )": one unlabelled bracket
                # round the words carries no tree; the SST has such sentences
                given, not_a_tree = None, "one bracket round its words, no tree inside"
        elif bracketed is None and self.input == "tree" and not text.startswith("("):
            raise DataError(
                "not a bracketed tree (every sentence is a tree here, e.g. "
                "(3 (2 a) (3 film)); plain text is read with the text input)",
                source,
                number,
            )
        else:
            if bracketed is None:
                bracketed = text.startswith("(") and self.input != "text"
            given = self._parsed(text, where) if bracketed else None
        if given is None:
            tokens = text.split() if heads is not None else self.tokenise(text)
            if not tokens:
                raise DataError("no words (expected a sentence or a bracketed tree)", source, number)
            return self._plan(tokens, where, None, heads)._replace(not_a_tree=not_a_tree)
        if self.n_classes is not None:
            given.validate(self.n_classes)
        return self.plan_tree(given, heads)

    def _opens_labelled(self, text: str) -> bool:
        """Whether a line opens as a labelled tree: "(" and a class number, or
        a class name followed by more ("(positive (2 it) (3 good))")."""
        if _LABELLED_TREE.match(text):
            return True
        first = text[1:].split(maxsplit=1)
        return bool(self.class_names) and len(first) == 2 and first[0] in self.class_names

    def _parsed(self, text: str, where: str) -> Tree:
        """A bracketed line's tree, labels optional; a class name as a node tag refused."""
        return parse_ptb(text, where, require_labels=False, class_names=self.class_names)

    def plan_tree(self, given: Tree, heads: Sequence[int] | None = None) -> TreePlan:
        """What becomes of a tree already read (a treebank file's), named by its source."""
        return self._plan(list(given.tokens), given.source, given, heads)

    def _plan(self, tokens: list, where: str, given: Tree | None, heads: Sequence[int] | None) -> TreePlan:
        action = self._action(given)
        if heads is not None:
            heads = [int(head) for head in heads]
            if len(heads) != len(tokens):
                raise DataError(
                    f"{len(heads)} head(s) for {len(tokens)} word(s): one head "
                    "per word, the words split at white space",
                    *_split_source(where),
                )
            parents_to_tree(heads, tokens, source=where)  # a tree, whether or not it is used
            if action == "parsed":
                action = "parents"
        return TreePlan(tokens, where, action, given, heads)

    def build(self, plans: Sequence[TreePlan]) -> list:
        """The trees of ``plans``, in order; the sentences to parse are parsed
        together.  ``made`` then says, per plan, how its tree was made."""
        to_parse = [index for index, plan in enumerate(plans) if plan.action == "parsed"]
        heads = self._heads([plans[index].tokens for index in to_parse]) if to_parse else []
        if heads is None:  # fell back: right-branching trees instead
            heads = [None] * len(to_parse)
        parsed = dict(zip(to_parse, heads))
        self.made = [
            "right" if index in parsed and parsed[index] is None else plan.action for index, plan in enumerate(plans)
        ]
        trees = []
        for plan, action, index in zip(plans, self.made, range(len(plans))):
            tokens, where, given = plan.tokens, plan.where, plan.given
            if action == "given":
                trees.append(given)
            elif action in ("parsed", "parents"):
                sentence_heads = parsed[index] if action == "parsed" else plan.heads
                tree = self.parser.tree(sentence_heads, tokens, where)
                # a bracketed line's labels go to the nodes with its phrases' words
                trees.append(tree if given is None else carry_labels(given, tree))
            elif action == "chain":
                trees.append(sentence_chain(given) if given is not None else chain_tree(tokens, source=where))
            elif given is not None:
                trees.append(rebracket(given, action))
            else:
                trees.append(branching_tree(tokens, action, source=where))
        return trees

    def _action(self, given: Tree | None) -> str:
        """What becomes of a line: "given" (its own brackets), "parsed",
        "right", "left" or "chain"."""
        if given is not None and self.keep_given:
            return "given"
        if given is not None and self.given is None and self.tree == "parsed" and self.structure != "dependency":
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
                self.warn(
                    f"plain sentences get right-branching trees, not parsed ones: "
                    f"{error} (--tree right chooses them without this message)"
                )
            return None
