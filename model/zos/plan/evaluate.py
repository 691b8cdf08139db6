"""Every workload on the system's shared processors and Crypto Express pools: :func:`plan`.

Loads add per pool; each pool's wait is one M/G/c on the mixture of every workload's requests;
the plan is evaluated in every interval of its busiest day (:mod:`.daily`) and each pool is
judged at its peak interval: counts required now and at the horizon, with one card failed,
headroom, months to target (:mod:`.crossing`) and the purchase timeline (:mod:`.timeline`)
follow (the package documentation has the formulas).
"""

from __future__ import annotations

import dataclasses

import math
from contextlib import nullcontext
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, cached_property, partial

import numpy as np

from ..._numeric import ratio, unique_rows
from ..._text import value_text
from ...domains import GROWTH, MONTHS
from ...params import using_values
from ..stations import count_needed, failover_count_needed, mix_from_moments, pooled_wait
from .crossing import Schedule, months_to_reach, peak_columns, snapped
from .migration import expand_migrations, migrated_name
from .daily import daily_factors, day_intervals, distinct_intervals, interval_label, interval_minutes
from .forecast import forecast_draws
from .inputs import (ARGUMENT, CARD_POOLS, INSTALLABLE, POOLS, RATE_UNITS, PlanError, System, Workload,
                     checked)
from .profiles import workload_profile
from .timeline import plan_warnings, purchase_timeline

__all__ = ["plan", "PlanResult", "ResourceResult", "WorkloadResult", "FailoverResult"]


# ----------------------------------------------------------------------------- results
def _not_given(name: str):
    raise PlanError(f"{name} was not given to this result: it is computed by plan(), which passes how")


def _made(group: str, key: str) -> cached_property:
    """An attribute made when first asked: ``key`` of the dict that the result's ``group`` callable
    returns (the callable makes its dict once, for every attribute of the group)."""
    def get(self):
        make = getattr(self, group)
        if make is None:
            _not_given(key)
        return make()[key]
    get.__doc__ = f"See the class's attributes (made once, when first asked, with the rest of ``{group}``)."
    return cached_property(get)


def _unmade():
    """A group callable's default: none, the result was built without it (its attributes say so,
    :func:`_not_given`)."""
    return field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class FailoverResult:
    """A card pool with one of its cards failed, at its peak interval (arrays like the scenarios).

    Attributes
    ----------
    utilization : the remaining cards' utilization: this LPAR's load and other LPARs' share of
        every card spread over :math:`k - 1` cards, :math:`(L + u_o k)/(k - 1)` (inf: the only
        card failed and work is sent to the pool; 0: no load).
    required : the fewest cards that keep it within ``failover_max_utilization`` with one out:
        :math:`\\max(2, \\lceil (L + F)/(F - u_o) \\rceil)` where there is load, else 0.
    required_at_horizon : the same at the horizon.  Computed when first asked, with the pool's
        own (:attr:`ResourceResult.required_at_horizon`).
    months_to_limit : months until the workloads' growth brings the installed cards, one out,
        to the limit (0: over it now; inf: never within :data:`MAX_MONTHS`).  Computed when
        first asked (a root per scenario, which a sweep of the counts never reads).
    status : one sentence per scenario ("if one coprocessor fails, the other 1 runs at 106%:
        overloaded").  Made when first asked (a sweep of the numbers never reads them).
    """

    utilization: object
    required: object
    statuses: Callable[[], object] = field(default=lambda: _not_given("status"), repr=False, compare=False)
    months: Callable[[], object] = field(default=lambda: _not_given("months_to_limit"), repr=False, compare=False)
    horizon: Callable[[], dict] | None = _unmade()

    required_at_horizon = _made("horizon", "failover_required_at_horizon")

    @cached_property
    def months_to_limit(self):
        """See the class's attributes (computed once, when first asked)."""
        return self.months()

    @cached_property
    def status(self):
        """See the class's attributes (made once, when first asked)."""
        return self.statuses()


@dataclass(frozen=True)
class ResourceResult:
    """One pool at the planned rates, judged at its peak interval (arrays shaped like the
    scenarios; floats for one).

    Attributes
    ----------
    installed : servers (processors or cards).
    utilization : RMF's summary utilization per server in the pool's peak interval of the busiest
        day, other LPARs included (fraction; may exceed 1, see ``overloaded``; inf when the pool
        has no servers and gets work).  Without daily profiles and a peak-day factor of 1 this is
        the daily average.
    peak_interval : the start of that interval, ``"HH:MM"`` (``"00:00"``: the plan has one
        interval, the whole day).
    average_utilization : the average day's 24-hour average utilization (no peak-day factor).
    busy : servers' worth of this LPAR's work in the peak interval (CPU seconds per second, or
        cards' worth).
    by_workload : workload name -> its share of the utilization in the peak interval.
    other : the share other LPARs keep busy (cards: their share per card, or their work that stays
        when cards are added over the installed cards; with no card installed, the share alone) or
        work that follows no rate (processors: MSTR administration), a fraction of the pool.
    rate : requests per second this LPAR sends (cards), or jobs per second (processors), at the peak.
    exec_ms : mean service time per request or job (ms): RMF's average EXEC TIME for cards.
    scv : squared coefficient of variation of that service time (the pooled mix).
    wait_ms : mean queueing per request or job at the peak (ms); NaN where ``overloaded``.
    required : smallest count keeping utilization <= the target in every interval (and the wait
        within ``max_wait_ms`` if given).  A float: above :data:`~.inputs.INSTALLABLE` it is no
        count to order (see ``status``).
    headroom : common growth factor of every rate that brings the peak to its target (inf: no
        load grows on it; below 1: over target now).
    months_to_target : months until the workloads' yearly growth brings the peak interval to the
        target with every installed server (0: at or over it now; inf: not within
        :data:`MAX_MONTHS`).
    required_at_horizon : the count required at the system's ``horizon_months``.
    utilization_at_horizon : the peak interval's utilization at the horizon with the servers
        installed now (inf: none installed and work sent).
    overloaded : utilization >= 1 (the rate cannot be carried).
    failover : card pools with the system's ``failover = "one_card"``: :class:`FailoverResult`;
        else None.
    msu : processors with the system's ``msu_per_processor``: the peak's demand in MSU; else None.
    rows, row_rates : accelerators only: RMF's by-function rows ``{"ME", "CRT", "other"}`` -> utilization
        and requests per second
    row_shares : accelerators only: ``{"ME", "CRT"}`` -> workload name -> its part of that row
        (``other``: card time of handshakes, channel starts and measured requests, whose function no
        published figure names).
    status : one sentence per scenario: within target, over target, or overloaded and by how much.
        Made when first asked (a sweep of the numbers never reads them).

    ``by_workload``, the peak's mix and wait (``rate``, ``exec_ms``, ``scv``, ``wait_ms``, ``rows``,
    ``row_rates``, ``row_shares``) and the horizon's answers (``required_at_horizon``,
    ``utilization_at_horizon``) are computed when first asked, each group at once: a sweep of the
    utilizations and counts reads none of them (a fifth of a sweep's time with draws, issue 66).
    """

    installed: int
    utilization: object
    peak_interval: object
    average_utilization: object
    busy: object
    other: object
    required: object
    headroom: object
    months_to_target: object
    overloaded: object
    failover: FailoverResult | None
    msu: object
    statuses: Callable[[], object] = field(default=lambda: _not_given("status"), repr=False, compare=False)
    shares: Callable[[], dict] | None = _unmade()
    at_peak: Callable[[], dict] | None = _unmade()
    horizon: Callable[[], dict] | None = _unmade()

    by_workload = _made("shares", "by_workload")
    rate = _made("at_peak", "rate")
    exec_ms = _made("at_peak", "exec_ms")
    scv = _made("at_peak", "scv")
    wait_ms = _made("at_peak", "wait_ms")
    rows = _made("at_peak", "rows")
    row_rates = _made("at_peak", "row_rates")
    row_shares = _made("at_peak", "row_shares")
    required_at_horizon = _made("horizon", "required_at_horizon")
    utilization_at_horizon = _made("horizon", "utilization_at_horizon")

    @cached_property
    def status(self):
        """See the class's attributes (made once, when first asked)."""
        return self.statuses()


