"""The workbook evaluation engine: formulas -> values, vectorized over scenarios.

Design
------
* A workbook package is read by :class:`~cryptoplan.workbook.engine.package.Package`
  (safe XML, size and cell limits).
* Each formula is tokenized by openpyxl's Excel tokenizer, parsed into an AST
  (:mod:`cryptoplan.workbook.engine.parser`) and compiled into a tree of Python closures.
* The static references of every formula (cells, ranges, defined names) give
  a dependency graph; Tarjan's algorithm orders it (precedents first) and
  finds circular references.  References that are only known at run time
  (``OFFSET``, ``INDIRECT``, ``INDEX`` used as a reference) are evaluated on
  demand, with a re-entrancy check that also reports dynamic cycles.
* Values are :class:`~cryptoplan.workbook.engine.values.Val`: NumPy arrays whose first
  axis is the scenario axis, so one pass over the formulas evaluates every
  scenario of a sweep; a value that does not depend on a varied input keeps
  ``n = 1`` and costs nothing extra.  A formula whose reference target itself
  varies by scenario (``OFFSET(A1, TxRate, 0)``) is evaluated scenario by
  scenario (:class:`ScenarioSplit`) -- correct, only slower for that cell.
* Functions come from a :class:`FunctionRegistry`: the native Excel functions
  of :mod:`cryptoplan.workbook.engine.functions` plus the UDFs (by default those of the
  add-in catalog, see :mod:`cryptoplan.workbook.catalog_functions`).

Excel semantics implemented: implicit intersection of a range used where one
value is expected (in a normal formula) vs element-wise arrays (in an array
formula and in array arguments such as ``SUMPRODUCT``'s); error values that
propagate (``#DIV/0!``, ``#VALUE!``, ``#N/A``, ``#NUM!``, ``#NAME?``,
``#REF!``); coercion of booleans, empty cells and numeric text; workbook- and
sheet-scoped defined names; cross-sheet references with quoted sheet names;
absolute and relative references (shared formulas are expanded per cell).
Whole-column/row references are clipped to the sheet's used area.
"""

from __future__ import annotations

import re

import sys
import traceback
from dataclasses import dataclass

import numpy as np

from .ops import binary_op, compare, concat, percent, unary_minus
from .package import Cell, Package, SheetData
from .parser import FormulaError, MAX_COL, MAX_ROW, cell_name, deep_recursion, parse, parse_ref
from .values import (
    BOOL, EMPTY, ERR_CIRCULAR, ERR_INTERNAL, ERR_NAME, ERR_NULL, ERR_REF, ERR_UNSUPPORTED,
    ERR_VALUE, ERROR_TEXT, NUM, NOT_COMPUTED, STR, ExcelError, Val,
)

__all__ = ["Engine", "Ref", "Ctx", "Fn", "FunctionRegistry", "ScenarioSplit", "Diagnostic",
           "MISSING", "EngineError"]


class EngineError(Exception):
    """A request the engine cannot carry out (unknown name or sheet, formula cell set ...)."""


class ScenarioSplit(Exception):
    """Raised by a function that cannot handle scenario-varying arguments at once.

    The engine then evaluates the formula once per scenario.
    """


class _Missing:
    __slots__ = ()

    def __repr__(self):
        return "MISSING"


#: An omitted function argument (``IF(A1,,2)``).
MISSING = _Missing()


@dataclass(frozen=True, slots=True)
class Ref:
    """A rectangular reference ``sheet!r1c1:r2c2`` (1-based, inclusive)."""

    sheet: int
    r1: int
    c1: int
    r2: int
    c2: int

    @property
    def rows(self) -> int:
        return self.r2 - self.r1 + 1

    @property
    def cols(self) -> int:
        return self.c2 - self.c1 + 1


class RefList(tuple):
    """A union of references (``(A1, B2:C3)``)."""


@dataclass(slots=True)
class Diagnostic:
    """Why a cell holds an error or could not be computed."""

    function: str
    code: int
    message: str
    scenarios: int = 1  # how many scenarios show it

    def text(self) -> str:
        return f"{self.function}: {ERROR_TEXT[self.code]} {self.message}".strip()


class Fn:
    """A function the engine can call.

    Parameters
    ----------
    name : str
        Excel name, upper case, without ``_xlfn.``.
    impl : callable
        ``impl(ctx, *args) -> Val | Ref``.
    params : str
        One letter per parameter, the last one repeating if followed by ``*``:
        ``v`` a value (a reference is reduced by implicit intersection in a
        normal formula, kept whole in an array formula), ``r`` raw (a
        :class:`Ref` or :class:`Val` as is), ``a`` raw and evaluated in array
        mode (``SUMPRODUCT``), ``l`` lazy (a zero-argument callable).
    min_args, max_args : int
        Accepted argument counts (``max_args=None``: unlimited).
    kindfn : callable, optional
        ``kindfn(i) -> letter`` for functions whose parameter kinds alternate
        (``IFS``, ``SUMIFS``); overrides ``params``.
    volatile : bool
        Recalculated on every change (``NOW``, ``OFFSET``); makes the writer
        ask Excel for a full recalculation on load.
    udf : bool
        A cryptoplan add-in function (not native Excel).
    """

    __slots__ = ("name", "impl", "params", "repeat", "min_args", "max_args", "volatile", "udf",
                 "kindfn")

    def __init__(self, name, impl, params="", min_args=None, max_args=None, volatile=False,
                 udf=False, kindfn=None):
        self.name = name
        self.kindfn = kindfn
        self.impl = impl
        self.repeat = params.endswith("*")
        self.params = params.rstrip("*")
        self.min_args = len(self.params) if min_args is None else min_args
        self.max_args = None if self.repeat else (len(self.params) if max_args is None else max_args)
        self.volatile = volatile
        self.udf = udf

    def kind(self, i: int) -> str:
        if self.kindfn is not None:
            return self.kindfn(i)
        if i < len(self.params):
            return self.params[i]
        return self.params[-1] if self.params else "v"


