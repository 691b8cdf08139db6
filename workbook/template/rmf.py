"""The Site RMF sheet: the lines of a site's RMF Crypto Hardware Activity report, for ``calibrate``:
typed in, or filled from RMF's output (``cryptoplan template --rmf``, ``cryptoplan recalc --rmf``).

The layout (sheet name, header row, columns) is :mod:`cryptoplan.workbook.site_rmf`'s, which
reads the sheet back; the columns and functions are the calibration's
(:mod:`cryptoplan.model.calibration.calibrate`).
"""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from cryptoplan.model.calibration.calibrate import RMF_COLUMNS, RMF_FUNCTIONS
from cryptoplan.model.params import RSA_KEY_SIZES
from ..site_rmf import HEADER_ROW, RMF_SHEET
from ._builder import NOTE_FONT, TITLE_FONT, WRAP_TOP, Builder, header_row, print_setup, set_widths

__all__ = ["add_site_rmf"]


def add_site_rmf(b: Builder):
    """The Site RMF sheet: the planner types the RMF Crypto Hardware Activity report's lines."""
    ws = b.wb.create_sheet(RMF_SHEET)
    ws["A1"] = "Site RMF: your crypto report"
    ws["A1"].font = TITLE_FONT
    notes = ("Type the lines of your RMF Crypto Hardware Activity report, one row per printed line: TYPE as "
             "printed (CEX8C coprocessor, CEX8A accelerator), ID the card, FUNCTION TOTAL for a card's line or "
             "ME / CRT for an accelerator's RSA lines (KEY = their key length), RATE per second, EXEC TIME in "
             "ms, UTIL% in percent. Or have them filled from RMF's own output: cryptoplan recalc <this workbook> "
             "--rmf <report.txt> --in-place (--smf70 for SMF 70-2 records) writes the peak interval's lines here.",
             "Then, in a terminal: cryptoplan calibrate --rmf <this workbook> --out site-params.json, and "
             "recalculate with CRYPTOPLAN_PARAMS=site-params.json: the card times become yours (docs/calibration.md "
             "shows a worked example).")
    for r, text in enumerate(notes, 2):
        cell = ws.cell(r, 1, text)
        cell.font, cell.alignment = NOTE_FONT, WRAP_TOP
        ws.merge_cells(start_row=r, start_column=1, end_row=r, end_column=len(RMF_COLUMNS))
        ws.row_dimensions[r].height = 16 * (len(text) // 90 + 1)    # about 90 characters per line
    header_row(ws, HEADER_ROW, RMF_COLUMNS)
    first, last = HEADER_ROW + 1, HEADER_ROW + 24
    # EXEC TIME and UTIL% to the report's printed decimals (0.090, 40.0), so a filled sheet reads as the report
    shown = {RMF_COLUMNS.index("EXEC TIME") + 1: "0.000", RMF_COLUMNS.index("UTIL%") + 1: "0.0"}
    for r in range(first, last + 1):
        for c in range(1, len(RMF_COLUMNS) + 1):
            ws.cell(r, c).style = "Input"      # as the Inputs sheet's cells
            if c in shown:
                ws.cell(r, c).number_format = shown[c]
        ws.cell(r, RMF_COLUMNS.index("ID") + 1).alignment = Alignment(horizontal="center")   # apart from FUNCTION
    col = {name: get_column_letter(i) for i, name in enumerate(RMF_COLUMNS, 1)}
    checks = [
        (DataValidation(type="list", formula1='"' + ",".join(RMF_FUNCTIONS) + '"', allow_blank=True),
         "FUNCTION", f"FUNCTION: {', '.join(RMF_FUNCTIONS)}"),
        (DataValidation(type="list", formula1='"' + ",".join(map(str, RSA_KEY_SIZES)) + '"', allow_blank=True),
         "KEY", "KEY: the RSA key length of an ME or CRT line; empty on TOTAL lines"),
    ]
    for name in ("RATE", "EXEC TIME", "UTIL%"):
        checks.append((DataValidation(type="decimal", operator="greaterThanOrEqual", formula1="0", allow_blank=True),
                       name, f"{name}: a number >= 0, as the report prints it"))
    for dv, name, text in checks:
        dv.error, dv.errorTitle, dv.prompt = text, "Site RMF", text
        ws.add_data_validation(dv)
        dv.add(f"{col[name]}{first}:{col[name]}{last}")
    set_widths(ws, {"A": 12, "B": 8, "C": 12, "D": 8, "E": 12, "F": 12, "G": 10})
    ws.freeze_panes = f"A{first}"
    print_setup(ws, f"A1:G{last}", landscape=False)
