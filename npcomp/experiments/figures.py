"""The numbers behind ``npcomp plot``'s figures of one run, computed from
its counts (``figure_counts.py``: from ``predictions.jsonl``, or the
``test-counts.json`` kept in its place) and its ``metrics.json``;
``sweep_figures.py`` gathers a sweep's, ``plots.py`` draws them.  Plain
Python, importing neither NumPy nor matplotlib, so other tools can read the
numbers cheaply.

Each function returns one figure's record: ``figure`` (its file name without
extension), ``title``, ``x_label``, ``y_label``, the ``source`` files and
its data; ``npcomp plot`` writes the record as ``NAME.json`` beside
``NAME.png`` and ``NAME.svg``.  Accuracies are percentages over labelled
nodes (gold label >= 0), as ``npcomp eval`` counts them.

Buckets:

* sentence length (Tai et al. 2015, Fig. 3): a point at every length l from
  the shortest sentence to the tail, the root accuracy of the sentences of
  ``l - 2 <= length <= l + 2``; the tail point takes every longer sentence
  too (``length >= tail - 2``).  The tail is Tai's (45 on the SST; a run's
  longest sentence when shorter), else the 95th percentile of the lengths;
* mean sentence length of a pair (Tai Fig. 4): the same windows of half
  width 2 on (length_a + length_b) / 2, points one word apart ending at
  Tai's tail 18.5, Pearson's r of the pairs in each (none for fewer than 3
  pairs or constant scores);
* phrase length and node height (Zhu et al. 2015, Fig. 4): one bucket per
  number of words under a node (1, 2, ...), the last ``30+`` gathering the
  longer phrases; one per height (0 for a word, the longest distance down
  to a leaf otherwise), the last ``20+``.  Every labelled node counts;
* the roots' confusion matrix (Nayebi & Blundell, Fig. 2): counts
  ``[gold][predicted]`` over the sentences labelled at the root, and each
  row as a percentage of its gold class;
* learning curves: per epoch, the mean training loss and the training and
  dev metrics (root and all-node accuracy; Pearson's r on sick) from
  ``metrics.json``, against the epoch and against the cumulative training
  time (forward, backward and update: each epoch's ``wall_s``; evaluation
  and setup excluded).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from npcomp.data.datasets import PAIR_CLASS_TASKS, PAIR_TASKS, TASK_CLASSES
from npcomp.data.datasets.class_list import class_names
from npcomp.runfiles.figure_counts import (
    COUNTS,
    CountsError,
    counts_of,
    node_buckets,
    pair_sums,
    read_counts,
    root_items,
    write_counts,
)
from npcomp.runfiles.rundir import PREDICTIONS, predictions_name

HALF_WIDTH = 2
# Tai et al.'s last window: sentences of 45 words or more (SST), pairs of mean
# length 18.5 or more (SICK)
LENGTH_TAILS = {"sst5": 45, "sst2": 45}
PAIR_TAIL = 18.5
PHRASE_LENGTH_CAP = 30
HEIGHT_CAP = 20


class FigureError(ValueError):
    """A file a figure needs is missing or cannot be read; the message names it."""


# --------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------


def read_predictions(path: str | Path) -> list:
    """The records of a predictions file (``predictions.py``), one per line."""
    path = Path(path)
    if not path.is_file():
        run_dir = path.parent
        raise FigureError(
            f"{path}: no such file; `npcomp eval --run {run_dir}` writes the "
            "test split's predictions there (runs trained before predictions "
            "were recorded have none)"
        )
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise FigureError(f"{path}:{number}: damaged predictions file ({error.msg})") from None
            if not isinstance(record, dict) or not (
                {"gold", "predicted", "height", "span", "length"} <= record.keys()
                or {"gold", "predicted", "length_a", "length_b"} <= record.keys()
            ):
                raise FigureError(f"{path}:{number}: damaged predictions file (not a sentence or pair record)")
            records.append(record)
    if not records:
        raise FigureError(f"{path}: no predictions in the file")
    return records


def read_metrics(run_dir: str | Path) -> dict:
    """A run's metrics.json."""
    path = Path(run_dir) / "metrics.json"
    if not path.is_file():
        raise FigureError(f"{path}: no such file (not a run directory)")
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FigureError(f"{path}: damaged run file ({error})") from None
    if not isinstance(metrics, dict) or not isinstance(metrics.get("config"), dict):
        raise FigureError(f"{path}: damaged run file (no config record)")
    return metrics


# --------------------------------------------------------------------------
# small statistics in plain Python
# --------------------------------------------------------------------------


