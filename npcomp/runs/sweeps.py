"""``sweep``: many `npcomp train` runs over seeds and settings on Dask
distributed, and their statistics per setting (the SPEC in
experiments/sweep_spec.py, the runs in sweep_plan.py, each run's task in
sweep_jobs.py and sweep_task.py, Dask in sweep_cluster.py, the statistics in
sweep_results.py).

Every run is what `npcomp train` would train with the base options, the
setting's and ``--seed S --out SWEEP_DIR/runs/NAME`` (or ``--resume`` when
its checkpoint exists): its configuration built by ``run_config.build_config``
before the cluster starts, so a bad option is refused (naming the setting
and the SPEC line) before anything trains, then trained inside a Dask
worker; its failure becomes the message `npcomp train` would print.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SweepCluster:
    """Where and how a sweep's runs are carried out: an existing Dask
    ``scheduler`` (tcp://HOST:PORT) or a local cluster of ``workers``
    processes (default: the cores / ``threads_per_run``), the threads of
    each run, the local cluster's ``dashboard``; ``quiet``: no progress bar;
    ``extend``: a SPEC may add runs to those the directory holds."""

    scheduler: str | None = None
    workers: int | None = None
    threads_per_run: int = 1
    dashboard: str | None = None
    quiet: bool = False
    extend: bool = False


@dataclass(frozen=True)
class SweepResult:
    """A sweep carried out: its directory, exit status (0: every run
    finished; 1: some did not; 130: interrupted), the record of sweep.json
    (None when interrupted), the runs (name -> status) and the failures
    (name -> error)."""

    sweep_dir: Path
    status: int
    results: dict | None
    runs: dict
    failures: dict

    @property
    def files(self) -> tuple:
        """sweep.json and sweep.md (written unless interrupted)."""
        from npcomp.experiments.sweep_results import RESULTS, TABLE

        return (self.sweep_dir / RESULTS, self.sweep_dir / TABLE)


def sweep(
    spec=None,
    *,
    out,
    seeds: str | None = None,
    grid=None,
    scheduler: str | None = None,
    workers: int | None = None,
    threads_per_run: int = 1,
    dashboard: str | None = None,
    extend: bool = False,
    quiet: bool = False,
    **options,
) -> SweepResult:
    """`npcomp sweep [SPEC] --out SWEEP_DIR ...` from Python: every setting
    of the SPEC file ``spec`` (and of ``grid``, ["lr=0.05,0.1", ...]) with
    every seed (``seeds``: "1-5", "1,3"), each run an ordinary run directory
    SWEEP_DIR/runs/SETTING-sSEED trained on Dask (a local cluster on
    127.0.0.1, or ``scheduler``), then SWEEP_DIR/sweep.json and sweep.md.
    ``options``: training options (config keys, as `npcomp train` takes
    them) that are the base of every run.  Running it again resumes.
    ConfigError names a cluster setting out of range; SpecError a bad SPEC
    or setting, before anything trains."""
    from npcomp.errors import ConfigError

    if threads_per_run < 1:
        raise ConfigError("threads_per_run", f"must be a whole number >= 1, not {threads_per_run}")
    if workers is not None and workers < 1:
        raise ConfigError("workers", f"must be a whole number >= 1, not {workers}")
    if scheduler and (workers is not None or dashboard):
        raise ConfigError(
            "scheduler",
            "an existing cluster has its own workers and "
            "dashboard: --workers and --dashboard apply to the "
            "local cluster only",
        )
    cluster = SweepCluster(scheduler, workers, threads_per_run, dashboard, quiet, extend)
    built = build_spec(spec, seeds, grid, options)
    status, results = run_sweep(built, Path(out), cluster)
    return sweep_result(Path(out), status, results)


def sweep_result(sweep_dir: Path, status: int, results: dict | None) -> SweepResult:
    """The SweepResult of a sweep's record (sweep.json's)."""
    records = (results or {}).get("runs", {})
    runs = {name: record["status"] for name, record in records.items()}
    failures = {name: record.get("error") for name, record in records.items() if record["status"] == "failed"}
    return SweepResult(sweep_dir, status, results, runs, failures)


def build_spec(spec_file=None, seeds: str | None = None, grid=None, options=None):
    """The sweep's SweepSpec: the SPEC file's (if given), with the training
    ``options`` given (config key -> value; None: not given), ``seeds``
    ("1-5") and ``grid`` (["lr=0.05,0.1", ...]) over it."""
    from npcomp.experiments.sweep_spec import (
        SpecError,
        SweepSpec,
        grid_from_arguments,
        parse_seeds,
        read_spec,
    )

    spec = read_spec(spec_file) if spec_file else SweepSpec()
    given = {name: value for name, value in (options or {}).items() if value is not None}
    for name, value in given.items():
        spec.base[name] = value
        spec.command_line.add(("base", name))
    if seeds is not None:
        try:
            spec.seeds = parse_seeds(seeds)
        except ValueError as error:
            raise SpecError(f"--seeds: {error}") from None
    for name, values in grid_from_arguments(grid).items():
        spec.grid[name] = values
        spec.command_line.add(("grid", name))
    return spec


def run_sweep(spec, sweep_dir: Path, args: SweepCluster, pinned: dict | None = None) -> tuple:
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
    from npcomp.experiments.sweep_jobs import check_settings
    from npcomp.experiments.sweep_plan import plan_runs, sweep_lock

    planned = plan_runs(spec)
    check_settings(spec, planned, args.threads_per_run, pinned)
    if args.scheduler:  # a scheduler that is none is refused before anything is written
        check_scheduler(args.scheduler)
    # one sweep at a time in a directory: a second one planning and reporting its
    # runs while the first trains them would report states that contradict its
    with sweep_lock(sweep_dir):
        return _locked_sweep(spec, planned, sweep_dir, args, pinned)


def _locked_sweep(spec, planned: list, sweep_dir: Path, args: SweepCluster, pinned: dict | None) -> tuple:
    """``run_sweep`` once this process holds SWEEP_DIR."""
    from npcomp.experiments.failures import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
    from npcomp.experiments.sweep_cluster import dask_client, execute
    from npcomp.experiments.sweep_jobs import sweep_jobs
    from npcomp.experiments.sweep_plan import predating_options, settle_plan
    from npcomp.experiments.sweep_results import (
        settle_finished,
        sweep_results,
        write_results,
    )

    runs = settle_plan(sweep_dir, spec, planned, extend=args.extend)
    pinned = {**predating_options(sweep_dir, runs), **(pinned or {})}
    to_do, states = sweep_jobs(runs, sweep_dir, args.threads_per_run, pinned)
    finished_before = len(runs) - len(to_do)
    settings = len({run.setting for run in runs})
    print(
        f"sweep {sweep_dir}: {len(runs)} run{'s' * (len(runs) > 1)} "
        f"({settings} setting{'s' * (settings > 1)}, "
        f"seeds {','.join(map(str, spec.seeds))}): {finished_before} finished before, "
        f"{states.get('resumable', 0)} to resume, "
        f"{states.get('new', 0) + states.get('started', 0)} to start",
        flush=True,
    )
    outcomes = {}
    if to_do:
        workers = args.workers or max(1, (os.cpu_count() or 1) // args.threads_per_run)
        workers = min(workers, len(to_do))
        try:
            with dask_client(args.scheduler, workers, args.dashboard) as client:
                where = args.scheduler or f"a local cluster of {workers} worker processes"
                print(
                    f"on {where}, {args.threads_per_run} thread"
                    f"{'s' * (args.threads_per_run > 1)} per run"
                    + (f"; dashboard {client.dashboard_link}" if args.dashboard else ""),
                    flush=True,
                )
                outcomes = execute(
                    client, to_do, progress=not args.quiet, already_finished=finished_before, total=len(runs)
                )
        except KeyboardInterrupt:
            results = sweep_results(sweep_dir, runs, outcomes)
            write_results(sweep_dir, results)
            stopped = "the workers training its runs restarted" if args.scheduler else "the cluster stopped"
            print(
                f"\nnpcomp: interrupted, {stopped}; every run is saved as of its "
                "latest dev evaluation: run the same command again to continue "
                f"({results['finished']} of {len(runs)} runs finished)",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED, None
    settle_finished(sweep_dir, runs)
    results = sweep_results(sweep_dir, runs, outcomes)
    write_results(sweep_dir, results)
    if results["finished"] == len(runs):
        return EXIT_OK, results
    stopped = sum(outcome.get("status", 0) is None for outcome in outcomes.values())
    if stopped:
        print(
            f"npcomp: the cluster dropped {stopped} of {len(runs)} runs (its scheduler "
            "lost); each is kept as of its latest dev evaluation, though a worker that had "
            "one may go on training it: run the same command again, on a scheduler or "
            "without --scheduler, to continue",
            file=sys.stderr,
        )
        return EXIT_FAILED, results
    print(
        f"npcomp: {results['failed'] + results['unfinished']} of {len(runs)} runs did "
        "not finish (each named in the table with its error)",
        file=sys.stderr,
    )
    return EXIT_FAILED, results
