# %% [markdown]
# # The LSTM-RNN's backward at one node, by hand
#
# Le & Zuidema 2015 compose a parent p from its left child x and right
# child y with an LSTM whose gates peek at the children's memory cells and
# whose second input and forget gates read the children swapped. They print
# the forward (numbered (L1)-(L7) here, in print order) and leave the
# backward to the reader. Here you write it, one node at a time, as
# functions of the node's inputs. Each function is graded on inputs the
# grader draws at random, part by part, against central differences of the
# node's own forward (`npcomp/study/peephole_nodes.py`): the feedback names
# the first part that is wrong. Then you write a weight gradient, where no
# per-node check can see, and hunt bugs planted in the cell's backward,
# predicting where each is before you run the checks.
#
# Read first: the equations at the top of `npcomp/cells/lstm_rnn.py` (the
# code's row orientation: `x @ W_i1` is the paper's W_i1 x; g = tanh here)
# and `docs/cells/lstm_rnn.md`.
#
# Each blank stops the notebook with `NotImplementedError` until you fill
# it in: delete the `raise` line and write the code the comment asks for.

# %%
import numpy as np

from gradcheck.planted import mysteries
from npcomp import explain
from npcomp.cells import make_cell
from npcomp.data.readers import Vocabulary, parse_ptb
from npcomp.models import TreeModel
from npcomp.study import LSTM_RNN_NODE, LSTM_RNN_ROUTE, LSTM_RNN_WEIGHTS, grade

np.set_printoptions(precision=4, suppress=True)

# the README's tree: node 2 "not really" is the root's (node 6's) left child x
tree = parse_ptb("(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))")
vocab = Vocabulary(tree.tokens)
d = 3
model = TreeModel(make_cell("lstm-rnn", d, d), n_classes=5, vocab_size=len(vocab),
                  embedding_dim=d)
params = model.new_parameters(np.random.default_rng(0),
                              np.random.default_rng(1).normal(size=(len(vocab), d)),
                              dtype=np.float64)
W = params.prefixed("cell")   # W (d, 8d), W_peephole (d, 4d), W_co (d, d), b (4d,)
document = explain(model, params, [tree], vocab, check_states=True)
sentence = document["sentences"][0]
for node in sentence["nodes"]:
    print(node["id"], node["span"], "children", node["children"])

# %% [markdown]
# ## 1. The node's own terms
#
# At an inner node p the backward starts from the error arriving from
# above: eps_h (the head's and the parent's share of dJ/dp) and
# `eps_c_above` (the parent's share of dJ/dc_p). Write delta_o, the error of
# o's pre-activation, and eps_c, all of dJ/dc_p: besides the parent's share,
# c_p reaches J through p = o g(c_p) (L7) and through the output gate's
# peephole c_p W_co (L6). The function receives the node's forward
# quantities by name (i_1, i_2, f_1, f_2, u, c, o, the children's terms a_1,
# a_2 and cells c_x, c_y, and W_co) and the two errors; `**rest` takes the
# ones you do not need.

# %%
# BLANK own-terms: def own_terms(eps_h, eps_c_above, o, c, W_co, **rest) -> {"delta_o", "eps_c"}
def own_terms(eps_h, eps_c_above, o, c, W_co, **rest):
    delta_o = eps_h * np.tanh(c) * o * (1 - o)
    eps_c = eps_c_above + eps_h * o * (1 - np.tanh(c) ** 2) + delta_o @ W_co.T
    return {"delta_o": delta_o, "eps_c": eps_c}
# END BLANK


# %%
print(grade(own_terms, LSTM_RNN_NODE, parts=("delta_o", "eps_c")))

# %% [markdown]
# ## 2. The candidate's and the gates' deltas
#
# From eps_c back through (L5): into u = g(i_1 a_1 + i_2 a_2 + b_c)
# (delta_u, the error of u's pre-activation), from there into each input
# gate's pre-activation (L1, L2) and each child's term a_1 = x W_c1, a_2 = y
# W_c2, and into the two forget gates (L3, L4).

# %%
# BLANK gate-deltas: def gate_deltas(eps_h, eps_c_above, i_1, i_2, f_1, f_2, u, c, o, a_1, a_2, c_x, c_y, W_co) -> {"delta_u", "delta_i1", "delta_i2", "delta_a1", "delta_a2", "delta_f1", "delta_f2"} (own_terms gives eps_c)
def gate_deltas(eps_h, eps_c_above, i_1, i_2, f_1, f_2, u, c, o, a_1, a_2, c_x, c_y, W_co):
    eps_c = own_terms(eps_h, eps_c_above, o, c, W_co)["eps_c"]
    delta_u = eps_c * (1 - u ** 2)
    return {"delta_u": delta_u, "delta_i1": delta_u * a_1 * i_1 * (1 - i_1),
            "delta_i2": delta_u * a_2 * i_2 * (1 - i_2), "delta_a1": delta_u * i_1,
            "delta_a2": delta_u * i_2, "delta_f1": eps_c * c_x * f_1 * (1 - f_1),
            "delta_f2": eps_c * c_y * f_2 * (1 - f_2)}
# END BLANK


# %%
print(grade(gate_deltas, LSTM_RNN_NODE, parts=("delta_u", "delta_i1", "delta_i2", "delta_a1",
                                               "delta_a2", "delta_f1", "delta_f2")))

