"""The workbook evaluation engine: formulas -> values, vectorized over scenarios.

Design
------
* A workbook package is read by :class:`~cryptoplan.workbook.engine.package.Package`
  (safe XML, size and cell limits).
* Each formula is tokenized (:mod:`cryptoplan.workbook.engine.tokenizer`: openpyxl's token stream,
  read a run of characters at a time), parsed into a syntax tree
  (:mod:`cryptoplan.workbook.engine.parser`, :mod:`~cryptoplan.workbook.engine.nodes`) and
  compiled into a tree of Python closures (:mod:`cryptoplan.workbook.engine.compiler`).
* Formulas filled down or across differ only in their references: each *shape* is parsed
  once (:mod:`cryptoplan.workbook.engine.shapes`), and with one scenario the cells of a
  shape are compiled once and evaluated as one call, one lane per cell (a sheet of 1,746
  mirror cells is one call, a growth table's 17 months one plan).  A shape that asks for
  its own cell (``ROW()``, implicit intersection), hands a differing reference to a function
  that needs the reference itself, or whose cells depend on each other is evaluated cell by
  cell, as is a cell whose lane holds an error (for its diagnostics).
* The static references of every formula (cells, ranges, defined names) give
  a dependency graph; Tarjan's algorithm orders it (precedents first) and
  finds circular references (:mod:`cryptoplan.workbook.engine.graph`).  References that
  are only known at run time (``OFFSET``, ``INDIRECT``, ``INDEX`` used as a reference) are
  evaluated on demand, with a re-entrancy check that also reports dynamic cycles.
* Values are :class:`~cryptoplan.workbook.engine.values.Val`: NumPy arrays whose first
  axis is the scenario axis, so one pass over the formulas evaluates every
  scenario of a sweep; a value that does not depend on a varied input keeps
  ``n = 1`` and costs nothing extra.  A formula whose reference target itself
  varies by scenario (``OFFSET(A1, TxRate, 0)``) is evaluated scenario by
  scenario (:class:`ScenarioSplit`) -- correct, only slower for that cell.
* Functions come from a :class:`FunctionRegistry` of :class:`Fn`
  (:mod:`cryptoplan.workbook.engine.arguments`): the native Excel functions
  of :mod:`cryptoplan.workbook.engine.functions` plus the UDFs (by default those of the
  add-in catalog, see :mod:`cryptoplan.workbook.catalog_functions`).

Excel semantics implemented: implicit intersection of a range used where one
value is expected (in a normal formula) vs element-wise arrays (in an array
formula and in array arguments such as ``SUMPRODUCT``'s); error values that
propagate (``#DIV/0!``, ``#VALUE!``, ``#N/A``, ``#NUM!``, ``#NAME?``,
``#REF!``); coercion of booleans, empty cells and numeric text; workbook- and
sheet-scoped defined names; cross-sheet references with quoted sheet names;
absolute and relative references (shared formulas are expanded per cell).
Whole-column/row references are clipped to the sheet's used area.
"""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError, InputError

import re
import warnings

import numpy as np

from .arguments import MISSING, Fn, FunctionRegistry, ScenarioSplit
from . import evaluation
from .compiler import Compiler
from .context import Ctx, Diagnostic
from .nodes import BadReference, Name, Reference, as_tuple
from .package import Cell, Package, SheetData
from .parser import (
    FormulaError, MAX_COL, MAX_ROW, cell_name, deep_recursion, parse, parse_area, parse_ref,
)
from .references import LaneRef, Ref, RefList, Ungroupable
from .evaluation import Group, stack_scenarios
from .shapes import parse_shaped, shape_tree, split
from .values import (
    BOOL, EMPTY, ERR_NAME, ERR_REF, ERR_UNSUPPORTED, NUM,
    STR, ExcelError, Val,
)

# Ref, RefList, Fn, FunctionRegistry, ScenarioSplit, MISSING, Ctx and Diagnostic live in
# .references, .arguments and .context; they are named here too, where the engine's callers
# have always found them.
__all__ = ["Engine", "Ref", "RefList", "Ctx", "Fn", "FunctionRegistry", "ScenarioSplit", "Diagnostic",
           "MISSING", "EngineError"]

