"""The template planning workbook (``cryptoplan template -o planner.xlsx``).

The workbook is written with openpyxl.  Every result is a formula calling a
cryptoplan Excel function (:mod:`cryptoplan.addin.udfs`) over the named input cells, so
it recalculates in Windows Excel once the functions are imported through the
xlwings add-in (docs/spreadsheets.md, "Excel on Windows").  Sheets:

``Guide``        how to use the workbook, what the error texts mean
``Inputs``       named, validated input cells (Excel's "Input" style)
``Results``      throughput, CPU per transaction by address space, card
                 utilization and queueing delay, cards required, bottleneck
``What-if``      the installed cards up to their limit, cards required as the rate grows, RSA key
                 size; scatter charts (number axes)
``Calibration``  ``=MODEL_FIGURES(ParamsFile)`` (dynamic array) and a model-vs-published chart
``Parameters``   ``=MODEL_PARAMETERS(ParamsFile)`` (dynamic array)
``Site RMF``     the RMF Crypto Hardware Activity lines a planner types in, for ``calibrate``
``Check``        Erlang C from native ``POISSON.DIST`` beside ``=ERLANGC()``
``xlwings.conf`` ``UDF MODULES = cryptoplan.addin.udfs`` for the xlwings add-in
``Lists``        (hidden) the drop-down lists, taken from :mod:`cryptoplan.model.params`

How formulas are stored
    A VBA-backed function (what xlwings' *Import Functions* creates) is
    stored in the file under its plain name, ``ERLANGC(A5,B5)``; Excel 2010+
    functions need the ``_xlfn.`` prefix in the file (``_xlfn.POISSON.DIST``).
    A dynamic-array (spilling) formula is stored as an array formula
    (``<f t="array" ref=...>``) whose cell carries ``cm="1"`` pointing to the
    ``XLDAPR`` cell-metadata record in ``xl/metadata.xml`` (what Excel 365
    and XlsxWriter write); without it Excel 365 shows the formula as
    ``=@MODEL_FIGURES()`` and returns one value.  openpyxl 3.1 cannot write
    cell metadata, so :mod:`.output` adds it to the saved package.  Older
    Excel reads the same cell as a classic array formula over ``ref`` (sized
    from the current model tables).

Rendering the charts without Excel
    ``cryptoplan template -o planner.xlsx --png out/`` also writes one PNG per
    chart sheet (:data:`CHART_SHEETS`): a *values snapshot* of that sheet
    (:func:`snapshot`: each formula replaced by what the formula engine of
    ``cryptoplan recalc`` computes for the default inputs; the builder itself
    computes nothing) is converted to PDF by LibreOffice
    (``soffice --headless --convert-to pdf``) and its first page rasterised by
    ``pdftoppm -png``.  A chart point whose source is an error is ``#N/A``,
    which Excel and LibreOffice both leave as a gap in a scatter chart.

Modules
    ``_input_cells``  the input cells: names, defaults, formats, data validation
    ``_builder``      :class:`~._builder.Builder` (writes and records the formulas) and the
                      styles, number formats and layout helpers the sheets share
    ``guide``         Guide and xlwings.conf
    ``inputs``        Inputs and the hidden Lists
    ``results``       Results
    ``plan``          Workloads and Plan
    ``whatif``        What-if
    ``calibration``   Calibration and Parameters
    ``rmf``           Site RMF
    ``check``         Check
    ``build``         :func:`build_workbook`: the sheets in order
    ``output``        :func:`write_template`, :func:`evaluated_values`, :func:`snapshot`,
                      :func:`render_pngs`
"""

from __future__ import annotations

from ._input_cells import INPUTS, MAX_UTILIZATION_CELL, TEMPLATE_DEFAULTS, excel_validation, input_defaults
from .build import build_workbook
from .output import CHART_SHEETS, evaluated_values, render_pngs, snapshot, write_template
# public names of the module this package replaced, outside __all__: the number formats, the
# Check sheet's pairs, the Workloads table's rows
from ._builder import F_CARDS, F_CPS, F_MS, F_PCT, F_RATIO, F_STARTS, F_TPS, F_US  # noqa: F401
from .check import CHECK_PAIRS  # noqa: F401
from .plan import F_MONTHS, PLAN_ROWS  # noqa: F401

__all__ = [
    "TEMPLATE_DEFAULTS", "INPUTS", "MAX_UTILIZATION_CELL", "excel_validation", "CHART_SHEETS", "input_defaults",
    "build_workbook", "evaluated_values",
    "snapshot",
    "write_template", "render_pngs",
]
