r"""Child-Sum Tree-LSTM (Tai, Socher & Manning 2015, Sec. 3.1, eqs. 2-8).

Over dependency trees this is the Dependency Tree-LSTM.  A node may have any
number of children, unordered: the gates i, o, u see the *sum* of the
children's hidden states, and each child k has a forget gate f_jk of its own
that sees that child's state only.  Equations in the row-vector orientation
the code computes (x, h are rows; ``h @ U`` is the paper's U h):

    h~_j = sum_{k in C(j)} h_k                                          (2)
    i_j  = sigma( x_j W^(i) + h~_j U^(i) + b^(i) )                      (3)
    f_jk = sigma( x_j W^(f) + h_k  U^(f) + b^(f) ),   k in C(j)         (4)
    o_j  = sigma( x_j W^(o) + h~_j U^(o) + b^(o) )                      (5)
    u_j  = tanh ( x_j W^(u) + h~_j U^(u) + b^(u) )                      (6)
    c_j  = i_j * u_j + sum_{k in C(j)} f_jk * c_k                       (7)
    h_j  = o_j * tanh(c_j)                                              (8)

Every node normally reads its word (dependency trees); a node reading none
(an inner node of a constituency tree) has x_j = 0, so only b remains of the
x terms.  A leaf must read a word.  At a leaf C(j) is empty: h~_j = 0, no
forget gate, c_j = i_j * u_j.  On a chain (one child per node, a word at
every node) eqs. 2-8 are the chain LSTM of Tai eq. 1.

Backward (eps = dLoss/d state, delta = dLoss/d pre-activation), per node,
parents first; the parent has already added its shares to eps_h_j and
eps_c_j:

    delta_o   = eps_h_j * tanh(c_j) * o_j (1 - o_j)              (reverses 8, 5)
    eps_c_j  += eps_h_j * o_j * (1 - tanh(c_j)^2)                (reverses 8)
    delta_i   = eps_c_j * u_j * i_j (1 - i_j)                    (reverses 7, 3)
    delta_u   = eps_c_j * i_j * (1 - u_j^2)                      (reverses 7, 6)
    delta_fk  = eps_c_j * c_k * f_jk (1 - f_jk),  k in C(j)      (reverses 7, 4)
    eps_c_k   = eps_c_j * f_jk                                   (reverses 7)
    eps_h_k  += [delta_i | delta_o | delta_u] U^T                (reverses 3, 5, 6 and 2:
                                                                  the same for every child)
              + delta_fk U^(f)T                                  (reverses 4: child k's own)
    dU   = sum_j h~_j^T [delta_i | delta_o | delta_u]_j
    dU_f = sum over (parent j, child k) of h_k^T delta_fk
    dW   = sum_{j reading x} x_j^T [delta_i | delta_o | delta_u | sum_k delta_fk]_j
    db   = sum_j [delta_i | delta_o | delta_u | sum_k delta_fk]_j
    d_x  = sum_{j reading x} [delta_i | delta_o | delta_u | sum_k delta_fk]_j W^T

Parameters (d = hidden_dim, d_x = input_dim); 4 d (d_x + d + 1) in all:

==============  ==========================  ===============================
paper           code                        shape
==============  ==========================  ===============================
W^(i,o,u,f)     ``W`` columns i|o|u|f       (d_x, 4d)
U^(i,o,u)       ``U`` columns i|o|u         (d, 3d)
U^(f)           ``U_f``                     (d, d)
b^(i,o,u,f)     ``b``                       (4d,): i|o|u|f
h~_j            ``cache.h_tilde[j]``        (d,)
h_k, f_jk       ``cache.h_child[e]``,       (d,) each, per edge e = (j, k)
                ``cache.forget[e]``
==============  ==========================  ===============================

``backward`` keeps eps_h, eps_c and the deltas on the cache for
``backward_terms``, which (like ``forward_terms`` for f_jk) shows delta_fk in
the row of child k.

The (parent, child) pairs are numbered as *edges*: the children of node j are
edges ``first_edge[j]`` .. ``first_edge[j+1] - 1`` in sentence order, so the
edges of a level of parents form one contiguous block and eq. 4's h_k U^(f)
is one matrix product per level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import ONE, add_forget_bias, uniform_fan_in
from .interface import (
    Cell,
    Part,
    StateTerm,
    Term,
    TermParts,
    head_part,
    node_rows,
    nudge_rows,
    reasons,
)

# level-batching helpers shared with the N-ary Tree-LSTM (same gate layout i|o|u)
from npcomp.cells.kernels.levels import ROW_PAD, add_product, padded_stop
from npcomp.cells.kernels.lstm_kernels import (
    gate_functions,
    hidden_state,
    sigmoid_from_expm1,
    tanh_argument,
    tanh_from_expm1,
)

GATE_NAMES = ("i", "o", "u", "f")


@dataclass
class TreeLSTMChildSumCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    input_row: np.ndarray  # (n,) row of ``inputs`` per node: its word, or U for none
    first_edge: np.ndarray  # (n + 1,) node j's child edges are first_edge[j]..first_edge[j+1]-1
    edge_child: np.ndarray  # (E,) the child of each edge
    h_tilde: np.ndarray  # (n + 3, d) sum of the children's h (eq. 2); 0 at leaves
    h_child: np.ndarray  # (E + 3, d) h of each edge's child
    gates: np.ndarray  # (n + 3, 3d) i|o|u activations
    forget: np.ndarray  # (E + 3, d) f_jk of each edge
    c: np.ndarray  # (n, d) memory cells
    tanh_c: np.ndarray  # (n, d)
    h: np.ndarray  # (n, d) hidden states, the forward's output
    # what the backward leaves for ``backward_terms``: eps_h, eps_c (n, d),
    # delta_i|o|u (n + 3, 3d) per node and delta_fk (E + 3, d) per edge
    eps_h: np.ndarray | None = None
    eps_c: np.ndarray | None = None
    delta: np.ndarray | None = None
    delta_f: np.ndarray | None = None


class TreeLSTMChildSum(Cell):
    """Child-Sum Tree-LSTM cell; ``forward``/``backward`` over a whole forest."""

    name = "treelstm-childsum"

    def __init__(self, input_dim: int, hidden_dim: int, output_gate: bool = True, forget_bias: float = 0.0):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_gate = output_gate
        self.forget_bias = forget_bias
        self.output_dim = hidden_dim

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return [("W", (self.input_dim, 4 * d)), ("U", (d, 3 * d)), ("U_f", (d, d)), ("b", (4 * d,))]

    def report_slices(self) -> dict:
        """Gate-level sub-blocks for per-parameter gradient-check reports."""
        d = self.hidden_dim
        out = {}
        for g, gate in enumerate(GATE_NAMES):
            columns = slice(g * d, (g + 1) * d)
            out[f"W.{gate}"] = ("W", (slice(None), columns))
            if gate != "f":  # U^(f) is the parameter U_f, reported whole
                out[f"U.{gate}"] = ("U", (slice(None), columns))
            out[f"b.{gate}"] = ("b", (columns,))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """Uniform +-1/sqrt(fan-in) (Le & Zuidema; Torch's nn.Linear), plus
        ``forget_bias`` on the forget block of b (``add_forget_bias``)."""
        uniform_fan_in(params["W"], self.input_dim, rng)
        uniform_fan_in(params["U"], self.hidden_dim, rng)
        uniform_fan_in(params["U_f"], self.hidden_dim, rng)
        uniform_fan_in(params["b"], self.hidden_dim, rng)
        add_forget_bias(params["b"], self.hidden_dim, self.forget_bias)

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d_x) vectors of the distinct words; word_index: (number of
        word-reading nodes,) the row of x each reads, in node order.
        Returns h (n, d), cache.

        Level by level: gather the children's h (their sum, eq. 2, and one row
        per edge), one product h~ U for the level's i|o|u, one product h_k U_f
        for its edges' forget gates, one kernel adding the x W + b terms from
        a table computed once per distinct word, one vectorised expm1 for
        the nodes' gates and one for the edges' (kernels/lstm_kernels.py), one
        kernel for the gates and the cell update, then tanh(c) and h.
        ``nudge`` (interface.Nudge) moves one node's c after eq. 7, before
        eq. 8 reads it, or its h after eq. 8.
        """
        n, d = forest.n_nodes, self.hidden_dim
        dtype = x.dtype
        leaves = forest.n_leaves
        n_words = x.shape[0]
        first_edge, edge_child = _edges(forest)
        input_row = _input_rows(forest, word_index, n_words)
        n_edges = edge_child.shape[0]
        h_tilde = np.zeros((n + ROW_PAD, d), dtype=dtype)
        h_child = np.zeros((n_edges + ROW_PAD, d), dtype=dtype)
        gates = np.empty((n + ROW_PAD, 3 * d), dtype=dtype)
        forget = np.empty((n_edges + ROW_PAD, d), dtype=dtype)
        c = np.empty((n, d), dtype=dtype)
        tanh_c = np.empty((n, d), dtype=dtype)
        h = np.empty((n, d), dtype=dtype)
        u, u_f, output_gate = params["U"], params["U_f"], self.output_gate
        # x_j W + b of eqs. 3-6 once per distinct word; the last row, b alone,
        # serves the nodes that read no word (x_j = 0)
        inputs = np.empty((n_words + 1, 4 * d), dtype=dtype)
        np.matmul(x, params["W"], out=inputs[:n_words])
        inputs[:n_words] += params["b"]
        inputs[n_words] = params["b"]
        with np.errstate(over="ignore"):  # exp overflow in the sigmoid gives exactly 0
            self._leaves_forward(inputs[:n_words], input_row[:leaves], (gates, c, tanh_c, h), nudge)

            def rows_forward(start: int, stop: int) -> None:
                first, last = first_edge[start], first_edge[stop]
                _gather_children(first_edge, edge_child, h, h_child, h_tilde, start, stop)
                # eqs. 3, 5, 6: h~ U straight into the gate rows (padding rows
                # belong to higher levels, which overwrite them later)
                padded = padded_stop(start, stop)
                np.matmul(h_tilde[start:padded], u, out=gates[start:padded])
                # eq. 4: h_k U_f for every edge of these nodes (padding rows, as
                # the gates', belong to the edges of higher levels)
                edge_stop = padded_stop(first, last)
                np.matmul(h_child[first:edge_stop], u_f, out=forget[first:edge_stop])
                _gate_exponents(input_row, inputs, first_edge, gates, forget, start, stop)
                np.expm1(gates[start:stop], out=gates[start:stop])
                np.expm1(forget[first:last], out=forget[first:last])
                _cell_update(first_edge, edge_child, gates, forget, c, start, stop, output_gate)  # eqs. 3-7
                if nudge is not None:
                    nudge_rows(nudge, "c", c, start, stop)
                hidden_state(gates, c, tanh_c, h, start, stop)  # eq. 8
                if nudge is not None:
                    nudge_rows(nudge, "h", h, start, stop)

            for start, stop in forest.levels(first=1):
                rows_forward(start, stop)
        cache = TreeLSTMChildSumCache(
            x, input_row, first_edge, edge_child, h_tilde, h_child, gates, forget, c, tanh_c, h
        )
        return h, cache

    def _leaves_forward(self, word_inputs: np.ndarray, leaf_rows: np.ndarray, states: tuple, nudge) -> None:
        """The leaves' gates, c, tanh(c) and h (``states``, written in place):
        h~ = 0 and no forget gate, so a leaf's state depends on its word only,
        computed once per distinct word (``word_inputs``: x W + b) and copied
        to the leaves (``leaf_rows``: the word each reads)."""
        gates, c, tanh_c, h = states
        d, leaves = self.hidden_dim, leaf_rows.shape[0]
        z = word_inputs[:, : 3 * d].copy()
        gate_functions(z, d, self.output_gate)  # eqs. 3, 5, 6
        cell = z[:, :d] * z[:, 2 * d :]  # eq. 7: c = i * u
        tanh_cell = np.tanh(cell)
        gates[:leaves] = z[leaf_rows]
        c[:leaves] = cell[leaf_rows]
        tanh_c[:leaves] = tanh_cell[leaf_rows]
        h[:leaves] = (z[:, d : 2 * d] * tanh_cell)[leaf_rows]  # eq. 8
        if nudge_rows(nudge, "c", c, 0, leaves):  # eq. 8 reads the moved c
            hidden_state(gates, c, tanh_c, h, 0, leaves)
        nudge_rows(nudge, "h", h, 0, leaves)

    def backward(
        self, params: dict, forest: Forest, cache: TreeLSTMChildSumCache, d_h: np.ndarray, grads: dict
    ) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten).  Adds dLoss/dparams
        into ``grads``; returns dLoss/dx (U, d_x), per distinct word.
        """
        n, d = forest.n_nodes, self.hidden_dim
        leaves = forest.n_leaves
        first_edge, edge_child = cache.first_edge, cache.edge_child
        n_edges = edge_child.shape[0]
        delta = np.zeros((n + ROW_PAD, 3 * d), dtype=d_h.dtype)  # delta_i|o|u per node
        delta_f = np.zeros((n_edges + ROW_PAD, d), dtype=d_h.dtype)  # delta_fk per edge
        # eps_c_k as routed by the parent, then eps_c_k in full
        d_c = np.zeros((n, d), dtype=d_h.dtype)
        # U^T and U_f^T laid out once: each level's products read them row by
        # row (BLAS takes longer per level from a transposed view)
        u_transposed = np.ascontiguousarray(params["U"].T)
        u_f_transposed = np.ascontiguousarray(params["U_f"].T)
        # a level's delta U^T and its edges' delta_f U_f^T: the widest level's
        # rows and edges (and the padding)
        bounds = forest.level_ptr
        d_h_tilde = np.empty((int(np.diff(bounds).max()) + ROW_PAD, d), dtype=d_h.dtype)
        d_h_child = np.empty((int(np.diff(first_edge[bounds]).max()) + ROW_PAD, d), dtype=d_h.dtype)

        def rows_backward(start: int, stop: int) -> None:
            _gate_deltas(
                first_edge,
                edge_child,
                cache.gates,
                cache.forget,
                cache.c,
                cache.tanh_c,
                d_h,
                d_c,
                delta,
                delta_f,
                start,
                stop,
            )
            first, last = first_edge[start], first_edge[stop]
            # reverses eqs. 3, 5, 6 (h~ U) and 2: one row per parent, shared by its children
            padded = padded_stop(start, stop)
            np.matmul(delta[start:padded], u_transposed, out=d_h_tilde[: padded - start])
            # reverses eq. 4 (h_k U_f): one row per edge, for its child only
            padded = padded_stop(first, last)
            np.matmul(delta_f[first:padded], u_f_transposed, out=d_h_child[: padded - first])
            _route_to_children(first_edge, edge_child, d_h_tilde, d_h_child, d_h, start, stop)

        for start, stop in forest.levels(first=1, downward=True):
            rows_backward(start, stop)
        # dU over the inner nodes and dU_f over the edges
        add_product(grads["U"], cache.h_tilde[leaves:n], delta[leaves:n])
        add_product(grads["U_f"], cache.h_child[:n_edges], delta_f[:n_edges])
        _gate_deltas(
            first_edge,
            edge_child,
            cache.gates,
            cache.forget,
            cache.c,
            cache.tanh_c,
            d_h,
            d_c,
            delta,
            delta_f,
            0,
            leaves,
        )
        n_words = cache.x.shape[0]
        # dLoss/d(x_j W + b) summed per row of the input table: distinct words,
        # then the nodes without a word
        delta_input = _input_deltas(cache.input_row, first_edge, delta, delta_f, n_words + 1)
        add_product(grads["W"], cache.x, delta_input[:n_words])
        grads["b"] += delta_input.sum(axis=0)
        d_x = delta_input[:n_words] @ params["W"].T
        cache.eps_h, cache.eps_c, cache.delta, cache.delta_f = d_h, d_c, delta, delta_f
        return d_x

    def forward_terms(self, forest: Forest, cache: TreeLSTMChildSumCache) -> list:
        """h~, i, f, o, u, c, h; f_jk in the row of its child k (NaN at roots),
        as the reference module returns it."""
        n, d = forest.n_nodes, self.hidden_dim
        gates, edges = cache.gates, cache.edge_child.shape[0]
        return [
            Term("h~", "2", cache.h_tilde[:n], "CS3"),
            Term("i", "3", gates[:n, :d], "CS2"),
            Term("f", "4", node_rows(n, cache.edge_child, cache.forget[:edges]), "CS2"),
            Term("o", "5", gates[:n, d : 2 * d], "CS2"),
            Term("u", "6", gates[:n, 2 * d : 3 * d], "CS2"),
            Term("c", "7", cache.c, "CS3"),
            Term("h", "8", cache.h),
        ]

    def backward_terms(self, forest: Forest, cache: TreeLSTMChildSumCache) -> list:
        """eps_h, eps_c and the gate deltas (docs/cells/treelstm_childsum.md);
        delta_f in the row of the child its forget gate reads, like f."""
        n, d = forest.n_nodes, self.hidden_dim
        delta, edges = cache.delta, cache.edge_child.shape[0]
        return [
            Term("eps_h", "reverses 2-6", cache.eps_h),
            Term("eps_c", "reverses 8, 7", cache.eps_c),
            Term("delta_o", "reverses 8, 5", delta[:n, d : 2 * d]),
            Term("delta_i", "reverses 7, 3", delta[:n, :d]),
            Term("delta_u", "reverses 7, 6", delta[:n, 2 * d : 3 * d]),
            Term("delta_f", "reverses 7, 4", node_rows(n, cache.edge_child, cache.delta_f[:edges])),
        ]

    def state_terms(self, forest: Forest, cache: TreeLSTMChildSumCache) -> list:
        """h and c at every node."""
        return [StateTerm("h", "eps_h"), StateTerm("c", "eps_c")]

    def term_parts(self, params: dict, forest: Forest, cache: TreeLSTMChildSumCache, d_out: np.ndarray) -> list:
        """eps_h_k: the head's; the parent j's delta_i, delta_o, delta_u through
        the transposed U (h~_j sums every child alike, eq. 2) and j's forget
        gate for k, delta_jk^f U^(f)T (eq. 4).  eps_c_k: its own eps_h o
        (1 - tanh(c)^2) and the parent's eps_c,j f_jk (eq. 7)."""
        n, d = forest.n_nodes, self.hidden_dim
        edges = cache.edge_child.shape[0]
        kids = cache.edge_child
        parents = np.repeat(np.arange(n), np.diff(cache.first_edge))
        orphan = reasons(n, (forest.parent < 0, "root: no parent"))
        delta, U = cache.delta[:n], params["U"]
        eps_h = [head_part(forest, d_out, equation="reverses 2-6")]
        for g, (gate, equation) in enumerate((("i", "3"), ("o", "5"), ("u", "6"))):
            values = np.zeros((n, d))
            columns = slice(g * d, (g + 1) * d)
            values[kids] = delta[parents, columns] @ U[:, columns].T
            zero = orphan.copy()
            if gate == "o" and not self.output_gate:
                zero[zero == ""] = "no output gate: h = tanh(c), delta_o = 0"
            eps_h.append(Part(f"(U^({gate}))^T delta_j^{gate}", f"reverses {equation}, 2", values, zero))
        own_forget = np.zeros((n, d))
        own_forget[kids] = cache.delta_f[:edges] @ params["U_f"].T
        eps_h.append(Part("(U^(f))^T delta_jk^f", "reverses 4", own_forget, orphan))
        o = cache.gates[:n, d : 2 * d]
        forget = np.zeros((n, d))
        forget[kids] = cache.eps_c[parents] * cache.forget[:edges]
        eps_c = [
            Part(
                "eps_h o (1 - tanh(c)^2)",
                "reverses 8",
                cache.eps_h * o * (ONE - cache.tanh_c * cache.tanh_c),
                reasons(n),
            ),
            Part("eps_c,j f_jk", "reverses 7", forget, orphan),
        ]
        return [TermParts("eps_h", eps_h), TermParts("eps_c", eps_c)]