# %% [markdown]
# ## 3. What the node sends its children
#
# `delta` is the node's seven deltas side by side, i_1 | i_2 | f_1 | f_2 |
# a_1 | a_2 | o; `W`'s column blocks are W_i1 | W_i2 | W_f1 | W_f2 | W_c1 |
# W_c2 | W_o1 | W_o2, `W_peephole`'s W_ci1 | W_ci2 | W_cf1 | W_cf2. Mind the
# swap: i_1 reads x through W_i1 and y through W_i2, i_2 reads y through
# W_i1 and x through W_i2 (the forget gates likewise). Each child's c enters
# (L5) through its forget gate and the four gates through the peepholes.

# %%
# BLANK route: def route(delta, eps_c, f_1, f_2, W, W_peephole) -> {"eps_h_x", "eps_h_y", "eps_c_x", "eps_c_y"}: delta (7d,)
def route(delta, eps_c, f_1, f_2, W, W_peephole):
    d = eps_c.size
    i1, i2, fl1, fl2, a1, a2, o = (delta[k * d:(k + 1) * d] for k in range(7))

    def back(matrix, k):     # the transpose of column block k: reverses a product by it
        return matrix[:, k * d:(k + 1) * d].T
    peep = W_peephole
    return {"eps_h_x": i1 @ back(W, 0) + i2 @ back(W, 1) + fl1 @ back(W, 2) + fl2 @ back(W, 3)
            + a1 @ back(W, 4) + o @ back(W, 6),
            "eps_h_y": i1 @ back(W, 1) + i2 @ back(W, 0) + fl1 @ back(W, 3) + fl2 @ back(W, 2)
            + a2 @ back(W, 5) + o @ back(W, 7),
            "eps_c_x": eps_c * f_1 + i1 @ back(peep, 0) + i2 @ back(peep, 1)
            + fl1 @ back(peep, 2) + fl2 @ back(peep, 3),
            "eps_c_y": eps_c * f_2 + i1 @ back(peep, 1) + i2 @ back(peep, 0)
            + fl1 @ back(peep, 3) + fl2 @ back(peep, 2)}
# END BLANK


# %%
print(grade(route, LSTM_RNN_ROUTE))

# %% [markdown]
# ## 4. A weight gradient: dW_i1 over the nodes
#
# The per-node checks (`npcomp explain --check-local`, `--check-states`)
# check error terms; a weight's gradient is summed over the nodes after
# them, and only the parameter check sees it. W_i1 is used twice at every
# node (the swap). Given each inner node's children (`xs`, `ys`, one row per
# node) and its seven deltas (`deltas`, one row per node, blocks as in
# section 3), write dW_i1.

# %%
# BLANK weight-gradient: def weight_gradient(xs, ys, deltas) -> {"dW_i1"}: xs, ys (nodes, d), deltas (nodes, 7d)
def weight_gradient(xs, ys, deltas):
    d = xs.shape[1]
    return {"dW_i1": xs.T @ deltas[:, :d] + ys.T @ deltas[:, d:2 * d]}
# END BLANK


# %%
print(grade(weight_gradient, LSTM_RNN_WEIGHTS))

# %% [markdown]
# Your functions at a node of the tree: node 2 "not really", the root's x.
# The root's backward as `npcomp explain` shows it gives, through your
# `route`, the share of eps_c it sends node 2; your `own_terms` adds node
# 2's own; the result against the finite differences of the loss in node
# 2's c that `check_states` took through the cell's own forward (this is no
# grade: the grader above drew its own inputs).

# %%
def quantity(symbol: str, node: int) -> np.ndarray:
    for term in sentence["forward"] + sentence["backward"]:
        if term["symbol"] == symbol:
            return np.array(term["values"][node], dtype=np.float64)
    raise KeyError(symbol)


t, p = 2, 6
blocks = ("i1", "i2", "f1", "f2", "a1", "a2", "o")
deltas_p = np.concatenate([quantity(f"delta_{block}", p) for block in blocks])
sent = route(deltas_p, quantity("eps_c", p), quantity("f_1", p), quantity("f_2", p), W["W"],
             W["W_peephole"])
yours = own_terms(quantity("eps_h", t), sent["eps_c_x"], quantity("o", t), quantity("c", t),
                  W["W_co"])
record = next(check for check in document["state_checks"]
              if check["node"] == t and check["term"] == "eps_c")
print("your eps_c at node 2 ", yours["eps_c"])
print("finite differences   ", np.array(record["numeric"]))
assert np.allclose(yours["eps_c"], record["numeric"], rtol=1e-6, atol=1e-9)

# %% [markdown]
# ## 5. Find the planted bugs
#
# Two backward passes carry one bug each, A and B, their names hidden. The
# forward is untouched, so the loss and its finite differences stay true:
#
# * A: the two children's terms of the candidate get each other's error;
# * B: the right child is sent its share as though it were the left one.
#
# Before running anything, predict for each where `npcomp explain
# --check-local` fails first: the node whose backward is wrong (as numbered
# above), the quantity it gets wrong (one of its deltas, `"delta_u"`,
# `"delta_a1"`, ..., or, for an error it routes to a child, the child's term
# it lands in, `"eps_h"` or `"eps_c"`) and an equation the bug misreads
# (`"L1"` to `"L7"`). The local check takes a node's terms in the order its
# backward computes them: its deltas before what it sends its children, x
# before y, eps_h before eps_c.

# %%
# BLANK predictions: {letter: (node, term, equation)} for A and B
predictions = {"A": (6, "delta_a1", "L5"), "B": (6, "eps_h", "L2")}
# END BLANK

# %%
bugs = mysteries("lstm-rnn-candidate-errors-swapped", "lstm-rnn-right-child-unswapped")
for letter, bug in bugs.items():
    print(bug.check(predictions[letter], model, params, [tree], vocab))
print("all checks passed: now read gradcheck/planted.py and docs/cells/lstm_rnn.md")
