"""A plan from a TOML file or from a workbook's tables of cells.

:func:`plan_from_dict` reads the README's plan format (``[system]`` and ``[[workload]]``), as a
file's document (:func:`read_plan_document`); :func:`plan_from_tables` reads the template's
Workloads table, System block and Profiles table as the spreadsheet functions receive them.  Both
are read through :func:`cryptoplan.model.zos.plan.read.read_plan`, the one reader of a plan.
Every key is checked: an unknown one is an error naming the file (or range), the workload, the
key and what is accepted.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..._text import value_text
from ...lazy import lazy_module
from .calendar import calendar_start, months_between
from .daily import DailyProfile, Window
from .inputs import (KIND_ARGUMENTS, MIGRATION_KEYS, SYSTEM_KEYS, SYSTEM_REQUIRED, WORKLOAD_KEYS, Migration, Order, PlanError,
                     System, Workload)
from .profiles import workload_profile

# a plan file's reader, on first use: a workbook's recalculation imports this module, never reads TOML
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import tomllib
else:
    tomllib = lazy_module("tomllib")

__all__ = ["read_plan_document", "RMF_KEYS", "plan_from_dict", "plan_from_tables", "workload_rows", "workloads_from_rows",
           "system_from_rows", "profiles_from_rows",
           "workload_from_mapping", "system_from_mapping", "profile_from_mapping", "MAX_PLAN_BYTES", "PROFILE_KEYS",
           "orders_from_rows", "orders_from_list", "ORDER_KEYS", "migrations_from_list", "migrations_from_rows",
           "MIGRATION_KEYS"]

# Keys whose value is a number (TRUE is not 1 there).
_NUMERIC = {"rate", "growth_per_year", "duration_minutes", "key_size", "message_kb", "key_reuse", "recipients",
            "sslrkeyc", "resumed_share", "cpu_us", "exec_ms", "utilization"}

#: Keys whose value may be a range, two numbers (a forecast's 90% interval, :mod:`~.forecast`).
_RANGES = ("rate_range", "growth_range", "growth_per_year")

#: A number of months typed as text in a table cell ("3", "4.5").
_MONTHS_TEXT = re.compile(r"[0-9]{1,4}(?:\.[0-9]*)?")

#: A Workloads table's columns for a range's ends (a cell holds one number): key -> (low, high).
RANGE_COLUMNS = {"rate_range": ("rate_low", "rate_high"), "growth_range": ("growth_low", "growth_high")}

#: The keys of a ``[profile.NAME]`` table.
PROFILE_KEYS = ("factors", "interval_minutes")

def profile_from_mapping(name, d, where: str) -> DailyProfile:
    """A ``[profile.NAME]`` table (``factors``, optional ``interval_minutes``) as a :class:`DailyProfile`."""
    if not isinstance(d, dict):
        raise PlanError(f"{where}: profile {name!r} must be a table with factors = [...]")
    for key in d:
        if key not in PROFILE_KEYS:
            raise PlanError(f"{where}: profile {name!r}: unknown key {key!r}; accepted: {', '.join(PROFILE_KEYS)}")
    if "factors" not in d:
        raise PlanError(f"{where}: profile {name!r}: factors is required (24, 48 or 96 numbers from 00:00)")
    try:
        prof = DailyProfile(str(name), d["factors"])
    except PlanError as e:
        raise PlanError(f"{where}: {e}") from None
    minutes = d.get("interval_minutes")
    if minutes is not None and (isinstance(minutes, bool) or minutes != prof.minutes):
        raise PlanError(f"{where}: profile {name!r}: interval_minutes is {minutes!r} but its {len(prof.factors)} "
                        f"factors are {prof.minutes}-minute intervals (24: 60, 48: 30, 96: 15)")
    return prof


def _check_keys(d: dict, accepted, required, where: str) -> None:
    """Every key of ``d`` one of ``accepted`` and every one of ``required`` there; else PlanError
    naming ``where`` and the key."""
    for key in d:
        if key not in accepted:
            raise PlanError(f"{where}: unknown key {key!r}; accepted: {', '.join(accepted)}")
    for key in required:
        if key not in d:
            raise PlanError(f"{where}: {key} is required")


def system_from_mapping(d: dict, where: str) -> System:
    """A System from a mapping of its keys (a TOML ``[system]`` table, a workbook's System block)."""
    _check_keys(d, SYSTEM_KEYS, SYSTEM_REQUIRED, f"{where}: system")
    try:
        return System(**d)
    except PlanError as e:
        raise PlanError(f"{where}: {e}") from None


ORDER_KEYS = ("resource", "count", "arrives")


def orders_from_list(docs, system: System, where: str, labels=None) -> tuple:
    """A plan's ``[[order]]`` tables as :class:`~.inputs.Order`: ``resource``, ``count`` and
    ``arrives``, the month from the scenario it is in service or, with the system's ``start``, a
    calendar month ``"YYYY-MM"`` (the months from the start to its beginning).  ``labels``: how
    messages name each entry (default ``order N``)."""
    if not isinstance(docs, list):
        raise PlanError(f"{where}: orders are tables [[order]] with resource, count and arrives")
    out = []
    for n, d in enumerate(docs, 1):
        if not isinstance(d, dict):
            raise PlanError(f"{where}: order {n} is not a table")
        if labels is not None:
            n = labels[n - 1]
        _check_keys(d, ORDER_KEYS, ORDER_KEYS, f"{where}: order {n}")
        month = d["arrives"]
        if isinstance(month, str):
            if system.start is None:
                raise PlanError(f"{where}: order {n}: arrives {month!r} is a calendar month, which needs the "
                                "system's start (start = \"YYYY-MM\", the month that is month 0); or give months "
                                "from the scenario")
            month = months_between(system.start, str(calendar_start(month, f"{where}: order {n}: arrives")))
            if month < 0:
                raise PlanError(f"{where}: order {n}: arrives {d['arrives']!r} is before the plan's start "
                                f"({system.start})")
        try:
            out.append(Order(d["resource"], d["count"], month))
        except PlanError as e:
            raise PlanError(f"{where}: order {n}: {e}") from None
    return tuple(out)


def migrations_from_list(docs, where: str, labels=None) -> tuple:
    """A plan's ``[[migration]]`` tables as :class:`~.inputs.Migration`: ``workload``, ``to``,
    ``start``, ``months`` and optional ``share`` (1).  ``labels``: how messages name each entry
    (default ``migration N``)."""
    if not isinstance(docs, list):
        raise PlanError(f"{where}: migrations are tables [[migration]] with {', '.join(MIGRATION_KEYS)}")
    out = []
    for n, d in enumerate(docs, 1):
        if not isinstance(d, dict):
            raise PlanError(f"{where}: migration {n} is not a table")
        if labels is not None:
            n = labels[n - 1]
        _check_keys(d, MIGRATION_KEYS, MIGRATION_KEYS[:4], f"{where}: migration {n}")
        try:
            out.append(Migration(**d))
        except PlanError as e:
            raise PlanError(f"{where}: {e}") from None
        except TypeError as e:
            raise PlanError(f"{where}: migration {n}: {e}") from None
    return tuple(out)


def orders_from_rows(rows, system: System, where: str = "the orders table", first_row: int = 1) -> tuple:
    """Servers already ordered from a table: a header row ``resource``, ``count``, ``arrives``, then
    one order a row (read as a plan file's ``[[order]]`` is, :func:`orders_from_list`); empty rows
    skipped, a date cell under ``arrives`` its calendar month.  ``first_row``: the sheet row of the
    header (messages name the row a planner sees)."""
    # a spreadsheet makes a typed month (2027-12) a date: it is the month that counts
    if not isinstance(rows, (str, bytes)):
        try:
            rows = [[calendar_start(v, f"{where}: arrives") if isinstance(v, datetime.date) else v for v in r]
                    for r in rows]
        except TypeError:
            pass                                  # not a table: _table_rows names it
    def heading(named):
        if sorted(map(str, named)) != sorted(ORDER_KEYS) or not all(isinstance(h, str) for h in named):
            raise PlanError(f"{where}: the first row must name the columns resource, count and arrives (got "
                            f"{', '.join(map(value_text, named)) or 'none'})")
    docs, labels = _row_tables(rows, where, first_row, heading, "resource, count, arrives")
    for d in docs:
        arrives = d.get("arrives")
        if isinstance(arrives, str) and _MONTHS_TEXT.fullmatch(arrives):
            d["arrives"] = float(arrives)          # a month typed into a text cell: "3" is month 3
    return orders_from_list(docs, system, where, labels) if docs else ()


def _row_tables(rows, where: str, first_row: int, heading, columns: str) -> tuple:
    """A table of a header row and a row per entry as ``(docs, labels)``: each non-empty row a dict
    of its non-blank cells by heading, labelled ``(row N)``; ``heading(named)`` checks the headings
    (raising PlanError); a value under no heading is an error naming ``columns``.  ``([], [])`` for
    an empty table."""
    rows = _table_rows(rows, where, first_row)
    if not rows or all(_blank(v) for row in rows for v in row):
        return [], []
    head = [_cell(h) if not _blank(h) else None for h in rows[0]]
    heading([h for h in head if h is not None])
    docs, labels = [], []
    for i, row in enumerate(rows[1:], first_row + 1):
        if all(_blank(v) for v in row):
            continue
        if any(not _blank(v) for v in row[len(head):]) or any(
                h is None and not _blank(v) for h, v in zip(head, row)):
            raise PlanError(f"{where}, row {i}: a value under no column heading; the columns: {columns}")
        docs.append({h: _cell(v) for h, v in zip(head, row) if h is not None and not _blank(v)})
        labels.append(f"(row {i})")
    return docs, labels


def migrations_from_rows(rows, where: str = "the migrations table", first_row: int = 1) -> tuple:
    """Quantum-safe migrations from a table: a header row ``workload``, ``to``, ``start``, ``months``,
    ``share`` (the last may be left out), then one migration a row (read as a plan file's
    ``[[migration]]`` is, :func:`migrations_from_list`); empty rows skipped, an empty ``share`` 1.
    ``first_row``: the sheet row of the header."""
    def heading(named):
        if not all(isinstance(h, str) for h in named) or not set(MIGRATION_KEYS[:4]) <= set(named) \
                or not set(named) <= set(MIGRATION_KEYS) or len(set(named)) != len(named):
            raise PlanError(f"{where}: the first row must name the columns {', '.join(MIGRATION_KEYS)} (share may be "
                            f"left out; got {', '.join(map(value_text, named)) or 'none'})")
    docs, labels = _row_tables(rows, where, first_row, heading, ", ".join(MIGRATION_KEYS))
    return migrations_from_list(docs, where, labels) if docs else ()


def workload_from_mapping(d: dict, where: str, profiles: dict) -> Workload:
    """A Workload from a mapping of its keys (a TOML ``[[workload]]`` table, a Workloads row).

    ``profile`` names one of ``profiles`` (name -> :class:`DailyProfile`); ``start`` and
    ``duration_minutes`` make a :class:`~.daily.Window`; the kind's own keys are its arguments.
    """
    for key in ("name", "kind"):
        if key not in d:
            raise PlanError(f"{where}: {key} is required")
    name = d["name"]
    label = f"{where}: workload {name!r}" if isinstance(name, str) else where
    for key, v in d.items():
        # one value per key: a list would be scenarios a report cannot show, a table or a date no
        # value of any key (a time of day is ``start``'s only)
        if v is None or isinstance(v, datetime.time) and key == "start":
            continue                # None: not given (a Python mapping; TOML has no null)
        if key in _RANGES and isinstance(v, (list, tuple)):
            if len(v) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                raise PlanError(f"{label}: {key} must be one number or two, the low and high ends of the "
                                f"forecast's 90% interval (got {value_text(v)})")
            continue
        if key in RANGE_COLUMNS:
            raise PlanError(f"{label}: {key} must be two numbers, the low and high ends of the forecast's 90% "
                            f"interval (got {value_text(v)})")
        if not isinstance(v, (str, bool, int, float)):
            raise PlanError(f"{label}: {key} must be a single {'number' if key in _NUMERIC else 'value'} "
                            f"(got {value_text(v)}); a plan file describes one scenario (--growth and "
                            "--months vary it; the Python API takes arrays)")
        if isinstance(v, bool) and key in _NUMERIC:
            raise PlanError(f"{label}: {key} must be a number (got {v!r})")
    prof = d.get("profile")
    if prof is not None:
        if not isinstance(prof, str) or prof.strip() not in profiles:
            known = ", ".join(profiles) or "none is defined"
            raise PlanError(f"{label}: profile {prof!r} is not a profile of the plan ({known})")
        prof = profiles[prof.strip()]
    window = None
    if d.get("start") is not None or d.get("duration_minutes") is not None:
        if d.get("start") is None or d.get("duration_minutes") is None:
            raise PlanError(f"{label}: a window takes both start (\"HH:MM\") and duration_minutes")
        window = Window.checked(d["start"], d["duration_minutes"], label)
    site = d.get("site_failover", False)
    args = {k: v for k, v in d.items() if k not in WORKLOAD_KEYS}
    try:
        return Workload(name, d["kind"], d.get("rate"), d.get("growth_per_year"), args, profile=prof,
                        window=window, site_failover=site, peak_day=d.get("peak_day"),
                        rate_range=_pair(d.get("rate_range")), growth_range=_pair(d.get("growth_range")))
    except PlanError as e:
        raise PlanError(f"{where}: {e}") from None


def _pair(v):
    return tuple(v) if isinstance(v, list) else v


def _table_keys() -> list:
    """A Workloads table's own columns: :data:`WORKLOAD_KEYS` with each range as two columns."""
    return [c for k in WORKLOAD_KEYS for c in RANGE_COLUMNS.get(k, (k,))]


def _range_columns(d: dict, at: str) -> dict:
    """A Workloads row's ``rate_low``/``rate_high`` (``growth_low``/``growth_high``) as its
    ``rate_range`` (``growth_range``): both ends or neither."""
    for key, (lo, hi) in RANGE_COLUMNS.items():
        if lo in d or hi in d:
            if lo not in d or hi not in d:
                given, missing = (lo, hi) if lo in d else (hi, lo)
                raise PlanError(f"{at}: {given} is given and {missing} is not; a range takes both ends (the "
                                "forecast's 90% interval), or leave both empty")
            for c in (lo, hi):
                if isinstance(d[c], bool) or not isinstance(d[c], (int, float)):
                    raise PlanError(f"{at}: {c} must be a number (got {value_text(d[c])})")
            d[key] = [d.pop(lo), d.pop(hi)]
    return d


def _check_workloads(system: System, workloads, where: str,
                     duplicate: str = "the name {!r} is used twice; names must be unique") -> None:
    """The checks a plan's workloads get once, whatever states them: unique names, and each kind's
    own model on its arguments (it builds the workload's profile on the system)."""
    names = [w.name for w in workloads]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise PlanError(f"{where}: " + duplicate.format(dup))
    for w in workloads:
        try:
            workload_profile(w, system)
        except PlanError as e:
            raise PlanError(f"{where}: {e}") from None


def plan_from_dict(doc: dict, source: str = "the plan") -> tuple:
    """A plan document (``[system]``, ``[[workload]]`` and optional ``[profile.NAME]`` tables) as
    ``(System, [Workload])``.

    Every key is checked: an unknown one is an error naming ``source``, the workload, the key and
    what is accepted.  The format is the README's "Plan files" section.
    """
    def fail(msg: str) -> NoReturn:
        raise PlanError(f"{source}: {msg}") from None
    if not isinstance(doc, dict):
        fail("a plan is a table with [system] and [[workload]]")
    for key in doc:
        if key not in ("system", "workload", "profile", "order", "migration"):
            fail(f"unknown table {key!r}: a plan has [system], [[workload]], [profile.NAME], [[order]] and "
                 "[[migration]] only")
    sysdoc = doc.get("system")
    if not isinstance(sysdoc, dict):
        fail("[system] is required (processors, coprocessors, accelerators, ...)")
    system = system_from_mapping(sysdoc, source)
    if "order" in doc:
        system = dataclasses.replace(system, orders=orders_from_list(doc["order"], system, source))
    if "migration" in doc:
        system = dataclasses.replace(system, migrations=migrations_from_list(doc["migration"], source))
    pdocs = doc.get("profile", {})
    if not isinstance(pdocs, dict):
        fail("profiles are tables [profile.NAME] with factors = [...]")
    profiles = {str(n).strip(): profile_from_mapping(n, pd, source) for n, pd in pdocs.items()}
    wdocs = doc.get("workload")
    if not isinstance(wdocs, list) or not wdocs:
        fail("at least one [[workload]] table is required")
    workloads = []
    for n, wd in enumerate(wdocs, 1):
        if not isinstance(wd, dict):
            fail(f"workload {n} is not a table")
        if "name" not in wd or "kind" not in wd:
            fail(f"workload {wd.get('name', n)!r}: {'name' if 'name' not in wd else 'kind'} is required")
        workloads.append(workload_from_mapping(wd, source, profiles))
    _check_workloads(system, workloads, source, "workload {!r}: the name is used twice; names must be unique")
    used = {w.profile.name for w in workloads if w.profile is not None}
    unused = [n for n in profiles if n not in used]
    if unused:
        fail(f"profile {unused[0]!r} is defined but no workload uses it (profile = \"{unused[0]}\")")
    return system, workloads


# A plan file is a few kilobytes; anything this large is not one.
MAX_PLAN_BYTES = 1_000_000


#: ``[system]`` keys that name RMF's measurements, resolved by
#: :func:`cryptoplan.model.zos.plan.read.read_plan` (the report's cards and shares).
RMF_KEYS = ("rmf", "rmf_system")


def read_plan_document(path) -> dict:
    """A TOML plan file's document, before its keys are checked: a regular UTF-8 file of at most
    :data:`MAX_PLAN_BYTES` (a byte-order mark is skipped); errors name the file."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise PlanError(f"path must be a plan file's name (got {value_text(path)})")
    name = os.fspath(path)
    if not isinstance(name, str) or "\x00" in name:
        raise PlanError(f"{value_text(name)}: cannot read the plan file (a file name holds no NUL character)")
    p = Path(path)
    try:
        # a regular file only: a FIFO would block, /dev/zero reports size 0 and never ends
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PlanError(f"{path}: not a regular file (a plan is a TOML file)")
            if st.st_size > MAX_PLAN_BYTES:
                raise PlanError(f"{path}: a plan file is at most {MAX_PLAN_BYTES:,} bytes")
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read(MAX_PLAN_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan file ({e.strerror or e})") from None
    if len(data) > MAX_PLAN_BYTES:
        raise PlanError(f"{path}: a plan file is at most {MAX_PLAN_BYTES:,} bytes")
    if data.startswith(b"\xef\xbb\xbf"):        # a UTF-8 byte-order mark, as Windows editors write
        data = data[3:]
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text (a TOML plan file is)") from None
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise PlanError(f"{path}: not a valid TOML plan: {e}") from None
    return doc


def _site_failover(v):
    """A site_failover or peak_day cell as the plan reads it: Calc hands TRUE/FALSE to an add-in as
    1/0, a typed word arrives as text."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v in (0, 1):
        return bool(v)
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "yes", "no"):
        return v.strip().lower() in ("true", "yes")
    return v


