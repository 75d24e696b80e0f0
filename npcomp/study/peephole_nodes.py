"""The exercises' node equations of the two binary-tree LSTMs whose gates
peek at the memory cells: Zhu et al.'s S-LSTM (eqs. 1-7, the backward
printed as 8-14) and Le & Zuidema's LSTM-RNN ((L1)-(L7) as numbered in
``npcomp/cells/lstm_rnn.py``), each graded by ``grading.grade`` and read by
the local delta checks (``local_deltas.py``).

Each node's forward runs from the pre-activations' children's parts, with
the node's own c_t W_co added to the output gate's (the peephole of eq. 6,
(L6)), so the output gate's delta and eps_c see it.
"""

from __future__ import annotations

import numpy as np

from .grading import Node, _sigmoid


# ---------------------------------------------------------------------------
# the S-LSTM (Zhu et al. 2015 eqs. 1-7, backward 8-14) at an inner node
# ---------------------------------------------------------------------------


def _slstm_draw(rng) -> dict:
    """z_o is the children's part of eq. 6; the node adds c_t W_co itself."""
    d = 3
    names = ("z_i", "z_fl", "z_fr", "z_x", "z_o", "c_l", "c_r", "eps_h", "eps_c_above")
    inputs = {name: rng.normal(0, 1, d) for name in names}
    inputs.update(W_co=rng.normal(0, 0.5, (d, d)), c_offset=np.zeros(d))
    return inputs


def _slstm_forward(inputs: dict) -> dict:
    """Eqs. 1-7 from the pre-activations (the children's sums of 1-4 and 6 drawn)."""
    i, f_l, f_r = (_sigmoid(inputs[name]) for name in ("z_i", "z_fl", "z_fr"))  # (1)-(3)
    tanh_x = np.tanh(inputs["z_x"])  # (4)
    c = f_l * inputs["c_l"] + f_r * inputs["c_r"] + i * tanh_x + inputs["c_offset"]  # (5)
    o = _sigmoid(inputs["z_o"] + c @ inputs["W_co"])  # (6)
    return {"i": i, "f_l": f_l, "f_r": f_r, "tanh_x": tanh_x, "c": c, "o": o, "h": o * np.tanh(c)}  # (7)


def _slstm_shown(inputs: dict) -> dict:
    forward = _slstm_forward(inputs)
    del forward["h"]
    return {**forward, **{name: inputs[name] for name in ("c_l", "c_r", "eps_h", "eps_c_above", "W_co")}}


def _slstm_objective(inputs: dict) -> float:
    forward = _slstm_forward(inputs)
    return float(inputs["eps_h"] @ forward["h"] + inputs["eps_c_above"] @ forward["c"])


SLSTM_NODE = Node(
    "the S-LSTM's node backward",
    _slstm_draw,
    _slstm_shown,
    _slstm_objective,
    {
        "delta_o": ("z_o", "reverses 7 and 6; printed as (9)"),
        "eps_c": (
            "c_offset",
            "reverses 7, and 6 through W_co, plus the parent's share; printed in (13), (14), errata Z1, Z3",
        ),
        "delta_fl": ("z_fl", "reverses 5 and 2; printed as (10)"),
        "delta_fr": ("z_fr", "reverses 5 and 3; printed as (11)"),
        "delta_i": ("z_i", "reverses 5 and 1; printed as (12)"),
        "delta_x": ("z_x", "reverses 5 and 4; not printed (Z2)"),
    },
)


def _slstm_route_draw(rng) -> dict:
    d = 3
    inputs = {name: rng.normal(0, 1, d) for name in ("h_l", "h_r", "c_l", "c_r", "eps_c")}
    inputs.update(
        f_l=_sigmoid(rng.normal(0, 1, d)),
        f_r=_sigmoid(rng.normal(0, 1, d)),
        W_h=rng.normal(0, 0.5, (2 * d, 5 * d)),
        W_c=rng.normal(0, 0.5, (2 * d, 3 * d)),
        delta=rng.normal(0, 1, 5 * d),
    )
    return inputs


def _slstm_route_objective(inputs: dict) -> float:
    """The parent's terms that read its children's states: the children's
    sums of eqs. 1-4 and 6 (the deltas the error of each) and eq. 5."""
    d = inputs["h_l"].size
    h = np.concatenate([inputs["h_l"], inputs["h_r"]])
    c = np.concatenate([inputs["c_l"], inputs["c_r"]])
    sums = inputs["delta"] @ (h @ inputs["W_h"]) + inputs["delta"][: 3 * d] @ (c @ inputs["W_c"])
    cell = inputs["f_l"] * inputs["c_l"] + inputs["f_r"] * inputs["c_r"]
    return float(sums + inputs["eps_c"] @ cell)


