"""The Site RMF sheet filled from RMF's own output (workbook/site_rmf.py: report_fill, fill_rmf_sheet;
``cryptoplan template --rmf``, ``cryptoplan recalc --rmf``).

Reference: the report's lines as :func:`cryptoplan.model.site.rmf_lines.report_lines` makes them
(the route ``calibrate --rmf-report`` uses), and the numbers printed in the 2018 excerpt
(tests/data/rmf-reports/, IBM's public RMF deck): the four CEX6C lines' LPAR columns.
"""

from __future__ import annotations

import re
import zipfile

import pytest
from click.testing import CliRunner
from openpyxl import load_workbook

from cryptoplan.cli import main
from cryptoplan.model.calibration.calibrate import CalibrationError, rmf_rows
from cryptoplan.model.site.rmf_lines import report_lines
from cryptoplan.model.site.rmf_report import read_rmf_report
from cryptoplan.workbook.engine import Package
from cryptoplan.workbook.site_rmf import (
    HEADER_ROW, RMF_SHEET, fill_rmf_sheet, read_rmf_sheet, report_fill,
)
from cryptoplan.workbook.template import write_template
from test_smf70 import DATA, F2018, records_2018

F2019 = DATA / "z15-cex7-lpar-cpc-2019.txt"

# the 2018 excerpt's CEX6C lines, LPAR columns, as printed: (id, rate, exec ms, util %)
CEX6C_2018 = [(5, 4380, 0.091, 40.0), (6, 4435, 0.091, 40.2), (7, 4446, 0.090, 39.9), (8, 4462, 0.090, 40.1)]


def _key(rows):
    return [(r.type, r.id, r.function, r.key, r.rate, r.exec_ms, r.util_pct) for r in rows]


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def blank(tmp_path_factory):
    """A fresh template, written once for the module (each test copies it or writes elsewhere)."""
    return write_template(tmp_path_factory.mktemp("blank") / "blank.xlsx")


def _sheet_part(path) -> str:
    pkg = Package(path)
    try:
        return next(sh.part for sh in pkg.sheets if sh.name == RMF_SHEET)
    finally:
        pkg.zip.close()


def test_template_rmf_fills_the_sheet_with_the_reports_lines(tmp_path):
    out = tmp_path / "filled.xlsx"
    res = _run("template", "-o", out, "--rmf", F2018)
    assert res.exit_code == 0, res.output
    # what was used and what was left out is said on standard error
    assert "system S21, interval 2018-07-12 11:00:00" in res.stderr
    assert "CEX5P 3" in res.stderr and "PKCS11" in res.stderr and "KEY-GEN" in res.stderr
    got = read_rmf_sheet(out)
    lines, _ = report_lines(read_rmf_report(F2018)[0])
    assert _key(got) == _key(rmf_rows(lines, str(F2018)))
    assert [(int(r.id), r.rate, r.exec_ms, r.util_pct) for r in got] == CEX6C_2018
    assert {r.type for r in got} == {"CEX6C"} and {r.function for r in got} == {"TOTAL"}
    assert [r.line for r in got] == list(range(HEADER_ROW + 1, HEADER_ROW + 5))
    # numbers are numbers, text is text; the template's look (style, notes, validation) is kept
    ws = load_workbook(out)[RMF_SHEET]
    row = ws[HEADER_ROW + 1]
    assert [c.data_type for c in row[:7]] == ["s", "n", "s", "n", "n", "n", "n"]
    assert row[3].value is None and row[4].value == 4380
    assert row[0].style == "Input" and ws.cell(HEADER_ROW + 10, 1).style == "Input"
    assert ws["A1"].value == "Site RMF: your crypto report"
    assert ws.data_validations.dataValidation
    # and calibrate reads the filled sheet: its CCA lines (means over every service) need the
    # plan's mix, and with one calibrate the coprocessors' speed on it
    res = _run("calibrate", "--rmf", out, "--out", tmp_path / "p.json")
    assert res.exit_code == 2 and "give --plan" in res.stderr and not (tmp_path / "p.json").exists()
    from test_calibrate_rmf_report import ECC_PLAN
    (tmp_path / "plan.toml").write_text(ECC_PLAN, encoding="utf-8")
    res = _run("calibrate", "--rmf", out, "--plan", tmp_path / "plan.toml", "--out", tmp_path / "p.json")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "p.json").is_file() and "4 line(s)" in res.output