#: Largest block of cells one reference may read (a memory guard).
MAX_BLOCK_CELLS = 5_000_000

#: Fewest cells of one shape evaluated as one call (:class:`Group`); fewer are evaluated one by one.
MIN_GROUP = 4


class EngineError(CryptoplanError):
    """A request the engine cannot carry out (unknown name or sheet, formula cell set ...)."""


# ===================================================================== engine


class Engine:
    """Evaluate the formulas of a workbook, optionally for many scenarios at once.

    Parameters
    ----------
    package : Package
        The workbook, opened by :class:`~cryptoplan.workbook.engine.package.Package`.
    functions : FunctionRegistry
        The functions formulas may call, e.g.
        :func:`cryptoplan.workbook.catalog_functions.default_functions` (native + add-in UDFs); the
        engine knows none of its own, so it imports no function module.
    n : int
        Number of scenarios (1 for a plain recalculation).
    shapes : bool
        With one scenario, evaluate the cells of one sheet whose formulas share a shape
        (:mod:`.shapes`: filled down or across, references apart) as one call, one lane per
        cell (default).  The values and diagnostics are those of the cells evaluated one by
        one, but for an add-in function's vectorized model call, which may round its last bit
        otherwise (as a sweep's scenarios do), and for where a cycle through ``INDIRECT`` is
        first met; False evaluates them one by one (to compare).

    Examples
    --------
    >>> eng = Engine(Package("planner.xlsx"), default_functions())  # doctest: +SKIP
    >>> eng.set_input("TxRate", [1000, 2000, 4000])              # doctest: +SKIP
    >>> eng.evaluate()                                           # doctest: +SKIP
    >>> eng.value("Results!B3").num[:, 0, 0]                     # doctest: +SKIP
    """

    def __init__(self, package: Package, functions: FunctionRegistry, n: int = 1, *, shapes: bool = True):
        self.package = package
        self.functions = functions
        self.sheets: list[SheetData] = package.sheets
        self.sheet_index = {s.name.lower(): s.index for s in self.sheets}
        self.n = n
        self._names: dict = {}          # (local sheet or None, NAME) -> formula text
        self._name_case: dict = {}      # (local sheet or None, NAME) -> name as written
        self._name_ast: dict = {}       # (local sheet or None, NAME) -> parsed formula
        self._read_defined_names(package.defined_names)
        self.formulas: dict[tuple, Cell] = {}
        self.spill_owner: dict[tuple, tuple] = {}
        self._find_formulas()
        self._compiled: dict[tuple, object] = {}
        self._deps: dict[tuple, list] = {}
        self._reads: dict[tuple, list] = {}     # formula cell -> the references it reads statically
        self._dynamic: set = set()
        self._uses: dict[tuple, set] = {}
        self.overrides: dict[tuple, Val] = {}
        self.values: dict[tuple, Val] = {}
        self.state: dict[tuple, int] = {}
        self.diagnostics: dict[tuple, list[Diagnostic]] = {}
        self._const_cache: dict[tuple, Val] = {}
        self._block_cache: dict[Ref, Val] = {}
        self._date_cells: dict[int, frozenset] = {}
        self._formula_index: dict[int, list] = {}
        for (si, r, c) in self.formulas:
            self._formula_index.setdefault(si, []).append((r, c))
        for (si, r, c) in self.spill_owner:
            self._formula_index.setdefault(si, []).append((r, c))
        self._formula_sets = {si: set(v) for si, v in self._formula_index.items()}
        self.cycles: list[list[tuple]] = []
        self._group_of: dict[tuple, Group] | None = None      # formula cell -> its shape's group
        self.shapes = shapes

    def _read_defined_names(self, defined_names) -> None:
        """Keep the package's defined names, except Excel's own (``_xlnm.``) and those local
        to a sheet that does not exist."""
        for name, local, text in defined_names:
            if name.lower().startswith("_xlnm."):
                continue
            if local is not None and not 0 <= local < len(self.sheets):
                continue
            self._names[(local, name.upper())] = text
            self._name_case[(local, name.upper())] = name

    def _find_formulas(self) -> None:
        """The formula cells, and the cells an array formula or a data table spills into."""
        for sh in self.sheets:
            for (r, c), cell in sh.cells.items():
                if cell.formula is not None:
                    self.formulas[(sh.index, r, c)] = cell
        for key, cell in list(self.formulas.items()):
            if cell.ftype in ("array", "dataTable") and cell.fref:
                try:
                    r1, c1, r2, c2 = parse_area(cell.fref.replace("$", ""))
                except (TypeError, ValueError):
                    continue
                for r in range(r1, r2 + 1):
                    for c in range(c1, c2 + 1):
                        if (key[0], r, c) != key:
                            self.spill_owner[(key[0], r, c)] = key

    # ------------------------------------------------------------ addressing
    def sheet_named(self, name: str) -> int:
        """Index of the sheet called ``name`` (any case); :class:`EngineError` if none."""
        si = self.sheet_index.get(name.lower())
        if si is None:
            raise EngineError(f"no sheet {name!r} (sheets: {', '.join(s.name for s in self.sheets)})")
        return si

    def where(self, key) -> str:
        """A cell key ``(sheet, row, col)`` as ``Sheet!A1``."""
        si, r, c = key
        return f"{self.sheets[si].name}!{cell_name(r, c)}"

    def defined_name(self, name: str, scope: int | None):
        """(syntax tree, home sheet) of a defined name seen from sheet ``scope``, or None.

        The tree is a :mod:`~cryptoplan.workbook.engine.nodes` node, parsed once (a formula
        that does not parse is a :class:`~cryptoplan.workbook.engine.nodes.BadReference` to
        ``#REF!``); the home sheet is the name's own, None for a workbook-wide name.
        """
        name = name.upper()
        for key in ((scope, name), (None, name)):
            if key in self._names:
                if key not in self._name_ast:
                    text = self._names[key]
                    try:
                        self._name_ast[key] = parse(text)
                    except FormulaError:
                        self._name_ast[key] = BadReference(text, ERR_REF)
                return self._name_ast[key], key[0]
        return None

    def resolve_name(self, name: str, scope: int | None):
        """Deprecated (until 0.2): :meth:`defined_name` with the tree in the tagged-tuple form the
        parser returned before the node classes (:func:`~cryptoplan.workbook.engine.nodes.as_tuple`):
        a reference is ``("ref", sheet, r1, c1, r2, c2)``."""
        warnings.warn("Engine.resolve_name is deprecated and will be removed in 0.2: use Engine.defined_name "
                      "(node classes, not tagged tuples)", DeprecationWarning, stacklevel=2)
        found = self.defined_name(name, scope)
        return None if found is None else (as_tuple(found[0]), found[1])

    def names(self) -> list[tuple[int | None, str]]:
        """Defined names as ``(local sheet index or None, name as written)``."""
        return sorted(((k[0], self._name_case[k]) for k in self._names),
                      key=lambda t: (t[0] is not None, t[0] or 0, t[1]))

    def name_text(self, name: str, scope: int | None = None) -> str | None:
        """The formula text of the defined name ``name`` of ``scope`` (None: workbook-wide)."""
        return self._names.get((scope, name.upper()))

    def name_as_written(self, name: str, scope: int | None) -> str:
        """The defined name ``name`` of ``scope`` spelt as the workbook writes it (``name`` if
        there is no such name)."""
        return self._name_case.get((scope, name.upper()), name)

    def locate(self, target: str) -> tuple[int, int, int]:
        """Cell of an input: a defined name (``TxRate``, ``Inputs!TxRate``) or ``Sheet!A1``.

        Raises
        ------
        EngineError
            If there is no such name/sheet/cell, or the name is not a single cell.
        """
        target = target.strip()
        node = parse_ref(target)
        if isinstance(node, Reference):
            if node.sheet is None:
                raise EngineError(f"{target!r}: give the sheet as well (Sheet!A1) or a defined name")
            si = self.sheet_named(node.sheet)
            if (node.r1, node.c1) != (node.r2, node.c2):
                raise EngineError(f"{target!r} is a range; --set takes one cell")
            return si, node.r1, node.c1
        if isinstance(node, Name):
            return self._locate_name(target, node)
        raise EngineError(f"{target!r} is neither a defined name nor a Sheet!A1 cell")

    def _locate_name(self, target: str, node: Name) -> tuple[int, int, int]:
        """The cell a defined name refers to (:meth:`locate`)."""
        name = node.name
        scope = None if node.sheet is None else self.sheet_named(node.sheet)
        found = self.defined_name(name, scope)
        if found is None:
            known = ", ".join(sorted({n for _, n in self._names})) or "none"
            cellish = re.fullmatch(r"\$?[A-Za-z]{1,4}\$?\d+", name) is not None
            hint = (" and not a cell inside a sheet (columns A to XFD, rows 1 to 1,048,576)"
                    if cellish else "")
            raise EngineError(f"{target!r}: no defined name {name!r} in the workbook{hint} "
                              f"(names: {known})")
        tree, home = found
        if not isinstance(tree, Reference):
            raise EngineError(f"name {name} is {self.name_text(name, home)!r}, not one cell")
        if tree.sheet is None:
            raise EngineError(f"name {name} has no sheet in its reference")
        si = self.sheet_named(tree.sheet)
        if (tree.r1, tree.c1) != (tree.r2, tree.c2):
            raise EngineError(f"name {name} refers to a range ({self.name_text(name, home)}); "
                              "--set takes one cell")
        return si, tree.r1, tree.c1

    # ---------------------------------------------------------------- inputs
    def set_input(self, target, values) -> tuple[int, int, int]:
        """Give an input cell a value (scalar) or one value per scenario (sequence).

        Parameters
        ----------
        target : str or (sheet, row, col)
            Defined name or ``Sheet!A1``.
        values : scalar or sequence
            float/int, str, bool or None; a sequence must have :attr:`n` items.
        """
        key = target if isinstance(target, tuple) else self.locate(target)
        if key in self.formulas or key in self.spill_owner:
            raise EngineError(f"{self.where(key)} holds a formula; --set only changes input "
                              "(constant) cells")
        if isinstance(values, (list, tuple, np.ndarray)):
            vals = values if isinstance(values, np.ndarray) and values.ndim == 1 else list(values)
            if len(vals) != self.n:
                raise EngineError(f"{len(vals)} values for {target}, expected {self.n}")
            self.overrides[key] = _column(vals)
        else:
            self.overrides[key] = Val.from_python(values)
        self._block_cache.clear()
        return key

    def clear_inputs(self) -> None:
        """Forget every value given by :meth:`set_input`: cells hold the file's values again."""
        self.overrides = {}
        self._block_cache.clear()

    def resize(self, n: int) -> None:
        """Evaluate ``n`` scenarios from now on (the next chunk of a sweep).

        Inputs given one value per scenario are dropped (give them again for the new
        scenarios); single-valued inputs, the parsed and compiled formulas stay.
        """
        if n < 1:
            raise InputError(f"n = {n}: a workbook is evaluated for at least one scenario")
        self.n = n
        self._group_of = None           # groups are for one scenario: formed again, or not, for n
        self.overrides = {k: v for k, v in self.overrides.items() if v.n == 1}
        self._block_cache.clear()
        self.values, self.state, self.diagnostics = {}, {}, {}

    # ------------------------------------------------------------- reading
    def date_cells(self, si: int) -> frozenset:
        """``(row, col)`` of sheet ``si``'s cells styled as a date or time (computed once per sheet).

        Excel hands an add-in such a cell as a date, not a number; the catalog functions
        refuse it as the add-in does.
        """
        got = self._date_cells.get(si)
        if got is None:
            styles: frozenset[int] = getattr(self.package, "date_styles", frozenset())
            got = self._date_cells[si] = frozenset(rc for rc, cell in self.sheets[si].cells.items()
                                        if cell.style in styles) if styles else frozenset()
        return got

    def cell_value(self, si: int, r: int, c: int) -> Val:
        """The value of one cell: evaluated, an input, or the file's constant (empty if none)."""
        key = (si, r, c)
        v = self.values.get(key)
        if v is not None:
            return v
        v = self.overrides.get(key)
        if v is not None:
            return v
        if key in self.formulas:
            self._evaluate(key)
            return self.values[key]
        if key in self.spill_owner:
            owner = self.spill_owner[key]
            self._evaluate(owner)
            return self.values.get(key, Val.empty())
        v = self._const_cache.get(key)
        if v is None:
            cell = self.sheets[si].cells.get((r, c))
            v = Val.empty() if cell is None else Val.from_python(cell.value)
            self._const_cache[key] = v
        return v

    def read(self, ref: Ref, scen: int | None = None) -> Val:
        """The value of a reference (shape ``(n, rows, cols)``), clipped to the used area.

        A block none of whose cells is a formula or an input is read once and cached.
        """
        if ref.r1 == ref.r2 and ref.c1 == ref.c2:
            v = self.cell_value(ref.sheet, ref.r1, ref.c1)
            return v if scen is None else v.scenario(scen)
        cached = self._block_cache.get(ref)
        if cached is not None:
            return cached if scen is None else cached.scenario(scen)
        r2, c2 = self._clipped_corner(ref)
        coords = self._cells_in_block(ref, r2, c2)
        fset = self._formula_sets.get(ref.sheet, ())
        constant = True
        vals = []
        for (r, c) in coords:
            if (r, c) in fset or (ref.sheet, r, c) in self.overrides:
                constant = False
            v = self.cell_value(ref.sheet, r, c)
            vals.append(v if scen is None else v.scenario(scen))
        out = _block_value(ref.r1, ref.c1, r2 - ref.r1 + 1, c2 - ref.c1 + 1, coords, vals)
        if constant and scen is None:
            self._block_cache[ref] = out
        return out

    def _clipped_corner(self, ref: Ref) -> tuple[int, int]:
        """The bottom-right corner of ``ref``, whole columns or rows clipped to the sheet's used
        area (at least one cell); :class:`EngineError` for a block over :data:`MAX_BLOCK_CELLS`."""
        sh = self.sheets[ref.sheet]
        if ref.r2 == MAX_ROW or ref.c2 == MAX_COL:
            r2 = max(ref.r1, min(ref.r2, sh.max_row))
            c2 = max(ref.c1, min(ref.c2, sh.max_col))
        else:
            r2, c2 = ref.r2, ref.c2
        cells = (r2 - ref.r1 + 1) * (c2 - ref.c1 + 1)
        if cells > MAX_BLOCK_CELLS:
            raise EngineError(f"reference {self.where((ref.sheet, ref.r1, ref.c1))}:"
                              f"{cell_name(r2, c2)} has {cells:,} cells, over the limit")
        return r2, c2

    def _cells_in_block(self, ref: Ref, r2: int, c2: int) -> list[tuple[int, int]]:
        """``(row, col)`` of the block's cells that hold something: a stored cell, a formula
        cell or an input; by walking the block when it is small, else the sheet's cells."""
        sh = self.sheets[ref.sheet]
        fset = self._formula_sets.get(ref.sheet, ())
        r1, c1 = ref.r1, ref.c1
        if (r2 - r1 + 1) * (c2 - c1 + 1) <= 4 * len(sh.cells) + 64:
            return [(r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)
                    if (r, c) in sh.cells or (r, c) in fset
                    or (ref.sheet, r, c) in self.overrides]
        coords = [(r, c) for (r, c) in sh.cells if r1 <= r <= r2 and c1 <= c <= c2]
        coords += [(r, c) for (r, c) in fset if r1 <= r <= r2 and c1 <= c <= c2
                   and (r, c) not in sh.cells]
        coords += [(r, c) for (s, r, c) in self.overrides if s == ref.sheet
                   and r1 <= r <= r2 and c1 <= c <= c2 and (r, c) not in sh.cells]
        return coords

    def value(self, target: str | tuple) -> Val:
        """The (evaluated) value of a cell given as ``Sheet!A1``, a name or a key."""
        key = target if isinstance(target, tuple) else self.locate(target)
        return self.cell_value(*key)

    # ---------------------------------------------------------- compilation
    def compiled(self, key):
        """The compiled closure of the formula cell ``key`` (compiled on first use).

        Compiling also records the cell's precedents (formula cells its static references
        cover), the functions it calls and whether it is dynamic.  A formula that does not
        parse compiles to ``#NAME?`` (a data table to the unsupported-function code).
        """
        f = self._compiled.get(key)
        if f is None:
            cell = self.formulas[key]
            comp = Compiler(self, key[0])
            try:
                if cell.ftype == "dataTable":
                    raise FormulaError("data tables (What-If Analysis > Data Table, TABLE()) "
                                       "are not supported; use cryptoplan sweep")
                f = comp.compile(parse_shaped(cell.formula))
            except FormulaError as exc:
                f = _formula_error(str(exc))
            self._compiled[key] = f
            deps = []
            for ref in comp.refs:
                deps.extend(self._formula_cells_in(ref))
            self._deps[key] = deps
            self._reads[key] = list(comp.refs)
            self._uses[key] = comp.functions
            if comp.dynamic:
                self._dynamic.add(key)
        return f

    def _prepare(self, key) -> None:
        """Know the precedents of the formula cell ``key``: its shape's group's compilation
        (once for all its cells), or its own."""
        if key in self._deps:
            return
        g = self._groups().get(key)
        if g is None or not self._compile_group(g):
            self.compiled(key)

    # ---------------------------------------------------------------- shapes
    def _groups(self) -> dict:
        """Formula cell -> :class:`Group`: the cells of one sheet whose formulas have one shape
        (:mod:`.shapes`), at least :data:`MIN_GROUP` of them; none when evaluating many scenarios."""
        if self._group_of is None:
            self._group_of = {}
            if self.n == 1 and self.shapes:
                by_shape: dict = {}
                for key, cell in self.formulas.items():
                    if cell.ftype in ("array", "dataTable") or key in self.spill_owner:
                        continue
                    text = cell.formula or ""
                    parts = split(text) if len(text) <= 2048 else None
                    if parts is not None and parts[1]:
                        by_shape.setdefault((key[0], parts[0]), []).append((key, parts[1]))
                for (si, shape), cells in by_shape.items():
                    if len(cells) >= MIN_GROUP:
                        g = Group(si, shape, [k for k, _ in cells], [r for _, r in cells])
                        for k in g.members:
                            self._group_of[k] = g
        return self._group_of

    def _compile_group(self, g: "Group") -> bool:
        """Compile a group's shape once for its cells and record each cell's precedents; False
        (the group given up) when its cells must be compiled one by one."""
        if g.f is not None:
            return True
        if g.failed:
            return False
        try:
            tree = shape_tree(g.shape, len(g.lanes[0]))
            if tree is None:
                raise Ungroupable("the shape's references are not operands of their own")
            comp = Compiler(self, g.sheet, lanes=g.lanes)
            with deep_recursion():
                f = comp.compile(tree[0])
            if comp.dynamic:
                raise Ungroupable("a function reads references known only when it runs")
            udf = any(getattr(self.functions.get(name), "udf", False) for name in comp.functions)
            if udf and any((r.r1, r.c1) in self.date_cells(r.sheet) for lane in comp.lane_refs for r in lane.refs):
                # an add-in refuses a date it is handed, through IF or CHOOSE too: each cell's own call
                raise Ungroupable("a differing cell is a date and an add-in function is called")
        except (Ungroupable, FormulaError):
            self._ungroup(g)
            return False
        shared = []
        for ref in comp.refs:
            shared.extend(self._formula_cells_in(ref))
        for i, key in enumerate(g.members):
            deps = list(shared)
            for lane in comp.lane_refs:
                deps.extend(self._formula_cells_in(lane.refs[i]))
            self._deps[key] = deps
            self._reads[key] = list(comp.refs) + [lane.refs[i] for lane in comp.lane_refs]
            self._uses[key] = comp.functions
        g.f = f
        return True

    def _ungroup(self, g: "Group") -> None:
        """Give a group up: its cells are compiled and evaluated one by one from now on."""
        g.failed = True
        g.f = None
        for key in g.members:
            if key not in self._compiled:       # a cell compiled on its own keeps what it recorded
                self._deps.pop(key, None)
            if self._group_of is not None:
                self._group_of.pop(key, None)

    def read_lanes(self, lane: LaneRef) -> Val:
        """The values of a :class:`~.references.LaneRef`'s cells, one per lane (scenario axis)."""
        return stack_scenarios([self.cell_value(r.sheet, r.r1, r.c1) for r in lane.refs])

    def _formula_cells_in(self, ref: Ref) -> list:
        """The formula cells (spilled cells as their array formula's) that ``ref`` covers."""
        idx = self._formula_index.get(ref.sheet)
        if not idx:
            return []
        fset = self._formula_sets[ref.sheet]
        if ref.r1 == ref.r2 and ref.c1 == ref.c2:       # one cell: most references
            if (ref.r1, ref.c1) not in fset:
                return []
            k = (ref.sheet, ref.r1, ref.c1)
            return [self.spill_owner.get(k, k)]
        size = ref.rows * ref.cols
        out = []
        if size <= 4 * len(idx) + 16:
            for r in range(ref.r1, ref.r2 + 1):
                for c in range(ref.c1, ref.c2 + 1):
                    if (r, c) in fset:
                        out.append((ref.sheet, r, c))
        else:
            out = [(ref.sheet, r, c) for (r, c) in idx
                   if ref.r1 <= r <= ref.r2 and ref.c1 <= c <= ref.c2]
        return [self.spill_owner.get(k, k) for k in out]

    def independent_of(self, inputs) -> set:
        """The formula cells whose value cannot depend on the input cells ``inputs`` (keys
        ``(sheet, row, col)``): none of their static references covers one, directly or through
        the formula cells they read.  Conservatively dependent: a cell with a reference known only
        when it runs (INDIRECT, OFFSET), an array formula or a spilled cell, a volatile function.
        (What a sweep keeps from one chunk to the next: the same inputs give the same value.)"""
        given: dict[int, set] = {}
        for k in inputs:
            given.setdefault(k[0], set()).add((k[1], k[2]))
        volatile = {name for name, fn in self.functions.items() if getattr(fn, "volatile", False)}
        memo: dict = {}

        def reads_input(key) -> bool:
            for ref in self._reads.get(key, ()):
                cells = given.get(ref.sheet)
                if cells and any(ref.r1 <= r <= ref.r2 and ref.c1 <= c <= ref.c2 for r, c in cells):
                    return True
            return False

        def dependent(key) -> bool:
            got = memo.get(key)
            if got is not None:
                return got
            memo[key] = True                     # (a cycle: dependent)
            self._prepare(key)
            cell = self.formulas.get(key)
            dep = (cell is None or key in self._dynamic or cell.ftype != "normal" or key in self.spill_owner
                   or bool(self._uses.get(key, set()) & volatile) or key not in self._reads or reads_input(key)
                   or any(dependent(d) for d in self._deps.get(key, ())))
            memo[key] = dep
            return dep
        with deep_recursion():
            return {k for k in self.formulas if not dependent(k)}

    def functions_used(self) -> set[str]:
        """Names of all functions called by the workbook's formulas (after compiling)."""
        out = set()
        for key in self.formulas:
            self._prepare(key)
            out |= self._uses.get(key, set())
        return out

    # ------------------------------------------------------------ evaluation (:mod:`.evaluation`)
    def order(self, roots=None) -> list[tuple]:
        """Formula cells in evaluation order (precedents first); records cycles in :attr:`cycles`."""
        return evaluation.order(self, roots)

    def evaluate(self, roots=None, iterate=None, known=None) -> None:
        """Evaluate every formula cell (or those ``roots`` need), precedents first.

        ``iterate`` optionally wraps the evaluation order (a progress bar): its items are cells,
        and the groups of cells of one shape evaluated as one call.  ``known``: ``{cell: (value,
        diagnostics)}``, formula cells whose values are given, not evaluated (a sweep's cells
        that its varied inputs cannot reach, :meth:`independent_of`, as the last chunk left them).
        """
        evaluation.evaluate(self, roots, iterate, known)

    def _evaluate(self, key) -> None:
        """Evaluate the formula cell ``key`` once (a cell read before its turn)."""
        evaluation.evaluate_cell(self, key)

    def origins(self, key, limit: int = 3) -> list[tuple[tuple, Diagnostic]]:
        """Cells (``key`` or its precedents) where an error in ``key`` comes from."""
        return evaluation.origins(self, key, limit)

    def uses_udf_or_volatile(self) -> bool:
        """Whether a formula calls an add-in function or a volatile one (Excel must then
        recalculate the file on load)."""
        for key in self.formulas:
            self._prepare(key)
            for name in self._uses.get(key, ()):
                spec = self.functions.get(name)
                if spec is not None and (spec.udf or spec.volatile):
                    return True
        return False



