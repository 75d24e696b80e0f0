"""docs/API.md's examples run as doctests: the documented Python API works
as shown (the ones that use scikit-learn where it is installed, each naming
the extra that installs it); and so do the worked examples of the cells'
pages, whose numbers are the cells' own (they cannot drift from the code)."""

import doctest
import importlib.util
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
DOCUMENT = DOCS / "API.md"
WORKED_EXAMPLES = ("cells/slstm.md", "cells/treelstm_nary.md")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


SKLEARN_EXTRA = 'pip install "npcomp[sklearn]"'


def code_blocks(test: doctest.DocTest) -> list:
    """The examples of a page grouped into its code blocks (examples on
    consecutive lines)."""
    blocks = []
    for example in test.examples:
        previous = blocks[-1][-1] if blocks else None
        if previous is not None and example.lineno == (
            previous.lineno + previous.source.count("\n") + previous.want.count("\n")
        ):
            blocks[-1].append(example)
        else:
            blocks.append([example])
    return blocks


def needs_sklearn(block: list) -> bool:
    return any(re.search(r"\bsklearn\b", example.source) for example in block)


# the committed runs a report is rebuilt from: a checkout's, not a wheel's
COMMITTED_RUNS = DOCS / "results"


def needs_checkout(block: list) -> bool:
    return any('"docs" / "results"' in example.source for example in block)


def test_the_api_documents_examples_run():
    """Every example; those of a block that uses scikit-learn only where it
    is installed (a wheel's user may not have the sklearn extra)."""
    text = DOCUMENT.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, DOCUMENT.name, str(DOCUMENT), 0)
    blocks = code_blocks(test)
    left_out = [block for block in blocks if needs_sklearn(block)]
    assert len(left_out) >= 4
    sklearn_installed = importlib.util.find_spec("sklearn") is not None
    checkout = COMMITTED_RUNS.is_dir()
    assert any(needs_checkout(block) for block in blocks)
    if not sklearn_installed or not checkout:
        test.examples = [
            example
            for block in blocks
            if (sklearn_installed or not needs_sklearn(block)) and (checkout or not needs_checkout(block))
            for example in block
        ]
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 20
    assert result.failed == 0
    not_run = []
    if not sklearn_installed:
        not_run.append(f"the {len(left_out)} blocks that use scikit-learn (it is not installed: {SKLEARN_EXTRA})")
    if not checkout:
        not_run.append("the report rebuilt from committed runs (they are a checkout's docs/results/)")
    if not_run:
        pytest.skip(f"{result.attempted} examples passed; not run: " + "; ".join(not_run))


def test_each_scikit_learn_example_names_its_extra():
    """The paragraph before each block that uses scikit-learn says how to
    install it."""
    text = DOCUMENT.read_text(encoding="utf-8")
    lines = text.splitlines()
    test = doctest.DocTestParser().get_doctest(text, {}, DOCUMENT.name, str(DOCUMENT), 0)
    for block in filter(needs_sklearn, code_blocks(test)):
        start = block[0].lineno
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        paragraph = []
        while before >= 0 and lines[before].strip():
            paragraph.insert(0, lines[before])
            before -= 1
        assert SKLEARN_EXTRA in " ".join(" ".join(paragraph).split()), (
            f"docs/API.md line {start + 1}: {block[0].source.strip()}"
        )


@pytest.mark.parametrize("page", WORKED_EXAMPLES)
def test_the_worked_examples_run(page):
    result = doctest.testfile(str(DOCS / page), module_relative=False, optionflags=FLAGS)
    assert result.attempted > 30
    assert result.failed == 0


def test_the_gradient_path_figures_are_drawn_and_shown(tmp_path):
    """docs/cells/gradient_paths.py draws both figures (PNG); the committed
    ones are on the pages that show them."""
    pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is absent")
    import importlib.util

    spec = importlib.util.spec_from_file_location("gradient_paths", DOCS / "cells" / "gradient_paths.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    assert figures.main(["--out", str(tmp_path)]) == 0
    for name in figures.FIGURES:
        drawn = tmp_path / name
        assert drawn.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and drawn.stat().st_size > 20_000
        assert (DOCS / "cells" / name).is_file()
        page = DOCS / "cells" / (name.replace("_gradient_paths.png", ".md"))
        assert f"]({name})" in page.read_text()
    # every arrow of a figure names the equation it reverses
    for _, _, arrows, _, _ in figures.FIGURES.values():
        assert all("revers" in label for _, _, _, label, _, _ in arrows if label)
