r"""N-ary Tree-LSTM, node by node (Tai, Socher & Manning 2015, Sec. 3.2,
eqs. 9-14).

Column orientation (every W^(g), U^(g) is the transpose of the code's block
of the same gate and child slot); h_jl, c_jl are the state and memory cell
of node j's l-th child, l = 1..N:

    i_j  = sigma( W^(i) x_j + sum_l U_l^(i) h_jl + b^(i) )            (9)
    f_jk = sigma( W^(f) x_j + sum_l U_kl^(f) h_jl + b^(f) ),  k=1..N  (10)
    o_j  = sigma( W^(o) x_j + sum_l U_l^(o) h_jl + b^(o) )            (11)
    u_j  = tanh ( W^(u) x_j + sum_l U_l^(u) h_jl + b^(u) )            (12)
    c_j  = i_j * u_j + sum_l f_jl * c_jl                              (13)
    h_j  = o_j * tanh(c_j)                                            (14)

A missing child (a unary node of a binary tree) has h = c = 0.  By default
(Tai: "a node j receives an input vector x_j only if it is a leaf node")
only the leaves read a word and x_j = 0 at inner nodes; there are no
children at a leaf, so it has no forget gates.  ``inner_inputs=True``: any
node may read a word and W^(f) is a parameter (the chain LSTM is N = 1 with
a word at every node).  ``output_gate=False``: o_j = 1, h_j = tanh(c_j).

Recurrent dropout (Gal 2015), ``masks=[m]`` with m (d,) the tree's mask:
every child's h enters eqs. 9-12 as h~_jl = h_jl * m (c_jl in eq. 13 and
the output h_j are not masked).

``forward(tree, x, params, arity=2, inner_inputs=False, output_gate=True,
masks=None)`` returns, one row per node in tree order: ``i``, ``o``, ``u``,
``c``, ``h``, ``out`` (= h), each (n, d), and ``f`` (n, N, d): f[j, k-1] is
f_jk (NaN at the leaves).
"""
from __future__ import annotations

import numpy as np

from ...formats import Tree
from .functions import column_block, sigmoid, undefined, vector_block

GATES = ("i", "o", "u", "f")   # column blocks of the code's W and b; U: i|o|u|f_1..f_N
OPTIONS = ("arity", "inner_inputs", "output_gate")


def paper_parameters(params: dict, arity: int = 2) -> dict:
    """``W^(i)``, ``W^(o)``, ``W^(u)`` (and ``W^(f)`` with inner inputs),
    (d, d_x); ``U_l^(g)`` for g in i, o, u and ``U_kl^(f)`` (d, d), slots
    l, k = 1..N; ``b^(i)`` .. ``b^(f)`` (d,)."""
    d = np.asarray(params["b"]).shape[0] // 4
    W, U = np.asarray(params["W"]), np.asarray(params["U"])
    if U.shape != (arity * d, (3 + arity) * d):
        raise ValueError(f"U is {U.shape}, not (N d, (3+N) d) for N = {arity}, d = {d}")
    out = {}
    for g, gate in enumerate(GATES):
        out[f"b^({gate})"] = vector_block(params["b"], g, d)
        if g < W.shape[1] // d:
            out[f"W^({gate})"] = column_block(W, g, d)
    for l in range(arity):
        rows = U[l * d:(l + 1) * d]               # what child slot l feeds
        for g, gate in enumerate(GATES[:3]):
            out[f"U_{l + 1}^({gate})"] = column_block(rows, g, d)
        for k in range(arity):
            out[f"U_{k + 1}{l + 1}^(f)"] = column_block(rows, 3 + k, d)
    return out


def forward(tree: Tree, x: np.ndarray, params: dict, arity: int = 2,
            inner_inputs: bool = False, output_gate: bool = True, masks=None) -> dict:
    """Eqs. 9-14 for one tree with at most ``arity`` children per node.
    x: (T, d_x), row t the vector of token t; params: the cell's ``W``,
    ``U``, ``b``; masks: None or [m], m (d,) this tree's recurrent mask."""
    P = paper_parameters(params, arity)
    d, d_x = P["W^(i)"].shape
    if inner_inputs != ("W^(f)" in P):
        raise ValueError("W has f columns exactly when inner_inputs is set")
    mask = np.ones(d) if masks is None else np.asarray(masks[0])
    n, N = tree.n_nodes, arity
    kids = tree.children()
    q = {name: undefined(n, d) for name in ("i", "o", "u")}
    f_all = undefined(n, N, d)
    c, h = np.zeros((n, d)), np.zeros((n, d))
    for j in range(n):                                 # children before parents
        if len(kids[j]) > N:
            raise ValueError(f"node {j} has {len(kids[j])} children, more than N = {N}")
        reads_word = tree.token_index[j] >= 0 and (inner_inputs or not kids[j])
        x_j = x[tree.token_index[j]] if reads_word else np.zeros(d_x)
        slots = kids[j] + [None] * (N - len(kids[j]))
        h_jl = [np.zeros(d) if k is None else h[k] * mask for k in slots]   # h~_jl
        c_jl = [np.zeros(d) if k is None else c[k] for k in slots]
        z = {gate: P[f"W^({gate})"] @ x_j + P[f"b^({gate})"] for gate in ("i", "o", "u")}
        for l in range(N):
            for gate in ("i", "o", "u"):
                z[gate] = z[gate] + P[f"U_{l + 1}^({gate})"] @ h_jl[l]
        i = sigmoid(z["i"])                                                    # (9)
        o = sigmoid(z["o"]) if output_gate else np.ones(d)                     # (11)
        u = np.tanh(z["u"])                                                    # (12)
        c[j] = i * u                                                           # (13)
        if kids[j]:
            for k in range(N):
                z_f = P["b^(f)"].copy()
                if inner_inputs:
                    z_f += P["W^(f)"] @ x_j
                for l in range(N):
                    z_f += P[f"U_{k + 1}{l + 1}^(f)"] @ h_jl[l]
                f_all[j, k] = sigmoid(z_f)                                     # (10)
                c[j] += f_all[j, k] * c_jl[k]                                  # (13)
        h[j] = o * np.tanh(c[j])                                               # (14)
        q["i"][j], q["o"][j], q["u"][j] = i, o, u
    return {**q, "f": f_all, "c": c, "h": h, "out": h.copy()}
