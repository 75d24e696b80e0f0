r"""npcomp's tree cells and chain LSTMs, level-batched in PyTorch: the
baselines ``bench_torch_cells.py`` measures npcomp against, in the same run.

Each counterpart is written the way a careful PyTorch user batches trees.
npcomp's forest supplies the schedule (children before parents, each level a
contiguous block of nodes, ``npcomp/forest.py``); the index tensors of a
level are computed from the forest's arrays before the level loop; a level's
gate pre-activations are one matrix product over all its nodes (two where the
equations need the node's own new cell first: S-LSTM, LSTM-RNN), children are
gathered with ``index_select`` and the Child-Sum cell's sums over children
are ``index_add_``; products with the word vectors are done once per distinct
word of the minibatch wherever npcomp does them once per distinct word;
autograd does the backward and ``torch.optim.Adagrad`` the update (lambda as
weight decay on every weight but the embedding table, which gets sparse
gradients at its own rate).  No loop in Python runs over nodes.

Every counterpart keeps npcomp's parameter names, shapes and column layout
(``cell.<name>`` of ``npcomp.params.Parameters``), so ``load_npcomp`` copies
an npcomp model's weights and ``npcomp_gradients`` hands back the gradients
in npcomp's layout; ``check_against_npcomp`` compares both on one forest.
The objective is npcomp's (``npcomp/models/``, ``average="sentences"``):
the summed negative log-likelihood of the labelled nodes' classes over the
number of trees, with dropout on the classifier input.  Row-vector
orientation throughout (``x @ W`` is the paper's W x); sigma is the logistic
function.

``treelstm-nary`` (``npcomp/cells/treelstm_nary.py``, Tai et al. eqs. 9-14,
N = 2, inputs at the leaves only; binarised constituency trees)::

    i, o, u at a leaf from x W + b (once per distinct word), c = i * u
    [i | o | u | f_1 | f_2] = [h_1 | h_2] U + [b_i | b_o | b_u | b_f | b_f]
    c = i * u + f_1 * c_1 + f_2 * c_2,   h = o * tanh(c)

``treelstm-childsum`` (``treelstm_childsum.py``, Tai et al. eqs. 2-8; any
number of children, a word at any node, x = 0 where a node reads none: over
the SST's constituency trees the inner nodes read none, over dependency
parses every node reads one)::

    h~ = sum_k h_k (index_add_),   [i | o | u] = x W_iou + h~ U + b_iou
    f_k = sigma(x W_f + h_k U_f + b_f),   c = i * u + sum_k f_k * c_k (index_add_)
    h = o * tanh(c)

``slstm`` (``slstm.py``, Zhu et al. eqs. 1-7; a leaf's h is its word vector,
or x W_leaf when d_x != d, and its c is 0)::

    [z_i | z_fl | z_fr | x_t | z_o] = [h^L | h^R] W_h + b
    [i | f^L | f^R] = sigma([z_i | z_fl | z_fr] + [c^L | c^R] W_c)
    c = f^L * c^L + f^R * c^R + i * tanh(x_t),   o = sigma(z_o + c W_co)
    h = o * tanh(c)

``lstm-rnn`` (``lstm_rnn.py``, Le & Zuidema Sec. 3, (L1)-(L7), tied leaves:
h = x, c = 0; g the ``activation``)::

    [i_1 i_2 f_1 f_2 a_1 a_2 o'] = [x | y] S_h + [c_x | c_y] S_c (blocks of W,
        W_peephole placed as lstm_rnn.TARGET: the second child reads the
        swapped input and forget weights)
    u = g(i_1 * a_1 + i_2 * a_2 + b_c),   c = f_1 * c_x + f_2 * c_y + u
    o = sigma(o' + c W_co + b_o),   h = o * g(c)

``rntn`` (``rntn.py``, Socher et al. 2013 as Nayebi & Blundell eq. 3; a
leaf's h is x, or tanh(x))::

    c = [a | b],   p_k = tanh(c V^[k] c^T + (c W)_k + b_k)
    (c V^[k] c^T)_k: one product c @ V reshaped (2d, 2d d), then a batched
    product with c

``recnn`` (``recnn.py``, Le & Zuidema eqs. 2-3, tied leaves: h = x)::

    p = g([x | y] W + b)

``mvrnn`` (``mvrnn.py``, Socher et al. 2012; a leaf is its word's [a | vec(A)],
a unary node's missing right child (0, I))::

    u = B a,  v = A b (batched matrix-vector products),  p = tanh([u | v] W + b)
    P = W_M[:d]^T A + W_M[d:]^T B

``rae`` (``rae.py``, Socher et al. 2011 on given trees; a leaf's h is x; a
missing child 0 with no words under it)::

    a = tanh([c_1 | c_2] W1 + b1),  h = a / ||a||,  [c_1' | c_2'] = h W2 + b2
    E_rec = sum_k n_k / (n_1 + n_2) (1/2) ||c_k' - c_k||^2, summed over the nodes;
    the model's loss: (alpha sum E_rec + (1 - alpha) cross-entropy) / trees

``drnn`` (``drnn.py``, Irsoy & Cardie 2014; layers k = 0..L-1, layer 1 the
untied RecNN, a leaf's layer 1 its word vector)::

    layer 1:   h = f([h_l | h_r] W[0] + b[0])   (a leaf child's x through W_leaf)
    layer k:   h = f([h_l | h_r | h_below] [W[k]; V[k-1]] + b[k])   (a leaf: h_below V + b,
               at k = 1 x V_leaf)

``dtrnn`` (``dtrnn.py``, Socher et al. 2014; any number of children, the
matrix of each child chosen by its position from the cell's own
``child_slots``)::

    h_i = tanh((x_i W_v + sum_j l(j) h_j W_pos(i,j)) / l(i) + b)
    (a batched product over a level's child edges, then index_add_ into the parents)

``sdtrnn`` (``sdtrnn.py``): the DT-RNN with each child's matrix chosen by
its dependency relation (the forest's ``relation``; W_dep without one).

``lstm`` (``lstm.py``, Tai eq. 1: the N-ary Tree-LSTM with N = 1 and a word
at every node; ``W``, ``U``, ``b`` columns i|o|u|f) over sentence chains,
x W + b once per distinct word, one step per level, a step's child always in
the level before::

    [i | o | u | f] = x_t W + h_{t-1} U + b,   c_t = i * u + f * c_{t-1}
    h_t = o * tanh(c_t)

``bilstm`` (``bilstm.py``, Tai Sec. 2.2): the chain LSTM over the chains and
over the reversed chains (``npcomp.forest.reverse_chains``), weights shared
unless ``untied``; the output at word t is [h^F_t | h^B_t], at a chain's
root [h^F_T | h^B_1].

Not covered: options the benchmarks do not use (untied leaves of ``recnn``
and ``lstm-rnn``, word-vector and recurrent dropout, the ordinal head).
Needs ``pip install torch`` (not an npcomp dependency).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from counterparts import comparison, softmax_model_sizes


def _index(array) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.int64))


def _activation(name: str):
    """g of the LSTM-RNN and RecNN (npcomp/cells/kernels/activations.py)."""
    return {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "softsign": F.softsign}[name]


def _levels(forest):
    """(start, stop) of every level above the leaves."""
    ptr = forest.level_ptr.tolist()
    return [(ptr[level], ptr[level + 1]) for level in range(1, forest.n_levels)]


def _binary_children(forest) -> torch.Tensor:
    """(n, 2) children as rows of a state table whose row 0 is the zero state
    of a missing child (node j is row j + 1)."""
    kids = np.full((forest.n_nodes, 2), -1, dtype=np.int64)
    kids[:, : min(2, forest.max_children)] = forest.children[:, :2]
    return _index(kids + 1)


def _lstm_gates(z: torch.Tensor, d: int):
    """sigma on i, o (and any forget columns after u), tanh on u: columns
    i|o|u|f..., the layout of the Tree-LSTMs and the chain LSTM."""
    return (
        torch.sigmoid(z[:, :d]),
        torch.sigmoid(z[:, d : 2 * d]),
        torch.tanh(z[:, 2 * d : 3 * d]),
        torch.sigmoid(z[:, 3 * d :]),
    )


def _childless_lstm(z: torch.Tensor, d: int):
    """(h, c) of LSTM nodes without children (or previous step) from their
    i|o|u pre-activations: c = i * u, h = o * tanh(c)."""
    i, o, u, _ = _lstm_gates(z, d)
    c = i * u
    return o * torch.tanh(c), c


def _up_binary_levels(forest, h_leaves: torch.Tensor, c_leaves, compose) -> torch.Tensor:
    """h (n, d) of every node of a forest of binary trees, in forest order,
    level by level up from the leaves' ``h_leaves`` (and ``c_leaves``, or
    None for a cell without memory cells): ``compose(h_kids, c_kids)`` gives
    (h, c) of a level's m nodes from their children's states side by side,
    (m, 2d) each, a missing child's zero (c_kids and c None without memory)."""
    zero = h_leaves.new_zeros((1, h_leaves.shape[1]))
    h_all = torch.cat([zero, h_leaves])
    c_all = None if c_leaves is None else torch.cat([zero, c_leaves])
    children = _binary_children(forest)
    for start, stop in _levels(forest):
        kids = children[start:stop].reshape(-1)
        m = stop - start
        h_kids = h_all.index_select(0, kids).reshape(m, -1)
        c_kids = None if c_all is None else c_all.index_select(0, kids).reshape(m, -1)
        h, c = compose(h_kids, c_kids)
        h_all = torch.cat([h_all, h])
        if c_all is not None:
            c_all = torch.cat([c_all, c])
    return h_all[1:]


