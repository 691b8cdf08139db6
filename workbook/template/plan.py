"""The whole system: the Workloads sheet a planner fills in and the Plan sheet computed from it.

``Workloads`` holds the System block (defined name ``PlanSystem``: key, value) and the
Workloads table (``PlanWorkloads``: a row per workload, the columns its kind takes), with
example rows; :mod:`cryptoplan.workbook.plan_sheet` and ``cryptoplan plan`` read the same
two ranges.  ``Plan`` shows PLAN_RESOURCES and PLAN_WORKLOADS over them, utilization month by
month (PLAN_VALUE), and the stacked utilization and growth charts.
"""

from __future__ import annotations

from copy import copy

from openpyxl.chart import BarChart, Reference, Series
from openpyxl.chart.data_source import StrRef
from openpyxl.chart.series import SeriesLabel
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.chart.text import RichText, Text
from openpyxl.chart.title import Title
from openpyxl.drawing.text import CharacterProperties, Paragraph, ParagraphProperties, RegularTextRun
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import column_index_from_string, get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.page import PageMargins
from openpyxl.worksheet.pagebreak import Break

from cryptoplan.model import domains as D
from cryptoplan.model.params import KEY_TYPES, MODES, POLICIES
from cryptoplan.model.zos.ams import CARD_GENERATIONS
from cryptoplan.model.zos.plan import (KINDS, RATE_UNITS, RESOURCE_COLUMNS, TEXT_COLUMNS, TIMELINE_COLUMNS,
                                       WORKLOAD_COLUMNS)
from cryptoplan.model.zos.plan.bands import what_bands_hold
from cryptoplan.model.zos.plan.files import MIGRATION_KEYS, ORDER_KEYS
from cryptoplan.model.zos.quantum_safe import QS_TARGETS
from cryptoplan.model.zos.plan.inputs import FAILOVER_MODES, INSTALLABLE
from ._builder import (F_MS, F_PCT, F_RATIO, F_US, HEADER_FILL, HEADER_FONT, NOTE_FONT, SERIES_FONT, WRAP_TOP, Builder,
                       Cell, Expr, Name, header_row, heading, print_setup, scatter_chart, set_widths, shown,
                       titled_sheet)
from ._input_cells import excel_validation

__all__ = ["PLAN_ROWS", "F_MONTHS", "PLAN_ARGS", "PLAN_PROFILES", "add_workloads", "add_plan"]

# The System block's keys: the first five follow the Inputs sheet, the rest are the plan's own.
_PLAN_SYSTEM = (
    ("processors", "=Processors", "General processors of the LPAR (Inputs: Processors)."),
    ("coprocessors", "=Coprocessors", "Crypto Express coprocessors (Inputs: Coprocessors)."),
    ("accelerators", "=Accelerators", "Crypto Express accelerators (Inputs: Accelerators)."),
    ("platform", "=Platform", "Machine generation (Inputs: Platform)."),
    ("max_utilization", "=MaxUtilization", "Target of every resource at its peak interval (Inputs: MaxUtilization)."),
    ("card_generation", "CEX8S", "CEX6S, CEX7S or CEX8S."),
    ("other_coprocessor_util", 0.0, "Share of each shared coprocessor other LPARs keep busy (their RMF)."),
    ("other_accelerator_util", 0.0, "Share of each shared accelerator other LPARs keep busy."),
    ("other_coprocessor_cards", None, "Or: other LPARs' coprocessor work, cards' worth, that stays when cards are "
                                      "added (RMF's CPC minus LPAR, summed); the share above then 0."),
    ("other_accelerator_cards", None, "Or: other LPARs' accelerator work, cards' worth, that stays when cards are "
                                      "added."),
    ("horizon_months", 12, "Months ahead for the counts required at the horizon and the purchase timeline."),
    ("max_wait_ms", None, "Optional: mean queueing per card request (ms) the counts required also meet."),
    ("peak_day_factor", 1, "The busiest day of the year over the average day (1 to 100): every rate of the plan's "
                           "day is multiplied by it."),
    ("failover", "one_card", "one_card: every card pool stays within failover_max_utilization with one card out; "
                             "none: not checked."),
    ("failover_max_utilization", 0.9, "The utilization a card pool may reach with one of its cards failed."),
    ("site_failover_factor", 1, "The other site's share arriving (1 to 100): a factor on the workloads marked "
                                "site_failover."),
    ("lead_time_months", 6, "Months from ordering a card (or processor capacity) to having it installed."),
    ("msu_per_processor", None, "Optional: MSU of one processor at full use; the processors' demand is also "
                                "given in MSU."),
    ("start", None, "Optional: the calendar month of month 0, as YYYY-MM (e.g. 2027-01): each order and "
                    "install month is also given as a calendar month."),
)
#: The System block's first row; its rows by key.
_PLAN_SYSTEM_FIRST = 5
SYSTEM_ROW = {key: r for r, (key, _, _) in enumerate(_PLAN_SYSTEM, _PLAN_SYSTEM_FIRST)}
# The Workloads table: the keys every kind takes (a day's profile or window, site failover), then
# every key a kind takes, grouped by kind; a few example rows to start from.
_PLAN_COLUMNS = ("name", "kind", "rate", "rate_low", "rate_high", "growth_per_year", "growth_low", "growth_high",
                 "profile", "start", "duration_minutes", "site_failover", "peak_day", "policy", "key_type", "key_size",
                 "message_kb", "key_reuse", "recipients", "queue_manager", "flow",
                 "mode", "cipher", "sslrkeyc", "ends", "resumed_share", "fips", "card_mode", "sysplex_tickets",
                 "cpu_us", "address_space", "card", "exec_ms", "utilization", "connection_cpu_us")
_PLAN_EXAMPLE = (
    {"name": "payments", "kind": "ams", "rate": 150, "growth_per_year": 0.25, "profile": "online",
     "site_failover": True, "policy": "privacy", "key_type": "RSA", "key_size": 2048, "message_kb": 2,
     "growth_low": 0.15, "growth_high": 0.4},
    {"name": "statements", "kind": "ams", "rate": 100, "growth_per_year": 0.1, "policy": "integrity",
     "key_type": "RSA", "key_size": 2048, "message_kb": 64},
    {"name": "audit", "kind": "ams", "rate": 300, "policy": "confidentiality", "key_reuse": 32, "message_kb": 2},
    {"name": "to-partner", "kind": "channel", "rate": 2000, "growth_per_year": 0.15, "profile": "online",
     "mode": "ATTLS", "cipher": "TLS_AES_256_GCM_SHA384", "message_kb": 2},
    {"name": "cics-https", "kind": "handshakes", "rate": 100, "growth_per_year": 0.2, "profile": "online",
     "cipher": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "resumed_share": 0.6},
    {"name": "restart-storm", "kind": "channel_starts", "rate": 10, "start": "07:00", "duration_minutes": 15,
     "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"},
)
#: The Profiles table's example: an online day, hourly factors from 00:00 (any scale: each
#: profile is divided by its mean, so a workload's rate stays its daily average).
_PROFILE_EXAMPLE = ("online", (2, 1, 1, 1, 1, 2, 4, 8, 10, 10, 9, 8, 8, 9, 9, 8, 6, 4, 3, 3, 2, 2, 2, 2))
WORKLOADS_PRINT_SCALE = 42     # %: each third of the Workloads table fits A4 landscape
PLAN_ROWS = 20                 # workload rows of the table (empty ones are skipped)
_PLAN_HEAD = _PLAN_SYSTEM_FIRST + len(_PLAN_SYSTEM) + 2     # the Workloads table's header row
PROFILE_COLUMNS = 5            # profiles the Profiles table has room for
PROFILE_HOURS = 24             # its rows: hourly factors (RMF INTVAL 60)
ORDER_ROWS = 6                 # rows of the Orders table (empty ones are skipped)
ORDERS_COLUMN = 2 + PROFILE_COLUMNS + 1     # the Orders table's first column: one after the Profiles table's
MIGRATION_ROWS = 6             # rows of the Migrations table (empty ones are skipped)
MIGRATIONS_COLUMN = ORDERS_COLUMN                # the Migrations table: under the Orders table
_PROFILE_HEAD = _PLAN_HEAD + PLAN_ROWS + 3                 # the Profiles table's header row
MIGRATIONS_HEAD = _PROFILE_HEAD + ORDER_ROWS + 4           # the Migrations table's: under the Orders table
_PLAN_MONTHS = 17              # points of the growth chart, from 0 to its last month
F_MONTHS = '0.0 "months"'
#: The Workloads table's column letters by key.
_COL = {name: get_column_letter(i) for i, name in enumerate(_PLAN_COLUMNS, 1)}
#: The named ranges a plan is read from (PLAN_* functions, ``cryptoplan plan``).
PLAN_ARGS = (Name("PlanWorkloads"), Name("PlanSystem"))
# the arguments after ParamsFile: the Profiles, Orders and Migrations tables (each came later)
PLAN_PROFILES = (Name("PlanProfiles"), Name("PlanOrders"), Name("PlanMigrations"))


