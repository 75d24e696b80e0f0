"""The trainer end to end on a small synthetic treebank: the run directory's files
(README.md, "Run directories"), the best-dev model reloading to the same dev metrics, a killed run
resumed to exactly the uninterrupted result, and the main options."""

import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
import npcomp.training.trainer
from npcomp.configuration.defaults import defaults_for
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.runfiles.rundir import RunDirectoryError, RunFileError
from npcomp.data.datasets.tasks import SPLITS, load_task
from npcomp.training.encoding import encode
from npcomp.training.evaluation import batch_bounds, evaluate, predict_split
from npcomp.configuration.model_building import build_model, initial_parameters
from npcomp.runfiles.model_files import load_model
from npcomp.training.trainer import evaluation_points, train
from conftest import synthetic_of_size

SIZES = (60, 30, 30)


small_splits = synthetic_of_size(SIZES)


def tiny_config(model="treelstm-nary", **changes) -> dict:
    config = defaults_for(model, "synthetic")
    config.pop("source")
    config.update(
        model=model,
        task="synthetic",
        seed=3,
        vectors=None,
        data_dir=None,
        threads=None,
        dim=8,
        embedding_dim=8,
        epochs=2,
    )
    config.update(changes)
    return config


def quiet_train(config, run_dir, **kwargs):
    return train(config, run_dir, progress=False, echo=lambda *args: None, **kwargs)


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)


@pytest.fixture(scope="module")
def basic_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("basic")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)
        metrics = quiet_train(tiny_config(), run_dir)
    return run_dir, metrics


def check_accuracies(result):
    assert 0.0 <= result["root_acc"] <= 100.0
    assert 0.0 <= result["all_acc"] <= 100.0


def test_metrics_json_has_every_spec_key(basic_run):
    run_dir, returned = basic_run
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics == json.loads(json.dumps(returned))
    for key in (
        "model",
        "task",
        "config",
        "epochs",
        "best_epoch",
        "best_at",
        "dev",
        "test",
        "train_wall_s",
        "train_sentences_per_s",
        "machine",
    ):
        assert key in metrics, key
    # what the floating-point results depend on beyond code, data and seed
    assert metrics["machine"]["numpy"] == np.__version__
    assert metrics["machine"]["cpu"] and metrics["machine"]["numba"]
    assert metrics["model"] == "treelstm-nary" and metrics["task"] == "synthetic"
    config = metrics["config"]
    assert config["seed"] == 3 and config["dim"] == 8 and config["epochs"] == 2
    for name in ("lr", "emb_lr", "batch_size", "l2", "dropout", "optimizer", "supervision", "structure", "dtype"):
        assert name in config, name
    assert [e["epoch"] for e in metrics["epochs"]] == [1, 2]
    for epoch in metrics["epochs"]:
        for key in ("epoch", "train_loss", "dev", "wall_s"):
            assert key in epoch, key
        assert np.isfinite(epoch["train_loss"]) and epoch["train_loss"] > 0
        assert epoch["wall_s"] > 0
        check_accuracies(epoch["dev"])
        assert epoch["dev"]["sentences"] == SIZES[1]
        check_accuracies(epoch["train"])  # the learning curve on the training sentences
        assert epoch["train"]["sentences"] == SIZES[0]
    assert metrics["best_epoch"] in (1, 2)
    best = metrics["epochs"][metrics["best_epoch"] - 1]["dev"]
    assert metrics["dev"] == best
    assert best["root_acc"] == max(e["dev"]["root_acc"] for e in metrics["epochs"])
    check_accuracies(metrics["dev"])
    check_accuracies(metrics["test"])
    assert metrics["test"]["sentences"] == SIZES[2]
    confusion = np.array(metrics["test"]["root_confusion"])  # [gold][predicted]
    assert confusion.shape == (5, 5) and confusion.sum() == SIZES[2]
    assert 100.0 * np.trace(confusion) / SIZES[2] == pytest.approx(metrics["test"]["root_acc"])
    assert metrics["train_wall_s"] == pytest.approx(sum(e["wall_s"] for e in metrics["epochs"]))
    assert metrics["train_sentences_per_s"] == pytest.approx(2 * SIZES[0] / metrics["train_wall_s"])
    assert 0.0 < metrics["warm_up_s"] < metrics["setup_s"]  # compiling is part of setting up


