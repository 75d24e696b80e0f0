"""The settings ``python -m gradcheck`` checks: every model, option and supervision mode."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field

import numpy as np

from npcomp.cells import make_cell, registry
from npcomp.data.readers.embeddings import Vocabulary
from npcomp.forest import build_forest, node_words, supervised_labels
from npcomp.data.readers.formats import chain_tree
from npcomp.heads import PAIR_HEADS
from npcomp.models import PairBatch, PairModel, TreeModel
from npcomp.data.readers.restructure import rebracket

from .check import STEP, check_gradients, gradient_rows
from .trees import (
    constituency_and_dependency_trees,
    random_dependency_tree,
    random_dependency_trees,
    random_forest_trees,
)

VOCAB_SIZE = 10
# softsign's higher derivatives near 0 are large (its 5th is 120/(1+|z|)^6,
# tanh's at most 16): close to 0 the fourth-order difference's truncation
# (~h^4/30 times the 5th derivative) passes the tolerance at h = 1e-3; half
# the step divides it by 16 while the rounding noise (~1/h) only doubles
# (tests/cells/test_cell_lstm_rnn.py::test_softsign_difference_error_is_truncation)
SOFTSIGN_STEP = 5e-4
N_CLASSES = 5


@dataclass
class Setting:
    """One checked configuration: model, cell options, objective options and
    the kind of random trees (``binary``: constituency-like, words at the
    leaves; ``dependency``: a word at every node, 0..8 children; ``chain``:
    every node one child and a word; ``constituency and dependency``: a
    minibatch of both binary and dependency trees)."""

    model: str
    input_dim: int = 4
    hidden_dim: int = 3
    activation: str | None = None
    untied: bool | None = None
    supervision: str = "all"
    dropout: float = 0.0
    embedding_dropout: float = 0.0
    recurrent_dropout: float | tuple = 0.0
    l2: float = 0.0
    average: str = "sentences"
    head: str = "softmax"
    unary_rate: float = 0.0
    structure: str = "gold"
    trees: str = "binary"
    extra: dict = field(default_factory=dict)
    # finite-difference step: softsign's curvature needs a smaller one for the
    # O(h^4) truncation to stay below the tolerance
    step: float = STEP

    def describe(self) -> str:
        # a pair is scored at its two roots: no supervision mode
        parts = ["sentence pairs"] if self.head in PAIR_HEADS else [f"supervision={self.supervision}"]
        if self.activation is not None:
            parts.append(f"g={self.activation}")
        if self.untied is not None:
            parts.append("untied" if self.untied else "tied")
        if self.input_dim != self.hidden_dim:
            parts.append(f"d_x={self.input_dim}")
        if self.trees != "binary":
            parts.append(f"{self.trees} trees")
        if self.structure != "gold":
            parts.append(f"structure={self.structure}")
        parts += [f"{key}={value}" for key, value in sorted(self.extra.items())]
        if self.dropout:
            parts.append(f"dropout={self.dropout}")
        if self.embedding_dropout:
            parts.append(f"embedding dropout={self.embedding_dropout}")
        if self.recurrent_dropout:
            parts.append(f"recurrent dropout={self.recurrent_dropout}")
        if self.l2:
            parts.append(f"l2={self.l2}")
        if self.average != "sentences":
            parts.append(f"average={self.average}")
        if self.head != "softmax":
            parts.append(f"{self.head} head")
        if self.unary_rate:
            parts.append("unary nodes")
        return ", ".join(parts)


def settings(model: str) -> list:
    """Every setting checked for ``model``: the variations its registry entry
    declares, then the pair heads' (the similarity head's and the pair
    classifier's) where the model is one of Tai et al.'s relatedness encoders."""
    entry = registry.model(model)
    return [_setting(entry, variation) for variation in entry.gradcheck] + _similarity_settings(entry)


def _setting(entry: registry.Model, variation: dict) -> Setting:
    """The Setting of one declared variation.  A model whose leaves are the
    word vectors gets d = d_x; softsign, the smaller finite-difference step."""
    variation = dict(variation)
    if registry.leaves_are_words(entry.name, variation.get("untied")):
        variation.setdefault("hidden_dim", variation.get("input_dim", Setting.input_dim))
    if variation.get("activation") == "softsign":
        variation.setdefault("step", SOFTSIGN_STEP)
    return Setting(entry.name, **variation)


# the trees SICK's sentences are read as -> the gradient check's random trees of that kind
SIMILARITY_TREES = {"dependency": "dependency", "constituency": "binary", "chain": "chain"}


def _similarity_settings(entry: registry.Model) -> list:
    """The similarity head and KL objective (Tai eq. 15) through both
    sentences' encoders: with L2; with word-vector and recurrent dropout for
    the sequence models; and without the output gate (Tai's released
    relatedness code: h = tanh(c)) where the cell has one.  Then the pair
    classifier (its softmax over classes, cross-entropy) through the same
    encoders with L2, every parameter of its head and of the cell."""
    if entry.sick is None:
        return []
    trees = SIMILARITY_TREES[registry.sick_structure(entry.name)]
    # the cell options of its SICK setting, the output gate varied below
    extra = {key: value for key, value in entry.sick.items() if key in entry.options and key != "output_gate"}
    pair = dict(head="similarity", trees=trees, supervision="root", extra=extra)
    out = [_setting(entry, dict(pair, l2=0.1))]
    if trees == "chain":
        out.append(_setting(entry, dict(pair, embedding_dropout=0.3, recurrent_dropout=0.3)))
    if "output_gate" in entry.options:
        out.append(_setting(entry, dict(pair, extra=dict(extra, output_gate=False))))
    out.append(_setting(entry, dict(pair, head="pair_softmax", l2=0.1)))
    return out


# the models the gradient check covers: every one the registry declares
CHECKED_MODELS = tuple(registry.MODELS)


def unchecked_models(models=None) -> list:
    """The registered models (or those of ``models``) that declare no
    variation for the gradient check."""
    return [model for model in (registry.MODELS if models is None else models) if not registry.model(model).gradcheck]


def random_trees(setting: Setting, rng: np.random.Generator) -> list:
    """A random minibatch of the setting's kind of trees and structure."""
    if setting.trees == "dependency":
        return random_dependency_trees(rng, n_classes=N_CLASSES, vocab_size=VOCAB_SIZE)
    if setting.trees == "chain":
        return [
            chain_tree(
                [f"w{k}" for k in rng.integers(0, VOCAB_SIZE, size=length)], rng.integers(0, N_CLASSES, size=length)
            )
            for length in (1, 3, 7)
        ]
    if setting.trees == "constituency and dependency":
        return constituency_and_dependency_trees(rng, n_classes=N_CLASSES, vocab_size=VOCAB_SIZE)
    if setting.trees == "dependency-binary":
        # at most two children, a word at every node
        return [
            random_dependency_tree(int(n), rng, max_children=2, n_classes=N_CLASSES, vocab_size=VOCAB_SIZE)
            for n in (1, 4, 9)
        ]
    trees = random_forest_trees(
        rng, n_trees=3, max_leaves=8, n_classes=N_CLASSES, vocab_size=VOCAB_SIZE, unary_rate=setting.unary_rate
    )
    if setting.structure != "gold":
        trees = [rebracket(tree, setting.structure) for tree in trees]
    return trees


