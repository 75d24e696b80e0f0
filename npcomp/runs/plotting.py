"""``plot``: the papers' figures from a run's (or a sweep's) files, nothing
retrained (``experiments/figures.py``, ``sweep_figures.py``), each written
as NAME.png, NAME.svg and NAME.json (the numbers drawn)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PlotResult:
    """The figures drawn (their names) and the files written."""

    out: Path
    figures: tuple
    files: tuple


def plot(directory, *, out, split: str = "test", overwrite: bool = False) -> PlotResult:
    """`npcomp plot RUN_DIR|SWEEP_DIR --out DIR` from Python: the figures of
    a run directory (its ``split``'s predictions, metrics.json) or a sweep
    directory (its runs by setting) into ``out``, refusing figure files
    already there unless ``overwrite``.  FigureError says what is missing."""
    from npcomp.experiments.figures import FigureError, run_figures
    from npcomp.experiments.plots import file_names, write_figures
    from npcomp.experiments.sweep_figures import is_sweep, sweep_figures
    from npcomp.configuration.checks import check_output_directory

    directory = Path(directory)
    check_output_directory("out", out)  # refused before anything is read
    if not directory.is_dir():
        raise FigureError(f"{directory}: no such directory (a run directory or a sweep directory)")
    notes = []
    if is_sweep(directory):
        if split != "test":
            from npcomp.errors import ConfigError

            raise ConfigError("split", "a sweep's figures are drawn from its runs' test predictions (or their counts)")
        figures, notes = sweep_figures(directory)
    elif (directory / "metrics.json").is_file():
        figures = run_figures(directory, split)
    else:
        raise FigureError(f"{directory}: neither a run directory (no metrics.json) nor a sweep directory (no runs/)")
    out = Path(out)
    existing = [name for name in file_names(figures) if (out / name).exists()]
    if existing and not overwrite:
        listed = ", ".join(existing[:6]) + (f" and {len(existing) - 6} more" if len(existing) > 6 else "")
        raise FigureError(
            f"{out} already holds figure files ({listed}); nothing was written. "
            "Ways on: --overwrite replaces them, or another --out."
        )
    for note in notes:
        print(f"npcomp plot: {note}", file=sys.stderr)
    written = write_figures(figures, out)
    return PlotResult(out, tuple(figure["figure"] for figure in figures), tuple(Path(path) for path in written))
