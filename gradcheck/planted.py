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

# the face of the planted bugs (docs/API.md imports them as
# npcomp.gradcheck.planted, which a wheel carries too)
__all__ = ["PlantedBug", "BUGS", "bug", "planted", "mysteries"]

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
    cell_class = getattr(importlib.import_module(f"npcomp.cells.{entry.module}"), entry.class_name)
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
    left, right = gates[:, d : 2 * d].copy(), gates[:, 2 * d : 3 * d].copy()
    gates[:, d : 2 * d], gates[:, 2 * d : 3 * d] = right, left


def _swap_peepholes(d_hc, d):
    d_hc[:, 2 * d : 3 * d], d_hc[:, 3 * d :] = d_hc[:, 3 * d :].copy(), d_hc[:, 2 * d : 3 * d].copy()


def _f_right_for_left(gates, d):
    gates[:, d : 2 * d] = gates[:, 2 * d : 3 * d]


def _no_left_peepholes(d_hc, d):
    d_hc[:, 2 * d : 3 * d] = 0.0


def _no_eps_h(d_hc, d):
    d_hc[:, : 2 * d] = 0.0


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
        delta[start:stop, 3 * d : 4 * d] = 0.0

    return cell_deltas


def _forget_deltas_other_child(kernel, forest):
    """Eqs. 10 and 11 with the other child's cell: delta_fl = eps_c c^R f^L
    (1 - f^L), delta_fr = eps_c c^L f^R (1 - f^R), at the nodes with two children."""

    def cell_deltas(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop)
        d = c.shape[1]
        for t in range(start, stop):
            left, right = kids[t]
            if left >= 0 and right >= 0:
                for k, other in ((1, right), (2, left)):
                    f = gates[t, k * d : (k + 1) * d]
                    delta[t, k * d : (k + 1) * d] = eps_c[t] * c[other] * f * (1.0 - f)

    return cell_deltas


def children_of_an_inner_childs_parent(forest) -> np.ndarray:
    """The children of the nodes with two children, one of them inner (the
    two children's c differ: a leaf's is 0)."""
    inner_kid = (forest.children >= forest.n_leaves).any(axis=1)
    differ = inner_kid & (forest.n_children == 2)
    return (forest.parent >= 0) & differ[np.maximum(forest.parent, 0)]


