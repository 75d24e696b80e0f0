r"""S-LSTM (Zhu, Sobhani & Guo 2015, Sec. 3, forward eqs. 1-7, backward eqs. 8-14).

A memory block at every inner node of a binary tree, fed by its left child
(L) and right child (R).  Zhu index the children t-1 and the parent t+1.  In
the row-vector orientation the code computes (h, c are rows; ``h @ W`` is
the paper's W h, so every W below is the transpose of Zhu's matrix of the
same name):

    i_t   = sigma( h^L W_hi^L  + h^R W_hi^R  + c^L W_ci^L  + c^R W_ci^R  + b_i  )   (1)
    f^L_t = sigma( h^L W_hfl^L + h^R W_hfl^R + c^L W_cfl^L + c^R W_cfl^R + b_fl )   (2)
    f^R_t = sigma( h^L W_hfr^L + h^R W_hfr^R + c^L W_cfr^L + c^R W_cfr^R + b_fr )   (3)
    x_t   =        h^L W_hx^L  + h^R W_hx^R                              + b_x      (4)
    c_t   = f^L_t * c^L + f^R_t * c^R + i_t * tanh(x_t)                             (5)
    o_t   = sigma( h^L W_ho^L  + h^R W_ho^R  + c_t W_co                  + b_o  )   (6)
    h_t   = o_t * tanh(c_t)                                                         (7)

h^L, c^L (h^R, c^R) are the left (right) child's states; a missing child
(the right one of a unary node) contributes h = c = 0.  o_t peeks at the
node's own new cell c_t, so o is computed after c: two products per level,
[h^L | h^R | c^L | c^R] times the stacked children weights, then c_t W_co.

Leaves have no memory block: with d_x = d a leaf's h is its word vector,
with d_x != d a linear projection h = x W_leaf (no bias, no non-linearity,
so the word vector itself is what composes); c = 0 at every leaf.

Backward as implemented (eps = dJ/d state, delta = dJ/d pre-activation),
inner levels from the root down; the parent p = t+1 has already added its
shares into eps_h_t and eps_c_t:

    eps_h_t  = dJ/dh_t: the head's term + the parent's share (below)         (8)
    delta_o  = eps_h_t * tanh(c_t) * o_t (1 - o_t)                           (9)
    eps_c_t  = eps_h_t * o_t * (1 - tanh(c_t)^2) + delta_o W_co^T            (13), (14)
               + (t left child of p)  eps_c_p * f^L_p + delta_i,p W_ci^L^T
                                      + delta_fl,p W_cfl^L^T + delta_fr,p W_cfr^L^T   (13)
               + (t right child of p) eps_c_p * f^R_p + delta_i,p W_ci^R^T
                                      + delta_fl,p W_cfl^R^T + delta_fr,p W_cfr^R^T   (14)
    delta_fl = eps_c_t * c^L * f^L_t (1 - f^L_t)                             (10)
    delta_fr = eps_c_t * c^R * f^R_t (1 - f^R_t)                             (11)
    delta_i  = eps_c_t * tanh(x_t) * i_t (1 - i_t)                           (12)
    delta_x  = eps_c_t * i_t * (1 - tanh(x_t)^2)                     (not printed)
    eps_h(left child)  += delta_i W_hi^L^T + delta_fl W_hfl^L^T + delta_fr W_hfr^L^T
                          + delta_x W_hx^L^T + delta_o W_ho^L^T       (not printed)
    eps_h(right child) += the same with the R matrices                (not printed)

Printed (14) has eps_{t+1}^h in its first term: the gradient check proves it
is eps_t^h as in (13) (docs/cells/slstm.md).  g'(c_t) = 1 - tanh(c_t)^2.
Weight gradients, summed over the inner nodes t:

    dW_h  = sum_t [h^L | h^R]^T [delta_i | delta_fl | delta_fr | delta_x | delta_o]
    dW_c  = sum_t [c^L | c^R]^T [delta_i | delta_fl | delta_fr]
    dW_co = sum_t c_t^T delta_o,    db = sum_t [delta_i | ... | delta_o]
    leaves: eps_h of word w = sum of eps_h over its leaves;  dx_w = eps_h_w
            (d_x = d), or dW_leaf = x^T eps_h_w and dx_w = eps_h_w W_leaf^T

Parameters (d = hidden_dim, d_x = input_dim; gate columns i|fl|fr|x|o, each d wide):

===========================  =========================================  ===========
paper (transposed)           code                                       shape
===========================  =========================================  ===========
W_hg^L, g in i,fl,fr,x,o     ``W_h[0:d, g-block]``                      (d, d)
W_hg^R                       ``W_h[d:2d, g-block]``                     (d, d)
W_cg^L, g in i,fl,fr         ``W_c[0:d, g-block]``                      (d, d)
W_cg^R                       ``W_c[d:2d, g-block]``                     (d, d)
W_co                         ``W_co``                                   (d, d)
b_i, b_fl, b_fr, b_x, b_o    ``b`` blocks i|fl|fr|x|o                   (5d,)
leaf projection (ours)       ``W_leaf`` (only when d_x != d)            (d_x, d)
i, f^L, f^R, tanh(x), o      ``cache.gates[t]`` blocks 0..4             (5d,)
x_t of (4), before the tanh  ``cache.x_t[t]``                           (d,)
[h^L | h^R | c^L | c^R]      ``cache.hc[t]``                            (4d,)
c_t, tanh(c_t)               ``cache.c[t]``, ``cache.tanh_c[t]``        (d,)
eps_h, eps_c                 ``d_h[t]``, ``eps_c[t]``                   (d,)
delta_i .. delta_o           ``delta[t]`` blocks i|fl|fr|x|o            (5d,)
===========================  =========================================  ===========

``backward`` keeps eps_h, eps_c and delta on the cache for ``backward_terms``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import ONE, uniform_fan_in
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import (
    BinaryCell,
    Part,
    StateTerm,
    Term,
    TermParts,
    errata_term,
    head_part,
    node_rows,
    nudge_rows,
    reasons,
)
from npcomp.cells.kernels.levels import ROW_PAD, binary_children, padded_stop, sigmoid

# gate column blocks of W_h, b, gates and delta (W_c has the first three)
GATES = ("i", "fl", "fr", "x", "o")
I, F_LEFT, F_RIGHT, X, O = range(5)
PEEPHOLE_GATES = 3  # i, fl, fr read the children's cells (eqs. 1-3)
SIDES = ("L", "R")


@dataclass
class SLSTMCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (L,) row of x each leaf reads
    hc: np.ndarray  # (n + ROW_PAD, 4d) [h^L | h^R | c^L | c^R] per node
    gates: np.ndarray  # (n + ROW_PAD, 5d) i | f^L | f^R | tanh(x) | o
    c: np.ndarray  # (n, d) memory cells (0 at leaves)
    tanh_c: np.ndarray  # (n, d)
    x_t: np.ndarray  # (n, d) x_t of eq. 4 before its tanh (0 at leaves)
    h: np.ndarray  # (n, d) hidden states, the forward's output
    # what the backward leaves for ``backward_terms``: eps_h, eps_c (n, d) and
    # the gate deltas (n + ROW_PAD, 5d), columns as ``gates``
    eps_h: np.ndarray | None = None
    eps_c: np.ndarray | None = None
    delta: np.ndarray | None = None


class SLSTM(BinaryCell):
    """Zhu et al.'s S-LSTM over binary trees; ``forward``/``backward`` over a forest."""

    name = "slstm"

    def __init__(self, input_dim: int, hidden_dim: int, forget_bias: float = 0.0):
        self.forget_bias = forget_bias
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.projected = input_dim != hidden_dim

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        shapes = [("W_h", (2 * d, 5 * d)), ("W_c", (2 * d, PEEPHOLE_GATES * d)), ("W_co", (d, d)), ("b", (5 * d,))]
        if self.projected:
            shapes.append(("W_leaf", (self.input_dim, d)))
        return shapes

    def report_slices(self) -> dict:
        """Each of Zhu's matrices as a named sub-block: ``W.hi.L`` is W_hi^L, ..."""
        d = self.hidden_dim
        out = {}
        for g, gate in enumerate(GATES):
            columns = slice(g * d, (g + 1) * d)
            for s, side in enumerate(SIDES):
                rows = slice(s * d, (s + 1) * d)
                out[f"W.h{gate}.{side}"] = ("W_h", (rows, columns))
                if g < PEEPHOLE_GATES:
                    out[f"W.c{gate}.{side}"] = ("W_c", (rows, columns))
            out[f"b.{gate}"] = ("b", (columns,))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """Uniform +-1/sqrt(fan-in), the fan-in of each gate: i, f^L, f^R read
        4d inputs, x reads 2d, o reads 3d (both children's h and c_t)."""
        d = self.hidden_dim
        fan_in = {I: 4 * d, F_LEFT: 4 * d, F_RIGHT: 4 * d, X: 2 * d, O: 3 * d}
        for g, inputs in fan_in.items():
            columns = slice(g * d, (g + 1) * d)
            uniform_fan_in(params["W_h"][:, columns], inputs, rng)
            if g < PEEPHOLE_GATES:
                uniform_fan_in(params["W_c"][:, columns], inputs, rng)
            uniform_fan_in(params["b"][columns], inputs, rng)
        uniform_fan_in(params["W_co"], fan_in[O], rng)
        # the forget bias of activations.add_forget_bias, on both forget gates (this
        # cell's gate layout is i|fl|fr|x|o, not i|o|u|f)
        params["b"][F_LEFT * d : (F_RIGHT + 1) * d] += self.forget_bias
        if self.projected:
            uniform_fan_in(params["W_leaf"], self.input_dim, rng)

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d_x) vectors of the distinct words; word_index: (L,) the row of x
        each leaf (nodes 0..L-1) reads.  Returns h (n, d), cache.

        Level by level: gather the children's states, one product for the
        children terms of eqs. 1-4 and 6, vectorised gate functions, the cell
        (5) in a kernel, then c_t W_co and eqs. 6-7.  ``nudge``
        (interface.Nudge) moves one node's h or c where it is made: c_t after
        (5), before (6) and (7) read it; a leaf's c = 0 before its parent
        reads it.
        """
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        dtype = x.dtype
        children = binary_children(forest)
        stacked = _stacked_weights(params)
        bias, w_co = params["b"], params["W_co"]
        hc = np.zeros((n + ROW_PAD, 4 * d), dtype=dtype)
        gates = np.zeros((n + ROW_PAD, 5 * d), dtype=dtype)
        c = np.zeros((n, d), dtype=dtype)  # leaves keep c = 0
        tanh_c = np.zeros((n, d), dtype=dtype)
        x_t = np.zeros((n, d), dtype=dtype)
        h = np.empty((n, d), dtype=dtype)
        # leaves: the word vector, or its projection computed once per distinct word
        words = x @ params["W_leaf"] if self.projected else x
        h[:leaves] = words[word_index[:leaves]]
        nudge_rows(nudge, "h", h, 0, leaves)
        nudge_rows(nudge, "c", c, 0, leaves)
        with np.errstate(over="ignore"):  # exp overflow in the sigmoid gives exactly 0
            for start, stop in forest.levels(first=1):
                _gather_children(children, h, c, hc, start, stop)
                # children terms of eqs. 1-4 and 6 for the whole level; rows
                # padded, the extra rows belong to higher levels and are
                # overwritten when those are computed
                padded = padded_stop(start, stop)
                np.matmul(hc[start:padded], stacked, out=gates[start:padded])
                z = gates[start:stop]
                z += bias
                sigmoid(z[:, : PEEPHOLE_GATES * d])  # (1)-(3)
                x_t[start:stop] = z[:, X * d : O * d]  # (4)
                np.tanh(x_t[start:stop], out=z[:, X * d : O * d])  # tanh of (4)
                _cell_update(children, gates, c, start, stop)  # (5)
                nudge_rows(nudge, "c", c, start, stop)
                np.tanh(c[start:stop], out=tanh_c[start:stop])
                z[:, O * d :] += c[start:stop] @ w_co  # (6): c_t W_co
                sigmoid(z[:, O * d :])  # (6)
                np.multiply(z[:, O * d :], tanh_c[start:stop], out=h[start:stop])  # (7)
                nudge_rows(nudge, "h", h, start, stop)
        return h, SLSTMCache(x, word_index, hc, gates, c, tanh_c, x_t, h)

    def backward(self, params: dict, forest: Forest, cache: SLSTMCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dJ/dh from the head (overwritten: becomes eps_h).  Adds
        dJ/dparams into ``grads``; returns dJ/dx (U, d_x), per distinct word.

        Per inner level, root first: delta_o (9); the level's delta_o W_co^T;
        eps_c and delta_fl, delta_fr, delta_i, delta_x (10)-(13); one product of
        the level's deltas with the transposed stacked children weights; the
        routing of eps_h and eps_c to the left (13) and right (14) children.
        """
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        dtype = d_h.dtype
        children = binary_children(forest)
        stacked_transposed = np.ascontiguousarray(_stacked_weights(params).T)  # (5d, 4d)
        w_co_transposed = np.ascontiguousarray(params["W_co"].T)
        delta = np.zeros((n + ROW_PAD, 5 * d), dtype=dtype)
        eps_c = np.zeros((n, d), dtype=dtype)  # the parents' shares, then the full eps_c
        co_term = np.zeros((n, d), dtype=dtype)  # delta_o W_co^T, last term of (13)/(14)
        d_hc = np.zeros((n + ROW_PAD, 4 * d), dtype=dtype)
        for start, stop in forest.levels(first=1, downward=True):
            _output_gate_deltas(cache.gates, cache.tanh_c, d_h, delta, start, stop)  # (9)
            np.matmul(delta[start:stop, O * d :], w_co_transposed, out=co_term[start:stop])
            _cell_deltas(
                children, cache.gates, cache.c, cache.tanh_c, d_h, co_term, eps_c, delta, start, stop
            )  # (10)-(14)
            # [eps_h^L | eps_h^R | c^L part | c^R part] for every node's children
            padded = padded_stop(start, stop)
            np.matmul(delta[start:padded], stacked_transposed, out=d_hc[start:padded])
            _route_to_children(children, cache.gates, eps_c, d_hc, d_h, start, stop)
        inner = slice(leaves, n)
        hc, gate_deltas = cache.hc[inner], delta[inner]
        grads["W_h"] += hc[:, : 2 * d].T @ gate_deltas
        grads["W_c"] += hc[:, 2 * d :].T @ gate_deltas[:, : PEEPHOLE_GATES * d]
        grads["W_co"] += cache.c[inner].T @ gate_deltas[:, O * d :]
        grads["b"] += gate_deltas.sum(axis=0)
        cache.eps_h, cache.eps_c, cache.delta = d_h, eps_c, delta
        # leaves: d_h[:L] is now the full eps_h; c = 0 is constant, so eps_c stops here
        eps_h_words = sum_by_index(d_h[:leaves], cache.word_index[:leaves], cache.x.shape[0])
        if not self.projected:
            return eps_h_words
        grads["W_leaf"] += cache.x.T @ eps_h_words
        return eps_h_words @ params["W_leaf"].T

    def forward_terms(self, forest: Forest, cache: SLSTMCache) -> list:
        """i, f^L, f^R, x, o at the inner nodes (a leaf has no memory block; a
        unary node's f^R is computed, and multiplies c^R = 0), c (0 at the
        leaves) and h (a leaf's word vector, or its projection)."""
        inner, n, d = self._inner(forest), forest.n_nodes, self.hidden_dim

        def block(g):
            return node_rows(n, inner, cache.gates[inner, g * d : (g + 1) * d])

        return [
            Term("i", "1", block(I)),
            Term("f^L", "2", block(F_LEFT), "Z4"),
            Term("f^R", "3", block(F_RIGHT)),
            Term("x", "4", node_rows(n, inner, cache.x_t[inner])),
            Term("c", "5", cache.c),
            Term("o", "6", block(O)),
            Term("h", "7", cache.h),
        ]

    def backward_terms(self, forest: Forest, cache: SLSTMCache) -> list:
        """eps_h, eps_c and the deltas, numbered by Zhu's backward equations
        (8)-(14); the deltas at the inner nodes only.  A leaf's eps_c is
        dJ/dc^L (or c^R) of its parent: c = 0 there is a constant.  Errata
        where they apply: Z2 on the eps_h a parent sends its children, Z3 on
        g'(c_t) at every memory block, Z1 on a right child's own term (14)."""
        inner, n, d = self._inner(forest), forest.n_nodes, self.hidden_dim

        def block(g):
            return node_rows(n, inner, cache.delta[inner, g * d : (g + 1) * d])

        right_inner = inner[forest.position[inner] == 1] if inner.size else inner
        right_inner = right_inner[forest.parent[right_inner] >= 0]
        return [
            errata_term("eps_h", "8", cache.eps_h, (forest.parent >= 0, "Z2")),
            Term("delta_o", "9", block(O)),
            errata_term("eps_c", "13, 14", cache.eps_c, (right_inner, "Z1"), (inner, "Z3")),
            Term("delta_fl", "10", block(F_LEFT)),
            Term("delta_fr", "11", block(F_RIGHT)),
            Term("delta_i", "12", block(I)),
            Term("delta_x", "reverses 5, 4", block(X), "Z2"),
        ]

    def state_terms(self, forest: Forest, cache: SLSTMCache) -> list:
        """h and c at every node (a leaf's c = 0 included: its parent reads it)."""
        return [StateTerm("h", "eps_h"), StateTerm("c", "eps_c")]

    def term_parts(self, params: dict, forest: Forest, cache: SLSTMCache, d_out: np.ndarray) -> list:
        """eps_h_t: the head's (8) and, from the parent p, each gate's delta
        through the transposed W_h of t's side S (not printed, Z2).  eps_c_t:
        its own eps_t^h o_t g'(c_t) (Z1, Z3) and (W_co)^T delta_t^o, then the
        parent's terms of (13) for a left child, (14) for a right one:
        eps_c,p f^S_p and the three peepholes through W_c.^S."""
        n, d = forest.n_nodes, self.hidden_dim
        leaf = np.arange(n) < forest.n_leaves
        children = binary_children(forest)
        delta, gates = cache.delta[:n], cache.gates[:n]
        side_of = _sides(forest, children)
        o = gates[:, O * d :]
        own = cache.eps_h * o * (ONE - cache.tanh_c * cache.tanh_c)
        eps_c = [
            Part("eps_t^h o_t g'(c_t)", "reverses 7", own, reasons(n, (leaf, "leaf: no memory block (h is the word)"))),
            Part(
                "(W_co)^T delta_t^o",
                "reverses 6",
                delta[:, O * d :] @ params["W_co"].T,
                reasons(n, (leaf, "leaf: no output gate")),
            ),
        ]
        eps_h = [head_part(forest, d_out, "dJ/dh_t from the head", "8")]
        for k, side in enumerate(SIDES):
            nodes, parents, away = side_of[side]
            rows = slice(k * d, (k + 1) * d)
            forget = np.zeros((n, d))
            forget[nodes] = cache.eps_c[parents] * gates[parents, (F_LEFT + k) * d : (F_LEFT + k + 1) * d]
            eps_c.append(Part(f"eps_c,p f^{side}_p", f"reverses 5; printed as ({13 + k})", forget, away))
            for g in range(PEEPHOLE_GATES):
                eps_c.append(
                    Part(
                        f"(W_c{GATES[g]}^{side})^T delta_p^{GATES[g]}",
                        f"reverses {g + 1}; printed in ({13 + k})",
                        _through(delta, params["W_c"], nodes, parents, rows, g, d),
                        _peephole_zero(forest, children, side_of, side, g),
                    )
                )
            for g, gate in enumerate(GATES):
                eps_h.append(
                    Part(
                        f"(W_h{gate}^{side})^T delta_p^{gate}",
                        f"reverses {GATE_EQUATIONS[gate]}; not printed (Z2)",
                        _through(delta, params["W_h"], nodes, parents, rows, g, d),
                        _peephole_zero(forest, children, side_of, side, g),
                    )
                )
        unread = reasons(n, (leaf, "leaf: its c = 0 is a constant, no equation reads eps_c"))
        return [TermParts("eps_h", eps_h), TermParts("eps_c", eps_c, unread)]

    @staticmethod
    def _inner(forest: Forest) -> np.ndarray:
        """The nodes with a memory block: every node above the leaves."""
        return np.arange(forest.n_leaves, forest.n_nodes)


