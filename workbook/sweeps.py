"""``cryptoplan sweep``: every Results output over a grid of input scenarios, in one pass.

The workbook is evaluated **once** with every varied input holding a NumPy
vector (one element per scenario, see :mod:`workbook.engine`): native
formulas operate on whole vectors, each UDF is called with arrays (grouped by
its text arguments, identical argument tuples computed once), and an element
that fails becomes an error in that scenario only.  Nothing is evaluated per
scenario except the rare formula whose *reference* depends on a varied input
(``OFFSET(A1, TxRate, 0)``).

Python API: :func:`sweep` -> :class:`SweepResult`; :func:`parse_vary`.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import sys

import numpy as np

from ._atomic import atomic_target
from .engine import EngineError, FunctionRegistry
from .engine_package import MAX_CELLS, ooxml_string
from .engine_parser import cell_name
from .engine_values import ExcelError
from .limits import MAX_SCENARIOS
from .recalculation import (
    EXIT_ERROR_VALUES, EXIT_NOT_COMPUTED, EXIT_OK, RecalcError, _is_error,
    _parse_value, check_utf8, find_outputs, load_engine,
)

__all__ = ["sweep", "SweepResult", "parse_vary", "grid_values", "MAX_SCENARIOS"]


def grid_values(start: float, stop: float, step: float) -> list[float]:
    """``start:stop:step`` -> values; ``stop`` is included when it falls on the grid.

    Robust to float rounding: the count is ``floor((stop - start) / step + 1e-9) + 1``
    and each value is ``start + i * step`` rounded to 12 significant digits,
    so ``0.1:0.3:0.1`` gives ``[0.1, 0.2, 0.3]``.
    """
    if step == 0 or not all(map(math.isfinite, (start, stop, step))):
        raise ValueError("step must be a finite non-zero number")
    span = (stop - start) / step
    if span < -1e-9:
        raise ValueError(f"{start}:{stop}:{step} is empty (the step goes the wrong way)")
    count = int(math.floor(span + 1e-9)) + 1
    if count > MAX_SCENARIOS:
        raise ValueError(f"{start}:{stop}:{step} has {count:,} values, over {MAX_SCENARIOS:,}")
    return [float(f"{start + i * step:.12g}") for i in range(count)]


def parse_vary(text: str) -> tuple[str, list]:
    """``"TxRate=500,1000"`` or ``"TxRate=500:5000:500"`` -> ``("TxRate", [values])``.

    Values that parse as numbers are numbers, others text (``Policy=integrity,privacy``).
    """
    if "=" not in text:
        raise ValueError(f"--vary {text!r}: expected NAME=v1,v2,... or NAME=start:stop:step")
    name, spec = text.split("=", 1)
    name = name.strip()
    if not name or not spec.strip():
        raise ValueError(f"--vary {text!r}: expected NAME=v1,v2,... or NAME=start:stop:step")
    check_utf8("--vary: the name", name)
    parts = spec.split(":")
    if ":" in spec and "," not in spec and len(parts) != 3:
        raise ValueError(f"--vary {text!r}: a range is start:stop:step, three numbers")
    if len(parts) == 3 and "," not in spec:
        try:
            a, b, c = (float(p) for p in parts)
        except ValueError:
            raise ValueError(f"--vary {text!r}: start:stop:step must be numbers") from None
        return name, grid_values(a, b, c)
    try:
        return name, [_parse_value(v.strip()) for v in spec.split(",")]
    except ValueError as exc:
        raise ValueError(f"--vary {name}: {exc}") from None


class SweepResult:
    """Inputs and outputs of every scenario.

    Attributes
    ----------
    inputs : dict
        ``{name: list of values}`` (one per scenario).
    outputs : dict
        ``{output key: list of values}`` (float, bool, str or ExcelError);
        keys as :func:`workbook.recalculation.recalc`.
    cells : dict
        ``{output key: "Sheet!A1"}``.
    """

    def __init__(self, inputs, outputs, cells, path):
        self.inputs = inputs
        self.outputs = outputs
        self.cells = cells
        self.path = path

    @property
    def n(self) -> int:
        return len(next(iter(self.inputs.values()))) if self.inputs else 0

    def rows(self):
        """One dict per scenario: inputs then outputs."""
        keys_in, keys_out = list(self.inputs), list(self.outputs)
        for i in range(self.n):
            row = {k: self.inputs[k][i] for k in keys_in}
            row.update({k: self.outputs[k][i] for k in keys_out})
            yield row

    def column(self, key: str) -> list:
        """An output column by key, defined name or cell address (case-insensitive)."""
        k = self.resolve(key)
        return self.outputs[k] if k in self.outputs else self.inputs[k]

    def resolve(self, key: str) -> str:
        low = key.strip().lower()
        for k in list(self.outputs) + list(self.inputs):
            if k.lower() == low:
                return k
        for k, cell in self.cells.items():
            if cell.lower() == low or cell.split("!")[1].lower() == low:
                return k
        for k, names in self._names.items():
            if low in (n.lower() for n in names):
                return k
        matches = [k for k in self.outputs if low in k.lower()]
        if len(matches) == 1:
            return matches[0]
        raise KeyError(f"no output {key!r}; outputs: {', '.join(self.outputs)}")

    _names: dict = {}

    @property
    def exit_code(self) -> int:
        worst = EXIT_OK
        for col in self.outputs.values():
            for v in col:
                if isinstance(v, ExcelError) and not v.computed:
                    return EXIT_NOT_COMPUTED
                if _is_error(v):
                    worst = EXIT_ERROR_VALUES
        return worst

    def write(self, path) -> None:
        """Save as ``.csv`` or ``.xlsx`` (atomically; inputs first, then outputs)."""
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in (".csv", ".xlsx"):
            raise ValueError(f"{path}: the results file must end in .csv or .xlsx")
        header = list(self.inputs) + list(self.outputs)
        with atomic_target(path) as tmp:
            if suffix == ".csv":
                with open(tmp, "w", newline="", encoding="utf-8") as fh:
                    w = csv.writer(fh)
                    w.writerow([_csv(k) for k in header])
                    for row in self.rows():
                        w.writerow([_csv(row[k]) for k in header])
            else:
                from openpyxl import Workbook
                from openpyxl.cell import WriteOnlyCell
                wb = Workbook(write_only=True)
                ws = wb.create_sheet("Sweep")

                def cell(v):
                    v = _xlsx(v)
                    if not isinstance(v, str):
                        return v
                    c = WriteOnlyCell(ws, value=ooxml_string(v))   # openpyxl escapes the rest
                    c.data_type = "s"    # text stays text: never a formula, whatever it starts with
                    return c

                ws.append([cell(k) for k in header])
                for row in self.rows():
                    ws.append([cell(row[k]) for k in header])
                wb.save(tmp)

    def plot(self, path, ys: list[str], x: str | None = None) -> None:
        """Line plot of outputs ``ys`` against input ``x`` (default: the first varied input).

        One panel per output, sharing the x axis, each with the output's own label as its
        y axis: outputs in different units (a utilization and a delay in ms) never share a
        scale.  Error values are gaps.
        """
        import textwrap

        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        x = x or next(iter(self.inputs))
        xs = self.inputs[x]
        others = [k for k in self.inputs if k != x and len(set(map(str, self.inputs[k]))) > 1]
        groups: dict = {}
        for i in range(self.n):
            groups.setdefault(tuple(self.inputs[o][i] for o in others), []).append(i)
        fig, axes = plt.subplots(len(ys), 1, sharex=True, squeeze=False,
                                 figsize=(8, 1.5 + 2.6 * len(ys)))
        for ax, yk in zip(axes[:, 0], ys):
            k = self.resolve(yk)
            col = self.outputs[k]
            for gkey, idx in groups.items():
                px = [float(xs[i]) if isinstance(xs[i], (int, float)) else np.nan for i in idx]
                # error values and error text are gaps, never plotted as numbers
                py = [float(col[i]) if isinstance(col[i], (int, float)) and not isinstance(col[i], bool)
                      else np.nan for i in idx]
                label = ", ".join(f"{o}={v}" for o, v in zip(others, gkey)) or None
                ax.plot(px, py, marker="o", ms=3, label=label)
            ax.set_ylabel("\n".join(textwrap.wrap(k, 28)), fontsize=8)
            ax.grid(True, alpha=0.3)
            if others and len(ax.lines) <= 12:
                ax.legend(fontsize=7)
        axes[-1, 0].set_xlabel(x)
        axes[0, 0].set_title(f"{os.path.basename(self.path)}: sweep over {x}")
        fig.tight_layout()
        suffix = os.path.splitext(os.fspath(path))[1].lstrip(".") or "png"
        with atomic_target(path) as tmp:
            fig.savefig(tmp, dpi=110, format=suffix)
        plt.close(fig)


# CSV injection (OWASP): a spreadsheet opening the CSV runs text that starts with one of these
# as a formula; such text is written with a leading apostrophe, which spreadsheets show as text.
_CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _csv(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        v = float(v)
        return repr(v) if v != int(v) or abs(v) >= 1e15 else str(int(v))
    text = str(v)
    return "'" + text if text.startswith(_CSV_TRIGGERS) else text


def _xlsx(v):
    if isinstance(v, ExcelError):
        return str(v)
    return v


def sweep(path, vary: dict, *, zip_inputs: bool = False, functions: FunctionRegistry | None = None,
          max_cells: int = MAX_CELLS, progress: bool = False, fixed: dict | None = None) -> SweepResult:
    """Evaluate the workbook's outputs for every scenario of ``vary``.

    Parameters
    ----------
    path : str or Path
        The workbook.
    vary : dict
        ``{name or "Sheet!A1": list of values}``.
    zip_inputs : bool
        Pair the lists element by element (all must have one length) instead
        of taking their Cartesian product (first input varies slowest).
    functions : FunctionRegistry, optional
        Default: native Excel functions + the add-in's UDFs.
    max_cells : int
        Workbook cell limit.
    progress : bool
        Show a tqdm progress bar over the formula cells (long runs).
    fixed : dict, optional
        ``{name or "Sheet!A1": value}`` set for every scenario (``--set``); each is also a
        column of the results, after the varied inputs, so every row says what it was
        computed with.

    Returns
    -------
    SweepResult

    Raises
    ------
    RecalcError
        Unusable workbook, unknown input, or more than :data:`MAX_SCENARIOS` scenarios.
    """
    if not vary:
        raise RecalcError("nothing to vary: give at least one --vary NAME=values")
    names = list(vary)
    lists = [list(vary[k]) for k in names]
    if any(not v for v in lists):
        raise RecalcError("every --vary needs at least one value")
    fixed = dict(fixed or {})
    both = sorted({k.lower() for k in fixed} & {k.lower() for k in names})
    if both:
        raise RecalcError(f"{both[0]} is both set (--set) and varied (--vary): give it in one of them")
    if zip_inputs:
        if len({len(v) for v in lists}) != 1:
            raise RecalcError("--zip needs the same number of values for every --vary "
                              f"({', '.join(f'{k}: {len(v)}' for k, v in zip(names, lists))})")
        columns = lists
    else:
        total = math.prod(len(v) for v in lists)
        if total > MAX_SCENARIOS:
            raise RecalcError(f"{total:,} scenarios, over the limit of {MAX_SCENARIOS:,}")
        columns = [list(c) for c in zip(*itertools.product(*lists))]
    n = len(columns[0])
    engine = load_engine(path, n=n, functions=functions, max_cells=max_cells)
    try:
        for name, values in zip(names, lists):
            _check_kind(engine, name, values)
        for name, col in zip(names, columns):
            engine.set_input(name, col if n > 1 else col[0])
        for name, value in fixed.items():
            engine.set_input(name, value)
    except EngineError as exc:
        raise RecalcError(f"{path}: {exc}") from None
    # outputs: keys need evaluated labels, so evaluate first, then collect
    roots = [k for k in engine.formulas if engine.sheets[k[0]].name.lower() == "results"] or None
    if progress:
        _evaluate_with_progress(engine, roots)
    else:
        engine.evaluate(roots)
    outs = find_outputs(engine)
    result_out, cells, name_map = {}, {}, {}
    for key, cell, nm in outs:
        v = engine.cell_value(*cell)
        result_out[key] = v.column(n)
        cells[key] = f"{engine.sheets[cell[0]].name}!{cell_name(cell[1], cell[2])}"
        name_map[key] = nm
    inputs = dict(zip(names, columns))
    inputs.update({name: [value] * n for name, value in fixed.items()})
    res = SweepResult(inputs, result_out, cells, os.fspath(path))
    res._names = name_map
    return res


def _check_kind(engine, name, values) -> None:
    """A cell that holds a number takes numbers: ``--vary TxRate=abc`` is a mistake, not a scenario."""
    try:
        current = engine.value(name).element(0)
    except EngineError:
        return                      # set_input names the problem
    if isinstance(current, float) and not isinstance(current, bool):
        text = [v for v in values if isinstance(v, str)]
        if text:
            raise RecalcError(f"--vary {name}: the cell holds a number and {text[0]!r} is not one "
                              "(numbers as 1500 or 1.5e3, without separators)")


def _evaluate_with_progress(engine, roots):
    from tqdm import tqdm

    def bar(order):
        return tqdm(order, desc="formulas", unit="cell", file=sys.stderr, leave=False)
    engine.evaluate(roots, iterate=bar)
