"""Per-node state checks: where a backward pass goes wrong, not only that it does.

The parameter check (``finite_differences.py``) compares dJ/dtheta; a wrong
error term anywhere in a tree spreads into every weight's gradient, so a
failing row says that the backward is wrong, not where.  This check takes the
error terms themselves.  For every node of the forest (leaves included) and
every state the cell names (``Cell.state_terms``: h and eps_h, c and eps_c,
...), the cell's own forward is run with that state moved by +-h, +-2h in one
coordinate (``interface.Nudge``: the move is made where the forward computes
the state, so the node's later equations, its parent and the head read the
moved value), and the fourth-order central difference of the objective J

    n_q = [8 (J(+h e_q) - J(-h e_q)) - (J(+2h e_q) - J(-2h e_q))] / 12h

is compared with the backward's term at that node, with the relative error
and floor of ``finite_differences.py``.  Nodes are taken parents first (by
their distance from where the backward starts: the root, a chain's last
word), left to right, and at a node in the order the backward completes its
terms (eps_h before eps_c).  The backward computes a node's terms from its
parent's, so the first node and term that disagree are where the error
enters: a term that disagrees while its parent's agree is wrong itself.
When every term agrees and a parameter check fails, the error is in the
weight gradients (or the embedding's), after the terms.

The check runs the whole forest's forward four times per coordinate of
every node's every state: its cost grows with the square of the nodes (a
200-level Constituency Tree-LSTM tree, 401 nodes, 12,832 passes, takes
about a minute of one core; a 1,000-level one, 2,001 nodes, 64,032 passes
each five times longer).  A forest of more than ``MAX_NODES`` nodes is refused
before anything is run unless ``max_nodes`` allows it (``npcomp explain
--max-nodes N``), and the checks of a forest show a progress bar with the
time left (on standard error) once they last more than a moment.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from npcomp.cells.interface import Nudge
from npcomp.errors import ConfigError
from .finite_differences import RESOLUTION, STEP, TOLERANCE, progress_bar, relative_errors
from npcomp.forest import depths
from npcomp.training.thread_pools import pinned_thread_pools

# the largest forest (in nodes) whose states are checked unless asked: every
# SST sentence (at most 111 nodes) and a 200-level tree (401) are within it
MAX_NODES = 1000


@dataclass(frozen=True)
class StateCheck:
    """One node's error term against finite differences of J in its state.

    node: the forest row (``tree``, ``origin``: which tree, and its index
    there); term: the error term (``eps_c``), state: what was moved (``c``);
    error: the largest relative error over the coordinates checked;
    analytic, numeric: the term's values and the finite differences there
    (``coordinates``: which of the row's coordinates, in order)."""

    node: int
    tree: int
    origin: int
    term: str
    state: str
    error: float
    analytic: np.ndarray
    numeric: np.ndarray
    coordinates: np.ndarray

    def disagrees(self, tolerance: float = TOLERANCE) -> bool:
        return not self.error <= tolerance


def check_size(model, params, batch, entries: int | None = None, max_nodes: int | None = MAX_NODES, **options) -> None:
    """Refuse (ConfigError on ``max_nodes``) the state checks of a forest
    of more than ``max_nodes`` nodes (None: any size), saying how many
    forward passes of the whole forest they would run and how long that
    would take here (one pass timed).  Arguments as ``check_states``'s."""
    forest = getattr(batch, "forest", batch)
    if max_nodes is None or forest.n_nodes <= max_nodes:
        return
    queue, _, terms, _ = _queue(model, params, batch, options)
    passes = 4 * sum(
        terms[symbol][node].size if entries is None else min(entries, terms[symbol][node].size)
        for _, _, _, _, symbol, node in queue
    )
    timed = []
    for _ in range(3):  # the quickest of three: the first pays for its allocations
        tick = time.perf_counter()
        model.loss(params, batch, **options)
        timed.append(time.perf_counter() - tick)
    seconds = passes * min(timed)
    raise ConfigError(
        "max_nodes",
        f"the per-node state checks of this tree ({forest.n_nodes:,} "
        f"nodes) are past the limit of {max_nodes:,} nodes: they would run the "
        f"forward of the whole tree {passes:,} times, about {_duration(seconds)} "
        f"here. Raise the limit to {forest.n_nodes:,} or more to check it "
        "anyway (with a progress bar and the time left), or check a smaller tree",
    )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@pinned_thread_pools()
def check_states(
    model,
    params,
    batch,
    entries: int | None = None,
    rng: np.random.Generator | None = None,
    step: float = STEP,
    max_nodes: int | None = MAX_NODES,
    progress: bool = False,
    **options,
) -> list:
    """[StateCheck] for every node and state of ``batch`` (a forest, or a
    PairBatch), parents first.  ``params`` float64; ``options`` go to the
    model's ``loss_and_gradient`` (fixed dropout ``masks``, l2, average);
    ``entries``: at most this many coordinates of each node's state, drawn
    by ``rng`` (None: every coordinate).  A forest of more than
    ``max_nodes`` nodes (None: no limit) is refused (ConfigError) before
    anything runs; ``progress``: a progress bar on standard error, with the
    time left, once the checks have lasted a moment (``progress_bar``)."""
    if params.flat.dtype != np.float64:
        raise TypeError("state checks run in float64")
    check_size(model, params, batch, entries, max_nodes, **options)
    queue, states, terms, loss = _queue(model, params, batch, options)
    floor = RESOLUTION * max(1.0, abs(loss))

    def objective(nudge: Nudge) -> float:
        return model.loss(params, batch, nudge=nudge, **options)

    checks = []
    bar = progress_bar(len(queue), "per-node state checks", "state", progress)
    try:
        for tree, _, origin, rank, _, node in queue:
            state = states[rank]
            analytic = terms[state.symbol][node].ravel()
            coordinates = np.arange(analytic.size)
            if entries is not None and coordinates.size > entries:
                coordinates = np.sort(rng.choice(coordinates, size=entries, replace=False))
            numeric = np.array([_difference(objective, state.state, node, analytic.size, q, step) for q in coordinates])
            error = relative_errors(analytic[coordinates], numeric, floor)
            checks.append(
                StateCheck(
                    node,
                    tree,
                    origin,
                    state.symbol,
                    state.state,
                    float(error.max()) if error.size else 0.0,
                    analytic[coordinates],
                    numeric,
                    coordinates,
                )
            )
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return checks


def _queue(model, params, batch, options: dict) -> tuple:
    """(queue, states, terms, loss) of ``batch``'s state checks: the queue
    sorted parents first, an entry (tree, depth, origin, rank of the state,
    its term's symbol, node) per node and state the backward defines; the
    cell's states (``Cell.state_terms``); each state's error term, symbol
    -> (n_nodes, ...) float64; the objective."""
    forest = getattr(batch, "forest", batch)
    trace: dict = {}
    loss, _ = model.loss_and_gradient(params, batch, params.zeros_like(), trace=trace, **options)
    cache = trace["cell_cache"]
    cell = model.cell
    states = cell.state_terms(forest, cache)
    terms = {
        state.symbol: np.asarray(cell.backward_term(forest, cache, state.symbol).values, dtype=np.float64)
        for state in states
    }
    forest_depth = depths(forest)
    queue = []
    for rank, state in enumerate(states):
        depth = forest_depth if state.depth is None else state.depth
        for node in range(forest.n_nodes):
            if not np.isnan(terms[state.symbol][node]).all():
                queue.append(
                    (int(forest.tree[node]), int(depth[node]), int(forest.origin[node]), rank, state.symbol, node)
                )
    return sorted(queue), states, terms, loss


def _difference(objective, state: str, node: int, width: int, q: int, step: float) -> float:
    """dJ/d(state[node, q]) by the fourth-order central difference."""
    values = []
    for shift in (step, -step, 2 * step, -2 * step):
        offset = np.zeros(width)
        offset[q] = shift
        values.append(objective(Nudge(state, node, offset)))
    return (8 * (values[0] - values[1]) - (values[2] - values[3])) / (12 * step)


def first_disagreement(checks: list, tolerance: float = TOLERANCE) -> StateCheck | None:
    """The first check (parents first) above ``tolerance``, or None."""
    return next((check for check in checks if check.disagrees(tolerance)), None)


def node_name(forest, node: int) -> str:
    """A forest row as a reader finds it: "tree 0 node 3 (a leaf, left child
    of node 5)", node numbers as within their tree."""
    origin = int(forest.origin[node])
    where = f"tree {int(forest.tree[node])} node {origin}"
    parent = int(forest.parent[node])
    kind = "a leaf" if forest.n_children[node] == 0 else "inner"
    if parent < 0:
        return f"{where} ({kind}, the root)"
    siblings = int(forest.n_children[parent])
    slot = int(forest.position[node])
    side = (
        "only child" if siblings == 1 else ("left", "right")[slot] + " child" if siblings == 2 else f"child {slot + 1}"
    )
    return f"{where} ({kind}, {side} of node {int(forest.origin[parent])})"


def summary(checks: list, forest=None, tolerance: float = TOLERANCE) -> str:
    """One sentence: the first node and term that disagree and how many do,
    or that every term agrees; nodes named by ``node_name`` given the forest."""
    first = first_disagreement(checks, tolerance)
    if first is None:
        return f"every node's terms agree with finite differences ({len(checks)} node states)"
    where = f"tree {first.tree} node {first.origin}" if forest is None else node_name(forest, first.node)
    count = sum(check.disagrees(tolerance) for check in checks)
    maker = ""
    if forest is not None and forest.parent[first.node] >= 0:
        parent = int(forest.origin[forest.parent[first.node]])
        maker = (
            f"; made by node {parent}'s backward, which routes it (node {parent}'s own "
            "terms agree: the local check names the quantity)"
        )
    return (
        f"first disagreement, parents first: {where}, {first.term} (rel. error "
        f"{first.error:.2e}){maker}; {count} of {len(checks)} node states disagree"
    )