def _column(vals: list | np.ndarray) -> Val:
    """A scenario column (n, 1, 1) from Python values."""
    n = len(vals)
    if (vals.dtype.kind in "fiu" if isinstance(vals, np.ndarray)
            else n and all(map(_is_number_type, set(map(type, vals))))):
        num = np.asarray(vals, dtype=float).reshape(n, 1, 1)   # a sweep's grid: no per-element work
        bad = ~np.isfinite(num)
        if bad.any():
            raise EngineError(f"input value {num[bad][0]!r} is not a finite number")
        return Val(num, np.full((n, 1, 1), NUM, dtype=np.int8))
    num = np.zeros((n, 1, 1))
    kind = np.zeros((n, 1, 1), dtype=np.int8)
    text = None
    for i, x in enumerate(vals):
        if x is None:
            kind[i] = EMPTY
        elif isinstance(x, ExcelError):
            kind[i] = x.code
        elif isinstance(x, (bool, np.bool_)):
            kind[i] = BOOL
            num[i] = float(x)
        elif isinstance(x, str):
            if text is None:
                text = np.empty((n, 1, 1), dtype=object)
            kind[i] = STR
            text[i, 0, 0] = x
        else:
            num[i] = float(x)
    bad = (kind == NUM) & ~np.isfinite(num)
    if bad.any():
        raise EngineError(f"input value {vals[int(np.argmax(bad.reshape(-1)))]!r} is not a finite number")
    return Val(num, kind, text)


