"""The template planning workbook (``cryptoplan template -o planner.xlsx``).

The workbook is written with openpyxl.  Every result is a formula calling a
cryptoplan Excel function (:mod:`addin.udfs`) over the named input cells, so
it recalculates in Windows Excel once the functions are imported through the
xlwings add-in (README, "Excel on Windows").  Sheets:

``Guide``        how to use the workbook, what the error texts mean
``Inputs``       named, validated input cells (Excel's "Input" style)
``Results``      throughput, CPU per transaction by address space, card
                 utilization and queueing delay, cards required, bottleneck
``What-if``      tables over transaction rate and RSA key size, line charts
``Calibration``  ``=MODEL_FIGURES(ParamsFile)`` and ``=MODEL_PARAMETERS(ParamsFile)`` (dynamic arrays)
``Site RMF``     the RMF Crypto Hardware Activity lines a planner types in, for ``calibrate``
``Check``        Erlang C from native ``POISSON.DIST`` beside ``=ERLANGC()``
``xlwings.conf`` ``UDF MODULES = addin.udfs`` for the xlwings add-in
``Lists``        (hidden) the drop-down lists, taken from :mod:`model.params`

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
    chart sheet: a *values snapshot* of that sheet (each formula replaced by
    the value the same Python function returns for the default inputs; a
    chart point whose source is error text is left empty, which LibreOffice
    draws as a gap -- it draws ``#N/A`` as zero, Excel as a gap) is converted
    to PDF by LibreOffice (``soffice --headless --convert-to pdf``) and
    rasterised by
    ``pdftoppm -png``.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from xml.etree import ElementTree
from pathlib import Path

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference
from openpyxl.formatting.rule import CellIsRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.formula import ArrayFormula

import model
from addin.catalog import CATALOG
from model.figures import figure
from model.params import CIPHERS, ECC_KEY_SIZES, KEY_TYPES, MODES, POLICIES, RSA_KEY_SIZES
from model.tls import PLATFORMS as TLS_PLATFORMS
from ._atomic import OutputError, atomic_target

__all__ = [
    "TEMPLATE_DEFAULTS", "INPUTS", "CHART_SHEETS", "input_defaults", "build_workbook",
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

CHART_SHEETS = ("What-if",)
_CATALOG = {f.name: f for f in CATALOG}
_KEY_SIZES = tuple(RSA_KEY_SIZES) + tuple(ECC_KEY_SIZES)


@dataclass(frozen=True)
class _Input:
    name: str                  # defined name
    label: str
    unit: str
    number_format: str
    note: str
    choices: tuple = ()        # drop-down list (Lists sheet)
    validation: tuple = ()     # (type, operator, formula1, formula2) for numbers


INPUTS = (
    _Input("TxRate", "Transaction rate (request/reply)", "transactions/s", "#,##0.0",
           "Planned peak rate of AMS request/reply transactions.",
           validation=("decimal", "greaterThanOrEqual", "0", None)),
    _Input("MessageKB", "Message size", "KB", "#,##0.0", "1 MB = 1024 KB; 0 to 102400.",
           validation=("decimal", "between", "0", "102400")),
    _Input("Policy", "AMS policy", "", "@", "integrity: sign; privacy: sign + encrypt; "
           "confidentiality: encrypt (with key reuse).", choices=tuple(POLICIES)),
    _Input("KeyType", "Certificate key type", "", "@",
           "NISTECC supports the integrity policy only.", choices=tuple(KEY_TYPES)),
    _Input("KeySize", "Certificate key size", "bits", "0",
           "RSA 1024-4096, NISTECC 192-521.", choices=tuple(str(s) for s in _KEY_SIZES)),
    _Input("KeyReuse", "Key reuse (confidentiality only)", "messages", "#,##0",
           "Leave empty for integrity and privacy; a whole number or the text unlimited."),
    _Input("Recipients", "Recipients per message", "recipients", "0",
           "One key_encrypt per recipient (privacy, confidentiality).",
           validation=("whole", "greaterThanOrEqual", "1", None)),
    _Input("Requesters", "Parallel requesters", "requesters", "0",
           "Each has one request outstanding (closed loop): drives the throughput result.",
           validation=("whole", "between", "1", "100000")),
    _Input("Coprocessors", "Crypto Express coprocessors (CCA mode)", "cards", "0",
           "Cards in coprocessor mode available to the LPAR.",
           validation=("whole", "between", "1", "64")),
    _Input("Accelerators", "Crypto Express accelerators", "cards", "0",
           "Cards in accelerator mode available to the LPAR.",
           validation=("whole", "between", "1", "64")),
    _Input("Processors", "General processors (CPs) of the LPAR", "processors", "0",
           "CPs serving the AMS work: they carry its CPU at TxRate and bound the closed-loop rate.",
           validation=("whole", "between", "1", "256")),
    _Input("MaxUtilization", "Utilization ceiling per card", "%", "0%",
           "Target for the cards-required results, e.g. 70%.",
           validation=("decimal", "between", "0.01", "1")),
    _Input("MaxWaitMs", "Queueing-delay ceiling per transaction", "ms", "0.000",
           "Optional target for the cards-required results; empty for none.",
           validation=("decimal", "greaterThan", "0", None)),
    _Input("Mode", "MQ channel protection", "", "@",
           "none, SSLCIPH (MQ TLS) or ATTLS (AT-TLS).", choices=tuple(MODES)),
    _Input("Cipher", "Cipher (IBM name)", "", "@",
           "Used with Mode for the channel results.", choices=tuple(CIPHERS)),
    _Input("SSLRKEYC", "SSLCIPH secret-key reset (SSLRKEYC)", "bytes", "#,##0",
           "0 = never (as measured); SSLCIPH only: renegotiation CPU is added to CHIN.",
           validation=("whole", "between", "0", "999999999")),
    _Input("Platform", "Machine generation (AMS CPU, channel results)", "", "@",
           "z14, z15 or z16. AMS CPU: the published z14->z15 cost ratios; channels: the z15 "
           "costs (z16 uses z15's for both, none being published for z16); channel starts: "
           "the z15 or z16 column of the start table (none for z14).",
           choices=tuple(TLS_PLATFORMS)),
    _Input("ChannelPairs", "Channel pairs (request/reply)", "pairs", "#,##0",
           "Sender-receiver channel pairs between the two queue managers, each with one "
           "requester: drives the channel throughput.",
           validation=("whole", "between", "1", str(int(figure("ref_maxchl_range").high) // 2))),
    _Input("SSLTASKS", "SSL tasks per channel initiator (SSLTASKS)", "tasks", "0",
           "SSLCIPH encryption runs on these; channels are spread over them.",
           validation=("whole", "greaterThanOrEqual", "1", None)),
    _Input("CHIDISPS", "Dispatchers per channel initiator (CHIDISPS)", "tasks", "0",
           "Network sends and receives run on these; channels are spread over them.",
           validation=("whole", "between", "1", str(int(figure("ref_chidisps_range").high)))),
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
    """Writes formulas, and in snapshot mode the values they evaluate to.

    ``values[(sheet, coord)]`` holds what each formula cell evaluates to with
    the default inputs, computed by calling the same :mod:`addin.udfs`
    functions Excel calls; the snapshot workbook (chart rendering) writes
    these values instead of the formulas.
    """

    def __init__(self, snapshot: bool):
        self.snapshot = snapshot
        self.inputs = input_defaults()
        self.values: dict = {}
        self.formulas: dict = {}           # (sheet, coord) -> formula text, both modes
        self.dynamic_arrays: list = []     # (sheet, coord) of spilling formulas
        self.wb = Workbook()
        # imported here: xlwings (behind addin.udfs) takes ~0.4 s to import, which every
        # other cryptoplan command would otherwise pay
        from addin import udfs
        self.udfs = udfs

    def _resolve(self, ws, arg):
        if arg is _OMITTED:
            return None
        if isinstance(arg, _Name):
            return self.inputs[str(arg)]
        if isinstance(arg, _Cell):
            return self.values[(ws.title, str(arg))]
        return arg

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
        """Write ``=NAME(args)`` to ``coord`` (the value in snapshot mode).

        A function that evaluates with a parameter file gets the ``ParamsFile`` input as its
        last argument (arguments between left out: their defaults).
        """
        args = self._with_params(name, args)
        formula = f"={name}({','.join(self._render(a) for a in args)})"
        value = getattr(self.udfs, name)(*(self._resolve(ws, a) for a in args))
        self._put(ws, coord, formula, value, number_format)
        return value

    def native(self, ws, coord: str, formula: str, value, number_format: str | None = None,
               keep: bool = False):
        """Write a native Excel formula whose default-input value is ``value``.

        ``keep`` keeps the formula in snapshot mode too (LibreOffice evaluates it).
        """
        self._put(ws, coord, formula, value, number_format, keep)
        return value

    def _put(self, ws, coord, formula, value, number_format, keep=False):
        self.values[(ws.title, coord)] = value
        self.formulas[(ws.title, coord)] = formula
        ws[coord] = formula if (keep or not self.snapshot) else value
        if number_format:
            ws[coord].number_format = number_format

    def dynamic_array(self, ws, coord: str, name: str, width_hint: int):
        """A spilling table function at ``coord`` (header row + rows), given ParamsFile if it takes it."""
        args = self._with_params(name, ())
        table = getattr(self.udfs, name)(*(self._resolve(ws, a) for a in args))
        rows = table if isinstance(table, list) else [[table]]
        formula = f"={name}({','.join(self._render(a) for a in args)})"
        self.values[(ws.title, coord)] = table
        self.formulas[(ws.title, coord)] = formula
        if self.snapshot:
            for i, row in enumerate(rows):
                for j, v in enumerate(row):
                    ws.cell(ws[coord].row + i, ws[coord].column + j, v)
            return rows
        top, left = ws[coord].row, ws[coord].column
        height = max(1, len(rows))
        width = max(1, len(rows[0]) if isinstance(table, list) else width_hint)
        ref = f"{coord}:{get_column_letter(left + width - 1)}{top + height - 1}"
        ws[coord] = ArrayFormula(ref, formula)
        self.dynamic_arrays.append((ws.title, coord))
        return rows


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
         "installed (README, section 'Excel on Windows'). Save this file as .xlsm "
         "(macro-enabled); in the VBA editor (Alt+F11) tick xlwings under Tools > References; "
         "click Import Functions in the xlwings ribbon (the sheet xlwings.conf already names the "
         "module addin.udfs); press Ctrl+Alt+F9 to recalculate everything. #NAME? in a result "
         "means the functions are not imported yet."),
        ("2. Enter inputs", "Sheet Inputs: orange cells only. Drop-downs list the accepted "
         "policies, key types and sizes, channel modes and ciphers. Every input cell has a name "
         "(TxRate, MessageKB, Policy, ...) used by the formulas."),
        ("3. Read results", "Sheet Results: every number is a cryptoplan function over the "
         "named inputs. What-if: the same results over a range of transaction rates and RSA key "
         "sizes, with charts. Calibration: IBM's published measurements beside the model's "
         "values and the fitted parameters. Site RMF: your RMF crypto report's lines, for "
         "cryptoplan calibrate. Check: Erlang C from native Excel functions beside "
         "the add-in's ERLANGC, as a self-test."),
        ("Errors in cells", "A cryptoplan function never leaves a cell blank. Bad input shows "
         "'#VALUE! FUNCTION: message' naming the argument and the accepted range; a card or "
         "queue that cannot keep up shows '#NUM! FUNCTION: ...'. These are text (xlwings cannot "
         "return real Excel error values): arithmetic on them gives #VALUE!, and cryptoplan "
         "functions pass them on unchanged. Test with ISNUMBER(); charts use "
         "IF(ISNUMBER(x),x,NA()) so that failures show as gaps, not zeros."),
        ("Without Windows Excel", "Use the batch recalculation command 'cryptoplan recalc' "
         "(README) on this file, or call the same functions from Python: "
         "'from addin.udfs import ERLANGC'."),
        ("Units", "Rates per second, times in ms or µs (CPU microseconds per transaction), "
         "message sizes in KB (1 MB = 1024 KB), key sizes in bits. The unit is part of each "
         "number's format."),
        ("Sources", "Model parameters are fitted to the IBM MQ for z/OS and z/OS Communications "
         "Server performance reports listed on the Calibration sheet (column source). The input "
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
            dv.error = f"{inp.label}: {inp.note}"[:225]
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


def _results(b: _Builder):
    ws = b.wb.create_sheet("Results")
    ws["A1"] = "Results at the inputs"
    ws["A1"].font = _TITLE
    ws["A2"] = ("Every value is a cryptoplan function over the named inputs (column C shows "
                "which). Text starting with #VALUE! or #NUM! explains what is wrong.")
    ws["A2"].font = _NOTE
    _header_row(ws, 4, ["Result", "Value", "Function", "What it means", "Message (if any)"])
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
        ("Accelerator utilization (RMF summary)", "CARD_UTILIZATION",
         (n("TxRate"), *_AMS, "accelerator", n("Accelerators"), n("Recipients")), F_PCT,
         "Requests x EXEC TIME per card, as RMF prints it; #NUM! when they cannot keep up."),
        ("Coprocessor utilization (RMF summary)", "CARD_UTILIZATION",
         (n("TxRate"), *_AMS, "coprocessor", n("Coprocessors"), n("Recipients")), F_PCT,
         "Requests x EXEC TIME per card, as RMF prints it; #NUM! when they cannot keep up."),
        ("Accelerator queueing delay per transaction", "CRYPTO_WAIT_MS",
         (n("TxRate"), *_AMS, "accelerator", n("Accelerators"), n("Recipients")), F_MS,
         "Mean wait for the accelerators, summed over a transaction's requests (M/G/c, the ME/CRT mix)."),
        ("Coprocessor queueing delay per transaction", "CRYPTO_WAIT_MS",
         (n("TxRate"), *_AMS, "coprocessor", n("Coprocessors"), n("Recipients")), F_MS,
         "Mean wait for the coprocessors, summed over a transaction's requests (M/G/c)."),
        ("Accelerators required", "ACCELERATORS_REQUIRED",
         (n("TxRate"), *_AMS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients")), F_CARDS,
         "Fewest accelerators within MaxUtilization (and MaxWaitMs if given)."),
        ("Coprocessors required", "COPROCESSORS_REQUIRED",
         (n("TxRate"), *_AMS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients")), F_CARDS,
         "Fewest coprocessors within MaxUtilization (and MaxWaitMs if given)."),
        ("bottleneck",),
        ("verdict",),
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
                       f'"coprocessors"),IF(LEFT({ua},5)="#NUM!","accelerators (saturated)",'
                       f'IF(LEFT({uc},5)="#NUM!","coprocessors (saturated)",'
                       f'"see the errors above")))')
            va, vc = b.values[("Results", ua)], b.values[("Results", uc)]
            if isinstance(va, float) and isinstance(vc, float):
                value = "accelerators" if va >= vc else "coprocessors"
            elif str(va).startswith("#NUM!"):
                value = "accelerators (saturated)"
            elif str(vc).startswith("#NUM!"):
                value = "coprocessors (saturated)"
            else:
                value = "see the errors above"
            ws.cell(row, 1, "Bottleneck at TxRate (busiest card type)")
            b.native(ws, f"B{row}", formula, value)
            ws.cell(row, 3, "native formula")
            ws.cell(row, 4, "The card type with the higher utilization.")
            row += 1
            continue
        if spec[0] == "verdict":
            ra, rc = where["Accelerators required"], where["Coprocessors required"]
            formula = (f'=IF(AND(ISNUMBER({ra}),ISNUMBER({rc})),IF(AND({ra}<=Accelerators,'
                       f'{rc}<=Coprocessors),"installed cards meet the targets",'
                       f'"add cards: installed < required"),"see the errors above")')
            va, vc = b.values[("Results", ra)], b.values[("Results", rc)]
            if isinstance(va, int) and isinstance(vc, int):
                ok = va <= b.inputs["Accelerators"] and vc <= b.inputs["Coprocessors"]
                value = ("installed cards meet the targets" if ok
                         else "add cards: installed < required")
            else:
                value = "see the errors above"
            ws.cell(row, 1, "Verdict for the installed cards")
            b.native(ws, f"B{row}", formula, value)
            ws.cell(row, 3, "native formula")
            ws.cell(row, 4, "Compares the required counts with Coprocessors and Accelerators.")
            row += 1
            continue
        label, fname, args, fmt, note = spec
        ws.cell(row, 1, label)
        b.udf(ws, f"B{row}", fname, *args, number_format=fmt)
        ws.cell(row, 3, fname).font = _NOTE
        ws.cell(row, 4, note)
        # The last column repeats error text in full: text in the last used column
        # overflows into the empty cells to its right, so the whole message is readable
        # (Excel does not re-fit row heights when a formula result changes, so wrapping
        # the value cell would not show it).
        value = b.values[("Results", f"B{row}")]
        b.native(ws, f"E{row}", f'=IF(ISNUMBER(B{row}),"",B{row})',
                 "" if isinstance(value, (int, float)) else value)
        ws.cell(row, 5).font = Font(color="9C0006")
        where.setdefault(label, f"B{row}")
        row += 1
    for r in range(5, row):
        if ws.cell(r, 2).value is not None:
            ws.cell(r, 2).font = Font(bold=True)
    _widths(ws, {"A": 46, "B": 30, "C": 26, "D": 78, "E": 60})
    ws.freeze_panes = "A5"
    _page(ws, f"A1:E{row - 1}")     # the message column prints too


_RATE_FACTORS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0)


def _na(b, ws, coord, source, number_format):
    """Chart series cell: the value, or #N/A (a gap) where the source is error text."""
    v = b.values[(ws.title, source)]
    formula = f"=IF(ISNUMBER({source}),{source},NA())"
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        b.native(ws, coord, formula, v, number_format)
    else:
        b.native(ws, coord, formula, None, number_format)
        if b.snapshot:
            # Excel draws #N/A as a gap; LibreOffice draws it as 0, so the
            # rendering snapshot leaves the cell empty (a gap in both).
            ws[coord] = None


