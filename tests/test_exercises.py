"""The exercise notebooks (docs/exercises/): the solutions run to their end,
every check in them passing; the exercises stop at each blank, in order,
with NotImplementedError naming it (each blank before it filled with the
solution's code); and the exercise files and the .ipynb twins are the ones
docs/exercises/build.py writes from the solutions, valid nbformat 4."""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path

import nbformat
import pytest

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "exercises"
SOLUTIONS = sorted(FOLDER.glob("*_solution.py"))


def _builder():
    spec = importlib.util.spec_from_file_location("exercise_build", FOLDER / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _builder()


def _run(source: str, name: str) -> str:
    """Execute a notebook's source as one script; what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(source, name, "exec"), {"__name__": "__main__"})
    return printed.getvalue()


def test_there_are_notebooks_for_the_tree_cells():
    assert {path.name for path in SOLUTIONS} == {
        "slstm_solution.py",
        "rntn_solution.py",
        "treelstm_nary_solution.py",
        "treelstm_childsum_solution.py",
        "lstm_rnn_solution.py",
    }


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: path.stem)
def test_the_solution_runs_and_its_checks_pass(path):
    solution = path.read_text(encoding="utf-8")
    assert len(build.blanks(solution)) >= 4
    printed = _run(solution, str(path))
    assert "all checks passed" in printed.splitlines()[-1]


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda path: path.stem)
def test_the_exercise_stops_at_each_blank(path):
    solution = path.read_text(encoding="utf-8")
    keys = build.blanks(solution)
    for count, key in enumerate(keys):
        source = build.exercise(solution, filled=tuple(keys[:count]))
        with pytest.raises(NotImplementedError, match=f"^blank {key}:"):
            _run(source, f"{path.stem} up to blank {key}")


def test_the_exercises_and_twins_are_written_from_the_solutions():
    written = build.outputs()
    assert len(written) == 3 * len(SOLUTIONS)
    for target, text in written.items():
        assert target.read_text(encoding="utf-8") == text, (
            f"{target.name} is out of date: python docs/exercises/build.py"
        )
    assert build.main(["--check"]) == 0


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.ipynb")), ids=lambda path: path.name)
def test_the_twins_are_valid_notebooks_of_the_same_cells(path):
    notebook = nbformat.read(str(path), as_version=4)
    nbformat.validate(notebook)
    source = (FOLDER / path.name.replace(".ipynb", ".py")).read_text(encoding="utf-8")
    assert len(notebook.cells) == source.count("# %%")
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert ("raise NotImplementedError" in code) == (not path.stem.endswith("_solution"))
