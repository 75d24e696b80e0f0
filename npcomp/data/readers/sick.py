"""SICK (SemEval 2014 Task 1) in the layout of the Tree-LSTM authors'
preprocessing: per split directory ``a.toks``, ``b.toks``, ``a.parents``,
``b.parents``, ``a.cparents``, ``b.cparents``, ``sim.txt`` and ``id.txt``,
one pair per line; and the entailment judgments of SICK's own release files
(``SICK_train.txt``, ``SICK_trial.txt``, ``SICK_test_annotated.txt``:
tab-separated, a header naming ``pair_ID`` and ``entailment_judgment``),
joined to those pairs by their ID (``read_entailment``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from npcomp.errors import DataError
from npcomp.data.readers.formats import Tree, read_text_lines
from npcomp.data.readers.parents import _read_ints, parents_to_tree

SICK_STRUCTURES = {"dependency": "parents", "constituency": "cparents"}
SICK_SCORE_RANGE = (1.0, 5.0)


@dataclass
class SickPair:
    """One SICK sentence pair: both trees, the gold relatedness in [1, 5]
    (NaN where a pair has none), and for a task of pair classes the class
    number ``label`` (-1 where it has none)."""

    tree_a: Tree
    tree_b: Tree
    score: float
    pair_id: str
    label: int = -1


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
    relations = {
        side: read_text_lines(directory / f"{side}.rels")
        for side in "ab"
        if structure == "dependency" and (directory / f"{side}.rels").is_file()
    }
    longest = max(names, key=lambda name: len(lines[name]))
    n_pairs = len(lines[longest])
    for name in names:
        if len(lines[name]) < n_pairs:
            raise DataError(f"{len(lines[name])} line(s), but {longest} has {n_pairs}", directory / name)
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
                tree = replace(
                    tree,
                    relations=_read_relations(relations[side], index, len(tokens), directory / f"{side}.rels", number),
                )
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
        raise DataError(f"relatedness score {text.strip()!r} is not a number", path, line) from None
    if not low <= score <= high:
        raise DataError(f"relatedness score {score} outside [{low:g}, {high:g}]", path, line)
    return score


# SICK's entailment judgments, in the order the class numbers follow
ENTAILMENT_CLASSES = ("NEUTRAL", "ENTAILMENT", "CONTRADICTION")
# Tai et al.'s splits of SICK: the release file of each split directory
RELEASE_FILES = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}


def read_entailment(path: str | Path) -> dict:
    """{pair ID: class number in ``ENTAILMENT_CLASSES``} of one SICK release
    file; DataError naming the file and line of a row without its judgment
    or with another, or a header without the columns."""
    path = Path(path)
    lines = read_text_lines(path)
    if not lines:
        raise DataError("empty: a SICK release file starts with its header", path)
    header = lines[0].rstrip("\r\n").split("\t")
    missing = [column for column in ("pair_ID", "entailment_judgment") if column not in header]
    if missing:
        raise DataError(
            f"no {' and no '.join(missing)} column: not one of SICK's release files "
            f"(the header has {', '.join(header)})",
            path,
            1,
        )
    id_column, judgment_column = header.index("pair_ID"), header.index("entailment_judgment")
    numbers = {name: number for number, name in enumerate(ENTAILMENT_CLASSES)}
    judgments = {}
    for number, line in enumerate(lines[1:], start=2):
        fields = line.rstrip("\r\n").split("\t")
        if not line.strip():
            continue
        if len(fields) <= max(id_column, judgment_column):
            raise DataError(f"{len(fields)} field(s), but the header has {len(header)}", path, number)
        judgment = fields[judgment_column].strip()
        if judgment not in numbers:
            raise DataError(
                f"entailment judgment {judgment[:40]!r} is not one of {', '.join(ENTAILMENT_CLASSES)}", path, number
            )
        judgments[fields[id_column].strip()] = numbers[judgment]
    return judgments


def with_entailment(pairs: list, path: str | Path) -> list:
    """``pairs`` (one split directory's) each labelled with its entailment
    class from the release file ``path``, joined by pair ID; DataError naming
    the file when a pair's ID is not in it."""
    judgments = read_entailment(path)
    labelled = []
    for pair in pairs:
        if pair.pair_id not in judgments:
            raise DataError(
                f"no pair {pair.pair_id} (of {pair.tree_a.source or 'the split'}): "
                "the release file is not of the split's pairs",
                path,
            )
        labelled.append(SickPair(pair.tree_a, pair.tree_b, pair.score, pair.pair_id, judgments[pair.pair_id]))
    return labelled
