"""Bugs planted in backward passes: what the checks must catch, and where.

Each bug is a way to misread a paper's backward equations, planted by
replacing one of the cell's kernels (or its whole backward) while the cell's
backward runs; the forward is untouched, so J and its finite differences are
the true ones.  The parameter check must fail on each (tests/test_cell_*.py);
the per-node state check (``npcomp/study/state_checks.py``) must name the node and
the error term where it goes wrong first (tests/study/test_state_checks.py): ``term``
at the first node of ``wrong(forest)``, parents first.  The exercise
notebooks (docs/exercises/) plant them for a student to find.

    python -m gradcheck.planted --list
    python -m gradcheck.planted BUG explain --model slstm --check-states TREE
    python -m gradcheck.planted BUG gradcheck --model slstm

runs ``npcomp`` (or ``python -m gradcheck``) with BUG planted, so its checks
can be watched finding it.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

from npcomp.cells import registry


@dataclass(frozen=True)
class PlantedBug:
    """name: how it is called (``slstm-left-peephole-dropped``); model: the
    registry's; description: the misreading; term: the error term the
    per-node check names; wrong: forest -> (n,) bool, the nodes where that
    term is wrong (the check names the first of them, parents first);
    wrap: the cell's backward -> the backward with the bug."""

    name: str
    model: str
    description: str
    term: str
    wrong: Callable
    wrap: Callable


def kernel_bug(module: str, kernel: str, make: Callable) -> Callable:
    """A ``wrap`` replacing ``npcomp.cells.MODULE.KERNEL`` by ``make(kernel,
    forest)`` while the backward runs (the backward finds its kernels among
    its module's names when it calls them)."""
    where = importlib.import_module(f"npcomp.cells.{module}")

    def wrap(backward):
        def buggy(cell, params, forest, cache, d_h, grads):
            original = getattr(where, kernel)
            setattr(where, kernel, make(original, forest))
            try:
                return backward(cell, params, forest, cache, d_h, grads)
            finally:
                setattr(where, kernel, original)
        return buggy
    return wrap


def children_swapped(backward):
    """The backward run with every node's children in reverse order, so each
    child receives its sibling's gradient."""
    def buggy(cell, params, forest, cache, d_h, grads):
        forest.children = forest.children[:, ::-1].copy()
        try:
            return backward(cell, params, forest, cache, d_h, grads)
        finally:
            forest.children = forest.children[:, ::-1].copy()
    return buggy


@contextmanager
def planted(bug: PlantedBug):
    """Within, every cell of ``bug.model``'s class runs the buggy backward."""
    entry = registry.model(bug.model)
    cell_class = getattr(importlib.import_module(f"npcomp.cells.{entry.module}"),
                         entry.class_name)
    original = cell_class.__dict__.get("backward")
    inherited = cell_class.backward
    cell_class.backward = bug.wrap(inherited)
    try:
        yield bug
    finally:
        if original is None:
            del cell_class.backward
        else:
            cell_class.backward = original


# ---------------------------------------------------------------------------
# where the bugs show: masks over a forest's nodes
# ---------------------------------------------------------------------------

def children(forest) -> np.ndarray:
    return forest.parent >= 0


def left_children(forest) -> np.ndarray:
    return (forest.parent >= 0) & (forest.position == 0)


def inner(forest) -> np.ndarray:
    return np.arange(forest.n_nodes) >= forest.n_leaves


def inner_right_children(forest) -> np.ndarray:
    return inner(forest) & (forest.parent >= 0) & (forest.position == 1)


# ---------------------------------------------------------------------------
# the S-LSTM's (Zhu et al. eqs. 8-14)
# ---------------------------------------------------------------------------

def _slstm_route(change_gates=None, change_d_hc=None) -> Callable:
    """``_route_to_children`` reading changed copies of the gates and of
    d_hc = [eps_h^L part | eps_h^R part | (13)'s peepholes | (14)'s]."""
    def make(kernel, forest):
        def route(kids, gates, eps_c, d_hc, eps_h, start, stop):
            d = eps_c.shape[1]
            gates, d_hc = gates.copy(), d_hc.copy()
            if change_gates is not None:
                change_gates(gates, d)
            if change_d_hc is not None:
                change_d_hc(d_hc, d)
            kernel(kids, gates, eps_c, d_hc, eps_h, start, stop)
        return route
    return make


