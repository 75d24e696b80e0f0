# %% [markdown]
# # The S-LSTM's backward at one node, by hand
#
# Zhu, Sobhani & Guo 2015 print the forward of their S-LSTM (eqs. 1-7) and
# its backward (eqs. 8-14), with three errata (Z1-Z3). Here you write the
# backward one node at a time, as functions of the node's inputs. Each
# function is graded on inputs the grader draws at random, part by part,
# against central differences of the node's own forward
# (`npcomp/study/grading.py`): the feedback names the first part that is
# wrong. Then you write a weight gradient, where no per-node check can see,
# and hunt bugs planted in the cell's backward, predicting where each is
# before you run the checks.
#
# Read first: the equations at the top of `npcomp/cells/slstm.py` (the code's
# row orientation: `h @ W` is the paper's W h) and the errata Z1-Z3 of
# `docs/cells/slstm.md`. The figure `docs/cells/slstm_gradient_paths.png`
# draws the paths you are about to compute.
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
from npcomp.study import SLSTM_NODE, SLSTM_ROUTE, SLSTM_WEIGHTS, grade

np.set_printoptions(precision=4, suppress=True)

# the README's tree: node 2 "not really" is the root's (node 6's) left child
tree = parse_ptb("(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))")
vocab = Vocabulary(tree.tokens)
d = 3
model = TreeModel(make_cell("slstm", d, d), n_classes=5, vocab_size=len(vocab), embedding_dim=d)
params = model.new_parameters(np.random.default_rng(0),
                              np.random.default_rng(1).normal(size=(len(vocab), d)),
                              dtype=np.float64)
W = params.prefixed("cell")        # W_h (2d, 5d), W_c (2d, 3d), W_co (d, d), b (5d,)
document = explain(model, params, [tree], vocab, check_states=True)
sentence = document["sentences"][0]
for node in sentence["nodes"]:
    print(node["id"], node["span"], "children", node["children"])

# %% [markdown]
# ## 1. The node's own terms
#
# At an inner node t with children L and R the backward starts from the
# error arriving from above: eps_h (eq. 8: the head's and the parent's
# share of dJ/dh_t) and `eps_c_above` (the parent's share of dJ/dc_t, its
# terms of eq. 13 or 14). Write delta_o (eq. 9), the error of o's
# pre-activation, and eps_c, all of dJ/dc_t: besides the parent's share, c_t
# reaches J through h_t = o_t tanh(c_t) (eq. 7; mind Z1 and Z3) and through
# its own output gate's peephole c_t W_co (eq. 6). The function receives
# the node's forward quantities by name (i, f_l, f_r, tanh_x, c, o, the
# children's c_l, c_r, and W_co) and the two errors; `**rest` takes the
# ones you do not need.

# %%
# BLANK own-terms: def own_terms(eps_h, eps_c_above, o, c, W_co, **rest) -> {"delta_o", "eps_c"}
raise NotImplementedError('blank own-terms: the comment above says what to write')


# %%
print(grade(own_terms, SLSTM_NODE, parts=("delta_o", "eps_c")))

# %% [markdown]
# ## 2. The gates' deltas
#
# From eps_c, back through eq. 5 into the two forget gates, the input gate
# and x_t, then through their non-linearities: delta_fl (10), delta_fr (11),
# delta_i (12) and delta_x, which Zhu do not print (Z2). `tanh_x` is
# tanh(x_t), the value eq. 5 reads.

# %%
# BLANK gate-deltas: def gate_deltas(eps_h, eps_c_above, i, f_l, f_r, tanh_x, c, o, c_l, c_r, W_co) -> {"delta_fl", "delta_fr", "delta_i", "delta_x"} (own_terms gives eps_c)
raise NotImplementedError('blank gate-deltas: the comment above says what to write')


# %%
print(grade(gate_deltas, SLSTM_NODE, parts=("delta_fl", "delta_fr", "delta_i", "delta_x")))

