"""Carrying a sweep's runs out on Dask distributed: the client of a local
cluster or of an existing scheduler, the runs submitted to it and followed
with a progress bar, their results gathered, a run the cluster could not
carry out reported as such.

The runs go to a ``LocalCluster`` of worker processes bound to 127.0.0.1,
or to an existing scheduler (``tcp://HOST:PORT``) whose workers see the data
and SWEEP_DIR on a shared file system.  Faults:

* a run's task decides in its worker, from the run directory, whether to
  start, resume (a checkpoint exists: ``npcomp train --resume``) or skip it
  (finished), so a task resubmitted after its worker died continues from the
  run's latest dev evaluation, losing nothing finished; the scheduler
  resubmits it up to ``ALLOWED_FAILURES`` times;
* a run that fails (a bad setting, divergence) returns its error as a value,
  so it is reported and the other runs go on;
* re-running a sweep skips its finished runs (without starting a cluster when
  nothing is left) and resumes the others; then it settles the finished
  runs' files (``sweep_results.settle_finished``: paths relative, figure
  counts kept).
"""

from __future__ import annotations

import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass

from .scheduler import SCHEDULER_TIMEOUT, check_scheduler

# times the scheduler resubmits a run whose worker died before reporting it
# failed (Dask's distributed.scheduler.allowed-failures, set on a local cluster)
ALLOWED_FAILURES = 3


class ClusterError(ConnectionError):
    """The Dask scheduler stopped answering after it had answered as one."""


@contextmanager
def dask_client(scheduler: str | None = None, workers: int = 1, dashboard: str | None = None):
    """A ``distributed.Client``: of the existing scheduler at ``scheduler``,
    or of a new ``LocalCluster`` of ``workers`` processes, one task slot
    each, bound to 127.0.0.1 (the dashboard at ``dashboard`` if given, off
    otherwise), closed on leaving."""
    if scheduler:
        with _scheduler_client(scheduler) as client:
            yield client
    else:
        with _local_cluster_client(workers, dashboard) as client:
            yield client


@contextmanager
def _scheduler_client(scheduler: str):
    """A client of the existing Dask scheduler at ``scheduler``."""
    import logging

    from distributed import Client

    address = check_scheduler(scheduler)
    try:
        client = Client(address, timeout=f"{SCHEDULER_TIMEOUT:g}s")
    except (OSError, TimeoutError) as error:
        raise ClusterError(f"--scheduler {scheduler}: the Dask scheduler there stopped answering ({error})") from None
    # a lost scheduler is reported by the sweep, run by run: not by the
    # client's own log, with its traceback of each attempt to reconnect
    client_log = logging.getLogger("distributed.client")
    level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        yield client
    finally:
        client.close()
        client_log.setLevel(level)


@contextmanager
def _local_cluster_client(workers: int, dashboard: str | None):
    """A client of a new local cluster (127.0.0.1) of ``workers`` processes,
    closed with it on leaving."""
    import logging

    import dask
    from distributed import Client, LocalCluster

    # a run whose worker died is resubmitted ALLOWED_FAILURES times; a worker
    # holds one run at a time (Dask's default saturation, 1.1, lets a worker
    # of one thread take a second run, which may then wait there while
    # another worker is idle); the worker processes ignore Ctrl-C, which reaches
    # them from the terminal too: this process stops them, and they print no
    # traceback meanwhile
    with (
        dask.config.set(
            {"distributed.scheduler.allowed-failures": ALLOWED_FAILURES, "distributed.scheduler.worker-saturation": 1.0}
        ),
        _interrupts_ignored(),
    ):
        # without a dashboard the scheduler still serves its health check over
        # HTTP: on a free port of 127.0.0.1, not Dask's default 8787 (which a
        # second sweep would find taken, with a warning)
        try:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                scheduler_port=0,
                dashboard_address=dashboard,
                silence_logs=logging.ERROR,
                scheduler_kwargs=None if dashboard else {"dashboard_address": "127.0.0.1:0"},
            )
        except RuntimeError as error:
            raise RuntimeError(_unstarted_workers(error)) from error
    from .sweep_workers import CLOSING_LOGGERS, IgnoreInterrupts, quiet_closing

    levels = {name: logging.getLogger(name).level for name in CLOSING_LOGGERS}
    # as the sweep's own process is ended from outside, the cluster closes as on Ctrl-C
    with _terminations_as_interrupts():
        try:
            client = Client(cluster)
            try:
                # and so do the workers a nanny starts again after one died
                client.register_plugin(IgnoreInterrupts())
                yield client
            finally:
                # what is left to say has been said (every run reported): the
                # comms that break as the cluster closes print no traceback;
                # this process first, whose scheduler logs the broadcast to a
                # worker already gone (ended with this one by the same signal)
                quiet_closing()
                try:
                    client.run(quiet_closing)
                except Exception:  # noqa: BLE001 - a worker gone already says nothing either
                    pass
                client.close()
        finally:
            try:
                cluster.close()
            finally:
                for name, level in levels.items():
                    logging.getLogger(name).setLevel(level)


@contextmanager
def _interrupts_ignored():
    """SIGINT ignored while the local cluster starts its worker processes,
    which inherit that (in the main thread only: elsewhere Python cannot
    change a signal's handler)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill PID``, a job scheduler's time limit) while a sweep's
    local cluster runs: taken as Ctrl-C is, so the sweep stops its cluster,
    writes its results and says how to continue.  Killed outright instead,
    its worker processes would be left to notice on their own, and Python's
    resource tracker would warn of the semaphores their start left behind."""


