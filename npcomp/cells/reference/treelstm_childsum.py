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

The backward, node by node from the root down (the parent has added its
shares to eps_h_j, eps_c_j):

    delta_o  = eps_h_j * tanh(c_j) * o_j (1 - o_j)            reverses (8), (5)
    eps_c_j += eps_h_j * o_j * (1 - tanh(c_j)^2)              reverses (8)
    delta_i  = eps_c_j * u_j * i_j (1 - i_j)                  reverses (7), (3)
    delta_u  = eps_c_j * i_j * (1 - u_j^2)                    reverses (7), (6)
    delta_fk = eps_c_j * c_k * f_jk (1 - f_jk),  k in C(j)    reverses (7), (4)
    eps_c_k  = eps_c_j * f_jk                                 reverses (7)
    eps_h_k += U^(i)T delta_i + U^(o)T delta_o + U^(u)T delta_u    reverses (3), (5), (6), (2)
               + U^(f)T delta_fk                              reverses (4)

``backward(tree, x, params, d_h, output_gate=True)``, d_h (n, d) the head's
dJ/dh per node in tree order, returns ``eps_h``, ``eps_c``, ``delta_i``,
``delta_o``, ``delta_u`` and ``delta_f`` (row k: the delta of the forget gate
for child k, NaN at the root), ``grads`` (dJ/d each of the cell's
parameters, in its layout) and ``d_x`` (T, d_x), dJ/dx per token.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import code_columns, column_block, sigmoid, undefined, vector_block

GATES = ("i", "o", "u", "f")  # column blocks of the code's W and b; U has i|o|u
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
    for j, kids in enumerate(tree.children()):  # children before parents
        x_j = x[tree.token_index[j]] if tree.token_index[j] >= 0 else np.zeros(d_x)
        h_tilde = np.zeros(d)
        for k in kids:
            h_tilde = h_tilde + h[k]  # (2)
        i = sigmoid(P["W^(i)"] @ x_j + P["U^(i)"] @ h_tilde + P["b^(i)"])  # (3)
        o = sigmoid(P["W^(o)"] @ x_j + P["U^(o)"] @ h_tilde + P["b^(o)"])  # (5)
        if not output_gate:
            o = np.ones(d)
        u = np.tanh(P["W^(u)"] @ x_j + P["U^(u)"] @ h_tilde + P["b^(u)"])  # (6)
        c[j] = i * u  # (7)
        for k in kids:
            f_jk = sigmoid(P["W^(f)"] @ x_j + P["U^(f)"] @ h[k] + P["b^(f)"])  # (4)
            c[j] += f_jk * c[k]  # (7)
            q["f"][k] = f_jk
        h[j] = o * np.tanh(c[j])  # (8)
        q["h~"][j], q["i"][j], q["o"][j], q["u"][j] = h_tilde, i, o, u
    return {**q, "c": c, "h": h, "out": h.copy()}


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray, output_gate: bool = True) -> dict:
    """Eqs. 2-8 reversed node by node, parents first (module docstring)."""
    P = paper_parameters(params)
    q = forward(tree, x, params, output_gate)
    d, d_x = P["W^(i)"].shape
    n = tree.n_nodes
    G = {name: np.zeros_like(value) for name, value in P.items()}
    eps_h = np.array(d_h, dtype=np.float64)
    eps_c = np.zeros((n, d))
    delta = {gate: np.zeros((n, d)) for gate in ("i", "o", "u")}
    delta["f"] = undefined(n, d)
    d_word = np.zeros((x.shape[0], d_x))
    kids = tree.children()
    for j in range(n - 1, -1, -1):  # parents first
        i, o, u, c = q["i"][j], q["o"][j], q["u"][j], q["c"][j]
        t = np.tanh(c)
        delta["o"][j] = eps_h[j] * t * o * (1 - o)  # (8), (5)
        eps_c[j] = eps_c[j] + eps_h[j] * o * (1 - t * t)  # (8)
        delta["i"][j] = eps_c[j] * u * i * (1 - i)  # (7), (3)
        delta["u"][j] = eps_c[j] * i * (1 - u * u)  # (7), (6)
        # CS2: a node without a word reads x_j = 0, so its W terms vanish
        x_j = x[tree.token_index[j]] if tree.token_index[j] >= 0 else np.zeros(d_x)
        forget_total = np.zeros(d)
        through_h_tilde = sum(P[f"U^({gate})"].T @ delta[gate][j] for gate in ("i", "o", "u"))
        for k in kids[j]:
            f = q["f"][k]
            delta["f"][k] = eps_c[j] * q["c"][k] * f * (1 - f)  # (7), (4)
            eps_c[k] = eps_c[j] * f  # (7)
            eps_h[k] += through_h_tilde + P["U^(f)"].T @ delta["f"][k]  # (3)-(6), (2)
            G["U^(f)"] += np.outer(delta["f"][k], q["h"][k])
            forget_total += delta["f"][k]
        for gate in ("i", "o", "u"):
            G[f"U^({gate})"] += np.outer(delta[gate][j], q["h~"][j])
        for gate, value in (("i", delta["i"][j]), ("o", delta["o"][j]), ("u", delta["u"][j]), ("f", forget_total)):
            G[f"W^({gate})"] += np.outer(value, x_j)
            G[f"b^({gate})"] += value
            if tree.token_index[j] >= 0:
                d_word[tree.token_index[j]] += P[f"W^({gate})"].T @ value
    grads = {
        "W": code_columns([G[f"W^({gate})"] for gate in GATES]),
        "U": code_columns([G[f"U^({gate})"] for gate in GATES[:3]]),
        "U_f": G["U^(f)"].T,
        "b": np.concatenate([G[f"b^({gate})"] for gate in GATES]),
    }
    return {
        "eps_h": eps_h,
        "eps_c": eps_c,
        "delta_o": delta["o"],
        "delta_i": delta["i"],
        "delta_u": delta["u"],
        "delta_f": delta["f"],
        "grads": grads,
        "d_x": d_word,
    }