# gold relatedness of the checked pairs: both ends of the scale and a fraction;
# their classes, for the pair classifier (each of its three classes)
PAIR_SCORES = (1.0, 3.6, 5.0)
PAIR_LABELS = (2, 0, 1)
# the classes (ratings) of each pair head's checked model
PAIR_CLASSES = {"similarity": 5, "pair_softmax": 3}


def build_case(setting: Setting, trees: list, rng: np.random.Generator, partners: list | None = None):
    """(model, float64 params, batch, loss options) for one setting and
    minibatch: the batch is a forest, or for a pair head a PairBatch
    whose left sentences are ``trees`` and right ones ``partners`` (default a
    second random draw, each differing from its left sentence)."""
    vocab = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))
    cell = make_cell(
        setting.model,
        setting.input_dim,
        setting.hidden_dim,
        activation=setting.activation,
        untied=setting.untied,
        **setting.extra,
    )
    if setting.head in PAIR_HEADS:
        model = PairModel(
            cell,
            len(vocab),
            setting.input_dim,
            hidden_dim=3,
            n_classes=PAIR_CLASSES.get(setting.head, 5),
            head=setting.head,
        )
    else:
        model = TreeModel(cell, N_CLASSES, len(vocab), setting.input_dim, head=setting.head)
    params = _draw_parameters(model, setting, vocab, rng)
    if setting.head in PAIR_HEADS:
        if partners is None:
            partners = _distinct_partners(setting, trees, rng)
        trees = list(trees[: len(partners)]) + list(partners[: len(trees)])
    forest = build_forest(
        trees,
        [node_words(t, vocab.encode(t.tokens)) for t in trees],
        [supervised_labels(t, setting.supervision) for t in trees],
    )
    masks = model.dropout_masks(
        forest, setting.dropout, rng, np.float64, setting.embedding_dropout, setting.recurrent_dropout
    )
    options = dict(l2=setting.l2, masks=masks, average=setting.average)
    if setting.head not in PAIR_HEADS:
        return model, params, forest, options
    # |h_L - h_R| has no derivative where a coordinate is 0: a difference
    # within the finite differences' reach (+-2 steps, times dh/dtheta) of
    # the kink makes them measure a corner, not a slope.  Such parameters are
    # redrawn; identical sentences (every coordinate 0) are excluded above.
    for _ in range(KINK_ATTEMPTS):
        h = model.sentence_states(params, forest, masks)
        n_pairs = forest.n_trees // 2
        if np.abs(h[:n_pairs] - h[n_pairs:]).min() >= KINK_MARGIN:
            return (
                model,
                params,
                PairBatch(forest, np.resize(PAIR_SCORES, n_pairs), np.resize(PAIR_LABELS, n_pairs)),
                options,
            )
        params = _draw_parameters(model, setting, vocab, rng)
    raise ValueError(f"every draw put some |h_L - h_R| within {KINK_MARGIN} of 0: are two paired sentences the same?")