def percent(correct: int, total: int) -> float | None:
    return 100.0 * correct / total if total else None


def nearest_rank(values: list, fraction: float):
    """The nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


# --------------------------------------------------------------------------
# one run's figures, from its counts (figure_counts.py)
# --------------------------------------------------------------------------


def length_tail(lengths: list, task: str) -> int:
    """The last window's centre: Tai's for the task, else the 95th percentile."""
    tail = LENGTH_TAILS.get(task)
    if tail is None:
        tail = nearest_rank(lengths, 0.95)
    return min(tail, max(lengths))


def _root_lengths(counts: dict) -> list:
    """The length of every labelled root, with repeats."""
    return [length for length, _, _, count in root_items(counts) for _ in range(count)]


def pair_tail(counts: dict) -> float:
    """The last window's centre for pairs: Tai's 18.5, or the longest mean length."""
    return min(PAIR_TAIL, max(mean for mean, *_ in pair_sums(counts)))


def shared_tail(runs: list, task: str):
    """One tail for several runs' counts (the smallest of theirs), so their
    windows are the same."""
    if runs[0]["kind"] == "pairs":
        return min(pair_tail(counts) for counts in runs)
    return min(length_tail(_root_lengths(counts), task) for counts in runs)


def length_windows(values: list, tail: float, step_from=None) -> list:
    """(centre, low, high) of the windows: centres one apart ending at
    ``tail``, from the first at or above ``min(values)`` (``step_from``: any
    centre, to align them, default ``tail``); high None for the tail's."""
    first = min(values)
    centre = tail if step_from is None else step_from
    offset = centre - math.floor(centre)
    start = math.floor(first - offset) + offset
    if start < first:
        start += 1
    windows, centre = [], start
    while centre < tail:
        windows.append((centre, centre - HALF_WIDTH, centre + HALF_WIDTH))
        centre += 1
    windows.append((tail, tail - HALF_WIDTH, None))
    return windows


def _inside(value, low, high) -> bool:
    return value >= low and (high is None or value <= high)


def figure_template(base: str, task: str, tail=None) -> dict:
    """The record of a per-length figure (``base``: length_accuracy,
    length_pearson, phrase_length_accuracy, height_accuracy) without its
    series and sources."""
    if base == "length_accuracy":
        return {
            "figure": base,
            "kind": "curve",
            "title": f"Root accuracy against sentence length ({task} test)",
            "x_label": "sentence length (words; window of ±2, the last one open)",
            "y_label": "root accuracy (%)",
            "task": task,
            "half_width": HALF_WIDTH,
            "tail": tail,
            "y": "accuracy",
            "x": "length",
        }
    if base == "length_pearson":
        return {
            "figure": base,
            "kind": "curve",
            "title": f"Pearson's r against mean sentence length ({task} test)",
            "x_label": "mean sentence length of the pair (words; window of ±2, the last open)",
            "y_label": "Pearson's r",
            "task": task,
            "half_width": HALF_WIDTH,
            "tail": tail,
            "y": "r",
            "x": "length",
        }
    if base == "phrase_length_accuracy":
        return {
            "figure": base,
            "kind": "bars",
            "title": f"Node accuracy by phrase length ({task} test)",
            "x_label": f"phrase length (words under the node; the last bucket {PHRASE_LENGTH_CAP}+)",
            "y_label": "accuracy (%)",
            "task": task,
            "cap": PHRASE_LENGTH_CAP,
            "y": "accuracy",
            "x": "value",
        }
    if base == "height_accuracy":
        return {
            "figure": base,
            "kind": "bars",
            "title": f"Node accuracy by node height ({task} test)",
            "x_label": f"node height (longest path down to a word; the last bucket {HEIGHT_CAP}+)",
            "y_label": "accuracy (%)",
            "task": task,
            "cap": HEIGHT_CAP,
            "y": "accuracy",
            "x": "value",
        }
    raise ValueError(f"no per-length figure {base!r}")


def _record(base: str, task: str, source: str, points: list, tail=None) -> dict:
    record = figure_template(base, task, tail)
    record.update(source=[source], series=[{"label": "", "points": points}])
    return record


