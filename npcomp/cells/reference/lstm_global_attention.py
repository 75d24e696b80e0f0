r"""LSTM with global attention, time step by time step (Nayebi & Blundell
Sec. 3.4, eqs. 4-8; after Luong, Pham & Manning 2015).

Column orientation (W_c is A x 2d, the transpose of the code's ``W_c``; w_a
is the code's ``W_a``, a d-vector, so eq. 6's W_a h_t is the score w_a . h_t):

    h_t  = LSTM(x_t, h_{t-1})                    Tai eq. 1, ``lstm.py``   (4)
    e_t  = W_a h_t                               one score per time step
    a_t  = exp(e_t) / sum_{t'=1..T} exp(e_t')    softmax over the steps   (6)
    c_T  = sum_{t=1..T} a_t h_t                                           (5)
    h~_T = tanh( W_c [c_T ; h_T] + b_c )                                  (7)

(b_c is npcomp's; eq. 8, the classifier, is the model's head.)  Recurrent
dropout: ``masks=[m]``, m (d,), the LSTM's (``lstm.py``); h_t as attended
is not masked.

``forward(x, params, masks=None)`` returns the LSTM's ``i``, ``f``, ``o``,
``u``, ``c``, ``h`` (T, d); ``e`` and ``a`` (T,); ``c_T`` (d,) and ``h~_T``
(A,), one per sentence; and ``out`` (T, A): h~_T in the last row (the
chain's root), 0 in the others, as the cell outputs.
"""

from __future__ import annotations

import numpy as np

from . import lstm

OPTIONS = ()


def forward(x: np.ndarray, params: dict, masks=None) -> dict:
    """Eqs. 4-7 over one sentence.  x: (T, d_x); params: the cell's ``W``,
    ``U``, ``b`` (the LSTM), ``W_a`` (d,), ``W_c`` (2d, A), ``b_c`` (A,);
    masks: None or [m], m (d,)."""
    result = lstm.forward(x, {name: params[name] for name in ("W", "U", "b")}, masks=masks)
    h = result["h"]
    W_a, W_c, b_c = np.asarray(params["W_a"]), np.asarray(params["W_c"]).T, np.asarray(params["b_c"])
    T = len(h)
    e = np.array([W_a @ h[t] for t in range(T)])  # W_a h_t
    weights = np.exp(e - e.max())  # (the max cancels)
    a = weights / weights.sum()  # (6)
    c_T = a @ h  # sum_t a_t h_t  (5)
    h_tilde_T = np.tanh(W_c @ np.concatenate([c_T, h[-1]]) + b_c)  # (7)
    out = np.zeros((T, b_c.shape[0]))
    out[-1] = h_tilde_T
    return {
        **{key: value for key, value in result.items() if key != "out"},
        "e": e,
        "a": a,
        "c_T": c_T,
        "h~_T": h_tilde_T,
        "out": out,
    }
