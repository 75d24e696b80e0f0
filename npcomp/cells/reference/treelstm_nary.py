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

The backward, node by node from the root down (eps = dJ/d state, delta =
dJ/d pre-activation; the parent has added its shares to eps_h_j, eps_c_j):

    delta_o  = eps_h_j * tanh(c_j) * o_j (1 - o_j)            reverses (14), (11)
    eps_c_j += eps_h_j * o_j * (1 - tanh(c_j)^2)              reverses (14)
    delta_i  = eps_c_j * u_j * i_j (1 - i_j)                  reverses (13), (9)
    delta_u  = eps_c_j * i_j * (1 - u_j^2)                    reverses (13), (12)
    delta_fk = eps_c_j * c_jk * f_jk (1 - f_jk)               reverses (13), (10)
    eps_c_jk = eps_c_j * f_jk                                 reverses (13)
    eps_h_jl += U_l^(i)T delta_i + U_l^(o)T delta_o + U_l^(u)T delta_u
                + sum_k U_kl^(f)T delta_fk   (times the mask)  reverses (9)-(12)

``backward(tree, x, params, d_h, ...)`` (the options of ``forward``), d_h
(n, d) the head's dJ/dh per node in tree order, returns those terms under
the cell's symbols (``eps_h``, ``eps_c``, ``delta_i``, ``delta_o``,
``delta_u``, ``delta_f_l`` ..., one row per node, NaN where a node has no
such quantity), ``grads`` (dJ/d each of the cell's parameters, in its
layout) and ``d_x`` (T, d_x), dJ/dx per token.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import code_columns, column_block, sigmoid, undefined, vector_block

GATES = ("i", "o", "u", "f")  # column blocks of the code's W and b; U: i|o|u|f_1..f_N
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
        rows = U[l * d : (l + 1) * d]  # what child slot l feeds
        for g, gate in enumerate(GATES[:3]):
            out[f"U_{l + 1}^({gate})"] = column_block(rows, g, d)
        for k in range(arity):
            out[f"U_{k + 1}{l + 1}^(f)"] = column_block(rows, 3 + k, d)
    return out


def forward(
    tree: Tree,
    x: np.ndarray,
    params: dict,
    arity: int = 2,
    inner_inputs: bool = False,
    output_gate: bool = True,
    masks=None,
) -> dict:
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
    for j in range(n):  # children before parents
        if len(kids[j]) > N:
            raise ValueError(f"node {j} has {len(kids[j])} children, more than N = {N}")
        reads_word = tree.token_index[j] >= 0 and (inner_inputs or not kids[j])
        x_j = x[tree.token_index[j]] if reads_word else np.zeros(d_x)
        slots = kids[j] + [None] * (N - len(kids[j]))
        h_jl = [np.zeros(d) if k is None else h[k] * mask for k in slots]  # h~_jl
        c_jl = [np.zeros(d) if k is None else c[k] for k in slots]
        z = {gate: P[f"W^({gate})"] @ x_j + P[f"b^({gate})"] for gate in ("i", "o", "u")}
        for l in range(N):
            for gate in ("i", "o", "u"):
                z[gate] = z[gate] + P[f"U_{l + 1}^({gate})"] @ h_jl[l]
        i = sigmoid(z["i"])  # (9)
        o = sigmoid(z["o"]) if output_gate else np.ones(d)  # (11)
        u = np.tanh(z["u"])  # (12)
        c[j] = i * u  # (13)
        if kids[j]:
            for k in range(N):
                z_f = P["b^(f)"].copy()
                if inner_inputs:
                    z_f += P["W^(f)"] @ x_j
                for l in range(N):
                    z_f += P[f"U_{k + 1}{l + 1}^(f)"] @ h_jl[l]
                f_all[j, k] = sigmoid(z_f)  # (10)
                c[j] += f_all[j, k] * c_jl[k]  # (13)
        h[j] = o * np.tanh(c[j])  # (14)
        q["i"][j], q["o"][j], q["u"][j] = i, o, u
    return {**q, "f": f_all, "c": c, "h": h, "out": h.copy()}


def forget_symbols(arity: int) -> list:
    """delta_f's symbol per child slot, as the cell names them."""
    if arity == 2:
        return ["f_l", "f_r"]
    return ["f"] if arity == 1 else [f"f_{k + 1}" for k in range(arity)]


