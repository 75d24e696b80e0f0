"""What the worker processes of a sweep's local Dask cluster
(``sweep_cluster.py``) run as they start: they ignore Ctrl-C.  The terminal
sends SIGINT to every process of the command, workers included; the sweep's
own process stops the cluster, and a worker that died of the signal first
would print a traceback and count as a failure of its run."""

from __future__ import annotations

import signal
import threading

from distributed.diagnostics.plugin import WorkerPlugin


class IgnoreInterrupts(WorkerPlugin):
    """A worker plugin: the worker process ignores SIGINT."""

    name = "npcomp-ignore-interrupts"

    def setup(self, worker):
        # a signal's handler can be set from the main thread only, where
        # the worker's event loop (and so this call) runs
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


# the loggers of a cluster whose comms break as it closes: a worker's
# heartbeat that meets the scheduler gone, the client's stream, the event loop
CLOSING_LOGGERS = ("distributed", "tornado", "asyncio")


def quiet_closing() -> None:
    """Run in each worker process (``Client.run``) and in the sweep's own
    process just before the cluster closes: the sweep is over and has
    reported every run, so a comm that breaks as the scheduler and the
    workers stop one after the other (a ``CommClosedError`` in a worker's
    heartbeat) is logged to no one, without a traceback."""
    import logging

    for name in CLOSING_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
