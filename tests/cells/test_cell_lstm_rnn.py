"""The LSTM-RNN cell (Le & Zuidema 2015, Sec. 3-4): forward values against a
plain NumPy reading of the printed equations, gradient checks on every suite
setting, random and deep trees, planted bugs, and what the cell rejects."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cell_checks import (
    assert_composes_binary_trees_with_words_at_the_leaves,
    assert_float32_forward_is_close_to_float64,
    assert_forward_is_the_reference,
    assert_gradients_pass,
    assert_kernel_matches_python,
    assert_random_trees_pass,
    assert_untied_leaves_are_classified_from_word_vectors,
    backward_gradients,
    backward_while,
    deep_branching_tree,
    each_kernel,
    errors_with_backward,
    given_random_trees,
    left_branching_links,
    random_params,
    replaced,
    shown_terms,
    token_forest,
    with_swapped_children,
    zeroed,
)
from gradcheck.check import STEP, TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case, random_trees, run_setting, settings
from gradcheck.trees import random_binary_tree, random_forest_trees
from npcomp.cells.kernels import levels, lstm_rnn_kernels
from npcomp.cells import lstm_rnn, make_cell, registry
from npcomp.cells.kernels.activations import activation_code
from npcomp.cells.reference import lstm_rnn as lstm_rnn_reference

MODEL = "lstm-rnn"
# the activations its registry entry offers
ACTIVATION_NAMES = registry.model(MODEL).options["activation"]


# ---------------------------------------------------------------------------
# forward against the printed equations, node by node
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
@pytest.mark.parametrize("activation", ACTIVATION_NAMES)
def test_forward_matches_the_printed_equations(activation, untied):
    assert_forward_is_the_reference(MODEL, lstm_rnn_reference, activation, untied)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_float32_forward_is_close_to_float64(untied):
    assert_float32_forward_is_close_to_float64(MODEL, untied)


def test_float32_backward_stays_float32():
    setting = Setting(MODEL, input_dim=4, hidden_dim=3, activation="sigmoid", untied=True)
    rng = np.random.default_rng(0)
    model, params, forest, _ = build_case(setting, random_forest_trees(rng), rng)
    params32 = params.astype(np.float32)
    grads32, grads64 = params32.zeros_like(), params.zeros_like()
    model.loss_and_gradient(params32, forest, grads32)
    model.loss_and_gradient(params, forest, grads64)
    assert grads32.flat.dtype == np.float32
    np.testing.assert_allclose(grads32.flat, grads64.flat, rtol=1e-3, atol=1e-5)


def test_mirrored_tree_gives_the_same_states_when_the_unshared_weights_agree():
    """(L1)-(L4) share one weight set with the children swapped: with
    W_c1 = W_c2 and W_o1 = W_o2 (the only per-child matrices) the cell is
    symmetric, so mirroring every binary node leaves every state unchanged."""
    rng = np.random.default_rng(8)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (9, 14, 2)]
    forest = token_forest(trees, shared_words=True)
    _, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    x = rng.normal(size=(int(index.max()) + 1, 5))
    for untied in (False, True):
        d_x = 5 if untied else 3
        cell = make_cell(MODEL, d_x, 3, activation="tanh", untied=untied)
        params = {name: rng.normal(0, 0.8, shape) for name, shape in cell.parameter_shapes()}
        for name in ("W", "W_leaf") if untied else ("W",):
            params[name][:, 5 * 3 : 6 * 3] = params[name][:, 4 * 3 : 5 * 3]  # W_c2 = W_c1
            params[name][:, 7 * 3 : 8 * 3] = params[name][:, 6 * 3 : 7 * 3]  # W_o2 = W_o1
        h, _ = cell.forward(params, forest, x[:, :d_x], index)
        mirrored = forest.children.copy()
        binary = forest.n_children == 2
        mirrored[binary] = mirrored[binary][:, ::-1]
        original_children, forest.children = forest.children, mirrored
        try:
            h_mirrored, _ = cell.forward(params, forest, x[:, :d_x], index)
        finally:
            forest.children = original_children
        np.testing.assert_allclose(h_mirrored, h, rtol=1e-12, atol=1e-13)
        # and with W_c2 != W_c1 the mirror image differs: the test can fail
        params["W"][:, 5 * 3 : 6 * 3] += 0.5
        h_changed, _ = cell.forward(params, forest, x[:, :d_x], index)
        forest.children = mirrored
        try:
            h_changed_mirrored, _ = cell.forward(params, forest, x[:, :d_x], index)
        finally:
            forest.children = original_children
        assert np.abs(h_changed_mirrored - h_changed)[forest.n_leaves :].max() > 1e-3


def test_matrix_products_match_the_complexity_count_of_section_4_1():
    """L&Z Sec. 4.1: N 6 d d_w + (N-2) 10 d^2 + (N-1) d^2 multiply-adds for a
    binary tree of N words without unary nodes.  Counted from the cell's
    layout: the blocks of W_leaf through which a leaf child reaches its
    parent's gates, the blocks of S = [W ; W_peephole | 0] through which an
    inner child's h and c do, and W_co once per inner node (the output gate
    peeks at c_p)."""
    d, d_w = 3, 5
    cell = make_cell(MODEL, d_w, d, untied=True)
    projection = lstm_rnn._projection(np.ones((d, 8 * d)), np.ones((d, 4 * d)))
    for slot in range(2):
        feeds = lstm_rnn.TARGET[slot] >= 0
        assert int(np.sum(feeds)) == 6  # leaf child: 6 d x d_w
        h_blocks = [np.any(projection[:d, k * d : (k + 1) * d]) for k in range(8)]
        c_blocks = [np.any(projection[d:, k * d : (k + 1) * d]) for k in range(8)]
        assert int(np.sum(feeds & h_blocks) + np.sum(feeds & c_blocks)) == 10  # inner: 10 d x d
    for n_words in (2, 5, 19):
        leaf_links, inner_links, inner_nodes = left_branching_links(n_words)
        ours = leaf_links * 6 * d * d_w + inner_links * 10 * d * d + inner_nodes * d * d
        paper = n_words * 6 * d * d_w + (n_words - 2) * 10 * d * d + (n_words - 1) * d * d
        assert ours == paper
    shapes = dict(cell.parameter_shapes())
    assert sum(int(np.prod(s)) for s in shapes.values()) == 13 * d * d + 8 * d * d_w + 4 * d


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

SETTINGS = settings(MODEL)


# every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting
# (softsign with the suite's smaller step, SOFTSIGN_STEP)


def test_softsign_difference_error_is_truncation():
    """The entry the suite's step resolves worst in the softsign settings:
    analytic minus numerical shrinks as h^4 (16x per halving), so the
    analytic gradient is right and the difference at h = 1e-3 is truncation."""
    from gradcheck.check import numerical_gradient, objective

    worst = (0.0, None)
    for setting in (s for s in SETTINGS if s.activation == "softsign"):
        rng = np.random.default_rng(3)
        model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
        errors = run_setting(replace(setting, step=STEP), seed=3)
        if errors["cell.b"] > worst[0]:
            worst = (errors["cell.b"], (model, params, forest, options))
    model, params, forest, options = worst[1]
    grads = params.zeros_like()
    model.loss_and_gradient(params, forest, grads, **options)
    function = objective(model, forest, **options)
    block = model.layout["cell.b"]
    entries = np.arange(block.offset, block.offset + block.size)
    gaps = [
        np.abs(grads.flat[entries] - numerical_gradient(function, params.flat, entries, h)) for h in (2e-3, 1e-3, 5e-4)
    ]
    k = int(np.argmax(gaps[1]))
    assert 12 < gaps[0][k] / gaps[1][k] < 20 and 12 < gaps[1][k] / gaps[2][k] < 20


# softsign's second derivative jumps at 0 (docs/EQUATIONS.md E6): random trees
# use the smooth non-linearities, softsign is checked at the suite's fixed seed
@pytest.mark.parametrize(
    "setting",
    [
        Setting(MODEL, input_dim=4, hidden_dim=3, activation="tanh", untied=True),
        Setting(MODEL, input_dim=3, hidden_dim=3, activation="sigmoid", untied=False, supervision="root+leaves"),
    ],
    ids=lambda s: s.describe(),
)
@given_random_trees(max_trees=2)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_deep_branching_trees(untied):
    """A 300-leaf left-branching and a 300-leaf right-branching tree in one
    forest: 300 levels, no recursion; the gradient reaches the deepest leaves."""
    rng = np.random.default_rng(7)
    trees = [deep_branching_tree(direction, rng) for direction in ("left", "right")]
    setting = Setting(
        MODEL, input_dim=3 if untied else 2, hidden_dim=2, untied=untied, activation="tanh", supervision="root+leaves"
    )
    assert assert_gradients_pass(setting, trees, rng).n_levels == 300


# ---------------------------------------------------------------------------
# planted bugs: the checker must fail on each
# ---------------------------------------------------------------------------


def _case(activation="tanh", untied=False):
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng) for n in (6, 9, 1)]
    setting = Setting(MODEL, input_dim=4 if untied else 3, hidden_dim=3, activation=activation, untied=untied)
    return build_case(setting, trees, rng)


def _errors_with(monkeypatch, wrapper, **case):
    return errors_with_backward(monkeypatch, _case(**case), wrapper)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_unplanted_case_passes(untied):
    model, params, forest, options = _case(activation="sigmoid", untied=untied)
    assert_passes(check_gradients(model, params, forest, **options))


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_detects_children_swapped_in_the_backward(monkeypatch, untied):
    """(a) The backward routes the left child's error to the right child."""
    errors = _errors_with(monkeypatch, with_swapped_children, untied=untied)
    input_weights = "cell.W_leaf" if untied else "cell.W"
    assert errors["cell.W"] > TOLERANCE
    assert errors[f"{input_weights}.c1"] > TOLERANCE and errors["embedding"] > TOLERANCE
    assert errors["cell.W_peephole"] > TOLERANCE


