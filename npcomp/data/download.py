"""Download the benchmark data from the official sources (``npcomp download``).

:func:`fetch` downloads a dataset's archives, checks what it extracts, and
installs the files in the layout the loaders read::

    DATA_DIR/sst/train.txt, dev.txt, test.txt          (sst)
    DATA_DIR/sick/SICK_train.txt, SICK_trial.txt,
                  SICK_test_annotated.txt              (sick)
    DATA_DIR/vectors/glove.840B.300d.txt               (glove)
    DATA_DIR/vectors/glove.6B.{50,100,200,300}d.txt    (glove.6B)

Checksums.  The publishers give none for their archives, and archives can be
re-packed without changing their content, so what is checked is the MD5 of
each extracted file: for SST and SICK these are the MD5s of the original
release files.  GloVe publishes no checksum at all; its files are checked for
structure instead (the expected member exists and its first line is a word
and the right number of numbers).

Nothing half-done lands in the data directory: archives are downloaded to a
``.part`` file, renamed when complete, and extracted into a temporary
directory inside ``DATA_DIR``; only when every file of the archive has passed
its check are the files renamed into place.  A dataset already installed and
verified is skipped unless ``force``.

Mirrors.  ``base_url`` (or the environment variable
``NPCOMP_DOWNLOAD_BASE_URL``) replaces everything before the archive's file
name: with ``base_url="http://127.0.0.1:8000/"`` SST is fetched from
``http://127.0.0.1:8000/trainDevTestTrees_PTB.zip``.  A directory of archives
downloaded by hand works too: ``file:///home/me/archives/``.

SICK: ``fetch("sick")`` gets the official tab-separated SemEval 2014 Task 1
files only.  The Tree-LSTM layout (``train/a.toks``, ``a.parents``,
``a.cparents``, ``sim.txt`` ...) is not an official download: its trees come
from running the Stanford dependency and constituency parsers over those
sentences (the Tree-LSTM authors' preprocessing scripts), which this module
does not do.
"""
from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from npcomp import __version__

BASE_URL_ENV = "NPCOMP_DOWNLOAD_BASE_URL"
TIMEOUT_S = 60
_CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """A download that failed or did not check out; the message says what to do."""


@dataclass(frozen=True)
class Member:
    """One file taken out of an archive.

    archive_path: its path inside the archive (if absent, a unique member
                  with the same file name is taken: re-packed archives move
                  files between folders)
    target:       where it goes, relative to the data directory
    md5:          MD5 of the file's bytes, or None where no checksum is known
    dim:          for vector files: the dimension the first line must have
    """

    archive_path: str
    target: str
    md5: str | None = None
    dim: int | None = None


@dataclass(frozen=True)
class Archive:
    url: str       # the official address
    members: tuple


@dataclass(frozen=True)
class Dataset:
    description: str
    archives: tuple
    checksums: str  # where the expected checksums come from


DATASETS = {
    "sst": Dataset(
        description="Stanford Sentiment Treebank (Socher et al. 2013), PTB trees",
        archives=(
            Archive("https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip", (
                Member("trees/train.txt", "sst/train.txt", "b12d531b1b913a3bb49719ba5cc1f67a"),
                Member("trees/dev.txt", "sst/dev.txt", "c405f1d724964e6f72314b5a51fea691"),
                Member("trees/test.txt", "sst/test.txt", "97b75f6ca1ae58b4d52fbf9381dc6f8c"),
            )),
        ),
        checksums="MD5s of the standard train/dev/test files (8544 / 1101 / 2210 trees)",
    ),
    "sick": Dataset(
        description="SICK (Marelli et al. 2014), SemEval 2014 Task 1; licence CC BY-NC-SA 3.0",
        archives=(
            Archive("https://alt.qcri.org/semeval2014/task1/data/uploads/sick_train.zip", (
                Member("SICK_train.txt", "sick/SICK_train.txt",
                       "ec1fc28adb70bdb88e94b80390ef49ce"),
            )),
            Archive("https://alt.qcri.org/semeval2014/task1/data/uploads/sick_trial.zip", (
                Member("SICK_trial.txt", "sick/SICK_trial.txt",
                       "ec3c4b09a703e3e2ab6b003e06e19392"),
            )),
            Archive("https://alt.qcri.org/semeval2014/task1/data/uploads/"
                    "sick_test_annotated.zip", (
                Member("SICK_test_annotated.txt", "sick/SICK_test_annotated.txt",
                       "96b31f9b6df521dda0087502a262d8fd"),
            )),
        ),
        checksums="MD5s of the original release files (4500 / 500 / 4927 pairs)",
    ),
    "glove": Dataset(
        description="GloVe 840B Common Crawl, 300d, cased (the Tree-LSTM paper's vectors)",
        archives=(
            Archive("https://nlp.stanford.edu/data/glove.840B.300d.zip", (
                Member("glove.840B.300d.txt", "vectors/glove.840B.300d.txt", dim=300),
            )),
        ),
        checksums="none published: structure checked (member present, first line 300d)",
    ),
    "glove.6B": Dataset(
        description="GloVe 6B (Wikipedia + Gigaword), lowercase, 50/100/200/300d",
        archives=(
            Archive("https://nlp.stanford.edu/data/glove.6B.zip", tuple(
                Member(f"glove.6B.{dim}d.txt", f"vectors/glove.6B.{dim}d.txt", dim=dim)
                for dim in (50, 100, 200, 300)
            )),
        ),
        checksums="none published: structure checked (members present, first lines' dims)",
    ),
}