class FunctionRegistry(dict):
    """``{NAME: Fn}``.  :func:`cryptoplan.workbook.engine.functions.native_functions` and
    :func:`~cryptoplan.workbook.catalog_functions.default_functions` make one;
    :func:`cryptoplan.workbook.catalog_functions.callable_function` wraps a plain Python callable as an ``Fn``."""

    def copy(self) -> "FunctionRegistry":
        return FunctionRegistry(self)


class Ctx:
    """Evaluation context of one formula cell."""

    __slots__ = ("engine", "sheet", "row", "col", "array", "scen", "_arr", "cell_diags")

    def __init__(self, engine, sheet, row, col, array=False, scen=None, diags=None):
        self.engine = engine
        self.sheet = sheet
        self.row = row
        self.col = col
        self.array = array
        self.scen = scen
        self._arr = None
        self.cell_diags = diags if diags is not None else []

    @property
    def n(self) -> int:
        return 1 if self.scen is not None else self.engine.n

    def as_array(self) -> "Ctx":
        if self.array:
            return self
        if self._arr is None:
            self._arr = Ctx(self.engine, self.sheet, self.row, self.col, True, self.scen,
                            self.cell_diags)
        return self._arr

    def where(self) -> str:
        return f"{self.engine.sheets[self.sheet].name}!{cell_name(self.row, self.col)}"

    def diag(self, function: str, code: int, message: str, count: int = 1) -> None:
        """Record why ``function`` produced error ``code`` in this cell."""
        self.cell_diags.append(Diagnostic(function, code, message, count))

    def value(self, x) -> Val:
        """A raw result as a value: references are read (implicit intersection unless array)."""
        if isinstance(x, Val):
            return x
        if isinstance(x, Ref):
            if self.array or (x.r1 == x.r2 and x.c1 == x.c2):
                return self.engine.read(x, self.scen)
            return self.intersect(x)
        if isinstance(x, RefList):
            if len(x) == 1:
                return self.value(x[0])
            return Val.error(ERR_VALUE)
        if x is MISSING:
            return Val.empty()
        raise TypeError(f"unexpected value {x!r}")  # pragma: no cover

    def intersect(self, ref: Ref) -> Val:
        r, c = ref.r1, ref.c1
        if ref.rows > 1:
            if not ref.r1 <= self.row <= ref.r2:
                return Val.error(ERR_VALUE)
            r = self.row
        if ref.cols > 1:
            if not ref.c1 <= self.col <= ref.c2:
                return Val.error(ERR_VALUE)
            c = self.col
        return self.engine.read(Ref(ref.sheet, r, c, r, c), self.scen)


# =================================================================== compiler
def _const(v: Val):
    return lambda ctx: v


def _array_const(rows) -> Val:
    r, c = len(rows), len(rows[0])
    num = np.zeros((1, r, c))
    kind = np.zeros((1, r, c), dtype=np.int8)
    text = None
    for i, row in enumerate(rows):
        for j, x in enumerate(row):
            if isinstance(x, tuple):
                kind[0, i, j] = x[1]
            elif isinstance(x, bool):
                kind[0, i, j] = BOOL
                num[0, i, j] = float(x)
            elif isinstance(x, str):
                if text is None:
                    text = np.empty((1, r, c), dtype=object)
                kind[0, i, j] = STR
                text[0, i, j] = x
            else:
                num[0, i, j] = x
    return Val(num, kind, text)


