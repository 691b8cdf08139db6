"""What to buy and when: the purchase timeline of a plan, and the warnings a planner must read.

For a pool with :math:`k` servers installed, each further server :math:`n = k + 1, \\dots, N`
(:math:`N` the count required at the horizon, for the utilization target and, for card pools
with ``failover = "one_card"``, to survive one card failing) must be installed by the month
:math:`n - 1` servers stop being enough: the first month the peak interval's load, with the load
that does not grow (:math:`B`: the processors' MSTR administration, a card pool's other LPARs' work
``other_*_cards``), reaches

.. math::

    (U_{max} - u_o)(n - 1) \\quad\\text{(target)}, \\qquad
    F (n - 2) - u_o (n - 1) \\quad\\text{(one of } n - 1 \\text{ cards failed)}

(:func:`~.crossing.months_to_reach`), and ordered ``lead_time_months`` before that; an order
date already past is "order now", and "late" by how much the lead time overruns the need.
Months count from the plan's scenario (``months``; 0: now).  Servers needed at the same month
are one purchase.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..tls import channel_start_rate
from .calendar import month_date
from .crossing import months_to_reach
from .migration import moved_parts
from .inputs import CARD_POOLS, INSTALLABLE, POOLS

__all__ = ["Purchase", "purchase_timeline", "plan_warnings", "need_months"]

_ONE = {"processors": "processor", "coprocessors": "coprocessor", "accelerators": "accelerator"}


@dataclass(frozen=True)
class Purchase:
    """Servers of one pool to add by one month.

    Attributes
    ----------
    resource : ``"processors"``, ``"coprocessors"`` or ``"accelerators"``.
    add : how many (installed count before it: ``after - add``).
    after : the pool's count once they are in.
    install_by_month : months from the scenario by which they must be in service.
    order_by_month : ``install_by_month - lead_time_months``, or 0 when that has passed.
    order_now : the order date has passed (or is now).
    late_by_months : how much later than needed they arrive if ordered now (0: in time).
    reason : the limit the count before each server breaks at ``install_by_month``: ``"target"``
        (the utilization target), ``"one card failed"`` or ``"wait target"``; when the servers of
        one month are bought for different limits, each with the count it makes, in count order
        (``"target (2 in all) and one card failed (3 in all)"``).
    limits : the distinct limits, in count order (the first is the first server's).
    on_order : servers already ordered (a plan's ``[[order]]``): ``install_by_month`` is when they
        arrive, ``needed_by_month`` when the count before them stops being enough (inf: not within
        the months searched), ``late_by_months`` how much later they arrive than that.
    migration : where the plan's quantum-safe migrations bring the purchase forward, what says so
        ("the migration of payments to ML-DSA-65 (months 6 to 18); without it: month 40.1");
        empty otherwise.
    needed_until_month : where the pool's load later falls (a migration moves its work
        elsewhere, or its workloads shrink), the month from which the count before these servers
        is enough again through the horizon; inf otherwise.
    relieved_by_migration : that fall is the migrations' (without them the count is not enough
        at the horizon).
    """

    resource: str
    add: int
    after: int
    install_by_month: float
    order_by_month: float
    order_now: bool
    late_by_months: float
    reason: str
    limits: tuple = ()
    on_order: bool = False
    needed_by_month: float = math.nan
    migration: str = ""
    needed_until_month: float = math.inf
    relieved_by_migration: bool = False

    def to_dict(self, start: str | None = None) -> dict:
        """JSON-ready (the keys of ``cryptoplan plan --json``'s ``timeline``); with the plan's
        ``start`` month (``"YYYY-MM"``), the order-by and install-by months as calendar months too."""
        out = {"resource": self.resource, "add": self.add, "after": self.after,
               "install_by_month": round(self.install_by_month, 3), "order_by_month": round(self.order_by_month, 3),
               "order_now": self.order_now, "late_by_months": round(self.late_by_months, 3), "reason": self.reason,
               "limits": list(self.limits)}
        if self.migration:
            out["migration"] = self.migration
        if math.isfinite(self.needed_until_month):
            out["needed_until_month"] = round(self.needed_until_month, 3)
            out["relieved_by_migration"] = self.relieved_by_migration
        if self.on_order:
            out["on_order"] = True
            out["needed_by_month"] = round(self.needed_by_month, 3) if math.isfinite(self.needed_by_month) else None
        if start is not None:
            out["order_by_date"] = month_date(start, self.order_by_month)
            out["install_by_date"] = month_date(start, self.install_by_month)
        return out

    def text(self, start: str | None = None) -> str:
        """"order by month 24.0 1 coprocessor (3 in all), installed by month 30.0: target"; with the
        plan's ``start`` month each month also as the calendar month holding it ("month 24.0,
        2029-01")."""
        def when(m):
            return f"month {m:.1f}" + (f" ({month_date(start, m)})" if start is not None else "")
        what = f"{self.add} {_ONE[self.resource]}{'s' if self.add != 1 else ''}"
        if self.on_order:
            if not math.isfinite(self.needed_by_month):
                return f"on order {what} ({self.after} in all), arriving {when(self.install_by_month)}: not needed"
            late = (f", {self.late_by_months:.1f} months late" if self.late_by_months > 0 else ", in time")
            return (f"on order {what} ({self.after} in all), arriving {when(self.install_by_month)}, needed by "
                    f"{when(self.needed_by_month)}{late}: {self.reason}")
        order = "order now" if self.order_now else f"order by {when(self.order_by_month)}"
        late = f", {self.late_by_months:.1f} months late even so" if self.late_by_months > 0 else ""
        need = "needed now" if self.install_by_month == 0 else f"installed by {when(self.install_by_month)}"
        forward = f", brought forward by {self.migration}" if self.migration else ""
        by = "the migration leaves" if self.relieved_by_migration else "the workloads' fall leaves"
        until = (f"; needed until {when(self.needed_until_month)} only: from then {by} {self.after - self.add} "
                 "enough" if math.isfinite(self.needed_until_month) else "")
        return f"{order} {what} ({self.after} in all), {need}{late}: {self.reason}{forward}{until}"


def need_months(system, pool, loads, yearly, fixed, counts, schedule=None) -> tuple:
    """(months, reason) at which ``counts`` servers of ``pool`` stop being enough.

    Parameters
    ----------
    system : System
    pool : str
    loads : ndarray, shape (W, *S, I)
        Each workload's load in each interval at the scenario (servers' worth).
    yearly : array_like, shape (W,)
    fixed : float or ndarray, shape (*S)
        Load that does not grow.
    counts : array_like
        Server counts, broadcast against ``S``.
    schedule : Schedule, optional
        The workloads' multipliers over the months (a migration's shares,
        :class:`~.crossing.Schedule`); ``loads`` are then without them.

    Returns
    -------
    (ndarray, ndarray)
        The first month (0: not enough now; inf: enough through :data:`~.inputs.MAX_MONTHS`) the
        peak interval reaches :math:`(U_{max} - u_o) n` or, one card failed,
        :math:`F (n - 1) - u_o n`, and which (``"target"`` or ``"one card failed"``).
    """
    k = np.asarray(counts, dtype=float)
    other, target = system.other(pool), system.max_utilization
    t_target = months_to_reach(loads, yearly, fixed, (target - other) * k, schedule=schedule)
    if pool not in CARD_POOLS or system.failover != "one_card":
        return t_target, np.full(t_target.shape, "target", dtype=object)
    lim = system.failover_max_utilization
    has = np.asarray(loads).sum(axis=(0, -1)) > 0
    cap = np.where(k >= 2, lim * (k - 1) - other * k, 0.0)
    # (card pools: ``fixed`` is other LPARs' work that stays when cards are added, 0 for a share)
    t_fail = np.where(has, months_to_reach(loads, yearly, fixed, cap, schedule=schedule), math.inf)
    first = t_fail < t_target
    return np.where(first, t_fail, t_target), np.where(first, "one card failed", "target").astype(object)


def _crossings(system, pool, loads, yearly, fixed, counts, schedule=None) -> tuple:
    """(months, reason) at which each of ``counts`` servers stops being enough (one scenario)."""
    return need_months(system, pool, loads[:, None, :], yearly, fixed, counts, schedule)


def _lasting(system, pool, loads, yearly, fixed, start: int, schedule) -> float:
    """The fewest servers of ``pool``, ``start`` or more, that no limit breaks before the horizon
    (:data:`~.inputs.INSTALLABLE` + 1 where none do): a bisection on the count, whose months only
    grow with it (one crossing where ``start`` already lasts)."""
    def lasts(n: int) -> bool:
        return bool(_crossings(system, pool, loads, yearly, fixed, np.array([n]), schedule)[0][0]
                    > system.horizon_months)
    top = INSTALLABLE[pool]
    if start > top:
        return float(start)
    if lasts(start):
        return float(start)
    if not lasts(top):
        return top + 1.0
    lo, hi = start, top                 # lo does not last, hi does
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if lasts(mid) else (mid, hi)
    return float(hi)


def _reason(why, before: int) -> tuple:
    """``(reason, limits)`` of servers ``before + 1, before + 2, ...`` each bought for the limit in
    ``why`` (in count order): the one limit, or each run of one with the count it makes
    ("target (2 in all) and one card failed (3 in all)"), and the distinct limits in that order."""
    runs: list[list] = []                       # [limit, count once its servers are in]
    for j, limit in enumerate(str(x) for x in why):
        if runs and runs[-1][0] == limit:
            runs[-1][1] = before + j + 1
        else:
            runs.append([limit, before + j + 1])
    reason = runs[0][0] if len(runs) == 1 else " and ".join(f"{r} ({n} in all)" for r, n in runs)
    return reason, tuple(r for r, _ in runs)


def purchase_timeline(system, loads: dict, yearly, fixed: dict, resources: dict, schedule=None) -> list:
    """The purchases each pool needs up to the horizon, earliest first (one scenario).

    Parameters
    ----------
    system : System
    loads : dict
        Pool -> load of each workload in each interval at the scenario, shape (W, I).
    yearly : array_like, shape (W,)
        Each workload's growth per year.
    fixed : dict
        Pool -> load that does not grow.
    resources : dict
        Pool -> :class:`~.evaluate.ResourceResult` (its counts required at the horizon).
    schedule : Schedule, optional
        As :func:`need_months`.

    Returns
    -------
    list of Purchase
    """
    out: list[Purchase] = []
    horizon, lead = system.horizon_months, system.lead_time_months
    for pool in POOLS:
        r = resources[pool]
        need = float(r.required_at_horizon)
        if r.failover is not None:
            need = max(need, float(r.failover.required_at_horizon))
        k = r.installed
        # a pool can need more servers before the horizon than at it (a migration empties it, or
        # its workloads shrink: busiest now): the fewest that last through the horizon, by their
        # crossings (where every load only grows, the horizon's count does)
        if schedule is not None or np.any(np.asarray(yearly, dtype=float) < 0):
            need = max(need, _lasting(system, pool, np.asarray(loads[pool], dtype=float), yearly, fixed[pool],
                                      int(max(need, k)), schedule))
        last = int(min(need, INSTALLABLE[pool]))
        # servers already ordered take the counts after the installed ones, in the order they arrive
        ordered = sorted((o for o in system.orders if o.resource == pool), key=lambda o: o.month)
        on_order = min(sum(o.count for o in ordered), INSTALLABLE[pool] - k)
        if on_order:
            counts = np.arange(k, k + on_order)
            when, why = _crossings(system, pool, np.asarray(loads[pool], dtype=float), yearly, fixed[pool], counts, schedule)
            j = 0
            for o in ordered:
                n = min(o.count, on_order - j)
                if n <= 0:
                    break
                t = float(np.min(when[j:j + n]))
                reason, limits = _reason(why[j:j + n], k + j)
                out.append(Purchase(resource=pool, add=n, after=k + j + n, install_by_month=o.month,
                                    order_by_month=0.0, order_now=False, late_by_months=max(o.month - t, 0.0) + 0.0,
                                    reason=reason, limits=limits, on_order=True, needed_by_month=t))
                j += n
        if last <= k + on_order:
            continue
        counts = np.arange(k + on_order, last)      # n - 1 for each n past the installed and ordered
        when, why = _crossings(system, pool, np.asarray(loads[pool], dtype=float), yearly, fixed[pool], counts, schedule)
        # the wait target (max_wait_ms) can need a card before its utilization crossing: by the
        # horizon at the latest, which is what the counts at the horizon say
        late_wait = when > horizon
        when = np.where(late_wait, horizon, when)
        why = np.where(late_wait, "wait target", why)
        crossings = None
        if schedule is not None:        # the same counts without (some of) the migrations: which bring them forward
            def crossings(which, mine, _pool=pool, _counts=counts):
                return _crossings(system, _pool, np.asarray(loads[_pool], dtype=float), yearly, fixed[_pool],
                                  _counts[mine], _unmigrated(schedule, which))[0]
        first = len(out)
        for t in sorted(set(when.tolist())):
            # the servers needed this month, in count order, each with the limit its count breaks
            # (grouped by reason and sorted, two limits in one month swapped their reasons)
            mine = np.flatnonzero(when == t)
            prev = sum(p.add for p in out if p.resource == pool)        # ordered and proposed before
            reason, limits = _reason(why[mine], k + prev)
            order = t - lead
            out.append(Purchase(resource=pool, add=int(mine.size), after=k + prev + int(mine.size),
                                install_by_month=float(t), order_by_month=float(max(order, 0.0)),
                                order_now=bool(order <= 0), late_by_months=float(max(-order, 0.0)) + 0.0,  # not -0.0
                                reason=reason, limits=limits,
                                migration=_brought_forward(system, t, None if crossings is None else
                                                           functools.partial(crossings, mine=mine))))
        # until when each is needed: one crossing of every count at the horizon, a bisection only
        # for a count that is enough there again (the rare purchase a fall ends)
        mine_p = out[first:]
        until = _needed_until(system, pool, np.asarray(loads[pool], dtype=float), yearly, fixed[pool],
                              [p.after - p.add for p in mine_p], [p.install_by_month for p in mine_p], schedule)
        out[first:] = [dataclasses.replace(p, **u) for p, u in zip(mine_p, until)]
    # what is on order first, by arrival; then the purchases, earliest order first
    return sorted(out, key=lambda p: (not p.on_order, p.order_by_month, p.install_by_month, POOLS.index(p.resource)))


#: How close :attr:`Purchase.needed_until_month` is to the month it names (months; printed to 0.1).
UNTIL_TOLERANCE_MONTHS = 1e-3


def _needed_until(system, pool, loads, yearly, fixed, ns, ts, schedule) -> list:
    """:class:`Purchase`'s ``needed_until_month`` and ``relieved_by_migration`` for purchases needed
    at months ``ts`` that take the pool past ``ns`` servers (one dict each).

    The month is the least :math:`s \\in (t, T]` such that no limit breaks ``n`` in
    :math:`[s, T]`, by bisection to :data:`UNTIL_TOLERANCE_MONTHS` (the predicate only turns true
    as :math:`s` grows: the load past its last fall is a sum of growing exponentials); inf where
    ``n`` is still not enough at the horizon (every count is checked there at once).  From month
    :math:`s` the loads are :math:`L (1 + g)^{s/12}` and the shares :math:`\\phi(t_0 + s + \\cdot)`.
    The fall is the migrations' where, without them, ``n`` is not enough at the horizon."""
    horizon = system.horizon_months
    g = np.asarray(yearly, dtype=float)
    none = {"needed_until_month": math.inf, "relieved_by_migration": False}

    def enough_from(s: float, counts, sched=schedule) -> np.ndarray:
        at_s = loads * ((1.0 + g) ** (s / 12.0))[:, None]
        shifted = None if sched is None else sched._replace(start=np.asarray(sched.start, dtype=float) + s)
        return need_months(system, pool, at_s[:, None, :], g, fixed, np.asarray(counts, dtype=float), shifted)[0] \
            > horizon - s
    if schedule is None and not np.any(g < 0):         # every load only grows: needed to the end
        return [none] * len(ns)
    if not len(ns):
        return []
    at_end = enough_from(horizon, ns)
    out = []
    for n, t, ok in zip(ns, ts, np.atleast_1d(at_end)):
        if not (ok and t < horizon):
            out.append(none)
            continue
        lo, hi = t, horizon
        while hi - lo > UNTIL_TOLERANCE_MONTHS:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if enough_from(mid, [n])[0] else (mid, hi)
        by = bool(schedule is not None and schedule.pairs and not enough_from(horizon, [n], _unmigrated(schedule))[0])
        out.append({"needed_until_month": hi, "relieved_by_migration": by})
    return out


#: A purchase is brought forward by a migration when without it the same count lasts this many
#: months longer (the plan prints months to 0.1).
FORWARD_MONTHS = 0.05


def _unmigrated(schedule, which=None):
    """The schedule with the migrations ``which`` (indices into the system's; all if None) undone:
    each one's remaining part at 1, its moved part at 0."""
    undo = range(len(schedule.pairs)) if which is None else which
    rows = {r for j in undo for r in schedule.pairs[j]}
    knots = []
    for i, k in enumerate(schedule.knots):
        if k is None or i not in rows:
            knots.append(k)
        else:                       # a remaining part starts at 1, a moved part at 0: stays so
            knots.append((k[0], np.full(np.shape(k[1]), float(k[1][0]))))
    return schedule._replace(knots=tuple(knots))


def _brought_forward(system, t: float, crossings) -> str:
    """What says which migrations bring forward a purchase needed at ``t``, or "".

    ``crossings(which)`` gives the purchase's counts' months with the migrations ``which`` undone
    (None: all).  The migrations named are those each of which, undone alone, delays the purchase
    by more than :data:`FORWARD_MONTHS`; all of them where only together they do."""
    def later(which) -> bool:
        return bool(np.all(np.asarray(crossings(which)) > t + FORWARD_MONTHS))
    if crossings is None or not later(None):
        return ""
    named = [j for j in range(len(system.migrations)) if later((j,))] or list(range(len(system.migrations)))
    without = float(np.min(crossings(tuple(named))))
    ms = [system.migrations[j] for j in named]
    when = (f"month {without:.1f}" if without <= system.horizon_months else
            f"not within the {system.horizon_months:g}-month horizon")
    if len(ms) == 1:
        m = ms[0]
        return f"the migration of {m.workload} to {m.to} (months {m.start:g} to {m.start + m.months:g}); without it: {when}"
    # (the algorithms are in the moved parts' names: one printed line of the Plan sheet)
    steps = " and ".join(f"{m.workload} (months {m.start:g} to {m.start + m.months:g})" for m in ms)
    return f"the migrations of {steps}; without them: {when}"


def plan_warnings(system, workloads, profiles, workload_results, resources, timeline) -> Callable[[], tuple]:
    """Sentences a planner must read beside the numbers: what the plan assumed or could not do.

    Returns what makes them: the sentences that read the figures and parameters (a channel
    initiator's start rate) are made now, under the plan's, and a bad one is raised by the plan;
    those of the counts at the horizon, which a sweep of the numbers never reads, when first
    called (:attr:`~.evaluate.PlanResult.warnings`)."""
    out: list[str] = []
    moved = moved_parts(system)
    for w, p in zip(workloads, profiles):
        out.extend(f"workload {w.name!r}: {note}" for note in p.notes)
        if w.name in moved:            # a migrated part: its workload's warnings are said once, of it
            continue
        given = [(f"{what} {fmt.format(rng[0])} to {fmt.format(rng[1])}{unit}", fmt.format(point)) for
                 what, rng, point, unit, fmt in (("rate", w.rate_range, w.rate, "", "{:,.6g}"),
                                                 ("growth", w.growth_range, w.growth_per_year, " a year", "{:.1%}"))
                 if rng is not None]
        if given:
            one = len(given) == 1
            out.append(f"workload {w.name!r}: {' and '.join(g for g, _ in given)} "
                       f"{'is a forecast' if one else 'are a forecast'}'s 90% interval{'' if one else 's'}; the plan "
                       f"uses {'its median' if one else 'their medians'}, {' and '.join(m for _, m in given)}; bands "
                       "(--bands, PLAN_BAND) draw the range" + ("" if one else "s"))
        if w.kind == "channel_starts":
            try:
                most = channel_start_rate(w.arg("mode"), w.arg("cipher"), system.platform)
            except ValueError as e:
                out.append(f"workload {w.name!r}: cannot check its start rate against the channel initiator's: {e}")
                continue
            r = workload_results[w.name]
            peak = np.max(np.asarray(r.peak_rate, dtype=float))
            if w.window is not None:         # the rate while it runs, even in a window under a minute
                site = system.site_failover_factor if w.site_failover else 1.0
                day = system.peak_day_factor if w.peak_day else 1.0
                peak = max(peak, float(np.max(np.asarray(r.rate, dtype=float))) * day * site)
            if peak > most:
                out.append(f"workload {w.name!r}: {peak:,.4g} channel starts/s at its peak is above the "
                           f"{most:,.4g}/s one channel initiator was measured to sustain ({w.arg('mode')}, "
                           f"{system.platform}, 3 dedicated CPs): the starts queue in CHIN and take longer than "
                           "the plan's window")
    marked = [w.name for w in workloads if w.site_failover]
    if system.site_failover_factor != 1.0 and not marked:
        out.append(f"site_failover_factor is {system.site_failover_factor:g} but no workload is marked "
                   "site_failover = true: it changes nothing")
    tail = []
    if timeline and any("wait target" in p.limits for p in timeline):
        tail.append("the wait target (max_wait_ms) needs cards the utilization target does not: their install "
                    "month is given as the horizon, the latest it can be")

    def warnings() -> tuple:
        beyond = []
        for pool in POOLS:
            r = resources[pool]
            need = np.max(np.asarray(r.required_at_horizon, dtype=float))
            if r.failover is not None:
                need = max(need, np.max(np.asarray(r.failover.required_at_horizon, dtype=float)))
            if need > INSTALLABLE[pool]:
                beyond.append(f"{pool}: more than {INSTALLABLE[pool]} needed by the horizon: more than one LPAR can "
                              "have; the timeline stops there")
        return tuple(out + beyond + tail)
    return warnings
