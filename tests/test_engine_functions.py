"""Native spreadsheet functions of the formula engine (cryptoplan.workbook.engine.functions).

Expected values come from 50-digit mpmath (exact arithmetic) or, for DATE, Python's calendar
with the documented 1900 rules, not from the engine's own code.
"""

import datetime
import subprocess
import sys

import mpmath
import numpy as np
import pytest
from numpy.testing import assert_allclose

from cryptoplan.workbook.engine.functions import NATIVE
from cryptoplan.workbook.engine.functions.statistical import POISSON_SUM_MEAN, POISSON_SUM_TERMS
from cryptoplan.workbook.engine.values import NUM, Val

mpmath.mp.dps = 50


def _call(name, *columns):
    """Evaluate native ``name`` over scenario arrays (one element per scenario)."""
    args = [Val.numbers(np.asarray(c, float).reshape(-1, 1, 1)) for c in columns]
    out = NATIVE[name].impl(None, *args)
    return out.num.reshape(-1), out.kind.reshape(-1)


def _poisson_exact(k, m):
    k, m = int(k), mpmath.mpf(m)
    terms = [mpmath.exp(-m) * m ** i / mpmath.factorial(i) for i in range(k + 1)]
    return float(terms[-1]), float(mpmath.fsum(terms))


# whole k from 0 up to the last summed term, means from 0 to the summing limit, plus both
# sides of each limit (the far side is scipy.special's pdtr and log-gamma)
_K = [0, 1, 2, 7, 40, 170, 699, 700, 701, 935, 936, 1200]
_M = [0.0, 1e-3, 0.5, 2.5, 12.5, 150.0, 699.5, 700.0, 700.5, 900.0]


@pytest.mark.parametrize("m", _M)
def test_poisson_dist_matches_exact_sums(m):
    ks = np.array([k for k in _K])
    pmf, kind_p = _call("POISSON.DIST", ks, np.full(ks.size, m), np.zeros(ks.size))
    cdf, kind_c = _call("POISSON.DIST", ks, np.full(ks.size, m), np.ones(ks.size))
    assert (kind_p == NUM).all() and (kind_c == NUM).all()
    exact = np.array([_poisson_exact(k, m) for k in ks])
    summed = (ks < POISSON_SUM_TERMS) & (m <= POISSON_SUM_MEAN)
    # the summed terms: relative error below 4 k eps (see _poisson_by_terms); mass values
    # below the normal doubles (~1e-308) carry only absolute precision
    assert_allclose(pmf[summed], exact[summed, 0], rtol=1e-12, atol=1e-300)
    assert_allclose(cdf[summed], exact[summed, 1], rtol=1e-12, atol=1e-300)
    # beyond: the mass as exp(k ln m - m - ln k!), whose exponent is known to a few eps of its
    # terms' size, so the mass to that much relative error; the distribution function is
    # scipy's incomplete gamma (pdtr)
    far = ~summed
    ln_terms = ks[far] * abs(np.log(m or 1.0)) + m + np.array([float(mpmath.loggamma(k + 1)) for k in ks[far]])
    rel = np.abs(pmf[far] - exact[far, 0]) / np.maximum(exact[far, 0], 1e-300)
    assert (rel <= 8 * np.finfo(float).eps * ln_terms + 1e-14).all(), rel
    assert_allclose(cdf[far], exact[far, 1], rtol=1e-12, atol=1e-300)


def test_poisson_dist_truncates_and_rejects_like_excel():
    # Excel truncates x (POISSON.DIST(7.9,3,FALSE) = POISSON.DIST(7,3,FALSE)) and gives #NUM!
    # for x < 0 or mean < 0
    a, _ = _call("POISSON.DIST", [7.9, 7.0], [3.0, 3.0], [0.0, 0.0])
    assert a[0] == a[1]
    _, kind = _call("POISSON.DIST", [-1.0, 2.0, 2.0], [2.0, -0.5, 2.0], [1.0, 1.0, 1.0])
    assert kind[0] != NUM and kind[1] != NUM and kind[2] == NUM


@pytest.mark.subprocess
def test_poisson_dist_in_the_summed_range_does_not_load_scipy_special():
    # the template's Check sheet (POISSON.DIST at a few servers) must not pay scipy.special's
    # import at every recalculation; a fresh interpreter shows what is loaded
    code = ("import sys, numpy as np\n"
            "from cryptoplan.workbook.engine.functions import NATIVE\n"
            "from cryptoplan.workbook.engine.values import Val\n"
            "v = lambda x: Val.numbers(np.array(x, float).reshape(-1, 1, 1))\n"
            "NATIVE['POISSON.DIST'].impl(None, v([0, 3, 935]), v([2.5, 0, 700]), v([1, 0, 1]))\n"
            "print(type(sys.modules.get('scipy.special')) is type(sys))\n")   # ran, not a lazy placeholder
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"
    assert POISSON_SUM_TERMS == 936 and POISSON_SUM_MEAN <= 708.0   # exp(-mean) stays normal


def _excel_date(y, m, d):
    """DATE by the documented rules with Python's calendar: a year 0-1899 means 1900 + year,
    months and days roll over, and before 1900-03-01 the serial is one less (Excel counts
    the non-existent 1900-02-29 as serial 60); None for #NUM!."""
    y, m, d = int(y), int(m), int(d)
    y = y + 1900 if 0 <= y < 1900 else y
    if not 1900 <= y <= 9999:
        return None
    if y + (m - 1) // 12 > 9999:
        return None
    first = datetime.date(y + (m - 1) // 12, (m - 1) % 12 + 1, 1)
    serial = (first - datetime.date(1899, 12, 30)).days + d - 1
    serial -= first < datetime.date(1900, 3, 1)
    return serial if serial <= 2958465 else None


def test_date_over_a_scenario_axis_equals_calendar_arithmetic():
    rng = np.random.default_rng(7)
    n = 4000
    years = np.concatenate([rng.integers(-3, 10003, n), np.full(24, 1900), np.full(24, 9999)])
    months = np.concatenate([rng.integers(-30, 30, n), np.arange(-11, 13), np.arange(1, 25)])
    days = np.concatenate([rng.integers(-60, 60, n), np.full(24, 0), np.full(24, 31)])
    num, kind = _call("DATE", years, months, days)
    for y, m, d, x, k in zip(years, months, days, num, kind):
        want = _excel_date(y, m, d)
        assert (k == NUM and x == want) if want is not None else k != NUM, (y, m, d, x, k, want)
