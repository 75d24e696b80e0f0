"""The numbers behind ``npcomp plot``'s figures, computed from a run
directory's files (``predictions.jsonl``, ``metrics.json``) or a sweep
directory's runs; ``plots.py`` draws them.  Plain Python, importing neither
NumPy nor matplotlib, so other tools can read the numbers cheaply.

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
  and setup excluded);
* a sweep (``SWEEP_DIR/runs/*``, grouped by setting as ``npcomp summary``
  groups them): each setting's test and dev metrics over its seeds (Le &
  Zuidema 2015, Figs. 6-7, box plots), and the per-length (phrase length,
  height) curves above averaged over each setting's seeds, as Tai's points
  are means over 5 runs.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

# the predictions files (written by predictions.py, which takes these names)
PREDICTIONS = "predictions.jsonl"


def predictions_name(split: str) -> str:
    """The file a split's predictions are in: ``predictions.jsonl`` for the
    test split, ``predictions-SPLIT.jsonl`` for another."""
    return PREDICTIONS if split == "test" else f"predictions-{split}.jsonl"


HALF_WIDTH = 2
# Tai et al.'s last window: sentences of 45 words or more (SST), pairs of mean
# length 18.5 or more (SICK)
LENGTH_TAILS = {"sst5": 45, "sst2": 45}
PAIR_TAIL = 18.5
PHRASE_LENGTH_CAP = 30
HEIGHT_CAP = 20
# the class names of the confusion matrix (Nayebi & Blundell Fig. 2's)
CLASS_NAMES = {"sst5": ["very negative", "negative", "neutral", "positive", "very positive"],
               "synthetic": ["very negative", "negative", "neutral", "positive",
                             "very positive"],
               "sst2": ["negative", "positive"]}
PAIR_TASKS = ("sick",)


def class_names(task: str, n_classes: int, unnamed: str = "class {}") -> list:
    """The names of ``task``'s classes, or ``unnamed`` numbered where the task
    has none for ``n_classes``."""
    names = CLASS_NAMES.get(task)
    if names is None or len(names) != n_classes:
        names = [unnamed.format(k) for k in range(n_classes)]
    return list(names)


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
        raise FigureError(f"{path}: no such file; `npcomp eval --run {run_dir}` writes the "
                          "test split's predictions there (runs trained before predictions "
                          "were recorded have none)")
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise FigureError(f"{path}:{number}: damaged predictions file ({error.msg})") \
                    from None
            if not isinstance(record, dict) or not (
                    {"gold", "predicted", "height", "span", "length"} <= record.keys()
                    or {"gold", "predicted", "length_a", "length_b"} <= record.keys()):
                raise FigureError(f"{path}:{number}: damaged predictions file (not a "
                                  "sentence or pair record)")
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


def is_pairs(records: list) -> bool:
    return "length_a" in records[0]


# --------------------------------------------------------------------------
# small statistics in plain Python
# --------------------------------------------------------------------------

def percent(correct: int, total: int) -> float | None:
    return 100.0 * correct / total if total else None


def pearson(xs: list, ys: list) -> float | None:
    """Pearson's r; None for fewer than 3 pairs or a constant side."""
    n = len(xs)
    if n < 3:
        return None
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx == 0.0 or syy == 0.0:
        return None
    return sxy / math.sqrt(sxx * syy)


def nearest_rank(values: list, fraction: float):
    """The nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


# --------------------------------------------------------------------------
# one run's figures
# --------------------------------------------------------------------------

def _root(record: dict) -> tuple:
    """(gold, predicted) label of a sentence's root: its last node listed."""
    return record["gold"][-1], record["predicted"][-1]


def length_tail(lengths: list, task: str) -> int:
    """The last window's centre: Tai's for the task, else the 95th percentile."""
    tail = LENGTH_TAILS.get(task)
    if tail is None:
        tail = nearest_rank(lengths, 0.95)
    return min(tail, max(lengths))


def pair_tail(records: list) -> float:
    """The last window's centre for pairs: Tai's 18.5, or the longest mean length."""
    return min(PAIR_TAIL, max((r["length_a"] + r["length_b"]) / 2 for r in records))


