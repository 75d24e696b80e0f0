"""The estimators (``npcomp.TreeClassifier``, ``npcomp.PairRegressor``,
``npcomp.PairClassifier``) and
the trainer on in-memory data: scikit-learn's conventions (its own checks,
clone, a grid search), a fit equal to `npcomp train` metric for metric, a
saved, loaded and continued fit equal to an uninterrupted one, the vectors
the encoder's, training that writes nothing, callbacks that stop it, and
sentences given as trees, bracketed text or plain text without traps.
Small synthetic treebanks and tiny models: seconds each."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.utils import estimator_checks

import npcomp
import npcomp.data.datasets.synthetic
from conftest import synthetic_of_size
from npcomp.cli import main
from npcomp.errors import ConfigError, DataError
from npcomp.data.readers.ptb import parse_ptb
from npcomp.data.readers.sick import SickPair
from npcomp.data.datasets.tasks import TaskData, as_structure
from npcomp.data.text.text_trees import TextTrees
from npcomp.estimators.inputs import sentence_trees
from npcomp.estimators import EstimatorFileError, NotFittedError, PairClassifier, PairRegressor, TreeClassifier
from npcomp.forest import build_forest, node_words
from npcomp.runfiles.model_files import load_model
from npcomp.configuration.options import OPTIONS, command_line
from npcomp.runfiles.run_in_memory import RunInMemory
from npcomp.training.trainer import train

SIZES = (60, 20, 20)
SEED = 3
TINY = dict(dim=8, embedding_dim=8, epochs=2, batch_size=10, threads=1, seed=SEED)
# what differs from run to run: times and speeds, and the machine and its load
# (provenance's load average while the run trained, which other processes move)
TIMES = (
    "wall_s",
    "eval_s",
    "train_sentences_per_s",
    "train_wall_s",
    "setup_s",
    "warm_up_s",
    "test_eval_s",
    "machine",
    "load",
)


@pytest.fixture(scope="module")
def splits() -> dict:
    return synthetic_of_size(SIZES)(seed=SEED)


@pytest.fixture(scope="module")
def fitted(splits) -> TreeClassifier:
    return TreeClassifier(**TINY).fit(splits["train"], dev=splits["dev"], test=splits["test"])


def _timeless(record):
    """A metrics record without its times, for comparing two runs."""
    if isinstance(record, dict):
        return {key: _timeless(value) for key, value in record.items() if key not in TIMES}
    if isinstance(record, list):
        return [_timeless(value) for value in record]
    return record


def _unnamed(record):
    """A metrics record without its class names, for comparing two runs that name them apart."""
    if isinstance(record, dict):
        return {key: _unnamed(value) for key, value in record.items() if key != "classes"}
    if isinstance(record, list):
        return [_unnamed(value) for value in record]
    return record


def _words(trees) -> list:
    return [" ".join(tree.tokens) for tree in trees]


def _polarity(trees) -> list:
    return ["positive" if tree.root_label >= 3 else "negative" for tree in trees]


# --------------------------------------------------------------------------
# scikit-learn's conventions
# --------------------------------------------------------------------------

# the checks of sklearn.utils.estimator_checks that do not feed numeric arrays to fit
CHECKS = (
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_get_params_invariance",
    "check_set_params",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_valid_tag_types",
    "check_estimator_tags_renamed",
    "check_mixin_order",
)


@pytest.mark.parametrize("check", CHECKS)
@pytest.mark.parametrize("kind", [TreeClassifier, PairRegressor, PairClassifier])
def test_scikit_learns_checks(kind, check):
    getattr(estimator_checks, check)(kind.__name__, kind())


# a user's files: an estimator's data come to fit
FILES = {"train", "dev", "test", "classes", "folds", "fold", "data_seed"}


@pytest.mark.parametrize(
    "kind,left_out",
    [
        # each takes the options that apply to its tasks (the option table's ``tasks``)
        (TreeClassifier, {"baseline", "parses_dir", "neutral", "similarity_dim", "score_range", *FILES}),
        (
            PairRegressor,
            {"task", "baseline", "parses_dir", "neutral", "head", "supervision", "span_samples", "dropout", *FILES},
        ),
        (
            PairClassifier,
            {
                "task",
                "baseline",
                "parses_dir",
                "neutral",
                "head",
                "supervision",
                "span_samples",
                "dropout",
                "score_range",
                *FILES,
            },
        ),
    ],
)
def test_the_parameters_are_the_option_tables(kind, left_out):
    params = kind().get_params()
    assert set(OPTIONS) - set(params) == left_out
    options = [name for name in params if name in OPTIONS and name not in ("model", "task") and name not in kind.OWN]
    assert options == [name for name in OPTIONS if name in options]  # the table's order
    assert all(params[name] is None for name in options)
    signature = inspect.signature(kind)
    assert list(signature.parameters) == list(params)
    assert signature.parameters["model"].default == kind.MODEL
    with pytest.raises(TypeError, match="unexpected keyword argument 'learning_rate'"):
        kind(learning_rate=0.1)


def test_get_params_set_params_and_clone_round_trip():
    estimator = TreeClassifier("lstm", lr=0.1, recurrent_dropout=(0.1, 0.2), tree="right")
    params = estimator.get_params()
    assert params["model"] == "lstm" and params["lr"] == 0.1 and params["tree"] == "right"
    twin = clone(estimator)
    assert twin is not estimator and twin.get_params() == params
    assert TreeClassifier(**params).get_params() == params
    assert estimator.set_params(lr=0.2, epochs=3) is estimator
    assert estimator.get_params() == dict(params, lr=0.2, epochs=3)
    assert repr(estimator) == (
        "TreeClassifier(model='lstm', tree='right', epochs=3, lr=0.2, recurrent_dropout=(0.1, 0.2))"
    )
    with pytest.raises(ValueError, match="Invalid parameter 'learning_rate'"):
        estimator.set_params(learning_rate=0.1)


def test_a_bad_option_is_named_when_fitting(splits):
    with pytest.raises(ConfigError, match="must be a finite number > 0") as raised:
        TreeClassifier(lr=-1.0).fit(splits["train"][:4])
    assert raised.value.option == "lr"
    with pytest.raises(ConfigError, match="takes the paper setting of") as raised:
        TreeClassifier(task="sick").fit(splits["train"][:4])
    assert raised.value.option == "task"


@pytest.mark.parametrize(
    "kind,model,task,overrides",
    [
        (TreeClassifier, "treelstm-nary", "sst5", {}),
        (TreeClassifier, "lstm", "sst2", {"recurrent_dropout": [0.1, 0.2], "lr": 0.2}),
        (TreeClassifier, "rntn", "synthetic", {"epochs": 3}),
        (PairRegressor, "treelstm-childsum", "sick", {"vectors": "random"}),
    ],
)
def test_from_paper_is_the_papers_setting(kind, model, task, overrides):
    estimator = kind.from_paper(model, task, **overrides)
    config = npcomp.config(model, task, baseline=False, **overrides)
    assert estimator.training_config() == config
    assert estimator.lr == config["lr"] and estimator.dim == config["dim"]
    assert estimator.threads is None  # where it runs: the machine's, not the paper's


def test_an_estimator_not_fitted_says_so():
    for method in ("predict", "transform", "score"):
        with pytest.raises(NotFittedError, match="not fitted yet"):
            getattr(TreeClassifier(), method)(["it is good"])
    assert issubclass(NotFittedError, ValueError) and issubclass(NotFittedError, AttributeError)


# --------------------------------------------------------------------------
# fit, predict, score, transform
# --------------------------------------------------------------------------


def test_fit_equals_npcomp_train_metric_for_metric(tmp_path, monkeypatch, splits, capsys):
    """`npcomp train` on the same synthetic treebank, seed and options, in
    a run directory; the estimator on the same trees in memory."""
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size(SIZES))
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # `npcomp train` sets them: put back after
    options = dict(TINY, evals_per_epoch=2)
    run_dir = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--model",
                "treelstm-nary",
                "--task",
                "synthetic",
                *command_line(options),
                "--no-baseline",
                "--quiet",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    theirs = json.loads((run_dir / "metrics.json").read_text())
    estimator = TreeClassifier(**options)
    assert estimator.fit(splits["train"], dev=splits["dev"], test=splits["test"]) is estimator
    ours = estimator.metrics_
    # the estimator names the classes as its classes_ do (the trees' class
    # numbers), the command line by the task's names; the rest is the same
    assert ours["test"]["classes"] == estimator.classes_.tolist() == [0, 1, 2, 3, 4]
    assert theirs["test"]["classes"] == ["very negative", "negative", "neutral", "positive", "very positive"]
    assert _timeless(_unnamed(ours)) == _timeless(_unnamed(theirs))
    assert len(ours["epochs"]) == 2 and ours["epochs"][0]["evaluations"]
    _, params, config, vocab = load_model(run_dir)
    np.testing.assert_array_equal(estimator.params_.flat, params.flat)
    assert estimator.vocabulary_.words == vocab.words and estimator.config_ == config
    # its own measures of the test split are the run's
    assert estimator.score(splits["test"]) * 100 == pytest.approx(theirs["test"]["root_acc"])
    evaluated = estimator.evaluate(splits["test"])
    assert evaluated["classes"] == [0, 1, 2, 3, 4]
    assert _unnamed(evaluated) == _unnamed(theirs["test"])
    assert type(evaluated["root_acc"]) is float and type(evaluated["all_acc"]) is float


def test_predict_and_predict_proba(fitted, splits):
    test = splits["test"]
    probabilities = fitted.predict_proba(test)
    assert probabilities.shape == (len(test), 5) and probabilities.dtype == np.float64
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    predicted = fitted.predict(test)
    assert predicted.shape == (len(test),)
    np.testing.assert_array_equal(predicted, fitted.classes_[probabilities.argmax(axis=1)])
    assert fitted.score(test) == np.mean(predicted == [tree.root_label for tree in test])


@pytest.mark.parametrize(
    "model,options,structure",
    [
        ("treelstm-nary", {"head": "ordinal"}, "gold"),
        ("treelstm-childsum", {}, "gold"),
        ("lstm", {}, "chain"),
        ("bilstm", {"recurrent_dropout": (0.1, 0.2)}, "chain"),
        ("slstm", {"structure": "left"}, "left"),
    ],
)
def test_every_kind_of_model_fits_and_predicts(splits, model, options, structure):
    estimator = TreeClassifier(model, **dict(TINY, epochs=1), **options)
    estimator.fit(splits["train"], dev=splits["dev"])
    assert estimator.config_["structure"] == structure
    X = splits["test"][:3] + ["it is good", "(3 (2 it) (4 good))"]
    probabilities = estimator.predict_proba(X)
    assert probabilities.shape == (5, 5) and np.all(probabilities >= 0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)
    assert estimator.predict(X).shape == (5,)
    width = estimator.model_.cell.output_dim
    assert estimator.transform(X).shape == (5, width)


def test_a_fitted_estimator_pickles_and_saves_numpy_parameters(tmp_path, fitted, splits):
    import pickle

    fitted.predict(["it is good"])  # a reader kept, not pickled
    twin = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(twin.predict_proba(splits["test"]), fitted.predict_proba(splits["test"]))
    # a grid search's values are NumPy scalars
    twin.set_params(lr=np.float64(0.05), batch_size=np.int64(10))
    twin.save(tmp_path / "twin.npz")
    assert TreeClassifier.load(tmp_path / "twin.npz").get_params()["batch_size"] == 10


def test_transform_is_the_encoders_root_states(fitted, splits):
    trees = splits["test"][:6] + [parse_ptb("(3 (2 it) (4 (2 is) (4 good)))")]
    vectors = fitted.transform(trees)
    assert vectors.shape == (7, fitted.model_.cell.output_dim)
    vocab, params = fitted.vocabulary_, fitted.params_
    forest = build_forest(trees, [node_words(tree, vocab.encode(tree.tokens)) for tree in trees])
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, _ = fitted.model_.cell.forward(params.prefixed("cell"), forest, params["embedding"][words], index)
    np.testing.assert_array_equal(vectors, h[forest.root])
    # as features of another estimator
    labels = [tree.root_label >= 3 for tree in splits["train"]]
    logistic = LogisticRegression().fit(fitted.transform(splits["train"]), labels)
    assert (
        0.0
        <= logistic.score(fitted.transform(splits["test"]), [tree.root_label >= 3 for tree in splits["test"]])
        <= 1.0
    )


def test_labels_given_by_name(splits):
    X, y = _words(splits["train"]), _polarity(splits["train"])
    options = dict(TINY, tree="right", epochs=1)
    estimator = TreeClassifier(**options).fit(X, y, dev=(_words(splits["dev"]), _polarity(splits["dev"])))
    assert estimator.classes_.tolist() == ["negative", "positive"]
    assert set(estimator.predict(X[:10])) <= {"negative", "positive"}
    assert estimator.predict_proba(X[:3]).shape == (3, 2)
    assert 0.0 <= estimator.score(X, y) <= 1.0
    with pytest.raises(ValueError, match=r"y\[1\] is 'neutral', not one of the classes"):
        estimator.score(X[:2], ["positive", "neutral"])
    with pytest.raises(ValueError, match="3 labels for 2 sentences"):
        estimator.score(X[:2], y[:3])
    with pytest.raises(ValueError, match="all whole numbers or all strings"):
        TreeClassifier(**options).fit(X[:2], ["positive", 1])


def test_a_grid_search_over_two_learning_rates(splits):
    X, y = _words(splits["train"]), _polarity(splits["train"])
    search = GridSearchCV(TreeClassifier(**dict(TINY, tree="right", epochs=1)), {"lr": [0.05, 0.2]}, cv=2)
    search.fit(X, y)
    assert sorted(search.cv_results_["param_lr"]) == [0.05, 0.2]
    assert all(0.0 <= score <= 1.0 for score in search.cv_results_["mean_test_score"])
    assert search.best_estimator_.lr in (0.05, 0.2)
    assert search.predict(X[:4]).shape == (4,)


# --------------------------------------------------------------------------
# one file: save, load, continue
# --------------------------------------------------------------------------


def test_save_load_and_continue_equal_an_uninterrupted_fit(tmp_path, splits):
    data = dict(dev=splits["dev"], test=splits["test"])
    options = dict(TINY, evals_per_epoch=2)
    whole = TreeClassifier(**dict(options, epochs=3)).fit(splits["train"], **data)
    first = TreeClassifier(**dict(options, epochs=1)).fit(splits["train"], **data)
    path = tmp_path / "classifier"
    first.save(path)
    assert [file.name for file in tmp_path.iterdir()] == ["classifier"]
    loaded = TreeClassifier.load(path)
    assert loaded.get_params() == first.get_params()
    np.testing.assert_array_equal(loaded.classes_, first.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(splits["test"]), first.predict_proba(splits["test"]))
    loaded.set_params(epochs=3, warm_start=True).fit(splits["train"], **data)
    assert _timeless(loaded.metrics_["epochs"]) == _timeless(whole.metrics_["epochs"])
    for key in ("best_at", "dev", "test"):
        assert loaded.metrics_[key] == whole.metrics_[key]
    np.testing.assert_array_equal(loaded.params_.flat, whole.params_.flat)
    state, whole_state = (estimator.run_.load_npz("checkpoint.npz") for estimator in (loaded, whole))
    for key in ("params", "optimizer.sum_squares"):
        np.testing.assert_array_equal(state[key], whole_state[key])
    # continuing on other examples is refused
    with pytest.raises(ConfigError, match="on the examples it was fitted on"):
        loaded.set_params(epochs=4).fit(splits["train"][:-1], **data)


def _rewritten(path, target, **changes):
    """The saved file at ``path`` with some of its entries changed, at ``target``."""
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    for key, change in changes.items():
        if change is None:
            del arrays[key]
        else:
            arrays[key] = change(arrays[key])
    with open(target, "wb") as handle:
        np.savez(handle, **arrays)
    return target


def _json_changed(**values):
    return lambda array: np.array(json.dumps({**json.loads(str(array)), **values}))


def test_a_file_whose_parts_disagree_is_refused_naming_what(tmp_path, fitted):
    path = tmp_path / "good.npz"
    fitted.save(path)
    bad = tmp_path / "bad.npz"
    rows = len(fitted.vocabulary_)
    cases = [
        (
            dict(config=_json_changed(embedding_dim=12)),
            "the parameters' embedding table has rows of 8 numbers but the configuration's embedding_dim is 12",
        ),
        (
            dict(vocab=lambda words: words[:-2]),
            f"the parameters' embedding table has {rows} rows but the vocabulary holds {rows - 2} words",
        ),
        (
            dict(estimator=_json_changed(n_classes=3)),
            r"softmax.W has shape \(8, 5\) where the configuration's model \(treelstm-nary, dim "
            r"8, embedding_dim 8, 3 classes",
        ),
        (
            dict(config=_json_changed(model="treelstm-childsum")),
            "the estimator's model is 'treelstm-nary' but its configuration's is 'treelstm-childsum'",
        ),
        (
            dict(config=_json_changed(optimizer="adadelta")),
            r"the training state's optimizer.mean_square_gradient is none, but the "
            r"configuration's optimiser \(adadelta\)",
        ),
        (dict(config=_json_changed(lr=0.5)), "the digest differs"),
        (dict(**{"param.cell.U": None}), "the parameters lack cell.U"),
        (dict(metrics=None), "a damaged estimator file: it lacks metrics"),
    ]
    for changes, message in cases:
        with pytest.raises(EstimatorFileError, match=message) as raised:
            TreeClassifier.load(_rewritten(path, bad, **changes))
        assert str(raised.value).startswith(f"{bad}: ")
    with pytest.raises(EstimatorFileError, match="holds a TreeClassifier, not a PairRegressor"):
        PairRegressor.load(path)
    (tmp_path / "notes.txt").write_text("not a model\n")
    with pytest.raises(EstimatorFileError, match="not a saved estimator"):
        TreeClassifier.load(tmp_path / "notes.txt")
    with pytest.raises(EstimatorFileError, match="no such file"):
        TreeClassifier.load(tmp_path / "missing.npz")


# --------------------------------------------------------------------------
# the trainer on in-memory data
# --------------------------------------------------------------------------


def _config(**changes) -> dict:
    return npcomp.config("treelstm-nary", "synthetic", **dict(TINY, baseline=False, **changes))


def _quiet(*_args) -> None:
    return None


def test_training_in_memory_writes_nothing_and_equals_a_run_directory(tmp_path, monkeypatch, splits):
    where = tmp_path / "working"
    where.mkdir()
    monkeypatch.chdir(where)
    in_memory = train(_config(), data=splits, run_dir=None, progress=False, echo=_quiet)
    assert list(tmp_path.iterdir()) == [where] and list(where.iterdir()) == []
    on_disk = train(_config(), tmp_path / "run", data=splits, progress=False, echo=_quiet)
    assert _timeless(in_memory) == _timeless(on_disk)
    assert {"metrics.json", "model.npz", "checkpoint.npz", "log.jsonl", "predictions.jsonl"} <= {
        path.name for path in (tmp_path / "run").iterdir()
    }
    # a run kept in memory holds what the directory holds
    run = RunInMemory()
    kept = train(_config(), run, data=splits, progress=False, echo=_quiet)
    assert _timeless(kept) == _timeless(on_disk) and list(where.iterdir()) == []
    _, params, _, _ = load_model(run)
    np.testing.assert_array_equal(params.flat, load_model(tmp_path / "run")[1].flat)
    assert [record["event"] for record in run.log_records()] == [
        json.loads(line)["event"] for line in (tmp_path / "run" / "log.jsonl").open()
    ]


def test_data_without_a_test_split_and_as_a_task(splits):
    metrics = train(
        _config(epochs=1), data={"train": splits["train"], "dev": splits["dev"]}, progress=False, echo=_quiet
    )
    assert metrics["test"] is None and metrics["dev"] is not None
    task = TaskData("synthetic", 7, {"train": splits["train"], "dev": splits["dev"]})
    metrics = train(_config(epochs=1), data=task, progress=False, echo=_quiet)
    assert len(metrics["dev"]["root_confusion"]) == 7  # the task's classes, not the labels'


def test_data_that_do_not_fit_are_named(splits):
    pair = SickPair(splits["train"][0], splits["train"][1], 3.0, "1")
    with pytest.raises(ConfigError, match="the data hold sentence pairs, but synthetic is a sentence task") as raised:
        train(_config(), data={"train": [pair], "dev": [pair]}, progress=False, echo=_quiet)
    assert raised.value.option == "task"
    with pytest.raises(DataError, match="no dev examples"):
        train(_config(), data={"train": splits["train"]}, progress=False, echo=_quiet)
    with pytest.raises(DataError, match="unknown split"):
        train(_config(), data={"train": splits["train"], "validation": splits["dev"]}, progress=False, echo=_quiet)
    with pytest.raises(DataError, match="dev example 1 is a str, not a Tree"):
        train(
            _config(), data={"train": splits["train"], "dev": [splits["dev"][0], "good"]}, progress=False, echo=_quiet
        )


def test_a_callback_stops_training_early(splits):
    heard = []

    def patience(at, dev, metrics):
        heard.append((at, dev["root_acc"], metrics["best_at"]))
        return at >= 1.5

    metrics = train(
        _config(epochs=5, evals_per_epoch=2), data=splits, callbacks=[patience], progress=False, echo=_quiet
    )
    assert [at for at, _, _ in heard] == [0.5, 1.0, 1.5]
    assert heard[1][1] == metrics["epochs"][0]["dev"]["root_acc"]
    assert metrics["stopped"] == {"at": 1.5, "by": "patience"}
    assert len(metrics["epochs"]) == 1 and metrics["test"] is not None
    # the estimator's callbacks are the trainer's
    estimator = TreeClassifier(**dict(TINY, epochs=5), callbacks=(patience,))
    estimator.fit(splits["train"], dev=splits["dev"])
    assert estimator.metrics_["stopped"] == {"at": 2.0, "by": "patience"}
    assert len(estimator.metrics_["epochs"]) == 2


# --------------------------------------------------------------------------
# sentences from strings, without traps
# --------------------------------------------------------------------------


def test_a_bracketed_tree_is_kept_whatever_tree_says():
    given, plain = "(3 (2 it) (4 (2 is) (4 good)))", "it is very good"
    trees = TextTrees("gold", "right", keep_given=True)([given, plain])
    assert trees[0].to_ptb() == given  # its own brackets and phrase labels
    assert trees[1].n_nodes == 7 and trees[1].parent.tolist() == [6, 5, 4, 4, 5, 6, -1]
    # without keep_given (npcomp predict --tree right) it is re-bracketed
    assert TextTrees("gold", "right")([given])[0].to_ptb() == "(3 (2 it) (X (2 is) (4 good)))"
    # a treebank's tree: the run reads it as its structure says, as a task's files
    assert TextTrees("chain", keep_given=True)([given])[0].to_ptb() == given
    chain = as_structure(TextTrees("chain", keep_given=True)([given]), "chain")[0]
    assert chain.tokens == ("it", "is", "good") and chain.label.tolist() == [-1, -1, 3]
    # a Tree read already is kept too: the same object
    tree = parse_ptb(given)
    assert (
        TextTrees("gold", "left", keep_given=True).build([TextTrees("gold", "left", keep_given=True).plan_tree(tree)])[
            0
        ]
        is tree
    )


def test_sentences_as_trees_brackets_and_text(splits):
    """Unlabelled bracketings, single-word phrases and plain text read as
    written; a bracketed sentence keeps its brackets though tree= says right."""
    X = [
        "((the movie) (is good))",
        "((the movie) (is bad))",
        "(the movie)",
        "good",
        "(1 (0 it) (1 good))",
        "(0 (0 it) (0 bad))",
    ]
    y = [1, 0, 1, 1, None, None]
    trees = sentence_trees(X, TextTrees("gold", "right", keep_given=True))
    assert [tree.tokens for tree in trees[:4]] == [
        ("the", "movie", "is", "good"),
        ("the", "movie", "is", "bad"),
        ("the", "movie"),
        ("good",),
    ]
    assert trees[0].parent.tolist() == [2, 2, 6, 5, 5, 6, -1]  # ((the movie) (is good))
    assert trees[4].label.tolist() == [0, 1, 1]
    named = TreeClassifier(**dict(TINY, tree="right", epochs=1))
    with pytest.raises(ValueError, match="whole numbers or all strings"):
        named.fit(X, y)
    estimator = named.fit(X[:4] * 3, y[:4] * 3, dev=(X[:4], y[:4]))
    assert estimator.classes_.tolist() == [0, 1]
    assert estimator.predict(X).shape == (6,)
    assert 0.0 <= estimator.score(X[4:]) <= 1.0  # labelled at their roots: no y needed
    with pytest.raises(DataError, match=r"X\[0\]: no class at its root"):
        estimator.score(X[:1])
    with pytest.raises(DataError, match=r"X\[1\]: .*unbalanced|X\[1\]: .*bracket"):
        estimator.set_params(input="tree").predict(["(good)", "((the movie) good"])
    with pytest.warns(UserWarning, match=r"X\[1\] starts with '\(' but is not a complete"):
        estimator.set_params(input="auto").predict(["good", "((the movie) good"])
    with pytest.raises(TypeError, match="a sequence of sentences"):
        estimator.predict("the movie is good")


def test_a_sequence_model_on_phrase_spans(splits):
    """The LSTM's paper setting trains on every labelled phrase as a
    sequence of its own (supervision spans): made from the trees given, as
    from a treebank's files; plain sentences and trees read as chains."""
    estimator = TreeClassifier.from_paper("lstm", "sst5", **dict(TINY, epochs=1, span_samples=2))
    assert estimator.supervision == "spans" and estimator.structure == "chain"
    estimator.fit(splits["train"], dev=splits["dev"])
    record = estimator.metrics_["epochs"][0]
    assert record["train_examples"] == len(splits["train"]) * 3  # each sentence, 2 phrases
    assert estimator.predict(["it is good", "(3 (2 it) (4 good))"]).shape == (2,)
    assert estimator.score(splits["test"]) == pytest.approx(estimator.evaluate(splits["test"])["root_acc"] / 100)


