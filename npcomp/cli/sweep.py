"""`npcomp sweep`: many `npcomp train` runs over seeds and settings on Dask
distributed, and their statistics per setting (``npcomp.runs.sweep``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from npcomp.experiments.sweep_jobs import SET_BY_THE_SWEEP
from npcomp.configuration.options import OPTIONS

from . import train

SPEC_EXAMPLE = """\
A SPEC file (TOML):

  seeds = "1-5"               # or [1, 2, 3]
  [base]                      # any npcomp train option, named as its flag
  model = "treelstm-nary"
  task = "sst5"
  data-dir = "/shared/data"
  [grid]                      # every combination of these values
  lr = [0.05, 0.1]
  [settings.glove]            # named settings, each combined with the grid
  vectors = "glove.6B.50d.sst-sick.txt"
  [settings.random]
  vectors = "random"

gives the settings glove-lr0.05, glove-lr0.1, random-lr0.05, random-lr0.1 and
the runs SWEEP_DIR/runs/glove-lr0.05-s1 ... random-lr0.1-s5. Switches take
true or false (fixed-embeddings = true, baseline = false).

Exit status: 0 when every run finished, 1 when some failed (each is named
with its error; the others go on), 2 for a bad SPEC or option (named by file
and line, or by setting), 130 when interrupted (every run stays resumable:
run the same command again).
"""


def add_parser(commands) -> None:
    """The sweep command's options: its own, then every train option as the
    base of the runs."""
    sweep = commands.add_parser(
        "sweep",
        help="many training runs over seeds and settings, on Dask distributed",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train every setting with every seed, each run an ordinary run directory "
        "SWEEP_DIR/runs/SETTING-sSEED, on a local Dask cluster (127.0.0.1) or an existing one, "
        "then write SWEEP_DIR/sweep.json and sweep.md (per setting: n, mean, sample std, 95% "
        "confidence interval, median, min, max of every test and dev metric; the best setting "
        "by mean dev metric). Settings come from a SPEC file, from --grid, or both; training "
        "options given here are the base of every run (over the SPEC's). Run the same command "
        "again to resume: finished runs are skipped, the others continue from their "
        "checkpoints.",
        epilog=SPEC_EXAMPLE,
    )
    sweep.add_argument(
        "spec", nargs="?", metavar="SPEC", help="a TOML file: seeds, [base] options, [grid] and [settings.NAME] (below)"
    )
    sweep.add_argument(
        "--out",
        required=True,
        metavar="SWEEP_DIR",
        help="the sweep's directory (runs/, logs/, plan.json, sweep.json, "
        "sweep.md); one holding another sweep is refused",
    )
    sweep.add_argument("--seeds", metavar="SEEDS", help="seeds: 1-5, 1,3,7 or 1-3,10 (default: the SPEC's, else 1)")
    sweep.add_argument(
        "--grid",
        action="append",
        metavar="OPTION=V1,V2,...",
        help="an option and its values (repeat for more options: every "
        "combination is a setting), e.g. --grid lr=0.05,0.1",
    )
    _cluster_options(sweep)
    sweep.add_argument(
        "--extend",
        action="store_true",
        help="accept a SPEC that adds runs to those SWEEP_DIR holds (more "
        "seeds, settings); the runs it has must keep their options",
    )
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    options = sweep.add_argument_group(
        "training options",
        "the base of every run, as npcomp train takes them (npcomp train "
        "--help); the sweep sets --out, --seed and --threads of each run itself",
    )
    train.add_training_options(options, leave_out=SET_BY_THE_SWEEP)


def _cluster_options(sweep) -> None:
    """sweep's options of the Dask cluster the runs train on."""
    sweep.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="an existing Dask scheduler (`dask scheduler`) whose workers "
        "(`dask worker ADDRESS --nthreads 1`) have npcomp installed and see the "
        "data and SWEEP_DIR at the same paths (default: a local cluster)",
    )
    sweep.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes of the local cluster, one run at a time each (default: the cores / --threads-per-run)",
    )
    sweep.add_argument(
        "--threads-per-run",
        type=int,
        default=1,
        metavar="T",
        help="the threads each run computes with (npcomp train --threads T: "
        "its minibatches' shards at once; BLAS and numba one thread each, pinned "
        "in the worker; the results do not depend on it) (default 1)",
    )
    sweep.add_argument(
        "--dashboard",
        nargs="?",
        const="127.0.0.1:8787",
        default=None,
        metavar="ADDRESS",
        help="serve the local cluster's Dask dashboard (default address 127.0.0.1:8787; off unless given)",
    )


def run(args) -> int:
    from npcomp.experiments.sweep_results import RESULTS, TABLE, results_table
    from npcomp.runs import sweep

    options = {name: value for name, value in vars(args).items() if name in OPTIONS}
    result = sweep(
        args.spec,
        out=args.out,
        seeds=args.seeds,
        grid=args.grid,
        scheduler=args.scheduler,
        workers=args.workers,
        threads_per_run=args.threads_per_run,
        dashboard=args.dashboard,
        extend=args.extend,
        quiet=args.quiet,
        **options,
    )
    if result.results is not None:
        print(results_table(result.results))
        print(f"written: {Path(args.out) / RESULTS}, {Path(args.out) / TABLE}")
    return result.status
