"""The spreadsheet layer over :mod:`cryptoplan.model`: the function catalog
(:mod:`~cryptoplan.addin.catalog`), the one cell contract (:mod:`~cryptoplan.addin.convert`), the
xlwings functions for Excel (:mod:`~cryptoplan.addin.udfs`) and the LibreOffice Calc add-in
(:mod:`~cryptoplan.addin.calc`)."""

__all__: list[str] = []