def test_a_root_label_that_disagrees_with_y_is_named():
    with pytest.raises(
        DataError,
        match=r"X\[0\]: the tree's root is labelled 3, but y gives "
        r"class 0",
    ):
        TreeClassifier(**TINY).fit(["(3 (2 it) (4 good))", "(1 bad)"], [0, 1])


# --------------------------------------------------------------------------
# PairRegressor
# --------------------------------------------------------------------------


def _pairs(trees: list) -> tuple:
    """Each sentence with the next; their relatedness in [0, 4]: how far
    apart their roots' classes lie, reversed."""
    pairs = list(zip(trees, trees[1:] + trees[:1]))
    return pairs, [4.0 - abs(a.root_label - b.root_label) for a, b in pairs]


def test_pair_regressor(tmp_path, splits):
    X, y = _pairs(splits["train"])
    dev = _pairs(splits["dev"])
    regressor = PairRegressor(vectors="random", similarity_dim=6, score_range=(0, 4), **TINY)
    assert regressor.fit(X, y, dev=dev) is regressor
    # 0..4 are the head's ratings 1..5
    assert regressor.score_range_ == (0.0, 4.0) and regressor.model_.head.n_classes == 5
    assert min(y) > 0  # the range is the one given, not the training scores'
    predicted = regressor.predict(dev[0])
    assert predicted.shape == (len(dev[0]),) and np.all((0.0 <= predicted) & (predicted <= 4.0))
    from scipy.stats import pearsonr

    assert regressor.score(*dev) == pytest.approx(pearsonr(predicted, dev[1])[0], abs=1e-12)
    assert regressor.score(*dev) == pytest.approx(regressor.metrics_["dev"]["pearson"], abs=1e-12)
    vectors = regressor.transform(dev[0][:3])
    assert vectors.shape == (3, 16)
    np.testing.assert_array_equal(vectors[:, :8], regressor.sentence_vectors([a for a, _ in dev[0][:3]]))
    path = tmp_path / "regressor.npz"
    regressor.save(path)
    loaded = PairRegressor.load(path)
    assert loaded.score_range_ == (0.0, 4.0)
    np.testing.assert_array_equal(loaded.predict(dev[0]), predicted)
    with pytest.raises(DataError, match=r"y\[0\]: score 9 outside the range given"):
        PairRegressor(vectors="random", score_range=(0, 4), **TINY).fit(X, [9.0] + y[1:])
    with pytest.raises(ValueError, match=r"X\[0\] has no score"):
        regressor.score(dev[0])


