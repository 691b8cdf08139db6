"""The allowed range of every validated model argument, declared once.

A :class:`Domain` is an argument's set of accepted numbers: its bounds, whether
each bound is included, whether only whole numbers are accepted, and its unit.
Everything that states or enforces a range reads it from here:

* the model functions validate through :meth:`Domain.check` (the error names the
  argument, the value and the range: ``cards must be in [1, 64] (got 0)``);
* the Excel function catalog (:mod:`cryptoplan.addin.catalog`) writes the range
  part of each argument's help from :meth:`Domain.text` (``Cards of that type; 1..64.``);
* the template workbook (:mod:`cryptoplan.workbook.template`) derives each input
  cell's data validation from the domain (or from a :meth:`Domain.narrowed`
  copy where Excel cannot express an open bound).

A bound that is a published figure is a :class:`FromFigure`: it is read from the
figures table in force (``data/figures.csv``, or a site's table under
:func:`cryptoplan.model.figures.using_figures`) each time it is needed, so no
published number is written in code.  The other bounds are engineering limits of
this tool or of the product, each with a comment saying which.

This module imports the standard library only (NumPy is loaded the first time a
value is checked), so that :mod:`cryptoplan.model.params` can use it and stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptoplan.model.errors import InputError

import math
from dataclasses import dataclass, replace


from .figures import figure
from .lazy import lazy_module

__all__ = [
    "FromFigure", "Domain", "number_text",
    "MAX_ERLANGS", "MAX_STATIONS", "MAX_MESSAGE_KB",
    # queueing
    "TRAFFIC", "SERVERS", "POISSON_K", "POISSON_MEAN", "ARRIVAL_RATE", "SERVICE_TIME", "WAIT_TIME",
    "PERCENTILE", "MAX_SERVER_UTILIZATION", "MAX_WAIT", "MAX_PERCENTILE_WAIT", "SERVICE_SCV",
    "ARRIVAL_SCV", "COSMETATOS_SERVICE_SCV", "COSMETATOS_ARRIVAL_SCV", "POPULATION", "DEMAND",
    "THINK_TIME", "STATIONS", "MVA_TOLERANCE", "MAX_ITERATIONS", "DRAWS", "BAND_LEVEL",
    # planning
    "KEY_SIZE", "MESSAGE_KB", "ROUNDTRIP_MESSAGE_KB", "KEY_REUSE", "RECIPIENTS", "REQUESTERS",
    "CARDS", "PROCESSORS", "OTHER_LPAR_UTIL", "TX_RATE", "PLANNED_TX_RATE", "MAX_UTILIZATION",
    "MAX_WAIT_MS", "START_RATE", "HANDSHAKE_RATE", "RESUMED_SHARE", "MIGRATED_SHARE", "CONNECTION_CPU_US", "SSLRKEYC",
    "CHANNEL_PAIRS", "CHANNEL_REQUESTERS", "SSLTASKS", "IDLE_SSLTASKS", "DISPATCHERS", "CPS",
    "ROUNDTRIP_US", "TASK_ELAPSED_RATIO",
    # a plan
    "POOL_CARDS", "WORKLOAD_RATE", "WORKLOAD_UTIL", "GROWTH_PER_YEAR", "GROWTH", "MONTHS", "HORIZON_MONTHS",
    "PEAK_DAY_FACTOR", "FAILOVER_MAX_UTILIZATION", "SITE_FAILOVER_FACTOR", "LEAD_TIME_MONTHS", "MSU_PER_PROCESSOR",
    "PROFILE_FACTOR", "DURATION_MINUTES",
]


@dataclass(frozen=True)
class FromFigure:
    """A bound read from a published figure when it is needed.

    Parameters
    ----------
    figure_id : str
        Row id in the figures table (``data/figures.csv``).
    field : str
        ``"low"``, ``"high"`` or ``"value"`` of the row, or the name of one of its
        conditions (e.g. ``"message_kb"``: the message size the figure was measured at).
    divisor : float
        The bound is ``floor(number / divisor)`` when not 1 (channel pairs: MAXCHL's
        largest channel count over the two channels of a pair).
    """

    figure_id: str
    field: str = "high"
    divisor: float = 1.0

    def __call__(self) -> float:
        """The bound in the figures table in force, a float."""
        fig = figure(self.figure_id)
        raw = getattr(fig, self.field) if self.field in ("low", "high", "value") else fig.conditions.get(self.field)
        if raw is None or raw == "":
            raise InputError(f"figure {self.figure_id} has no {self.field}: it cannot bound an argument")
        number = float(raw)
        return number if self.divisor == 1.0 else float(math.floor(number / self.divisor))


# _validate imports NumPy: bound lazily, so that importing this module stays light.
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model import _validate as validate
else:
    validate = lazy_module("cryptoplan.model._validate")


@dataclass(frozen=True)
class Domain:
    """The numbers one model argument accepts.

    Parameters
    ----------
    name : str
        The argument's name in error messages (a caller validating another argument
        with the same domain passes its own name to :meth:`check`).
    low, high : float, FromFigure or None
        Bounds in the argument's unit; None means unbounded on that side.
    lo_open, hi_open : bool
        Whether the bound itself is excluded.
    integer : bool
        Only whole numbers (``2048.0`` counts: Excel sends floats).
    unit : str
        Unit of the argument ("" if dimensionless).
    """

    name: str
    low: float | FromFigure | None = None
    high: float | FromFigure | None = None
    lo_open: bool = False
    hi_open: bool = False
    integer: bool = False
    unit: str = ""

    def bounds(self) -> tuple:
        """``(low, high)`` as floats (None where unbounded), figures read from the table in force."""
        lo, hi = self.low, self.high
        return (None if lo is None else float(lo()) if isinstance(lo, FromFigure) else float(lo),
                None if hi is None else float(hi()) if isinstance(hi, FromFigure) else float(hi))

    def check(self, x, name: str | None = None, *, scalar: bool = False):
        """Validate ``x`` and return it (a scalar as float, an array as ndarray).

        Parameters
        ----------
        x : float or array_like
            The value(s); must be finite and inside the domain.
        name : str, optional
            Argument name for the error message (default: the domain's).
        scalar : bool
            Require a single number (arguments that are not vectorized).

        Raises
        ------
        ValueError
            Naming the argument, the offending value (and index) and the range,
            as :func:`cryptoplan.model._validate.check` words it.
        TypeError
            If ``x`` is not numeric.
        """
        lo, hi = self.bounds()
        return validate.check(name or self.name, x, lo, hi, lo_open=self.lo_open,
                                             hi_open=self.hi_open, integer=self.integer, scalar=scalar)

    def contains(self, x: float) -> bool:
        """Whether the number ``x`` is in the domain (finite, within the bounds, whole if required)."""
        x = float(x)
        lo, hi = self.bounds()
        return (math.isfinite(x)
                and (lo is None or (x > lo if self.lo_open else x >= lo))
                and (hi is None or (x < hi if self.hi_open else x <= hi))
                and (not self.integer or x == math.floor(x)))

    def text(self) -> str:
        """The range as help texts state it: ``1..64``, ``>= 0``, ``> 0``, ``in (0, 1)``, ``in [0, 1)``.

        Both bounds included: ``low..high`` (``= 1`` if they are equal); one bound: a
        comparison; an excluded bound with two bounds: the interval in brackets.  Numbers are written exactly
        (``999999999``, not ``1e+09``), as the error messages write them.
        """
        lo, hi = self.bounds()
        num = number_text
        if lo is None and hi is None:
            return "any finite number"
        if hi is None:
            return f"{'>' if self.lo_open else '>='} {num(lo)}"
        if lo is None:
            return f"{'<' if self.hi_open else '<='} {num(hi)}"
        if not (self.lo_open or self.hi_open):
            return f"= {num(lo)}" if lo == hi else f"{num(lo)}..{num(hi)}"
        return f"in {'(' if self.lo_open else '['}{num(lo)}, {num(hi)}{')' if self.hi_open else ']'}"

    def within(self, other: Domain) -> bool:
        """Whether every number this domain accepts, ``other`` accepts too (bounds as in force now)."""
        (lo, hi), (olo, ohi) = self.bounds(), other.bounds()
        low_ok = olo is None or (lo is not None and (lo > olo or (lo == olo and (self.lo_open or not other.lo_open))))
        high_ok = ohi is None or (hi is not None and (hi < ohi or (hi == ohi and (self.hi_open or not other.hi_open))))
        return low_ok and high_ok and (self.integer or not other.integer)

    def narrowed(self, low=None, high=None, *, lo_open: bool | None = None, hi_open: bool | None = None) -> Domain:
        """A copy with tighter bounds, for a caller that accepts less than the model does.

        The template narrows where a spreadsheet's data validation cannot state the
        domain itself (Excel's *between* includes both bounds).  Raises ValueError if
        the copy would accept a number this domain does not: a narrowing never widens.
        """
        out = replace(self, low=self.low if low is None else low, high=self.high if high is None else high,
                      lo_open=self.lo_open if lo_open is None else lo_open,
                      hi_open=self.hi_open if hi_open is None else hi_open)
        if not out.within(self):
            raise InputError(f"{self.name}: {out.text()} is not within {self.text()}: a narrowing cannot widen")
        return out


def number_text(x: float) -> str:
    """A bound as help texts and error messages write it: ``64``, ``0.01``, ``1e+12``, ``999999999``.

    The shortest form (``%g``) where it is exact, the whole number where ``%g`` would round
    it (:func:`cryptoplan.model._validate.number_text`).
    """
    return validate.number_text(x)


# ------------------------------------------------------------------ engineering limits
# Upper limit on Erlang traffic and servers: far beyond any installation, and it keeps
# every intermediate of the Erlang formulas (x + m, 2 x v) finite; accuracy is tested
# to 100,000 servers.  A numerical limit of this tool.
MAX_ERLANGS = 1e12
# Stations of an approximate MVA network (mva_schweitzer): its per-station arrays are
# dense.  A memory limit of this tool.
MAX_STATIONS = 10_000_000.0
# IBM MQ's largest message, 100 MB (the MAXMSGL ceiling): a product limit, not a
# measurement, so it has no row in data/figures.csv.
MAX_MESSAGE_KB = 102400.0

# ------------------------------------------------------------------ queueing
TRAFFIC = Domain("traffic", 0.0, MAX_ERLANGS, unit="erlangs")
SERVERS = Domain("servers", 1.0, MAX_ERLANGS, unit="servers")       # real values: the continuous extension
POISSON_K = Domain("k", 1.0, MAX_ERLANGS)
POISSON_MEAN = Domain("mean", 0.0, MAX_ERLANGS)
ARRIVAL_RATE = Domain("arrival_rate", 0.0, unit="1/time unit")
SERVICE_TIME = Domain("service_time", 0.0, lo_open=True, unit="time unit")
WAIT_TIME = Domain("t", 0.0, unit="time unit")
PERCENTILE = Domain("p", 0.0, 1.0, lo_open=True, hi_open=True)      # a probability strictly inside
MAX_SERVER_UTILIZATION = Domain("max_utilization", 0.0, 1.0, lo_open=True, unit="fraction")   # M/M/c sizing
MAX_WAIT = Domain("max_wait", 0.0, lo_open=True, unit="time unit")
MAX_PERCENTILE_WAIT = Domain("max_percentile_wait", 0.0, unit="time unit")
SERVICE_SCV = Domain("service_scv", 0.0)
ARRIVAL_SCV = Domain("arrival_scv", 0.0)
# Cosmetatos's M/G/c correction: service no more variable than exponential, Poisson arrivals.
COSMETATOS_SERVICE_SCV = Domain("service_scv", 0.0, 1.0)
COSMETATOS_ARRIVAL_SCV = Domain("arrival_scv", 1.0, 1.0)
POPULATION = Domain("population", 1.0, integer=True, unit="customers")
DEMAND = Domain("demands", 0.0, unit="time unit")
THINK_TIME = Domain("think_time", 0.0, unit="time unit")
STATIONS = Domain("stations", 1.0, MAX_STATIONS, integer=True, unit="stations")
MVA_TOLERANCE = Domain("tol", 0.0, lo_open=True)
MAX_ITERATIONS = Domain("max_iter", 1.0, integer=True)

# ------------------------------------------------------------------ planning
# Any positive size passes here; each key type's sizes are a list (params.RSA_KEY_SIZES, ECC_KEY_SIZES).
KEY_SIZE = Domain("key_size", 1.0, unit="bits")
MESSAGE_KB = Domain("message_kb", 0.0, MAX_MESSAGE_KB, unit="KB")
# Round trips are published up to seed 002's largest message (its "1m" column).
ROUNDTRIP_MESSAGE_KB = Domain("message_kb", 0.0, FromFigure("s002_rt_sslciph_1m_us", "message_kb"), unit="KB")
# AMS KEYREUSE's numeric values (the product also accepts DISABLED and UNLIMITED).
KEY_REUSE = Domain("key_reuse", 1.0, FromFigure("ref_keyreuse_range"), integer=True, unit="messages")
# Recipients per message: an engineering limit of this tool, not a published figure.
RECIPIENTS = Domain("recipients", 1.0, 10_000.0, integer=True, unit="recipients")
# Parallel AMS requesters (the closed network's population): an engineering limit of
# this tool, not a published figure.
REQUESTERS = Domain("requesters", 1.0, 100_000.0, integer=True, unit="requesters")
# Crypto Express cards of one mode for an LPAR: 64 is the architectural maximum of
# Crypto Express domains this tool supports (not a measurement).
CARDS = Domain("cards", 1.0, 64.0, integer=True, unit="cards")
# General processors of one LPAR: an engineering limit of this tool, not a published figure.
PROCESSORS = Domain("processors", 1.0, 256.0, integer=True, unit="processors")
# Share of a shared card (or CP) other LPARs keep busy: below 1 leaves this LPAR some capacity.
OTHER_LPAR_UTIL = Domain("other_lpar_util", 0.0, 1.0, hi_open=True, unit="fraction")
TX_RATE = Domain("tx_rate", 0.0, unit="transactions/s")
# A planned rate spreads MSTR's per-second CPU over the transactions: it must be above 0.
PLANNED_TX_RATE = Domain("tx_rate", 0.0, lo_open=True, unit="transactions/s")
# Planning ceiling on utilization: 1 would leave the queue unstable.
MAX_UTILIZATION = Domain("max_utilization", 0.0, 1.0, lo_open=True, hi_open=True, unit="fraction")
MAX_WAIT_MS = Domain("max_wait_ms", 0.0, lo_open=True, unit="ms")
# A plan (model.plan): the system's pools (0 cards: the LPAR has none of that mode), each
# workload's rate and growth, the scenario axes.  Engineering limits of this tool, not figures:
# 1e12/s is far past any z/OS rate; growth above 100x a year or horizons past 100 years are typos.
POOL_CARDS = Domain("cards", 0.0, 64.0, integer=True, unit="cards")
# Other LPARs' busy work on a shared pool, in cards' worth (RMF's CPC minus LPAR utilization summed
# over the pool's cards): a pool's cards are at most 64 (POOL_CARDS), each at most 100% busy.
OTHER_LPAR_CARDS = Domain("other_lpar_cards", 0.0, 64.0, unit="cards' worth")
WORKLOAD_RATE = Domain("rate", 0.0, 1e12, unit="per second")
WORKLOAD_UTIL = Domain("utilization", 0.0, 1.0, unit="fraction")
# A fraction per year: 10 (+1,000% a year) is far past any workload's growth; 50 is a percent typed
# where a fraction belongs.
GROWTH_PER_YEAR = Domain("growth_per_year", -1.0, 10.0, lo_open=True, unit="fraction per year")
GROWTH = Domain("growth", 0.0, 1e6, unit="factor")
MONTHS = Domain("months", 0.0, 1200.0, unit="months")
HORIZON_MONTHS = Domain("horizon_months", 0.0, 1200.0, unit="months")
# The busiest day of the year over the average day (RMF's daily totals): 1 is no peak day; beyond
# 100 the "average" day is not one.  Engineering limits of this tool.
PEAK_DAY_FACTOR = Domain("peak_day_factor", 1.0, 100.0, unit="factor")
# A pool's utilization with one card failed: below 1 (at 1 the queue is unstable).
FAILOVER_MAX_UTILIZATION = Domain("failover_max_utilization", 0.0, 1.0, lo_open=True, hi_open=True,
                                  unit="fraction")
# Another site's share arriving: a factor on the marked workloads, 1 (none) to 100.
SITE_FAILOVER_FACTOR = Domain("site_failover_factor", 1.0, 100.0, unit="factor")
# Months from ordering a card (or processor capacity) to having it installed: up to 10 years.
LEAD_TIME_MONTHS = Domain("lead_time_months", 0.0, 120.0, unit="months")
# MSU per processor at full use (the machine's MSU rating over its processors).
MSU_PER_PROCESSOR = Domain("msu_per_processor", 0.0, 1e5, lo_open=True, unit="MSU")
# A daily profile's factor on a rate for one interval (normalized to mean 1 afterwards).
PROFILE_FACTOR = Domain("factors", 0.0, 1e6, unit="factor")
# A workload that runs in a window of the day (a channel-start storm): its length.
DURATION_MINUTES = Domain("duration_minutes", 0.0, 1440.0, lo_open=True, unit="minutes")
START_RATE = Domain("start_rate", 0.0, unit="starts/s")
HANDSHAKE_RATE = Domain("handshake_rate", 0.0, unit="handshakes/s")
RESUMED_SHARE = Domain("resumed_share", 0.0, 1.0, unit="fraction")
MIGRATED_SHARE = Domain("share", 0.0, 1.0, unit="fraction")     # of a workload moved to a quantum-safe algorithm
CONNECTION_CPU_US = Domain("connection_cpu_us", 0.0, unit="us")
SSLRKEYC = Domain("sslrkeyc", 0.0, FromFigure("ref_sslrkeyc_range"), integer=True, unit="bytes")
# Two channels per pair on each queue manager: at most half of MAXCHL's largest value.
CHANNEL_PAIRS = Domain("channel_pairs", 1.0, FromFigure("ref_maxchl_range", divisor=2.0), integer=True,
                       unit="pairs")
# Requesters per channel pair: the closed network's population is pairs x requesters; the
# throughput has reached its asymptote long before, and above this the MVA iteration
# works with populations near 2**53 where a float no longer counts customers.  A numerical
# limit of this tool (1e308 ran 100,000 iterations and failed).
CHANNEL_REQUESTERS = Domain("requesters", 1.0, MAX_ERLANGS, integer=True, unit="requesters")
SSLTASKS = Domain("ssltasks", 1.0, integer=True, unit="tasks")
# Modes without SSL tasks ignore SSLTASKS: any whole number >= 0 (a sheet's cell may hold 0).
IDLE_SSLTASKS = Domain("ssltasks", 0.0, integer=True, unit="tasks")
# CHIDISPS: published range from 0, but the channels need at least one dispatcher.
DISPATCHERS = Domain("dispatchers", 1.0, FromFigure("ref_chidisps_range"), integer=True, unit="tasks")
CPS = Domain("cps", 0.0, lo_open=True, unit="CPs")
ROUNDTRIP_US = Domain("roundtrip_us", 0.0, lo_open=True, unit="us")
# SSL-task/dispatcher elapsed time per CPU time: elapsed time includes the CPU time.
TASK_ELAPSED_RATIO = Domain("task_elapsed_ratio", 1.0, unit="ratio")
# Parameter draws for the bands of an answer (calibration.draws): enough for a 90% band's ends
# to a fraction of a percent, few enough that a (draws x scenarios) array fits in memory.
DRAWS = Domain("n", 1.0, 1_000_000.0, integer=True, unit="draws")
# The probability of a band's central interval (0.9: from the 5% to the 95% quantile).
BAND_LEVEL = Domain("level", 0.0, 1.0, lo_open=True, hi_open=True, unit="fraction")