class _Compiler:
    """AST -> closure.  Also collects the static references of the formula."""

    def __init__(self, engine: "Engine", sheet: int):
        self.engine = engine
        self.sheet = sheet
        self.refs: list[Ref] = []
        self.dynamic = False
        self.functions: set[str] = set()

    def compile(self, node):
        t = node[0]
        if t == "n":
            return _const(Val.number(node[1]))
        if t == "s":
            return _const(Val.string(node[1]))
        if t == "b":
            return _const(Val.boolean(node[1]))
        if t == "e":
            return _const(Val.error(node[1]))
        if t == "arr":
            return _const(_array_const(node[1]))
        if t == "missing":
            return lambda ctx: MISSING
        if t == "ref":
            return self._ref(node)
        if t == "name":
            return self._name(node)
        if t == "bad":
            code = node[2]
            text = node[1]

            def bad(ctx):
                if code in NOT_COMPUTED:
                    ctx.diag("reference", code, f"unsupported reference {text!r} (external "
                             "workbook, 3-D or table reference)")
                return Val.error(code)
            return bad
        if t == "neg":
            f = self.compile(node[1])
            return lambda ctx: unary_minus(ctx.value(f(ctx)))
        if t == "pct":
            f = self.compile(node[1])
            return lambda ctx: percent(ctx.value(f(ctx)))
        if t == "op":
            return self._op(node)
        if t == "call":
            return self._call(node)
        raise FormulaError(f"unknown node {t}")  # pragma: no cover

    # ---------------------------------------------------------- references
    def _sheet_index(self, name):
        if name is None:
            return self.sheet
        return self.engine.sheet_index.get(name.lower())

    def _ref(self, node):
        _, sname, r1, c1, r2, c2 = node
        si = self._sheet_index(sname)
        if si is None or self.engine.sheets[si].kind != "worksheet":
            what = "no sheet" if si is None else f"{self.engine.sheets[si].kind} (not evaluated)"
            return self._bad_ref(f"{what} {sname!r}")
        ref = Ref(si, r1, c1, r2, c2)
        self.refs.append(ref)
        return lambda ctx: ref

    @staticmethod
    def _bad_ref(message):
        def bad(ctx):
            ctx.diag("reference", ERR_REF, message)
            return Val.error(ERR_REF)
        return bad

    def _name(self, node):
        _, sname, name = node
        scope = self.sheet if sname is None else self._sheet_index(sname)
        target = self.engine.resolve_name(name, scope)
        if target is None:
            msg = f"unknown name {name}"

            def unknown(ctx):
                ctx.diag(name, ERR_NAME, msg)
                return Val.error(ERR_NAME)
            return unknown
        ast, home = target
        sub = _Compiler(self.engine, home if home is not None else self.sheet)
        key = (name.upper(), home)
        name = self.engine._name_case.get((home, name.upper()), name)      # as the workbook writes it
        stack = self.engine._name_stack          # the names being compiled, in order
        if key in stack:
            path = list(stack.values())
            path = path[path.index(stack[key]):] + [name]
            return self._bad_ref(f"defined name {name} refers to itself" if len(path) == 2 else
                                 f"defined names {' -> '.join(path)} refer to each other in a circle")
        stack[key] = name
        try:
            f = sub.compile(ast)
        finally:
            stack.pop(key, None)
        self.refs.extend(sub.refs)
        self.dynamic |= sub.dynamic
        self.functions |= sub.functions
        return f

    # ----------------------------------------------------------- operators
    def _op(self, node):
        _, op, a, b = node
        fa, fb = self.compile(a), self.compile(b)
        if op in ("+", "-", "*", "/", "^"):
            return lambda ctx: binary_op(op, ctx.value(fa(ctx)), ctx.value(fb(ctx)))
        if op in ("=", "<>", "<", "<=", ">", ">="):
            return lambda ctx: compare(op, ctx.value(fa(ctx)), ctx.value(fb(ctx)))
        if op == "&":
            return lambda ctx: concat(ctx.value(fa(ctx)), ctx.value(fb(ctx)))
        if op == ":":
            return lambda ctx: _range_join(ctx, fa(ctx), fb(ctx))
        if op == " ":
            return lambda ctx: _intersection(fa(ctx), fb(ctx))
        if op == ",":
            return lambda ctx: _union(fa(ctx), fb(ctx))
        raise FormulaError(f"unknown operator {op!r}")  # pragma: no cover

    # ---------------------------------------------------------- functions
    def _call(self, node):
        _, name, args = node
        self.functions.add(name)
        spec = self.engine.functions.get(name)
        argfs = [self.compile(a) for a in args]
        if spec is None:
            def unsupported(ctx):
                ctx.diag(name, ERR_UNSUPPORTED, f"unsupported function {name}()")
                return Val.error(ERR_UNSUPPORTED)
            return unsupported
        if spec.volatile or name in ("OFFSET", "INDIRECT"):
            self.dynamic = True
        nargs = len(argfs)
        if nargs < spec.min_args or (spec.max_args is not None and nargs > spec.max_args):
            expected = (f"{spec.min_args}" if spec.max_args == spec.min_args else
                        f"{spec.min_args} to {spec.max_args if spec.max_args is not None else 'any'}")

            def badcount(ctx):
                ctx.diag(name, ERR_VALUE, f"{name}() takes {expected} arguments, got {nargs}")
                return Val.error(ERR_VALUE)
            return badcount
        kinds = [spec.kind(i) for i in range(nargs)]
        kinds = ["m" if a[0] == "missing" else k for k, a in zip(kinds, args)]
        impl = spec.impl

        def call(ctx):
            vals = []
            for k, f in zip(kinds, argfs):
                if k == "m":
                    vals.append(MISSING)
                elif k == "v":
                    x = f(ctx)
                    vals.append(x if x is MISSING else ctx.value(x))
                elif k == "r":
                    vals.append(f(ctx))
                elif k == "a":
                    vals.append(f(ctx.as_array()))
                else:  # lazy
                    vals.append(_Lazy(f, ctx))
            return impl(ctx, *vals)
        call.__name__ = name
        return call


