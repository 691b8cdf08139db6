"""User-defined functions in the engine: the add-in catalog and plain Python callables.

Two adapters turn a Python function into an engine :class:`~cryptoplan.workbook.engine.Fn`:

:func:`catalog_functions`
    Every entry of :data:`cryptoplan.addin.catalog.CATALOG` (``ERLANGC``, ``AMS_COST_US``,
    ...), with *exactly* the add-in's cell semantics (:func:`cryptoplan.addin.convert.call`):
    arguments converted by kind, ranges broadcast element by element,
    ``vector`` arguments passed whole, and a failing element returned as the
    add-in's error text (``"#NUM! ERLANGC: unstable queue ..."``) in that
    element only -- the value Excel shows in the cell.

:func:`callable_function`
    Any NumPy-vectorized callable (``model.erlang_c``): numbers in, numbers
    out; ``ValueError`` -> ``#NUM!``, ``TypeError`` -> ``#VALUE!`` (real Excel
    errors), per element.

Both evaluate all scenarios and all elements of a range argument in as few
calls as possible: elements are grouped by their text arguments (a model
function takes one policy name per call), identical argument tuples are
computed once, and the numeric arguments of a group go in as arrays.  A model
call raises for a whole array, but its error says which elements are bad and
what each one's own message is (``mask`` and ``element_message`` of
:class:`cryptoplan.model.ArgumentError` and :class:`cryptoplan.model.UnstableQueueError`):
those elements get their message, the others are computed in one more call.
Only a failure that names no elements leaves its group to be evaluated element
by element (for the catalog, with the add-in's own error text).  No element is
ever NaN.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import datetime as _dt
from contextlib import nullcontext
import math
import os

import numpy as np

from cryptoplan.model.lazy import lazy_module
from cryptoplan.model.remember import Remembered

from . import drawing
from ._grouped import ERROR_TEXT_CODE, Out, broadcast_args, finish, first_of_groups, group_ids, run_groups
from .engine import MISSING, Fn, FunctionRegistry, Ref, RefList, native_functions
from .engine.arguments import REF
from .engine.references import LaneRef, Ungroupable
from .engine.ops import expand
from .engine.values import (
    BOOL, EMPTY, ERR_NULL, ERR_NUM, ERR_VALUE, ERROR_TEXT, NUM, STR, Val, not_computed,
)

# the catalog, the cell contract and the parameter sets: loaded when a catalog function is first made
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.addin import catalog
    from cryptoplan.addin import convert
    from cryptoplan.model import params as model_params
else:
    catalog = lazy_module("cryptoplan.addin.catalog")
    convert = lazy_module("cryptoplan.addin.convert")
    model_params = lazy_module("cryptoplan.model.params")

__all__ = ["catalog_functions", "default_functions", "callable_function", "ERROR_TEXT_CODE"]



# ---------------------------------------------------------------- helpers
def _arg_val(ctx, x) -> Val | None:
    """A UDF argument as a value: a range is passed whole (as Excel passes a Range)."""
    if x is MISSING:
        return None
    if isinstance(x, Ref):
        return _dates_as_dates(ctx.engine, x, ctx.engine.read(x, ctx.scen))
    if isinstance(x, RefList):
        return Val.error(ERR_VALUE)
    if isinstance(x, LaneRef):      # one cell per lane (cells of one shape evaluated at once)
        if any((r.r1, r.c1) in ctx.engine.date_cells(r.sheet) for r in x.refs):
            raise Ungroupable("a date cell is handed to an add-in function")
        return ctx.value(x)
    return x


_EXCEL_EPOCH = _dt.datetime(1899, 12, 30)


def _dates_as_dates(engine, ref: Ref, v: Val) -> Val:
    """``v`` (read from ``ref``) with each date-formatted number as the date Excel hands an add-in.

    Excel passes a cell styled as a date or time to a UDF as a ``datetime``, which the add-in
    refuses (``traffic must be a number, not a date``); the engine's cells hold the serial
    number, so the serial becomes a ``datetime`` in a text slot here, and the add-in's
    conversion refuses it with the same message.  Free when the sheet has no date cells.
    """
    dates = engine.date_cells(ref.sheet)
    if not dates or not hasattr(v, "kind") or v.kind.ndim != 3:
        return v
    rows, cols = v.kind.shape[1:]
    if rows * cols <= len(dates):       # look the block's cells up (one for a single cell)
        hits = [(i, j) for i in range(rows) for j in range(cols) if (ref.r1 + i, ref.c1 + j) in dates]
    else:                               # or the sheet's few date cells in the block
        hits = [(r - ref.r1, c - ref.c1) for (r, c) in dates
                if ref.r1 <= r < ref.r1 + rows and ref.c1 <= c < ref.c1 + cols]
    hits = [(i, j) for i, j in hits if (v.kind[:, i, j] == NUM).any()]
    if not hits:
        return v
    kind, text = v.kind.copy(), (np.empty(v.kind.shape, dtype=object) if v.text is None else v.text.copy())
    for i, j in hits:
        for s in np.nonzero(kind[:, i, j] == NUM)[0].tolist():
            try:
                text[s, i, j] = _EXCEL_EPOCH + _dt.timedelta(days=float(v.num[s, i, j]))
            except OverflowError:       # a serial beyond year 9999: still a date cell
                text[s, i, j] = _dt.datetime.max
            kind[s, i, j] = STR
    return Val(v.num, kind, text)


def _py(v: Val, i: int, flat=True):
    """Python value of flat element ``i`` as Excel hands it to a UDF (errors as their text)."""
    k = int(v.kind.flat[i])
    if k == NUM:
        return float(v.num.flat[i])
    if k == BOOL:
        return bool(v.num.flat[i])
    if k == STR:
        assert v.text is not None       # a string element comes with its text
        return v.text.flat[i]
    if k == EMPTY:
        return None
    return ERROR_TEXT[k]


def _grid(v: Val, s: int) -> list:
    """A scenario's range as the 2-D list xlwings passes (``ndim=2``)."""
    vs = v.scenario(s) if v.n > 1 else v
    r, c = vs.shape
    return [[_py(vs, i * c + j) for j in range(c)] for i in range(r)]


