"""The plan as the spreadsheet asks for it: PLAN_RESOURCES, PLAN_WORKLOADS, PLAN_TIMELINE, PLAN_TEXT
and PLAN_VALUE.

Each takes the Workloads table, the System block and (optionally) the Profiles and Orders tables
as ranges of cells, reads them with :mod:`.files`, plans with :func:`~.evaluate.plan` and returns
table rows or one number.  The profiles and the orders come last (after the add-in's
``params_file``): a formula written by an older template, without them, means what it meant.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from ..._text import value_text
from ..._validate import NotAvailableError, UnstableQueueError
from ...datafiles import data_path
from ...figures import table_in_force
from ...params import binding, current_parameters, normalize_choice
from ...remember import Remembered
from .evaluate import count_text, plan
from .inputs import INSTALLABLE, MAX_MONTHS, POOLS, PlanError
from .migration import moved_parts
from . import read as reader          # the one reader of a plan (read.read_plan)

__all__ = ["plan_quantile",
           "params_in_force", "plan_resources", "plan_workloads", "plan_value", "plan_timeline", "plan_text", "scenario_lines",
           "RESOURCE_QUANTITIES",
           "WORKLOAD_QUANTITIES", "RESOURCE_COLUMNS", "WORKLOAD_COLUMNS", "TIMELINE_COLUMNS", "TEXT_COLUMNS"]

# ----------------------------------------------------------------------------- spreadsheet tables
# A plan in a workbook: a Workloads table (a header row of keys, a row per workload), a System
# block (a key and a value per row) and a Profiles table (a header row of profile names, a column
# of factors under each).  The catalog functions take the ranges as they are.
RESOURCE_QUANTITIES = ("utilization", "required", "required_at_horizon", "headroom", "months_to_target",
                       "wait_ms", "busy", "installed", "average_utilization", "failover_utilization",
                       "failover_required", "months_to_limit")


WORKLOAD_QUANTITIES = ("rate", "cpu_us", "queueing_ms", "processors", "coprocessors", "accelerators")


# Columns are only ever appended: a workbook of an older template holds the table in a
# fixed-width range and refers to its cells by position.
RESOURCE_COLUMNS = ("resource", "installed", "utilization", "required", "required_at_horizon", "headroom",
                    "months_to_target", "wait_ms", "status", "peak_interval", "average_utilization",
                    "failover_utilization", "failover_required", "months_to_limit", "other")


WORKLOAD_COLUMNS = ("name", "kind", "rate", "unit", "cpu_us", "processors", "coprocessors", "accelerators",
                    "queueing_ms", "peak_rate", "meaning")


TIMELINE_COLUMNS = ("resource", "add", "after", "install_by_month", "order_by_month", "order_now",
                    "late_by_months", "reason", "text")


TEXT_COLUMNS = ("text",)


def _key(x):
    """A hashable image of a range (tuples of rows), a number or an array of numbers (a sweep's
    growth or months); _UNHASHABLE for anything else."""
    if isinstance(x, (tuple, list)):
        out = tuple(_key(v) for v in x)
        return _UNHASHABLE if any(v is _UNHASHABLE for v in out) else out
    if x is None or isinstance(x, (str, bool, int, float)):
        return (type(x).__name__, x)
    if isinstance(x, np.ndarray) and x.dtype.kind in "fiub":
        return ("ndarray", x.dtype.str, x.shape, x.tobytes())
    return _UNHASHABLE


_UNHASHABLE = object()
# The keys of the last tables, by identity: a workbook's PLAN_* cells hand over the same
# converted tables (tuples of tuples, which cannot change) call after call.
_TABLE_KEYS = Remembered(16)
_SCALARS = frozenset({str, float, int, bool, type(None)})


def _table_key(x):
    """:func:`_key` of a range, remembered by identity for a tuple of tuples of scalars (the
    entry keeps the table, so its id is no other object's while it lives)."""
    if not (type(x) is tuple and all(type(row) is tuple and all(type(v) in _SCALARS for v in row)
                                     for row in x)):
        return _key(x)
    return _TABLE_KEYS.get(id(x), lambda: _key(x), keep=x)


# The last plans made from cells: a Plan sheet asks PLAN_RESOURCES, PLAN_WORKLOADS, PLAN_TIMELINE,
# PLAN_TEXT and the Results sheet's PLAN_VALUEs for the same plan.
_CACHE = Remembered(8)
# The tables read (and each workload's model checked) for the last sets of cells: the growth
# table's PLAN_VALUEs ask the same tables at a dozen months each.
_READ = Remembered(4)


def _planned(workloads, system, profiles, growth, months, draws=None, orders=None, migrations=None):
    """``(System, PlanResult)`` of one scenario from the ranges, remembered for the same cells and
    parameters (and the same ``draws`` dict, :func:`plan`'s); the tables' reading is remembered
    apart, for the same cells at other months."""
    # the binding (a using_values override and the parameter set), not the set alone: values
    # given to using_values over the same set are other parameters
    params = binding() if draws is None else (*binding(), draws)
    # and the figures table in force: the models read their published figures from it
    parts = (table_in_force(), _table_key(workloads), _table_key(system), _table_key(profiles), _table_key(orders),
             _table_key(migrations), _key(growth), _key(months))
    key = None if any(p is _UNHASHABLE for p in parts) else (tuple(map(id, params)), *parts)

    def read():
        s, ws = reader.read_plan(reader.PlanTables(workloads, system, profiles, orders=orders, migrations=migrations))
        return s, tuple(ws)

    def make():
        # the System and Workloads are frozen: one reading serves every scenario of the tables
        s, ws = _READ.get(None if key is None else (key[0][:2], *key[1:7]), read, keep=params)
        return s, plan(s, ws, growth, months, draws=draws)
    return _CACHE.get(key, make, keep=params)


def _one(workloads, system, profiles, growth, months, name: str, orders=None, migrations=None):
    s, r = _planned(workloads, system, profiles, growth, months, orders=orders, migrations=migrations)
    if np.ndim(r.bottleneck):
        raise PlanError(f"{name} shows one scenario: growth and months must be single numbers")
    return s, r


def _text(x, kind: str):
    x = float(x)
    if math.isnan(x):
        return "overloaded"
    if math.isinf(x):
        return {"months": "never", "headroom": "unbounded", "utilization": "none installed",
                "failover": "none left"}[kind]
    return x


def plan_resources(workloads, system, growth=1.0, months=0.0, profiles=None, orders=None, migrations=None) -> list:
    """The plan's resources as table rows (the Plan sheet's first table), from the ranges.

    Parameters
    ----------
    workloads : 2-D sequence
        The Workloads table (header row first), see :func:`workloads_from_rows`.
    system : 2-D sequence
        The System block, rows of (key, value), see :func:`system_from_rows`.
    growth, months : float
        As :func:`plan` (one scenario).
    orders : 2-D sequence, optional
        The orders table: a header row ``resource``, ``count``, ``arrives``, then servers already
        ordered, one order a row (:func:`~.files.orders_from_rows`); None or empty: none.
    migrations : 2-D sequence, optional
        The migrations table: a header row ``workload``, ``to``, ``start``, ``months``, ``share``,
        then one quantum-safe migration a row (:func:`~.files.migrations_from_rows`); None or
        empty: none.
    profiles : 2-D sequence, optional
        The Profiles table (a header row of names, factors under each), see
        :func:`profiles_from_rows`; None: no profiles.

    Returns
    -------
    list of dict
        One per pool, keys :data:`RESOURCE_COLUMNS`, each judged at its peak interval; months
        never reached read ``"never"``, a wait of an overloaded pool ``"overloaded"``, a count
        beyond what an LPAR can have ``"more than N"``, the one-card-failed columns of the
        processors (or with ``failover = "none"``) None.  ``other``: the share other LPARs keep
        busy (cards) or MQ MSTR administration (processors), which the workloads' shares leave out.
    """
    _, r = _one(workloads, system, profiles, growth, months, "PLAN_RESOURCES", orders, migrations)
    rows = []
    for pool in POOLS:
        x = r.resources[pool]
        f = x.failover
        rows.append({"resource": pool, "installed": x.installed, "utilization": _text(x.utilization, "utilization"),
                     "required": count_text(x.required, pool),
                     "required_at_horizon": count_text(x.required_at_horizon, pool),
                     "headroom": _text(x.headroom, "headroom"), "months_to_target": _text(x.months_to_target, "months"),
                     "wait_ms": _text(x.wait_ms, "wait"), "status": x.status, "peak_interval": str(x.peak_interval),
                     "average_utilization": _text(x.average_utilization, "utilization"),
                     "failover_utilization": None if f is None else _text(f.utilization, "failover"),
                     "failover_required": None if f is None else count_text(f.required, pool),
                     "months_to_limit": None if f is None else _text(f.months_to_limit, "months"),
                     "other": float(x.other)})
    return rows


def plan_workloads(workloads, system, growth=1.0, months=0.0, profiles=None, orders=None, migrations=None) -> list:
    """The plan's workloads as table rows (keys :data:`WORKLOAD_COLUMNS`): rate (the day's average,
    or a window's rate while it runs), CPU µs per unit, its share of each pool's utilization at
    that pool's peak, its queueing delay per unit (``"overloaded"`` where a pool it uses is), its
    highest rate in any interval of the busiest day and the rate in words (profile, window)."""
    _, r = _one(workloads, system, profiles, growth, months, "PLAN_WORKLOADS", orders, migrations)
    out = []
    for name, w in r.workloads.items():
        out.append({"name": name, "kind": w.kind, "rate": float(w.rate), "unit": w.unit,
                    "cpu_us": float(w.cpu_us["total"]),
                    **{p: _text(r.resources[p].by_workload[name], "utilization") for p in POOLS},
                    "queueing_ms": _text(w.queueing_ms, "wait"), "peak_rate": float(w.peak_rate),
                    "meaning": str(w.meaning)})
    return out


def plan_timeline(workloads, system, growth=1.0, months=0.0, profiles=None, orders=None, migrations=None) -> list:
    """The purchase timeline as table rows (keys :data:`TIMELINE_COLUMNS`), earliest order first:
    what to add to which pool, installed by and ordered by which month (months from the scenario),
    whether the order date has passed, why, and the sentence ``cryptoplan plan`` prints.  No row:
    nothing to add within the horizon."""
    _, r = _one(workloads, system, profiles, growth, months, "PLAN_TIMELINE", orders, migrations)
    return [{**p.to_dict(), "text": p.text(r.system.start)} for p in r.timeline or ()]


def _not_peak_day(result) -> str:
    """" (not on: restart-storm)": the workloads the busiest-day factor leaves as they are."""
    moved = moved_parts(result.system)
    off = [name for name, w in result.workloads.items() if not w.peak_day and name not in moved]
    return f" (not on {', '.join(off)})" if off and result.system.peak_day_factor != 1.0 else ""


def scenario_lines(result) -> list:
    """What a plan's answers are for, as ``cryptoplan plan`` heads its report (growth, months, the
    day's intervals, peak day, failover, site failover, lead time, horizon, the system), then the
    parameter set in force (tests/test_plan_sheet.py holds these to the command line's)."""
    s = result.system
    n = result.intervals
    day = ("one interval, the whole day (no daily profile)" if n == 1 else
           f"{n:,} intervals of 1 minute (a window off RMF's quarter hours runs at its own rate), judged at "
           "each resource's peak" if n == 1440 else
           f"{n} intervals of {1440 // n} minutes (RMF INTVAL {1440 // n}), judged at each resource's peak")
    moved = moved_parts(s)          # (a migrated part is its workload's: not named twice)
    site = [name for name, w in result.workloads.items() if w.site_failover and name not in moved]
    fail = ("one card failed: each card pool within "
            f"{s.failover_max_utilization:.0%} with one card out" if s.failover == "one_card" else "none")
    cal = "" if s.start is None else f" (month 0: {s.start})"
    return [f"Scenario: growth x{float(result.growth):g} on every rate, {float(result.months):g} months ahead{cal}; "
            f"{day}; busiest day x{s.peak_day_factor:g} the average day{_not_peak_day(result)}",
            f"Failover: {fail}; site failover x{s.site_failover_factor:g}"
            + (f" on {', '.join(site)}" if site else " (no workload marked)")
            + f"; lead time {s.lead_time_months:g} months; horizon {s.horizon_months:g} months",
            f"{_n(s.processors, 'general processor')}, {_n(s.coprocessors, 'coprocessor')}, "
            f"{_n(s.accelerators, 'accelerator')} "
            f"({s.platform}, {s.card_generation}); utilization target {s.max_utilization:.0%}"
            + (f", card wait target {s.max_wait_ms:g} ms per request" if s.max_wait_ms is not None else "")
            + "; " + s.other_reading(),
            "Model parameters: " + params_in_force()] + site_parameters()


def site_parameters() -> list:
    """The parameters a site's data set in the file in force (``cryptoplan calibrate``), each with
    its value, the published one and the source: one line, or none for a file that sets none."""
    doc = current_parameters().document.get("parameters") or {}
    set_ = []
    for name, p in doc.items():
        src = str(p.get("source", ""))
        if src.startswith(("calibrated on site data", "measured on site data")):
            how = "measured" if src.startswith("measured") else "calibrated"
            pub = re.search(r"published ([-+0-9.eE]+)\)?$", src)
            unit = "" if p.get("unit", "1") == "1" else f" {p['unit']}"
            set_.append(f"{name} {float(p['value']):.4g}{unit}"
                        + (f" ({how}; published {float(pub.group(1)):.4g})" if pub else f" ({how})"))
    return [f"Set by the site's data (the rest as published): {'; '.join(set_)}"] if set_ else []


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}{'' if k == 1 else 's'}"


