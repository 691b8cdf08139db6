"""``cryptoplan recalc``: evaluate a workbook's formulas without Excel and save the values.

Python API: :func:`recalc` (outputs as a dict) and :func:`recalc_report` (the
full :class:`Recalculation`: outputs, problems, exit code, engine).

Exit codes of ``cryptoplan recalc`` (also :attr:`Recalculation.exit_code`):

===  =========================================================================
 0   every output was computed and none is an error
 1   every output was computed, but some hold an Excel error value (``#N/A``,
     ``#DIV/0!`` ...) or the add-in's error text (``#NUM! ERLANGC: ...``)
 2   bad command line (click's usage error): unknown option, malformed --set
 3   some output could not be computed by the engine: an unsupported
     function, a circular reference, a reference it cannot follow
 4   the file cannot be used and nothing was written: not an xlsx/xlsm, a
     truncated or corrupt package, unsafe XML (entity declarations / DTD), a
     part or cell count over the documented limits, an unknown --set name or
     sheet, a --set on a formula cell, an unwritable destination
===  =========================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptoplan.model.errors import CryptoplanError, InputError

import math
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from cryptoplan.addin.errors import ErrorText

from . import engine     # lazy package: format_number loads the engine's functions on first use
from .engine import (
    MAX_CELLS, CellWrite, Engine, EngineError, FunctionRegistry, OutputError, Package, WorkbookFileError,
    cell_name, index_to_col, write_package,
)
from .engine.values import (
    ERR_CIRCULAR, ERR_UNSUPPORTED, ERROR_TEXT, NOT_COMPUTED, STR, ExcelError, Val, number_to_text,
)
from cryptoplan.model.lazy import lazy_module

# the add-in catalog's functions (the model) and the parameter file: loaded on first use
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.workbook import catalog_functions
    from cryptoplan.model import params as model_params
else:
    catalog_functions = lazy_module("cryptoplan.workbook.catalog_functions")
    model_params = lazy_module("cryptoplan.model.params")

__all__ = [
    "recalc", "recalc_report", "recalculate", "open_workbook", "OpenWorkbook", "Recalculation", "Output", "Problem",
    "load_engine",
    "find_outputs", "parse_assignment", "format_value",
    "EXIT_OK", "EXIT_ERROR_VALUES", "EXIT_USAGE", "EXIT_NOT_COMPUTED", "EXIT_BAD_FILE",
]

EXIT_OK, EXIT_ERROR_VALUES, EXIT_USAGE, EXIT_NOT_COMPUTED, EXIT_BAD_FILE = 0, 1, 2, 3, 4


class RecalcError(CryptoplanError):
    """A workbook or request that cannot be processed (exit code 4); nothing is written."""


@dataclass
class Output:
    """One output cell.

    ``key`` is the Results-sheet label of the row (its leftmost text, column
    A in the template); a second formula in the same row gets ``label
    [column header]``; repeated keys get `` (Sheet!A1)`` appended; a cell
    without a label is keyed by its defined name, else ``Sheet!A1``.
    """

    key: str
    sheet: str
    cell: str
    value: object            # float, bool, str, None or ExcelError (first scenario)
    number_format: str = "General"
    names: tuple = ()

    @property
    def address(self) -> str:
        return f"{self.sheet}!{self.cell}"

    @property
    def is_error(self) -> bool:
        return is_error_value(self.value)

    @property
    def computed(self) -> bool:
        return not (isinstance(self.value, ExcelError) and not self.value.computed)

    def text(self) -> str:
        return format_value(self.value, self.number_format)


@dataclass
class Problem:
    """An error value, error text, unsupported function or cycle found in a cell."""

    where: str
    function: str
    kind: str               # unsupported | circular | error | error-text | engine | reference
    message: str
    affects_output: bool = False

    def text(self) -> str:
        if self.kind == "error-text":  # the add-in's text already names the function
            return f"{self.where}: {self.message}"
        return f"{self.where}: {self.function}: {self.message}"


@dataclass
class Recalculation:
    """Everything :func:`recalc_report` found."""

    path: str
    outputs: list[Output]
    problems: list[Problem]
    engine: Engine
    written: str | None = None
    set_cells: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {o.key: o.value for o in self.outputs}

    @property
    def exit_code(self) -> int:
        if any(not o.computed for o in self.outputs):
            return EXIT_NOT_COMPUTED
        if any(o.is_error for o in self.outputs):
            return EXIT_ERROR_VALUES
        return EXIT_OK

    def to_json(self) -> dict:
        # an error value that carries no text of its own (a formula Excel itself would refuse, such
        # as a function given too many arguments) takes the problem reported at its cell
        found: dict[str, str] = {}
        for p in self.problems:
            found.setdefault(p.where, p.message)
        return {
            "file": self.path,
            "written": self.written,
            "exit_code": self.exit_code,
            "outputs": [{"key": o.key, "cell": o.address, "value": _json_value(o.value),
                         "text": o.text(), "error": o.is_error,
                         "message": getattr(o.value, "message", "") or (found.get(o.address) if o.is_error else None),
                         "names": list(o.names)} for o in self.outputs],
            "problems": [{"cell": p.where, "function": p.function, "kind": p.kind,
                          "message": p.message, "affects_output": p.affects_output}
                         for p in self.problems],
        }


def is_error_value(v) -> bool:
    """An Excel error value, or the add-in's error text (recognized by its type)."""
    return isinstance(v, (ExcelError, ErrorText))