def test_detects_dropped_peephole_path_to_the_children(monkeypatch):
    """(b) The backward drops c_x W_ci1, c_y W_ci2, ... : no error reaches a
    child's cell through the gates' peepholes (the forget path remains)."""

    def wrap(backward):
        return backward_while(backward, lambda params, forest: zeroed(params["W_peephole"]))

    errors = _errors_with(monkeypatch, wrap)
    for block in lstm_rnn.PEEPHOLE_BLOCKS:
        assert errors[f"cell.W_peephole.{block}"] > TOLERANCE


def test_detects_tanh_derivative_for_sigmoid(monkeypatch):
    """(c) The backward uses tanh' = 1 - g^2 where g is the sigmoid."""

    def wrap(backward):
        return backward_while(
            backward, lambda params, forest: replaced(backward.__self__, "code", activation_code("tanh"))
        )

    errors = _errors_with(monkeypatch, wrap, activation="sigmoid")
    assert errors["cell.W"] > TOLERANCE and errors["cell.W_co"] > TOLERANCE
    assert errors["cell.b.c"] > TOLERANCE


# ---------------------------------------------------------------------------
# what the cell accepts
# ---------------------------------------------------------------------------


def test_check_forest_rejects_what_it_cannot_compose():
    assert_composes_binary_trees_with_words_at_the_leaves(make_cell(MODEL, 3, 3))