@contextmanager
def _terminations_as_interrupts():
    """SIGTERM raises :class:`Terminated` in this process (main thread only);
    a second SIGTERM, while the cluster closes, ends the process at once."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(number, frame):
        signal.signal(signal.SIGTERM, previous)
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclass
class Tally:
    """Runs of this sweep by state, for the progress bar."""

    finished: int = 0
    failed: int = 0
    running: int = 0

    def text(self) -> str:
        return f"finished {self.finished}, running {self.running}, failed {self.failed}"


def execute(
    client, jobs: dict, progress: bool = True, already_finished: int = 0, total: int | None = None, echo=print
) -> dict:
    """Run the task of a run (``sweep_task.train_in_worker(*arguments)``) for
    each run name -> arguments of ``jobs`` on the cluster of ``client``
    (``sweep_jobs.sweep_jobs`` makes them); name -> the task's result (a dict with
    ``status``, 0 when the run finished, and ``error``), or {"status": 1,
    "error": ...} for a run the cluster could not carry out (its worker died
    ALLOWED_FAILURES times).  A progress bar over the runs shows finished,
    running and failed ones and the time left.  On KeyboardInterrupt the
    runs are cancelled and the workers running them restarted (an existing
    cluster keeps going for others), then the interrupt goes on."""
    from distributed import as_completed

    from .sweep_task import train_in_worker

    token = uuid.uuid4().hex[:8]
    futures = {
        client.submit(train_in_worker, *arguments, key=f"npcomp-run-{name}-{token}", pure=False): name
        for name, arguments in jobs.items()
    }
    tally = Tally(finished=already_finished)
    bar = _progress_bar(total or len(jobs), already_finished, progress)
    results = {}
    try:
        completed = as_completed(futures)
        last_poll = 0.0
        while len(results) < len(futures):
            for future in completed.next_batch(block=False):
                name = futures[future]
                results[name] = _result(future)
                if results[name]["status"] == 0:
                    tally.finished += 1
                else:
                    tally.failed += results[name]["status"] is not None
                    message = (
                        f"{name} failed: {results[name]['error']}"
                        if results[name]["status"] is not None
                        else f"{name} stopped: {results[name]['stopped']}"
                    )
                    echo(message) if bar is None else bar.write(message)
                if bar is not None:
                    tally.running = max(tally.running - 1, 0)
                    bar.set_description_str(f"sweep: {tally.text()}", refresh=False)
                    bar.update(1)
            if time.monotonic() - last_poll > 1.0:
                last_poll = time.monotonic()
                tally.running = _running(client, futures, results)
                if bar is not None:
                    bar.set_description_str(f"sweep: {tally.text()}", refresh=True)
            if len(results) < len(futures):
                time.sleep(0.2)
    except BaseException:
        _stop(client, futures, results)
        raise
    finally:
        if bar is not None:
            bar.close()
    return results


def _result(future) -> dict:
    """A finished future's result, or the failure that ended it: status 1
    and its error; status None and why it ``stopped`` for a run the cluster
    dropped (its scheduler lost), which stays resumable."""
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - any failure of one run is that run's
        from distributed.client import FutureCancelledError
        from distributed.scheduler import KilledWorker

        if isinstance(error, FutureCancelledError):
            why = (
                "the scheduler stopped answering"
                if error.reason == "scheduler-connection-lost"
                else f"the cluster cancelled it ({error.reason})"
            )
            return {
                "status": None,
                "error": None,
                "stopped": f"{why}; it goes on (from its checkpoint, if it has one) when the sweep is run again",
            }
        if isinstance(error, KilledWorker):
            return {
                "status": 1,
                "error": "its workers died while training it more often "
                "than the scheduler allows (Dask's allowed failures, 3 unless configured); "
                "it resumes from its checkpoint when the sweep is run again",
            }
        return {"status": 1, "error": f"{type(error).__name__}: {error}"}


def _running(client, futures: dict, results: dict) -> int:
    """How many of the runs under way are running: the workers processing
    one (a worker of one thread, as a sweep's are, runs one task at a time;
    the scheduler may have sent it others to run next)."""
    keys = {future.key for future, name in futures.items() if name not in results}
    try:
        processing = client.processing()
    except Exception:  # noqa: BLE001 - the count is for the progress bar only
        return 0
    return sum(bool(keys.intersection(tasks)) for tasks in processing.values())


def _stop(client, futures: dict, results: dict) -> None:
    """Cancel the runs not done and restart the workers running them, so no
    run goes on training unseen (a run stopped so keeps its checkpoint)."""
    keys = {future.key for future, name in futures.items() if name not in results}
    try:
        busy = [worker for worker, tasks in client.processing().items() if keys.intersection(tasks)]
        client.cancel(list(futures))
        if busy and not hasattr(client.cluster, "workers"):
            # an existing cluster: only the workers busy with this sweep's runs
            client.restart_workers(busy)
    except Exception:  # noqa: BLE001 - stopping is best effort; a local cluster closes anyway
        pass


def _progress_bar(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    import sys

    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc="sweep",
        unit="run",
        dynamic_ncols=True,
        mininterval=0.5 if sys.stderr.isatty() else 10.0,
        bar_format="{desc} |{bar}| {n_fmt}/{total_fmt} runs done [{elapsed} elapsed, {remaining} left]",
    )


def _unstarted_workers(error: RuntimeError) -> str:
    """Why the local cluster's worker processes may not have started: each
    imports the script that started the sweep, and a script whose sweep is
    not under ``if __name__ == "__main__":`` runs it again there."""
    import __main__

    script = getattr(__main__, "__file__", None)
    hint = (
        f" {script} is imported again by each worker process: start the sweep "
        'under `if __name__ == "__main__":` there (see the error above it)'
        if script and not script.endswith(("npcomp", "__main__.py"))
        else ""
    )
    return f"the local cluster's worker processes did not start ({error}).{hint}"
