r"""Elman recurrent network, time step by time step (Elman 1990), as written
in Irsoy & Cardie 2015, Sec. 3.2, eq. 3.

Column orientation (W is d x d_x, V is d x d: the transposes of the code's
``W``, ``V``), h_0 = 0:

    h_t = f( W x_t + V h_{t-1} + b )                                    (3)

f in {tanh, relu, identity, sigmoid}.  (Eq. 4, the classifier, is the
model's head.)  Recurrent dropout: ``masks=[m]``, m (d,): step t reads
h_{t-1} * m; h_t itself is not masked.

``forward(x, params, activation="tanh", masks=None)`` returns ``z`` (the
pre-activations), ``h`` and ``out`` (= h), each (T, d).
"""

from __future__ import annotations

import numpy as np

from .functions import activation as activation_function

OPTIONS = ("activation",)


def paper_parameters(params: dict) -> dict:
    """Irsoy's ``W`` (d, d_x), ``V`` (d, d), ``b`` (d,)."""
    return {"W": np.asarray(params["W"]).T, "V": np.asarray(params["V"]).T, "b": np.asarray(params["b"])}


def forward(x: np.ndarray, params: dict, activation: str = "tanh", masks=None) -> dict:
    """Eq. 3 over one sentence.  x: (T, d_x); params: the cell's ``W``, ``V``,
    ``b``; masks: None or [m], m (d,)."""
    f = activation_function(activation).g
    P = paper_parameters(params)
    d = P["b"].shape[0]
    mask = np.ones(d) if masks is None else np.asarray(masks[0])
    T = len(x)
    z, h = np.zeros((T, d)), np.zeros((T, d))
    h_prev = np.zeros(d)  # h_0 = 0
    for t in range(T):
        z[t] = P["W"] @ x[t] + P["V"] @ (h_prev * mask) + P["b"]
        h[t] = f(z[t])  # (3)
        h_prev = h[t]
    return {"z": z, "h": h, "out": h.copy()}
