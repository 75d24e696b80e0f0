"""`npcomp plot` on short real runs: every figure file exists and is a valid
PNG (decoded) and SVG (parsed), and the numbers beside each figure match
those recomputed here, independently, from the run's predictions.jsonl and
metrics.json; the predictions file agrees with the trees and with `npcomp
eval`; a sweep's box plots and mean curves; the refusals and errors."""

import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
from npcomp.cli import main
from npcomp.forest import build_forest
from npcomp.data.datasets.tasks import load_task
from conftest import modules_loaded_by, synthetic_of_size

pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")

SIZES = (80, 40, 120)
TINY = ["--dim", "8", "--embedding-dim", "8", "--epochs", "2", "--quiet", "--no-baseline", "--threads", "1"]
RUN_FIGURES = ("length_accuracy", "phrase_length_accuracy", "height_accuracy", "root_confusion", "learning_curves")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


small_splits = synthetic_of_size(SIZES)


@pytest.fixture(autouse=True)
def small_synthetic(monkeypatch):
    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)


def _train(run_dir: Path, *options) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", small_splits)
        assert main(["train", "--task", "synthetic", *TINY, *options, "--out", str(run_dir)]) == 0


@pytest.fixture(scope="module")
def plotted(tmp_path_factory):
    """A synthetic run and its figures: (run dir, figures dir)."""
    base = tmp_path_factory.mktemp("plot")
    _train(base / "run")
    assert main(["plot", str(base / "run"), "--out", str(base / "figures")]) == 0
    return base / "run", base / "figures"


