"""`npcomp plot`: the papers' figures from a run's (or a sweep's) files."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
Draws the papers' figures from the files of a run directory or a sweep
directory, nothing retrained. Each figure is written into --out as NAME.png,
NAME.svg and NAME.json (the numbers drawn).

From a run directory (its predictions.jsonl, written when training ends and
again by `npcomp eval --run RUN_DIR`, or the test-counts.json kept beside it,
and its metrics.json):
  length_accuracy         root accuracy against sentence length, windows of
                          +-2 words, the last one open (Tai et al. 2015, Fig. 3)
  length_pearson          sick: Pearson's r against the pairs' mean sentence
                          length, the same windows (Tai Fig. 4)
  phrase_length_accuracy  node accuracy by the words under the node, the last
                          bucket 30+ (Zhu et al. 2015, Fig. 4)
  height_accuracy         node accuracy by node height, the last bucket 20+
                          (Zhu Fig. 4)
  root_confusion          the roots' confusion matrix (Nayebi & Blundell, Fig. 2)
  learning_curves         training loss, training and dev metrics per epoch
                          and against training time

From a sweep directory (SWEEP_DIR/runs/*, grouped by setting as `npcomp
summary` groups runs):
  seeds_SPLIT_METRIC      box plots of each setting's test and dev metrics
                          over its seeds (Le & Zuidema 2015, Figs. 6-7), each
                          task on axes of its own, at most 8 settings an axes
  length_accuracy, ...    the per-length figures, one line per setting, each
                          point the mean over its seeds (at most 8 an axes)
  root_confusion_SETTING  each setting's root confusion matrix, its seeds'
                          test sentences together (Nayebi & Blundell Fig. 2)

Needs matplotlib (the plot extra: pip install "npcomp[plot]").
"""


def add_parser(commands) -> None:
    """The plot command's options."""
    plot = commands.add_parser(
        "plot",
        help="draw the papers' figures (PNG and SVG) from a run or sweep directory",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=DESCRIPTION,
    )
    plot.add_argument(
        "directory",
        metavar="RUN_DIR|SWEEP_DIR",
        help="a run directory (holds metrics.json) or a sweep directory (holds runs/)",
    )
    plot.add_argument("--out", required=True, metavar="DIR", help="where the figures are written (made if missing)")
    plot.add_argument(
        "--split",
        default="test",
        choices=("test", "dev", "train"),
        help="a run's predictions to draw: test (predictions.jsonl, the "
        "default) or another split's (predictions-SPLIT.jsonl, from `npcomp "
        "eval --split SPLIT`)",
    )
    plot.add_argument(
        "--overwrite", action="store_true", help="replace figure files already in --out (refused otherwise)"
    )


def run(args) -> int:
    from npcomp.runs import plot

    result = plot(args.directory, out=args.out, split=args.split, overwrite=args.overwrite)
    print(
        f"npcomp plot: {len(result.figures)} figures ({len(result.files)} files) in "
        f"{result.out}: " + ", ".join(result.figures)
    )
    return 0
