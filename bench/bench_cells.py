"""Training speed of every tree cell on the real SST, under the same settings.

    python bench/bench_cells.py [--data-dir DIR] [--threads N] [--shards S] [--sentences K]
                                [--dim D] [--models a,b,...] [--json FILE]

Every cell trains on the same minibatches of SST trees with the same
settings: d = d_x = ``--dim`` (100 by default, so RNTN and S-LSTM leaves are
their word vectors), minibatch 25, AdaGrad, every labelled node supervised,
no dropout, float32, each minibatch in ``S`` shards (``--shards``, default
``npcomp train``'s) on up to N threads.  For each cell it prints

* training sentences per second (forest building, forward, backward, update;
  compilation excluded by a warm-up step),
* the matrix-product FLOPs of those steps, counted from the actual forests
  (each weight matrix applied once per node that uses it in the forward;
  the backward costs twice that: the error to the inputs and the weight
  gradient), and the GFLOP/s they ran at,
* the cost per FLOP relative to the N-ary Tree-LSTM measured in the same
  run: (Tree-LSTM GFLOP/s) / (cell GFLOP/s); the target is at most 3.

A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

BENCHED_MODELS = ("treelstm-nary", "treelstm-childsum", "slstm", "lstm-rnn", "rntn", "recnn")

# which nodes apply each weight matrix in the forward pass: "inner" (once per
# inner node), "child" (once per child of an inner node), "word" (once per
# distinct word of the minibatch); biases are not products and are left out
USES = {
    "treelstm-nary": {"W": "word", "U": "inner"},
    "treelstm-childsum": {"W": "word", "U": "inner", "U_f": "child"},
    "slstm": {"W_h": "inner", "W_c": "inner", "W_co": "inner", "W_leaf": "word"},
    "lstm-rnn": {"W": "inner", "W_peephole": "inner", "W_co": "inner", "W_leaf": "word"},
    "rntn": {"V": "inner", "W": "inner"},
    "recnn": {"W": "inner", "W_leaf": "word"},
}


def training_flops(model_name: str, shapes: dict, forest) -> float:
    """Matrix-product FLOPs of one training step on ``forest``: 3 x forward."""
    import numpy as np
    counts = {
        "inner": forest.n_nodes - forest.n_leaves,
        "child": int(np.sum(forest.parent >= 0)),
        "word": np.unique(forest.word[forest.word >= 0]).shape[0],
    }
    forward = sum(2.0 * int(np.prod(shapes[name])) * counts[use]
                  for name, use in USES[model_name].items() if name in shapes)
    return 3.0 * forward


def _default_shards() -> int:
    from npcomp.training.options import OPTIONS   # the option table imports no NumPy
    return OPTIONS["shards"].default


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get(
        "NPCOMP_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--shards", type=int, default=_default_shards(),
                        help="shards of a minibatch (default: npcomp train's)")
    parser.add_argument("--sentences", type=int, default=3000,
                        help="training sentences timed per cell")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--models", default=",".join(BENCHED_MODELS))
    parser.add_argument("--json", default=None, help="write the results to this file")
    args = parser.parse_args(argv)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.data.embeddings import Vocabulary
    from npcomp.training.memory import retain_freed_memory
    from npcomp.model import TreeModel
    from npcomp.training.optimizers import make_optimizer
    from npcomp.data.tasks import load_task
    from npcomp.training.encoding import encode
    from npcomp.training.shards import ShardedGradient

    retain_freed_memory()  # as npcomp train does (npcomp/training/memory.py)
    task = load_task("sst5", args.data_dir)
    vocab = Vocabulary.from_trees(t for split in task.splits.values() for t in split)
    train = encode(task.splits["train"], vocab)
    dim, batch_size = args.dim, 25
    order = np.random.default_rng(1).permutation(len(train))[:args.sentences]
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    print(f"{len(order)} SST training sentences, d = d_x = {dim}, minibatch {batch_size} in "
          f"{args.shards} shard(s), float32, {args.threads} thread(s)")

    results = {"threads": args.threads, "shards": args.shards, "dim": dim,
               "sentences": len(order), "cells": {}}
    for name in args.models.split(","):
        options = dict(activation="tanh", untied=False) if name in ("recnn", "lstm-rnn") else {}
        cell = make_cell(name, dim, dim, **options)
        model = TreeModel(cell, 5, len(vocab), dim)
        rng = np.random.default_rng(1)
        params = model.new_parameters(rng, rng.uniform(-0.05, 0.05, (len(vocab), dim)),
                                      dtype=np.float32)
        grads = params.zeros_like()
        optimizer = make_optimizer("adagrad", size=model.layout.size,
                                   dense_size=model.dense_size,
                                   embedding_offset=model.layout["embedding"].offset,
                                   embedding_dim=dim, lr=0.05, embedding_lr=0.1,
                                   dtype=np.float32)
        helpers = (ThreadPoolExecutor(max_workers=args.threads - 1) if args.threads > 1
                   else None)
        sharded = ShardedGradient(model, grads, args.shards, helpers)

        def step(indices):
            _, rows = sharded.loss_and_gradient(params, sharded.shards_of(params, train, indices),
                                                l2=1e-4)
            optimizer.step(params.flat, grads.flat, rows)

        step(batches[0])  # compile or load the kernels
        tick = time.perf_counter()
        for indices in batches:
            step(indices)
        seconds = time.perf_counter() - tick
        if helpers is not None:
            helpers.shutdown()
        shapes = dict(cell.parameter_shapes())
        flops = sum(training_flops(name, shapes, train.forest(indices)) for indices in batches)
        results["cells"][name] = {"train_sentences_per_s": len(order) / seconds,
                                  "gflop": flops / 1e9, "gflops": flops / seconds / 1e9,
                                  "parameters": model.dense_size}
    reference = results["cells"].get("treelstm-nary", {}).get("gflops")
    print(f"{'cell':<20}{'sentences/s':>12}{'GFLOP':>8}{'GFLOP/s':>9}{'cost/FLOP':>11}"
          f"{'parameters':>12}")
    for name, record in results["cells"].items():
        relative = reference / record["gflops"] if reference else float("nan")
        record["cost_per_flop_vs_treelstm"] = relative
        print(f"{name:<20}{record['train_sentences_per_s']:>12.0f}{record['gflop']:>8.1f}"
              f"{record['gflops']:>9.2f}{relative:>10.2f}x{record['parameters']:>12,}"
              f"{'  (over 3x)' if relative > 3 else ''}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
