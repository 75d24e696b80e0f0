"""The functional layer from Python: ``npcomp.config`` as `npcomp train`
runs it, ``loss`` beside ``loss_and_gradient`` (and its buffer, allocated,
zeroed or added into), the encoder's states, ``Parameters.save``/``load``
and ``Optimizer.for_model``, on real models, files and runs."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import npcomp
import npcomp.data.datasets.synthetic
from gradcheck.suite import Setting, setting_case
from npcomp.cli import build_parser, main, train_config
from npcomp.errors import ConfigError
from npcomp.params import Layout, ParameterFileError, Parameters
from npcomp.training.optimizers import Optimizer, make_optimizer
from npcomp.runfiles.run_paths import recorded_config

# a constituency tree model with every kind of dropout, L2 and node averaging;
# a sequence model with recurrent dropout; a pair of sentences (similarity head)
TREE = Setting("treelstm-nary", dropout=0.3, embedding_dropout=0.2, l2=0.1, average="nodes")
SEQUENCE = Setting("lstm", trees="chain", embedding_dropout=0.2, recurrent_dropout=0.3, l2=0.01)
PAIR = Setting("treelstm-childsum", head="similarity", trees="dependency", l2=0.1, supervision="root")
SETTINGS = {"tree": TREE, "sequence": SEQUENCE, "pair": PAIR}


def _case(name: str, seed: int = 0):
    return setting_case(SETTINGS[name], seed)


# --------------------------------------------------------------------------
# loss, loss_and_gradient and its buffer
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SETTINGS)
def test_loss_is_the_loss_of_loss_and_gradient(name):
    model, params, batch, options = _case(name)
    loss = model.loss(params, batch, **options)
    assert type(loss) is float
    assert loss == model.loss_and_gradient(params, batch, **options)[0]


@pytest.mark.parametrize("name", ["tree", "sequence"])
def test_loss_draws_the_dropout_masks_loss_and_gradient_draws(name):
    model, params, batch, options = _case(name)
    setting = SETTINGS[name]
    rates = dict(
        l2=setting.l2,
        average=setting.average,
        dropout=setting.dropout,
        embedding_dropout=setting.embedding_dropout,
        recurrent_dropout=setting.recurrent_dropout,
    )
    alone = model.loss(params, batch, rng=np.random.default_rng(7), **rates)
    with_gradient, _ = model.loss_and_gradient(params, batch, rng=np.random.default_rng(7), **rates)
    assert alone == with_gradient
    # another draw of the masks gives another objective: the masks were drawn
    assert alone != model.loss(params, batch, rng=np.random.default_rng(8), **rates)


def test_dropout_without_a_generator_is_refused():
    model, params, batch, _ = _case("tree")
    with pytest.raises(ValueError, match="give rng"):
        model.loss(params, batch, dropout=0.5)
    with pytest.raises(ValueError, match="give rng"):
        model.loss_and_gradient(params, batch, recurrent_dropout=[0.0, 0.2])


@pytest.mark.parametrize("name", SETTINGS)
def test_a_dirty_buffer_gives_the_gradient_of_a_fresh_one(name):
    model, params, batch, options = _case(name)
    loss, fresh = model.loss_and_gradient(params, batch, **options)
    assert isinstance(fresh, Parameters) and fresh.layout is params.layout
    assert np.abs(fresh["embedding"]).sum() > 0 and np.abs(fresh.flat[: model.dense_size]).sum() > 0
    dirty = params.zeros_like()
    dirty.flat[:] = np.random.default_rng(1).normal(size=dirty.flat.shape)
    dirty_loss, rows = model.loss_and_gradient(params, batch, dirty, **options)
    assert dirty_loss == loss
    np.testing.assert_array_equal(dirty.flat, fresh.flat)
    # the rows read: the only embedding rows with a gradient
    read = np.flatnonzero(np.abs(fresh["embedding"]).sum(axis=1))
    assert set(read) <= set(rows.tolist())
    assert np.array_equal(rows, np.unique(rows))


@pytest.mark.parametrize("name", SETTINGS)
def test_accumulate_adds_into_the_buffer_as_it_is(name):
    model, params, batch, options = _case(name)
    _, fresh = model.loss_and_gradient(params, batch, **options)
    held = params.zeros_like()
    held.flat[:] = np.random.default_rng(2).normal(size=held.flat.shape)
    before = held.flat.copy()
    model.loss_and_gradient(params, batch, held, accumulate=True, **options)
    np.testing.assert_allclose(held.flat - before, fresh.flat, rtol=0, atol=1e-12)
    # twice into one buffer: the gradient of the two minibatches' summed objectives
    twice = params.zeros_like()
    model.loss_and_gradient(params, batch, twice, **options)
    model.loss_and_gradient(params, batch, twice, accumulate=True, **options)
    np.testing.assert_allclose(twice.flat, 2 * fresh.flat, rtol=1e-15, atol=0)


def test_a_buffer_of_another_model_is_refused():
    model, params, batch, options = _case("tree")
    other_model, other_params, _, _ = _case("sequence")
    assert other_params.flat.shape != params.flat.shape
    with pytest.raises(ValueError, match="a buffer of another model"):
        model.loss_and_gradient(params, batch, other_params.zeros_like(), **options)


# --------------------------------------------------------------------------
# the encoder's states
# --------------------------------------------------------------------------


def test_sentence_states_of_a_tree_model_are_the_cells_root_states():
    model, params, forest, options = _case("tree")
    trace = {}
    model.loss_and_gradient(params, forest, trace=trace, **options)
    assert model.head_name == "softmax"
    states = model.sentence_states(params, forest)
    assert states.shape == (forest.n_trees, model.cell.output_dim)
    # the masks of the gradient check's case were drawn: the trace's states are under them
    np.testing.assert_array_equal(model.sentence_states(params, forest, options["masks"]), trace["h"][forest.root])
    # without masks: the cell's own forward on the forest's words
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, _ = model.cell.forward(params.prefixed("cell"), forest, params["embedding"][words], index)
    np.testing.assert_array_equal(states, h[forest.root])
    np.testing.assert_array_equal(model.node_states(params, forest), h)


def test_sentence_states_of_a_pair_model_are_its_encoders():
    model, params, batch, _ = _case("pair")
    states = model.sentence_states(params, batch.forest)
    left, right = states[: batch.n_pairs], states[batch.n_pairs :]
    np.testing.assert_allclose(model.predict_states(params, left, right), model.predict(params, batch), rtol=1e-12)


# --------------------------------------------------------------------------
# Parameters.save / Parameters.load
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parameters_round_trip_through_a_file(tmp_path, dtype):
    model, params, batch, options = _case("tree")
    params = params.astype(dtype)
    path = tmp_path / "weights"  # no suffix: the file is named as given
    params.save(path)
    assert path.is_file() and not (tmp_path / "weights.npz").exists()
    assert [file.removesuffix(".npy") for file in zipfile.ZipFile(path).namelist()] == model.layout.names
    loaded = Parameters.load(path, model.layout)
    assert loaded.layout is model.layout and loaded.flat.dtype == dtype
    np.testing.assert_array_equal(loaded.flat, params.flat)
    # without a layout: the file's own names and shapes
    own = Parameters.load(path)
    assert own.layout.shapes == model.layout.shapes
    np.testing.assert_array_equal(own.flat, params.flat)
    assert Parameters.load(path, model.layout, dtype=np.float64).flat.dtype == np.float64
    # a file already there is replaced whole, with no temporary file left beside it
    params.flat[:] = 0.5
    params.save(path)
    np.testing.assert_array_equal(Parameters.load(path, model.layout).flat, params.flat)
    assert sorted(file.name for file in tmp_path.iterdir()) == ["weights"]


def test_a_parameter_file_of_another_model_names_the_file_and_the_difference(tmp_path):
    model, params, _, _ = _case("tree")
    path = tmp_path / "model.npz"
    params.save(path)
    wider = Layout(
        [
            (name, (shape[0] + 2, *shape[1:])) if name == "embedding" else (name, shape)
            for name, shape in model.layout.shapes
        ]
    )
    with pytest.raises(ParameterFileError) as raised:
        Parameters.load(path, wider)
    message = str(raised.value)
    rows, width = model.layout["embedding"].shape
    assert message.startswith(f"{path}: ")
    assert f"embedding has shape ({rows}, {width}) where the model's is ({rows + 2}, {width})" in message
    assert f"a vocabulary of {rows} words, not {rows + 2}" in message
    renamed = Layout([("ordinal.W" if name == "softmax.W" else name, shape) for name, shape in model.layout.shapes])
    with pytest.raises(ParameterFileError, match=r"lacks ordinal\.W and holds softmax\.W"):
        Parameters.load(path, renamed)


def test_a_file_that_is_not_a_parameter_archive_is_named(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not parameters\n")
    single = tmp_path / "single.npy"
    np.save(single, np.zeros(3))
    whole = tmp_path / "labels.npz"
    np.savez(whole, labels=np.arange(3))
    for path, reason in (
        (text, "not a NumPy archive"),
        (single, "a single array"),
        (whole, r"floating point: labels \(int64\)"),
    ):
        with pytest.raises(ParameterFileError, match=reason) as raised:
            Parameters.load(path)
        assert str(raised.value).startswith(f"{path}: ")


# --------------------------------------------------------------------------
# Optimizer.for_model
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,options",
    [
        ("adagrad", dict(lr=0.05, embedding_lr=0.1)),
        ("adadelta", dict(lr=1.0, embedding_lr=0.5, epsilon=1e-5)),
        ("sgd", dict(lr=0.1, embedding_rule="sgd")),
    ],
)
def test_optimizer_for_a_model_is_make_optimizer_with_its_offsets(name, options):
    model, params, batch, loss_options = _case("tree")
    ours = Optimizer.for_model(model, name, dtype=np.float64, **options)
    theirs = make_optimizer(
        name,
        size=model.layout.size,
        dense_size=model.dense_size,
        embedding_offset=model.layout["embedding"].offset,
        embedding_dim=model.embedding_dim,
        lr=options["lr"],
        embedding_lr=options.get("embedding_lr", options["lr"]),
        dtype=np.float64,
        embedding_rule=options.get("embedding_rule", "same"),
        epsilon=options.get("epsilon"),
    )
    assert type(ours) is type(theirs)
    assert vars(ours).keys() == vars(theirs).keys()
    for key, value in vars(theirs).items():
        if key != "state":
            assert getattr(ours, key) == value, key
    # three steps of each from the same start end at the same parameters and state
    moved = {}
    for optimizer, label in ((ours, "ours"), (theirs, "theirs")):
        flat = params.copy()
        grads = flat.zeros_like()
        for _ in range(3):
            _, rows = model.loss_and_gradient(flat, batch, grads, **loss_options)
            optimizer.step(flat.flat, grads.flat, rows)
        moved[label] = (flat.flat, optimizer.state_dict())
    np.testing.assert_array_equal(moved["ours"][0], moved["theirs"][0])
    assert not np.array_equal(moved["ours"][0], params.flat)
    for key, state in moved["theirs"][1].items():
        np.testing.assert_array_equal(moved["ours"][1][key], state)


# --------------------------------------------------------------------------
# npcomp.config
# --------------------------------------------------------------------------

_original_splits = npcomp.data.datasets.synthetic.synthetic_splits


def _small_splits(seed=0, sizes=None) -> dict:
    return _original_splits(seed=seed, sizes=(40, 20, 20))


TINY = dict(dim=8, embedding_dim=8, epochs=1, batch_size=10, baseline=False, train_eval=False)


def _flags(options: dict) -> list:
    from npcomp.configuration.options import command_line

    return command_line(
        {name: ",".join(map(str, value)) if isinstance(value, list) else value for name, value in options.items()}
    )


@pytest.mark.parametrize(
    "model,options",
    [
        ("treelstm-nary", dict(lr=0.1, fixed_embeddings=True, l2=0.0)),
        ("bilstm", dict(recurrent_dropout=[0.1, 0.2], untied=True, embedding_dropout=0.1)),
    ],
)
def test_config_is_what_npcomp_train_records(tmp_path, monkeypatch, model, options):
    """`npcomp train` on the synthetic treebank (a small one: the data are
    not the configuration's) records in metrics.json and log.jsonl what
    npcomp.config returns for the same options, its paths as a run records
    them."""
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", _small_splits)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # `npcomp train` sets them: put back after
    options = dict(TINY, **options)
    run_dir = tmp_path / "run"
    arguments = ["train", "--model", model, "--task", "synthetic", *_flags(options), "--quiet", "--out", str(run_dir)]
    assert main(arguments) == 0
    recorded = json.loads((run_dir / "metrics.json").read_text())["config"]
    expected = recorded_config(npcomp.config(model, "synthetic", **options))
    assert recorded == expected
    start = json.loads((run_dir / "log.jsonl").read_text().splitlines()[0])
    assert start["event"] == "start" and start["config"] == expected


def test_config_of_sst5_is_the_command_lines():
    """npcomp.config("treelstm-nary", "sst5", lr=0.1): the configuration
    `npcomp train --model treelstm-nary --task sst5 --lr 0.1` builds."""
    import os

    args = build_parser().parse_args(["train", "--model", "treelstm-nary", "--task", "sst5", "--lr", "0.1"])
    args.threads = os.cpu_count() or 1  # as `npcomp train` sets it (cli/__init__.py)
    config = npcomp.config("treelstm-nary", "sst5", lr=0.1)
    assert config == train_config(args)
    assert config["model"] == "treelstm-nary" and config["task"] == "sst5"
    assert config["lr"] == 0.1 and config["dim"] == 150 and config["threads"] >= 1
    # given threads, the run's own
    assert npcomp.config("treelstm-nary", "sst5", lr=0.1, threads=1)["threads"] == 1
    # no model nor task: `npcomp train`'s default, the Constituency Tree-LSTM on synthetic
    bare = npcomp.config()
    assert (bare["model"], bare["task"]) == ("treelstm-nary", "synthetic")


@pytest.mark.parametrize(
    "overrides,option,reason",
    [
        (dict(lerning_rate=0.1), "lerning_rate", "is not a training option"),
        (dict(embeding_dim=10), "embeding_dim", r"did you mean embedding_dim\?"),
        (dict(lr=-0.5), "lr", "must be a finite number > 0"),
        (dict(lr="fast"), "lr", "invalid float value"),
        (dict(lr=True), "lr", "takes a value"),
        (dict(epochs=2.5), "epochs", "invalid int value"),
        (dict(fixed_embeddings="maybe"), "fixed_embeddings", "is a switch"),
        (dict(recurrent_dropout=[0.1, 1.5]), "recurrent_dropout", r"in \[0, 1\)"),
        (dict(optimizer="adam"), "optimizer", "invalid choice"),
        (dict(untied=True), "untied", "does not apply to treelstm-nary"),
        (dict(span_samples=4), "span_samples", "needs supervision 'spans'"),
    ],
)
def test_a_bad_option_raises_config_error_naming_it(overrides, option, reason):
    with pytest.raises(ConfigError, match=reason) as raised:
        npcomp.config("treelstm-nary", "sst5", **overrides)
    assert raised.value.option == option


@pytest.mark.parametrize("model,task,option", [("treelstm", "sst5", "model"), ("treelstm-nary", "imdb", "task")])
def test_an_unknown_model_or_task_is_named(model, task, option):
    with pytest.raises(ConfigError, match="invalid choice") as raised:
        npcomp.config(model, task)
    assert raised.value.option == option


def test_importing_npcomp_loads_neither_numpy_nor_numba():
    code = (
        "import sys, npcomp; config = npcomp.config('lstm', 'sst5'); "
        "print(sorted(name for name in ('numpy', 'numba') if name in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
