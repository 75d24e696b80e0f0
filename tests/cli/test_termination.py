"""The command ended from outside, as users and job schedulers end it: real
`npcomp train` and `npcomp sweep` processes, with their shard helpers or
their local Dask cluster, sent SIGINT (Ctrl-C: the terminal signals the
whole process group) or SIGTERM (``kill PID``: the command's process alone,
or its group).  Nothing they leave on standard error is a traceback, a
Dask ``CommClosedError`` or Python's warning of leaked semaphores; no
process of theirs is left; what they trained stays resumable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npcomp.experiments.sweep_plan import run_state
from npcomp.runfiles.checkpoints import read_checkpoint
from npcomp.runfiles.model_files import load_model
from npcomp.runfiles.rundir import RunDirectory
from npcomp.training.shard_processes import can_fork
from conftest import small_synthetic_sweeps, synthetic_sst_files

REPO_ROOT = Path(__file__).resolve().parents[2]
# what a command ended from outside must never print
NOISE = ("Traceback", "CommClosedError", "Error:", "leaked semaphore", "Warning")


def _command(*arguments: str) -> subprocess.Popen:
    """``python -m npcomp ARGUMENTS`` in a session of its own, with SIGINT
    handled (a test runner started in the background ignores it, and its
    children would inherit that)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("NPCOMP_TRACEBACK", None)
    return subprocess.Popen(
        [sys.executable, "-m", "npcomp", *arguments],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _session_processes(session: int) -> list:
    """The live (not zombie) processes of session ``session`` (Linux /proc):
    a command's helpers and Dask workers stay in its session."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[3]) == session and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _wait_until(condition, seconds: float, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None and not condition():
        time.sleep(0.02)
    if process.poll() is not None:
        raise AssertionError(f"the command ended first: {process.communicate()}")


def _signalled(process: subprocess.Popen, how: signal.Signals, group: bool) -> str:
    """Send ``how`` to the command (or its whole group); its standard error
    once it and every process of its session have ended."""
    if group:
        os.killpg(process.pid, how)
    else:
        os.kill(process.pid, how)
    try:
        _, stderr = process.communicate(timeout=90)
        deadline = time.monotonic() + 15
        while _session_processes(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _session_processes(process.pid), "a process of the command is left"
    finally:  # a failed test leaves nothing running
        if _session_processes(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    return stderr


@pytest.fixture(scope="module")
def small_synthetic():
    """The synthetic treebank made small in the sweeps' Dask workers."""
    with small_synthetic_sweeps() as sizes:
        yield sizes


@pytest.fixture(scope="module")
def sst_files(tmp_path_factory):
    return synthetic_sst_files(tmp_path_factory.mktemp("data"), (60, 30, 30))


@pytest.mark.skipif(not can_fork(), reason="this process cannot fork helpers")
@pytest.mark.parametrize(
    "how, group, status", [(signal.SIGINT, True, 130), (signal.SIGTERM, False, -signal.SIGTERM)], ids=["ctrl-c", "kill"]
)
def test_train_ended_from_outside_leaves_no_helper_and_no_traceback(how, group, status, sst_files, tmp_path):
    """`npcomp train --shards 2` (a helper process) signalled mid-epoch:
    Ctrl-C says how to continue with exit status 130; SIGTERM ends it
    silently; either way its helper leaves without a word and the
    checkpoint of the latest dev evaluation stays readable."""
    run_dir = tmp_path / "run"
    process = _command(
        "train",
        "--task",
        "sst5",
        "--data-dir",
        str(sst_files),
        "--dim",
        "8",
        "--embedding-dim",
        "8",
        "--batch-size",
        "5",
        "--shards",
        "2",
        "--threads",
        "2",
        "--epochs",
        "400",
        "--quiet",
        "--no-baseline",
        "--out",
        str(run_dir),
    )
    _wait_until(
        lambda: (run_dir / "checkpoint.npz").is_file() and len(_session_processes(process.pid)) >= 2, 120, process
    )
    stderr = _signalled(process, how, group)
    assert process.returncode == status, stderr
    assert not [noise for noise in NOISE if noise in stderr], stderr
    if how == signal.SIGINT:
        assert "npcomp: interrupted; a run is saved as of its latest dev evaluation" in stderr
    else:
        assert stderr == ""
    read_checkpoint(RunDirectory(run_dir))  # whole: raises on a damaged file
    load_model(run_dir)


@pytest.mark.parametrize("group", [False, True], ids=["kill", "SIGTERM-to-its-group"])
def test_a_sweep_terminated_stops_its_cluster_as_on_ctrl_c(group, small_synthetic, tmp_path):
    """SIGTERM to `npcomp sweep` on its local Dask cluster (to its process
    alone, or to its group, workers included): the sweep stops the cluster
    as on Ctrl-C, says so with exit status 130, no worker's or scheduler's
    CommClosedError is printed, and the run started is resumable."""
    sweep_dir = tmp_path / "sweep"
    process = _command(
        "sweep",
        "--task",
        "synthetic",
        "--dim",
        "32",
        "--embedding-dim",
        "32",
        "--epochs",
        "2000",
        "--evals-per-epoch",
        "2",
        "--no-baseline",
        "--no-train-eval",
        "--seeds",
        "1",
        "--workers",
        "1",
        "--quiet",
        "--out",
        str(sweep_dir),
    )
    run_dir = sweep_dir / "runs" / "base-s1"
    _wait_until(lambda: run_state(run_dir) == "resumable", 120, process)
    stderr = _signalled(process, signal.SIGTERM, group)
    assert process.returncode == 130, stderr
    assert "npcomp: interrupted, the cluster stopped; every run is saved" in stderr
    assert not [noise for noise in NOISE if noise in stderr], stderr
    assert run_state(run_dir) == "resumable"