# ------------------------------------------------------------------ Workloads
def add_workloads(b: Builder):
    """The Workloads sheet: the System block (PlanSystem), the Workloads table (PlanWorkloads) and the
    Profiles table (PlanProfiles)."""
    ws = titled_sheet(b, "Workloads", "Workloads: everything that uses the cards and processors",
                      "One row per workload (kind: " + ", ".join(KINDS) + "); fill the columns its kind takes, "
                      "leave the rest empty. rate: " + "; ".join(f"{k} in {u}" for k, u in RATE_UNITS.items())
                      + " (the daily average; with start and duration_minutes, the rate while it runs). peak_day: "
                      "FALSE for one the busiest day does not raise (empty: TRUE, FALSE for a window). rate_low/rate_high, "
                      "growth_low/growth_high: a forecast's 90% interval, drawn in the Plan sheet's bands. The Plan "
                      "sheet and the Results sheet's first section compute from this sheet (cryptoplan plan "
                      "reads it too).", _COL["peak_day"])
    ws.row_dimensions[2].height = 52        # the note wrapped over the first printed page's width
    _system_block(b, ws)
    first, last = _workloads_table(b, ws)
    p_last = _profiles_table(b, ws)
    widths = {c: max(10, len(k) + 2) for k, c in _COL.items()}
    widths.update({_COL["name"]: 16, _COL["kind"]: 15, _COL["cipher"]: 40, _COL["policy"]: 16,
                   **{_COL[k]: 12 for k in ("rate_low", "rate_high", "growth_low", "growth_high")}})
    # the Migrations table's "to" is wide enough for a signature and a hybrid key exchange
    # ("ML-DSA-65+X25519MLKEM768"); it shares its column with the Workloads table's
    to = get_column_letter(MIGRATIONS_COLUMN + 1)
    widths[to] = max(widths.get(to, 10), 30)
    set_widths(ws, {**widths, "A": 24, "C": 16})
    ws.freeze_panes = f"C{first}"
    # Three pages wide, readable: the columns every kind takes (with the forecast's ranges, the
    # System block and the Profiles table), the AMS columns, then the other kinds' columns, each
    # page with the name and kind (two pages held the table until the ranges came: no scale that
    # keeps the text readable fits the common and AMS columns on one page with them)
    print_setup(ws, f"A1:{_COL[_PLAN_COLUMNS[-1]]}{p_last}", scale=WORKLOADS_PRINT_SCALE)
    for last_on_page in ("peak_day", "flow"):
        ws.col_breaks.append(Break(id=_PLAN_COLUMNS.index(last_on_page) + 1))
    ws.print_title_cols = "A:B"


