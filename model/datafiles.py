"""Locate the files of ``data/`` in a checkout or an installed distribution."""

from __future__ import annotations

import importlib.resources
import os
from functools import lru_cache
from pathlib import Path

__all__ = ["data_path"]


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
