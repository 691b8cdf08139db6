"""The one least-squares path (:mod:`cryptoplan.model.calibration.leastsq`).

Reference values: SciPy's own finite differences (the Jacobian), and for the solution and
its standard errors the closed form of weighted linear least squares (normal equations
solved by :func:`numpy.linalg.lstsq`, independent of the module's SVD), with the Birge
factor computed from its definition; for the Cauchy loss the M-estimator's sandwich in closed
form, and a simulation (refits of observations moved by their noise) for what it claims.
"""

from __future__ import annotations

import lmfit
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.calibration.leastsq import jacobian, solve


@pytest.mark.parametrize("x", [[0.3, -2.0, 5.0, 0.0], [1.0 - 1e-9, -3.0, 1e-12, 4.0 - 1e-10],
                               [-1.0, 1e-9 - 3.0, 7.5, 2.0]])
def test_jacobian_is_scipys_two_point_scheme(x):
    """leastsq.jacobian (all columns in one batched evaluation) against SciPy's own
    '2-point' finite differences (scipy.optimize._numdiff.approx_derivative, what
    least_squares calls by default) with the same bounds: at interior points, at zero, and a
    step's length from an upper and a lower bound, where the step must turn round.  The
    function is elementwise, so one column computed alone or in a batch rounds alike: the two
    agree to rtol 1e-12 when the steps are the same.  (That batching leaves the model's
    residuals unchanged is test_parameter_sets_evaluate_as_each_one_alone.)"""
    from scipy.optimize._numdiff import approx_derivative

    lo, hi = np.array([-1.0, -3.0, 0.0, -np.inf]), np.array([1.0, 0.0, np.inf, 4.0])
    x = np.asarray(x)

    def sets(X):        # columns of X are parameter sets; rows of the result are their residuals
        X = np.asarray(X, dtype=float).reshape(4, -1)
        return np.stack([np.sin(X[0]) * X[1], np.exp(X[1] / 10.0) + X[3] ** 2, X[2] ** 3 - X[0],
                         X[0] * X[2] * X[3], np.log1p(X[2] ** 2)], axis=-1)

    got = jacobian(sets, x, lo, hi)
    want = approx_derivative(lambda v: sets(v)[0], x, method="2-point", bounds=(lo, hi))
    assert got.shape == want.shape == (5, 4)
    assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _line_problem(seed, n=12, noise=0.5, sigma=0.1):
    """y = 2 + 3 t with Gaussian noise; residuals in units of ``sigma``."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n)
    y = 2.0 + 3.0 * t + noise * sigma * rng.standard_normal(n)
    A = np.column_stack([np.ones(n), t]) / sigma

    def batch(X):
        X = np.asarray(X, dtype=float).reshape(2, -1)
        return ((X[0][:, None] + X[1][:, None] * t) - y) / sigma

    return batch, A, y / sigma


def _params(**bounds):
    p = lmfit.Parameters()
    p.add("a", value=0.0, **bounds.get("a", {}))
    p.add("b", value=0.0, **bounds.get("b", {}))
    return p


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), noise=st.sampled_from([0.3, 1.0, 3.0]))
def test_linear_fit_and_errors_are_the_normal_equations_with_the_birge_floor(seed, noise):
    # with noise below the stated sigma the errors are the stated ones (s = 1); above, they are
    # scaled by the Birge ratio sqrt(chi2 / (n - p)) computed here from its definition
    batch, A, b = _line_problem(seed, noise=noise)
    sol = solve(batch, _params())
    want, *_ = np.linalg.lstsq(A, b, rcond=None)
    assert_allclose(sol.x, want, rtol=1e-6, atol=1e-8)    # the solver's tolerances (ftol 1e-8)
    r = A @ want - b
    s2 = max(1.0, float(r @ r) / (len(b) - 2))
    cov = np.linalg.inv(A.T @ A) * s2
    # central differences of a linear model are exact to rounding: 1e-6 relative
    assert_allclose(sol.stderr, np.sqrt(np.diag(cov)), rtol=1e-6)
    assert sol.scale == pytest.approx(np.sqrt(s2), rel=1e-6)
    assert sol.cost == pytest.approx(0.5 * float(r @ r), rel=1e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), noise=st.sampled_from([0.3, 1.0, 3.0]), u=st.floats(0.2, 2.0))
def test_a_residuals_standard_uncertainty_scales_the_errors_and_the_birge_floor(seed, noise, u):
    # residuals in tolerances whose standard uncertainty is u tolerances (a published figure's
    # tolerance is a half-width: u = 1/sqrt 3): the errors are those of the residuals divided
    # by u, the Birge factor computed in those units from its definition
    batch, A, b = _line_problem(seed, noise=noise)
    sol = solve(batch, _params(), sigma=u)
    plain = solve(batch, _params())
    assert_allclose(sol.x, plain.x, rtol=0, atol=0)          # sigma changes the errors, not the fit
    r = (A @ sol.x - b) / u
    s2 = max(1.0, float(r @ r) / (len(b) - 2))
    cov = np.linalg.inv((A / u).T @ (A / u)) * s2
    assert_allclose(sol.stderr, np.sqrt(np.diag(cov)), rtol=1e-6)
    assert sol.scale == pytest.approx(np.sqrt(s2), rel=1e-6)
    # below the floor the errors shrink with u; above it the scatter sets them whatever u says
    if s2 == 1.0 and plain.scale == 1.0:
        assert_allclose(sol.stderr, u * plain.stderr, rtol=1e-6)
    elif s2 > 1.0 and plain.scale > 1.0:
        assert_allclose(sol.stderr, plain.stderr, rtol=1e-6)


def _outlying_line(noise=0.8):
    """_line_problem(3) with point 5 moved 40 stated sigmas off: an outlier the Cauchy loss lets go."""
    batch, A, b = _line_problem(3, noise=noise)
    b = b.copy()
    b[5] += 40.0

    def outlying(X):
        r = batch(X)
        r[:, 5] -= 40.0
        return r
    return outlying, A, b


def test_cauchy_errors_are_the_m_estimators_sandwich():
    """The closed form of the module docstring, computed apart: A = sum psi'(r) a a', B = sum
    psi'(r)^2 a a' (all points measurements), cov = s^2 A^-1 B A^-1, psi'(r) = (1 - r^2)/(1 + r^2)^2,
    s^2 from the Cauchy weights 1/(1 + r^2); and not the reweighted least squares' (A' W A)^-1,
    which differs here by more than the rtol."""
    outlying, A, b = _outlying_line()
    sol = solve(outlying, _params(), loss="cauchy")
    r = A @ sol.x - b
    assert_allclose(r, sol.residual, rtol=1e-9, atol=1e-9)
    w, dpsi = 1.0 / (1.0 + r * r), (1.0 - r * r) / (1.0 + r * r) ** 2
    s2 = max(1.0, float(np.sum(w * r * r)) / (len(b) - 2))
    a_inv = np.linalg.inv(A.T @ (dpsi[:, None] * A))
    cov = a_inv @ (A.T @ ((dpsi ** 2)[:, None] * A)) @ a_inv * s2
    assert_allclose(sol.stderr, np.sqrt(np.diag(cov)), rtol=1e-5)
    assert_allclose(sol.cov, cov, rtol=1e-5)
    reweighted = np.sqrt(np.diag(np.linalg.inv(A.T @ (w[:, None] * A)) * s2))
    assert np.all(np.abs(sol.stderr / reweighted - 1) > 1e-3), (sol.stderr, reweighted)
    # the outlier stopped pulling: the line is the one the other points give, within an error
    keep = np.arange(len(b)) != 5
    clean, *_ = np.linalg.lstsq(A[keep], b[keep], rcond=None)
    assert np.all(np.abs(sol.x - clean) < sol.stderr)


def test_cauchy_errors_are_how_far_refits_of_moved_observations_move():
    """What the sandwich claims, simulated: 200 refits of the observations moved by 1e-3 of their
    standard uncertainty (so the response is linear) spread 1e-3 times the standard errors over the
    Birge factor.  Reference: the refits' standard deviation, whose own sampling error over 200 is
    5% (the rtol, 0.2, is four of those); with the reweighted errors instead the first parameter's
    ratio is off by more than that (asserted, so the test can tell the two apart)."""
    outlying, A, b = _outlying_line(noise=1.5)
    sol = solve(outlying, _params(), loss="cauchy")
    rng = np.random.default_rng(7)
    eps, rows = 1e-3, []
    start = _params()
    start["a"].set(value=sol.x[0])
    start["b"].set(value=sol.x[1])
    for _ in range(200):
        shift = eps * rng.standard_normal(len(b))
        rows.append(solve(lambda X, shift=shift: outlying(X) + shift, start, loss="cauchy", stderr=False,
                          tol=1e-12).x)
    spread = np.std(rows, axis=0) / eps
    assert_allclose(spread, sol.stderr / sol.scale, rtol=0.2)
    r = sol.residual
    w = 1.0 / (1.0 + r * r)
    reweighted = np.sqrt(np.diag(np.linalg.inv(A.T @ (w[:, None] * A))))
    assert abs(spread[0] / reweighted[0] - 1) > 0.2, (spread, reweighted)


def test_cauchy_errors_on_a_curved_model_take_its_whole_curvature():
    """y = a exp(b t) (12 points, noise 1.5 stated sigmas, one outlier 40 off): the residuals curve
    in the parameters, so the cost's curvature is H = J' diag(psi') J + sum psi_i nabla^2 r_i, not
    the Gauss-Newton A = J' diag(psi') J.  Reference: H from the model's second derivatives in
    closed form (d2r/da db = t e^(bt), d2r/db2 = a t^2 e^(bt), d2r/da2 = 0); the printed errors are
    H^-1 B H^-1's to the second differences' 1e-4, and 7-8% below A^-1 B A^-1's here."""
    rng = np.random.default_rng(2)
    t = np.linspace(0.0, 1.0, 12)
    y = 2.0 * np.exp(1.5 * t) + 1.5 * rng.standard_normal(t.size)
    y[5] += 40.0

    def batch(X):
        X = np.asarray(X, dtype=float).reshape(2, -1)
        return X[0][:, None] * np.exp(X[1][:, None] * t) - y
    p = _params()
    p["a"].set(value=2.0)
    p["b"].set(value=1.5)
    sol = solve(batch, p, loss="cauchy", tol=1e-12, max_nfev=2000)
    a, b = sol.x
    r = a * np.exp(b * t) - y
    assert_allclose(r, sol.residual, rtol=1e-9, atol=1e-9)
    e = np.exp(b * t)
    jac = np.column_stack([e, a * t * e])
    psi, dpsi = r / (1 + r * r), (1 - r * r) / (1 + r * r) ** 2
    gauss = jac.T @ (dpsi[:, None] * jac)
    cross, bb = np.sum(psi * t * e), np.sum(psi * a * t * t * e)
    whole = gauss + np.array([[0.0, cross], [cross, bb]])
    meat = jac.T @ ((dpsi ** 2)[:, None] * jac)
    s2 = max(1.0, float(np.sum(r * r / (1 + r * r))) / (t.size - 2))

    def errors(curv):
        inv = np.linalg.inv(curv)
        return np.sqrt(np.diag(inv @ meat @ inv) * s2)
    assert_allclose(sol.stderr, errors(whole), rtol=1e-4)
    assert np.all(sol.stderr / errors(gauss) < 0.95), (sol.stderr, errors(gauss))


