"""Faults `npcomp sweep` must survive, on real servers and Dask processes on
127.0.0.1 (no mocks):

* a --scheduler address where no Dask scheduler answers -- a plain HTTP
  server, a server that answers other bytes, a closed port, a Dask worker,
  a malformed address -- refused within seconds, exit status 2, naming
  --scheduler, with nothing written (no plan.json);
* the scheduler killed mid-sweep: the sweep exits with status 1, every run
  is left resumable (or not yet started), and the same command run again
  finishes them, each log holding every dev evaluation once.

A worker killed while its run trains and writes its checkpoints is
test_sweep.py's test_a_killed_worker_resumes_its_run.  Every process trains
on a smaller synthetic treebank (conftest.small_synthetic_sweeps), Dask's
worker processes included."""

import http.server
import json
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from npcomp.cli import main
from npcomp.runfiles.rundir import RunDirectory
from npcomp.experiments.scheduler import SCHEDULER_TIMEOUT
from npcomp.experiments.sweep_plan import run_state
from conftest import small_synthetic_sweeps

distributed = pytest.importorskip("distributed")

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY = ["--task", "synthetic", "--dim", "4", "--embedding-dim", "4", "--epochs", "1", "--no-baseline", "--quiet"]
# a refusal comes within the scheduler's time to answer, and a little more
WITHIN = 3 * SCHEDULER_TIMEOUT


@pytest.fixture(scope="module", autouse=True)
def sizes():
    """The synthetic treebank's (train, dev, test) sentences, in this
    process and in every worker of the module's sweeps."""
    with small_synthetic_sweeps() as sizes:
        yield sizes


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


class OtherBytes(socketserver.BaseRequestHandler):
    """Answers every connection with bytes of every value, then reads."""

    def handle(self):
        try:
            self.request.sendall(bytes(range(256)) * 64)
            self.request.recv(1 << 16)
        except OSError:
            pass


@pytest.fixture(scope="module")
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def other_bytes_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), OtherBytes)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"tcp://127.0.0.1:{port}"


def refused_within_seconds(capsys, argv, *named) -> float:
    start = time.monotonic()
    status = main(argv)
    seconds = time.monotonic() - start
    error = capsys.readouterr().err
    assert status == 2, error
    assert error.startswith(f"npcomp {argv[0]}: error: --scheduler: ") and error.count("\n") == 1
    for text in named:
        assert text in error, error
    assert seconds < WITHIN, f"{seconds:.1f} s"
    return seconds


@pytest.mark.parametrize(
    "server, named",
    [
        ("http_server", "did not answer as a Dask scheduler within"),
        ("other_bytes_server", "is not a Dask scheduler"),
        ("closed port", "nothing accepts connections there"),
    ],
)
def test_a_scheduler_address_without_a_scheduler_is_refused_in_seconds(request, tmp_path, capsys, server, named):
    address = closed_port() if server == "closed port" else request.getfixturevalue(server)
    sweep_dir = tmp_path / "sweep"
    seconds = refused_within_seconds(
        capsys,
        ["sweep", *TINY, "--scheduler", address, "--out", str(sweep_dir)],
        address,
        named,
        "nothing was started or written",
    )
    print(f"{server}: refused in {seconds:.1f} s")
    assert not sweep_dir.exists()


@pytest.mark.parametrize(
    "address",
    [
        "not-an-address",
        "tcp://127.0.0.1",
        "tls://127.0.0.1:8786",
        "tcp://127.0.0.1:0",
        "tcp://127.0.0.1:70000",
        "tcp://:8786",
        "127.0.0.1:port",
    ],
)
def test_a_malformed_scheduler_address_is_refused(tmp_path, capsys, address):
    refused_within_seconds(
        capsys,
        ["sweep", *TINY, "--scheduler", address, "--out", str(tmp_path / "sweep")],
        f"{address!r} is not a scheduler's address: give tcp://HOST:PORT",
    )
    assert not (tmp_path / "sweep").exists()


def test_reproduce_refuses_the_scheduler_before_anything_is_written(tmp_path, capsys, other_bytes_server):
    out = tmp_path / "reproduce"
    refused_within_seconds(
        capsys,
        ["reproduce", "le-zuidema", "--seeds", "1", "--scheduler", other_bytes_server, "--out", str(out)],
        "is not a Dask scheduler",
    )
    assert not out.exists()


def test_a_dask_worker_is_not_a_scheduler(tmp_path, capsys):
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=None,
    ) as cluster:
        worker = next(iter(cluster.scheduler_info["workers"]))
        refused_within_seconds(
            capsys,
            ["sweep", *TINY, "--scheduler", worker, "--out", str(tmp_path / "sweep")],
            "a Dask Worker answers there, not a scheduler",
        )
    assert not (tmp_path / "sweep").exists()


# --------------------------------------------------------------------------
# the scheduler killed mid-sweep
# --------------------------------------------------------------------------


