"""The engine against a real spreadsheet engine: LibreOffice Calc, headless.

Expected values: LibreOffice's own results.  A workbook of native formulas
is written by openpyxl (no cached values) and converted by
``soffice --headless --convert-to xlsx`` with a private profile that
recalculates every formula on load; the converted file's cached values
(openpyxl ``data_only=True``) must equal ``cryptoplan recalc``'s, within
LibreOffice's 15 significant digits.  UDF cells, which LibreOffice cannot
evaluate, are checked against the Python model in ``tests/test_recalc.py``;
here we check that LibreOffice, opening a recalculated file with its default
settings, shows and re-saves the values we wrote.

Functions LibreOffice 7.4 lacks (``XLOOKUP``, ``XMATCH``) are not in the
comparison workbook, nor are the cases where LibreOffice knowingly differs
from Excel (the engine follows Excel, tested in ``tests/test_recalc.py``):
LibreOffice has no boolean type (``TRUE&""`` is ``"1"``; ``SUM``/``COUNT``
over a range count a TRUE cell) and gives ``#VALUE!`` where Excel documents
``#NUM!`` (``SQRT(-1)``, ``LN(0)``).  Under ``CI=true`` a missing LibreOffice is a failure,
not a skip (``.ci/run`` installs it).
"""

from __future__ import annotations

import math
import zipfile

import openpyxl
import pytest
from openpyxl.worksheet.formula import ArrayFormula

from cryptoplan.workbook.libreoffice import convert
from cryptoplan.workbook.recalculation import recalc_report

from test_recalc import make_wb, registry

pytestmark = pytest.mark.slow


NATIVE = {
    "Data": {"A1": 2.675, "A2": -2.5, "A3": 7, "A4": 3, "A5": "privacy", "A6": True, "A7": "12",
             "B1": "integrity", "C1": 1.5, "B2": "privacy", "C2": 2.5, "B3": "confidentiality", "C3": 4,
             "D1": 0, "E1": "low", "D2": 100, "E2": "mid", "D3": 1000, "E3": "high"},
    "Calc Sheet": {
        "A1": "=Data!A1*Data!A3-Data!A2/4", "A2": "=-Data!A4^2", "A3": "=2^3^2", "A4": "=Data!A7+1",
        "A5": "=Data!A6+1", "A6": "=Data!A99+1", "A7": '="a"+1', "A8": "=1/0", "A9": "=(0.1+0.2)=0.3",
        "A10": '="abc"="ABC"', "A11": '=1<"a"', "A12": "=50%*4", "A13": '=1&"x"&2.50',
        "A14": "=Data!A99", "A15": "=A8+1", "A16": "=ROUND(Data!A1,2)", "A17": "=ROUND(Data!A2,0)",
        "A18": "=ROUNDUP(Data!A2,0)", "A19": "=ROUNDDOWN(2.99,1)", "A20": "=CEILING(2.1,0.5)",
        "A21": "=FLOOR(-2.5,-2)", "A22": "=MOD(-7,3)", "A23": "=INT(-1.5)", "A24": "=FACT(10)",
        "A25": "=SQRT(16)", "A26": "=LN(1)", "A27": "=LOG(1000)", "A28": "=POWER(2,0.5)",
        "A29": "=_xlfn.POISSON.DIST(Data!A4,2.5,TRUE)", "A30": "=_xlfn.POISSON.DIST(5,12.5,FALSE)",
        "A31": "=ABS(-3)+EXP(1)", "A32": '=IFERROR(1/0,"x")', "A33": "=ISERROR(A8)",
        "A34": "=ISNUMBER(Data!A7)", "A35": "=AND(TRUE,Data!A3>5,NOT(FALSE))", "A36": "=OR(FALSE,Data!A3<5)",
        "A37": '=_xlfn.IFS(Data!A3<5,"small",Data!A3<10,"mid")', "A38": '=CHOOSE(2,"a","b","c")',
        "A39": "=MIN(Data!A1:A4)+MAX(Data!A1:A4)", "A40": "=AVERAGE(Data!A3:A4,5)",
        "A41": "=COUNT(Data!A1:A5,Data!A7)", "A42": "=SUM(Data!A1:A5,Data!A7)", "A43": "=NA()",
        "A44": "=SUMPRODUCT(Data!A1:A2,Data!A3:A4)", "A45": '=INDEX(Data!C1:C3,MATCH("PRIVACY",Data!B1:B3,0))',
        "A46": '=VLOOKUP("conf*",Data!B1:C3,2,FALSE)', "A47": "=VLOOKUP(150,Data!D1:E3,2)",
        "A48": '=VLOOKUP("none",Data!B1:C3,2,FALSE)', "A49": '=HLOOKUP("b",{"a","b";1,2},2,FALSE)',
        "A50": "=MATCH(500,Data!D1:D3)", "A51": "=INDEX(Data!D1:E3,3,2)",
        "A52": "=SUM(Data!C1:INDEX(Data!C1:C3,2))", "A53": "=ROWS(Data!B1:C3)*COLUMNS(Data!B1:C3)",
        "A54": '=COUNTIF(Data!C1:C3,">2")', "A55": '=SUMIF(Data!B1:B3,"<>privacy",Data!C1:C3)',
        "A56": "=SUM(Data!D:D)", "A57": "=Data!A1:A4*2", "A58": "=IF(Data!A3>5,Data!A1,Data!A2)",
        "A59": "=IF(Data!A3<5,1)", "A60": "=ISBLANK(Data!A99)", "A61": "=LEN(Data!A5)&LEFT(Data!A5,3)",
        "A62": "=UPPER(Data!B1)&MID(Data!B2,2,3)", "A63": "=CONCATENATE(Data!A5,\"-\",Data!A3)",
        "A64": "=_xlfn.NORM.S.DIST(1.5,TRUE)",
        "A65": "=_xlfn.EXPON.DIST(0.5,2,TRUE)", "A66": "=_xlfn.NORM.INV(0.9,10,2)",
        "A67": "=ISNA(A48)", "A68": "=IFERROR(A48,-1)*2", "A69": "=MAX(Data!A1:A4)-MIN(Data!A1:A4)",
        "A70": "=COUNTA(Data!A1:A7)", "A71": "=TRUNC(-2.7)", "A72": "=SIGN(-3)*PI()",
        "A73": "=ROUND(1234.5678,-2)", "A74": "=MROUND(10,3)", "A75": "=0.1+0.2-0.3",
        "A76": '=VALUE("1.5")*2', "A77": '=TRIM("  a   b ")', "A78": "=SUBSTITUTE(Data!A5,\"i\",\"I\")",
        "A79": "=Data!A1:A4", "A80": "=SUM(Data!A1:A4*2)",
        "C1": ArrayFormula("C1:C4", "=Data!A1:A4*10"),
        "D1": ArrayFormula("D1", "=SUM(Data!A1:A4*Data!A1:A4)"),
        "E5": "='Calc Sheet'!A1*2",
    },
}