def _stacked_weights(params: dict) -> np.ndarray:
    """(4d, 5d): rows h^L | h^R | c^L | c^R, columns i | f^L | f^R | x | o.

    x and o read no child cell (eqs. 4, 6), so that block is 0; it is built
    here, not stored, so no always-zero parameter exists."""
    w_h, w_c = params["W_h"], params["W_c"]
    d = w_h.shape[0] // 2
    out = np.zeros((4 * d, 5 * d), dtype=w_h.dtype)
    out[: 2 * d] = w_h
    out[2 * d :, : PEEPHOLE_GATES * d] = w_c
    return out


# the equation each gate's pre-activation is: x_t's tanh is (5), its sum (4)
GATE_EQUATIONS = {"i": "1", "fl": "2", "fr": "3", "x": "5, 4", "o": "6"}


def _sides(forest: Forest, children: np.ndarray) -> dict:
    """Per side S in L, R: (the nodes that are their parent's S child, their
    parents, why a part of side S is 0 at every other node)."""
    n, parent, position = forest.n_nodes, forest.parent, forest.position
    root = parent < 0
    out = {}
    for k, side in enumerate(SIDES):
        nodes = np.flatnonzero(~root & (position == k))
        other = f"a {'right' if k == 0 else 'left'} child: ({14 - k}) has the other side's terms"
        out[side] = (nodes, parent[nodes], reasons(n, (root, "root: no parent"), (~root & (position != k), other)))
    return out


