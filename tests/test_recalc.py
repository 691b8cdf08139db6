"""``cryptoplan recalc`` and the workbook engine (workbook/engine*.py, workbook/recalculation.py).

Expected-value sources, test by test:

* native formulas: the value Excel documents for the function (cited inline,
  e.g. ``ROUND`` rounds half away from zero, ``-2^2 = 4``), computed by hand
  or with Python's ``math`` / SciPy for the statistical functions;
* UDF cells: the ``model`` function called directly from Python with the same
  arguments (the engine must add nothing);
* written files: the XML of the output package read back (openpyxl with
  ``data_only=True`` for cached values, raw parts for byte-identity);
* LibreOffice comparisons live in ``tests/test_recalc_libreoffice.py``.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.formula import ArrayFormula
from scipy import stats

from cryptoplan import model
from cryptoplan.workbook import recalc
from cryptoplan.cli import main
from cryptoplan.workbook.engine import Engine, FunctionRegistry
from cryptoplan.workbook.catalog_functions import default_functions
from cryptoplan.workbook.engine import native_functions
from cryptoplan.workbook.catalog_functions import callable_function
from cryptoplan.workbook.engine.package import Package
from cryptoplan.workbook.engine.values import ExcelError
from cryptoplan.workbook.recalculation import (
    EXIT_BAD_FILE, EXIT_ERROR_VALUES, EXIT_NOT_COMPUTED, EXIT_OK, RecalcError, load_engine,
    recalc_report,
)



# ----------------------------------------------------------------- helpers
def make_wb(path: Path, sheets: dict, names: dict | None = None, local_names=None) -> Path:
    """Write a workbook: ``sheets = {title: {"A1": value or "=formula" or ArrayFormula}}``."""
    wb = openpyxl.Workbook()
    first = True
    for title, cells in sheets.items():
        ws = wb.active if first else wb.create_sheet()
        ws.title = title
        first = False
        for coord, value in cells.items():
            ws[coord] = value
    for name, ref in (names or {}).items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)
    for title, name, ref in (local_names or []):
        wb[title].defined_names[name] = DefinedName(name, attr_text=ref)
    wb.save(path)
    return path


def registry(**udfs) -> FunctionRegistry:
    reg = native_functions()
    for name, fn in udfs.items():
        reg[name.upper()] = callable_function(name.upper(), fn)
    return reg


def evaluate(path, functions=None, inputs=None, n=1):
    eng = Engine(Package(path), functions=functions or registry(), n=n)
    for k, v in (inputs or {}).items():
        eng.set_input(k, v)
    eng.evaluate()
    return eng


def val(eng, where, s=0):
    return eng.value(where).element(s)


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------ native Excel
def test_arithmetic_precedence_and_coercion(tmp_path):
    p = make_wb(tmp_path / "a.xlsx", {"S": {
        "A1": 2, "A2": "3", "A3": True,
        "B1": "=-A1^2",            # Excel: negation binds tighter than ^ -> 4
        "B2": "=2^3^2",            # Excel: ^ is left-associative -> 64
        "B3": "=A2+1",             # numeric text coerces -> 4
        "B4": "=A3+1",             # TRUE -> 1 -> 2
        "B5": "=A9+1",             # empty cell -> 0 -> 1
        "B6": '="a"+1',            # non-numeric text -> #VALUE!
        "B7": "=1/0",              # #DIV/0!
        "B8": "=(0.1+0.2)=0.3",    # equal to 15 digits -> TRUE (Excel)
        "B9": '="abc"="ABC"',      # text compares case-insensitively -> TRUE
        "B10": '=1<"a"',           # numbers sort before text -> TRUE
        "B11": "=50%*4",           # 2
        "B12": '=1&"x"&TRUE',      # "1xTRUE"
        "B13": "=A9",              # a formula showing an empty cell shows 0
        "B14": "=B7+1",            # errors propagate
        "B15": "=1+2*3-4/2",       # 5
    }})
    eng = evaluate(p)
    expect = {"B1": 4.0, "B2": 64.0, "B3": 4.0, "B4": 2.0, "B5": 1.0, "B6": "#VALUE!",
              "B7": "#DIV/0!", "B8": True, "B9": True, "B10": True, "B11": 2.0, "B12": "1xTRUE",
              "B13": 0.0, "B14": "#DIV/0!", "B15": 5.0}
    for cell, want in expect.items():
        got = val(eng, f"S!{cell}")
        assert got == want and type(got) is type(want) or (isinstance(got, ExcelError) and got == want), \
            (cell, got, want)


def test_functions_against_documented_values(tmp_path):
    p = make_wb(tmp_path / "f.xlsx", {"S": {
        "A1": 2.675, "A2": -2.5, "A3": 7, "A4": 3,
        "B1": "=ROUND(A1,2)",           # half away from zero on the decimal value: 2.68
        "B2": "=ROUND(A2,0)",           # -3
        "B3": "=ROUNDUP(A2,0)",         # -3
        "B4": "=ROUNDDOWN(2.99,1)",     # 2.9
        "B5": "=CEILING(2.1,0.5)",      # 2.5
        "B6": "=FLOOR(-2.5,-2)",        # -2 (Excel doc)
        "B7": "=MOD(-7,3)",             # 2 (sign of the divisor)
        "B8": "=INT(-1.5)",             # -2
        "B9": "=FACT(5)",               # 120
        "B10": "=SQRT(-1)",             # #NUM!
        "B11": "=LN(0)",                # #NUM!
        "B12": "=LOG(1000)",            # 3
        "B13": "=POWER(2,10)",          # 1024
        "B14": "=_xlfn.POISSON.DIST(A4,2.5,TRUE)",
        "B15": "=_xlfn.POISSON.DIST(A4,2.5,FALSE)",
        "B16": "=ABS(-3)+EXP(0)",       # 4
        "B17": "=IFERROR(1/0,\"x\")",    # x
        "B18": "=ISERROR(1/0)",         # TRUE
        "B19": "=ISNUMBER(A3)",         # TRUE
        "B20": "=AND(TRUE,A3>5,NOT(FALSE))",
        "B21": "=OR(FALSE,A3<5)",       # FALSE
        "B22": "=_xlfn.IFS(A3<5,\"small\",A3<10,\"mid\")",
        "B23": "=CHOOSE(2,\"a\",\"b\",\"c\")",
        "B24": "=MIN(A1:A4)+MAX(A1:A4)",  # -2.5 + 7
        "B25": "=AVERAGE(A3:A4,5)",     # 5
        "B26": "=COUNT(A1:A4,\"x\")",   # 4
        "B27": "=SUM(A1:A4)",           # 10.175
        "B28": "=NA()",
        "B29": "=CEILING(-2.5,2)",      # -2 (rounds toward zero, Excel doc)
        "B30": "=SUMPRODUCT(A1:A2,A3:A4)",  # 2.675*7 - 2.5*3
    }})
    eng = evaluate(p)
    assert val(eng, "S!B1") == 2.68
    assert val(eng, "S!B2") == -3.0
    assert val(eng, "S!B3") == -3.0
    assert val(eng, "S!B4") == 2.9
    assert val(eng, "S!B5") == 2.5
    assert val(eng, "S!B6") == -2.0
    assert val(eng, "S!B7") == 2.0
    assert val(eng, "S!B8") == -2.0
    assert val(eng, "S!B9") == 120.0
    assert val(eng, "S!B10") == "#NUM!" and val(eng, "S!B11") == "#NUM!"
    assert val(eng, "S!B12") == pytest.approx(3.0, rel=1e-15)
    assert val(eng, "S!B13") == 1024.0
    assert val(eng, "S!B14") == pytest.approx(stats.poisson.cdf(3, 2.5), rel=1e-14)
    assert val(eng, "S!B15") == pytest.approx(math.exp(-2.5) * 2.5 ** 3 / 6, rel=1e-14)
    assert val(eng, "S!B16") == 4.0
    assert val(eng, "S!B17") == "x"
    assert val(eng, "S!B18") is True and val(eng, "S!B19") is True
    assert val(eng, "S!B20") is True and val(eng, "S!B21") is False
    assert val(eng, "S!B22") == "mid"
    assert val(eng, "S!B23") == "b"
    assert val(eng, "S!B24") == 4.5
    assert val(eng, "S!B25") == 5.0
    assert val(eng, "S!B26") == 4.0
    assert val(eng, "S!B27") == pytest.approx(10.175, rel=1e-15)
    assert val(eng, "S!B28") == "#N/A"
    assert val(eng, "S!B29") == -2.0
    assert val(eng, "S!B30") == pytest.approx(2.675 * 7 - 2.5 * 3, rel=1e-15)


def test_distributions_against_scipy_stats(tmp_path):
    # the engine computes these with scipy.special (pdtr, ndtr, ndtri, xlogy); scipy.stats is the
    # independent reference, over tails, a zero mean and non-integer counts (truncated, as Excel)
    cases = {
        "B1": ("=_xlfn.POISSON.DIST(0,0,FALSE)", 1.0),
        "B2": ("=_xlfn.POISSON.DIST(0,0,TRUE)", 1.0),
        "B3": ("=_xlfn.POISSON.DIST(40,12.5,TRUE)", stats.poisson.cdf(40, 12.5)),
        "B4": ("=_xlfn.POISSON.DIST(7.9,3,FALSE)", stats.poisson.pmf(7, 3)),
        "B5": ("=POISSON(170,150,FALSE)", stats.poisson.pmf(170, 150)),
        "B6": ("=_xlfn.NORM.DIST(1.3,0.5,2,TRUE)", stats.norm.cdf(1.3, 0.5, 2)),
        "B7": ("=_xlfn.NORM.DIST(1.3,0.5,2,FALSE)", stats.norm.pdf(1.3, 0.5, 2)),
        "B8": ("=_xlfn.NORM.S.DIST(-6,TRUE)", stats.norm.cdf(-6)),
        "B9": ("=_xlfn.NORM.S.DIST(0.25,FALSE)", stats.norm.pdf(0.25)),
        "B10": ("=NORMSDIST(2.5)", stats.norm.cdf(2.5)),
        "B11": ("=_xlfn.NORM.INV(0.975,10,3)", stats.norm.ppf(0.975, 10, 3)),
        "B12": ("=NORMINV(1E-9,0,1)", stats.norm.ppf(1e-9)),
    }
    p = make_wb(tmp_path / "d.xlsx", {"S": {k: f for k, (f, _) in cases.items()} | {
        "C1": "=_xlfn.POISSON.DIST(-1,2,TRUE)", "C2": "=_xlfn.NORM.DIST(1,0,0,TRUE)",
        "C3": "=_xlfn.NORM.INV(1,0,1)"}})
    eng = evaluate(p)
    for cell, (_, want) in cases.items():
        np.testing.assert_allclose(val(eng, f"S!{cell}"), want, rtol=1e-12, err_msg=cell)
    for cell in ("C1", "C2", "C3"):
        assert val(eng, f"S!{cell}") == "#NUM!", cell


def test_lookups(tmp_path):
    p = make_wb(tmp_path / "l.xlsx", {"T": {
        "A1": "integrity", "B1": 1.5, "A2": "privacy", "B2": 2.5, "A3": "confidentiality", "B3": 4,
        "D1": 0, "E1": "low", "D2": 100, "E2": "mid", "D3": 1000, "E3": "high",
        "C5": "=INDEX(B1:B3,MATCH(\"PRIVACY\",A1:A3,0))",   # 2.5 (case-insensitive exact)
        "C6": "=VLOOKUP(\"conf*\",A1:B3,2,FALSE)",          # 4 (wildcard)
        "C7": "=VLOOKUP(150,D1:E3,2)",                      # mid (approximate, sorted)
        "C8": "=VLOOKUP(\"none\",A1:B3,2,FALSE)",           # #N/A
        "C9": "=_xlfn.XLOOKUP(\"privacy\",A1:A3,B1:B3)",    # 2.5
        "C10": "=_xlfn.XLOOKUP(\"x\",A1:A3,B1:B3,\"nf\")",  # nf
        "C11": "=HLOOKUP(\"b\",{\"a\",\"b\";1,2},2,FALSE)",   # 2
        "C12": "=MATCH(500,D1:D3)",                         # 2
        "C13": "=INDEX(D1:E3,3,2)",                         # high
        "C14": "=SUM(B1:INDEX(B1:B3,2))",                   # INDEX as a reference: 4
        "C15": "=ROWS(A1:B3)*COLUMNS(A1:B3)",               # 6
        "C16": "=COUNTIF(B1:B3,\">2\")",                    # 2
        "C17": "=SUMIF(A1:A3,\"<>privacy\",B1:B3)",         # 5.5
        "C18": "=_xlfn.XLOOKUP(120,D1:D3,E1:E3,,-1)",       # mid (next smaller: 100)
    }})
    eng = evaluate(p)
    expect = {"C5": 2.5, "C6": 4.0, "C7": "mid", "C8": "#N/A", "C9": 2.5, "C10": "nf", "C11": 2.0,
              "C12": 2.0, "C13": "high", "C14": 4.0, "C15": 6.0, "C16": 2.0, "C17": 5.5,
              "C18": "mid"}
    for cell, want in expect.items():
        assert val(eng, f"T!{cell}") == want, cell


def test_names_sheets_intersection_and_arrays(tmp_path):
    p = make_wb(tmp_path / "n.xlsx", {
        "My Sheet": {"A1": 10, "A2": 20, "A3": 30, "B2": "=A1:A3*2",   # implicit intersection: 40
                     "C1": "=Local*2"},
        "Other": {"A1": "='My Sheet'!A3+Rate", "A5": "=Local",          # #NAME?: Local is scoped
                  "B1": ArrayFormula("B1:B3", "='My Sheet'!A1:A3*10"),
                  "C1": "=SUM('My Sheet'!A:A)"},                        # whole column: 60
    }, names={"Rate": "'My Sheet'!$A$2"}, local_names=[("My Sheet", "Local", "'My Sheet'!$A$1")])
    eng = evaluate(p)
    assert val(eng, "'My Sheet'!B2") == 40.0
    assert val(eng, "'My Sheet'!C1") == 20.0
    assert val(eng, "Other!A1") == 50.0
    assert val(eng, "Other!A5") == "#NAME?"
    assert [val(eng, f"Other!B{i}") for i in (1, 2, 3)] == [100.0, 200.0, 300.0]
    assert val(eng, "Other!C1") == 60.0
    assert eng.diagnostics[eng.locate("Other!A5")][0].message == "unknown name LOCAL"


def test_shared_formulas_are_expanded(tmp_path):
    p = make_wb(tmp_path / "s.xlsx", {"S": {"A1": 1, "A2": 2, "A3": 3, "B1": "=A1*10"}})
    # rewrite B1 as the master of a shared formula over B1:B3 (what Excel writes for fill-down)
    z = zipfile.ZipFile(p)
    parts = {i.filename: z.read(i.filename) for i in z.infolist()}
    xml = parts["xl/worksheets/sheet1.xml"].decode()
    xml = xml.replace('<c r="B1"><f>A1*10</f><v /></c>', '<c r="B1"><f t="shared" ref="B1:B3" si="0">A1*10</f></c>')
    xml = xml.replace('<c r="A2" t="n"><v>2</v></c>', '<c r="A2" t="n"><v>2</v></c><c r="B2"><f t="shared" si="0"/></c>')
    xml = xml.replace('<c r="A3" t="n"><v>3</v></c>', '<c r="A3" t="n"><v>3</v></c><c r="B3"><f t="shared" si="0"/></c>')
    parts["xl/worksheets/sheet1.xml"] = xml.encode()
    q = tmp_path / "shared.xlsx"
    with zipfile.ZipFile(q, "w") as out:
        for k, v in parts.items():
            out.writestr(k, v)
    eng = evaluate(q)
    assert [val(eng, f"S!B{i}") for i in (1, 2, 3)] == [10.0, 20.0, 30.0]


# ------------------------------------------------------------------ UDFs
def test_registered_udfs_equal_the_model(tmp_path):
    p = make_wb(tmp_path / "u.xlsx", {"S": {
        "A1": 9.0, "A2": 10.0, "A3": 2000.0, "A4": 0.4e-3, "A5": 1.0,
        "B1": "=ERLANGC(A1,A2)", "B2": "=MMC_WAIT(A3,A4,A5)", "B3": "=ERLANGC(A2,A2)",
        "B4": "=IFERROR(B3,-1)", "B5": "=ERLANGC(A1:A2,A2)"}})
    eng = evaluate(p, registry(ERLANGC=model.erlang_c, MMC_WAIT=model.mmc_wait))
    assert val(eng, "S!B1") == model.erlang_c(9.0, 10.0)
    assert val(eng, "S!B2") == model.mmc_wait(2000.0, 0.4e-3, 1.0)
    # traffic == servers: UnstableQueueError (a ValueError) -> #NUM! in that cell only
    assert val(eng, "S!B3") == "#NUM!"
    assert "unstable" in eng.diagnostics[eng.locate("S!B3")][0].message
    assert val(eng, "S!B4") == -1.0
    # a range argument is evaluated element-wise; a normal cell shows the first element
    assert val(eng, "S!B5") == model.erlang_c(9.0, 10.0)


def test_udf_is_called_once_for_all_scenarios(tmp_path):
    calls = []

    def erlang_c(a, c):
        calls.append(np.size(a))
        return model.erlang_c(a, c)
    p = make_wb(tmp_path / "v.xlsx", {"S": {"A1": 1.0, "A2": 10.0, "B1": "=ERLANGC(A1*2,A2)"}})
    traffic = np.linspace(0.5, 4.9, 1000)
    eng = evaluate(p, registry(ERLANGC=erlang_c), inputs={"S!A1": traffic}, n=1000)
    got = eng.value("S!B1").num[:, 0, 0]
    np.testing.assert_allclose(got, model.erlang_c(traffic * 2, 10.0), rtol=1e-15)
    assert calls == [1000]


def test_udf_errors_stay_in_their_scenario(tmp_path):
    p = make_wb(tmp_path / "e.xlsx", {"S": {"A1": 1.0, "A2": 3.0, "B1": "=ERLANGC(A1,A2)"}})
    traffic = [1.0, 2.0, 3.0, 2.5, 5.0, 0.5] * 3
    eng = evaluate(p, registry(ERLANGC=model.erlang_c), inputs={"S!A1": traffic}, n=len(traffic))
    v = eng.value("S!B1")
    for s, a in enumerate(traffic):
        got = v.element(s)
        if a >= 3.0:
            assert got == "#NUM!"
        else:
            assert got == model.erlang_c(a, 3.0)
    assert not np.isnan(v.num).any()


def test_catalog_udfs_match_the_add_in(tmp_path):
    """Cells calling catalog functions equal addin.convert.call (what Excel shows)."""
    from cryptoplan.addin import catalog, convert
    p = make_wb(tmp_path / "c.xlsx", {"S": {
        "A1": 9.0, "A2": 10.0, "A3": 10.5,
        "B1": "=ERLANGC(A1,A2)", "B2": "=ERLANGC(A3,A2)", "B3": "=ERLANGB(A1,A2)",
        "B4": "=ERLANGC(A9,A2)", "B5": "=ERLANGC(1/0,A2)"}})
    eng = evaluate(p, functions=None)  # default registry: native + catalog
    eng2 = Engine(Package(p), default_functions())
    eng2.evaluate()
    spec = catalog.get("ERLANGC")
    assert val(eng2, "S!B1") == convert.call(spec, (9.0, 10.0)) == model.erlang_c(9.0, 10.0)
    assert val(eng2, "S!B2") == convert.call(spec, (10.5, 10.0))
    assert str(val(eng2, "S!B2")).startswith("#NUM! ERLANGC")
    assert val(eng2, "S!B3") == model.erlang_b(9.0, 10.0)
    assert val(eng2, "S!B4") == convert.call(spec, (None, 10.0))        # empty: required
    assert val(eng2, "S!B5") == convert.call(spec, ("#DIV/0!", 10.0))   # error arrives as text
    del eng


# -------------------------------------------------- problems and exit codes
def test_unsupported_function_and_cycle_are_reported(tmp_path):
    p = make_wb(tmp_path / "p.xlsx", {"Results": {
        "A1": "Good", "B1": "=1+1", "A2": "Unsupported", "B2": "=WEIRDFN(1)",
        "A3": "Loop", "B3": "=B4+1", "B4": "=B3+1"}})
    rec = recalc_report(p, functions=registry())
    assert rec.as_dict()["Good"] == 2.0
    assert rec.exit_code == EXIT_NOT_COMPUTED
    kinds = {(pr.where, pr.kind) for pr in rec.problems}
    assert ("Results!B2", "unsupported") in kinds
    assert ("Results!B3", "circular") in kinds and ("Results!B4", "circular") in kinds
    msg = next(pr for pr in rec.problems if pr.where == "Results!B2")
    assert msg.function == "WEIRDFN" and "WEIRDFN" in msg.message
    res = run("recalc", p)
    assert res.exit_code == EXIT_NOT_COMPUTED
    assert "Results!B2: WEIRDFN" in res.output and "circular" in res.output


def test_exit_codes_ok_and_error_values(tmp_path):
    ok = make_wb(tmp_path / "ok.xlsx", {"Results": {"A1": "x", "B1": "=2*3"}})
    bad = make_wb(tmp_path / "bad.xlsx", {"Results": {"A1": "x", "B1": "=1/0"}})
    r1 = run("recalc", ok, "--json")
    assert r1.exit_code == EXIT_OK
    assert json.loads(r1.output)["outputs"][0] == {
        "key": "x", "cell": "Results!B1", "value": 6.0, "text": "6", "error": False,
        "message": None, "names": []}
    r2 = run("recalc", bad)
    assert r2.exit_code == EXIT_ERROR_VALUES and "#DIV/0!" in r2.output


def test_outputs_of_first_sheet_when_no_results_sheet(tmp_path):
    p = make_wb(tmp_path / "f.xlsx", {"Calc": {"A1": "Total", "B1": "=SUM(C1:C3)", "C1": 1, "C2": 2,
                                               "B5": "=B1*2"}}, names={"Doubled": "Calc!$B$5"})
    assert recalc(p, functions=registry()) == {"Total": 3.0, "Doubled": 6.0}


# ------------------------------------------------------------------ writing
def test_written_file_has_formulas_and_values_input_untouched(tmp_path):
    p = make_wb(tmp_path / "w.xlsx", {"Inputs": {"A1": "Rate", "B1": 100, "A2": "Name", "B2": "x"},
                                      "Results": {"A1": "Double", "B1": "=Rate*2",
                                                  "A2": "Label", "B2": '=Who&"!"',
                                                  "A3": "Flag", "B3": "=Rate>50",
                                                  "A4": "Err", "B4": "=NA()"}},
                names={"Rate": "Inputs!$B$1", "Who": "Inputs!$B$2"})
    before = sha(p)
    out = tmp_path / "out.xlsx"
    res = run("recalc", p, "-o", out, "--set", "Rate=250", "--set", "Who==1+1")
    assert res.exit_code == EXIT_ERROR_VALUES, res.output   # B4 is #N/A
    assert sha(p) == before
    vals = openpyxl.load_workbook(out, data_only=True)
    assert vals["Results"]["B1"].value == 500
    assert vals["Results"]["B2"].value == "=1+1!"
    assert vals["Results"]["B3"].value is True
    assert vals["Results"]["B4"].value == "#N/A"
    assert vals["Inputs"]["B1"].value == 250
    forms = openpyxl.load_workbook(out)
    assert forms["Results"]["B1"].value == "=Rate*2"
    # text that looks like a formula is written as text, never as a formula
    assert forms["Inputs"]["B2"].value == "=1+1" and forms["Inputs"]["B2"].data_type == "s"
    with zipfile.ZipFile(out) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        assert "<f>" not in sheet and "=1+1" in sheet
        assert 't="inlineStr"' in sheet
    # a pure native workbook keeps workbook.xml (names, calcPr) byte-identical
    with zipfile.ZipFile(p) as a, zipfile.ZipFile(out) as b:
        assert a.read("xl/workbook.xml") == b.read("xl/workbook.xml")
        assert a.read("xl/styles.xml") == b.read("xl/styles.xml")
        assert a.namelist() == b.namelist()


def test_in_place_and_same_file_protection(tmp_path):
    p = make_wb(tmp_path / "i.xlsx", {"Results": {"A1": "x", "B1": "=6*7"}})
    res = run("recalc", p, "-o", p)
    assert res.exit_code == EXIT_BAD_FILE and "--in-place" in res.output
    assert openpyxl.load_workbook(p, data_only=True)["Results"]["B1"].value is None
    res = run("recalc", p, "--in-place")
    assert res.exit_code == EXIT_OK
    assert openpyxl.load_workbook(p, data_only=True)["Results"]["B1"].value == 42
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_set_errors(tmp_path):
    p = make_wb(tmp_path / "s.xlsx", {"Results": {"A1": "x", "B1": "=A5*2", "A5": 1}},
                names={"In": "Results!$A$5", "Block": "Results!$A$1:$A$5"})
    for arg, text in [("Nope=1", "no defined name 'NOPE'"), ("Missing!A1=1", "no sheet 'Missing'"),
                      ("Results!B1=3", "holds a formula"), ("Block=1", "refers to a range")]:
        res = run("recalc", p, "--set", arg, "-o", tmp_path / "o.xlsx")
        assert res.exit_code == EXIT_BAD_FILE, arg
        assert text in res.output, (arg, res.output)
        assert not (tmp_path / "o.xlsx").exists()
    assert run("recalc", p, "--set", "In").exit_code == 2
    assert recalc(p, {"In": 21}, functions=registry()) == {"x": 42.0}


# ------------------------------------------------------------- robustness
def _bad_file_check(tmp_path, path, text):
    out = tmp_path / "never.xlsx"
    res = run("recalc", path, "-o", out)
    assert res.exit_code == EXIT_BAD_FILE, res.output
    assert text in res.output, res.output
    assert "Traceback" not in res.output
    assert not out.exists()
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_not_an_xlsx(tmp_path):
    p = tmp_path / "notes.xlsx"
    p.write_text("hello, I am text")
    _bad_file_check(tmp_path, p, "not an xlsx/xlsm workbook")
    q = tmp_path / "old.xls"
    q.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 512)
    _bad_file_check(tmp_path, q, "OLE compound file")
    _bad_file_check(tmp_path, tmp_path / "absent.xlsx", "no such file")


def test_truncated_zip(tmp_path):
    p = make_wb(tmp_path / "t.xlsx", {"S": {"A1": "=1"}})
    data = p.read_bytes()
    q = tmp_path / "trunc.xlsx"
    q.write_bytes(data[: len(data) // 2])
    _bad_file_check(tmp_path, q, "corrupt or truncated")


def _replace_part(src: Path, dst: Path, part: str, data: bytes) -> Path:
    with zipfile.ZipFile(src) as z:
        items = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for info, content in items:
            out.writestr(info.filename, data if info.filename == part else content)
    return dst


def test_xml_entity_bomb_is_refused(tmp_path):
    p = make_wb(tmp_path / "b.xlsx", {"S": {"A1": 1}})
    bomb = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            + b"".join(b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
                       for i in range(1, 10))
            + b']><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
              b'<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&lol9;</t></is></c></row>'
              b'</sheetData></worksheet>')
    q = _replace_part(p, tmp_path / "bomb.xlsx", "xl/worksheets/sheet1.xml", bomb)
    _bad_file_check(tmp_path, q, "unsafe XML in xl/worksheets/sheet1.xml")


def test_missing_sheet_part_and_workbook_part(tmp_path):
    p = make_wb(tmp_path / "m.xlsx", {"S": {"A1": 1}})
    with zipfile.ZipFile(p) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    q = tmp_path / "nosheet.xlsx"
    with zipfile.ZipFile(q, "w") as out:
        for n, d in items:
            if n != "xl/worksheets/sheet1.xml":
                out.writestr(n, d)
    _bad_file_check(tmp_path, q, "sheet 'S' has no part")
    r = tmp_path / "doc.xlsx"
    with zipfile.ZipFile(r, "w") as out:
        out.writestr("word/document.xml", "<w/>")
    _bad_file_check(tmp_path, r, "not an Excel workbook")


def test_cell_limit(tmp_path):
    p = make_wb(tmp_path / "h.xlsx", {"S": {f"A{i}": i for i in range(1, 51)}})
    res = run("recalc", p, "--max-cells", "20")
    assert res.exit_code == EXIT_BAD_FILE and "more than 20 cells" in res.output


@pytest.mark.slow
def test_default_cell_limit_on_a_huge_sheet(tmp_path):
    """A sheet over the documented 2,000,000-cell limit is refused quickly, without memory blow-up."""
    from cryptoplan.workbook.engine.package import MAX_CELLS
    p = make_wb(tmp_path / "base.xlsx", {"S": {"A1": 1}})
    rows = MAX_CELLS // 4 + 10
    body = io.StringIO()
    body.write('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>')
    for r in range(1, rows + 1):
        body.write(f'<row r="{r}"><c r="A{r}"><v>1</v></c><c r="B{r}"><v>2</v></c>'
                   f'<c r="C{r}"><v>3</v></c><c r="D{r}"><v>4</v></c></row>')
    body.write("</sheetData></worksheet>")
    q = _replace_part(p, tmp_path / "huge.xlsx", "xl/worksheets/sheet1.xml", body.getvalue().encode())
    _bad_file_check(tmp_path, q, f"more than {MAX_CELLS:,} cells")


def _make_xlsm(tmp_path) -> tuple[Path, bytes]:
    p = make_wb(tmp_path / "m.xlsx", {"Results": {"A1": "x", "B1": "=2+2"}})
    vba = os.urandom(4096) + b"Attribute VB_Name = \"Module1\"\nSub AutoOpen(): Shell \"calc\": End Sub"
    with zipfile.ZipFile(p) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    q = tmp_path / "macro.xlsm"
    with zipfile.ZipFile(q, "w", zipfile.ZIP_DEFLATED) as out:
        for n, d in items:
            if n == "[Content_Types].xml":
                d = d.replace(b"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                              b"application/vnd.ms-excel.sheet.macroEnabled.main+xml")
                d = d.replace(b"</Types>", b'<Default Extension="bin" ContentType='
                              b'"application/vnd.ms-office.vbaProject"/></Types>')
            if n == "xl/_rels/workbook.xml.rels":
                d = d.replace(b"</Relationships>", b'<Relationship Id="rIdVba" Type="http://schemas.'
                              b'microsoft.com/office/2006/relationships/vbaProject" Target="vbaProject.bin"/>'
                              b"</Relationships>")
            out.writestr(n, d)
        out.writestr("xl/vbaProject.bin", vba)
    return q, vba


def test_xlsm_macros_kept_never_run(tmp_path):
    q, vba = _make_xlsm(tmp_path)
    out = tmp_path / "out.xlsm"
    res = run("recalc", q, "-o", out)
    assert res.exit_code == EXIT_OK, res.output
    with zipfile.ZipFile(out) as z:
        assert z.read("xl/vbaProject.bin") == vba
        with zipfile.ZipFile(q) as src:
            assert z.read("[Content_Types].xml") == src.read("[Content_Types].xml")
    wb = openpyxl.load_workbook(out, data_only=True, keep_vba=True)
    assert wb["Results"]["B1"].value == 4
    wb.vba_archive.close()      # openpyxl's in-memory copy of the macros (never closed otherwise)
    res = run("recalc", q, "-o", tmp_path / "out2.xlsx")
    assert res.exit_code == EXIT_BAD_FILE and "write it to a .xlsm" in res.output


def test_unsupported_cells_written_without_cached_value(tmp_path):
    p = make_wb(tmp_path / "u.xlsx", {"Results": {"A1": "x", "B1": "=NOPE()", "A2": "y", "B2": "=1"}})
    out = tmp_path / "o.xlsx"
    assert run("recalc", p, "-o", out).exit_code == EXIT_NOT_COMPUTED
    ws = openpyxl.load_workbook(out, data_only=True)["Results"]
    assert ws["B1"].value is None and ws["B2"].value == 1
    with zipfile.ZipFile(out) as z:  # Excel is asked to compute what the engine could not
        assert b'fullCalcOnLoad="1"' in z.read("xl/workbook.xml")


# ------------------------------------------------------------- the template
def _template(tmp_path):
    from cryptoplan.workbook.template import write_template
    return write_template(tmp_path / "planner.xlsx")


def test_template_udf_cells_equal_the_model(tmp_path):
    from cryptoplan.workbook.template import input_defaults
    p = _template(tmp_path)
    d = input_defaults()
    ams = (d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"], d["KeyReuse"])
    out = recalc(p, {"TxRate": 1500.0})
    assert out["Most the requesters reach"] == pytest.approx(model.ams_throughput(
        *ams, d["Requesters"], d["Coprocessors"], d["Accelerators"], d["Recipients"], d["Processors"],
        d["Platform"]), rel=1e-15)
    assert out["Accelerator utilization (RMF summary)"] == pytest.approx(model.card_utilization(
        1500.0, *ams, "accelerator", d["Accelerators"], d["Recipients"]), rel=1e-15)
    assert out["Coprocessors required"] == model.coprocessors_required(
        1500.0, *ams, d["MaxUtilization"], d["MaxWaitMs"], d["Recipients"])
    assert not any(isinstance(v, float) and math.isnan(v) for v in out.values())


def test_template_recalc_writes_values_and_keeps_package(tmp_path):
    p = _template(tmp_path)
    out = tmp_path / "recalc.xlsx"
    res = run("recalc", p, "-o", out, "--set", "TxRate=2500")
    assert res.exit_code in (EXIT_OK, EXIT_ERROR_VALUES), res.output
    assert "Accelerators required" in res.output
    ws = openpyxl.load_workbook(out, data_only=True)["Results"]
    assert isinstance(ws["B6"].value, float)
    with zipfile.ZipFile(p) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            if "worksheets/sheet" in name or name == "xl/workbook.xml":
                continue
            assert a.read(name) == b.read(name), name
        assert b'fullCalcOnLoad="1"' in b.read("xl/workbook.xml")  # Excel re-runs the UDFs


@pytest.mark.subprocess
def test_console_script_recalc(tmp_path):
    p = make_wb(tmp_path / "c.xlsx", {"Results": {"A1": "x", "B1": "=3*3"}})
    exe = Path(sys.executable).with_name("cryptoplan")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "cryptoplan.cli"]
    r = subprocess.run(cmd + ["recalc", str(p), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["outputs"][0]["value"] == 9.0


def test_api_raises_for_bad_files(tmp_path):
    p = tmp_path / "x.xlsx"
    p.write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(RecalcError, match="corrupt or truncated"):
        recalc(p)


# ------------------------------------------------------- hostile input (issue 14)
def _inputs_wb(tmp_path):
    return make_wb(tmp_path / "p.xlsx", {"Inputs": {"B1": "integrity", "B2": 5},
                                         "Results": {"A1": "echo", "B1": "=Inputs!B1",
                                                     "A2": "twice", "B2": "=Inputs!B2*2"}},
                   names={"Policy": "Inputs!$B$1", "Rate": "Inputs!$B$2"})


def test_set_text_with_a_control_character_writes_well_formed_xml(tmp_path):
    # --set "Policy=$(printf 'a\x01')" printed "wrote" and left a file that was not XML
    import xml.etree.ElementTree as ET
    p = _inputs_wb(tmp_path)
    out = tmp_path / "o.xlsx"
    assert run("recalc", p, "-o", out, "--set", "Policy=a\x01b").exit_code == EXIT_OK
    with zipfile.ZipFile(out) as z:
        for n in z.namelist():
            if n.endswith(".xml"):
                ET.fromstring(z.read(n))
    eng = evaluate(out)
    assert val(eng, "Inputs!B1") == "a\x01b" and val(eng, "Results!B1") == "a\x01b"


def test_set_values_are_parsed_as_a_spreadsheet_user_types_them():
    from cryptoplan.workbook.recalculation import parse_assignment
    assert parse_assignment("Rate=1_000") == ("Rate", "1_000")      # no digit separators
    assert parse_assignment("Rate=-1.5e3") == ("Rate", -1500.0)
    assert parse_assignment("Policy==HYPERLINK(1)") == ("Policy", "=HYPERLINK(1)")   # text
    with pytest.raises(ValueError, match="outside the range"):
        parse_assignment("Rate=1e400")
    bad = b"x\xff".decode("utf-8", "surrogateescape")          # what the shell gives for invalid UTF-8
    with pytest.raises(ValueError, match="not valid UTF-8"):
        parse_assignment("Policy=" + bad)


def test_invalid_utf8_on_the_command_line_is_a_usage_error(tmp_path):
    p = _inputs_wb(tmp_path)
    bad = b"x\xff".decode("utf-8", "surrogateescape")
    res = run("recalc", p, "-o", tmp_path / "o.xlsx", "--set", "Policy=" + bad)
    assert res.exit_code == 2 and "not valid UTF-8" in res.output
    assert not (tmp_path / "o.xlsx").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_only_regular_files_are_replaced(tmp_path):
    # run as root, recalc -o /dev/null --force replaced /dev/null with a 39 KB regular file.
    # A FIFO and a symlink in a temporary folder stand in (never touch the real /dev/null).
    import stat
    p = _inputs_wb(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    res = run("recalc", p, "-o", fifo, "--force")
    assert res.exit_code == EXIT_BAD_FILE and "is a FIFO" in res.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    target = tmp_path / "real.xlsx"
    target.write_bytes(b"keep")
    link = tmp_path / "link.xlsx"
    link.symlink_to(target)
    res = run("recalc", p, "-o", link, "--force")
    assert res.exit_code == EXIT_BAD_FILE and "symbolic link" in res.output
    assert link.is_symlink() and target.read_bytes() == b"keep"
    res = run("recalc", p, "-o", tmp_path / "no" / "o.xlsx")
    assert res.exit_code == EXIT_BAD_FILE and "does not exist" in res.output


def test_stale_temporary_files_of_a_killed_run_are_swept(tmp_path):
    # SIGKILL cannot be caught: the next write to the same name removes our own old leftovers
    import time as _time
    from cryptoplan.workbook.engine.atomic import STALE_SECONDS
    p = _inputs_wb(tmp_path)
    old = tmp_path / ".o.xlsx.abcd1234.tmp"
    new = tmp_path / ".o.xlsx.efgh5678.tmp"
    other = tmp_path / ".other.xlsx.abcd1234.tmp"
    for f in (old, new, other):
        f.write_bytes(b"partial")
    past = _time.time() - STALE_SECONDS - 60
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    assert run("recalc", p, "-o", tmp_path / "o.xlsx").exit_code == EXIT_OK
    assert not old.exists() and new.exists() and other.exists()   # only ours, only old ones


def test_sigterm_while_writing_leaves_no_temporary_file(tmp_path):
    import signal as _signal
    from cryptoplan.workbook.engine.atomic import atomic_target
    dest = tmp_path / "o.csv"
    before = _signal.getsignal(_signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with atomic_target(dest) as tmp:
            Path(tmp).write_text("half")
            os.kill(os.getpid(), _signal.SIGTERM)
    assert list(tmp_path.iterdir()) == []
    assert _signal.getsignal(_signal.SIGTERM) == before      # the handler is put back


def test_formulas_as_long_and_deep_as_excel_allows_are_evaluated(tmp_path):
    # =C1+...+C493 (2,357 characters), 400 nested parentheses and 300 nested ABS( crashed with
    # RecursionError.  Excel: 8,192 characters per formula, 64 levels of nested functions.
    chain = "=" + "+".join(f"C{i}" for i in range(1, 1500))        # 7,9xx characters
    assert len(chain) - 1 <= 8192
    cells = {f"C{i}": i for i in range(1, 2000)}
    cells.update({"A1": chain, "A2": "=" + "(" * 4095 + "1" + ")" * 4095,
                  "A3": "=" + "ABS(" * 64 + "-1" + ")" * 64,
                  "A4": "=" + "ABS(" * 65 + "-1" + ")" * 65,
                  "A5": "=" + "+".join(f"C{i}" for i in range(1, 2000)),
                  "A6": "=" + "ABS(" * 300 + "1" + ")" * 300})
    p = make_wb(tmp_path / "deep.xlsx", {"Results": cells})
    eng = evaluate(p)
    assert val(eng, "Results!A1") == sum(range(1, 1500))
    assert val(eng, "Results!A2") == 1.0
    assert val(eng, "Results!A3") == 1.0
    for cell, msg in (("A4", "nested 65 levels deep; Excel allows 64"),
                      ("A5", "characters long; Excel allows 8,192"),
                      ("A6", "nested 300 levels deep")):
        assert isinstance(val(eng, f"Results!{cell}"), ExcelError)
        assert any(msg in d.message for d in eng.diagnostics[eng.locate(f"Results!{cell}")]), cell
    res = run("recalc", p, "-o", tmp_path / "o.xlsx")
    assert res.exit_code == EXIT_ERROR_VALUES       # errors in cells, not a crash


def test_writes_to_new_and_existing_rows_in_one_sheet(tmp_path):
    # the writer indexes writes by row (it scanned every write per row: quadratic in rows);
    # rows that do not exist yet are created before, between and after the existing ones
    p = make_wb(tmp_path / "r.xlsx", {"Results": {"A1": 1, "A3": 3, "A5": "=A3*2"}},
                names={"Two": "Results!$B$2", "Three": "Results!$C$3", "Four": "Results!$B$4",
                       "Seven": "Results!$B$7", "One": "Results!$D$1"})
    out = tmp_path / "o.xlsx"
    res = run("recalc", p, "-o", out, "--set", "Two=2", "--set", "Three=x", "--set", "Four=4",
              "--set", "Seven=7", "--set", "One=0.5")
    assert res.exit_code == EXIT_OK, res.output
    ws = openpyxl.load_workbook(out)["Results"]
    got = {c.coordinate: c.value for row in ws.iter_rows() for c in row if c.value is not None}
    assert got == {"A1": 1, "D1": 0.5, "B2": 2, "A3": 3, "C3": "x", "B4": 4, "A5": "=A3*2", "B7": 7}
    import xml.etree.ElementTree as ET
    with zipfile.ZipFile(out) as z:
        sheet = next(n for n in z.namelist() if n.startswith("xl/worksheets/sheet"))
        rows = [int(r.get("r")) for r in ET.fromstring(z.read(sheet)).iter()
                if r.tag.endswith("}row")]
    assert rows == sorted(rows) == [1, 2, 3, 4, 5, 7]          # in order, each once


def _site_params(path: Path, **scale) -> Path:
    """The packaged parameter file with some values multiplied (a site's calibration)."""
    doc = json.loads((Path(model.params.params_path())).read_text(encoding="utf-8"))
    for name, factor in scale.items():
        doc["parameters"][name]["value"] *= factor
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.slow
def test_template_params_file_switches_every_result(tmp_path):
    """Issue 13: the template's ParamsFile input selects the calibration of the whole workbook.

    Expected values: the model evaluated in Python under the same file (rel 1e-12); a
    coprocessor twice as slow doubles the coprocessor utilization (RMF's requests x EXEC TIME).
    """
    from cryptoplan.model.params import Parameters, using_parameters
    from cryptoplan.workbook.template import input_defaults
    p = _template(tmp_path)
    site = _site_params(tmp_path / "site.json", cop_rsa_ms_2048=2.0, ams_msg_us=1.5)
    d = input_defaults()
    ams = (d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"], d["KeyReuse"])
    base = recalc(p, {"TxRate": 300.0})
    # relative to the workbook's folder, as a planner keeps the file beside it
    out = recalc(p, {"TxRate": 300.0, "ParamsFile": "site.json"})
    with using_parameters(Parameters.load(site)):
        want_cop = model.card_utilization(300.0, *ams, "coprocessor", d["Coprocessors"], d["Recipients"])
        want_cost = model.ams_cost_at_rate_us(300.0, *ams, d["Recipients"], "total", d["Platform"])
    np.testing.assert_allclose(out["Coprocessor utilization (RMF summary)"], want_cop, rtol=1e-12)
    np.testing.assert_allclose(out["AMS CPU per transaction at TxRate, total"], want_cost, rtol=1e-12)
    np.testing.assert_allclose(out["Coprocessor utilization (RMF summary)"],
                    2.0 * base["Coprocessor utilization (RMF summary)"], rtol=1e-12)
    assert out["AMS CPU per transaction at TxRate, total"] > base["AMS CPU per transaction at TxRate, total"]
    # an absolute path gives the same
    again = recalc(p, {"TxRate": 300.0, "ParamsFile": str(site)})
    assert again["Coprocessor utilization (RMF summary)"] == out["Coprocessor utilization (RMF summary)"]


@pytest.mark.slow
@pytest.mark.parametrize("content, fragment", [
    ('{"parameters": {}}', "lacks the parameters"),
    ("not json", "not JSON"),
    (None, "is not a file"),
])
def test_template_bad_params_file_is_an_error_in_every_cell_naming_it(tmp_path, content, fragment):
    p = _template(tmp_path)
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    res = run("recalc", p, "--set", f"ParamsFile={bad}")
    assert res.exit_code == EXIT_ERROR_VALUES, res.output
    assert "params_file" in res.output and fragment in res.output and str(bad) in res.output
    # a negative value is refused with the parameter's name (the file's validation)
    neg = _site_params(tmp_path / "neg.json", cop_rsa_ms_2048=-1.0)
    out = recalc(p, {"ParamsFile": str(neg)})
    msg = out["Coprocessor utilization (RMF summary)"]
    assert msg.startswith("#VALUE! CARD_UTILIZATION: params_file: ") and "'cop_rsa_ms_2048'" in msg
    # results that do not depend on the parameters are still computed
    assert isinstance(out["CPU factor, TLS 1.3 full handshake"], float)


@pytest.mark.slow
def test_params_file_must_be_one_file_for_all_scenarios(tmp_path):
    p = _template(tmp_path)
    site = _site_params(tmp_path / "site.json", cop_rsa_ms_2048=1.0)
    ws = openpyxl.load_workbook(p)["Results"]
    row = next(r for r in range(1, ws.max_row + 1)
               if ws.cell(r, 1).value == "Coprocessor utilization (RMF summary)")
    eng = load_engine(p, n=2)
    eng.set_input("ParamsFile", [str(site), str(site)])
    eng.evaluate()
    v = eng.value(f"Results!B{row}")
    assert v.text is None and (v.num > 0).all()        # one file for both scenarios: computed
    eng = load_engine(p, n=2)
    eng.set_input("ParamsFile", [str(site), ""])
    eng.evaluate()
    v = eng.value(f"Results!B{row}")
    assert all("params_file must be the same in every scenario" in str(t) for t in v.text[:, 0, 0])


def test_template_outputs_are_one_per_result_with_unique_labels(tmp_path):
    """Issue 15: every Results row is one output (the message column that lets error text
    overflow is not a second one), labels need no cell address to tell them apart, and an
    error row's output is its value cell (column B), which holds the error text."""
    p = _template(tmp_path)
    rec = recalc_report(p, {"TxRate": 4000.0})
    keys = [o.key for o in rec.outputs]
    assert not any("[" in k or "Results!" in k for k in keys), keys
    assert len(keys) == len(set(keys))
    assert all(o.address.startswith("Results!B") for o in rec.outputs), [o.address for o in rec.outputs]
    cop = rec.as_dict()["Coprocessor utilization (RMF summary)"]
    assert cop.startswith("#NUM! CARD_UTILIZATION: coprocessors would be")


@pytest.mark.slow
def test_open_workbook_parses_once_and_recalculates_each_input_set_afresh(tmp_path):
    # expected values: recalc(path, inputs), which reads the file for every call
    from cryptoplan.workbook import open_workbook
    from cryptoplan.workbook.template import write_template
    path = write_template(tmp_path / "planner.xlsx")
    cases = [{"TxRate": 4000}, {"TxRate": 500, "MessageKB": 32}, {}]
    expected = [recalc(path, c) for c in cases]
    book = open_workbook(path)
    moved = path.rename(tmp_path / "gone.xlsx")   # the file is not read again
    got = [book.recalc(c) for c in cases]
    for e, g in zip(expected, got):
        assert e.keys() == g.keys()
        for k in e:
            if isinstance(e[k], float):
                assert math.isclose(g[k], e[k], rel_tol=1e-12), k
            else:
                assert g[k] == e[k], k
    # inputs of one call do not carry over: the last case (no inputs) is the file's own
    assert got[2] != got[0]
    moved.rename(path)
    out = tmp_path / "out.xlsx"
    book.recalc({"TxRate": 4000}, output=out)
    assert recalc(out) == expected[0]


def test_the_add_ins_failures_are_errors_by_type_not_by_their_first_characters(tmp_path):
    """An add-in failure (ERLANGC of an unstable queue) is an error output and a problem; text
    that merely starts like one (a label typed by hand, or built with &) is text, as in Excel."""
    import pickle
    from cryptoplan.addin.errors import ErrorText
    p = make_wb(tmp_path / "e.xlsx", {"Inputs": {"A1": "#NUM! typed by hand"}, "Results": {
        "A1": "unstable", "B1": "=ERLANGC(5,2)",
        "A2": "typed", "B2": "=Inputs!A1",
        "A3": "built", "B3": '=B1&""'}})
    res = recalc_report(p)
    out = {o.key: o for o in res.outputs}
    assert isinstance(out["unstable"].value, ErrorText) and out["unstable"].value.code == "#NUM!"
    assert out["unstable"].is_error and not out["typed"].is_error and not out["built"].is_error
    assert str(out["built"].value) == str(out["unstable"].value)      # the same characters
    assert res.exit_code == EXIT_ERROR_VALUES
    assert [p.kind for p in res.problems] == ["error-text"]
    again = pickle.loads(pickle.dumps(out["unstable"].value))
    assert isinstance(again, ErrorText) and again.code == "#NUM!" and again == out["unstable"].value


def test_recalculate_is_a_deprecated_alias_of_recalc_report(tmp_path):
    """The old name, kept for one release, warns and returns recalc_report's Recalculation."""
    from cryptoplan.workbook.recalculation import recalculate
    path = _template(tmp_path)
    with pytest.warns(DeprecationWarning, match="recalc_report"):
        old = recalculate(path, {"TxRate": 1500})
    assert old.as_dict() == recalc_report(path, {"TxRate": 1500}).as_dict()


def _cells(path, part="xl/worksheets/sheet2.xml") -> dict:
    """``{address: the <c> element as written}`` of one worksheet part."""
    import re
    with zipfile.ZipFile(path) as z:
        text = z.read(part).decode()
    return {m.group(1): m.group(0) for m in re.finditer(r'<c r="([A-Z]+[0-9]+)".*?(?:/>|</c>)', text)}


def test_a_value_the_file_already_holds_is_left_as_written(tmp_path):
    p = make_wb(tmp_path / "w.xlsx", {"Inputs": {"A1": 100},
                                      "Results": {"B1": "=Inputs!A1*2", "B2": "=1+1", "B3": '="a"&"b"',
                                                  "B4": "=1>0", "B5": "=1/0"}})
    calc, once = tmp_path / "calc.xlsx", tmp_path / "once.xlsx"
    twice, moved = tmp_path / "twice.xlsx", tmp_path / "moved.xlsx"
    assert run("recalc", p, "-o", calc).exit_code == EXIT_ERROR_VALUES
    # B2's 2 written as Excel may write it, "2.0" (the writer writes "2"): a mark that shows
    # whether the cell was rebuilt; the archive's comment, whether the file was
    sheet = _read_part(calc, "xl/worksheets/sheet2.xml").replace("<v>2</v>", "<v>2.0</v>")
    _replace_part(calc, once, "xl/worksheets/sheet2.xml", sheet.encode())
    with zipfile.ZipFile(once, "a") as z:
        z.comment = b"as saved"
    first = _cells(once)
    assert 'v>200<' in first["B1"] and "<v>2.0</v>" in first["B2"]
    assert 't="b"' in first["B4"] and 't="e"' in first["B5"]
    # recalculated as it was saved: nothing to change, the file itself
    assert run("recalc", once, "-o", twice).exit_code == EXIT_ERROR_VALUES
    assert twice.read_bytes() == once.read_bytes()
    # an input moves: the cell that follows it is rewritten, the others stay as written
    assert run("recalc", once, "-o", moved, "--set", "Inputs!A1=7").exit_code == EXIT_ERROR_VALUES
    after = _cells(moved)
    assert 'v>14<' in after["B1"]
    assert [after[a] for a in ("B2", "B3", "B4", "B5")] == [first[a] for a in ("B2", "B3", "B4", "B5")]
    with zipfile.ZipFile(moved) as z:
        assert z.comment == b""
    assert openpyxl.load_workbook(moved, data_only=True)["Results"]["B1"].value == 14


def test_a_cached_value_equal_in_python_but_of_another_type_is_rewritten(tmp_path):
    # =1 cached as TRUE (1 == True in Python) and ="2" cached as the number 2: the file would show
    # the wrong type, so both cells are written again
    p = make_wb(tmp_path / "w.xlsx", {"Results": {"B1": "=1", "B2": '="2"'}})
    once = tmp_path / "once.xlsx"
    assert run("recalc", p, "-o", once).exit_code == 0
    with zipfile.ZipFile(once) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
    sheet = sheet.replace('<c r="B1"', '<c r="B1" t="b"', 1).replace('<c r="B2" t="str"', '<c r="B2"', 1)
    wrong = _replace_part(once, tmp_path / "wrong.xlsx", "xl/worksheets/sheet1.xml", sheet.encode())
    cached = openpyxl.load_workbook(wrong, data_only=True)["Results"]
    assert cached["B1"].value is True and cached["B2"].value == 2
    fixed = tmp_path / "fixed.xlsx"
    assert run("recalc", wrong, "-o", fixed).exit_code == 0
    got = openpyxl.load_workbook(fixed, data_only=True)["Results"]
    assert got["B1"].value == 1 and got["B1"].value is not True
    assert got["B2"].value == "2"


def test_a_cached_error_or_boolean_is_written_again_even_when_it_reads_as_the_answer(tmp_path):
    # the reader maps error texts it does not know (#BUSY!, #GETTING_DATA) to a code, and a
    # boolean's text to True/False: such a value reads as the answer but is not written as it,
    # so the cell is rewritten; a string with _xHHHH_ (escaped or not) likewise
    p = make_wb(tmp_path / "w.xlsx", {"Results": {"B1": "=NA()", "B2": "=1>2", "B3": '="_x0041_"'}})
    once = tmp_path / "once.xlsx"
    assert run("recalc", p, "-o", once).exit_code == EXIT_ERROR_VALUES
    first = _cells(once, "xl/worksheets/sheet1.xml")
    sheet = _read_part(once, "xl/worksheets/sheet1.xml")
    sheet = (sheet.replace(first["B1"], first["B1"].replace("#N/A", "#BUSY!"))
             .replace(first["B2"], first["B2"].replace("<v>0</v>", "<v>no</v>")))
    odd = _replace_part(once, tmp_path / "odd.xlsx", "xl/worksheets/sheet1.xml", sheet.encode())
    assert "#BUSY!" in _read_part(odd, "xl/worksheets/sheet1.xml")
    fixed = tmp_path / "fixed.xlsx"
    assert run("recalc", odd, "-o", fixed).exit_code == EXIT_ERROR_VALUES
    after = _cells(fixed, "xl/worksheets/sheet1.xml")
    assert "<v>#N/A</v>" in after["B1"] and "<v>0</v>" in after["B2"]
    assert after["B3"] == first["B3"] and "_x005F_x0041_" in after["B3"]
    got = openpyxl.load_workbook(fixed, data_only=True)["Results"]
    assert got["B1"].value == "#N/A" and got["B2"].value is False


def _read_part(path, part) -> str:
    with zipfile.ZipFile(path) as z:
        return z.read(part).decode()


def test_a_workbook_part_that_asks_for_recalculation_already_is_kept_as_written():
    from cryptoplan.workbook.engine.writer import _set_full_calc
    asked = b'<workbook xmlns="x"><calcPr fullCalcOnLoad="1" calcId="191029"/></workbook>'
    assert _set_full_calc(asked) is asked
    plain = b'<workbook xmlns="x"><calcPr calcId="191029" fullCalcOnLoad="0"/></workbook>'
    assert _set_full_calc(plain) == b'<workbook xmlns="x"><calcPr calcId="191029" fullCalcOnLoad="1"/></workbook>'