def _system_block(b: Builder, ws):
    """The System block (PlanSystem): a key and value per row, the Inputs sheet's own by formula, validated."""
    heading(ws, _PLAN_SYSTEM_FIRST - 1, "System (PlanSystem): key, value")
    for r, (key, value, note) in enumerate(_PLAN_SYSTEM, _PLAN_SYSTEM_FIRST):
        ws.cell(r, 1, key)
        cell = ws.cell(r, 2, value)
        if isinstance(value, str) and value.startswith("="):
            b.native(ws, f"B{r}", value)
        else:
            cell.style = "Input"
        ws.cell(r, 3, note).font = NOTE_FONT
        ws.cell(r, 3).alignment = Alignment(horizontal="left", indent=1)
        ws.cell(r, 2).alignment = Alignment(horizontal="right")
    last_sys = _PLAN_SYSTEM_FIRST + len(_PLAN_SYSTEM) - 1
    b.wb.defined_names["PlanSystem"] = DefinedName("PlanSystem", attr_text=f"Workloads!$A${_PLAN_SYSTEM_FIRST}:$B${last_sys}")
    row = SYSTEM_ROW
    for key in ("max_utilization", "other_coprocessor_util", "other_accelerator_util", "failover_max_utilization"):
        ws.cell(row[key], 2).number_format = "0%"
    ws.cell(row["start"], 2).number_format = "@"      # text: a typed 2027-01 stays a month, not a date
    gen = DataValidation(type="list", formula1='"' + ",".join(CARD_GENERATIONS) + '"', allow_blank=False)
    fail = DataValidation(type="list", formula1='"' + ",".join(FAILOVER_MODES) + '"', allow_blank=False)
    checks = [(gen, "card_generation", "CEX6S, CEX7S or CEX8S"),
              (fail, "failover", "one_card (each card pool survives one card failing) or none")]
    for key, domain, blank in (
            ("other_coprocessor_util", D.OTHER_LPAR_UTIL.narrowed(0.0, 0.99, hi_open=False), False),
            ("other_accelerator_util", D.OTHER_LPAR_UTIL.narrowed(0.0, 0.99, hi_open=False), False),
            ("other_coprocessor_cards", D.OTHER_LPAR_CARDS, True), ("other_accelerator_cards", D.OTHER_LPAR_CARDS, True),
            ("horizon_months", D.HORIZON_MONTHS, False), ("max_wait_ms", D.MAX_WAIT_MS, True),
            ("peak_day_factor", D.PEAK_DAY_FACTOR, False),
            ("failover_max_utilization", D.FAILOVER_MAX_UTILIZATION.narrowed(0.01, 0.99, lo_open=False,
                                                                              hi_open=False), False),
            ("site_failover_factor", D.SITE_FAILOVER_FACTOR, False),
            ("lead_time_months", D.LEAD_TIME_MONTHS, False),
            ("msu_per_processor", D.MSU_PER_PROCESSOR.narrowed(0.001, lo_open=False), True)):
        kind, op, f1, f2 = excel_validation(domain)
        dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2, allow_blank=blank)
        checks.append((dv, key, f"{key}: a number {domain.text()}" + (", or empty" if blank else "")))
    for dv, key, text in checks:
        dv.error, dv.errorTitle, dv.showErrorMessage = text, "System", True
        ws.add_data_validation(dv)
        dv.add(f"B{row[key]}")


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
        # a time of day stays the text "07:00" (a time-formatted cell would reach the add-in as a date)
        ws[f"{col['start']}{r}"].number_format = "@"
    for r, row in enumerate(_PLAN_EXAMPLE, first):
        for key, value in row.items():
            ws[f"{col[key]}{r}"] = value
    b.wb.defined_names["PlanWorkloads"] = DefinedName(
        "PlanWorkloads", attr_text=f"Workloads!$A${_PLAN_HEAD}:${col[_PLAN_COLUMNS[-1]]}${last}")
    p0 = get_column_letter(2)
    p1 = get_column_letter(1 + PROFILE_COLUMNS)
    lists = {"kind": KINDS, "policy": POLICIES, "key_type": KEY_TYPES, "mode": MODES,
             "card_mode": ("coprocessor", "accelerator"), "address_space": ("TCPIP", "application"),
             "card": ("coprocessors", "accelerators", "processors"), "flow": ("request_reply", "one_way"),
             "ends": ("local", "both"), "site_failover": ("TRUE", "FALSE"), "peak_day": ("TRUE", "FALSE")}
    for key, choices in lists.items():
        dv = DataValidation(type="list", formula1='"' + ",".join(choices) + '"', allow_blank=True)
        dv.error, dv.errorTitle, dv.showErrorMessage = f"{key}: one of {', '.join(choices)}", "Workloads", True
        dv.prompt, dv.showInputMessage = f"{key}: one of {', '.join(choices)}", True
        ws.add_data_validation(dv)
        dv.add(f"{col[key]}{first}:{col[key]}{last}")
    # a profile: one of the names over the Profiles table
    prof = DataValidation(type="list", formula1=f"${p0}${_PROFILE_HEAD}:${p1}${_PROFILE_HEAD}", allow_blank=True)
    prof.error = f"profile: a name over the Profiles table (row {_PROFILE_HEAD})"
    prof.errorTitle, prof.showErrorMessage = "Workloads", True
    prof.prompt, prof.showInputMessage = "A profile of the Profiles table below; empty: the rate all day", True
    ws.add_data_validation(prof)
    prof.add(f"{col['profile']}{first}:{col['profile']}{last}")
    start = DataValidation(type="textLength", operator="between", formula1="4", formula2="5", allow_blank=True)
    start.error = 'start: a time of day as HH:MM, e.g. 07:00 (with duration_minutes)'
    start.errorTitle, start.showErrorMessage = "Workloads", True
    start.prompt, start.showInputMessage = "HH:MM: the window starts then and lasts duration_minutes", True
    ws.add_data_validation(start)
    start.add(f"{col['start']}{first}:{col['start']}{last}")
    for key, domain in (("rate", D.WORKLOAD_RATE), ("message_kb", D.MESSAGE_KB), ("recipients", D.RECIPIENTS),
                        ("resumed_share", D.RESUMED_SHARE), ("utilization", D.WORKLOAD_UTIL),
                        ("sslrkeyc", D.SSLRKEYC), ("connection_cpu_us", D.CONNECTION_CPU_US),
                        ("rate_low", D.WORKLOAD_RATE), ("rate_high", D.WORKLOAD_RATE),
                        ("duration_minutes", D.DURATION_MINUTES.narrowed(1.0, lo_open=False))):
        kind, op, f1, f2 = excel_validation(domain)
        dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2, allow_blank=True)
        dv.error = f"{key}: {'a whole number' if domain.integer else 'a number'} {domain.text()}"
        dv.errorTitle, dv.showErrorMessage = "Workloads", True
        ws.add_data_validation(dv)
        dv.add(f"{col[key]}{first}:{col[key]}{last}")
    for key, fmt in (("rate", "#,##0.0"), ("growth_per_year", "0%"), ("resumed_share", "0%"),
                     ("rate_low", "#,##0.0"), ("rate_high", "#,##0.0"), ("growth_low", "0%"), ("growth_high", "0%"),
                     ("utilization", "0%"), ("message_kb", "#,##0.0"),
                     ("site_failover", '"TRUE";"TRUE";"FALSE"'),       # Calc shows a boolean as 1 otherwise
                     ("peak_day", '"TRUE";"TRUE";"FALSE"')):
        for r in range(first, last + 1):
            ws[f"{col[key]}{r}"].number_format = fmt
    return first, last


def _profiles_table(b: Builder, ws) -> int:
    """The Profiles table (PlanProfiles): a name over each column, 24 hourly factors under it.

    Returns
    -------
    int
        Its last row.
    """
    top = _PROFILE_HEAD
    heading(ws, top - 2, "Profiles (PlanProfiles): how a rate spreads over the day")
    note = ws.cell(top - 1, 1, "A name over each column, 24 hourly factors under it (RMF INTVAL 60; a 30- or "
                               "15-minute profile: use a plan file). Any scale: each profile is divided by its mean, "
                               "so a workload's rate stays its daily average. A workload names its profile.")
    note.font, note.alignment = NOTE_FONT, Alignment(wrap_text=True, vertical="top")
    ws.merge_cells(start_row=top - 1, start_column=1, end_row=top - 1, end_column=1 + PROFILE_COLUMNS)
    ws.row_dimensions[top - 1].height = 44
    last = top + PROFILE_HOURS
    ws.cell(top, 1, "hour from").font = HEADER_FONT
    ws.cell(top, 1).fill = HEADER_FILL
    for c in range(2, 2 + PROFILE_COLUMNS):
        for r in range(top, last + 1):
            ws.cell(r, c).style = "Input"
        ws.cell(top, c).font = Font(bold=True)
    for h in range(PROFILE_HOURS):
        ws.cell(top + 1 + h, 1, f"{h:02d}:00").alignment = Alignment(horizontal="right")
    name, factors = _PROFILE_EXAMPLE
    ws.cell(top, 2, name)
    for h, f in enumerate(factors):
        ws.cell(top + 1 + h, 2, f)
    p1 = get_column_letter(1 + PROFILE_COLUMNS)
    b.wb.defined_names["PlanProfiles"] = DefinedName("PlanProfiles", attr_text=f"Workloads!$B${top}:${p1}${last}")
    kind, op, f1, f2 = excel_validation(D.PROFILE_FACTOR)
    dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2, allow_blank=True)
    dv.error, dv.errorTitle, dv.showErrorMessage = f"a factor {D.PROFILE_FACTOR.text()}", "Profiles", True
    ws.add_data_validation(dv)
    dv.add(f"B{top + 1}:{p1}{last}")
    _orders_table(b, ws)
    _migrations_table(b, ws)
    return last


def _orders_table(b: Builder, ws) -> None:
    """The Orders table (PlanOrders), beside the Profiles table: servers already ordered, a row each
    (resource, count, arrives), which the plan's counts and timeline take in (issue 63)."""
    top, c0 = _PROFILE_HEAD, ORDERS_COLUMN
    ws.cell(top - 2, c0, "Orders (PlanOrders): servers ordered, not yet installed").font = copy(
        ws.cell(top - 2, 1).font)           # the Profiles heading's font
    note = ws.cell(top - 1, c0, "A row each: resource (processors, coprocessors or accelerators), count, and "
                                "arrives: months from the scenario, or a month YYYY-MM with the System block's "
                                "start. The counts and the timeline take them in after the installed ones.")
    note.font, note.alignment = NOTE_FONT, Alignment(wrap_text=True, vertical="top")
    ws.merge_cells(start_row=top - 1, start_column=c0, end_row=top - 1, end_column=_PLAN_COLUMNS.index("peak_day") + 1)
    header_row_at(ws, top, c0, ORDER_KEYS)
    last = top + ORDER_ROWS
    for r in range(top + 1, last + 1):
        for c in range(c0, c0 + len(ORDER_KEYS)):
            ws.cell(r, c).style = "Input"
        # (a general cell: a month typed as 3 is a number, one typed as 2027-12 a date, read as its month)
    first_col, last_col = get_column_letter(c0), get_column_letter(c0 + len(ORDER_KEYS) - 1)
    b.wb.defined_names["PlanOrders"] = DefinedName(
        "PlanOrders", attr_text=f"Workloads!${first_col}${top}:${last_col}${last}")
    res = DataValidation(type="list", formula1='"processors,coprocessors,accelerators"', allow_blank=True)
    res.error, res.errorTitle, res.showErrorMessage = "resource: processors, coprocessors or accelerators", \
        "Orders", True
    ws.add_data_validation(res)
    res.add(f"{first_col}{top + 1}:{first_col}{last}")
    count = get_column_letter(c0 + 1)
    dv = DataValidation(type="whole", operator="between", formula1="1", formula2=str(max(INSTALLABLE.values())),
                        allow_blank=True)
    dv.error, dv.errorTitle, dv.showErrorMessage = "count: a whole number of servers, 1 or more", "Orders", True
    ws.add_data_validation(dv)
    dv.add(f"{count}{top + 1}:{count}{last}")


