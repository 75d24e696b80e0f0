"""A run kept in memory: the run directory's interface with no directory.

``trainer.train(config, run_dir=None)`` trains into a ``RunInMemory``: the
same loop writes the same files, but each "file" is kept in a dictionary
instead of on disk, so nothing is written anywhere.  What a run directory
holds, a run in memory holds too: ``model.npz`` (the best-dev parameters,
config and vocabulary), ``checkpoint.npz`` (the parameters, optimiser state
and random state of the latest dev evaluation, from which a run resumes),
``metrics.json``, the predictions and the log records.  An estimator keeps
its run so (``npcomp.estimators``), ``load_model(run)`` reads its best
model, and ``train(config, run, resume=True, data=...)`` continues it.

Archives are copied when saved and when loaded, as files would be: the
training loop goes on changing the arrays it saved.
"""

from __future__ import annotations

import json

import numpy as np

from npcomp.runfiles.rundir import RUN_FILES, RunDirectory, RunFileError


class RunInMemory(RunDirectory):
    """A run directory whose files live in ``files`` (name -> text, records
    or an archive's arrays) and whose log lives in ``log`` (records)."""

    on_disk = False

    def __init__(self):
        super().__init__("(run in memory)")  # the path only names it in messages
        self.files: dict = {}
        self.log: list = []

    def holds(self, name: str) -> bool:
        return name in self.files

    def run_files(self) -> list:
        return [name for name in RUN_FILES if name in self.files] + sorted(
            name for name in self.files if name not in RUN_FILES
        )

    # nothing on disk: nothing to refuse, make, lock, set aside or find room for
    def check_usable(self, overwrite: bool = False) -> None:
        return None

    def create(self) -> None:
        return None

    def lock(self) -> None:
        return None

    def unlock(self) -> None:
        return None

    def set_aside(self):
        return None

    def discard_replaced(self) -> None:
        return None

    def check_space(self, bytes_needed: int) -> None:
        return None

    def write_text(self, name: str, text: str) -> None:
        self.files[name] = text

    def write_bytes(self, name: str, data: bytes) -> None:
        self.files[name] = bytes(data)

    def write_jsonl(self, name: str, records) -> None:
        self.files[name] = [json.loads(json.dumps(record)) for record in records]

    def save_npz(self, name: str, **arrays) -> None:
        self.files[name] = {key: np.array(value, copy=True) for key, value in arrays.items()}

    def append_log(self, record) -> None:
        self.log.append(json.loads(json.dumps(record)))  # as a file would hold it

    def log_records(self) -> list:
        return list(self.log)

    def read_json(self, name: str):
        if name not in self.files:
            raise RunFileError(f"{self.file(name)}: no such file")
        return json.loads(self.files[name])

    def load_npz(self, name: str, required: tuple = ()) -> dict:
        if name not in self.files:
            raise RunFileError(f"{self.file(name)}: no such file")
        arrays = {key: np.array(value, copy=True) for key, value in self.files[name].items()}
        missing = [key for key in required if key not in arrays]
        if missing:
            raise RunFileError(f"{self.file(name)}: damaged run file, missing {', '.join(missing)}")
        return arrays
