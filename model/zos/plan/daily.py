"""The day as RMF sees it: intervals, a workload's daily profile, a window such as a start storm.

A plan is evaluated in every interval of its busiest day.  A workload's rate is its daily
average; a *daily profile* spreads it over the day, and a *window* (``start``,
``duration_minutes``) runs it only then.  The interval length is RMF's: a profile gives 24 hourly,
48 half-hourly or 96 quarter-hourly factors (RMF's ``INTVAL`` of 60, 30 or 15 minutes); a plan
evaluates at the finest interval any workload needs (15 minutes when a window is given, one
interval for the whole day when none is).

For workload :math:`i` in interval :math:`j` of :math:`n`:

.. math::

    \\lambda_{ij} = \\lambda_i\\, p_{ij}\\, d\\, s_i, \\qquad
    \\frac1n \\sum_j p_{ij} = 1 \\;\\text{(a profile)}, \\qquad
    p_{ij} = \\frac{|[a, a + \\ell) \\cap I_j|}{|I_j|} \\;\\text{(a window)}

with :math:`d` the system's ``peak_day_factor`` (the busiest day over the average day; 1 for a
workload with ``peak_day = false``, a window's by default: a storm's rate is its own) and
:math:`s_i` the ``site_failover_factor`` for a workload marked ``site_failover``.  A window's
rate is the rate while it runs.  RMF averages it over its interval (a ten-minute storm in a
quarter hour shows as 2/3 of its rate), but the cards and processors carry the storm's rate
while it runs, and their queues build then: a window off the quarter hours puts the day in
minutes (:func:`day_intervals`), so the storm is judged at its own rate.
"""

from __future__ import annotations

import datetime
import math
import re
from dataclasses import dataclass

import numpy as np

from ...domains import DURATION_MINUTES, PROFILE_FACTOR
from .errors import PlanError
from .naming import name_text

__all__ = ["DailyProfile", "Window", "INTERVALS_PER_DAY", "day_intervals", "daily_factors", "distinct_intervals",
           "interval_label", "parse_clock"]

DAY_MINUTES = 1440

#: Factors a profile may give, and RMF's interval length (minutes) each means.
INTERVALS_PER_DAY = {24: 60, 48: 30, 96: 15}

# A window on quarter hours is placed on quarter-hour intervals (RMF's shortest usual INTVAL); one
# that starts or ends inside a quarter hour puts the day in minutes, so that it runs at its own rate
# (issue 63: a 10-minute storm was judged at 2/3 of its rate, a 2-minute burst at 2/15).
_WINDOW_INTERVALS = 96
_MINUTE_INTERVALS = DAY_MINUTES


@dataclass(frozen=True)
class DailyProfile:
    """A named daily profile: 24, 48 or 96 factors on a workload's rate, normalized to mean 1.

    Parameters
    ----------
    name : str
        As the plan names it (``[profile.NAME]``).
    factors : sequence of float
        One per interval from midnight: 24 (hourly), 48 (half-hourly) or 96 (quarter-hourly);
        each >= 0, not all 0.  Any scale (RMF rates, percentages): they are divided by their
        mean, so the workload's ``rate`` stays its daily average.
    """

    name: str
    factors: tuple

    def __post_init__(self):
        object.__setattr__(self, "name", name_text(self.name, "a profile's name"))
        where = f"profile {self.name!r}"
        f = self.factors
        if isinstance(f, (str, bytes, dict)) or not hasattr(f, "__len__"):
            raise PlanError(f"{where}: factors must be a list of 24, 48 or 96 numbers (got {type(f).__name__})")
        if len(f) not in INTERVALS_PER_DAY:
            raise PlanError(f"{where}: factors must hold 24 (hourly), 48 (half-hourly) or 96 (quarter-hourly) "
                            f"numbers, one per RMF interval from 00:00 (got {len(f)})")
        vals = []
        for j, v in enumerate(f):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise PlanError(f"{where}: factor {j + 1} ({interval_label(j, len(f))}) must be a number "
                                f"(got {v!r})")
            try:
                vals.append(float(PROFILE_FACTOR.check(float(v), "factors", scalar=True)))
            except ValueError as e:
                raise PlanError(f"{where}: factor {j + 1} ({interval_label(j, len(f))}): {e}") from None
        a = np.array(vals)
        if not a.any():
            raise PlanError(f"{where}: every factor is 0; a profile spreads the daily rate, so at least one "
                            "interval must carry it")
        mean = a.mean()
        if not (np.isfinite(mean) and mean >= np.finfo(float).tiny):
            # a mean that underflows (factors of 5e-324) has lost its digits or is 0: the profile is
            # the same at any scale, so it is divided by its largest factor first
            a = a / a.max()
            mean = a.mean()
        object.__setattr__(self, "factors", tuple((a / mean).tolist()))

    @property
    def minutes(self) -> int:
        """Length of one interval, minutes (60, 30 or 15)."""
        return INTERVALS_PER_DAY[len(self.factors)]


def parse_clock(text, where: str, key: str = "start") -> int:
    """Minutes after midnight of ``"HH:MM"`` (00:00 to 23:59), a TOML local time, or a spreadsheet's
    time of day (a fraction of a day in [0, 1)); PlanError naming ``where`` otherwise."""
    if isinstance(text, datetime.time):
        return 60 * text.hour + text.minute
    if isinstance(text, (int, float)) and not isinstance(text, bool) and 0 <= text < 1:
        return int(round(text * DAY_MINUTES)) % DAY_MINUTES
    m = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", text) if isinstance(text, str) else None
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        raise PlanError(f"{where}: {key} must be a time of day as \"HH:MM\", 00:00 to 23:59 (got {text!r})")
    return 60 * int(m.group(1)) + int(m.group(2))