def _migrations_table(b: Builder, ws) -> None:
    """The Migrations table (PlanMigrations), under the Orders table: quantum-safe migrations, a row
    each (workload, to, start, months, share), which every month of the plan follows (issue 65)."""
    top, c0 = MIGRATIONS_HEAD, MIGRATIONS_COLUMN
    ws.cell(top - 2, c0, "Migrations (PlanMigrations): quantum-safe; card times assumed").font = copy(
        ws.cell(_PROFILE_HEAD - 2, ORDERS_COLUMN).font)          # the Orders heading's font
    # (one line: the row is one of the Profiles table's hours, whose height the page's fit counts on)
    note = ws.cell(top - 1, c0, "to: ML-DSA-n, ML-KEM-n, X25519MLKEM768 or both (A+B); start, months; share (empty: all)")
    note.font, note.alignment = NOTE_FONT, Alignment(wrap_text=False, vertical="top")
    ws.merge_cells(start_row=top - 1, start_column=c0, end_row=top - 1, end_column=_PLAN_COLUMNS.index("peak_day") + 1)
    header_row_at(ws, top, c0, MIGRATION_KEYS)
    last = top + MIGRATION_ROWS
    for r in range(top + 1, last + 1):
        for c in range(c0, c0 + len(MIGRATION_KEYS)):
            ws.cell(r, c).style = "Input"
    first_col, last_col = get_column_letter(c0), get_column_letter(c0 + len(MIGRATION_KEYS) - 1)
    b.wb.defined_names["PlanMigrations"] = DefinedName(
        "PlanMigrations", attr_text=f"Workloads!${first_col}${top}:${last_col}${last}")
    # the names, and the pairs a site most often plans; another pair (A+B) is accepted with a warning
    # and checked when the plan is read
    listed = QS_TARGETS + ("ML-DSA-65+ML-KEM-768", "ML-DSA-65+X25519MLKEM768", "ML-DSA-87+ML-KEM-1024")
    to = DataValidation(type="list", formula1=f'"{",".join(listed)}"', allow_blank=True, errorStyle="warning")
    to.error = "to: ML-DSA-44/65/87, ML-KEM-512/768/1024, a hybrid group, or a signature and a key exchange joined by +"
    to.errorTitle, to.showErrorMessage = "Migrations", True
    ws.add_data_validation(to)
    col = get_column_letter(c0 + 1)
    to.add(f"{col}{top + 1}:{col}{last}")
    for j, (key, dom) in enumerate((("start", D.HORIZON_MONTHS), ("months", D.HORIZON_MONTHS),
                                    ("share", D.MIGRATED_SHARE)), 2):
        kind, op, f1, f2 = excel_validation(dom)
        dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2, allow_blank=True)
        dv.error, dv.errorTitle, dv.showErrorMessage = f"{key} {dom.text()}", "Migrations", True
        ws.add_data_validation(dv)
        letter = get_column_letter(c0 + j)
        dv.add(f"{letter}{top + 1}:{letter}{last}")


# ------------------------------------------------------------------ Plan
# The Plan sheet prints on two A4 landscape pages at PLAN_PRINT_SCALE (issue 63: it printed on one
# at about 5 pt).  Page 1, what a manager decides from: the scenario, verdicts and warnings, the
# resources, their bands and what to buy by when.  Page 2: the workloads in A..J, two rows each (the
# numbers, its name in its colour in the stacked chart; under them the rate in words, A..J merged),
# and right of them (K..N) the growth chart and the stacked utilization chart.  The grid is A..N (N
# the wide status column); O is a narrow column of single spaces that stops long text at the print
# area's edge; from Y on, not printed, the charts' data.
_TEXT_TOP = 7                  # PLAN_TEXT: the scenario, verdicts and warnings
TEXT_ROWS = 16
RESOURCES_TOP = _TEXT_TOP + TEXT_ROWS + 2
BANDS_TOP = RESOURCES_TOP + 5  # the resources' bands at PlanBandLevel (header row; its heading above)
_TIMELINE_TOP = BANDS_TOP + 5
TIMELINE_ROWS = 8
PLAN_TABLE_TOP = _TIMELINE_TOP + TIMELINE_ROWS + 3      # the PLAN_WORKLOADS header row
PAGE_BREAK_AFTER = PLAN_TABLE_TOP - 2                   # page 1 ends above the workloads' heading
_PLAN_LAST = PLAN_TABLE_TOP + 2 * PLAN_ROWS               # the last printed row
# Right of the workloads (K..N, rows of 15 pt under the 44-pt header): the growth chart from the
# header row, the stacked chart under it, and under that the legend of its two series that are no
# workload's (other LPARs, MQ MSTR).
_GROWTH_CM, _STACK_CM, _CHART_WIDTH_CM = 12.0, 7.6, 12.0
_STACK_ROW = PLAN_TABLE_TOP + 21
_LEGEND_TOP = _STACK_ROW + 16
#: The printed size in percent: the sheet's smallest font (11 pt, charts included) prints at >= 8 pt.
PLAN_PRINT_SCALE = 73
#: The smallest font size (points) on the Plan sheet's print area, cells and charts.
PLAN_MIN_FONT = 11
#: The resources table as the sheet shows it (as ``cryptoplan plan`` prints it), with its headers.
RESOURCES_SHOWN = (("resource", "resource"), ("installed", "installed"), ("utilization", "peak utilization"),
                   ("peak_interval", "peak at"), ("average_utilization", "day average"), ("wait_ms", "wait per request"),
                   ("required", "required"), ("headroom", "headroom"), ("months_to_target", "months to target"),
                   ("required_at_horizon", "required at horizon"), ("failover_utilization", "one card failed"),
                   ("failover_required", "required, one failed"), ("months_to_limit", "months to failover limit"),
                   ("status", "status"))
#: The workloads table as the sheet shows it.
WORKLOADS_SHOWN = (("name", "workload"), ("kind", "kind"), ("rate", "rate"), ("unit", "unit"),
                   ("peak_rate", "peak rate"), ("cpu_us", "CPU µs per unit (MSTR share in)"), ("processors", "processors"),
                   ("coprocessors", "coprocessors"), ("accelerators", "accelerators"),
                   ("queueing_ms", "queueing ms per unit"))
