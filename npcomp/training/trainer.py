"""The training loop: a run's named steps, from reading its data to testing
its best model (``train``).

A run directory holds (docs/run-directories.md):

* ``metrics.json``: model, task, config, per-epoch records (train loss, dev
  and training-sentence accuracy: the learning curve), best epoch, dev and
  test metrics of the best-dev checkpoint (with the roots' confusion matrix,
  ``root_confusion[gold][predicted]``), training time and speed, the machine
  (CPU, NumPy's SIMD, BLAS, versions: ``machine.py``); rewritten
  after every dev evaluation, so a killed run keeps what it finished;
* ``model.npz``: the best-dev parameters by name, the config and the
  vocabulary (``model_files.py``);
* ``checkpoint.npz``: the parameters, optimiser state and random state at the
  latest dev evaluation (with the epoch's order and progress when that was
  inside an epoch), from which ``--resume`` continues (``checkpoints.py``);
* ``log.jsonl``: one JSON record per line (run start, every dev evaluation
  inside an epoch, every epoch, the end);
* ``predictions.jsonl``: the test split's per-sentence predictions by the
  best-dev model (``predictions.py``), written with the test metrics.

Given no run directory (``run_dir=None``) a run writes nothing: its files
are kept in memory instead (``run_in_memory.RunInMemory``; pass one to keep
them).  Given ``data``, it trains on those trees or sentence pairs instead of
reading ``config["task"]``'s files (``tasks.given_task``); ``callbacks`` hear
of every dev evaluation and may stop training early.

Dev is evaluated at the end of every epoch and, with ``evals_per_epoch`` > 1,
at evenly spaced points inside it (``best_at`` in metrics.json: the epochs
done at the selected evaluation, 2.5 for the middle of epoch 3; ``best_epoch``
the epoch it fell in).  Model selection uses dev root accuracy only (Pearson's
r on SICK); the test split is evaluated once, with the best-dev parameters, at
the end.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from npcomp.data.datasets import PAIR_TASKS
from npcomp.runfiles.checkpoints import epoch_in_progress, read_checkpoint, resumed_config, write_checkpoint
from npcomp.configuration.checks import check
from npcomp.configuration.defaults import with_defaults
from .evaluation import evaluate, format_metrics
from .memory import retain_freed_memory
from npcomp.runfiles.model_files import load_model, save_model
from .predictions import write_predictions
from .provenance import files_read, note_load, record_provenance
from npcomp.runfiles.run_in_memory import RunInMemory
from npcomp.runfiles.rundir import RunDirectory, RunFileError
from .run_data import named_classes
from npcomp.runfiles.run_paths import recorded_config, recorded_metrics
from .shards import start_shards
from .step import stop_run, train_step, warm_up
from .run_setup import Run, prepare_run
from .thread_pools import pinned_thread_pools


@dataclass
class EpochState:
    """An epoch under way: its minibatch order (a permutation of the training
    examples), the minibatches trained, the sums its record is made of, and
    the dev evaluations made inside it.  The checkpoint holds it between two
    evaluations of one epoch, so ``--resume`` continues from the last one."""

    order: np.ndarray
    done: int = 0
    loss_sum: float = 0.0
    wall_s: float = 0.0
    evaluations: list = field(default_factory=list)

    def progress(self) -> dict:
        return {"done": self.done, "loss_sum": self.loss_sum, "wall_s": self.wall_s, "evaluations": self.evaluations}


def evaluation_points(n_batches: int, evals_per_epoch: int) -> list:
    """After how many of an epoch's ``n_batches`` minibatches dev is evaluated:
    ``evals_per_epoch`` points spread evenly, the last at the epoch's end (fewer
    when the epoch has fewer minibatches)."""
    return sorted({math.ceil(n_batches * k / evals_per_epoch) for k in range(1, evals_per_epoch + 1)})


def write_metrics(directory: RunDirectory, metrics: dict) -> None:
    """``metrics.json``, its config's paths relative (``run_paths.py``)."""
    note_load(metrics)  # the machine's load beside the training time (provenance.py)
    directory.write_json("metrics.json", recorded_metrics(metrics))