def _edges(forest: Forest):
    """(first_edge (n+1,), edge_child (E,)): the (parent, child) pairs ordered by
    parent, each parent's children in sentence order."""
    kids = forest.children
    edge_child = kids[kids >= 0].astype(np.int64)  # row-major: by parent, then position
    first_edge = np.zeros(forest.n_nodes + 1, dtype=np.int64)
    np.cumsum(forest.n_children, out=first_edge[1:])
    return first_edge, edge_child


def _input_rows(forest: Forest, word_index: np.ndarray, n_words: int) -> np.ndarray:
    """(n,) the row of the input table each node reads: its word's row of x,
    or ``n_words`` (the row holding b alone) for a node without a word."""
    rows = np.full(forest.n_nodes, n_words, dtype=np.int64)
    rows[forest.word_nodes()] = word_index
    return rows


@njit(cache=True, nogil=True)
def _gather_children(first_edge, edge_child, h, h_child, h_tilde, start, stop):
    """Eq. 2 for the nodes of one level, h~_j = sum_k h_k (rows of h_tilde are
    zero on entry), and h_child[e] = h_k of every edge (the rows eq. 4 reads)."""
    d = h.shape[1]
    for j in range(start, stop):
        for e in range(first_edge[j], first_edge[j + 1]):
            kid = edge_child[e]
            for q in range(d):
                h_child[e, q] = h[kid, q]
                h_tilde[j, q] += h[kid, q]