def _whatif(b: _Builder):
    ws = b.wb.create_sheet("What-if")
    ws["A1"] = "What-if: transaction rate and key size"
    ws["A1"].font = _TITLE
    ws["A2"] = ("Other inputs come from the Inputs sheet. Chart series (right) turn error text "
                "into #N/A so that a saturated card shows as a gap, not as zero.")
    ws["A2"].font = _NOTE
    n = _Name
    # --- rate sweep -------------------------------------------------------
    _heading(ws, 4, "Transaction rate sweep (multiples of TxRate)")
    heads = ["Transaction rate", "Accelerator utilization", "Coprocessor utilization",
             "Accelerators required", "Coprocessors required", "Accelerator delay per txn",
             "Coprocessor delay per txn"]
    _header_row(ws, 5, heads)
    for j, text in enumerate(["Rate (chart)", "Accel. util.", "Coproc. util.", "Accel. req.",
                              "Coproc. req."], 9):
        c = ws.cell(5, j, text)
        c.font = Font(bold=True, color="595959")
    first = 6
    for i, k in enumerate(_RATE_FACTORS):
        r = first + i
        rate = b.inputs["TxRate"] * k
        b.native(ws, f"A{r}", f"=TxRate*{k:g}", rate, '#,##0 "txn/s"')
        acc = (_Cell(f"A{r}"), *_AMS, "accelerator", n("Accelerators"), n("Recipients"))
        cop = (_Cell(f"A{r}"), *_AMS, "coprocessor", n("Coprocessors"), n("Recipients"))
        b.udf(ws, f"B{r}", "CARD_UTILIZATION", *acc, number_format=F_PCT)
        b.udf(ws, f"C{r}", "CARD_UTILIZATION", *cop, number_format=F_PCT)
        req = (_Cell(f"A{r}"), *_AMS, n("MaxUtilization"), n("MaxWaitMs"), n("Recipients"))
        b.udf(ws, f"D{r}", "ACCELERATORS_REQUIRED", *req, number_format=F_CARDS)
        b.udf(ws, f"E{r}", "COPROCESSORS_REQUIRED", *req, number_format=F_CARDS)
        b.udf(ws, f"F{r}", "CRYPTO_WAIT_MS", *acc, number_format=F_MS)
        b.udf(ws, f"G{r}", "CRYPTO_WAIT_MS", *cop, number_format=F_MS)
        b.native(ws, f"I{r}", f"=A{r}", rate, '#,##0')
        _na(b, ws, f"J{r}", f"B{r}", F_PCT)
        _na(b, ws, f"K{r}", f"C{r}", F_PCT)
        _na(b, ws, f"L{r}", f"D{r}", "0")
        _na(b, ws, f"M{r}", f"E{r}", "0")
    last = first + len(_RATE_FACTORS) - 1
    # --- key-size sweep ---------------------------------------------------
    k0 = last + 3
    _heading(ws, k0, "RSA key size sweep (KeyType taken as RSA)")
    _header_row(ws, k0 + 1, ["RSA key size", "Throughput", "CPU per transaction"])
    ws.cell(k0 + 1, 9, "Key size (chart)").font = Font(bold=True, color="595959")
    ws.cell(k0 + 1, 10, "Throughput").font = Font(bold=True, color="595959")
    req = (n("Requesters"), n("Coprocessors"), n("Accelerators"), n("Recipients"))
    kfirst = k0 + 2
    for i, size in enumerate(RSA_KEY_SIZES):
        r = kfirst + i
        ws.cell(r, 1, size).number_format = '0 "bits"'
        b.values[(ws.title, f"A{r}")] = size
        ams = (n("Policy"), "RSA", _Cell(f"A{r}"), n("MessageKB"), n("KeyReuse"))
        b.udf(ws, f"B{r}", "AMS_THROUGHPUT", *ams, *req, number_format=F_TPS)
        b.udf(ws, f"C{r}", "AMS_COST_US", *ams, *req, "total", n("Platform"), number_format=F_US)
        ws.cell(r, 9, size)
        _na(b, ws, f"J{r}", f"B{r}", "#,##0")
    klast = kfirst + len(RSA_KEY_SIZES) - 1
    # --- charts -----------------------------------------------------------
    def line(title, y_title, x_title, cols, cats, first_row, last_row, y_fmt=None):
        ch = LineChart()
        ch.title = title
        ch.y_axis.title = y_title
        ch.x_axis.title = x_title
        ch.height, ch.width = 7.5, 10.3
        ch.display_blanks = "gap"
        for col in cols:
            ch.add_data(Reference(ws, min_col=col, min_row=first_row - 1, max_row=last_row),
                        titles_from_data=True)
        ch.set_categories(Reference(ws, min_col=cats, min_row=first_row, max_row=last_row))
        for series in ch.series:
            series.smooth = False          # straight segments: no spline overshoot
            series.marker.symbol = "circle"
            series.marker.size = 5
        if y_fmt:
            ch.y_axis.numFmt = y_fmt
        ch.y_axis.delete = False
        ch.x_axis.delete = False
        ch.legend.position = "b"
        return ch
    c1 = line("Card utilization vs transaction rate", "utilization", "transactions/s",
              (10, 11), 9, first, last, "0%")
    c2 = line("Cards required vs transaction rate", "cards", "transactions/s", (12, 13), 9,
              first, last, "0")
    c3 = line("AMS throughput vs RSA key size", "transactions/s", "RSA key size (bits)", (10,), 9,
              kfirst, klast, "#,##0")
    anchor_row = klast + 3
    # three charts side by side under the tables (anchors match the column widths)
    ws.add_chart(c1, f"A{anchor_row}")
    ws.add_chart(c2, f"E{anchor_row}")
    ws.add_chart(c3, f"J{anchor_row}")
    _widths(ws, {"A": 16, "B": 14, "C": 14, "D": 13, "E": 13, "F": 15, "G": 15, "H": 3,
                 "I": 14, "J": 12, "K": 12, "L": 11, "M": 11})
    ws.row_dimensions[5].height = 30
    ws.row_dimensions[k0 + 1].height = 30
    ws.freeze_panes = "B6"
    _page(ws, f"A1:M{anchor_row + 15}")
    ws.page_setup.fitToHeight = 1  # one page: the PNG rendering and a printout