_COLUMN = object()      # marks an argument taken from a numeric column


class _Gather:
    """Per-element view of per-argument values: ``g[i]`` is ``values[index[i]]``."""

    __slots__ = ("values", "index")

    def __init__(self, values, index):
        self.values = values
        self.index = index

    def __getitem__(self, i):
        return self.values[self.index[i]]


# ------------------------------------------------------------ the catalog
def _catalog_fn(spec) -> Fn:
    """The engine function of one catalog entry (its ``params_file`` argument, if any, first)."""
    k = spec.params_arg
    if k is None:
        return _catalog_core(spec)
    inner = _catalog_core(convert.without_params(spec), drawn=True).impl

    def impl(ctx, *raw):
        rest = raw[:k] + raw[k + 1:]
        v = _arg_val(ctx, raw[k]) if k < len(raw) else None
        if v is None:
            return inner(ctx, *rest)
        if v.n > 1 and len({tuple(map(tuple, _grid(v, s))) for s in range(v.n)}) != 1:
            return _error(ctx, spec.name, convert.error_text(
                "#VALUE!", spec.name, "params_file must be the same in every scenario (sweep one "
                "parameter file at a time)"))
        base = getattr(getattr(ctx.engine, "package", None), "path", None)
        params, error = convert.params_argument(
            spec, _grid(v, 0), None if base is None else os.path.dirname(os.path.abspath(base)))
        if error is not None:
            return _error(ctx, spec.name, error)
        if params is None:
            return inner(ctx, *rest)
        with model_params.using_parameters(params):
            return inner(ctx, *rest)

    return Fn(spec.name, impl, (REF,), 0, len(spec.args), udf=True, rest=(REF,))


def _error(ctx, name, text) -> Val:
    """One add-in error text as the whole result."""
    out = Out(1)
    out.put(0, text)
    return finish(out, 1, 1, 1, ctx, name)