@njit(cache=True, nogil=True)
def _gate_exponents(input_row, inputs, first_edge, gates, forget, start, stop):
    """Eqs. 3-6 up to the level's expm1s (kernels/lstm_kernels.py): + x_j W +
    b (a row of ``inputs``) into node j's i|o|u pre-activations, and its f
    columns into each of its edges' forget gate; then each pre-activation z
    as -z, -2z in u's columns [2d, 3d) (``tanh_argument``)."""
    d = forget.shape[1]
    for j in range(start, stop):
        row = input_row[j]
        for q in range(2 * d):
            gates[j, q] = -(gates[j, q] + inputs[row, q])
        for q in range(2 * d, 3 * d):
            gates[j, q] = tanh_argument(gates[j, q] + inputs[row, q])
        for e in range(first_edge[j], first_edge[j + 1]):
            for q in range(d):
                forget[e, q] = -(forget[e, q] + inputs[row, 3 * d + q])


@njit(cache=True, nogil=True)
def _cell_update(first_edge, edge_child, gates, forget, c, start, stop, output_gate=True):
    """Eqs. 3-7 from the level's gates after ``_gate_exponents`` and expm1:
    i, o, f_jk = sigma(z) and u = tanh(z) in place (o = 1
    without ``output_gate``), then c_j = i_j * u_j + sum_k f_jk * c_k."""
    d = c.shape[1]
    for j in range(start, stop):
        for q in range(2 * d):
            gates[j, q] = sigmoid_from_expm1(gates[j, q])  # i, o
        for q in range(2 * d, 3 * d):
            gates[j, q] = tanh_from_expm1(gates[j, q])  # u
        if not output_gate:
            for q in range(d, 2 * d):
                gates[j, q] = ONE
        for e in range(first_edge[j], first_edge[j + 1]):
            for q in range(d):
                forget[e, q] = sigmoid_from_expm1(forget[e, q])  # f_jk
        for q in range(d):
            cell = gates[j, q] * gates[j, 2 * d + q]
            for e in range(first_edge[j], first_edge[j + 1]):
                cell += forget[e, q] * c[edge_child[e], q]
            c[j, q] = cell