def dask_process(*argv) -> subprocess.Popen:
    """A `dask` command in a process group of its own (killed as a whole)."""
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_" + argv[0], *argv[1:]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def evaluation_points(run_dir: Path) -> list:
    return [
        record.get("at", record.get("epoch"))
        for record in RunDirectory(run_dir).log_records()
        if record["event"] in ("evaluation", "epoch")
    ]


def test_the_scheduler_killed_mid_sweep(tmp_path, sizes):
    """`dask scheduler` and one `dask worker` process; the sweep runs in a
    process of its own.  SIGKILL to the scheduler once a run has a
    checkpoint, and to the worker right after (the cluster's machine gone: a
    worker left without its scheduler would go on with its run): the sweep
    exits with status 1 within seconds, each run unfinished, not failed, and
    resumable or not yet started; the same command run again, on a local
    cluster, finishes every run, the killed one resumed."""
    scheduler_file = tmp_path / "scheduler.json"
    scheduler = dask_process(
        "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file)
    )
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.05)
        address = json.loads(scheduler_file.read_text())["address"]
        worker = dask_process("worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard")
        sweep_dir = tmp_path / "sweep"
        argv = [
            "sweep",
            "--task",
            "synthetic",
            "--dim",
            "16",
            "--embedding-dim",
            "16",
            "--epochs",
            "4",
            "--evals-per-epoch",
            "2",
            "--no-baseline",
            "--no-train-eval",
            "--seeds",
            "1-2",
            "--quiet",
            "--out",
            str(sweep_dir),
        ]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
        sweep = subprocess.Popen(
            [sys.executable, "-m", "npcomp", *argv, "--scheduler", address],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        victim, deadline = None, time.monotonic() + 120
        while victim is None and time.monotonic() < deadline and sweep.poll() is None:
            for run_dir in sorted((sweep_dir / "runs").glob("*")):
                if run_state(run_dir) == "resumable":
                    victim = run_dir
            time.sleep(0.02)
        assert victim is not None, "no run reached its first checkpoint"
        kill(scheduler)
        killed_at = time.monotonic()
        kill(worker)
        out, err = sweep.communicate(timeout=60)
        print(f"the sweep stopped {time.monotonic() - killed_at:.1f} s after its scheduler")
        assert sweep.returncode == 1, err
        assert "the cluster dropped 2 of 2 runs (its scheduler lost)" in err
        assert "Traceback" not in err and "Traceback" not in out
        results = json.loads((sweep_dir / "sweep.json").read_text())
        assert [run["status"] for run in results["runs"].values()] == ["unfinished"] * 2
        states = {run_dir.name: run_state(run_dir) for run_dir in (sweep_dir / "runs").iterdir()}
        assert states[victim.name] == "resumable"
        assert set(states.values()) <= {"resumable", "new"}, states
    finally:
        kill(scheduler)
        if worker is not None:
            kill(worker)
    assert main([*argv, "--workers", "1"]) == 0
    results = json.loads((sweep_dir / "sweep.json").read_text())
    assert results["finished"] == 2
    every = [round(epoch + half, 4) for epoch in range(4) for half in (0.5, 1)]
    for run_dir in (sweep_dir / "runs").iterdir():
        assert evaluation_points(run_dir) == every, run_dir.name
        assert json.loads((run_dir / "metrics.json").read_text())["test"]["sentences"] == sizes[2]
    events = [record["event"] for record in RunDirectory(victim).log_records()]
    assert events.count("start") == 1 and events.count("resumed") == 1


def test_a_second_sweep_into_a_directory_in_use_is_refused(tmp_path, capsys):
    """Another process holds SWEEP_DIR (its lock taken as a sweep takes it):
    the same sweep is refused at once, nothing changed, instead of planning
    and reporting the runs the first one trains; once it has let go, the
    directory is the sweep's."""
    sweep_dir = tmp_path / "sweep"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from npcomp.experiments.sweep_plan import sweep_lock\n"
            f"with sweep_lock({str(sweep_dir)!r}):\n"
            "    print('held', flush=True)\n"
            "    sys.stdin.read()\n",
        ],
        env=dict(os.environ, PYTHONPATH=str(REPO_ROOT)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        argv = ["sweep", *TINY, "--seeds", "1", "--out", str(sweep_dir)]
        assert main(argv) == 1
        assert capsys.readouterr().err == (
            f"npcomp sweep: error: {sweep_dir}: another npcomp sweep is running in this sweep "
            "directory; nothing was changed. Wait for it to end (the same command then reports "
            "its runs, and continues any it left unfinished), or choose another directory with "
            "--out\n"
        )
        assert sorted(path.name for path in sweep_dir.iterdir()) == [".lock"]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert main(argv) == 0
    assert json.loads((sweep_dir / "sweep.json").read_text())["finished"] == 1
