"""The report of a reproduced paper table (``npcomp reproduce``): every row
of the paper's table with its status, each trained setting's figures over
its seeds beside the paper's, a verdict, and where each option comes from.
This module computes the records (``TABLE.json``); ``report_markdown.py``
writes them as ``TABLE.md``.

Statuses: *measured* (at least ``MIN_SEEDS`` finished seeds; in a table
that cross-validates, every fold of a seed), *not yet measured* (fewer: how
many are said), *no data* and *not implemented* (with the reason,
``paper_rows.py``; a table on a user's copy of a corpus reports its rows
*no data* while the copy is not found and they have no run).  Verdicts, on
the row's main metric (root accuracy; Pearson's r on SICK; the ranking loss
on MPQA), for a measured setting: *above* when the paper's figure lies
below our 95% confidence interval of the mean (Student's t), *reached* when
our mean is at or above it, *within noise* when it lies inside the
interval, *below* otherwise; for a loss, where lower is better, the same
with the comparisons turned round.  Where the paper prints its standard
deviation over a stated number of runs (Tai et al.), Welch's test of the
two means decides *above* and *below* instead (``differences.py``), and the
paper's claims between its rows are tested on ours (``paper_claims.py``).

A row's ``-dev`` setting is *chosen on dev* only when the committed runs
say so: its mean dev figure is the highest of the row's settings, each
measured (``dev_choices``); otherwise it is an alternative, tried and not
chosen.  Nothing is chosen on test.
"""

from __future__ import annotations

import json
from pathlib import Path

from npcomp.runfiles.machine import machine_summary

from .differences import MEASURED, NOT_YET, against_paper_runs, claim_records, comparison_records, variant_records
from .option_sources import setting_kind, setting_options
from .paper_rows import LOWER_IS_BETTER, MIN_SEEDS, NO_DATA, PARAMETERS, PROTOCOL, Deviation, Table
from .report_provenance import run_provenance

__all__ = [
    "report_record",
    "summary_table",
    "committed_results",
    "verdict",
    "comparison_records",
    "claim_records",
    "MEASURED",
    "NOT_YET",
]
ABOVE, REACHED, WITHIN_NOISE, BELOW = "above", "reached", "within noise", "below"
TOO_FEW = "too few seeds"
# what each metric is called and how it is printed
METRIC_NAMES = {
    "root_acc": "test root accuracy (%)",
    "all_acc": "test all-phrase accuracy (%)",
    "pearson": "test Pearson's r",
    "spearman": "test Spearman's rho",
    "mse": "test MSE",
    "ranking_loss": "test average ranking loss (MPQA)",
    "macro_f1": "test macro-F1 (%)",
    "mae": "test mean absolute error",
    "accuracy": "test accuracy (%)",
}
METRICS = ("root_acc", "all_acc", "pearson", "spearman", "mse", "macro_f1", "ranking_loss", "mae", "accuracy")
# what a setting's kind (option_sources.setting_kind) is called
KINDS = {
    "paper": "paper",
    "dev": "chosen on dev",
    "alternative": "alternative, not chosen",
    "undecided": "alternative, not yet compared on dev",
}


def verdict(paper: float | None, ours: dict | None, metric: str | None = None, test: dict | None = None) -> str:
    """The verdict of ``ours`` (summary.describe of ``metric``) against the
    paper; a loss (``LOWER_IS_BETTER``) is judged with its sign turned.
    ``test``: Welch's test of our mean against the paper's over its runs
    (``differences.against_paper_runs``), which decides *above* and
    *below* in place of our interval alone."""
    if test is not None and paper is not None and ours is not None:
        low, high = test["ci95"]
        return ABOVE if low > 0 else BELOW if high < 0 else REACHED if test["difference"] >= 0 else WITHIN_NOISE
    if paper is None:
        return "no paper figure"
    if ours is None:
        return "not run"
    if metric in LOWER_IS_BETTER:
        turned = dict(
            ours, mean=-ours["mean"], ci95=None if ours["ci95"] is None else [-ours["ci95"][1], -ours["ci95"][0]]
        )
        return verdict(-paper, turned)
    if ours["ci95"] is not None and paper < ours["ci95"][0]:
        return ABOVE
    if ours["mean"] >= paper:
        return REACHED
    if ours["ci95"] is None:
        return TOO_FEW
    low, high = ours["ci95"]
    return WITHIN_NOISE if low <= paper <= high else BELOW


def paper_number(value: float, metric: str) -> str:
    """A paper's figure as the papers print it: percentages to one decimal."""
    return number(value, metric) if metric in ("pearson", "spearman", "mse", "ranking_loss", "mae") else f"{value:.1f}"


