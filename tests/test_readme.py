"""The README as the front page: at most 200 lines, every link in it
resolving to a file of the repository, its Python example run as a doctest,
and every `npcomp` command it prints accepted by the command line's parser
(the training commands are built into their configurations by
test_documented_commands.py); and CI runs the README's install, test and
site-build commands as printed, in that order."""

import doctest
import re
import shlex
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_a_front_page():
    assert len(README.splitlines()) <= 200


def test_every_link_of_the_readme_resolves():
    links = re.findall(r"\]\(([^)\s]+)(?: \"[^\"]*\")?\)", README)
    local = [link.split("#")[0] for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 10
    missing = sorted({link for link in local if not (REPO_ROOT / link).exists()})
    assert not missing


def test_the_readme_python_example_runs():
    test = doctest.DocTestParser().get_doctest(README, {}, "README.md", "README.md", 0)
    assert len(test.examples) >= 5
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def readme_commands() -> list:
    """The README's `npcomp ...` command lines (indented blocks; a pipe's
    right side)."""
    commands = []
    for line in README.splitlines():
        if line.startswith("    ") and "npcomp " in line and ">>>" not in line:
            command = line.strip().split(" | ")[-1]
            if command.startswith("npcomp "):
                commands.append(command)
    return commands


@pytest.mark.parametrize("command", readme_commands())
def test_each_readme_command_is_one_the_parser_accepts(command):
    from npcomp.cli import build_parser

    build_parser().parse_args(shlex.split(command)[1:])


def test_the_readme_prints_commands():
    assert {command.split()[1] for command in readme_commands()} >= {"download", "train", "eval", "predict", "explain"}


def test_ci_runs_the_readmes_install_tests_and_site_build_in_order():
    """.ci/run holds the README's commands verbatim (the install, the test
    suite, the site's strict build), the site built after the tests."""
    printed = [line.strip() for line in README.splitlines() if line.startswith("    python -m ")]
    steps = {
        step: next((line for line in printed if line.startswith(f"python -m {step} ")), None)
        for step in ("pip", "pytest", "sphinx")
    }
    assert None not in steps.values(), printed
    assert steps["sphinx"].startswith("python -m sphinx -W ")
    ci = [line.strip() for line in (REPO_ROOT / ".ci" / "run").read_text().splitlines()]
    where = {step: ci.index(command) if command in ci else None for step, command in steps.items()}
    assert None not in where.values(), where
    assert where["pip"] < where["pytest"] < where["sphinx"], where
