"""The interface every cell implements, and the one check of the trees a cell
composes.

A cell is built as ``Cell(input_dim, hidden_dim, **options)`` (the options
each model takes are declared in ``registry.py``) and has

* ``input_dim`` (d_x), ``hidden_dim`` (d), ``output_dim`` (the width of the
  state the heads read);
* ``parameter_shapes()`` -> [(name, shape)] and ``initialise(params, rng)``;
* ``report_slices()`` -> {label: (name, index)}: gate-level sub-blocks named
  for gradient-check reports;
* ``forward(params, forest, x, word_index[, recurrent_masks])``
  -> (h (n, output_dim), cache): ``x`` (U, d_x) holds the vectors of the
  minibatch's U distinct words and ``word_index`` the row each word-reading
  node reads (``inputs.py``); a cell visits the forest's levels with
  ``Forest.levels()``;
* ``backward(params, forest, cache, d_h, grads)`` -> d_x: adds
  the parameter gradients into ``grads`` (same names) and returns dLoss/dx
  (U, d_x);
* ``check_forest(forest)``: raises ``StructureError`` for trees the cell
  cannot compose, from the declared ``max_children`` and ``words`` (a
  ``SequenceCell`` composes chains, a ``BinaryCell`` binary trees with words
  at the leaves only).

The abilities some cells have are declared here with the value a cell
without them has, so nothing is probed for:

* ``recurrent_widths()`` -> [width per recurrent connection] ([] without a
  recurrence): sequence cells with recurrent dropout (Gal 2015: one mask per
  sequence) take ``forward(..., recurrent_masks=[(trees, width) per
  connection] or None)``; the state entering a recurrence at node t is
  multiplied by ``mask[forest.tree[t]]``;
* ``input_copies()`` -> k (1): a cell that reads the word vectors through k
  connections, each with its own word-vector dropout mask (the BiLSTM's two
  directions): under that dropout its ``x`` is (n, k d_x), the k masked
  copies side by side, and its ``d_x`` the same shape;
* ``initial_embedding(vocab_size, rng)`` -> (vocab_size, d_x) or None: a
  cell whose word inputs need a starting point of their own (the
  matrix-space model's word matrices);
* ``leaf_classifier_reads_input`` (False): leaves are classified from their
  word vectors by a classifier of their own (Le & Zuidema's untied leaves);
* ``head_weight`` (1.0) and ``own_loss(forest, cache, normaliser)`` (0.0): a
  cell with a term of the objective of its own (the RAE's reconstruction
  error, weighted alpha, the head's data term weighted 1 - alpha) returns
  that term over Z = ``normaliser`` and leaves on ``cache`` the scale its
  backward adds the term's gradient at (and each node's share, for explain).

What ``npcomp explain`` shows of a cell comes from the cell itself, through
two methods every cell implements:

* ``forward_terms(forest, cache)`` -> [Term]: every quantity of the forward
  pass under its paper's symbol, in the order the equations run, read from
  the forward's ``cache``;
* ``backward_terms(forest, cache)`` -> [Term]: every error term (eps, delta)
  of the backward pass, read from what ``backward`` left on the same cache
  (a cell's backward keeps its error-term arrays there: references to the
  arrays it computes anyway, never a second computation);
  ``backward_term(forest, cache, symbol)`` looks one up by its symbol.

and, for the per-node checks and the parts ``npcomp explain`` shows:

* ``forward(..., nudge=None)``: a ``Nudge`` moves one node's state by a fixed
  offset where the forward computes it, so that every equation reading the
  state (the node's own later ones, its parent's, the head) reads the moved
  value: finite differences of the objective through the cell's own forward
  (``npcomp/study/state_checks.py``);
* ``state_terms(forest, cache)`` -> [StateTerm]: each state a nudge can move
  and the backward term that is dJ/d(that state) (h and eps_h, c and eps_c,
  ...), in the order the backward completes them at a node;
* ``term_parts(params, forest, cache, d_out)`` -> [TermParts]: eps_h, eps_c
  (and their kin) at every node as the sum of their contributions, each with
  the equation it reverses and, where it is exactly 0, why; ``d_out`` is the
  head's dJ/d(output) (n, output_dim).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..forest import Forest

# where a cell reads words (``Cell.words``)
LEAVES_ONLY = "leaves only"  # every leaf a word, no inner node one
EVERY_LEAF = "every leaf"  # every leaf a word, inner nodes may read one
EVERY_NODE = "every node"  # sequences: every step reads its word


@dataclass(frozen=True)
class Term:
    """One named quantity of a cell at every node of a forest.

    symbol:      as the paper prints it (``i``, ``f_l``, ``delta_o``, ``eps_c``)
    equation:    the paper's equation it computes (``"9"``), or for an error
                 term the equation it reverses (``"reverses 14"``)
    values:      (n, ...) one row per forest node, in the forest's order; NaN
                 at nodes without the quantity (a leaf's forget gates)
    erratum:     the entries of docs/EQUATIONS.md (``"E1"``) or of the cell's
                 page where the code departs from or reads the printed
                 equation, comma-separated (``"Z1, Z3"``)
    node_errata: (n,) str, or None: the entries that apply at each node, where
                 they differ from node to node (``node_errata_for``); then
                 ``erratum`` is their union
    """

    symbol: str
    equation: str
    values: np.ndarray
    erratum: str = ""
    node_errata: np.ndarray | None = None

    def erratum_at(self, node: int) -> str:
        """The erratum ids that apply at forest row ``node``."""
        return self.erratum if self.node_errata is None else str(self.node_errata[node])


def node_errata_for(n_nodes: int, *assignments) -> tuple:
    """(union of the ids, (n,) per-node ids) for a term whose errata depend on
    the node: each assignment is (nodes: indices or an (n,) mask, "ids"); a
    node named by several gets each id once, in the order given."""
    per_node = [[] for _ in range(n_nodes)]
    for nodes, ids in assignments:
        for node in np.flatnonzero(nodes) if np.asarray(nodes).dtype == bool else nodes:
            for erratum in ids.split(", "):
                if erratum and erratum not in per_node[node]:
                    per_node[node].append(erratum)
    union = list(dict.fromkeys(erratum for ids in per_node for erratum in ids))
    return ", ".join(union), np.array([", ".join(ids) for ids in per_node], dtype=object)


def errata_term(symbol: str, equation: str, values: np.ndarray, *assignments) -> Term:
    """A Term whose errata differ from node to node (``node_errata_for``)."""
    union, per_node = node_errata_for(values.shape[0], *assignments)
    return Term(symbol, equation, values, union, per_node)


def term_named(terms: list, symbol: str) -> Term:
    """The term of ``terms`` whose symbol is ``symbol``; KeyError naming the
    symbols there are (a term is never taken by its position)."""
    for term in terms:
        if term.symbol == symbol:
            return term
    raise KeyError(f"no term {symbol!r}; the terms are {', '.join(term.symbol for term in terms)}")


@dataclass(frozen=True)
class Nudge:
    """One node's state moved by ``offset`` inside a forward pass, where the
    forward computes it: everything that reads the state afterwards (the
    node's own later equations, its parent, the head) reads the moved value.

    state:  a state the cell names in ``state_terms`` (``"h"``, ``"c"``, ...)
    node:   its forest row
    offset: (width,) added to that row
    """

    state: str
    node: int
    offset: np.ndarray

    def renamed(self, state: str, node: int | None = None) -> "Nudge":
        """The same nudge under an inner cell's name for the state (and row)."""
        return Nudge(state, self.node if node is None else int(node), self.offset)


def nudge_rows(nudge: Nudge | None, state: str, values: np.ndarray, start: int = 0, stop: int | None = None) -> bool:
    """In place: values[node] += offset when ``nudge`` moves ``state`` at a
    node in [start, stop) (rows of ``values`` are forest rows); whether it
    did.  Without a nudge (every training step) it does nothing."""
    if nudge is None or nudge.state != state:
        return False
    stop = values.shape[0] if stop is None else stop
    if not start <= nudge.node < stop:
        return False
    values[nudge.node] += nudge.offset.reshape(np.shape(values[nudge.node]))
    return True


def inner_nudge(nudge: Nudge | None, states: dict):
    """The nudge under an inner cell's state name: ``states`` maps this
    cell's names to the inner cell's; None when it moves none of them."""
    if nudge is None or nudge.state not in states:
        return None
    return nudge.renamed(states[nudge.state])


@dataclass(frozen=True)
class StateTerm:
    """A state the per-node check moves and the error term it checks.

    state:  the name a Nudge moves (``"c"``)
    symbol: the backward term that is dJ/d(state) (``"eps_c"``)
    depth:  (n,) each node's steps from where the backward starts (the root,
            the last word), or None for the forest's own: nodes are checked
            in that order, parents first
    """

    state: str
    symbol: str
    depth: np.ndarray | None = None


@dataclass(frozen=True)
class Part:
    """One contribution to an error term, at every node.

    label:    the contribution in the paper's symbols (``"eps_c,p f^L_p"``)
    equation: the forward equation it reverses (``"reverses 5"``)
    values:   (n, width) its value at each node (0 where it has none, NaN
              where the term is undefined)
    zero:     (n,) str: why it is exactly 0 at a node (``"c^L = 0: leaf"``),
              "" where it need not be
    """

    label: str
    equation: str
    values: np.ndarray
    zero: np.ndarray


@dataclass(frozen=True)
class TermParts:
    """An error term as the sum of its parts, at every node.

    symbol: the term's (``"eps_c"``); parts: [Part], summing to its rows
    unread: (n,) str: why nothing reads the term at a node (an S-LSTM leaf's
            eps_c: its c = 0 is a constant), "" where something does
    """

    symbol: str
    parts: list
    unread: np.ndarray | None = None


def reasons(n_nodes: int, *assignments) -> np.ndarray:
    """(n,) str: for each (nodes, reason) of ``assignments``, ``reason`` at
    ``nodes`` (indices or an (n,) mask); the first that names a node wins."""
    out = np.full(n_nodes, "", dtype=object)
    for nodes, reason in assignments:
        nodes = np.asarray(nodes)
        chosen = np.zeros(n_nodes, dtype=bool)
        chosen[np.flatnonzero(nodes) if nodes.dtype == bool else nodes.astype(np.int64)] = True
        out[chosen & (out == "")] = reason
    return out


# why a part a step receives from the step after it is 0 at a sentence's end
LAST_WORD = "the last word: no step after it"


def steps_after(forest: Forest) -> tuple:
    """(steps with a step after them, the steps after them, (n,) why a part
    from the next step is 0 at each node: the last word has none)."""
    steps = np.flatnonzero(forest.parent >= 0)
    return steps, forest.parent[steps], reasons(forest.n_nodes, (forest.parent < 0, LAST_WORD))


def head_part(
    forest: Forest, d_out: np.ndarray, label: str = "dJ/dh from the head", equation: str = "reverses the classifier"
) -> Part:
    """The head's share of eps_h: d_out's rows, exactly 0 at an unlabelled node."""
    values = np.asarray(d_out, dtype=np.float64)
    silent = (forest.label < 0) & ~values.reshape(values.shape[0], -1).any(axis=1)
    return Part(label, equation, values, reasons(forest.n_nodes, (silent, "unlabelled: no loss at this node")))


def node_rows(n_nodes: int, nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(n, ...) float64 rows: ``values`` at ``nodes``, NaN at every other node
    (for a quantity only some nodes have)."""
    values = np.asarray(values)
    out = np.full((n_nodes,) + values.shape[1:], np.nan)
    out[nodes] = values
    return out


class StructureError(ValueError):
    """A tree the cell cannot compose; ``node`` and ``tree`` locate the first
    offending node in the forest (its index in its own tree, and which tree
    of the forest)."""

    def __init__(self, reason: str, node: int, tree: int):
        self.reason, self.node, self.tree = reason, node, tree
        super().__init__(f"{reason} (node {node} of tree {tree} of the forest)")


class Cell:
    """Base class of the cells: the declared abilities' defaults and the
    structure check.  ``max_children`` (None: any number), ``words`` and
    ``labels_at_roots_only`` say what a cell composes."""

    name: str
    max_children: int | None = None
    words: str = EVERY_LEAF
    # a cell that classifies whole sequences at their last word
    labels_at_roots_only: bool = False
    leaf_classifier_reads_input: bool = False
    # the factor of the head's data term (1 - alpha beside the RAE's own term)
    head_weight: float = 1.0
    # a state (``state_terms``) whose forward quantity has another symbol: {state: symbol}
    state_symbols: dict = {}

    def recurrent_widths(self) -> list:
        return []

    def input_copies(self) -> int:
        return 1

    def initial_embedding(self, vocab_size: int, rng: np.random.Generator):
        return None

    def report_slices(self) -> dict:
        return {}

    def own_loss(self, forest: Forest, cache, normaliser: int, node_loss: np.ndarray | None = None) -> float:
        """The cell's own term of J over Z = ``normaliser`` (0: none); the
        backward on ``cache`` then adds that term's gradient.  ``node_loss``
        (n,), each node's term of J so far (NaN: none), takes each node's share."""
        return 0.0

    def forward_terms(self, forest: Forest, cache) -> list:
        """[Term] of the forward pass that made ``cache``, in equation order."""
        raise NotImplementedError(f"{self.name} does not list its forward quantities")

    def backward_terms(self, forest: Forest, cache) -> list:
        """[Term] of the backward pass last run on ``cache``, parents first."""
        raise NotImplementedError(f"{self.name} does not list its error terms")

    def forward_term(self, forest: Forest, cache, symbol: str) -> Term:
        """The forward quantity called ``symbol`` (KeyError naming the others)."""
        return term_named(self.forward_terms(forest, cache), symbol)

    def backward_term(self, forest: Forest, cache, symbol: str) -> Term:
        """The error term called ``symbol`` (KeyError naming the others)."""
        return term_named(self.backward_terms(forest, cache), symbol)

    def state_terms(self, forest: Forest, cache) -> list:
        """[StateTerm]: the states a Nudge moves and their error terms."""
        raise NotImplementedError(f"{self.name} does not name its states")

    def term_parts(self, params: dict, forest: Forest, cache, d_out: np.ndarray) -> list:
        """[TermParts] of the backward pass last run on ``cache``; ``d_out``
        (n, output_dim) the head's dJ/d(output) it started from."""
        raise NotImplementedError(f"{self.name} does not split its error terms")

    def check_forest(self, forest: Forest) -> None:
        check_structure(self.name, forest, self.max_children, self.words)
        if self.labels_at_roots_only:
            inner = forest.label >= 0
            inner[forest.root] = False
            _refuse(
                forest,
                inner,
                f"{self.name} classifies whole sequences at their last "
                f"word: only a chain's root may be labelled, "
                f"{int(inner.sum())} other nodes are (supervision 'root' "
                "or 'spans')",
            )


class SequenceCell(Cell):
    """A cell over chains: every node one child at most and a word."""

    max_children = 1
    words = EVERY_NODE


class BinaryCell(Cell):
    """A cell over binary trees with a word at every leaf and none inside."""

    max_children = 2
    words = LEAVES_ONLY


def check_structure(name: str, forest: Forest, max_children: int | None, words: str) -> None:
    """Raise StructureError at the first node of ``forest`` with more than
    ``max_children`` children, or reading a word where ``words`` says none
    may be read, or none where one must be."""
    leaf = forest.n_children == 0
    reads = forest.word >= 0
    if words == EVERY_NODE:
        bad = ~reads if max_children is None else ~reads | (forest.n_children > max_children)
        _refuse(forest, bad, f"{name} reads sequences (structure 'chain'): every node one child at most and a word")
    if max_children is not None:
        wide = forest.n_children > max_children
        kind = (
            "composes binary trees"
            if max_children == 2
            else f"composes trees of at most {max_children} children a node"
        )
        if wide.any():
            _refuse(forest, wide, f"{name} {kind}: a node has {int(forest.n_children[wide].max())} children")
    if words == LEAVES_ONLY:
        _refuse(
            forest,
            leaf != reads,
            f"{name} reads words at the leaves only: every leaf needs a word and no inner node may have one",
        )
    _refuse(forest, leaf & ~reads, f"{name}: every leaf must read a word")


def _refuse(forest: Forest, bad: np.ndarray, message: str) -> None:
    """StructureError naming the first of the ``bad`` nodes, if any."""
    nodes = np.flatnonzero(bad)
    if nodes.size:
        node = int(nodes[0])
        origin, tree = int(forest.origin[node]), int(forest.tree[node])
        raise StructureError(message, origin, tree)
