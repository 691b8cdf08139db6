"""The one conversion layer between Excel cells and :mod:`cryptoplan.model`.

Every cryptoplan Excel function goes through :func:`call`: cells in, model
call, cells out.  Nothing else in :mod:`addin` converts values.

What arrives from Excel (xlwings 0.37.8, every argument declared with
``ndim=2, err_to_str=True``)
    A 2-D list for every argument, a single cell included (``[[2048.0]]``).
    Numbers arrive as ``float``, empty cells as ``None``, text as ``str``,
    booleans as ``bool``, date-formatted cells as ``datetime``, and Excel
    error values as their text (``"#N/A"``; without ``err_to_str`` xlwings
    would turn them into ``None``, indistinguishable from an empty cell).  An
    omitted optional argument arrives as the Python default, unconverted.

How each argument kind is converted (the kind is declared in the catalog)
    ======================  =================================================
    ``number``              int/float (not bool), or numeric text; finite
    ``integer``             as number, and whole: ``2048.0`` -> ``2048``
    ``text``                non-empty text, stripped; the model checks values
    ``bool``                TRUE/FALSE, 1/0, text true/false/yes/no/on/off
    ``number_or_text``      a number, or text (e.g. ``unlimited``)
    ``vector``              all cells of the range, row-major, as numbers
                            (text ``inf`` allowed: a delay station)
    ``range``               the range whole, as a tuple of row tuples of cell
                            values (empty cells ``None``, text stripped,
                            numbers, booleans); the model reads it as a table
                            (a plan's Workloads table and System block)
    ``params_file``         one cell: the path of a parameter file, loaded
                            and validated (:func:`parameters_for`); the
                            model call runs with it in force
    ======================  =================================================

    An empty cell or ``""`` means *not given*: the argument's default, or an
    error if it is required (Excel itself would read an empty cell as 0; for a
    planning input that is nearly always a mistake).  Ranges are broadcast
    like NumPy arrays (a 1x1 argument repeats; an n x 1 column against a
    1 x m row gives an n x m table) and every element is evaluated on its own.

How results and errors leave
    A 1x1 result is returned as a scalar, anything larger as a 2-D list,
    which Excel 365 spills as a dynamic array.  Numbers are ``float``
    (``int`` for counts).  A failing element becomes *error text* in that
    element only::

        #VALUE! ERLANGC: servers must be in [1, 1e+12] (got 0.5)
        #NUM! CARD_UTILIZATION: accelerator utilization would be 140%: ...

    ``#NUM!`` marks an unstable queue (:class:`cryptoplan.model.UnstableQueueError`),
    ``#N/A`` a quantity that does not exist for these inputs
    (:class:`cryptoplan.model.NotAvailableError`: months to a target never reached),
    ``#VALUE!`` any other bad input.  Error text received as an argument is
    passed through unchanged (first offending argument), so a chain of
    cryptoplan formulas shows the original message at its end; a bare Excel
    error (``#N/A``) is reported with the argument it arrived in.

Why text and not a real Excel error value
    xlwings 0.37.8 cannot return an Excel error value from a Python UDF:
    the generated VBA wrapper (``xlwings/udfs.py``, ``generate_vba_wrapper``)
    assigns whatever ``XLPy.CallUDF`` returns, and on a Python exception it
    assigns ``Err.Description`` -- the traceback *text* -- to the cell; a
    ``win32com.client.VARIANT(pythoncom.VT_ERROR, ...)`` return does not
    arrive as an error either (xlwings issue #776, open).  Raising would
    therefore also produce text, only less readable.  Error text starting
    with Excel's own error literal is what can be delivered: it is readable in
    the cell, arithmetic on it (``=B5*2``) gives a real ``#VALUE!``, every
    cryptoplan function propagates it, and ``ISNUMBER``/``ISTEXT`` detect it.
    ``SUM``/``MAX`` over a range and charts *skip* text: wrap with
    ``=IF(ISNUMBER(x), x, NA())`` where a real error value is needed.  The
    text is at most 255 characters (longer strings inside arrays make the
    whole VBA array assignment fail, xlwings issue #456).  NaN, which xlwings
    would write as an empty cell, is never returned.
"""

from __future__ import annotations

from cryptoplan.model._text import value_text
from cryptoplan.model.errors import CryptoplanError, InputTypeError