def test_model_npz_reproduces_dev_metrics(basic_run):
    run_dir, metrics = basic_run
    model, params, config, vocab = load_model(run_dir)
    assert config == metrics["config"]
    assert params.flat.dtype == np.float32
    task = load_task("synthetic", None, config["structure"], seed=config["seed"])
    names = ["very negative", "negative", "neutral", "positive", "very positive"]
    dev = evaluate(model, params, encode(task.splits["dev"], vocab), config["eval_batch_size"], classes=names)
    assert dev == metrics["dev"]
    test = evaluate(
        model,
        params,
        encode(task.splits["test"], vocab),
        7,  # batching is free
        classes=names,
    )
    assert test == metrics["test"]
    with ThreadPoolExecutor(max_workers=1) as helpers:  # so is a helper thread's share
        assert evaluate(model, params, encode(task.splits["test"], vocab), 7, helpers, names) == test
    # without names, the classes are their numbers
    assert evaluate(model, params, encode(task.splits["test"], vocab), 7) == dict(test, classes=[0, 1, 2, 3, 4])
    # predictions in each tree's own node order agree with evaluate's counts
    split = encode(task.splits["dev"], vocab)
    correct = sum(
        int(p[t.root].argmax() == t.root_label)
        for t, p in zip(split.trees, predict_split(model, params, split, batch_size=4))
    )
    assert 100.0 * correct / len(split) == pytest.approx(dev["root_acc"])


def test_log_jsonl_lines_are_json(basic_run):
    run_dir, _ = basic_run
    records = [json.loads(line) for line in (run_dir / "log.jsonl").read_text().splitlines()]
    events = [r["event"] for r in records]
    assert events == ["start", "epoch", "epoch", "end"]
    assert records[0]["config"]["model"] == "treelstm-nary"
    assert records[-1]["test"]["root_acc"] >= 0.0


def test_load_model_without_a_model(tmp_path):
    with pytest.raises(RunFileError, match="model.npz"):
        load_model(tmp_path)
    with pytest.raises(RunFileError, match="nothing to resume"):
        quiet_train({}, tmp_path, resume=True)
    assert list(tmp_path.iterdir()) == []  # a refused resume leaves nothing behind


