"""The package's face: each layer's ``__all__`` names what it offers, and the
documentation and notebooks import only those names (docs/API.md)."""

import ast
import importlib
import json
import pkgutil
import re
import types
from pathlib import Path

import pytest

import npcomp

REPOSITORY = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([REPOSITORY / "README.md", *(REPOSITORY / "docs").rglob("*.md")])
NOTEBOOKS = sorted((REPOSITORY / "docs").rglob("*.ipynb"))
MODULES = sorted(
    info.name for info in pkgutil.walk_packages(npcomp.__path__, "npcomp.") if info.name != "npcomp.__main__"
)
PACKAGES = ["npcomp"] + sorted(info.name for info in pkgutil.walk_packages(npcomp.__path__, "npcomp.") if info.ispkg)
# ``from M import N`` and ``import M`` at the start of a line of code (after a
# doctest's prompt, or in a notebook's cell)
IMPORT = re.compile(
    r"^\s*(?:>>>|\.\.\.)?\s*(?:from\s+(?P<source>npcomp[\w.]*)\s+import\s+"
    r"(?P<names>[^#\n]+)|import\s+(?P<module>npcomp[\w.]*))",
    re.MULTILINE,
)


def _is_package(module: str) -> bool:
    return hasattr(importlib.import_module(module), "__path__")


# the gradient-check suite's planted bugs: a tool of its own (python -m
# gradcheck.planted), whose ``__all__`` is its face
OWN_MODULES = {"npcomp.gradcheck.planted"}


def _is_top_level_module(module: str) -> bool:
    """A module of its own at the top of the package (forest, params, heads,
    errors): a layer of one module, whose ``__all__`` is its face."""
    return module in OWN_MODULES or (module.count(".") == 1 and not _is_package(module))


def import_problems(text: str) -> list:
    """Each import in ``text`` of a name outside the exports: an underscore
    name, a module path that is neither a package nor a top-level module, or a
    name its module's ``__all__`` does not list."""
    problems = []
    for match in IMPORT.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match["module"]:
            if match["module"] != "npcomp" and not _is_package(match["module"]):
                problems.append(f"line {line}: import {match['module']}: not a package")
            continue
        source = match["source"]
        names = [part.split(" as ")[0].strip(" ()\\") for part in match["names"].split(",") if part.strip(" ()\\")]
        try:
            module = importlib.import_module(source)
        except ImportError:
            problems.append(f"line {line}: from {source}: no such module")
            continue
        if source != "npcomp" and not (_is_package(source) or _is_top_level_module(source)):
            problems.append(f"line {line}: from {source}: a module inside a package; import from the package")
            continue
        exported = getattr(module, "__all__", ())
        for name in names:
            if name.startswith("_") or name not in exported:
                problems.append(f"line {line}: from {source} import {name}: not in {source}.__all__")
    return problems


def _notebook_code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")


@pytest.mark.parametrize("path", DOCUMENTS + NOTEBOOKS, ids=lambda path: str(path.relative_to(REPOSITORY)))
def test_the_documents_import_only_public_names(path):
    text = _notebook_code(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
    problems = import_problems(text)
    assert not problems, f"{path.relative_to(REPOSITORY)}:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "line",
    [
        "    >>> from npcomp.data.readers.ptb import parse_ptb",  # a module inside a package
        "    >>> from npcomp.forest import _heights_and_positions",  # an underscore name
        "    >>> from npcomp.training import prepare_run",  # not in training's __all__
        "import npcomp.training.trainer",
    ],
)  # not a package
def test_an_import_outside_the_exports_is_found(line):
    """The check above, on a document with one such import planted beside
    public ones."""
    text = f"Reading a tree:\n\n    >>> from npcomp import parse_ptb\n{line}\n"
    assert import_problems(text[: text.index(line)]) == []
    assert [problem.split(":")[0] for problem in import_problems(text)] == ["line 4"]


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_names_its_exports(package):
    """Every package has an ``__all__``, every name in it resolves to what it
    names (a name shared with a submodule would turn into the module once
    that is imported), and none is an underscore name."""
    for module in MODULES:  # every submodule imported: none may shadow an export
        importlib.import_module(module)
    imported = importlib.import_module(package)
    assert hasattr(imported, "__all__"), f"{package} has no __all__"
    homes = getattr(imported, "_HOMES", {})
    for name in imported.__all__:
        assert not name.startswith("_"), name
        value = getattr(imported, name)
        if isinstance(value, types.ModuleType):
            assert homes.get(name, "") is None or value.__name__ == f"{package}.{name}" and name not in homes, (
                f"{package}.{name} is a module"
            )


def test_the_top_level_modules_name_their_exports():
    for path in sorted((REPOSITORY / "npcomp").glob("*.py")):
        if path.stem in ("__init__", "__main__"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [
            target.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        ]
        assert "__all__" in names, f"npcomp/{path.name} has no __all__"
