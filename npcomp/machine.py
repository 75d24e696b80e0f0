"""What a run's floating-point results depend on besides the code, the data and
the seed.

NumPy chooses its SIMD loops (exp, tanh, reductions) and OpenBLAS its matrix
kernels by the CPU at run time, so the same command on another CPU, or with
another NumPy, can differ in the last bits of its first steps; training
amplifies those differences into a different run (on the SST, up to two
points of root accuracy at one seed: docs/RESULTS.md, "Runs from earlier
sessions").  ``metrics.json`` records this description so a
figure can be rerun where it was made.
"""
from __future__ import annotations

import platform


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_description() -> dict:
    """CPU, the SIMD extensions NumPy dispatches to, the BLAS build, and the
    versions of Python, NumPy and numba."""
    import numba
    import numpy as np

    description = {"cpu": _cpu_model(), "machine": platform.machine(),
                   "python": platform.python_version(), "numpy": np.__version__,
                   "numba": numba.__version__}
    try:
        config = np.show_config(mode="dicts")
    except TypeError:  # NumPy < 1.26 prints its configuration only
        return description
    description["numpy_simd"] = config.get("SIMD Extensions", {}).get("found")
    blas = config.get("Build Dependencies", {}).get("blas", {})
    description["blas"] = blas.get("openblas configuration") or blas.get("name")
    return description