def _swap_sides(gates, d):
    left, right = gates[:, d:2 * d].copy(), gates[:, 2 * d:3 * d].copy()
    gates[:, d:2 * d], gates[:, 2 * d:3 * d] = right, left


def _swap_peepholes(d_hc, d):
    d_hc[:, 2 * d:3 * d], d_hc[:, 3 * d:] = d_hc[:, 3 * d:].copy(), d_hc[:, 2 * d:3 * d].copy()


def _f_right_for_left(gates, d):
    gates[:, d:2 * d] = gates[:, 2 * d:3 * d]


def _no_left_peepholes(d_hc, d):
    d_hc[:, 2 * d:3 * d] = 0.0


def _no_eps_h(d_hc, d):
    d_hc[:, :2 * d] = 0.0


def _printed_eq_14(kernel, forest):
    """A right child's own term eps^h o g'(c) with its parent's eps_{t+1}^h."""
    def cell_deltas(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop):
        printed = eps_h.copy()
        nodes = np.arange(start, stop)
        right = nodes[(forest.parent[nodes] >= 0) & (forest.position[nodes] == 1)]
        printed[right] = eps_h[forest.parent[right]]
        kernel(kids, gates, c, tanh_c, printed, co_term, eps_c, delta, start, stop)
    return cell_deltas


def _no_output_peephole(kernel, forest):
    def cell_deltas(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, eps_h, np.zeros_like(co_term), eps_c, delta, start, stop)
    return cell_deltas


def _g_prime_at_c(kernel, forest):
    def cell_deltas(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop):
        kernel(kids, gates, c, c, eps_h, co_term, eps_c, delta, start, stop)
    return cell_deltas


def _no_x_delta(kernel, forest):
    def cell_deltas(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop)
        d = c.shape[1]
        delta[start:stop, 3 * d:4 * d] = 0.0
    return cell_deltas


SLSTM_BUGS = (
    PlantedBug("slstm-children-swapped", "slstm",
               "eqs. 13 and 14 exchanged: the left child gets f^R and the W_c.^R "
               "peepholes, the right child f^L and W_c.^L",
               "eps_c", children, kernel_bug("slstm", "_route_to_children",
                                             _slstm_route(_swap_sides, _swap_peepholes))),
    PlantedBug("slstm-printed-eq-14", "slstm",
               "eq. 14 as printed (erratum Z1): a right child's own term eps^h o g'(c) "
               "with its parent's eps_{t+1}^h",
               "eps_c", inner_right_children,
               kernel_bug("slstm", "_cell_deltas", _printed_eq_14)),
    PlantedBug("slstm-output-peephole-dropped", "slstm",
               "eps_c without the (W_co)^T delta^o term of eqs. 13/14",
               "eps_c", inner, kernel_bug("slstm", "_cell_deltas", _no_output_peephole)),
    PlantedBug("slstm-children-get-no-eps-h", "slstm",
               "eqs. 8-14 as printed (erratum Z2): no error reaches the children's h",
               "eps_h", children,
               kernel_bug("slstm", "_route_to_children", _slstm_route(change_d_hc=_no_eps_h))),
    PlantedBug("slstm-g-prime-at-c", "slstm",
               "g'(c_t) read as 1 - c_t^2 instead of 1 - tanh(c_t)^2 (erratum Z3)",
               "eps_c", inner, kernel_bug("slstm", "_cell_deltas", _g_prime_at_c)),
    PlantedBug("slstm-x-delta-dropped", "slstm",
               "no delta_x (erratum Z2): the children's eps_h lacks delta_x W_hx^T",
               "eps_h", children, kernel_bug("slstm", "_cell_deltas", _no_x_delta)),
    PlantedBug("slstm-f-right-for-left", "slstm",
               "eq. 13 with f^R: a left child's forget term eps_c,p f^R_p",
               "eps_c", left_children,
               kernel_bug("slstm", "_route_to_children",
                          _slstm_route(change_gates=_f_right_for_left))),
    PlantedBug("slstm-left-peephole-dropped", "slstm",
               "eq. 13 without its peephole terms: a left child's eps_c lacks "
               "(W_ci^L)^T delta^i + (W_cfl^L)^T delta^fl + (W_cfr^L)^T delta^fr",
               "eps_c", left_children,
               kernel_bug("slstm", "_route_to_children",
                          _slstm_route(change_d_hc=_no_left_peepholes))),
)


