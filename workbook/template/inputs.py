"""The Inputs sheet (named, validated input cells) and the hidden Lists sheet of its drop-downs."""

from __future__ import annotations

from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from ._builder import TITLE_FONT, NOTE_FONT, WRAP_TOP, Builder, header_row, print_setup, set_widths
from ._input_cells import INPUTS, MAY_BE_EMPTY

__all__ = ["add_lists", "add_inputs"]

_INPUT_FIRST_ROW = 5
_NOTE_CHARS = 85           # characters per line of the Inputs notes column (width 70)
_TOP = Alignment(vertical="top")


def add_lists(b: Builder) -> dict:
    """The hidden Lists sheet: one column per input with a drop-down; returns name -> list range."""
    ws = b.wb.create_sheet("Lists")
    refs = {}
    for col, inp in enumerate((i for i in INPUTS if i.choices), 1):
        letter = get_column_letter(col)
        ws.cell(1, col, inp.name).font = Font(bold=True)
        for r, v in enumerate(inp.choices, 2):
            ws.cell(r, col, int(v) if v.isdigit() else v)
        refs[inp.name] = f"Lists!${letter}$2:${letter}${1 + len(inp.choices)}"
        ws.column_dimensions[letter].width = max(12, max(len(v) for v in inp.choices) + 2)
    ws.sheet_state = "hidden"
    return refs


def add_inputs(b: Builder, list_refs: dict):
    """The Inputs sheet: one named, validated input cell per :data:`INPUTS` entry, at its default."""
    ws = b.wb.create_sheet("Inputs")
    ws["A1"] = "Inputs"
    ws["A1"].font = TITLE_FONT
    ws["A2"] = ("Orange cells are inputs; each has the defined name shown in column E. Defaults "
                "reproduce the measured configuration of the source documents.")
    ws["A2"].font = NOTE_FONT
    header_row(ws, 4, ["Input", "Value", "Unit", "Notes", "Name"])
    for row, inp in enumerate(INPUTS, _INPUT_FIRST_ROW):
        ws.cell(row, 1, inp.label).alignment = _TOP
        value = b.inputs[inp.name]
        cell = ws.cell(row, 2, value)
        cell.style = "Input"
        cell.number_format = inp.number_format
        cell.alignment = Alignment(horizontal="left" if isinstance(value, str) else "right",
                                   vertical="top")
        ws.cell(row, 3, inp.unit).alignment = _TOP
        ws.cell(row, 4, inp.note).alignment = WRAP_TOP
        lines = -(-len(inp.note) // _NOTE_CHARS)
        if lines > 1:      # wrapped notes get the height they need instead of overlapping
            ws.row_dimensions[row].height = 15 * lines
        ws.cell(row, 5, inp.name).font = NOTE_FONT
        ws.cell(row, 5).alignment = _TOP
        ref = f"Inputs!$B${row}"
        b.wb.defined_names[inp.name] = DefinedName(inp.name, attr_text=ref)
        dv = _data_validation(inp, list_refs)
        if dv is not None:
            dv.showErrorMessage = True
            dv.showInputMessage = True
            ws.add_data_validation(dv)
            dv.add(cell)
    last = _INPUT_FIRST_ROW + len(INPUTS) - 1
    set_widths(ws, {"A": 38, "B": 44, "C": 16, "D": 70, "E": 16})
    ws.freeze_panes = "A5"
    print_setup(ws, f"A1:E{last}")


def _data_validation(inp, list_refs: dict) -> DataValidation | None:
    """The data validation of input ``inp``: its drop-down list or its domain; None for neither."""
    if inp.choices:
        dv = DataValidation(type="list", formula1=f"={list_refs[inp.name]}", allow_blank=False,
                            showDropDown=False)  # False = show the arrow (OOXML quirk)
        dv.error = f"Choose one of: {', '.join(inp.choices)}"[:225]
        dv.errorTitle = inp.label[:32]
        dv.prompt = inp.note[:255]
        dv.promptTitle = inp.label[:32]
    elif inp.validation:
        kind, op, f1, f2 = inp.validation
        dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2,
                            allow_blank=inp.name in MAY_BE_EMPTY)
        what = "a whole number" if inp.domain.integer else "a number"
        dv.error = f"{inp.label}: {what} {inp.domain.text()}. {inp.note}"[:225]
        dv.errorTitle = "cryptoplan input"
        dv.prompt = inp.note[:255]
        dv.promptTitle = inp.label[:32]
    else:
        dv = None
    return dv
