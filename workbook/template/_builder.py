"""The builder every sheet writes through, and the styles, formats and layout helpers they share.

:class:`Builder` writes formulas and records them (it computes nothing): a catalog function
over named inputs (:meth:`Builder.udf`), a native formula, a legacy array formula, or a
spilling table function shown through the hidden ``Tables`` sheet.  :class:`Name` and
:class:`Cell` mark a formula argument as a defined name or a cell reference (any other value
is written as a literal).  The rest are the fonts, fills, number formats, headings, column
widths, print setup and scatter charts the sheet modules have in common.
"""

from __future__ import annotations

from openpyxl import Workbook
from openpyxl.chart import ScatterChart, Series
from openpyxl.chart.data_source import StrRef
from openpyxl.chart.series import SeriesLabel
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.formula import ArrayFormula

from cryptoplan.addin.catalog import CATALOG
from ._input_cells import MAY_BE_EMPTY, input_defaults

__all__ = [
    "CATALOG_BY_NAME", "F_TPS", "F_US", "F_PCT", "F_MS", "F_CARDS", "F_CPS", "F_RATIO", "F_STARTS",
    "TITLE_FONT", "HEADER_FONT", "HEADER_FILL", "NOTE_FONT", "SERIES_FONT", "WRAP_TOP",
    "Name", "Cell", "AMS_ARGS", "Builder", "shown", "heading", "header_row", "set_widths", "print_setup", "titled_sheet",
    "scatter_chart",
]

#: The catalog's functions by name (their arguments, table columns, parameter-file argument).
CATALOG_BY_NAME = {f.name: f for f in CATALOG}

# Number formats of results (unit in the format, so printed numbers carry it).
F_TPS = '#,##0.0 "txn/s"'
F_US = '#,##0.0 "µs"'
F_PCT = "0.0%"
F_MS = '0.0000 "ms"'
F_CARDS = '[=1]0 "card";0 "cards"'
F_CPS = '[=1]0 "CP";0 "CPs"'
F_RATIO = '0.00"x"'
F_STARTS = '#,##0.0 "starts/s"'

# Styles: a sheet's title, a table's header row, a section heading, notes, wrapped text (each cell's
# font is given the workbook's face and size where a style leaves them out: build._named_faces).
TITLE_FONT = Font(size=16, bold=True, color="1F3864")
HEADER_FONT = Font(bold=True, color="FFFFFF")
HEADER_FILL = PatternFill("solid", fgColor="1F3864")
_SECTION = Font(bold=True, size=12, color="1F3864")
NOTE_FONT = Font(italic=True, color="595959")
WRAP_TOP = Alignment(wrap_text=True, vertical="top")
#: The labels of the chart data beside a table (columns not printed).
SERIES_FONT = Font(bold=True, color="595959")


# ------------------------------------------------------------------ formula arguments
class Name(str):
    """A reference to a defined name (rendered bare)."""


class Cell(str):
    """A same-sheet cell reference like ``A5``."""


class Expr(str):
    """A formula expression like ``(1-PlanBandLevel)/2`` (rendered bare)."""


#: The AMS functions' key and message arguments: the inputs Policy, KeyType, KeySize, MessageKB, KeyReuse.
AMS_ARGS = tuple(Name(n) for n in ("Policy", "KeyType", "KeySize", "MessageKB", "KeyReuse"))


class _Omitted:
    """An argument left out of a formula (``F(a,,c)``): the function's default."""

    def __str__(self) -> str:
        return ""


_OMITTED = _Omitted()


