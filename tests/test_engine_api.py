"""The formula engine's public interface (``cryptoplan.workbook.engine``), as scipy tests its own.

What is checked: every name in a public module's ``__all__`` exists; the package's lazy exports
resolve to the object of the submodule that defines it; the docstring example runs (doctest);
and the engine works without the add-in or the models (a fresh interpreter evaluates a
workbook with the native functions and has imported neither).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys

from pathlib import Path

import pytest

import cryptoplan.workbook.engine as engine

MODULES = ["cryptoplan.workbook.engine"] + [
    m.name for m in pkgutil.walk_packages(engine.__path__, "cryptoplan.workbook.engine.")]


def test_the_walk_finds_the_category_modules():
    assert {"cryptoplan.workbook.engine.core", "cryptoplan.workbook.engine.functions.lookup",
            "cryptoplan.workbook.engine.functions.statistical"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_public_name_exists(name):
    module = importlib.import_module(name)
    assert module.__all__, f"{name} declares no public API"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert missing == []


def test_the_lazy_exports_are_the_submodules_objects():
    # the package stub names each export's module (lazy_loader.attach_stub reads it at import)
    import ast
    stub = ast.parse(Path(engine.__file__).with_suffix(".pyi").read_text(encoding="utf-8"))
    pairs = [(a.name, n.module) for n in stub.body if isinstance(n, ast.ImportFrom) for a in n.names]
    assert sorted(name for name, _ in pairs) == sorted(engine.__all__)
    for name, sub in pairs:
        assert getattr(engine, name) is getattr(importlib.import_module(f"{engine.__name__}.{sub}"), name)
    with pytest.raises(AttributeError, match="NoSuchName"):
        engine.NoSuchName


def test_the_package_example_runs():
    result = doctest.testmod(engine, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0


@pytest.mark.subprocess
def test_the_engine_needs_neither_the_add_in_nor_the_models(tmp_path):
    code = f"""
import sys, openpyxl
from cryptoplan.workbook.engine import Engine, Package, native_functions
wb = openpyxl.Workbook(); ws = wb.active
ws["A1"], ws["B1"] = 4, "=SQRT(A1)+SUM(A1:A1)"
wb.save(r"{tmp_path / 'b.xlsx'}")
eng = Engine(Package(r"{tmp_path / 'b.xlsx'}"), native_functions())
eng.evaluate()
print(eng.value("Sheet!B1").num[0, 0, 0])
print(sorted(m for m in sys.modules if m.startswith(("cryptoplan.addin", "cryptoplan.model"))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # the one thing of the models it loads is the error base (model/errors.py imports nothing;
    # the package's facade binds its names lazily and loads none of them)
    assert out.split("\n")[:2] == ["6.0", "['cryptoplan.model', 'cryptoplan.model.errors']"]


def test_the_category_modules_partition_the_native_functions():
    from cryptoplan.workbook.engine import SUPPORTED, functions
    seen = {}
    for m in MODULES:
        mod = importlib.import_module(m)
        for name in getattr(mod, "FUNCTIONS", ()) if m != functions.__name__ else ():
            assert name not in seen, f"{name} in {m} and {seen.get(name)}"
            seen[name] = m
    assert sorted(seen) == sorted(SUPPORTED)
    assert seen["VLOOKUP"].endswith(".lookup") and seen["POISSON.DIST"].endswith(".statistical")


def test_resolve_name_is_a_deprecated_alias_giving_the_old_tuples(tmp_path):
    """Engine.resolve_name (tagged tuples, before the node classes) stays one release, warning."""
    import openpyxl
    from openpyxl.workbook.defined_name import DefinedName
    from cryptoplan.workbook.engine import Engine, Package, native_functions
    wb = openpyxl.Workbook()
    wb.active.title = "S"
    wb.defined_names["Block"] = DefinedName("Block", attr_text="S!$B$2:$C$4")
    wb.save(tmp_path / "n.xlsx")
    eng = Engine(Package(str(tmp_path / "n.xlsx")), native_functions())
    with pytest.warns(DeprecationWarning, match="defined_name"):
        old = eng.resolve_name("Block", None)
    assert old == (("ref", "S", 2, 2, 4, 3), None)
    node, home = eng.defined_name("Block", None)
    assert (node.sheet, node.r1, node.c1, node.r2, node.c2, home) == ("S", 2, 2, 4, 3, None)


def test_a_diagnostic_reads_as_text_for_an_error_code_and_for_an_add_ins_error_text():
    from cryptoplan.workbook.engine.context import Diagnostic
    from cryptoplan.workbook.engine.values import ERR_DIV0, STR
    assert Diagnostic("MMC_WAIT", ERR_DIV0, "no servers").text() == "MMC_WAIT: #DIV/0! no servers"
    said = "#NUM! ERLANGC: unstable queue"
    assert Diagnostic("ERLANGC", STR, said).text() == f"ERLANGC: {said}"


def test_independent_of_names_the_cells_an_input_cannot_reach(tmp_path):
    """Engine.independent_of (what a sweep keeps from chunk to chunk): a cell reading the input,
    directly, through a range or through another formula, is dependent; so is one with a reference
    known only when it runs (INDIRECT, even of another cell), a volatile function and an array
    formula; the rest are free."""
    import openpyxl
    from openpyxl.worksheet.formula import ArrayFormula

    from cryptoplan.workbook.engine import Engine, Package, native_functions
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    ws["A1"], ws["A2"] = 1, 2
    cells = {"B1": "=A1*2", "B2": "=B1+1", "B3": "=SUM(A1:A2)", "B4": "=A2*3", "B5": "=B4+1",
             "B6": '=INDIRECT("A2")', "B7": "=NOW()*0+A2", "B8": "=LEN(\"x\")"}
    for k, f in cells.items():
        ws[k] = f
    ws["C1"] = ArrayFormula("C1:C2", "=A2:A3*1")
    wb.save(tmp_path / "b.xlsx")
    eng = Engine(Package(str(tmp_path / "b.xlsx")), native_functions(), n=2)
    free = eng.independent_of([eng.locate("S!A1")])
    names = {f"{openpyxl.utils.get_column_letter(c)}{r}" for _, r, c in free}
    assert names == {"B4", "B5", "B8"}, names
    assert {f"{openpyxl.utils.get_column_letter(c)}{r}" for _, r, c in eng.independent_of([])} == \
        {"B1", "B2", "B3", "B4", "B5", "B8"}
