"""Nothing lost, nothing silent: run directories that are never overwritten
without being asked, one process per run, bad options and data named before
training, training stopped on non-finite or diverging numbers, resume that
checks what it resumes, and a run killed with SIGKILL at any moment resumed."""

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
from npcomp.cli import build_parser, default_run_dir, main
from npcomp.runfiles.rundir import RunDirectory, RunDirectoryError
from conftest import replace_line, synthetic_of_size, synthetic_sst_files, write_sst

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY = ["--dim", "8", "--embedding-dim", "8", "--epochs", "1", "--quiet", "--no-baseline"]


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((60, 30, 30)))


def run_files(run_dir: Path) -> dict:
    return {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file() and path.name != ".lock"}


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A finished run of the small synthetic treebank, trained once for the
    module: the tests that damage a run get copies of it (``finished_run``)."""
    run_dir = tmp_path_factory.mktemp("trained") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((60, 30, 30)))
        assert main(["train", *TINY, "--out", str(run_dir)]) == 0
    return run_dir


@pytest.fixture
def finished_run(trained_run, tmp_path):
    """A copy of ``trained_run`` of its own (every file, byte for byte), which
    the test may damage: a run records no path of its own, so the copy is the
    run as training left it."""
    return Path(shutil.copytree(trained_run, tmp_path / "run"))


def synthetic_sst(directory: Path) -> Path:
    """The small synthetic treebank written as SST files."""
    return synthetic_sst_files(directory, (60, 30, 30))


# --------------------------------------------------------------------------
# 1. runs are never lost
# --------------------------------------------------------------------------


def test_a_run_directory_holding_a_run_is_refused_untouched(finished_run, capsys):
    before = run_files(finished_run)
    capsys.readouterr()
    status = main(["train", *TINY, "--seed", "2", "--out", str(finished_run)])
    error = capsys.readouterr().err
    assert status == 1 and "already holds a run" in error and "--overwrite" in error
    assert run_files(finished_run) == before


def test_a_failing_new_run_leaves_the_old_one(finished_run, capsys):
    """--lr nan used to delete the old run's files and then crash."""
    before = run_files(finished_run)
    assert main(["train", *TINY, "--lr", "nan", "--out", str(finished_run), "--overwrite"]) == 2
    assert "--lr: must be a finite number > 0, not nan" in capsys.readouterr().err
    assert run_files(finished_run) == before


def test_default_run_names_keep_settings_apart():
    def name(*argv):
        return default_run_dir(build_parser().parse_args(["train", *argv]))

    assert name() == Path("runs/treelstm-nary-synthetic-s1")
    assert name("--model", "lstm", "--task", "sst5", "--seed", "3") == Path("runs/lstm-sst5-s3")
    assert name("--lr", "0.1") == Path("runs/treelstm-nary-synthetic-lr0.1-s1")
    assert name("--lr", "100") == Path("runs/treelstm-nary-synthetic-lr100-s1")
    assert (
        len(
            {
                name(),
                name("--lr", "0.1"),
                name("--lr", "0.2"),
                name("--dim", "20"),
                name("--fixed-embeddings"),
                name("--threads", "1"),
            }
        )
        == 5
    )


def test_a_second_process_is_refused_and_a_killed_one_leaves_no_lock(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; sys.path.insert(0, sys.argv[1]);"
            "from npcomp.runfiles.rundir import RunDirectory; "
            "run = RunDirectory(sys.argv[2]); run.lock();"
            "print('locked', flush=True); time.sleep(60)",
            str(REPO_ROOT),
            str(run_dir),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert main(["train", *TINY, "--out", str(run_dir)]) == 1
        assert "another npcomp process is training" in capsys.readouterr().err
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert main(["train", *TINY, "--out", str(run_dir)]) == 0


@pytest.mark.parametrize(
    "make_obstacle,message",
    [
        (lambda path: path.write_text("x"), "is a file, not a run directory"),
        (lambda path: (path.parent / "file").write_text("x"), "a parent of the run directory"),
    ],
)
def test_an_unusable_out_is_named(tmp_path, capsys, make_obstacle, message):
    out = tmp_path / "out"
    make_obstacle(out)
    target = out if message.startswith("is a file") else tmp_path / "file" / "run"
    assert main(["train", *TINY, "--out", str(target)]) == 1
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


def test_a_file_system_too_full_for_the_checkpoint_is_refused(tmp_path, capsys):
    """On a real 256 KiB file system (tmpfs; mounting needs root): refused
    before anything is written, where the run used to train without ever
    writing a checkpoint."""
    directory = RunDirectory(tmp_path / "not" / "made")
    with pytest.raises(RunDirectoryError, match="MiB free on its file system"):
        directory.check_space(1 << 62)
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(small)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root): " + mounted.stderr.decode(errors="replace").strip())
    try:
        assert main(["train", "--quiet", "--no-baseline", "--out", str(small / "run")]) == 1
        assert "MiB free on its file system" in capsys.readouterr().err
        assert not (small / "run").exists()
    finally:
        subprocess.run(["umount", str(small)], check=True)


