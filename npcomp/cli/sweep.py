"""`npcomp sweep`: many `npcomp train` runs over seeds and settings on Dask
distributed, and their statistics per setting (npcomp/experiments/: the SPEC
in sweep_spec.py, the runs in sweep_plan.py, Dask in sweep_cluster.py, the
statistics in sweep_results.py).

Every run is what `npcomp train` would train with the base options, the
setting's and ``--seed S --out SWEEP_DIR/runs/NAME`` (or ``--resume`` when
its checkpoint exists): its configuration built by ``run_config.build_config``
before the cluster starts, so a bad option is refused (exit status 2, naming
the setting and the SPEC line) before anything trains, then trained by
train's own code inside a Dask worker; its failure becomes the message
`npcomp train` would print.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from npcomp.configuration.options import OPTIONS, command_line, form
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

# train options a sweep sets for each run itself, and why
SET_BY_THE_SWEEP = {
    "out": "each run's directory is SWEEP_DIR/runs/SETTING-sSEED (--out is SWEEP_DIR)",
    "seed": "the seeds are given by seeds (--seeds)",
    "resume": "a sweep resumes its unfinished runs by itself when run again",
    "overwrite": "a sweep never replaces a run it finished",
    "threads": "each run's threads are --threads-per-run",
    "quiet": "runs print to SWEEP_DIR/logs/",
    "help_defaults": "it is not a training option",
}

def check_forms(options: dict, where) -> None:
    """SpecError unless every option of ``options`` (config key -> value) is a
    training option in the form it takes and not one the sweep sets itself;
    ``where(option)`` names the place an option was given."""
    from npcomp.configuration.options import OptionFormError
    for option, value in options.items():
        if option in SET_BY_THE_SWEEP:
            raise _refused(where(option), f"{option} is set by the sweep: "
                                          f"{SET_BY_THE_SWEEP[option]}")
        try:
            form(option, value)
        except OptionFormError as error:
            raise _refused(where(option), str(error)) from None


def run_options(run, threads: int, pinned: dict | None = None) -> dict:
    """A fresh run's options as `npcomp train` takes them: its own (paths made
    absolute) over the ``pinned`` options every run of the sweep takes
    without its plan recording them (``run_sweep``), its seed, the fold it
    holds out when cross-validating, and its threads."""
    fold = {} if run.fold is None else {"fold": run.fold}
    return dict(pinned or {}, **absolute_paths(run.options), seed=run.seed, **fold,
                threads=threads)


def run_options_as_given(run, threads: int, pinned: dict | None = None) -> dict:
    """``run_options`` with the paths as given (relative to this directory),
    to check a run's data here before any worker trains it."""
    fold = {} if run.fold is None else {"fold": run.fold}
    return dict(pinned or {}, **run.options, seed=run.seed, **fold, threads=threads)


def config_of(options: dict) -> dict:
    """The configuration of a run given ``options`` (``run_options``; model and
    task among them), as ``run_config.build_config`` builds it."""
    from npcomp.configuration.checks import read
    from npcomp.configuration.run_config import build_config
    options = dict(options)
    model, task = (read(name, options.pop(name, None)) for name in ("model", "task"))
    return build_config(model, task, options)


def resumed_options(run, threads: int) -> dict:
    """The options a resumed run takes anew (the table's resumable ones, paths
    made absolute) and its threads."""
    return dict({key: value for key, value in absolute_paths(run.options).items()
                 if OPTIONS[key].resumable}, threads=threads)