def _compare(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-13, abs_tol=1e-300)
    return a == b


def test_native_formulas_equal_libreoffice(tmp_path, lo_profile):
    p = make_wb(tmp_path / "native.xlsx", NATIVE)
    rec = recalc_report(p, functions=registry(), output=tmp_path / "ours.xlsx")
    (lo,) = convert([p], tmp_path / "lo", recalc=True, profile_dir=lo_profile)
    theirs = openpyxl.load_workbook(lo, data_only=True)
    eng = rec.engine
    checked = 0
    mismatches = []
    for (si, r, c) in sorted(list(eng.formulas) + list(eng.spill_owner)):
        sheet = eng.sheets[si].name
        coord = openpyxl.utils.get_column_letter(c) + str(r)
        ours = eng.cell_value(si, r, c).element(0)
        lo_v = theirs[sheet][coord].value
        ours_cmp = str(ours) if hasattr(ours, "computed") else ours
        if not _compare(ours_cmp, lo_v):
            mismatches.append(f"{sheet}!{coord}: ours {ours!r}, LibreOffice {lo_v!r}")
        checked += 1
    assert checked >= 80
    assert not mismatches, "\n".join(mismatches)
    # and the values we wrote are those LibreOffice computed
    ours_file = openpyxl.load_workbook(tmp_path / "ours.xlsx", data_only=True)
    for coord in ("A1", "A29", "A45", "A57", "C3"):
        assert _compare(ours_file["Calc Sheet"][coord].value, theirs["Calc Sheet"][coord].value), coord


def _template(tmp_path):
    from cryptoplan.workbook.template import write_template
    return write_template(tmp_path / "planner.xlsx")


def test_recalculated_template_keeps_values_through_libreoffice(tmp_path, lo_profile):
    p = _template(tmp_path)
    out = tmp_path / "recalc.xlsx"
    rec = recalc_report(p, {"TxRate": 1800.0}, output=out)
    # LibreOffice with its default settings: open, keep cached values, save again
    (resaved,) = convert([out], tmp_path / "lo", recalc=False, profile_dir=tmp_path / "prof2")
    ws = openpyxl.load_workbook(resaved, data_only=True)["Results"]
    compared = 0
    for o in rec.outputs:
        ours = o.value
        lo_v = ws[o.cell].value
        if ours is None or ours == "":
            continue
        assert _compare(str(ours) if hasattr(ours, "computed") else ours, lo_v), (o.key, ours, lo_v)
        compared += 1
    assert compared >= 10
    # LibreOffice keeps the formulas too
    forms = openpyxl.load_workbook(resaved)["Results"]
    row = next(r for r in range(1, forms.max_row + 1) if forms.cell(r, 1).value == "Most the requesters reach")
    assert str(forms.cell(row, 2).value).upper().startswith("=AMS_THROUGHPUT(")


def test_libreoffice_recalc_of_native_check_sheet(tmp_path, lo_profile):
    """The template's Check sheet (Erlang C from POISSON.DIST) agrees with LibreOffice's own recalc."""
    p = _template(tmp_path)
    rec = recalc_report(p)
    (lo,) = convert([p], tmp_path / "lo", recalc=True, profile_dir=lo_profile)
    ws = openpyxl.load_workbook(lo, data_only=True)["Check"]
    eng = rec.engine
    si = eng.sheet_named("Check")
    # columns C-E are native (utilization, Erlang B and C from POISSON.DIST); F calls ERLANGC
    native = sorted((r, c) for (s, r, c) in eng.formulas if s == si and 3 <= c <= 5)
    assert len(native) >= 9
    for r, c in native:
        coord = openpyxl.utils.get_column_letter(c) + str(r)
        ours = eng.cell_value(si, r, c).element(0)
        assert _compare(ours, ws[coord].value), (coord, ours, ws[coord].value)
    # and the sheet's own check: add-in minus native is at rounding level in our engine
    for r in sorted({r for r, _ in native}):
        diff = eng.cell_value(si, r, 7).element(0)
        erl = eng.cell_value(si, r, 6).element(0)
        assert isinstance(diff, float) and abs(diff) <= 1e-12 * max(1.0, abs(erl)), (r, diff)


def test_written_package_is_a_valid_zip(tmp_path):
    p = make_wb(tmp_path / "z.xlsx", {"S": {"A1": 1, "B1": "=A1+1"}})
    out = tmp_path / "o.xlsx"
    recalc_report(p, functions=registry(), output=out)
    with zipfile.ZipFile(out) as z:
        assert z.testzip() is None
