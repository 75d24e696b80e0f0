"""How far two copies of SICK's tree layout agree: npcomp's
(``sick_trees``) against the Tree-LSTM authors' Stanford-parser files, or
any two copies of the same pairs.

    python -m npcomp.data.downloads.sick_tree_agreement OURS_DATA_DIR THEIRS_DATA_DIR

reads DATA_DIR/sick/{train,dev,test}/ of both and prints, per split and
over all: the sentences whose tokens are identical; the tokens that agree
(matched in order, ``difflib``, over the second copy's tokens); and, on the
sentences with identical tokens, the tokens with the same dependency head,
with the same head and relation label, the sentences whose every head
agrees, and the constituents (inner nodes of ``*.cparents``, as the set of
words each spans) of the second copy that the first has too.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from npcomp.errors import DataError
from npcomp.data.readers.formats import read_text_lines
from npcomp.data.readers.sick import RELEASE_FILES

__all__ = ["constituents", "layout_agreement", "split_agreement"]

COUNTS = (
    "sentences",
    "identical_tokens",
    "tokens",
    "tokens_matched",
    "compared_tokens",
    "same_heads",
    "same_relations",
    "all_heads_same",
    "constituents",
    "same_constituents",
)


def constituents(cparents: list, n_tokens: int) -> set:
    """The inner nodes of a ``*.cparents`` line as the sets of token
    positions they span (frozensets)."""
    spans = {}
    for leaf in range(n_tokens):
        node = cparents[leaf]
        steps = 0
        while node != 0 and steps <= len(cparents):
            spans.setdefault(node, set()).add(leaf)
            node = cparents[node - 1]
            steps += 1
    return {frozenset(span) for span in spans.values()}


def _lines(directory: Path, name: str) -> list:
    return [line.split() for line in read_text_lines(directory / name)]


def split_agreement(ours: Path, theirs: Path) -> dict:
    """The COUNTS of one split directory of each copy."""
    if read_text_lines(ours / "id.txt") != read_text_lines(theirs / "id.txt"):
        raise DataError(f"not the same pairs, in the same order, as {theirs / 'id.txt'}", ours / "id.txt")
    counts = dict.fromkeys(COUNTS, 0)
    for side in "ab":
        files = {
            kind: (_lines(ours, f"{side}.{kind}"), _lines(theirs, f"{side}.{kind}"))
            for kind in ("toks", "parents", "rels", "cparents")
        }
        for k, (tokens, other) in enumerate(zip(*files["toks"])):
            counts["sentences"] += 1
            counts["tokens"] += len(other)
            matcher = difflib.SequenceMatcher(a=tokens, b=other, autojunk=False)
            counts["tokens_matched"] += sum(block.size for block in matcher.get_matching_blocks())
            if tokens != other:
                continue
            counts["identical_tokens"] += 1
            _compare_trees(counts, {kind: (pair[0][k], pair[1][k]) for kind, pair in files.items()}, len(tokens))
    return counts


def _compare_trees(counts: dict, lines: dict, n_tokens: int) -> None:
    heads, other_heads = lines["parents"]
    relations, other_relations = lines["rels"]
    same = [a == b for a, b in zip(heads, other_heads)]
    counts["compared_tokens"] += n_tokens
    counts["same_heads"] += sum(same)
    counts["same_relations"] += sum(s and a == b for s, a, b in zip(same, relations, other_relations))
    counts["all_heads_same"] += all(same) and len(heads) == len(other_heads)
    ours, theirs = (constituents([int(x) for x in line], n_tokens) for line in lines["cparents"])
    counts["constituents"] += len(theirs)
    counts["same_constituents"] += len(ours & theirs)


def layout_agreement(ours_data_dir: str | Path, theirs_data_dir: str | Path) -> dict:
    """{split or "all": COUNTS} of DATA_DIR/sick/{train,dev,test}/ of both."""
    result = {}
    for split in RELEASE_FILES:
        result[split] = split_agreement(Path(ours_data_dir) / "sick" / split, Path(theirs_data_dir) / "sick" / split)
    result["all"] = {name: sum(counts[name] for counts in result.values()) for name in COUNTS}
    return result


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def report(result: dict) -> str:
    """The agreement as a Markdown table."""
    lines = [
        (
            "| split | sentences | identical tokens | tokens agreeing | same head | same "
            "head and relation | every head the same | same constituents |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    for split, c in result.items():
        lines.append(
            f"| {split} | {c['sentences']} | "
            f"{_share(c['identical_tokens'], c['sentences'])} | "
            f"{_share(c['tokens_matched'], c['tokens'])} | "
            f"{_share(c['same_heads'], c['compared_tokens'])} | "
            f"{_share(c['same_relations'], c['compared_tokens'])} | "
            f"{_share(c['all_heads_same'], c['identical_tokens'])} | "
            f"{_share(c['same_constituents'], c['constituents'])} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m npcomp.data.downloads.sick_tree_agreement OURS_DATA_DIR THEIRS_DATA_DIR")
    print(report(layout_agreement(sys.argv[1], sys.argv[2])))
