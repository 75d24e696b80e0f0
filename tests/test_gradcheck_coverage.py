"""No silent passes: every cell option and every parameter block (and gate
sub-block) of every model is exercised by some gradient-check setting -- a
row whose gradients are both exactly 0 checks nothing -- and ``python -m
gradcheck`` marks such rows "unexercised", counts them, and fails a block
that no setting exercises or an option no setting gives."""

from __future__ import annotations

import dataclasses

import pytest

import gradcheck.__main__ as gradcheck_main
from gradcheck import suite
from gradcheck.suite import CHECKED_MODELS, exercised, settings, unexercised_options
from npcomp.cells import registry


@pytest.mark.parametrize("name", CHECKED_MODELS)
def test_every_option_is_given_by_some_setting(name):
    assert unexercised_options(name) == []


@pytest.mark.parametrize("name", CHECKED_MODELS)
def test_every_parameter_block_is_exercised_by_some_setting(name):
    names, moved = set(), set()
    for setting in settings(name):
        every, nonzero = exercised(setting)
        names |= every
        moved |= nonzero
    assert names - moved == set()


def _only(monkeypatch, name, variations):
    """The registry entry of ``name`` with only these gradcheck variations."""
    entry = dataclasses.replace(registry.model(name), gradcheck=tuple(variations))
    monkeypatch.setitem(registry.MODELS, name, entry)


def test_the_coverage_checks_can_fail(monkeypatch):
    """S-LSTM-RR alone (right-branching trees: every left child a leaf) never
    exercises the left peepholes; the N-ary Tree-LSTM without its chain and
    relatedness settings never changes its arity or output gate."""
    _only(monkeypatch, "slstm", registry.rebracketed_checks(input_dim=3)[2:])
    names, moved = set(), set()
    for setting in settings("slstm"):
        every, nonzero = exercised(setting)
        names |= every
        moved |= nonzero
    assert {"cell.W.ci.L", "cell.W.cfl.L", "cell.W.cfr.L"} <= names - moved
    entry = dataclasses.replace(
        registry.model("treelstm-nary"), sick=None, gradcheck=tuple(registry.objective_checks())
    )
    monkeypatch.setitem(registry.MODELS, "treelstm-nary", entry)
    missing = unexercised_options("treelstm-nary")
    assert any(option.startswith("arity") for option in missing)
    assert any(option.startswith("output_gate") for option in missing)
    assert not any(option.startswith("forget_bias") for option in missing)  # initialisation


def test_gradcheck_prints_unexercised_rows_and_fails_an_idle_block(monkeypatch, capsys):
    _only(monkeypatch, "slstm", registry.rebracketed_checks(input_dim=3)[3:])
    assert gradcheck_main.main(["--model", "slstm"]) == 1
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("slstm")]
    assert any("cell.W.ci.L" in line and "unexercised" in line for line in rows)
    idle = [line for line in rows if "every setting" in line]
    assert idle and all(line.endswith("FAIL") for line in idle)
    summary = out.strip().splitlines()[-1]
    count = sum(line.split()[-1] == "unexercised" for line in rows if "every setting" not in line)
    assert summary.startswith("FAILED") and f"{count} of " in summary
    assert "rows unexercised" in summary


def test_gradcheck_passes_and_counts_on_a_fully_exercised_model(monkeypatch, capsys):
    assert gradcheck_main.main(["--model", "matrix-space"]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith("passed: 0 failure(s)") and "rows unexercised" in summary
    assert suite.unchecked_models(["matrix-space"]) == []
