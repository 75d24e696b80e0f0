"""Shards of a minibatch on helper processes: the same computation as on
helper threads (shards.py), without the GIL between them.

A shard's pass calls a few hundred compiled kernels and matrix products,
each of which releases and takes back the GIL.  Two threads computing at
once hand the GIL to each other at every call, and on a 2-core machine the
hand-overs cost a quarter of a shard's time (``bench/bench_scaling.py``
measures it: two processes each run at their full one-thread speed, two
threads do not).  A helper process has an interpreter of its own.

The helpers are forked from the training process once its kernels are
compiled, so they hold its model and code; the parameters and the helpers'
gradient buffers live in memory shared with them (``share``).  Each step
the training process sends each helper its shard (the forest, its trees and
its dropout masks, all drawn by the training process as shards.py says),
computes shard 0 itself, then lets the helpers add their gradients into
shard 0's buffer (shared too), one after the other in shard order, and reads
back each helper's loss and embedding rows.  A helper adds its gradient
while the training process cuts the next minibatch (shards.py), so the sum
of two shards costs the training process nothing.  The dropout masks go
through memory each helper shares too (``MaskMemory``), the forest alone
through the pipe: a message under the pipe's buffer (64 KiB on Linux) is
written at once, where a shard's masks (hundreds of KiB) through the pipe
made the training process wait for the helper to read them.  A helper computes
exactly what a thread would, so a run's numbers are the same, bit for bit,
on threads, on processes or on one thread.

Helpers are forked on Linux, by a process allowed to have children (a Dask
worker's processes are daemons, which may not): ``can_fork`` says whether
they can run here; where they cannot, shards.py uses threads.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import signal
import sys

import numpy as np

from npcomp.models import DropoutMasks
from .finite_outputs import naming_the_sentence
from npcomp.params import Parameters

# bytes of dropout masks a helper's shared memory holds; a shard whose masks
# need more sends them through the pipe (pages are only used once written)
MASK_BYTES = 16 << 20


def can_fork() -> bool:
    """Whether this process can fork helper processes: on Linux (forking a
    process that has used macOS's system libraries is not safe), outside a
    daemon process such as a Dask worker's."""
    return (
        sys.platform.startswith("linux")
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


def share(params: Parameters) -> Parameters:
    """A copy of ``params`` in memory that processes forked later share
    (an anonymous shared mapping)."""
    size = max(params.flat.nbytes, 1)
    buffer = mmap.mmap(-1, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    flat = np.frombuffer(buffer, dtype=params.flat.dtype, count=params.flat.shape[0])
    flat[...] = params.flat
    return Parameters(params.layout, flat=flat)


def is_shared(params: Parameters) -> bool:
    """Whether ``params`` is a copy ``share`` made."""
    return isinstance(getattr(params.flat.base, "obj", None), mmap.mmap)


def add_and_zero(total: Parameters, buffer: Parameters, rows: np.ndarray, dense: int) -> None:
    """total += buffer on the dense parameters (the first ``dense`` entries)
    and on the embedding ``rows`` buffer's shard read, then those of buffer
    zeroed: a shard's gradient added into the sum (shards.py), its buffer
    left zero for the next minibatch."""
    total.flat[:dense] += buffer.flat[:dense]
    total["embedding"][rows] += buffer["embedding"][rows]
    zero_rows(buffer, rows, dense)


def zero_rows(buffer: Parameters, rows: np.ndarray, dense: int) -> None:
    """buffer's dense parameters and embedding ``rows`` set to 0."""
    buffer.flat[:dense] = 0.0
    buffer["embedding"][rows] = 0.0


class MaskMemory:
    """Memory a helper shares with the training process, where the training
    process writes a shard's dropout masks before sending the shard: ``pack``
    copies them in and returns what to send instead (a description of each
    mask), ``unpack`` (in the helper) gives the masks back as views of the
    memory, valid until the next shard.  Masks larger than the memory are
    sent as they are."""

    ALIGN = 64

    def __init__(self, size: int = MASK_BYTES):
        self.memory = mmap.mmap(-1, size, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self.size = size

    def pack(self, masks: DropoutMasks):
        """``masks`` described by (offset, shape, dtype) in this memory, or
        themselves when they do not fit (or there are none)."""
        if masks is None:
            return None
        arrays = [masks.embedding, *masks.classifier, *(masks.recurrent or [])]
        needed = sum(-(-array.nbytes // self.ALIGN) * self.ALIGN for array in arrays if array is not None)
        if needed > self.size:
            return masks
        offset, described = 0, []
        for array in arrays:
            if array is None:
                described.append(None)
                continue
            view = np.ndarray(array.shape, array.dtype, buffer=self.memory, offset=offset)
            view[...] = array
            described.append((offset, array.shape, array.dtype.str))
            offset += -(-array.nbytes // self.ALIGN) * self.ALIGN
        return ("packed", len(masks.classifier), masks.recurrent is not None, described)

    def unpack(self, sent):
        """The masks ``pack`` described (views of this memory), or ``sent``
        itself when it is the masks."""
        if not (isinstance(sent, tuple) and sent and sent[0] == "packed"):
            return sent
        _, classifiers, recurrent, described = sent
        arrays = [
            None if entry is None else np.ndarray(entry[1], np.dtype(entry[2]), buffer=self.memory, offset=entry[0])
            for entry in described
        ]
        return DropoutMasks(arrays[1 : 1 + classifiers], arrays[0], arrays[1 + classifiers :] if recurrent else None)


class ShardProcessError(RuntimeError):
    """A helper process stopped, or failed in a way that cannot be sent back."""


class HelperStopped(ShardProcessError):
    """A helper process died in the middle of a step (killed, or out of
    memory): the step failed.  ``helper``: which (1..), ``pid``, and
    ``exitcode`` as ``multiprocessing`` gives it (-N: killed by signal N;
    None: still running, but its pipe is closed)."""

    def __init__(self, helper: int, pid: int | None, exitcode: int | None):
        self.helper, self.pid, self.exitcode = helper, pid, exitcode
        super().__init__(
            f"helper process {helper} (pid {pid}, computing shard {helper} of each minibatch) {_how_it_ended(exitcode)}"
        )


def _how_it_ended(exitcode: int | None) -> str:
    """How a process with this ``multiprocessing`` exit code ended, in words."""
    if exitcode is None:
        return "closed its pipe while still running"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name} (signal {-exitcode})"
    return f"exited with status {exitcode}"


class ShardProcesses:
    """``count`` helper processes computing shards of ``model`` at the shared
    ``params``, shard k into ``buffers[k]`` (all shared; ``buffers[0]``, the
    sum, is the training process's own).  ``compute`` runs a step's shards.  ``private``:
    file descriptors the helpers close at once (a run directory's lock, which
    a helper's copy would hold after the run has let it go); ``mask_bytes``:
    each helper's memory for dropout masks (``MaskMemory``)."""

    def __init__(
        self, model, params: Parameters, buffers: list, count: int, private: tuple = (), mask_bytes: int = MASK_BYTES
    ):
        for shared in [params] + buffers:
            if not is_shared(shared):
                raise ValueError(
                    "helper processes read the parameters and write the "
                    "gradients in shared memory: pass them through share()"
                )
        self.model = model
        self.params = params
        self.private = tuple(private)
        self.buffers = buffers
        self.mask_memories = [MaskMemory(mask_bytes) for _ in range(count)]
        context = multiprocessing.get_context("fork")
        self.connections = []
        self.processes = []
        for helper in range(count):
            parent_end, child_end = context.Pipe()
            process = context.Process(
                target=self._serve, args=(child_end, parent_end, helper), daemon=True, name="npcomp-shards"
            )
            process.start()
            child_end.close()
            self.connections.append(parent_end)
            self.processes.append(process)

    def _serve(self, connection, parent_end, helper: int) -> None:
        """A helper's loop: each message a shard to compute, None to stop.
        After a shard, a second message: "add" (the shards before it are
        summed into buffers[0]: add this one's gradient) or "zero" (the step
        failed: leave the buffer zero); then the reply."""
        parent_end.close()
        # the training process's ends of the helpers forked before this one:
        # held here, they would keep those helpers from seeing it end
        for earlier in self.connections:
            earlier.close()
        for descriptor in self.private:
            os.close(descriptor)
        # ctrl-C reaches the whole process group: the training process
        # decides what it means and stops its helpers
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            job = _received(connection)
            if job is None:  # stop, or the training process is gone
                break
            k, batch, masks, *rest = job
            try:
                reply = ("done", self._pass(k, batch, self.mask_memories[helper].unpack(masks), *rest))
            except BaseException as error:  # sent back whole, raised there
                reply = ("error", error)
            order = _received(connection)
            if order is None:  # closed mid-step (the training process was interrupted or died)
                break
            try:
                self._leave_zero(k, reply, order == "add")
            except BaseException as error:
                reply = ("error", error)
            if not _sent(connection, reply):
                break
        connection.close()
        os._exit(0)  # nothing of the training process's to clean up here

    def _leave_zero(self, k: int, reply: tuple, add: bool) -> None:
        """Shard k's buffer added into buffers[0] (``add``, after a pass that
        succeeded) and zeroed, or only zeroed: all of it after a failed pass,
        whose rows are unknown."""
        buffer = self.buffers[k]
        if reply[0] != "done":
            buffer.flat[:] = 0.0
        elif add:
            add_and_zero(self.buffers[0], buffer, reply[1][1], self.model.dense_size)
        else:
            zero_rows(buffer, reply[1][1], self.model.dense_size)

    def _pass(self, k: int, batch, masks, average: str, normaliser: int, errors: dict) -> tuple:
        with np.errstate(**errors):
            return self.model.loss_and_gradient(
                self.params,
                batch,
                self.buffers[k],
                masks=masks,
                average=average,
                l2=0.0,
                accumulate=True,
                normaliser=normaliser,
            )

    def compute(self, shards: list, local_pass, average: str, normaliser: int, errors: dict, meanwhile=None) -> list:
        """[(J_k, rows_k)] of every shard: shards 1.. sent to the helpers in
        turn, shard 0 by ``local_pass(0)`` here meanwhile, shards no helper
        takes (more shards than helpers + 1) here after it.  Then the helpers
        add their gradients into buffers[0] one after the other, in shard
        order, while ``meanwhile()`` (if given) runs here; the gradients of
        the shards computed here after shard 0 are left in their own buffers
        for the caller to add after the helpers' (``helped``).  The first
        exception of any shard (or of ``meanwhile``) is raised once every
        shard has finished, every living helper's buffer left zero.

        A helper that dies at any point of the step (before its shard
        reaches it, during its pass, while it adds into the sum) fails the
        step with ``HelperStopped`` naming it and how it ended; the sum in
        buffers[0] is then unusable (an addition cut short), the
        parameters untouched."""
        sent, results, failure = [], {}, None
        for k in range(1, 1 + self.helped(len(shards))):
            # the trees stay here (slow to send): they only name a
            # sentence whose state overflows, which happens here too
            masks = self.mask_memories[k - 1].pack(shards[k].masks)
            try:
                self.connections[k - 1].send((k, shards[k].batch, masks, average, normaliser, errors))
            except (EOFError, OSError):  # broken or reset: the helper is gone
                failure = self._stopped(k)
                break
            sent.append(k)
        if failure is None:
            try:
                results[0] = local_pass(0)
                for k in range(len(sent) + 1, len(shards)):
                    results[k] = local_pass(k)
            except BaseException as error:
                failure = error
        for position, k in enumerate(sent):
            # shards 0..k-1 are summed: helper k adds its own, unless a shard failed
            if not self._ordered(k, "zero" if failure is not None else "add"):
                failure = failure or self._stopped(k)
            if position == 0 and meanwhile is not None and failure is None:
                try:
                    meanwhile()
                except BaseException as error:
                    failure = error
            try:
                status, value = self.connections[k - 1].recv()
            except (EOFError, OSError):  # gone: closed, or reset after an order it missed
                status, value = "error", self._stopped(k)
            if status == "error":
                failure = failure or _naming_the_sentence(value, shards[k].trees)
            else:
                results[k] = value
        if not sent and meanwhile is not None and failure is None:
            meanwhile()
        if failure is not None:
            raise failure
        return [results[k] for k in range(len(shards))]

    def helped(self, count: int) -> int:
        """How many shards after shard 0 of a ``count``-shard minibatch the
        helpers compute and add into the sum themselves (``compute``)."""
        return min(count - 1, len(self.connections))

    def _ordered(self, k: int, order: str) -> bool:
        """Tell the helper computing shard k to "add" or "zero"; False if it is gone."""
        try:
            self.connections[k - 1].send(order)
        except (EOFError, OSError):
            return False
        return True

    def _stopped(self, k: int) -> HelperStopped:
        """The error of helper k, whose pipe broke: how it ended, once it has
        (its pipe closes as it dies, an instant before it can be waited for)."""
        process = self.processes[k - 1]
        process.join(timeout=5)
        return HelperStopped(k, process.pid, process.exitcode)

    def close(self) -> None:
        """Stop the helpers and wait for them."""
        for connection in self.connections:
            try:
                connection.send(None)
            except (EOFError, OSError):  # a helper already gone
                pass
        for process, connection in zip(self.processes, self.connections):
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
            connection.close()
        self.connections, self.processes = [], []


def _received(connection):
    """The training process's next message to a helper, or None when it has
    gone: the pipe at its end (EOF), or reset (it died, killed or
    terminated, with a reply of the helper's unread), which ends the helper
    quietly, without a traceback."""
    try:
        return connection.recv()
    except (EOFError, OSError):
        return None


def _sent(connection, reply: tuple) -> bool:
    """Send ``reply``, an error that cannot be pickled as a ShardProcessError
    naming it; False when the training process is gone."""
    try:
        try:
            connection.send(reply)
        except (EOFError, OSError):
            raise
        except Exception:  # pickling failed before anything was written
            connection.send(("error", ShardProcessError(f"a shard failed in a helper process: {reply[1]!r}")))
    except (EOFError, OSError):  # broken or reset: the training process is gone
        return False
    return True


def _naming_the_sentence(error: BaseException, trees: list) -> BaseException:
    """``error`` of a helper's shard as the shard's pass here would have
    raised it: a state overflow names the sentence of ``trees`` it came from."""
    try:
        with naming_the_sentence(trees):
            raise error
    except BaseException as named:
        return named
