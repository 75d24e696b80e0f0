"""`npcomp reproduce TABLE`: a paper table's rows over N seeds through the
sweep engine, resumable, then its report (``npcomp.runs.reproduce``).
`npcomp reproduce --list [TABLE]`: the tables, their rows and the time each
would take here."""

from __future__ import annotations

import argparse

from npcomp.runs.reproduction import DEFAULT_OUT


def add_parser(commands) -> None:
    from npcomp.experiments.paper_tables import TABLES

    width = max(map(len, TABLES)) + 2  # the names' column, the longest name and two spaces
    reproduce = commands.add_parser(
        "reproduce",
        help="train a paper table's rows over seeds and write its report",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train every row of a paper table (each a model, task and setting: the "
        "paper's printed one,\nand an alternative where the printed one falls far below "
        "here, compared on dev)\nover seeds 1..N as one sweep on Dask (npcomp sweep), then "
        "write the report\nDIR/TABLE.md (and .json): every row of the paper's table with "
        "its status,\nthe paper's figure beside our mean ± std, 95% "
        "confidence interval, min-max and n, and a\nverdict (above, reached, within noise, "
        "below). Running the command again resumes what\nis unfinished and rewrites the "
        "report; --report-only rewrites the report alone from\nthe runs in DIR/TABLE/ (no "
        "data needed).",
        epilog="tables:\n" + "\n".join(f"  {name:<{width}}{table.title}" for name, table in TABLES.items()),
    )
    reproduce.add_argument("table", nargs="?", metavar="TABLE", help="the table (see below)")
    reproduce.add_argument(
        "--list",
        action="store_true",
        help="print the tables (or TABLE's) rows, each with the time it "
        "would take here: measured on its finished runs, else on a few "
        "minibatches (cached in DIR/estimates.json)",
    )
    reproduce.add_argument(
        "--summary",
        action="store_true",
        help="print one Markdown line per row of every report in --out (the README's results table) and exit",
    )
    reproduce.add_argument("--rows", default=None, help="only these rows of TABLE, comma-separated (default: all)")
    reproduce.add_argument(
        "--seeds",
        type=int,
        default=None,
        help="seeds 1..N of every setting (default 5, and 1 for a table "
        "that cross-validates, each seed training every fold; with "
        "--report-only the seeds the table's sweep planned)",
    )
    reproduce.add_argument(
        "--folds",
        type=int,
        default=None,
        metavar="K",
        help="a table that cross-validates (irsoy-mpqa): K folds in place "
        "of the paper's (a smaller, quicker run; the report says so)",
    )
    reproduce.add_argument(
        "--epochs",
        type=int,
        default=None,
        metavar="N",
        help="N epochs for every row in place of its own (a smaller, quicker run; the report says so)",
    )
    reproduce.add_argument(
        "--report-only",
        action="store_true",
        help="write the report (TABLE.md, TABLE.json, TABLE-figures/) from "
        "the runs in DIR/TABLE/ alone: nothing is trained and no data is "
        "read",
    )
    reproduce.add_argument(
        "--out", default=DEFAULT_OUT, help=f"directory of the reports and sweeps (default {DEFAULT_OUT})"
    )
    reproduce.add_argument("--data-dir", default=None, help="data directory (default $NPCOMP_DATA, else ./data)")
    _cluster_options(reproduce)
    reproduce.add_argument("--quiet", action="store_true", help="no progress bar")


def _cluster_options(reproduce) -> None:
    """reproduce's options of the Dask cluster the runs train on."""
    reproduce.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="an existing Dask scheduler, tcp://HOST:PORT (default: a local cluster on 127.0.0.1)",
    )
    reproduce.add_argument(
        "--workers", type=int, default=None, help="local cluster: worker processes (default cores / threads per run)"
    )
    reproduce.add_argument("--threads-per-run", type=int, default=1, help="compute threads of each run (default 1)")
    reproduce.add_argument(
        "--dashboard", default=None, metavar="ADDRESS", help="local cluster: serve Dask's dashboard there (default off)"
    )


def run(args) -> int:
    from npcomp.runs import reproduce

    result = reproduce(
        args.table,
        list=args.list,
        summary=args.summary,
        rows=args.rows,
        seeds=args.seeds,
        folds=args.folds,
        epochs=args.epochs,
        report_only=args.report_only,
        out=args.out,
        data_dir=args.data_dir,
        scheduler=args.scheduler,
        workers=args.workers,
        threads_per_run=args.threads_per_run,
        dashboard=args.dashboard,
        quiet=args.quiet,
    )
    if result.summary is not None:
        print(result.summary)
    return result.status
