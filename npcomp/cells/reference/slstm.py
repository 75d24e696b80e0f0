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

The backward is Zhu's eqs. 8-14 node by node from the root down, with the
errata of docs/cells/slstm.md where the print is wrong or silent (each line
names its equation; eps = dJ/d state, delta = dJ/d pre-activation):

    eps_t^h  = dJ/dh_t: the head's, plus the parent's shares          (8), Z2
    delta_t^o = eps_t^h * tanh(c_t) * o_t (1 - o_t)                   (9)
    eps_t^c  = the parent's share (13) or (14)
               + eps_t^h * o_t * (1 - tanh(c_t)^2)  (Z1: eps_t^h; Z3: tanh')
               + W_co^T delta_t^o
    delta_t^fl = eps_t^c * c^L * f^L_t (1 - f^L_t)                    (10)
    delta_t^fr = eps_t^c * c^R * f^R_t (1 - f^R_t)                    (11)
    delta_t^i  = eps_t^c * tanh(x_t) * i_t (1 - i_t)                  (12)
    delta_t^x  = eps_t^c * i_t * (1 - tanh(x_t)^2)                    Z2, not printed
    eps^c(L) = eps_t^c * f^L_t + W_ci^LT delta^i + W_cfl^LT delta^fl + W_cfr^LT delta^fr   (13)
    eps^c(R) = the same with f^R_t and the R matrices                 (14)
    eps^h(S) += sum over g in i, fl, fr, x, o of W_hg^ST delta^g      Z2, not printed

``backward(tree, x, params, d_h)``, d_h (n, d) the head's dJ/dh per node in
tree order, returns ``eps_h``, ``eps_c``, ``delta_o``, ``delta_fl``,
``delta_fr``, ``delta_i``, ``delta_x`` (one row per node; a delta is NaN at
a leaf, which has no memory block), ``grads`` (dJ/d each of the cell's
parameters, in its layout) and ``d_x`` (T, d_x), dJ/dx per token.
"""

from __future__ import annotations

import numpy as np

from npcomp.data.readers.formats import Tree
from .functions import sigmoid, undefined

GATES = ("i", "fl", "fr", "x", "o")  # column blocks of the code's W_h and b
PEEPHOLE_GATES = ("i", "fl", "fr")  # column blocks of W_c
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
    for t in range(n):  # children before parents
        if not kids[t]:  # a leaf: no memory block, c = 0
            word = x[tree.token_index[t]]
            h[t] = W["W_leaf"] @ word if "W_leaf" in W else word
            continue
        h_L, c_L = h[kids[t][0]], c[kids[t][0]]
        h_R, c_R = (h[kids[t][1]], c[kids[t][1]]) if len(kids[t]) == 2 else (zero, zero)
        i = sigmoid(W["W_hi^L"] @ h_L + W["W_hi^R"] @ h_R + W["W_ci^L"] @ c_L + W["W_ci^R"] @ c_R + W["b_i"])  # (1)
        f_L = sigmoid(
            W["W_hfl^L"] @ h_L + W["W_hfl^R"] @ h_R + W["W_cfl^L"] @ c_L + W["W_cfl^R"] @ c_R + W["b_fl"]
        )  # (2)
        f_R = sigmoid(
            W["W_hfr^L"] @ h_L + W["W_hfr^R"] @ h_R + W["W_cfr^L"] @ c_L + W["W_cfr^R"] @ c_R + W["b_fr"]
        )  # (3)
        x_t = W["W_hx^L"] @ h_L + W["W_hx^R"] @ h_R + W["b_x"]  # (4)
        c[t] = f_L * c_L + f_R * c_R + i * np.tanh(x_t)  # (5)
        o = sigmoid(W["W_ho^L"] @ h_L + W["W_ho^R"] @ h_R + W["W_co"] @ c[t] + W["b_o"])  # (6)
        h[t] = o * np.tanh(c[t])  # (7)
        q["i"][t], q["f^L"][t], q["f^R"][t], q["x"][t], q["o"][t] = i, f_L, f_R, x_t, o
    return {**q, "c": c, "h": h, "out": h.copy()}


def backward(tree: Tree, x: np.ndarray, params: dict, d_h: np.ndarray) -> dict:
    """Eqs. 8-14 node by node, parents first (module docstring)."""
    W = paper_parameters(params)
    q = forward(tree, x, params)
    d = W["W_co"].shape[0]
    n = tree.n_nodes
    kids = tree.children()
    G = {name: np.zeros_like(value) for name, value in W.items()}
    eps_h = np.array(d_h, dtype=np.float64)  # (8): the head's; the parent adds below
    eps_c = np.zeros((n, d))  # the parent's (13)/(14), then in full
    delta = {gate: undefined(n, d) for gate in GATES}
    d_word = np.zeros(x.shape)
    zero = np.zeros(d)
    for t in range(n - 1, -1, -1):  # parents first
        if not kids[t]:  # a leaf: h = x (or W_leaf x), c = 0 a constant: eps_c stops here
            token = tree.token_index[t]
            if "W_leaf" in W:
                G["W_leaf"] += np.outer(eps_h[t], x[token])
                d_word[token] += W["W_leaf"].T @ eps_h[t]
            else:
                d_word[token] += eps_h[t]
            continue
        sides = kids[t] + [None] * (2 - len(kids[t]))  # L, R (R missing: unary)
        h_S = [zero if child is None else q["h"][child] for child in sides]
        c_S = [zero if child is None else q["c"][child] for child in sides]
        i, f_L, f_R, o = q["i"][t], q["f^L"][t], q["f^R"][t], q["o"][t]
        tanh_c, tanh_x = np.tanh(q["c"][t]), np.tanh(q["x"][t])
        delta["o"][t] = eps_h[t] * tanh_c * o * (1 - o)  # (9)
        # (13)/(14) own terms: Z1, the print's eps_{t+1}^h is eps_t^h; Z3, g' = tanh'
        eps_c[t] = eps_c[t] + eps_h[t] * o * (1 - tanh_c**2) + W["W_co"].T @ delta["o"][t]
        delta["fl"][t] = eps_c[t] * c_S[0] * f_L * (1 - f_L)  # (10)
        delta["fr"][t] = eps_c[t] * c_S[1] * f_R * (1 - f_R)  # (11)
        delta["i"][t] = eps_c[t] * tanh_x * i * (1 - i)  # (12)
        delta["x"][t] = eps_c[t] * i * (1 - tanh_x**2)  # Z2: not printed
        for side, child, forget, h_child, c_child in zip("LR", sides, (f_L, f_R), h_S, c_S):
            for gate in GATES:
                G[f"W_h{gate}^{side}"] += np.outer(delta[gate][t], h_child)
            for gate in PEEPHOLE_GATES:
                G[f"W_c{gate}^{side}"] += np.outer(delta[gate][t], c_child)
            if child is None:
                continue
            # (13) for the left child, (14) for the right: the child's side chooses
            eps_c[child] = eps_c[t] * forget + sum(W[f"W_c{gate}^{side}"].T @ delta[gate][t] for gate in PEEPHOLE_GATES)
            # Z2: what reaches the child's h through all five pre-activations
            eps_h[child] += sum(W[f"W_h{gate}^{side}"].T @ delta[gate][t] for gate in GATES)
        G["W_co"] += np.outer(delta["o"][t], q["c"][t])
        for gate in GATES:
            G[f"b_{gate}"] += delta[gate][t]
    return {
        "eps_h": eps_h,
        "delta_o": delta["o"],
        "eps_c": eps_c,
        "delta_fl": delta["fl"],
        "delta_fr": delta["fr"],
        "delta_i": delta["i"],
        "delta_x": delta["x"],
        "grads": code_gradients(G),
        "d_x": d_word,
    }


def code_gradients(G: dict) -> dict:
    """Zhu's matrices' gradients in the cell's layout (``paper_parameters``
    inverted): W_h (2d, 5d), W_c (2d, 3d), W_co, b, and W_leaf if present."""
    out = {
        "W_h": np.vstack([np.hstack([G[f"W_h{gate}^{side}"].T for gate in GATES]) for side in "LR"]),
        "W_c": np.vstack([np.hstack([G[f"W_c{gate}^{side}"].T for gate in PEEPHOLE_GATES]) for side in "LR"]),
        "W_co": G["W_co"].T,
        "b": np.concatenate([G[f"b_{gate}"] for gate in GATES]),
    }
    if "W_leaf" in G:
        out["W_leaf"] = G["W_leaf"].T
    return out
