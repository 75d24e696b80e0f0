"""S-LSTM (Zhu et al. 2015): forward values against a node-by-node NumPy
reading of eqs. 1-7, gradient checks of every suite setting, random and deep
trees, planted bugs (each a way of misreading the printed eqs. 8-14), kernels
against their Python versions, and the structures the cell rejects."""

from __future__ import annotations

import numpy as np
import pytest

from cell_checks import (
    assert_gradients_pass,
    assert_kernel_matches_python,
    assert_matches_reference,
    assert_random_trees_pass,
    deep_branching_tree,
    each_kernel,
    given_random_trees,
    shown_terms,
    token_forest,
)
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.planted import BUGS, planted
from gradcheck.suite import VOCAB_SIZE, Setting, build_case, settings
from gradcheck.trees import random_binary_tree, random_dependency_tree, random_forest_trees
from npcomp.cells.kernels import levels
from npcomp.cells import make_cell, slstm
from npcomp.cells.reference import slstm as slstm_reference
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.data.readers.formats import branching_tree

SETTINGS = settings("slstm")
VOCABULARY = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))  # as build_case's


# ---------------------------------------------------------------------------
# forward against the printed equations, node by node
# ---------------------------------------------------------------------------


def _forward_case(input_dim, seed=4):
    rng = np.random.default_rng(seed)
    trees = random_forest_trees(rng, n_trees=4, max_leaves=12, unary_rate=0.3)
    setting = Setting("slstm", input_dim=input_dim, hidden_dim=3)
    model, params, forest, _ = build_case(setting, trees, rng)
    return trees, model, params, forest


@pytest.mark.parametrize("input_dim", [3, 4], ids=["d_x=d", "d_x=4 projected"])
def test_forward_matches_node_by_node_reference(input_dim):
    trees, model, params, forest = _forward_case(input_dim)
    assert np.any(forest.n_children == 1)  # unary nodes present
    words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    cell_params = params.prefixed("cell")
    h, _ = model.cell.forward(cell_params, forest, params["embedding"][words], word_index)
    assert_matches_reference(
        h,
        forest,
        trees,
        lambda k, tree: slstm_reference.forward(tree, params["embedding"][VOCABULARY.encode(tree.tokens)], cell_params)[
            "out"
        ],
    )


@pytest.mark.parametrize("input_dim", [3, 4], ids=["d_x=d", "d_x=4 projected"])
def test_float32_forward_and_backward_close_to_float64(input_dim):
    _, model, params, forest = _forward_case(input_dim)
    words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    results = {}
    for dtype in (np.float64, np.float32):
        cast = params.astype(dtype)
        cell_params = cast.prefixed("cell")
        h, cache = model.cell.forward(cell_params, forest, cast["embedding"][words], word_index)
        d_h = np.random.default_rng(1).normal(size=h.shape).astype(dtype)
        grads = cast.zeros_like()
        d_x = model.cell.backward(cell_params, forest, cache, d_h, grads.prefixed("cell"))
        assert h.dtype == dtype and d_x.dtype == dtype and cache.gates.dtype == dtype
        results[dtype] = (h, d_x, grads.flat[: model.dense_size])
    for wide, narrow in zip(results[np.float64], results[np.float32]):
        np.testing.assert_allclose(narrow, wide, rtol=1e-4, atol=1e-5)


def test_parameter_count_and_report_blocks():
    d = 5
    cell = make_cell("slstm", 7, d)
    shapes = dict(cell.parameter_shapes())
    assert sum(int(np.prod(s)) for s in shapes.values()) == 17 * d * d + 5 * d + 7 * d
    assert "W_leaf" not in dict(make_cell("slstm", d, d).parameter_shapes())
    slices = cell.report_slices()
    # 5 gates x 2 sides of W_h, 3 peephole gates x 2 sides of W_c, 5 biases
    assert len(slices) == 10 + 6 + 5
    covered = {name: np.zeros(shape, bool) for name, shape in shapes.items()}
    for block, index in slices.values():
        assert not covered[block][index].any()  # sub-blocks do not overlap
        covered[block][index] = True
    assert covered["W_h"].all() and covered["W_c"].all() and covered["b"].all()
    with pytest.raises(ValueError, match="takes no option"):
        make_cell("slstm", d, d, activation="tanh")


# ---------------------------------------------------------------------------
# gradient checks
# ---------------------------------------------------------------------------

# every suite setting is checked by tests/cells/test_gradients.py::test_suite_setting


@pytest.mark.parametrize(
    "setting",
    [
        Setting("slstm", input_dim=3),
        Setting("slstm", input_dim=4, supervision="root+leaves", dropout=0.5, l2=0.01),
    ],
    ids=lambda s: s.describe(),
)
@given_random_trees(max_trees=1)
def test_random_trees(setting, shapes):
    assert_random_trees_pass(setting, shapes)


