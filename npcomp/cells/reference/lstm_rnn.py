r"""LSTM-RNN, node by node (Le & Zuidema 2015, Sec. 3-4).

Le & Zuidema print the equations of Sec. 3 without numbers; (L1)-(L7)
number them in print order, as ``npcomp/cells/lstm_rnn.py`` does.  A parent
p composes its left child x and right child y (their outputs, also written
x and y) and their memory cells c_x, c_y; column orientation (every W below
is the transpose of the code's block of the same name):

    i_1 = sigma( W_i1 x + W_i2 y + W_ci1 c_x + W_ci2 c_y + b_i )         (L1)
    i_2 = sigma( W_i1 y + W_i2 x + W_ci1 c_y + W_ci2 c_x + b_i )         (L2)
    f_1 = sigma( W_f1 x + W_f2 y + W_cf1 c_x + W_cf2 c_y + b_f )         (L3)
    f_2 = sigma( W_f1 y + W_f2 x + W_cf1 c_y + W_cf2 c_x + b_f )         (L4)
    c_p = f_1 * c_x + f_2 * c_y + g( (W_c1 x) * i_1 + (W_c2 y) * i_2 + b_c )   (L5)
    o   = sigma( W_o1 x + W_o2 y + W_co c_p + b_o )                      (L6)
    p   = o * g(c_p)                                                     (L7)

g in {tanh, sigmoid, softsign}.  Leaves: c = 0, the vector is the word's.
A missing child (the right one of a unary node) contributes 0 (and c = 0).
Untied (Sec. 4 read literally): a child that is a leaf is read through the
leaf matrices (``W_leaf``, d x d_w), an inner child through ``W``; the
leaves' own output rows are 0.

``forward(tree, x, params, activation="tanh", untied=False)`` returns, one
row per node in tree order: ``i_1``, ``i_2``, ``f_1``, ``f_2``, ``u`` (the
g(...) term of L5), ``o``, ``p`` (NaN at the leaves), ``c`` (0 at the
leaves) and ``out`` (p at inner nodes; the word vector at tied leaves, 0 at
untied ones), each (n, d).

The backward, node by node from the root down (errata of
docs/cells/lstm_rnn.md named where they decide a line):

    delta_o  = eps_h * g(c_p) * o (1 - o)                     reverses (L7), (L6)
    eps_c   += eps_h * o * g'(c_p) + W_co^T delta_o           reverses (L7), (L6): L1, c_p
    delta_u  = eps_c * g'(u)                                  reverses (L5): L5, g twice
    delta_i1 = delta_u * a_1 * i_1 (1 - i_1)                  reverses (L5), (L1): L2
    delta_i2 = delta_u * a_2 * i_2 (1 - i_2)                  reverses (L5), (L2): L2
    delta_a1 = delta_u * i_1,  delta_a2 = delta_u * i_2       a_k = W_ck child k
    delta_f1 = eps_c * c_x * f_1 (1 - f_1)                    reverses (L5), (L3)
    delta_f2 = eps_c * c_y * f_2 (1 - f_2)                    reverses (L5), (L4)
    eps_h(x) += W_i1^T d_i1 + W_i2^T d_i2 + W_f1^T d_f1 + W_f2^T d_f2 + W_c1^T d_a1 + W_o1^T d_o
    eps_h(y) += W_i2^T d_i1 + W_i1^T d_i2 + W_f2^T d_f1 + W_f1^T d_f2 + W_c2^T d_a2 + W_o2^T d_o
                (L4: the gate of child k reads k through the "1" matrices)
    eps_c(x)  = eps_c f_1 + W_ci1^T d_i1 + W_ci2^T d_i2 + W_cf1^T d_f1 + W_cf2^T d_f2
    eps_c(y)  = eps_c f_2 + W_ci2^T d_i1 + W_ci1^T d_i2 + W_cf2^T d_f1 + W_cf1^T d_f2

A leaf child's share goes to its word (through the leaf matrices when
untied); a tied leaf's word also gets the head's eps_h there (h = x).

``backward(tree, x, params, d_h, activation="tanh", untied=False)``, d_h
(n, d) the head's dJ/dh per node in tree order, returns ``eps_h``,
``eps_c`` and the deltas under the cell's symbols (``delta_o``,
``delta_u``, ``delta_i1`` .. ``delta_f2``; NaN at the leaves), ``grads``
(dJ/d each of the cell's parameters, in its layout) and ``d_x`` (T, d_x).
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import (
    activation as activation_function,
    code_columns,
    column_block,
    derivative,
    sigmoid,
    undefined,
    vector_block,
)

# column blocks of the code's W and W_leaf, then of W_peephole, then of b
WEIGHT_BLOCKS = ("i1", "i2", "f1", "f2", "c1", "c2", "o1", "o2")
PEEPHOLE_BLOCKS = ("ci1", "ci2", "cf1", "cf2")
BIAS_BLOCKS = ("i", "f", "c", "o")
OPTIONS = ("activation", "untied")


def paper_parameters(params: dict) -> dict:
    """``W_i1`` .. ``W_o2`` (d, d), ``W_ci1`` .. ``W_cf2``, ``W_co`` (d, d),
    ``b_i``, ``b_f``, ``b_c``, ``b_o``; with ``W_leaf``: ``W_leaf_i1`` ..
    (d, d_w)."""
    d = np.asarray(params["W_co"]).shape[0]
    out = {}
    for k, name in enumerate(WEIGHT_BLOCKS):
        out[f"W_{name}"] = column_block(params["W"], k, d)
        if "W_leaf" in params:
            out[f"W_leaf_{name}"] = column_block(params["W_leaf"], k, d)
    for k, name in enumerate(PEEPHOLE_BLOCKS):
        out[f"W_{name}"] = column_block(params["W_peephole"], k, d)
    out["W_co"] = np.asarray(params["W_co"]).T
    for k, name in enumerate(BIAS_BLOCKS):
        out[f"b_{name}"] = vector_block(params["b"], k, d)
    return out


def forward(tree: Tree, x: np.ndarray, params: dict, activation: str = "tanh", untied: bool = False) -> dict:
    """(L1)-(L7) for one binary tree (unary nodes allowed).  x: (T, d_x), row t
    the vector of token t; params: the cell's ``W``, ``W_peephole``, ``W_co``,
    ``b`` (and ``W_leaf`` untied)."""
    g = activation_function(activation).g
    P = paper_parameters(params)
    d = P["W_co"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    is_leaf = [not k for k in kids]
    vector = [None] * n  # a node's output as its parent reads it
    c = np.zeros((n, d))
    q = {name: undefined(n, d) for name in ("i_1", "i_2", "f_1", "f_2", "u", "o", "p")}
    out = np.zeros((n, d))
    zero = np.zeros(d)

    def W(name, child):
        """W_name applied to a child's vector (leaf matrices for an untied leaf)."""
        if child is None:
            return zero
        prefix = "W_leaf_" if untied and is_leaf[child] else "W_"
        return P[prefix + name] @ vector[child]

    for j in range(n):  # children before parents
        if is_leaf[j]:
            vector[j] = x[tree.token_index[j]]
            if not untied:
                out[j] = vector[j]
            continue
        x_, y = kids[j] + [None] * (2 - len(kids[j]))  # left child x, right child y
        c_x = zero if x_ is None else c[x_]
        c_y = zero if y is None else c[y]
        i_1 = sigmoid(W("i1", x_) + W("i2", y) + P["W_ci1"] @ c_x + P["W_ci2"] @ c_y + P["b_i"])  # (L1)
        i_2 = sigmoid(W("i1", y) + W("i2", x_) + P["W_ci1"] @ c_y + P["W_ci2"] @ c_x + P["b_i"])  # (L2)
        f_1 = sigmoid(W("f1", x_) + W("f2", y) + P["W_cf1"] @ c_x + P["W_cf2"] @ c_y + P["b_f"])  # (L3)
        f_2 = sigmoid(W("f1", y) + W("f2", x_) + P["W_cf1"] @ c_y + P["W_cf2"] @ c_x + P["b_f"])  # (L4)
        u = g(W("c1", x_) * i_1 + W("c2", y) * i_2 + P["b_c"])  # (L5)
        c[j] = f_1 * c_x + f_2 * c_y + u  # (L5)
        o = sigmoid(W("o1", x_) + W("o2", y) + P["W_co"] @ c[j] + P["b_o"])  # (L6)
        p = o * g(c[j])  # (L7)
        vector[j] = out[j] = p
        for name, value in (("i_1", i_1), ("i_2", i_2), ("f_1", f_1), ("f_2", f_2), ("u", u), ("o", o), ("p", p)):
            q[name][j] = value
    return {**q, "c": c, "out": out}


