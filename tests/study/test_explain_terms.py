"""The interface ``npcomp explain`` reads (``cells/interface.py``): every
model's cell names its forward quantities and its backward error terms, one
row per forest node, from its own forward cache and backward pass; the
forward ones agree with the cell's node-by-node reference wherever they
share the reference's symbol."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gradcheck.suite import VOCAB_SIZE, build_case, random_trees, settings
from npcomp.cells import reference, registry
from npcomp.cells.interface import Term
from npcomp.data.readers.embeddings import Vocabulary


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
    cell_options = {key: value for key, value in given.items() if key in module.OPTIONS and value is not None}
    vocab = Vocabulary(f"w{k}" for k in range(VOCAB_SIZE))
    compared = set()
    for index, tree in enumerate(trees):
        nodes = np.flatnonzero(forest.tree == index)
        rows = np.empty_like(nodes)
        rows[forest.origin[nodes]] = nodes  # forest row of each tree node
        x = params["embedding"][vocab.encode(tree.tokens)]
        if reference.reads_trees(name):
            quantities = module.forward(tree, x, params.prefixed("cell"), **cell_options)
        else:
            quantities = module.forward(x, params.prefixed("cell"), **cell_options)
        for term in terms:
            if term.symbol in quantities:
                expected = np.asarray(quantities[term.symbol], dtype=np.float64)
                actual = np.asarray(term.values[rows], dtype=np.float64)
                if expected.shape != actual.shape:  # a quantity of the whole sentence
                    continue
                # where the cell skips a quantity with no effect (a first time
                # step's forget gate, with c_0 = 0) its term is NaN
                defined = ~np.isnan(actual)
                np.testing.assert_allclose(actual[defined], expected[defined], atol=1e-10, err_msg=term.symbol)
                compared.add(term.symbol)
    assert compared, "no forward term shares a symbol with the reference"


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_every_cited_erratum_is_written_where_explain_says(name):
    """A term's erratum ids, in every setting, are entries of
    docs/EQUATIONS.md section 11 (E1, S2, ...) or of the cell's own page, as
    ``explain.errata`` directs, each with its line of text (npcomp/study/errata.py)."""
    from pathlib import Path

    from npcomp.study.explain import errata

    root = Path(__file__).resolve().parents[2]
    for setting in settings(name):
        rng = np.random.default_rng(0)
        model, params, batch, options = build_case(setting, random_trees(setting, rng), rng)
        trace = {}
        model.loss_and_gradient(params, batch, params.zeros_like(), trace=trace, **options)
        forest = getattr(batch, "forest", batch)
        cache = trace["cell_cache"]
        terms = model.cell.forward_terms(forest, cache) + model.cell.backward_terms(forest, cache)
        records = [{"symbol": t.symbol, "erratum": t.erratum} for t in terms]
        for term in terms:
            if term.node_errata is not None:  # the union names every node's ids
                ids = {e for row in term.node_errata for e in row.split(", ") if e}
                assert ids == {e for e in term.erratum.split(", ") if e}, term.symbol
        document = {"model": name, "sentences": [{"forward": records, "backward": []}]}
        for erratum, entry in errata(document).items():
            text = (root / entry["where"]).read_text()
            assert re.search(rf"\*\*{re.escape(erratum)}[.:\s]", text), (erratum, entry)
            assert entry["text"], f"{erratum} of {name} has no line in npcomp/study/errata.py"


def test_erratum_ids_are_unique_across_pages():
    """One id, one meaning: no two pages (EQUATIONS.md, a cell's page) use the
    same erratum id, so "[A1]" on the page names a single entry."""
    from npcomp.study.errata import TEXTS

    owners = {}
    for page, entries in TEXTS.items():
        for erratum in entries:
            owners.setdefault(erratum, []).append(page)
    shared = {erratum: pages for erratum, pages in owners.items() if len(pages) > 1}
    assert not shared, shared
