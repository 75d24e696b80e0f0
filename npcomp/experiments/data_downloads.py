"""Which ``npcomp download`` each paper table needs, and which tables read
each data set: from the tables' rows (their tasks, and the vector files their
settings name or their task takes by default).

A row on the SST needs ``sst``; on SICK, ``sick`` and, unless it names other
vectors, the GloVe 840B vectors that are SICK's default (``glove.840B``); a
row naming a vector file needs the data set that installs that file, and the
data sets whose words that file keeps (GloVe 6B: the SST's and SICK's).  Rows
the report does not train (another paper's model, no data, measured by
another report) need nothing.  A table on a user's copy of a corpus
(irsoy-mpqa) needs that copy too, which no download makes.
"""
from __future__ import annotations

from pathlib import Path

from npcomp.data.downloads.download import installed
from npcomp.data.downloads.catalogue import ALL, DATASETS

__all__ = ["TASK_DOWNLOADS", "dataset_tables", "missing_downloads", "table_downloads",
           "vectors_dataset"]

# the data sets a task reads, beside its vectors
TASK_DOWNLOADS = {"sst5": ("sst",), "sst2": ("sst",), "sick": ("sick",)}
# the vectors a task takes when a row names none (training.defaults.SICK)
TASK_DEFAULT_VECTORS = {"sick": "glove.840B"}


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