# the gate each weight block carries a child in slot 0 (x) or 1 (y) into (L4)
CARRIES = (
    {"i1": "i_1", "i2": "i_2", "f1": "f_1", "f2": "f_2", "c1": "a_1", "o1": "o"},
    {"i1": "i_2", "i2": "i_1", "f1": "f_2", "f2": "f_1", "c2": "a_2", "o2": "o"},
)


def backward(
    tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, activation: str = "tanh", untied: bool = False
) -> dict:
    """(L1)-(L7) reversed node by node, parents first (module docstring)."""
    g, g_prime = activation_function(activation).g, derivative(activation)
    P = paper_parameters(params)
    q = forward(tree, x, params, activation, untied)
    d = P["W_co"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    G = {name: np.zeros_like(value) for name, value in P.items()}
    eps_h = np.array(d_h, dtype=np.float64)
    eps_c = np.zeros((n, d))
    delta = {name: undefined(n, d) for name in ("o", "u", "i_1", "i_2", "a_1", "a_2", "f_1", "f_2")}
    d_word = np.zeros(x.shape)
    zero = np.zeros(d)

    def vector(child):
        return x[tree.token_index[child]] if not kids[child] else q["p"][child]

    for j in range(n - 1, -1, -1):  # parents first
        if not kids[j]:
            if not untied:  # tied: h = x, eps_h is the word's
                d_word[tree.token_index[j]] += eps_h[j]
            continue
        sides = kids[j] + [None] * (2 - len(kids[j]))  # x, y (y missing: unary, L7)
        c_side = [zero if child is None else q["c"][child] for child in sides]
        prefix = ["W_leaf_" if untied and child is not None and not kids[child] else "W_" for child in sides]
        a = [zero if child is None else P[prefix[k] + f"c{k + 1}"] @ vector(child) for k, child in enumerate(sides)]
        o, u, i_1, i_2 = q["o"][j], q["u"][j], q["i_1"][j], q["i_2"][j]
        f_1, f_2, g_c = q["f_1"][j], q["f_2"][j], g(q["c"][j])
        delta["o"][j] = eps_h[j] * g_c * o * (1 - o)  # (L7), (L6)
        eps_c[j] = eps_c[j] + eps_h[j] * o * g_prime(g_c) + P["W_co"].T @ delta["o"][j]
        delta["u"][j] = eps_c[j] * g_prime(u)  # (L5)
        delta["i_1"][j] = delta["u"][j] * a[0] * i_1 * (1 - i_1)  # (L5), (L1)
        delta["i_2"][j] = delta["u"][j] * a[1] * i_2 * (1 - i_2)  # (L5), (L2)
        delta["a_1"][j] = delta["u"][j] * i_1
        delta["a_2"][j] = delta["u"][j] * i_2
        delta["f_1"][j] = eps_c[j] * c_side[0] * f_1 * (1 - f_1)  # (L5), (L3)
        delta["f_2"][j] = eps_c[j] * c_side[1] * f_2 * (1 - f_2)  # (L5), (L4)
        for k, child in enumerate(sides):
            if child is None:
                continue
            share = np.zeros_like(vector(child))
            for block, gate in CARRIES[k].items():  # (L1)-(L6) reversed
                share += P[prefix[k] + block].T @ delta[gate][j]
                G[prefix[k] + block] += np.outer(delta[gate][j], vector(child))
            if kids[child]:
                eps_h[child] += share
                # (L5) and the peepholes of (L1)-(L4): c of an inner child (a leaf's is 0)
                eps_c[child] = eps_c[j] * (f_1, f_2)[k]
                for block in PEEPHOLE_BLOCKS:
                    gate = CARRIES[k][block[1:]]
                    eps_c[child] += P[f"W_{block}"].T @ delta[gate][j]
                    G[f"W_{block}"] += np.outer(delta[gate][j], c_side[k])
            elif untied:
                d_word[tree.token_index[child]] += share
            else:
                eps_h[child] += share
        G["W_co"] += np.outer(delta["o"][j], q["c"][j])
        G["b_i"] += delta["i_1"][j] + delta["i_2"][j]
        G["b_f"] += delta["f_1"][j] + delta["f_2"][j]
        G["b_c"] += delta["u"][j]
        G["b_o"] += delta["o"][j]
    return _backward_result(kids, eps_h, eps_c, delta, G, untied, d_word)


def _backward_result(kids: list, eps_h, eps_c, delta: dict, G: dict, untied: bool, d_word) -> dict:
    """``backward``'s terms (eps at inner nodes, NaN at leaves; the deltas),
    the gradients in the cell's layout, and d_x."""
    inner = np.array([bool(k) for k in kids])
    terms = {"eps_h": np.where(inner[:, None], eps_h, np.nan), "eps_c": np.where(inner[:, None], eps_c, np.nan)}
    for name, values in delta.items():
        terms["delta_" + name.replace("_", "")] = values
    grads = {
        "W": code_columns([G[f"W_{block}"] for block in WEIGHT_BLOCKS]),
        "W_peephole": code_columns([G[f"W_{block}"] for block in PEEPHOLE_BLOCKS]),
        "W_co": G["W_co"].T,
        "b": np.concatenate([G[f"b_{block}"] for block in BIAS_BLOCKS]),
    }
    if untied:
        grads["W_leaf"] = code_columns([G[f"W_leaf_{block}"] for block in WEIGHT_BLOCKS])
    return {**terms, "grads": grads, "d_x": d_word}
