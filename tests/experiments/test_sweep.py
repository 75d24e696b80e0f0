"""`npcomp sweep` on real Dask clusters of worker processes on 127.0.0.1 (no
mocks): run directories and statistics, a seed equal to a plain `npcomp
train`, a worker killed mid-run, a finished sweep run again, a failing
setting, the threads a run sees, bad SPEC files named by file and line, and
a SWEEP_DIR holding another sweep.

The runs are tiny (synthetic task, d = 4, one epoch, no bag-of-words
baseline) except the killed one, which must still be training when its
worker is killed; every process trains on a smaller synthetic treebank
(conftest.small_synthetic_sweeps), Dask's worker processes included."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from npcomp.cli import main
from npcomp.experiments.sweep_plan import PlannedRun, predating_options, run_state
from conftest import small_synthetic_sweeps

distributed = pytest.importorskip("distributed")

TINY = ["--task", "synthetic", "--dim", "4", "--embedding-dim", "4", "--epochs", "1", "--no-baseline"]
GRID = ["--seeds", "1-3", "--grid", "lr=0.05,0.1"]
SETTINGS = {"lr0.05": 0.05, "lr0.1": 0.1}


def metrics_of(run_dir) -> dict:
    return json.loads((run_dir / "metrics.json").read_text())


def log_of(run_dir) -> list:
    return [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]


def evaluations(log: list) -> list:
    """The epochs done at each dev evaluation of a log (2.5: mid-epoch 3)."""
    return [
        record["at"] if record["event"] == "evaluation" else record["epoch"]
        for record in log
        if record["event"] in ("evaluation", "epoch")
    ]


@pytest.fixture(scope="module", autouse=True)
def sizes():
    """The synthetic treebank's (train, dev, test) sentences, in this
    process and in every worker of the module's sweeps."""
    with small_synthetic_sweeps() as sizes:
        yield sizes


@pytest.fixture(scope="module")
def finished_sweep(tmp_path_factory):
    """2 settings x 3 seeds on the sweep's own 2-worker LocalCluster:
    (SWEEP_DIR, exit status, seconds)."""
    sweep_dir = tmp_path_factory.mktemp("sweep") / "sweep"
    start = time.perf_counter()
    status = main(["sweep", *TINY, *GRID, "--workers", "2", "--quiet", "--out", str(sweep_dir)])
    return sweep_dir, status, time.perf_counter() - start


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 single-thread worker processes on 127.0.0.1, as
    `dask scheduler` + `dask worker --nthreads 1` would give, for sweeps run
    with --scheduler; a Client of the test's own on it."""
    import dask

    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
        local = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
        )
    client = distributed.Client(local)
    yield local, client
    client.close()
    local.close()


def test_every_run_directory_and_the_statistics(finished_sweep, sizes):
    sweep_dir, status, seconds = finished_sweep
    print(f"6 tiny runs on a new 2-worker LocalCluster: {seconds:.1f} s")
    assert status == 0
    results = json.loads((sweep_dir / "sweep.json").read_text())
    assert (results["runs_planned"], results["finished"], results["failed"]) == (6, 6, 0)
    assert [record["setting"] for record in results["settings"]] == list(SETTINGS)
    for record in results["settings"]:
        run_dirs = [sweep_dir / "runs" / f"{record['setting']}-s{seed}" for seed in (1, 2, 3)]
        runs = [metrics_of(run_dir) for run_dir in run_dirs]
        assert [run["config"]["lr"] for run in runs] == [SETTINGS[record["setting"]]] * 3
        assert [run["config"]["seed"] for run in runs] == [1, 2, 3]
        assert {(run["dev"]["sentences"], run["test"]["sentences"]) for run in runs} == {sizes[1:]}
        for split in ("test", "dev"):
            for metric in ("root_acc", "all_acc"):
                values = np.array([run[split][metric] for run in runs])
                summary = record[f"{split}_{metric}"]
                assert summary["n"] == 3
                assert summary["mean"] == pytest.approx(values.mean(), abs=1e-12)
                assert summary["std"] == pytest.approx(values.std(ddof=1), abs=1e-12)
                assert (summary["median"], summary["min"], summary["max"]) == (
                    pytest.approx(np.median(values)),
                    values.min(),
                    values.max(),
                )
                low, high = stats.t.interval(0.95, 2, loc=values.mean(), scale=stats.sem(values))
                assert summary["ci95"] == [pytest.approx(low), pytest.approx(high)]
    best = max(results["settings"], key=lambda record: record["dev_root_acc"]["mean"])
    assert results["best"]["setting"] == best["setting"]
    assert results["best"]["metric"] == "dev_root_acc"
    table = (sweep_dir / "sweep.md").read_text()
    for name in SETTINGS:
        assert f"| {name} | 3 |" in table
    assert f"**{best['setting']}**" in table