#: The workloads' rate in words: in the row under each workload's numbers, A..J merged.
MEANING_SHOWN = ("meaning", "the rate in words")
_DATA = 25                     # column Y: the charts' data, right of the print area
# Series colours of the stacked chart (its legend is drawn in cells beside it, in these colours):
# other LPARs, MQ MSTR, then one per workload row.
_COLOURS = ("A6A6A6", "595959", "4472C4", "ED7D31", "70AD47", "FFC000", "5B9BD5", "C00000", "7030A0", "00B0F0",
            "92D050", "FF66CC", "806000", "2F5597", "C55A11", "548235", "BF9000", "1F3864", "FF0000", "00B050",
            "7F7F7F", "B4C7E7")


def workload_row(i: int) -> int:
    """The Plan sheet's row of workload ``i``'s numbers (0-based; its rate in words is the row under)."""
    return PLAN_TABLE_TOP + 1 + 2 * i


def add_plan(b: Builder):
    """The Plan sheet: the whole system at the planned rates, judged at each resource's peak
    interval: the scenario, verdicts and warnings (PLAN_TEXT), the resources (PLAN_RESOURCES), what to
    buy by when (PLAN_TIMELINE), the workloads (PLAN_WORKLOADS), the growth chart (PLAN_VALUE over
    months, with the horizon and the order dates) and the stacked utilization chart, on two printed
    pages (the layout above :data:`PLAN_PRINT_SCALE`)."""
    n = Name
    ws = titled_sheet(b, "Plan", "Plan: every workload on the shared cards and processors",
                      "From the Workloads sheet, at each resource's peak interval of the busiest day. Utilization "
                      "is RMF's (requests x EXEC TIME per card; CPU seconds per second per processor). Headroom: "
                      "the factor on every rate that reaches the target; months: at each workload's "
                      "growth_per_year; one card failed: the pool with one card out.", "N")
    for r, (label, name, value, fmt, note) in enumerate((
            ("Growth factor", "PlanGrowth", 1.0, "0.00", "on every rate: 1 = the rates of the Workloads sheet"),
            ("Months ahead", "PlanMonths", 0.0, "0.0", "0 = now; each workload grows at its growth_per_year")), 4):
        ws.cell(r, 1, label)
        cell = ws.cell(r, 2, value)
        cell.style, cell.number_format = "Input", fmt
        ws.cell(r, 3, note).font = NOTE_FONT
        ws.cell(r, 3).alignment = Alignment(horizontal="left", indent=1)   # not run into the value
        b.wb.defined_names[name] = DefinedName(name, attr_text=f"Plan!$B${r}")
    _band_level_input(b, ws)
    args = (*PLAN_ARGS, n("PlanGrowth"), n("PlanMonths"))
    tops = _plan_tables(b, ws, args)
    _band_table(b, ws)
    months = _growth_table(b, ws, tops["timeline"])
    stack = _stack_data(b, ws, tops["resources"])
    _plan_charts(ws, months, stack)
    # each column as wide as its widest header word in bold (they wrap between words) and its
    # values; N the status (wrapped); A..J the workloads' rate in words (about 130 characters)
    widths = {"A": 17, "B": 13, "C": 12, "D": 13, "E": 10, "F": 11, "G": 13, "H": 15, "I": 15, "J": 11,
              "K": 10, "L": 10, "M": 11, "N": 31, "O": 1.5}
    set_widths(ws, widths)
    for r in range(1, _PLAN_LAST + 1):
        ws.cell(r, 15, " ")             # text stops here, at the print area's edge
    for r in range(PLAN_TABLE_TOP + 1, _PLAN_LAST + 1):
        ws.row_dimensions[r].height = 15    # the charts beside these rows are placed by them
    ws.freeze_panes = "A4"
    print_setup(ws, f"A1:N{_PLAN_LAST}", scale=PLAN_PRINT_SCALE)
    ws.row_breaks.append(Break(id=PAGE_BREAK_AFTER))
    ws.page_margins = PageMargins(left=0.3, right=0.3, top=0.35, bottom=0.35, header=0.12, footer=0.12)
    # page 1's rows as Excel sizes them (LibreOffice's default row is lower): what prints is what fits
    headings = {_TEXT_TOP - 1, RESOURCES_TOP - 1, BANDS_TOP - 1, _TIMELINE_TOP - 1}
    for r in range(1, PAGE_BREAK_AFTER + 1):
        if ws.row_dimensions[r].height is None:
            ws.row_dimensions[r].height = 21 if r == 1 else 16.5 if r in headings else 15


#: Where the band's level is typed (empty: no band).
BAND_LEVEL_CELL = "K4"
#: The band table's columns after the resource: (PLAN_BAND quantity, number format, what a draw whose
#: quantity is an error shows (months never reached, a count beyond an LPAR's), header).
BANDS_SHOWN = (("utilization", F_PCT, "peak utilization"),
               ("months_to_target", "0.0", "months to target"),
               ("required_at_horizon", "0", "required at horizon"))
#: The Band level the sheet accepts: BAND_LEVEL, its open ends closed for Excel's data validation.
BAND_LEVEL_INPUT = D.BAND_LEVEL.narrowed(0.01, 0.99, lo_open=False, hi_open=False)


def _band_level_input(b: Builder, ws):
    """The band's level (PlanBandLevel): empty by default, as ``cryptoplan plan`` without --bands (a
    band is a plan under 1,000 draws of the parameters: it costs a recalculation more than the rest)."""
    col = BAND_LEVEL_CELL.rstrip("0123456789")
    row = int(BAND_LEVEL_CELL[len(col):])
    ws.cell(row, column_index_from_string(col) - 1, "Band level").alignment = Alignment(horizontal="right")
    cell = ws[BAND_LEVEL_CELL]
    cell.style, cell.number_format = "Input", "0%"
    note = ws.cell(row, column_index_from_string(col) + 1, "e.g. 90%; empty: no bands")
    note.font = NOTE_FONT
    note.alignment = Alignment(horizontal="left", indent=1)
    b.wb.defined_names["PlanBandLevel"] = DefinedName("PlanBandLevel", attr_text=f"Plan!${col}${row}")
    kind, op, f1, f2 = excel_validation(BAND_LEVEL_INPUT)
    dv = DataValidation(type=kind, operator=op, formula1=f1, formula2=f2, allow_blank=True)
    dv.error, dv.errorTitle, dv.showErrorMessage = f"Band level: a fraction {BAND_LEVEL_INPUT.text()}", "Plan", True
    ws.add_data_validation(dv)
    dv.add(BAND_LEVEL_CELL)


