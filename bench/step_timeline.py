"""Where the wall time of a training step on two threads goes: the parts a
step computes one after the other, against the shard each process computes
at once.

    python bench/step_timeline.py [--data-dir DIR] [--minibatches M] [--model treelstm-nary]
                                  [--rounds R] [--without-look-ahead]
                                  [--json FILE]

The setting of ``bench_torch_cells.py`` (the Constituency Tree-LSTM by
default: Tai et al.'s d = 150, 300-d random word vectors, dropout 0.5;
minibatch 25, AdaGrad, lambda 1e-4, float32), each minibatch in 2 shards,
shard 1 on a helper process as ``npcomp train --threads 2`` computes it
where it can fork.  For ``M`` minibatches it prints the wall time of a
step and, per step, the time the training process spends

* cutting a minibatch into shards: building their forests and drawing
  their dropout masks (``ShardedGradient.shards_of``); as ``npcomp
  train`` does, each step cuts the next minibatch after its own shard 0
  and before it waits for the helper's, so this time overlaps the helper's
  pass;
* sending shard 1 to the helper (its forest pickled through a pipe, its
  dropout masks copied into memory the helper shares);
* computing shard 0 (its forward and backward);
* waiting for the helper's shard (what is left of its pass once the next
  minibatch is cut) and reading its reply;
* summing the shards' gradients (``_sum_gradients``);
* the optimiser's update;

and the time the helper spends computing shard 1 (its forward and
backward, from the shard received to the reply), which the training
process waits on beyond its own pass for the hand-over: the shard pickled,
sent and read before, the reply after.

With ``--without-look-ahead`` each round times the same steps twice,
alternating: as ``npcomp train`` takes them, and cutting each minibatch in
its own step instead (before sending shard 1, while the helper waits), and
prints the ratio of their step times.

Everything but shard 0's pass and the cutting is time in which the
training process does not compute a shard while the helper does: while it
sends, sums and updates, the helper waits, and while it waits the helper
still computes.  The step on one
thread computes both shards and the same serial parts, so these figures
bound what two threads can gain.  It times methods of npcomp's own classes
by wrapping them in this process; the training loop's checks of the
gradients and the optimiser's state (``step.train_step``) are not part
of the step timed here.  A benchmark, not a test: run it with nothing else
running.
"""

from __future__ import annotations

import statistics
import sys
import time

from harness import (
    adagrad,
    as_npcomp_trains,
    initial_parameters,
    load_sst,
    minibatches,
    option_parser,
    parse_options,
    set_up_process,
    training_step,
    write_results,
)

from bench_torch_cells import BATCH_SIZE, EMBEDDING_LR, L2, LR, OPTIONS, settings

