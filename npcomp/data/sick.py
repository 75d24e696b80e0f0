"""SICK (SemEval 2014 Task 1) in the layout of the Tree-LSTM authors'
preprocessing: per split directory ``a.toks``, ``b.toks``, ``a.parents``,
``b.parents``, ``a.cparents``, ``b.cparents``, ``sim.txt`` and ``id.txt``,
one pair per line."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .errors import DataError
from .formats import Tree, read_text_lines
from .parents import _read_ints, parents_to_tree

SICK_STRUCTURES = {"dependency": "parents", "constituency": "cparents"}
SICK_SCORE_RANGE = (1.0, 5.0)


@dataclass
class SickPair:
    """One SICK sentence pair: both trees and the gold relatedness in [1, 5]."""

    tree_a: Tree
    tree_b: Tree
    score: float
    pair_id: str


def read_sick_dir(directory: str | Path, structure: str = "dependency") -> list:
    """SickPairs of one split directory in the Tree-LSTM authors' layout.

    Reads ``a.toks``, ``b.toks`` (space-separated tokens), ``a.parents``,
    ``b.parents`` (structure "dependency") or ``a.cparents``, ``b.cparents``
    ("constituency"), ``sim.txt`` (relatedness in [1, 5]) and ``id.txt``: line k
    of every file describes pair k.  Dependency trees also take ``a.rels``,
    ``b.rels`` (each token's relation to its head) where the directory has
    them.  Raises DataError naming the file and line, or the file with fewer
    lines than the others and its line count.  Tree
    sources are the ``*.parents`` / ``*.cparents`` file and line.
    """
    if structure not in SICK_STRUCTURES:
        raise ValueError(f"structure must be one of {sorted(SICK_STRUCTURES)}, not {structure!r}")
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError("no such directory", directory)
    suffix = SICK_STRUCTURES[structure]
    names = ("a.toks", "b.toks", f"a.{suffix}", f"b.{suffix}", "sim.txt", "id.txt")
    lines = {name: read_text_lines(directory / name) for name in names}
    # dependency relations (the SDT-RNN's), where the directory has them
    relations = {side: read_text_lines(directory / f"{side}.rels")
                 for side in "ab" if structure == "dependency"
                 and (directory / f"{side}.rels").is_file()}
    longest = max(names, key=lambda name: len(lines[name]))
    n_pairs = len(lines[longest])
    for name in names:
        if len(lines[name]) < n_pairs:
            raise DataError(f"{len(lines[name])} line(s), but {longest} has {n_pairs}",
                            directory / name)
    if n_pairs == 0:
        raise DataError("no pairs: the files are empty", directory)
    pairs = []
    for index in range(n_pairs):
        number = index + 1
        trees = []
        for side in "ab":
            tokens = lines[f"{side}.toks"][index].split()
            if not tokens:
                raise DataError("empty sentence", directory / f"{side}.toks", number)
            heads_path = directory / f"{side}.{suffix}"
            heads = _read_ints(lines[f"{side}.{suffix}"][index], heads_path, number)
            n_tokens = None if structure == "dependency" else len(tokens)
            tree = parents_to_tree(heads, tokens, n_tokens, f"{heads_path}:{number}")
            if side in relations:
                tree = replace(tree, relations=_read_relations(
                    relations[side], index, len(tokens), directory / f"{side}.rels", number))
            trees.append(tree)
        score = _read_score(lines["sim.txt"][index], directory / "sim.txt", number)
        pair_id = lines["id.txt"][index].strip()
        if not pair_id:
            raise DataError("empty pair id", directory / "id.txt", number)
        pairs.append(SickPair(trees[0], trees[1], score, pair_id))
    return pairs


def _read_relations(lines: list, index: int, n_tokens: int, path: Path, line: int) -> tuple:
    """The relation labels of sentence ``index``: one per token."""
    labels = tuple(lines[index].split()) if index < len(lines) else ()
    if len(labels) != n_tokens:
        raise DataError(f"{len(labels)} relation(s) for {n_tokens} token(s)", path, line)
    return labels


def _read_score(text: str, path: Path, line: int) -> float:
    low, high = SICK_SCORE_RANGE
    try:
        score = float(text)
    except ValueError:
        raise DataError(f"relatedness score {text.strip()!r} is not a number",
                        path, line) from None
    if not low <= score <= high:
        raise DataError(f"relatedness score {score} outside [{low:g}, {high:g}]", path, line)
    return score
