"""What ``npcomp explain`` concludes beyond its checks' rows
(npcomp/study/findings.py): a term that is not the sum of its parts is
marked at its node (the RNTN's, the BiLSTM's and the Child-Sum Tree-LSTM's
planted bugs; never on an honest backward); a failing parameter with every
node's terms agreeing puts the error after the states and names the word
rows that disagree; a backward that drops a part gets no warning blaming
the tree for leaving it unused."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcheck.planted import BUGS, kernel_bug, planted
from npcomp.cli import main

TREE = "(3 (2 (2 not) (2 really)) (3 (3 very) (4 good)))"
CHAIN = "(3 (2 not) (3 (3 very) (4 good)))"


def _explain(capsys, *arguments) -> dict:
    status = main(["explain", "--json", *arguments])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    document["status"], document["stderr"] = status, captured.err
    return document


@pytest.fixture
def childsum_drops_forget_errors(monkeypatch):
    """The Child-Sum backward without eq. 4's error to the children's h:
    (U_f)^T delta_fk never reaches h_k."""
    from npcomp.cells import treelstm_childsum

    def make(kernel, forest):
        def route(first_edge, edge_child, d_h_tilde, d_h_child, d_h, start, stop):
            kernel(first_edge, edge_child, d_h_tilde, np.zeros_like(d_h_child), d_h, start, stop)

        return route

    wrap = kernel_bug("treelstm_childsum", "_route_to_children", make)
    monkeypatch.setattr(
        treelstm_childsum.TreeLSTMChildSum, "backward", wrap(treelstm_childsum.TreeLSTMChildSum.backward)
    )


@pytest.fixture
def bilstm_backward_reading_gets_no_head_error(monkeypatch):
    """The BiLSTM's backward reading run without its half of the head's error."""
    from npcomp.cells import bilstm

    backward = bilstm.BiLSTM.backward

    def buggy(self, params, forest, cache, d_out, grads):
        d_out = d_out.copy()
        d_out[:, self.direction.output_dim :] = 0.0
        return backward(self, params, forest, cache, d_out, grads)

    monkeypatch.setattr(bilstm.BiLSTM, "backward", buggy)


def _first_mismatch(document) -> dict:
    assert document["parts_mismatches"], "no term marked"
    return document["parts_mismatches"][0]


def test_the_rntns_dropped_transpose_half_is_marked_at_the_child(capsys):
    with planted(BUGS["rntn-transpose-half-dropped"]):
        document = _explain(capsys, "--model", "rntn", "--dim", "3", TREE)
    assert document["status"] == 1
    first = _first_mismatch(document)
    assert (first["node"], first["term"]) == (2, "eps_h")  # node 6's first inner child


def test_the_childsum_dropped_forget_error_is_marked(capsys, childsum_drops_forget_errors):
    document = _explain(capsys, "--model", "treelstm-childsum", "--parents", "2 0 4 2", "not really very good")
    first = _first_mismatch(document)
    assert first["term"] == "eps_h" and document["status"] == 1
    # a child of the root (word 2, "really"): node 1 reads it
    nodes = document["sentences"][0]["nodes"]
    assert nodes[first["node"]]["children"] or nodes[first["node"]]["word"]


def test_the_bilstm_bug_is_marked_and_the_tree_not_blamed(capsys, bilstm_backward_reading_gets_no_head_error):
    document = _explain(capsys, "--model", "bilstm", "--tree", "chain", "not very good")
    first = _first_mismatch(document)
    assert first["term"].endswith("^B") and document["status"] == 1
    assert not any("unused" in warning for warning in document["warnings"])
    main(["explain", "--model", "bilstm", "--tree", "chain", "--parts", "not very good"])
    out = capsys.readouterr().out
    assert "!= its" in out and "NOT the sum of its parts" in out
    assert "the backward adds them up wrongly there" in out


@pytest.mark.parametrize("model", ["rntn", "treelstm-nary", "slstm", "lstm-rnn", "bilstm", "treelstm-childsum"])
def test_honest_backwards_are_the_sums_of_their_parts(capsys, model):
    tree = ["--tree", "chain", "not very good"] if model == "bilstm" else [TREE]
    dim = ["--dim", "3"]
    document = _explain(capsys, "--model", model, *dim, *tree)
    assert document["parts_mismatches"] == [] and document["status"] == 0
    for sentence in document["sentences"]:
        for record in sentence["parts"]:
            errors = [error for error in record["sum_error"] if error is not None]
            assert errors and max(errors) < 1e-12


def _doubled_weight_gradient(kernel, forest):
    def add_product(out, a, b):
        kernel(out, a, b)
        kernel(out, a, b)

    return add_product


def test_a_weight_gradient_bug_is_after_the_states(capsys):
    """dU and dW added twice: every node's terms agree, U and W do not."""
    from gradcheck.planted import PlantedBug, children

    bug = PlantedBug(
        "doubled",
        "treelstm-nary",
        "",
        "",
        children,
        kernel_bug("treelstm_nary", "add_product", _doubled_weight_gradient),
    )
    with planted(bug):
        assert main(["explain", "--model", "treelstm-nary", "--check-local", TREE]) == 1
    out = capsys.readouterr().out
    assert "every node's local checks pass" in out
    assert (
        "every node's error terms agree, yet cell.W, cell.U do not: the error is in the "
        "weight or word-vector gradients" in out
    )


