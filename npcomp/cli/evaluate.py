"""`npcomp eval`: a trained run scored on a split, its per-sentence predictions
written into the run directory (``predictions.py``)."""
from __future__ import annotations

import json
import sys


def add_parser(commands) -> None:
    """The evaluate command's options."""
    evaluate = commands.add_parser(
        "eval", help="evaluate a trained run on a split",
        description="Scores the run's best-dev model (model.npz) on a split and prints the "
        "metrics as one JSON object. The split's per-sentence predictions (gold and predicted "
        "label, probability, height and span of every labelled node; for sick each pair's "
        "gold and predicted relatedness), which `npcomp plot` draws its figures from, are "
        "written into the run directory: RUN_DIR/predictions.jsonl for the test split, "
        "RUN_DIR/predictions-SPLIT.jsonl for another, replacing the run's previous file of "
        "that name (said on stderr).")
    evaluate.add_argument("--run", required=True, metavar="RUN_DIR")
    evaluate.add_argument("--split", default="test", choices=("train", "dev", "test"))
    evaluate.add_argument("--data-dir", default=None)
    evaluate.add_argument("--threads", type=int, default=None)
    evaluate.add_argument("--no-predictions", dest="predictions", action="store_false",
                          help="print the metrics only; write no predictions file")


def run(args) -> int:
    from ..predictions import predictions_name, write_predictions
    from ..tasks import load_task
    from ..trainer import check_splits, encode_split, evaluate, load_model
    model, params, config, vocab = load_model(args.run)
    task = load_task(config["task"], args.data_dir or config.get("data_dir"),
                     config["structure"], seed=config["seed"],
                     parses_dir=config.get("parses_dir"), splits=(args.split,))
    check_splits(task, model.cell)
    split = encode_split(task.splits[args.split], vocab)
    result = evaluate(model, params, split, config["eval_batch_size"])
    print(json.dumps({"run": str(args.run), "split": args.split, **result}))
    if args.predictions:
        from pathlib import Path
        replaced = (Path(args.run) / predictions_name(args.split)).exists()
        path = write_predictions(args.run, model, params, split, args.split,
                                 config["eval_batch_size"])
        print(f"npcomp eval: wrote {path} ({len(split)} {_units(config)}"
              f"{', replacing the previous one' if replaced else ''})", file=sys.stderr)
    return 0


def _units(config: dict) -> str:
    return "pairs" if config["task"] == "sick" else "sentences"
