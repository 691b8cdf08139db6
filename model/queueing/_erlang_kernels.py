"""Erlang B and C and the Poisson mass: the numerical kernels behind :mod:`cryptoplan.model.queueing.erlang`.

Unvalidated scalar and array paths, kept apart from the public, validated functions of
:mod:`cryptoplan.model.queueing.erlang` (as SciPy keeps its distributions' machinery in
``scipy.stats._distn_infrastructure``): :mod:`cryptoplan.model.queueing.mmc` calls them once per queue
on arguments it has already checked.  The formulas, accuracy and references are in
:mod:`cryptoplan.model.queueing.erlang`'s docstring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
import os

import numpy as np
from ..lazy import lazy_module

# loaded on first use: scipy.special (160 ms) for a large server count, the pool for large arrays.
# SciPy is bound as the package, its special functions reached as ``scipy.special``: a lazy
# submodule would import its parent package at once (5-7 ms of every start that never needs it)
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from concurrent import futures
    import scipy
else:
    futures = lazy_module("concurrent.futures")
    scipy = lazy_module("scipy")

__all__ = ["RECURRENCE_SERVERS", "erlang_b_scalar", "erlang_b_array", "erlang_c_from_b",
           "poisson_pmf_scalar", "poisson_pmf_array"]

_LN_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# Stirling series coefficients 1/12, 1/360, 1/1260, 1/1680, 1/1188.
_S0, _S1, _S2, _S3, _S4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
# |v| below this uses the series for bd0; above it the direct form loses at
# most a factor of ~4 to cancellation (see _bd0).
_BD0_SERIES = 0.3
_BD0_TERMS = 17  # v**2 < 0.09: 0.09**17 < 1e-17
# Whole server counts up to this use the recurrence (relative error below 3 c eps < 2e-13).
RECURRENCE_SERVERS = 256
# ... and in an array of _PARALLEL_MIN elements or more, up to this (c passes of three operations
# cost less than one incomplete gamma function per element)
_RECURRENCE_LARGE = 32


# ----------------------------------------------------------------- scalar path
def _stirlerr_s(n: float) -> float:
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for n >= 1 (scalar)."""
    if n <= 15.0:
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - _LN_SQRT_2PI
    nn = n * n
    return (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / n


def _bd0_s(x: float, m: float) -> float:
    """x log(x/m) + m - x, without cancellation (scalar)."""
    d = x - m
    v = d / (x + m)
    if abs(v) < _BD0_SERIES:
        s = d * v
        ej = 2.0 * x * v
        v2 = v * v
        for j in range(1, _BD0_TERMS + 1):
            ej *= v2
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                break
            s = s1
        return s
    r = x / m
    lg = math.log(r) if r != math.inf else math.log(x) - math.log(m)
    return x * lg + m - x


def poisson_pmf_scalar(x: float, m: float) -> float:
    """Poisson probability :math:`e^{-m} m^x / x!` for one ``x >= 1``, by Loader's saddle-point form (no overflow)."""
    if m == 0.0:
        return 0.0
    return math.exp(-_stirlerr_s(x) - _bd0_s(x, m) - _LN_SQRT_2PI) / math.sqrt(x)


# Below this Q(c+1, A) (overload, A well above c + 1) Erlang B comes from the
# continued fraction of Gamma(c+1, A) instead of p(c; A) / Q(c+1, A): there
# gammaincc loses accuracy (5e-12 relative at c = 5000, A = 1.5 c) and from
# A ~ 745 + c numerator and denominator underflow together (0/0).  The
# fraction converges in a few dozen terms or fewer wherever Q < 1e-10.
_CF_BELOW = 1e-10
_CF_TINY = 1e-300


def _erlang_b_cf_s(a: float, c: float) -> float:
    """B = 1 / (A h), Gamma(c+1, A) = e^-A A^(c+1) h by Lentz's continued fraction.

    Converges in a handful of terms where it is used (A far above c + 1).
    """
    s = c + 1.0
    b = a + 1.0 - s
    cf = 1.0 / _CF_TINY
    d = 1.0 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - s)
        b += 2.0
        d = an * d + b
        d = d if abs(d) >= _CF_TINY else _CF_TINY
        cf = b + an / cf
        cf = cf if abs(cf) >= _CF_TINY else _CF_TINY
        d = 1.0 / d
        delta = d * cf
        h *= delta
        if abs(delta - 1.0) <= 2.3e-16:
            break
    return 1.0 / (a * h)


def _erlang_b_recurrence_s(a: float, c: int) -> float:
    """B(A, c) by the recurrence over k = 1..c (whole c, see the module docstring)."""
    b = 1.0
    for k in range(1, c + 1):
        x = a * b
        b = x / (k + x)
    return b


def erlang_b_scalar(a: float, c: float) -> float:
    """Erlang B of one already-validated pair (the scalar path of :func:`erlang_b`).

    For :mod:`cryptoplan.model.queueing.mmc`, which calls it once per scalar queue without the array
    machinery: the recurrence :math:`B_k = a B_{k-1} / (k + a B_{k-1})` for whole ``c`` up to
    ``RECURRENCE_SERVERS``, else the regularized incomplete gamma function (continued fraction
    where it underflows).  No validation: :func:`erlang_b` is the public entry.
    """
    if a == 0.0:
        return 0.0
    if c <= RECURRENCE_SERVERS and c == int(c):
        return _erlang_b_recurrence_s(a, int(c))
    q = float(scipy.special.gammaincc(c + 1.0, a))
    if q < _CF_BELOW and a > c + 1.0:
        return _erlang_b_cf_s(a, c)
    return poisson_pmf_scalar(c, a) / q


