"""Drawing ``figures.py``'s records with matplotlib (the ``plot`` extra).

matplotlib is imported only when a figure is drawn, and only its object
interface (``matplotlib.figure.Figure``, rendered by the Agg and SVG
backends): no pyplot state, no display needed.  Each record becomes
``NAME.png``, ``NAME.svg`` and ``NAME.json`` (the numbers drawn) in the
output directory, each written whole or not at all (``rundir.py``).
"""
from __future__ import annotations

import io
from pathlib import Path

from .figures import FigureError

INSTALL_HINT = ('matplotlib draws the figures and is not installed: pip install "npcomp[plot]" '
                '(in a checkout: python -m pip install -e ".[plot]")')
EXTENSIONS = ("png", "svg", "json")
SERIES_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple",
                  "tab:brown", "tab:pink", "tab:gray", "tab:olive", "tab:cyan")


def new_figure(width: float = 7.0, height: float = 4.5):
    """A matplotlib Figure (FigureError with the install hint without matplotlib)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise FigureError(INSTALL_HINT) from None
    return Figure(figsize=(width, height), layout="constrained")


def file_names(figures: list) -> list:
    """The files the records become."""
    return [f"{figure['figure']}.{extension}" for figure in figures for extension in EXTENSIONS]


def write_figures(figures: list, out_dir: str | Path) -> list:
    """Draw every record into ``out_dir``; the paths written."""
    from .rundir import RunDirectory
    out = RunDirectory(out_dir)
    out.path.mkdir(parents=True, exist_ok=True)
    written = []
    for record in figures:
        figure = DRAW[record["kind"]](record)
        for extension in ("png", "svg"):
            buffer = io.BytesIO()
            # no date in the SVG, so the same numbers give the same file
            figure.savefig(buffer, format=extension, dpi=120,
                           metadata={"Date": None} if extension == "svg" else None)
            out.write_bytes(f"{record['figure']}.{extension}", buffer.getvalue())
        out.write_json(f"{record['figure']}.json", record)
        written += [str(out.file(f"{record['figure']}.{extension}")) for extension in EXTENSIONS]
    return written


# --------------------------------------------------------------------------
# the kinds of figure
# --------------------------------------------------------------------------

def _titled(axes, record: dict, figure) -> None:
    figure.suptitle(record["title"])
    axes.set_xlabel(record["x_label"])
    axes.set_ylabel(record["y_label"])
    axes.grid(True, alpha=0.3)


def draw_curve(record: dict):
    """Accuracy (or r) per length window or bucket: one line per series; a
    single series also shows how many sentences (nodes) each point has."""
    figure = new_figure()
    axes = figure.add_subplot()
    x, y = record["x"], record["y"]
    series = record["series"]
    categorical = any("label" in point for s in series for point in s["points"])
    for number, one in enumerate(series):
        points = [point for point in one["points"] if point[y] is not None]
        axes.plot([point[x] for point in points], [point[y] for point in points],
                  marker="o", markersize=3.5, color=SERIES_COLOURS[number % 10],
                  label=one["label"] or None)
    if not categorical and all(float(point[x]).is_integer()
                               for s in series for point in s["points"]):
        from matplotlib.ticker import MaxNLocator
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    if categorical:
        ticks = {point[x]: point["label"] for s in series for point in s["points"]}
        shown = sorted(ticks)[::max(1, len(ticks) // 15)]
        axes.set_xticks(shown, [ticks[value] for value in shown])
    if len(series) == 1:
        counts = axes.twinx()
        points = series[0]["points"]
        counts.bar([point[x] for point in points], [_count(point["n"]) for point in points],
                   width=0.8, color="0.85", zorder=0)
        counts.set_ylabel("sentences" if record["figure"] == "length_accuracy"
                          else "pairs" if record["figure"] == "length_pearson" else "nodes",
                          color="0.45")
        counts.tick_params(axis="y", colors="0.45")
        axes.set_zorder(counts.get_zorder() + 1)
        axes.patch.set_visible(False)
    else:
        axes.legend(fontsize="small")
    _titled(axes, record, figure)
    return figure


def draw_confusion(record: dict):
    """Row-normalised confusion matrix, each cell's count and percentage."""
    classes = record["classes"]
    size = 1.0 + 1.1 * len(classes)
    figure = new_figure(size + 1.5, size)
    axes = figure.add_subplot()
    image = axes.imshow(record["row_percent"], cmap="Blues", vmin=0.0, vmax=100.0)
    for gold, row in enumerate(record["counts"]):
        for predicted, count in enumerate(row):
            share = record["row_percent"][gold][predicted]
            axes.text(predicted, gold, f"{count}\n{share:.0f}%", ha="center", va="center",
                      fontsize="small", color="white" if share > 55 else "black")
    axes.set_xticks(range(len(classes)), [f"{k}: {name}" for k, name in enumerate(classes)],
                    rotation=30, ha="right")
    axes.set_yticks(range(len(classes)), [f"{k}: {name}" for k, name in enumerate(classes)])
    figure.colorbar(image, ax=axes, label="% of the gold class")
    _titled(axes, record, figure)
    axes.grid(False)
    axes.set_title(f"root accuracy {record['accuracy']:.2f}%", fontsize="medium")
    return figure


