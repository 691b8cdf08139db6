"""A plan read from a workbook: the template's Workloads table, System block, Profiles and Orders and Migrations tables, as evaluated.

``cryptoplan plan planner.xlsx`` reads the ranges the template names ``PlanWorkloads``,
``PlanSystem``, ``PlanProfiles`` and ``PlanOrders`` (the System block's first rows are formulas over the Inputs
sheet, so the cells those ranges depend on are evaluated by the formula engine first, and only
those) and plans them exactly as the Plan sheet's functions do: the same
:func:`cryptoplan.model.read_plan` (the one reader of a plan) reads the cells.  A workbook of an older
template has no ``PlanProfiles`` (its workloads have no daily profile) or no ``PlanOrders`` (nothing on
order).

The workbook's ``ParamsFile`` input (a parameter file, such as a site calibration) selects the
parameters the Plan sheet's functions use; :func:`read_plan_inputs` reads it too, so the command
line plans with the same parameters as the sheet.
"""

from __future__ import annotations

import datetime
import os
from typing import TYPE_CHECKING, NamedTuple

from cryptoplan.model.lazy import lazy_module
from cryptoplan.model.zos.plan import PlanError
from cryptoplan.model.zos.plan import read as reader         # the one reader of a plan

from .engine import EngineError, ExcelError
from .engine.nodes import Reference
from .recalculation import RecalcError, load_engine

__all__ = ["read_plan_workbook", "read_plan_inputs", "PlanWorkbook", "PLAN_NAMES", "PROFILES_NAME", "PARAMS_NAME"]

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model.params import Parameters
    from cryptoplan.model.zos.plan import System, Workload
    from cryptoplan.addin import convert
else:
    convert = lazy_module("cryptoplan.addin.convert")

#: The defined names of the Workloads table and the System block (the template package writes them, template/plan.py).
PLAN_NAMES = ("PlanWorkloads", "PlanSystem")
#: The defined name of the Profiles table (optional: older templates have none).
PROFILES_NAME = "PlanProfiles"
#: The defined name of the Orders table (optional: older templates have none).
ORDERS_NAME = "PlanOrders"
#: The defined name of the Migrations table (optional: older templates have none).
MIGRATIONS_NAME = "PlanMigrations"
#: The defined name of the parameter-file input (optional: a workbook without it uses the environment's).
PARAMS_NAME = "ParamsFile"


class PlanWorkbook(NamedTuple):
    """A plan as a workbook states it: the system, the workloads and the parameters its
    ``ParamsFile`` input selects (None: the environment's, ``$CRYPTOPLAN_PARAMS`` or the
    packaged fit) with the file as typed."""

    system: System
    workloads: list[Workload]
    params: Parameters | None = None
    params_file: str | None = None


def _range(engine, path, name, required: bool = True):
    """``(sheet index, r1, c1, r2, c2)`` of the range a defined name refers to; None for a missing
    optional one."""
    found = engine.defined_name(name, None)
    ref = None if found is None else found[0]
    if not isinstance(ref, Reference) or ref.sheet is None:
        if not required and found is None:
            return None
        raise PlanError(f"{path}: no defined name {name} referring to a range (the template's Workloads "
                        "sheet defines PlanWorkloads, PlanSystem, PlanProfiles and PlanOrders)")
    try:
        si = engine.sheet_named(ref.sheet)
    except EngineError as exc:
        raise PlanError(f"{path}: {name}: {exc}") from None
    # a range to the sheet's last row and column (A16:XFD1048576) is read as far as the sheet has
    # cells: what lies beyond is empty, and 17 billion empty cells are not read one by one
    sh = engine.sheets[si]
    r2, c2 = max(ref.r1, min(ref.r2, sh.max_row)), max(ref.c1, min(ref.c2, sh.max_col))
    return si, ref.r1, ref.c1, r2, c2


