"""The whole system: the Workloads sheet a planner fills in and the Plan sheet computed from it.

``Workloads`` holds the System block (defined name ``PlanSystem``: key, value) and the
Workloads table (``PlanWorkloads``: a row per workload, the columns its kind takes), with
example rows; :mod:`cryptoplan.workbook.plan_sheet` and ``cryptoplan plan`` read the same
two ranges.  ``Plan`` shows PLAN_RESOURCES and PLAN_WORKLOADS over them, utilization month by
month (PLAN_VALUE), and the stacked utilization and growth charts.
"""

from __future__ import annotations

from openpyxl.chart import BarChart, Reference, Series
from openpyxl.chart.data_source import StrRef
from openpyxl.chart.series import SeriesLabel
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.pagebreak import Break

from cryptoplan.model import domains as D
from cryptoplan.model.params import KEY_TYPES, MODES, POLICIES
from cryptoplan.model.zos.ams import CARD_GENERATIONS
from cryptoplan.model.zos.plan import KINDS, RATE_UNITS, RESOURCE_COLUMNS, WORKLOAD_COLUMNS
from ._builder import (F_MS, F_PCT, F_RATIO, F_US, HEADER_FILL, HEADER_FONT, NOTE_FONT, WRAP_TOP, Builder, Cell,
                       Name, header_row, heading, print_setup, scatter_chart, set_widths, titled_sheet)
from ._input_cells import excel_validation

__all__ = ["PLAN_ROWS", "F_MONTHS", "add_workloads", "add_plan"]

# The System block's keys: the first five follow the Inputs sheet, the rest are the plan's own.
_PLAN_SYSTEM = (
    ("processors", "=Processors", "General processors of the LPAR (Inputs: Processors)."),
    ("coprocessors", "=Coprocessors", "Crypto Express coprocessors (Inputs: Coprocessors)."),
    ("accelerators", "=Accelerators", "Crypto Express accelerators (Inputs: Accelerators)."),
    ("platform", "=Platform", "Machine generation (Inputs: Platform)."),
    ("max_utilization", "=MaxUtilization", "Target of every resource (Inputs: MaxUtilization)."),
    ("card_generation", "CEX8S", "CEX6S, CEX7S or CEX8S."),
    ("other_coprocessor_util", 0.0, "Share of each shared coprocessor other LPARs keep busy (their RMF)."),
    ("other_accelerator_util", 0.0, "Share of each shared accelerator other LPARs keep busy."),
    ("horizon_months", 12, "Months ahead for the counts required at the horizon."),
    ("max_wait_ms", None, "Optional: mean queueing per card request (ms) the counts required also meet."),
)
# The Workloads table: every key a kind takes, grouped by kind; a few example rows to start from.
_PLAN_COLUMNS = ("name", "kind", "rate", "growth_per_year", "policy", "key_type", "key_size", "message_kb",
                 "key_reuse", "recipients", "queue_manager", "flow", "mode", "cipher", "sslrkeyc", "resumed_share", "fips",
                 "card_mode", "sysplex_tickets", "cpu_us", "address_space", "card", "exec_ms", "utilization")
_PLAN_EXAMPLE = (
    {"name": "payments", "kind": "ams", "rate": 150, "growth_per_year": 0.25, "policy": "privacy",
     "key_type": "RSA", "key_size": 2048, "message_kb": 2},
    {"name": "statements", "kind": "ams", "rate": 100, "growth_per_year": 0.1, "policy": "integrity",
     "key_type": "RSA", "key_size": 2048, "message_kb": 64},
    {"name": "audit", "kind": "ams", "rate": 300, "policy": "confidentiality", "key_reuse": 32, "message_kb": 2},
    {"name": "to-partner", "kind": "channel", "rate": 2000, "growth_per_year": 0.15, "mode": "ATTLS",
     "cipher": "TLS_AES_256_GCM_SHA384", "message_kb": 2},
    {"name": "cics-https", "kind": "handshakes", "rate": 100, "growth_per_year": 0.2,
     "cipher": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "resumed_share": 0.6},
    {"name": "restart-storm", "kind": "channel_starts", "rate": 10, "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"},
)
WORKLOADS_PRINT_SCALE = 45     # %: the wider half of the Workloads table fits A4 landscape
PLAN_ROWS = 20                 # workload rows of the table (empty ones are skipped)
_PLAN_HEAD = 16                # the Workloads table's header row
_PLAN_SYSTEM_FIRST = 5
PLAN_TABLE_TOP = 14            # the Plan sheet's PLAN_WORKLOADS header row
_PLAN_MONTHS = tuple(range(0, 37, 3))
F_MONTHS = '0.0 "months"'
#: The Workloads table's column letters by key.
_COL = {name: get_column_letter(i) for i, name in enumerate(_PLAN_COLUMNS, 1)}


