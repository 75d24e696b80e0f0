r"""Matrix-vector RNN, node by node (Socher, Huval, Manning & Ng 2012).

Column orientation (W, W_M are d x 2d, the transposes of the code's ``W``,
``W_M``); a node with left child (a, A) and right child (b, B):

    p = tanh( W [B a ; A b] + b_W )                                  (MV1)
    P = W_M [A ; B] = W_M,1 A + W_M,2 B                              (MV2)

A leaf is its word: x = [a | vec(A)] (A row-major).  A unary node's
missing right child is (b, B) = (0, I) (MV4).

``forward(tree, x, params)`` returns, one row per node in tree order:
``Ba``, ``Ab`` (NaN at the leaves), ``p`` (NaN at the leaves), ``P`` (d^2,
row-major; a leaf's word matrix), ``h`` and ``out`` (a leaf's a, else p).

The backward, node by node from the root down:

    delta        = eps_h * (1 - p^2)                       reverses tanh of (MV1)
    [eps_u; eps_v] = W^T delta                              reverses (MV1)
    eps_h(left)  += B^T eps_u,   eps_P(right) += eps_u a^T  reverses u = B a
    eps_h(right) += A^T eps_v,   eps_P(left)  += eps_v b^T  reverses v = A b
    eps_P(left)  += W_M,1^T eps_P,  eps_P(right) += W_M,2^T eps_P   reverses (MV2)

``backward(tree, x, params, d_h)``, d_h (n, d) the head's dJ/dp per node in
tree order, returns ``eps_h``, ``eps_P`` (n, d^2), ``delta`` and
``eps_[Ba;Ab]`` (NaN at the leaves), ``grads`` (the code's layout) and
``d_x``.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import undefined

OPTIONS = ()


def paper_parameters(params: dict) -> dict:
    """``W`` (d, 2d), ``b_W`` (d,), ``W_M,1``, ``W_M,2`` (d, d)."""
    W_M = np.asarray(params["W_M"])
    d = W_M.shape[1]
    return {"W": np.asarray(params["W"]).T, "b_W": np.asarray(params["b"]), "W_M,1": W_M[:d].T, "W_M,2": W_M[d:].T}


def _children(tree: Tree, j: int, vector: list, matrix: list, d: int) -> tuple:
    """(a, A, b, B) of node j: its left child's and right child's vector and
    matrix, (0, I) for a missing right child."""
    kids = tree.children()[j]
    a, A = vector[kids[0]], matrix[kids[0]]
    if len(kids) == 2:
        return a, A, vector[kids[1]], matrix[kids[1]]
    return a, A, np.zeros(d), np.eye(d)


def forward(tree: Tree, x: np.ndarray, params: dict) -> dict:
    """MV1-MV2 for one binary tree (unary nodes allowed).  x: (T, d + d^2),
    row t token t's [a | vec(A)]."""
    P_ = paper_parameters(params)
    d = P_["b_W"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    vector, matrix = [None] * n, [None] * n
    Ba, Ab, p = undefined(n, d), undefined(n, d), undefined(n, d)
    for j in range(n):  # children before parents
        if not kids[j]:
            word = x[tree.token_index[j]]
            vector[j], matrix[j] = word[:d], word[d:].reshape(d, d)
            continue
        a, A, b, B = _children(tree, j, vector, matrix, d)
        Ba[j], Ab[j] = B @ a, A @ b
        p[j] = np.tanh(P_["W"] @ np.concatenate([Ba[j], Ab[j]]) + P_["b_W"])  # (MV1)
        vector[j] = p[j]
        matrix[j] = P_["W_M,1"] @ A + P_["W_M,2"] @ B  # (MV2)
    h = np.array(vector)
    return {"Ba": Ba, "Ab": Ab, "p": p, "P": np.array([m.ravel() for m in matrix]), "h": h, "out": h.copy()}


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray) -> dict:
    """MV1-MV2 reversed node by node, parents first (module docstring)."""
    P_ = paper_parameters(params)
    q = forward(tree, x, params)
    d = P_["b_W"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    vector = list(q["h"])
    matrix = [row.reshape(d, d) for row in q["P"]]
    G = {name: np.zeros_like(value) for name, value in P_.items()}
    eps_h = np.array(d_h, dtype=np.float64)
    eps_P = np.zeros((n, d, d))
    delta, eps_uv = undefined(n, d), undefined(n, 2 * d)
    d_word = np.zeros(x.shape)
    for j in range(n - 1, -1, -1):  # parents first
        if not kids[j]:
            d_word[tree.token_index[j], :d] += eps_h[j]
            d_word[tree.token_index[j], d:] += eps_P[j].ravel()
            continue
        a, A, b, B = _children(tree, j, vector, matrix, d)
        delta[j] = eps_h[j] * (1 - q["p"][j] ** 2)  # reverses tanh (MV1)
        G["b_W"] += delta[j]
        G["W"] += np.outer(delta[j], np.concatenate([B @ a, A @ b]))
        eps_uv[j] = P_["W"].T @ delta[j]  # reverses W (MV1)
        eps_u, eps_v = eps_uv[j, :d], eps_uv[j, d:]
        left = kids[j][0]
        eps_h[left] += B.T @ eps_u  # u = B a
        eps_P[left] += np.outer(eps_v, b)  # v = A b
        eps_P[left] += P_["W_M,1"].T @ eps_P[j]  # (MV2)
        G["W_M,1"] += eps_P[j] @ A.T
        G["W_M,2"] += eps_P[j] @ B.T  # B = I: a constant
        if len(kids[j]) == 2:  # MV4: none to (0, I)
            right = kids[j][1]
            eps_P[right] += np.outer(eps_u, a)
            eps_h[right] += A.T @ eps_v
            eps_P[right] += P_["W_M,2"].T @ eps_P[j]
    grads = {"W": G["W"].T, "b": G["b_W"], "W_M": np.vstack([G["W_M,1"].T, G["W_M,2"].T])}
    return {
        "eps_h": eps_h,
        "eps_P": eps_P.reshape(n, d * d),
        "delta": delta,
        "eps_[Ba;Ab]": eps_uv,
        "grads": grads,
        "d_x": d_word,
    }