def draw_learning(record: dict):
    """Loss and metrics against the epoch (left) and the training time (right)."""
    figure = new_figure(10.0, 6.5)
    grid = figure.subplots(2, 2, sharex="col")
    epochs = record["epochs"]
    names = {"root_acc": "root", "all_acc": "all nodes", "pearson": "r"}
    for column, x in enumerate(("epoch", "train_s")):
        xs = [row[x] for row in epochs]
        loss, metric = grid[0][column], grid[1][column]
        loss.plot(xs, [row["train_loss"] for row in epochs], marker="o", color="tab:red",
                  label="train loss")
        loss.set_ylabel("mean training loss")
        for number, key in enumerate(record["metrics"]):
            style = "-" if number == 0 else "--"
            for split, colour in (("train", "tab:blue"), ("dev", "tab:green")):
                values = [(x_value, row[f"{split}_{key}"]) for x_value, row in zip(xs, epochs)
                          if row[f"{split}_{key}"] is not None]
                if values:
                    metric.plot([v[0] for v in values], [v[1] for v in values], style,
                                marker="o", markersize=3.5, color=colour,
                                label=f"{split} {names[key]}")
        metric.set_ylabel(record["y_label"])
        metric.set_xlabel(record["x_label"] if x == "epoch" else record["time_label"])
        if x == "epoch":
            from matplotlib.ticker import MaxNLocator
            metric.xaxis.set_major_locator(MaxNLocator(integer=True))
        if record.get("best_epoch") and x == "epoch":
            for axes in (loss, metric):
                axes.axvline(record["best_epoch"], color="0.6", linestyle=":",
                             label="best dev epoch" if axes is metric else None)
        metric.legend(fontsize="small")
        for axes in (loss, metric):
            axes.grid(True, alpha=0.3)
    figure.suptitle(record["title"])
    return figure


def draw_boxes(record: dict):
    """One box per setting over its seeds, each run a dot."""
    boxes = record["boxes"]
    figure = new_figure(max(5.0, 1.2 + 1.1 * len(boxes)), 4.8)
    axes = figure.add_subplot()
    positions = range(1, len(boxes) + 1)
    axes.boxplot([box["values"] for box in boxes], positions=list(positions),
                 widths=0.5, showmeans=True)
    for position, box in zip(positions, boxes):
        values = box["values"]
        spread = [position + 0.12 * ((k % 5) - 2) / 2 for k in range(len(values))]
        axes.plot(spread, values, "o", markersize=3, color="tab:blue", alpha=0.6)
    labels = [f"{box['label'] or 'all runs'}\n(n={len(box['values'])})" for box in boxes]
    # labels that would run into each other are slanted
    slanted = len(boxes) > 4 or max(len(box["label"] or "") for box in boxes) > 14
    axes.set_xticks(list(positions), labels, rotation=25 if slanted else 0,
                    ha="right" if slanted else "center", fontsize="small")
    _titled(axes, record, figure)
    return figure


def _count(n) -> float:
    """A point's count: a run's, or the mean of a sweep setting's runs' (one
    count a seed; on a real task's test split all the same)."""
    return sum(n) / len(n) if isinstance(n, list) else n


DRAW = {"curve": draw_curve, "bars": draw_curve, "confusion": draw_confusion,
        "learning": draw_learning, "boxes": draw_boxes}