class Cell(torch.nn.Module):
    """A cell: parameters named as npcomp's, ``forward(forest, x, word_index)``
    -> h (n, output_dim) in forest order, where x (U, d_x) holds the distinct
    words' vectors and word_index the row of x of each word-reading node
    (npcomp's ``Cell.forward`` contract); its ``hidden_dim`` and
    ``output_dim`` (``hidden_dim`` unless given)."""

    def __init__(self, shapes: dict, hidden_dim: int, output_dim: int | None = None):
        super().__init__()
        for name, shape in shapes.items():
            self.register_parameter(name, torch.nn.Parameter(torch.zeros(shape)))
        self.hidden_dim = hidden_dim
        self.output_dim = hidden_dim if output_dim is None else output_dim


class NaryTreeLSTM(Cell):
    """Constituency Tree-LSTM (treelstm_nary.py, N = 2, inputs at the leaves)."""

    def __init__(self, input_dim: int, hidden_dim: int):
        d = hidden_dim
        super().__init__({"W": (input_dim, 3 * d), "U": (2 * d, 5 * d), "b": (4 * d,)}, d)

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        # leaves once per distinct word: eqs. 9, 11-14 without children
        word_h, word_c = _childless_lstm(x @ self.W + self.b[: 3 * d], d)
        leaf_rows = _index(word_index[: forest.n_leaves])
        bias = torch.cat([self.b[: 3 * d], self.b[3 * d :], self.b[3 * d :]])

        def compose(h_kids, c_kids):
            m = h_kids.shape[0]
            i, o, u, forget = _lstm_gates(h_kids @ self.U + bias, d)  # eqs. 9-12
            c = i * u + (forget.reshape(m, 2, d) * c_kids.reshape(m, 2, d)).sum(dim=1)  # eq. 13
            return o * torch.tanh(c), c  # eq. 14

        return _up_binary_levels(forest, word_h.index_select(0, leaf_rows), word_c.index_select(0, leaf_rows), compose)


