"""The template planning workbook, batch recalculation, and the ``cryptoplan`` command line."""

import importlib

# the functions recalc() and sweep(), from modules whose names differ from theirs: a submodule
# named like the function would replace it as the package attribute once imported directly
_EXPORTS = {"recalc": "recalculation", "open_workbook": "recalculation", "sweep": "sweeps"}

__all__: list[str] = list(_EXPORTS)


def __getattr__(name: str):
    # imported on first use (PEP 562): the command line's --help loads neither engine nor model
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'workbook' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
