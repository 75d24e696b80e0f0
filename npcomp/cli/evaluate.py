"""`npcomp eval`: a trained run scored on a split."""
from __future__ import annotations

import json


def add_parser(commands) -> None:
    """The evaluate command's options."""
    evaluate = commands.add_parser("eval", help="evaluate a trained run on a split")
    evaluate.add_argument("--run", required=True, metavar="RUN_DIR")
    evaluate.add_argument("--split", default="test", choices=("train", "dev", "test"))
    evaluate.add_argument("--data-dir", default=None)
    evaluate.add_argument("--threads", type=int, default=None)


def run(args) -> int:
    from ..tasks import load_task
    from ..trainer import check_splits, encode_split, evaluate, load_model
    model, params, config, vocab = load_model(args.run)
    task = load_task(config["task"], args.data_dir or config.get("data_dir"),
                     config["structure"], seed=config["seed"],
                     parses_dir=config.get("parses_dir"), splits=(args.split,))
    check_splits(task, model.cell)
    result = evaluate(model, params, encode_split(task.splits[args.split], vocab),
                      config["eval_batch_size"])
    print(json.dumps({"run": str(args.run), "split": args.split, **result}))
    return 0
