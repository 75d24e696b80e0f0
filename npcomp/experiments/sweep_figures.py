"""The figures of a sweep directory (``npcomp plot SWEEP_DIR``, and the
reports of ``npcomp reproduce``): its runs (``SWEEP_DIR/runs/*``) grouped by
setting as ``npcomp summary`` groups them, or by the setting names of its
``plan.json``.

* ``seeds_SPLIT_METRIC``: each setting's test and dev metric over its seeds
  (Le & Zuidema 2015, Figs. 6-7, box plots), each task on axes of its own and
  at most ``MAX_BOXES`` settings on one axes, the all-node figures one node
  set an axes (``node_set``); on the test figures the
  paper's figure of each setting when the caller gives it (``paper``);
* the per-length figures of ``figures.py`` (sentence length, phrase length,
  node height; Pearson's r by pair length) with one series per setting,
  each point the mean over its seeds (Tai's points are means over 5 runs),
  at most ``MAX_SERIES`` series on one axes, the node figures one node set
  an axes;
* ``root_confusion_SETTING``: a setting's root confusion matrix over all its
  seeds' test sentences (Nayebi & Blundell, Fig. 2);
* a paper's figure (``paper_figures``): chosen settings' per-length series
  on one axes per panel, as the paper draws them (Tai et al. Fig. 3: tree
  against sequence models; Zhu et al. Fig. 4: S-LSTM against RNTN).

A setting's per-length figures and confusion matrix come from its runs'
counts (``figure_counts.py``); for runs trained before the counts were kept,
from ``SWEEP_DIR/figure-data.json``: the same numbers per setting, as drawn
from those runs' predictions then (``LEGACY``).  Plain Python.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from npcomp.data.datasets import PAIR_CLASS_TASKS
from .paper_rows import MIN_SEEDS
from .sweep_settings import _label, sweep_settings
from .figures import (
    FigureError,
    confusion_record,
    figure_template,
    prediction_figures,
    read_run_counts,
    root_confusion,
    shared_tail,
)

# lines on one axes of a per-length figure; boxes on one axes of a seed plot
MAX_SERIES, MAX_BOXES = 6, 8
SWEEP_METRICS = {
    "root_acc": "root accuracy (%)",
    "all_acc": "all-node accuracy (%)",
    "pearson": "Pearson's r",
    "ranking_loss": "ranking loss",
    "accuracy": "accuracy (%)",
}
TASK_NAMES = {
    "sst5": "fine-grained (sst5)",
    "sst2": "binary (sst2)",
    "sick": "SICK",
    "synthetic": "synthetic",
    "sick-entailment": "SICK entailment",
}
LEGACY = "figure-data.json"
PER_LENGTH = ("length_accuracy", "phrase_length_accuracy", "height_accuracy", "length_pearson")
# the figures of every labelled node, not the roots alone: drawn one node set a
# panel, as a model's all-node figure depends on which nodes its trees label
# (the SST's 82,600 test phrases, a dependency parse's 38,509 spans, ...)
NODE_FIGURES = ("all_acc", "phrase_length_accuracy", "height_accuracy")
# the node set of a run's labelled test nodes, by the trees it reads (the
# treebank's own: its phrases); left- and right-branching trees label their
# roots and words alone, the same nodes both
NODE_SETS = {
    "dependency": "dependency spans",
    "parsed": "spans of the parsed trees",
    "left": "roots and words",
    "right": "roots and words",
}


def is_sweep(directory: str | Path) -> bool:
    """A sweep directory holds its runs in ``runs/`` (docs/sweeps.md)."""
    directory = Path(directory)
    return (directory / "runs").is_dir() and not (directory / "metrics.json").is_file()


def units(labels: list) -> list:
    """``labels`` in runs of those drawn together: a setting and its
    ``-dev`` alternative (a paper table's row) stay side by side."""
    out = []
    for label in labels:
        if out and label == f"{out[-1][0]}-dev":
            out[-1].append(label)
        else:
            out.append([label])
    return out


def node_set(setting: dict, split: str = "test") -> tuple | None:
    """(task, name, count, split) of the labelled nodes of ``split`` a
    setting's all-node figures count (its first run's; the count None where
    its run did not record it); None when they are its roots alone, which
    the root figures draw."""
    first = (setting.get("metrics") or [{}])[0]
    test = first.get(split) or {}
    nodes = test.get("labelled_nodes")
    if nodes is not None and nodes == test.get("sentences"):
        return None
    structure = (first.get("config") or {}).get("structure")
    return (
        setting["task"],
        NODE_SETS.get(structure, "phrases") if nodes is not None else "labelled nodes",
        nodes,
        split,
    )


def node_panels(items: list, most: int = MAX_SERIES) -> list:
    """(node set, label) pairs -> ``panels``, one node set (and task) an axes,
    each titled by its task, nodes and their count."""
    sets = list(dict.fromkeys(nodes for nodes, _ in items))
    tasks = {nodes[0] for nodes in sets}
    titles = {}
    for task, name, count, split in sets:
        counted = f"{name} ({count:,} {split} nodes)" if count is not None else name
        titles[(task, name, count, split)] = f"{TASK_NAMES.get(task, task)}: {counted}" if len(tasks) > 1 else counted
    return panels(items, titles, most)


def panels(items: list, titles: dict | None = None, most: int = MAX_SERIES) -> list:
    """(task, label) pairs -> the axes they are drawn on: one task an axes,
    at most ``most`` labels each (a task's labels in even chunks, in
    order, a row's settings together: ``units``), each {"title", "task",
    "labels"}; ``titles``: the title of each task's axes, where the
    "task" is another grouping (``node_panels``)."""
    tasks = list(dict.fromkeys(task for task, _ in items))
    out = []
    for task in tasks:
        chunks = _chunks(units([label for one, label in items if one == task]), most)
        for number, chunk in enumerate(chunks, start=1):
            title = titles[task] if titles is not None else TASK_NAMES.get(task, task) if len(tasks) > 1 else ""
            if len(chunks) > 1:
                title = (f"{title}, " if title else "") + f"part {number} of {len(chunks)}"
            out.append({"title": title, "task": task[0] if titles else task, "labels": chunk})
    return out


def _chunks(runs: list, most: int) -> list:
    """Runs of labels (``units``) packed in order into the fewest axes of at
    most ``most`` labels, as even as that allows."""
    total = sum(len(run) for run in runs)
    for count in range(max(1, math.ceil(total / most)), total + 1):
        for target in range(math.ceil(total / count), most + 1):
            chunks = [[]]
            for run in runs:
                if chunks[-1] and len(chunks[-1]) + len(run) > target:
                    chunks.append([])
                chunks[-1].extend(run)
            if len(chunks) <= count:
                return chunks
    return [list(run) for run in runs]


# --------------------------------------------------------------------------
# the metrics over seeds
# --------------------------------------------------------------------------


def seed_distributions(settings: list, source: str = "", paper: dict | None = None) -> list:
    """One box-plot figure per split and metric: each setting's values over
    its seeds (Le & Zuidema Figs. 6-7); ``paper``: setting label -> metric ->
    the paper's test figure, marked on the test figures."""
    paper = paper or {}
    figures = []
    # a cross-validated sweep's runs are its folds
    over = "folds" if settings and all("folds" in runs_counted(setting) for setting in settings) else "seeds"
    for split in ("test", "dev"):
        for metric, label in SWEEP_METRICS.items():
            boxes = []
            for setting in settings:
                values = [
                    run[split][metric]
                    for run in setting["metrics"]
                    if isinstance(run.get(split), dict) and metric in run[split]
                ]
                nodes = node_set(setting, split) if metric in NODE_FIGURES else ()
                if values and nodes is not None:
                    box = {
                        "label": _label(setting),
                        "task": setting["task"],
                        "seeds": setting["seeds"],
                        "runs": setting["runs"],
                        "values": values,
                        "median": _median(values),
                        "mean": sum(values) / len(values),
                    }
                    figure = (paper.get(_label(setting)) or {}).get(metric)
                    if split == "test" and figure is not None:
                        box["paper"] = figure
                    if nodes:
                        box["nodes"] = list(nodes)
                    boxes.append(box)
            if boxes:
                by_nodes = metric in NODE_FIGURES
                figures.append(
                    {
                        "figure": f"seeds_{split}_{metric}",
                        "kind": "boxes",
                        "title": f"{split.capitalize()} {label} over {over}, per setting"
                        + (", one node set a panel" if by_nodes else ""),
                        "x_label": "setting",
                        "y_label": f"{split} {label}",
                        "source": [source],
                        "split": split,
                        "metric": metric,
                        "boxes": boxes,
                        "panels": (
                            node_panels([(tuple(box["nodes"]), box["label"]) for box in boxes], MAX_BOXES)
                            if by_nodes
                            else panels([(box["task"], box["label"]) for box in boxes], most=MAX_BOXES)
                        ),
                        **({"over": over} if over != "seeds" else {}),
                    }
                )
    return figures


def _median(values: list) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


# --------------------------------------------------------------------------
# the per-length figures, averaged over each setting's seeds
# --------------------------------------------------------------------------


def read_legacy(sweep_dir: str | Path) -> dict:
    """SWEEP_DIR/figure-data.json's settings ({} without one)."""
    path = Path(sweep_dir) / LEGACY
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))["settings"]
    except (ValueError, KeyError, TypeError):
        raise FigureError(f"{path}: damaged figure data file (no settings)") from None