@pytest.mark.parametrize("direction", ["left", "right"])
def test_deep_branching_trees(direction):
    """300 leaves, 300 levels, no recursion; the gradient reaches the deepest leaf.

    Nothing bounds an S-LSTM cell: along the spine each level adds up to 1 to
    |c| (f^L near 1), and here |c| reaches ~190.  The peephole weights W_c
    multiply c, so J is strongly curved in them and the fourth-order
    difference at the default step 1e-3 can be off by more than 1e-6
    (measured at d = 3: 1.8e-6 on W.ci.L, left-branching); a step of 3e-4
    resolves them to ~1e-7."""
    rng = np.random.default_rng(7)
    # d = 2 and five distinct words keep the 300-level check to ~70 parameters
    tree = deep_branching_tree(direction, rng, vocabulary=5)
    setting = Setting("slstm", input_dim=2, hidden_dim=2, supervision="root+leaves")
    assert assert_gradients_pass(setting, [tree], rng, step=3e-4).n_levels == 300


@pytest.mark.parametrize("input_dim", [3, 4], ids=["d_x=d", "d_x=4 projected"])
def test_forest_of_single_words(input_dim):
    """Only leaves: no level loop runs, the composition weights get exactly 0."""
    rng = np.random.default_rng(5)
    trees = [random_binary_tree(1, rng) for _ in range(3)]
    model, params, forest, options = build_case(Setting("slstm", input_dim=input_dim), trees, rng)
    assert forest.n_levels == 1
    errors = check_gradients(model, params, forest, **options)
    assert_passes(errors)
    grads = params.zeros_like()
    model.loss_and_gradient(params, forest, grads, **options)
    for name in ("W_h", "W_c", "W_co", "b"):
        assert not grads[f"cell.{name}"].any()


# ---------------------------------------------------------------------------
# planted bugs: misreadings of eqs. 8-14 that the checker must catch
# ---------------------------------------------------------------------------


def _errors_with(bug: str, input_dim=3):
    """Gradient-check errors when ``model.cell.backward`` runs with the planted
    bug ``bug`` of gradcheck/planted.py (one misreading of eqs. 8-14)."""
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1)]
    trees.append(branching_tree(["w1", "w2", "w3", "w4"], "right", root_label=2))
    model, params, forest, options = build_case(Setting("slstm", input_dim=input_dim), trees, rng)
    if bug is None:
        return check_gradients(model, params, forest, **options)
    with planted(BUGS[bug]):
        return check_gradients(model, params, forest, **options)


def test_unplanted_case_passes():
    assert_passes(_errors_with(None))


def test_detects_children_swapped_in_eqs_13_14():
    """(a) The left child gets eq. 14's terms (f^R, the W_c*^R peepholes) and
    the right child eq. 13's."""
    errors = _errors_with("slstm-children-swapped")
    assert errors["cell.W_c"] > TOLERANCE and errors["cell.W.ci.L"] > TOLERANCE
    assert errors["embedding"] > TOLERANCE


def test_printed_eq_14_with_parent_eps_h_fails():
    """(b) Eq. 14 as printed: a right child's own term eps^h o g'(c) uses its
    parent's eps_{t+1}^h instead of its own eps_t^h.  Backs erratum 1."""
    errors = _errors_with("slstm-printed-eq-14")
    assert errors["cell.W_h"] > TOLERANCE and errors["cell.b.i"] > TOLERANCE


def test_detects_missing_output_peephole_term():
    """(c) eps_c without the (W_co)^T delta_t^o term of eqs. 13/14."""
    errors = _errors_with("slstm-output-peephole-dropped")
    assert errors["cell.b.i"] > TOLERANCE and errors["cell.W.cfl.L"] > TOLERANCE


def test_printed_equations_give_children_no_eps_h_fails():
    """Eqs. 8-14 route only eps_c to the children: without the eps_h they get
    from the parent's five deltas the check fails.  Backs erratum 2."""
    errors = _errors_with("slstm-children-get-no-eps-h")
    assert errors["cell.W.hi.L"] > TOLERANCE and errors["embedding"] > TOLERANCE


def test_g_prime_of_c_read_as_derivative_at_c_fails():
    """g'(c_t) must be 1 - tanh(c_t)^2; the notation "over activated vectors"
    read literally at c_t (1 - c_t^2) fails.  Backs erratum 3."""
    assert _errors_with("slstm-g-prime-at-c")["cell.b.i"] > TOLERANCE


def test_missing_x_delta_fails():
    """delta_x = eps_c * i * (1 - tanh(x)^2) is not printed; dropping it fails
    on the x blocks.  Backs erratum 2."""
    errors = _errors_with("slstm-x-delta-dropped")
    assert errors["cell.b.x"] > TOLERANCE and errors["cell.W.hx.R"] > TOLERANCE


def test_detects_eq_13_f_left_replaced_by_f_right_for_left_child():
    """A subtler slip of the same kind: eq. 13 with f^R (only the forget gate
    swapped, peepholes right)."""
    assert _errors_with("slstm-f-right-for-left")["cell.W_c"] > TOLERANCE