def _through(
    delta: np.ndarray, weights: np.ndarray, nodes: np.ndarray, parents: np.ndarray, rows: slice, gate: int, d: int
) -> np.ndarray:
    """(n, d): at each of ``nodes``, its parent's delta of ``gate`` through the
    transposed weights of the node's side (``rows`` of the stacked matrix)."""
    out = np.zeros((delta.shape[0], d))
    columns = slice(gate * d, (gate + 1) * d)
    out[nodes] = delta[parents, columns] @ weights[rows, columns].T
    return out


def _peephole_zero(forest: Forest, children: np.ndarray, side_of: dict, side: str, gate: int) -> np.ndarray:
    """Why a part through ``gate`` of the parent is 0 at a node of ``side``: on
    top of the other side's reasons, delta_fl,p = 0 where the parent's c^L is
    0 (a leaf), delta_fr,p where its c^R is (a leaf, or no right child)."""
    nodes, parents, away = side_of[side]
    out = away.copy()
    if gate in (F_LEFT, F_RIGHT):
        slot = gate - F_LEFT
        kid = children[parents, slot]
        name = f"c^{SIDES[slot]}"
        leaf_kid = (kid >= 0) & (kid < forest.n_leaves)
        out[nodes[leaf_kid]] = (
            f"{name} = 0: leaf"
            if SIDES[slot] == side
            else f"{name} = 0: the {'left' if slot == 0 else 'right'} sibling is a leaf"
        )
        out[nodes[kid < 0]] = f"{name} = 0: the parent has no right child (a unary node)"
    return out