@dataclass(frozen=True)
class WorkloadResult:
    """One workload at the planned rates.

    Attributes
    ----------
    kind, unit : the kind and what its rate counts.
    rate : the rate at the scenario (growth and months applied): the average day's average, or,
        for a workload in a window, the rate while it runs.
    peak_rate : its highest rate in any interval of the busiest day (profile, peak-day and site
        factors applied).
    meaning : the rate in words a planner checks ("300 request/reply transactions/s = 600
        messages put and got").
    cpu_us : CPU µs per unit by address space, and ``"total"``; an AMS workload's ``"MSTR"`` is its
        queue manager's administration per second spread over that queue manager's AMS rate.
    requests : card pool -> requests per unit.
    card_ms : card pool -> card time (EXEC TIME) per unit, ms.
    queueing_ms : queueing delay per unit in the worst interval of the day (processor wait + each
        pool's wait x its requests), ms; NaN where a pool it uses is overloaded.  Computed when
        first asked (it needs every pool's wait in every interval, which nothing else does).
    processors_busy : processors' worth of its CPU in the processors' peak interval.
    site_failover : its rate carries the system's ``site_failover_factor``.
    peak_day : its rate carries the system's ``peak_day_factor`` (false: a storm, a fixed feed).
    """

    kind: str
    unit: str
    rate: object
    peak_rate: object
    meaning: object
    cpu_us: dict
    requests: dict
    card_ms: dict
    processors_busy: object
    site_failover: bool = False
    peak_day: bool = True
    queueing: Callable[[], object] = field(default=lambda: _not_given("queueing_ms"), repr=False, compare=False)

    @cached_property
    def queueing_ms(self):
        """See the class's attributes (computed once, when first asked)."""
        return self.queueing()


@dataclass(frozen=True)
class PlanResult:
    """A plan's answers: ``resources`` (pool -> :class:`ResourceResult`), ``workloads`` (name ->
    :class:`WorkloadResult`), ``bottleneck`` (the busiest pool) and ``binds_first`` (the pool whose
    target the workloads' growth reaches first), for ``system`` at ``growth`` and ``months``;
    ``intervals`` of the day it was evaluated in, the purchase ``timeline`` (a list of
    :class:`~.timeline.Purchase`; None for arrays of scenarios) and ``warnings`` (sentences; made
    when first asked: they read the horizon's counts, which a sweep of the numbers never asks).
    With quantum-safe migrations, ``schedule`` (:class:`~.crossing.Schedule`) holds each
    workload's share over the months and ``growth_loads`` each pool's loads without it (as
    :func:`plan_with_loads`' loads, which hold the shares at the scenario): what a crossing
    computed beside the plan (bands, the growth chart) grows; both None otherwise."""

    system: System
    resources: dict
    workloads: dict
    bottleneck: str | np.ndarray            # a pool's name; an array of them for arrays of scenarios
    binds_first: str | np.ndarray
    growth: object
    months: object
    intervals: int = 1
    timeline: list | None = None
    warned: Callable[[], tuple] = field(default=tuple, repr=False, compare=False)
    schedule: object = field(default=None, repr=False, compare=False)
    growth_loads: dict | None = field(default=None, repr=False, compare=False)

    @cached_property
    def warnings(self) -> tuple:
        """See the class's description (made once, when first asked)."""
        return self.warned()

    def scenario(self) -> dict:
        """What the answers are for: growth, months, the day's intervals, failover, lead time."""
        s = self.system
        return {"growth": _num(self.growth), "months": _num(self.months), "intervals": self.intervals,
                "interval_minutes": interval_minutes(self.intervals), "peak_day_factor": s.peak_day_factor,
                "failover": s.failover, "failover_max_utilization": s.failover_max_utilization,
                "site_failover_factor": s.site_failover_factor, "lead_time_months": s.lead_time_months,
                "horizon_months": s.horizon_months, "max_utilization": s.max_utilization,
                "other_lpars": s.other_reading()}

    def to_dict(self) -> dict:
        """JSON-ready: numbers as floats or lists, inf and NaN as None (each pool's ``status`` says
        why); a count beyond what can be installed as the text ``"more than N"``."""
        res = {}
        for pool, r in self.resources.items():
            d = {k: _num(getattr(r, k)) for k in ("utilization", "busy", "other", "rate", "exec_ms", "scv", "wait_ms",
                                                  "headroom", "months_to_target", "utilization_at_horizon")}
            d["required"] = _count(r.required, pool)
            d["required_at_horizon"] = _count(r.required_at_horizon, pool)
            d["installed"] = r.installed
            d["peak"] = {"interval": np.asarray(r.peak_interval).tolist(), "utilization": _num(r.utilization),
                         "average_utilization": _num(r.average_utilization)}
            if r.failover is not None:
                f = r.failover
                d["one_card_failed"] = {"utilization": _num(f.utilization), "required": _count(f.required, pool),
                                        "required_at_horizon": _count(f.required_at_horizon, pool),
                                        "months_to_limit": _num(f.months_to_limit),
                                        "status": np.asarray(f.status).tolist()}
            if r.msu is not None:
                d["msu"] = _num(r.msu)
            d["overloaded"] = np.asarray(r.overloaded).tolist()
            d["by_workload"] = {n: _num(v) for n, v in r.by_workload.items()}
            d["status"] = np.asarray(r.status).tolist()
            if r.rows:
                d["rows"] = {n: _num(v) for n, v in r.rows.items()}
                d["row_rates"] = {n: _num(v) for n, v in r.row_rates.items()}
                d["row_shares"] = {row: {n: _num(v) for n, v in by.items()} for row, by in r.row_shares.items()}
            res[pool] = d
        wl = {}
        for name, w in self.workloads.items():
            wl[name] = {"kind": w.kind, "unit": w.unit, "rate": _num(w.rate), "peak_rate": _num(w.peak_rate),
                        "meaning": np.asarray(w.meaning).tolist(),
                        "cpu_us": {k: _num(v) for k, v in w.cpu_us.items()},
                        "requests": {k: _num(v) for k, v in w.requests.items()},
                        "card_ms": {k: _num(v) for k, v in w.card_ms.items()},
                        "queueing_ms": _num(w.queueing_ms), "processors_busy": _num(w.processors_busy),
                        "site_failover": w.site_failover, "peak_day": w.peak_day}
        system = {k: getattr(self.system, k) for k in self.system.__dataclass_fields__}
        system["orders"] = [{"resource": o.resource, "count": o.count, "month": o.month} for o in self.system.orders]
        system["migrations"] = [dataclasses.asdict(m) for m in self.system.migrations]
        return {"system": system,
                "scenario": self.scenario(), "growth": _num(self.growth), "months": _num(self.months),
                "bottleneck": np.asarray(self.bottleneck).tolist(),
                "binds_first": np.asarray(self.binds_first).tolist(),
                "resources": res, "workloads": wl,
                "timeline": None if self.timeline is None else [p.to_dict(self.system.start) for p in self.timeline],
                "warnings": list(self.warnings)}


