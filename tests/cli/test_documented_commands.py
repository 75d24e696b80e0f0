"""Every `npcomp train` command printed in README.md, the site's guides
(docs/*.md), docs/RESULTS.md and the reproduced tables' reports (docs/results/*.md) is one the command line
accepts: its options exist, take the values shown, and apply to the model
named (the example files a document prints are written where its commands
read them, --train FILE).  Commands abbreviated with "..." or naming the model or task
by a placeholder are left out; placeholders for a seed, rate or directory get a
value.  Nothing trains: each command is built into its run configuration only."""

import re
import shlex
from pathlib import Path

import pytest

import npcomp.cli
import npcomp.data.readers.vectors
import npcomp.configuration.run_config

REPO_ROOT = Path(__file__).resolve().parents[2]
# the README and the site's pages its sections moved to
GUIDES = (
    "README.md",
    "docs/getting-started.md",
    "docs/own-data.md",
    "docs/sweeps.md",
    "docs/models.md",
    "docs/sick.md",
    "docs/plain-sentences.md",
)
REPORTS = tuple(
    sorted(
        str(path.relative_to(REPO_ROOT))  # the reports: TABLE.md beside TABLE.json
        for path in (REPO_ROOT / "docs" / "results").glob("*.md")
        if path.with_suffix(".json").is_file()
    )
)
DOCUMENTS = (*GUIDES, "docs/RESULTS.md", *REPORTS)
PLACEHOLDER_VALUES = {"S": "1", "R": "0.01", "A": "0.01", "B": "0.01", "PARSES": "parses/sst", "DIR": "data", "K": "0"}
# a table on a user's copy of a corpus names it in the data directory DATA_DIR:
# a few made-up phrases of its format stand in for it
DATA_DIR_FILES = {"DATA_DIR/mpqa/phrases.tsv": "text\tlabel\nvery good news\t4\nthe report\t2\nutterly flawed\t0\n"}


def dimension_in_the_name(path) -> int:
    """300 for glove.840B.300d.sick.txt."""
    found = re.search(r"\.(\d+)d\b", Path(path).name)
    assert found, f"{path}: no dimension in the name"
    return int(found[1])


def documented_commands(text: str) -> list:
    """The `npcomp train ...` commands of a Markdown text: inline code spans, and
    indented lines (joined across backslash continuations)."""
    text = re.sub(r"\\\n\s*", " ", text)
    commands = [" ".join(span.split()) for span in re.findall(r"`(npcomp train[^`]*)`", text)]
    commands += [line.strip() for line in text.splitlines() if line.startswith("    npcomp train")]
    return commands


def runnable(command: str) -> bool:
    words = command.split()
    return not (
        "..." in command
        or "(the same)" in command
        or "--resume" in words
        or any(words[i] in ("--model", "--task") and words[i + 1] in ("M", "T") for i in range(len(words) - 1))
    )


CASES = [
    (name, command)
    for name in DOCUMENTS
    for command in documented_commands((REPO_ROOT / name).read_text())
    if runnable(command)
]


def test_the_documents_print_commands():
    """The extraction finds the commands (a broken pattern would pass every case)."""
    assert sum(case[0] in GUIDES for case in CASES) >= 10
    assert any(case[0] == "README.md" for case in CASES)
    assert any("--train " in command for name, command in CASES if name == "docs/own-data.md")
    for name in REPORTS:  # a report prints one command per setting
        assert sum(case[0] == name for case in CASES) >= 1, name


def example_files(text: str) -> dict:
    """The files a document prints as examples (a fenced block named by its
    file: ```reviews.tsv), which its commands read (--train FILE)."""
    return dict(re.findall(r"^```([\w.-]+\.\w+)\n(.*?)^```", text, re.DOTALL | re.MULTILINE))


@pytest.mark.parametrize("document,command", CASES)
def test_documented_command_is_accepted(document, command, monkeypatch, tmp_path):
    for name, text in [*example_files((REPO_ROOT / document).read_text()).items(), *DATA_DIR_FILES.items()]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(npcomp.configuration.run_config, "vectors_file", lambda data_dir, name: Path(name))
    monkeypatch.setattr(npcomp.configuration.run_config, "_default_vectors", lambda data_dir, name: Path(name))
    # the files need not be here: their names say their dimension (glove.6B.50d...)
    monkeypatch.setattr(npcomp.data.readers.vectors, "vector_dimension", dimension_in_the_name)
    argv = [PLACEHOLDER_VALUES.get(word, word) for word in shlex.split(command)[1:]]
    args = npcomp.cli.build_parser().parse_args(argv)
    if args.help_defaults:
        return
    config = npcomp.cli.train_config(args)
    assert config["model"] == (args.model or "treelstm-nary")
