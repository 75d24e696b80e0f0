"""`npcomp neighbours`: sentences ranked by relatedness to a query (Tai Table 4)."""

from __future__ import annotations

import json
from pathlib import Path

from npcomp.data.text import TREE_CHOICES


def add_parser(commands) -> None:
    """The neighbours command's options."""
    neighbours = commands.add_parser(
        "neighbours",
        help="rank sentences by relatedness to a query (sick runs; Tai Table 4)",
        description="Ranks candidate sentences by the relatedness a sick run predicts for "
        "each query, beside the ranking by cosine of mean word vectors. Candidates: a "
        "sample of SICK's distinct test sentences (Tai et al.: 1000), or --sentences FILE.",
    )
    neighbours.add_argument("queries", nargs="+", metavar="SENTENCE", help="whitespace-tokenised query sentence(s)")
    neighbours.add_argument("--run", required=True, metavar="RUN_DIR")
    neighbours.add_argument(
        "--sentences", metavar="FILE", default=None, help="candidates, one whitespace-tokenised sentence a line"
    )
    neighbours.add_argument(
        "--tree",
        choices=TREE_CHOICES,
        default=None,
        help="the tree of a sentence that is not SICK's: parsed (spaCy: "
        "the dependency tree for a dependency run, binarised for a "
        "constituency run; the default, falling back to right, saying so, "
        'without pip install "npcomp[parse]"), right, left or chain '
        "(sequence models: chain only)",
    )
    neighbours.add_argument(
        "--split",
        default="test",
        choices=("train", "dev", "test"),
        help="SICK split the candidates come from (default test)",
    )
    neighbours.add_argument(
        "--sample", type=int, default=1000, help="candidates drawn from the split (default 1000; 0: all)"
    )
    neighbours.add_argument("--seed", type=int, default=1, help="seed of the sample")
    neighbours.add_argument("--top", type=int, default=3, help="neighbours shown per ranking")
    neighbours.add_argument("--data-dir", default=None)
    neighbours.add_argument("--json", action="store_true", help="one JSON record per query")
    neighbours.add_argument("--threads", type=int, default=None)


def run(args) -> int:
    import numpy as np
    from npcomp.errors import ConfigError
    from npcomp.data.readers.formats import read_text_lines
    from npcomp.study.relatedness import neighbours, run_sentence_trees, sample_sentences
    from npcomp.data.datasets.tasks import load_task
    from npcomp.runfiles.model_files import load_model

    if args.top < 1:
        raise ConfigError("top", f"must be at least 1, not {args.top}")
    if args.sample < 0:
        raise ConfigError("sample", f"must be 0 (every sentence) or more, not {args.sample}")
    model, params, config, vocab = load_model(args.run)
    if config["task"] != "sick":
        raise ConfigError(
            "run",
            f"{args.run} is a {config['task']} run: neighbours ranks sentences by the relatedness a sick run predicts",
        )
    import sys

    to_tree = run_sentence_trees(
        config, args.data_dir, args.tree, warn=lambda message: print(f"npcomp neighbours: {message}", file=sys.stderr)
    )
    if args.sentences:
        path = Path(args.sentences)
        lines = read_text_lines(path)
        candidates = [to_tree(text, f"{path}:{number}") for number, text in enumerate(lines, start=1) if text.strip()]
    else:
        task = load_task("sick", args.data_dir or config.get("data_dir"), config["structure"])
        candidates = sample_sentences(task, args.split, args.sample or None, np.random.default_rng(args.seed))
    for number, text in enumerate(args.queries, start=1):
        query = to_tree(text, f"<query {number}>")
        ranked = neighbours(model, params, vocab, query, candidates, args.top)
        if args.json:
            print(json.dumps({"query": " ".join(query.tokens), **ranked}))
            continue
        print(f"query: {' '.join(query.tokens)}")
        for title, key in (
            ("by mean word vector cosine", "mean_vector_cosine"),
            (f"by {config['model']} relatedness (1-5)", "model"),
        ):
            print(f"  {title}:")
            for score, sentence in ranked[key]:
                print(f"    {score:5.2f}  {sentence}")
        print()
    return 0
