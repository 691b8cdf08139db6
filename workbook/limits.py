"""Size limits of the recalculation and the sweep, declared once (the CLI's defaults read them)."""

__all__ = ["MAX_CELLS", "MAX_SCENARIOS"]

MAX_CELLS = 2_000_000           # cells of a workbook the engine accepts (a memory guard)
MAX_SCENARIOS = 1_000_000       # scenarios of one sweep
