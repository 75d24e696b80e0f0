"""Write the exercise notebooks from their solutions.

Each ``NAME_solution.py`` here is a notebook in the percent format (cells
begin with ``# %%``; ``# %% [markdown]`` cells hold commented Markdown), and
the source of everything else:

* ``NAME.py``, the exercise: every block between ``# BLANK key: what to
  write`` and ``# END BLANK`` replaced by the comment and a
  ``raise NotImplementedError("blank key: ...")``, so that it runs up to
  its first blank and stops there, naming it;
* ``NAME.ipynb`` and ``NAME_solution.ipynb``, the same cells as Jupyter
  notebooks (nbformat 4, no outputs), for those who open them there.

    python docs/exercises/build.py            # write them
    python docs/exercises/build.py --check    # exit 1 if one is out of date

Only the standard library: the tests (tests/test_exercises.py) import it.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BLANK = re.compile(r"^# BLANK (?P<key>[\w-]+): (?P<what>[^\n]*)\n(?P<body>.*?)^# END BLANK\n",
                   re.MULTILINE | re.DOTALL)


def blanks(solution: str) -> list:
    """The keys of the solution's blanks, in order."""
    return [match["key"] for match in BLANK.finditer(solution)]


def exercise(solution: str, filled: tuple = ()) -> str:
    """The exercise of ``solution``: each blank's code replaced by a raise,
    except the blanks named in ``filled`` (their solution kept, with the
    markers dropped)."""
    def replace(match) -> str:
        if match["key"] in filled:
            return match["body"]
        message = f"blank {match['key']}: the comment above says what to write"
        return f"# BLANK {match['key']}: {match['what']}\nraise NotImplementedError({message!r})\n"
    return BLANK.sub(replace, solution)


def solved(solution: str) -> str:
    """The solution as it runs: the blanks' markers dropped."""
    return exercise(solution, tuple(blanks(solution)))


def notebook(source: str) -> dict:
    """The percent-format ``source`` as an nbformat 4 notebook."""
    cells = []
    for chunk in re.split(r"^# %%", source, flags=re.MULTILINE)[1:]:
        header, _, body = chunk.partition("\n")
        lines = body.strip("\n").split("\n")
        if header.strip() == "[markdown]":
            text = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines]
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _lines(text)})
        else:
            cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                          "outputs": [], "source": _lines(lines)})
    return {"cells": cells,
            "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 4}


def _lines(lines: list) -> list:
    """A cell's source as nbformat stores it: lines, each but the last with its newline."""
    return [line + "\n" for line in lines[:-1]] + lines[-1:]


def outputs(folder: Path = HERE) -> dict:
    """{path: text} of every file written from the solutions in ``folder``."""
    out = {}
    for path in sorted(folder.glob("*_solution.py")):
        name = path.name[:-len("_solution.py")]
        solution = path.read_text(encoding="utf-8")
        out[folder / f"{name}.py"] = exercise(solution)
        for stem, source in ((name, exercise(solution)), (f"{name}_solution", solution)):
            out[folder / f"{stem}.ipynb"] = json.dumps(notebook(source), indent=1,
                                                       ensure_ascii=False) + "\n"
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a file differs from its solution's")
    args = parser.parse_args(argv)
    stale = []
    for path, text in outputs().items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(path)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'out of date' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
