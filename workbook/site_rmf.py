"""The template's "Site RMF" sheet: the RMF Crypto Hardware Activity lines, typed in or filled from a report.

The sheet holds a table with the report's column headings (:data:`cryptoplan.model.calibration.calibrate.RMF_COLUMNS`)
in one row and a report line in each row below it; ``cryptoplan calibrate --rmf planner.xlsx``
reads it here (:func:`read_rmf_sheet`) and checks it with :func:`cryptoplan.model.calibration.calibrate.rmf_rows`,
as a CSV of the same columns is checked.

A planner types the lines, or has them filled from RMF's own output (``cryptoplan template
--rmf REPORT``, ``cryptoplan recalc book.xlsx --rmf REPORT``):

* :func:`report_fill` reads the printed report (or SMF 70-2 records), picks one system and its
  peak interval and makes that interval's lines
  (:func:`~cryptoplan.model.site.rmf_lines.report_lines`), checked as calibration will check them;
* :func:`rmf_sheet_writes` says which cells of the sheet get which value (the lines below the
  header, the lines typed there before emptied);
* :func:`fill_rmf_sheet` writes them into a workbook with the package writer ``cryptoplan
  recalc`` uses (:func:`~cryptoplan.workbook.engine.writer.write_package`): every other part of
  the file, styles and the sheet's other cells included, is copied unchanged, text is written
  as text (never a formula), and the file is replaced atomically.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from cryptoplan.model.calibration.calibrate import RMF_COLUMNS, CalibrationError, RmfRow, rmf_rows
from cryptoplan.model.site.rmf_cards import card_lines
from cryptoplan.model.site.rmf_files import read_activity
from cryptoplan.model.site.rmf_lines import MODELLED_GENERATIONS, report_lines
from cryptoplan.model.site.rmf_records import card_generation

from .engine import csv_text
from .engine.limits import MAX_CELLS
from .engine.package import Package, SheetData, WorkbookFileError
from .engine.writer import CellWrite, write_package

__all__ = ["RMF_SHEET", "HEADER_ROW", "TEXT_COLUMNS", "read_rmf_sheet", "ReportFill", "report_fill",
           "rmf_sheet_writes", "fill_rmf_sheet"]

RMF_SHEET = "Site RMF"
HEADER_ROW = 4          # the template's header row; a user's table may start elsewhere

#: Columns always written as text; the others are written as numbers when they read as one.
TEXT_COLUMNS = ("TYPE", "FUNCTION")

# a number as report_lines writes it (and as a planner types one): no "inf", "nan" or "1_000"
_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")


def _cells_by_row(sheet: SheetData) -> dict:
    """``{row: {col: value}}`` of the sheet's cells that hold a value (a formula's cached one)."""
    by_row: dict = {}
    for (r, c), cell in sheet.cells.items():
        if cell.value is not None:
            by_row.setdefault(r, {})[c] = cell.value
    return by_row


def _header(by_row: dict) -> tuple[int, dict] | None:
    """(row, ``{column heading: column number}``) of the first row holding every heading of
    :data:`RMF_COLUMNS`, or None."""
    for r in sorted(by_row):
        heads = {c: csv_text(v).strip().upper() for c, v in by_row[r].items()}
        found = {}
        for c in sorted(heads):
            if heads[c] in RMF_COLUMNS and heads[c] not in found:
                found[heads[c]] = c
        if len(found) == len(RMF_COLUMNS):
            return r, found
    return None


def _open(path, max_cells: int = MAX_CELLS) -> Package:
    """The workbook at ``path``, read as recalc reads it; CalibrationError naming it otherwise."""
    path = str(path)
    if not Path(path).is_file():
        raise CalibrationError(f"{path}: no such file")
    try:      # the reader recalc uses: safe XML, size limits, every refusal a one-line message
        return Package(path, max_cells=max_cells)
    except WorkbookFileError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise CalibrationError(f"{path}: not an .xlsx workbook ({reason}); give the template workbook with the "
                               f"sheet {RMF_SHEET!r}, or a CSV with the columns {', '.join(RMF_COLUMNS)}") from None


def _rmf_sheet(pkg: Package, path: str) -> SheetData:
    sheet = next((sh for sh in pkg.sheets if sh.name == RMF_SHEET and sh.kind == "worksheet"), None)
    if sheet is None:
        raise CalibrationError(f"{path}: no sheet {RMF_SHEET!r} (it has "
                               f"{', '.join(sh.name for sh in pkg.sheets)}); write a new template with "
                               "`cryptoplan template` and type the report's lines in its Site RMF sheet")
    return sheet


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
    pkg = _open(path)
    try:
        by_row = _cells_by_row(_rmf_sheet(pkg, path))
    finally:
        pkg.zip.close()
    found = _header(by_row)
    if found is None:
        raise CalibrationError(f"{where} no header row with the columns {', '.join(RMF_COLUMNS)}")
    head, cols = found
    records = []
    for line in sorted(r for r in by_row if r > head):
        cells = {c: csv_text(by_row[line].get(j)) for c, j in cols.items()}
        if any(v.strip() for v in cells.values()):
            records.append((line, cells))
    if not records:
        raise CalibrationError(f"{where} no report lines under the header (row {head}): type the RMF "
                               "Crypto Hardware Activity report's lines there")
    return rmf_rows(records, f"{path}, sheet {RMF_SHEET},")


# ---------------------------------------------------------------------------------------------
# filled from RMF's own output


@dataclass(frozen=True)
class ReportFill:
    """The lines of one system's peak interval of an RMF report, for the Site RMF sheet.

    Attributes
    ----------
    source : the report (or SMF 70-2 file) read.
    system : the SMF system id the lines are of.
    interval : the interval's start, ``YYYY-MM-DD HH:MM:SS``.
    busy_pct : the mean utilization of the system's cards in it (the peak's measure), percent.
    intervals : how many intervals of ``system`` the file holds.
    chosen : ``"peak"`` (picked as the busiest) or ``"given"`` (named by the caller).
    lines : ``[(line, {column: text})]`` as :func:`~cryptoplan.model.site.rmf_lines.report_lines`
        gives them (``line``: the report's line, or ``"byte N"`` of an SMF record).
    notes : what was left out and why (PKCS11 cards, CEX5, KEY-GEN rows).
    warnings : the reader's warnings (records skipped, fields it does not know).
    """

    source: str
    system: str
    interval: str
    busy_pct: float | None
    intervals: int
    chosen: str
    lines: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)

    def summary(self) -> str:
        """One sentence: which lines, from where, and why this interval."""
        why = (f"the peak of its {self.intervals} intervals" if self.chosen == "peak" and self.intervals > 1
               else "the only interval" if self.chosen == "peak" else "as asked")
        busy = "" if self.busy_pct is None else f", the cards {self.busy_pct:.1f}% busy"
        n = len(self.lines)
        return (f"{self.source}: {n} line{'s' if n != 1 else ''} of system {self.system}, interval "
                f"{self.interval} ({why}{busy})")


def _sheet_cards(lines, system: str):
    """The card lines of ``system`` that the sheet holds: CCA coprocessors and accelerators the
    models price (no PKCS11, no CEX5)."""
    return [ln for ln in lines if ln.system == system and ln.mode != "pkcs11"
            and card_generation(ln.card_type) in MODELLED_GENERATIONS]


def _busy_by_interval(cards) -> dict:
    """``{interval: mean utilization}`` of the cards: this system's own (LPAR or TOTAL columns)
    where any card has them, else the CPC columns (an accelerator RMF prints CPC-wide only)."""
    for own in (True, False):
        by: dict = {}
        for ln in cards:
            u = ln.own_util_pct if own else ln.scopes.get("CPC", {}).get("util_pct")
            if u is not None:
                by.setdefault(ln.interval, []).append(u)
        if by:
            return {i: sum(us) / len(us) for i, us in by.items()}
    return {}


def _list(items, most: int = 8) -> str:
    items = list(items)
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def report_fill(path, *, smf70: bool = False, system: str | None = None,
                interval: str | None = None) -> ReportFill:
    """The Site RMF lines of RMF's report at ``path``: one system, its peak interval.

    Parameters
    ----------
    path : str or Path
        RMF's printed CRYPTO HARDWARE ACTIVITY report (text,
        :func:`~cryptoplan.model.site.rmf_report.read_rmf_report`), or with ``smf70`` a file of
        SMF type 70 subtype 2 records (:func:`~cryptoplan.model.site.smf70.read_smf70`).
    smf70 : bool
        ``path`` holds SMF 70-2 records, not report text.
    system : str, optional
        The SMF system id whose lines to take; required when the file holds several systems.
    interval : str, optional
        ``YYYY-MM-DD HH:MM:SS``, the interval's start; default the **peak** interval: the one
        in which the system's cards that the sheet holds (CCA coprocessors and accelerators,
        CEX6 to CEX8) are busiest, by their mean utilization (this system's LPAR or TOTAL
        columns; the CPC columns only where no card has them).  A tie goes to the later
        interval.

    Returns
    -------
    ReportFill
        Its lines are checked as ``cryptoplan calibrate --rmf`` checks the sheet's.

    Raises
    ------
    CalibrationError
        The file is not such a report (the reader's message: the file, the line or byte, what
        was expected), holds several systems and none was named, has no such system or
        interval (the message lists the ones it has), or no card line the models price.
    """
    source = str(path)
    try:
        records, warnings = read_activity(source, smf=smf70)
    except ValueError as exc:        # RmfReportError, Smf70Error: the file, the line or byte, what was expected
        raise CalibrationError(str(exc)) from None
    systems = list(dict.fromkeys(r.system for r in records))
    if not systems:
        raise CalibrationError(f"{source}: no card in it")
    if system is None:
        if len(systems) > 1:
            raise CalibrationError(f"{source} holds the systems {_list(systems)}: name the one whose cards to "
                                   "take (--rmf-system)")
        system = systems[0]
    elif system not in systems:
        raise CalibrationError(f"{source}: no system {system!r} in it (it holds {_list(systems)})")
    cards = _sheet_cards(card_lines(records), system)
    intervals = list(dict.fromkeys(r.interval for r in records if r.system == system))
    busy = _busy_by_interval(cards)
    if interval is None:
        if not busy:
            _, notes = report_lines(records, system=system)
            raise CalibrationError(f"{source}: system {system} has no card line the models price (CCA "
                                   "coprocessors and accelerators, CEX6 to CEX8): "
                                   + "; ".join(notes or ["the report holds no card"]))
        interval = max(busy, key=lambda i: (busy[i], i))
        chosen = "peak"
    elif interval not in intervals:
        raise CalibrationError(f"{source}: system {system} has no interval {interval!r} (it has "
                               f"{_list(intervals)})")
    else:
        chosen = "given"
    lines, notes = report_lines(records, interval=interval, system=system)
    if not lines:
        raise CalibrationError(f"{source}: system {system}, interval {interval}: no card line the models price "
                               "(CCA coprocessors and accelerators, CEX6 to CEX8): "
                               + "; ".join(notes or ["the interval holds no card"]))
    rmf_rows(lines, source)          # as calibrate will check the sheet: refused here, before any write
    return ReportFill(source, system, interval, None if interval not in busy else round(busy[interval], 6),
                      len(intervals), chosen, lines, notes, warnings)


def _cell_value(column: str, text):
    """What a line's text becomes in its cell: None (empty), a number, or text."""
    if text is None or (isinstance(text, str) and text.strip() == ""):
        return None
    if not isinstance(text, str):
        return text
    if column not in TEXT_COLUMNS and _NUMBER.fullmatch(text):
        v = float(text)
        if math.isfinite(v):
            return v
    return text


