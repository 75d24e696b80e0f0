"""A saved estimator's file edited by hand or damaged: every such file is
refused with ``EstimatorFileError`` naming the file (never a raw
AttributeError, KeyError, TypeError or ValueError from inside the loader),
or loads and predicts as the saved one did.  The hand-edited cases first,
then the loader fuzzed with hypothesis: each entry of a saved file replaced
by generated JSON values, numbers, text or arrays.  One tiny fitted
TreeClassifier and PairRegressor (seconds) for the whole module."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npcomp.estimators import EstimatorFileError, PairRegressor, TreeClassifier
from npcomp.estimators.model_file import FORMAT

TINY = dict(dim=6, embedding_dim=6, epochs=1, batch_size=10, threads=1, seed=1, tree="right")
TEXTS = [
    "a fine film",
    "a dull film",
    "not a fine film",
    "fine and good",
    "dull and bad",
    "a good film",
    "a bad film",
    "not bad",
    "so dull",
    "very fine",
] * 2
LABELS = ["pos", "neg", "neg", "pos", "neg", "pos", "neg", "pos", "neg", "pos"] * 2
PAIRS = [(a, b) for a, b in zip(TEXTS, TEXTS[3:] + TEXTS[:3])]
SCORES = [1.0 + (index * 7 % 9) / 2 for index in range(len(PAIRS))]


class Saved(tuple):
    """(path, entries, predictions) of a saved estimator, shown short in a failure's report."""

    def __repr__(self) -> str:
        return f"Saved({self[0].name})"


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict:
    """kind -> (path of its saved file, its entries, the predictions it makes)."""
    directory = tmp_path_factory.mktemp("saved")
    fitted = {
        TreeClassifier: (TreeClassifier(**TINY).fit(TEXTS, LABELS), TEXTS),
        PairRegressor: (PairRegressor(**TINY, vectors="random").fit(PAIRS, SCORES), PAIRS),
    }
    files = {}
    for kind, (estimator, X) in fitted.items():
        path = directory / f"{kind.__name__}.npz"
        estimator.save(path)
        with np.load(path) as archive:
            entries = {key: archive[key] for key in archive.files}
        files[kind] = Saved((path, entries, estimator.predict(X[:4])))
    return files


def _written(path, entries: dict, **changes):
    """``entries`` with ``changes`` (None: the entry left out) written to ``path``."""
    arrays = dict(entries)
    for key, value in changes.items():
        if value is None:
            arrays.pop(key, None)
        else:
            arrays[key] = value
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)
    return path


def _estimator_entry(entries: dict, **changes) -> np.ndarray:
    record = json.loads(str(entries["estimator"]))
    record.update(changes)
    return np.array(json.dumps(record))


def _without(entries: dict, key: str) -> np.ndarray:
    record = json.loads(str(entries["estimator"]))
    del record[key]
    return np.array(json.dumps(record))


# --------------------------------------------------------------------------
# the five kinds of hand-edited file, and a file of another format version
# --------------------------------------------------------------------------


def _edits(entries: dict) -> list:
    """(name, changes, message): the hand edits of a TreeClassifier's file."""
    return [
        ("a JSON list", {"estimator": np.array("[1, 2]")}, "its estimator entry is a JSON array, not an object"),
        ("a JSON list of metrics", {"metrics": np.array("[]")}, "its metrics entry is a JSON array, not an object"),
        (
            "a JSON string as the configuration",
            {"config": np.array('"lstm"')},
            "its config entry is a JSON string, not an object",
        ),
        ("missing classes", {"estimator": _without(entries, "classes")}, "its estimator entry lacks 'classes'"),
        ("missing params", {"estimator": _without(entries, "params")}, r"has no parameters \(params, a JSON object\)"),
        (
            "missing n_classes",
            {"estimator": _without(entries, "n_classes")},
            "n_classes is null, not a whole number >= 2",
        ),
        ("missing class", {"estimator": _without(entries, "class")}, "holds no estimator class, not a TreeClassifier"),
        (
            "a class more",
            {"estimator": _estimator_entry(entries, classes=["neg", "pos", "so"])},
            r"its classes are \[\"neg\", \"pos\", \"so\"\], not a list of the 2",
        ),
        (
            "classes swapped",
            {"estimator": _estimator_entry(entries, classes=["pos", "neg"])},
            "are not the distinct labels in sorted order",
        ),
        (
            "a class repeated",
            {"estimator": _estimator_entry(entries, classes=["neg", "neg"])},
            "are not the distinct labels in sorted order",
        ),
        (
            "classes of two types",
            {"estimator": _estimator_entry(entries, classes=["neg", 1])},
            "all strings or all whole numbers",
        ),
        ("classes as text", {"estimator": _estimator_entry(entries, classes="neg,pos")}, "not a list of the 2"),
        (
            "n_classes as text",
            {"estimator": _estimator_entry(entries, n_classes="2")},
            'n_classes is "2", not a whole number >= 2',
        ),
        (
            "params as a list",
            {"estimator": _estimator_entry(entries, params=[1])},
            r"has no parameters \(params, a JSON object\)",
        ),
        (
            "the configuration's dim as text",
            {"config": np.array(json.dumps({**json.loads(str(entries["config"])), "dim": "six"}))},
            "its configuration does not make a model",
        ),
        (
            "fingerprints as a list",
            {"state.fingerprints": np.array("[]")},
            "its state.fingerprints entry is a JSON array",
        ),
        ("a JSON document nested 100,000 deep", {"metrics": np.array("[" * 100_000)}, "its metrics is not JSON"),
    ]


