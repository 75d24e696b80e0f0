# %% [markdown]
# # The S-LSTM's backward at one node, by hand
#
# Zhu, Sobhani & Guo 2015 print the backward pass of their S-LSTM as eqs.
# (8)-(14). Here you derive it at one node of a real tree and check what you
# derive against the cell's own backward (the terms `npcomp explain` prints)
# and against finite differences of the loss. Then you look for bugs planted
# in the backward, first with the parameter check, then with the per-node
# check that says where a backward goes wrong.
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

from gradcheck.planted import BUGS, planted
from npcomp.cells import make_cell
from npcomp.data.readers import Vocabulary
from npcomp import explain
from npcomp.data.readers import parse_ptb
from npcomp.models import TreeModel

np.set_printoptions(precision=4, suppress=True)

# the README's tree: t = "not really" (node 2) is an inner left child of the root
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


def quantity(symbol: str, node: int) -> np.ndarray:
    """A forward quantity or an error term at a node (tree numbering), looked
    up by its symbol, as `npcomp explain` shows it."""
    for term in sentence["forward"] + sentence["backward"]:
        if term["symbol"] == symbol:
            return np.array(term["values"][node], dtype=np.float64)
    raise KeyError(symbol)


t, p = 2, 6                        # "not really" and its parent, the root
left_leaf = 0                      # t's left child, the leaf "not": its c is 0
print("c_t", quantity("c", t), " o_t", quantity("o", t), " c of 'not'", quantity("c", 0))

# %% [markdown]
# ## 1. eps_c at t
#
# t is its parent's *left* child, so eq. (13) gives the parent's part of
# eps_c_t: the forget term eps_c,p * f^L_p and the three peepholes of the
# parent's gates i, f^L, f^R through the L matrices (in the code, the rows
# 0:d of `W_c`, column blocks i | fl | fr; row form: `delta @ block.T`).
# t's own part: the error through h_t = o_t tanh(c_t) (mind Z1: it is
# eps_t^h, and Z3: g' is tanh') and through its own output gate's peephole
# o_t = sigma(... + c_t W_co) of (6).

# %%
# BLANK eps_c: eps_c_t, the sum of its own two terms and its parent's four
raise NotImplementedError('blank eps_c: the comment above says what to write')

# %%
print("yours    ", eps_c)
print("explain's", quantity("eps_c", t))
assert np.allclose(eps_c, quantity("eps_c", t), rtol=1e-10, atol=1e-12)

# %% [markdown]
# ## 2. The deltas at t
#
# From eps_c_t: delta_fl (10), delta_fr (11), delta_i (12) and delta_x, the
# error of x_t through the tanh of (5), which Zhu do not print (Z2); from
# eps_h_t: delta_o (9). c^L and c^R are t's children's cells: both leaves
# here. Which of your deltas must then be exactly 0?

# %%
# BLANK deltas: delta_o, delta_fl, delta_fr, delta_i, delta_x at t
raise NotImplementedError('blank deltas: the comment above says what to write')

# %%
for symbol, yours in (("delta_o", delta_o), ("delta_fl", delta_fl), ("delta_fr", delta_fr),
                      ("delta_i", delta_i), ("delta_x", delta_x)):
    print(f"{symbol:<9} yours {yours}  explain's {quantity(symbol, t)}")
    assert np.allclose(yours, quantity(symbol, t), rtol=1e-10, atol=1e-12), symbol
assert not delta_fl.any() and not delta_fr.any()     # c^L = c^R = 0: both children leaves

# %% [markdown]
# ## 3. What t sends its left child's h
#
# Zhu's equations route only eps_c to the children (Z2). The left child's h
# enters all five of t's pre-activations (1)-(4) and (6) through the L rows
# of `W_h` (0:d; column blocks i | fl | fr | x | o). Add that to the head's
# dJ/dh at the leaf "not" (its part of eps_h labelled "dJ/dh_t from the
# head": `npcomp explain --node 0 --parts` shows them all).

# %%
parts = {term["symbol"]: term for term in sentence["parts"]}


def part(symbol: str, label: str, node: int) -> np.ndarray:
    """One part of an error term at a node, by its label."""
    for entry in parts[symbol]["parts"]:
        if entry["label"] == label:
            return np.array(entry["values"][node], dtype=np.float64)
    raise KeyError(label)


head = part("eps_h", "dJ/dh_t from the head", left_leaf)

# %%
# BLANK eps_h: eps_h at "not": the head's, plus t's five deltas through W_h's L rows
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
suspects = {"A": "slstm-printed-eq-14", "B": "slstm-output-peephole-dropped",
            "C": "slstm-left-peephole-dropped"}
# the README's first example tree: every left child is a leaf
leaves_on_the_left = parse_ptb("(3 (2 not) (3 (3 very) (4 good)))")
found = {}
cases = [(letter, tree) for letter in suspects] + [("C", leaves_on_the_left)]
for letter, example in cases:
    with planted(BUGS[suspects[letter]]):
        checked = explain(model, params, [example], vocab, check_states=True)
    worst = max(check["finite_difference_error"] for check in checked["parameters"])
    first = next((check for check in checked["state_checks"] if check["error"] > 1e-6), None)
    spans = [node["span"] for node in checked["sentences"][0]["nodes"]]
    where = None if first is None else (spans[first["node"]], first["term"])
    found[letter, " ".join(example.tokens)] = where
    print(f"bug {letter} on '{' '.join(example.tokens)}': parameter check "
          f"{'FAILS' if worst > 1e-6 else 'passes'} ({worst:.1e}); first disagreement {where}")

# %%
# BLANK answers: for each bug on the README's tree, (the node's span, the term)
raise NotImplementedError('blank answers: the comment above says what to write')

# %%
for letter, answer in answers.items():
    assert found[letter, "not really very good"] == answer, (letter, answer)
# bug C on the tree whose every left child is a leaf: the parameter check
# passes (the peepholes W_c.^L get a gradient of exactly 0 there), the
# per-node check does not
assert found["C", "not very good"] == ("not", "eps_c")
print("all checks passed: now read gradcheck/planted.py and docs/cells/slstm.md's errata")
