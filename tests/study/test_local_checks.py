"""The local checks per node (npcomp/study/local_checks.py): each node's
backward checked on its own, the error from above held fixed, so the first
failure names the node whose backward is wrong (the culprit) and the
quantity, where the whole-J state check names the child it misleads.

Every bug of gradcheck/planted.py (the routing bugs among them: the RNTN's
V^T half dropped, the LSTM-RNN's candidate errors swapped, the N-ary
Tree-LSTM's forget-gate delta read with the other child's c) is named at
the parent of the first node it makes wrong, with the term it makes wrong
(a bug in an S-LSTM gate's delta: that delta, at its node);
no model's honest backward fails on 20 random trees; the cells whose states
are read beyond the parent are refused, saying so."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import gradcheck.__main__ as gradcheck_main
from gradcheck.planted import BUGS, ROUTING_BUGS, planted
from gradcheck.suite import CHECKED_MODELS, Setting, build_case, settings
from gradcheck.trees import random_binary_tree, random_dependency_tree
from npcomp.cli import main
from npcomp.data.readers.formats import branching_tree, chain_tree
from npcomp.data.readers.restructure import rebracket
from npcomp.forest import depths
from npcomp.study.grading import CHILDSUM_NODE, NARY_NODE, RNTN_NODE
from npcomp.study.local_checks import NotLocal, check_local, first_failure, summary
from npcomp.study.local_deltas import QUANTITIES
from npcomp.study.peephole_nodes import LSTM_RNN_NODE, SLSTM_NODE
from npcomp.study.state_checks import check_states
from npcomp.study.state_checks import summary as state_summary

# the tree: the root's two children are inner nodes
TREE = "(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))"
# cells whose states are read beyond a node's parent: the backward direction
# of a bidirectional LSTM, attention over every word
NOT_LOCAL = {"bilstm", "bilstm2", "lstm-global-attn", "lstm-recurrent-attn"}
# each cell's node equations, whose parts are the deltas it checks
NODES_EQUATIONS = {
    "treelstm-nary": NARY_NODE,
    "treelstm-childsum": CHILDSUM_NODE,
    "rntn": RNTN_NODE,
    "slstm": SLSTM_NODE,
    "lstm-rnn": LSTM_RNN_NODE,
}


def _planted_case(bug):
    """A forest of a 7-leaf tree with unary nodes, a one-word tree and a
    right-branching chain of four words (as the state checks' test)."""
    rng = np.random.default_rng(11)
    trees = [random_binary_tree(n, rng, unary_rate=0.2) for n in (7, 1)]
    trees.append(branching_tree(["w1", "w2", "w3", "w4"], "right", root_label=2))
    input_dim = 4 if bug.model == "treelstm-nary" else 3
    return build_case(Setting(bug.model, input_dim=input_dim), trees, rng)


@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_first_failure_is_the_planted_nodes_parent_and_term(name):
    bug = BUGS[name]
    model, params, forest, options = _planted_case(bug)
    with planted(bug):
        checks = check_local(model, params, forest, **options)
    first = first_failure(checks)
    assert first is not None, summary(checks)
    depth = depths(forest)
    wrong = np.flatnonzero(bug.wrong(forest))
    top = min((forest.tree[node], depth[node]) for node in wrong)
    earliest = {int(node) for node in wrong if (forest.tree[node], depth[node]) == top}
    if forest.parent[min(earliest)] < 0:  # a root: its own terms
        assert (first.node, first.child, first.term) == (min(earliest), None, bug.term)
    elif first.term.startswith("delta"):  # the parent's own delta (local_deltas.py)
        assert first.child is None and first.node in {int(forest.parent[node]) for node in earliest}, summary(checks)
    else:  # the parent that routes it
        assert first.child in earliest, summary(checks)
        assert (first.node, first.term) == (int(forest.parent[first.child]), bug.term)
    assert not any(check.disagrees() for check in checks[: checks.index(first)])


# what --check-local names at the root for each routing bug: the error it
# routes to its left child, or (where local_deltas.py has the node's
# equations) the delta that makes it wrong
NAMED = {
    "rntn-transpose-half-dropped": "the error node 6 routes to its left child (node 2)'s h",
    "lstm-rnn-candidate-errors-swapped": "delta_a1 at node 6, the error of the candidate's input block a_1, "
    "child x's (not a gate) (reverses L5 for a_1 = x W_c1)",
    "treelstm-forget-delta-other-child": "delta_f_l at node 6, the error of the left child's forget gate f_l's "
    "pre-activation (reverses 13 and 10 for k = l)",
}


@pytest.mark.parametrize("bug", ROUTING_BUGS, ids=lambda bug: bug.name)
def test_explain_names_the_parent_where_the_state_check_names_the_child(bug, capsys):
    with planted(bug):
        assert main(["explain", "--model", bug.model, "--dim", "3", "--check-local", "--check-states", TREE]) == 1
    out = capsys.readouterr().out
    assert f'first failing local check: node 6 "not really very good", {NAMED[bug.name]}' in out
    assert ('first disagreement (parents first): node 2 "not really", eps_h') in out
    assert "made by node 6's backward" in out


# the S-LSTM's delta bugs: each named at the root, by the delta it gets wrong
SLSTM_DELTAS = {
    "slstm-x-delta-dropped": "delta_x at node 6, the error of the candidate x's pre-activation (not a gate: "
    "tanh of eq. 4) (reverses 5 and 4; not printed (Z2))",
    "slstm-forget-deltas-other-child": "delta_fl at node 6, the error of the left forget gate f^L's "
    "pre-activation (reverses 5 and 2; printed as (10))",
}


@pytest.mark.parametrize("name", sorted(SLSTM_DELTAS))
def test_an_slstm_delta_bug_is_named_at_its_node_and_delta(name, capsys):
    with planted(BUGS[name]):
        assert main(["explain", "--model", "slstm", "--dim", "3", "--check-local", TREE]) == 1
    out = capsys.readouterr().out
    assert f'first failing local check: node 6 "not really very good", {SLSTM_DELTAS[name]}' in out


def test_the_lstm_rnn_candidate_bug_is_told_as_an_input_blocks_error():
    """The candidate errors swapped make delta_a1 wrong first: an input
    block of the candidate (a_1 = x W_c1), told so, not as a gate."""
    bug = BUGS["lstm-rnn-candidate-errors-swapped"]
    model, params, forest, options = _planted_case(bug)
    with planted(bug):
        first = first_failure(check_local(model, params, forest, **options))
    assert first.term == "delta_a1"
    assert "input block a_1" in first.quantity and "gate's" not in first.quantity


def test_each_checked_delta_is_told_what_it_is_the_error_of():
    """One description a checked delta, from QUANTITIES: the gates' say
    gate, the others (candidates, input blocks, the RNTN's) say they are not."""
    gates = {"delta_o", "delta_i", "delta_f", "delta_f_l", "delta_f_r", "delta_fl", "delta_fr"}
    gates |= {"delta_i1", "delta_i2", "delta_f1", "delta_f2"}
    for cell, quantities in QUANTITIES.items():
        assert set(quantities) == {part for part in NODES_EQUATIONS[cell].parts if part.startswith("delta")}, cell
        for symbol, quantity in quantities.items():
            assert ("gate" in quantity.replace("not a gate", "")) == (symbol in gates), (cell, symbol, quantity)


def test_each_slstm_delta_is_checked_at_each_inner_node(capsys):
    """The clean S-LSTM: five deltas at each of 3 inner nodes, each passing."""
    assert main(["explain", "--model", "slstm", "--dim", "3", "--check-local", "--json", TREE]) == 0
    import json

    checks = json.loads(capsys.readouterr().out)["local_checks"]
    deltas = {(check["node"], check["term"]) for check in checks if check["term"].startswith("delta")}
    assert deltas == {
        (node, term) for node in (2, 5, 6) for term in ("delta_o", "delta_fl", "delta_fr", "delta_i", "delta_x")
    }


def test_an_honest_backward_passes_in_explain(capsys):
    assert main(["explain", "--model", "treelstm-nary", "--check-local", "--json", TREE]) == 0
    import json

    document = json.loads(capsys.readouterr().out)
    assert document["passed"]
    # the root's two terms, five deltas at each of 3 inner nodes, and eps_h and
    # eps_c routed to each of 6 children
    assert len(document["local_checks"]) == 2 + 5 * 3 + 2 * 6
    assert {check["child"] for check in document["local_checks"]} == {None, 0, 1, 2, 3, 4, 5}


def _twenty_trees(setting, rng) -> list:
    """20 small random trees of the setting's kind."""
    sizes = rng.integers(1, 4, size=20)
    if setting.trees == "chain":
        return [chain_tree([f"w{k}" for k in rng.integers(0, 10, size=n)], rng.integers(0, 5, size=n)) for n in sizes]
    if setting.trees.startswith("dependency"):
        widest = 2 if setting.trees == "dependency-binary" else 8
        return [random_dependency_tree(int(n) + 1, rng, max_children=widest, vocab_size=10) for n in sizes]
    trees = [random_binary_tree(int(n), rng, unary_rate=setting.unary_rate) for n in sizes]
    return trees if setting.structure == "gold" else [rebracket(tree, setting.structure) for tree in trees]


def _small(setting):
    """The setting at d = 2 (d_x = 2 where the leaves are the word vectors;
    the MV-RNN's d + d^2, the matrix-space model's d^2 as they are)."""
    if setting.model == "matrix-space":
        return setting
    if setting.model == "mvrnn":
        return dataclasses.replace(setting, hidden_dim=2, input_dim=6)
    same = setting.input_dim == setting.hidden_dim
    return dataclasses.replace(setting, hidden_dim=2, input_dim=2 if same else 3)


@pytest.mark.parametrize("name", CHECKED_MODELS)
def test_no_model_fails_on_20_random_trees(name):
    setting = _small(settings(name)[0])
    rng = np.random.default_rng(5)
    model, params, forest, options = build_case(setting, _twenty_trees(setting, rng), rng)
    if name in NOT_LOCAL:
        with pytest.raises(NotLocal, match="--check-states checks every node's terms"):
            check_local(model, params, forest, step=setting.step, **options)
        return
    checks = check_local(model, params, forest, step=setting.step, **options)
    assert checks and first_failure(checks) is None, summary(checks, several=True)
    # every root with a state checked on its own (a one-word tree's may have none:
    # the untied LSTM-RNN's leaves have no h of d numbers)
    own = {check.node for check in checks if check.child is None and not check.term.startswith("delta")}
    assert own and own <= set(np.flatnonzero(forest.parent < 0))
    cache = _cache(model, params, forest, options)
    defined = np.zeros(forest.n_nodes, dtype=bool)
    for state in model.cell.state_terms(forest, cache):
        values = model.cell.backward_term(forest, cache, state.symbol).values
        defined |= ~np.isnan(values.reshape(forest.n_nodes, -1)).all(axis=1)
    children = set(np.flatnonzero((forest.parent >= 0) & defined))
    assert {check.child for check in checks} - {None} == children


def _cache(model, params, forest, options):
    trace = {}
    model.loss_and_gradient(params, forest, params.zeros_like(), trace=trace, **options)
    return trace["cell_cache"]


def test_gradcheck_prints_the_culprit_of_a_failing_setting(monkeypatch, capsys):
    monkeypatch.setattr(gradcheck_main, "settings", lambda model: settings(model)[:1])
    monkeypatch.setattr(gradcheck_main, "unexercised_options", lambda model: [])
    with planted(BUGS["rntn-transpose-half-dropped"]):
        assert gradcheck_main.main(["--model", "rntn"]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "local check:" in line)
    assert "first failing local check: tree 0 node" in line and "routes to its" in line


def test_the_state_checks_summary_names_the_parent():
    bug = BUGS["rntn-transpose-half-dropped"]
    model, params, forest, options = _planted_case(bug)
    with planted(bug):
        checks = check_states(model, params, forest, **options)
    line = state_summary(checks, forest)
    child = next(check for check in checks if check.disagrees())
    parent = int(forest.origin[forest.parent[child.node]])
    assert f"made by node {parent}'s backward" in line
