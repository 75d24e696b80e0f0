"""npcomp explain on what it cannot check quickly or at all: a tree past the
per-node checks' size limit refused at once, naming --max-nodes (and
max_nodes from Python); the checks' progress bars; a loss held at its
floor said to be that, not a wrong gradient; --values below 0 refused."""

from __future__ import annotations

import json

import numpy as np
import pytest

import npcomp.runs.explanations as explain_run
import npcomp.study.finite_differences as finite_differences
from npcomp.cli import main
from npcomp.errors import ConfigError
from npcomp.data.text.text_trees import TextTrees
from npcomp.study.explain import explain
from npcomp.study.state_checks import MAX_NODES
from npcomp.configuration.defaults import defaults_for
from npcomp.configuration.model_building import build_model, initial_parameters
from npcomp.data.readers.embeddings import Vocabulary


def right_branching(levels: int) -> str:
    """A bracketed tree of ``levels`` + 1 words, each inner node a level."""
    tree = f"(2 w{levels})"
    for word in range(levels - 1, -1, -1):
        tree = f"(2 (2 w{word % 40}) {tree})"
    return tree


def test_a_tree_past_the_limit_is_refused_at_once_naming_max_nodes(capsys):
    """A 1,000-level tree (2,001 nodes): refused before any check runs,
    with how many passes the checks would take and the way to ask."""
    status = main(["explain", "--model", "treelstm-nary", "--check-states", right_branching(1000)])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert captured.err.startswith(
        "npcomp explain: error: --max-nodes: the per-node state checks of this tree (2,001 "
        f"nodes) are past the limit of {MAX_NODES:,} nodes: they would run the forward of the "
        "whole tree 64,032 times, about "
    )
    assert "Raise the limit to 2,001 or more" in captured.err
    # nothing of the checks ran: no progress bar
    assert "checks:" not in captured.err


def _fresh(model_name: str, text: str, dim: int = 4):
    config = defaults_for(model_name, "sst5")
    config.update(
        model=model_name,
        task="sst5",
        dim=dim,
        seed=1,
        oov="normal",
        oov_scale=1.0,
        embedding_dim=dim * dim if model_name == "matrix-space" else dim,
    )
    trees = TextTrees(config["structure"], None, n_classes=5)([text], "TREE")
    vocab = Vocabulary(sorted({word for tree in trees for word in tree.tokens}))
    model = build_model(config, vocab, 5)
    params = initial_parameters(config, model, vocab, None, np.random.default_rng(1), {})
    return model, params, trees, vocab


def test_max_nodes_from_python_refuses_and_allows():
    model, params, trees, vocab = _fresh("treelstm-nary", right_branching(3))  # 7 nodes
    with pytest.raises(ConfigError) as caught:
        explain(model, params, trees, vocab, check_states=True, max_nodes=6)
    assert caught.value.option == "max_nodes"
    assert str(caught.value).startswith(
        "max_nodes: the per-node state checks of this tree (7 nodes) are past the limit of 6 nodes"
    )
    document = explain(model, params, trees, vocab, check_states=True, max_nodes=7)
    assert len({(check["sentence"], check["node"]) for check in document["state_checks"]}) == 7
    # without the state checks the limit does not apply
    assert "state_checks" not in explain(model, params, trees, vocab, max_nodes=1)


def test_the_checks_show_their_progress_and_the_time_left(monkeypatch, capsys):
    """Shown once the checks last PROGRESS_DELAY seconds: at once here."""
    monkeypatch.setattr(finite_differences, "PROGRESS_DELAY", 0.0)
    tree = right_branching(6)
    assert main(["explain", "--model", "treelstm-nary", "--check-states", "--max-nodes", "13", tree]) == 0
    err = capsys.readouterr().err
    assert "parameter checks:" in err and ("entry/s" in err or "s/entry" in err)
    assert "per-node state checks:" in err and "/26 " in err  # h and c at 13 nodes
    assert "<" in err  # tqdm's elapsed<left


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--values", "-3"], "--values: a whole number >= 0 (0: norms alone), not -3"),
        (["--check-states", "--max-nodes", "0"], "--max-nodes: a whole number >= 1, not 0"),
    ],
)
def test_bad_counts_are_refused(argv, message, capsys):
    assert main(["explain", "--model", "lstm", "a good film", *argv]) == 2
    assert capsys.readouterr().err == f"npcomp explain: error: {message}\n"


def test_values_0_shows_the_norms_alone(capsys):
    assert main(["explain", "--model", "lstm", "a good film", "--values", "0"]) == 0
    assert "norm" in capsys.readouterr().out


def test_a_loss_at_its_floor_is_named_not_called_a_wrong_gradient(monkeypatch, capsys):
    """The matrix-space model with its head's weights 10^4 times larger (as
    training far can make them): labelled 0, the tree's root gets a
    probability below the smallest float64, its loss held at 708.4, and
    finite differences of the flat J disagree with the backward."""
    original = explain_run.model_and_trees

    def large_head(args):
        model, params, vocab, config, trees = original(args)
        params["softmax.W"][...] *= 1e4
        return model, params, vocab, config, trees

    monkeypatch.setattr(explain_run, "model_and_trees", large_head)
    tree = "(0 (2 a) (2 (2 b) (2 c)))"
    assert main(["explain", "--model", "matrix-space", "--check-states", tree]) == 1
    out = capsys.readouterr().out
    assert "loss J = 708.396" in out
    assert "ABOVE 1e-06 (the loss at its floor: see below)" in out
    assert (
        "not a wrong gradient: the loss is at its floor at node 2: the model gives its "
        "label a probability below 2.23e-308, the smallest float64, so its -log p is held "
        "at 708.4."
    ) in out
    assert main(["explain", "--model", "matrix-space", "--json", tree]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["floored"] == [[0, 2]] and not document["passed"]
    assert document["unchecked"].startswith("not a wrong gradient")
    # labelled with its prediction, the same model's tree is checked and passes
    assert main(["explain", "--model", "matrix-space", "a b c"]) == 0
    assert "not a wrong gradient" not in capsys.readouterr().out