@njit(cache=True, nogil=True)
def _gate_deltas(first_edge, edge_child, gates, forget, c, tanh_c, d_h, d_c, delta, delta_f, start, stop):
    """Backward through eqs. 8 and 7 to the pre-activations of one level:
    delta_i|o|u per node, delta_fk per edge; routes eps_c to the children.
    Leaves are the level without edges."""
    d = c.shape[1]
    for j in range(start, stop):
        for q in range(d):
            i = gates[j, q]
            o = gates[j, d + q]
            u = gates[j, 2 * d + q]
            t = tanh_c[j, q]
            eps_h = d_h[j, q]
            delta[j, d + q] = eps_h * t * o * (ONE - o)  # delta_o
            eps_c = d_c[j, q] + eps_h * o * (ONE - t * t)
            delta[j, q] = eps_c * u * i * (ONE - i)  # delta_i
            delta[j, 2 * d + q] = eps_c * i * (ONE - u * u)  # delta_u
            for e in range(first_edge[j], first_edge[j + 1]):
                kid = edge_child[e]
                f = forget[e, q]
                delta_f[e, q] = eps_c * c[kid, q] * f * (ONE - f)  # delta_fk
                d_c[kid, q] = eps_c * f  # eps_c of child k
            d_c[j, q] = eps_c  # kept for backward_terms: eps_c_j in full


