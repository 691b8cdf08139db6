"""A spreadsheet formula engine, vectorized over scenarios: formulas in, values out.

Usable on its own (it imports nothing of the add-in or the models): read an ``.xlsx``
package, parse its formulas, evaluate them with the native Excel functions, optionally with
functions of your own, for one set of inputs or for a whole scenario axis at once, and write
the values back.

>>> import os, tempfile, openpyxl
>>> from cryptoplan.workbook.engine import Engine, Package, native_functions
>>> wb = openpyxl.Workbook(); ws = wb.active; ws.title = "Plan"
>>> ws["A1"], ws["B1"] = 2, "=ROUND(A1*1.5, 0)"
>>> path = os.path.join(tempfile.mkdtemp(), "book.xlsx"); wb.save(path)
>>> eng = Engine(Package(path), native_functions(), n=3)   # three scenarios at once
>>> eng.set_input("Plan!A1", [1, 2, 4])                     # returns (sheet, row, column)
(0, 1, 1)
>>> eng.evaluate()
>>> eng.value("Plan!B1").num[:, 0, 0]                        # ROUND rounds half away from 0
array([2., 3., 6.])

The add-in's functions join through the registry (``cryptoplan.workbook.catalog_functions``);
:func:`cryptoplan.workbook.recalc` and :func:`cryptoplan.workbook.sweep` are built on this.

Modules
-------
:mod:`.core`
    :class:`Engine`: the workbook's formulas, their dependency graph, inputs and values, over the
    scenario axis.
:mod:`.evaluation`
    The evaluation itself: the order, the cells of one shape as one call, a cell's run and
    spill, and where an error comes from.
:mod:`.parser`
    Formula text to a syntax tree (:func:`parse`), A1 references.
:mod:`.nodes`
    The syntax tree's node classes (:class:`~.nodes.Reference`, :class:`~.nodes.Call` ...).
:mod:`.shapes`
    Formulas that differ only in their references: parsed once, and evaluated as one call.
:mod:`.compiler`
    Syntax tree to Python closures, once per formula (once per shape for such cells).
:mod:`.graph`
    The evaluation order (Tarjan's strongly connected components) and the cycles.
:mod:`.context`
    :class:`~.context.Ctx`, what a compiled formula and the functions it calls are given,
    and the diagnostics it records.
:mod:`.arguments`
    How a function is declared (:class:`Fn`, :class:`ArgKind`, :class:`FunctionRegistry`)
    and receives its arguments.
:mod:`.references`
    :class:`Ref`, :class:`RefList` and the reference operators (range, intersection, union).
:mod:`.values`
    :class:`Val`, the value of a cell over the scenario axis (kind, number, text, error code).
:mod:`.ops`
    Excel's operators and coercions on :class:`Val`.
:mod:`.functions`
    The native Excel functions, one module per Excel category (:func:`native_functions`).
:mod:`.package`
    Reading the OOXML package (safe XML, size limits).
:mod:`.writer`
    Writing it back with the computed values (only the changed cells differ).
:mod:`.atomic`
    Atomic file replacement for every file the engine (and cryptoplan) writes.
:mod:`.limits`
    Size limits: cells of a workbook, scenarios of a sweep, the sweep's chunk.
"""

from __future__ import annotations

import lazy_loader


# name -> submodule in __init__.pyi; imported on first use (PEP 562), so reading a limit or the
# atomic writer (the command line's option defaults) does not load the parser, NumPy or the
# functions; type checkers read the same stub.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
