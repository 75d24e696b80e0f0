r"""S-LSTM, node by node (Zhu, Sobhani & Guo 2015, Sec. 3, eqs. 1-7).

Zhu's column orientation: a node t has left child L and right child R (Zhu
index them t-1, the parent t+1); h, c are column vectors and every W below
is Zhu's matrix (the transpose of the code's block of the same name):

    i_t   = sigma( W_hi^L h^L  + W_hi^R h^R  + W_ci^L c^L  + W_ci^R c^R  + b_i  )   (1)
    f^L_t = sigma( W_hfl^L h^L + W_hfl^R h^R + W_cfl^L c^L + W_cfl^R c^R + b_fl )   (2)
    f^R_t = sigma( W_hfr^L h^L + W_hfr^R h^R + W_cfr^L c^L + W_cfr^R c^R + b_fr )   (3)
    x_t   =        W_hx^L h^L  + W_hx^R h^R                              + b_x      (4)
    c_t   = f^L_t * c^L + f^R_t * c^R + i_t * tanh(x_t)                             (5)
    o_t   = sigma( W_ho^L h^L  + W_ho^R h^R  + W_co c_t                  + b_o  )   (6)
    h_t   = o_t * tanh(c_t)                                                         (7)

A missing child (the right one of a unary node) has h = c = 0.  Leaves have
no memory block: h = the word vector (d_x = d) or its projection
W_leaf x (d_x != d), c = 0.

``forward(tree, x, params)`` returns, one row per node in tree order:
``i``, ``f^L``, ``f^R``, ``x`` (eq. 4, before the tanh), ``o`` (NaN at the
leaves), ``c`` (0 at the leaves), ``h`` and ``out`` (= h), each (n, d).
"""
from __future__ import annotations

import numpy as np

from ...formats import Tree
from .functions import sigmoid, undefined

GATES = ("i", "fl", "fr", "x", "o")       # column blocks of the code's W_h and b
PEEPHOLE_GATES = ("i", "fl", "fr")        # column blocks of W_c
OPTIONS = ()


def paper_parameters(params: dict) -> dict:
    """Zhu's matrices (column orientation) from the code's blocks: ``W_hi^L``,
    ``W_ci^R``, ``W_co``, ``b_i``, ... and ``W_leaf`` (d, d_x) if present."""
    d = np.asarray(params["W_co"]).shape[0]
    out = {}
    for g, gate in enumerate(GATES):
        columns = slice(g * d, (g + 1) * d)
        for s, side in enumerate("LR"):
            rows = slice(s * d, (s + 1) * d)
            out[f"W_h{gate}^{side}"] = np.asarray(params["W_h"])[rows, columns].T
            if gate in PEEPHOLE_GATES:
                out[f"W_c{gate}^{side}"] = np.asarray(params["W_c"])[rows, columns].T
        out[f"b_{gate}"] = np.asarray(params["b"])[columns]
    out["W_co"] = np.asarray(params["W_co"]).T
    if "W_leaf" in params:
        out["W_leaf"] = np.asarray(params["W_leaf"]).T
    return out


def forward(tree: Tree, x: np.ndarray, params: dict) -> dict:
    """Eqs. 1-7 for one binary tree (unary nodes allowed).  x: (T, d_x), row t
    the vector of token t; params: the cell's ``W_h``, ``W_c``, ``W_co``,
    ``b`` (and ``W_leaf`` when d_x != d)."""
    W = paper_parameters(params)
    d = W["W_co"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    q = {name: undefined(n, d) for name in ("i", "f^L", "f^R", "x", "o")}
    h, c = np.zeros((n, d)), np.zeros((n, d))
    zero = np.zeros(d)
    for t in range(n):                         # children before parents
        if not kids[t]:                        # a leaf: no memory block, c = 0
            word = x[tree.token_index[t]]
            h[t] = W["W_leaf"] @ word if "W_leaf" in W else word
            continue
        h_L, c_L = h[kids[t][0]], c[kids[t][0]]
        h_R, c_R = (h[kids[t][1]], c[kids[t][1]]) if len(kids[t]) == 2 else (zero, zero)
        i = sigmoid(W["W_hi^L"] @ h_L + W["W_hi^R"] @ h_R
                    + W["W_ci^L"] @ c_L + W["W_ci^R"] @ c_R + W["b_i"])              # (1)
        f_L = sigmoid(W["W_hfl^L"] @ h_L + W["W_hfl^R"] @ h_R
                      + W["W_cfl^L"] @ c_L + W["W_cfl^R"] @ c_R + W["b_fl"])         # (2)
        f_R = sigmoid(W["W_hfr^L"] @ h_L + W["W_hfr^R"] @ h_R
                      + W["W_cfr^L"] @ c_L + W["W_cfr^R"] @ c_R + W["b_fr"])         # (3)
        x_t = W["W_hx^L"] @ h_L + W["W_hx^R"] @ h_R + W["b_x"]                        # (4)
        c[t] = f_L * c_L + f_R * c_R + i * np.tanh(x_t)                               # (5)
        o = sigmoid(W["W_ho^L"] @ h_L + W["W_ho^R"] @ h_R + W["W_co"] @ c[t]
                    + W["b_o"])                                                       # (6)
        h[t] = o * np.tanh(c[t])                                                      # (7)
        q["i"][t], q["f^L"][t], q["f^R"][t], q["x"][t], q["o"][t] = i, f_L, f_R, x_t, o
    return {**q, "c": c, "h": h, "out": h.copy()}