# ---------------------------------------------------------------------------
# the N-ary Tree-LSTM's (Tai et al. eqs. 9-14)
# ---------------------------------------------------------------------------

def _forget_path_dropped(kernel, forest):
    """eps_c of child k = eps_c_j, without f_jk (reverses eq. 13 wrongly)."""
    def gate_deltas(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop)
        for j in range(start, stop):
            for kid in kids[j]:
                if kid >= 0:
                    d_c[kid] = d_c[j]
    return gate_deltas


def _own_term_without_o(kernel, forest):
    """eps_c_j += eps_h (1 - tanh(c)^2), the output gate o forgotten: the
    backward reads o = 1 (and so delta_o = 0)."""
    def gate_deltas(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop):
        d = c.shape[1]
        no_o = gates.copy()
        no_o[:, d:2 * d] = 1.0
        kernel(kids, no_o, c, tanh_c, d_h, d_c, delta, start, stop)
    return gate_deltas


def _u_derivative_as_sigmoid(kernel, forest):
    """delta_u with u (1 - u), the sigmoid's derivative, for tanh's 1 - u^2."""
    def gate_deltas(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop)
        d = c.shape[1]
        rows = slice(start, stop)
        i, u = gates[rows, :d], gates[rows, 2 * d:3 * d]
        eps_c = d_c[rows]
        delta[rows, 2 * d:3 * d] = eps_c * i * u * (1.0 - u)
    return gate_deltas


TREELSTM_BUGS = (
    PlantedBug("treelstm-forget-path-dropped", "treelstm-nary",
               "eq. 13 reversed without f: a child's eps_c is its parent's eps_c",
               "eps_c", children,
               kernel_bug("treelstm_nary", "_gate_deltas", _forget_path_dropped)),
    PlantedBug("treelstm-own-term-without-o", "treelstm-nary",
               "eq. 14 reversed without o: eps_c += eps_h (1 - tanh(c)^2)",
               "eps_c", lambda forest: np.ones(forest.n_nodes, dtype=bool),
               kernel_bug("treelstm_nary", "_gate_deltas", _own_term_without_o)),
    PlantedBug("treelstm-u-derivative-as-sigmoid", "treelstm-nary",
               "eq. 12 reversed with the sigmoid's derivative u (1 - u): the children's "
               "eps_h gets delta_u U_l^(u)T wrong",
               "eps_h", children,
               kernel_bug("treelstm_nary", "_gate_deltas", _u_derivative_as_sigmoid)),
    PlantedBug("treelstm-children-swapped", "treelstm-nary",
               "each child gets its sibling's gradient (children read in reverse order)",
               "eps_h", children, children_swapped),
)

BUGS = {bug.name: bug for bug in SLSTM_BUGS + TREELSTM_BUGS}


def bug(name: str) -> PlantedBug:
    try:
        return BUGS[name]
    except KeyError:
        raise ValueError(f"no planted bug {name!r}; they are {', '.join(BUGS)}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gradcheck.planted",
        description="Run an npcomp command with a bug planted in a cell's backward pass "
        "(the forward and the finite differences stay true).")
    parser.add_argument("--list", action="store_true", help="list the planted bugs")
    parser.add_argument("bug", nargs="?", choices=tuple(BUGS), metavar="BUG")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="npcomp's arguments (explain --model slstm --check-states TREE), "
                        "or gradcheck and its arguments (gradcheck --model slstm)")
    args = parser.parse_args(argv)
    if args.list or args.bug is None:
        for entry in BUGS.values():
            print(f"{entry.name:<34}{entry.model:<15}{entry.term:<7}{entry.description}")
        return 0
    if args.command[:1] == ["gradcheck"]:
        from .__main__ import main as run
        command = args.command[1:]
    else:
        from npcomp.cli import main as run
        command = args.command
    with planted(BUGS[args.bug]):
        return run(command)


if __name__ == "__main__":
    sys.exit(main())