def _band_table(b: Builder, ws):
    """Under the resources: each resource's band at PlanBandLevel (``PLAN_BAND`` at its two ends) of its
    peak utilization, months to target and count required at the horizon; blank without a level.

    A level that is not a number in (0, 1) is named in the heading, with its value and range, and every
    cell says ``#VALUE!`` (never ignored, never a band); a
    band end that is an error (months never reached, a count beyond an LPAR's) shows PLAN_BAND's own
    message."""
    n = Name
    top, level = BANDS_TOP, "PlanBandLevel"
    ok = f"AND(ISNUMBER({level}),{level}>0,{level}<1)"
    bad = (f'"#VALUE! Band level ({BAND_LEVEL_CELL}) must be a number in (0, 1), e.g. 90% (got "'
           f'&IF(ISNUMBER({level}),{level},"text "&{level})&")"')
    heading(ws, top - 1, "")
    shown = (f'"How sure: the "&TEXT({level},"0%")&" band of each answer over 1,000 draws of the '
             f'model\'s parameters (Band level, {BAND_LEVEL_CELL})"')
    hint = (f'"How sure: type a Band level in {BAND_LEVEL_CELL} (e.g. 90%) for each answer\'s band over the '
            'model\'s parameter draws"')
    b.native(ws, f"A{top - 1}", f"=IF(ISBLANK({level}),{hint},IF({ok},{shown},{bad}))")
    labels = ["resource"] + [f"{label}, {end}" for *_, label in BANDS_SHOWN for end in ("low", "high")]
    _table_head(ws, top, labels, anchor_kept=False, lines=4)
    # what a band holds and how well bands covered: wrapped right of the band table, over its rows
    c0 = 2 + 2 * len(BANDS_SHOWN)
    note = ws.cell(top, c0, what_bands_hold())
    note.font, note.alignment = NOTE_FONT, Alignment(wrap_text=True, vertical="top", indent=1)
    ws.merge_cells(start_row=top, start_column=c0, end_row=top + 3, end_column=len(RESOURCES_SHOWN))
    lo, hi = f"(1-{level})/2", f"(1+{level})/2"
    for i in range(3):
        r, src = top + 1 + i, RESOURCES_TOP + 1 + i
        b.native(ws, f"A{r}", f'=IF(ISBLANK({level}),"",A{src})')
        for j, (quantity, fmt, _) in enumerate(BANDS_SHOWN):
            for k, q in enumerate((lo, hi)):
                call = b.call("PLAN_BAND", *PLAN_ARGS[:2], Cell(f"A{src}"), quantity, Expr(q), n("PlanGrowth"),
                              n("PlanMonths"), after=PLAN_PROFILES)
                b.native(ws, f"{get_column_letter(2 + 2 * j + k)}{r}",
                         f'=IF(OR(ISBLANK({level}),LEN(A{src})=0),"",IF({ok},{call},"#VALUE!"))', fmt)
                ws.cell(r, 2 + 2 * j + k).alignment = Alignment(horizontal="right")


def _table_head(ws, row: int, labels, anchor_kept: bool = True, lines: int = 3):
    """A shown table's header row, ``lines`` of bold 11 pt high: styled, its labels (all but the
    anchor, which shows the function's error if there is one) as the sheet names them."""
    for c, label in enumerate(labels, 1):
        cell = ws.cell(row, c)
        if c > 1 or not anchor_kept:
            cell.value = label
        cell.font, cell.fill, cell.alignment = HEADER_FONT, HEADER_FILL, WRAP_TOP
    ws.row_dimensions[row].height = 14.5 * lines + 0.5


def _text_rows(ws, first: int, last: int):
    """Rows of a one-column text table: its header row (the anchor, "text") invisible unless it is an
    error, and rows past the table's end blank."""
    hide = Font(color="FFFFFF")
    ws.conditional_formatting.add(f"A{first}", FormulaRule(formula=[f'A{first}="text"'], font=hide))
    ws.conditional_formatting.add(f"A{first + 1}:A{last}", FormulaRule(formula=[f"ISNA(A{first + 1})"], font=hide))


def _plan_tables(b: Builder, ws, args: tuple) -> dict:
    """PLAN_TEXT, PLAN_RESOURCES, PLAN_TIMELINE and PLAN_WORKLOADS over ``args``, with their formats.

    Returns
    -------
    dict
        Each table's first row on the Tables sheet (``text``, ``resources``, ``timeline``, ``workloads``).
    """
    tops = {}
    heading(ws, _TEXT_TOP - 1, "The plan in words: scenario, verdict at each resource's peak, warnings")
    tops["text"] = b.dynamic_array(ws, f"A{_TEXT_TOP}", "PLAN_TEXT", TEXT_ROWS + 1, len(TEXT_COLUMNS), *args,
                                   after=PLAN_PROFILES)
    _text_rows(ws, _TEXT_TOP, _TEXT_TOP + TEXT_ROWS)
    warn = Font(color="9C0006", bold=True)
    bad = Font(color="9C0006")
    for r in range(_TEXT_TOP + 1, _TEXT_TOP + TEXT_ROWS + 1):
        ws.conditional_formatting.add(f"A{r}", FormulaRule(formula=[f'LEFT(A{r},8)="Warning:"'], font=warn,
                                                           stopIfTrue=True))
        ws.conditional_formatting.add(f"A{r}", FormulaRule(
            formula=[f'OR(ISNUMBER(SEARCH("overloaded",A{r})),ISNUMBER(SEARCH("over the",A{r})),'
                     f'ISNUMBER(SEARCH("none is left",A{r})))'], font=bad))
        ws.cell(r, 1).alignment = Alignment(horizontal="left")

    top = RESOURCES_TOP
    heading(ws, top - 1, "Resources, each at its peak interval of the busiest day")
    order = [RESOURCE_COLUMNS.index(k) for k, _ in RESOURCES_SHOWN]
    tops["resources"] = b.dynamic_array(ws, f"A{top}", "PLAN_RESOURCES", 4, len(RESOURCE_COLUMNS), *args,
                                        order=order, after=PLAN_PROFILES)
    _table_head(ws, top, [label for _, label in RESOURCES_SHOWN])
    for r in range(top + 1, top + 4):
        ws.row_dimensions[r].height = 30        # two lines: the status wraps in its column
        for j, (key, _) in enumerate(RESOURCES_SHOWN, 1):
            fmt = {"utilization": F_PCT, "average_utilization": F_PCT, "failover_utilization": F_PCT,
                   "headroom": F_RATIO, "months_to_target": "0.0", "months_to_limit": "0.0",
                   "wait_ms": F_MS}.get(key)
            cell = ws.cell(r, j)
            if fmt:
                cell.number_format = fmt
            cell.alignment = Alignment(horizontal="left" if key in ("resource", "status") else "right",
                                       wrap_text=key == "status", vertical="top", indent=int(key == "status"))

    top = _TIMELINE_TOP
    heading(ws, top - 1, "What to buy, by when (months from the scenario; lead_time_months before each is needed)")
    tops["timeline"] = b.dynamic_array(ws, f"A{top}", "PLAN_TIMELINE", TIMELINE_ROWS + 1, len(TIMELINE_COLUMNS),
                                       *args, order=[TIMELINE_COLUMNS.index("text")], after=PLAN_PROFILES)
    # the table's header is "resource" (the anchor): shown as its sentences' title
    ws.cell(top, 1).font = Font(bold=True, color="1F3864")
    b.native(ws, f"A{top}", _anchor_or(f"Tables!A{tops['timeline']}", "purchases, earliest order first:"))
    first = f"Tables!A{tops['timeline'] + 1}"
    horizon = f"Workloads!$B${SYSTEM_ROW['horizon_months']}"
    b.native(ws, f"A{top + 1}", f'=IF(ISERROR(Tables!A{tops["timeline"]}),"",IF(OR(ISERROR({first}),'
                                f'ISBLANK({first})),"nothing to add within the "&{horizon}&"-month horizon",'
                                f'{_value_of(_timeline_text_cell(tops))}))')
    for r in range(top + 1, top + TIMELINE_ROWS + 1):
        ws.conditional_formatting.add(f"A{r}", FormulaRule(formula=[f'LEFT(A{r},9)="order now"'],
                                                           font=Font(color="9C0006", bold=True)))

    top = PLAN_TABLE_TOP
    heading(ws, top - 1, "Workloads: each one's share of each resource's utilization at that resource's peak")
    order = [WORKLOAD_COLUMNS.index(k) for k, _ in WORKLOADS_SHOWN]
    tops["workloads"] = b.dynamic_array(ws, f"A{top}", "PLAN_WORKLOADS", PLAN_ROWS + 1, len(WORKLOAD_COLUMNS),
                                        *args, order=order, after=PLAN_PROFILES, row_step=2)
    _table_head(ws, top, [label for _, label in WORKLOADS_SHOWN], lines=4)
    meaning = WORKLOAD_COLUMNS.index(MEANING_SHOWN[0])
    last = get_column_letter(len(WORKLOADS_SHOWN))
    for i in range(PLAN_ROWS):
        r = workload_row(i)
        for j, (key, _) in enumerate(WORKLOADS_SHOWN, 1):
            fmt = {"rate": "#,##0.0", "peak_rate": "#,##0.0", "cpu_us": F_US, "processors": F_PCT,
                   "coprocessors": F_PCT, "accelerators": F_PCT, "queueing_ms": F_MS}.get(key)
            if fmt:
                ws.cell(r, j).number_format = fmt
        # the name in its colour in the stacked chart (the chart's legend); a long one wraps
        colour = _COLOURS[2 + i]
        ws.conditional_formatting.add(f"A{r}", FormulaRule(
            formula=[f"LEN($A${r})>0"], fill=PatternFill(start_color=colour, end_color=colour, fill_type="solid"),
            font=Font(bold=True, color=_ink_on(colour))))
        ws.cell(r, 1).alignment = Alignment(wrap_text=True, vertical="top")
        # under the numbers: the rate in words, over the table's width
        b.native(ws, f"A{r + 1}", shown(tops["workloads"], 1 + i, meaning))
        ws.cell(r + 1, 1).alignment = Alignment(horizontal="left", indent=1)
        ws.cell(r + 1, 1).font = Font(name="Calibri", size=PLAN_MIN_FONT, italic=True, color="404040")
        ws.merge_cells(f"A{r + 1}:{last}{r + 1}")
    return tops


