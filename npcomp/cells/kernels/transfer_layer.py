"""The layers of the LSTM with recurrent attention after its attention
(Nayebi & Blundell eqs. 10-12): the adaptive transfer layer, one level (one
time step of every sentence) at a time, its gates, its cell k_t and their
backward; and the highway layer's backward at the roots.  The cell
(``npcomp/cells/lstm_recurrent_attention.py``) gives the equations in full:

    i_t, f_t, k~_t, o_t = sigma, sigma, tanh, sigma of x_t W_x + s_{t-1} U_s + b_s   (11)
    k_t = f_t * k_{t-1} + i_t * k~_t + r_t * m~_t,   s_t = o_t * tanh(k_t)          (10)
    s^_T = H * T + s_T * (1 - T),   H = s_T W_H + b_H,   T = sigma(s_T W_T + b_T)     (12)

The gates' columns are [i | o | k~ | f], each d wide.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .activations import ONE
from .levels import sigmoid


def highway_backward(params: dict, grads: dict, s_T, H, T, eps_out) -> tuple:
    """Reverses eq. 12 at the roots; adds the highway's weight gradients and
    returns eps_s_T = dJ/ds_T, eps_H and delta_T, each (sentences, d)."""
    eps_H = eps_out * T
    delta_T = eps_out * (H - s_T) * T * (1 - T)  # carry term s_T (1 - T) depends on T too
    grads["W_H"] += s_T.T @ eps_H
    grads["b_H"] += eps_H.sum(axis=0)
    grads["W_T"] += s_T.T @ delta_T
    grads["b_T"] += delta_T.sum(axis=0)
    eps_s_T = eps_out * (1 - T) + eps_H @ params["W_H"].T + delta_T @ params["W_T"].T
    return eps_s_T, eps_H, delta_T


def transfer_gate_functions(z: np.ndarray, d: int) -> None:
    """In place: sigma on the i, o, f columns, tanh on the k~ columns (eq. 11)."""
    candidate = np.tanh(z[:, 2 * d : 3 * d])
    sigmoid(z)
    z[:, 2 * d : 3 * d] = candidate


@njit(cache=True, nogil=True)
def transfer_cell(children, gates, r, v_tilde, k, start, stop):
    """Eq. 10: k_t = f_t * k_{t-1} + i_t * k~_t + r_t * m~_t (k_0 = 0)."""
    d = k.shape[1]
    for j in range(start, stop):
        previous = children[j, 0]
        for q in range(d):
            cell = gates[j, q] * gates[j, 2 * d + q] + r[j, q] * v_tilde[j, d + q]
            if previous >= 0:
                cell += gates[j, 3 * d + q] * k[previous, q]
            k[j, q] = cell


@njit(cache=True, nogil=True)
def transfer_deltas(children, gates, k, tanh_k, r, v_tilde, eps_s, eps_k, delta, delta_r, eps_m_direct, start, stop):
    """Backward through eqs. 10 and 11 for one level (one time step of every
    sentence): gate deltas, delta_r, the direct eps_m~, and eps_k routed to
    step t-1."""
    d = k.shape[1]
    for j in range(start, stop):
        previous = children[j, 0]
        for q in range(d):
            i = gates[j, q]
            o = gates[j, d + q]
            candidate = gates[j, 2 * d + q]
            t = tanh_k[j, q]
            eps = eps_s[j, q]
            delta[j, d + q] = eps * t * o * (ONE - o)  # delta_o
            cell = eps_k[j, q] + eps * o * (ONE - t * t)  # eps_k_t
            delta[j, q] = cell * candidate * i * (ONE - i)  # delta_i
            delta[j, 2 * d + q] = cell * i * (ONE - candidate * candidate)  # delta_k
            gate = r[j, q]
            delta_r[j, q] = cell * v_tilde[j, d + q] * gate * (ONE - gate)  # delta_r
            eps_m_direct[j, q] = cell * gate  # eps_m~ (direct)
            eps_k[j, q] = cell  # kept for backward_terms: eps_k_t in full
            if previous >= 0:
                f = gates[j, 3 * d + q]
                delta[j, 3 * d + q] = cell * k[previous, q] * f * (ONE - f)  # delta_f
                eps_k[previous, q] = cell * f  # eps_k_{t-1}
