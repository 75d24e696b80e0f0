"""Trees from a dependency parse: the binarised phrase-structure tree the
binary-tree models read, labels carried from the SST's phrases, and how many
of those phrases a parse reproduces.

A dependency parse (one head per token) becomes a binary tree with the
tokens as its leaves, in order, by joining every head with its dependents
one at a time (:func:`binarise`).  The order of joining is the rule:

* ``right-first`` (the default): a head joins its right dependents, nearest
  first, then its left dependents, nearest first.  A verb joins its objects
  before its subject, a noun its post-modifiers before its determiner and
  adjectives: (she (saw (the film))), (a (good (film (about love)))).  This
  is the head-outward order of the Penn Treebank's phrase structure (a VP
  inside the S), which the SST's trees are binarisations of, and on the
  SST's dev sentences it reproduces more of the treebank's phrases than
  joining by distance or the left dependents first (docs/plain-sentences.md:
  span recall of each rule).
* ``left-first``: the left dependents first, then the right ones.
* ``nearest``: by distance from the head, the right one first at a tie.

A non-projective parse (an arc crossing another) has subtrees whose words
are not contiguous, which no tree over the words in order can hold.  Such
parses are first made projective by lifting (:func:`projective_heads`): a
token whose arc from its head spans a word the head does not dominate is
re-attached to its head's head, until no arc crosses; the words keep their
order and each is a leaf exactly once.

Labels (:func:`carry_labels`): a node of a parsed tree gets the label of
the SST phrase that covers exactly its words, as Tai et al. (2015, Sec.
5.1) label dependency nodes; other nodes stay unlabelled.  Span recall
(:func:`span_recall`): the share of the SST's phrases, of two words or
more and short of the whole sentence, whose words some node of the parsed
tree covers exactly.

Nothing here needs spaCy; :class:`TextParser` uses it (through
``dependency_parser.SpacyParser``) to parse token lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from npcomp.data.readers.formats import NO_PARENT, NO_TOKEN, UNLABELLED, Tree, _split_source, renumber_postorder
from npcomp.data.readers.parents import parents_to_tree
from npcomp.errors import DataError

ORDERS = ("right-first", "left-first", "nearest")
# what "parsed" means for a run: the trees it reads
KINDS = ("dependency", "binary")


def _check_heads(heads: Sequence[int], n_tokens: int, source: str) -> list:
    """0-based heads (-1 at the root) of a 1-based head list, checked to be a tree."""
    # parents_to_tree raises DataError naming ``source`` for a bad head list
    parents_to_tree(heads, ["_"] * n_tokens, source=source)
    return [int(head) - 1 for head in heads]


def _dominates(head: list, ancestor: int, node: int) -> bool:
    """Whether ``ancestor`` is ``node`` or above it (head: 0-based, -1 at the root)."""
    while node != -1:
        if node == ancestor:
            return True
        node = head[node]
    return False


def projective_heads(heads: Sequence[int], source: str = "") -> list:
    """A projective version of a dependency tree, by lifting crossing arcs.

    heads:   ints (T,), 1-based head of each token, 0 at the root (a tree)
    returns: ints (T,), the same layout, with every arc projective: for
             each token d with head h, every token between h and d is
             dominated by h.  A token whose arc is not is re-attached to
             h's head (lifted), and the tokens are visited again until no
             arc is lifted.  A projective tree comes back unchanged.

    Lifting moves a subtree to an ancestor of its head, so the result is
    always a tree; every lift shortens a token's path to the root, so it
    ends.  Raises DataError naming ``source`` if ``heads`` is no tree.
    """
    head = _check_heads(heads, len(heads), source)
    n = len(head)
    lifted = True
    while lifted:
        lifted = False
        for dependent in range(n):
            governor = head[dependent]
            if governor == -1:
                continue
            low, high = min(governor, dependent), max(governor, dependent)
            if all(_dominates(head, governor, between) for between in range(low + 1, high)):
                continue
            head[dependent] = head[governor]
            lifted = True
    return [h + 1 for h in head]


def binarise(heads: Sequence[int], tokens: Sequence[str], order: str = "right-first", source: str = "") -> Tree:
    """The binary phrase-structure tree of a dependency parse.

    heads:   ints (T,), 1-based head of each token, 0 at the root (any tree:
             non-projective ones are lifted first, :func:`projective_heads`)
    tokens:  the T words
    order:   in which order a head joins its dependents (``ORDERS``; the
             module docstring)
    returns: Tree of 2T - 1 nodes: T leaves reading the tokens in order and
             T - 1 inner nodes of two children each, none reading a word;
             all unlabelled.  Each head's subtree becomes a phrase, built
             up from the head's own leaf by joining the phrase of one
             dependent at a time.

    Iterative (no recursion), so any depth of tree is fine.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    n = len(tokens)
    if len(heads) != n:
        raise DataError(f"{len(heads)} head(s) for {n} token(s)", *_split_source(source))
    head = [h - 1 for h in projective_heads(heads, source)]
    dependents: list = [[] for _ in range(n)]
    for token, governor in enumerate(head):
        if governor >= 0:
            dependents[governor].append(token)
    root = head.index(-1)
    preorder = [root]
    for token in preorder:  # grows while iterating: a breadth-first walk
        preorder.extend(dependents[token])
    parent = [NO_PARENT] * (2 * n - 1)
    phrase = list(range(n))  # the node of each token's whole subtree (its leaf so far)
    next_node = n
    for governor in reversed(preorder):  # dependents before their heads
        left = [d for d in reversed(dependents[governor]) if d < governor]  # nearest first
        right = [d for d in dependents[governor] if d > governor]
        if order == "right-first":
            joined = right + left
        elif order == "left-first":
            joined = left + right
        else:  # by distance; sorted() is stable, so the right one wins a tie
            joined = sorted(right + left, key=lambda d: abs(d - governor))
        node = governor
        for dependent in joined:
            parent[node] = next_node
            parent[phrase[dependent]] = next_node
            node = next_node
            next_node += 1
        phrase[governor] = node
    token_index = np.full(2 * n - 1, NO_TOKEN, dtype=np.int32)
    token_index[:n] = np.arange(n, dtype=np.int32)
    tree = Tree(
        tuple(tokens),
        np.asarray(parent, dtype=np.int32),
        token_index,
        np.full(2 * n - 1, UNLABELLED, dtype=np.int32),
        source,
    )
    return renumber_postorder(tree)