class ChildSumTreeLSTM(Cell):
    """Child-Sum Tree-LSTM (treelstm_childsum.py, eqs. 2-8)."""

    def __init__(self, input_dim: int, hidden_dim: int):
        d = hidden_dim
        super().__init__({"W": (input_dim, 4 * d), "U": (d, 3 * d), "U_f": (d, d), "b": (4 * d,)}, d)

    @staticmethod
    def _plan(forest, word_index, n_words):
        """Per level: the input row of its nodes (a word, or row U: b alone),
        and its edges as (child node, parent's row within the level)."""
        input_row = np.full(forest.n_nodes, n_words, dtype=np.int64)
        input_row[forest.word_nodes()] = word_index
        plan = []
        for start, stop in _levels(forest):
            kids = forest.children[start:stop]
            parent_row, slot = np.nonzero(kids >= 0)
            plan.append(
                (start, stop, _index(input_row[start:stop]), _index(kids[parent_row, slot]), _index(parent_row))
            )
        return input_row, plan

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        n_words = x.shape[0]
        input_row, plan = self._plan(forest, word_index, n_words)
        # x W + b of eqs. 3-6 once per distinct word; the last row (b alone)
        # serves the nodes that read no word
        inputs = torch.cat([x @ self.W + self.b, self.b[None]])
        # leaves: h~ = 0 and no forget gate, so once per distinct word
        word_h, word_c = _childless_lstm(inputs[:n_words, : 3 * d], d)
        leaf_rows = _index(input_row[: forest.n_leaves])
        h_all = word_h.index_select(0, leaf_rows)
        c_all = word_c.index_select(0, leaf_rows)
        for start, stop, rows, edge_child, edge_parent in plan:
            m = stop - start
            node_inputs = inputs.index_select(0, rows)
            h_kids = h_all.index_select(0, edge_child)
            h_tilde = h_kids.new_zeros((m, d)).index_add_(0, edge_parent, h_kids)  # eq. 2
            i, o, u, _ = _lstm_gates(h_tilde @ self.U + node_inputs[:, : 3 * d], d)  # eqs. 3, 5, 6
            forget = torch.sigmoid(
                h_kids @ self.U_f  # eq. 4
                + node_inputs[:, 3 * d :].index_select(0, edge_parent)
            )
            carried = forget * c_all.index_select(0, edge_child)
            c = i * u + carried.new_zeros((m, d)).index_add_(0, edge_parent, carried)  # eq. 7
            h = o * torch.tanh(c)  # eq. 8
            h_all = torch.cat([h_all, h])
            c_all = torch.cat([c_all, c])
        return h_all