def absolute_paths(options: dict) -> dict:
    """``options`` with the paths relative to this directory made absolute,
    as a worker started elsewhere must read them: the data directory (this
    process's default when not given: $NPCOMP_DATA, else ./data), the parses,
    and a vector file found here (a bare name is looked up in the data
    directory's vectors/)."""
    from npcomp.data.datasets.tasks import default_data_dir
    options = dict(options)
    data_dir = options.get("data_dir")
    options["data_dir"] = str(Path(data_dir if data_dir is not None
                                   else default_data_dir()).resolve())
    for key in ("parses_dir", "train", "dev", "test"):   # the parses, a user's files
        if options.get(key) is not None:
            options[key] = str(Path(options[key]).resolve())
    vectors = options.get("vectors")
    if isinstance(vectors, str) and vectors != "random" and Path(vectors).is_file():
        options["vectors"] = str(Path(vectors).resolve())
    return options


def _refused(where: str, message: str):
    from npcomp.experiments.sweep_spec import SpecError
    return SpecError(f"{where}: {message}")


def add_parser(commands) -> None:
    """The sweep command's options: its own, then every train option as the
    base of the runs."""
    sweep = commands.add_parser(
        "sweep", help="many training runs over seeds and settings, on Dask distributed",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train every setting with every seed, each run an ordinary run directory "
        "SWEEP_DIR/runs/SETTING-sSEED, on a local Dask cluster (127.0.0.1) or an existing one, "
        "then write SWEEP_DIR/sweep.json and sweep.md (per setting: n, mean, sample std, 95% "
        "confidence interval, median, min, max of every test and dev metric; the best setting "
        "by mean dev metric). Settings come from a SPEC file, from --grid, or both; training "
        "options given here are the base of every run (over the SPEC's). Run the same command "
        "again to resume: finished runs are skipped, the others continue from their "
        "checkpoints.", epilog=SPEC_EXAMPLE)
    sweep.add_argument("spec", nargs="?", metavar="SPEC",
                       help="a TOML file: seeds, [base] options, [grid] and [settings.NAME] "
                       "(below)")
    sweep.add_argument("--out", required=True, metavar="SWEEP_DIR",
                       help="the sweep's directory (runs/, logs/, plan.json, sweep.json, "
                       "sweep.md); one holding another sweep is refused")
    sweep.add_argument("--seeds", metavar="SEEDS",
                       help="seeds: 1-5, 1,3,7 or 1-3,10 (default: the SPEC's, else 1)")
    sweep.add_argument("--grid", action="append", metavar="OPTION=V1,V2,...",
                       help="an option and its values (repeat for more options: every "
                       "combination is a setting), e.g. --grid lr=0.05,0.1")
    sweep.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                       help="an existing Dask scheduler (`dask scheduler`) whose workers "
                       "(`dask worker ADDRESS --nthreads 1`) have npcomp installed and see the "
                       "data and SWEEP_DIR at the same paths (default: a local cluster)")
    sweep.add_argument("--workers", type=int, metavar="N",
                       help="worker processes of the local cluster, one run at a time each "
                       "(default: the cores / --threads-per-run)")
    sweep.add_argument("--threads-per-run", type=int, default=1, metavar="T",
                       help="the threads each run computes with (npcomp train --threads T: "
                       "its minibatches' shards at once; BLAS and numba one thread each, pinned "
                       "in the worker; the results do not depend on it) (default 1)")
    sweep.add_argument("--dashboard", nargs="?", const="127.0.0.1:8787", default=None,
                       metavar="ADDRESS", help="serve the local cluster's Dask dashboard "
                       "(default address 127.0.0.1:8787; off unless given)")
    sweep.add_argument("--extend", action="store_true",
                       help="accept a SPEC that adds runs to those SWEEP_DIR holds (more "
                       "seeds, settings); the runs it has must keep their options")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")
    options = sweep.add_argument_group(
        "training options", "the base of every run, as npcomp train takes them (npcomp train "
        "--help); the sweep sets --out, --seed and --threads of each run itself")
    train.add_training_options(options, leave_out=SET_BY_THE_SWEEP)


