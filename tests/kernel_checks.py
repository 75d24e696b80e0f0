"""Shared test helpers: a numba kernel against its own Python function."""
from __future__ import annotations

import numpy as np


def assert_kernel_matches_python(kernel, make_args) -> None:
    """Run the compiled ``kernel`` and ``kernel.py_func`` on copies of the same
    arguments (``make_args()``) and compare every array afterwards."""
    compiled_args = make_args()
    python_args = [a.copy() if isinstance(a, np.ndarray) else a for a in compiled_args]
    kernel(*compiled_args)
    kernel.py_func(*python_args)
    for compiled, python in zip(compiled_args, python_args):
        if isinstance(compiled, np.ndarray):
            np.testing.assert_allclose(compiled, python, rtol=1e-12, atol=1e-12)