def workload_rows(rows):
    """The Workloads table's rows with its site_failover cells as booleans (see :func:`_site_failover`);
    anything that is not a table is passed on for :func:`workloads_from_rows` to refuse."""
    try:
        rows = [list(r) for r in rows] if not isinstance(rows, (str, bytes)) else rows
    except TypeError:
        return rows
    if not rows or not isinstance(rows[0], list):
        return rows
    head = [h.strip() if isinstance(h, str) else None for h in rows[0]]     # (a cell may be anything)
    for key in ("site_failover", "peak_day"):
        if key in head:
            j = head.index(key)
            rows = [rows[0]] + [r[:j] + [_site_failover(r[j])] + r[j + 1:] if len(r) > j else r for r in rows[1:]]
    return rows


def plan_from_tables(workloads, system, profiles=None, where=("workloads", "system", "profiles", "orders",
                                                           "migrations"),
                     first_rows=(1, 1, 1, 1), orders=None, migrations=None) -> tuple:
    """``(System, [Workload])`` from the ranges (``profiles``, ``orders`` and ``migrations`` None or
    empty: no profiles, nothing on order, no migration); ``first_rows``: the sheet rows the
    workloads, system, orders and migrations ranges start at (for messages).
    :func:`cryptoplan.model.zos.plan.read.read_plan` reads a :class:`~.read.PlanTables` with it."""
    where = tuple(where) + ("workloads", "system", "profiles", "orders", "migrations")[len(where):]
    first_rows = tuple(first_rows) + (1, 1, 1, 1)[len(first_rows):]
    prof = {} if profiles is None else profiles_from_rows(profiles, where[2])
    ws = workloads_from_rows(workload_rows(workloads), where[0], prof, first_row=first_rows[0])
    s = system_from_rows(system, where[1], first_row=first_rows[1])
    if orders is not None:
        placed = orders_from_rows(orders, s, where[3], first_row=first_rows[2])
        if placed:
            s = dataclasses.replace(s, orders=placed)
    if migrations is not None:
        moving = migrations_from_rows(migrations, where[4], first_row=first_rows[3])
        if moving:
            s = dataclasses.replace(s, migrations=moving)
    _check_workloads(s, ws, where[0])
    return s, ws


