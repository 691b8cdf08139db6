"""The one reader of a plan: :func:`read_plan` (issue 66), whatever states it.

A plan comes as a TOML file (the README's "Plan files"), as the document such a file holds (a
dict), or as the tables of a spreadsheet's Workloads and Plan sheets (:class:`PlanTables`: the
rows their cells hold).  :func:`read_plan` reads each into one :class:`PlanInputs`: the system,
the workloads, and, for a plan that names RMF's report, the report's pools and notes.  Every check
runs once, here: the keys, the names (unique), each workload's own model's arguments (its profile
is built once, which checks them).
The command line (``cryptoplan plan``), the workbook's Plan sheet and its ``PLAN_*`` functions,
and Python (``cryptoplan.model.read_plan``) all read plans through it.

RMF's report: ``[system] rmf = "FILE"`` (:func:`rmf_pools`).  A planner's plan file may name the
Crypto Hardware Activity report (or the SMF 70-2 records it is made from) of the LPAR it plans.
From it, for this LPAR (the report's system, or ``rmf_system``):

* **installed cards by mode**: every CCA coprocessor (``CEXnC``) and accelerator (``CEXnA``)
  the report lists for the system; one idle at the peak (no request, 0.0% in every column) is
  installed capacity and is listed apart; PKCS11 (EP11) coprocessors (``CEXnP``) are listed apart
  (the plan's pools are CCA coprocessors and accelerators);
* **other LPARs' work** on each pool (``other_coprocessor_cards``, ``other_accelerator_cards``),
  work that stays when cards are added: :math:`W = \\sum_c (U_{CPC,c} - U_{LPAR,c})` over the pool's
  cards at the pool's **peak interval** (the interval in which this system's cards of the pool
  are busiest, mean LPAR utilization).  A card RMF prints with CPC columns only counts whole, less
  the plan's own busy in that interval for a pool all of whose cards are so (the CPC columns
  count this LPAR's requests too).  The single-scope layout has no CPC columns: the plan's
  ``other_..._util`` (a share of every card) stands.  The share each card shows,
  :math:`W / k`, is printed beside it for a plan that wants that reading instead;
* a **measured** workload per pool for what this LPAR's cards were busy with in that interval
  beyond what the plan's workloads account for: the measured busy, :math:`B = \\sum_c U_c` (cards'
  worth, the LPAR columns), minus the plan's own busy in the same interval of its day (each of the
  plan's intervals weighted by the minutes it shares with the report's), today (growth 1, month 0,
  an average day: ``peak_day_factor`` and ``site_failover_factor`` 1), as requests at the pool's
  measured EXEC TIME, :math:`\\lambda = (B - B_{plan}) / \\bar s`,
  :math:`\\bar s = B / \\sum_c \\lambda_c`.  It does not grow (``growth_per_year`` 0), and the
  plan's ``peak_day_factor`` applies to it as to every workload.  A pool with no LPAR columns gets
  none (this LPAR's own busy is not in the report);
* a warning for every card above :data:`HOT_CPC_PCT` busy CPC-wide at the peak.

A key the plan file gives itself wins over the report's (``coprocessors = 8`` to ask "with two
more cards"); each value says where it came from (:attr:`RmfPlan.notes`).

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report (LPAR and CPC columns: APAR
OA54952).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from collections.abc import Mapping

import numpy as np
from typing import TYPE_CHECKING

from .errors import PlanError
from .evaluate import plan_with_loads
from .files import RMF_KEYS, plan_from_dict, plan_from_tables, read_plan_document
from .inputs import System, Workload

if TYPE_CHECKING:
    from ...site.rmf_records import CryptoActivity

# RMF's readers (model.site) are imported by the functions that read a report: a workbook's
# recalculation reads plans from its tables and never loads them.

__all__ = ["read_plan", "PlanInputs", "PlanTables", "RmfPools", "rmf_pools", "read_rmf_records", "apply_rmf",
           "RMF_POOLS", "MEASURED_NAMES"]

#: The plan's card pools and the report's mode of their cards.
RMF_POOLS = {"coprocessors": "coprocessor", "accelerators": "accelerator"}

#: The name of each pool's measured workload.
MEASURED_NAMES = {"coprocessors": "RMF measured (coprocessors)", "accelerators": "RMF measured (accelerators)"}

# Below this many cards' worth (a twentieth of a percent of one card, the report's print), the
# measured busy and the plan's agree: no measured workload.
_SAME_BUSY = 0.0005

#: A card busier than this CPC-wide (percent) at the peak is named in a note: whatever this LPAR's
#: share, the card has little room left for anyone's growth (a planning threshold of this tool).
HOT_CPC_PCT = 90.0


@dataclass(frozen=True)
class RmfPools:
    """What the report says of one LPAR's card pools.

    Attributes
    ----------
    file : the report (or SMF file).
    system : its SMF system id.
    cards : pool -> ``["CEX6C 5", ...]`` (``"pkcs11"`` too, listed apart).
    peak : pool -> the peak interval (``YYYY-MM-DD HH:MM:SS``), None for a pool with no LPAR numbers.
    busy : pool -> this LPAR's cards' worth at the peak (sum of LPAR UTIL% / 100), or None.
    rate : pool -> this LPAR's requests per second at the peak, or None.
    other : pool -> other LPARs' share of each card at the peak (mean CPC - LPAR), fraction, or
        None where the report does not give both.
    why_not : pool -> why ``other`` or ``busy`` is None.
    work : pool -> other LPARs' work at the peak, cards' worth: :math:`\\sum_c (U_{CPC} - U_{LPAR})`
        over the pool's cards (a card RMF prints with CPC columns only counts whole), or None
        where the report has no CPC columns.
    idle : pool -> the cards idle at the peak (no request, 0.0% in every column): capacity, listed apart.
    hot : ``[(card, CPC UTIL%)]`` of the cards above :data:`HOT_CPC_PCT` CPC-wide at their pool's peak.
    seconds : pool -> the length of its peak interval, s.
    """

    file: str
    system: str
    cards: dict
    peak: dict
    busy: dict
    rate: dict
    other: dict
    why_not: dict = field(default_factory=dict)
    work: dict = field(default_factory=dict)
    idle: dict = field(default_factory=dict)
    hot: tuple = ()
    seconds: dict = field(default_factory=dict)

    def exec_ms(self, pool: str) -> float | None:
        """The pool's mean EXEC TIME at its peak, busy over rate (ms), or None."""
        b, r = self.busy.get(pool), self.rate.get(pool)
        return None if b is None or not r else b / r * 1000.0


