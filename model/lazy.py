"""The one way cryptoplan defers an import: :func:`lazy_module`, bound at a module's top.

A module that needs a costly dependency only in some of its functions (SciPy's special
functions beyond the Erlang recurrence, lmfit for a fit, openpyxl and matplotlib for files
and charts, the model for a command line that must answer ``--help`` at once) names it at its
top, where a reader sees it::

    special = lazy_module("scipy.special")

and the import runs on the first attribute access (``special.gammaincc(...)``).  It is
:func:`lazy_loader.load` (scientific-python SPEC 1), plus what a real import of a submodule
does and ``lazy_loader.load`` does not: the module is also bound on its parent package, so
``import a.b`` followed by ``a.b.x`` works whoever imported ``a.b`` first.  Until it runs, the
module in ``sys.modules`` is a placeholder whose class is importlib's ``_LazyModule``; the
start-up tests check ``type(sys.modules[name]) is types.ModuleType`` for "really loaded".  A
*package* is not given a placeholder in ``sys.modules`` (a later ``import pkg.sub`` would run
``pkg.sub`` twice, see :class:`_Package`): its stand-in imports it on first attribute access.

A placeholder's first use is not thread-safe before Python 3.12.3 (CPython issue 114763: a
second thread can see the module half executed and get an AttributeError).  Code that hands
work to threads touches the modules the threads need first, in its own thread (the Erlang
kernels' thread pool does, for ``scipy.special``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

import lazy_loader


__all__ = ["lazy_module"]


class _Missing(types.ModuleType):
    """A module that was not found: its first attribute access imports it, which raises
    ``ModuleNotFoundError`` unless it has been installed since."""

    def __getattr__(self, attr):
        return getattr(importlib.import_module(self.__name__), attr)


class _Package(_Missing):
    """A package, imported on first attribute access: a stand-in kept out of ``sys.modules``.

    A lazy placeholder of a *package* in ``sys.modules`` would run the package's submodules twice:
    ``import pkg.sub`` finds the placeholder as the parent, checks that ``pkg.sub`` is not loaded,
    then reads the placeholder's ``__path__``, which runs ``pkg/__init__`` (importing ``pkg.sub``),
    and then runs ``pkg.sub`` again: two module objects, two copies of its classes.  This
    stand-in leaves ``sys.modules`` alone, so ``import pkg.sub`` imports ``pkg`` as usual, and the
    stand-in's attributes are the real package's.
    """


def lazy_module(name: str) -> types.ModuleType:
    """Module ``name`` (``"scipy.special"``, ``"cryptoplan.workbook.sweeps"``), imported on first use.

    The parent packages of a submodule are imported at once (finding a submodule needs its
    parent's path): keep them light, as cryptoplan's own packages are.

    Raises
    ------
    ModuleNotFoundError
        On first use, if there is no such module.
    """
    if name not in sys.modules:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.submodule_search_locations is not None:
            return _Package(name)
    try:
        # error_on_import: lazy_loader's own stand-in for a missing module calls inspect.stack(),
        # which touches every module placeholder in sys.modules; one whose code calls
        # lazy_loader.load again then waits forever on lazy_loader's (non-reentrant) lock
        module = lazy_loader.load(name, suppress_warning=True, error_on_import=True)
    except ModuleNotFoundError:
        return _Missing(name)
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules and child not in vars(sys.modules[parent]):   # no __getattr__
        setattr(sys.modules[parent], child, module)
    return module
