"""The template planning workbook, batch recalculation, and the ``cryptoplan`` command line."""

import lazy_loader

# the functions recalc() and sweep(), from modules whose names differ from theirs: a submodule
# named like the function would replace it as the package attribute once imported directly
_EXPORTS = {"recalc": "recalculation", "open_workbook": "recalculation", "sweep": "sweeps"}

# lazy_loader (scientific-python SPEC 1) imports a name's module on first use and caches it on
# the package; it also keeps a function whose name is its module's from being shadowed by it.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__, submod_attrs={m: [n for n, where in _EXPORTS.items() if where == m] for m in set(_EXPORTS.values())})