def _json_value(v):
    if isinstance(v, ExcelError):
        return str(v)
    if isinstance(v, float) and not math.isfinite(v):  # pragma: no cover - engine never does
        return str(v)
    return v


# ------------------------------------------------------------------ loading
def load_engine(path, *, n: int = 1, functions: FunctionRegistry | None = None,
                max_cells: int = MAX_CELLS) -> Engine:
    """Open ``path`` safely and return an :class:`~cryptoplan.workbook.engine.Engine` for ``n`` scenarios.

    Raises
    ------
    RecalcError
        For a file that is not a usable workbook (see the module's exit code 4).
    """
    try:
        pkg = Package(path, max_cells=max_cells)
    except WorkbookFileError as exc:
        raise RecalcError(str(exc)) from None
    if functions is None:
        functions = catalog_functions.default_functions()
        check_environment_parameters()
    return Engine(pkg, functions=functions, n=n)


def check_environment_parameters() -> None:
    """Refuse, once and before any cell is evaluated, a ``$CRYPTOPLAN_PARAMS`` that cannot be used.

    Without this check every cell calling a cryptoplan function would repeat the same
    message; the file is loaded here anyway (the cells then use the loaded set).

    Raises
    ------
    RecalcError
        The file is missing, not a regular file, too large or deep, not JSON or invalid.
    """
    try:
        model_params.current_parameters()
    except model_params.ParameterFileError as exc:
        raise RecalcError(f"{exc}" if "CRYPTOPLAN_PARAMS" in str(exc)
                          else f"CRYPTOPLAN_PARAMS: {exc}") from None


def parse_assignment(text: str) -> tuple[str, object]:
    """``"TxRate=2000"`` -> ``("TxRate", 2000.0)``; a non-numeric value stays text.

    The value is a number if Python's ``float`` accepts it (``1e3``, ``-5``),
    else the text as given (``Policy=privacy``; ``X==1+1`` sets the text
    ``"=1+1"``, never a formula).  An empty value empties the cell.
    """
    if "=" not in text:
        raise InputError(f"--set {text!r}: expected NAME=VALUE")
    name, value = text.split("=", 1)
    name = name.strip()
    if not name:
        raise InputError(f"--set {text!r}: the name is empty")
    check_utf8("--set: the name", name)
    try:
        return name, parse_value(value)
    except ValueError as exc:
        raise InputError(f"--set {name}: {exc}") from None


# A number as a spreadsheet user types it: no digit separators ("1_000" stays text), no
# "inf" or "nan" (text), an optional sign, decimals and exponent.
_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")