def _legacy_of(setting: dict, legacy: dict) -> dict | None:
    """The legacy figure data of ``setting``, if it is of exactly its runs."""
    record = legacy.get(_label(setting))
    names = [Path(run).name for run in setting["runs"]]
    return record if record is not None and record.get("runs") == names else None


def mean_curves(settings: list, legacy: dict | None = None) -> tuple:
    """(figures, notes, series): the per-length figures of each setting's
    runs, averaged point by point over its seeds (a point only where every
    seed has one), one series per setting; ``series``: (figure, task,
    label) -> the setting's series, for a paper's figure."""
    legacy = legacy or {}
    counted, notes = _runs_with_counts(settings, legacy)
    counted = _seed_counts_shown(counted)
    tasks = list(dict.fromkeys(setting["task"] for setting in settings))
    tails = {
        task: shared_tail(
            [counts for setting, _, runs, _ in counted if setting["task"] == task for counts in runs], task
        )
        for task in tasks
        if any(setting["task"] == task for setting, *_ in counted)
    }
    merged, series = {}, {}
    for setting in settings:
        task = setting["task"]
        suffix = f"_{task}" if len(tasks) > 1 else ""
        run_dirs, runs, shown = next(
            ((dirs, runs, shown) for one, dirs, runs, shown in counted if one is setting), (None, None, None)
        )
        nodes = node_set(setting)
        if runs is not None:
            per_run = [
                [
                    figure
                    for figure in prediction_figures(counts, task, str(run_dir), tail=tails[task])
                    if figure["kind"] in ("curve", "bars")
                    and (nodes is not None or figure["figure"] not in NODE_FIGURES)
                ]
                for run_dir, counts in zip(run_dirs, runs)
            ]
            for figures in zip(*per_run):
                one = {
                    "label": shown,
                    "runs": len(figures),
                    "points": _mean_points(figures, figures[0]["x"], figures[0]["y"]),
                }
                if figures[0]["figure"] in NODE_FIGURES:
                    one["nodes"] = list(nodes)
                _add(merged, figures[0], one, suffix, [figure["source"][0] for figure in figures])
                series[(figures[0]["figure"], task, _label(setting))] = one
            continue
        record = _legacy_of(setting, legacy)
        if record is None:
            continue
        for base, curve in record["curves"].items():
            if base in NODE_FIGURES and nodes is None:
                continue
            one = dict(
                curve["series"], label=_label(setting), **({"nodes": list(nodes)} if base in NODE_FIGURES else {})
            )
            _add(
                merged,
                figure_template(base, task, curve.get("tail")),
                one,
                suffix,
                [str(Path(setting["runs"][0]).parent.parent / LEGACY)],
            )
            series[(base, task, _label(setting))] = one
    for figure in merged.values():
        figure["panels"] = (
            node_panels([(tuple(one["nodes"]), one["label"]) for one in figure["series"]])
            if all("nodes" in one for one in figure["series"])
            else panels([(figure["task"], one["label"]) for one in figure["series"]])
        )
    return list(merged.values()), notes, series


