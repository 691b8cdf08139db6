"""The template planning workbook (``cryptoplan template -o planner.xlsx``).

The workbook is written with openpyxl.  Every result is a formula calling a
cryptoplan Excel function (:mod:`cryptoplan.addin.udfs`) over the named input cells, so
it recalculates in Windows Excel once the functions are imported through the
xlwings add-in (docs/spreadsheets.md, "Excel on Windows").  Sheets:

``Guide``        how to use the workbook, what the error texts mean
``Inputs``       named, validated input cells (Excel's "Input" style)
``Results``      throughput, CPU per transaction by address space, card
                 utilization and queueing delay, cards required, bottleneck
``What-if``      the installed cards up to their limit, cards required as the rate grows, RSA key
                 size; scatter charts (number axes)
``Calibration``  ``=MODEL_FIGURES(ParamsFile)`` (dynamic array) and a model-vs-published chart
``Parameters``   ``=MODEL_PARAMETERS(ParamsFile)`` (dynamic array)
``Site RMF``     the RMF Crypto Hardware Activity lines a planner types in, for ``calibrate``
``Check``        Erlang C from native ``POISSON.DIST`` beside ``=ERLANGC()``
``xlwings.conf`` ``UDF MODULES = cryptoplan.addin.udfs`` for the xlwings add-in
``Lists``        (hidden) the drop-down lists, taken from :mod:`cryptoplan.model.params`

How formulas are stored
    A VBA-backed function (what xlwings' *Import Functions* creates) is
    stored in the file under its plain name, ``ERLANGC(A5,B5)``; Excel 2010+
    functions need the ``_xlfn.`` prefix in the file (``_xlfn.POISSON.DIST``).
    A dynamic-array (spilling) formula is stored as an array formula
    (``<f t="array" ref=...>``) whose cell carries ``cm="1"`` pointing to the
    ``XLDAPR`` cell-metadata record in ``xl/metadata.xml`` (what Excel 365
    and XlsxWriter write); without it Excel 365 shows the formula as
    ``=@MODEL_FIGURES()`` and returns one value.  openpyxl 3.1 cannot write
    cell metadata, so :func:`_add_dynamic_array_metadata` adds it to the
    saved package.  Older Excel reads the same cell as a classic array formula
    over ``ref`` (sized from the current model tables).

Rendering the charts without Excel
    ``cryptoplan template -o planner.xlsx --png out/`` also writes one PNG per
    chart sheet (:data:`CHART_SHEETS`): a *values snapshot* of that sheet
    (:func:`snapshot`: each formula replaced by what the formula engine of
    ``cryptoplan recalc`` computes for the default inputs; the builder itself
    computes nothing) is converted to PDF by LibreOffice
    (``soffice --headless --convert-to pdf``) and its first page rasterised by
    ``pdftoppm -png``.  A chart point whose source is an error is ``#N/A``,
    which Excel and LibreOffice both leave as a gap in a scatter chart.
"""

from __future__ import annotations

import io
import math
import re
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from xml.etree import ElementTree
from pathlib import Path

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.chart.data_source import StrRef
from openpyxl.chart.series import SeriesLabel
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.formatting.rule import CellIsRule, FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.formula import ArrayFormula

from cryptoplan import model
from cryptoplan.addin.catalog import CATALOG
from cryptoplan.model import domains as D
from cryptoplan.model.domains import Domain, number_text
from cryptoplan.model.figures import figure
from cryptoplan.model.params import CIPHERS, ECC_KEY_SIZES, KEY_TYPES, MODES, POLICIES, RSA_KEY_SIZES
from cryptoplan.model.zos.tls import PLATFORMS as TLS_PLATFORMS
from .engine import OutputError, atomic_target
from .engine.atomic import check_destination

__all__ = [
    "TEMPLATE_DEFAULTS", "INPUTS", "MAX_UTILIZATION_CELL", "excel_validation", "CHART_SHEETS", "input_defaults",
    "build_workbook", "evaluated_values",
    "snapshot",
    "write_template", "render_pngs",
]

# Inputs that the source documents' measured configuration does not fix (the
# rest -- cards, key, message size, requesters, policy -- come from
# model.defaults(), which reads them from data/figures.csv).  Replace an entry
# here when model.defaults() starts providing it.
TEMPLATE_DEFAULTS = {
    "TxRate": 1000.0,          # transactions/s: a planning target, not a measurement
    "KeyReuse": None,          # empty: integrity and privacy do not reuse keys
    "Recipients": 1,
    "Mode": "ATTLS",           # channel results: the cipher with the most published
    "Cipher": "TLS_CHACHA20_POLY1305_SHA256",  # measurements (round trips, CPU) in data/
    "SSLRKEYC": 0,             # as measured: no secret-key renegotiation
    "Platform": "z16",         # the newest machine with published TLS figures
    "ChannelPairs": 10,        # channel pairs between the two queue managers: a planning input
    "MaxUtilization": 0.7,     # common planning ceiling for Crypto Express
    "MaxWaitMs": None,         # empty: no queueing-delay target
    "ParamsFile": None,        # empty: the packaged fit (or $CRYPTOPLAN_PARAMS's file)
}

# Inputs a planner may leave empty (their functions' defaults apply).
_MAY_BE_EMPTY = frozenset(k for k, v in TEMPLATE_DEFAULTS.items() if v is None)

CHART_SHEETS = ("Plan", "What-if", "Calibration")
_CATALOG = {f.name: f for f in CATALOG}
_KEY_SIZES = tuple(RSA_KEY_SIZES) + tuple(ECC_KEY_SIZES)


def excel_validation(domain: Domain) -> tuple:
    """``(type, operator, formula1, formula2)`` of the Excel data validation stating ``domain``.

    ``whole`` for whole-number domains, else ``decimal``; ``between`` for two bounds (Excel
    includes both), ``greaterThan(OrEqual)`` or ``lessThan(OrEqual)`` for one.  A decimal
    domain with two bounds of which one is excluded has no Excel form: narrow it to a closed
    one first (:meth:`cryptoplan.model.domains.Domain.narrowed`), saying why.
    """
    lo, hi = domain.bounds()
    kind = "whole" if domain.integer else "decimal"
    lo_open, hi_open = domain.lo_open, domain.hi_open
    if domain.integer:              # an excluded bound of whole numbers is the next whole number
        if lo is not None:
            lo, lo_open = (math.floor(lo) + 1.0 if lo_open else math.ceil(lo)), False
        if hi is not None:
            hi, hi_open = (math.ceil(hi) - 1.0 if hi_open else math.floor(hi)), False
    if lo is not None and hi is not None:
        if lo_open or hi_open:
            raise ValueError(f"{domain.name} {domain.text()}: Excel's between includes both bounds; "
                             "narrow the domain to a closed one for the data validation")
        return kind, "between", number_text(lo), number_text(hi)
    if hi is None:
        return kind, "greaterThan" if lo_open else "greaterThanOrEqual", number_text(lo), None
    return kind, "lessThan" if hi_open else "lessThanOrEqual", number_text(hi), None


@dataclass(frozen=True)
class _Input:
    name: str                  # defined name
    label: str
    unit: str
    number_format: str
    note: str
    choices: tuple = ()        # drop-down list (Lists sheet)
    domain: Domain | None = None   # numbers: what the cell's data validation accepts

    @property
    def validation(self) -> tuple:
        """(type, operator, formula1, formula2) of the cell's data validation; () for none."""
        return () if self.domain is None else excel_validation(self.domain)


# The model's planning ceiling is the open (0, 1), which Excel's inclusive "between" cannot
# state; the cell shows whole percents, so it accepts the whole percents inside: 1%..99%.
MAX_UTILIZATION_CELL = D.MAX_UTILIZATION.narrowed(0.01, 0.99, lo_open=False, hi_open=False)

