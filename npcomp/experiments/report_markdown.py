"""DIR/TABLE.md: a reproduced table's report (``report.report_record``) as
Markdown: every row of the paper's table with its status, our figures
beside the paper's, the choices on dev, the paper's protocol where it is
not a mean, the figures, and per row where each option comes from and the
command that trains it."""
from __future__ import annotations

from .paper_rows import LOWER_IS_BETTER, MIN_SEEDS
from .report import KINDS, METRIC_NAMES, number, paper_number, without_paper
from .report import training_seconds as _seconds

# the order an option's sources are listed in
SOURCE_ORDER = ("paper", "dev", "alternative", "undecided", "default")


def _spread(stats: dict, metric: str) -> tuple:
    """(mean ± std, 95% CI, min-max) as text."""
    mean = f"{number(stats['mean'], metric)} ± {number(stats['std'], metric)}"
    ci = ("-" if stats["ci95"] is None else
          f"[{number(stats['ci95'][0], metric)}, {number(stats['ci95'][1], metric)}]")
    return mean, ci, f"{number(stats['min'], metric)}-{number(stats['max'], metric)}"


def _minutes(seconds) -> str:
    if seconds is None:
        return "-"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def _setting_cell(entry: dict) -> str:
    if entry.get("same_as"):
        other, setting = entry["same_as"].split("/")
        return f"[{other}: `{setting}`]({other}.md)"
    if entry["setting"] is None:
        return "-"
    return f"`{entry['setting']}` ({KINDS[entry['kind']]})"


def table_lines(record: dict, sweep_dir, results, other_sweep) -> list:
    """The report's table: a line per row and setting."""
    by_setting = {one["setting"]: one for one in (results or {}).get("settings", [])}
    per = "fold" if record.get("folds") else "seed"
    paperless = without_paper(record)
    lines = (["| row | setting | mean ± std | 95% CI | min-max | n | status | "
              f"training time per {per} |", "|---|---|---|---|---|---|---|---|"]
             if paperless else
             ["| paper's table | row | setting | paper | ours: mean ± std | 95% CI | min-max | "
              f"n | verdict | training time per {per} |",
              "|---|---|---|---|---|---|---|---|---|---|"])
    for entry in record["rows"]:
        metric = entry["metric"]
        paper = entry["paper"].get(metric)
        paper_text = "-" if paper is None else paper_number(paper, metric)
        ours = ci = extent = "-"
        if entry.get("ours"):
            ours, ci, extent = _spread(entry["ours"], metric)
        n = entry.get("n", "-")
        seconds = None
        if entry["setting"] is not None and not entry.get("same_as"):
            seconds = _seconds(sweep_dir, by_setting.get(entry["setting"], {}))
        elif entry.get("same_as"):
            other, setting = entry["same_as"].split("/")
            directory, found = other_sweep(other)
            seconds = _seconds(directory, {one["setting"]: one for one in
                                           (found or {}).get("settings", [])}.get(setting, {}))
        verdict = entry["verdict"]
        if "best_of" in entry:   # the paper's figure is a best of N on dev: ours beside
            best = entry["best_of"]
            verdict += (f"; best of {best['count']} on dev: "
                        + (best.get("verdict", "-") if best["finished"] == best["count"]
                           else "pending"))
        if paperless:
            lines.append(f"| {entry['label']} | {_setting_cell(entry)} | {ours} | {ci} | "
                         f"{extent} | {n} | {entry['status'] if entry.get('ours') else verdict} | "
                         f"{_minutes(seconds)} |")
            continue
        lines.append(f"| {entry['source'] or '-'} | {entry['label']} | {_setting_cell(entry)} | "
                     f"{paper_text} | {ours} | {ci} | {extent} | {n} | {verdict} | "
                     f"{_minutes(seconds)} |")
    return lines