def test_hand_edited_files_are_refused_naming_the_file(tmp_path, saved):
    path, entries, _ = saved[TreeClassifier]
    for name, changes, message in _edits(entries):
        target = _written(tmp_path / "edited.npz", entries, **changes)
        with pytest.raises(EstimatorFileError, match=message) as raised:
            TreeClassifier.load(target)
        assert str(raised.value).startswith(f"{target}: "), name


def test_a_pair_regressors_edited_score_range_is_refused(tmp_path, saved):
    path, entries, _ = saved[PairRegressor]
    for score_range, message in [
        ("1-5", "not two finite numbers"),
        ([5, 1], "not two finite numbers"),
        ([1, "x"], "not two finite numbers"),
        ([1, 3], "maps onto 3 ratings, but its head has"),
    ]:
        target = _written(
            tmp_path / "edited.npz", entries, estimator=_estimator_entry(entries, score_range=score_range)
        )
        with pytest.raises(EstimatorFileError, match=message):
            PairRegressor.load(target)
    target = _written(tmp_path / "edited.npz", entries, estimator=_without(entries, "score_range"))
    with pytest.raises(EstimatorFileError, match="lacks 'score_range'"):
        PairRegressor.load(target)


def test_a_file_of_another_format_version_says_so(tmp_path, saved):
    _, entries, _ = saved[TreeClassifier]
    target = _written(tmp_path / "later.npz", entries, format=np.array("npcomp estimator 2"))
    with pytest.raises(
        EstimatorFileError, match=f"saved in the format 'npcomp estimator 2', and this npcomp reads '{FORMAT}' only"
    ):
        TreeClassifier.load(target)
    target = _written(tmp_path / "other.npz", entries, format=np.array("something else"))
    with pytest.raises(EstimatorFileError, match="its format entry is 'something else'"):
        TreeClassifier.load(target)
    target = _written(tmp_path / "none.npz", entries, format=None)
    with pytest.raises(EstimatorFileError, match="it has no format entry"):
        TreeClassifier.load(target)


# --------------------------------------------------------------------------
# the loader fuzzed
# --------------------------------------------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
# what an entry of the archive may be replaced by
_ARRAYS = st.one_of(
    _JSON.map(lambda value: np.array(json.dumps(value))),
    st.text(max_size=20).map(np.array),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6).map(np.array),
    st.lists(st.integers(-5, 5), max_size=6).map(lambda values: np.array(values, np.int64)),
    st.lists(st.text(max_size=4), max_size=4).map(np.array),
)


def _record_edit(entries: dict):
    """A strategy: the estimator entry with one of its keys replaced, added or left out."""
    record = json.loads(str(entries["estimator"]))
    keys = st.sampled_from(sorted(record) + ["params.model", "params.dim", "params.tree", "extra"])

    def edited(key, value, drop):
        changed = json.loads(json.dumps(record))
        if key.startswith("params."):
            if not isinstance(changed["params"], dict):
                return changed
            target, key = changed["params"], key.removeprefix("params.")
        else:
            target = changed
        if drop:
            target.pop(key, None)
        else:
            target[key] = value
        return np.array(json.dumps(changed))

    return st.builds(edited, keys, _JSON, st.booleans())


def _loads_or_refuses(kind, target) -> None:
    """Loading ``target`` raises EstimatorFileError naming it, or gives an
    estimator that predicts as the saved one did (nothing else)."""
    try:
        estimator = kind.load(target)
    except EstimatorFileError as error:
        assert str(error).startswith(f"{target}: ")
        return
    X = TEXTS[:4] if kind is TreeClassifier else PAIRS[:4]
    predicted = estimator.predict(X)
    if kind is TreeClassifier:
        assert len(predicted) == 4 and set(predicted) <= set(estimator.classes_.tolist())
    else:
        assert predicted.shape == (4,) and all(math.isfinite(value) for value in predicted)


@pytest.mark.parametrize("kind", [TreeClassifier, PairRegressor])
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=st.data())
def test_the_loader_refuses_or_loads_any_edit_of_an_entry(kind, saved, tmp_path, data):
    _, entries, _ = saved[kind]
    key = data.draw(st.sampled_from(sorted(entries) + ["estimator.*"]))
    if key == "estimator.*":
        changes = {"estimator": data.draw(_record_edit(entries))}
    elif data.draw(st.booleans()):
        changes = {key: None}
    else:
        changes = {key: data.draw(_ARRAYS)}
    target = _written(tmp_path / "fuzzed.npz", entries, **changes)
    _loads_or_refuses(kind, target)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 4000), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4))
def test_the_loader_refuses_truncated_or_damaged_bytes(saved, tmp_path, cut, flips):
    path = saved[TreeClassifier][0]
    data = bytearray(path.read_bytes())
    data = data[: len(data) - cut] if cut else data
    for offset, mask in flips:
        if data:
            data[offset % len(data)] ^= mask
    target = tmp_path / "damaged.npz"
    target.write_bytes(bytes(data))
    _loads_or_refuses(TreeClassifier, target)