class SLSTM(Cell):
    """Zhu et al.'s S-LSTM (slstm.py, eqs. 1-7); gate columns i|fl|fr|x|o."""

    def __init__(self, input_dim: int, hidden_dim: int):
        d = hidden_dim
        shapes = {"W_h": (2 * d, 5 * d), "W_c": (2 * d, 3 * d), "W_co": (d, d), "b": (5 * d,)}
        if input_dim != hidden_dim:
            shapes["W_leaf"] = (input_dim, d)
        super().__init__(shapes, d)
        self.projected = input_dim != hidden_dim

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        words = x @ self.W_leaf if self.projected else x
        h_leaves = words.index_select(0, _index(word_index[: forest.n_leaves]))

        def compose(h_kids, c_kids):
            z = h_kids @ self.W_h + self.b
            gates = torch.sigmoid(z[:, : 3 * d] + c_kids @ self.W_c)  # (1)-(3)
            i, f_left, f_right = gates[:, :d], gates[:, d : 2 * d], gates[:, 2 * d :]
            c = f_left * c_kids[:, :d] + f_right * c_kids[:, d:] + i * torch.tanh(z[:, 3 * d : 4 * d])  # (4), (5)
            o = torch.sigmoid(z[:, 4 * d :] + c @ self.W_co)  # (6)
            return o * torch.tanh(c), c  # (7)

        # a leaf has no memory: c = 0
        return _up_binary_levels(forest, h_leaves, torch.zeros_like(h_leaves), compose)


class LSTMRNN(Cell):
    """Le & Zuidema's LSTM-RNN with tied leaves (lstm_rnn.py, (L1)-(L7))."""

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh"):
        if input_dim != hidden_dim:
            raise ValueError("tied leaves need input_dim == hidden_dim")
        d = hidden_dim
        super().__init__({"W": (d, 8 * d), "W_peephole": (d, 4 * d), "W_co": (d, d), "b": (4 * d,)}, d)
        self.g = _activation(activation)

    def _stacked(self):
        """(S_h (2d, 7d), S_c (2d, 4d)): [x | y] S_h and [c_x | c_y] S_c are the
        children's terms of gate blocks i_1 i_2 f_1 f_2 a_1 a_2 o (L1)-(L6).
        W's blocks are i1 i2 f1 f2 c1 c2 o1 o2, W_peephole's ci1 ci2 cf1 cf2;
        the right child reads the input and forget weights swapped."""
        d = self.hidden_dim
        w = [self.W[:, k * d : (k + 1) * d] for k in range(8)]
        p = [self.W_peephole[:, k * d : (k + 1) * d] for k in range(4)]
        zero = self.W.new_zeros((d, d))
        left = torch.cat([w[0], w[1], w[2], w[3], w[4], zero, w[6]], dim=1)
        right = torch.cat([w[1], w[0], w[3], w[2], zero, w[5], w[7]], dim=1)
        peep_left = torch.cat([p[0], p[1], p[2], p[3]], dim=1)
        peep_right = torch.cat([p[1], p[0], p[3], p[2]], dim=1)
        return torch.cat([left, right]), torch.cat([peep_left, peep_right])

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        stacked_h, stacked_c = self._stacked()
        b = self.b
        gate_bias = torch.cat([b[:d], b[:d], b[d : 2 * d], b[d : 2 * d]])
        h_leaves = x.index_select(0, _index(word_index[: forest.n_leaves]))  # h = x

        def compose(h_kids, c_kids):
            z = h_kids @ stacked_h
            gates = torch.sigmoid(z[:, : 4 * d] + c_kids @ stacked_c + gate_bias)  # (L1)-(L4)
            i_1, i_2, f_1, f_2 = gates.split(d, dim=1)
            u = self.g(i_1 * z[:, 4 * d : 5 * d] + i_2 * z[:, 5 * d : 6 * d] + b[2 * d : 3 * d])
            c = f_1 * c_kids[:, :d] + f_2 * c_kids[:, d:] + u  # (L5)
            o = torch.sigmoid(z[:, 6 * d :] + c @ self.W_co + b[3 * d :])  # (L6)
            return o * self.g(c), c  # (L7)

        # a leaf has no memory: c = 0
        return _up_binary_levels(forest, h_leaves, torch.zeros_like(h_leaves), compose)


class RNTN(Cell):
    """Recursive neural tensor network (rntn.py, eq. 3)."""

    def __init__(self, input_dim: int, hidden_dim: int, leaf_activation: str = "identity"):
        if input_dim != hidden_dim:
            raise ValueError("a leaf's state is its word vector: input_dim == hidden_dim")
        d = hidden_dim
        super().__init__({"V": (2 * d, 2 * d, d), "W": (2 * d, d), "b": (d,)}, d)
        self.leaf_tanh = leaf_activation == "tanh"

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        words = torch.tanh(x) if self.leaf_tanh else x
        v = self.V.reshape(2 * d, 2 * d * d)

        def compose(c, _):
            # (c V^[k] c^T)_k: sum_r c_r V[r, s, k] for every s, k, then with c_s
            tensor = torch.bmm(c[:, None, :], (c @ v).reshape(c.shape[0], 2 * d, d))[:, 0]
            return torch.tanh(tensor + c @ self.W + self.b), None

        return _up_binary_levels(forest, words.index_select(0, _index(word_index[: forest.n_leaves])), None, compose)