class _Lazy:
    """A lazily evaluated argument (IF, IFERROR, CHOOSE ...)."""

    __slots__ = ("f", "ctx")

    def __init__(self, f, ctx):
        self.f = f
        self.ctx = ctx

    def raw(self):
        return self.f(self.ctx)

    def val(self) -> Val:
        x = self.f(self.ctx)
        return Val.empty() if x is MISSING else self.ctx.value(x)


def _as_ref(x):
    if isinstance(x, Ref):
        return x
    if isinstance(x, RefList) and len(x) == 1:
        return x[0]
    return None


def _range_join(ctx, a, b):
    ra, rb = _as_ref(a), _as_ref(b)
    if ra is None or rb is None:
        if isinstance(a, Val) and a.has_errors():
            return a
        if isinstance(b, Val) and b.has_errors():
            return b
        return Val.error(ERR_VALUE)
    if ra.sheet != rb.sheet:
        return Val.error(ERR_VALUE)
    return Ref(ra.sheet, min(ra.r1, rb.r1), min(ra.c1, rb.c1), max(ra.r2, rb.r2), max(ra.c2, rb.c2))


def _intersection(a, b):
    ra, rb = _as_ref(a), _as_ref(b)
    if ra is None or rb is None:
        return Val.error(ERR_VALUE)
    r1, c1 = max(ra.r1, rb.r1), max(ra.c1, rb.c1)
    r2, c2 = min(ra.r2, rb.r2), min(ra.c2, rb.c2)
    if ra.sheet != rb.sheet or r1 > r2 or c1 > c2:
        return Val.error(ERR_NULL)
    return Ref(ra.sheet, r1, c1, r2, c2)


def _union(a, b):
    parts = []
    for x in (a, b):
        if isinstance(x, Ref):
            parts.append(x)
        elif isinstance(x, RefList):
            parts.extend(x)
        else:
            return Val.error(ERR_VALUE)
    return RefList(parts)


# ===================================================================== engine
_PENDING, _ACTIVE, _DONE = 0, 1, 2


