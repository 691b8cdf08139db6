"""The installed distribution works from any directory and ships its data files.

Expected values: the file names the package promises (``data/README.md``), and
under CI (``CI=true``, where ``make test`` installs with plain ``pip install .``)
that ``model`` is imported from site-packages, not from the checkout.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]


def _run(code: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


@pytest.mark.subprocess
def test_data_found_from_another_directory(tmp_path):
    path = _run("from cryptoplan.model.datafiles import data_path; print(data_path('README.md'))", tmp_path)
    assert Path(path).is_file()


@pytest.mark.skipif(os.environ.get("CI") != "true", reason="only CI installs non-editable")
@pytest.mark.subprocess
def test_ci_uses_the_installed_package_not_the_checkout(tmp_path):
    # The venv may live inside the checkout (.venv), so the test is "from
    # site-packages", not "outside the checkout".
    where = Path(_run("import cryptoplan.model as model; print(model.__file__)", tmp_path)).resolve()
    assert "site-packages" in where.parts and where.parent != CHECKOUT / "model", where
    data = Path(_run("from cryptoplan.model.datafiles import data_path; print(data_path('README.md'))", tmp_path))
    assert "site-packages" in data.resolve().parts and data.resolve().parent != CHECKOUT / "data", data


@pytest.mark.subprocess
def test_console_script_runs(tmp_path):
    exe = Path(sys.executable).with_name("cryptoplan")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "cryptoplan.cli"]
    out = subprocess.run(cmd + ["--help"], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert "capacity" in out.stdout


def test_the_install_adds_one_top_level_package():
    # every module is cryptoplan.<folder>: an installed cryptoplan adds no `model`, `workbook`,
    # `addin` or `data` of its own to site-packages, where another project's would collide
    from importlib.metadata import distribution
    dist = distribution("cryptoplan")
    tops = {Path(str(f)).parts[0] for f in dist.files if not str(f).startswith("..")}
    tops.discard(f"{dist.metadata['Name']}-{dist.version}.dist-info")
    tops = {t for t in tops if not t.endswith(".pth") and not t.startswith("__editable__")}
    assert tops == {"cryptoplan"}, tops
