"""A plan's inputs: the system (processors, Crypto Express pools, targets) and its workloads.

Each value is validated here, once, against its domain (:mod:`cryptoplan.model.domains`); a bad
one raises :class:`PlanError` naming the workload (or the system), the key, the value and the
range.  The kinds and their arguments are :data:`KIND_ARGUMENTS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ams import AMS_PLATFORMS, CARD_GENERATIONS
from ...domains import (FAILOVER_MAX_UTILIZATION, GROWTH_PER_YEAR, HORIZON_MONTHS, LEAD_TIME_MONTHS, MAX_UTILIZATION,
                        MIGRATED_SHARE,
                        MAX_WAIT_MS, MSU_PER_PROCESSOR, OTHER_LPAR_CARDS, OTHER_LPAR_UTIL, PEAK_DAY_FACTOR, POOL_CARDS, PROCESSORS,
                        SITE_FAILOVER_FACTOR, WORKLOAD_RATE, Domain)
from ..._text import value_text
from ...params import normalize_choice
from ..quantum_safe import migration_target
from .daily import DailyProfile, Window
from .forecast import range_point
from .calendar import calendar_start
from .errors import PlanError
from .naming import MAX_NAME, name_text

__all__ = ["System", "Workload", "Order", "Migration", "MIGRATION_KEYS",
           "PlanError", "KINDS", "POOLS", "CARD_POOLS", "MAX_MONTHS", "KIND_ARGUMENTS",
           "RATE_UNITS", "SYSTEM_KEYS", "SYSTEM_REQUIRED", "WORKLOAD_KEYS", "ARGUMENT", "checked", "choice",
           "FAILOVER_MODES", "INSTALLABLE", "MAX_NAME", "name_text"]

KINDS = ("ams", "channel", "handshakes", "channel_starts", "measured", "ocsp")


POOLS = ("processors", "coprocessors", "accelerators")


CARD_POOLS = {"coprocessors": "coprocessor", "accelerators": "accelerator"}


# Months searched for a crossing: beyond 100 years a plan says "never".
MAX_MONTHS = 1200.0


#: What the plan keeps within a limit when a card fails: "one_card" (each card pool with one card
#: out), or "none".
FAILOVER_MODES = ("one_card", "none")


#: The most servers of each pool an LPAR can have (the domains' upper bounds): a count required
#: beyond it is "more than N", not a number to order.
INSTALLABLE = {"processors": int(PROCESSORS.bounds()[1]), "coprocessors": int(POOL_CARDS.bounds()[1]),
               "accelerators": int(POOL_CARDS.bounds()[1])}


# Each kind's arguments and their defaults (None: required).  Names as the Python functions name them.
KIND_ARGUMENTS: dict[str, dict[str, Any]] = {
    "ams": {"policy": None, "key_type": "RSA", "key_size": 2048, "message_kb": None, "key_reuse": None,
            "recipients": 1, "queue_manager": "QM1", "flow": "request_reply"},
    "channel": {"mode": None, "cipher": None, "message_kb": None, "sslrkeyc": 0, "flow": "request_reply",
                "ends": "local"},
    "handshakes": {"cipher": None, "resumed_share": 0.0, "fips": False, "card_mode": None,
                   "sysplex_tickets": False, "cpu_us": None, "address_space": "TCPIP"},
    "channel_starts": {"cipher": None, "mode": "SSLCIPH"},
    "measured": {"card": None, "exec_ms": None, "utilization": None, "cpu_us": None},
    "ocsp": {"connection_cpu_us": None},
}


# What the rate counts, per kind (the unit of every "per unit" answer).
RATE_UNITS = {"ams": "transactions/s", "channel": "transactions/s", "handshakes": "handshakes/s",
              "channel_starts": "starts/s", "measured": "units/s", "ocsp": "connections/s"}


_DERIVED = {"key_exchange": "it follows from cipher", "certificate": "it follows from cipher",
            "protocol": "it follows from cipher", "platform": "set it in the system",
            "card_generation": "set it in the system", "cards": "set coprocessors/accelerators in the system",
            "other_lpar_util": "set other_coprocessor_util/other_accelerator_util in the system",
            "tx_rate": "the workload's rate is `rate`", "handshake_rate": "the workload's rate is `rate`",
            "start_rate": "the workload's rate is `rate`"}


ARGUMENT = object()        # checked's "where" for a plain function argument: no prefix



def where(workload) -> str:
    """Where an input sits, for messages: ``system`` or ``workload 'name'``."""
    return "system" if workload is None else f"workload {workload!r}"


def prefixed(workload, e) -> str:
    """Message ``e`` prefixed with :func:`where` (not for a plain function argument)."""
    return str(e) if workload is ARGUMENT else f"{where(workload)}: {e}"


def checked(domain: Domain, value, workload, key, *, scalar=True):
    """The value checked against its domain; the message (which names ``key``) says where."""
    try:
        return domain.check(value, key, scalar=scalar)
    except (ValueError, TypeError) as e:
        raise PlanError(prefixed(workload, e)) from None


def choice(value, allowed, workload, key, normalize=None):
    """``value`` normalized to one of ``allowed`` (or by ``normalize``); PlanError naming where and ``key`` otherwise."""
    try:
        return normalize(value) if normalize else normalize_choice(key, value, allowed)
    except (ValueError, TypeError) as e:
        raise PlanError(f"{where(workload)}: {e}") from None


# ----------------------------------------------------------------------------- inputs
_ONE_POOL = {"processor": "processors", "coprocessor": "coprocessors", "accelerator": "accelerators"}


@dataclass(frozen=True)
class Order:
    """Servers already ordered: ``count`` of ``resource`` in service from ``month`` (months from the
    scenario).  The purchase timeline counts them before anything it proposes (issue 63).

    Parameters
    ----------
    resource : {"processors", "coprocessors", "accelerators"}
        (or the singular).
    count : int
        1 .. the most an LPAR can have of it.
    month : float
        When they are in service, 0 .. 1200 months from the scenario.
    """

    resource: str
    count: int
    month: float

    def __post_init__(self):
        res = choice(self.resource, POOLS, None, "order resource",
                     lambda v: normalize_choice("resource", v, POOLS, _ONE_POOL))
        object.__setattr__(self, "resource", res)
        c = self.count
        if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)) or not float(c).is_integer() \
                or not 1 <= c <= INSTALLABLE[res]:
            raise PlanError(f"order of {res}: count must be a whole number of servers, 1 to {INSTALLABLE[res]} "
                            f"(got {c!r})")
        object.__setattr__(self, "count", int(c))
        m = self.month
        if isinstance(m, bool) or not isinstance(m, (int, float, np.integer, np.floating)) \
                or not 0.0 <= float(m) <= MAX_MONTHS:
            raise PlanError(f"order of {res}: the month it is in service must be a number of months from the "
                            f"scenario, 0 to {MAX_MONTHS:g} (got {m!r})")
        object.__setattr__(self, "month", float(m))


#: The keys of a plan file's ``[[migration]]`` table (``share`` optional: 1).
MIGRATION_KEYS = ("workload", "to", "start", "months", "share")


@dataclass(frozen=True)
class Migration:
    """``share`` of workload ``workload`` moving to algorithm ``to`` from month ``start`` over ``months``.

    Parameters
    ----------
    workload : str
        The name of an AMS, handshakes or channel_starts workload of the plan.
    to : str
        ML-DSA-44/65/87 (its signatures), ML-KEM-512/768/1024 (its key transport or exchange), a
        TLS 1.3 hybrid group (X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024: a handshake's
        classical ECDHE kept, an ML-KEM added), or a signature and a key exchange joined by ``+``.
    start : float
        Month the migration starts, 0..1200 months from the plan's month 0.
    months : float
        Months it takes, 0..1200 (0: the whole share at ``start``).
    share : float
        Share of the workload's transactions moved by the end, (0, 1].
    """

    workload: str
    to: str
    start: float
    months: float
    share: float = 1.0

    def __post_init__(self):
        where = f"migration of {self.workload!r}"
        try:
            object.__setattr__(self, "to", migration_target(self.to).name)
            object.__setattr__(self, "start", float(HORIZON_MONTHS.check(self.start, "start", scalar=True)))
            object.__setattr__(self, "months", float(HORIZON_MONTHS.check(self.months, "months", scalar=True)))
            share = float(MIGRATED_SHARE.check(self.share, "share", scalar=True))
        except (ValueError, TypeError) as e:
            raise PlanError(f"{where}: {e}") from None
        if share <= 0.0:
            raise PlanError(f"{where}: share must be in (0, 1] (got 0): a migration moves something")
        object.__setattr__(self, "share", share)

    def knots(self) -> tuple:
        """The migrated part's multiplier :math:`m(t)` as :class:`~.crossing.Schedule` knots."""
        return np.array([self.start, self.start + self.months]), np.array([0.0, self.share])

    def at(self, months) -> np.ndarray:
        """:math:`m(t)` at ``months`` (absolute months of the plan)."""
        xs, ys = self.knots()
        return np.interp(np.asarray(months, dtype=float), xs, ys)



