"""Paths as a run's files record them: relative, so a run directory means
the same on any machine and in any clone of a repository that keeps it.

``metrics.json`` and ``log.jsonl`` record a run's config with its paths
written as the command line takes them, never absolute:

* a vector file in ``DATA_DIR/vectors`` by its file name (``--vectors NAME``
  looks it up there);
* any other path (the data directory itself, parses, a vector file
  elsewhere) relative to the directory the run ran in, as the commands of
  the documentation give them (``../shared/data``).

The in-memory config keeps the paths the run read.  ``model.npz`` and
``checkpoint.npz`` keep them too, which ``npcomp eval``, ``predict`` and
``--resume`` need on the machine that trained it, but a user's files
(``--train``, ``--dev``, ``--test``) relative to the run directory
(``stored_files``), so that they are found again from any working
directory (``found_files``); ``FILES_FROM`` marks an archive written so.  ``settle_run`` rewrites the config of a run
written before this rule (absolute paths) with the paths its sweep planned.
Imports neither NumPy nor the trainer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# the config keys that hold paths
PATH_KEYS = ("data_dir", "vectors", "parses_dir")
# the config keys of a user's files (--train, --dev, --test): what a run
# trains on, recorded relative like the data directory
FILE_KEYS = ("train", "dev", "test")
# the archive entry that says a config's files are relative to the run directory
# (an archive without it, written before, holds them as they were given)
FILES_FROM = "files_from"


def _relative(path: str, start: Path) -> str:
    """``path`` (absolute) relative to ``start``, with forward slashes."""
    return Path(os.path.relpath(path, start)).as_posix()


def recorded_config(config: dict, cwd: str | Path | None = None) -> dict:
    """``config`` with its paths as the run's files record them (module
    docstring); ``cwd``: the directory the run ran in (default this
    process's)."""
    from npcomp.data.datasets.tasks import default_data_dir

    cwd = Path(cwd if cwd is not None else Path.cwd()).resolve()
    out = dict(config)
    data_dir = config.get("data_dir")
    data = Path(data_dir if data_dir is not None else default_data_dir()).resolve()
    if isinstance(data_dir, str) and Path(data_dir).is_absolute():
        out["data_dir"] = _relative(data_dir, cwd)
    vectors = config.get("vectors")
    if isinstance(vectors, str) and Path(vectors).is_absolute():
        out["vectors"] = Path(vectors).name if Path(vectors).parent == data / "vectors" else _relative(vectors, cwd)
    for key in ("parses_dir", *FILE_KEYS):
        path = config.get(key)
        if isinstance(path, str) and Path(path).is_absolute():
            out[key] = _relative(path, cwd)
    return out


def stored_files(config: dict, run_dir: str | Path) -> dict:
    """``config`` as ``model.npz`` and ``checkpoint.npz`` keep it: a user's
    files relative to the run directory ``run_dir`` (a relative path being
    relative to this process's working directory, where it was given)."""
    run_dir = Path(run_dir).resolve()
    out = dict(config)
    for key in FILE_KEYS:
        if isinstance(config.get(key), str):
            out[key] = _relative(Path(config[key]).resolve(), run_dir)
    return out


def found_files(config: dict, run_dir: str | Path) -> dict:
    """A config read from an archive that ``stored_files`` wrote, its user's
    files found again: absolute, from the run directory ``run_dir``."""
    run_dir = Path(run_dir).resolve()
    out = dict(config)
    for key in FILE_KEYS:
        if isinstance(config.get(key), str):
            out[key] = str((run_dir / config[key]).resolve())
    return out


def recorded_data(record: dict, cwd: str | Path | None = None) -> dict:
    """A run's record of a user's files (``metrics.json``'s ``data``) with
    each file's path relative to ``cwd``, as its config records them."""
    cwd = Path(cwd if cwd is not None else Path.cwd()).resolve()
    files = {
        role: dict(file, path=_relative(file["path"], cwd) if Path(file["path"]).is_absolute() else file["path"])
        for role, file in record.get("files", {}).items()
    }
    return dict(record, files=files)


def relative_where(options: dict, cwd: str | Path | None = None) -> dict:
    """Sweep options with where their runs read the data and the parses
    (``data_dir``, ``parses_dir``) and a user's files relative to ``cwd``
    when given absolute: plan.json's form, which a sweep planned anew
    compares without the data and the parses."""
    cwd = Path(cwd if cwd is not None else Path.cwd()).resolve()
    return {
        key: (
            _relative(value, cwd)
            if key in ("data_dir", "parses_dir", *FILE_KEYS) and isinstance(value, str) and Path(value).is_absolute()
            else value
        )
        for key, value in options.items()
    }


def recorded_metrics(metrics: dict, cwd: str | Path | None = None) -> dict:
    """A metrics record with its config's paths recorded (``recorded_config``),
    and those of its record of a user's files (``recorded_data``)."""
    if not isinstance(metrics.get("config"), dict):
        return metrics
    recorded = dict(metrics, config=recorded_config(metrics["config"], cwd))
    if isinstance(metrics.get("data"), dict):
        recorded["data"] = recorded_data(metrics["data"], cwd)
    return recorded


def absolute_values(record) -> list:
    """Every string in a JSON record (nested) that is an absolute path."""
    if isinstance(record, dict):
        return [found for value in record.values() for found in absolute_values(value)]
    if isinstance(record, list):
        return [found for value in record for found in absolute_values(value)]
    if isinstance(record, str) and (record.startswith("/") or record[1:3] in (":\\", ":/")):
        return [record]
    return []


def settle_run(run_dir: str | Path, planned: dict) -> bool:
    """Rewrite the config of a finished run's ``metrics.json`` and
    ``log.jsonl`` whose paths are absolute (written before they were
    recorded relative) with the paths its sweep planned (``planned``: the
    run's options in plan.json, as given on the command line); True when a
    file was rewritten.  Only path values change."""
    from npcomp.runfiles.rundir import RunDirectory

    directory = RunDirectory(run_dir)
    changed = False
    metrics = directory.read_json("metrics.json")
    settled = _settled_config(metrics.get("config") or {}, planned)
    if settled != metrics.get("config"):
        directory.write_json("metrics.json", dict(metrics, config=settled))
        changed = True
    if directory.log_path.is_file():
        lines = directory.log_path.read_text(encoding="utf-8").splitlines()
        out = []
        for line in lines:
            record = json.loads(line) if line.strip() else None
            if isinstance(record, dict) and isinstance(record.get("config"), dict):
                config = _settled_config(record["config"], planned)
                if config != record["config"]:
                    line = json.dumps(dict(record, config=config))
            out.append(line)
        if out != lines:
            directory.write_text("log.jsonl", "".join(line + "\n" for line in out))
            changed = True
    return changed


def _settled_config(config: dict, planned: dict) -> dict:
    """``config`` with each absolute path replaced by the planned value
    (a vector file by its name when the plan gave none)."""
    out = dict(config)
    for key in PATH_KEYS:
        value = config.get(key)
        if not (isinstance(value, str) and Path(value).is_absolute()):
            continue
        given = planned.get(key)
        if isinstance(given, str) and not Path(given).is_absolute():
            out[key] = given
        elif key == "vectors":
            out[key] = Path(value).name
        else:
            out[key] = None  # where it ran, not what it trained: not recorded
    return out
