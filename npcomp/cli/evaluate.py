"""`npcomp eval`: a trained run scored on a split, its per-sentence predictions
written into the run directory (``predictions.py``)."""
from __future__ import annotations

import json
import sys

from npcomp.data.text import EVAL_TREES


def add_parser(commands) -> None:
    """The evaluate command's options."""
    evaluate = commands.add_parser(
        "eval", help="evaluate a trained run on a split",
        description="Scores the run's best-dev model (model.npz) on a split and prints the "
        "metrics as one JSON object: with sentences, `classes` names the classes in the order "
        "of root_confusion's rows and columns (no matrix past 50 classes). The split's "
        "per-sentence predictions (gold and predicted label and class name, probability, "
        "height and span of every labelled node, the sentence and the file and line it came "
        "from; for sick each pair's gold and predicted relatedness and its two sentences), "
        "which `npcomp plot` draws its figures from, are "
        "written into the run directory: RUN_DIR/predictions.jsonl for the test split, "
        "RUN_DIR/predictions-SPLIT.jsonl for another, replacing the run's previous file of "
        "that name (said on stderr).")
    evaluate.add_argument("--run", required=True, metavar="RUN_DIR")
    evaluate.add_argument("--split", default="test", choices=("train", "dev", "test"))
    evaluate.add_argument("--file", default=None, metavar="FILE",
                          help="a run trained on your files (--train): score a labelled file "
                          "in one of their formats (docs/DATA.md) instead of a split, its "
                          "labels among the run's classes (its scores in the run's range); "
                          "predictions go to RUN_DIR/predictions-file-NAME.jsonl")
    evaluate.add_argument("--trees", choices=EVAL_TREES, default=None,
                          help="score the split on other trees than the run's own: gold (the "
                          "treebank's), parsed (spaCy's parse of each sentence, binarised for "
                          "a binary-tree run, the dependency tree for a dependency run, "
                          "labelled where a node's words are a labelled SST phrase; also "
                          "prints span_recall; needs pip install \"npcomp[parse]\" unless "
                          "--parses-dir holds the parses), right or left (branching, labelled "
                          "at root and leaves). Predictions go to "
                          "RUN_DIR/predictions-SPLIT-TREES.jsonl")
    evaluate.add_argument("--parses-dir", default=None, metavar="DIR",
                          help="--trees parsed: read the heads from DIR/SPLIT.parents (written "
                          "by npcomp parse) instead of parsing; by default the split is "
                          "parsed once and its heads kept in RUN_DIR/parses/")
    evaluate.add_argument("--data-dir", default=None)
    evaluate.add_argument("--threads", type=int, default=None)
    evaluate.add_argument("--no-predictions", dest="predictions", action="store_false",
                          help="print the metrics only; write no predictions file")


def run(args) -> int:
    from npcomp.data.datasets.tasks import load_task
    from npcomp.training.encoding import check_splits, encode_split
    from npcomp.training.evaluation import evaluate
    from npcomp.runfiles.model_files import load_model
    from npcomp.training.run_data import is_file_run
    model, params, config, vocab = load_model(args.run)
    if args.file is not None:
        return _run_on_file(args, model, params, config, vocab)
    if args.trees is not None:
        return _run_on_trees(args, model, params, config, vocab)
    if args.parses_dir is not None:
        from npcomp.errors import ConfigError
        raise ConfigError("parses_dir", "goes with --trees parsed (the heads it reads)")
    if is_file_run(config):
        task = _files_task(args, config)
    else:
        task = load_task(config["task"], args.data_dir or config.get("data_dir"),
                         config["structure"], seed=config["seed"],
                         parses_dir=config.get("parses_dir"), splits=(args.split,))
    check_splits(task, model.cell)
    split = encode_split(task.splits[args.split], vocab, task.score_scale, task.class_names)
    result = evaluate(model, params, split, config["eval_batch_size"],
                      classes=_classes(config, model))
    print(json.dumps({"run": str(args.run), "split": args.split, **result}))
    if args.predictions:
        _write(args, model, params, config, split, args.split)
    return 0


