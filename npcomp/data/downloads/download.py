"""Download the benchmark data from the official sources (``npcomp download``).

:func:`fetch` downloads a data set's archives (``download_catalogue.DATASETS``),
checks what it takes out of them, and installs the files in the layout the
readers expect::

    DATA_DIR/sst/train.txt, dev.txt, test.txt                   (sst)
    DATA_DIR/sick/SICK_train.txt, SICK_trial.txt,
                  SICK_test_annotated.txt                       (sick)
    DATA_DIR/sick/{train,dev,test}/a.toks, ... (+ trees.json)   (sick-trees)
    DATA_DIR/vectors/glove.6B.50d.sst-sick.txt (+ .json)        (glove.6B)
    DATA_DIR/vectors/glove.840B.300d.sick.txt (+ .json)         (glove.840B)
    DATA_DIR/vectors/word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt (+ .json)
                                                                (word2vec)

Word vectors are kept, as they are unpacked, to the words of the data sets
their name gives (``vector_filter``): a user keeps megabytes, not
gigabytes.  ``full`` keeps every word instead (``glove.6B.50d.txt`` ...).
Each vector file has a JSON record beside it: where it came from (URL,
archive SHA-256, member), the filter (the data sets, the vocabulary's size
and SHA-256), the words read and kept, and the file's MD5.

Archives are downloaded into ``DATA_DIR/.downloads/`` (resumable: see
``http_download``), and deleted once installed.  Nothing half-done lands in
the data directory: members are unpacked into a temporary directory inside
``DATA_DIR``; only when every member of the archive has passed its check are
the files renamed into place.  A data set already installed and verified
is skipped unless ``force``.

Mirrors.  ``base_url`` (or the environment variable
``NPCOMP_DOWNLOAD_BASE_URL``) replaces everything before the archive's file
name: with ``base_url="http://127.0.0.1:8000/"`` SST is fetched from
``http://127.0.0.1:8000/trainDevTestTrees_PTB.zip``.  A directory of archives
downloaded by hand works too: ``file:///home/me/archives/``.  Without it,
an archive whose official address fails is tried at the mirrors its
publisher lists (GloVe's).

SICK: ``fetch("sick")`` gets the official tab-separated SemEval 2014 Task 1
files.  The Tree-LSTM layout (``train/a.toks``, ``a.parents``,
``a.cparents``, ``sim.txt`` ...) is not an official download (the Tree-LSTM
authors made theirs with the Stanford parsers): ``fetch("sick-trees")``
makes it from those files with spaCy (``sick_trees``), fetching nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from npcomp.data.downloads.catalogue import ALIASES, ALL, DATASETS, Archive, Dataset, Member, dataset
from npcomp.errors import DataError
from npcomp.data.downloads.http_download import (
    CHUNK,
    RETRIES,
    BrokenOff,
    DownloadError,
    download_file,
    npcomp_version,
    sha256_of,
)
from npcomp.data.downloads.vector_filter import MissingVocabulary, Vocabulary, data_vocabulary, filter_vectors

__all__ = [
    "ALIASES",
    "ALL",
    "BASE_URL_ENV",
    "DATASETS",
    "DownloadError",
    "MissingVocabulary",
    "archive_urls",
    "fetch",
    "fetch_all",
    "installed",
    "record_path",
]

BASE_URL_ENV = "NPCOMP_DOWNLOAD_BASE_URL"
DOWNLOADS = ".downloads"


def _say(message: str):
    print(message, file=sys.stderr)


def archive_urls(archive: Archive, base_url: str | None = None) -> list:
    """Where to fetch ``archive``, in order: the same file name under
    ``base_url`` (else ``$NPCOMP_DOWNLOAD_BASE_URL``) when set, else its
    official URL and then its publisher's mirrors."""
    base_url = base_url or os.environ.get(BASE_URL_ENV)
    if base_url:
        return [base_url.rstrip("/") + "/" + archive.file_name]
    return [archive.url, *archive.mirrors]


def archive_url(archive: Archive, base_url: str | None = None) -> str:
    """The first address of :func:`archive_urls`."""
    return archive_urls(archive, base_url)[0]


