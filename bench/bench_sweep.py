"""Four runs as one sweep on two single-thread workers, against the same four
runs one after another with two threads each.

    python bench/bench_sweep.py --data-dir ../shared/data [--json FILE]
    python bench/bench_sweep.py --data-dir ../shared/data --quick   # does it work?

The runs: the Constituency Tree-LSTM on the SST (``--model treelstm-nary
--task sst5``, Tai et al.'s settings), seeds 1-4, two epochs each.

* sweep: ``npcomp sweep --seeds 1-4 --workers 2 --threads-per-run 1``, a
  local Dask cluster of two worker processes, each run on one thread;
* one after another: ``npcomp train --seed S --threads 2`` four times, each
  run on two threads (each minibatch's two shards computed at once: the
  fastest one run goes on two cores).

Both are child processes of this one, one after the other on the same
machine, after a short run has compiled numba's kernels into the cache both
read. It prints each way's wall time from command start to exit (reading the
data, training, dev and test evaluation, writing the runs), training
sentences per second of that wall time, the runs' own training speed, and
the ratio of the two throughputs (the target: at least 1.6: two runs at once
on one core each against one run's two threads).

``--quick`` takes the first 400 training and 100 dev and test sentences of
the SST (copied into a scratch data directory) and one epoch: a check that
the benchmark runs, not a measurement. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODEL = ["--model", "treelstm-nary", "--task", "sst5"]
SEEDS = (1, 2, 3, 4)


def npcomp(*arguments: str) -> float:
    """Run ``npcomp ARGUMENTS`` in a child process; its wall time in seconds."""
    command = [sys.executable, "-m", "npcomp", *arguments]
    tick = time.perf_counter()
    finished = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - tick
    if finished.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed (exit status {finished.returncode}):\n{finished.stderr[-3000:]}"
        )
    return wall


def runs_record(run_dirs: list, wall_s: float) -> dict:
    """Throughput of runs that took ``wall_s`` together: training examples
    over that wall time, and each run's own training speed (metrics.json)."""
    metrics = [json.loads((Path(run_dir) / "metrics.json").read_text()) for run_dir in run_dirs]
    examples = sum(epoch["train_examples"] for run in metrics for epoch in run["epochs"])
    return {
        "wall_s": wall_s,
        "train_examples": examples,
        "examples_per_wall_s": examples / wall_s,
        "runs_train_sentences_per_s": [run["train_sentences_per_s"] for run in metrics],
        "test_root_acc": [run["test"]["root_acc"] for run in metrics],
    }


def scratch_data(data_dir: Path, scratch: Path, sizes=(400, 100, 100)) -> Path:
    """A data directory with the first lines of the SST's splits (--quick)."""
    target = scratch / "data" / "sst"
    target.mkdir(parents=True)
    for split, size in zip(("train", "dev", "test"), sizes):
        lines = (data_dir / "sst" / f"{split}.txt").read_text(encoding="utf-8").splitlines()
        (target / f"{split}.txt").write_text("\n".join(lines[:size]) + "\n", encoding="utf-8")
    return target.parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("NPCOMP_DATA", "data"),
        help="the data directory, with sst/ (default $NPCOMP_DATA, else ./data)",
    )
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="400 training sentences, one epoch: a check that it runs")
    parser.add_argument(
        "--keep", metavar="DIR", help="write the runs here and keep them (default: a scratch directory)"
    )
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir)
    if not (data_dir / "sst" / "train.txt").is_file():
        parser.error(
            f"{data_dir / 'sst' / 'train.txt'}: not found (--data-dir: the data directory of `npcomp download sst`)"
        )
    epochs = 1 if args.quick else args.epochs
    with tempfile.TemporaryDirectory(prefix="npcomp-bench-sweep-") as scratch:
        work = Path(args.keep) if args.keep else Path(scratch)
        if args.quick:
            data_dir = scratch_data(data_dir, Path(scratch))
        common = [*MODEL, "--data-dir", str(data_dir), "--epochs", str(epochs), "--quiet"]
        # numba compiles each kernel once and caches it: not in either timing
        npcomp(
            "train",
            *MODEL[:2],
            "--task",
            "synthetic",
            "--epochs",
            "1",
            "--no-baseline",
            "--quiet",
            "--out",
            str(work / "compile"),
        )
        print(
            f"{len(SEEDS)} runs of {' '.join(MODEL)}, {epochs} epoch"
            f"{'s' * (epochs > 1)} each{' (--quick)' if args.quick else ''}, "
            f"{os.cpu_count()} cores",
            flush=True,
        )

        sequential_dirs = [work / "sequential" / f"s{seed}" for seed in SEEDS]
        wall = sum(
            npcomp("train", *common, "--seed", str(seed), "--threads", "2", "--out", str(run_dir))
            for seed, run_dir in zip(SEEDS, sequential_dirs)
        )
        sequential = runs_record(sequential_dirs, wall)
        report("one after another, 2 threads each", sequential)

        sweep_dir = work / "sweep"
        wall = npcomp(
            "sweep",
            *common,
            "--seeds",
            f"{SEEDS[0]}-{SEEDS[-1]}",
            "--workers",
            "2",
            "--threads-per-run",
            "1",
            "--out",
            str(sweep_dir),
        )
        swept = runs_record([sweep_dir / "runs" / f"base-s{seed}" for seed in SEEDS], wall)
        report("npcomp sweep, 2 workers x 1 thread", swept)

        ratio = swept["examples_per_wall_s"] / sequential["examples_per_wall_s"]
        print(f"throughput ratio, sweep / one after another: {ratio:.2f}x (target >= 1.6)")
        if args.json:
            Path(args.json).write_text(
                json.dumps(
                    {
                        "epochs": epochs,
                        "quick": args.quick,
                        "cpu_count": os.cpu_count(),
                        "sequential": sequential,
                        "sweep": swept,
                        "ratio": ratio,
                    },
                    indent=2,
                )
                + "\n"
            )
    return 0


def report(label: str, record: dict) -> None:
    speeds = ", ".join(f"{speed:.0f}" for speed in record["runs_train_sentences_per_s"])
    print(
        f"{label:<36} {record['wall_s']:8.1f} s wall, {record['examples_per_wall_s']:7.1f} "
        f"training sentences per second of it (the runs train at {speeds}/s)",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