def parsed_tree(
    heads: Sequence[int], tokens: Sequence[str], kind: str, order: str = "right-first", source: str = ""
) -> Tree:
    """The tree of kind ``kind`` (``KINDS``) of a parse: the dependency tree
    itself (every node reading its word) or its binarisation."""
    if kind == "dependency":
        return parents_to_tree(heads, tokens, source=source)
    if kind == "binary":
        return binarise(heads, tokens, order, source)
    raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")


# --------------------------------------------------------------------------
# spans: labels carried from the SST, span recall
# --------------------------------------------------------------------------


def node_spans(tree: Tree) -> tuple:
    """First token, last token and number of tokens under every node (lists, n_nodes)."""
    n_tokens = len(tree.tokens)
    first = [n_tokens] * tree.n_nodes
    last = [-1] * tree.n_nodes
    count = [0] * tree.n_nodes
    parent = tree.parent.tolist()
    for node, token in enumerate(tree.token_index.tolist()):
        if token >= 0:
            first[node] = min(first[node], token)
            last[node] = max(last[node], token)
            count[node] += 1
        up = parent[node]
        if up >= 0:  # children before parents: a node is complete when passed up
            first[up] = min(first[up], first[node])
            last[up] = max(last[up], last[node])
            count[up] += count[node]
    return first, last, count


def _contiguous_spans(tree: Tree) -> list:
    """(first, last) token of every node, None for a node whose words have gaps."""
    first, last, count = node_spans(tree)
    return [
        (first[node], last[node]) if last[node] - first[node] + 1 == count[node] else None
        for node in range(tree.n_nodes)
    ]


