"""Evaluating an :class:`~.core.Engine`'s formula cells: the order (precedents first, cycles
found), the cells of one shape as one call (:class:`Group`), one cell's run and an array
formula's spill, and where an error in a cell comes from.

Functions of the engine, which calls them (:meth:`~.core.Engine.evaluate`,
:meth:`~.core.Engine.order`, :meth:`~.core.Engine.origins`, and a cell read before it is
evaluated); the engine's cells, names, inputs and compilation are :mod:`.core`'s.  Their
``engine`` is untyped, as :mod:`.context`'s is: :mod:`.core` imports this module.
"""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arguments import MISSING, ScenarioSplit
from .context import Ctx, Diagnostic, LaneCtx
from .graph import dependency_order
from .ops import expand
from .parser import cell_name, deep_recursion, parse_area
from .references import Ref
from .values import EMPTY, ERR_CIRCULAR, ERR_INTERNAL, ERR_NA, ERR_NULL, NUM, STR, Val

__all__ = ["Group", "Cycle", "PENDING", "ACTIVE", "DONE", "stack_scenarios", "order", "schedule", "evaluate",
           "evaluate_cell", "origins"]

#: A formula cell's state in one evaluation: not yet evaluated, being evaluated, evaluated.
PENDING, ACTIVE, DONE = 0, 1, 2


