"""What the speed benchmarks share: their options, the process set up as
``npcomp train`` sets up its own, the real SST ready to train on, the
starting weights and AdaGrad, one training step, the timing of epochs side
by side, the machine's matrix-product rate, and the results file.

The benchmarks import this before NumPy: nothing here loads it at import.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import time
from pathlib import Path

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


# ---------------------------------------------------------------------------
# options and the process
# ---------------------------------------------------------------------------


def option_parser(doc: str) -> argparse.ArgumentParser:
    """A benchmark's option parser, described by the first paragraph of its
    docstring ``doc``, with ``--data-dir``: $NPCOMP_DATA, else the shared
    data beside the checkout (../shared/data)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("NPCOMP_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data")),
    )
    return parser


def add_threads_option(parser: argparse.ArgumentParser) -> None:
    """``--threads N``: npcomp's worker threads (default: every core)."""
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)


def add_shards_option(parser: argparse.ArgumentParser) -> None:
    """``--shards S``: the shards of an npcomp minibatch (default: npcomp
    train's)."""
    from npcomp.configuration.options import OPTIONS

    parser.add_argument(
        "--shards",
        type=int,
        default=OPTIONS["shards"].default,
        help=f"shards of an npcomp minibatch (default: npcomp train's, {OPTIONS['shards'].default})",
    )


def parse_options(parser: argparse.ArgumentParser, argv) -> argparse.Namespace:
    """``argv`` parsed, ``--json`` (the results file) the last option."""
    parser.add_argument("--json", default=None, help="write the results to this file")
    return parser.parse_args(argv)


def set_up_process(override_blas_threads: bool = False) -> None:
    """As ``npcomp train`` sets up its process: one BLAS thread per worker
    thread, set before NumPy loads (``override_blas_threads``: even where the
    environment asks for more), and freed memory kept for the next minibatch
    (npcomp/training/memory.py)."""
    for variable in BLAS_THREAD_VARIABLES:
        if override_blas_threads:
            os.environ[variable] = "1"
        else:
            os.environ.setdefault(variable, "1")
    from npcomp.training.memory import retain_freed_memory

    retain_freed_memory()


def optional_module(requirement: str, module: str, missing: str):
    """The benchmark module ``module`` (a baseline) when ``requirement`` is
    installed; None, printing ``missing``, when it is not."""
    try:
        importlib.import_module(requirement)
    except ImportError:
        print(missing)
        return None
    return importlib.import_module(module)


def write_results(path: str | None, results: dict) -> None:
    """``results`` as JSON in ``path`` (the ``--json`` option), if given."""
    if path:
        Path(path).write_text(json.dumps(results, indent=2) + "\n")


# ---------------------------------------------------------------------------
# data, starting weights, training
# ---------------------------------------------------------------------------


def load_sst(data_dir: str, **load_options) -> tuple:
    """The SST (``load_task``'s options), the vocabulary of all its splits,
    and its training split encoded: (task, vocabulary, train)."""
    from npcomp.data.readers.embeddings import Vocabulary
    from npcomp.data.datasets.tasks import load_task
    from npcomp.training.encoding import encode

    task = load_task("sst5", data_dir, **load_options)
    vocab = Vocabulary.from_trees(t for split in task.splits.values() for t in split)
    return task, vocab, encode(task.splits["train"], vocab)