def carry_labels(gold: Tree, tree: Tree) -> Tree:
    """``tree`` labelled from ``gold``'s phrases.

    gold:    a labelled tree over the same T tokens (an SST PTB tree)
    tree:    any tree over those tokens (dependency or binarised parse)
    returns: ``tree`` with, at every node whose words are exactly those of a
             node of ``gold``, that node's label (the highest one's where
             gold nodes share a span, a unary chain), UNLABELLED elsewhere
             (and at nodes whose words are not contiguous).  The root
             covers the sentence, so it gets the sentence's label.
    """
    if tuple(gold.tokens) != tuple(tree.tokens):
        raise DataError("the parsed tree's words differ from the gold tree's", *_split_source(tree.source))
    label_of_span = {}
    # nodes go children before parents, so a higher constituent overwrites a lower one
    for span, label in zip(_contiguous_spans(gold), gold.label.tolist()):
        label_of_span[span] = label
    label = np.full(tree.n_nodes, UNLABELLED, dtype=np.int32)
    for node, span in enumerate(_contiguous_spans(tree)):
        if span is not None:
            label[node] = label_of_span.get(span, UNLABELLED)
    return tree.with_labels(label)


def phrase_spans(tree: Tree) -> set:
    """The (first, last) token spans of ``tree``'s phrases that a tree could
    get wrong: two words or more, short of the whole sentence."""
    n = len(tree.tokens)
    return {span for span in _contiguous_spans(tree) if span is not None and 1 <= span[1] - span[0] < n - 1}


def span_recall(gold_trees: Sequence[Tree], trees: Sequence[Tree]) -> dict:
    """How many of the gold trees' phrases the parsed trees reproduce.

    gold_trees, trees: the same sentences, in the same order
    returns: {"phrases": distinct gold phrase spans of 2..T-1 words summed
             over the sentences, "reproduced": those some node of the
             parsed tree covers exactly, "recall": reproduced / phrases
             (a share, 0..1; 1.0 when there are none)}

    Single words and whole sentences are left out: every tree has them.
    """
    if len(gold_trees) != len(trees):
        raise ValueError(f"{len(gold_trees)} gold tree(s) but {len(trees)} parsed tree(s)")
    phrases = reproduced = 0
    for gold, tree in zip(gold_trees, trees):
        wanted = phrase_spans(gold)
        phrases += len(wanted)
        reproduced += len(wanted & set(_contiguous_spans(tree)))
    return {"phrases": phrases, "reproduced": reproduced, "recall": reproduced / phrases if phrases else 1.0}


# --------------------------------------------------------------------------
# parsing sentences
# --------------------------------------------------------------------------

# The copular-clause heads each kind is parsed with (dependency_parser.COPULA_HEADS).
# Dependency trees: the predicate, as the Stanford basic dependencies of Tai et
# al. and `npcomp parse` (the Dependency Tree-LSTM is trained on those).
# Binarised trees: spaCy's own, the copula: "is" then joins its predicate and
# the final period before the subject, (it ((is good) .)), as the SST brackets
# a sentence; on the SST's dev sentences that reproduces 60.7% of the phrases
# against 56.5% with the predicate as head (docs/plain-sentences.md).
COPULA_HEAD_OF_KIND = {"dependency": "predicate", "binary": "copula"}


