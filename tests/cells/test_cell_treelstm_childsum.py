"""The Child-Sum Tree-LSTM (Tai et al. 2015, eqs. 2-8): forward values
against a node-by-node NumPy reference, the chain-LSTM reduction (Tai eq. 1),
gradient checks on every suite setting, random dependency trees and 300-level
trees, planted bugs the checker must catch, and the structures it rejects."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings as hypothesis_settings, strategies as st

from cell_checks import (
    assert_gradients_pass,
    assert_kernel_matches_python,
    assert_matches_reference,
    backward_gradients,
    deep_branching_tree,
    each_kernel,
    errors_with_backward,
    random_params,
    shown_terms,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case, random_trees, settings
from gradcheck.trees import random_binary_tree, random_dependency_tree, random_dependency_trees
from npcomp.cells import make_cell, treelstm_childsum
from npcomp.cells.reference import lstm as lstm_reference
from npcomp.cells.reference import treelstm_childsum as childsum_reference
from npcomp.data.readers.formats import chain_tree
from npcomp.forest import build_forest, node_words

MODEL = "treelstm-childsum"
VOCAB = 10


def _word_ids(tree):
    """Word id per node: the tree's tokens "w<k>" read as id k (-1 where none)."""
    return node_words(tree, np.array([int(t[1:]) for t in tree.tokens], dtype=np.int32))


def _forest_inputs(forest, embedding, dtype):
    """(x, word_index) as the model builds them: distinct words once."""
    distinct, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    return embedding[distinct].astype(dtype), word_index


# ---------------------------------------------------------------------------
# forward values
# ---------------------------------------------------------------------------


def _mixed_trees(seed=5):
    """Dependency trees (a word at every node, up to 12 children, a chain, one
    word) and constituency trees (no word at inner nodes, unary nodes)."""
    rng = np.random.default_rng(seed)
    trees = [random_dependency_tree(n, rng, max_children=8) for n in (9, 1, 25, 4)]
    trees.append(random_dependency_tree(13, rng, max_children=12))  # a 12-child node
    trees.append(random_dependency_tree(6, rng, max_children=1))  # a chain
    trees += [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1, 12)]
    return trees