# --------------------------------------------------------------------------
# PairClassifier
# --------------------------------------------------------------------------


def _classed_pairs(trees: list) -> tuple:
    """Each sentence with the next, classed by their roots: ENTAILMENT for one
    class, CONTRADICTION for opposite polarities, NEUTRAL otherwise."""
    pairs = list(zip(trees, trees[1:] + trees[:1]))

    def kind(a, b):
        if a.root_label == b.root_label:
            return "ENTAILMENT"
        return "CONTRADICTION" if (a.root_label - 2) * (b.root_label - 2) < 0 else "NEUTRAL"

    return pairs, [kind(a, b) for a, b in pairs]


def test_pair_classifier(tmp_path, splits):
    X, y = _classed_pairs(splits["train"])
    dev = _classed_pairs(splits["dev"])
    classifier = PairClassifier(vectors="random", similarity_dim=6, **TINY)
    with pytest.raises(NotFittedError, match="PairClassifier is not fitted"):
        classifier.predict(dev[0])
    assert classifier.fit(X, y, dev=dev, test=dev) is classifier
    np.testing.assert_array_equal(classifier.classes_, ["CONTRADICTION", "ENTAILMENT", "NEUTRAL"])
    assert classifier.model_.head_name == "pair_softmax"
    assert classifier.model_.head.n_classes == 3
    predicted = classifier.predict(dev[0])
    assert predicted.shape == (len(dev[0]),) and set(predicted) <= set(classifier.classes_)
    probabilities = classifier.predict_proba(dev[0])
    assert probabilities.shape == (len(dev[0]), 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(classifier.classes_[probabilities.argmax(axis=1)], predicted)
    accuracy = float(np.mean(predicted == np.array(dev[1])))
    assert classifier.score(*dev) == pytest.approx(accuracy, abs=1e-12)
    # the test split's metrics are the best model's on the same pairs
    test = classifier.metrics_["test"]
    assert test["accuracy"] == pytest.approx(100 * accuracy, abs=1e-9)
    assert test["classes"] == ["CONTRADICTION", "ENTAILMENT", "NEUTRAL"]
    confusion = np.array(test["confusion"])
    assert confusion.sum() == len(dev[0]) and np.trace(confusion) == round(accuracy * len(dev[0]))
    assert classifier.evaluate(*dev)["confusion"] == test["confusion"]
    vectors = classifier.transform(dev[0][:3])
    assert vectors.shape == (3, 16)
    np.testing.assert_array_equal(vectors[:, 8:], classifier.sentence_vectors([b for _, b in dev[0][:3]]))
    path = tmp_path / "classifier.npz"
    classifier.save(path)
    loaded = PairClassifier.load(path)
    np.testing.assert_array_equal(loaded.classes_, classifier.classes_)
    np.testing.assert_array_equal(loaded.predict_proba(dev[0]), probabilities)
    with pytest.raises(EstimatorFileError, match="holds a PairClassifier, not a PairRegressor"):
        PairRegressor.load(path)
    with pytest.raises(ValueError, match=r"y\[1\] is 'MAYBE', not one of the classes"):
        classifier.score(dev[0][:2], ["NEUTRAL", "MAYBE"])
    with pytest.raises(ValueError, match=r"X\[0\] has no class"):
        classifier.score(dev[0])


def test_pair_classifier_on_sick_pairs_own_labels(splits):
    """SickPairs carry their class numbers: y None trains on them, and the
    classes are the numbers 0..C-1."""
    from npcomp.data.readers.sick import SickPair

    X, y = _classed_pairs(splits["train"])
    names = ["CONTRADICTION", "ENTAILMENT", "NEUTRAL"]
    pairs = [SickPair(a, b, float("nan"), str(k), names.index(label)) for k, ((a, b), label) in enumerate(zip(X, y))]
    classifier = PairClassifier("lstm", vectors="random", **dict(TINY, epochs=1))
    classifier.fit(pairs[:40], dev=pairs[40:])
    np.testing.assert_array_equal(classifier.classes_, [0, 1, 2])
    assert set(classifier.predict(pairs[40:])) <= {0, 1, 2}
    assert 0.0 <= classifier.score(pairs[40:]) <= 1.0


def test_the_estimators_load_when_named():
    import subprocess
    import sys

    code = (
        "import sys, npcomp; print('numpy' in sys.modules); "
        "print(npcomp.TreeClassifier.__module__, 'numpy' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "npcomp.estimators.tree_classifier", "True"]
