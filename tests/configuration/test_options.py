"""The option table (npcomp/configuration/options.py): the command line's parser, a sweep's
reading of its SPEC values, the range checks and the defaults all follow the
one declaration of each training option."""

import json

import pytest

from npcomp.cells import registry
from npcomp.cli import build_parser, main, train_config
from npcomp.configuration.checks import read
from npcomp.errors import ConfigError
from npcomp.configuration.defaults import COMMON, SHARED, defaults_for, with_defaults
from npcomp.configuration.options import OPTIONS, PAPER_SETTING, RESUMABLE, OptionFormError, command_line, form
from npcomp.configuration.run_config import build_config


def test_the_parser_takes_every_option_of_the_table_and_no_other_training_option():
    parser = build_parser()._subparsers._group_actions[0].choices["train"]
    dests = {action.dest for action in parser._actions}
    assert set(OPTIONS) <= dests
    assert dests - set(OPTIONS) == {"help", "out", "overwrite", "resume", "help_defaults", "quiet"}


@pytest.mark.parametrize(
    "name, text", [("dim", "x"), ("dim", "4.0"), ("lr", "fast"), ("optimizer", "bogus"), ("model", "nope")]
)
def test_text_a_sweep_gives_is_refused_as_the_parser_refuses_it(name, text, capsys):
    """A SPEC value is read as `npcomp train` reads its argument: the same message."""
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", OPTIONS[name].flag, text])
    parser_message = capsys.readouterr().err.splitlines()[-1]
    with pytest.raises(ConfigError) as refused:
        read(name, text)
    assert parser_message.endswith(f"argument {OPTIONS[name].flag}: {refused.value.reason}")


def test_values_read_as_their_text():
    assert read("lr", 0.05) == read("lr", "0.05") == 0.05
    assert read("dim", 4) == 4 and read("recurrent_dropout", 0.3) == [0.3]
    assert read("recurrent_dropout", "0.25,0.3") == [0.25, 0.3]
    assert read("fixed_embeddings", "true") is True and read("untied", False) is False
    with pytest.raises(OptionFormError, match="is a switch"):
        form("untied", 1)
    with pytest.raises(OptionFormError, match=r"takes a value \(--lr VALUE\)"):
        form("lr", True)
    with pytest.raises(OptionFormError, match="not an npcomp train option"):
        form("lrr", 0.1)


def test_a_command_line_made_from_options_parses_back_to_them():
    options = {
        "model": "bilstm",
        "task": "sst5",
        "lr": 0.05,
        "untied": True,
        "output_gate": False,
        "fixed_embeddings": True,
        "train_eval": False,
        "recurrent_dropout": "0.1,0.2",
        "vectors": "random",
    }
    args = build_parser().parse_args(["train", *command_line(options)])
    assert {name: getattr(args, name) for name in options} == {**options, "recurrent_dropout": "0.1,0.2"}
    # the default side of a switch with one flag needs none
    assert command_line({"train_eval": True}) == []


@pytest.mark.parametrize("name", [name for name, option in OPTIONS.items() if option.counts or option.kind is float])
def test_every_range_is_checked_with_its_message(name):
    option = OPTIONS[name]
    below = -1 if option.kind is int else float("nan")
    with pytest.raises(ConfigError) as refused:
        build_config("lstm", "synthetic", {name: below})
    assert refused.value.option == name and "must be" in refused.value.reason


def test_the_shared_defaults_are_the_tables():
    assert all(OPTIONS[name].default is not PAPER_SETTING for name in SHARED)
    assert COMMON == {name: OPTIONS[name].default for name in SHARED}
    # every option of a value every run shares is a shared setting or one a run
    # records; how a user's files are split is the file runs' alone
    valued = {
        name for name, option in OPTIONS.items() if option.default is not PAPER_SETTING and option.default is not None
    }
    assert valued - set(SHARED) == {"model", "task", "train_eval", "dev_fraction", "data_seed"}
    assert all(
        OPTIONS[name].tasks == ("files", "file-pairs", "file-pair-labels") for name in ("dev_fraction", "data_seed")
    )


