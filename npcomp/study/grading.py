"""Exercises that grade: a student's backward, written as functions of one
node's inputs, checked part by part against central differences of that
node's forward, on inputs the grader draws itself.

A blank of the exercise notebooks (docs/exercises/) is a function, say

    def node_backward(eps_h, eps_c, i, o, u, f_l, f_r, c, c_l, c_r) -> dict

returning named parts (``{"delta_i": ..., "eps_c_l": ...}``).  ``grade``
draws the node's inputs at random (pre-activations, children's states, the
error arriving from above), computes the forward quantities the function
reads, calls it, and compares each part with the derivative of the node's
local objective (the error from above times the node's outputs) in the
input the part is the error of, by fourth-order central differences in
float64.  The first part that is wrong raises ``Wrong`` naming it (and
saying which parts are right), so the feedback points at one equation; a
function that returns values copied from one tree's explanation fails,
since the grader's inputs are not that tree's.

The node forwards here (and those of the two binary-tree LSTMs whose gates
peek at the cells, in ``peephole_nodes.py``) are the cells' equations for
one node, plain NumPy (tests/study/test_grading.py checks each against its
cell's own forward).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .finite_differences import relative_errors

STEP = 1e-4
TOLERANCE = 1e-6


class Wrong(AssertionError):
    """A part of a student's answer disagrees with finite differences."""

    def __init__(self, part: str, message: str):
        self.part = part
        super().__init__(message)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def central(objective: Callable, value: np.ndarray, step: float = STEP) -> np.ndarray:
    """d objective / d value (any shape), fourth-order central differences."""
    value = np.array(value, dtype=np.float64)
    out = np.zeros_like(value)
    for index in np.ndindex(value.shape):
        readings = []
        for shift in (step, -step, 2 * step, -2 * step):
            moved = value.copy()
            moved[index] += shift
            readings.append(objective(moved))
        out[index] = (8 * (readings[0] - readings[1]) - (readings[2] - readings[3])) / (12 * step)
    return out


@dataclass(frozen=True)
class Node:
    """One node's forward for grading.

    draw:     rng -> {input name: array}: the node's free inputs
              (pre-activations, children's states, weights, the error from above)
    shown:    inputs -> {name: array}: what the student's function is given
    objective: (inputs) -> float: the local objective, the error from above
              times the node's outputs (every input as drawn)
    parts:    {part name: (input name it is the error of, what it reverses)}
    """

    name: str
    draw: Callable
    shown: Callable
    objective: Callable
    parts: dict


def expected(node: Node, inputs: dict, parts: tuple | None = None) -> dict:
    """Each part's value (of ``parts``; None: all) by central differences of
    the node's objective."""
    out = {}
    for part, (name, _) in node.parts.items():
        if parts is not None and part not in parts:
            continue

        def moved(value, name=name):
            return node.objective({**inputs, name: value})

        out[part] = central(moved, inputs[name])
    return out


def relative_error(yours: np.ndarray, value: np.ndarray) -> float:
    """The largest difference of ``yours`` from ``value`` (same shape)
    relative to the part's own scale, the largest entry of either (at least
    1e-8): central differences round by about 1e-12 whatever an entry's
    size, so an entry near 0 of a right answer, measured against itself,
    could be told wrong; a wrong equation moves entries on the part's scale."""
    scale = max(float(np.abs(yours).max(initial=0.0)) + float(np.abs(value).max(initial=0.0)), 1e-8)
    # the gradient checks' measure, its floor the part's scale (no entry's own
    # |yours| + |value| exceeds it, so every entry is divided by the scale)
    return float(relative_errors(yours, value, floor=scale).max(initial=0.0))


