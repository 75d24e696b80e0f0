"""The matrix-space model (Irsoy & Cardie eqs. 1-2; Yessenalina & Cardie):
forward against reference.matrix_space (the product of word matrices),
gradient checks of h_0 and the word matrices, a planted bug, a 300-word
sentence from the near-identity initial matrices, the kernels, and what the
cell rejects."""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest

import npcomp.data.datasets.synthetic
from cell_checks import assert_kernel_matches_python, backward_gradients, each_kernel, shown_terms
from chain_checks import LENGTHS, chain_case, chain_trees
from conftest import synthetic_of_size
from gradcheck.check import TOLERANCE, assert_passes, check_gradients
from gradcheck.suite import Setting, build_case
from npcomp.cells import make_cell, matrix_space
from npcomp.cells.reference import matrix_space as matrix_space_reference
from npcomp.data.readers.formats import chain_tree
from npcomp.forest import build_forest

MODEL = "matrix-space"


@pytest.mark.parametrize("d", [2, 3])
def test_forward_is_eqs_1_and_2(d):
    rng = np.random.default_rng(1)
    cell = make_cell(MODEL, d * d, d)
    h0 = rng.normal(size=d)
    forest, vectors, x, index, nodes = chain_case(LENGTHS, d * d, rng)
    scale = 0.6  # keeps a 9-word product of N(0, 1) matrices near 1
    h, _ = cell.forward({"h0": h0}, forest, scale * x, index)
    for k in range(len(LENGTHS)):
        matrices = (scale * vectors[k]).reshape(-1, d, d)  # M_w row-major in the embedding
        expected = matrix_space_reference.forward(scale * vectors[k], {"h0": h0})["out"]
        np.testing.assert_allclose(h[nodes[k]], expected, rtol=0, atol=1e-12)
        # eq. 1 first, then eq. 2: the root holds h_0^T M(s)
        product = reduce(np.matmul, matrices)
        np.testing.assert_allclose(h[nodes[k][-1]], h0 @ product, rtol=0, atol=1e-12)


def test_float32_forward_is_close_to_float64():
    rng = np.random.default_rng(2)
    cell = make_cell(MODEL, 9, 3)
    forest, _, x, index, _ = chain_case(LENGTHS, 9, rng)
    h0 = rng.normal(size=3)
    h64, _ = cell.forward({"h0": h0}, forest, 0.6 * x, index)
    h32, _ = cell.forward({"h0": h0.astype(np.float32)}, forest, (0.6 * x).astype(np.float32), index)
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-5, atol=1e-6)


def test_parameters_and_dimensions():
    cell = make_cell(MODEL, 9, 3)
    assert cell.parameter_shapes() == [("h0", (3,))] and cell.output_dim == 3
    assert cell.recurrent_widths() == []  # no recurrent weights to drop
    with pytest.raises(ValueError, match="d\\^2 = 9"):
        make_cell(MODEL, 8, 3)


def test_initial_embedding_is_near_identity():
    d, vocabulary = 4, 50
    cell = make_cell(MODEL, d * d, d)
    table = cell.initial_embedding(vocabulary, np.random.default_rng(3))
    assert table.shape == (vocabulary, d * d)
    noise = table.reshape(vocabulary, d, d) - np.eye(d)
    assert np.abs(noise).max() <= 0.1 / np.sqrt(d) and np.abs(noise).max() > 0.05 / np.sqrt(d)


# ---------------------------------------------------------------------------
# gradient checks through the model
# ---------------------------------------------------------------------------


def model_case(d, seed, supervision="all"):
    rng = np.random.default_rng(seed)
    setting = Setting(MODEL, input_dim=d * d, hidden_dim=d, trees="chain", supervision=supervision)
    return build_case(setting, chain_trees(rng), rng)


@pytest.mark.parametrize("d,supervision", [(2, "all"), (2, "root"), (3, "all")])
def test_gradients(d, supervision):
    model, params, forest, options = model_case(d, seed=1, supervision=supervision)
    assert_passes(check_gradients(model, params, forest, **options))


def test_detects_word_matrix_gradient_transposed(monkeypatch):
    """dM_w returned transposed (the matrices read as acting column-wise,
    h_t = M_{w_t} h_{t-1}, in the backward only): the word gradients fail."""
    model, params, forest, options = model_case(2, seed=2)
    assert_passes(check_gradients(model, params, forest, **options))
    backward = model.cell.backward

    def buggy(params_, forest_, cache, d_h, grads):
        d_x = backward(params_, forest_, cache, d_h, grads)
        return d_x.reshape(-1, 2, 2).transpose(0, 2, 1).reshape(d_x.shape)

    monkeypatch.setattr(model.cell, "backward", buggy)
    errors = check_gradients(model, params, forest, **options)
    assert errors["embedding"] > TOLERANCE and errors["cell.h0"] <= TOLERANCE


