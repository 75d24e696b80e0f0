"""``evaluate``: a trained run scored on a split (or a labelled file, or the
split on other trees), its per-sentence predictions written into the run
directory (``training/predictions.py``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EvaluationResult:
    """A run scored: ``metrics``, the record `npcomp eval` prints (the run,
    the split or file, its metrics); the predictions file written (None
    when not asked for), whether it replaced one, and the ``count`` of
    sentences (or pairs: ``units``) in it."""

    metrics: dict
    predictions: Path | None = None
    replaced: bool = False
    count: int = 0
    units: str = "sentences"


@dataclass(frozen=True)
class _Request:
    run: str
    split: str
    file: str | None
    trees: str | None
    parses_dir: str | None
    data_dir: str | None
    predictions: bool


def evaluate(
    run,
    *,
    split: str = "test",
    file=None,
    trees: str | None = None,
    parses_dir=None,
    data_dir=None,
    predictions: bool = True,
) -> EvaluationResult:
    """`npcomp eval --run RUN_DIR` from Python: the run's best-dev model
    scored on ``split`` (or the labelled ``file`` of a run trained on
    files; or the split on other ``trees``: gold, parsed, right, left), its
    predictions written into the run directory unless ``predictions`` is
    False."""
    return _evaluate(
        _Request(str(run) if isinstance(run, Path) else run, split, file, trees, parses_dir, data_dir, predictions)
    )


def _evaluate(args) -> EvaluationResult:
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
        task = load_task(
            config["task"],
            args.data_dir or config.get("data_dir"),
            config["structure"],
            seed=config["seed"],
            parses_dir=config.get("parses_dir"),
            splits=(args.split,),
        )
    check_splits(task, model.cell)
    split = encode_split(task.splits[args.split], vocab, task.score_scale, task.class_names)
    result = evaluate(model, params, split, config["eval_batch_size"], classes=_classes(config, model))
    record = {"run": str(args.run), "split": args.split, **result}
    return _with_predictions(args, record, model, params, config, split, args.split)


def _with_predictions(
    args,
    record: dict,
    model,
    params,
    config: dict,
    split,
    split_name: str,
    name: str | None = None,
    units: str | None = None,
) -> EvaluationResult:
    """The result of ``record``, with the split's predictions written into
    the run directory when asked for (``args.predictions``)."""
    if not args.predictions:
        return EvaluationResult(record)
    from npcomp.training.predictions import write_predictions
    from npcomp.runfiles.rundir import predictions_name

    replaced = (Path(args.run) / (name or predictions_name(split_name))).exists()
    path = write_predictions(
        args.run,
        model,
        params,
        split,
        split_name,
        config["eval_batch_size"],
        name=name,
        task=None if units else config["task"],
        classes=_classes(config, model),
    )
    return EvaluationResult(record, Path(path), replaced, len(split), units or _units(config))


def _files_task(args, config: dict):
    """The split of a run's own files (read again as it read them), which
    has no test split without a test file."""
    from npcomp.errors import ConfigError
    from npcomp.training.run_data import run_task

    if args.data_dir is not None:
        raise ConfigError(
            "data_dir",
            f"{args.run} was trained on your files, not a task's data directory: score another file with --file FILE",
        )
    task = run_task(dict(config), echo=_stderr)
    if args.split not in task.splits:
        raise ConfigError(
            "split",
            f"{args.run} was trained without a test file: it has no test split; score a labelled file with --file FILE",
        )
    return task


def _run_on_file(args, model, params, config: dict, vocab) -> EvaluationResult:
    """A labelled file scored by a run trained on files (``--file``)."""
    from npcomp.errors import ConfigError
    from npcomp.training.encoding import check_splits, encode_task
    from npcomp.training.evaluation import evaluate
    from npcomp.training.run_data import file_task_data, is_file_run, read_run_file

    if not is_file_run(config):
        raise ConfigError(
            "file",
            f"scores a file by a run trained on files (--train); a {config['task']} run reads its own splits (--split)",
        )
    for option in ("trees", "parses_dir", "data_dir"):
        if getattr(args, option) is not None:
            raise ConfigError(option, "does not go with --file (the file's trees are made as the run made its own)")
    items, _ = read_run_file(config, args.file, echo=_stderr)
    task = file_task_data(config, model.n_classes, items)
    check_splits(task, model.cell)
    split = encode_task(task, vocab)["file"]
    result = evaluate(model, params, split, config["eval_batch_size"], classes=_classes(config, model))
    record = {"run": str(args.run), "file": str(args.file), **result}
    return _with_predictions(
        args, record, model, params, config, split, "file", name=f"predictions-file-{Path(args.file).stem}.jsonl"
    )


def _classes(config: dict, model) -> list | None:
    """The names of the run's classes (``run_data.named_classes``), None for pairs."""
    from npcomp.data.datasets import PAIR_TASKS
    from npcomp.training.run_data import named_classes

    if config["task"] in PAIR_TASKS:
        return None
    return named_classes(config, model.n_classes)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _run_on_trees(args, model, params, config, vocab) -> EvaluationResult:
    """The split scored on the trees ``--trees`` names (``parsed_trees.trees_for_scoring``)."""
    from npcomp.errors import ConfigError
    from npcomp.data.text.parsed_trees import (
        COPULA_HEAD_OF_KIND,
        span_recall,
        trees_for_scoring,
    )
    from npcomp.data.datasets.tasks import PAIR_TASKS, TaskData, load_task
    from npcomp.data.text.text_trees import parsed_kind
    from npcomp.training.encoding import check_splits, encode_split
    from npcomp.training.evaluation import evaluate

    if config["task"] in PAIR_TASKS or config["task"] == "files":
        raise ConfigError(
            "trees",
            f"{config['task']} runs read their own data's trees; --trees applies to sst5, sst2 and synthetic runs",
        )
    kind = parsed_kind(config["structure"])
    if kind is None:
        raise ConfigError(
            "trees", "a sequence model reads every sentence as a chain, whatever its tree: --trees does not apply to it"
        )
    if args.parses_dir is not None and args.trees != "parsed":
        raise ConfigError("parses_dir", "goes with --trees parsed (the heads it reads)")
    data_dir = args.data_dir or config.get("data_dir")
    gold_task = load_task(config["task"], data_dir, "gold", seed=config["seed"], splits=(args.split,))
    gold = gold_task.splits[args.split]
    extra = {}
    if args.trees == "parsed":
        heads = _split_heads(args, config, data_dir, gold, kind)
        trees = trees_for_scoring(gold, "parsed", kind, heads)
        recall = span_recall(gold, trees)
        extra = {
            "span_recall": round(100.0 * recall["recall"], 2),
            "span_phrases": recall["phrases"],
            "span_reproduced": recall["reproduced"],
            "copula_head": COPULA_HEAD_OF_KIND[kind] if args.parses_dir is None else None,
        }
    else:
        trees = trees_for_scoring(gold, args.trees)
    task = TaskData(gold_task.name, gold_task.n_classes, {args.split: trees})
    check_splits(task, model.cell)
    split = encode_split(trees, vocab)
    result = evaluate(model, params, split, config["eval_batch_size"], classes=_classes(config, model))
    record = {"run": str(args.run), "split": args.split, "trees": args.trees, **result, **extra}
    return _with_predictions(
        args,
        record,
        model,
        params,
        config,
        split,
        args.split,
        name=f"predictions-{args.split}-{args.trees}.jsonl",
        units="sentences",
    )


