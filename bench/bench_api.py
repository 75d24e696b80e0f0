"""The Python API against the command line: one SST epoch of the
Constituency (N-ary) Tree-LSTM at its sst5 paper setting, fitted by
``npcomp.TreeClassifier`` in a process that loaded NumPy first, as a user's
script does, and trained by `npcomp train` in a process of its own, epochs
alternating.

    python bench/bench_api.py [--data-dir DIR] [--rounds R] [--threads N]
                              [--sentences N] [--busy] [--without-pinning]
                              [--seed S] [--out FILE]

This process imports NumPy before npcomp with none of OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS, MKL_NUM_THREADS, NUMBA_NUM_THREADS set (it starts itself
again without them if they are), so OpenBLAS comes up on every core, as in
a user's script.  Each round fits
``TreeClassifier.from_paper("treelstm-nary", "sst5", epochs=1, threads=N)``
here and runs ``npcomp train --model treelstm-nary --task sst5 --epochs 1
--threads N`` as a subprocess (which pins BLAS before NumPy loads), in
turn, the one that goes first alternating from round to round; both with
the same seed, no bag-of-words baseline and no training-set accuracy (the
evaluation is not timed anyway).  Printed per round: the training
sentences per second of each (``train_sentences_per_s`` of their metrics:
forward, backward and update; setup and evaluation excluded), their ratio
API / CLI and whether the per-epoch training losses are identical; then
the median ratio over the rounds.  Acceptance: the API at 0.95x
the CLI or more, the losses identical, on a quiet machine and with
another process busy on one core (``--busy``).

``--busy`` starts a process spinning in a loop for the whole benchmark,
pinned to the last core where the platform allows: a machine where
another program holds a core.  ``--without-pinning`` runs the API's calls
without the library's pinned thread pools (``npcomp/training/thread_pools.py``),
as the estimators ran before they had them: what the pinning saves.
``--sentences N`` trains on the SST's first N training sentences (and the
first N/4 of dev and test, at least 50), written to a temporary data
directory both read, for a quick run.  These machines are shared and
their speed drifts within minutes: the ratio of epochs timed side by
side is the comparable figure.  Results also as JSON (``--out``).  A
benchmark, not a test.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import add_threads_option, option_parser, write_results  # loads no NumPy

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
if __name__ == "__main__" and any(variable in os.environ for variable in THREAD_VARIABLES):
    # a user's script has none of them: start again without
    os.execve(
        sys.executable,
        [sys.executable, os.path.abspath(__file__), *sys.argv[1:]],
        {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES},
    )

import numpy  # noqa: E402,F401  before npcomp, as a user's script: OpenBLAS on every core

MODEL, TASK = "treelstm-nary", "sst5"
ACCEPTED_RATIO = 0.95


def blas_threads() -> list:
    """The thread counts of the BLAS pools loaded in this process."""
    from threadpoolctl import threadpool_info

    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})


def data_directory(data_dir: str, sentences: int | None, scratch: Path) -> Path:
    """The data directory both sides read: ``data_dir``, or with
    ``sentences`` a temporary one holding the first ``sentences`` lines of
    the SST's training file and the first quarter as many (at least 50) of
    dev and test."""
    source = Path(data_dir) / "sst"
    if sentences is None:
        return Path(data_dir)
    target = scratch / "data"
    (target / "sst").mkdir(parents=True)
    for split, count in (("train", sentences), ("dev", max(sentences // 4, 50)), ("test", max(sentences // 4, 50))):
        with open(source / f"{split}.txt", encoding="utf-8") as lines:
            kept = [line for _, line in zip(range(count), lines)]
        (target / "sst" / f"{split}.txt").write_text("".join(kept), encoding="utf-8")
    return target


def api_epoch(splits: dict, threads: int, seed: int) -> dict:
    """One epoch fitted through the estimator in this process."""
    from npcomp import TreeClassifier

    classifier = TreeClassifier.from_paper(MODEL, TASK, epochs=1, threads=threads, seed=seed, train_eval=False)
    classifier.fit(splits["train"], dev=splits["dev"], test=splits["test"])
    return _record(classifier.metrics_)


def cli_epoch(data_dir: Path, threads: int, seed: int, run_dir: Path) -> dict:
    """One epoch of `npcomp train` in a process of its own."""
    command = [
        sys.executable,
        "-m",
        "npcomp",
        "train",
        "--model",
        MODEL,
        "--task",
        TASK,
        "--data-dir",
        str(data_dir),
        "--epochs",
        "1",
        "--threads",
        str(threads),
        "--seed",
        str(seed),
        "--no-baseline",
        "--no-train-eval",
        "--quiet",
        "--out",
        str(run_dir),
    ]
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{finished.stderr}")
    return _record(json.loads((run_dir / "metrics.json").read_text()))


def _record(metrics: dict) -> dict:
    return {
        "sentences_per_s": metrics["train_sentences_per_s"],
        "losses": [epoch["train_loss"] for epoch in metrics["epochs"]],
        "dev_root_acc": metrics["dev"]["root_acc"],
    }


def busy_loop():
    """A process spinning for as long as it lives, pinned to the last core
    where the platform allows (None where it does not)."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    core = None
    if hasattr(os, "sched_setaffinity"):
        core = max(os.sched_getaffinity(0))
        os.sched_setaffinity(busy.pid, {core})
    return busy, core