@pytest.mark.parametrize("output_gate", [True, False], ids=["o", "no-o"])
@pytest.mark.parametrize("dtype,tolerance", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_forward_matches_plain_numpy(dtype, tolerance, output_gate):
    trees = _mixed_trees()
    rng = np.random.default_rng(3)
    d, d_x = 5, 4
    cell = treelstm_childsum.TreeLSTMChildSum(d_x, d, output_gate=output_gate)
    params = random_params(cell, rng)
    embedding = rng.normal(size=(VOCAB, d_x))
    words = [_word_ids(t) for t in trees]
    forest = build_forest(trees, words)
    cell.check_forest(forest)
    assert forest.n_children.max() == 12 and np.any((forest.n_children > 0) & (forest.word < 0))
    x, word_index = _forest_inputs(forest, embedding, dtype)
    h, _ = cell.forward({k: v.astype(dtype) for k, v in params.items()}, forest, x, word_index)
    assert h.dtype == dtype
    assert_matches_reference(
        h,
        forest,
        trees,
        lambda k, tree: childsum_reference.forward(
            tree,
            embedding[[int(t[1:]) for t in tree.tokens]],  # _word_ids' ids per token
            params,
            output_gate,
        )["out"],
        rtol=tolerance,
        atol=tolerance,
    )


@pytest.mark.parametrize("model", ["treelstm-childsum", "treelstm-nary"])
def test_chain_equals_chain_lstm(model):
    """Tai §3.2: on a chain both Tree-LSTMs reduce to the LSTM of eq. 1
    (reference.lstm).  The chain LSTM's weights are copied from random
    Child-Sum parameters, U = [U | U_f] (columns i|o|u|f in both layouts);
    the N-ary cell (N = 1, words at inner nodes) takes them as they are."""
    rng = np.random.default_rng(21)
    d, d_x = 4, 3
    childsum = random_params(treelstm_childsum.TreeLSTMChildSum(d_x, d), rng)
    chain = {"W": childsum["W"], "U": np.concatenate([childsum["U"], childsum["U_f"]], 1), "b": childsum["b"]}
    if model == "treelstm-childsum":
        cell, params = make_cell(model, d_x, d), childsum
    else:
        cell, params = make_cell(model, d_x, d, arity=1, inner_inputs=True), chain
        assert [shape for _, shape in cell.parameter_shapes()] == [p.shape for p in params.values()]
    embedding = rng.normal(size=(VOCAB, d_x))
    sentences = [rng.integers(0, VOCAB, size=length) for length in (1, 2, 7, 30)]
    trees = [chain_tree([f"w{k}" for k in s]) for s in sentences]
    forest = build_forest(trees, [_word_ids(t) for t in trees])
    assert forest.n_levels == 30 and forest.n_children.max() == 1
    cell.check_forest(forest)
    x, word_index = _forest_inputs(forest, embedding, np.float64)
    h, _ = cell.forward(params, forest, x, word_index)
    assert_matches_reference(
        h, forest, trees, lambda k, tree: lstm_reference.forward(embedding[sentences[k]], chain)["out"]
    )


def test_float32_gradient_close_to_float64():
    """Forward and backward stay float32 in float32 and agree with float64."""
    setting = Setting(MODEL, trees="dependency", dropout=0.5, l2=0.1)
    rng = np.random.default_rng(4)
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    grads64 = params.zeros_like()
    loss64, _ = model.loss_and_gradient(params, forest, grads64, **options)
    params32 = params.astype(np.float32)
    grads32 = params32.zeros_like()
    options32 = dict(options, masks=options["masks"].astype(np.float32))
    loss32, _ = model.loss_and_gradient(params32, forest, grads32, **options32)
    assert grads32.flat.dtype == np.float32
    assert loss32 == pytest.approx(loss64, rel=1e-5)
    scale = np.abs(grads64.flat).max()
    np.testing.assert_allclose(grads32.flat, grads64.flat, rtol=0, atol=1e-5 * scale)


def test_parameter_count_and_tai_table_1():
    """4 d (d_x + d + 1) with one bias per gate as printed in eqs. 3-6.  Tai's
    Table 1 (sentiment, d = 168, d_x = 300) counts 315,840 = ours + 4d: the
    released code has two biases per gate (docs/cells/treelstm_childsum.md)."""
    d, d_x = 168, 300
    cell = make_cell(MODEL, d_x, d)
    count = sum(int(np.prod(shape)) for _, shape in cell.parameter_shapes())
    assert count == 4 * d * (d_x + d + 1) == 315_168
    assert count + 4 * d == 315_840


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

SETTINGS = settings(MODEL)


# every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting


dependency_shapes = st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(1, 40)), min_size=1, max_size=3)


@pytest.mark.parametrize(
    "setting",
    [
        Setting(MODEL, trees="dependency"),
        Setting(MODEL, trees="dependency", supervision="root+leaves", dropout=0.5, l2=0.01),
    ],
    ids=lambda s: s.describe(),
)
@hypothesis_settings(max_examples=8)
@given(shapes=dependency_shapes)
def test_random_dependency_trees(setting, shapes):
    trees = [random_dependency_tree(n_words, np.random.default_rng(seed), max_children=8) for seed, n_words in shapes]
    assert_gradients_pass(setting, trees, np.random.default_rng(shapes[0][0]))


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    """300-leaf trees (no word at inner nodes): 300 levels, no recursion.
    (d = d_x = 2 keeps the 300-level finite differences affordable.)"""
    rng = np.random.default_rng(7)
    tree = deep_branching_tree(direction, rng, vocabulary=VOCAB)
    setting = Setting(MODEL, input_dim=2, hidden_dim=2, supervision="root+leaves")
    assert assert_gradients_pass(setting, [tree], rng).n_levels == 300


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case():
    rng = np.random.default_rng(11)
    trees = random_dependency_trees(rng, n_classes=5, vocab_size=VOCAB)
    return build_case(Setting(MODEL, trees="dependency"), trees, rng)


