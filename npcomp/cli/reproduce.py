"""`npcomp reproduce TABLE`: a paper table's rows over N seeds (and, for a
table that cross-validates on a user's copy of a corpus, irsoy-mpqa, over
its folds) through the sweep engine (``npcomp sweep``), resumable, then its
report: DIR/TABLE.md, DIR/TABLE.json and the figures in DIR/TABLE-figures/
beside the sweep directory DIR/TABLE/.  `--report-only` rebuilds the report from the
committed runs alone (no data, no training), byte for byte.
`npcomp reproduce --list [TABLE]`: the tables, their rows and the time each
would take here."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .sweep import run_sweep

DEFAULT_OUT = "reproduce"
ESTIMATES = "estimates.json"


def add_parser(commands) -> None:
    from npcomp.experiments.paper_tables import TABLES
    reproduce = commands.add_parser(
        "reproduce", help="train a paper table's rows over seeds and write its report",
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
        epilog="tables:\n" + "\n".join(f"  {name:<12}{table.title}"
                                       for name, table in TABLES.items()))
    reproduce.add_argument("table", nargs="?", metavar="TABLE", help="the table (see below)")
    reproduce.add_argument("--list", action="store_true",
                           help="print the tables (or TABLE's) rows, each with the time it "
                           "would take here: measured on its finished runs, else on a few "
                           "minibatches (cached in DIR/estimates.json)")
    reproduce.add_argument("--summary", action="store_true",
                           help="print one Markdown line per row of every report in --out "
                           "(the README's results table) and exit")
    reproduce.add_argument("--rows", default=None,
                           help="only these rows of TABLE, comma-separated (default: all)")
    reproduce.add_argument("--seeds", type=int, default=None,
                           help="seeds 1..N of every setting (default 5, and 1 for a table "
                           "that cross-validates, each seed training every fold; with "
                           "--report-only the seeds the table's sweep planned)")
    reproduce.add_argument("--folds", type=int, default=None, metavar="K",
                           help="a table that cross-validates (irsoy-mpqa): K folds in place "
                           "of the paper's (a smaller, quicker run; the report says so)")
    reproduce.add_argument("--epochs", type=int, default=None, metavar="N",
                           help="N epochs for every row in place of its own (a smaller, "
                           "quicker run; the report says so)")
    reproduce.add_argument("--report-only", action="store_true",
                           help="write the report (TABLE.md, TABLE.json, TABLE-figures/) from "
                           "the runs in DIR/TABLE/ alone: nothing is trained and no data is "
                           "read")
    reproduce.add_argument("--out", default=DEFAULT_OUT,
                           help=f"directory of the reports and sweeps (default {DEFAULT_OUT})")
    reproduce.add_argument("--data-dir", default=None,
                           help="data directory (default $NPCOMP_DATA, else ./data)")
    reproduce.add_argument("--scheduler", default=None, metavar="ADDRESS",
                           help="an existing Dask scheduler, tcp://HOST:PORT (default: a "
                           "local cluster on 127.0.0.1)")
    reproduce.add_argument("--workers", type=int, default=None,
                           help="local cluster: worker processes (default cores / "
                           "threads per run)")
    reproduce.add_argument("--threads-per-run", type=int, default=1,
                           help="compute threads of each run (default 1)")
    reproduce.add_argument("--dashboard", default=None, metavar="ADDRESS",
                           help="local cluster: serve Dask's dashboard there (default off)")
    reproduce.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args) -> int:
    from npcomp.configuration.checks import check_output_directory
    from npcomp.errors import ConfigError
    if args.seeds is not None and args.seeds < 1:
        raise ConfigError("seeds", f"must be a whole number >= 1, not {args.seeds}")
    if args.summary:
        print(summary(Path(args.out)))
        return 0
    if args.list:
        tables = [_table(args.table)] if args.table else None
        return _list(tables, Path(args.out), args.data_dir, args.threads_per_run)
    if not args.table:
        raise ConfigError("table", "name a table to reproduce, or --list them")
    table = _table(args.table)
    rows = _rows(table, args.rows)
    check_output_directory("out", args.out)
    overrides = _overrides(table, args)
    if args.report_only:
        for option in ("rows", *overrides):
            if getattr(args, option) is not None:
                raise ConfigError(option, "goes with training: --report-only reports the runs "
                                          "as they were made")
        write_report(table, Path(args.out), args.seeds, args.data_dir)
        return 0
    if args.scheduler:   # refused before the SST is parsed or anything written
        from npcomp.experiments.scheduler import check_scheduler
        check_scheduler(args.scheduler)
    return reproduce(table, rows, args)


def _overrides(table, args) -> dict:
    """The options given in place of the table's own (--folds, --epochs),
    checked: ConfigError names one out of range, or --folds for a table that
    does not cross-validate."""
    from npcomp.errors import ConfigError
    out = {}
    for option, lowest in (("folds", 2), ("epochs", 1)):
        value = getattr(args, option, None)
        if value is None:
            continue
        if value < lowest:
            raise ConfigError(option, f"must be a whole number >= {lowest}, not {value}")
        out[option] = value
    if "folds" in out and not table.folds:
        raise ConfigError("folds", f"{table.name} does not cross-validate: its rows train on "
                                   "the splits of their data")
    return out


def summary(out: Path) -> str:
    """The summary table of the reports in ``out``, in the order of TABLES."""
    from npcomp.experiments.paper_tables import TABLES
    from npcomp.experiments.report import summary_table
    from npcomp.runfiles.rundir import RunDirectory
    directory = RunDirectory(out)   # a damaged report is named (RunFileError)
    reports = [directory.read_json(f"{name}.json")
               for name in TABLES if (out / f"{name}.json").is_file()]
    return summary_table(reports)


def _table(name: str):
    """The paper table ``name``; ConfigError naming TABLE for an unknown one."""
    from npcomp.errors import ConfigError
    from npcomp.experiments.paper_tables import table
    try:
        return table(name)
    except ValueError as error:
        raise ConfigError("table", str(error)) from None


def _rows(table, text: str | None):
    from npcomp.errors import ConfigError
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        try:
            table.row(name)
        except ValueError as error:   # it names the table's rows
            raise ConfigError("rows", str(error)) from None
    return names


def table_spec(table, rows, seeds: int, data_dir: str | None, parses_dir: Path | None = None,
               overrides: dict | None = None):
    """The sweep of a table: one named setting per (row, setting); a row
    that trains on the SST's dependency parses reads them from ``parses_dir``;
    a table on a user's copy of a corpus trains on the copy in ``data_dir``
    (``table_file``) in its folds; ``overrides`` (--folds, --epochs) replace
    the table's own, and are kept in the sweep's base for its report."""
    from npcomp.experiments.sweep_spec import SweepSpec
    overrides = overrides or {}
    settings = {}
    for row in table.rows:
        if rows is None or row.name in rows:
            for name, options in row.settings().items():
                options = table.run_options(options, table_file(table, data_dir),
                                            overrides.get("folds"))
                if "epochs" in overrides:
                    options = dict(options, epochs=overrides["epochs"])
                settings[name] = (dict(options, parses_dir=str(parses_dir)) if row.parses
                                  else options)
    base = dict({} if data_dir is None else {"data_dir": data_dir}, **overrides)
    return SweepSpec(base=base, seeds=list(range(1, seeds + 1)), settings=settings,
                     source=None)


def table_file(table, data_dir: str | None) -> Path | None:
    """The user's copy of a table's corpus in ``data_dir`` (default
    $NPCOMP_DATA, else ./data), or the first file it is looked for as when
    there is none; None for a table on the data here."""
    from npcomp.data.datasets.tasks import default_data_dir
    if table.own_data is None:
        return None
    directory = data_dir if data_dir is not None else default_data_dir()
    return table.own_data.find(directory) or Path(directory) / table.own_data.files[0]


def default_seeds(table) -> int:
    """A table's seeds when none are asked for: 5, or 1 for a table that
    cross-validates (its statistics are over the folds, as the paper's)."""
    return 1 if table.folds else 5


def reproduce(table, rows, args) -> int:
    """Train (or resume) the table's runs, each with the tables'
    ``RUN_OPTIONS``, then write its report."""
    from npcomp.experiments.paper_tables import RUN_OPTIONS
    out = Path(args.out)
    seeds = args.seeds or default_seeds(table)
    if not any(row.settings() for row in table.rows if rows is None or row.name in rows):
        print(f"{table.name}: no row of it is trained here (the report says why)")
        write_report(table, out, seeds, args.data_dir)
        return 0
    if table.own_data is not None and not table_file(table, args.data_dir).is_file():
        print(f"{table.name}: no row of it can be trained here: "
              f"{_missing(table, out, args.data_dir, seeds)}")
        write_report(table, out, seeds, args.data_dir)
        return 0
    parses_dir = None
    if any(row.parses for row in table.rows if rows is None or row.name in rows):
        parses_dir = _sst_parses(out / "parses" / "sst", args.data_dir)
    spec = table_spec(table, rows, seeds, args.data_dir, parses_dir, _overrides(table, args))
    args.extend = True   # a later call with more seeds or rows adds to the same sweep
    status, results = run_sweep(spec, out / table.name, args, pinned=RUN_OPTIONS)
    if results is None:
        return status
    write_report(table, out, seeds, args.data_dir)
    return status


FIGURES = "-figures"


def write_report(table, out: Path, seeds: int | None, data_dir: str | None) -> None:
    """DIR/TABLE.md, DIR/TABLE.json and DIR/TABLE-figures/ from the runs in
    DIR/TABLE/ (and, for rows another report measures, in theirs) alone: the
    same bytes wherever and whenever they are written from the same runs."""
    from npcomp.experiments import report
    from npcomp.experiments.report_markdown import markdown
    from npcomp.runfiles.rundir import RunDirectory
    sweep_dir = out / table.name
    results = report.committed_results(sweep_dir)
    others = {}

    def other_sweep(name: str):
        if name not in others:
            others[name] = (out / name, report.committed_results(out / name))
        return others[name]

    seeds = max(seeds or 0, _planned_seeds(sweep_dir)) or default_seeds(table)
    data_dir = _shown_path(data_dir if data_dir is not None else _planned_data_dir(sweep_dir))
    overrides = _planned_overrides(sweep_dir)

    def rerun_with(count: int) -> str:
        return " ".join(["npcomp", "reproduce", table.name, "--seeds", str(count), "--out",
                         str(out)] + (["--data-dir", str(data_dir)] if data_dir else [])
                        + [f"--{key} {value}" for key, value in overrides.items()])

    missing = None
    if table.own_data is not None and not table_file(table, data_dir).is_file():
        missing = _missing(table, out, data_dir, seeds)
    record = report.report_record(table, results, out,
                                  other_results=lambda name: other_sweep(name)[1],
                                  missing=missing)
    machine = report.machine_line(sweep_dir, results)
    record = {"table": record["table"], "title": record["title"], "rerun": rerun_with(seeds),
              "machine": machine, **({"overrides": overrides} if overrides else {}),
              **{key: value for key, value in record.items() if key not in ("table", "title")}}
    figures = _draw_figures(out, table)
    text = markdown(record, table, machine, rerun_with, sweep_dir, results, other_sweep,
                    _commands(table, out, overrides), figures)
    directory = RunDirectory(out)
    out.mkdir(parents=True, exist_ok=True)
    directory.write_text(f"{table.name}.md", text + "\n")
    directory.write_json(f"{table.name}.json", record)
    print(text.split("\n\n## ")[0])
    print(f"written: {out / (table.name + '.md')}, {out / (table.name + '.json')}"
          + (f", {len(figures)} figures in {out / (table.name + FIGURES)}" if figures else ""))


def _missing(table, out: Path, data_dir: str | None, seeds: int) -> str:
    """Why a table on a user's copy of a corpus has no data: the files looked
    for, and the command that runs it once a copy is there."""
    shown = _shown_path(data_dir) or ("$NPCOMP_DATA" if os.environ.get("NPCOMP_DATA")
                                      else "data")
    command = " ".join(["npcomp", "reproduce", table.name, "--seeds", str(seeds), "--out",
                        str(out), "--data-dir", shown])
    return table.own_data.missing(shown, command)


def _shown_path(path: str | None) -> str | None:
    """A path as a report shows it: relative to this directory, never absolute."""
    if path is None or not Path(path).is_absolute():
        return path
    return Path(os.path.relpath(path)).as_posix()


def _planned_seeds(sweep_dir: Path) -> int:
    """The most seeds any setting of the sweep planned (0 without a plan)."""
    plan = _plan(sweep_dir)
    seeds = {}
    for record in (plan or {}).get("runs", {}).values():
        seeds.setdefault(record["setting"], set()).add(record["seed"])
    return max(map(len, seeds.values()), default=0)


def _planned_overrides(sweep_dir: Path) -> dict:
    """The options the sweep was last planned with in place of the table's
    own (``npcomp reproduce --folds``, ``--epochs``: its base)."""
    plan = _plan(sweep_dir)
    base = ((plan or {}).get("specs") or [{}])[-1].get("base", {})
    return {key: base[key] for key in ("folds", "epochs") if key in base}


def _planned_data_dir(sweep_dir: Path) -> str | None:
    """The data directory the sweep was last planned with, as given."""
    plan = _plan(sweep_dir)
    specs = (plan or {}).get("specs") or [{}]
    return specs[-1].get("base", {}).get("data_dir")


def _plan(sweep_dir: Path) -> dict | None:
    path = sweep_dir / "plan.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _commands(table, out: Path, overrides: dict) -> dict:
    """Setting -> its `npcomp train` command for one seed (and one fold K of
    a table that cross-validates, on the copy in the data directory DATA_DIR)."""
    from npcomp.experiments.paper_tables import RUN_OPTIONS
    from npcomp.configuration.options import command_line
    commands = {}
    train = f"DATA_DIR/{table.own_data.files[0]}" if table.own_data else None
    for row in table.rows:
        for name, options in row.settings().items():
            options = table.run_options(options, train, overrides.get("folds"))
            if "epochs" in overrides:
                options = dict(options, epochs=overrides["epochs"])
            # the options every reproduce run takes (its shards) belong to the
            # command that trains one seed as the committed runs were trained
            # (a table whose rows set an option of RUN_OPTIONS themselves: theirs)
            pinned = {key: value for key, value in RUN_OPTIONS.items() if key not in options}
            arguments = (command_line(options) + command_line(pinned)
                         + (["--fold", "K"] if table.folds else []))
            if row.parses:
                arguments += ["--parses-dir", str(out / "parses" / "sst")]
            commands[name] = " ".join(["npcomp", "train", *arguments, "--seed", "S"])
    return commands


def _draw_figures(out: Path, table) -> list:
    """The sweep's figures in OUT/NAME-figures, which the report owns and
    redraws each time (files no longer drawn are removed): the PNG files'
    paths relative to OUT ([] without matplotlib or runs, said on stderr)."""
    from npcomp.experiments.figures import FigureError
    from npcomp.experiments.plots import write_figures
    from npcomp.experiments.sweep_figures import sweep_figures
    name = table.name
    paper = {setting: row.paper for row in table.rows for setting in row.settings()}
    try:
        figures, _ = sweep_figures(out / name, confusions=table.confusions, paper=paper,
                                   paper_figures=table.figures)
        _relative_sources(figures, out)
        written = write_figures(figures, out / (name + FIGURES))
    except (FigureError, FileNotFoundError) as error:  # no matplotlib, no runs
        print(f"npcomp reproduce: no figures ({error})", file=sys.stderr)
        return []
    for path in (out / (name + FIGURES)).iterdir():
        if str(path) not in written and path.suffix in (".png", ".svg", ".json"):
            path.unlink()
    return [Path(path).relative_to(out).as_posix() for path in written
            if str(path).endswith(".png")]


def _relative_sources(figures: list, out: Path) -> None:
    """The files a figure record names, relative to OUT, so the records read
    the same wherever the report is written from."""
    def relative(path: str) -> str:
        try:
            return Path(path).relative_to(out).as_posix()
        except ValueError:
            return path
    for record in figures:
        for holder in [record, *record.get("boxes", [])]:
            for key in ("source", "runs"):
                if isinstance(holder.get(key), list):
                    holder[key] = [relative(path) if isinstance(path, str) else path
                                   for path in holder[key]]


def _sst_parses(directory: Path, data_dir: str | None) -> Path:
    """``directory`` holding `npcomp parse`'s dependency parses of the SST,
    made there first (spaCy, the parse extra) when a split's are missing."""
    from npcomp.data.datasets.sst_dependency import parse_sst
    from npcomp.data.text.dependency_parser import SpacyParser
    from npcomp.data.datasets.tasks import SPLITS, default_data_dir
    if all((directory / f"{split}.parents").is_file() for split in SPLITS):
        return directory
    print(f"parsing the SST into {directory} (the Dependency Tree-LSTM's trees)", flush=True)
    parse_sst(Path(data_dir) if data_dir else default_data_dir(), directory, SpacyParser())
    return directory


def _list(tables, out: Path, data_dir: str | None, threads_per_run: int) -> int:
    """Each table's rows with the paper's figure and the time its seeds would
    take here (5 seeds, on the local cluster's workers)."""
    from npcomp.experiments.paper_tables import TABLES
    estimates = _read_estimates(out)
    workers = max(1, (os.cpu_count() or 1) // threads_per_run)
    for table in tables or TABLES.values():
        print(f"{table.name}: {table.title}")
        print(_downloads_line(table, data_dir))
        total, unmeasured = 0.0, 0
        train = table_file(table, data_dir)
        runs = table.folds or 5   # a seed's runs: its folds, or five seeds
        for row in table.rows:
            figure = row.paper.get(row.metric)
            paper = "-" if figure is None else f"{figure:g}"
            parses = out / "parses" / "sst"
            if not row.trained:
                what = row.status or f"measured by {row.same_as}"
                print(f"  {row.name:<32} {row.model or '-':<20} {row.task:<6} paper {paper:<7} "
                      f"{what}")
                continue
            for name, options in row.settings().items():
                kind = "dev" if name.endswith("-dev") else "printed"
                line = f"  {name:<32} {row.model:<20} {row.task:<6} paper {paper:<7} {kind:<8}"
                measured = _measured_seconds(table, name, out)
                if measured is None and row.parses and not (parses / "train.parents").is_file():
                    # a few minibatches need the parses, which its first run makes
                    unmeasured += 1
                    print(f"{line} not measured: the SST's parses are made on its first run")
                    continue
                if measured is not None:   # its finished runs: no data needed
                    total += runs * measured
                    print(f"{line} {_duration(measured)} a {'fold' if table.folds else 'seed'}")
                    continue
                if row.parses:
                    options = dict(options, parses_dir=str(parses))
                if train is not None and not train.is_file():
                    unmeasured += 1
                    print(f"{line} not measured: no data ({train}: no such file)")
                    continue
                missing = _missing_downloads(table, row, data_dir)
                if missing:
                    unmeasured += 1
                    print(f"{line} not measured: needs npcomp download {' '.join(missing)}")
                    continue
                try:
                    seconds = _seconds_per_seed(table, name, table.run_options(options, train),
                                                out, data_dir, estimates)
                except MissingData as error:
                    unmeasured += 1
                    print(f"{line} not measured: {error}")
                    continue
                total += runs * seconds
                print(f"{line} {_duration(seconds)} a {'fold' if table.folds else 'seed'}")
        what = f"{runs} folds" if table.folds else "5 seeds"
        if unmeasured and not total:
            print(f"  {what} of every row: not measured until its data is here\n")
        else:
            print(f"  {what} of every row on {workers} worker{'s' * (workers > 1)}: about "
                  f"{_duration(total / workers)}"
                  + (f" (less {unmeasured} not measured)" if unmeasured else "") + "\n")
        _write_estimates(out, estimates)
    return 0


def _seconds_per_seed(table, setting: str, options: dict, out: Path,
                      data_dir: str | None, estimates: dict) -> float:
    """Measured on the setting's finished runs in OUT/TABLE (of each fold of
    a table that cross-validates), else estimated on a few minibatches
    (estimate.estimate_seconds, of fold 0), cached in ``estimates``."""
    measured = _measured_seconds(table, setting, out)
    if measured is not None:
        return measured
    if table.folds:
        options = dict(options, fold=0)
    from npcomp.experiments.paper_tables import RUN_OPTIONS
    options = dict(RUN_OPTIONS, **options)   # as the table's runs train
    key = json.dumps(options, sort_keys=True)
    if key not in estimates:
        from npcomp.errors import DataError
        from npcomp.configuration.options import OPTIONS
        from npcomp.configuration.run_config import MissingVectors
        from npcomp.experiments.estimate import estimate_seconds
        from .sweep import config_of
        given = dict(options, threads=1, **({"data_dir": data_dir} if data_dir else {}))
        try:
            config = config_of(given)
        except MissingVectors as error:   # a vector file not found
            raise MissingData(f"{OPTIONS[error.option].flag} {error.reason}") from None
        print(f"  (measuring {setting} on a few minibatches)", file=sys.stderr, flush=True)
        try:
            estimates[key] = estimate_seconds(config)
        except DataError as error:    # the task's files not found (or not readable)
            raise MissingData(error) from None
    return estimates[key]


def _downloads_line(table, data_dir: str | None) -> str:
    """The downloads ``table`` reads and, of them, those missing in the data
    directory with the command that installs them and the bytes it fetches."""
    from npcomp.data.downloads.catalogue import DATASETS
    from npcomp.data.datasets.tasks import default_data_dir
    from npcomp.experiments.data_downloads import missing_downloads, table_downloads
    needs = table_downloads(table)
    if not needs:
        return "  data: none to download" + (" (a copy of its own corpus: see below)"
                                             if table.own_data else "")
    directory = Path(data_dir) if data_dir else default_data_dir()
    missing = missing_downloads(table, directory)
    if not missing:
        return f"  data: {', '.join(needs)} (installed in {directory})"
    fetch = sum(DATASETS[name].fetch_size for name in missing)
    return (f"  data: {', '.join(needs)}; missing in {directory}: `npcomp download "
            f"{' '.join(missing)}` (about {fetch / 1e6:,.0f} MB to fetch)")


def _missing_downloads(table, row, data_dir: str | None) -> tuple:
    from npcomp.data.datasets.tasks import default_data_dir
    from npcomp.experiments.data_downloads import missing_downloads
    return missing_downloads(table, Path(data_dir) if data_dir else default_data_dir(),
                             rows=[row.name])


def _measured_seconds(table, setting: str, out: Path) -> float | None:
    """The mean time of the setting's finished runs in OUT/TABLE (a seed's,
    or a fold's in a table that cross-validates): training, setup and
    evaluations; None when none has finished."""
    finished = []
    runs = f"{setting}-fold*-s*" if table.folds else f"{setting}-s*"
    for metrics_path in sorted((out / table.name / "runs").glob(f"{runs}/metrics.json")):
        metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        if metrics.get("test") is not None and metrics["config"].get("seed") is not None:
            finished.append(metrics["train_wall_s"] + (metrics.get("setup_s") or 0.0)
                            + sum(epoch.get("eval_s", 0.0) for epoch in metrics["epochs"]))
    return sum(finished) / len(finished) if finished else None


class MissingData(Exception):
    """A row cannot be measured here: its data or vectors are not found."""


def _read_estimates(out: Path) -> dict:
    path = out / ESTIMATES
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}   # a damaged cache is measured again


def _write_estimates(out: Path, estimates: dict) -> None:
    from npcomp.runfiles.rundir import RunDirectory
    out.mkdir(parents=True, exist_ok=True)
    RunDirectory(out).write_json(ESTIMATES, estimates)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