def rmf_sheet_writes(sheet: SheetData, lines, where: str = "the workbook") -> dict:
    """The cells of the Site RMF sheet that ``lines`` give a value, and the ones they empty.

    Parameters
    ----------
    sheet : SheetData
        The sheet as :class:`~cryptoplan.workbook.engine.package.Package` read it.
    lines : list of (line, dict)
        ``(line, {column: text})`` with the columns :data:`RMF_COLUMNS`
        (:attr:`ReportFill.lines`).
    where : str
        Names the workbook in messages.

    Returns
    -------
    dict
        ``{(row, col): value}``: the lines in the rows right below the header, in the header's
        columns; every other cell of those columns below the header that holds something (a
        line typed before) is emptied (None).  Values: None, float (RATE, EXEC TIME, UTIL%,
        ID, KEY where they read as numbers) or str (TYPE, FUNCTION, anything else), never a
        formula.  Cells right of or above the table are not touched.

    Raises
    ------
    CalibrationError
        The sheet has no header row with the columns :data:`RMF_COLUMNS`, or a line lacks one.
    """
    by_row = _cells_by_row(sheet)
    found = _header(by_row)
    if found is None:
        raise CalibrationError(f"{where}, sheet {RMF_SHEET}: no header row with the columns "
                               f"{', '.join(RMF_COLUMNS)}; write a new template with `cryptoplan template`")
    head, cols = found
    writes: dict = {}
    table_cols = set(cols.values())
    for (r, c), cell in sheet.cells.items():
        if r > head and c in table_cols and (cell.value is not None or cell.formula is not None):
            writes[(r, c)] = None
    for i, (line, cells) in enumerate(lines, head + 1):
        missing = [c for c in RMF_COLUMNS if c not in cells]
        if missing:
            raise CalibrationError(f"{where}: line {line} has no {', '.join(missing)}")
        for name, c in cols.items():
            writes[(i, c)] = _cell_value(name, cells[name])
    return writes