KINK_MARGIN = 1e-2
KINK_ATTEMPTS = 50


def _draw_parameters(model, setting: Setting, vocab, rng: np.random.Generator):
    params = model.new_parameters(rng, rng.normal(0, 1, (len(vocab), setting.input_dim)), dtype=np.float64)
    # larger than initial weights, so gates leave their linear regime and every
    # bias is clearly non-zero; weights with many inputs per unit (the RNTN's
    # tensor: 4d^2) get proportionally less, or pre-activations reach ~20 and
    # the finite differences' truncation error exceeds the tolerance
    noise = rng.normal(0, 0.5, model.dense_size)
    for block in model.layout.blocks:
        if block.name != "embedding" and len(block.shape) > 1:
            fan_in = int(np.prod(block.shape[:-1]))
            noise[block.offset : block.offset + block.size] *= min(1.0, np.sqrt(6 / fan_in))
    params.flat[: model.dense_size] += noise
    return params


def _distinct_partners(setting: Setting, trees: list, rng: np.random.Generator) -> list:
    """A random sentence for each of ``trees``, never the same words as it."""
    partners = []
    for tree in trees:
        while True:
            partner = random_trees(setting, rng)[len(partners) % len(trees)]
            if partner.tokens != tree.tokens:
                break
        partners.append(partner)
    return partners


def run_setting(setting: Setting, seed: int = 0, trees: list | None = None) -> dict:
    """{named parameter: max relative error} of the setting's case at ``seed``."""
    model, params, batch, options = setting_case(setting, seed, trees)
    return check_gradients(model, params, batch, step=setting.step, **options)


def setting_case(setting: Setting, seed: int = 0, trees: list | None = None) -> tuple:
    """(model, params, batch, loss options) the setting checks at ``seed``."""
    rng = np.random.default_rng(seed)
    if trees is None:
        trees = random_trees(setting, rng)
    return build_case(setting, trees, rng)


def setting_rows(setting: Setting, seed: int = 0) -> tuple:
    """([(name, max relative error, unexercised)], the case) of the setting at
    ``seed`` (``gradient_rows``; the case for a per-node state check)."""
    case = setting_case(setting, seed)
    model, params, batch, options = case
    return gradient_rows(model, params, batch, step=setting.step, **options), case


def option_values(model: str) -> dict:
    """{cell option: the values the model's settings give it, the cell's
    default counted where a setting leaves it unset}."""
    entry = registry.model(model)
    cell_class = getattr(importlib.import_module(f"npcomp.cells.{entry.module}"), entry.class_name)
    defaults = {}
    # a bidirectional cell hands the options it does not take to its direction cell
    for owner in (getattr(cell_class, "direction_cell", None), cell_class):
        if owner is not None:
            defaults.update(
                (name, parameter.default)
                for name, parameter in inspect.signature(owner).parameters.items()
                if parameter.default is not inspect.Parameter.empty
            )
    out = {option: set() for option in entry.options}
    for setting in settings(model):
        given = dict(setting.extra, activation=setting.activation, untied=setting.untied)
        for option in out:
            value = given.get(option)
            out[option].add(defaults.get(option) if value is None else value)
    return out


def unexercised_options(model: str) -> list:
    """The model's cell options, or their values, that no setting checks:
    a choice (an activation) never given, a switch or number never away from
    its default.  Options that only set the initial parameters are exempt
    (``registry.CellOption.in_equations``)."""
    entry = registry.model(model)
    missing = []
    for option, values in option_values(model).items():
        if not registry.CELL_OPTIONS[option].in_equations:
            continue
        choices = entry.allowed(option)
        if choices is not None:
            missing += [f"{option}={choice}" for choice in choices if choice not in values]
        elif len(values) < 2:
            missing.append(f"{option} (only {', '.join(map(str, sorted(values, key=str)))})")
    return missing


def exercised(setting: Setting, seed: int = 3) -> tuple:
    """(every parameter block and gate sub-block of the setting's model, those
    with a gradient not exactly 0 on the setting's case at ``seed``)."""
    model, params, batch, options = setting_case(setting, seed)
    grads = params.zeros_like()
    model.loss_and_gradient(params, batch, grads, **options)
    names, moved = set(), set()
    for block in model.layout.blocks:
        names.add(block.name)
        if grads[block.name].any():
            moved.add(block.name)
    for sub_name, (block_name, index) in model.cell.report_slices().items():
        names.add(f"cell.{sub_name}")
        if grads[f"cell.{block_name}"][index].any():
            moved.add(f"cell.{sub_name}")
    return names, moved