def backward(
    tree: Tree,
    x: np.ndarray,
    params: dict,
    d_h: np.ndarray,
    arity: int = 2,
    inner_inputs: bool = False,
    output_gate: bool = True,
    masks=None,
) -> dict:
    """Eqs. 9-14 reversed node by node, parents first (module docstring)."""
    P = paper_parameters(params, arity)
    q = forward(tree, x, params, arity, inner_inputs, output_gate, masks)
    d, d_x = P["W^(i)"].shape
    mask = np.ones(d) if masks is None else np.asarray(masks[0])
    n, N = tree.n_nodes, arity
    kids = tree.children()
    G = {name: np.zeros_like(value) for name, value in P.items()}
    eps_h = np.array(d_h, dtype=np.float64)  # the head's share; the parent's added below
    eps_c = np.zeros((n, d))  # the parent's share, then eps_c in full
    delta = {gate: np.zeros((n, d)) for gate in ("i", "o", "u")}
    delta_f = undefined(n, N, d)
    d_word = np.zeros((x.shape[0], d_x))
    for j in range(n - 1, -1, -1):  # parents first
        i, o, u, c = q["i"][j], q["o"][j], q["u"][j], q["c"][j]
        t = np.tanh(c)
        delta["o"][j] = eps_h[j] * t * o * (1 - o) if output_gate else 0.0  # (14), (11)
        eps_c[j] = eps_c[j] + eps_h[j] * o * (1 - t * t)  # (14)
        delta["i"][j] = eps_c[j] * u * i * (1 - i)  # (13), (9)
        delta["u"][j] = eps_c[j] * i * (1 - u * u)  # (13), (12)
        slots = kids[j] + [None] * (N - len(kids[j]))
        if kids[j]:
            for k, child in enumerate(slots):
                f = q["f"][j, k]
                # E3: a missing child's c = 0, so its forget gate's delta is 0
                c_k = np.zeros(d) if child is None else q["c"][child]
                delta_f[j, k] = eps_c[j] * c_k * f * (1 - f)  # (13), (10)
                G["b^(f)"] += delta_f[j, k]  # E1: one b^(f) for all k
                if child is not None:
                    eps_c[child] = eps_c[j] * f  # (13)
        for l, child in enumerate(slots):
            if child is None:
                continue
            h_jl = q["h"][child] * mask  # h~_jl, what (9)-(12) read
            share = np.zeros(d)
            for gate in ("i", "o", "u"):
                share += P[f"U_{l + 1}^({gate})"].T @ delta[gate][j]  # (9), (11), (12)
                G[f"U_{l + 1}^({gate})"] += np.outer(delta[gate][j], h_jl)
            for k in range(N):
                share += P[f"U_{k + 1}{l + 1}^(f)"].T @ delta_f[j, k]  # (10)
                G[f"U_{k + 1}{l + 1}^(f)"] += np.outer(delta_f[j, k], h_jl)
            eps_h[child] += share * mask
        for gate in ("i", "o", "u"):
            G[f"b^({gate})"] += delta[gate][j]
        if tree.token_index[j] >= 0 and (inner_inputs or not kids[j]):  # E2: x at leaves
            token, x_j = tree.token_index[j], x[tree.token_index[j]]
            for gate in ("i", "o", "u"):
                G[f"W^({gate})"] += np.outer(delta[gate][j], x_j)
                d_word[token] += P[f"W^({gate})"].T @ delta[gate][j]
            if inner_inputs and kids[j]:  # W^(f) x_j in every forget gate
                total = delta_f[j].sum(axis=0)
                G["W^(f)"] += np.outer(total, x_j)
                d_word[token] += P["W^(f)"].T @ total
    out = {"eps_h": eps_h, "eps_c": eps_c, "delta_o": delta["o"], "delta_i": delta["i"], "delta_u": delta["u"]}
    for k, symbol in enumerate(forget_symbols(N)):
        out[f"delta_{symbol}"] = delta_f[:, k]
    return {**out, "grads": code_gradients(G, arity, inner_inputs), "d_x": d_word}


def code_gradients(G: dict, arity: int, inner_inputs: bool) -> dict:
    """The paper matrices' gradients in the cell's layout (``paper_parameters``
    inverted): W (d_x, 3d or 4d), U (N d, (3+N) d), b (4d,)."""
    gates = GATES if inner_inputs else GATES[:3]
    U = np.vstack(
        [
            code_columns(
                [G[f"U_{l + 1}^({gate})"] for gate in GATES[:3]] + [G[f"U_{k + 1}{l + 1}^(f)"] for k in range(arity)]
            )
            for l in range(arity)
        ]
    )
    return {
        "W": code_columns([G[f"W^({gate})"] for gate in gates]),
        "U": U,
        "b": np.concatenate([G[f"b^({gate})"] for gate in GATES]),
    }