def _literal(value) -> str:
    """``value`` as a formula literal: TRUE/FALSE, a quoted string, a whole float without ``.0``."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


# ------------------------------------------------------------------ the builder
class Builder:
    """Writes the workbook's formulas; it computes nothing.

    ``formulas[(sheet, coord)]`` records each formula written and ``dynamic_arrays``
    the spilling ones.  What a formula evaluates to is the formula engine's business
    (:func:`cryptoplan.workbook.template.snapshot` evaluates a built workbook with
    :mod:`cryptoplan.workbook.recalculation`).
    """

    def __init__(self) -> None:
        self.inputs = input_defaults()
        self.formulas: dict = {}           # (sheet, coord) -> formula text
        self.dynamic_arrays: list = []     # (sheet, coord) of spilling formulas
        self.uses: set = set()             # (input name, function, argument name) the formulas pass
        self.wb = Workbook()

    @staticmethod
    def _render(arg) -> str:
        """An argument as formula text.

        An input that may be empty is passed as ``IF(ISBLANK(X),"",X)``: Excel hands an
        empty cell to an add-in as empty, but LibreOffice Calc hands over a single cell's
        *value*, 0 for an empty one; ``""`` means "not given" in both.
        """
        if isinstance(arg, Name) and str(arg) in MAY_BE_EMPTY:
            return f'IF(ISBLANK({arg}),"",{arg})'
        return str(arg) if isinstance(arg, (Name, Cell, Expr, _Omitted)) else _literal(arg)

    @staticmethod
    def _with_params(name: str, args: tuple, after: tuple = ()) -> tuple:
        """``args``, then the ParamsFile input when the function takes a parameter file, then
        ``after`` (the arguments a function gained after its params_file: a plan's profiles)."""
        k = CATALOG_BY_NAME[name].params_arg
        if k is None:
            return args
        return (*args, *[_OMITTED] * (k - len(args)), Name("ParamsFile"), *after)

    def udf(self, ws, coord: str, name: str, *args, number_format: str | None = None, after: tuple = ()):
        """Write ``=NAME(args)`` to ``coord``.

        A function that evaluates with a parameter file gets the ``ParamsFile`` input after
        ``args`` (arguments between left out: their defaults), then ``after``.
        """
        self.native(ws, coord, "=" + self.call(name, *args, after=after), number_format)

    def call(self, name: str, *args, after: tuple = ()) -> str:
        """The text ``NAME(args)`` of a call :meth:`udf` would write, for a larger formula."""
        args = self._with_params(name, args, after)
        self.uses.update((str(a), name, arg.name) for a, arg in zip(args, CATALOG_BY_NAME[name].args)
                         if isinstance(a, Name))
        return f"{name}({','.join(self._render(a) for a in args)})"

    def native(self, ws, coord: str, formula: str, number_format: str | None = None):
        """Write a formula (native functions only, or built by :meth:`udf`)."""
        self.formulas[(ws.title, coord)] = formula
        ws[coord] = formula
        if number_format:
            ws[coord].number_format = number_format

    def native_array(self, ws, ref: str, formula: str, number_format: str | None = None):
        """A legacy (Ctrl+Shift+Enter) array formula over ``ref`` (native functions only):
        one formula computes the whole block, in every Excel version and in Calc."""
        coord = ref.split(":")[0]
        self.formulas[(ws.title, coord)] = formula
        ws[coord] = ArrayFormula(ref, formula)
        if number_format:
            for row in ws[ref]:
                for cell in row:
                    cell.number_format = number_format

    def dynamic_array(self, ws, coord: str, name: str, height: int, width: int, *args, order=None,
                      after: tuple = (), row_step: int = 1) -> int:
        """A spilling table function of ``args`` (header row + ``height - 1`` rows), shown at ``coord``.

        ``order``: the table's columns (0-based) in the order the sheet shows them; default all,
        as the function gives them.  ``after``: arguments after ParamsFile (see :meth:`udf`).
        ``row_step``: the sheet rows from one of the table's rows to the next below its header (2
        leaves a row under each for the caller).
        Returns the table's first row on the ``Tables`` sheet (:func:`shown` refers to its cells).

        The spilling formula itself stands on the hidden sheet ``Tables`` (its own block of
        rows, ``height`` x ``width`` being the range older Excel shows); the cells at ``coord``
        are plain references to it.  LibreOffice recomputes every array formula of an xlsx file
        on load, so without the Calc add-in an array formula over a cryptoplan function shows
        ``#NAME?`` even in a recalculated copy that carries its values; a plain formula keeps
        the value the copy carries (issue 33).  Given ParamsFile if the function takes it.
        """
        args = self._with_params(name, args, after)
        self.uses.update((str(a), name, arg.name) for a, arg in zip(args, CATALOG_BY_NAME[name].args)
                         if isinstance(a, Name))
        formula = f"={name}({','.join(self._render(a) for a in args)})"
        tables = self._tables_sheet()
        t_top = self._tables_next
        self._tables_next += height + 1
        tables.cell(t_top, 1)       # (the block's first cell)
        t_coord = f"A{t_top}"
        self.formulas[(tables.title, t_coord)] = formula
        tables[t_coord] = ArrayFormula(f"{t_coord}:{get_column_letter(width)}{t_top + height - 1}", formula)
        self.dynamic_arrays.append((tables.title, t_coord))
        top, left = ws[coord].row, ws[coord].column
        shown = range(width) if order is None else order
        for i in range(height):
            row = top + (0 if i == 0 else 1 + (i - 1) * row_step)
            for j, k in enumerate(shown):
                src = f"Tables!{get_column_letter(1 + k)}{t_top + i}"
                self.native(ws, f"{get_column_letter(left + j)}{row}", _shown(src, anchor=i == k == 0))
        return t_top

    def _tables_sheet(self):
        """The hidden sheet ``Tables`` holding the spilling table functions (created on first use)."""
        if "Tables" not in self.wb.sheetnames:
            ws = self.wb.create_sheet("Tables")
            ws.sheet_state = "hidden"
            ws["A1"] = ("The table functions the Plan, Calibration and Parameters sheets show (they "
                        "reference these cells).")
            self._tables_next = 3
        return self.wb["Tables"]


def shown(t_top: int, row: int, column: int) -> str:
    """The formula showing cell (``row``, ``column``), 0-based, of the table at ``t_top`` on Tables."""
    return _shown(f"Tables!{get_column_letter(1 + column)}{t_top + row}")


def _shown(src: str, anchor: bool = False) -> str:
    """A plain formula showing the value of the spilled cell ``src``, as LibreOffice keeps it.

    LibreOffice recomputes on load a formula whose stored value is an error, a boolean (it has
    no boolean type) or empty text, which without the Calc add-in is #NAME? once the chain
    reaches a cryptoplan function.  So a boolean shows as 1/0 (the within_tolerance column's
    number format prints TRUE/FALSE), and the cells a table does not fill (#N/A in a legacy
    array range, empty in a spill) show empty text, also when recomputed without the add-in.
    The ``anchor`` (the table's first cell) keeps any error: there the function says what is
    wrong (the add-in's errors are text in Excel, real errors in Calc).
    """
    shown = f'IF(ISBLANK({src}),"",IF(ISLOGICAL({src}),N({src}),{src}))'
    return f"={shown}" if anchor else f'=IFERROR({shown},"")'


# ------------------------------------------------------------------ layout
def heading(ws, row: int, text: str):
    """A section heading in column A of ``row``."""
    ws.cell(row, 1, text).font = _SECTION


def header_row(ws, row: int, labels):
    """A table's header row: ``labels`` from column A, white on dark blue, wrapped."""
    for c, text in enumerate(labels, 1):
        cell = ws.cell(row, c, text)
        cell.font = HEADER_FONT
        cell.fill = HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="center")


