"""Months until growing loads reach a capacity: a bracketed root of the peak interval's load.

A pool's load at :math:`t` months, in interval :math:`j` of the day, with workload :math:`i`
growing at :math:`g_i` a year:

.. math::

    f_j(t) = \\sum_i L_{ij}\\, e^{r_i t} + B, \\qquad r_i = \\tfrac{1}{12}\\ln(1 + g_i), \\qquad
    f(t) = \\max_j f_j(t)

Each :math:`f_j` is a sum of exponentials, convex whatever the signs of :math:`r_i`, and so is
their maximum.  A convex function below the capacity :math:`c` at :math:`t = 0` that reaches it
stays above it afterwards, so :math:`\\{t : f(t) \\ge c\\}` is an interval
:math:`[t^*, \\infty)` and :math:`t^*` is bracketed by :math:`[0, T]` whenever
:math:`f(0) < c \\le f(T)` (:math:`T` = :data:`~.inputs.MAX_MONTHS`).  Each step keeps a
bracket :math:`[a, b]` with :math:`f(a) < c \\le f(b)`, and takes its steps on the logarithm of
the growing part, :math:`g(t) = \\ln (f(t) - B)` against :math:`\\ln (c - B)`: convex too (the
maximum of log-sum-exps of lines) and nearly straight, where :math:`f` itself bends by many
orders of magnitude over a bracket of a century.  A Newton step from :math:`b` (by convexity
its tangent lies below :math:`g`, so the step lands at or right of :math:`t^*`) and a chord
step from :math:`a` (the chord over :math:`[a, b]` lies above :math:`g`, so it lands at or
left of :math:`t^*`), or a bisection where the chord gains too little, so both ends close in
superlinearly.  The first bracket comes from the growth rates (the fastest one, and the peak
interval's mean rate), and three or four steps close it.  A Newton step that has converged makes
the chord probe just left of it, which closes the bracket.  It stops when the bracket is narrower than
:data:`TOLERANCE_MONTHS`; the answer is its right end, where the capacity is reached (each
probe's side is decided on :math:`f` itself).
"""

from __future__ import annotations

import numpy as np

from typing import NamedTuple

from .inputs import MAX_MONTHS

__all__ = ["months_to_reach", "peak_candidates", "peak_columns", "TOLERANCE_MONTHS", "Schedule", "SCAN_STEP_MONTHS", "snapped"]

#: Width of the final bracket (months): far below the 0.05 months a plan is checked to, and within
#: a few ulps of months up to 1,200.
TOLERANCE_MONTHS = 1e-10


def _combine(loads, r):
    """Workloads with the same growth summed: fewer exponentials per evaluation."""
    uniq, inv = np.unique(r, return_inverse=True)
    if uniq.size == r.size:
        return loads, r
    out = np.zeros((uniq.size,) + loads.shape[1:])
    for i, u in enumerate(inv):         # in the workloads' order, as numpy.add.at adds (a few workloads)
        out[u] += loads[i]
    return out, uniq


def peak_candidates(P) -> np.ndarray:
    """The columns of ``P`` (shape ``(W, I)``, >= 0) that can hold the maximum of
    :math:`\\sum_w y_w P_{wj}` for some :math:`y \\ge 0`: those no other column dominates.

    Column :math:`k` dominates :math:`j` when :math:`P_{wk} \\ge P_{wj}` for every :math:`w`
    (and differs, or is the same and comes first).  For :math:`y \\ge 0` the sum of :math:`k` is
    then at least that of :math:`j`, in floating point too: a product by a non-negative number
    and a sum, each rounded, never decrease when an operand grows, and the sums run in the same
    order.  The maximum over the kept columns is the maximum over all, to the bit.  A plan's
    day profiles keep 2 of 96 intervals.

    Returns
    -------
    ndarray of int
        The kept columns, ascending.
    """
    P = np.asarray(P, dtype=float)
    n = P.shape[1]
    ge = np.all(P[:, :, None] >= P[:, None, :], axis=0)        # ge[k, j]: column k >= column j
    same = ge & ge.T
    earlier = np.arange(n)[:, None] < np.arange(n)[None, :]    # k < j
    dominated = ((ge & ~same) | (same & earlier)).any(axis=0)
    return np.flatnonzero(~dominated)