SLSTM_ROUTE = Node(
    "the S-LSTM's error to its children",
    _slstm_route_draw,
    lambda inputs: {key: inputs[key] for key in ("delta", "eps_c", "f_l", "f_r", "W_h", "W_c")},
    _slstm_route_objective,
    {
        "eps_h_l": ("h_l", "reverses 1-4 and 6 through W_h's L rows (not printed, Z2)"),
        "eps_h_r": ("h_r", "reverses 1-4 and 6 through W_h's R rows (not printed, Z2)"),
        "eps_c_l": ("c_l", "the parent's share of eq. 13: reverses 5 and the peepholes of 1-3 through W_c's L rows"),
        "eps_c_r": ("c_r", "the parent's share of eq. 14: reverses 5 and the peepholes of 1-3 through W_c's R rows"),
    },
)


def _slstm_weights_draw(rng) -> dict:
    d, nodes = 3, 4
    return {
        "hc": rng.normal(0, 1, (nodes, 4 * d)),
        "c": rng.normal(0, 1, (nodes, d)),
        "deltas": rng.normal(0, 1, (nodes, 5 * d)),
        "W_c": rng.normal(0, 0.5, (2 * d, 3 * d)),
    }


def _slstm_peepholes(inputs: dict) -> float:
    """The peephole terms of eqs. 1-3 over the nodes, times their deltas."""
    d = inputs["c"].shape[1]
    return float(np.sum(inputs["deltas"][:, : 3 * d] * (inputs["hc"][:, 2 * d :] @ inputs["W_c"])))


SLSTM_WEIGHTS = Node(
    "the S-LSTM's dW_c over the nodes",
    _slstm_weights_draw,
    lambda inputs: {key: inputs[key] for key in ("hc", "c", "deltas")},
    _slstm_peepholes,
    {"dW_c": ("W_c", "dW_c = the sum over the inner nodes of [c^L c^R]^T [delta_i delta_fl delta_fr]")},
)


# ---------------------------------------------------------------------------
# the LSTM-RNN (Le & Zuidema 2015, (L1)-(L7) in npcomp/cells/lstm_rnn.py)
# ---------------------------------------------------------------------------

ACTIVATIONS = {"tanh": np.tanh, "sigmoid": _sigmoid, "softsign": lambda z: z / (1.0 + np.abs(z))}


def _lstm_rnn_draw(rng) -> dict:
    """z_o is the children's part of (L6); a_1, a_2 the children's terms of (L5)."""
    d = 3
    names = ("z_i1", "z_i2", "z_f1", "z_f2", "a_1", "a_2", "z_o", "c_x", "c_y", "eps_h", "eps_c_above")
    inputs = {name: rng.normal(0, 1, d) for name in names}
    inputs.update(
        b_c=rng.normal(0, 0.5, d), W_co=rng.normal(0, 0.5, (d, d)), u_offset=np.zeros(d), c_offset=np.zeros(d)
    )
    return inputs


def lstm_rnn_forward(inputs: dict, activation: str = "tanh") -> dict:
    """(L1)-(L7) from the gates' pre-activations and the children's terms."""
    g = ACTIVATIONS[activation]
    i_1, i_2, f_1, f_2 = (_sigmoid(inputs[name]) for name in ("z_i1", "z_i2", "z_f1", "z_f2"))
    u = g(i_1 * inputs["a_1"] + i_2 * inputs["a_2"] + inputs["b_c"] + inputs["u_offset"])
    c = f_1 * inputs["c_x"] + f_2 * inputs["c_y"] + u + inputs["c_offset"]  # (L5)
    o = _sigmoid(inputs["z_o"] + c @ inputs["W_co"])  # (L6)
    return {"i_1": i_1, "i_2": i_2, "f_1": f_1, "f_2": f_2, "u": u, "c": c, "o": o, "p": o * g(c)}  # (L7)


def lstm_rnn_node(activation: str = "tanh") -> Node:
    """The LSTM-RNN's node backward with g = ``activation``."""

    def objective(inputs: dict) -> float:
        forward = lstm_rnn_forward(inputs, activation)
        return float(inputs["eps_h"] @ forward["p"] + inputs["eps_c_above"] @ forward["c"])

    def shown(inputs: dict) -> dict:
        forward = lstm_rnn_forward(inputs, activation)
        del forward["p"]
        return {
            **forward,
            **{name: inputs[name] for name in ("a_1", "a_2", "c_x", "c_y", "eps_h", "eps_c_above", "W_co")},
        }

    return Node(
        f"the LSTM-RNN's node backward (g = {activation})",
        _lstm_rnn_draw,
        shown,
        objective,
        {
            "delta_o": ("z_o", "reverses L7, L6"),
            "eps_c": ("c_offset", "reverses L7, and L6 through W_co, plus the parent's share"),
            "delta_u": ("u_offset", "reverses L5 for u"),
            "delta_i1": ("z_i1", "reverses L5, L1"),
            "delta_i2": ("z_i2", "reverses L5, L2"),
            "delta_a1": ("a_1", "reverses L5 for a_1 = x W_c1"),
            "delta_a2": ("a_2", "reverses L5 for a_2 = y W_c2"),
            "delta_f1": ("z_f1", "reverses L5, L3"),
            "delta_f2": ("z_f2", "reverses L5, L4"),
        },
    )


