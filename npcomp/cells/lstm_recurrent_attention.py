r"""LSTM with recurrent attention (Nayebi & Blundell Sec. 3.5, eqs. 9-13;
after the deep attention fusion of Cheng, Dong & Lapata 2016).

A sentence is a chain (node t reads word t; the chain's root is its last
word T).  The LSTM of eq. 4 (``lstm.py``) gives hidden states h_t and memory
cells m_t.  At every step t, attention over the steps so far re-reads them.
An LSTM-like "adaptive transfer" layer with an extra gate r_t carries the
attended memory into its own cell k_t.  A highway layer on its last state
s_T gives the representation the classifier reads.  Row-vector orientation
(``x @ W`` is the paper's W x; every code matrix is the transpose of the
paper's), v_j = [h_j | m_j] (2d):

    h_t, m_t = LSTM(x_t, h_{t-1}, m_{t-1})     (4), m_t is eq. 4's c_t
    e_j = v_j w_a                              score, one number per step
    alpha_j^t = exp(e_j) / sum_{j'=1..t} exp(e_j'),   j = 1..t            (9)
    v~_t = [h~_t | m~_t] = sum_{j=1..t} alpha_j^t v_j                       (9)
    r_t  = sigma( h~_t W_r + b_r )                                         (10)
    i_t  = sigma( x_t W_x^(i) + s_{t-1} U_s^(i) + b_s^(i) )   x_t = v~_t     (11)
    f_t  = sigma( x_t W_x^(f) + s_{t-1} U_s^(f) + b_s^(f) )                (11)
    k~_t = tanh ( x_t W_x^(k) + s_{t-1} U_s^(k) + b_s^(k) )                (11)
    o_t  = sigma( x_t W_x^(o) + s_{t-1} U_s^(o) + b_s^(o) )                (11)
    k_t  = f_t * k_{t-1} + i_t * k~_t + r_t * m~_t                         (10)
    s_t  = o_t * tanh(k_t),      s_0 = k_0 = 0                             (10)
    H    = s_T W_H + b_H                                                   (12)
    T    = sigma( s_T W_T + b_T ),   b_T initialised to -2                  (12)
    s^_T = H * T + s_T * (1 - T)                                           (12)
    y^   = softmax( s^_T W_p + b_p )     the classifier (heads.py)        (13)

Readings (docs/cells/lstm_recurrent_attention.md, A1-A8).  The softmax of
eq. 9 runs over j = 1..t, the steps the sum covers: a prefix softmax, a
different distribution at every t.  A bias on e_j would cancel in it, so
w_a has none.  W_r reads h~_t only, as printed.  The transfer layer's size
is the LSTM's d.  Eq. 12's H has no non-linearity, as printed.  The
recurrent dropout of the transfer layer masks s_{t-1} where it enters U_s.

Prefix softmax in O(T d) (``prefix_attention``).  With M_t = max_{j<=t}
e_j and Z_t = sum_{j<=t} exp(e_j - M_t), the running sums

    S_t = sum_{j<=t} exp(e_j - M_t) v_j,   v~_t = S_t / Z_t

are updated from S_{t-1}, Z_{t-1} by rescaling both by exp(M_{t-1} - M_t)
<= 1 when the maximum grows (the "online softmax"), so every exponent is
<= 0.  Memory is O(n d): no (T, T) matrix of alpha_j^t is formed, and a
1000-word chain costs 1000 steps, not 10^6.

Output: row T of each chain (``forest.root``) holds s^_T (d), every other
row is 0.  The model classifies whole sequences (eq. 13 at the last step),
so a labelled non-root node is refused by ``check_forest``.

Recurrent dropout (Gal 2015; Nayebi Sec. 4.1: 0.25 on the LSTM, 0.3 on the
transfer layer): ``recurrent_widths() == [d, d]``.  Mask m^h goes to the
LSTM (lstm.py).  Mask m^s, one per sentence, multiplies s_{t-1} in eq. 11:
s_{t-1} U_s becomes (s_{t-1} * m^s) U_s.  k_{t-1}, the attended states and
the output are not masked.

Backward, with eps = dJ/d(state) and delta = dJ/d(pre-activation), each
line reversing the forward equation named.  Highway, at each root
(``_highway_backward``):

    eps_H    = eps_s^ * T                                    reverses (12)
    delta_T  = eps_s^ * (H - s_T) * T (1 - T)                reverses (12)
    eps_s_T  = eps_s^ * (1 - T) + eps_H W_H^T + delta_T W_T^T
    dW_H += s_T^T eps_H, db_H += eps_H, dW_T += s_T^T delta_T, db_T += delta_T

Transfer layer, levels (time steps) from the last down (``_transfer_deltas``);
the next step has already added its shares to eps_s_t and eps_k_t:

    delta_o  = eps_s_t * tanh(k_t) * o(1-o)                  reverses (10) s_t
    eps_k_t += eps_s_t * o * (1 - tanh(k_t)^2)               reverses (10) s_t
    delta_i  = eps_k_t * k~_t * i(1-i)                       reverses (10), (11)
    delta_k  = eps_k_t * i * (1 - k~_t^2)                    reverses (10), (11)
    delta_f  = eps_k_t * k_{t-1} * f(1-f)     (0 at t = 1)   reverses (10), (11)
    delta_r  = eps_k_t * m~_t * r(1-r)                       reverses (10) r_t
    eps_m~_t = eps_k_t * r_t                  direct path of r_t * m~_t
    eps_k_{t-1}  = eps_k_t * f_t                             reverses (10) k_t
    eps_s_{t-1} += (delta_t U_s^T) * m^s                     reverses (11)
    dU_s += (s_{t-1} * m^s)^T delta_t,  dW_x += v~_t^T delta_t,  db_s += delta_t
    dW_r += h~_t^T delta_r,  db_r += delta_r
    eps_v~_t = delta_t W_x^T + [delta_r W_r^T | eps_m~_t]    reverses (11), (10)

Prefix attention (``prefix_attention_backward``).  With g_t = eps_v~_t,
dv~_t/dv_j = alpha_j^t and dv~_t/de_j = alpha_j^t (v_j - v~_t), j <= t:

    eps_v_j   = sum_{t>=j} alpha_j^t g_t                                   reverses (9)
    delta_a_j = sum_{t>=j} alpha_j^t (v_j - v~_t) . g_t    dJ/de_j         reverses (9)
    eps_v_j  += delta_a_j w_a,   dw_a += sum_j delta_a_j v_j

Both sums run over the future steps t >= j.  alpha_j^t =
exp(e_j - M_j) exp(M_j - M_t) / Z_t, and the first factor does not depend on
t.  So suffix sums computed from t = T down give them in O(T d):

    G_j = g_j / Z_j + exp(M_j - M_{j+1}) G_{j+1}                      (2d)
    q_j = (v~_j . g_j) / Z_j + exp(M_j - M_{j+1}) q_{j+1}             scalar
    eps_v_j = exp(e_j - M_j) G_j,    delta_a_j = exp(e_j - M_j) (v_j . G_j - q_j)

Every factor is <= 1 (M is non-decreasing in t) and Z >= 1.  q is the
softmax Jacobian's subtraction term; a planted-bug test removes it
(tests/cells/test_cell_lstm_recurrent_attention.py).  Last, eps_v = [eps_h | eps_m]
enters the LSTM's backward: eps_h on its states and eps_m on its memory
cells (``d_c`` of treelstm_nary.py's backward, which adds eps_m_t to eps_c_t
before step t's gate deltas; a test checks it by finite differences).  The
backward keeps the error terms above on the cache for ``backward_terms`` (eps_k
in full: ``_transfer_deltas`` writes eps_k_t back), the LSTM's on ``cache.lstm``.

=========================  ====================================  ==========
paper                      code                                  shape
=========================  ====================================  ==========
W_*, U_*, b_* of (4)       ``W``, ``U``, ``b`` (columns i|o|u|f)  (d_x, 4d), (d, 4d), (4d,)
m_t (eq. 4's c_t)          ``cache.lstm.c``                      (n, d)
W_a                        ``W_a`` (row w_a): h rows, then m     (2d,)
[h~_t; m~_t]               ``cache.v_tilde``                     (n, 2d)
W_r, b_r                   ``W_r``, ``b_r``                      (d, d), (d,)
W_i, W_o, W_k, W_f         ``W_x`` columns i|o|k|f                (2d, 4d)
U_i, U_o, U_k, U_f         ``U_s`` columns i|o|k|f                (d, 4d)
b_i, b_o, b_k, b_f         ``b_s``                               (4d,)
k_t, s_t                   ``cache.k``, ``cache.s``              (n, d)
W_H, b_H                   ``W_H``, ``b_H``                      (d, d), (d,)
W_T, b_T                   ``W_T``, ``b_T`` (b_T init -2)        (d, d), (d,)
s^_T                       ``out[root]``                         (d,)
=========================  ====================================  ==========
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..forest import Forest
from npcomp.cells.kernels.activations import uniform_fan_in
from .interface import (
    Part,
    SequenceCell,
    StateTerm,
    Term,
    TermParts,
    inner_nudge,
    node_rows,
    nudge_rows,
    reasons,
    steps_after,
)
from npcomp.cells.kernels.levels import ROW_PAD, children_columns, padded_stop, sigmoid
from .lstm import ChainLSTM
from npcomp.cells.kernels.lstm_kernels import gather_children, scatter_to_children
from npcomp.cells.kernels.prefix_attention import prefix_attention, prefix_attention_backward, prefix_sums
from npcomp.cells.kernels.recurrence import chain_layout
from npcomp.cells.kernels.transfer_layer import (
    highway_backward as _highway_backward,
    transfer_cell as _transfer_cell,
    transfer_deltas as _transfer_deltas,
    transfer_gate_functions,
)

GATES = ("i", "o", "k", "f")  # column blocks of W_x, U_s, b_s
# Srivastava et al. 2015, Nayebi Sec. 3.5: the transform gate starts closed (carry)
TRANSFORM_BIAS = -2.0


@dataclass
class RecurrentAttentionCache:
    lstm: object  # the LSTM's cache (lstm.py); lstm.c holds m_t
    v: np.ndarray  # (n, 2d) [h_t | m_t]
    score: np.ndarray  # (n,) e_t
    order: np.ndarray  # chain_layout
    chain_ptr: np.ndarray
    v_tilde: np.ndarray  # (n, 2d) [h~_t | m~_t], eq. 9
    run_max: np.ndarray  # (n,) M_t
    run_sum: np.ndarray  # (n,) Z_t
    r: np.ndarray  # (n, d) eq. 10
    previous: np.ndarray  # (n + 3, d) s_{t-1} * m^s (0 at t = 1; 3 spare rows)
    gates: np.ndarray  # (n + 3, 4d) i|o|k~|f activations (3 spare rows)
    k: np.ndarray  # (n, d)
    tanh_k: np.ndarray  # (n, d)
    s: np.ndarray  # (n, d)
    s_T: np.ndarray  # (sentences, d)
    H: np.ndarray  # (sentences, d) eq. 12
    T: np.ndarray  # (sentences, d) eq. 12
    s_hat: np.ndarray  # (sentences, d) s^_T, eq. 12
    node_mask: np.ndarray | None  # (n, d) m^s of each node's sentence, or None
    # what the backward leaves for ``backward_terms`` (module docstring's
    # symbols): eps_s^, eps_H, delta_T (sentences, d); eps_s, eps_k, delta_r,
    # eps_m~ (n, d); delta (n + 3, 4d) columns i|o|k|f; eps_v~, eps_v (n, 2d);
    # delta_a (n,)
    eps_s_hat: np.ndarray | None = None
    eps_H: np.ndarray | None = None
    delta_T: np.ndarray | None = None
    eps_s: np.ndarray | None = None
    eps_k: np.ndarray | None = None
    delta: np.ndarray | None = None
    delta_r: np.ndarray | None = None
    eps_m_direct: np.ndarray | None = None
    eps_v_tilde: np.ndarray | None = None
    eps_v: np.ndarray | None = None
    delta_a: np.ndarray | None = None


class RecurrentAttentionLSTM(SequenceCell):
    """Chain LSTM + prefix attention + adaptive transfer LSTM + highway (eqs. 4, 9-12)."""

    name = "lstm-recurrent-attn"
    labels_at_roots_only = True

    def __init__(self, input_dim: int, hidden_dim: int, forget_bias: float = 0.0):
        self.input_dim = input_dim
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim
        self.lstm = ChainLSTM(input_dim, hidden_dim, forget_bias=forget_bias)

    def parameter_shapes(self) -> list:
        d = self.hidden_dim
        return self.lstm.parameter_shapes() + [
            ("W_a", (2 * d,)),
            ("W_r", (d, d)),
            ("b_r", (d,)),
            ("W_x", (2 * d, 4 * d)),
            ("U_s", (d, 4 * d)),
            ("b_s", (4 * d,)),
            ("W_H", (d, d)),
            ("b_H", (d,)),
            ("W_T", (d, d)),
            ("b_T", (d,)),
        ]

    def report_slices(self) -> dict:
        d = self.hidden_dim
        out = dict(self.lstm.report_slices())
        out["W_a.h"] = ("W_a", (slice(0, d),))
        out["W_a.m"] = ("W_a", (slice(d, 2 * d),))
        for g, gate in enumerate(GATES):
            columns = slice(g * d, (g + 1) * d)
            out[f"W_x.{gate}"] = ("W_x", (slice(None), columns))
            out[f"U_s.{gate}"] = ("U_s", (slice(None), columns))
            out[f"b_s.{gate}"] = ("b_s", (columns,))
        return out

    def initialise(self, params: dict, rng: np.random.Generator) -> None:
        """Uniform +-1/sqrt(fan-in), as the other cells; b_T = -2 (eq. 12)."""
        d = self.hidden_dim
        self.lstm.initialise(params, rng)
        uniform_fan_in(params["W_a"], 2 * d, rng)
        for name, fan_in in (
            ("W_r", d),
            ("b_r", d),
            ("W_x", 2 * d),
            ("U_s", d),
            ("b_s", d),
            ("W_H", d),
            ("b_H", d),
            ("W_T", d),
        ):
            uniform_fan_in(params[name], fan_in, rng)
        params["b_T"][...] = TRANSFORM_BIAS

    def recurrent_widths(self) -> list:
        """[d, d]: the LSTM's h_{t-1} -> step t and the transfer layer's s_{t-1} -> step t."""
        return [self.hidden_dim, self.hidden_dim]

    def forward(
        self, params: dict, forest: Forest, x: np.ndarray, word_index: np.ndarray, recurrent_masks=None, nudge=None
    ):
        """x: (U, d_x) distinct words; word_index: (n,) row of x per node;
        recurrent_masks: None or [m^h, m^s], each (sentences, d).  Returns out
        (n, d) (s^_T at each chain's root, 0 elsewhere) and the cache.
        ``nudge`` (interface.Nudge) moves one step's h or m (in the LSTM), v
        (before eq. 9 reads it), v~ (after eq. 9), k (after eq. 10's k_t,
        before its s_t) or s."""
        n, d, dtype = forest.n_nodes, self.hidden_dim, x.dtype
        lstm_masks, node_mask = {}, None
        if recurrent_masks is not None:
            if len(recurrent_masks) != 2:
                raise ValueError(
                    f"{self.name} has two recurrent connections (LSTM, transfer "
                    f"layer), got {len(recurrent_masks)} masks"
                )
            if recurrent_masks[1].shape != (forest.n_trees, d):
                raise ValueError(
                    f"{self.name}: a recurrent mask must be (trees, d) = "
                    f"{(forest.n_trees, d)}, not {recurrent_masks[1].shape}"
                )
            lstm_masks = {"recurrent_masks": [recurrent_masks[0]]}
            node_mask = np.ascontiguousarray(recurrent_masks[1][forest.tree], dtype=dtype)
        h, lstm_cache = self.lstm.forward(
            params, forest, x, word_index, **lstm_masks, nudge=inner_nudge(nudge, {"h": "h", "m": "c"})
        )  # (4)
        v = np.concatenate([h, lstm_cache.c], axis=1)  # [h_t | m_t]
        nudge_rows(nudge, "v", v)
        score = v @ params["W_a"]  # e_t
        order, chain_ptr = chain_layout(forest)
        v_tilde = np.empty_like(v)
        run_max = np.empty(n, dtype=dtype)
        run_sum = np.empty(n, dtype=dtype)
        prefix_attention(order, chain_ptr, v, score, v_tilde, run_max, run_sum)  # (9)
        nudge_rows(nudge, "v~", v_tilde)
        with np.errstate(over="ignore"):  # exp overflow in the sigmoid gives exactly 0
            r = v_tilde[:, :d] @ params["W_r"] + params["b_r"]  # (10) r_t
            sigmoid(r)
            # the x_t terms of eq. 11 for every step at once: x_t = v~_t is known
            inputs = v_tilde @ params["W_x"] + params["b_s"]
            previous, gates, k, tanh_k, s = self._transfer_forward(params, forest, inputs, r, v_tilde, node_mask, nudge)
            s_T = s[forest.root]
            H = s_T @ params["W_H"] + params["b_H"]  # (12)
            T = s_T @ params["W_T"] + params["b_T"]
            sigmoid(T)
        s_hat = H * T + s_T * (1 - T)  # (12)
        out = np.zeros((n, d), dtype=dtype)
        out[forest.root] = s_hat
        return out, RecurrentAttentionCache(
            lstm_cache,
            v,
            score,
            order,
            chain_ptr,
            v_tilde,
            run_max,
            run_sum,
            r,
            previous,
            gates,
            k,
            tanh_k,
            s,
            s_T,
            H,
            T,
            s_hat,
            node_mask,
        )

    def _transfer_forward(
        self, params: dict, forest: Forest, inputs: np.ndarray, r: np.ndarray, v_tilde: np.ndarray, node_mask, nudge
    ) -> tuple:
        """The transfer layer's recurrence over the steps, a level (one step of
        every sentence) at a time: eq. 11's gates (``inputs``: their x_t terms
        and bias, every step at once), eq. 10's k_t and s_t.  Returns the
        (masked) s_{t-1} rows, the gates, k, tanh(k) and s."""
        n, d, dtype = forest.n_nodes, self.hidden_dim, inputs.dtype
        children = children_columns(forest, 1)
        previous = np.zeros((n + ROW_PAD, d), dtype=dtype)
        gates = np.empty((n + ROW_PAD, 4 * d), dtype=dtype)
        k = np.empty((n, d), dtype=dtype)
        tanh_k = np.empty((n, d), dtype=dtype)
        s = np.empty((n, d), dtype=dtype)
        u_s = params["U_s"]
        for start, stop in forest.levels():
            gather_children(children, s, previous, start, stop)  # s_{t-1}
            if node_mask is not None:
                previous[start:stop] *= node_mask[start:stop]  # * m^s
            padded = padded_stop(start, stop)
            np.matmul(previous[start:padded], u_s, out=gates[start:padded])  # (11)
            z = gates[start:stop]
            z += inputs[start:stop]
            transfer_gate_functions(z, d)
            _transfer_cell(children, gates, r, v_tilde, k, start, stop)  # (10) k_t
            nudge_rows(nudge, "k", k, start, stop)
            np.tanh(k[start:stop], out=tanh_k[start:stop])
            np.multiply(z[:, d : 2 * d], tanh_k[start:stop], out=s[start:stop])  # (10) s_t
            nudge_rows(nudge, "s", s, start, stop)
        return previous, gates, k, tanh_k, s

    def backward(
        self, params: dict, forest: Forest, cache: RecurrentAttentionCache, d_out: np.ndarray, grads: dict
    ) -> np.ndarray:
        """d_out: (n, d) dJ/dout (only the roots' rows are read).  Adds dJ/dparams
        into ``grads``; returns dJ/dx (U, d_x)."""
        n, d = forest.n_nodes, self.hidden_dim
        dtype = cache.v.dtype
        eps_s = np.zeros((n, d), dtype=dtype)
        eps_s_hat = d_out[forest.root]
        eps_s[forest.root], eps_H, delta_T = _highway_backward(
            params, grads, cache.s_T, cache.H, cache.T, eps_s_hat
        )  # (12)
        children = children_columns(forest, 1)
        eps_k = np.zeros((n, d), dtype=dtype)
        delta = np.zeros((n + ROW_PAD, 4 * d), dtype=dtype)
        delta_r = np.empty((n, d), dtype=dtype)
        eps_m_direct = np.empty((n, d), dtype=dtype)
        u_s_transposed = params["U_s"].T
        node_mask = cache.node_mask

        def rows_backward(start: int, stop: int) -> None:
            _transfer_deltas(
                children,
                cache.gates,
                cache.k,
                cache.tanh_k,
                cache.r,
                cache.v_tilde,
                eps_s,
                eps_k,
                delta,
                delta_r,
                eps_m_direct,
                start,
                stop,
            )  # (10), (11)
            d_previous = delta[start : padded_stop(start, stop)] @ u_s_transposed  # (11)
            if node_mask is not None:
                d_previous[: stop - start] *= node_mask[start:stop]  # * m^s
            scatter_to_children(children, d_previous, eps_s, start, stop)

        for start, stop in forest.levels(downward=True):
            rows_backward(start, stop)
        first = forest.n_leaves  # the first steps read s_0 = 0
        grads["U_s"] += cache.previous[first:n].T @ delta[first:n]
        grads["W_x"] += cache.v_tilde.T @ delta[:n]
        grads["b_s"] += delta[:n].sum(axis=0)
        grads["W_r"] += cache.v_tilde[:, :d].T @ delta_r
        grads["b_r"] += delta_r.sum(axis=0)
        eps_v_tilde = delta[:n] @ params["W_x"].T  # (11)
        eps_v_tilde[:, :d] += delta_r @ params["W_r"].T  # (10) r_t
        eps_v_tilde[:, d:] += eps_m_direct  # (10) r_t * m~_t
        eps_v = np.zeros_like(cache.v)
        delta_a = np.empty_like(cache.score)
        prefix_attention_backward(
            cache.order,
            cache.chain_ptr,
            cache.v,
            cache.score,
            cache.v_tilde,
            cache.run_max,
            cache.run_sum,
            eps_v_tilde,
            eps_v,
            delta_a,
        )  # (9)
        eps_v += delta_a[:, None] * params["W_a"]  # e_j = v_j w_a
        grads["W_a"] += delta_a @ cache.v
        cache.eps_s_hat, cache.eps_H, cache.delta_T = eps_s_hat, eps_H, delta_T
        cache.eps_s, cache.eps_k, cache.delta, cache.delta_r = eps_s, eps_k, delta, delta_r
        cache.eps_m_direct, cache.eps_v_tilde, cache.eps_v = eps_m_direct, eps_v_tilde, eps_v
        cache.delta_a = delta_a
        # (4): the LSTM's backward with gradients on its states h_j and its cells m_j
        return self.lstm.backward_from_states(
            params, forest, cache.lstm, np.ascontiguousarray(eps_v[:, :d]), np.ascontiguousarray(eps_v[:, d:]), grads
        )

    def forward_terms(self, forest: Forest, cache: RecurrentAttentionCache) -> list:
        """The LSTM's i, f, o, u, m, h (eq. 4), e_j, h~_t and m~_t (eq. 9), r_t,
        the transfer layer's gates (suffixed _s where the LSTM has the same
        letter), k~_t, k_t, s_t, then H, T and s^_T at each sentence's last
        step, as reference/lstm_recurrent_attention.py names them."""
        n, d = forest.n_nodes, self.hidden_dim
        gates = cache.gates[:n]
        later = np.flatnonzero(forest.n_children > 0)  # steps with a k_{t-1} to forget
        root = forest.root
        return _lstm_terms(self.lstm.forward_terms(forest, cache.lstm), "4") + [
            Term("e", "9", cache.score, "A2"),
            Term("h~", "9", cache.v_tilde[:, :d], "A1"),
            Term("m~", "9", cache.v_tilde[:, d:], "A1"),
            Term("r", "10", cache.r, "A3"),
            Term("i_s", "11", gates[:, :d]),
            Term("f_s", "11", node_rows(n, later, gates[later, 3 * d :]), "A5"),
            Term("k~", "11", gates[:, 2 * d : 3 * d]),
            Term("o_s", "11", gates[:, d : 2 * d]),
            Term("k", "10", cache.k, "A4"),
            Term("s", "10", cache.s, "A5"),
            Term("H", "12", node_rows(n, root, cache.H), "A6"),
            Term("T", "12", node_rows(n, root, cache.T), "A6"),
            Term("s^_T", "12", node_rows(n, root, cache.s_hat), "A6"),
        ]

    def backward_terms(self, forest: Forest, cache: RecurrentAttentionCache) -> list:
        """The highway's eps_s^, eps_H, delta_T at the last steps; the transfer
        layer's eps_s, eps_k, gate deltas (suffixed _s where the LSTM has the
        same letter), delta_r, eps_m~ (the direct path of r_t * m~_t) and
        eps_v~; the attention's eps_v and delta_a; then the LSTM's, with
        eps_m its memory cells' eps_c."""
        n, d = forest.n_nodes, self.hidden_dim
        delta = cache.delta[:n]
        later = np.flatnonzero(forest.n_children > 0)
        root = forest.root
        return [
            Term("eps_s^", "reverses 13", node_rows(n, root, cache.eps_s_hat)),
            Term("eps_H", "reverses 12", node_rows(n, root, cache.eps_H), "A6"),
            Term("delta_T", "reverses 12", node_rows(n, root, cache.delta_T), "A6"),
            Term("eps_s", "reverses 12, 11", cache.eps_s, "A7"),
            Term("eps_k", "reverses 10", cache.eps_k),
            Term("delta_o_s", "reverses 10, 11", delta[:, d : 2 * d]),
            Term("delta_i_s", "reverses 10, 11", delta[:, :d]),
            Term("delta_k", "reverses 10, 11", delta[:, 2 * d : 3 * d]),
            Term("delta_f_s", "reverses 10, 11", node_rows(n, later, delta[later, 3 * d :]), "A5"),
            Term("delta_r", "reverses 10", cache.delta_r, "A3"),
            Term("eps_m~", "reverses 10", cache.eps_m_direct),
            Term("eps_v~", "reverses 11, 10", cache.eps_v_tilde),
            Term("eps_v", "reverses 9", cache.eps_v, "A1"),
            Term("delta_a", "reverses 9", cache.delta_a, "A1"),
        ] + _lstm_terms(self.lstm.backward_terms(forest, cache.lstm), "reverses 4")

    def state_terms(self, forest: Forest, cache: RecurrentAttentionCache) -> list:
        """The transfer layer's s and k, the attended v~ and the attended v =
        [h | m], then the LSTM's h and m (its c)."""
        return [
            StateTerm("s", "eps_s"),
            StateTerm("k", "eps_k"),
            StateTerm("v~", "eps_v~"),
            StateTerm("v", "eps_v"),
            StateTerm("h", "eps_h"),
            StateTerm("m", "eps_m"),
        ]

    def term_parts(self, params: dict, forest: Forest, cache: RecurrentAttentionCache, d_out: np.ndarray) -> list:
        """eps_s_t: the highway's at the last step (carry, H, T) and step t+1's
        through U_s; eps_k_t: its own eps_s o tanh'(k) and step t+1's forget
        gate; the LSTM's eps_h and eps_m: the prefix attention's sums
        sum_{t >= j} alpha_j^t eps_v~_t and the score's delta_a_j w_a (eq. 9),
        then the LSTM's own parts."""
        n, d = forest.n_nodes, self.hidden_dim
        root = forest.root
        steps, after, last_word = steps_after(forest)
        mask = np.ones((n, d)) if cache.node_mask is None else cache.node_mask
        highway_zero = reasons(n, (forest.parent >= 0, "not the last step: (12) reads s_T"))
        highway = []
        for label, values in (
            ("eps_s^ (1 - T)", cache.eps_s_hat * (1 - cache.T)),
            ("(W_H)^T eps_H", cache.eps_H @ params["W_H"].T),
            ("(W_T)^T delta_T", cache.delta_T @ params["W_T"].T),
        ):
            rows = np.zeros((n, d))
            rows[root] = values
            highway.append(Part(label, "reverses 12", rows, highway_zero))
        recurrence, forget = np.zeros((n, d)), np.zeros((n, d))
        recurrence[steps] = (cache.delta[after] @ params["U_s"].T) * mask[steps]
        forget[steps] = cache.eps_k[after] * cache.gates[after, 3 * d :]
        o = cache.gates[:n, d : 2 * d]
        transfer = [
            TermParts("eps_s", highway + [Part("(delta_{t+1} U_s^T) * m^s", "reverses 11", recurrence, last_word)]),
            TermParts(
                "eps_k",
                [
                    Part(
                        "eps_s o (1 - tanh(k)^2)",
                        "reverses 10 (s_t)",
                        cache.eps_s * o * (1 - cache.tanh_k**2),
                        reasons(n),
                    ),
                    Part("eps_k_{t+1} f_{t+1}", "reverses 10 (k_{t+1})", forget, last_word),
                ],
            ),
        ]
        attended = prefix_sums(cache.order, cache.chain_ptr, cache.score, cache.eps_v_tilde)
        score = cache.delta_a[:, None] * params["W_a"]
        upstream = [
            [
                Part(f"sum_t alpha_j^t eps_{name}~_t", "reverses 9", attended[:, half], reasons(n)),
                Part(f"delta_a_j w_a^{name}", "reverses 9 (e_j = v_j w_a)", score[:, half], reasons(n)),
            ]
            for name, half in (("h", slice(0, d)), ("m", slice(d, 2 * d)))
        ]
        lstm = self.lstm.parts_from(params, forest, cache.lstm, upstream[0], upstream[1])
        return transfer + [replace(term, symbol=LSTM_SYMBOLS.get(term.symbol, term.symbol)) for term in lstm]


# the LSTM's memory cell c_t is eq. 4's m_t; Tai's eq. 1 is Nayebi's eq. 4
LSTM_SYMBOLS = {"c": "m", "eps_c": "eps_m"}


def _lstm_terms(terms: list, equation: str) -> list:
    return [replace(term, symbol=LSTM_SYMBOLS.get(term.symbol, term.symbol), equation=equation) for term in terms]
