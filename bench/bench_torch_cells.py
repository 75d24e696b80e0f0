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
target is 2x for every cell (``TARGET``).

Settings.  ``treelstm-nary`` trains in Tai et al.'s setting, as
``bench_treelstm.py``: d = 150, 300-d word vectors, dropout 0.5 on the
classifier input.  The other cells train as in ``bench_cells.py``: d = d_x =
``--dim`` (100), no dropout, tanh where a cell takes an activation, tied
leaves.  The recursive family trains at its own options (``OPTIONS``: the
RAE's alpha = 0.2, the DRNN's 3 layers of rectifiers, the DT-RNN's 3
positions a side) and the MV-RNN at d = 25, a word d + d^2 = 650 numbers (at 100,
2e8 numbers for the SST's words).  The DT-RNN and SDT-RNN read the SST's
constituency trees, whose inner nodes read no word (every child right of
its head); the SDT-RNN there reads every child through W_dep (no relations:
docs/cells/sdtrnn.md, SD1), so it times the DT-RNN's computation with one
matrix, not SICK's 49 relations.  All: float32, minibatch 25, AdaGrad (lr 0.05, word vectors 0.1,
lambda 1e-4), every labelled node supervised.  The tree cells read the SST's
binarised constituency trees (the Child-Sum Tree-LSTM too, as any-arity
trees whose inner nodes read no word; ``--childsum-structure dependency``
reads dependency parses instead, which need ``npcomp parse``'s files in
DATA_DIR/sst); ``lstm`` and ``bilstm`` read the same sentences as chains
labelled at their last word (``npcomp.data.datasets.tasks.sentence_chain``).

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

import statistics
import sys

from harness import (
    adagrad,
    add_shards_option,
    alternate_epochs,
    as_npcomp_trains,
    initial_parameters,
    load_sst,
    minibatches,
    option_parser,
    parse_options,
    ratios,
    set_up_process,
    training_step,
    write_results,
)

MODELS = (
    "treelstm-nary",
    "treelstm-childsum",
    "slstm",
    "lstm-rnn",
    "rntn",
    "recnn",
    "lstm",
    "bilstm",
    "mvrnn",
    "rae",
    "drnn",
    "dtrnn",
    "sdtrnn",
)
CHAINS = ("lstm", "bilstm")
TARGET = 2.0
# the recursive family's own options where the papers fix them (the registry's
# defaults: the RAE's alpha, the DRNN's 3 layers of rectifiers, the DT-RNN's 3
# positions a side), as they train in the reports
OPTIONS = {
    "lstm-rnn": dict(activation="tanh", untied=False),
    "recnn": dict(activation="tanh", untied=False),
    "rae": dict(reconstruction_weight=0.2),
    "drnn": dict(layers=3, activation="relu"),
    "dtrnn": dict(positions=3),
}
# the MV-RNN keeps a d x d matrix per word: at d = 100 the SST's vocabulary
# would hold 2e8 numbers (and PyTorch a copy); Socher et al. 2013's d = 25
MVRNN_DIM = 25
BATCH_SIZE = 25
LR, EMBEDDING_LR, L2 = 0.05, 0.1, 1e-4
# the float64 check on one minibatch: the two sum the same terms in another
# order, so they agree to rounding error, amplified a little by deep trees
LOSS_TOLERANCE = 1e-9
GRADIENT_TOLERANCE = 1e-7


def settings(name: str, dim: int) -> dict:
    if name == "treelstm-nary":
        return dict(input_dim=300, hidden_dim=150, dropout=0.5)
    if name == "mvrnn":
        return dict(input_dim=MVRNN_DIM + MVRNN_DIM**2, hidden_dim=MVRNN_DIM, dropout=0.0)
    return dict(input_dim=dim, hidden_dim=dim, dropout=0.0)


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    parser.add_argument("--sentences", type=int, default=3000, help="training sentences timed per epoch (default 3000)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed epochs of each implementation per cell and thread count"
    )
    parser.add_argument("--threads", default="1,2", help="thread counts to measure, comma-separated (default 1,2)")
    add_shards_option(parser)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--dim", type=int, default=100, help="d = d_x of every cell but treelstm-nary (default 100)")
    parser.add_argument("--childsum-structure", choices=("gold", "dependency"), default="gold")
    args = parse_options(parser, argv)
    models = args.models.split(",")
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        parser.error(f"no such model: {', '.join(unknown)}; choose among {', '.join(MODELS)}")
    thread_counts = [int(count) for count in args.threads.split(",")]
    set_up_process()

    import numpy as np
    import torch

    from npcomp.data.datasets.tasks import load_task
    from npcomp.data.readers.restructure import sentence_chain
    from npcomp.training.encoding import encode

    torch.sparse.check_sparse_tensor_invariants.disable()  # opting out, as its warning asks
    task, vocab, train = load_sst(args.data_dir)
    data = {"gold": train}
    if any(name in CHAINS for name in models):
        data["chain"] = encode([sentence_chain(tree) for tree in task.splits["train"]], vocab)
    if "treelstm-childsum" in models and args.childsum_structure == "dependency":
        # the same sentences, parsed: labelled where a node's span is a phrase
        data["dependency"] = encode(
            load_task("sst5", args.data_dir, structure="dependency", splits=("train",)).splits["train"], vocab
        )
    order, batches = minibatches(np.random.default_rng(1), len(train), args.sentences, BATCH_SIZE)
    print(
        f"{len(order)} SST training sentences a epoch, minibatch {BATCH_SIZE}, float32; "
        f"PyTorch {torch.__version__}; {args.rounds} round(s), epochs alternating"
    )

    results = {
        "sentences": len(order),
        "rounds": args.rounds,
        "torch": torch.__version__,
        "shards": args.shards,
        "cells": {},
    }
    for name in models:
        kind = "chain" if name in CHAINS else args.childsum_structure if name == "treelstm-childsum" else "gold"
        split = data[kind]
        labels = [tree.label for tree in split.trees]
        setting = settings(name, args.dim)
        check = _check(name, setting, vocab, split.forest(batches[0], labels))
        record = {"trees": kind, **setting, "target": TARGET, "check": check, "threads": {}}
        for threads in thread_counts:
            record["threads"][str(threads)] = _measure(
                name, setting, vocab, split, labels, batches, threads, args.rounds, args.shards
            )
            _print_row(name, record, threads)
        results["cells"][name] = record
    _print_table(results)
    write_results(args.json, results)
    return 0


