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
from .sweep_figures import units

INSTALL_HINT = (
    'matplotlib draws the figures and is not installed: pip install "npcomp[plot]" '
    '(in a checkout: python -m pip install -e ".[plot]")'
)
EXTENSIONS = ("png", "svg", "json")
SERIES_COLOURS = (
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:gray",
    "tab:olive",
    "tab:cyan",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
# the marks of a box plot
MEDIAN_COLOUR, MEAN_COLOUR, SEED_COLOUR, PAPER_COLOUR = ("tab:orange", "tab:green", "tab:blue", "tab:red")


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
    from npcomp.runfiles.rundir import RunDirectory

    out = RunDirectory(out_dir)
    out.path.mkdir(parents=True, exist_ok=True)
    written = []
    for record in figures:
        figure = DRAW[record["kind"]](record)
        for extension in ("png", "svg"):
            buffer = io.BytesIO()
            # no date, library version or random ids in the files, so the same numbers
            # give the same bytes (a report rebuilt from its runs is compared byte for byte)
            with _fixed_ids():
                figure.savefig(
                    buffer, format=extension, dpi=120, metadata=SVG_METADATA if extension == "svg" else PNG_METADATA
                )
            out.write_bytes(f"{record['figure']}.{extension}", buffer.getvalue())
        out.write_json(f"{record['figure']}.json", record)
        written += [str(out.file(f"{record['figure']}.{extension}")) for extension in EXTENSIONS]
    return written


PNG_METADATA = {"Software": None}
SVG_METADATA = {"Date": None, "Creator": None}


def _fixed_ids():
    """The SVG writer's element ids drawn from a fixed salt, not a random one."""
    from matplotlib import rc_context

    return rc_context({"svg.hashsalt": "npcomp"})


# --------------------------------------------------------------------------
# the kinds of figure
# --------------------------------------------------------------------------


def _titled(axes, record: dict, figure) -> None:
    _suptitle(figure, record["title"])
    axes.set_xlabel(record["x_label"])
    axes.set_ylabel(record["y_label"])
    axes.grid(True, alpha=0.3)


def _legend_outside(axes, **options) -> None:
    """The axes' legend to its right, off the data."""
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small", **options)


def _curve_axes(axes, panel: dict, series: list) -> None:
    """One axes of a per-length figure: a line per series (at most
    MAX_SERIES), the counts under a single series, the legend outside."""
    x, y = panel["x"], panel["y"]
    categorical = any("label" in point for s in series for point in s["points"])
    # a setting and its -dev alternative in one colour, the alternative dashed
    colour_of = {label: number for number, unit in enumerate(units([one["label"] for one in series])) for label in unit}
    for one in series:
        number = colour_of[one["label"]]
        points = [point for point in one["points"] if point[y] is not None]
        axes.plot(
            [point[x] for point in points],
            [point[y] for point in points],
            marker=MARKERS[number % len(MARKERS)],
            markersize=3.5,
            linestyle="--" if one["label"].endswith("-dev") else "-",
            color=SERIES_COLOURS[number % 10],
            label=one["label"] or None,
        )
    if not categorical and all(float(point[x]).is_integer() for s in series for point in s["points"]):
        from matplotlib.ticker import MaxNLocator

        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    if categorical:
        ticks = {point[x]: point["label"] for s in series for point in s["points"]}
        shown = sorted(ticks)[:: max(1, len(ticks) // 15)]
        axes.set_xticks(shown, [ticks[value] for value in shown])
    axes.set_xlabel(panel["x_label"])
    axes.set_ylabel(panel["y_label"])
    axes.grid(True, alpha=0.3)
    if panel.get("title"):
        axes.set_title(panel["title"], fontsize="medium")
    if panel.get("missing"):
        axes.text(
            0.01,
            0.02,
            "no runs yet: " + ", ".join(panel["missing"]),
            transform=axes.transAxes,
            fontsize="small",
            color="0.35",
        )
    if len(series) == 1 and panel.get("counts", True):
        counts = axes.twinx()
        points = series[0]["points"]
        counts.bar(
            [point[x] for point in points], [_count(point["n"]) for point in points], width=0.8, color="0.85", zorder=0
        )
        counts.set_ylabel(
            "sentences"
            if panel["figure"].startswith("length_accuracy")
            else "pairs"
            if panel["figure"].startswith("length_pearson")
            else "nodes",
            color="0.45",
        )
        counts.tick_params(axis="y", colors="0.45")
        axes.set_zorder(counts.get_zorder() + 1)
        axes.patch.set_visible(False)
        if series[0]["label"]:  # named above the axes: the counts' scale holds the right
            axes.set_title(", ".join(filter(None, [panel.get("title"), series[0]["label"]])), fontsize="medium")
    elif series:
        _legend_outside(axes)


def _panels_of(record: dict, items: list) -> list:
    """(panel, its items) of a record whose ``panels`` group ``items`` by label
    (one panel of all of them without)."""
    by_label = {item["label"]: item for item in items}
    groups = record.get("panels") or [{"title": "", "labels": list(by_label)}]
    return [(group, [by_label[label] for label in group["labels"]]) for group in groups]


def draw_curve(record: dict):
    """Accuracy (or r) per length window or bucket: one line per series, at
    most MAX_SERIES an axes; a single series also shows how many sentences
    (nodes) each point has."""
    groups = _panels_of(record, record["series"])
    figure = new_figure(9.0, 1.2 + 3.4 * len(groups))
    for axes, (group, series) in zip(_column(figure, len(groups)), groups):
        _curve_axes(axes, {**record, "title": group["title"]}, series)
    _suptitle(figure, record["title"])
    return figure


def draw_panels(record: dict):
    """A paper's figure: each panel a per-length figure of its own."""
    panels = record["panels"]
    figure = new_figure(9.0, 1.2 + 3.4 * len(panels))
    for axes, panel in zip(_column(figure, len(panels)), panels):
        _curve_axes(axes, {**panel, "counts": False}, panel["series"])
    _suptitle(figure, record["title"])
    return figure


def _suptitle(figure, title: str) -> None:
    """The figure's title, wrapped to its width."""
    import textwrap

    width = int(figure.get_figwidth() * 11)
    figure.suptitle(textwrap.fill(title, width))


def _column(figure, count: int) -> list:
    """``count`` axes one above the other."""
    grid = figure.subplots(count, 1, squeeze=False)
    return [row[0] for row in grid]


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
            axes.text(
                predicted,
                gold,
                f"{count}\n{share:.0f}%",
                ha="center",
                va="center",
                fontsize="small",
                color="white" if share > 55 else "black",
            )
    axes.set_xticks(range(len(classes)), [f"{k}: {name}" for k, name in enumerate(classes)], rotation=30, ha="right")
    axes.set_yticks(range(len(classes)), [f"{k}: {name}" for k, name in enumerate(classes)])
    figure.colorbar(image, ax=axes, label="% of the gold class")
    _titled(axes, record, figure)
    axes.grid(False)
    # a sentence's class is its root's; a pair's is the pair's
    what = "accuracy" if record.get("y_label") == "gold class" else "root accuracy"
    axes.set_title(f"{what} {record['accuracy']:.2f}%", fontsize="medium")
    return figure


def draw_learning(record: dict):
    """Loss and metrics against the epoch (left) and the training time (right)."""
    figure = new_figure(10.0, 6.5)
    grid = figure.subplots(2, 2, sharex="col")
    epochs = record["epochs"]
    names = {"root_acc": "root", "all_acc": "all nodes", "pearson": "r", "accuracy": "accuracy"}
    for column, x in enumerate(("epoch", "train_s")):
        xs = [row[x] for row in epochs]
        loss, metric = grid[0][column], grid[1][column]
        loss.plot(xs, [row["train_loss"] for row in epochs], marker="o", color="tab:red", label="train loss")
        loss.set_ylabel("mean training loss")
        for number, key in enumerate(record["metrics"]):
            style = "-" if number == 0 else "--"
            for split, colour in (("train", "tab:blue"), ("dev", "tab:green")):
                values = [
                    (x_value, row[f"{split}_{key}"])
                    for x_value, row in zip(xs, epochs)
                    if row[f"{split}_{key}"] is not None
                ]
                if values:
                    metric.plot(
                        [v[0] for v in values],
                        [v[1] for v in values],
                        style,
                        marker="o",
                        markersize=3.5,
                        color=colour,
                        label=f"{split} {names[key]}",
                    )
        metric.set_ylabel(record["y_label"])
        metric.set_xlabel(record["x_label"] if x == "epoch" else record["time_label"])
        if x == "epoch":
            from matplotlib.ticker import MaxNLocator

            metric.xaxis.set_major_locator(MaxNLocator(integer=True))
        if record.get("best_epoch") and x == "epoch":
            for axes in (loss, metric):
                axes.axvline(
                    record["best_epoch"], color="0.6", linestyle=":", label="best dev epoch" if axes is metric else None
                )
        metric.legend(fontsize="small")
        for axes in (loss, metric):
            axes.grid(True, alpha=0.3)
    _suptitle(figure, record["title"])
    return figure


def draw_boxes(record: dict):
    """One box per setting over its seeds, each run a dot; each panel (a
    task, at most MAX_BOXES settings) on axes of its own; the paper's
    figure marked where the record gives it; a key to the markers."""
    groups = _panels_of(record, record["boxes"])
    widest = max(len(boxes) for _, boxes in groups)
    figure = new_figure(max(7.5, 3.2 + 1.0 * widest), 1.8 + 3.6 * len(groups))
    for axes, (group, boxes) in zip(_column(figure, len(groups)), groups):
        positions = list(range(1, len(boxes) + 1))
        # whiskers to the extremes: every seed is drawn as a dot, none as an outlier
        axes.boxplot(
            [box["values"] for box in boxes],
            positions=positions,
            widths=0.5,
            whis=(0, 100),
            showfliers=False,
            showmeans=True,
            medianprops={"color": MEDIAN_COLOUR},
            meanprops={"marker": "^", "markerfacecolor": MEAN_COLOUR, "markeredgecolor": MEAN_COLOUR},
        )
        for position, box in zip(positions, boxes):
            values = box["values"]
            spread = [position + 0.12 * ((k % 5) - 2) / 2 for k in range(len(values))]
            axes.plot(spread, values, "o", markersize=3, color=SEED_COLOUR, alpha=0.6)
            if box.get("paper") is not None:
                axes.hlines(
                    box["paper"],
                    position - 0.35,
                    position + 0.35,
                    colors=PAPER_COLOUR,
                    linestyles="--",
                    linewidth=1.6,
                    zorder=4,
                )
        labels = [f"{box['label'] or 'all runs'}\n(n={len(box['values'])})" for box in boxes]
        # labels that would run into each other are slanted
        slanted = len(boxes) > 4 or max(len(box["label"] or "") for box in boxes) > 14
        axes.set_xticks(
            positions, labels, rotation=25 if slanted else 0, ha="right" if slanted else "center", fontsize="small"
        )
        # room for three boxes at least, so a lone box keeps a box's width
        spare = max(0.0, (3 - len(boxes)) / 2)
        axes.set_xlim(0.5 - spare, len(boxes) + 0.5 + spare)
        axes.set_ylabel(record["y_label"])
        axes.grid(True, alpha=0.3)
        if group["title"]:
            axes.set_title(group["title"], fontsize="medium")
    _suptitle(figure, record["title"])
    figure.legend(
        handles=_box_key(any("paper" in box for box in record["boxes"]), record.get("over", "seeds")),
        loc="outside lower center",
        ncols=3,
        fontsize="small",
    )
    return figure


def _box_key(paper: bool, over: str = "seeds") -> list:
    """The key to a box plot's marks, its runs being ``over`` (seeds, folds)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    key = [
        Line2D([], [], color=MEDIAN_COLOUR, label="median"),
        Line2D([], [], marker="^", color=MEAN_COLOUR, linestyle="none", label="mean"),
        Patch(
            facecolor="none",
            edgecolor="black",
            label=f"box: the middle half of the {over},\nwhiskers: the lowest and highest",
        ),
        Line2D(
            [],
            [],
            marker="o",
            color=SEED_COLOUR,
            alpha=0.6,
            linestyle="none",
            markersize=4,
            label=f"one {over.removesuffix('s')}",
        ),
    ]
    if paper:
        key.append(Line2D([], [], color=PAPER_COLOUR, linestyle="--", linewidth=1.6, label="the paper's figure"))
    return key


def _count(n) -> float:
    """A point's count: a run's, or the mean of a sweep setting's runs' (one
    count a seed; on a real task's test split all the same)."""
    return sum(n) / len(n) if isinstance(n, list) else n


DRAW = {
    "curve": draw_curve,
    "bars": draw_curve,
    "confusion": draw_confusion,
    "learning": draw_learning,
    "boxes": draw_boxes,
    "panels": draw_panels,
}
