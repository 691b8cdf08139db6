"""How the fit scores a prediction: tolerance-scaled log-ratio residuals and the fit's costs.

A residual is the log-ratio of the model's value to the figure, divided by the figure's
tolerance carried over to the compared quantity (:func:`_residual`, the scalar definition;
:class:`Scorer`, the same over arrays; see :mod:`cryptoplan.model.calibration.fit` for the
formula), 0 inside a range or bound.  :func:`residuals` scores a sub-model's targets under
given parameter values, :func:`group_members` says which parameters and targets a sub-model
has, and :func:`fit_cost` and :func:`roundtrip_cost` are the costs the two fits minimise.
"""

from __future__ import annotations

import math

import numpy as np

from ..figures import figure
from ..params import using_values
from ..zos.tls import roundtrip_figure_ids, tls_roundtrip_us
from .free import FREE, GROUPS, PRIORS
from .targets import Stacker, Target, scored, targets

__all__ = ["Scorer", "residuals", "group_members", "group_batch", "fit_cost", "roundtrip_cost", "prior_terms",
           "prior_residuals", "measured", "TOLERANCE_UNCERTAINTY"]

#: The standard uncertainty of a residual counted in tolerances: :math:`1/\\sqrt 3` of one.
#:
#: A tolerance is the half-width of the interval a figure is good to (data/README.md: half a
#: unit of the last printed digit, a chart read to +-10%), and a prior's factor the half-width
#: of a range (:class:`~cryptoplan.model.calibration.free.Prior`), with nothing said of where
#: in it the truth lies: a rectangular distribution, whose standard deviation is the half-width
#: over :math:`\\sqrt 3` (JCGM 100:2008, *Guide to the expression of uncertainty in
#: measurement*, 4.3.7).  Read as one standard deviation, a tolerance put a third of the figures
#: outside the interval they are printed to.  The residuals stay in tolerances (the robust loss
#: bends at one); the standard errors and the bootstrap's moves take this as their uncertainty.
#: Checked against figures the fit did not see (``cryptoplan crossval``): left out one at a
#: time, the 86 fitted figures are predicted with a median absolute error of 0.44 tolerances
#: (68% of them within 0.88), where a figure uncertain by this gives at least 0.39 and 0.57,
#: and one uncertain by a whole tolerance at least 0.67 and 0.99.
TOLERANCE_UNCERTAINTY = 1.0 / math.sqrt(3.0)

#: Figure kinds that are constraints, not measurements: a range or a bound is scored 0 inside it
#: and from its printed ends outside; it does not move when the figures are read again, so the
#: bootstrap keeps it and the standard errors' sandwich counts it in the curvature only.
CONSTRAINT_KINDS = ("range", "upper_bound", "lower_bound")


def _to_ratio(fig, v: float) -> float:
    """The compared quantity of a value in the figure's unit: a ratio for a percentage."""
    if fig.unit == "pct_change":
        return 1.0 + v / 100.0
    if fig.unit in ("pct_of_baseline", "pct"):
        return v / 100.0
    return v


def _log_tolerance(fig, ref: float) -> float:
    """The row's tolerance as a log-ratio, at the compared value ``ref``: :math:`\\ln(1 + \\delta)`.

    A tolerance is relative to the printed number.  For a percentage change
    ``v`` the fit compares the ratio ``1 + v/100``, whose relative tolerance is
    :math:`\\delta = w / |100 + v|`, ``w`` the figure's width at ``v``
    (:meth:`~cryptoplan.model.figures.Figure.width`: the wider of ``t |v|`` and the kind's
    percentage points; a 5% tolerance on -45% is 2.25 points of 55%, 4.1% of the ratio), at
    least ``t`` points so a change printed as 0 still has a width; another percentage compares
    ``v / 100`` with :math:`\\delta = w / |v|`; other units compare the number itself,
    :math:`\\delta = t`.  The log-ratio of the accepted interval's upper end is
    :math:`\\ln(1 + \\delta)`, so a residual of 1 is that end exactly (and the lower end a
    residual of :math:`\\ln(1 - \\delta) / \\ln(1 + \\delta)`, slightly beyond -1, or none
    where the interval reaches a ratio of 0).  Its first-order form :math:`\\delta` is that
    for a small tolerance and was used until model v5; it is not for a large one: seed 003's
    98% saving (ratio 0.02, 4.9 points wide) accepts ratios up to 3.2 times the printed one, and
    :math:`\\delta = 2.2` read one tolerance as a factor 9: the handshake factors' standard
    errors were 1.15 times their values (0.55 times now) and 5% of their draws put ECDHE's
    saving with a coprocessor below 88% (below 94.8% now; ``cryptoplan fit``, 1,000 draws).
    """
    change = fig.unit == "pct_change"
    return float(_log_width(fig.tolerance, fig.points, change, bool(fig.points) and not change, ref))


