"""The examples each command's ``--help`` ends with: (command line, what it
does), the lines a user copies (tests/test_help.py parses every one with the
command line's own parser)."""

EXAMPLES = {
    "train": [
        ("npcomp train", "the N-ary Tree-LSTM on the synthetic treebank"),
        ("npcomp train --model treelstm-nary --task sst5 --data-dir data --seed 1", ""),
        ("npcomp train --model treelstm-nary --task sst5 --help-defaults", "the paper setting and its sources"),
        ("npcomp train --train reviews.tsv --classes negative,neutral,positive --tree right", "your own labelled file"),
        ("npcomp train --resume runs/treelstm-nary-sst5-s1 --epochs 20", "train a run longer"),
    ],
    "eval": [
        ("npcomp eval --run runs/treelstm-nary-sst5-s1 --split test", ""),
        ("npcomp eval --run runs/reviews --file reviews-test.tsv", "score a labelled file"),
        ("npcomp eval --run runs/treelstm-nary-sst5-s1 --trees parsed", "on its sentences' parses"),
    ],
    "predict": [
        ('echo "A gripping, funny film." | npcomp predict --run runs/treelstm-nary-sst5-s1', ""),
        ("npcomp predict --run runs/reviews --file reviews-test.tsv --html trees.html", "and draw the trees"),
    ],
    "neighbours": [
        ('npcomp neighbours --run runs/treelstm-childsum-sick-s1 "two men are playing guitar"', ""),
    ],
    "parse": [
        ("npcomp parse --data-dir data --out parses/sst", "needs npcomp[parse]"),
    ],
    "summary": [
        ("npcomp summary runs/treelstm-nary-sst5-s*", "mean ± std over the seeds"),
        ("npcomp summary --markdown sweeps/lr/runs/*", "one table row per setting"),
    ],
    "sweep": [
        ("npcomp sweep --model treelstm-nary --task sst5 --seeds 1-5 --grid lr=0.05,0.1 --out sweeps/lr", ""),
        ("npcomp sweep sweep.toml --out sweeps/vectors", "settings from a SPEC file"),
        ("npcomp sweep sweep.toml --scheduler tcp://HOST:8786 --out sweeps/vectors", "on a Dask cluster"),
    ],
    "reproduce": [
        ("npcomp reproduce --list", "the tables, their rows and the time a seed takes"),
        ("npcomp reproduce tai-sst --seeds 5 --out docs/results", ""),
        ("npcomp reproduce tai-sst --report-only --out docs/results", "the report from the committed runs"),
    ],
    "plot": [
        ("npcomp plot runs/treelstm-nary-sst5-s1 --out figures", ""),
        ("npcomp plot sweeps/lr --out figures/lr", "each setting over its seeds"),
    ],
    "explain": [
        ('npcomp explain --model slstm "(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))"', ""),
        ('npcomp explain --model slstm --check-states "(3 (2 not) (3 (3 very) (4 good)))"', "each node's error terms"),
        ('npcomp explain --run runs/treelstm-nary-sst5-s1 --html page.html "a very good film"', "as a page"),
    ],
}


def epilog(command: str) -> str | None:
    """The ``examples:`` block of ``command``'s help, None for a command
    without examples here."""
    if command not in EXAMPLES:
        return None
    lines = ["examples:"]
    for line, says in EXAMPLES[command]:
        lines.append(f"  {line}" + (f"\n      {says}" if says else ""))
    return "\n".join(lines)


EXAMPLES["gradcheck"] = [
    ("npcomp gradcheck", "every model, option and supervision mode"),
    ("npcomp gradcheck --model slstm", "one model's settings"),
]
