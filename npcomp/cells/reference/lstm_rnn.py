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
"""
from __future__ import annotations

import numpy as np

from ...formats import Tree
from .functions import activation as activation_function, column_block, sigmoid, undefined, \
    vector_block

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


def forward(tree: Tree, x: np.ndarray, params: dict, activation: str = "tanh",
            untied: bool = False) -> dict:
    """(L1)-(L7) for one binary tree (unary nodes allowed).  x: (T, d_x), row t
    the vector of token t; params: the cell's ``W``, ``W_peephole``, ``W_co``,
    ``b`` (and ``W_leaf`` untied)."""
    g = activation_function(activation).g
    P = paper_parameters(params)
    d = P["W_co"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    is_leaf = [not k for k in kids]
    vector = [None] * n                  # a node's output as its parent reads it
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

    for j in range(n):                   # children before parents
        if is_leaf[j]:
            vector[j] = x[tree.token_index[j]]
            if not untied:
                out[j] = vector[j]
            continue
        x_, y = kids[j] + [None] * (2 - len(kids[j]))      # left child x, right child y
        c_x = zero if x_ is None else c[x_]
        c_y = zero if y is None else c[y]
        i_1 = sigmoid(W("i1", x_) + W("i2", y) + P["W_ci1"] @ c_x + P["W_ci2"] @ c_y
                      + P["b_i"])                                                  # (L1)
        i_2 = sigmoid(W("i1", y) + W("i2", x_) + P["W_ci1"] @ c_y + P["W_ci2"] @ c_x
                      + P["b_i"])                                                  # (L2)
        f_1 = sigmoid(W("f1", x_) + W("f2", y) + P["W_cf1"] @ c_x + P["W_cf2"] @ c_y
                      + P["b_f"])                                                  # (L3)
        f_2 = sigmoid(W("f1", y) + W("f2", x_) + P["W_cf1"] @ c_y + P["W_cf2"] @ c_x
                      + P["b_f"])                                                  # (L4)
        u = g(W("c1", x_) * i_1 + W("c2", y) * i_2 + P["b_c"])                      # (L5)
        c[j] = f_1 * c_x + f_2 * c_y + u                                            # (L5)
        o = sigmoid(W("o1", x_) + W("o2", y) + P["W_co"] @ c[j] + P["b_o"])         # (L6)
        p = o * g(c[j])                                                             # (L7)
        vector[j] = out[j] = p
        for name, value in (("i_1", i_1), ("i_2", i_2), ("f_1", f_1), ("f_2", f_2),
                            ("u", u), ("o", o), ("p", p)):
            q[name][j] = value
    return {**q, "c": c, "out": out}
