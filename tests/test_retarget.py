"""workbook/retarget.py and ``cryptoplan retarget``: one workbook, spelt for Excel or for Calc.

Expected values: the template's own formulas (a round trip must give the same bytes) and
``cryptoplan recalc`` of the original (the Calc spelling must recalculate to the same outputs).
"""

from __future__ import annotations

import zipfile

import pytest
from click.testing import CliRunner

from cryptoplan.addin.calc import PREFIX
from cryptoplan.cli import main
from cryptoplan.workbook.recalculation import recalc_report
from cryptoplan.workbook.retarget import retarget, retarget_xml
from cryptoplan.workbook.template import write_template


@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    return write_template(tmp_path_factory.mktemp("rt") / "planner.xlsx")


def _formulas(path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        return [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")]


def test_round_trip_gives_the_same_bytes_and_every_call_is_rewritten(planner, tmp_path):
    calc, back = tmp_path / "calc.xlsx", tmp_path / "back.xlsx"
    n = retarget(planner, calc, "calc")
    assert n > 50
    assert retarget(calc, back, "excel") == n
    assert back.read_bytes() == planner.read_bytes()
    text = "".join(_formulas(calc))
    assert PREFIX + "CARD_UTILIZATION(" in text and ">CARD_UTILIZATION(" not in text
    assert retarget(calc, tmp_path / "again.xlsx", "calc") == 0


def test_the_calc_spelling_recalculates_to_the_same_outputs(planner, tmp_path):
    calc = tmp_path / "calc.xlsx"
    retarget(planner, calc, "calc")
    a, b = recalc_report(planner), recalc_report(calc)
    assert [(o.key, o.text()) for o in a.outputs] == [(o.key, o.text()) for o in b.outputs]
    assert [(p.where, p.message) for p in a.problems] == [(p.where, p.message) for p in b.problems]
    assert len(a.outputs) > 20


def test_xml_entities_and_defined_names():
    xml = (b'<c><f>IF(A1=&quot;x&quot;,ERLANGC(1,2),"&lt;")</f></c>'
           b'<definedName name="N">ERLANGC(Sheet1!$A$1,2)</definedName>')
    out, n = retarget_xml(xml, "calc")
    assert n == 2
    assert out == (b'<c><f>IF(A1="x",' + PREFIX.encode() + b'ERLANGC(1,2),"&lt;")</f></c>'
                   b'<definedName name="N">' + PREFIX.encode() + b'ERLANGC(Sheet1!$A$1,2)</definedName>')


def test_refusals(planner, tmp_path):
    with pytest.raises(ValueError, match="to must be one of calc, excel"):
        retarget(planner, tmp_path / "x.xlsx", "numbers")
    with pytest.raises(FileExistsError, match="use --force"):
        retarget(planner, planner, "calc")
    bad = tmp_path / "bad.xlsx"
    bad.write_text("not a zip")
    with pytest.raises(ValueError, match="bad.xlsx: not an xlsx/xlsm workbook"):     # recalc's reader's words
        retarget(bad, tmp_path / "y.xlsx", "calc")
    assert not (tmp_path / "y.xlsx").exists()


def test_cli(planner, tmp_path):
    run = CliRunner().invoke
    out = tmp_path / "calc.xlsx"
    r = run(main, ["retarget", str(planner), "--to", "calc", "-o", str(out)])
    assert r.exit_code == 0 and "formulas spelt for LibreOffice Calc" in r.output
    r = run(main, ["retarget", str(planner), "--to", "calc", "-o", str(out)])
    assert r.exit_code == 2 and "exists; use --force" in r.output
    r = run(main, ["retarget", str(out), "--to", "excel", "--in-place"])
    assert r.exit_code == 0 and out.read_bytes() == planner.read_bytes()
    r = run(main, ["retarget", str(out), "--to", "excel"])
    assert r.exit_code == 2 and "exactly one of -o/--output FILE and --in-place" in r.output


def test_for_calc_the_message_column_asks_the_add_in_for_the_message(planner, tmp_path):
    """Issue 33: with the Calc add-in the Results message column showed only #NUM!.  For Calc
    each message cell calls EXPLAIN with its value cell's function and arguments (Excel's copy
    repeats the value cell, whose error is already the message; the round trip above restores it)."""
    import openpyxl
    calc = tmp_path / "calc.xlsx"
    retarget(planner, calc, "calc")
    excel_ws, calc_ws = openpyxl.load_workbook(planner)["Results"], openpyxl.load_workbook(calc)["Results"]
    explained = 0
    for r in range(5, excel_ws.max_row + 1):
        value, message = excel_ws.cell(r, 2).value, excel_ws.cell(r, 4).value
        if not (isinstance(message, str) and message == f'=IF(ISNUMBER(B{r}),"",B{r})'):
            continue
        fn, _, args = value[1:].partition("(")
        assert calc_ws.cell(r, 4).value == f'=IF(ISNUMBER(B{r}),"",{PREFIX}EXPLAIN("{fn}",{args[:-1]}))'
        explained += 1
    assert explained >= 20