def params_in_force() -> str:
    """The parameter set in force: "the packaged fit (cryptoplan data/params.json)" or its file."""
    p = current_parameters().path
    try:
        packaged = Path(p).resolve() == Path(data_path("params.json")).resolve()
    except (OSError, ValueError):
        packaged = False
    return "the packaged fit (cryptoplan data/params.json)" if packaged else str(p)


def plan_text(workloads, system, growth=1.0, months=0.0, profiles=None, orders=None, migrations=None) -> list:
    """The plan's sentences as table rows (one column, ``text``): the scenario it is for
    (:func:`scenario_lines`), each pool's verdict at its peak and each card pool's with one card
    failed, the busiest pool and the one the growth brings to its target first, then each warning
    (``"Warning: ..."``): the sentences ``cryptoplan plan`` prints."""
    _, r = _one(workloads, system, profiles, growth, months, "PLAN_TEXT", orders, migrations)
    lines = scenario_lines(r)
    lines += [str(r.resources[p].status) for p in POOLS]
    lines += [str(r.resources[p].failover.status) for p in POOLS if r.resources[p].failover is not None]
    first = float(r.resources[str(r.binds_first)].months_to_target)
    when = ("already at or over it" if first == 0 else f"never within {MAX_MONTHS / 12:.0f} years"
            if math.isinf(first) else f"in {first:.1f} months")
    lines.append(f"Busiest: {r.bottleneck}.  First to reach its target as the workloads grow: "
                 f"{r.binds_first} ({when}).")
    lines += [f"Warning: {w}" for w in r.warnings]
    return [{"text": line} for line in lines]


