"""A paper table's report: DIR/TABLE.md, DIR/TABLE.json and the figures in
DIR/TABLE-figures/ from the runs in DIR/TABLE/ alone (byte for byte the
same wherever and whenever they are written from the same runs), and the
summary of the reports in a directory (the README's results table)."""

from __future__ import annotations

import sys
from pathlib import Path

from .table_sweep import (
    default_seeds,
    missing_data,
    planned_data_dir,
    planned_overrides,
    planned_seeds,
    shown_path,
    table_file,
    train_commands,
)

FIGURES = "-figures"


def write_report(table, out: Path, seeds: int | None, data_dir: str | None) -> None:
    """DIR/TABLE.md, DIR/TABLE.json and DIR/TABLE-figures/ from the runs in
    DIR/TABLE/ (and, for rows another report measures, in theirs) alone: the
    same bytes wherever and whenever they are written from the same runs."""
    from npcomp.runfiles.rundir import RunDirectory

    from . import report
    from .report_markdown import markdown

    sweep_dir = out / table.name
    results = report.committed_results(sweep_dir)
    others = {}

    def other_sweep(name: str):
        if name not in others:
            others[name] = (out / name, report.committed_results(out / name))
        return others[name]

    seeds = max(seeds or 0, planned_seeds(sweep_dir)) or default_seeds(table)
    data_dir = shown_path(data_dir if data_dir is not None else planned_data_dir(sweep_dir))
    overrides = planned_overrides(sweep_dir)

    def rerun_with(count: int) -> str:
        return " ".join(
            ["npcomp", "reproduce", table.name, "--seeds", str(count), "--out", shown_path(str(out))]
            + (["--data-dir", str(data_dir)] if data_dir else [])
            + [f"--{key} {value}" for key, value in overrides.items()]
        )

    missing = None
    if table.own_data is not None and not table_file(table, data_dir).is_file():
        missing = missing_data(table, out, data_dir, seeds)
    record = report.report_record(table, results, out, other_results=lambda name: other_sweep(name)[1], missing=missing)
    machine = report.machine_line(sweep_dir, results)
    record = {
        "table": record["table"],
        "title": record["title"],
        "rerun": rerun_with(seeds),
        "machine": machine,
        **({"overrides": overrides} if overrides else {}),
        **{key: value for key, value in record.items() if key not in ("table", "title")},
    }
    figures = _draw_figures(out, table)
    text = markdown(
        record,
        table,
        machine,
        rerun_with,
        sweep_dir,
        results,
        other_sweep,
        train_commands(table, out, overrides),
        figures,
    )
    directory = RunDirectory(out)
    out.mkdir(parents=True, exist_ok=True)
    directory.write_text(f"{table.name}.md", text + "\n")
    directory.write_json(f"{table.name}.json", record)
    print(text.split("\n\n## ")[0])
    print(
        f"written: {out / (table.name + '.md')}, {out / (table.name + '.json')}"
        + (f", {len(figures)} figures in {out / (table.name + FIGURES)}" if figures else "")
    )


def _draw_figures(out: Path, table) -> list:
    """The sweep's figures in OUT/NAME-figures, which the report owns and
    redraws each time (files no longer drawn are removed): the PNG files'
    paths relative to OUT ([] without matplotlib or runs, said on stderr)."""
    from .figures import FigureError
    from .plots import write_figures
    from .sweep_figures import sweep_figures

    name = table.name
    paper = {setting: row.paper for row in table.rows for setting in row.settings()}
    try:
        figures, _ = sweep_figures(out / name, confusions=table.confusions, paper=paper, paper_figures=table.figures)
        _relative_sources(figures, out)
        written = write_figures(figures, out / (name + FIGURES))
    except (FigureError, FileNotFoundError) as error:  # no matplotlib, no runs
        print(f"npcomp reproduce: no figures ({error})", file=sys.stderr)
        return []
    for path in (out / (name + FIGURES)).iterdir():
        if str(path) not in written and path.suffix in (".png", ".svg", ".json"):
            path.unlink()
    return [Path(path).relative_to(out).as_posix() for path in written if str(path).endswith(".png")]


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
                    holder[key] = [relative(path) if isinstance(path, str) else path for path in holder[key]]


def reports_summary(out: Path) -> str:
    """The summary table of the reports in ``out``, in the order of TABLES."""
    from npcomp.runfiles.rundir import RunDirectory

    from .paper_tables import TABLES
    from .report import summary_table

    directory = RunDirectory(out)  # a damaged report is named (RunFileError)
    reports = [directory.read_json(f"{name}.json") for name in TABLES if (out / f"{name}.json").is_file()]
    return summary_table(reports)
