"""npcomp.data.download against archives served from 127.0.0.1 (never the internet)."""
import dataclasses
import functools
import hashlib
import http.server
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from npcomp.data import download
from npcomp.data.download import DATASETS, DownloadError, archive_url, fetch
from npcomp.data.ptb import read_ptb_file


SST_FILES = {
    "trees/train.txt": b"(3 (2 It) (4 (2 's) (4 good)))\n(1 (2 It) (0 bad))\n",
    "trees/dev.txt": b"(4 (3 very) (4 good))\n",
    "trees/test.txt": b"(0 (1 not) (1 good))\n",
}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path):
    """(directory served, its base URL) on 127.0.0.1, stopped after the test."""
    root = tmp_path / "served"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}/"
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
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def expect_checksums(monkeypatch, name: str, contents: dict):
    """Make dataset ``name`` expect the MD5s of ``contents`` ({target: bytes})."""
    dataset = DATASETS[name]
    archives = tuple(
        dataclasses.replace(archive, members=tuple(
            dataclasses.replace(member, md5=md5(contents[member.target]))
            for member in archive.members))
        for archive in dataset.archives)
    monkeypatch.setitem(DATASETS, name, dataclasses.replace(dataset, archives=archives))


def serve_sst(monkeypatch, root: Path, files=SST_FILES):
    make_zip(root / "trainDevTestTrees_PTB.zip", files)
    expect_checksums(monkeypatch, "sst", {
        f"sst/{Path(name).name}": data for name, data in SST_FILES.items()})


def leftovers(data_dir: Path) -> list:
    return sorted(path.name for path in data_dir.glob(".download-*"))


def test_archive_url(monkeypatch):
    archive = DATASETS["sst"].archives[0]
    monkeypatch.delenv(download.BASE_URL_ENV, raising=False)
    assert archive_url(archive) == "https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip"
    assert archive_url(archive, "http://127.0.0.1:8000") == \
        "http://127.0.0.1:8000/trainDevTestTrees_PTB.zip"
    monkeypatch.setenv(download.BASE_URL_ENV, "file:///mirror/")
    assert archive_url(archive) == "file:///mirror/trainDevTestTrees_PTB.zip"


def test_every_dataset_has_official_urls_and_checks():
    assert set(DATASETS) >= {"sst", "sick", "glove"}
    for dataset in DATASETS.values():
        for archive in dataset.archives:
            assert archive.url.startswith("https://") and archive.url.endswith(".zip")
            for member in archive.members:
                # every file gets a checksum or, for vectors, a structure check
                assert member.md5 is not None or member.dim is not None


def test_fetch_sst_installs_the_loader_layout(tmp_path, server, monkeypatch, capsys):
    root, base_url = server
    serve_sst(monkeypatch, root)
    data_dir = tmp_path / "data"
    paths = fetch("sst", data_dir, base_url=base_url)
    assert paths == [data_dir / "sst" / f"{split}.txt" for split in ("train", "dev", "test")]
    for path in paths:
        assert path.read_bytes() == SST_FILES[f"trees/{path.name}"]
    assert len(read_ptb_file(data_dir / "sst" / "train.txt")) == 2
    assert sorted(path.name for path in data_dir.iterdir()) == ["sst"]
    assert sorted(path.name for path in (data_dir / "sst").iterdir()) == \
        ["dev.txt", "test.txt", "train.txt"]
    assert "installed" in capsys.readouterr().err
    fetch("sst", data_dir, base_url="file:///nowhere/", progress=False)   # nothing fetched
    assert "already present and verified" in capsys.readouterr().err


def test_fetch_skips_what_is_installed(tmp_path, server, monkeypatch, capsys,
                                       closed_port_url):
    root, base_url = server
    serve_sst(monkeypatch, root)
    data_dir = tmp_path / "data"
    fetch("sst", data_dir, base_url=base_url, progress=False)
    capsys.readouterr()
    # no network needed the second time
    paths = fetch("sst", data_dir, base_url=closed_port_url, progress=False)
    assert len(paths) == 3 and "skipping" in capsys.readouterr().err
    # a damaged file is downloaded again; force downloads regardless
    (data_dir / "sst" / "dev.txt").write_bytes(b"(2 edited)\n")
    fetch("sst", data_dir, base_url=base_url, progress=False)
    assert "present but md5" in capsys.readouterr().err
    assert (data_dir / "sst" / "dev.txt").read_bytes() == SST_FILES["trees/dev.txt"]
    (root / "trainDevTestTrees_PTB.zip").unlink()
    with pytest.raises(DownloadError, match="404"):
        fetch("sst", data_dir, base_url=base_url, progress=False, force=True)


def test_checksum_mismatch_installs_nothing(tmp_path, server, monkeypatch):
    root, base_url = server
    corrupt = dict(SST_FILES, **{"trees/test.txt": b"(0 (1 not) (1 goad))\n"})
    serve_sst(monkeypatch, root, corrupt)
    data_dir = tmp_path / "data"
    with pytest.raises(DownloadError) as caught:
        fetch("sst", data_dir, base_url=base_url, progress=False)
    message = str(caught.value)
    assert "sst/test.txt" in message
    assert md5(SST_FILES["trees/test.txt"]) in message      # expected
    assert md5(corrupt["trees/test.txt"]) in message        # actual
    assert list(data_dir.iterdir()) == []