@dataclass(frozen=True)
class PlanTables:
    """A plan as a spreadsheet states it: the rows of its workloads table (a heading row, then a
    workload a row), of its system block (key, value rows) and, optionally, of its profiles table.

    ``where`` names the ranges in messages; ``first_rows`` are the sheet rows the workloads, system
    orders and migrations ranges start at (a message names the sheet's row).  ``orders``: the rows
    of its orders table (a header ``resource``, ``count``, ``arrives``, then one order a row),
    servers already ordered, optional; ``migrations``: the rows of its migrations table (a header
    ``workload``, ``to``, ``start``, ``months``, ``share``, then one migration a row), optional.
    """

    workloads: list
    system: list
    profiles: list | None = None
    where: tuple = ("workloads", "system", "profiles", "orders", "migrations")
    first_rows: tuple = (1, 1, 1, 1)
    orders: list | None = None
    migrations: list | None = None


@dataclass(frozen=True)
class PlanInputs:
    """A plan read by :func:`read_plan`: ``system``, ``workloads`` (RMF's measured ones appended),
    ``pools`` (:class:`RmfPools`, None without ``rmf``) and ``notes`` (where each value taken from
    RMF came from).  Unpacks as ``system, workloads``.
    """

    system: System
    workloads: list[Workload]
    pools: RmfPools | None = None
    notes: tuple = ()

    def __iter__(self):          # system, workloads = read_plan(path)
        return iter((self.system, self.workloads))

    def __getitem__(self, i):    # read_plan(path)[1]: the workloads, as the tuple it once was
        return (self.system, self.workloads)[i]


