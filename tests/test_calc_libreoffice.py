"""The Calc add-in in real LibreOffice (headless) against ``cryptoplan recalc``.

Expected values: two independent engines.  LibreOffice evaluates the template's
native formulas itself and its cryptoplan cells through the installed add-in
(``cryptoplan calc-addin``'s package, in a private profile); ``cryptoplan recalc``
evaluates the same file with its own formula engine.  Every formula cell must agree to
1e-9 relative, or both must show an error.  Error numbers are LibreOffice's own
(``#NUM!`` for an unstable queue, ``#VALUE!`` for bad input).  Under ``CI=true`` a
missing LibreOffice, python3-uno or unoidl-write is a failure (.ci/run installs them).
"""

from __future__ import annotations

import math
import os
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
from openpyxl.worksheet.formula import ArrayFormula

from conftest import require

from cryptoplan.addin import calc
from cryptoplan.addin.catalog import CATALOG
from cryptoplan.workbook.libreoffice import convert, install_extension
from cryptoplan.workbook.recalculation import recalc_report
from cryptoplan.workbook.retarget import retarget
from cryptoplan.workbook.template import write_template

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def addin_profile(soffice, tmp_path_factory):
    """A LibreOffice profile with the add-in built from this checkout's catalog installed."""
    try:
        calc.unoidl_write()
        have_sdk = True
    except FileNotFoundError:
        have_sdk = False
    require(have_sdk, "unoidl-write (libreoffice-dev)")
    require(Path("/usr/lib/libreoffice/program/libpyuno.so").exists(), "python3-uno")
    folder = tmp_path_factory.mktemp("lo-addin")
    oxt = folder / "cryptoplan.oxt"
    oxt.write_bytes(calc.package())
    install_extension(folder / "profile", oxt)
    return folder / "profile"


def _values(path) -> dict:
    wb = openpyxl.load_workbook(path, data_only=True)
    return {(ws.title, c.coordinate): c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row}


def _formula_cells(path) -> dict:
    """``{(sheet, cell): formula}`` of every formula cell (each cell of an array formula)."""
    wb = openpyxl.load_workbook(path)
    out = {}
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, ArrayFormula):
                    out.update({(ws.title, x.coordinate): c.value.text for r in ws[c.value.ref] for x in r})
                elif isinstance(c.value, str) and c.value.startswith("="):
                    out[(ws.title, c.coordinate)] = c.value
    return out


def _operand_scale(key, cells, values) -> float:
    """Magnitude of the operands of a difference ``X1-Y1`` in cell ``key`` (0 if it is none).

    A difference of two values known to 1e-9 relative is known to 1e-9 of their size, not
    of its own: LibreOffice's subtraction even returns exactly 0 when the operands agree to
    about 15 digits (``rtl::math::approxSub``), where Python keeps the last bits (2e-14).
    """
    m = re.search(r"([A-Z]{1,3}\d+)-([A-Z]{1,3}\d+)", cells[key])
    if not m:
        return 0.0
    ops = [values.get((key[0], c)) for c in m.groups()]
    return max((abs(v) for v in ops if isinstance(v, (int, float))), default=0.0)


def is_error_value(v) -> bool:
    return isinstance(v, str) and v.startswith("#")


def test_template_in_libreoffice_equals_cryptoplan_recalc(addin_profile, tmp_path):
    planner = write_template(tmp_path / "planner.xlsx")
    for_calc = tmp_path / "planner-calc.xlsx"
    retarget(planner, for_calc, "calc")
    ours = recalc_report(planner, output=tmp_path / "ours.xlsx")
    theirs = convert([for_calc], tmp_path / "lo", profile_dir=addin_profile)[0]
    mine, lo = _values(ours.written), _values(theirs)
    cells = _formula_cells(planner)
    udf_cells = [k for k, f in cells.items() if any(f"{spec.name}(" in f for spec in CATALOG)]
    assert len(cells) > 100 and len(udf_cells) > 20
    bad = []
    for key in cells:
        a, b = mine.get(key), lo.get(key)
        if is_error_value(a) or is_error_value(b):
            if not (is_error_value(a) and is_error_value(b)):
                bad.append((key, a, b))
        elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9 * _operand_scale(key, cells, mine)):
                bad.append((key, a, b))
        elif isinstance(a, bool) or isinstance(b, bool):
            if float(a) != float(b):       # Calc has no boolean type: TRUE is 1
                bad.append((key, a, b))
        elif (a or "") != (b or ""):
            bad.append((key, a, b))
    assert not bad, f"{len(bad)} of {len(cells)} formula cells differ: {bad[:10]}"