# %% [markdown]
# ## 3. What the node sends its children
#
# Each child's h enters all five pre-activations (1)-(4) and (6) through the
# rows of `W_h` of its side (0:d for L, d:2d for R; column blocks i | fl |
# fr | x | o): Zhu route nothing there (Z2). Each child's c enters eq. 5
# through its forget gate, and the pre-activations of i, f^L and f^R (1)-(3)
# through the rows of `W_c` of its side (column blocks i | fl | fr): these
# are the parent's terms of eqs. 13 (L) and 14 (R). `delta` is the node's
# five deltas side by side, i | fl | fr | x | o; `eps_c` the node's own.

# %%
# BLANK route: def route(delta, eps_c, f_l, f_r, W_h, W_c) -> {"eps_h_l", "eps_h_r", "eps_c_l", "eps_c_r"}: delta (5d,), W_h (2d, 5d), W_c (2d, 3d)
raise NotImplementedError('blank route: the comment above says what to write')


# %%
print(grade(route, SLSTM_ROUTE))

# %% [markdown]
# ## 4. A weight gradient: dW_c over the nodes
#
# The per-node checks (`npcomp explain --check-local`, `--check-states`)
# check error terms; a weight's gradient is summed over the nodes after
# them, and only the parameter check sees it. Given each inner node's
# children's states side by side (`hc`, one row per node, [h^L h^R c^L
# c^R]), its own memory cell (`c`: not every input is needed) and its five
# deltas (`deltas`, one row per node, i | fl | fr | x | o), write dW_c, the
# peepholes' gradient (rows c^L | c^R, columns i | fl | fr).

# %%
# BLANK weight-gradient: def weight_gradient(hc, c, deltas) -> {"dW_c"}: hc (nodes, 4d), c (nodes, d), deltas (nodes, 5d)
raise NotImplementedError('blank weight-gradient: the comment above says what to write')


# %%
print(grade(weight_gradient, SLSTM_WEIGHTS))

# %% [markdown]
# Your functions at a node of the tree: node 2 "not really", the root's
# left child. The root's backward as `npcomp explain` shows it gives, through
# your `route`, the share of eps_c it sends node 2; your `own_terms` adds
# node 2's own; the result against the finite differences of the loss in
# node 2's c that `check_states` took through the cell's own forward (this
# is no grade: the grader above drew its own inputs).

# %%
def quantity(symbol: str, node: int) -> np.ndarray:
    for term in sentence["forward"] + sentence["backward"]:
        if term["symbol"] == symbol:
            return np.array(term["values"][node], dtype=np.float64)
    raise KeyError(symbol)


t, p = 2, 6
deltas_p = np.concatenate([quantity(f"delta_{gate}", p) for gate in ("i", "fl", "fr", "x", "o")])
sent = route(deltas_p, quantity("eps_c", p), quantity("f^L", p), quantity("f^R", p),
             W["W_h"], W["W_c"])
yours = own_terms(quantity("eps_h", t), sent["eps_c_l"], quantity("o", t), quantity("c", t),
                  W["W_co"])
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
# * A: a left child's memory cell misses part of what its parent sends it;
# * B: the forget gates' deltas read the wrong memory cells;
# * C: one of the gates' deltas is never computed (it stays 0).
#
# Before running anything, predict for each where `npcomp explain
# --check-local` fails first: the node whose backward is wrong (as numbered
# above), the quantity it gets wrong (one of its deltas, `"delta_o"`,
# `"delta_fl"`, ..., or, for an error it routes to a child, the child's term
# it lands in, `"eps_h"` or `"eps_c"`) and the number of an equation the bug
# misreads: the forward equation (1-7) whose reversal is wrong, or Zhu's
# printed backward equation (8-14) where there is one. The local check takes
# a node's terms in the order its backward computes them: its deltas before
# what it sends its children, the left child before the right, eps_h before
# eps_c.

# %%
# BLANK predictions: {letter: (node, term, equation number)} for A, B and C
raise NotImplementedError('blank predictions: the comment above says what to write')

# %%
bugs = mysteries("slstm-left-peephole-dropped", "slstm-forget-deltas-other-child",
                 "slstm-x-delta-dropped")
for letter, bug in bugs.items():
    print(bug.check(predictions[letter], model, params, [tree], vocab))
print("all checks passed: now read gradcheck/planted.py and docs/cells/slstm.md's errata")