def peak_columns(P, *weights) -> np.ndarray:
    """The columns of ``P`` (W, I) that can hold the peak of :math:`\\sum_w y_w P_{wj}` for
    ``weights`` ``y`` (arrays of W rows): :func:`peak_candidates` where ``P`` and every weight are
    finite and >= 0, so that the products and sums are monotone; every column otherwise."""
    P = np.asarray(P, dtype=float)
    if P.ndim == 2 and P.shape[1] > 1 and np.all(P >= 0) and all(
            np.all(np.isfinite(y) & (np.asarray(y) >= 0)) for y in weights):
        return peak_candidates(P)
    return np.arange(P.shape[-1])


def _bounds(lc, grow0, slope0, r_max) -> tuple:
    """Where the growth rates put the root: ``(t_lo, t_hi)``, each in months (``t_lo`` 0 where
    no workload grows, ``t_hi`` inf where the peak interval's load does not grow at 0).

    The growing part :math:`F = f - B` starts at :math:`F_0` and grows no faster than the fastest
    workload, :math:`F(t) \\le F_0 e^{r_{max} t}`, and, by Jensen's inequality on its peak
    interval at :math:`t = 0` (whose slope is ``slope0``), no slower than that interval's
    load-weighted mean rate :math:`\\bar r = F'(0)/F_0`: :math:`F(t) \\ge F_0 e^{\\bar r t}`.  So
    the root lies in :math:`[\\ln(C/F_0)/r_{max},\\ \\ln(C/F_0)/\\bar r]`.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gap = lc - np.log(grow0)                              # ln(C / F0) > 0
        t_lo = np.where(r_max > 0, gap / r_max, 0.0)
        t_hi = np.where(slope0 > 0, gap / (slope0 / grow0), np.inf)
    return t_lo, t_hi


def _probe(f, t, idx, lo, v_lo, hi, v_hi, d_hi, cc) -> None:
    """Evaluate ``f`` at ``t`` where it lies inside the bracket ``(lo, hi)`` and keep it as the end
    on its side of the capacity (rounding decides, as in every step), in place."""
    use = np.flatnonzero(np.isfinite(t) & (t > lo) & (t < hi))
    if not use.size:
        return
    v, d = f(t[use], idx[use])
    up = v >= cc[use]
    a, b = use[~up], use[up]
    lo[a], v_lo[a] = t[a], v[~up]
    hi[b], v_hi[b], d_hi[b] = t[b], v[up], d[up]


class Schedule(NamedTuple):
    """Each workload's rate multiplier over the months, beside its growth: a migration's shares.

    ``knots[w]`` is None (1 at every month) or ``(months, values)``: the multiplier is linear
    between the knots (absolute months of the plan, ascending) and constant beyond them
    (:func:`numpy.interp`).  ``start`` (broadcast to the scenarios) is the scenario's month, the
    crossing's month 0.  A migrated workload is two: what is left, :math:`1 - m(t)`, and what
    has moved, :math:`m(t)`, each its own row of loads (:mod:`.migration`).
    """

    knots: tuple
    start: object = 0.0
    #: Each migration's ``(remaining part, moved part)`` rows, in the system's order (what
    #: :func:`~.timeline.purchase_timeline` undoes to say which migration brings a purchase forward).
    pairs: tuple = ()

    def at(self, months) -> np.ndarray:
        """The multipliers at absolute ``months`` (shape (n,)): (W, n).

        Right-continuous at a jump (two knots at one month: the value after it), and a month
        within a few units in the last place of a knot is that knot's: a scan's relative month
        added back to the scenario's (:math:`t_0 + (k - t_0)`) lands on either side of ``k``."""
        x = np.asarray(months, dtype=float)
        return np.stack([np.ones_like(x) if k is None else np.interp(snapped(x, k[0]), k[0], k[1])
                         for k in self.knots])

    def last(self) -> float:
        """The last knot (absolute months): beyond it every multiplier is constant."""
        ends = [float(k[0][-1]) for k in self.knots if k is not None]
        return max(ends) if ends else -np.inf

    def steepest(self) -> np.ndarray:
        """Each workload's largest multiplier and largest slope (per month): (2, W).  A segment
        shorter than :data:`SCAN_STEP_MONTHS` counts as a jump at its knots, which the scan probes
        (its slope would make every step as short)."""
        out = np.zeros((2, len(self.knots)))
        out[0] = 1.0
        for w, k in enumerate(self.knots):
            if k is not None:
                xs, ys = (np.asarray(v, dtype=float) for v in k)
                out[0, w] = np.abs(ys).max()
                dx = np.diff(xs)
                long = dx >= SCAN_STEP_MONTHS
                out[1, w] = np.max(np.abs(np.diff(ys))[long] / dx[long], initial=0.0)
        return out