def test_fill_changes_only_the_sheets_table(tmp_path, blank):
    out = tmp_path / "filled.xlsx"
    fill = report_fill(F2019)
    assert fill_rmf_sheet(blank, out, fill.lines) == len(fill.lines) == 9
    part = _sheet_part(blank)
    with zipfile.ZipFile(blank) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        changed = [n for n in a.namelist() if a.read(n) != b.read(n)]
    assert changed == [part]
    # the accelerator's ME and CRT lines carry their key as a number; TOTAL lines none
    ws = load_workbook(out)[RMF_SHEET]
    rows = list(ws.iter_rows(min_row=HEADER_ROW + 1, max_row=HEADER_ROW + 9, max_col=7, values_only=True))
    assert rows[2] == ("CEX7A", 2, "TOTAL", None, 15043, 0.066, 99.7)
    assert rows[3] == ("CEX7A", 2, "ME", 1024, 1538, 0.031, 4.8)


@pytest.mark.slow
def test_recalc_rmf_replaces_the_lines_typed_before(tmp_path, blank):
    # 9 lines from the 2019 report, then the 2018 report's 4 over them in place
    book = tmp_path / "book.xlsx"
    res = _run("recalc", blank, "--rmf", F2019, "-o", book)
    assert res.exit_code == 0, res.output
    assert len(read_rmf_sheet(book)) == 9
    ws = load_workbook(book)[RMF_SHEET]
    ws.cell(HEADER_ROW + 2, 9, "my note")                   # right of the table: not the report's
    ws.parent.save(book)
    res = _run("recalc", book, "--rmf", F2018, "--in-place")
    assert res.exit_code == 0, res.output
    assert "wrote" in res.stderr
    assert [(int(r.id), r.rate, r.exec_ms, r.util_pct) for r in read_rmf_sheet(book)] == CEX6C_2018
    ws = load_workbook(book)[RMF_SHEET]
    assert all(ws.cell(r, c).value is None for r in range(HEADER_ROW + 5, HEADER_ROW + 10) for c in range(1, 8))
    assert ws.cell(HEADER_ROW + 2, 9).value == "my note"
    assert ws.cell(HEADER_ROW + 8, 1).style == "Input"       # an emptied cell keeps its style
    # the Results were recalculated as ever (the Site RMF sheet feeds no formula): the cached values
    # a plain recalc writes
    plain = tmp_path / "plain.xlsx"
    assert _run("recalc", blank, "-o", plain).exit_code == 0

    def results(path):
        return [c.value for row in load_workbook(path, data_only=True)["Results"].iter_rows() for c in row]
    assert results(book) == results(plain) and sum(v is not None for v in results(book)) > 50


def test_smf70_records_fill_as_the_printed_report_does(tmp_path):
    smf = tmp_path / "2018.smf"
    smf.write_bytes(records_2018())
    out = tmp_path / "filled.xlsx"
    res = _run("template", "-o", out, "--rmf", smf, "--smf70")
    assert res.exit_code == 0, res.output
    got = read_rmf_sheet(out)
    assert [(r.type, int(r.id), r.function) for r in got] == [("CEX6C", i, "TOTAL") for i, *_ in CEX6C_2018]
    for r, (_, rate, exec_ms, util) in zip(got, CEX6C_2018):      # within half a unit of the printed digit
        assert abs(r.rate - rate) <= 0.5 and abs(r.exec_ms - exec_ms) <= 0.0005 and abs(r.util_pct - util) <= 0.05
    # the same file given as report text is refused, naming it
    res = _run("template", "-o", tmp_path / "text.xlsx", "--rmf", F2018, "--smf70")
    assert res.exit_code == 2 and str(F2018) in res.output
    assert not (tmp_path / "text.xlsx").exists()


