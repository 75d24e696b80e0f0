"""The model's objective and the cells' forward values and kernels against plain NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from cell_checks import assert_kernel_matches_python, forward_on_tokens

from gradcheck.trees import random_binary_tree
from npcomp.cells.kernels import inputs, levels, lstm_kernels
from npcomp.cells import mean_vectors, recnn, treelstm_nary
from npcomp.cells.kernels.activations import CODES
from npcomp.cells.reference.functions import ACTIVATIONS
from npcomp.forest import build_forest


def _trees(seed=5, sizes=(7, 1, 12, 3, 9, 20)):
    rng = np.random.default_rng(seed)
    return [random_binary_tree(n, rng, unary_rate=0.1) for n in sizes]


def _reference_treelstm(tree, x, W, U, b, d):
    """Tai eqs. 9-14 node by node, children before parents (plain NumPy)."""
    sigmoid = lambda z: 1 / (1 + np.exp(-z))
    kids = tree.children()
    h = np.zeros((tree.n_nodes, d))
    c = np.zeros((tree.n_nodes, d))
    for j in range(tree.n_nodes):
        if not kids[j]:
            z = x[tree.token_index[j]] @ W + b[: 3 * d]
            i, o, u = sigmoid(z[:d]), sigmoid(z[d : 2 * d]), np.tanh(z[2 * d :])
            c[j] = i * u
        else:
            hc = np.zeros(2 * d)
            for k, kid in enumerate(kids[j]):
                hc[k * d : (k + 1) * d] = h[kid]
            z = hc @ U
            i, o = sigmoid(z[:d] + b[:d]), sigmoid(z[d : 2 * d] + b[d : 2 * d])
            u = np.tanh(z[2 * d : 3 * d] + b[2 * d : 3 * d])
            c[j] = i * u
            for k, kid in enumerate(kids[j]):
                f = sigmoid(z[(3 + k) * d : (4 + k) * d] + b[3 * d :])
                c[j] += f * c[kid]
        h[j] = o * np.tanh(c[j])
    return h


@pytest.mark.parametrize("dtype,tolerance", [(np.float64, 1e-12), (np.float32, 2e-6)])
def test_treelstm_forward_matches_plain_numpy(dtype, tolerance):
    trees = _trees()
    rng = np.random.default_rng(3)
    d, d_x = 5, 4
    cell = treelstm_nary.TreeLSTMNary(d_x, d)
    params = {name: rng.normal(0, 0.7, shape) for name, shape in cell.parameter_shapes()}
    vectors = [rng.normal(size=(len(t.tokens), d_x)) for t in trees]
    forest, h = forward_on_tokens(cell, params, trees, vectors, dtype)
    for k, tree in enumerate(trees):
        expected = _reference_treelstm(tree, vectors[k], params["W"], params["U"], params["b"], d)
        nodes = np.flatnonzero(forest.tree == k)
        # forest order within a tree is the tree's order sorted by height (stable)
        heights = forest.height[nodes]
        tree_height = np.zeros(tree.n_nodes, dtype=np.int64)
        for node in range(tree.n_nodes):
            up = tree.parent[node]
            if up >= 0:
                tree_height[up] = max(tree_height[up], tree_height[node] + 1)
        order = np.argsort(tree_height, kind="stable")
        assert np.array_equal(heights, tree_height[order])
        np.testing.assert_allclose(h[nodes], expected[order], rtol=tolerance, atol=tolerance)


def _kernel_cases():
    rng = np.random.default_rng(9)
    trees = _trees(seed=9)
    forest = build_forest(trees, [np.where(t.token_index >= 0, t.token_index, -1).astype(np.int32) for t in trees])
    children = levels.children_columns(forest, 2)
    d, n = 3, forest.n_nodes
    start, stop = forest.level_ptr[1], forest.level_ptr[2]
    h = rng.normal(size=(n, d))
    gates = rng.uniform(0.05, 0.95, size=(n + 3, 5 * d))
    c = rng.normal(size=(n, d))
    tanh_c = np.tanh(c)
    return (
        [
            (lstm_kernels.gather_children, lambda: (children, h, np.zeros((n + 3, 2 * d)), start, stop)),
            (treelstm_nary._cell_update, lambda: (children, gates.copy(), c.copy(), start, stop)),
            (treelstm_nary._gate_exponents, lambda: (gates.copy(), rng.normal(size=5 * d), start, stop, d)),
            (
                treelstm_nary._gate_exponents,
                lambda: (  # with inner inputs
                    gates.copy(),
                    rng.normal(size=5 * d),
                    start,
                    stop,
                    d,
                    rng.integers(-1, 4, size=n),
                    rng.normal(size=(4, 4 * d)),
                ),
            ),
            (
                treelstm_nary._gate_deltas,
                lambda: (
                    children,
                    gates,
                    c,
                    tanh_c,
                    h.copy(),
                    rng.normal(size=(n, d)),
                    np.zeros((n + 3, 5 * d)),
                    start,
                    stop,
                ),
            ),
            (
                lstm_kernels.scatter_to_children,
                lambda: (children, rng.normal(size=(stop - start, 2 * d)), h.copy(), start, stop),
            ),
            (
                lstm_kernels.gather_children,
                lambda: (  # through recurrent-dropout masks
                    children,
                    h,
                    np.zeros((n + 3, 2 * d)),
                    start,
                    stop,
                    rng.uniform(0, 2, (n, d)),
                ),
            ),
            (
                lstm_kernels.scatter_to_children,
                lambda: (
                    children,
                    rng.normal(size=(stop - start, 2 * d)),
                    h.copy(),
                    start,
                    stop,
                    rng.uniform(0, 2, (n, d)),
                ),
            ),
            (inputs._sum_rows, lambda: (rng.normal(size=(10, 3)), rng.integers(0, 4, 10), np.zeros((4, 3)))),
            (mean_vectors._sum_up, lambda: (forest.parent, rng.normal(size=(n, 3)), np.ones(n))),
            (mean_vectors._push_down, lambda: (forest.parent, rng.normal(size=(n, 3)))),
        ]
        + [
            (
                recnn._inner_forward,
                lambda code=code: (
                    code,
                    forest.level_ptr,
                    levels.binary_children(forest),
                    forest.n_leaves,
                    rng.integers(0, 4, size=forest.n_leaves),
                    rng.normal(size=(4, 2 * d)),
                    rng.normal(size=(2 * d, d)),
                    rng.normal(size=d),
                    np.zeros((n, 2 * d)),
                    np.zeros((n, d)),
                    rng.normal(size=(n, d)),
                    n - 1,
                    rng.normal(size=d),
                ),
            )
            for code in CODES.values()
        ]
        + [
            (
                recnn._inner_backward,
                lambda code=code: (
                    code,
                    forest.level_ptr,
                    levels.binary_children(forest),
                    forest.n_leaves,
                    rng.normal(size=(d, 2 * d)),
                    rng.uniform(-0.9, 0.9, size=(n, d)),
                    rng.normal(size=(n, d)),
                    np.zeros((n, d)),
                    np.zeros((n, 2 * d)),
                    np.zeros((forest.n_leaves, 2 * d)),
                ),
            )
            for code in CODES.values()
        ]
    )


@pytest.mark.parametrize("kernel,make_args", _kernel_cases(), ids=lambda value: getattr(value, "__name__", ""))
def test_kernel_matches_its_python_function(kernel, make_args):
    """Every numba kernel against its .py_func on the same inputs (STYLE 9)."""
    assert_kernel_matches_python(kernel, make_args)


def test_kernel_activations_match_numpy():
    """The kernels' tanh (one exp), sigmoid and every other activation of the
    table agree with its NumPy g to rounding, in absolute terms, over the whole
    range; derivatives come from outputs, as the table's g' does."""
    from numba import njit

    from npcomp.cells.kernels.activations import activate, derivative_from_output

    @njit
    def apply(code, z):
        out = np.empty_like(z)
        slope = np.empty_like(z)
        for k in range(z.shape[0]):
            out[k] = activate(code, z[k])
            slope[k] = derivative_from_output(code, out[k])
        return out, slope

    z = np.concatenate(
        [
            np.linspace(-40, 40, 20001),
            np.geomspace(1e-20, 1e-3, 50),
            -np.geomspace(1e-20, 1e-3, 50),
            [0.0, 800.0, -800.0],
        ]
    )
    with np.errstate(over="ignore", invalid="ignore"):  # exp(800) in the references
        slopes = {
            "tanh": 1 - np.tanh(z) ** 2,
            "sigmoid": np.exp(-z) / (1 + np.exp(-z)) ** 2,
            "softsign": 1 / (1 + np.abs(z)) ** 2,
            "relu": (z > 0).astype(float),
            "identity": np.ones_like(z),
        }
        assert set(slopes) == set(ACTIVATIONS) == set(CODES)  # every activation, both tables
        for name, activation in ACTIVATIONS.items():
            value, slope = apply(CODES[name], z)
            expected_value, expected_slope = activation.g(z), slopes[name]
            finite = np.isfinite(expected_slope)
            np.testing.assert_allclose(
                activation.slope(expected_value)[finite], expected_slope[finite], rtol=0, atol=1e-15
            )
            np.testing.assert_allclose(value, expected_value, rtol=0, atol=4e-16)
            np.testing.assert_allclose(slope[finite], expected_slope[finite], rtol=0, atol=1e-15)


def _pair_model(model="treelstm-childsum"):
    from npcomp.cells import make_cell
    from npcomp.models import PairModel

    rng = np.random.default_rng(2)
    pair_model = PairModel(make_cell(model, 4, 3), vocab_size=10, embedding_dim=4, hidden_dim=5)
    params = pair_model.new_parameters(rng, rng.normal(0, 1, (10, 4)), dtype=np.float64)
    return pair_model, params


@pytest.mark.parametrize("model", ["treelstm-childsum", "bilstm"])
def test_pair_forest_encodes_each_sentence_as_alone(model):
    """Both sides of every pair share one forest; no state leaks between
    trees, so each sentence's representation is what it gets alone, and the
    batch's scores are the head applied to those."""
    from gradcheck.trees import random_dependency_tree
    from npcomp.data.readers.formats import chain_tree
    from npcomp.models import PairBatch

    rng = np.random.default_rng(8)
    if model == "bilstm":
        trees = [chain_tree([f"w{k}" for k in rng.integers(0, 10, n)]) for n in (3, 1, 6, 4)]
    else:
        trees = [random_dependency_tree(n, rng, vocab_size=10) for n in (3, 1, 6, 4)]
    words = [np.array([int(t[1:]) for t in tree.tokens], dtype=np.int32)[tree.token_index] for tree in trees]
    pair_model, params = _pair_model(model)
    together = pair_model.sentence_states(params, build_forest(trees, words))
    for k, (tree, ids) in enumerate(zip(trees, words)):
        alone = pair_model.sentence_states(params, build_forest([tree], [ids]))
        np.testing.assert_allclose(together[k], alone[0], rtol=1e-12, atol=1e-14)
    batch = PairBatch(build_forest(trees, words))  # pairs (0, 2) and (1, 3)
    np.testing.assert_allclose(
        pair_model.predict(params, batch), pair_model.predict_states(params, together[:2], together[2:]), rtol=1e-12
    )