def _split_heads(args, config, data_dir, gold, kind) -> list:
    """The heads of the split's sentences: from --parses-dir, else parsed
    once with spaCy and kept in RUN_DIR/parses/SPLIT-COPULA.parents."""
    from npcomp.errors import DataError
    from npcomp.data.text.parsed_trees import COPULA_HEAD_OF_KIND, TextParser, cached_heads

    sentences = [tree.tokens for tree in gold]
    if args.parses_dir is not None:
        return _read_split_heads(
            Path(args.parses_dir) / f"{args.split}.parents", sentences, config["task"], data_dir, args.split
        )
    path = Path(args.run) / "parses" / f"{args.split}-{COPULA_HEAD_OF_KIND[kind]}.parents"
    parser = TextParser(kind)
    heads, read = cached_heads(sentences, path, parser.heads)
    if read:
        print(f"npcomp eval: parses read from {path}", file=sys.stderr)
    else:
        print(
            f"npcomp eval: parsed {len(sentences)} sentences with spaCy ({parser.parser.model}); kept in {path}",
            file=sys.stderr,
        )
    if len(heads) != len(sentences):
        raise DataError(f"{len(heads)} parses for {len(sentences)} sentences", path)
    return heads


def _read_split_heads(path, sentences, task, data_dir, split) -> list:
    """Heads from a ``npcomp parse`` file, one line per sentence of the SST
    split's file (sst2 leaves some out: matched by their words)."""
    from npcomp.errors import DataError
    from npcomp.data.readers.parents import read_parents
    from npcomp.data.readers.ptb import read_ptb_file
    from npcomp.data.datasets.tasks import default_data_dir

    if not path.is_file():
        raise DataError(
            "no such file: make the parses with `npcomp parse --out DIR`, or "
            "leave --parses-dir out to parse the split here",
            path,
        )
    heads = read_parents(path)
    if len(heads) == len(sentences):
        return heads
    if not task.startswith("sst"):
        raise DataError(f"{len(heads)} line(s) of heads for {len(sentences)} sentence(s)", path)
    sst = Path(data_dir) if data_dir else default_data_dir()
    tokens = [tree.tokens for tree in read_ptb_file(sst / "sst" / f"{split}.txt")]
    if len(tokens) != len(heads):
        raise DataError(
            f"{len(heads)} line(s) of heads, but the SST's {split} split has {len(tokens)} sentence(s)", path
        )
    by_words = dict(zip(tokens, heads))
    return [by_words[sentence] for sentence in sentences]


def _units(config: dict) -> str:
    from npcomp.data.datasets import PAIR_TASKS

    return "pairs" if config["task"] in PAIR_TASKS else "sentences"