# ---------------------------------------------------------------------------
# long sentences
# ---------------------------------------------------------------------------


def test_long_chain_stays_finite():
    """A 300-word sentence (300 levels, no recursion) from initial_embedding's
    near-identity matrices: log|h| drifts by a random walk of spread about
    0.058 sqrt(T / d) = 0.58 here (module docstring), so |h| stays within a
    factor e^3 (5 spreads), and the gradient reaches the first word.  From a
    fan-in draw U(+-1/sqrt(d)) instead, the product collapses."""
    rng = np.random.default_rng(4)
    d, vocabulary, length = 3, 1000, 300
    cell = make_cell(MODEL, d * d, d)
    table = cell.initial_embedding(vocabulary, rng)
    params = {"h0": np.zeros(d)}
    cell.initialise(params, rng)
    words = [rng.integers(0, vocabulary, size=n).astype(np.int32) for n in (length, 7, 1)]
    forest = build_forest([chain_tree([f"w{k}" for k in w]) for w in words], words)
    assert forest.n_levels == length
    distinct, index = np.unique(forest.word, return_inverse=True)
    h, cache = cell.forward(params, forest, table[distinct], index)
    root = forest.root[0]
    assert np.all(np.isfinite(h))
    ratio = np.linalg.norm(h[root]) / np.linalg.norm(params["h0"])
    assert abs(np.log(ratio)) < 3.0
    grads = {"h0": np.zeros(d)}
    d_h = np.zeros_like(h)
    d_h[root] = rng.normal(size=d)
    d_x = cell.backward(params, forest, cache, d_h, grads)
    first_word = np.flatnonzero((forest.tree == 0) & (forest.n_children == 0))[0]
    assert np.all(np.isfinite(d_x)) and np.all(np.isfinite(grads["h0"]))
    assert np.abs(d_x[index[first_word]]).max() > 1e-3

    fan_in = rng.uniform(-1 / np.sqrt(d), 1 / np.sqrt(d), size=table.shape)
    collapsed, _ = cell.forward(params, forest, fan_in[distinct], index)
    assert np.linalg.norm(collapsed[root]) < 1e-10 * np.linalg.norm(params["h0"])


# ---------------------------------------------------------------------------
# kernels, what the cell accepts
# ---------------------------------------------------------------------------


def _kernel_cases():
    rng = np.random.default_rng(5)
    forest, _, x, index, _ = chain_case(LENGTHS, 9, rng)
    n, d, n_words = forest.n_nodes, 3, x.shape[0]
    before = np.ascontiguousarray(forest.children[:, 0])
    return [
        (
            matrix_space._multiply_rows,
            lambda: (
                before,
                rng.normal(size=d),
                rng.normal(size=(n_words, d, d)),
                index,
                np.zeros((n, d)),
                rng.normal(size=(n, d)),
                0,
                n,
            ),
        ),
        (
            matrix_space._route_to_previous,
            lambda: (before, rng.normal(size=(n_words, d, d)), index, rng.normal(size=(n, d)), np.zeros((n, d)), 0, n),
        ),
    ]


@each_kernel(_kernel_cases())
def test_kernel_matches_its_python_function(kernel, make_args):
    assert_kernel_matches_python(kernel, make_args)


def test_rejects_masks_and_trees():
    rng = np.random.default_rng(6)
    cell = make_cell(MODEL, 4, 2)
    forest, _, x, index, _ = chain_case((2, 3), 4, rng)
    with pytest.raises(ValueError, match="recurrent dropout"):
        cell.forward({"h0": np.ones(2)}, forest, x, index, recurrent_masks=[np.ones((forest.n_trees, 2))])
    from gradcheck.suite import random_trees

    setting = Setting(MODEL, input_dim=4, hidden_dim=2)
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    with pytest.raises(ValueError, match="structure .chain."):
        check_gradients(model, params, forest, **options)


@pytest.mark.parametrize("dtype,overflow_word", [(np.float32, 128), (np.float64, 1024)])
def test_a_product_beyond_the_float_range_is_refused_naming_the_sentence(dtype, overflow_word):
    """Word matrices 2 I double |h| at every word: the exact state of a
    2,000-word sentence is 2^2000 |h_0|, beyond float32 (2^128) and float64
    (2^1024).  The cell says so, for the right sentence and word, instead of
    returning inf and NaN; shorter sentences in the forest were fine."""
    d = 3
    cell = make_cell(MODEL, d * d, d)
    words = [np.zeros(5, dtype=np.int32), np.zeros(2000, dtype=np.int32)]
    forest = build_forest([chain_tree(["w"] * len(w)) for w in words], words)
    x = (2.0 * np.eye(d)).reshape(1, d * d).astype(dtype)
    index = np.zeros(forest.n_nodes, dtype=np.int64)
    with pytest.raises(matrix_space.StateOverflow) as caught:
        cell.forward({"h0": np.ones(d, dtype=dtype)}, forest, x, index)
    assert caught.value.tree == 1
    assert f"this 2000-word sentence leaves the {np.dtype(dtype)} range" in str(caught.value)
    assert f"at word {overflow_word}," in str(caught.value)
    # non-finite parameters are the training's fault, not the sentence's: no StateOverflow
    h, _ = cell.forward({"h0": np.full(d, np.nan, dtype=dtype)}, forest, x, index)
    assert np.isnan(h).all()


