"""The local checks' deltas: each pre-activation's error at a node (a
gate's, the candidate's, an input block's: ``QUANTITIES``),
with the error from above held fixed, against central differences of the
node's own equations, for the cells whose node equations ``grading.py``
and ``peephole_nodes.py`` write out (the N-ary Tree-LSTM at a node with
both children, the Child-Sum Tree-LSTM, the RNTN, the S-LSTM and the
LSTM-RNN at an inner node).

A delta is no state a nudge can move in the cell's forward, so the node's
equations are run from the pre-activations themselves: read back from the
cell's forward quantities at the node (logit of a sigmoid gate, artanh of
tanh's), with the children's states and the error arriving from above (the
partial derivatives of J in the node's states, as the backward implies
them: ``local_checks``).  ``tests/study/test_grading.py`` checks the node
equations against the cells' own forwards.
"""

from __future__ import annotations

import numpy as np

from .grading import CHILDSUM_NODE, NARY_NODE, RNTN_NODE, expected
from .peephole_nodes import SLSTM_NODE, lstm_rnn_node


def _logit(gate: np.ndarray) -> np.ndarray:
    """The sigmoid's inverse: a gate's pre-activation from its value."""
    return np.log(gate / (1.0 - gate))


def _nary_inputs(cell, terms: dict, forest, node: int, partials: np.ndarray, params) -> dict | None:
    """The N-ary node's inputs at ``node`` (None where it has not both children)."""
    if cell.arity != 2 or not cell.output_gate or forest.n_children[node] != 2:
        return None
    d = cell.hidden_dim
    left, right = (int(kid) for kid in forest.children[node][:2])
    return {
        "z_i": _logit(terms["i"][node]),
        "z_o": _logit(terms["o"][node]),
        "z_u": np.arctanh(terms["u"][node]),
        "z_fl": _logit(terms["f_l"][node]),
        "z_fr": _logit(terms["f_r"][node]),
        "c_l": terms["c"][left],
        "c_r": terms["c"][right],
        "eps_h": partials[:d],
        "eps_c_above": partials[d : 2 * d],
        "c_offset": np.zeros(d),
    }


def _rntn_inputs(cell, terms: dict, forest, node: int, partials: np.ndarray, params) -> dict | None:
    """The RNTN node's inputs at an inner ``node`` with two children."""
    if forest.n_children[node] != 2:
        return None
    left, right = (int(kid) for kid in forest.children[node][:2])
    return {
        "c_1": terms["h"][left],
        "c_2": terms["h"][right],
        "V": params["V"],
        "W": params["W"],
        "b": params["b"],
        "eps_h": partials,
        "z_offset": np.zeros(cell.hidden_dim),
    }


def _childsum_inputs(cell, terms: dict, forest, node: int, partials: np.ndarray, params) -> dict | None:
    """The Child-Sum node's inputs at an inner ``node`` (f_jk in child k's row)."""
    if not cell.output_gate or forest.n_children[node] == 0:
        return None
    d = cell.hidden_dim
    kids = [int(kid) for kid in forest.children[node] if kid >= 0]
    return {
        "z_i": _logit(terms["i"][node]),
        "z_o": _logit(terms["o"][node]),
        "z_u": np.arctanh(terms["u"][node]),
        "z_f": _logit(terms["f"][kids]),
        "c_children": terms["c"][kids],
        "eps_h": partials[:d],
        "eps_c_above": partials[d : 2 * d],
        "c_offset": np.zeros(d),
    }


def _slstm_inputs(cell, terms: dict, forest, node: int, partials: np.ndarray, params) -> dict | None:
    """The S-LSTM node's inputs at an inner ``node`` (a missing right child's
    c^R = 0); z_o is the children's part of eq. 6: o's pre-activation less
    c_t W_co."""
    if forest.n_children[node] == 0:
        return None
    d = cell.hidden_dim
    left, right = (int(kid) for kid in forest.children[node][:2])
    c = terms["c"][node]
    return {
        "z_i": _logit(terms["i"][node]),
        "z_fl": _logit(terms["f^L"][node]),
        "z_fr": _logit(terms["f^R"][node]),
        "z_x": terms["x"][node],
        "z_o": _logit(terms["o"][node]) - c @ params["W_co"],
        "W_co": params["W_co"],
        "c_l": terms["c"][left],
        "c_r": terms["c"][right] if right >= 0 else np.zeros(d),
        "eps_h": partials[:d],
        "eps_c_above": partials[d : 2 * d],
        "c_offset": np.zeros(d),
    }


