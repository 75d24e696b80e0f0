"""How long a paper table's rows would take here (`npcomp reproduce --list`):
measured on a row's finished runs, else estimated on a few minibatches
(``estimate.estimate_seconds``) and cached in DIR/estimates.json; and the
downloads each table reads, with those missing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .table_sweep import table_file

ESTIMATES = "estimates.json"


def list_tables(tables, out: Path, data_dir: str | None, threads_per_run: int) -> int:
    """Each table's rows with the paper's figure and the time its seeds would
    take here (5 seeds, on the local cluster's workers)."""
    from .paper_tables import TABLES

    estimates = _read_estimates(out)
    workers = max(1, (os.cpu_count() or 1) // threads_per_run)
    for table in tables or TABLES.values():
        print(f"{table.name}: {table.title}")
        print(_downloads_line(table, data_dir))
        total, unmeasured = 0.0, 0
        train = table_file(table, data_dir)
        runs = table.folds or 5  # a seed's runs: its folds, or five seeds
        for row in table.rows:
            figure = row.paper.get(row.metric)
            paper = "-" if figure is None else f"{figure:g}"
            parses = out / "parses" / "sst"
            if not row.trained:
                what = row.status or f"measured by {row.same_as}"
                print(f"  {row.name:<32} {row.model or '-':<20} {row.task:<6} paper {paper:<7} {what}")
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
                if measured is not None:  # its finished runs: no data needed
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
                    seconds = _seconds_per_seed(
                        table, name, table.run_options(options, train), out, data_dir, estimates
                    )
                except MissingData as error:
                    unmeasured += 1
                    print(f"{line} not measured: {error}")
                    continue
                total += runs * seconds
                print(f"{line} {_duration(seconds)} a {'fold' if table.folds else 'seed'}")
        what = f"{runs} folds" if table.folds else "5 seeds"
        if unmeasured and not total:
            print(f"  {what} of every row: not measured until its data is here (the downloads above first)\n")
        else:
            print(
                f"  {what} of every row on {workers} worker{'s' * (workers > 1)}: about "
                f"{_duration(total / workers)}" + (f" (less {unmeasured} not measured)" if unmeasured else "") + "\n"
            )
        _write_estimates(out, estimates)
    return 0


def _seconds_per_seed(table, setting: str, options: dict, out: Path, data_dir: str | None, estimates: dict) -> float:
    """Measured on the setting's finished runs in OUT/TABLE (of each fold of
    a table that cross-validates), else estimated on a few minibatches
    (estimate.estimate_seconds, of fold 0), cached in ``estimates``."""
    measured = _measured_seconds(table, setting, out)
    if measured is not None:
        return measured
    if table.folds:
        options = dict(options, fold=0)
    from .paper_tables import RUN_OPTIONS

    options = dict(RUN_OPTIONS, **options)  # as the table's runs train
    key = json.dumps(options, sort_keys=True)
    if key not in estimates:
        from npcomp.errors import DataError
        from npcomp.experiments.estimate import estimate_seconds
        from npcomp.configuration.options import OPTIONS
        from npcomp.configuration.run_config import MissingVectors

        from .sweep_jobs import config_of

        given = dict(options, threads=1, **({"data_dir": data_dir} if data_dir else {}))
        try:
            config = config_of(given)
        except MissingVectors as error:  # a vector file not found
            raise MissingData(f"{OPTIONS[error.option].flag} {error.reason}") from None
        print(f"  (measuring {setting} on a few minibatches)", file=sys.stderr, flush=True)
        try:
            estimates[key] = estimate_seconds(config)
        except DataError as error:  # the task's files not found (or not readable)
            raise MissingData(error) from None
    return estimates[key]


def _downloads_line(table, data_dir: str | None) -> str:
    from npcomp.data.datasets.tasks import default_data_dir

    from .data_downloads import downloads_line

    return downloads_line(table, Path(data_dir) if data_dir else default_data_dir())


def _missing_downloads(table, row, data_dir: str | None) -> tuple:
    from npcomp.data.datasets.tasks import default_data_dir

    from .data_downloads import missing_downloads

    return missing_downloads(table, Path(data_dir) if data_dir else default_data_dir(), rows=[row.name])


def _measured_seconds(table, setting: str, out: Path) -> float | None:
    """The mean time of the setting's finished runs in OUT/TABLE (a seed's,
    or a fold's in a table that cross-validates): training, setup and
    evaluations; None when none has finished."""
    finished = []
    runs = f"{setting}-fold*-s*" if table.folds else f"{setting}-s*"
    for metrics_path in sorted((out / table.name / "runs").glob(f"{runs}/metrics.json")):
        metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
        if metrics.get("test") is not None and metrics["config"].get("seed") is not None:
            finished.append(
                metrics["train_wall_s"]
                + (metrics.get("setup_s") or 0.0)
                + sum(epoch.get("eval_s", 0.0) for epoch in metrics["epochs"])
            )
    return sum(finished) / len(finished) if finished else None


class MissingData(Exception):
    """A row cannot be measured here: its data or vectors are not found."""


def _read_estimates(out: Path) -> dict:
    path = out / ESTIMATES
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}  # a damaged cache is measured again


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
