"""The model registry: every model declared once, and what reads it (the
gradient check, the defaults, the configuration check, the command line)
agrees with the cells themselves."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

import gradcheck.__main__ as gradcheck_main
from gradcheck.suite import CHECKED_MODELS
from gradcheck.suite import settings, unchecked_models
from npcomp.cells import cell_class, make_cell, registry
from npcomp.cells.interface import EVERY_LEAF, EVERY_NODE, LEAVES_ONLY, Cell
from npcomp.configuration.checks import check
from npcomp.errors import ConfigError
from npcomp.configuration.defaults import TUNED_TASKS, defaults_for, protocols
from conftest import modules_loaded_by

NAMES = sorted(registry.MODELS)
# what a declared structure means for the cell's own structure check
COMPOSES_CHECKS = {"binary": (2, LEAVES_ONLY), "sequence": (1, EVERY_NODE), "any": (None, EVERY_LEAF)}


def test_the_gradient_check_covers_exactly_the_registry():
    assert set(CHECKED_MODELS) == set(registry.MODELS)
    assert unchecked_models() == []
    assert all(settings(name) for name in NAMES)


def test_a_model_registered_without_gradient_check_settings_fails_the_check(monkeypatch, capsys):
    planted = dataclasses.replace(registry.MODELS["mean-vectors"], name="planted", gradcheck=(), sick=None)
    monkeypatch.setitem(registry.MODELS, "planted", planted)
    assert unchecked_models() == ["planted"]
    assert gradcheck_main.main(["--model", "all"]) == 1
    assert "no gradient-check settings for planted" in capsys.readouterr().out


def test_gradcheck_exits_1_on_a_planted_gradient_error(monkeypatch, capsys):
    assert gradcheck_main.main(["--model", "mean-vectors"]) == 0
    cls = cell_class("mean-vectors")
    right = cls.backward

    def off_by_a_tenth_percent(self, *args, **kwargs):
        return right(self, *args, **kwargs) * 1.001

    monkeypatch.setattr(cls, "backward", off_by_a_tenth_percent)
    assert gradcheck_main.main(["--model", "mean-vectors"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "FAILED" in out.splitlines()[-1]


@pytest.mark.parametrize("name", NAMES)
def test_the_cell_is_what_its_entry_declares(name):
    entry = registry.model(name)
    cls = cell_class(name)
    assert issubclass(cls, Cell) and cls.name == name
    # every declared option is a constructor argument
    accepted = set(inspect.signature(cls.__init__).parameters)
    if "direction_options" in accepted:  # the bidirectional cells pass the rest on
        accepted |= set(inspect.signature(cls.direction_cell.__init__).parameters)
    assert set(entry.options) <= accepted
    d = 2 if name == "matrix-space" else 3
    # words that are matrices (and vectors too): d^2 (+ d) numbers
    d_x = (d * d + (d if entry.word_vectors else 0)) if entry.word_matrices else 3
    cell = make_cell(name, d_x, d)
    assert bool(cell.recurrent_widths()) == entry.recurrent
    assert (cell.max_children, cell.words) == COMPOSES_CHECKS[entry.composes]
    if entry.leaves == "word":  # a leaf's state is its word vector: d = d_x
        assert make_cell(name, 4, 4).output_dim == 4


def test_make_cell_refuses_options_a_model_does_not_take():
    with pytest.raises(ValueError, match="rntn takes no option activation"):
        make_cell("rntn", 3, 3, activation="tanh")
    with pytest.raises(ValueError, match="rnn: activation must be one of"):
        make_cell("rnn", 3, 3, activation="softsign")
    make_cell("rnn", 3, 3, activation=None)  # None: not given


@pytest.mark.parametrize("name", NAMES)
def test_every_default_configuration_passes_the_check(name):
    for task in ("sst5", "sst2", "synthetic", "sick"):
        for protocol in protocols(name):
            if protocol == "tuned":
                continue
            config = defaults_for(name, task, protocol)
            check(dict(config, model=name, task=task))
        for supervision in registry.model(name).tuned:
            if task in TUNED_TASKS:
                config = defaults_for(name, task, "tuned", supervision)
                check(dict(config, model=name, task=task))


@pytest.mark.parametrize("name", sorted(name for name in NAMES if registry.model(name).tuned))
def test_a_bare_command_takes_the_setting_chosen_on_dev(name):
    """Where a model has a setting chosen on dev for a supervision mode, a
    bare command on the SST takes it, says so, and ``--protocol paper``
    gives the printed one; other tasks keep the paper's."""
    entry = registry.model(name)
    for supervision, tuned in entry.tuned.items():
        config = defaults_for(name, "sst5", supervision=supervision)
        assert config["protocol"] == "tuned" and tuned["source"] in config["source"]
        assert all(config[key] == value for key, value in tuned.items() if key != "source")
        printed = defaults_for(name, "sst5", "paper", supervision)
        assert printed["protocol"] == "paper"
        assert {key: printed[key] for key in tuned if key != "source"} == {
            key: entry.defaults.get(key, printed[key]) for key in tuned if key != "source"
        }
        assert defaults_for(name, "synthetic", supervision=supervision)["protocol"] == "paper"


def test_the_check_names_a_cell_option_the_model_does_not_take():
    config = dict(defaults_for("rntn", "sst5"), model="rntn", task="sst5")
    with pytest.raises(ConfigError, match="does not apply to rntn") as error:
        check(dict(config, untied=True))
    assert error.value.option == "untied"
    config = dict(defaults_for("rnn", "sst5"), model="rnn", task="sst5")
    with pytest.raises(ConfigError, match="rnn takes one of tanh, relu, identity, sigmoid"):
        check(dict(config, activation="softsign"))
    with pytest.raises(ConfigError, match="does not apply to rntn"):
        check(dict(defaults_for("rntn", "sst5"), model="rntn", task="sst5", recurrent_dropout=[0.3]))


def test_the_registry_loads_neither_numpy_nor_the_cells():
    assert (
        modules_loaded_by("import npcomp.cells.registry, npcomp.cells", ("numpy", "numba", "npcomp.cells.lstm")) == []
    )


def test_an_entry_with_unknown_trees_or_option_is_refused():
    entry = registry.MODELS["rnn"]
    with pytest.raises(ValueError, match="composes must be one of"):
        dataclasses.replace(entry, composes="graph")
    with pytest.raises(ValueError, match="unknown options"):
        dataclasses.replace(entry, options={"colour": None})


def test_sick_structures_follow_what_the_cells_compose():
    assert registry.sick_structure("treelstm-childsum") == "dependency"
    assert registry.sick_structure("mean-vectors") == "dependency"
    assert registry.sick_structure("treelstm-nary") == "constituency"
    assert all(
        registry.sick_structure(name) == "chain" for name in NAMES if registry.model(name).composes == "sequence"
    )
    assert np.all([defaults_for(name, "sick")["structure"] == registry.sick_structure(name) for name in NAMES])


def test_every_activation_an_entry_offers_is_in_the_table_of_activations():
    from npcomp.cells.reference.functions import ACTIVATIONS

    offered = {name for entry in registry.MODELS.values() for name in entry.options.get("activation") or ()}
    assert offered and offered <= set(ACTIVATIONS)
    assert registry.choices("activation") == tuple(
        dict.fromkeys(name for entry in registry.MODELS.values() for name in entry.options.get("activation") or ())
    )