@dataclass(frozen=True)
class System:
    """The LPAR the workloads share: its processors and Crypto Express pools, and the targets.

    Parameters
    ----------
    processors : int
        General processors of the LPAR, 1..256.
    coprocessors, accelerators : int
        Crypto Express cards in CCA coprocessor and in accelerator mode this LPAR uses, 0..64
        (0: none; a workload that sends the pool work then overloads it).
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation (each kind's model accepts the generations it has figures for).
    card_generation : {"CEX6S", "CEX7S", "CEX8S"}
    max_utilization : float
        Utilization target of every resource, (0, 1): the counts required keep each at or below it.
    other_coprocessor_util, other_accelerator_util : float
        Other LPARs' load as a share of *every* card of the pool, [0, 1): cards added get the same
        share (the reading when other LPARs' work grows with the cards, e.g. domains added to
        every new card).  The utilization of ``k`` cards is :math:`u = (B + s k) / k`, own busy
        ``B`` (cards' worth) and share ``s``.
    other_coprocessor_cards, other_accelerator_cards : float, optional
        Other LPARs' load as *work*, 0..64 cards' worth, that stays when cards are added (RMF's
        CPC minus LPAR utilization summed over the pool's cards): :math:`u = (B + W) / k`.  At
        most one of the two readings per pool; a plan read from RMF takes this one.  Either
        reading is a constant: the same in every interval of the day (RMF's value at this LPAR's
        peak), not multiplied by ``peak_day_factor`` (other LPARs' busiest day is not this
        LPAR's), the same on another ``card_generation``, and counted in every interval of the
        day's average utilization.
    horizon_months : float
        The horizon of the counts required as the workloads grow, 0..1200 months.
    max_wait_ms : float, optional
        Target on the mean queueing of one request at each card pool (ms, > 0): the counts
        required meet it as well as ``max_utilization``.  None: the utilization target only.
    peak_day_factor : float
        The busiest day of the year over the average day, 1..100: every rate of the plan's day
        is multiplied by it (the workloads' ``rate`` is an average day's).
    failover : {"one_card", "none"}
        ``"one_card"``: every card pool must stay within ``failover_max_utilization`` with one of
        its cards out (its share, and other LPARs' share of it, spread over the others).
    failover_max_utilization : float
        The utilization a pool may reach with one card failed, (0, 1).
    site_failover_factor : float
        Another site's share arriving: a factor, 1..100, on the workloads marked
        ``site_failover`` (the plan is for the day it has arrived).
    lead_time_months : float
        Months from ordering a card (or processor capacity) to having it installed, 0..120: each
        purchase is to be ordered that long before it is needed.
    msu_per_processor : float, optional
        MSU of one processor at full use (the machine's rating over its processors): the
        processors' demand is also given in MSU.
    start : str, optional
        The calendar month that is the plan's month 0, ``"YYYY-MM"``: every month the plan prints
        is then also given as a calendar month (:mod:`.calendar`).
    orders : sequence of Order
        Servers already ordered (a plan file's ``[[order]]`` tables): the purchase timeline counts
        them first, and says when each arrives against when it is needed.
    migrations : sequence of Migration
        Quantum-safe migrations of the plan's AMS workloads (a plan file's ``[[migration]]``
        tables, :mod:`.migration`): every month of the plan follows them.
    """

    processors: int
    coprocessors: int
    accelerators: int
    platform: str = "z16"
    card_generation: str = "CEX8S"
    max_utilization: float = 0.7
    other_coprocessor_util: float = 0.0
    other_accelerator_util: float = 0.0
    other_coprocessor_cards: float | None = None
    other_accelerator_cards: float | None = None
    horizon_months: float = 12.0
    max_wait_ms: float | None = None
    peak_day_factor: float = 1.0
    failover: str = "one_card"
    failover_max_utilization: float = 0.9
    site_failover_factor: float = 1.0
    lead_time_months: float = 6.0
    msu_per_processor: float | None = None
    start: str | None = None
    orders: tuple = ()
    migrations: tuple = ()

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "processors", int(checked(PROCESSORS, self.processors, None, "processors")))
        for key in ("coprocessors", "accelerators"):
            set_(self, key, int(checked(POOL_CARDS, getattr(self, key), None, key)))
        set_(self, "platform", choice(self.platform, AMS_PLATFORMS, None, "platform"))
        set_(self, "card_generation", choice(self.card_generation, CARD_GENERATIONS, None, "card_generation"))
        set_(self, "max_utilization", checked(MAX_UTILIZATION, self.max_utilization, None, "max_utilization"))
        for key in ("other_coprocessor_util", "other_accelerator_util"):
            v = checked(OTHER_LPAR_UTIL, getattr(self, key), None, key)
            if v >= self.max_utilization:
                raise PlanError(f"system: {key} ({v:g}) leaves no room below max_utilization "
                                f"({self.max_utilization:g}): no number of shared cards meets the target")
            set_(self, key, v)
        for pool in ("coprocessor", "accelerator"):
            key = f"other_{pool}_cards"
            if getattr(self, key) is not None:
                set_(self, key, checked(OTHER_LPAR_CARDS, getattr(self, key), None, key))
                if getattr(self, f"other_{pool}_util"):
                    raise PlanError(f"system: other LPARs' {pool} load is given twice, as other_{pool}_util (a "
                                    f"share of every card) and as {key} (work that stays when cards are added): "
                                    "give one")
        set_(self, "horizon_months", checked(HORIZON_MONTHS, self.horizon_months, None, "horizon_months"))
        if self.max_wait_ms is not None:
            set_(self, "max_wait_ms", checked(MAX_WAIT_MS, self.max_wait_ms, None, "max_wait_ms"))
        set_(self, "peak_day_factor", checked(PEAK_DAY_FACTOR, self.peak_day_factor, None, "peak_day_factor"))
        set_(self, "failover", choice(self.failover, FAILOVER_MODES, None, "failover"))
        set_(self, "failover_max_utilization", checked(FAILOVER_MAX_UTILIZATION, self.failover_max_utilization, None,
                                                       "failover_max_utilization"))
        if self.failover != "none":
            for key in ("other_coprocessor_util", "other_accelerator_util"):
                v = getattr(self, key)
                if v >= self.failover_max_utilization:
                    raise PlanError(f"system: {key} ({v:g}) leaves no room below failover_max_utilization "
                                    f"({self.failover_max_utilization:g}): no number of shared cards survives "
                                    "one failing (or set failover = \"none\")")
        set_(self, "site_failover_factor", checked(SITE_FAILOVER_FACTOR, self.site_failover_factor, None,
                                                   "site_failover_factor"))
        set_(self, "lead_time_months", checked(LEAD_TIME_MONTHS, self.lead_time_months, None, "lead_time_months"))
        if self.msu_per_processor is not None:
            set_(self, "msu_per_processor", checked(MSU_PER_PROCESSOR, self.msu_per_processor, None,
                                                    "msu_per_processor"))
        set_(self, "start", calendar_start(self.start))
        try:
            orders = tuple(self.orders)
        except TypeError:
            raise PlanError(f"system: orders must be a list of Order (got {self.orders!r})") from None
        if not all(isinstance(o, Order) for o in orders):
            raise PlanError("system: orders must be Order objects (resource, count, month)")
        set_(self, "orders", orders)
        try:
            migrations = tuple(self.migrations)
        except TypeError:
            raise PlanError(f"system: migrations must be a list of Migration (got {self.migrations!r})") from None
        if not all(isinstance(m, Migration) for m in migrations):
            raise PlanError("system: migrations must be Migration objects (workload, to, start, months, share)")
        set_(self, "migrations", migrations)

    def installed(self, pool: str) -> int:
        """Servers of a pool: ``"processors"``, ``"coprocessors"`` or ``"accelerators"``."""
        return getattr(self, pool)

    def other(self, pool: str) -> float:
        """Other LPARs' share of each server of the pool, the share reading (0 for processors, and
        where their load is given as work: :meth:`other_work`)."""
        return {"processors": 0.0, "coprocessors": self.other_coprocessor_util,
                "accelerators": self.other_accelerator_util}[pool]

    def other_work(self, pool: str) -> float:
        """Other LPARs' load on the pool as work that stays when cards are added, cards' worth (0
        for processors, and where it is given as a share: :meth:`other`)."""
        v = {"processors": None, "coprocessors": self.other_coprocessor_cards,
             "accelerators": self.other_accelerator_cards}[pool]
        return 0.0 if v is None else float(v)

    def other_reading(self) -> str:
        """How other LPARs' load on the card pools is read, in words for the scenario: a share of
        every card (cards added too) or work that stays as cards are added."""
        work = {p: v for p, v in (("coprocessors", self.other_coprocessor_cards),
                                  ("accelerators", self.other_accelerator_cards)) if v is not None}
        if not work:
            return (f"other LPARs keep each coprocessor {self.other_coprocessor_util:.0%} and each accelerator "
                    f"{self.other_accelerator_util:.0%} busy, cards added too")
        parts = [f"{work[p]:.3g} {p[:-1]}s' worth of work (stays as cards are added)" if p in work
                 else f"{self.other(p):.0%} of each {p[:-1]} (cards added too)" for p in ("coprocessors", "accelerators")]
        return "other LPARs: " + ", ".join(parts)


