"""The published figures of ``data/figures.csv``, typed, and lookups by id.

See ``data/README.md`` for the columns, the vocabularies and how each kind of
statement (exact, approximate, up_to, range, lower/upper bound) is compared
with a model value.
"""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError, InputError, UnknownName

import contextvars
import csv
import math
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from .datafiles import data_path, read_csv_table

__all__ = ["Figure", "PERCENT_UNITS", "POINTS", "FigureTableError", "COLUMNS", "load_figures", "figure", "figure_value", "using_figures",
           "table_in_force", "vocabulary", "sources", "source_label"]

# The columns of data/figures.csv, in order (data/README.md describes each).
COLUMNS = ("id", "source", "quote", "quantity", "platform", "crypto_card", "address_space", "mode", "cipher",
           "protocol", "policy", "key_type", "key_size", "key_reuse", "recipients", "message_kb", "card_mode",
           "function", "handshake", "baseline", "value", "low", "high", "unit", "kind", "tolerance", "note")


class FigureTableError(CryptoplanError, ValueError):
    """A figures table that cannot be read: names the file, the line and what is accepted."""

_table: contextvars.ContextVar[str | None] = contextvars.ContextVar("cryptoplan_figures", default=None)


@contextmanager
def using_figures(path):
    """Read figures from ``path`` instead of ``data/figures.csv`` inside this block.

    ``cryptoplan fit --figures F`` uses it so that a site can fit the models to
    its own measurements (same columns; rows may be added or replaced).
    """
    load_figures(path)  # validate before switching
    token = _table.set(str(path))
    try:
        yield
    finally:
        _table.reset(token)


def _num(text: str):
    text = (text or "").strip()
    return float(text) if text else None


