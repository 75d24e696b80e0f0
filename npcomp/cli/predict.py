"""`npcomp predict`: labels (or relatedness) of the sentences on standard input."""
from __future__ import annotations

import json
import sys

from npcomp.data.choices import TREE_CHOICES


def add_parser(commands) -> None:
    """The predict command's options."""
    predict = commands.add_parser(
        "predict", help="label sentences read from stdin (a sick run: score sentence pairs)",
        description="Reads one sentence per line on stdin: a PTB bracketed tree (labels "
        "optional) or plain text, tokenised as the SST is (n't, 's, -LRB-) and given the tree "
        "--tree chooses. Writes one JSON object per line: label, probabilities "
        "(cumulative_probabilities with the ordinal head), the tree with a predicted label at "
        "every node and tree_from, how it was made. For a sick run each line is 'sentence "
        "A<TAB>sentence B' and the output their predicted relatedness (1-5) and its "
        "distribution. --html FILE also draws the sentences' trees as one self-contained "
        "HTML page.")
    predict.add_argument("--run", required=True, metavar="RUN_DIR")
    predict.add_argument("--tree", choices=TREE_CHOICES, default=None,
                         help="the tree of a plain sentence: parsed (spaCy's parse: the "
                         "dependency tree for a dependency run, else binarised; the default "
                         "with the parse extra, pip install \"npcomp[parse]\"; without it "
                         "the default falls back to right, saying so), right, left or chain "
                         "(sequence models: chain only). Given, a bracketed tree is "
                         "re-bracketed or parsed too")
    predict.add_argument("--html", default=None, metavar="FILE",
                         help="also write the trees as an interactive HTML page (every "
                         "node coloured by its predicted class, its probabilities on hover "
                         "or click; one file, nothing fetched). An existing FILE is refused "
                         "unless --overwrite. Not for sick runs (pairs)")
    predict.add_argument("--overwrite", action="store_true",
                         help="replace an existing --html FILE")
    predict.add_argument("--threads", type=int, default=None)
    predict.add_argument("--data-dir", default=None,
                         help="sick runs: where SICK's parses of known sentences are read")


def run(args) -> int:
    import numpy as np
    from npcomp.data.text_trees import TextTrees
    from npcomp.training.encoding import encode
    from npcomp.training.evaluation import predict_split
    from npcomp.training.model_files import load_model
    _check_html_target(args)       # refused before a model is read
    model, params, config, vocab = load_model(args.run)
    if config["task"] == "sick":
        if args.html is not None:
            from npcomp.data.errors import ConfigError
            raise ConfigError("html", "a sick run scores sentence pairs; the page draws the "
                                      "trees of single sentences (runs on sst5, sst2, "
                                      "synthetic)")
        return _predict_pairs(args, model, params, config, vocab)
    structure = config["structure"]
    to_trees = TextTrees(structure, args.tree, warn=lambda message: print(
        f"npcomp predict: {message}", file=sys.stderr), n_classes=model.n_classes)
    trees = to_trees(_stdin_lines(), "<stdin>")
    _check_composable(trees, model.cell)
    sentences = []
    if not trees:
        return _write_html(args, config, model, sentences)
    # the softmax head's class probabilities, or the ordinal head's P(label > k)
    key = "probabilities" if model.head_name == "softmax" else "cumulative_probabilities"
    for tree, made, outputs in zip(trees, to_trees.made,
                                   predict_split(model, params, encode(trees, vocab))):
        labels = model.head.decode(outputs).astype(np.int32)
        if args.html is not None:
            sentences.append(_sentence_record(tree, made, outputs, labels, model))
        record = {"label": int(labels[tree.root]),
                  key: [round(float(p), 6) for p in outputs[tree.root]]}
        if structure == "chain":  # a sequence model labels prefixes, not phrases
            record["tokens"] = list(tree.tokens)
        else:
            record["tree"] = tree.to_ptb(labels)
            record["tree_from"] = made
        print(json.dumps(record))
    return _write_html(args, config, model, sentences)


def _check_html_target(args) -> None:
    """Refuse --overwrite without --html, and an --html FILE that exists
    (unless --overwrite) or has no directory, before any work is done."""
    if args.html is None:
        if args.overwrite:
            from npcomp.data.errors import ConfigError
            raise ConfigError("overwrite", "replaces an existing --html FILE; no --html given")
        return
    from npcomp.study.explain_page import check_target
    check_target(args.html, args.overwrite)


def _sentence_record(tree, made: str, outputs, labels, model) -> dict:
    """One sentence of the page's document (explain.py): tokens and node records."""
    from npcomp.study.explain import node_records
    return {"tokens": list(tree.tokens), "tree_from": made,
            "nodes": node_records(tree, outputs, labels,
                                  softmax=model.head_name == "softmax")}


def _write_html(args, config: dict, model, sentences: list) -> int:
    """The page of ``sentences`` to --html FILE, when asked for."""
    if args.html is None:
        return 0
    from npcomp.study.explain_page import render_page, write_page
    from npcomp.experiments.figures import class_names
    names = class_names(config["task"], model.n_classes)
    document = {"model": config["model"], "task": config["task"], "classes": names,
                "sentences": sentences}
    path = write_page(render_page(document), args.html, args.overwrite)
    print(f"npcomp predict: the trees of {len(sentences)} sentence(s) drawn in {path}",
          file=sys.stderr)
    return 0


def _check_composable(trees: list, cell) -> None:
    """DataError naming the line of a tree the model cannot compose (a chain
    for a binary-tree model)."""
    from npcomp.data.tasks import TaskData
    from npcomp.training.encoding import check_splits
    if trees:
        check_splits(TaskData("predict", 0, {"input": trees}), cell)


def _stdin_lines() -> list:
    """Standard input's lines, decoded as formats.decode_lines does files."""
    from npcomp.data.formats import decode_lines
    stream = getattr(sys.stdin, "buffer", None)
    data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    return decode_lines(data, "<stdin>")


def _predict_pairs(args, model, params, config, vocab) -> int:
    from npcomp.data.errors import DataError
    from npcomp.training.relatedness import run_sentence_trees, score_pairs
    to_tree = run_sentence_trees(config, args.data_dir, args.tree, warn=lambda message: print(
        f"npcomp predict: {message}", file=sys.stderr))
    left, right = [], []
    for number, line in enumerate(_stdin_lines(), start=1):
        fields = line.split("\t")
        if len(fields) != 2:
            raise DataError(f"{len(fields)} tab-separated field(s): expected two sentences, "
                            "'sentence A<TAB>sentence B'", "<stdin>", number)
        left.append(to_tree(fields[0], f"<stdin>:{number}"))
        right.append(to_tree(fields[1], f"<stdin>:{number}"))
    if not left:
        return 0
    scores, distributions = score_pairs(model, params, vocab, left, right)
    for a, b, score, distribution in zip(left, right, scores, distributions):
        print(json.dumps({"sentence_a": " ".join(a.tokens), "sentence_b": " ".join(b.tokens),
                          "relatedness": round(float(score), 6),
                          "probabilities": [round(float(p), 6) for p in distribution]}))
    return 0