def _log_width(tol, points, change, percent, ref):
    """:func:`_log_tolerance`'s rule, elementwise over arrays of figures: the one place it is written.

    ``tol`` the relative tolerances, ``points`` the percentage points (0 for a figure not printed as a
    percentage), ``change`` a percentage change, ``percent`` another percentage, ``ref`` the values
    compared against.  Every tolerance is > 0 (tests/test_figures_table.py), so a figure that is not
    a percentage always has a width.
    """
    ref = np.asarray(ref, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        width = np.maximum(tol * np.abs(ref), points)                           # Figure.width
        d = np.where(change, np.maximum(width, tol) / np.abs(100.0 + ref),
                     np.where(percent & (ref != 0), width / np.abs(ref), tol))   # points of v over |v|
    return np.log1p(d)


def _residual(fig, model: float) -> float:
    """Log-ratio of model to figure in units of the figure's tolerance (0 inside a range or bound)."""
    m = _to_ratio(fig, model)
    if m <= 0:
        return 1e3
    if fig.kind in CONSTRAINT_KINDS:
        # from the printed ends, as for a range: |r| <= 1 is then within the row's bounds()
        lo, hi = fig.low, fig.high
        if fig.kind != "lower_bound" and model > hi:
            ref = hi
        elif fig.kind != "upper_bound" and model < lo:
            ref = lo
        else:
            return 0.0
    else:
        ref = fig.target()
    return math.log(m / _to_ratio(fig, ref)) / _log_tolerance(fig, ref)


class Scorer:
    """:func:`_residual` for a fixed list of figures, over an array of model values.

    The figures' units, kinds, ends, targets and tolerances are read once into arrays;
    a fit evaluation then costs a few array operations instead of a Python call per
    figure.  tests/test_fit.py compares it with :func:`_residual` element by element.
    """

    def __init__(self, figs):
        unit = np.array([f.unit for f in figs], dtype=object)
        kind = np.array([f.kind for f in figs], dtype=object)
        self.div = np.where(np.isin(unit, ("pct_change", "pct_of_baseline", "pct")), 100.0, 1.0)
        self.change = unit == "pct_change"
        self.offset = np.where(self.change, 1.0, 0.0)
        self.bounded = np.isin(kind, CONSTRAINT_KINDS)
        self.has_hi = self.bounded & (kind != "lower_bound")
        self.has_lo = self.bounded & (kind != "upper_bound")
        self.lo = np.array([np.nan if f.low is None else f.low for f in figs], dtype=float)
        self.hi = np.array([np.nan if f.high is None else f.high for f in figs], dtype=float)
        self.target = np.array([f.target() for f in figs], dtype=float)
        self.tol = np.array([f.tolerance for f in figs], dtype=float)
        self.points = np.array([f.points for f in figs], dtype=float)
        self.percent = (self.points > 0) & ~self.change
        # a point figure's reference is its target whatever the model gives: its ratio's
        # denominator and its log tolerance are made once (a bounded figure's, per evaluation)
        self._den, self._ltol = self._reference(self.target, slice(None))
        self._b = np.flatnonzero(self.bounded)

    def _reference(self, ref, at):
        """``(ref / div + offset, ln tolerance)`` of the figures ``at`` measured against ``ref``."""
        ltol = _log_width(self.tol[at], self.points[at], self.change[at], self.percent[at], ref)
        return ref / self.div[at] + self.offset[at], ltol

    def __call__(self, model) -> np.ndarray:
        """The residuals (in tolerances) of ``model``: one value per figure (the last axis)."""
        model = np.asarray(model, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            m = model / self.div + self.offset
            r = np.log(m / self._den) / self._ltol
            if self._b.size:           # a bounded figure: 0 within its ends, else against the end passed
                b = self._b
                mb = model[..., b]
                above = self.has_hi[b] & (mb > self.hi[b])
                below = self.has_lo[b] & ~above & (mb < self.lo[b])
                den, ltol = self._reference(np.where(above, self.hi[b], np.where(below, self.lo[b], self.target[b])), b)
                r[..., b] = np.where(above | below, np.log(m[..., b] / den) / ltol, 0.0)
        return np.where(m <= 0, 1e3, r)


def group_members(group: str, exclude=()) -> tuple[list[str], list[Target]]:
    """A sub-model's free parameter names and its targets, less the ``exclude`` figure ids.

    Parameters
    ----------
    group : str
        A value of :data:`~cryptoplan.model.calibration.free.GROUPS` (``"ams"``, ``"tls"``,
        ``"handshake"``).
    exclude : sequence of str
        Figure ids left out.

    Returns
    -------
    tuple
        ``(names, targets)``: the parameter names in :data:`~cryptoplan.model.calibration.free.FREE`'s
        order, and the terms the fit scores (:func:`~cryptoplan.model.calibration.targets.scored`:
        a range figure said of several conditions gives two, its ends).
    """
    gnames = [n for n in FREE if GROUPS[FREE[n].submodel] == group]
    tlist = [t for t in targets() if t.group == group and t.figure_id not in set(exclude)]
    return gnames, scored(tlist)


def residuals(values: dict, tlist, score=None, stack=None) -> np.ndarray:
    """Tolerance-scaled residual of each target under ``values`` (:mod:`cryptoplan.model.calibration.fit`).

    Shape (k, targets): ``values`` may give parameters as arrays of k values, k parameter
    sets evaluated at once (:func:`cryptoplan.model.calibration.leastsq.jacobian`); k = 1 otherwise.
    ``score`` and ``stack``: the targets' :class:`Scorer` and
    :class:`~cryptoplan.model.calibration.targets.Stacker`, when the caller has built them already.
    """
    score = score or Scorer([figure(t.figure_id) for t in tlist])
    stack = stack or Stacker(tlist)
    with using_values(values):
        got = stack()
    return score(got).reshape(-1, len(tlist))


def prior_terms(gnames, values: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The priors (:data:`~cryptoplan.model.calibration.free.PRIORS`) on a sub-model's parameters.

    Returns
    -------
    tuple of ndarray
        ``(index, centre, width, ref)``: the positions in ``gnames`` of the parameters with a prior,
        each prior's centre under ``values`` (the sub-models fitted before), :math:`\\ln f`, and the
        position in ``gnames`` of the parameter a relative prior's centre multiplies (-1: none).
    """
    idx = np.array([i for i, n in enumerate(gnames) if n in PRIORS], dtype=int)
    centre = np.array([PRIORS[gnames[i]].centre(values) for i in idx], dtype=float)
    width = np.log([PRIORS[gnames[i]].factor for i in idx])
    ref = np.array([gnames.index(PRIORS[gnames[i]].relative_to) if PRIORS[gnames[i]].relative_to else -1
                    for i in idx], dtype=int)
    return idx, centre, width, ref


def prior_residuals(x, centre, width, xref=None) -> np.ndarray:
    """:math:`\\ln(x / x_p) / \\ln f` of the prior parameters' values ``x`` (p, k): (k, p).

    ``xref`` (p, k): for a relative prior, the value its centre multiplies (1 for the others), so
    :math:`x_p` is ``centre`` times it.  A value on its bound 0 sits :math:`\\ln(10^{12}) / \\ln f`
    factors below its centre (40 for :math:`f = 2`), not infinitely many.
    """
    c = centre[:, None] * (1.0 if xref is None else np.asarray(xref, dtype=float))
    c = np.maximum(c, 1e-300)
    x = np.maximum(np.asarray(x, dtype=float), 1e-12 * c)
    return (np.log(x / c) / width[:, None]).T


def measured(gnames, tlist) -> np.ndarray:
    """Which of a sub-model's residuals (:func:`group_batch`'s: figures, then priors) are measurements.

    A figure is, unless its kind is in :data:`CONSTRAINT_KINDS`; a prior is (its centre is a
    reading of other figures, good to its factor).

    Returns
    -------
    ndarray of bool, shape (len(tlist) + priors,)
    """
    figures = [figure(t.figure_id).kind not in CONSTRAINT_KINDS for t in tlist]
    return np.array(figures + [True] * sum(n in PRIORS for n in gnames), dtype=bool)


def group_batch(group: str, values: dict, exclude=()):
    """A sub-model's least-squares problem: its parameter names, targets and residual function.

    Returns
    -------
    tuple
        ``(names, targets, batch)``: ``batch(X)`` gives the residuals (k, m) of the parameter
        sets in the columns of ``X`` (n, k), the other parameters held at ``values``: the
        figures' (:func:`residuals`), then one per prior (:func:`prior_residuals`, centred
        under ``values``: the sub-models fitted before).
    """
    gnames, tlist = group_members(group, exclude)
    score, stack = Scorer([figure(t.figure_id) for t in tlist]), Stacker(tlist)
    pidx, centre, width, ref = prior_terms(gnames, values)

    def batch(x):
        r = residuals({**values, **dict(zip(gnames, x))}, tlist, score, stack)
        if not pidx.size:
            return r
        x = np.asarray(x, dtype=float)
        xref = np.where((ref >= 0)[:, None], x[np.maximum(ref, 0)], 1.0)
        return np.concatenate([r, prior_residuals(x[pidx], centre, width, xref)], axis=-1)
    return gnames, tlist, batch


def fit_cost(values: dict) -> float:
    """The fit's robust cost at ``values``: :math:`\\sum_g \\tfrac12 \\sum_i \\ln(1 + r_i^2)`.

    The quantity :func:`~cryptoplan.model.calibration.fitting.fit` minimises, summed over the sub-models it fits
    with the Cauchy loss, the priors' residuals (:func:`prior_residuals`) included (the round-trip model is fitted separately: see
    :func:`roundtrip_cost`).  Evaluated, not optimised: for the committed
    parameters it must equal the cost recorded with them, to rounding, as long
    as neither the figures nor the model have changed.
    """
    total = 0.0
    for group in dict.fromkeys(GROUPS.values()):
        gnames, _, batch = group_batch(group, values)
        r = batch(np.array([[values[n]] for n in gnames], dtype=float))
        total += 0.5 * float(np.sum(np.log1p(r * r)))
    return total


def roundtrip_cost(values: dict) -> float:
    """The round-trip fit's cost at ``values``: :math:`\\tfrac12 \\sum_i r_i^2`.

    Over every published round trip (:func:`cryptoplan.model.calibration.roundtrip.fit_roundtrip` minimises it),
    :math:`r_i` each time's residual as every figure is scored (:class:`Scorer`).
    """
    figs = [figure(fid) for fid in roundtrip_figure_ids()]
    with using_values(values):
        model = [float(tls_roundtrip_us(f.conditions["mode"], f.conditions["cipher"], float(f.conditions["message_kb"])))
                 for f in figs]
    r = Scorer(figs)(np.array(model))
    return 0.5 * float(np.sum(r * r))
