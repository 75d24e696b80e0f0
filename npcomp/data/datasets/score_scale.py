"""The scores of a user's sentence pairs: their range, and the ratings 1..K the
similarity head reads them as.

The range is the caller's (``--score-range LO,HI``) or else the training
file's smallest and largest score; every score of every file must lie in
it.  Tai et al.'s similarity head (``heads.SimilarityHead``, eq. 15) predicts
a rating in [1, K] as the expectation over K classes; SICK's scores are such
ratings with K = 5.  A range [lo, hi] maps linearly onto [1, K]:

    rating = 1 + (K - 1) (score - lo) / (hi - lo)

with K = hi - lo + 1 where lo and hi are whole numbers at most 10 apart
(SICK's 1..5: K = 5, the identity; 0..5: K = 6, a shift by one, so
squared errors are the same on both scales), else K = 5.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from npcomp.errors import ConfigError, DataError, option

DEFAULT_RATINGS = 5
# the caller's range, as a message names it (``errors.option``)
_RANGE = option("score_range", "LO,HI", "(lo, hi)")
MOST_RATINGS = 11


def checked_range(score_range: Sequence[float]) -> tuple:
    """A caller's range (lo, hi), checked: ConfigError unless finite with lo < hi."""
    try:
        low, high = (float(end) for end in score_range)
    except (TypeError, ValueError):
        raise ConfigError("score_range", f"expected two numbers LO,HI, not {score_range!r}") from None
    if not (math.isfinite(low) and math.isfinite(high)) or low >= high:
        raise ConfigError("score_range", f"expected LO < HI, two finite numbers, not {low:g},{high:g}")
    if not _computable(low, high):
        raise ConfigError(
            "score_range", f"{low:g},{high:g} is too wide to compute ratings with: give the range the scores lie in"
        )
    return low, high


def _computable(low: float, high: float) -> bool:
    """Whether the ratings of a range (``to_ratings``) stay finite numbers:
    its width, times the most ratings, is one."""
    return math.isfinite(MOST_RATINGS * (high - low))


def range_of(scores: Sequence[tuple], path) -> tuple:
    """(lo, hi) of the training file's scores ((score, path, line) each, NaN for
    none); DataError naming ``path`` when they do not make a range."""
    values = [score for score, _, _ in scores if not math.isnan(score)]
    if not values:
        raise DataError("no scores: every training pair needs its score", path)
    low, high = min(values), max(values)
    if not _computable(low, high):  # +-1e308: no ratings can be made of such a range
        score, where, line = max(
            (entry for entry in scores if not math.isnan(entry[0])), key=lambda entry: abs(entry[0])
        )
        raise DataError(
            f"score {score:g} makes the range [{low:g}, {high:g}], too wide to "
            f"compute with: correct it, or give the range ({_RANGE})",
            where,
            line,
        )
    if low == high:
        raise DataError(f"every score is {low:g}: a range needs two different scores; give it ({_RANGE})", path)
    return low, high


def check_scores(scores: Sequence[tuple], score_range: tuple, given: bool) -> None:
    """DataError naming the file and line of the first score outside the range."""
    low, high = score_range
    for score, path, line in scores:
        if not math.isnan(score) and not low <= score <= high:
            where = "the range given" if given else "the training file's range"
            raise DataError(
                f"score {score:g} outside {where}, [{low:g}, {high:g}]: correct "
                f"it, or give a range that holds it ({_RANGE})",
                path,
                line,
            )


def rating_classes(score_range: tuple) -> int:
    """K, the similarity head's number of ratings, for a score range."""
    low, high = score_range
    if float(low).is_integer() and float(high).is_integer() and high - low + 1 <= MOST_RATINGS:
        return int(high - low) + 1
    return DEFAULT_RATINGS


def to_ratings(scores: np.ndarray, score_range: tuple, n_ratings: int) -> np.ndarray:
    """Scores (any shape) on the head's scale [1, K]."""
    low, high = score_range
    return 1.0 + (n_ratings - 1) * (np.asarray(scores, dtype=np.float64) - low) / (high - low)


def from_ratings(ratings: np.ndarray, score_range: tuple, n_ratings: int) -> np.ndarray:
    """Ratings in [1, K] (the head's predictions) on the file's scale."""
    low, high = score_range
    return low + (np.asarray(ratings, dtype=np.float64) - 1.0) * (high - low) / (n_ratings - 1)
