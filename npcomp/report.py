"""The report of a reproduced paper table (``npcomp reproduce``): each row's
figure from the paper beside ours over the seeds, with a verdict.

Verdicts, on the row's main metric (root accuracy; Pearson's r on SICK):
*reached* when our mean is at or above the paper's figure, *within noise*
when the paper's figure lies inside our 95% confidence interval of the mean
(Student's t), *below* otherwise.  A setting with fewer than two finished
seeds has no interval and is *too few seeds* unless reached.
"""
from __future__ import annotations

import json
from pathlib import Path

from .options import command_line
from .paper_tables import Table

REACHED, WITHIN_NOISE, BELOW, TOO_FEW = "reached", "within noise", "below", "too few seeds"
# what each metric is called and how it is printed
METRIC_NAMES = {"root_acc": "test root accuracy (%)", "all_acc": "test all-phrase accuracy (%)",
                "pearson": "test Pearson's r", "spearman": "test Spearman's rho",
                "mse": "test MSE"}


def verdict(paper: float | None, ours: dict | None) -> str:
    """The verdict of ``ours`` (summary.describe of a metric) against the paper."""
    if paper is None:
        return "no paper figure"
    if ours is None:
        return "not run"
    if ours["mean"] >= paper:
        return REACHED
    if ours["ci95"] is None:
        return TOO_FEW
    low, high = ours["ci95"]
    return WITHIN_NOISE if low <= paper <= high else BELOW


def _number(value: float, metric: str) -> str:
    return f"{value:.4f}" if metric in ("pearson", "spearman", "mse") else f"{value:.2f}"


def _spread(stats: dict, metric: str) -> tuple:
    """(mean ± std, 95% CI, min-max) as text."""
    mean = f"{_number(stats['mean'], metric)} ± {_number(stats['std'], metric)}"
    ci = ("-" if stats["ci95"] is None else
          f"[{_number(stats['ci95'][0], metric)}, {_number(stats['ci95'][1], metric)}]")
    return mean, ci, f"{_number(stats['min'], metric)}-{_number(stats['max'], metric)}"


def row_records(table: Table, results: dict, rows=None) -> list:
    """One record per (row, setting) of ``table`` in the sweep ``results``
    (sweep.json): the row, the setting's name and kind (printed / dev), its
    statistics and verdict."""
    by_setting = {record["setting"]: record for record in results["settings"]}
    out = []
    for row in table.rows:
        if rows is not None and row.name not in rows:
            continue
        for name, options in row.settings().items():
            record = by_setting.get(name, {})
            stats = record.get(f"test_{row.metric}")
            out.append({"row": row, "setting": name, "options": options,
                        "kind": "chosen on dev" if name.endswith("-dev") else "printed",
                        "stats": stats, "record": record,
                        "verdict": verdict(row.paper.get(row.metric), stats)})
    return out


def train_command(options: dict, seed: str = "S") -> str:
    """The `npcomp train` command of a setting for one seed."""
    return " ".join(["npcomp", "train", *command_line(options), "--seed", seed])


def machine_line(results: dict) -> str:
    """The machine the runs trained on, from a finished run's metrics.json."""
    for record in results["runs"].values():
        if record["status"] != "finished":
            continue
        path = Path(record["run_dir"]) / "metrics.json"
        machine = json.loads(path.read_text(encoding="utf-8")).get("machine") or {}
        parts = [machine.get("cpu"), machine.get("cores") and f"{machine['cores']} cores",
                 machine.get("machine"),
                 machine.get("blas_kernels") and f"OpenBLAS kernels {machine['blas_kernels']}",
                 machine.get("numpy") and f"NumPy {machine['numpy']}",
                 machine.get("numba") and f"numba {machine['numba']}"]
        return ", ".join(part for part in parts if part) or "not recorded"
    return "no finished run"


