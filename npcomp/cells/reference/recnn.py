r"""Recursive neural network, node by node (Goller & Kuechler 1996; Socher et
al. 2011), as written in Le & Zuidema 2015, Sec. 2.2, eqs. 2-3.

Column orientation (W_1, W_2 are d x d, the transposes of the code's row
blocks of ``W``):

    p = g( W_1 x + W_2 y + b )                                       (2), (3)

for a node with left child x and right child y (a missing child of a unary
node contributes 0); g in {tanh, sigmoid, softsign}.  A leaf is not
composed: its vector is its word's.  Untied (L&Z Sec. 4 read literally): a
child that is a leaf is read through the d x d_w leaf matrices W_1, W_2 of
``W_leaf``, an inner child through those of ``W``; the leaves' own output
rows are 0 (their vectors live in d_w dimensions).

``forward(tree, x, params, activation="tanh", untied=False)`` returns, one
row per node in tree order: ``z`` (the pre-activation W_1 x + W_2 y + b)
and ``p`` (NaN at the leaves), and ``out`` (n, d): p at inner nodes, the
word vector at tied leaves, 0 at untied leaves.
"""
from __future__ import annotations

import numpy as np

from ...formats import Tree
from .functions import activation as activation_function, undefined

OPTIONS = ("activation", "untied")


def paper_parameters(params: dict) -> dict:
    """``W_1``, ``W_2`` (d, d), ``b``; with ``W_leaf``: ``W_leaf,1``,
    ``W_leaf,2`` (d, d_w)."""
    W = np.asarray(params["W"])
    d = W.shape[1]
    out = {"W_1": W[:d].T, "W_2": W[d:].T, "b": np.asarray(params["b"])}
    if "W_leaf" in params:
        W_leaf = np.asarray(params["W_leaf"])
        d_w = W_leaf.shape[0] // 2
        out["W_leaf,1"], out["W_leaf,2"] = W_leaf[:d_w].T, W_leaf[d_w:].T
    return out


def forward(tree: Tree, x: np.ndarray, params: dict, activation: str = "tanh",
            untied: bool = False) -> dict:
    """Eqs. 2-3 for one binary tree (unary nodes allowed).  x: (T, d_x), row t
    the vector of token t; params: the cell's ``W``, ``b`` (and ``W_leaf``
    untied)."""
    g = activation_function(activation).g
    P = paper_parameters(params)
    d = P["b"].shape[0]
    inner = (P["W_1"], P["W_2"])
    leaf = (P["W_leaf,1"], P["W_leaf,2"]) if untied else inner
    n = tree.n_nodes
    kids = tree.children()
    vector = [None] * n                  # what a node passes to its parent
    z, p = undefined(n, d), undefined(n, d)
    out = np.zeros((n, d))
    for j in range(n):                   # children before parents
        if not kids[j]:
            vector[j] = x[tree.token_index[j]]
            if not untied:
                out[j] = vector[j]
            continue
        z[j] = P["b"].copy()
        for slot, child in enumerate(kids[j]):       # slot 0: x (left), 1: y (right)
            matrices = leaf if not kids[child] else inner
            z[j] += matrices[slot] @ vector[child]   # W_1 x + W_2 y + b        (2)
        p[j] = g(z[j])                               # p = g(...)               (3)
        vector[j] = out[j] = p[j]
    return {"z": z, "p": p, "out": out}
