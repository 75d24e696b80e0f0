r"""LSTM with recurrent attention, time step by time step (Nayebi & Blundell
Sec. 3.5, eqs. 9-13; after the deep attention fusion of Cheng, Dong &
Lapata 2016).

Column orientation (every matrix is the transpose of the code's block of the
same name; w_a is the code's ``W_a``, a 2d-vector):

    h_t, m_t = LSTM(x_t, h_{t-1}, m_{t-1})       Tai eq. 1, m_t its c_t   (4)
    e_j = w_a . [h_j ; m_j]                      one score per step
    alpha_j^t = exp(e_j) / sum_{j'=1..t} exp(e_j'),   j = 1..t            (9)
    [h~_t ; m~_t] = sum_{j=1..t} alpha_j^t [h_j ; m_j]                     (9)
    r_t  = sigma( W_r h~_t + b_r )                                        (10)
    f_t  = sigma( W_f x_t + U_f s_{t-1} + b_f )    x_t = [h~_t ; m~_t]     (11)
    i_t  = sigma( W_i x_t + U_i s_{t-1} + b_i )                           (11)
    k~_t = tanh ( W_k x_t + U_k s_{t-1} + b_k )                           (11)
    o_t  = sigma( W_o x_t + U_o s_{t-1} + b_o )                           (11)
    k_t  = f_t * k_{t-1} + i_t * k~_t + r_t * m~_t,   k_0 = 0             (10)
    s_t  = o_t * tanh(k_t),   s_0 = 0                                     (10)
    H    = W_H s_T + b_H                                                  (12)
    T    = sigma( W_T s_T + b_T )                                         (12)
    s^_T = H * T + s_T * (1 - T)                                          (12)

(eq. 13, the classifier, is the model's head.)  Recurrent dropout:
``masks=[m^h, m^s]``, each (d,): m^h on the LSTM's h_{t-1} (``lstm.py``),
m^s on s_{t-1} where it enters eq. 11.

``forward(x, params, masks=None)`` returns the LSTM's ``i``, ``f``, ``o``,
``u``, ``h`` and ``m`` (its memory cell), the transfer layer's ``r``,
``i_s``, ``f_s``, ``o_s`` (eq. 11's gates, suffixed to tell them from the
LSTM's), ``k~``, ``k``, ``s``, and ``h~``, ``m~``, each (T, d); ``e`` (T,);
``alpha`` (T, T) with alpha[t-1, j-1] = alpha_j^t (0 for j > t); the
highway's ``H``, ``T``, ``s^_T`` (d,), one per sentence; and ``out`` (T, d):
s^_T in the last row (the chain's root), 0 in the others.
"""

from __future__ import annotations

import numpy as np

from . import lstm
from .functions import column_block, sigmoid, vector_block

GATES = ("i", "o", "k", "f")  # column blocks of the code's W_x, U_s, b_s
OPTIONS = ()


def paper_parameters(params: dict) -> dict:
    """The attention and transfer layers' matrices: ``w_a`` (2d,), ``W_r``,
    ``W_i`` .. ``W_f`` (d, 2d), ``U_i`` .. ``U_f`` (d, d), ``W_H``, ``W_T``
    and the biases (the LSTM's are ``lstm.paper_parameters``)."""
    d = np.asarray(params["U_s"]).shape[0]
    out = {"w_a": np.asarray(params["W_a"]), "W_r": np.asarray(params["W_r"]).T, "b_r": np.asarray(params["b_r"])}
    for g, gate in enumerate(GATES):
        out[f"W_{gate}"] = column_block(params["W_x"], g, d)
        out[f"U_{gate}"] = column_block(params["U_s"], g, d)
        out[f"b_{gate}"] = vector_block(params["b_s"], g, d)
    for name in ("H", "T"):
        out[f"W_{name}"] = np.asarray(params[f"W_{name}"]).T
        out[f"b_{name}"] = np.asarray(params[f"b_{name}"])
    return out


def forward(x: np.ndarray, params: dict, masks=None) -> dict:
    """Eqs. 4 and 9-12 over one sentence.  x: (T, d_x); params: the cell's
    ``W``, ``U``, ``b`` (the LSTM), ``W_a``, ``W_r``, ``b_r``, ``W_x``,
    ``U_s``, ``b_s``, ``W_H``, ``b_H``, ``W_T``, ``b_T``; masks: None or
    [m^h, m^s], each (d,)."""
    P = paper_parameters(params)
    d = P["W_r"].shape[0]
    mask_h, mask_s = (None, np.ones(d)) if masks is None else ([masks[0]], np.asarray(masks[1]))
    L = lstm.forward(x, {name: params[name] for name in ("W", "U", "b")}, masks=mask_h)  # (4)
    h, m = L["h"], L["c"]
    n_steps = len(h)
    v = np.concatenate([h, m], axis=1)  # v_j = [h_j ; m_j]
    e = np.array([P["w_a"] @ v[j] for j in range(n_steps)])
    alpha = np.zeros((n_steps, n_steps))
    keys = ("h~", "m~", "r", "i_s", "f_s", "o_s", "k~", "k", "s")
    q = {key: np.zeros((n_steps, d)) for key in keys}
    s_prev, k_prev = np.zeros(d), np.zeros(d)  # s_0 = k_0 = 0
    for t in range(n_steps):
        weights = np.exp(e[: t + 1] - e[: t + 1].max())  # (the max cancels)
        alpha[t, : t + 1] = weights / weights.sum()  # (9)
        v_tilde = alpha[t, : t + 1] @ v[: t + 1]  # sum_j alpha_j^t v_j     (9)
        h_tilde, m_tilde = v_tilde[:d], v_tilde[d:]
        r = sigmoid(P["W_r"] @ h_tilde + P["b_r"])  # (10)
        s_in = s_prev * mask_s  # s~_{t-1} (Gal)
        f = sigmoid(P["W_f"] @ v_tilde + P["U_f"] @ s_in + P["b_f"])  # (11)
        i = sigmoid(P["W_i"] @ v_tilde + P["U_i"] @ s_in + P["b_i"])  # (11)
        k_tilde = np.tanh(P["W_k"] @ v_tilde + P["U_k"] @ s_in + P["b_k"])  # (11)
        o = sigmoid(P["W_o"] @ v_tilde + P["U_o"] @ s_in + P["b_o"])  # (11)
        k = f * k_prev + i * k_tilde + r * m_tilde  # (10)
        s = o * np.tanh(k)  # (10)
        for key, value in zip(keys, (h_tilde, m_tilde, r, i, f, o, k_tilde, k, s)):
            q[key][t] = value
        s_prev, k_prev = s, k
    s_T = q["s"][-1]
    H = P["W_H"] @ s_T + P["b_H"]  # (12)
    T_gate = sigmoid(P["W_T"] @ s_T + P["b_T"])  # (12)
    s_hat_T = H * T_gate + s_T * (1 - T_gate)  # (12)
    out = np.zeros((n_steps, d))
    out[-1] = s_hat_T
    lstm_keys = {key: L[key] for key in ("i", "f", "o", "u", "h")}
    return {**lstm_keys, "m": m, "e": e, "alpha": alpha, **q, "H": H, "T": T_gate, "s^_T": s_hat_T, "out": out}