def record_path(target: Path) -> Path:
    """The JSON record beside a vector file: ``NAME.txt`` -> ``NAME.json``."""
    return target.with_suffix(".json")


def _members(archive: Archive, full: bool) -> list:
    return [member for member in archive.members if full or not member.full_only]


def _target(member: Member, data_dir: Path, full: bool) -> Path:
    if member.vectors is not None and full:
        return data_dir / member.vectors.full_target
    return data_dir / member.target


def installed(name: str, data_dir: str | Path) -> bool:
    """Whether data set ``name`` is in ``data_dir`` (its files present; the
    filtered or the full form of a vector file), without reading them."""
    data_dir = Path(data_dir)
    entry = dataset(name)
    if entry.makes:
        return all((data_dir / target).is_file() for target in entry.makes)
    return all(
        (data_dir / member.target).is_file()
        or (member.vectors is not None and (data_dir / member.vectors.full_target).is_file())
        for archive in entry.archives
        for member in _members(archive, False)
    )


def fetch_all(
    data_dir: str | Path,
    base_url: str | None = None,
    progress: bool = True,
    force: bool = False,
    full: bool = False,
    retries: int = RETRIES,
) -> list:
    """Every data set a report reads (``ALL``), in order; the installed paths."""
    paths = []
    for name in ALL:
        paths.extend(fetch(name, data_dir, base_url, progress, force, full, retries))
    return paths


def fetch(
    name: str,
    data_dir: str | Path,
    base_url: str | None = None,
    progress: bool = True,
    force: bool = False,
    full: bool = False,
    retries: int = RETRIES,
) -> list:
    """Download, check and install data set ``name``; returns the installed paths.

    full:    vector files with every word (``--full``), not only the data's
    retries: attempts after the first when a download breaks off

    Archives whose files are already present and verified are skipped unless
    ``force``.  Raises DownloadError on a network failure (naming the URL and
    how to install by hand) or a file that fails its check (naming the file,
    the expected and the actual checksum); then nothing is installed from
    that archive.  MissingVocabulary (a DataError) when a filtered vector
    file's data sets are not installed yet.
    """
    entry = dataset(name)
    data_dir = Path(data_dir)
    if entry.makes:  # made here, from data sets installed before it
        from .sick_trees import make_sick_trees

        return make_sick_trees(data_dir, force=force, progress=progress, say=_say)
    vocabulary = None
    if not full and any(member.vectors for archive in entry.archives for member in archive.members):
        vocabulary = data_vocabulary(data_dir, entry.needs)
    installed_paths = []
    for archive in entry.archives:
        members = _members(archive, full)
        targets = [_target(member, data_dir, full) for member in members]
        installed_paths.extend(targets)
        problems = {target: _problem(member, target, vocabulary) for member, target in zip(members, targets)}
        if not force and not any(problems.values()):
            _say(
                f"{entry.name}: {', '.join(str(t) for t in targets)} already present and "
                f"verified; skipping (--force to download again)"
            )
            continue
        for target, problem in problems.items():
            if problem not in (None, "missing"):
                _say(f"{entry.name}: {target} present but {problem}; downloading again")
        _install(entry, archive, members, data_dir, base_url, progress, full, vocabulary, retries)
    return installed_paths


