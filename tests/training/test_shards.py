"""A minibatch in shards (npcomp/training/shards.py): how it is cut, its
shards' sums against the whole minibatch's loss and gradient for every
model, and a run whose numbers do not depend on its thread count."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

import npcomp.data.datasets.synthetic
import npcomp.training.shard_processes
import npcomp.training.shards
import npcomp.training.trainer
from conftest import synthetic_of_size
from gradcheck.suite import CHECKED_MODELS, VOCAB_SIZE, _distinct_partners, build_case, random_trees, settings
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.forest import node_words, supervised_labels
from npcomp.heads import PAIR_HEADS
from npcomp.models import SentenceEncoder
from npcomp.experiments.summary import setting_key
from npcomp.runfiles.checkpoints import config_digest
from npcomp.configuration.defaults import defaults_for, with_defaults
from npcomp.training.encoding import EncodedPairs, EncodedSplit
from npcomp.runfiles.model_files import load_model
from npcomp.configuration.options import OPTIONS
from npcomp.configuration.run_config import build_config
from npcomp.training.shard_processes import can_fork
from npcomp.training.shards import ShardedGradient, shard_bounds
from npcomp.training.trainer import train

# ---------------------------------------------------------------------------
# how a minibatch is cut
# ---------------------------------------------------------------------------


def test_a_minibatch_is_cut_where_the_nodes_divide_evenly():
    assert shard_bounds([5, 5, 5, 5], 2) == [(0, 2), (2, 4)]
    # 4 of 14 nodes before the long sentence: nearer half than 14
    assert shard_bounds([1, 1, 1, 1, 10], 2) == [(0, 4), (4, 5)]
    assert shard_bounds([10, 1, 1, 1, 1], 2) == [(0, 1), (1, 5)]
    assert shard_bounds([3, 9, 3, 3, 9, 3], 3) == [(0, 2), (2, 4), (4, 6)]
    assert shard_bounds([7], 4) == [(0, 1)]  # fewer sentences than shards
    assert shard_bounds([2, 2], 4) == [(0, 1), (1, 2)]
    assert shard_bounds([100, 1, 1], 3) == [(0, 1), (1, 2), (2, 3)]


@hypothesis_settings(max_examples=60, derandomize=True)
@given(sizes=st.lists(st.integers(1, 60), min_size=1, max_size=40), shards=st.integers(1, 6))
def test_the_shards_are_consecutive_non_empty_runs_of_about_equal_nodes(sizes, shards):
    bounds = shard_bounds(sizes, shards)
    assert len(bounds) == min(shards, len(sizes))
    assert bounds[0][0] == 0 and bounds[-1][1] == len(sizes)
    assert all(start < stop for start, stop in bounds)
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    # where no shard is held to one sentence, each cut is within one sentence
    # of its share of the nodes
    running = np.concatenate([[0], np.cumsum(sizes)])
    if all(stop - start > 1 for start, stop in bounds[1:]):
        for k, (start, _) in enumerate(bounds[1:], start=1):
            share = running[-1] * k / len(bounds)
            assert abs(running[start] - share) <= max(sizes)


# ---------------------------------------------------------------------------
# the shards' sums are the minibatch's loss and gradient, for every model
# ---------------------------------------------------------------------------

CASES = [
    (setting, average)
    for model in CHECKED_MODELS
    for setting in settings(model)
    for average in (("sentences",) if setting.head in PAIR_HEADS else ("sentences", "nodes"))
]


def _encoded(trees, supervision: str) -> EncodedSplit:
    vocab = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))  # build_case's
    return EncodedSplit(
        list(trees),
        [node_words(tree, vocab.encode(tree.tokens)) for tree in trees],
        [supervised_labels(tree, supervision) for tree in trees],
    )


def sharded_case(setting, seed: int = 3):
    """(model, float64 params, the whole minibatch, the same as an encoded
    split) for a setting without dropout: three draws of its random trees,
    or one of pairs of them for a pair head (the similarity head, the pair
    classifier)."""
    setting = dataclasses.replace(setting, dropout=0.0, embedding_dropout=0.0, recurrent_dropout=0.0)
    rng = np.random.default_rng(seed)
    # pairs: one draw, the gradient check's case at the same seed (its
    # parameters keep every |h_L - h_R| off the kink, hard to draw for more)
    draws = [random_trees(setting, rng) for _ in range(1 if setting.head in PAIR_HEADS else 3)]
    trees = [tree for draw in draws for tree in draw]
    if setting.head not in PAIR_HEADS:
        model, params, forest, _ = build_case(setting, trees, rng)
        return model, params, forest, _encoded(trees, setting.supervision)
    partners = [tree for draw in draws for tree in _distinct_partners(setting, draw, rng)]
    model, params, batch, _ = build_case(setting, trees, rng, partners=partners)
    split = EncodedPairs(
        _encoded(trees, setting.supervision),
        _encoded(partners, setting.supervision),
        batch.scores,
        labels=batch.labels if model.head.classifies else None,
    )
    return model, params, batch, split


@pytest.mark.parametrize("setting,average", CASES, ids=[f"{s.model}-{s.describe()}-{a}" for s, a in CASES])
def test_the_shards_sum_to_the_minibatch_loss_and_gradient(setting, average):
    model, params, whole, split = sharded_case(setting)
    expected = params.zeros_like()
    loss, rows = model.loss_and_gradient(params, whole, expected, l2=0.01, average=average)
    grads = params.zeros_like()
    sharded = ShardedGradient(model, grads, 3)
    shards = sharded.shards_of(params, split, np.arange(len(split)))
    assert len(shards) == 3
    sharded_loss, sharded_rows = sharded.loss_and_gradient(params, shards, average, l2=0.01)
    assert sharded_loss == pytest.approx(loss, rel=1e-12)
    np.testing.assert_array_equal(sharded_rows, rows)
    np.testing.assert_allclose(grads.flat, expected.flat, rtol=1e-12, atol=1e-14)
    # the shards' own buffers are left zero for the next minibatch
    assert all(not buffer.flat.any() for buffer in sharded.buffers[1:])


def test_shards_on_helper_threads_give_the_same_numbers_bit_for_bit():
    """Shard 1 on a helper thread, or after shard 0 on this one: the same
    loss and gradient, bit for bit."""
    setting = next(setting for setting in settings("treelstm-nary") if setting.head != "similarity")
    model, params, _, split = sharded_case(setting)
    params = params.astype(np.float32)
    results = []
    with ThreadPoolExecutor(max_workers=1) as helpers:
        for pool in (None, helpers):
            grads = params.zeros_like()
            sharded = ShardedGradient(model, grads, 2, pool)
            shards = sharded.shards_of(params, split, np.arange(len(split)))
            loss, rows = sharded.loss_and_gradient(params, shards, l2=0.01)
            results.append((loss, rows, grads.flat))
    (loss_1, rows_1, flat_1), (loss_2, rows_2, flat_2) = results
    assert loss_1 == loss_2
    np.testing.assert_array_equal(rows_1, rows_2)
    assert np.array_equal(flat_1, flat_2)


@pytest.mark.parametrize("helpers", ["none", "thread", "process"])
def test_the_callers_work_meanwhile_runs_once_on_its_thread_and_changes_no_number(helpers):
    """``meanwhile`` (the trainer cuts the next minibatch there) runs once,
    on the calling thread, whether the shards run there, on a helper thread
    or on a helper process, and the loss and gradient are those without it."""
    if helpers == "process" and not can_fork():
        pytest.skip("this process cannot fork helpers")
    setting = next(setting for setting in settings("treelstm-nary") if setting.head != "similarity")
    model, params, _, split = sharded_case(setting)
    params = params.astype(np.float32)
    results, calls = [], []
    with ThreadPoolExecutor(max_workers=1) as pool:
        for meanwhile in (None, lambda: calls.append(threading.get_ident())):
            sharded = ShardedGradient(model, params.zeros_like(), 2, pool if helpers == "thread" else None)
            shared = params
            if helpers == "process":
                shared = npcomp.training.shard_processes.share(params)
                sharded.use_processes(shared, 1)
            try:
                shards = sharded.shards_of(shared, split, np.arange(len(split)))
                loss, rows = sharded.loss_and_gradient(shared, shards, l2=0.01, meanwhile=meanwhile)
            finally:
                sharded.close()
            results.append((loss, rows, sharded.grads.flat.copy()))
    assert calls == [threading.get_ident()]
    (loss_1, rows_1, flat_1), (loss_2, rows_2, flat_2) = results
    assert loss_1 == loss_2 and np.array_equal(rows_1, rows_2) and np.array_equal(flat_1, flat_2)


# ---------------------------------------------------------------------------
# a run's numbers do not depend on its thread count
# ---------------------------------------------------------------------------


def _small_run(
    model: str, threads: int, shards: int, run_dir, resume: bool = False, processes: bool = True, **changes
) -> tuple:
    """(the final parameters, the epochs' training losses, the (process,
    thread) pairs that computed shards) of a small synthetic run
    (``resume``: continued from its checkpoint with ``changes``;
    ``processes`` False: helper threads even where the run could fork)."""
    config = defaults_for(model, "synthetic")
    config.pop("source")
    config.update(
        model=model,
        task="synthetic",
        seed=5,
        vectors=None,
        data_dir=None,
        threads=threads,
        shards=shards,
        dim=8,
        embedding_dim=8,
        epochs=2,
        batch_size=20,
    )
    config.update(changes)
    if resume:
        config = changes
    # a file, not a set: a helper process's records would not come back
    seen = run_dir.parent / f"{run_dir.name}-computed-by.txt"
    original = SentenceEncoder.loss_and_gradient

    def recorded(*args, **kwargs):
        with open(seen, "a") as record:
            record.write(f"{os.getpid()} {threading.get_ident()}\n")
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((80, 20, 20)))
        patch.setattr(SentenceEncoder, "loss_and_gradient", recorded)
        if not processes:
            patch.setattr(npcomp.training.shards, "can_fork", lambda: False)
        train(config, run_dir, resume=resume, progress=False, echo=lambda *args: None)
    with np.load(run_dir / "checkpoint.npz") as checkpoint:
        flat = checkpoint["params"]
    losses = [
        record["train_loss"]
        for record in map(json.loads, (run_dir / "log.jsonl").read_text().splitlines())
        if record["event"] == "epoch"
    ]
    computed_by = set(seen.read_text().split("\n")[:-1]) if seen.exists() else set()
    return flat, losses, {tuple(map(int, line.split())) for line in computed_by}


@pytest.mark.parametrize(
    "model,changes",
    [
        ("treelstm-nary", dict(dropout=0.3)),
        ("lstm", dict(structure="chain", dropout=0.2, embedding_dropout=0.2, recurrent_dropout=[0.2])),
    ],
    ids=["tree", "sequence"],
)
def test_one_and_two_threads_train_the_same_parameters_bit_for_bit(model, changes, tmp_path):
    one, one_losses, one_seen = _small_run(model, 1, 2, tmp_path / "one", **changes)
    two, two_losses, two_seen = _small_run(model, 2, 2, tmp_path / "two", **changes)
    threads, threads_losses, threads_seen = _small_run(model, 2, 2, tmp_path / "threads", processes=False, **changes)
    assert len(one_seen) == 1
    # the shards ran in two processes where this one can fork, else on two threads
    assert len({process for process, _ in two_seen}) == (2 if can_fork() else 1)
    assert len(two_seen) == 2
    assert len({process for process, _ in threads_seen}) == 1 and len(threads_seen) == 2
    assert len(one_losses) == 2 and one_losses == two_losses == threads_losses
    assert one.dtype == np.float32 and np.array_equal(one, two)
    assert np.array_equal(one, threads)
    # the comparison sees what the shards change: another count, other numbers
    three, three_losses, _ = _small_run(model, 2, 3, tmp_path / "three", **changes)
    assert three_losses != one_losses and not np.array_equal(three, one)


@pytest.mark.parametrize("threads", [1, 2])
def test_cutting_the_next_minibatch_ahead_trains_the_same_numbers(threads, tmp_path):
    """The trainer cuts each minibatch during the step before (its dropout
    masks drawn after that step's, as in a step of its own), except across a
    dev evaluation: the same parameters, losses and checkpointed generator,
    bit for bit, as a run cutting every minibatch in its own step."""
    changes = dict(dropout=0.3, evals_per_epoch=2)
    looked_ahead = []
    original = ShardedGradient.loss_and_gradient

    def recorded(self, *args, meanwhile=None, **kwargs):
        looked_ahead.append(meanwhile is not None)
        return original(self, *args, meanwhile=meanwhile, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ShardedGradient, "loss_and_gradient", recorded)
        ahead, ahead_losses, _ = _small_run("treelstm-nary", threads, 2, tmp_path / "ahead", **changes)
    # 4 minibatches an epoch: ahead of the 1st and 3rd (the 2nd ends before
    # a dev evaluation, the 4th ends the epoch)
    assert looked_ahead == [True, False, True, False] * 2
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.training.trainer, "_following", lambda *args: None)
        each, each_losses, _ = _small_run("treelstm-nary", threads, 2, tmp_path / "each", **changes)
    assert ahead_losses == each_losses and np.array_equal(ahead, each)
    with np.load(tmp_path / "ahead" / "checkpoint.npz") as one, np.load(tmp_path / "each" / "checkpoint.npz") as other:
        assert str(one["rng"]) == str(other["rng"])


# ---------------------------------------------------------------------------
# runs made before minibatches had shards
# ---------------------------------------------------------------------------


def _as_made_before_shards(run_dir) -> None:
    """The run's files as a run made before the ``shards`` option wrote
    them: its configurations without the key (the checkpoint's digest of
    its own with it)."""
    for name in ("checkpoint.npz", "model.npz"):
        with np.load(run_dir / name) as archive:
            arrays = {key: archive[key] for key in archive.files}
        config = json.loads(str(arrays["config"]))
        config.pop("shards", None)
        arrays["config"] = np.array(json.dumps(config))
        if "fingerprints" in arrays:
            fingerprints = json.loads(str(arrays["fingerprints"]))
            fingerprints["config"] = config_digest(config)
            arrays["fingerprints"] = np.array(json.dumps(fingerprints))
        np.savez(run_dir / name, **arrays)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    metrics["config"].pop("shards", None)
    (run_dir / "metrics.json").write_text(json.dumps(metrics))


def test_a_configuration_without_shards_reads_as_one_shard():
    config = build_config("treelstm-nary", "synthetic", {})
    assert config["shards"] == OPTIONS["shards"].default == 2
    old = {key: value for key, value in config.items() if key != "shards"}
    assert with_defaults(old)["shards"] == 1  # saved by a run made before
    assert with_defaults(old, saved=False)["shards"] == 2  # made by hand: the default
    assert setting_key(old) == setting_key(dict(config, shards=1)) != setting_key(config)


def test_a_run_made_before_shards_resumes_in_one_shard(tmp_path):
    """Resumed, a run whose configuration has no shards continues in one
    shard: the same parameters and losses, bit for bit, as the run trained
    in one shard throughout, which two shards do not give."""
    whole, whole_losses, _ = _small_run("treelstm-nary", 2, 1, tmp_path / "whole")
    resumed = tmp_path / "resumed"
    _small_run("treelstm-nary", 2, 1, resumed, epochs=1)
    _as_made_before_shards(resumed)
    flat, losses, _ = _small_run("treelstm-nary", 2, 1, resumed, resume=True, epochs=2)
    assert losses == whole_losses and np.array_equal(flat, whole)
    assert json.loads((resumed / "metrics.json").read_text())["config"]["shards"] == 1
    two, two_losses, _ = _small_run("treelstm-nary", 2, 2, tmp_path / "two")
    assert two_losses != whole_losses and not np.array_equal(two, whole)
    _as_made_before_shards(resumed)
    assert load_model(resumed)[2]["shards"] == 1  # as npcomp eval and predict read it
