"""Every command held to the "Exit statuses" table (docs/exit-statuses.md): for each command
of `npcomp --help`, the table has a row, and a success exits 0, a failure at
run time 1 and bad input 2 -- each with a one-line message (argparse's usage
line for an unknown option) and no traceback.  Real files, a real Dask
cluster for the sweep, an HTTP server on 127.0.0.1 for the download."""

import dataclasses
import functools
import hashlib
import http.server
import io
import re
import sys
import threading
import zipfile
from pathlib import Path

import pytest

import npcomp.data.datasets.synthetic
from npcomp.data.downloads import download
from npcomp.cli import COMMANDS, main
from conftest import synthetic_of_size

REPO_ROOT = Path(__file__).resolve().parents[2]
SIZES = (40, 20, 20)
TINY = ["--dim", "4", "--embedding-dim", "4", "--epochs", "1", "--quiet", "--no-baseline"]
SST_FILES = {
    "trees/train.txt": b"(3 (2 It) (4 (2 's) (4 good)))\n(1 (2 It) (0 bad))\n",
    "trees/dev.txt": b"(4 (3 very) (4 good))\n",
    "trees/test.txt": b"(0 (1 not) (1 good))\n",
}


small_splits = synthetic_of_size(SIZES)


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """Everything the commands read, made once: a finished synthetic run, a
    finished sweep of one run, a SICK run, an SST directory, a file, a
    served SST archive and its checksums: name -> path or value."""
    root = tmp_path_factory.mktemp("statuses")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)
        assert main(["train", *TINY, "--out", str(root / "run")]) == 0
        assert main(["sweep", "--task", "synthetic", *TINY, "--workers", "1", "--out", str(root / "sweep")]) == 0
    (root / "sst" / "sst").mkdir(parents=True)
    for split, trees in small_splits().items():
        (root / "sst" / "sst" / f"{split}.txt").write_text("".join(tree.to_ptb() + "\n" for tree in trees))
    (root / "afile").write_text("a file\n")
    (root / "empty").mkdir()
    (root / "reports").mkdir()
    (root / "damaged").mkdir()
    (root / "damaged" / "zhu.json").write_text("{\n")
    (root / "served").mkdir()
    with zipfile.ZipFile(root / "served" / "trainDevTestTrees_PTB.zip", "w") as archive:
        for name, data in SST_FILES.items():
            archive.writestr(name, data)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root / "served")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {
        "ROOT": root,
        "RUN": root / "run",
        "SWEEP": root / "sweep",
        "SST": root / "sst",
        "FILE": root / "afile",
        "EMPTY": root / "empty",
        "REPORTS": root / "reports",
        "DAMAGED": root / "damaged",
        "MIRROR": f"http://127.0.0.1:{server.server_address[1]}/",
        "CLOSED": "http://127.0.0.1:1/",
    }
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def sick_run(tmp_path_factory):
    """A tiny trained sick run (test_sick_cli.py's data), for neighbours."""
    from sick_files import write_small_sick, write_vectors

    root = tmp_path_factory.mktemp("sick")
    data_dir = write_small_sick(root / "data")
    vectors = write_vectors(root / "vectors.txt")
    assert (
        main(
            [
                "train",
                "--model",
                "treelstm-childsum",
                "--task",
                "sick",
                "--data-dir",
                str(data_dir),
                "--vectors",
                str(vectors),
                "--dim",
                "4",
                "--epochs",
                "1",
                "--quiet",
                "--out",
                str(root / "run"),
            ]
        )
        == 0
    )
    return root / "run"