def _comparisons(record: dict) -> list:
    comparisons = record.get("comparisons")
    if not comparisons:
        return []
    metric = comparisons[0]["metric"]
    lines = ["## Comparisons", "",
             "Each pair of settings: the difference of their mean test figures (first minus "
             "second), Welch's 95% confidence interval of it and its two-sided p (the seeds "
             "of each setting taken as independent samples). *Above* or *below*: the "
             "interval lies wholly on one side of 0; *within noise*: it holds 0.", "",
             "| comparison | first | second | difference | 95% CI | p | verdict |",
             "|---|---|---|---|---|---|---|"]
    for one in comparisons:
        if one["status"] != "measured":
            figures = f"- | - | - | not yet measured ({min(one['n'])} of {MIN_SEEDS} seeds)"
        else:
            low, high = one["ci95"]
            verdict = {"first above": "above", "first below": "below"}.get(
                one["verdict"], one["verdict"])
            figures = (f"{_signed(one['difference'], metric)} | [{_signed(low, metric)}, "
                       f"{_signed(high, metric)}] | {one['p']:.2g} | {verdict}")
        lines.append(f"| {one['label']} | `{one['first']}` | `{one['second']}` | {figures} |")
    return lines + [""]


def _signed(value: float, metric: str) -> str:
    text = number(abs(value), metric)
    return text if value >= 0 else f"−{text}"


def _not_measured(record: dict) -> list:
    rows = [entry for entry in record["rows"] if entry["status"] in ("no data",
                                                                     "not implemented")]
    if not rows:
        return []
    lines = ["## Rows not measured here", ""]
    for entry in rows:
        figures = ", ".join(f"{METRIC_NAMES[key].removeprefix('test ')} "
                            f"{paper_number(value, key)}"
                            for key, value in entry["paper"].items() if value is not None)
        lines.append(f"- **{entry['label']}** ({entry['source']}, {figures}), "
                     f"*{entry['status']}*: {entry['reason']}.")
    return lines + [""]


def _dev_choices(record: dict) -> list:
    choices = record["dev_choices"]
    if not choices:
        return []
    labels = {entry["row"]: entry["label"] for entry in record["rows"]}
    lines = ["## Choices on dev", "",
             "Each row with an alternative setting (`ROW-dev`) against the paper's: the mean "
             "dev figure of each setting over its seeds (n), from the committed runs "
             f"([runs]({record['table']}/runs)). The setting with the highest mean is "
             "chosen on dev once every setting has "
             f"{MIN_SEEDS} seeds; test figures play no part.", ""]
    for row, choice in choices.items():
        metric = choice["metric"].removeprefix("dev_")
        figures = ", ".join(
            f"`{one['setting']}` "
            f"{'-' if one['mean'] is None else number(one['mean'], metric)} ({one['n']})"
            for one in choice["candidates"])
        verdict = (f"dev chooses `{choice['chosen']}`" if choice["chosen"] else
                   f"not yet decided (fewer than {MIN_SEEDS} seeds)")
        lines.append(f"- {labels[row]}: {figures}: {verdict}.")
    return lines + [""]


def _protocol(record: dict, rerun_with) -> list:
    rows = [entry for entry in record["rows"] if "best_of" in entry]
    if not rows:
        return []
    lines = ["## The paper's protocol", ""]
    for entry in rows:
        best, metric = entry["best_of"], entry["metric"]
        paper = entry["paper"].get(metric)
        if best["finished"] < best["count"]:
            more = rerun_with(best["count"])
            lines.append(f"- {entry['label']}: pending, {best['finished']} of seeds "
                         f"1-{best['count']} finished; `{more}` trains the others.")
            continue
        lines.append(f"- {entry['label']}: seed {best['seed']} is best on dev of seeds "
                     f"1-{best['count']} ({number(best['dev'], metric)}); its test figure "
                     f"{number(best['test'], metric)} against the paper's "
                     f"{'-' if paper is None else paper_number(paper, metric)}: "
                     f"{best.get('verdict', 'no paper figure')}.")
    return lines + [""]