def _runs_with_counts(settings: list, legacy: dict) -> tuple:
    """(counted, notes): per setting whose runs kept their test counts,
    (setting, run directories, counts, label); a setting with some seeds
    trained before counts were kept has the others', if enough, and a note
    says so; one with too few (and no legacy record) is left out, named."""
    counted, notes = [], []
    for setting in settings:
        if setting["task"] in PAIR_CLASS_TASKS:  # classified pairs: no per-length figure
            continue
        runs = [read_run_counts(run_dir, setting["task"]) for run_dir in setting["runs"]]
        kept = [(run, counts) for run, counts in zip(setting["runs"], runs) if counts is not None]
        if len(kept) == len(runs):
            counted.append((setting, setting["runs"], runs, _label(setting)))
        elif _legacy_of(setting, legacy) is None:
            missing = next(run for run, counts in zip(setting["runs"], runs) if counts is None)
            if len(kept) < MIN_SEEDS:
                notes.append(
                    f"{missing}: no test predictions or counts (`npcomp eval --run "
                    f"{missing}` writes them); setting {_label(setting)} left out of "
                    "the per-length figures"
                )
                continue
            # seeds trained before counts were kept, beside later ones: the
            # curves of the seeds that have them, as many as measure a row, saying which
            counted.append(
                (
                    setting,
                    [run for run, _ in kept],
                    [counts for _, counts in kept],
                    f"{_label(setting)} ({len(kept)} of {len(runs)} seeds)",
                )
            )
            notes.append(
                f"setting {_label(setting)}: per-length figures over the "
                f"{len(kept)} of its {len(runs)} seeds whose test counts are kept "
                f"({', '.join(Path(run).name for run, _ in kept)}); the others "
                "were trained before counts were kept"
            )
    return counted, notes


