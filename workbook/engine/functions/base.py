"""What the native function modules share: the registry they fill and the registration helpers.

A category module declares a function with :func:`register` (or :func:`register_numeric` for an
element-wise numeric one), giving the :class:`~cryptoplan.workbook.engine.arguments.ArgKind` of
each parameter::

    @register("MATCH", VALUE, REF, VALUE, min_args=2)
    def _match(ctx, lookup, arr, mtype=MISSING): ...
"""

from __future__ import annotations

import re

import lazy_loader
import numpy as np

from ..arguments import MISSING, ArgKind, Fn, FunctionRegistry, VALUE
from ..references import Ref, RefList
from ..ops import (
    expand, align, first_error, to_num,
)
from ..values import (
    ERR_NULL, Val,
)

__all__ = ["NATIVE", "register", "register_numeric", "error_array", "align_all", "coerce_numbers", "or_default",
           "first_error_rows", "wildcard_regex", "range_value", "select", "scipy", "NotARange"]

#: The native Excel functions, by name; each category module adds its own on import.
NATIVE = FunctionRegistry()


def register(name: str, *params: ArgKind, rest: tuple[ArgKind, ...] = (), min_args: int | None = None,
             max_args: int | None = None, volatile: bool = False, aliases: tuple[str, ...] = ()):
    """Decorator: register ``impl(ctx, *args)`` in :data:`NATIVE` as ``name`` (and ``aliases``).

    ``params`` are the kinds of the parameters, ``rest`` those of any further arguments taken
    in turn; the counts default to every parameter required (see
    :class:`~cryptoplan.workbook.engine.arguments.Fn`).
    """
    def deco(impl):
        for nm in (name, *aliases):
            NATIVE[nm] = Fn(nm, impl, params, min_args, max_args, volatile, rest=rest)
        return impl
    return deco


def error_array(mask, code):
    """An int8 array of ``code`` where ``mask`` holds (0 elsewhere), or None if it never does."""
    if mask is None or not np.any(mask):
        return None
    return np.where(mask, code, 0).astype(np.int8)


def align_all(vals):
    """The values broadcast to their common array shape (rows, columns)."""
    rows = max(v.shape[0] for v in vals)
    cols = max(v.shape[1] for v in vals)
    return [expand(v, rows, cols) for v in vals]


def coerce_numbers(*vals):
    """Align values and coerce to numbers: ([arrays], first error or None)."""
    vals = align_all(list(vals))
    out, errs = [], []
    for v in vals:
        x, e = to_num(v)
        out.append(x)
        errs.append(e)
    return out, first_error(*errs)


def or_default(x, default):
    """``x``, or the value of the Python ``default`` for an omitted argument."""
    return Val.from_python(default) if x is MISSING else x


def register_numeric(name, f, nargs, defaults=(), aliases=()):
    """Register an element-wise numeric function ``f(*arrays) -> (result, error or None)``."""
    min_args = nargs - len(defaults)

    def impl(ctx, *args):
        args = list(args) + [MISSING] * (nargs - len(args))
        vals = []
        for i, a in enumerate(args):
            if a is MISSING:
                d = defaults[i - min_args] if i >= min_args else 0.0
                vals.append(Val.from_python(d))
            else:
                vals.append(a)
        xs, err = coerce_numbers(*vals)
        with np.errstate(all="ignore"):
            r, e2 = f(*xs)
        return Val.numbers(r, first_error(err, e2))
    for nm in (name, *aliases):
        NATIVE[nm] = Fn(nm, impl, (VALUE,) * nargs, min_args, nargs)



class NotARange(Exception):
    """A union of references (``(A1:A2,B1:B2)``) where a function needs one range: ``#VALUE!``."""


def range_value(ctx, a, like: Ref | None = None) -> Val:
    """The value of a ``REF`` argument: a reference read whole (resized to ``like``'s shape if
    given, as ``SUMIF``'s sum range is), a value as is; :class:`NotARange` for a union."""
    if isinstance(a, Ref):
        if like is not None:
            a = Ref(a.sheet, a.r1, a.c1, a.r1 + like.rows - 1, a.c1 + like.cols - 1)
        return ctx.engine.read(a, ctx.scen)
    if isinstance(a, RefList):
        raise NotARange()
    return a


def wildcard_regex(s):
    """Excel's criteria wildcards as a regular expression: ``*`` any text, ``?`` one
    character, ``~`` escapes them; whole text, any case."""
    out = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "~" and i + 1 < len(s) and s[i + 1] in "*?~":
            out.append(re.escape(s[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("^" + "".join(out) + "$", re.S | re.I)


def first_error_rows(k2d):
    """First error code per row of a (n, K) kind array, or None."""
    e = np.where(k2d >= ERR_NULL, k2d, 0)
    if not e.any():
        return None
    idx = np.argmax(e > 0, axis=1)
    return e[np.arange(e.shape[0]), idx].astype(np.int8)


def select(mask, err, a: Val, b: Val) -> Val:
    """Element-wise ``mask ? a : b`` (``err`` overrides with an error code)."""
    m = Val.numbers(mask.astype(float))
    m, a = align(m, a)
    m, b = align(m, b)
    a, b = align(a, b)
    shape = np.broadcast_shapes(m.num.shape, a.num.shape, b.num.shape)
    mk = np.broadcast_to(m.num != 0, shape)
    num = np.where(mk, a.num, b.num)
    kind = np.where(mk, a.kind, b.kind).astype(np.int8)
    text = None
    if a.text is not None or b.text is not None:
        ta = a.text if a.text is not None else np.empty(a.num.shape, dtype=object)
        tb = b.text if b.text is not None else np.empty(b.num.shape, dtype=object)
        text = np.where(mk, ta, tb)
    if err is not None:
        e = np.broadcast_to(expand(Val.numbers(np.zeros(err.shape), err), *m.shape).kind, shape)
        bad = e >= ERR_NULL
        kind = np.where(bad, e, kind).astype(np.int8)
        num = np.where(bad, 0.0, num)
    return Val(num, kind, text)


#: SciPy, imported on first attribute access (lazy_loader); the special functions are reached
#: as ``scipy.special``.  Importing ``scipy.special`` (0.2 s with SciPy 1.17, most of it the
#: array-API layer loading numpy.f2py, numpy.random and numpy.testing) would be most of a
#: ``cryptoplan recalc`` start, and only the statistical functions need it; a lazy
#: ``scipy.special`` would still import the ``scipy`` package at once (5-7 ms of every start).
scipy = lazy_loader.load("scipy", suppress_warning=True)