def _errors_with(monkeypatch, wrapper):
    return errors_with_backward(monkeypatch, _case(), wrapper)


def test_unplanted_case_passes():
    model, params, forest, options = _case()
    assert forest.n_children.max() == 8
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_first_childs_forget_gate_for_every_child(monkeypatch):
    """(a) eps_c routed to every child k with f_j1 instead of f_jk."""
    kernel = treelstm_childsum._gate_deltas

    def first_forget_kernel(first_edge, edge_child, gates, forget, c, tanh_c, d_h, d_c, delta, delta_f, start, stop):
        kernel(first_edge, edge_child, gates, forget, c, tanh_c, d_h, d_c, delta, delta_f, start, stop)
        for j in range(start, stop):  # d_c[child] was eps_c * f_jk: make it eps_c * f_j1
            edges = np.arange(first_edge[j], first_edge[j + 1])
            d_c[edge_child[edges]] *= forget[first_edge[j]] / forget[edges]

    def wrap(backward):
        def buggy(params, forest, cache, d_h, grads):
            monkeypatch.setattr(treelstm_childsum, "_gate_deltas", first_forget_kernel)
            try:
                return backward(params, forest, cache, d_h, grads)
            finally:
                monkeypatch.setattr(treelstm_childsum, "_gate_deltas", kernel)

        return buggy

    errors = _errors_with(monkeypatch, wrap)
    assert errors["cell.U_f"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE  # the head is not behind the bug


def test_detects_missing_child_specific_forget_term(monkeypatch):
    """(b) eps_h to the children without delta_fk U_f^T (only the shared
    delta_iou U^T): the backward sees U_f = 0 when routing, which is the only
    place it reads U_f."""

    def wrap(backward):
        def buggy(params, forest, cache, d_h, grads):
            routing = dict(params)
            routing["U_f"] = np.zeros_like(params["U_f"])
            return backward(routing, forest, cache, d_h, grads)

        return buggy

    errors = _errors_with(monkeypatch, wrap)
    assert errors["cell.U_f"] > TOLERANCE and errors["cell.U.i"] > TOLERANCE
    assert errors["softmax.W"] <= TOLERANCE


# ---------------------------------------------------------------------------
# structures
# ---------------------------------------------------------------------------


def test_check_forest_rejects_a_leaf_without_a_word():
    rng = np.random.default_rng(2)
    trees = [random_dependency_tree(5, rng), random_binary_tree(6, rng)]
    words = [_word_ids(t) for t in trees]
    cell = make_cell(MODEL, 4, 3)
    cell.check_forest(build_forest(trees, words))  # words at inner nodes or not: fine
    leaf = trees[1].children().index([])  # a leaf of the second tree
    words[1][leaf] = -1
    with pytest.raises(ValueError, match="every leaf must read a word.*tree 1"):
        cell.check_forest(build_forest(trees, words))


def test_cell_takes_no_options():
    with pytest.raises(ValueError, match="takes no option"):
        make_cell(MODEL, 4, 3, arity=2)


def _kernel_cases():
    rng = np.random.default_rng(9)
    trees = _mixed_trees(seed=9)
    forest = build_forest(trees, [_word_ids(t) for t in trees])
    first_edge, edge_child = treelstm_childsum._edges(forest)
    d, n, n_edges = 3, forest.n_nodes, edge_child.shape[0]
    start, stop = forest.level_ptr[1], forest.level_ptr[2]
    rows = treelstm_childsum._input_rows(forest, np.arange(forest.word_nodes().size) % 4, 4)
    gates = rng.uniform(0.05, 0.95, size=(n + 3, 3 * d))
    forget = rng.uniform(0.05, 0.95, size=(n_edges + 3, d))
    c = rng.normal(size=(n, d))
    return [
        (
            treelstm_childsum._gather_children,
            lambda: (
                first_edge,
                edge_child,
                rng.normal(size=(n, d)),
                np.zeros((n_edges + 3, d)),
                np.zeros((n + 3, d)),
                start,
                stop,
            ),
        ),
        (
            treelstm_childsum._gate_exponents,
            lambda: (rows, rng.normal(size=(5, 4 * d)), first_edge, gates.copy(), forget.copy(), start, stop),
        ),
        (
            treelstm_childsum._cell_update,
            lambda: (first_edge, edge_child, gates.copy(), forget.copy(), c.copy(), start, stop),
        ),
        (
            treelstm_childsum._gate_deltas,
            lambda: (
                first_edge,
                edge_child,
                gates,
                forget,
                c,
                np.tanh(c),
                rng.normal(size=(n, d)),
                rng.normal(size=(n, d)),
                np.zeros((n + 3, 3 * d)),
                np.zeros((n_edges + 3, d)),
                start,
                stop,
            ),
        ),
        (
            treelstm_childsum._route_to_children,
            lambda: (
                first_edge,
                edge_child,
                rng.normal(size=(stop - start, d)),
                rng.normal(size=(first_edge[stop] - first_edge[start], d)),
                rng.normal(size=(n, d)),
                start,
                stop,
            ),
        ),
    ]


@each_kernel(_kernel_cases())
def test_kernel_matches_its_python_function(kernel, make_args):
    assert_kernel_matches_python(kernel, make_args)


def test_input_deltas_kernel_matches_its_python_function():
    rng = np.random.default_rng(1)
    trees = _mixed_trees(seed=1)
    forest = build_forest(trees, [_word_ids(t) for t in trees])
    first_edge, edge_child = treelstm_childsum._edges(forest)
    rows = treelstm_childsum._input_rows(forest, np.arange(forest.word_nodes().size) % 4, 4)
    delta = rng.normal(size=(forest.n_nodes + 3, 9))
    delta_f = rng.normal(size=(edge_child.shape[0] + 3, 3))
    kernel = treelstm_childsum._input_deltas
    np.testing.assert_allclose(
        kernel(rows, first_edge, delta, delta_f, 5), kernel.py_func(rows, first_edge, delta, delta_f, 5), rtol=1e-12
    )


def test_error_terms_add_up_to_the_parameter_gradients():
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: db = sum over nodes of [delta_i | delta_o | delta_u | delta_f] (f_jk
    and delta_fk in the row of child k), dU = sum h~^T [delta_i | delta_o |
    delta_u] and dU_f = sum over children k of h_k^T delta_fk; the forward's
    h term is its output."""
    trees = _mixed_trees()
    rng = np.random.default_rng(8)
    cell = treelstm_childsum.TreeLSTMChildSum(4, 3)
    params = random_params(cell, rng)
    forest = build_forest(trees, [_word_ids(t) for t in trees])
    x, word_index = _forest_inputs(forest, rng.normal(size=(VOCAB, 4)), np.float64)
    h, cache = cell.forward(params, forest, x, word_index)
    grads, _ = backward_gradients(cell, params, forest, cache, rng.normal(size=h.shape))
    forward, back = shown_terms(cell, forest, cache, nan_as_zero=True)
    gates = np.hstack([back["delta_i"], back["delta_o"], back["delta_u"]])
    np.testing.assert_allclose(
        grads["b"], np.concatenate([gates.sum(0), back["delta_f"].sum(0)]), rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(grads["U"], forward["h~"].T @ gates, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads["U_f"], forward["h"].T @ back["delta_f"], rtol=1e-12, atol=1e-12)
    has_parent = np.ones(forest.n_nodes, dtype=bool)
    has_parent[forest.root] = False
    assert (np.isnan(forward["f"]).all(axis=1) == ~has_parent).all()
    np.testing.assert_array_equal(forward["h"], h)
