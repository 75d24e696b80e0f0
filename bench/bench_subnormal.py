"""What subnormal weights cost: the S-LSTM on left-branching trees, with and
without the optimiser's flush to zero.

    python bench/bench_subnormal.py [--data-dir DIR] [--sentences K] [--json FILE]

The setting is the root-only S-LSTM-LR of Zhu et al.'s Table 4 (``npcomp
train --model slstm --task sst5 --structure left --supervision root --lr 0.01
--emb-lr 0.01``; d = d_x = 100, minibatch 10, lambda 1e-4, float32, one
thread).  In left-branching trees every right child is a leaf, whose cell is
0, so the weights that read a right child's cell (``W_c[d:2d]``) and those of
the right forget gate, which only scales that 0, get no gradient but the L2
term.  AdaGrad then shrinks each of them by a nearly
constant factor a step until it is subnormal, where the factor no longer
moves it; every product with such a weight takes the CPU's slow path.

The same minibatches are trained twice from the same start: with the
library's AdaGrad, which flushes subnormal results to 0, and with the same
rule without the flush (the kernel below, as the optimiser was before).  For
each it prints the training sentences per second over each tenth of the
run (the slowdown grows as weights reach the subnormals), the subnormal
entries of the parameters at the end, and how far apart the two final
parameter vectors are.  The ratio of the two speeds is measured in the same
run, so it holds on a noisy machine.  A benchmark, not a test.
"""

from __future__ import annotations

import sys

from harness import (
    adagrad,
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


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    parser.add_argument("--sentences", type=int, default=8544, help="training sentences per run (default: one epoch)")
    args = parse_options(parser, argv)
    set_up_process(override_blas_threads=True)

    import numpy as np
    from numba import njit

    from npcomp.cells import make_cell
    from npcomp.forest import supervised_labels
    from npcomp.models import TreeModel
    from npcomp.training.optimizers import AdaGrad, smallest_normal

    @njit(error_model="numpy")
    def unflushed_adagrad_rows(table, gradient, sum_squares, rows, lr, epsilon):
        for row in rows:
            for q in range(table.shape[1]):
                g = gradient[row, q]
                sum_squares[row, q] += g * g
                table[row, q] -= lr * g / (np.sqrt(sum_squares[row, q]) + epsilon)

    class UnflushedAdaGrad(AdaGrad):
        def _update(self, table, gradient, states, rows, lr):
            scalar = table.dtype.type
            unflushed_adagrad_rows(table, gradient, states[0], rows, scalar(lr), scalar(self.epsilon))

    _, vocab, train = load_sst(args.data_dir, structure="left")
    labels = [supervised_labels(tree, "root") for tree in train.trees]
    dim, batch_size, l2 = 100, 10, 1e-4
    order, batches = minibatches(np.random.default_rng(1), len(train), args.sentences, batch_size)
    tenths = np.array_split(np.arange(len(batches)), 10)
    print(
        f"S-LSTM on {len(order)} left-branching SST training trees, root labels, "
        f"d = d_x = {dim}, minibatch {batch_size}, AdaGrad lr 0.01, lambda {l2}, "
        "float32, 1 thread"
    )

    cell = make_cell("slstm", dim, dim)
    model = TreeModel(cell, 5, len(vocab), dim)
    start = initial_parameters(model, np.random.default_rng(1), np.float32)
    smallest = smallest_normal(np.float32)
    results, final = {"sentences": len(order), "runs": {}}, {}
    for name, optimizer_class in (("flushed (npcomp)", AdaGrad), ("unflushed", UnflushedAdaGrad)):
        params = start.copy()
        optimizer = adagrad(model, 0.01, 0.01, np.float32, rule=optimizer_class)
        # compile or load the kernels on a throwaway copy, then start afresh
        training_step(model, start.copy(), optimizer, train, labels, l2=l2)(batches[0])
        optimizer.reset()
        step = training_step(model, params, optimizer, train, labels, l2=l2)
        speeds, seconds = [], 0.0
        for tenth in tenths:
            part = [batches[b] for b in tenth]
            elapsed = timed(step, part)
            seconds += elapsed
            speeds.append(sum(len(indices) for indices in part) / elapsed)
        subnormal = int(np.sum((params.flat != 0) & (np.abs(params.flat) < smallest)))
        total = len(order) / seconds
        results["runs"][name] = {
            "sentences_per_s_by_tenth": speeds,
            "sentences_per_s": total,
            "subnormal_parameters": subnormal,
        }
        final[name] = params.flat.astype(np.float64)
        print(
            f"{name:<18} {total:7.0f} sentences/s; by tenth of the run: "
            + " ".join(f"{s:.0f}" for s in speeds)
            + f"; subnormal parameters: {subnormal:,}"
        )
    flushed, unflushed = (results["runs"][k]["sentences_per_s"] for k in results["runs"])
    difference = float(np.max(np.abs(final["flushed (npcomp)"] - final["unflushed"])))
    results["speedup"] = flushed / unflushed
    results["max_parameter_difference"] = difference
    print(
        f"the flush trains {flushed / unflushed:.2f}x as fast; the final parameters differ by at most {difference:.3g}"
    )
    write_results(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
