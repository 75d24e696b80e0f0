"""The output heads: the ordinal head's targets, loss, monotone decoding and a
planted bug; dropout masks on word vectors (one per sequence); the similarity
head and the pair classifier (eq. 15 of Tai et al.) with their checks."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.check import assert_passes, check_gradients
from gradcheck.suite import Setting, build_case, random_trees
from npcomp.heads import OrdinalClassifier, PairClassifierHead, SimilarityHead, SoftmaxClassifier, make_head
from npcomp.models import DropoutMasks, layer_rates


def test_ordinal_targets_are_cumulative():
    head = OrdinalClassifier(3, 5)
    r = head.targets(np.array([0, 2, 4]), np.float64)
    np.testing.assert_array_equal(r, [[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]])


@pytest.mark.parametrize(
    "outputs, label",
    [
        ([0.9, 0.2, 0.8, 0.1], 1),  # Irsoy's example: [1, 0, 1, 0] -> [1, 0, 0, 0]
        ([0.9, 0.6, 0.7, 0.5], 4),  # 0.5 counts as 1
        ([0.4, 0.9, 0.9, 0.9], 0),
        ([0.9, 0.9, 0.3, 0.9], 2),
    ],
)
def test_ordinal_decoding_is_monotone(outputs, label):
    assert OrdinalClassifier.decode(np.array([outputs]))[0] == label


def test_ordinal_loss_is_binary_cross_entropy():
    rng = np.random.default_rng(0)
    head = OrdinalClassifier(4, 5)
    params = {name: rng.normal(size=shape) for name, shape in head.parameter_shapes()}
    h, labels = rng.normal(size=(6, 4)) * 3, rng.integers(0, 5, size=6)
    loss, _ = head.loss(params, h, labels)
    q = 1 / (1 + np.exp(-(h @ params["W"] + params["b"])))
    r = head.targets(labels, np.float64)
    assert loss == pytest.approx(-np.sum(r * np.log(q) + (1 - r) * np.log(1 - q)), rel=1e-12)
    # far in the tails the stable form stays finite where log(sigma) would not
    loss, _ = head.loss({"W": np.zeros((4, 4)), "b": np.full(4, 800.0)}, h, np.zeros(6, int))
    assert loss == pytest.approx(6 * 4 * 800.0)


def test_make_head_names_the_choices():
    assert isinstance(make_head("softmax", 3, 5), SoftmaxClassifier)
    with pytest.raises(ValueError, match="ordinal"):
        make_head("hinge", 3, 5)


def test_detects_ordinal_targets_off_by_one(monkeypatch):
    """Backward codes class y as r_k = 1 for k <= y (one 1 too many): the check fails."""
    rng = np.random.default_rng(2)
    setting = Setting("lstm", trees="chain", head="ordinal")
    model, params, forest, options = build_case(setting, random_trees(setting, rng), rng)
    assert_passes(check_gradients(model, params, forest, **options))
    forward_targets = OrdinalClassifier.targets
    loss = OrdinalClassifier.loss

    def loss_with_right_targets(self, *args, **kwargs):
        monkeypatch.setattr(OrdinalClassifier, "targets", forward_targets)
        try:
            return loss(self, *args, **kwargs)
        finally:
            monkeypatch.setattr(OrdinalClassifier, "targets", wrong_targets)

    def wrong_targets(self, labels, dtype):
        return (labels[:, None] >= np.arange(self.n_classes - 1)[None, :]).astype(dtype)

    monkeypatch.setattr(OrdinalClassifier, "targets", wrong_targets)
    monkeypatch.setattr(OrdinalClassifier, "loss", loss_with_right_targets)
    errors = check_gradients(model, params, forest, **options)
    assert errors["ordinal.b"] > 1e-3


def test_layer_rates_repeat_the_last():
    assert layer_rates(0.3, 3) == [0.3, 0.3, 0.3]
    assert layer_rates([0.25, 0.3], 4) == [0.25, 0.3, 0.3, 0.3]
    assert layer_rates([], 2) == [0.0, 0.0]


def test_embedding_mask_is_one_per_sequence():
    """A sequence whose word-vector mask is 0 computes as if its words were
    zero vectors; a mask of 2 everywhere is the table doubled."""
    rng = np.random.default_rng(5)
    setting = Setting("lstm", trees="chain", supervision="root")
    model, params, forest, _ = build_case(setting, random_trees(setting, rng), rng)
    d_x = model.embedding_dim
    none = DropoutMasks([None])

    def root_loss(masks, table=None):
        if table is not None:
            params["embedding"][...] = table
        return model.loss_and_gradient(params, forest, params.zeros_like(), masks=masks)[0]

    table = params["embedding"].copy()
    doubled = DropoutMasks([None], np.full((forest.n_trees, d_x), 2.0))
    assert root_loss(doubled) == pytest.approx(root_loss(none, 2.0 * table), rel=1e-12)
    params["embedding"][...] = table
    drop_first = np.ones((forest.n_trees, d_x))
    drop_first[0] = 0.0
    masked = root_loss(DropoutMasks([None], drop_first))
    # the first sequence's words read zero vectors: give them rows of their own
    # (other sequences may share its words), zeroed
    words = forest.word.copy()
    first = forest.tree == 0
    words[first] = len(table) + np.arange(first.sum())
    widened = np.concatenate([table, np.zeros((first.sum(), d_x))])
    assert masked == pytest.approx(_loss_with_words(model, params, forest, words, widened), rel=1e-12)


def _loss_with_words(model, params, forest, words, table):
    """The loss of ``forest`` reading ``words`` from ``table`` (a larger vocabulary)."""
    from dataclasses import replace

    from npcomp.models import TreeModel

    wide = TreeModel(model.cell, model.n_classes, table.shape[0], model.embedding_dim)
    wide_params = wide.new_parameters(np.random.default_rng(0), table, dtype=np.float64)
    wide_params.flat[: wide.dense_size] = params.flat[: model.dense_size]
    return wide.loss_and_gradient(wide_params, replace(forest, word=words), wide_params.zeros_like())[0]


# ---------------------------------------------------------------------------
# the similarity head (Tai et al. eq. 15) and its KL objective
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("score", [1.0, 1.25, 2.0, 3.6, 4.99, 5.0])
def test_sparse_target_has_the_gold_expectation(score):
    head = SimilarityHead(4, 3, 5)
    p = head.target_distribution(np.array([score]), np.float64)[0]
    assert p.sum() == pytest.approx(1.0)
    assert p @ head.ratings() == pytest.approx(score)  # r^T p = y
    support = np.flatnonzero(p)
    assert 1 <= support.size <= 2 and np.ptp(support) <= 1  # floor(y) and floor(y) + 1
    assert p.min() >= 0.0


def test_sparse_target_of_tai_example():
    """y = 3.6: 0.4 on rating 3, 0.6 on rating 4 (Tai Sec. 4.2)."""
    p = SimilarityHead(4).target_distribution(np.array([3.6]), np.float64)[0]
    np.testing.assert_allclose(p, [0, 0, 0.4, 0.6, 0], atol=1e-12)


@pytest.mark.parametrize("score", [0.99, 5.01, np.nan])
def test_scores_outside_the_scale_are_errors(score):
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        SimilarityHead(4).target_distribution(np.array([3.0, score]), np.float64)


def _head_case(rng, m=6, d=4, hidden=3):
    head = SimilarityHead(d, hidden, 5)
    params = {name: rng.normal(0, 0.7, shape) for name, shape in head.parameter_shapes()}
    return head, params, rng.normal(0, 1, (m, d)), rng.normal(0, 1, (m, d))


def test_similarity_forward_is_eq_15(rng):
    """Column-vector eq. 15 written out for one pair at a time."""
    head, params, h_left, h_right = _head_case(rng)
    predicted = head.predict(params, h_left, h_right)
    for k in range(h_left.shape[0]):
        h_times = h_left[k] * h_right[k]
        h_plus = np.abs(h_left[k] - h_right[k])
        h_s = 1 / (1 + np.exp(-(params["W_times"].T @ h_times + params["W_plus"].T @ h_plus + params["b_h"])))
        logits = params["W_p"].T @ h_s + params["b_p"]
        p_hat = np.exp(logits) / np.exp(logits).sum()
        assert predicted[k] == pytest.approx(np.arange(1, 6) @ p_hat, rel=1e-12)
    assert np.all((predicted >= 1) & (predicted <= 5))


def test_similarity_is_symmetric_in_the_pair(rng):
    head, params, h_left, h_right = _head_case(rng)
    np.testing.assert_allclose(head.predict(params, h_left, h_right), head.predict(params, h_right, h_left), rtol=1e-13)


def test_kl_loss_is_the_divergence(rng):
    head, params, h_left, h_right = _head_case(rng)
    scores = np.array([1.0, 2.5, 3.6, 4.2, 5.0, 1.7])
    loss, _ = head.loss(params, h_left, h_right, scores)
    p = head.target_distribution(scores, np.float64)
    q = head.outputs(params, h_left, h_right)
    expected = sum(p[k, i] * np.log(p[k, i] / q[k, i]) for k in range(6) for i in range(5) if p[k, i] > 0)
    assert loss == pytest.approx(expected, rel=1e-12)
    assert loss > 0


def test_similarity_backward_matches_finite_differences_of_the_inputs(rng):
    """dJ/dh_L and dJ/dh_R themselves (the encoders' share), not just the weights."""
    head, params, h_left, h_right = _head_case(rng)
    scores = np.array([1.0, 2.5, 3.6, 4.2, 5.0, 1.7])
    _, cache = head.loss(params, h_left, h_right, scores)
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_left, d_right = head.backward(params, cache, 1.0, grads)
    step = 1e-6
    for analytic, side in ((d_left, 0), (d_right, 1)):
        numeric = np.zeros_like(analytic)
        for index in np.ndindex(*analytic.shape):
            shifted = []
            for sign in (1, -1):
                pair = [h_left.copy(), h_right.copy()]
                pair[side][index] += sign * step
                shifted.append(head.loss(params, *pair, scores)[0])
            numeric[index] = (shifted[0] - shifted[1]) / (2 * step)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def _pair_case(model="treelstm-childsum", trees="dependency"):
    rng = np.random.default_rng(4)
    setting = Setting(model, head="similarity", trees=trees, supervision="root")
    return build_case(setting, random_trees(setting, rng), rng)


@pytest.mark.parametrize("model, trees", [("treelstm-childsum", "dependency"), ("lstm", "chain")])
def test_pair_model_check_passes(model, trees):
    model_, params, batch, options = _pair_case(model, trees)
    assert_passes(check_gradients(model_, params, batch, **options))


@pytest.mark.parametrize("bug", ["sides swapped", "right encoder cut off", "scale twice"])
def test_similarity_planted_bugs_fail(bug, monkeypatch):
    """Wrong head backwards the checker must catch: dJ/dh_L and dJ/dh_R
    exchanged (the |h_L - h_R| term's sign flips), no gradient into the
    second sentence's encoder, the 1/m average applied twice."""
    model_, params, batch, options = _pair_case()
    original = model_.head.backward

    def planted(head_params, cache, scale, grads):
        if bug == "scale twice":
            return original(head_params, cache, scale * scale, grads)
        d_left, d_right = original(head_params, cache, scale, grads)
        return (d_right, d_left) if bug == "sides swapped" else (d_left, 0.0 * d_right)

    monkeypatch.setattr(model_.head, "backward", planted)
    with pytest.raises(AssertionError, match="gradient check failed"):
        assert_passes(check_gradients(model_, params, batch, **options))


# ---------------------------------------------------------------------------
# the pair classifier: eq. 15's features and hidden layer, a softmax over the
# classes, the cross-entropy
# ---------------------------------------------------------------------------


def _classifier_case(rng, m=6, d=4, hidden=3, classes=3):
    head = PairClassifierHead(d, hidden, classes)
    params = {name: rng.normal(0, 0.7, shape) for name, shape in head.parameter_shapes()}
    labels = np.arange(m) % classes
    return head, params, rng.normal(0, 1, (m, d)), rng.normal(0, 1, (m, d)), labels


def test_pair_classifier_forward_and_loss_are_eq_15_and_the_cross_entropy(rng):
    """Column-vector eq. 15a-d written out pair by pair; the loss the summed
    -log p_hat of the gold classes; the prediction the most probable class."""
    head, params, h_left, h_right, labels = _classifier_case(rng)
    p_hat = head.outputs(params, h_left, h_right)
    expected_loss = 0.0
    for k in range(h_left.shape[0]):
        h_s = 1 / (
            1
            + np.exp(
                -(
                    params["W_times"].T @ (h_left[k] * h_right[k])
                    + params["W_plus"].T @ np.abs(h_left[k] - h_right[k])
                    + params["b_h"]
                )
            )
        )
        logits = params["W_p"].T @ h_s + params["b_p"]
        expected = np.exp(logits) / np.exp(logits).sum()
        np.testing.assert_allclose(p_hat[k], expected, rtol=1e-12)
        expected_loss -= np.log(expected[labels[k]])
    loss, _ = head.loss(params, h_left, h_right, labels)
    assert loss == pytest.approx(expected_loss, rel=1e-12)
    np.testing.assert_array_equal(head.predict(params, h_left, h_right), p_hat.argmax(axis=1))
    with pytest.raises(ValueError, match=r"class numbers 0..2"):
        head.loss(params, h_left, h_right, np.array([0, 1, 2, 3, 0, 1]))


def test_pair_classifier_backward_matches_finite_differences(rng):
    """Every head parameter and dJ/dh_L, dJ/dh_R (the encoders' share) against
    central differences of the loss, at a random scale."""
    head, params, h_left, h_right, labels = _classifier_case(rng)
    _, cache = head.loss(params, h_left, h_right, labels)
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    scale = 0.37
    d_left, d_right = head.backward(params, cache, scale, grads)
    step = 1e-6

    def numeric(array, loss_of):
        out = np.zeros_like(array)
        for index in np.ndindex(*array.shape):
            kept = array[index]
            array[index] = kept + step
            up = loss_of()
            array[index] = kept - step
            down = loss_of()
            array[index] = kept
            out[index] = scale * (up - down) / (2 * step)
        return out

    def loss():
        return head.loss(params, h_left, h_right, labels)[0]

    for name in params:
        np.testing.assert_allclose(grads[name], numeric(params[name], loss), rtol=1e-6, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(d_left, numeric(h_left, loss), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(d_right, numeric(h_right, loss), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "model, trees", [("treelstm-childsum", "dependency"), ("treelstm-nary", "binary"), ("lstm", "chain")]
)
def test_pair_classifier_model_check_passes(model, trees):
    """The pair classifier through both sentences' encoders: every parameter."""
    rng = np.random.default_rng(4)
    setting = Setting(model, head="pair_softmax", trees=trees, supervision="root", l2=0.1)
    model_, params, batch, options = build_case(setting, random_trees(setting, rng), rng)
    assert model_.head_name == "pair_softmax" and batch.labels is not None
    assert_passes(check_gradients(model_, params, batch, **options))


def test_pair_classifier_planted_bug_fails(monkeypatch):
    """The backward given the relatedness target's half-and-half mass instead
    of the one-hot class: the checker must catch it."""
    rng = np.random.default_rng(4)
    setting = Setting("treelstm-childsum", head="pair_softmax", trees="dependency", supervision="root")
    model_, params, batch, options = build_case(setting, random_trees(setting, rng), rng)
    loss = PairClassifierHead.loss

    def soft_target(self, *args):
        value, cache = loss(self, *args)
        cache["target"] = 0.5 * cache["target"] + 0.5 / self.n_classes
        return value, cache

    monkeypatch.setattr(PairClassifierHead, "loss", soft_target)
    with pytest.raises(AssertionError, match="gradient check failed"):
        assert_passes(check_gradients(model_, params, batch, **options))
