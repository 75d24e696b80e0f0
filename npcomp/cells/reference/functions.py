"""The pointwise functions of the reference cells, written out in NumPy
(the cells use numba versions in ``npcomp/cells/activations.py``)."""
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


# the non-linearities the cells' ``activation`` option names
ACTIVATIONS = {"tanh": np.tanh, "sigmoid": sigmoid, "softsign": softsign, "relu": relu,
               "identity": identity}


def activation(name: str):
    """The function called ``name`` in ``ACTIVATIONS``."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, "
                         f"not {name!r}") from None


def column_block(matrix, k: int, d: int) -> np.ndarray:
    """Column block k (d wide) of a code matrix, transposed: the paper's
    matrix acting on column vectors."""
    return np.asarray(matrix)[:, k * d:(k + 1) * d].T


def vector_block(vector, k: int, d: int) -> np.ndarray:
    """Block k (d long) of a code bias vector."""
    return np.asarray(vector)[k * d:(k + 1) * d]


def undefined(*shape) -> np.ndarray:
    """An array of NaN: the rows of a quantity a node does not have."""
    return np.full(shape, np.nan)


# each non-linearity's derivative from its output y = f(z), as the cells take it
DERIVATIVES = {"tanh": lambda y: 1.0 - y * y, "sigmoid": lambda y: y * (1.0 - y),
               "softsign": lambda y: (1.0 - np.abs(y)) ** 2,
               "relu": lambda y: (y > 0).astype(np.float64), "identity": np.ones_like}


def derivative(name: str):
    """f' as a function of f's output, for the non-linearity called ``name``."""
    try:
        return DERIVATIVES[name]
    except KeyError:
        raise ValueError(f"activation must be one of {sorted(DERIVATIVES)}, "
                         f"not {name!r}") from None


def code_columns(blocks: list) -> np.ndarray:
    """The code's matrix whose column blocks are the paper's matrices of
    ``blocks`` transposed (the inverse of ``column_block``)."""
    return np.hstack([np.asarray(block).T for block in blocks])
