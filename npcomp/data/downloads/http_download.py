"""One file over HTTP (or file://), resumable, with a progress bar.

:func:`download_file` writes to ``NAME.part`` in a directory of its own and
renames it to ``NAME`` when the server has sent every byte.  A download
that breaks off keeps its ``.part``; the next attempt (the same call's
retries, or the command run again) asks for the rest with an HTTP ``Range``
request and appends it, so a 2 GB archive broken off at 1.9 GB costs 0.1 GB
more, not 2.  A server that ignores the range (status 200) sends the whole
file again, which replaces the part.  Where the publisher gives a SHA-256,
the whole file is checked against it; a mismatch deletes it (the next
attempt starts afresh) and raises.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import urllib.error
import urllib.request
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from tqdm import tqdm

TIMEOUT_S = 60
CHUNK = 1 << 20
RETRIES = 3


def npcomp_version() -> str:
    """npcomp's version as installed (the package's metadata: the data layer
    imports nothing above it, the root package included)."""
    try:
        return version("npcomp")
    except PackageNotFoundError:  # a source tree on the path, not installed
        return "unknown"


class DownloadError(RuntimeError):
    """A download that failed or did not check out; the message says what to do."""


class BrokenOff(DownloadError):
    """The connection ended before the whole file came (the .part is kept)."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def download_file(
    url: str, directory: Path, progress: bool = True, sha256: str | None = None, retries: int = RETRIES
) -> Path:
    """``url`` fetched into ``directory`` under its own file name.

    progress: show a tqdm bar of the bytes (the resumed part counted as done)
    sha256:   the publisher's digest of the file, checked when complete
    retries:  attempts after the first when the connection breaks off, each
              resuming where the last ended

    Returns the complete file.  Raises DownloadError (the URL and the
    reason) when the server cannot be reached or answers with an error,
    BrokenOff when every attempt broke off (the part is kept: run again to
    resume), DownloadError when the digest differs (the file is deleted).
    """
    directory.mkdir(parents=True, exist_ok=True)
    file_name = url.rsplit("/", 1)[1]
    done = directory / file_name
    part = directory / (file_name + ".part")
    if not done.is_file():
        for attempt in range(retries + 1):
            try:
                _fetch(url, part, progress)
                break
            except BrokenOff:
                if attempt == retries:
                    raise
        part.rename(done)
    if sha256 is not None:
        actual = sha256_of(done)
        if actual != sha256:
            done.unlink()
            raise DownloadError(
                f"{url}: SHA-256 {actual}, expected {sha256} (a corrupt "
                "download or a changed file); it was deleted and nothing "
                "was installed from it"
            )
    return done


def _fetch(url: str, part: Path, progress: bool) -> None:
    """Fetch ``url`` into ``part``, from its current size on."""
    have = part.stat().st_size if part.is_file() else 0
    headers = {"User-Agent": f"npcomp/{npcomp_version()}"}
    if have:
        headers["Range"] = f"bytes={have}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # the part is longer than the file: start afresh
            part.unlink()
            return _fetch(url, part, progress)
        raise DownloadError(f"could not download {url}: {error}") from error
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as error:
        reason = getattr(error, "reason", error)
        raise DownloadError(f"could not download {url}: {reason}") from error
    with response:
        start = _resumed_from(response, have, url)
        length = response.headers.get("Content-Length")
        total = start + int(length) if length else None
        received = start
        with (
            open(part, "r+b" if start else "wb") as out,
            tqdm(
                total=total,
                initial=start,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                desc=part.name[: -len(".part")],
                disable=not progress,
                leave=False,
            ) as bar,
        ):
            out.seek(start)
            out.truncate()
            try:
                while chunk := response.read(CHUNK):
                    out.write(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            except (http.client.IncompleteRead, ConnectionError, TimeoutError) as error:
                raise BrokenOff(_broken(url, received, total, part, error)) from error
    if total is not None and received != total:
        raise BrokenOff(_broken(url, received, total, part, "the connection closed"))


def _resumed_from(response, have: int, url: str) -> int:
    """Where the response's bytes go in the part: ``have`` for a 206 that
    starts there, 0 for a whole file."""
    status = getattr(response, "status", None)
    if status != 206:
        return 0
    match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    if not match or int(match.group(1)) != have:
        raise DownloadError(
            f"{url}: asked for the bytes from {have} on, the server sent {response.headers.get('Content-Range')!r}"
        )
    return have


def _broken(url: str, received: int, total: int | None, part: Path, reason) -> str:
    of = f" of {total}" if total is not None else ""
    return (
        f"the download of {url} broke off after {received}{of} bytes ({reason}); "
        f"the part is kept in {part}: run the command again to resume it"
    )