def number(value: float, metric: str) -> str:
    """A figure as the reports print it: 4 decimals for correlations and
    losses, 2 for percentages."""
    return f"{value:.4f}" if metric in ("pearson", "spearman", "mse", "ranking_loss", "mae") else f"{value:.2f}"


# --------------------------------------------------------------------------
# the runs of a table, as committed
# --------------------------------------------------------------------------


def committed_results(sweep_dir: str | Path) -> dict | None:
    """The results record of a sweep directory
    (``sweep_results.sweep_results``) from its plan and its runs alone,
    reading nothing else and writing nothing; None without a plan."""
    from .sweep_plan import PLAN, PlannedRun
    from .sweep_results import sweep_results

    path = Path(sweep_dir) / PLAN
    if not path.is_file():
        return None
    plan = json.loads(path.read_text(encoding="utf-8"))
    runs = [
        PlannedRun(
            name=name,
            setting=record["setting"],
            seed=record["seed"],
            options=record["options"],
            fold=record.get("fold"),
        )
        for name, record in plan["runs"].items()
    ]
    return sweep_results(sweep_dir, runs)


def _run_metrics(sweep_dir: Path, relative: str) -> dict:
    return json.loads((sweep_dir / relative / "metrics.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------
# the records
# --------------------------------------------------------------------------


def dev_choices(table: Table, results: dict | None) -> dict:
    """Row name -> its dev comparison, for each row with a ``-dev`` setting:
    ``candidates`` (setting, mean dev figure, n), ``metric``, and ``chosen``
    (the setting with the highest mean dev figure) once every candidate has
    MIN_SEEDS finished seeds, else None."""
    by_setting = {record["setting"]: record for record in (results or {}).get("settings", [])}
    out = {}
    for row in table.rows:
        names = list(row.settings())
        if len(names) < 2:
            continue
        metric = f"dev_{row.metric}"
        candidates = []
        for name in names:
            stats = by_setting.get(name, {}).get(metric)
            candidates.append(
                {"setting": name, "n": stats["n"] if stats else 0, "mean": stats["mean"] if stats else None}
            )
        decided = all(candidate["n"] >= MIN_SEEDS for candidate in candidates)
        sign = -1 if row.metric in LOWER_IS_BETTER else 1
        chosen = max(candidates, key=lambda candidate: sign * candidate["mean"])["setting"] if decided else None
        out[row.name] = {"metric": metric, "candidates": candidates, "chosen": chosen, "runs": f"{table.name}/runs"}
    return out


def best_of(sweep_dir: Path, record: dict, metric: str, count: int, paper) -> dict:
    """The paper's protocol of a row printed as the best of ``count`` runs:
    the test figure of the seed best on dev among seeds 1..count (the lower
    seed on a tie), once all of them have finished."""
    seeds = dict(zip(record.get("seeds", []), record.get("runs", [])))
    wanted = list(range(1, count + 1))
    finished = [seed for seed in wanted if seed in seeds]
    if len(finished) < count:
        return {"count": count, "finished": len(finished)}
    runs = {seed: _run_metrics(sweep_dir, seeds[seed]) for seed in wanted}
    best = max(wanted, key=lambda seed: (runs[seed]["dev"][metric], -seed))
    test = runs[best]["test"][metric]
    out = {"count": count, "finished": count, "seed": best, "dev": runs[best]["dev"][metric], "test": test}
    if paper is not None:
        out["verdict"] = REACHED if test >= paper else BELOW
    return out


def deviations(table: Table, row, record: dict, sweep_dir: Path) -> list:
    """A row's departures from the paper, as the report's JSON carries them
    (``Deviation.record``): the row's own; the paper's protocol where its
    figure is not a mean over runs (a best of N on dev, or the table's: one
    run tuned on dev); for a setting trained here whose model the paper
    gives a parameter count, ours (from its first run) against it."""
    out = [one.record() for one in row.deviations]
    if row.best_of:
        out.append(Deviation(PROTOCOL, "a mean over seeds", f"the best of {row.best_of} runs on dev").record())
    elif (
        table.paper_protocol is not None
        and row.paper.get(row.metric) is not None
        and row.model in table.paper_protocol.models
    ):
        out.append(table.paper_protocol.record())
    paper = table.paper_parameters.get(row.model)
    runs = record.get("runs") or []
    if paper and runs and not row.same_as:
        ours = _run_metrics(sweep_dir, runs[0]).get("parameters")
        if ours is not None:
            out.append(
                {
                    "what": PARAMETERS,
                    "ours": ours,
                    "paper": paper,
                    "counted": "ours: every weight but the word vectors; the paper's: "
                    "its Table 1's |θ|, matched across its models",
                    "text": f"{ours:,} parameters, the paper's {paper:,}",
                }
            )
    return out


def also_records(table: Table, row, record: dict) -> dict:
    """Metric -> the paper's figure, ours and the verdict, for each metric the
    table tests beside its main one (``Table.also``) where the row has a
    paper figure of it."""
    out = {}
    for metric in table.also:
        paper, stats = row.paper.get(metric), record.get(f"test_{metric}")
        if paper is None:
            continue
        measured = stats is not None and stats["n"] >= MIN_SEEDS
        out[metric] = {
            "paper": paper,
            "ours": stats if measured else None,
            "n": stats["n"] if stats else 0,
            "verdict": verdict(paper, stats, metric) if measured else NOT_YET,
        }
    return out


def _entry(
    row,
    name: str | None,
    record: dict,
    choice: dict | None,
    folds: int = 0,
    missing: str | None = None,
    paper_runs: int = 0,
) -> dict:
    """The record of one (row, setting): status, statistics, verdict, options;
    ``folds``: the folds of a table that cross-validates (its statistics are
    over them); ``missing``: why a row without runs has no data;
    ``paper_runs``: the runs the paper's figures are over, where it says."""
    metric = row.metric
    paper = row.paper.get(metric)
    entry = {
        "row": row.name,
        "label": row.label,
        "source": row.source,
        "setting": name,
        "metric": metric,
        "paper": row.paper,
    }
    if row.paper_std:
        entry["paper_std"] = row.paper_std
    if row.status:
        return dict(entry, status=row.status, reason=row.reason, ours=None, verdict=row.status)
    stats = record.get(f"test_{metric}")
    n = stats["n"] if stats else 0
    needed, unit = (folds, "folds") if folds else (MIN_SEEDS, "seeds")
    measured = n >= needed
    if n == 0 and missing is not None:  # the options it would train with, below
        entry.update(status=NO_DATA, reason=missing, ours=None, verdict=NO_DATA)
    else:
        test = (
            against_paper_runs(paper, row.paper_std[metric], paper_runs, stats, metric)
            if measured and paper is not None and paper_runs and metric in row.paper_std
            else None
        )
        entry.update(
            status=MEASURED if measured else NOT_YET,
            n=n,
            ours=stats if measured else None,
            verdict=verdict(paper, stats, metric, test) if measured else f"{NOT_YET} ({n} of {needed} {unit})",
        )
        if test is not None:
            entry["against_paper"] = test
    if folds:
        entry["over"] = {"folds": folds, "seeds": sorted(set(record.get("seeds", [])))}
    entry["test"] = {key: record[f"test_{key}"] for key in METRICS if f"test_{key}" in record}
    entry["dev"] = {key: record[f"dev_{key}"] for key in METRICS if f"dev_{key}" in record}
    if row.same_as:
        entry["same_as"] = row.same_as
        return entry
    chosen = None if choice is None or choice["chosen"] is None else choice["chosen"] == name
    options = setting_options(row, name, chosen)
    entry.update(kind=setting_kind(options), options=options)
    return entry


def report_record(
    table: Table, results: dict | None, out: Path, other_results=None, missing: str | None = None
) -> dict:
    """DIR/TABLE.json: every row of the table with its status, and per
    trained setting its statistics, verdict and options; the dev choices.
    ``other_results(table name)``: another table's results, for the rows
    measured by another report; ``missing``: why the rows of a table on a
    user's copy of a corpus have no data (the copy not found), for those
    without runs."""
    out = Path(out)
    by_setting = {record["setting"]: record for record in (results or {}).get("settings", [])}
    choices = dev_choices(table, results)
    folds = ((results or {}).get("folds") or table.folds) if table.folds else 0
    entries = []
    for row in table.rows:
        if row.status:
            entries.append(_entry(row, None, {}, None))
        elif row.same_as:
            other, setting = row.same_as.split("/")
            found = (other_results(other) if other_results else None) or {}
            record = {one["setting"]: one for one in found.get("settings", [])}.get(setting, {})
            entries.append(_entry(row, setting, record, None))
            _beside(entries[-1], table, row, record, out / other)
        else:
            for name in row.settings():
                entry = _entry(
                    row,
                    name,
                    by_setting.get(name, {}),
                    choices.get(row.name),
                    folds,
                    missing,
                    table.paper_runs if name == row.name else 0,
                )
                if row.best_of and name == row.name:
                    entry["best_of"] = best_of(
                        out / table.name, by_setting.get(name, {}), row.metric, row.best_of, row.paper.get(row.metric)
                    )
                entries.append(entry)
                _beside(entry, table, row, by_setting.get(name, {}), out / table.name)
    record = {"table": table.name, "title": table.title, "note": table.note, "rows": entries, "dev_choices": choices}
    if table.comparisons:
        record["comparisons"] = comparison_records(table, results, out / table.name)
    if table.claims:
        record["claims"] = claim_records(table, results, out, other_results)
    variants = variant_records(table, results, out, committed_results)
    if variants:
        record["variants"] = variants
    if folds:
        record["folds"] = folds
    record["provenance"] = run_provenance(out / table.name, results)
    return record


def _beside(entry: dict, table: Table, row, record: dict, sweep_dir: Path) -> None:
    """An entry's departures from the paper and its other tested columns."""
    departures = deviations(table, row, record, sweep_dir)
    if departures:
        entry["deviations"] = departures
    also = also_records(table, row, record)
    if also:
        entry["also"] = also


def machine_line(sweep_dir: Path, results: dict | None) -> str:
    """The machine the runs trained on, from the first finished run's metrics.json."""
    for record in (results or {}).get("runs", {}).values():
        if record["status"] != "finished":
            continue
        return machine_summary(_run_metrics(sweep_dir, record["run_dir"]).get("machine") or {})
    return "no finished run"


def summary_table(reports: list) -> str:
    """The README's results table from the reports (TABLE.json records): one
    line per trained setting, measured or not yet, and per table a line
    counting its rows not measured here."""
    lines = ["| table | row | setting | paper | ours (mean ± std, n) | verdict |", "|---|---|---|---|---|---|"]
    for record in reports:
        link = f"[{record['table']}](docs/results/{record['table']}.md)"
        if without_paper(record):
            lines.append(f"| {link} | {_paperless_summary(record)} | | | | |")
            continue
        others = {}
        for row in record["rows"]:
            if row["status"] not in (MEASURED, NOT_YET) or row.get("same_as"):
                others[row["status"] if not row.get("same_as") else "in another report"] = (
                    others.get(row["status"] if not row.get("same_as") else "in another report", 0) + 1
                )
                continue
            metric, ours = row["metric"], row["ours"]
            paper = row["paper"].get(metric)
            paper_text = "-" if paper is None else paper_number(paper, metric)
            ours_text = (
                "-" if ours is None else f"{number(ours['mean'], metric)} ± {number(ours['std'], metric)} ({ours['n']})"
            )
            lines.append(
                f"| {link} | {row['label']} | {KINDS[row['kind']]} | {paper_text} | {ours_text} | {row['verdict']} |"
            )
        if others:
            counted = ", ".join(f"{count} {status}" for status, count in others.items())
            lines.append(f"| {link} | the paper's other rows: {counted} | | | | |")
        if record.get("claims"):
            lines.append(f"| {link} | {_claims_summary(record)} | | | | |")
    return "\n".join(lines)


def _claims_summary(record: dict) -> str:
    """A report's tests of its paper's claims in one line, their verdicts counted."""
    verdicts = {}
    for one in record["claims"]:
        verdict = one.get("verdict") or NOT_YET
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return f"[the paper's claims](docs/results/{record['table']}.md#the-papers-claims): " + ", ".join(
        f"{verdict}: {count}" for verdict, count in verdicts.items()
    )


def without_paper(record: dict) -> bool:
    """Whether a report is of no paper's table: none of its rows has a paper's figure."""
    return not any(value is not None for entry in record["rows"] for value in entry["paper"].values())


def _paperless_summary(record: dict) -> str:
    """A table of no paper in one line: its settings measured and its
    comparisons' verdicts, counted."""
    measured = sum(row["status"] == MEASURED for row in record["rows"])
    text = f"no paper's table: {measured} of {len(record['rows'])} settings measured"
    comparisons = record.get("comparisons") or []
    if comparisons:
        verdicts = {}
        for one in comparisons:
            verdict = {"first above": "above 0", "first below": "below 0"}.get(
                one.get("verdict"), one.get("verdict") or "not yet measured"
            )
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
        noun = "difference" if len(comparisons) == 1 else "differences"
        text += f"; {len(comparisons)} {noun}: " + ", ".join(
            f"{count} {verdict}" for verdict, count in verdicts.items()
        )
    return text