def shared_tail(runs: list, task: str):
    """One tail for several runs' predictions (the smallest of theirs), so
    their windows are the same."""
    if is_pairs(runs[0]):
        return min(pair_tail(records) for records in runs)
    return min(length_tail([r["length"] for r in records if _root(r)[0] >= 0], task)
               for records in runs)


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


def accuracy_by_sentence_length(records: list, task: str, source: str = "",
                                tail: int | None = None) -> dict:
    """Root accuracy against sentence length (Tai Fig. 3); ``tail``: the last
    window's centre, when several runs are drawn alike (``length_tail``)."""
    sentences = [(r["length"], *_root(r)) for r in records if _root(r)[0] >= 0]
    if not sentences:
        raise FigureError(f"{source}: no sentence labelled at its root")
    if tail is None:
        tail = length_tail([length for length, _, _ in sentences], task)
    points = []
    for centre, low, high in length_windows([s[0] for s in sentences], tail):
        inside = [(gold, predicted) for length, gold, predicted in sentences
                  if length >= low and (high is None or length <= high)]
        if inside:
            points.append({"length": centre, "low": low, "high": high, "n": len(inside),
                           "accuracy": percent(sum(g == p for g, p in inside), len(inside))})
    return {"figure": "length_accuracy", "kind": "curve",
            "title": f"Root accuracy against sentence length ({task} test)",
            "x_label": "sentence length (words; window of ±2, the last one open)",
            "y_label": "root accuracy (%)", "source": [source], "task": task,
            "half_width": HALF_WIDTH, "tail": tail, "y": "accuracy", "x": "length",
            "series": [{"label": "", "points": points}]}


def pearson_by_mean_length(records: list, task: str = "sick", source: str = "",
                           tail: float | None = None) -> dict:
    """Pearson's r against the mean sentence length of the pairs (Tai Fig. 4)."""
    pairs = [((r["length_a"] + r["length_b"]) / 2, r["gold"], r["predicted"]) for r in records]
    means = [mean for mean, _, _ in pairs]
    if tail is None:
        tail = pair_tail(records)
    points = []
    for centre, low, high in length_windows(means, tail, step_from=PAIR_TAIL):
        inside = [(gold, predicted) for mean, gold, predicted in pairs
                  if mean >= low and (high is None or mean <= high)]
        if inside:
            points.append({"length": centre, "low": low, "high": high, "n": len(inside),
                           "r": pearson([g for g, _ in inside], [p for _, p in inside])})
    return {"figure": "length_pearson", "kind": "curve",
            "title": f"Pearson's r against mean sentence length ({task} test)",
            "x_label": "mean sentence length of the pair (words; window of ±2, the last open)",
            "y_label": "Pearson's r", "source": [source], "task": task,
            "half_width": HALF_WIDTH, "tail": tail, "y": "r", "x": "length",
            "series": [{"label": "", "points": points}]}


def _node_buckets(records: list, key: str, cap: int, first: int) -> list:
    counts = {}
    for record in records:
        for gold, predicted, value in zip(record["gold"], record["predicted"], record[key]):
            if gold < 0:
                continue
            bucket = counts.setdefault(min(value, cap), [0, 0])
            bucket[0] += gold == predicted
            bucket[1] += 1
    return [{"value": value, "label": f"{value}+" if value == cap else str(value),
             "n": counts[value][1], "accuracy": percent(*counts[value])}
            for value in range(first, cap + 1) if value in counts]


def accuracy_by_phrase_length(records: list, task: str, source: str = "") -> dict:
    """Accuracy of the labelled nodes by their number of words (Zhu Fig. 4, lower)."""
    return {"figure": "phrase_length_accuracy", "kind": "bars",
            "title": f"Node accuracy by phrase length ({task} test)",
            "x_label": f"phrase length (words under the node; the last bucket "
                       f"{PHRASE_LENGTH_CAP}+)",
            "y_label": "accuracy (%)", "source": [source], "task": task,
            "cap": PHRASE_LENGTH_CAP, "y": "accuracy", "x": "value",
            "series": [{"label": "", "points": _node_buckets(records, "span",
                                                             PHRASE_LENGTH_CAP, 1)}]}


