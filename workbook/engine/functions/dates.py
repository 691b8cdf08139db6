"""Date and time functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import datetime as _dt
import math

import numpy as np

from ..core import Fn
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


NATIVE["NOW"] = Fn("NOW", lambda ctx: Val.number(_now_serial()), "", volatile=True)
NATIVE["TODAY"] = Fn("TODAY", lambda ctx: Val.number(math.floor(_now_serial())), "", volatile=True)


def _date(y, m, d):
    y = np.trunc(y)
    y = np.where(y < 1900, y + 1900, y)
    bad = (y < 1900) | (y > 9999)
    out = np.zeros(np.broadcast_shapes(y.shape, m.shape, d.shape))
    for idx in np.ndindex(out.shape):
        yy = int(np.broadcast_to(y, out.shape)[idx])
        mm = int(np.trunc(np.broadcast_to(m, out.shape)[idx]))
        dd = int(np.trunc(np.broadcast_to(d, out.shape)[idx]))
        if np.broadcast_to(bad, out.shape)[idx]:
            continue
        yy += (mm - 1) // 12
        mm = (mm - 1) % 12 + 1
        base = _dt.date(yy, mm, 1) - _dt.date(1899, 12, 30)
        out[idx] = base.days + dd - 1
    return out, error_array(bad, ERR_NUM)


register_numeric("DATE", _date, 3)

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
