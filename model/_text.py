"""How an error message shows the value it refuses (standard library only: every layer may use it)."""

from __future__ import annotations

import datetime
import math

__all__ = ["value_text"]


def value_text(value, limit: int = 60) -> str:
    """``repr(value)`` for an error message, abbreviated to about ``limit`` characters.

    A hostile argument must not fill the message (a 400-digit integer, a megabyte of text)
    nor break it: an integer over Python's 4,300-digit conversion limit has no ``repr``
    and is described by its size.  Standard library only (no NumPy).

    Examples
    --------
    >>> value_text(10**400)
    '1000000000000000000000000...0000000000000000000000000 (401 digits)'
    >>> value_text(0.5)
    '0.5'
    >>> value_text(datetime.datetime(2020, 1, 1))
    'the date 2020-01-01'
    """
    if isinstance(value, (datetime.date, datetime.time)):     # a spreadsheet's date cell: as the sheet shows it
        shown = value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
        return f"the {'time' if isinstance(value, datetime.time) else 'date'} {shown.removesuffix(' 00:00:00')}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 14_000:
        digits = math.floor(value.bit_length() * math.log10(2)) + 1
        return f"{'-' if value < 0 else ''}an integer of about {digits:,} digits"
    try:
        text = repr(value)
    except Exception:   # noqa: BLE001 - an object whose repr fails is described by its type
        return f"a {type(value).__name__}"
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 5, 8)
    size = (f"{len(text.lstrip('-')):,} digits" if isinstance(value, int) and not isinstance(value, bool)
            else f"{len(text):,} characters")
    return f"{text[:half]}...{text[-half:]} ({size})"