def _seed_counts_shown(counted: list) -> list:
    """When the settings drawn average different numbers of seeds (a row
    still training beside finished ones), each plain label names its count."""
    if len({len(runs) for _, runs, _, _ in counted}) < 2:
        return counted
    return [
        (
            setting,
            run_dirs,
            runs,
            shown if shown != _label(setting) else f"{shown} ({len(runs)} seed{'s' * (len(runs) > 1)})",
        )
        for setting, run_dirs, runs, shown in counted
    ]


def _add(merged: dict, first: dict, one: dict, suffix: str, sources: list) -> None:
    """Add a setting's series to the figure of ``first``'s kind in ``merged``."""
    key = first["figure"] + suffix
    target = merged.setdefault(key, {**first, "figure": key, "series": [], "source": []})
    target["title"] = first["title"].replace(" test)", " test, mean over seeds)")
    target["source"] += sources
    target["series"].append(one)


def _mean_points(figures: list, x: str, y: str) -> list:
    """The points at every x all ``figures`` have, with the mean of their y."""
    tables = [{point[x]: point for point in figure["series"][0]["points"]} for figure in figures]
    points = []
    for position, point in tables[0].items():
        values = [table[position][y] for table in tables if position in table]
        if len(values) == len(tables) and None not in values:
            points.append({**point, "n": [table[position]["n"] for table in tables], y: sum(values) / len(values)})
    return points


# --------------------------------------------------------------------------
# confusion matrices, a paper's figures, the whole sweep
# --------------------------------------------------------------------------


