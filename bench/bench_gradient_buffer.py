"""What zeroing the gradient buffer costs a training step on the real SST.

    python bench/bench_gradient_buffer.py [--data-dir DIR] [--rounds R] [--batches B]

``loss_and_gradient`` zeroes a buffer it is given unless ``accumulate=True``.
The trainer's buffer is zero already (its optimiser zeroes each entry a step
consumes), so the zeroing is a pass over the whole buffer, embedding table
included, that changes nothing.  This times the Constituency Tree-LSTM's
step in Tai et al.'s setting (d = 150, 300-d word vectors for the SST's
21,702 words, minibatch 25, dropout 0.5, AdaGrad, one thread) both ways,
the two alternating over ``R`` rounds of ``B`` minibatches each, and prints
the median milliseconds per step of each and their difference.  A
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("NPCOMP_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")),
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batches", type=int, default=40, help="minibatches timed per round and way (default 40)")
    args = parser.parse_args(argv)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.data.readers.embeddings import Vocabulary
    from npcomp.data.datasets.tasks import load_task
    from npcomp.models import TreeModel
    from npcomp.training.memory import retain_freed_memory
    from npcomp.training.optimizers import Optimizer
    from npcomp.training.trainer import encode

    retain_freed_memory()  # as npcomp train does
    task = load_task("sst5", args.data_dir)
    vocab = Vocabulary.from_trees(t for split in task.splits.values() for t in split)
    train = encode(task.splits["train"], vocab)
    labels = [tree.label for tree in train.trees]
    rng = np.random.default_rng(1)
    model = TreeModel(make_cell("treelstm-nary", 300, 150), 5, len(vocab), 300)
    params = model.new_parameters(rng, rng.uniform(-0.05, 0.05, (len(vocab), 300)), dtype=np.float32)
    grads = params.zeros_like()
    optimizer = Optimizer.for_model(model, "adagrad", lr=0.05, embedding_lr=0.1)
    order = rng.permutation(len(train))
    batches = [order[start : start + 25] for start in range(0, len(order), 25)]
    forests = [train.forest(indices, labels) for indices in batches]

    def steps(first: int, accumulate: bool) -> float:
        """Seconds per step over ``args.batches`` minibatches from ``first``."""
        tick = time.perf_counter()
        for k in range(first, first + args.batches):
            _, rows = model.loss_and_gradient(
                params, forests[k % len(forests)], grads, l2=1e-4, dropout=0.5, rng=rng, accumulate=accumulate
            )
            optimizer.step(params.flat, grads.flat, rows)
        return (time.perf_counter() - tick) / args.batches

    steps(0, False)  # compile or load the kernels
    times = {False: [], True: []}
    for round_ in range(args.rounds):
        for accumulate in (False, True) if round_ % 2 == 0 else (True, False):
            times[accumulate].append(steps(round_ * args.batches, accumulate))
    zeroed, kept = (1000 * statistics.median(times[way]) for way in (False, True))
    print(
        f"buffer of {grads.flat.nbytes / 1e6:.1f} MB ({len(vocab)} words x 300 + "
        f"{model.dense_size} dense), {args.rounds} rounds of {args.batches} minibatches"
    )
    print(f"zeroed by loss_and_gradient: {zeroed:.1f} ms/step")
    print(f"accumulate=True (kept zero by the optimiser): {kept:.1f} ms/step")
    print(f"zeroing costs {zeroed - kept:+.2f} ms/step ({100 * (zeroed - kept) / kept:+.1f}%)")
    tick = time.perf_counter()
    for _ in range(50):
        grads.flat[...] = 0.0
    print(f"the zeroing pass alone: {1000 * (time.perf_counter() - tick) / 50:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