def test_detects_left_peephole_share_dropped():
    """Eq. 13 without its three peephole terms: these trees have inner left
    children, whose c reaches W_c.^L, so the check fails there (on trees
    whose every left child is a leaf it cannot: tests/study/test_state_checks.py)."""
    errors = _errors_with("slstm-left-peephole-dropped")
    assert errors["cell.W.cfl.L"] > TOLERANCE and errors["cell.b.i"] > TOLERANCE


# ---------------------------------------------------------------------------
# kernels and structures
# ---------------------------------------------------------------------------


def _kernel_cases():
    rng = np.random.default_rng(9)
    trees = [random_binary_tree(n, rng, unary_rate=0.3) for n in (5, 8, 1)]
    forest = token_forest(trees, shared_words=True)
    children = levels.binary_children(forest)
    d, n, pad = 3, forest.n_nodes, slstm.ROW_PAD
    start, stop = int(forest.level_ptr[1]), int(forest.level_ptr[-1])
    gates = rng.uniform(0.05, 0.95, size=(n + pad, 5 * d))
    c = rng.normal(size=(n, d))
    return [
        (
            slstm._gather_children,
            lambda: (children, rng.normal(size=(n, d)), c, np.zeros((n + pad, 4 * d)), start, stop),
        ),
        (slstm._cell_update, lambda: (children, gates, c.copy(), start, stop)),
        (
            slstm._output_gate_deltas,
            lambda: (gates, np.tanh(c), rng.normal(size=(n, d)), np.zeros((n + pad, 5 * d)), start, stop),
        ),
        (
            slstm._cell_deltas,
            lambda: (
                children,
                gates,
                c,
                np.tanh(c),
                rng.normal(size=(n, d)),
                rng.normal(size=(n, d)),
                rng.normal(size=(n, d)),
                np.zeros((n + pad, 5 * d)),
                start,
                stop,
            ),
        ),
        (
            slstm._route_to_children,
            lambda: (
                children,
                gates,
                rng.normal(size=(n, d)),
                rng.normal(size=(n + pad, 4 * d)),
                rng.normal(size=(n, d)),
                start,
                stop,
            ),
        ),
    ]


@each_kernel(_kernel_cases())
def test_kernel_matches_python_version(kernel, make_args):
    assert_kernel_matches_python(kernel, make_args, rtol=1e-13, atol=1e-15)


def _forest(trees):
    return token_forest(trees, shared_words=True)


def test_check_forest_rejects_what_the_cell_cannot_compose():
    cell = make_cell("slstm", 3, 3)
    rng = np.random.default_rng(2)
    cell.check_forest(_forest([random_binary_tree(9, rng, unary_rate=0.3)]))
    wide = random_dependency_tree(6, rng, max_children=3)
    with pytest.raises(ValueError, match="binary trees: a node has 3 children"):
        cell.check_forest(_forest([wide]))
    # words at inner nodes (a dependency tree with at most two children)
    with pytest.raises(ValueError, match="reads words at the leaves only"):
        cell.check_forest(_forest([random_dependency_tree(5, rng, max_children=2)]))
    forest = _forest([random_binary_tree(4, rng)])
    forest.word[0] = -1  # a leaf without a word
    with pytest.raises(ValueError, match="every leaf needs a word"):
        cell.check_forest(forest)


@pytest.mark.parametrize("input_dim", [3, 4], ids=["d_x=d", "d_x=4 projected"])
def test_error_terms_add_up_to_the_parameter_gradients(input_dim):
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: db = sum over the inner nodes of [delta_i | delta_fl | delta_fr |
    delta_x | delta_o], dW_co = sum c_t^T delta_o, and a word's eps_h (the
    returned d_x, or its W_leaf image) is the sum of eps_h over its leaves;
    the forward's h term is its output."""
    _, model, params, forest = _forward_case(input_dim)
    cell, cell_params = model.cell, params.prefixed("cell")
    words, word_index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    h, cache = cell.forward(cell_params, forest, params["embedding"][words], word_index)
    grads = params.zeros_like().prefixed("cell")
    d_x = cell.backward(cell_params, forest, cache, np.random.default_rng(2).normal(size=h.shape), grads)
    forward, back = shown_terms(cell, forest, cache)
    inner = slice(forest.n_leaves, forest.n_nodes)
    deltas = np.hstack([back[f"delta_{gate}"][inner] for gate in slstm.GATES])
    assert not np.isnan(deltas).any() and np.isnan(back["delta_o"][: forest.n_leaves]).all()
    np.testing.assert_allclose(grads["b"], deltas.sum(0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grads["W_co"], forward["c"][inner].T @ back["delta_o"][inner], rtol=1e-12, atol=1e-12)
    eps_h_words = np.zeros((len(words), 3))
    np.add.at(eps_h_words, word_index, back["eps_h"][: forest.n_leaves])
    if cell.projected:
        eps_h_words = eps_h_words @ cell_params["W_leaf"].T
    np.testing.assert_allclose(d_x, eps_h_words, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(forward["h"], h)
