"""Splits of a user's training file: a dev split set aside from it, and the
folds of K-fold cross-validation.

Both are by index, deterministic for a seed, and keep the file's order
within each part.  The dev split is ``round(fraction * n)`` examples (at
least one, and at least one left to train on), drawn at random.  The folds
are a random permutation cut into K parts whose sizes differ by one at most:
every example is in exactly one fold's test split.  Fold k's dev split is
set aside from its training part as above.  The two draws use different
streams of the seed, so one seed serves both.
"""

from __future__ import annotations

import numpy as np

from npcomp.errors import ConfigError, DataError, option

_DEV_STREAM = 1
_FOLD_STREAM = 2


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), stream]))


def check_fraction(fraction: float) -> float:
    fraction = float(fraction)
    if not 0.0 < fraction < 1.0:
        raise ConfigError("dev_fraction", f"must be a number in (0, 1), not {fraction:g}")
    return fraction


def dev_split(n: int, fraction: float, seed: int) -> tuple:
    """(training indices, dev indices), each sorted, of ``n`` examples."""
    fraction = check_fraction(fraction)
    if n < 2:
        raise DataError(
            f"{n} training example(s): too few to set a dev split aside; give a dev file ({option('dev', '', 'FILE')})"
        )
    n_dev = min(max(int(round(fraction * n)), 1), n - 1)
    chosen = np.zeros(n, dtype=bool)
    chosen[_rng(seed, _DEV_STREAM).permutation(n)[:n_dev]] = True
    return np.flatnonzero(~chosen), np.flatnonzero(chosen)


def check_folds(n: int, n_folds: int, fold: int | None = None) -> None:
    if n_folds < 2:
        raise ConfigError("folds", f"cross-validation needs 2 folds or more, not {n_folds}")
    if n_folds > n:
        raise ConfigError("folds", f"{n_folds} folds of {n} example(s): at most one fold per example")
    if fold is not None and not 0 <= fold < n_folds:
        raise ConfigError("fold", f"fold {fold} of {n_folds}: folds are numbered 0..{n_folds - 1}")


def fold_indices(n: int, n_folds: int, seed: int) -> list:
    """The test indices of each of ``n_folds`` folds (sorted arrays): a
    partition of range(n)."""
    check_folds(n, n_folds)
    order = _rng(seed, _FOLD_STREAM).permutation(n)
    return [np.sort(part) for part in np.array_split(order, n_folds)]


def fold_split(n: int, fold: int, n_folds: int, seed: int) -> tuple:
    """(training indices, test indices) of fold ``fold`` (0-based) of ``n_folds``."""
    check_folds(n, n_folds, fold)
    test = fold_indices(n, n_folds, seed)[fold]
    keep = np.ones(n, dtype=bool)
    keep[test] = False
    return np.flatnonzero(keep), test
