"""A helper process that dies is a failed step (shard_processes.py): killed
with SIGKILL before its shard reaches it, during its pass or while it adds
into the sum, the run stops naming the helper and the signal, its
checkpoint stays loadable and a resumed run ends with the numbers of a run
never interrupted, bit for bit.  From the command line: exit status 1 and
the message; and a training process terminated or killed leaves no helper
behind and no helper's traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
from npcomp.cli import main
from npcomp.training import shard_processes
from npcomp.runfiles.checkpoints import epoch_in_progress, read_checkpoint
from npcomp.configuration.defaults import defaults_for
from npcomp.runfiles.model_files import load_model
from npcomp.runfiles.rundir import RunDirectory
from npcomp.training.shard_processes import ShardProcesses, can_fork
from npcomp.training.step import HelperLost
from npcomp.training.trainer import train
from conftest import synthetic_of_size, synthetic_sst_files

pytestmark = pytest.mark.skipif(not can_fork(), reason="this process cannot fork helpers")

REPO_ROOT = Path(__file__).resolve().parents[2]
# 60 training sentences in minibatches of 10: 6 steps an epoch, dev read
# after steps 3 and 6; the helper dies in step 5, after a checkpoint
CONFIG = dict(
    model="treelstm-nary",
    task="synthetic",
    seed=3,
    vectors=None,
    data_dir=None,
    dim=8,
    embedding_dim=8,
    epochs=2,
    evals_per_epoch=2,
    batch_size=10,
    dropout=0.3,
    shards=2,
    threads=2,
)
DYING_STEP = 5


def config() -> dict:
    out = defaults_for("treelstm-nary", "synthetic")
    out.pop("source")
    out.update(CONFIG)
    return out


def quiet_train(configuration, run_dir, **kwargs):
    return train(configuration, run_dir, progress=False, echo=lambda *args: None, **kwargs)


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((60, 30, 30)))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("uninterrupted")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((60, 30, 30)))
        metrics = quiet_train(config(), run_dir)
    return run_dir, metrics


def killed(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


def before_its_shard(monkeypatch, parent: int) -> None:
    """The helper killed (by the training process) while it waits for the
    step's shard, and reaped, before the shard is sent."""
    original = ShardProcesses.compute
    steps = []

    def compute(self, *args, **kwargs):
        steps.append(1)
        if len(steps) == DYING_STEP:
            helper = self.processes[0]
            killed(helper.pid)
            helper.join()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ShardProcesses, "compute", compute)


def during_its_pass(monkeypatch, parent: int) -> None:
    """The helper kills itself in its pass, its gradient half made (in its
    own buffer), before it can reply."""
    original = ShardProcesses._pass
    passes = []

    def in_the_pass(self, *args, **kwargs):
        passes.append(1)
        result = original(self, *args, **kwargs)
        if os.getpid() != parent and len(passes) == DYING_STEP:
            killed(os.getpid())
        return result

    monkeypatch.setattr(ShardProcesses, "_pass", in_the_pass)


def while_it_adds(monkeypatch, parent: int) -> None:
    """The helper kills itself in the middle of its addition into the sum:
    the dense parameters added, the word vectors' rows not."""
    original = shard_processes.add_and_zero
    additions = []

    def half_an_addition(total, buffer, rows, dense):
        additions.append(1)
        if os.getpid() != parent and len(additions) == DYING_STEP:
            total.flat[:dense] += buffer.flat[:dense]
            killed(os.getpid())
        return original(total, buffer, rows, dense)

    monkeypatch.setattr(shard_processes, "add_and_zero", half_an_addition)


@pytest.mark.parametrize("dying", [before_its_shard, during_its_pass, while_it_adds], ids=lambda dying: dying.__name__)
def test_a_helper_killed_in_a_step_stops_the_run_which_resumes_bit_for_bit(dying, uninterrupted, tmp_path, monkeypatch):
    reference_dir, reference = uninterrupted
    run_dir = tmp_path / "run"
    # processes an earlier test of the session left to this one are not the run's
    before = set(_children(os.getpid()))
    with monkeypatch.context() as patch:
        dying(patch, os.getpid())
        with pytest.raises(HelperLost) as caught:
            quiet_train(config(), run_dir)
    message = str(caught.value)
    assert re_search(
        r"^helper process 1 \(pid \d+, computing shard 1 of each minibatch\) "
        r"was killed by SIGKILL \(signal 9\) at epoch 1, minibatch 5\. ",
        message,
    )
    assert f"--resume {run_dir}" in message
    assert not [child for child in _children(os.getpid()) if child not in before and _alive(child)]
    # the checkpoint is that of the dev evaluation after step 3, whole
    saved = read_checkpoint(RunDirectory(run_dir))
    assert epoch_in_progress(saved)[1]["done"] == 3
    load_model(run_dir)
    log = RunDirectory(run_dir).log_records()
    assert log[-1]["event"] == "stopped" and "SIGKILL" in log[-1]["reason"]
    assert not any(record["event"] == "end" for record in log)

    metrics = quiet_train({}, run_dir, resume=True)
    assert metrics["test"] == reference["test"]
    assert [epoch["dev"] for epoch in metrics["epochs"]] == [epoch["dev"] for epoch in reference["epochs"]]
    _, params, _, _ = load_model(run_dir)
    _, reference_params, _, _ = load_model(reference_dir)
    assert np.array_equal(params.flat, reference_params.flat)


