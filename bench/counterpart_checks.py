"""What the checks of the counterparts against npcomp share
(test_torch_cells.py, test_dynet_cells.py): random labelled trees from
``gradcheck.trees``, and the line a check prints when run as a script."""

from __future__ import annotations

import numpy as np

from counterparts import worst_gradient
from gradcheck.trees import random_binary_tree, random_dependency_trees, random_forest_trees
from npcomp.data.readers.formats import chain_tree


def random_trees(kind: str, rng: np.random.Generator) -> list:
    """Trees of ``kind``: "binary" (five, unary nodes among them),
    "dependency" (four) or "chain" (six sentences of 1 to 12 words)."""
    if kind == "binary":
        trees = random_forest_trees(rng, n_trees=4, unary_rate=0.3)
        return trees + [random_binary_tree(9, rng, unary_rate=0.3)]
    if kind == "dependency":
        return random_dependency_trees(rng, n_trees=4)
    lengths = [1, 2, 5, 7, 7, 12]
    return [chain_tree([f"w{k}" for k in rng.integers(0, 10, size=n)], rng.integers(0, 5, size=n)) for n in lengths]


def partly_labelled(trees: list, rng: np.random.Generator) -> list:
    """Each tree's labels kept with probability 0.7, the root's always."""
    labels = []
    for tree in trees:
        label = tree.label.copy()
        label[rng.random(tree.n_nodes) >= 0.7] = -1
        label[tree.root] = rng.integers(0, 5)
        labels.append(label.astype(np.int32))
    return labels


def report(outcomes, width: int) -> int:
    """Prints the ``check_line`` of each (ok, label, result) of ``outcomes``
    as it comes; the exit status: 1 if any check failed, else 0."""
    failed = 0
    for ok, label, result in outcomes:
        failed += not ok
        print(check_line(ok, label, result, width), flush=True)
    return 1 if failed else 0


def check_line(ok: bool, label: str, result: dict, width: int) -> str:
    """A check's line: ok or FAIL, what was compared (``label``, padded to
    ``width``), npcomp's loss, and how far the counterpart's loss and its
    farthest gradient are from npcomp's (a ``comparison`` ``result``)."""
    worst_name, worst = worst_gradient(result)
    return (
        f"{'ok  ' if ok else 'FAIL'} {label:<{width}} loss {result['loss']:.6f}, relative "
        f"difference {result['loss_difference']:.1e}; gradients within {worst:.1e} "
        f"({worst_name})"
    )