def without_pinning() -> None:
    """The library's pinned thread pools made to do nothing (--without-pinning)."""
    from npcomp.training import thread_pools

    thread_pools.pinned_thread_pools.__enter__ = lambda self: self
    thread_pools.pinned_thread_pools.__exit__ = lambda self, *exception: False


def rounds(args, data_dir: Path, scratch: Path) -> list:
    """Every round's API and CLI epochs, the first of the two alternating."""
    from npcomp.data.datasets.tasks import load_task

    task = load_task(TASK, data_dir)
    splits = {split: task.splits[split] for split in ("train", "dev", "test")}
    records = []
    for number in range(1, args.rounds + 1):
        sides = ["api", "cli"] if number % 2 else ["cli", "api"]
        record = {"round": number, "first": sides[0]}
        for side in sides:
            record[side] = (
                api_epoch(splits, args.threads, args.seed)
                if side == "api"
                else cli_epoch(data_dir, args.threads, args.seed, scratch / f"run-{number}")
            )
        record["ratio"] = record["api"]["sentences_per_s"] / record["cli"]["sentences_per_s"]
        record["identical_losses"] = record["api"]["losses"] == record["cli"]["losses"]
        records.append(record)
        print(
            f"round {number} ({sides[0]} first): API {record['api']['sentences_per_s']:,.0f} "
            f"sent/s, CLI {record['cli']['sentences_per_s']:,.0f} sent/s, ratio "
            f"{record['ratio']:.3f}; loss API {record['api']['losses'][0]!r}, CLI "
            f"{record['cli']['losses'][0]!r}: "
            f"{'identical' if record['identical_losses'] else 'DIFFERENT'}",
            flush=True,
        )
    return records


def main(argv=None) -> int:
    parser = option_parser(__doc__)
    add_threads_option(parser)
    parser.add_argument("--rounds", type=int, default=5, help="API and CLI epochs timed side by side (default 5)")
    parser.add_argument(
        "--sentences", type=int, default=None, help="train on the SST's first N training sentences (default: all)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--busy", action="store_true", help="keep one core busy with another process throughout")
    parser.add_argument(
        "--without-pinning", action="store_true", help="the API without the library's pinned thread pools (as before)"
    )
    parser.add_argument("--out", "--json", dest="out", default=None, help="write the results to this JSON file")
    args = parser.parse_args(argv)
    if args.rounds < 1 or (args.sentences is not None and args.sentences < 1):
        parser.error("--rounds and --sentences take a positive count")
    from npcomp.runfiles.machine import machine_description

    if args.without_pinning:
        without_pinning()
    user_blas = blas_threads()
    busy, core = busy_loop() if args.busy else (None, None)
    condition = (
        f"another process busy on core {core}" if core is not None else "another process busy" if args.busy else "quiet"
    )
    print(
        f"{MODEL} on {TASK}, one epoch, {args.threads} thread(s), "
        f"{args.sentences or 'all'} training sentences; this process loaded NumPy first "
        f"(BLAS pools at {user_blas} threads); {condition}"
        f"{'; API WITHOUT the pinned thread pools' if args.without_pinning else ''}",
        flush=True,
    )
    try:
        with tempfile.TemporaryDirectory(prefix="bench_api-") as scratch:
            scratch = Path(scratch)
            records = rounds(args, data_directory(args.data_dir, args.sentences, scratch), scratch)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    ratio = statistics.median(record["ratio"] for record in records)
    identical = all(record["identical_losses"] for record in records)
    met = ratio >= ACCEPTED_RATIO and identical
    print(
        f"API / CLI: median ratio {ratio:.3f} over {len(records)} round(s) "
        f"({', '.join(format(record['ratio'], '.3f') for record in records)}); losses "
        f"{'identical in every round' if identical else 'DIFFER'}; BLAS pools here after: "
        f"{blas_threads()} threads"
    )
    print(f"acceptance (API >= {ACCEPTED_RATIO}x the CLI, losses identical): {'met' if met else 'NOT met'}")
    write_results(
        args.out,
        {
            "model": MODEL,
            "task": TASK,
            "threads": args.threads,
            "sentences": args.sentences,
            "seed": args.seed,
            "condition": condition,
            "pinned": not args.without_pinning,
            "user_blas_threads": user_blas,
            "rounds": records,
            "median_ratio": ratio,
            "identical_losses": identical,
            "accepted": met,
            "machine": machine_description(),
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