def _calibration(b: _Builder):
    ws = b.wb.create_sheet("Calibration")
    ws["A1"] = "Calibration: published measurements vs model"
    ws["A1"].font = _TITLE
    ws["A2"] = ("The formulas in A5 (MODEL_FIGURES) and L5 (MODEL_PARAMETERS) are dynamic "
                "arrays that spill down and right. within_tolerance FALSE is highlighted.")
    ws["A2"].font = _NOTE
    ws["A4"] = "Published vs model"
    ws["A4"].font = _SECTION
    ws["L4"] = "Fitted parameters"
    ws["L4"].font = _SECTION
    fig = next(f for f in CATALOG if f.name == "MODEL_FIGURES")
    par = next(f for f in CATALOG if f.name == "MODEL_PARAMETERS")
    rows_f = b.dynamic_array(ws, "A5", "MODEL_FIGURES", len(fig.columns))
    rows_p = b.dynamic_array(ws, "L5", "MODEL_PARAMETERS", len(par.columns))
    height = max(len(rows_f), len(rows_p), 2)
    for c in [*range(1, 1 + len(fig.columns)), *range(12, 12 + len(par.columns))]:
        ws.cell(5, c).font = Font(bold=True)  # formats persist under the spilled header
    last = 5 + max(height, 200)
    for col in ("F", "G", "H", "M", "N"):
        for r in range(6, last + 1):
            ws[f"{col}{r}"].number_format = "0.0000"
    ws.conditional_formatting.add(f"I6:I{last}", CellIsRule(
        operator="equal", formula=["FALSE"], fill=PatternFill("solid", fgColor="FFC7CE"),
        font=Font(color="9C0006")))
    _widths(ws, {"A": 34, "B": 26, "C": 20, "D": 16, "E": 12, "F": 12, "G": 12, "H": 12,
                 "I": 10, "J": 3, "K": 3, "L": 24, "M": 12, "N": 12, "O": 10, "P": 12, "Q": 50})
    ws.freeze_panes = "A6"
    _page(ws, f"A1:Q{4 + height}")