DIM = 100  # d = d_x of every cell but treelstm-nary, as bench_torch_cells.py's default
PARTS = (
    "cutting into shards",
    "sending shard 1",
    "computing shard 0",
    "waiting for shard 1",
    "summing the gradients",
    "the optimiser's update",
)
HELPER = "the helper's shard 1"  # its pass, timed in the helper process


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    parser.add_argument("--minibatches", type=int, default=200, help="minibatches timed per round (default 200)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    parser.add_argument("--model", default="treelstm-nary")
    parser.add_argument(
        "--without-look-ahead",
        action="store_true",
        help="each round also times the same steps cutting each minibatch in "
        "its own step, not during the step before (alternating)",
    )
    args = parse_options(parser, argv)
    set_up_process(override_blas_threads=True)

    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.models import TreeModel
    from npcomp.training.shard_processes import can_fork

    if not can_fork():
        print("helper processes cannot be forked here: nothing to time")
        return 1
    _, vocab, train = load_sst(args.data_dir)
    labels = [tree.label for tree in train.trees]
    _, batches = minibatches(np.random.default_rng(1), len(train), (args.minibatches + 1) * BATCH_SIZE, BATCH_SIZE)
    setting = settings(args.model, DIM)
    cell = make_cell(args.model, setting["input_dim"], setting["hidden_dim"], **OPTIONS.get(args.model, {}))
    model = TreeModel(cell, 5, len(vocab), setting["input_dim"])
    start = initial_parameters(model, np.random.default_rng(1), np.float32)
    print(
        f"{args.model}, {len(batches) - 1} SST minibatches of {BATCH_SIZE}, 2 shards, "
        f"shard 1 on a helper process; milliseconds a step, wall time"
    )
    clock = StepClock()
    rounds = []
    ways = (True, False) if args.without_look_ahead else (True,)

    def timed_round(look_ahead: bool) -> dict:
        params, _ = as_npcomp_trains(start.copy(), 2, 2)
        step = training_step(
            model,
            params,
            adagrad(model, LR, EMBEDDING_LR, np.float32),
            train,
            labels,
            shards=2,
            rng=np.random.default_rng(2),
            dropout=setting["dropout"],
            l2=L2,
            threads=2,
            processes=True,
        )
        step(batches[0])  # the helper's first shard loads its kernels
        clock.spent.clear()
        clock.helper[:] = 0.0
        timed_batches = batches[1:]
        tick = time.perf_counter()
        for k, indices in enumerate(timed_batches):  # as npcomp train: the next cut ahead
            following = timed_batches[k + 1] if k + 1 < len(timed_batches) else None
            step(indices, following if look_ahead else None)
        seconds = time.perf_counter() - tick
        step.close()
        count = len(timed_batches)
        record = {"look_ahead": look_ahead, "step_ms": 1000 * seconds / count}
        record.update({part: 1000 * clock.spent.get(part, 0.0) / count for part in PARTS})
        record[HELPER] = 1000 * clock.helper[0] / max(clock.helper[1], 1)
        return record

    with clock.installed():
        for _ in range(args.rounds):
            rounds += [timed_round(look_ahead) for look_ahead in ways]
    _print(rounds)
    write_results(args.json, {"model": args.model, "minibatches": len(batches) - 1, "rounds": rounds})
    return 0


def _print(rounds: list) -> None:
    both = not all(record["look_ahead"] for record in rounds)
    width = 16 if both else 10
    labels = [
        f"round {k // (2 if both else 1) + 1}" + ((" ahead" if record["look_ahead"] else " own") if both else "")
        for k, record in enumerate(rounds)
    ]
    print(f"  {'':<24}" + "".join(f"{label:>{width}}" for label in labels))
    for record in rounds:
        record["outside shard 0"] = record["step_ms"] - record["computing shard 0"]
    for part in ("step_ms", *PARTS, HELPER, "outside shard 0"):
        label = {"step_ms": "the step", "outside shard 0": "all but shard 0"}.get(part, part)
        print(f"  {label:<24}" + "".join(f"{record[part]:{width}.2f}" for record in rounds))
    if both:
        ratios = [own["step_ms"] / ahead["step_ms"] for ahead, own in zip(rounds[::2], rounds[1::2])]
        print(
            f"  a step without the look-ahead / with it: {statistics.median(ratios):.3f} "
            f"(rounds {', '.join(f'{ratio:.3f}' for ratio in ratios)})"
        )


class StepClock:
    """Wall time spent in parts of a step (``PARTS``), by wrapping the
    methods that compute them while ``installed``."""

    def __init__(self):
        import mmap

        import numpy as np

        self.spent = {}
        # the helper's seconds and passes, in memory the forked helper shares
        memory = mmap.mmap(-1, 16, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self.helper = np.frombuffer(memory, dtype=np.float64, count=2)

    def _add(self, part: str, seconds: float) -> None:
        self.spent[part] = self.spent.get(part, 0.0) + seconds

    def timing(self, function, part: str):
        def timed(*args, **kwargs):
            tick = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._add(part, time.perf_counter() - tick)

        return timed

    def installed(self):
        from contextlib import contextmanager

        from npcomp.training.optimizers import Optimizer
        from npcomp.training.shard_processes import ShardProcesses
        from npcomp.training.shards import ShardedGradient

        clock = self
        replaced = [
            (ShardedGradient, "shards_of", "cutting into shards"),
            (ShardedGradient, "_sum_gradients", "summing the gradients"),
            (Optimizer, "step", "the optimiser's update"),
        ]
        compute = ShardProcesses.compute
        helper_pass = ShardProcesses._pass

        def timed_pass(processes, *arguments):  # runs in the helper
            tick = time.perf_counter()
            try:
                return helper_pass(processes, *arguments)
            finally:
                clock.helper[0] += time.perf_counter() - tick
                clock.helper[1] += 1

        def timed_compute(processes, shards, local_pass, *rest):
            connections = processes.connections
            processes.connections = [_TimedConnection(connection, clock) for connection in connections]
            try:
                return compute(processes, shards, clock.timing(local_pass, "computing shard 0"), *rest)
            finally:
                processes.connections = connections

        @contextmanager
        def context():
            originals = [(owner, name, getattr(owner, name)) for owner, name, _ in replaced]
            for owner, name, part in replaced:
                setattr(owner, name, clock.timing(getattr(owner, name), part))
            ShardProcesses.compute = timed_compute
            ShardProcesses._pass = timed_pass
            try:
                yield clock
            finally:
                for owner, name, original in originals:
                    setattr(owner, name, original)
                ShardProcesses.compute = compute
                ShardProcesses._pass = helper_pass

        return context()


class _TimedConnection:
    """A helper's pipe whose send and receive are timed."""

    def __init__(self, connection, clock: StepClock):
        self.connection, self.clock = connection, clock

    def send(self, message) -> None:
        self.clock.timing(self.connection.send, "sending shard 1")(message)

    def recv(self):
        return self.clock.timing(self.connection.recv, "waiting for shard 1")()


if __name__ == "__main__":
    sys.exit(main())
