"""Test helpers shared by the tests of the sequence cells (the chain,
bidirectional and 2-layer LSTMs, the Elman and multiplicative RNNs, the
matrix-space model, the attention LSTMs): forests of chains, cases with
random parameters and recurrent masks, the forward against a per-sentence
reference, and the finite differences of the cells read at the roots only."""

from __future__ import annotations

import dataclasses

import numpy as np

from cell_checks import cell_gradient_errors, random_params
from gradcheck.check import assert_passes, check_gradients
from gradcheck.suite import N_CLASSES, VOCAB_SIZE, Setting, build_case
from npcomp.cells import make_cell
from npcomp.data.readers.formats import chain_tree
from npcomp.forest import build_forest
from npcomp.heads import dropout_mask

# ---------------------------------------------------------------------------
# forests of chains, cases and masks
# ---------------------------------------------------------------------------

# chains of every interesting length: one word (no recurrence at all), two,
# and longer ones advancing together level by level
LENGTHS = (1, 2, 5, 9)
# a shorter minibatch for the finite differences (4 evaluations per entry)
CHECK_LENGTHS = (1, 2, 6)
# a rectifier's finite difference is wrong when a pre-activation lies within
# about 2 steps (2e-3) times its sensitivity of the kink at 0: the relu test
# points are chosen (their seeds) with every |pre-activation| above this
RELU_MARGIN = 1e-2


def chain_forest(lengths, labels=None) -> tuple:
    """A forest of chains in which word t of sentence k is a word of its own,
    id offsets[k] + t.  Returns (forest, offsets)."""
    offsets = np.cumsum((0,) + tuple(lengths))
    trees = [
        chain_tree([f"w{t}" for t in range(n)], None if labels is None else labels[k]) for k, n in enumerate(lengths)
    ]
    forest = build_forest(trees, [np.arange(n, dtype=np.int32) + offsets[k] for k, n in enumerate(lengths)])
    return forest, offsets


def chain_nodes(forest, k: int) -> np.ndarray:
    """Sentence k's nodes in word order (node order is by height = time step)."""
    return np.flatnonzero(forest.tree == k)


def chain_case(lengths, d_x: int, rng) -> tuple:
    """A forest of chains in which token t of chain k is a word of its own, with
    random vectors.  Returns (forest, per-chain vectors [(T_k, d_x)], x (U, d_x),
    word_index (n,), nodes [chain k's nodes in word order])."""
    vectors = [rng.normal(size=(n, d_x)) for n in lengths]
    forest, _ = chain_forest(lengths)
    words, index = np.unique(forest.word, return_inverse=True)
    x = np.concatenate(vectors)[words]
    nodes = [chain_nodes(forest, k) for k in range(len(lengths))]
    return forest, vectors, x, index, nodes


def recurrent_masks(cell, n_trees: int, rng, rate: float = 0.5) -> list:
    """One inverted-dropout mask per recurrent connection, (trees, width), each
    with dropped and kept units (so a missing mask in the backward shows)."""
    masks = []
    for width in cell.recurrent_widths():
        while True:
            mask = dropout_mask((n_trees, width), rate, rng, np.float64)
            if 0 < np.count_nonzero(mask) < mask.size:
                break
        masks.append(mask)
    return masks


def dropout_masks(rng, sentences: int, width: int, rate: float = 0.3) -> np.ndarray:
    """Inverted-dropout masks: 0 or 1/(1-rate), one row per sentence, as drawn
    (``recurrent_masks`` makes sure that some units are dropped, some kept)."""
    return (rng.random((sentences, width)) >= rate) / (1 - rate)


@dataclasses.dataclass
class ChainCase:
    """A cell over a forest of chains (``chain_case``'s) with random
    parameters and, when drawn, its recurrent masks."""

    cell: object
    params: dict
    forest: object
    vectors: list
    x: np.ndarray
    index: np.ndarray
    nodes: list
    masks: list | None

    def forward(self, masks=None):
        """The cell's (output, cache), with recurrent ``masks`` if given."""
        return self.cell.forward(self.params, self.forest, self.x, self.index, recurrent_masks=masks)

    def gradient_errors(self, rng, names=None) -> dict:
        """``cell_gradient_errors`` of the case, its masks fixed."""
        return cell_gradient_errors(self.cell, self.params, self.forest, self.x, self.index, self.masks, rng, names)