# ------------------------------------------------------------------ Workloads
def add_workloads(b: Builder):
    """The Workloads sheet: the System block (PlanSystem) and the Workloads table (PlanWorkloads)."""
    ws = titled_sheet(b, "Workloads", "Workloads: everything that uses the cards and processors",
                      "One row per workload (kind: " + ", ".join(KINDS) + "); fill the columns its kind takes, "
                      "leave the rest empty. rate: " + "; ".join(f"{k} in {u}" for k, u in RATE_UNITS.items())
                      + ". The Plan sheet and the Results sheet's last section compute from this sheet "
                      "(cryptoplan plan reads it too).", "L")
    _system_block(b, ws)
    first, last = _workloads_table(b, ws)
    widths = {c: max(11, len(k) + 3) for k, c in _COL.items()}
    widths.update({_COL["name"]: 16, _COL["kind"]: 15, _COL["cipher"]: 40, _COL["policy"]: 16})
    set_widths(ws, {**widths, "A": 22, "C": 16})
    ws.column_dimensions["C"].width = 16
    ws.freeze_panes = f"C{first}"
    # Two pages wide, readable: the common and AMS columns, then the other kinds' columns, each
    # page with the name and kind
    print_setup(ws, f"A1:{_COL[_PLAN_COLUMNS[-1]]}{last}", scale=WORKLOADS_PRINT_SCALE)
    ws.col_breaks.append(Break(id=_PLAN_COLUMNS.index("flow") + 1))
    ws.print_title_cols = "A:B"


def _system_block(b: Builder, ws):
    """The System block (PlanSystem): a key and value per row, the Inputs sheet's own by formula, validated."""
    heading(ws, 4, "System (PlanSystem): key, value")
    for r, (key, value, note) in enumerate(_PLAN_SYSTEM, _PLAN_SYSTEM_FIRST):
        ws.cell(r, 1, key)
        cell = ws.cell(r, 2, value)
        if isinstance(value, str) and value.startswith("="):
            b.native(ws, f"B{r}", value)
        else:
            cell.style = "Input"
        ws.cell(r, 3, note).font = NOTE_FONT
        ws.cell(r, 2).alignment = Alignment(horizontal="right")
    last_sys = _PLAN_SYSTEM_FIRST + len(_PLAN_SYSTEM) - 1
    b.wb.defined_names["PlanSystem"] = DefinedName("PlanSystem", attr_text=f"Workloads!$A${_PLAN_SYSTEM_FIRST}:$B${last_sys}")
    for r, fmt in ((_PLAN_SYSTEM_FIRST + 4, "0%"), (_PLAN_SYSTEM_FIRST + 6, "0%"), (_PLAN_SYSTEM_FIRST + 7, "0%")):
        ws.cell(r, 2).number_format = fmt
    gen = DataValidation(type="list", formula1='"' + ",".join(CARD_GENERATIONS) + '"', allow_blank=False)
    share = DataValidation(type="decimal", operator="between", formula1="0", formula2="0.99", allow_blank=False)
    horizon = DataValidation(type="decimal", operator="between", formula1="0", formula2="1200", allow_blank=False)
    wait = DataValidation(type="decimal", operator="greaterThan", formula1="0", allow_blank=True)
    for dv, ref, text in ((gen, f"B{_PLAN_SYSTEM_FIRST + 5}", "CEX6S, CEX7S or CEX8S"),
                          (share, f"B{_PLAN_SYSTEM_FIRST + 6}:B{_PLAN_SYSTEM_FIRST + 7}", "a share from 0 to 99%"),
                          (horizon, f"B{_PLAN_SYSTEM_FIRST + 8}", "months, 0..1200"),
                          (wait, f"B{last_sys}", "ms > 0, or empty for no wait target")):
        dv.error, dv.errorTitle, dv.showErrorMessage = text, "System", True
        ws.add_data_validation(dv)
        dv.add(ref)


