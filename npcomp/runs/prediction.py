"""``predict``: the labels (or relatedness) a trained run gives sentences
(or sentence pairs): a line of text or a bracketed tree each, made into
trees as the run made its own; optionally their trees drawn as one HTML
page."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class PredictionResult:
    """The records `npcomp predict` prints, one per line read, in line
    order (a line refused: {"line": N, "error": ...}); the lines refused
    (line -> DataError) of the ``lines`` read; the HTML page written, if
    asked for."""

    records: list
    refused: dict = field(default_factory=dict)
    lines: int = 0
    html: Path | None = None

    def refusal(self):
        """None, or the DataError naming the first line refused and how
        many were (`npcomp predict` exits with status 2 on it)."""
        if not self.refused:
            return None
        from npcomp.errors import DataError

        first = min(self.refused)
        return DataError(
            f"{self.refused[first].reason} ({len(self.refused)} of {self.lines} "
            "line(s) refused, each in its own output record; the others "
            "labelled)",
            "<stdin>",
            first,
        )


@dataclass(frozen=True)
class _Request:
    run: str
    lines: list | None
    tree: str | None
    input: str
    html: str | None
    overwrite: bool
    file: str | None
    data_dir: str | None
    records: list = field(default_factory=list)


def predict(
    run,
    lines=None,
    *,
    tree: str | None = None,
    input: str = "auto",
    html=None,
    overwrite: bool = False,
    file=None,
    data_dir=None,
) -> PredictionResult:
    """`npcomp predict --run RUN_DIR` from Python: each of ``lines`` (text
    or bracketed trees; None: standard input's; for a sick run, 'sentence
    A<TAB>sentence B'), or the sentences of a file run's ``file``, labelled
    by the run's best model.  ``tree``: the tree of a plain sentence
    (parsed, right, left, chain); ``input``: what a line is (auto, text,
    tree); ``html``: a page drawing the trees (an existing file refused
    unless ``overwrite``).  A line that cannot be read gets its own record;
    ``refusal()`` names them."""
    return _predict(
        _Request(str(run), None if lines is None else list(lines), tree, input, html, overwrite, file, data_dir)
    )


def _predict(args) -> PredictionResult:
    import numpy as np

    from npcomp.data.datasets import PAIR_TASKS
    from npcomp.training.encoding import encode
    from npcomp.training.evaluation import predict_split
    from npcomp.runfiles.model_files import load_model
    from npcomp.training.run_data import is_file_run
    from npcomp.training.run_data import own_class_names as class_names

    _check_html_target(args)  # refused before a model is read
    model, params, config, vocab = load_model(args.run)
    if args.file is not None and not is_file_run(config):
        from npcomp.errors import ConfigError

        raise ConfigError(
            "file", f"reads a file of a run trained on files (--train); a {config['task']} run reads standard input"
        )
    if config["task"] in PAIR_TASKS:
        if args.html is not None:
            from npcomp.errors import ConfigError

            raise ConfigError(
                "html", f"a {config['task']} run scores sentence pairs; the page draws the trees of single sentences"
            )
        return _predict_pairs(args, model, params, config, vocab)
    names = class_names(config, model.n_classes)
    trees, made, lines, failed = _sentence_trees(args, config, model, names)
    sentences = []
    if not trees:
        _write_errors(args, failed)
        html = _write_html(args, config, model, sentences)
        return PredictionResult(args.records, failed, len(failed), html)
    # the softmax head's class probabilities, or the ordinal head's P(label > k)
    key = "probabilities" if model.head_name == "softmax" else "cumulative_probabilities"
    for tree, how, number, outputs in zip(trees, made, lines, predict_split(model, params, encode(trees, vocab))):
        _write_errors(args, failed, before=number)
        labels = model.head.decode(outputs).astype(np.int32)
        if args.html is not None:
            sentences.append(_sentence_record(tree, how, outputs, labels, model))
        record = {"label": int(labels[tree.root])}
        if names is not None:
            record["class"] = names[labels[tree.root]]
        record[key] = [round(float(p), 6) for p in outputs[tree.root]]
        if config["structure"] == "chain":  # a sequence model labels prefixes, not phrases
            record["tokens"] = list(tree.tokens)
        else:
            record["tree"] = tree.to_ptb(labels)
            record["tree_from"] = how
        if args.file is not None:
            record["source"] = tree.source
        else:
            record["line"] = number
        args.records.append(record)
    _write_errors(args, failed)
    html = _write_html(args, config, model, sentences)
    return PredictionResult(args.records, failed, len(failed) + len(trees), html)


def _sentence_trees(args, config: dict, model, names: list | None) -> tuple:
    """(trees, how each was made, their lines, {line: DataError} of the lines
    refused) of the sentences to label: a file run's --file (every line
    read, or the file refused), or standard input's lines, each read on its
    own, made as the run made its own (``names``: the run's class names)."""
    from npcomp.errors import DataError
    from npcomp.data.text.text_trees import TextTrees, read_as_text
    from npcomp.training.run_data import is_file_run, read_run_file, text_trees_of

    if args.file is not None:
        trees, made = read_run_file(config, args.file, labelled=False, echo=_stderr, tree=args.tree)
        _check_composable(trees, model.cell)
        return trees, made, [None] * len(trees), {}
    if is_file_run(config):
        to_trees = text_trees_of(config, _stderr, args.tree, model.n_classes, args.input, names)
    else:
        to_trees = TextTrees(
            config["structure"],
            args.tree,
            warn=lambda message: _stderr(f"npcomp predict: {message}"),
            n_classes=model.n_classes,
            input=args.input,
        )
    plans, failed = {}, {}
    for number, line in enumerate(_input_lines(args), start=1):
        try:
            plans[number] = to_trees.plan(line, "<stdin>", number)
        except DataError as error:
            failed[number] = error
    warning = read_as_text(list(plans.values()), [f"<stdin>:{number}" for number in plans], "--input text")
    if warning is not None:
        _stderr(f"npcomp predict: {warning}")
    built = {number: (tree, how) for number, tree, how in _each_built(to_trees, plans, failed)}
    try:
        _check_composable([tree for tree, _ in built.values()], model.cell)
    except DataError:  # which lines: one at a time
        for number, (tree, _) in list(built.items()):
            try:
                _check_composable([tree], model.cell)
            except DataError as error:
                failed[number] = error
                del built[number]
    return ([tree for tree, _ in built.values()], [how for _, how in built.values()], list(built), failed)


def _each_built(to_trees, plans: dict, failed: dict):
    """(line, tree, how it was made) of each plan: built together (the
    sentences to parse parsed in one batch), or one by one where one of
    them fails, that line's error put in ``failed``."""
    from npcomp.errors import DataError

    try:
        trees = to_trees.build(list(plans.values()))
        yield from zip(plans, trees, list(to_trees.made))
        return
    except DataError:
        pass
    for number, plan in plans.items():
        try:
            tree = to_trees.build([plan])[0]
        except DataError as error:
            failed[number] = error
            continue
        yield number, tree, to_trees.made[0]


def _write_errors(args, failed: dict, before: int | None = None) -> None:
    """The records of the refused lines not written yet (those before line
    ``before``, else all), in line order: {"line": N, "error": the message}."""
    for number in sorted(failed):
        if before is not None and number > before:
            return
        error = failed[number]
        if not getattr(error, "written", False):
            args.records.append({"line": number, "error": error.reason})
            error.written = True


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _check_html_target(args) -> None:
    """Refuse --overwrite without --html, and an --html FILE that exists
    (unless --overwrite) or has no directory, before any work is done."""
    if args.html is None:
        if args.overwrite:
            from npcomp.errors import ConfigError

            raise ConfigError("overwrite", "replaces an existing --html FILE; no --html given")
        return
    from npcomp.study.explain_page import check_target

    check_target(args.html, args.overwrite)


def _sentence_record(tree, made: str, outputs, labels, model) -> dict:
    """One sentence of the page's document (explain.py): tokens and node records."""
    from npcomp.study.explain import node_records

    return {
        "tokens": list(tree.tokens),
        "tree_from": made,
        "nodes": node_records(tree, outputs, labels, softmax=model.head_name == "softmax"),
    }


def _write_html(args, config: dict, model, sentences: list):
    """The page of ``sentences`` to --html FILE, when asked for: its path."""
    if args.html is None:
        return None
    from npcomp.data.datasets.class_list import class_names
    from npcomp.study.explain_page import render_page, write_page

    names = class_names(config["task"], model.n_classes, given=config.get("classes"))
    document = {"model": config["model"], "task": config["task"], "classes": names, "sentences": sentences}
    path = write_page(render_page(document), args.html, args.overwrite)
    print(f"npcomp predict: the trees of {len(sentences)} sentence(s) drawn in {path}", file=sys.stderr)
    return path


def _check_composable(trees: list, cell) -> None:
    """DataError naming the line of a tree the model cannot compose (a chain
    for a binary-tree model)."""
    from npcomp.data.datasets.tasks import TaskData
    from npcomp.training.encoding import check_splits

    if trees:
        check_splits(TaskData("predict", 0, {"input": trees}), cell)


def _input_lines(args) -> list:
    """The lines given, or standard input's, decoded as formats.decode_lines
    does files."""
    if args.lines is not None:
        return [line.rstrip("\n") for line in args.lines]
    from npcomp.data.readers.formats import decode_lines

    stream = getattr(sys.stdin, "buffer", None)
    data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    return decode_lines(data, "<stdin>")


def _predict_pairs(args, model, params, config, vocab) -> PredictionResult:
    """Each pair's relatedness (on a file run's own score scale) and the
    distribution over the similarity head's ratings; or its class (number
    and name) and the class probabilities, for a run of classified pairs."""
    from npcomp.data.datasets.score_scale import from_ratings
    from npcomp.study.relatedness import score_pairs
    from npcomp.training.run_data import is_file_run, score_scale_of
    from npcomp.training.run_data import own_class_names as class_names

    left, right = _pair_trees(args, config)
    if not left:
        return PredictionResult(args.records)
    if is_file_run(config):
        _check_composable(left + right, model.cell)
    scores, distributions = score_pairs(model, params, vocab, left, right)
    scale = score_scale_of(config, model.n_classes)
    if scale is not None:
        scores = from_ratings(scores, *scale)
    names = class_names(config, model.n_classes)
    for a, b, score, distribution in zip(left, right, scores, distributions):
        record = {"sentence_a": " ".join(a.tokens), "sentence_b": " ".join(b.tokens)}
        if model.head.classifies:  # a class, by its name where the run has names
            record["label"] = int(score)
            if names is not None:
                record["class"] = names[int(score)]
        else:
            record["relatedness"] = round(float(score), 6)
        record["probabilities"] = [round(float(p), 6) for p in distribution]
        if args.file is not None:
            record["source"] = a.source
        args.records.append(record)
    return PredictionResult(args.records, lines=len(left))


def _pair_trees(args, config: dict) -> tuple:
    """(left trees, right trees) of the pairs to score: a file run's --file,
    or standard input's lines 'sentence A<TAB>sentence B', made into trees
    as the run made its own (a file run: tokenised as the SST is; sick:
    SICK's parses of its own sentences, text split at spaces)."""
    from npcomp.errors import DataError
    from npcomp.study.relatedness import run_sentence_trees
    from npcomp.training.run_data import is_file_run, read_run_file, text_trees_of

    if args.file is not None:
        pairs, _ = read_run_file(config, args.file, labelled=False, echo=_stderr, tree=args.tree)
        return [pair.tree_a for pair in pairs], [pair.tree_b for pair in pairs]
    lines = []
    for number, line in enumerate(_input_lines(args), start=1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(
                f"{len(fields)} tab-separated field(s): expected two sentences, 'sentence A<TAB>sentence B'",
                "<stdin>",
                number,
            )
        lines.append((number, fields))
    if is_file_run(config):
        to_trees = text_trees_of(config, _stderr, args.tree)
        trees = to_trees.build([to_trees.plan(text, "<stdin>", number) for number, fields in lines for text in fields])
        return trees[0::2], trees[1::2]
    to_tree = run_sentence_trees(
        config, args.data_dir, args.tree, warn=lambda message: print(f"npcomp predict: {message}", file=sys.stderr)
    )
    return (
        [to_tree(fields[0], f"<stdin>:{number}") for number, fields in lines],
        [to_tree(fields[1], f"<stdin>:{number}") for number, fields in lines],
    )
