"""The reference package (npcomp/cells/reference): one module per registered
cell, taking only options the cell takes, and importing nothing but NumPy,
npcomp.formats and its own modules (so it stays an independent oracle of the
cells the tests compare it with)."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from npcomp.cells import CELLS, cell_class, reference

PACKAGE = Path(reference.__file__).parent


def test_every_cell_has_a_reference():
    assert set(reference.CELLS) == set(CELLS)
    for name, (module, _) in CELLS.items():
        assert reference.reference_module(name).__name__ == f"{reference.__name__}.{module}"
    with pytest.raises(ValueError, match="model must be one of"):
        reference.reference_module("gru")


@pytest.mark.parametrize("name", sorted(CELLS))
def test_forward_takes_the_cells_options(name):
    module = reference.reference_module(name)
    accepted = set(getattr(cell_class(name), "options", ()))
    assert set(module.OPTIONS) <= accepted
    parameters = inspect.signature(module.forward).parameters
    assert set(module.OPTIONS) <= set(parameters)
    first = list(parameters)[:3]
    expected = ["tree", "x", "params"] if name in reference.TREE_CELLS else ["x", "params"]
    assert first[:len(expected)] == expected
    if hasattr(cell_class(name), "recurrent_widths"):   # recurrent dropout
        assert "masks" in parameters


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_imports_flow_one_way(path):
    """NumPy, npcomp.formats (``...formats``) and sibling reference modules only:
    no numba, no cell module, no test, gradcheck, trainer or CLI code."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            assert all(alias.name == "numpy" for alias in node.names), ast.dump(node)
        elif isinstance(node, ast.ImportFrom):
            allowed = (node.module == "__future__" or (node.level == 1)
                       or (node.level == 3 and node.module == "formats"))
            assert allowed, f"{path.name}: from {'.' * node.level}{node.module} import ..."
