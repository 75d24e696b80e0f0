"""Shared fixtures: the real data directory (skip when absent), a seeded rng,
the synthetic treebank made small or written as SST files, a line of a data
file changed, the modules a new interpreter loads, and the hypothesis
profile used by every property test."""

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

import npcomp.data.datasets.synthetic

settings.register_profile("ci", deadline=None, max_examples=25, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

REPO_ROOT = Path(__file__).resolve().parent.parent


# what the real data directory holds (../shared/data/SOURCES.md)
REAL_DATA = ("sst/train.txt", "sick/train", "sick/SICK_trial.txt", "vectors")


def _missing_data(directory: Path) -> list:
    return [part for part in REAL_DATA if not (directory / part).exists()]


def real_data_directory() -> Path:
    """Where the real data is looked for: $NPCOMP_DATA when set (the CLI's
    own default), else ./data (<repo root>/data, where `npcomp download`
    puts it) when it holds the data, else <repo root>/../shared/data."""
    if os.environ.get("NPCOMP_DATA"):
        return Path(os.environ["NPCOMP_DATA"])
    for directory in (REPO_ROOT / "data", REPO_ROOT.parent / "shared" / "data"):
        if not _missing_data(directory):
            return directory
    return REPO_ROOT / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data directory (``real_data_directory``): the SST, SICK and
    the vectors (the tests that read it skip, saying so, without it)."""
    directory = real_data_directory()
    missing = _missing_data(directory)
    if missing:
        pytest.skip(
            f"real data not found at {directory} (no {', '.join(missing)}): run "
            "`npcomp download all` or set NPCOMP_DATA to the data directory"
        )
    return directory


# the synthetic treebank's own maker, kept before a test patches a smaller one in
SYNTHETIC_SPLITS = npcomp.data.datasets.synthetic.synthetic_splits


def synthetic_of_size(fixed: tuple):
    """The synthetic treebank's maker at (train, dev, test) = ``fixed``
    sentences whatever sizes are asked: patched in for
    ``npcomp.data.datasets.synthetic.synthetic_splits``, it keeps every run small."""

    def splits(seed=0, sizes=None):
        return SYNTHETIC_SPLITS(seed=seed, sizes=fixed)

    return splits


# loaded into each Dask worker process by small_synthetic_sweeps (its docstring says why)
WORKER_PRELOAD = Path(__file__).resolve().parent / "small_synthetic_workers.py"


@contextmanager
def small_synthetic_sweeps():
    """The synthetic treebank made ``small_synthetic_workers.SIZES``
    sentences in this process and in every Dask worker process started
    meanwhile: by a cluster of this process (Dask's configuration, which a
    nanny hands its worker) or by a command started from it (the
    environment, which a new process reads its Dask configuration from).
    Yields the sizes."""
    import dask

    from small_synthetic_workers import SIZES

    preload = [str(WORKER_PRELOAD)]
    with pytest.MonkeyPatch.context() as patch, dask.config.set({"distributed.worker.preload": preload}):
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size(SIZES))
        patch.setenv("DASK_DISTRIBUTED__WORKER__PRELOAD", repr(preload))
        yield SIZES


def write_sst(directory: Path, splits: dict) -> Path:
    """SST files under DIRECTORY/sst, one a split of ``splits`` ({split: its
    lines}).  Returns DIRECTORY."""
    (directory / "sst").mkdir(parents=True)
    for split, lines in splits.items():
        (directory / "sst" / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


def synthetic_sst_files(directory: Path, sizes: tuple) -> Path:
    """The synthetic treebank at (train, dev, test) = ``sizes`` sentences
    written as SST files under DIRECTORY/sst.  Returns DIRECTORY."""
    splits = SYNTHETIC_SPLITS(seed=0, sizes=sizes)
    return write_sst(directory, {name: [tree.to_ptb() for tree in trees] for name, trees in splits.items()})


def replace_line(path: Path, index: int, line: str) -> Path:
    """``path`` with its line ``index`` (from 0) replaced by ``line``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[index] = line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def modules_loaded_by(statements: str, modules: tuple) -> list:
    """Which of ``modules`` a new interpreter holds after running
    ``statements`` (its imports and calls), sorted."""
    probe = (
        f"import json, sys; {statements}; print(json.dumps(sorted(m for m in {tuple(modules)!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
