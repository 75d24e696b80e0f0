"""The vocabulary and the embedding matrix: from tokens to rows of the matrix
the models look words up in.

A :class:`Vocabulary` numbers word types (id 0 is the unknown word ``<unk>``);
:func:`build_embedding_matrix` makes the ``(len(vocab), dim)`` matrix,
copying pretrained rows (``vectors.py``'s :class:`WordVectors`) where the
file has the word and drawing the others at random.

Word look-up falls back to the lowercase form, both in the vocabulary (a word
unseen in training, ``"Good"``, reads as ``"good"`` when the vocabulary has it)
and when matching vocabulary words to vector-file words (GloVe 6B is
lowercase; SST is not).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from npcomp.errors import DataError
from .vectors import WordVectors

UNKNOWN = "<unk>"
OOV_POLICIES = ("normal", "uniform", "zero")
# Default scale of each random policy: N(0, 1) as Nayebi et al.; U(-0.05, 0.05)
# as the Tree-LSTM authors' code.
DEFAULT_SCALE = {"normal": 1.0, "uniform": 0.05, "zero": 0.0}


class Vocabulary:
    """Word types numbered in order of first appearance; id 0 is ``<unk>``.

    ``words[i]`` is the word with id ``i``.  Duplicates in ``words`` are
    ignored, and so is ``"<unk>"`` itself (it already has id 0).
    """

    def __init__(self, words: Iterable[str] = ()):
        self._words = [UNKNOWN]
        self._ids = {UNKNOWN: 0}
        for word in words:
            if word not in self._ids:
                self._ids[word] = len(self._words)
                self._words.append(word)

    @classmethod
    def from_trees(cls, trees: Iterable) -> "Vocabulary":
        """The tokens of :class:`npcomp.data.readers.formats.Tree` objects, in reading order."""
        return cls(token for tree in trees for token in tree.tokens)

    @classmethod
    def from_list(cls, words: Sequence[str]) -> "Vocabulary":
        """Inverse of :meth:`to_list`: ``words[i]`` gets id ``i`` again.

        Raises DataError unless ``words[0]`` is ``"<unk>"`` and no word repeats
        (either would shift the ids a checkpoint's embedding rows belong to).
        """
        words = list(words)
        if not words or words[0] != UNKNOWN:
            raise DataError(f"a saved vocabulary must start with {UNKNOWN!r}")
        vocab = cls(words)
        if len(vocab) != len(words):
            raise DataError(f"a saved vocabulary repeats words ({len(words)} entries, {len(vocab)} distinct)")
        return vocab

    def to_list(self) -> list:
        """The words by id (a copy), for storing in a checkpoint."""
        return list(self._words)

    @property
    def words(self) -> list:
        """The words by id (``words[0] == "<unk>"``); do not modify."""
        return self._words

    def __len__(self) -> int:
        return len(self._words)

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} words)"

    def lookup(self, word: str) -> int:
        """Id of ``word``, else of its lowercase form, else 0 (unknown)."""
        found = self._ids.get(word)
        if found is None:
            found = self._ids.get(word.lower(), 0)
        return found

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """int32 (len(tokens),): the id of each token by :meth:`lookup`."""
        return np.fromiter((self.lookup(token) for token in tokens), dtype=np.int32, count=len(tokens))


def _as_word_vectors(vectors) -> WordVectors:
    if isinstance(vectors, WordVectors):
        return vectors
    words, matrix = vectors
    return WordVectors(list(words), np.asarray(matrix))


def build_embedding_matrix(
    vocab: Vocabulary,
    dim: int,
    rng: np.random.Generator,
    vectors=None,
    oov: str = "normal",
    scale: float | None = None,
    dtype=np.float32,
):
    """The embedding matrix of ``vocab``: (len(vocab), dim) of ``dtype``, and a report.

    vectors: a :class:`WordVectors` (or a ``(words, float (n, dim))`` pair), or
             None for an all-random matrix.  A vocabulary word takes the
             vector of its exact form, else of its lowercase form.
    oov:     how the other rows are drawn: ``"normal"`` N(0, scale^2)
             (default scale 1.0), ``"uniform"`` U(-scale, scale) (default scale
             0.05), ``"zero"``.  Row 0 (``<unk>``) always follows this policy:
             it stands for words outside the vocabulary, not for a file entry.

    Every row is drawn first, then the found rows are overwritten, so the
    random rows depend only on ``rng``, not on which words the file has.

    The report (all plain numbers, JSON-ready): ``vocab_size`` (rows,
    ``<unk>`` included), ``found_exact``, ``found_lowercase``, ``missing``
    (these three count the ``vocab_size - 1`` real words), ``type_coverage``
    (``(found_exact + found_lowercase) / (vocab_size - 1)``), ``oov``, ``scale``.
    """
    if oov not in OOV_POLICIES:
        raise ValueError(f"oov must be one of {OOV_POLICIES}, not {oov!r}")
    scale = DEFAULT_SCALE[oov] if scale is None else float(scale)
    if scale < 0:
        raise ValueError(f"scale must be >= 0, not {scale}")
    shape = (len(vocab), dim)
    if oov == "normal":
        matrix = rng.normal(0.0, scale, size=shape).astype(dtype)
    elif oov == "uniform":
        matrix = rng.uniform(-scale, scale, size=shape).astype(dtype)
    else:
        matrix = np.zeros(shape, dtype=dtype)
    found_exact = found_lowercase = 0
    if vectors is not None:
        vectors = _as_word_vectors(vectors)
        if vectors.dim != dim:
            raise DataError(
                f"the vectors have dimension {vectors.dim} but the model's embeddings have dimension {dim}",
                vectors.path or None,
            )
        for word_id in range(1, len(vocab)):
            row, exact = vectors.find(vocab.words[word_id])
            if row >= 0:
                matrix[word_id] = vectors.vectors[row]
                found_exact += exact
                found_lowercase += not exact
    n_words = len(vocab) - 1
    found = found_exact + found_lowercase
    report = {
        "vocab_size": len(vocab),
        "found_exact": found_exact,
        "found_lowercase": found_lowercase,
        "missing": n_words - found,
        "type_coverage": found / n_words if n_words else 0.0,
        "oov": oov,
        "scale": scale,
    }
    return matrix, report
