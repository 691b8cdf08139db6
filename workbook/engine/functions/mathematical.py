"""Math and trigonometry functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import math

import numpy as np

from ..arguments import Fn
from ..ops import (
    approx15, approx_equal, binary_op, first_error,
)
from ..values import (
    ERR_DIV0, ERR_NULL, ERR_NUM, Val,
)
from .base import (
    NATIVE, error_array, register_numeric, scipy,
)

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)


register_numeric("ABS", lambda x: (np.abs(x), None), 1)
register_numeric("SQRT", lambda x: (np.sqrt(np.maximum(x, 0)), error_array(x < 0, ERR_NUM)), 1)
register_numeric("EXP", lambda x: (np.exp(x), None), 1)
register_numeric("LN", lambda x: (np.log(np.where(x > 0, x, 1)), error_array(x <= 0, ERR_NUM)), 1)
register_numeric("LOG10", lambda x: (np.log10(np.where(x > 0, x, 1)), error_array(x <= 0, ERR_NUM)), 1)


def _log(x, b):
    bad = (x <= 0) | (b <= 0)
    den = np.log(np.where(b > 0, b, 2))
    div0 = (den == 0) & ~bad
    r = np.log(np.where(x > 0, x, 1)) / np.where(den == 0, 1, den)
    return r, first_error(error_array(bad, ERR_NUM), error_array(div0, ERR_DIV0))


register_numeric("LOG", _log, 2, (10.0,))


def _power(x, y):
    v = Val.numbers(x)
    r = binary_op("^", v, Val.numbers(y))
    e = np.where(r.kind >= ERR_NULL, r.kind, 0).astype(np.int8)
    return r.num, (e if e.any() else None)


register_numeric("POWER", _power, 2)
register_numeric("INT", lambda x: (np.floor(approx15(x)), None), 1)
register_numeric("SIGN", lambda x: (np.sign(x), None), 1)
NATIVE["PI"] = Fn("PI", lambda ctx: Val.number(math.pi))


def _mod(a, b):
    z = b == 0
    bb = np.where(z, 1.0, b)
    q = approx15(a / bb)
    r = a - bb * np.floor(q)
    r = np.where(approx_equal(r, 0) | approx_equal(r, bb), 0.0, r)
    return r, error_array(z, ERR_DIV0)


register_numeric("MOD", _mod, 2)


def _quotient(a, b):
    z = b == 0
    return np.trunc(a / np.where(z, 1, b)), error_array(z, ERR_DIV0)


register_numeric("QUOTIENT", _quotient, 2)


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


register_numeric("ROUND", lambda x, d: _round_core(x, d, "round"), 2)
register_numeric("ROUNDUP", lambda x, d: _round_core(x, d, "up"), 2)
register_numeric("ROUNDDOWN", lambda x, d: _round_core(x, d, "down"), 2)
register_numeric("TRUNC", lambda x, d: _round_core(x, d, "down"), 2, (0.0,))


def _mround(x, m):
    bad = (x * m) < 0
    z = m == 0
    q = approx15(np.abs(x) / np.where(z, 1, np.abs(m)))
    r = np.sign(x) * np.floor(q + 0.5) * np.abs(m)
    return np.where(z, 0.0, r), error_array(bad, ERR_NUM)


register_numeric("MROUND", _mround, 2)


def _ceiling(x, s):
    bad = (x > 0) & (s < 0)
    z = s == 0
    q = approx15(x / np.where(z, 1, s))
    return np.where(z, 0.0, np.ceil(q) * s), error_array(bad, ERR_NUM)


def _floor(x, s):
    bad = (x > 0) & (s < 0)
    z = (s == 0)
    q = approx15(x / np.where(z, 1, s))
    return np.where(z, 0.0, np.floor(q) * s), first_error(error_array(bad, ERR_NUM),
                                                          error_array(z & (x != 0), ERR_DIV0))


register_numeric("CEILING", _ceiling, 2, (1.0,))
register_numeric("FLOOR", _floor, 2, (1.0,))


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


register_numeric("CEILING.MATH", _ceiling_math, 3, (1.0, 0.0))
register_numeric("FLOOR.MATH", _floor_math, 3, (1.0, 0.0))
register_numeric("CEILING.PRECISE", lambda x, s: _ceiling_math(x, s, np.zeros_like(x)), 2, (1.0,),
         aliases=("ISO.CEILING",))
register_numeric("FLOOR.PRECISE", lambda x, s: _floor_math(x, s, np.zeros_like(x)), 2, (1.0,))


def _even_odd(x, odd):
    a = np.ceil(approx15(np.abs(x)))
    if odd:
        a = np.where(a % 2 == 0, a + 1, a)
    else:
        a = np.where(a % 2 == 1, a + 1, a)
    return np.where(x < 0, -a, a), None


register_numeric("EVEN", lambda x: _even_odd(x, False), 1)
register_numeric("ODD", lambda x: _even_odd(x, True), 1)


def _fact(x):
    n = np.trunc(x)
    bad = (n < 0) | (n > 170)
    return scipy.special.gamma(np.where(bad, 1, n) + 1), error_array(bad, ERR_NUM)


register_numeric("FACT", _fact, 1)


def _combin(n, k):
    n, k = np.trunc(n), np.trunc(k)
    bad = (n < 0) | (k < 0) | (k > n)
    return np.round(scipy.special.comb(np.where(bad, 1, n), np.where(bad, 0, k))), error_array(bad, ERR_NUM)


register_numeric("COMBIN", _combin, 2)
register_numeric("GAMMALN", lambda x: (scipy.special.gammaln(np.where(x > 0, x, 1)), error_array(x <= 0, ERR_NUM)), 1,
         aliases=("GAMMALN.PRECISE",))
register_numeric("DEGREES", lambda x: (np.degrees(x), None), 1)
register_numeric("RADIANS", lambda x: (np.radians(x), None), 1)
register_numeric("SIN", lambda x: (np.sin(x), None), 1)
register_numeric("COS", lambda x: (np.cos(x), None), 1)
register_numeric("TAN", lambda x: (np.tan(x), None), 1)

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