def _num(x):
    a = np.asarray(x)
    if a.dtype.kind in "US":
        return a.tolist()
    a = a.astype(float)
    out = np.where(np.isfinite(a), a, np.nan).tolist()
    return (None if math.isnan(out) else out) if a.ndim == 0 else _nan_to_none(out)


def count_text(n, pool: str):
    """A count required as a planner reads it: a whole number, or ``"more than N"`` beyond what an
    LPAR can have of that pool (:data:`~.inputs.INSTALLABLE`)."""
    n = float(n)
    return int(n) if n <= INSTALLABLE[pool] else f"more than {INSTALLABLE[pool]}"


def _count(x, pool: str):
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        return count_text(a, pool)
    return np.vectorize(lambda v: count_text(v, pool), otypes=[object])(a).tolist()


def _nan_to_none(x):
    if isinstance(x, list):
        return [_nan_to_none(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


# ----------------------------------------------------------------------------- the plan
def _per_unit(values, shape) -> np.ndarray:
    """The workloads' per-unit numbers as ``(W, *shape)``: each a float, or the array of its parameter
    draws, which is the scenarios' last axis (:func:`plan`'s ``draws``)."""
    return np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in values])


def _moment(n, t, power: int = 1):
    """:math:`\\sum_f n_f t_f^p` over a pool's request classes (function axis first; either may
    carry the draws axis after it)."""
    n, t = np.asarray(n, dtype=float), np.asarray(t, dtype=float)
    nd = max(n.ndim, t.ndim)
    n, t = n.reshape(n.shape + (1,) * (nd - n.ndim)), t.reshape(t.shape + (1,) * (nd - t.ndim))
    out = (n * t ** power).sum(axis=0)
    return float(out) if out.ndim == 0 else out


def _out(x):
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


def _meet_wait(k0, r, m1, scv, unknown, other, target_ms):
    """Smallest counts k >= k0 whose M/G/c wait per request is at most ``target_ms``.

    ``k0`` already meets the utilization target (below 1), so every queue here is stable; each
    round adds a card where the wait is still over the target, all scenarios at once (a few
    rounds: the wait falls fast with c).  Other LPARs' share (``other``) is per card, so their
    requests grow with k (at the pool's mean service time); their work (``other_*_cards``) is in
    ``unknown``, cards' worth that stays whatever k.
    """
    k = np.array(k0, dtype=float, copy=True)
    busy = (r > 0) & (m1 > 0) & np.isfinite(k)
    for _ in range(10_000):
        todo = busy & (k >= 1)
        if not todo.any():
            break
        kk = k[todo]
        w = pooled_wait(r[todo], m1[todo] / 1000.0, scv[todo], kk, other, unknown[todo]) * 1000.0
        over = np.zeros_like(busy)
        over[todo] = w > target_ms
        if not over.any():
            break
        k[over] += 1.0
        busy = over
    return k


def _own(counts, own, pool):
    """A card pool's ``counts`` where this LPAR sends it work (``own`` > 0), else 0: other LPARs'
    work alone needs none of this LPAR's cards (the processors' load that does not grow is this
    LPAR's own, MSTR's: counted)."""
    return counts if pool == "processors" else np.where(np.asarray(own) > 0, counts, 0.0)


def _peak(x, idx):
    """``x`` (..., I) at each scenario's peak interval ``idx`` (...)."""
    x = np.broadcast_to(np.asarray(x), idx.shape + (np.shape(x)[-1],))
    return np.take_along_axis(x, idx[..., None], axis=-1)[..., 0]


def _share(load, k: int):
    """A load (servers' worth) as utilization of ``k`` servers; with none, infinite where there is load."""
    return load / k if k > 0 else np.where(load > 0, np.inf, 0.0)


def _at_peak(x, idx):
    """``x`` (W, *S, J) at each scenario's peak interval ``idx`` (*S): (W, *S, 1)."""
    x = np.asarray(x)
    sel = np.broadcast_to(idx[..., None], x.shape[1:-1] + (1,))
    return np.take_along_axis(x, np.broadcast_to(sel, (x.shape[0],) + sel.shape), axis=-1)


def _status(pool, util, target, installed, required):
    """One sentence per scenario (the planner reads these before any number), each distinct one made once."""
    u, k, req = (np.asarray(a, dtype=float).ravel() for a in np.broadcast_arrays(util, installed, required))
    with np.errstate(invalid="ignore"):
        # 4: this LPAR sends the pool nothing (no count needed) and other LPARs' work keeps it busy
        cat = np.select([(k == 0) & (req > 0), (req == 0) & (k > 0) & (u > 0), u >= 1.0, u > target], [0, 4, 1, 2], 3)
        pct = np.where(np.isfinite(u) & (u < 100.0), np.round(u * 100.0), -1.0)
    req = np.minimum(req, INSTALLABLE[pool] + 1.0)       # beyond: one sentence, "more than N"
    keys, _, inv = unique_rows(np.column_stack([cat, pct, k, req]))
    goal = f"{100 * target:.0f}%"

    def text(c, p, kk, n):
        busy = f"{p:.0f}% busy" if p >= 0 else "more than 100 times as busy as it can be"
        need = count_text(n, pool)
        return (f"{pool}: none installed and work sent to them: {need} needed" if c == 0 else
                f"{pool}: overloaded, {busy} with {kk:.0f}: the rate cannot be carried; {need} needed for the "
                f"{goal} target" if c == 1 else
                f"{pool}: {busy}, over the {goal} target: {need} needed" if c == 2 else
                f"{pool}: {busy} with other LPARs' work alone; this LPAR sends them nothing" if c == 4 else
                f"{pool}: {busy}, within the {goal} target")
    texts = np.array([text(*row) for row in keys], dtype=object)
    out = texts[inv].reshape(np.shape(util))
    return out.item() if out.ndim == 0 else out


