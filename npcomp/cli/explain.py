"""`npcomp explain`: one forward and backward pass of a cell on a tree you
write, every quantity under its paper's symbol, checked by finite differences."""

from __future__ import annotations

import json
import sys

from ..cells import registry
from npcomp.data.text import TREE_CHOICES
from npcomp.runs.explanations import ALL_ENTRIES_UP_TO, SAMPLED_ENTRIES, TASK_CLASSES


def add_parser(commands) -> None:
    """The explain command's options."""
    explain = commands.add_parser(
        "explain",
        help="show every forward quantity and backward error term of a cell on a tree",
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
        "is exactly 0, a part of a term that nothing reads).",
    )
    explain.add_argument("tree", metavar="TREE", help="a bracketed tree, a plain sentence, or a file of them")
    _model_options(explain)
    explain.add_argument(
        "--node", type=int, default=None, metavar="K", help="print node K's full vectors (K as numbered in the output)"
    )
    explain.add_argument(
        "--parts",
        action="store_true",
        help="show eps_h and eps_c (and their kin) at each node, or at node "
        "K, as the sum of their contributions, each with the equation it "
        "reverses and why it is 0 where it is",
    )
    _check_options(explain.add_argument_group("the checks beyond the parameters'"))
    explain.add_argument(
        "--values",
        type=int,
        default=3,
        metavar="N",
        help="leading values shown per quantity (default 3; 0: norms alone)",
    )
    explain.add_argument("--json", action="store_true", help="print everything as JSON")
    explain.add_argument(
        "--html",
        metavar="FILE",
        default=None,
        help="also write one self-contained interactive page: the tree "
        "coloured by prediction, each node's quantities on a hover or click; "
        "an existing FILE is kept unless --overwrite",
    )
    explain.add_argument("--overwrite", action="store_true", help="replace an existing --html FILE")
    explain.add_argument("--threads", type=int, default=None, help="compute threads (default: every core)")


def _model_options(explain) -> None:
    """explain's options of the model (a fresh one or a trained run's) and
    of how a plain sentence becomes a tree."""
    source = explain.add_argument_group("the model (one of)")
    source.add_argument(
        "--model",
        choices=sorted(registry.MODELS),
        default=None,
        help="a freshly initialised model of this kind (with --dim, --seed)",
    )
    source.add_argument(
        "--run", metavar="RUN_DIR", default=None, help="a trained run's model (its best-dev parameters, in float64)"
    )
    explain.add_argument("--dim", type=int, default=4, help="state dimension d of a fresh model (default 4)")
    explain.add_argument(
        "--embedding-dim",
        type=int,
        default=None,
        help="word-vector dimension of a fresh model (default: --dim; the matrix-space model: d^2)",
    )
    explain.add_argument(
        "--seed", type=int, default=1, help="seed of a fresh model's parameters and of sampled entries (default 1)"
    )
    explain.add_argument(
        "--task", choices=sorted(TASK_CLASSES), default="sst5", help="a fresh model's classes (default sst5: five)"
    )
    explain.add_argument(
        "--tree",
        choices=TREE_CHOICES,
        default=None,
        dest="tree_kind",
        help="the tree of a plain sentence (as npcomp predict --tree)",
    )
    explain.add_argument(
        "--parents",
        metavar="HEADS",
        default=None,
        help="a dependency tree for TREE, a plain sentence: each word's head "
        "as SICK's .parents files give it (1-based, 0 for the root), "
        "e.g. '2 0 2'",
    )


def _check_options(checks) -> None:
    """explain's options of the per-node checks and of the entries checked."""
    checks.add_argument(
        "--check-states",
        action="store_true",
        help="also check every node's error terms (eps_h, eps_c, ...) against "
        "finite differences of J in that node's states, through the cell's "
        "own forward, parents first: the first node and term that disagree "
        "are where a backward goes wrong (exit status 1 if any does)",
    )
    checks.add_argument(
        "--check-local",
        action="store_true",
        help="also check each node's backward on its own, the error from "
        "above held fixed, against finite differences of its own equations: "
        "the first failure names the node (the culprit, not the child it "
        "misleads) and the quantity (exit status 1 if any fails)",
    )
    checks.add_argument(
        "--max-nodes",
        type=int,
        default=None,
        metavar="N",
        help="--check-states: the most nodes a tree may have (default "
        "1,000; a larger tree is refused at once, saying how long its checks "
        "would take: they grow with the square of the nodes, a 200-level "
        "tree's taking about a minute). A larger N checks it, with a progress "
        "bar and the time left",
    )
    checks.add_argument(
        "--entries",
        default=None,
        metavar="N|all",
        help="entries of each parameter (and, with --check-states, of each "
        "node's state) checked by finite differences (default: all when the "
        f"model has at most {ALL_ENTRIES_UP_TO:,} in all, else "
        f"{SAMPLED_ENTRIES} drawn per parameter and per state)",
    )


def run(args) -> int:
    from npcomp.errors import ConfigError
    from npcomp.runs import explanation
    from npcomp.study.explanation_text import format_explanation

    if args.values < 0:  # how much is printed: the command line's own option
        raise ConfigError("values", f"a whole number >= 0 (0: norms alone), not {args.values}")
    result = explanation(
        args.tree,
        model=args.model,
        run=args.run,
        task=args.task,
        dim=args.dim,
        embedding_dim=args.embedding_dim,
        seed=args.seed,
        parents=args.parents,
        tree_kind=args.tree_kind,
        entries=args.entries,
        check_states=args.check_states,
        check_local=args.check_local,
        max_nodes=args.max_nodes,
        html=args.html,
        overwrite=args.overwrite,
    )
    if result.page is not None:
        print(f"npcomp explain: the page is {result.page}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.document))
    else:
        print(format_explanation(result.document, node=args.node, values=args.values, parts=args.parts))
    return 0 if result.passed else 1
