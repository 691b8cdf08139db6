"""cryptoplan's Excel functions (xlwings UDF module ``cryptoplan.addin.udfs``).

Generated from :data:`cryptoplan.addin.catalog.CATALOG`: one Python function per entry,
named like the Excel function (``ERLANGC``), with the catalog's arguments as
its signature, decorated with xlwings' ``@xw.func(category=..., volatile=False)``
and one ``@xw.arg(name, ndim=2, err_to_str=True, doc=...)`` per argument.
Each function only forwards to :func:`cryptoplan.addin.convert.call`, the single
conversion layer (cells -> model -> cells, broadcasting over ranges, error
text instead of exceptions).

Point xlwings at this module with ``"UDF MODULES","cryptoplan.addin.udfs"`` in
``xlwings.conf`` (see ``addin/xlwings.conf`` and docs/spreadsheets.md, section "Excel on
Windows"), then click *Import Functions* in the xlwings ribbon.

Notes
-----
* xlwings (``xlwings/udfs.py``, ``xlfunc``) takes the Excel name from
  ``__name__``, the argument list and defaults from ``inspect.signature``
  (which honours ``__signature__``) and the wizard's function description from
  ``__doc__``; Excel's wizard shows at most 255 characters, so ``__doc__`` of
  a generated function is the catalog's one-line help, not a numpydoc block.
* ``ndim=2`` makes a single cell and a range arrive the same way (a 2-D
  list), ``err_to_str=True`` makes an error cell arrive as ``"#N/A"`` rather
  than ``None`` (which would look like an empty cell and silently select the
  default).
* No ``@xw.ret`` options are set: a 2-D list spills natively in Excel 365;
  ``expand="table"`` is the legacy pre-dynamic-array mechanism.
* Errors are returned as text such as ``"#NUM! CARD_UTILIZATION: ..."``; why
  (xlwings 0.37.8 cannot return a real Excel error value) is explained in
  :mod:`cryptoplan.addin.convert`.
* On Linux and macOS without Excel, ``xlwings`` imports and its decorators are
  no-ops, so this module imports everywhere and the functions can be called
  from Python: ``ERLANGC(9, 10)`` or ``ERLANGC([[8], [9]], 10)``.
"""

from __future__ import annotations

import inspect

import xlwings as xw

from . import convert
from .catalog import CATALOG, Function

__all__ = [f.name for f in CATALOG]


def _generate(spec: Function):
    """Build the xlwings-decorated Python function for one catalog entry."""
    params = [inspect.Parameter(a.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                default=(inspect.Parameter.empty if a.required else a.default))
              for a in spec.args]
    signature = inspect.Signature(params)

    def udf(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return convert.call(spec, tuple(bound.arguments[a.name] for a in spec.args))

    # (setattr: attributes a plain function does not declare, which mypy refuses to assign)
    setattr(udf, "__signature__", signature)
    udf.__name__ = udf.__qualname__ = spec.name
    udf.__doc__ = spec.help
    udf.__module__ = __name__
    setattr(udf, "catalog_entry", spec)
    f = udf
    for a in reversed(spec.args):
        f = xw.arg(a.name, ndim=2, err_to_str=True, doc=a.wizard_text())(f)
    return xw.func(category=spec.category, volatile=False)(f)


for _spec in CATALOG:
    globals()[_spec.name] = _generate(_spec)
del _spec
