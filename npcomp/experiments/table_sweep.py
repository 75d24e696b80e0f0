"""A paper table's sweep: one named setting per (row, setting) over seeds
(and folds, for a table that cross-validates on a user's copy of a corpus),
the SST's parses its dependency rows read, the `npcomp train` command of
each setting, and what a sweep directory's plan.json says it was planned
with (seeds, data directory, the options given in place of the table's)."""

from __future__ import annotations

import json
import os
from pathlib import Path


def table_spec(
    table, rows, seeds: int, data_dir: str | None, parses_dir: Path | None = None, overrides: dict | None = None
):
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
                options = table.run_options(options, table_file(table, data_dir), overrides.get("folds"))
                if "epochs" in overrides:
                    options = dict(options, epochs=overrides["epochs"])
                settings[name] = dict(options, parses_dir=str(parses_dir)) if row.parses else options
    base = dict({} if data_dir is None else {"data_dir": data_dir}, **overrides)
    return SweepSpec(base=base, seeds=list(range(1, seeds + 1)), settings=settings, source=None)


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


def missing_data(table, out: Path, data_dir: str | None, seeds: int) -> str:
    """Why a table on a user's copy of a corpus has no data: the files looked
    for, and the command that runs it once a copy is there."""
    shown = shown_path(data_dir) or ("$NPCOMP_DATA" if os.environ.get("NPCOMP_DATA") else "data")
    command = " ".join(
        ["npcomp", "reproduce", table.name, "--seeds", str(seeds), "--out", shown_path(str(out)), "--data-dir", shown]
    )
    return table.own_data.missing(shown, command)


def shown_path(path: str | None) -> str | None:
    """A path as a report shows it: relative to this directory, never absolute."""
    if path is None or not Path(path).is_absolute():
        return path
    return Path(os.path.relpath(path)).as_posix()


def planned_seeds(sweep_dir: Path) -> int:
    """The most seeds any setting of the sweep planned (0 without a plan)."""
    plan = _plan(sweep_dir)
    seeds = {}
    for record in (plan or {}).get("runs", {}).values():
        seeds.setdefault(record["setting"], set()).add(record["seed"])
    return max(map(len, seeds.values()), default=0)


def planned_overrides(sweep_dir: Path) -> dict:
    """The options the sweep was last planned with in place of the table's
    own (``npcomp reproduce --folds``, ``--epochs``: its base)."""
    plan = _plan(sweep_dir)
    base = ((plan or {}).get("specs") or [{}])[-1].get("base", {})
    return {key: base[key] for key in ("folds", "epochs") if key in base}


def planned_data_dir(sweep_dir: Path) -> str | None:
    """The data directory the sweep was last planned with, as given."""
    plan = _plan(sweep_dir)
    specs = (plan or {}).get("specs") or [{}]
    return specs[-1].get("base", {}).get("data_dir")


def _plan(sweep_dir: Path) -> dict | None:
    path = sweep_dir / "plan.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def train_commands(table, out: Path, overrides: dict) -> dict:
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
            arguments = command_line(options) + command_line(pinned) + (["--fold", "K"] if table.folds else [])
            if row.parses:
                arguments += ["--parses-dir", shown_path(str(out / "parses" / "sst"))]
            commands[name] = " ".join(["npcomp", "train", *arguments, "--seed", "S"])
    return commands


def sst_parses(directory: Path, data_dir: str | None) -> Path:
    """``directory`` holding `npcomp parse`'s dependency parses of the SST,
    made there first (spaCy, the parse extra) when a split's are missing."""
    from npcomp.data.text.dependency_parser import SpacyParser
    from npcomp.data.datasets.sst_dependency import parse_sst
    from npcomp.data.datasets.tasks import SPLITS, default_data_dir

    if all((directory / f"{split}.parents").is_file() for split in SPLITS):
        return directory
    print(f"parsing the SST into {directory} (the Dependency Tree-LSTM's trees)", flush=True)
    parse_sst(Path(data_dir) if data_dir else default_data_dir(), directory, SpacyParser())
    return directory
