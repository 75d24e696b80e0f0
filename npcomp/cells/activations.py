"""Pointwise non-linearities and their derivatives, for the numba kernels.

Derivatives are computed from the cached *outputs* (sigma' = s(1-s),
tanh' = 1-t^2, softsign' = (1-|s|)^2), never by recomputing pre-activations.
Activations are passed to kernels as small integer codes.

Constants are float32 (``ONE``): a float64 literal would promote
float32 arithmetic to float64 and make every exp a double-precision call,
while float32 constants leave float64 inputs in float64.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

ONE = np.float32(1.0)

ACTIVATIONS = {"tanh": 0, "sigmoid": 1, "softsign": 2}

# Irsoy & Cardie's recurrent cells also take the rectifier ("+" in their
# tables) and no non-linearity ("I").  Kept out of ACTIVATIONS, whose names
# every tree cell accepts (and their tests enumerate); see ``code_among``.
RECURRENT_ACTIVATIONS = {**ACTIVATIONS, "relu": 3, "identity": 4}
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


@njit(cache=True, inline="always")
def activate(code, z):
    """g(z) for g = tanh (0), sigmoid (1), softsign (2), relu (3), identity (4)."""
    if code == 0:
        return tanh(z)
    if code == 1:
        return ONE / (ONE + math.exp(-z))
    if code == 3:
        return max(z, ZERO)
    if code == 4:
        return z
    return z / (ONE + abs(z))


@njit(cache=True, inline="always")
def derivative_from_output(code, g):
    """g'(z) written in terms of g = g(z).  relu: 1 where g > 0, else 0 (the
    subgradient 0 at the kink z = 0, where g = 0 too)."""
    if code == 0:
        return ONE - g * g
    if code == 1:
        return g * (ONE - g)
    if code == 3:
        return ONE if g > ZERO else ZERO
    if code == 4:
        return ONE
    return (ONE - abs(g)) * (ONE - abs(g))


def activation_code(name: str) -> int:
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, not {name!r}") from None


def code_among(name: str, allowed: tuple, cell: str) -> int:
    """The kernel code of activation ``name``, which ``cell`` must allow."""
    if name not in allowed:
        raise ValueError(f"{cell}: activation must be one of {sorted(allowed)}, not {name!r}")
    return RECURRENT_ACTIVATIONS[name]


def uniform_fan_in(array: np.ndarray, fan_in: int, rng: np.random.Generator) -> None:
    """Fill ``array`` in place from U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(fan_in)
    array[...] = rng.uniform(-bound, bound, size=array.shape)


def add_forget_bias(b: np.ndarray, hidden_dim: int, forget_bias: float) -> None:
    """Add ``forget_bias`` to the forget block ``b[3d:4d]`` of an LSTM bias laid
    out i|o|u|f, in place.  A positive constant (Gers et al. 2000; Jozefowicz et
    al. 2015; Keras' LSTM default of 1) starts f near sigma(forget_bias), so the
    memory carries across many steps before training has shaped the gates."""
    b[3 * hidden_dim:4 * hidden_dim] += forget_bias