def _failover_status(pool, util, limit, installed, required):
    """One sentence per scenario on a card pool with one card failed."""
    one = CARD_POOLS[pool]
    u, req = (np.asarray(a, dtype=float).ravel() for a in np.broadcast_arrays(util, required))
    k = installed
    with np.errstate(invalid="ignore"):
        cat = np.select([req == 0, k <= 1, u >= 1.0, u > limit], [0, 1, 2, 3], 4)
        pct = np.where(np.isfinite(u) & (u < 100.0), np.round(u * 100.0), -1.0)
    req = np.minimum(req, INSTALLABLE[pool] + 1.0)
    keys, _, inv = unique_rows(np.column_stack([cat, pct, req]))
    lim = f"{100 * limit:.0f}%"
    rest = f"the other {k - 1}" if k > 2 else "the other one"

    def text(c, p, n):
        need = count_text(n, pool)
        p = f"{p:.0f}%" if p >= 0 else "more than 100 times its capacity"
        return (f"if one {one} fails: no work of this LPAR on the {pool}" if c == 0 else
                f"if {'the only' if k == 1 else 'a'} {one} fails, none is left: {need} needed to survive one "
                "failing" if c == 1 else
                f"if one {one} fails, {rest} run{'s' if k == 2 else ''} at {p}: overloaded; {need} needed "
                f"to stay within {lim}" if c == 2 else
                f"if one {one} fails, {rest} run{'s' if k == 2 else ''} at {p}, over the {lim} failover "
                f"limit: {need} needed" if c == 3 else
                f"if one {one} fails, {rest} run{'s' if k == 2 else ''} at {p}, within the {lim} failover "
                "limit")
    texts = np.array([text(*row) for row in keys], dtype=object)
    out = texts[inv].reshape(np.shape(util))
    return out.item() if out.ndim == 0 else out


def plan(system: System, workloads, growth=1.0, months=0.0, draws=None) -> PlanResult:
    """Every workload on the system's shared processors and Crypto Express pools.

    Parameters
    ----------
    system : System
    workloads : sequence of Workload
        Names unique.  Rates may be arrays (scenarios); they broadcast with ``growth`` and ``months``.
    growth : float or array_like
        A factor on every rate (a capacity curve), >= 0.
    months : float or array_like
        Months ahead, 0..1200: each rate times :math:`(1 + g_i)^{t/12}`.
    draws : dict, optional
        ``D`` sets of the model's parameters, name -> array of shape ``(D,)``
        (:func:`cryptoplan.model.calibration.draws.parameter_draws`).  The workloads' per-unit costs are
        evaluated under every set at once and the draws become the scenarios' last axis: every
        answer is shaped ``(*S, D)`` (:func:`cryptoplan.model.zos.plan.plan_bands` summarises them).

    Returns
    -------
    PlanResult
        Each pool judged at the peak interval of the busiest day (see the module documentation
        for the formulas).  Never raises for an overloaded resource: its ``status`` and
        ``overloaded`` say so and ``required`` gives the count that carries it.  The purchase
        timeline is computed for one scenario (scalar rates, growth and months, no draws) only.

    Raises
    ------
    PlanError
        For a bad argument, naming the workload (or system), the key, the value and the range.

    Examples
    --------
    >>> s = System(processors=4, coprocessors=2, accelerators=1)
    >>> r = plan(s, [Workload("payments", "ams", 300, args={"policy": "privacy", "message_kb": 2})])
    >>> r.resources["accelerators"].required >= 1
    True
    """
    return plan_with_loads(system, workloads, growth, months, draws)[0]


def plan_with_loads(system: System, workloads, growth=1.0, months=0.0, draws=None, forecast=None) -> tuple:
    """:func:`plan`, and what its timeline is computed from: ``(result, loads, fixed, yearly)``, pool ->
    each workload's load in each distinct interval of the busiest day (servers' worth, ``(W, *S, J)``:
    intervals with the same factors are one, :func:`~.daily.distinct_intervals`), pool -> the load
    that does not grow (``(*S)``), and each workload's yearly growth ``(W,)`` (``(W, 1, ..., D)`` where
    a growth range is drawn).  ``forecast``: the ``(rate factors, growths)`` of
    :func:`~.forecast.forecast_draws` for these draws (a slice of a larger set's, as
    :func:`~.bands.plan_bands` plans its draws a chunk at a time); None: drawn here.

    The plan is evaluated in each distinct interval once: the answers are those of every interval
    evaluated, to the bit (the peak is the first interval holding the maximum), but for the day's
    average, each distinct interval weighted by the intervals it stands for (the same to rounding,
    1e-15)."""
    if not isinstance(system, System):
        raise PlanError(f"system must be a System (got {value_text(system)})")
    workloads = _workload_list(workloads)
    g = np.asarray(checked(GROWTH, growth, ARGUMENT, "growth", scalar=False), dtype=float)
    t = np.asarray(checked(MONTHS, months, ARGUMENT, "months", scalar=False), dtype=float)
    n_draws = _draw_count(draws)
    with using_values(draws) if n_draws else nullcontext():
        profiles = [workload_profile(w, system) for w in workloads]
        # a migration's moved part is a workload of its own, its share over the months a multiplier
        planned, (workloads, profiles, knots, origin) = workloads, expand_migrations(system, workloads, profiles)
    scheduled = any(k is not None for k in knots)
    yearly = np.array([w.growth_per_year for w in workloads], dtype=float)
    base = [np.asarray(1.0 if p.util_form else w.rate, dtype=float) for w, p in zip(workloads, profiles)]
    drawn_growth = None
    if n_draws:     # the draws: a last scenario axis the per-unit costs (shape (D,)) broadcast along
        g, t, base = g[..., None], t[..., None], [b[..., None] for b in base]
        # a forecast's ranges are drawn with the parameters: each draw its rates and growth
        rate_factor, drawn_growth = forecast_draws(planned, n_draws) if forecast is None else forecast
        # (a moved part draws what its workload draws: the forecast is the workload's)
        rate_factor = None if rate_factor is None else np.asarray(rate_factor)[origin]
        drawn_growth = None if drawn_growth is None else np.asarray(drawn_growth)[origin]
        if rate_factor is not None:
            base = [b * f for b, f in zip(base, rate_factor)]
    try:
        shape = np.broadcast_shapes(g.shape, t.shape, *(b.shape for b in base), (n_draws,) if n_draws else (),
                                    *_profile_shapes(profiles))
    except ValueError:
        raise PlanError("the rates, growth and months are arrays of shapes that do not broadcast: "
                        + ", ".join(str(np.shape(b)) for b in (g, t, *base))) from None
    if drawn_growth is not None:
        # (W, 1, ..., 1, D): each workload's growth per draw, the draws the scenarios' last axis
        yearly = np.asarray(drawn_growth, dtype=float).reshape((len(workloads),) + (1,) * (len(shape) - 1)
                                                               + (n_draws,))
    names = [w.name for w in workloads]
    n_int = day_intervals(workloads)
    site = np.array([system.site_failover_factor if w.site_failover else 1.0 for w in workloads])
    day = daily_factors(workloads, n_int) * site[:, None]                          # (W, I), average day
    day_at = distinct_intervals(day)                                               # (first, inverse)
    day = day[:, day_at[0]]                                                        # (W, J), J <= I
    # the busiest day's factor on each workload (1 for one that opts out: a storm, a fixed feed)
    peak_day = np.array([system.peak_day_factor if w.peak_day else 1.0 for w in workloads])
    busiest = (day * peak_day[:, None]).reshape((len(workloads),) + (1,) * len(shape) + (day.shape[1],))

    def rates_at(months_ahead, shares=True):
        # (W, *shape): each workload's rate as given; a measured utilization grows like a rate of 1;
        # a migration's parts times their shares at that month (shares=False: without, as the
        # crossings take them, with the schedule beside; a month within a few ulps of a knot the
        # knot's, as the schedule reads it: Schedule.at)
        return np.stack([np.broadcast_to(b * g * np.power(1.0 + yg, months_ahead / 12.0)  # as crypto.function_ms
                                         * (np.interp(snapped(np.asarray(months_ahead, dtype=float), k[0]), *k)
                                            if shares and k is not None else 1.0), shape)
                         for b, yg, k in zip(base, yearly, knots)])

    lam_avg = rates_at(t)
    n_moved = len(system.migrations)
    pairs = tuple((origin[len(knots) - n_moved + j], len(knots) - n_moved + j) for j in range(n_moved))
    schedule = Schedule(knots, t, pairs) if scheduled else None
    lam_free = rates_at(t, shares=False) if scheduled else lam_avg
    # (W, *S, I), the intervals outermost in memory: every array made from it (the loads, the
    # utilizations) runs along the scenarios, not along a handful of intervals (1.4x the plan)
    lam = np.moveaxis(lam_avg[:, None] * np.moveaxis(busiest, -1, 1), 1, -1)
    rates_h = rates_at(t + system.horizon_months)                                   # (W, *S)

    # ---- processors: CPU per unit, MSTR administration once per queue manager
    cpu_unit = _per_unit([sum(p.cpu_us.values()) for p in profiles], shape)         # (W, *S) µs per unit
    admin: dict = {}                                                              # queue manager -> µs/s
    for p in profiles:
        if p.queue_manager is not None:
            admin[p.queue_manager] = np.maximum(admin.get(p.queue_manager, 0.0), p.mstr_per_s)
    fixed_cpu = np.broadcast_to(sum(admin.values(), np.zeros(())) / 1e6, shape)  # (*S) processors' worth
    pools = {"processors": _pool_cpu(system, cpu_unit, fixed_cpu)}
    for pool in CARD_POOLS:
        pools[pool] = _pool_card(system, pool, profiles, names, shape)
    for d in pools.values():          # each interval's load and utilization; the rest at the peak
        d["loads"] = d["loads_at"](lam)                                            # (W, *S, J)
        d["util"] = d["util_of"](d["loads"])                                       # (*S, J)
    cpu_load = pools["processors"]["loads"]
    # each pool's loads are each workload's load per unit of its day profile times the profile:
    # what months_to_reach's root finder evaluates as one matrix product
    day_profile = busiest.reshape(day.shape)
    pools["processors"]["factors"] = (lam_free * cpu_unit / 1e6, day_profile)
    for pool in CARD_POOLS:
        pools[pool]["factors"] = (lam_free * pools[pool]["unit_load"], day_profile)

    resources, peaks = {}, {}
    for pool, d in pools.items():
        resources[pool], peaks[pool] = _resource(system, pool, d, names, yearly, lam, rates_h, busiest, shape,
                                                 day_at, n_int, peak_day, schedule)

    stations = {p: pools[p]["station"] for p in POOLS}
    wl = _workload_results(workloads, profiles, lam_avg, lam, busiest, admin, cpu_unit, cpu_load, stations, peaks,
                           shape)
    for m in system.migrations:       # a migrated part says whose it is and how much has moved
        part, share = migrated_name(m), m.at(t)
        moved = f"{float(share):.0%}" if np.ndim(share) == 0 else "a share"
        wl[part] = dataclasses.replace(wl[part], meaning=f"the part of {m.workload} moved to {m.to} ({moved} of it at "
                                                         f"this month): {wl[part].meaning}")

    bottleneck, binds = _verdicts(resources, shape)
    loads, fixed = {p: pools[p]["loads"] for p in POOLS}, {p: pools[p]["fixed"] for p in POOLS}
    timeline = None
    grows = None if not scheduled else {
        p: pools[p]["loads_at"](np.moveaxis(lam_free[:, None] * np.moveaxis(busiest, -1, 1), 1, -1)) for p in POOLS}
    if shape == ():
        timeline = purchase_timeline(system, grows or loads, yearly, fixed, resources, schedule)
    result = PlanResult(system=system, resources=resources, workloads=wl, bottleneck=bottleneck,
                        binds_first=binds, growth=_out(g), months=_out(t), intervals=n_int, timeline=timeline,
                        warned=plan_warnings(system, workloads, profiles, wl, resources, timeline),
                        schedule=schedule, growth_loads=grows)
    return result, loads, fixed, yearly