# --------------------------------------------------------------------------
# 2, 6. numbers: options in range, training stopped on divergence
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--lr", "nan"], "--lr: must be a finite number > 0, not nan"),
        (["--lr", "inf"], "--lr: must be a finite number > 0, not inf"),
        (["--lr", "-1"], "--lr: must be a finite number > 0, not -1.0"),
        (["--emb-lr", "-1"], "--emb-lr: must be a finite number >= 0, not -1.0"),
        (["--l2", "-1"], "--l2: must be a finite number >= 0, not -1.0"),
        (["--seed", "-1"], "--seed: the random seed must be a whole number >= 0, not -1"),
        (["--oov-scale", "-1"], "--oov-scale: must be a finite number >= 0, not -1.0"),
        (["--dropout", "1"], "--dropout: must be a number in [0, 1), not 1.0"),
    ],
)
def test_numeric_options_out_of_range_name_the_option(tmp_path, capsys, argv, message):
    assert main(["train", *TINY, *argv, "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("lr", ["100", "1e6"])
def test_a_diverging_run_stops_with_exit_1(tmp_path, capsys, lr):
    run_dir = tmp_path / "run"
    assert main(["train", *TINY, "--epochs", "3", "--batch-size", "2", "--lr", lr, "--out", str(run_dir)]) == 1
    error = capsys.readouterr().err
    assert (
        "training diverged at epoch 1, minibatch" in error
        or "became non-finite at epoch 1, minibatch" in error
        or "the loss became" in error
    ), error
    assert "Traceback" not in error
    events = [json.loads(line)["event"] for line in (run_dir / "log.jsonl").open()]
    assert events[-1] == "stopped"


def test_huge_word_vectors_stop_training(tmp_path, capsys):
    """Vectors of 1e30 used to train 'successfully' with AdaGrad's state at inf."""
    from npcomp.data.datasets.synthetic import synthetic_splits

    words = sorted({word for tree in synthetic_splits()["train"] for word in tree.tokens})
    vectors = tmp_path / "huge.txt"
    vectors.write_text("".join(f"{word} {' '.join(['1e30'] * 8)}\n" for word in words))
    status = main(
        ["train", *TINY, "--model", "mean-vectors", "--vectors", str(vectors), "--out", str(tmp_path / "run")]
    )
    error = capsys.readouterr().err
    assert status == 1 and ("non-finite" in error or "the loss became" in error), error


# --------------------------------------------------------------------------
# 2, 6. damaged run files; non-finite predictions are refused
# --------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["truncate", "garbage", "missing key"])
@pytest.mark.parametrize("command", ["eval", "predict", "resume"])
def test_damaged_run_files_are_named(finished_run, capsys, monkeypatch, damage, command):
    name = "checkpoint.npz" if command == "resume" else "model.npz"
    path = finished_run / name
    if damage == "truncate":
        path.write_bytes(path.read_bytes()[:200])
    elif damage == "garbage":
        path.write_bytes(b"\x00not an archive" * 10)
    else:
        with np.load(path) as archive:
            arrays = {key: archive[key] for key in archive.files if key != "config"}
        np.savez(path, **arrays)
    monkeypatch.setattr(sys, "stdin", io.StringIO("good film\n"))
    argv = {
        "eval": ["eval", "--run", str(finished_run)],
        "predict": ["predict", "--run", str(finished_run)],
        "resume": ["train", "--resume", str(finished_run), "--quiet"],
    }[command]
    capsys.readouterr()
    assert main(argv) == 1
    error = capsys.readouterr().err
    assert f"{path}: damaged run file" in error and "Traceback" not in error


def test_predict_refuses_non_finite_probabilities(finished_run, capsys, monkeypatch):
    path = finished_run / "model.npz"
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    key = next(key for key in arrays if key.startswith("param.softmax"))
    arrays[key] = np.full_like(arrays[key], np.nan)
    np.savez(path, **arrays)
    monkeypatch.setattr(sys, "stdin", io.StringIO("(3 (2 good) (2 film))\n"))
    capsys.readouterr()
    assert main(["predict", "--run", str(finished_run)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "<stdin>:1: the model's probabilities are not finite" in captured.err


# --------------------------------------------------------------------------
# 4. resume checks what it resumes
# --------------------------------------------------------------------------


def killed_sst_run(tmp_path, monkeypatch):
    """A synthetic-as-SST run interrupted after its first epoch: (data dir, run dir)."""
    import npcomp.training.trainer

    data_dir = synthetic_sst(tmp_path / "data")
    run_dir = tmp_path / "run"
    real = npcomp.training.trainer._end_epoch
    calls = []

    def end_epoch(*args):
        real(*args)
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(npcomp.training.trainer, "_end_epoch", end_epoch)
    assert (
        main(["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--epochs", "2", "--out", str(run_dir)])
        == 130
    )
    monkeypatch.setattr(npcomp.training.trainer, "_end_epoch", real)
    return data_dir, run_dir


@pytest.mark.parametrize("edit", ["swap lines", "new word"])
def test_resume_refuses_changed_data(tmp_path, monkeypatch, capsys, edit):
    data_dir, run_dir = killed_sst_run(tmp_path, monkeypatch)
    train_file = data_dir / "sst" / "train.txt"
    lines = train_file.read_text().splitlines()
    if edit == "swap lines":
        lines[0], lines[1] = lines[1], lines[0]
    else:
        lines[0] = "(2 (2 zyzzyva) (2 film))"
    train_file.write_text("\n".join(lines) + "\n")
    before = run_files(run_dir)
    capsys.readouterr()
    assert main(["train", "--resume", str(run_dir), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "the train data of sst5 differ from those" in error, error
    assert run_files(run_dir) == before


def test_resume_takes_more_epochs_and_refuses_other_options(tmp_path, monkeypatch, capsys):
    data_dir, run_dir = killed_sst_run(tmp_path, monkeypatch)
    capsys.readouterr()
    assert main(["train", "--resume", str(run_dir), "--lr", "0.5", "--quiet"]) == 2
    assert "--lr: a resumed run continues with its own settings; it cannot take lr 0.5" in capsys.readouterr().err
    assert main(["train", "--resume", str(run_dir), "--epochs", "3", "--quiet"]) == 0
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert [epoch["epoch"] for epoch in metrics["epochs"]] == [1, 2, 3]
    events = [json.loads(line)["event"] for line in (run_dir / "log.jsonl").open()]
    assert events == ["start", "epoch", "resumed", "epoch", "epoch", "end"]


def test_resume_of_a_missing_directory_leaves_nothing(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path / "nowhere"), "--quiet"]) == 1
    assert "nothing to resume" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


def test_a_missing_data_directory_leaves_no_run_directory(tmp_path, capsys):
    assert (
        main(["train", *TINY, "--task", "sst5", "--data-dir", str(tmp_path / "none"), "--out", str(tmp_path / "run")])
        == 2
    )
    assert not (tmp_path / "run").exists()


def test_a_killed_baseline_is_resumed(tmp_path, monkeypatch, capsys):
    """The default synthetic job trains the model, then its baseline; killed in the
    baseline, --resume finishes the baseline and prints both."""
    import npcomp.training.trainer

    run_dir = tmp_path / "run"
    real = npcomp.training.trainer._end_epoch

    def end_epoch(run, *args):
        real(run, *args)
        if run.config["model"] == "mean-vectors":
            raise KeyboardInterrupt

    monkeypatch.setattr(npcomp.training.trainer, "_end_epoch", end_epoch)
    argv = ["train", "--dim", "8", "--embedding-dim", "8", "--epochs", "2", "--quiet"]
    assert main([*argv, "--out", str(run_dir)]) == 130
    monkeypatch.setattr(npcomp.training.trainer, "_end_epoch", real)
    capsys.readouterr()
    assert main(["train", "--resume", str(run_dir), "--quiet"]) == 0
    output = capsys.readouterr().out
    assert "resuming the bag-of-words baseline" in output and "mean-vectors (bag of words)" in output
    assert json.loads((run_dir / "baseline" / "metrics.json").read_text())["test"] is not None


# --------------------------------------------------------------------------
# 5. data checked before the first epoch
# --------------------------------------------------------------------------


def test_a_ternary_node_in_the_test_split_is_named_before_training(tmp_path, capsys):
    data_dir = synthetic_sst(tmp_path / "data")
    test_file = replace_line(data_dir / "sst" / "test.txt", 4, "(2 (2 a) (2 b) (2 c))")
    assert main(["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert f"{test_file}:5: " in error and "3 children" in error
    assert not (tmp_path / "run" / "log.jsonl").exists()


def test_an_empty_sst2_split_is_named_before_training(tmp_path, capsys):
    data_dir = synthetic_sst(tmp_path / "data")
    (data_dir / "sst" / "test.txt").write_text("(2 (2 neutral) (2 words))\n")
    assert main(["train", *TINY, "--task", "sst2", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]) == 2
    assert "the test split of sst2 is empty" in capsys.readouterr().err


def test_eval_of_the_test_split_reads_only_the_test_file(tmp_path, capsys):
    data_dir = synthetic_sst(tmp_path / "data")
    run_dir = tmp_path / "run"
    assert main(["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--out", str(run_dir)]) == 0
    for split in ("train", "dev"):
        (data_dir / "sst" / f"{split}.txt").unlink()
    capsys.readouterr()
    assert main(["eval", "--run", str(run_dir), "--split", "test"]) == 0
    assert json.loads(capsys.readouterr().out)["sentences"] == 30


def test_summary_names_a_damaged_metrics_file(finished_run, capsys):
    (finished_run / "metrics.json").write_text('{"model": ')
    assert main(["summary", str(finished_run)]) == 1
    assert f"{finished_run / 'metrics.json'}: damaged run file" in capsys.readouterr().err


# --------------------------------------------------------------------------
# a run killed with SIGKILL at several moments, resumed, then evaluated
# --------------------------------------------------------------------------


def npcomp_process(*argv, **kwargs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen(
        [sys.executable, "-m", "npcomp", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_sigkill_at_several_moments_then_resume(data_dir, tmp_path):
    """A small SST slice; kills after the 1st, 3rd and 6th dev evaluations, each
    with a little more delay; every resumed run completes with the
    uninterrupted run's test metrics, and eval reads it.  The reference and
    the three runs to kill train side by side (each its own process and run
    directory), as do the three resumes and the three evals: the test waits
    on the slowest of each, not on the sum of them."""
    lines = {
        split: (data_dir / "sst" / f"{split}.txt").read_text().splitlines()[:size]
        for split, size in (("train", 120), ("dev", 40), ("test", 40))
    }
    slice_dir = write_sst(tmp_path / "slice", lines)
    argv = [
        "train",
        "--task",
        "sst5",
        "--data-dir",
        str(slice_dir),
        "--dim",
        "8",
        "--embedding-dim",
        "8",
        "--epochs",
        "3",
        "--evals-per-epoch",
        "3",
        "--batch-size",
        "10",
        "--quiet",
        "--no-baseline",
    ]
    reference = npcomp_process(*argv, "--out", str(tmp_path / "reference"))
    kills = {
        tmp_path / f"killed-{kill_after}": (kill_after, delay) for kill_after, delay in ((1, 0.0), (3, 0.05), (6, 0.1))
    }
    running = {run_dir: npcomp_process(*argv, "--out", str(run_dir)) for run_dir in kills}
    _kill_when_logged(running, kills, deadline=time.monotonic() + 300)
    assert reference.wait(timeout=300) == 0, reference.stderr.read()
    expected = json.loads((tmp_path / "reference" / "metrics.json").read_text())["test"]
    resumed = {run_dir: npcomp_process("train", "--resume", str(run_dir), "--quiet") for run_dir in kills}
    for run_dir, process in resumed.items():
        assert process.wait(timeout=300) == 0, process.stderr.read()
        assert json.loads((run_dir / "metrics.json").read_text())["test"] == expected
    evaluated = {run_dir: npcomp_process("eval", "--run", str(run_dir)) for run_dir in kills}
    for run_dir, process in evaluated.items():
        assert process.wait(timeout=300) == 0, process.stderr.read()
        assert json.loads(process.stdout.read())["root_acc"] == expected["root_acc"]
        assert evaluation_points(run_dir) == evaluation_points(tmp_path / "reference")


def _kill_when_logged(running: dict, kills: dict, deadline: float) -> None:
    """SIGKILL each process of ``running`` ({run dir: process}) ``delay``
    seconds after its run has a checkpoint and its log holds ``kill_after``
    evaluation or epoch records (``kills``: {run dir: (kill_after, delay)}),
    or when it has ended, or at ``deadline`` (time.monotonic)."""
    due = {}
    while running:
        now = time.monotonic()
        for run_dir, process in list(running.items()):
            kill_after, delay = kills[run_dir]
            log = run_dir / "log.jsonl"
            if run_dir not in due and (
                now >= deadline
                or process.poll() is not None
                or (
                    (run_dir / "checkpoint.npz").is_file()
                    and sum('"evaluation"' in line or '"epoch"' in line for line in log.read_text().splitlines())
                    >= kill_after
                )
            ):
                due[run_dir] = now + delay
            if run_dir in due and now >= due[run_dir]:
                process.send_signal(signal.SIGKILL)
                process.wait()
                del running[run_dir]
        time.sleep(0.005)


def evaluation_points(run_dir: Path) -> list:
    """The epochs done at each dev evaluation its log records (1.5: mid-epoch 2)."""
    return [
        record.get("at", record.get("epoch"))
        for record in RunDirectory(run_dir).log_records()
        if record["event"] in ("evaluation", "epoch")
    ]


def killed_at_an_evaluation(data_dir: Path, run_dir: Path, evaluations: int) -> None:
    """A run of 2 epochs, 3 dev evaluations each, killed (SIGKILL) the moment
    its log holds ``evaluations`` of them."""
    process = npcomp_process(
        "train",
        "--task",
        "sst5",
        "--data-dir",
        str(data_dir),
        "--dim",
        "4",
        "--embedding-dim",
        "4",
        "--epochs",
        "2",
        "--evals-per-epoch",
        "3",
        "--batch-size",
        "5",
        "--quiet",
        "--no-baseline",
        "--out",
        str(run_dir),
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if len(evaluation_points(run_dir)) >= evaluations:
            break
        time.sleep(0.001)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert len(evaluation_points(run_dir)) == evaluations


def test_a_resumed_run_logs_each_evaluation_once(tmp_path):
    """Killed the moment an evaluation is logged, and killed after its
    checkpoint but before its record (the record dropped from the log, as
    such a kill leaves it): resumed, each log holds every evaluation once,
    in order."""
    data_dir = synthetic_sst(tmp_path / "data")
    every = [round(epoch + k / 3, 4) for epoch in (0, 1) for k in (1, 2, 3)]
    killed_at_an_evaluation(data_dir, tmp_path / "logged", 2)
    shutil.copytree(tmp_path / "logged", tmp_path / "checkpoint only")
    log = tmp_path / "checkpoint only" / "log.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:-1]))
    assert len(evaluation_points(tmp_path / "checkpoint only")) == 1
    # the two resumes run side by side, each in its own run directory
    resumed = {
        case: npcomp_process("train", "--resume", str(tmp_path / case), "--quiet")
        for case in ("logged", "checkpoint only")
    }
    for case, process in resumed.items():
        run_dir = tmp_path / case
        assert process.wait(timeout=120) == 0, process.stderr.read()
        assert evaluation_points(run_dir) == every, case
        events = [record["event"] for record in RunDirectory(run_dir).log_records()]
        assert events.count("resumed") == 1 and events.count("start") == 1


# --------------------------------------------------------------------------
# 3, 7. readers name the file and line (or byte offset) of what they cannot read
# --------------------------------------------------------------------------


def test_an_undecodable_byte_in_an_sst_file_is_named(tmp_path, capsys):
    data_dir = synthetic_sst(tmp_path / "data")
    dev = data_dir / "sst" / "dev.txt"
    data = dev.read_bytes()
    second_line = data.index(b"\n") + 1
    dev.write_bytes(data[: second_line + 5] + b"\xff" + data[second_line + 5 :])
    assert main(["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert f"{dev}:2: byte 0xff at column 6 (byte offset {second_line + 5}) is not UTF-8 text" in error


def test_a_utf16_sst_file_is_named_as_such(tmp_path, capsys):
    data_dir = synthetic_sst(tmp_path / "data")
    test_file = data_dir / "sst" / "test.txt"
    test_file.write_bytes(test_file.read_text().encode("utf-16"))
    assert main(["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]) == 2
    assert f"{test_file}: UTF-16 text" in capsys.readouterr().err


def test_predicts_stdin_names_an_undecodable_line(finished_run, capsys, monkeypatch):
    stdin = io.TextIOWrapper(io.BytesIO(b"good film\nbad \xfffilm\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    capsys.readouterr()
    assert main(["predict", "--run", str(finished_run)]) == 2
    assert "<stdin>:2: byte 0xff at column 5" in capsys.readouterr().err


def test_a_twenty_digit_label_is_named(tmp_path, capsys):
    data_dir = synthetic_sst(tmp_path / "data")
    train_file = replace_line(data_dir / "sst" / "train.txt", 2, "(12345678901234567890 (2 a) (2 b))")
    assert main(["train", *TINY, "--task", "sst5", "--data-dir", str(data_dir), "--out", str(tmp_path / "run")]) == 2
    assert f"{train_file}:3: label '12345678901234567890' is far too large" in capsys.readouterr().err


def write_word2vec_binary(path: Path, words, vectors):
    with open(path, "wb") as handle:
        handle.write(f"{len(words)} {vectors.shape[1]}\n".encode())
        for word, vector in zip(words, vectors):
            handle.write(word.encode() + b" " + vector.astype("<f4").tobytes() + b"\n")


def test_vector_files_byte_order_mark_gzip_and_dimension(tmp_path):
    import gzip
    from npcomp.data.readers.vectors import read_vectors
    from npcomp.errors import DataError

    rows = {"the": [1.0, 2.0, 3.0], "film": [4.0, 5.0, 6.0], "good": [7.0, 8.0, 9.0]}
    text = "".join(f"{word} {' '.join(map(str, vector))}\n" for word, vector in rows.items())
    plain = tmp_path / "v.txt"
    plain.write_bytes(b"\xef\xbb\xbf" + text.encode())
    words, vectors = read_vectors(plain)
    assert words == list(rows) and vectors.tolist() == list(rows.values())  # "the", not "\ufeffthe"
    zipped = tmp_path / "v.txt.gz"
    zipped.write_bytes(gzip.compress(text.encode()))
    assert read_vectors(zipped).words == list(rows)
    binary = tmp_path / "v.bin"
    write_word2vec_binary(binary, list(rows), np.array(list(rows.values())))
    binary_zipped = tmp_path / "v.bin.gz"
    binary_zipped.write_bytes(gzip.compress(binary.read_bytes()))
    assert read_vectors(binary_zipped).vectors.tolist() == list(rows.values())
    # a word with a space on line 1 no longer sets the dimension
    spaced = tmp_path / "spaced.txt"
    spaced.write_text("new york 1 2 3\n" + text)
    assert read_vectors(spaced).words == ["new york", *rows]
    odd = tmp_path / "odd.txt"
    odd.write_text(text + "cut 1 2\n")
    with pytest.raises(
        DataError,
        match=r"odd.txt:4: expected 3 values after the word, found 2 "
        r"\(the dimension was set by most of the first 4 lines\)",
    ):
        read_vectors(odd)
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(zipped.read_bytes()[:-12])
    with pytest.raises(DataError, match="broken.txt.gz: damaged gzip file"):
        read_vectors(broken)


# --------------------------------------------------------------------------
# found by trying hostile variants of the findings above
# --------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["missing optimiser state", "parameters of another size"])
def test_a_checkpoint_whose_arrays_do_not_fit_the_run_is_named(finished_run, capsys, damage):
    path = finished_run / "checkpoint.npz"
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    if damage == "missing optimiser state":
        del arrays["optimizer.sum_squares"]
        expected = "optimizer.sum_squares missing"
    else:
        arrays["params"] = arrays["params"][:-3]
        expected = "params of shape"
    np.savez(path, **arrays)
    capsys.readouterr()
    assert main(["train", "--resume", str(finished_run), "--quiet"]) == 1
    error = capsys.readouterr().err
    assert f"{path}: damaged run file, {expected}" in error and "internal error" not in error


def test_a_write_that_fails_names_the_file_and_keeps_the_old_version(finished_run):
    """A full disk while a run file is written (its temporary file on /dev/full,
    where every write fails with ENOSPC)."""
    from npcomp.runfiles.rundir import RunFileError

    before = (finished_run / "metrics.json").read_bytes()
    (finished_run / "metrics.json.tmp").symlink_to("/dev/full")
    with pytest.raises(
        RunFileError,
        match=r"metrics.json: could not be written \(No space "
        r"left on device\); its previous version is kept",
    ):
        RunDirectory(finished_run).write_json("metrics.json", {"big": "x" * 100_000})
    assert (finished_run / "metrics.json").read_bytes() == before
    assert not (finished_run / "metrics.json.tmp").exists()


def test_a_byte_order_mark_before_a_word2vec_header(tmp_path):
    from npcomp.data.readers.vectors import read_vectors

    path = tmp_path / "v.txt"
    path.write_bytes(b"\xef\xbb\xbf2 3\nthe 1 2 3\nfilm 4 5 6\n")
    vectors = read_vectors(path)
    assert vectors.words == ["the", "film"] and vectors.dim == 3


@pytest.mark.parametrize("record", ["[1, 2, 3]", "null", "no config", "no test metric"])
def test_summary_names_a_metrics_file_of_the_wrong_shape(finished_run, capsys, record):
    path = finished_run / "metrics.json"
    metrics = json.loads(path.read_text())
    if record == "no config":
        del metrics["config"]
    elif record == "no test metric":
        del metrics["test"]["root_acc"]
    path.write_text(json.dumps(metrics) if record.startswith("no ") else record)
    capsys.readouterr()
    assert main(["summary", str(finished_run)]) == 1
    error = capsys.readouterr().err
    assert f"{path}: damaged run file" in error and "internal error" not in error


def test_a_baseline_killed_before_its_checkpoint_restarts_with_the_shared_options(tmp_path, monkeypatch, capsys):
    import npcomp.training.trainer

    run_dir = tmp_path / "run"
    real = npcomp.training.trainer.warm_up

    def warm_up(model, *args):
        if type(model.cell).__name__ == "MeanVectors":
            raise KeyboardInterrupt
        return real(model, *args)

    monkeypatch.setattr(npcomp.training.trainer, "warm_up", warm_up)
    argv = ["train", "--dim", "8", "--embedding-dim", "8", "--epochs", "2", "--lr", "0.2", "--quiet"]
    assert main([*argv, "--out", str(run_dir)]) == 130
    assert not (run_dir / "baseline" / "checkpoint.npz").exists()
    monkeypatch.setattr(npcomp.training.trainer, "warm_up", real)
    assert main(["train", "--resume", str(run_dir), "--quiet"]) == 0
    config = json.loads((run_dir / "baseline" / "metrics.json").read_text())["config"]
    assert config["epochs"] == 2 and config["lr"] == 0.2


def test_a_rate_beyond_float32_is_refused_without_warnings(tmp_path, capsys):
    assert main(["train", *TINY, "--lr", "1e300", "--out", str(tmp_path / "run")]) == 2
    error = capsys.readouterr().err
    assert "--lr: 1e+300 is beyond the range of float32" in error
    assert "RuntimeWarning" not in error and not (tmp_path / "run").exists()


def test_predict_into_a_closed_pipe_stops_quietly(finished_run):
    """`npcomp predict ... | head -1`: the reader goes away after one line.
    Right-branching trees asked for, so nothing is printed with or without the
    parse extra (its absence is otherwise noted on stderr)."""
    # 4000 lines print about 600 KiB of predictions, ten times what a pipe
    # holds (64 KiB on Linux): the writer is still writing when the reader goes
    sentences = "a good film\n" * 4000
    process = npcomp_process("predict", "--run", str(finished_run), "--tree", "right", stdin=subprocess.PIPE)
    process.stdin.write(sentences)
    process.stdin.close()
    first = process.stdout.readline()
    process.stdout.close()
    assert process.wait(timeout=120) == 0
    assert json.loads(first)["label"] in range(5)
    assert process.stderr.read() == ""


def test_the_same_command_twice_takes_a_fresh_default_directory(tmp_path, monkeypatch, capsys):
    """A default job a user cannot rerun is a trap: the second run goes beside the first."""
    monkeypatch.chdir(tmp_path)
    assert main(["train", *TINY]) == 0
    assert main(["train", *TINY]) == 0
    out = capsys.readouterr().out
    first = default_run_dir(build_parser().parse_args(["train", *TINY]))
    second = first.with_name(first.name + "-2")
    assert f"-> {first}\n" in out and f"-> {second}\n" in out
    assert (tmp_path / first / "metrics.json").is_file()
    assert (tmp_path / second / "metrics.json").is_file()