@njit(cache=True, nogil=True)
def _gather_children(children, h, c, hc, start, stop):
    """hc[t] = [h^L | h^R | c^L | c^R] for the nodes of one level (missing: 0)."""
    d = h.shape[1]
    for t in range(start, stop):
        left, right = children[t, 0], children[t, 1]
        if left >= 0:
            hc[t, 0:d] = h[left]
            hc[t, 2 * d : 3 * d] = c[left]
        if right >= 0:
            hc[t, d : 2 * d] = h[right]
            hc[t, 3 * d : 4 * d] = c[right]


@njit(cache=True, nogil=True)
def _cell_update(children, gates, c, start, stop):
    """Eq. 5: c_t = f^L_t * c^L + f^R_t * c^R + i_t * tanh(x_t)."""
    d = c.shape[1]
    for t in range(start, stop):
        left, right = children[t, 0], children[t, 1]
        for q in range(d):
            cell = gates[t, I * d + q] * gates[t, X * d + q]
            if left >= 0:
                cell += gates[t, F_LEFT * d + q] * c[left, q]
            if right >= 0:
                cell += gates[t, F_RIGHT * d + q] * c[right, q]
            c[t, q] = cell


@njit(cache=True, nogil=True)
def _output_gate_deltas(gates, tanh_c, eps_h, delta, start, stop):
    """Eq. 9: delta_o = eps_h_t * tanh(c_t) * sigma'(o_t)."""
    d = tanh_c.shape[1]
    for t in range(start, stop):
        for q in range(d):
            o = gates[t, O * d + q]
            delta[t, O * d + q] = eps_h[t, q] * tanh_c[t, q] * o * (ONE - o)