INPUTS = (
    _Input("TxRate", "Transaction rate (request/reply)", "transactions/s", "#,##0.0",
           "Planned peak rate of AMS request/reply transactions.", domain=D.PLANNED_TX_RATE),
    _Input("MessageKB", "Message size", "KB", "#,##0.0",
           f"1 MB = 1024 KB; {D.MESSAGE_KB.text()}; round trip and channel throughput: "
           f"{D.ROUNDTRIP_MESSAGE_KB.text()} (the published sizes).", domain=D.MESSAGE_KB),
    _Input("Policy", "AMS policy", "", "@", "integrity: sign; privacy: sign + encrypt; "
           "confidentiality: encrypt (with key reuse).", choices=tuple(POLICIES)),
    _Input("KeyType", "Certificate key type", "", "@",
           "NISTECC supports the integrity policy only.", choices=tuple(KEY_TYPES)),
    _Input("KeySize", "Certificate key size", "bits", "0",
           "RSA 1024-4096, NISTECC 192-521.", choices=tuple(str(s) for s in _KEY_SIZES)),
    _Input("KeyReuse", "Key reuse (confidentiality only)", "messages", "#,##0",
           "Leave empty for integrity and privacy; a whole number or the text unlimited."),
    _Input("Recipients", "Recipients per message", "recipients", "0",
           "One key_encrypt per recipient (privacy, confidentiality).", domain=D.RECIPIENTS),
    _Input("Requesters", "Parallel requesters", "requesters", "0",
           "Each has one request outstanding (closed loop): drives the throughput result.",
           domain=D.REQUESTERS),
    _Input("Coprocessors", "Crypto Express coprocessors (CCA mode)", "cards", "0",
           "Cards in coprocessor mode available to the LPAR.", domain=D.CARDS),
    _Input("Accelerators", "Crypto Express accelerators", "cards", "0",
           "Cards in accelerator mode available to the LPAR.", domain=D.CARDS),
    _Input("Processors", "General processors (CPs) of the LPAR", "processors", "0",
           "CPs serving the AMS work: they carry its CPU at TxRate and bound the closed-loop rate.",
           domain=D.PROCESSORS),
    _Input("MaxUtilization", "Utilization ceiling per card", "%", "0%",
           "Target for the cards-required results, e.g. 70%.", domain=MAX_UTILIZATION_CELL),
    _Input("MaxWaitMs", "Queueing-delay ceiling per transaction", "ms", "0.000",
           "Optional target for the cards-required results; empty for none.", domain=D.MAX_WAIT_MS),
    _Input("Mode", "MQ channel protection", "", "@",
           "none, SSLCIPH (MQ TLS) or ATTLS (AT-TLS).", choices=tuple(MODES)),
    _Input("Cipher", "Cipher (IBM name)", "", "@",
           "Used with Mode for the channel results.", choices=tuple(CIPHERS)),
    _Input("SSLRKEYC", "SSLCIPH secret-key reset (SSLRKEYC)", "bytes", "#,##0",
           "0 = never (as measured); SSLCIPH only: renegotiation CPU is added to CHIN.",
           domain=D.SSLRKEYC),
    _Input("Platform", "Machine generation (AMS CPU, channel results)", "", "@",
           "z14, z15 or z16. AMS CPU: the published z14->z15 cost ratios; channels: the z15 "
           "costs (z16 uses z15's for both, none being published for z16); channel starts: "
           "the z15 or z16 column of the start table (none for z14).",
           choices=tuple(TLS_PLATFORMS)),
    _Input("ChannelPairs", "Channel pairs (request/reply)", "pairs", "#,##0",
           "Sender-receiver channel pairs between the two queue managers, each with one "
           "requester: drives the channel throughput.", domain=D.CHANNEL_PAIRS),
    _Input("SSLTASKS", "SSL tasks per channel initiator (SSLTASKS)", "tasks", "0",
           "SSLCIPH encryption runs on these; channels are spread over them.", domain=D.SSLTASKS),
    _Input("CHIDISPS", "Dispatchers per channel initiator (CHIDISPS)", "tasks", "0",
           "Network sends and receives run on these; channels are spread over them.", domain=D.DISPATCHERS),
    _Input("ParamsFile", "Parameter file (calibration)", "", "@",
           "Empty: the packaged fit. A file written by cryptoplan calibrate or fit: full path, "
           "or relative to this workbook's folder. Every result and the Calibration sheet use it."),
)
_INPUT_FIRST_ROW = 5
_NOTE_CHARS = 85           # characters per line of the Inputs notes column (width 70)

# Number formats of results (unit in the format, so printed numbers carry it).
F_TPS = '#,##0.0 "txn/s"'
F_US = '#,##0.0 "µs"'
F_PCT = "0.0%"
F_MS = '0.0000 "ms"'
F_CARDS = '[=1]0 "card";0 "cards"'
F_CPS = '[=1]0 "CP";0 "CPs"'
F_RATIO = '0.00"x"'
F_STARTS = '#,##0.0 "starts/s"'

_TITLE = Font(size=16, bold=True, color="1F3864")
_HEAD = Font(bold=True, color="FFFFFF")
_HEAD_FILL = PatternFill("solid", fgColor="1F3864")
_SECTION = Font(bold=True, size=12, color="1F3864")
_NOTE = Font(italic=True, color="595959")
_WRAP = Alignment(wrap_text=True, vertical="top")
_TOP = Alignment(vertical="top")


def input_defaults() -> dict:
    """Default input values: ``model.defaults()`` (measured configuration) + :data:`TEMPLATE_DEFAULTS`."""
    values = dict(TEMPLATE_DEFAULTS)
    measured = model.defaults()
    values.update({k: v for k, v in measured.items() if k in {i.name for i in INPUTS}})
    missing = [i.name for i in INPUTS if i.name not in values]
    if missing:  # pragma: no cover - guarded by tests
        raise KeyError(f"no default for inputs {missing}")
    return values


# ------------------------------------------------------------------ builder
class _Name(str):
    """A reference to a defined name (rendered bare)."""


class _Cell(str):
    """A same-sheet cell reference like ``A5``."""


class _Omitted:
    """An argument left out of a formula (``F(a,,c)``): the function's default."""

    def __str__(self) -> str:
        return ""


_OMITTED = _Omitted()


def _literal(value) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


class _Builder:
    """Writes the workbook's formulas; it computes nothing.

    ``formulas[(sheet, coord)]`` records each formula written and ``dynamic_arrays``
    the spilling ones.  What a formula evaluates to is the formula engine's business
    (:func:`snapshot` evaluates a built workbook with :mod:`cryptoplan.workbook.recalculation`).
    """

    def __init__(self):
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
        if isinstance(arg, _Name) and str(arg) in _MAY_BE_EMPTY:
            return f'IF(ISBLANK({arg}),"",{arg})'
        return str(arg) if isinstance(arg, (_Name, _Cell, _Omitted)) else _literal(arg)

    @staticmethod
    def _with_params(name: str, args: tuple) -> tuple:
        """``args`` ending in the ParamsFile input when the function takes a parameter file."""
        k = _CATALOG[name].params_arg
        if k is None:
            return args
        return (*args, *[_OMITTED] * (k - len(args)), _Name("ParamsFile"))

    def udf(self, ws, coord: str, name: str, *args, number_format: str | None = None):
        """Write ``=NAME(args)`` to ``coord``.

        A function that evaluates with a parameter file gets the ``ParamsFile`` input as its
        last argument (arguments between left out: their defaults).
        """
        args = self._with_params(name, args)
        self.uses.update((str(a), name, arg.name) for a, arg in zip(args, _CATALOG[name].args)
                         if isinstance(a, _Name))
        self.native(ws, coord, f"={name}({','.join(self._render(a) for a in args)})", number_format)

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

    def dynamic_array(self, ws, coord: str, name: str, height: int, width: int, *args):
        """A spilling table function of ``args`` (header row + ``height - 1`` rows), shown at ``coord``.

        The spilling formula itself stands on the hidden sheet ``Tables`` (its own block of
        rows, ``height`` x ``width`` being the range older Excel shows); the cells at ``coord``
        are plain references to it.  LibreOffice recomputes every array formula of an xlsx file
        on load, so without the Calc add-in an array formula over a cryptoplan function shows
        ``#NAME?`` even in a recalculated copy that carries its values; a plain formula keeps
        the value the copy carries (issue 33).  Given ParamsFile if the function takes it.
        """
        args = self._with_params(name, args)
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
        for i in range(height):
            for j in range(width):
                src = f"Tables!{get_column_letter(1 + j)}{t_top + i}"
                self.native(ws, f"{get_column_letter(left + j)}{top + i}", _shown(src, anchor=i == j == 0))

    def _tables_sheet(self):
        """The hidden sheet ``Tables`` holding the spilling table functions (created on first use)."""
        if "Tables" not in self.wb.sheetnames:
            ws = self.wb.create_sheet("Tables")
            ws.sheet_state = "hidden"
            ws["A1"] = ("The table functions the Plan, Calibration and Parameters sheets show (they "
                        "reference these cells).")
            self._tables_next = 3
        return self.wb["Tables"]


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


def _heading(ws, row: int, text: str):
    ws.cell(row, 1, text).font = _SECTION


def _header_row(ws, row: int, labels):
    for c, text in enumerate(labels, 1):
        cell = ws.cell(row, c, text)
        cell.font = _HEAD
        cell.fill = _HEAD_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="center")


def _widths(ws, widths: dict):
    for col, w in widths.items():
        ws.column_dimensions[col].width = w


def _page(ws, area: str, landscape: bool = True):
    ws.print_area = area
    ws.page_setup.orientation = "landscape" if landscape else "portrait"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.print_options.gridLines = False
    ws.oddFooter.center.text = "&A - page &P of &N"
    ws.oddHeader.left.text = "cryptoplan capacity planner"