def fill_rmf_sheet(workbook_in, workbook_out, lines, *, max_cells: int = MAX_CELLS) -> int:
    """Write ``lines`` into the Site RMF sheet of ``workbook_in``, saving the result as ``workbook_out``.

    The lines go below the sheet's header row (:func:`rmf_sheet_writes`), replacing the lines
    typed there before; everything else (the sheet's other cells, styles, validation, the other
    sheets) is copied unchanged by the package writer ``cryptoplan recalc`` uses.  Text is an
    inline string, so a value such as ``"=1+1"`` stays text.  ``workbook_out`` (which may be
    ``workbook_in``) is replaced atomically: on any error it is as it was.

    Parameters
    ----------
    workbook_in, workbook_out : str or Path
        The ``.xlsx`` to read and the one to write (replaced if it exists).
    lines : list of (line, dict)
        ``(line, {column: text})``, e.g. :attr:`ReportFill.lines`; written as given (check
        them first: :func:`report_fill` does).
    max_cells : int
        Refuse a workbook with more cells.

    Returns
    -------
    int
        The number of lines written.

    Raises
    ------
    CalibrationError
        ``workbook_in`` is not a workbook, has no Site RMF sheet or no header row in it, or holds
        macros and ``workbook_out`` is an ``.xlsx``.
    OutputError
        ``workbook_out`` cannot be written (not a regular file, no such folder, a full disk).
    """
    src, dest = os.fspath(workbook_in), os.fspath(workbook_out)
    pkg = _open(src, max_cells)
    try:
        sheet = _rmf_sheet(pkg, src)
        if any(n.lower().endswith("vbaproject.bin") for n in pkg.infos) and dest.lower().endswith(".xlsx"):
            raise CalibrationError(f"{src} contains macros (vbaProject.bin); write it to a .xlsm file, "
                                   "Excel refuses an .xlsx with macro content")
        writes = rmf_sheet_writes(sheet, lines, src)
        try:
            write_package(pkg, dest, {sheet.part: {rc: CellWrite("constant", v) for rc, v in writes.items()}},
                          full_calc_on_load=False)
        except WorkbookFileError as exc:
            raise CalibrationError(str(exc)) from None
    finally:
        pkg.zip.close()
    return len(lines)

