"""The output heads: the ordinal head's targets, loss, monotone decoding and a
planted bug; dropout masks on word vectors (one per sequence)."""
from __future__ import annotations

import numpy as np
import pytest

from gradcheck.check import assert_passes, check_gradients
from gradcheck.suite import Setting, build_case, random_trees
from npcomp.heads import OrdinalClassifier, SoftmaxClassifier, make_head
from npcomp.model import DropoutMasks, layer_rates


def test_ordinal_targets_are_cumulative():
    head = OrdinalClassifier(3, 5)
    r = head.targets(np.array([0, 2, 4]), np.float64)
    np.testing.assert_array_equal(r, [[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]])


@pytest.mark.parametrize("outputs, label", [
    ([0.9, 0.2, 0.8, 0.1], 1),   # Irsoy's example: [1, 0, 1, 0] -> [1, 0, 0, 0]
    ([0.9, 0.6, 0.7, 0.5], 4),   # 0.5 counts as 1
    ([0.4, 0.9, 0.9, 0.9], 0),
    ([0.9, 0.9, 0.3, 0.9], 2),
])
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
    assert masked == pytest.approx(_loss_with_words(model, params, forest, words, widened),
                                   rel=1e-12)


def _loss_with_words(model, params, forest, words, table):
    """The loss of ``forest`` reading ``words`` from ``table`` (a larger vocabulary)."""
    from dataclasses import replace

    from npcomp.model import TreeModel
    wide = TreeModel(model.cell, model.n_classes, table.shape[0], model.embedding_dim)
    wide_params = wide.new_parameters(np.random.default_rng(0), table, dtype=np.float64)
    wide_params.flat[:wide.dense_size] = params.flat[:model.dense_size]
    return wide.loss_and_gradient(wide_params, replace(forest, word=words),
                                  wide_params.zeros_like())[0]