def test_options_are_validated():
    with pytest.raises(ValueError, match="tied leaves"):
        make_cell(MODEL, 4, 3, untied=False)
    with pytest.raises(ValueError, match="activation must be one of"):
        make_cell(MODEL, 3, 3, activation="relu")
    assert make_cell(MODEL, 4, 3, untied=True).leaf_classifier_reads_input
    assert not make_cell(MODEL, 3, 3).leaf_classifier_reads_input


def test_untied_leaves_are_classified_from_their_word_vectors():
    assert_untied_leaves_are_classified_from_word_vectors(MODEL)


# ---------------------------------------------------------------------------
# kernels against their Python functions
# ---------------------------------------------------------------------------


def _kernel_cases():
    rng = np.random.default_rng(9)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1, 12, 4)]
    forest = token_forest(trees, shared_words=True)
    children = levels.binary_children(forest)
    d, n, leaves = 3, forest.n_nodes, forest.n_leaves
    start, stop = forest.level_ptr[2], forest.level_ptr[3]
    word_index = rng.integers(0, 6, size=leaves)
    gates = rng.uniform(0.05, 0.95, size=(n, 7 * d))
    state = rng.normal(size=(n + 3, 2 * d))
    normal = lambda *shape: rng.normal(size=shape)
    return [
        (
            lstm_rnn_kernels.gather_child_terms,
            lambda: (
                children,
                leaves,
                word_index,
                normal(6, 8 * d),
                normal(n + 3, 8 * d),
                lstm_rnn.TARGET,
                np.zeros((n, 7 * d)),
                start,
                stop,
            ),
        ),
        (
            lstm_rnn_kernels.output_deltas,
            lambda: (
                gates,
                np.tanh(normal(n, d)),
                normal(stop - start, 2 * d),
                normal(n, d),
                normal(n, d),
                np.zeros((n + 3, 7 * d)),
                start,
                stop,
            ),
        ),
        (
            lstm_rnn_kernels.route_to_children,
            lambda: (children, lstm_rnn.TARGET, normal(n + 3, 7 * d), np.zeros((n + 3, 8 * d)), start, stop),
        ),
    ] + [
        case
        for code in map(activation_code, ACTIVATION_NAMES)
        for case in [
            (
                lstm_rnn_kernels.cell_update,
                lambda code=code: (
                    code,
                    children,
                    normal(7 * d),
                    normal(d),
                    normal(n, 7 * d),
                    np.zeros((n, d)),
                    state.copy(),
                    start,
                    stop,
                ),
            ),
            (
                lstm_rnn_kernels.output_update,
                lambda code=code: (
                    code,
                    gates.copy(),
                    normal(stop - start, d),
                    state.copy(),
                    np.zeros((n, d)),
                    start,
                    stop,
                ),
            ),
            (
                lstm_rnn_kernels.cell_deltas,
                lambda code=code: (
                    code,
                    children,
                    gates,
                    rng.uniform(0.05, 0.95, size=(n, d)),
                    state,
                    rng.uniform(0.05, 0.95, size=(n, d)),
                    normal(n, d),
                    normal(n, d),
                    normal(stop - start, d),
                    np.zeros((n + 3, 7 * d)),
                    np.zeros((n, d)),
                    start,
                    stop,
                ),
            ),
        ]
    ]


