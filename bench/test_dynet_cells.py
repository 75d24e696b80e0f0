"""The DyNet counterparts of ``dynet_cells.py`` against npcomp: the same loss
and gradients on one forest from the same weights.

    python -m pytest -q bench/test_dynet_cells.py      (or: python bench/test_dynet_cells.py)

Outside the project's suite (pytest's ``testpaths`` is ``tests``), since it
needs DyNet (``pip install dynet38``), which npcomp does not depend on.
DyNet computes in float32: npcomp computes in float64 from the very float32
weights DyNet holds, so what differs is DyNet's rounding, and the
tolerances are a few hundred float32 roundings (its epsilon is 1.2e-7).
The forests are random (``gradcheck.trees``): binary trees with unary nodes
for the Constituency Tree-LSTM's softmax model; sentence pairs of
dependency-shaped trees and of binary constituency trees (inner nodes
reading no word) for the Child-Sum Tree-LSTM's similarity model; tiny
dimensions, nodes labelled with probability 0.7.  A check with one weight of
DyNet's copy moved must fail: the check can see a wrong model.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

if __name__ != "__main__":
    # dynet_config, not dynet: dynet_cells must configure DyNet before it loads
    pytest.importorskip("dynet_config", reason="DyNet is not installed (pip install dynet38)")

import dynet_cells  # noqa: E402
from dynet_cells import GRADIENT_TOLERANCE, LOSS_TOLERANCE, passes  # noqa: E402
from npcomp.cells import make_cell  # noqa: E402
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.models import PairBatch, PairModel, TreeModel
from npcomp.training.encoding import encode  # noqa: E402
from counterpart_checks import partly_labelled, random_trees, report  # noqa: E402

# (cell, input dim, hidden dim, trees, lambda)
CASES = [
    ("treelstm-nary", 3, 4, "binary", 0.0),
    ("treelstm-nary", 5, 6, "binary", 1e-2),
    ("treelstm-childsum", 3, 4, "dependency", 0.0),
    ("treelstm-childsum", 5, 6, "dependency", 1e-2),
    ("treelstm-childsum", 3, 4, "binary", 0.0),
]


def case(name, input_dim, hidden_dim, kind, seed=0) -> tuple:
    """(npcomp model, float64 parameters, a forest or a PairBatch): the
    Constituency Tree-LSTM with the softmax head, the Child-Sum Tree-LSTM
    with the similarity head over pairs of the trees (scores in [1, 5],
    integers among them)."""
    rng = np.random.default_rng(seed)
    trees = random_trees(kind, rng)
    cell = make_cell(name, input_dim, hidden_dim)
    if name == "treelstm-nary":
        vocab = Vocabulary.from_trees(trees)
        batch = encode(trees, vocab).forest(range(len(trees)), partly_labelled(trees, rng))
        model = TreeModel(cell, 5, len(vocab), input_dim)
    else:
        trees = trees + random_trees(kind, rng)
        vocab = Vocabulary.from_trees(trees)
        pairs = len(trees) // 2
        scores = np.concatenate([[1.0, 5.0, 3.0], rng.uniform(1.0, 5.0, pairs - 3)])
        batch = PairBatch(encode(trees, vocab).forest(range(2 * pairs)), scores)
        model = PairModel(cell, len(vocab), input_dim, hidden_dim=3)
    params = model.new_parameters(rng, rng.uniform(-0.5, 0.5, (len(vocab), input_dim)), dtype=np.float64)
    return model, params, batch


@pytest.mark.parametrize(
    "name, input_dim, hidden_dim, kind, l2", CASES, ids=[f"{case[0]}-{case[3]}-{i}" for i, case in enumerate(CASES)]
)
def test_same_loss_and_gradients(name, input_dim, hidden_dim, kind, l2):
    model, params, batch = case(name, input_dim, hidden_dim, kind)
    result = dynet_cells.check_against_npcomp(model, params, batch, l2=l2)
    assert set(result["gradient_difference"]) == set(model.layout.names)
    assert result["loss_difference"] < LOSS_TOLERANCE, result
    worst = max(result["gradient_difference"].values())
    assert worst < GRADIENT_TOLERANCE, result["gradient_difference"]


@pytest.mark.parametrize(
    "name, kind, moved",
    [
        ("treelstm-nary", "binary", "cell.b"),  # the forget gates' bias b_f
        ("treelstm-nary", "binary", "cell.U"),  # the second child's forget gate
        ("treelstm-childsum", "dependency", "cell.U_f"),
        ("treelstm-childsum", "dependency", "similarity.W_plus"),
    ],
)
def test_check_sees_a_moved_weight(name, kind, moved):
    """One entry of DyNet's copy moved by 1% (at least 0.01): the check fails."""
    model, params, batch = case(name, 3, 4, kind)
    weights = params.astype(np.float32)
    baseline = dynet_cells.counterpart(model, fixed_embeddings=False)
    wrong = weights.copy()
    block = wrong[moved]
    index = (-1,) if block.ndim == 1 else (-1, -1)  # b_f's, f_2's, ... last entry
    block[index] += 1e-2 * max(abs(float(block[index])), 1.0)
    baseline.weights.load_npcomp(wrong)
    assert not passes(dynet_cells.compare(model, weights, batch, baseline))


def test_fixed_embeddings_get_no_gradient():
    """On SICK the word vectors stay fixed (Tai et al.): the pair model's
    look-ups leave the table's gradient zero, the weights' the same."""
    model, params, batch = case("treelstm-childsum", 3, 4, "dependency")
    weights = params.astype(np.float32)
    fixed = dynet_cells.DynetPairModel.of(model, fixed_embeddings=True)
    fixed.weights.load_npcomp(weights)
    fixed.loss(batch).backward()
    gradients = fixed.weights.npcomp_gradients()
    assert not gradients["embedding"].any()
    trained = dynet_cells.check_against_npcomp(model, params, batch)
    assert trained["gradient_difference"]["embedding"] < GRADIENT_TOLERANCE
    grads = params.astype(np.float64).zeros_like()
    model.loss_and_gradient(weights.astype(np.float64), batch, grads)
    assert np.abs(gradients["cell.W"] - grads["cell.W"]).max() < (GRADIENT_TOLERANCE * np.abs(grads["cell.W"]).max())


def test_training_steps_lower_the_loss():
    """A few AdaGrad steps on one forest, with dropout and lambda: the
    trainers update the weights and the word vectors, the loss falls."""
    model, params, batch = case("treelstm-nary", 3, 4, "binary")
    baseline = dynet_cells.counterpart(model)
    baseline.weights.load_npcomp(params)
    trainer = baseline.weights.trainer(lr=0.05, embedding_lr=0.1)
    before = baseline.loss(batch).value()
    embedding = baseline.weights.embedding.as_array().copy()
    for _ in range(20):
        trainer.step(baseline.loss(batch, dropout=0.5, l2=1e-4))
    assert baseline.loss(batch).value() < before
    assert not np.array_equal(baseline.weights.embedding.as_array(), embedding)
    assert baseline.predict(batch).shape == (batch.n_nodes,)


def main() -> int:
    def outcomes():
        for name, input_dim, hidden_dim, kind, l2 in CASES:
            model, params, batch = case(name, input_dim, hidden_dim, kind)
            result = dynet_cells.check_against_npcomp(model, params, batch, l2=l2)
            yield (passes(result), f"{name} d_x={input_dim} d={hidden_dim} {kind} trees lambda={l2:g}", result)

    return report(outcomes(), 58)


if __name__ == "__main__":
    sys.exit(main())
