"""A model's outputs and metrics on an encoded split: the per-tree outputs
(``predict_split``), the pairs' relatedness (``predict_relatedness``),
accuracy, macro-F1 and the roots' confusion matrix (``evaluate``; with an
ordinal head also the ranking loss and the mean absolute error), Pearson's r,
Spearman's rho and the mean squared error (``relatedness_metrics``), the
metric model selection maximises, and the metrics as a line of text.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.datasets import PAIR_CLASS_TASKS, PAIR_TASKS
from npcomp.models import PairModel, TreeModel
from .finite_outputs import naming_the_sentence, require_finite_outputs
from npcomp.params import Parameters
from .encoding import EncodedPairs, EncodedSplit
from .thread_pools import pinned_thread_pools


def selection_metric(task: str) -> str:
    """The dev metric model selection maximises: Pearson's r of relatedness,
    the accuracy of classified pairs, the root accuracy of sentences."""
    if task in PAIR_CLASS_TASKS:
        return "accuracy"
    return "pearson" if task in PAIR_TASKS else "root_acc"


@pinned_thread_pools()
def predict_split(model: TreeModel, params: Parameters, split: EncodedSplit, batch_size: int = 512):
    """Per tree: the head's outputs at its nodes (class probabilities, or the
    ordinal head's cumulative ones), in the tree's own node order."""
    results = []
    for start in range(0, len(split), batch_size):
        indices = range(start, min(start + batch_size, len(split)))
        forest = split.forest(indices)
        with naming_the_sentence(split.trees[start : start + len(indices)]):
            outputs = model.outputs(params, forest)
        require_finite_outputs(outputs, forest.tree, split.trees, start)
        for position in range(len(indices)):
            nodes = np.flatnonzero(forest.tree == position)
            in_tree_order = np.empty((nodes.shape[0], outputs.shape[1]), dtype=outputs.dtype)
            in_tree_order[forest.origin[nodes]] = outputs[nodes]
            results.append(in_tree_order)
    return results


@pinned_thread_pools()
def predict_relatedness(
    model: PairModel, params: Parameters, split: EncodedPairs, batch_size: int = 512, helpers=None
) -> np.ndarray:
    """(m,) predicted relatedness of every pair (the class number, for the
    pair classifier), ``batch_size`` pairs a forest (every other forest on
    ``helpers`` when given)."""
    return np.concatenate(
        _over_batches(
            lambda start, stop: model.head.decode(_pair_outputs(model, params, split, start, stop)),
            len(split),
            batch_size,
            helpers,
        )
    )


def pair_outputs(
    model: PairModel, params: Parameters, split: EncodedPairs, batch_size: int = 512, helpers=None
) -> np.ndarray:
    """(m, K) the pair head's distribution p_hat of every pair (over the
    ratings, or the classes)."""
    return np.concatenate(
        _over_batches(
            lambda start, stop: _pair_outputs(model, params, split, start, stop), len(split), batch_size, helpers
        )
    )


def _pair_outputs(model, params, split: EncodedPairs, start: int, stop: int) -> np.ndarray:
    """(stop - start, K) p_hat of the pairs start..stop-1, checked finite."""
    indices = range(start, stop)
    with naming_the_sentence(split.forest_trees(indices)):
        out = model.outputs(params, split.batch(indices))
    require_finite_outputs(out, np.arange(len(indices)), split.left.trees, start)
    return out


def batch_bounds(total: int, batch_size: int) -> list:
    """[(start, stop)] of the forests an evaluation cuts ``total`` examples
    into: contiguous, of nearly equal sizes, at most ``batch_size`` each,
    and an even number of them when more than one (so that two threads
    share them evenly, whatever the thread count: the forests, and so the
    numbers, are the same at every count)."""
    count = max(-(-total // max(batch_size, 1)), 1)
    count += count % 2 if count > 1 else 0
    cuts = [total * k // count for k in range(count + 1)]
    return [(start, stop) for start, stop in zip(cuts[:-1], cuts[1:]) if stop > start]


def _over_batches(function, total: int, batch_size: int, helpers=None) -> list:
    """[function(start, stop) for each forest of ``batch_bounds``], every
    other forest on ``helpers`` (an executor) when given; results in order."""
    bounds = batch_bounds(total, batch_size)
    if helpers is None:
        return [function(*bound) for bound in bounds]
    futures = {bound: helpers.submit(function, *bound) for bound in bounds[1::2]}
    results = {bound: function(*bound) for bound in bounds[0::2]}
    results.update({bound: future.result() for bound, future in futures.items()})
    return [results[bound] for bound in bounds]


def pair_class_metrics(predicted: np.ndarray, gold: np.ndarray, n_classes: int, class_names=None) -> dict:
    """Of classified pairs: ``accuracy`` and ``macro_f1`` (percent), the
    ``confusion`` matrix (``[gold][predicted]`` counts, rows and columns in
    the classes' order) with the classes' names (``classes``: the names, or
    the numbers as text), and the number of ``pairs``."""
    gold = np.asarray(gold, dtype=np.int64)
    confusion = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(confusion, (gold, np.asarray(predicted, dtype=np.int64)), 1)
    names = list(class_names) if class_names is not None else [str(k) for k in range(n_classes)]
    return {
        "accuracy": float(100.0 * np.trace(confusion) / max(confusion.sum(), 1)),
        "macro_f1": macro_f1(np.diag(confusion), confusion.sum(axis=1), confusion.sum(axis=0)),
        "confusion": confusion.tolist(),
        "classes": names,
        "pairs": int(gold.size),
    }


def relatedness_metrics(predicted: np.ndarray, gold: np.ndarray) -> dict:
    """Pearson's r, Spearman's rho and the mean squared error (Tai Table 3)."""
    from scipy.stats import pearsonr, spearmanr

    predicted = np.asarray(predicted, dtype=np.float64)
    gold = np.asarray(gold, dtype=np.float64)
    constant = predicted.size < 2 or np.ptp(predicted) == 0.0
    return {
        "pearson": 0.0 if constant else float(pearsonr(predicted, gold)[0]),
        "spearman": 0.0 if constant else float(spearmanr(predicted, gold)[0]),
        "mse": float(np.mean((predicted - gold) ** 2)),
        "pairs": int(gold.size),
    }


# the most classes whose confusion matrix a metrics record holds: a C x C
# matrix past it is more numbers than anyone reads (and, at every dev
# evaluation, more than metrics.json should carry); the per-class counts
# behind macro-F1 need no matrix
CONFUSION_LIMIT = 50


@pinned_thread_pools()
def evaluate(
    model, params: Parameters, split, batch_size: int = 512, helpers=None, classes: list | None = None
) -> dict:
    """Metrics of a split: ``relatedness_metrics`` for sentence pairs (on
    the scale of their own scores), ``pair_class_metrics`` for classified
    ones; for trees, root and all-node accuracy
    (percent) over labelled nodes, SST-style, the roots' macro-F1 (percent,
    ``macro_f1``), the roots' confusion matrix
    (``root_confusion[gold][predicted]``, counts; null past
    ``CONFUSION_LIMIT`` classes), ``classes``, the class names in the
    matrix's order (given, else the class numbers), and with an ordinal
    head ``ranking_loss``, the mean |y - r| of the decoded class y and the
    gold class r at the roots (Irsoy & Cardie Sec. 5, after Yessenalina &
    Cardie), and ``mae``, the mean absolute error of the expected class
    sum_k P(y > k).

    Forests of at most ``batch_size`` sentences (pairs), an even number of
    them (``batch_bounds``); with ``helpers`` (an executor) every other
    forest is evaluated on a helper thread meanwhile."""
    if isinstance(split, EncodedPairs) and model.head.classifies:
        predicted = predict_relatedness(model, params, split, batch_size, helpers)
        return pair_class_metrics(
            predicted, split.labels, model.n_classes, split.class_names if split.class_names is not None else classes
        )
    if isinstance(split, EncodedPairs):  # on the scale of the pairs' own scores
        predicted = predict_relatedness(model, params, split, batch_size, helpers)
        return relatedness_metrics(split.on_their_scale(predicted), split.on_their_scale(split.scores))
    n_classes = model.n_classes
    ordinal = model.head_name == "ordinal"
    with_matrix = n_classes <= CONFUSION_LIMIT

    def count(start: int, stop: int):
        indices = range(start, stop)
        forest = split.forest(indices)
        with naming_the_sentence(split.trees[start : start + len(indices)]):
            outputs = model.outputs(params, forest)
        require_finite_outputs(outputs, forest.tree, split.trees, start)
        return _forest_counts(forest, outputs, model.head.decode(outputs), n_classes, with_matrix, ordinal)

    counts = _over_batches(count, len(split), batch_size, helpers)
    right, gold, chosen = sum((c[1] for c in counts), np.zeros((3, n_classes), np.int64))
    all_correct, all_total = (sum(c[k] for c in counts) for k in (2, 3))
    metrics = {
        "root_acc": float(100.0 * right.sum() / max(gold.sum(), 1)),
        "all_acc": 100.0 * all_correct / max(all_total, 1),
        "macro_f1": macro_f1(right, gold, chosen),
        "sentences": len(split),
        "labelled_nodes": all_total,
        "root_confusion": (
            sum((c[0] for c in counts), np.zeros((n_classes, n_classes), np.int64)).tolist() if with_matrix else None
        ),
        "classes": _class_list(classes, n_classes),
    }
    if ordinal:
        roots = max(int(gold.sum()), 1)
        metrics.update(ranking_loss=sum(c[5] for c in counts) / roots, mae=sum(c[4] for c in counts) / roots)
    return metrics


def _forest_counts(
    forest, outputs: np.ndarray, predicted: np.ndarray, n_classes: int, with_matrix: bool, ordinal: bool
) -> tuple:
    """One forest's counts for ``evaluate``: the roots' confusion matrix
    (None without ``with_matrix``), per class the right, gold and predicted
    roots, the nodes right and labelled, the ordinal head's summed error of
    the expected class and summed |y - r| at the roots."""
    labelled = forest.label >= 0
    roots = forest.root[forest.label[forest.root] >= 0]
    gold_roots, predicted_roots = forest.label[roots], predicted[roots]
    confusion = None
    if with_matrix:
        confusion = np.zeros((n_classes, n_classes), dtype=np.int64)
        np.add.at(confusion, (gold_roots, predicted_roots), 1)
    # per class: right at the roots, gold roots, predicted roots (macro-F1's counts)
    per_class = np.stack(
        [
            np.bincount(gold_roots[gold_roots == predicted_roots], minlength=n_classes),
            np.bincount(gold_roots, minlength=n_classes),
            np.bincount(predicted_roots, minlength=n_classes),
        ]
    )
    # the ordinal head's expected class at the roots, sum_k P(y > k)
    expected_error = float(np.abs(outputs[roots].sum(axis=1) - gold_roots).sum()) if ordinal else 0.0
    distance = int(np.abs(predicted_roots.astype(np.int64) - gold_roots).sum())
    return (
        confusion,
        per_class,
        int(np.sum(predicted[labelled] == forest.label[labelled])),
        int(labelled.sum()),
        expected_error,
        distance,
    )


def _class_list(classes: list | None, n_classes: int) -> list:
    """The class names of a metrics record, by class number: ``classes``, or the numbers."""
    if classes is None:
        return list(range(n_classes))
    if len(classes) != n_classes:
        raise ValueError(f"{len(classes)} class names for a head of {n_classes} classes")
    return list(classes)


def macro_f1(right: np.ndarray, gold: np.ndarray, predicted: np.ndarray) -> float:
    """The roots' macro-averaged F1 (percent) from the counts per class (true
    positives, gold and predicted totals): the mean over the classes that
    occur, as gold or predicted labels, of 2 TP / (2 TP + FP + FN); 0 without any."""
    occurring = np.asarray(gold + predicted, dtype=np.float64)  # 2 TP + FP + FN
    if not occurring.any():
        return 0.0
    f1 = 2.0 * np.asarray(right, dtype=np.float64)[occurring > 0] / occurring[occurring > 0]
    return float(100.0 * f1.mean())


def format_metrics(metrics: dict, short: bool = False) -> str:
    """``root 45.10  all 80.20``, ``pearson 0.8512  spearman 0.7901  mse 0.2830``
    or ``accuracy 81.50  macro-F1 79.10``."""
    if "accuracy" in metrics:
        text = f"accuracy {metrics['accuracy']:.2f}"
        return text if short else f"{text}  macro-F1 {metrics['macro_f1']:.2f}"
    if "pearson" in metrics:
        text = f"pearson {metrics['pearson']:.4f}"
        return text if short else (f"{text}  spearman {metrics['spearman']:.4f}  mse {metrics['mse']:.4f}")
    text = f"root {metrics['root_acc']:.2f}"
    if short:
        return text
    text += f"  all {metrics['all_acc']:.2f}"
    if "macro_f1" in metrics:
        text += f"  macro-F1 {metrics['macro_f1']:.2f}"
    if "ranking_loss" in metrics:
        text += f"  ranking loss {metrics['ranking_loss']:.4f}  mae {metrics['mae']:.4f}"
    return text