@pinned_thread_pools()
def train(
    config: dict,
    run_dir: str | Path | RunDirectory | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = True,
    echo=print,
    data=None,
    callbacks=(),
    announce=None,
    built: bool = False,
) -> dict:
    """Train ``config`` into ``run_dir``; returns the metrics record.

    run_dir:   the run directory; None: nothing is written (kept in memory,
               then dropped); a ``RunInMemory`` keeps the run's files
    data:      a TaskData, or a dict {"train": ..., "dev": ..., "test": ...}
               of Trees (SickPairs for sick; test optional) to train on
               instead of ``config["task"]``'s files (``tasks.given_task``);
               given again to resume such a run
    callbacks: each called after every dev evaluation, once it is recorded, as
               ``callback(at, dev, metrics)``: ``at`` the epochs done (2.5: the
               middle of epoch 3), ``dev`` that evaluation's metrics, ``metrics``
               the run's record so far (``best_at``, ``dev``: the best one).  A
               true return stops training there: the best-dev model is then
               tested as at the end; ``metrics["stopped"]``: when, by which callback.
    announce:  called once a fresh run's directory is found usable, before
               anything is read (where a front end says what it trains)
    built:     ``config`` is as ``run_config.build_config`` made and checked
               it; else it takes the defaults it lacks and is checked here

    A fresh run refuses a directory holding a run unless ``overwrite`` (which
    keeps the old files aside until the new run has finished an epoch).  With
    ``resume`` the run continues from its checkpoint and ``config`` holds only
    the changes asked for (``RESUMABLE`` keys).  ``step.TrainingStopped`` when
    the loss, a gradient, a parameter or the optimiser's state stops being
    finite or the loss diverges."""
    setup_start = time.perf_counter()
    retain_freed_memory()  # the steps reuse their work arrays' pages (memory.py)
    directory = (
        run_dir if isinstance(run_dir, RunDirectory) else RunInMemory() if run_dir is None else RunDirectory(run_dir)
    )
    config, saved = _run_config(config, directory, resume, overwrite, announce, built)
    with files_read() as read:  # the data files' digests (provenance.py)
        run = prepare_run(config, directory, saved, echo, data)
    run.callbacks = tuple(callbacks)
    # a checkpoint holds the parameters and up to two optimiser states, written
    # beside the previous one: room for both, before anything is written
    directory.check_space(2 * 4 * run.params.flat.nbytes + (1 << 20))
    directory.create()
    try:
        resumed_epoch = _set_going(run, config, directory, saved, overwrite, read, setup_start)
        _epochs(run, directory, resumed_epoch, progress)
        _test(run)
    finally:
        if run.sharded is not None:
            run.sharded.close()
        if run.helper is not None:
            run.helper.shutdown()
        directory.unlock()
    return run.metrics


def _set_going(
    run: Run, config: dict, directory: RunDirectory, saved: dict | None, overwrite: bool, read, setup_start: float
):
    """A prepared run made ready for its first minibatch: started fresh or
    restored from ``saved`` (the epoch it resumes inside, else None), its
    provenance recorded (``read``: the files' digests), the kernels warmed
    up, the shards' helpers started."""
    if saved is None:
        _start(run, overwrite)
        resumed_epoch = None
    else:
        resumed_epoch = _restore(run, saved)
    record_provenance(run.metrics, run.config, read)
    tick = time.perf_counter()
    warm_up(run.model, run.params, run.optimizer, run.splits["train"], config)
    run.metrics["warm_up_s"] = time.perf_counter() - tick
    # what a user waits before the first epoch: reading the data and vectors, then
    # compiling the kernels (or loading them from numba's cache on later runs)
    run.metrics["setup_s"] = time.perf_counter() - setup_start
    # the shards' helpers; with helper processes the parameters and the
    # gradient move into memory they share (shards.py)
    run.sharded, run.params, run.helper = start_shards(
        run.model, run.params, run.grads, config["shards"], config.get("threads") or 1, directory.held_descriptors()
    )
    run.grads = run.sharded.grads
    return resumed_epoch


def _run_config(config: dict, directory: RunDirectory, resume: bool, overwrite: bool, announce, built: bool) -> tuple:
    """(the run's configuration, checked, and its checkpoint's record or
    None): a resumed run's own with the changes asked for, or a fresh run's
    once its directory is found usable (refused before anything is read);
    one ``built`` by ``run_config.build_config`` was checked there."""
    if resume:
        saved = read_checkpoint(directory)
        config = resumed_config(with_defaults(saved["config"]), config)
        check(config)
        return config, saved
    directory.check_usable(overwrite)
    if announce is not None:
        announce()
    if built:
        return dict(config), None
    config = with_defaults(config, saved=False)
    check(config)
    return config, None


