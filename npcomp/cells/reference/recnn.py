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

The backward, node by node from the root down:

    delta   = eps_h * g'(p)                                   reverses (3)
    eps_x   = W_1^T delta,  eps_y = W_2^T delta               reverses (2): what the
              node sends its children (E4: through W_leaf,k to an untied leaf child,
              whose word it reaches; E3: nothing to a missing child)
    eps_h(child) += eps_x or eps_y

``backward(tree, x, params, d_h, activation="tanh", untied=False)``, d_h
(n, d) the head's dJ/dh per node in tree order, returns ``eps_h`` (NaN at
untied leaves), ``delta``, ``eps_x``, ``eps_y`` (at the parents whose left,
right child is inner, or any child when tied), ``grads`` and ``d_x``.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import activation as activation_function, derivative, undefined

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


def forward(tree: Tree, x: np.ndarray, params: dict, activation: str = "tanh", untied: bool = False) -> dict:
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
    vector = [None] * n  # what a node passes to its parent
    z, p = undefined(n, d), undefined(n, d)
    out = np.zeros((n, d))
    for j in range(n):  # children before parents
        if not kids[j]:
            vector[j] = x[tree.token_index[j]]
            if not untied:
                out[j] = vector[j]
            continue
        z[j] = P["b"].copy()
        for slot, child in enumerate(kids[j]):  # slot 0: x (left), 1: y (right)
            matrices = leaf if not kids[child] else inner
            z[j] += matrices[slot] @ vector[child]  # W_1 x + W_2 y + b        (2)
        p[j] = g(z[j])  # p = g(...)               (3)
        vector[j] = out[j] = p[j]
    return {"z": z, "p": p, "out": out}


def backward(
    tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, activation: str = "tanh", untied: bool = False
) -> dict:
    """Eqs. 2-3 reversed node by node, parents first (module docstring)."""
    g_prime = derivative(activation)
    P = paper_parameters(params)
    q = forward(tree, x, params, activation, untied)
    d = P["b"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    G = {name: np.zeros_like(value) for name, value in P.items()}
    eps_h = np.array(d_h, dtype=np.float64)
    delta = undefined(n, d)
    sent = {"eps_x": undefined(n, d), "eps_y": undefined(n, d)}
    d_word = np.zeros(x.shape)
    for j in range(n - 1, -1, -1):  # parents first
        if not kids[j]:
            if not untied:  # tied: a leaf's h is its word
                d_word[tree.token_index[j]] += eps_h[j]
            continue
        delta[j] = eps_h[j] * g_prime(q["p"][j])  # reverses (3)
        G["b"] += delta[j]
        for slot, child in enumerate(kids[j]):
            leaf = untied and not kids[child]  # E4: the leaf matrices
            name = f"W_leaf,{slot + 1}" if leaf else f"W_{slot + 1}"
            vector = x[tree.token_index[child]] if not kids[child] else q["p"][child]
            share = P[name].T @ delta[j]  # reverses (2)
            G[name] += np.outer(delta[j], vector)
            if leaf:
                d_word[tree.token_index[child]] += share
            else:
                sent[("eps_x", "eps_y")[slot]][j] = share
                eps_h[child] += share
    if untied:
        eps_h[[not k for k in kids]] = np.nan
    grads = {"W": np.vstack([G["W_1"].T, G["W_2"].T]), "b": G["b"]}
    if untied:
        grads["W_leaf"] = np.vstack([G["W_leaf,1"].T, G["W_leaf,2"].T])
    return {"eps_h": eps_h, "delta": delta, **sent, "grads": grads, "d_x": d_word}
