r"""Recursive Neural Tensor Network, node by node (Socher et al. 2013), as
restated by Nayebi & Blundell, eq. 3.

For a node with children c_1 (left) and c_2 (right), c = [c_1; c_2] (2d),
column orientation (W is d x 2d, the transpose of the code's ``W``):

    p_k = f( c^T V^[k] c + (W c)_k + b_k ),   k = 1..d,   f = tanh     (3)

V^[k] (2d x 2d) is slice k of V^[1:d] (the code's ``V[:, :, k]``); b is
Socher's bias.  A missing child of a unary node is 0.  A leaf's state is its
word vector, or tanh of it with ``leaf_activation="tanh"``.

``forward(tree, x, params, leaf_activation="identity")`` returns, one row
per node in tree order: ``c`` (2d, NaN at the leaves), ``p`` (d, the node's
state: the leaf's (activated) word vector at a leaf) and ``out`` (= p).

The backward, node by node from the root down:

    delta_k = eps_h_k * (1 - p_k^2)                            reverses f of (3)
    eps_c   = sum_k delta_k (V^[k] + V^[k]T) c + W^T delta      reverses (3)
    eps_h(c_1) += eps_c[0:d],  eps_h(c_2) += eps_c[d:2d]       (R2: nothing to a
                                                                missing child)

``backward(tree, x, params, d_h, leaf_activation="identity")``, d_h (n, d)
the head's dJ/dh per node in tree order, returns ``eps_h``, ``delta`` and
``eps_c`` (NaN at the leaves, and in a missing child's half), ``grads`` and
``d_x`` (a leaf's eps_h, times 1 - h^2 under the tanh leaf activation).
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import undefined

OPTIONS = ("leaf_activation",)
LEAF_ACTIVATIONS = {"identity": lambda z: z, "tanh": np.tanh}


def paper_parameters(params: dict) -> dict:
    """``V^[k]`` (2d, 2d) for k = 1..d, ``W`` (d, 2d), ``b`` (d,)."""
    V = np.asarray(params["V"])
    out = {f"V^[{k + 1}]": V[:, :, k] for k in range(V.shape[2])}
    out["W"] = np.asarray(params["W"]).T
    out["b"] = np.asarray(params["b"])
    return out


def forward(tree: Tree, x: np.ndarray, params: dict, leaf_activation: str = "identity") -> dict:
    """Eq. 3 for one binary tree (unary nodes allowed).  x: (T, d), row t the
    vector of token t; params: the cell's ``V``, ``W``, ``b``."""
    leaf = LEAF_ACTIVATIONS[leaf_activation]
    P = paper_parameters(params)
    d = P["b"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    p, c_all = np.zeros((n, d)), undefined(n, 2 * d)
    for j in range(n):  # children before parents
        if not kids[j]:
            p[j] = leaf(x[tree.token_index[j]])
            continue
        c_1 = p[kids[j][0]]
        c_2 = p[kids[j][1]] if len(kids[j]) == 2 else np.zeros(d)
        c = np.concatenate([c_1, c_2])
        for k in range(d):
            p[j, k] = np.tanh(c @ P[f"V^[{k + 1}]"] @ c + P["W"][k] @ c + P["b"][k])  # (3)
        c_all[j] = c
    return {"c": c_all, "p": p, "out": p.copy()}


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, leaf_activation: str = "identity") -> dict:
    """Eq. 3 reversed node by node, parents first (module docstring)."""
    P = paper_parameters(params)
    q = forward(tree, x, params, leaf_activation)
    d = P["b"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    G = {name: np.zeros_like(value) for name, value in P.items()}
    eps_h = np.array(d_h, dtype=np.float64)
    delta, eps_c = undefined(n, d), undefined(n, 2 * d)
    d_word = np.zeros(x.shape)
    for j in range(n - 1, -1, -1):  # parents first
        p = q["p"][j]
        if not kids[j]:  # h = x, or tanh(x)
            slope = 1 - p * p if leaf_activation == "tanh" else 1.0
            d_word[tree.token_index[j]] += eps_h[j] * slope
            continue
        c = q["c"][j]
        delta[j] = eps_h[j] * (1 - p * p)  # f = tanh
        share = P["W"].T @ delta[j]  # (W c)_k
        for k in range(d):
            V = P[f"V^[{k + 1}]"]
            share += delta[j, k] * (V + V.T) @ c  # c^T V^[k] c
            G[f"V^[{k + 1}]"] += delta[j, k] * np.outer(c, c)
        G["W"] += np.outer(delta[j], c)
        G["b"] += delta[j]
        for slot, child in enumerate(kids[j]):  # R2: a missing child gets none
            half = share[slot * d : (slot + 1) * d]
            eps_c[j, slot * d : (slot + 1) * d] = half
            eps_h[child] += half
    V = np.stack([G[f"V^[{k + 1}]"] for k in range(d)], axis=2)
    return {
        "eps_h": eps_h,
        "delta": delta,
        "eps_c": eps_c,
        "grads": {"V": V, "W": G["W"].T, "b": G["b"]},
        "d_x": d_word,
    }