def build_spec(args):
    """The sweep's SweepSpec: the SPEC file's (if given), with the command
    line's training options, --seeds and --grid over it."""
    from npcomp.experiments.sweep_spec import (SpecError, SweepSpec, grid_from_arguments,
                                               parse_seeds, read_spec)
    spec = read_spec(args.spec) if args.spec else SweepSpec()
    given = {name: value for name, value in vars(args).items()
             if name in OPTIONS and value is not None}
    for name, value in given.items():
        spec.base[name] = value
        spec.command_line.add(("base", name))
    if args.seeds is not None:
        try:
            spec.seeds = parse_seeds(args.seeds)
        except ValueError as error:
            raise SpecError(f"--seeds: {error}") from None
    for name, values in grid_from_arguments(args.grid).items():
        spec.grid[name] = values
        spec.command_line.add(("grid", name))
    return spec


def check_settings(spec, runs: list, threads: int, pinned: dict | None = None) -> None:
    """Every option of every run in the form it takes, and every setting
    built into its run configuration (``config_of``, with the ``pinned``
    options): a bad option raises
    SpecError naming the setting and where it was given; a missing file
    (vectors) is named likewise."""
    from npcomp.errors import ConfigError
    from npcomp.experiments.sweep_plan import settings_of
    from npcomp.experiments.sweep_spec import SpecError
    from npcomp.training.run_data import check_run_data
    from . import failure
    sources = {name: sources for name, (_, sources) in settings_of(spec).items()}
    checked = set()
    for run in runs:
        setting_sources = sources.get(run.setting, {})

        def where(option, setting_sources=setting_sources):
            return spec.where(setting_sources.get(option, "base"), option)
        check_forms(run.options, where)
        if run.setting in checked:
            continue
        checked.add(run.setting)
        try:
            # a user's files read and checked against the model, as the runs will,
            # here at the paths as given, so that a message names a file as given
            check_run_data(config_of(run_options_as_given(run, threads, pinned)))
            continue
        except ConfigError as error:
            option, message = error.option, failure(error)[1]
        except (ValueError, OSError) as error:
            option = "vectors" if _about_vectors(error, run.options) else None
            message = failure(error)[1]
        place = where(option) if option in run.options else spec.where("base")
        raise SpecError(f"setting {run.setting} ({place}): {message}")


def _about_vectors(error: Exception, options: dict) -> bool:
    """Whether ``error`` is about the vector file of a run's ``options``."""
    vectors = options.get("vectors")
    path = getattr(error, "path", None) or getattr(error, "filename", None)
    return "--vectors" in str(error) or (
        isinstance(vectors, str) and path is not None
        and Path(str(path)).resolve() == Path(vectors).resolve())


def train_in_worker(options: dict, resumed: dict, run_dir: str, log_file: str) -> dict:
    """The Dask task of one run: `npcomp train` in this worker, with BLAS
    (threadpoolctl) and numba pinned to one thread per compute thread and
    ``options["threads"]`` compute threads, as `npcomp train --threads`
    runs.  From the run directory it decides: skip a finished run, resume
    one with a checkpoint (with ``resumed``, the options a resumed run takes
    anew), start one afresh (``options``, built by ``config_of``;
    overwriting a run stopped before its first dev evaluation, which holds
    nothing finished).  What the run prints goes to ``log_file``.

    Returns {"status": exit status, "error": message or None, "resumed",
    "threads": {"compute", "blas", "numba"}: the thread counts the run saw,
    "worker": host:pid}; a failure is a value, not an exception, so Dask
    does not retry it (it only resubmits a run whose worker died)."""
    import contextlib
    import socket
    import time

    import numba
    from threadpoolctl import threadpool_info, threadpool_limits

    from npcomp.experiments.sweep_plan import run_state
    from . import outcome
    state = run_state(run_dir)
    seen = {"compute": options["threads"]}
    result = {"status": 0, "error": None, "resumed": state == "resumable",
              "worker": f"{socket.gethostname()}:{os.getpid()}", "threads": seen}
    if state == "finished":
        return result
    if state == "resumable":
        command = ["--resume", run_dir, *command_line(resumed)]
    else:
        command = [*command_line(options), "--out", run_dir] + \
            (["--overwrite"] if state == "started" else [])
    Path(log_file).parent.mkdir(parents=True, exist_ok=True)
    # npcomp's threads overlap independent products themselves: each BLAS call
    # and numba kernel runs on one thread, as cli/__init__.py sets before numpy loads
    with open(log_file, "a", encoding="utf-8") as log, threadpool_limits(limits=1), \
            contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
        numba.set_num_threads(1)
        seen["blas"] = max((pool["num_threads"] for pool in threadpool_info()
                            if pool["user_api"] == "blas"), default=None)
        seen["numba"] = numba.get_num_threads()
        print(f"== {time.strftime('%Y-%m-%d %H:%M:%S')} {result['worker']} ({state}): "
              f"npcomp train --quiet {' '.join(command)}", flush=True)
        if state == "resumable":
            status, message = outcome(train.resume_run, run_dir, resumed, False)
        else:
            status, message = outcome(_train_afresh, options, run_dir, state == "started")
        if message is not None:
            print(f"npcomp train: error: {message}", flush=True)
    result.update(status=status, error=message)
    return result


