"""`npcomp explain`: one forward and backward pass of a cell on a tree you
write, every quantity under its paper's symbol, checked by finite differences."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..cells import registry
from npcomp.data.text import TREE_CHOICES

# the classification tasks a fresh model can be built for, and their classes
TASK_CLASSES = {"sst5": 5, "sst2": 2, "synthetic": 5}
# every entry of every parameter is checked up to this many entries in all
ALL_ENTRIES_UP_TO = 20_000
SAMPLED_ENTRIES = 20


def add_parser(commands) -> None:
    """The explain command's options."""
    explain = commands.add_parser(
        "explain", help="show every forward quantity and backward error term of a cell on a tree",
        description="One forward and backward pass in float64, dropout off, on TREE: a PTB "
        "bracketed tree (labels optional), a plain sentence (given the tree --tree chooses, as "
        "npcomp predict does), or a file of them, one per line. Printed node by node in the "
        "order the equations run: the forward children first, every quantity under its "
        "paper's symbol and equation number; the backward parents first, every error term "
        "with the equation it reverses and the erratum (docs/EQUATIONS.md) where the code "
        "reads or departs from the printed equation; each node's loss; then, per named "
        "parameter, its gradient's norm and the relative error of central differences "
        "against it. A tree without labels is labelled at its root with the model's own "
        "prediction. Norms and the leading values by default; --node K prints node K's full "
        "vectors, --parts its eps_h and eps_c as the sums of their parts, --check-states "
        "every node's error terms against finite differences in its states, --check-local "
        "each node's backward on its own (the first failure names the culprit), --json "
        "everything. A warning names what the tree leaves unused (a parameter whose gradient "
        "is exactly 0, a part of a term that nothing reads).")
    explain.add_argument("tree", metavar="TREE",
                         help="a bracketed tree, a plain sentence, or a file of them")
    source = explain.add_argument_group("the model (one of)")
    source.add_argument("--model", choices=sorted(registry.MODELS), default=None,
                        help="a freshly initialised model of this kind (with --dim, --seed)")
    source.add_argument("--run", metavar="RUN_DIR", default=None,
                        help="a trained run's model (its best-dev parameters, in float64)")
    explain.add_argument("--dim", type=int, default=4,
                         help="state dimension d of a fresh model (default 4)")
    explain.add_argument("--embedding-dim", type=int, default=None,
                         help="word-vector dimension of a fresh model (default: --dim; the "
                         "matrix-space model: d^2)")
    explain.add_argument("--seed", type=int, default=1,
                         help="seed of a fresh model's parameters and of sampled entries "
                         "(default 1)")
    explain.add_argument("--task", choices=sorted(TASK_CLASSES), default="sst5",
                         help="a fresh model's classes (default sst5: five)")
    explain.add_argument("--tree", choices=TREE_CHOICES, default=None, dest="tree_kind",
                         help="the tree of a plain sentence (as npcomp predict --tree)")
    explain.add_argument("--parents", metavar="HEADS", default=None,
                         help="a dependency tree for TREE, a plain sentence: each word's head "
                         "as SICK's .parents files give it (1-based, 0 for the root), "
                         "e.g. '2 0 2'")
    explain.add_argument("--node", type=int, default=None, metavar="K",
                         help="print node K's full vectors (K as numbered in the output)")
    explain.add_argument("--parts", action="store_true",
                         help="show eps_h and eps_c (and their kin) at each node, or at node "
                         "K, as the sum of their contributions, each with the equation it "
                         "reverses and why it is 0 where it is")
    explain.add_argument("--check-states", action="store_true",
                         help="also check every node's error terms (eps_h, eps_c, ...) against "
                         "finite differences of J in that node's states, through the cell's "
                         "own forward, parents first: the first node and term that disagree "
                         "are where a backward goes wrong (exit status 1 if any does)")
    explain.add_argument("--check-local", action="store_true",
                         help="also check each node's backward on its own, the error from "
                         "above held fixed, against finite differences of its own equations: "
                         "the first failure names the node (the culprit, not the child it "
                         "misleads) and the quantity (exit status 1 if any fails)")
    explain.add_argument("--max-nodes", type=int, default=None, metavar="N",
                         help="--check-states: the most nodes a tree may have (default "
                         "1,000; a larger tree is refused at once, saying how long its checks "
                         "would take: they grow with the square of the nodes, a 200-level "
                         "tree's taking about a minute). A larger N checks it, with a progress "
                         "bar and the time left")
    explain.add_argument("--values", type=int, default=3, metavar="N",
                         help="leading values shown per quantity (default 3; 0: norms alone)")
    explain.add_argument("--entries", default=None, metavar="N|all",
                         help="entries of each parameter (and, with --check-states, of each "
                         "node's state) checked by finite differences (default: all when the "
                         f"model has at most {ALL_ENTRIES_UP_TO:,} in all, else "
                         f"{SAMPLED_ENTRIES} drawn per parameter and per state)")
    explain.add_argument("--json", action="store_true", help="print everything as JSON")
    explain.add_argument("--html", metavar="FILE", default=None,
                         help="also write one self-contained interactive page: the tree "
                         "coloured by prediction, each node's quantities on a hover or click; "
                         "an existing FILE is kept unless --overwrite")
    explain.add_argument("--overwrite", action="store_true",
                         help="replace an existing --html FILE")
    explain.add_argument("--threads", type=int, default=None,
                         help="compute threads (default: every core)")


