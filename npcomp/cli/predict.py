"""`npcomp predict`: labels (or relatedness) of the sentences on standard input
(``npcomp.runs.predict``)."""

from __future__ import annotations

import json

from npcomp.data.text import TREE_CHOICES

# the choices of --input (npcomp.data.text.text_trees.INPUT_CHOICES; the command
# line is read before the library loads)
INPUT_CHOICES = ("auto", "text", "tree")


def add_parser(commands) -> None:
    """The predict command's options."""
    predict = commands.add_parser(
        "predict",
        help="label sentences read from stdin (a sick run: score sentence pairs)",
        description="Reads one sentence per line on stdin: a PTB bracketed tree (labels "
        "optional) or plain text, tokenised as the SST is (n't, 's, -LRB-) and given the tree "
        "--tree chooses. Writes one JSON object per line: label, probabilities "
        "(cumulative_probabilities with the ordinal head), the tree with a predicted label at "
        "every node and tree_from, how it was made. For a sick run each line is 'sentence "
        "A<TAB>sentence B' and the output their predicted relatedness (1-5) and its "
        "distribution; for a sick-entailment run (or a file of labelled pairs) their "
        "predicted label, its class name (NEUTRAL, ENTAILMENT, CONTRADICTION) and the class "
        "probabilities. A line of standard input that cannot be read (a broken tree, a label "
        "outside the run's classes, a tree the model cannot compose) gets its own record, "
        '{"line": N, "error": ...}, and the others are labelled; the exit status is then '
        "2. --html FILE also draws the sentences' trees as one self-contained "
        "HTML page.",
    )
    predict.add_argument("--run", required=True, metavar="RUN_DIR")
    predict.add_argument(
        "--tree",
        choices=TREE_CHOICES,
        default=None,
        help="the tree of a plain sentence: parsed (spaCy's parse: the "
        "dependency tree for a dependency run, else binarised; the default "
        'with the parse extra, pip install "npcomp[parse]"; without it '
        "the default falls back to right, saying so), right, left or chain "
        "(sequence models: chain only). Given, a bracketed tree is "
        "re-bracketed or parsed too",
    )
    predict.add_argument(
        "--input",
        choices=INPUT_CHOICES,
        default="auto",
        help="what a line is: text (every line a sentence, even one that "
        "starts with '(', as '(Taymor) utilizes ...'), tree (every line a "
        "bracketed tree), auto (default: a line that starts with '(' is a "
        "tree where it is a complete one or opens as a labelled one, '(3 ', "
        "else text, with a warning naming it)",
    )
    predict.add_argument(
        "--html",
        default=None,
        metavar="FILE",
        help="also write the trees as an interactive HTML page (every "
        "node coloured by its predicted class, its probabilities on hover "
        "or click; one file, nothing fetched). An existing FILE is refused "
        "unless --overwrite. Not for sick runs (pairs)",
    )
    predict.add_argument("--overwrite", action="store_true", help="replace an existing --html FILE")
    predict.add_argument(
        "--file",
        default=None,
        metavar="FILE",
        help="a run trained on your files (--train): read the sentences (or "
        "pairs) of FILE, in one of their formats (docs/DATA.md; labels "
        "optional), instead of standard input",
    )
    predict.add_argument("--threads", type=int, default=None)
    predict.add_argument("--data-dir", default=None, help="sick runs: where SICK's parses of known sentences are read")


def run(args) -> int:
    from npcomp.runs import predict

    result = predict(
        args.run,
        tree=args.tree,
        input=args.input,
        html=args.html,
        overwrite=args.overwrite,
        file=args.file,
        data_dir=args.data_dir,
    )
    for record in result.records:
        print(json.dumps(record))
    refusal = result.refusal()
    if refusal is not None:
        raise refusal
    return 0
