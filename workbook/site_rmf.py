"""The template's "Site RMF" sheet: the RMF Crypto Hardware Activity lines a planner types in.

The sheet holds a table with the report's column headings (:data:`cryptoplan.model.calibrate.RMF_COLUMNS`)
in one row and a report line in each row below it; ``cryptoplan calibrate --rmf planner.xlsx``
reads it here and checks it with :func:`cryptoplan.model.calibrate.rmf_rows`, as a CSV of the same
columns is checked.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from cryptoplan.model.calibrate import RMF_COLUMNS, CalibrationError, RmfRow, rmf_rows

from .engine import csv_text

__all__ = ["RMF_SHEET", "HEADER_ROW", "read_rmf_sheet"]

RMF_SHEET = "Site RMF"
HEADER_ROW = 4          # the template's header row; a user's table may start elsewhere


def read_rmf_sheet(path) -> list[RmfRow]:
    """The report lines typed in the sheet ``Site RMF`` of workbook ``path`` (.xlsx).

    The header row is the first row holding the report's column headings; every row below
    it that is not blank is a report line (values as typed, or the cached value of a formula).

    Raises
    ------
    CalibrationError
        Not a workbook, no such sheet, no header row, or a line that is not a report line
        (naming the workbook, the sheet, the row and what is accepted).
    """
    from openpyxl import load_workbook

    path = str(path)
    where = f"{path}, sheet {RMF_SHEET},"
    if not Path(path).is_file():
        raise CalibrationError(f"{path}: no such file")
    try:
        wb = load_workbook(path, read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise CalibrationError(f"{path}: not an .xlsx workbook ({type(exc).__name__}); give the template "
                               f"workbook with the sheet {RMF_SHEET!r}, or a CSV with the columns "
                               f"{', '.join(RMF_COLUMNS)}") from None
    try:
        if RMF_SHEET not in wb.sheetnames:
            raise CalibrationError(f"{path}: no sheet {RMF_SHEET!r} (it has {', '.join(wb.sheetnames)}); "
                                   "write a new template with `cryptoplan template` and type the report's "
                                   "lines in its Site RMF sheet")
        rows = list(wb[RMF_SHEET].iter_rows(values_only=True))
    finally:
        wb.close()
    for i, row in enumerate(rows, 1):
        heads = [csv_text(v).strip().upper() for v in row]
        if all(c in heads for c in RMF_COLUMNS):
            cols = {c: heads.index(c) for c in RMF_COLUMNS}
            break
    else:
        raise CalibrationError(f"{where} no header row with the columns {', '.join(RMF_COLUMNS)}")
    records = []
    for line, row in enumerate(rows[i:], i + 1):
        cells = {c: csv_text(row[j]) if j < len(row) else "" for c, j in cols.items()}
        if any(v.strip() for v in cells.values()):
            records.append((line, cells))
    if not records:
        raise CalibrationError(f"{where} no report lines under the header (row {i}): type the RMF Crypto "
                               "Hardware Activity report's lines there")
    return rmf_rows(records, f"{path}, sheet {RMF_SHEET},")
