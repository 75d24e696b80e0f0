r"""Child-Sum Tree-LSTM, node by node (Tai, Socher & Manning 2015, Sec. 3.1,
eqs. 2-8).

Column orientation (every W^(g), U^(g) is the transpose of the code's column
block of the same gate):

    h~_j = sum_{k in C(j)} h_k                                          (2)
    i_j  = sigma( W^(i) x_j + U^(i) h~_j + b^(i) )                      (3)
    f_jk = sigma( W^(f) x_j + U^(f) h_k  + b^(f) ),   k in C(j)         (4)
    o_j  = sigma( W^(o) x_j + U^(o) h~_j + b^(o) )                      (5)
    u_j  = tanh ( W^(u) x_j + U^(u) h~_j + b^(u) )                      (6)
    c_j  = i_j * u_j + sum_{k in C(j)} f_jk * c_k                       (7)
    h_j  = o_j * tanh(c_j)                                              (8)

A node may have any number of children.  x_j = 0 at a node reading no word
(an inner node of a constituency tree).  ``output_gate=False`` (Tai's
released relatedness code): o_j = 1, so h_j = tanh(c_j).

``forward(tree, x, params, output_gate=True)`` returns, one row per node in
tree order: ``h~``, ``i``, ``o``, ``u``, ``c``, ``h``, ``out`` (= h), and
``f``: row k holds f_jk, the forget gate its parent j applies to child k
(NaN at the root), each (n, d).
"""
from __future__ import annotations

import numpy as np

from ...formats import Tree
from .functions import column_block, sigmoid, undefined, vector_block

GATES = ("i", "o", "u", "f")      # column blocks of the code's W and b; U has i|o|u
OPTIONS = ("output_gate",)


def paper_parameters(params: dict) -> dict:
    """``W^(i)`` .. ``W^(f)`` (d, d_x), ``U^(i)``, ``U^(o)``, ``U^(u)``,
    ``U^(f)`` (d, d), ``b^(i)`` .. ``b^(f)`` (d,)."""
    d = np.asarray(params["U_f"]).shape[0]
    out = {}
    for g, gate in enumerate(GATES):
        out[f"W^({gate})"] = column_block(params["W"], g, d)
        out[f"b^({gate})"] = vector_block(params["b"], g, d)
        if gate != "f":
            out[f"U^({gate})"] = column_block(params["U"], g, d)
    out["U^(f)"] = np.asarray(params["U_f"]).T
    return out


def forward(tree: Tree, x: np.ndarray, params: dict, output_gate: bool = True) -> dict:
    """Eqs. 2-8 for one tree of any arity.  x: (T, d_x), row t the vector of
    token t; params: the cell's ``W``, ``U``, ``U_f``, ``b``."""
    P = paper_parameters(params)
    d, d_x = P["W^(i)"].shape
    n = tree.n_nodes
    q = {name: undefined(n, d) for name in ("h~", "i", "f", "o", "u")}
    c, h = np.zeros((n, d)), np.zeros((n, d))
    for j, kids in enumerate(tree.children()):      # children before parents
        x_j = x[tree.token_index[j]] if tree.token_index[j] >= 0 else np.zeros(d_x)
        h_tilde = np.zeros(d)
        for k in kids:
            h_tilde = h_tilde + h[k]                                            # (2)
        i = sigmoid(P["W^(i)"] @ x_j + P["U^(i)"] @ h_tilde + P["b^(i)"])       # (3)
        o = sigmoid(P["W^(o)"] @ x_j + P["U^(o)"] @ h_tilde + P["b^(o)"])       # (5)
        if not output_gate:
            o = np.ones(d)
        u = np.tanh(P["W^(u)"] @ x_j + P["U^(u)"] @ h_tilde + P["b^(u)"])       # (6)
        c[j] = i * u                                                            # (7)
        for k in kids:
            f_jk = sigmoid(P["W^(f)"] @ x_j + P["U^(f)"] @ h[k] + P["b^(f)"])   # (4)
            c[j] += f_jk * c[k]                                                 # (7)
            q["f"][k] = f_jk
        h[j] = o * np.tanh(c[j])                                                # (8)
        q["h~"][j], q["i"][j], q["o"][j], q["u"][j] = h_tilde, i, o, u
    return {**q, "c": c, "h": h, "out": h.copy()}