class TextParser:
    """Token lists to parsed trees of one kind (``KINDS``), through spaCy.

    kind:   "dependency" (the parse itself) or "binary" (:func:`binarise`)
    order:  the binarisation's order (``ORDERS``)
    parser: an object with ``parse(list of token sequences) -> 1-based heads``;
            None: ``dependency_parser.SpacyParser`` with the kind's copula heads,
            created on first use (ImportError naming ``pip install
            "npcomp[parse]"`` without spaCy)
    """

    def __init__(self, kind: str, order: str = "right-first", parser=None, spacy_model: str | None = None):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        self.kind, self.order = kind, order
        self._parser, self._spacy_model = parser, spacy_model

    @property
    def parser(self):
        if self._parser is None:
            from npcomp.data.text.dependency_parser import SpacyParser

            self._parser = SpacyParser(self._spacy_model, copula_head=COPULA_HEAD_OF_KIND[self.kind])
        return self._parser

    def heads(self, sentences: Sequence[Sequence[str]]) -> list:
        """1-based heads (0 at the root) of each token sequence."""
        if not sentences:
            return []
        heads = self.parser.parse([tuple(tokens) for tokens in sentences])
        if len(heads) != len(sentences):
            raise ValueError(f"the parser returned {len(heads)} parse(s) for {len(sentences)} sentence(s)")
        return [[int(head) for head in sentence] for sentence in heads]

    def tree(self, heads: Sequence[int], tokens: Sequence[str], source: str = "") -> Tree:
        """The tree of this parser's kind from a parse."""
        return parsed_tree(heads, tokens, self.kind, self.order, source)

    def trees(self, sentences: Sequence[Sequence[str]], sources: Sequence[str] | None = None) -> list:
        """The parsed tree of each token sequence (unlabelled)."""
        sources = sources if sources is not None else [""] * len(sentences)
        return [
            self.tree(heads, tokens, source) for heads, tokens, source in zip(self.heads(sentences), sentences, sources)
        ]


def cached_heads(sentences: Sequence[Sequence[str]], path: str | Path, parse) -> tuple:
    """The heads of ``sentences``, read from ``path`` or parsed and written there.

    sentences: token sequences, in order
    path:      a ``*.parents`` file (``sst_dependency.write_parents``); read
               if it exists, else made from ``parse(sentences)``
    returns:   (heads per sentence, whether they were read from ``path``)

    A file that does not hold one line of heads per sentence, each with
    one head per token, raises DataError naming it and the line (delete it
    to parse again).
    """
    from npcomp.data.readers.parents import read_parents, write_parents

    path = Path(path)
    if not path.is_file():
        heads = parse(sentences)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parents(path, heads)
        return heads, False
    heads = read_parents(path)
    if len(heads) != len(sentences):
        raise DataError(
            f"{len(heads)} line(s) of heads for {len(sentences)} sentence(s); "
            "delete the file to parse the sentences again",
            path,
        )
    for number, (tokens, sentence_heads) in enumerate(zip(sentences, heads), start=1):
        if len(tokens) != len(sentence_heads):
            raise DataError(
                f"{len(sentence_heads)} head(s) for the sentence's {len(tokens)} "
                "token(s); delete the file to parse the sentences again",
                path,
                number,
            )
    return heads, True


def trees_for_scoring(
    gold_trees: Sequence[Tree],
    trees: str,
    kind: str | None = None,
    heads: Sequence[Sequence[int]] | None = None,
    order: str = "right-first",
) -> list:
    """A split's sentences in the trees ``trees`` names, labelled from the gold ones.

    gold_trees: the split's labelled treebank trees
    trees:      "gold" (those), "right"/"left" (re-bracketed, labelled at the
                root and the leaves, as Zhu's S-LSTM-RR/LR), "parsed" (each
                sentence's parse of ``kind`` with ``heads``, labelled by
                :func:`carry_labels`)
    """
    if trees == "gold":
        return list(gold_trees)
    if trees in ("right", "left"):
        from npcomp.data.readers.restructure import rebracket

        return [rebracket(tree, trees) for tree in gold_trees]
    if trees != "parsed":
        raise ValueError(f"trees must be gold, parsed, right or left, not {trees!r}")
    if heads is None or len(heads) != len(gold_trees):
        raise ValueError("parsed trees need one head list per sentence")
    return [
        carry_labels(gold, parsed_tree(sentence_heads, gold.tokens, kind, order, gold.source))
        for gold, sentence_heads in zip(gold_trees, heads)
    ]