def _profile_shapes(profiles) -> list:
    """The shapes of the profiles' per-unit numbers: () for floats; ``(k,)`` where the parameters in
    force are arrays of ``k`` values given to :func:`~cryptoplan.model.params.using_values` by the
    caller (one parameter set per scenario, the scenarios' own axis; :func:`plan`'s ``draws`` put
    them on an axis of their own instead)."""
    out = []
    for p in profiles:
        out += [np.shape(v) for v in (*p.cpu_us.values(), *p.busy.values(), p.mstr_per_s)]
        out += [np.shape(c[j])[1:] for c in p.classes.values() for j in (0, 1)]
    return out


def _draw_count(draws) -> int:
    """``D`` of a ``draws`` dict of 1-D arrays of one length (0: no draws), or a PlanError."""
    if draws is None:
        return 0
    if not isinstance(draws, dict) or not draws:
        raise PlanError(f"draws must be a dict of parameter name -> array of draws (got {value_text(draws)})")
    sizes = {np.shape(v) for v in draws.values()}
    if len(sizes) != 1 or len(next(iter(sizes))) != 1 or next(iter(sizes))[0] < 1:
        raise PlanError("draws must give every parameter a 1-D array of the same length (got shapes "
                        f"{', '.join(sorted(str(z) for z in sizes))})")
    return next(iter(sizes))[0]


def _workload_list(workloads) -> list:
    """The workloads as a list of uniquely named :class:`Workload`, or a PlanError naming the problem."""
    if isinstance(workloads, Workload):
        workloads = [workloads]
    try:
        workloads = list(workloads)
    except TypeError:
        raise PlanError(f"workloads must be a sequence of Workload (got {value_text(workloads)})") from None
    if not workloads:
        raise PlanError("a plan needs at least one workload")
    seen = set()
    for w in workloads:
        if not isinstance(w, Workload):
            raise PlanError(f"workloads must hold Workload objects (got {value_text(w)})")
        if w.name in seen:
            raise PlanError(f"workload {w.name!r}: the name is used twice; names must be unique")
        seen.add(w.name)
    return workloads