class RecNN(Cell):
    """Recursive neural network with tied leaves (recnn.py, eqs. 2-3)."""

    def __init__(self, input_dim: int, hidden_dim: int, activation: str = "tanh"):
        if input_dim != hidden_dim:
            raise ValueError("tied leaves need input_dim == hidden_dim")
        d = hidden_dim
        super().__init__({"W": (2 * d, d), "b": (d,)}, d)
        self.g = _activation(activation)

    def forward(self, forest, x, word_index):
        return _up_binary_levels(
            forest,
            x.index_select(0, _index(word_index[: forest.n_leaves])),
            None,
            lambda hc, _: (self.g(hc @ self.W + self.b), None),
        )


class MVRNN(Cell):
    """Matrix-vector RNN (mvrnn.py, MV1-MV2): a vector and a matrix per node."""

    def __init__(self, input_dim: int, hidden_dim: int):
        d = hidden_dim
        if input_dim != d + d * d:
            raise ValueError("a word is [a | vec(A)]: input_dim == d + d^2")
        super().__init__({"W": (2 * d, d), "b": (d,), "W_M": (2 * d, d)}, d)

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        words = x.index_select(0, _index(word_index[: forest.n_leaves]))
        # row 0 of the tables: a missing right child, (0, I)
        h_all = torch.cat([words.new_zeros((1, d)), words[:, :d]])
        M_all = torch.cat([torch.eye(d, dtype=x.dtype)[None], words[:, d:].reshape(-1, d, d)])
        children = _binary_children(forest)
        for start, stop in _levels(forest):
            left, right = children[start:stop, 0], children[start:stop, 1]
            a, A = h_all.index_select(0, left), M_all.index_select(0, left)
            b, B = h_all.index_select(0, right), M_all.index_select(0, right)
            u = torch.bmm(B, a[:, :, None])[:, :, 0]
            v = torch.bmm(A, b[:, :, None])[:, :, 0]
            p = torch.tanh(torch.cat([u, v], dim=1) @ self.W + self.b)
            P = self.W_M[:d].T @ A + self.W_M[d:].T @ B
            h_all = torch.cat([h_all, p])
            M_all = torch.cat([M_all, P])
        return h_all[1:]


class RAE(Cell):
    """Recursive autoencoder on given trees (rae.py, RA1-RA5): after a forward,
    ``reconstruction`` holds sum_j E_rec,j and ``reconstruction_weight`` alpha."""

    def __init__(self, input_dim: int, hidden_dim: int, reconstruction_weight: float = 0.2):
        if input_dim != hidden_dim:
            raise ValueError("a leaf's state is its word vector: input_dim == hidden_dim")
        d = hidden_dim
        super().__init__({"W1": (2 * d, d), "b1": (d,), "W2": (d, 2 * d), "b2": (2 * d,)}, d)
        self.reconstruction_weight = reconstruction_weight
        self.reconstruction = None

    def forward(self, forest, x, word_index):
        d = self.hidden_dim
        children = _binary_children(forest)
        # the words under each node, row 0 a missing child's 0
        span = np.zeros(forest.n_nodes + 1)
        span[1 : forest.n_leaves + 1] = 1
        for j in range(forest.n_leaves, forest.n_nodes):
            span[j + 1] = span[children[j].numpy()].sum()
        span = torch.from_numpy(span).to(x.dtype)
        errors = []

        def compose(c, _):
            a = torch.tanh(c @ self.W1 + self.b1)
            h = a / torch.linalg.norm(a, dim=1, keepdim=True)
            errors.append(((h @ self.W2 + self.b2 - c) ** 2).reshape(-1, 2, d).sum(dim=2))
            return h, None

        h = _up_binary_levels(forest, x.index_select(0, _index(word_index[: forest.n_leaves])), None, compose)
        if errors:
            under = span[children[forest.n_leaves :].reshape(-1)].reshape(-1, 2)
            omega = under / under.sum(dim=1, keepdim=True)
            self.reconstruction = 0.5 * (omega * torch.cat(errors)).sum()
        else:
            self.reconstruction = x.new_zeros(())
        return h


