# %% [markdown]
# # The N-ary Tree-LSTM's backward at one node, by hand
#
# Tai, Socher & Manning 2015 print the forward of their N-ary Tree-LSTM
# (eqs. 9-14) and leave the backward to the reader. Here you derive it at
# one node of a real tree and check what you derive against the cell's own
# backward (the terms `npcomp explain` prints) and against finite
# differences of the loss. Then you look for bugs planted in the backward,
# first with the parameter check, then with the per-node check that says
# where a backward goes wrong.
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

from gradcheck.planted import BUGS, planted
from npcomp.cells import make_cell
from npcomp.data.readers import Vocabulary
from npcomp import explain
from npcomp.data.readers import parse_ptb
from npcomp.models import TreeModel

np.set_printoptions(precision=4, suppress=True)

# the README's tree: t = "not really" (node 2) is the root's first (left) child
tree = parse_ptb("(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))")
vocab = Vocabulary(tree.tokens)
d = 3
model = TreeModel(make_cell("treelstm-nary", d, d), n_classes=5, vocab_size=len(vocab),
                  embedding_dim=d)
params = model.new_parameters(np.random.default_rng(0),
                              np.random.default_rng(1).normal(size=(len(vocab), d)),
                              dtype=np.float64)
W = params.prefixed("cell")        # W (d_x, 3d): i|o|u; U (2d, 5d): i|o|u|f_1|f_2; b (4d,)
document = explain(model, params, [tree], vocab, check_states=True)
sentence = document["sentences"][0]
for node in sentence["nodes"]:
    print(node["id"], node["span"], "children", node["children"])


def quantity(symbol: str, node: int) -> np.ndarray:
    """A forward quantity or an error term at a node (tree numbering), looked
    up by its symbol, as `npcomp explain` shows it."""
    for term in sentence["forward"] + sentence["backward"]:
        if term["symbol"] == symbol:
            return np.array(term["values"][node], dtype=np.float64)
    raise KeyError(symbol)


t, p = 2, 6                        # "not really" and its parent, the root
left_leaf, right_leaf = 0, 1       # t's children, the leaves "not" and "really"
print("c_t", quantity("c", t), " o_t", quantity("o", t), " f_l of p", quantity("f_l", p))

# %% [markdown]
# ## 1. eps_c at t
#
# c_t reaches the loss two ways: through h_t = o_t tanh(c_t) (eq. 14) and
# through its parent's cell, c_p = i_p u_p + f_pl c_t + f_pr c_r (eq. 13),
# where t is the parent's child l = 1 (its left one).

# %%
# BLANK eps_c: eps_c_t, from eps_h_t and the parent's eps_c
raise NotImplementedError('blank eps_c: the comment above says what to write')

# %%
print("yours    ", eps_c)
print("explain's", quantity("eps_c", t))
assert np.allclose(eps_c, quantity("eps_c", t), rtol=1e-10, atol=1e-12)

# %% [markdown]
# ## 2. The deltas at t
#
# From eps_c_t, back through eq. 13 into i, u and the two forget gates, then
# through their non-linearities (eqs. 9, 12, 10); from eps_h_t, back through
# eq. 14 into o and eq. 11. Unlike the S-LSTM's, this cell's leaves have a
# memory cell (c = i u, erratum E2), so the forget gates' deltas are not 0.

# %%
# BLANK deltas: delta_o, delta_i, delta_u, delta_f_l, delta_f_r at t
raise NotImplementedError('blank deltas: the comment above says what to write')

# %%
for symbol, yours in (("delta_o", delta_o), ("delta_i", delta_i), ("delta_u", delta_u),
                      ("delta_f_l", delta_f_l), ("delta_f_r", delta_f_r)):
    print(f"{symbol:<10} yours {yours}  explain's {quantity(symbol, t)}")
    assert np.allclose(yours, quantity(symbol, t), rtol=1e-10, atol=1e-12), symbol

# %% [markdown]
# ## 3. What t sends its left child's h
#
# The left child's h enters all five of t's pre-activations (eqs. 9-12, the
# two forget gates with U_11^(f) and U_21^(f)) through the rows of `U` that
# read child slot 1 (rows 0:d; column blocks i | o | u | f_1 | f_2). Add that
# to the head's dJ/dh at the leaf "not" (its part of eps_h labelled "dJ/dh
# from the head": `npcomp explain --node 0 --parts` shows them all).

# %%
parts = {term["symbol"]: term for term in sentence["parts"]}


def part(symbol: str, label: str, node: int) -> np.ndarray:
    """One part of an error term at a node, by its label."""
    for entry in parts[symbol]["parts"]:
        if entry["label"] == label:
            return np.array(entry["values"][node], dtype=np.float64)
    raise KeyError(label)


head = part("eps_h", "dJ/dh from the head", left_leaf)

# %%
# BLANK eps_h: eps_h at "not": the head's, plus t's deltas through U's slot-1 rows
raise NotImplementedError('blank eps_h: the comment above says what to write')

# %%
print("yours    ", eps_h_leaf)
print("explain's", quantity("eps_h", left_leaf))
assert np.allclose(eps_h_leaf, quantity("eps_h", left_leaf), rtol=1e-10, atol=1e-12)

# %% [markdown]
# ## 4. Against finite differences
#
# `explain(..., check_states=True)` moved each node's c (and h) by +-1e-3
# and +-2e-3 where the forward computes it and took the loss's central
# differences (`npcomp/study/state_checks.py`). Find the record of node t and
# term eps_c in `document["state_checks"]` and compare its `numeric` values
# with your eps_c.

# %%
# BLANK differences: the state check of eps_c at t, and its numeric values
raise NotImplementedError('blank differences: the comment above says what to write')

# %%
print("finite differences", numeric, " relative error", record["error"])
assert np.allclose(numeric, eps_c, rtol=1e-6, atol=1e-9)

# %% [markdown]
# ## 5. Find the planted bugs
#
# Three backward passes below each carry one bug (`gradcheck/planted.py`
# describes them: do not read it yet). The forward is untouched, so the loss
# and its finite differences stay true. For each, the parameter check says
# whether the backward is wrong; the per-node check says where. Run the
# cell, then write down for each bug the node (its span) and the error term
# of the first disagreement, parents first, and the equation you think the
# bug misreads.

# %%
suspects = {"A": "treelstm-forget-path-dropped", "B": "treelstm-own-term-without-o",
            "C": "treelstm-u-derivative-as-sigmoid"}
found = {}
for letter, name in suspects.items():
    with planted(BUGS[name]):
        checked = explain(model, params, [tree], vocab, check_states=True)
    worst = max(check["finite_difference_error"] for check in checked["parameters"])
    first = next((check for check in checked["state_checks"] if check["error"] > 1e-6), None)
    spans = [node["span"] for node in checked["sentences"][0]["nodes"]]
    found[letter] = None if first is None else (spans[first["node"]], first["term"])
    print(f"bug {letter}: parameter check {'FAILS' if worst > 1e-6 else 'passes'} "
          f"({worst:.1e}); first disagreement {found[letter]}")

# %%
# BLANK answers: for each bug, (the node's span, the term)
raise NotImplementedError('blank answers: the comment above says what to write')

# %%
assert found == answers, found
print("all checks passed: now read gradcheck/planted.py and docs/EQUATIONS.md section 3")
