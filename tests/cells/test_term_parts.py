"""Error terms as the sums of their parts (``Cell.term_parts``): for every
model and every gradient-check setting the parts of eps_h, eps_c (and their
kin) add up to the term the backward computed, within 1e-12, node by node;
a part given a reason for being 0 is exactly 0 there.  ``npcomp explain
--node K --parts`` prints them, and explain warns when a tree leaves parts
unused (the README's first example tree, whose every left child is a leaf,
against its present one)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcheck.suite import CHECKED_MODELS, build_case, random_trees, settings
from npcomp.cli import main

README_TREE = "(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))"
LEAVES_ON_THE_LEFT = "(3 (2 not) (3 (3 very) (4 good)))"


def _parts(setting, seed=1):
    rng = np.random.default_rng(seed)
    model, params, batch, options = build_case(setting, random_trees(setting, rng), rng)
    trace = {}
    model.loss_and_gradient(params, batch, params.zeros_like(), trace=trace, **options)
    forest = getattr(batch, "forest", batch)
    cache = trace["cell_cache"]
    parts = model.cell.term_parts(params.prefixed("cell"), forest, cache, trace["d_h"])
    return model.cell, forest, cache, parts


@pytest.mark.parametrize("name", CHECKED_MODELS)
def test_parts_sum_to_the_term(name):
    for setting in settings(name):
        cell, forest, cache, parts = _parts(setting)
        assert any(term.symbol.startswith("eps_h") for term in parts), setting.describe()
        for term in parts:
            total = np.asarray(cell.backward_term(forest, cache, term.symbol).values, dtype=np.float64).reshape(
                forest.n_nodes, -1
            )
            defined = ~np.isnan(total).all(axis=1)
            assert defined.any()
            summed = sum(np.asarray(part.values, dtype=np.float64).reshape(forest.n_nodes, -1) for part in term.parts)
            np.testing.assert_allclose(
                summed[defined], total[defined], rtol=0, atol=1e-12, err_msg=f"{setting.describe()}: {term.symbol}"
            )
            for part in term.parts:
                values = np.asarray(part.values, dtype=np.float64).reshape(forest.n_nodes, -1)
                said = (part.zero != "") & defined
                assert not values[said].any(), (setting.describe(), term.symbol, part.label)
                assert part.equation and part.label


def test_a_part_is_zero_for_the_reason_given():
    """The S-LSTM on the README's first tree: at the leaf "not", a left
    child, the parent's delta_fl is 0 because its own c^L = 0 (a leaf)."""
    from gradcheck.suite import Setting
    from npcomp.data.readers.ptb import parse_ptb

    tree = parse_ptb(LEAVES_ON_THE_LEFT.replace("not", "w1").replace("very", "w2").replace("good", "w3"))
    rng = np.random.default_rng(0)
    model, params, forest, options = build_case(Setting("slstm", input_dim=3), [tree], rng)
    trace = {}
    model.loss_and_gradient(params, forest, params.zeros_like(), trace=trace, **options)
    parts = {
        term.symbol: term
        for term in model.cell.term_parts(params.prefixed("cell"), forest, trace["cell_cache"], trace["d_h"])
    }
    eps_c = {part.label: part for part in parts["eps_c"].parts}
    not_ = int(np.flatnonzero((forest.origin == 0))[0])
    assert eps_c["(W_cfl^L)^T delta_p^fl"].zero[not_] == "c^L = 0: leaf"
    assert eps_c["eps_t^h o_t g'(c_t)"].zero[not_].startswith("leaf")
    assert eps_c["eps_c,p f^R_p"].zero[not_].startswith("a left child")
    assert parts["eps_c"].unread[not_].startswith("leaf")
    assert np.abs(eps_c["eps_c,p f^L_p"].values[not_]).sum() > 0


def test_explain_prints_a_nodes_parts(capsys):
    """Node 0 "not", a leaf and the left child of "not really"."""
    assert main(["explain", "--model", "slstm", "--node", "0", "--parts", README_TREE]) == 0
    out = capsys.readouterr().out
    block = out[out.index("error terms as the sums of their parts") : out.index("parameters (")]
    assert 'node 0 "not"' in block and 'node 2 "not really"' not in block
    assert "eps_h     = the sum of 11 parts" in block
    assert "eps_c     = the sum of 10 parts" in block
    assert "(nothing reads eps_c here: leaf: its c = 0 is a constant" in block
    assert "eps_c,p f^L_p" in block and "(reverses 5; printed as (13))" in block
    assert "0: a left child: (13) has the other side's terms" in block
    assert "(W_cfl^L)^T delta_p^fl        (reverses 2; printed in (13))  0: c^L = 0: leaf" in block
    assert "0: leaf: no output gate" in block


def _warnings(capsys, tree, model="slstm") -> list:
    assert main(["explain", "--model", model, "--json", tree]) == 0
    return json.loads(capsys.readouterr().out)["warnings"]


def test_the_readme_tree_exercises_every_term(capsys):
    assert _warnings(capsys, README_TREE) == []


def test_a_tree_with_only_leaves_on_the_left_is_warned_about(capsys):
    warnings = _warnings(capsys, LEAVES_ON_THE_LEFT)
    blocks = next(warning for warning in warnings if "unexercised" in warning)
    assert "cell.W.ci.L" in blocks and "cell.W.cfl.L" in blocks and "cell.W.cfr.L" in blocks
    eps_c = next(warning for warning in warnings if "eps_c's parts" in warning)
    assert "(W_ci^L)^T delta_p^i" in eps_c and "eps_c,p f^L_p" in eps_c
    assert "leaf: its c = 0 is a constant" in eps_c and "--check-states" in eps_c