def test_a_constraint_pulls_but_does_not_move():
    """noisy=False: a residual that is a constraint counts in A, not in B.  Linear loss, the line's
    first point a constraint: cov = A^-1 B A^-1 with B over the other points, smaller than A^-1."""
    batch, A, b = _line_problem(4)
    noisy = np.ones(len(b), dtype=bool)
    noisy[0] = False
    sol = solve(batch, _params(), noisy=noisy)
    a_inv = np.linalg.inv(A.T @ A)
    r = A @ sol.x - b
    s2 = max(1.0, float(r @ r) / (len(b) - 2))
    cov = a_inv @ (A[1:].T @ A[1:]) @ a_inv * s2
    assert_allclose(sol.stderr, np.sqrt(np.diag(cov)), rtol=1e-5)
    assert np.all(sol.stderr < solve(batch, _params()).stderr)


def test_a_cauchy_fit_on_a_saddle_has_no_error_there():
    """Two readings of one parameter 10 sigmas apart: halfway between them the Cauchy cost's slope
    is 0 and its curvature negative (psi'(5) = -24/676 for each), so a solve started there stops
    there, and the parameter is not identified (infinity), where the reweighted least squares'
    (J' W J)^-1 = 13 would have printed a finite error.  The other parameter, pinned apart by one
    reading, keeps one: 1 sigma times the Birge factor sqrt((25/26 + 25/26) / (3 - 2))."""
    def batch(X):
        X = np.asarray(X, dtype=float).reshape(2, -1)
        return np.stack([X[0], X[0] - 10.0, X[1] - 1.0], axis=-1)
    p = lmfit.Parameters()
    p.add("c", value=5.0)
    p.add("d", value=1.0)
    sol = solve(batch, p, loss="cauchy")
    assert sol.x[0] == pytest.approx(5.0)
    assert np.isinf(sol.stderr[0]) and sol.flag(0) == "not identified"
    assert sol.scale == pytest.approx((50 / 26) ** 0.5, rel=1e-9)
    assert sol.stderr[1] == pytest.approx(sol.scale, rel=1e-5)


