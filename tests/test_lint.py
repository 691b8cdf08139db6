"""ruff, the linter, is clean on the source and the tests (pyproject.toml's [tool.ruff]: pyflakes
and pycodestyle's errors and warnings; docs/development.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert exe, "ruff is a test dependency (pyproject's test extra): pip install '.[test]'"
    return [exe]


@pytest.mark.subprocess
def test_ruff_is_clean():
    r = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-5000:] + r.stderr[-2000:]


@pytest.mark.subprocess
def test_ruff_sees_a_planted_problem(tmp_path):
    # the check is not vacuous: an unused import in a module of the layout fails it
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "probe.py").write_text("import os\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"), encoding="utf-8")
    r = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 1 and "F401" in r.stdout
