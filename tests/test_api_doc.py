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


def test_the_gradient_path_figures_are_drawn_and_shown(tmp_path):
    """docs/cells/gradient_paths.py draws both figures (PNG); the committed
    ones are on the pages that show them."""
    pytest.importorskip("matplotlib", reason="matplotlib (the plot extra) is absent")
    import importlib.util
    spec = importlib.util.spec_from_file_location("gradient_paths",
                                                  DOCS / "cells" / "gradient_paths.py")
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
