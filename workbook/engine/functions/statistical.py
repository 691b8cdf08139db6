"""Statistical functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import math

import numpy as np

from ..values import (
    ERR_NUM,
)
from .base import (
    NATIVE, error_array, register_numeric, scipy,
)

__all__ = ["FUNCTIONS", "POISSON_SUM_MEAN", "POISSON_SUM_TERMS"]

_BEFORE = frozenset(NATIVE)






# Distributions from scipy.special (scipy.stats would add ~0.5 s to every start): Poisson
# beyond the summed range (see _poisson) cdf = pdtr (regularized upper incomplete gamma), pmf
# in logs; normal via ndtr/ndtri.
def _poisson_pmf(k, m):
    return np.exp(scipy.special.xlogy(k, m) - m - scipy.special.gammaln(k + 1.0))


def _norm_pdf(z):
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


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
        r = np.where(far, np.where(cum != 0, scipy.special.pdtr(kk, mm), _poisson_pmf(kk, mm)), r)
    return r, error_array(bad, ERR_NUM)


register_numeric("POISSON.DIST", _poisson, 3, aliases=("POISSON",))


def _expon(x, lam, cum):
    bad = (x < 0) | (lam <= 0)
    ll = np.where(bad, 1, lam)
    r = np.where(cum != 0, -np.expm1(-ll * x), ll * np.exp(-ll * x))
    return r, error_array(bad, ERR_NUM)


register_numeric("EXPON.DIST", _expon, 3, aliases=("EXPONDIST",))


def _norm(x, mu, sd, cum):
    bad = sd <= 0
    s = np.where(bad, 1, sd)
    z = (x - mu) / s
    r = np.where(cum != 0, scipy.special.ndtr(z), _norm_pdf(z) / s)
    return r, error_array(bad, ERR_NUM)


register_numeric("NORM.DIST", _norm, 4, aliases=("NORMDIST",))
register_numeric("NORM.S.DIST", lambda z, cum: (np.where(cum != 0, scipy.special.ndtr(z), _norm_pdf(z)), None), 2)
register_numeric("NORMSDIST", lambda z: (scipy.special.ndtr(z), None), 1)


def _norminv(p, mu, sd):
    bad = (p <= 0) | (p >= 1) | (sd <= 0)
    return mu + np.where(bad, 1, sd) * scipy.special.ndtri(np.where(bad, 0.5, p)), error_array(bad, ERR_NUM)


register_numeric("NORM.INV", _norminv, 3, aliases=("NORMINV",))
register_numeric("NORM.S.INV", lambda p: _norminv(p, np.zeros_like(p), np.ones_like(p)), 1,
         aliases=("NORMSINV",))

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