import datetime as _dt
import math
from dataclasses import replace
from numbers import Real
from pathlib import Path

import numpy as np

from cryptoplan.model import NotAvailableError, UnstableQueueError
from cryptoplan.model.params import Parameters, using_parameters

from .catalog import Arg, Function
from .errors import ErrorText

__all__ = [
    "EXCEL_ERRORS", "MAX_TEXT", "CellError", "ErrorText", "is_error_text", "error_text", "error_texts", "to_grid",
    "accepted_numbers", "convert_values", "convert_cell", "call", "params_argument", "parameters_for", "without_params",
    "vector_argument", "range_argument", "whole_argument", "WHOLE_KINDS", "error_code_for",
]

# Excel's error literals (classic and dynamic-array era).
EXCEL_ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A",
                "#GETTING_DATA", "#SPILL!", "#CALC!", "#FIELD!", "#BLOCKED!", "#CONNECT!",
                "#BUSY!", "#UNKNOWN!", "#PYTHON!", "#EXTERNAL!")
MAX_TEXT = 255
_TRUE = {"true", "yes", "on", "1", "wahr", "vrai"}
_FALSE = {"false", "no", "off", "0", "falsch", "faux"}
_INF = {"inf", "infinity", "delay"}


class CellError(CryptoplanError, ValueError):
    """A value that cannot become a model argument; carries the Excel error code."""

    def __init__(self, message: str, code: str = "#VALUE!"):
        super().__init__(message)
        self.code = code


def is_error_text(value) -> bool:
    """True for the add-in's error text, or text that starts with an Excel error literal
    (``#N/A``, ``#NUM! ...``: an error cell as xlwings delivers it)."""
    return isinstance(value, ErrorText) or (isinstance(value, str) and value.startswith(EXCEL_ERRORS))


def error_text(code: str, function: str, message: str) -> ErrorText:
    """``"#CODE! FUNCTION: message"``, cut to :data:`MAX_TEXT` characters."""
    text = f"{code} {function}: {' '.join(str(message).split())}"
    return ErrorText(text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + "...", code)


def _code_of(exc_type: type) -> str:
    """The Excel error a model exception type is shown as."""
    if issubclass(exc_type, UnstableQueueError):
        return "#NUM!"
    return "#N/A" if issubclass(exc_type, NotAvailableError) else "#VALUE!"


def error_texts(exc_type: type, function: str, messages: list) -> list:
    """:func:`error_text` for many elements that failed with ``exc_type`` (the model's
    :class:`~cryptoplan.model.ArgumentError`, :class:`~cryptoplan.model.UnstableQueueError` or
    :class:`~cryptoplan.model.NotAvailableError`)."""
    code = _code_of(exc_type)
    texts: dict = {}        # one (immutable, shared) text per distinct message
    return [texts.get(m) or texts.setdefault(m, error_text(code, function, m)) for m in messages]