def _lines(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _numbers(figures: Path, name: str) -> dict:
    return json.loads((figures / f"{name}.json").read_text())


def check_figure_files(figures: Path, names) -> None:
    import matplotlib.image

    for name in names:
        png = figures / f"{name}.png"
        assert png.read_bytes()[:8] == PNG_SIGNATURE, png
        image = matplotlib.image.imread(png)
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 200, png
        root = ElementTree.parse(figures / f"{name}.svg").getroot()
        assert root.tag.endswith("svg"), name
        assert (figures / f"{name}.json").is_file()


# --------------------------------------------------------------------------
# independent recomputation from the predictions file
# --------------------------------------------------------------------------


def _root_pairs(predictions) -> np.ndarray:
    """(length, gold, predicted) of every sentence labelled at its root."""
    rows = np.array([(r["length"], r["gold"][-1], r["predicted"][-1]) for r in predictions])
    return rows[rows[:, 1] >= 0]


def _nodes(predictions) -> dict:
    labelled = {
        key: np.concatenate([np.asarray(r[key]) for r in predictions])
        for key in ("gold", "predicted", "height", "span")
    }
    keep = labelled["gold"] >= 0
    return {key: value[keep] for key, value in labelled.items()}


def test_every_figure_file_is_a_valid_png_and_svg(plotted):
    _, figures = plotted
    check_figure_files(figures, RUN_FIGURES)
    assert sorted(path.name for path in figures.iterdir()) == sorted(
        f"{name}.{extension}" for name in RUN_FIGURES for extension in ("png", "svg", "json")
    )


def test_accuracy_by_sentence_length_matches_the_predictions(plotted):
    run_dir, figures = plotted
    rows = _root_pairs(_lines(run_dir / "predictions.jsonl"))
    numbers = _numbers(figures, "length_accuracy")
    points = numbers["series"][0]["points"]
    lengths = rows[:, 0]
    tail = int(np.sort(lengths)[int(np.ceil(0.95 * lengths.size)) - 1])  # synthetic: 95th pct
    assert numbers["tail"] == tail and numbers["half_width"] == 2
    expected_centres = [
        c for c in range(lengths.min(), tail + 1) if np.any((lengths >= c - 2) & ((lengths <= c + 2) | (c == tail)))
    ]
    assert [p["length"] for p in points] == expected_centres
    for point in points:
        centre = point["length"]
        inside = (lengths >= centre - 2) & ((lengths <= centre + 2) | (centre == tail))
        assert point["n"] == inside.sum()
        assert point["accuracy"] == pytest.approx(100.0 * np.mean(rows[inside, 1] == rows[inside, 2]))
    assert points[-1]["high"] is None


@pytest.mark.parametrize(
    "name, key, cap, first", [("phrase_length_accuracy", "span", 30, 1), ("height_accuracy", "height", 20, 0)]
)
def test_accuracy_by_phrase_length_and_height_match_the_predictions(plotted, name, key, cap, first):
    run_dir, figures = plotted
    nodes = _nodes(_lines(run_dir / "predictions.jsonl"))
    bucket = np.minimum(nodes[key], cap)
    points = _numbers(figures, name)["series"][0]["points"]
    assert [p["value"] for p in points] == sorted(set(bucket.tolist()))
    assert points[0]["value"] == first
    for point in points:
        inside = bucket == point["value"]
        assert point["n"] == inside.sum()
        assert point["accuracy"] == pytest.approx(100.0 * np.mean(nodes["gold"][inside] == nodes["predicted"][inside]))
    assert sum(p["n"] for p in points) == nodes["gold"].size


def test_root_confusion_matches_the_predictions_and_the_metrics(plotted):
    run_dir, figures = plotted
    rows = _root_pairs(_lines(run_dir / "predictions.jsonl"))
    counts = np.zeros((5, 5), dtype=int)
    np.add.at(counts, (rows[:, 1], rows[:, 2]), 1)
    numbers = _numbers(figures, "root_confusion")
    assert numbers["counts"] == counts.tolist()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert numbers["counts"] == metrics["test"]["root_confusion"]
    row_percent = 100.0 * counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    assert np.allclose(numbers["row_percent"], row_percent)


def test_learning_curves_match_the_metrics(plotted):
    run_dir, figures = plotted
    metrics = json.loads((run_dir / "metrics.json").read_text())
    epochs = _numbers(figures, "learning_curves")["epochs"]
    assert [row["epoch"] for row in epochs] == [1, 2]
    for row, record in zip(epochs, metrics["epochs"]):
        assert row["train_loss"] == record["train_loss"]
        assert row["dev_root_acc"] == record["dev"]["root_acc"]
        assert row["dev_all_acc"] == record["dev"]["all_acc"]
        assert row["train_root_acc"] == record["train"]["root_acc"]
    assert np.allclose(
        [row["train_s"] for row in epochs], np.cumsum([record["wall_s"] for record in metrics["epochs"]])
    )


# --------------------------------------------------------------------------
# the predictions file
# --------------------------------------------------------------------------


def test_predictions_agree_with_eval_and_the_metrics(plotted, capsys):
    run_dir, _ = plotted
    predictions = _lines(run_dir / "predictions.jsonl")
    assert [r["sentence"] for r in predictions] == list(range(SIZES[2]))
    rows = _root_pairs(predictions)
    nodes = _nodes(predictions)
    root_acc = 100.0 * np.mean(rows[:, 1] == rows[:, 2])
    all_acc = 100.0 * np.mean(nodes["gold"] == nodes["predicted"])
    before = (run_dir / "predictions.jsonl").read_bytes()
    assert main(["eval", "--run", str(run_dir)]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["root_acc"] == pytest.approx(root_acc)
    assert result["all_acc"] == pytest.approx(all_acc)
    assert result["labelled_nodes"] == nodes["gold"].size
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test"]["root_acc"] == pytest.approx(root_acc)
    # eval regenerates the run's own file, the same, and says so
    assert "predictions.jsonl" in err and "replacing the previous one" in err
    assert (run_dir / "predictions.jsonl").read_bytes() == before


def test_predictions_describe_the_test_trees(plotted):
    run_dir, _ = plotted
    predictions = _lines(run_dir / "predictions.jsonl")
    seed = json.loads((run_dir / "metrics.json").read_text())["config"]["seed"]
    trees = load_task("synthetic", seed=seed).splits["test"]
    assert len(trees) == len(predictions)
    for tree, record in zip(trees, predictions):
        forest = build_forest([tree], [np.zeros(tree.n_nodes, dtype=np.int32)])
        height = np.empty(tree.n_nodes, dtype=int)
        height[forest.origin] = forest.height
        listed = np.flatnonzero((tree.label >= 0) | (np.arange(tree.n_nodes) == tree.root))
        assert record["length"] == len(tree.tokens)
        assert record["gold"] == tree.label[listed].tolist()
        assert record["height"] == height[listed].tolist()
        assert record["span"][-1] == len(tree.tokens)  # the root spans the sentence
        leaves = height[listed] == 0
        assert all(np.asarray(record["span"])[leaves] == 1)
        assert all(0.0 < p <= 1.0 for p in record["p"])
        assert len(record["predicted"]) == len(record["p"]) == len(listed)


def test_eval_writes_another_splits_predictions_beside(plotted, tmp_path, capsys):
    run_dir, _ = plotted
    test_before = (run_dir / "predictions.jsonl").read_bytes()
    assert main(["eval", "--run", str(run_dir), "--split", "dev"]) == 0
    result = json.loads(capsys.readouterr().out)
    dev = _lines(run_dir / "predictions-dev.jsonl")
    assert len(dev) == SIZES[1]
    assert result["root_acc"] == pytest.approx(100.0 * np.mean([r["gold"][-1] == r["predicted"][-1] for r in dev]))
    assert (run_dir / "predictions.jsonl").read_bytes() == test_before
    assert main(["plot", str(run_dir), "--split", "dev", "--out", str(tmp_path / "dev")]) == 0
    numbers = _numbers(tmp_path / "dev", "root_confusion")
    assert sum(map(sum, numbers["counts"])) == SIZES[1] and "dev" in numbers["title"]
    (run_dir / "predictions-dev.jsonl").unlink()


# --------------------------------------------------------------------------
# refusals and errors
# --------------------------------------------------------------------------


def test_existing_figures_are_kept_unless_overwrite(plotted, capsys):
    run_dir, figures = plotted
    stamp = {path.name: path.stat().st_mtime_ns for path in figures.iterdir()}
    assert main(["plot", str(run_dir), "--out", str(figures)]) == 1
    err = capsys.readouterr().err
    assert "already holds figure files" in err and "--overwrite" in err
    assert {path.name: path.stat().st_mtime_ns for path in figures.iterdir()} == stamp
    assert main(["plot", str(run_dir), "--out", str(figures), "--overwrite"]) == 0
    check_figure_files(figures, RUN_FIGURES)


def test_a_run_without_predictions_says_how_to_make_them(plotted, tmp_path, capsys):
    run_dir, _ = plotted
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "metrics.json").write_bytes((run_dir / "metrics.json").read_bytes())
    assert main(["plot", str(bare), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"{bare / 'predictions.jsonl'}: no such file" in err
    assert f"npcomp eval --run {bare}" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_run_keeps_the_counts_its_figures_are_drawn_from(plotted, tmp_path):
    """Training writes test-counts.json beside the predictions: a few kB,
    from which the same figures follow when the predictions are gone."""
    from npcomp.runfiles.figure_counts import COUNTS, counts_of
    from npcomp.experiments.figures import run_figures

    run_dir, _ = plotted
    counts = json.loads((run_dir / COUNTS).read_text())
    assert counts == json.loads(json.dumps(counts_of(_lines(run_dir / "predictions.jsonl"), "synthetic")))
    assert (run_dir / COUNTS).stat().st_size < (run_dir / "predictions.jsonl").stat().st_size
    kept = tmp_path / "kept"
    kept.mkdir()
    for name in ("metrics.json", COUNTS):
        (kept / name).write_bytes((run_dir / name).read_bytes())

    def numbers(directory):
        return [{key: value for key, value in figure.items() if key != "source"} for figure in run_figures(directory)]

    assert numbers(kept) == numbers(run_dir)


def test_not_a_run_directory(tmp_path, capsys):
    assert main(["plot", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "neither a run directory" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 1
    assert "no such directory" in capsys.readouterr().err


def test_a_damaged_predictions_file_is_named_by_line(plotted, tmp_path, capsys):
    run_dir, _ = plotted
    copy = tmp_path / "run"
    copy.mkdir()
    (copy / "metrics.json").write_bytes((run_dir / "metrics.json").read_bytes())
    lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    (copy / "predictions.jsonl").write_text("\n".join(lines[:2] + ["{not json"]) + "\n")
    assert main(["plot", str(copy), "--out", str(tmp_path / "out")]) == 1
    assert f"{copy / 'predictions.jsonl'}:3: damaged predictions file" in capsys.readouterr().err


def test_without_matplotlib_the_error_names_the_extra(plotted, tmp_path, monkeypatch, capsys):
    run_dir, _ = plotted
    for name in [module for module in sys.modules if module.startswith("matplotlib")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert main(["plot", str(run_dir), "--out", str(tmp_path / "out")]) == 1
    assert 'pip install "npcomp[plot]"' in capsys.readouterr().err


def test_figures_module_imports_neither_numpy_nor_matplotlib():
    assert modules_loaded_by("import npcomp.experiments.figures", ("numpy", "matplotlib", "numba")) == []


def test_help_lists_the_figures(capsys):
    with pytest.raises(SystemExit):
        main(["plot", "--help"])
    text = capsys.readouterr().out
    for name in RUN_FIGURES + ("length_pearson", "seeds_SPLIT_METRIC", "--overwrite"):
        assert name in text


# --------------------------------------------------------------------------
# a sweep directory
# --------------------------------------------------------------------------


def test_sweep_box_plots_and_mean_curves(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    for lr in ("0.05", "0.2"):
        for seed in ("1", "2"):
            _train(sweep / "runs" / f"lr{lr}-s{seed}", "--lr", lr, "--seed", seed)
    (sweep / "runs" / "unfinished").mkdir()
    (sweep / "runs" / "unfinished" / "metrics.json").write_text(
        json.dumps(
            {
                "model": "treelstm-nary",
                "task": "synthetic",
                "test": None,
                "config": {"model": "treelstm-nary", "task": "synthetic", "seed": 3},
            }
        )
    )
    capsys.readouterr()
    assert main(["plot", str(sweep), "--out", str(tmp_path / "figures")]) == 0
    assert "unfinished" in capsys.readouterr().err  # left out, and said
    figures = tmp_path / "figures"
    names = [
        "seeds_test_root_acc",
        "seeds_test_all_acc",
        "seeds_dev_root_acc",
        "seeds_dev_all_acc",
        "length_accuracy",
        "phrase_length_accuracy",
        "height_accuracy",
    ]
    check_figure_files(figures, names)
    boxes = _numbers(figures, "seeds_test_root_acc")["boxes"]
    assert [box["label"] for box in boxes] == ["lr=0.05", "lr=0.2"]
    for box, lr in zip(boxes, ("0.05", "0.2")):
        runs = [sweep / "runs" / f"lr{lr}-s{seed}" for seed in ("1", "2")]
        assert box["values"] == [json.loads((run / "metrics.json").read_text())["test"]["root_acc"] for run in runs]
    # Tai's points: each setting's accuracy per window, the mean over its seeds
    series = _numbers(figures, "length_accuracy")["series"]
    assert [s["label"] for s in series] == ["lr=0.05", "lr=0.2"]
    for one, lr in zip(series, ("0.05", "0.2")):
        per_run = [_root_pairs(_lines(sweep / "runs" / f"lr{lr}-s{seed}" / "predictions.jsonl")) for seed in ("1", "2")]
        for point in one["points"]:
            centre, tail = point["length"], _numbers(figures, "length_accuracy")["tail"]
            accuracies = []
            for rows in per_run:
                inside = (rows[:, 0] >= centre - 2) & ((rows[:, 0] <= centre + 2) | (centre == tail))
                accuracies.append(100.0 * np.mean(rows[inside, 1] == rows[inside, 2]))
            assert point["accuracy"] == pytest.approx(np.mean(accuracies))


def test_a_sweep_of_one_setting_draws_its_counts(tmp_path):
    """One setting a task (a paper table's rows on two tasks): each per-length
    figure has one line and, under it, the counts of its seeds (their mean)."""
    sweep = tmp_path / "sweep"
    for seed in ("1", "2"):
        _train(sweep / "runs" / f"base-s{seed}", "--seed", seed)
    assert main(["plot", str(sweep), "--out", str(tmp_path / "figures")]) == 0
    check_figure_files(tmp_path / "figures", ["length_accuracy", "root_confusion_treelstm-nary"])
    points = _numbers(tmp_path / "figures", "length_accuracy")["series"][0]["points"]
    assert points and all(len(point["n"]) == 2 for point in points)


# --------------------------------------------------------------------------
# SICK (real data): Pearson's r against mean sentence length
# --------------------------------------------------------------------------


def test_sick_pearson_by_mean_length_matches_the_predictions(tmp_path, capsys, data_dir):
    run_dir = tmp_path / "sick"
    assert (
        main(
            [
                "train",
                "--model",
                "treelstm-childsum",
                "--task",
                "sick",
                "--data-dir",
                str(data_dir),
                "--vectors",
                "random",
                "--dim",
                "8",
                "--embedding-dim",
                "8",
                "--epochs",
                "1",
                "--quiet",
                "--threads",
                "1",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    assert main(["plot", str(run_dir), "--out", str(tmp_path / "figures")]) == 0
    figures = tmp_path / "figures"
    check_figure_files(figures, ("length_pearson", "learning_curves"))
    assert not (figures / "root_confusion.png").exists()
    predictions = _lines(run_dir / "predictions.jsonl")
    gold = np.array([r["gold"] for r in predictions])
    predicted = np.array([r["predicted"] for r in predictions])
    means = np.array([(r["length_a"] + r["length_b"]) / 2 for r in predictions])
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert np.corrcoef(gold, predicted)[0, 1] == pytest.approx(metrics["test"]["pearson"], abs=1e-5)
    numbers = _numbers(figures, "length_pearson")
    tail = min(18.5, means.max())
    assert numbers["tail"] == tail
    points = numbers["series"][0]["points"]
    assert points[-1]["length"] == tail and points[-1]["high"] is None
    assert all((p["length"] - 18.5) % 1 == 0 for p in points)
    for point in points:
        centre = point["length"]
        inside = (means >= centre - 2) & ((means <= centre + 2) | (centre == tail))
        assert point["n"] == inside.sum()
        assert point["r"] == pytest.approx(np.corrcoef(gold[inside], predicted[inside])[0, 1])


def test_a_sweeps_confusion_matrices_sum_its_seeds(tmp_path):
    """Per setting, the root confusion matrix over every seed's test
    sentences: its counts are the sums of each run's own matrix."""
    from npcomp.runfiles.figure_counts import counts_of
    from npcomp.experiments.figures import PREDICTIONS, read_predictions, root_confusion
    from npcomp.experiments.sweep_figures import confusions_over_seeds

    runs = []
    for seed, (gold, predicted) in enumerate([([0, 1, 2], [0, 2, 2]), ([1, 1], [1, 0])]):
        run_dir = tmp_path / f"base-s{seed + 1}"
        run_dir.mkdir()
        lines = [
            json.dumps({"sentence": k, "length": 1, "gold": [g], "predicted": [p], "height": [0], "span": [1]})
            for k, (g, p) in enumerate(zip(gold, predicted))
        ]
        (run_dir / PREDICTIONS).write_text("\n".join(lines) + "\n")
        runs.append(str(run_dir))
    (figure,) = confusions_over_seeds([{"label": "base", "model": "lstm", "task": "sst5", "runs": runs}])
    assert figure["figure"] == "root_confusion_base" and "2 seeds" in figure["title"]
    expected = [
        root_confusion(counts_of(read_predictions(Path(run) / PREDICTIONS), "sst5"), "sst5")["counts"] for run in runs
    ]
    summed = [[a + b for a, b in zip(row_a, row_b)] for row_a, row_b in zip(*expected)]
    assert figure["counts"] == summed and figure["counts"][1] == [1, 1, 1, 0, 0]