def _workloads_table(b: Builder, ws) -> tuple:
    """The Workloads table (PlanWorkloads): input cells, the example rows, validation, number formats.

    Returns
    -------
    (int, int)
        The first and last workload rows.
    """
    heading(ws, _PLAN_HEAD - 1, "Workloads (PlanWorkloads): a row each, empty rows skipped")
    header_row(ws, _PLAN_HEAD, _PLAN_COLUMNS)
    first, last = _PLAN_HEAD + 1, _PLAN_HEAD + PLAN_ROWS
    col = _COL
    for r in range(first, last + 1):
        for c in range(1, len(_PLAN_COLUMNS) + 1):
            ws.cell(r, c).style = "Input"
    for r, row in enumerate(_PLAN_EXAMPLE, first):
        for key, value in row.items():
            ws[f"{col[key]}{r}"] = value
    b.wb.defined_names["PlanWorkloads"] = DefinedName(
        "PlanWorkloads", attr_text=f"Workloads!$A${_PLAN_HEAD}:${col[_PLAN_COLUMNS[-1]]}${last}")
    lists = {"kind": KINDS, "policy": POLICIES, "key_type": KEY_TYPES, "mode": MODES,
             "card_mode": ("coprocessor", "accelerator"), "address_space": ("TCPIP", "application"),
             "card": ("coprocessors", "accelerators", "processors"), "flow": ("request_reply", "one_way")}
    for key, choices in lists.items():
        dv = DataValidation(type="list", formula1='"' + ",".join(choices) + '"', allow_blank=True)
        dv.error, dv.errorTitle, dv.showErrorMessage = f"{key}: one of {', '.join(choices)}", "Workloads", True
        dv.prompt, dv.showInputMessage = f"{key}: one of {', '.join(choices)}", True
        ws.add_data_validation(dv)
        dv.add(f"{col[key]}{first}:{col[key]}{last}")
    for key, domain in (("rate", D.WORKLOAD_RATE), ("message_kb", D.MESSAGE_KB), ("recipients", D.RECIPIENTS),
                        ("resumed_share", D.RESUMED_SHARE), ("utilization", D.WORKLOAD_UTIL),
                        ("sslrkeyc", D.SSLRKEYC)):
        kind, op, f1, f2 = excel_validation(domain)
        dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2, allow_blank=True)
        dv.error = f"{key}: {'a whole number' if domain.integer else 'a number'} {domain.text()}"
        dv.errorTitle, dv.showErrorMessage = "Workloads", True
        ws.add_data_validation(dv)
        dv.add(f"{col[key]}{first}:{col[key]}{last}")
    for key, fmt in (("rate", "#,##0.0"), ("growth_per_year", "0%"), ("resumed_share", "0%"),
                     ("utilization", "0%"), ("message_kb", "#,##0.0")):
        for r in range(first, last + 1):
            ws[f"{col[key]}{r}"].number_format = fmt
    return first, last


# ------------------------------------------------------------------ Plan
def add_plan(b: Builder):
    """The Plan sheet: the whole system at the planned rates (PLAN_RESOURCES, PLAN_WORKLOADS) and as
    it grows (PLAN_VALUE over months), with the stacked utilization and growth charts."""
    n = Name
    ws = titled_sheet(b, "Plan", "Plan: every workload on the shared cards and processors",
                      "From the Workloads sheet. Utilization is RMF's (requests x EXEC TIME per card; CPU seconds "
                      "per second per processor). Headroom: the factor on every rate that reaches the target; "
                      "months to target: at each workload's growth_per_year.", "I")
    for r, (label, name, value, fmt, note) in enumerate((
            ("Growth factor", "PlanGrowth", 1.0, "0.00", "on every rate: 1 = the rates of the Workloads sheet"),
            ("Months ahead", "PlanMonths", 0.0, "0.0", "0 = now; each workload grows at its growth_per_year")), 4):
        ws.cell(r, 1, label)
        cell = ws.cell(r, 2, value)
        cell.style, cell.number_format = "Input", fmt
        ws.cell(r, 3, note).font = NOTE_FONT
        ws.cell(r, 3).alignment = Alignment(horizontal="left", indent=1)   # not run into the value
        b.wb.defined_names[name] = DefinedName(name, attr_text=f"Plan!$B${r}")
    args = (n("PlanWorkloads"), n("PlanSystem"), n("PlanGrowth"), n("PlanMonths"))
    top = PLAN_TABLE_TOP
    _plan_tables(b, ws, args, top)
    g0 = top + PLAN_ROWS + 3
    last = _growth_table(b, ws, g0)
    _plan_charts(b, ws, top, g0, last)
    set_widths(ws, {"A": 18, "B": 14, "C": 14, "D": 16, "E": 20, "F": 14, "G": 17, "H": 14, "I": 62})
    ws.freeze_panes = "A4"
    print_setup(ws, f"A1:I{last + 17}")
    ws.page_setup.fitToHeight = 1       # a manager prints it: one page