SLSTM_BUGS = (
    PlantedBug(
        "slstm-children-swapped",
        "slstm",
        "eqs. 13 and 14 exchanged: the left child gets f^R and the W_c.^R peepholes, the right child f^L and W_c.^L",
        "eps_c",
        children,
        kernel_bug("slstm", "_route_to_children", _slstm_route(_swap_sides, _swap_peepholes)),
    ),
    PlantedBug(
        "slstm-printed-eq-14",
        "slstm",
        "eq. 14 as printed (erratum Z1): a right child's own term eps^h o g'(c) with its parent's eps_{t+1}^h",
        "eps_c",
        inner_right_children,
        kernel_bug("slstm", "_cell_deltas", _printed_eq_14),
    ),
    PlantedBug(
        "slstm-output-peephole-dropped",
        "slstm",
        "eps_c without the (W_co)^T delta^o term of eqs. 13/14",
        "eps_c",
        inner,
        kernel_bug("slstm", "_cell_deltas", _no_output_peephole),
    ),
    PlantedBug(
        "slstm-children-get-no-eps-h",
        "slstm",
        "eqs. 8-14 as printed (erratum Z2): no error reaches the children's h",
        "eps_h",
        children,
        kernel_bug("slstm", "_route_to_children", _slstm_route(change_d_hc=_no_eps_h)),
    ),
    PlantedBug(
        "slstm-g-prime-at-c",
        "slstm",
        "g'(c_t) read as 1 - c_t^2 instead of 1 - tanh(c_t)^2 (erratum Z3)",
        "eps_c",
        inner,
        kernel_bug("slstm", "_cell_deltas", _g_prime_at_c),
    ),
    PlantedBug(
        "slstm-x-delta-dropped",
        "slstm",
        "no delta_x (erratum Z2): the children's eps_h lacks delta_x W_hx^T",
        "eps_h",
        children,
        kernel_bug("slstm", "_cell_deltas", _no_x_delta),
    ),
    PlantedBug(
        "slstm-f-right-for-left",
        "slstm",
        "eq. 13 with f^R: a left child's forget term eps_c,p f^R_p",
        "eps_c",
        left_children,
        kernel_bug("slstm", "_route_to_children", _slstm_route(change_gates=_f_right_for_left)),
    ),
    PlantedBug(
        "slstm-left-peephole-dropped",
        "slstm",
        "eq. 13 without its peephole terms: a left child's eps_c lacks "
        "(W_ci^L)^T delta^i + (W_cfl^L)^T delta^fl + (W_cfr^L)^T delta^fr",
        "eps_c",
        left_children,
        kernel_bug("slstm", "_route_to_children", _slstm_route(change_d_hc=_no_left_peepholes)),
    ),
    PlantedBug(
        "slstm-forget-deltas-other-child",
        "slstm",
        "eqs. 10 and 11 with the other child's cell: delta_fl = eps_c c^R f^L "
        "(1 - f^L), delta_fr = eps_c c^L f^R (1 - f^R)",
        "eps_h",
        children_of_an_inner_childs_parent,
        kernel_bug("slstm", "_cell_deltas", _forget_deltas_other_child),
    ),
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
        no_o[:, d : 2 * d] = 1.0
        kernel(kids, no_o, c, tanh_c, d_h, d_c, delta, start, stop)

    return gate_deltas


def _u_derivative_as_sigmoid(kernel, forest):
    """delta_u with u (1 - u), the sigmoid's derivative, for tanh's 1 - u^2."""

    def gate_deltas(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop)
        d = c.shape[1]
        rows = slice(start, stop)
        i, u = gates[rows, :d], gates[rows, 2 * d : 3 * d]
        eps_c = d_c[rows]
        delta[rows, 2 * d : 3 * d] = eps_c * i * u * (1.0 - u)

    return gate_deltas


TREELSTM_BUGS = (
    PlantedBug(
        "treelstm-forget-path-dropped",
        "treelstm-nary",
        "eq. 13 reversed without f: a child's eps_c is its parent's eps_c",
        "eps_c",
        children,
        kernel_bug("treelstm_nary", "_gate_deltas", _forget_path_dropped),
    ),
    PlantedBug(
        "treelstm-own-term-without-o",
        "treelstm-nary",
        "eq. 14 reversed without o: eps_c += eps_h (1 - tanh(c)^2)",
        "eps_c",
        lambda forest: np.ones(forest.n_nodes, dtype=bool),
        kernel_bug("treelstm_nary", "_gate_deltas", _own_term_without_o),
    ),
    PlantedBug(
        "treelstm-u-derivative-as-sigmoid",
        "treelstm-nary",
        "eq. 12 reversed with the sigmoid's derivative u (1 - u): the children's eps_h gets delta_u U_l^(u)T wrong",
        "eps_h",
        children,
        kernel_bug("treelstm_nary", "_gate_deltas", _u_derivative_as_sigmoid),
    ),
    PlantedBug(
        "treelstm-children-swapped",
        "treelstm-nary",
        "each child gets its sibling's gradient (children read in reverse order)",
        "eps_h",
        children,
        children_swapped,
    ),
)

# ---------------------------------------------------------------------------
# errors a parent routes to its children wrongly: the parent's own terms
# agree, its children's do not (the local check names the parent)
# ---------------------------------------------------------------------------


def _transpose_half_dropped(kernel, forest):
    """The RNTN's S^[k] = V^[k] + V^[k]^T read as V^[k] alone."""

    def symmetrised(V, out):
        width = V.shape[0]
        pair = 0
        for r in range(width):
            for s in range(r, width):
                out[pair, :] = V[r, s, :]
                pair += 1

    return symmetrised


def _candidate_errors_swapped(kernel, forest):
    """The LSTM-RNN's delta_a1 and delta_a2 exchanged: each child's candidate
    term a_k = h_k W_ck gets its sibling's error."""
    from npcomp.cells.lstm_rnn import A1, A2

    def cell_deltas(code, children, gates, u, state, g_c, d_h, d_c, eps_c_from_o, delta, delta_u, start, stop):
        kernel(code, children, gates, u, state, g_c, d_h, d_c, eps_c_from_o, delta, delta_u, start, stop)
        d = u.shape[1]
        first = delta[start:stop, A1 * d : (A1 + 1) * d].copy()
        delta[start:stop, A1 * d : (A1 + 1) * d] = delta[start:stop, A2 * d : (A2 + 1) * d]
        delta[start:stop, A2 * d : (A2 + 1) * d] = first

    return cell_deltas


def _right_child_unswapped(kernel, forest):
    """The LSTM-RNN's right child y sent the deltas as if it were x: the
    swap of (L2), (L4) (y's gate reads y through the "1" matrices) and the
    "2" blocks of (L5), (L6) not reversed for y."""

    def route(children, target, delta, delta_terms, start, stop):
        unswapped = target.copy()
        unswapped[1] = target[0]
        kernel(children, unswapped, delta, delta_terms, start, stop)

    return route


def _forget_delta_other_child(kernel, forest):
    """The N-ary Tree-LSTM's delta_fk read with the other child's c."""

    def gate_deltas(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop):
        kernel(kids, gates, c, tanh_c, d_h, d_c, delta, start, stop)
        d = c.shape[1]
        for j in range(start, stop):
            if kids.shape[1] == 2 and kids[j, 0] >= 0 and kids[j, 1] >= 0:
                for k in range(2):
                    f = gates[j, (3 + k) * d : (4 + k) * d]
                    other = c[kids[j, 1 - k]]
                    delta[j, (3 + k) * d : (4 + k) * d] = d_c[j] * other * f * (1.0 - f)

    return gate_deltas


def two_children_children(forest) -> np.ndarray:
    """The children of the nodes with two children."""
    parent = forest.parent
    return (parent >= 0) & (forest.n_children[np.maximum(parent, 0)] == 2)


ROUTING_BUGS = (
    PlantedBug(
        "rntn-transpose-half-dropped",
        "rntn",
        "the error to the children through V^[k] alone, not S^[k] = V^[k] + V^[k]^T: d(c V^[k] c^T)/dc read as c V^[k]",
        "eps_h",
        children,
        kernel_bug("rntn", "_symmetrised", _transpose_half_dropped),
    ),
    PlantedBug(
        "lstm-rnn-candidate-errors-swapped",
        "lstm-rnn",
        "(L5) reversed with the two children's candidate errors exchanged: x gets "
        "delta_u i_2 W_c1^T, y delta_u i_1 W_c2^T",
        "eps_h",
        children,
        kernel_bug("lstm_rnn", "cell_deltas", _candidate_errors_swapped),
    ),
    PlantedBug(
        "treelstm-forget-delta-other-child",
        "treelstm-nary",
        "eq. 13 reversed for f_jk with the other child's c: delta_fk = eps_c c_jl f_k (1 - f_k), l != k",
        "eps_h",
        two_children_children,
        kernel_bug("treelstm_nary", "_gate_deltas", _forget_delta_other_child),
    ),
)


def _derivative_as_sigmoid(kernel, forest):
    """The RNTN's delta with p (1 - p), the sigmoid's derivative, for tanh's."""

    def tanh_deltas(h, d_h, delta, start, stop, leaves):
        kernel(h, d_h, delta, start, stop, leaves)
        rows = slice(start, stop)
        delta[start - leaves : stop - leaves] = d_h[rows] * h[rows] * (1.0 - h[rows])

    return tanh_deltas


RNTN_BUGS = (
    PlantedBug(
        "rntn-derivative-as-sigmoid",
        "rntn",
        "eq. 3's f' read as the sigmoid's p (1 - p): every delta wrong, so the error to the children too",
        "eps_h",
        children,
        kernel_bug("rntn", "_tanh_deltas", _derivative_as_sigmoid),
    ),
)


def _no_forget_error_to_children(kernel, forest):
    """The Child-Sum's eq. 4 not reversed for the children's h: no delta_fk U_f^T."""

    def route(first_edge, edge_child, d_h_tilde, d_h_child, d_h, start, stop):
        kernel(first_edge, edge_child, d_h_tilde, np.zeros_like(d_h_child), d_h, start, stop)

    return route


def _forget_delta_parents_c(kernel, forest):
    """The Child-Sum's delta_fk read with the parent's c for the child's."""

    def gate_deltas(first_edge, edge_child, gates, forget, c, tanh_c, d_h, d_c, delta, delta_f, start, stop):
        kernel(first_edge, edge_child, gates, forget, c, tanh_c, d_h, d_c, delta, delta_f, start, stop)
        for j in range(start, stop):
            for e in range(first_edge[j], first_edge[j + 1]):
                f = forget[e]
                delta_f[e] = d_c[j] * c[j] * f * (1.0 - f)

    return gate_deltas


CHILDSUM_BUGS = (
    PlantedBug(
        "childsum-forget-error-dropped",
        "treelstm-childsum",
        "eq. 4 not reversed for h_k: a child's eps_h lacks delta_fk U^(f)T",
        "eps_h",
        children,
        kernel_bug("treelstm_childsum", "_route_to_children", _no_forget_error_to_children),
    ),
    PlantedBug(
        "childsum-forget-delta-parents-c",
        "treelstm-childsum",
        "eq. 7 reversed for f_jk with the parent's c_j for the child's c_k",
        "eps_h",
        children,
        kernel_bug("treelstm_childsum", "_gate_deltas", _forget_delta_parents_c),
    ),
)

LSTM_RNN_BUGS = (
    PlantedBug(
        "lstm-rnn-right-child-unswapped",
        "lstm-rnn",
        "(L1)-(L6) reversed for y as for x: the right child gets the deltas of the "
        "blocks that read x (delta_i1 through W_i1, not delta_i2; delta_a1, not delta_a2)",
        "eps_h",
        lambda forest: (forest.parent >= 0) & (forest.position == 1),
        kernel_bug("lstm_rnn", "route_to_children", _right_child_unswapped),
    ),
)

BUGS = {bug.name: bug for bug in SLSTM_BUGS + TREELSTM_BUGS + ROUTING_BUGS + RNTN_BUGS + CHILDSUM_BUGS + LSTM_RNN_BUGS}


def bug(name: str) -> PlantedBug:
    try:
        return BUGS[name]
    except KeyError:
        raise ValueError(f"no planted bug {name!r}; they are {', '.join(BUGS)}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gradcheck.planted",
        description="Run an npcomp command with a bug planted in a cell's backward pass "
        "(the forward and the finite differences stay true).",
    )
    parser.add_argument("--list", action="store_true", help="list the planted bugs")
    parser.add_argument("bug", nargs="?", choices=tuple(BUGS), metavar="BUG")
    parser.add_argument(
        "command",
        nargs=argparse.REMAINDER,
        help="npcomp's arguments (explain --model slstm --check-states TREE), "
        "or gradcheck and its arguments (gradcheck --model slstm)",
    )
    args = parser.parse_args(argv)
    if args.list or args.bug is None:
        for entry in BUGS.values():
            print(f"{entry.name:<34}{entry.model:<19}{entry.term:<7}{entry.description}")
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


# ---------------------------------------------------------------------------
# bugs a student hunts: names hidden, the prediction checked
# ---------------------------------------------------------------------------


class Mystery:
    """A planted bug under a letter, its name and description out of sight
    until ``check`` has compared a prediction with what the local check
    finds."""

    def __init__(self, letter: str, bug: PlantedBug):
        self.letter = letter
        self._bug = bug

    def __repr__(self) -> str:
        return f"<planted bug {self.letter}>"

    def check(self, prediction: tuple, model, params, trees: list, vocab) -> str:
        """``prediction`` = (node, term, equation): the node whose backward
        is wrong (as numbered in the tree), the error term it gets wrong
        (``eps_h``, ``eps_c``) and the number of the equation the bug
        misreads.  Runs the backward with the bug and the local checks
        (``explain --check-local``); AssertionError saying what they found
        where the prediction differs, else the bug's name and description."""
        from npcomp.study.explain import checked, explain
        from npcomp.study.finite_differences import TOLERANCE
        from npcomp.study.local_check_text import first_failing_record

        with planted(self._bug):
            document = checked(explain(model, params, trees, vocab, check_local=True), TOLERANCE)
        first = first_failing_record(document)
        node, term, equation = prediction
        found = (first["node"], first["term"])
        if found != (node, term) or not _names_equation(first["equation"], str(equation)):
            raise AssertionError(
                f"bug {self.letter}: you predicted node {node}, {term}, eq. "
                f"{equation}; the local check's first failure is node "
                f"{found[0]}, {found[1]}: {first['quantity']} "
                f"({first['equation']})"
            )
        return f"bug {self.letter}, right: {self._bug.name}: {self._bug.description}"


def _names_equation(reverses: str, equation: str) -> bool:
    """Whether "reverses 9, 11, 12, 10: ..." (or "reverses 14, 13", "reverses
    2-6", "reverses 13 and 10 for k = l") names ``equation`` among its
    numbers, ranges included."""
    import re

    numbers = reverses.removeprefix("reverses ").split(":")[0]
    for first, last in re.findall(r"\b(L?\d+)(?:-(L?\d+))?\b", numbers):
        if equation == first or equation == last:
            return True
        # a range, "9-12" or "L1-L6": the same prefix on its ends and the equation
        prefix = "L" if first.startswith("L") else ""
        ends = [value.removeprefix(prefix) for value in (first, last, equation)]
        if (
            last
            and equation.startswith(prefix)
            and all(end.isdigit() for end in ends)
            and last.startswith(prefix)
            and int(ends[0]) <= int(ends[2]) <= int(ends[1])
        ):
            return True
    return False


def mysteries(*names: str) -> dict:
    """{letter: Mystery} of the named bugs, lettered A, B, ... in order."""
    return {chr(ord("A") + index): Mystery(chr(ord("A") + index), BUGS[name]) for index, name in enumerate(names)}