class _Const:
    """An argument left to its default: the same value for every element."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def converted(self, i):
        return self.value

    def given(self, i):
        return self.value

    leaf = converted

    def vector(self, arrays, first, scalar):
        return self.value


class _Whole:
    """A whole-range argument (a table of rates, workloads): converted once per scenario.

    ``conv[s]`` is scenario ``s``'s converted value (None: the add-in refuses it), ``grids[s]``
    the cells as given, ``scenario[i]`` element ``i``'s scenario.
    """

    __slots__ = ("conv", "grids", "scenario")

    def __init__(self, conv, grids, scenario):
        self.conv, self.grids, self.scenario = conv, grids, scenario

    def converted(self, i):
        return self.conv[self.scenario[i]]

    def given(self, i):
        return self.grids[self.scenario[i] if len(self.grids) > 1 else 0]

    leaf = converted

    def vector(self, arrays, first, scalar):
        return self.converted(first)


class _Numeric:
    """A number or integer argument: numbers in column ``column`` of the group's arrays; other
    cells (empty: the default, numeric text...) converted once each, ``consts[code[i]]``."""

    __slots__ = ("column", "integer", "val", "code", "consts")

    def __init__(self, column, integer, val, code, consts):
        self.column, self.integer, self.val, self.code, self.consts = column, integer, val, code, consts

    def converted(self, i):
        """Element ``i``'s converted value, or _COLUMN for a number in the numeric column."""
        c = self.code[i]
        return self.consts[c] if c >= 0 else _COLUMN

    def given(self, i):
        return _py(self.val, i)

    def leaf(self, i):
        x = self.converted(i)
        if x is not _COLUMN:
            return x
        x = float(self.val.num.flat[i])
        return int(x) if self.integer else x

    def vector(self, arrays, first, scalar):
        """The group's argument: a constant, or its column (a scalar if the same for the whole group)."""
        x = self.converted(first)
        if x is not _COLUMN:
            return x
        col = arrays[self.column]
        one = scalar or bool((col == col[0]).all())
        if self.integer:
            return int(col[0]) if one else col.astype(np.int64)
        return float(col[0]) if one else col


class _Categorical:
    """A text, bool or number-or-text argument: one converted value per element (a call each)."""

    __slots__ = ("value", "val")

    def __init__(self, value, val):
        self.value, self.val = value, val

    def converted(self, i):
        return self.value[i]

    def given(self, i):
        return _py(self.val, i)

    leaf = converted

    def vector(self, arrays, first, scalar):
        return self.value[first]


# Whole ranges converted for the last few (argument, cells) pairs: the Plan sheet's and the
# Results sheet's PLAN_* cells hand the same three tables to a dozen calls, and converting
# each cell to the Python value the add-in receives is most of such a call.
_WHOLE = Remembered(16)


def _cells_key(v: Val):
    """A hashable image of a value's cells (None if one holds an unhashable object)."""
    text = None if v.text is None else tuple(v.text.ravel().tolist())
    key = (v.num.shape, v.num.tobytes(), v.kind.tobytes(), text)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _whole_converted(a, v):
    """``(grids, conv)``: each scenario's cells as the add-in is given them, and their converted
    value (None where the add-in refuses them); remembered for a ``range`` argument, whose
    converted value (tuples) cannot change."""
    key = _cells_key(v) if a.kind == "range" else None
    return _WHOLE.get(None if key is None else (a.name, a.kind, key), lambda: _convert_whole(a, v))


def _convert_whole(a, v):
    grids = [_grid(v, s) for s in range(v.n)]
    conv = []
    for g in grids:
        try:
            single_empty = len(g) == 1 and len(g[0]) == 1 and g[0][0] is None
            if any(convert.is_error_text(x) for row in g for x in row):
                raise convert.CellError("error in vector")
            conv.append(convert.convert_cell(a, None) if single_empty else convert.whole_argument(a, g))
        except convert.CellError:
            conv.append(None)
    return grids, conv


def _whole_item(a, v, E, per):
    """(:class:`_Whole`, elements it allows on the fast path, its group-key column)."""
    grids, conv = _whole_converted(a, v)
    scen = np.arange(E) // per
    sidx = scen if v.n > 1 else np.zeros(E, dtype=np.int64)
    ok = np.array([conv[s] is not None for s in range(v.n)])[sidx]
    return _Whole(conv, grids, sidx), ok, sidx