def confusions_over_seeds(settings: list, legacy: dict | None = None) -> list:
    """Per setting whose runs classify and have test counts: the roots'
    confusion matrix of all its seeds' test sentences together (Nayebi &
    Blundell Fig. 2), so each row's percentages are over every seed."""
    legacy = legacy or {}
    figures = []
    for setting in settings:
        runs = (
            []
            if setting["task"] in PAIR_CLASS_TASKS
            else [read_run_counts(run_dir, setting["task"]) for run_dir in setting["runs"]]
        )
        source = str(Path(setting["runs"][0]).parent)
        tests = [run.get("test") or {} for run in setting.get("metrics", [])]
        if setting["task"] in PAIR_CLASS_TASKS:  # classified pairs: their runs' matrices
            if not tests or not all("confusion" in test for test in tests):
                continue
            figure = confusion_record(
                [[sum(cell) for cell in zip(*rows)] for rows in zip(*(test["confusion"] for test in tests))],
                setting["task"],
                source,
            )
            figure["classes"] = list(tests[0]["classes"])
            figure["x_label"], figure["y_label"] = "predicted class", "gold class"
        elif runs and all(counts is not None for counts in runs):
            if runs[0]["kind"] == "pairs":
                continue
            figure = root_confusion(runs, setting["task"], source)
        elif (_legacy_of(setting, legacy) or {}).get("root_confusion") is not None:
            figure = confusion_record(_legacy_of(setting, legacy)["root_confusion"], setting["task"], source)
        else:
            continue
        label = _label(setting)
        names = _recorded_class_names(setting)
        if names is not None and len(names) == len(figure["classes"]):
            figure["classes"] = names  # a run on a user's files names its classes
        what = "Confusion" if setting["task"] in PAIR_CLASS_TASKS else "Root confusion"
        figure.update(
            figure=f"root_confusion_{_file_part(label)}",
            title=f"{what} matrix, {label} ({setting['task']} test, {runs_counted(setting)})",
        )
        figures.append(figure)
    return figures


def _recorded_class_names(setting: dict) -> list | None:
    """The class names a setting's runs recorded (runs on a user's files), or None."""
    names = [(run.get("config") or {}).get("classes") for run in setting.get("metrics", [])]
    return list(names[0]) if names and names[0] and all(one == names[0] for one in names) else None


def runs_counted(setting: dict) -> str:
    """What a setting's runs are: ``5 seeds``, or cross-validating ``10
    folds`` (``3 folds x 2 seeds``)."""
    folds = {(run.get("config") or {}).get("fold") for run in setting.get("metrics", [])}
    if folds and None not in folds:
        seeds = len(set(setting.get("seeds", [])))
        return f"{len(folds)} folds" + (f" x {seeds} seeds" if seeds > 1 else "")
    return f"{len(setting['runs'])} seeds"


def paper_figure(spec, series: dict) -> dict:
    """A paper's figure (``paper_tables.PaperFigure``): per panel, the chosen
    settings' series of one per-length figure on one axes; settings without
    runs yet are named on the panel."""
    out = []
    for base, task, labels, title in spec.panels:
        chosen = [series[(base, task, label)] for label in labels if (base, task, label) in series]
        panel = figure_template(base, task, None)
        panel.update(
            title=title, series=chosen, missing=[label for label in labels if (base, task, label) not in series]
        )
        out.append(panel)
    return {"figure": spec.name, "kind": "panels", "title": spec.title, "source": [], "panels": out}


def sweep_figures(
    sweep_dir: str | Path, confusions: bool = True, paper: dict | None = None, paper_figures: tuple = ()
) -> tuple:
    """(figures, notes) of a sweep directory; with ``confusions`` each
    classifying setting's root confusion matrix, summed over its seeds;
    ``paper``: setting -> metric -> the paper's figure (seed plots);
    ``paper_figures``: the paper's own figures to draw (PaperFigure)."""
    settings, notes = sweep_settings(sweep_dir)
    legacy = read_legacy(sweep_dir)
    figures = seed_distributions(settings, str(Path(sweep_dir) / "runs"), paper)
    curves, more, series = mean_curves(settings, legacy)
    matrices = confusions_over_seeds(settings, legacy) if confusions else []
    drawn = [paper_figure(spec, series) for spec in paper_figures]
    return figures + curves + matrices + drawn, notes + more


def _file_part(label: str) -> str:
    """``label`` as a part of a file name."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "-", label).strip("-") or "setting"
