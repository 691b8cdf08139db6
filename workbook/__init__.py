"""The template planning workbook, batch recalculation, and the ``cryptoplan`` command line."""

__all__: list[str] = []
