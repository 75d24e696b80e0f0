"""Every command's --help: it exits 0, says what the command does and ends
with examples, and every example is one the command line's parser accepts
(its options exist and take the values shown)."""

import contextlib
import io
import re
import shlex

import pytest

from npcomp.cli import build_parser, main


def commands() -> dict:
    parser = build_parser()
    subcommands = next(action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction")
    return dict(subcommands.choices)


def example_lines(help_text: str) -> list:
    """The `npcomp ...` lines of a help's examples block (a pipe's right side)."""
    block = help_text[help_text.index("\nexamples:\n") :]
    found = []
    for line in block.splitlines()[2:]:
        words = line.strip()
        if "npcomp " in words:
            command = words[words.index("npcomp ") :]
            # a comment beside the command, aligned in the same line
            found.append(command.split("   ")[0].strip())
    return found


@pytest.mark.parametrize("name", sorted(commands()))
def test_help_describes_the_command_and_ends_with_examples_that_parse(name, capsys):
    parser = commands()[name]
    with pytest.raises(SystemExit) as exit:
        main([name, "--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: npcomp {name}")
    assert parser.description and len(parser.description) > 20, name
    examples = example_lines(text)
    assert examples, f"npcomp {name} --help has no examples"
    for example in examples:
        argv = shlex.split(example)[1:]
        assert argv[0] == name, example
        with contextlib.redirect_stderr(io.StringIO()) as error:
            try:
                build_parser().parse_args(argv)
            except SystemExit as refused:
                raise AssertionError(f"{example}: {error.getvalue()}") from refused


def test_the_top_level_help_lists_every_command_and_its_examples_parse(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    for name in commands():
        assert f"    {name}" in text, name
    for example in example_lines(text):
        if "COMMAND" not in example:
            build_parser().parse_args(shlex.split(example)[1:])


def test_npcomp_gradcheck_offers_the_suites_options(capsys):
    """`npcomp gradcheck` is python -m gradcheck: the same options, passed on."""
    from npcomp.gradcheck.__main__ import main as suite

    with pytest.raises(SystemExit):
        suite(["--help"])
    suites = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", capsys.readouterr().out))
    ours = {
        option
        for action in commands()["gradcheck"]._actions
        for option in action.option_strings
        if option.startswith("--")
    }
    assert suites == ours
