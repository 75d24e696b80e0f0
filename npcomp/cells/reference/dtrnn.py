r"""Dependency-tree RNN, node by node (Socher, Karpathy, Le, Manning & Ng 2014).

Column orientation (W_v is d x d_x, each W_pos d x d: the transposes of the
code's blocks):

    h_i = tanh( (1/l(i)) ( W_v x_i + sum_{j in C(i)} l(j) W_pos(i,j) h_j ) + b )   (DT1)

l(i) the words under node i, itself included; pos(i, j) = l_k for the k-th
child left of the head counting from it, r_k on the right, k capped at K
(DT2: the farther ones share W_l_K, W_r_K); a node without a word has
W_v x_i = 0 and all its children on its right.

``forward(tree, x, params, positions=3)`` returns ``l`` (n, 1), ``h`` and
``out`` per node in tree order.

The backward, node by node from the root down:

    delta     = eps_h * (1 - h^2)                            reverses tanh
    eps_h(j) += l(j)/l(i) W_pos(i,j)^T delta                  reverses (DT1)
    dW_v += delta x_i^T / l(i),  dW_pos += l(j) delta h_j^T / l(i),  db += delta

``backward(tree, x, params, d_h, positions=3)`` returns ``eps_h``,
``delta``, ``eps_S`` (W_p^T delta / l(i) in block p), ``grads`` and ``d_x``.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree

OPTIONS = ("positions",)


def positions_of(tree: Tree, K: int) -> dict:
    """{child: its matrix's index}: l_1..l_K as 0..K-1, r_1..r_K as K..2K-1."""
    out = {}
    for i, kids in enumerate(tree.children()):
        head = tree.token_index[i]
        left = [j for j in kids if head >= 0 and tree.token_index[j] < head]
        right = [j for j in kids if j not in left]
        for rank, j in enumerate(reversed(left)):  # nearest the head first
            out[j] = min(rank, K - 1)
        for rank, j in enumerate(right):
            out[j] = K + min(rank, K - 1)
    return out


def _spans(tree: Tree) -> np.ndarray:
    kids = tree.children()
    span = np.zeros(tree.n_nodes)
    for i in range(tree.n_nodes):
        span[i] = (tree.token_index[i] >= 0) + sum(span[j] for j in kids[i])
    return span


def forward(tree: Tree, x: np.ndarray, params: dict, positions: int = 3) -> dict:
    """(DT1) for one tree of any arity.  x: (T, d_x), row t token t's vector."""
    return composed(tree, x, params, positions_of(tree, positions))


def composed(tree: Tree, x: np.ndarray, params: dict, pos: dict) -> dict:
    """(DT1) with child j read through matrix ``pos[j]`` (a position, or for
    the SDT-RNN a relation)."""
    W_v, W, b = np.asarray(params["W_v"]).T, np.asarray(params["W"]), np.asarray(params["b"])
    d = b.shape[0]
    span = _spans(tree)
    kids = tree.children()
    h = np.zeros((tree.n_nodes, d))
    for i in range(tree.n_nodes):  # children before parents
        total = W_v @ x[tree.token_index[i]] if tree.token_index[i] >= 0 else np.zeros(d)
        for j in kids[i]:
            total = total + span[j] * (W[pos[j] * d : (pos[j] + 1) * d].T @ h[j])
        h[i] = np.tanh(total / span[i] + b)  # (DT1)
    return {"l": span[:, None], "h": h, "out": h.copy()}


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, positions: int = 3) -> dict:
    """(DT1) reversed node by node, parents first (module docstring)."""
    return composed_backward(tree, x, params, d_h, positions_of(tree, positions))


def composed_backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, pos: dict) -> dict:
    """(DT1) reversed with child j's matrix ``pos[j]``."""
    W_v, W = np.asarray(params["W_v"]).T, np.asarray(params["W"])
    d = W.shape[1]
    q = composed(tree, x, params, pos)
    span = q["l"][:, 0]
    kids = tree.children()
    G = {"W_v": np.zeros_like(W_v), "W": np.zeros_like(W), "b": np.zeros(d)}
    eps_h = np.array(d_h, dtype=np.float64)
    delta = np.zeros((tree.n_nodes, d))
    eps_S = np.zeros((tree.n_nodes, W.shape[0]))  # block p: W_p^T g, for children at p
    d_word = np.zeros(x.shape)
    for i in range(tree.n_nodes - 1, -1, -1):  # parents first
        delta[i] = eps_h[i] * (1 - q["h"][i] ** 2)  # reverses tanh
        G["b"] += delta[i]
        g = delta[i] / span[i]  # reverses 1/l(i)
        eps_S[i] = W @ g
        if tree.token_index[i] >= 0:
            G["W_v"] += np.outer(g, x[tree.token_index[i]])
            d_word[tree.token_index[i]] += W_v.T @ g
        for j in kids[i]:
            block = slice(pos[j] * d, (pos[j] + 1) * d)
            G["W"][block] += span[j] * np.outer(q["h"][j], g)  # the code's row block
            eps_h[j] += span[j] * (W[block] @ g)  # W_pos^T g, code's W_pos^T^T
    return {
        "eps_h": eps_h,
        "delta": delta,
        "eps_S": eps_S,
        "grads": {"W_v": G["W_v"].T, "W": G["W"], "b": G["b"]},
        "d_x": d_word,
    }