def markdown(table: Table, results: dict, reproduce_command: str, rows=None,
             figures=()) -> str:
    """DIR/TABLE.md: the table, its ``figures`` (PNG paths relative to DIR),
    then each row's settings, vectors and command."""
    records = row_records(table, results, rows)
    lines = [f"# {table.title}", "",
             f"Test-set figures over the seeds of each setting (mean ± sample std, the 95% "
             f"confidence interval of the mean, min-max, n), against the paper's. Machine: "
             f"{machine_line(results)}. Rerun: `{reproduce_command}`.", "",
             "| row | setting | paper | ours: mean ± std | 95% CI | min-max | n | verdict | "
             "training time per seed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for item in records:
        row, stats, metric = item["row"], item["stats"], item["row"].metric
        paper = row.paper.get(metric)
        paper_text = "-" if paper is None else _number(paper, metric)
        if stats is None:
            ours = ci = extent = "-"
            n = 0
        else:
            (ours, ci, extent), n = _spread(stats, metric), stats["n"]
        minutes = _training_minutes(item["record"])
        lines.append(f"| {row.label} | {item['kind']} | {paper_text} | {ours} | {ci} | "
                     f"{extent} | {n} | {item['verdict']} | {minutes} |")
    lines += ["", f"Metric: {METRIC_NAMES[table.rows[0].metric]}.", ""]
    lines += [f"![{Path(path).stem}]({path})" for path in figures]
    if figures:
        lines.append("")
    for row in table.rows:
        if rows is not None and row.name not in rows:
            continue
        lines += [f"## {row.label}", "", f"- vectors: {row.vectors}"]
        for name, options in row.settings().items():
            source = (row.dev_source if name.endswith("-dev") else
                      "the paper's printed setting: the model's defaults for the task "
                      "(`npcomp train --help-defaults`)")
            lines.append(f"- `{name}`, {source}: `{train_command(options)}`")
        others = {key: value for key, value in row.paper.items()
                  if key != row.metric and value is not None}
        if others:
            lines.append("- the paper's other figures: " + ", ".join(
                f"{METRIC_NAMES[key]} {_number(value, key)}" for key, value in others.items()))
        lines.append("")
    return "\n".join(lines)


def _training_minutes(record: dict) -> str:
    """Mean training time per seed, in minutes, from the runs' metrics."""
    seconds = []
    for run_dir in record.get("runs", []):
        path = Path(run_dir) / "metrics.json"
        if path.is_file():
            metrics = json.loads(path.read_text(encoding="utf-8"))
            if metrics.get("train_wall_s") is not None:
                seconds.append(metrics["train_wall_s"] + (metrics.get("setup_s") or 0.0))
    if not seconds:
        return "-"
    mean = sum(seconds) / len(seconds)
    return f"{mean:.0f} s" if mean < 90 else f"{mean / 60:.1f} min"


def report_record(table: Table, results: dict, rows=None) -> dict:
    """DIR/TABLE.json: the report's numbers, for other tools."""
    return {"table": table.name, "title": table.title,
            "rows": [{"row": item["row"].name, "label": item["row"].label,
                      "setting": item["setting"], "kind": item["kind"],
                      "options": item["options"], "metric": item["row"].metric,
                      "paper": item["row"].paper, "ours": item["stats"],
                      "verdict": item["verdict"]}
                     for item in row_records(table, results, rows)]}




def summary_table(reports: list) -> str:
    """One Markdown line per row and setting of every report (TABLE.json
    records): the README's results table."""
    lines = ["| table | row | setting | paper | ours (mean ± std, n) | verdict |",
             "|---|---|---|---|---|---|"]
    for record in reports:
        for row in record["rows"]:
            metric, ours = row["metric"], row["ours"]
            paper = row["paper"].get(metric)
            paper_text = "-" if paper is None else _number(paper, metric)
            ours_text = ("-" if ours is None else
                         f"{_number(ours['mean'], metric)} ± {_number(ours['std'], metric)} "
                         f"({ours['n']})")
            lines.append(f"| [{record['table']}](docs/results/{record['table']}.md) | "
                         f"{row['label']} | {row['kind']} | {paper_text} | {ours_text} | "
                         f"{row['verdict']} |")
    return "\n".join(lines)