def to_grid(value) -> list:
    """Any argument (scalar, 1-D or 2-D sequence, NumPy array) as a 2-D list of rows."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        return [[value]]
    if not value:
        raise CellError("an empty range was given")
    rows = [list(r) if isinstance(r, (list, tuple)) else None for r in value]
    if all(r is None for r in rows):
        return [list(value)]
    lists = [r for r in rows if r is not None]
    if len(lists) < len(rows) or len({len(r) for r in lists}) != 1 or not lists[0]:
        raise CellError("a ragged array was given; use a rectangular range")
    return lists


def _empty(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _describe(value) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return f"{value:g}"
    return value_text(value)          # a date as the sheet shows it, a long text abbreviated


def _number(name: str, value) -> float:
    if isinstance(value, bool):
        raise CellError(f"{name} must be a number (got {_describe(value)})")
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        raise CellError(f"{name} must be a number, not a date (got {value}); "
                        "check the cell's number format")
    if isinstance(value, Real):
        v = float(value)
    elif isinstance(value, str):
        try:
            v = float(value.strip())
        except ValueError:
            raise CellError(f"{name} must be a number (got text {value!r})") from None
    else:
        raise CellError(f"{name} must be a number (got {type(value).__name__})")
    if not math.isfinite(v):
        raise CellError(f"{name} must be a finite number (got {_describe(v)})")
    return v


def accepted_numbers(arg: Arg, x):
    """Which numbers ``x`` (float or float array) a ``number``/``integer`` argument takes as they are.

    The numeric rule of :func:`convert_cell`, vectorized: finite, and whole for an
    ``integer`` (``2048.0`` -> ``2048``).  The recalculation engine applies it to a whole
    scenario column at once; :func:`convert_cell` to one cell.
    """
    ok = np.isfinite(x)
    if arg.kind == "integer":
        ok = ok & (x == np.floor(x))
    return ok


def convert_values(arg: Arg, values) -> tuple[list, np.ndarray]:
    """:func:`convert_cell` over a sequence of cell values, each distinct value converted once.

    Returns
    -------
    converted : list
        ``convert_cell(arg, values[i])`` where ``ok[i]``, else None.
    ok : ndarray of bool
        False where the value is error text or :func:`convert_cell` raises: :func:`call`
        then reports that element (the first offending argument, with its message).
    """
    converted = [None] * len(values)
    ok = np.zeros(len(values), dtype=bool)
    memo: dict = {}
    for i, value in enumerate(values):
        key = (type(value), value)
        hit = memo.get(key)
        if hit is None:
            hit = (False, None)
            if not is_error_text(value):
                try:
                    hit = (True, convert_cell(arg, value))
                except CellError:
                    pass
            memo[key] = hit
        ok[i], converted[i] = hit
    return converted, ok


def convert_cell(arg: Arg, value):
    """Convert one cell's value for ``arg`` (see the module docstring's table).

    Raises
    ------
    CellError
        Naming the argument, the value and what is accepted.
    """
    if _empty(value):
        if arg.required:
            raise CellError(f"{arg.name} is required (the cell is empty)")
        return arg.default
    kind = arg.kind
    if kind == "number":
        return _number(arg.name, value)
    if kind == "integer":
        v = _number(arg.name, value)
        if not accepted_numbers(arg, v):
            raise CellError(f"{arg.name} must be a whole number (got {v:g})")
        return int(v)
    if kind == "text":
        if not isinstance(value, str) or isinstance(value, bool):
            accepted = f": one of {', '.join(arg.choices)}" if arg.choices else ""
            raise CellError(f"{arg.name} must be text{accepted} (got {_describe(value)})")
        return value.strip()
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, Real) and float(value) in (0.0, 1.0):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise CellError(f"{arg.name} must be TRUE or FALSE (got {_describe(value)})")
    if kind == "number_or_text":
        if isinstance(value, str):
            try:
                return _number(arg.name, value)
            except CellError:
                return value.strip()
        return _number(arg.name, value)
    if kind == "vector":
        return vector_argument(arg, value)
    if kind == "range":
        return range_argument(arg, value)
    raise AssertionError(f"unknown argument kind {kind!r}")  # catalog is checked by tests


#: Argument kinds passed whole (one value for the call, never broadcast element by element).
WHOLE_KINDS = ("vector", "range")


def whole_argument(arg: Arg, grid) -> object:
    """A ``vector`` or ``range`` argument's grid converted as one value."""
    return vector_argument(arg, grid) if arg.kind == "vector" else range_argument(arg, grid)


def range_argument(arg: Arg, value) -> tuple:
    """A range as a tuple of row tuples: numbers as float, text stripped, empty as None.

    A date-formatted cell is refused (a plan's tables hold no dates); error text never arrives
    here (the caller passes the first one on).
    """
    rows = []
    for i, row in enumerate(to_grid(value)):
        out: list[bool | float | str | None] = []
        for j, v in enumerate(row):
            if _empty(v):
                out.append(None)
            elif isinstance(v, bool):
                out.append(v)
            elif isinstance(v, str):
                out.append(v.strip())
            elif isinstance(v, Real):
                x = float(v)
                if not math.isfinite(x):
                    raise CellError(f"{arg.name}: the cell at row {i + 1}, column {j + 1} is not a finite number")
                out.append(x)
            else:
                raise CellError(f"{arg.name}: the cell at row {i + 1}, column {j + 1} holds "
                                f"{_describe(v)}; the table takes numbers, text and TRUE/FALSE")
        rows.append(tuple(out))
    return tuple(rows)


