"""Training and evaluation speed of the Constituency Tree-LSTM on the real SST,
beside the same model level-batched in PyTorch, measured in the same run.

    python bench/bench_treelstm.py [--data-dir DIR] [--threads N] [--rounds R]

Tai et al.'s setting: d = 150, 300-d (random) word vectors, minibatch 25,
AdaGrad, dropout 0.5, every labelled node supervised.  For float32 and
float64 it prints

* training sentences per second (forest building, forward, backward and the
  AdaGrad update; compilation excluded by a warm-up), the median of ``R``
  timed epochs,
* the time to evaluate the 2210 test sentences (best of 3),
* the matrix-product FLOPs of one training epoch (counted from the actual
  minibatches: forward, backward through the levels, weight gradients), and
  the GFLOP/s they ran at,
* this machine's matrix-product throughput measured in the same run with the
  same threads (so the result reads as a fraction of what the hardware does).

In float32, when PyTorch is installed (``pip install torch``; not an npcomp
dependency), each npcomp epoch alternates with an epoch of the PyTorch
baseline of ``torch_cells.py`` on the same minibatches and threads, whose
loss is first checked against npcomp's on one forest, and the speed ratio
is printed: these machines' speed drifts by a quarter within minutes, so
the ratio of epochs timed side by side is the comparable figure.

Results are also written as JSON (``--json``).  A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get(
        "NPCOMP_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sentences", type=int, default=8544,
                        help="training sentences timed per epoch (default: the SST's 8544)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="timed float32 epochs of each implementation (default 3)")
    parser.add_argument("--dtypes", default="float32,float64")
    parser.add_argument("--no-torch", action="store_true",
                        help="skip the PyTorch baseline even if PyTorch is installed")
    parser.add_argument("--json", default=None, help="write the results to this file")
    args = parser.parse_args(argv)
    # one BLAS thread per worker thread, set before NumPy loads
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
    from npcomp.training.evaluation import evaluate

    retain_freed_memory()  # as npcomp train does (npcomp/training/memory.py)
    task = load_task("sst5", args.data_dir)
    vocab = Vocabulary.from_trees(t for split in task.splits.values() for t in split)
    train = encode(task.splits["train"], vocab)
    test = encode(task.splits["test"], vocab)
    labels = [tree.label for tree in train.trees]
    input_dim, hidden_dim, batch_size = 300, 150, 25
    machine = matmul_throughput(np, args.threads)
    print(f"machine: {args.threads} thread(s); float32 matrix product "
          f"{machine['float32']:.1f} GFLOP/s, float64 {machine['float64']:.1f} GFLOP/s")
    torch_baseline = None if args.no_torch else _torch_baseline()

    results = {"threads": args.threads, "machine_gflops": machine, "dtypes": {}}
    for dtype_name in args.dtypes.split(","):
        dtype = np.dtype(dtype_name).type
        rng = np.random.default_rng(1)
        model = TreeModel(make_cell("treelstm-nary", input_dim, hidden_dim), 5, len(vocab),
                          input_dim)
        params = model.new_parameters(rng, rng.uniform(-0.05, 0.05, (len(vocab), input_dim)),
                                      dtype=dtype)
        grads = params.zeros_like()
        optimizer = make_optimizer("adagrad", size=model.layout.size,
                                   dense_size=model.dense_size,
                                   embedding_offset=model.layout["embedding"].offset,
                                   embedding_dim=input_dim, lr=0.05, embedding_lr=0.1,
                                   dtype=dtype)
        helper = ThreadPoolExecutor(max_workers=1) if args.threads > 1 else None
        order = rng.permutation(len(train))[:args.sentences]
        batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]

        def step(indices):
            forest = train.forest(indices, labels)
            _, rows = model.loss_and_gradient(params, forest, grads, l2=1e-4, dropout=0.5,
                                              rng=rng, helper=helper)
            optimizer.step(params.flat, grads.flat, rows)

        step(batches[0])  # compile or load the kernels
        evaluate(model, params, test, 512, helper)
        baseline = None
        if torch_baseline is not None and dtype_name == "float32":
            baseline = torch_baseline(model, params, train, labels, batches, args.threads)
        rounds = args.rounds if dtype_name == "float32" else 1
        speeds, baseline_speeds = [], []
        for _ in range(rounds):
            speeds.append(len(order) / _timed(step, batches))
            if baseline is not None:
                baseline_speeds.append(len(order) / _timed(baseline["step"], batches))
        speed = statistics.median(speeds)
        flops = sum(matmul_flops(train.forest(indices), input_dim, hidden_dim)
                    for indices in batches)
        eval_times = []
        for _ in range(3):  # the best of 3 rejects interference from other processes
            tick = time.perf_counter()
            evaluate(model, params, test, 512, helper)
            eval_times.append(time.perf_counter() - tick)
        test_time = min(eval_times)
        epoch_flops = flops * len(train) / len(order)
        achieved = flops * speed / len(order) / 1e9
        record = {"train_sentences_per_s": speed, "train_sentences_per_s_all": speeds,
                  "epoch_seconds": len(train) / speed,
                  "test_eval_s": test_time, "test_eval_s_all": eval_times,
                  "test_sentences": len(test),
                  "epoch_gflop": epoch_flops / 1e9, "achieved_gflops": achieved,
                  "fraction_of_machine": achieved / machine[dtype_name]}
        print(f"{dtype_name}: {speed:7.0f} training sentences/s (epoch {len(train) / speed:5.1f} s"
              f"{_spread(speeds)}), test eval {test_time:5.2f} s (best of 3) for {len(test)} "
              f"sentences; {epoch_flops / 1e9:6.1f} GFLOP/epoch at {achieved:5.1f} GFLOP/s = "
              f"{100 * record['fraction_of_machine']:4.1f}% of the measured matrix product")
        if baseline is not None:
            baseline_speed = statistics.median(baseline_speeds)
            ratios = [ours / theirs for ours, theirs in zip(speeds, baseline_speeds)]
            record["torch"] = {"version": baseline["version"],
                               "train_sentences_per_s": baseline_speed,
                               "train_sentences_per_s_all": baseline_speeds,
                               "loss_relative_difference": baseline["loss_difference"],
                               "speed_ratio": statistics.median(ratios),
                               "speed_ratio_all": ratios}
            print(f"  PyTorch {baseline['version']} level-batched, same minibatches: "
                  f"{baseline_speed:7.0f} training sentences/s{_spread(baseline_speeds)} "
                  f"(loss on one forest within {baseline['loss_difference']:.1e} of npcomp's); "
                  f"npcomp / PyTorch, epochs side by side: {statistics.median(ratios):.2f}x "
                  f"({', '.join(f'{ratio:.2f}' for ratio in ratios)})")
        results["dtypes"][dtype_name] = record
        if helper is not None:
            helper.shutdown()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _timed(step, batches) -> float:
    tick = time.perf_counter()
    for indices in batches:
        step(indices)
    return time.perf_counter() - tick


def _spread(values) -> str:
    if len(values) < 2:
        return ""
    return f"; {len(values)} epochs {min(values):.0f}-{max(values):.0f}"


def _torch_baseline():
    """A factory for the PyTorch baseline, or None (with a note) without PyTorch."""
    try:
        import torch
    except ImportError:
        print("PyTorch baseline skipped: PyTorch is not installed (pip install torch)")
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from torch_cells import TorchModel

    def build(model, params, train, labels, batches, threads) -> dict:
        """The same model and initial weights in PyTorch, checked on one forest."""
        torch.set_num_threads(threads)
        torch.sparse.check_sparse_tensor_invariants.disable()  # opting out, as its warning asks
        baseline = TorchModel.of(model)
        baseline.load_npcomp(params)
        forest = train.forest(batches[0], labels)
        ours, _ = model.loss_and_gradient(params, forest, params.zeros_like())
        with torch.no_grad():
            theirs = float(baseline.loss(forest))
        optimizer = baseline.optimizer(lr=0.05, embedding_lr=0.1, l2=1e-4)

        def step(indices):
            forest = train.forest(indices, labels)
            optimizer.zero_grad()
            baseline.loss(forest, dropout=0.5).backward()
            optimizer.step()

        step(batches[0])
        return {"step": step, "version": torch.__version__,
                "loss_difference": abs(ours - theirs) / abs(ours)}

    return build


def matmul_flops(forest, input_dim: int, hidden_dim: int, arity: int = 2) -> float:
    """Matrix-product FLOPs of one training step of the N-ary Tree-LSTM on a forest.

    Leaves (per distinct word): x W forward, W's gradient and dx: 3 products
    of d_x by 3d.  Inner nodes: [h_1..h_N] U forward, delta U^T backward and
    U's gradient: 3 products of N d by (3+N) d.  The classifier is negligible.
    """
    import numpy as np
    distinct_words = np.unique(forest.word[forest.word >= 0]).shape[0]
    inner = forest.n_nodes - forest.n_leaves
    leaf_flops = 2.0 * distinct_words * input_dim * 3 * hidden_dim
    inner_flops = 2.0 * inner * arity * hidden_dim * (3 + arity) * hidden_dim
    return 3.0 * (leaf_flops + inner_flops)


def matmul_throughput(np, threads: int, size: int = 256, seconds: float = 1.0) -> dict:
    """GFLOP/s of ``threads`` concurrent single-threaded products of two
    ``size`` x ``size`` matrices: what the machine's cores deliver to BLAS."""
    from concurrent.futures import ThreadPoolExecutor
    out = {}
    with ThreadPoolExecutor(threads) as pool:
        for name in ("float32", "float64"):
            a = np.random.default_rng(0).random((size, size)).astype(name)
            b = np.random.default_rng(1).random((size, size)).astype(name)
            a @ b

            def work(_):
                count = 0
                stop = time.perf_counter() + seconds
                while time.perf_counter() < stop:
                    a @ b
                    count += 1
                return count

            tick = time.perf_counter()
            total = sum(pool.map(work, range(threads)))
            out[name] = 2.0 * size ** 3 * total / (time.perf_counter() - tick) / 1e9
    return out


if __name__ == "__main__":
    sys.exit(main())
