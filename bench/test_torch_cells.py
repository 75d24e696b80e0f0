"""The PyTorch counterparts of ``torch_cells.py`` against npcomp: the same
loss and gradients on one forest, in float64, from the same weights.

    python -m pytest -q bench/test_torch_cells.py      (or: python bench/test_torch_cells.py)

Outside the project's suite (pytest's ``testpaths`` is ``tests``), since it
needs PyTorch, which npcomp does not depend on.  The forests are random
(``gradcheck.trees``): binary trees with unary nodes for the binary cells,
dependency-shaped trees and binary constituency trees (inner nodes reading
no word) for the Child-Sum Tree-LSTM, chains of random lengths for the
chain LSTMs; tiny dimensions, every node labelled with probability 0.7.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

torch = pytest.importorskip("torch") if __name__ != "__main__" else __import__("torch")

from npcomp.cells import make_cell  # noqa: E402
from npcomp.data.readers.embeddings import Vocabulary  # noqa: E402
from npcomp.models import TreeModel  # noqa: E402
from npcomp.training.encoding import encode  # noqa: E402
from counterpart_checks import partly_labelled, random_trees, report  # noqa: E402
from counterparts import worst_gradient  # noqa: E402
from torch_cells import check_against_npcomp  # noqa: E402

LOSS_TOLERANCE = 1e-10
GRADIENT_TOLERANCE = 1e-9
# the recursive family is held to 1e-12 on both (its acceptance: agreement to
# 1e-12 in float64; they sum the same terms in another order, ~1e-15 apart)
FAMILY = ("mvrnn", "rae", "drnn", "dtrnn", "sdtrnn")
FAMILY_TOLERANCE = 1e-12


def tolerances(name: str) -> tuple:
    """(loss, gradient) tolerance of cell ``name``."""
    if name in FAMILY:
        return FAMILY_TOLERANCE, FAMILY_TOLERANCE
    return LOSS_TOLERANCE, GRADIENT_TOLERANCE


# (cell, options, input dim, hidden dim, trees)
CASES = [
    ("treelstm-nary", {}, 3, 4, "binary"),
    ("treelstm-childsum", {}, 3, 4, "dependency"),
    ("treelstm-childsum", {}, 3, 4, "binary"),
    ("slstm", {}, 4, 4, "binary"),
    ("slstm", {}, 3, 4, "binary"),
    ("lstm-rnn", dict(activation="tanh", untied=False), 4, 4, "binary"),
    ("lstm-rnn", dict(activation="softsign", untied=False), 4, 4, "binary"),
    ("rntn", {}, 4, 4, "binary"),
    ("rntn", dict(leaf_activation="tanh"), 4, 4, "binary"),
    ("recnn", dict(activation="tanh", untied=False), 4, 4, "binary"),
    ("recnn", dict(activation="sigmoid", untied=False), 4, 4, "binary"),
    ("mvrnn", {}, 12, 3, "binary"),
    ("mvrnn", {}, 20, 4, "binary"),
    ("rae", {}, 4, 4, "binary"),
    ("rae", dict(reconstruction_weight=0.6), 3, 3, "binary"),
    ("drnn", dict(layers=3, activation="tanh"), 3, 4, "binary"),
    ("drnn", dict(layers=2, activation="relu"), 4, 3, "binary"),
    ("dtrnn", {}, 3, 4, "dependency"),
    ("dtrnn", dict(positions=1), 4, 3, "binary"),
    ("sdtrnn", {}, 3, 4, "dependency"),
    ("lstm", {}, 3, 4, "chain"),
    ("bilstm", {}, 3, 4, "chain"),
    ("bilstm", dict(untied=True), 3, 4, "chain"),
]


def check_case(name, options, input_dim, hidden_dim, kind, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    trees = random_trees(kind, rng)
    vocab = Vocabulary.from_trees(trees)
    split = encode(trees, vocab)
    forest = split.forest(range(len(trees)), partly_labelled(trees, rng))
    model = TreeModel(make_cell(name, input_dim, hidden_dim, **options), 5, len(vocab), input_dim)
    params = model.new_parameters(rng, rng.uniform(-0.5, 0.5, (len(vocab), input_dim)), dtype=np.float64)
    return check_against_npcomp(model, params, forest)


@pytest.mark.parametrize(
    "name, options, input_dim, hidden_dim, kind",
    CASES,
    ids=[f"{case[0]}-{case[4]}-{i}" for i, case in enumerate(CASES)],
)
def test_same_loss_and_gradients(name, options, input_dim, hidden_dim, kind):
    result = check_case(name, options, input_dim, hidden_dim, kind)
    loss_tolerance, gradient_tolerance = tolerances(name)
    assert result["loss_difference"] < loss_tolerance, result
    assert worst_gradient(result)[1] < gradient_tolerance, result["gradient_difference"]


def main() -> int:
    def outcomes():
        for name, options, input_dim, hidden_dim, kind in CASES:
            result = check_case(name, options, input_dim, hidden_dim, kind)
            loss_tolerance, gradient_tolerance = tolerances(name)
            ok = result["loss_difference"] < loss_tolerance and worst_gradient(result)[1] < gradient_tolerance
            yield ok, f"{name} {options or ''} d_x={input_dim} d={hidden_dim} {kind} trees", result

    return report(outcomes(), 62)


if __name__ == "__main__":
    sys.exit(main())
