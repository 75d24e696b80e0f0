"""Kernels the LSTM-like tree cells share: the gate non-linearities, h = o *
tanh(c), and moving states between a level's nodes and their children.

Used by the N-ary and Child-Sum Tree-LSTMs (Tai et al. eqs. 9-14 and 2-8)
and by the recurrent attention's transfer layer.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .levels import sigmoid


def gate_functions(z: np.ndarray, d: int, output_gate: bool = True) -> None:
    """In place: sigma on the i, o, f columns, tanh on the u columns (d wide).
    Without ``output_gate`` the o columns are set to 1: h = tanh(c), and the
    backward's delta_o = eps_h tanh(c) o(1-o) is then exactly 0.

    NumPy's exp and tanh are vectorised (SIMD); scalar libm calls in a numba
    loop cost several times more, and these functions dominate the arithmetic.
    """
    u = np.tanh(z[:, 2 * d:3 * d])
    sigmoid(z)
    z[:, 2 * d:3 * d] = u
    if not output_gate:
        z[:, d:2 * d] = 1.0


def hidden_state(gates, c, tanh_c, h, start, stop):
    """h_j = o_j * tanh(c_j) (Tai et al. eqs. 14 and 8)."""
    d = c.shape[1]
    np.tanh(c[start:stop], out=tanh_c[start:stop])
    np.multiply(gates[start:stop, d:2 * d], tanh_c[start:stop], out=h[start:stop])


@njit(cache=True, nogil=True)
def gather_children(children, h, hc, start, stop):
    """hc[j] = [h_j1 | ... | h_jN] for the nodes of one level (missing: 0)."""
    d = h.shape[1]
    for j in range(start, stop):
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                hc[j, k * d:(k + 1) * d] = h[kid]


@njit(cache=True, nogil=True)
def scatter_to_children(children, d_hc, d_h, start, stop, node_mask=None):
    """eps_h of child k += its block of delta_j U^T (rows of d_hc from
    ``start``), times the parent's recurrent-dropout mask row when
    ``node_mask`` (n, d) is given (reverses h~_jl = h_jl * m_s)."""
    d = d_h.shape[1]
    for j in range(start, stop):
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                if node_mask is None:
                    d_h[kid] += d_hc[j - start, k * d:(k + 1) * d]
                else:
                    for q in range(d):
                        d_h[kid, q] += d_hc[j - start, k * d + q] * node_mask[j, q]