def _say(message: str):
    print(message, file=sys.stderr)


def _dataset(name: str) -> Dataset:
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(DATASETS)}")
    return DATASETS[name]


def archive_url(archive: Archive, base_url: str | None = None) -> str:
    """Where to fetch ``archive``: its official URL, or the same file name under
    ``base_url``, else under ``$NPCOMP_DOWNLOAD_BASE_URL`` when set."""
    base_url = base_url or os.environ.get(BASE_URL_ENV)
    if not base_url:
        return archive.url
    return base_url.rstrip("/") + "/" + archive.url.rsplit("/", 1)[1]


def _file_problem(member: Member, path: Path) -> str | None:
    """What is wrong with the file ``path`` holding ``member``, or None."""
    if not path.is_file():
        return "missing"
    if member.md5 is not None:
        digest = hashlib.md5(usedforsecurity=False)
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        if digest.hexdigest() != member.md5:
            return f"md5 {digest.hexdigest()}, expected {member.md5}"
    if member.dim is not None:
        return _vector_head_problem(path, member.dim)
    return None


def _vector_head_problem(path: Path, dim: int) -> str | None:
    """Check the first line is a word and ``dim`` numbers (GloVe text)."""
    with open(path, "rb") as handle:
        first = handle.readline(_CHUNK)
    try:
        fields = first.decode("utf-8").split()
    except UnicodeDecodeError:
        return "the first line is not UTF-8 text"
    if len(fields) != dim + 1:
        return f"the first line has {len(fields) - 1} values after the word, expected {dim}"
    for value in fields[1:]:
        try:
            float(value)
        except ValueError:
            return f"the first line has {value!r} where a number should be"
    return None


def fetch(name: str, data_dir: str | Path, base_url: str | None = None,
          progress: bool = True, force: bool = False) -> list:
    """Download, check and install dataset ``name``; returns the installed paths.

    Archives whose files are already present and verified are skipped unless
    ``force``.  Raises :class:`DownloadError` on a network failure (naming the
    URL and how to install by hand) or a file that fails its check (naming the
    file, the expected and the actual checksum); then nothing is installed
    from that archive.
    """
    dataset = _dataset(name)
    data_dir = Path(data_dir)
    installed = []
    for archive in dataset.archives:
        targets = [data_dir / member.target for member in archive.members]
        installed.extend(targets)
        problems = {target: _file_problem(member, target)
                    for member, target in zip(archive.members, targets)}
        if not force and not any(problems.values()):
            _say(f"{name}: {', '.join(str(t) for t in targets)} already present and "
                 f"verified; skipping (force to download again)")
            continue
        for target, problem in problems.items():
            if problem not in (None, "missing"):
                _say(f"{name}: {target} present but {problem}; downloading again")
        _install(name, archive, data_dir, archive_url(archive, base_url), progress)
    return installed


