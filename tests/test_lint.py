"""ruff, with the rules pyproject.toml chooses, passes over the whole tree;
the same configuration refuses a planted unused import."""
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def ruff(*arguments: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *arguments],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes_over_the_tree():
    checked = ruff(".")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_configuration_refuses_an_unused_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n")
    checked = ruff("--config", str(REPO_ROOT / "pyproject.toml"), str(planted), cwd=tmp_path)
    assert checked.returncode == 1 and "F401" in checked.stdout, checked.stdout + checked.stderr
