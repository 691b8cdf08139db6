"""mypy, the type checker, is clean on the package: its default checks with pyproject.toml's
[tool.mypy] (docs/development.md, "Lint and types").

The folders of the checkout install as cryptoplan.model, cryptoplan.workbook, ... (a namespace
package), so mypy runs on a tree that gives them those names: ``cryptoplan/<folder>``, a symbolic
link to the checkout's folder, in a temporary directory.  One run serves every test here (about
10 s, no cache): the tree also holds planted modules whose findings must be exactly the planted ones.
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


# Planted beside the checkout's modules in the one tree mypy checks (one run per test session):
# each must give exactly the finding named here, and nothing else may be found.
PLANTED = {
    # a type error only a resolved import shows: were cryptoplan.model.figures not found,
    # ignore_missing_imports would make figure() Any
    ("model", "_probe.py"): ("from cryptoplan.model.figures import figure\n\n\n"
                             "def probe() -> int:\n"
                             "    return figure('ref_chidisps_default').id\n"),
    # issue 66: the CLI calls the model through lazy aliases (typed under TYPE_CHECKING) from
    # click commands without annotations (checked: check_untyped_defs for cryptoplan.cli)
    ("cli", "_probe.py"): ("from cryptoplan.cli.model_commands import F\n\n\n"
                           "def probe():\n"
                           "    return F.bootstrap_section({}, n='many')\n"),
    # issue 47: cryptoplan.model's names were a string table a type checker could not follow; the
    # package stubs (__init__.pyi) name each one's module, as lazy_loader reads them at run time
    ("model", "_reveal.py"): ("import cryptoplan.model as m\nimport cryptoplan.workbook as w\n"
                              "import cryptoplan.workbook.engine as e\n\n"
                              "reveal_type(m.plan)\nreveal_type(w.recalc)\nreveal_type(e.Engine)\n"),
}
EXPECTED_ERRORS = {
    "cryptoplan/model/_probe.py": r"cryptoplan/model/_probe\.py:5: error: .*\"str\".*\"int\".*\[return-value\]",
    "cryptoplan/cli/_probe.py": r"cryptoplan/cli/_probe\.py:5: error: Argument \"n\" to \"bootstrap_section\" has "
                                r"incompatible type \"str\"; expected \"int\"\s+\[arg-type\]",
}


def _tree(tmp_path: Path) -> Path:
    """``tmp_path/tree/cryptoplan/<folder>``: the checkout's folders under the names they install
    as, the folders that get a planted module (:data:`PLANTED`) real ones with the checkout's
    files linked one by one beside it, the others links."""
    tree = tmp_path / "tree"
    planted = {folder for folder, _ in PLANTED}
    for d in FOLDERS:
        if d not in planted:
            (tree / "cryptoplan").mkdir(parents=True, exist_ok=True)
            _link(tree / "cryptoplan" / d, ROOT / d)
            continue
        folder = tree / "cryptoplan" / d
        folder.mkdir(parents=True)
        for p in (ROOT / d).iterdir():
            if p.name != "__pycache__":
                _link(folder / p.name, p)
    for (d, name), text in PLANTED.items():
        (tree / "cryptoplan" / d / name).write_text(text, encoding="utf-8")
    return tree


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory) -> subprocess.CompletedProcess:
    """mypy over the checkout with :data:`PLANTED`: one run (about 10 s) the tests below read."""
    pytest.importorskip("mypy", reason="mypy is a test dependency (pyproject's test extra): pip install '.[test]'")
    tree = _tree(tmp_path_factory.mktemp("mypy"))
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           # the tree's folder as a path, not -p cryptoplan: where cryptoplan is also
                           # installed (CI: pip install ., with py.typed), -p checks that copy instead
                           "--cache-dir", str(tree.parent / "mypy_cache"), "cryptoplan"],
                          cwd=tree, capture_output=True, text=True)


def _errors(r: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in r.stdout.splitlines() if ": error:" in ln]


def test_mypy_is_clean(mypy_run):
    r = mypy_run
    # nothing found but what was planted
    stray = [ln for ln in _errors(r) if ln.split(":", 1)[0] not in EXPECTED_ERRORS]
    assert r.returncode == 1 and not stray, r.stdout[-10000:] + r.stderr[-2000:]
    # every module of the checkout's folders was checked (the tree's files, not an installed copy)
    modules = sum(1 for d in FOLDERS for p in (ROOT / d).rglob("*.py") if "__pycache__" not in p.parts)
    checked = re.search(r"Found (\d+) errors? in (\d+) files? \(checked (\d+) source files\)", r.stdout)
    assert checked and int(checked.group(3)) == modules + len(PLANTED), r.stdout
    assert int(checked.group(1)) == len(EXPECTED_ERRORS), r.stdout


def test_mypy_sees_the_planted_errors(mypy_run):
    # The check is not vacuous: each planted module's one error is reported, the CLI's included
    # (a wrong-type call through a lazy alias, in a function without annotations)
    for path, pattern in EXPECTED_ERRORS.items():
        found = [ln for ln in _errors(mypy_run) if ln.startswith(path + ":")]
        assert len(found) == 1 and re.search(pattern, found[0]), (path, mypy_run.stdout)


def test_the_facades_resolve_to_the_defining_modules(mypy_run):
    notes = [ln for ln in mypy_run.stdout.splitlines() if "_reveal.py" in ln and "Revealed type" in ln]
    assert len(notes) == 3, mypy_run.stdout
    assert "cryptoplan.model.zos.plan.evaluate.PlanResult" in notes[0], notes[0]
    assert "def (" in notes[1] and "Any" != notes[1].rsplit(":", 1)[-1].strip(), notes[1]
    assert "cryptoplan.workbook.engine.core.Engine" in notes[2], notes[2]


def test_every_lazy_alias_has_its_module_for_the_type_checker():
    # issue 66: an alias bound with lazy_module() is Any to mypy unless the same name is imported
    # under `if TYPE_CHECKING:` just above it; every one in the package has its twin
    bare = []
    for d in FOLDERS:
        for p in (ROOT / d).rglob("*.py"):
            if p == ROOT / "model" / "lazy.py":         # its docstring shows the call
                continue
            lines = p.read_text(encoding="utf-8").splitlines()
            for i, ln in enumerate(lines):
                m = re.match(r"\s*(\w+) = lazy_module\(\"([\w.]+)\"\)", ln)
                if not m:
                    continue
                above = "\n".join(lines[max(0, i - 40):i])
                guarded = re.search(r"^if TYPE_CHECKING:", above, re.M) and re.search(
                    rf"^\s+(import {re.escape(m.group(2))}( as {m.group(1)})?|from [\w.]+ import (\w+ as )?{m.group(1)})$",
                    above, re.M)
                if ln.startswith(" ") and not guarded or not ln.startswith(" "):
                    bare.append(f"{p.relative_to(ROOT)}:{i + 1}: {ln.strip()}")
    assert not bare, "\n".join(bare)


def test_help_of_a_facade_name_is_its_definition():
    import pydoc

    import cryptoplan.model as m
    text = pydoc.render_doc(m.plan, renderer=pydoc.plaintext)
    assert "cryptoplan.model.zos.plan.evaluate" in text and "PlanResult" in text
