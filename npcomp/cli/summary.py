"""`npcomp summary`: finished runs grouped by setting, over their seeds."""

from __future__ import annotations

import json


def add_parser(commands) -> None:
    """The summary command's options."""
    summary = commands.add_parser(
        "summary",
        help="mean, std, median, min and max of finished runs over their seeds",
        description="Groups finished runs whose settings differ only in the seed and prints "
        "each group's test accuracy: mean ± sample std, 95% confidence interval of the mean "
        "(Student's t), median, min, max.",
    )
    summary.add_argument("runs", nargs="+", metavar="RUN_DIR")
    summary.add_argument("--json", action="store_true", help="one JSON record per group (every test and dev metric)")
    summary.add_argument("--markdown", action="store_true", help="a Markdown table (the layout of a sweep's sweep.md)")


def run(args) -> int:
    from npcomp.experiments.summary import format_markdown, format_table, read_runs, summarise

    records = summarise(read_runs(args.runs))
    if args.json:
        for record in records:
            print(json.dumps(record))
    elif args.markdown:
        print(format_markdown(records))
    else:
        print(format_table(records))
    return 0