def _value(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ",".join(_value(one) for one in value)
    return str(value)


def option_line(options: list) -> str:
    """Every option of a setting, grouped by source."""
    groups = {}
    for option in options:
        groups.setdefault((option["source"], option["where"]), []).append(
            f"{option['option']} {_value(option['value'])}")
    ordered = sorted(groups.items(), key=lambda item: SOURCE_ORDER.index(item[0][0]))
    return "; ".join(f"*{source}* ({where}): {', '.join(values)}"
                     for (source, where), values in ordered)


def _row_sections(record: dict, table, commands: dict) -> list:
    lines = []
    entries = {}
    for entry in record["rows"]:
        entries.setdefault(entry["row"], []).append(entry)
    for row in table.rows:
        if not row.trained:
            continue
        lines += [f"## {row.label}", ""]
        if row.source:
            lines.append(f"- the paper's table: {row.source}")
        lines.append(f"- vectors: {row.vectors}")
        others = {key: value for key, value in row.paper.items()
                  if key != row.metric and value is not None}
        if others:
            lines.append("- the paper's other figures: " + ", ".join(
                f"{METRIC_NAMES[key]} {paper_number(value, key)}"
                for key, value in others.items()))
        for entry in entries[row.name]:
            kind = KINDS.get(entry["kind"], entry["kind"])
            about = f", {row.dev_source}" if entry["setting"].endswith("-dev") else ""
            lines.append(f"- `{entry['setting']}` ({kind}{about}): "
                         f"`{commands[entry['setting']]}`")
            lines.append(f"  - options: {option_line(entry['options'])}")
        lines.append("")
    return lines


def markdown(record: dict, table, machine: str, rerun_with, sweep_dir, results,
             other_sweep, commands: dict, figures=()) -> str:
    """DIR/TABLE.md (``figures``: PNG paths relative to DIR; ``rerun_with(N)``:
    the command that reruns the table with N seeds, ``record["rerun"]`` the
    one that made it)."""
    rerun = record["rerun"]
    folds = record.get("folds")
    over = (f"the {folds} folds of each setting trained here ({folds}-fold cross-validation: "
            "each fold the test split of one run; test set; mean ± sample std, the 95% "
            f"confidence interval of the mean, min-max, n runs), measured once its {folds} "
            "folds have finished" if folds else
            "the seeds of each setting trained here (test set; mean ± sample std, the 95% "
            "confidence interval of the mean, min-max, n), measured once "
            f"{MIN_SEEDS} seeds have finished")
    if without_paper(record):
        intro = (f"No paper's table: the settings below over {over}, and the differences "
                 "between them (\"Comparisons\"). Settings: *paper* (no option chosen on "
                 f"dev). Machine: {machine}. Rerun: `{rerun}`.")
    else:
        intro = (f"Every row of the paper's table: the paper's figure beside ours over {over}; "
                 "rows measured by another report link to it. Verdicts: *above* (the "
                 "paper's figure below our interval), *reached* (our mean at or above it), "
                 "*within noise* (inside our interval), *below*. Settings: *paper* (no option "
                 "chosen on dev), *chosen on dev*, or an *alternative* tried and not chosen "
                 f"(below, \"Choices on dev\"). Machine: {machine}. Rerun: `{rerun}`.")
    lines = [f"# {table.title}", "", intro, ""]
    if record.get("overrides"):
        given = ", ".join(f"{key} {value}" for key, value in record["overrides"].items())
        lines += [f"**Not the paper's protocol**: these runs were made with {given} in place "
                  "of the table's own (`npcomp reproduce --folds`, `--epochs`).", ""]
    if record["note"]:
        lines += [record["note"], ""]
    lines += table_lines(record, sweep_dir, results, other_sweep)
    metric = table.rows[0].metric if table.rows[0].trained else \
        next(row.metric for row in table.rows if row.trained)
    lower = " (lower is better)" if metric in LOWER_IS_BETTER else ""
    lines += ["", f"Metric: {METRIC_NAMES[metric]}{lower}.", ""]
    lines += (_comparisons(record) + _not_measured(record) + _dev_choices(record)
              + _protocol(record, rerun_with))
    lines += [f"![{path.rsplit('/', 1)[-1].removesuffix('.png')}]({path})" for path in figures]
    if figures:
        lines.append("")
    lines += _row_sections(record, table, commands)
    return "\n".join(lines)
