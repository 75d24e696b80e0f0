"""ruff, with the rules pyproject.toml chooses, passes over the whole tree:
the linter (`ruff check`) and the formatter (`ruff format --check`); the
same configuration refuses a planted unused import and a planted file laid
out otherwise than the formatter lays it out, and keeps a table between
`# fmt: off` and `# fmt: on` as written."""

import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIG = str(REPO_ROOT / "pyproject.toml")


def ruff(*arguments: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *arguments], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_ruff_check_passes_over_the_tree():
    checked = ruff("check", "--no-cache", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_configuration_refuses_an_unused_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n")
    checked = ruff("check", "--no-cache", "--config", CONFIG, str(planted), cwd=tmp_path)
    assert checked.returncode == 1 and "F401" in checked.stdout, checked.stdout + checked.stderr


def test_ruff_format_leaves_the_tree_as_it_is():
    checked = ruff("format", "--check", "--no-cache", ".")
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr


def test_the_formatter_refuses_a_planted_layout_and_keeps_a_table(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def area( width,height ):\n    return width*height\n")
    checked = ruff("format", "--check", "--no-cache", "--config", CONFIG, str(planted), cwd=tmp_path)
    assert checked.returncode == 1 and "planted.py" in checked.stdout, checked.stdout + checked.stderr
    table = tmp_path / "table.py"
    table.write_text("# fmt: off\nRATES = {'adagrad':  0.05,\n         'adadelta': 1.0}\n# fmt: on\n")
    checked = ruff("format", "--check", "--no-cache", "--config", CONFIG, str(table), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
