"""The package's layers (README.md, "Layout"): imports flow one way, with no
cycle, even through a function-level import, and no module or function
outgrows its job."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "npcomp"
# Each folder's rank (a module's layer is the longest key its path starts
# with): a module may import its own folder and any folder of a lower rank.
# Folders of equal rank sit side by side and import nothing of each other:
# the fast kernels and the reference oracles they are checked against,
# experiments, study and estimators.
RANK = {
    "errors": 0,
    "data/readers": 1,
    "data/text": 2,
    "data/datasets": 3,
    "data/downloads": 4,
    "data": 5,
    "forest": 6,
    "params": 6,
    # the gradient check's variations, which the registry's entries declare
    "cells/check_variations": 6,
    "cells/registry": 7,
    "cells/kernels": 8,
    "cells/reference": 8,
    "cells": 9,
    "heads": 10,
    "models": 11,
    "configuration": 12,
    "runfiles": 13,
    "training": 14,
    "experiments": 15,
    "study": 15,
    "estimators": 15,
    "runs": 16,
    "cli": 17,
    "__main__": 18,
    "": 18,
}
# folders held to fewer imports than their rank allows: the reference
# oracles, which the fast path is checked against, import nothing of it (no
# kernel, cell, forest, parameter vector, head or model): only the data
# layer, the errors and the registry's declarations
ROOT_IMPORTERS = ("cli", "__main__", "")
ONLY = {"cells/reference": ("cells/reference", "cells/registry", "data", "errors")}
MAX_TOP_LEVEL = 6
# the caps, and the margin below them nothing may sit in: a module or function
# grown to the cap is split by its jobs, not trimmed to fit under it
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MARGIN = 0.05


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        yield name, path, name if is_package else name.rsplit(".", 1)[0]


def _imports(name: str, path: Path, package: str):
    """(line, module) of every npcomp import in the file, function level included."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                where = ".".join(base + ([node.module] if node.module else []))
            else:
                where = node.module or ""
            if where == "npcomp" or (node.level and not node.module):
                for alias in node.names:
                    yield node.lineno, f"{where}.{alias.name}"
            else:
                yield node.lineno, where
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name


MODULES = {name: (path, package) for name, path, package in _modules()}


def _existing(module: str) -> str | None:
    """The module an import names (``npcomp.data`` for ``npcomp.data.X`` when X is a name)."""
    while module and module not in MODULES:
        module = module.rpartition(".")[0]
    return module or None


def _graph() -> dict:
    graph = {}
    for name, (path, package) in MODULES.items():
        graph[name] = {}
        for line, target in _imports(name, path, package):
            target = _existing(target) if target.startswith("npcomp") else None
            if target and target != name:
                graph[name].setdefault(target, line)
    return graph


def _layer(module: str) -> str:
    """The folder (a key of RANK) ``module`` sits in."""
    parts = module.split(".")[1:]
    for length in range(len(parts), 0, -1):
        key = "/".join(parts[:length])
        if key in RANK:
            return key
    return ""


def layer_violations(graph: dict, where=lambda name, line: f"{name}:{line}") -> list:
    """Every import in ``graph`` (module -> {imported module: line}) that goes
    up the layers or across to a side-by-side folder."""
    found = []
    for name, targets in graph.items():
        for target, line in targets.items():
            mine, theirs = _layer(name), _layer(target)
            if target == "npcomp":
                # the root package (its version, the names it exports) is the
                # face of every layer: only the command line above it imports it
                if mine not in ROOT_IMPORTERS:
                    found.append(f"{where(name, line)}: {mine} imports the root package npcomp")
                continue
            barred = mine in ONLY and not any(theirs == key or theirs.startswith(key + "/") for key in ONLY[mine])
            if barred or RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine):
                found.append(f"{where(name, line)}: {mine or 'npcomp'} imports {target} ({theirs or 'npcomp'})")
    return found


def file_violations(path: Path, name: str) -> list:
    """``layer_violations`` of one file read as the module ``name`` of the
    package (a copy of a module, or a module to be)."""
    package = name.rsplit(".", 1)[0]
    imports = {}
    for line, target in _imports(name, path, package):
        target = _existing(target) if target.startswith("npcomp") else None
        if target and target != name:
            imports.setdefault(target, line)
    return layer_violations({name: imports}, lambda _name, line: f"{path.name}:{line}")


def test_every_folder_has_its_rank():
    folders = {path.parent.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")}
    folders.discard(".")
    unranked = sorted(folder for folder in folders if folder not in RANK)
    assert not unranked, f"folders with no rank in RANK: {unranked}"


def test_imports_flow_down_the_layers():
    upward = layer_violations(_graph(), lambda name, line: f"{MODULES[name][0].relative_to(PACKAGE.parent)}:{line}")
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize(
    "planted",
    [
        "from npcomp.cells.reference.functions import ACTIVATIONS",
        "from ..reference import functions",
        "import npcomp.cells.reference.functions",
        "def late():\n    from npcomp.study.explain import explain",
    ],
)
def test_a_kernel_importing_the_oracle_or_the_study_is_refused(planted, tmp_path):
    """The check above, on a copy of a kernel with one import planted: it
    fails, naming the planted line; the copy as it is passes."""
    kernel = PACKAGE / "cells" / "kernels" / "activations.py"
    copy = tmp_path / "activations.py"
    copy.write_text(kernel.read_text(encoding="utf-8"), encoding="utf-8")
    assert file_violations(copy, "npcomp.cells.kernels.activations") == []
    text = kernel.read_text(encoding="utf-8")
    copy.write_text(f"{text}\n{planted}\n", encoding="utf-8")
    found = file_violations(copy, "npcomp.cells.kernels.activations")
    line = text.count("\n") + 2 + planted.count("\n")
    assert [entry.split(":")[1] for entry in found] == [str(line)], found


def test_the_oracle_importing_the_fast_path_is_refused(tmp_path):
    reference = PACKAGE / "cells" / "reference" / "recnn.py"
    copy = tmp_path / "recnn.py"
    copy.write_text(
        reference.read_text(encoding="utf-8") + "\nfrom npcomp.forest import build_forest\n", encoding="utf-8"
    )
    found = file_violations(copy, "npcomp.cells.reference.recnn")
    assert len(found) == 1 and "npcomp.forest" in found[0], found


def test_no_import_cycle():
    graph = _graph()
    # a package's __init__ importing its own modules is how packages work;
    # a cycle through other modules is not
    edges = {
        name: {t for t in targets if not name.startswith(t + ".") and not (t == "npcomp" and "." in name)}
        for name, targets in graph.items()
    }
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt) :] + [nxt]))
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not cycles, "\n".join(cycles)


def test_few_modules_at_the_top_level():
    top = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL, top


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_and_functions_keep_to_one_job(name):
    path = MODULES[name][0]
    text = path.read_text(encoding="utf-8")
    module_cap = int(MAX_MODULE_LINES * (1 - MARGIN))
    function_cap = int(MAX_FUNCTION_LINES * (1 - MARGIN))
    assert text.count("\n") <= module_cap, (
        f"{path}: {text.count(chr(10))} lines, over {module_cap} ({MARGIN:.0%} below the cap of {MAX_MODULE_LINES})"
    )
    long = [
        f"{path.name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > function_cap
    ]
    assert not long, f"over {function_cap} lines:\n" + "\n".join(long)
