"""Optimisers: the dense prefix and the sparse embedding rows against a dense
NumPy reference written here; untouched rows and their state bit-for-bit
unchanged; the gradient buffer zeroed on what a step consumed; ``rows=None``
keeps the table fixed; the numba row kernels against their .py_func; no
subnormal weight or state left by a step; AdaGrad's per-coordinate step never
longer than lr."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from npcomp.training.optimizers import (
    OPTIMIZERS,
    AdaGrad,
    Adadelta,
    SGD,
    _adadelta_rows,
    _adagrad_rows,
    make_optimizer,
    smallest_normal,
)

DENSE, VOCAB, DIM = 13, 11, 4
SIZE = DENSE + VOCAB * DIM
LR, EMB_LR = 0.05, 0.1


# --------------------------------------------------------------------------
# dense reference rules, written from the papers' formulas
# --------------------------------------------------------------------------


def reference_adagrad(theta, g, state, lr):
    """Duchi et al.: G += g^2; theta -= lr g / (sqrt(G) + eps)."""
    state["sum_squares"] = state["sum_squares"] + g * g
    return theta - lr * g / (np.sqrt(state["sum_squares"]) + AdaGrad.epsilon)


def reference_adadelta(theta, g, state, lr):
    """Zeiler: accumulate E[g^2], step by RMS[dx]/RMS[g], accumulate E[dx^2]."""
    rho, eps = Adadelta.rho, Adadelta.epsilon
    state["mean_square_gradient"] = rho * state["mean_square_gradient"] + (1 - rho) * g * g
    rms_dx = np.sqrt(state["mean_square_step"] + eps)
    rms_g = np.sqrt(state["mean_square_gradient"] + eps)
    dx = -rms_dx / rms_g * g
    state["mean_square_step"] = rho * state["mean_square_step"] + (1 - rho) * dx * dx
    return theta + lr * dx


def reference_sgd(theta, g, state, lr):
    return theta - lr * g


REFERENCES = {"adagrad": reference_adagrad, "adadelta": reference_adadelta, "sgd": reference_sgd}
STATE_NAMES = {"adagrad": ("sum_squares",), "adadelta": ("mean_square_gradient", "mean_square_step"), "sgd": ()}


def new_optimizer(name, dtype=np.float64, lr=LR, emb_lr=EMB_LR, embedding_rule="same"):
    return make_optimizer(
        name,
        size=SIZE,
        dense_size=DENSE,
        embedding_offset=DENSE,
        embedding_dim=DIM,
        lr=lr,
        embedding_lr=emb_lr,
        dtype=dtype,
        embedding_rule=embedding_rule,
    )


def tolerance(dtype):
    # float64: the kernels and the reference do the same IEEE operations; float32: the
    # numba kernels multiply by a float64 learning rate before rounding to float32
    return dict(rtol=1e-13, atol=1e-15) if dtype == np.float64 else dict(rtol=2e-6, atol=1e-7)


# --------------------------------------------------------------------------
# sparse rows against the dense reference
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_step_matches_dense_reference(name, dtype, rng):
    optimizer = new_optimizer(name, dtype)
    assert optimizer.name == name and optimizer.state_names == STATE_NAMES[name]
    params = rng.normal(size=SIZE).astype(dtype)
    reference_dense = params[:DENSE].astype(np.float64)
    reference_table = params[DENSE:].reshape(VOCAB, DIM).astype(np.float64)
    dense_state = {s: np.zeros(DENSE) for s in optimizer.state_names}
    table_state = {s: np.zeros((VOCAB, DIM)) for s in optimizer.state_names}
    for step, rows in enumerate(
        [np.array([1, 4, 7]), np.array([0, 4, 10]), np.array([4]), np.array([], dtype=np.int64), np.array([2, 3, 7, 9])]
    ):
        grads = rng.normal(size=SIZE).astype(dtype)
        g = grads.astype(np.float64)
        table_before = params[DENSE:].reshape(VOCAB, DIM).copy()
        state_before = {s: v[DENSE:].reshape(VOCAB, DIM).copy() for s, v in optimizer.state.items()}
        grads_before = grads.copy()

        optimizer.step(params, grads, rows)

        reference_dense = REFERENCES[name](reference_dense, g[:DENSE], dense_state, LR)
        np.testing.assert_allclose(params[:DENSE], reference_dense, **tolerance(dtype))
        table_grad = g[DENSE:].reshape(VOCAB, DIM)
        row_state = {s: v[rows] for s, v in table_state.items()}
        updated = REFERENCES[name](reference_table[rows], table_grad[rows], row_state, EMB_LR)
        reference_table[rows] = updated
        for s in optimizer.state_names:
            table_state[s][rows] = row_state[s]
            np.testing.assert_allclose(optimizer.state[s][:DENSE], dense_state[s], **tolerance(dtype))
            np.testing.assert_allclose(
                optimizer.state[s][DENSE:].reshape(VOCAB, DIM), table_state[s], **tolerance(dtype)
            )
        table = params[DENSE:].reshape(VOCAB, DIM)
        np.testing.assert_allclose(table, reference_table, **tolerance(dtype))

        # untouched rows and their state: bit-for-bit unchanged
        untouched = np.setdiff1d(np.arange(VOCAB), rows)
        assert np.array_equal(table[untouched], table_before[untouched])
        for s, before in state_before.items():
            after = optimizer.state[s][DENSE:].reshape(VOCAB, DIM)
            assert np.array_equal(after[untouched], before[untouched])
        # the gradient: zero where consumed, untouched elsewhere
        assert np.all(grads[:DENSE] == 0.0)
        gradient = grads[DENSE:].reshape(VOCAB, DIM)
        assert np.all(gradient[rows] == 0.0)
        assert np.array_equal(gradient[untouched], grads_before[DENSE:].reshape(VOCAB, DIM)[untouched])
        assert params.dtype == dtype and all(v.dtype == dtype for v in optimizer.state.values())


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_rows_none_leaves_embedding_fixed(name, rng):
    optimizer = new_optimizer(name)
    params = rng.normal(size=SIZE)
    for _ in range(3):
        grads = rng.normal(size=SIZE)
        before, grads_before = params.copy(), grads.copy()
        optimizer.step(params, grads, None)
        assert np.array_equal(params[DENSE:], before[DENSE:])
        assert not np.array_equal(params[:DENSE], before[:DENSE])
        assert np.all(grads[:DENSE] == 0.0)
        assert np.array_equal(grads[DENSE:], grads_before[DENSE:])  # not consumed
        for value in optimizer.state.values():
            assert np.all(value[DENSE:] == 0.0)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_separate_learning_rates(name, rng):
    """Dense and embedding parts use lr and emb_lr: equal gradients, equal states,
    steps in the ratio of the learning rates (all three rules are linear in lr)."""
    optimizer = new_optimizer(name, lr=0.01, emb_lr=0.03)
    params = np.zeros(SIZE)
    grads = np.zeros(SIZE)
    grads[:DIM] = grads[DENSE : DENSE + DIM] = rng.normal(size=DIM)
    optimizer.step(params, grads, np.array([0]))
    np.testing.assert_allclose(params[DENSE : DENSE + DIM], 3 * params[:DIM], rtol=1e-12)
    assert np.all(params[:DIM] != 0.0)


@pytest.mark.parametrize("name", ["adagrad", "adadelta"])
def test_embedding_rows_by_sgd(name, rng):
    """embedding_rule="sgd": the rows take lr * g (Tai's code), the dense part
    the optimiser's rule, and the rows' optimiser state stays untouched."""
    optimizer = new_optimizer(name, lr=0.01, emb_lr=0.1, embedding_rule="sgd")
    params = rng.normal(size=SIZE)
    grads = rng.normal(size=SIZE)
    before, gradient = params.copy(), grads.copy()
    reference = new_optimizer(name, lr=0.01, emb_lr=0.1)
    dense_only = params.copy()
    reference.step(dense_only, grads.copy(), None)
    optimizer.step(params, grads, np.array([1, 3]))
    rows = [DENSE + row * DIM + q for row in (1, 3) for q in range(DIM)]
    np.testing.assert_allclose(params[rows], before[rows] - 0.1 * gradient[rows], rtol=1e-12)
    np.testing.assert_array_equal(params[:DENSE], dense_only[:DENSE])
    untouched = np.setdiff1d(np.arange(DENSE, SIZE), rows)
    np.testing.assert_array_equal(params[untouched], before[untouched])
    for state in optimizer.state.values():
        assert not np.any(state[DENSE:])
    assert not np.any(grads[rows]) and not np.any(grads[:DENSE])


def test_adagrad_epsilon_damps_small_gradients():
    """The default epsilon (1e-10) turns any gradient into a step of about lr on
    the first update; epsilon 1e-3 (Socher et al.) scales a 1e-4 gradient's step
    down by 11, exactly lr * g / (|g| + eps)."""
    steps = {}
    for epsilon in (None, 1e-3):
        optimizer = make_optimizer(
            "adagrad",
            size=SIZE,
            dense_size=DENSE,
            embedding_offset=DENSE,
            embedding_dim=DIM,
            lr=0.1,
            embedding_lr=0.1,
            dtype=np.float64,
            epsilon=epsilon,
        )
        params = np.zeros(SIZE)
        optimizer.step(params, np.full(SIZE, 1e-4), np.array([0]))
        steps[epsilon] = -params[0]
    np.testing.assert_allclose(steps[None], 0.1 * 1e-4 / (1e-4 + 1e-10), rtol=1e-12)
    np.testing.assert_allclose(steps[1e-3], 0.1 * 1e-4 / (1e-4 + 1e-3), rtol=1e-12)


def test_reset_makes_the_next_step_a_first_step(rng):
    """After reset() AdaGrad steps as on its first update (Socher's per-epoch reset)."""
    grads = rng.normal(size=SIZE)
    fresh, used = new_optimizer("adagrad"), new_optimizer("adagrad")
    start = rng.normal(size=SIZE)
    used.step(start.copy(), rng.normal(size=SIZE), np.array([0, 2]))
    used.reset()
    a, b = start.copy(), start.copy()
    fresh.step(a, grads.copy(), np.array([1]))
    used.step(b, grads.copy(), np.array([1]))
    np.testing.assert_array_equal(a, b)


def test_state_dict_round_trip(rng):
    first = new_optimizer("adadelta")
    params = rng.normal(size=SIZE)
    first.step(params, rng.normal(size=SIZE), np.array([2, 5]))
    second = new_optimizer("adadelta")
    second.load_state_dict(first.state_dict())
    assert set(first.state_dict()) == {"optimizer.mean_square_gradient", "optimizer.mean_square_step"}
    grads = rng.normal(size=SIZE)
    a, b = params.copy(), params.copy()
    first.step(a, grads.copy(), np.array([5, 8]))
    second.step(b, grads.copy(), np.array([5, 8]))
    assert np.array_equal(a, b)


def test_make_optimizer_rejects_unknown_names():
    assert isinstance(new_optimizer("sgd"), SGD)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        new_optimizer("adam")


# --------------------------------------------------------------------------
# numba row kernels against their Python originals
# --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adagrad_rows_kernel_matches_py_func(dtype, rng):
    table = rng.normal(size=(VOCAB, DIM)).astype(dtype)
    gradient = rng.normal(size=(VOCAB, DIM)).astype(dtype)
    sum_squares = rng.uniform(0, 2, size=(VOCAB, DIM)).astype(dtype)
    rows = np.array([0, 3, 4, 10], dtype=np.int64)
    jitted = [table.copy(), gradient.copy(), sum_squares.copy()]
    python = [table.copy(), gradient.copy(), sum_squares.copy()]
    smallest = smallest_normal(dtype)
    _adagrad_rows(*jitted, rows, EMB_LR, AdaGrad.epsilon, smallest)
    _adagrad_rows.py_func(*python, rows, EMB_LR, AdaGrad.epsilon, smallest)
    for a, b in zip(jitted, python):
        np.testing.assert_allclose(a, b, **tolerance(dtype))
    assert np.array_equal(jitted[1], gradient)  # the kernel reads the gradient only
    assert not np.array_equal(jitted[0][rows], table[rows])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adadelta_rows_kernel_matches_py_func(dtype, rng):
    table = rng.normal(size=(VOCAB, DIM)).astype(dtype)
    gradient = rng.normal(size=(VOCAB, DIM)).astype(dtype)
    mean_g = rng.uniform(0, 1, size=(VOCAB, DIM)).astype(dtype)
    mean_dx = rng.uniform(0, 1e-3, size=(VOCAB, DIM)).astype(dtype)
    rows = np.array([1, 2, 9], dtype=np.int64)
    jitted = [table.copy(), gradient.copy(), mean_g.copy(), mean_dx.copy()]
    python = [table.copy(), gradient.copy(), mean_g.copy(), mean_dx.copy()]
    smallest = smallest_normal(dtype)
    _adadelta_rows(*jitted, rows, 1.0, Adadelta.rho, Adadelta.epsilon, smallest)
    _adadelta_rows.py_func(*python, rows, 1.0, Adadelta.rho, Adadelta.epsilon, smallest)
    for a, b in zip(jitted, python):
        np.testing.assert_allclose(a, b, **tolerance(dtype))
    assert not np.array_equal(jitted[0][rows], table[rows])


# --------------------------------------------------------------------------
# no subnormal numbers: they would send every product with them down the
# CPU's slow path
# --------------------------------------------------------------------------


def subnormal(values):
    return (values != 0) & (np.abs(values) < smallest_normal(values.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_weight_decayed_by_l2_alone_ends_at_zero_not_subnormal(dtype):
    """With only the L2 term as its gradient, AdaGrad shrinks a weight by a
    near-constant factor a step; below the smallest normal number the factor
    can no longer move it, so without the flush it would stay subnormal."""
    optimizer = new_optimizer("adagrad", dtype=dtype, lr=0.01)
    params = np.full(SIZE, 0.05, dtype=dtype)
    for _ in range(2000 if dtype == np.float32 else 20000):
        optimizer.step(params, (1e-4 * params).astype(dtype), None)
        assert not subnormal(params).any()
        assert not subnormal(optimizer.state["sum_squares"]).any()
        if params[0] == 0:
            break
    assert np.all(params[:DENSE] == 0)
    assert np.all(params[DENSE:] == dtype(0.05))  # the fixed table is untouched


@pytest.mark.parametrize("name", ["adagrad", "adadelta"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_steps_flush_subnormal_results_and_keep_the_rest(name, dtype, rng):
    """Entries whose new weight or state would be subnormal become 0; every
    other entry is what the rule gives, NaN included."""
    tiny = smallest_normal(dtype)
    optimizer = new_optimizer(name, dtype=dtype)
    for state in optimizer.state.values():
        state[:] = rng.uniform(0.5, 1.0, size=SIZE)
        state[:3] = tiny / 4  # decays, or grows by g^2 = 0, into the subnormals
    params = rng.normal(size=SIZE).astype(dtype)
    params[3] = tiny / 3  # stays subnormal under a zero gradient
    params[4] = np.nan
    grads = rng.normal(size=SIZE).astype(dtype)
    grads[:4] = 0
    reference_state = {k: v.astype(np.float64) for k, v in optimizer.state.items()}
    expected = REFERENCES[name](params.astype(np.float64), grads.astype(np.float64), reference_state, LR)
    optimizer.step(params, grads, None)  # the dense prefix: the same kernel as the rows
    dense = slice(0, DENSE)
    assert not subnormal(params).any()
    for value in optimizer.state.values():
        assert not subnormal(value[dense]).any()
    assert params[3] == 0 and np.isnan(params[4])
    expected = expected[dense]
    keep = ~subnormal(expected.astype(dtype)) & ~np.isnan(expected)
    assert keep.sum() == DENSE - 2
    np.testing.assert_allclose(params[dense][keep], expected[keep], **tolerance(dtype))


# --------------------------------------------------------------------------
# AdaGrad's step is bounded by its learning rate
# --------------------------------------------------------------------------

gradient_values = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)


@given(
    hnp.arrays(np.float64, (4, SIZE), elements=gradient_values),
    st.lists(st.integers(0, VOCAB - 1), min_size=1, max_size=VOCAB, unique=True),
)
def test_adagrad_step_never_exceeds_lr(gradients, rows):
    optimizer = new_optimizer("adagrad")
    rows = np.array(sorted(rows))
    for g in gradients:
        params = np.zeros(SIZE)  # the step itself lands in params, unrounded
        optimizer.step(params, g.copy(), rows)
        step = np.abs(params)
        assert np.all(step[:DENSE] <= LR * (1 + 1e-12))
        assert np.all(step[DENSE:] <= EMB_LR * (1 + 1e-12))
    # the first step of a clearly non-zero gradient is lr * sign(g), up to eps
    first = new_optimizer("adagrad")
    params = np.zeros(SIZE)
    first.step(params, gradients[0].copy(), rows)
    big = np.abs(gradients[0][:DENSE]) > 1e-3
    np.testing.assert_allclose(-params[:DENSE][big], LR * np.sign(gradients[0][:DENSE][big]), rtol=1e-6)