def _npcomp_model(name: str, setting: dict, vocab, dtype):
    """The npcomp model and its initial parameters (the same for every run)."""
    import numpy as np

    from npcomp.cells import make_cell
    from npcomp.models import TreeModel

    cell = make_cell(name, setting["input_dim"], setting["hidden_dim"], **OPTIONS.get(name, {}))
    model = TreeModel(cell, 5, len(vocab), setting["input_dim"])
    return model, initial_parameters(model, np.random.default_rng(1), dtype)


def _check(name: str, setting: dict, vocab, forest) -> dict:
    """The counterpart's loss and gradients against npcomp's on ``forest``,
    in float64; stops the benchmark if they differ."""
    import numpy as np

    from counterparts import worst_gradient
    from torch_cells import check_against_npcomp

    model, params = _npcomp_model(name, setting, vocab, np.float64)
    result = check_against_npcomp(model, params, forest)
    worst_name, worst = worst_gradient(result)
    if result["loss_difference"] > LOSS_TOLERANCE or worst > GRADIENT_TOLERANCE:
        raise SystemExit(
            f"{name}: the PyTorch counterpart disagrees with npcomp on the first minibatch "
            f"(float64): loss {result['loss']:.12g}, relative difference "
            f"{result['loss_difference']:.1e} (at most {LOSS_TOLERANCE:.0e}); gradient of "
            f"{worst_name} within {worst:.1e} of the largest entry (at most "
            f"{GRADIENT_TOLERANCE:.0e}).  Not timing a model that computes something else."
        )
    return {"loss_difference": result["loss_difference"], "gradient_difference": worst, "worst_gradient": worst_name}


def _measure(name: str, setting: dict, vocab, split, labels, batches, threads: int, rounds: int, shards: int) -> dict:
    """Alternating epochs of npcomp and PyTorch from the same initial weights."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import torch

    from torch_cells import TorchModel

    torch.set_num_threads(threads)
    model, params = _npcomp_model(name, setting, vocab, np.float32)
    params, processes = as_npcomp_trains(params, shards, threads)
    optimizer = adagrad(model, LR, EMBEDDING_LR, np.float32)
    helpers = ThreadPoolExecutor(max_workers=threads - 1) if threads > 1 else None
    dropout = setting["dropout"]
    steps = {
        "npcomp": training_step(
            model,
            params,
            optimizer,
            split,
            labels,
            shards=shards,
            helpers=helpers,
            rng=np.random.default_rng(2),
            dropout=dropout,
            l2=L2,
            threads=threads,
            processes=processes,
        )
    }
    baseline = TorchModel.of(model)  # float32, as npcomp
    baseline.load_npcomp(params)
    steps["torch"] = baseline.training_step(split, labels, lr=LR, embedding_lr=EMBEDDING_LR, l2=L2, dropout=dropout)
    for step in steps.values():
        step(batches[0])  # compile or load npcomp's kernels; PyTorch's first call
    sentences = sum(len(indices) for indices in batches)
    speeds = alternate_epochs(steps, batches, sentences, rounds)
    steps["npcomp"].close()
    if helpers is not None:
        helpers.shutdown()
    ours, theirs = speeds["npcomp"], speeds["torch"]
    ratio, each = ratios(ours, theirs)
    return {
        "npcomp_sentences_per_s": statistics.median(ours),
        "npcomp_all": ours,
        "torch_sentences_per_s": statistics.median(theirs),
        "torch_all": theirs,
        "ratio": ratio,
        "ratio_all": each,
    }


HEADER = (
    f"{'cell':<19}{'trees':<11}{'d_x/d':>8}{'threads':>8}{'npcomp/s':>10}"
    f"{'PyTorch/s':>11}{'ratio':>8}{'target':>8}  meets"
)


def _row(name: str, record: dict, threads: int) -> str:
    run = record["threads"][str(threads)]
    target = record["target"]
    dims = f"{record['input_dim']}/{record['hidden_dim']}"
    return (
        f"{name:<19}{record['trees']:<11}{dims:>8}{threads:>8}"
        f"{run['npcomp_sentences_per_s']:>10.0f}{run['torch_sentences_per_s']:>11.0f}"
        f"{run['ratio']:>7.2f}x{target:>7.0f}x  {'yes' if run['ratio'] >= target else 'NO'}"
    )


def _print_row(name: str, record: dict, threads: int) -> None:
    """Progress: each row as soon as it is measured, with the check's result."""
    run = record["threads"][str(threads)]
    check = record["check"]
    print(
        f"  {_row(name, record, threads).strip()}   (rounds: "
        f"{', '.join(f'{ratio:.2f}' for ratio in run['ratio_all'])}; float64 check: loss "
        f"within {check['loss_difference']:.0e}, gradients {check['gradient_difference']:.0e})",
        flush=True,
    )


def _print_table(results: dict) -> None:
    print()
    print(HEADER)
    for name, record in results["cells"].items():
        for threads in record["threads"]:
            print(_row(name, record, int(threads)))


if __name__ == "__main__":
    sys.exit(main())
