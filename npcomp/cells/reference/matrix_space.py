r"""Compositional matrix-space model, word by word (Rudolph & Giesbrecht
2010; Yessenalina & Cardie 2011), as written in Irsoy & Cardie 2015,
Sec. 3.1, eqs. 1-2.

Every word w is a d x d matrix M_w (its embedding row x_w (d^2,) is M_w in
row-major order).  A sentence s = w_1 .. w_T is

    M(s) = M_{w_1} M_{w_2} ... M_{w_T}                                  (1)
    y(s) = h_0^T M(s) u                                                 (2)

and the state after the prefix w_1 .. w_t is the row vector
h_t = h_0^T M_{w_1} .. M_{w_t} (u is the model's head).

``forward(x, params)`` returns ``M`` (T, d, d), the word matrices; ``M(s)``
(T, d, d), the prefix products M_{w_1} .. M_{w_t}; ``h`` (T, d) and ``out``
(= h).
"""

from __future__ import annotations

import numpy as np

OPTIONS = ()


def forward(x: np.ndarray, params: dict) -> dict:
    """Eqs. 1-2 over every prefix of one sentence.  x: (T, d^2), row t the
    matrix of word t in row-major order; params: the cell's ``h0`` (d,)."""
    h_0 = np.asarray(params["h0"])
    d = h_0.shape[0]
    T = len(x)
    M = np.asarray(x, dtype=float).reshape(T, d, d)
    product, h = np.zeros((T, d, d)), np.zeros((T, d))
    running = np.eye(d)
    for t in range(T):
        running = running @ M[t]  # M_{w_1} .. M_{w_t}     (1)
        product[t] = running
        h[t] = h_0 @ running  # h_0^T M(w_1 .. w_t)    (2)
    return {"M": M, "M(s)": product, "h": h, "out": h.copy()}
