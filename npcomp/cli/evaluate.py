"""`npcomp eval`: a trained run scored on a split, its per-sentence predictions
written into the run directory (``npcomp.runs.evaluate``)."""

from __future__ import annotations

import json
import sys

from npcomp.data.text import EVAL_TREES


def add_parser(commands) -> None:
    """The evaluate command's options."""
    evaluate = commands.add_parser(
        "eval",
        help="evaluate a trained run on a split",
        description="Scores the run's best-dev model (model.npz) on a split and prints the "
        "metrics as one JSON object: with sentences, `classes` names the classes in the order "
        "of root_confusion's rows and columns (no matrix past 50 classes). The split's "
        "per-sentence predictions (gold and predicted label and class name, probability, "
        "height and span of every labelled node, the sentence and the file and line it came "
        "from; for sick each pair's gold and predicted relatedness and its two sentences), "
        "which `npcomp plot` draws its figures from, are "
        "written into the run directory: RUN_DIR/predictions.jsonl for the test split, "
        "RUN_DIR/predictions-SPLIT.jsonl for another, replacing the run's previous file of "
        "that name (said on stderr).",
    )
    evaluate.add_argument("--run", required=True, metavar="RUN_DIR")
    evaluate.add_argument("--split", default="test", choices=("train", "dev", "test"))
    evaluate.add_argument(
        "--file",
        default=None,
        metavar="FILE",
        help="a run trained on your files (--train): score a labelled file "
        "in one of their formats (docs/DATA.md) instead of a split, its "
        "labels among the run's classes (its scores in the run's range); "
        "predictions go to RUN_DIR/predictions-file-NAME.jsonl",
    )
    evaluate.add_argument(
        "--trees",
        choices=EVAL_TREES,
        default=None,
        help="score the split on other trees than the run's own: gold (the "
        "treebank's), parsed (spaCy's parse of each sentence, binarised for "
        "a binary-tree run, the dependency tree for a dependency run, "
        "labelled where a node's words are a labelled SST phrase; also "
        'prints span_recall; needs pip install "npcomp[parse]" unless '
        "--parses-dir holds the parses), right or left (branching, labelled "
        "at root and leaves). Predictions go to "
        "RUN_DIR/predictions-SPLIT-TREES.jsonl",
    )
    evaluate.add_argument(
        "--parses-dir",
        default=None,
        metavar="DIR",
        help="--trees parsed: read the heads from DIR/SPLIT.parents (written "
        "by npcomp parse) instead of parsing; by default the split is "
        "parsed once and its heads kept in RUN_DIR/parses/",
    )
    evaluate.add_argument("--data-dir", default=None)
    evaluate.add_argument("--threads", type=int, default=None)
    evaluate.add_argument(
        "--no-predictions",
        dest="predictions",
        action="store_false",
        help="print the metrics only; write no predictions file",
    )


def run(args) -> int:
    from npcomp.runs import evaluate

    result = evaluate(
        args.run,
        split=args.split,
        file=args.file,
        trees=args.trees,
        parses_dir=args.parses_dir,
        data_dir=args.data_dir,
        predictions=args.predictions,
    )
    print(json.dumps(result.metrics))
    if result.predictions is not None:
        print(
            f"npcomp eval: wrote {result.predictions} ({result.count} {result.units}"
            f"{', replacing the previous one' if result.replaced else ''})",
            file=sys.stderr,
        )
    return 0
