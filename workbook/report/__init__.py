"""What cryptoplan draws and prints for a reader: the plan's text, JSON and one-page HTML report
(:mod:`.plan`), and every chart (:mod:`.charts`: matplotlib's object API, no pyplot).

The modules are imported by name (``cryptoplan.workbook.report.plan``); this package imports
neither, so reading a plan's text does not load matplotlib.
"""

from __future__ import annotations

__all__: list[str] = []
