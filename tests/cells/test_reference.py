"""The reference package (npcomp/cells/reference): one module per registered
cell, taking only options the cell takes, and importing nothing but NumPy,
npcomp.data.readers.formats and its own modules (so it stays an independent oracle of the
cells the tests compare it with)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from npcomp.cells import reference, registry

PACKAGE = Path(reference.__file__).parent


def test_every_cell_has_a_reference():
    for name, entry in registry.MODELS.items():
        module = reference.reference_module(name)
        assert module.__name__ == f"{reference.__name__}.{entry.module}"
        assert callable(module.forward)
    with pytest.raises(ValueError, match="model must be one of"):
        reference.reference_module("gru")


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_forward_takes_the_cells_options(name):
    module = reference.reference_module(name)
    assert set(module.OPTIONS) <= set(registry.model(name).options)
    parameters = inspect.signature(module.forward).parameters
    assert set(module.OPTIONS) <= set(parameters)
    first = list(parameters)[:3]
    expected = ["tree", "x", "params"] if reference.reads_trees(name) else ["x", "params"]
    assert first[: len(expected)] == expected
    if registry.model(name).recurrent:  # recurrent dropout
        assert "masks" in parameters


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_imports_flow_one_way(path):
    """NumPy, npcomp.data.readers.formats and sibling reference modules only:
    no numba, no cell module, no test, gradcheck, trainer or CLI code."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            assert all(alias.name == "numpy" for alias in node.names), ast.dump(node)
        elif isinstance(node, ast.ImportFrom):
            allowed = (
                node.module in ("__future__", "importlib")
                or node.level == 1
                or (node.level == 2 and node.module is None and [alias.name for alias in node.names] == ["registry"])
                or (node.level == 0 and node.module == "npcomp.data.readers.formats")
            )
            assert allowed, f"{path.name}: from {'.' * node.level}{node.module} import ..."
