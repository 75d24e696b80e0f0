"""docs/API.md's examples run as doctests: the documented Python API works
as shown."""
import doctest
from pathlib import Path

DOCUMENT = Path(__file__).resolve().parent.parent / "docs" / "API.md"


def test_the_api_documents_examples_run():
    result = doctest.testfile(str(DOCUMENT), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 20
    assert result.failed == 0