def _problem(member: Member, path: Path, vocabulary: Vocabulary | None) -> str | None:
    """What is wrong with the installed file ``path`` holding ``member``, or None."""
    if not path.is_file():
        return "missing"
    if member.vectors is None:
        if member.md5 is not None:
            actual = _md5(path)
            if actual != member.md5:
                return f"md5 {actual}, expected {member.md5}"
        return None
    record_file = record_path(path)
    try:
        record = json.loads(record_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"without its record {record_file.name}"
    if vocabulary is not None and record.get("vocabulary", {}).get("sha256") != vocabulary.digest:
        return "made for other data (its vocabulary differs from the data's now)"
    actual = _md5(path)
    if actual != record.get("md5"):
        return f"md5 {actual}, its record says {record.get('md5')}"
    return None


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _install(
    entry: Dataset,
    archive: Archive,
    members: list,
    data_dir: Path,
    base_url: str | None,
    progress: bool,
    full: bool,
    vocabulary: Vocabulary | None,
    retries: int,
):
    data_dir.mkdir(parents=True, exist_ok=True)
    archive_file, url = _download(entry, archive, data_dir, base_url, progress, retries)
    # staged inside data_dir so the final renames stay on one file system
    staging = Path(tempfile.mkdtemp(prefix=".download-", dir=data_dir))
    try:
        try:
            staged = _extract(archive, members, archive_file, url, staging, progress, full, vocabulary)
        except DownloadError:
            archive_file.unlink(missing_ok=True)  # a bad archive is fetched afresh next time
            raise
        source = {"url": url, "archive": archive.file_name, "archive_sha256": sha256_of(archive_file)}
        for member, (staged_file, record) in zip(members, staged):
            target = _target(member, data_dir, full)
            target.parent.mkdir(parents=True, exist_ok=True)
            if record is not None:
                record = {"file": target.name, **source, **record}
                record_path(target).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
            os.replace(staged_file, target)
            _say(f"{entry.name}: installed {target}" + (f" ({record['words_kept']} words)" if record else ""))
        archive_file.unlink()
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _download(
    entry: Dataset, archive: Archive, data_dir: Path, base_url: str | None, progress: bool, retries: int
) -> tuple:
    """(the archive in DATA_DIR/.downloads, the URL it came from), trying
    each address in turn."""
    failures = []
    for url in archive_urls(archive, base_url):
        try:
            path = download_file(url, data_dir / DOWNLOADS, progress, archive.sha256, retries)
            return path, url
        except BrokenOff as error:  # resumable from here: no other address
            raise DownloadError(str(error)) from error
        except DownloadError as error:
            if "SHA-256" in str(error):
                raise
            failures.append(str(error))
    raise DownloadError(_by_hand(entry, archive, data_dir, "; ".join(failures)))


def _by_hand(entry: Dataset, archive: Archive, data_dir: Path, problem: str) -> str:
    files = ", ".join(member.target for member in archive.members if not member.full_only)
    return (
        f"{problem}\n"
        f"To install {entry.name} by hand: download {archive.url}, put it in "
        f"{data_dir / DOWNLOADS} and run the command again (or unpack it and put "
        f"{files} under a data directory, then pass --data-dir DIR or set "
        f"NPCOMP_DATA=DIR).  Or set {BASE_URL_ENV} to a mirror (http:// or file://) "
        f"that holds {archive.file_name}."
    )


def _extract(
    archive: Archive,
    members: list,
    archive_file: Path,
    url: str,
    staging: Path,
    progress: bool,
    full: bool,
    vocabulary: Vocabulary | None,
) -> list:
    """Extract and check every member into ``staging``: (staged path, record
    or None) in order."""
    try:
        zipped = zipfile.ZipFile(archive_file)
    except zipfile.BadZipFile:
        raise DownloadError(f"{url} did not give a zip archive (an error page or a broken download?)") from None
    staged = []
    with zipped:
        # every member must be there before any is extracted (GloVe's are GBs)
        entries = [_find_member(zipped.namelist(), member, url) for member in members]
        for number, (member, entry) in enumerate(zip(members, entries)):
            staged_file = staging / f"{number}-{PurePosixPath(member.target).name}"
            try:
                if member.vectors is None:
                    _copy_checked(zipped, entry, member, staged_file, url)
                    staged.append((staged_file, None))
                else:
                    staged.append(
                        (
                            staged_file,
                            _filter_member(zipped, entry, member, staged_file, url, progress, full, vocabulary),
                        )
                    )
            except (zipfile.BadZipFile, EOFError) as error:
                raise DownloadError(f"{url}: the archive is damaged ({error}); nothing was installed from it") from None
    return staged


def _copy_checked(zipped, entry: str, member: Member, staged_file: Path, url: str):
    digest = hashlib.md5(usedforsecurity=False)
    with zipped.open(entry) as source, open(staged_file, "wb") as out:
        while chunk := source.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
    if member.md5 is not None and digest.hexdigest() != member.md5:
        raise DownloadError(
            f"{member.target}: checksum mismatch: md5 {digest.hexdigest()}, expected "
            f"{member.md5} (extracted from {url}: a corrupt download or a changed "
            f"archive); nothing was installed from it"
        )


def _filter_member(
    zipped,
    entry: str,
    member: Member,
    staged_file: Path,
    url: str,
    progress: bool,
    full: bool,
    vocabulary: Vocabulary | None,
) -> dict:
    """Stream the vector member through the filter into ``staged_file``;
    its record.  Raises DownloadError on a member that fails a check."""
    rule = member.vectors
    keep = None if full else vocabulary.words.__contains__
    size = zipped.getinfo(entry).file_size
    digest = hashlib.md5(usedforsecurity=False) if member.md5 else None
    with (
        zipped.open(entry) as raw,
        open(staged_file, "wb") as out,
        tqdm(
            total=size,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            leave=False,
            desc=f"{'unpacking' if full else 'filtering'} {PurePosixPath(entry).name}",
            disable=not progress,
        ) as bar,
    ):
        source = _Digesting(raw, digest) if digest else raw
        try:
            result = filter_vectors(source, rule.fmt, member.dim, out, keep, f"{url}:{entry}", bar.update)
        except DataError as error:
            raise DownloadError(
                f"{member.target}: {error} (extracted from {url}); nothing was installed from it"
            ) from None
        if digest is not None:
            source.drain()
    if digest is not None and digest.hexdigest() != member.md5:
        raise DownloadError(
            f"{member.target}: checksum mismatch: the archive's {entry} has md5 "
            f"{digest.hexdigest()}, expected {member.md5}; nothing was installed from it"
        )
    record = {
        "member": entry,
        "member_md5": digest.hexdigest() if digest else None,
        "format": "GloVe text (word, then the values; no header)",
        "dim": member.dim,
        "words_read": result.read,
        "words_kept": result.kept,
        "md5": result.md5,
        "npcomp": npcomp_version(),
    }
    if full:
        record["filter"] = None
        return record
    record["filter"] = (
        "the entries whose word is a token of " + " or ".join(rule.vocabulary) + ", or the lowercase form of one"
    )
    record["vocabulary"] = {"datasets": vocabulary.sources, "words": len(vocabulary.words), "sha256": vocabulary.digest}
    _check_expected(member, result, vocabulary)
    return record


def _check_expected(member: Member, result, vocabulary: Vocabulary):
    """For a vocabulary whose outcome is known (the official releases'), the
    words kept and the installed file's MD5 must be the known ones."""
    rule = member.vectors
    words = rule.expected_words.get(vocabulary.digest)
    if words is not None and result.kept != words:
        raise DownloadError(
            f"{member.target}: {result.kept} words kept, but the official "
            f"SST and SICK vocabulary keeps {words}: a changed archive; "
            "nothing was installed from it"
        )
    md5 = rule.expected_md5.get(vocabulary.digest)
    if md5 is not None and result.md5 != md5:
        raise DownloadError(
            f"{member.target}: checksum mismatch: md5 {result.md5}, expected "
            f"{md5} (the file as npcomp installs it for the official "
            "vocabulary); nothing was installed from it"
        )


class _Digesting:
    """A binary stream that hashes what is read from it; ``drain`` reads the
    rest (the filter may stop before the end)."""

    def __init__(self, raw, digest):
        self.raw, self.digest = raw, digest

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.digest.update(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data = self.raw.readline(size)
        self.digest.update(data)
        return data

    def __iter__(self):
        return iter(self.readline, b"")

    def drain(self):
        while self.read(CHUNK):
            pass


def _find_member(names: list, member: Member, url: str) -> str:
    if member.archive_path in names:
        return member.archive_path
    file_name = PurePosixPath(member.archive_path).name
    candidates = [
        entry for entry in names if PurePosixPath(entry).name == file_name and not entry.startswith("__MACOSX/")
    ]
    if len(candidates) == 1:
        return candidates[0]
    raise DownloadError(
        f"{url}: the archive has no member {member.archive_path}"
        + (f" (several named {file_name}: {candidates})" if candidates else "")
    )
