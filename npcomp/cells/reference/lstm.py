r"""Chain LSTM, time step by time step (Tai, Socher & Manning 2015, Sec. 2.1,
eq. 1; Nayebi & Blundell eq. 4).

Column orientation (every W^(g), U^(g) is the transpose of the code's column
block of the same gate), h_0 = c_0 = 0:

    i_t = sigma( W^(i) x_t + U^(i) h_{t-1} + b^(i) )
    f_t = sigma( W^(f) x_t + U^(f) h_{t-1} + b^(f) )
    o_t = sigma( W^(o) x_t + U^(o) h_{t-1} + b^(o) )                     (1)
    u_t = tanh ( W^(u) x_t + U^(u) h_{t-1} + b^(u) )
    c_t = i_t * u_t + f_t * c_{t-1}
    h_t = o_t * tanh(c_t)

Recurrent dropout (Gal 2015: one mask per sentence), ``masks=[m]`` with m
(d,): step t reads h~_{t-1} = h_{t-1} * m in place of h_{t-1}; h_t itself
is not masked.  ``output_gate=False``: o_t = 1, h_t = tanh(c_t).

``forward(x, params, output_gate=True, masks=None)`` returns, one row per
time step (word order): ``i``, ``f``, ``o``, ``u``, ``c``, ``h``, ``out``
(= h), each (T, d).  The bidirectional, stacked and attention LSTMs' own
references run this one.
"""

from __future__ import annotations

import numpy as np

from .functions import column_block, sigmoid, vector_block

GATES = ("i", "o", "u", "f")  # column blocks of the code's W, U and b
OPTIONS = ("output_gate",)
KEYS = ("i", "f", "o", "u", "c", "h")


def paper_parameters(params: dict) -> dict:
    """``W^(g)`` (d, d_x), ``U^(g)`` (d, d), ``b^(g)`` (d,) for g in i, f, o, u."""
    d = np.asarray(params["U"]).shape[0]
    out = {}
    for g, gate in enumerate(GATES):
        out[f"W^({gate})"] = column_block(params["W"], g, d)
        out[f"U^({gate})"] = column_block(params["U"], g, d)
        out[f"b^({gate})"] = vector_block(params["b"], g, d)
    return out


def forward(x: np.ndarray, params: dict, output_gate: bool = True, masks=None) -> dict:
    """Eq. 1 over one sentence.  x: (T, d_x) its word vectors in order;
    params: the cell's ``W`` (d_x, 4d), ``U`` (d, 4d), ``b`` (4d,); masks:
    None or [m], m (d,) the sentence's recurrent mask."""
    P = paper_parameters(params)
    d = P["U^(i)"].shape[0]
    mask = np.ones(d) if masks is None else np.asarray(masks[0])
    T = len(x)
    q = {name: np.zeros((T, d)) for name in KEYS}
    h_prev, c_prev = np.zeros(d), np.zeros(d)  # h_0 = c_0 = 0
    for t in range(T):
        x_t, h_tilde = x[t], h_prev * mask  # h~_{t-1} (Gal)
        i = sigmoid(P["W^(i)"] @ x_t + P["U^(i)"] @ h_tilde + P["b^(i)"])  # (1)
        f = sigmoid(P["W^(f)"] @ x_t + P["U^(f)"] @ h_tilde + P["b^(f)"])  # (1)
        o = sigmoid(P["W^(o)"] @ x_t + P["U^(o)"] @ h_tilde + P["b^(o)"])  # (1)
        if not output_gate:
            o = np.ones(d)
        u = np.tanh(P["W^(u)"] @ x_t + P["U^(u)"] @ h_tilde + P["b^(u)"])  # (1)
        c = i * u + f * c_prev  # (1)
        h = o * np.tanh(c)  # (1)
        for name, value in zip(KEYS, (i, f, o, u, c, h)):
            q[name][t] = value
        h_prev, c_prev = h, c
    return {**q, "out": q["h"].copy()}