def _cells(rng):
    si, r1, c1, r2, c2 = rng
    return [(si, r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]


def _block(engine, path, name, rng) -> list:
    """The evaluated cells of a range as rows of Python values."""
    si, r1, c1, r2, c2 = rng
    dates = engine.date_cells(si)
    rows = []
    for r in range(r1, r2 + 1):
        row = []
        for c in range(c1, c2 + 1):
            v = engine.value((si, r, c)).element(0)
            if (r, c) in dates and isinstance(v, (int, float)) and not isinstance(v, bool):
                v = _as_date(v)         # a date typed where a number goes: named, never 43,831/s
            if isinstance(v, ExcelError) or (isinstance(v, str) and v.startswith("#")
                                             and v.split(" ", 1)[0].endswith(("!", "?", "/A"))):
                raise PlanError(f"{path}: {name} holds an error at {engine.where((si, r, c))}: {v}")
            row.append(v)
        rows.append(row)
    return rows


def _as_date(serial: float):
    """An Excel date serial (1900 system) as the date or time it shows."""
    base = datetime.datetime(1899, 12, 30)
    try:
        return base + datetime.timedelta(days=float(serial))
    except (OverflowError, ValueError):
        return base


def read_plan_workbook(path) -> tuple:
    """``(System, [Workload])`` from a workbook's PlanSystem block, PlanWorkloads table and (if it
    has one) PlanProfiles table (:func:`read_plan_inputs` without the parameters).

    Raises
    ------
    PlanError
        As :func:`read_plan_inputs`.
    """
    got = read_plan_inputs(path)
    return got.system, got.workloads


def read_plan_inputs(path) -> PlanWorkbook:
    """The plan a workbook states: its PlanSystem block, PlanWorkloads table, (if it has one)
    PlanProfiles table, and the parameter file its ParamsFile input names.

    Only the formulas those ranges depend on are evaluated (the System block's references to the
    Inputs sheet), not the workbook's results.  A relative ParamsFile is taken relative to the
    workbook's folder, as the sheet's functions take it in ``cryptoplan recalc``.

    Raises
    ------
    PlanError
        For a file that is not a usable workbook, a missing name, an error in a cell, a table
        the plan refuses (the message names the file, the range, the row and the key), or a
        ParamsFile that is not a valid parameter file.
    """
    try:
        engine = load_engine(path)
    except (RecalcError, EngineError) as exc:
        raise PlanError(f"{path}: {exc}") from None
    ranges = {n: _range(engine, path, n) for n in PLAN_NAMES}
    for optional in (PROFILES_NAME, ORDERS_NAME, MIGRATIONS_NAME, PARAMS_NAME):
        rng = _range(engine, path, optional, required=False)
        if rng is not None:
            ranges[optional] = rng
    try:
        engine.evaluate(roots=[k for rng in ranges.values() for k in _cells(rng)])
    except (RecalcError, EngineError) as exc:
        raise PlanError(f"{path}: {exc}") from None
    blocks = {n: _block(engine, path, n, rng) for n, rng in ranges.items()}
    sheet = {n: engine.sheets[rng[0]].name for n, rng in ranges.items()}
    system, workloads = reader.read_plan(reader.PlanTables(
        blocks["PlanWorkloads"], blocks["PlanSystem"], blocks.get(PROFILES_NAME),
        where=(f"{path}: PlanWorkloads (sheet {sheet['PlanWorkloads']})",
               f"{path}: PlanSystem (sheet {sheet['PlanSystem']})",
               f"{path}: {PROFILES_NAME} (sheet {sheet.get(PROFILES_NAME, '')})",
               f"{path}: {ORDERS_NAME} (sheet {sheet.get(ORDERS_NAME, '')})",
               f"{path}: {MIGRATIONS_NAME} (sheet {sheet.get(MIGRATIONS_NAME, '')})"),
        first_rows=(ranges["PlanWorkloads"][1], ranges["PlanSystem"][1],
                    ranges[ORDERS_NAME][1] if ORDERS_NAME in ranges else 1,
                    ranges[MIGRATIONS_NAME][1] if MIGRATIONS_NAME in ranges else 1),
        orders=blocks.get(ORDERS_NAME), migrations=blocks.get(MIGRATIONS_NAME)))
    params = params_file = None
    if PARAMS_NAME in blocks:
        where = engine.where(_cells(ranges[PARAMS_NAME])[0])
        value = blocks[PARAMS_NAME][0][0] if blocks[PARAMS_NAME] and blocks[PARAMS_NAME][0] else None
        if value is not None and not isinstance(value, str):
            raise PlanError(f"{path}: {PARAMS_NAME} ({where}) must be the path of a parameter file "
                            f"(got {value!r})")
        if value is not None and value.strip():
            try:
                params = convert.parameters_for(value, os.path.dirname(os.path.abspath(os.fspath(path))))
            except convert.CellError as exc:
                raise PlanError(f"{path}: {PARAMS_NAME} ({where}): {exc}") from None
            params_file = value
    return PlanWorkbook(system, workloads, params, params_file)
