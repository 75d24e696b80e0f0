"""The pointwise functions of the reference cells, written out in NumPy, and
the table of the non-linearities a cell's ``activation`` option can name
(``ACTIVATIONS``): each one's g and g'.  The cells compute them with numba
versions of their own (``npcomp/cells/kernels/activations.py``, by kernel
code); the oracle imports nothing of them, and the tests hold the kernels to
these g and g'."""

from __future__ import annotations

import numpy as np


def sigmoid(z):
    """1 / (1 + exp(-z)); exp overflow for very negative z gives exactly 0."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


def softsign(z):
    return z / (1.0 + np.abs(z))


def relu(z):
    return np.maximum(z, 0.0)


def identity(z):
    return z


class Activation:
    """A non-linearity: ``g`` in NumPy; ``slope``, g' written in g = g(z)
    (the cells keep outputs, not pre-activations)."""

    __slots__ = ("g", "slope")

    def __init__(self, g, slope):
        self.g, self.slope = g, slope


# which of them a model takes is its registry entry's (cells/registry.py)
ACTIVATIONS = {
    "tanh": Activation(np.tanh, lambda g: 1.0 - g * g),
    "sigmoid": Activation(sigmoid, lambda g: g * (1.0 - g)),
    "softsign": Activation(softsign, lambda g: (1.0 - np.abs(g)) ** 2),
    # Irsoy & Cardie's recurrent cells also take the rectifier ("+" in their
    # tables) and no non-linearity ("I"); relu's slope at the kink z = 0 is 0
    "relu": Activation(relu, lambda g: (np.asarray(g) > 0).astype(np.asarray(g).dtype)),
    "identity": Activation(identity, lambda g: np.ones_like(g)),
}


def activation(name: str) -> Activation:
    """The activation called ``name``; ValueError naming them for an unknown one."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, not {name!r}") from None


def column_block(matrix, k: int, d: int) -> np.ndarray:
    """Column block k (d wide) of a code matrix, transposed: the paper's
    matrix acting on column vectors."""
    return np.asarray(matrix)[:, k * d : (k + 1) * d].T


def vector_block(vector, k: int, d: int) -> np.ndarray:
    """Block k (d long) of a code bias vector."""
    return np.asarray(vector)[k * d : (k + 1) * d]


def undefined(*shape) -> np.ndarray:
    """An array of NaN: the rows of a quantity a node does not have."""
    return np.full(shape, np.nan)


def derivative(name: str):
    """g' as a function of g's output y = g(z), as the cells take it, for the
    non-linearity called ``name`` (its ``slope`` in ``ACTIVATIONS``)."""
    return activation(name).slope


def code_columns(blocks: list) -> np.ndarray:
    """The code's matrix whose column blocks are the paper's matrices of
    ``blocks`` transposed (the inverse of ``column_block``)."""
    return np.hstack([np.asarray(block).T for block in blocks])
