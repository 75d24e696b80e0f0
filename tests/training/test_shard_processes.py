"""Shards on helper processes (npcomp/training/shard_processes.py): the same
numbers as on one thread; a shard's error in a helper comes back naming its
sentence; a helper that dies is reported; the helpers stop when closed."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gradcheck.suite import settings
from npcomp.cells.kernels.overflow import StateOverflow
from npcomp.training.finite_outputs import NonFiniteOutput
from npcomp.training.shard_processes import HelperStopped, can_fork, share
from npcomp.training.shards import ShardedGradient
from test_shards import sharded_case

pytestmark = pytest.mark.skipif(not can_fork(), reason="this process cannot fork helpers")


def _case():
    setting = next(setting for setting in settings("treelstm-nary") if setting.head != "similarity")
    model, params, _, split = sharded_case(setting)
    return model, params.astype(np.float32), split


def _sharded(model, params, count: int = 3, helpers: int = 2):
    sharded = ShardedGradient(model, params.zeros_like(), count)
    shared = share(params)
    sharded.use_processes(shared, helpers)
    return sharded, shared, sharded.grads


@pytest.mark.parametrize("count,helpers", [(3, 2), (3, 1), (2, 1)])
def test_helper_processes_give_the_numbers_of_one_thread_bit_for_bit(count, helpers):
    """Whether the helpers add every shard but the first into the sum, in
    turn, or a shard computed here after shard 0 is added after theirs."""
    model, params, split = _case()
    grads = params.zeros_like()
    alone = ShardedGradient(model, grads, count)
    loss, rows = alone.loss_and_gradient(params, alone.shards_of(params, split, np.arange(len(split))))
    sharded, shared, shared_grads = _sharded(model, params, count, helpers)
    try:
        for _ in range(2):  # the buffers are left zero for the next step
            shards = sharded.shards_of(shared, split, np.arange(len(split)))
            assert len(shards) == count and sharded.processes.helped(count) == helpers
            shared_loss, shared_rows = sharded.loss_and_gradient(shared, shards)
            assert shared_loss == loss and np.array_equal(shared_rows, rows)
            assert np.array_equal(shared_grads.flat, grads.flat)
            assert all(not buffer.flat.any() for buffer in sharded.buffers[1:])
            shared_grads.flat[:] = 0.0
        # the helpers read the parameters as they are now
        shared.flat *= 0.5
        params.flat *= 0.5
        grads.flat[:] = 0.0
        loss, _ = alone.loss_and_gradient(params, alone.shards_of(params, split, np.arange(len(split))))
        moved, _ = sharded.loss_and_gradient(shared, sharded.shards_of(shared, split, np.arange(len(split))))
        assert moved == loss and np.array_equal(shared_grads.flat, grads.flat)
    finally:
        processes = sharded.processes.processes
        sharded.close()
    assert not any(process.is_alive() for process in processes)


def test_an_overflow_in_a_helper_names_its_sentence(monkeypatch):
    model, params, split = _case()
    parent = os.getpid()
    original = type(model).loss_and_gradient

    def overflowing_in_helpers(self, *args, **kwargs):
        if os.getpid() != parent:
            raise StateOverflow("a cell state beyond the float32 range", tree=1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "loss_and_gradient", overflowing_in_helpers)
    for position, tree in enumerate(split.trees):
        tree.source = f"made-up.txt:{position + 1}"
    sharded, shared, _ = _sharded(model, params)
    try:
        shards = sharded.shards_of(shared, split, np.arange(len(split)))
        with pytest.raises(NonFiniteOutput) as caught:
            sharded.loss_and_gradient(shared, shards)
        # shard 1's second sentence, the first shard a helper computed
        assert str(caught.value).startswith(shards[1].trees[1].source + ": a cell state")
    finally:
        sharded.close()


@pytest.mark.parametrize("where", ["helper", "here"])
def test_after_a_failed_step_the_helpers_buffers_are_zero_and_the_next_step_is_exact(where, monkeypatch, tmp_path):
    """A shard that fails, in a helper or here: the step raises, every
    helper's buffer is left zero (nothing half-added), and the next step
    gives the numbers of one thread, bit for bit (the helpers still answer
    the step they are asked)."""
    model, params, split = _case()
    alone = ShardedGradient(model, params.zeros_like(), 3)
    loss, rows = alone.loss_and_gradient(params, alone.shards_of(params, split, np.arange(len(split))))
    parent = os.getpid()
    once = tmp_path / "fail once"
    once.touch()
    original = type(model).loss_and_gradient

    def failing_once(self, *args, **kwargs):
        if (os.getpid() != parent) == (where == "helper") and once.exists():
            if where == "here":
                once.unlink()
            else:  # the helpers compute more of their gradients before failing
                result = original(self, *args, **kwargs)
                try:
                    once.unlink()
                except FileNotFoundError:
                    return result
            raise RuntimeError("a shard failed")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "loss_and_gradient", failing_once)
    sharded, shared, shared_grads = _sharded(model, params)
    try:
        with pytest.raises(RuntimeError, match="a shard failed"):
            sharded.loss_and_gradient(shared, sharded.shards_of(shared, split, np.arange(len(split))))
        assert not once.exists()
        assert all(not buffer.flat.any() for buffer in sharded.buffers[1:])
        shared_grads.flat[:] = 0.0  # the caller's step failed: its buffer is its own
        again, again_rows = sharded.loss_and_gradient(shared, sharded.shards_of(shared, split, np.arange(len(split))))
        assert again == loss and np.array_equal(again_rows, rows)
        assert np.array_equal(shared_grads.flat, alone.grads.flat)
    finally:
        sharded.close()


def test_helpers_closed_in_the_middle_of_a_step_stop_at_once():
    """A step interrupted after its shard went to the helper (ctrl-C in the
    training process): ``close`` finds the helper waiting for its order and
    stops it at once, without waiting out its time or killing it."""
    import time

    model, params, split = _case()
    sharded, shared, _ = _sharded(model, params, count=2, helpers=1)
    shards = sharded.shards_of(shared, split, np.arange(len(split)))
    processes = sharded.processes
    processes.connections[0].send(
        (1, shards[1].batch, processes.mask_memories[0].pack(shards[1].masks), "sentences", 10, np.geterr())
    )
    time.sleep(0.5)  # the helper has computed its shard and waits for the order
    tick = time.perf_counter()
    helper = processes.processes[0]
    sharded.close()
    assert time.perf_counter() - tick < 5.0 and helper.exitcode == 0


def test_a_helper_that_dies_is_reported_with_its_exit_code(monkeypatch):
    model, params, split = _case()
    parent = os.getpid()
    original = type(model).loss_and_gradient

    def dying_in_helpers(self, *args, **kwargs):
        if os.getpid() != parent:
            os._exit(7)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "loss_and_gradient", dying_in_helpers)
    sharded, shared, _ = _sharded(model, params, count=2, helpers=1)
    try:
        shards = sharded.shards_of(shared, split, np.arange(len(split)))
        with pytest.raises(HelperStopped, match=r"helper process 1 .* exited with status 7"):
            sharded.loss_and_gradient(shared, shards)
    finally:
        sharded.close()


def test_helpers_need_the_parameters_in_shared_memory():
    model, params, _ = _case()
    sharded = ShardedGradient(model, params.zeros_like(), 2)
    with pytest.raises(ValueError, match="share"):
        sharded.use_processes(params, 1)


def test_helpers_close_the_run_directorys_lock(tmp_path):
    """A helper forked while the run holds its directory's flock closes its
    copy: the lock goes with the run, even while the helper lives on."""
    import fcntl

    model, params, split = _case()
    for private in (False, True):
        handle = open(tmp_path / ".lock", "a")
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        sharded = ShardedGradient(model, params.zeros_like(), 2)
        shared = share(params)
        sharded.use_processes(shared, 1, (handle.fileno(),) if private else ())
        try:
            # a shard computed: the helper is past its start, where it closes them
            sharded.loss_and_gradient(shared, sharded.shards_of(shared, split, np.arange(len(split))))
            handle.close()  # the run lets its lock go; its helper is still there
            other = open(tmp_path / ".lock", "a")
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                taken = True
            except OSError:
                taken = False
            other.close()
            assert taken == private
        finally:
            sharded.close()


def test_a_shards_masks_go_through_shared_memory_and_come_back_equal():
    """What the pipe carries is a description under its buffer; the helper's
    views hold the masks; masks larger than the memory are sent whole."""
    import pickle

    from npcomp.models import DropoutMasks
    from npcomp.training.shard_processes import MaskMemory

    rng = np.random.default_rng(0)
    masks = DropoutMasks(
        [rng.random((300, 150), dtype=np.float32), None],
        rng.random((25, 300)).astype(np.float32),
        [rng.random((25, 150), dtype=np.float32)],
    )
    memory = MaskMemory(1 << 20)
    sent = memory.pack(masks)
    assert len(pickle.dumps(sent)) < 1024 < len(pickle.dumps(masks))
    back = memory.unpack(pickle.loads(pickle.dumps(sent)))
    assert back.classifier[1] is None and back.embedding.dtype == np.float32
    for ours, theirs in [
        (back.embedding, masks.embedding),
        (back.classifier[0], masks.classifier[0]),
        (back.recurrent[0], masks.recurrent[0]),
    ]:
        assert ours.shape == theirs.shape and np.array_equal(ours, theirs)
    without = DropoutMasks([masks.classifier[0]])
    assert memory.unpack(memory.pack(without)).recurrent is None
    assert memory.pack(None) is None and memory.unpack(None) is None
    small = MaskMemory(64 * 1024)
    assert small.pack(masks) is masks and small.unpack(masks) is masks