# ------------------------------------------------------------------ array path
def _stirlerr(n: np.ndarray) -> np.ndarray:
    nn = n * n
    big = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / n
    small = np.where(n <= 15.0, n, 1.0)
    small = scipy.special.gammaln(small + 1.0) - (small + 0.5) * np.log(small) + small - _LN_SQRT_2PI
    return np.where(n <= 15.0, small, big)


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    d = x - m
    v = d / (x + m)
    series = np.abs(v) < _BD0_SERIES
    out = np.empty_like(v)
    direct = ~series
    if direct.any():
        xd, md = x[direct], m[direct]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = xd / md
            # x/m overflows for subnormal m: fall back to the difference of logs there.
            lg = np.where(np.isfinite(ratio), np.log(ratio), np.log(xd) - np.log(md))
            out[direct] = xd * lg + md - xd
    if series.any():
        vs, xs, ds = v[series], x[series], d[series]
        v2 = vs * vs
        # sum_{j>=1} v^(2j) / (2j+1) by Horner, with as many terms as the
        # largest |v| needs for the tail to fall below 1e-17 relative.
        vmax2 = float(v2.max())
        n = 1 if vmax2 == 0.0 else min(_BD0_TERMS, math.ceil(-17.0 * math.log(10.0) / math.log(vmax2)))
        poly = np.full_like(v2, 1.0 / (2 * n + 1))
        for j in range(n - 1, 0, -1):
            poly *= v2
            poly += 1.0 / (2 * j + 1)
        poly *= v2
        out[series] = ds * vs + 2.0 * xs * vs * poly
    return out


def poisson_pmf_array(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Poisson probability :math:`e^{-m} m^x / x!` elementwise, ``x >= 1``, Loader's saddle-point form; 0 where ``m`` is 0."""
    zero = m == 0.0
    mm = np.where(zero, 1.0, m)
    p = np.exp(-_stirlerr(x) - _bd0(x, mm) - _LN_SQRT_2PI) / np.sqrt(x)
    return np.where(zero, 0.0, p)


def _erlang_b_cf(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Vectorized :func:`_erlang_b_cf_s` (every element iterated to convergence)."""
    s = c + 1.0
    b = a + 1.0 - s
    cf = np.full_like(b, 1.0 / _CF_TINY)
    d = 1.0 / b
    h = d.copy()
    for i in range(1, 1000):
        an = -i * (i - s)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) >= _CF_TINY, d, _CF_TINY)
        cf = b + an / cf
        cf = np.where(np.abs(cf) >= _CF_TINY, cf, _CF_TINY)
        d = 1.0 / d
        delta = d * cf
        h = h * delta
        if (np.abs(delta - 1.0) <= 2.3e-16).all():
            break
    return 1.0 / (a * h)


def _erlang_b_kernel(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    q = scipy.special.gammaincc(c + 1.0, a)
    deep = (q < _CF_BELOW) & (a > c + 1.0)
    if not deep.any():
        return poisson_pmf_array(c, a) / q
    out = np.array(poisson_pmf_array(c, a) / np.where(deep, 1.0, q))
    out[deep] = _erlang_b_cf(a[deep], c[deep])
    return out


# NumPy and scipy.special ufuncs release the GIL, so large arrays are split
# across the machine's cores (the incomplete gamma function dominates the cost).
_PARALLEL_MIN = 2048
_WORKERS = max(1, min(8, os.cpu_count() or 1))
_pool = None  # a concurrent.futures.ThreadPoolExecutor, made on first use


def _erlang_b_recurrence(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """B(A, c) by the recurrence, element-wise, for whole c up to RECURRENCE_SERVERS."""
    b = np.ones(a.shape)
    for k in range(1, int(c.max(initial=0)) + 1):
        x = a * b
        b = np.where(k <= c, x / (k + x), b)
    return b


def erlang_b_array(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Erlang B of already-validated, broadcast float arrays (the array path of :func:`erlang_b`).

    Small arrays of whole ``c`` use the vectorized recurrence; large ones are split across
    threads.  No validation: :func:`erlang_b` is the public entry.
    """
    global _pool
    # whole counts: the recurrence, c passes over the array; for a large array only while that is
    # cheaper than the incomplete gamma function (a plan's cards and processors: a few)
    if (np.all(c <= (RECURRENCE_SERVERS if a.size < _PARALLEL_MIN else _RECURRENCE_LARGE))
            and np.array_equal(c, np.floor(c))):
        return _erlang_b_recurrence(a, c)
    if a.size < _PARALLEL_MIN or _WORKERS == 1:
        return _erlang_b_kernel(a, c)
    # SciPy is bound lazily (lazy_module): load scipy.special here, in this thread; a lazy module's
    # first use from several threads at once is not thread-safe before Python 3.12.3
    scipy.special.gammaincc
    if _pool is None:
        _pool = futures.ThreadPoolExecutor(_WORKERS, thread_name_prefix="cryptoplan-erlang")
    af, cf = a.reshape(-1), c.reshape(-1)
    bounds = np.linspace(0, af.size, _WORKERS + 1).astype(int)
    parts = [_pool.submit(_erlang_b_kernel, af[i:j], cf[i:j]) for i, j in zip(bounds[:-1], bounds[1:])]
    return np.concatenate([f.result() for f in parts]).reshape(a.shape)


def erlang_c_from_b(b, a, c):
    """Erlang C from Erlang B of the same traffic ``a`` and servers ``c`` (``a < c``).

    .. math:: C(a, c) = \\frac{B(a, c)}{1 - \\frac{a}{c}\\,(1 - B(a, c))}
    """
    return b / ((c - a) / c + (a / c) * b)
