"""mypy, the type checker, is clean on the package: its default checks with pyproject.toml's
[tool.mypy] (docs/development.md, "Lint and types").

The folders of the checkout install as cryptoplan.model, cryptoplan.workbook, ... (a namespace
package), so mypy runs on a tree that gives them those names: ``cryptoplan/<folder>``, a symbolic
link to the checkout's folder, in a temporary directory.  About 5 s a run (no cache).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("model", "workbook", "addin", "cli")


def _link(link: Path, target: Path) -> None:
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except OSError as exc:      # Windows without the privilege to create them
        pytest.skip(f"cannot create a symbolic link here ({exc}): the check needs a tree of them")


def _tree(tmp_path: Path) -> Path:
    """``tmp_path/tree/cryptoplan/<folder>`` -> the checkout's folders: the names they install as."""
    tree = tmp_path / "tree"
    (tree / "cryptoplan").mkdir(parents=True)
    for d in FOLDERS:
        _link(tree / "cryptoplan" / d, ROOT / d)
    return tree


def _tree_with_model_files(tmp_path: Path) -> tuple[Path, Path]:
    """As :func:`_tree`, but the model folder a real one with the checkout's files linked one by
    one, so that a test can plant a module in it: ``(tree, tree/cryptoplan/model)``."""
    tree = tmp_path / "tree"
    model = tree / "cryptoplan" / "model"
    model.mkdir(parents=True)
    for d in FOLDERS[1:]:
        _link(tree / "cryptoplan" / d, ROOT / d)
    for p in (ROOT / "model").iterdir():
        if p.name != "__pycache__":
            _link(model / p.name, p)
    return tree, model


def _mypy(tree: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mypy", reason="mypy is a test dependency (pyproject's test extra): pip install '.[test]'")
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           # the tree's folder as a path, not -p cryptoplan: where cryptoplan is also
                           # installed (CI: pip install ., with py.typed), -p checks that copy instead
                           "--cache-dir", str(tree.parent / "mypy_cache"), "cryptoplan"],
                          cwd=tree, capture_output=True, text=True)


def test_mypy_is_clean(tmp_path):
    r = _mypy(_tree(tmp_path))
    assert r.returncode == 0, r.stdout[-10000:] + r.stderr[-2000:]
    # every module of the checkout's folders was checked (the tree's files, not an installed copy)
    modules = sum(1 for d in FOLDERS for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts)
    checked = re.search(r"no issues found in (\d+) source files", r.stdout)
    assert checked and int(checked.group(1)) == modules, r.stdout


def test_mypy_sees_a_planted_error(tmp_path):
    # The check is not vacuous: a module planted in the tree's model folder (the checkout's files
    # linked one by one beside it) with a type error that only a resolved import shows: were
    # cryptoplan.model.figures not found, ignore_missing_imports would make figure() Any.
    tree, model = _tree_with_model_files(tmp_path)
    (model / "_probe.py").write_text(
        "from cryptoplan.model.figures import figure\n\n\n"
        "def probe() -> int:\n"
        "    return figure('ref_chidisps_default').id\n", encoding="utf-8")
    r = _mypy(tree)
    assert r.returncode == 1, r.stdout[-5000:] + r.stderr[-2000:]
    assert re.search(r"cryptoplan/model/_probe\.py:5: error: .*\"str\".*\"int\".*\[return-value\]", r.stdout), r.stdout
    assert "Found 1 error in 1 file" in r.stdout, r.stdout


def test_the_facades_resolve_to_the_defining_modules(tmp_path):
    # issue 47: cryptoplan.model's names were a string table a type checker could not follow; the
    # package stubs (__init__.pyi) name each one's module, as lazy_loader reads them at run time
    tree, model = _tree_with_model_files(tmp_path)
    (model / "_reveal.py").write_text(
        "import cryptoplan.model as m\nimport cryptoplan.workbook as w\nimport cryptoplan.workbook.engine as e\n\n"
        "reveal_type(m.plan)\nreveal_type(w.recalc)\nreveal_type(e.Engine)\n", encoding="utf-8")
    r = _mypy(tree)
    notes = [ln for ln in r.stdout.splitlines() if "_reveal.py" in ln and "Revealed type" in ln]
    assert len(notes) == 3, r.stdout
    assert "cryptoplan.model.zos.plan.evaluate.PlanResult" in notes[0], notes[0]
    assert "def (" in notes[1] and "Any" != notes[1].rsplit(":", 1)[-1].strip(), notes[1]
    assert "cryptoplan.workbook.engine.core.Engine" in notes[2], notes[2]


def test_help_of_a_facade_name_is_its_definition():
    import pydoc

    import cryptoplan.model as m
    text = pydoc.render_doc(m.plan, renderer=pydoc.plaintext)
    assert "cryptoplan.model.zos.plan.evaluate" in text and "PlanResult" in text
