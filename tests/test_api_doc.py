"""docs/API.md's examples run as doctests: the documented Python API works
as shown; and so do the worked examples of the cells' pages, whose numbers
are the cells' own (they cannot drift from the code)."""
import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
DOCUMENT = DOCS / "API.md"
WORKED_EXAMPLES = ("cells/slstm.md", "cells/treelstm_nary.md")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_api_documents_examples_run():
    result = doctest.testfile(str(DOCUMENT), module_relative=False, optionflags=FLAGS)
    assert result.attempted > 20
    assert result.failed == 0


@pytest.mark.parametrize("page", WORKED_EXAMPLES)
def test_the_worked_examples_run(page):
    result = doctest.testfile(str(DOCS / page), module_relative=False, optionflags=FLAGS)
    assert result.attempted > 30
    assert result.failed == 0