def _resource(system, pool, d, names, yearly, lam, rates_h, busiest, shape, day_at, n_int, peak_day,
              schedule=None) -> tuple:
    """One pool's answers from its station ``d`` (:func:`_pool_cpu` / :func:`_pool_card`), judged at its
    peak interval: utilization, shares, counts required now and at the horizon (utilization and wait
    targets, one card failed), headroom, months.  ``d``'s intervals are the day's distinct ones,
    ``day_at`` = ``(first, inverse)`` of :func:`~.daily.distinct_intervals` of a day of ``n_int``;
    the horizon's rates are ``rates_h`` (W, *S) times ``busiest``, the day's factors; ``peak_day``
    (W,) each workload's busiest-day factor (the average day's load is its load over it).
    Returns the result and the peak's index among the distinct intervals."""
    target = system.max_utilization
    k = system.installed(pool)
    other = system.other(pool)
    fixed = d["fixed"]
    var_all = d["loads"].sum(axis=0)                                   # (*S, I)
    util_all = d["util"]
    with np.errstate(invalid="ignore"):
        idx = np.argmax(np.where(np.isnan(util_all), np.inf, util_all) if k else var_all, axis=-1)
    var = _peak(var_all, idx)
    # (each closure below keeps what it needs and no per-interval array: a plan kept for later
    # holds arrays of the scenarios' shape only)
    lam_peak, station = _at_peak(lam, idx), d["station"]
    loads_at, mix_of, unit = d["loads_at"], d.get("mix"), d["factors"][0]     # (no mix: the processors)
    # a load too small for its factor to be a float (subnormal rates) has unbounded headroom
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = (target - other) * k - fixed
        headroom = ratio(np.maximum(room, 0.0), var, fill=np.inf)
        util = _peak(util_all, idx)
        # over every interval of the day: each distinct one times the intervals it stands for
        counts = np.bincount(day_at[1], minlength=day_at[0].size).astype(float)
        # (a C-ordered product: the sum over the intervals in numpy's pairwise order, whatever the
        # layout of the loads; the same bits as a plan of one scenario)
        if np.all(peak_day == system.peak_day_factor):
            avg = np.multiply(var_all, counts, order="C").sum(axis=-1) / n_int / system.peak_day_factor + fixed
        else:                       # each workload's busiest-day factor off its own load
            day_loads = (d["loads"] / peak_day.reshape((-1,) + (1,) * (d["loads"].ndim - 1))).sum(axis=0)
            avg = np.multiply(day_loads, counts, order="C").sum(axis=-1) / n_int + fixed
        avg_util = np.where(k > 0, avg / max(k, 1) + other, np.where(avg > 0, np.inf, 0.0))
    if k == 0:
        headroom = np.where(var > 0, 0.0, np.inf)
    months_to = months_to_reach(d["loads"], yearly, fixed, np.broadcast_to((target - other) * k, shape),
                                factors=d["factors"], schedule=schedule)
    if pool != "processors":      # other LPARs' work alone does not grow: no month this LPAR's growth reaches
        months_to = np.where(_has_load(var_all, d["factors"], schedule, shape), months_to, np.inf)
    required = _own(count_needed(var_all + fixed[..., None], other, target), var_all, pool)
    waits = pool in CARD_POOLS and system.max_wait_ms is not None
    if waits:
        # (requests/s, mean EXEC ms, SCV, cards' worth with no request count): _pool_card's mix
        mix: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = mix_of(lam)
        required = _meet_wait(required, *mix, other, system.max_wait_ms)
    required = required.max(axis=-1)
    overloaded = util >= 1.0
    failover = None
    one_out = pool in CARD_POOLS and system.failover == "one_card"

    @cache
    def horizon() -> dict:
        """The counts and the utilization at the horizon (and with one card failed)."""
        # only the peak load and counts are asked: each is monotone in the loads, so the intervals
        # that can hold the peak give them to the bit (crossing.peak_candidates)
        some = peak_columns(busiest.reshape(busiest.shape[0], -1), rates_h, unit)
        loads_h = loads_at(rates_h[..., None] * busiest[..., some]).sum(axis=0)   # (*S, C)
        with np.errstate(divide="ignore", invalid="ignore"):
            peak_h = (loads_h + fixed[..., None]).max(axis=-1)
            util_h = peak_h / k + other if k else np.where(peak_h > 0, np.inf, 0.0)
        required_h = _own(count_needed(loads_h + fixed[..., None], other, target), loads_h, pool)
        if waits:           # the waits are not monotone: every interval
            lam_h = rates_h[..., None] * busiest
            own_h = loads_at(lam_h).sum(axis=0)
            mix_h: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = mix_of(lam_h)
            required_h = _meet_wait(_own(count_needed(own_h + fixed[..., None], other, target), own_h, pool),
                                    *mix_h, other, system.max_wait_ms)
        out = {"required_at_horizon": _out(required_h.max(axis=-1)), "utilization_at_horizon": _out(util_h)}
        if one_out:
            lim = system.failover_max_utilization
            out["failover_required_at_horizon"] = _out(_own(failover_count_needed(
                loads_h + fixed[..., None], other, lim), loads_h, pool).max(axis=-1))
        return out

    if one_out:
        failover = _failover(system, pool, var, var_all, yearly, shape, d["factors"], fixed, horizon, schedule)
    msu = None
    if pool == "processors" and system.msu_per_processor is not None:
        msu = _out((var + fixed) * system.msu_per_processor)
    at_loads = _at_peak(d["loads"], idx)[..., 0]                                   # (W, *S)

    @cache
    def shares() -> dict:
        """Each workload's share of the utilization at the peak."""
        return {"by_workload": {n: _out(_share(ld, k)) for n, ld in zip(names, at_loads)}}

    @cache
    def at_peak() -> dict:
        """The pool's mix and wait at the peak."""
        at = station(lam_peak)                  # (*S, 1)
        return {"rate": _out(at["rate"][..., 0]), "exec_ms": _out(at["exec_ms"][..., 0]),
                "scv": _out(at["scv"][..., 0]), "wait_ms": _out(np.where(overloaded, np.nan, at["wait_ms"][..., 0])),
                "rows": {k_: _out(v[..., 0]) for k_, v in at.get("rows", {}).items()},
                "row_rates": {k_: _out(v[..., 0]) for k_, v in at.get("row_rates", {}).items()},
                "row_shares": {row: {w_: _out(v[..., 0]) for w_, v in b.items()}
                               for row, b in at.get("row_shares", {}).items()}}
    labels = np.array([interval_label(int(j), n_int) for j in day_at[0]], dtype=object)
    return ResourceResult(
        installed=k, utilization=_out(util), peak_interval=_out(labels[idx]), average_utilization=_out(avg_util),
        busy=_out(var + fixed if pool == "processors" else var),
        other=_out(np.broadcast_to(other + (fixed / k if k else 0.0), shape)),
        required=_out(required), headroom=_out(headroom), months_to_target=_out(months_to),
        overloaded=_out(overloaded), failover=failover, msu=msu,
        statuses=lambda: _status(pool, util, target, k, required), shares=shares, at_peak=at_peak,
        horizon=horizon), idx


def _has_load(var_all, factors, schedule, shape) -> np.ndarray:
    """Where the pool has work of this LPAR's to grow (*S): now, or, with a migration's shares, at
    some month (a pool a migration fills later: the loads without the shares, ``factors``)."""
    if schedule is None:
        return var_all.max(axis=-1) > 0
    return np.broadcast_to(np.asarray(factors[0]).sum(axis=0) > 0, shape)


