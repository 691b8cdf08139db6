"""Locate the files of ``data/`` in a checkout or an installed distribution."""

from __future__ import annotations

import csv
import importlib.resources
import io
import os
from functools import lru_cache
from pathlib import Path

__all__ = ["data_path", "read_csv_rows"]


@lru_cache(maxsize=64)
def data_path(name: str) -> Path:
    """Path of ``data/<name>``.

    Looks in the installed package ``cryptoplan_data`` (``pip install .`` maps
    the ``data/`` folder to it), then beside this package in a source checkout.
    Cached: the model asks for its parameter file on every parameter lookup.
    """
    try:
        root = Path(str(importlib.resources.files("cryptoplan_data")))
        if (root / name).exists():
            return root / name
    except ModuleNotFoundError:
        pass
    local = Path(__file__).resolve().parent.parent / "data" / name
    if local.exists():
        return local
    raise FileNotFoundError(f"data file {name!r} not found in the cryptoplan_data package "
                            f"or in {local.parent}{os.sep}")


def read_csv_rows(path, what: str, error=ValueError):
    """The rows of a user's UTF-8 CSV file (a BOM is allowed), as a ``csv.reader``.

    ``what`` completes "a UTF-8 CSV file ..." in the message; ``error`` is the exception
    class raised, with a message naming ``path``, for a file that cannot be read or is not
    UTF-8 (the offending byte and its offset).
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: byte 0x{raw[exc.start]:02x} at offset {exc.start} is not UTF-8 text; "
                    f"expected a UTF-8 CSV file {what}") from None
    return csv.reader(io.StringIO(text, newline=""))
