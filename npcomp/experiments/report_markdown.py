"""DIR/TABLE.md: a reproduced table's report (``report.report_record``) as
Markdown: every row of the paper's table with its status, our figures
beside the paper's, the choices on dev, the paper's protocol where it is
not a mean, the figures, and per row where each option comes from and the
command that trains it."""

from __future__ import annotations

from .paper_rows import LOWER_IS_BETTER, MIN_SEEDS
from .differences import HIGHER, HOLDS, LOWER, NO_DIFFERENCE, REVERSED
from .report import KINDS, METRIC_NAMES, number, paper_number, without_paper
from .report_provenance import revision_lines, timing

# the order an option's sources are listed in
SOURCE_ORDER = ("paper", "substitute", "dev", "alternative", "undecided", "default")


def _spread(stats: dict, metric: str) -> tuple:
    """(mean ± std, 95% CI, min-max) as text."""
    mean = f"{number(stats['mean'], metric)} ± {number(stats['std'], metric)}"
    ci = "-" if stats["ci95"] is None else f"[{number(stats['ci95'][0], metric)}, {number(stats['ci95'][1], metric)}]"
    return mean, ci, f"{number(stats['min'], metric)}-{number(stats['max'], metric)}"


def _time(timed: dict | None) -> str:
    """A training time with the load it ran under."""
    if timed is None:
        return "-"
    seconds = timed["seconds"]
    shown = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"
    return f"{shown} (load {timed['load']:.1f} on {timed['cores']} cores)"


def _setting_cell(entry: dict) -> str:
    if entry.get("same_as"):
        other, setting = entry["same_as"].split("/")
        return f"[{other}: `{setting}`]({other}.md)"
    if entry["setting"] is None:
        return "-"
    return f"`{entry['setting']}` ({KINDS[entry['kind']]})"


def _timings(record: dict, sweep_dir, results, other_sweep) -> list:
    """Each entry's training time and load (``report_provenance.timing``), or None."""
    by_setting = {one["setting"]: one for one in (results or {}).get("settings", [])}
    out = []
    for entry in record["rows"]:
        timed = None
        if entry["setting"] is not None and not entry.get("same_as"):
            timed = timing(sweep_dir, by_setting.get(entry["setting"], {}))
        elif entry.get("same_as"):
            other, setting = entry["same_as"].split("/")
            directory, found = other_sweep(other)
            timed = timing(
                directory, {one["setting"]: one for one in (found or {}).get("settings", [])}.get(setting, {})
            )
        out.append(timed)
    return out


def _verdict_cell(entry: dict) -> str:
    """The verdict, the paper's protocol where it is a best of N, and the
    row's departures from the paper (``deviations``)."""
    verdict = entry["verdict"]
    if "best_of" in entry:  # the paper's figure is a best of N on dev: ours beside
        best = entry["best_of"]
        verdict += f"; best of {best['count']} on dev: " + (
            best.get("verdict", "-") if best["finished"] == best["count"] else "pending"
        )
    for deviation in entry.get("deviations", []):
        if not ("best_of" in entry and deviation["what"] == "protocol"):  # said just above
            verdict += f"; {deviation['text']}"
    return verdict


def table_lines(record: dict, sweep_dir, results, other_sweep) -> list:
    """The report's table: a line per row and setting; a training time
    column only where some run recorded the load it trained under."""
    per = "fold" if record.get("folds") else "seed"
    paperless = without_paper(record)
    timings = _timings(record, sweep_dir, results, other_sweep)
    timed = any(one is not None for one in timings)
    head = (
        ["row", "setting", "mean ± std", "95% CI", "min-max", "n", "status"]
        if paperless
        else ["paper's table", "row", "setting", "paper", "ours: mean ± std", "95% CI", "min-max", "n", "verdict"]
    )
    head += [f"training time per {per} (machine load)"] if timed else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for entry, timed_entry in zip(record["rows"], timings):
        metric = entry["metric"]
        paper = entry["paper"].get(metric)
        paper_text = "-" if paper is None else paper_number(paper, metric)
        if paper is not None and metric in entry.get("paper_std", {}):
            paper_text += f" ({paper_std_number(entry['paper_std'][metric], metric)})"
        ours = ci = extent = "-"
        if entry.get("ours"):
            ours, ci, extent = _spread(entry["ours"], metric)
        n = entry.get("n", "-")
        time_cell = f" {_time(timed_entry)} |" if timed else ""
        if paperless:
            status = entry["status"] if entry.get("ours") else _verdict_cell(entry)
            lines.append(
                f"| {entry['label']} | {_setting_cell(entry)} | {ours} | {ci} | {extent} | {n} | {status} |{time_cell}"
            )
            continue
        lines.append(
            f"| {entry['source'] or '-'} | {entry['label']} | {_setting_cell(entry)} | "
            f"{paper_text} | {ours} | {ci} | {extent} | {n} | {_verdict_cell(entry)} |"
            f"{time_cell}"
        )
    return lines