def read_rmf_records(path) -> tuple[list[CryptoActivity], list[str]]:
    """The records of ``path``: RMF's printed report, or SMF 70-2 records (binary: a NUL byte in
    the first record descriptor word, which no text has)."""
    from ...site.errors import SiteFileError
    from ...site.rmf_files import read_activity
    try:
        return read_activity(path)
    except SiteFileError as e:              # the report's or the SMF reader's: file, line or byte
        raise PlanError(str(e)) from None


def rmf_pools(records, file: str = "the report", system: str | None = None) -> RmfPools:
    """The LPAR's pools as the report shows them (see the module docstring).

    Parameters
    ----------
    records : iterable of CryptoActivity
    file : the report's name, for messages.
    system : the SMF system id of the LPAR planned; None: the report's only one.

    Raises
    ------
    PlanError
        The report holds several systems and ``system`` is None, or not ``system``, or no card.
    """
    from ...site.rmf_cards import card_lines
    lines = card_lines(records)
    systems = sorted({ln.system for ln in lines})
    if not lines:
        raise PlanError(f"{file}: RMF's report holds no card")
    if system is None:
        if len(systems) > 1:
            raise PlanError(f"{file}: RMF's report holds systems {', '.join(systems)}: say which LPAR the plan "
                            f"is for (rmf_system = \"{systems[0]}\")")
        system = systems[0]
    elif system not in systems:
        raise PlanError(f"{file}: rmf_system {system!r} is not in RMF's report (it holds {', '.join(systems)})")
    mine = [ln for ln in lines if ln.system == system]
    cards: dict = {"coprocessors": [], "accelerators": [], "pkcs11": []}
    mode_pool = {"coprocessor": "coprocessors", "accelerator": "accelerators", "pkcs11": "pkcs11"}
    for ln in mine:
        pool = mode_pool.get(ln.mode)
        label = f"{ln.card_type} {ln.card_id}"
        if pool and label not in cards[pool]:
            cards[pool].append(label)
    peak: dict[str, str | None] = {}
    busy: dict[str, float | None] = {}
    rate: dict[str, float | None] = {}
    other: dict[str, float | None] = {}
    why: dict[str, str] = {}
    work: dict[str, float | None] = {}
    seconds: dict[str, float] = {}
    idle: dict[str, list] = {}
    hot: list = []
    for pool, mode in RMF_POOLS.items():
        by_interval: dict = {}
        for ln in mine:
            if ln.mode == mode:
                by_interval.setdefault(ln.interval, []).append(ln)
        idle[pool] = []
        if not by_interval:
            peak[pool] = busy[pool] = rate[pool] = other[pool] = work[pool] = None
            why[pool] = "no card of the pool in the report"
            continue

        def cpc(ln):
            return ln.scopes.get("CPC", {}).get("util_pct")

        def mean(xs):
            xs = [x for x in xs if x is not None]
            return sum(xs) / len(xs) if xs else -1.0
        # the peak: this system's cards busiest on average (a card with CPC columns only: 0 of its
        # own), then the CPC-wide mean, then the later interval
        iv = max(by_interval, key=lambda k: (mean([ln.own_util_pct or 0.0 for ln in by_interval[k]]),
                                             mean([cpc(ln) for ln in by_interval[k]]), k))
        lns = by_interval[iv]
        peak[pool] = iv
        seconds[pool] = lns[0].interval_s
        idle[pool] = [f"{ln.card_type} {ln.card_id}" for ln in lns
                      if not any((sc.get("util_pct") or 0.0) or (sc.get("rate") or 0.0) for sc in ln.scopes.values())]
        hot += [(f"{ln.card_type} {ln.card_id}", cpc(ln)) for ln in lns if (cpc(ln) or 0.0) > HOT_CPC_PCT]
        owns = [ln.own_util_pct for ln in lns]
        if all(u is None for u in owns):
            busy[pool] = rate[pool] = other[pool] = None
            why[pool] = "RMF prints no LPAR columns for these cards (only the CPC's)"
        else:
            busy[pool] = sum(u or 0.0 for u in owns) / 100.0
            # the requests of the cards with this LPAR's columns (a CPC-only card: none of its own)
            rates = [(ln.scopes.get("LPAR") or ln.scopes.get("TOTAL") or {}).get("rate") for ln in lns
                     if ln.own_util_pct is not None]
            known = [r for r in rates if r is not None]
            rate[pool] = sum(known) if len(known) == len(rates) else None
            shares = [ln.other_lpars_util_pct for ln in lns]
            if all(x is not None for x in shares):
                other[pool] = sum(shares) / len(shares) / 100.0
            else:
                other[pool] = None
                why[pool] = ("the report has one scope (TOTAL), no CPC columns to subtract the LPAR's from"
                             if all(cpc(ln) is None for ln in lns) else
                             "some cards have CPC columns only: no share per card of this LPAR's")
        # other LPARs' work: CPC minus LPAR per card, a CPC-only card whole
        cpcs = [cpc(ln) for ln in lns]
        work[pool] = None
        if all(c is not None for c in cpcs):
            gaps = [float(c) - float(ln.scopes.get("LPAR", {}).get("util_pct") or 0.0) for c, ln in zip(cpcs, lns)]
            work[pool] = round(sum(max(g, 0.0) for g in gaps) / 100.0, 6)
    return RmfPools(str(file), system, cards, peak, busy, rate, other, why, work, idle, tuple(hot), seconds)