def vector_argument(arg: Arg, value) -> list:
    """A whole-range argument as a flat list of converted cells; an empty cell is a CellError naming its position."""
    out = []
    for i, v in enumerate(x for row in to_grid(value) for x in row):
        if _empty(v):
            raise CellError(f"{arg.name} has an empty cell at position {i + 1}; "
                            "select exactly the cells with values")
        if isinstance(v, str) and v.strip().lower() in _INF:
            out.append(math.inf)
        else:
            out.append(_number(arg.name, v))
    return out


def error_code_for(exc: Exception) -> str:
    """The Excel error code (``#VALUE!``, ``#NUM!`` ...) a cell shows for ``exc``."""
    if isinstance(exc, CellError):
        return exc.code
    return _code_of(type(exc))


def cell_result(spec: Function, value):
    """A model result as a cell value; non-finite numbers become error text."""
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, Real):
        v = float(value)
        if not math.isfinite(v):
            return error_text("#NUM!", spec.name, f"the result is not a finite number ({v})")
        if spec.result == "integer":
            return int(v) if v == int(v) else v
        return v
    return error_text("#VALUE!", spec.name, f"cryptoplan.model.{spec.model} returned "
                      f"{type(value).__name__}, not a number")


def _table_cell(value):
    """One table cell: None (not applicable) and NaN become "n/a": never None, NaN or a blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "n/a"
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, Real):
        v = float(value)
        return v if math.isfinite(v) else "n/a"
    return str(value)


def _model(spec: Function):
    try:
        return spec.model_function()
    except AttributeError:
        raise CellError(f"this cryptoplan version has no model.{spec.model}; "
                        "update cryptoplan") from None


def _table(spec: Function, grids: list):
    """A table result: every argument one value (a table is not broadcast), one call, a header row."""
    try:
        argv = []
        for a, g in zip(spec.args, grids):
            if len(g) != 1 or len(g[0]) != 1:
                raise CellError(f"{a.name} must be one cell: {spec.name} returns one table "
                                f"(got a {len(g)}x{len(g[0])} range)")
            v = g[0][0]
            if a.kind not in WHOLE_KINDS and is_error_text(v):
                return _incoming_error(spec, a, v)
            argv.append(v if a.kind in WHOLE_KINDS else convert_cell(a, v))
        rows = _model(spec)(*argv)
        out = [list(spec.columns)]
        for row in rows:
            out.append([_table_cell(row.get(c)) for c in spec.columns])
        return out
    except Exception as exc:  # noqa: BLE001 - every failure must reach the cell as text
        return error_text(error_code_for(exc), spec.name, error_message(exc))


def error_message(exc: Exception) -> str:
    """The message a cell shows for ``exc``: its own text for a ValueError or TypeError, else an internal error to report."""
    if isinstance(exc, (ValueError, TypeError)):
        return str(exc)
    return f"internal error ({type(exc).__name__}: {exc}); please report it"


def _incoming_error(spec: Function, arg: Arg, value: str) -> ErrorText:
    """An error received as an argument: passed on unchanged (a chain of cryptoplan formulas
    shows the original message), a bare Excel error named with the argument it arrived in."""
    if isinstance(value, ErrorText) and len(value) <= MAX_TEXT:
        return value
    if value.strip() in EXCEL_ERRORS:
        return error_text(value.strip(), spec.name, f"{arg.name} is {value.strip()}")
    code = next(e for e in EXCEL_ERRORS if value.startswith(e))
    return ErrorText(value[:MAX_TEXT], code)


def call(spec: Function, args: tuple):
    """Evaluate ``spec`` on Excel arguments: convert, broadcast, call the model, convert back.

    Parameters
    ----------
    spec : Function
        Catalog entry.
    args : tuple
        One value per catalog argument, as xlwings delivers them (2-D lists,
        scalars, ``None``) or as a Python caller passes them.

    Returns
    -------
    float, int, bool, str or list of list
        A scalar for a 1x1 result, else a 2-D list.  Errors are error text
        (see the module docstring); this function does not raise.
    """
    k = spec.params_arg
    if k is not None:
        params, error = params_argument(spec, args[k] if k < len(args) else None)
        if error is not None:
            return error
        rest = tuple(args[:k]) + tuple(args[k + 1:])
        inner = without_params(spec)
        if params is None:
            return call(inner, rest)
        with using_parameters(params):
            return call(inner, rest)
    try:
        grids = []
        for a, v in zip(spec.args, args):
            g = to_grid(v)
            if a.kind not in WHOLE_KINDS:
                grids.append(g)
                continue
            # A vector or range is one argument value (not broadcast): convert it here, whole.
            errors = [x for row in g for x in row if is_error_text(x)]
            if errors:
                return _incoming_error(spec, a, errors[0])
            single_empty = len(g) == 1 and len(g[0]) == 1 and _empty(g[0][0])
            grids.append([[convert_cell(a, None) if single_empty else whole_argument(a, g)]])
        if spec.result == "table":
            return _table(spec, grids)
        shape = _broadcast_shape(spec, grids)
        fn = _model(spec)
    except CellError as exc:
        return error_text(exc.code, spec.name, str(exc))
    rows, cols = shape
    out = [[_element(spec, fn, grids, i, j) for j in range(cols)] for i in range(rows)]
    return out[0][0] if shape == (1, 1) else out


def without_params(spec: Function) -> Function:
    """``spec`` without its ``params_file`` argument: what runs once the file is in force."""
    return replace(spec, args=spec.model_args)


def params_argument(spec: Function, value, base=None) -> tuple:
    """``(parameters, None)`` or ``(None, error text)`` for ``spec``'s ``params_file`` argument.

    ``value`` is what arrived for the argument (a 2-D list, a scalar or None); parameters
    is None for an empty cell (the environment's file). The one place both the xlwings
    path (:func:`call`) and the recalculation engine read this argument.
    """
    try:
        g = to_grid(value)
        if len(g) != 1 or len(g[0]) != 1:
            raise CellError(f"params_file must be one cell, got a {len(g)}x{len(g[0])} range")
        if is_error_text(g[0][0]):
            k = spec.params_arg
            if k is None:
                raise InputTypeError(f"{spec.name} has no params_file argument")
            return None, _incoming_error(spec, spec.args[k], g[0][0])
        return parameters_for(g[0][0], base), None
    except CellError as exc:
        return None, error_text(exc.code, spec.name, str(exc))


def parameters_for(value, base=None):
    """The parameter set a ``params_file`` cell names; None for an empty cell (the environment's).

    Parameters
    ----------
    value : str or None
        The cell: a path (``~`` expanded).  A relative path is taken relative to ``base``
        (the workbook's folder in ``cryptoplan recalc``), else to the working directory.
    base : path-like, optional
        Folder a relative path is resolved against.

    Raises
    ------
    CellError
        ``#VALUE!``: not text, no such file, or a file that is not a valid parameter
        file (the message names the file and the parameter, see
        :func:`cryptoplan.model.params.validate_params`).
    """
    if _empty(value):
        return None
    if not isinstance(value, str):
        raise CellError(f"params_file must be the path of a parameter file (text), got {_describe(value)}")
    path = Path(value.strip()).expanduser()
    if base is not None and not path.is_absolute():
        path = Path(base) / path
    try:
        return Parameters.load_cached(path)
    except (OSError, ValueError) as exc:
        raise CellError(f"params_file: {exc}") from None


def _broadcast_shape(spec: Function, grids: list) -> tuple:
    rows = cols = 1
    for g in grids:
        r, c = len(g), len(g[0])
        if r != 1:
            if rows not in (1, r):
                break
            rows = r
        if c != 1:
            if cols not in (1, c):
                break
            cols = c
    else:
        return rows, cols
    dims = ", ".join(f"{a.name} {len(g)}x{len(g[0])}" for a, g in zip(spec.args, grids))
    raise CellError(f"the argument ranges do not fit together ({dims}); each must be one cell "
                    "or match the others' rows/columns")


def _element(spec: Function, fn, grids: list, i: int, j: int):
    values = []
    for a, g in zip(spec.args, grids):
        v = g[i if len(g) > 1 else 0][j if len(g[0]) > 1 else 0]
        if a.kind in WHOLE_KINDS:
            values.append(v)
            continue
        if is_error_text(v):
            return _incoming_error(spec, a, v)
        values.append(v)
    try:
        converted = [v if a.kind in WHOLE_KINDS else convert_cell(a, v)
                     for a, v in zip(spec.args, values)]
        return cell_result(spec, fn(*converted))
    except Exception as exc:  # noqa: BLE001 - every failure must reach the cell as text
        return error_text(error_code_for(exc), spec.name, error_message(exc))