def grade(
    function: Callable,
    node: Node,
    parts: tuple | None = None,
    trials: int = 3,
    seed: int | None = None,
    tolerance: float = TOLERANCE,
) -> str:
    """Check ``function`` (the student's: keyword arguments ``node.shown``
    gives, returning {part: array}) on ``trials`` random draws, in the
    ``parts`` named (None: all of ``node.parts``); ``Wrong`` naming the
    first wrong part, else a line saying every part is right."""
    rng = np.random.default_rng(seed)
    wanted = tuple(node.parts) if parts is None else tuple(parts)
    for trial in range(1, trials + 1):
        inputs = node.draw(rng)
        answer = function(**node.shown(inputs))
        if not isinstance(answer, dict):
            raise Wrong("", f"{node.name}: return a dict of the parts {', '.join(wanted)}, not {type(answer).__name__}")
        missing = [part for part in wanted if part not in answer]
        if missing:
            raise Wrong(
                missing[0], f"{node.name}: no part {missing[0]!r} in your answer (it should name {', '.join(wanted)})"
            )
        truth = expected(node, inputs, wanted)
        right = []
        for part, value in truth.items():
            yours = np.asarray(answer[part], dtype=np.float64)
            if yours.shape != value.shape:
                raise Wrong(
                    part, f"{node.name}: {part} has shape {yours.shape}, the input it is the error of has {value.shape}"
                )
            error = relative_error(yours, value)
            if not error <= tolerance:
                reverses = node.parts[part][1]
                raise Wrong(
                    part,
                    f"{node.name}: {part} is wrong ({reverses}); on random "
                    f"inputs (draw {trial}) yours is {_short(yours)}, finite "
                    f"differences of the node's forward give {_short(value)} "
                    f"(rel. error {error:.1e})" + (f"; right so far: {', '.join(right)}" if right else ""),
                )
            right.append(part)
    return f"{node.name}: every part right ({', '.join(wanted)}) on {trials} random draws"


def _short(values: np.ndarray) -> str:
    flat = values.ravel()
    shown = ", ".join(f"{value:.4g}" for value in flat[:4])
    return f"[{shown}{', ...' if flat.size > 4 else ''}]"


# ---------------------------------------------------------------------------
# the N-ary Tree-LSTM (Tai et al. eqs. 9-14), N = 2, at an inner node
# ---------------------------------------------------------------------------


def _nary_draw(d: int):
    def draw(rng) -> dict:
        names = ("z_i", "z_o", "z_u", "z_fl", "z_fr", "c_l", "c_r", "eps_h", "eps_c_above")
        inputs = {name: rng.normal(0, 1, d) for name in names}
        inputs["c_offset"] = np.zeros(d)
        return inputs

    return draw


def _nary_forward(inputs: dict) -> dict:
    """Eqs. 9-14 from the pre-activations (the sums of eqs. 9-12 drawn)."""
    i, o, f_l, f_r = (_sigmoid(inputs[name]) for name in ("z_i", "z_o", "z_fl", "z_fr"))
    u = np.tanh(inputs["z_u"])
    c = i * u + f_l * inputs["c_l"] + f_r * inputs["c_r"] + inputs["c_offset"]  # (13)
    return {"i": i, "o": o, "u": u, "f_l": f_l, "f_r": f_r, "c": c, "h": o * np.tanh(c)}


def _nary_shown(inputs: dict) -> dict:
    forward = _nary_forward(inputs)
    del forward["h"]
    return {
        **forward,
        "c_l": inputs["c_l"],
        "c_r": inputs["c_r"],
        "eps_h": inputs["eps_h"],
        "eps_c_above": inputs["eps_c_above"],
    }


def _nary_objective(inputs: dict) -> float:
    forward = _nary_forward(inputs)
    return float(inputs["eps_h"] @ forward["h"] + inputs["eps_c_above"] @ forward["c"])


NARY_NODE = Node(
    "the N-ary Tree-LSTM's node backward",
    _nary_draw(3),
    _nary_shown,
    _nary_objective,
    {
        "eps_c": ("c_offset", "reverses 14, plus the error from above"),
        "delta_o": ("z_o", "reverses 14 and 11"),
        "delta_i": ("z_i", "reverses 13 and 9"),
        "delta_u": ("z_u", "reverses 13 and 12"),
        "delta_f_l": ("z_fl", "reverses 13 and 10 for k = l"),
        "delta_f_r": ("z_fr", "reverses 13 and 10 for k = r"),
        "eps_c_l": ("c_l", "reverses 13 for c_l"),
        "eps_c_r": ("c_r", "reverses 13 for c_r"),
    },
)