class DRNN(Cell):
    """Deep recursive network (drnn.py, D1-D2): the top layer's states."""

    def __init__(self, input_dim: int, hidden_dim: int, layers: int = 3, activation: str = "relu"):
        d = hidden_dim
        super().__init__(
            {
                "W": (layers, 2 * d, d),
                "W_leaf": (2 * input_dim, d),
                "V": (layers - 1, d, d),
                "V_leaf": (input_dim, d),
                "b": (layers, d),
            },
            d,
        )
        self.layers = layers
        self.f = {"relu": torch.relu, "tanh": torch.tanh}[activation]
        self.input_dim = input_dim

    def forward(self, forest, x, word_index):
        d, d_x, leaves = self.hidden_dim, self.input_dim, forest.n_leaves
        words = x.index_select(0, _index(word_index[:leaves]))
        # leaves: layer 1 is the word (in d_x), layers 2..L from the layer below alone
        leaf_states = [None, self.f(words @ self.V_leaf + self.b[1])]
        for k in range(2, self.layers):
            leaf_states.append(self.f(leaf_states[-1] @ self.V[k - 1] + self.b[k]))
        # layer 1's table: row 0 a missing child (0), leaves read through W_leaf
        zero = x.new_zeros((1, d))
        tables = [torch.cat([zero, x.new_zeros((leaves, d))])] + [
            torch.cat([zero, leaf_states[k]]) for k in range(1, self.layers)
        ]
        words_padded = torch.cat([x.new_zeros((1, d_x)), words, x.new_zeros((forest.n_nodes - leaves, d_x))])
        kids = _binary_children(forest)
        is_leaf = torch.from_numpy(
            np.concatenate([[False], np.ones(leaves, bool), np.zeros(forest.n_nodes - leaves, bool)])
        )
        for start, stop in _levels(forest):
            left, right = kids[start:stop, 0], kids[start:stop, 1]
            below = None
            for k in range(self.layers):
                h_l, h_r = tables[k].index_select(0, left), tables[k].index_select(0, right)
                z = torch.cat([h_l, h_r], dim=1) @ self.W[k] + self.b[k]
                if k == 0:
                    for slot, index in enumerate((left, right)):
                        word = words_padded.index_select(0, index)
                        leaf = is_leaf.index_select(0, index)[:, None].to(x.dtype)
                        z = z + leaf * (word @ self.W_leaf[slot * d_x : (slot + 1) * d_x])
                else:
                    z = z + below @ self.V[k - 1]
                below = self.f(z)
                tables[k] = torch.cat([tables[k], below])
        return tables[self.layers - 1][1:]


class DTRNN(Cell):
    """Dependency-tree RNN (dtrnn.py, DT1)."""

    def __init__(self, input_dim: int, hidden_dim: int, positions: int = 3, n_matrices: int | None = None):
        d = hidden_dim
        self.n_matrices = 2 * positions if n_matrices is None else n_matrices
        super().__init__({"W_v": (input_dim, d), "W": (self.n_matrices * d, d), "b": (d,)}, d)
        self.positions = positions

    def slots(self, forest, input_dim: int) -> np.ndarray:
        """Each child's matrix: its position, as npcomp's cell counts it."""
        from npcomp.cells.dtrnn import DTRNN as Fast

        return Fast(input_dim, self.hidden_dim, self.positions).child_slots(forest)

    def forward(self, forest, x, word_index):
        d, n = self.hidden_dim, forest.n_nodes
        slots = _index(self.slots(forest, x.shape[1]))
        word_nodes = forest.word_nodes()
        inputs = x.new_zeros((n, d)).index_copy(
            0, _index(word_nodes), (x @ self.W_v).index_select(0, _index(word_index))
        )
        reads = torch.from_numpy((forest.word >= 0).astype(np.float64)).to(x.dtype)
        blocks = self.W.reshape(self.n_matrices, d, d)
        h = x.new_zeros((0, d))
        span = x.new_zeros((0,))
        ptr = forest.level_ptr.tolist()
        for level in range(forest.n_levels):
            start, stop = ptr[level], ptr[level + 1]
            kids = forest.children[start:stop]
            parent_row, column = np.nonzero(kids >= 0)
            child = _index(kids[parent_row, column])
            l_child = span.index_select(0, child)
            l_node = reads[start:stop].index_add(0, _index(parent_row), l_child)
            terms = torch.bmm(
                (l_child[:, None] * h.index_select(0, child))[:, None, :],
                blocks.index_select(0, slots.index_select(0, child)),
            )[:, 0]
            total = inputs[start:stop].index_add(0, _index(parent_row), terms)
            h = torch.cat([h, torch.tanh(total / l_node[:, None] + self.b)])
            span = torch.cat([span, l_node])
        return h


class SDTRNN(DTRNN):
    """Semantic dependency-tree RNN (sdtrnn.py): a matrix per dependency relation."""

    def __init__(self, input_dim: int, hidden_dim: int):
        from npcomp.data.readers.dependency_relations import RELATIONS

        super().__init__(input_dim, hidden_dim, positions=1, n_matrices=len(RELATIONS))

    def slots(self, forest, input_dim: int) -> np.ndarray:
        """Each child's matrix: its relation's id (W_dep's where it has none)."""
        from npcomp.data.readers.dependency_relations import relation_id

        slots = np.full(forest.n_nodes, -1, dtype=np.int64)
        child = forest.parent >= 0
        relation = np.full(forest.n_nodes, -1) if forest.relation is None else forest.relation
        slots[child] = np.where(relation[child] >= 0, relation[child], relation_id("dep"))
        return slots


