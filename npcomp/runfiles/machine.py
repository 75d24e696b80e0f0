"""What a run's floating-point results depend on besides the code, the data and
the seed.

NumPy chooses its SIMD loops (exp, tanh, reductions) and OpenBLAS its matrix
kernels by the CPU at run time, so the same command on another CPU, or with
another NumPy, can differ in the last bits of its first steps; training
amplifies those differences into a different run.  ``metrics.json`` records
this description so a figure can be rerun where it was made (how far
another machine moves the reports' figures is an open question in
docs/RESULTS.md, "Machines": no other machine's runs are committed).
"""

from __future__ import annotations

import ctypes
import os
import platform

# what OpenBLAS builds call the function naming the kernels in use
_CORENAME_SYMBOLS = (
    "scipy_openblas_get_corename64_",
    "scipy_openblas_get_corename",
    "openblas_get_corename64_",
    "openblas_get_corename",
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _openblas_kernels() -> str | None:
    """The kernels the loaded OpenBLAS runs ("Haswell", "SkylakeX", ...): chosen
    for the CPU at load time unless OPENBLAS_CORETYPE names them.  (Its build
    string names the build's target, not these.)  None without an OpenBLAS."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {
                fields[-1]
                for fields in map(str.split, maps)
                if len(fields) >= 6 and "openblas" in fields[-1].rsplit("/", 1)[-1].lower()
            }
    except OSError:
        return None
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)  # already loaded: the same handle
        except OSError:
            continue
        for symbol in _CORENAME_SYMBOLS:
            corename = getattr(library, symbol, None)
            if corename is not None:
                corename.restype = ctypes.c_char_p
                return corename().decode()
    return None


def machine_description() -> dict:
    """CPU and its logical cores, the SIMD extensions NumPy dispatches to, the BLAS build and the
    kernels it runs (``blas_kernels``), and the versions of Python, NumPy and
    numba."""
    import numba
    import numpy as np

    description = {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "blas_kernels": _openblas_kernels(),
    }
    try:
        config = np.show_config(mode="dicts")
    except TypeError:  # NumPy < 1.26 prints its configuration only
        return description
    description["numpy_simd"] = config.get("SIMD Extensions", {}).get("found")
    blas = config.get("Build Dependencies", {}).get("blas", {})
    description["blas"] = blas.get("openblas configuration") or blas.get("name")
    return description


def machine_summary(description: dict) -> str:
    """A ``machine_description`` as one line: the CPU, its cores, the
    architecture, the BLAS kernels and the versions of NumPy and numba."""
    parts = [
        description.get("cpu"),
        description.get("cores") and f"{description['cores']} cores",
        description.get("machine"),
        description.get("blas_kernels") and f"OpenBLAS kernels {description['blas_kernels']}",
        description.get("numpy") and f"NumPy {description['numpy']}",
        description.get("numba") and f"numba {description['numba']}",
    ]
    return ", ".join(part for part in parts if part) or "not recorded"
