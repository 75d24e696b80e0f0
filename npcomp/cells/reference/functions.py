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
