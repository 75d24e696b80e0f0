"""Every numba kernel run as plain Python (NUMBA_DISABLE_JIT=1), as a
coverage tool sees them: the loss and gradient of every gradient-check
setting, and a step of each optimiser, in a process without the compiler,
give what the compiled kernels give here, and every kernel runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from python_kernels_probe import run_everything

PROBE = Path(__file__).resolve().parents[1] / "python_kernels_probe.py"


def test_kernels_as_python_match_the_compiled_ones_and_all_run():
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, env=environment, timeout=600)
    assert result.returncode == 0, result.stderr
    as_python = json.loads(result.stdout)
    assert as_python["kernels"] > 40
    assert as_python["not_run"] == []
    compiled = run_everything()
    assert compiled.keys() == as_python["results"].keys()
    # run as Python, a kernel's float32 constants (activations.ONE) make NumPy
    # round a float64 scalar expression to float32 (NEP 50's promotion rules),
    # so the two agree to float32 precision, not to the last digit
    for case, values in compiled.items():
        np.testing.assert_allclose(as_python["results"][case], values, rtol=2e-5, atol=1e-6, err_msg=case)
