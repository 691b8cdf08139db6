"""Locate the files of ``data/`` in a checkout or an installed distribution."""

from __future__ import annotations

import csv
import importlib.resources
import io
import os
from functools import lru_cache
from pathlib import Path

__all__ = ["data_path", "read_text", "read_csv_table"]


@lru_cache(maxsize=64)
def data_path(name: str) -> Path:
    """Path of ``data/<name>``.

    Looks in the installed package ``cryptoplan.data`` (``pip install .`` maps
    the ``data/`` folder to it), then beside this package in a source checkout.
    Cached: the model asks for its parameter file on every parameter lookup.
    """
    try:
        root = Path(str(importlib.resources.files("cryptoplan.data")))
        if (root / name).exists():
            return root / name
    except ModuleNotFoundError:
        pass
    local = Path(__file__).resolve().parent.parent / "data" / name
    if local.exists():
        return local
    raise FileNotFoundError(f"data file {name!r} not found in the cryptoplan.data package "
                            f"or in {local.parent}{os.sep}")


def read_text(path, error, not_text: str, hint: str) -> str:
    """A user's file as UTF-8 text (a BOM is allowed).

    Raises ``error`` naming ``path``: unreadable (the system's reason), or not UTF-8
    (``"{path}: {not_text}: byte 0x.. at offset N is not UTF-8 text ({hint})"``).
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {not_text}: byte 0x{raw[exc.start]:02x} at offset {exc.start} is not UTF-8 "
                    f"text ({hint})") from None


def read_csv_table(path, columns: tuple, what: str, error=ValueError, *, heading=str.strip) -> list:
    """The rows of a user's UTF-8 CSV table (a BOM is allowed) as ``[(line, {column: text})]``.

    Parameters
    ----------
    path : str or Path
    columns : tuple of str
        The columns the header must hold, each once, and nothing else (in any order).
    what : str
        What the table is, for messages ("a figures table").
    error : type
        Exception class raised, with a message naming ``path``, the line and what is accepted:
        unreadable, not UTF-8 (the byte and its offset), empty, a header that is not this
        table's (missing or unknown columns), a row with a different number of fields.
    heading : callable
        Applied to each header cell before matching (``str.upper`` for RMF's headings).

    Blank lines are skipped; cells are returned as written.
    """
    text = read_text(path, error, f"not {what}", f"{what} is a UTF-8 CSV file with the columns {', '.join(columns)}")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        return _table_rows(reader, path, columns, what, error, heading)
    except csv.Error as exc:        # a field over csv's 131,072-character limit, a NUL byte
        raise error(f"{path} line {reader.line_num}: not {what} ({exc}); {what} is a CSV file with the "
                    f"columns {', '.join(columns)}") from None


def _table_rows(reader, path, columns, what, error, heading) -> list:
    """:func:`read_csv_table`'s rows from a ``csv.reader`` (which may raise ``csv.Error``)."""
    header = next(reader, None)
    if header is None:
        raise error(f"{path}: the file is empty; {what} has the header {','.join(columns)}")
    header = [heading(h.strip()) for h in header]
    missing = [c for c in columns if c not in header]
    unknown = [h for h in header if h not in columns]
    if len(missing) == len(columns):
        raise error(f"{path} line 1: not {what}: the header has none of its columns ({', '.join(columns[:4])}, ...)")
    if missing or unknown:
        found = "; ".join(x for x in (f"missing columns {', '.join(missing)}" if missing else "",
                                       f"unknown columns {', '.join(repr(u) for u in unknown[:5])}" if unknown
                                       else "") if x)
        raise error(f"{path} line 1: not {what} ({found}); the columns are {', '.join(columns)}")
    rows = []
    for line, values in enumerate(reader, 2):
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise error(f"{path} line {line}: {len(values)} fields, the header has {len(header)} "
                        "(a quote or comma out of place?)")
        rows.append((line, dict(zip(header, values))))
    return rows
