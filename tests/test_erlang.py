"""Tests for model.erlang: Erlang B and C to full double precision.

Reference values are computed here, in 50-digit arithmetic with mpmath, from
the defining formula

    B(A, c) = A^c e^{-A} / Gamma(c + 1, A)     (Gamma(s, x) upper incomplete)
    C(A, c) = B / (1 - (A/c)(1 - B))

which is independent of the implementation (Loader's saddle-point Poisson pmf
over SciPy's regularized gammaincc).  The mpmath reference itself is checked
against a second formula, the classical Erlang B recursion in 50-digit
arithmetic, at integer server counts.  Whole server counts up to
model.erlang.RECURRENCE_SERVERS take the implementation's recurrence path, the
others the incomplete-gamma path; the grids below cover both and the boundary.

Precision: 50 digits (mp.dps = 50) costs well under a second for the whole
grid (mpmath evaluates Gamma(c+1, A) by asymptotic series even at c = 1e5),
so there is no need to lower it.  With A^c formed as exp(c log A), the
absolute error of the exponent is about 1e-50 * c |log A| < 1e-42, far below
the 1e-12 tolerance.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model import UnstableQueueError, erlang_b, erlang_c, poisson_pmf

MP_DPS = 50
TINY = 1e-300           # below this the contract is only: finite, >= 0, not NaN
RTOL = 1e-12            # the documented accuracy of erlang_b / erlang_c

SERVERS = [1, 1.5, 2, 3.7, 10, 57.3, 100, 1000, 2500.5, 10000, 37000, 100000]
# traffic as a fraction of servers; A < c throughout (Erlang C needs it)
FRACTIONS = [1e-6, 1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.538, 0.6, 0.7,
             0.8, 0.9, 0.95, 0.99, 0.999, 1 - 1e-4, 1 - 1e-6, 1 - 1e-9]
# Erlang B is defined for any traffic: also check overload (A > c).
OVERLOAD = [1.001, 1.01, 1.1, 1.5, 3.0, 10.0, 1000.0]


def mp_erlang_b(a: float, c: float) -> mpmath.mpf:
    """50-digit Erlang B from A^c e^-A / Gamma(c+1, A) (mpmath.gammainc: upper, unregularized)."""
    with mpmath.workdps(MP_DPS):
        A, C = mpmath.mpf(a), mpmath.mpf(c)
        if A == 0:
            return mpmath.mpf(0)
        return mpmath.exp(C * mpmath.log(A) - A) / mpmath.gammainc(C + 1, A)


def mp_erlang_c(a: float, c: float) -> mpmath.mpf:
    """50-digit Erlang C from the 50-digit Erlang B: C = B / (1 - rho (1 - B))."""
    with mpmath.workdps(MP_DPS):
        b = mp_erlang_b(a, c)
        A, C = mpmath.mpf(a), mpmath.mpf(c)
        return b / (1 - (A / C) * (1 - b))


def _grid():
    pts = [(f * c, float(c)) for c in SERVERS for f in FRACTIONS]
    return pts


GRID = _grid()
GRID_B = GRID + [(f * c, float(c)) for c in SERVERS for f in OVERLOAD]


@pytest.fixture(scope="module")
def ref_b():
    return [mp_erlang_b(a, c) for a, c in GRID_B]


@pytest.fixture(scope="module")
def ref_c():
    return [mp_erlang_c(a, c) for a, c in GRID]


def _check_against(values, refs, points, what):
    """rel. error <= RTOL where the exact value >= TINY; else finite, >= 0, not NaN."""
    values = np.asarray(values, dtype=float)
    assert values.shape == (len(points),)
    assert np.all(np.isfinite(values)), what
    assert np.all(values >= 0.0), what
    big = np.array([r >= TINY for r in refs])
    exact = np.array([float(r) for r in refs])
    # Every exact value above TINY: relative error <= 1e-12 (the documented accuracy).
    assert_allclose(values[big], exact[big], rtol=RTOL, atol=0,
                    err_msg=f"{what}: points {[p for p, b in zip(points, big) if b]}")
    # The grid does reach the underflow region (so that branch is exercised).
    return int((~big).sum())


# ------------------------------------------------------- reference sanity
@pytest.mark.parametrize("c", [1, 2, 10, 100, 1000])
@pytest.mark.parametrize("f", [1e-3, 0.5, 0.99, 2.0])
def test_mpmath_reference_matches_recursion(c, f):
    # Independent check of the reference: Erlang B recursion 1/B_k = 1 + k/(A B_{k-1}).
    a = f * c
    with mpmath.workdps(MP_DPS):
        A = mpmath.mpf(a)
        inv = mpmath.mpf(1)
        for k in range(1, c + 1):
            inv = 1 + k / A * inv
        rec = 1 / inv
        assert abs(rec / mp_erlang_b(a, c) - 1) < mpmath.mpf("1e-40")


# ----------------------------------------------------- accuracy: the grid
RECURRENCE_POINTS = [(f * c, float(c)) for c in (1, 3, 64, 255, 256, 257)
                     for f in FRACTIONS + OVERLOAD + [1e-9, 1e6]]


@pytest.mark.parametrize("array", [False, True])
def test_whole_server_counts_at_the_recurrence_boundary(array):
    """Whole c up to 256 (recurrence, relative error <= 3 c eps by the module's argument)
    and 257 (incomplete gamma) against 50-digit mpmath: the same RTOL on both sides,
    scalar and array paths, loads from 1e-9 of c (underflow) to 1e6 times c."""
    refs = [mp_erlang_b(a, c) for a, c in RECURRENCE_POINTS]
    a = np.array([p[0] for p in RECURRENCE_POINTS])
    c = np.array([p[1] for p in RECURRENCE_POINTS])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vals = erlang_b(a, c) if array else [erlang_b(x, y) for x, y in zip(a.tolist(), c.tolist())]
    assert _check_against(vals, refs, RECURRENCE_POINTS, f"erlang_b recurrence, array={array}") > 0


@pytest.mark.subprocess
def test_planning_whole_cards_does_not_load_scipy_special():
    """Erlang B and C for whole card counts (the recurrence) need no SciPy: a planning
    question does not pay its import (about 0.2 s).  Run in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from cryptoplan.model import erlang_b, erlang_c; "
            "erlang_b(30.0, 64); erlang_c(np.array([3.0, 50.0]), np.array([4.0, 64.0])); "
            "print(type(sys.modules.get('scipy.special')) is type(sys))")   # ran, not a lazy placeholder
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out
    # the check sees a real load: beyond the recurrence's range, scipy.special is used
    code = code.replace("erlang_b(30.0, 64)", "erlang_b(3000.0, 5000)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out


def test_erlang_b_scalar_path_accuracy(ref_b):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no RuntimeWarning (or any other)
        vals = [erlang_b(a, c) for a, c in GRID_B]
    assert all(type(v) is float for v in vals)  # Python floats in, Python float out
    n_tiny = _check_against(vals, ref_b, GRID_B, "erlang_b scalar")
    assert n_tiny > 0  # the grid includes values that underflow below 1e-300


def test_erlang_b_array_path_accuracy(ref_b):
    a = np.array([p[0] for p in GRID_B])
    c = np.array([p[1] for p in GRID_B])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vals = erlang_b(a, c)
    assert isinstance(vals, np.ndarray) and vals.shape == a.shape
    _check_against(vals, ref_b, GRID_B, "erlang_b array")


def test_erlang_c_scalar_path_accuracy(ref_c):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vals = [erlang_c(a, c) for a, c in GRID]
    assert all(type(v) is float for v in vals)
    n_tiny = _check_against(vals, ref_c, GRID, "erlang_c scalar")
    assert n_tiny > 0


def test_erlang_c_array_path_accuracy(ref_c):
    a = np.array([p[0] for p in GRID])
    c = np.array([p[1] for p in GRID])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vals = erlang_c(a, c)
    _check_against(vals, ref_c, GRID, "erlang_c array")


def test_array_path_broadcasts_2d(ref_c):
    # One column of servers against a row of fractions: shape (len(SERVERS), len(FRACTIONS)).
    c = np.array(SERVERS, dtype=float)[:, None]
    a = c * np.array(FRACTIONS)[None, :]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vals = erlang_c(a, c)
    assert vals.shape == (len(SERVERS), len(FRACTIONS))
    # GRID is in the same (servers-major) order as the flattened 2-D array.
    _check_against(vals.ravel(), ref_c, GRID, "erlang_c 2-D")


def test_zero_traffic():
    # B(0, c) = C(0, c) = 0 exactly (nobody arrives).
    assert erlang_b(0.0, 5) == 0.0
    assert erlang_c(0.0, 5) == 0.0
    assert_allclose(erlang_b(np.array([0.0, 0.0]), np.array([1.0, 7.5])), [0.0, 0.0], atol=0)


def test_known_textbook_value():
    # B(2, 3) = (8/6) / (1 + 2 + 2 + 8/6) = 4/19, C(2, 3) = 4/9 (exact rationals by hand).
    assert_allclose(erlang_b(2.0, 3), 4 / 19, rtol=1e-15)
    assert_allclose(erlang_c(2.0, 3), 4 / 9, rtol=1e-15)


@pytest.mark.parametrize("k", [1.0, 1.5, 7.25, 15.0, 15.5, 300.0, 1e5])
@pytest.mark.parametrize("rel_mean", [1e-3, 0.5, 1.0, 1.2, 4.0])
def test_poisson_pmf_against_mpmath(k, rel_mean):
    # Reference: e^-m m^k / Gamma(k+1) in 50-digit arithmetic.
    m = k * rel_mean
    with mpmath.workdps(MP_DPS):
        ref = mpmath.exp(-mpmath.mpf(m) + mpmath.mpf(k) * mpmath.log(m) - mpmath.loggamma(mpmath.mpf(k) + 1))
    got = poisson_pmf(k, m)
    got_arr = poisson_pmf(np.array([k]), np.array([m]))[0]
    if ref >= TINY:
        assert_allclose([got, got_arr], float(ref), rtol=RTOL)
    else:
        assert math.isfinite(got) and got >= 0.0


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("fn", [erlang_b, erlang_c])
@pytest.mark.parametrize(
    "traffic, servers, pattern",
    [
        (-1.0, 2.0, r"^traffic must be in \[0, 1e\+12\] \(got -1\)$"),
        (1.0, 0.5, r"^servers must be in \[1, 1e\+12\] \(got 0\.5\)$"),
        (1.0, 0.0, r"^servers must be in \[1, 1e\+12\] \(got 0\)$"),
        (math.nan, 2.0, r"^traffic must be a finite number \(got nan\)$"),
        (1.0, math.nan, r"^servers must be a finite number \(got nan\)$"),
        (math.inf, 2.0, r"^traffic must be a finite number \(got inf\)$"),
        (1.0, math.inf, r"^servers must be a finite number \(got inf\)$"),
    ],
)
def test_bad_scalar_input(fn, traffic, servers, pattern):
    with pytest.raises(ValueError, match=pattern):
        fn(traffic, servers)


@pytest.mark.parametrize("fn", [erlang_b, erlang_c])
def test_bad_array_element_names_index(fn):
    with pytest.raises(ValueError, match=r"^servers must be in \[1, 1e\+12\] \(got 0\.5 at index 2\)$"):
        fn(np.array([0.1, 0.2, 0.3]), np.array([2.0, 3.0, 0.5]))
    with pytest.raises(ValueError, match=r"^traffic must be in \[0, 1e\+12\] \(got -3 at index 1\)$"):
        fn([0.1, -3.0, 0.3], 5.0)
    with pytest.raises(ValueError, match=r"^traffic must be a finite number \(got nan at index 0\)$"):
        fn([math.nan, 1.0], 5.0)


@pytest.mark.parametrize("traffic, servers", [(2.0, 2.0), (3.0, 2.0), (100000.0, 100000.0)])
def test_erlang_c_unstable(traffic, servers):
    with pytest.raises(UnstableQueueError) as exc:
        erlang_c(traffic, servers)
    msg = str(exc.value)
    assert "traffic / servers must be < 1" in msg
    assert f"(got {traffic / servers:g})" in msg
    assert isinstance(exc.value, ValueError)


def test_erlang_c_unstable_array_names_index():
    with pytest.raises(UnstableQueueError, match=r"traffic / servers must be < 1\b.*\(got 1\.5 at index 1\)"):
        erlang_c(np.array([1.0, 3.0, 1.0]), np.array([2.0, 2.0, 2.0]))


def test_erlang_b_allows_overload():
    # A loss system is never unstable: B(A, c) -> 1 - c/A for A >> c (B(10, 1) = 10/11 exactly).
    assert_allclose(erlang_b(10.0, 1), 10 / 11, rtol=1e-15)


# -------------------------------------------------------------- properties
traffic_st = st.floats(min_value=0.0, max_value=5000.0, allow_nan=False, allow_infinity=False)
int_servers_st = st.integers(min_value=1, max_value=5000)
real_servers_st = st.floats(min_value=1.0, max_value=5000.0, allow_nan=False, allow_infinity=False)
# Monotonicity is exact mathematically; the computed values carry a relative
# error <= RTOL each, so an apparent reversal can be at most ~2 RTOL.
MONO = 2 * RTOL
# Floating-point slack for identities evaluated in double precision: a few ulps.
ULPS = 4 * np.finfo(float).eps


@given(a=traffic_st, c=real_servers_st)
@settings(max_examples=300, deadline=None)
def test_b_le_c_in_unit_interval(a, c):
    assume(a < c)
    b, cc = erlang_b(a, c), erlang_c(a, c)
    assert 0.0 <= b <= 1.0
    assert 0.0 <= cc <= 1.0
    # C = B / (1 - rho (1 - B)) >= B; the division may lose an ulp or two.
    assert b <= cc * (1 + ULPS)


@given(a=traffic_st, c=real_servers_st)
@settings(max_examples=200, deadline=None)
def test_b_in_unit_interval_any_traffic(a, c):
    b = erlang_b(a, c)
    assert 0.0 <= b <= 1.0


@given(a=traffic_st, c=int_servers_st)
@settings(max_examples=300, deadline=None)
def test_b_decreasing_in_servers(a, c):
    b0, b1 = erlang_b(a, c), erlang_b(a, c + 1)
    assert b1 <= b0 * (1 + MONO)


@given(a=traffic_st, c=int_servers_st)
@settings(max_examples=300, deadline=None)
def test_c_decreasing_in_servers(a, c):
    assume(a < c)
    c0, c1 = erlang_c(a, c), erlang_c(a, c + 1)
    assert c1 <= c0 * (1 + MONO)


@given(a1=traffic_st, a2=traffic_st, c=real_servers_st)
@settings(max_examples=300, deadline=None)
def test_b_increasing_in_traffic(a1, a2, c):
    lo, hi = sorted((a1, a2))
    assert erlang_b(lo, c) <= erlang_b(hi, c) * (1 + MONO)


@given(a1=traffic_st, a2=traffic_st, c=real_servers_st)
@settings(max_examples=300, deadline=None)
def test_c_increasing_in_traffic(a1, a2, c):
    lo, hi = sorted((a1, a2))
    assume(hi < c)
    assert erlang_c(lo, c) <= erlang_c(hi, c) * (1 + MONO)


@given(a=st.floats(min_value=0.0, max_value=1e6, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_one_server_is_mm1_loss(a):
    # M/M/1/1: B = A / (1 + A) (closed form by hand).
    expected = a / (1 + a)
    got = [erlang_b(a, 1), erlang_b(np.array([a]), 1.0)[0]]
    if expected >= TINY:
        assert_allclose(got, expected, rtol=RTOL, atol=0)
    else:  # the contract below 1e-300: finite, >= 0
        assert all(math.isfinite(g) and g >= 0.0 for g in got)


@given(a=st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_nan=False))
@settings(max_examples=300, deadline=None)
def test_one_server_is_mm1_wait(a):
    # M/M/1: P(wait) = rho = A.
    got = [erlang_c(a, 1), erlang_c(np.array([a]), 1.0)[0]]
    if a >= TINY:
        assert_allclose(got, a, rtol=RTOL, atol=0)
    else:
        assert all(math.isfinite(g) and g >= 0.0 for g in got)


@given(a=st.floats(min_value=1e-3, max_value=5000.0), c=st.floats(min_value=2.0, max_value=5000.0))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
def test_erlang_b_recursion(a, c):
    # B(A, c) = A B(A, c-1) / (c + A B(A, c-1)) holds for real c too (Jagerman 1974).
    prev = erlang_b(a, c - 1)
    assume(prev >= 1e-290)               # both sides above the underflow region
    expected = a * prev / (c + a * prev)
    assume(expected >= 1e-290)
    # The map x -> A x / (c + A x) has relative condition number <= 1, so the
    # right side carries the error of B(A, c-1) (<= RTOL) plus a few roundings.
    assert_allclose(erlang_b(a, c), expected, rtol=2 * RTOL + ULPS, atol=0)


@given(a=traffic_st, c=real_servers_st)
@settings(max_examples=200, deadline=None)
def test_scalar_and_array_paths_agree(a, c):
    # Both paths claim RTOL against the exact value, so they agree within 2 RTOL.
    assert_allclose(erlang_b(np.array([a]), np.array([c]))[0], erlang_b(a, c), rtol=MONO, atol=1e-300)
    if a < c:
        assert_allclose(erlang_c(np.array([a]), np.array([c]))[0], erlang_c(a, c), rtol=MONO, atol=1e-300)


@pytest.mark.subprocess
def test_the_threaded_kernel_works_in_a_fresh_interpreter():
    """Large arrays beyond the recurrence run on a thread pool whose workers need scipy.special,
    bound lazily: loaded by the calling thread first (a lazy module's concurrent first use raised
    AttributeError in a worker, Python < 3.12.3).  Compared with the same kernel run serially."""
    import subprocess
    import sys
    code = ("import numpy as np\n"
            "from cryptoplan.model import erlang_b\n"
            "from cryptoplan.model.queueing import _erlang_kernels as k\n"
            "a = np.linspace(100.0, 4000.0, 200_000); c = np.full(a.size, 5000.0)\n"
            "threaded = erlang_b(a, c)\n"
            "np.testing.assert_allclose(threaded, k._erlang_b_kernel(a, c), rtol=1e-14)\n"
            "print('ok', k._pool is not None)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["ok", str(k_workers() > 1)]


def k_workers() -> int:
    from cryptoplan.model.queueing import _erlang_kernels
    return _erlang_kernels._WORKERS