def test_a_parameter_on_its_bound_has_no_error_and_one_no_residual_sees_is_not_identified():
    batch, _, _ = _line_problem(1)
    sol = solve(batch, _params(b={"max": 1.0}))              # the slope wants 3
    assert sol.x[1] == pytest.approx(1.0) and sol.at_bound[1] and np.isnan(sol.stderr[1])
    assert sol.errors()["b"] is None and sol.flag(1) == "at bound"

    def blind(X):                                           # c never reaches a residual
        X = np.asarray(X, dtype=float).reshape(3, -1)
        return batch(X[:2])
    p = _params()
    p.add("c", value=1.0)
    sol = solve(blind, p)
    assert np.isinf(sol.stderr[2]) and sol.flag(2) == "not identified" and np.isfinite(sol.stderr[0])


def test_a_held_parameter_keeps_its_value_and_the_report_names_every_parameter():
    batch, _, _ = _line_problem(2)
    p = _params()
    p["a"].set(value=2.0, vary=False)
    sol = solve(batch, p)
    assert sol.x[0] == 2.0 and not sol.varied[0] and sol.flag(0) == "held"
    text = sol.report("line", {"a": "us", "b": "us/KB"})
    assert text.startswith("[[line]] linear loss, 12 residuals") and "1 free parameters" in text
    assert "(held)" in text and "us/KB" in text


