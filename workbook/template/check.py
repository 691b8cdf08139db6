"""The Check sheet: a self-test of the add-in, Erlang C from native Excel functions beside ``ERLANGC``."""

from __future__ import annotations

from ._builder import NOTE_FONT, TITLE_FONT, WRAP_TOP, Builder, Cell, header_row, print_setup, set_widths

__all__ = ["CHECK_PAIRS", "add_check"]

#: (traffic in erlangs, servers) of the Check sheet's rows.
CHECK_PAIRS = ((0.5, 1), (2.0, 3), (9.0, 10), (8.0, 10), (25.0, 30), (45.0, 50), (80.0, 90),
               (150.0, 160))


def add_check(b: Builder):
    """The Check sheet: Erlang C from native POISSON.DIST beside the add-in's ERLANGC, per :data:`CHECK_PAIRS`."""
    ws = b.wb.create_sheet("Check")
    ws["A1"] = "Check: Erlang C in native Excel functions vs the add-in"
    ws["A1"].font = TITLE_FONT
    ws["A2"] = ("Erlang B = POISSON.DIST(c,A,FALSE)/POISSON.DIST(c,A,TRUE); "
                "Erlang C = B/(1-(A/c)(1-B)). The difference column should be ~1e-12 "
                "when the add-in is loaded.")
    ws["A2"].font, ws["A2"].alignment = NOTE_FONT, WRAP_TOP
    ws.merge_cells("A2:G2")                 # wrapped within the printed columns, not cut at the page edge
    ws.row_dimensions[2].height = 30
    header_row(ws, 4, ["Traffic A (erlangs)", "Servers c", "Utilization A/c",
                       "Erlang B (native)", "Erlang C (native)", "ERLANGC (add-in)",
                       "Add-in minus native"])
    for i, (a, c) in enumerate(CHECK_PAIRS, 5):
        ws.cell(i, 1, a).style = "Input"
        ws.cell(i, 1).number_format = "0.00"
        ws.cell(i, 2, c).style = "Input"
        ws.cell(i, 2).number_format = "0"
        b.native(ws, f"C{i}", f"=A{i}/B{i}", "0.0%")
        b.native(ws, f"D{i}", f"=_xlfn.POISSON.DIST(B{i},A{i},FALSE)/_xlfn.POISSON.DIST(B{i},A{i},TRUE)",
                 "0.000000000000")
        b.native(ws, f"E{i}", f"=D{i}/(1-(A{i}/B{i})*(1-D{i}))", "0.000000000000")
        b.udf(ws, f"F{i}", "ERLANGC", Cell(f"A{i}"), Cell(f"B{i}"), number_format="0.000000000000")
        b.native(ws, f"G{i}", f'=IF(ISNUMBER(F{i}),F{i}-E{i},"add-in value missing")', "0.0E+00")
    last = 4 + len(CHECK_PAIRS)
    set_widths(ws, {"A": 18, "B": 11, "C": 15, "D": 20, "E": 20, "F": 20, "G": 22})
    ws.freeze_panes = "A5"
    print_setup(ws, f"A1:G{last}")
