"""The numba kernels of the pointwise non-linearities and their derivatives.

The non-linearities a cell's ``activation`` option can name, by their kernel
codes (``CODES``); which of them a model takes is its registry entry's
(``cells/registry.py``).  Kernels take an activation as its code and
dispatch on it here (``activate``, ``derivative_from_output``).  The
reference cells compute the same functions in NumPy, on their own
(``reference/functions.py``'s ``ACTIVATIONS``): the kernels import nothing of
the oracle they are checked against, and a test holds the two tables to the
same names and values.

Derivatives are computed from the cached *outputs* (sigma' = s(1-s),
tanh' = 1-t^2, softsign' = (1-|s|)^2), never by recomputing pre-activations.

Constants are float32 (``ONE``): a float64 literal would promote
float32 arithmetic to float64 and make every exp a double-precision call,
while float32 constants leave float64 inputs in float64.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


ONE = np.float32(1.0)
ZERO = np.float32(0.0)


@njit(cache=True, inline="always")
def tanh(z):
    """tanh from one exp: (1 - e^-2|z|) / (1 + e^-2|z|), several times faster
    than libm's tanh in numba's scalar loops; its error is within a few units
    of the last place in absolute terms (relative error grows only as |z| -> 0,
    where the value is ~z and the absolute error stays at rounding level)."""
    magnitude = abs(z)
    e = math.exp(-(magnitude + magnitude))  # stays float32 for float32 input
    value = (ONE - e) / (ONE + e)
    return value if z >= 0 else -value


# each activation's code, as the kernels' dispatch reads it (numba freezes
# module constants)
CODES = {"tanh": 0, "sigmoid": 1, "softsign": 2, "relu": 3, "identity": 4}
TANH, SIGMOID, SOFTSIGN, RELU, IDENTITY = (CODES[name] for name in ("tanh", "sigmoid", "softsign", "relu", "identity"))


@njit(cache=True, inline="always")
def activate(code, z):
    """g(z) for the activation of kernel code ``code`` (``CODES``)."""
    if code == TANH:
        return tanh(z)
    if code == SIGMOID:
        return ONE / (ONE + math.exp(-z))
    if code == RELU:
        return max(z, ZERO)
    if code == IDENTITY:
        return z
    return z / (ONE + abs(z))  # SOFTSIGN


@njit(cache=True, inline="always")
def derivative_from_output(code, g):
    """g'(z) written in terms of g = g(z).  relu: 1 where g > 0, else 0 (the
    subgradient 0 at the kink z = 0, where g = 0 too)."""
    if code == TANH:
        return ONE - g * g
    if code == SIGMOID:
        return g * (ONE - g)
    if code == RELU:
        return ONE if g > ZERO else ZERO
    if code == IDENTITY:
        return ONE
    return (ONE - abs(g)) * (ONE - abs(g))  # SOFTSIGN


def activation_code(name: str) -> int:
    """The kernel code of activation ``name``; ValueError naming them for an
    unknown one."""
    try:
        return CODES[name]
    except KeyError:
        raise ValueError(f"activation must be one of {sorted(CODES)}, not {name!r}") from None


def uniform_fan_in(array: np.ndarray, fan_in: int, rng: np.random.Generator) -> None:
    """Fill ``array`` in place from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(fan_in)
    array[...] = rng.uniform(-bound, bound, size=array.shape)


def add_forget_bias(b: np.ndarray, hidden_dim: int, forget_bias: float) -> None:
    """Add ``forget_bias`` to the forget block ``b[3d:4d]`` of an LSTM bias laid
    out i|o|u|f, in place.  A positive constant (Gers et al. 2000; Jozefowicz et
    al. 2015; Keras' LSTM default of 1) starts f near sigma(forget_bias), so the
    memory carries across many steps before training has shaped the gates."""
    b[3 * hidden_dim : 4 * hidden_dim] += forget_bias
