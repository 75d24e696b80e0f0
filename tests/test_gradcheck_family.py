"""The recursive family's gradient-check settings exercise every block of
their model, each setting on its own: no row of ``python -m gradcheck
--model mvrnn|rae|drnn|dtrnn|sdtrnn`` is "unexercised" (both gradients
exactly 0) at the command's seed or at the suite's (tests/test_gradients.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcheck.suite import Setting, exercised, random_trees, settings

FAMILY = ("mvrnn", "rae", "drnn", "dtrnn", "sdtrnn")
SEEDS = (0, 3)  # python -m gradcheck's default, and tests/test_gradients.py's
CASES = [(model, setting) for model in FAMILY for setting in settings(model)]


@pytest.mark.parametrize("model,setting", CASES, ids=[f"{m}-{s.describe()}" for m, s in CASES])
def test_every_block_is_exercised_by_each_setting(model, setting):
    for seed in SEEDS:
        names, moved = exercised(setting, seed=seed)
        assert names - moved == set(), f"seed {seed}"


def test_a_rebracketed_or_constituency_only_setting_would_leave_blocks_unread():
    """What the settings avoid: right-branching trees never give the DRNN an
    inner left child, constituency trees never give the DT-RNN a child left
    of its (wordless) head."""
    drnn = Setting(
        "drnn",
        input_dim=4,
        hidden_dim=3,
        activation="tanh",
        supervision="root",
        structure="right",
        extra=dict(layers=2),
    )
    names, moved = exercised(drnn)
    assert names - moved == {"cell.W.1.L"}
    dtrnn = Setting("dtrnn", input_dim=4, hidden_dim=3, supervision="root")
    names, moved = exercised(dtrnn)
    assert {"cell.W.l1", "cell.W.l2", "cell.W.l3"} <= names - moved


def test_constituency_and_dependency_trees_mix_both_layouts():
    trees = random_trees(Setting("dtrnn", trees="constituency and dependency"), np.random.default_rng(0))
    wordless = [bool((tree.token_index < 0).any()) for tree in trees]
    assert any(wordless) and not all(wordless)