def _train_afresh(options: dict, run_dir: str, overwrite: bool) -> int:
    return train.train_run(config_of(options), Path(run_dir), set(options),
                           overwrite=overwrite, progress=False)


def _jobs(runs: list, sweep_dir: Path, threads: int, pinned: dict) -> tuple:
    """The task arguments of train_in_worker for each run not finished (run
    name -> tuple; ``pinned``: as ``run_options``), and how many runs are in
    each state (run_state)."""
    from npcomp.experiments.sweep_plan import PLAN, log_path, run_directory, run_state
    jobs, states = {}, {}
    for run in runs:
        run_dir = run_directory(sweep_dir, run)
        state = run_state(run_dir)
        states[state] = states.get(state, 0) + 1
        if state == "finished":
            continue
        # a run planned by an earlier SPEC (--extend) was checked then; one
        # whose options cannot be passed on is named by the plan
        check_forms(run.options, lambda option: str(sweep_dir / PLAN))
        # absolute: a worker of an existing cluster runs in a directory of its own
        jobs[run.name] = (run_options(run, threads, pinned), resumed_options(run, threads),
                          str(run_dir.resolve()),
                          str(log_path(sweep_dir, run).resolve()))
    return jobs, states


def run(args) -> int:
    from npcomp.errors import ConfigError
    from npcomp.experiments.sweep_results import RESULTS, TABLE, results_table
    if args.threads_per_run < 1:
        raise ConfigError("threads_per_run", f"must be a whole number >= 1, not "
                                             f"{args.threads_per_run}")
    if args.workers is not None and args.workers < 1:
        raise ConfigError("workers", f"must be a whole number >= 1, not {args.workers}")
    if args.scheduler and (args.workers is not None or args.dashboard):
        raise ConfigError("scheduler", "an existing cluster has its own workers and "
                                       "dashboard: --workers and --dashboard apply to the "
                                       "local cluster only")
    spec = build_spec(args)
    status, results = run_sweep(spec, Path(args.out), args)
    if results is not None:
        print(results_table(results))
        print(f"written: {Path(args.out) / RESULTS}, "
              f"{Path(args.out) / TABLE}")
    return status