class Cycle(Exception):
    """A formula cell met again while it is being evaluated (through a run-time reference)."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


@dataclass(slots=True, eq=False)        # a group is itself (a node of the evaluation order), not its fields
class Group:
    """The formula cells of one sheet that share a shape (:mod:`.shapes`): evaluated as one call.

    Attributes
    ----------
    sheet : int
    shape : str
        The formulas' text with their references numbered.
    members : list of tuple
        The cells (sheet, row, column).
    lanes : list of tuple of str
        Each cell's references, as written.
    f : callable or None
        The shape compiled for every cell at once (:class:`~.compiler.Compiler`'s ``lanes``).
    failed : bool
        Given up: the cells are compiled and evaluated one by one.
    """

    sheet: int
    shape: str
    members: list
    lanes: list
    f: Any = None
    failed: bool = False


def stack_scenarios(parts: list[Val]) -> Val:
    """One value from the results of the scenarios evaluated one by one (scenario axis)."""
    rows = max(p.shape[0] for p in parts)
    cols = max(p.shape[1] for p in parts)
    parts = [expand(p, rows, cols) for p in parts]
    num = np.concatenate([p.num for p in parts])
    kind = np.concatenate([p.kind for p in parts])
    text = None
    if any(p.text is not None for p in parts):
        text = np.concatenate([p.text if p.text is not None else np.empty(p.num.shape, dtype=object)
                               for p in parts])
    return Val(num, kind, text)


def order(engine, roots=None) -> list[tuple]:
    """Formula cells in evaluation order (precedents first); records cycles in the engine's ``cycles``."""
    roots = list(engine.formulas) if roots is None else [engine.spill_owner.get(k, k) for k in roots
                                                       if k in engine.formulas or k in engine.spill_owner]
    for k in roots:
        engine._prepare(k)
    engine.cycles = []
    order, engine.cycles = dependency_order(roots, lambda k: _precedents(engine, k))
    return order


def _precedents(engine, key) -> list:
    """The formula cells the formula ``key`` refers to statically (compiling it first)."""
    engine._prepare(key)
    return engine._deps[key]


def schedule(engine, order: list) -> list:
    """``order`` with the cells of each usable group replaced by the group, placed after
    everything its cells depend on; a group whose cells depend on each other (directly or
    through other cells) is given up."""
    groups = engine._groups()
    while True:
        present: dict = {}
        for k in order:
            g = groups.get(k)
            if g is not None and engine.state.get(k) != DONE:
                present[g] = present.get(g, 0) + 1
        used = {g for g, count in present.items() if count == len(g.members)}
        if not used:
            return order

        def node(k):
            g = groups.get(k)
            return g if g in used else k

        def precedents(x):
            if isinstance(x, Group):
                return list(dict.fromkeys(node(d) for m in x.members for d in engine._deps[m]))
            return [node(d) for d in engine._deps.get(x, ())]
        sched, cycles = dependency_order(list(dict.fromkeys(node(k) for k in order)), precedents)
        bad = {x for comp in cycles for x in comp if isinstance(x, Group)}
        if not bad:
            return sched
        for g in bad:
            engine._ungroup(g)
            for k in g.members:
                engine._prepare(k)


def evaluate(engine, roots=None, iterate=None, known=None) -> None:
    """Evaluate every formula cell (or those ``roots`` need), precedents first.

    ``iterate`` optionally wraps the evaluation order (a progress bar): its items are cells,
    and the groups of cells of one shape evaluated as one call.  ``known``: ``{cell: (value,
    diagnostics)}`` of formula cells whose values are given (not evaluated again).
    """
    with deep_recursion():
        _evaluate_order(engine, roots, iterate, known or {})


def _evaluate_order(engine, roots, iterate, known) -> None:
    """Order the formulas, give the cells of each cycle ``#CIRCULAR!``, evaluate the rest."""
    engine.values = {}
    engine.state = {}
    engine.diagnostics = {}
    for k, (value, diags) in known.items():
        engine.values[k] = value
        engine.state[k] = DONE
        if diags:
            engine.diagnostics[k] = diags
    cells = order(engine, roots)
    for comp in engine.cycles:
        names = ", ".join(engine.where(k) for k in sorted(comp)[:8])
        more = f" and {len(comp) - 8} more" if len(comp) > 8 else ""
        for k in comp:
            engine.values[k] = Val.error(ERR_CIRCULAR)
            engine.state[k] = DONE
            engine.diagnostics[k] = [Diagnostic("circular reference", ERR_CIRCULAR,
                                              f"cells {names}{more} depend on each other")]
    sched = schedule(engine, cells) if engine._groups() else cells
    for item in (sched if iterate is None else iterate(sched)):
        if isinstance(item, Group):
            _evaluate_group(engine, item)
        elif engine.state.get(item) != DONE:
            evaluate_cell(engine, item)


def _evaluate_group(engine, g: Group) -> None:
    """Evaluate a group's cells as one call, one lane per cell; a cell whose lane holds an
    error is evaluated on its own (for the diagnostics its error needs), and every cell is
    if the call cannot be made (:class:`~.references.Ungroupable`, or anything else)."""
    members = g.members
    if engine.n != 1 or any(engine.state.get(k) == DONE for k in members):   # read on demand: one by one
        res = None
    else:
        for k in members:
            engine.state[k] = ACTIVE
        diags: list[Diagnostic] = []
        try:
            res = _result(engine, g.f, LaneCtx(engine, g.sheet, len(members), diags=diags), False)
        except Exception:       # noqa: BLE001 - Ungroupable, a split, a cycle, a bug: one by one
            res = None
        for k in members:
            engine.state[k] = PENDING
        if res is not None and res.n not in (1, len(members)):
            res = None
    if res is None:
        engine._ungroup(g)
        for k in members:
            if engine.state.get(k) != DONE:
                evaluate_cell(engine, k)
        return
    # a lane that holds an error, or what a diagnostic was recorded for (an add-in's error
    # text), is its cell's own evaluation: the diagnostics are the cell's
    said = list({d.code for d in diags})
    flagged = res.kind >= ERR_NULL
    if said:
        flagged |= np.isin(res.kind, said)
    own = np.broadcast_to(flagged.reshape(res.n, -1).any(axis=1), (len(members),)).tolist()
    values, state = engine.values, engine.state
    for i, k in enumerate(members):
        if own[i]:
            evaluate_cell(engine, k)
        else:
            values[k] = res.scenario(i)      # lane i: cell i's value
            state[k] = DONE


def evaluate_cell(engine, key) -> None:
    """Evaluate the formula cell ``key`` once: its value (spilled for an array formula) and
    why it holds errors; a cell met again while it is being evaluated is a cycle."""
    st = engine.state.get(key, PENDING)
    if st == DONE:
        return
    if st == ACTIVE:
        raise Cycle(key)
    engine.state[key] = ACTIVE
    cell = engine.formulas[key]
    f = engine.compiled(key)
    diags: list[Diagnostic] = []
    array = cell.ftype == "array"
    res = _run(engine, f, key, array, diags)
    if array:
        _spill(engine, key, cell, res)
    else:
        engine.values[key] = res
    if diags:
        codes = set(np.unique(res.kind).tolist())
        kept = [d for d in diags if d.code in codes]
        if kept:
            engine.diagnostics[key] = kept
    engine.state[key] = DONE


def _run(engine, f, key, array: bool, diags: list) -> Val:
    """The result of the compiled formula ``f`` of cell ``key``, for every scenario at once
    or, if a function asks (:class:`ScenarioSplit`), one by one.  A failure is an error
    value, and ``diags`` says why: a cycle through a run-time reference, nesting too
    deep, or an engine bug (which must not abort the whole workbook)."""
    si, r, c = key
    try:
        try:
            return _result(engine, f, Ctx(engine, si, r, c, array, None, diags), array)
        except ScenarioSplit:
            return stack_scenarios([_result(engine, f, Ctx(engine, si, r, c, array, s, diags), array)
                           for s in range(engine.n)])
    except Cycle as cyc:
        diags.append(Diagnostic("circular reference", ERR_CIRCULAR,
                                f"through {engine.where(cyc.key)} (via a run-time reference)"))
        return Val.error(ERR_CIRCULAR)
    except RecursionError:
        diags.append(Diagnostic("engine", ERR_INTERNAL, "formula nesting too deep"))
        return Val.error(ERR_INTERNAL)
    except Exception as exc:  # an engine bug must not abort the whole workbook
        tb = traceback.extract_tb(sys.exc_info()[2])[-1]
        diags.append(Diagnostic("engine", ERR_INTERNAL,
                                f"internal error {type(exc).__name__}: {exc} "
                                f"({tb.filename.rsplit('/', 1)[-1]}:{tb.lineno}); please report it"))
        return Val.error(ERR_INTERNAL)


def _result(engine, f, ctx: Ctx, array: bool) -> Val:
    """What the formula ``f`` shows in ``ctx``: a value, its top-left element unless in an
    array formula, with 0 for an empty result."""
    x = f(ctx)
    if x is MISSING:
        return Val.number(0.0)
    if array:
        if isinstance(x, Ref):
            x = engine.read(x, ctx.scen)
        elif not isinstance(x, Val):
            x = ctx.value(x)
    else:
        x = ctx.value(x).top_left()
    # a formula that returns an empty cell shows 0
    if (x.kind == EMPTY).any():
        e = x.kind == EMPTY
        x = Val(np.where(e, 0.0, x.num), np.where(e, NUM, x.kind).astype(np.int8), x.text)
    return x


def _spill(engine, key, cell, res: Val) -> None:
    """Spread an array formula's result over its range (``#N/A`` where it is too small)."""
    si, r0, c0 = key
    area = parse_area((cell.fref or cell_name(r0, c0)).replace("$", ""))
    if area is None:
        engine.values[key] = res.top_left()
        return
    r1, c1, r2, c2 = area
    rows, cols = r2 - r1 + 1, c2 - c1 + 1
    vr, vc = res.shape
    for i in range(rows):
        for j in range(cols):
            ii = 0 if vr == 1 else i
            jj = 0 if vc == 1 else j
            k = (si, r1 + i, c1 + j)
            if ii >= vr or jj >= vc:
                engine.values[k] = Val.error(ERR_NA)  # outside the array
            else:
                engine.values[k] = Val(res.num[:, ii:ii + 1, jj:jj + 1],
                                     res.kind[:, ii:ii + 1, jj:jj + 1],
                                     None if res.text is None else res.text[:, ii:ii + 1, jj:jj + 1])
    if key not in engine.values:
        engine.values[key] = res.top_left()


def origins(engine, key, limit: int = 3) -> list[tuple[tuple, Diagnostic]]:
    """Cells (``key`` or its precedents) where an error in ``key`` comes from."""
    key = engine.spill_owner.get(key, key)
    seen = set()
    out: list[tuple[tuple, Diagnostic]] = []
    todo = [key]
    while todo and len(out) < limit:
        k = todo.pop(0)
        if k in seen:
            continue
        seen.add(k)
        if k in engine.diagnostics:
            for d in engine.diagnostics[k]:
                out.append((k, d))
        v = engine.values.get(k)
        if k in engine._deps and (v is None or v.has_errors() or k == key or (v.kind == STR).any()):
            todo.extend(engine._deps[k])
    return out[:limit]