def test_the_word_rows_that_disagree_are_named(capsys, monkeypatch):
    from npcomp.cells import treelstm_nary

    backward = treelstm_nary.TreeLSTMNary.backward

    def buggy(self, params, forest, cache, d_h, grads):
        d_x = backward(self, params, forest, cache, d_h, grads)
        d_x[-1] *= 2.0  # the last of the distinct words read (the largest id)
        return d_x

    monkeypatch.setattr(treelstm_nary.TreeLSTMNary, "backward", buggy)
    assert main(["explain", "--model", "treelstm-nary", "--check-states", TREE]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "embedding gradient disagrees" in line)
    assert line.count("(row ") == 1
    assert "every node's error terms agree, yet embedding do not" in out


def test_childsum_checks_the_bracketed_tree_as_written(capsys):
    """No re-parse (nor a right-branching fallback): the brackets and labels
    given are the tree explained, and stderr says so."""
    document = _explain(capsys, "--model", "treelstm-childsum", TREE)
    nodes = document["sentences"][0]["nodes"]
    assert [node["span"] for node in nodes] == [
        "not",
        "really",
        "not really",
        "very",
        "good",
        "very good",
        "not really very good",
    ]
    assert [node["label"] for node in nodes] == [2, 2, 2, 3, 4, 3, 3]
    err = document["stderr"]
    assert "checked as written" in err and "plain sentences" not in err


def test_the_page_opens_with_the_first_failing_check_and_rings_its_node(tmp_path, capsys):
    """The summary line at the top, the node ringed on the tree and pinned
    (its panel shows the vectors), and no path of this machine anywhere."""
    import re
    from pathlib import Path

    import npcomp

    page = tmp_path / "page.html"
    with planted(BUGS["rntn-transpose-half-dropped"]):
        assert main(["explain", "--model", "rntn", "--dim", "3", "--check-local", "--html", str(page), TREE]) == 1
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    verdict = re.search(r'<p class="verdict fail" role="alert">(.*?)</p>', text).group(1)
    assert text.index("verdict fail") < text.index('class="sentence"')
    assert 'First failing local check: node 6 "not really very good"' in verdict
    assert "node 6 of sentence 1, ringed on its tree" in verdict
    ringed = re.findall(
        r'<g class="node" data-node="(\d+)"[^>]*>(?:(?!</g>).)*?'
        r'class="culprit"',
        text,
    )
    assert ringed == ["6"]
    document = json.loads(
        re.search(
            r'<script type="application/json" id="document">(.*?)'
            r"</script>",
            text,
            re.S,
        ).group(1)
    )
    assert document["verdict"]["node"] == 6
    failing = [
        check for check in document["local_checks"] if check["node"] == 6 and check["error"] > document["tolerance"]
    ]
    assert failing and len(failing[0]["analytic"]) == 3 == len(failing[0]["numeric"])
    here = str(Path(npcomp.__file__).resolve().parent.parent)
    assert here not in text and str(Path.home()) + "/" not in text
    assert all(not entry["where"].startswith("/") for entry in document["errata"].values())
