"""Kernels the LSTM-like tree cells share: the gate non-linearities, h = o *
tanh(c), and moving states between a level's nodes and their children.

Used by the N-ary and Child-Sum Tree-LSTMs (Tai et al. eqs. 9-14 and 2-8)
and by the recurrent attention's transfer layer.

A level's gates take one vectorised exponential: a cell's kernel writes
each gate's pre-activation z as -z (sigmoid gates) or -2z (the tanh gate u,
capped at ``EXPONENT_CAP``), NumPy's expm1 runs over the whole block in
place (SIMD, as exp; a scalar exp in a numba loop costs several times
more), and the cell's next kernel reads each gate off m = e^x - 1:

    sigma(z) = 1 / (1 + e^-z)              = 1 / (2 + m),   m = expm1(-z)
    tanh(z)  = (1 - e^-2z) / (1 + e^-2z)   = -m / (2 + m),  m = expm1(-2z)

(``sigmoid_from_expm1``, ``tanh_from_expm1``).  expm1 keeps tanh's relative
precision near z = 0, where 1 - e^-2z would cancel; m = inf (z far below 0)
gives sigma = 0, and the cap keeps tanh's m finite (-1 there).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .activations import ONE
from .levels import sigmoid


def gate_functions(z: np.ndarray, d: int, output_gate: bool = True) -> None:
    """In place: sigma on the i, o, f columns, tanh on the u columns (d wide).
    Without ``output_gate`` the o columns are set to 1: h = tanh(c), and the
    backward's delta_o = eps_h tanh(c) o(1-o) is then exactly 0.

    NumPy's exp and tanh are vectorised (SIMD); scalar libm calls in a numba
    loop cost several times more, and these functions dominate the arithmetic.
    """
    u = np.tanh(z[:, 2 * d : 3 * d])
    sigmoid(z)
    z[:, 2 * d : 3 * d] = u
    if not output_gate:
        z[:, d : 2 * d] = 1.0


def hidden_state(gates, c, tanh_c, h, start, stop):
    """h_j = o_j * tanh(c_j) (Tai et al. eqs. 14 and 8)."""
    d = c.shape[1]
    np.tanh(c[start:stop], out=tanh_c[start:stop])
    np.multiply(gates[start:stop, d : 2 * d], tanh_c[start:stop], out=h[start:stop])


# the largest -2z the u columns take to expm1: tanh(-40) is -1 to float64's
# precision (it differs by 4e-35), and e^80 is finite in float32
EXPONENT_CAP = np.float32(80.0)


@njit(cache=True, inline="always")
def sigmoid_from_expm1(m):
    """sigma(z) from m = expm1(-z)."""
    return ONE / (ONE + ONE + m)


@njit(cache=True, inline="always")
def tanh_from_expm1(m):
    """tanh(z) from m = expm1(-2z)."""
    return -m / (ONE + ONE + m)


@njit(cache=True, inline="always")
def tanh_argument(z):
    """-2z, the argument of expm1 for tanh(z), capped at ``EXPONENT_CAP``
    (NaN stays NaN)."""
    x = -(z + z)
    return EXPONENT_CAP if x > EXPONENT_CAP else x


@njit(cache=True, nogil=True)
def gather_children(children, h, hc, start, stop, node_mask=None):
    """hc[j] = [h_j1 | ... | h_jN] for the nodes of one level (missing: 0),
    each block times the node's recurrent-dropout mask row when
    ``node_mask`` (n, d) is given (h~_jl = h_jl * m_s)."""
    d = h.shape[1]
    for j in range(start, stop):
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                if node_mask is None:
                    hc[j, k * d : (k + 1) * d] = h[kid]
                else:
                    for q in range(d):
                        hc[j, k * d + q] = h[kid, q] * node_mask[j, q]


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
                    d_h[kid] += d_hc[j - start, k * d : (k + 1) * d]
                else:
                    for q in range(d):
                        d_h[kid, q] += d_hc[j - start, k * d + q] * node_mask[j, q]
