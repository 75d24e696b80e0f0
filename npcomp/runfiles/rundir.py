"""The files of a run directory, and the rules that keep them safe.

A run directory holds one training run (docs/run-directories.md): ``metrics.json``,
``model.npz``, ``checkpoint.npz`` and ``log.jsonl``, and the per-sentence
predictions of its best model (``predictions.jsonl`` for the test split,
``predictions-SPLIT.jsonl`` for another one, ``predictions.py``) with the
counts its figures need (``test-counts.json``, ``figure_counts.py``).  The rules:

* a fresh run refuses a directory that already holds any of these files,
  before anything is read or written, unless asked to ``overwrite``; then the
  old files are moved aside into ``replaced/`` inside the directory and
  deleted only once the new run has finished an epoch (a new run that fails
  before that leaves the old one there, whole);
* one process at a time: a run holds an exclusive ``flock`` on ``.lock`` while
  it trains; the kernel releases it when the process ends, killed or not, so
  a lock is never left stuck;
* every file is written whole or not at all: to a temporary file that is
  flushed and ``fsync``-ed, then renamed over the old one (and the directory
  synced), so a crash at any moment leaves the previous version readable;
  the log is appended and synced a record at a time;
* a file that cannot be read back (truncated, not an archive, a key missing)
  raises ``RunFileError`` naming it as damaged.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import zipfile
from pathlib import Path

RUN_FILES = ("metrics.json", "model.npz", "checkpoint.npz", "log.jsonl")
# the per-sentence predictions of the run's best model (predictions.py)
PREDICTION_FILES = "predictions*.jsonl"
# a split's predictions (predictions.py writes them, figures.py reads them)
PREDICTIONS = "predictions.jsonl"
# the counts its figures are drawn from (figure_counts.py)
COUNTS_FILE = "test-counts.json"
REPLACED = "replaced"
LOCK = ".lock"


def predictions_name(split: str) -> str:
    """The file a split's predictions are in: ``predictions.jsonl`` for the
    test split, ``predictions-SPLIT.jsonl`` for another."""
    return PREDICTIONS if split == "test" else f"predictions-{split}.jsonl"


class RunDirectoryError(Exception):
    """A run directory cannot be used as asked: it holds a run, another
    process trains in it, it is not a directory, it cannot be written.
    ``ways_on``: what the caller may do instead, as ``train``'s arguments
    (``resume``, ``run_dir``, ``overwrite``), for a front end to put in its
    own terms; ``reason``: the message without them."""

    def __init__(self, reason: str, ways_on: tuple = (), path: Path | None = None):
        self.reason, self.ways_on, self.path = reason, ways_on, path
        advice = {
            "resume": "resume it (resume=True)",
            "run_dir": "choose another run_dir",
            "overwrite": "replace it (overwrite=True)",
        }
        text = reason if not ways_on else (f"{reason} Ways on: {', '.join(advice[way] for way in ways_on)}.")
        super().__init__(text)


class RunFileError(Exception):
    """A run file is missing or damaged; the message names it."""


class RunDirectory:
    """The run directory at ``path`` and its files."""

    # its files are on disk, where paths relative to it lead
    on_disk = True

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock_handle = None

    def file(self, name: str) -> Path:
        return self.path / name

    def holds(self, name: str) -> bool:
        """Whether the run has written its file ``name``."""
        return (self.path / name).is_file()

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.json"

    @property
    def model_path(self) -> Path:
        return self.path / "model.npz"

    @property
    def checkpoint_path(self) -> Path:
        return self.path / "checkpoint.npz"

    @property
    def log_path(self) -> Path:
        return self.path / "log.jsonl"

    # ------------------------------------------------------------------
    # the rules: holding a run, overwriting, one process at a time
    # ------------------------------------------------------------------

    def run_files(self) -> list:
        """The run files present (names, in RUN_FILES order, then the predictions)."""
        if not self.path.is_dir():
            return []
        return (
            [name for name in RUN_FILES if (self.path / name).exists()]
            + sorted(path.name for path in self.path.glob(PREDICTION_FILES))
            + [COUNTS_FILE] * (self.path / COUNTS_FILE).exists()
        )

    def check_usable(self, overwrite: bool = False) -> None:
        """Refuse, before anything is read or written, a path that is not a
        directory, or a directory holding a run unless ``overwrite``."""
        if self.path.exists() and not self.path.is_dir():
            raise RunDirectoryError(f"{self.path} is a file, not a run directory")
        held = self.run_files()
        if held and not overwrite:
            raise RunDirectoryError(
                f"{self.path} already holds a run ({', '.join(held)}); nothing was changed. "
                f"A replaced run's files are kept in {self.path / REPLACED} until the new run "
                "has finished an epoch.",
                ways_on=("resume", "run_dir", "overwrite"),
                path=self.path,
            )

    def create(self) -> None:
        """Make the directory (and its parents) and take its lock."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise RunDirectoryError(
                f"{self.path}: a file stands in the way of the run directory (or of one of its parents)"
            ) from None
        except NotADirectoryError:
            raise RunDirectoryError(f"{self.path}: a parent of the run directory is a file, not a directory") from None
        self.lock()

    def lock(self) -> None:
        """Take the directory's exclusive lock, or refuse if another process holds it."""
        import fcntl

        handle = open(self.path / LOCK, "a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            handle.close()
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise RunDirectoryError(
                    f"{self.path}: another npcomp process is training in this run directory"
                ) from None
            raise
        self._lock_handle = handle

    def held_descriptors(self) -> tuple:
        """The file descriptors this run holds open (its lock's): a process
        forked from it closes them, or the lock would outlive the run."""
        return () if self._lock_handle is None else (self._lock_handle.fileno(),)

    def unlock(self) -> None:
        if self._lock_handle is not None:
            self._lock_handle.close()  # closing the file releases the flock
            self._lock_handle = None

    def set_aside(self) -> Path | None:
        """Move the run files present into a new ``replaced*/`` directory (an
        earlier one, left by a replacing run that failed before its first
        epoch, is kept); the directory used, or None when there was nothing."""
        held = self.run_files()
        if not held:
            return None
        aside, number = self.path / REPLACED, 1
        while aside.exists():
            aside, number = self.path / f"{REPLACED}.{number}", number + 1
        aside.mkdir()
        for name in held:
            os.replace(self.path / name, aside / name)
        _sync_directory(self.path)
        return aside

    def discard_replaced(self) -> None:
        """Delete the replaced runs: the new one has finished an epoch."""
        for aside in self.path.glob(REPLACED + "*"):
            if aside.is_dir():
                shutil.rmtree(aside, ignore_errors=True)

    def check_space(self, bytes_needed: int) -> None:
        """Refuse to start when the file system cannot hold the run's files
        (``bytes_needed``: the largest file, written beside its old version)."""
        existing = self.path
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent  # the directory may not be made yet
        free = shutil.disk_usage(existing).free
        if free < bytes_needed:
            raise RunDirectoryError(
                f"{self.path}: {free / 2**20:.1f} MiB free on its file system, but the run's "
                f"checkpoint needs about {bytes_needed / 2**20:.1f} MiB: free some space.",
                ways_on=("run_dir",),
                path=self.path,
            )

    # ------------------------------------------------------------------
    # writing: whole files or nothing
    # ------------------------------------------------------------------

    def write_json(self, name: str, record) -> None:
        self.write_text(name, json.dumps(record, indent=2) + "\n")

    def write_text(self, name: str, text: str) -> None:
        data = text.encode("utf-8")
        write_atomically(self.path / name, lambda handle: handle.write(data))

    def append_log(self, record) -> None:
        try:
            with open(self.log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as error:
            raise RunFileError(f"{self.log_path}: could not be written ({error.strerror or error})") from None

    def log_records(self) -> list:
        """The records of log.jsonl in order ([] without one); a line a kill
        cut short (the last, unfinished) is left out."""
        try:
            lines = self.log_path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        except OSError as error:
            raise RunFileError(f"{self.log_path}: could not be read ({error.strerror or error})") from None
        records = []
        for line in lines:
            try:
                records.append(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
        return records

    def write_jsonl(self, name: str, records) -> None:
        """``records`` one JSON object a line, written whole or not at all."""
        data = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records).encode()
        write_atomically(self.path / name, lambda handle: handle.write(data))

    def write_bytes(self, name: str, data: bytes) -> None:
        write_atomically(self.path / name, lambda handle: handle.write(data))

    def save_npz(self, name: str, **arrays) -> None:
        import numpy as np  # only for archives: the figures read run files without it

        write_atomically(self.path / name, lambda handle: np.savez(handle, **arrays))

    # ------------------------------------------------------------------
    # reading: named errors for missing and damaged files
    # ------------------------------------------------------------------

    def read_json(self, name: str):
        path = self.path / name
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise RunFileError(f"{path}: no such file") from None
        except UnicodeDecodeError as error:
            raise RunFileError(f"{path}: damaged run file (byte {error.start} is not UTF-8)") from None
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise RunFileError(
                f"{path}: damaged run file (line {error.lineno}, column {error.colno}: {error.msg})"
            ) from None

    def load_npz(self, name: str, required: tuple = ()) -> dict:
        """Every array of the archive ``name``, read into memory; ``required``
        keys must be present."""
        path = self.path / name
        if not path.is_file():
            raise RunFileError(f"{path}: no such file")
        try:
            import numpy as np

            with np.load(path, allow_pickle=False) as archive:
                arrays = {key: archive[key] for key in archive.files}
        except (zipfile.BadZipFile, EOFError, ValueError, OSError, KeyError, zipfile.LargeZipFile) as error:
            raise RunFileError(
                f"{path}: damaged run file, not a readable NumPy archive ({type(error).__name__}: {error})"
            ) from None
        missing = [key for key in required if key not in arrays]
        if missing:
            raise RunFileError(f"{path}: damaged run file, missing {', '.join(missing)}")
        return arrays


def write_atomically(path: Path, write) -> None:
    """``write(handle)`` into a temporary file, synced, then renamed over
    ``path``; when that fails (a full disk), RunFileError naming ``path``,
    whose previous version is left as it was."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        kept = "its previous version is kept" if path.exists() else "it was not written"
        raise RunFileError(f"{path}: could not be written ({error.strerror or error}); {kept}") from None
    _sync_directory(path.parent)


def _sync_directory(path: Path) -> None:
    """fsync a directory, so a rename in it survives a crash of the machine."""
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass  # some file systems do not sync directories
    finally:
        os.close(descriptor)