def _ink_on(fill: str) -> str:
    """Black or white, whichever reads better on the colour ``fill`` (RRGGBB): by its luminance
    (ITU-R BT.601 weights)."""
    r, g, b = (int(fill[k:k + 2], 16) for k in (0, 2, 4))
    return "000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "FFFFFF"


def _value_of(src: str) -> str:
    """Formula text: the value of a spilled cell, as :func:`~._builder.shown` shows it."""
    return f'IF(ISBLANK({src}),"",IF(ISLOGICAL({src}),N({src}),{src}))'


def _anchor_or(src: str, text: str) -> str:
    """A table's anchor cell shown as ``text``, or as the function's error where it has one."""
    return f'=IF(ISERROR({src}),{src},"{text}")'


def _growth_table(b: Builder, ws, timeline_top: int) -> dict:
    """The growth chart's data right of the print area: each resource's utilization month by month
    (PLAN_VALUE over a column of months to 1.25 horizons, at least 24), the target, the horizon
    and the order dates of the purchase timeline.

    Returns
    -------
    dict
        The ranges of the chart's series (rows and columns of its data).
    """
    n = Name
    c0 = _DATA
    col = {k: get_column_letter(c0 + i) for i, k in enumerate(("months", "processors", "coprocessors",
                                                                "accelerators", "target", "full"))}
    g0 = 4
    ws.cell(g0 - 1, c0, "Growth chart data (not printed): utilization at each resource's peak, months ahead").font = \
        SERIES_FONT
    header_row_at(ws, g0, c0, ["months", "processors", "coprocessors", "accelerators", "target", "100% (full)"])
    horizon = f"Workloads!$B${SYSTEM_ROW['horizon_months']}"
    h = f"IF(ISNUMBER({horizon}),{horizon},12)"
    for i in range(_PLAN_MONTHS):
        r = g0 + 1 + i
        b.native(ws, f"{col['months']}{r}", f"=ROUND({i}*MAX(24,1.25*{h})/{_PLAN_MONTHS - 1},2)", "0.0")
        for pool in ("processors", "coprocessors", "accelerators"):
            b.udf(ws, f"{col[pool]}{r}", "PLAN_VALUE", *PLAN_ARGS, pool, "utilization", n("PlanGrowth"),
                  Cell(f"{col['months']}{r}"), number_format=F_PCT, after=PLAN_PROFILES)
        b.native(ws, f"{col['target']}{r}", "=MaxUtilization", F_PCT)
        ws[f"{col['full']}{r}"] = 1
        ws[f"{col['full']}{r}"].number_format = F_PCT
    last = g0 + _PLAN_MONTHS
    # the horizon: a vertical line from 0 to the top of the data (100% at least; the y axis scales
    # to the data, so a resource above 100% is drawn, issue 63)
    hz = last + 2
    ws.cell(hz, c0, "horizon").font = SERIES_FONT
    b.native(ws, f"{get_column_letter(c0 + 1)}{hz}", f'="horizon ("&{h}&" months)"')
    for i in range(2):
        b.native(ws, f"{col['months']}{hz + 1 + i}", f"={h}", "0.0")
    ws.cell(hz + 1, c0 + 1, 0).number_format = F_PCT
    b.native(ws, f"{get_column_letter(c0 + 1)}{hz + 2}",
             f"=MAX(1,{col['processors']}{g0 + 1}:{col['accelerators']}{last})", F_PCT)
    # the order dates: a marker on the axis at each purchase's order month (#N/A: no purchase, a gap)
    od = hz + 4
    ws.cell(od, c0, "order by").font = SERIES_FONT
    ws.cell(od, c0 + 1, "order by (timeline)")
    k = TIMELINE_COLUMNS.index("order_by_month")
    for i in range(TIMELINE_ROWS):
        src = f"Tables!{get_column_letter(k + 1)}{timeline_top + 1 + i}"
        b.native(ws, f"{col['months']}{od + 1 + i}", f"=IF(ISNUMBER({src}),{src},{h})", "0.0")
        b.native(ws, f"{get_column_letter(c0 + 1)}{od + 1 + i}", f"=IF(ISNUMBER({src}),0,NA())", F_PCT)
    return {"col": col, "first": g0 + 1, "last": last, "head": g0, "horizon": hz, "orders": od}


def header_row_at(ws, row: int, c0: int, labels):
    """A header row from column ``c0``."""
    for c, text in enumerate(labels, c0):
        cell = ws.cell(row, c, text)
        cell.font, cell.fill = HEADER_FONT, HEADER_FILL


