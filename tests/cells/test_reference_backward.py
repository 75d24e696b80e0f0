"""The tree cells' node-by-node backward passes (npcomp/cells/reference/,
each in its paper's symbols with the errata as comments) against the fast
cells: every error term ``backward_terms`` shows, every parameter gradient
and dJ/dx, on random trees (hypothesis: a fixed seed, a small budget)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from cell_checks import forward_on_tokens
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cells import make_cell, reference, registry

TREE_CELLS = [
    name for name, entry in registry.MODELS.items() if entry.composes != "sequence" and name != "mean-vectors"
]
# (model, cell options, word-vector width, trees: 0 binary with unary nodes, else
# dependency trees with at most that many children, a word at every node)
CASES = [
    ("treelstm-nary", {}, 4, 0),
    ("treelstm-nary", {"output_gate": False}, 4, 0),
    ("treelstm-nary", {"arity": 3, "inner_inputs": True}, 2, 3),
    ("treelstm-childsum", {}, 4, 4),
    ("treelstm-childsum", {"output_gate": False}, 4, 0),
    ("slstm", {}, 3, 0),
    ("slstm", {}, 4, 0),
    ("lstm-rnn", {"activation": "tanh"}, 3, 0),
    ("lstm-rnn", {"activation": "sigmoid", "untied": True}, 4, 0),
    ("recnn", {"activation": "softsign"}, 3, 0),
    ("recnn", {"activation": "tanh", "untied": True}, 4, 0),
    ("rntn", {}, 3, 0),
    ("rntn", {"leaf_activation": "tanh"}, 3, 0),
    ("mvrnn", {}, 3 + 3 * 3, 0),
    ("rae", {}, 3, 0),
    ("rae", {"reconstruction_weight": 0.7}, 3, 0),
    ("drnn", {"layers": 3, "activation": "tanh"}, 4, 0),
    ("drnn", {"layers": 2, "activation": "relu"}, 3, 0),
    ("dtrnn", {}, 4, 8),
    ("dtrnn", {"positions": 1}, 3, 0),
    ("sdtrnn", {}, 4, 8),
]
D = 3
# the recursive family's acceptance: its fast cells agree with their references
# to 1e-12 in float64 (the sixteen older cells are held to 1e-10 relative)
FAMILY = {"mvrnn", "rae", "drnn", "dtrnn", "sdtrnn"}


def _tolerance(name: str) -> dict:
    """assert_allclose's tolerances for cell ``name``."""
    return dict(rtol=1e-12 if name in FAMILY else 1e-10, atol=1e-12)


def test_every_tree_cell_has_a_reference_backward():
    assert {case[0] for case in CASES} == set(TREE_CELLS)
    for name in TREE_CELLS:
        module = reference.reference_module(name)
        assert callable(module.backward)


def _compare(name, options, d_x, trees, seed):
    rng = np.random.default_rng(seed)
    cell = make_cell(name, d_x, D, **options)
    params = {key: rng.normal(0, 0.6, shape) for key, shape in cell.parameter_shapes()}
    vectors = [rng.normal(size=(len(tree.tokens), d_x)) for tree in trees]
    forest, _ = forward_on_tokens(cell, params, trees, vectors, np.float64)
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, cache = cell.forward(params, forest, np.concatenate(vectors)[words], index)
    d_h = rng.normal(size=h.shape)
    grads = {key: np.zeros_like(value) for key, value in params.items()}
    d_x = cell.backward(params, forest, cache, d_h.copy(), grads)
    terms = cell.backward_terms(forest, cache)
    module = reference.reference_module(name)
    summed = {key: np.zeros_like(value) for key, value in params.items()}
    offsets = np.cumsum([0] + [len(tree.tokens) for tree in trees])
    for k, tree in enumerate(trees):
        nodes = np.flatnonzero(forest.tree == k)
        rows = np.empty_like(nodes)
        rows[forest.origin[nodes]] = nodes  # forest row of each tree node
        out = module.backward(tree, vectors[k], params, d_h[rows], **options)
        for term in terms:
            fast = np.asarray(term.values[rows], dtype=np.float64)
            slow = np.asarray(out[term.symbol], dtype=np.float64)
            defined = ~np.isnan(fast)
            assert not np.isnan(slow[defined]).any(), term.symbol
            np.testing.assert_allclose(
                slow[defined], fast[defined], err_msg=f"{name} {options}: {term.symbol}", **_tolerance(name)
            )
        for key in summed:
            summed[key] += out["grads"][key]
        tokens = (words >= offsets[k]) & (words < offsets[k + 1])
        np.testing.assert_allclose(
            out["d_x"][words[tokens] - offsets[k]],
            d_x[tokens],
            **_tolerance(name),
            err_msg=f"{name} {options}: d_x",
        )
    for key, value in grads.items():
        np.testing.assert_allclose(summed[key], value, err_msg=f"{name} {options}: d{key}", **_tolerance(name))


shapes = st.tuples(
    st.integers(0, 2**31 - 1), st.lists(st.integers(1, 12), min_size=1, max_size=3), st.sampled_from([0.0, 0.3])
)


@pytest.mark.parametrize(
    "name,options,d_x,max_children", CASES, ids=[f"{case[0]}-{case[1]}-dx{case[2]}" for case in CASES]
)
@hypothesis_settings(max_examples=4)
@given(shape=shapes)
def test_reference_backward_equals_the_cell(name, options, d_x, max_children, shape):
    seed, sizes, unary = shape
    rng = np.random.default_rng(seed)
    if max_children:
        trees = [random_dependency_tree(n, rng, max_children=max_children) for n in sizes]
    else:
        trees = [random_binary_tree(n, rng, unary_rate=unary) for n in sizes]
    _compare(name, options, d_x, trees, seed)
