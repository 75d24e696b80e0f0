"""`npcomp explain` from Python: a cell's forward and backward pass on trees
you write, every quantity under its paper's symbol, checked by finite
differences (``npcomp.study.explain`` lays it out; this builds the model and
the trees the command's options name, and writes the page)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

# the classification tasks a fresh model can be built for, and their classes
TASK_CLASSES = {"sst5": 5, "sst2": 2, "synthetic": 5}
# every entry of every parameter is checked up to this many entries in all
ALL_ENTRIES_UP_TO = 20_000
SAMPLED_ENTRIES = 20


@dataclass(frozen=True)
class ExplanationResult:
    """``document``: explain's record (``passed``: every check within its
    tolerance); ``page``: the HTML page written, or None."""

    document: dict
    page: Path | None

    @property
    def passed(self) -> bool:
        return bool(self.document["passed"])


def explanation(
    tree: str,
    *,
    model: str | None = None,
    run: str | None = None,
    task: str = "sst5",
    dim: int = 4,
    embedding_dim: int | None = None,
    seed: int = 1,
    parents: str | None = None,
    tree_kind: str | None = None,
    entries: str | int | None = None,
    check_states: bool = False,
    check_local: bool = False,
    max_nodes: int | None = None,
    html: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> ExplanationResult:
    """`npcomp explain` with the same options as keywords: ``tree`` a
    bracketed tree, a plain sentence or a file of them; exactly one of
    ``model`` (a fresh model of ``dim``, drawn with ``seed``) and ``run`` (a
    trained run directory).  ConfigError names an option out of range."""
    import numpy as np

    from npcomp.errors import ConfigError
    from npcomp.study.explain import checked, describe, errata, explain
    from npcomp.study.finite_differences import TOLERANCE
    from npcomp.study.state_checks import MAX_NODES

    if (model is None) == (run is None):
        raise ConfigError("model", "give exactly one of --model M (a fresh model) and --run RUN_DIR (a trained one)")
    if max_nodes is not None and max_nodes < 1:
        raise ConfigError("max_nodes", f"a whole number >= 1, not {max_nodes}")
    if html is not None:  # refused before any work is done
        from npcomp.study.explain_page import check_target

        check_target(html, overwrite)
    args = SimpleNamespace(
        tree=tree,
        model=model,
        run=run,
        task=task,
        dim=dim,
        embedding_dim=embedding_dim,
        seed=seed,
        parents=parents,
        tree_kind=tree_kind,
    )
    cell_model, params, vocab, config, trees = model_and_trees(args)
    count = _entries(None if entries is None else str(entries), cell_model, trees, vocab)
    document = describe(config, cell_model)
    document.update(
        explain(
            cell_model,
            params,
            trees,
            vocab,
            entries=count,
            rng=np.random.default_rng(seed),
            check_states=check_states,
            check_local=check_local,
            progress=progress,
            max_nodes=MAX_NODES if max_nodes is None else max_nodes,
        )
    )
    document["entries"] = "all" if count is None else count
    document["errata"] = errata(document)
    document = checked(document, TOLERANCE)
    page = None
    if html is not None:
        from npcomp.study.explain_page import render_page, write_page

        page = write_page(render_page(document), html, overwrite)
    return ExplanationResult(document, page)


def model_and_trees(args) -> tuple:
    """(model, params, vocab, config, trees) of a run or a fresh model;
    ``args`` holds ``explanation``'s keywords as attributes."""
    import numpy as np

    from npcomp.data.readers.embeddings import Vocabulary
    from npcomp.data.text.text_trees import TextTrees
    from npcomp.configuration.model_building import build_model, initial_parameters
    from npcomp.runfiles.model_files import load_model

    if args.run is not None:
        model, params, config, vocab = load_model(args.run)
        if config["task"] not in TASK_CLASSES and config["task"] != "files":
            from npcomp.errors import ConfigError

            raise ConfigError(
                "run",
                f"{args.run}: a {config['task']} run scores sentence "
                "pairs; explain shows classifiers (--model "
                "treelstm-childsum explains the cell on a dependency "
                "tree)",
            )
        trees = _trees(
            args,
            config["structure"],
            TextTrees,
            model.n_classes,
            config.get("tree") if config["task"] == "files" else None,
            config["model"],
        )
        return model, params, vocab, config, trees
    from npcomp.configuration.defaults import defaults_for, matrix_embedding_dim

    config = defaults_for(args.model, args.task)
    # words drawn N(0, 1) (Nayebi & Blundell's unknown words), so that the
    # gates leave their linear regime on a fresh model
    config.update(model=args.model, task=args.task, dim=args.dim, seed=args.seed, oov="normal", oov_scale=1.0)
    config["embedding_dim"] = args.embedding_dim or matrix_embedding_dim(config) or args.dim
    trees = _trees(args, config["structure"], TextTrees, TASK_CLASSES[args.task], model_name=args.model)
    vocab = Vocabulary(sorted({word for tree in trees for word in tree.tokens}))
    model = build_model(config, vocab, TASK_CLASSES[args.task])
    params = initial_parameters(config, model, vocab, None, np.random.default_rng(args.seed), {})
    return model, params, vocab, config, trees


def _trees(
    args, structure: str, TextTrees, n_classes: int, run_tree: str | None = None, model_name: str | None = None
) -> list:
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
    lines, source = ([args.tree], "TREE") if not _is_file(path) else (read_text_lines(path), str(path))
    if not any(line.strip() for line in lines):
        raise DataError(
            "nothing to explain: expected a bracketed tree or a sentence"
            + (" (a file of them, one per line)" if source != "TREE" else ""),
            source,
        )
    if args.parents is not None:
        return [_dependency_tree(lines, args.parents, source)]
    from npcomp.cells import registry

    as_written = registry.model(model_name).composes != "sequence" if model_name else False
    to_trees = TextTrees(
        structure,
        args.tree_kind or run_tree,
        warn=lambda message: print(f"npcomp explain: {message}", file=sys.stderr),
        n_classes=n_classes,
        keep_given=as_written,
    )
    trees = to_trees(lines, source, skip_blank=True)
    if as_written and structure == "dependency" and "given" in to_trees.made:
        print(
            "npcomp explain: the bracketed tree is checked as written (its inner nodes "
            "read no word); --parents HEADS with the plain sentence gives a dependency "
            "tree instead",
            file=sys.stderr,
        )
    return trees


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a sentence too long to be a file name
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
        raise DataError(f"--parents: whole numbers expected, not {parents!r}", source, 1) from None
    if len(heads) != len(tokens):
        raise DataError(f"--parents gives {len(heads)} heads for {len(tokens)} words ({' '.join(tokens)})", source, 1)
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