def _stack_data(b: Builder, ws, resources_top: int) -> dict:
    """The stacked chart's series right of the print area (other LPARs, MQ MSTR administration, one
    per workload row: its shares of each resource) and its legend in cells beside the chart: a
    swatch in the series' colour and the name, only where there is a workload (or a share).

    Returns
    -------
    dict
        The rows and columns of the series.
    """
    c0 = _DATA + 6
    r0 = 4
    ws.cell(r0 - 1, c0, "Stacked chart data (not printed): each one's share of each resource at its peak").font = \
        SERIES_FONT
    header_row_at(ws, r0, c0, ["series", "processors", "coprocessors", "accelerators"])
    name, p, c, a = (get_column_letter(c0 + i) for i in range(4))
    k = RESOURCE_COLUMNS.index("other")
    other = {pool: f"Tables!{get_column_letter(k + 1)}{resources_top + 1 + i}"
             for i, pool in enumerate(("processors", "coprocessors", "accelerators"))}
    # other LPARs (cards) and MQ MSTR administration (processors): the table's utilization less the workloads'
    r = r0 + 1
    b.native(ws, f"{name}{r}", f'="other LPARs (coprocessors "&TEXT(N({other["coprocessors"]}),"0.0%")&'
                               f'", accelerators "&TEXT(N({other["accelerators"]}),"0.0%")&")"')
    ws[f"{p}{r}"] = 0
    b.native(ws, f"{c}{r}", f"=N({other['coprocessors']})", F_PCT)
    b.native(ws, f"{a}{r}", f"=N({other['accelerators']})", F_PCT)
    r += 1
    b.native(ws, f"{name}{r}", f'="MQ MSTR administration (processors "&TEXT(N({other["processors"]}),"0.0%")&")"')
    b.native(ws, f"{p}{r}", f"=N({other['processors']})", F_PCT)
    ws[f"{c}{r}"] = 0
    ws[f"{a}{r}"] = 0
    col_of = {k: get_column_letter(j) for j, (k, _) in enumerate(WORKLOADS_SHOWN, 1)}
    for i in range(PLAN_ROWS):
        r = r0 + 3 + i
        src = workload_row(i)
        b.native(ws, f"{name}{r}", f'=IF(LEN({col_of["name"]}{src})>0,{col_of["name"]}{src},"")')
        for dst, pool in ((p, "processors"), (c, "coprocessors"), (a, "accelerators")):
            b.native(ws, f"{dst}{r}", f"=N({col_of[pool]}{src})", F_PCT)
    last = r0 + 2 + PLAN_ROWS
    # the legend, in cells under the chart: a swatch (K) and the name (L) of other LPARs and MQ MSTR
    # (each workload's colour is its name's in the workloads table)
    ws.cell(_LEGEND_TOP, 11, "Also in the chart above:").font = Font(bold=True, color="1F3864")
    for i, r in enumerate(range(r0 + 1, r0 + 3)):
        lr = _LEGEND_TOP + 1 + i
        b.native(ws, f"L{lr}", f'={name}{r}')
        ws.cell(lr, 11).fill = PatternFill(start_color=_COLOURS[i], end_color=_COLOURS[i], fill_type="solid")
    return {"name": name, "cols": (p, c, a), "first": r0 + 1, "last": last, "head": r0}


def _plan_charts(ws, g: dict, st: dict):
    """The growth chart (each resource's peak as the workloads grow, the target, the horizon, the
    order dates) and the stacked utilization chart (each workload's share, other LPARs and MQ
    MSTR: what the resources table's utilization adds up to), right of the tables."""
    col = g["col"]
    cx = column_index_from_string(col["months"])
    x = Reference(ws, min_col=cx, min_row=g["first"], max_row=g["last"])
    series = [(f"'Plan'!${col[k]}${g['head']}", Reference(ws, min_col=column_index_from_string(col[k]),
                                                             min_row=g["first"], max_row=g["last"]))
              for k in ("processors", "coprocessors", "accelerators", "target", "full")]
    ch = scatter_chart(ws, "Growth: each resource's peak utilization, months ahead", "months ahead",
                       "utilization", x, series, y_fmt="0%")
    target = ch.series[3]
    target.marker.symbol = "none"
    target.graphicalProperties.line.dashStyle = "dash"
    target.graphicalProperties.line.solidFill = "000000"
    full = ch.series[4]                     # 100%: where a resource is overloaded
    full.marker.symbol = "none"
    full.graphicalProperties.line.solidFill = "404040"
    full.graphicalProperties.line.width = 9525
    hz = g["horizon"]
    s = Series(Reference(ws, min_col=cx + 1, min_row=hz + 1, max_row=hz + 2),
               Reference(ws, min_col=cx, min_row=hz + 1, max_row=hz + 2), title_from_data=False)
    s.tx = SeriesLabel(strRef=StrRef(f"'Plan'!${get_column_letter(cx + 1)}${hz}"))
    s.marker.symbol = "none"
    s.smooth = False
    s.graphicalProperties.line.solidFill = "7F7F7F"
    s.graphicalProperties.line.dashStyle = "dashDot"
    s.graphicalProperties.line.width = 25400
    ch.series.append(s)
    od = g["orders"]
    o = Series(Reference(ws, min_col=cx + 1, min_row=od + 1, max_row=od + TIMELINE_ROWS),
               Reference(ws, min_col=cx, min_row=od + 1, max_row=od + TIMELINE_ROWS), title_from_data=False)
    o.tx = SeriesLabel(strRef=StrRef(f"'Plan'!${get_column_letter(cx + 1)}${od}"))
    o.marker.symbol, o.marker.size = "triangle", 10
    o.marker.graphicalProperties = GraphicalProperties(solidFill="C00000")
    o.marker.graphicalProperties.line.solidFill = "C00000"
    o.graphicalProperties.line.noFill = True
    o.smooth = False
    ch.series.append(o)
    # no fixed maximum: the axis scales to the data (it was 100%, and a resource above it was not drawn)
    ch.height, ch.width = _GROWTH_CM, _CHART_WIDTH_CM
    _print_sized(ch)
    ws.add_chart(ch, f"K{PLAN_TABLE_TOP}")

    bar = BarChart()
    bar.type, bar.grouping, bar.overlap = "bar", "stacked", 100
    bar.title = "Utilization by workload at each resource's peak"
    bar.height, bar.width = _STACK_CM, _CHART_WIDTH_CM
    p, c, a = st["cols"]
    first_col = column_index_from_string(p)
    cats = Reference(ws, min_col=first_col, max_col=first_col + 2, min_row=st["head"])
    for i, r in enumerate(range(st["first"], st["last"] + 1)):
        s = Series(Reference(ws, min_col=first_col, max_col=first_col + 2, min_row=r), title_from_data=False)
        s.tx = SeriesLabel(strRef=StrRef(f"'Plan'!${st['name']}${r}"))
        s.graphicalProperties.solidFill = _COLOURS[i]
        s.graphicalProperties.line.noFill = True
        bar.series.append(s)
    bar.set_categories(cats)
    bar.y_axis.numFmt, bar.y_axis.scaling.min = "0%", 0
    bar.x_axis.delete = bar.y_axis.delete = False
    bar.legend = None                   # drawn in cells beside it: only the series that are there
    _print_sized(bar)
    ws.add_chart(bar, f"K{_STACK_ROW}")


def _text_of(size: float, bold: bool = False) -> RichText:
    """A chart text's properties: ``size`` points."""
    cp = CharacterProperties(sz=round(size * 100), b=bold)
    return RichText(p=[Paragraph(pPr=ParagraphProperties(defRPr=cp), endParaRPr=cp)])


def _title_of(text: str, size: float, bold: bool) -> Title:
    """A chart or axis title ``text`` at ``size`` points."""
    cp = CharacterProperties(sz=round(size * 100), b=bold)
    para = Paragraph(pPr=ParagraphProperties(defRPr=cp), r=[RegularTextRun(rPr=cp, t=text)])
    return Title(tx=Text(rich=RichText(p=[para])), overlay=False)


def _title_text(title) -> str:
    """The plain text of an openpyxl chart or axis title (as the chart builders set it)."""
    return "".join(r.t for p in title.tx.rich.p for r in (p.r or []))


def _print_sized(ch) -> None:
    """Every text of chart ``ch`` (title, axis titles and labels, legend) at PLAN_MIN_FONT points or
    more, so it prints at >= 8 pt at PLAN_PRINT_SCALE (a chart's default text is 10 pt)."""
    ch.title = _title_of(_title_text(ch.title), PLAN_MIN_FONT + 1, bold=True)
    for axis in (ch.x_axis, ch.y_axis):
        axis.txPr = _text_of(PLAN_MIN_FONT)
        if axis.title is not None:
            axis.title = _title_of(_title_text(axis.title), PLAN_MIN_FONT, bold=True)
    if ch.legend is not None:
        ch.legend.txPr = _text_of(PLAN_MIN_FONT)


def _timeline_text_cell(tops) -> str:
    """The Tables sheet's cell of the purchase timeline's first text line."""
    return "Tables!" + get_column_letter(TIMELINE_COLUMNS.index("text") + 1) + str(tops["timeline"] + 1)