def test_predict_on_a_sentence_beyond_the_float_range(tmp_path, capsys, monkeypatch):
    """`npcomp predict` of a 500-word sentence whose product overflows: exit 1,
    the line named, no NaN printed (it used to print [NaN, ...] with exit 0).
    The run is trained on a small synthetic treebank: only its model file's
    format matters here, and every word matrix is set below."""
    import io
    import sys

    from npcomp.cli import main

    monkeypatch.setattr(npcomp.data.datasets.synthetic, "synthetic_splits", synthetic_of_size((60, 30, 30)))
    run_dir = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--model",
                MODEL,
                "--dim",
                "3",
                "--epochs",
                "1",
                "--quiet",
                "--no-baseline",
                "--out",
                str(run_dir),
            ]
        )
        == 0
    )
    path = run_dir / "model.npz"
    with np.load(path) as archive:
        arrays = {key: archive[key] for key in archive.files}
    arrays["param.embedding"][:] = (4.0 * np.eye(3)).reshape(9)
    np.savez(path, **arrays)
    monkeypatch.setattr(sys, "stdin", io.StringIO("short one\n" + " ".join(["good"] * 500) + "\n"))
    capsys.readouterr()
    assert main(["predict", "--run", str(run_dir)]) == 1
    captured = capsys.readouterr()
    assert "NaN" not in captured.out and captured.out == ""
    assert (
        "<stdin>:2: matrix-space: the product of the word matrices of this 500-word "
        "sentence leaves the float32 range" in captured.err
    )


# ---------------------------------------------------------------------------
# what npcomp explain shows: the cell's own terms
# ---------------------------------------------------------------------------


def test_error_terms_add_up_to_the_parameter_gradients():
    """The terms ``backward_terms`` shows are the ones the gradients are made
    of: dh_0 = sum of eps_h_{t-1} over first words, dM_w = sum over the steps
    reading w of h_{t-1}^T eps_h_t, and eps_h_{t-1} at step t is eps_h_t M^T,
    what h_{t-1}'s eps_h received on top of the head's; forward: M per node
    (d, d), h_{t-1} = h_0 at first words, h the output."""
    rng = np.random.default_rng(14)
    d = 3
    cell = make_cell(MODEL, d * d, d)
    params = {"h0": rng.normal(size=d)}
    forest, vectors, x, index, nodes = chain_case(LENGTHS, d * d, rng)
    x = 0.6 * x
    h, cache = cell.forward(params, forest, x, index)
    head = rng.normal(size=h.shape)
    grads, d_x = backward_gradients(cell, params, forest, cache, head)
    forward, terms = shown_terms(cell, forest, cache)
    eps_h, shares = terms["eps_h"], terms["eps_h_{t-1}"]
    matrices, previous = forward["M"], forward["h_{t-1}"]
    assert matrices.shape == (forest.n_nodes, d, d)
    np.testing.assert_array_equal(matrices, x[index].reshape(-1, d, d))
    for k in range(len(LENGTHS)):
        expected = matrix_space_reference.forward(0.6 * vectors[k], params)
        np.testing.assert_array_equal(matrices[nodes[k]], expected["M"])
        np.testing.assert_allclose(forward["h"][nodes[k]], expected["h"], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(forward["h"], h)
    before = forest.children[:, 0]
    first, later = np.flatnonzero(before < 0), np.flatnonzero(before >= 0)
    np.testing.assert_array_equal(previous[first], np.broadcast_to(params["h0"], (len(first), d)))
    np.testing.assert_allclose(shares, np.einsum("ti,tki->tk", eps_h, matrices), rtol=1e-12)
    np.testing.assert_allclose(grads["h0"], shares[first].sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(eps_h[before[later]] - head[before[later]], shares[later], rtol=1e-12, atol=1e-14)
    per_word = np.zeros((x.shape[0], d, d))
    np.add.at(per_word, index, np.einsum("tk,ti->tki", previous, eps_h))
    np.testing.assert_allclose(d_x, per_word.reshape(-1, d * d), rtol=1e-12, atol=1e-14)