def chain_lstm(W, U, b, forest, inputs, word_index) -> torch.Tensor:
    """Tai eq. 1 over a forest of chains (npcomp/cells/lstm.py): h (n, d).

    ``inputs`` (U, 4d) is x W + b once per distinct word; ``word_index`` the
    row of each node (every node reads a word).  A node at level l has its
    only child at level l - 1, so each step reads the previous step's states
    alone: no table of all the states is grown level by level.
    """
    d = U.shape[0]
    ptr = forest.level_ptr.tolist()
    rows = _index(word_index)
    h, c = _childless_lstm(inputs.index_select(0, rows[: ptr[1]])[:, : 3 * d], d)  # h_0 = c_0 = 0
    states = [h]
    for level in range(1, forest.n_levels):
        start, stop = ptr[level], ptr[level + 1]
        previous = _index(forest.children[start:stop, 0] - ptr[level - 1])
        z = h.index_select(0, previous) @ U + inputs.index_select(0, rows[start:stop])
        i, o, u, f = _lstm_gates(z, d)
        c = i * u + f * c.index_select(0, previous)
        h = o * torch.tanh(c)
        states.append(h)
    return torch.cat(states)


class ChainLSTM(Cell):
    """Tai eq. 1 over chains (lstm.py): columns i|o|u|f."""

    def __init__(self, input_dim: int, hidden_dim: int):
        d = hidden_dim
        super().__init__({"W": (input_dim, 4 * d), "U": (d, 4 * d), "b": (4 * d,)}, d)

    def forward(self, forest, x, word_index):
        return chain_lstm(self.W, self.U, self.b, forest, x @ self.W + self.b, word_index)


class BiLSTM(Cell):
    """Bidirectional chain LSTM (bilstm.py); weights shared unless ``untied``."""

    def __init__(self, input_dim: int, hidden_dim: int, untied: bool = False):
        d = hidden_dim
        shapes = {"W": (input_dim, 4 * d), "U": (d, 4 * d), "b": (4 * d,)}
        if untied:
            shapes.update({name + "_backward": shape for name, shape in list(shapes.items())})
        super().__init__(shapes, d, 2 * d)
        self.untied = untied

    def forward(self, forest, x, word_index):
        from npcomp.forest import reverse_chains

        reversed_forest, order = reverse_chains(forest)
        # node order[r] shows h^B of reversed node r; a chain's root shows h^B
        # at its first word, the reversed root
        backward_row = np.empty_like(order)
        backward_row[order] = np.arange(order.shape[0])
        backward_row[forest.root] = reversed_forest.root
        inputs = x @ self.W + self.b
        h_forward = chain_lstm(self.W, self.U, self.b, forest, inputs, word_index)
        if self.untied:
            weights = (self.W_backward, self.U_backward, self.b_backward)
            inputs = x @ self.W_backward + self.b_backward
        else:
            weights = (self.W, self.U, self.b)
        h_backward = chain_lstm(*weights, reversed_forest, inputs, word_index[order])
        return torch.cat([h_forward, h_backward.index_select(0, _index(backward_row))], dim=1)


CELLS = {
    "treelstm-nary": NaryTreeLSTM,
    "treelstm-childsum": ChildSumTreeLSTM,
    "slstm": SLSTM,
    "lstm-rnn": LSTMRNN,
    "rntn": RNTN,
    "recnn": RecNN,
    "mvrnn": MVRNN,
    "rae": RAE,
    "drnn": DRNN,
    "dtrnn": DTRNN,
    "sdtrnn": SDTRNN,
    "lstm": ChainLSTM,
    "bilstm": BiLSTM,
}

# the options of npcomp's cells each counterpart follows: {option: value it needs}
# (an option missing here must keep npcomp's default)
FOLLOWED = {
    "lstm-rnn": ("activation",),
    "recnn": ("activation",),
    "rntn": ("leaf_activation",),
    "bilstm": ("untied",),
    "rae": ("reconstruction_weight",),
    "drnn": ("layers", "activation"),
    "dtrnn": ("positions",),
}
REQUIRED = {
    "lstm-rnn": {"untied": False},
    "recnn": {"untied": False},
    "treelstm-nary": {"arity": 2, "inner_inputs": False},
    "treelstm-childsum": {"output_gate": True},
    "lstm": {"output_gate": True},
    "bilstm": {"output_gate": True, "embedding_masks": "shared"},
}


def counterpart(npcomp_cell) -> Cell:
    """The PyTorch cell of an npcomp cell, with its options."""
    name = npcomp_cell.name
    if name not in CELLS:
        raise ValueError(f"no PyTorch counterpart of {name}; there are {sorted(CELLS)}")
    for option, value in REQUIRED.get(name, {}).items():
        have = getattr(npcomp_cell, option, value)
        if name == "bilstm" and option == "output_gate":
            have = npcomp_cell.direction.output_gate
        if have != value:
            raise ValueError(f"the PyTorch {name} needs {option}={value!r}, not {have!r}")
    options = {option: getattr(npcomp_cell, option) for option in FOLLOWED.get(name, ())}
    return CELLS[name](npcomp_cell.input_dim, npcomp_cell.hidden_dim, **options)


