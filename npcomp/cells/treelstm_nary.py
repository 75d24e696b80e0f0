r"""N-ary Tree-LSTM (Tai, Socher & Manning 2015, Sec. 3.2, eqs. 9-14).

With N = 2 over binarised constituency trees this is the Constituency
Tree-LSTM.  The input x_j is read only at the leaves (Tai: "a node j receives
an input vector x_j only if it is a leaf node"), so a leaf has no children and
an inner node no input.  Equations in the row-vector orientation the code
computes (x, h are rows; ``x @ W`` is the paper's W x):

    i_j  = sigma( x_j W^(i) + sum_l h_jl U_l^(i) + b^(i) )            (9)
    f_jk = sigma( x_j W^(f) + sum_l h_jl U_kl^(f) + b^(f) ),  k=1..N  (10)
    o_j  = sigma( x_j W^(o) + sum_l h_jl U_l^(o) + b^(o) )            (11)
    u_j  = tanh ( x_j W^(u) + sum_l h_jl U_l^(u) + b^(u) )            (12)
    c_j  = i_j * u_j + sum_l f_jl * c_jl                              (13)
    h_j  = o_j * tanh(c_j)                                            (14)

At a leaf the sums over children vanish (so W^(f) never matters and is not
a parameter); at an inner node the x terms vanish.  A missing child (a unary
node in a binary tree) contributes h = c = 0.  b^(f) is one vector shared by
the N forget gates, as printed.

With ``inner_inputs=True`` the equations are read in full: any node may read
a word (a leaf must), W^(f) is a parameter (W gains f columns) and an inner
node with a word adds its x terms to eqs. 9-12.  With N = 1 on a chain whose
every node reads a word, this is exactly the chain LSTM of Tai eq. 1.

Backward (eps = dLoss/d state, delta = dLoss/d pre-activation), per node,
parents first; the parent has already added its share to eps_h and eps_c:

    delta_o  = eps_h * tanh(c_j) * o(1-o)                       (reverses 14)
    eps_c   += eps_h * o * (1 - tanh(c_j)^2)                    (reverses 14)
    delta_i  = eps_c * u * i(1-i)                               (reverses 13, 9)
    delta_u  = eps_c * i * (1-u^2)                              (reverses 13, 12)
    delta_fk = eps_c * c_jk * f_k(1-f_k)                        (reverses 13, 10)
    eps_c(child k) = eps_c * f_jk                               (reverses 13)
    eps_h(child l) += sum over gates g of delta_g U_l^(g)^T     (reverses 9-12)
    dU  = sum_j [h_j1 .. h_jN]^T delta_j,  dW = sum_{j reading x} x_j^T delta_j,
    db  = sum_j delta_j  (b^(f) gets the sum over k of delta_fk)

Recurrent dropout (Gal 2015: one mask per sequence; Nayebi & Blundell
Sec. 4.1).  With ``recurrent_masks=[m]``, m (trees, d), every child's h
enters its parent's gates multiplied by the mask of the parent's tree,
the same mask at every node and child slot of that tree:

    h~_jl = h_jl * m_s,   s = tree of j           (then eqs. 9-12 read h~_jl)

The cell's output h_j itself is not masked, nor is c_jl in eq. 13.
Backward: eps_h(child l) += (sum_g delta_g U_l^(g)^T) * m_s, and dU uses
h~ (the gathered ``hc`` is stored masked, so dU needs no change).  Without
masks these two multiplications are skipped entirely.

Parameters (d = hidden_dim, d_x = input_dim):

=========  ====================  =========================================
paper      code                  shape
=========  ====================  =========================================
W^(i,o,u)  ``W`` columns i|o|u   (d_x, 3d); i|o|u|f (d_x, 4d) with inner inputs
U_l^(g)    ``U`` rows l, col. g  (N d, (3+N) d): columns i|o|u|f_1..f_N
b^(g)      ``b``                 (4d,): i|o|u|f
=========  ====================  =========================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..forest import Forest
from npcomp.cells.kernels.activations import ONE, add_forget_bias, uniform_fan_in
from npcomp.cells.kernels.inputs import sum_by_index
from .interface import (
    EVERY_LEAF,
    LEAVES_ONLY,
    Cell,
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
from npcomp.cells.kernels.levels import ROW_PAD, add_product, children_columns, padded_stop
from npcomp.cells.kernels.lstm_kernels import (
    gate_functions,
    gather_children,
    hidden_state,
    scatter_to_children,
    sigmoid_from_expm1,
    tanh_argument,
    tanh_from_expm1,
)

GATE_NAMES = ("i", "o", "u")


@dataclass
class TreeLSTMNaryCache:
    x: np.ndarray  # (U, d_x) distinct words' vectors
    word_index: np.ndarray  # (L,) row of x each leaf reads
    hc: np.ndarray  # (n, N d) children's hidden states, per node
    gates: np.ndarray  # (n + 3, (3+N) d) i|o|u|f_1..f_N activations (3 spare rows)
    c: np.ndarray  # (n, d) memory cells
    tanh_c: np.ndarray  # (n, d)
    h: np.ndarray  # (n, d) hidden states, the forward's output
    # (n, d) recurrent-dropout mask of each node's tree, or None (no dropout)
    node_mask: np.ndarray | None = None
    # what the backward leaves for ``backward_terms``: eps_h, eps_c (n, d) and
    # the gate deltas (n + 3, (3+N) d), columns as ``gates``
    eps_h: np.ndarray | None = None
    eps_c: np.ndarray | None = None
    delta: np.ndarray | None = None


class TreeLSTMNary(Cell):
    """N-ary Tree-LSTM cell; ``forward``/``backward`` over a whole forest."""

    name = "treelstm-nary"

    def __init__(
        self,
        input_dim: int,
        hidden_dim: int,
        arity: int = 2,
        inner_inputs: bool = False,
        output_gate: bool = True,
        forget_bias: float = 0.0,
    ):
        if arity < 1:
            raise ValueError(f"{self.name}: arity must be at least 1, not {arity}")
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.arity = arity
        self.inner_inputs = inner_inputs
        self.output_gate = output_gate
        self.forget_bias = forget_bias
        self.output_dim = hidden_dim
        self.max_children = arity
        self.words = EVERY_LEAF if inner_inputs else LEAVES_ONLY

    def parameter_shapes(self) -> list:
        d, n = self.hidden_dim, self.arity
        input_gates = 4 if self.inner_inputs else 3
        return [("W", (self.input_dim, input_gates * d)), ("U", (n * d, (3 + n) * d)), ("b", (4 * d,))]

    def report_slices(self) -> dict:
        """Gate-level sub-blocks for per-parameter gradient-check reports."""
        d, n = self.hidden_dim, self.arity
        out = {}
        for g, gate in enumerate(GATE_NAMES):
            out[f"W.{gate}"] = ("W", (slice(None), slice(g * d, (g + 1) * d)))
            out[f"U.{gate}"] = ("U", (slice(None), slice(g * d, (g + 1) * d)))
            out[f"b.{gate}"] = ("b", (slice(g * d, (g + 1) * d),))
        if self.inner_inputs:
            out["W.f"] = ("W", (slice(None), slice(3 * d, 4 * d)))
        out["U.f"] = ("U", (slice(None), slice(3 * d, (3 + n) * d)))
        out["b.f"] = ("b", (slice(3 * d, 4 * d),))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """Uniform +-1/sqrt(fan-in) (Le & Zuidema; Torch's nn.Linear), plus
        ``forget_bias`` on the forget block of b (``add_forget_bias``)."""
        uniform_fan_in(params["W"], self.input_dim, rng)
        uniform_fan_in(params["U"], self.arity * self.hidden_dim, rng)
        uniform_fan_in(params["b"], self.hidden_dim, rng)
        add_forget_bias(params["b"], self.hidden_dim, self.forget_bias)

    def _node_mask(self, forest: Forest, recurrent_masks, dtype) -> np.ndarray | None:
        """(n, d) each node's row of its tree's recurrent-dropout mask, or None.

        ``recurrent_masks``: None or [m] with m (trees, d), one mask per tree
        (Gal: the same mask at every time step of a sequence)."""
        if recurrent_masks is None:
            return None
        if len(recurrent_masks) != 1:
            raise ValueError(f"{self.name} has one recurrent connection, got {len(recurrent_masks)} masks")
        mask = recurrent_masks[0]
        if mask.shape != (forest.n_trees, self.hidden_dim):
            raise ValueError(
                f"{self.name}: a recurrent mask must be (trees, d) = "
                f"{(forest.n_trees, self.hidden_dim)}, not {mask.shape}"
            )
        return np.ascontiguousarray(mask[forest.tree], dtype=dtype)

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d_x) vectors of the distinct words; word_index: (L,) the row of x
        each leaf (nodes 0..L-1) reads.  ``recurrent_masks``: None or [m], m
        (trees, d), the recurrent-dropout mask on the children's h (module
        docstring).  Returns h (n, d), cache.

        Level by level: gather the children's h, one matrix product for the
        gate pre-activations of the whole level, one kernel adding b (and x
        W) to them, one vectorised expm1 for every gate
        (kernels/lstm_kernels.py), one kernel for the gates and the cell
        update, then tanh(c) and h.
        The work arrays are the whole forest's, allocated once.  ``nudge``
        (interface.Nudge) moves one node's c after eq. 13, before eq. 14
        reads it, or its h after eq. 14.
        """
        n, d, arity = forest.n_nodes, self.hidden_dim, self.arity
        dtype = x.dtype
        leaves = forest.n_leaves
        children = children_columns(forest, arity)
        hc = np.zeros((n + ROW_PAD, arity * d), dtype=dtype)
        gates = np.empty((n + ROW_PAD, (3 + arity) * d), dtype=dtype)
        c = np.empty((n, d), dtype=dtype)
        tanh_c = np.empty((n, d), dtype=dtype)
        h = np.empty((n, d), dtype=dtype)
        node_mask = self._node_mask(forest, recurrent_masks, dtype)
        b = params["b"]
        # the shared b^(f) repeated for the N forget gates (eq. 10)
        bias = np.concatenate([b[: 3 * d]] + [b[3 * d :]] * arity)
        with np.errstate(over="ignore"):  # exp overflow in the sigmoid gives exactly 0
            # leaves: a leaf's state depends on its word only, so compute it
            # once per distinct word, then copy it to the leaves
            x_terms = x @ params["W"]  # eqs. 9-12, x W
            z = x_terms[:, : 3 * d] + b[: 3 * d]
            gate_functions(z, d, self.output_gate)
            cell = z[:, :d] * z[:, 2 * d : 3 * d]  # eq. 13: c = i * u
            tanh_cell = np.tanh(cell)
            leaf_rows = word_index[:leaves]
            gates[:leaves, : 3 * d] = z[leaf_rows]
            c[:leaves] = cell[leaf_rows]
            tanh_c[:leaves] = tanh_cell[leaf_rows]
            h[:leaves] = (z[:, d : 2 * d] * tanh_cell)[leaf_rows]  # eq. 14
            if nudge_rows(nudge, "c", c, 0, leaves):  # eq. 14 reads the moved c
                hidden_state(gates, c, tanh_c, h, 0, leaves)
            nudge_rows(nudge, "h", h, 0, leaves)
            word_row = _word_rows(forest, word_index) if self.inner_inputs else None
            u, output_gate = params["U"], self.output_gate

            def rows_forward(start: int, stop: int) -> None:
                # h~_jl = h_jl (* m_s with recurrent dropout) in every child slot
                gather_children(children, h, hc, start, stop, node_mask)
                # eqs. 9-12, sum_l h~_jl U_l, straight into the gate rows
                # (padding rows belong to higher levels, which overwrite them later)
                padded = padded_stop(start, stop)
                np.matmul(hc[start:padded], u, out=gates[start:padded])
                _gate_exponents(gates, bias, start, stop, d, word_row, x_terms)  # + b (+ x W)
                np.expm1(gates[start:stop], out=gates[start:stop])
                _cell_update(children, gates, c, start, stop, output_gate)  # eqs. 9-13
                if nudge is not None:
                    nudge_rows(nudge, "c", c, start, stop)
                hidden_state(gates, c, tanh_c, h, start, stop)  # eq. 14
                if nudge is not None:
                    nudge_rows(nudge, "h", h, start, stop)

            for start, stop in forest.levels(first=1):
                rows_forward(start, stop)
        return h, TreeLSTMNaryCache(x, word_index, hc, gates, c, tanh_c, h, node_mask)

    def backward(
        self, params: dict, forest: Forest, cache: TreeLSTMNaryCache, d_h: np.ndarray, grads: dict
    ) -> np.ndarray:
        """d_h: (n, d) dLoss/dh from the head (overwritten).  Adds dLoss/dparams
        into ``grads``; returns dLoss/dx (U, d_x), per distinct word."""
        d_c = np.zeros((forest.n_nodes, self.hidden_dim), dtype=d_h.dtype)
        return self.backward_from_states(params, forest, cache, d_h, d_c, grads)

    def backward_from_states(
        self, params: dict, forest: Forest, cache: TreeLSTMNaryCache, d_h: np.ndarray, d_c: np.ndarray, grads: dict
    ) -> np.ndarray:
        """The backward pass from gradients on both parts of the state (h, c):
        d_h and d_c (n, d), both overwritten, where another layer reads the
        memory cells as well as h (the recurrent attention); d_c joins eps_c
        of each node before the node's gate deltas.  Returns dLoss/dx (U, d_x).
        """
        n, d, arity = forest.n_nodes, self.hidden_dim, self.arity
        leaves = forest.n_leaves
        children = children_columns(forest, arity)
        delta = np.zeros((n + ROW_PAD, (3 + arity) * d), dtype=d_h.dtype)
        # U^T laid out once: each level's product reads it row by row (BLAS
        # takes many times longer per level from the transposed view of U)
        u_transposed = np.ascontiguousarray(params["U"].T)
        # a level's delta U^T, the widest level's rows (and the padding)
        d_hc = np.empty((int(np.diff(forest.level_ptr).max()) + ROW_PAD, arity * d), dtype=d_h.dtype)
        node_mask = cache.node_mask

        def rows_backward(start: int, stop: int) -> None:
            _gate_deltas(children, cache.gates, cache.c, cache.tanh_c, d_h, d_c, delta, start, stop)
            padded = padded_stop(start, stop)
            np.matmul(delta[start:padded], u_transposed, out=d_hc[: padded - start])
            # reverses eqs. 9-12 (and h~_jl = h_jl * m_s with recurrent dropout)
            scatter_to_children(children, d_hc, d_h, start, stop, node_mask)

        for start, stop in forest.levels(first=1, downward=True):
            rows_backward(start, stop)
        # dU = sum_j hc_j^T delta_j over the inner nodes
        add_product(grads["U"], cache.hc[leaves:n], delta[leaves:n])
        _gate_deltas(children, cache.gates, cache.c, cache.tanh_c, d_h, d_c, delta, 0, leaves)
        # dW over the distinct words (a word's nodes summed first)
        n_words = cache.x.shape[0]
        if self.inner_inputs:
            delta_word = _input_deltas(_word_rows(forest, cache.word_index), delta, n_words, arity, d)
        else:
            delta_word = sum_by_index(delta[:leaves, : 3 * d], cache.word_index, n_words)
        add_product(grads["W"], cache.x, delta_word)
        column_sums = delta[:n].sum(axis=0)
        grads["b"][: 3 * d] += column_sums[: 3 * d]
        grads["b"][3 * d :] += column_sums[3 * d :].reshape(arity, d).sum(axis=0)
        d_x = delta_word @ params["W"].T
        cache.eps_h, cache.eps_c, cache.delta = d_h, d_c, delta
        return d_x

    # the paper's equation for each quantity (the chain LSTM's are all eq. 1)
    EQUATIONS = {"i": "9", "f": "10", "o": "11", "u": "12", "c": "13", "h": "14"}

    def _forget_symbols(self) -> list:
        """f_jk's symbol per child slot: f_l, f_r for N = 2, f for a chain."""
        if self.arity == 2:
            return ["f_l", "f_r"]
        return ["f"] if self.arity == 1 else [f"f_{k + 1}" for k in range(self.arity)]

    def forward_terms(self, forest: Forest, cache: TreeLSTMNaryCache) -> list:
        """i, f per child slot (NaN at leaves and missing children), o, u, c, h."""
        n, d = forest.n_nodes, self.hidden_dim
        equation = self.EQUATIONS
        shared_bias, missing_children = self._errata()
        present = children_columns(forest, self.arity)[:n] >= 0
        terms = [Term("i", equation["i"], cache.gates[:n, :d])]
        for k, symbol in enumerate(self._forget_symbols()):
            nodes = np.flatnonzero(present[:, k])
            block = cache.gates[nodes, (3 + k) * d : (4 + k) * d]
            terms.append(Term(symbol, equation["f"], node_rows(n, nodes, block), shared_bias))
        leaves = np.arange(n) < forest.n_leaves
        # E2 at the leaves (c = i u, no forget gate, unless inner inputs read
        # the equations in full), E3 where a child is missing
        reading_leaves = leaves if missing_children and not self.inner_inputs else []
        missing = (forest.n_children > 0) & (forest.n_children < self.arity)
        terms += [
            Term("o", equation["o"], cache.gates[:n, d : 2 * d]),
            Term("u", equation["u"], cache.gates[:n, 2 * d : 3 * d]),
            errata_term(
                "c",
                equation["c"],
                cache.c,
                (reading_leaves, "E2"),
                (missing if missing_children else [], missing_children),
            ),
            Term("h", equation["h"], cache.h),
        ]
        return terms

    def _errata(self) -> tuple:
        """The errata of eqs. 10 and 13 (one b^(f) for N forget gates; a
        missing child's zeros), which a chain (N = 1) does not meet."""
        return ("E1", "E3") if self.arity > 1 else ("", "")

    # why a part from the node's parent is 0 at a node without one
    NO_PARENT = "root: no parent"

    def backward_terms(self, forest: Forest, cache: TreeLSTMNaryCache) -> list:
        """eps_h, eps_c and the gate deltas (docs/EQUATIONS.md section 3.3)."""
        n, d = forest.n_nodes, self.hidden_dim
        delta = cache.delta
        shared_bias, _ = self._errata()
        present = children_columns(forest, self.arity)[:n] >= 0
        terms = [
            Term("eps_h", self._reverses("h"), cache.eps_h),
            Term("eps_c", self._reverses("h", "c"), cache.eps_c),
            Term("delta_o", self._reverses("h", "o"), delta[:n, d : 2 * d]),
            Term("delta_i", self._reverses("c", "i"), delta[:n, :d]),
            Term("delta_u", self._reverses("c", "u"), delta[:n, 2 * d : 3 * d]),
        ]
        for k, symbol in enumerate(self._forget_symbols()):
            nodes = np.flatnonzero(present[:, k])
            block = delta[nodes, (3 + k) * d : (4 + k) * d]
            terms.append(Term(f"delta_{symbol}", self._reverses("c", "f"), node_rows(n, nodes, block), shared_bias))
        return terms

    def state_terms(self, forest: Forest, cache: TreeLSTMNaryCache) -> list:
        """h and c at every node."""
        return [StateTerm("h", "eps_h"), StateTerm("c", "eps_c")]

    def term_parts(self, params: dict, forest: Forest, cache: TreeLSTMNaryCache, d_out: np.ndarray) -> list:
        """eps_h_j: the head's dJ/dh_j and, from the parent p, each gate's delta
        through the transposed U of j's child slot l; eps_c_j: its own
        eps_h o (1 - tanh(c)^2) and the parent's eps_c,p f_pl."""
        return self.parts_from(params, forest, cache, [head_part(forest, d_out, equation=self._reverses("h"))], [])

    def parts_from(
        self, params: dict, forest: Forest, cache: TreeLSTMNaryCache, upstream_h: list, upstream_c: list
    ) -> list:
        """``term_parts`` with the given parts of what reached eps_h and eps_c
        from outside the cell (the head's; another layer's) in place of the head's."""
        n, d = forest.n_nodes, self.hidden_dim
        parent, slot = forest.parent, forest.position
        child = np.flatnonzero(parent >= 0)
        up = parent[child]
        orphan = reasons(n, (parent < 0, self.NO_PARENT))
        mask = np.ones((n, d)) if cache.node_mask is None else cache.node_mask
        gates, delta, U = cache.gates[:n], cache.delta[:n], params["U"]
        blocks = [
            (g, gate, f"(U_l^({gate}))^T delta_p^{gate}", self._reverses(name))
            for g, (gate, name) in enumerate((("i", "i"), ("o", "o"), ("u", "u")))
        ]
        for k, symbol in enumerate(self._forget_symbols()):
            label = "(U^(f))^T delta_p^f" if self.arity == 1 else f"(U_{k + 1}l^(f))^T delta_p^{symbol}"
            blocks.append((3 + k, symbol, label, self._reverses("f")))
        eps_h = list(upstream_h)
        for column, gate, label, equation in blocks:
            values = np.zeros((n, d))
            columns = slice(column * d, (column + 1) * d)
            for l in range(self.arity):
                at = child[slot[child] == l]
                values[at] = delta[parent[at], columns] @ U[l * d : (l + 1) * d, columns].T * mask[at]
            zero = orphan.copy()
            if gate == "o" and not self.output_gate:
                zero[zero == ""] = "no output gate: h = tanh(c), delta_o = 0"
            if column >= 3 and self.arity > 1:
                # the parent's child k is missing: f_pk multiplies c = 0
                missing = child[children_columns(forest, self.arity)[up, column - 3] < 0]
                zero[missing] = f"the parent has no child {column - 2}: c_p{column - 2} = 0"
            eps_h.append(Part(label, equation + " (through the parent)", values, zero))
        o = gates[:, d : 2 * d]
        own = cache.eps_h * o * (ONE - cache.tanh_c * cache.tanh_c)
        forget = np.zeros((n, d))
        forget[child] = cache.eps_c[up] * gates[up[:, None], (3 + slot[child])[:, None] * d + np.arange(d)]
        eps_c = list(upstream_c) + [
            Part("eps_h o (1 - tanh(c)^2)", self._reverses("h"), own, reasons(n)),
            Part("eps_c,p f_pl", self._reverses("c") + " (through the parent)", forget, orphan),
        ]
        return [TermParts("eps_h", eps_h), TermParts("eps_c", eps_c)]

    def _reverses(self, *quantities: str) -> str:
        """ "reverses 13, 9": the equations of ``quantities``, each once."""
        numbers = dict.fromkeys(self.EQUATIONS[quantity] for quantity in quantities)
        return "reverses " + ", ".join(numbers)


def _word_rows(forest: Forest, word_index: np.ndarray) -> np.ndarray:
    """(n,) the row of x each node reads, -1 where it reads none."""
    rows = np.full(forest.n_nodes, -1, dtype=np.int64)
    rows[forest.word_nodes()] = word_index
    return rows


@njit(cache=True, nogil=True)
def _gate_exponents(gates, bias, start, stop, d, word_row=None, x_terms=None):
    """Eqs. 9-12 up to the level's one expm1 (kernels/lstm_kernels.py): the
    rows hold sum_l h~_jl U_l; z = that + b, + x_j W at a node reading a word
    when ``word_row`` (n,) and ``x_terms`` (U, 4d) are given (inner inputs,
    x_j W^(f) in every forget gate's columns), then -z in place, -2z in u's
    columns [2d, 3d) (``tanh_argument``)."""
    width = gates.shape[1]
    arity = width // d - 3
    for j in range(start, stop):
        for q in range(width):
            gates[j, q] += bias[q]
        if word_row is not None:
            row = word_row[j]
            if row >= 0:
                for q in range(3 * d):
                    gates[j, q] += x_terms[row, q]
                for k in range(arity):
                    for q in range(d):
                        gates[j, (3 + k) * d + q] += x_terms[row, 3 * d + q]
        for q in range(2 * d):
            gates[j, q] = -gates[j, q]
        for q in range(2 * d, 3 * d):
            gates[j, q] = tanh_argument(gates[j, q])
        for q in range(3 * d, width):
            gates[j, q] = -gates[j, q]


@njit(cache=True, nogil=True)
def _input_deltas(word_row, delta, n_words, arity, d):
    """dLoss/d(x W) per distinct word: the i|o|u deltas of its nodes and the sum
    of their forget-gate deltas (W^(f) is shared by the N forget gates)."""
    out = np.zeros((n_words, 4 * d), dtype=delta.dtype)
    for j in range(word_row.shape[0]):
        row = word_row[j]
        if row >= 0:
            for q in range(3 * d):
                out[row, q] += delta[j, q]
            for k in range(arity):
                for q in range(d):
                    out[row, 3 * d + q] += delta[j, (3 + k) * d + q]
    return out


@njit(cache=True, nogil=True)
def _cell_update(children, gates, c, start, stop, output_gate=True):
    """Eqs. 9-13 from the level's gates after ``_gate_exponents`` and expm1:
    i, o, f_k = sigma(z) and u = tanh(z) in place (o = 1
    without ``output_gate``), then c_j = i_j * u_j + sum_l f_jl * c_jl.

    Each loop over the d units is branch-free so it compiles to SIMD code
    (a test for a missing child inside it made the kernel several times
    slower); the sum runs over the children in the same order as before."""
    d = c.shape[1]
    width = gates.shape[1]
    for j in range(start, stop):
        for q in range(2 * d):
            gates[j, q] = sigmoid_from_expm1(gates[j, q])  # i, o
        for q in range(2 * d, 3 * d):
            gates[j, q] = tanh_from_expm1(gates[j, q])  # u
        for q in range(3 * d, width):
            gates[j, q] = sigmoid_from_expm1(gates[j, q])  # f_1 .. f_N
        if not output_gate:
            for q in range(d, 2 * d):
                gates[j, q] = ONE
        for q in range(d):
            c[j, q] = gates[j, q] * gates[j, 2 * d + q]
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                column = (3 + k) * d
                for q in range(d):
                    c[j, q] += gates[j, column + q] * c[kid, q]


@njit(cache=True, nogil=True)
def _gate_deltas(children, gates, c, tanh_c, d_h, d_c, delta, start, stop):
    """Backward through eqs. 14 and 13 to the gate pre-activations of one level;
    routes eps_c to the children.  Leaves are the level without children.
    A missing child's forget-gate deltas stay 0 (``delta`` starts zeroed).
    Loops over the d units are branch-free, as in ``_cell_update``."""
    d = c.shape[1]
    eps_c = np.empty(d, dtype=c.dtype)
    for j in range(start, stop):
        for q in range(d):
            i = gates[j, q]
            o = gates[j, d + q]
            u = gates[j, 2 * d + q]
            t = tanh_c[j, q]
            eps_h = d_h[j, q]
            delta[j, d + q] = eps_h * t * o * (ONE - o)  # delta_o
            eps_c[q] = d_c[j, q] + eps_h * o * (ONE - t * t)
            delta[j, q] = eps_c[q] * u * i * (ONE - i)  # delta_i
            delta[j, 2 * d + q] = eps_c[q] * i * (ONE - u * u)  # delta_u
        for k in range(children.shape[1]):
            kid = children[j, k]
            if kid >= 0:
                column = (3 + k) * d
                for q in range(d):
                    f = gates[j, column + q]
                    delta[j, column + q] = eps_c[q] * c[kid, q] * f * (ONE - f)  # delta_fk
                    d_c[kid, q] += eps_c[q] * f  # eps_c of child k
        for q in range(d):  # kept for backward_terms: eps_c_j in full
            d_c[j, q] = eps_c[q]
