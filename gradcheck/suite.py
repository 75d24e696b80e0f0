"""The settings ``python -m gradcheck`` checks: every model, option and supervision mode."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from npcomp.cells import make_cell
from npcomp.embeddings import Vocabulary
from npcomp.forest import build_forest, node_words, supervised_labels
from npcomp.heads import dropout_mask
from npcomp.model import TreeModel

from .check import check_gradients
from .trees import random_forest_trees

VOCAB_SIZE = 10
N_CLASSES = 5


@dataclass
class Setting:
    model: str
    input_dim: int = 4
    hidden_dim: int = 3
    activation: str = "tanh"
    untied: bool = False
    supervision: str = "all"
    dropout: float = 0.0
    l2: float = 0.0
    average: str = "sentences"
    unary_rate: float = 0.0
    extra: dict = field(default_factory=dict)

    def describe(self) -> str:
        parts = [f"supervision={self.supervision}"]
        if self.model == "recnn":
            parts.append(f"g={self.activation}")
            parts.append("untied" if self.untied else "tied")
        if self.dropout:
            parts.append(f"dropout={self.dropout}")
        if self.l2:
            parts.append(f"l2={self.l2}")
        if self.average != "sentences":
            parts.append(f"average={self.average}")
        if self.unary_rate:
            parts.append("unary nodes")
        return ", ".join(parts)


def settings(model: str) -> list:
    """Every setting checked for ``model``."""
    base = [Setting(model, supervision=mode) for mode in ("all", "root", "root+leaves")]
    base += [Setting(model, dropout=0.5, l2=0.1, average="nodes"),
             Setting(model, unary_rate=0.3)]
    if model == "recnn":
        out = []
        for activation in ("tanh", "sigmoid", "softsign"):
            for untied in (False, True):
                dims = dict(input_dim=4 if untied else 3, hidden_dim=3)
                out.append(Setting(model, activation=activation, untied=untied, **dims))
        out += [Setting(model, input_dim=3, supervision=mode) for mode in ("root", "root+leaves")]
        out += [Setting(model, input_dim=4, untied=True, dropout=0.5, l2=0.1, average="nodes"),
                Setting(model, input_dim=3, unary_rate=0.3)]
        return out
    if model == "mean-vectors":
        return [Setting(model, input_dim=4, hidden_dim=4, supervision=mode)
                for mode in ("all", "root", "root+leaves")]
    return base


MODELS = ("treelstm-nary", "recnn", "mean-vectors")


def build_case(setting: Setting, trees: list, rng: np.random.Generator):
    """(model, float64 params, forest, loss options) for one setting and minibatch."""
    vocab = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))
    cell = make_cell(setting.model, setting.input_dim, setting.hidden_dim,
                     activation=setting.activation, untied=setting.untied)
    model = TreeModel(cell, N_CLASSES, len(vocab), setting.input_dim)
    params = model.new_parameters(rng, rng.normal(0, 1, (len(vocab), setting.input_dim)),
                                  dtype=np.float64)
    # larger than initial weights, so gates leave their linear regime and every
    # bias is clearly non-zero
    params.flat[:model.dense_size] += rng.normal(0, 0.5, model.dense_size)
    forest = build_forest(trees, [node_words(t, vocab.encode(t.tokens)) for t in trees],
                          [supervised_labels(t, setting.supervision) for t in trees])
    labelled = int(np.sum(forest.label >= 0))
    mask = dropout_mask((labelled, cell.output_dim), setting.dropout, rng, np.float64)
    options = dict(l2=setting.l2, mask=mask, average=setting.average)
    return model, params, forest, options


def run_setting(setting: Setting, seed: int = 0, trees: list | None = None) -> dict:
    rng = np.random.default_rng(seed)
    if trees is None:
        trees = random_forest_trees(rng, n_trees=3, max_leaves=8, n_classes=N_CLASSES,
                                    vocab_size=VOCAB_SIZE, unary_rate=setting.unary_rate)
    model, params, forest, options = build_case(setting, trees, rng)
    return check_gradients(model, params, forest, **options)
