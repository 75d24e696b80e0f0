"""The package's layers (SPEC 4): imports flow one way, with no cycle, even
through a function-level import, and no module or function outgrows its job."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "npcomp"
# a layer may import its own and those below it; experiments, study and
# estimators are side by side, each above training
RANK = {"data": 0, "forest": 1, "params": 1, "cells": 2, "heads": 3, "model": 4,
        "training": 5, "experiments": 6, "study": 6, "estimators": 6, "runs": 7, "cli": 8,
        "__main__": 9, "": 9}
MAX_TOP_LEVEL = 6
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80


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
    return module.split(".")[1] if "." in module else ""


def test_imports_flow_down_the_layers():
    upward = [f"{MODULES[name][0].relative_to(PACKAGE.parent)}:{line}: {_layer(name)} "
              f"imports {target} ({_layer(target)})"
              for name, targets in _graph().items() for target, line in targets.items()
              if target != "npcomp" and RANK[_layer(target)] > RANK[_layer(name)]]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    graph = _graph()
    # a package's __init__ importing its own modules is how packages work;
    # a cycle through other modules is not
    edges = {name: {t for t in targets if not name.startswith(t + ".")
                    and not (t == "npcomp" and "." in name)}
             for name, targets in graph.items()}
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
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
    assert text.count("\n") <= MAX_MODULE_LINES, f"{path}: {text.count(chr(10))} lines"
    long = [f"{path.name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, "\n".join(long)