# ------------------------------------------------------------------ sheets
def _guide(b: _Builder):
    ws = b.wb.active
    ws.title = "Guide"
    ws["A1"] = "cryptoplan capacity planner: z/OS crypto (Crypto Express, MQ AMS, MQ channel TLS)"
    ws["A1"].font = _TITLE
    text = [
        ("What it answers", "At the planned transaction rate and message size, with this AMS "
         "policy, certificate key and channel TLS setup: what throughput do the requesters get, "
         "what does a transaction cost in CPU, how busy are the Crypto Express cards and how "
         "many are needed to stay under the utilization and queueing-delay targets?"),
        ("1. Enable the functions", "Windows Excel with the xlwings add-in and cryptoplan "
         "installed (docs/spreadsheets.md, 'Excel on Windows'). Save this file as .xlsm "
         "(macro-enabled); in the VBA editor (Alt+F11) tick xlwings under Tools > References; "
         "click Import Functions in the xlwings ribbon (the sheet xlwings.conf already names the "
         "module cryptoplan.addin.udfs); press Ctrl+Alt+F9 to recalculate everything. #NAME? in a result "
         "means the functions are not imported yet."),
        ("2. Enter inputs", "Sheet Inputs: orange cells only. Drop-downs list the accepted "
         "policies, key types and sizes, channel modes and ciphers. Every input cell has a name "
         "(TxRate, MessageKB, Policy, ...) used by the formulas."),
        ("3. Read results", "Sheet Results: every number is a cryptoplan function over the "
         "named inputs. What-if: utilization and queueing delay as the rate grows to what the "
         "installed cards carry, the cards needed beyond it, RSA key sizes; with charts. "
         "Calibration: IBM's published measurements beside the model's values, with a chart. "
         "Parameters: the fitted parameters in force. Site RMF: your RMF crypto report's lines, for "
         "cryptoplan calibrate. Check: Erlang C from native Excel functions beside "
         "the add-in's ERLANGC, as a self-test."),
        ("Errors in cells", "A cryptoplan function never leaves a cell blank. Bad input shows "
         "'#VALUE! FUNCTION: message' naming the argument and the accepted range; a card or "
         "queue that cannot keep up shows '#NUM! FUNCTION: ...'. These are text (xlwings cannot "
         "return real Excel error values): arithmetic on them gives #VALUE!, and cryptoplan "
         "functions pass them on unchanged. Test with ISNUMBER(); charts use "
         "IF(ISNUMBER(x),x,NA()) so that failures show as gaps, not zeros."),
        ("Without Windows Excel", "Use the batch recalculation command 'cryptoplan recalc' "
         "(docs/batch.md) on this file, or call the same functions from Python: "
         "'from cryptoplan.addin.udfs import ERLANGC'."),
        ("Units", "Rates per second, times in ms or µs (CPU microseconds per transaction), "
         "message sizes in KB (1 MB = 1024 KB), key sizes in bits. The unit is part of each "
         "number's format."),
        ("Sources", "Model parameters are fitted to the IBM MQ for z/OS and z/OS Communications "
         "Server performance reports named on the Calibration sheet (column source, report and page). The input "
         "defaults reproduce the measured configuration: "
         f"{b.inputs['Coprocessors']} coprocessors, {b.inputs['Accelerators']} accelerator(s), "
         f"{b.inputs['KeyType']} {b.inputs['KeySize']}, {b.inputs['MessageKB']:g} KB messages, "
         f"{b.inputs['Requesters']} requester(s), {b.inputs['Policy']} policy."),
    ]
    _header_row(ws, 3, ["Topic", "Guidance"])
    for i, (topic, body) in enumerate(text, 4):
        ws.cell(i, 1, topic).font = Font(bold=True)
        ws.cell(i, 1).alignment = _WRAP
        ws.cell(i, 2, body).alignment = _WRAP
        ws.row_dimensions[i].height = 15 * (1 + len(body) // 95)
    _widths(ws, {"A": 24, "B": 100})
    ws.freeze_panes = "A4"
    _page(ws, f"A1:B{3 + len(text)}", landscape=False)


def _lists(b: _Builder) -> dict:
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


def _inputs(b: _Builder, list_refs: dict):
    ws = b.wb.create_sheet("Inputs")
    ws["A1"] = "Inputs"
    ws["A1"].font = _TITLE
    ws["A2"] = ("Orange cells are inputs; each has the defined name shown in column E. Defaults "
                "reproduce the measured configuration of the source documents.")
    ws["A2"].font = _NOTE
    _header_row(ws, 4, ["Input", "Value", "Unit", "Notes", "Name"])
    for row, inp in enumerate(INPUTS, _INPUT_FIRST_ROW):
        ws.cell(row, 1, inp.label).alignment = _TOP
        value = b.inputs[inp.name]
        cell = ws.cell(row, 2, value)
        cell.style = "Input"
        cell.number_format = inp.number_format
        cell.alignment = Alignment(horizontal="left" if isinstance(value, str) else "right",
                                   vertical="top")
        ws.cell(row, 3, inp.unit).alignment = _TOP
        ws.cell(row, 4, inp.note).alignment = _WRAP
        lines = -(-len(inp.note) // _NOTE_CHARS)
        if lines > 1:      # wrapped notes get the height they need instead of overlapping
            ws.row_dimensions[row].height = 15 * lines
        ws.cell(row, 5, inp.name).font = _NOTE
        ws.cell(row, 5).alignment = _TOP
        ref = f"Inputs!$B${row}"
        b.wb.defined_names[inp.name] = DefinedName(inp.name, attr_text=ref)
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
                                allow_blank=inp.name in _MAY_BE_EMPTY)
            what = "a whole number" if inp.domain.integer else "a number"
            dv.error = f"{inp.label}: {what} {inp.domain.text()}. {inp.note}"[:225]
            dv.errorTitle = "cryptoplan input"
            dv.prompt = inp.note[:255]
            dv.promptTitle = inp.label[:32]
        else:
            dv = None
        if dv is not None:
            dv.showErrorMessage = True
            dv.showInputMessage = True
            ws.add_data_validation(dv)
            dv.add(cell)
    last = _INPUT_FIRST_ROW + len(INPUTS) - 1
    _widths(ws, {"A": 38, "B": 44, "C": 16, "D": 70, "E": 16})
    ws.freeze_panes = "A5"
    _page(ws, f"A1:E{last}")


_AMS = tuple(_Name(n) for n in ("Policy", "KeyType", "KeySize", "MessageKB", "KeyReuse"))
_TLS = tuple(_Name(n) for n in ("Mode", "Cipher", "MessageKB"))
_TLS_OPT = (_Name("SSLRKEYC"), _Name("Platform"))
_PLAN = (_Name("PlanWorkloads"), _Name("PlanSystem"))
_PLAN_AT = (_Name("PlanGrowth"), _Name("PlanMonths"))


def _results(b: _Builder):
    ws = b.wb.create_sheet("Results")
    ws["A1"] = "Results at the inputs"
    ws["A1"].font = _TITLE
    ws["A2"] = ("Every value is a cryptoplan function over the named inputs of the Inputs sheet (column E, "
                "not printed, names it). A message says what is wrong and how many cards would carry the rate.")
    ws["A2"].font = _NOTE
    ws["A3"] = "Scenario"
    ws["A3"].font = Font(bold=True)
    b.native(ws, "B3", '=TEXT(TxRate,"#,##0")&" txn/s, "&Policy&", "&KeyType&" "&KeySize&"-bit, "'
                       '&MessageKB&" KB; installed "&Coprocessors&" coprocessors, "&Accelerators'
                       '&" accelerators, "&Processors&" CPs; target "&TEXT(MaxUtilization,"0%")')
    ws["B3"].font = Font(bold=True)
    _header_row(ws, 4, ["Result", "Value", "What it means", "Message (if any)", "Function"])
    n = _Name
    req = (n("Requesters"), n("Coprocessors"), n("Accelerators"), n("Recipients"))
    rows = [
        ("section", "MQ AMS at the planned rate (TxRate)"),
        ("AMS CPU per transaction at TxRate, total", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *_AMS, n("Recipients"), "total", n("Platform")), F_US,
         "General-CP microseconds per request/reply (2 MQPUT + 2 MQGET) at TxRate."),
        ("  application (MQ API, CPACF hashing/encryption)", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *_AMS, n("Recipients"), "application", n("Platform")), F_US,
         "Charged to the application address space."),
        ("  AMSM (asymmetric operations)", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *_AMS, n("Recipients"), "AMSM", n("Platform")), F_US,
         "AMS task handling of sign/verify/encrypt/decrypt requests."),
        ("  MSTR (queue manager administration)", "AMS_COST_AT_RATE_US",
         (n("TxRate"), *_AMS, n("Recipients"), "MSTR", n("Platform")), F_US,
         "MSTR's administration CPU per second spread over TxRate."),
        ("Processors required at TxRate", "PROCESSORS_REQUIRED",
         (n("TxRate"), *_AMS, n("MaxUtilization"), n("Recipients"), n("Platform")), F_CPS,
         "Fewest CPs within MaxUtilization for the AMS work (compare with Processors)."),
        ("Accelerators required", "ACCELERATORS_REQUIRED",
         (n("TxRate"), *_AMS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients")), F_CARDS,
         "Fewest accelerators within MaxUtilization (and MaxWaitMs if given)."),
        ("Coprocessors required", "COPROCESSORS_REQUIRED",
         (n("TxRate"), *_AMS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients")), F_CARDS,
         "Fewest coprocessors within MaxUtilization (and MaxWaitMs if given)."),
        ("Accelerator utilization at the required count", "CARD_UTILIZATION",
         (n("TxRate"), *_AMS, "accelerator", _Cell("IF(ISNUMBER(B{acc_req}),MAX(1,B{acc_req}),B{acc_req})"), n("Recipients")), F_PCT,
         "RMF summary utilization with the accelerators required above: always within the target."),
        ("Coprocessor utilization at the required count", "CARD_UTILIZATION",
         (n("TxRate"), *_AMS, "coprocessor", _Cell("IF(ISNUMBER(B{cop_req}),MAX(1,B{cop_req}),B{cop_req})"), n("Recipients")), F_PCT,
         "RMF summary utilization with the coprocessors required above."),
        ("section", "The installed cards (Coprocessors, Accelerators)"),
        ("Accelerator utilization (RMF summary)", "CARD_UTILIZATION",
         (n("TxRate"), *_AMS, "accelerator", n("Accelerators"), n("Recipients")), F_PCT,
         "Requests x EXEC TIME per card, as RMF prints it; #NUM! when they cannot keep up."),
        ("Coprocessor utilization (RMF summary)", "CARD_UTILIZATION",
         (n("TxRate"), *_AMS, "coprocessor", n("Coprocessors"), n("Recipients")), F_PCT,
         "Requests x EXEC TIME per card, as RMF prints it; #NUM! when they cannot keep up."),
        ("verdict",),
        ("Accelerator queueing delay per transaction", "CRYPTO_WAIT_MS",
         (n("TxRate"), *_AMS, "accelerator", n("Accelerators"), n("Recipients")), F_MS,
         "Mean wait for the accelerators, summed over a transaction's requests (M/G/c, the ME/CRT mix)."),
        ("Coprocessor queueing delay per transaction", "CRYPTO_WAIT_MS",
         (n("TxRate"), *_AMS, "coprocessor", n("Coprocessors"), n("Recipients")), F_MS,
         "Mean wait for the coprocessors, summed over a transaction's requests (M/G/c)."),
        ("bottleneck",),
        ("section", "MQ AMS with Requesters in a closed loop"),
        ("Most the requesters reach", "AMS_THROUGHPUT", (*_AMS, *req, n("Processors"), n("Platform")), F_TPS,
         "Requesters each with one request/reply outstanding; capped by CPs and cards (MVA)."),
        ("AMS CPU per transaction at that rate, total", "AMS_COST_US",
         (*_AMS, *req, "total", n("Platform"), n("Processors")), F_US,
         "As above, with MSTR's per-second cost spread over the closed-loop rate."),
        ("section", "MQ channel TLS (Mode, Cipher)"),
        ("Channel CPU per transaction, total", "TLS_COST_US", (*_TLS, "total", *_TLS_OPT), F_US,
         "MSTR + CHIN + TCPIP."),
        ("  MSTR (channel share)", "TLS_COST_US", (*_TLS, "MSTR", *_TLS_OPT), F_US,
         "Queue manager: weakly constrained by the published figures (fitted near 0): read with CHIN."),
        ("  CHIN (channel initiator)", "TLS_COST_US", (*_TLS, "CHIN", *_TLS_OPT), F_US,
         "SSLCIPH encryption (and SSLRKEYC renegotiation) runs here."),
        ("  TCPIP (AT-TLS)", "TLS_COST_US", (*_TLS, "TCPIP", *_TLS_OPT), F_US, "AT-TLS decryption runs here."),
        ("Round trip per transaction", "TLS_ROUNDTRIP_US",
         (n("Mode"), n("Cipher"), n("MessageKB")), F_US, "As seen by the requester."),
        ("Channel throughput (ChannelPairs, SSLTASKS, CHIDISPS)", "CHANNEL_THROUGHPUT",
         (*_TLS, n("ChannelPairs"), 1, n("SSLTASKS"), n("CHIDISPS"), n("Platform")), F_TPS,
         "One requester per pair; SSLCIPH queues for SSLTASKS, AT-TLS has an SRB per socket (MVA)."),
        ("Channel starts per second", "CHANNEL_START_RATE", (n("Mode"), n("Cipher"), n("Platform")),
         F_STARTS, "Sustainable rate of channel starts (TLS handshakes); z15 and z16 only."),
        ("CPU per channel start", "CHANNEL_START_COST_US", (n("Mode"), n("Cipher"), "total", n("Platform")),
         F_US, "Including the TLS handshake; z15 and z16 only."),
        ("section", "The whole system (Workloads sheet; details on the Plan sheet)"),
        *[(f"{label} utilization (all workloads)", "PLAN_VALUE", (*_PLAN, pool, "utilization", *_PLAN_AT), F_PCT,
           f"RMF utilization of the {pool} with every workload of the Workloads sheet.")
          for label, pool in (("Processor", "processors"), ("Coprocessor", "coprocessors"),
                              ("Accelerator", "accelerators"))],
        *[(f"{label} required (all workloads)", "PLAN_VALUE", (*_PLAN, pool, "required", *_PLAN_AT), fmt,
           f"Fewest {pool} within the target for every workload together.")
          for label, pool, fmt in (("Processors", "processors", F_CPS), ("Coprocessors", "coprocessors", F_CARDS),
                                   ("Accelerators", "accelerators", F_CARDS))],
        *[(f"Months until the {pool} reach the target", "PLAN_VALUE", (*_PLAN, pool, "months_to_target", *_PLAN_AT),
           '0.0 "months"', "Each workload at its growth_per_year; #N/A if never within 100 years.")
          for pool in ("processors", "coprocessors", "accelerators")],
        ("section", "TLS handshake (relative to a full ECDHE-RSA TLS 1.2 handshake)"),
        ("CPU factor, TLS 1.3 full handshake", "HANDSHAKE_CPU_FACTOR", ("ECDHE", "RSA", "TLS1.3"),
         F_RATIO, "Multiplier on the baseline handshake CPU."),
        ("CPU factor, resumed TLS 1.2 handshake", "HANDSHAKE_CPU_FACTOR",
         ("ECDHE", "RSA", "TLS1.2", True), F_RATIO, "Abbreviated handshake (session reuse)."),
    ]
    row = 5
    where = {}
    for spec in rows:
        if spec[0] == "section":
            _heading(ws, row, spec[1])
            row += 1
            continue
        if spec[0] == "bottleneck":
            ua, uc = where["Accelerator utilization (RMF summary)"], where["Coprocessor utilization (RMF summary)"]
            formula = (f'=IF(AND(ISNUMBER({ua}),ISNUMBER({uc})),IF({ua}>={uc},"accelerators",'
                       f'"coprocessors"),IF({_saturated(ua)},"accelerators (saturated)",'
                       f'IF({_saturated(uc)},"coprocessors (saturated)",'
                       f'"see the errors above")))')
            ws.cell(row, 1, "Bottleneck at TxRate (busiest card type)")
            b.native(ws, f"B{row}", formula)
            ws.cell(row, 5, "native formula").font = _NOTE
            ws.cell(row, 3, "The installed card type with the higher utilization.")
            row += 1
            continue
        if spec[0] == "verdict":
            # The installed counts are judged only when the model accepted them: their
            # utilization is a number, or the #NUM! of cards that cannot keep up (an
            # installed count the model refuses, e.g. Coprocessors 65, is an error there).
            ra, rc = where["Accelerators required"], where["Coprocessors required"]
            ua, uc = where["Accelerator utilization (RMF summary)"], where["Coprocessor utilization (RMF summary)"]
            judged = ",".join(f"OR(ISNUMBER({u}),{_saturated(u)})" for u in (ua, uc))
            # "overloaded: add 2 accelerators and 1 coprocessor": how many, not only that
            add_a, add_c = f"({ra}-Accelerators)", f"({rc}-Coprocessors)"
            add = (f'"overloaded: add "&IF({ra}>Accelerators,{add_a}&" accelerator"&IF({add_a}>1,"s",""),"")'
                   f'&IF(AND({ra}>Accelerators,{rc}>Coprocessors)," and ","")'
                   f'&IF({rc}>Coprocessors,{add_c}&" coprocessor"&IF({add_c}>1,"s",""),"")')
            formula = (f'=IF(AND(ISNUMBER({ra}),ISNUMBER({rc}),{judged}),IF(AND({ra}<=Accelerators,'
                       f'{rc}<=Coprocessors),"installed cards meet the targets",'
                       f'{add}),"see the errors above")')
            ws.cell(row, 1, "Verdict for the installed cards")
            b.native(ws, f"B{row}", formula)
            ws.cell(row, 5, "native formula").font = _NOTE
            ws.cell(row, 3, "Compares the required counts with Coprocessors and Accelerators "
                            "(once the model accepts the installed counts).")
            row += 1
            continue
        label, fname, args, fmt, note = spec
        refs = {k: where[v][1:] for k, v in (("acc_req", "Accelerators required"),
                                             ("cop_req", "Coprocessors required")) if v in where}
        args = tuple(_Cell(a.format(**refs)) if isinstance(a, _Cell) else a for a in args)
        ws.cell(row, 1, label)
        b.udf(ws, f"B{row}", fname, *args, number_format=fmt)
        ws.cell(row, 5, fname).font = _NOTE
        ws.cell(row, 3, note)
        # The message column repeats error text in full, wrapped in its printed width (the
        # value cell shows its start; the Function column right of it is not printed).
        b.native(ws, f"D{row}", f'=IF(ISNUMBER(B{row}),"",B{row})')
        ws.cell(row, 4).font = Font(color="9C0006", size=9)
        ws.cell(row, 4).alignment = Alignment(wrap_text=True, vertical="top")
        where.setdefault(label, f"B{row}")
        row += 1
    for r in range(5, row):
        if ws.cell(r, 2).value is not None:
            ws.cell(r, 2).font = Font(bold=True)
    # Row heights are set, not left to the application: a wrapped note or message needs its
    # lines (LibreOffice and Excel do not re-fit a row when a formula's text changes).  Rows whose
    # installed-card value may be an overload message get three lines for it.
    widths = {"A": 44, "B": 28, "C": 62, "D": 48, "E": 26}
    for r in range(5, row):
        for c in (1, 2, 3):
            ws.cell(r, c).alignment = Alignment(wrap_text=c == 3 or None, vertical="top")
        note = str(ws.cell(r, 3).value or "")
        lines = max(1, -(-len(note) * 4 // (widths["C"] * 5)))      # ~1.25 characters per width unit
        if ws.cell(r, 5).value in ("CARD_UTILIZATION", "CRYPTO_WAIT_MS") and "installed" not in note \
                and r > int(where.get("Coprocessor utilization at the required count", "B0")[1:]):
            lines = max(lines, 3)
        if ws.cell(r, 1).value == "Verdict for the installed cards":
            ws.cell(r, 2).alignment = Alignment(wrap_text=True, vertical="top")
            lines = max(lines, 2)
        if lines > 1:
            ws.row_dimensions[r].height = 13.5 * lines
    _widths(ws, widths)
    ws.freeze_panes = "A5"
    # A manager's page: one landscape page, the internal Function column (E) not printed
    _page(ws, f"A1:D{row - 1}")
    ws.page_setup.fitToHeight = 1


# ------------------------------------------------------------------ the whole system
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
PLAN_ROWS = 20                 # workload rows of the table (empty ones are skipped)
_PLAN_HEAD = 16                # the Workloads table's header row
_PLAN_SYSTEM_FIRST = 5
_PLAN_MONTHS = tuple(range(0, 37, 3))
F_MONTHS = '0.0 "months"'


def _workloads(b: _Builder):
    """The Workloads sheet: the System block (PlanSystem) and the Workloads table (PlanWorkloads)."""
    from cryptoplan.model.zos.ams import CARD_GENERATIONS
    from cryptoplan.model.zos.plan import KINDS, RATE_UNITS
    ws = _titled_sheet(b, "Workloads", "Workloads: everything that uses the cards and processors",
                       "One row per workload (kind: " + ", ".join(KINDS) + "); fill the columns its kind takes, "
                       "leave the rest empty. rate: " + "; ".join(f"{k} in {u}" for k, u in RATE_UNITS.items())
                       + ". The Plan sheet and the Results sheet's last section compute from this sheet "
                       "(cryptoplan plan reads it too).", "L")
    _heading(ws, 4, "System (PlanSystem): key, value")
    for r, (key, value, note) in enumerate(_PLAN_SYSTEM, _PLAN_SYSTEM_FIRST):
        ws.cell(r, 1, key)
        cell = ws.cell(r, 2, value)
        if isinstance(value, str) and value.startswith("="):
            b.native(ws, f"B{r}", value)
        else:
            cell.style = "Input"
        ws.cell(r, 3, note).font = _NOTE
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
    _heading(ws, _PLAN_HEAD - 1, "Workloads (PlanWorkloads): a row each, empty rows skipped")
    _header_row(ws, _PLAN_HEAD, _PLAN_COLUMNS)
    first, last = _PLAN_HEAD + 1, _PLAN_HEAD + PLAN_ROWS
    col = {name: get_column_letter(i) for i, name in enumerate(_PLAN_COLUMNS, 1)}
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
    widths = {c: max(11, len(k) + 3) for k, c in col.items()}
    widths.update({col["name"]: 16, col["kind"]: 15, col["cipher"]: 40, col["policy"]: 16})
    _widths(ws, {**widths, "A": 22, "C": 16})
    ws.column_dimensions["C"].width = 16
    ws.freeze_panes = f"C{first}"
    _page(ws, f"A1:{col[_PLAN_COLUMNS[-1]]}{last}")


def _plan(b: _Builder):
    """The Plan sheet: the whole system at the planned rates (PLAN_RESOURCES, PLAN_WORKLOADS) and as
    it grows (PLAN_VALUE over months), with the stacked utilization and growth charts."""
    from cryptoplan.model.zos.plan import RESOURCE_COLUMNS, WORKLOAD_COLUMNS
    n = _Name
    ws = _titled_sheet(b, "Plan", "Plan: every workload on the shared cards and processors",
                       "From the Workloads sheet. Utilization is RMF's (requests x EXEC TIME per card; CPU seconds "
                       "per second per processor). Headroom: the factor on every rate that reaches the target; "
                       "months to target: at each workload's growth_per_year.", "I")
    for r, (label, name, value, fmt, note) in enumerate((
            ("Growth factor", "PlanGrowth", 1.0, "0.00", "on every rate: 1 = the rates of the Workloads sheet"),
            ("Months ahead", "PlanMonths", 0.0, "0.0", "0 = now; each workload grows at its growth_per_year")), 4):
        ws.cell(r, 1, label)
        cell = ws.cell(r, 2, value)
        cell.style, cell.number_format = "Input", fmt
        ws.cell(r, 3, note).font = _NOTE
        b.wb.defined_names[name] = DefinedName(name, attr_text=f"Plan!$B${r}")
    args = (n("PlanWorkloads"), n("PlanSystem"), n("PlanGrowth"), n("PlanMonths"))
    _heading(ws, 7, "Resources")
    b.dynamic_array(ws, "A8", "PLAN_RESOURCES", 4, len(RESOURCE_COLUMNS), *args)
    for c in range(1, len(RESOURCE_COLUMNS) + 1):
        ws.cell(8, c).font, ws.cell(8, c).fill, ws.cell(8, c).alignment = _HEAD, _HEAD_FILL, _WRAP
    ws.row_dimensions[8].height = 30
    rc = {k: get_column_letter(i) for i, k in enumerate(RESOURCE_COLUMNS, 1)}
    for r in range(9, 12):
        for key, fmt in (("utilization", F_PCT), ("headroom", F_RATIO), ("months_to_target", F_MONTHS),
                         ("wait_ms", F_MS)):
            ws[f"{rc[key]}{r}"].number_format = fmt
    top = 14
    _heading(ws, top - 1, "Workloads: each one's share of each resource's utilization")
    b.dynamic_array(ws, f"A{top}", "PLAN_WORKLOADS", PLAN_ROWS + 1, len(WORKLOAD_COLUMNS), *args)
    for c in range(1, len(WORKLOAD_COLUMNS) + 1):
        ws.cell(top, c).font, ws.cell(top, c).fill, ws.cell(top, c).alignment = _HEAD, _HEAD_FILL, _WRAP
    # rows past the last workload: #N/A where the table is shown at its full size (Calc, older
    # Excel); Excel 365 spills only the workloads.  Shown blank, and the chart's names skip them.
    ws.conditional_formatting.add(f"A{top + 1}:{get_column_letter(len(WORKLOAD_COLUMNS))}{top + PLAN_ROWS}",
                                  FormulaRule(formula=[f"ISNA(A{top + 1})"], font=Font(color="FFFFFF")))
    wc = {k: get_column_letter(i) for i, k in enumerate(WORKLOAD_COLUMNS, 1)}
    for r in range(top + 1, top + PLAN_ROWS + 1):
        for key, fmt in (("rate", "#,##0.0"), ("cpu_us", F_US), ("processors", F_PCT), ("coprocessors", F_PCT),
                         ("accelerators", F_PCT), ("queueing_ms", F_MS)):
            ws[f"{wc[key]}{r}"].number_format = fmt
    # growth: each resource's utilization month by month (PLAN_VALUE over a column of months)
    g0 = top + PLAN_ROWS + 3
    _heading(ws, g0 - 1, "Growth: utilization months ahead, each workload at its growth_per_year")
    _header_row(ws, g0, ["months", "processors", "coprocessors", "accelerators", "target"])
    for i, months in enumerate(_PLAN_MONTHS):
        r = g0 + 1 + i
        ws.cell(r, 1, months)
        for c, pool in enumerate(("processors", "coprocessors", "accelerators"), 2):
            b.udf(ws, f"{get_column_letter(c)}{r}", "PLAN_VALUE", n("PlanWorkloads"), n("PlanSystem"), pool,
                  "utilization", n("PlanGrowth"), _Cell(f"A{r}"), number_format=F_PCT)
        b.native(ws, f"E{r}", "=MaxUtilization", F_PCT)
    last = g0 + len(_PLAN_MONTHS)
    # charts: stacked utilization by workload (from the spilled table), growth with the target line
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
    ws.add_chart(_scatter(ws, "Utilization as the workloads grow", "months ahead", "utilization", x, series,
                          y_fmt="0%"), f"A{last + 2}")
    _widths(ws, {"A": 18, "B": 14, "C": 14, "D": 16, "E": 20, "F": 14, "G": 17, "H": 14, "I": 62})
    ws.freeze_panes = "A4"
    _page(ws, f"A1:I{last + 17}")
    ws.page_setup.fitToHeight = 1       # a manager prints it: one page


_LIMIT_SHARES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
_GROWTH_FACTORS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
_SERIES = Font(bold=True, color="595959")
_BOOLEAN = '"TRUE";"TRUE";"FALSE"'


def _saturated(ref: str) -> str:
    """Formula text: ``ref`` holds the #NUM! of a resource that cannot keep up.

    Excel (xlwings) shows it as text starting ``#NUM!``; LibreOffice Calc's add-in as a real
    #NUM! error (``ERROR.TYPE`` 6).  The test reads both.
    """
    return f'OR(IFERROR(LEFT({ref},5)="#NUM!",FALSE),IFERROR(ERROR.TYPE({ref})=6,FALSE))'


def _gap(b, ws, coord, source, number_format):
    """Chart series cell: the value, or #N/A where ``source`` is not a number.

    Excel and LibreOffice both leave a gap at #N/A in a scatter chart; error text (how
    xlwings returns a failure) would be drawn as zero.
    """
    b.native(ws, coord, f"=IF(ISNUMBER({source}),{source},NA())", number_format)


def _scatter(ws, title, x_title, y_title, x_ref, series, y_fmt=None, y_max=None):
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


def _titled_sheet(b: _Builder, name: str, title: str, note: str, note_to: str):
    """A new sheet with its title in A1 and a wrapped note in A2 merged across to ``note_to``."""
    ws = b.wb.create_sheet(name)
    ws["A1"] = title
    ws["A1"].font = _TITLE
    ws["A2"] = note
    ws["A2"].font, ws["A2"].alignment = _NOTE, _WRAP
    ws.merge_cells(f"A2:{note_to}2")
    ws.row_dimensions[2].height = 30
    return ws


def _whatif(b: _Builder):
    ws = _titled_sheet(b, "What-if", "What-if: transaction rate and key size",
                       "Other inputs come from the Inputs sheet. The first table grows the rate up to what the "
                       "installed cards carry; the second counts the cards needed beyond it. Columns I-L (not "
                       "printed) feed the charts (#N/A where a result is an error: a gap, not a zero).", "H")
    ws.row_dimensions[2].height = 42       # three lines within the printed columns A-H
    n = _Name
    ams = _AMS
    # --- installed cards up to their limit --------------------------------
    _heading(ws, 4, "Installed cards as the rate grows, up to the busier card type's limit")
    ws["A5"] = "Limit of the installed cards"
    ws["A5"].font = Font(bold=True)
    ws.merge_cells("A5:B5")
    acc1 = (1, *ams, "accelerator", n("Accelerators"), n("Recipients"))
    cop1 = (1, *ams, "coprocessor", n("Coprocessors"), n("Recipients"))
    b.udf(ws, "I5", "CARD_UTILIZATION", *acc1, number_format="0.0000%")
    b.udf(ws, "J5", "CARD_UTILIZATION", *cop1, number_format="0.0000%")
    b.native(ws, "C5", "=IF(AND(ISNUMBER(I5),ISNUMBER(J5)),1/MAX(I5,J5),IF(ISNUMBER(I5),J5,I5))",
             '#,##0 "txn/s"')
    ws["C5"].font = Font(bold=True)
    ws["D5"] = "the busier card type at 100% (RMF summary)"
    ws["D5"].font = _NOTE
    ws["I4"] = "Chart data (not printed); row 5: utilization at 1 txn/s"
    ws["I4"].font = _SERIES
    heads = ["Transaction rate", "Share of the limit", "Accelerator utilization",
             "Coprocessor utilization", "Accelerator delay per txn", "Coprocessor delay per txn"]
    _header_row(ws, 6, heads)
    for j, text in enumerate(["Accel. util.", "Coproc. util.", "Accel. delay", "Coproc. delay"], 9):
        ws.cell(6, j, text).font = _SERIES
    first = 7
    for i, share in enumerate(_LIMIT_SHARES):
        r = first + i
        ws.cell(r, 2, share).number_format = "0%"
        b.native(ws, f"A{r}", f"=$C$5*B{r}", '#,##0 "txn/s"')
        acc = (_Cell(f"A{r}"), *ams, "accelerator", n("Accelerators"), n("Recipients"))
        cop = (_Cell(f"A{r}"), *ams, "coprocessor", n("Coprocessors"), n("Recipients"))
        b.udf(ws, f"C{r}", "CARD_UTILIZATION", *acc, number_format=F_PCT)
        b.udf(ws, f"D{r}", "CARD_UTILIZATION", *cop, number_format=F_PCT)
        b.udf(ws, f"E{r}", "CRYPTO_WAIT_MS", *acc, number_format=F_MS)
        b.udf(ws, f"F{r}", "CRYPTO_WAIT_MS", *cop, number_format=F_MS)
        for src, dst, fmt in (("C", "I", F_PCT), ("D", "J", F_PCT), ("E", "K", "0.0000"), ("F", "L", "0.0000")):
            _gap(b, ws, f"{dst}{r}", f"{src}{r}", fmt)
    last = first + len(_LIMIT_SHARES) - 1
    # --- cards required beyond -------------------------------------------
    g0 = last + 2
    _heading(ws, g0, "Cards required as the rate grows (multiples of TxRate)")
    _header_row(ws, g0 + 1, ["Transaction rate", "Multiple of TxRate", "Accelerators required",
                             "Coprocessors required"])
    ws.cell(g0 + 1, 9, "Accel. req.").font = _SERIES
    ws.cell(g0 + 1, 10, "Coproc. req.").font = _SERIES
    gfirst = g0 + 2
    req_args = (*ams, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients"))
    for i, k in enumerate(_GROWTH_FACTORS):
        r = gfirst + i
        ws.cell(r, 2, k).number_format = '0.0"x"'
        b.native(ws, f"A{r}", f"=TxRate*B{r}", '#,##0 "txn/s"')
        b.udf(ws, f"C{r}", "ACCELERATORS_REQUIRED", _Cell(f"A{r}"), *req_args, number_format=F_CARDS)
        b.udf(ws, f"D{r}", "COPROCESSORS_REQUIRED", _Cell(f"A{r}"), *req_args, number_format=F_CARDS)
        _gap(b, ws, f"I{r}", f"C{r}", "0")
        _gap(b, ws, f"J{r}", f"D{r}", "0")
    glast = gfirst + len(_GROWTH_FACTORS) - 1
    # --- key-size sweep ---------------------------------------------------
    k0 = glast + 2
    _heading(ws, k0, "RSA key size (KeyType taken as RSA), Requesters in a closed loop")
    _header_row(ws, k0 + 1, ["RSA key size", "Throughput", "CPU per transaction"])
    ws.cell(k0 + 1, 9, "Throughput").font = _SERIES
    req = (n("Requesters"), n("Coprocessors"), n("Accelerators"), n("Recipients"))
    kfirst = k0 + 2
    for i, size in enumerate(RSA_KEY_SIZES):
        r = kfirst + i
        ws.cell(r, 1, size).number_format = '0 "bits"'
        key = (n("Policy"), "RSA", _Cell(f"A{r}"), n("MessageKB"), n("KeyReuse"))
        b.udf(ws, f"B{r}", "AMS_THROUGHPUT", *key, *req, number_format=F_TPS)
        b.udf(ws, f"C{r}", "AMS_COST_US", *key, *req, "total", n("Platform"), number_format=F_US)
        _gap(b, ws, f"I{r}", f"B{r}", "#,##0")
    klast = kfirst + len(RSA_KEY_SIZES) - 1
    # --- charts: two by two under the tables -------------------------------
    def col(c, r0, r1):
        return Reference(ws, min_col=c, min_row=r0, max_row=r1)

    x1, x2, x3 = col(1, first, last), col(1, gfirst, glast), col(1, kfirst, klast)
    q = "'What-if'!"
    charts = [
        _scatter(ws, "Card utilization vs transaction rate", "transactions/s", "utilization (RMF)", x1,
                 [(f"{q}$C$6", col(9, first, last)), (f"{q}$D$6", col(10, first, last))], "0%", 1.0),
        _scatter(ws, "Queueing delay per transaction", "transactions/s", "ms", x1,
                 [(f"{q}$E$6", col(11, first, last)), (f"{q}$F$6", col(12, first, last))], "0.00"),
        _scatter(ws, "Cards required vs transaction rate", "transactions/s", "cards", x2,
                 [(f"{q}$C${g0 + 1}", col(9, gfirst, glast)), (f"{q}$D${g0 + 1}", col(10, gfirst, glast))],
                 "0"),
        _scatter(ws, "AMS throughput vs RSA key size", "RSA key size (bits)", "transactions/s", x3,
                 [(f"{q}$B${k0 + 1}", col(9, kfirst, klast))], "#,##0"),
    ]
    charts[3].x_axis.scaling.min = 0
    anchor = klast + 2
    for i, ch in enumerate(charts):
        ws.add_chart(ch, f"{'A' if i % 2 == 0 else 'E'}{anchor + 15 * (i // 2)}")
    _widths(ws, {"A": 17, "B": 14, "C": 15, "D": 15, "E": 15, "F": 15, "G": 3, "H": 10,
                 "I": 12, "J": 12, "K": 12, "L": 12})
    for r in (6, g0 + 1, k0 + 1):
        ws.row_dimensions[r].height = 30
    ws.freeze_panes = "A4"
    _page(ws, f"A1:H{anchor + 30}", landscape=False)     # columns I-L only feed the charts
    ws.page_setup.fitToHeight = 1  # one page: the PNG rendering and a printout


def _row_lines(text: str, chars: int) -> int:
    """Lines a wrapped cell of ``chars`` characters per line needs for ``text``."""
    return max(1, -(-len(text or "") // chars))


def _calibration(b: _Builder):
    """Published figures beside the model (MODEL_FIGURES), and a model-vs-published chart."""
    from cryptoplan.model.calibration.fit import figure_table_ids, known_misses

    ws = _titled_sheet(b, "Calibration", "Calibration: published measurements vs the model",
                       "MODEL_FIGURES(ParamsFile) (on the hidden Tables sheet) gives one row per published figure the models predict: "
                       "its source document (report and page), the model's value and relative error. "
                       "within_tolerance FALSE is highlighted; the reason column says why the model cannot meet "
                       "it.", "I")
    fig = _CATALOG["MODEL_FIGURES"]
    ids = figure_table_ids()
    top = 22
    b.dynamic_array(ws, f"A{top}", "MODEL_FIGURES", len(ids) + 1, len(fig.columns))
    col = {name: get_column_letter(i) for i, name in enumerate(fig.columns, 1)}
    for c in range(1, len(fig.columns) + 1):       # formats persist under the spilled header
        cell = ws.cell(top, c)
        cell.font, cell.fill = _HEAD, _HEAD_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="center")
    first, last = top + 1, top + len(ids)
    widths = {"source": 24, "quantity": 18, "conditions": 30, "unit": 12, "published": 12, "model": 12,
              "relative_error": 14, "within_tolerance": 17, "reason": 64, "id": 30}
    _widths(ws, {col[k]: w for k, w in widths.items()})
    for name, fmt in (("published", "General"), ("model", "0.0000"), ("relative_error", "0.0%")):
        for r in range(first, last + 1):
            ws[f"{col[name]}{r}"].number_format = fmt
    for name in fig.columns:
        for r in range(first, last + 1):
            ws[f"{col[name]}{r}"].alignment = _WRAP
    for r in range(first, last + 1):   # LibreOffice shows a boolean as 1/0 without a boolean format
        ws[f"{col['within_tolerance']}{r}"].number_format = _BOOLEAN
    ws.row_dimensions[top].height = 30
    # row heights for the text the shipped table holds (Excel does not re-fit a row when a
    # formula's text changes): the conditions and the listed reasons of the figures
    misses = known_misses()
    for r, fid in enumerate(ids, first):
        f = figure(fid)
        cond = "; ".join(f"{k}={v}" for k, v in f.conditions.items() if v)
        lines = max(_row_lines(cond, widths["conditions"] - 2), _row_lines(misses.get(fid, ""), widths["reason"] + 4),
                    _row_lines(fid, widths["id"] - 1))
        ws.row_dimensions[r].height = 13 * lines + 2
    ws.conditional_formatting.add(f"{col['within_tolerance']}{first}:{col['within_tolerance']}{last}", CellIsRule(
        operator="equal", formula=["0"], fill=PatternFill("solid", fgColor="FFC7CE"), font=Font(color="9C0006")))
    # --- chart: model against published, log-log, the diagonal is agreement ---
    x, y = get_column_letter(len(fig.columns) + 2), get_column_letter(len(fig.columns) + 3)
    ws[f"{x}{top}"], ws[f"{y}{top}"] = "published (chart)", "model (chart)"
    ws[f"{x}{top}"].font = ws[f"{y}{top}"].font = _SERIES
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
    xs = Reference(ws, min_col=len(fig.columns) + 2, min_row=first, max_row=last)
    pts = Series(Reference(ws, min_col=len(fig.columns) + 3, min_row=first, max_row=last), xs, title="figures")
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
    ws.freeze_panes = f"A{first}"
    _page(ws, f"A1:{get_column_letter(len(fig.columns))}{last}")
    ws.print_title_rows = f"{top}:{top}"


def _parameters(b: _Builder):
    """The parameters in force (MODEL_PARAMETERS), one row each."""
    from cryptoplan.model.params import load_params

    ws = b.wb.create_sheet("Parameters")
    ws["A1"] = "Model parameters in force"
    ws["A1"].font = _TITLE
    ws["A2"] = ("MODEL_PARAMETERS(ParamsFile) (on the hidden Tables sheet) gives one row per parameter: its value, standard error "
                "(empty where the fit holds it at a bound or it is derived), unit and sub-model.")
    ws["A2"].font = _NOTE
    par = _CATALOG["MODEL_PARAMETERS"]
    doc = load_params()["parameters"]
    b.dynamic_array(ws, "A4", "MODEL_PARAMETERS", len(doc) + 1, len(par.columns))
    for c in range(1, len(par.columns) + 1):
        cell = ws.cell(4, c)
        cell.font, cell.fill = _HEAD, _HEAD_FILL
    widths = {"name": 26, "value": 14, "stderr": 14, "unit": 12, "submodel": 12, "description": 90}
    col = {name: get_column_letter(i) for i, name in enumerate(par.columns, 1)}
    _widths(ws, {col[k]: w for k, w in widths.items()})
    for r, name in enumerate(sorted(doc), 5):
        ws[f"{col['value']}{r}"].number_format = ws[f"{col['stderr']}{r}"].number_format = "0.0000"
        for column in par.columns:
            ws[f"{col[column]}{r}"].alignment = _WRAP if column == "description" else Alignment(
                vertical="top", horizontal="left" if column in ("name", "unit", "submodel") else None)
        ws.row_dimensions[r].height = 13 * _row_lines(doc[name].get("description", ""), widths["description"] + 4) + 2
    ws.freeze_panes = "A5"
    _page(ws, f"A1:{get_column_letter(len(par.columns))}{4 + len(doc)}")
    ws.print_title_rows = "4:4"


def _site_rmf(b: _Builder):
    """The Site RMF sheet: the planner types the RMF Crypto Hardware Activity report's lines."""
    from cryptoplan.model.calibration.calibrate import RMF_COLUMNS, RMF_FUNCTIONS

    from .site_rmf import HEADER_ROW, RMF_SHEET
    ws = b.wb.create_sheet(RMF_SHEET)
    ws["A1"] = "Site RMF: your crypto report"
    ws["A1"].font = _TITLE
    notes = ("Type the lines of your RMF Crypto Hardware Activity report, one row per printed line: TYPE as "
             "printed (CEX8C coprocessor, CEX8A accelerator), ID the card, FUNCTION TOTAL for a card's line or "
             "ME / CRT for an accelerator's RSA lines (KEY = their key length), RATE per second, EXEC TIME in "
             "ms, UTIL% in percent.",
             "Then, in a terminal: cryptoplan calibrate --rmf <this workbook> --out site-params.json, and "
             "recalculate with CRYPTOPLAN_PARAMS=site-params.json: the card times become yours (docs/calibration.md "
             "shows a worked example).")
    for r, text in enumerate(notes, 2):
        cell = ws.cell(r, 1, text)
        cell.font, cell.alignment = _NOTE, _WRAP
        ws.merge_cells(start_row=r, start_column=1, end_row=r, end_column=len(RMF_COLUMNS))
        ws.row_dimensions[r].height = 16 * (len(text) // 90 + 1)    # about 90 characters per line
    _header_row(ws, HEADER_ROW, RMF_COLUMNS)
    first, last = HEADER_ROW + 1, HEADER_ROW + 24
    for r in range(first, last + 1):
        for c in range(1, len(RMF_COLUMNS) + 1):
            ws.cell(r, c).style = "Input"      # as the Inputs sheet's cells
    col = {name: get_column_letter(i) for i, name in enumerate(RMF_COLUMNS, 1)}
    checks = [
        (DataValidation(type="list", formula1='"' + ",".join(RMF_FUNCTIONS) + '"', allow_blank=True),
         "FUNCTION", f"FUNCTION: {', '.join(RMF_FUNCTIONS)}"),
        (DataValidation(type="list", formula1='"' + ",".join(map(str, RSA_KEY_SIZES)) + '"', allow_blank=True),
         "KEY", "KEY: the RSA key length of an ME or CRT line; empty on TOTAL lines"),
    ]
    for name in ("RATE", "EXEC TIME", "UTIL%"):
        checks.append((DataValidation(type="decimal", operator="greaterThanOrEqual", formula1="0", allow_blank=True),
                       name, f"{name}: a number >= 0, as the report prints it"))
    for dv, name, text in checks:
        dv.error, dv.errorTitle, dv.prompt = text, "Site RMF", text
        ws.add_data_validation(dv)
        dv.add(f"{col[name]}{first}:{col[name]}{last}")
    _widths(ws, {"A": 12, "B": 8, "C": 12, "D": 8, "E": 12, "F": 12, "G": 10})
    ws.freeze_panes = f"A{first}"
    _page(ws, f"A1:G{last}", landscape=False)


CHECK_PAIRS = ((0.5, 1), (2.0, 3), (9.0, 10), (8.0, 10), (25.0, 30), (45.0, 50), (80.0, 90),
               (150.0, 160))


def _check(b: _Builder):
    ws = b.wb.create_sheet("Check")
    ws["A1"] = "Check: Erlang C in native Excel functions vs the add-in"
    ws["A1"].font = _TITLE
    ws["A2"] = ("Erlang B = POISSON.DIST(c,A,FALSE)/POISSON.DIST(c,A,TRUE); "
                "Erlang C = B/(1-(A/c)(1-B)). The difference column should be ~1e-12 "
                "when the add-in is loaded.")
    ws["A2"].font, ws["A2"].alignment = _NOTE, _WRAP
    ws.merge_cells("A2:G2")                 # wrapped within the printed columns, not cut at the page edge
    ws.row_dimensions[2].height = 30
    _header_row(ws, 4, ["Traffic A (erlangs)", "Servers c", "Utilization A/c",
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
        b.udf(ws, f"F{i}", "ERLANGC", _Cell(f"A{i}"), _Cell(f"B{i}"), number_format="0.000000000000")
        b.native(ws, f"G{i}", f'=IF(ISNUMBER(F{i}),F{i}-E{i},"add-in value missing")', "0.0E+00")
    last = 4 + len(CHECK_PAIRS)
    _widths(ws, {"A": 18, "B": 11, "C": 15, "D": 20, "E": 20, "F": 20, "G": 22})
    ws.freeze_panes = "A5"
    _page(ws, f"A1:G{last}")


def _xlwings_conf_sheet(b: _Builder):
    """Workbook-level xlwings configuration (highest priority in xlwings' config lookup).

    xlwings' VBA (``GetConfigFromSheet``) reads key/value pairs from column A/B
    of a sheet named ``xlwings.conf``, from A1 down to the first empty cell, so
    nothing but settings may stand in column A.
    """
    ws = b.wb.create_sheet("xlwings.conf")
    ws["A1"], ws["B1"] = "UDF MODULES", "cryptoplan.addin.udfs"
    ws["D1"] = ("Read by the xlwings add-in (Import Functions): the Python module with the "
                "cryptoplan functions. Keys in column A, values in column B, no blank rows.")
    ws["D1"].font, ws["D1"].alignment = _NOTE, _WRAP
    ws.row_dimensions[1].height = 45
    _widths(ws, {"A": 16, "B": 24, "D": 60})
    _page(ws, "A1:D1")                      # one page, not three nearly empty ones


def build_workbook():
    """Build the planning workbook in memory: formulas only (nothing is computed here).

    Returns
    -------
    (openpyxl.Workbook, _Builder)
        The workbook and its builder (``formulas``, ``dynamic_arrays``, and ``uses``: which
        input each formula passes as which catalog argument).
    """
    b = _Builder()
    _guide(b)
    refs = _lists(b)
    _inputs(b, refs)
    _results(b)
    _workloads(b)
    _plan(b)
    _whatif(b)
    _calibration(b)
    _parameters(b)
    _site_rmf(b)
    _check(b)
    _xlwings_conf_sheet(b)
    for hidden in ("Tables", "Lists"):       # the hidden sheets last
        sheet = b.wb[hidden]
        b.wb.move_sheet(sheet, offset=len(b.wb.sheetnames) - 1 - b.wb.sheetnames.index(hidden))
    b.wb.active = 1  # Inputs
    b.wb.calculation.fullCalcOnLoad = True
    return b.wb, b


def evaluated_values(wb, b) -> dict:
    """What every formula of a built workbook evaluates to with its inputs, by the formula engine.

    The workbook is saved to a temporary file and recalculated by
    :func:`cryptoplan.workbook.recalculation.load_engine` (the engine of ``cryptoplan recalc``), so the
    values are the engine's, not a second computation beside the formulas.

    Returns
    -------
    dict
        ``{(sheet, coord): value}`` for every formula cell and every cell a dynamic array
        spills into; a value is a float, bool, str (error text included), None (empty) or an
        error string such as ``"#N/A"``.
    """
    from openpyxl.utils.cell import range_boundaries

    from .recalculation import load_engine
    with tempfile.TemporaryDirectory(prefix="cryptoplan-template-") as tmp:
        path = Path(tmp) / "template.xlsx"
        wb.save(path)
        engine = load_engine(path)
        engine.evaluate()
        out = {}
        for sheet, coord in b.formulas:
            cells = [coord]
            f = wb[sheet][coord].value
            if isinstance(f, ArrayFormula):
                c1, r1, c2, r2 = range_boundaries(f.ref)
                cells = [f"{get_column_letter(c)}{r}" for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]
            for cell in cells:
                v = engine.value(f"'{sheet}'!{cell}").element(0)
                out[(sheet, cell)] = v if isinstance(v, (float, bool, str, type(None))) else str(v)
    return out


def snapshot(sheet: str):
    """The template with ``sheet`` alone, its formulas replaced by their values (for rendering).

    LibreOffice without the Calc add-in cannot evaluate cryptoplan functions; the snapshot
    shows what the formula engine computes for the default inputs, charts included.
    """
    wb, b = build_workbook()
    values = evaluated_values(wb, b)
    ws = wb[sheet]
    for (title, coord), v in values.items():
        if title == sheet:
            ws[coord] = v
    for other in list(wb.worksheets):
        if other.title != sheet:
            wb.remove(other)
    for name in list(wb.defined_names):
        del wb.defined_names[name]
    wb.active = 0
    return wb


# --------------------------------------------------------- dynamic arrays
_METADATA_XML = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<metadata xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:xda="http://schemas.microsoft.com/office/spreadsheetml/2017/dynamicarray">'
    '<metadataTypes count="1"><metadataType name="XLDAPR" minSupportedVersion="120000" copy="1" '
    'pasteAll="1" pasteValues="1" merge="1" splitFirst="1" rowColShift="1" clearFormats="1" '
    'clearComments="1" assign="1" coerce="1" cellMeta="1"/></metadataTypes>'
    '<futureMetadata name="XLDAPR" count="1"><bk><extLst>'
    '<ext uri="{bdbb8cdc-fa1e-496e-a857-3c3f30c029c3}">'
    '<xda:dynamicArrayProperties fDynamic="1" fCollapsed="0"/></ext></extLst></bk>'
    '</futureMetadata><cellMetadata count="1"><bk><rc t="1" v="0"/></bk></cellMetadata>'
    '</metadata>')
_METADATA_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheetMetadata+xml"
_METADATA_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/sheetMetadata"


def _sheet_parts(zf: zipfile.ZipFile) -> dict:
    """Sheet title -> part name inside the package (via workbook.xml and its relationships)."""
    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    rel_id = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    rels = ElementTree.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target") for r in rels}
    out = {}
    for sheet in ElementTree.fromstring(zf.read("xl/workbook.xml")).iter(f"{main}sheet"):
        t = targets[sheet.get(rel_id)].lstrip("/")
        out[sheet.get("name")] = t if t.startswith("xl/") else "xl/" + t
    return out


def _add_dynamic_array_metadata(package: bytes, cells: list) -> bytes:
    """``package`` with ``cells`` ((sheet, coord) holding array formulas) marked as dynamic arrays."""
    if not cells:
        return package
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        items = {i.filename: zf.read(i.filename) for i in zf.infolist()}
        parts = _sheet_parts(zf)
    for sheet, coord in cells:
        part = parts[sheet]
        xml = items[part].decode("utf-8")
        pattern = re.compile(rf'<c r="{coord}"(?![^>]*\bcm=)([^>]*)>(\s*<f t="array")')
        xml, count = pattern.subn(rf'<c r="{coord}" cm="1"\1>\2', xml)
        if count != 1:
            raise RuntimeError(f"array formula cell {sheet}!{coord} not found in {part}")
        items[part] = xml.encode("utf-8")
    ct = items["[Content_Types].xml"].decode("utf-8")
    if "/xl/metadata.xml" not in ct:
        ct = ct.replace("</Types>", f'<Override PartName="/xl/metadata.xml" '
                                    f'ContentType="{_METADATA_CT}"/></Types>')
    rels = items["xl/_rels/workbook.xml.rels"].decode("utf-8")
    if _METADATA_REL not in rels:
        ids = {int(i) for i in re.findall(r'Id="rId(\d+)"', rels)}
        rid = f"rId{max(ids, default=0) + 1}"
        rels = rels.replace("</Relationships>", f'<Relationship Id="{rid}" Type="{_METADATA_REL}" '
                                                f'Target="metadata.xml"/></Relationships>')
    items["[Content_Types].xml"] = ct.encode("utf-8")
    items["xl/_rels/workbook.xml.rels"] = rels.encode("utf-8")
    items["xl/metadata.xml"] = _METADATA_XML.encode("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in items.items():
            out.writestr(name, data)
    return buf.getvalue()


# ------------------------------------------------------------------ output
def write_template(path, force: bool = False) -> Path:
    """Write the template workbook to ``path`` atomically.

    Parameters
    ----------
    path : str or Path
        Destination ``.xlsx``.
    force : bool
        Overwrite an existing file.  Missing folders on the way are created.

    Returns
    -------
    Path
        The path written: formulas with their values at the default inputs as cached values.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``force`` is false.
    OutputError
        If the file cannot be written (a folder cannot be created, no permission,
        a full disk: the message names the path and the reason); nothing is left behind.
    """
    dest = Path(path)
    check_destination(dest)             # a name too long, a folder, a device: named before any work
    if dest.exists() and not force:
        raise FileExistsError(f"{dest} exists; use --force to overwrite it")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {dest}: cannot create the folder {dest.parent} "
                          f"({exc.strerror or exc})") from None
    wb, b = build_workbook()
    # the package is built in memory and written in one call: a full disk fails that write,
    # never a ZipFile left open on the file (its __del__ then failed again, "Exception ignored")
    buf = io.BytesIO()
    wb.save(buf)
    package = _add_dynamic_array_metadata(buf.getvalue(), b.dynamic_arrays)
    with atomic_target(dest) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(package)
        # every formula's value at the default inputs as its cached value (as `cryptoplan recalc
        # -o` writes it): a spreadsheet without the add-in, or a viewer, shows numbers, not
        # #NAME?; Excel still recalculates on open (fullCalcOnLoad)
        from .recalculation import RecalcError, recalculate
        try:
            recalculate(tmp, in_place=True)
        except RecalcError as exc:          # a write that failed (a full disk): say so, leave nothing
            raise OutputError(str(exc)) from None
        if not force and dest.exists():
            raise FileExistsError(f"{dest} appeared while writing; use --force to overwrite it")
    return dest


def _soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def render_pngs(out_dir, dpi: int = 110, timeout: float = 180.0) -> list:
    """Render each chart sheet (:data:`CHART_SHEETS`) of the template to a PNG.

    Each sheet is written alone as a values snapshot (see the module
    docstring), converted to PDF by LibreOffice headless with a private user
    profile, and its first page rasterised by ``pdftoppm``.

    Parameters
    ----------
    out_dir : str or Path
        Directory for ``<sheet>.png`` (created if needed).
    dpi : int
        Resolution passed to ``pdftoppm -r``.
    timeout : float
        Seconds allowed for each external command.

    Returns
    -------
    list of Path
        The PNG files written.

    Raises
    ------
    RuntimeError
        If ``soffice`` or ``pdftoppm`` is missing or fails.
    """
    soffice = _soffice()
    pdftoppm = shutil.which("pdftoppm")
    if not soffice or not pdftoppm:
        raise RuntimeError("rendering needs LibreOffice (soffice) and poppler-utils (pdftoppm)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="cryptoplan-render-") as tmpd:
        tmp = Path(tmpd)
        for title in CHART_SHEETS:
            wb = snapshot(title)
            slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()
            xlsx = tmp / f"{slug}.xlsx"
            wb.save(xlsx)
            profile = (tmp / "lo-profile").as_uri()
            cmd = [soffice, f"-env:UserInstallation={profile}", "--headless", "--norestore",
                   "--convert-to", "pdf", "--outdir", str(tmp), str(xlsx)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            pdf = tmp / f"{slug}.pdf"
            if r.returncode != 0 or not pdf.exists():
                raise RuntimeError(f"LibreOffice PDF export failed: {r.stderr.strip() or r.stdout}")
            target = out / slug
            r = subprocess.run([pdftoppm, "-png", "-r", str(dpi), "-singlefile", str(pdf),
                                str(target)], capture_output=True, text=True, timeout=timeout)
            png = target.with_suffix(".png")
            if r.returncode != 0 or not png.exists():
                raise RuntimeError(f"pdftoppm failed: {r.stderr.strip()}")
            written.append(png)
    return written
