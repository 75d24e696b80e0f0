"""Time to the first epoch of every model, with its kernels compiled and then cached.

    python bench/bench_startup.py [--models a,b,...] [--threads N] [--json FILE]

numba compiles a kernel the first time a process calls it and writes the
machine code to its cache; later processes load it from there. For each model
this runs ``npcomp train --task synthetic --epochs 1`` twice, each in a new
process, with ``NUMBA_CACHE_DIR`` pointed at a new empty directory of the
model's own: the first run ("cold") compiles every kernel the model uses, the
second ("warm") loads them from the cache the first one wrote. For each run it
prints

* the process's wall time (interpreter start to exit: imports, building the
  synthetic treebank, one training epoch, evaluation, writing the run),
* ``setup_s`` from its metrics.json, the seconds from the trainer's start to
  the first minibatch (the data, the parameters and the kernels), and
  ``warm_up_s``, the part of them spent compiling or loading kernels,
* the training time of the epoch (the 3,000 synthetic training sentences;
  for the sequence models, every labelled span of them).

The synthetic task exercises every kernel of the tree and sequence models
except the relatedness head's, which only the ``sick`` task calls. A
benchmark, not a test.
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


def timed_run(model: str, cache_dir: Path, run_dir: Path, threads: int) -> dict:
    """One ``npcomp train`` process; its wall time and its metrics' timings."""
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    command = [
        sys.executable,
        "-m",
        "npcomp",
        "train",
        "--model",
        model,
        "--task",
        "synthetic",
        "--epochs",
        "1",
        "--no-baseline",
        "--quiet",
        "--threads",
        str(threads),
        "--out",
        str(run_dir),
    ]
    tick = time.perf_counter()
    finished = subprocess.run(command, env=environment, capture_output=True, text=True)
    wall = time.perf_counter() - tick
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{finished.stderr}")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    return {
        "wall_s": wall,
        "setup_s": metrics["setup_s"],
        "warm_up_s": metrics["warm_up_s"],
        "epoch_s": metrics["epochs"][0]["wall_s"],
    }


def main(argv=None) -> int:
    from npcomp.cells.registry import MODELS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated model names (default: every model)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    models = [name for name in args.models.split(",") if name]
    unknown = sorted(set(models) - set(MODELS))
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)}")

    results = {"threads": args.threads, "cpu_count": os.cpu_count(), "models": {}}
    print(f"{'model':<22}{'':>6}{'wall s':>9}{'setup s':>9}{'kernels s':>11}{'epoch s':>9}")
    with tempfile.TemporaryDirectory(prefix="npcomp-startup-") as scratch:
        for name in models:
            cache_dir = Path(scratch) / name / "numba-cache"
            cache_dir.mkdir(parents=True)
            record = {}
            for state in ("cold", "warm"):
                record[state] = timed_run(name, cache_dir, Path(scratch) / name / state, args.threads)
                timing = record[state]
                print(
                    f"{name if state == 'cold' else '':<22}{state:>6}{timing['wall_s']:>9.1f}"
                    f"{timing['setup_s']:>9.1f}{timing['warm_up_s']:>11.1f}"
                    f"{timing['epoch_s']:>9.2f}",
                    flush=True,
                )
            results["models"][name] = record
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
