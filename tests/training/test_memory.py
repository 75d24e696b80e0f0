"""retain_freed_memory: a step that allocates and frees large arrays stops
page-faulting on every step (glibc only)."""

import platform
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = """
import resource, sys
import numpy as np
if sys.argv[1] == "retain":
    from npcomp.training.memory import retain_freed_memory
    assert retain_freed_memory()
def step():  # work arrays the size of a Tree-LSTM minibatch's gate rows
    gates = np.empty((1000, 750), np.float32)
    gates[...] = 1.0
    delta = np.zeros((1000, 750), np.float32)
    delta += gates
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str) -> int:
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, cwd=root, check=True)
    return int(result.stdout.strip())


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="mallopt thresholds are glibc's"
)
def test_freed_work_arrays_are_reused_without_page_faults():
    default, retained = _faults("default"), _faults("retain")
    # 20 steps of two 3 MB arrays: about 30,000 faults when every step maps
    # fresh pages, none when the heap keeps them
    assert default > 10_000
    assert retained < 200


def test_is_idempotent_and_reports_a_bool():
    from npcomp.training.memory import retain_freed_memory

    first = retain_freed_memory()
    assert isinstance(first, bool) and retain_freed_memory() == first
