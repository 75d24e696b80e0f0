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
  (each weight matrix applied once per node that uses it in the forward --
  the RNTN's tensor as the symmetric half it multiplies, the pairs r <= s
  of ``rntn.py``; the backward costs twice that: the error to the inputs
  and the weight gradient), and the GFLOP/s they ran at,
* the cost per FLOP relative to the N-ary Tree-LSTM measured in the same
  run: (Tree-LSTM GFLOP/s) / (cell GFLOP/s); the target is at most 3.

A benchmark, not a test.
"""

from __future__ import annotations

import sys

from harness import (
    adagrad,
    add_shards_option,
    add_threads_option,
    as_npcomp_trains,
    initial_parameters,
    load_sst,
    minibatches,
    option_parser,
    parse_options,
    set_up_process,
    timed,
    training_step,
    write_results,
)

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


def applied_entries(model_name: str, name: str, shape: tuple) -> int:
    """The entries of weight ``name`` a node's products use: all of them, but
    for the RNTN's tensor V (2d, 2d, d), whose forms c V^[k] c^T npcomp
    computes from the pairs r <= s of the symmetrised slices (d (2d + 1) d)."""
    import numpy as np

    if (model_name, name) == ("rntn", "V"):
        width = shape[0]
        return width * (width + 1) // 2 * shape[2]
    return int(np.prod(shape))


def training_flops(model_name: str, shapes: dict, forest) -> float:
    """Matrix-product FLOPs of one training step on ``forest``: 3 x forward."""
    import numpy as np

    counts = {
        "inner": forest.n_nodes - forest.n_leaves,
        "child": int(np.sum(forest.parent >= 0)),
        "word": np.unique(forest.word[forest.word >= 0]).shape[0],
    }
    forward = sum(
        2.0 * applied_entries(model_name, name, shapes[name]) * counts[use]
        for name, use in USES[model_name].items()
        if name in shapes
    )
    return 3.0 * forward


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    add_threads_option(parser)
    add_shards_option(parser)
    parser.add_argument("--sentences", type=int, default=3000, help="training sentences timed per cell")
    parser.add_argument("--dim", type=int, default=100)
    parser.add_argument("--models", default=",".join(BENCHED_MODELS))
    args = parse_options(parser, argv)
    set_up_process()

    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.models import TreeModel

    _, vocab, train = load_sst(args.data_dir)
    dim, batch_size = args.dim, 25
    order, batches = minibatches(np.random.default_rng(1), len(train), args.sentences, batch_size)
    labels = [tree.label for tree in train.trees]
    print(
        f"{len(order)} SST training sentences, d = d_x = {dim}, minibatch {batch_size} in "
        f"{args.shards} shard(s), float32, {args.threads} thread(s)"
    )

    results = {"threads": args.threads, "shards": args.shards, "dim": dim, "sentences": len(order), "cells": {}}
    for name in args.models.split(","):
        options = dict(activation="tanh", untied=False) if name in ("recnn", "lstm-rnn") else {}
        cell = make_cell(name, dim, dim, **options)
        model = TreeModel(cell, 5, len(vocab), dim)
        params = initial_parameters(model, np.random.default_rng(1), np.float32)
        params, processes = as_npcomp_trains(params, args.shards, args.threads)
        optimizer = adagrad(model, 0.05, 0.1, np.float32)
        helpers = ThreadPoolExecutor(max_workers=args.threads - 1) if args.threads > 1 else None
        step = training_step(
            model,
            params,
            optimizer,
            train,
            labels,
            shards=args.shards,
            helpers=helpers,
            l2=1e-4,
            threads=args.threads,
            processes=processes,
        )
        step(batches[0])  # compile or load the kernels
        seconds = timed(step, batches)
        step.close()
        if helpers is not None:
            helpers.shutdown()
        shapes = dict(cell.parameter_shapes())
        flops = sum(training_flops(name, shapes, train.forest(indices)) for indices in batches)
        results["cells"][name] = {
            "train_sentences_per_s": len(order) / seconds,
            "gflop": flops / 1e9,
            "gflops": flops / seconds / 1e9,
            "parameters": model.dense_size,
        }
    reference = results["cells"].get("treelstm-nary", {}).get("gflops")
    print(f"{'cell':<20}{'sentences/s':>12}{'GFLOP':>8}{'GFLOP/s':>9}{'cost/FLOP':>11}{'parameters':>12}")
    for name, record in results["cells"].items():
        relative = reference / record["gflops"] if reference else float("nan")
        record["cost_per_flop_vs_treelstm"] = relative
        print(
            f"{name:<20}{record['train_sentences_per_s']:>12.0f}{record['gflop']:>8.1f}"
            f"{record['gflops']:>9.2f}{relative:>10.2f}x{record['parameters']:>12,}"
            f"{'  (over 3x)' if relative > 3 else ''}"
        )
    write_results(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