@each_kernel(_kernel_cases())
def test_kernel_matches_its_python_function(kernel, make_args):
    assert_kernel_matches_python(kernel, make_args)


@pytest.mark.parametrize("untied", [False, True], ids=["tied", "untied"])
def test_error_terms_add_up_to_the_parameter_gradients(untied):
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: db_i = sum (delta_i1 + delta_i2), db_f = sum (delta_f1 + delta_f2),
    db_c = sum delta_u, db_o = sum delta_o and dW_co = sum c_p^T delta_o over
    the inner nodes; the forward's p term is its output there (a leaf is
    not composed: NaN)."""
    rng = np.random.default_rng(6)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (9, 1, 14)]
    d, d_x = 3, (4 if untied else 3)
    cell = make_cell(MODEL, d_x, d, activation="sigmoid", untied=untied)
    params = random_params(cell, rng)
    forest = token_forest(trees, shared_words=True)
    distinct, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, cache = cell.forward(params, forest, rng.normal(size=(len(distinct), d_x)), word_index)
    grads, _ = backward_gradients(cell, params, forest, cache, rng.normal(size=h.shape))
    forward, back = shown_terms(cell, forest, cache)
    inner, leaves = slice(forest.n_leaves, forest.n_nodes), slice(0, forest.n_leaves)
    total = {symbol: values[inner].sum(0) for symbol, values in back.items()}
    expected_b = np.concatenate(
        [
            total["delta_i1"] + total["delta_i2"],
            total["delta_f1"] + total["delta_f2"],
            total["delta_u"],
            total["delta_o"],
        ]
    )
    np.testing.assert_allclose(grads["b"], expected_b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads["W_co"], forward["c"][inner].T @ back["delta_o"][inner], rtol=1e-12, atol=1e-12)
    assert all(np.isnan(values[leaves]).all() for values in back.values())
    np.testing.assert_array_equal(forward["p"][inner], h[inner])
    assert np.isnan(forward["p"][leaves]).all() and not forward["c"][leaves].any()
