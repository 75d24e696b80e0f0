"""The thread pools npcomp computes with, pinned for the length of a call.

npcomp's parallelism is its own: a minibatch's shards on helper processes
or threads, as many as the ``threads`` option says (``shards.py``,
``shard_processes.py``), and evaluation's forests on helper threads.  Each
of them runs its matrix products on one BLAS thread, so the products of
different shards overlap instead of fighting over the cores, and a run's
numbers do not depend on the cores BLAS finds (a product split across
threads may round otherwise).  `npcomp train` sets OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS and MKL_NUM_THREADS to 1 before NumPy loads
(``cli/__init__.py``); a script that imported NumPy first has OpenBLAS on
every core, and setting the variables then changes nothing.

``pinned_thread_pools`` limits the BLAS and OpenMP pools loaded in the
process to ``BLAS_THREADS`` with threadpoolctl for the length of a call,
then gives the caller's limits back, on an exception too.  Every public
entry point that computes (training, evaluation, prediction, an
estimator's methods, explain, the gradient checks) runs inside it, so a
script gets `npcomp train`'s numbers, bit for bit, and its speed.  Helper
processes forked inside it keep the pinned pools (a forked child inherits
its parent's memory, OpenBLAS's thread count with it).

Limiting the pools looks up every loaded library (about half a millisecond):
it is done once per public call, never per step.  Calls nest: inside a
pinned call another is a counter's step (``trainer.train`` evaluating dev
with ``evaluation.evaluate``), and so is a call on another thread while one
is under way, since the pools belong to the process; the last one out
restores the limits.

numba's threads are left alone: no kernel is compiled ``parallel=True``,
so numba never starts a pool of its own (tests/training/test_thread_pools.py
checks the kernels).
"""

from __future__ import annotations

import threading
from contextlib import ContextDecorator

__all__ = ["BLAS_THREADS", "pinned_thread_pools"]

# threads of each BLAS (and OpenMP) call: npcomp's own threads are the shards'
BLAS_THREADS = 1

_lock = threading.Lock()
_depth = 0  # pinned calls under way in this process
_limiter = None  # threadpoolctl's limiter of the outermost one: restores the caller's


class pinned_thread_pools(ContextDecorator):
    """``with pinned_thread_pools():`` runs its body with the process's BLAS
    and OpenMP pools at ``BLAS_THREADS`` threads, as `npcomp train` runs,
    and restores the caller's limits after it; ``@pinned_thread_pools()``
    runs a function so."""

    def __enter__(self):
        global _depth, _limiter
        with _lock:
            if _depth == 0:
                from threadpoolctl import threadpool_limits

                _limiter = threadpool_limits(limits=BLAS_THREADS)
            _depth += 1
        return self

    def __exit__(self, *exception):
        global _depth, _limiter
        with _lock:
            _depth -= 1
            if _depth == 0:
                limiter, _limiter = _limiter, None
                limiter.restore_original_limits()
        return False