def check_utf8(what: str, text: str) -> None:
    """Refuse text with lone surrogates: how Python hands over bytes of a command line that
    are not UTF-8 (they would make the saved XML malformed)."""
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "backslashreplace")
        raise InputError(f"{what} {raw!r} is not valid UTF-8 text: give it in UTF-8")


def parse_value(value: str):
    """A ``--set NAME=VALUE`` value: empty is None, a number reads as float, anything else stays text."""
    check_utf8("the value", value)
    if value == "":
        return None
    if not _NUMBER.fullmatch(value):
        return value
    f = float(value)
    if not math.isfinite(f):
        raise InputError(f"the number {value!r} is outside the range of a spreadsheet number (about 1.8e308)")
    return f


# ------------------------------------------------------------------ outputs
def _results_sheet(engine: Engine):
    for sh in engine.sheets:
        if sh.name.lower() == "results" and sh.kind == "worksheet":
            return sh
    return None


def find_outputs(engine: Engine) -> list[tuple[str, tuple, tuple]]:
    """``[(key, (sheet, row, col), names)]`` of the output cells, in sheet order.

    Outputs are the formula cells of the ``Results`` sheet (any case), or of
    the first worksheet if there is none.  On a ``Results`` sheet a formula cell
    that shows text and has another formula to its right in the same row is a
    (computed) label, not an output; on another first sheet, which was not laid
    out for cryptoplan, every formula cell is an output and only constant text
    labels a row.  Keys: see :class:`Output`.
    """
    sh = _results_sheet(engine)
    computed_labels = sh is not None
    if sh is None:
        sh = next((s for s in engine.sheets if s.kind == "worksheet"), None)
        if sh is None:
            return []
    si = sh.index
    cells = sorted({(r, c) for (s, r, c) in (*engine.formulas, *engine.spill_owner) if s == si})
    by_row: dict[int, list[int]] = {}
    for r, c in cells:
        by_row.setdefault(r, []).append(c)
    names_of = _names_by_cell(engine)
    out: list[tuple[str, tuple[int, int, int], tuple[str, ...]]] = []
    for r in sorted(by_row):
        outs = _row_outputs(engine, si, r, by_row[r], computed_labels)
        label = _label(engine, si, r, outs[0], computed_labels) if outs else None
        for i, c in enumerate(outs):
            key = (si, r, c)
            names = tuple(sorted(names_of.get(key, ())))
            k = f"{label} [{_header(engine, si, r, c)}]" if label and i > 0 else label
            out.append((k or (names[0] if names else f"{sh.name}!{cell_name(r, c)}"), key, names))
    # disambiguate repeated labels with the cell address
    counts: dict[str, int] = {}
    for k, _, _ in out:
        counts[k] = counts.get(k, 0) + 1
    return [(f"{k} ({sh.name}!{cell_name(key[1], key[2])})" if counts[k] > 1 else k, key, names)
            for k, key, names in out]


def _names_by_cell(engine: Engine) -> dict[tuple, list[str]]:
    """``{(sheet, row, col): [defined names]}`` of every name that locates a single cell."""
    names_of: dict[tuple, list[str]] = {}
    for scope, name in engine.names():
        try:
            key = engine.locate(name if scope is None else f"'{engine.sheets[scope].name}'!{name}")
        except EngineError:
            continue
        names_of.setdefault(key, []).append(name)
    return names_of


def _row_outputs(engine: Engine, si: int, r: int, cols: list[int], computed_labels: bool) -> list[int]:
    """The output columns of row ``r``: formula cells that are neither a computed label (text
    with another formula to its right, on a Results sheet) nor an echo of the row's first output."""
    outs = [c for c in cols if not (computed_labels and _is_text_formula(engine, (si, r, c))
                                    and any(x > c for x in cols))]
    # a cell that only repeats the row's first output's text (the template's message column,
    # =IF(ISNUMBER(B5),"",B5), which lets a long error text overflow) adds nothing
    return outs[:1] + [c for c in outs[1:] if not _echoes(engine, (si, r, c), (si, r, outs[0]))]