def _intervals(tmp_path, times_and_scales, system=None):
    """The 2018 excerpt repeated as several intervals: (TIME as printed, CEX6C rates/utils scaled by)."""
    text = F2018.read_text()
    parts = []
    for time, half in times_and_scales:
        t = text.replace("TIME 11.00.00", f"TIME {time}")
        if half:     # the CEX6C lines at half their load: same widths, RATE x EXEC TIME = UTIL% kept
            for old, new in (("4380    0.091    40.0", "2190    0.091    19.9"),
                             ("4435    0.091    40.2", "2218    0.091    20.2"),
                             ("4446    0.090    39.9", "2223    0.090    20.0"),
                             ("4462    0.090    40.1", "2231    0.090    20.1")):
                assert old in t
                t = t.replace(old, new)
        if system:
            t = t.replace("SYSTEM ID S21", f"SYSTEM ID {system}")
        parts.append(t)
    path = tmp_path / "several.txt"
    path.write_text("\n".join(parts))
    return path


def test_the_peak_interval_is_filled(tmp_path):
    report = _intervals(tmp_path, [("10.30.00", True), ("11.00.00", False), ("11.30.00", True)])
    fill = report_fill(report)
    assert (fill.system, fill.interval, fill.intervals, fill.chosen) == ("S21", "2018-07-12 11:00:00", 3, "peak")
    assert "the peak of its 3 intervals" in fill.summary()
    assert [float(c["RATE"]) for _, c in fill.lines] == [rate for _, rate, _, _ in CEX6C_2018]
    # another interval when asked; one the report has not is named with those it has
    out = tmp_path / "later.xlsx"
    res = _run("template", "-o", out, "--rmf", report, "--rmf-interval", "2018-07-12 11:30:00")
    assert res.exit_code == 0, res.output
    assert [r.rate for r in read_rmf_sheet(out)] == [2190, 2218, 2223, 2231]
    res = _run("template", "-o", tmp_path / "no.xlsx", "--rmf", report, "--rmf-interval", "2018-07-12 12:00:00")
    assert res.exit_code == 2 and "no interval '2018-07-12 12:00:00'" in res.output
    assert "2018-07-12 10:30:00, 2018-07-12 11:00:00, 2018-07-12 11:30:00" in res.output
    assert not (tmp_path / "no.xlsx").exists()


def test_several_systems_need_one_named(tmp_path):
    one = _intervals(tmp_path, [("11.00.00", False)]).read_text()
    report = tmp_path / "two-systems.txt"
    report.write_text(one + "\n" + one.replace("SYSTEM ID S21", "SYSTEM ID S22"))
    out = tmp_path / "filled.xlsx"
    res = _run("template", "-o", out, "--rmf", report)
    assert res.exit_code == 2
    assert "holds the systems S21, S22" in res.output and "--rmf-system" in res.output
    assert not out.exists()
    res = _run("template", "-o", out, "--rmf", report, "--rmf-system", "S99")
    assert res.exit_code == 2 and "no system 'S99'" in res.output and "S21, S22" in res.output
    assert not out.exists()
    res = _run("template", "-o", out, "--rmf", report, "--rmf-system", "S22")
    assert res.exit_code == 0, res.output
    assert "system S22" in res.stderr and len(read_rmf_sheet(out)) == 4


def test_a_bad_report_writes_nothing(tmp_path, blank):
    bad = tmp_path / "notes.txt"
    bad.write_text("CEX6C 5 4380 0.091 40.0\n")
    for args in (["template", "-o", tmp_path / "t.xlsx"], ["recalc", blank, "-o", tmp_path / "t.xlsx"]):
        res = _run(*args, "--rmf", bad)
        assert res.exit_code == 2, res.output
        assert str(bad) in res.output and "C R Y P T O" in res.output
        assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    # a report with no card the models price (CEX5 and PKCS11 only): named, nothing written
    cex5 = tmp_path / "cex5.txt"
    cex6c = re.compile(r"CEX6C|\s+[678]\s+\d")           # the CEX6C card's first line and its next three
    cex5.write_text("".join(ln for ln in F2018.read_text().splitlines(keepends=True) if not cex6c.match(ln)))
    with pytest.raises(CalibrationError, match="no card line the models price"):
        report_fill(cex5)
    res = _run("template", "-o", tmp_path / "t.xlsx", "--rmf", cex5)
    assert res.exit_code == 2 and "no card line the models price" in res.output
    assert not (tmp_path / "t.xlsx").exists()
    # --rmf's options without --rmf
    res = _run("template", "-o", tmp_path / "t.xlsx", "--smf70")
    assert res.exit_code == 2 and "give --rmf REPORT too" in res.output