@pytest.mark.parametrize(
    "changes",
    [{}, dict(adagrad_reset=2), dict(model="lstm", span_samples=2)],
    ids=["", "adagrad-reset", "span-samples"],
)
def test_resume_reproduces_the_uninterrupted_run(changes, tmp_path, monkeypatch):
    # dropout on, so the random state drives the masks as well as the order; with
    # a reset every 2 epochs the resumed epoch 3 starts from a reset state; with
    # span samples the random state also draws each epoch's phrases
    config = tiny_config(epochs=3, dropout=0.3, **changes)
    metrics_a = quiet_train(config, tmp_path / "a")

    real_evaluate = npcomp.training.trainer.evaluate
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5:  # epoch 3's dev evaluation (each epoch: dev, then training)
            raise KeyboardInterrupt
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(npcomp.training.trainer, "evaluate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        quiet_train(config, tmp_path / "b")
    killed = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert [e["epoch"] for e in killed["epochs"]] == [1, 2] and killed["test"] is None
    monkeypatch.setattr(npcomp.training.trainer, "evaluate", real_evaluate)

    metrics_b = quiet_train({}, tmp_path / "b", resume=True)
    timing = ("wall_s", "eval_s", "train_sentences_per_s")

    def without_timing(epochs):
        return [{k: v for k, v in e.items() if k not in timing} for e in epochs]

    on_disk = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert on_disk == json.loads(json.dumps(metrics_b))
    assert without_timing(metrics_b["epochs"]) == without_timing(metrics_a["epochs"])
    for key in ("best_epoch", "dev", "test", "config"):
        assert metrics_b[key] == metrics_a[key], key
    with np.load(tmp_path / "a" / "model.npz") as a, np.load(tmp_path / "b" / "model.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            assert np.array_equal(a[name], b[name]), name
    with np.load(tmp_path / "a" / "checkpoint.npz") as a, np.load(tmp_path / "b" / "checkpoint.npz") as b:
        assert np.array_equal(a["params"], b["params"])
        assert str(a["rng"]) == str(b["rng"])
    events = [json.loads(line)["event"] for line in (tmp_path / "b" / "log.jsonl").read_text().splitlines()]
    assert events == ["start", "epoch", "epoch", "resumed", "epoch", "end"]


@pytest.mark.parametrize(
    "total,batch_size", [(0, 5), (1, 5), (5, 5), (6, 5), (2210, 512), (1024, 512), (1025, 512), (99, 7)]
)
def test_evaluation_forests_are_an_even_number_of_nearly_equal_runs(total, batch_size):
    bounds = batch_bounds(total, batch_size)
    assert [start for start, _ in bounds] == [0, *(stop for _, stop in bounds)][: len(bounds)]
    assert sum(stop - start for start, stop in bounds) == total
    sizes = [stop - start for start, stop in bounds]
    assert all(0 < size <= batch_size for size in sizes)
    assert len(bounds) <= 1 or (len(bounds) % 2 == 0 and max(sizes) - min(sizes) <= 1)
    assert len(bounds) <= -(-total // batch_size) + 1


def test_evaluation_points_spread_over_the_epoch():
    assert evaluation_points(10, 1) == [10]
    assert evaluation_points(10, 4) == [3, 5, 8, 10]
    assert evaluation_points(3, 5) == [1, 2, 3]  # no more evaluations than minibatches


def test_evaluations_inside_an_epoch(tmp_path):
    """With evals_per_epoch = 3, dev is read twice inside each epoch as well as at
    its end, and the best of all six evaluations is the one kept."""
    metrics = quiet_train(tiny_config(evals_per_epoch=3, batch_size=10), tmp_path)
    points = []
    for epoch in metrics["epochs"]:
        inside = epoch["evaluations"]
        assert [e["at"] for e in inside] == [round(epoch["epoch"] - 1 + k / 6, 4) for k in (2, 4)]
        points += [(e["at"], e["dev"]) for e in inside] + [(float(epoch["epoch"]), epoch["dev"])]
    assert len(points) == 6
    best = max(points, key=lambda point: point[1]["root_acc"])  # the first of equals
    assert (metrics["best_at"], metrics["dev"]) == best
    assert metrics["best_epoch"] == math.ceil(best[0])
    model, params, config, vocab = load_model(tmp_path)
    task = load_task("synthetic", None, config["structure"], seed=config["seed"])
    assert (
        evaluate(model, params, encode(task.splits["dev"], vocab), 512, classes=metrics["dev"]["classes"])
        == metrics["dev"]
    )
    events = [json.loads(line)["event"] for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert events == ["start"] + 2 * ["evaluation", "evaluation", "epoch"] + ["end"]


def test_resume_inside_an_epoch_reproduces_the_uninterrupted_run(tmp_path, monkeypatch):
    """Killed between two dev evaluations of one epoch, --resume continues from
    the first of them with the same minibatch order and random state."""
    config = tiny_config(epochs=2, dropout=0.3, evals_per_epoch=3, batch_size=10)
    metrics_a = quiet_train(config, tmp_path / "a")
    real_evaluate = npcomp.training.trainer.evaluate
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 6:  # epoch 2's second evaluation (epoch 1: 2 inside, dev, train)
            raise KeyboardInterrupt
        return real_evaluate(*args, **kwargs)

    monkeypatch.setattr(npcomp.training.trainer, "evaluate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        quiet_train(config, tmp_path / "b")
    with np.load(tmp_path / "b" / "checkpoint.npz") as archive:
        assert json.loads(str(archive["epoch_state"]))["done"] == 2  # of epoch 2's 6
    monkeypatch.setattr(npcomp.training.trainer, "evaluate", real_evaluate)
    metrics_b = quiet_train({}, tmp_path / "b", resume=True)
    timing = ("wall_s", "eval_s", "train_sentences_per_s")
    for a, b in zip(metrics_a["epochs"], metrics_b["epochs"], strict=True):
        assert {k: v for k, v in a.items() if k not in timing} == {k: v for k, v in b.items() if k not in timing}
    for key in ("best_epoch", "best_at", "dev", "test"):
        assert metrics_b[key] == metrics_a[key], key
    with np.load(tmp_path / "a" / "checkpoint.npz") as a, np.load(tmp_path / "b" / "checkpoint.npz") as b:
        assert np.array_equal(a["params"], b["params"])
        assert "epoch_order" not in b.files  # the run ended at an epoch's end


def test_a_fresh_run_refuses_a_directory_holding_a_run(tmp_path):
    """Nothing of the old run is touched, and the message says how to go on."""
    quiet_train(tiny_config(epochs=1), tmp_path)
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()}
    with pytest.raises(RunDirectoryError, match="already holds a run.*resume=True.*overwrite=True"):
        quiet_train(tiny_config(epochs=2, seed=9), tmp_path)
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir() if path.is_file()} == before


def test_overwrite_keeps_the_old_run_until_the_new_one_has_an_epoch(tmp_path, monkeypatch):
    """A replacing run killed in its first epoch leaves the old run whole in
    replaced/; one that finishes an epoch deletes it."""
    old = quiet_train(tiny_config(epochs=1), tmp_path)
    old_model = (tmp_path / "model.npz").read_bytes()

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(npcomp.training.trainer, "evaluate", killed)
    with pytest.raises(KeyboardInterrupt):
        quiet_train(tiny_config(epochs=2, seed=9), tmp_path, overwrite=True)
    assert (tmp_path / "replaced" / "model.npz").read_bytes() == old_model
    assert json.loads((tmp_path / "replaced" / "metrics.json").read_text())["test"] == json.loads(
        json.dumps(old["test"])
    )
    assert sorted(path.name for path in tmp_path.iterdir() if path.is_file()) == [".lock", "log.jsonl"]
    with pytest.raises(RunFileError, match="nothing to resume"):
        quiet_train({}, tmp_path, resume=True)
    monkeypatch.undo()
    quiet_train(tiny_config(epochs=1, seed=9), tmp_path, overwrite=True)
    assert not any(path.name.startswith("replaced") for path in tmp_path.iterdir())
    assert json.loads((tmp_path / "metrics.json").read_text())["config"]["seed"] == 9


def test_resuming_a_finished_run_changes_nothing(basic_run, tmp_path):
    run_dir, metrics = basic_run
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in run_dir.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    resumed = quiet_train({}, copy, resume=True)
    assert resumed["epochs"] == json.loads(json.dumps(metrics["epochs"]))
    assert resumed["test"] == metrics["test"] and resumed["dev"] == metrics["dev"]


def test_float64_trains(tmp_path):
    metrics = quiet_train(tiny_config(dtype="float64", epochs=1), tmp_path)
    check_accuracies(metrics["test"])
    _, params, _, _ = load_model(tmp_path)
    assert params.flat.dtype == np.float64
    with np.load(tmp_path / "checkpoint.npz") as archive:
        assert archive["params"].dtype == np.float64
        assert archive["optimizer.sum_squares"].dtype == np.float64


def starting_parameters(config):
    """The parameters a run starts from (the trainer's own construction)."""
    task = load_task("synthetic", None, config["structure"], seed=config["seed"])
    vocab = Vocabulary.from_trees(t for split in SPLITS for t in task.splits[split])
    model = build_model(config, vocab, task.n_classes)
    return initial_parameters(config, model, vocab, None, np.random.default_rng(config["seed"]), {})


def test_fixed_embeddings_stay_fixed(tmp_path):
    config = tiny_config(fixed_embeddings=True, epochs=2)
    initial = starting_parameters(config)
    quiet_train(config, tmp_path)
    with np.load(tmp_path / "checkpoint.npz") as archive:
        final = archive["params"]
    _, best, _, _ = load_model(tmp_path)
    offset = initial.layout["embedding"].offset
    assert np.array_equal(final[offset:], initial.flat[offset:])
    assert np.array_equal(best["embedding"], initial["embedding"])
    assert not np.array_equal(final[:offset], initial.flat[:offset])  # the rest trained


def test_tuned_embeddings_change(tmp_path):
    config = tiny_config(epochs=1)
    initial = starting_parameters(config)
    quiet_train(config, tmp_path)
    with np.load(tmp_path / "checkpoint.npz") as archive:
        final = archive["params"]
    offset = initial.layout["embedding"].offset
    assert not np.array_equal(final[offset:], initial.flat[offset:])
    # <unk> (row 0) is never read: its row is untouched, bit for bit
    assert np.array_equal(final[offset : offset + 8], initial.flat[offset : offset + 8])


def test_root_supervision_trains(tmp_path):
    metrics = quiet_train(tiny_config(supervision="root", epochs=1), tmp_path)
    check_accuracies(metrics["dev"])
    full = quiet_train(tiny_config(epochs=1), tmp_path / "all")
    # one label per sentence instead of one per node: a much smaller summed loss
    assert metrics["epochs"][0]["train_loss"] < full["epochs"][0]["train_loss"]


def test_span_samples_train_every_sentence_and_k_phrases(tmp_path):
    config = tiny_config("lstm", span_samples=2, epochs=2)
    metrics = quiet_train(config, tmp_path)
    task = load_task("synthetic", structure="chain", seed=config["seed"], spans=True)
    phrases = task.span_groups.whole - task.span_groups.start
    expected = len(phrases) + 2 * int(np.sum(phrases > 0))
    assert expected < len(task.splits["train"])
    assert [e["train_examples"] for e in metrics["epochs"]] == [expected, expected]
    check_accuracies(metrics["test"])
    with pytest.raises(ValueError, match="supervision 'spans'"):
        quiet_train(tiny_config("lstm", supervision="root", span_samples=2), tmp_path / "b")


def test_sequence_model_refuses_trees(tmp_path):
    with pytest.raises(ValueError, match="structure .chain."):
        quiet_train(tiny_config("lstm", structure="gold", supervision="all"), tmp_path)


@pytest.mark.parametrize(
    "model,changes",
    [
        ("mean-vectors", {}),
        ("recnn", {}),
        ("rntn", {}),
        ("lstm-rnn", {}),
        ("slstm", {}),
        ("treelstm-childsum", {}),
        # a sequence model: sentences as chains, every labelled phrase a training sequence
        ("lstm", {}),
        ("bilstm", {}),
        ("bilstm", dict(untied=True)),
        # leaves in a space of their own, classified by a second classifier
        ("lstm-rnn", dict(untied=True, dim=6)),
        ("recnn", dict(untied=True, dim=6)),
        # leaves projected to the hidden dimension
        ("slstm", dict(dim=6)),
    ],
    ids=lambda value: value if isinstance(value, str) else ",".join(value) or "defaults",
)
def test_other_models_train(model, changes, tmp_path):
    config = tiny_config(model, **changes)  # synthetic defaults: tied leaves, d == d_x
    metrics = quiet_train(config, tmp_path)
    assert metrics["model"] == model
    check_accuracies(metrics["test"])
    loaded, params, _, _ = load_model(tmp_path)
    assert loaded.cell.name == model


def test_ordinal_head_trains_and_decodes(tmp_path):
    """--head ordinal end to end: C-1 cumulative outputs, saved and reloaded,
    and evaluation decodes them monotonically (Irsoy & Cardie Sec. 4.2)."""
    metrics = quiet_train(tiny_config(head="ordinal", epochs=1), tmp_path)
    model, params, config, vocab = load_model(tmp_path)
    assert config["head"] == "ordinal" and params["ordinal.W"].shape == (8, 4)
    task = load_task("synthetic", None, config["structure"], seed=config["seed"])
    split = encode(task.splits["dev"], vocab)
    outputs = predict_split(model, params, split)
    assert all(o.shape[1] == 4 for o in outputs)
    correct = sum(
        int(model.head.decode(o[t.root : t.root + 1])[0] == t.root_label) for t, o in zip(split.trees, outputs)
    )
    assert 100.0 * correct / len(split) == pytest.approx(metrics["epochs"][0]["dev"]["root_acc"])


def test_no_train_eval_skips_the_curve(tmp_path):
    metrics = quiet_train(tiny_config(train_eval=False, epochs=1), tmp_path)
    assert metrics["epochs"][0]["train"] is None


# In a fresh interpreter (kernels compiled or loaded earlier in the test
# session would hide a gap), the numba kernels each npcomp module has compiled
# or loaded from the cache, right after the warm-up and at the end of the run.
_COMPILED_KERNELS = """
import functools, json, sys
from numba.core.dispatcher import Dispatcher
import npcomp.data.datasets.synthetic, npcomp.training.trainer as trainer
npcomp.data.datasets.synthetic.synthetic_splits = functools.partial(
    npcomp.data.datasets.synthetic.synthetic_splits, sizes=%r)

def compiled():
    return {f"{name}.{attribute}": len(value.overloads)
            for name, module in list(sys.modules.items()) if name.startswith("npcomp")
            for attribute, value in vars(module).items() if isinstance(value, Dispatcher)}

after_warm_up = {}
warm_up = trainer.warm_up
def recording_warm_up(*args):
    warm_up(*args)
    after_warm_up.update(compiled())
trainer.warm_up = recording_warm_up
trainer.train(json.loads(sys.argv[1]), sys.argv[2], progress=False, echo=lambda *a: None)
print(json.dumps([after_warm_up, compiled()]))
"""


@pytest.mark.parametrize(
    "model,changes",
    [("lstm", {}), ("lstm", dict(embedding_dropout=0.3, recurrent_dropout=0.3)), ("treelstm-childsum", {})],
    ids=["lstm", "lstm-dropout", "treelstm-childsum"],
)
def test_warm_up_compiles_every_kernel_of_the_run(model, changes, tmp_path):
    """Compilation stays out of the timed steps (README.md, "Real data": training
    sentences per second exclude it): nothing compiles after the warm-up.  The
    sequence model's spans start with one-word spans, which have no inner node;
    dropout on the word vectors takes a path of its own."""
    finished = subprocess.run(
        [
            sys.executable,
            "-c",
            _COMPILED_KERNELS % (SIZES,),
            json.dumps(tiny_config(model, epochs=1, **changes)),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    after_warm_up, after_run = json.loads(finished.stdout.splitlines()[-1])
    assert after_run == after_warm_up
    assert sum(after_run.values()) >= 4