def _numeric_item(a, v, o, oidx, column):
    """(:class:`_Numeric`, fast elements, group-key column, the numbers' column) of a number argument.

    Numbers in a column at once; any other cell converted by the add-in's own rule, each
    distinct value once.
    """
    ok_ = o.kind.reshape(-1)
    x = o.num.reshape(-1)
    isnum = ok_ == NUM
    ok_o = isnum & convert.accepted_numbers(a, x)
    other = np.nonzero(~isnum)[0]
    conv, okc = convert.convert_values(a, [_py(o, i) for i in other.tolist()])
    ok_o[other] = okc
    consts, codes = [], {}
    cix = np.full(ok_.size, -1, dtype=np.int64)
    for i, c, good in zip(other.tolist(), conv, okc.tolist()):
        if good:
            cix[i] = codes.setdefault((type(c), c), len(codes))
            if cix[i] == len(consts):
                consts.append(c)
    item = _Numeric(column, a.kind == "integer", v, _Gather(cix, oidx), consts)
    return item, ok_o[oidx], (cix + 1)[oidx], np.where(isnum & ok_o, x, 0.0)[oidx]


def _categorical_item(a, v, o, oidx):
    """(:class:`_Categorical`, fast elements, group-key column) of a text, bool or mixed argument."""
    conv, ok_o = convert.convert_values(a, [_py(o, i) for i in range(o.kind.size)])
    codes = {}
    ocode = np.array([codes.setdefault((type(c), c) if ok_o[i] else None, len(codes))
                      for i, c in enumerate(conv)], dtype=np.int64)
    pyvals = np.empty(len(conv), dtype=object)
    pyvals[:] = conv
    return _Categorical(_Gather(pyvals, oidx), v), ok_o[oidx], ocode[oidx]


def _layout(args, positions, vals, ovals, vec_vals, n, rows, cols):
    """One argument record per argument, the elements every argument allows on the fast path,
    the group keys' columns and the numeric columns (each E = n x rows x cols long)."""
    E, per = n * rows * cols, rows * cols
    fast = np.ones(E, dtype=bool)
    numcols, keys_parts, layout = [], [], []
    for (what, j), a in zip(positions, args):
        if what == "default" or (what == "vec" and vec_vals[j] is None):
            layout.append(_Const(a.default))
            continue
        if what == "vec":
            item, ok, key = _whole_item(a, vec_vals[j], E, per)
        else:
            # per-element work is done on the argument as given (often one cell for all
            # scenarios), then spread to the E elements by index
            o = ovals[j]
            if o.num.shape[1:] != (rows, cols) and o.shape != (1, 1):
                o = expand(o, rows, cols)
            oidx = np.broadcast_to(np.arange(o.num.size).reshape(o.num.shape), (n, rows, cols)).reshape(-1)
            if a.kind in ("number", "integer"):
                item, ok, key, column = _numeric_item(a, vals[j], o, oidx, len(numcols))
                numcols.append(column)
            else:
                item, ok, key = _categorical_item(a, vals[j], o, oidx)
        fast &= ok
        keys_parts.append(key)
        layout.append(item)
    return layout, fast, keys_parts, numcols


def _split_arguments(ctx, args, given):
    """Each argument's value: whole-range ones apart, the rest listed for broadcasting.

    Returns (element values, {index: whole value}, [("vec" | "default" | "elem", index)]).
    """
    vals, vec_vals, positions = [], {}, []
    for j, (a, x) in enumerate(zip(args, given)):
        v = _arg_val(ctx, x)
        if a.kind in convert.WHOLE_KINDS:
            vec_vals[j] = v
            positions.append(("vec", j))
        elif v is None:
            positions.append(("default", j))
        else:
            positions.append(("elem", len(vals)))
            vals.append(v)
    return vals, vec_vals, positions


def _scalar_draw(draws, d: int, s: int):
    """The parameters of engine scenario ``s``'s draw (its index modulo ``d``), or no change."""
    return model_params.using_values(draws.at(s % d)) if draws is not None else nullcontext()