def _blank(v) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _cell(v):
    """A cell's value as the plan reads it: numbers stay numbers, text is stripped."""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


def _table_rows(rows, where: str, first_row: int = 1) -> list:
    """A table as a list of row lists; anything else is refused naming ``where`` (and the row and
    column of a cell, counted from ``first_row``)."""
    if isinstance(rows, (str, bytes)):
        raise PlanError(f"{where} must be a table of rows (got {value_text(rows)})")
    try:
        out = [list(r) for r in rows]
    except TypeError:
        raise PlanError(f"{where} must be a table of rows (got {value_text(rows)})") from None
    for i, r in enumerate(out, first_row):
        for j, v in enumerate(r, 1):
            at = f"{where}, row {i}, column {j}"
            if isinstance(v, (datetime.date, datetime.time)):
                shown = v.isoformat(sep=" ") if isinstance(v, datetime.datetime) else v.isoformat()
                raise PlanError(f"{at}: the cell holds a date or time ({shown}); the table takes numbers, text "
                                "and TRUE/FALSE (a rate is a number per second)")
            if not (v is None or isinstance(v, (str, bool, int, float))) or (isinstance(v, int) and abs(v) > 2**63):
                raise PlanError(f"{at}: the cell holds {value_text(v)}; the table takes numbers, text and TRUE/FALSE")
    return out