def accuracy_by_sentence_length(counts: dict, task: str, source: str = "", tail: int | None = None) -> dict:
    """Root accuracy against sentence length (Tai Fig. 3); ``tail``: the last
    window's centre, when several runs are drawn alike (``length_tail``)."""
    roots = root_items(counts)
    if not roots:
        raise FigureError(f"{source}: no sentence labelled at its root")
    if tail is None:
        tail = length_tail(_root_lengths(counts), task)
    points = []
    for centre, low, high in length_windows([length for length, *_ in roots], tail):
        inside = [(gold == predicted, count) for length, gold, predicted, count in roots if _inside(length, low, high)]
        if inside:
            total = sum(count for _, count in inside)
            points.append(
                {
                    "length": centre,
                    "low": low,
                    "high": high,
                    "n": total,
                    "accuracy": percent(sum(count for right, count in inside if right), total),
                }
            )
    return _record("length_accuracy", task, source, points, tail)


def pearson_from_sums(n, sum_x, sum_y, sum_xx, sum_yy, sum_xy) -> float | None:
    """Pearson's r from sums; None for fewer than 3 pairs or a constant side."""
    if n < 3:
        return None
    sxx, syy = n * sum_xx - sum_x * sum_x, n * sum_yy - sum_y * sum_y
    if sxx <= 1e-12 * max(1.0, n * sum_xx) or syy <= 1e-12 * max(1.0, n * sum_yy):
        return None
    return (n * sum_xy - sum_x * sum_y) / math.sqrt(sxx * syy)


def pearson_by_mean_length(counts: dict, task: str = "sick", source: str = "", tail: float | None = None) -> dict:
    """Pearson's r against the mean sentence length of the pairs (Tai Fig. 4)."""
    rows = pair_sums(counts)
    if tail is None:
        tail = pair_tail(counts)
    points = []
    for centre, low, high in length_windows([row[0] for row in rows], tail, step_from=PAIR_TAIL):
        inside = [row[1:] for row in rows if _inside(row[0], low, high)]
        if inside:
            sums = [sum(column) for column in zip(*inside)]
            points.append(
                {"length": centre, "low": low, "high": high, "n": int(sums[0]), "r": pearson_from_sums(*sums)}
            )
    return _record("length_pearson", task, source, points, tail)


def _node_buckets(counts: dict, key: str, cap: int, first: int) -> list:
    capped = {}
    for value, (correct, total) in node_buckets(counts, key).items():
        bucket = capped.setdefault(min(value, cap), [0, 0])
        bucket[0] += correct
        bucket[1] += total
    return [
        {
            "value": value,
            "label": f"{value}+" if value == cap else str(value),
            "n": capped[value][1],
            "accuracy": percent(*capped[value]),
        }
        for value in range(first, cap + 1)
        if value in capped
    ]


def accuracy_by_phrase_length(counts: dict, task: str, source: str = "") -> dict:
    """Accuracy of the labelled nodes by their number of words (Zhu Fig. 4, lower)."""
    return _record("phrase_length_accuracy", task, source, _node_buckets(counts, "spans", PHRASE_LENGTH_CAP, 1))


def accuracy_by_height(counts: dict, task: str, source: str = "") -> dict:
    """Accuracy of the labelled nodes by their height (Zhu Fig. 4, upper: depth)."""
    return _record("height_accuracy", task, source, _node_buckets(counts, "heights", HEIGHT_CAP, 0))


def root_confusion(counts, task: str, source: str = "") -> dict:
    """The roots' confusion matrix (Nayebi & Blundell Fig. 2) of one run's
    counts, or of several runs' (a list: their sentences together)."""
    items = [item for one in (counts if isinstance(counts, list) else [counts]) for item in root_items(one)]
    n_classes = max([len(TASK_CLASSES.get(task, ()))] + [max(gold, predicted) + 1 for _, gold, predicted, _ in items])
    matrix = [[0] * n_classes for _ in range(n_classes)]
    for _, gold, predicted, count in items:
        matrix[gold][predicted] += count
    return confusion_record(matrix, task, source)


def confusion_record(matrix: list, task: str, source: str = "") -> dict:
    """The figure record of a confusion matrix ``[gold][predicted]``."""
    n_classes = len(matrix)
    rows = [[percent(count, sum(row)) if sum(row) else 0.0 for count in row] for row in matrix]
    total = sum(sum(row) for row in matrix)
    return {
        "figure": "root_confusion",
        "kind": "confusion",
        "title": f"Root confusion matrix ({task} test)",
        "x_label": "predicted label",
        "y_label": "gold label",
        "source": [source],
        "task": task,
        "classes": class_names(task, n_classes, unnamed="{}"),
        "counts": matrix,
        "row_percent": rows,
        "accuracy": percent(sum(matrix[k][k] for k in range(n_classes)), total),
    }