def _write(args, model, params, config: dict, split, split_name: str,
           name: str | None = None) -> None:
    """The split's predictions into the run directory, said on stderr."""
    from pathlib import Path

    from npcomp.training.predictions import write_predictions
    from npcomp.runfiles.rundir import predictions_name
    replaced = (Path(args.run) / (name or predictions_name(split_name))).exists()
    path = write_predictions(args.run, model, params, split, split_name,
                             config["eval_batch_size"], name=name, task=config["task"],
                             classes=_classes(config, model))
    print(f"npcomp eval: wrote {path} ({len(split)} {_units(config)}"
          f"{', replacing the previous one' if replaced else ''})", file=sys.stderr)


def _files_task(args, config: dict):
    """The split of a run's own files (read again as it read them), which
    has no test split without a test file."""
    from npcomp.errors import ConfigError
    from npcomp.training.run_data import run_task
    if args.data_dir is not None:
        raise ConfigError("data_dir", f"{args.run} was trained on your files, not a task's "
                                      "data directory: score another file with --file FILE")
    task = run_task(dict(config), echo=_stderr)
    if args.split not in task.splits:
        raise ConfigError("split", f"{args.run} was trained without a test file: it has no "
                                   "test split; score a labelled file with --file FILE")
    return task


def _run_on_file(args, model, params, config: dict, vocab) -> int:
    """A labelled file scored by a run trained on files (``--file``)."""
    from pathlib import Path

    from npcomp.errors import ConfigError
    from npcomp.training.encoding import check_splits, encode_task
    from npcomp.training.evaluation import evaluate
    from npcomp.training.run_data import file_task_data, is_file_run, read_run_file
    if not is_file_run(config):
        raise ConfigError("file", f"scores a file by a run trained on files (--train); a "
                                  f"{config['task']} run reads its own splits (--split)")
    for option in ("trees", "parses_dir", "data_dir"):
        if getattr(args, option) is not None:
            raise ConfigError(option, "does not go with --file (the file's trees are made as "
                                      "the run made its own)")
    items, _ = read_run_file(config, args.file, echo=_stderr)
    task = file_task_data(config, model.n_classes, items)
    check_splits(task, model.cell)
    split = encode_task(task, vocab)["file"]
    result = evaluate(model, params, split, config["eval_batch_size"],
                      classes=_classes(config, model))
    print(json.dumps({"run": str(args.run), "file": str(args.file), **result}))
    if args.predictions:
        _write(args, model, params, config, split, "file",
               name=f"predictions-file-{Path(args.file).stem}.jsonl")
    return 0


def _classes(config: dict, model) -> list | None:
    """The names of the run's classes (``run_data.named_classes``), None for pairs."""
    from npcomp.data.datasets import PAIR_TASKS
    from npcomp.training.run_data import named_classes
    if config["task"] in PAIR_TASKS:
        return None
    return named_classes(config, model.n_classes)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _run_on_trees(args, model, params, config, vocab) -> int:
    """The split scored on the trees ``--trees`` names (``parsed_trees.trees_for_scoring``)."""
    from pathlib import Path

    from npcomp.errors import ConfigError
    from npcomp.data.text.parsed_trees import COPULA_HEAD_OF_KIND, span_recall, trees_for_scoring
    from npcomp.training.predictions import write_predictions
    from npcomp.data.datasets.tasks import PAIR_TASKS, TaskData, load_task
    from npcomp.data.text.text_trees import parsed_kind
    from npcomp.training.encoding import check_splits, encode_split
    from npcomp.training.evaluation import evaluate
    if config["task"] in PAIR_TASKS or config["task"] == "files":
        raise ConfigError("trees", f"{config['task']} runs read their own data's trees; "
                                   "--trees applies to sst5, sst2 and synthetic runs")
    kind = parsed_kind(config["structure"])
    if kind is None:
        raise ConfigError("trees", "a sequence model reads every sentence as a chain, "
                                   "whatever its tree: --trees does not apply to it")
    if args.parses_dir is not None and args.trees != "parsed":
        raise ConfigError("parses_dir", "goes with --trees parsed (the heads it reads)")
    data_dir = args.data_dir or config.get("data_dir")
    gold_task = load_task(config["task"], data_dir, "gold", seed=config["seed"],
                          splits=(args.split,))
    gold = gold_task.splits[args.split]
    extra = {}
    if args.trees == "parsed":
        heads = _split_heads(args, config, data_dir, gold, kind)
        trees = trees_for_scoring(gold, "parsed", kind, heads)
        recall = span_recall(gold, trees)
        extra = {"span_recall": round(100.0 * recall["recall"], 2),
                 "span_phrases": recall["phrases"], "span_reproduced": recall["reproduced"],
                 "copula_head": COPULA_HEAD_OF_KIND[kind] if args.parses_dir is None else None}
    else:
        trees = trees_for_scoring(gold, args.trees)
    task = TaskData(gold_task.name, gold_task.n_classes, {args.split: trees})
    check_splits(task, model.cell)
    split = encode_split(trees, vocab)
    result = evaluate(model, params, split, config["eval_batch_size"],
                      classes=_classes(config, model))
    print(json.dumps({"run": str(args.run), "split": args.split, "trees": args.trees,
                      **result, **extra}))
    if args.predictions:
        name = f"predictions-{args.split}-{args.trees}.jsonl"
        replaced = (Path(args.run) / name).exists()
        path = write_predictions(args.run, model, params, split, args.split,
                                 config["eval_batch_size"], name=name,
                                 classes=_classes(config, model))
        print(f"npcomp eval: wrote {path} ({len(split)} sentences"
              f"{', replacing the previous one' if replaced else ''})", file=sys.stderr)
    return 0


