"""The public names of cryptoplan.workbook (see model/__init__.pyi)."""

from .recalculation import (
    recalc as recalc,
    open_workbook as open_workbook,
)
from .sweeps import (
    sweep as sweep,
)