def test_pair_model_refuses_classifier_dropout():
    pair_model, _ = _pair_model()
    from gradcheck.trees import random_dependency_tree

    forest = build_forest(
        [random_dependency_tree(3, np.random.default_rng(0), vocab_size=10)] * 2,
        [np.array([1, 2, 3], dtype=np.int32)] * 2,
    )
    with pytest.raises(ValueError, match="similarity head takes no dropout"):
        pair_model.dropout_masks(forest, 0.5, np.random.default_rng(0), np.float64)


def _neutral_class_model():
    from npcomp.cells import make_cell
    from npcomp.models import TreeModel

    model = TreeModel(make_cell("treelstm-nary", 4, 3), 2, 10, 4, training_only_classes=1)
    params = model.new_parameters(np.random.default_rng(4), dtype=np.float64)
    trees = _trees(sizes=(5, 8))
    from npcomp.forest import node_words

    words = [node_words(t, np.random.default_rng(k).integers(0, 10, len(t.tokens))) for k, t in enumerate(trees)]
    return model, params, trees, words


def test_training_only_class_is_trained_but_never_predicted():
    """sst2 with neutral phrases as class 2 (Tai et al.'s code): the softmax is
    three wide, the outputs are the two predictable classes renormalised."""
    from npcomp.heads import softmax

    model, params, trees, words = _neutral_class_model()
    assert params["softmax.W"].shape == (3, 3)
    labels = [np.full(t.n_nodes, 2, dtype=np.int32) for t in trees]  # all neutral
    forest = build_forest(trees, words, labels)
    grads = params.zeros_like()
    loss, _ = model.loss_and_gradient(params, forest, grads)
    assert np.isfinite(loss) and np.abs(grads["softmax.b"]).max() > 0
    h, _ = model._encode(params, forest)
    full = softmax(h @ params["softmax.W"] + params["softmax.b"])
    outputs = model.outputs(params, forest)
    np.testing.assert_allclose(outputs, full[:, :2] / full[:, :2].sum(axis=1, keepdims=True))
    # make class 2 the likeliest everywhere: it is still never predicted
    params["softmax.b"][2] = 50.0
    assert set(model.predict(params, forest).tolist()) <= {0, 1}


def test_training_only_class_needs_the_softmax_head():
    from npcomp.cells import make_cell
    from npcomp.models import TreeModel

    with pytest.raises(ValueError, match="softmax head"):
        TreeModel(make_cell("treelstm-nary", 4, 3), 2, 10, 4, head="ordinal", training_only_classes=1)
