"""Every error cryptoplan raises for what a user gave it is a CryptoplanError (issue 47).

Read from the source with :mod:`ast`: a ``raise`` of a built-in exception class in model/,
workbook/, addin/ or cli/ is an error a caller cannot catch as cryptoplan's, unless it is one of
the few listed below, each with why it is not about the user's input.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from cryptoplan.model import errors

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "addin", "workbook", "cli")

# (file, exception) -> why it is not a CryptoplanError
NOT_INPUT = {
    ("model/queueing/mva.py", "RuntimeError"): "Bard-Schweitzer did not converge: a numerical failure, not an input",
    ("model/calibration/targets.py", "RuntimeError"): "an invariant of the fit's own tables",
    ("model/datafiles.py", "FileNotFoundError"): "a packaged data file is missing: a broken install",
    ("workbook/libreoffice.py", "FileNotFoundError"): "LibreOffice is not installed: the machine, not an input",
    ("workbook/libreoffice.py", "RuntimeError"): "LibreOffice failed: its stderr is the message",
    ("workbook/template/output.py", "RuntimeError"): "rendering tools missing or failing, or the template's own invariant",
    ("workbook/engine/context.py", "TypeError"): "an invariant of the engine's value types (pragma: no cover)",
    ("addin/calc.py", "FileNotFoundError"): "the LibreOffice SDK is not installed: the machine, not an input",
    ("addin/calc.py", "RuntimeError"): "unoidl-write or unopkg failed: their output is the message",
    ("addin/convert.py", "AssertionError"): "the catalog's own invariant, checked by tests",
    ("workbook/engine/atomic.py", "KeyboardInterrupt"): "SIGTERM/SIGHUP unwind as Ctrl-C does, so a write cleans up",
}


def _raises():
    names = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
             and issubclass(getattr(builtins, n), BaseException)}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            rel = p.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Raise) and node.exc is not None:
                    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                    if isinstance(exc, ast.Name) and exc.id in names:
                        yield rel, exc.id, node.lineno


def test_no_builtin_exception_is_raised_for_input():
    found = [f"{f} line {line}: raise {name}" for f, name, line in _raises() if (f, name) not in NOT_INPUT]
    assert found == [], "raise a CryptoplanError subclass (cryptoplan.model.errors) instead:\n" + "\n".join(found)


def test_every_listed_exception_is_still_raised():
    seen = {(f, name) for f, name, _ in _raises()}
    assert set(NOT_INPUT) <= seen, sorted(set(NOT_INPUT) - seen)


def test_the_scan_catches_a_planted_raise(tmp_path, monkeypatch):
    probe = ROOT / "model" / "_probe_for_test_errors.py"
    assert not probe.exists()
    try:
        probe.write_text("def f(x):\n    raise ValueError(x)\n", encoding="utf-8")
        assert any(f == "model/_probe_for_test_errors.py" for f, _, _ in _raises())
    finally:
        probe.unlink()


@pytest.mark.parametrize("cls, builtin", [
    ("cryptoplan.model.zos.plan:PlanError", ValueError),
    ("cryptoplan.model.calibration.observations:CalibrationError", ValueError),
    ("cryptoplan.model.site.rmf_report:RmfReportError", ValueError),
    ("cryptoplan.model.site.smf70:Smf70Error", ValueError),
    ("cryptoplan.model.site.smf:SmfError", ValueError),
    ("cryptoplan.model.site.hfp:HfpError", ValueError),
    ("cryptoplan.model.params:ParameterFileError", ValueError),
    ("cryptoplan.model.params:MissingParameterFile", FileNotFoundError),
    ("cryptoplan.model.figures:FigureTableError", ValueError),
    ("cryptoplan.model._validate:ArgumentError", ValueError),
    ("cryptoplan.model._validate:UnstableQueueError", ValueError),
    ("cryptoplan.model._validate:NotAvailableError", ValueError),
    ("cryptoplan.workbook.engine.package:WorkbookFileError", Exception),
    ("cryptoplan.workbook.engine.core:EngineError", Exception),
    ("cryptoplan.workbook.engine.parser:FormulaError", ValueError),
    ("cryptoplan.workbook.engine.atomic:OutputError", ValueError),
    ("cryptoplan.workbook.recalculation:RecalcError", Exception),
    ("cryptoplan.addin.convert:CellError", ValueError),
])
def test_each_error_class_is_a_cryptoplan_error_and_keeps_its_builtin(cls, builtin):
    import importlib
    mod, _, name = cls.partition(":")
    c = getattr(importlib.import_module(mod), name)
    assert issubclass(c, errors.CryptoplanError) and issubclass(c, builtin)


def test_an_unknown_name_reads_as_its_sentence():
    assert str(errors.UnknownName("no output 'x'; outputs: a, b")) == "no output 'x'; outputs: a, b"
    assert isinstance(errors.UnknownName("x"), KeyError)
