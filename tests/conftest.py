"""Shared fixtures: the real data directory (skip when absent), a seeded rng,
the synthetic treebank made small, and the hypothesis profile used by every
property test."""
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

import npcomp.data.synthetic

settings.register_profile("ci", deadline=None, max_examples=25, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO_ROOT = Path(__file__).resolve().parent.parent


# what the real data directory holds (../shared/data/SOURCES.md)
REAL_DATA = ("sst/train.txt", "sick/train", "sick/SICK_trial.txt", "vectors")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data directory, $NPCOMP_DATA, else <repo root>/../shared/data:
    the SST, SICK and the vectors (the tests that read it skip, saying so,
    without it)."""
    directory = Path(os.environ.get("NPCOMP_DATA", REPO_ROOT.parent / "shared" / "data"))
    missing = [part for part in REAL_DATA if not (directory / part).exists()]
    if missing:
        pytest.skip(f"real data not found at {directory} (no {', '.join(missing)}): set "
                    "NPCOMP_DATA to the data directory")
    return directory


# the synthetic treebank's own maker, kept before a test patches a smaller one in
SYNTHETIC_SPLITS = npcomp.data.synthetic.synthetic_splits


def synthetic_of_size(fixed: tuple):
    """The synthetic treebank's maker at (train, dev, test) = ``fixed``
    sentences whatever sizes are asked: patched in for
    ``npcomp.data.synthetic.synthetic_splits``, it keeps every run small."""
    def splits(seed=0, sizes=None):
        return SYNTHETIC_SPLITS(seed=seed, sizes=fixed)
    return splits


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