def _first_load_month(var_all, factors, schedule, shape) -> np.ndarray:
    """The first month (from the scenario's) at which the pool has work of this LPAR's (*S), inf
    for never: 0 where it has some now; with a migration's shares, the month a share that is 0 now
    starts to rise (each is linear between its knots, so it is positive just after that knot, and
    growth never takes a positive load to 0)."""
    if schedule is None:
        return np.where(var_all.max(axis=-1) > 0, 0.0, np.inf) * np.ones(shape)
    a = np.asarray(factors[0], dtype=float)
    t0 = np.broadcast_to(np.asarray(schedule.start, dtype=float), shape)
    now = schedule.at(t0.ravel()).reshape((len(schedule.knots), *shape))
    out = np.full(shape, np.inf)
    for w, k in enumerate(schedule.knots):
        first = np.where(now[w] > 0, 0.0, np.inf)
        if k is not None:
            xs, ys = (np.asarray(v, dtype=float) for v in k)
            at = snapped(t0, xs)                       # (as the schedule reads a month a knot's)
            for x in xs[:-1][(ys[:-1] <= 0) & (ys[1:] > 0)]:        # where a share starts to rise
                first = np.where(x >= at, np.minimum(first, np.maximum(x - t0, 0.0)), first)
        out = np.where(np.broadcast_to(a[w] > 0, shape), np.minimum(out, first), out)
    return out