def test_an_existing_output_is_refused_without_force(tmp_path, blank):
    out = tmp_path / "exists.xlsx"
    out.write_bytes(b"keep me")
    res = _run("template", "-o", out, "--rmf", F2018)
    assert res.exit_code == 1 and "exists; use --force" in res.output
    res = _run("recalc", blank, "-o", out, "--rmf", F2018)
    assert res.exit_code == 2 and "exists; use --force" in res.output
    assert out.read_bytes() == b"keep me"
    res = _run("template", "-o", out, "--rmf", F2018, "--force")
    assert res.exit_code == 0, res.output
    assert len(read_rmf_sheet(out)) == 4


def test_recalc_rmf_needs_a_workbook_to_write_and_a_site_rmf_sheet(tmp_path, blank):
    res = _run("recalc", blank, "--rmf", F2018)
    assert res.exit_code == 2 and "-o/--output FILE or --in-place" in res.output
    import openpyxl
    other = tmp_path / "other.xlsx"
    wb = openpyxl.Workbook()
    wb.active["A1"] = 1
    wb.save(other)
    res = _run("recalc", other, "--rmf", F2018, "-o", tmp_path / "out.xlsx")
    assert res.exit_code == 4 and "no sheet 'Site RMF' to fill" in res.stderr
    assert not (tmp_path / "out.xlsx").exists()


def test_text_starting_with_an_equals_sign_stays_text(tmp_path, blank):
    """No field of a report can carry it (TYPE must read as CEXnX, the rest are numbers and
    FUNCTION a word), so the lines are made here: the writer must keep such text as text."""
    lines = [(1, {"TYPE": "=1+1", "ID": "=A1", "FUNCTION": "=HYPERLINK(\"x\")", "KEY": "",
                  "RATE": "=SUM(E6:E9)", "EXEC TIME": "0.1", "UTIL%": "+5"})]
    out = tmp_path / "eq.xlsx"
    fill_rmf_sheet(blank, out, lines)
    pkg = Package(out)
    try:
        sheet = next(sh for sh in pkg.sheets if sh.name == RMF_SHEET)
        cells = {c: sheet.cells[(HEADER_ROW + 1, c)] for c in range(1, 8)}
    finally:
        pkg.zip.close()
    assert all(cell.formula is None for cell in cells.values())
    assert [cells[c].value for c in (1, 2, 3, 5, 6, 7)] == ["=1+1", "=A1", "=HYPERLINK(\"x\")", "=SUM(E6:E9)", 0.1, 5.0]
    ws = load_workbook(out)[RMF_SHEET]
    assert ws.cell(HEADER_ROW + 1, 1).data_type == "s" and ws.cell(HEADER_ROW + 1, 1).value == "=1+1"
    with zipfile.ZipFile(out) as z:
        xml = z.read(_sheet_part(out)).decode()
    assert "<f>" not in xml and "<f " not in xml


def test_the_calibration_page_fill_commands_run(tmp_path):
    # docs/calibration.md's `template --rmf` / `recalc --rmf` block, run as printed on the 2018 excerpt
    from _docs import command_lines, doc_block
    (tmp_path / "crypto-report.txt").write_bytes(F2018.read_bytes())
    commands = command_lines(doc_block("calibration.md", "Or let cryptoplan fill the sheet from RMF's own output"))
    assert len(commands) == 2
    for args in commands:
        args = [str(tmp_path / a) if a.endswith((".txt", ".xlsx")) else a for a in args]
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 0, (args, res.output)
    assert len(read_rmf_sheet(tmp_path / "filled.xlsx")) == 4
