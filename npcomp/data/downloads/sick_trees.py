"""SICK in the Tree-LSTM authors' layout, made by npcomp from SICK's release
files (``npcomp download sick-trees``, after ``npcomp download sick``).

One directory a split, the pairs in the release file's order::

    DATA_DIR/sick/train/   from SICK_train.txt            (4500 pairs)
    DATA_DIR/sick/dev/     from SICK_trial.txt            (500)
    DATA_DIR/sick/test/    from SICK_test_annotated.txt   (4927)
        a.txt, b.txt            the release's sentences
        a.toks, b.toks          their tokens, space-separated
        a.parents, b.parents    dependency heads: 1-based, 0 at the root
        a.rels, b.rels          each token's relation to its head
        a.cparents, b.cparents  binarised constituency tree: nodes 1..T the
                                tokens, T+1..2T-1 inner nodes, each node's
                                1-based parent, 0 at the root
        sim.txt, id.txt         relatedness score and pair ID
    DATA_DIR/sick/trees.json    what made them (below)

The Tree-LSTM authors made theirs with the Stanford tools (the PTB
tokeniser, the dependency parser's basic dependencies, the PCFG parser's
binarised trees).  Here:

* tokens: ``sst_tokens``, npcomp's own tokeniser of the Penn Treebank
  conventions the Stanford tokeniser follows (``is n't``, ``-LRB-``), with
  ``/`` and ``*`` unescaped as in the authors' files (:func:`sick_tokens`);
* dependencies: spaCy's English pipeline (the ``parse`` extra), over those
  tokens as given, copular clauses headed by their predicate as the
  Stanford basic dependencies head them (``dependency_parser``); relations
  are spaCy's labels (``compound`` where Stanford writes ``nn``, ...);
* constituency: spaCy parses no phrase structure, so the binary tree is the
  dependency tree's head-outward binarisation (:func:`head_outward_cparents`):
  a head takes its right dependents' phrases, nearest first, then its left
  ones, nearest first, one inner node each (``a man is playing a guitar``:
  ``(a man) (is (playing (a guitar)))``), as a verb phrase is built before
  its subject joins it.

``trees.json`` records the parser (spaCy's version, the pipeline's name and
version), the rules above, each release file's MD5 and each file made
with its MD5.  Nothing half-made lands in the data directory: the splits
are written into a temporary directory beside them and renamed into place
when all three are whole.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from npcomp.errors import DataError
from npcomp.data.readers.sick import RELEASE_FILES
from npcomp.data.text.sst_tokens import sst_tokens

__all__ = [
    "RECORD",
    "SIDE_FILES",
    "SPLIT_FILES",
    "head_outward_cparents",
    "make_sick_trees",
    "parser_missing",
    "release_pairs",
    "sick_tokens",
    "trees_present",
]

# the files of each split directory
SIDE_FILES = ("txt", "toks", "parents", "rels", "cparents")
SPLIT_FILES = tuple(f"{side}.{kind}" for side in "ab" for kind in SIDE_FILES) + ("sim.txt", "id.txt")
RECORD = "trees.json"
TOKENISER = (
    "npcomp.data.downloads.sick_trees.sick_tokens: the Penn Treebank conventions of the "
    "Stanford tokeniser (n't, 's, -LRB-, `` ''), / and * unescaped"
)
CONSTITUENCY_RULE = (
    "the dependency tree binarised head-outward: a head takes its right "
    "dependents' phrases nearest first, then its left ones nearest first, "
    "one inner node each"
)


def head_outward_cparents(heads: Sequence[int]) -> list:
    """A binarised constituency tree from a dependency tree.

    heads:   ints (T,), 1-based heads, 0 at the single root (``*.parents``)
    returns: ints (2T - 1,), the ``*.cparents`` line: nodes 1..T are the
             tokens, T+1..2T-1 the inner nodes in the order they are made
             (children before parents, the root last), each entry its
             node's 1-based parent, 0 at the root

    Each dependency edge makes one inner node: the phrase of a head h
    starts as h's leaf; each right dependent, nearest first, then each left
    dependent, nearest first, joins it as a sibling under a new node.  A
    projective tree gives phrases of adjacent words; no recursion, so any
    depth goes.
    """
    n = len(heads)
    if n == 0:
        raise ValueError("no tokens: a tree needs at least one")
    dependents = [[] for _ in range(n)]
    roots = []
    for position, head in enumerate(heads):
        if head == 0:
            roots.append(position)
        elif not 1 <= head <= n or head - 1 == position:
            raise ValueError(f"token {position + 1}: head {head} out of range 0..{n}, or itself")
        else:
            dependents[head - 1].append(position)
    if len(roots) != 1:
        raise ValueError(f"{len(roots)} roots; a dependency tree has one")
    # heads after their dependents: the reverse of a walk down from the root
    order, seen = [roots[0]], 0
    while seen < len(order):
        order.extend(dependents[order[seen]])
        seen += 1
    if len(order) != n:
        raise ValueError("a cycle: some tokens do not reach the root")
    parent = [0] * (2 * n - 1)  # 0-based nodes here; written 1-based
    phrase = list(range(n))  # the node heading each token's whole phrase
    made = n
    for head in reversed(order):
        right = sorted(d for d in dependents[head] if d > head)
        left = sorted((d for d in dependents[head] if d < head), reverse=True)
        top = head
        for dependent in right + left:
            parent[top] = parent[phrase[dependent]] = made + 1
            top = made
            made += 1
        phrase[head] = top
    parent[phrase[roots[0]]] = 0
    return parent


def sick_tokens(sentence: str) -> list:
    """A SICK sentence's tokens: ``sst_tokens``, but ``/`` and ``*`` left
    unescaped, as the Stanford tokeniser of the authors' layout left them
    (``the/some``, where the SST writes ``the\\/some``)."""
    return [token.replace("\\/", "/").replace("\\*", "*") for token in sst_tokens(sentence)]


def release_pairs(path: str | Path) -> list:
    """(pair ID, sentence A, sentence B, relatedness as written) of every
    pair of a SICK release file; DataError naming the file (and line) of a
    file without those columns or a row without its fields."""
    path = Path(path)
    if not path.is_file():
        raise DataError("no such file: SICK's release files are installed by `npcomp download sick`", path)
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    columns = ("pair_ID", "sentence_A", "sentence_B", "relatedness_score")
    header = [name.strip() for name in rows[0]] if rows else []
    missing = [name for name in columns if name not in header]
    if missing:
        raise DataError(f"no {', '.join(missing)} column(s): not one of SICK's release files", path, 1)
    where = [header.index(name) for name in columns]
    pairs = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) <= max(where):
            raise DataError(f"{len(row)} field(s), the header has {len(header)}", path, number)
        # the sentences as written (a.txt, b.txt keep even a trailing space)
        pair_id, sentence_a, sentence_b, score = (row[k] for k in where)
        pair = (pair_id.strip(), sentence_a, sentence_b, score.strip())
        if not all(field.strip() for field in pair):
            raise DataError("an empty field", path, number)
        pairs.append(pair)
    if not pairs:
        raise DataError("no pairs after the header", path)
    return pairs


def trees_present(data_dir: str | Path) -> bool:
    """Whether every split directory of the layout is whole in DATA_DIR/sick
    (made here or the Tree-LSTM authors' own)."""
    sick = Path(data_dir) / "sick"
    return all((sick / split / name).is_file() for split in RELEASE_FILES for name in SPLIT_FILES)


def parser_missing() -> str | None:
    """Why the trees cannot be made here (spaCy or its English pipeline not
    installed), without loading them; None when they can."""
    from importlib.util import find_spec

    from npcomp.data.text.dependency_parser import DEFAULT_MODELS, PARSE_EXTRA

    if find_spec("spacy") is None:
        return f"SICK's trees are parsed by spaCy, which is not installed: {PARSE_EXTRA}"
    if not any(find_spec(model) for model in DEFAULT_MODELS):
        return f"SICK's trees are parsed by spaCy's {DEFAULT_MODELS[0]}, which is not installed: {PARSE_EXTRA}"
    return None


def make_sick_trees(data_dir: str | Path, parser=None, force: bool = False, progress: bool = True, say=print) -> list:
    """Make DATA_DIR/sick/{train,dev,test}/ from the release files in
    DATA_DIR/sick (module docstring); the paths made.

    parser: a ``dependency_parser.SpacyParser`` (default: the ``parse``
            extra's pipeline)
    force:  make them again where the layout is present (else it is kept:
            the Tree-LSTM authors' files are never replaced unasked)

    Raises DataError naming a missing or malformed release file (nothing
    written), ImportError naming the ``parse`` extra when spaCy is missing.
    """
    data_dir = Path(data_dir)
    sick = data_dir / "sick"
    if trees_present(data_dir) and not force:
        made = _record_of(sick)
        say(
            f"sick-trees: {sick}/{{train,dev,test}}/ already present ("
            + (f"made by {made}" if made else "not made by npcomp: kept")
            + "; --force makes "
            "them again)"
        )
        return [sick / split / name for split in RELEASE_FILES for name in SPLIT_FILES]
    partial = [split for split in RELEASE_FILES if (sick / split).exists()]
    if partial and not force:
        raise DataError(
            f"{', '.join(partial)} there, but not every file of the layout ("
            f"{', '.join(SPLIT_FILES)}): kept; --force makes the layout again",
            sick / partial[0],
        )
    releases = {split: release_pairs(sick / name) for split, name in RELEASE_FILES.items()}
    if parser is None:
        from npcomp.data.text.dependency_parser import SpacyParser

        parser = SpacyParser()
    staging = Path(tempfile.mkdtemp(prefix=".trees-", dir=sick))
    try:
        files = {}
        bar = _bar(sum(2 * len(pairs) for pairs in releases.values()), progress)
        for split, pairs in releases.items():
            files.update(_write_split(staging / split, pairs, parser, bar, split))
        if bar is not None:
            bar.close()
        record = _record(parser, sick, files, {split: len(p) for split, p in releases.items()})
        for split in RELEASE_FILES:
            if (sick / split).exists():
                shutil.rmtree(sick / split)
            (staging / split).rename(sick / split)
        (sick / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [sick / split / name for split in RELEASE_FILES for name in SPLIT_FILES]


def _bar(total: int, progress: bool):
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="sick-trees: parsing", unit="sentence", leave=False)


def _write_split(directory: Path, pairs: list, parser, bar, split: str) -> dict:
    """One split's files in ``directory``; {split/name: MD5}."""
    directory.mkdir(parents=True)
    lines = {name: [] for name in SPLIT_FILES}
    for pair_id, _, _, score in pairs:
        lines["id.txt"].append(pair_id)
        lines["sim.txt"].append(score)
    for side, column in (("a", 1), ("b", 2)):
        sentences = [pair[column] for pair in pairs]
        tokens = [sick_tokens(sentence) for sentence in sentences]
        for heads, relations in parser.parse_labelled(tokens):
            lines[f"{side}.parents"].append(" ".join(map(str, heads)))
            lines[f"{side}.rels"].append(" ".join(relations))
            lines[f"{side}.cparents"].append(" ".join(map(str, head_outward_cparents(heads))))
            if bar is not None:
                bar.update(1)
        lines[f"{side}.txt"] = sentences
        lines[f"{side}.toks"] = [" ".join(sentence) for sentence in tokens]
    digests = {}
    for name, text in lines.items():
        data = ("\n".join(text) + "\n").encode("utf-8")
        (directory / name).write_bytes(data)
        digests[f"{split}/{name}"] = hashlib.md5(data).hexdigest()
    return digests


def _record(parser, sick: Path, files: dict, pairs: dict) -> dict:
    from .http_download import npcomp_version

    return {
        "made_by": f"npcomp {npcomp_version()}",
        **parser.versions(),
        "tokens": TOKENISER,
        "constituency": CONSTITUENCY_RULE,
        "release_files": {name: hashlib.md5((sick / name).read_bytes()).hexdigest() for name in RELEASE_FILES.values()},
        "pairs": pairs,
        "files": files,
    }


def _record_of(sick: Path) -> str | None:
    """Who made the layout, from its record; None without one."""
    try:
        record = json.loads((sick / RECORD).read_text(encoding="utf-8"))
        return f"{record['made_by']} with {record['model']} {record['model_version']}"
    except (OSError, ValueError, KeyError, TypeError):
        return None