def plan_value(workloads, system, resource, quantity, growth=1.0, months=0.0, profiles=None, orders=None,
               migrations=None):
    """One number of the plan: a pool's or a workload's, over scenarios of growth and months.

    Parameters
    ----------
    workloads, system : 2-D sequences
        As :func:`plan_resources`.
    resource : str
        ``"processors"``, ``"coprocessors"``, ``"accelerators"``, or a workload's name.
    quantity : str
        For a pool, one of :data:`RESOURCE_QUANTITIES` (``failover_*`` and ``months_to_limit``:
        the card pool with one card failed); for a workload, one of :data:`WORKLOAD_QUANTITIES`
        (``processors`` etc.: its share of that pool's utilization; ``cpu_us``: CPU µs per unit
        in total).
    growth, months : float or array_like
        As :func:`plan`; arrays give a capacity curve.
    profiles : 2-D sequence, optional
        As :func:`plan_resources`.

    Returns
    -------
    float or ndarray

    Raises
    ------
    UnstableQueueError
        For the wait (or queueing) of an overloaded pool, or a pool with no cards that gets work.
    NotAvailableError
        For months to a target (or to the failover limit) never reached within
        :data:`MAX_MONTHS`, the headroom of a pool nothing grows on, a count beyond what an
        LPAR can have, or a one-card-failed quantity of the processors or with ``failover = "none"``.
    PlanError
        For a bad table, resource or quantity.
    """
    return _value(workloads, system, resource, quantity, growth, months, profiles, None, None, orders, migrations)