def _also(record: dict) -> list:
    """The paper's other columns a table tests (``Table.also``): per metric,
    each row's paper figure beside ours and the verdict."""
    metrics = list(dict.fromkeys(metric for entry in record["rows"] for metric in entry.get("also", {})))
    lines = []
    for metric in metrics:
        lines += [
            f"## The paper's other column: {METRIC_NAMES[metric]}",
            "",
            "The same runs on the paper's other column, each row's paper figure beside "
            "our mean over its seeds, with the verdicts of the table above.",
            "",
            "| row | setting | paper | ours: mean ± std | 95% CI | min-max | n | verdict |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for entry in record["rows"]:
            one = entry.get("also", {}).get(metric)
            if one is None:
                continue
            ours = ci = extent = "-"
            if one["ours"]:
                ours, ci, extent = _spread(one["ours"], metric)
            verdict = one["verdict"] if one["ours"] else f"{one['verdict']} ({one['n']} of {MIN_SEEDS} seeds)"
            lines.append(
                f"| {entry['label']} | {_setting_cell(entry)} | "
                f"{paper_number(one['paper'], metric)} | {ours} | {ci} | {extent} | "
                f"{one['n']} | {verdict} |"
            )
        lines.append("")
    return lines


def _comparisons(record: dict) -> list:
    comparisons = record.get("comparisons")
    if not comparisons:
        return []
    metric = comparisons[0]["metric"]
    lines = [
        "## Comparisons",
        "",
        "Each pair of settings: the difference of their mean test figures (first minus "
        "second), Welch's 95% confidence interval of it and its two-sided p (the seeds "
        "of each setting taken as independent samples). *Above* or *below*: the "
        "interval lies wholly on one side of 0; *within noise*: it holds 0.",
        "",
        "| comparison | first | second | difference | 95% CI | p | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for one in comparisons:
        if one["status"] != "measured":
            figures = f"- | - | - | not yet measured ({min(one['n'])} of {MIN_SEEDS} seeds)"
        else:
            low, high = one["ci95"]
            verdict = {"first above": "above", "first below": "below"}.get(one["verdict"], one["verdict"])
            figures = (
                f"{_signed(one['difference'], metric)} | [{_signed(low, metric)}, "
                f"{_signed(high, metric)}] | {one['p']:.2g} | {verdict}"
            )
        lines.append(f"| {one['label']} | `{one['first']}` | `{one['second']}` | {figures} |")
    return lines + [""]


def _variants(record: dict) -> list:
    lines = []
    for variant in record.get("variants") or []:
        lines += [
            f"## On {variant['label']}",
            "",
            variant["note"],
            "",
            "Each row's paper setting, its seeds there (the report in "
            f"[{variant['directory']}/{record['table']}.md]"
            f"({variant['directory']}/{record['table']}.md)) "
            "against here: the difference of the mean test figures (there minus here), "
            "Welch's 95% confidence interval of it and its two-sided p, the seeds of each "
            f"side taken as independent samples. *{HIGHER.capitalize()}* or "
            f"*{LOWER}*: the interval lies wholly on one side of 0; *{NO_DIFFERENCE}*: "
            "it holds 0.",
            "",
            f"| row | here: mean ± std (n) | there ({variant['label']}): mean ± std (n) | "
            "difference | 95% CI | p | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for one in variant["rows"]:
            metric = one["metric"]
            if one["status"] != "measured":
                there, here = one["n"]
                figures = f"- | - | - | - | - | not yet measured ({there} seeds there, {here} here, of {MIN_SEEDS})"
            else:
                sides = [
                    f"{number(mean, metric)} ± {number(std, metric)} ({n})"
                    for mean, std, n in zip(one["means"][::-1], one["stds"][::-1], one["n"][::-1])
                ]
                low, high = one["ci95"]
                figures = (
                    f"{sides[0]} | {sides[1]} | {_signed(one['difference'], metric)} | "
                    f"[{_signed(low, metric)}, {_signed(high, metric)}] | "
                    f"{one['p']:.2g} | {one['verdict']}"
                )
            lines.append(f"| {one['label']} | {figures} |")
        lines.append("")
    return lines


def paper_std_number(value: float, metric: str) -> str:
    """A paper's standard deviation as the report prints it: a correlation's
    or loss's as the figures, a percentage to one decimal as Tai et al.
    print theirs, or two where it has them (Nayebi & Blundell's, printed as
    fractions)."""
    if metric in ("pearson", "spearman", "mse", "ranking_loss", "mae"):
        return number(value, metric)
    return f"{value:.1f}" if round(value, 1) == value else f"{value:.2f}"


def _claims(record: dict) -> list:
    claims = record.get("claims")
    if not claims:
        return []
    metric = claims[0]["metric"]
    better = "lower" if metric in LOWER_IS_BETTER else "higher"
    lines = [
        "## The paper's claims",
        "",
        "Each comparison the paper makes between two rows of its table, tested on our "
        "runs at the rows' paper settings: the difference of our mean test figures "
        f"(first minus second, so that a positive difference means the first {better}), "
        "Welch's 95% confidence interval of it and its two-sided p, the seeds of each "
        f"row taken as independent samples. *{HOLDS.capitalize()}*: the interval lies "
        f"above 0; *{REVERSED}*: below 0; *{NO_DIFFERENCE}*: it holds 0.",
        "",
        "| the paper's claim | where | first | second | paper | ours: difference | 95% CI | p | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for one in claims:
        paper = " against ".join("-" if value is None else paper_number(value, metric) for value in one["paper"])
        if one["status"] != "measured":
            figures = f"- | - | - | not yet measured ({min(one['n'])} of {MIN_SEEDS} seeds)"
        else:
            low, high = one["ci95"]
            figures = (
                f"{_signed(one['difference'], metric)} | [{_signed(low, metric)}, "
                f"{_signed(high, metric)}] | {one['p']:.2g} | {one['verdict']}"
            )
        lines.append(
            f"| {one['text']} | {one['source']} | `{one['first']}` | `{one['second']}` | {paper} | {figures} |"
        )
    return lines + [""]


def _signed(value: float, metric: str) -> str:
    text = number(abs(value), metric)
    return text if value >= 0 else f"−{text}"


def _not_measured(record: dict) -> list:
    rows = [entry for entry in record["rows"] if entry["status"] in ("no data", "not implemented")]
    if not rows:
        return []
    lines = ["## Rows not measured here", ""]
    for entry in rows:
        figures = ", ".join(
            f"{METRIC_NAMES[key].removeprefix('test ')} {paper_number(value, key)}"
            for key, value in entry["paper"].items()
            if value is not None
        )
        lines.append(f"- **{entry['label']}** ({entry['source']}, {figures}), *{entry['status']}*: {entry['reason']}.")
    return lines + [""]


def _dev_choices(record: dict) -> list:
    choices = record["dev_choices"]
    if not choices:
        return []
    labels = {entry["row"]: entry["label"] for entry in record["rows"]}
    lines = [
        "## Choices on dev",
        "",
        "Each row with an alternative setting (`ROW-dev`) against the paper's: the mean "
        "dev figure of each setting over its seeds (n), from the committed runs "
        f"([runs]({record['table']}/runs)). The setting with the highest mean is "
        "chosen on dev once every setting has "
        f"{MIN_SEEDS} seeds; test figures play no part.",
        "",
    ]
    for row, choice in choices.items():
        metric = choice["metric"].removeprefix("dev_")
        figures = ", ".join(
            f"`{one['setting']}` {'-' if one['mean'] is None else number(one['mean'], metric)} ({one['n']})"
            for one in choice["candidates"]
        )
        verdict = (
            f"dev chooses `{choice['chosen']}`"
            if choice["chosen"]
            else f"not yet decided (fewer than {MIN_SEEDS} seeds)"
        )
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
            lines.append(
                f"- {entry['label']}: pending, {best['finished']} of seeds "
                f"1-{best['count']} finished; `{more}` trains the others."
            )
            continue
        lines.append(
            f"- {entry['label']}: seed {best['seed']} is best on dev of seeds "
            f"1-{best['count']} ({number(best['dev'], metric)}); its test figure "
            f"{number(best['test'], metric)} against the paper's "
            f"{'-' if paper is None else paper_number(paper, metric)}: "
            f"{best.get('verdict', 'no paper figure')}."
        )
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
            f"{option['option']} {_value(option['value'])}"
        )
    ordered = sorted(groups.items(), key=lambda item: SOURCE_ORDER.index(item[0][0]))
    return "; ".join(f"*{source}* ({where}): {', '.join(values)}" for (source, where), values in ordered)


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
        others = {key: value for key, value in row.paper.items() if key != row.metric and value is not None}
        if others:
            lines.append(
                "- the paper's other figures: "
                + ", ".join(f"{METRIC_NAMES[key]} {paper_number(value, key)}" for key, value in others.items())
            )
        for entry in entries[row.name]:
            kind = KINDS.get(entry["kind"], entry["kind"])
            about = f", {row.dev_source}" if entry["setting"].endswith("-dev") else ""
            lines.append(f"- `{entry['setting']}` ({kind}{about}): `{commands[entry['setting']]}`")
            lines.append(f"  - options: {option_line(entry['options'])}")
        lines.append("")
    return lines


def _paper_std_sentence(record: dict, table) -> str:
    """What the paper's standard deviations (in parentheses) are and how a
    verdict uses them; nothing for a paper that prints none."""
    if not any(entry.get("paper_std") for entry in record["rows"]):
        return ""
    if table.paper_runs:
        return (
            f" In parentheses: the paper's standard deviation over its {table.paper_runs} "
            "runs; with it, the verdict is Welch's test of our mean against the paper's: "
            "*above* or *below* when its 95% interval of the difference lies wholly above "
            "or below 0, else *reached* (our mean at or above the paper's) or *within "
            "noise*."
        )
    return (
        " In parentheses: the paper's standard deviation; the paper does not say over how "
        "many runs, so the verdict is against our interval alone."
    )


def _deviations_sentence(record: dict) -> str:
    """What the departures beside a verdict are; nothing where no row has one."""
    found = {one["what"] for entry in record["rows"] for one in entry.get("deviations", [])}
    if not found:
        return ""
    text = (
        " Beside a verdict: the row's departures from the paper (ours, not the "
        "paper's: vectors, parses, how the figure is made)."
    )
    if "parameters" in found:
        text += (
            " Parameters: ours count every weight but the word vectors, the paper's its "
            "Table 1's, its models' counts matched to one another."
        )
    return text


def markdown(
    record: dict, table, machine: str, rerun_with, sweep_dir, results, other_sweep, commands: dict, figures=()
) -> str:
    """DIR/TABLE.md (``figures``: PNG paths relative to DIR; ``rerun_with(N)``:
    the command that reruns the table with N seeds, ``record["rerun"]`` the
    one that made it)."""
    rerun = record["rerun"]
    folds = record.get("folds")
    over = (
        f"the {folds} folds of each setting trained here ({folds}-fold cross-validation: "
        "each fold the test split of one run; test set; mean ± sample std, the 95% "
        f"confidence interval of the mean, min-max, n runs), measured once its {folds} "
        "folds have finished"
        if folds
        else "the seeds of each setting trained here (test set; mean ± sample std, the 95% "
        "confidence interval of the mean, min-max, n), measured once "
        f"{MIN_SEEDS} seeds have finished"
    )
    if without_paper(record):
        intro = (
            f"No paper's table: the settings below over {over}, and the differences "
            'between them ("Comparisons"). Settings: *paper* (no option chosen on '
            f"dev). Machine: {machine}. Rerun: `{rerun}`."
        )
    else:
        intro = (
            f"Every row of the paper's table: the paper's figure beside ours over {over}; "
            "rows measured by another report link to it. Verdicts: *above* (the "
            "paper's figure below our interval), *reached* (our mean at or above it), "
            "*within noise* (inside our interval), *below*. Settings: *paper* (no option "
            "chosen on dev), *chosen on dev*, or an *alternative* tried and not chosen "
            f'(below, "Choices on dev").{_paper_std_sentence(record, table)}'
            f"{_deviations_sentence(record)} Machine: "
            f"{machine}. Rerun: `{rerun}`."
        )
    lines = [f"# {table.title}", "", intro, ""]
    if record.get("overrides"):
        given = ", ".join(f"{key} {value}" for key, value in record["overrides"].items())
        lines += [
            f"**Not the paper's protocol**: these runs were made with {given} in place "
            "of the table's own (`npcomp reproduce --folds`, `--epochs`).",
            "",
        ]
    if record["note"]:
        lines += [record["note"], ""]
    lines += table_lines(record, sweep_dir, results, other_sweep)
    metric = table.rows[0].metric if table.rows[0].trained else next(row.metric for row in table.rows if row.trained)
    lower = " (lower is better)" if metric in LOWER_IS_BETTER else ""
    lines += ["", f"Metric: {METRIC_NAMES[metric]}{lower}.", ""]
    lines += (
        _also(record)
        + _claims(record)
        + _comparisons(record)
        + _variants(record)
        + _not_measured(record)
        + _dev_choices(record)
        + _protocol(record, rerun_with)
        + revision_lines(record, results)
    )
    lines += [f"![{path.rsplit('/', 1)[-1].removesuffix('.png')}]({path})" for path in figures]
    if figures:
        lines.append("")
    lines += _row_sections(record, table, commands)
    return "\n".join(lines)
