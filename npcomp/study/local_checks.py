"""Local checks per node: each node's backward checked on its own, with the
error arriving from above held fixed, so a check names the culprit, not
its victims.

The per-node state check (``state_checks.py``) compares every node's error
terms with finite differences of the whole objective J: a parent whose
backward routes a wrong error to its child passes it (its own terms agree)
and the child, the victim, is the first to disagree.  This check takes one
node at a time.  Let s_p be node p's states (``Cell.state_terms``: h, c,
...; eps_s their error terms, dJ/ds as the backward has them) and l_p its
own term of J (the head's loss at p, and a cell's own term there: the RAE's
reconstruction).  Everything above p reads p's subtree through s_p alone,
so to first order

    J(moves below p) = J + sum_s a_s[p] . (change of s_p) + (change of l_p)   (*)

where a_s[p] is the error arriving at p from above: dJ/ds_p with p's other
states held, l_p left out.  The backward gives it implicitly:

    eps[p] = M_p a[p] + g_p,     M_p[(t, q), (s, r)] = d s_p,r / d t_p,q

(M_p, g_p: central differences of p's own forward equations, a nudge moving
one coordinate of one of p's states where the forward computes it, the
change read in p's own row: M_p, and in l_p: g_p = d l_p / d s_p).  With
a[p] held fixed, every quantity p's backward hands on is checked against
central differences of (*) alone, through p's own equations:

* at a root (nothing above it) a[p] = 0: its eps_s must be its own loss
  term's share alone, eps[p] = g_p;
* for each child k of p and each state t of k, the error p routes to it:
  the backward's eps_t[k] less k's own share g_k, against
  d(*)/d t_k,q = sum_s a_s[p] . d s_p / d t_k,q + d l_p / d t_k,q.

Nodes are taken parents first (the root, then its children, ...), the
checks of a node in its children's order and state order (eps_h before
eps_c).  The error a parent routes includes what the child's own
equations add to it through its later states (moving c_k moves h_k = o
tanh(c_k) too), so a wrong own term in a child (eps_c += eps_h o g'(c))
shows as its parent's routing: it shows first at the root, where nothing
is routed.  A delta (a pre-activation's error: a gate's, the
candidate's, an input block's, as ``local_deltas.QUANTITIES`` tells
each) is not a state the forward can move: for the cells whose node equations ``grading.py`` writes
out (the N-ary and Child-Sum Tree-LSTMs, the RNTN, the S-LSTM, the
LSTM-RNN) each delta at a node is checked, before what the node routes,
against central differences of those equations run from the node's
pre-activations (``local_deltas.py``); for the others the
checks see a delta through the errors it routes (the children's eps_h =
sum_g delta_g U^(g)T), and a failing check lists the deltas that feed it
(the parts of ``Cell.term_parts``).

A cell whose states are read beyond the parent (a bidirectional LSTM's
backward direction, attention over every word) breaks (*): a nudge moves
a state of a node that is neither the nudged node nor above it.  The check
detects it on the first such nudge and raises ``NotLocal``, which names
the node that moved; the whole-J state check still applies to such cells.

Cost: four forward passes (no backward) per coordinate of every node's
every state: the same passes as the state check, but each read at two
nodes only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from npcomp.cells.interface import Nudge
from npcomp.errors import ConfigError
from npcomp.forest import depths
from npcomp.training.thread_pools import pinned_thread_pools

from .finite_differences import (
    RESOLUTION,
    STEP,
    TOLERANCE,
    progress_bar,
    relative_errors,
)


class NotLocal(ConfigError):
    """The cell's states are read beyond a node's parent: (*) does not hold."""

    def __init__(self, message: str):
        super().__init__("check_local", message)


@dataclass(frozen=True)
class LocalCheck:
    """One quantity a node's backward computes, against central differences
    of that node's own forward with the error from above held fixed.

    node, tree, origin: the node whose backward is checked (forest row; its
    tree and its index there); child, child_origin: the child the error is
    routed to (None at a root's own check); term: the backward term compared
    (``eps_h``), state: the state it is the error of (``h``); quantity: what
    is checked, in words; equation: what it reverses; error: the largest
    relative error; analytic, numeric: the backward's values and the
    differences (every coordinate of the state)."""

    node: int
    tree: int
    origin: int
    child: int | None
    child_origin: int | None
    term: str
    state: str
    quantity: str
    equation: str
    error: float
    analytic: np.ndarray
    numeric: np.ndarray

    def disagrees(self, tolerance: float = TOLERANCE) -> bool:
        return not self.error <= tolerance


def _forward(model, params, forest, nudge, options: dict) -> tuple:
    """(node_loss (n,) each node's term of J, 0 where none; the cell's
    cache) of the forward pass with ``nudge``: no backward."""
    masks = options.get("masks")
    if masks is None:
        masks = model.draw_masks(params, forest, None)
    h, encoding = model._encode(params, forest, masks, nudge)
    normaliser = options.get("normaliser") or model._normaliser(forest, options.get("average", "sentences"))
    _, passed = model._objective(params, forest, h, encoding, masks, normaliser)
    node_loss = passed.trace["node_loss"]
    model.cell.own_loss(forest, encoding["cell_cache"], normaliser, node_loss)
    return np.nan_to_num(node_loss), encoding["cell_cache"]


def _state_rows(model, forest, cache, states: list) -> list:
    """Per state, its (n, width) float64 values in the forward's ``cache``."""
    out = []
    for state in states:
        symbol = model.cell.state_symbols.get(state.state, state.state)
        try:
            values = np.asarray(model.cell.forward_term(forest, cache, symbol).values, dtype=np.float64)
        except KeyError:
            raise NotLocal(
                f"{model.cell.name} shows no forward quantity {symbol!r} for its "
                f"state {state.state}, so a node's states cannot be read after a "
                "nudge; --check-states checks every node's terms against finite "
                "differences of J instead"
            ) from None
        out.append(values.reshape(values.shape[0], -1))
    return out


@dataclass
class _Probe:
    """What the nudges at one node show: per coordinate nudged (rows, in
    state order), the differences of the node's own states (``own``), of its
    parent's (``parent``), and of the node's and parent's loss terms."""

    coordinates: list  # [(state index, q)]
    own: np.ndarray  # (m, width of the node's states)
    parent: np.ndarray | None  # (m, width of the parent's states)
    own_loss: np.ndarray  # (m,)
    parent_loss: np.ndarray  # (m,)


def _present(eps: list, node: int) -> list:
    """The indices of the states the backward defines at ``node``."""
    return [index for index, values in enumerate(eps) if not np.isnan(values[node]).all()]


def _flat(rows: list, node: int, present: list) -> np.ndarray:
    return np.concatenate([rows[index][node] for index in present]) if present else np.zeros(0)


class _Setup:
    """The forest's unnudged forward and backward, its states and ancestors."""

    def __init__(self, model, params, forest, options: dict):
        trace: dict = {}
        loss, _ = model.loss_and_gradient(params, forest, params.zeros_like(), trace=trace, **options)
        cache = trace["cell_cache"]
        self.cache = cache
        self.states = model.cell.state_terms(forest, cache)
        self.eps = []
        for state in self.states:
            values = np.asarray(model.cell.backward_term(forest, cache, state.symbol).values, dtype=np.float64)
            self.eps.append(values.reshape(values.shape[0], -1))
        self.loss = float(loss)
        self.node_loss, base_cache = _forward(model, params, forest, None, options)
        self.rows = _state_rows(model, forest, base_cache, self.states)
        self.parts = model.cell.term_parts(params.prefixed("cell"), forest, cache, trace["d_h"])
        self.equations = {term.symbol: term.equation for term in model.cell.backward_terms(forest, cache)}
        self.roots = np.flatnonzero(forest.parent < 0)
        self.above = np.zeros((forest.n_nodes, forest.n_nodes), dtype=bool)
        for node in range(forest.n_nodes):  # the node itself and its ancestors
            walk = node
            while walk >= 0:
                self.above[node, walk] = True
                walk = int(forest.parent[walk])


def _probe(model, params, forest, setup: _Setup, node: int, step: float, options: dict, bar) -> _Probe:
    """Central differences (fourth order) of the node's and its parent's
    states and loss terms, nudging each coordinate of the node's states."""
    parent = int(forest.parent[node])
    present = _present(setup.eps, node)
    up = _present(setup.eps, parent) if parent >= 0 else []
    coordinates = [(index, q) for index in present for q in range(setup.rows[index].shape[1])]
    own, above, own_loss, parent_loss = [], [], [], []
    for index, q in coordinates:
        readings = []
        for shift in (step, -step, 2 * step, -2 * step):
            offset = np.zeros(setup.rows[index].shape[1])
            offset[q] = shift
            nudge = Nudge(setup.states[index].state, node, offset)
            node_loss, cache = _forward(model, params, forest, nudge, options)
            rows = _state_rows(model, forest, cache, setup.states)
            _refuse_reads_beyond(forest, setup, rows, node_loss, node, nudge)
            readings.append(
                (
                    _flat(rows, node, present),
                    _flat(rows, parent, up) if parent >= 0 else np.zeros(0),
                    node_loss[node],
                    node_loss[parent] if parent >= 0 else 0.0,
                )
            )
        differences = [
            (8 * (a - b) - (c - d)) / (12 * step)
            for a, b, c, d in zip(*[[np.asarray(value) for value in reading] for reading in readings])
        ]
        own.append(differences[0])
        above.append(differences[1])
        own_loss.append(float(differences[2]))
        parent_loss.append(float(differences[3]))
        if bar is not None:
            bar.update(1)
    width = len(coordinates)
    own_width = sum(setup.rows[index].shape[1] for index in present)
    up_width = sum(setup.rows[index].shape[1] for index in up)
    return _Probe(
        coordinates,
        np.array(own).reshape(width, own_width),
        np.array(above).reshape(width, up_width) if parent >= 0 else None,
        np.array(own_loss),
        np.array(parent_loss),
    )


def _refuse_reads_beyond(forest, setup: _Setup, rows: list, node_loss: np.ndarray, node: int, nudge: Nudge) -> None:
    """NotLocal when the nudge moved a state or loss term of a node that is
    neither ``node`` nor above it."""
    beside = ~setup.above[node]
    for state, moved, base in zip(setup.states, rows, setup.rows):
        changed = beside & ~np.isclose(moved, base, rtol=0, atol=1e-14, equal_nan=True).all(axis=1)
        if changed.any():
            _not_local(forest, node, nudge.state, f"{state.state} of node", int(np.flatnonzero(changed)[0]))
    changed = beside & ~np.isclose(node_loss, setup.node_loss, rtol=0, atol=1e-14)
    if changed.any():
        _not_local(forest, node, nudge.state, "the loss term of node", int(np.flatnonzero(changed)[0]))


def _not_local(forest, node: int, state: str, what: str, moved: int) -> None:
    raise NotLocal(
        f"moving {state} of node {int(forest.origin[node])} moves {what} "
        f"{int(forest.origin[moved])}, which is neither that node nor above it: "
        "this cell's states are read beyond the parent, so a node's backward "
        "cannot be checked on its own; --check-states checks every node's terms "
        "against finite differences of J instead"
    )


def _order(forest) -> list:
    """The forest's nodes parents first: by tree, depth, then index in the tree."""
    depth = depths(forest)
    return sorted(
        range(forest.n_nodes), key=lambda node: (int(forest.tree[node]), int(depth[node]), int(forest.origin[node]))
    )


@pinned_thread_pools()
def check_local(model, params, forest, step: float = STEP, progress: bool = False, **options) -> list:
    """[LocalCheck], parents first (module docstring), for every node of
    ``forest`` (a forest of a tree model; ``params`` float64; ``options``
    go to the model's loss: fixed dropout ``masks``, ``average``, l2).
    NotLocal (a ConfigError) for a cell whose states are read beyond the
    parent; ``progress``: a progress bar on standard error."""
    if params.flat.dtype != np.float64:
        raise TypeError("local checks run in float64")
    if not hasattr(forest, "n_nodes"):
        raise ConfigError(
            "check_local",
            "local checks take the forest of a tree model; a pair of sentences is checked by --check-states",
        )
    setup = _Setup(model, params, forest, options)
    total = sum(setup.rows[index].shape[1] for node in range(forest.n_nodes) for index in _present(setup.eps, node))
    bar = progress_bar(total, "local checks", "state", progress)
    try:
        probes = {
            node: _probe(model, params, forest, setup, node, step, options, bar) for node in range(forest.n_nodes)
        }
    finally:
        if bar is not None:
            bar.close()
    floor = RESOLUTION * max(1.0, abs(setup.loss))
    checks = []
    for node in _order(forest):
        probe = probes[node]
        eps = _flat(setup.eps, node, _present(setup.eps, node))
        if forest.parent[node] < 0:
            checks += _root_checks(forest, setup, node, probe, eps, floor)
        checks += _delta_checks(model, params, forest, setup, node, probe, eps, floor)
        arriving = _arriving(probe, eps)
        for kid in forest.children[node][forest.children[node] >= 0]:
            checks += _routed_checks(forest, setup, node, int(kid), probes[int(kid)], arriving, floor)
    return checks


def _arriving(probe: _Probe, eps: np.ndarray) -> np.ndarray:
    """a[p]: the error arriving at the node from above as its backward has
    it, from eps[p] = M_p a[p] + g_p (module docstring)."""
    if eps.size == 0:
        return eps
    solution, *_ = np.linalg.lstsq(probe.own, eps - probe.own_loss, rcond=None)
    return solution


def _delta_checks(
    model, params, forest, setup: _Setup, node: int, probe: _Probe, eps: np.ndarray, floor: float
) -> list:
    """The node's deltas (``local_deltas.py``), from the partial derivatives
    of J in its states as its backward has them: eps[p] = M_p partials."""
    from .local_deltas import delta_values

    if eps.size == 0:
        return []
    partials, *_ = np.linalg.lstsq(probe.own, eps, rcond=None)
    checks = []
    for symbol, quantity, reverses, analytic, numeric in delta_values(
        model, params, forest, setup.cache, node, partials
    ):
        error = relative_errors(analytic, numeric, floor)
        checks.append(
            LocalCheck(
                node,
                int(forest.tree[node]),
                int(forest.origin[node]),
                None,
                None,
                symbol,
                "",
                f"{symbol} at node {int(forest.origin[node])}, {quantity}",
                reverses,
                float(error.max()) if error.size else 0.0,
                analytic,
                numeric,
            )
        )
    return checks


def _slices(setup: _Setup, node: int, coordinates: list) -> list:
    """[(state index, the rows of ``coordinates`` that are that state's)]."""
    present = _present(setup.eps, node)
    rows = np.array([index for index, _ in coordinates])
    return [(index, np.flatnonzero(rows == index)) for index in present]


def _root_checks(forest, setup: _Setup, node: int, probe: _Probe, eps: np.ndarray, floor: float) -> list:
    """A root's terms against its own loss term's share alone."""
    checks = []
    for index, rows in _slices(setup, node, probe.coordinates):
        state = setup.states[index]
        analytic, numeric = eps[rows], probe.own_loss[rows]
        error = relative_errors(analytic, numeric, floor)
        checks.append(
            LocalCheck(
                node,
                int(forest.tree[node]),
                int(forest.origin[node]),
                None,
                None,
                state.symbol,
                state.state,
                f"{state.symbol} at the root: its own loss term's share alone (nothing is above it)",
                setup.equations.get(state.symbol, ""),
                float(error.max()) if error.size else 0.0,
                analytic,
                numeric,
            )
        )
    return checks


def _routed_checks(
    forest, setup: _Setup, node: int, kid: int, probe: _Probe, arriving: np.ndarray, floor: float
) -> list:
    """The errors ``node`` routes to each state of its child ``kid``."""
    checks = []
    eps = _flat(setup.eps, kid, _present(setup.eps, kid))
    if probe.parent is None or not probe.coordinates:
        return checks
    through = probe.parent @ arriving if arriving.size else np.zeros(len(probe.coordinates))
    numeric_all = through + probe.parent_loss
    analytic_all = eps - probe.own_loss
    side = child_side(forest, kid)
    for index, rows in _slices(setup, kid, probe.coordinates):
        state = setup.states[index]
        analytic, numeric = analytic_all[rows], numeric_all[rows]
        error = relative_errors(analytic, numeric, floor)
        quantity = (
            f"the error node {int(forest.origin[node])} routes to its {side} "
            f"(node {int(forest.origin[kid])})'s {state.state}: {state.symbol} of node "
            f"{int(forest.origin[kid])} less that node's own loss term"
        )
        checks.append(
            LocalCheck(
                node,
                int(forest.tree[node]),
                int(forest.origin[node]),
                kid,
                int(forest.origin[kid]),
                state.symbol,
                state.state,
                quantity,
                _through_parent(setup, state.symbol, kid),
                float(error.max()) if error.size else 0.0,
                analytic,
                numeric,
            )
        )
    return checks


def child_side(forest, kid: int) -> str:
    """ "left child", "right child", "only child", "child 3"."""
    siblings = int(forest.n_children[int(forest.parent[kid])])
    slot = int(forest.position[kid])
    if siblings == 1:
        return "only child"
    if siblings == 2:
        return ("left", "right")[slot] + " child"
    return f"child {slot + 1}"


def _through_parent(setup: _Setup, symbol: str, kid: int) -> str:
    """What the parent's share of ``symbol`` at ``kid`` reverses: its
    equations and the parts that make it there (``Cell.term_parts``: the
    deltas it reads), or the term's own equation."""
    for term in setup.parts:
        if term.symbol != symbol:
            continue
        shares = [part for part in term.parts if _through_parent_part(part, setup.roots) and not part.zero[kid]]
        if shares:
            numbers = dict.fromkeys(number for part in shares for number in _equation_number(part.equation).split(", "))
            # where the paper prints the backward (the S-LSTM's (13), (14)), its number too
            printed = dict.fromkeys(
                number for part in shares for number in re.findall(r"printed (?:as|in) \((\d+)\)", part.equation)
            )
            labels = " + ".join(part.label for part in shares)
            return (
                f"reverses {', '.join(numbers)}"
                + (f", printed as ({', '.join(printed)})" if printed else "")
                + f": {labels}"
            )
    return setup.equations.get(symbol, "")


def _through_parent_part(part, roots: np.ndarray) -> bool:
    """Whether a part is the parent's share: it says so, or it is 0 at every
    root for the reason that a root has no parent."""
    if "parent" in part.equation or "parent" in part.label or "_p" in part.label:
        return True
    reasons = [str(part.zero[root]) for root in roots]
    return bool(reasons) and all("parent" in reason or "root" in reason for reason in reasons)


def _equation_number(equation: str) -> str:
    """ "reverses 9 (through the parent)" -> "9"; "reverses 5; printed as (13)" -> "5"."""
    return equation.removeprefix("reverses ").split(" (")[0].split(";")[0].strip()


def first_failure(checks: list, tolerance: float = TOLERANCE) -> LocalCheck | None:
    """The first check (parents first) above ``tolerance``, or None."""
    return next((check for check in checks if check.disagrees(tolerance)), None)


def summary(checks: list, tolerance: float = TOLERANCE, several: bool = False) -> str:
    """One line: the first failing local check (its node, quantity, equation
    and error) and how many fail, or that every one passes."""
    first = first_failure(checks, tolerance)
    if first is None:
        return (
            f"every node's local checks pass ({len(checks)} quantities, each within "
            f"{tolerance:g} of finite differences of its node's own equations)"
        )
    count = sum(check.disagrees(tolerance) for check in checks)
    where = (f"tree {first.tree} " if several else "") + f"node {first.origin}"
    return (
        f"first failing local check: {where}, {first.quantity} ({first.equation}): "
        f"rel. error {first.error:.2e}; {count} of {len(checks)} local checks fail"
    )


def local_record(check: LocalCheck) -> dict:
    """A LocalCheck as JSON-ready data, nodes as numbered in their sentence."""
    return {
        "sentence": check.tree,
        "node": check.origin,
        "child": check.child_origin,
        "term": check.term,
        "state": check.state,
        "quantity": check.quantity,
        "equation": check.equation,
        "error": check.error,
        "analytic": check.analytic.tolist(),
        "numeric": check.numeric.tolist(),
    }
