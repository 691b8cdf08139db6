"""Every workload on the system's shared processors and Crypto Express pools: :func:`plan`.

Loads add per pool; each pool's wait is one M/G/c on the mixture of every workload's requests;
counts required now and at the horizon, headroom and months to target follow (the package
documentation has the formulas).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..._text import value_text
from ...domains import GROWTH, MONTHS
from ...queueing.mgc import mgc_wait_by_scv
from .inputs import ARGUMENT, CARD_POOLS, MAX_MONTHS, POOLS, RATE_UNITS, PlanError, System, Workload, checked
from .profiles import PROFILES

__all__ = ["plan", "PlanResult", "ResourceResult", "WorkloadResult"]

# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ResourceResult:
    """One pool at the planned rates (arrays shaped like the scenarios; floats for one).

    Attributes
    ----------
    installed : servers (processors or cards).
    utilization : RMF's summary utilization per server, other LPARs included (fraction; may exceed 1,
        see ``overloaded``; inf when the pool has no servers and gets work).
    busy : servers' worth of this LPAR's work (CPU seconds per second, or cards' worth).
    by_workload : workload name -> its share of the utilization (fraction of the pool).
    other : the share other LPARs keep busy (cards) or work that follows no rate (processors: MSTR
        administration), a fraction of the pool.
    rate : requests per second this LPAR sends (cards), or jobs per second (processors).
    exec_ms : mean service time per request or job (ms): RMF's average EXEC TIME for cards.
    scv : squared coefficient of variation of that service time (the pooled mix).
    wait_ms : mean queueing per request or job (ms); NaN where ``overloaded`` (see ``status``).
    required : smallest count keeping utilization <= the target at these rates.
    headroom : common growth factor of every rate that brings the pool to its target (inf: no
        load grows on it, or too little for the factor to be a float; below 1: over target now).
    months_to_target : months until the workloads' yearly growth brings it to its target (0: at or
        over it now; inf: not within :data:`MAX_MONTHS`).
    required_at_horizon : the count required at the system's ``horizon_months``.
    overloaded : utilization >= 1 (the rate cannot be carried).
    rows, row_rates : accelerators only: RMF's by-function rows ``{"ME", "CRT", "other"}`` -> utilization
        and requests per second
    row_shares : accelerators only: ``{"ME", "CRT"}`` -> workload name -> its part of that row
        (``other``: card time of handshakes, channel starts and measured requests, whose function no
        published figure names).
    status : one sentence per scenario: within target, over target, or overloaded and by how much.
    """

    installed: int
    utilization: object
    busy: object
    by_workload: dict
    other: object
    rate: object
    exec_ms: object
    scv: object
    wait_ms: object
    required: object
    headroom: object
    months_to_target: object
    required_at_horizon: object
    overloaded: object
    rows: dict
    row_rates: dict
    row_shares: dict
    status: object


@dataclass(frozen=True)
class WorkloadResult:
    """One workload at the planned rates.

    Attributes
    ----------
    kind, unit : the kind and what its rate counts.
    rate : the rate at the scenario (growth and months applied).
    cpu_us : CPU µs per unit by address space, and ``"total"``; an AMS workload's ``"MSTR"`` is its
        queue manager's administration per second spread over that queue manager's AMS rate.
    requests : card pool -> requests per unit.
    card_ms : card pool -> card time (EXEC TIME) per unit, ms.
    queueing_ms : queueing delay per unit (processor wait + each pool's wait x its requests), ms;
        NaN where a pool it uses is overloaded.
    processors_busy : processors' worth of its CPU (CPU seconds per second).
    """

    kind: str
    unit: str
    rate: object
    cpu_us: dict
    requests: dict
    card_ms: dict
    queueing_ms: object
    processors_busy: object


@dataclass(frozen=True)
class PlanResult:
    """A plan's answers: ``resources`` (pool -> :class:`ResourceResult`), ``workloads`` (name ->
    :class:`WorkloadResult`), ``bottleneck`` (the busiest pool) and ``binds_first`` (the pool whose
    target the workloads' growth reaches first), for ``system`` at ``growth`` and ``months``."""

    system: System
    resources: dict
    workloads: dict
    bottleneck: object
    binds_first: object
    growth: object
    months: object

    def to_dict(self) -> dict:
        """JSON-ready: numbers as floats or lists, inf and NaN as None (each pool's ``status`` says why)."""
        def num(x):
            a = np.asarray(x)
            if a.dtype.kind in "US":
                return a.tolist()
            a = a.astype(float)
            out = np.where(np.isfinite(a), a, np.nan).tolist()
            return (None if math.isnan(out) else out) if a.ndim == 0 else _nan_to_none(out)
        res = {}
        for pool, r in self.resources.items():
            d = {k: num(getattr(r, k)) for k in ("utilization", "busy", "other", "rate", "exec_ms", "scv", "wait_ms",
                                                 "required", "headroom", "months_to_target", "required_at_horizon")}
            d["installed"] = r.installed
            d["overloaded"] = np.asarray(r.overloaded).tolist()
            d["by_workload"] = {n: num(v) for n, v in r.by_workload.items()}
            d["status"] = np.asarray(r.status).tolist()
            if r.rows:
                d["rows"] = {n: num(v) for n, v in r.rows.items()}
                d["row_rates"] = {n: num(v) for n, v in r.row_rates.items()}
                d["row_shares"] = {row: {n: num(v) for n, v in by.items()} for row, by in r.row_shares.items()}
            res[pool] = d
        wl = {}
        for name, w in self.workloads.items():
            wl[name] = {"kind": w.kind, "unit": w.unit, "rate": num(w.rate),
                        "cpu_us": {k: num(v) for k, v in w.cpu_us.items()},
                        "requests": {k: num(v) for k, v in w.requests.items()},
                        "card_ms": {k: num(v) for k, v in w.card_ms.items()},
                        "queueing_ms": num(w.queueing_ms), "processors_busy": num(w.processors_busy)}
        return {"system": {k: getattr(self.system, k) for k in self.system.__dataclass_fields__},
                "growth": num(self.growth), "months": num(self.months),
                "bottleneck": np.asarray(self.bottleneck).tolist(),
                "binds_first": np.asarray(self.binds_first).tolist(),
                "resources": res, "workloads": wl}


def _nan_to_none(x):
    if isinstance(x, list):
        return [_nan_to_none(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


# ----------------------------------------------------------------------------- the plan
def _out(x):
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


def _counts(load, other, target):
    """Smallest whole k >= 1 with load / k + other <= target (0 where there is no load)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.ceil(load / (target - other) - 1e-12)
    return np.where(load > 0, np.maximum(k, 1.0), 0.0)


def _meet_wait(k0, r, m1, scv, unknown, other, target_ms):
    """Smallest counts k >= k0 whose M/G/c wait per request is at most ``target_ms``.

    ``k0`` already meets the utilization target (below 1), so every queue here is stable; each
    round adds a card where the wait is still over the target, all scenarios at once (a few
    rounds: the wait falls fast with c).  Other LPARs' share is per card, so their requests grow
    with k (at the pool's mean service time).
    """
    k = np.array(k0, dtype=float, copy=True)
    busy = (r > 0) & (m1 > 0)
    for _ in range(10_000):
        todo = busy & (k >= 1)
        if not todo.any():
            break
        kk, rr, mm = k[todo], r[todo], m1[todo] / 1000.0
        lam_tot = rr + (unknown[todo] + other * kk) / mm
        w = mgc_wait_by_scv(lam_tot, mm, kk, scv[todo]) * 1000.0
        over = np.zeros_like(busy)
        over[todo] = w > target_ms
        if not over.any():
            break
        k[over] += 1.0
        busy = over
    return k


def _months(loads, growth, fixed, capacity):
    """Months t >= 0 at which :math:`f(t) = \\sum_i L_i (1 + g_i)^{t/12} + B` first reaches capacity.

    ``loads`` (W, *S), ``growth`` (W,), ``fixed`` and ``capacity`` (*S).  :math:`f` is a sum of
    exponentials, convex, so it crosses the capacity from below once; Newton's method started
    to the right of the crossing (where :math:`f \\ge` capacity and, by convexity,
    :math:`f' > 0`) descends monotonically onto it.  The start is :data:`MAX_MONTHS`, or the
    crossing of the slowest-growing bound :math:`(\\sum_i L_i) e^{r_{min} t}` when every rate
    grows, which is never left of the root.  0 where already there, inf where not by
    :data:`MAX_MONTHS`.
    """
    r = np.log1p(np.asarray(growth, dtype=float)) / 12.0
    # workloads that grow alike add up first: fewer exponentials per step
    uniq, inv = np.unique(r, return_inverse=True)
    if uniq.size < r.size:
        loads = np.stack([loads[inv == j].sum(axis=0) for j in range(uniq.size)])
        r = uniq
    flat_l = loads.reshape(loads.shape[0], -1)
    cap = np.asarray(capacity, dtype=float).reshape(-1)
    fx = np.broadcast_to(np.asarray(fixed, dtype=float), capacity.shape).reshape(-1)
    rr = r.reshape(-1, 1)
    now = flat_l.sum(axis=0) + fx
    late = np.sum(flat_l * np.exp(rr * MAX_MONTHS), axis=0) + fx
    out = np.where(now >= cap, 0.0, np.inf)
    todo = np.flatnonzero((now < cap) & (late >= cap))
    if todo.size:
        ld, c, b = flat_l[:, todo], cap[todo], fx[todo]
        t = np.full(todo.size, MAX_MONTHS)
        if r.min() > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.log((c - b) / ld.sum(axis=0)) / r.min()
            t = np.where(np.isfinite(bound), np.clip(bound, 0.0, MAX_MONTHS), t)
        for _ in range(100):
            e = ld * np.exp(rr * t)
            step = (e.sum(axis=0) + b - c) / np.maximum((e * rr).sum(axis=0), 1e-300)
            t = np.maximum(t - step, 0.0)
            if np.all(np.abs(step) <= 1e-9 * np.maximum(t, 1.0)):
                break
        out[todo] = t
    return out.reshape(capacity.shape)


def _status(pool, util, target, installed, required):
    """One sentence per scenario (the planner reads these before any number), each distinct one made once."""
    u, k, req = (np.asarray(a, dtype=float).ravel() for a in np.broadcast_arrays(util, installed, required))
    with np.errstate(invalid="ignore"):
        cat = np.select([(k == 0) & (req > 0), u >= 1.0, u > target], [0, 1, 2], 3)
        pct = np.where(np.isfinite(u), np.round(u * 100.0), -1.0)
    keys, first, inv = np.unique(np.stack([cat, pct, k, req]), axis=1, return_index=True, return_inverse=True)
    goal = f"{100 * target:.0f}%"

    def text(c, p, kk, n):
        busy = f"{p:.0f}% busy"
        return (f"{pool}: none installed and work sent to them: {n:.0f} needed" if c == 0 else
                f"{pool}: overloaded, {busy} with {kk:.0f}: the rate cannot be carried; {n:.0f} needed for the "
                f"{goal} target" if c == 1 else
                f"{pool}: {busy}, over the {goal} target: {n:.0f} needed" if c == 2 else
                f"{pool}: {busy}, within the {goal} target")
    texts = np.array([text(*col) for col in keys.T], dtype=object)
    out = texts[inv.reshape(-1)].reshape(np.shape(util))
    return out.item() if out.ndim == 0 else out


def plan(system: System, workloads, growth=1.0, months=0.0) -> PlanResult:
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

    Returns
    -------
    PlanResult
        See the module documentation for the formulas.  Never raises for an overloaded resource:
        its ``status`` and ``overloaded`` say so and ``required`` gives the count that carries it.

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
    if not isinstance(system, System):
        raise PlanError(f"system must be a System (got {value_text(system)})")
    workloads = _workload_list(workloads)
    g = np.asarray(checked(GROWTH, growth, ARGUMENT, "growth", scalar=False), dtype=float)
    t = np.asarray(checked(MONTHS, months, ARGUMENT, "months", scalar=False), dtype=float)
    profiles = [PROFILES[w.kind](w, system) for w in workloads]
    yearly = np.array([w.growth_per_year for w in workloads])
    base = [np.asarray(1.0 if p.util_form else w.rate, dtype=float) for w, p in zip(workloads, profiles)]
    try:
        shape = np.broadcast_shapes(g.shape, t.shape, *(b.shape for b in base))
    except ValueError:
        raise PlanError("the rates, growth and months are arrays of shapes that do not broadcast: "
                        + ", ".join(str(np.shape(b)) for b in (g, t, *base))) from None
    names = [w.name for w in workloads]

    def rates_at(months_ahead):
        # (W, *shape): each workload's rate; a measured utilization grows like a rate of 1
        return np.stack([np.broadcast_to(b * g * (1.0 + yg) ** (months_ahead / 12.0), shape)
                         for b, yg in zip(base, yearly)])

    lam = rates_at(t)
    lam_h = rates_at(t + system.horizon_months)

    # ---- processors: CPU per unit, MSTR administration once per queue manager
    cpu_unit = np.array([sum(p.cpu_us.values()) for p in profiles])                 # µs per unit
    admin = {}
    for p in profiles:
        if p.queue_manager is not None:
            admin[p.queue_manager] = max(admin.get(p.queue_manager, 0.0), p.mstr_per_s)
    fixed_cpu = sum(admin.values()) / 1e6                                          # processors' worth
    cpu_load = lam * cpu_unit.reshape((-1,) + (1,) * len(shape)) / 1e6               # (W, *S)
    pools = {}
    pools["processors"] = _pool_cpu(system, lam, cpu_unit, cpu_load, fixed_cpu)
    for pool in CARD_POOLS:
        pools[pool] = _pool_card(system, pool, lam, profiles, names)

    resources = {pool: _resource(system, pool, d, names, yearly, lam, lam_h, shape) for pool, d in pools.items()}

    wl = _workload_results(workloads, profiles, lam, admin, cpu_unit, cpu_load, pools, resources, shape)

    bottleneck, binds = _verdicts(resources, shape)
    return PlanResult(system=system, resources=resources, workloads=wl, bottleneck=bottleneck,
                      binds_first=binds, growth=_out(g), months=_out(t))


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


def _resource(system, pool, d, names, yearly, lam, lam_h, shape) -> ResourceResult:
    """One pool's answers from its station ``d`` (:func:`_pool_cpu` / :func:`_pool_card`): utilization,
    shares, counts required now and at the horizon (utilization and wait targets), headroom, months."""
    target = system.max_utilization
    k = system.installed(pool)
    other = system.other(pool)
    fixed = d["fixed"]
    var = d["loads"].sum(axis=0)
    # a load too small for its factor to be a float (subnormal rates) has unbounded headroom
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = (target - other) * k - fixed
        headroom = np.where(var > 0, np.maximum(room, 0.0) / np.where(var > 0, var, 1.0), np.inf)
        util = np.where(k > 0, (var + fixed) / max(k, 1) + other, np.where(var + fixed > 0, np.inf, 0.0))
    if k == 0:
        headroom = np.where(var > 0, 0.0, np.inf)
    months_to = _months(d["loads"], yearly, fixed, np.broadcast_to((target - other) * k, shape).astype(float))
    required = _counts(var + fixed, other, target)
    required_h = _counts(d["loads_at"](lam_h).sum(axis=0) + fixed, other, target)
    if pool in CARD_POOLS and system.max_wait_ms is not None:
        required = _meet_wait(required, *d["mix"](lam), other, system.max_wait_ms)
        required_h = _meet_wait(required_h, *d["mix"](lam_h), other, system.max_wait_ms)
    overloaded = util >= 1.0
    by = {n: _out(np.where(k > 0, ld / max(k, 1), np.where(ld > 0, np.inf, 0.0))) for n, ld in zip(names, d["loads"])}
    return ResourceResult(
        installed=k, utilization=_out(util), busy=_out(var + fixed), by_workload=by,
        other=_out(np.broadcast_to(other + (fixed / k if k else 0.0), shape)), rate=_out(d["rate"]),
        exec_ms=_out(d["exec_ms"]), scv=_out(d["scv"]), wait_ms=_out(np.where(overloaded, np.nan, d["wait_ms"])),
        required=_out(required.astype(np.int64)), headroom=_out(headroom), months_to_target=_out(months_to),
        required_at_horizon=_out(required_h.astype(np.int64)),
        overloaded=_out(overloaded), rows={k_: _out(v) for k_, v in d.get("rows", {}).items()},
        row_rates={k_: _out(v) for k_, v in d.get("row_rates", {}).items()},
        row_shares={row: {w_: _out(v) for w_, v in b.items()} for row, b in d.get("row_shares", {}).items()},
        status=_status(pool, util, target, k, required))


def _workload_results(workloads, profiles, lam, admin, cpu_unit, cpu_load, pools, resources, shape) -> dict:
    """Each workload's rate, CPU by address space (MSTR's administration spread over its queue
    manager's AMS rate), card requests and queueing delay per unit."""
    qm_rate = {}
    for p, l in zip(profiles, lam):
        if p.queue_manager is not None:      # in request/reply transactions per second
            qm_rate[p.queue_manager] = qm_rate.get(p.queue_manager, 0.0) + l * p.txn_per_unit
    for qm, rate in qm_rate.items():
        with np.errstate(divide="ignore", over="ignore"):
            tiny = (rate > 0) & ~np.isfinite(admin[qm] / np.where(rate > 0, rate, 1.0))
        if np.any(tiny):
            raise PlanError(f"the AMS rate of queue manager {qm} ({float(np.ravel(rate)[np.argmax(np.ravel(tiny))]):g}/s) "
                            f"is too small to spread its administration ({admin[qm]:g} µs/s) over: "
                            "give 0 or a rate of at least 1e-300 transactions/s")
    cpu_wait = np.where(resources["processors"].overloaded, np.nan, pools["processors"]["wait_ms"])
    wl = {}
    for i, (w, p) in enumerate(zip(workloads, profiles)):
        cpu = {k_: _out(np.broadcast_to(v, shape)) for k_, v in p.cpu_us.items()}
        if p.queue_manager is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                cpu["MSTR"] = _out(np.where(qm_rate[p.queue_manager] > 0,
                                            p.txn_per_unit * admin[p.queue_manager] / qm_rate[p.queue_manager], 0.0))
        cpu["total"] = _out(sum(np.asarray(v) for v in cpu.values()))
        delay = np.where(cpu_unit[i] > 0, cpu_wait, 0.0)
        reqs, card_ms = {}, {}
        for pool in CARD_POOLS:
            n, tt, _ = p.classes[pool]
            reqs[pool] = float(n.sum())
            card_ms[pool] = float(np.dot(n, tt))
            pw = np.where(resources[pool].overloaded, np.nan, pools[pool]["wait_ms"])
            delay = delay + np.where(reqs[pool] > 0, reqs[pool] * pw, 0.0)
        wl[w.name] = WorkloadResult(kind=w.kind, unit=p.unit or RATE_UNITS[w.kind], rate=_out(lam[i]), cpu_us=cpu,
                                    requests=reqs, card_ms=card_ms, queueing_ms=_out(delay),
                                    processors_busy=_out(cpu_load[i]))
    return wl


def _verdicts(resources, shape) -> tuple:
    """(the busiest pool, the pool the growth brings to its target first; among pools never
    reached, or reached at once, the one with the least headroom)."""
    def stacked(attr):
        return np.stack([np.asarray(getattr(resources[p], attr), dtype=float) * np.ones(shape) for p in POOLS])
    bottleneck = np.asarray(POOLS)[np.argmax(stacked("utilization"), axis=0)]
    first = np.lexsort((stacked("headroom"), stacked("months_to_target")), axis=0)[0]
    return _out(bottleneck), _out(np.asarray(POOLS)[first])


def _pool_cpu(system, lam, cpu_unit, cpu_load, fixed):
    """The processors as one M/G/c station: each unit of work one exponential job, the
    administration at the mean job."""
    shape = lam.shape[1:]
    k = system.processors
    s = (cpu_unit / 1e6).reshape((-1,) + (1,) * len(shape))                       # seconds per job
    jobs = np.where(s > 0, lam, 0.0)
    n = jobs.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = np.where(n > 0, (jobs * s).sum(axis=0) / np.where(n > 0, n, 1.0), 0.0)
        m2 = np.where(n > 0, (jobs * s * s).sum(axis=0) / np.where(n > 0, n, 1.0), 0.0)
        lam_bg = np.where(m1 > 0, fixed / np.where(m1 > 0, m1, 1.0), 0.0)
        lam_tot = n + lam_bg
        # the background jobs at the mean: E[S^2] of the mixture of exponentials, 2 s^2 per class
        es2 = np.where(lam_tot > 0, (2.0 * m2 * n + 2.0 * m1 * m1 * lam_bg) / np.where(lam_tot > 0, lam_tot, 1.0), 0.0)
        scv = np.where(m1 > 0, es2 / np.where(m1 > 0, m1 * m1, 1.0) - 1.0, 0.0)
    util = (cpu_load.sum(axis=0) + fixed) / k
    ok = util < 1.0
    wait = np.zeros(shape)
    if ok.any():
        wait[ok] = mgc_wait_by_scv(lam_tot[ok], m1[ok], k, scv[ok]) * 1000.0
    return {"loads": cpu_load, "fixed": fixed, "rate": n, "exec_ms": m1 * 1000.0, "scv": scv, "wait_ms": wait,
            "loads_at": lambda lam_h: lam_h * cpu_unit.reshape((-1,) + (1,) * len(shape)) / 1e6}


def _pool_card(system, pool, lam, profiles, names):
    """A Crypto Express pool as one M/G/c station: the mixture of every workload's requests."""
    shape = lam.shape[1:]
    k = system.installed(pool)
    other = system.other(pool)
    ns = [p.classes[pool][0] for p in profiles]
    ts = [p.classes[pool][1] for p in profiles]
    per_unit_ms = np.array([float(np.dot(n, tt)) for n, tt in zip(ns, ts)])        # card ms per unit
    busy_unit = np.array([p.busy[pool] for p in profiles])                          # cards' worth per unit
    expand = (-1,) + (1,) * len(shape)
    unit_load = (per_unit_ms / 1000.0 + busy_unit).reshape(expand)
    loads = lam * unit_load                                                        # (W, *S) cards' worth
    req_unit = np.array([float(n.sum()) for n in ns]).reshape(expand)
    t1 = np.array([float(np.dot(n, tt)) for n, tt in zip(ns, ts)]).reshape(expand)         # Σ n t
    t2 = np.array([float(np.dot(n, tt * tt)) for n, tt in zip(ns, ts)]).reshape(expand)    # Σ n t²

    def mix(rates):
        """(requests/s, mean EXEC ms, SCV, cards' worth with no request count) at these rates."""
        r = (rates * req_unit).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            m1 = np.where(r > 0, (rates * t1).sum(axis=0) / np.where(r > 0, r, 1.0), 0.0)
            m2 = np.where(r > 0, (rates * t2).sum(axis=0) / np.where(r > 0, r, 1.0), 0.0)
            scv = np.where(m1 > 0, np.maximum(m2 / np.where(m1 > 0, m1 * m1, 1.0) - 1.0, 0.0), 0.0)
        return r, m1, scv, (rates * busy_unit.reshape(expand)).sum(axis=0)

    r, m1, scv, unknown = mix(lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_tot = r + np.where(m1 > 0, (unknown + other * k) / np.where(m1 > 0, m1 / 1000.0, 1.0), 0.0)
    util = np.where(k > 0, loads.sum(axis=0) / max(k, 1) + other, np.inf)
    ok = (util < 1.0) & (r > 0)
    wait = np.zeros(shape)
    if ok.any():
        wait[ok] = mgc_wait_by_scv(lam_tot[ok], m1[ok] / 1000.0, k, scv[ok]) * 1000.0
    out = {"loads": loads, "fixed": 0.0, "rate": r, "exec_ms": m1, "scv": scv, "wait_ms": wait,
           "loads_at": lambda lam_h: lam_h * unit_load, "mix": mix}
    if pool == "accelerators":
        # RMF's ME and CRT rows, and each workload's part of them (utilization of the pool)
        kk = max(k, 1)
        by_row = {"ME": {}, "CRT": {}}
        row_rates = {"ME": np.zeros(shape), "CRT": np.zeros(shape)}
        for name, p, l in zip(names, profiles, lam):
            n, tt, labels = p.classes[pool]
            for f, row in (("RSA_ME", "ME"), ("RSA_CRT", "CRT")):
                j = labels.index(f) if f in labels else None
                by_row[row][name] = np.zeros(shape) if j is None else l * n[j] * tt[j] / 1000.0 / kk
                if j is not None:
                    row_rates[row] = row_rates[row] + l * n[j]
        row_rates["other"] = np.maximum(r - row_rates["ME"] - row_rates["CRT"], 0.0)
        rows = {row: sum(by_row[row].values()) for row in ("ME", "CRT")}
        # rounding can leave -1e-17 where nothing else uses the card
        rows["other"] = np.maximum(loads.sum(axis=0) / kk - rows["ME"] - rows["CRT"], 0.0)
        out.update(rows=rows, row_rates=row_rates, row_shares=by_row)
    return out