def minibatches(rng, n_sentences: int, count: int, batch_size: int) -> tuple:
    """``count`` of ``n_sentences`` sentences drawn by ``rng`` in random
    order, cut into minibatches of ``batch_size``: (order, batches)."""
    order = rng.permutation(n_sentences)[:count]
    return order, [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def initial_parameters(model, rng, dtype):
    """``model``'s starting parameters in ``dtype``: npcomp's initialisation,
    the word vectors uniform in [-0.05, 0.05)."""
    return model.new_parameters(rng, rng.uniform(-0.05, 0.05, (model.vocab_size, model.embedding_dim)), dtype=dtype)


def adagrad(model, lr: float, embedding_lr: float, dtype, rule=None):
    """AdaGrad on ``model``'s parameters at ``lr`` (the word vectors at
    ``embedding_lr``), as ``npcomp train`` makes it; ``rule``: another class
    of the same signature than npcomp's ``AdaGrad``."""
    from npcomp.training.optimizers import AdaGrad

    return (rule or AdaGrad)(
        size=model.layout.size,
        dense_size=model.dense_size,
        embedding_offset=model.layout["embedding"].offset,
        embedding_dim=model.embedding_dim,
        lr=lr,
        embedding_lr=embedding_lr,
        dtype=dtype,
    )


def as_npcomp_trains(params, shards: int, threads: int) -> tuple:
    """(params, processes): whether ``npcomp train`` would compute shards
    1.. on helper processes here (shards.start_shards), and then ``params``
    moved into the memory they share, else ``params`` itself."""
    from npcomp.training.shard_processes import can_fork, share

    processes = threads > 1 and shards > 1 and can_fork()
    return (share(params) if processes else params), processes


def training_step(
    model,
    params,
    optimizer,
    split,
    labels,
    shards: int = 1,
    helpers=None,
    rng=None,
    dropout: float = 0.0,
    l2: float = 0.0,
    threads: int = 1,
    processes: bool = False,
):
    """step(indices, following=None): one training step of ``model`` on
    ``split``'s sentences ``indices`` labelled by ``labels``, as ``npcomp
    train`` takes it (forest building, forward and backward in ``shards``
    shards, dropout masks from ``rng``, the update), cutting the minibatch
    ``following`` (indices) while the helpers finish this one, as
    ``step.train_step`` does (``timed`` passes it).  Shards 1.. run on the
    executor ``helpers`` if given, or with ``processes`` on threads - 1
    helper processes, as ``npcomp train`` runs them where it can fork
    (``params`` must then be shared: ``shard_processes.share``).
    ``step.close()`` stops the processes."""
    import numpy as np

    from npcomp.training.encoding import EncodedSplit
    from npcomp.training.shards import ShardedGradient

    sharded = ShardedGradient(model, params.zeros_like(), shards, helpers)
    if processes and threads > 1:
        sharded.use_processes(params, threads - 1)
    grads = sharded.grads
    labelled = EncodedSplit(split.trees, split.words, labels)

    ahead = []  # (indices, shards) of the minibatch the step before cut

    def step(indices, following=None):
        cut = ahead.pop() if ahead else (None, None)
        parts = cut[1] if np.array_equal(cut[0], indices) else None
        if parts is None:
            parts = sharded.shards_of(params, labelled, indices, rng, dropout=dropout)

        def cut_the_next():
            ahead.append((following, sharded.shards_of(params, labelled, following, rng, dropout=dropout)))

        # the buffers are zero where it matters: the step zeroes what it consumed
        _, rows = sharded.loss_and_gradient(
            params, parts, l2=l2, meanwhile=(None if following is None else cut_the_next)
        )
        optimizer.step(params.flat, grads.flat, rows)

    step.close = sharded.close
    step.looks_ahead = True
    return step


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------


def timed(step, batches) -> float:
    """Seconds ``step`` takes over ``batches``, one call each (with the next
    minibatch too, for a step that ``looks_ahead``: ``training_step``)."""
    ahead = getattr(step, "looks_ahead", False)
    tick = time.perf_counter()
    for k, indices in enumerate(batches):
        if ahead:
            step(indices, batches[k + 1] if k + 1 < len(batches) else None)
        else:
            step(indices)
    return time.perf_counter() - tick


def alternate_epochs(steps: dict, batches, count: int, rounds: int) -> dict:
    """{name: [sentences (pairs) per second of each round]}: every round
    times one epoch of each implementation in ``steps`` in turn (``count``
    sentences in ``batches``), so that each round's speeds compare."""
    speeds = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            speeds[name].append(count / timed(step, batches))
    return speeds


def ratios(ours: list, theirs: list) -> tuple:
    """(median, every round's) ratio of npcomp's speeds to a baseline's."""
    each = [mine / other for mine, other in zip(ours, theirs)]
    return statistics.median(each), each


def best_of_3(function) -> list:
    """The times of 3 calls (the best rejects interference from other processes)."""
    times = []
    for _ in range(3):
        tick = time.perf_counter()
        function()
        times.append(time.perf_counter() - tick)
    return times


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
            out[name] = 2.0 * size**3 * total / (time.perf_counter() - tick) / 1e9
    return out
