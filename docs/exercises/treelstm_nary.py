# %% [markdown]
# # The N-ary Tree-LSTM's backward at one node, by hand
#
# Tai, Socher & Manning 2015 print the forward of their N-ary Tree-LSTM
# (eqs. 9-14) and leave the backward to the reader. Here you write it, one
# node at a time, as functions of the node's inputs. Each function is
# graded on inputs the grader draws at random, part by part, against
# central differences of the node's own forward (`npcomp/study/grading.py`):
# the feedback names the first part that is wrong. Then you write a weight
# gradient, where no per-node check can see, and hunt bugs planted in the
# cell's backward, predicting where each is before you run the checks.
#
# Read first: the equations at the top of `npcomp/cells/treelstm_nary.py`
# (the code's row orientation: `x @ W` is the paper's W x), section 3 of
# `docs/EQUATIONS.md` and its errata E1-E3. The figure
# `docs/cells/treelstm_nary_gradient_paths.png` draws the paths you are
# about to compute.
#
# Each blank stops the notebook with `NotImplementedError` until you fill
# it in: delete the `raise` line and write the code the comment asks for.

# %%
import numpy as np

from gradcheck.planted import mysteries
from npcomp.cells import make_cell
from npcomp.data.readers import Vocabulary
from npcomp.data.readers import parse_ptb
from npcomp.models import TreeModel
from npcomp import explain
from npcomp.study import NARY_NODE, NARY_ROUTE, NARY_WEIGHTS, grade

np.set_printoptions(precision=4, suppress=True)

# the README's tree: node 2 "not really" is the root's (node 6's) left child
tree = parse_ptb("(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))")
vocab = Vocabulary(tree.tokens)
d = 3
model = TreeModel(make_cell("treelstm-nary", d, d), n_classes=5, vocab_size=len(vocab),
                  embedding_dim=d)
params = model.new_parameters(np.random.default_rng(0),
                              np.random.default_rng(1).normal(size=(len(vocab), d)),
                              dtype=np.float64)
document = explain(model, params, [tree], vocab, check_states=True)
sentence = document["sentences"][0]
for node in sentence["nodes"]:
    print(node["id"], node["span"], "children", node["children"])

# %% [markdown]
# ## 1. The node's own terms
#
# At an inner node j with children l and r the backward starts from the
# error arriving from above: eps_h (the head's and the parent's share of
# dJ/dh_j) and `eps_c_above` (the parent's share of dJ/dc_j, through its
# eq. 13). Write eps_c, all of dJ/dc_j (eq. 14 reads c_j too), and delta_o,
# the error of o's pre-activation. The function receives the node's forward
# quantities by name (i, o, u, f_l, f_r, c, c_l, c_r) and the two errors;
# `**rest` takes the ones you do not need.

# %%
# BLANK own-terms: def own_terms(eps_h, eps_c_above, o, c, **rest) -> {"eps_c", "delta_o"}
raise NotImplementedError('blank own-terms: the comment above says what to write')


# %%
print(grade(own_terms, NARY_NODE, parts=("eps_c", "delta_o")))

# %% [markdown]
# ## 2. The gates' deltas and the children's eps_c
#
# From eps_c, back through eq. 13 into i, u and the two forget gates, then
# through their non-linearities (eqs. 9, 12, 10), and into each child's c.

# %%
# BLANK gate-deltas: def gate_deltas(eps_h, eps_c_above, i, o, u, f_l, f_r, c, c_l, c_r) -> {"delta_i", "delta_u", "delta_f_l", "delta_f_r", "eps_c_l", "eps_c_r"} (own_terms gives eps_c)
raise NotImplementedError('blank gate-deltas: the comment above says what to write')


# %%
print(grade(gate_deltas, NARY_NODE,
            parts=("delta_i", "delta_u", "delta_f_l", "delta_f_r", "eps_c_l", "eps_c_r")))