def snapped(x: np.ndarray, knots) -> np.ndarray:
    """``x`` with each value within 8 units in the last place of a knot moved onto the nearest such."""
    k = np.asarray(knots, dtype=float)
    d = np.abs(x[..., None] - k)
    d = np.where(d <= 8.0 * np.spacing(np.maximum(np.abs(k), 1.0)), d, np.inf)
    return np.where(np.isfinite(d).any(axis=-1), k[np.argmin(d, axis=-1)], x)


#: The shortest step of the scan over a schedule's months (months): a crossing that starts and
#: ends within it can be missed; a plan is read to 0.05 months.
SCAN_STEP_MONTHS = 1e-3


def _scheduled(L, R, b, c, schedule: Schedule, t0, growth, per_scenario) -> np.ndarray:
    """:func:`months_to_reach` with a :class:`Schedule`: loads ``L`` (W, S, I) at month 0 of the
    scenario without its multipliers, monthly log-rates ``R`` (W, 1) or (W, S), the rest (S,).

    Until the last knot the peak :math:`f(t) = \\max_j \\sum_w L_{wj} e^{r_w t} \\phi_w(t_0 + t) + B`
    need not be convex (a pool a migration empties falls, then grows), so it is scanned: from
    :math:`t` with :math:`f(t) < c` the next probe is :math:`t + (c - f(t))/M`, :math:`M` a bound on
    :math:`|f'|` over the scan, so no crossing lies before it, and the first probe at or over
    :math:`c` is the first crossing (to rounding; a step lengthened to :data:`SCAN_STEP_MONTHS` is
    bisected); each knot is probed, so a share that jumps there is met where it jumps.  Beyond the
    last knot the multipliers are constant and :math:`f` a sum of
    exponentials again: :func:`months_to_reach` from there.
    """
    w, n, _ = L.shape
    t0 = np.broadcast_to(np.asarray(t0, dtype=float), (n,))
    R = np.broadcast_to(R, (w, n))
    t_end = np.maximum(schedule.last() - t0, 0.0)

    def f(t, idx):
        m = np.exp(R[:, idx] * t[None, :]) * schedule.at(t0[idx] + t)          # (W, k)
        v = L[0][idx] * m[0][:, None]
        for i in range(1, w):
            v = v + L[i][idx] * m[i][:, None]
        return v.max(axis=-1) + b[idx]

    knots = np.unique(np.concatenate([np.asarray(k[0], dtype=float) for k in schedule.knots if k is not None]))
    phi_max, slope = schedule.steepest()
    grow = np.exp(np.maximum(R, 0.0) * t_end[None, :])                        # (W, S)
    M = (L.max(axis=-1) * grow * (np.abs(R) * phi_max[:, None] + slope[:, None])).sum(axis=0)
    total = L.sum(axis=(0, 2))
    out = np.full(n, np.inf)
    now = f(np.zeros(n), np.arange(n))
    out[now >= c] = 0.0
    idx = np.flatnonzero((now < c) & (total > 0))       # no load at all: never
    t, v = np.zeros(idx.size), now[idx]
    todo = np.arange(idx.size)
    while todo.size:
        sub = idx[todo]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):    # a slope bound of 1e-308: no step limit
            h = np.where(M[sub] > 0, (c[sub] - v[todo]) / M[sub], np.inf)
        # never past a knot without landing on it: a share that jumps (a migration of 0 months)
        # jumps there, where the slope bound does not hold
        nxt = knots[np.minimum(np.searchsorted(knots, t0[sub] + t[todo], side="right"), knots.size - 1)] - t0[sub]
        nxt = np.where(nxt > t[todo], nxt, t_end[sub])
        step = np.minimum(np.minimum(t[todo] + np.maximum(h, SCAN_STEP_MONTHS), t_end[sub]), nxt)
        clamped = step > t[todo] + h              # past where no crossing can be: a bracket to bisect
        v_new = f(step, sub)
        up = v_new >= c[sub]
        k = np.flatnonzero(up & clamped)
        if k.size:                            # within one short step: bisected to the tolerance
            a, z = t[todo][k], step[k]
            for _ in range(64):
                mid = 0.5 * (a + z)
                hit = f(mid, sub[k]) >= c[sub[k]]
                a, z = np.where(hit, a, mid), np.where(hit, mid, z)
                if np.all(z - a <= TOLERANCE_MONTHS):
                    break
            out[sub[k]] = z
        fine = np.flatnonzero(up & ~clamped)  # f < c before the step's end: that is the crossing
        out[sub[fine]] = step[fine]
        t[todo], v[todo] = step, v_new
        todo = todo[~up & (step < t_end[sub])]
    rest = idx[~np.isfinite(out[idx])]        # scanned to the last knot without a crossing
    if rest.size:                             # beyond it: constant multipliers, convex again
        te = t_end[rest]
        m_end = np.exp(R[:, rest] * te[None, :]) * schedule.at(t0[rest] + te)
        g = np.asarray(growth, dtype=float)
        tail = months_to_reach(L[:, rest] * m_end[..., None], g[:, rest] if per_scenario else g, b[rest], c[rest])
        out[rest] = te + tail
    return out