class TorchModel(torch.nn.Module):
    """Embedding table + cell + softmax classifier at the labelled nodes:
    npcomp's ``TreeModel`` with the softmax head."""

    def __init__(self, cell: Cell, vocab_size: int, input_dim: int, n_classes: int):
        super().__init__()
        self.cell = cell
        self.embedding = torch.nn.Embedding(vocab_size, input_dim, sparse=True)
        self.classifier = torch.nn.Linear(cell.output_dim, n_classes)

    @classmethod
    def of(cls, model) -> "TorchModel":
        """The counterpart of an npcomp ``TreeModel`` (softmax head)."""
        return cls(counterpart(model.cell), *softmax_model_sizes(model, "PyTorch"))

    def load_npcomp(self, params) -> None:
        """Copies npcomp's parameters (``npcomp.params.Parameters``), in this
        model's dtype."""
        with torch.no_grad():
            for name, parameter in self.cell.named_parameters():
                parameter.copy_(torch.from_numpy(np.ascontiguousarray(params["cell." + name])))
            self.embedding.weight.copy_(torch.from_numpy(np.ascontiguousarray(params["embedding"])))
            self.classifier.weight.copy_(torch.from_numpy(params["softmax.W"].T.copy()))
            self.classifier.bias.copy_(torch.from_numpy(params["softmax.b"].copy()))

    def npcomp_gradients(self) -> dict:
        """The gradients autograd left, under npcomp's names and layout."""
        out = {"cell." + name: parameter.grad.detach().numpy() for name, parameter in self.cell.named_parameters()}
        out["softmax.W"] = self.classifier.weight.grad.detach().numpy().T
        out["softmax.b"] = self.classifier.bias.grad.detach().numpy()
        embedding = self.embedding.weight.grad
        out["embedding"] = (embedding.to_dense() if embedding.is_sparse else embedding).numpy()
        return out

    def loss(self, forest, dropout: float = 0.0) -> torch.Tensor:
        """Summed negative log-likelihood of the labelled nodes over the number
        of trees (npcomp's ``average="sentences"``), dropout on the classifier
        input."""
        words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
        x = self.embedding(_index(words))
        h = self.cell(forest, x, word_index.astype(np.int64))
        labelled = np.flatnonzero(forest.label >= 0)
        inputs = h.index_select(0, _index(labelled))
        inputs = F.dropout(inputs, dropout, training=dropout > 0.0)
        labels = _index(forest.label[labelled])
        data = F.cross_entropy(self.classifier(inputs), labels, reduction="sum")
        alpha = getattr(self.cell, "reconstruction_weight", None)
        if alpha is not None:  # the RAE: alpha E_rec + (1 - alpha) E_cE
            data = alpha * self.cell.reconstruction + (1 - alpha) * data
        return data / forest.n_trees

    def optimizer(self, lr: float, embedding_lr: float, l2: float) -> torch.optim.Adagrad:
        """AdaGrad as npcomp's: lambda on every weight but the embedding table."""
        dense = [*self.cell.parameters(), *self.classifier.parameters()]
        return torch.optim.Adagrad(
            [
                {"params": dense, "lr": lr, "weight_decay": l2},
                {"params": [self.embedding.weight], "lr": embedding_lr, "weight_decay": 0.0},
            ],
            eps=1e-10,
        )

    def training_step(self, split, labels, lr: float, embedding_lr: float, l2: float, dropout: float):
        """step(indices): one training step on the forest of ``split``'s
        sentences ``indices`` labelled by ``labels``, as npcomp's (forest
        building, forward, autograd's backward, ``optimizer``'s update),
        dropout on the classifier input."""
        optimizer = self.optimizer(lr=lr, embedding_lr=embedding_lr, l2=l2)

        def step(indices):
            forest = split.forest(indices, labels)
            optimizer.zero_grad()
            self.loss(forest, dropout=dropout).backward()
            optimizer.step()

        return step


def check_against_npcomp(model, params, forest) -> dict:
    """npcomp's loss and gradients against the PyTorch counterpart's on one
    forest, both in float64 from the same weights (``params`` are cast).

    Returns {"loss_difference": |J - J_torch| / |J|, "gradient_difference":
    {name: max |g - g_torch| / max |g|}} (no dropout, no weight decay)."""
    params = params.astype(np.float64)
    grads = params.zeros_like()
    ours, _ = model.loss_and_gradient(params, forest, grads)
    baseline = TorchModel.of(model).to(torch.float64)
    baseline.load_npcomp(params)
    theirs = baseline.loss(forest)
    theirs.backward()
    return comparison(ours, float(theirs.detach()), baseline.npcomp_gradients(), grads)