def _epochs(run: Run, directory, resumed_epoch, progress: bool) -> None:
    """The run's epochs from the first it has not done (``resumed_epoch``:
    the state of a resumed one), until the last or a callback stops it."""
    start_epoch = len(run.metrics["epochs"]) + 1
    for epoch in range(start_epoch, run.config["epochs"] + 1):
        if resumed_epoch is None:
            state = _new_epoch(run, epoch)
        else:
            state, resumed_epoch = resumed_epoch, None
        _train_epoch(run, epoch, state, progress)
        directory.discard_replaced()  # a run it replaced is no longer needed
        if run.stopped:
            break


def _start(run: Run, overwrite: bool) -> None:
    """A fresh run: the directory's old run set aside if asked, the first log record."""
    directory = run.directory
    directory.check_usable(overwrite)  # again, now that the directory is locked
    if overwrite:
        aside = directory.set_aside()
        if aside is not None:
            run.echo(f"the run previously in {directory.path} is kept in {aside} until this one has finished an epoch")
    directory.append_log(
        {"event": "start", "config": recorded_config(run.config), "embedding": run.metrics["embedding"]}
    )


def _restore(run: Run, saved: dict):
    """A resumed run's parameters, optimiser, random state and metrics; the
    epoch under way (EpochState) when the checkpoint fell inside one."""
    expected = {"params": run.params.flat.shape}
    expected.update((name, state.shape) for name, state in run.optimizer.state_dict().items())
    for name, shape in expected.items():
        if name not in saved or saved[name].shape != shape:
            found = f"of shape {saved[name].shape}" if name in saved else "missing"
            raise RunFileError(
                f"{run.directory.checkpoint_path}: damaged run file, {name} {found} where the run's model needs {shape}"
            )
    run.params.flat[...] = saved["params"]
    run.optimizer.load_state_dict(saved)
    run.rng.bit_generator.state = saved["rng"]
    metrics = saved["metrics"]
    metrics["config"] = run.config
    run.metrics = metrics
    resumed_epoch = None
    in_progress = epoch_in_progress(saved)
    if in_progress is not None:
        order, progress = in_progress
        resumed_epoch = EpochState(order=order, **progress)
    done = len(metrics["epochs"])
    where = f"epoch {done}" + (f" and {resumed_epoch.done} minibatches of epoch {done + 1}" if resumed_epoch else "")
    _log_latest_evaluation(run.directory, metrics, resumed_epoch)
    run.directory.append_log({"event": "resumed", "after": where, "epochs": run.config["epochs"]})
    run.echo(f"resuming {run.directory.path} after {where}")
    return resumed_epoch


def _log_latest_evaluation(directory: RunDirectory, metrics: dict, resumed_epoch: EpochState | None) -> None:
    """The log record of the checkpoint's latest dev evaluation, appended if
    the run stopped after writing the checkpoint but before its record, so
    the log holds every evaluation once."""
    if resumed_epoch is not None and resumed_epoch.evaluations:
        latest = {"event": "evaluation", **resumed_epoch.evaluations[-1]}
    elif metrics["epochs"]:
        latest = {"event": "epoch", **metrics["epochs"][-1]}
    else:
        return

    def point(record: dict) -> tuple:
        return record.get("event"), record.get("at", record.get("epoch"))

    if point(latest) not in {point(record) for record in directory.log_records()}:
        directory.append_log(latest)


def _new_epoch(run: Run, epoch: int) -> EpochState:
    reset_every = run.config["adagrad_reset"]
    if reset_every and epoch > 1 and (epoch - 1) % reset_every == 0:
        run.optimizer.reset()  # Socher et al.'s code restarts AdaGrad's history
    span_samples = run.config["span_samples"]
    return EpochState(
        order=run.task.span_groups.draw(run.rng, span_samples)
        if span_samples
        else run.rng.permutation(len(run.splits["train"]))
    )