def months_to_reach(loads, growth, fixed, capacity, factors=None, schedule: Schedule | None = None) -> np.ndarray:
    """First :math:`t \\in [0, T]` with :math:`\\max_j \\sum_i L_{ij} (1 + g_i)^{t/12} + B \\ge c`.

    Parameters
    ----------
    loads : array_like, shape (W, *S, I)
        Each workload's load in each interval of the day at :math:`t = 0` (servers' worth, >= 0),
        broadcast against ``capacity`` over the middle axes.  Not read when ``factors`` are given.
    growth : array_like, shape (W,) or (W, *S)
        Yearly growth of each workload, fractions in (-1, 10]; one per scenario too (a forecast's
        draws, :mod:`~.forecast`), broadcast against ``capacity``.
    fixed : float or array_like, shape (*S)
        Load that does not grow (MQ MSTR's administration on the processors; other LPARs' work,
        ``other_*_cards``, on a card pool).
    capacity : array_like, shape (*S)
        The load that is the limit (servers x target, less other LPARs' share).
    factors : tuple of array_like, optional
        ``(a, P)``, shapes ``(W, *S)`` and ``(W, I)``: the loads as ``a[..., None] * P`` (a
        plan's are each workload's load per unit of its daily profile times that profile).  The
        same crossing (to rounding), each step's loads ``W`` passes over ``S x I`` instead of
        one over ``W x S x I``.

    Returns
    -------
    ndarray, shape (*S)
        Months (0: at or over it already; ``inf``: not by :data:`~.inputs.MAX_MONTHS`, or
        no load at all).
    """
    r = np.log1p(np.asarray(growth, dtype=float)) / 12.0
    cap = np.asarray(capacity, dtype=float)
    per_scenario = r.ndim > 1           # (W, *S): each scenario its own growth
    if schedule is not None and any(k is not None for k in schedule.knots):
        return _with_schedule(loads, growth, r, fixed, cap, factors, schedule, per_scenario)
    if factors is not None:
        a, P = (np.asarray(x, dtype=float) for x in factors)
        shape = np.broadcast_shapes(cap.shape, a.shape[1:], np.shape(fixed), r.shape[1:])
        w = a.shape[0]
        A = np.broadcast_to(a, (w,) + shape).reshape(w, -1)                 # (W, S)
        total = (A * P.sum(axis=1)[:, None]).sum(axis=0)
        P = P[:, peak_columns(P, A)]      # only the intervals that can be the peak: the same peak, to the bit
    else:
        loads = np.asarray(loads, dtype=float)
        shape = np.broadcast_shapes(cap.shape, loads.shape[1:-1], np.shape(fixed), r.shape[1:])
        w, n_int = loads.shape[0], loads.shape[-1]
        L = np.broadcast_to(loads, (w,) + shape + (n_int,)).reshape(w, -1, n_int)
        if not per_scenario:
            L, r = _combine(L, r)
        total = L.sum(axis=(0, 2))
        LT = np.ascontiguousarray(L.transpose(0, 2, 1))                           # (W, I, S)
    c = np.broadcast_to(cap, shape).reshape(-1)
    b = np.broadcast_to(np.asarray(fixed, dtype=float), shape).reshape(-1)
    if per_scenario:
        R = np.broadcast_to(r, (r.shape[0],) + shape).reshape(r.shape[0], -1)     # (W, S)
        r_max = R.max(axis=0)
    else:
        R, r_max = r[:, None], np.full(c.size, r.max())

    def rates(idx):
        return R[:, idx] if per_scenario else R

    def f(t, idx):
        """(value, slope) of the peak interval's load at months ``t`` for the scenarios ``idx``: every
        interval's load at once, the slope at the peak interval only."""
        # the sums over the workloads run in their order, element by element: a scenario's answer
        # does not depend on which others are evaluated with it (a matrix product's blocking
        # would make it depend on the chunk a sweep hands over)
        # (each interval's loads are a row over the scenarios: the products run along the long axis)
        rc = rates(idx)
        x = np.exp(rc * t[None, :])                               # (W, m) each growth's factor
        pick = np.arange(idx.size)
        if factors is not None:          # (I, m) = sum over w of P_w y_w, no W x I x m array
            y = (A if idx.size == A.shape[1] else A[:, idx]) * x
            v = P[0][:, None] * y[0]
            for i in range(1, y.shape[0]):
                v += P[i][:, None] * y[i]
            j = np.argmax(v, axis=0)
            return v[j, pick] + b[idx], (y * rc * P[:, j]).sum(axis=0)
        Ls = LT if idx.size == LT.shape[2] else LT[:, :, idx]
        v = Ls[0] * x[0]                                           # (I, m) every interval's load
        for i in range(1, Ls.shape[0]):
            v += Ls[i] * x[i]
        j = np.argmax(v, axis=0)
        return v[j, pick] + b[idx], (Ls[:, j, pick] * (x * rc)).sum(axis=0)

    every = np.arange(c.size)
    now, slope_now = f(np.zeros(c.size), every)
    out = np.where(now >= c, 0.0, np.inf)          # no load at all: the fixed part now, or never
    idx = np.flatnonzero((now < c) & (total > 0))
    lo, v_lo = np.zeros(idx.size), now[idx]
    hi, v_hi, d_hi = np.full(idx.size, MAX_MONTHS), np.full(idx.size, np.nan), np.full(idx.size, np.nan)
    cc, bb = c[idx], b[idx]
    # the steps are taken on ln(f - B), the growing part's logarithm, against ln(c - B) (c > f(0) >= B here)
    with np.errstate(divide="ignore"):
        lc = np.log(cc - bb)
    t_lo, t_hi = _bounds(lc, now[idx] - bb, slope_now[idx], r_max[idx])
    # the slowest rate's bound first: where it reaches the capacity, so does T (f is convex and
    # below it at 0); where it does not, f at T says whether the capacity is reached by T at all
    _probe(f, t_hi, idx, lo, v_lo, hi, v_hi, d_hi, cc)
    far = np.flatnonzero(hi == MAX_MONTHS)
    v_hi[far], d_hi[far] = f(np.full(far.size, MAX_MONTHS), idx[far])
    keep = np.flatnonzero(v_hi >= cc)
    idx, lo, v_lo, hi, v_hi, d_hi = idx[keep], lo[keep], v_lo[keep], hi[keep], v_hi[keep], d_hi[keep]
    cc, bb, lc, t_lo = cc[keep], bb[keep], lc[keep], t_lo[keep]
    _probe(f, t_lo, idx, lo, v_lo, hi, v_hi, d_hi, cc)
    todo = np.arange(idx.size)
    for _ in range(200):
        if not todo.size:
            break
        a, b_, fa, fb, db, ct = lo[todo], hi[todo], v_lo[todo], v_hi[todo], d_hi[todo], cc[todo]
        bt, lct = bb[todo], lc[todo]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ga, gb = np.log(fa - bt), np.log(fb - bt)
            newton = b_ - (gb - lct) * (fb - bt) / db     # the tangent at b: never left of the root
            chord = a + (lct - ga) * (b_ - a) / (gb - ga)  # the chord over [a, b]: never right of it
        # (a tangent that lands at or left of a, by rounding where the root is a, probes just right of a)
        newton = np.where(np.isfinite(newton), np.clip(newton, a + 0.5 * TOLERANCE_MONTHS, b_), b_)
        # the chord probes at most just left of the Newton step: where the tangent has reached the root
        # (its value rounds to c), that closes the bracket
        chord = np.where(np.isfinite(chord), np.maximum(np.minimum(chord, newton - 0.5 * TOLERANCE_MONTHS), a), a)
        # a step that gains too little (a flat start) is replaced by the bisection of what is left
        mid = 0.5 * (chord + newton)
        slow = (newton - chord) > 0.5 * (b_ - a)
        probe = np.where(slow, mid, chord)
        sub = idx[todo]
        v_n, d_n = f(newton, sub)
        v_p, d_p = f(probe, sub)
        # (up to rounding a probe can land on the wrong side: then it bounds the other end)
        for t, v, d in ((newton, v_n, d_n), (probe, v_p, d_p)):
            up = v >= ct
            b_, fb, db = np.where(up, np.minimum(t, b_), b_), np.where(up & (t <= b_), v, fb), np.where(
                up & (t <= b_), d, db)
            a, fa = np.where(~up, np.maximum(t, a), a), np.where(~up & (t >= a), v, fa)
        lo[todo], hi[todo], v_lo[todo], v_hi[todo], d_hi[todo] = a, b_, fa, fb, db
        todo = todo[(b_ - a) > TOLERANCE_MONTHS]
    out[idx] = hi
    return out.reshape(shape)


