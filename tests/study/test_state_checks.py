"""The per-node state check (npcomp/study/state_checks.py): every node's error
terms against finite differences of J in its states, through the cell's own
forward.  On every model's honest backward every term agrees; with each bug
of gradcheck/planted.py the first disagreement, parents first, is the
planted node and term, including the S-LSTM's dropped left-peephole share on
the README's first example tree, whose every left child is a leaf (the
parameter check passes there); ``npcomp explain --check-states`` and
``python -m gradcheck`` report it."""

from __future__ import annotations

import numpy as np
import pytest

import gradcheck.__main__ as gradcheck_main
from gradcheck.check import TOLERANCE, check_gradients
from gradcheck.planted import BUGS, planted
from gradcheck.suite import CHECKED_MODELS, Setting, build_case, random_trees, settings
from gradcheck.trees import random_binary_tree
from npcomp.cells.interface import Nudge
from npcomp.cli import main
from npcomp.data.readers.formats import branching_tree
from npcomp.data.readers.ptb import parse_ptb
from npcomp.forest import depths
from npcomp.study.state_checks import check_states, first_disagreement, node_name, summary

# the README's example before it changed: every left child a leaf
LEAVES_ON_THE_LEFT = "(3 (2 not) (3 (3 very) (4 good)))"


# the sentence pairs of one tree model and one sequence model
PAIRS = ("treelstm-childsum", "lstm")


@pytest.mark.parametrize("name", CHECKED_MODELS)
def test_every_models_terms_agree_with_finite_differences(name):
    """Each model's first setting (and sentence pairs for two): every node,
    every state the cell names, two coordinates of each drawn."""
    chosen = [settings(name)[0]]
    if name in PAIRS:
        chosen.append(next(s for s in settings(name) if s.head == "similarity"))
    for setting in chosen:
        rng = np.random.default_rng(2)
        model, params, batch, options = build_case(setting, random_trees(setting, rng), rng)
        checks = check_states(
            model, params, batch, entries=2, rng=np.random.default_rng(0), step=setting.step, **options
        )
        forest = getattr(batch, "forest", batch)
        terms = {state.symbol for state in model.cell.state_terms(forest, _cache(model, params, batch, options))}
        assert {check.term for check in checks} == terms
        assert first_disagreement(checks) is None, summary(checks, forest)


def _cache(model, params, batch, options):
    trace = {}
    model.loss_and_gradient(params, batch, params.zeros_like(), trace=trace, **options)
    return trace["cell_cache"]


def test_nodes_come_parents_first_and_every_leaf_is_checked():
    rng = np.random.default_rng(4)
    trees = [random_binary_tree(6, rng), random_binary_tree(3, rng)]
    model, params, forest, options = build_case(Setting("slstm", input_dim=3), trees, rng)
    checks = check_states(model, params, forest, **options)
    depth = depths(forest)
    keys = [(check.tree, depth[check.node], check.origin) for check in checks]
    assert keys == sorted(keys)
    assert {check.node for check in checks if check.term == "eps_c"} == set(range(forest.n_nodes))
    assert all(check.analytic.shape == (3,) and check.numeric.shape == (3,) for check in checks)
    sampled = check_states(model, params, forest, entries=2, rng=np.random.default_rng(0), **options)
    assert all(check.coordinates.size == 2 for check in sampled)


def test_a_nudge_moves_a_state_where_the_forward_makes_it():
    """Moving a leaf's c = 0 changes its parent's c (eq. 5 reads it) but not
    the leaf's h; moving the root's c changes its h (eq. 7)."""
    rng = np.random.default_rng(1)
    model, params, forest, _ = build_case(
        Setting("slstm", input_dim=3),
        [parse_ptb(LEAVES_ON_THE_LEFT.replace("not", "w1").replace("very", "w2").replace("good", "w3"))],
        rng,
    )
    words, index = np.unique(forest.word[forest.word_nodes()], return_inverse=True)
    x = params["embedding"][words]
    cell_params = params.prefixed("cell")
    h, cache = model.cell.forward(cell_params, forest, x, index)
    offset = np.full(3, 0.1)
    moved_h, moved = model.cell.forward(cell_params, forest, x, index, nudge=Nudge("c", 0, offset))
    np.testing.assert_array_equal(moved_h[0], h[0])
    np.testing.assert_array_equal(moved.c[0], offset)
    assert not np.allclose(moved.c[forest.root[0]], cache.c[forest.root[0]])
    root = int(forest.root[0])
    moved_h, _ = model.cell.forward(cell_params, forest, x, index, nudge=Nudge("c", root, offset))
    assert not np.allclose(moved_h[root], h[root])