@njit(cache=True, nogil=True)
def _cell_deltas(children, gates, c, tanh_c, eps_h, co_term, eps_c, delta, start, stop):
    """eps_c_t (the node's own terms of eqs. 13/14 added to its parent's), then
    eqs. 10-12 and delta_x.  co_term[t] = delta_o W_co^T; eps_c[t] holds the
    parent's share on entry and the full eps_c_t on return."""
    d = c.shape[1]
    for t in range(start, stop):
        left, right = children[t, 0], children[t, 1]
        for q in range(d):
            o = gates[t, O * d + q]
            tanh_cell = tanh_c[t, q]
            e = (
                eps_c[t, q]  # parent's terms of (13)/(14)
                + eps_h[t, q] * o * (ONE - tanh_cell * tanh_cell)  # eps_t^h o_t g'(c_t)
                + co_term[t, q]
            )  # (W_co)^T delta_t^o
            eps_c[t, q] = e
            i = gates[t, I * d + q]
            tanh_x = gates[t, X * d + q]
            if left >= 0:
                f = gates[t, F_LEFT * d + q]
                delta[t, F_LEFT * d + q] = e * c[left, q] * f * (ONE - f)  # (10)
            if right >= 0:
                f = gates[t, F_RIGHT * d + q]
                delta[t, F_RIGHT * d + q] = e * c[right, q] * f * (ONE - f)  # (11)
            delta[t, I * d + q] = e * tanh_x * i * (ONE - i)  # (12)
            delta[t, X * d + q] = e * i * (ONE - tanh_x * tanh_x)  # delta_x


