"""The plan as the spreadsheet asks for it: PLAN_RESOURCES, PLAN_WORKLOADS and PLAN_VALUE.

Each takes the Workloads table and the System block as ranges of cells, reads them with
:mod:`.files`, plans with :func:`~.evaluate.plan` and returns table rows or one number.
"""

from __future__ import annotations

import math

import numpy as np

from ..._text import value_text
from ..._validate import NotAvailableError, UnstableQueueError
from ...params import normalize_choice
from .evaluate import plan
from .files import system_from_rows, workloads_from_rows
from .inputs import MAX_MONTHS, POOLS, PlanError

__all__ = ["plan_resources", "plan_workloads", "plan_value", "RESOURCE_QUANTITIES", "WORKLOAD_QUANTITIES",
           "RESOURCE_COLUMNS", "WORKLOAD_COLUMNS"]

# ----------------------------------------------------------------------------- spreadsheet tables
# A plan in a workbook: a Workloads table (a header row of keys, a row per workload) and a
# System block (a key and a value per row).  The catalog functions PLAN_RESOURCES,
# PLAN_WORKLOADS and PLAN_VALUE take the two ranges as they are.
RESOURCE_QUANTITIES = ("utilization", "required", "required_at_horizon", "headroom", "months_to_target",
                       "wait_ms", "busy", "installed")


WORKLOAD_QUANTITIES = ("rate", "cpu_us", "queueing_ms", "processors", "coprocessors", "accelerators")


RESOURCE_COLUMNS = ("resource", "installed", "utilization", "required", "required_at_horizon", "headroom",
                    "months_to_target", "wait_ms", "status")


WORKLOAD_COLUMNS = ("name", "kind", "rate", "unit", "cpu_us", "processors", "coprocessors", "accelerators",
                    "queueing_ms")


def _tables(workloads, system):
    ws = workloads_from_rows(workloads, "workloads")
    names = [w.name for w in ws]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise PlanError(f"workloads: the name {dup!r} is used twice; names must be unique")
    return ws, system_from_rows(system, "system")


def _text(x, kind: str):
    x = float(x)
    if math.isnan(x):
        return "overloaded"
    if math.isinf(x):
        return {"months": "never", "headroom": "unbounded", "utilization": "none installed"}[kind]
    return x


def plan_resources(workloads, system, growth=1.0, months=0.0) -> list:
    """The plan's resources as table rows (the Plan sheet's first table), from the two ranges.

    Parameters
    ----------
    workloads : 2-D sequence
        The Workloads table (header row first), see :func:`workloads_from_rows`.
    system : 2-D sequence
        The System block, rows of (key, value), see :func:`system_from_rows`.
    growth, months : float
        As :func:`plan` (one scenario).

    Returns
    -------
    list of dict
        One per pool, keys :data:`RESOURCE_COLUMNS`; months never reached read ``"never"``, a
        wait of an overloaded pool ``"overloaded"``.
    """
    ws, s = _tables(workloads, system)
    r = plan(s, ws, growth, months)
    if np.ndim(r.bottleneck):
        raise PlanError("PLAN_RESOURCES shows one scenario: growth and months must be single numbers")
    rows = []
    for pool in POOLS:
        x = r.resources[pool]
        rows.append({"resource": pool, "installed": x.installed, "utilization": _text(x.utilization, "utilization"),
                     "required": x.required, "required_at_horizon": x.required_at_horizon,
                     "headroom": _text(x.headroom, "headroom"), "months_to_target": _text(x.months_to_target, "months"),
                     "wait_ms": _text(x.wait_ms, "wait"), "status": x.status})
    return rows