def _route_draw(rng) -> dict:
    d = 3
    return {
        "h_l": rng.normal(0, 1, d),
        "h_r": rng.normal(0, 1, d),
        "U": rng.normal(0, 0.5, (2 * d, 5 * d)),
        "delta": rng.normal(0, 1, 5 * d),
    }


NARY_ROUTE = Node(
    "the N-ary Tree-LSTM's error to the children's h",
    _route_draw,
    lambda inputs: {"delta": inputs["delta"], "U": inputs["U"]},
    lambda inputs: float(inputs["delta"] @ (np.concatenate([inputs["h_l"], inputs["h_r"]]) @ inputs["U"])),
    {
        "eps_h_l": ("h_l", "reverses 9-12 through U's rows of child slot l"),
        "eps_h_r": ("h_r", "reverses 9-12 through U's rows of child slot r"),
    },
)


def _weights_draw(rng) -> dict:
    d, nodes = 3, 4
    return {
        "hc": rng.normal(0, 1, (nodes, 2 * d)),
        "deltas": rng.normal(0, 1, (nodes, 5 * d)),
        "U": rng.normal(0, 0.5, (2 * d, 5 * d)),
    }


NARY_WEIGHTS = Node(
    "the N-ary Tree-LSTM's dU over the nodes",
    _weights_draw,
    lambda inputs: {"hc": inputs["hc"], "deltas": inputs["deltas"]},
    lambda inputs: float(np.sum(inputs["deltas"] * (inputs["hc"] @ inputs["U"]))),
    {"dU": ("U", "dU = the sum over the nodes of [h_l h_r]^T delta")},
)


# ---------------------------------------------------------------------------
# the RNTN (Socher et al. 2013 eq. 3) at an inner node
# ---------------------------------------------------------------------------


def _rntn_draw(rng) -> dict:
    d = 2
    return {
        "c_1": rng.normal(0, 1, d),
        "c_2": rng.normal(0, 1, d),
        "V": rng.normal(0, 0.3, (2 * d, 2 * d, d)),
        "W": rng.normal(0, 0.5, (2 * d, d)),
        "b": rng.normal(0, 0.5, d),
        "eps_h": rng.normal(0, 1, d),
        "z_offset": np.zeros(d),
    }


def _rntn_p(inputs: dict) -> np.ndarray:
    """Eq. 3: p = tanh(c V^[1:d] c^T + c W + b), c = [c_1 c_2]."""
    c = np.concatenate([inputs["c_1"], inputs["c_2"]])
    z = np.einsum("r,rsk,s->k", c, inputs["V"], c) + c @ inputs["W"] + inputs["b"]
    return np.tanh(z + inputs["z_offset"])


RNTN_NODE = Node(
    "the RNTN's node backward",
    _rntn_draw,
    lambda inputs: {
        "eps_h": inputs["eps_h"],
        "p": _rntn_p(inputs),
        "c_1": inputs["c_1"],
        "c_2": inputs["c_2"],
        "V": inputs["V"],
        "W": inputs["W"],
    },
    lambda inputs: float(inputs["eps_h"] @ _rntn_p(inputs)),
    {
        "delta": ("z_offset", "reverses f = tanh of eq. 3"),
        "eps_1": ("c_1", "reverses eq. 3 for the left child: delta_k c S^[k] + delta W^T"),
        "eps_2": ("c_2", "reverses eq. 3 for the right child: delta_k c S^[k] + delta W^T"),
    },
)


def _rntn_weights_draw(rng) -> dict:
    d, nodes = 2, 3
    return {
        "cs": rng.normal(0, 1, (nodes, 2 * d)),
        "deltas": rng.normal(0, 1, (nodes, d)),
        "V": rng.normal(0, 0.3, (2 * d, 2 * d, d)),
    }


RNTN_WEIGHTS = Node(
    "the RNTN's dV over the nodes",
    _rntn_weights_draw,
    lambda inputs: {"cs": inputs["cs"], "deltas": inputs["deltas"]},
    lambda inputs: float(np.einsum("nk,nr,rsk,ns->", inputs["deltas"], inputs["cs"], inputs["V"], inputs["cs"])),
    {"dV": ("V", "dV^[k] = the sum over the nodes of delta_k c^T c")},
)