def accuracy_by_height(records: list, task: str, source: str = "") -> dict:
    """Accuracy of the labelled nodes by their height (Zhu Fig. 4, upper: depth)."""
    return {"figure": "height_accuracy", "kind": "bars",
            "title": f"Node accuracy by node height ({task} test)",
            "x_label": f"node height (longest path down to a word; the last bucket "
                       f"{HEIGHT_CAP}+)",
            "y_label": "accuracy (%)", "source": [source], "task": task,
            "cap": HEIGHT_CAP, "y": "accuracy", "x": "value",
            "series": [{"label": "", "points": _node_buckets(records, "height", HEIGHT_CAP, 0)}]}


def root_confusion(records: list, task: str, source: str = "") -> dict:
    """The roots' confusion matrix (Nayebi & Blundell Fig. 2)."""
    roots = [_root(r) for r in records if _root(r)[0] >= 0]
    n_classes = max([len(CLASS_NAMES.get(task, []))] + [max(g, p) + 1 for g, p in roots])
    names = class_names(task, n_classes, "{}")
    counts = [[0] * n_classes for _ in range(n_classes)]
    for gold, predicted in roots:
        counts[gold][predicted] += 1
    rows = [[percent(count, sum(row)) if sum(row) else 0.0 for count in row] for row in counts]
    return {"figure": "root_confusion", "kind": "confusion",
            "title": f"Root confusion matrix ({task} test)",
            "x_label": "predicted label", "y_label": "gold label", "source": [source],
            "task": task, "classes": names, "counts": counts, "row_percent": rows,
            "accuracy": percent(sum(counts[k][k] for k in range(n_classes)), len(roots))}


def learning_curves(metrics: dict, source: str = "") -> dict:
    """Loss and training/dev metrics per epoch, and the cumulative training time."""
    task = metrics["config"]["task"]
    keys = ["pearson"] if task in PAIR_TASKS else ["root_acc", "all_acc"]
    epochs, elapsed = [], 0.0
    for record in metrics.get("epochs") or []:
        elapsed += record.get("wall_s") or 0.0
        row = {"epoch": record["epoch"], "train_loss": record.get("train_loss"),
               "train_s": elapsed}
        for split in ("train", "dev"):
            values = record.get(split) or {}
            for key in keys:
                row[f"{split}_{key}"] = values.get(key)
        epochs.append(row)
    if not epochs:
        raise FigureError(f"{source}: no finished epoch to draw")
    return {"figure": "learning_curves", "kind": "learning",
            "title": f"Learning curves: {metrics['config']['model']} on {task}",
            "x_label": "epoch", "time_label": "training time (s; evaluation excluded)",
            "y_label": "Pearson's r" if task in PAIR_TASKS else "accuracy (%)",
            "source": [source], "task": task, "metrics": keys, "epochs": epochs,
            "best_epoch": metrics.get("best_epoch")}


def run_figures(run_dir: str | Path, split: str = "test") -> list:
    """Every figure of one run directory: those of its predictions file for
    ``split`` and its learning curves."""
    run_dir = Path(run_dir)
    metrics_path = run_dir / "metrics.json"
    metrics = read_metrics(run_dir)
    task = metrics["config"]["task"]
    path = run_dir / predictions_name(split)
    if not path.is_file():
        how = f"npcomp eval --run {run_dir}" + ("" if split == "test" else f" --split {split}")
        raise FigureError(f"{path}: no such file; the figures are drawn from a run's "
                          f"per-sentence predictions, which `{how}` writes (training writes "
                          "the test split's when it finishes)")
    records = read_predictions(path)
    figures = _prediction_figures(records, task, str(path), split)
    figures.append(learning_curves(metrics, str(metrics_path)))
    return figures