def plan_workloads(workloads, system, growth=1.0, months=0.0) -> list:
    """The plan's workloads as table rows (keys :data:`WORKLOAD_COLUMNS`): rate, CPU µs per unit,
    its share of each pool's utilization and its queueing delay per unit (``"overloaded"`` where a
    pool it uses is)."""
    ws, s = _tables(workloads, system)
    r = plan(s, ws, growth, months)
    if np.ndim(r.bottleneck):
        raise PlanError("PLAN_WORKLOADS shows one scenario: growth and months must be single numbers")
    out = []
    for name, w in r.workloads.items():
        out.append({"name": name, "kind": w.kind, "rate": float(w.rate), "unit": w.unit,
                    "cpu_us": float(w.cpu_us["total"]),
                    **{p: _text(r.resources[p].by_workload[name], "utilization") for p in POOLS},
                    "queueing_ms": _text(w.queueing_ms, "wait")})
    return out


def plan_value(workloads, system, resource, quantity, growth=1.0, months=0.0):
    """One number of the plan: a pool's or a workload's, over scenarios of growth and months.

    Parameters
    ----------
    workloads, system : 2-D sequences
        As :func:`plan_resources`.
    resource : str
        ``"processors"``, ``"coprocessors"``, ``"accelerators"``, or a workload's name.
    quantity : str
        For a pool, one of :data:`RESOURCE_QUANTITIES`; for a workload, one of
        :data:`WORKLOAD_QUANTITIES` (``processors`` etc.: its share of that pool's utilization;
        ``cpu_us``: CPU µs per unit in total).
    growth, months : float or array_like
        As :func:`plan`; arrays give a capacity curve.

    Returns
    -------
    float or ndarray

    Raises
    ------
    UnstableQueueError
        For the wait (or queueing) of an overloaded pool, or a pool with no cards that gets work.
    NotAvailableError
        For months to a target never reached within :data:`MAX_MONTHS`, or the headroom of a pool
        nothing grows on.
    PlanError
        For a bad table, resource or quantity.
    """
    if not isinstance(resource, str) or not resource.strip():
        raise PlanError(f"resource must be processors, coprocessors, accelerators or a workload's name "
                        f"(got {value_text(resource)})")
    res = resource.strip()
    ws, s = _tables(workloads, system)
    q = normalize_choice("quantity", quantity, RESOURCE_QUANTITIES if res in POOLS else WORKLOAD_QUANTITIES)
    r = plan(s, ws, growth, months)
    if res in POOLS:
        x = r.resources[res]
        out = np.asarray(getattr(x, q), dtype=float)
        status = np.broadcast_to(np.asarray(x.status, dtype=object), out.shape)
    elif res in r.workloads:
        w = r.workloads[res]
        out = np.asarray({"rate": w.rate, "cpu_us": w.cpu_us["total"], "queueing_ms": w.queueing_ms}.get(
            q, r.resources.get(q).by_workload[res] if q in POOLS else None), dtype=float)
        status = np.broadcast_to(np.asarray(r.resources[str(np.ravel(r.bottleneck)[0])].status, dtype=object),
                                 out.shape)
        if q == "queueing_ms":       # name the overloaded pool the workload uses
            used = [p for p in POOLS if (p == "processors" or w.requests[p] > 0)]
            status = np.broadcast_to(np.select([np.asarray(r.resources[p].overloaded) for p in used],
                                               [np.asarray(r.resources[p].status, dtype=object) for p in used],
                                               ""), out.shape)
    else:
        raise PlanError(f"resource must be processors, coprocessors, accelerators or a workload's name "
                        f"(got {value_text(resource)}; the workloads: {', '.join(r.workloads)})")
    bad = ~np.isfinite(out)
    if bad.any():
        never = q in ("months_to_target", "headroom")
        what = (f"{res} never reach the {s.max_utilization:.0%} target within {MAX_MONTHS:g} months at these "
                "growth rates" if q == "months_to_target" else f"no load on {res} grows: its headroom is unbounded")
        flat = np.ravel(status)

        def message(i: int) -> str:
            return what if never else str(flat[i])
        first = int(np.flatnonzero(np.ravel(bad))[0])
        err = NotAvailableError if never else UnstableQueueError
        raise err(message(first), mask=bad if out.ndim else np.asarray(True), element_message=message)
    return float(out) if out.ndim == 0 else out
