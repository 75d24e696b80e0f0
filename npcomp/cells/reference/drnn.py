r"""Deep recursive neural network, node by node (Irsoy & Cardie 2014).

Column orientation (each matrix the transpose of the code's block); layers
i = 1..L, f the ``activation``:

    h^(1) = x                                                at a leaf     (D1)
    h^(1) = f( W_L^(1) h^(1)_l + W_R^(1) h^(1)_r + b^(1) )   (a leaf child read
            through W_L^(1)x, W_R^(1)x)                                     (D1)
    h^(i) = f( W_L^(i) h^(i)_l + W_R^(i) h^(i)_r + V^(i) h^(i-1) + b^(i) )  (D2)
            (a leaf: no children; at i = 2 its x through V^(2)x)

``forward(tree, x, params, layers=3, activation="relu")`` returns
``h^(1)`` (NaN at the leaves) .. ``h^(L)`` per node in tree order, and
``out`` = h^(L).

The backward, node by node from the root down, layers from the top:

    delta^(i)   = eps^(i) * f'(h^(i))                            reverses f
    eps^(i)(child_k) += W_k^(i)T delta^(i)   (layer 1, leaf child: to x through W_k^(1)x)
    eps^(i-1)   += V^(i)T delta^(i)          (i = 2 at a leaf: to x through V^(2)x)

``backward(tree, x, params, d_h, layers=3, activation="relu")`` returns
``eps^(i)``, ``delta^(i)`` (the top layer's eps as ``eps_h``), ``grads``
and ``d_x``.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import activation as activation_function, derivative, undefined

OPTIONS = ("layers", "activation")


def forward(tree: Tree, x: np.ndarray, params: dict, layers: int = 3, activation: str = "relu") -> dict:
    """D1-D2 for one binary tree (unary nodes allowed).  x: (T, d_x)."""
    f = activation_function(activation).g
    W, W_leaf, V, V_leaf, b = (np.asarray(params[name]) for name in ("W", "W_leaf", "V", "V_leaf", "b"))
    d, d_x = b.shape[1], W_leaf.shape[0] // 2
    n = tree.n_nodes
    kids = tree.children()
    h = [undefined(n, d) for _ in range(layers)]
    for j in range(n):  # children before parents
        if not kids[j]:
            word = x[tree.token_index[j]]
            h[1][j] = f(V_leaf.T @ word + b[1])  # (D2)
            for i in range(2, layers):
                h[i][j] = f(V[i - 1].T @ h[i - 1][j] + b[i])  # (D2)
            continue
        z = b[0].copy()
        for slot, child in enumerate(kids[j]):
            if not kids[child]:  # W_k^(1)x reads the word
                z += W_leaf[slot * d_x : (slot + 1) * d_x].T @ x[tree.token_index[child]]
            else:
                z += W[0][slot * d : (slot + 1) * d].T @ h[0][child]
        h[0][j] = f(z)  # (D1)
        for i in range(1, layers):
            z = V[i - 1].T @ h[i - 1][j] + b[i]
            for slot, child in enumerate(kids[j]):
                z += W[i][slot * d : (slot + 1) * d].T @ h[i][child]
            h[i][j] = f(z)  # (D2)
    out = {f"h^({i + 1})": h[i] for i in range(layers)}
    out["out"] = h[layers - 1].copy()
    return out


def backward(
    tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, layers: int = 3, activation: str = "relu"
) -> dict:
    """D1-D2 reversed node by node, parents first (module docstring)."""
    slope = derivative(activation)
    q = forward(tree, x, params, layers, activation)
    W, W_leaf, V, V_leaf, b = (np.asarray(params[name]) for name in ("W", "W_leaf", "V", "V_leaf", "b"))
    d, d_x = b.shape[1], W_leaf.shape[0] // 2
    n = tree.n_nodes
    kids = tree.children()
    h = [q[f"h^({i + 1})"] for i in range(layers)]
    G = {
        name: np.zeros_like(value)
        for name, value in (("W", W), ("W_leaf", W_leaf), ("V", V), ("V_leaf", V_leaf), ("b", b))
    }
    eps = [np.zeros((n, d)) for _ in range(layers)]
    eps[layers - 1] += d_h
    delta = [undefined(n, d) for _ in range(layers)]
    d_word = np.zeros(x.shape)
    for j in range(n - 1, -1, -1):  # parents first
        leaf = not kids[j]
        for i in range(layers - 1, 0 if leaf else -1, -1):  # layers from the top
            delta[i][j] = eps[i][j] * slope(h[i][j])
            G["b"][i] += delta[i][j]
            if i >= 1:  # V^(i+1) h^(i)
                if leaf and i == 1:
                    word = x[tree.token_index[j]]
                    G["V_leaf"] += np.outer(word, delta[i][j])
                    d_word[tree.token_index[j]] += V_leaf @ delta[i][j]
                else:
                    G["V"][i - 1] += np.outer(h[i - 1][j], delta[i][j])
                    eps[i - 1][j] += V[i - 1] @ delta[i][j]
            for slot, child in enumerate(kids[j]):  # DR1: none to a missing child
                block = slice(slot * d, (slot + 1) * d)
                if i == 0 and not kids[child]:  # a leaf child's word
                    word_block = slice(slot * d_x, (slot + 1) * d_x)
                    word = x[tree.token_index[child]]
                    G["W_leaf"][word_block] += np.outer(word, delta[0][j])
                    d_word[tree.token_index[child]] += W_leaf[word_block] @ delta[0][j]
                else:
                    G["W"][i][block] += np.outer(h[i][child], delta[i][j])
                    eps[i][child] += W[i][block] @ delta[i][j]
    out = {"grads": G, "d_x": d_word}
    for i in range(layers):
        rows = eps[i].copy()
        if i == 0:
            rows[[not k for k in kids]] = np.nan
        out["eps_h" if i == layers - 1 else f"eps^({i + 1})"] = rows
        out[f"delta^({i + 1})"] = delta[i]
    return out
