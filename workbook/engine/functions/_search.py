"""The search behind MATCH, XMATCH, VLOOKUP, HLOOKUP and XLOOKUP.

:func:`positions` finds each scenario's lookup value in a vector (a row or a column of a
range) with Excel's match modes: exact (with wildcards in text), approximate in a vector
sorted ascending or descending, and XLOOKUP's next smaller / next larger.  Values compare as
Excel compares them: numbers to 15 significant digits, texts without regard to case, and
values of different types never equal.  The vector is indexed once per call (a dictionary
for exact matches, sorted lists for approximate ones), so a sweep's thousands of lookup values
cost one pass each.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import bisect

import numpy as np

from ..arguments import ScenarioSplit
from ..ops import approx15, approx_equal
from ..values import BOOL, EMPTY, ERR_NULL, NUM, STR, Val
from .base import wildcard_regex

__all__ = ["positions"]


def _flat_vector(v: Val):
    """(kinds, nums, texts) of a one-row or one-column value, or None if 2-D."""
    r, c = v.shape
    if r != 1 and c != 1:
        return None
    return v.kind.reshape(v.n, -1), v.num.reshape(v.n, -1), \
        (None if v.text is None else v.text.reshape(v.n, -1))


def _norm_key(k, x, t):
    """A value as a lookup compares it: a number to 15 digits, a text in lower case, a
    boolean; None for an empty cell or an error."""
    if k == NUM:
        return ("n", float(approx15(np.asarray(x))))
    if k == STR:
        return ("s", t.lower())
    if k == BOOL:
        return ("b", bool(x))
    return None


class _Table:
    """A lookup vector (constant across scenarios) with indexes built on demand: the first
    position of each value (exact match), and the positions and values of each type sorted
    as they stand (approximate match)."""

    def __init__(self, kinds, nums, texts):
        self.k = kinds
        self.x = nums
        self.t = texts
        self._exact = None
        self._sorted = {}

    def exact(self):
        """``{normalized value: first position}``."""
        if self._exact is None:
            d = {}
            for i in range(len(self.k)):
                key = _norm_key(self.k[i], self.x[i], None if self.t is None else self.t[i])
                if key is not None and key not in d:
                    d[key] = i
            self._exact = d
        return self._exact

    def last_exact(self, key):
        """The last position of the normalized value ``key``, or -1."""
        for i in range(len(self.k) - 1, -1, -1):
            if _norm_key(self.k[i], self.x[i], None if self.t is None else self.t[i]) == key:
                return i
        return -1

    def typed(self, kind):
        """``(positions, values)`` of the elements of ``kind`` (texts in lower case)."""
        if kind not in self._sorted:
            pos = [i for i in range(len(self.k)) if self.k[i] == kind]
            if kind == STR:
                vals = [self.t[i].lower() for i in pos]
            else:
                vals = [float(self.x[i]) for i in pos]
            self._sorted[kind] = (pos, vals)
        return self._sorted[kind]


def _lookup_one(table: _Table, k, x, t, mode, search=1):
    """Position (0-based) of one lookup value or -1.

    ``k, x, t``: the value's kind, number and text.  ``mode``: 0 exact, 1 largest <= (sorted
    ascending), -1 smallest >= (sorted descending), 2 wildcard, and for XLOOKUP
    "next_smaller"/"next_larger".  ``search``: 1 first to last, -1 last to first.
    """
    if k == EMPTY:
        k, x = NUM, 0.0
    key = _norm_key(k, x, t)
    if key is None:
        return -1
    if mode in (0, 2):
        if k == STR and any(ch in t for ch in "*?~"):
            return _wildcard_position(table, t, search)
        if search < 0:
            return table.last_exact(key)
        return table.exact().get(key, -1)
    pos, vals = table.typed(k)
    v = t.lower() if k == STR else float(x)
    if mode == 1:
        return _ascending_position(pos, vals, v, k == NUM)
    if mode == -1:
        return _descending_position(pos, vals, v, k == NUM)
    if mode in ("next_smaller", "next_larger"):
        return _next_position(pos, vals, v, k, mode == "next_smaller", search)
    raise InputError(mode)  # pragma: no cover


def _wildcard_position(table: _Table, pattern: str, search: int) -> int:
    """First text (last, for ``search < 0``) that matches the wildcard ``pattern``, or -1."""
    rx = wildcard_regex(pattern)
    rng = range(len(table.k)) if search >= 0 else range(len(table.k) - 1, -1, -1)
    for i in rng:
        if table.k[i] == STR and rx.match(table.t[i]):
            return i
    return -1


def _ascending_position(pos: list, vals: list, v, numeric: bool) -> int:
    """In values sorted ascending: the last <= ``v`` (a number equal to 15 digits counts as
    equal), or -1."""
    i = bisect.bisect_right(vals, v) - 1
    if i >= 0 and numeric and i + 1 < len(vals) and approx_equal(vals[i + 1], v):
        i += 1
    return pos[i] if i >= 0 else -1


def _descending_position(pos: list, vals: list, v, numeric: bool) -> int:
    """In values sorted descending: the last >= ``v``, or -1."""
    best = -1
    for j, w in enumerate(vals):
        if w >= v or (numeric and approx_equal(w, v)):
            best = j
        else:
            break
    return pos[best] if best >= 0 else -1


def _next_position(pos: list, vals: list, v, k, smaller: bool, search: int) -> int:
    """XLOOKUP's match modes -1 / 1: an equal value, else the largest smaller (``smaller``)
    or the smallest larger one, or -1."""
    best, bestv = -1, None
    order = range(len(vals)) if search >= 0 else range(len(vals) - 1, -1, -1)
    for j in order:
        w = vals[j]
        if k == NUM and approx_equal(w, v):
            return pos[j]
        if k == STR and w == v:
            return pos[j]
        if smaller and w < v and (bestv is None or w > bestv):
            best, bestv = j, w
        if not smaller and w > v and (bestv is None or w < bestv):
            best, bestv = j, w
    return pos[best] if best >= 0 else -1


def positions(lookup: Val, vec: Val, mode, search=1):
    """Where each scenario's lookup value is in the vector ``vec``.

    Returns ``(positions, errors)``: the 0-based positions, shape ``(n,)`` (-1: not found),
    and the lookup values' error codes (None if there is none); ``(None, None)`` if ``vec``
    is not one row or one column.  ``mode`` and ``search`` as :func:`_lookup_one` takes them.
    A vector that varies by scenario raises :class:`ScenarioSplit`.
    """
    flat = _flat_vector(vec)
    if flat is None:
        return None, None
    kinds, nums, texts = flat
    if vec.n > 1:
        raise ScenarioSplit()
    table = _Table(kinds[0], nums[0], None if texts is None else texts[0])
    lk = lookup.kind.reshape(lookup.n, -1)[:, 0]
    lx = lookup.num.reshape(lookup.n, -1)[:, 0]
    lt = None if lookup.text is None else lookup.text.reshape(lookup.n, -1)[:, 0]
    n = lookup.n
    pos = np.full(n, -1, dtype=np.int64)
    cache: dict[tuple, int] = {}          # (kind, number, text) -> position
    for s in range(n):
        k = int(lk[s])
        if k >= ERR_NULL:
            continue
        key = (k, float(lx[s]), None if lt is None or k != STR else lt[s])
        p = cache.get(key)
        if p is None:
            p = _lookup_one(table, k, lx[s], key[2], mode, search)
            cache[key] = p
        pos[s] = p
    err = np.where(lk >= ERR_NULL, lk, 0).astype(np.int8)
    return pos, (err if err.any() else None)