def apply_rmf(sysdoc: dict, pools: RmfPools) -> tuple[dict, list[str]]:
    """The ``[system]`` mapping with the report's counts and other LPARs' work where the plan gives
    neither (nor a share), and a note per value saying where it came from."""
    out = dict(sysdoc)
    peaks = sorted({v for v in pools.peak.values() if v})
    notes = [f"RMF's report {pools.file}, system {pools.system}"
             + (f", peak interval {peaks[0]}" if len(peaks) == 1 else
                "".join(f", {p} peak {pools.peak[p]}" for p in RMF_POOLS if pools.peak.get(p)))]
    for pool, mode in RMF_POOLS.items():
        listed = pools.cards[pool]
        what = f"{len(listed)} {'CCA ' if mode == 'coprocessor' else ''}{mode}{'s' if len(listed) != 1 else ''}" + (
            f" ({', '.join(listed)})" if listed else "")
        if pool in sysdoc:
            notes.append(f"{pool} = {sysdoc[pool]} from the plan file (RMF's report lists {what})")
        else:
            out[pool] = len(listed)
            notes.append(f"{pool} = {len(listed)}: {what}" + (", idle ones included" if listed else ""))
        if pools.idle.get(pool):
            notes.append(f"{pool}: idle at the peak (no request, 0.0%): {', '.join(pools.idle[pool])}; "
                         "counted as installed capacity")
        if listed and pools.busy.get(pool) is None and pools.work.get(pool) is not None:
            notes.append(f"{pool}: {pools.why_not.get(pool)}: their CPC utilization is taken as other LPARs' work, "
                         "and no measured load of this LPAR is added")
        share_key, work_key = f"other_{mode}_util", f"other_{mode}_cards"
        share, work = pools.other.get(pool), pools.work.get(pool)
        given = [k for k in (share_key, work_key) if k in sysdoc]
        if given:
            k = given[0]
            notes.append(f"{k} = {sysdoc[k]:g} from the plan file"
                         + ("" if work is None else f" (RMF's report: {work:.3g} cards' worth of other LPARs' work"
                            + ("" if share is None else f", {share:.1%} of each card") + ")"))
        elif work is not None:
            out[work_key] = work
            notes.append(f"{work_key} = {work:.3g}: other LPARs' work, CPC minus LPAR utilization summed over the "
                         f"pool's cards at its peak; it stays when cards are added (give {share_key} for a share of "
                         f"every card instead" + ("" if share is None else f": {share:.1%}") + ")")
        elif listed:
            notes.append(f"other LPARs' {mode} load not in the report ({pools.why_not.get(pool)}): the plan's "
                         f"{share_key}, {sysdoc.get(share_key, 0):g}, stands")
    for card, u in pools.hot:
        notes.append(f"warning: {card} is {u:.1f}% busy CPC-wide at the peak: the card has little room left for "
                     "any LPAR's growth")
    gen = out.get("card_generation", "CEX8S")
    kinds = sorted({c.split()[0] for pool in RMF_POOLS for c in pools.cards[pool]})
    if kinds:
        notes.append(f"card types {', '.join(kinds)}; the plan prices its workloads' requests at "
                     f"{gen} times (card_generation{' from the plan file' if 'card_generation' in sysdoc else ', the default'}); "
                     "the measured load keeps its measured EXEC TIME")
    if pools.cards["pkcs11"]:
        notes.append(f"PKCS11 (EP11) coprocessors, not in the plan's pools: "
                     f"{', '.join(pools.cards['pkcs11'])}")
    return out, notes


