"""The evaluation context of a formula cell, and the diagnostics it records.

A compiled formula is a closure ``f(ctx)`` (:mod:`.compiler`); every function the formula
calls gets the same :class:`Ctx` as its first argument.  The context knows the cell (for
implicit intersection and ``ROW()``), whether the formula is evaluated as an array formula,
which scenario is evaluated when a function asked for one at a time, and it collects the
:class:`Diagnostic` of each error a function produces, so that a report can say why a cell
holds ``#VALUE!``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .arguments import MISSING
from .parser import cell_name
from .references import LaneRef, Ref, RefList, Ungroupable
from .values import ERR_VALUE, ERROR_TEXT, Val

__all__ = ["Ctx", "LaneCtx", "Diagnostic"]


@dataclass(slots=True)
class Diagnostic:
    """Why a cell holds an error or could not be computed."""

    function: str
    code: int
    message: str
    scenarios: int = 1  # how many scenarios show it

    def text(self) -> str:
        """``"FUNCTION: #ERROR! message"`` (an add-in's error text, whose code is the text kind:
        ``"FUNCTION: message"``)."""
        code = ERROR_TEXT.get(self.code)
        return f"{self.function}: {code + ' ' if code else ''}{self.message}".strip()


class Ctx:
    """Evaluation context of one formula cell: what a compiled closure ``f(ctx)`` is given.

    Attributes
    ----------
    engine : Engine
    sheet, row, col : int
        The cell (sheet index, 1-based row and column).
    array : bool
        Array mode (an array formula, an ``ARRAY`` argument): ranges are read whole.
    scen : int or None
        The one scenario evaluated (after a :class:`ScenarioSplit`), or None: all of them.
    cell_diags : list of Diagnostic
        Why the cell's errors arose, as functions report them (:meth:`diag`).
    """

    __slots__ = ("engine", "sheet", "row", "col", "array", "scen", "_arr", "cell_diags")

    def __init__(self, engine, sheet, row, col, array=False, scen=None, diags=None):
        self.engine = engine
        self.sheet = sheet
        self.row = row
        self.col = col
        self.array = array
        self.scen = scen
        self._arr = None
        self.cell_diags = diags if diags is not None else []

    @property
    def n(self) -> int:
        """Scenarios evaluated at once: 1 after a split, else the engine's."""
        return 1 if self.scen is not None else self.engine.n

    def as_array(self) -> "Ctx":
        """This context in array mode (made once, shared)."""
        if self.array:
            return self
        if self._arr is None:
            self._arr = Ctx(self.engine, self.sheet, self.row, self.col, True, self.scen,
                            self.cell_diags)
        return self._arr

    def where(self) -> str:
        """The cell as ``Sheet!A1``."""
        return f"{self.engine.sheets[self.sheet].name}!{cell_name(self.row, self.col)}"

    def diag(self, function: str, code: int, message: str, count: int = 1) -> None:
        """Record why ``function`` produced error ``code`` in this cell."""
        self.cell_diags.append(Diagnostic(function, code, message, count))

    def value(self, x) -> Val:
        """A raw result as a value: references are read (implicit intersection unless array)."""
        if isinstance(x, Val):
            return x
        if isinstance(x, Ref):
            if self.array or (x.r1 == x.r2 and x.c1 == x.c2):
                return self.engine.read(x, self.scen)
            return self.intersect(x)
        if isinstance(x, RefList):
            if len(x) == 1:
                return self.value(x[0])
            return Val.error(ERR_VALUE)
        if x is MISSING:
            return Val.empty()
        if isinstance(x, LaneRef):
            return self.engine.read_lanes(x)
        raise TypeError(f"unexpected value {x!r}")  # pragma: no cover

    def intersect(self, ref: Ref) -> Val:
        """Implicit intersection: the cell of ``ref`` in this cell's row or column
        (``#VALUE!`` if there is none)."""
        r, c = ref.r1, ref.c1
        if ref.rows > 1:
            if not ref.r1 <= self.row <= ref.r2:
                return Val.error(ERR_VALUE)
            r = self.row
        if ref.cols > 1:
            if not ref.c1 <= self.col <= ref.c2:
                return Val.error(ERR_VALUE)
            c = self.col
        return self.engine.read(Ref(ref.sheet, r, c, r, c), self.scen)


class LaneCtx(Ctx):
    """The context of the cells of one shape evaluated as one call: lane ``i`` is cell ``i``
    (:mod:`.shapes`).  It has no one row or column: asking for them (``ROW()``, implicit
    intersection, a message naming the cell) raises
    :class:`~.references.Ungroupable`, and the cells are evaluated one by one."""

    __slots__ = ("lanes", "_read")

    def __init__(self, engine, sheet, lanes: int, array=False, diags=None, read=None):
        self.engine = engine
        self.sheet = sheet
        self.array = array
        self.scen = None
        self._arr = None
        self.cell_diags = diags if diags is not None else []
        self.lanes = lanes
        self._read: dict = {} if read is None else read     # LaneRef -> its cells' values

    def value(self, x) -> Val:
        """As :meth:`Ctx.value`; a :class:`~.references.LaneRef` is read once per call (a formula
        that names a cell twice reads one lane twice)."""
        if type(x) is LaneRef:
            v = self._read.get(x)
            if v is None:
                v = self._read[x] = self.engine.read_lanes(x)
            return v
        return Ctx.value(self, x)

    @property       # type: ignore[override]
    def row(self):
        raise Ungroupable("the formula asks for its own row")

    @property       # type: ignore[override]
    def col(self):
        raise Ungroupable("the formula asks for its own column")

    @property
    def n(self) -> int:
        """One lane per cell."""
        return self.lanes

    def as_array(self) -> "Ctx":
        if self.array:
            return self
        if self._arr is None:
            self._arr = LaneCtx(self.engine, self.sheet, self.lanes, True, self.cell_diags, self._read)
        return self._arr