@dataclass(frozen=True)
class Window:
    """A workload that runs only from ``start`` (minutes after midnight) for ``minutes``; it may
    run past midnight into the next day's first intervals (the same day's, as every day repeats)."""

    start: int
    minutes: float

    def __post_init__(self):
        s = self.start
        if (isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, float, np.integer, np.floating))
                or not 0 <= s < DAY_MINUTES or s != int(s)):
            raise PlanError(f"window start must be whole minutes after midnight, 0 to {DAY_MINUTES - 1} (got {s!r}); "
                            'Window.checked takes a time of day as "HH:MM"')
        try:
            DURATION_MINUTES.check(self.minutes, "minutes", scalar=True)
        except (ValueError, TypeError) as e:
            raise PlanError(f"window: {e}") from None

    @classmethod
    def checked(cls, start, duration, where: str) -> "Window":
        """A Window from a plan's ``start`` ("HH:MM") and ``duration_minutes``, validated."""
        s = parse_clock(start, where)
        try:
            d = float(DURATION_MINUTES.check(duration, "duration_minutes", scalar=True))
        except (ValueError, TypeError) as e:
            raise PlanError(f"{where}: {e}") from None
        return cls(s, d)

    def fractions(self, n: int) -> np.ndarray:
        """Share of each of ``n`` intervals the window covers, shape (n,)."""
        edges = np.arange(n + 1) * (DAY_MINUTES / n)
        cover = np.zeros(n)
        a = float(self.start)
        b = a + self.minutes
        for lo, hi in ((a, min(b, DAY_MINUTES)), (0.0, max(b - DAY_MINUTES, 0.0))):
            if hi > lo:
                cover += np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0.0, None)
        return cover / (DAY_MINUTES / n)


def day_intervals(workloads) -> int:
    """Intervals a plan's day is evaluated in: the finest any workload needs (1: none needs one).

    A profile needs its own intervals (24, 48 or 96); a window 96 when it starts and ends on quarter
    hours, else 1,440 (minutes): a window starts on a whole minute, so one of a minute or more then
    fills at least one interval and the peak sees the rate while it runs.  (Intervals with the same
    factors are evaluated once, :func:`distinct_intervals`: minutes cost a plan a few more distinct
    intervals, not 15 times the work.)
    """
    n = 1
    for w in workloads:
        if w.profile is not None:
            n = max(n, len(w.profile.factors))
        if w.window is not None:
            quarter = DAY_MINUTES / _WINDOW_INTERVALS
            aligned = w.window.start % quarter == 0 and w.window.minutes % quarter == 0
            n = max(n, _WINDOW_INTERVALS if aligned else _MINUTE_INTERVALS)
    return n


def daily_factors(workloads, n: int) -> np.ndarray:
    """Each workload's factor on its rate in each of ``n`` intervals, shape (W, n) (no peak day, no site)."""
    out = np.ones((len(workloads), n))
    for i, w in enumerate(workloads):
        if w.profile is not None:
            out[i] = np.repeat(np.asarray(w.profile.factors), n // len(w.profile.factors))
        elif w.window is not None:
            out[i] = w.window.fractions(n)
    return out


def distinct_intervals(factors) -> tuple:
    """The intervals of a day whose factors differ: ``(first, inverse)``.

    Every quantity of a plan in an interval is a function, element by element, of that interval's
    factors (one per workload) and the scenario.  Intervals whose factors are the same, to the
    bit, have the same loads, waits and counts to the bit, so a plan evaluates each distinct
    column of ``factors`` once: a day of hourly profiles given at quarter hours has 96 intervals
    and at most 24 distinct ones (the template's day has 9).

    Parameters
    ----------
    factors : ndarray, shape (W, n)
        Each workload's factor in each interval (:func:`daily_factors`).

    Returns
    -------
    first : ndarray of int, shape (m,)
        The first interval of each distinct column, ascending: ``factors[:, first]`` are the
        distinct columns in the order of the day, so the first interval holding a maximum over them
        is the first over the day (NumPy's ``argmax``).
    inverse : ndarray of int, shape (n,)
        Each interval's column in ``first``: ``factors[:, first][:, inverse]`` is ``factors``.
    """
    f = np.ascontiguousarray(factors, dtype=float)
    n = f.shape[1]
    if n == 1:
        return np.zeros(1, dtype=np.intp), np.zeros(1, dtype=np.intp)
    bits = f.view(np.int64)                         # the same to the bit (0.0 and -0.0 are two)
    order = np.lexsort(bits[::-1])                  # stable: equal columns stay in the day's order
    ordered = bits[:, order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = np.any(ordered[:, 1:] != ordered[:, :-1], axis=0)
    group = np.cumsum(starts) - 1                   # each sorted interval's column, by sort order
    firsts = order[starts]                          # each column's first interval
    rank = np.argsort(firsts)
    renumber = np.empty(rank.size, dtype=np.intp)
    renumber[rank] = np.arange(rank.size)
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = renumber[group]
    return firsts[rank], inverse


def interval_label(j: int, n: int) -> str:
    """``"HH:MM"``: the start of interval ``j`` of ``n`` in a day."""
    m = int(round(j * DAY_MINUTES / n))
    return f"{m // 60:02d}:{m % 60:02d}"


def interval_minutes(n: int) -> float:
    """Length of one of ``n`` intervals, minutes."""
    return DAY_MINUTES / n if n else math.nan
