"""What a run's figures are drawn from, in a form small enough to keep with
its metrics: ``RUN_DIR/test-counts.json``.

The figures of ``npcomp plot`` and of the reports (``figures.py``) need, of
the test split's per-sentence predictions (``predictions.jsonl``), only
counts, which this file holds (a few kilobytes where the predictions take
megabytes):

* sentences: ``roots``, one ``[length, gold, predicted, count]`` per
  sentence length and pair of labels over the sentences labelled at the
  root (sentence length figure, root confusion matrix); ``spans`` and
  ``heights``, one ``[value, correct, total]`` per number of words under a
  node and per node height, over the labelled nodes (Zhu's Fig. 4);
* sentence pairs: ``pairs``, one ``[length_a + length_b, n, sum gold, sum
  predicted, sum gold^2, sum predicted^2, sum gold * predicted]`` per total
  length, from which Pearson's r of any window of mean lengths follows.

Training writes the file beside ``predictions.jsonl``
(``figures.ensure_counts`` for a run that has the predictions but not the
counts).  Plain Python, importing neither NumPy nor matplotlib.
"""

from __future__ import annotations

import json
from pathlib import Path

from npcomp.runfiles.rundir import COUNTS_FILE as COUNTS, RunDirectory

FORMAT = 1


class CountsError(ValueError):
    """A counts file that cannot be read; the message names it."""


def sentence_counts(records: list, task: str) -> dict:
    """The counts of a sentence task's prediction records (``predictions.py``)."""
    roots, spans, heights = {}, {}, {}
    for record in records:
        gold, predicted = record["gold"][-1], record["predicted"][-1]
        if gold >= 0:
            key = (record["length"], gold, predicted)
            roots[key] = roots.get(key, 0) + 1
        for node_gold, node_predicted, span, height in zip(
            record["gold"], record["predicted"], record["span"], record["height"]
        ):
            if node_gold < 0:
                continue
            for table, value in ((spans, span), (heights, height)):
                bucket = table.setdefault(value, [0, 0])
                bucket[0] += node_gold == node_predicted
                bucket[1] += 1
    return {
        "format": FORMAT,
        "kind": "sentences",
        "task": task,
        "roots": [[*key, count] for key, count in sorted(roots.items())],
        "spans": [[value, *spans[value]] for value in sorted(spans)],
        "heights": [[value, *heights[value]] for value in sorted(heights)],
    }


def pair_counts(records: list, task: str) -> dict:
    """The counts of a relatedness task's prediction records."""
    sums = {}
    for record in records:
        gold, predicted = record["gold"], record["predicted"]
        row = sums.setdefault(record["length_a"] + record["length_b"], [0, 0.0, 0.0, 0.0, 0.0, 0.0])
        for index, value in enumerate((1, gold, predicted, gold * gold, predicted * predicted, gold * predicted)):
            row[index] += value
    return {"format": FORMAT, "kind": "pairs", "task": task, "pairs": [[total, *sums[total]] for total in sorted(sums)]}


def counts_of(records: list, task: str) -> dict | None:
    """The counts of prediction records of either kind; None for classified
    pairs (their records hold class numbers: no per-length figure is drawn
    from them, their confusion matrix is in metrics.json)."""
    if records and "length_a" in records[0] and "p" in records[0]:
        return None
    if records and "length_a" in records[0]:
        return pair_counts(records, task)
    return sentence_counts(records, task)


def write_counts(run_dir: str | Path | RunDirectory, counts: dict) -> Path:
    """``RUN_DIR/test-counts.json``, written whole (compact: one line)."""
    directory = run_dir if isinstance(run_dir, RunDirectory) else RunDirectory(run_dir)
    directory.write_text(COUNTS, json.dumps(counts, separators=(",", ":")) + "\n")
    return directory.file(COUNTS)


def read_counts(run_dir: str | Path) -> dict | None:
    """A run's counts, or None when it has none."""
    path = Path(run_dir) / COUNTS
    if not path.is_file():
        return None
    try:
        counts = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CountsError(f"{path}: damaged counts file ({error})") from None
    if not isinstance(counts, dict) or counts.get("kind") not in ("sentences", "pairs"):
        raise CountsError(f"{path}: damaged counts file (no sentence or pair counts)")
    return counts


# --------------------------------------------------------------------------
# reading the counts back as the figures need them
# --------------------------------------------------------------------------


def root_items(counts: dict) -> list:
    """(length, gold, predicted, count) of the labelled roots."""
    return [tuple(item) for item in counts["roots"]]


def node_buckets(counts: dict, key: str) -> dict:
    """value -> [correct, total] of the labelled nodes by ``key`` (spans, heights)."""
    return {value: [correct, total] for value, correct, total in counts[key]}


def pair_sums(counts: dict) -> list:
    """(mean length of the pair, n, sums...) per total length."""
    return [(total / 2, *rest) for total, *rest in counts["pairs"]]
