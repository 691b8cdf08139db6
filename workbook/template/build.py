"""The whole workbook: every sheet in order, through one :class:`~._builder.Builder`."""

from __future__ import annotations

from copy import copy

from ._builder import Builder
from .calibration import add_calibration, add_parameters
from .check import add_check
from .guide import add_guide, add_xlwings_conf
from .inputs import add_inputs, add_lists
from .plan import add_plan, add_workloads
from .results import add_results
from .rmf import add_site_rmf
from .whatif import add_whatif

__all__ = ["build_workbook"]


def build_workbook():
    """Build the planning workbook in memory: formulas only (nothing is computed here).

    Returns
    -------
    (openpyxl.Workbook, Builder)
        The workbook and its builder (``formulas``, ``dynamic_arrays``, and ``uses``: which
        input each formula passes as which catalog argument).
    """
    b = Builder()
    add_guide(b)
    refs = add_lists(b)
    add_inputs(b, refs)
    add_results(b)
    add_workloads(b)
    add_plan(b)
    add_whatif(b)
    add_calibration(b)
    add_parameters(b)
    add_site_rmf(b)
    add_check(b)
    add_xlwings_conf(b)
    for hidden in ("Tables", "Lists"):       # the hidden sheets last
        sheet = b.wb[hidden]
        b.wb.move_sheet(sheet, offset=len(b.wb.sheetnames) - 1 - b.wb.sheetnames.index(hidden))
    b.wb.active = 1  # Inputs
    b.wb.calculation.fullCalcOnLoad = True
    _named_faces(b.wb)
    return b.wb, b


def _named_faces(wb) -> None:
    """Every cell font names its face and size (the workbook's Calibri 11 where a style left them
    out): a font without a name prints in a wider serif face in LibreOffice, so a sheet sized for
    Calibri ran past its columns there."""
    default = wb._fonts[0]
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                if cell.has_style and (cell.font.name is None or cell.font.sz is None):
                    font = copy(cell.font)
                    font.name, font.sz = font.name or default.name, font.sz or default.sz
                    cell.font = font