@njit(cache=True, nogil=True)
def _route_to_children(children, gates, eps_c, d_hc, eps_h, start, stop):
    """The parent t's shares of its children's eps_h and eps_c.

    d_hc[t] = delta_t @ stacked^T = [eps_h^L part | eps_h^R part | peephole
    terms of (13) | peephole terms of (14)].  Each node has one parent, so its
    eps_c share is assigned; eps_h is added to the head's term.
    """
    d = eps_c.shape[1]
    for t in range(start, stop):
        left, right = children[t, 0], children[t, 1]
        if left >= 0:
            for q in range(d):
                # not printed: delta_{i,fl,fr,x,o} W_h{i,fl,fr,x,o}^L^T
                eps_h[left, q] += d_hc[t, q]
                # (13): eps_{t+1}^c f_{t+1}^L
                #       + (W_ci^L)^T delta^i + (W_cfl^L)^T delta^fl + (W_cfr^L)^T delta^fr
                eps_c[left, q] = eps_c[t, q] * gates[t, F_LEFT * d + q] + d_hc[t, 2 * d + q]
        if right >= 0:
            for q in range(d):
                # not printed: delta_{i,fl,fr,x,o} W_h{i,fl,fr,x,o}^R^T
                eps_h[right, q] += d_hc[t, d + q]
                # (14): eps_{t+1}^c f_{t+1}^R
                #       + (W_ci^R)^T delta^i + (W_cfl^R)^T delta^fl + (W_cfr^R)^T delta^fr
                eps_c[right, q] = eps_c[t, q] * gates[t, F_RIGHT * d + q] + d_hc[t, 3 * d + q]