def _busy_in(workloads, loads, when: str, seconds) -> float:
    """The plan's busy (cards' worth) in the report's interval ``when`` (``YYYY-MM-DD HH:MM:SS``, its
    start) of ``seconds``: the mean over the plan's intervals of the day, each weighted by the
    minutes it shares with the report's (start and length to the minute: RMF's interval is a few
    milliseconds off its nominal length and start; across midnight it wraps), from ``loads`` (W, J)
    per distinct interval (:func:`~.evaluate.plan_with_loads`, one scenario)."""
    from .daily import daily_factors, day_intervals, distinct_intervals
    n = day_intervals(workloads)
    _, inverse = distinct_intervals(daily_factors(workloads, n))
    per = np.asarray(loads, dtype=float).sum(axis=0)[inverse]            # (n,) busy in each interval
    hh, mm, ss = (int(x) for x in when.split()[1].split(":"))
    start = round(hh * 60 + mm + ss / 60.0) % 1440                       # minutes from midnight
    length = max(round((seconds or 0.0) / 60.0), 1)                      # minutes, at least one
    width = 1440 // n
    minutes = (start + np.arange(length)) % 1440
    weights = np.bincount(minutes // width, minlength=n)[:n].astype(float)
    return float(np.sum(weights * per) / weights.sum())


def _measured(system, workloads, pools: RmfPools, from_report=()) -> tuple[list, list[str], System]:
    """The measured workloads: per pool, what the report's LPAR busy at its peak leaves beyond
    the plan's own busy in that interval of its day, today (module docstring); and the system with
    other LPARs' work on a pool RMF prints with CPC columns only (``from_report``: the
    ``other_*_cards`` keys the report set) less the plan's own busy there, which the CPC columns
    count too."""
    today = dataclasses.replace(system, peak_day_factor=1.0, site_failover_factor=1.0,
                                **{p: max(len(pools.cards[p]), 1) for p in RMF_POOLS})
    _, loads, _, _ = plan_with_loads(today, workloads, growth=1.0, months=0.0)
    extra, notes = [], []
    for pool, mode in RMF_POOLS.items():
        b, s_ms = pools.busy.get(pool), pools.exec_ms(pool)
        key = f"other_{mode}_cards"
        if b is None and key in from_report and pools.cards[pool]:
            cpc = float(getattr(system, key))
            mine = _busy_in(workloads, loads[pool], pools.peak[pool], pools.seconds.get(pool))
            system = dataclasses.replace(system, **{key: round(max(cpc - mine, 0.0), 6)})
            notes.append(f"{key} = {getattr(system, key):.3g}: the CPC utilization, {cpc:.3g} cards' worth, less the "
                         f"plan's own busy in that interval, {mine:.3g} (RMF prints no LPAR columns for these cards)")
        if b is None:
            continue
        when = pools.peak[pool]
        mine = _busy_in(workloads, loads[pool], when, pools.seconds.get(pool)) if pools.cards[pool] else 0.0
        left = b - mine
        head = (f"{pool}: this LPAR measured {b:.3f} cards' worth busy ({when}), the plan's workloads {mine:.3f} "
                "in the same interval of their day, today")
        if left <= _SAME_BUSY or not s_ms:
            notes.append(head + (": no measured workload added" if left > -_SAME_BUSY else
                                 ": the plan's workloads need more than RMF measured (work not running yet?); "
                                 "no measured workload added"))
            continue
        lam = left / (s_ms / 1000.0)
        extra.append(Workload(MEASURED_NAMES[pool], "measured", lam, 0.0,
                              {"card": pool, "exec_ms": s_ms}))
        notes.append(head + f": {MEASURED_NAMES[pool]!r} carries the {left:.3f} left, {lam:,.1f} requests/s at "
                     f"the measured EXEC TIME {s_ms:.3f} ms")
    return extra, notes, system


def read_plan(source) -> PlanInputs:
    """Read a plan, whatever states it: the one reader of the command line, the workbook and Python.

    Parameters
    ----------
    source : str, os.PathLike, dict or PlanTables
        A TOML plan file (a path); the document one holds (a dict: ``[system]``, ``[[workload]]``,
        ``[profile.NAME]``); or the rows of a spreadsheet's tables (:class:`PlanTables`).  A plan
        file's (or a document's) ``[system]`` may name RMF's report (``rmf = "FILE"``, relative to
        the plan file, or to the working folder for a document; ``rmf_system``: which system of
        it): the cards, other LPARs' shares and a measured workload per pool come from it.

    Returns
    -------
    PlanInputs
        Unpacks as ``system, workloads``; ``notes`` say where each value taken from RMF came from.

    Raises
    ------
    PlanError
        A key, a value or a table the plan refuses (the message names the file or range, the
        workload or row, the key and what is accepted), RMF's (the report's file, line or byte
        and what was expected), a plan workload named as a measured one.

    Examples
    --------
    >>> r = read_plan({"system": {"processors": 4, "coprocessors": 2, "accelerators": 1},
    ...                "workload": [{"name": "pay", "kind": "ams", "rate": 300, "policy": "privacy", "message_kb": 2}]})
    >>> r.system.coprocessors, [w.name for w in r.workloads]
    (2, ['pay'])
    """
    if isinstance(source, PlanTables):
        t = source
        system, workloads = plan_from_tables(t.workloads, t.system, t.profiles, t.where, t.first_rows, t.orders,
                                             t.migrations)
        return PlanInputs(system, workloads)
    if isinstance(source, Mapping):
        doc, label, folder = dict(source), "the plan", Path(".")
    else:
        doc, label, folder = read_plan_document(source), str(source), Path(source).parent
    sysdoc = doc.get("system")
    if not isinstance(sysdoc, dict) or "rmf" not in sysdoc:
        if isinstance(sysdoc, dict) and "rmf_system" in sysdoc:
            raise PlanError(f"{label}: system: rmf_system names a system of RMF's report: give rmf = \"FILE\" too")
        system, workloads = plan_from_dict(doc, label)
        return PlanInputs(system, workloads)
    rest = {k: v for k, v in sysdoc.items() if k not in RMF_KEYS}
    file, sid = sysdoc["rmf"], sysdoc.get("rmf_system")
    for key, v in (("rmf", file), ("rmf_system", sid)):
        if v is not None and (not isinstance(v, str) or not v.strip()):
            raise PlanError(f"{label}: system: {key} must be a {'file name' if key == 'rmf' else 'system id'} in "
                            f"quotes (got {v!r})")
    report = Path(file) if Path(file).is_absolute() else folder / file
    records, warnings = read_rmf_records(report)
    pools = rmf_pools(records, str(report), sid.strip() if sid else None)
    filled, notes = apply_rmf(rest, pools)
    system, workloads = plan_from_dict({**doc, "system": filled}, label)
    taken = [w.name for w in workloads if w.name in MEASURED_NAMES.values()]
    if taken:
        raise PlanError(f"{label}: workload {taken[0]!r}: the name is the measured workload's RMF's report adds; "
                        "name yours otherwise")
    extra, more, system = _measured(system, workloads, pools,
                                    [k for k in filled if k.endswith("_cards") and k not in rest])
    notes += more + [f"{report}: {w}" for w in warnings]
    return PlanInputs(system, workloads + extra, pools, tuple(notes))