LSTM_RNN_NODE = lstm_rnn_node()


def _lstm_rnn_route_draw(rng) -> dict:
    d = 3
    inputs = {name: rng.normal(0, 1, d) for name in ("x", "y", "c_x", "c_y", "eps_c")}
    inputs.update(
        f_1=_sigmoid(rng.normal(0, 1, d)),
        f_2=_sigmoid(rng.normal(0, 1, d)),
        W=rng.normal(0, 0.5, (d, 8 * d)),
        W_peephole=rng.normal(0, 0.5, (d, 4 * d)),
        delta=rng.normal(0, 1, 7 * d),
    )
    return inputs


def lstm_rnn_children_sums(inputs: dict) -> np.ndarray:
    """(7d,) the parent's terms that read its children x, y (and c_x, c_y),
    blocks i_1 | i_2 | f_1 | f_2 | a_1 | a_2 | o: the gates' pre-activations
    of (L1)-(L4) less the biases (child k's gate reads child k through the
    "1" matrices, its sibling through the "2" ones), a_1 = x W_c1, a_2 = y
    W_c2 of (L5), and the children's part of (L6)."""
    d = inputs["x"].size
    x, y, c_x, c_y = (inputs[name] for name in ("x", "y", "c_x", "c_y"))

    def block(matrix, k):
        return inputs[matrix][:, k * d : (k + 1) * d]

    def gate(first, near, far, c_near, c_far):  # first: W_i1's block (0) or W_f1's (2)
        return (
            near @ block("W", first)
            + far @ block("W", first + 1)
            + c_near @ block("W_peephole", first)
            + c_far @ block("W_peephole", first + 1)
        )

    return np.concatenate(
        [
            gate(0, x, y, c_x, c_y),
            gate(0, y, x, c_y, c_x),  # (L1), (L2)
            gate(2, x, y, c_x, c_y),
            gate(2, y, x, c_y, c_x),  # (L3), (L4)
            x @ block("W", 4),
            y @ block("W", 5),  # a_1, a_2
            x @ block("W", 6) + y @ block("W", 7),
        ]
    )  # (L6)


def _lstm_rnn_route_objective(inputs: dict) -> float:
    """Each of the children's terms times its error, and c_p's forget terms (L5)."""
    cell = inputs["f_1"] * inputs["c_x"] + inputs["f_2"] * inputs["c_y"]
    return float(inputs["delta"] @ lstm_rnn_children_sums(inputs) + inputs["eps_c"] @ cell)


LSTM_RNN_ROUTE = Node(
    "the LSTM-RNN's error to its children",
    _lstm_rnn_route_draw,
    lambda inputs: {key: inputs[key] for key in ("delta", "eps_c", "f_1", "f_2", "W", "W_peephole")},
    _lstm_rnn_route_objective,
    {
        "eps_h_x": ("x", "reverses L1-L6 for x"),
        "eps_h_y": ("y", "reverses L1-L6 for y"),
        "eps_c_x": ("c_x", "reverses L5 and L1-L4 for c_x"),
        "eps_c_y": ("c_y", "reverses L5 and L1-L4 for c_y"),
    },
)


def _lstm_rnn_weights_draw(rng) -> dict:
    d, nodes = 3, 4
    return {
        "xs": rng.normal(0, 1, (nodes, d)),
        "ys": rng.normal(0, 1, (nodes, d)),
        "deltas": rng.normal(0, 1, (nodes, 7 * d)),
        "W_i1": rng.normal(0, 0.5, (d, d)),
    }


def _lstm_rnn_w_i1_terms(inputs: dict) -> float:
    """W_i1's terms over the nodes: x W_i1 in i_1's pre-activation, y W_i1 in i_2's."""
    d = inputs["xs"].shape[1]
    deltas = inputs["deltas"]
    return float(
        np.sum(deltas[:, :d] * (inputs["xs"] @ inputs["W_i1"]))
        + np.sum(deltas[:, d : 2 * d] * (inputs["ys"] @ inputs["W_i1"]))
    )


LSTM_RNN_WEIGHTS = Node(
    "the LSTM-RNN's dW_i1 over the nodes",
    _lstm_rnn_weights_draw,
    lambda inputs: {key: inputs[key] for key in ("xs", "ys", "deltas")},
    _lstm_rnn_w_i1_terms,
    {"dW_i1": ("W_i1", "dW_i1 = the sum over the inner nodes of x^T delta_i1 + y^T delta_i2")},
)
