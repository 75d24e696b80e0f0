"""Shared fixtures: the real data directory (skip when absent), a seeded rng,
and the hypothesis profile used by every property test."""
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("ci", deadline=None, max_examples=25, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data directory: $NPCOMP_DATA, else <repo root>/../shared/data."""
    directory = Path(os.environ.get("NPCOMP_DATA", REPO_ROOT.parent / "shared" / "data"))
    if not (directory / "sst" / "train.txt").is_file():
        pytest.skip("real data not found: set NPCOMP_DATA to the data directory")
    return directory


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
