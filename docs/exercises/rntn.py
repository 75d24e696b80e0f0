# %% [markdown]
# # The RNTN's backward at one node, by hand
#
# Socher et al. 2013 compose a parent p from its children's vectors c = [c_1
# c_2] by a tensor: p_k = tanh(c V^[k] c^T + (c W)_k + b_k) (eq. 3). Here you
# write its backward at one node as functions of the node's inputs, each
# graded on inputs the grader draws at random, part by part, against
# central differences of the node's own forward (`npcomp/study/grading.py`),
# then the tensor's gradient over the nodes, then hunt two bugs planted in
# the cell's backward, predicting where each is first.
#
# Read first: the equations at the top of `npcomp/cells/rntn.py` (row
# orientation: `c @ W` is the paper's W c) and docs/cells/rntn.md.
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
from npcomp.study import RNTN_NODE, RNTN_WEIGHTS, grade

np.set_printoptions(precision=4, suppress=True)

tree = parse_ptb("(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))")
vocab = Vocabulary(tree.tokens)
d = 3
model = TreeModel(make_cell("rntn", d, d), n_classes=5, vocab_size=len(vocab), embedding_dim=d)
params = model.new_parameters(np.random.default_rng(0),
                              np.random.default_rng(1).normal(size=(len(vocab), d)),
                              dtype=np.float64)
document = explain(model, params, [tree], vocab, check_states=True)
for node in document["sentences"][0]["nodes"]:
    print(node["id"], node["span"], "children", node["children"])

# %% [markdown]
# ## 1. delta: the error of the pre-activation
#
# eps_h is the error arriving at p from above (the head's and the parent's
# share of dJ/dp). Back through tanh: the function receives p itself.

# %%
# BLANK delta: def node_delta(eps_h, p, **rest) -> {"delta"}
raise NotImplementedError('blank delta: the comment above says what to write')


# %%
print(grade(node_delta, RNTN_NODE, parts=("delta",)))

# %% [markdown]
# ## 2. The error to the children
#
# c reaches p_k through c V^[k] c^T and (c W)_k. The derivative of a
# quadratic form c V c^T in c is c (V + V^T): both halves. `V` has shape
# (2d, 2d, d) (V[:, :, k] is V^[k]), `W` (2d, d); split the 2d-vector you
# get into the left child's first d entries and the right child's last d.

# %%
# BLANK children: def children_errors(eps_h, p, c_1, c_2, V, W) -> {"eps_1", "eps_2"} (node_delta gives delta)
raise NotImplementedError('blank children: the comment above says what to write')


# %%
print(grade(children_errors, RNTN_NODE, parts=("eps_1", "eps_2")))

# %% [markdown]
# ## 3. A weight gradient: dV over the nodes
#
# The per-node checks check error terms; the tensor's gradient is summed
# over the nodes after them, and only the parameter check sees it. Given
# each inner node's children side by side (`cs`, one row [c_1 c_2] per node)
# and its delta (`deltas`, one row per node), write dV, shaped as V.

# %%
# BLANK weight-gradient: def weight_gradient(cs, deltas) -> {"dV"}: cs (nodes, 2d), deltas (nodes, d)
raise NotImplementedError('blank weight-gradient: the comment above says what to write')


# %%
print(grade(weight_gradient, RNTN_WEIGHTS))

# %% [markdown]
# ## 4. Find the planted bugs
#
# Two backward passes carry one bug each, A and B, their names hidden:
#
# * A: the error to the children forgets that a quadratic form has two halves;
# * B: the derivative of the non-linearity is another function's.
#
# Before running anything, predict for each where `npcomp explain
# --check-local` fails first: the node whose backward is wrong (as numbered
# above), the quantity it gets wrong (its `"delta"`, or the child's term an
# error it routes lands in: here `"eps_h"`) and the number of the equation
# the bug misreads. The local check takes a node's delta before what it
# sends its children.

# %%
# BLANK predictions: {letter: (node, term, equation number)} for A and B
raise NotImplementedError('blank predictions: the comment above says what to write')

# %%
bugs = mysteries("rntn-transpose-half-dropped", "rntn-derivative-as-sigmoid")
for letter, bug in bugs.items():
    print(bug.check(predictions[letter], model, params, [tree], vocab))
print("all checks passed: now read gradcheck/planted.py and docs/cells/rntn.md")
