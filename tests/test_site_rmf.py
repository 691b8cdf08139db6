"""The template's Site RMF sheet (workbook/site_rmf.py): typed report lines, read for calibration.

Reference: the same lines as a CSV, read by model.calibrate.read_rmf_crypto (tests/test_calibrate.py
checks that reader against seed 001's report, whose numbers are in data/figures.csv).
"""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from cryptoplan.model.calibration.calibrate import CalibrationError, read_rmf_crypto
from test_calibrate import HEADER, _seed001_lines, _write
from cryptoplan.cli import main
from cryptoplan.workbook.site_rmf import HEADER_ROW, RMF_SHEET, read_rmf_sheet
from cryptoplan.workbook.template import write_template


def _typed(tmp_path, lines, name="planner.xlsx", numbers=True):
    """The template with ``lines`` (CSV text) typed into its Site RMF sheet, numbers as numbers."""
    path = write_template(tmp_path / name)
    wb = load_workbook(path)
    ws = wb[RMF_SHEET]
    for r, row in enumerate(csv.reader(s.strip() for s in lines), HEADER_ROW + 1):
        for c, text in enumerate(row, 1):
            try:
                value = float(text) if numbers and c > 4 else text
            except ValueError:
                value = text
            ws.cell(r, c, value if value != "" else None)
    wb.save(path)
    return path


def test_template_sheet_has_the_reports_columns(tmp_path):
    ws = load_workbook(write_template(tmp_path / "p.xlsx"))[RMF_SHEET]
    assert [c.value for c in ws[HEADER_ROW]][:7] == HEADER.strip().split(",")
    kinds = {dv.type for dv in ws.data_validations.dataValidation}
    assert kinds == {"list", "decimal"}


def test_typed_lines_are_the_csvs_lines(tmp_path):
    lines = _seed001_lines()
    from_sheet = read_rmf_sheet(_typed(tmp_path, lines))
    from_csv = read_rmf_crypto(_write(tmp_path, lines))
    assert [(r.type, r.id, r.function, r.key, r.rate, r.exec_ms, r.util_pct) for r in from_sheet] == \
           [(r.type, r.id, r.function, r.key, r.rate, r.exec_ms, r.util_pct) for r in from_csv]
    assert [r.line for r in from_sheet] == list(range(HEADER_ROW + 1, HEADER_ROW + 1 + len(lines)))


def test_cli_calibrates_from_the_sheet_as_from_the_csv(tmp_path):
    lines = _seed001_lines()
    docs = []
    for src in (_typed(tmp_path, lines), _write(tmp_path, lines)):
        out = tmp_path / f"{src.suffix[1:]}.json"
        res = CliRunner().invoke(main, ["calibrate", "--rmf", str(src), "--out", str(out)])
        assert res.exit_code == 0, res.output
        docs.append(json.loads(out.read_text()))
    values = [{k: v["value"] for k, v in d["parameters"].items()} for d in docs]
    assert values[0] == values[1]


@pytest.mark.parametrize("edit, match", [
    (lambda ws: ws.cell(HEADER_ROW + 2, 1, "CEX8X"), r"sheet Site RMF, line 6: TYPE 'CEX8X' is not"),
    (lambda ws: ws.cell(HEADER_ROW + 1, 6, "fast"), r"sheet Site RMF, line 5: .*EXEC TIME"),
    (lambda ws: ws.cell(HEADER_ROW, 5, "RATE/S"), r"no header row with the columns TYPE, ID"),
])
def test_bad_sheets_name_the_workbook_sheet_and_line(tmp_path, edit, match):
    path = _typed(tmp_path, _seed001_lines())
    wb = load_workbook(path)
    edit(wb[RMF_SHEET])
    wb.save(path)
    with pytest.raises(CalibrationError, match=match):
        read_rmf_sheet(path)


def test_unusable_workbooks_say_why(tmp_path):
    empty = write_template(tmp_path / "empty.xlsx")
    with pytest.raises(CalibrationError, match=r"no report lines under the header \(row 4\)"):
        read_rmf_sheet(empty)
    wb = load_workbook(empty)
    del wb[RMF_SHEET]
    wb.save(tmp_path / "old.xlsx")
    with pytest.raises(CalibrationError, match=r"no sheet 'Site RMF' .*cryptoplan template"):
        read_rmf_sheet(tmp_path / "old.xlsx")
    fake = tmp_path / "fake.xlsx"
    fake.write_text("TYPE,ID\n", encoding="utf-8")
    with pytest.raises(CalibrationError, match=r"fake.xlsx: not an .xlsx workbook"):
        read_rmf_sheet(fake)
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(fake), "--out", str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "not an .xlsx workbook" in res.output
    assert not (tmp_path / "x.json").exists()