def test_real_errors_arrays_and_explain(addin_profile, tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = "=ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(9,10)"
    ws["A2"] = "=ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(11,10)"          # unstable queue
    ws["A3"] = '=ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(9,"ten")'         # bad input
    ws["A4"] = '=ORG.CRYPTOPLAN.FUNCTIONS.EXPLAIN("ERLANGC",11,10)'
    ws["A5"] = "=ISERROR(A2)"
    ws["C1"], ws["C2"], ws["C3"] = 8, 11, 9
    ws["D1"] = ArrayFormula("D1:D3", "=ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(C1:C3,10)")
    src = tmp_path / "errors.xlsx"
    wb.save(src)
    out = convert([src], tmp_path / "lo", profile_dir=addin_profile)[0]
    v = openpyxl.load_workbook(out, data_only=True).active
    assert v["A1"].value == pytest.approx(0.6687315241076979, rel=1e-12)
    assert v["A2"].value == "#NUM!" and v["A3"].value == "#VALUE!"
    assert v["A4"].value.startswith("#NUM! ERLANGC: unstable queue")
    assert v["A5"].value in (True, 1)
    assert v["D1"].value == pytest.approx(0.40918015079644454, rel=1e-12)
    assert v["D2"].value == "#NUM!"
    assert v["D3"].value == pytest.approx(0.6687315241076979, rel=1e-12)


def test_a_workbook_saved_by_calc_recalculates_here_and_goes_back_to_excel(addin_profile, tmp_path):
    planner = write_template(tmp_path / "planner.xlsx")
    for_calc = tmp_path / "planner-calc.xlsx"
    retarget(planner, for_calc, "calc")
    saved = convert([for_calc], tmp_path / "lo", profile_dir=addin_profile)[0]   # as Calc saves it
    with zipfile.ZipFile(saved) as z:
        sheets = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert calc.PREFIX + "CARD_UTILIZATION(" in sheets
    back = tmp_path / "back.xlsx"
    assert retarget(saved, back, "excel") > 50
    with zipfile.ZipFile(back) as z:
        sheets = "".join(z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert calc.PREFIX not in sheets and ">CARD_UTILIZATION(" in sheets
    expected = [(o.key, o.text()) for o in recalc_report(planner).outputs]
    assert [(o.key, o.text()) for o in recalc_report(saved).outputs] == expected
    assert [(o.key, o.text()) for o in recalc_report(back).outputs] == expected


def test_cli_builds_the_package(addin_profile, tmp_path):
    from click.testing import CliRunner

    from cryptoplan.cli import main
    run = CliRunner().invoke
    oxt = tmp_path / "cryptoplan.oxt"
    r = run(main, ["calc-addin", "--no-install", "-o", str(oxt)])
    assert r.exit_code == 0, r.output
    with zipfile.ZipFile(oxt) as z:
        assert sorted(z.namelist()) == ["CalcAddIns.xcu", "META-INF/manifest.xml", "cryptoplan_calc.py",
                                        "description.xml", "types.rdb"]
        assert z.read("CalcAddIns.xcu").decode() == calc.xcu_source()
    r = run(main, ["calc-addin", "--no-install", "-o", str(oxt)])
    assert r.exit_code == 2 and "exists; use --force" in r.output
    r = run(main, ["calc-addin", "--no-install"])
    assert r.exit_code == 2 and "nothing to do" in r.output
    r = run(main, ["calc-addin", "--no-install", "-o", str(tmp_path / "x.zip")])
    assert r.exit_code == 2 and "must be an .oxt file" in r.output
    if os.geteuid() == 0:
        r = run(main, ["calc-addin"])
        assert r.exit_code == 2 and "as root, unopkg installs only for every user: add --shared" in r.output


def test_results_messages_in_calc_are_the_explanations_excel_shows(addin_profile, tmp_path):
    """Issue 33: in Calc with the add-in, the Results message column shows the message of the
    value's error (EXPLAIN), the text Excel shows there, not a bare #NUM!.  At 1,500 privacy
    transactions/s the one installed accelerator is overloaded."""
    planner = write_template(tmp_path / "planner.xlsx")
    inputs = {"TxRate": 1500, "Policy": "privacy"}
    ours = recalc_report(planner, inputs, output=tmp_path / "ours.xlsx")
    for_calc = tmp_path / "planner-calc.xlsx"
    retarget(ours.written, for_calc, "calc")
    theirs = convert([for_calc], tmp_path / "lo", profile_dir=addin_profile)[0]
    mine, lo = openpyxl.load_workbook(ours.written, data_only=True)["Results"], \
        openpyxl.load_workbook(theirs, data_only=True)["Results"]
    row = next(r for r in range(5, mine.max_row + 1) if mine.cell(r, 1).value == "Accelerator utilization (RMF summary)")
    message = mine.cell(row, 4).value
    assert isinstance(message, str) and message.startswith("#NUM! CARD_UTILIZATION: accelerators would be")
    assert lo.cell(row, 4).value == message
