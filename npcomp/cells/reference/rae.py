r"""Semi-supervised recursive autoencoder on given trees, node by node (Socher,
Pennington, Huang, Ng & Manning 2011).

Column orientation (W^(1) is d x 2d, W^(2) 2d x d: the transposes of the
code's ``W1``, ``W2``); a node with children c_1, c_2 (a missing c_2 is 0,
n_2 = 0):

    p = tanh( W^(1) [c_1; c_2] + b^(1) )                                (RA1)
    p <- p / ||p||                                                        (RA2)
    [c_1'; c_2'] = W^(2) p + b^(2)                                        (RA3)
    E_rec = sum_k n_k/(n_1+n_2) (1/2) ||c_k - c_k'||^2                    (RA4)

``forward(tree, x, params, reconstruction_weight=0.2)`` returns, one row per
node in tree order: ``c``, ``p`` (RA1), ``p/||p||``, ``[c_1';c_2']``,
``E_rec`` (n, 1) (NaN at the leaves), ``h`` and ``out`` (a leaf's word vector,
else p/||p||).

The backward, node by node from the root down, of sum_j d_h_j . h_j +
alpha sum_j E_rec,j (the cell alone; the model scales alpha by 1/Z):

    eps_r       = alpha [omega_1 (c_1' - c_1) ; omega_2 (c_2' - c_2)]    reverses (RA4) in c'
    eps_h      += W^(2)T eps_r                                           reverses (RA3)
    eps_a       = (eps_h - h (h . eps_h)) / ||p||                        reverses (RA2)
    delta       = eps_a * (1 - p^2)                                      reverses (RA1)
    eps_c       = W^(1)T delta
    eps_h(c_k) += eps_c[k] - eps_r[k]                 (RE1: nothing to a missing child)

``backward(tree, x, params, d_h, reconstruction_weight=0.2)`` returns
``eps_h``, ``eps_r``, ``delta``, ``eps_c`` (NaN at the leaves), ``grads``
(the code's layout) and ``d_x``.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import undefined

OPTIONS = ("reconstruction_weight",)


def paper_parameters(params: dict) -> dict:
    """``W^(1)`` (d, 2d), ``b^(1)``, ``W^(2)`` (2d, d), ``b^(2)``."""
    return {
        "W^(1)": np.asarray(params["W1"]).T,
        "b^(1)": np.asarray(params["b1"]),
        "W^(2)": np.asarray(params["W2"]).T,
        "b^(2)": np.asarray(params["b2"]),
    }


def _words_under(tree: Tree) -> np.ndarray:
    kids = tree.children()
    span = np.zeros(tree.n_nodes, dtype=int)
    for j in range(tree.n_nodes):
        span[j] = 1 if not kids[j] else sum(span[k] for k in kids[j])
    return span


def forward(tree: Tree, x: np.ndarray, params: dict, reconstruction_weight: float = 0.2) -> dict:
    """RA1-RA4 for one binary tree (unary nodes allowed).  x: (T, d)."""
    P = paper_parameters(params)
    d = P["b^(1)"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    span = _words_under(tree)
    h = np.zeros((n, d))
    c_all, p_all, normal = undefined(n, 2 * d), undefined(n, d), undefined(n, d)
    rebuilt, E_rec, omega = undefined(n, 2 * d), undefined(n, 1), undefined(n, 2)
    for j in range(n):  # children before parents
        if not kids[j]:
            h[j] = x[tree.token_index[j]]
            continue
        c_1 = h[kids[j][0]]
        c_2 = h[kids[j][1]] if len(kids[j]) == 2 else np.zeros(d)
        n_1, n_2 = span[kids[j][0]], (span[kids[j][1]] if len(kids[j]) == 2 else 0)
        c = np.concatenate([c_1, c_2])
        p = np.tanh(P["W^(1)"] @ c + P["b^(1)"])  # (RA1)
        h[j] = normal[j] = p / np.linalg.norm(p)  # (RA2)
        rebuilt[j] = P["W^(2)"] @ h[j] + P["b^(2)"]  # (RA3)
        omega[j] = [n_1 / (n_1 + n_2), n_2 / (n_1 + n_2)]
        E_rec[j, 0] = omega[j, 0] * 0.5 * np.sum((c_1 - rebuilt[j, :d]) ** 2) + omega[j, 1] * 0.5 * np.sum(
            (c_2 - rebuilt[j, d:]) ** 2
        )  # (RA4)
        c_all[j], p_all[j] = c, p
    return {
        "c": c_all,
        "p": p_all,
        "p/||p||": normal,
        "[c_1';c_2']": rebuilt,
        "E_rec": E_rec,
        "omega": omega,
        "h": h,
        "out": h.copy(),
    }


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, reconstruction_weight: float = 0.2) -> dict:
    """RA1-RA4 reversed node by node, parents first (module docstring)."""
    P = paper_parameters(params)
    q = forward(tree, x, params, reconstruction_weight)
    d = P["b^(1)"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    alpha = reconstruction_weight
    G = {name: np.zeros_like(value) for name, value in P.items()}
    eps_h = np.array(d_h, dtype=np.float64)
    eps_r, delta, eps_c = undefined(n, 2 * d), undefined(n, d), undefined(n, 2 * d)
    d_word = np.zeros(x.shape)
    for j in range(n - 1, -1, -1):  # parents first
        if not kids[j]:
            d_word[tree.token_index[j]] += eps_h[j]
            continue
        c, h, p = q["c"][j], q["h"][j], q["p"][j]
        error = q["[c_1';c_2']"][j] - c
        eps_r[j] = alpha * np.repeat(q["omega"][j], d) * error  # reverses (RA4) in c'
        eps_h[j] += P["W^(2)"].T @ eps_r[j]  # reverses (RA3)
        G["W^(2)"] += np.outer(eps_r[j], h)
        G["b^(2)"] += eps_r[j]
        eps_a = (eps_h[j] - h * (h @ eps_h[j])) / np.linalg.norm(p)  # reverses (RA2)
        delta[j] = eps_a * (1 - p * p)  # reverses tanh (RA1)
        G["W^(1)"] += np.outer(delta[j], c)
        G["b^(1)"] += delta[j]
        eps_c[j] = P["W^(1)"].T @ delta[j]
        for slot, child in enumerate(kids[j]):  # RE1: none to a missing c_2
            half = slice(slot * d, (slot + 1) * d)
            eps_h[child] += eps_c[j, half] - eps_r[j, half]  # (RA1); (RA4) in c_k
    grads = {"W1": G["W^(1)"].T, "b1": G["b^(1)"], "W2": G["W^(2)"].T, "b2": G["b^(2)"]}
    return {"eps_h": eps_h, "eps_r": eps_r, "delta": delta, "eps_c": eps_c, "grads": grads, "d_x": d_word}