def _prediction_figures(records, task, source, split="test", tail=None) -> list:
    if is_pairs(records):
        figures = [pearson_by_mean_length(records, task, source, tail)]
    else:
        figures = [accuracy_by_sentence_length(records, task, source, tail),
                   accuracy_by_phrase_length(records, task, source),
                   accuracy_by_height(records, task, source),
                   root_confusion(records, task, source)]
    if split != "test":
        for figure in figures:
            figure["title"] = figure["title"].replace(" test)", f" {split})")
    return figures


# --------------------------------------------------------------------------
# a sweep: settings over seeds
# --------------------------------------------------------------------------

SWEEP_METRICS = {"root_acc": "root accuracy (%)", "all_acc": "all-node accuracy (%)",
                 "pearson": "Pearson's r"}


def is_sweep(directory: str | Path) -> bool:
    """A sweep directory holds its runs in ``runs/`` (SPEC Sec. 3)."""
    directory = Path(directory)
    return (directory / "runs").is_dir() and not (directory / "metrics.json").is_file()


def sweep_settings(sweep_dir: str | Path) -> tuple:
    """(settings, notes): the finished runs of ``SWEEP_DIR/runs/*`` grouped by
    setting (``summary.summarise``), each with its label, its runs and their
    metrics; notes name the runs left out (unfinished)."""
    from .summary import read_runs, summarise
    runs_dir = Path(sweep_dir) / "runs"
    runs, notes = [], []
    for run_dir in sorted(path for path in runs_dir.iterdir() if path.is_dir()):
        if not (run_dir / "metrics.json").is_file():
            notes.append(f"{run_dir}: left out, no metrics.json")
            continue
        try:
            runs.extend(read_runs([run_dir]))
        except ValueError as error:  # not finished yet: no test metrics
            notes.append(f"{error}; left out")
    if not runs:
        raise FigureError(f"{runs_dir}: no finished run to draw")
    by_dir = {run["run_dir"]: run for run in runs}
    # a sweep of npcomp sweep names its settings (plan.json): group and label by them
    named = _planned_settings(Path(sweep_dir))
    records = summarise(runs, group_of=(lambda run: named.get(Path(run["run_dir"]).name))
                        if named else None)
    models = {record["model"] for record in records}
    tasks = {record["task"] for record in records}
    settings = []
    for record in records:
        parts = ([record["model"]] if len(models) > 1 or not record["differs"] else [])
        parts += [record["task"]] if len(tasks) > 1 else []
        parts += [f"{key}={_shown(value)}" for key, value in record["differs"].items()]
        label = named.get(Path(record["runs"][0]).name) if named else ", ".join(parts)
        settings.append({"label": label, "model": record["model"],
                         "task": record["task"], "seeds": record["seeds"],
                         "runs": record["runs"],
                         "metrics": [by_dir[run_dir] for run_dir in record["runs"]]})
    return settings, notes


