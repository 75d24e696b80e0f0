r"""Multiplicative recurrent network, time step by time step (Sutskever et
al. 2011), as written in Irsoy & Cardie 2015, Sec. 4.1, eq. 5.

Column orientation, h_0 = 0:

    h_t = f( x_t^T A^[1..d] h_{t-1} + W x_t + V h_{t-1} + b )            (5)

with (x^T A y)_i = x^T A^[i] y, the slice A^[i] (d_x x d) being the code's
``A[:, :, i]``; W (d x d_x), V (d x d) are the transposes of the code's.
f in {identity, relu, tanh}.  (Eq. 6 is the model's head.)  Recurrent
dropout: ``masks=[m]``, m (d,): both recurrent terms read h_{t-1} * m.

``forward(x, params, activation="tanh", masks=None)`` returns ``z`` (the
pre-activations), ``h`` and ``out`` (= h), each (T, d).
"""

from __future__ import annotations

import numpy as np

from .functions import activation as activation_function

OPTIONS = ("activation",)


def paper_parameters(params: dict) -> dict:
    """``A^[i]`` (d_x, d) for i = 1..d, Irsoy's ``W`` (d, d_x), ``V`` (d, d), ``b``."""
    A = np.asarray(params["A"])
    out = {f"A^[{i + 1}]": A[:, :, i] for i in range(A.shape[2])}
    out.update(W=np.asarray(params["W"]).T, V=np.asarray(params["V"]).T, b=np.asarray(params["b"]))
    return out


def forward(x: np.ndarray, params: dict, activation: str = "tanh", masks=None) -> dict:
    """Eq. 5 over one sentence.  x: (T, d_x); params: the cell's ``A``, ``W``,
    ``V``, ``b``; masks: None or [m], m (d,)."""
    f = activation_function(activation).g
    P = paper_parameters(params)
    d = P["b"].shape[0]
    mask = np.ones(d) if masks is None else np.asarray(masks[0])
    T = len(x)
    z, h = np.zeros((T, d)), np.zeros((T, d))
    h_prev = np.zeros(d)  # h_0 = 0
    for t in range(T):
        previous = h_prev * mask
        bilinear = np.array([x[t] @ P[f"A^[{i + 1}]"] @ previous for i in range(d)])
        z[t] = bilinear + P["W"] @ x[t] + P["V"] @ previous + P["b"]
        h[t] = f(z[t])  # (5)
        h_prev = h[t]
    return {"z": z, "h": h, "out": h.copy()}