def chain_cell_case(
    model: str,
    rng,
    lengths=LENGTHS,
    input_dim: int = 4,
    hidden_dim: int = 3,
    scale: float = 0.7,
    masked: bool = False,
    **options,
) -> ChainCase:
    """``model``'s cell (with ``options``), random parameters (``scale``) and
    a ``chain_case`` of ``lengths``, drawn from ``rng`` in that order, then
    ``recurrent_masks`` if ``masked``."""
    cell = make_cell(model, input_dim, hidden_dim, **options)
    params = random_params(cell, rng, scale)
    forest, vectors, x, index, nodes = chain_case(lengths, input_dim, rng)
    masks = recurrent_masks(cell, forest.n_trees, rng) if masked else None
    return ChainCase(cell, params, forest, vectors, x, index, nodes, masks)


# ---------------------------------------------------------------------------
# the forward against a per-sentence reference, the error terms
# ---------------------------------------------------------------------------


def assert_float32_chain_forward_is_close(model: str, seed: int, scale: float = 0.7):
    """``chain_cell_case``'s forward in float32 stays float32 and close to float64."""
    case = chain_cell_case(model, np.random.default_rng(seed), scale=scale)
    h64, _ = case.forward()
    h32, _ = case.cell.forward(
        {k: v.astype(np.float32) for k, v in case.params.items()}, case.forest, case.x.astype(np.float32), case.index
    )
    assert h32.dtype == np.float32
    np.testing.assert_allclose(h32, h64, rtol=1e-5, atol=1e-6)


def assert_chains_match(out: np.ndarray, nodes: list, expected_of, atol: float = 1e-12) -> None:
    """Chain k's rows of ``out`` (in word order) are ``expected_of(k)``."""
    for k, chain in enumerate(nodes):
        np.testing.assert_allclose(out[chain], expected_of(k), rtol=0, atol=atol)


def lstm_deltas(terms: dict, suffix: str = "") -> np.ndarray:
    """(n, 4d) an LSTM's gate deltas from ``backward_terms`` (by symbol, each
    symbol + ``suffix``) in the columns of its W, U, b: i|o|u|f, a first
    step's missing delta_f as 0."""
    return np.nan_to_num(np.concatenate([terms[f"delta_{gate}{suffix}"] for gate in ("i", "o", "u", "f")], axis=1))


# ---------------------------------------------------------------------------
# gradient checks through the model
# ---------------------------------------------------------------------------


def chain_trees(rng, lengths=LENGTHS) -> list:
    """Chains of random words of the gradcheck vocabulary, every node labelled."""
    return [
        chain_tree([f"w{k}" for k in rng.integers(0, VOCAB_SIZE, size=n)], rng.integers(0, N_CLASSES, size=n))
        for n in lengths
    ]


def chain_model_case(model: str, states, activation: str, seed: int) -> tuple:
    """gradcheck's model, parameters, forest and options for ``model`` on chains
    of lengths 1, 2, 5, 9; and the smallest |pre-activation| of its forward
    (``states``: the reference forward, whose "z" are the pre-activations)."""
    rng = np.random.default_rng(seed)
    setting = Setting(model, trees="chain", activation=activation)
    case = build_case(setting, chain_trees(rng), rng)
    params, forest = case[1], case[2]
    sentences = [params["embedding"][forest.word[chain_nodes(forest, k)]] for k in range(forest.n_trees)]
    margin = min(np.abs(states(vectors, params.prefixed("cell"), activation)["z"]).min() for vectors in sentences)
    return (*case, margin)