def _is_number_type(t: type) -> bool:
    """Python's and NumPy's floats and integers; not bool, which is an int in Python."""
    return issubclass(t, (float, int, np.floating, np.integer)) and not issubclass(t, (bool, np.bool_))


def _block_value(r1: int, c1: int, rows: int, cols: int, coords: list, vals: list) -> Val:
    """The value of a block whose top-left cell is ``(r1, c1)``: the cells at ``coords`` hold
    ``vals`` (one-cell values), the others are empty."""
    n = max([v.n for v in vals], default=1)
    num = np.zeros((n, rows, cols))
    kind = np.full((n, rows, cols), EMPTY, dtype=np.int8)
    text = None
    for (r, c), v in zip(coords, vals):
        i, j = r - r1, c - c1
        num[:, i, j] = v.num[:, 0, 0]
        kind[:, i, j] = v.kind[:, 0, 0]
        if v.text is not None:
            if text is None:
                text = np.empty((n, rows, cols), dtype=object)
            text[:, i, j] = v.text[:, 0, 0]
    return Val(num, kind, text)


def _formula_error(message: str):
    """The closure of a formula that cannot be evaluated (does not parse, or a data table):
    ``#NAME?``, the unsupported-function code for a data table, and why."""
    code = ERR_UNSUPPORTED if "TABLE" in message else ERR_NAME

    def error(ctx):
        ctx.diag("formula", code, message)
        return Val.error(code)
    return error
