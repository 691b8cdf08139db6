"""References as the evaluator sees them, and Excel's three reference operators.

A formula's reference evaluates to a :class:`Ref` (a rectangle of one sheet, by sheet index)
or, for a union ``(A1, B2:C3)``, a :class:`RefList`; the engine reads the cells only where a
value is needed.  The operators combine references, not values:

* :func:`range_join` -- ``A1:B2`` written with references on both sides (``A1:INDEX(...)``),
  the smallest rectangle holding both;
* :func:`intersection` -- ``A1:C3 B2:D4``, the cells in both (``#NULL!`` if none);
* :func:`union` -- ``(A1, B2:C3)``, both, as a :class:`RefList`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .values import ERR_NULL, ERR_VALUE, Val

__all__ = ["Ref", "RefList", "LaneRef", "Ungroupable", "as_ref", "range_join", "intersection", "union"]


@dataclass(frozen=True, slots=True)
class Ref:
    """A rectangular reference ``sheet!r1c1:r2c2`` (1-based, inclusive)."""

    sheet: int
    r1: int
    c1: int
    r2: int
    c2: int

    @property
    def rows(self) -> int:
        return self.r2 - self.r1 + 1

    @property
    def cols(self) -> int:
        return self.c2 - self.c1 + 1


class RefList(tuple):
    """A union of references (``(A1, B2:C3)``)."""


def as_ref(x) -> Ref | None:
    """``x`` as one rectangle: a :class:`Ref`, a union of one, else ``None``."""
    if isinstance(x, Ref):
        return x
    if isinstance(x, RefList) and len(x) == 1:
        return x[0]
    return None


def range_join(ctx, a, b):
    """``a:b``: the smallest rectangle holding both references (``#VALUE!`` across sheets or
    for a non-reference; an error operand propagates)."""
    ra, rb = as_ref(a), as_ref(b)
    if ra is None or rb is None:
        if isinstance(a, Val) and a.has_errors():
            return a
        if isinstance(b, Val) and b.has_errors():
            return b
        return Val.error(ERR_VALUE)
    if ra.sheet != rb.sheet:
        return Val.error(ERR_VALUE)
    return Ref(ra.sheet, min(ra.r1, rb.r1), min(ra.c1, rb.c1), max(ra.r2, rb.r2), max(ra.c2, rb.c2))


def intersection(a, b):
    """``a b``: the cells both references hold (``#NULL!`` if none, ``#VALUE!`` for a
    non-reference)."""
    ra, rb = as_ref(a), as_ref(b)
    if ra is None or rb is None:
        return Val.error(ERR_VALUE)
    r1, c1 = max(ra.r1, rb.r1), max(ra.c1, rb.c1)
    r2, c2 = min(ra.r2, rb.r2), min(ra.c2, rb.c2)
    if ra.sheet != rb.sheet or r1 > r2 or c1 > c2:
        return Val.error(ERR_NULL)
    return Ref(ra.sheet, r1, c1, r2, c2)


def union(a, b):
    """``a, b``: both references as a :class:`RefList` (``#VALUE!`` for a non-reference)."""
    parts = []
    for x in (a, b):
        if isinstance(x, Ref):
            parts.append(x)
        elif isinstance(x, RefList):
            parts.extend(x)
        else:
            return Val.error(ERR_VALUE)
    return RefList(parts)


class LaneRef:
    """One single-cell reference per lane: the cells of one shape evaluated as one call
    (:mod:`.shapes`), each reading its own cell.  Read as a value only
    (:meth:`~.context.Ctx.value` stacks the cells' values on the scenario axis)."""

    __slots__ = ("refs",)

    def __init__(self, refs: tuple):
        self.refs = refs

    def __repr__(self) -> str:
        return f"LaneRef({len(self.refs)} cells)"


class Ungroupable(Exception):
    """The cells of a shape cannot be evaluated as one call: they are compiled or evaluated one
    by one instead (never seen by a user)."""