def run_sweep(spec, sweep_dir: Path, args, pinned: dict | None = None) -> tuple:
    """Plan, check and run the sweep ``spec`` into ``sweep_dir`` on the
    cluster ``args`` asks for (``scheduler``, ``workers``,
    ``threads_per_run``, ``dashboard``, ``quiet``, ``extend``); write
    sweep.json and sweep.md.  Returns (exit status, the results record, or
    None when interrupted).

    ``pinned``: options every fresh run takes unless its setting gives them,
    which the plan does not record (a paper table's one shard, which its
    committed plans predate).  A sweep holding runs made before an option
    existed pins it at the value they ran at (``sweep_plan.predating_options``):
    the runs it starts now train as they did."""
    from npcomp.experiments.scheduler import check_scheduler
    from npcomp.experiments.sweep_plan import plan_runs, sweep_lock
    planned = plan_runs(spec)
    check_settings(spec, planned, args.threads_per_run, pinned)
    if args.scheduler:   # a scheduler that is none is refused before anything is written
        check_scheduler(args.scheduler)
    # one sweep at a time in a directory: a second one planning and reporting its
    # runs while the first trains them would report states that contradict its
    with sweep_lock(sweep_dir):
        return _locked_sweep(spec, planned, sweep_dir, args, pinned)


def _locked_sweep(spec, planned: list, sweep_dir: Path, args, pinned: dict | None) -> tuple:
    """``run_sweep`` once this process holds SWEEP_DIR."""
    from npcomp.experiments.sweep_cluster import dask_client, execute
    from npcomp.experiments.sweep_plan import predating_options, settle_plan
    from npcomp.experiments.sweep_results import settle_finished, sweep_results, write_results
    from . import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
    runs = settle_plan(sweep_dir, spec, planned, extend=args.extend)
    pinned = {**predating_options(sweep_dir, runs), **(pinned or {})}
    to_do, states = _jobs(runs, sweep_dir, args.threads_per_run, pinned)
    finished_before = len(runs) - len(to_do)
    settings = len({run.setting for run in runs})
    print(f"sweep {sweep_dir}: {len(runs)} run{'s' * (len(runs) > 1)} "
          f"({settings} setting{'s' * (settings > 1)}, "
          f"seeds {','.join(map(str, spec.seeds))}): {finished_before} finished before, "
          f"{states.get('resumable', 0)} to resume, "
          f"{states.get('new', 0) + states.get('started', 0)} to start", flush=True)
    outcomes = {}
    if to_do:
        workers = args.workers or max(1, (os.cpu_count() or 1) // args.threads_per_run)
        workers = min(workers, len(to_do))
        try:
            with dask_client(args.scheduler, workers, args.dashboard) as client:
                where = args.scheduler or f"a local cluster of {workers} worker processes"
                print(f"on {where}, {args.threads_per_run} thread"
                      f"{'s' * (args.threads_per_run > 1)} per run"
                      + (f"; dashboard {client.dashboard_link}" if args.dashboard else ""),
                      flush=True)
                outcomes = execute(client, to_do, train_in_worker, progress=not args.quiet,
                                   already_finished=finished_before, total=len(runs))
        except KeyboardInterrupt:
            results = sweep_results(sweep_dir, runs, outcomes)
            write_results(sweep_dir, results)
            stopped = ("the workers training its runs restarted" if args.scheduler else
                       "the cluster stopped")
            print(f"\nnpcomp: interrupted, {stopped}; every run is saved as of its "
                  "latest dev evaluation: run the same command again to continue "
                  f"({results['finished']} of {len(runs)} runs finished)", file=sys.stderr)
            return EXIT_INTERRUPTED, None
    settle_finished(sweep_dir, runs)
    results = sweep_results(sweep_dir, runs, outcomes)
    write_results(sweep_dir, results)
    if results["finished"] == len(runs):
        return EXIT_OK, results
    stopped = sum(outcome.get("status", 0) is None for outcome in outcomes.values())
    if stopped:
        print(f"npcomp: the cluster dropped {stopped} of {len(runs)} runs (its scheduler "
              "lost); each is kept as of its latest dev evaluation, though a worker that had "
              "one may go on training it: run the same command again, on a scheduler or "
              "without --scheduler, to continue", file=sys.stderr)
        return EXIT_FAILED, results
    print(f"npcomp: {results['failed'] + results['unfinished']} of {len(runs)} runs did "
          "not finish (each named in the table with its error)", file=sys.stderr)
    return EXIT_FAILED, results