def _planned_settings(sweep_dir: Path) -> dict:
    """Run directory name -> its setting's name, from SWEEP_DIR/plan.json
    ({} for a directory of runs without one)."""
    path = sweep_dir / "plan.json"
    if not path.is_file():
        return {}
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
        return {name: run["setting"] for name, run in runs.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise FigureError(f"{path}: damaged sweep file (no runs with their settings)") from None


def _shown(value):
    """A setting's value as a label shows it: a file by its name."""
    return Path(value).name if isinstance(value, str) and "/" in value else value


def seed_distributions(settings: list, source: str = "") -> list:
    """One box-plot figure per split and metric: each setting's values over
    its seeds (Le & Zuidema Figs. 6-7)."""
    figures = []
    for split in ("test", "dev"):
        for metric, label in SWEEP_METRICS.items():
            boxes = []
            for setting in settings:
                values = [run[split][metric] for run in setting["metrics"]
                          if isinstance(run.get(split), dict) and metric in run[split]]
                if values:
                    boxes.append({"label": setting["label"], "seeds": setting["seeds"],
                                  "runs": setting["runs"], "values": values,
                                  "median": _median(values), "mean": sum(values) / len(values)})
            if boxes:
                figures.append({
                    "figure": f"seeds_{split}_{metric}", "kind": "boxes",
                    "title": f"{split.capitalize()} {label} over seeds, per setting",
                    "x_label": "setting", "y_label": f"{split} {label}",
                    "source": [source], "split": split, "metric": metric, "boxes": boxes})
    return figures


def _median(values: list) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def mean_curves(settings: list) -> tuple:
    """(figures, notes): the per-length figures of each setting's runs,
    averaged point by point over its seeds (a point only where every seed
    has one), one series per setting."""
    read, notes = [], []
    for setting in settings:
        paths = [Path(run_dir) / PREDICTIONS for run_dir in setting["runs"]]
        missing = [path for path in paths if not path.is_file()]
        if missing:
            notes.append(f"{missing[0]}: no such file (`npcomp eval --run {missing[0].parent}` "
                         f"writes it); setting {setting['label'] or setting['model']} left "
                         "out of the per-length figures")
            continue
        read.append((setting, paths, [read_predictions(path) for path in paths]))
    merged = {}
    tasks = sorted({setting["task"] for setting, _, _ in read})
    for task in tasks:
        # every series of a figure on the same windows
        tail = shared_tail([records for setting, _, runs in read if setting["task"] == task
                            for records in runs], task)
        for setting, paths, runs in read:
            if setting["task"] != task:
                continue
            per_run = [[figure for figure in _prediction_figures(records, task, str(path),
                                                                 tail=tail)
                        if figure["kind"] in ("curve", "bars")]
                       for path, records in zip(paths, runs)]
            _merge(merged, setting, per_run, f"_{task}" if len(tasks) > 1 else "")
    return list(merged.values()), notes


def _merge(merged: dict, setting: dict, per_run: list, suffix: str = "") -> None:
    """Add a setting's series, the mean over its runs, to the figures in ``merged``."""
    for figures in zip(*per_run):
        first = figures[0]
        key = first["figure"] + suffix
        target = merged.setdefault(key, {**first, "figure": key, "series": [], "source": []})
        target["title"] = first["title"].replace(" test)", " test, mean over seeds)")
        target["source"] += [figure["source"][0] for figure in figures]
        target["series"].append({"label": setting["label"] or setting["model"],
                                 "runs": len(figures),
                                 "points": _mean_points(figures, first["x"], first["y"])})


def _mean_points(figures: list, x: str, y: str) -> list:
    """The points at every x all ``figures`` have, with the mean of their y."""
    tables = [{point[x]: point for point in figure["series"][0]["points"]}
              for figure in figures]
    points = []
    for position, point in tables[0].items():
        values = [table[position][y] for table in tables if position in table]
        if len(values) == len(tables) and None not in values:
            points.append({**point, "n": [table[position]["n"] for table in tables],
                           y: sum(values) / len(values)})
    return points


def sweep_figures(sweep_dir: str | Path, confusions: bool = True) -> tuple:
    """(figures, notes) of a sweep directory; with ``confusions`` each
    classifying setting's root confusion matrix, summed over its seeds."""
    settings, notes = sweep_settings(sweep_dir)
    figures = seed_distributions(settings, str(Path(sweep_dir) / "runs"))
    curves, more = mean_curves(settings)
    matrices = confusions_over_seeds(settings) if confusions else []
    return figures + curves + matrices, notes + more


def confusions_over_seeds(settings: list) -> list:
    """Per setting whose runs classify and have test predictions: the roots'
    confusion matrix of all its seeds' test sentences together (Nayebi &
    Blundell Fig. 2), so each row's percentages are over every seed."""
    figures = []
    for setting in settings:
        paths = [Path(run_dir) / PREDICTIONS for run_dir in setting["runs"]]
        if not paths or not all(path.is_file() for path in paths):
            continue
        records = [record for path in paths for record in read_predictions(path)]
        if is_pairs(records):
            continue
        figure = root_confusion(records, setting["task"], str(Path(setting["runs"][0]).parent))
        label = setting["label"] or setting["model"]
        figure.update(figure=f"root_confusion_{_file_part(label)}",
                      title=f"Root confusion matrix, {label} ({setting['task']} test, "
                            f"{len(paths)} seeds)")
        figures.append(figure)
    return figures


def _file_part(label: str) -> str:
    """``label`` as a part of a file name."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", label).strip("-") or "setting"