def learning_curves(metrics: dict, source: str = "") -> dict:
    """Loss and training/dev metrics per epoch, and the cumulative training time."""
    task = metrics["config"]["task"]
    keys = ["accuracy"] if task in PAIR_CLASS_TASKS else ["pearson"] if task in PAIR_TASKS else ["root_acc", "all_acc"]
    epochs, elapsed = [], 0.0
    for record in metrics.get("epochs") or []:
        elapsed += record.get("wall_s") or 0.0
        row = {"epoch": record["epoch"], "train_loss": record.get("train_loss"), "train_s": elapsed}
        for split in ("train", "dev"):
            values = record.get(split) or {}
            for key in keys:
                row[f"{split}_{key}"] = values.get(key)
        epochs.append(row)
    if not epochs:
        raise FigureError(f"{source}: no finished epoch to draw")
    return {
        "figure": "learning_curves",
        "kind": "learning",
        "title": f"Learning curves: {metrics['config']['model']} on {task}",
        "x_label": "epoch",
        "time_label": "training time (s; evaluation excluded)",
        "y_label": ("Pearson's r" if task in PAIR_TASKS and task not in PAIR_CLASS_TASKS else "accuracy (%)"),
        "source": [source],
        "task": task,
        "metrics": keys,
        "epochs": epochs,
        "best_epoch": metrics.get("best_epoch"),
    }


def run_figures(run_dir: str | Path, split: str = "test") -> list:
    """Every figure of one run directory: those of its predictions for
    ``split`` (the test split's from its counts file when the predictions
    are not kept) and its learning curves."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    metrics = read_metrics(run_dir)
    task = metrics["config"]["task"]
    path = run_dir / predictions_name(split)
    if task in PAIR_CLASS_TASKS:  # classified pairs: no per-length figure yet
        return [learning_curves(metrics, str(metrics_path))]
    if path.is_file():
        counts = counts_of(read_predictions(path), task)
    elif split == "test" and (run_dir / COUNTS).is_file():
        counts, path = read_run_counts(run_dir, task), run_dir / COUNTS
    elif split == "test" and metrics.get("test") is None and metrics.get("ended"):
        raise FigureError(
            f"{run_dir} was trained without a test file: it has no test split. "
            f"Draw the dev split's figures: `npcomp eval --run {run_dir} --split "
            "dev`, then `npcomp plot RUN_DIR --split dev`"
        )
    else:
        how = f"npcomp eval --run {run_dir}" + ("" if split == "test" else f" --split {split}")
        raise FigureError(
            f"{path}: no such file; the figures are drawn from a run's "
            f"per-sentence predictions, which `{how}` writes (training writes "
            "the test split's when it finishes)"
        )
    figures = prediction_figures(counts, task, str(path), split)
    names = metrics["config"].get("classes")  # a run on a user's files names its classes
    for figure in figures:
        if figure["kind"] == "confusion" and names and len(names) == len(figure["classes"]):
            figure["classes"] = list(names)
    figures.append(learning_curves(metrics, str(metrics_path)))
    return figures


def prediction_figures(counts, task, source, split="test", tail=None) -> list:
    """The figures of one run's counts."""
    if counts["kind"] == "pairs":
        figures = [pearson_by_mean_length(counts, task, source, tail)]
    else:
        figures = [
            accuracy_by_sentence_length(counts, task, source, tail),
            accuracy_by_phrase_length(counts, task, source),
            accuracy_by_height(counts, task, source),
            root_confusion(counts, task, source),
        ]
    if split != "test":
        for figure in figures:
            figure["title"] = figure["title"].replace(" test)", f" {split})")
    return figures


def read_run_counts(run_dir: str | Path, task: str) -> dict | None:
    """A run's test counts: its counts file, else computed from its test
    predictions; None when it has neither."""
    run_dir = Path(run_dir)
    try:
        counts = read_counts(run_dir)
    except CountsError as error:
        raise FigureError(str(error)) from None
    if counts is not None:
        return counts
    if (run_dir / PREDICTIONS).is_file():
        return counts_of(read_predictions(run_dir / PREDICTIONS), task)
    return None


def ensure_counts(run_dir: str | Path) -> bool:
    """Write the counts file of a run that has its test predictions but no
    counts (trained before training wrote them); True when written."""
    run_dir = Path(run_dir)
    if (run_dir / COUNTS).is_file() or not (run_dir / PREDICTIONS).is_file():
        return False
    counts = read_run_counts(run_dir, read_metrics(run_dir)["config"]["task"])
    if counts is None:  # classified pairs: no counts
        return False
    write_counts(run_dir, counts)
    return True
