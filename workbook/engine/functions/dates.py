"""Date and time functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import datetime as _dt
import math

import numpy as np

from ..arguments import Fn
from ..values import (
    ERR_NUM, Val,
)
from .base import (
    NATIVE, error_array, register_numeric,
)

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)


def _now_serial():
    d = _dt.datetime.now()
    return (d - _dt.datetime(1899, 12, 30)).total_seconds() / 86400.0


NATIVE["NOW"] = Fn("NOW", lambda ctx: Val.number(_now_serial()), volatile=True)
NATIVE["TODAY"] = Fn("TODAY", lambda ctx: Val.number(math.floor(_now_serial())), volatile=True)


def _days_from_civil(y, m, d):
    """Days from 1970-01-01 to the proleptic Gregorian date y-m-d (whole-number arrays,
    m in 1..12), element-wise: H. Hinnant's days_from_civil, in integer arithmetic."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400                                  # [0, 399]
    doy = (153 * ((m + 9) % 12) + 2) // 5 + d - 1        # [0, 365], from March 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy        # [0, 146096]
    return era * 146097 + doe - 719468


#: Serial 0 of the 1900 date system is 1899-12-30 from 1900-03-01 on; before, 1899-12-31,
#: because Excel counts 1900 as a leap year (serial 60 is the non-existent 1900-02-29).
_EPOCH = int(_days_from_civil(np.int64(1899), np.int64(12), np.int64(30)))
_MARCH_1900 = 1900 * 12 + 2          # months since year 0 of 1900-03
#: 9999-12-31, the last day of the 1900 date system (ECMA-376 Part 4, Date Representation).
_LAST_SERIAL = 2958465


def _date(y, m, d):
    """DATE(year, month, day): the 1900-system serial, months and days normalized.

    A year 0-1899 means 1900 + year; below 0 or from 10000 on, #NUM!. A month outside
    1-12 moves the year, a day outside the month moves the month (day 0 is the last day
    of the month before). Serials before 1900-03-01 are one less than the day count from
    1899-12-30, as in Excel: DATE(1900,1,1) is 1 and DATE(1900,2,29) is 60. A date after
    9999-12-31 (serial 2958465) is #NUM!.
    """
    y, m, d = np.broadcast_arrays(np.trunc(y), np.trunc(m), np.trunc(d))
    y = np.where((y >= 0) & (y < 1900), y + 1900, y)
    bad = ~((y >= 1900) & (y <= 9999)) | (np.abs(m) > 1e12) | (np.abs(d) > 1e12)
    y, m, d = (np.where(bad, 0, a).astype(np.int64) for a in (y, m, d))
    months = y * 12 + (m - 1)                            # months since year 0, month normalized
    yy, mm = np.floor_divide(months, 12), months % 12 + 1
    serial = _days_from_civil(yy, mm, np.ones_like(mm)) - _EPOCH + (d - 1)
    serial = serial - (months < _MARCH_1900)
    bad = bad | (serial > _LAST_SERIAL)
    return np.where(bad, 0.0, serial.astype(float)), error_array(bad, ERR_NUM)


register_numeric("DATE", _date, 3)

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
