"""The model's calibration: the Calibration sheet (published figures vs the model) and the Parameters sheet.

``Calibration`` shows MODEL_FIGURES(ParamsFile): each published figure the models predict,
its source, the model's value and relative error, the figures out of tolerance highlighted and
the reason listed, under a log-log chart of model against published.  ``Parameters`` shows
MODEL_PARAMETERS(ParamsFile): the fitted parameters in force.  Both tables are spilling table
functions (:meth:`Builder.dynamic_array <cryptoplan.workbook.template._builder.Builder.dynamic_array>`).
"""

from __future__ import annotations

import textwrap

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.formatting.rule import CellIsRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from cryptoplan.model.calibration.fit import figure_table_ids, known_misses
from cryptoplan.model.figures import figure
from cryptoplan.model.params import load_params
from ._builder import (CATALOG_BY_NAME, HEADER_FILL, HEADER_FONT, NOTE_FONT, SERIES_FONT, TITLE_FONT, WRAP_TOP,
                       Builder, print_setup, set_widths, titled_sheet)

__all__ = ["add_calibration", "add_parameters", "CALIBRATION_COLUMNS"]

#: MODEL_FIGURES' columns in the order the Calibration sheet shows them: the verdict's inputs
#: (kind, published, the accepted interval, model) side by side.
CALIBRATION_COLUMNS = ("source", "quantity", "conditions", "unit", "kind", "published", "accepted_low",
                       "accepted_high", "model", "relative_error", "within_tolerance", "reason", "id")

_BOOLEAN = '"TRUE";"TRUE";"FALSE"'
F_BOUND = "#,##0.0###"          # the accepted interval's ends: four decimals at most, not General's ten


def _row_lines(text: str, chars: int) -> int:
    """Lines a wrapped cell of ``chars`` characters per line needs for ``text``, wrapped at words
    as the spreadsheet wraps it (a word longer than a line is broken)."""
    return max(1, len(textwrap.wrap(text or "", chars)))


def add_calibration(b: Builder):
    """Published figures beside the model (MODEL_FIGURES), and a model-vs-published chart."""
    ws = titled_sheet(b, "Calibration", "Calibration: published measurements vs the model",
                      "MODEL_FIGURES(ParamsFile) (on the hidden Tables sheet) gives one row per published figure the models predict: "
                      "its source document (report and page), the model's value and relative error, and the "
                      "interval the model must fall in (accepted_low to accepted_high, set by how the figure "
                      "is printed: the tolerance rules of cryptoplan's data/README.md; an up_to figure is "
                      "compared on the model's extreme over its conditions). within_tolerance FALSE is "
                      "highlighted; the reason column says why the model cannot meet it.", "I")
    ws.row_dimensions[2].height = 44                # the note's three lines
    fig = CATALOG_BY_NAME["MODEL_FIGURES"]
    ids = figure_table_ids()
    top = 22
    b.dynamic_array(ws, f"A{top}", "MODEL_FIGURES", len(ids) + 1, len(fig.columns),
                    order=[fig.columns.index(c) for c in CALIBRATION_COLUMNS])
    col = {name: get_column_letter(i) for i, name in enumerate(CALIBRATION_COLUMNS, 1)}
    for c in range(1, len(fig.columns) + 1):       # formats persist under the spilled header
        cell = ws.cell(top, c)
        cell.font, cell.fill = HEADER_FONT, HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="center")
    first, last = top + 1, top + len(ids)
    widths = {"source": 24, "quantity": 18, "conditions": 30, "unit": 15, "published": 12, "model": 12,
              "relative_error": 14, "kind": 12, "accepted_low": 14, "accepted_high": 14, "within_tolerance": 17,
              "reason": 64, "id": 40}
    set_widths(ws, {col[k]: w for k, w in widths.items()})
    for name, fmt in (("published", "General"), ("model", "0.0000"), ("relative_error", "0.0%"),
                      ("accepted_low", F_BOUND), ("accepted_high", F_BOUND)):
        for r in range(first, last + 1):
            ws[f"{col[name]}{r}"].number_format = fmt
    for name in CALIBRATION_COLUMNS:
        for r in range(first, last + 1):
            ws[f"{col[name]}{r}"].alignment = WRAP_TOP
    for r in range(first, last + 1):   # LibreOffice shows a boolean as 1/0 without a boolean format
        ws[f"{col['within_tolerance']}{r}"].number_format = _BOOLEAN
    ws.row_dimensions[top].height = 30
    # row heights for the text the shipped table holds (Excel does not re-fit a row when a
    # formula's text changes): the conditions and the listed reasons of the figures
    misses = known_misses()
    for r, fid in enumerate(ids, first):
        f = figure(fid)
        cond = "; ".join(f"{k}={v}" for k, v in f.conditions.items() if v)
        lines = max(_row_lines(cond, widths["conditions"] - 4), _row_lines(misses.get(fid, ""), widths["reason"]),
                    _row_lines(fid, widths["id"] - 1))
        ws.row_dimensions[r].height = 13 * lines + 2
    ws.conditional_formatting.add(f"{col['within_tolerance']}{first}:{col['within_tolerance']}{last}", CellIsRule(
        operator="equal", formula=["0"], fill=PatternFill("solid", fgColor="FFC7CE"), font=Font(color="9C0006")))
    _model_vs_published(b, ws, CALIBRATION_COLUMNS, col, top, first, last)
    ws.freeze_panes = f"A{first}"
    print_setup(ws, f"A1:{get_column_letter(len(fig.columns))}{last}")
    ws.print_title_rows = f"{top}:{top}"


