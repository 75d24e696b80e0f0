"""Training speed of every tree cell and chain LSTM on the real SST, each
beside its level-batched PyTorch counterpart, measured in the same run.

    python bench/bench_torch_cells.py [--data-dir DIR] [--sentences K] [--rounds R]
                                      [--threads 1,2] [--shards S] [--models a,b,...]
                                      [--json FILE]

For each cell and each thread count it prints the training sentences per
second of npcomp and of the PyTorch counterpart of ``torch_cells.py`` (forest
building, forward, backward and the AdaGrad update; compilation and
PyTorch's first call excluded by a warm-up step), each the median of ``R``
epochs over the same ``K`` training sentences in the same minibatches, an
npcomp epoch alternating with a PyTorch epoch: these machines' speed drifts
by a quarter within minutes, so only epochs timed side by side compare.
The ratio is the median of the per-round ratios npcomp / PyTorch; the
target is 3x for the Constituency Tree-LSTM (``treelstm-nary``) and 2x for
every other cell.

Settings.  ``treelstm-nary`` trains in Tai et al.'s setting, as
``bench_treelstm.py``: d = 150, 300-d word vectors, dropout 0.5 on the
classifier input.  The other cells train as in ``bench_cells.py``: d = d_x =
``--dim`` (100), no dropout, tanh where a cell takes an activation, tied
leaves.  All: float32, minibatch 25, AdaGrad (lr 0.05, word vectors 0.1,
lambda 1e-4), every labelled node supervised.  The tree cells read the SST's
binarised constituency trees (the Child-Sum Tree-LSTM too, as any-arity
trees whose inner nodes read no word; ``--childsum-structure dependency``
reads dependency parses instead, which need ``npcomp parse``'s files in
DATA_DIR/sst); ``lstm`` and ``bilstm`` read the same sentences as chains
labelled at their last word (``npcomp.data.tasks.sentence_chain``).

Threads: npcomp's BLAS runs one thread (set before NumPy loads, as ``npcomp
train`` does) and npcomp computes each minibatch in ``S`` shards (``--shards``,
default ``npcomp train``'s), on up to N threads at once: the same computation
at every thread count (``npcomp/training/shards.py``); PyTorch gets
``torch.set_num_threads(N)``.

Before timing a cell, its PyTorch counterpart's loss and gradients are
checked against npcomp's on the first minibatch, in float64 from the same
weights; the benchmark stops if they differ.  A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

MODELS = ("treelstm-nary", "treelstm-childsum", "slstm", "lstm-rnn", "rntn", "recnn",
          "lstm", "bilstm")
CHAINS = ("lstm", "bilstm")
TARGETS = {"treelstm-nary": 3.0}
DEFAULT_TARGET = 2.0
OPTIONS = {"lstm-rnn": dict(activation="tanh", untied=False),
           "recnn": dict(activation="tanh", untied=False)}
BATCH_SIZE = 25
LR, EMBEDDING_LR, L2 = 0.05, 0.1, 1e-4
# the float64 check on one minibatch: the two sum the same terms in another
# order, so they agree to rounding error, amplified a little by deep trees
LOSS_TOLERANCE = 1e-9
GRADIENT_TOLERANCE = 1e-7


def _default_shards() -> int:
    from npcomp.training.options import OPTIONS   # the option table imports no NumPy
    return OPTIONS["shards"].default


def settings(name: str, dim: int) -> dict:
    if name == "treelstm-nary":
        return dict(input_dim=300, hidden_dim=150, dropout=0.5)
    return dict(input_dim=dim, hidden_dim=dim, dropout=0.0)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=os.environ.get(
        "NPCOMP_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")))
    parser.add_argument("--sentences", type=int, default=3000,
                        help="training sentences timed per epoch (default 3000)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="timed epochs of each implementation per cell and thread count")
    parser.add_argument("--threads", default="1,2",
                        help="thread counts to measure, comma-separated (default 1,2)")
    parser.add_argument("--shards", type=int, default=_default_shards(),
                        help="shards of an npcomp minibatch (default: npcomp train's)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--dim", type=int, default=100,
                        help="d = d_x of every cell but treelstm-nary (default 100)")
    parser.add_argument("--childsum-structure", choices=("gold", "dependency"), default="gold")
    parser.add_argument("--json", default=None, help="write the results to this file")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        parser.error(f"no such model: {', '.join(unknown)}; choose among {', '.join(MODELS)}")
    thread_counts = [int(count) for count in args.threads.split(",")]
    # one BLAS thread per worker thread, set before NumPy loads
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")

    import numpy as np
    import torch

    from npcomp.training.memory import retain_freed_memory
    from npcomp.data.tasks import load_task
    from npcomp.data.restructure import sentence_chain
    from npcomp.data.embeddings import Vocabulary
    from npcomp.training.encoding import encode

    sys.path.insert(0, str(Path(__file__).resolve().parent))

    retain_freed_memory()  # as npcomp train does (npcomp/training/memory.py)
    torch.sparse.check_sparse_tensor_invariants.disable()  # opting out, as its warning asks
    task = load_task("sst5", args.data_dir)
    vocab = Vocabulary.from_trees(t for split in task.splits.values() for t in split)
    trees = {"gold": task.splits["train"]}
    if any(name in CHAINS for name in models):
        trees["chain"] = [sentence_chain(tree) for tree in task.splits["train"]]
    if "treelstm-childsum" in models and args.childsum_structure == "dependency":
        # the same sentences, parsed: labelled where a node's span is a phrase
        trees["dependency"] = load_task("sst5", args.data_dir, structure="dependency",
                                        splits=("train",)).splits["train"]
    data = {kind: encode(split, vocab) for kind, split in trees.items()}
    order = np.random.default_rng(1).permutation(len(data["gold"]))[:args.sentences]
    batches = [order[i:i + BATCH_SIZE] for i in range(0, len(order), BATCH_SIZE)]
    print(f"{len(order)} SST training sentences a epoch, minibatch {BATCH_SIZE}, float32; "
          f"PyTorch {torch.__version__}; {args.rounds} round(s), epochs alternating")

    results = {"sentences": len(order), "rounds": args.rounds, "torch": torch.__version__,
               "shards": args.shards, "cells": {}}
    for name in models:
        kind = ("chain" if name in CHAINS else
                args.childsum_structure if name == "treelstm-childsum" else "gold")
        split = data[kind]
        labels = [tree.label for tree in split.trees]
        setting = settings(name, args.dim)
        check = _check(name, setting, vocab, split.forest(batches[0], labels))
        record = {"trees": kind, **setting, "target": TARGETS.get(name, DEFAULT_TARGET),
                  "check": check, "threads": {}}
        for threads in thread_counts:
            record["threads"][str(threads)] = _measure(name, setting, vocab, split, labels,
                                                       batches, threads, args.rounds,
                                                       args.shards)
            _print_row(name, record, threads)
        results["cells"][name] = record
    _print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _npcomp_model(name: str, setting: dict, vocab, dtype):
    """The npcomp model and its initial parameters (the same for every run)."""
    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.model import TreeModel
    cell = make_cell(name, setting["input_dim"], setting["hidden_dim"], **OPTIONS.get(name, {}))
    model = TreeModel(cell, 5, len(vocab), setting["input_dim"])
    rng = np.random.default_rng(1)
    params = model.new_parameters(
        rng, rng.uniform(-0.05, 0.05, (len(vocab), setting["input_dim"])), dtype=dtype)
    return model, params


def _check(name: str, setting: dict, vocab, forest) -> dict:
    """The counterpart's loss and gradients against npcomp's on ``forest``,
    in float64; stops the benchmark if they differ."""
    import numpy as np

    from torch_cells import check_against_npcomp
    model, params = _npcomp_model(name, setting, vocab, np.float64)
    result = check_against_npcomp(model, params, forest)
    worst_name, worst = max(result["gradient_difference"].items(), key=lambda item: item[1])
    if result["loss_difference"] > LOSS_TOLERANCE or worst > GRADIENT_TOLERANCE:
        raise SystemExit(
            f"{name}: the PyTorch counterpart disagrees with npcomp on the first minibatch "
            f"(float64): loss {result['loss']:.12g}, relative difference "
            f"{result['loss_difference']:.1e} (at most {LOSS_TOLERANCE:.0e}); gradient of "
            f"{worst_name} within {worst:.1e} of the largest entry (at most "
            f"{GRADIENT_TOLERANCE:.0e}).  Not timing a model that computes something else.")
    return {"loss_difference": result["loss_difference"], "gradient_difference": worst,
            "worst_gradient": worst_name}


def _measure(name: str, setting: dict, vocab, split, labels, batches, threads: int,
             rounds: int, shards: int) -> dict:
    """Alternating epochs of npcomp and PyTorch from the same initial weights."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import torch

    from npcomp.training.optimizers import make_optimizer
    from npcomp.training.encoding import EncodedSplit
    from npcomp.training.shards import ShardedGradient
    from torch_cells import TorchModel

    torch.set_num_threads(threads)
    model, params = _npcomp_model(name, setting, vocab, np.float32)
    grads = params.zeros_like()
    optimizer = make_optimizer("adagrad", size=model.layout.size, dense_size=model.dense_size,
                               embedding_offset=model.layout["embedding"].offset,
                               embedding_dim=setting["input_dim"], lr=LR,
                               embedding_lr=EMBEDDING_LR, dtype=np.float32)
    helpers = ThreadPoolExecutor(max_workers=threads - 1) if threads > 1 else None
    sharded = ShardedGradient(model, grads, shards, helpers)
    labelled = EncodedSplit(split.trees, split.words, labels)
    rng = np.random.default_rng(2)
    dropout = setting["dropout"]

    def npcomp_step(indices):
        parts = sharded.shards_of(params, labelled, indices, rng, dropout=dropout)
        _, rows = sharded.loss_and_gradient(params, parts, l2=L2)
        optimizer.step(params.flat, grads.flat, rows)

    baseline = TorchModel.of(model)   # float32, as npcomp
    baseline.load_npcomp(params)
    torch_optimizer = baseline.optimizer(lr=LR, embedding_lr=EMBEDDING_LR, l2=L2)

    def torch_step(indices):
        forest = split.forest(indices, labels)
        torch_optimizer.zero_grad()
        baseline.loss(forest, dropout=dropout).backward()
        torch_optimizer.step()

    npcomp_step(batches[0])   # compile or load the kernels
    torch_step(batches[0])
    ours, theirs = [], []
    sentences = sum(len(indices) for indices in batches)
    for _ in range(rounds):
        ours.append(sentences / _timed(npcomp_step, batches))
        theirs.append(sentences / _timed(torch_step, batches))
    if helpers is not None:
        helpers.shutdown()
    ratios = [a / b for a, b in zip(ours, theirs)]
    return {"npcomp_sentences_per_s": statistics.median(ours), "npcomp_all": ours,
            "torch_sentences_per_s": statistics.median(theirs), "torch_all": theirs,
            "ratio": statistics.median(ratios), "ratio_all": ratios}


