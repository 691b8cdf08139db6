"""Calendar months of a plan: the month its month 0 is (``[system] start``) and the months after it.

A plan counts months from its scenario (0: now).  A planner orders by the calendar, so with a
start month every month the plan prints is also given as the calendar month that holds it:
month :math:`m` after a start of year :math:`y`, month :math:`s` (1..12) is in

.. math:: k = (s - 1) + \\lfloor m \\rfloor, \\qquad \\text{year } y + \\lfloor k / 12 \\rfloor,
          \\ \\text{month } (k \\bmod 12) + 1,

month 0 being the start month itself (the plan is taken as made at its beginning).
"""

from __future__ import annotations

import datetime
import math
import re

from .errors import PlanError

__all__ = ["calendar_start", "month_date", "months_between"]

_START = re.compile(r"^(\d{4})-(\d{2})$")


def calendar_start(value, where: str = "system") -> str | None:
    """A plan's start month as ``"YYYY-MM"``, checked.

    Parameters
    ----------
    value : str, datetime.date or None
        ``"2027-01"``; a date (a spreadsheet turns a typed ``2027-01`` into one): its month;
        None: no calendar.
    where : str
        Named in the error.

    Raises
    ------
    PlanError
        Anything else, naming the value and the form.
    """
    if value is None:
        return None
    if isinstance(value, datetime.date):
        return f"{value.year:04d}-{value.month:02d}"
    if isinstance(value, str):
        m = _START.match(value.strip())
        if m and 1900 <= int(m[1]) <= 2999 and 1 <= int(m[2]) <= 12:
            return value.strip()
    raise PlanError(f"{where}: start must be a calendar month as \"YYYY-MM\", 1900-01 to 2999-12: the month that "
                    f"is the plan's month 0 (got {value!r})")


def month_date(start: str, months: float) -> str:
    """The calendar month holding ``months`` after the beginning of ``start`` (``"YYYY-MM"``).

    >>> month_date("2027-01", 6.4), month_date("2027-11", 2.0), month_date("2027-01", 0.0)
    ('2027-07', '2028-01', '2027-01')
    """
    year, month = (int(x) for x in start.split("-"))
    k = (month - 1) + math.floor(months)
    return f"{year + k // 12:04d}-{k % 12 + 1:02d}"


def months_between(start: str, month: str) -> int:
    """Whole months from the beginning of ``start`` to the beginning of ``month`` (both
    ``"YYYY-MM"``): the plan's month at which ``month`` begins.

    >>> months_between("2027-01", "2027-07"), months_between("2027-11", "2027-01")
    (6, -10)
    """
    (y0, m0), (y1, m1) = ((int(x) for x in t.split("-")) for t in (start, month))
    return (y1 * 12 + m1) - (y0 * 12 + m0)