def test_a_sweeps_run_is_an_ordinary_run_directory(finished_sweep, capsys):
    sweep_dir, status, _ = finished_sweep
    run_dir = sweep_dir / "runs" / "lr0.1-s2"
    capsys.readouterr()
    assert main(["eval", "--run", str(run_dir), "--split", "test"]) == 0
    assert json.loads(capsys.readouterr().out)["root_acc"] == metrics_of(run_dir)["test"]["root_acc"]
    assert main(["summary", "--json", *map(str, sorted((sweep_dir / "runs").iterdir()))]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2  # a group per setting


def test_one_seed_equals_a_plain_train(finished_sweep, tmp_path):
    """The same options and seed through `npcomp train` train the same run."""
    from threadpoolctl import threadpool_limits

    sweep_dir, status, _ = finished_sweep
    with threadpool_limits(limits=1):
        assert (
            main(
                [
                    "train",
                    *TINY,
                    "--lr",
                    "0.1",
                    "--seed",
                    "2",
                    "--threads",
                    "1",
                    "--quiet",
                    "--out",
                    str(tmp_path / "plain"),
                ]
            )
            == 0
        )
    plain, swept = metrics_of(tmp_path / "plain"), metrics_of(sweep_dir / "runs" / "lr0.1-s2")
    assert swept["test"] == plain["test"] and swept["dev"] == plain["dev"]
    assert [epoch["train_loss"] for epoch in swept["epochs"]] == [epoch["train_loss"] for epoch in plain["epochs"]]
    assert {key: value for key, value in swept["config"].items() if key != "data_dir"} == {
        key: value for key, value in plain["config"].items() if key != "data_dir"
    }


def test_a_sweeps_files_hold_no_absolute_path(finished_sweep, cluster, tmp_path):
    """The data directory was given absolute: plan.json, sweep.json and the
    runs' metrics and logs record it relative, and each run keeps the counts
    of its figures (the sweep's own local cluster made ``finished_sweep``;
    this one runs on the module's cluster, as on a scheduler of one's own)."""
    from npcomp.runfiles.figure_counts import COUNTS
    from npcomp.runfiles.run_paths import absolute_values

    sweep_dir, status, _ = finished_sweep
    again = tmp_path / "again"
    assert (
        main(
            [
                "sweep",
                *TINY,
                "--seeds",
                "1",
                "--data-dir",
                str(Path("data").resolve()),
                "--scheduler",
                cluster[0].scheduler_address,
                "--quiet",
                "--out",
                str(again),
            ]
        )
        == 0
    )
    for directory in (sweep_dir, again):
        records = [json.loads((directory / name).read_text()) for name in ("plan.json", "sweep.json")]
        for run in (directory / "runs").iterdir():
            records.append(json.loads((run / "metrics.json").read_text()))
            records += [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
            assert (run / COUNTS).is_file()
        assert not [value for record in records for value in absolute_values(record)]
    assert json.loads((again / "plan.json").read_text())["specs"][0]["base"]["data_dir"] == "data"


def test_the_threads_a_run_sees(finished_sweep, cluster, tmp_path):
    """Each run reports the threads it computed with (npcomp's --threads) and
    the BLAS and numba thread counts it saw inside its worker: one per
    compute thread."""
    sweep_dir, status, _ = finished_sweep
    results = json.loads((sweep_dir / "sweep.json").read_text())
    for run in results["runs"].values():
        assert run["threads"] == {"compute": 1, "blas": 1, "numba": 1}
    local, _ = cluster
    two = tmp_path / "two"
    assert (
        main(
            [
                "sweep",
                *TINY,
                "--threads-per-run",
                "2",
                "--scheduler",
                local.scheduler_address,
                "--quiet",
                "--out",
                str(two),
            ]
        )
        == 0
    )
    run = json.loads((two / "sweep.json").read_text())["runs"]["base-s1"]
    assert run["threads"] == {"compute": 2, "blas": 1, "numba": 1}
    assert metrics_of(two / "runs" / "base-s1")["config"]["threads"] == 2


def test_running_a_finished_sweep_again_trains_nothing(finished_sweep, capsys):
    sweep_dir, status, _ = finished_sweep
    logs = {path: path.read_text() for path in (sweep_dir / "runs").glob("*/log.jsonl")}
    capsys.readouterr()
    start = time.perf_counter()
    assert main(["sweep", *TINY, *GRID, "--workers", "2", "--quiet", "--out", str(sweep_dir)]) == 0
    seconds = time.perf_counter() - start
    print(f"the finished sweep again: {seconds:.2f} s")
    assert seconds < 5
    assert "6 finished before, 0 to resume, 0 to start" in capsys.readouterr().out
    assert {path: path.read_text() for path in logs} == logs
    results = json.loads((sweep_dir / "sweep.json").read_text())
    assert results["finished"] == 6 and all(  # what the workers reported is kept
        run["threads"] == {"compute": 1, "blas": 1, "numba": 1} for run in results["runs"].values()
    )


def test_a_killed_worker_resumes_its_run(cluster, tmp_path, sizes):
    """SIGKILL to the worker training a run once it has a checkpoint: the
    scheduler resubmits the run, which resumes from that checkpoint (its
    log records it), and every run finishes with every epoch."""
    local, client = cluster
    sweep_dir = tmp_path / "sweep"
    epochs = 10
    argv = [
        "sweep",
        "--task",
        "synthetic",
        "--dim",
        "32",
        "--embedding-dim",
        "32",
        "--epochs",
        str(epochs),
        "--evals-per-epoch",
        "2",
        "--no-baseline",
        "--no-train-eval",
        "--seeds",
        "1-2",
        "--scheduler",
        local.scheduler_address,
        "--quiet",
        "--out",
        str(sweep_dir),
    ]
    statuses = []
    sweeping = threading.Thread(target=lambda: statuses.append(main(argv)))
    sweeping.start()
    victim, deadline = None, time.monotonic() + 120
    while victim is None and time.monotonic() < deadline and sweeping.is_alive():
        for run_dir in sorted((sweep_dir / "runs").glob("*")):
            if run_state(run_dir) == "resumable":  # a checkpoint, not finished
                victim = run_dir
                break
        time.sleep(0.02)
    assert victim is not None, "no run reached its first checkpoint"
    pids = client.run(os.getpid)
    worker = next(
        address for address, keys in client.processing().items() if any(f"-{victim.name}-" in str(key) for key in keys)
    )
    os.kill(pids[worker], signal.SIGKILL)
    done_before_the_kill = evaluations(log_of(victim))
    killed_at = time.monotonic()
    sweeping.join(timeout=240)
    assert not sweeping.is_alive() and statuses == [0]
    print(f"killed {victim.name}'s worker; the sweep finished {time.monotonic() - killed_at:.1f} s later")
    log = log_of(victim)
    events = [record["event"] for record in log]
    assert "resumed" in events, events
    assert events.count("start") == 1  # resumed, not started again
    # it went on from its latest checkpoint, which holds every evaluation
    # logged before the kill: each is logged once, in order
    after_resuming = evaluations(log[events.index("resumed") :])
    assert done_before_the_kill and after_resuming[0] > done_before_the_kill[-1]
    assert evaluations(log) == sorted(set(evaluations(log)))
    for run_dir in (sweep_dir / "runs").iterdir():
        metrics = metrics_of(run_dir)
        assert metrics["test"]["sentences"] == sizes[2]
        assert [epoch["epoch"] for epoch in metrics["epochs"]] == list(range(1, epochs + 1))
    results = json.loads((sweep_dir / "sweep.json").read_text())
    assert results["finished"] == 2 and results["runs"][victim.name]["resumed"] is True


def test_a_failing_setting_is_reported_and_the_others_finish(cluster, tmp_path, capsys):
    local, _ = cluster
    sweep_dir = tmp_path / "sweep"
    status = main(
        [
            "sweep",
            *TINY,
            "--grid",
            "lr=0.05,1e6",
            "--scheduler",
            local.scheduler_address,
            "--quiet",
            "--out",
            str(sweep_dir),
        ]
    )
    assert status == 1
    output = capsys.readouterr()
    assert "lr1e+06-s1 failed: training diverged" in output.out + output.err
    results = json.loads((sweep_dir / "sweep.json").read_text())
    runs = results["runs"]
    assert runs["lr0.05-s1"]["status"] == "finished"
    assert runs["lr1e+06-s1"]["status"] == "failed"
    assert "training diverged at epoch 1" in runs["lr1e+06-s1"]["error"]
    assert results["best"]["setting"] == "lr0.05"
    assert "lr1e+06-s1: training diverged" in (sweep_dir / "sweep.md").read_text()


def test_a_setting_refused_by_train_stops_the_sweep_before_it_starts(tmp_path, capsys):
    """Every setting is built into its run configuration first: lr = nan is
    named with its setting, exit status 2, nothing written."""
    status = main(["sweep", *TINY, "--grid", "lr=0.05,nan", "--out", str(tmp_path / "sweep")])
    assert status == 2
    error = capsys.readouterr().err
    assert "setting lrnan (the command line): --lr: must be a finite number > 0" in error
    assert not (tmp_path / "sweep").exists()


@pytest.mark.parametrize(
    "text, line, message",
    [
        ('seeds = [1, 2]\n[base]\ntask = "synthetic"\n[grid]\nlr = [0.05,\n', 5, "not valid TOML"),
        ("seeds = [1, 2]\n[base]\ntask = synthetic\n", 3, "not valid TOML"),
        (
            'seeds = "1-3"\n[base]\ntask = "synthetic"\n\n[grid]\nlrr = [0.05, 0.1]\n',
            6,
            "lrr is not an npcomp train option",
        ),
        ('[base]\ntask = "synthetic"\ndim = "four"\n', 3, "setting base"),
        ('[base]\ntask = "synthetic"\n[grid]\nlr = [0.05, nan]\n', 4, "--lr: must be a finite number > 0"),
        ('seeds = "5-1"\n[base]\ntask = "synthetic"\n', 1, "runs backwards"),
        ('[train]\ntask = "synthetic"\n', 1, "unknown entry 'train'"),
        ('[base]\ntask = "synthetic"\nout = "elsewhere"\n', 3, "out is set by the sweep"),
        ('[base]\ntask = "synthetic"\n[settings.small]\ndim = [4]\n', 4, "takes one value"),
        ('[base]\ntask = "synthetic"\n[settings.small]\nfixed-embeddings = 1\n', 4, "is a switch: true or false"),
        ("[grid]\nlr = 0.05\n", 2, "non-empty list"),
        ("[grid]\nlr = [0.05]\n[settings.a]\nlr = 0.1\n", 2, "lr is both in the grid"),
    ],
)
def test_a_bad_spec_is_named_by_file_and_line(tmp_path, capsys, text, line, message):
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    assert main(["sweep", str(spec), "--out", str(tmp_path / "sweep")]) == 2
    error = capsys.readouterr().err
    assert f"{spec}:{line}" in error and message in error, error
    assert not (tmp_path / "sweep").exists()


def test_a_spec_file_plans_the_runs(tmp_path):
    """Named settings combined with the grid, and the seeds."""
    from npcomp.experiments.sweep_plan import plan_runs
    from npcomp.experiments.sweep_spec import read_spec

    spec = tmp_path / "spec.toml"
    spec.write_text(
        'seeds = "1-2"\n[base]\ntask = "synthetic"\nepochs = 1\n[grid]\n'
        "lr = [0.05, 0.1]\n[settings.small]\ndim = 4\n[settings.wide]\ndim = 8\n"
        "fixed-embeddings = true\n"
    )
    runs = plan_runs(read_spec(spec))
    assert [run.name for run in runs] == [
        "small-lr0.05-s1",
        "small-lr0.05-s2",
        "small-lr0.1-s1",
        "small-lr0.1-s2",
        "wide-lr0.05-s1",
        "wide-lr0.05-s2",
        "wide-lr0.1-s1",
        "wide-lr0.1-s2",
    ]
    assert runs[-1].options == {"task": "synthetic", "epochs": 1, "dim": 8, "fixed_embeddings": True, "lr": 0.1}


def test_a_sweep_directory_holding_another_sweep_is_refused(finished_sweep, cluster, tmp_path, capsys):
    sweep_dir, status, _ = finished_sweep
    copied = tmp_path / "copy"
    shutil.copytree(sweep_dir, copied)
    capsys.readouterr()
    changed = ["sweep", *TINY, "--dim", "8", *GRID, "--out", str(copied)]
    assert main(changed) == 1
    error = capsys.readouterr().err
    assert "holds another sweep: its run lr0.05-s1 has other options (dim 4 there, 8 here)" in error
    assert "Nothing was changed" in error
    more_seeds = [
        "sweep",
        *TINY,
        "--seeds",
        "1-4",
        "--grid",
        "lr=0.05,0.1",
        "--scheduler",
        cluster[0].scheduler_address,
        "--quiet",
        "--out",
        str(copied),
    ]
    assert main(more_seeds) == 1
    assert "adds 2 runs (lr0.05-s4, ...)" in capsys.readouterr().err
    assert not (copied / "runs" / "lr0.05-s4").exists()
    assert main([*more_seeds, "--extend"]) == 0
    results = json.loads((copied / "sweep.json").read_text())
    assert results["finished"] == 8
    assert [record["test_root_acc"]["n"] for record in results["settings"]] == [4, 4]


def test_a_sweep_of_runs_made_before_shards_starts_its_new_runs_in_one_shard(finished_sweep, cluster, tmp_path):
    """Runs trained before minibatches had shards (configs without the key)
    computed each minibatch whole: the runs their sweep adds train so too,
    and the setting's statistics take them all; a sweep of newer runs
    trains in the default's shards."""
    sweep_dir, status, _ = finished_sweep
    plan = json.loads((sweep_dir / "plan.json").read_text())
    runs = [
        PlannedRun(name, record["setting"], record["seed"], record["options"]) for name, record in plan["runs"].items()
    ]
    assert predating_options(sweep_dir, runs) == {}
    assert {metrics_of(path.parent)["config"]["shards"] for path in (sweep_dir / "runs").glob("*/metrics.json")} == {2}
    old = tmp_path / "old"
    shutil.copytree(sweep_dir, old)
    for path in (old / "runs").glob("*/metrics.json"):
        metrics = json.loads(path.read_text())
        del metrics["config"]["shards"]
        path.write_text(json.dumps(metrics))
    assert predating_options(old, runs) == {"shards": 1}
    assert (
        main(
            [
                "sweep",
                *TINY,
                "--seeds",
                "1-4",
                "--grid",
                "lr=0.05,0.1",
                "--extend",
                "--scheduler",
                cluster[0].scheduler_address,
                "--quiet",
                "--out",
                str(old),
            ]
        )
        == 0
    )
    assert metrics_of(old / "runs" / "lr0.05-s4")["config"]["shards"] == 1
    results = json.loads((old / "sweep.json").read_text())
    assert [record["test_root_acc"]["n"] for record in results["settings"]] == [4, 4]


def live_processes(group: int) -> list:
    """The processes of a process group that are not zombies (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[2]) == group and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def test_a_worker_of_the_local_cluster_holds_one_run_at_a_time():
    """Dask's default saturation (1.1) gives a worker of one thread two
    runs, the second waiting there while another worker may be idle: the
    sweep's scheduler gives each worker one."""
    from npcomp.experiments.sweep_cluster import dask_client

    with dask_client(None, 2) as client:
        assert client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION) == 1.0


def test_ctrl_c_stops_the_cluster_and_leaves_every_run_resumable(tmp_path):
    """SIGINT to the command's process group, as the terminal sends it: exit
    status 130, no traceback from the workers, no process left, every run
    started resumable from its checkpoint."""
    sweep_dir = tmp_path / "sweep"
    command = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "npcomp",
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
            "1-2",
            "--workers",
            "2",
            "--quiet",
            "--out",
            str(sweep_dir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as a shell starts a command in the foreground: a test runner started
        # in the background ignores SIGINT, and its children would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while (
            time.monotonic() < deadline
            and command.poll() is None
            and not all(run_state(sweep_dir / "runs" / f"base-s{seed}") == "resumable" for seed in (1, 2))
        ):
            time.sleep(0.05)
        os.killpg(command.pid, signal.SIGINT)
        out, err = command.communicate(timeout=60)
        assert command.returncode == 130, err
        assert "interrupted, the cluster stopped" in err and "Traceback" not in err, err
        deadline = time.monotonic() + 10
        while live_processes(command.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not live_processes(command.pid)  # no worker left
    finally:  # a failed test leaves no sweep training on
        if live_processes(command.pid):
            os.killpg(command.pid, signal.SIGKILL)
            command.communicate()
    for seed in (1, 2):
        assert run_state(sweep_dir / "runs" / f"base-s{seed}") == "resumable"


def test_the_sweep_page_examples_plan_their_runs(tmp_path, monkeypatch):
    """The SPEC file and one-line sweep of docs/sweeps.md are accepted: every
    setting built into its run configuration, the run names as the page says."""
    import re
    import shlex

    import npcomp.cli
    from npcomp.experiments.sweep_jobs import check_settings
    from npcomp.runs.sweeps import build_spec
    from npcomp.configuration.options import OPTIONS
    from npcomp.experiments.sweep_plan import plan_runs
    from npcomp.experiments.sweep_spec import read_spec

    section = (Path(__file__).resolve().parents[2] / "docs" / "sweeps.md").read_text()
    toml = re.search(r"\n((?:    .*\n)+)\n`npcomp sweep sweep.toml", section)[1]
    spec_file = tmp_path / "sweep.toml"
    spec_file.write_text("\n".join(line[4:] for line in toml.splitlines()) + "\n")
    # the vector file named is looked up and its dimension read: a line of 50 values
    vectors = tmp_path / "data" / "vectors" / "glove.6B.50d.sst-sick.txt"
    vectors.parent.mkdir(parents=True)
    vectors.write_text("the" + " 0.5" * 50 + "\n")
    monkeypatch.chdir(tmp_path)
    spec = read_spec(spec_file)
    runs = plan_runs(spec)
    assert sorted({run.setting for run in runs}) == ["glove-lr0.05", "glove-lr0.1", "random-lr0.05", "random-lr0.1"]
    assert len(runs) == 20
    check_settings(spec, runs, threads=1)
    one_line = " ".join(re.search(r"\n    (npcomp sweep --model.*\\\n.*)\n", section)[1].replace("\\\n", " ").split())
    args = npcomp.cli.build_parser().parse_args(shlex.split(one_line)[1:])
    spec = build_spec(
        args.spec, args.seeds, args.grid, {name: value for name, value in vars(args).items() if name in OPTIONS}
    )
    runs = plan_runs(spec)
    assert [run.name for run in runs][:2] == ["lr0.05-s1", "lr0.05-s2"] and len(runs) == 10
    check_settings(spec, runs, threads=1)


def test_a_worker_compiles_its_kernels_on_a_first_sweep(tmp_path, sizes):
    """A first sweep after installing: numba's cache is empty, so the worker
    compiles the kernels (with NUMBA_NUM_THREADS unset, as in a fresh shell)
    and the run still finishes."""
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_NUM_THREADS"}
    environment["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")  # empty: nothing cached
    sweep_dir = tmp_path / "sweep"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "npcomp",
            "sweep",
            "--model",
            "recnn",
            *TINY,
            "--seeds",
            "1",
            "--workers",
            "1",
            "--quiet",
            "--out",
            str(sweep_dir),
        ],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert run_state(sweep_dir / "runs" / "base-s1") == "finished"
    assert metrics_of(sweep_dir / "runs" / "base-s1")["test"]["sentences"] == sizes[2]