def _model_vs_published(b: Builder, ws, columns: tuple, col: dict, top: int, first: int, last: int):
    """The log-log chart of model against published above the figures table (the diagonal is agreement).

    Its two series are legacy array formulas right of the table (``columns`` wide, header row
    ``top``, figures in rows ``first`` to ``last``; ``col``: column letter by name).
    """
    x, y = get_column_letter(len(columns) + 2), get_column_letter(len(columns) + 3)
    ws[f"{x}{top}"], ws[f"{y}{top}"] = "published (chart)", "model (chart)"
    ws[f"{x}{top}"].font = ws[f"{y}{top}"].font = SERIES_FONT
    # one array formula per series (not a formula per row): a point where both values are
    # positive numbers, else #N/A, which the chart leaves out (a log axis cannot show <= 0);
    # the outer IF discards what the inner comparison gives for text (TRUE in Excel) or errors
    pub = f"{col['published']}{first}:{col['published']}{last}"
    mod = f"{col['model']}{first}:{col['model']}{last}"
    ok = f"ISNUMBER({pub})*ISNUMBER({mod})"
    b.native_array(ws, f"{x}{first}:{x}{last}", f"=IF({ok},IF(({pub}>0)*({mod}>0),{pub},NA()),NA())", "General")
    b.native_array(ws, f"{y}{first}:{y}{last}", f"=IF({ok},IF(({pub}>0)*({mod}>0),{mod},NA()),NA())", "General")
    ch = ScatterChart()
    ch.title = "Model vs published (each point one figure, in its own unit)"
    ch.style = 2
    ch.x_axis.title, ch.y_axis.title = "published", "model"
    ch.height, ch.width = 8.5, 26.0          # within rows 4-21: above the table's header row, legend included
    ch.display_blanks = "gap"
    xs = Reference(ws, min_col=len(columns) + 2, min_row=first, max_row=last)
    pts = Series(Reference(ws, min_col=len(columns) + 3, min_row=first, max_row=last), xs, title="figures")
    pts.marker.symbol, pts.marker.size = "circle", 6
    pts.marker.graphicalProperties = GraphicalProperties(solidFill="1F77B4")
    pts.marker.graphicalProperties.line.solidFill = "1F77B4"
    pts.graphicalProperties.line.noFill = True       # points only
    # the diagonal: the published values against themselves lie on y = x, in any order
    diag = Series(xs, xs, title="model = published")
    diag.marker.symbol = "none"
    diag.graphicalProperties.line.solidFill = "C00000"
    diag.graphicalProperties.line.width = 12700
    ch.series.extend([pts, diag])
    for ax in (ch.x_axis, ch.y_axis):
        ax.scaling.logBase = 10
        ax.numFmt = "General"
        ax.delete = False
    ch.legend.position = "b"
    ws.add_chart(ch, "A4")


def add_parameters(b: Builder):
    """The parameters in force (MODEL_PARAMETERS), one row each."""
    ws = b.wb.create_sheet("Parameters")
    ws["A1"] = "Model parameters in force"
    ws["A1"].font = TITLE_FONT
    ws["A2"] = ("MODEL_PARAMETERS(ParamsFile) (on the hidden Tables sheet) gives one row per parameter: its value, standard error "
                "(n/a where the fit holds it at a bound or it is derived), unit and sub-model.")
    ws["A2"].font = NOTE_FONT
    par = CATALOG_BY_NAME["MODEL_PARAMETERS"]
    doc = load_params()["parameters"]
    b.dynamic_array(ws, "A4", "MODEL_PARAMETERS", len(doc) + 1, len(par.columns))
    for c in range(1, len(par.columns) + 1):
        cell = ws.cell(4, c)
        cell.font, cell.fill = HEADER_FONT, HEADER_FILL
    widths = {"name": 26, "value": 14, "stderr": 14, "unit": 12, "submodel": 12, "description": 90}
    col = {name: get_column_letter(i) for i, name in enumerate(par.columns, 1)}
    set_widths(ws, {col[k]: w for k, w in widths.items()})
    for r, name in enumerate(sorted(doc), 5):
        ws[f"{col['value']}{r}"].number_format = ws[f"{col['stderr']}{r}"].number_format = "0.0000"
        for column in par.columns:
            ws[f"{col[column]}{r}"].alignment = WRAP_TOP if column == "description" else Alignment(
                vertical="top", horizontal="left" if column in ("name", "unit", "submodel") else None)
        ws.row_dimensions[r].height = 13 * _row_lines(doc[name].get("description", ""), widths["description"] + 4) + 2
    ws.freeze_panes = "A5"
    print_setup(ws, f"A1:{get_column_letter(len(par.columns))}{4 + len(doc)}")
    ws.print_title_rows = "4:4"