@dataclass(frozen=True)
class Workload:
    """One workload of a plan: a name, a kind, a rate and its kind's arguments.

    Parameters
    ----------
    name : str
        Unique within the plan (non-empty).
    kind : {"ams", "channel", "handshakes", "channel_starts", "measured"}
    rate : float or array_like
        In the kind's unit (:data:`RATE_UNITS`): request/reply transactions per second for
        ``ams`` and ``channel`` (the unit the AMS and channel cost models use; an ``ams`` workload
        with ``flow = "one_way"`` counts messages per second, each put once and got once), handshakes
        per second (full and resumed), channel starts per second, or, for ``measured``,
        requests per second on its card (with ``exec_ms``) or units of work per second
        (with ``cpu_us``); >= 0.  ``measured`` with ``utilization`` takes no rate.
    growth_per_year : float or (float, float), optional
        Yearly growth of the rate as a fraction (0.2 = +20% a year), (-1, 10]: 50 is refused
        (a percent where a fraction belongs).  Default 0, or the middle of ``growth_range``.  A
        pair ``(lo, hi)`` is ``growth_range`` with its middle as the point.
    args : dict
        The kind's arguments (:data:`KIND_ARGUMENTS`), named as the Python functions name
        them; an unknown one is an error.
    profile : DailyProfile, optional
        How the rate spreads over the day (``rate`` stays the daily average).
    window : Window, optional
        The workload runs only in this window of the day (a channel-start storm); ``rate`` is
        then the rate while it runs.  Not with ``profile``.
    site_failover : bool
        The workload is multiplied by the system's ``site_failover_factor`` (another site's share
        of it arrives here).
    peak_day : bool, optional
        The workload is multiplied by the system's ``peak_day_factor`` (it is busier on the
        busiest day of the year).  Default: true, but false for a workload in a window: a storm's
        ``rate`` is the rate while it runs, which the busiest day does not raise (a batch feed
        whose rate is fixed says ``peak_day = false`` too).
    rate_range, growth_range : (float, float), optional
        The forecast's 90% interval of the rate (one rate: a scalar ``rate``) and of the yearly
        growth, ``lo <= point <= hi``: bands (:func:`~.bands.plan_bands`, a plan under ``draws``)
        draw them with the model's parameters (:mod:`~.forecast`); the plan without bands uses
        the point.  With a range and no point, the point is the range's geometric middle.
    """

    name: str
    kind: str
    rate: object = None
    growth_per_year: float | None = None
    args: dict = field(default_factory=dict)
    profile: DailyProfile | None = None
    window: Window | None = None
    site_failover: bool = False
    peak_day: bool | None = None
    rate_range: tuple | None = None
    growth_range: tuple | None = None

    def __post_init__(self):
        object.__setattr__(self, "name", name_text(self.name, "a workload's name"))
        object.__setattr__(self, "kind", choice(self.kind, KINDS, self.name, "kind"))
        for key, v in self.args.items():
            if isinstance(v, str) and not v.strip():
                raise PlanError(f"workload {self.name!r}: {key} is empty; give a value or leave the key out "
                                f"(its default: {KIND_ARGUMENTS[self.kind].get(key, 'none')!r})"
                                if key in KIND_ARGUMENTS.get(self.kind, {}) else
                                f"workload {self.name!r}: {key} is empty")
        qm = self.args.get("queue_manager")
        if qm is not None:
            object.__setattr__(self, "args", {**self.args, "queue_manager": name_text(
                qm, f"workload {self.name!r}: queue_manager", limit=48)})
        self._growth()
        if self.profile is not None and not isinstance(self.profile, DailyProfile):
            raise PlanError(f"workload {self.name!r}: profile must be a DailyProfile (got {type(self.profile).__name__})")
        if self.window is not None and not isinstance(self.window, Window):
            raise PlanError(f"workload {self.name!r}: window must be a Window (got {type(self.window).__name__})")
        if self.profile is not None and self.window is not None:
            raise PlanError(f"workload {self.name!r}: a profile and a window (start, duration_minutes) are two "
                            "ways to spread a rate over the day: give one")
        if not isinstance(self.site_failover, (bool, np.bool_)):
            raise PlanError(f"workload {self.name!r}: site_failover must be true or false (got {self.site_failover!r})")
        object.__setattr__(self, "site_failover", bool(self.site_failover))
        if self.peak_day is None:
            object.__setattr__(self, "peak_day", self.window is None)
        elif not isinstance(self.peak_day, (bool, np.bool_)):
            raise PlanError(f"workload {self.name!r}: peak_day must be true or false (got {self.peak_day!r}); "
                            "leave it out for the default (true; false for a workload in a window)")
        object.__setattr__(self, "peak_day", bool(self.peak_day))
        allowed = KIND_ARGUMENTS[self.kind]
        for key in self.args:
            if key not in allowed:
                why = f" ({_DERIVED[key]})" if key in _DERIVED else ""
                raise PlanError(f"workload {self.name!r}: unknown key {key!r} for kind {self.kind}{why}; "
                                f"accepted: {', '.join(WORKLOAD_KEYS)}, {', '.join(allowed)}")
        missing = [k for k, v in allowed.items() if v is None and self.args.get(k) is None
                   and k not in _OPTIONAL_NONE.get(self.kind, ())]
        if missing:
            raise PlanError(f"workload {self.name!r}: {missing[0]} is required for kind {self.kind}")
        util_form = self.kind == "measured" and self.args.get("utilization") is not None
        if util_form:
            if self.rate is not None or self.rate_range is not None:
                raise PlanError(f"workload {self.name!r}: rate and utilization are two ways to give a measured "
                                "load: give one")
            return
        if self.rate is None and self.rate_range is None:
            raise PlanError(f"workload {self.name!r}: rate is required ({RATE_UNITS[self.kind]})")
        if self.rate_range is not None:
            lo, hi = self._range("rate_range", WORKLOAD_RATE, f"a rate ({RATE_UNITS[self.kind]})")
            if lo <= 0.0:
                raise PlanError(f"workload {self.name!r}: rate_range starts at {lo:g}; a forecast's range of a rate "
                                "is above 0 (it is drawn on a log scale)")
            if self.rate is None:
                object.__setattr__(self, "rate", range_point(lo, hi))
            elif np.ndim(self.rate):
                raise PlanError(f"workload {self.name!r}: rate_range is the range of one rate; give one rate "
                                f"with it (got {value_text(self.rate)})")
            object.__setattr__(self, "rate_range", (lo, hi))
        object.__setattr__(self, "rate", checked(WORKLOAD_RATE, self.rate, self.name, "rate", scalar=False))
        if self.rate_range is not None:
            self._point_inside("rate", float(self.rate), self.rate_range)

    def _range(self, key: str, domain, what: str, given_as: str | None = None) -> tuple:
        """A range's two ends, each in ``domain``, low before high (``given_as``: the key the user
        gave it as, where not ``key``)."""
        v = getattr(self, key)
        key = given_as or key
        if isinstance(v, (str, bytes, dict)) or np.ndim(v) != 1 or len(v) != 2:
            raise PlanError(f"workload {self.name!r}: {key} must be two numbers, the low and high ends of "
                            f"the forecast's 90% interval of {what} (got {value_text(v)})")
        try:
            lo, hi = (float(domain.check(x, key, scalar=True)) for x in v)
        except (ValueError, TypeError) as e:
            raise PlanError(f"workload {self.name!r}: {e}") from None
        if lo > hi:
            raise PlanError(f"workload {self.name!r}: {key} is ({lo:g}, {hi:g}); give the low end first")
        return lo, hi

    def _point_inside(self, key: str, point: float, rng: tuple) -> None:
        if not rng[0] <= point <= rng[1]:
            raise PlanError(f"workload {self.name!r}: {key} {point:g} is outside its range ({rng[0]:g}, "
                            f"{rng[1]:g}); the point is the forecast's median, inside its 90% interval")

    def _growth(self) -> None:
        """``growth_per_year`` and ``growth_range`` checked; a pair given as ``growth_per_year`` is
        the range."""
        g = self.growth_per_year
        if g is not None and not isinstance(g, (str, bytes)) and np.ndim(g) == 1:
            if self.growth_range is not None:
                raise PlanError(f"workload {self.name!r}: growth_per_year is a range and growth_range is given: "
                                "give the range once")
            object.__setattr__(self, "growth_range", g)
            g, given_as = None, "growth_per_year"
        else:
            given_as = None
        if self.growth_range is not None:
            lo, hi = self._range("growth_range", GROWTH_PER_YEAR, "the yearly growth (fractions)", given_as)
            object.__setattr__(self, "growth_range", (lo, hi))
            if g is None:
                g = range_point(lo, hi, offset=1.0)
        try:
            g = GROWTH_PER_YEAR.check(0.0 if g is None else g, "growth_per_year", scalar=True)
        except (ValueError, TypeError) as e:
            raise PlanError(f"workload {self.name!r}: {e}; growth_per_year is a fraction per year "
                            "(0.5 = +50% a year, 2 = three times the rate after a year)") from None
        object.__setattr__(self, "growth_per_year", float(g))
        if self.growth_range is not None:
            self._point_inside("growth_per_year", float(g), self.growth_range)

    def arg(self, key: str):
        """The argument's value, or its default."""
        v = self.args.get(key)
        return KIND_ARGUMENTS[self.kind][key] if v is None else v


# Required-looking arguments a kind resolves itself (None means "derive it").
_OPTIONAL_NONE = {"ams": ("key_reuse",), "channel": ("cipher",), "handshakes": ("card_mode", "cpu_us"),
                  "measured": ("exec_ms", "utilization", "cpu_us")}


# ----------------------------------------------------------------------------- plan files
# (orders and migrations are a plan's [[order]] and [[migration]] tables, not keys of [system])
SYSTEM_KEYS = tuple(k for k in System.__dataclass_fields__ if k not in ("orders", "migrations"))


SYSTEM_REQUIRED = ("processors", "coprocessors", "accelerators")


WORKLOAD_KEYS = ("name", "kind", "rate", "growth_per_year", "profile", "start", "duration_minutes", "site_failover",
                 "peak_day", "rate_range", "growth_range")