@pytest.mark.parametrize(
    "model, task",
    [
        (model, task)
        for model, entry in registry.MODELS.items()
        for task in ("sst5", "sick", "synthetic")
        if not (task == "sick" and entry.word_matrices)
    ],
)  # no random vectors for SICK
def test_a_built_configuration_is_complete(model, task):
    config = build_config(model, task, {"vectors": "random"} if task == "sick" else {})
    assert with_defaults(config) == config
    assert all(
        name in config
        for name, option in OPTIONS.items()
        if option.default is PAPER_SETTING and name != "similarity_dim"
    )


def test_a_configuration_saved_before_an_option_existed_reads_as_its_default():
    config = build_config("lstm", "sst5", {})
    old = {
        key: value for key, value in config.items() if key not in ("evals_per_epoch", "train_eval", "neutral", "head")
    }
    assert with_defaults(old) == {
        **old,
        "evals_per_epoch": 1,
        "train_eval": True,
        "neutral": "unlabelled",
        "head": "softmax",
    }
    sick = build_config("lstm", "sick", {"vectors": "random"})
    assert "head" not in with_defaults(sick)  # the similarity head, always


def test_the_resumable_options_are_the_tables(tmp_path, capsys):
    from npcomp.runfiles.checkpoints import resumed_config

    saved = build_config("lstm", "synthetic", {"epochs": 2})
    # the resumable options a synthetic run has (a user's files are a file run's)
    changes = {
        name: saved[name] if name != "epochs" else 5
        for name, option in OPTIONS.items()
        if option.resumable and name in saved
    }
    assert set(changes) == set(RESUMABLE) - {"train", "dev", "test"}
    assert resumed_config(saved, changes)["epochs"] == 5
    with pytest.raises(ConfigError, match="it cannot take lr 0.5"):
        resumed_config(saved, {"lr": 0.5})


def test_help_texts_name_the_models_from_the_registry(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name, entry in registry.MODELS.items():
        if entry.tuned:
            assert f"{name} ({' or '.join(entry.tuned)} labels)" in text
        for protocol in entry.protocols:
            assert f"'{protocol}'" in text


def test_a_bare_command_trains_the_tables_default_model_and_task(capsys):
    assert main(["train", "--help-defaults"]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = defaults_for(OPTIONS["model"].default, OPTIONS["task"].default)
    assert printed == expected
    config = train_config(build_parser().parse_args(["train"]))
    assert (config["model"], config["task"]) == (OPTIONS["model"].default, OPTIONS["task"].default)


def test_the_table_and_the_parsers_load_no_numpy():
    """The command line reads its options before --threads sets the BLAS and
    numba thread counts: neither loads before the arguments are parsed."""
    from conftest import modules_loaded_by

    assert (
        modules_loaded_by(
            "import npcomp.configuration.options, npcomp.configuration.checks, npcomp.cli; "
            "npcomp.cli.build_parser().parse_args(['sweep', '--out', 'x', '--lr', '0.1'])",
            ("numpy", "numba"),
        )
        == []
    )


def test_the_choices_kept_beside_their_code_are_the_tables():
    """A choice list the option table cannot import (its module loads NumPy,
    and the table loads before NumPy) is tied to the table's here; the others
    have one home, the table (optimizers.py) or the data layer's names
    (``npcomp.data.datasets``, ``npcomp.data.text``), which the table and the
    code both read."""
    from npcomp.configuration.model_building import DTYPES
    from npcomp.data.readers.embeddings import OOV_POLICIES
    from npcomp.heads import HEADS
    from npcomp.models import AVERAGES

    tied = {"average": AVERAGES, "head": tuple(HEADS), "dtype": tuple(DTYPES), "oov": OOV_POLICIES}
    for name, choices in tied.items():
        assert set(OPTIONS[name].choices) == set(choices), name