def _site_rmf(b: _Builder):
    """The Site RMF sheet: the planner types the RMF Crypto Hardware Activity report's lines."""
    from model.calibrate import RMF_COLUMNS, RMF_FUNCTIONS

    from .site_rmf import HEADER_ROW, RMF_SHEET
    ws = b.wb.create_sheet(RMF_SHEET)
    ws["A1"] = "Site RMF: your crypto report"
    ws["A1"].font = _TITLE
    notes = ("Type the lines of your RMF Crypto Hardware Activity report, one row per printed line: TYPE as "
             "printed (CEX8C coprocessor, CEX8A accelerator), ID the card, FUNCTION TOTAL for a card's line or "
             "ME / CRT for an accelerator's RSA lines (KEY = their key length), RATE per second, EXEC TIME in "
             "ms, UTIL% in percent.",
             "Then, in a terminal: cryptoplan calibrate --rmf <this workbook> --out site-params.json, and "
             "recalculate with CRYPTOPLAN_PARAMS=site-params.json: the card times become yours (the README "
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
    ws["A2"].font = _NOTE
    _header_row(ws, 4, ["Traffic A (erlangs)", "Servers c", "Utilization A/c",
                        "Erlang B (native)", "Erlang C (native)", "ERLANGC (add-in)",
                        "Add-in minus native"])
    for i, (a, c) in enumerate(CHECK_PAIRS, 5):
        ws.cell(i, 1, a).style = "Input"
        ws.cell(i, 1).number_format = "0.00"
        ws.cell(i, 2, c).style = "Input"
        ws.cell(i, 2).number_format = "0"
        b.values[("Check", f"A{i}")], b.values[("Check", f"B{i}")] = a, c
        bval = float(model.erlang_b(a, c))
        cval = float(model.erlang_c(a, c))
        b.native(ws, f"C{i}", f"=A{i}/B{i}", a / c, "0.0%", keep=True)
        b.native(ws, f"D{i}", f"=_xlfn.POISSON.DIST(B{i},A{i},FALSE)/_xlfn.POISSON.DIST(B{i},A{i},TRUE)",
                 bval, "0.000000000000", keep=True)
        b.native(ws, f"E{i}", f"=D{i}/(1-(A{i}/B{i})*(1-D{i}))", cval, "0.000000000000", keep=True)
        b.udf(ws, f"F{i}", "ERLANGC", _Cell(f"A{i}"), _Cell(f"B{i}"),
              number_format="0.000000000000")
        b.native(ws, f"G{i}", f'=IF(ISNUMBER(F{i}),F{i}-E{i},"add-in value missing")', 0.0,
                 "0.0E+00", keep=True)
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
    ws["A1"], ws["B1"] = "UDF MODULES", "addin.udfs"
    ws["D1"] = ("Read by the xlwings add-in (Import Functions): the Python module with the "
                "cryptoplan functions. Keys in column A, values in column B, no blank rows.")
    ws["D1"].font = _NOTE
    _widths(ws, {"A": 16, "B": 16, "D": 100})


def build_workbook(snapshot: bool = False):
    """Build the planning workbook in memory.

    Parameters
    ----------
    snapshot : bool
        Write the values the formulas evaluate to with the default inputs
        instead of the cryptoplan formulas (native formulas on the Check sheet
        and chart-gap ``=NA()`` are kept).  Used to render charts without Excel.

    Returns
    -------
    (openpyxl.Workbook, _Builder)
        The workbook and its builder (``formulas``, ``values``,
        ``dynamic_arrays``).
    """
    b = _Builder(snapshot)
    _guide(b)
    refs = _lists(b)
    _inputs(b, refs)
    _results(b)
    _whatif(b)
    _calibration(b)
    _site_rmf(b)
    _check(b)
    _xlwings_conf_sheet(b)
    lists = b.wb["Lists"]
    b.wb.move_sheet(lists, offset=len(b.wb.sheetnames) - 1 - b.wb.sheetnames.index("Lists"))
    b.wb.active = 1  # Inputs
    b.wb.calculation.fullCalcOnLoad = True
    return b.wb, b


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


def _add_dynamic_array_metadata(path: Path, cells: list) -> None:
    """Mark ``cells`` ((sheet, coord) holding array formulas) as dynamic arrays, in place."""
    if not cells:
        return
    with zipfile.ZipFile(path) as zf:
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
    # ``path`` is already atomic_target's temporary file: rewrite it in place, no second temporary
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in items.items():
            out.writestr(name, data)
    path.write_bytes(buf.getvalue())


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
        The path written.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``force`` is false.
    OutputError
        If the file cannot be written (a folder cannot be created, no permission,
        a full disk: the message names the path and the reason); nothing is left behind.
    """
    dest = Path(path)
    if dest.exists() and not force:
        raise FileExistsError(f"{dest} exists; use --force to overwrite it")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {dest}: cannot create the folder {dest.parent} "
                          f"({exc.strerror or exc})") from None
    wb, b = build_workbook()
    with atomic_target(dest) as tmp:
        wb.save(tmp)
        _add_dynamic_array_metadata(Path(tmp), b.dynamic_arrays)
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
            wb, _ = build_workbook(snapshot=True)
            for ws in list(wb.worksheets):
                if ws.title != title:
                    wb.remove(ws)
            for name in list(wb.defined_names):
                del wb.defined_names[name]
            wb.active = 0
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
