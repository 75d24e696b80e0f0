"""A model's outputs held finite, and the sentence named where they are not:
``require_finite_outputs`` refuses a row of non-finite probabilities,
``naming_the_sentence`` turns a cell's state overflow into an error naming
the sentence (its source) instead of a forest's tree number."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from npcomp.cells.kernels.overflow import StateOverflow


class NonFiniteOutput(ValueError):
    """A model gave a non-finite probability for a sentence; the message names it."""


def require_finite_outputs(outputs: np.ndarray, owner, trees, first: int) -> None:
    """Refuse ``outputs`` (one row per node, or per pair) holding a non-finite
    value; ``owner[row]`` is the row's example among ``trees[first:]``."""
    bad = ~np.isfinite(outputs).all(axis=1)
    if bad.any():
        tree = trees[first + int(owner[np.flatnonzero(bad)[0]])]
        words = " ".join(tree.tokens)
        raise NonFiniteOutput(
            f"{tree.source or 'a sentence'}: the model's probabilities are "
            f'not finite for "{words[:80]}{"..." if len(words) > 80 else ""}" '
            f"({len(tree.tokens)} words); no prediction is given"
        )


@contextmanager
def naming_the_sentence(trees):
    """Within, a cell's StateOverflow for forest tree k becomes NonFiniteOutput
    naming ``trees[k]`` (the forest's trees, in its order) by its source."""
    try:
        yield
    except StateOverflow as error:
        tree = trees[error.tree]
        raise NonFiniteOutput(f"{tree.source or 'a sentence'}: {error}") from None