def _lstm_rnn_inputs(cell, terms: dict, forest, node: int, partials: np.ndarray, params) -> dict | None:
    """The LSTM-RNN node's inputs at an inner ``node`` (a unary node's
    missing y: c_y = 0); z_o is the children's part of (L6)."""
    if forest.n_children[node] == 0:
        return None
    d = cell.hidden_dim
    x, y = (int(kid) for kid in forest.children[node][:2])
    c = terms["c"][node]
    return {
        "z_i1": _logit(terms["i_1"][node]),
        "z_i2": _logit(terms["i_2"][node]),
        "z_f1": _logit(terms["f_1"][node]),
        "z_f2": _logit(terms["f_2"][node]),
        "a_1": terms["a_1"][node],
        "a_2": terms["a_2"][node],
        "b_c": params["b"][2 * d : 3 * d],
        "u_offset": np.zeros(d),
        "z_o": _logit(terms["o"][node]) - c @ params["W_co"],
        "W_co": params["W_co"],
        "c_x": terms["c"][x],
        "c_y": terms["c"][y] if y >= 0 else np.zeros(d),
        "eps_h": partials[:d],
        "eps_c_above": partials[d : 2 * d],
        "c_offset": np.zeros(d),
    }


# what each checked delta is the error of, by cell and symbol: the one
# table the local checks' messages read (a gate's pre-activation, the
# candidate's, an input block's), so no delta is told as a gate it is not
GATE = "the error of {}'s pre-activation"
QUANTITIES = {
    "treelstm-nary": {
        "delta_o": GATE.format("the output gate o"),
        "delta_i": GATE.format("the input gate i"),
        "delta_u": "the error of the candidate u's pre-activation (not a gate: u = tanh, eq. 12)",
        "delta_f_l": GATE.format("the left child's forget gate f_l"),
        "delta_f_r": GATE.format("the right child's forget gate f_r"),
    },
    "treelstm-childsum": {
        "delta_o": GATE.format("the output gate o"),
        "delta_i": GATE.format("the input gate i"),
        "delta_u": "the error of the candidate u's pre-activation (not a gate: u = tanh, eq. 6)",
        "delta_f": GATE.format("each child's forget gate f_jk"),
    },
    "rntn": {"delta": "the error of the composition's pre-activation (the argument of f = tanh, eq. 3)"},
    "slstm": {
        "delta_o": GATE.format("the output gate o"),
        "delta_fl": GATE.format("the left forget gate f^L"),
        "delta_fr": GATE.format("the right forget gate f^R"),
        "delta_i": GATE.format("the input gate i"),
        "delta_x": "the error of the candidate x's pre-activation (not a gate: tanh of eq. 4)",
    },
    "lstm-rnn": {
        "delta_o": GATE.format("the output gate o"),
        "delta_u": "the error of the candidate u's pre-activation (not a gate: the argument of g in L5)",
        "delta_i1": GATE.format("the input gate i_1"),
        "delta_i2": GATE.format("the input gate i_2"),
        "delta_a1": "the error of the candidate's input block a_1, child x's (not a gate)",
        "delta_a2": "the error of the candidate's input block a_2, child y's (not a gate)",
        "delta_f1": GATE.format("the forget gate f_1"),
        "delta_f2": GATE.format("the forget gate f_2"),
    },
}

# cell name -> (its node's equations for a cell, its inputs at a node of a
# forest); the deltas checked are its ``QUANTITIES``, each the backward's
# term of that symbol and the node equations' part of that name
NODES = {
    "treelstm-nary": (lambda cell: NARY_NODE, _nary_inputs),
    "treelstm-childsum": (lambda cell: CHILDSUM_NODE, _childsum_inputs),
    "rntn": (lambda cell: RNTN_NODE, _rntn_inputs),
    "slstm": (lambda cell: SLSTM_NODE, _slstm_inputs),
    "lstm-rnn": (lambda cell: lstm_rnn_node(cell.activation), _lstm_rnn_inputs),
}


def delta_values(model, params, forest, cache, node: int, partials: np.ndarray) -> list:
    """[(delta symbol, what it is the error of (``QUANTITIES``), what it
    reverses, the backward's value, the differences' value)] at ``node``;
    [] for a cell or node without node equations here.  ``partials``: dJ/d(the node's states), each with the
    others held, as the backward has them (h before c)."""
    if model.cell.name not in NODES:
        return []
    equations_of, node_inputs = NODES[model.cell.name]
    deltas = QUANTITIES[model.cell.name]
    node_equations = equations_of(model.cell)
    terms = {term.symbol: np.asarray(term.values, dtype=np.float64) for term in model.cell.forward_terms(forest, cache)}
    inputs = node_inputs(model.cell, terms, forest, node, partials, params.prefixed("cell"))
    if inputs is None:
        return []
    truth = expected(node_equations, inputs, tuple(deltas))
    backward = {
        term.symbol: np.asarray(term.values, dtype=np.float64) for term in model.cell.backward_terms(forest, cache)
    }
    kids = [int(kid) for kid in forest.children[node] if kid >= 0]
    # delta_fk is shown in the row of child k: one row a child, as the node's part
    return [
        (
            symbol,
            quantity,
            node_equations.parts[symbol][1],
            backward[symbol][kids] if symbol == "delta_f" else backward[symbol][node],
            truth[symbol],
        )
        for symbol, quantity in deltas.items()
    ]