class Engine:
    """Evaluate the formulas of a workbook, optionally for many scenarios at once.

    Parameters
    ----------
    package : Package
        The workbook, opened by :class:`~cryptoplan.workbook.engine.package.Package`.
    functions : FunctionRegistry
        The functions formulas may call, e.g.
        :func:`cryptoplan.workbook.catalog_functions.default_functions` (native + add-in UDFs); the
        engine knows none of its own, so it imports no function module.
    n : int
        Number of scenarios (1 for a plain recalculation).

    Examples
    --------
    >>> eng = Engine(Package("planner.xlsx"), default_functions())  # doctest: +SKIP
    >>> eng.set_input("TxRate", [1000, 2000, 4000])              # doctest: +SKIP
    >>> eng.evaluate()                                           # doctest: +SKIP
    >>> eng.value("Results!B3").num[:, 0, 0]                     # doctest: +SKIP
    """

    def __init__(self, package: Package, functions: FunctionRegistry, n: int = 1):
        self.package = package
        self.functions = functions
        self.sheets: list[SheetData] = package.sheets
        self.sheet_index = {s.name.lower(): s.index for s in self.sheets}
        self.n = n
        self._name_stack: dict = {}     # (NAME, home sheet) -> name as written, while compiling it
        self._names: dict = {}
        self._name_case: dict = {}
        for name, local, text in package.defined_names:
            if name.lower().startswith("_xlnm."):
                continue
            if local is not None and not 0 <= local < len(self.sheets):
                continue
            self._names[(local, name.upper())] = text
            self._name_case[(local, name.upper())] = name
        self._name_ast: dict = {}
        # formula cells
        self.formulas: dict[tuple, Cell] = {}
        self.spill_owner: dict[tuple, tuple] = {}
        for sh in self.sheets:
            for (r, c), cell in sh.cells.items():
                if cell.formula is not None:
                    self.formulas[(sh.index, r, c)] = cell
        for key, cell in list(self.formulas.items()):
            if cell.ftype in ("array", "dataTable") and cell.fref:
                try:
                    from .parser import parse_area
                    r1, c1, r2, c2 = parse_area(cell.fref.replace("$", ""))
                except (TypeError, ValueError):
                    continue
                for r in range(r1, r2 + 1):
                    for c in range(c1, c2 + 1):
                        if (key[0], r, c) != key:
                            self.spill_owner[(key[0], r, c)] = key
        self._compiled: dict[tuple, object] = {}
        self._deps: dict[tuple, list] = {}
        self._dynamic: set = set()
        self._uses: dict[tuple, set] = {}
        self.overrides: dict[tuple, Val] = {}
        self.values: dict[tuple, Val] = {}
        self.state: dict[tuple, int] = {}
        self.diagnostics: dict[tuple, list[Diagnostic]] = {}
        self._const_cache: dict[tuple, Val] = {}
        self._block_cache: dict[Ref, Val] = {}
        self._date_cells: dict[int, frozenset] = {}
        self._formula_index: dict[int, list] = {}
        for (si, r, c) in self.formulas:
            self._formula_index.setdefault(si, []).append((r, c))
        for (si, r, c) in self.spill_owner:
            self._formula_index.setdefault(si, []).append((r, c))
        self._formula_sets = {si: set(v) for si, v in self._formula_index.items()}
        self.cycles: list[list[tuple]] = []

    # ------------------------------------------------------------ addressing
    def sheet_named(self, name: str) -> int:
        si = self.sheet_index.get(name.lower())
        if si is None:
            raise EngineError(f"no sheet {name!r} (sheets: {', '.join(s.name for s in self.sheets)})")
        return si

    def where(self, key) -> str:
        si, r, c = key
        return f"{self.sheets[si].name}!{cell_name(r, c)}"

    def resolve_name(self, name: str, scope: int | None):
        """(AST, home sheet) of a defined name seen from sheet ``scope``, or None."""
        name = name.upper()
        for key in ((scope, name), (None, name)):
            if key in self._names:
                if key not in self._name_ast:
                    text = self._names[key]
                    try:
                        self._name_ast[key] = parse(text)
                    except FormulaError:
                        self._name_ast[key] = ("bad", text, ERR_REF)
                return self._name_ast[key], key[0]
        return None

    def names(self) -> list[tuple[int | None, str]]:
        """Defined names as ``(local sheet index or None, name as written)``."""
        return sorted(((k[0], self._name_case[k]) for k in self._names),
                      key=lambda t: (t[0] is not None, t[0] or 0, t[1]))

    def name_text(self, name: str, scope: int | None = None) -> str | None:
        return self._names.get((scope, name.upper()))

    def locate(self, target: str) -> tuple[int, int, int]:
        """Cell of an input: a defined name (``TxRate``, ``Inputs!TxRate``) or ``Sheet!A1``.

        Raises
        ------
        EngineError
            If there is no such name/sheet/cell, or the name is not a single cell.
        """
        target = target.strip()
        node = parse_ref(target)
        if node[0] == "ref":
            _, sname, r1, c1, r2, c2 = node
            if sname is None:
                raise EngineError(f"{target!r}: give the sheet as well (Sheet!A1) or a defined name")
            si = self.sheet_named(sname)
            if (r1, c1) != (r2, c2):
                raise EngineError(f"{target!r} is a range; --set takes one cell")
            return si, r1, c1
        if node[0] == "name":
            _, sname, name = node
            scope = None if sname is None else self.sheet_named(sname)
            target_ast = self.resolve_name(name, scope)
            if target_ast is None:
                known = ", ".join(sorted({n for _, n in self._names})) or "none"
                cellish = re.fullmatch(r"\$?[A-Za-z]{1,4}\$?\d+", name) is not None
                hint = (" and not a cell inside a sheet (columns A to XFD, rows 1 to 1,048,576)"
                        if cellish else "")
                raise EngineError(f"{target!r}: no defined name {name!r} in the workbook{hint} "
                                  f"(names: {known})")
            ast, home = target_ast
            if ast[0] != "ref":
                raise EngineError(f"name {name} is {self.name_text(name, home)!r}, not one cell")
            _, sname2, r1, c1, r2, c2 = ast
            if sname2 is None:
                raise EngineError(f"name {name} has no sheet in its reference")
            si = self.sheet_named(sname2)
            if (r1, c1) != (r2, c2):
                raise EngineError(f"name {name} refers to a range ({self.name_text(name, home)}); "
                                  "--set takes one cell")
            return si, r1, c1
        raise EngineError(f"{target!r} is neither a defined name nor a Sheet!A1 cell")

    # ---------------------------------------------------------------- inputs
    def set_input(self, target, values) -> tuple[int, int, int]:
        """Give an input cell a value (scalar) or one value per scenario (sequence).

        Parameters
        ----------
        target : str or (sheet, row, col)
            Defined name or ``Sheet!A1``.
        values : scalar or sequence
            float/int, str, bool or None; a sequence must have :attr:`n` items.
        """
        key = target if isinstance(target, tuple) else self.locate(target)
        if key in self.formulas or key in self.spill_owner:
            raise EngineError(f"{self.where(key)} holds a formula; --set only changes input "
                              "(constant) cells")
        if isinstance(values, (list, tuple, np.ndarray)):
            vals = values if isinstance(values, np.ndarray) and values.ndim == 1 else list(values)
            if len(vals) != self.n:
                raise EngineError(f"{len(vals)} values for {target}, expected {self.n}")
            self.overrides[key] = _column(vals)
        else:
            self.overrides[key] = Val.from_python(values)
        self._block_cache.clear()
        return key

    def clear_inputs(self) -> None:
        """Forget every value given by :meth:`set_input`: cells hold the file's values again."""
        self.overrides = {}
        self._block_cache.clear()

    def resize(self, n: int) -> None:
        """Evaluate ``n`` scenarios from now on (the next chunk of a sweep).

        Inputs given one value per scenario are dropped (give them again for the new
        scenarios); single-valued inputs, the parsed and compiled formulas stay.
        """
        if n < 1:
            raise ValueError(f"n = {n}: a workbook is evaluated for at least one scenario")
        self.n = n
        self.overrides = {k: v for k, v in self.overrides.items() if v.n == 1}
        self._block_cache.clear()
        self.values, self.state, self.diagnostics = {}, {}, {}

    # ------------------------------------------------------------- reading
    def date_cells(self, si: int) -> frozenset:
        """``(row, col)`` of sheet ``si``'s cells styled as a date or time (computed once per sheet).

        Excel hands an add-in such a cell as a date, not a number; the catalog functions
        refuse it as the add-in does.
        """
        got = self._date_cells.get(si)
        if got is None:
            styles = getattr(self.package, "date_styles", frozenset())
            got = self._date_cells[si] = frozenset(rc for rc, cell in self.sheets[si].cells.items()
                                        if cell.style in styles) if styles else frozenset()
        return got

    def cell_value(self, si: int, r: int, c: int) -> Val:
        key = (si, r, c)
        v = self.values.get(key)
        if v is not None:
            return v
        v = self.overrides.get(key)
        if v is not None:
            return v
        if key in self.formulas:
            self._evaluate(key)
            return self.values[key]
        if key in self.spill_owner:
            owner = self.spill_owner[key]
            self._evaluate(owner)
            return self.values.get(key, Val.empty())
        v = self._const_cache.get(key)
        if v is None:
            cell = self.sheets[si].cells.get((r, c))
            v = Val.empty() if cell is None else Val.from_python(cell.value)
            self._const_cache[key] = v
        return v

    def read(self, ref: Ref, scen: int | None = None) -> Val:
        """The value of a reference (shape ``(n, rows, cols)``), clipped to the used area."""
        if ref.r1 == ref.r2 and ref.c1 == ref.c2:
            v = self.cell_value(ref.sheet, ref.r1, ref.c1)
            return v if scen is None else v.scenario(scen)
        cached = self._block_cache.get(ref)
        if cached is not None:
            return cached if scen is None else cached.scenario(scen)
        sh = self.sheets[ref.sheet]
        r2 = min(ref.r2, max(sh.max_row, ref.r1))
        c2 = min(ref.c2, max(sh.max_col, ref.c1))
        if ref.r2 == MAX_ROW or ref.c2 == MAX_COL:
            # whole columns/rows: clip to the used area (at least one cell)
            r2 = max(ref.r1, min(ref.r2, sh.max_row))
            c2 = max(ref.c1, min(ref.c2, sh.max_col))
        else:
            r2, c2 = ref.r2, ref.c2
        rows, cols = r2 - ref.r1 + 1, c2 - ref.c1 + 1
        if rows * cols > 5_000_000:
            raise EngineError(f"reference {self.where((ref.sheet, ref.r1, ref.c1))}:"
                              f"{cell_name(r2, c2)} has {rows * cols:,} cells, over the limit")
        fset = self._formula_sets.get(ref.sheet, ())
        # cells that exist in the block
        if rows * cols <= 4 * len(sh.cells) + 64:
            coords = [(r, c) for r in range(ref.r1, r2 + 1) for c in range(ref.c1, c2 + 1)
                      if (r, c) in sh.cells or (r, c) in fset
                      or (ref.sheet, r, c) in self.overrides]
        else:
            coords = [(r, c) for (r, c) in sh.cells
                      if ref.r1 <= r <= r2 and ref.c1 <= c <= c2]
            coords += [(r, c) for (r, c) in fset if ref.r1 <= r <= r2 and ref.c1 <= c <= c2
                       and (r, c) not in sh.cells]
            coords += [(r, c) for (s, r, c) in self.overrides if s == ref.sheet
                       and ref.r1 <= r <= r2 and ref.c1 <= c <= c2 and (r, c) not in sh.cells]
        constant = True
        vals = []
        n = 1
        for (r, c) in coords:
            key = (ref.sheet, r, c)
            if (r, c) in fset or key in self.overrides:
                constant = False
            v = self.cell_value(ref.sheet, r, c)
            if scen is not None:
                v = v.scenario(scen)
            vals.append(v)
            if v.n > n:
                n = v.n
        num = np.zeros((n, rows, cols))
        kind = np.full((n, rows, cols), EMPTY, dtype=np.int8)
        text = None
        for (r, c), v in zip(coords, vals):
            i, j = r - ref.r1, c - ref.c1
            num[:, i, j] = v.num[:, 0, 0]
            kind[:, i, j] = v.kind[:, 0, 0]
            if v.text is not None:
                if text is None:
                    text = np.empty((n, rows, cols), dtype=object)
                text[:, i, j] = v.text[:, 0, 0]
        out = Val(num, kind, text)
        if constant and scen is None:
            self._block_cache[ref] = out
        return out

    def value(self, target: str | tuple) -> Val:
        """The (evaluated) value of a cell given as ``Sheet!A1``, a name or a key."""
        key = target if isinstance(target, tuple) else self.locate(target)
        return self.cell_value(*key)

    # ---------------------------------------------------------- compilation
    def compiled(self, key):
        f = self._compiled.get(key)
        if f is None:
            cell = self.formulas[key]
            comp = _Compiler(self, key[0])
            try:
                if cell.ftype == "dataTable":
                    raise FormulaError("data tables (What-If Analysis > Data Table, TABLE()) "
                                       "are not supported; use cryptoplan sweep")
                ast = parse(cell.formula)
                f = comp.compile(ast)
            except FormulaError as exc:
                msg = str(exc)

                def f(ctx, msg=msg, code=ERR_UNSUPPORTED if "TABLE" in msg else ERR_NAME):
                    ctx.diag("formula", code, msg)
                    return Val.error(code)
            self._compiled[key] = f
            deps = []
            for ref in comp.refs:
                deps.extend(self._formula_cells_in(ref))
            self._deps[key] = deps
            self._uses[key] = comp.functions
            if comp.dynamic:
                self._dynamic.add(key)
        return f

    def _formula_cells_in(self, ref: Ref) -> list:
        idx = self._formula_index.get(ref.sheet)
        if not idx:
            return []
        fset = self._formula_sets[ref.sheet]
        size = ref.rows * ref.cols
        out = []
        if size <= 4 * len(idx) + 16:
            for r in range(ref.r1, ref.r2 + 1):
                for c in range(ref.c1, ref.c2 + 1):
                    if (r, c) in fset:
                        out.append((ref.sheet, r, c))
        else:
            out = [(ref.sheet, r, c) for (r, c) in idx
                   if ref.r1 <= r <= ref.r2 and ref.c1 <= c <= ref.c2]
        return [self.spill_owner.get(k, k) for k in out]

    def functions_used(self) -> set[str]:
        """Names of all functions called by the workbook's formulas (after compiling)."""
        out = set()
        for key in self.formulas:
            self.compiled(key)
            out |= self._uses.get(key, set())
        return out

    # ------------------------------------------------------------ evaluation
    def order(self, roots=None) -> list[tuple]:
        """Formula cells in evaluation order (precedents first); records cycles."""
        roots = list(self.formulas) if roots is None else [self.spill_owner.get(k, k) for k in roots
                                                           if k in self.formulas or k in self.spill_owner]
        for k in roots:
            self.compiled(k)
        index: dict = {}
        low: dict = {}
        onstack: set = set()
        stack: list = []
        order: list = []
        counter = 0
        self.cycles = []
        for root in roots:
            if root in index:
                continue
            work = [(root, 0)]
            while work:
                v, i = work.pop()
                if i == 0:
                    index[v] = low[v] = counter
                    counter += 1
                    stack.append(v)
                    onstack.add(v)
                    self.compiled(v)
                deps = self._deps[v]
                recurse = False
                while i < len(deps):
                    w = deps[i]
                    i += 1
                    if w not in index:
                        work.append((v, i))
                        work.append((w, 0))
                        recurse = True
                        break
                    if w in onstack:
                        low[v] = min(low[v], index[w])
                if recurse:
                    continue
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        onstack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1 or v in self._deps[v]:
                        self.cycles.append(comp)
                    order.extend(comp)
                if work:
                    u, _ = work[-1]
                    low[u] = min(low[u], low[v])
        return order

    def evaluate(self, roots=None, iterate=None) -> None:
        """Evaluate every formula cell (or those ``roots`` need), precedents first.

        ``iterate`` optionally wraps the evaluation order (a progress bar).
        """
        with deep_recursion():
            self._evaluate_order(roots, iterate)

    def _evaluate_order(self, roots, iterate) -> None:
        self.values = {}
        self.state = {}
        self.diagnostics = {}
        order = self.order(roots)
        for comp in self.cycles:
            names = ", ".join(self.where(k) for k in sorted(comp)[:8])
            more = f" and {len(comp) - 8} more" if len(comp) > 8 else ""
            for k in comp:
                self.values[k] = Val.error(ERR_CIRCULAR)
                self.state[k] = _DONE
                self.diagnostics[k] = [Diagnostic("circular reference", ERR_CIRCULAR,
                                                  f"cells {names}{more} depend on each other")]
        for key in (order if iterate is None else iterate(order)):
            if self.state.get(key) != _DONE:
                self._evaluate(key)

    def _evaluate(self, key) -> None:
        st = self.state.get(key, _PENDING)
        if st == _DONE:
            return
        if st == _ACTIVE:
            raise _Cycle(key)
        self.state[key] = _ACTIVE
        cell = self.formulas[key]
        f = self.compiled(key)
        si, r, c = key
        diags: list[Diagnostic] = []
        array = cell.ftype == "array"
        try:
            try:
                res = self._result(f, Ctx(self, si, r, c, array, None, diags), array)
            except ScenarioSplit:
                parts = []
                for s in range(self.n):
                    parts.append(self._result(f, Ctx(self, si, r, c, array, s, diags), array))
                res = _stack(parts)
        except _Cycle as cyc:
            res = Val.error(ERR_CIRCULAR)
            diags.append(Diagnostic("circular reference", ERR_CIRCULAR,
                                    f"through {self.where(cyc.key)} (via a run-time reference)"))
        except RecursionError:
            res = Val.error(ERR_INTERNAL)
            diags.append(Diagnostic("engine", ERR_INTERNAL, "formula nesting too deep"))
        except Exception as exc:  # an engine bug must not abort the whole workbook
            res = Val.error(ERR_INTERNAL)
            tb = traceback.extract_tb(sys.exc_info()[2])[-1]
            diags.append(Diagnostic("engine", ERR_INTERNAL,
                                    f"internal error {type(exc).__name__}: {exc} "
                                    f"({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno}); please report it"))
        if array:
            self._spill(key, cell, res)
        else:
            self.values[key] = res
        if diags:
            codes = set(np.unique(res.kind).tolist())
            kept = [d for d in diags if d.code in codes]
            if kept:
                self.diagnostics[key] = kept
        self.state[key] = _DONE

    def _result(self, f, ctx: Ctx, array: bool) -> Val:
        x = f(ctx)
        if x is MISSING:
            return Val.number(0.0)
        if array:
            if isinstance(x, Ref):
                x = self.read(x, ctx.scen)
            elif not isinstance(x, Val):
                x = ctx.value(x)
        else:
            x = ctx.value(x).top_left()
        # a formula that returns an empty cell shows 0
        if (x.kind == EMPTY).any():
            e = x.kind == EMPTY
            x = Val(np.where(e, 0.0, x.num), np.where(e, NUM, x.kind).astype(np.int8), x.text)
        return x

    def _spill(self, key, cell, res: Val) -> None:
        from .parser import parse_area
        si, r0, c0 = key
        area = parse_area((cell.fref or cell_name(r0, c0)).replace("$", ""))
        if area is None:
            self.values[key] = res.top_left()
            return
        r1, c1, r2, c2 = area
        rows, cols = r2 - r1 + 1, c2 - c1 + 1
        vr, vc = res.shape
        for i in range(rows):
            for j in range(cols):
                ii = 0 if vr == 1 else i
                jj = 0 if vc == 1 else j
                k = (si, r1 + i, c1 + j)
                if ii >= vr or jj >= vc:
                    self.values[k] = Val.error(14)  # #N/A outside the array
                else:
                    self.values[k] = Val(res.num[:, ii:ii + 1, jj:jj + 1],
                                         res.kind[:, ii:ii + 1, jj:jj + 1],
                                         None if res.text is None else res.text[:, ii:ii + 1, jj:jj + 1])
        if key not in self.values:
            self.values[key] = res.top_left()

    # ------------------------------------------------------------- reporting
    def origins(self, key, limit: int = 3) -> list[tuple[tuple, Diagnostic]]:
        """Cells (``key`` or its precedents) where an error in ``key`` comes from."""
        key = self.spill_owner.get(key, key)
        seen = set()
        out = []
        todo = [key]
        while todo and len(out) < limit:
            k = todo.pop(0)
            if k in seen:
                continue
            seen.add(k)
            if k in self.diagnostics:
                for d in self.diagnostics[k]:
                    out.append((k, d))
            v = self.values.get(k)
            if k in self._deps and (v is None or v.has_errors() or k == key or (v.kind == STR).any()):
                todo.extend(self._deps[k])
        return out[:limit]

    def uses_udf_or_volatile(self) -> bool:
        for key in self.formulas:
            self.compiled(key)
            for name in self._uses.get(key, ()):
                spec = self.functions.get(name)
                if spec is not None and (spec.udf or spec.volatile):
                    return True
        return False