def _catalog_core(spec, drawn: bool = False) -> Fn:
    """The engine function of a catalog entry: vectorized over scenarios and cells, grouped by
    the arguments that are not numbers, with exactly the add-in's cell semantics.  ``drawn``:
    its answer depends on the parameters, and under :func:`~cryptoplan.workbook.drawing.drawing`
    each engine scenario is evaluated under its draw."""
    args = spec.args

    def impl(ctx, *raw):
        given = list(raw) + [MISSING] * (len(args) - len(raw))
        draws = drawing.active() if drawn else None
        if draws is not None and ctx.scen is not None:     # one scenario of a split cell
            with _scalar_draw(draws, draws.n, ctx.scen):
                return _evaluate(ctx, given, None)
        return _evaluate(ctx, given, draws)

    def _evaluate(ctx, given, draws):
        if spec.result == "table":
            return _table_result(ctx, spec, given, convert, draws)
        vals, vec_vals, positions = _split_arguments(ctx, args, given)
        # an omitted required argument (=ERLANGC(,10)): Excel hands the add-in an empty value
        omitted = [a.name for a, x in zip(args, given) if x is MISSING and a.required]
        if omitted:
            return _error(ctx, spec.name, convert.error_text(
                "#VALUE!", spec.name, f"{omitted[0]} is required (the argument is omitted)"))
        # an argument that is not computed here makes the result not computed
        for v in list(vals) + [v for v in vec_vals.values() if v is not None]:
            bad = not_computed(v.kind)
            if bad.any():
                return Val.error(int(v.kind[bad].flat[0]))
        ovals = list(vals)
        b = broadcast_args(vals) if vals else ([], max([1] + [v.n for v in vec_vals.values()
                                                               if v is not None]), 1, 1)
        if b is None:  # ranges that do not fit together: the add-in's own message
            return _per_scenario(ctx, spec, given, vals, vec_vals, positions, convert, draws)
        vals, n, rows, cols = b
        nv = max([n] + [v.n for v in vec_vals.values() if v is not None])
        by_draw = draws is not None and nv == 1 and ctx.engine.n > draws.n
        if by_draw:                 # the same arguments in every scenario: one answer per draw,
            nv = draws.n            # each scenario s then takes its draw's (s mod D)
        elif draws is not None:     # every scenario is a draw: the answer differs in each
            nv = max(nv, ctx.engine.n)
        if nv != n:
            vals = [v.broadcast(nv) for v in vals]
            n = nv
        E = n * rows * cols
        layout, fast, keys_parts, numcols = _layout(args, positions, vals, ovals, vec_vals, n, rows, cols)
        d = draws.n if draws is not None else 1
        if draws is not None:       # the draw is an argument: rows of another draw are other rows
            numcols.append(((np.arange(E) // (rows * cols)) % d).astype(float))
        keys = group_ids(keys_parts, E)
        try:
            fn = spec.model_function()
        except AttributeError:  # the add-in reports a missing model function as error text
            fn = None
            fast[:] = False

        def call_vec(key, arrays, scalar):
            first = int(key_first[key])
            argv = [item.vector(arrays, first, scalar) for item in layout]
            with np.errstate(all="ignore"):
                if draws is None:
                    return fn(*argv)
                idx = arrays[-1].astype(np.int64)
                with model_params.using_values(draws.at(idx[0] if scalar else idx)):
                    return fn(*argv)

        def call_one(i):
            with _scalar_draw(draws, d, i // (rows * cols)):
                return convert.call(spec, tuple(item.given(i) for item in layout))

        def call_leaf(i):
            """One fast element: the model directly, errors as the add-in's text."""
            try:
                with _scalar_draw(draws, d, i // (rows * cols)):
                    return convert.cell_result(spec, fn(*[item.leaf(i) for item in layout]))
            except Exception as exc:  # noqa: BLE001 - exactly what convert.call returns
                return convert.error_text(convert.error_code_for(exc), spec.name, convert.error_message(exc))

        def call_failed(exc_type, messages):
            """Elements the vector call reported failed: the add-in's text for each message."""
            return convert.error_texts(exc_type, spec.name, messages)

        out = Out(E)
        if E == 1:      # one scenario, one cell (a plain recalculation): no grouping to do
            out.put(0, call_leaf(0) if fast[0] else call_one(0))
        else:
            key_first = first_of_groups(keys, fast)
            run_groups(E, fast, keys, numcols, call_vec, call_one, out, call_leaf, call_failed,
                       distinct=draws is not None)      # (by_draw: one row per draw already)
        val = finish(out, n, rows, cols, ctx, spec.name)
        return val.take(np.arange(ctx.engine.n) % d) if by_draw else val

    return Fn(spec.name, impl, (REF,), 0, len(args), udf=True, rest=(REF,))


def _per_scenario(ctx, spec, given, vals, vec_vals, positions, convert, draws=None):
    """Slow path for argument shapes the add-in itself rejects: exact add-in text per scenario."""
    n = max([1] + [v.n for v in vals] + [v.n for v in vec_vals.values() if v is not None])
    if draws is not None:
        n = max(n, ctx.engine.n)
    out = np.empty((n, 1, 1), dtype=object)
    for s in range(n):
        argv = []
        for (what, j), a in zip(positions, spec.args):
            if what == "default":
                argv.append(a.default)
            elif what == "vec":
                v = vec_vals[j]
                argv.append(a.default if v is None else _grid(v, s))
            else:
                argv.append(_grid(vals[j], min(s, vals[j].n - 1)))
        with _scalar_draw(draws, 1 if draws is None else draws.n, s):
            r = convert.call(spec, tuple(argv))
        out[s, 0, 0] = r if not isinstance(r, list) else r[0][0]
    res = Out(n)
    for s in range(n):
        res.put(s, out[s, 0, 0])
    return finish(res, n, 1, 1, ctx, spec.name)


def _table_result(ctx, spec, given, convert, draws=None) -> Val:
    """A table function: its arguments whole (a table is not broadcast), one table per scenario.

    In a sweep whose varied inputs reach the arguments, each scenario's table is computed; they
    must all have the shape of the first (the same workloads), else every scenario gets the error.
    """
    vals = [_arg_val(ctx, x) for x in given]
    n = max([1] + [v.n for v in vals if v is not None])
    if draws is not None:
        n = max(n, ctx.engine.n)
    tables = []
    for s in range(n):
        argv = tuple(a.default if v is None else _grid(v, min(s, v.n - 1)) for a, v in zip(spec.args, vals))
        with _scalar_draw(draws, 1 if draws is None else draws.n, s):
            tables.append(_table_val(convert.call(spec, argv)))
    if n == 1:
        return tables[0]
    shape = tables[0].shape
    if any(t.shape != shape for t in tables):
        return _error(ctx, spec.name, convert.error_text(
            "#VALUE!", spec.name, "the table's size changes between scenarios: sweep inputs that keep "
            "the workloads' count"))
    text = None if all(t.text is None for t in tables) else np.concatenate(
        [t.text if t.text is not None else np.full(t.num.shape, None, dtype=object) for t in tables])
    return Val(np.concatenate([t.num for t in tables]), np.concatenate([t.kind for t in tables]), text)


def _table_val(rows) -> Val:
    if not isinstance(rows, list):
        o = Out(1)
        o.put(0, rows)
        return Val(o.num.reshape(1, 1, 1), o.kind.reshape(1, 1, 1),
                   None if o.text is None else o.text.reshape(1, 1, 1))
    r, c = len(rows), max(len(x) for x in rows)
    o = Out(r * c)
    for i, row in enumerate(rows):
        for j in range(c):
            o.put(i * c + j, row[j] if j < len(row) else "")
    return Val(o.num.reshape(1, r, c), o.kind.reshape(1, r, c),
               None if o.text is None else o.text.reshape(1, r, c))


_CATALOG_CACHE: dict | None = None


def catalog_functions() -> dict:
    """``{NAME: Fn}`` for every function of the add-in catalog (empty if the add-in is absent).

    Each function is also listed under the name LibreOffice Calc writes into a file
    (``ORG.CRYPTOPLAN.FUNCTIONS.NAME``, :data:`cryptoplan.addin.catalog.CALC_PREFIX`), so a workbook
    saved by Calc recalculates as it is.
    """
    global _CATALOG_CACHE
    if _CATALOG_CACHE is None:
        fns = {spec.name: _catalog_fn(spec) for spec in catalog.CATALOG}
        _CATALOG_CACHE = {**fns, **{catalog.CALC_PREFIX + name: fn for name, fn in fns.items()}}
    return dict(_CATALOG_CACHE)


def default_functions() -> FunctionRegistry:
    """The native Excel functions plus the cryptoplan functions of the add-in catalog."""
    reg = native_functions()
    reg.update(catalog_functions())
    return reg


# ------------------------------------------------------- plain callables
def callable_function(name: str, func, *, value_error=ERR_NUM, type_error=ERR_VALUE) -> Fn:
    """Wrap a NumPy-vectorized Python function as an Excel function.

    Parameters
    ----------
    name : str
        Excel name.
    func : callable
        ``func(*args)``; numeric arguments arrive as floats (one element) or
        float arrays (many elements), text arguments as ``str`` (one value per
        call: elements are grouped by their text arguments), booleans as
        ``bool``.  Returns a number or an array of the same length.
    value_error, type_error : int
        Excel error code for an element whose evaluation raises
        :class:`ValueError` (default ``#NUM!``) or :class:`TypeError`
        (default ``#VALUE!``); any other exception gives ``#VALUE!`` too.

    Returns
    -------
    Fn
        For :class:`~cryptoplan.workbook.engine.FunctionRegistry`.
    """

    def impl(ctx, *raw):
        vals = [_arg_val(ctx, x) for x in raw]
        vals = [Val.empty() if v is None else v for v in vals]
        b = broadcast_args(vals) if vals else ([], 1, 1, 1)
        if b is None:
            ctx.diag(name, ERR_VALUE, "argument ranges do not fit together")
            return Val.error(ERR_VALUE)
        vals, n, rows, cols = b
        E = n * rows * cols
        fast = np.ones(E, dtype=bool)
        err = np.zeros(E, dtype=np.int8)
        numcols, keys_parts, layout = [], [], []
        for v in vals:
            k = v.kind.reshape(-1)
            e = np.where(k >= ERR_NULL, k, 0)
            err = np.where(err > 0, err, e).astype(np.int8)
            if (k == STR).any():
                pyvals = [_py(v, i) for i in range(E)]
                codes = {}
                keys_parts.append(np.array([codes.setdefault(p, len(codes)) for p in pyvals]))
                layout.append(("cat", pyvals))
            else:
                layout.append(("num", len(numcols)))
                numcols.append(np.where(k >= ERR_NULL, 0.0, v.num.reshape(-1)))
        if err.any() and not_computed(err).any():
            code = int(err[not_computed(err)][0])
            return Val.error(code, (n, rows, cols))
        fast &= err == 0
        keys = group_ids(keys_parts, E)
        key_first = first_of_groups(keys, fast)
        messages = []

        def call_vec(key, arrays, scalar):
            first = key_first[key]
            argv = [item[1][first] if item[0] == "cat" else
                    (float(arrays[item[1]][0]) if scalar or bool((arrays[item[1]] == arrays[item[1]][0]).all())
                     else arrays[item[1]]) for item in layout]
            with np.errstate(all="ignore"):
                return func(*argv)

        def call_one(i):
            if err[i]:
                return _ErrorCode(int(err[i]))
            argv = [item[1][i] if item[0] == "cat" else float(numcols[item[1]][i])
                    for item in layout]
            try:
                with np.errstate(all="ignore"):
                    r = func(*argv)
                r = np.asarray(r).reshape(-1)[0].item() if np.ndim(r) else r
                if isinstance(r, (int, float)) and not isinstance(r, bool) and not math.isfinite(r):
                    messages.append((ERR_NUM, f"result is not a finite number ({r})"))
                    return _ErrorCode(ERR_NUM)
                return r
            except ValueError as exc:
                messages.append((value_error, str(exc)))
                return _ErrorCode(value_error)
            except TypeError as exc:
                messages.append((type_error, str(exc)))
                return _ErrorCode(type_error)
            except Exception as exc:  # noqa: BLE001 - one element's failure stays in that element
                messages.append((ERR_VALUE, f"{type(exc).__name__}: {exc}"))
                return _ErrorCode(ERR_VALUE)

        out = _CodeOut(E)
        run_groups(E, fast, keys, numcols, call_vec, call_one, out)
        for code, msg in messages[:1]:
            ctx.diag(name, code, msg, len(messages))
        return finish(out, n, rows, cols, ctx, name)

    return Fn(name.upper(), impl, (REF,), 0, None, udf=True, rest=(REF,))


class _ErrorCode(int):
    pass


class _CodeOut(Out):
    def put(self, i, x):
        if isinstance(x, _ErrorCode):
            self.num[i] = 0.0
            self.kind[i] = int(x)
            return
        super().put(i, x)

