"""`npcomp predict`: labels (or relatedness) of the sentences on standard input."""
from __future__ import annotations

import json
import sys


def add_parser(commands) -> None:
    """The predict command's options."""
    predict = commands.add_parser(
        "predict", help="label sentences read from stdin (a sick run: score sentence pairs)",
        description="Reads one sentence per line on stdin: a PTB bracketed tree (labels "
        "optional) or plain whitespace-tokenised text (given a right-branching binary tree; "
        "a dependency run parses it with spaCy). Writes one JSON object per line: label, "
        "probabilities (cumulative_probabilities with the ordinal head), and the tree with a "
        "predicted label at every node. For a sick run each line is 'sentence A<TAB>sentence "
        "B' and the output their predicted relatedness (1-5) and its distribution.")
    predict.add_argument("--run", required=True, metavar="RUN_DIR")
    predict.add_argument("--threads", type=int, default=None)
    predict.add_argument("--data-dir", default=None,
                         help="sick runs: where SICK's parses of known sentences are read")


def run(args) -> int:
    import numpy as np
    from ..text_trees import trees_from_lines
    from ..trainer import encode, load_model, predict_split
    model, params, config, vocab = load_model(args.run)
    if config["task"] == "sick":
        return _predict_pairs(args, model, params, config, vocab)
    structure = config["structure"]
    parser = None
    if structure == "dependency":  # parsed as the training sentences were (spaCy)
        from ..relatedness import SentenceTrees
        parser = SentenceTrees("dependency")
    trees = trees_from_lines(_stdin_lines(), structure, "<stdin>", parser)
    if not trees:
        return 0
    # the softmax head's class probabilities, or the ordinal head's P(label > k)
    key = "probabilities" if model.head_name == "softmax" else "cumulative_probabilities"
    for tree, outputs in zip(trees, predict_split(model, params, encode(trees, vocab))):
        labels = model.head.decode(outputs).astype(np.int32)
        record = {"label": int(labels[tree.root]),
                  key: [round(float(p), 6) for p in outputs[tree.root]]}
        if structure == "chain":  # a sequence model labels prefixes, not phrases
            record["tokens"] = list(tree.tokens)
        else:
            record["tree"] = tree.to_ptb(labels)
        print(json.dumps(record))
    return 0


def _stdin_lines() -> list:
    """Standard input's lines, decoded as formats.decode_lines does files."""
    from ..formats import decode_lines
    stream = getattr(sys.stdin, "buffer", None)
    data = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    return decode_lines(data, "<stdin>")


def _predict_pairs(args, model, params, config, vocab) -> int:
    from ..formats import DataError
    from ..relatedness import run_sentence_trees, score_pairs
    to_tree = run_sentence_trees(config, args.data_dir)
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
