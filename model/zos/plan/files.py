"""A plan from a TOML file or from a workbook's tables of cells.

:func:`read_plan` reads the README's plan format (``[system]`` and ``[[workload]]``);
:func:`workloads_from_rows` and :func:`system_from_rows` read the template's Workloads table and
System block as the spreadsheet functions receive them.  Every key is checked: an unknown one is
an error naming the file (or range), the workload, the key and what is accepted.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from ..._text import value_text
from .inputs import (KIND_ARGUMENTS, SYSTEM_KEYS, SYSTEM_REQUIRED, WORKLOAD_KEYS, PlanError, System, Workload)
from .profiles import PROFILES

__all__ = ["read_plan", "plan_from_dict", "workloads_from_rows", "system_from_rows", "MAX_PLAN_BYTES"]

def plan_from_dict(doc: dict, source: str = "the plan") -> tuple:
    """A plan document (a ``[system]`` table and ``[[workload]]`` tables) as ``(System, [Workload])``.

    Every key is checked: an unknown one is an error naming ``source``, the workload, the key and
    what is accepted.  The format is the README's "Plan files" section.
    """
    def fail(msg):
        raise PlanError(f"{source}: {msg}") from None
    if not isinstance(doc, dict):
        fail("a plan is a table with [system] and [[workload]]")
    for key in doc:
        if key not in ("system", "workload"):
            fail(f"unknown table {key!r}: a plan has [system] and [[workload]] only")
    sysdoc = doc.get("system")
    if not isinstance(sysdoc, dict):
        fail("[system] is required (processors, coprocessors, accelerators, ...)")
    for key in sysdoc:
        if key not in SYSTEM_KEYS:
            fail(f"system: unknown key {key!r}; accepted: {', '.join(SYSTEM_KEYS)}")
    for key in SYSTEM_REQUIRED:
        if key not in sysdoc:
            fail(f"system: {key} is required")
    try:
        system = System(**sysdoc)
    except PlanError as e:
        fail(str(e))
    wdocs = doc.get("workload")
    if not isinstance(wdocs, list) or not wdocs:
        fail("at least one [[workload]] table is required")
    workloads = []
    for n, wd in enumerate(wdocs, 1):
        if not isinstance(wd, dict):
            fail(f"workload {n} is not a table")
        for key in ("name", "kind"):
            if key not in wd:
                fail(f"workload {wd.get('name', n)!r}: {key} is required")
        args = {k: v for k, v in wd.items() if k not in WORKLOAD_KEYS}
        try:
            workloads.append(Workload(wd["name"], wd["kind"], wd.get("rate"), wd.get("growth_per_year", 0.0),
                                      args))
        except PlanError as e:
            fail(str(e))
    names = [w.name for w in workloads]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        fail(f"workload {dup!r}: the name is used twice; names must be unique")
    for w in workloads:        # each kind's own model checks its arguments once, here
        try:
            PROFILES[w.kind](w, system)
        except PlanError as e:
            fail(str(e))
    return system, workloads


# A plan file is a few kilobytes; anything this large is not one.
MAX_PLAN_BYTES = 1_000_000


def read_plan(path) -> tuple:
    """Read a TOML plan file: ``(System, [Workload])``; errors name the file (see :func:`plan_from_dict`)."""
    p = Path(path)
    try:
        data = p.read_bytes() if p.stat().st_size <= MAX_PLAN_BYTES else None
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan file ({e.strerror or e})") from None
    if data is None:
        raise PlanError(f"{path}: a plan file is at most {MAX_PLAN_BYTES:,} bytes")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text (a TOML plan file is)") from None
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise PlanError(f"{path}: not a valid TOML plan: {e}") from None
    return plan_from_dict(doc, str(path))


def _blank(v) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _cell(v):
    """A cell's value as the plan reads it: numbers stay numbers, text is stripped."""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


def _table_rows(rows, where: str) -> list:
    """A table as a list of row lists; anything else is refused naming ``where``."""
    if isinstance(rows, (str, bytes)):
        raise PlanError(f"{where} must be a table of rows (got {value_text(rows)})")
    try:
        out = [list(r) for r in rows]
    except TypeError:
        raise PlanError(f"{where} must be a table of rows (got {value_text(rows)})") from None
    for r in out:
        for v in r:
            if not (v is None or isinstance(v, (str, bool, int, float))) or (isinstance(v, int) and abs(v) > 2**63):
                raise PlanError(f"{where}: a cell holds {value_text(v)}; the table takes numbers, text and TRUE/FALSE")
    return out


def workloads_from_rows(rows, where: str = "the workloads table") -> list:
    """Workloads from a table: a header row of keys (``name``, ``kind``, ``rate``,
    ``growth_per_year`` and the kinds' arguments, :data:`KIND_ARGUMENTS`), then one row each.

    Empty rows are skipped (a table with room to add); an empty cell is a key not given.  A header
    that is no key is an error unless its whole column is empty (a column for notes would be
    silently ignored, so it is refused).
    """
    rows = _table_rows(rows, where)
    if not rows or not rows[0]:
        raise PlanError(f"{where}: the first row must name the columns (name, kind, rate, ...)")
    head = [_cell(h) if not _blank(h) else None for h in rows[0]]
    known = set(WORKLOAD_KEYS) | {k for args in KIND_ARGUMENTS.values() for k in args}
    out = []
    for i, row in enumerate(rows[1:], 2):
        if all(_blank(v) for v in row):
            continue
        d = {}
        for h, v in zip(head, row):
            if _blank(v):
                continue
            if h is None or not isinstance(h, str) or h not in known:
                raise PlanError(f"{where}, row {i}: a value under the column {h!r}, which names no workload key; "
                                f"the keys: name, kind, rate, growth_per_year and each kind's arguments")
            d[h] = _cell(v)
        if "name" not in d:
            raise PlanError(f"{where}, row {i}: name is required")
        if "kind" not in d:
            raise PlanError(f"{where}, row {i} ({d['name']}): kind is required")
        args = {k: v for k, v in d.items() if k not in WORKLOAD_KEYS}
        try:
            out.append(Workload(str(d["name"]), d["kind"], d.get("rate"), d.get("growth_per_year", 0.0), args))
        except PlanError as e:
            raise PlanError(f"{where}, row {i}: {e}") from None
    if not out:
        raise PlanError(f"{where}: no workload (every row under the header is empty)")
    return out


def system_from_rows(rows, where: str = "the system block") -> System:
    """A System from rows of (key, value): keys as :class:`System` names them; empty rows skipped."""
    d = {}
    for i, row in enumerate(_table_rows(rows, where), 1):
        if all(_blank(v) for v in row):
            continue
        if len(row) != 2:
            raise PlanError(f"{where}: two columns, a key and its value (got {len(row)})")
        key, value = _cell(row[0]), _cell(row[1])
        if key not in SYSTEM_KEYS:
            raise PlanError(f"{where}, row {i}: {key!r} is no system key; the keys: {', '.join(SYSTEM_KEYS)}")
        if _blank(value):
            if key in SYSTEM_REQUIRED:
                raise PlanError(f"{where}, row {i}: {key} has no value")
            continue                      # an optional key left empty: its default
        d[key] = value
    for key in SYSTEM_REQUIRED:
        if key not in d:
            raise PlanError(f"{where}: {key} is required")
    return System(**d)
