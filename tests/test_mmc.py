"""Tests for model.mmc: M/M/c mean values, distributions, percentiles, sizing.

Independent references used here (none of them calls model.erlang):

* M/M/1 closed forms, written out by hand (Kleinrock 1975, §3.2);
* Erlang C for integer c from the classical finite sum, in 50-digit mpmath;
* the M/M/c birth-death chain, truncated far in the tail and solved
  numerically (pi Q = 0) with numpy: mean queue lengths and P(wait);
* the response-time survival function obtained by numerical convolution of
  the waiting-time law with the service law (scipy.integrate.quad), inverted
  with scipy.optimize.brentq.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from scipy.integrate import quad
from scipy.optimize import brentq

from cryptoplan.model import (
    MMCMetrics, UnstableQueueError, mmc_metrics, mmc_number_in_system, mmc_queue_length,
    mmc_response, mmc_response_percentile, mmc_servers, mmc_utilization, mmc_wait,
    mmc_wait_exceeds, mmc_wait_percentile, mmc_wait_probability,
)
from cryptoplan.model.queueing import mmc as mmc_module

# Tolerances.  The implementation is accurate to ~1e-12 (Erlang C); references
# computed in 50 digits are exact at double precision.
RTOL = 1e-12
# Numerically solved chain / quadrature references: ~1e-13 from the linear
# solve or quad's error estimate; 1e-10 leaves room for neither to matter.
RTOL_NUM = 1e-10


# ------------------------------------------------------------ references
def mp_erlang_c_sum(a: float, c: int) -> float:
    """Erlang C from the finite sum (integer c), 50 digits:
    C = [A^c/c! * c/(c-A)] / [sum_{k<c} A^k/k! + A^c/c! * c/(c-A)]."""
    with mpmath.workdps(50):
        A = mpmath.mpf(a)
        term = mpmath.mpf(1)
        s = mpmath.mpf(0)
        for k in range(c):
            s += term
            term = term * A / (k + 1)
        top = term * c / (c - A)
        return float(top / (s + top))


def birth_death_mmc(lam: float, mu: float, c: int, tol: float = 1e-18):
    """Stationary law of the M/M/c queue-length chain, solved as pi Q = 0.

    The chain is truncated at n_max where rho^(n_max - c) < tol, so the
    neglected mass is below ~tol / (1 - rho).  Returns (pi, n).
    """
    rho = lam / (c * mu)
    n_max = c + int(math.ceil(math.log(tol) / math.log(rho))) + 1 if rho > 0 else c + 1
    n = np.arange(n_max + 1)
    Q = np.zeros((n_max + 1, n_max + 1))
    Q[n[:-1], n[:-1] + 1] = lam                              # arrival
    Q[n[1:], n[1:] - 1] = np.minimum(n[1:], c) * mu          # departure
    Q[n, n] = -Q.sum(axis=1)
    A = Q.T.copy()
    A[-1, :] = 1.0                                            # normalization row
    b = np.zeros(n_max + 1)
    b[-1] = 1.0
    pi = np.linalg.solve(A, b)
    return pi, n


def response_sf_numeric(t: float, lam: float, s: float, c: int) -> float:
    """P(R > t) by convolution: R = W + S, W = 0 w.p. 1-C, else Exp(theta).

    P(R > t) = (1-C) e^{-mu t} + C [ int_0^t theta e^{-theta w} e^{-mu (t-w)} dw + e^{-theta t} ],
    theta = c mu - lam.  C from the 50-digit finite sum.
    """
    mu = 1.0 / s
    pw = mp_erlang_c_sum(lam * s, c)
    theta = c * mu - lam
    conv, _ = quad(lambda w: theta * math.exp(-theta * w - mu * (t - w)), 0.0, t,
                   epsabs=0.0, epsrel=1e-13, limit=200)
    return (1 - pw) * math.exp(-mu * t) + pw * (conv + math.exp(-theta * t))


# ---------------------------------------------------------- M/M/1 closed forms
# Utilizations down to 1e-12 (subnormal rho would make lam = rho / s round to 0).
@given(rho=st.one_of(st.just(0.0), st.floats(1e-12, 0.999)), s=st.floats(1e-4, 1e3))
@settings(max_examples=200, deadline=None)
def test_mm1_mean_values(rho, s):
    lam = rho / s
    m = mmc_metrics(lam, s, 1)
    # M/M/1 by hand: P(wait) = rho, Wq = rho s / (1 - rho), R = s / (1 - rho).
    assert_allclose(m.wait_probability, rho, rtol=RTOL, atol=1e-300)
    assert_allclose(m.mean_wait, rho * s / (1 - rho), rtol=RTOL, atol=1e-300)
    assert_allclose(m.mean_response, s / (1 - rho), rtol=RTOL)
    assert_allclose(m.utilization, rho, rtol=1e-15, atol=0)
    assert_allclose(m.number_in_system, rho / (1 - rho), rtol=RTOL, atol=1e-300)


@given(rho=st.floats(0.01, 0.99), s=st.floats(1e-3, 1e2), x=st.floats(0.0, 50.0))
@settings(max_examples=200, deadline=None)
def test_mm1_wait_exceeds(rho, s, x):
    lam, mu = rho / s, 1.0 / s
    t = x * s
    # M/M/1: P(W > t) = rho e^{-(mu - lam) t}.
    assert_allclose(mmc_wait_exceeds(lam, s, 1, t), rho * math.exp(-(mu - lam) * t), rtol=RTOL)


@given(rho=st.floats(0.01, 0.999), s=st.floats(1e-3, 1e2), p=st.floats(0.01, 0.999999))
@settings(max_examples=200, deadline=None)
def test_mm1_response_percentile(rho, s, p):
    lam, mu = rho / s, 1.0 / s
    # M/M/1: R ~ Exp(mu - lam), so r_p = -ln(1-p) / (mu - lam).
    expected = -math.log1p(-p) / (mu - lam)
    assert_allclose(mmc_response_percentile(lam, s, 1, p), expected, rtol=1e-12)


@given(rho=st.floats(0.01, 0.999), s=st.floats(1e-3, 1e2), p=st.floats(0.01, 0.999999))
@settings(max_examples=200, deadline=None)
def test_mm1_wait_percentile(rho, s, p):
    lam, mu = rho / s, 1.0 / s
    # M/M/1: P(W > t) = rho e^{-(mu-lam) t} = 1-p  =>  t = ln(rho/(1-p)) / (mu-lam), or 0.
    expected = max(0.0, math.log(rho / (1 - p)) / (mu - lam))
    got = mmc_wait_percentile(lam, s, 1, p)
    # Absolute floor: the log of a ratio near 1 has absolute (not relative) rounding error.
    assert_allclose(got, expected, rtol=1e-12, atol=1e-14 * s / (1 - rho))


# ------------------------------------------------------------ M/M/c vs chain
MMC_CASES = [(1, 0.5), (2, 0.3), (2, 0.9), (3, 0.75), (5, 0.5), (8, 0.95), (10, 0.8), (20, 0.9)]


@pytest.mark.parametrize("c, rho", MMC_CASES)
@pytest.mark.parametrize("s", [1.0, 0.0025])
def test_mmc_against_birth_death_chain(c, rho, s):
    lam = rho * c / s
    pi, n = birth_death_mmc(lam, 1.0 / s, c)
    lq = float(np.sum(np.maximum(n - c, 0) * pi))     # mean number waiting
    l_sys = float(np.sum(n * pi))                    # mean number in system
    p_wait = float(np.sum(pi[n >= c]))               # PASTA: P(arrival waits)
    m = mmc_metrics(lam, s, c)
    assert_allclose(m.wait_probability, p_wait, rtol=RTOL_NUM)
    assert_allclose(m.queue_length, lq, rtol=RTOL_NUM)
    assert_allclose(m.number_in_system, l_sys, rtol=RTOL_NUM)
    assert_allclose(m.mean_wait, lq / lam, rtol=RTOL_NUM)           # Little on the chain
    assert_allclose(mmc_wait_probability(lam, s, c), p_wait, rtol=RTOL_NUM)


@pytest.mark.parametrize("c, rho", MMC_CASES)
def test_wait_probability_against_finite_sum(c, rho):
    a = rho * c
    assert_allclose(mmc_wait_probability(a, 1.0, c), mp_erlang_c_sum(a, c), rtol=RTOL)


def mp_wait_sf_from_chain(lam: float, mu: float, c: int, t: float) -> float:
    """P(W > t) for M/M/c FCFS without the closed form, 40 digits.

    An arrival that finds n >= c customers (probability p_n, PASTA) waits for
    n - c + 1 departures at rate c mu: an Erlang(n - c + 1, c mu) time, whose
    survival is the Poisson CDF sum_{j <= n-c} e^{-c mu t} (c mu t)^j / j!.
    p_n from the chain's cut equations p_{n+1} = p_n lam / (min(n+1, c) mu),
    summed until the terms fall below 1e-30 of the total.
    """
    with mpmath.workdps(40):
        lam_, mu_, t_ = mpmath.mpf(lam), mpmath.mpf(mu), mpmath.mpf(t)
        p = mpmath.mpf(1)
        norm = mpmath.mpf(0)
        for n in range(c):                       # states 0..c-1
            norm += p
            p = p * lam_ / ((n + 1) * mu_)
        # p is now p_c (unnormalized); geometric tail beyond c
        rho = lam_ / (c * mu_)
        norm += p / (1 - rho)
        x = c * mu_ * t_
        poisson_term = mpmath.exp(-x)            # j = 0
        cdf = poisson_term                       # P(Erlang(1) > t)
        total = mpmath.mpf(0)
        j = 0
        while True:
            total += p * cdf
            if p * cdf < mpmath.mpf("1e-30") * total and p < mpmath.mpf("1e-30") * norm:
                break
            j += 1
            poisson_term = poisson_term * x / j
            cdf += poisson_term
            p = p * rho
        return float(total / norm)


@pytest.mark.parametrize("c, rho", MMC_CASES)
@pytest.mark.parametrize("x", [0.0, 0.1, 1.0, 5.0])
def test_wait_exceeds_against_chain(c, rho, x):
    s = 0.5
    lam = rho * c / s
    expected = mp_wait_sf_from_chain(lam, 1.0 / s, c, x * s)
    # Code accuracy (Erlang C, 1e-12) plus exp() of an argument up to ~10: 2e-12.
    assert_allclose(mmc_wait_exceeds(lam, s, c, x * s), expected, rtol=2e-12)


# --------------------------------------------------------------- Little's law
@given(c=st.integers(1, 200), rho=st.floats(0.0, 0.999), s=st.floats(1e-4, 1e3))
@settings(max_examples=200, deadline=None)
def test_littles_law_and_identities(c, rho, s):
    lam = rho * c / s
    m = mmc_metrics(lam, s, c)
    assert_allclose(m.number_in_system, lam * m.mean_response, rtol=1e-14, atol=1e-300)   # L = lam R
    assert_allclose(m.queue_length, lam * m.mean_wait, rtol=1e-14, atol=1e-300)           # Lq = lam Wq
    assert_allclose(m.mean_response, m.mean_wait + s, rtol=1e-14, atol=1e-300)           # R = Wq + s
    assert_allclose(m.number_in_system, m.queue_length + lam * s, rtol=1e-12, atol=1e-300)  # L = Lq + A
    assert 0.0 <= m.wait_probability <= 1.0
    # Every single-metric function equals the corresponding MMCMetrics field.
    # (atol 1e-300: below that values may be subnormal, see test_erlang.)
    # Same formulas, possibly multiplied in a different order: a few ulps.
    few_ulps = 4 * np.finfo(float).eps
    assert_allclose(mmc_wait(lam, s, c), m.mean_wait, rtol=few_ulps, atol=1e-300)
    assert_allclose(mmc_response(lam, s, c), m.mean_response, rtol=few_ulps, atol=1e-300)
    assert_allclose(mmc_queue_length(lam, s, c), m.queue_length, rtol=few_ulps, atol=1e-300)
    assert_allclose(mmc_number_in_system(lam, s, c), m.number_in_system, rtol=few_ulps, atol=1e-300)
    assert_allclose(mmc_utilization(lam, s, c), m.utilization, rtol=few_ulps, atol=1e-300)
    assert_allclose(mmc_wait_probability(lam, s, c), m.wait_probability, rtol=few_ulps, atol=1e-300)


def test_metrics_as_dict_and_type():
    m = mmc_metrics(1.0, 0.5, 2)
    assert isinstance(m, MMCMetrics)
    d = m.as_dict()
    assert set(d) == {"servers", "traffic", "utilization", "wait_probability", "mean_wait",
                      "mean_response", "queue_length", "number_in_system"}
    # A = lam s = 0.5, rho = 0.25 (by hand)
    assert d["traffic"] == 0.5 and d["utilization"] == 0.25 and d["servers"] == 2.0


# ----------------------------------------------------------- vectorization
def test_vectorized_equals_scalar_calls():
    lam = np.array([0.0, 0.5, 3.0, 7.9, 80.0])
    s = np.array([1.0, 2.0, 0.5, 1.0, 0.1])
    c = np.array([1.0, 2.0, 2.0, 8.0, 9.0])
    funcs = [mmc_wait, mmc_response, mmc_queue_length, mmc_number_in_system,
             mmc_utilization, mmc_wait_probability]
    for f in funcs:
        vec = f(lam, s, c)
        assert vec.shape == lam.shape
        # Scalar and array paths: same formulas, Erlang B through two code paths
        # each accurate to 1e-12, so they agree to 2e-12.
        assert_allclose(vec, [f(*x) for x in zip(lam, s, c)], rtol=2e-12, atol=0, err_msg=f.__name__)
    t = np.array([0.0, 0.1, 1.0, 2.0, 0.05])
    assert_allclose(mmc_wait_exceeds(lam, s, c, t),
                    [mmc_wait_exceeds(*x) for x in zip(lam, s, c, t)], rtol=2e-12, atol=0)
    p = np.array([0.5, 0.9, 0.95, 0.99, 0.999])
    for f in (mmc_wait_percentile, mmc_response_percentile):
        assert_allclose(f(lam, s, c, p), [f(*x) for x in zip(lam, s, c, p)],
                        rtol=2e-12, atol=1e-15, err_msg=f.__name__)


def test_broadcasting_shapes():
    lam = np.array([[0.5], [1.0], [1.5]])           # (3, 1)
    c = np.array([2.0, 3.0, 4.0, 5.0])              # (4,)
    assert mmc_wait(lam, 1.0, c).shape == (3, 4)
    assert mmc_metrics(lam, 1.0, c).mean_wait.shape == (3, 4)
    assert mmc_response_percentile(lam, 1.0, c, 0.9).shape == (3, 4)


def test_scalar_in_scalar_out():
    assert type(mmc_wait(1.0, 0.5, 2)) is float
    assert np.ndim(mmc_response_percentile(1.0, 0.5, 2, 0.9)) == 0
    assert np.ndim(mmc_wait_percentile(1.0, 0.5, 2, 0.9)) == 0


# --------------------------------------------------------------- percentiles
@given(c=st.integers(1, 50), rho=st.floats(0.01, 0.999), p=st.floats(0.01, 0.9999))
@settings(max_examples=300, deadline=None)
def test_wait_percentile_inverts_survival(c, rho, p):
    s = 1.0
    lam = rho * c
    wp = mmc_wait_percentile(lam, s, c, p)
    pw = mp_erlang_c_sum(lam * s, c)       # independent P(W > 0)
    if wp > 0:
        # P(W > w_p) = C e^{-(c mu - lam) w_p} = 1 - p  (M/M/c, Gross et al. 2008, eq. 2.36)
        assert_allclose(pw * math.exp(-(c - lam) * wp), 1 - p, rtol=1e-11)
        assert_allclose(mmc_wait_exceeds(lam, s, c, wp), 1 - p, rtol=1e-11)
    else:
        # A fraction >= p does not wait at all.
        assert pw <= (1 - p) * (1 + 1e-12)


@pytest.mark.parametrize("c, rho", [(1, 0.5), (2, 0.5), (2, 0.95), (3, 0.2), (4, 0.75),
                                    (5, 0.8), (8, 0.9), (10, 0.999), (16, 0.5), (30, 0.97)])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9, 0.95, 0.99, 0.9999])
def test_response_percentile_against_numerical_convolution(c, rho, p):
    s = 0.75
    lam = rho * c / s
    # Independent: P(R > t) by quad convolution, inverted with brentq.
    hi = s
    while response_sf_numeric(hi, lam, s, c) > 1 - p:
        hi *= 2.0
    expected = brentq(lambda t: response_sf_numeric(t, lam, s, c) - (1 - p), 0.0, hi,
                      xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    assert_allclose(mmc_response_percentile(lam, s, c, p), expected, rtol=1e-10)


@pytest.mark.parametrize("c, a", [(2, 1.0), (5, 4.0), (11, 10.0), (3, 2.0)])
def test_response_percentile_at_removable_singularity(c, a):
    # c - 1 - A == 0: the formula's fraction is replaced by its limit mu t.
    s = 1.0
    for p in (0.5, 0.9, 0.99):
        hi = 1.0
        while response_sf_numeric(hi, a, s, c) > 1 - p:
            hi *= 2.0
        expected = brentq(lambda t: response_sf_numeric(t, a, s, c) - (1 - p), 0.0, hi,
                          xtol=1e-300, rtol=4 * np.finfo(float).eps)
        assert_allclose(mmc_response_percentile(a, s, c, p), expected, rtol=1e-10)


def test_percentiles_near_saturation_no_warning():
    # Utilization 0.999 .. 1 - 1e-9 used to overflow exp() inside the bisection.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for c, a in [(1, 0.999), (10, 9.99999), (100, 100 - 1e-7)]:
            r = mmc_response_percentile(a, 1.0, c, 0.95)
            w = mmc_wait_percentile(a, 1.0, c, 0.95)
            assert math.isfinite(r) and math.isfinite(w) and r > w > 0
    # M/M/1 closed form at rho = 0.999: r_p = -ln(0.05) / (1 - 0.999).
    assert_allclose(mmc_response_percentile(0.999, 1.0, 1, 0.95), -math.log(0.05) / 0.001, rtol=1e-12)


@given(c=st.integers(1, 30), rho=st.floats(0.0, 0.99), p1=st.floats(0.01, 0.99), p2=st.floats(0.01, 0.99))
@settings(max_examples=200, deadline=None)
def test_percentiles_monotone_in_p(c, rho, p1, p2):
    lo, hi = sorted((p1, p2))
    lam = rho * c
    assert mmc_response_percentile(lam, 1.0, c, lo) <= mmc_response_percentile(lam, 1.0, c, hi) * (1 + 1e-14)
    assert mmc_wait_percentile(lam, 1.0, c, lo) <= mmc_wait_percentile(lam, 1.0, c, hi) * (1 + 1e-14)
    # The response percentile is at least the service-time percentile -s ln(1-p).
    assert mmc_response_percentile(lam, 1.0, c, lo) >= -math.log1p(-lo) * (1 - 1e-14)


# ------------------------------------------------------------------ sizing
def _meets(lam, s, c, u=None, w=None, p=None, t=None) -> bool:
    """Does c servers meet every target?  Evaluated with mmc_metrics / mmc_wait_exceeds."""
    if c < 1 or lam * s >= c:
        return False
    m = mmc_metrics(lam, s, c)
    ok = True
    if u is not None:
        ok &= m.utilization <= u
    if w is not None:
        ok &= m.mean_wait <= w
    if p is not None:
        ok &= mmc_wait_exceeds(lam, s, c, t) <= 1 - p
    return bool(ok)


targets = st.fixed_dictionaries({}, optional={
    "u": st.floats(0.05, 1.0),
    "w": st.floats(1e-4, 10.0),          # in service times
    "pt": st.tuples(st.floats(0.5, 0.999), st.floats(0.0, 5.0)),
})


@given(lam=st.floats(0.0, 2000.0), s=st.floats(1e-3, 10.0), tg=targets)
@settings(max_examples=300, deadline=None)
def test_mmc_servers_minimal(lam, s, tg):
    assume(lam * s <= 5000.0)
    u = tg.get("u")
    w = tg["w"] * s if "w" in tg else None
    p, t = (tg["pt"][0], tg["pt"][1] * s) if "pt" in tg else (None, None)
    c = mmc_servers(lam, s, max_utilization=u, max_wait=w, wait_percentile=p, max_percentile_wait=t)
    assert isinstance(c, int) and c >= 1
    assert c >= math.floor(lam * s) + 1                      # stable
    assert _meets(lam, s, c, u, w, p, t)                     # feasible
    assert c == 1 or not _meets(lam, s, c - 1, u, w, p, t)   # minimal


@given(lam=st.lists(st.floats(0.0, 500.0), min_size=1, max_size=6), s=st.floats(1e-3, 2.0),
       w=st.floats(1e-3, 5.0), u=st.floats(0.3, 1.0))
@settings(max_examples=100, deadline=None)
def test_mmc_servers_vectorized_equals_scalar(lam, s, w, u):
    lam = np.array(lam)
    vec = mmc_servers(lam, s, max_utilization=u, max_wait=w * s)
    assert isinstance(vec, np.ndarray) and vec.dtype == np.int64 and vec.shape == lam.shape
    assert_array_equal(vec, [mmc_servers(float(x), s, max_utilization=u, max_wait=w * s) for x in lam])
    vec_p = mmc_servers(lam, s, wait_percentile=0.95, max_percentile_wait=w * s)
    assert_array_equal(vec_p, [mmc_servers(float(x), s, wait_percentile=0.95, max_percentile_wait=w * s)
                               for x in lam])


def test_mmc_servers_full_output_matches_metrics():
    c, m = mmc_servers(5.0, 1.0, max_wait=0.1, full_output=True)
    ref = mmc_metrics(5.0, 1.0, c)
    assert m == ref
    lam = np.array([1.0, 10.0, 100.0])
    cs, ms = mmc_servers(lam, 0.2, max_utilization=0.8, full_output=True)
    ref = mmc_metrics(lam, 0.2, cs.astype(float))
    for field, value in ref.as_dict().items():
        assert_array_equal(getattr(ms, field), value, err_msg=field)


def test_mmc_servers_hand_cases():
    # Utilization only: smallest c with A / c <= u, A = 3000 * 0.5e-3 = 1.5, u = 0.7 -> c = 3 (1.5/3 = 0.5; 1.5/2 = 0.75).
    assert mmc_servers(3000.0, 0.5e-3, max_utilization=0.7) == 3
    # No traffic: one server (the minimum).
    assert mmc_servers(0.0, 1.0, max_wait=1e-9) == 1
    # No target: the smallest stable count floor(A) + 1.
    assert mmc_servers(7.0, 1.0) == 8
    assert mmc_servers(7.5, 1.0) == 8
    # Utilization target 1 still requires stability (A < c).
    assert mmc_servers(4.0, 1.0, max_utilization=1.0) == 5


def test_mmc_servers_tight_boundary_from_own_metric():
    # max_wait equal to the exact Wq at c0 is met by c0 and not by c0 - 1.
    for lam, s, c0 in [(5.0, 1.0, 8), (90.0, 0.1, 12), (0.5, 2.0, 2)]:
        w0 = float(mmc_wait(np.array([lam]), s, float(c0))[0])
        assert mmc_servers(lam, s, max_wait=w0) == c0


def test_mmc_servers_unreachable_target_raises():
    with pytest.raises(ValueError, match="need more than"):
        mmc_servers(1e7, 1.0, max_utilization=0.5)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "args, pattern",
    [
        ((-1.0, 1.0, 2), r"^arrival_rate must be >= 0 \(got -1\)$"),
        ((1.0, 0.0, 2), r"^service_time must be > 0 \(got 0\)$"),
        ((1.0, -2.0, 2), r"^service_time must be > 0 \(got -2\)$"),
        ((1.0, 1.0, 0.5), r"^servers must be in \[1, 1e\+12\] \(got 0\.5\)$"),
        ((math.nan, 1.0, 2), r"^arrival_rate must be a finite number \(got nan\)$"),
        ((1.0, math.inf, 2), r"^service_time must be a finite number \(got inf\)$"),
        (([1.0, -1.0], 1.0, 2), r"^arrival_rate must be >= 0 \(got -1 at index 1\)$"),
    ],
)
@pytest.mark.parametrize("fn", [mmc_metrics, mmc_wait, mmc_response, mmc_queue_length,
                                mmc_number_in_system, mmc_utilization, mmc_wait_probability])
def test_bad_input_names_argument(fn, args, pattern):
    with pytest.raises(ValueError, match=pattern):
        fn(*args)


@pytest.mark.parametrize("fn", [mmc_wait_percentile, mmc_response_percentile])
@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_bad_percentile(fn, p):
    with pytest.raises(ValueError, match=r"^p must (be in \(0, 1\)|be a finite number)"):
        fn(1.0, 1.0, 2, p)


def test_bad_t():
    with pytest.raises(ValueError, match=r"^t must be >= 0 \(got -1\)$"):
        mmc_wait_exceeds(1.0, 1.0, 2, -1.0)


@pytest.mark.parametrize("fn", [mmc_metrics, mmc_wait, mmc_response, mmc_queue_length,
                                mmc_number_in_system, mmc_utilization, mmc_wait_probability])
@pytest.mark.parametrize("lam, s, c", [(2.0, 1.0, 2), (1.0, 3.0, 2), (1.0, 1.0, 1)])
def test_unstable_raises(fn, lam, s, c):
    with pytest.raises(UnstableQueueError, match=r"utilization \(arrival_rate \* service_time / servers\) must be < 1"):
        fn(lam, s, c)


def test_unstable_array_names_index():
    with pytest.raises(UnstableQueueError, match=r"\(got 1\.5 at index 2\)"):
        mmc_wait([1.0, 1.5, 3.0], 1.0, 2)   # utilizations 0.5, 0.75, 1.5
    with pytest.raises(UnstableQueueError):
        mmc_wait_exceeds(3.0, 1.0, 2, 1.0)
    with pytest.raises(UnstableQueueError):
        mmc_response_percentile(3.0, 1.0, 3, 0.5)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(max_utilization=0.0), r"^max_utilization must be in \(0, 1\] \(got 0\)$"),
        (dict(max_utilization=1.2), r"^max_utilization must be in \(0, 1\] \(got 1\.2\)$"),
        (dict(max_wait=0.0), r"^max_wait must be > 0 \(got 0\)$"),
        (dict(wait_percentile=0.9), r"wait_percentile and max_percentile_wait go together"),
        (dict(max_percentile_wait=1.0), r"wait_percentile and max_percentile_wait go together"),
        (dict(wait_percentile=1.0, max_percentile_wait=1.0), r"^wait_percentile must be in \(0, 1\) \(got 1\)$"),
        (dict(wait_percentile=0.9, max_percentile_wait=-1.0), r"^max_percentile_wait must be >= 0 \(got -1\)$"),
    ],
)
def test_mmc_servers_bad_targets(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        mmc_servers(1.0, 1.0, **kwargs)


def test_mmc_servers_bad_rates():
    with pytest.raises(ValueError, match=r"^arrival_rate must be >= 0"):
        mmc_servers(-1.0, 1.0, max_wait=1.0)
    with pytest.raises(ValueError, match=r"^service_time must be > 0"):
        mmc_servers(1.0, 0.0, max_wait=1.0)
    with pytest.raises(ValueError, match=r"^max_wait must be > 0 \(got -1 at index 1\)$"):
        mmc_servers(1.0, 1.0, max_wait=[1.0, -1.0])


def test_max_servers_constant_is_sane():
    assert mmc_module.MAX_SERVERS >= 1_000_000