def _timed(step, batches) -> float:
    tick = time.perf_counter()
    for indices in batches:
        step(indices)
    return time.perf_counter() - tick


HEADER = (f"{'cell':<19}{'trees':<11}{'d_x/d':>8}{'threads':>8}{'npcomp/s':>10}"
          f"{'PyTorch/s':>11}{'ratio':>8}{'target':>8}  meets")


def _row(name: str, record: dict, threads: int) -> str:
    run = record["threads"][str(threads)]
    target = record["target"]
    dims = f"{record['input_dim']}/{record['hidden_dim']}"
    return (f"{name:<19}{record['trees']:<11}{dims:>8}{threads:>8}"
            f"{run['npcomp_sentences_per_s']:>10.0f}{run['torch_sentences_per_s']:>11.0f}"
            f"{run['ratio']:>7.2f}x{target:>7.0f}x  {'yes' if run['ratio'] >= target else 'NO'}")


def _print_row(name: str, record: dict, threads: int) -> None:
    """Progress: each row as soon as it is measured, with the check's result."""
    run = record["threads"][str(threads)]
    check = record["check"]
    print(f"  {_row(name, record, threads).strip()}   (rounds: "
          f"{', '.join(f'{ratio:.2f}' for ratio in run['ratio_all'])}; float64 check: loss "
          f"within {check['loss_difference']:.0e}, gradients {check['gradient_difference']:.0e})",
          flush=True)


def _print_table(results: dict) -> None:
    print()
    print(HEADER)
    for name, record in results["cells"].items():
        for threads in record["threads"]:
            print(_row(name, record, int(threads)))


if __name__ == "__main__":
    sys.exit(main())