def _plan_tables(b: Builder, ws, args: tuple, top: int):
    """PLAN_RESOURCES (rows 8-11) and PLAN_WORKLOADS (from row ``top``) over ``args``, with their formats."""
    heading(ws, 7, "Resources")
    b.dynamic_array(ws, "A8", "PLAN_RESOURCES", 4, len(RESOURCE_COLUMNS), *args)
    for c in range(1, len(RESOURCE_COLUMNS) + 1):
        ws.cell(8, c).font, ws.cell(8, c).fill, ws.cell(8, c).alignment = HEADER_FONT, HEADER_FILL, WRAP_TOP
    ws.row_dimensions[8].height = 30
    rc = {k: get_column_letter(i) for i, k in enumerate(RESOURCE_COLUMNS, 1)}
    for r in range(9, 12):
        for key, fmt in (("utilization", F_PCT), ("headroom", F_RATIO), ("months_to_target", F_MONTHS),
                         ("wait_ms", F_MS)):
            ws[f"{rc[key]}{r}"].number_format = fmt
    heading(ws, top - 1, "Workloads: each one's share of each resource's utilization")
    b.dynamic_array(ws, f"A{top}", "PLAN_WORKLOADS", PLAN_ROWS + 1, len(WORKLOAD_COLUMNS), *args)
    for c in range(1, len(WORKLOAD_COLUMNS) + 1):
        ws.cell(top, c).font, ws.cell(top, c).fill, ws.cell(top, c).alignment = HEADER_FONT, HEADER_FILL, WRAP_TOP
    # rows past the last workload: #N/A where the table is shown at its full size (Calc, older
    # Excel); Excel 365 spills only the workloads.  Shown blank, and the chart's names skip them.
    ws.conditional_formatting.add(f"A{top + 1}:{get_column_letter(len(WORKLOAD_COLUMNS))}{top + PLAN_ROWS}",
                                  FormulaRule(formula=[f"ISNA(A{top + 1})"], font=Font(color="FFFFFF")))
    wc = {k: get_column_letter(i) for i, k in enumerate(WORKLOAD_COLUMNS, 1)}
    for r in range(top + 1, top + PLAN_ROWS + 1):
        for key, fmt in (("rate", "#,##0.0"), ("cpu_us", F_US), ("processors", F_PCT), ("coprocessors", F_PCT),
                         ("accelerators", F_PCT), ("queueing_ms", F_MS)):
            ws[f"{wc[key]}{r}"].number_format = fmt
        # the last column is as wide as the status text above it: its numbers sit under their header
        ws[f"{wc[WORKLOAD_COLUMNS[-1]]}{r}"].alignment = Alignment(horizontal="left")


def _growth_table(b: Builder, ws, g0: int) -> int:
    """Each resource's utilization month by month (PLAN_VALUE over a column of months) under header row ``g0``.

    Returns
    -------
    int
        The table's last row.
    """
    n = Name
    heading(ws, g0 - 1, "Growth: utilization months ahead, each workload at its growth_per_year")
    header_row(ws, g0, ["months", "processors", "coprocessors", "accelerators", "target"])
    for i, months in enumerate(_PLAN_MONTHS):
        r = g0 + 1 + i
        ws.cell(r, 1, months)
        for c, pool in enumerate(("processors", "coprocessors", "accelerators"), 2):
            b.udf(ws, f"{get_column_letter(c)}{r}", "PLAN_VALUE", n("PlanWorkloads"), n("PlanSystem"), pool,
                  "utilization", n("PlanGrowth"), Cell(f"A{r}"), number_format=F_PCT)
        b.native(ws, f"E{r}", "=MaxUtilization", F_PCT)
    return g0 + len(_PLAN_MONTHS)


def _plan_charts(b: Builder, ws, top: int, g0: int, last: int):
    """Stacked utilization by workload (from the spilled table at ``top``) and growth with the target line."""
    bar = BarChart()
    bar.type, bar.grouping, bar.overlap = "bar", "stacked", 100
    bar.title = "Utilization by workload"
    bar.height, bar.width = 7.5, 13.0
    cats = Reference(ws, min_col=6, max_col=8, min_row=top)
    for r in range(top + 1, top + PLAN_ROWS + 1):
        s = Series(Reference(ws, min_col=6, max_col=8, min_row=r), title_from_data=False)
        s.tx = SeriesLabel(strRef=StrRef(f"'Plan'!$J${r}"))
        bar.series.append(s)
        # the series name: a space past the last workload (an empty name, LibreOffice writes "Row N")
        b.native(ws, f"J{r}", f'=IF(A{r}="", " ", A{r})')
        ws[f"J{r}"].font = Font(color="FFFFFF")
    bar.set_categories(cats)
    bar.y_axis.numFmt, bar.y_axis.scaling.min = "0%", 0
    bar.x_axis.delete = bar.y_axis.delete = False
    bar.legend.position = "b"
    ws.add_chart(bar, f"G{g0}")
    x = Reference(ws, min_col=1, min_row=g0 + 1, max_row=last)
    series = [(f"'Plan'!${get_column_letter(c)}${g0}", Reference(ws, min_col=c, min_row=g0 + 1, max_row=last))
              for c in range(2, 6)]
    ws.add_chart(scatter_chart(ws, "Utilization as the workloads grow", "months ahead", "utilization", x, series,
                               y_fmt="0%"), f"A{last + 2}")