def re_search(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


# --------------------------------------------------------------------------
# from the command line, with signals from outside
# --------------------------------------------------------------------------


def _children(pid: int) -> list:
    """The process ids of ``pid``'s children (Linux)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not waited for, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def npcomp_train(data_dir: Path, run_dir: Path, *more: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    env.pop("NPCOMP_TRACEBACK", None)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "npcomp",
            "train",
            "--task",
            "sst5",
            "--data-dir",
            str(data_dir),
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
            "--quiet",
            "--no-baseline",
            "--out",
            str(run_dir),
            *more,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def training_with_its_helper(process, run_dir: Path, marker: str | None = None) -> int:
    """Wait until the run of ``process`` (a Popen or a multiprocessing
    Process) has a checkpoint (and the file ``marker``, if given) and
    trains on: its helper's pid."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _alive(process.pid):
        helpers = _children(process.pid)
        if helpers and (run_dir / (marker or "checkpoint.npz")).is_file():
            return helpers[0]
        time.sleep(0.01)
    raise AssertionError("the run ended before its helper could be killed")


@pytest.fixture(scope="module")
def sst_files(tmp_path_factory):
    return synthetic_sst_files(tmp_path_factory.mktemp("data"), (60, 30, 30))


def test_the_command_line_exits_1_naming_the_killed_helper_and_resumes(sst_files, tmp_path):
    run_dir = tmp_path / "run"
    process = npcomp_train(sst_files, run_dir, "--epochs", "12")
    helper = training_with_its_helper(process, run_dir)
    killed(helper)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1, stderr
    assert "Traceback" not in stderr
    assert re_search(
        r"npcomp train: error: helper process 1 \(pid \d+, computing shard 1 of "
        r"each minibatch\) was killed by SIGKILL \(signal 9\) at epoch \d+, "
        r"minibatch \d+\. ",
        stderr,
    ), stderr
    assert f"--resume {run_dir}" in stderr
    assert main(["train", "--resume", str(run_dir), "--quiet"]) == 0
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test"] is not None and len(metrics["epochs"]) == 12


def _train_with_stderr_in(path: str, run_dir: str, hold: bool) -> None:
    """A training process's body: its standard error (and its helper's)
    into ``path``, then a long run.  ``hold``: once the run has a
    checkpoint, the step whose helper adds into the sum while this process
    cuts the next minibatch waits there, the helper's reply unread (a file
    ``held`` in the run directory says so)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(descriptor, 2)
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115 - for good
    if hold:
        original = ShardProcesses.compute

        def compute(self, shards, local_pass, average, normaliser, errors, meanwhile=None):
            if meanwhile is not None and (Path(run_dir) / "checkpoint.npz").is_file():

                def held():
                    meanwhile()
                    (Path(run_dir) / "held").touch()
                    time.sleep(60)

                return original(self, shards, local_pass, average, normaliser, errors, held)
            return original(self, shards, local_pass, average, normaliser, errors, meanwhile)

        ShardProcesses.compute = compute  # in this process alone
    quiet_train(config() | {"epochs": 200}, run_dir)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_training_process_ended_leaves_no_helper_and_no_traceback(how, tmp_path):
    """The training process alone is signalled (as ``kill PID`` does) at
    three moments of its steps, the last while the helper's reply waits
    unread (the pipe is then reset, not only closed): its helper leaves
    quietly, whatever it was doing.  The training process is forked from
    this one (its kernels compiled), its helper forked from it."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for attempt, (delay, hold) in enumerate(((0.0, False), (0.037, False), (0.3, True))):
        run_dir, stderr = tmp_path / f"run{attempt}", tmp_path / f"stderr{attempt}"
        process = context.Process(target=_train_with_stderr_in, args=(str(stderr), str(run_dir), hold))
        process.start()
        helper = training_with_its_helper(process, run_dir, "held" if hold else None)
        time.sleep(delay)
        os.kill(process.pid, how)
        process.join(timeout=60)
        assert process.exitcode == -how
        deadline = time.monotonic() + 10
        while _alive(helper) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _alive(helper)
        written = stderr.read_text()
        assert "Traceback" not in written and "Error" not in written, written


def test_a_broken_pipe_other_than_the_output_is_a_failure(monkeypatch):
    """Only standard output closed by its reader (`npcomp predict | head`)
    ends a command quietly with status 0; another pipe that breaks is a
    failure like any other."""
    from npcomp.cli import outcome

    reader, writer = os.pipe()
    with open(writer, "w") as output:
        monkeypatch.setattr(sys, "stdout", output)

        def writes_into_a_closed_pipe():
            closed, other = os.pipe()
            os.close(closed)
            try:
                os.write(other, b"a shard")
            finally:
                os.close(other)

        assert outcome(writes_into_a_closed_pipe) == (1, "Broken pipe")
        os.close(reader)
        assert outcome(writes_into_a_closed_pipe) == (0, None)
