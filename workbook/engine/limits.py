"""Size limits of the recalculation and the sweep, declared once (the CLI's defaults read them)."""

__all__ = ["MAX_CELLS", "MAX_SCENARIOS", "DEFAULT_CHUNK"]

MAX_CELLS = 2_000_000           # cells of a workbook the engine accepts (a memory guard)
MAX_SCENARIOS = 1_000_000       # scenarios of one sweep
DEFAULT_CHUNK = 20_000          # scenarios a sweep evaluates together: its memory grows with this
