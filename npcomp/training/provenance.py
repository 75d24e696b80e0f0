"""What made a run, as ``metrics.json`` records it under ``provenance``:

* ``code``: npcomp's version and, run from a git checkout, the commit of
  the checkout, the git object of its package tree at that commit (``tree``:
  ``git rev-parse HEAD:npcomp``, the same for every commit that leaves the
  code as it was, so the runs of one sweep committed as they finish, each
  commit moving HEAD, show as one code) and whether that tree was clean
  (``clean``: no change to a tracked file under ``npcomp/`` and no
  untracked module there); run from an installed wheel, ``commit``,
  ``tree`` and ``clean`` are None;
* ``data``: the SHA-256 of every file the run read while reading its data
  and its vectors, by path (relative to the data directory where the file is
  under it, else to the directory the run ran in, never absolute);
* ``parses``, for a run on dependency parses or their binary trees: the
  digest of the parse files read (a SHA-256 over their digests, in order of
  path) and, where the parses' directory holds ``parser.json`` (written by
  ``npcomp parse``), or its parent ``trees.json`` (SICK's layout as
  ``npcomp download sick-trees`` makes it), the parser and its model's
  versions;
* ``load``: the machine's load while the run trained (the 1-minute load
  average, sampled at every write of ``metrics.json``: mean and maximum, and
  the logical cores), without which a training time says little.

The files read are found by watching the interpreter's ``open`` audit
events (``sys.addaudithook``) on the thread that reads the data, while it
reads (``files_read``): exactly the files opened, none listed by hand.  A
resumed run keeps the record of its start and adds the code it was resumed
under when that differs (``resumed_under``).  Imports neither NumPy nor
the trainer.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

__all__ = ["PARSER_FILE", "code_revision", "files_read", "note_load", "record_provenance"]

# what `npcomp parse` writes beside the parses: the parser and its model's versions
PARSER_FILE = "parser.json"
# what `npcomp download sick-trees` writes above its splits' parses (sick/trees.json)
TREES_FILE = "trees.json"
# files opened while the data is read that are not data: code, compiled kernels
_NOT_DATA = (".py", ".pyc", ".so", ".pyd", ".nbi", ".nbc", ".pth")
# what the system shows as files (the machine's description reads /proc)
_SYSTEM = tuple(Path(name) for name in ("/proc", "/sys", "/dev"))
_watch = threading.local()
_hooked = False
_PACKAGE = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=1)
def code_revision() -> dict:
    """npcomp's version, and the checkout's commit, package tree and
    cleanliness when the package runs from a git checkout (None otherwise).  Read once
    per process: the code a process runs is the code it imported."""
    from npcomp.data.downloads.http_download import npcomp_version

    out = {"version": npcomp_version(), "commit": None, "tree": None, "clean": None}
    root = _PACKAGE.parent

    def git(*arguments) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *arguments], capture_output=True, text=True, timeout=30, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    # the package's own checkout, not a repository that merely holds an installed copy
    top = git("rev-parse", "--show-toplevel")
    if (
        top is None
        or Path(top).resolve() != root.resolve()
        or git("ls-files", "--error-unmatch", "npcomp/__init__.py") is None
    ):
        return out
    out["commit"] = git("rev-parse", "HEAD")
    out["tree"] = git("rev-parse", "HEAD:npcomp")
    status = git("status", "--porcelain", "--untracked-files=normal", "--", "npcomp")
    out["clean"] = None if status is None else status == ""
    return out


def _audit(event: str, arguments: tuple) -> None:
    files = getattr(_watch, "files", None)
    if files is None or event != "open" or not arguments:
        return
    path, mode = arguments[0], arguments[1] if len(arguments) > 1 else "r"
    flags = arguments[2] if len(arguments) > 2 and isinstance(arguments[2], int) else 0
    writes = set(mode) & set("wax+") if isinstance(mode, str) else flags & (os.O_WRONLY | os.O_RDWR)
    if isinstance(path, (str, bytes, os.PathLike)) and not writes:
        files.add(os.fsdecode(path))


@contextmanager
def files_read():
    """The set of files this thread opens for reading inside the block
    (code and compiled kernels left out), filled as they are opened."""
    global _hooked
    if not _hooked:
        sys.addaudithook(_audit)  # for the process's life; idle outside a block
        _hooked = True
    files = set()
    outer, _watch.files = getattr(_watch, "files", None), files
    try:
        yield files
    finally:
        _watch.files = outer


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _is_data(path: Path) -> bool:
    if (
        path.suffix in _NOT_DATA
        or not path.is_file()
        or any(part.endswith((".egg-info", ".dist-info")) for part in path.parts)
    ):
        return False  # code, compiled kernels, a package's metadata
    prefixes = {Path(prefix).resolve() for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return not any(path.is_relative_to(prefix) for prefix in (*prefixes, _PACKAGE, *_SYSTEM))


def _shown(path: Path, data_dir: Path) -> str:
    """A file as the record names it: relative to the data directory, else to
    the working directory (with ``..`` where it must), never absolute."""
    if path.is_relative_to(data_dir):
        return path.relative_to(data_dir).as_posix()
    return Path(os.path.relpath(path, Path.cwd().resolve())).as_posix()


def data_digests(paths, data_dir: str | Path) -> dict:
    """Path as recorded -> SHA-256, for the data files among ``paths``."""
    data_dir = Path(data_dir).resolve()
    found = sorted({Path(path).resolve() for path in paths})
    return {_shown(path, data_dir): _sha256(path) for path in found if _is_data(path)}


def parses_record(config: dict, paths, data_dir: str | Path) -> dict | None:
    """The parses a run on dependency parses (or their binary trees) read:
    their digest, the files, and the parser's record where the parses'
    directory holds one; None for any other run."""
    if config.get("structure") not in ("dependency", "parsed"):
        return None
    data_dir = Path(data_dir).resolve()
    parses = sorted(Path(path).resolve() for path in paths if Path(path).suffix in (".parents", ".rels", ".cparents"))
    parses = [path for path in parses if path.is_file()]
    digests = {_shown(path, data_dir): _sha256(path) for path in parses}
    combined = hashlib.sha256("".join(f"{name} {digest}\n" for name, digest in digests.items()).encode()).hexdigest()
    record = {"digest": combined if digests else None, "files": sorted(digests)}
    parser = {path.parent / PARSER_FILE for path in parses} | {path.parent.parent / TREES_FILE for path in parses}
    records = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(parser) if path.is_file()]
    records = [record for record in records if isinstance(record, dict) and "parser" in record]
    record["parser"] = records[0] if len(records) == 1 else (records or None)
    return record


def record_provenance(metrics: dict, config: dict, paths) -> dict:
    """``metrics["provenance"]`` (module docstring) for a run that read
    ``paths``; a resumed run's record (already there) keeps its start and
    notes the code it resumes under when that differs."""
    from npcomp.data.datasets.tasks import default_data_dir

    code = code_revision()
    old = metrics.get("provenance")
    if isinstance(old, dict) and old.get("code"):
        if old["code"] != code and code not in old.setdefault("resumed_under", []):
            old["resumed_under"].append(code)
        return old
    data_dir = config.get("data_dir") or default_data_dir()
    record = {"code": code, "data": data_digests(paths, data_dir)}
    parses = parses_record(config, paths, data_dir)
    if parses is not None:
        record["parses"] = parses
    metrics["provenance"] = record
    return record


def note_load(metrics: dict) -> None:
    """Add the machine's present 1-minute load average to the run's load
    record (mean, maximum, samples, logical cores); nothing where the
    system has no load average or the run has no provenance record."""
    record = metrics.get("provenance")
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):
        return
    if not isinstance(record, dict):
        return
    seen = record.setdefault("load", {"cores": os.cpu_count(), "samples": 0, "mean_1min": 0.0, "max_1min": 0.0})
    seen["samples"] += 1
    seen["mean_1min"] += (load - seen["mean_1min"]) / seen["samples"]
    seen["max_1min"] = max(seen["max_1min"], load)