def workloads_from_rows(rows, where: str = "the workloads table", profiles: dict | None = None,
                        first_row: int = 1) -> list:
    """Workloads from a table: a header row of keys (``name``, ``kind``, ``rate``,
    ``growth_per_year``, ``profile``, ``start``, ``duration_minutes``, ``site_failover``, ``peak_day`` and the
    kinds' arguments, :data:`KIND_ARGUMENTS`), then one row each, read as a TOML
    ``[[workload]]`` table is (:func:`workload_from_mapping`).

    Empty rows are skipped (a table with room to add); an empty cell is a key not given.  A header
    that is no key is an error unless its whole column is empty (a column for notes would be
    silently ignored, so it is refused).  ``profiles``: name -> :class:`DailyProfile`
    (:func:`profiles_from_rows`).  ``first_row``: the sheet row of the header, so that messages
    name the row a planner sees.
    """
    rows = _table_rows(rows, where, first_row)
    if not rows or not rows[0]:
        raise PlanError(f"{where}: the first row must name the columns (name, kind, rate, ...)")
    head = [_cell(h) if not _blank(h) else None for h in rows[0]]
    named = [h for h in head if h is not None]
    twice = next((h for h in named if named.count(h) > 1), None)
    if twice is not None:
        cols = [i + 1 for i, h in enumerate(head) if h == twice]
        raise PlanError(f"{where}: columns {cols[0]} and {cols[1]} are both headed {twice!r}; one column per key "
                        "(the second would silently win)")
    known = set(_table_keys()) | {k for args in KIND_ARGUMENTS.values() for k in args}
    out = []
    for i, row in enumerate(rows[1:], first_row + 1):
        if all(_blank(v) for v in row):
            continue
        d = {}
        for h, v in zip(head, row):
            if _blank(v):
                continue
            if h is None or not isinstance(h, str) or h not in known:
                raise PlanError(f"{where}, row {i}: a value under the column {h!r}, which names no workload key; "
                                f"the keys: {', '.join(_table_keys())} and each kind's arguments")
            d[h] = _cell(v)
        if "name" not in d:
            raise PlanError(f"{where}, row {i}: name is required")
        if "kind" not in d:
            raise PlanError(f"{where}, row {i} ({d['name']}): kind is required")
        d["name"] = str(d["name"])
        d = _range_columns(d, f"{where}, row {i} ({d['name']})")
        out.append(workload_from_mapping(d, f"{where}, row {i}", profiles or {}))
    if not out:
        raise PlanError(f"{where}: no workload (every row under the header is empty)")
    return out