def assert_chain_gradients_pass(model: str, states, activation: str, seed: int) -> None:
    """``chain_model_case``'s model passes the gradient check; a rectifier's
    test point keeps every pre-activation RELU_MARGIN from the kink."""
    built, params, forest, options, margin = chain_model_case(model, states, activation, seed)
    if activation == "relu":
        assert margin > RELU_MARGIN
    assert_passes(check_gradients(built, params, forest, **options))


# ---------------------------------------------------------------------------
# the attention LSTMs, read at the roots only
# ---------------------------------------------------------------------------


def root_read_cell_errors(model: str, mask_rates: tuple, seed: int = 6, **options) -> tuple:
    """``root_gradient_errors`` of ``model``'s cell (d = 2, d_x = 3, with
    ``options``) on sentences of 1, 3 and 6 words, with one ``dropout_masks``
    per rate of ``mask_rates``, fixed.  Returns (errors, masks)."""
    rng = np.random.default_rng(seed)
    d, d_x = 2, 3
    cell = make_cell(model, d_x, d, **options)
    params = random_params(cell, rng)
    lengths = (1, 3, 6)
    forest, _ = chain_forest(lengths)
    x = rng.normal(size=(sum(lengths), d_x))
    masks = [dropout_masks(rng, len(lengths), d, rate) for rate in mask_rates]
    return root_gradient_errors(cell, params, forest, x, forest.word, masks, rng), masks


def small_chain_case(model: str, seed: int = 7, **extra) -> tuple:
    """A small gradient-check case for the planted bugs (every finite-difference
    evaluation runs the patched backward): d = d_x = 2, sentences of 2 and 5
    words labelled at the root, as the suite builds it."""
    rng = np.random.default_rng(seed)
    setting = Setting(model, input_dim=2, hidden_dim=2, trees="chain", supervision="root", extra=extra)
    trees = [chain_tree(["w1", "w2"], [0, 3]), chain_tree(["w3", "w4", "w1", "w5", "w6"], [1, 2, 0, 4, 2])]
    return build_case(setting, trees, rng)


def run_forward(cell, params: dict, forest, vectors: list, dtype=np.float64, masks=None):
    """The cell's forward on a ``chain_forest`` reading ``vectors`` (one array
    per sentence), parameters, inputs and masks cast to ``dtype``."""
    words, index = np.unique(forest.word, return_inverse=True)
    cast = {name: value.astype(dtype) for name, value in params.items()}
    x = np.concatenate(vectors)[words].astype(dtype)
    cast_masks = None if masks is None else [m.astype(dtype) for m in masks]
    return cell.forward(cast, forest, x, index, recurrent_masks=cast_masks)


def root_gradient_errors(cell, params, forest, x, word_index, masks, rng, step: float = 1e-5) -> dict:
    """Finite differences of the cell alone for the cells read at the roots
    only (the attention LSTMs): J = sum(out[roots] * G) for a random G, masks
    fixed, second-order central differences at ``step``; max relative error
    per parameter and for x."""
    G = rng.normal(size=(forest.n_trees, cell.output_dim))

    def objective(p, x_):
        out, _ = cell.forward(p, forest, x_, word_index, recurrent_masks=masks)
        return float((out[forest.root] * G).sum())

    out, cache = cell.forward(params, forest, x, word_index, recurrent_masks=masks)
    d_out = np.zeros_like(out)
    d_out[forest.root] = G
    grads = {name: np.zeros_like(value) for name, value in params.items()}
    d_x = cell.backward(params, forest, cache, d_out, grads)
    analytic = dict(grads, x=d_x)
    errors = {}
    for name, value in analytic.items():
        target = x if name == "x" else params[name]
        numeric = np.zeros_like(target)
        for index in np.ndindex(target.shape):
            original = target[index]
            target[index] = original + step
            plus = objective(params, x)
            target[index] = original - step
            minus = objective(params, x)
            target[index] = original
            numeric[index] = (plus - minus) / (2 * step)
        scale = np.maximum(np.abs(value) + np.abs(numeric), 1e-7)
        errors[name] = float((np.abs(value - numeric) / scale).max())
    return errors
