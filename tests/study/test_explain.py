"""`npcomp explain`: one forward and backward pass on a tree written on the
command line, every quantity from the cell itself, and every parameter's
gradient within 1e-6 of central differences."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npcomp.cells import registry
from npcomp.cli import main
from npcomp.study.errata import installed_file

# the README's example: an inner left child, so every term of every cell is used
SENTENCE = "(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))"
# a hand-written dependency parse in SICK's .parents convention: "a man is
# playing a guitar", headed by "playing"
DEPENDENCY = ("a man is playing a guitar", "2 4 4 0 6 4")


def _explain(capsys, *arguments) -> dict:
    status = main(["explain", *arguments, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def _tree_models() -> list:
    return sorted(name for name, entry in registry.MODELS.items() if entry.composes == "binary")


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_every_model_passes_its_check_on_the_sentence(name, capsys):
    """Every one of the models explains "not really very good" (its chain for a
    sequence model, a dependency parse for the Child-Sum Tree-LSTM)."""
    arguments = ["--model", name, "--seed", "3"]
    if registry.model(name).composes == "any":
        arguments += ["--parents", DEPENDENCY[1], DEPENDENCY[0]]
    else:
        arguments.append(SENTENCE)
    document = _explain(capsys, *arguments)
    assert document["passed"] and document["tolerance"] == 1e-6
    assert max(check["finite_difference_error"] for check in document["parameters"]) <= 1e-6
    assert {check["name"] for check in document["parameters"]} >= {"embedding"}
    (sentence,) = document["sentences"]
    nodes = sentence["nodes"]
    assert nodes[-1]["children"] or registry.model(name).composes == "sequence"
    assert sentence["forward"] and sentence["backward"]
    for term in sentence["forward"] + sentence["backward"]:
        assert len(term["values"]) == len(nodes)
    labelled = [node for node in nodes if node["label"] is not None]
    assert labelled and all(node["loss"] is not None for node in labelled)
    assert sum(node["loss"] for node in labelled) == pytest.approx(document["loss"])


def test_terms_are_the_cells_own(capsys):
    """The Constituency Tree-LSTM's root: h = o * tanh(c) from the printed
    quantities, and eps_h at the root is the head's gradient alone."""
    document = _explain(capsys, "--model", "treelstm-nary", SENTENCE)
    sentence = document["sentences"][0]
    forward = {term["symbol"]: term for term in sentence["forward"]}
    root = len(sentence["nodes"]) - 1
    o, c, h = (np.array(forward[symbol]["values"][root]) for symbol in ("o", "c", "h"))
    np.testing.assert_allclose(h, o * np.tanh(c), rtol=1e-12)
    assert forward["i"]["equation"] == "9" and forward["f_l"]["values"][0] is None
    backward = [term["symbol"] for term in sentence["backward"]]
    assert backward[:2] == ["eps_h", "eps_c"] and "delta_f_r" in backward


def test_terminal_output_names_symbols_and_the_verdict(capsys):
    assert main(["explain", "--model", "slstm", SENTENCE]) == 0
    out = capsys.readouterr().out
    assert "forward (children before parents)" in out and "backward (parents first)" in out
    assert 'node 6 "not really very good"' in out
    assert "every parameter within 1e-06" in out and "warning" not in out


def test_one_node_in_full(capsys):
    assert main(["explain", "--model", "treelstm-nary", "--dim", "7", "--node", "5", SENTENCE]) == 0
    out = capsys.readouterr().out
    assert 'node 5 "very good"' in out and 'node 6 "' not in out
    line = next(line for line in out.splitlines() if line.strip().startswith("h "))
    assert line.count(",") == 6 and "..." not in line  # all seven values


def test_a_plain_sentence_and_a_file_of_trees(tmp_path, capsys):
    trees = tmp_path / "trees.txt"
    trees.write_text(f"{SENTENCE}\n(1 (2 a) (1 (0 bad) (2 film)))\n")
    document = _explain(capsys, "--model", "rntn", str(trees))
    assert [len(s["nodes"]) for s in document["sentences"]] == [7, 5]
    document = _explain(capsys, "--model", "lstm", "not very good")
    nodes = document["sentences"][0]["nodes"]
    assert [node["word"] for node in nodes] == ["not", "very", "good"]
    # unlabelled: the root is labelled with the model's own prediction
    assert nodes[-1]["label"] == nodes[-1]["predicted"]


