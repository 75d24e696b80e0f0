"""The Dask task of one run of a sweep (``sweep_cluster.execute`` submits
it): `npcomp train` in the worker, with its threads pinned, its output in
the run's log, and a failure returned as the message `npcomp train` would
print."""

from __future__ import annotations

import os
from pathlib import Path

from npcomp.configuration.options import command_line


def train_in_worker(options: dict, resumed: dict, run_dir: str, log_file: str) -> dict:
    """The Dask task of one run: `npcomp train` in this worker, with BLAS
    (threadpoolctl) and numba pinned to one thread per compute thread and
    ``options["threads"]`` compute threads, as `npcomp train --threads`
    runs.  From the run directory it decides: skip a finished run, resume
    one with a checkpoint (with ``resumed``, the options a resumed run takes
    anew), start one afresh (``options``, built by ``config_of``;
    overwriting a run stopped before its first dev evaluation, which holds
    nothing finished).  What the run prints goes to ``log_file``.

    Returns {"status": exit status, "error": message or None, "resumed",
    "threads": {"compute", "blas", "numba"}: the thread counts the run saw,
    "worker": host:pid}; a failure is a value, not an exception, so Dask
    does not retry it (it only resubmits a run whose worker died)."""
    import contextlib
    import socket
    import time

    import numba
    from threadpoolctl import threadpool_info, threadpool_limits

    from .sweep_plan import run_state

    state = run_state(run_dir)
    seen = {"compute": options["threads"]}
    result = {
        "status": 0,
        "error": None,
        "resumed": state == "resumable",
        "worker": f"{socket.gethostname()}:{os.getpid()}",
        "threads": seen,
    }
    if state == "finished":
        return result
    if state == "resumable":
        command = ["--resume", run_dir, *command_line(resumed)]
    else:
        command = [*command_line(options), "--out", run_dir] + (["--overwrite"] if state == "started" else [])
    Path(log_file).parent.mkdir(parents=True, exist_ok=True)
    # npcomp's threads overlap independent products themselves: each BLAS call
    # and numba kernel runs on one thread, as the command line sets before numpy loads
    with (
        open(log_file, "a", encoding="utf-8") as log,
        threadpool_limits(limits=1),
        contextlib.redirect_stdout(log),
        contextlib.redirect_stderr(log),
    ):
        numba.set_num_threads(1)
        seen["blas"] = max(
            (pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=None
        )
        seen["numba"] = numba.get_num_threads()
        print(
            f"== {time.strftime('%Y-%m-%d %H:%M:%S')} {result['worker']} ({state}): "
            f"npcomp train --quiet {' '.join(command)}",
            flush=True,
        )
        if state == "resumable":
            status, message = _outcome(_resume, run_dir, resumed)
        else:
            status, message = _outcome(_train_afresh, options, run_dir, state == "started")
        if message is not None:
            print(f"npcomp train: error: {message}", flush=True)
    result.update(status=status, error=message)
    return result


def _train_afresh(options: dict, run_dir: str, overwrite: bool) -> int:
    from .sweep_jobs import config_of
    from .trained_run import train_run

    train_run(config_of(options), Path(run_dir), set(options), overwrite=overwrite, progress=False)
    return 0


def _resume(run_dir: str, resumed: dict) -> int:
    from .trained_run import resume_run

    resume_run(run_dir, resumed, progress=False)
    return 0


def _outcome(train, *arguments) -> tuple:
    """(0, None), or for a failure (its exit status, the message `npcomp
    train` prints, ``failures.failure``); with NPCOMP_TRACEBACK set the
    failure is raised, for Dask to report with its traceback."""
    from .failures import failure

    try:
        return train(*arguments), None
    except Exception as error:  # noqa: BLE001 - any failure of the run is the run's
        if os.environ.get("NPCOMP_TRACEBACK"):
            raise
        return failure(error)