def _install(name: str, archive: Archive, data_dir: Path, url: str, progress: bool):
    data_dir.mkdir(parents=True, exist_ok=True)
    # staged inside data_dir so the final renames stay on one file system
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=data_dir))
    try:
        archive_file = _download(name, archive, data_dir, url, staging, progress)
        staged = _extract(archive, archive_file, url, staging)
        for member, staged_file in zip(archive.members, staged):
            target = data_dir / member.target
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged_file, target)
            _say(f"{name}: installed {target}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _download(name: str, archive: Archive, data_dir: Path, url: str, staging: Path,
              progress: bool) -> Path:
    """Fetch ``url`` into ``staging``: to a ``.part`` file, renamed when complete."""
    file_name = url.rsplit("/", 1)[1]
    part = staging / (file_name + ".part")
    request = urllib.request.Request(url, headers={"User-Agent": f"npcomp/{__version__}"})
    received = 0
    expected = None
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response, \
                open(part, "wb") as out:
            length = response.headers.get("Content-Length")
            expected = int(length) if length else None
            with tqdm(total=expected, unit="B", unit_scale=True, unit_divisor=1024,
                      desc=file_name, disable=not progress) as bar:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError,
            TimeoutError) as error:
        # URLError wraps the socket error; HTTPError reads best as itself
        reason = error if isinstance(error, urllib.error.HTTPError) else getattr(
            error, "reason", error)
        raise DownloadError(_by_hand(name, archive, data_dir,
                                     f"could not download {url}: {reason}")) from error
    if expected is not None and received != expected:
        raise DownloadError(_by_hand(name, archive, data_dir,
                                     f"the download of {url} broke off after {received} "
                                     f"of {expected} bytes"))
    archive_file = staging / file_name
    part.rename(archive_file)
    return archive_file


def _by_hand(name: str, archive: Archive, data_dir: Path, problem: str) -> str:
    files = ", ".join(member.target for member in archive.members)
    file_name = archive.url.rsplit("/", 1)[1]
    return (f"{problem}\n"
            f"To install {name} by hand: download {archive.url}, unpack it and put "
            f"{files} under a data directory, then pass --data-dir DIR (or set "
            f"NPCOMP_DATA=DIR); this download used {data_dir}.  Or set {BASE_URL_ENV} "
            f"to a mirror (http:// or file://) that holds {file_name}.")


def _extract(archive: Archive, archive_file: Path, url: str, staging: Path) -> list:
    """Extract and check every member into ``staging``; the staged paths, in order."""
    try:
        zipped = zipfile.ZipFile(archive_file)
    except zipfile.BadZipFile:
        raise DownloadError(f"{url} did not give a zip archive "
                            f"(an error page or a broken download?)") from None
    staged = []
    with zipped:
        # every member must be there before any is extracted (GloVe's are GBs)
        entries = [_find_member(zipped.namelist(), member, url) for member in archive.members]
        for number, (member, entry) in enumerate(zip(archive.members, entries)):
            staged_file = staging / f"{number}-{PurePosixPath(member.target).name}"
            digest = hashlib.md5(usedforsecurity=False)
            try:
                with zipped.open(entry) as source, open(staged_file, "wb") as out:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            except (zipfile.BadZipFile, EOFError) as error:
                raise DownloadError(f"{url}: the archive is damaged ({error}); "
                                    f"nothing was installed from it") from None
            if member.md5 is not None and digest.hexdigest() != member.md5:
                raise DownloadError(
                    f"{member.target}: checksum mismatch: md5 {digest.hexdigest()}, expected "
                    f"{member.md5} (extracted from {url}: a corrupt download or a changed "
                    f"archive); nothing was installed from it")
            if member.dim is not None:
                problem = _vector_head_problem(staged_file, member.dim)
                if problem:
                    raise DownloadError(f"{member.target}: {problem} (extracted from {url}); "
                                        f"nothing was installed from it")
            staged.append(staged_file)
    return staged


def _find_member(names: list, member: Member, url: str) -> str:
    if member.archive_path in names:
        return member.archive_path
    file_name = PurePosixPath(member.archive_path).name
    candidates = [entry for entry in names
                  if PurePosixPath(entry).name == file_name and not entry.startswith("__MACOSX/")]
    if len(candidates) == 1:
        return candidates[0]
    raise DownloadError(f"{url}: the archive has no member {member.archive_path}"
                        + (f" (several named {file_name}: {candidates})" if candidates else ""))
