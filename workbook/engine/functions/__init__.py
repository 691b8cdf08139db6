"""The native Excel functions of the formula engine, one module per Excel category.

Every function takes and returns :class:`~cryptoplan.workbook.engine.values.Val` (or a
:class:`~cryptoplan.workbook.engine.core.Ref` for the reference-returning ones: ``INDEX``,
``OFFSET``, ``INDIRECT``, ``IF``/``CHOOSE`` with reference branches), vectorized over the
scenario axis.  Importing this package registers all of them in :data:`NATIVE`;
:data:`SUPPORTED` lists their names.

========================  =============================================================
module                    functions
========================  =============================================================
:mod:`.mathematical`      ABS, ROUND, MOD, POWER, CEILING, FACT, ...
:mod:`.statistical`       POISSON.DIST, NORM.DIST, NORM.INV, EXPON.DIST
:mod:`.logical`           IF, IFS, IFERROR, IFNA, AND, OR, XOR, NOT, SWITCH, ...
:mod:`.information`       ISNUMBER, ISERROR, ISBLANK, ERROR.TYPE, N, T, TYPE, ...
:mod:`.aggregates`        SUM, AVERAGE, MIN, MAX, COUNT, COUNTIF(S), SUMIF(S), SUMPRODUCT, ...
:mod:`.lookup`            MATCH, XMATCH, VLOOKUP, HLOOKUP, XLOOKUP, INDEX, OFFSET, ...
:mod:`.text`              LEFT, MID, FIND, SUBSTITUTE, CONCAT, TEXTJOIN, TEXT, VALUE, ...
:mod:`.dates`             DATE, NOW, TODAY
========================  =============================================================
"""

from __future__ import annotations

from . import aggregates, dates, information, logical, lookup, mathematical, statistical, text  # noqa: F401  (they register)
from .base import NATIVE
from .text import format_number
from ..arguments import FunctionRegistry

__all__ = ["NATIVE", "SUPPORTED", "native_functions", "format_number"]

SUPPORTED = tuple(sorted(NATIVE))


def native_functions() -> FunctionRegistry:
    """A fresh registry with the native Excel functions only (a copy: callers may add their own)."""
    return NATIVE.copy()