def _echoes(engine, key, first) -> bool:
    """True if ``key`` shows, in every scenario, empty text or exactly ``first``'s text."""
    v, f = engine.values.get(key), engine.values.get(first)
    if v is None or f is None or v.text is None or not bool((v.kind == STR).all()):
        return False
    shape = np.broadcast_shapes(v.kind.shape, f.kind.shape)
    vt = np.broadcast_to(v.text, shape)
    ft = np.broadcast_to(f.text if f.text is not None else np.full(f.kind.shape, None, dtype=object), shape)
    fk = np.broadcast_to(f.kind, shape)
    same = (vt == "") | ((fk == STR) & (vt == ft))
    return bool(same.all())


def _is_text_formula(engine, key) -> bool:
    """A formula showing text that is not an add-in error text (a computed label)."""
    v = engine.values.get(key)
    if v is None or not bool((v.kind == STR).all()):
        return False
    return not any(isinstance(t, ErrorText) for t in v.text.flat)


def _text_at(engine, si, r, c, computed: bool = True):
    sh = engine.sheets[si]
    cell = sh.cells.get((r, c))
    if cell is None:
        return None
    if cell.formula is None:
        return cell.value.strip() if isinstance(cell.value, str) and cell.value.strip() else None
    if not computed:
        return None
    v = engine.values.get((si, r, c))
    if v is not None and v.kind[0, 0, 0] == STR:
        t = str(v.text[0, 0, 0]).strip()
        return t or None
    return None


def _label(engine, si, r, c, computed: bool = True):
    """The row's label: the leftmost text cell left of column ``c`` (a formula's text if ``computed``)."""
    for cc in range(1, c):
        t = _text_at(engine, si, r, cc, computed)
        if t:
            return " ".join(t.split())
    return None


def _header(engine, si, r, c):
    for rr in range(r - 1, 0, -1):
        cell = engine.sheets[si].cells.get((rr, c))
        if cell is not None and cell.formula is None and isinstance(cell.value, str) and cell.value.strip():
            return cell.value.strip()
    return index_to_col(c)


