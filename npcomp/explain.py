"""What ``npcomp explain`` and ``npcomp predict --html`` show of a tree:
its nodes with their predictions, and for explain every forward quantity
and backward error term of the cell, with the finite-difference check of
each named parameter's gradient.

The document these build is plain JSON-ready data (``--json`` prints it;
``explain_page.render_page`` draws it):

    {"model", "paper", "task", "classes": [class names],
     "sentences": [{"tokens", "nodes": [node record per tree node, children
                    before parents, root last], "forward": [term record],
                    "backward": [term record]}],
     "loss", "parameters": [parameter record], "tolerance"}

A node record: ``id`` (its index in the tree), ``children`` (ids),
``word`` (the token it reads or None), ``position`` (that token's index
in ``tokens``, None where it reads none), ``span`` (the words below it,
itself included), ``label`` (gold or None), ``predicted``,
``probabilities`` (the head's outputs: class probabilities, or the ordinal
head's P(label > k)), ``probability`` (the predicted class's, None for the
ordinal head) and, from explain, ``loss`` (its term of the objective, None
where unlabelled).
"""
from __future__ import annotations

import numpy as np

from .formats import Tree


def _spans(tree: Tree) -> list:
    """Per node, the token positions below it (its own word included), in order."""
    below = [[] for _ in range(tree.n_nodes)]
    for node in range(tree.n_nodes):         # children before parents
        if tree.token_index[node] >= 0:
            below[node].append(int(tree.token_index[node]))
        parent = tree.parent[node]
        if parent >= 0:
            below[parent].extend(below[node])
    return [sorted(positions) for positions in below]


def node_records(tree: Tree, outputs: np.ndarray, predicted: np.ndarray,
                 softmax: bool = True) -> list:
    """One record per node of ``tree`` (module docstring) from the head's
    ``outputs`` (n, width) and ``predicted`` classes (n,), in tree order."""
    children = tree.children()
    records = []
    for node, positions in enumerate(_spans(tree)):
        token = int(tree.token_index[node])
        label = int(tree.label[node])
        choice = int(predicted[node])
        records.append({
            "id": node,
            "children": [int(kid) for kid in children[node]],
            "word": tree.tokens[token] if token >= 0 else None,
            "position": token if token >= 0 else None,
            "span": " ".join(tree.tokens[position] for position in positions),
            "label": label if label >= 0 else None,
            "predicted": choice,
            "probabilities": [round(float(p), 6) for p in outputs[node]],
            "probability": round(float(outputs[node, choice]), 6) if softmax else None,
        })
    return records
