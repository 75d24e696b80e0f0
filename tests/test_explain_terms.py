"""The interface ``npcomp explain`` reads (``cells/interface.py``): every
model's cell names its forward quantities and its backward error terms, one
row per forest node, from its own forward cache and backward pass; the
forward ones agree with the cell's node-by-node reference wherever they
share the reference's symbol."""
from __future__ import annotations

import numpy as np
import pytest

from gradcheck.suite import VOCAB_SIZE, build_case, random_trees, settings
from npcomp.cells import reference, registry
from npcomp.cells.interface import Term
from npcomp.embeddings import Vocabulary


def _case(name: str, seed: int = 0):
    """(setting, trees, model, params, forest, trace, options) after one
    forward and backward pass on the model's first checked setting with a
    classifier head."""
    setting = next(s for s in settings(name) if s.head != "similarity")
    rng = np.random.default_rng(seed)
    trees = random_trees(setting, rng)
    model, params, forest, options = build_case(setting, trees, rng)
    trace = {}
    model.loss_and_gradient(params, forest, params.zeros_like(), trace=trace, **options)
    return setting, trees, model, params, forest, trace, options


def _check_terms(terms: list, n_nodes: int) -> None:
    assert terms and all(isinstance(term, Term) for term in terms)
    symbols = [term.symbol for term in terms]
    assert len(set(symbols)) == len(symbols), symbols
    for term in terms:
        assert term.values.shape[0] == n_nodes, (term.symbol, term.values.shape)
        values = np.asarray(term.values, dtype=np.float64)
        defined = ~np.isnan(values)
        assert defined.any(), f"{term.symbol} is NaN at every node"
        assert np.isfinite(values[defined]).all(), term.symbol
        assert term.equation, term.symbol


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_every_cell_names_its_terms(name):
    _, _, model, _, forest, trace, _ = _case(name)
    cache = trace["cell_cache"]
    _check_terms(model.cell.forward_terms(forest, cache), forest.n_nodes)
    backward = model.cell.backward_terms(forest, cache)
    _check_terms(backward, forest.n_nodes)
    assert any(term.symbol.startswith(("eps", "delta")) for term in backward)


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_forward_terms_agree_with_the_reference(name):
    """Per tree of the forest: every term under a symbol the reference also
    returns holds the reference's values, row for row in the tree's node
    order (a chain's node t is time step t), wherever the term is defined."""
    setting, trees, model, params, forest, trace, options = _case(name)
    masks = options["masks"]
    assert masks.recurrent is None and masks.embedding is None, "a setting without dropout"
    terms = model.cell.forward_terms(forest, trace["cell_cache"])
    module = reference.reference_module(name)
    given = dict(activation=setting.activation, untied=setting.untied, **setting.extra)
    cell_options = {key: value for key, value in given.items()
                    if key in module.OPTIONS and value is not None}
    vocab = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))
    compared = set()
    for index, tree in enumerate(trees):
        nodes = np.flatnonzero(forest.tree == index)
        rows = np.empty_like(nodes)
        rows[forest.origin[nodes]] = nodes          # forest row of each tree node
        x = params["embedding"][vocab.encode(tree.tokens)]
        if reference.reads_trees(name):
            quantities = module.forward(tree, x, params.prefixed("cell"), **cell_options)
        else:
            quantities = module.forward(x, params.prefixed("cell"), **cell_options)
        for term in terms:
            if term.symbol in quantities:
                expected = np.asarray(quantities[term.symbol], dtype=np.float64)
                actual = np.asarray(term.values[rows], dtype=np.float64)
                if expected.shape != actual.shape:   # a quantity of the whole sentence
                    continue
                # where the cell skips a quantity with no effect (a first time
                # step's forget gate, with c_0 = 0) its term is NaN
                defined = ~np.isnan(actual)
                np.testing.assert_allclose(actual[defined], expected[defined], atol=1e-10,
                                           err_msg=term.symbol)
                compared.add(term.symbol)
    assert compared, "no forward term shares a symbol with the reference"