def test_an_unknown_loss_is_refused_by_name():
    batch, _, _ = _line_problem(2)
    with pytest.raises(ValueError, match="loss must be one of .*'huber'"):
        solve(batch, _params(), loss="huber")


def _lmfit_answer(batch, params, loss):
    """The same problem through lmfit's Minimizer (the path solve took before it called SciPy
    directly): its answer, and the residual and Jacobian evaluations it made."""
    names = list(params)
    calls = {"n": 0}

    def fcn(p):
        calls["n"] += 1
        return batch(np.array([[p[n].value] for n in names]))[0]

    def jac(p, *args, **kws):
        calls["n"] += 1
        return jacobian(batch, np.array([p[n].value for n in names]),
                        np.array([params[n].min for n in names]), np.array([params[n].max for n in names]))
    res = lmfit.Minimizer(fcn, params, scale_covar=False).least_squares(
        jac=jac, x_scale="jac", method="trf", max_nfev=400, loss=loss, f_scale=1.0)
    return np.array([res.params[n].value for n in names]), calls["n"]


@pytest.mark.parametrize("group, loss", [("tls", "linear"), ("tls", "cauchy"), ("ams", "cauchy"),
                                         ("handshake", "cauchy")])
def test_solve_is_lmfits_minimizer_to_the_bit(group, loss):
    """solve calls scipy.optimize.least_squares itself, with what lmfit's Minimizer.least_squares
    passes it (bounds, trust-region reflective, the Jacobian, x_scale, loss, tolerances) and trial
    points clipped into the bounds as lmfit's Parameter clips them: on each sub-model of the
    packaged fit, from the priors' starting values, the answer is lmfit's to the bit and so is the
    count of evaluations (lmfit's ends with one more residual evaluation at the answer, as
    solve's does)."""
    from cryptoplan.model.calibration.fitting import free_parameters
    from cryptoplan.model.calibration.free import initial
    from cryptoplan.model.calibration.scoring import group_batch
    from cryptoplan.model.params import load_params

    values = {k: float(v["value"]) for k, v in load_params()["parameters"].items()}
    names, _, batch = group_batch(group, values)
    params = free_parameters(names, {n: initial(n)[0] for n in names})
    sol = solve(batch, params, loss=loss, stderr=False)
    x, calls = _lmfit_answer(batch, params, loss)
    assert np.array_equal(sol.x, x), np.abs(sol.x - x).max()
    assert sol.nfev == calls


def test_a_residual_the_model_cannot_compute_is_named():
    params = lmfit.Parameters()
    params.add("a", value=1.0, min=0.0, max=10.0)

    def batch(X):
        return np.where(X.T > 2.0, np.nan, X.T - 3.0)
    with pytest.raises(ValueError, match=r"the fit's (residuals|Jacobian): not a finite number at a trial point"):
        solve(batch, params)

    def infinite(X):
        return np.where(X.T > 2.0, np.inf, X.T - 3.0)
    with pytest.raises(ValueError, match=r"the fit's (residuals|Jacobian): not a finite number at a trial point"):
        solve(infinite, params)
