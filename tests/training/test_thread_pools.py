"""The thread pools npcomp computes with (``npcomp/training/thread_pools.py``):
pinned to one BLAS thread for the length of a public call and given back
after, on an exception too, nested calls harmless, forked helpers pinned
as their parent; and a user's script, which loaded NumPy (with OpenBLAS on
two threads) before npcomp, fits a TreeClassifier to the parameters
`npcomp train` finds with the same options and seed, bit for bit, on one
compute thread and on two (helper processes), its BLAS pools at one thread
during the fit and at the script's own count after."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from npcomp.configuration.options import command_line
from npcomp.training.thread_pools import BLAS_THREADS, pinned_thread_pools

PACKAGE = Path(__file__).resolve().parents[2] / "npcomp"
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
# large enough products that OpenBLAS splits them over two threads (and rounds
# otherwise than on one), small enough for an epoch of the synthetic treebank
# in a few seconds
OPTIONS = dict(dim=32, embedding_dim=32, epochs=1, seed=5, train_eval=False)
COMPUTE_THREADS = (1, 2)


def _blas_threads() -> list:
    """The thread counts of the BLAS pools loaded in this process."""
    return sorted({pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"})


def _two_blas_threads():
    """The caller's own limit, two BLAS threads (skip where OpenBLAS keeps one)."""
    limits = threadpool_limits(limits=2, user_api="blas")
    if _blas_threads() != [2]:
        limits.restore_original_limits()
        pytest.skip(f"this BLAS runs on {_blas_threads()} threads, not 2")
    return limits


def test_pinned_for_the_call_and_given_back_after():
    user = _two_blas_threads()
    try:
        with pinned_thread_pools():
            assert _blas_threads() == [BLAS_THREADS]
            with pinned_thread_pools():  # a nested call: already pinned
                assert _blas_threads() == [BLAS_THREADS]
            assert _blas_threads() == [BLAS_THREADS]  # the inner one restores nothing
        assert _blas_threads() == [2]
        with pytest.raises(ZeroDivisionError), pinned_thread_pools():
            1 / 0
        assert _blas_threads() == [2]

        @pinned_thread_pools()
        def threads_inside():
            return _blas_threads()

        assert threads_inside() == [BLAS_THREADS] and _blas_threads() == [2]
    finally:
        user.restore_original_limits()


def _report_blas_threads(connection) -> None:
    connection.send(_blas_threads())
    connection.close()


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(),
    reason="no fork on this platform: shard helpers are threads here",
)
def test_a_process_forked_inside_keeps_the_pinned_pools():
    """The shards' helper processes are forked inside the trainer's pinned call."""
    user = _two_blas_threads()
    context = multiprocessing.get_context("fork")
    try:
        with pinned_thread_pools():
            parent_end, child_end = context.Pipe()
            helper = context.Process(target=_report_blas_threads, args=(child_end,))
            helper.start()
            seen = parent_end.recv()
            helper.join()
        assert seen == [BLAS_THREADS]
    finally:
        user.restore_original_limits()


def test_no_kernel_starts_a_numba_thread_pool():
    """numba's threads are left as they are: no kernel is compiled parallel."""
    parallel = [
        f"{path.relative_to(PACKAGE.parent)}:{number}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bn?jit\(.*\bparallel\s*=\s*True|\bprange\(", line)
    ]
    assert not parallel, parallel


# what a user's script does: NumPy (and SciPy) first, their BLAS on two
# threads, then npcomp; it fits at each compute thread count, saving the
# parameters, and reports the BLAS pools' threads during and after
USER_SCRIPT = r"""
import json, sys
import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_info

def blas_threads():
    return sorted({pool["num_threads"] for pool in threadpool_info()
                   if pool["user_api"] == "blas"})

report = {"before": blas_threads(), "fits": []}
import npcomp
from npcomp.data.datasets.synthetic import synthetic_splits
options, out = json.loads(sys.argv[1]), sys.argv[2]
splits = synthetic_splits(seed=options["seed"])
for threads in json.loads(sys.argv[3]):
    during = []
    def look(at, dev, metrics):
        during.append(blas_threads())
    classifier = npcomp.TreeClassifier(threads=threads, callbacks=(look,), **options)
    classifier.fit(splits["train"], dev=splits["dev"], test=splits["test"])
    after_fit = blas_threads()
    classifier.predict_proba(splits["test"][:5])
    np.savez(f"{out}/estimator-{threads}.npz", **dict(classifier.params_.items()))
    report["fits"].append({"threads": threads, "during": during, "after_fit": after_fit,
                           "after_predict": blas_threads(),
                           "losses": [epoch["train_loss"] for epoch in classifier.metrics_["epochs"]]})
print(json.dumps(report))
"""


def _environment(**variables) -> dict:
    environment = {name: value for name, value in os.environ.items() if name not in THREAD_VARIABLES}
    environment.update(variables)
    return environment


def test_a_script_that_loaded_numpy_first_fits_what_npcomp_train_finds(tmp_path):
    """`npcomp train` (it pins BLAS before NumPy loads) at 1 and 2 compute
    threads, beside a script that imported NumPy with OpenBLAS on two
    threads: the same parameters, bit for bit, and the same losses."""
    commands = {
        threads: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "npcomp",
                "train",
                "--model",
                "treelstm-nary",
                "--task",
                "synthetic",
                *command_line(OPTIONS),
                "--no-baseline",
                "--threads",
                str(threads),
                "--quiet",
                "--out",
                str(tmp_path / f"run-{threads}"),
            ],
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for threads in COMPUTE_THREADS
    }
    script = subprocess.run(
        [sys.executable, "-c", USER_SCRIPT, json.dumps(OPTIONS), str(tmp_path), json.dumps(COMPUTE_THREADS)],
        env=_environment(OPENBLAS_NUM_THREADS="2"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    for command in commands.values():
        _, errors = command.communicate(timeout=600)
        assert command.returncode == 0, errors
    assert script.returncode == 0, script.stderr
    report = json.loads(script.stdout.splitlines()[-1])
    # the script's BLAS runs on two threads: unpinned, it would round otherwise
    assert report["before"] == [2]
    for fit in report["fits"]:
        threads = fit["threads"]
        assert fit["during"] and all(seen == [BLAS_THREADS] for seen in fit["during"])
        assert fit["after_fit"] == [2] and fit["after_predict"] == [2]
        run = tmp_path / f"run-{threads}"
        metrics = json.loads((run / "metrics.json").read_text())
        assert fit["losses"] == [epoch["train_loss"] for epoch in metrics["epochs"]]
        theirs = np.load(run / "model.npz")
        ours = np.load(tmp_path / f"estimator-{threads}.npz")
        assert ours.files
        for name in ours.files:
            np.testing.assert_array_equal(ours[name], theirs[f"param.{name}"], err_msg=f"{name} at {threads} threads")