@lru_cache(maxsize=1)
def vocabulary() -> dict:
    """``{column: frozenset of accepted values}`` from ``data/vocabulary.csv``."""
    out: dict = {}
    with open(data_path("vocabulary.csv"), newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["column"], set()).add(row["value"])
    return {k: frozenset(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def sources() -> dict:
    """``{number: row}`` of ``data/sources.csv``: the source documents by their number
    (``"001"``), each with ``label`` (short, for tables), ``author``, ``title``, ``published``."""
    rows = read_csv_table(data_path("sources.csv"), ("number", "label", "author", "title", "published"),
                          "the sources table")
    return {row["number"]: row for _, row in rows}


def source_label(source: str) -> str:
    """A figure's ``source`` as a reader knows it.

    A source document's file name (``001_d553ce467f0a188a.txt``) becomes its label in
    ``data/sources.csv`` (``AMS key-size blog (Sharkey, 2024)``); a reference fact's
    ``origin: report pages`` (``mqperf: MQ for z/OS on z14 pp.15-20``) loses the origin;
    anything else (a site's own ``site: ...`` rows) is returned as written.

    Raises
    ------
    KeyError
        A source document number that ``data/sources.csv`` does not list.
    """
    number, sep, _ = source.partition("_")
    if sep and number.isdigit() and source.endswith(".txt"):
        return sources()[number]["label"]
    origin, sep, rest = source.partition(": ")
    if sep and origin in _ORIGINS:
        return _ORIGINS[origin] + rest
    return source


# how a reference fact's origin is shown before its report and page (data/README.md, ``source``)
_ORIGINS = {"mqperf": "", "ref": "", "ibmdoc": "IBM documentation: ", "nist": "NIST "}


def _figure(path: str, line: int, row: dict) -> Figure:
    where = f"{path} line {line}" + (f" ({row['id']})" if row["id"].strip() else "")
    if not row["id"].strip():
        raise FigureTableError(f"{where}: the id is empty")
    vocab = vocabulary()
    for col in ("quantity", "unit", "kind"):
        if row[col] not in vocab[col]:
            raise FigureTableError(f"{where}: {col} {row[col]!r} is not one of {', '.join(sorted(vocab[col]))}")
    numbers = {}
    for col in ("value", "low", "high", "tolerance"):
        try:
            numbers[col] = _num(row[col])
        except ValueError:
            raise FigureTableError(f"{where}: {col} {row[col]!r} is not a number") from None
        if numbers[col] is not None and not math.isfinite(numbers[col]):
            raise FigureTableError(f"{where}: {col} {row[col]!r} is not a finite number")
    tol = numbers["tolerance"]
    if tol is None or tol < 0:
        raise FigureTableError(f"{where}: tolerance {row['tolerance']!r} must be a number >= 0 "
                               "(the relative error the figure allows, 0.1 = 10%)")
    kind = row["kind"]
    needs = {"exact": ("value",), "approximate": ("value",), "up_to": ("value",), "range": ("low", "high"),
             "lower_bound": ("low",), "upper_bound": ("high",)}[kind]
    if kind in ("lower_bound", "upper_bound") and numbers["value"] is not None:
        needs = ()
    lacking = [c for c in needs if numbers[c] is None]
    if lacking:
        raise FigureTableError(f"{where}: a {kind} figure needs {' and '.join(lacking)}")
    return Figure(id=row["id"].strip(), source=row["source"], quote=row["quote"], quantity=row["quantity"],
                  unit=row["unit"], kind=kind, value=numbers["value"], low=numbers["low"], high=numbers["high"],
                  tolerance=tol, conditions={k: row[k] for k in _CONDITIONS if row.get(k)})


#: Units printed as percentages, whose tolerance has a floor in percentage points.
PERCENT_UNITS = frozenset({"pct_change", "pct", "pct_of_baseline"})

#: The floor in percentage points by kind (data/README.md, *Tolerances*, rule 0).
POINTS = {"exact": 1.0, "lower_bound": 1.0, "upper_bound": 1.0, "approximate": 2.0, "range": 2.0, "up_to": 3.0}


@dataclass(frozen=True)
class Figure:
    """One published number with its provenance and comparison rule."""

    id: str
    source: str
    quote: str
    quantity: str
    unit: str
    kind: str
    value: float | None
    low: float | None
    high: float | None
    tolerance: float
    conditions: dict

    @property
    def points(self) -> float:
        """The tolerance in percentage points of a figure printed as a percentage (0 otherwise):
        the comparison accepts the wider of it and :attr:`tolerance` (data/README.md, *Tolerances*):
        1 point for an exact figure or a bound, 2 for an approximate one or a range, 3 for "up to"."""
        if self.unit not in PERCENT_UNITS:
            return 0.0
        return POINTS[self.kind]

    def width(self, v: float) -> float:
        """How far a model may stand from the printed number ``v``: the wider of ``tolerance``
        times ``|v|`` and :attr:`points`, in the figure's unit."""
        return max(self.tolerance * abs(v), self.points)

    def bounds(self) -> tuple[float, float]:
        """Interval a model value must fall in to reproduce this figure.

        exact/approximate: value +- the wider of tolerance * |value| and :attr:`points`; range:
        [low, high] with each end widened outward likewise; upper_bound: (-inf, high or value];
        lower_bound: [low or value, inf); up_to is compared on the maximum over the stated
        conditions like an exact figure.
        """
        if self.kind in ("exact", "approximate", "up_to"):
            value = self._number("value")
            d = self.width(value)
            return value - d, value + d
        if self.kind == "range":
            # data/README.md: each end widened outward by its width (tolerance times its magnitude,
            # at least the kind's percentage points)
            low, high = self._number("low"), self._number("high")
            return low - self.width(low), high + self.width(high)
        if self.kind == "upper_bound":
            hi = self._number("high", "value")
            return float("-inf"), hi + self.width(hi)
        if self.kind == "lower_bound":
            lo = self._number("low", "value")
            return lo - self.width(lo), float("inf")
        raise InputError(f"figure {self.id}: unknown kind {self.kind!r}")

    def target(self) -> float:
        """The single number a least-squares fit aims at (midpoint for ranges)."""
        if self.value is not None:
            return self.value
        if self.low is not None and self.high is not None:
            return 0.5 * (self.low + self.high)
        return self._number("low", "high")

    def _number(self, *fields: str) -> float:
        """The first of ``fields`` (``"value"``, ``"low"``, ``"high"``) that is set.

        A figure read from a table has what its kind needs (:func:`_figure` checks); one built
        by hand without it is an error, named like the table's.
        """
        for name in fields:
            x = getattr(self, name)
            if x is not None:
                return x
        raise InputError(f"figure {self.id}: a {self.kind} figure needs {' or '.join(fields)}")


_CONDITIONS = ("platform", "crypto_card", "address_space", "mode", "cipher", "protocol", "policy",
               "key_type", "key_size", "key_reuse", "recipients", "message_kb", "card_mode",
               "function", "handshake", "baseline")


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    out = {}
    for line, row in read_csv_table(path, COLUMNS, "a figures table", FigureTableError):
        fig = _figure(path, line, row)
        if fig.id in out:
            raise FigureTableError(f"{path} line {line}: duplicate figure id {fig.id}")
        out[fig.id] = fig
    if not out:
        raise FigureTableError(f"{path}: the table has a header and no figure")
    return out


def table_in_force() -> str:
    """Path of the figures table the models read now (see :func:`using_figures`)."""
    return _table.get() or str(data_path("figures.csv"))


def load_figures(path=None) -> dict:
    """All figures keyed by id (``path`` defaults to ``data/figures.csv``)."""
    return _load(str(path or _table.get() or _packaged_table()))


@lru_cache(maxsize=1)
def _packaged_table() -> str:
    return str(data_path("figures.csv"))


def figure(fid: str, path=None) -> Figure:
    """The published figure ``fid`` of the figures table in force (``path``: another table).

    Raises KeyError naming the id when the table has no such row.
    """
    try:
        return load_figures(path)[fid]
    except KeyError:
        raise UnknownName(f"figure {fid!r} is not in data/figures.csv") from None


def figure_value(fid: str, path=None) -> float:
    """The fit target of one figure (its value, or the midpoint of its range)."""
    return figure(fid, path).target()