class _Cycle(Exception):
    def __init__(self, key):
        super().__init__(key)
        self.key = key


def _stack(parts: list[Val]) -> Val:
    rows = max(p.shape[0] for p in parts)
    cols = max(p.shape[1] for p in parts)
    from .ops import expand
    parts = [expand(p, rows, cols) for p in parts]
    num = np.concatenate([p.num for p in parts])
    kind = np.concatenate([p.kind for p in parts])
    text = None
    if any(p.text is not None for p in parts):
        text = np.concatenate([p.text if p.text is not None else np.empty(p.num.shape, dtype=object)
                               for p in parts])
    return Val(num, kind, text)


def _column(vals: list) -> Val:
    """A scenario column (n, 1, 1) from Python values."""
    n = len(vals)
    if (vals.dtype.kind in "fiu" if isinstance(vals, np.ndarray)
            else n and set(map(type, vals)) <= {float, int}):   # numbers only (bool is no int here)
        num = np.asarray(vals, dtype=float).reshape(n, 1, 1)   # a sweep's grid: no per-element work
        bad = ~np.isfinite(num)
        if bad.any():
            raise EngineError(f"input value {num[bad][0]!r} is not a finite number")
        return Val(num, np.full((n, 1, 1), NUM, dtype=np.int8))
    num = np.zeros((n, 1, 1))
    kind = np.zeros((n, 1, 1), dtype=np.int8)
    text = None
    for i, x in enumerate(vals):
        if x is None:
            kind[i] = EMPTY
        elif isinstance(x, ExcelError):
            kind[i] = x.code
        elif isinstance(x, (bool, np.bool_)):
            kind[i] = BOOL
            num[i] = float(x)
        elif isinstance(x, str):
            if text is None:
                text = np.empty((n, 1, 1), dtype=object)
            kind[i] = STR
            text[i, 0, 0] = x
        else:
            num[i] = float(x)
            if not np.isfinite(num[i]).all():
                raise EngineError(f"input value {x!r} is not a finite number")
    return Val(num, kind, text)