# ---------------------------------------------------------------------------
# the Child-Sum Tree-LSTM (Tai et al. eqs. 2-8) at a node of three children
# ---------------------------------------------------------------------------


def _childsum_draw(rng) -> dict:
    d, kids = 3, 3
    inputs = {name: rng.normal(0, 1, d) for name in ("z_i", "z_o", "z_u", "eps_h", "eps_c_above")}
    inputs.update(z_f=rng.normal(0, 1, (kids, d)), c_children=rng.normal(0, 1, (kids, d)), c_offset=np.zeros(d))
    return inputs


def _childsum_forward(inputs: dict) -> dict:
    """Eqs. 3-8 from the pre-activations (their sums drawn), f one row a child."""
    i, o, f = (_sigmoid(inputs[name]) for name in ("z_i", "z_o", "z_f"))
    u = np.tanh(inputs["z_u"])
    c = i * u + (f * inputs["c_children"]).sum(axis=0) + inputs["c_offset"]  # (7)
    return {"i": i, "o": o, "u": u, "f": f, "c": c, "h": o * np.tanh(c)}


def _childsum_shown(inputs: dict) -> dict:
    forward = _childsum_forward(inputs)
    del forward["h"]
    return {
        **forward,
        "c_children": inputs["c_children"],
        "eps_h": inputs["eps_h"],
        "eps_c_above": inputs["eps_c_above"],
    }


CHILDSUM_NODE = Node(
    "the Child-Sum Tree-LSTM's node backward",
    _childsum_draw,
    _childsum_shown,
    lambda inputs: float(
        inputs["eps_h"] @ _childsum_forward(inputs)["h"] + inputs["eps_c_above"] @ _childsum_forward(inputs)["c"]
    ),
    {
        "eps_c": ("c_offset", "reverses 8, plus the error from above"),
        "delta_o": ("z_o", "reverses 8 and 5"),
        "delta_i": ("z_i", "reverses 7 and 3"),
        "delta_u": ("z_u", "reverses 7 and 6"),
        "delta_f": ("z_f", "reverses 7 and 4, one row a child"),
        "eps_c_children": ("c_children", "reverses 7 for each child's c"),
    },
)


def _childsum_route_draw(rng) -> dict:
    d, kids = 3, 3
    return {
        "h_children": rng.normal(0, 1, (kids, d)),
        "U": rng.normal(0, 0.5, (d, 3 * d)),
        "U_f": rng.normal(0, 0.5, (d, d)),
        "delta": rng.normal(0, 1, 3 * d),
        "delta_f": rng.normal(0, 1, (kids, d)),
    }


CHILDSUM_ROUTE = Node(
    "the Child-Sum Tree-LSTM's error to the children's h",
    _childsum_route_draw,
    lambda inputs: {key: inputs[key] for key in ("delta", "delta_f", "U", "U_f")},
    lambda inputs: float(
        inputs["delta"] @ (inputs["h_children"].sum(axis=0) @ inputs["U"])
        + np.sum(inputs["delta_f"] * (inputs["h_children"] @ inputs["U_f"]))
    ),
    {"eps_h_children": ("h_children", "reverses 3, 5, 6 through h~ (eq. 2) and 4 through each child's own h")},
)


def _childsum_weights_draw(rng) -> dict:
    d, edges = 3, 5
    return {
        "h_edges": rng.normal(0, 1, (edges, d)),
        "delta_f": rng.normal(0, 1, (edges, d)),
        "h_tildes": rng.normal(0, 1, (edges, d)),
        "U_f": rng.normal(0, 0.5, (d, d)),
    }


CHILDSUM_WEIGHTS = Node(
    "the Child-Sum Tree-LSTM's dU_f over the edges",
    _childsum_weights_draw,
    lambda inputs: {key: inputs[key] for key in ("h_edges", "h_tildes", "delta_f")},
    lambda inputs: float(np.sum(inputs["delta_f"] * (inputs["h_edges"] @ inputs["U_f"]))),
    {"dU_f": ("U_f", "dU_f = the sum over the (parent, child) edges of h_k^T delta_fk")},
)