def plan_quantile(workloads, system, resource, quantity, draws: dict, quantile: float, growth=1.0, months=0.0,
                  profiles=None, orders=None, migrations=None):
    """:func:`plan_value`'s number at a quantile of parameter draws.

    Parameters
    ----------
    draws : dict
        Parameter draws (:func:`plan`'s ``draws``).
    quantile : float
        In (0, 1): the number is the draw's own value at that quantile of the quantity
        (``numpy.quantile``'s ``inverted_cdf``), an overloaded draw's wait counted as longer than
        any other.
    workloads, system, resource, quantity, growth, months, profiles
        As :func:`plan_value`, which says what it raises (for the draw at that quantile).
    """
    return _value(workloads, system, resource, quantity, growth, months, profiles, draws, float(quantile), orders,
                  migrations)


def _value(workloads, system, resource, quantity, growth, months, profiles, draws, quantile, orders=None,
           migrations=None):
    if not isinstance(resource, str) or not resource.strip():
        raise PlanError(f"resource must be processors, coprocessors, accelerators or a workload's name "
                        f"(got {value_text(resource)})")
    res = resource.strip()
    q = normalize_choice("quantity", quantity, RESOURCE_QUANTITIES if res in POOLS else WORKLOAD_QUANTITIES)
    s, r = _planned(workloads, system, profiles, growth, months, draws, orders, migrations)
    # each scenario's status sentence names why a number is an error: made only when one is
    if res in POOLS:
        x = r.resources[res]
        if q in _FAILOVER:
            if x.failover is None:
                why = ("the processors have no card to fail" if res == "processors"
                       else "the System block's failover is none")
                raise NotAvailableError(f"{q} of {res}: {why}")
            fo = x.failover
            out = np.asarray(getattr(fo, _FAILOVER[q]), dtype=float)

            def status_of():
                return fo.status
        else:
            out = np.asarray(getattr(x, q), dtype=float)

            def status_of():
                return x.status
    elif res in r.workloads:
        w = r.workloads[res]
        out = np.asarray({"rate": w.rate, "cpu_us": w.cpu_us["total"], "queueing_ms": w.queueing_ms}.get(
            q, r.resources.get(q).by_workload[res] if q in POOLS else None), dtype=float)

        def status_of():
            if q == "queueing_ms":       # name the overloaded pool the workload uses
                # (a pool is used if the workload sends it requests under some draw)
                used = [p for p in POOLS if (p == "processors" or np.any(np.asarray(w.requests[p]) > 0))]
                return np.select([np.asarray(r.resources[p].overloaded) for p in used],
                                 [np.asarray(r.resources[p].status, dtype=object) for p in used], "")
            return r.resources[str(np.ravel(r.bottleneck)[0])].status
    else:
        raise PlanError(f"resource must be processors, coprocessors, accelerators or a workload's name "
                        f"(got {value_text(resource)}; the workloads: {', '.join(r.workloads)})")

    values, pick = out, None
    if draws is not None and out.ndim:          # (a number the draws do not move, installed: itself)
        out, pick = _at_quantile(out, quantile)

    def statuses():
        """Each element's status sentence (of the draw at the quantile, under draws)."""
        full = np.broadcast_to(np.asarray(status_of(), dtype=object), values.shape)
        return full if pick is None else np.take_along_axis(full, pick, axis=-1)[..., 0]
    bad = ~np.isfinite(out)
    if res in POOLS and q in _COUNTS:
        too_many = np.isfinite(out) & (out > INSTALLABLE[res])
        if too_many.any():
            def beyond(i: int) -> str:
                return (f"{res}: more than {INSTALLABLE[res]} needed ({q}), more than one LPAR can have: "
                        "split the workloads or raise the target")
            raise NotAvailableError(beyond(0), mask=too_many if out.ndim else np.asarray(True),
                                    element_message=beyond)
    if bad.any():
        never = q in ("months_to_target", "headroom", "months_to_limit")
        if q == "months_to_target":
            what = (f"{res} never reach the {s.max_utilization:.0%} target within {MAX_MONTHS:g} months at these "
                    "growth rates")
        elif q == "months_to_limit":
            what = (f"{res} with one card failed never reach the {s.failover_max_utilization:.0%} failover limit "
                    f"within {MAX_MONTHS:g} months at these growth rates")
        else:
            what = f"no load on {res} grows: its headroom is unbounded"
        flat = np.ravel(statuses()) if not never else None

        def message(i: int) -> str:
            return what if never else str(flat[i])
        first = int(np.flatnonzero(np.ravel(bad))[0])
        err = NotAvailableError if never else UnstableQueueError
        raise err(message(first), mask=bad if out.ndim else np.asarray(True), element_message=message)
    return float(out) if out.ndim == 0 else out


def _at_quantile(values, q: float) -> tuple:
    """The ``q`` quantile along the draws (last) axis, and which draw it is (shape ``(..., 1)``): the
    smallest value with at least ``q`` of the draws at or below it (NaN, an overloaded wait, sorts
    last)."""
    v = np.where(np.isnan(values), np.inf, values)
    d = v.shape[-1]
    j = max(int(np.ceil(q * d)) - 1, 0)
    pick = np.take_along_axis(np.argsort(v, axis=-1, kind="stable"), np.full(v.shape[:-1] + (1,), j), axis=-1)
    return np.take_along_axis(values, pick, axis=-1)[..., 0], pick


# PLAN_VALUE's one-card-failed quantities -> FailoverResult's attributes; the counts it checks
# against what an LPAR can have
_FAILOVER = {"failover_utilization": "utilization", "failover_required": "required",
             "months_to_limit": "months_to_limit"}
_COUNTS = ("required", "required_at_horizon", "failover_required")