def _failover(system, pool, var, var_all, yearly, shape, factors, fixed, horizon, schedule=None) -> FailoverResult:
    """The card pool with one card out, at its peak interval (see :class:`FailoverResult`); ``fixed``
    (*S): other LPARs' work that stays, cards' worth (0 where their load is a share per card);
    ``horizon``: the pool's answers at the horizon, one card failed among them, when asked."""
    k, other, lim = system.installed(pool), system.other(pool), system.failover_max_utilization
    f = np.asarray(fixed, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        util = (np.where(var > 0, np.inf, 0.0) if k <= 1 else (var + f + other * k) / (k - 1))
    required = _own(failover_count_needed(var_all + f[..., None], other, lim), var_all, pool).max(axis=-1)
    some = _has_load(var_all, factors, schedule, shape)

    def months():
        if k < 2:       # one card and it fails: the month this LPAR's work first reaches the pool
            return _out(_first_load_month(var_all, factors, schedule, shape))
        # (factors given: the loads themselves are not read, nor kept by this closure)
        m = months_to_reach(None, yearly, f, np.broadcast_to(lim * (k - 1) - other * k, shape), factors=factors,
                            schedule=schedule)
        return _out(np.where(some, m, np.inf))
    return FailoverResult(utilization=_out(util), required=_out(required),
                          statuses=lambda: _failover_status(pool, util, lim, k, required), months=months,
                          horizon=horizon)


def _workload_results(workloads, profiles, lam_avg, lam, busiest, admin, cpu_unit, cpu_load, stations, peaks,
                      shape) -> dict:
    """Each workload's rate, CPU by address space (MSTR's administration spread over its queue
    manager's AMS rate, on the average day), card requests and queueing delay per unit (the worst
    interval's, computed when first asked: every pool's wait in every interval, from the rates
    ``lam_avg x busiest`` made again then, so that a plan kept for later holds no per-interval
    array)."""
    qm_rate: dict[str, np.ndarray] = {}
    for p, lam_w in zip(profiles, lam_avg):
        if p.queue_manager is not None:      # in request/reply transactions per second
            qm_rate[p.queue_manager] = qm_rate.get(p.queue_manager, 0.0) + lam_w * p.txn_per_unit
    for qm, rate in qm_rate.items():
        with np.errstate(divide="ignore", over="ignore"):
            tiny = (rate > 0) & ~np.isfinite(admin[qm] / np.where(rate > 0, rate, 1.0))
        if np.any(tiny):
            raise PlanError(f"the AMS rate of queue manager {qm} ({float(np.ravel(rate)[np.argmax(np.ravel(tiny))]):g}/s) "
                            f"is too small to spread its administration ({float(np.max(admin[qm])):g} µs/s) over: "
                            "give 0 or a rate of at least 1e-300 transactions/s")
    every: dict = {}

    def waits() -> dict:
        """Each pool's wait in every interval (NaN: overloaded) and which workloads run in each."""
        if not every:
            lam_every = lam_avg[..., None] * busiest                                  # as plan_with_loads
            for pool in POOLS:
                st = stations[pool](lam_every)
                every[pool] = np.where(st["util"] >= 1.0, np.nan, st["wait_ms"])
            every["active"] = lam_every > 0
        return every

    def queueing(i: int, reqs: dict):
        w = waits()
        delay = np.where(cpu_unit[i][..., None] > 0, w["processors"], 0.0)
        for pool in CARD_POOLS:
            rq = np.broadcast_to(np.asarray(reqs[pool]), shape)[..., None]
            delay = delay + np.where(rq > 0, rq * w[pool], 0.0)
        active = w["active"][i]
        return _out(np.max(np.where(active | ~active.any(axis=-1, keepdims=True), delay, 0.0), axis=-1))
    wl = {}
    for i, (w, p) in enumerate(zip(workloads, profiles)):
        cpu = {k_: _out(np.broadcast_to(v, shape)) for k_, v in p.cpu_us.items()}
        if p.queue_manager is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                cpu["MSTR"] = _out(np.where(qm_rate[p.queue_manager] > 0,
                                            p.txn_per_unit * admin[p.queue_manager] / qm_rate[p.queue_manager], 0.0))
        cpu["total"] = _out(np.broadcast_to(sum((np.asarray(v) for v in cpu.values()), np.zeros(())), shape))
        reqs, card_ms = {}, {}
        for pool in CARD_POOLS:
            n, tt, _ = p.classes[pool]
            reqs[pool] = _moment(n, tt, 0)
            card_ms[pool] = _moment(n, tt, 1)
        wl[w.name] = WorkloadResult(kind=w.kind, unit=p.unit or RATE_UNITS[w.kind], rate=_out(lam_avg[i]),
                                    peak_rate=_out(lam[i].max(axis=-1)), meaning=rate_meaning(w, p, lam_avg[i]),
                                    cpu_us=cpu, requests=reqs, card_ms=card_ms,
                                    processors_busy=_out(_peak(cpu_load[i], peaks["processors"])),
                                    site_failover=w.site_failover, peak_day=w.peak_day,
                                    queueing=partial(queueing, i, reqs))
    return wl


def rate_meaning(w: Workload, p, rate) -> str:
    """A workload's rate in words a planner checks, e.g. "300 request/reply transactions/s = 600
    messages put and got (each message put once and got once)"."""
    r = np.asarray(rate, dtype=float)
    one = r.ndim == 0

    def n(x):
        return f"{float(x):,.6g}" if one else "N"
    when = ""
    if w.window is not None:
        when = (f", from {interval_label(w.window.start, 1440)} for {w.window.minutes:g} minutes "
                "(the rate while it runs)")
    elif w.profile is not None:
        when = f", the daily average (profile {w.profile.name})"
    if w.kind == "ams":
        if p.txn_per_unit < 1:
            return f"{n(r)} messages/s, each put (protected) once and got once{when}"
        return f"{n(r)} request/reply transactions/s = {n(2 * r) if one else '2N'} messages put and got{when}"
    if w.kind == "channel":
        end = "this LPAR's end" if w.arg("ends") == "local" else "both ends (sender and receiver)"
        if p.txn_per_unit < 1:
            return f"{n(r)} one-way messages/s over the channel, CPU of {end}{when}"
        return (f"{n(r)} request/reply transactions/s = {n(2 * r) if one else '2N'} messages over the channel, "
                f"CPU of {end}{when}")
    if w.kind == "handshakes":
        share = float(w.arg("resumed_share") or 0.0)
        return f"{n(r)} TLS handshakes/s, {share:.0%} of them resumed{when}"
    if w.kind == "channel_starts":
        return f"{n(r)} MQ channel starts/s{when}"
    if w.kind == "ocsp":
        return (f"{n(r)} new TLS connections/s checked by an OCSP responder, {float(w.arg('connection_cpu_us')):,.6g} "
                f"µs of CPU each without it{when}")
    if p.util_form:
        return f"a measured utilization of {float(w.args['utilization']):.1%} of each {w.arg('card')} server{when}"
    return f"{n(r)} {p.unit or RATE_UNITS[w.kind]} measured{when}"


def _verdicts(resources, shape) -> tuple:
    """(the busiest pool, the pool the growth brings to its target first; among pools never
    reached, or reached at once, the one with the least headroom)."""
    def stacked(attr):
        return np.stack([np.asarray(getattr(resources[p], attr), dtype=float) * np.ones(shape) for p in POOLS])
    # (the busiest as ams_plan's: other LPARs' load included; a pool busy with it alone says so in its
    # status, and its growth never reaches the target: never first below)
    bottleneck = np.asarray(POOLS)[np.argmax(stacked("utilization"), axis=0)]
    first = np.lexsort((stacked("headroom"), stacked("months_to_target")), axis=0)[0]
    return _out(bottleneck), _out(np.asarray(POOLS)[first])


def _pool_cpu(system, cpu_unit, fixed) -> dict:
    """The processors as one M/G/c station: each unit of work one exponential job, the
    administration at the mean job.  Functions of the rates ``lam`` (W, *S, J), in any intervals
    (all of them, or the peak's): ``loads_at``, ``util_of`` (of the loads) and ``station`` (rate,
    mean job, SCV, utilization and wait, each interval on its own)."""
    k = system.processors
    s = cpu_unit[..., None] / 1e6                                                 # (W, *S, 1) seconds per job

    def loads_at(lam):
        return lam * cpu_unit[..., None] / 1e6

    def util_of(loads):
        return (loads.sum(axis=0) + fixed[..., None]) / k

    def station(lam) -> dict:
        jobs = np.where(s > 0, lam, 0.0)
        n = jobs.sum(axis=0)
        m1 = ratio((jobs * s).sum(axis=0), n)
        m2 = ratio((jobs * s * s).sum(axis=0), n)
        fixed_i = np.broadcast_to(fixed[..., None], m1.shape)                      # (*S, J)
        lam_bg = ratio(fixed_i, m1)
        lam_tot = n + lam_bg
        # the background jobs at the mean: E[S^2] of the mixture of exponentials, 2 s^2 per class
        es2 = ratio(2.0 * m2 * n + 2.0 * m1 * m1 * lam_bg, lam_tot)
        scv = np.where(m1 > 0, ratio(es2, m1 * m1) - 1.0, 0.0)
        util = util_of(loads_at(lam))
        ok = util < 1.0
        wait = np.zeros(util.shape)
        if ok.any():
            wait[ok] = pooled_wait(n[ok], m1[ok], scv[ok], k, 0.0, fixed_i[ok]) * 1000.0
        return {"rate": n, "exec_ms": m1 * 1000.0, "scv": scv, "util": util, "wait_ms": wait}
    return {"fixed": fixed, "loads_at": loads_at, "util_of": util_of, "station": station}


def _pool_card(system, pool, profiles, names, shape) -> dict:
    """A Crypto Express pool as one M/G/c station: the mixture of every workload's requests
    (functions of the rates as :func:`_pool_cpu`'s, and ``mix``)."""
    k = system.installed(pool)
    other = system.other(pool)
    work = system.other_work(pool)     # other LPARs' work that stays when cards are added (cards' worth)
    ns = [p.classes[pool][0] for p in profiles]
    ts = [p.classes[pool][1] for p in profiles]
    # per unit of each workload, (W, *S, 1): Σ n (requests), Σ n t (card ms), Σ n t², cards' worth
    scenarios = shape
    req_unit, t1, t2 = (_per_unit([_moment(n, tt, j) for n, tt in zip(ns, ts)], scenarios)[..., None]
                        for j in (0, 1, 2))
    busy_unit = _per_unit([p.busy[pool] for p in profiles], scenarios)[..., None]
    unit_load = t1 / 1000.0 + busy_unit

    def loads_at(lam):
        return lam * unit_load                                                     # cards' worth

    def util_of(loads):
        total = loads.sum(axis=0)
        return np.where(k > 0, (total + work) / max(k, 1) + other, np.where(total > 0, np.inf, 0.0))

    def mix(rates):
        """(requests/s, mean EXEC ms, SCV, cards' worth with no request count) at these rates."""
        r = (rates * req_unit).sum(axis=0)
        m1, scv = mix_from_moments(r, (rates * t1).sum(axis=0), (rates * t2).sum(axis=0))
        # other LPARs' work is busy with no request count of ours, as a measured utilization is
        return r, m1, scv, (rates * busy_unit).sum(axis=0) + work

    def station(lam) -> dict:
        r, m1, scv, unknown = mix(lam)
        loads = loads_at(lam)
        util = util_of(loads)
        ok = (util < 1.0) & (r > 0)
        wait = np.zeros(util.shape)
        if ok.any():
            wait[ok] = pooled_wait(r[ok], m1[ok] / 1000.0, scv[ok], k, other, unknown[ok]) * 1000.0
        out = {"rate": r, "exec_ms": m1, "scv": scv, "util": util, "wait_ms": wait}
        if pool == "accelerators":
            out.update(_rmf_rows(profiles, names, lam, loads, r, k))
        return out
    return {"fixed": np.full(scenarios, work), "loads_at": loads_at, "util_of": util_of, "station": station, "mix": mix,
            "unit_load": unit_load[..., 0]}


def _rmf_rows(profiles, names, lam, loads, r, k) -> dict:
    """RMF's ME and CRT rows of the accelerators, and each workload's part of them (utilization of
    the pool), at the rates ``lam`` (W, *S, J)."""
    shape = r.shape
    kk = max(k, 1)
    by_row: dict = {"ME": {}, "CRT": {}}
    row_rates = {"ME": np.zeros(shape), "CRT": np.zeros(shape)}
    for name, p, lam_w in zip(names, profiles, lam):
        n, tt, labels = p.classes["accelerators"]
        for f, row in (("RSA_ME", "ME"), ("RSA_CRT", "CRT")):
            j = labels.index(f) if f in labels else None
            if j is None:
                by_row[row][name] = np.zeros(shape)
                continue
            nj, tj = (np.broadcast_to(np.asarray(x[j], dtype=float), shape[:-1])[..., None] for x in (n, tt))
            by_row[row][name] = lam_w * nj * tj / 1000.0 / kk
            row_rates[row] = row_rates[row] + lam_w * nj
    row_rates["other"] = np.maximum(r - row_rates["ME"] - row_rates["CRT"], 0.0)
    rows = {row: sum(by_row[row].values()) for row in ("ME", "CRT")}
    # rounding can leave -1e-17 where nothing else uses the card
    rows["other"] = np.maximum(loads.sum(axis=0) / kk - rows["ME"] - rows["CRT"], 0.0)
    return {"rows": rows, "row_rates": row_rates, "row_shares": by_row}
