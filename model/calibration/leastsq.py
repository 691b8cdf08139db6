"""One least-squares path for every fit: lmfit's Parameters, SciPy's solver, one standard-error rule.

The published-figure fit (:func:`cryptoplan.model.calibration.fit.fit`), the round-trip
fit (:func:`cryptoplan.model.calibration.roundtrip.fit_roundtrip`) and the site calibration
(:func:`cryptoplan.model.calibration.calibrate.calibrate`) all state their problem the
same way and solve it here:

* the unknowns are an :class:`lmfit.Parameters` (name, starting value, bounds;
  ``vary=False`` holds one);
* the residuals come from a *batch* function: ``batch(X)`` takes parameter
  sets as the columns of ``X`` (n, k) and returns their residuals (k, m), so a
  forward-difference Jacobian costs one model evaluation, not n + 1
  (:func:`jacobian`);
* each residual is counted in the observation's **scale** (a figure's
  tolerance, a site number's relative sigma), so a residual of 1 is one
  tolerance or one sigma, and the robust loss bends there; its **standard
  uncertainty** in those units is ``sigma`` (1 for a site number, whose sigma
  is a standard deviation; :data:`~cryptoplan.model.calibration.scoring.TOLERANCE_UNCERTAINTY`
  for a published figure, whose tolerance is the half-width of the interval it
  is good to).

:func:`solve` minimises :math:`\\tfrac12\\sum_i \\rho(r_i^2)` with SciPy's
trust-region reflective solver (:func:`scipy.optimize.least_squares`, called directly: lmfit's
``Minimizer`` wraps the same call and, per solve, copies the parameters, sets every trial point
through them and inverts :math:`J^TJ` for errors not used here; without it, and with the figures'
references computed once, a TLS bootstrap refit takes 20 ms instead of 25, to the same bits),
:math:`\\rho(z) = z` (``loss="linear"``) or :math:`\\ln(1 + z)` (``"cauchy"``).

Standard errors (the one convention)
------------------------------------
The standard errors say how far the answer moves when the observations move by their standard
uncertainties: the delta method for an M-estimator (Huber's sandwich).  At the optimum the
cost's gradient :math:`\\sum_i \\psi(r_i) \\nabla r_i` is 0, with :math:`\\psi(r) = \\rho'(r^2)\\,r`
the loss's pull (:math:`r`, or :math:`r/(1 + r^2)` for Cauchy); an observation moved by
:math:`\\delta_i` moves the answer by :math:`-H^{-1} \\psi'(r_i) J_i \\delta_i`, with :math:`J` the
Jacobian of the residuals (central differences) over the parameters not on a bound and :math:`H`
the cost's curvature.  With :math:`\\sigma_i` each residual's standard uncertainty (in the
residuals' units) and :math:`N` the residuals that are measurements (``noisy``; a constraint,
such as a range's end, pulls but does not move),

.. math::

    H = \\sum_i \\psi'(r_i)\\,J_i J_i^T + \\sum_i \\psi(r_i)\\,\\nabla^2 r_i, \\quad
    B = \\sum_{i \\in N} \\psi'(r_i)^2 \\sigma_i^2\\,J_i J_i^T, \\quad
    \\mathrm{cov} = s^2\\,H^{-1} B H^{-1}, \\quad
    s^2 = \\max\\Big(1, \\frac{\\sum_i w_i r_i^2 / \\sigma_i^2}{m - p}\\Big),

with :math:`\\psi'(r) = 1`, or :math:`(1 - r^2)/(1 + r^2)^2` for Cauchy, and :math:`w_i =
\\rho'(r_i^2)` (1, or :math:`1/(1 + r_i^2)`).  For least squares on a model linear in its
parameters with every residual a measurement of one uncertainty this is
:math:`s^2 \\sigma^2 (J^T J)^{-1}`.  The residuals' own curvature (second differences,
:func:`_curvature`) is kept along the Gauss-Newton part's eigen-directions whose curvature exceeds
ten times the second differences' error (their change from one step to twice it, one number for
the block: a kink within the steps, or rounding, sends the weakly pinned directions back to
Gauss-Newton).  On the published TLS figures it makes the channel initiator's and SSLCIPH's costs'
errors 13-16% larger, the others' up to 9%.  Steps of 1e-3 and 2e-3 relative agree with 1e-4 and
5e-4 to 5e-7 there (the second differences reach 0.4% from the fit); the TLS residuals have a
kink 0.6-0.8% from it along ``tls_ssl_us_per_kb``, which steps of 3e-3 and their double would
cross.  For the Cauchy loss neither the reweighted least squares'
:math:`\\sigma^2 (J^T W J)^{-1}` (printed here until 2026-11) nor the Gauss-Newton sandwich
(:math:`H` without that curvature) is what the fit does: the first holds the weights still, where
a residual near its tolerance's edge barely pulls back when its observation moves
(:math:`\\psi' \\to 0` at :math:`|r| = 1`), and both leave out how the residuals bend.  Refits of
the TLS block with its figures moved by 1/100 of their uncertainty
(:func:`cryptoplan.model.calibration.bootstrap.refits`) spread 0.95-1.10 times these errors (300
refits, median 0.99), 1.09 times the reweighted ones and the Gauss-Newton sandwich's (medians;
1.17 and 1.16 before the prior on TCPIP's cost per KB);
``tests/test_draws.py`` re-runs it for TLS and the crypto + AMS block.  The bootstrap bands move
the figures by their whole uncertainty: there a bound, or a figure crossing its tolerance's edge,
makes the refits spread otherwise (the TLS block's 0.94-1.21 times these errors), and the bands
carry that.
The stated uncertainties are taken at their word unless the residuals scatter more than they
allow, in which case they are scaled up by the Birge ratio :math:`s` (the Particle Data Group's
scale factor).  ``lmfit`` scales by :math:`\\chi^2/\\nu` always (``scale_covar``), which reads a
fit better than its stated uncertainties as more precise than they are; and inverts
:math:`J^TJ` outright, which fails or gives finite nonsense where the data do not pin a
direction.  Here a parameter on a bound has no standard error (NaN: the bound holds it, as
lmfit's own documentation advises reading such a fit), and one on a direction of the
column-scaled :math:`W^{1/2}J` whose singular value is below 1e-9 of the largest, or on a
direction along which :math:`H` does not curve up (a Cauchy fit can stop on a saddle, where
residuals past their tolerance outweigh the rest), is *not identified*: infinity.

References
----------
.. [1] M. Newville, T. Stensitzki, D. B. Allen, A. Ingargiola, "LMFIT:
   Non-Linear Least-Square Minimization and Curve-Fitting for Python",
   Zenodo (2014-), https://lmfit.github.io/lmfit-py/.
.. [2] R. T. Birge, "The calculation of errors by the method of least squares",
   Phys. Rev. 40, 207 (1932); Particle Data Group, *Review of Particle Physics*,
   Introduction, "Averages and fits" (the scale factor :math:`S`).
.. [3] P. J. Huber, *Robust Statistics* (1981), ch. 6-7 (the M-estimator's asymptotic covariance
   :math:`A^{-1} B A^{-1}`).
.. [4] J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed. (2006),
   sec. 8.1 (finite-difference Jacobians).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np
from scipy import optimize

if TYPE_CHECKING:     # the problem's statement (lmfit takes ~0.4 s to import; the callers make it)
    import lmfit

__all__ = ["Solution", "solve", "jacobian", "standard_errors", "at_bound", "LOSSES"]

# name -> weight w(r) = rho'(r^2) at the optimum (the Birge ratio's weighted residuals, the identification test)
LOSSES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": lambda r: np.ones_like(r),
    "cauchy": lambda r: 1.0 / (1.0 + r * r),
}

# name -> psi'(r), the slope of the loss's pull psi(r) = rho'(r^2) r (the sandwich's A and B)
_SLOPES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "linear": lambda r: np.ones_like(r),
    "cauchy": lambda r: (1.0 - r * r) / (1.0 + r * r) ** 2,
}

# scipy's relative step for forward differences (scipy.optimize._numdiff, "2-point")
_STEP = np.finfo(float).eps ** 0.5


@dataclass(frozen=True)
class Solution:
    """What :func:`solve` found.

    Attributes
    ----------
    names : tuple of str
        The parameters, in the order of ``x``.
    x, stderr : ndarray
        Values and standard errors (see the module docstring: NaN for a
        parameter held by a bound, held fixed or not asked for, infinity for
        one the residuals do not identify).
    at_bound : ndarray of bool
        Parameters that ended on a bound.
    varied : ndarray of bool
        Parameters the solver moved (``vary=True``).
    residual : ndarray
        The residuals at ``x``, in the batch's units (tolerances, sigmas).
    cost : float
        :math:`\\tfrac12\\sum_i\\rho(r_i^2)` at ``x``.
    nfev : int
        Residual evaluations (the Jacobian's batches counted once each).
    loss : str
        ``"linear"`` or ``"cauchy"``.
    scale : float
        The Birge factor :math:`s \\ge 1` the covariance was scaled by, in standard uncertainties (NaN
        without standard errors).
    cov : ndarray or None
        The covariance of ``x`` (n, n), in the parameters' units squared: NaN in the rows and
        columns of a parameter without a standard error; None without standard errors.  A
        combination :math:`a^T x` of parameters that trade off with each other can have a
        standard error :math:`\\sqrt{a^T C a}` well below theirs.
    """

    names: tuple
    x: np.ndarray
    stderr: np.ndarray
    at_bound: np.ndarray
    varied: np.ndarray
    residual: np.ndarray
    cost: float
    nfev: int
    loss: str
    scale: float
    cov: np.ndarray | None = None

    def values(self) -> dict:
        """name -> value."""
        return {n: float(v) for n, v in zip(self.names, self.x)}

    def errors(self) -> dict:
        """name -> standard error, or None where there is none (bound, fixed, not identified)."""
        return {n: (float(s) if np.isfinite(s) else None) for n, s in zip(self.names, self.stderr)}

    def covariance_block(self) -> tuple[list, np.ndarray]:
        """``(names, matrix)``: the covariance over the parameters that have one (finite
        variance: varied, off their bounds, identified); ``([], empty)`` without standard errors."""
        if self.cov is None:
            return [], np.zeros((0, 0))
        keep = [i for i in range(len(self.names)) if np.isfinite(self.cov[i, i])]
        return [self.names[i] for i in keep], self.cov[np.ix_(keep, keep)]

    def flag(self, i: int) -> str:
        """Why parameter ``i`` has no standard error ("" when it has one)."""
        if not self.varied[i]:
            return "held"
        if self.at_bound[i]:
            return "at bound"
        if np.isinf(self.stderr[i]):
            return "not identified"
        return ""

    def report(self, title: str = "fit", units: dict | None = None, tags: dict | None = None) -> str:
        """A fit report: the problem's size, cost and scale, then each parameter's value +- error
        (and ``tags[name]`` after it, when given)."""
        units, tags = units or {}, tags or {}
        m, p = self.residual.size, int(np.sum(self.varied & ~self.at_bound))
        inside = int(np.sum(np.abs(self.residual) <= 1.0))
        scale = "" if not np.isfinite(self.scale) else f", error scale s {self.scale:.3g}"
        lines = [f"[[{title}]] {self.loss} loss, {m} residuals ({inside} within one tolerance or sigma), "
                 f"{p} free parameters, {self.nfev} evaluations, cost {self.cost:.6g}{scale}"]
        width = max([len(n) for n in self.names] + [4])
        for i, n in enumerate(self.names):
            se = self.stderr[i]
            err = f"+- {se:<10.3g}" if np.isfinite(se) else f"{'(' + self.flag(i) + ')':13s}" if self.flag(i) else " " * 13
            rel = "" if not (np.isfinite(se) and self.x[i] != 0) else (
                f"({se / abs(self.x[i]):6.1%})" if se < 10 * abs(self.x[i]) else "(>1000%)")
            lines.append(f"    {n:{width}s} {self.x[i]:12.6g} {err} {units.get(n, ''):6s} {rel:9s} {tags.get(n, '')}".rstrip())
        return "\n".join(lines)


def at_bound(x, lo, hi) -> np.ndarray:
    """Parameters sitting on a bound (within 1e-8 of the bound interval's width)."""
    x, lo, hi = (np.asarray(a, dtype=float) for a in (x, lo, hi))
    width = np.where(np.isfinite(hi - lo), hi - lo, np.maximum(np.abs(x), 1.0))
    return (x - lo <= 1e-8 * width) | (hi - x <= 1e-8 * width)


def jacobian(batch, x, lo, hi) -> np.ndarray:
    """Forward-difference Jacobian of ``batch`` at ``x``, all columns in one evaluation.

    ``batch(X)`` takes parameter sets as the columns of ``X`` (n, k) and returns the
    residuals of each, (k, m).  The step is SciPy's,
    :math:`h_j = \\sqrt{\\epsilon}\\,\\max(1, |x_j|)` signed like :math:`x_j`, reversed
    where it would leave the bounds (the larger side where neither fits):

    .. math:: J_{ij} = \\frac{r_i(x + h_j e_j) - r_i(x)}{h_j}

    Returns
    -------
    ndarray, shape (m, n)
    """
    x = np.asarray(x, dtype=float)
    h = _STEP * np.where(x >= 0, 1.0, -1.0) * np.maximum(1.0, np.abs(x))
    out = (x + h < lo) | (x + h > hi)
    fits = np.abs(h) <= np.maximum(x - lo, hi - x)
    h = np.where(out & fits, -h, h)
    h = np.where(fits, h, np.where(hi - x >= x - lo, hi - x, lo - x))
    moved = x[:, None] + np.diag(h)
    h = np.diag(moved) - x                   # the step as represented
    r = batch(np.column_stack([x, moved]))
    return (r[1:] - r[0]).T / h


def standard_errors(batch, x, lo, hi, r, free, loss="linear", sigma=None,
                    noisy=None) -> tuple[np.ndarray, float, np.ndarray]:
    """Standard errors by the module docstring's convention, and the Birge factor used.

    Parameters
    ----------
    batch : callable
        As for :func:`jacobian`.
    x, lo, hi : ndarray
        The optimum and the bounds.
    r : ndarray
        The residuals at ``x``.
    free : ndarray of bool
        Parameters to give an error (not on a bound, varied).
    loss : {"linear", "cauchy"}
    sigma : array_like, optional
        Each residual's standard uncertainty, in the residuals' units (> 0; default 1).
    noisy : array_like of bool, optional
        The residuals that are measurements, moved by their uncertainty (default all); the others
        are constraints (a range's end), which pull but do not move.

    Returns
    -------
    stderr : ndarray
        NaN where not ``free``, infinity where not identified.
    scale : float
        :math:`s`.
    cov : ndarray, shape (n, n)
        The covariance; NaN in the rows and columns of a parameter not ``free`` or not identified.
    """
    x = np.asarray(x, dtype=float)
    idx = np.flatnonzero(free)
    if idx.size == 0:
        return np.full(x.size, np.nan), np.nan, np.full((x.size, x.size), np.nan)
    width = np.where(np.isfinite(hi - lo), 1e-6 * (hi - lo), 1.0)
    h = 1e-6 * np.max([np.abs(x), width, np.full(x.size, 1e-12)], axis=0)    # = maximum.reduce (NumPy 2.5's stubs refuse it)
    up, down = np.minimum(x + h, hi), np.maximum(x - h, lo)
    sets = np.repeat(x[:, None], 2 * idx.size, axis=1)      # columns: each free one up, then down
    sets[idx, np.arange(idx.size)] = up[idx]
    sets[idx, idx.size + np.arange(idx.size)] = down[idx]
    got = batch(sets)                                        # (2 * free, residuals)
    jac = ((got[:idx.size] - got[idx.size:]) / (up[idx] - down[idx])[:, None]).T
    w, slope = LOSSES[loss](r), _SLOPES[loss](r)
    # the Birge ratio in standard uncertainties: the loss's weights stay those of the residuals it was solved in
    u = np.ones_like(r) if sigma is None else np.broadcast_to(np.asarray(sigma, dtype=float), r.shape)
    dof = r.size - idx.size
    s2 = max(1.0, float(np.sum(w * (r / u) ** 2)) / dof) if dof > 0 else 1.0
    # column-scaled weighted Jacobian: its singular values show directions no residual pins;
    # parameters moving along such a direction get no standard error rather than pinv's finite one
    wj = np.sqrt(w)[:, None] * jac
    scale = np.linalg.norm(wj, axis=0)
    scale[scale == 0.0] = 1.0
    _, sv, vt = np.linalg.svd(wj / scale, full_matrices=False)
    keep = sv > 1e-9 * sv.max() if sv.size and sv.max() > 0 else np.zeros(sv.size, bool)
    v = vt[keep].T                                           # the pinned directions (free, k)
    # the cost's curvature H within them: the Gauss-Newton part and the residuals' own curvature
    # weighted by their pull, the latter only along directions where the Gauss-Newton part is
    # larger than the second differences' own error (their change from one step to twice it,
    # times 10: along a direction the figures barely pin it is rounding, and its sign would decide
    # whether the parameters there have an error at all); a direction along which H does not
    # curve up is not pinned either
    gauss = v.T @ (jac.T @ (slope[:, None] * jac) / np.outer(scale, scale)) @ v
    c1, c2 = (v.T @ (_curvature(batch, x, idx, lo, hi, w * r, step) / np.outer(scale, scale)) @ v
              for step in (_CURVATURE_STEP, 2 * _CURVATURE_STEP))
    mu, p = np.linalg.eigh(gauss) if v.size else (np.zeros(0), np.zeros((0, 0)))
    noise = np.linalg.norm(c1 - c2, 2) if v.size else 0.0
    pr = p[:, np.abs(mu) > 10.0 * noise]
    lam, q = np.linalg.eigh(gauss + pr @ (pr.T @ c1 @ pr) @ pr.T) if v.size else (np.zeros(0), np.zeros((0, 0)))
    good = lam > 1e-18 * lam.max() if lam.size and lam.max() > 0 else np.zeros(lam.size, bool)
    bad = np.concatenate([vt[~keep], (v @ q[:, ~good]).T])
    unidentified = np.any(np.abs(bad) > 0.05, axis=0) if bad.size else np.zeros(idx.size, bool)
    h_inv = (v @ q[:, good] / lam[good]) @ (v @ q[:, good]).T
    moves = np.ones_like(r) if noisy is None else np.broadcast_to(np.asarray(noisy, dtype=bool), r.shape)
    js = jac / scale
    b = js.T @ ((slope * slope * u * u * moves)[:, None] * js)
    cov = h_inv @ b @ h_inv / np.outer(scale, scale) * s2
    out = np.full(x.size, np.nan)
    out[idx] = np.where(unidentified, np.inf, np.sqrt(np.clip(np.diag(cov), 0.0, None)))
    full = np.full((x.size, x.size), np.nan)
    full[np.ix_(idx, idx)] = cov
    gone = idx[unidentified]
    full[gone, :] = full[:, gone] = np.nan
    return out, float(np.sqrt(s2)), full


#: The relative step of :func:`_curvature`'s second differences (also taken at twice it, for their error).
_CURVATURE_STEP = 1e-3


def _curvature(batch, x, idx, lo, hi, pull, step: float = _CURVATURE_STEP) -> np.ndarray:
    """:math:`\\sum_i \\psi_i \\nabla^2 r_i` over the parameters ``idx``: the residuals' own curvature,
    each weighted by its pull :math:`\\psi_i` at the optimum (held fixed), by central second
    differences of :math:`\\phi(x) = \\sum_i \\psi_i r_i(x)`,

    .. math:: S_{jk} = \\frac{\\phi(x + h_j + h_k) - \\phi(x + h_j - h_k) - \\phi(x - h_j + h_k)
              + \\phi(x - h_j - h_k)}{4 h_j h_k},

    :math:`h_j` = ``step`` times the largest of :math:`|x_j|`, 1e-6 of the bounds' width (1 when a
    bound is infinite) and 1e-12, at most half the distance to a bound; all :math:`2p(p + 1)`
    points in one batch.  0 for a model linear in
    its parameters; the Gauss-Newton approximation leaves it out.

    Returns
    -------
    ndarray, shape (len(idx), len(idx))
    """
    f = idx.size
    width = np.where(np.isfinite(hi - lo), 1e-6 * (hi - lo), 1.0)
    h = step * np.max([np.abs(x), width, np.full(x.size, 1e-12)], axis=0)
    h = np.minimum(h, 0.5 * np.minimum(x - lo, hi - x))[idx]
    j, k = np.triu_indices(f)
    sets = np.repeat(x[:, None], 4 * j.size, axis=1)
    for n, (sj, sk) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        cols = n * j.size + np.arange(j.size)
        sets[idx[j], cols] += sj * h[j]
        sets[idx[k], cols] += sk * h[k]
    phi = (np.asarray(batch(sets), dtype=float) @ pull).reshape(4, j.size)
    out = np.zeros((f, f))
    out[j, k] = (phi[0] - phi[1] - phi[2] + phi[3]) / (4 * h[j] * h[k])
    out[k, j] = out[j, k]
    return out


def _finite(x, what: str) -> np.ndarray:
    """``x`` as floats, or an :class:`~cryptoplan.model.errors.InputError` (a ValueError) naming
    ``what`` if any is NaN or infinite (a residual the model could not compute at a trial point:
    the solver cannot step from it; lmfit refused the same)."""
    x = np.asarray(x, dtype=float)
    if not np.isfinite(x).all():
        raise InputError(f"the fit's {what}: not a finite number at a trial point (the model gave no number there)")
    return x


def solve(batch, params: lmfit.Parameters, *, loss: str = "linear", max_nfev: int = 400, stderr: bool = True,
          tol: float | None = None, sigma=None, noisy=None) -> Solution:
    """Minimise :math:`\\tfrac12\\sum_i\\rho(r_i^2)` over ``params``; the one least-squares path.

    Parameters
    ----------
    batch : callable
        ``batch(X)``: residuals (k, m), in tolerances or sigmas, of the parameter
        sets in the columns of ``X`` (n, k), n = ``len(params)`` in its order.
    params : lmfit.Parameters
        Starting values and bounds (``min``/``max``; ``vary=False`` holds one); only read, so
        several solves may start from one.
    loss : {"linear", "cauchy"}
        :math:`\\rho(z) = z` or :math:`\\ln(1 + z)`, with ``f_scale`` one unit of the residuals.
    max_nfev : int
        Residual evaluations allowed (the Jacobian's not counted): the solver stops there, at the
        best point it has accepted.
    stderr : bool
        Compute standard errors (module docstring); NaN when False.
    tol : float, optional
        The solver's ``xtol``, ``ftol`` and ``gtol`` (relative step, relative change of the cost,
        scaled gradient at which it stops); default SciPy's 1e-8.
    sigma : array_like, optional
        Each residual's standard uncertainty in the residuals' units, for the standard errors
        (module docstring); default 1.
    noisy : array_like of bool, optional
        The residuals that are measurements, for the standard errors (module docstring); default all.

    Returns
    -------
    Solution
    """
    if loss not in LOSSES:
        raise InputError(f"loss must be one of {sorted(LOSSES)}, got {loss!r}")
    names = tuple(params)
    varied = np.array([params[n].vary for n in names])
    x_all = np.array([params[n].value for n in names], dtype=float)
    lo_all = np.array([params[n].min for n in names], dtype=float)
    hi_all = np.array([params[n].max for n in names], dtype=float)
    vi = np.flatnonzero(varied)

    def full(xv):                           # varied values (n_v, k) -> every parameter (n, k)
        xv = np.asarray(xv, dtype=float)
        out = np.repeat(x_all[:, None], xv.shape[1], axis=1)
        out[vi] = xv
        return out

    def sub_batch(xv):
        return batch(full(xv))

    lo_v, hi_v = lo_all[vi], hi_all[vi]
    counter = {"batches": 0}
    # (a trial point is clipped into the bounds, as lmfit's Parameter does with a value it is given)

    def fcn(xv):
        counter["batches"] += 1
        return _finite(sub_batch(np.clip(xv, lo_v, hi_v)[:, None])[0], "residuals")

    def jac(xv):
        counter["batches"] += 1
        return _finite(jacobian(sub_batch, np.clip(xv, lo_v, hi_v), lo_v, hi_v), "Jacobian")

    x = x_all.copy()
    if vi.size:
        stops = {} if tol is None else {"xtol": tol, "ftol": tol, "gtol": tol}
        # (a trial point may take the model where a ratio or logarithm has no value: the residuals
        # say so, as they did under lmfit's call, which ran with these warnings off)
        with np.errstate(invalid="ignore", divide="ignore"):
            res = optimize.least_squares(fcn, x_all[vi], jac=jac, bounds=(lo_v, hi_v), x_scale="jac", method="trf",
                                         max_nfev=max_nfev, loss=loss, f_scale=1.0, **stops)
        x[vi] = np.clip(res.x, lo_v, hi_v)
    counter["batches"] += 1                 # the residuals at the answer
    r = np.asarray(batch(x[:, None])[0], dtype=float)
    cost = 0.5 * float(np.sum(r * r)) if loss == "linear" else 0.5 * float(np.sum(np.log1p(r * r)))
    bound = at_bound(x, lo_all, hi_all) & varied
    if stderr:
        free = varied & ~bound
        se, s, cov = standard_errors(batch, x, lo_all, hi_all, r, free, loss, sigma, noisy)
    else:
        se, s, cov = np.full(x.size, np.nan), np.nan, None
    return Solution(names=names, x=x, stderr=se, at_bound=bound, varied=varied, residual=r, cost=cost,
                    nfev=counter["batches"], loss=loss, scale=s, cov=cov)
