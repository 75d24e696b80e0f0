"""``reproduce``: a paper table's rows over N seeds (and, for a table that
cross-validates on a user's copy of a corpus, over its folds) as one sweep
(``sweeps.run_sweep``), resumable, then its report DIR/TABLE.md,
DIR/TABLE.json and DIR/TABLE-figures/ beside the sweep directory DIR/TABLE/
(``experiments/table_report.py``); ``report_only`` rebuilds the report from
the committed runs alone (no data, no training), byte for byte.  With
``list``: the tables' rows and the time each would take here
(``experiments/time_estimates.py``); with ``summary``: one Markdown line per
row of every report in DIR."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_OUT = "reproduce"


@dataclass(frozen=True)
class ReproductionResult:
    """What a reproduction did: its exit status (0: done; 1: some runs did
    not finish; 130: interrupted), the report's files it wrote (TABLE.md,
    TABLE.json; empty when none was written), the sweep it ran (a
    ``SweepResult``, None when nothing was trained), and for ``summary`` the
    summary table's text."""

    status: int
    reports: tuple = ()
    sweep: object = None
    summary: str | None = None


def reproduce(
    table: str | None = None,
    *,
    list: bool = False,
    summary: bool = False,
    rows: str | None = None,
    seeds: int | None = None,
    folds: int | None = None,
    epochs: int | None = None,
    report_only: bool = False,
    out=DEFAULT_OUT,
    data_dir: str | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    threads_per_run: int = 1,
    dashboard: str | None = None,
    quiet: bool = False,
) -> ReproductionResult:
    """`npcomp reproduce TABLE` from Python, with its options as keywords:
    train (or resume) the table's ``rows`` ("a,b"; default all) over seeds
    1 to ``seeds`` (``folds``, ``epochs``: in place of the table's own) on
    Dask, then write its report into ``out``; ``report_only``: the report
    alone, from the runs in OUT/TABLE/.  ConfigError names an option at
    fault before anything is read or written."""
    from npcomp.errors import ConfigError
    from npcomp.experiments.table_report import reports_summary, write_report
    from npcomp.configuration.checks import check_output_directory

    if seeds is not None and seeds < 1:
        raise ConfigError("seeds", f"must be a whole number >= 1, not {seeds}")
    if summary:
        return ReproductionResult(0, summary=reports_summary(Path(out)))
    if list:
        from npcomp.experiments.time_estimates import list_tables

        tables = [_table(table)] if table else None
        return ReproductionResult(list_tables(tables, Path(out), data_dir, threads_per_run))
    if not table:
        raise ConfigError("table", "name a table to reproduce, or --list them")
    paper_table = _table(table)
    chosen = _rows(paper_table, rows)
    check_output_directory("out", out)
    overrides = _overrides(paper_table, folds=folds, epochs=epochs)
    if report_only:
        given = {"rows": rows, "folds": folds, "epochs": epochs}
        for option in ("rows", *overrides):
            if given[option] is not None:
                raise ConfigError(option, "goes with training: --report-only reports the runs as they were made")
        write_report(paper_table, Path(out), seeds, data_dir)
        return ReproductionResult(0, _reports(paper_table, out))
    if scheduler:  # refused before the SST is parsed or anything written
        from npcomp.experiments.scheduler import check_scheduler

        check_scheduler(scheduler)
    from .sweeps import SweepCluster

    # a later call with more seeds or rows adds to the same sweep
    cluster = SweepCluster(scheduler, workers, threads_per_run, dashboard, quiet, extend=True)
    return _train_table(paper_table, chosen, Path(out), seeds, data_dir, overrides, cluster)


def _train_table(
    table, rows, out: Path, seeds: int | None, data_dir: str | None, overrides: dict, cluster
) -> ReproductionResult:
    """Train (or resume) the table's runs, each with the tables'
    ``RUN_OPTIONS``, then write its report."""
    from npcomp.experiments.paper_tables import RUN_OPTIONS
    from npcomp.experiments.table_report import write_report
    from npcomp.experiments.table_sweep import (
        default_seeds,
        missing_data,
        sst_parses,
        table_file,
        table_spec,
    )

    from .sweeps import run_sweep, sweep_result

    seeds = seeds or default_seeds(table)
    if not any(row.settings() for row in table.rows if rows is None or row.name in rows):
        print(f"{table.name}: no row of it is trained here (the report says why)")
        write_report(table, out, seeds, data_dir)
        return ReproductionResult(0, _reports(table, out))
    if table.own_data is not None and not table_file(table, data_dir).is_file():
        print(f"{table.name}: no row of it can be trained here: {missing_data(table, out, data_dir, seeds)}")
        write_report(table, out, seeds, data_dir)
        return ReproductionResult(0, _reports(table, out))
    parses_dir = None
    if any(row.parses for row in table.rows if rows is None or row.name in rows):
        parses_dir = sst_parses(out / "parses" / "sst", data_dir)
    spec = table_spec(table, rows, seeds, data_dir, parses_dir, overrides)
    status, results = run_sweep(spec, out / table.name, cluster, pinned=RUN_OPTIONS)
    swept = sweep_result(out / table.name, status, results)
    if results is None:
        return ReproductionResult(status, sweep=swept)
    write_report(table, out, seeds, data_dir)
    return ReproductionResult(status, _reports(table, out), swept)


def _reports(table, out) -> tuple:
    """The report's files: OUT/TABLE.md and OUT/TABLE.json."""
    return (Path(out) / f"{table.name}.md", Path(out) / f"{table.name}.json")


def _overrides(table, **given) -> dict:
    """The options given in place of the table's own (``folds``, ``epochs``),
    checked: ConfigError names one out of range, or ``folds`` for a table
    that does not cross-validate."""
    from npcomp.errors import ConfigError

    out = {}
    for option, lowest in (("folds", 2), ("epochs", 1)):
        value = given.get(option)
        if value is None:
            continue
        if value < lowest:
            raise ConfigError(option, f"must be a whole number >= {lowest}, not {value}")
        out[option] = value
    if "folds" in out and not table.folds:
        raise ConfigError("folds", f"{table.name} does not cross-validate: its rows train on the splits of their data")
    return out


def _table(name: str):
    """The paper table ``name``; ConfigError naming TABLE for an unknown one."""
    from npcomp.errors import ConfigError
    from npcomp.experiments.paper_tables import table

    try:
        return table(name)
    except ValueError as error:
        raise ConfigError("table", str(error)) from None


def _rows(table, text: str | None):
    """The row names of ``text`` ("a,b"), each one of the table's; None: all."""
    from npcomp.errors import ConfigError

    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        try:
            table.row(name)
        except ValueError as error:  # it names the table's rows
            raise ConfigError("rows", str(error)) from None
    return names