# ------------------------------------------------------------ formatting
def format_value(value, number_format: str = "General") -> str:
    """Text of a cell value as a table shows it: a number in its cell's number format, by the
    engine's one routine (:func:`cryptoplan.workbook.engine.format_number`, which TEXT() uses)."""
    if value is None:
        return ""
    if isinstance(value, ExcelError):
        return str(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return value
    try:
        return engine.format_number(float(value), number_format or "General")
    except Exception:  # noqa: BLE001 - display only: a format the routine does not know shows General
        return number_to_text(float(value))


# ------------------------------------------------------------------ running
def _python_value(v: Val, s: int = 0):
    return v.element(s)


def _problems(engine: Engine, output_keys: set) -> list[Problem]:
    affected = set()
    for key in output_keys:
        for origin, _d in engine.origins(key, limit=50):
            affected.add(origin)
    out = []
    for key in sorted(engine.diagnostics):
        for d in engine.diagnostics[key]:
            if d.code == catalog_functions.ERROR_TEXT_CODE:
                kind, msg = "error-text", d.message
            elif d.code == ERR_UNSUPPORTED:
                kind, msg = "unsupported", d.message
            elif d.code == ERR_CIRCULAR:
                kind, msg = "circular", d.message
            elif d.code in NOT_COMPUTED:
                kind, msg = "engine", d.message
            else:
                kind, msg = "error", f"{ERROR_TEXT[d.code]} {d.message}".strip()
            if d.scenarios > 1:
                msg += f" (in {d.scenarios} elements/scenarios)"
            out.append(Problem(engine.where(key), d.function, kind, msg,
                               key in affected or key in output_keys))
    return out


def recalc_report(path, inputs: dict | None = None, *, output=None, in_place: bool = False,
                functions: FunctionRegistry | None = None, max_cells: int = MAX_CELLS,
                engine: Engine | None = None) -> Recalculation:
    """Evaluate every formula of ``path`` (after setting ``inputs``); optionally save.

    Parameters
    ----------
    path : str or Path
        ``.xlsx`` or ``.xlsm``.
    inputs : dict, optional
        ``{defined name or "Sheet!A1": value}`` set before evaluating.
    output : str or Path, optional
        Write the recalculated workbook here (formulas kept, cached values
        filled in; see :mod:`cryptoplan.workbook.engine.package`).  Must differ from
        ``path`` unless ``in_place``.
    in_place : bool
        Overwrite ``path`` itself (atomically).
    functions : FunctionRegistry, optional
        Function registry (default: native + add-in catalog).
    max_cells : int
        Cell limit, default :data:`cryptoplan.workbook.engine.package.MAX_CELLS`.

    Returns
    -------
    Recalculation

    Raises
    ------
    RecalcError
        The file or a requested input cannot be used (nothing is written).
    """
    path = os.fspath(path)
    if engine is None:
        engine = load_engine(path, functions=functions, max_cells=max_cells)
    set_cells = {}
    try:
        for name, value in (inputs or {}).items():
            set_cells[engine.set_input(name, value)] = value
    except EngineError as exc:
        raise RecalcError(f"{path}: {exc}") from None
    engine.evaluate()
    outs = []
    for key, cell, names in find_outputs(engine):
        v = engine.cell_value(*cell)
        sh = engine.sheets[cell[0]]
        fmt = engine.package.number_format(sh.cells.get((cell[1], cell[2])))
        outs.append(Output(key, sh.name, cell_name(cell[1], cell[2]), _python_value(v), fmt, names))
    problems = _problems(engine, {o for _, o, _ in find_outputs(engine)})
    rec = Recalculation(path, outs, problems, engine, set_cells=set_cells)
    dest = path if in_place else (None if output is None else os.fspath(output))
    if dest is not None:
        _write(engine, path, dest, in_place, set_cells)
        rec.written = dest
    return rec


def _write(engine: Engine, src: str, dest: str, in_place: bool, set_cells: dict) -> None:
    if not in_place and os.path.exists(dest) and os.path.samefile(src, dest):
        raise RecalcError(f"{dest} is the input file; use --in-place to overwrite it")
    folder = os.path.dirname(os.path.abspath(dest))
    if not os.path.isdir(folder):
        raise RecalcError(f"{dest}: folder {folder} does not exist")
    src_macro = any(n.lower().endswith("vbaproject.bin") for n in engine.package.infos)
    if src_macro and dest.lower().endswith(".xlsx"):
        raise RecalcError(f"{src} contains macros (vbaProject.bin); write it to a .xlsm file, "
                          "Excel refuses an .xlsx with macro content")
    writes: dict[str, dict] = {}
    not_computed = False
    for key in list(engine.formulas) + list(engine.spill_owner):
        si, r, c = key
        v = engine.values.get(key)
        mode = "spill" if key in engine.spill_owner else "cached"
        if v is None:
            py = None
            not_computed = True
        else:
            py = _python_value(v)
            if isinstance(py, ExcelError) and not py.computed:
                py = None
                not_computed = True
            elif py is None:
                py = 0.0
        writes.setdefault(engine.sheets[si].part, {})[(r, c)] = CellWrite(mode, py)
    for (si, r, c), value in set_cells.items():
        writes.setdefault(engine.sheets[si].part, {})[(r, c)] = CellWrite("constant", value)
    full = not_computed or engine.uses_udf_or_volatile()
    try:
        write_package(engine.package, dest, writes, full_calc_on_load=full)
    except (WorkbookFileError, OutputError) as exc:
        raise RecalcError(str(exc)) from None
    except OSError as exc:
        raise RecalcError(f"{dest}: cannot write ({exc.strerror or exc})") from None


def recalculate(*args, **kwargs) -> Recalculation:
    """Deprecated name of :func:`recalc_report` (until 0.2): the two names ``recalc`` and
    ``recalculate`` did not say that one returns the outputs and the other the whole report."""
    warnings.warn("recalculate() is deprecated and will be removed in 0.2: use recalc_report() "
                  "(or recalc() for the outputs alone)", DeprecationWarning, stacklevel=2)
    return recalc_report(*args, **kwargs)


def recalc(path, inputs: dict | None = None, *, output=None,
           functions: FunctionRegistry | None = None) -> dict:
    """Recalculate a workbook and return its outputs.

    Parameters
    ----------
    path : str or Path
        The ``.xlsx``/``.xlsm`` workbook (e.g. from ``cryptoplan template``).
    inputs : dict, optional
        Inputs to change first: ``{"TxRate": 2000, "Policy": "privacy",
        "Inputs!C7": 4}`` (defined names or ``Sheet!A1`` cells).
    output : str or Path, optional
        Also save the recalculated workbook there.
    functions : FunctionRegistry, optional
        Functions to use (default: native Excel functions + the add-in's UDFs).

    Returns
    -------
    dict
        ``{key: value}`` for every output cell, in sheet order.  Outputs are
        the formula cells of the ``Results`` sheet (else of the first sheet);
        the key is the **row label** of the Results sheet (the text left of
        the value, e.g. ``"Accelerators required"``), made unique with the
        cell address when labels repeat; a cell without a label is keyed by
        its defined name, else by ``Sheet!A1``.  Values are ``float``,
        ``bool``, ``str`` (including the add-in's error text such as
        ``"#NUM! ERLANGC: ..."``) or :class:`~cryptoplan.workbook.engine.values.ExcelError`
        (a ``str`` subclass, e.g. ``"#DIV/0!"``) -- never NaN.

    Raises
    ------
    RecalcError
        If the workbook cannot be read or an input name/cell does not exist.

    Examples
    --------
    >>> from cryptoplan.workbook import recalc                                # doctest: +SKIP
    >>> recalc("planner.xlsx", {"TxRate": 4000})["Accelerators required"]  # doctest: +SKIP
    2.0
    """
    return recalc_report(path, inputs, output=output, functions=functions).as_dict()


class OpenWorkbook:
    """A workbook read and parsed once, recalculated for as many sets of inputs as asked.

    :func:`recalc` opens, unzips and parses the file on every call; a planner trying rates
    one after another opens it once with :func:`open_workbook` and pays only the evaluation.
    Each call starts from the file's own inputs (values given to an earlier call do not
    carry over).  The file is not read again: a change to it on disk needs a new
    :func:`open_workbook`.  ``output=`` writes the recalculated copy, as :func:`recalc` does.

    Examples
    --------
    >>> book = open_workbook("planner.xlsx")                          # doctest: +SKIP
    >>> [book.recalc({"TxRate": r})["Coprocessors required"] for r in (1000, 2000, 3000)]  # doctest: +SKIP
    [2.0, 3.0, 5.0]
    """

    def __init__(self, path, *, functions: FunctionRegistry | None = None, max_cells: int = MAX_CELLS):
        self.path = os.fspath(path)
        self.engine = load_engine(self.path, functions=functions, max_cells=max_cells)

    def recalc_report(self, inputs: dict | None = None, *, output=None) -> Recalculation:
        """:func:`recalc_report` on the parsed workbook (its ``Recalculation.engine`` is shared)."""
        self.engine.clear_inputs()
        return recalc_report(self.path, inputs, output=output, engine=self.engine)

    def recalc(self, inputs: dict | None = None, *, output=None) -> dict:
        """``{output label: value}`` for ``inputs``, as :func:`recalc` returns."""
        return self.recalc_report(inputs, output=output).as_dict()


def open_workbook(path, *, functions: FunctionRegistry | None = None, max_cells: int = MAX_CELLS) -> OpenWorkbook:
    """Read and parse ``path`` once for many recalculations (:class:`OpenWorkbook`).

    Raises
    ------
    RecalcError
        For a file that is not a usable workbook.
    """
    return OpenWorkbook(path, functions=functions, max_cells=max_cells)