def _with_schedule(loads, growth, r, fixed, cap, factors, schedule, per_scenario) -> np.ndarray:
    """The loads as (W, S, I) and the rest flat over the scenarios, for :func:`_scheduled`."""
    if factors is not None:
        a, P = (np.asarray(x, dtype=float) for x in factors)
        L = a[..., None] * P.reshape((P.shape[0],) + (1,) * (a.ndim - 1) + (P.shape[1],))
    else:
        L = np.asarray(loads, dtype=float)
    shape = np.broadcast_shapes(cap.shape, L.shape[1:-1], np.shape(fixed), r.shape[1:], np.shape(schedule.start))
    w, n_int = L.shape[0], L.shape[-1]
    L = np.broadcast_to(L, (w,) + shape + (n_int,)).reshape(w, -1, n_int)
    c = np.broadcast_to(cap, shape).reshape(-1)
    b = np.broadcast_to(np.asarray(fixed, dtype=float), shape).reshape(-1)
    t0 = np.broadcast_to(np.asarray(schedule.start, dtype=float), shape).reshape(-1)
    if per_scenario:
        R = np.broadcast_to(r, (w,) + shape).reshape(w, -1)
        g = np.broadcast_to(np.asarray(growth, dtype=float), (w,) + shape).reshape(w, -1)
    else:
        R, g = r[:, None], np.asarray(growth, dtype=float)
    return _scheduled(L, R, b, c, schedule, t0, g, per_scenario).reshape(shape)
