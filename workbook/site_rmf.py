"""The template's "Site RMF" sheet: the RMF Crypto Hardware Activity lines a planner types in.

The sheet holds a table with the report's column headings (:data:`cryptoplan.model.calibration.calibrate.RMF_COLUMNS`)
in one row and a report line in each row below it; ``cryptoplan calibrate --rmf planner.xlsx``
reads it here and checks it with :func:`cryptoplan.model.calibration.calibrate.rmf_rows`, as a CSV of the same
columns is checked.
"""

from __future__ import annotations

from pathlib import Path

from cryptoplan.model.calibration.calibrate import RMF_COLUMNS, CalibrationError, RmfRow, rmf_rows

from .engine import csv_text
from .engine.package import Package, WorkbookFileError

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
    path = str(path)
    where = f"{path}, sheet {RMF_SHEET},"
    if not Path(path).is_file():
        raise CalibrationError(f"{path}: no such file")
    try:      # the reader recalc uses: safe XML, size limits, every refusal a one-line message
        pkg = Package(path)
    except WorkbookFileError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise CalibrationError(f"{path}: not an .xlsx workbook ({reason}); give the template workbook with the "
                               f"sheet {RMF_SHEET!r}, or a CSV with the columns {', '.join(RMF_COLUMNS)}") from None
    try:
        sheet = next((sh for sh in pkg.sheets if sh.name == RMF_SHEET), None)
        if sheet is None:
            raise CalibrationError(f"{path}: no sheet {RMF_SHEET!r} (it has "
                                   f"{', '.join(sh.name for sh in pkg.sheets)}); write a new template with "
                                   "`cryptoplan template` and type the report's lines in its Site RMF sheet")
        by_row: dict = {}
        for (r, c), cell in sheet.cells.items():
            if cell.value is not None:
                by_row.setdefault(r, {})[c] = cell.value
    finally:
        pkg.zip.close()
    width = max((c for cols in by_row.values() for c in cols), default=0)
    rows = [tuple(by_row.get(r, {}).get(c) for c in range(1, width + 1)) for r in sorted(by_row)]
    numbers = sorted(by_row)
    for i, row in enumerate(rows):
        heads = [csv_text(v).strip().upper() for v in row]
        if all(c in heads for c in RMF_COLUMNS):
            cols = {c: heads.index(c) for c in RMF_COLUMNS}
            break
    else:
        raise CalibrationError(f"{where} no header row with the columns {', '.join(RMF_COLUMNS)}")
    records = []
    for line, row in zip(numbers[i + 1:], rows[i + 1:]):
        cells = {c: csv_text(row[j]) if j < len(row) else "" for c, j in cols.items()}
        if any(v.strip() for v in cells.values()):
            records.append((line, cells))
    if not records:
        raise CalibrationError(f"{where} no report lines under the header (row {numbers[i]}): type the RMF "
                               "Crypto Hardware Activity report's lines there")
    return rmf_rows(records, f"{path}, sheet {RMF_SHEET},")