# command -> status -> (arguments, standard input); words in capitals are places
CASES = {
    "train": {
        0: (["train", *TINY, "--out", "ROOT/new-run"], None),
        1: (["train", *TINY, "--out", "RUN"], None),  # it holds a run
        2: (["train", *TINY, "--task", "sst5", "--data-dir", "EMPTY", "--out", "ROOT/none"], None),
    },  # no SST files
    "eval": {
        0: (["eval", "--run", "RUN"], None),
        1: (["eval", "--run", "EMPTY"], None),  # no run there
        2: (["eval", "--run", "RUN", "--parses-dir", "EMPTY"], None),
    },
    "predict": {
        0: (["predict", "--run", "RUN", "--tree", "right"], "a good film\n"),
        1: (["predict", "--run", "EMPTY"], "a good film\n"),
        2: (["predict", "--run", "RUN", "--tree", "right"], "a good film\n(2 (2 a) (2 b)\n"),
    },
    "neighbours": {
        0: (["neighbours", "--run", "SICK_RUN", "--tree", "right", "a man is playing"], None),
        1: (["neighbours", "--run", "EMPTY", "a man"], None),
        2: (["neighbours", "--run", "SICK_RUN", "--top", "0", "a man"], None),
    },
    "parse": {
        0: (["parse", "--data-dir", "SST", "--out", "ROOT/parses", "--quiet"], None),
        1: (
            ["parse", "--data-dir", "SST", "--out", "ROOT/parses-1", "--spacy-model", "no_such_pipeline", "--quiet"],
            None,
        ),
        2: (["parse", "--data-dir", "SST", "--out", "FILE", "--quiet"], None),
    },
    "summary": {
        0: (["summary", "RUN"], None),
        1: (["summary", "RUN", "EMPTY"], None),  # not a run
        2: (["summary"], None),
    },  # no RUN_DIR
    "sweep": {
        0: (["sweep", "--task", "synthetic", *TINY, "--out", "SWEEP"], None),
        1: (["sweep", "--task", "synthetic", *TINY, "--lr", "0.5", "--out", "SWEEP"], None),  # holds another sweep
        2: (["sweep", "--task", "synthetic", *TINY, "--seeds", "5-1", "--out", "ROOT/sweep-2"], None),
    },
    "reproduce": {
        0: (["reproduce", "--summary", "--out", "REPORTS"], None),
        1: (["reproduce", "--summary", "--out", "DAMAGED"], None),
        2: (["reproduce", "no-such-table"], None),
    },
    "plot": {
        0: (["plot", "RUN", "--out", "ROOT/figures"], None),
        1: (["plot", "EMPTY", "--out", "ROOT/figures-1"], None),  # no run there
        2: (["plot", "RUN", "--out", "FILE"], None),
    },
    "explain": {
        0: (["explain", "--model", "treelstm-nary", "(3 (2 a) (3 good))"], None),
        1: (["explain", "--model", "treelstm-nary", "--html", "FILE", "(3 (2 a) (3 good))"], None),  # FILE exists
        2: (["explain", "--model", "treelstm-nary", "(3 (2 a) (3 good)"], None),
    },
    "download": {
        0: (["download", "sst", "--data-dir", "ROOT/downloaded", "--base-url", "MIRROR"], None),
        1: (["download", "sst", "--data-dir", "ROOT/not-downloaded", "--base-url", "CLOSED"], None),
        2: (["download", "no-such-dataset"], None),
    },
    # a tolerance no finite difference meets: every row fails
    "gradcheck": {
        0: (["gradcheck", "--model", "mean-vectors"], None),
        1: (["gradcheck", "--model", "mean-vectors", "--tolerance", "1e-30"], None),
        2: (["gradcheck", "--model", "no-such-model"], None),
    },
}


def readme_table() -> dict:
    """command -> {status: its cell} of the table of statuses by command
    (docs/exit-statuses.md)."""
    section = (REPO_ROOT / "docs" / "exit-statuses.md").read_text()
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        found = re.fullmatch(r"`(\w+)`", cells[0]) if len(cells) == 4 else None
        if found:
            rows[found[1]] = dict(zip((0, 1, 2), cells[1:]))
    return rows


def test_the_readme_has_a_row_for_every_command():
    rows = readme_table()
    assert sorted(rows) == sorted(COMMANDS) == sorted(CASES)
    for command, statuses in rows.items():
        assert all(statuses.values()), command


def _place(word: str, places: dict, sick) -> str:
    """A word of CASES with its place (RUN, ROOT/name, ...) filled in."""
    if word == "SICK_RUN":
        return str(sick())
    name, _, rest = word.partition("/")
    if name not in places:
        return word
    return str(Path(places[name]) / rest) if rest else str(places[name])


@pytest.mark.parametrize("command, status", [(command, status) for command in CASES for status in (0, 1, 2)])
def test_each_command_exits_as_the_readme_says(command, status, place, request, capsys, monkeypatch):
    argv, stdin = CASES[command][status]
    if command == "parse" and status == 0:
        pytest.importorskip("spacy")
        try:
            from npcomp.data.text.dependency_parser import SpacyParser

            SpacyParser()
        except ImportError as error:
            pytest.skip(f"no spaCy pipeline: {error}")
    if command == "download":
        _expect_the_served_checksums(monkeypatch)
    argv = [_place(word, place, lambda: request.getfixturevalue("sick_run")) for word in argv]
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    capsys.readouterr()
    try:
        found = main(argv)
    except SystemExit as exit:  # argparse's own refusal
        found = exit.code
    error = capsys.readouterr().err
    assert found == status, f"{' '.join(argv)}: {error}"
    assert "Traceback" not in error
    if status:
        lines = [line for line in error.splitlines() if not line.startswith(("usage:", " ")) and line.strip()]
        assert lines and lines[0].startswith(f"npcomp {command}: error: "), error


def _expect_the_served_checksums(monkeypatch):
    dataset = download.DATASETS["sst"]
    served = {f"sst/{Path(name).name}": data for name, data in SST_FILES.items()}
    archives = tuple(
        dataclasses.replace(
            archive,
            members=tuple(
                dataclasses.replace(member, md5=hashlib.md5(served[member.target]).hexdigest())
                for member in archive.members
            ),
        )
        for archive in dataset.archives
    )
    monkeypatch.setitem(download.DATASETS, "sst", dataclasses.replace(dataset, archives=archives))