def _planted_case(bug):
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1)]
    trees.append(branching_tree(["w1", "w2", "w3", "w4"], "right", root_label=2))
    # d_x = d where a leaf's state is its word vector (the RNTN, a tied LSTM-RNN)
    input_dim = 4 if bug.model == "treelstm-nary" else 3
    return build_case(Setting(bug.model, input_dim=input_dim), trees, rng)


@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_first_disagreement_is_the_planted_node_and_term(name):
    bug = BUGS[name]
    model, params, forest, options = _planted_case(bug)
    with planted(bug):
        errors = check_gradients(model, params, forest, **options)
        checks = check_states(model, params, forest, **options)
    assert max(errors.values()) > TOLERANCE
    depth = depths(forest)
    wrong = sorted(
        np.flatnonzero(bug.wrong(forest)), key=lambda node: (forest.tree[node], depth[node], forest.origin[node])
    )
    first = first_disagreement(checks)
    assert (first.node, first.term) == (wrong[0], bug.term), summary(checks, forest)
    # and nothing before it, parents first, at any term
    before = checks[: checks.index(first)]
    assert before and not any(check.disagrees() for check in before)


def test_the_left_peephole_share_on_leaves_only_trees(capsys):
    """On the README's first tree the dropped left-peephole share of eps_c
    passes the parameter check (every left child is a leaf: c^L = 0, W_c.^L
    gets exactly 0); the state check names node 0 "not" and eps_c."""
    bug = BUGS["slstm-left-peephole-dropped"]
    with planted(bug):
        # the parameters pass; the parts' sum check marks node 0's eps_c already
        assert main(["explain", "--model", "slstm", LEAVES_ON_THE_LEFT]) == 1
        out = capsys.readouterr().out
        assert "every parameter within 1e-06" in out
        assert 'parts: at node 0 "not" eps_c is not the sum of its' in out
        assert main(["explain", "--model", "slstm", "--check-states", LEAVES_ON_THE_LEFT]) == 1
    out = capsys.readouterr().out
    assert "every parameter within 1e-06" in out
    assert 'first disagreement (parents first): node 0 "not", eps_c' in out
    assert 'node 3 "very good"' in out and "DISAGREES" in out


def test_explain_states_pass_on_an_honest_backward(capsys):
    assert (
        main(["explain", "--model", "treelstm-nary", "--check-states", "--json", "(3 (2 (2 not) (2 really)) (3 very))"])
        == 0
    )
    import json

    document = json.loads(capsys.readouterr().out)
    assert document["passed"]
    assert {check["term"] for check in document["state_checks"]} == {"eps_h", "eps_c"}
    assert len(document["state_checks"]) == 2 * 5


def test_gradcheck_names_the_first_disagreement_of_a_failing_setting(monkeypatch, capsys):
    monkeypatch.setattr(gradcheck_main, "settings", lambda model: settings(model)[:1])
    monkeypatch.setattr(gradcheck_main, "unexercised_options", lambda model: [])
    with planted(BUGS["slstm-output-peephole-dropped"]):
        assert gradcheck_main.main(["--model", "slstm"]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "state check:" in line)
    assert "first disagreement, parents first: tree 0 node" in line and "the root" in line
    assert "eps_c" in line


def test_node_names():
    rng = np.random.default_rng(3)
    tree = parse_ptb("(3 (2 (2 w1) (2 w2)) (3 w3))")
    model, params, forest, options = build_case(Setting("slstm", input_dim=3), [tree], rng)
    names = {int(forest.origin[j]): node_name(forest, j) for j in range(forest.n_nodes)}
    assert names[4] == "tree 0 node 4 (inner, the root)"
    assert names[2] == "tree 0 node 2 (inner, left child of node 4)"
    assert names[3] == "tree 0 node 3 (a leaf, right child of node 4)"