def set_widths(ws, widths: dict):
    """Set the widths of columns: ``{letter: width}``."""
    for col, w in widths.items():
        ws.column_dimensions[col].width = w


def print_setup(ws, area: str, landscape: bool = True, scale: int | None = None):
    """Print ``area`` on A4, one page wide, without gridlines, the page number in the footer.

    ``scale`` (percent) prints at that fixed size instead of fitting one page wide, for a sheet
    with manual page breaks (Excel ignores them under fit-to-page).
    """
    ws.print_area = area
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.sheet_properties.pageSetUpPr.fitToPage = scale is None
    if scale is None:
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
    else:
        ws.page_setup.scale = scale
    ws.print_options.gridLines = False
    ws.oddFooter.center.text = "&A - page &P of &N"
    ws.oddHeader.left.text = "cryptoplan capacity planner"


def titled_sheet(b: Builder, name: str, title: str, note: str, note_to: str):
    """A new sheet with its title in A1 and a wrapped note in A2 merged across to ``note_to``."""
    ws = b.wb.create_sheet(name)
    ws["A1"] = title
    ws["A1"].font = TITLE_FONT
    ws["A2"] = note
    ws["A2"].font, ws["A2"].alignment = NOTE_FONT, WRAP_TOP
    ws.merge_cells(f"A2:{note_to}2")
    ws.row_dimensions[2].height = 30
    return ws


def scatter_chart(ws, title, x_title, y_title, x_ref, series, y_fmt=None, y_max=None):
    """A straight-line scatter chart: x is a number axis (spacing follows the values).

    ``series`` is ``[(title cell reference, values Reference), ...]`` sharing ``x_ref``.
    """
    ch = ScatterChart()
    ch.title = title
    ch.style = 2
    ch.x_axis.title, ch.y_axis.title = x_title, y_title
    ch.height, ch.width = 7.2, 12.5
    ch.display_blanks = "gap"
    for name_ref, values in series:
        s = Series(values, x_ref, title_from_data=False)
        s.tx = SeriesLabel(strRef=StrRef(name_ref))
        s.smooth = False                  # straight segments: no spline overshoot
        s.marker.symbol = "circle"
        s.marker.size = 5
        ch.series.append(s)
    ch.x_axis.scaling.min = 0
    ch.y_axis.scaling.min = 0
    if y_max is not None:
        ch.y_axis.scaling.max = y_max
    if y_fmt:
        ch.y_axis.numFmt = y_fmt
    ch.x_axis.numFmt = "#,##0"
    ch.x_axis.delete = ch.y_axis.delete = False
    ch.legend.position = "b"
    return ch
