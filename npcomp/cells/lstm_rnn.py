r"""LSTM-RNN: the LSTM composition of a binary tree (Le & Zuidema 2015, Sec. 3-4).

A parent p composes its left child x and right child y: their outputs x, y
(the children's h) and their memory cells c_x, c_y.  Le & Zuidema print the
equations of Sec. 3 without numbers; (L1)-(L7) number them in print order.
Row-vector orientation (``x @ W_i1`` is the paper's W_i1 x):

    i_1 = sigma( x W_i1 + y W_i2 + c_x W_ci1 + c_y W_ci2 + b_i )        (L1)
    i_2 = sigma( y W_i1 + x W_i2 + c_y W_ci1 + c_x W_ci2 + b_i )        (L2)
    f_1 = sigma( x W_f1 + y W_f2 + c_x W_cf1 + c_y W_cf2 + b_f )        (L3)
    f_2 = sigma( y W_f1 + x W_f2 + c_y W_cf1 + c_x W_cf2 + b_f )        (L4)
    c_p = f_1 * c_x + f_2 * c_y + u,
          u = g( i_1 * a_1 + i_2 * a_2 + b_c ),  a_1 = x W_c1,  a_2 = y W_c2   (L5)
    o   = sigma( x W_o1 + y W_o2 + c_p W_co + b_o )                     (L6)
    p   = o * g(c_p)                                                    (L7)

g in {tanh, sigmoid, softsign} (option ``activation``).  Readings of the
printed equations (docs/cells/lstm_rnn.md gives the evidence): each input
gate scales its own child's term *inside* g ("W_c1 x (.) i_1" is
(W_c1 x) (.) i_1); the output gate peeks at the new cell c_p; every
peephole is a full d x d matrix; "children swapped" means one weight set
(W_i1, W_i2, W_ci1, W_ci2 for the input gates, likewise for the forget
gates) in which the gate of child k reads child k through the "1" matrices
and its sibling through the "2" matrices.

Leaves: c = 0 and the leaf's vector is its word vector x (d_x = d_w).
``untied=False``: one weight set; d_x must equal d.  ``untied=True``: a child
that is a leaf is read through W_leaf (the d x d_w matrices of Sec. 4), an
inner child through W (d x d); the leaves' own h rows are not defined in
d dimensions, so they are returned as 0 and the model classifies leaves from
their word vectors (``leaf_classifier_reads_input``).  The only child of a
unary node is x; the missing y contributes y = c_y = 0.

Computation.  A child's terms in its parent's (L1)-(L6) depend on the child
only, so each child is projected once: a leaf child by ``x @ W_in`` (W_in =
W_leaf untied, W tied; c = 0) once per distinct word; an inner node k as
soon as its level is done, by one product per level

    node_terms_k = [h_k | c_k] S,   S = [ W ; W_peephole | 0 ]        (2d, 8d)

(blocks i1 i2 f1 f2 c1 c2 o1 o2 of W; the cell reaches the i, f blocks only,
through the peepholes).  The parent adds its children's terms into its gate
blocks by ``TARGET``: the child in slot 0 (x) sends i1 i2 f1 f2 to i_1 i_2
f_1 f_2, the child in slot 1 (y) sends them to i_2 i_1 f_2 f_1 (the swap);
c1 -> a_1 and o1 -> o from x, c2 -> a_2 and o2 -> o from y.  c_p W_co needs
c_p, so it is a second product per level, after (L5).  The elementwise work
of a level is numba kernels with the scalar gate functions of
``activations.py`` rather than a dozen vectorised NumPy calls: a level of a
minibatch of 5 trees (L&Z) has a few nodes, where each NumPy call costs
3-5 us, and a sigmoid over (m, 4d = 200) float64 took 8 us in a numba loop
vs 20 us in NumPy at m = 2, 0.72 vs 0.74 ms at m = 200 (float32 at m = 200:
0.30 vs 0.18 ms; measured on the 2-core development machine).

Backward (eps = dJ/d state, delta = dJ/d pre-activation), per node, parents
first; when node j is reached its parent has routed its deltas to j's
``delta_terms`` and put eps_c(parent) * f into d_c[j]:

    [eps_h | eps_c] += delta_terms_j S^T                     reverses node_terms = [h | c] S
    delta_o  = eps_h * g(c_p) * o (1 - o)                    reverses (L7) for o, (L6)
    eps_c   += eps_h * o * g'(c_p) + delta_o W_co^T          reverses (L7) for c_p, (L6)
    delta_u  = eps_c * g'(u)                                 reverses (L5) for u
    delta_i1 = delta_u * a_1 * i_1 (1 - i_1)                 reverses (L5), (L1)
    delta_i2 = delta_u * a_2 * i_2 (1 - i_2)                 reverses (L5), (L2)
    delta_a1 = delta_u * i_1,  delta_a2 = delta_u * i_2      reverses (L5) for a_1, a_2
    delta_f1 = eps_c * c_x * f_1 (1 - f_1)                   reverses (L5), (L3)
    delta_f2 = eps_c * c_y * f_2 (1 - f_2)                   reverses (L5), (L4)
    d_c[x]   = eps_c * f_1,  d_c[y] = eps_c * f_2            reverses (L5) for c_x, c_y
    delta_terms_x[k] = delta_j[TARGET[0, k]],  delta_terms_y[k] = delta_j[TARGET[1, k]]

so that, written out (the first line of the next level of x and y):

    eps_h(x) += delta_i1 W_i1^T + delta_i2 W_i2^T + delta_f1 W_f1^T + delta_f2 W_f2^T
                + delta_a1 W_c1^T + delta_o W_o1^T                  reverses (L1)-(L6)
    eps_h(y) += delta_i1 W_i2^T + delta_i2 W_i1^T + delta_f1 W_f2^T + delta_f2 W_f1^T
                + delta_a2 W_c2^T + delta_o W_o2^T
    eps_c(x)  = eps_c * f_1 + delta_i1 W_ci1^T + delta_i2 W_ci2^T
                + delta_f1 W_cf1^T + delta_f2 W_cf2^T                reverses (L5), (L1)-(L4)
    eps_c(y)  = eps_c * f_2 + delta_i1 W_ci2^T + delta_i2 W_ci1^T
                + delta_f1 W_cf2^T + delta_f2 W_cf1^T

A leaf child's delta_terms go to its word instead.  Weight gradients,
summed over the inner nodes p, each matrix over both places it is used:

    dW_i1 += x^T delta_i1 + y^T delta_i2     dW_i2 += y^T delta_i1 + x^T delta_i2
    dW_f1 += x^T delta_f1 + y^T delta_f2     dW_f2 += y^T delta_f1 + x^T delta_f2
    dW_c1 += x^T delta_a1                    dW_c2 += y^T delta_a2
    dW_o1 += x^T delta_o                     dW_o2 += y^T delta_o
    dW_ci1, dW_ci2, dW_cf1, dW_cf2: the same with c_x, c_y for x, y
    dW_co += c_p^T delta_o
    db_i += delta_i1 + delta_i2,  db_f += delta_f1 + delta_f2,  db_c += delta_u,  db_o += delta_o

computed as dS = [h | c]^T delta_terms over the inner nodes (dW = dS[:d],
dW_peephole = dS[d:, :4d]) and, for the leaves, delta_word (U, 8d) = their
delta_terms summed per word: dW_in += x^T delta_word, dJ/dx = delta_word
W_in^T (tied: plus the head's eps_h at the leaves, whose h is x).

Parameters (d = hidden_dim, d_w = input_dim; every code matrix is the
transpose of the paper's, column blocks d wide):

==============================  ======================================  ============
paper                           code                                    shape
==============================  ======================================  ============
W_i1 W_i2 W_f1 W_f2 W_c1 W_c2   ``W`` column blocks 0..7, in this       (d, 8d)
W_o1 W_o2 (inner children)      order
the same, leaf children         ``W_leaf`` (untied only)                (d_w, 8d)
W_ci1 W_ci2 W_cf1 W_cf2         ``W_peephole`` column blocks 0..3       (d, 4d)
W_co                            ``W_co``                                (d, d)
b_i b_f b_c b_o                 ``b`` blocks 0..3                       (4d,)
i_1 i_2 f_1 f_2 a_1 a_2 o       ``gates`` column blocks 0..6            (n, 7d)
u, g(c_p)                       ``u``, ``g_c``                          (n, d)
[p | c_p] of every node         ``state`` (leaves: 0); h = state[:, :d] (n, 2d)
a node's terms for its parent   ``node_terms``                          (n, 8d)
delta_i1 .. delta_a2, delta_o   ``delta`` column blocks 0..6            (n, 7d)
dJ/d(node_terms)                ``delta_terms``                         (n, 8d)
delta_u; eps_h; eps_c           ``delta_u``; ``d_h``; ``d_c``           (n, d)
==============================  ======================================  ============

``d_c[j]`` holds the parent's share of eps_c until ``cell_deltas`` makes it
the full eps_c; ``backward`` keeps eps_h, eps_c, delta_u and delta on the
cache for ``backward_terms``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..forest import Forest
from npcomp.cells.kernels.activations import (
    activation_code,
    derivative_from_output,
    uniform_fan_in,
)
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import (
    BinaryCell,
    Part,
    StateTerm,
    Term,
    TermParts,
    head_part,
    node_rows,
    nudge_rows,
    reasons,
)
from npcomp.cells.kernels.levels import ROW_PAD, binary_children, padded_stop
from npcomp.cells.kernels.lstm_rnn_kernels import (
    A1,
    A2,
    F1,
    F2,
    GATE_BLOCKS,
    I1,
    I2,
    O,
    cell_deltas,
    cell_update,
    gather_child_terms,
    output_update,
    output_deltas,
    route_to_children,
)

# column blocks of W and W_leaf (the weights reading a child's h); blocks
# 0..3 are also those of W_peephole (reading a child's c)
WEIGHT_BLOCKS = ("i1", "i2", "f1", "f2", "c1", "c2", "o1", "o2")
PEEPHOLE_BLOCKS = ("ci1", "ci2", "cf1", "cf2")
# TARGET[slot, block]: the gate block into which weight block ``block``
# carries the child in ``slot`` (0: left x, 1: right y), -1 for none.  Row 1
# is row 0 with the children swapped: (L2) is (L1) with x, y exchanged, and
# (L4) is (L3) likewise.
TARGET = np.array([[I1, I2, F1, F2, A1, -1, O, -1], [I2, I1, F2, F1, -1, A2, -1, O]], dtype=np.int64)


@dataclass
class LSTMRNNCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (L,) row of x each leaf reads
    gates: np.ndarray  # (n, 7d) i_1 i_2 f_1 f_2 (sigma), a_1 a_2, o (sigma)
    u: np.ndarray  # (n, d) g( i_1 a_1 + i_2 a_2 + b_c )
    state: np.ndarray  # (n + ROW_PAD, 2d) [p | c_p], 0 at leaves
    g_c: np.ndarray  # (n, d) g(c_p)
    # what the backward leaves for ``backward_terms`` (inner rows): eps_h,
    # eps_c, delta_u (n, d) and the gate deltas (n + ROW_PAD, 7d), as ``gates``
    eps_h: np.ndarray | None = None
    eps_c: np.ndarray | None = None
    delta_u: np.ndarray | None = None
    delta: np.ndarray | None = None


class LSTMRNN(BinaryCell):
    """Le & Zuidema's LSTM-RNN cell; ``forward``/``backward`` over a whole forest."""

    name = "lstm-rnn"
    # the paper calls a node's output p (L7); the per-node checks move it as h
    state_symbols = {"h": "p"}

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh", untied: bool = False):
        if not untied and input_dim != hidden_dim:
            raise ValueError(
                f"lstm-rnn with tied leaves reads a leaf's word vector as its "
                f"state, so hidden_dim must equal input_dim ({hidden_dim} != "
                f"{input_dim}); or untied leaves"
            )
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.activation = activation
        self.code = activation_code(activation)
        self.untied = untied
        # untied leaves live in d_w dimensions: the model classifies them from x
        self.leaf_classifier_reads_input = untied

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        shapes = [("W", (d, 8 * d)), ("W_peephole", (d, 4 * d)), ("W_co", (d, d)), ("b", (4 * d,))]
        if self.untied:
            shapes.insert(1, ("W_leaf", (self.input_dim, 8 * d)))
        return shapes

    def report_slices(self) -> dict:
        """Each paper matrix and bias as its own gradient-check row."""
        d = self.hidden_dim
        out = {}
        names = ("W", "W_leaf") if self.untied else ("W",)
        for name in names:
            for k, block in enumerate(WEIGHT_BLOCKS):
                out[f"{name}.{block}"] = (name, (slice(None), slice(k * d, (k + 1) * d)))
        for k, block in enumerate(PEEPHOLE_BLOCKS):
            out[f"W_peephole.{block}"] = ("W_peephole", (slice(None), slice(k * d, (k + 1) * d)))
        for k, block in enumerate(("i", "f", "c", "o")):
            out[f"b.{block}"] = ("b", (slice(k * d, (k + 1) * d),))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """U(+-1/sqrt(n)), n the number of input units of the gate a block feeds
        (L&Z Sec. 5.2): at a node with two inner children i, f read 4d units
        (x, y, c_x, c_y), u reads 2d, o reads 3d (x, y, c_p); with two leaf
        children the leaf blocks read 2 d_w (o: 2 d_w + d)."""
        d, d_x = self.hidden_dim, self.input_dim
        fan_in = {"i": 4 * d, "f": 4 * d, "c": 2 * d, "o": 3 * d}
        leaf_fan_in = {"i": 2 * d_x, "f": 2 * d_x, "c": 2 * d_x, "o": 2 * d_x + d}
        for k, block in enumerate(WEIGHT_BLOCKS):
            columns = slice(k * d, (k + 1) * d)
            uniform_fan_in(params["W"][:, columns], fan_in[block[0]], rng)
            if self.untied:
                uniform_fan_in(params["W_leaf"][:, columns], leaf_fan_in[block[0]], rng)
        uniform_fan_in(params["W_peephole"], fan_in["i"], rng)
        uniform_fan_in(params["W_co"], fan_in["o"], rng)
        for k, gate in enumerate("ifco"):
            uniform_fan_in(params["b"][k * d : (k + 1) * d], fan_in[gate], rng)

    def forward(self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, nudge=None):
        """x: (U, d_x) vectors of the distinct words; word_index: (L,) the row of x
        each leaf (nodes 0..L-1) reads.  Returns h (n, d), cache.

        Level by level: the children's terms gathered by ``TARGET``, a kernel
        for (L1)-(L5), one product for c_p W_co, a kernel for (L6)-(L7), then
        one product for the level's own terms in its parents.  ``nudge``
        (interface.Nudge) moves an inner node's c_p after (L5), before (L6)
        and (L7) read it, or its p (h) after (L7).
        """
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        dtype = x.dtype
        children = binary_children(forest)
        word_index = np.asarray(word_index)[:leaves]
        word_terms = x @ self._input_weights(params)  # (U, 8d): a leaf child's terms
        projection = _projection(params["W"], params["W_peephole"])  # S
        b = params["b"]
        # the bias of each gate block: b_i twice, b_f twice, none on a_1, a_2, b_o
        gate_bias = np.concatenate(
            (b[:d], b[:d], b[d : 2 * d], b[d : 2 * d], np.zeros(2 * d, dtype=b.dtype), b[3 * d :])
        )
        candidate_bias = b[2 * d : 3 * d]
        gates = np.zeros((n, GATE_BLOCKS * d), dtype=dtype)
        u = np.zeros((n, d), dtype=dtype)
        state = np.zeros((n + ROW_PAD, 2 * d), dtype=dtype)
        g_c = np.zeros((n, d), dtype=dtype)
        node_terms = np.zeros((n + ROW_PAD, 8 * d), dtype=dtype)
        widest = int(np.diff(forest.level_ptr).max()) + ROW_PAD
        cell_terms = np.empty((widest, d), dtype=dtype)  # c_p W_co of one level
        for start, stop in forest.levels(first=1):
            padded = padded_stop(start, stop)
            gather_child_terms(children, leaves, word_index, word_terms, node_terms, TARGET, gates, start, stop)
            cell_update(self.code, children, gate_bias, candidate_bias, gates, u, state, start, stop)  # (L1)-(L5)
            nudge_rows(nudge, "c", state[:, d:], start, stop)
            np.matmul(state[start:padded, d:], params["W_co"], out=cell_terms[: padded - start])
            output_update(self.code, gates, cell_terms, state, g_c, start, stop)  # (L6), (L7)
            nudge_rows(nudge, "h", state[:, :d], start, stop)
            if stop < n:  # the top level has roots only
                # this level's terms in its parents' (L1)-(L6): [h | c] S
                np.matmul(state[start:padded], projection, out=node_terms[start:padded])
        h = np.ascontiguousarray(state[:n, :d])
        if not self.untied:
            h[:leaves] = x[word_index]  # a leaf's h is its word
        return h, LSTMRNNCache(x, word_index, gates, u, state, g_c)

    def backward(self, params: dict, forest: Forest, cache: LSTMRNNCache, d_h: np.ndarray, grads: dict) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten: eps_h accumulates in
        it; untied: its leaf rows are ignored).  Adds dLoss/dparams into
        ``grads``; returns dLoss/dx (U, d_x), per distinct word."""
        n, d, leaves = forest.n_nodes, self.hidden_dim, forest.n_leaves
        dtype = d_h.dtype
        children = binary_children(forest)
        projection_transposed = np.ascontiguousarray(_projection(params["W"], params["W_peephole"]).T)
        co_transposed = np.ascontiguousarray(params["W_co"].T)
        delta = np.zeros((n + ROW_PAD, GATE_BLOCKS * d), dtype=dtype)
        delta_u = np.zeros((n, d), dtype=dtype)
        delta_terms = np.zeros((n + ROW_PAD, 8 * d), dtype=dtype)
        d_c = np.zeros((n, d), dtype=dtype)
        for start, stop in forest.levels(first=1, downward=True):
            padded = padded_stop(start, stop)
            # the parents' share of [eps_h | eps_c]: reverses node_terms = [h | c] S
            eps_state = delta_terms[start:padded] @ projection_transposed
            output_deltas(cache.gates, cache.g_c, eps_state, d_h, d_c, delta, start, stop)
            # the output gate's peephole: delta_o W_co^T reaches c_p (reverses (L6))
            eps_c_from_o = delta[start:padded, O * d :] @ co_transposed
            cell_deltas(
                self.code,
                children,
                cache.gates,
                cache.u,
                cache.state,
                cache.g_c,
                d_h,
                d_c,
                eps_c_from_o,
                delta,
                delta_u,
                start,
                stop,
            )
            route_to_children(children, TARGET, delta, delta_terms, start, stop)
        inner = slice(leaves, n)
        d_projection = cache.state[inner].T @ delta_terms[inner]  # (2d, 8d) = dS
        grads["W"] += d_projection[:d]
        grads["W_peephole"] += d_projection[d:, : 4 * d]
        grads["W_co"] += cache.state[inner, d:].T @ delta[inner, O * d :]
        sums = delta[inner].sum(axis=0)
        grads["b"][:d] += sums[I1 * d : (I1 + 1) * d] + sums[I2 * d : (I2 + 1) * d]
        grads["b"][d : 2 * d] += sums[F1 * d : (F1 + 1) * d] + sums[F2 * d : (F2 + 1) * d]
        grads["b"][2 * d : 3 * d] += delta_u[inner].sum(axis=0)
        grads["b"][3 * d :] += sums[O * d :]
        # leaf children: their terms' deltas summed per word (reverses x @ W_in)
        n_words = cache.x.shape[0]
        delta_word = sum_by_index(delta_terms[:leaves], cache.word_index, n_words)
        input_name = "W_leaf" if self.untied else "W"
        grads[input_name] += cache.x.T @ delta_word
        d_x = delta_word @ params[input_name].T
        if not self.untied:  # tied: h = x at a leaf, so the head's eps_h reaches x
            d_x += sum_by_index(d_h[:leaves], cache.word_index, n_words)
        cache.eps_h, cache.eps_c, cache.delta_u, cache.delta = d_h, d_c, delta_u, delta
        return d_x

    def forward_terms(self, forest: Forest, cache: LSTMRNNCache) -> list:
        """(L1)-(L7) at the inner nodes, c also at the leaves (0).  A leaf is
        not composed: its vector, the word's, is the cell's input (untied: d_w
        wide), so p is NaN there.  At a unary node the gates read y = c_y = 0."""
        inner, n, d = self._inner(forest), forest.n_nodes, self.hidden_dim

        def rows(values):
            return node_rows(n, inner, values[inner])

        def gate(block):
            return rows(cache.gates[:, block * d : (block + 1) * d])

        return [
            Term("i_1", "L1", gate(I1), "L4"),
            Term("i_2", "L2", gate(I2), "L4"),
            Term("f_1", "L3", gate(F1), "L4"),
            Term("f_2", "L4", gate(F2), "L4"),
            Term("a_1", "L5", gate(A1), "L2"),
            Term("a_2", "L5", gate(A2), "L2"),
            Term("u", "L5", rows(cache.u), "L2"),
            Term("c", "L5", cache.state[:n, d:], "L7"),
            Term("o", "L6", gate(O), "L1"),
            Term("p", "L7", rows(cache.state[:, :d]), "L5"),
        ]

    def backward_terms(self, forest: Forest, cache: LSTMRNNCache) -> list:
        """eps_h, eps_c and the deltas at the inner nodes.  A leaf's error
        reaches its word as the sum over the word's leaves (the returned
        d_x), not per leaf, so the leaves are NaN."""
        inner, n, d = self._inner(forest), forest.n_nodes, self.hidden_dim

        def rows(values):
            return node_rows(n, inner, values[inner])

        def delta(block):
            return rows(cache.delta[:, block * d : (block + 1) * d])

        return [
            Term("eps_h", "reverses L1-L6", rows(cache.eps_h), "L4"),
            Term("delta_o", "reverses L7, L6", delta(O)),
            Term("eps_c", "reverses L7, L6, L5", rows(cache.eps_c), "L1"),
            Term("delta_u", "reverses L5", rows(cache.delta_u), "L5"),
            Term("delta_i1", "reverses L5, L1", delta(I1), "L2"),
            Term("delta_i2", "reverses L5, L2", delta(I2), "L2"),
            Term("delta_a1", "reverses L5", delta(A1), "L2"),
            Term("delta_a2", "reverses L5", delta(A2), "L2"),
            Term("delta_f1", "reverses L5, L3", delta(F1)),
            Term("delta_f2", "reverses L5, L4", delta(F2)),
        ]

    def state_terms(self, forest: Forest, cache: LSTMRNNCache) -> list:
        """p (h) and c_p at the inner nodes (a leaf is its word vector, c = 0)."""
        return [StateTerm("h", "eps_h"), StateTerm("c", "eps_c")]

    def term_parts(self, params: dict, forest: Forest, cache: LSTMRNNCache, d_out: np.ndarray) -> list:
        """At an inner node j in slot x (left) or y (right) of its parent p:
        eps_h_j, the head's and the parent's gate deltas through each weight
        block that reads j (``TARGET``: W_i1 carries x into i_1 and y into
        i_2, ...); eps_c_j, its own eps_h o g'(c_p) and delta_o W_co^T, the
        parent's eps_c,p f_k and its deltas through the four peepholes."""
        n, d = forest.n_nodes, self.hidden_dim
        leaf = np.arange(n) < forest.n_leaves
        parent, slot = forest.parent, forest.position
        child = np.flatnonzero((parent >= 0) & ~leaf)
        up = parent[child]
        orphan = reasons(n, (parent < 0, "root: no parent"))
        sibling = binary_children(forest)[up, 1 - slot[child]]
        delta = cache.delta[:n]

        def through(weights: np.ndarray, block: int) -> tuple:
            """Part values and zero reasons of one weight block's share."""
            values = np.zeros((n, d))
            zero = orphan.copy()
            for k in range(2):
                at = slot[child] == k
                gate = TARGET[k, block]
                if gate < 0:
                    zero[child[at]] = f"{'x' if k == 0 else 'y'} is not read through it"
                    continue
                values[child[at]] = delta[up[at], gate * d : (gate + 1) * d] @ weights[:, block * d : (block + 1) * d].T
            if WEIGHT_BLOCKS[block] == "f2":  # the sibling's forget gate: c of a leaf is 0
                quiet = (sibling < 0) | (sibling < forest.n_leaves)
                zero[child[quiet]] = "the sibling's c = 0: a leaf, or no sibling"
            return np.where(leaf[:, None], np.nan, values), zero

        eps_h = [head_part(forest, np.where(leaf[:, None], np.nan, d_out), equation="reverses the classifier")]
        for block, name in enumerate(WEIGHT_BLOCKS):
            values, zero = through(params["W"], block)
            eps_h.append(Part(f"(W_{name})^T delta_p", "reverses L1-L6 (through the parent)", values, zero))
        o = cache.gates[:n, O * d :]
        own = cache.eps_h * o * self._derivative(cache.g_c[:n])
        forget = np.zeros((n, d))
        for k in range(2):
            at = slot[child] == k
            forget[child[at]] = cache.eps_c[up[at]] * cache.gates[up[at], (F1 + k) * d : (F2 + k) * d]
        eps_c = [
            Part("eps_h o g'(c_p)", "reverses L7", np.where(leaf[:, None], np.nan, own), reasons(n)),
            Part(
                "(W_co)^T delta_o",
                "reverses L6",
                np.where(leaf[:, None], np.nan, delta[:, O * d :] @ params["W_co"].T),
                reasons(n),
            ),
            Part("eps_c,p f_k", "reverses L5 (through the parent)", np.where(leaf[:, None], np.nan, forget), orphan),
        ]
        for block, name in enumerate(PEEPHOLE_BLOCKS):
            values, zero = through(params["W_peephole"], block)
            eps_c.append(Part(f"(W_{name})^T delta_p", "reverses L1-L4 (through the parent)", values, zero))
        return [TermParts("eps_h", eps_h), TermParts("eps_c", eps_c)]

    def _derivative(self, g_c: np.ndarray) -> np.ndarray:
        """g'(c_p) from g(c_p), as ``activations.derivative_from_output``."""
        return np.vectorize(lambda value: derivative_from_output(self.code, value))(g_c)

    @staticmethod
    def _inner(forest: Forest) -> np.ndarray:
        """The composed nodes: every node above the leaves."""
        return np.arange(forest.n_leaves, forest.n_nodes)

    def _input_weights(self, params: dict) -> np.ndarray:
        """W_in: the weights through which a leaf child is read."""
        return params["W_leaf"] if self.untied else params["W"]


def _projection(W: np.ndarray, W_peephole: np.ndarray) -> np.ndarray:
    """S (2d, 8d) = [ W ; W_peephole | 0 ]: [h_k | c_k] S holds every term
    node k contributes to its parent's (L1)-(L6), in the blocks of W."""
    d = W.shape[0]
    out = np.zeros((2 * d, 8 * d), dtype=W.dtype)
    out[:d] = W
    out[d:, : 4 * d] = W_peephole
    return out