def _train_epoch(run: Run, epoch: int, state: EpochState, progress: bool) -> None:
    """Train the rest of an epoch's minibatches (dev read at the points inside
    it), then evaluate, record and checkpoint its end."""
    config = run.config
    batch_size = config["batch_size"]
    unit = "pair" if run.task.name in PAIR_TASKS else "sent"
    n_batches = -(-len(state.order) // batch_size)
    inside = evaluation_points(n_batches, config["evals_per_epoch"])[:-1]
    bar = _progress(
        len(state.order),
        f"epoch {epoch}/{config['epochs']}",
        progress,
        unit,
        initial=min(state.done * batch_size, len(state.order)),
    )
    shards = None
    while state.done < n_batches and not run.stopped:
        indices = state.order[state.done * batch_size : (state.done + 1) * batch_size]
        tick = time.perf_counter()
        loss, shards = train_step(
            run, indices, epoch, state.done + 1, shards, _following(state, n_batches, inside, batch_size)
        )
        state.wall_s += time.perf_counter() - tick
        state.loss_sum += loss * len(indices)
        state.done += 1
        if bar is not None:
            bar.update(len(indices))
            trained = min(state.done * batch_size, len(state.order))
            bar.set_postfix(loss=f"{loss:.3f}", per_s=f"{trained / max(state.wall_s, 1e-9):.0f}")
        if state.done in inside:
            at = round(epoch - 1 + state.done / n_batches, 4)
            dev = _evaluate(run, run.splits["dev"])
            state.evaluations.append({"at": at, "dev": dev})
            improved = _select(run, dev, at)
            write_metrics(run.directory, run.metrics)
            _checkpoint(run, state)
            # logged once the checkpoint holds it (_restore logs it if a stop came between)
            run.directory.append_log({"event": "evaluation", "at": at, "dev": dev})
            if bar is not None:
                bar.clear()
            run.echo(f"epoch {at:.2f}: dev {format_metrics(dev)}{'  *best' if improved else ''}")
            _consult(run, at, dev)
    if bar is not None:
        bar.close()
    if not run.stopped:
        _end_epoch(run, epoch, state)


def _following(state: EpochState, n_batches: int, inside: list, batch_size: int):
    """The indices of the minibatch after the one ``state`` is at, for
    ``train_step`` to cut while the helpers finish this one; None at the
    epoch's end or before a dev evaluation, whose checkpoint saves the
    generator as it is before the next minibatch's masks are drawn."""
    following = state.done + 1
    if following >= n_batches or following in inside:
        return None
    return state.order[following * batch_size : (following + 1) * batch_size]


def _evaluate(run: Run, split) -> dict:
    return evaluate(run.model, run.params, split, run.config["eval_batch_size"], run.helper, _classes(run))


def _classes(run: Run) -> list | None:
    """The names of the run's classes (None for sentence pairs)."""
    if run.task.name in PAIR_TASKS:
        return None
    return named_classes(run.config, run.model.n_classes, run.task.class_names)


def _select(run: Run, dev: dict, at: float) -> bool:
    """Keep the parameters if ``dev`` is the best so far (``at``: epochs done)."""
    metrics = run.metrics
    if metrics["dev"] is not None and not dev[run.selected] > metrics["dev"][run.selected]:
        return False
    _require_finite_state(run, at)
    metrics["best_epoch"], metrics["best_at"], metrics["dev"] = math.ceil(at), at, dev
    save_model(run.directory, run.params, run.config, run.vocab, run.task.n_classes)
    return True


def _require_finite_state(run: Run, at: float) -> None:
    """Nothing non-finite reaches the run's files."""
    arrays = [run.params.flat, *run.optimizer.state.values()]
    if not all(np.isfinite(array).all() for array in arrays):
        stop_run(run, f"a parameter or the optimiser's state became non-finite by the dev evaluation at epoch {at:g}")


def _checkpoint(run: Run, epoch_state: EpochState | None = None) -> None:
    """Everything --resume needs, written after every dev evaluation."""
    _require_finite_state(run, len(run.metrics["epochs"]))
    write_checkpoint(
        run.directory,
        run.params,
        run.optimizer.state_dict(),
        run.rng,
        run.config,
        run.metrics,
        run.vocab,
        run.fingerprints,
        None if epoch_state is None else epoch_state.order,
        None if epoch_state is None else epoch_state.progress(),
    )


def _end_epoch(run: Run, epoch: int, state: EpochState) -> None:
    """Dev (and training-sentence) accuracy at the epoch's end, its record, the checkpoint."""
    config, metrics = run.config, run.metrics
    tick = time.perf_counter()
    dev = _evaluate(run, run.splits["dev"])
    train_accuracy = _evaluate(run, run.train_sentences) if config["train_eval"] else None
    record = {
        "epoch": epoch,
        "train_loss": state.loss_sum / len(state.order),
        "dev": dev,
        "train": train_accuracy,
        "wall_s": state.wall_s,
        "eval_s": time.perf_counter() - tick,
        "train_examples": len(state.order),
        "train_sentences_per_s": len(state.order) / state.wall_s,
    }
    if state.evaluations:
        record["evaluations"] = state.evaluations
    metrics["epochs"].append(record)
    metrics["train_wall_s"] += state.wall_s
    examples = sum(e["train_examples"] for e in metrics["epochs"])
    metrics["train_sentences_per_s"] = examples / metrics["train_wall_s"]
    improved = _select(run, dev, float(epoch))
    # the epoch is on disk before anything else can interrupt the run; its log
    # record once the checkpoint holds it (_restore logs it if a stop came between)
    write_metrics(run.directory, metrics)
    _checkpoint(run)
    run.directory.append_log({"event": "epoch", **record})
    unit = "pairs" if run.task.name in PAIR_TASKS else "sent"
    train_text = f"  train {format_metrics(train_accuracy, short=True)}" if train_accuracy is not None else ""
    run.echo(
        f"epoch {epoch}: train loss {record['train_loss']:.4f}{train_text}  dev "
        f"{format_metrics(dev)}  ({record['train_sentences_per_s']:.0f} {unit}/s)"
        f"{'  *best' if improved else ''}"
    )
    _consult(run, float(epoch), dev)


def _consult(run: Run, at: float, dev: dict) -> None:
    """Tell the callbacks of the dev evaluation at ``at`` (epochs done); the
    first to return true stops the run, recorded in metrics.json."""
    for callback in run.callbacks:
        if callback(at, dev, run.metrics):
            run.stopped = True
            run.metrics["stopped"] = {"at": at, "by": getattr(callback, "__name__", type(callback).__name__)}
            write_metrics(run.directory, run.metrics)
            run.echo(f"epoch {at:g}: training stopped by {run.metrics['stopped']['by']}")
            return


def _test(run: Run) -> None:
    """The test split, once, with the best-dev parameters (a run on a user's
    files, or on data given, without a test split has none: its record ends
    with test null)."""
    metrics = run.metrics
    if metrics["test"] is not None or metrics["best_epoch"] is None:
        return
    if "test" not in run.splits:
        metrics["ended"] = True
        write_metrics(run.directory, metrics)
        run.directory.append_log(
            {"event": "end", "best_epoch": metrics["best_epoch"], "dev": metrics["dev"], "test": None}
        )
        return
    best_model, best_params, _, _ = load_model(run.directory)
    tick = time.perf_counter()
    metrics["test"] = evaluate(
        best_model, best_params, run.splits["test"], run.config["eval_batch_size"], run.helper, _classes(run)
    )
    metrics["test_eval_s"] = time.perf_counter() - tick
    # the per-sentence predictions behind the figures (npcomp plot), on disk
    # before the test metrics that mark the run finished
    write_predictions(
        run.directory,
        best_model,
        best_params,
        run.splits["test"],
        "test",
        run.config["eval_batch_size"],
        run.helper,
        task=run.config["task"],
        classes=_classes(run),
    )
    write_metrics(run.directory, metrics)
    run.directory.append_log(
        {"event": "end", "best_epoch": metrics["best_epoch"], "dev": metrics["dev"], "test": metrics["test"]}
    )


def _progress(total, description, enabled, unit="sent", initial=0):
    if not enabled:
        return None
    import sys

    from tqdm import tqdm

    # to a file or pipe, a line every few seconds rather than every minibatch
    interval = 0.1 if sys.stderr.isatty() else 5.0
    return tqdm(
        total=total, desc=description, unit=unit, leave=False, dynamic_ncols=True, mininterval=interval, initial=initial
    )