def system_from_rows(rows, where: str = "the system block", first_row: int = 1) -> System:
    """A System from rows of (key, value): keys as :class:`System` names them; empty rows skipped
    (read as a TOML ``[system]`` table is, :func:`system_from_mapping`)."""
    d = {}
    # a spreadsheet makes a typed start month (2027-01) a date: it is the month that counts
    if not isinstance(rows, (str, bytes)):
        try:
            rows = [list(x) for x in rows]
        except TypeError:
            pass                                  # not a table: _table_rows names it
        else:
            rows = [[r[0], calendar_start(r[1], where)] if len(r) == 2 and isinstance(r[0], str)
                    and r[0].strip() == "start" and isinstance(r[1], datetime.date) else r for r in rows]
    for i, row in enumerate(_table_rows(rows, where, first_row), first_row):
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
    return system_from_mapping(d, where)


def profiles_from_rows(rows, where: str = "the profiles table") -> dict:
    """Daily profiles from a table: a header row of profile names, under each its 24, 48 or 96
    factors from 00:00 (empty cells below the last factor, and empty columns, are skipped).

    Returns
    -------
    dict
        Name -> :class:`DailyProfile`.
    """
    rows = _table_rows(rows, where)
    if not rows:
        return {}
    out = {}
    for c, head in enumerate(rows[0]):
        col = [r[c] if c < len(r) else None for r in rows[1:]]
        while col and _blank(col[-1]):
            col.pop()
        if _blank(head):
            if col:
                raise PlanError(f"{where}, column {c + 1}: factors under no profile name")
            continue
        name = str(_cell(head))
        if name in out:
            raise PlanError(f"{where}: the profile name {name!r} is used twice")
        blank = next((j for j, v in enumerate(col) if _blank(v)), None)
        if blank is not None:
            raise PlanError(f"{where}, profile {name!r}: factor {blank + 1} is empty; give 24, 48 or 96 numbers")
        try:
            out[name] = DailyProfile(name, tuple(_cell(v) for v in col))
        except PlanError as e:
            raise PlanError(f"{where}: {e}") from None
    return out
