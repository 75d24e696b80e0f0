# %% [markdown]
# # The Child-Sum Tree-LSTM's backward at one node, by hand
#
# Tai, Socher & Manning 2015's Child-Sum Tree-LSTM (eqs. 2-8) reads a node's
# children through their sum h~ (eq. 2) in the gates i, o, u, and through a
# forget gate of each child's own (eq. 4). Here you write its backward, one
# node at a time, as functions of the node's inputs, each graded on inputs
# the grader draws at random, part by part, against central differences of
# the node's own forward (`npcomp/study/grading.py`); then dU_f, a weight
# gradient no per-node check can see; then you hunt two bugs planted in the
# cell's backward, predicting where each is before you run the checks.
#
# Read first: the equations at the top of `npcomp/cells/treelstm_childsum.py`
# (row orientation: `h @ U` is the paper's U h) and docs/cells/treelstm_childsum.md.
#
# Each blank stops the notebook with `NotImplementedError` until you fill
# it in: delete the `raise` line and write the code the comment asks for.

# %%
import numpy as np

from gradcheck.planted import mysteries
from npcomp.cells import make_cell
from npcomp.data.readers import Vocabulary
from npcomp.data.readers import parents_to_tree
from npcomp.models import TreeModel
from npcomp import explain
from npcomp.study import CHILDSUM_NODE, CHILDSUM_ROUTE, CHILDSUM_WEIGHTS, grade

np.set_printoptions(precision=4, suppress=True)

# a dependency tree: "good" heads "film", "is" and "very"; "film" heads "the"
tree = parents_to_tree([2, 5, 5, 5, 0], ["the", "film", "is", "very", "good"])
vocab = Vocabulary(tree.tokens)
d = 3
model = TreeModel(make_cell("treelstm-childsum", d, d), n_classes=5, vocab_size=len(vocab),
                  embedding_dim=d)
params = model.new_parameters(np.random.default_rng(0),
                              np.random.default_rng(1).normal(size=(len(vocab), d)),
                              dtype=np.float64)
document = explain(model, params, [tree], vocab)
for node in document["sentences"][0]["nodes"]:
    print(node["id"], repr(node["word"]), "children", node["children"])

# %% [markdown]
# ## 1. The node's own terms and the gates' deltas
#
# The backward at node j starts from the error arriving from above: eps_h
# (the head's and the parent's share of dJ/dh_j) and `eps_c_above` (the
# parent's share of dJ/dc_j). The function receives the node's forward
# quantities by name: i, o, u (d,), f (one row a child: f_jk), c, and the
# children's memory cells `c_children` (one row a child). Write eps_c (all
# of dJ/dc_j), the deltas (delta_f one row a child) and each child's eps_c.

# %%
# BLANK node-backward: def node_backward(eps_h, eps_c_above, i, o, u, f, c, c_children) -> {"eps_c", "delta_o", "delta_i", "delta_u", "delta_f", "eps_c_children"}
raise NotImplementedError('blank node-backward: the comment above says what to write')


# %%
print(grade(node_backward, CHILDSUM_NODE))

# %% [markdown]
# ## 2. What the node sends its children's h
#
# Every child's h enters i, o and u through h~ (eqs. 2, 3, 5, 6: `U`, (d,
# 3d), columns i | o | u, `delta` the three deltas side by side) and its own
# forget gate through `U_f` (eq. 4, `delta_f` one row a child).

# %%
# BLANK route: def route(delta, delta_f, U, U_f) -> {"eps_h_children"}: one row a child
raise NotImplementedError('blank route: the comment above says what to write')


# %%
print(grade(route, CHILDSUM_ROUTE))

# %% [markdown]
# ## 3. A weight gradient: dU_f over the edges
#
# The per-node checks check error terms; dU_f is summed over the (parent,
# child) edges after them, and only the parameter check sees it. Given each
# edge's child h (`h_edges`), its parent's h~ (`h_tildes`: not every input
# is needed) and its delta_f (`delta_f`), one row an edge, write dU_f.

# %%
# BLANK weight-gradient: def weight_gradient(h_edges, h_tildes, delta_f) -> {"dU_f"}
raise NotImplementedError('blank weight-gradient: the comment above says what to write')


# %%
print(grade(weight_gradient, CHILDSUM_WEIGHTS))

# %% [markdown]
# ## 4. Find the planted bugs
#
# Two backward passes carry one bug each, A and B, their names hidden:
#
# * A: one of the two ways a child's h reaches its parent is not reversed;
# * B: a forget gate's delta reads the wrong memory cell.
#
# Before running anything, predict for each where `npcomp explain
# --check-local` fails first: the node whose backward is wrong (as numbered
# above), the quantity it gets wrong (one of its deltas, `"delta_i"`, ...,
# `"delta_f"`, or, for an error it routes to a child, the child's term it
# lands in, `"eps_h"` or `"eps_c"`) and the number of the equation the bug
# misreads. The local check takes a node's deltas before what it sends its
# children.

# %%
# BLANK predictions: {letter: (node, term, equation number)} for A and B
raise NotImplementedError('blank predictions: the comment above says what to write')

# %%
bugs = mysteries("childsum-forget-error-dropped", "childsum-forget-delta-parents-c")
for letter, bug in bugs.items():
    print(bug.check(predictions[letter], model, params, [tree], vocab))
print("all checks passed: now read gradcheck/planted.py and docs/cells/treelstm_childsum.md")