def _split_heads(args, config, data_dir, gold, kind) -> list:
    """The heads of the split's sentences: from --parses-dir, else parsed
    once with spaCy and kept in RUN_DIR/parses/SPLIT-COPULA.parents."""
    from pathlib import Path

    from npcomp.errors import DataError
    from npcomp.data.text.parsed_trees import COPULA_HEAD_OF_KIND, TextParser, cached_heads
    sentences = [tree.tokens for tree in gold]
    if args.parses_dir is not None:
        return _read_split_heads(Path(args.parses_dir) / f"{args.split}.parents", sentences,
                                 config["task"], data_dir, args.split)
    path = Path(args.run) / "parses" / f"{args.split}-{COPULA_HEAD_OF_KIND[kind]}.parents"
    parser = TextParser(kind)
    heads, read = cached_heads(sentences, path, parser.heads)
    if read:
        print(f"npcomp eval: parses read from {path}", file=sys.stderr)
    else:
        print(f"npcomp eval: parsed {len(sentences)} sentences with spaCy "
              f"({parser.parser.model}); kept in {path}", file=sys.stderr)
    if len(heads) != len(sentences):
        raise DataError(f"{len(heads)} parses for {len(sentences)} sentences", path)
    return heads


def _read_split_heads(path, sentences, task, data_dir, split) -> list:
    """Heads from a ``npcomp parse`` file, one line per sentence of the SST
    split's file (sst2 leaves some out: matched by their words)."""
    from pathlib import Path

    from npcomp.data.readers.ptb import read_ptb_file
    from npcomp.errors import DataError
    from npcomp.data.readers.parents import read_parents
    from npcomp.data.datasets.tasks import default_data_dir
    if not path.is_file():
        raise DataError("no such file: make the parses with `npcomp parse --out DIR`, or "
                        "leave --parses-dir out to parse the split here", path)
    heads = read_parents(path)
    if len(heads) == len(sentences):
        return heads
    if not task.startswith("sst"):
        raise DataError(f"{len(heads)} line(s) of heads for {len(sentences)} sentence(s)", path)
    sst = Path(data_dir) if data_dir else default_data_dir()
    tokens = [tree.tokens for tree in read_ptb_file(sst / "sst" / f"{split}.txt")]
    if len(tokens) != len(heads):
        raise DataError(f"{len(heads)} line(s) of heads, but the SST's {split} split has "
                        f"{len(tokens)} sentence(s)", path)
    by_words = dict(zip(tokens, heads))
    return [by_words[sentence] for sentence in sentences]


def _units(config: dict) -> str:
    from npcomp.data.datasets import PAIR_TASKS
    return "pairs" if config["task"] in PAIR_TASKS else "sentences"