# %% [markdown]
# ## 3. What the node sends its children's h
#
# Each child's h enters all five pre-activations (eqs. 9-12, the two forget
# gates with U_1l^(f) and U_2l^(f)) through the rows of `U` that read its
# child slot (rows 0:d for l, d:2d for r; column blocks i | o | u | f_1 |
# f_2). `delta` is the node's five deltas side by side, in that order.

# %%
# BLANK route: def route(delta, U) -> {"eps_h_l", "eps_h_r"}: delta (5d,), U (2d, 5d)
raise NotImplementedError('blank route: the comment above says what to write')


# %%
print(grade(route, NARY_ROUTE))

# %% [markdown]
# ## 4. A weight gradient: dU over the nodes
#
# The per-node checks (`npcomp explain --check-local`, `--check-states`)
# check error terms; a weight's gradient is summed over the nodes after
# them, and only the parameter check sees it. Given each inner node's
# children's h side by side (`hc`, one row per node, [h_l h_r]) and its five
# deltas (`deltas`, one row per node), write dU.

# %%
# BLANK weight-gradient: def weight_gradient(hc, deltas) -> {"dU"}: hc (nodes, 2d), deltas (nodes, 5d)
raise NotImplementedError('blank weight-gradient: the comment above says what to write')


# %%
print(grade(weight_gradient, NARY_WEIGHTS))

# %% [markdown]
# Your functions at a node of the tree: node 2 "not really", with the
# quantities `npcomp explain` shows, against the finite differences of the
# loss in node 2's c that `check_states` took through the cell's own
# forward (this is no grade: the grader above drew its own inputs).

# %%
def quantity(symbol: str, node: int) -> np.ndarray:
    for term in sentence["forward"] + sentence["backward"]:
        if term["symbol"] == symbol:
            return np.array(term["values"][node], dtype=np.float64)
    raise KeyError(symbol)


t, p = 2, 6
eps_c_above = quantity("eps_c", p) * quantity("f_l", p)
yours = own_terms(quantity("eps_h", t), eps_c_above, quantity("o", t), quantity("c", t))
record = next(check for check in document["state_checks"]
              if check["node"] == t and check["term"] == "eps_c")
print("your eps_c at node 2 ", yours["eps_c"])
print("finite differences   ", np.array(record["numeric"]))
assert np.allclose(yours["eps_c"], record["numeric"], rtol=1e-6, atol=1e-9)

# %% [markdown]
# ## 5. Find the planted bugs
#
# Three backward passes carry one bug each, lettered A, B and C (their
# names stay hidden until you have found them). The forward is untouched,
# so the loss and its finite differences stay true. Each bug is described
# here only by what it does:
#
# * A: a child's memory cell gets the wrong share of its parent's eps_c;
# * B: every node's eps_c gets its own term (through h = o tanh(c)) wrong;
# * C: a forget gate's delta reads the wrong memory cell.
#
# Before running anything, predict for each where `npcomp explain
# --check-local` fails first: the node whose backward is wrong (as numbered
# above), the quantity it gets wrong (one of its deltas, `"delta_i"`,
# `"delta_f_l"`, ..., or, for an error it routes to a child, the child's
# term it lands in, `"eps_h"` or `"eps_c"`; a root's own eps_c is
# `"eps_c"`) and the number of the equation the bug misreads. The local
# check takes a node's terms in the order its backward computes them: its
# deltas before what it sends its children.

# %%
# BLANK predictions: {letter: (node, term, equation number)} for A, B and C
raise NotImplementedError('blank predictions: the comment above says what to write')

# %%
bugs = mysteries("treelstm-forget-path-dropped", "treelstm-own-term-without-o",
                 "treelstm-forget-delta-other-child")
for letter, bug in bugs.items():
    print(bug.check(predictions[letter], model, params, [tree], vocab))
print("all checks passed: now read gradcheck/planted.py and docs/EQUATIONS.md section 3")
