"""Tiny SICK data in the Tree-LSTM authors' layout, and word vectors for it,
written into a temporary directory: shared by the tests of the command line
on SICK (cli/test_sick_cli.py), of the exit statuses and own data, and of the
relatedness tools (study/test_relatedness.py)."""

from pathlib import Path

import numpy as np


VOCABULARY = (
    "a",
    "man",
    "woman",
    "dog",
    "cat",
    "is",
    "playing",
    "running",
    "eating",
    "sleeping",
    "the",
    "guitar",
    "ball",
    "in",
    "park",
    "food",
)
# every vocabulary word but these has a vector in the tiny vectors file
NO_VECTOR = ("sleeping", "food")
VECTOR_DIM = 6
SICK_SIZES = {"train": 20, "dev": 8, "test": 8}


def _sentence(rng: np.random.Generator) -> list:
    length = int(rng.integers(2, 7))  # 2..6 tokens
    return [VOCABULARY[k] for k in rng.integers(0, len(VOCABULARY), size=length)]


def _right_branching_cparents(n: int) -> list:
    """Binarised constituency heads: nodes 1..n the tokens, n+1..2n-1 inner
    nodes, (w1 (w2 (... (w_{n-1} w_n))))."""
    heads = [n + i for i in range(1, n)] + [2 * n - 1]
    heads += [0] + [n + k - 1 for k in range(2, n)]
    return heads


def sick_pairs(split: str, n_pairs: int) -> list:
    """(tokens a, tokens b, relatedness) of a split: deterministic, a sentence
    of 2-6 words and a partner sharing some of its words; relatedness
    1 + 4 * word overlap (Jaccard) so the scores spread over [1, 5]."""
    rng = np.random.default_rng({"train": 11, "dev": 12, "test": 13}[split])
    pairs, seen = [], set()
    while len(pairs) < n_pairs:
        a = _sentence(rng)
        keep = int(rng.integers(0, len(a) + 1))
        b = a[:keep] + _sentence(rng)[: max(2 - keep, int(rng.integers(0, 4)))]
        if len(b) < 2 or tuple(a) in seen or tuple(b) in seen or a == b:
            continue
        seen.update((tuple(a), tuple(b)))
        overlap = len(set(a) & set(b)) / len(set(a) | set(b))
        pairs.append((a, b, round(1.0 + 4.0 * overlap, 4)))
    return pairs


def write_small_sick(data_dir: Path, sizes=None) -> Path:
    """DATA_DIR/sick/{train,dev,test}/ with a.toks, b.toks, a.parents, b.parents,
    a.cparents, b.cparents, sim.txt, id.txt; returns ``data_dir``."""
    sizes = dict(SICK_SIZES, **(sizes or {}))
    pair_id = 1
    for split, n_pairs in sizes.items():
        directory = data_dir / "sick" / split
        directory.mkdir(parents=True, exist_ok=True)
        files = {
            name: []
            for name in ("a.toks", "b.toks", "a.parents", "b.parents", "a.cparents", "b.cparents", "sim.txt", "id.txt")
        }
        for a, b, score in sick_pairs(split, n_pairs):
            for side, tokens in (("a", a), ("b", b)):
                n = len(tokens)
                files[f"{side}.toks"].append(" ".join(tokens))
                # every word's head is the next word, the last word the root
                files[f"{side}.parents"].append(" ".join(map(str, list(range(2, n + 1)) + [0])))
                files[f"{side}.cparents"].append(" ".join(map(str, _right_branching_cparents(n))))
            files["sim.txt"].append(str(score))
            files["id.txt"].append(str(pair_id))
            pair_id += 1
        for name, lines in files.items():
            (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data_dir


def vector_rows() -> dict:
    """word -> its float vector in the tiny GloVe file."""
    rng = np.random.default_rng(7)
    return {word: np.round(rng.normal(0.0, 0.5, size=VECTOR_DIM), 4) for word in VOCABULARY if word not in NO_VECTOR}


def write_vectors(path: Path) -> Path:
    """A GloVe-format text file (word, then VECTOR_DIM floats) of most of the vocabulary."""
    path.write_text(
        "".join(f"{word} {' '.join(repr(float(v)) for v in row)}\n" for word, row in vector_rows().items()),
        encoding="utf-8",
    )
    return path


def sick_sentences(split: str) -> list:
    """The split's sentences (a, b of every pair), as text."""
    return [" ".join(tokens) for a, b, _ in sick_pairs(split, SICK_SIZES[split]) for tokens in (a, b)]
