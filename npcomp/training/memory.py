"""Keeping freed memory in the process from one minibatch to the next.

A training step allocates its work arrays afresh (the N-ary Tree-LSTM's gate
rows and their deltas are 2-3 MB each on an SST minibatch of 25) and frees them
at its end.  glibc maps blocks above its mmap threshold with mmap and unmaps
them when freed, and trims freed memory off the top of the heap above its
trim threshold; it raises both thresholds on its own only after the process
has freed a large mapped block, so whether a step's arrays land on fresh pages
depends on what the process happened to allocate before.  When they do, the
step's first write to every 4 KiB page is a page fault answered with a zeroed
page: about 1,400 faults per Tree-LSTM minibatch, and the first pass of a
numba kernel over fresh rows ran 6x slower than the second.

``retain_freed_memory`` raises glibc's two thresholds so that blocks up to
32 MiB come from the heap and up to 512 MiB of freed memory stays mapped:
the steps reuse the same pages.  The process's resident memory then stays at
its peak instead of following each step.  Other C libraries are left alone.
Measured with the SST Tree-LSTM at Tai et al.'s settings, two epochs on two
threads, two pairs of runs: 1,107 and 1,080 sentences/s without, 1,193 and
1,202 with; 1,158 and 1,154 without, 1,197 and 1,198 with.
"""

from __future__ import annotations

import ctypes
import sys

# mallopt parameters, from glibc's malloc.h
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

# glibc refuses an mmap threshold above 32 MiB on 64-bit systems
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
TRIM_THRESHOLD_BYTES = 512 * 1024 * 1024


def retain_freed_memory() -> bool:
    """Sets glibc's allocation thresholds for the whole process (idempotent).
    Returns whether both settings took effect (False off glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
