"""Native Excel functions, vectorized over scenarios (see :mod:`cryptoplan.workbook.engine`).

Every function takes and returns :class:`~cryptoplan.workbook.engine_values.Val` (or a
:class:`~cryptoplan.workbook.engine.Ref` for the reference-returning ones: ``INDEX``,
``OFFSET``, ``INDIRECT``, ``IF``/``CHOOSE`` with reference branches).
:data:`SUPPORTED` lists the names; :func:`default_functions` returns them
together with the cryptoplan UDFs.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import math
import re

import numpy as np

from .engine import MISSING, Fn, FunctionRegistry, Ref, RefList, ScenarioSplit
from .engine_ops import (
    expand, align, approx15, approx_equal, compare, first_error, to_bool, to_num, to_text,
)
from .engine_parser import MAX_COL, MAX_ROW, parse_ref
from .engine_values import (
    BOOL, EMPTY, ERR_DIV0, ERR_NA, ERR_NULL, ERR_NUM, ERR_REF, ERR_VALUE, NUM, STR,
    ExcelError, Val, not_computed, number_to_text, text_to_number,
)

__all__ = ["NATIVE", "SUPPORTED", "default_functions", "native_functions"]

NATIVE = FunctionRegistry()


class _Special:
    """``scipy.special``, imported on first use: its import (0.2 s with SciPy 1.17, most of it
    the array-API layer loading numpy.f2py, numpy.random and numpy.testing) is most of a
    ``cryptoplan recalc`` start, and only the statistical functions below need it."""

    def __getattr__(self, name):
        from scipy import special
        return getattr(special, name)


_sp = _Special()


# Distributions from scipy.special (scipy.stats would add ~0.5 s to every start): Poisson
# beyond the summed range (see _poisson) cdf = pdtr (regularized upper incomplete gamma), pmf
# in logs; normal via ndtr/ndtri.
def _poisson_pmf(k, m):
    return np.exp(_sp.xlogy(k, m) - m - _sp.gammaln(k + 1.0))


def _norm_pdf(z):
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _reg(name, params="", min_args=None, max_args=None, volatile=False, aliases=()):
    def deco(impl):
        for nm in (name, *aliases):
            NATIVE[nm] = Fn(nm, impl, params, min_args, max_args, volatile)
        return impl
    return deco


def _err_arr(mask, code):
    if mask is None or not np.any(mask):
        return None
    return np.where(mask, code, 0).astype(np.int8)


def _align_all(vals):
    rows = max(v.shape[0] for v in vals)
    cols = max(v.shape[1] for v in vals)
    return [expand(v, rows, cols) for v in vals]


def _nums(*vals):
    """Align values and coerce to numbers: ([arrays], first error or None)."""
    vals = _align_all(list(vals))
    out, errs = [], []
    for v in vals:
        x, e = to_num(v)
        out.append(x)
        errs.append(e)
    return out, first_error(*errs)


def _opt(x, default):
    return Val.from_python(default) if x is MISSING else x


def _numeric(name, f, nargs, defaults=(), aliases=()):
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
        xs, err = _nums(*vals)
        with np.errstate(all="ignore"):
            r, e2 = f(*xs)
        return Val.numbers(r, first_error(err, e2))
    NATIVE[name] = Fn(name, impl, "v" * nargs, min_args, nargs)
    for a in aliases:
        NATIVE[a] = Fn(a, impl, "v" * nargs, min_args, nargs)


# ==================================================================== math
_numeric("ABS", lambda x: (np.abs(x), None), 1)
_numeric("SQRT", lambda x: (np.sqrt(np.maximum(x, 0)), _err_arr(x < 0, ERR_NUM)), 1)
_numeric("EXP", lambda x: (np.exp(x), None), 1)
_numeric("LN", lambda x: (np.log(np.where(x > 0, x, 1)), _err_arr(x <= 0, ERR_NUM)), 1)
_numeric("LOG10", lambda x: (np.log10(np.where(x > 0, x, 1)), _err_arr(x <= 0, ERR_NUM)), 1)


def _log(x, b):
    bad = (x <= 0) | (b <= 0)
    den = np.log(np.where(b > 0, b, 2))
    div0 = (den == 0) & ~bad
    r = np.log(np.where(x > 0, x, 1)) / np.where(den == 0, 1, den)
    return r, first_error(_err_arr(bad, ERR_NUM), _err_arr(div0, ERR_DIV0))


_numeric("LOG", _log, 2, (10.0,))


def _power(x, y):
    v = Val.numbers(x)
    from .engine_ops import binary_op
    r = binary_op("^", v, Val.numbers(y))
    e = np.where(r.kind >= ERR_NULL, r.kind, 0).astype(np.int8)
    return r.num, (e if e.any() else None)


_numeric("POWER", _power, 2)
_numeric("INT", lambda x: (np.floor(approx15(x)), None), 1)
_numeric("SIGN", lambda x: (np.sign(x), None), 1)
NATIVE["PI"] = Fn("PI", lambda ctx: Val.number(math.pi), "")


def _mod(a, b):
    z = b == 0
    bb = np.where(z, 1.0, b)
    q = approx15(a / bb)
    r = a - bb * np.floor(q)
    r = np.where(approx_equal(r, 0) | approx_equal(r, bb), 0.0, r)
    return r, _err_arr(z, ERR_DIV0)


_numeric("MOD", _mod, 2)


def _quotient(a, b):
    z = b == 0
    return np.trunc(a / np.where(z, 1, b)), _err_arr(z, ERR_DIV0)


_numeric("QUOTIENT", _quotient, 2)


def _round_core(x, d, how):
    d = np.trunc(d)
    p = 10.0 ** d
    y = approx15(np.abs(x) * p)
    if how == "round":
        r = np.floor(y + 0.5)
    elif how == "up":
        r = np.ceil(y)
    else:
        r = np.floor(y)
    return np.sign(x) * r / p, None


_numeric("ROUND", lambda x, d: _round_core(x, d, "round"), 2)
_numeric("ROUNDUP", lambda x, d: _round_core(x, d, "up"), 2)
_numeric("ROUNDDOWN", lambda x, d: _round_core(x, d, "down"), 2)
_numeric("TRUNC", lambda x, d: _round_core(x, d, "down"), 2, (0.0,))


def _mround(x, m):
    bad = (x * m) < 0
    z = m == 0
    q = approx15(np.abs(x) / np.where(z, 1, np.abs(m)))
    r = np.sign(x) * np.floor(q + 0.5) * np.abs(m)
    return np.where(z, 0.0, r), _err_arr(bad, ERR_NUM)


_numeric("MROUND", _mround, 2)


def _ceiling(x, s):
    bad = (x > 0) & (s < 0)
    z = s == 0
    q = approx15(x / np.where(z, 1, s))
    return np.where(z, 0.0, np.ceil(q) * s), _err_arr(bad, ERR_NUM)


def _floor(x, s):
    bad = (x > 0) & (s < 0)
    z = (s == 0)
    q = approx15(x / np.where(z, 1, s))
    return np.where(z, 0.0, np.floor(q) * s), first_error(_err_arr(bad, ERR_NUM),
                                                          _err_arr(z & (x != 0), ERR_DIV0))


_numeric("CEILING", _ceiling, 2, (1.0,))
_numeric("FLOOR", _floor, 2, (1.0,))


def _ceiling_math(x, s, mode):
    s = np.abs(np.where(s == 0, 0, s))
    z = s == 0
    q = approx15(x / np.where(z, 1, s))
    away = (x < 0) & (mode != 0)
    r = np.where(away, np.floor(q), np.ceil(q)) * s
    return np.where(z, 0.0, r), None


def _floor_math(x, s, mode):
    s = np.abs(s)
    z = s == 0
    q = approx15(x / np.where(z, 1, s))
    toward = (x < 0) & (mode != 0)
    r = np.where(toward, np.ceil(q), np.floor(q)) * s
    return np.where(z, 0.0, r), None


_numeric("CEILING.MATH", _ceiling_math, 3, (1.0, 0.0))
_numeric("FLOOR.MATH", _floor_math, 3, (1.0, 0.0))
_numeric("CEILING.PRECISE", lambda x, s: _ceiling_math(x, s, np.zeros_like(x)), 2, (1.0,),
         aliases=("ISO.CEILING",))
_numeric("FLOOR.PRECISE", lambda x, s: _floor_math(x, s, np.zeros_like(x)), 2, (1.0,))


def _even_odd(x, odd):
    a = np.ceil(approx15(np.abs(x)))
    if odd:
        a = np.where(a % 2 == 0, a + 1, a)
    else:
        a = np.where(a % 2 == 1, a + 1, a)
    return np.where(x < 0, -a, a), None


_numeric("EVEN", lambda x: _even_odd(x, False), 1)
_numeric("ODD", lambda x: _even_odd(x, True), 1)


def _fact(x):
    n = np.trunc(x)
    bad = (n < 0) | (n > 170)
    return _sp.gamma(np.where(bad, 1, n) + 1), _err_arr(bad, ERR_NUM)


_numeric("FACT", _fact, 1)


def _combin(n, k):
    n, k = np.trunc(n), np.trunc(k)
    bad = (n < 0) | (k < 0) | (k > n)
    return np.round(_sp.comb(np.where(bad, 1, n), np.where(bad, 0, k))), _err_arr(bad, ERR_NUM)


_numeric("COMBIN", _combin, 2)
_numeric("GAMMALN", lambda x: (_sp.gammaln(np.where(x > 0, x, 1)), _err_arr(x <= 0, ERR_NUM)), 1,
         aliases=("GAMMALN.PRECISE",))
_numeric("DEGREES", lambda x: (np.degrees(x), None), 1)
_numeric("RADIANS", lambda x: (np.radians(x), None), 1)
_numeric("SIN", lambda x: (np.sin(x), None), 1)
_numeric("COS", lambda x: (np.cos(x), None), 1)
_numeric("TAN", lambda x: (np.tan(x), None), 1)


# ============================================================ statistics
#: Where POISSON.DIST adds up its terms, as LibreOffice's ScPoissonDist does (it sums for a
#: mean up to 712 and fewer than 936 terms; 700 keeps exp(-mean) a normal double).  Elsewhere
#: scipy.special's incomplete gamma (pdtr) and log-gamma: the terms would underflow.
POISSON_SUM_MEAN = 700.0
POISSON_SUM_TERMS = 936


def _poisson_by_terms(k, m):
    r"""Poisson mass and distribution function at whole ``0 <= k < 936``, mean ``0 <= m <= 700``.

    .. math:: t_0 = e^{-m}, \quad t_i = t_{i-1}\, m / i, \qquad
              f(k) = t_k, \quad F(k) = \sum_{i=0}^{k} t_i

    Every term is positive, so each carries at most about :math:`2 i` rounding errors and
    the sum no more than its terms: relative error below :math:`4 k \epsilon \approx 10^{-12}`
    (tests/test_engine_functions.py compares with 50-digit mpmath).  One step per term up to
    the largest ``k``, each over the whole array.  Reference: LibreOffice,
    ``ScInterpreter::ScPoissonDist`` (sc/source/core/tools/interpr3.cxx).
    """
    t = np.exp(-m)
    pmf = np.where(k == 0, t, 0.0)
    cdf = t
    for i in range(1, int(k.max(initial=0)) + 1):
        t = t * m / i
        cdf = cdf + np.where(i <= k, t, 0.0)
        pmf = np.where(k == i, t, pmf)
    return pmf, cdf


def _poisson(x, m, cum):
    k = np.trunc(x)
    bad = (k < 0) | (m < 0)
    kk, mm = np.where(bad, 0.0, k), np.where(bad, 1.0, m)
    by_terms = (mm <= POISSON_SUM_MEAN) & (kk < POISSON_SUM_TERMS)
    pmf, cdf = _poisson_by_terms(np.where(by_terms, kk, 0.0), np.where(by_terms, mm, 0.0))
    r = np.where(cum != 0, cdf, pmf)
    if not np.all(by_terms):    # far tails and large means: scipy.special, on first need
        far = ~by_terms
        r = np.where(far, np.where(cum != 0, _sp.pdtr(kk, mm), _poisson_pmf(kk, mm)), r)
    return r, _err_arr(bad, ERR_NUM)


_numeric("POISSON.DIST", _poisson, 3, aliases=("POISSON",))


def _expon(x, lam, cum):
    bad = (x < 0) | (lam <= 0)
    ll = np.where(bad, 1, lam)
    r = np.where(cum != 0, -np.expm1(-ll * x), ll * np.exp(-ll * x))
    return r, _err_arr(bad, ERR_NUM)


_numeric("EXPON.DIST", _expon, 3, aliases=("EXPONDIST",))


def _norm(x, mu, sd, cum):
    bad = sd <= 0
    s = np.where(bad, 1, sd)
    z = (x - mu) / s
    r = np.where(cum != 0, _sp.ndtr(z), _norm_pdf(z) / s)
    return r, _err_arr(bad, ERR_NUM)


_numeric("NORM.DIST", _norm, 4, aliases=("NORMDIST",))
_numeric("NORM.S.DIST", lambda z, cum: (np.where(cum != 0, _sp.ndtr(z), _norm_pdf(z)), None), 2)
_numeric("NORMSDIST", lambda z: (_sp.ndtr(z), None), 1)


def _norminv(p, mu, sd):
    bad = (p <= 0) | (p >= 1) | (sd <= 0)
    return mu + np.where(bad, 1, sd) * _sp.ndtri(np.where(bad, 0.5, p)), _err_arr(bad, ERR_NUM)


_numeric("NORM.INV", _norminv, 3, aliases=("NORMINV",))
_numeric("NORM.S.INV", lambda p: _norminv(p, np.zeros_like(p), np.ones_like(p)), 1,
         aliases=("NORMSINV",))


# ================================================================ logical
def _select(mask, err, a: Val, b: Val) -> Val:
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


@_reg("IF", "vll", 1, 3)
def _if(ctx, cond, then=MISSING, other=None):
    if cond is MISSING:
        cond = Val.empty()
    b, e = to_bool(cond)
    has_other = other is not None
    then_raw = (lambda: Val.number(0.0)) if then is MISSING else then.raw
    if not has_other:
        def other_raw():
            return Val.boolean(False)
    elif other is MISSING:
        def other_raw():
            return Val.number(0.0)
    else:
        other_raw = other.raw
    if e is None and cond.shape == (1, 1):
        if b.all():
            return then_raw()
        if not b.any():
            return other_raw()
    t = ctx.value(then_raw())
    f = ctx.value(other_raw())
    return _select(b != 0, e, t, f)


def _catch(ctx, value, alt, codes):
    if value is MISSING:
        value = Val.empty()
    k = value.kind
    caught = np.isin(k, list(codes))
    if not caught.any():
        return value
    a = Val.number(0.0) if alt is MISSING else alt.val()
    return _select(caught, None, a, value)


_ALL_ERRORS = [c for c in range(ERR_NULL, ERR_NULL + 8)]


@_reg("IFERROR", "vl")
def _iferror(ctx, value, alt):
    return _catch(ctx, value, alt, _ALL_ERRORS)


@_reg("IFNA", "vl")
def _ifna(ctx, value, alt):
    return _catch(ctx, value, alt, [ERR_NA])


def _ifs(ctx, *args):
    if len(args) % 2:
        ctx.diag("IFS", ERR_VALUE, "IFS() takes condition/value pairs")
        return Val.error(ERR_VALUE)
    result = Val.error(ERR_NA)  # no condition TRUE
    # compose from the last pair: the first TRUE condition (or error) wins
    for i in range(len(args) - 2, -1, -2):
        cond = Val.empty() if args[i] is MISSING else args[i]
        b, e = to_bool(cond)
        v = Val.number(0.0) if args[i + 1] is MISSING else args[i + 1].val()
        result = _select(b != 0, e, v, result)
    return result


NATIVE["IFS"] = Fn("IFS", _ifs, "vl*", 2, kindfn=lambda i: "v" if i % 2 == 0 else "l")


def _values_for_logic(ctx, args):
    """Booleans (n, K) from AND/OR arguments; text and empty cells in ranges are skipped."""
    parts = []
    errs = []
    for a in args:
        if a is MISSING:
            continue
        if isinstance(a, (Ref, RefList)):
            refs = [a] if isinstance(a, Ref) else list(a)
            for ref in refs:
                v = ctx.engine.read(ref, ctx.scen)
                k = v.kind.reshape(v.n, -1)
                use = (k == NUM) | (k == BOOL)
                parts.append((v.num.reshape(v.n, -1) != 0, use))
                errs.append(_first_err_rows(k))
        else:
            v = a
            if v.shape == (1, 1):
                b, e = to_bool(v)
                parts.append((b.reshape(v.n, -1) != 0, np.ones((v.n, 1), bool)))
                errs.append(None if e is None else e.reshape(v.n, -1)[:, 0])
            else:
                k = v.kind.reshape(v.n, -1)
                use = (k == NUM) | (k == BOOL)
                parts.append((v.num.reshape(v.n, -1) != 0, use))
                errs.append(_first_err_rows(k))
    return parts, first_error(*errs)


def _logic(ctx, args, how):
    parts, err = _values_for_logic(ctx, args)
    n = max([p[0].shape[0] for p in parts] + [1])
    count = np.zeros(n)
    acc = np.zeros(n) if how != "and" else np.ones(n)
    for b, use in parts:
        b = np.broadcast_to(b, (n, b.shape[1]))
        use = np.broadcast_to(use, b.shape)
        count += use.sum(axis=1)
        t = (b & use).sum(axis=1)
        if how == "and":
            acc = acc * ((t == use.sum(axis=1)))
        elif how == "or":
            acc = np.maximum(acc, (t > 0))
        else:
            acc = (acc + t) % 2
    e = first_error(err, _err_arr(count == 0, ERR_VALUE))
    return Val.bools(acc.reshape(n, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@_reg("AND", "r*", 1)
def _and(ctx, *args):
    return _logic(ctx, args, "and")


@_reg("OR", "r*", 1)
def _or(ctx, *args):
    return _logic(ctx, args, "or")


@_reg("XOR", "r*", 1)
def _xor(ctx, *args):
    return _logic(ctx, args, "xor")


@_reg("NOT", "v")
def _not(ctx, x):
    b, e = to_bool(x)
    return Val.bools(b == 0, e)


@_reg("TRUE", "")
def _true(ctx):
    return Val.boolean(True)


@_reg("FALSE", "")
def _false(ctx):
    return Val.boolean(False)


@_reg("NA", "")
def _na(ctx):
    return Val.error(ERR_NA)


@_reg("SWITCH", "vl*", 3)
def _switch(ctx, expr, *rest):
    pairs = rest[:len(rest) - len(rest) % 2]
    default = rest[-1] if len(rest) % 2 else None
    result = Val.error(ERR_NA) if default is None else default.val()
    # later pairs first so that the first match wins
    for i in range(len(pairs) - 2, -1, -2):
        v = pairs[i].val()
        eq = compare("=", expr, v)
        m, e = to_num(eq)
        result = _select(m != 0, e, pairs[i + 1].val(), result)
    return result


# =========================================================== information
def _is(code_test):
    def impl(ctx, x):
        if x is MISSING:
            x = Val.empty()
        k = x.kind
        internal = not_computed(k)
        r = code_test(k, x)
        return Val.bools(r, _err_arr(internal, int(k[internal].flat[0])) if internal.any() else None)
    return impl


for _name, _test in {
    "ISERROR": lambda k, x: k >= ERR_NULL,
    "ISERR": lambda k, x: (k >= ERR_NULL) & (k != ERR_NA),
    "ISNA": lambda k, x: k == ERR_NA,
    "ISNUMBER": lambda k, x: k == NUM,
    "ISTEXT": lambda k, x: k == STR,
    "ISNONTEXT": lambda k, x: k != STR,
    "ISLOGICAL": lambda k, x: k == BOOL,
    "ISBLANK": lambda k, x: k == EMPTY,
}.items():
    NATIVE[_name] = Fn(_name, _is(_test), "v")


@_reg("ISEVEN", "v")
def _iseven(ctx, x):
    n, e = to_num(x)
    return Val.bools(np.trunc(n) % 2 == 0, e)


@_reg("ISODD", "v")
def _isodd(ctx, x):
    n, e = to_num(x)
    return Val.bools(np.trunc(n) % 2 == 1, e)


@_reg("ISREF", "r")
def _isref(ctx, x):
    return Val.boolean(isinstance(x, (Ref, RefList)))


@_reg("ERROR.TYPE", "v")
def _error_type(ctx, x):
    k = x.kind.astype(float)
    is_err = (k >= ERR_NULL) & (k < ERR_NULL + 8)
    return Val.numbers(np.where(is_err, k - ERR_NULL + 1, 0), _err_arr(~is_err, ERR_NA))


@_reg("N", "v")
def _n(ctx, x):
    k = x.kind
    num = np.where((k == NUM) | (k == BOOL), x.num, 0.0)
    e = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    return Val.numbers(num, e if e.any() else None)


@_reg("T", "v")
def _t(ctx, x):
    k = x.kind
    t = np.full(k.shape, "", dtype=object)
    if x.text is not None:
        t = np.where(k == STR, x.text, t)
    e = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    return Val.texts(t, e if e.any() else None)


@_reg("TYPE", "v")
def _type(ctx, x):
    k = x.kind
    code = np.select([k == NUM, k == STR, k == BOOL, k >= ERR_NULL, k == EMPTY], [1, 2, 4, 16, 1], 1)
    if x.shape != (1, 1):
        code = np.full((x.n, 1, 1), 64)
    return Val.numbers(code.astype(float))


# ============================================================ aggregates
def _first_err_rows(k2d):
    """First error code per row of a (n, K) kind array, or None."""
    e = np.where(k2d >= ERR_NULL, k2d, 0)
    if not e.any():
        return None
    idx = np.argmax(e > 0, axis=1)
    return e[np.arange(e.shape[0]), idx].astype(np.int8)


def _collect(ctx, args, direct_mode="num"):
    """Numbers of SUM-like arguments: list of (values (n,K), used mask (n,K)), first error (n,)."""
    parts = []
    errs = []
    for a in args:
        if a is MISSING:
            continue
        if isinstance(a, (Ref, RefList)):
            for ref in ([a] if isinstance(a, Ref) else list(a)):
                v = ctx.engine.read(ref, ctx.scen)
                k = v.kind.reshape(v.n, -1)
                parts.append((v.num.reshape(v.n, -1), k == NUM))
                errs.append(_first_err_rows(k))
            continue
        v = a
        if v.shape == (1, 1):
            if direct_mode == "num":
                x, e = to_num(v)
                ok = np.ones((v.n, 1), bool)
                if e is not None:
                    ok = (e.reshape(v.n, -1) == 0)
                parts.append((x.reshape(v.n, -1), ok))
                errs.append(None if e is None else e.reshape(v.n, -1)[:, 0])
            else:  # COUNT: direct numbers, bools and numeric text count, errors don't propagate
                x, e = to_num(v)
                ok = (v.kind != EMPTY).reshape(v.n, -1)
                if e is not None:
                    ok = ok & (e.reshape(v.n, -1) == 0)
                parts.append((x.reshape(v.n, -1), ok))
            continue
        k = v.kind.reshape(v.n, -1)
        parts.append((v.num.reshape(v.n, -1), k == NUM))
        errs.append(_first_err_rows(k))
    return parts, first_error(*[None if e is None else e.astype(np.int8) for e in errs])


def _reduce(ctx, args, how):
    parts, err = _collect(ctx, args, "count" if how == "count" else "num")
    n = max([p[0].shape[0] for p in parts] + [1 if err is None else err.shape[0], 1])
    if parts:
        vals = np.concatenate([np.broadcast_to(p[0], (n, p[0].shape[1])) for p in parts], axis=1)
        used = np.concatenate([np.broadcast_to(p[1], (n, p[1].shape[1])) for p in parts], axis=1)
    else:
        vals = np.zeros((n, 0))
        used = np.zeros((n, 0), bool)
    cnt = used.sum(axis=1).astype(float)
    e2 = None
    with np.errstate(all="ignore"):
        if how == "sum":
            r = np.where(used, vals, 0.0).sum(axis=1)
        elif how == "count":
            return Val.numbers(cnt.reshape(n, 1, 1))
        elif how == "product":
            r = np.where(used, vals, 1.0).prod(axis=1)
            r = np.where(cnt == 0, 0.0, r)
        elif how == "average":
            r = np.where(used, vals, 0.0).sum(axis=1) / np.where(cnt == 0, 1, cnt)
            e2 = _err_arr(cnt == 0, ERR_DIV0)
        elif how == "min":
            r = np.where(cnt == 0, 0.0, np.where(used, vals, np.inf).min(axis=1, initial=np.inf))
        elif how == "max":
            r = np.where(cnt == 0, 0.0, np.where(used, vals, -np.inf).max(axis=1, initial=-np.inf))
        elif how == "sumsq":
            r = np.where(used, vals * vals, 0.0).sum(axis=1)
        elif how == "median":
            v = np.where(used, vals, np.nan)
            r = np.where(cnt == 0, 0.0, np.nan_to_num(np.nanmedian(v, axis=1) if v.shape[1] else np.zeros(n)))
            e2 = _err_arr(cnt == 0, ERR_NUM)
        else:  # pragma: no cover
            raise ValueError(how)
    e = first_error(err, e2)
    return Val.numbers(r.reshape(n, 1, 1), None if e is None else e.reshape(-1, 1, 1))


for _name, _how in {"SUM": "sum", "COUNT": "count", "PRODUCT": "product", "AVERAGE": "average",
                    "MIN": "min", "MAX": "max", "SUMSQ": "sumsq", "MEDIAN": "median"}.items():
    NATIVE[_name] = Fn(_name, (lambda how: lambda ctx, *a: _reduce(ctx, a, how))(_how), "r*", 1)


@_reg("COUNTA", "r*", 1)
def _counta(ctx, *args):
    total = None
    for a in args:
        if a is MISSING:
            c = np.zeros(1)
        elif isinstance(a, (Ref, RefList)):
            c = 0
            for ref in ([a] if isinstance(a, Ref) else list(a)):
                v = ctx.engine.read(ref, ctx.scen)
                c = c + (v.kind != EMPTY).reshape(v.n, -1).sum(axis=1)
        elif a.shape == (1, 1):
            c = np.ones(a.n)
        else:
            c = (a.kind != EMPTY).reshape(a.n, -1).sum(axis=1)
        total = c if total is None else total + c
    return Val.numbers(np.asarray(total, float).reshape(-1, 1, 1))


@_reg("COUNTBLANK", "r")
def _countblank(ctx, a):
    v = ctx.engine.read(a, ctx.scen) if isinstance(a, Ref) else a
    blank = (v.kind == EMPTY)
    if v.text is not None:
        blank = blank | ((v.kind == STR) & (v.text == ""))
    return Val.numbers(blank.reshape(v.n, -1).sum(axis=1).astype(float).reshape(-1, 1, 1))


@_reg("SUMPRODUCT", "a*", 1)
def _sumproduct(ctx, *args):
    vals = []
    for a in args:
        v = ctx.engine.read(a, ctx.scen) if isinstance(a, Ref) else ctx.value(a)
        vals.append(v)
    shape = vals[0].shape
    if any(v.shape != shape for v in vals):
        return Val.error(ERR_VALUE)
    n = max(v.n for v in vals)
    prod = np.ones((n,) + shape)
    errs = []
    for v in vals:
        x = np.where(v.kind == NUM, v.num, 0.0)
        prod = prod * x
        errs.append(_first_err_rows(v.kind.reshape(v.n, -1)))
    e = first_error(*errs)
    return Val.numbers(prod.reshape(n, -1).sum(axis=1).reshape(n, 1, 1),
                       None if e is None else e.reshape(-1, 1, 1))


# -------------------------------------------------------------- criteria
_CRIT_RE = re.compile(r"^(<=|>=|<>|<|>|=)?(.*)$", re.S)


def _wild_re(s):
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


def _criterion_mask(v: Val, crit) -> np.ndarray:
    """Boolean mask over ``v`` for one criterion (a Python value)."""
    k = v.kind
    if isinstance(crit, bool):
        return (k == BOOL) & ((v.num != 0) == crit)
    if isinstance(crit, float):
        return (k == NUM) & approx_equal(v.num, crit)
    if crit is None:
        return (k == EMPTY)
    if isinstance(crit, ExcelError):
        return k == crit.code
    m = _CRIT_RE.match(crit)
    op, rhs = m.group(1) or "=", m.group(2)
    num = text_to_number(rhs) if rhs.strip() else None
    if rhs.upper() in ("TRUE", "FALSE"):
        b = rhs.upper() == "TRUE"
        eq = (k == BOOL) & ((v.num != 0) == b)
        return eq if op == "=" else ~eq if op == "<>" else np.zeros(k.shape, bool)
    if num is not None:
        isn = k == NUM
        x = v.num
        res = {"=": isn & approx_equal(x, num), "<>": ~(isn & approx_equal(x, num)),
               "<": isn & (x < num) & ~approx_equal(x, num), "<=": isn & ((x < num) | approx_equal(x, num)),
               ">": isn & (x > num) & ~approx_equal(x, num), ">=": isn & ((x > num) | approx_equal(x, num))}[op]
        return res
    if rhs == "":
        blank = (k == EMPTY)
        if v.text is not None:
            blank = blank | ((k == STR) & (v.text == ""))
        if op == "=":
            return blank if m.group(1) else blank
        if op == "<>":
            return ~blank
        return np.zeros(k.shape, bool)
    isstr = k == STR
    texts = v.text if v.text is not None else np.full(k.shape, "", dtype=object)
    if op in ("=", "<>"):
        if any(ch in rhs for ch in "*?"):
            rx = _wild_re(rhs)
            hit = np.frompyfunc(lambda t: bool(rx.match(t)) if isinstance(t, str) else False, 1, 1)(texts)
        else:
            low = rhs.lower()
            hit = np.frompyfunc(lambda t: isinstance(t, str) and t.lower() == low, 1, 1)(texts)
        eq = isstr & hit.astype(bool)
        return eq if op == "=" else ~eq
    low = rhs.lower()
    cmp = {"<": lambda t: t.lower() < low, "<=": lambda t: t.lower() <= low,
           ">": lambda t: t.lower() > low, ">=": lambda t: t.lower() >= low}[op]
    hit = np.frompyfunc(lambda t: isinstance(t, str) and cmp(t), 1, 1)(texts)
    return isstr & hit.astype(bool)


def _crit_masks(ctx, rng: Val, crit: Val) -> np.ndarray:
    """Mask (n, R, C) over ``rng`` for a criterion that may vary by scenario."""
    n = max(rng.n, crit.n)
    if crit.n == 1:
        return np.broadcast_to(_criterion_mask(rng, _crit_py(crit, 0)), (n,) + rng.shape)
    out = np.zeros((n,) + rng.shape, bool)
    groups: dict = {}
    for s in range(crit.n):
        groups.setdefault(_key(_crit_py(crit, s)), []).append(s)
    for idx in groups.values():
        m = _criterion_mask(rng, _crit_py(crit, idx[0]))
        out[idx] = m if rng.n == 1 else m[idx]
    return out


def _crit_py(v: Val, s):
    x = v.element(s)
    if isinstance(x, float):
        return x
    return x


def _key(x):
    return (type(x).__name__, x if not isinstance(x, str) else x)


def _range_val(ctx, a, like: Ref | None = None) -> Val:
    if isinstance(a, Ref):
        if like is not None:
            a = Ref(a.sheet, a.r1, a.c1, a.r1 + like.rows - 1, a.c1 + like.cols - 1)
        return ctx.engine.read(a, ctx.scen)
    if isinstance(a, RefList):
        raise _ValueError()
    return a


class _ValueError(Exception):
    pass


def _ifs_reduce(ctx, how, target, pairs):
    try:
        first_ref = pairs[0][0] if isinstance(pairs[0][0], Ref) else None
        mask = None
        shape = None
        for rng, crit in pairs:
            rv = _range_val(ctx, rng, first_ref if rng is not pairs[0][0] else None)
            if shape is None:
                shape = rv.shape
            elif rv.shape != shape:
                return Val.error(ERR_VALUE)
            m = _crit_masks(ctx, rv, crit)
            mask = m if mask is None else (mask & m)
        tv = None
        if target is not None:
            tv = _range_val(ctx, target, first_ref)
            if tv.shape != shape:
                return Val.error(ERR_VALUE)
    except _ValueError:
        return Val.error(ERR_VALUE)
    n = mask.shape[0] if tv is None else max(mask.shape[0], tv.n)
    mask = np.broadcast_to(mask, (n,) + shape).reshape(n, -1)
    if how == "count":
        return Val.numbers(mask.sum(axis=1).astype(float).reshape(n, 1, 1))
    k = np.broadcast_to(tv.kind, (n,) + shape).reshape(n, -1)
    x = np.broadcast_to(tv.num, (n,) + shape).reshape(n, -1)
    use = mask & (k == NUM)
    err = _first_err_rows(np.where(mask, k, 0))
    cnt = use.sum(axis=1)
    e2 = None
    if how == "sum":
        r = np.where(use, x, 0).sum(axis=1)
    elif how == "average":
        r = np.where(use, x, 0).sum(axis=1) / np.maximum(cnt, 1)
        e2 = _err_arr(cnt == 0, ERR_DIV0)
    elif how == "max":
        r = np.where(cnt == 0, 0, np.where(use, x, -np.inf).max(axis=1, initial=-np.inf))
    else:
        r = np.where(cnt == 0, 0, np.where(use, x, np.inf).min(axis=1, initial=np.inf))
    e = first_error(err, e2)
    return Val.numbers(r.reshape(n, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@_reg("COUNTIF", "rv")
def _countif(ctx, rng, crit):
    return _ifs_reduce(ctx, "count", None, [(rng, crit)])


@_reg("SUMIF", "rvr", 2, 3)
def _sumif(ctx, rng, crit, target=MISSING):
    return _ifs_reduce(ctx, "sum", rng if target is MISSING else target, [(rng, crit)])


@_reg("AVERAGEIF", "rvr", 2, 3)
def _averageif(ctx, rng, crit, target=MISSING):
    return _ifs_reduce(ctx, "average", rng if target is MISSING else target, [(rng, crit)])


def _pairs(args):
    if len(args) % 2:
        raise _ValueError()
    return [(args[i], args[i + 1]) for i in range(0, len(args), 2)]


def _ifs_fn(how, with_target):
    def impl(ctx, *args):
        try:
            if with_target:
                return _ifs_reduce(ctx, how, args[0], _pairs(args[1:]))
            return _ifs_reduce(ctx, how, None, _pairs(args))
        except _ValueError:
            return Val.error(ERR_VALUE)
    return impl


NATIVE["COUNTIFS"] = Fn("COUNTIFS", _ifs_fn("count", False), "rv*", 2,
                       kindfn=lambda i: "r" if i % 2 == 0 else "v")
for _name, _how in {"SUMIFS": "sum", "AVERAGEIFS": "average", "MAXIFS": "max", "MINIFS": "min"}.items():
    NATIVE[_name] = Fn(_name, _ifs_fn(_how, True), "rrv*", 3,
                       kindfn=lambda i: "r" if i == 0 or i % 2 == 1 else "v")


# ================================================================ lookup
def _flat_vector(v: Val):
    """(kinds, nums, texts) of a one-row or one-column value, or None if 2-D."""
    r, c = v.shape
    if r != 1 and c != 1:
        return None
    return v.kind.reshape(v.n, -1), v.num.reshape(v.n, -1), \
        (None if v.text is None else v.text.reshape(v.n, -1))


def _norm_key(k, x, t):
    if k == NUM:
        return ("n", float(approx15(np.asarray(x))))
    if k == STR:
        return ("s", t.lower())
    if k == BOOL:
        return ("b", bool(x))
    return None


class _Table:
    """A lookup vector (constant across scenarios) with indexes built on demand."""

    def __init__(self, kinds, nums, texts):
        self.k = kinds
        self.x = nums
        self.t = texts
        self._exact = None
        self._sorted = {}

    def exact(self):
        if self._exact is None:
            d = {}
            for i in range(len(self.k)):
                key = _norm_key(self.k[i], self.x[i], None if self.t is None else self.t[i])
                if key is not None and key not in d:
                    d[key] = i
            self._exact = d
        return self._exact

    def last_exact(self, key):
        for i in range(len(self.k) - 1, -1, -1):
            if _norm_key(self.k[i], self.x[i], None if self.t is None else self.t[i]) == key:
                return i
        return -1

    def typed(self, kind):
        if kind not in self._sorted:
            pos = [i for i in range(len(self.k)) if self.k[i] == kind]
            if kind == STR:
                vals = [self.t[i].lower() for i in pos]
            else:
                vals = [float(self.x[i]) for i in pos]
            self._sorted[kind] = (pos, vals)
        return self._sorted[kind]


def _lookup_one(table: _Table, k, x, t, mode, search=1):
    """Position (0-based) of one lookup value or -1.

    ``mode``: 0 exact, 1 largest <= (sorted ascending), -1 smallest >= (sorted
    descending), 2 wildcard, and for XLOOKUP "next_smaller"/"next_larger".
    """
    if k == EMPTY:
        k, x = NUM, 0.0
    key = _norm_key(k, x, t)
    if key is None:
        return -1
    if mode in (0, 2):
        if k == STR and (mode == 2 or mode == 0) and any(ch in t for ch in "*?~") and mode != "plain":
            rx = _wild_re(t)
            rng = range(len(table.k)) if search >= 0 else range(len(table.k) - 1, -1, -1)
            for i in rng:
                if table.k[i] == STR and rx.match(table.t[i]):
                    return i
            return -1
        if search < 0:
            return table.last_exact(key)
        return table.exact().get(key, -1)
    pos, vals = table.typed(k)
    v = t.lower() if k == STR else float(x)
    if mode == 1:
        i = bisect.bisect_right(vals, v) - 1
        if i >= 0 and k == NUM and i + 1 < len(vals) and approx_equal(vals[i + 1], v):
            i += 1
        return pos[i] if i >= 0 else -1
    if mode == -1:
        # descending: last position with value >= v
        best = -1
        for j, w in enumerate(vals):
            if w >= v or (k == NUM and approx_equal(w, v)):
                best = j
            else:
                break
        return pos[best] if best >= 0 else -1
    if mode in ("next_smaller", "next_larger"):
        best, bestv = -1, None
        order = range(len(vals)) if search >= 0 else range(len(vals) - 1, -1, -1)
        for j in order:
            w = vals[j]
            if k == NUM and approx_equal(w, v):
                return pos[j]
            if k == STR and w == v:
                return pos[j]
            if mode == "next_smaller" and w < v and (bestv is None or w > bestv):
                best, bestv = j, w
            if mode == "next_larger" and w > v and (bestv is None or w < bestv):
                best, bestv = j, w
        return pos[best] if best >= 0 else -1
    raise ValueError(mode)  # pragma: no cover


def _positions(lookup: Val, vec: Val, mode, search=1):
    """Positions (n,) (-1: not found) and lookup errors for each scenario."""
    flat = _flat_vector(vec)
    if flat is None:
        return None, None
    kinds, nums, texts = flat
    if vec.n > 1:
        raise ScenarioSplit()
    table = _Table(kinds[0], nums[0], None if texts is None else texts[0])
    lk = lookup.kind.reshape(lookup.n, -1)[:, 0]
    lx = lookup.num.reshape(lookup.n, -1)[:, 0]
    lt = None if lookup.text is None else lookup.text.reshape(lookup.n, -1)[:, 0]
    n = lookup.n
    pos = np.full(n, -1, dtype=np.int64)
    cache = {}
    for s in range(n):
        k = int(lk[s])
        if k >= ERR_NULL:
            continue
        key = (k, float(lx[s]), None if lt is None or k != STR else lt[s])
        p = cache.get(key)
        if p is None:
            p = _lookup_one(table, k, lx[s], key[2], mode, search)
            cache[key] = p
        pos[s] = p
    err = np.where(lk >= ERR_NULL, lk, 0).astype(np.int8)
    return pos, (err if err.any() else None)


def _int_arg(v: Val):
    x, e = to_num(v)
    return np.trunc(x).reshape(v.n, -1)[:, 0].astype(np.int64), (None if e is None else e.reshape(v.n, -1)[:, 0])


@_reg("MATCH", "vrv", 2, 3)
def _match(ctx, lookup, arr, mtype=MISSING):
    vec = _range_val(ctx, arr) if not isinstance(arr, RefList) else None
    if vec is None:
        return Val.error(ERR_NA)
    t, te = _int_arg(_opt(mtype, 1.0))
    if t.shape[0] > 1 and len(set(t.tolist())) > 1:
        raise ScenarioSplit()
    mode = 0 if t[0] == 0 else (1 if t[0] > 0 else -1)
    pos, err = _positions(lookup, vec, mode)
    if pos is None:
        return Val.error(ERR_NA)
    e = first_error(err, te, _err_arr(pos < 0, ERR_NA))
    return Val.numbers((pos + 1).astype(float).reshape(-1, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@_reg("XMATCH", "vrvv", 2, 4)
def _xmatch(ctx, lookup, arr, match_mode=MISSING, search_mode=MISSING):
    vec = _range_val(ctx, arr)
    mm, _ = _int_arg(_opt(match_mode, 0.0))
    sm, _ = _int_arg(_opt(search_mode, 1.0))
    mode = {0: 0, -1: "next_smaller", 1: "next_larger", 2: 2}.get(int(mm[0]))
    if mode is None:
        return Val.error(ERR_VALUE)
    pos, err = _positions(lookup, vec, mode, int(sm[0]))
    if pos is None:
        return Val.error(ERR_VALUE)
    e = first_error(err, _err_arr(pos < 0, ERR_NA))
    return Val.numbers((pos + 1).astype(float).reshape(-1, 1, 1), None if e is None else e.reshape(-1, 1, 1))


def _gather(tab: Val, rows, cols) -> Val:
    """Elements ``tab[s, rows[s], cols[s]]`` (0-based index arrays of length n)."""
    n = max(tab.n, rows.shape[0], cols.shape[0])
    s = np.arange(n) if tab.n > 1 else np.zeros(n, dtype=np.int64)
    rows = np.broadcast_to(rows, (n,))
    cols = np.broadcast_to(cols, (n,))
    num = tab.num[s, rows, cols].reshape(n, 1, 1)
    kind = tab.kind[s, rows, cols].reshape(n, 1, 1)
    text = None if tab.text is None else tab.text[s, rows, cols].reshape(n, 1, 1)
    return Val(num.astype(float), kind.astype(np.int8), text)


def _vhlookup(ctx, lookup, table, idx, approx, vertical):
    tab = _range_val(ctx, table)
    if isinstance(table, RefList):
        return Val.error(ERR_REF)
    ap, ae = to_bool(_opt(approx, True))
    ap = ap.reshape(ap.shape[0], -1)[:, 0]
    if ap.shape[0] > 1 and len(set(ap.tolist())) > 1:
        raise ScenarioSplit()
    mode = 1 if ap[0] else 0
    first = Val(tab.num[:, :, :1], tab.kind[:, :, :1], None if tab.text is None else tab.text[:, :, :1]) \
        if vertical else Val(tab.num[:, :1, :], tab.kind[:, :1, :], None if tab.text is None else tab.text[:, :1, :])
    pos, err = _positions(lookup, first, mode)
    ci, ce = _int_arg(idx)
    width = tab.shape[1] if vertical else tab.shape[0]
    bad_lo = ci < 1
    bad_hi = ci > width
    n = max(pos.shape[0], ci.shape[0])
    pos = np.broadcast_to(pos, (n,))
    ci = np.broadcast_to(ci, (n,))
    ok = (pos >= 0) & ~np.broadcast_to(bad_lo | bad_hi, (n,))
    p = np.where(ok, pos, 0)
    c = np.where(ok, ci - 1, 0)
    out = _gather(tab, p, c) if vertical else _gather(tab, c, p)
    e = first_error(None if err is None else np.broadcast_to(err, (n,)), ce,
                    None if ae is None else ae.reshape(-1),
                    _err_arr(np.broadcast_to(bad_lo, (n,)), ERR_VALUE),
                    _err_arr(np.broadcast_to(bad_hi, (n,)), ERR_REF), _err_arr(pos < 0, ERR_NA))
    if e is not None:
        e = np.broadcast_to(e, (n,)).reshape(n, 1, 1)
        out = Val(np.where(e > 0, 0.0, out.num), np.where(e > 0, e, out.kind).astype(np.int8), out.text)
    # a looked-up empty cell gives 0
    return out


@_reg("VLOOKUP", "vrvv", 3, 4)
def _vlookup(ctx, lookup, table, idx, approx=MISSING):
    return _vhlookup(ctx, lookup, table, idx, approx, True)


@_reg("HLOOKUP", "vrvv", 3, 4)
def _hlookup(ctx, lookup, table, idx, approx=MISSING):
    return _vhlookup(ctx, lookup, table, idx, approx, False)


@_reg("XLOOKUP", "vrrlvv", 3, 6)
def _xlookup(ctx, lookup, arr, ret, if_not_found=MISSING, match_mode=MISSING, search_mode=MISSING):
    vec = _range_val(ctx, arr)
    rv = _range_val(ctx, ret)
    mm, _ = _int_arg(_opt(match_mode, 0.0))
    sm, _ = _int_arg(_opt(search_mode, 1.0))
    if mm.shape[0] > 1 or sm.shape[0] > 1:
        if len(set(mm.tolist())) > 1 or len(set(sm.tolist())) > 1:
            raise ScenarioSplit()
    mode = {0: 0, -1: "next_smaller", 1: "next_larger", 2: 2}.get(int(mm[0]))
    search = int(sm[0])
    if mode is None or search not in (1, -1, 2, -2):
        return Val.error(ERR_VALUE)
    if abs(search) == 2 and mode == 0:
        search = 1 if search > 0 else -1
    pos, err = _positions(lookup, vec, mode, 1 if search > 0 else -1)
    if pos is None:
        return Val.error(ERR_VALUE)
    vr, vc = vec.shape
    n = pos.shape[0]
    found = pos >= 0
    p = np.where(found, pos, 0)
    if vc == 1 and vr > 1 or (vr == 1 and vc == 1 and rv.shape[0] >= 1 and rv.shape[1] == 1):
        if rv.shape[0] != vr:
            return Val.error(ERR_VALUE)
        s = np.arange(n) if rv.n > 1 else np.zeros(n, dtype=np.int64)
        num = rv.num[s, p, :][:, None, :]
        kind = rv.kind[s, p, :][:, None, :]
        text = None if rv.text is None else rv.text[s, p, :][:, None, :]
    else:
        if rv.shape[1] != vc:
            return Val.error(ERR_VALUE)
        s = np.arange(n) if rv.n > 1 else np.zeros(n, dtype=np.int64)
        num = rv.num[s, :, p][:, :, None]
        kind = rv.kind[s, :, p][:, :, None]
        text = None if rv.text is None else rv.text[s, :, p][:, :, None]
    out = Val(num.astype(float), kind.astype(np.int8), text)
    if (~found).any():
        nf = Val.error(ERR_NA) if if_not_found is MISSING else if_not_found.val()
        out = _select(found.reshape(n, 1, 1), None, out, nf)
    if err is not None:
        out = _select(err.reshape(n, 1, 1) == 0, err.reshape(n, 1, 1), out, out)
    return out


@_reg("INDEX", "rvvv", 2, 4)
def _index(ctx, arr, row, col=MISSING, area=MISSING):
    if isinstance(arr, RefList):
        a, ae = _int_arg(_opt(area, 1.0))
        if a.shape[0] > 1:
            raise ScenarioSplit()
        if not 1 <= a[0] <= len(arr):
            return Val.error(ERR_REF)
        arr = arr[a[0] - 1]
    if isinstance(arr, Ref):
        R, C = arr.rows, arr.cols
    else:
        R, C = arr.shape
    r, re_ = _int_arg(_opt(row, 0.0) if row is not MISSING else Val.number(0.0))
    if col is MISSING:
        if R == 1 and C > 1:
            c, ce = r, re_
            r, re_ = np.zeros_like(c), None
        else:
            c, ce = np.zeros_like(r), None
    else:
        c, ce = _int_arg(col)
    err = first_error(re_, ce)
    uniform = r.shape[0] == 1 and c.shape[0] == 1
    if uniform:
        if err is not None and err[0]:
            return Val.error(int(err[0]))
        ri, ci = int(r[0]), int(c[0])
        if ri < 0 or ci < 0 or ri > R or ci > C:
            return Val.error(ERR_REF)
        if isinstance(arr, Ref):
            r1 = arr.r1 + ri - 1 if ri else arr.r1
            r2 = r1 if ri else arr.r2
            c1 = arr.c1 + ci - 1 if ci else arr.c1
            c2 = c1 if ci else arr.c2
            return Ref(arr.sheet, r1, c1, r2, c2)
        rs = slice(ri - 1, ri) if ri else slice(None)
        cs = slice(ci - 1, ci) if ci else slice(None)
        return Val(arr.num[:, rs, cs], arr.kind[:, rs, cs], None if arr.text is None else arr.text[:, rs, cs])
    if (r == 0).any() or (c == 0).any():
        raise ScenarioSplit()
    tab = ctx.engine.read(arr, ctx.scen) if isinstance(arr, Ref) else arr
    n = max(r.shape[0], c.shape[0])
    r = np.broadcast_to(r, (n,))
    c = np.broadcast_to(c, (n,))
    bad = (r < 1) | (r > R) | (c < 1) | (c > C)
    out = _gather(tab, np.where(bad, 0, r - 1), np.where(bad, 0, c - 1))
    e = first_error(None if err is None else np.broadcast_to(err, (n,)), _err_arr(bad, ERR_REF))
    if e is not None:
        e = e.reshape(n, 1, 1)
        out = Val(np.where(e > 0, 0.0, out.num), np.where(e > 0, e, out.kind).astype(np.int8), out.text)
    return out


@_reg("CHOOSE", "vl*", 2)
def _choose(ctx, idx, *choices):
    i, e = _int_arg(idx)
    if i.shape[0] == 1 and (e is None or not e[0]):
        k = int(i[0])
        if not 1 <= k <= len(choices):
            return Val.error(ERR_VALUE)
        ch = choices[k - 1]
        return Val.number(0.0) if ch is MISSING else ch.raw()
    if e is not None and i.shape[0] == 1:
        return Val.error(int(e[0]))
    out = Val.error(ERR_VALUE)
    n = i.shape[0]
    for k in sorted(set(i.tolist())):
        if 1 <= k <= len(choices):
            ch = choices[k - 1]
            v = Val.number(0.0) if ch is MISSING else ch.val()
            out = _select((i == k).reshape(n, 1, 1), None, v, out)
    if e is not None:
        out = _select(np.ones((n, 1, 1), bool), e.reshape(n, 1, 1), out, out)
    return out


@_reg("ROW", "r", 0, 1)
def _row(ctx, ref=MISSING):
    if ref is MISSING:
        return Val.number(ctx.row)
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    if ctx.array and ref.rows > 1:
        return Val.numbers(np.arange(ref.r1, ref.r2 + 1, dtype=float).reshape(1, -1, 1))
    return Val.number(ref.r1)


@_reg("COLUMN", "r", 0, 1)
def _column(ctx, ref=MISSING):
    if ref is MISSING:
        return Val.number(ctx.col)
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    if ctx.array and ref.cols > 1:
        return Val.numbers(np.arange(ref.c1, ref.c2 + 1, dtype=float).reshape(1, 1, -1))
    return Val.number(ref.c1)


@_reg("ROWS", "r")
def _rows(ctx, x):
    if isinstance(x, Ref):
        return Val.number(x.rows)
    if isinstance(x, Val):
        return Val.number(x.shape[0])
    return Val.error(ERR_VALUE)


@_reg("COLUMNS", "r")
def _columns(ctx, x):
    if isinstance(x, Ref):
        return Val.number(x.cols)
    if isinstance(x, Val):
        return Val.number(x.shape[1])
    return Val.error(ERR_VALUE)


def _uniform_ints(*vals):
    out = []
    for v in vals:
        if v is MISSING:
            out.append(None)
            continue
        i, e = _int_arg(v)
        if i.shape[0] > 1 and len(set(i.tolist())) > 1:
            raise ScenarioSplit()
        if e is not None and e[0]:
            return None, int(e[0])
        out.append(int(i[0]))
    return out, None


@_reg("OFFSET", "rvvvv", 3, 5, volatile=True)
def _offset(ctx, ref, rows, cols, height=MISSING, width=MISSING):
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    ints, err = _uniform_ints(rows, cols, height, width)
    if err:
        return Val.error(err)
    dr, dc, h, w = ints
    h = ref.rows if h is None else h
    w = ref.cols if w is None else w
    if h < 1 or w < 1:
        return Val.error(ERR_REF)
    r1, c1 = ref.r1 + dr, ref.c1 + dc
    if r1 < 1 or c1 < 1 or r1 + h - 1 > MAX_ROW or c1 + w - 1 > MAX_COL:
        return Val.error(ERR_REF)
    return Ref(ref.sheet, r1, c1, r1 + h - 1, c1 + w - 1)


@_reg("INDIRECT", "vv", 1, 2, volatile=True)
def _indirect(ctx, text, a1=MISSING):
    t, e = to_text(text)
    if t.shape[0] > 1 and len(set(t.reshape(-1).tolist())) > 1:
        raise ScenarioSplit()
    if e is not None:
        return Val.error(int(e.flat[0]))
    if a1 is not MISSING:
        b, _ = to_bool(a1)
        if not b.reshape(-1)[0]:
            ctx.diag("INDIRECT", 16, "R1C1-style INDIRECT is not supported")
            return Val.error(16)
    node = parse_ref(str(t.reshape(-1)[0]))
    eng = ctx.engine
    if node[0] == "name":
        target = eng.resolve_name(node[2], ctx.sheet if node[1] is None else eng.sheet_index.get(node[1].lower()))
        if target is None:
            return Val.error(ERR_REF)
        node = target[0]
        if node[0] != "ref":
            return Val.error(ERR_REF)
    if node[0] != "ref":
        return Val.error(ERR_REF)
    _, sname, r1, c1, r2, c2 = node
    si = ctx.sheet if sname is None else eng.sheet_index.get(sname.lower())
    if si is None or eng.sheets[si].kind != "worksheet":
        return Val.error(ERR_REF)
    return Ref(si, r1, c1, r2, c2)


@_reg("TRANSPOSE", "a")
def _transpose(ctx, x):
    v = ctx.engine.read(x, ctx.scen) if isinstance(x, Ref) else ctx.value(x)
    return Val(v.num.transpose(0, 2, 1), v.kind.transpose(0, 2, 1),
               None if v.text is None else v.text.transpose(0, 2, 1))


# ================================================================== text
def _text_fn(name, f, params, min_args=None, defaults=()):
    """Element-wise text function; ``params`` letters: t text, n number, b bool."""
    nargs = len(params)
    min_args = nargs - len(defaults) if min_args is None else min_args

    def impl(ctx, *args):
        args = list(args) + [MISSING] * (nargs - len(args))
        vals = []
        for i, a in enumerate(args):
            if a is MISSING:
                vals.append(Val.from_python(defaults[i - min_args]) if i >= min_args else Val.empty())
            else:
                vals.append(a)
        vals = _align_all(vals)
        conv, errs = [], []
        for p, v in zip(params, vals):
            if p == "t":
                x, e = to_text(v)
            elif p == "n":
                x, e = to_num(v)
            else:
                x, e = to_bool(v)
            conv.append(x)
            errs.append(e)
        err = first_error(*errs)
        shape = np.broadcast_shapes(*[c.shape for c in conv])
        conv = [np.broadcast_to(c, shape) for c in conv]
        out = np.empty(shape, dtype=object)
        eout = np.zeros(shape, dtype=np.int8)
        for idx in np.ndindex(shape):
            try:
                out[idx] = f(*[c[idx] for c in conv])
            except _TextError as exc:
                eout[idx] = exc.code
                out[idx] = ""
            except (ValueError, OverflowError, IndexError):
                eout[idx] = ERR_VALUE
                out[idx] = ""
        err = first_error(err, eout if eout.any() else None)
        if all(isinstance(o, (int, float)) and not isinstance(o, bool) for o in out.flat):
            return Val.numbers(out.astype(float), err)
        if all(isinstance(o, bool) for o in out.flat):
            return Val.bools(out.astype(float), err)
        return Val.texts(out, err)
    NATIVE[name] = Fn(name, impl, "v" * nargs, min_args, nargs)


class _TextError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def _need(cond):
    if not cond:
        raise _TextError(ERR_VALUE)


def _left(s, n):
    n = int(n)
    _need(n >= 0)
    return s[:n]


def _right(s, n):
    n = int(n)
    _need(n >= 0)
    return s[len(s) - n:] if n else ""


def _mid(s, start, n):
    start, n = int(start), int(n)
    _need(start >= 1 and n >= 0)
    return s[start - 1:start - 1 + n]


def _value(s):
    v = text_to_number(s)
    if v is None:
        raise _TextError(ERR_VALUE)
    return v


def _find(needle, hay, start, case=True):
    start = int(start)
    _need(1 <= start <= len(hay) + 1)
    if case:
        i = hay.find(needle, start - 1)
    else:
        rx = _wild_re(needle)
        i = -1
        for j in range(start - 1, len(hay) + 1):
            if re.compile(rx.pattern[:-1], re.S | re.I).match(hay, j):
                i = j
                break
    _need(i >= 0)
    return float(i + 1)


def _substitute(s, old, new, inst):
    if inst == "":
        return s.replace(old, new) if old else s
    k = int(float(inst))
    _need(k >= 1)
    if not old:
        return s
    idx = -1
    for _ in range(k):
        idx = s.find(old, idx + 1)
        if idx < 0:
            return s
    return s[:idx] + new + s[idx + len(old):]


_text_fn("LEN", lambda s: float(len(s)), "t")
_text_fn("LEFT", _left, "tn", defaults=(1.0,))
_text_fn("RIGHT", _right, "tn", defaults=(1.0,))
_text_fn("MID", _mid, "tnn")
_text_fn("UPPER", lambda s: s.upper(), "t")
_text_fn("LOWER", lambda s: s.lower(), "t")
_text_fn("PROPER", lambda s: s.title(), "t")
_text_fn("TRIM", lambda s: re.sub(" +", " ", s.strip(" ")), "t")
_text_fn("VALUE", _value, "t")
_text_fn("EXACT", lambda a, b: a == b, "tt")
def _rept(s, n):
    _need(n >= 0 and len(s) * int(n) <= 32767)
    return s * int(n)


_text_fn("REPT", _rept, "tn")
_text_fn("FIND", lambda a, b, st: _find(a, b, st, True), "ttn", defaults=(1.0,))
_text_fn("SEARCH", lambda a, b, st: _find(a, b, st, False), "ttn", defaults=(1.0,))
_text_fn("SUBSTITUTE", _substitute, "tttt", min_args=3, defaults=("",))


def _concat_impl(ctx, *args, ranges=False):
    acc = None
    for a in args:
        if a is MISSING:
            v = Val.string("")
        elif isinstance(a, (Ref, RefList)) and ranges:
            parts = []
            for ref in ([a] if isinstance(a, Ref) else list(a)):
                parts.append(ctx.engine.read(ref, ctx.scen))
            strs = []
            n = max(p.n for p in parts)
            errs = []
            for p in parts:
                t, e = to_text(p)
                strs.append(np.broadcast_to(t, (n,) + p.shape).reshape(n, -1))
                errs.append(_first_err_rows(np.broadcast_to(p.kind, (n,) + p.shape).reshape(n, -1)))
            joined = np.array(["".join(row) for row in np.concatenate(strs, axis=1)], dtype=object)
            e = first_error(*errs)
            v = Val.texts(joined.reshape(n, 1, 1), None if e is None else e.reshape(n, 1, 1))
        else:
            v = ctx.value(a)
        if acc is None:
            acc = v
        else:
            from .engine_ops import concat
            acc = concat(acc, v)
    if acc is None:
        return Val.string("")
    t, e = to_text(acc)
    return Val.texts(t, e)


NATIVE["CONCATENATE"] = Fn("CONCATENATE", lambda ctx, *a: _concat_impl(ctx, *a), "v*", 1)
NATIVE["CONCAT"] = Fn("CONCAT", lambda ctx, *a: _concat_impl(ctx, *a, ranges=True), "r*", 1)


@_reg("TEXTJOIN", "vvr*", 3)
def _textjoin(ctx, delim, ignore_empty, *args):
    d, de = to_text(delim)
    ig, ie = to_bool(ignore_empty)
    if d.shape[0] > 1 or ig.shape[0] > 1:
        raise ScenarioSplit()
    sep = d.reshape(-1)[0]
    skip = bool(ig.reshape(-1)[0])
    items = []
    n = 1
    for a in args:
        if a is MISSING:
            continue
        v = ctx.engine.read(a, ctx.scen) if isinstance(a, Ref) else ctx.value(a)
        t, e = to_text(v)
        if e is not None:
            return Val.error(int(e[e > 0].flat[0]))
        items.append(t.reshape(v.n, -1))
        n = max(n, v.n)
    rows = []
    for s in range(n):
        parts = []
        for t in items:
            for x in t[s if t.shape[0] > 1 else 0]:
                if skip and x == "":
                    continue
                parts.append(x)
        rows.append(sep.join(parts))
    return Val.texts(np.array(rows, dtype=object).reshape(n, 1, 1))


# TEXT(value, format): the number formats a planning sheet uses
_FMT_RE = re.compile(r"^(?P<pre>[^0#.,%]*?)(?P<int>[#0,]*0|#)(?:\.(?P<dec>[0#]+))?(?P<exp>[eE][+-]0+)?(?P<pct>%?)(?P<post>[^0#]*)$")


def format_number(x: float, fmt: str) -> str:
    f = fmt.strip()
    if f.lower() in ("general", ""):
        return number_to_text(x)
    f = f.replace('"', "")
    if ";" in f:
        secs = f.split(";")
        if x < 0 and len(secs) > 1:
            return format_number(abs(x), secs[1])
        if x == 0 and len(secs) > 2:
            return format_number(x, secs[2])
        f = secs[0]
    m = _FMT_RE.match(f)
    if not m:
        raise _TextError(16)
    dec = len(m.group("dec") or "")
    opt_dec = (m.group("dec") or "").count("#")
    if m.group("pct"):
        x = x * 100.0
    if m.group("exp"):
        s = f"{x:.{dec}E}"
        mant, e = s.split("E")
        digits = len(m.group("exp")) - 2
        return f"{m.group('pre')}{mant}E{e[0]}{abs(int(e)):0{digits}d}{m.group('pct')}{m.group('post')}"
    # Excel rounds half away from zero
    q = math.floor(abs(float(approx15(np.asarray(abs(x) * 10 ** dec)))) + 0.5) / 10 ** dec
    q = math.copysign(q, x) if x < 0 else q
    s = f"{abs(q):,.{dec}f}" if "," in (m.group("int") or "") else f"{abs(q):.{dec}f}"
    if opt_dec and "." in s:
        s = s.rstrip("0").rstrip(".") if opt_dec == dec else s
    if (m.group("int") or "").lstrip(",").startswith("#") and s.startswith("0.") and "0" not in m.group("int"):
        s = s[1:]
    neg = "-" if q < 0 and float(s.replace(",", "") or 0) != 0 else ""
    return f"{m.group('pre')}{neg}{s}{m.group('pct')}{m.group('post')}"


def _text_format(x, fmt):
    return format_number(float(x), fmt)


def _text_impl(ctx, value, fmt):
    vals = _align_all([value, fmt])
    v, f = vals
    ft, fe = to_text(f)
    shape = np.broadcast_shapes(v.num.shape, ft.shape)
    out = np.empty(shape, dtype=object)
    err = np.zeros(shape, dtype=np.int8)
    vk = np.broadcast_to(v.kind, shape)
    vx = np.broadcast_to(v.num, shape)
    vt = None if v.text is None else np.broadcast_to(v.text, shape)
    ftb = np.broadcast_to(ft, shape)
    for idx in np.ndindex(shape):
        k = vk[idx]
        if k >= ERR_NULL:
            err[idx] = k
            out[idx] = ""
            continue
        if k == STR:
            num = text_to_number(vt[idx])
            if num is None:
                out[idx] = vt[idx]
                continue
        elif k == BOOL:
            out[idx] = "TRUE" if vx[idx] else "FALSE"
            continue
        else:
            num = float(vx[idx])
        try:
            out[idx] = format_number(num, ftb[idx])
        except _TextError:
            ctx.diag("TEXT", 16, f"number format {ftb[idx]!r} is not supported by the engine")
            err[idx] = 16
            out[idx] = ""
    return Val.texts(out, first_error(fe, err if err.any() else None))


NATIVE["TEXT"] = Fn("TEXT", _text_impl, "vv")


# ================================================================= dates
def _now_serial():
    d = _dt.datetime.now()
    return (d - _dt.datetime(1899, 12, 30)).total_seconds() / 86400.0


NATIVE["NOW"] = Fn("NOW", lambda ctx: Val.number(_now_serial()), "", volatile=True)
NATIVE["TODAY"] = Fn("TODAY", lambda ctx: Val.number(math.floor(_now_serial())), "", volatile=True)


def _date(y, m, d):
    y = np.trunc(y)
    y = np.where(y < 1900, y + 1900, y)
    bad = (y < 1900) | (y > 9999)
    out = np.zeros(np.broadcast_shapes(y.shape, m.shape, d.shape))
    for idx in np.ndindex(out.shape):
        yy = int(np.broadcast_to(y, out.shape)[idx])
        mm = int(np.trunc(np.broadcast_to(m, out.shape)[idx]))
        dd = int(np.trunc(np.broadcast_to(d, out.shape)[idx]))
        if np.broadcast_to(bad, out.shape)[idx]:
            continue
        yy += (mm - 1) // 12
        mm = (mm - 1) % 12 + 1
        base = _dt.date(yy, mm, 1) - _dt.date(1899, 12, 30)
        out[idx] = base.days + dd - 1
    return out, _err_arr(bad, ERR_NUM)


_numeric("DATE", _date, 3)

SUPPORTED = tuple(sorted(NATIVE))


def native_functions() -> FunctionRegistry:
    """A fresh registry with the native Excel functions only."""
    return NATIVE.copy()


def default_functions() -> FunctionRegistry:
    """Native Excel functions plus the cryptoplan UDFs of the add-in catalog (if installed)."""
    from .engine_udf import catalog_functions
    reg = NATIVE.copy()
    reg.update(catalog_functions())
    return reg
