"""Dependency trees for the Stanford Sentiment Treebank, labelled from its spans.

The SST ships binarised constituency trees with a sentiment label at every
node.  The Child-Sum Tree-LSTM reads dependency trees, so Tai, Socher &
Manning (2015, Sec. 5.1) parse each sentence and give a dependency node "a
sentiment label if its span matches a labeled span".  This module does the
same in two steps, so that the slow step runs once:

1. :func:`parse_sst` parses the SST's own tokens (never re-tokenised, never
   split into several sentences) with a dependency parser (:class:`SpacyParser`,
   or any object with the same ``parse`` method) and stores the heads as
   ``{split}.parents`` files, one sentence a line, in the layout of the SICK
   ``*.parents`` files (1-based heads, 0 at the root).
2. :func:`load_sst_dependency` reads the SST trees and those files back and
   labels every dependency node whose span (the words of its subtree) equals
   a constituent's span (:func:`labelled_dependency_tree`).

spaCy is an optional dependency (``pip install "npcomp[parse]"``): only
:class:`SpacyParser` needs it, and it imports spaCy when constructed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from npcomp.data.readers.formats import Tree, _split_source
from npcomp.data.readers.ptb import read_ptb_file
from npcomp.data.readers.parents import parents_to_tree
from npcomp.errors import DataError
from npcomp.data.readers.parents import read_parents, write_parents
from npcomp.data.text.parsed_trees import carry_labels

SPLITS = ("train", "dev", "test")


# --------------------------------------------------------------------------
# labelling dependency nodes from constituent spans
# --------------------------------------------------------------------------


def labelled_dependency_tree(constituency: Tree, heads: Sequence[int], source: str = "") -> Tree:
    """The dependency tree given by ``heads`` over ``constituency``'s tokens,
    labelled from ``constituency``'s spans.

    constituency: a labelled tree over T tokens (an SST PTB tree)
    heads:        ints (T,), 1-based head of each token, 0 at the root
    returns:      Tree of T nodes, each reading its word; a node's label is
                  that of the constituent covering exactly the same tokens
                  as the node's subtree, else UNLABELLED.  A subtree whose
                  tokens are not contiguous (non-projective) matches no
                  constituent.  Where constituents share a span (unary
                  chains), the highest one's label is taken.  The root covers
                  the whole sentence, so it gets the sentence's label.

    Raises DataError naming ``source`` if there are not T heads or the heads
    do not form a tree.
    """
    n_tokens = len(constituency.tokens)
    if len(heads) != n_tokens:
        raise DataError(f"{len(heads)} head(s) for {n_tokens} token(s)", *_split_source(source))
    return carry_labels(constituency, parents_to_tree(heads, constituency.tokens, source=source))


# --------------------------------------------------------------------------
# the SST splits
# --------------------------------------------------------------------------


def _sst_trees(data_dir: Path, split: str) -> tuple:
    """(path, trees) of the SST split's PTB file, with a hint if it is missing."""
    path = data_dir / "sst" / f"{split}.txt"
    if not path.is_file():
        raise DataError(
            f"no such file: the SST is read from DATA_DIR/sst/{split}.txt; "
            f"run `npcomp download sst --data-dir {data_dir}`",
            path,
        )
    return path, [tree.validate(5) for tree in read_ptb_file(path)]


def parse_sst(
    data_dir: str | Path,
    out_dir: str | Path,
    parser,
    splits: Sequence[str] = SPLITS,
    progress: Callable[[int], None] | None = None,
    chunk_size: int = 1000,
) -> list:
    """Parse the SST splits and write ``out_dir/{split}.parents``.

    parser:     has ``parse(list of token tuples) -> list of head lists``
                (:class:`SpacyParser`)
    progress:   called with the number of sentences parsed so far, counted
                over all ``splits``, after every chunk of ``chunk_size``
    returns:    the written paths, one per split

    Every parse is checked to be a tree over the sentence's tokens (DataError
    naming the SST file and line otherwise) before anything of its split is
    written.  Each file is written atomically, so an interrupted run leaves
    only whole files (of the splits finished).
    """
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    n_done = 0
    for split in splits:
        ptb_path, trees = _sst_trees(data_dir, split)
        heads_per_sentence = []
        for start in range(0, len(trees), chunk_size):
            chunk = [tree.tokens for tree in trees[start : start + chunk_size]]
            parsed = parser.parse(chunk)
            if len(parsed) != len(chunk):
                raise ValueError(f"the parser returned {len(parsed)} parse(s) for {len(chunk)} sentence(s)")
            for offset, (tokens, heads) in enumerate(zip(chunk, parsed)):
                heads = [int(head) for head in heads]
                # raises DataError naming the sentence if the heads are no tree
                parents_to_tree(heads, tokens, source=f"{ptb_path}:{start + offset + 1}")
                heads_per_sentence.append(heads)
            n_done += len(chunk)
            if progress is not None:
                progress(n_done)
        written.append(write_parents(out_dir / f"{split}.parents", heads_per_sentence))
    if hasattr(parser, "description"):  # which parser made them, for the runs that read them
        record = out_dir / "parser.json"
        partial = record.with_name(record.name + ".tmp")
        partial.write_text(json.dumps(parser.description(), indent=1) + "\n", encoding="utf-8")
        partial.replace(record)
    return written


def load_sst_dependency(data_dir: str | Path, parses_dir: str | Path, split: str, binarised: bool = False) -> list:
    """The SST split as labelled dependency trees (:func:`labelled_dependency_tree`),
    or with ``binarised`` as the binary trees of those parses
    (``parsed_trees.binarise``), labelled from the SST's phrases the same way.

    Reads ``data_dir/sst/{split}.txt`` and ``parses_dir/{split}.parents``
    (written by :func:`parse_sst`).  Tree sources are "{parents file}:{line}".
    Raises DataError if the parents file is missing (saying how to make it)
    or its line count differs from the number of SST trees.
    """
    data_dir, parses_dir = Path(data_dir), Path(parses_dir)
    ptb_path, trees = _sst_trees(data_dir, split)
    parents_path = parses_dir / f"{split}.parents"
    if not parents_path.is_file():
        raise DataError(
            "no such file: the SST's dependency parses are made by "
            f"`npcomp parse --data-dir {data_dir} --out {parses_dir}` (needs "
            "pip install 'npcomp[parse]'); train on parses elsewhere with "
            "--parses-dir DIR",
            parents_path,
        )
    heads_per_sentence = read_parents(parents_path)
    if len(heads_per_sentence) != len(trees):
        raise DataError(
            f"{len(heads_per_sentence)} line(s) of heads, but {ptb_path} holds "
            f"{len(trees)} tree(s); parse the SST again",
            parents_path,
        )
    if binarised:
        from npcomp.data.text.parsed_trees import binarise, carry_labels

        def labelled(tree, heads, source):
            if len(heads) != len(tree.tokens):
                raise DataError(f"{len(heads)} head(s) for {len(tree.tokens)} token(s)", *_split_source(source))
            return carry_labels(tree, binarise(heads, tree.tokens, source=source))
    else:
        labelled = labelled_dependency_tree
    return [
        labelled(tree, heads, source=f"{parents_path}:{number}").validate(5)
        for number, (tree, heads) in enumerate(zip(trees, heads_per_sentence), start=1)
    ]