def test_sampled_entries(capsys):
    document = _explain(capsys, "--model", "treelstm-nary", "--dim", "6", "--entries", "5", SENTENCE)
    assert all(check["entries_checked"] <= 5 for check in document["parameters"])
    assert document["entries"] == 5


def test_a_trained_run(tmp_path, capsys):
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--task",
                "synthetic",
                "--model",
                "treelstm-nary",
                "--dim",
                "6",
                "--embedding-dim",
                "6",
                "--epochs",
                "1",
                "--quiet",
                "--out",
                str(run),
            ]
        )
        == 0
    )
    capsys.readouterr()
    document = _explain(capsys, "--run", str(run), "(2 (2 a) (2 film))")
    assert document["model"] == "treelstm-nary" and document["dim"] == 6
    assert document["passed"]


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--model", "treelstm-nary", "--run", "x", SENTENCE], "exactly one of"),
        (["--model", "treelstm-childsum", "--parents", "2 0", "a man is"], "2 heads for 3 words"),
        (["--model", "treelstm-nary", "--node", "9", SENTENCE], "nodes 0..6"),
        (["--model", "treelstm-nary", "--entries", "none", SENTENCE], "--entries"),
        (["--model", "treelstm-nary", "(3 (2 not) (3 very"], "TREE"),
    ],
)
def test_bad_input_is_named(arguments, message, capsys):
    assert main(["explain", *arguments]) in (1, 2)
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_page(tmp_path, capsys):
    page = tmp_path / "slstm.html"
    assert main(["explain", "--model", "slstm", "--html", str(page), SENTENCE]) == 0
    text = page.read_text()
    assert text.count('class="node"') == 7 and "delta" in text and "http" not in text
    before = page.stat().st_mtime_ns
    assert main(["explain", "--model", "slstm", "--html", str(page), SENTENCE]) == 1
    assert "already exists" in capsys.readouterr().err and page.stat().st_mtime_ns == before
    assert main(["explain", "--model", "slstm", "--html", str(page), "--overwrite", SENTENCE]) == 0


def test_errata_are_tagged_where_they_apply(capsys):
    """The N-ary Tree-LSTM's c: E2 at the leaves (c = i u, no forget gate),
    E3 at a unary node (a missing child's zeros), nothing at a node with two
    children; the S-LSTM's eps_c: Z3 at every memory block, Z1 too at a
    right child's (eq. 14's own term), none at a leaf.  Each with its text."""
    document = _explain(capsys, "--model", "treelstm-nary", "(3 (2 (2 not)) (3 (3 very) (4 good)))")
    nodes = document["sentences"][0]["nodes"]
    c = next(t for t in document["sentences"][0]["forward"] if t["symbol"] == "c")
    for node, ids in zip(nodes, c["node_errata"]):
        kids = len(node["children"])
        assert ids == {0: "E2", 1: "E3", 2: ""}[kids], (node["span"], ids)
    assert c["erratum"] in ("E2, E3", "E3, E2")
    # the copy installed with the package (npcomp/study/errata_pages/), named relative to
    # the package's directory (no machine's path); here, a link to docs/
    where = document["errata"]["E2"]["where"]
    assert where == "npcomp/study/errata_pages/EQUATIONS.md"
    assert installed_file(where).resolve() == (Path(__file__).resolve().parents[2] / "docs" / "EQUATIONS.md").resolve()
    assert document["errata"]["E2"]["text"].startswith("Input only at the leaves")
    document = _explain(capsys, "--model", "slstm", SENTENCE)
    nodes = document["sentences"][0]["nodes"]
    eps_c = next(t for t in document["sentences"][0]["backward"] if t["symbol"] == "eps_c")
    by_span = {node["span"]: ids for node, ids in zip(nodes, eps_c["node_errata"])}
    assert by_span == {
        "not": "",
        "really": "",
        "very": "",
        "good": "",
        "not really": "Z3",
        "very good": "Z1, Z3",
        "not really very good": "Z3",
    }
    assert "eps_t^h" in document["errata"]["Z1"]["text"]


def test_the_terminal_shows_each_cited_erratum(capsys):
    assert main(["explain", "--model", "slstm", SENTENCE]) == 0
    out = capsys.readouterr().out
    assert "  [Z3] g'(c_t) is tanh' at c_t" in out and "errata_pages/cells/slstm.md)" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("eps_c") and "[" in line.split("norm")[0])
    assert "(13, 14) [Z3]" in line or "(13, 14) [Z1, Z3]" in line
