"""The machine record of metrics.json names the BLAS kernels actually in use."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from npcomp.runfiles.machine import machine_description

KERNELS = [
    sys.executable,
    "-c",
    "from npcomp.runfiles.machine import machine_description as m; print(m()['blas_kernels'])",
]


def test_blas_kernels_follow_openblas_coretype():
    """OpenBLAS's build string names its build target whatever kernels it runs,
    so the record asks the library: forcing the Haswell kernels shows there."""
    native = machine_description()["blas_kernels"]
    if native is None or platform.machine() != "x86_64":
        pytest.skip("no OpenBLAS with x86-64 kernels loaded")
    environment = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    forced = subprocess.run(KERNELS, env=environment, capture_output=True, text=True, check=True).stdout.strip()
    assert forced == "Haswell"
    assert isinstance(native, str) and native