@njit(cache=True, nogil=True)
def _route_to_children(first_edge, edge_child, d_h_tilde, d_h_child, d_h, start, stop):
    """eps_h of child k += delta_iou_j U^T (row j - start of d_h_tilde, the same
    for all of j's children) + delta_fk U_f^T (row e - first edge of d_h_child)."""
    d = d_h.shape[1]
    first = first_edge[start]
    for j in range(start, stop):
        for e in range(first_edge[j], first_edge[j + 1]):
            kid = edge_child[e]
            for q in range(d):
                d_h[kid, q] += d_h_tilde[j - start, q] + d_h_child[e - first, q]


@njit(cache=True, nogil=True)
def _input_deltas(input_row, first_edge, delta, delta_f, n_rows):
    """dLoss/d(x W + b) per row of the input table: [delta_i | delta_o | delta_u |
    sum_k delta_fk] summed over the nodes reading that row ((n_rows, 4d))."""
    d = delta_f.shape[1]
    out = np.zeros((n_rows, 4 * d), dtype=delta.dtype)
    for j in range(input_row.shape[0]):
        row = input_row[j]
        for q in range(3 * d):
            out[row, q] += delta[j, q]
        for e in range(first_edge[j], first_edge[j + 1]):
            for q in range(d):
                out[row, 3 * d + q] += delta_f[e, q]
    return out