def run(args) -> int:
    import numpy as np

    from npcomp.study.explain import checked, describe, errata, explain, format_explanation
    from npcomp.study.finite_differences import TOLERANCE
    from npcomp.study.state_checks import MAX_NODES
    from npcomp.errors import ConfigError
    if (args.model is None) == (args.run is None):
        raise ConfigError("model", "give exactly one of --model M (a fresh model) and "
                                   "--run RUN_DIR (a trained one)")
    if args.values < 0:
        raise ConfigError("values", f"a whole number >= 0 (0: norms alone), not {args.values}")
    if args.max_nodes is not None and args.max_nodes < 1:
        raise ConfigError("max_nodes", f"a whole number >= 1, not {args.max_nodes}")
    if args.html is not None:   # refused before any work is done
        from npcomp.study.explain_page import check_target
        check_target(args.html, args.overwrite)
    model, params, vocab, config, trees = _model_and_trees(args)
    entries = _entries(args.entries, model, trees, vocab)
    rng = np.random.default_rng(args.seed)
    document = describe(config, model)
    document.update(explain(model, params, trees, vocab, entries=entries, rng=rng,
                            check_states=args.check_states, check_local=args.check_local,
                            progress=True,
                            max_nodes=MAX_NODES if args.max_nodes is None else args.max_nodes))
    document["entries"] = "all" if entries is None else entries
    document["errata"] = errata(document)
    document = checked(document, TOLERANCE)
    if args.html is not None:
        from npcomp.study.explain_page import render_page, write_page
        path = write_page(render_page(document), args.html, args.overwrite)
        print(f"npcomp explain: the page is {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(document))
    else:
        print(format_explanation(document, node=args.node, values=args.values,
                                 parts=args.parts))
    return 0 if document["passed"] else 1


def _model_and_trees(args) -> tuple:
    """(model, params, vocab, config, trees) of a run or a fresh model."""
    import numpy as np

    from npcomp.data.readers.embeddings import Vocabulary
    from npcomp.data.text.text_trees import TextTrees
    from npcomp.configuration.model_building import build_model, initial_parameters
    from npcomp.runfiles.model_files import load_model
    if args.run is not None:
        model, params, config, vocab = load_model(args.run)
        if config["task"] not in TASK_CLASSES and config["task"] != "files":
            from npcomp.errors import ConfigError
            raise ConfigError("run", f"{args.run}: a {config['task']} run scores sentence "
                                     "pairs; explain shows classifiers (--model "
                                     "treelstm-childsum explains the cell on a dependency "
                                     "tree)")
        trees = _trees(args, config["structure"], TextTrees, model.n_classes,
                       config.get("tree") if config["task"] == "files" else None,
                       config["model"])
        return model, params, vocab, config, trees
    from npcomp.configuration.defaults import defaults_for, matrix_embedding_dim
    config = defaults_for(args.model, args.task)
    # words drawn N(0, 1) (Nayebi & Blundell's unknown words), so that the
    # gates leave their linear regime on a fresh model
    config.update(model=args.model, task=args.task, dim=args.dim, seed=args.seed,
                  oov="normal", oov_scale=1.0)
    config["embedding_dim"] = (args.embedding_dim or matrix_embedding_dim(config) or args.dim)
    trees = _trees(args, config["structure"], TextTrees, TASK_CLASSES[args.task],
                   model_name=args.model)
    vocab = Vocabulary(sorted({word for tree in trees for word in tree.tokens}))
    model = build_model(config, vocab, TASK_CLASSES[args.task])
    params = initial_parameters(config, model, vocab, None, np.random.default_rng(args.seed), {})
    return model, params, vocab, config, trees


def _trees(args, structure: str, TextTrees, n_classes: int, run_tree: str | None = None,
           model_name: str | None = None) -> list:
    """The trees of TREE (a file's lines, or the argument itself), their
    labels among the model's ``n_classes``; a plain sentence's tree as
    --tree says, else ``run_tree`` (a run on a user's files: its own --tree).
    A bracketed tree is the tree checked, as written, for every model that
    composes trees (the Child-Sum Tree-LSTM's too: its inner nodes then read
    no word, as a leaf-only input's); a sequence model reads its words in
    order."""
    from npcomp.data.readers.formats import read_text_lines
    from npcomp.errors import DataError
    path = Path(args.tree)
    lines, source = ([args.tree], "TREE") if not _is_file(path) else (
        read_text_lines(path), str(path))
    if not any(line.strip() for line in lines):
        raise DataError("nothing to explain: expected a bracketed tree or a sentence"
                        + (" (a file of them, one per line)" if source != "TREE" else ""),
                        source)
    if args.parents is not None:
        return [_dependency_tree(lines, args.parents, source)]
    from npcomp.cells import registry
    as_written = registry.model(model_name).composes != "sequence" if model_name else False
    to_trees = TextTrees(structure, args.tree_kind or run_tree, warn=lambda message: print(
        f"npcomp explain: {message}", file=sys.stderr), n_classes=n_classes,
        keep_given=as_written)
    trees = to_trees(lines, source, skip_blank=True)
    if as_written and structure == "dependency" and "given" in to_trees.made:
        print("npcomp explain: the bracketed tree is checked as written (its inner nodes "
              "read no word); --parents HEADS with the plain sentence gives a dependency "
              "tree instead", file=sys.stderr)
    return trees


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:   # a sentence too long to be a file name
        return False


def _dependency_tree(lines: list, parents: str, source: str):
    """A plain sentence's tree from its words' heads (SICK's .parents)."""
    from npcomp.data.readers.parents import parents_to_tree
    from npcomp.errors import DataError
    from npcomp.data.text.sst_tokens import sst_tokens
    if len(lines) != 1 or lines[0].lstrip().startswith("("):
        raise DataError("--parents gives the heads of one plain sentence's words", source, 1)
    tokens = sst_tokens(lines[0])
    try:
        heads = [int(head) for head in parents.split()]
    except ValueError:
        raise DataError(f"--parents: whole numbers expected, not {parents!r}", source, 1) \
            from None
    if len(heads) != len(tokens):
        raise DataError(f"--parents gives {len(heads)} heads for {len(tokens)} words "
                        f"({' '.join(tokens)})", source, 1)
    return parents_to_tree(heads, tokens, source=f"{source}:1")


def _entries(given: str | None, model, trees: list, vocab) -> int | None:
    """Entries checked per parameter: None for all."""
    if given == "all":
        return None
    if given is not None:
        try:
            count = int(given)
        except ValueError:
            count = 0
        if count < 1:
            from npcomp.errors import ConfigError
            raise ConfigError("entries", f"a whole number >= 1 or 'all', not {given!r}")
        return count
    words = {word for tree in trees for word in vocab.encode(tree.tokens).tolist()}
    total = model.layout["embedding"].offset + len(words) * model.embedding_dim
    return None if total <= ALL_ENTRIES_UP_TO else SAMPLED_ENTRIES
