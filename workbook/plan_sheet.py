"""A plan read from a workbook: the template's Workloads table and System block, as evaluated.

``cryptoplan plan planner.xlsx`` reads the two ranges the template names ``PlanWorkloads`` and
``PlanSystem`` (the System block's first rows are formulas over the Inputs sheet, so the
workbook is evaluated by the formula engine first) and plans them exactly as the Plan sheet's
functions do: the same :func:`cryptoplan.model.zos.plan.workloads_from_rows` and
:func:`~cryptoplan.model.zos.plan.system_from_rows` read the cells.
"""

from __future__ import annotations

from cryptoplan.model.zos.plan import PlanError, system_from_rows, workloads_from_rows

from .engine import EngineError, ExcelError
from .engine.nodes import Reference
from .recalculation import RecalcError, load_engine

__all__ = ["read_plan_workbook", "PLAN_NAMES"]

#: The defined names of the Workloads table and the System block (the template package writes them, template/plan.py).
PLAN_NAMES = ("PlanWorkloads", "PlanSystem")


def _block(engine, path, name) -> list:
    """The evaluated cells of the range a defined name refers to, as rows of Python values."""
    found = engine.defined_name(name, None)
    ref = None if found is None else found[0]
    if not isinstance(ref, Reference) or ref.sheet is None:
        raise PlanError(f"{path}: no defined name {name} referring to a range (the template's Workloads "
                        "sheet defines PlanWorkloads and PlanSystem)")
    r1, c1, r2, c2 = ref.r1, ref.c1, ref.r2, ref.c2
    try:
        si = engine.sheet_named(ref.sheet)
    except EngineError as exc:
        raise PlanError(f"{path}: {name}: {exc}") from None
    rows = []
    for r in range(r1, r2 + 1):
        row = []
        for c in range(c1, c2 + 1):
            v = engine.value((si, r, c)).element(0)
            if isinstance(v, ExcelError) or (isinstance(v, str) and v.startswith("#")
                                             and v.split(" ", 1)[0].endswith(("!", "?", "/A"))):
                raise PlanError(f"{path}: {name} holds an error at {engine.where((si, r, c))}: {v}")
            row.append(v)
        rows.append(row)
    return rows


def read_plan_workbook(path) -> tuple:
    """``(System, [Workload])`` from a workbook's PlanSystem block and PlanWorkloads table.

    Raises
    ------
    PlanError
        For a file that is not a usable workbook, a missing name, an error in a cell, or a table
        the plan refuses (the message names the file, the range, the row and the key).
    """
    try:
        engine = load_engine(path)
        engine.evaluate()
    except (RecalcError, EngineError) as exc:
        raise PlanError(f"{path}: {exc}") from None
    workloads, system = (_block(engine, path, n) for n in PLAN_NAMES)
    return (system_from_rows(system, f"{path}: PlanSystem"),
            workloads_from_rows(workloads, f"{path}: PlanWorkloads"))
