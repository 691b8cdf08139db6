"""The template planning workbook, batch recalculation, and the ``cryptoplan`` command line."""

from .recalc import recalc  # noqa: E402
from .sweep import sweep  # noqa: E402

__all__: list[str] = ["recalc", "sweep"]