def test_checksum_mismatch_keeps_the_installed_files(tmp_path, server, monkeypatch):
    root, base_url = server
    serve_sst(monkeypatch, root)
    data_dir = tmp_path / "data"
    fetch("sst", data_dir, base_url=base_url, progress=False)
    serve_sst(monkeypatch, root, dict(SST_FILES, **{"trees/train.txt": b"(2 changed)\n"}))
    with pytest.raises(DownloadError, match="sst/train.txt: checksum mismatch"):
        fetch("sst", data_dir, base_url=base_url, progress=False, force=True)
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


def test_not_a_zip(tmp_path, server, monkeypatch):
    root, base_url = server
    (root / "trainDevTestTrees_PTB.zip").write_bytes(b"<html>moved</html>")
    with pytest.raises(DownloadError, match="did not give a zip archive"):
        fetch("sst", tmp_path / "data", base_url=base_url, progress=False)
    assert leftovers(tmp_path / "data") == []


def test_damaged_archive(tmp_path, server, monkeypatch):
    root, base_url = server
    serve_sst(monkeypatch, root)
    archive = root / "trainDevTestTrees_PTB.zip"
    # one flipped letter in a stored member: the zip's CRC check catches it
    archive.write_bytes(archive.read_bytes().replace(b"very", b"vary"))
    with pytest.raises(DownloadError, match="the archive is damaged"):
        fetch("sst", tmp_path / "data", base_url=base_url, progress=False)
    assert list((tmp_path / "data").iterdir()) == []


def test_fetch_sick_three_archives(tmp_path, server, monkeypatch):
    root, base_url = server
    contents = {
        "sick/SICK_train.txt": b"pair_ID\tsentence_A\tsentence_B\n1\ta\tb\n",
        "sick/SICK_trial.txt": b"pair_ID\tsentence_A\tsentence_B\n2\tc\td\n",
        "sick/SICK_test_annotated.txt": b"pair_ID\tsentence_A\r\n3\te\r\n",
    }
    expect_checksums(monkeypatch, "sick", contents)
    make_zip(root / "sick_train.zip", {"SICK_train.txt": contents["sick/SICK_train.txt"]})
    # a re-packed archive with the file in a folder is found by its file name
    make_zip(root / "sick_trial.zip", {"sick/SICK_trial.txt": contents["sick/SICK_trial.txt"],
                                       "__MACOSX/sick/SICK_trial.txt": b"resource fork"})
    make_zip(root / "sick_test_annotated.zip",
             {"SICK_test_annotated.txt": contents["sick/SICK_test_annotated.txt"],
              "readme.txt": b"SemEval 2014 Task 1"})
    data_dir = tmp_path / "data"
    paths = fetch("sick", data_dir, base_url=base_url, progress=False)
    assert {path.relative_to(data_dir).as_posix() for path in paths} == set(contents)
    for target, data in contents.items():
        assert (data_dir / target).read_bytes() == data


def test_missing_member(tmp_path, server, monkeypatch):
    root, base_url = server
    make_zip(root / "trainDevTestTrees_PTB.zip", {"trees/train.txt": b"(2 a)\n"})
    with pytest.raises(DownloadError, match="has no member trees/dev.txt"):
        fetch("sst", tmp_path / "data", base_url=base_url, progress=False)


def test_fetch_glove_checks_structure(tmp_path, server):
    root, base_url = server
    line = "the " + " ".join(["0.25"] * 300) + "\n"
    make_zip(root / "glove.840B.300d.zip", {"glove.840B.300d.txt": line * 2})
    data_dir = tmp_path / "data"
    [path] = fetch("glove", data_dir, base_url=base_url, progress=False)
    assert path == data_dir / "vectors" / "glove.840B.300d.txt"
    assert path.read_text() == line * 2
    make_zip(root / "glove.840B.300d.zip", {"glove.840B.300d.txt": "the 0.5 0.5\n"})
    with pytest.raises(DownloadError, match="2 values after the word, expected 300"):
        fetch("glove", data_dir, base_url=base_url, progress=False, force=True)
    assert path.read_text() == line * 2


def test_unknown_dataset(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'imdb'"):
        fetch("imdb", tmp_path)


def test_real_files_match_the_table(data_dir, capsys):
    # the MD5s in DATASETS are those of the release files in ../shared/data: every
    # archive is present and verified, so nothing is fetched (from nowhere)
    for name in ("sst", "sick"):
        installed = fetch(name, data_dir, base_url="file:///nowhere/", progress=False)
        assert installed == [data_dir / member.target
                             for archive in DATASETS[name].archives
                             for member in archive.members]
        said = capsys.readouterr().err
        assert said.count("already present and verified") == len(DATASETS[name].archives)
