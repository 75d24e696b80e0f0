"""The numba kernels of the LSTM-RNN (Le & Zuidema 2015; ``cells/lstm_rnn.py``
gives the equations (L1)-(L7) and the cell): a level's gate terms gathered
from its children, the memory cell and output updates, and their deltas
routed back to the children."""

from __future__ import annotations

from numba import njit

from .activations import ONE, SIGMOID, activate, derivative_from_output

# column blocks of the gate pre-activations of a node
I1, I2, F1, F2, A1, A2, O = range(7)
GATE_BLOCKS = 7


@njit(cache=True, nogil=True)
def gather_child_terms(children, leaves, word_index, word_terms, node_terms, target, gates, start, stop):
    """gates[j] = the sum of the children's terms of (L1)-(L6), each weight
    block into the gate block its slot feeds (TARGET): a leaf child's from its
    word's row of word_terms, an inner child's from node_terms; a missing
    child adds nothing."""
    d = gates.shape[1] // 7
    for j in range(start, stop):
        for q in range(7 * d):
            gates[j, q] = 0.0
        for slot in range(2):
            kid = children[j, slot]
            if kid < 0:
                continue
            terms = word_terms[word_index[kid]] if kid < leaves else node_terms[kid]
            for block in range(8):
                column = target[slot, block]
                if column >= 0:
                    for q in range(d):
                        gates[j, column * d + q] += terms[block * d + q]


@njit(cache=True, nogil=True)
def cell_update(code, children, gate_bias, candidate_bias, gates, u, state, start, stop):
    """(L1)-(L5) from the children's terms in ``gates``: + biases, sigma on
    i_1 i_2 f_1 f_2, then u = g(i_1 a_1 + i_2 a_2 + b_c) and
    c_p = f_1 c_x + f_2 c_y + u into state[:, d:] (a leaf has c = 0 there).
    The o block gets b_o only: c_p W_co comes after (``output``)."""
    d = u.shape[1]
    for j in range(start, stop):
        for q in range(7 * d):
            gates[j, q] += gate_bias[q]
        for q in range(4 * d):
            gates[j, q] = activate(SIGMOID, gates[j, q])
        for q in range(d):
            candidate = activate(
                code,
                gates[j, I1 * d + q] * gates[j, A1 * d + q]
                + gates[j, I2 * d + q] * gates[j, A2 * d + q]
                + candidate_bias[q],
            )
            u[j, q] = candidate
            cell = candidate
            for slot in range(2):
                kid = children[j, slot]
                if kid >= 0:
                    cell += gates[j, (F1 + slot) * d + q] * state[kid, d + q]
            state[j, d + q] = cell


@njit(cache=True, nogil=True)
def output_update(code, gates, cell_terms, state, g_c, start, stop):
    """(L6) o = sigma(terms so far + c_p W_co) (cell_terms: rows from
    ``start``), then (L7) p = o * g(c_p) into state[:, :d]."""
    d = g_c.shape[1]
    for j in range(start, stop):
        for q in range(d):
            o = activate(SIGMOID, gates[j, O * d + q] + cell_terms[j - start, q])
            gates[j, O * d + q] = o
            g = activate(code, state[j, d + q])
            g_c[j, q] = g
            state[j, q] = o * g


@njit(cache=True, nogil=True)
def output_deltas(gates, g_c, eps_state, d_h, d_c, delta, start, stop):
    """Completes eps_h (in d_h) and the parent's part of eps_c (in d_c) with
    the parents' product share eps_state (rows from ``start``: [eps_h |
    eps_c]), then delta_o = eps_h * g(c_p) * o (1 - o): reverses (L7), (L6)."""
    d = g_c.shape[1]
    for j in range(start, stop):
        for q in range(d):
            eps_h = d_h[j, q] + eps_state[j - start, q]
            d_h[j, q] = eps_h
            d_c[j, q] += eps_state[j - start, d + q]
            o = gates[j, O * d + q]
            delta[j, O * d + q] = eps_h * g_c[j, q] * o * (ONE - o)


@njit(cache=True, nogil=True)
def cell_deltas(code, children, gates, u, state, g_c, d_h, d_c, eps_c_from_o, delta, delta_u, start, stop):
    """Backward through (L7) for c_p and through (L5) to the pre-activations
    of i_1 i_2 f_1 f_2 and the terms a_1 a_2 of one level; the children's
    d_c gets eps_c * f (eps_c_from_o: rows from ``start``, delta_o W_co^T)."""
    d = u.shape[1]
    for j in range(start, stop):
        for q in range(d):
            o = gates[j, O * d + q]
            eps_c = d_c[j, q] + d_h[j, q] * o * derivative_from_output(code, g_c[j, q]) + eps_c_from_o[j - start, q]
            candidate = eps_c * derivative_from_output(code, u[j, q])  # delta_u
            delta_u[j, q] = candidate
            i_1 = gates[j, I1 * d + q]
            i_2 = gates[j, I2 * d + q]
            delta[j, I1 * d + q] = candidate * gates[j, A1 * d + q] * i_1 * (ONE - i_1)
            delta[j, I2 * d + q] = candidate * gates[j, A2 * d + q] * i_2 * (ONE - i_2)
            delta[j, A1 * d + q] = candidate * i_1  # delta_a1
            delta[j, A2 * d + q] = candidate * i_2  # delta_a2
            for slot in range(2):
                kid = children[j, slot]
                if kid >= 0:  # a leaf's c is 0: its delta_f is 0 and its d_c unused
                    f = gates[j, (F1 + slot) * d + q]
                    delta[j, (F1 + slot) * d + q] = eps_c * state[kid, d + q] * f * (ONE - f)
                    d_c[kid, q] = eps_c * f  # eps_c of the child
            d_c[j, q] = eps_c  # kept for backward_terms: eps_c in full


@njit(cache=True, nogil=True)
def route_to_children(children, target, delta, delta_terms, start, stop):
    """delta_terms[child] = the deltas of the gate blocks its terms fed
    (TARGET): reverses ``gather_child_terms``.  A block that fed nothing
    (c2, o2 of x; c1, o1 of y) stays 0."""
    d = delta.shape[1] // 7
    for j in range(start, stop):
        for slot in range(2):
            kid = children[j, slot]
            if kid < 0:
                continue
            for block in range(8):
                column = target[slot, block]
                if column >= 0:
                    for q in range(d):
                        delta_terms[kid, block * d + q] = delta[j, column * d + q]
