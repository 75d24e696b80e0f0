"""Which ``npcomp download`` each paper table needs, and which tables read
each data set: from the tables' rows (their tasks, and the vector files their
settings name or their task takes by default).

A row on the SST needs ``sst``; on SICK (relatedness or entailment),
``sick``, its tree layout (``sick-trees``) and, unless it names other
vectors, the GloVe 840B vectors that are SICK's default (``glove.840B``); a
row naming a vector file needs the data set that installs that file, and the
data sets whose words that file keeps (GloVe 6B: the SST's and SICK's).  Rows
the report does not train (another paper's model, no data, measured by
another report) need nothing.  A table on a user's copy of a corpus
(irsoy-mpqa) needs that copy too, which no download makes.

How long the missing downloads take (``download_seconds``) is estimated,
not measured: the bytes each data set fetches (the catalogue's sizes) at
an assumed ``ASSUMED_RATE`` of 10 MB/s (an 80 Mbit/s line; Stanford's and
the SemEval servers often give less), plus, for the data sets made here,
their making at the rate ``MAKE_SECONDS`` gives (SICK's trees: the parse
extra's spaCy pipeline at about 200 sentences a second on one core of a
2-core AMD EPYC, measured).
"""

from __future__ import annotations

from pathlib import Path

from npcomp.data.downloads.download import installed
from npcomp.data.downloads.catalogue import ALL, DATASETS

__all__ = [
    "ASSUMED_RATE",
    "MAKE_SECONDS",
    "TASK_DOWNLOADS",
    "dataset_tables",
    "download_seconds",
    "downloads_line",
    "missing_downloads",
    "table_downloads",
    "vectors_dataset",
]

# the data sets a task reads, beside its vectors
TASK_DOWNLOADS = {
    "sst5": ("sst",),
    "sst2": ("sst",),
    "sick": ("sick", "sick-trees"),
    "sick-entailment": ("sick", "sick-trees"),
}
# bytes a second a download is assumed to run at (module docstring)
ASSUMED_RATE = 10e6
# seconds a data set made here takes to make (module docstring): SICK's
# 19,854 sentences parsed at about 200 a second
MAKE_SECONDS = {"sick-trees": 19_854 / 200}
# the vectors a task takes when a row names none (training.defaults.SICK)
TASK_DEFAULT_VECTORS = {"sick": "glove.840B", "sick-entailment": "glove.840B"}


def vectors_dataset(file_name: str) -> str | None:
    """The data set whose download installs the vector file ``file_name``
    (filtered or ``--full``), or None (random vectors, a user's file)."""
    for name, entry in DATASETS.items():
        for archive in entry.archives:
            for member in archive.members:
                names = {Path(member.target).name}
                if member.vectors is not None:
                    names.add(Path(member.vectors.full_target).name)
                if file_name in names:
                    return name
    return None


def _row_downloads(row) -> set:
    needs = set()
    for options in row.settings().values():
        needs.update(TASK_DOWNLOADS.get(row.task, ()))
        vectors = options.get("vectors")
        if vectors is None:
            default = TASK_DEFAULT_VECTORS.get(row.task)
            if default:
                needs.add(default)
        elif vectors_dataset(vectors):
            needs.add(vectors_dataset(vectors))
    return needs


def table_downloads(table, rows=None) -> tuple:
    """The data sets ``table``'s trained rows (or only ``rows``, by name)
    read, in the order ``npcomp download all`` installs them."""
    needs = set()
    for row in table.rows:
        if rows is None or row.name in rows:
            needs |= _row_downloads(row)
    # a filtered vector file is made from the words of the data sets it needs
    needs |= {first for name in needs for first in DATASETS[name].needs}
    return tuple(name for name in ALL if name in needs)


def dataset_tables(tables) -> dict:
    """{data set: the names of the tables that read it}, every data set listed."""
    users = {name: [] for name in ALL}
    for table in tables:
        for name in table_downloads(table):
            users[name].append(table.name)
    return users


def missing_downloads(table, data_dir: str | Path, rows=None) -> tuple:
    """The data sets ``table`` needs that are not installed in ``data_dir``."""
    return tuple(name for name in table_downloads(table, rows) if not installed(name, data_dir))


def download_seconds(names) -> float:
    """About how long ``npcomp download NAMES`` takes: the bytes fetched at
    ``ASSUMED_RATE``, and the making of those made here."""
    return sum(DATASETS[name].fetch_size / ASSUMED_RATE + MAKE_SECONDS.get(name, 0.0) for name in names)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def downloads_line(table, data_dir: str | Path) -> str:
    """``npcomp reproduce --list``'s line of the data ``table`` reads: the
    downloads it needs and, of them, those missing in ``data_dir`` with the
    command that installs them, the bytes it fetches and about how long it
    takes."""
    needs = table_downloads(table)
    if not needs:
        return "  data: none to download" + (" (a copy of its own corpus: see below)" if table.own_data else "")
    missing = missing_downloads(table, data_dir)
    if not missing:
        return f"  data: {', '.join(needs)} (installed in {data_dir})"
    fetch = sum(DATASETS[name].fetch_size for name in missing)
    made = [name for name in missing if name in MAKE_SECONDS]
    return (
        f"  data: {', '.join(needs)}; missing in {data_dir}: `npcomp download "
        f"{' '.join(missing)}` (about {fetch / 1e6:,.0f} MB to fetch"
        + (f" and {', '.join(made)} to make" if made else "")
        + f": about {_duration(download_seconds(missing))} at an assumed "
        f"{ASSUMED_RATE / 1e6:g} MB/s)"
    )
