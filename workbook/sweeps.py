"""``cryptoplan sweep``: every Results output over a grid of input scenarios, in one pass.

The workbook is read and compiled **once** and evaluated in chunks of
:data:`DEFAULT_CHUNK` scenarios, every varied input holding a NumPy vector
(one element per scenario of the chunk, see :mod:`cryptoplan.workbook.engine`): native
formulas operate on whole vectors, each UDF is called with arrays (grouped by
its text arguments, identical argument tuples computed once), and an element
that fails becomes an error in that scenario only.  Nothing is evaluated per
scenario except the rare formula whose *reference* depends on a varied input
(``OFFSET(A1, TxRate, 0)``).

Python API: :func:`sweep` -> :class:`SweepResult` (in memory); :func:`iter_sweep` yields
one per chunk and :func:`write_sweep` streams them to a file (memory bounded by a chunk);
:func:`parse_vary`.
"""

from __future__ import annotations

from cryptoplan.model.domains import BAND_LEVEL, DRAWS
from cryptoplan.model.errors import InputError, UnknownName

import csv
import itertools
import math
import os
import re
import sys
import threading
import uuid
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from cryptoplan.addin.errors import ErrorText

from .engine import (
    DEFAULT_CHUNK, MAX_CELLS, MAX_SCENARIOS, EngineError, ExcelError, FunctionRegistry, atomic_target,
    cell_name, csv_text, not_computed, ooxml_string,
)
from .engine.values import BOOL, EMPTY, ERR_NA, ERR_NULL, ERROR_TEXT, NUM, STR, Val
from . import drawing
from cryptoplan.model._numeric import draw_quantiles
from cryptoplan.model.zos.plan.bands import quantile_keys as _quantile_keys
from .recalculation import (
    EXIT_ERROR_VALUES, EXIT_NOT_COMPUTED, EXIT_OK, RecalcError, is_error_value,
    parse_value, check_utf8, find_outputs, load_engine,
)
from cryptoplan.model.lazy import lazy_module
from .engine.evaluation import DONE

# loaded on first use: a sweep that writes CSV needs neither openpyxl nor matplotlib
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.workbook.report import charts
    import openpyxl
    from cryptoplan.workbook import template
    import tqdm
else:
    charts = lazy_module("cryptoplan.workbook.report.charts")
    openpyxl = lazy_module("openpyxl")
    template = lazy_module("cryptoplan.workbook.template")
    tqdm = lazy_module("tqdm")

__all__ = ["sweep", "iter_sweep", "write_sweep", "count_scenarios", "SweepResult", "parse_vary", "grid_values",
           "MAX_SCENARIOS", "DEFAULT_CHUNK", "with_progress", "Written", "plot_format"]


def grid_values(start: float, stop: float, step: float) -> list[float]:
    """``start:stop:step`` -> values; ``stop`` is included when it falls on the grid.

    Robust to float rounding: the count is ``floor((stop - start) / step + 1e-9) + 1``
    and each value is ``start + i * step`` rounded to 12 significant digits,
    so ``0.1:0.3:0.1`` gives ``[0.1, 0.2, 0.3]``.
    """
    if step == 0 or not all(map(math.isfinite, (start, stop, step))):
        raise InputError("step must be a finite non-zero number")
    span = (stop - start) / step
    if span < -1e-9:
        raise InputError(f"{start}:{stop}:{step} is empty (the step goes the wrong way)")
    if not span < MAX_SCENARIOS:       # also an overflow to inf (1:1e300:1e-300)
        how_many = f"about {span + 1:.3g}" if math.isfinite(span) else "more than 1e308"
        raise InputError(f"{start:g}:{stop:g}:{step:g} has {how_many} values, over the limit of {MAX_SCENARIOS:,}")
    count = int(math.floor(span + 1e-9)) + 1
    if count > MAX_SCENARIOS:
        raise InputError(f"{start}:{stop}:{step} has {count:,} values, over {MAX_SCENARIOS:,}")
    return [float(f"{start + i * step:.12g}") for i in range(count)]


def plot_format(path) -> str:
    """The image format a ``--plot`` file name asks for: :func:`cryptoplan.workbook.report.charts.plot_format`."""
    return charts.plot_format(path)


def parse_vary(text: str) -> tuple[str, list]:
    """``"TxRate=500,1000"`` or ``"TxRate=500:5000:500"`` -> ``("TxRate", [values])``.

    Values that parse as numbers are numbers, others text (``Policy=integrity,privacy``).
    """
    if "=" not in text:
        raise InputError(f"--vary {text!r}: expected NAME=v1,v2,... or NAME=start:stop:step")
    name, spec = text.split("=", 1)
    name = name.strip()
    if not name or not spec.strip():
        raise InputError(f"--vary {text!r}: expected NAME=v1,v2,... or NAME=start:stop:step")
    check_utf8("--vary: the name", name)
    parts = spec.split(":")
    if ":" in spec and "," not in spec and len(parts) != 3:
        raise InputError(f"--vary {text!r}: a range is start:stop:step, three numbers")
    if len(parts) == 3 and "," not in spec:
        try:
            a, b, c = (float(p) for p in parts)
        except ValueError:
            raise InputError(f"--vary {text!r}: start:stop:step must be numbers") from None
        return name, grid_values(a, b, c)
    try:
        return name, [parse_value(v.strip()) for v in spec.split(",")]
    except ValueError as exc:
        raise InputError(f"--vary {name}: {exc}") from None


class SweepResult:
    """Inputs and outputs of every scenario.

    Attributes
    ----------
    inputs : dict
        ``{name: list of values}`` (one per scenario).
    outputs : dict
        ``{output key: list of values}`` (float, bool, str or ExcelError);
        keys as :func:`cryptoplan.workbook.recalculation.recalc`.
    cells : dict
        ``{output key: "Sheet!A1"}``.
    """

    def __init__(self, inputs, outputs, cells, path):
        self.inputs = inputs
        self._outputs = outputs
        self._columns = None
        self.cells = cells
        self.path = path

    @classmethod
    def _from_columns(cls, inputs, columns: dict, cells, path) -> "SweepResult":
        """A chunk's result from its outputs' ``(kind, num, text)`` columns (:func:`_top_left` of
        the engine's values), kept as arrays: the Python lists of :attr:`outputs` are built only
        if asked for (the CSV writer formats the arrays)."""
        res = cls(inputs, None, cells, path)
        res._columns = columns
        res._exit = max((_exit_code(kind, text) for kind, _, text in columns.values()), default=EXIT_OK)
        return res

    def _add_bands(self, drawn: dict, m: int, d: int, level: float) -> None:
        """Each numeric output's quantiles over the draws, as columns after it: ``KEY [p05]``,
        ``KEY [median]``, ``KEY [p95]`` (keys by level; the draws' own values, ``inverted_cdf``)
        and ``KEY [P(error)]``, the share of draws whose value is an error (an overloaded pool's
        wait, a count beyond what an LPAR can have): the quantiles are of the other draws."""
        lo_key, hi_key = _quantile_keys(level)
        out = {}
        for key, (kind, num, text) in self._columns.items():
            out[key] = (kind, num, text)
            if key not in drawn:                              # text in every scenario: not drawn
                continue
            dk, dn, dt = drawn[key]
            if not (kind == NUM).any() and not (dk.reshape(m, d) == NUM).any():
                continue                                  # a text output: no band
            ok = (dk == NUM).reshape(m, d)
            x = np.where(ok, dn.reshape(m, d), np.nan)
            q = draw_quantiles(x, [(1 - level) / 2, 0.5, (1 + level) / 2])     # all-error scenarios: NaN
            for name, col in zip((lo_key, "median", hi_key), q):
                out[f"{key} [{name}]"] = (np.where(np.isnan(col), ERR_NA, NUM).astype(kind.dtype), np.nan_to_num(col),
                                          None)
            out[f"{key} [P(error)]"] = (np.full(m, NUM, dtype=kind.dtype), 1.0 - ok.mean(axis=1), None)
            if not ok.any(axis=1).all():           # a scenario with no draw computed: its band is #N/A
                self._exit = max(self._exit or EXIT_OK, EXIT_ERROR_VALUES)
        self._columns = out

    def error_counts(self) -> dict:
        """``{output key: number of scenarios whose value is an error}``, outputs without errors left out.

        An error is an Excel error value or the add-in's error text (``#NUM! CARD_UTILIZATION: ...``),
        the values that make :attr:`exit_code` 1.
        """
        if self._outputs is not None:
            counts = {k: sum(1 for v in col if is_error_value(v)) for k, col in self._outputs.items()}
        else:
            counts = {k: _error_count(kind, text) for k, (kind, _, text) in self._columns.items()}
        return {k: n for k, n in counts.items() if n}

    def output_keys(self) -> list:
        """The output keys, in column order (without building :attr:`outputs`)."""
        return list(self._columns if self._outputs is None else self._outputs)

    @property
    def outputs(self) -> dict:
        """``{output key: list of values}``, one per scenario."""
        if self._outputs is None:
            self._outputs = {key: Val(num[:, None, None], kind[:, None, None],
                                      None if text is None else text[:, None, None]).column(len(kind))
                             for key, (kind, num, text) in self._columns.items()}
        return self._outputs

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
        raise UnknownName(f"no output {key!r}; outputs: {', '.join(self.outputs)}")

    _names: dict = {}
    _exit: int | None = None

    @classmethod
    def concat(cls, parts: list) -> "SweepResult":
        """One result from consecutive chunks (:func:`iter_sweep`)."""
        first = parts[0]
        res = cls({k: [v for p in parts for v in p.inputs[k]] for k in first.inputs},
                  {k: [v for p in parts for v in p.outputs[k]] for k in first.outputs}, first.cells, first.path)
        res._names = first._names
        codes = [p._exit for p in parts]
        res._exit = None if None in codes else max(codes)
        return res

    @property
    def exit_code(self) -> int:
        """0 every output computed; 1 some values are errors; 3 some could not be computed."""
        if self._exit is not None:
            return self._exit
        worst = EXIT_OK
        for col in self.outputs.values():
            for v in col:
                if isinstance(v, ExcelError) and not v.computed:
                    return EXIT_NOT_COMPUTED
                if is_error_value(v):
                    worst = EXIT_ERROR_VALUES
        return worst

    def write(self, path) -> None:
        """Save as ``.csv`` or ``.xlsx`` (atomically; inputs first, then outputs)."""
        path = os.fspath(path)
        suffix = os.path.splitext(path)[1].lower()
        if suffix not in (".csv", ".xlsx"):
            raise InputError(f"{path}: the results file must end in .csv or .xlsx")
        with atomic_target(path) as tmp:
            with _writer(tmp, suffix) as write:
                write(self, header=True)

    def plot(self, path, ys: list[str], x: str | None = None) -> None:
        """Line plot of outputs ``ys`` against input ``x`` (default: the first varied input).

        One panel per output, sharing the x axis, each with the output's own label and unit as
        its y axis: outputs in different units (a utilization and a delay in ms) never share a
        scale.  Error values are gaps.  Whole-number outputs (card and processor counts) are
        drawn as steps, not slopes; each line has its own marker and dash, so lines that
        coincide stay visible; the x axis names the input's unit and the figure says which
        parameter file produced the values.
        """
        image_format = charts.plot_format(path)
        x = x or next(iter(self.inputs))
        with atomic_target(path) as tmp:
            charts.sweep_chart(self, tmp, ys, x, self._units(), image_format)

    def _units(self) -> dict:
        """``{input or output key: unit}`` for the plot's axes.

        An input's unit is the template's (Inputs sheet, column Unit); an output's is the text
        its cell's number format prints after the number (``"µs"``, ``"cards"``) or ``%``.
        """
        units = {inp.name: inp.unit for inp in template.INPUTS if inp.unit}
        try:
            wb = openpyxl.load_workbook(self.path, read_only=True)
        except Exception:        # noqa: BLE001 - a plot without output units is still a plot
            return units
        try:
            for key, where in self.cells.items():
                sheet, _, coord = str(where).rpartition("!")
                try:
                    fmt = wb[sheet.strip("'")][coord].number_format or ""
                except (KeyError, ValueError, AttributeError):
                    continue
                # the plural section of '[=1]0 "card";0 "cards"': the first without a [=1] condition
                section = next((s for s in fmt.split(";") if not s.startswith("[=")), fmt)
                quoted = re.findall(r'"([^"]+)"', section)
                if quoted:
                    units[key] = quoted[-1].strip()
                elif "%" in fmt:
                    units[key] = "%"
        finally:
            wb.close()
        for key in self.output_keys():          # a band column: its output's unit; a share: %
            base, _, tag = key.rpartition(" [")
            if base and tag.endswith("]"):
                units[key] = "%" if tag == "P(error)]" else units.get(base, "")
        return units

    def params_source(self) -> str:
        """Which parameter file produced the values: the swept or set ``ParamsFile`` input, else
        ``CRYPTOPLAN_PARAMS``, else the fit packaged with cryptoplan."""
        given = [v for k, col in self.inputs.items() if k.lower() == "paramsfile" for v in col]
        files = sorted({str(v) for v in given if v not in (None, "")})
        if files:
            return ", ".join(files)
        if not given:
            stored = _stored_params_file(self.path)
            if stored:
                return f"{stored} (the workbook's ParamsFile)"
        if os.environ.get("CRYPTOPLAN_PARAMS"):
            return f"{os.environ['CRYPTOPLAN_PARAMS']} (CRYPTOPLAN_PARAMS)"
        return "the packaged fit (cryptoplan data/params.json)"


def _stored_params_file(path) -> str | None:
    """The value of the workbook's ``ParamsFile`` input cell, if it has one and it is not empty."""
    try:
        wb = openpyxl.load_workbook(path)
        dn = wb.defined_names.get("ParamsFile")
        if dn is None:
            return None
        for sheet, coord in dn.destinations:
            value = wb[sheet][coord.replace("$", "")].value
            return str(value) if value not in (None, "") else None
    except Exception:        # noqa: BLE001 - the source line is a courtesy; never fail the plot
        return None
    return None


# CSV injection (OWASP): a spreadsheet opening the CSV runs text that starts with one of these
# as a formula; such text is written with a leading apostrophe, which spreadsheets show as text.
_CSV_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def _csv(v):
    text = csv_text(v)
    if v is None or isinstance(v, (bool, int, float)):
        return text                   # a negative number stays a number
    return "'" + text if text.startswith(_CSV_TRIGGERS) else text


_ROW = "{}\r\n"      # csv.writer's line terminator


def _quoted(field: str) -> str:
    """A CSV field as ``csv.writer`` (QUOTE_MINIMAL) writes it."""
    if "," in field or '"' in field or "\n" in field or "\r" in field:
        return '"' + field.replace('"', '""') + '"'
    return field


def _csv_fields(kind, num, text) -> list:
    """The CSV fields of one output column, formatted a column at a time.

    Exactly what :func:`_csv` gives element by element (numbers as :func:`csv_text`: whole
    ones below 1e15 without ``.0``, others by ``repr``; text guarded against CSV injection
    and quoted as ``csv.writer`` quotes), with the per-element work only where it is
    inherent: ``repr`` of a fraction and the text cells.
    """
    out = np.empty(len(kind), dtype=object)
    isnum = kind == NUM
    whole = isnum & (num == np.floor(num)) & (np.abs(num) < 1e15)
    frac = isnum & ~whole
    out[whole] = list(map(str, num[whole].astype(np.int64).tolist()))
    out[frac] = list(map(repr, num[frac].tolist()))
    out[kind == BOOL] = np.where(num[kind == BOOL] != 0, "TRUE", "FALSE")
    out[kind == EMPTY] = ""
    for code in np.unique(kind[kind >= ERR_NULL]).tolist():
        out[kind == code] = ERROR_TEXT[code]
    istext = kind == STR
    if istext.any():
        cells = text[istext].tolist()
        fields = {s: _quoted(_csv(s)) for s in set(cells)}    # each distinct text once
        out[istext] = list(map(fields.__getitem__, cells))
    return out.tolist()


def _xlsx(v):
    if isinstance(v, ExcelError):
        return str(v)
    return v


def _scenarios(vary: dict, zip_inputs: bool, fixed: dict) -> tuple[list, list, int]:
    """Names, value lists and scenario count of the varied inputs (validated)."""
    if not vary:
        raise RecalcError("nothing to vary: give at least one --vary NAME=values")
    names = list(vary)
    lists = [list(vary[k]) for k in names]
    if any(not v for v in lists):
        raise RecalcError("every --vary needs at least one value")
    both = sorted({k.lower() for k in fixed} & {k.lower() for k in names})
    if both:
        raise RecalcError(f"{both[0]} is both set (--set) and varied (--vary): give it in one of them")
    if zip_inputs:
        if len({len(v) for v in lists}) != 1:
            raise RecalcError("--zip needs the same number of values for every --vary "
                              f"({', '.join(f'{k}: {len(v)}' for k, v in zip(names, lists))})")
        return names, lists, len(lists[0])
    total = math.prod(len(v) for v in lists)
    if total > MAX_SCENARIOS:
        raise RecalcError(f"{total:,} scenarios, over the limit of {MAX_SCENARIOS:,}")
    return names, lists, total


def _chunk_columns(lists: list, zip_inputs: bool, start: int, m: int) -> list[list]:
    """The varied inputs' values for scenarios ``start .. start + m - 1``, one list per input.

    ``lists`` are the inputs' values as object arrays.  Scenario ``s`` of a product takes
    value ``unravel_index(s, lengths)`` of each input: the order of ``itertools.product``
    (the last input varies fastest), computed for this chunk only, so memory follows the
    chunk and not the number of scenarios.
    """
    if zip_inputs:
        return [v[start:start + m].tolist() for v in lists]
    index = np.unravel_index(np.arange(start, start + m), [len(v) for v in lists])
    return [v[i].tolist() for v, i in zip(lists, index)]


def _as_objects(values: list) -> np.ndarray:
    """``values`` as a 1-D object array (each value the same Python object, never converted)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def count_scenarios(vary: dict, zip_inputs: bool = False) -> int:
    """How many scenarios :func:`sweep` evaluates for ``vary`` (product, or the common length)."""
    lengths = [len(v) for v in vary.values()]
    return (lengths[0] if lengths else 0) if zip_inputs else math.prod(lengths)


def iter_sweep(path, vary: dict, *, zip_inputs: bool = False, functions: FunctionRegistry | None = None,
               max_cells: int = MAX_CELLS, fixed: dict | None = None, chunk_size: int = DEFAULT_CHUNK,
               draws: int | None = None, seed: int = 0, level: float = 0.9, executor=None):
    """Evaluate ``vary``'s scenarios in chunks of ``chunk_size``; yield one :class:`SweepResult` each.

    The workbook is read, parsed and compiled once (once per worker with an ``executor``); each
    chunk is one vectorized evaluation of its scenarios (memory bounded by ``chunk_size``, not by
    the number of scenarios), in scenario order.  With ``draws``, a chunk is ``chunk_size //
    draws`` scenarios under every draw, and a task of up to :data:`TASK_CHUNKS` chunks evaluates
    their scenarios at the parameters in one evaluation first (no more engine scenarios than a
    chunk: :func:`evaluate_chunk`).  Arguments as :func:`sweep`.

    Raises
    ------
    RecalcError
        As :func:`sweep`, before the first chunk is evaluated.
    """
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise InputError(f"chunk_size = {chunk_size!r}: a whole number >= 1")
    if draws is not None:
        draws = int(DRAWS.check(draws, "draws", scalar=True))
        level = float(BAND_LEVEL.check(level, "level", scalar=True))
        try:        # the parameter file in force must give draws: said once, not as #N/A in every band
            drawing.shared(draws, seed).values()       # (the draws the chunks then evaluate under)
        except InputError as exc:
            raise RecalcError(f"--draws: {exc}") from None
    fixed = dict(fixed or {})
    names, lists, n = _scenarios(vary, zip_inputs, fixed)
    objects = [_as_objects(v) for v in lists]
    # with draws a chunk is its scenarios times the draws: as many engine scenarios as chunk_size
    step = chunk_size if draws is None else max(1, chunk_size // draws)
    spec = _Spec(os.fspath(path), tuple(names), fixed, functions, max_cells, draws, seed, level, uuid.uuid4().hex)
    engine = _engine(spec, min(n, step) * (draws or 1))      # the inputs checked here, before any chunk
    try:
        for name, values in zip(names, lists):
            _check_kind(engine, name, values)
    except EngineError as exc:
        raise RecalcError(f"{path}: {exc}") from None
    # with draws a task is several chunks: its scenarios at the parameters in one evaluation, then
    # each chunk under the draws (evaluate_chunk); no more than `draws` chunks, so that evaluation
    # is no larger than chunk_size either; an executor gets at least EXECUTOR_TASKS tasks where
    # there are as many chunks, to share among its workers
    chunks = -(-n // step)
    size = step if draws is None else step * max(1, min(TASK_CHUNKS, draws, chunks if executor is None
                                                        else chunks // EXECUTOR_TASKS))
    tasks = ((spec, _chunk_columns(objects, zip_inputs, start, min(size, n - start)), step)
             for start in range(0, n, size))
    if executor is None:
        for task in tasks:
            yield from evaluate_chunk(task)
        return
    # a window of tasks at a time, each a list (dask's map takes no iterator): the workers stay
    # busy and memory holds a window's results, not the sweep's
    while window := list(itertools.islice(tasks, EXECUTOR_WINDOW)):
        for done in executor.map(evaluate_chunk, window):
            yield from done


#: Tasks handed to an executor at once (:func:`iter_sweep`).
EXECUTOR_WINDOW = 32

#: Chunks of a sweep with draws that one task evaluates (:func:`evaluate_chunk`), at most (and no
#: more than the draws: a task's scenarios are no more engine scenarios than a chunk's): their
#: scenarios at the parameters are one evaluation, whose cost is mostly the same for 20 scenarios
#: as for 160 (20 ms a chunk of the template's 20 scenarios x 1,000 draws, a tenth of it, issue 66).
TASK_CHUNKS = 8

#: The fewest tasks a sweep with draws hands an executor where it has as many chunks (one chunk a
#: task below that): its workers share them, a task of 8 chunks taking a second or more.
EXECUTOR_TASKS = 16


class _Spec(NamedTuple):
    """What every chunk of one sweep shares (sent to each worker with its chunk)."""

    path: str
    names: tuple
    fixed: dict
    functions: FunctionRegistry | None
    max_cells: int
    draws: int | None
    seed: int
    level: float
    run: str = ""       # this sweep's own: what one chunk keeps for the next is kept within one sweep


# The engine of the workbook each worker evaluates (one sweep at a time per thread: an engine
# holds the values of the evaluation under way): loaded once, kept while the file is unchanged.
_LOCAL = threading.local()


def _engine(spec: _Spec, n: int):
    """The sweep's engine, loaded once per process and file, inputs given, sized for ``n``."""
    try:
        st = os.stat(spec.path)
    except OSError:
        st = None
    key = (os.path.abspath(spec.path), None if st is None else (st.st_mtime_ns, st.st_size), spec.max_cells,
           id(spec.functions), tuple(sorted((k, repr(v)) for k, v in spec.fixed.items())))
    cached = getattr(_LOCAL, "engine", None)
    engine = cached[1] if cached is not None and cached[0] == key else None
    if engine is None:
        engine = load_engine(spec.path, n=n, functions=spec.functions, max_cells=spec.max_cells)
        try:
            for name, value in spec.fixed.items():
                engine.set_input(name, value)
            for name in spec.names:                       # names the input problem before any evaluation
                engine.locate(name)
        except EngineError as exc:
            raise RecalcError(f"{spec.path}: {exc}") from None
        _LOCAL.engine = (key, engine)
    return engine


def _evaluated(spec: _Spec, engine, part: list, m: int, repeat: int, roots: list | None = None) -> dict:
    """Evaluate ``m`` scenarios (each repeated ``repeat`` times, consecutively); the engine's values.
    ``roots``: the cells to evaluate (with what they depend on); default every formula of the
    Results sheet."""
    engine.resize(m * repeat)
    try:
        for name, col in zip(spec.names, part):
            values = col if repeat == 1 else np.repeat(_as_objects(col), repeat).tolist()
            engine.set_input(name, values if m * repeat > 1 else values[0])
    except EngineError as exc:
        raise RecalcError(f"{spec.path}: {exc}") from None
    if roots is None:
        roots = [k for k in engine.formulas if engine.sheets[k[0]].name.lower() == "results"] or None
    kept = _kept(spec, engine, repeat)
    try:
        engine.evaluate(roots, known=kept["values"])          # what the last chunk computed the same
    except MemoryError:
        # every formula cell holds one value per scenario of the chunk: a smaller chunk fits
        if repeat > 1 and m == 1:
            raise RecalcError(f"{spec.path}: one scenario under {repeat:,} draws does not fit in memory; give fewer "
                              "--draws") from None
        raise RecalcError(f"{spec.path}: a chunk of {m * repeat:,} evaluations does not fit in memory; give a "
                          f"smaller --chunk-size (chunk_size), e.g. {max(1, m * repeat // 8):,}") from None
    kept["values"] = {key: (engine.values[key], engine.diagnostics.get(key)) for key in kept["free"]
                      if engine.state.get(key) == DONE and key in engine.values}
    return engine.values


def _kept(spec: _Spec, engine, repeat: int) -> dict:
    """What the chunks of one sweep (``spec.run``) keep from one to the next in this thread: the
    formula cells that do not depend on the varied inputs (``free``) and their values after the
    last evaluation of the same kind (``values``; ``repeat`` draws per scenario, ``engine.n``
    scenarios).  Those cells then keep their values instead of being evaluated again: the same
    inputs give the same value (a cell reading a varied input, a reference known only when it
    runs, an array or a volatile function is evaluated every time,
    :meth:`~.engine.Engine.independent_of`).  Nothing is kept from one sweep to the next: the
    parameters in force, or a parameter file a cell names, may have changed in between."""
    held = getattr(_LOCAL, "kept", None)
    if held is None or held["engine"] is not engine or held["spec"] != spec:
        try:
            free = engine.independent_of([engine.locate(name) for name in spec.names])
        except EngineError:
            free = set()
        held = _LOCAL.kept = {"engine": engine, "spec": spec, "free": free, "by": {}}
    return held["by"].setdefault((repeat, engine.n), {"free": held["free"], "values": {}})


#: glibc's mallopt parameter and the value :func:`_malloc_for_chunks` sets: allocations below 32 MiB
#: (a chunk's temporaries, about 160 KB each) from the heap, as glibc's own dynamic threshold does.
_M_MMAP_THRESHOLD, _MMAP_THRESHOLD = -3, 32 * 1024 * 1024
_MALLOC_TUNED: list = []


def _malloc_for_chunks() -> bool:
    """In a process whose malloc was told to trim (``MALLOC_TRIM_THRESHOLD_`` set, as dask's nanny
    sets it in every worker it starts), give the heap back its large-allocation threshold.

    Setting any ``MALLOC_*_`` variable turns glibc's dynamic mmap threshold off, so every
    temporary above 128 KB of a chunk's evaluation goes through ``mmap`` and its page faults: a
    chunk took 0.49 s in a ``dask worker`` against 0.21 s in-process (issue 66).  Setting the mmap
    threshold to 32 MiB (the dynamic threshold's own ceiling) makes such a worker run as fast as
    the process.  Done once per process; nothing where the variable is not set, where the user
    set ``MALLOC_MMAP_THRESHOLD_`` themselves, or off glibc.  Returns whether it was set.
    """
    if _MALLOC_TUNED:
        return _MALLOC_TUNED[0]
    tuned = False
    if "MALLOC_TRIM_THRESHOLD_" in os.environ and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        try:
            import ctypes
            # the process's own symbols: glibc's mallopt where the C library is glibc (no
            # ctypes.util.find_library: it starts ldconfig)
            tuned = bool(ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD))
        except (OSError, AttributeError, TypeError):
            tuned = False
    _MALLOC_TUNED.append(tuned)
    return tuned


def evaluate_chunk(task) -> list:
    """One task of a sweep: ``task`` is ``(spec, columns, step)``, the sweep's shared settings, the
    varied inputs' values of the task's scenarios and the scenarios a chunk holds.  Returns the
    task's chunks' :class:`SweepResult`, one per ``step`` scenarios, in order.  What
    :func:`iter_sweep` maps over an executor (a module-level function: it pickles by name).

    The task's scenarios are evaluated at the parameters in one evaluation; with draws each
    chunk's are then evaluated under the draws (``step x draws`` engine scenarios), its outputs
    that can have a band only."""
    _malloc_for_chunks()
    spec, part, step = task
    m = len(part[0])
    engine = _engine(spec, m if spec.draws is None else min(step, m) * spec.draws)
    _evaluated(spec, engine, part, m, 1)
    outs = find_outputs(engine)
    cells = {key: f"{engine.sheets[cell[0]].name}!{cell_name(cell[1], cell[2])}" for key, cell, _ in outs}
    columns = {key: _top_left(engine.cell_value(*cell), m) for key, cell, _ in outs}
    inputs = dict(zip(spec.names, part))
    inputs.update({name: [value] * m for name, value in spec.fixed.items()})
    names = {key: nm for key, _, nm in outs}
    results = []
    for start in range(0, m, step):
        at = slice(start, min(m, start + step))
        k = at.stop - start
        res = SweepResult._from_columns({name: v[at] for name, v in inputs.items()},
                                        {key: tuple(None if x is None else x[at] for x in col)
                                         for key, col in columns.items()}, cells, spec.path)
        res._names = names
        if spec.draws is not None:
            _add_draws(spec, spec.draws, engine, [v[at] for v in part], k, outs, res)
        results.append(res)
    return results


def _add_draws(spec: _Spec, d: int, engine, part: list, m: int, outs: list, res: "SweepResult") -> None:
    """``res``'s bands: its ``m`` scenarios (``part``) under the ``d`` draws, the outputs that can have a
    band evaluated: those a number or an error in some scenario; an output that is text in
    every one (a scenario line, a verdict) and the labels and messages beside the outputs are
    not asked again under the draws."""
    banded = [(key, cell) for key, cell, _ in outs if not _plain_text(*res._columns[key])]
    with drawing.drawing(d, spec.seed):
        if banded:
            _evaluated(spec, engine, part, m, d, roots=[cell for _, cell in banded])
        drawn = {key: engine.cell_value(*cell) for key, cell in banded}
    res._add_bands({k: _top_left(v, m * d) for k, v in drawn.items()}, m, d, spec.level)


def _plain_text(kind, num, text) -> bool:
    """Whether a column of top-left values (:func:`_top_left`) is text, and no error text, in each
    of its scenarios."""
    if not (kind == STR).all() or text is None:
        return False
    return not any(isinstance(t, ErrorText) for t in text.tolist())


def _top_left(v: Val, m: int) -> tuple:
    """``(kind, num, text)`` of a value's top-left element in each of ``m`` scenarios, 1-D."""
    kind = np.broadcast_to(v.kind[:, 0, 0], (m,))
    num = np.broadcast_to(v.num[:, 0, 0], (m,))
    text = None if v.text is None else np.broadcast_to(v.text[:, 0, 0], (m,))
    return kind, num, text


def _error_count(kind, text) -> int:
    """Scenarios (elements of the 1-D ``kind``/``text`` columns) holding an error value or error text."""
    bad = kind >= ERR_NULL
    is_text = kind == STR
    if text is not None and is_text.any():
        idx = np.flatnonzero(is_text)
        bad = bad.copy()
        bad[idx] = [isinstance(t, ErrorText) for t in text[idx].tolist()]
    return int(bad.sum())


def _exit_code(kind, text) -> int:
    """Exit code of one output over a chunk's scenarios, from its top-left values' kinds and texts
    (:func:`_top_left`; vectorized)."""
    if not_computed(kind).any():
        return EXIT_NOT_COMPUTED
    if (kind >= ERR_NULL).any():
        return EXIT_ERROR_VALUES
    is_text = kind == STR
    if text is not None and is_text.any():
        if any(isinstance(t, ErrorText) for t in text[is_text].tolist()):
            return EXIT_ERROR_VALUES
    return EXIT_OK


def sweep(path, vary: dict, *, zip_inputs: bool = False, functions: FunctionRegistry | None = None,
          max_cells: int = MAX_CELLS, progress: bool = False, fixed: dict | None = None,
          chunk_size: int = DEFAULT_CHUNK, draws: int | None = None, seed: int = 0, level: float = 0.9,
          executor=None) -> SweepResult:
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
        Show a tqdm progress bar counting scenarios (one step per chunk).
    fixed : dict, optional
        ``{name or "Sheet!A1": value}`` set for every scenario (``--set``); each is also a
        column of the results, after the varied inputs, so every row says what it was
        computed with.
    chunk_size : int
        Scenarios evaluated together (:func:`iter_sweep`); the results are the same for any
        chunk size.  With ``draws``, engine evaluations: ``chunk_size // draws`` scenarios.
    draws : int, optional
        Also evaluate each scenario under this many draws of the model's parameters
        (:mod:`cryptoplan.workbook.drawing`: each cell's parameter file, drawn with ``seed``) and
        give each numeric output's central ``level`` interval and median over them, and the
        share of draws in which it is an error (:meth:`SweepResult._add_bands`), beside the
        output at the parameters themselves.
    seed : int
        The draws' seed: the same seed, the same draws.
    level : float
        The interval's probability, in (0, 1).
    executor : concurrent.futures.Executor, optional
        Evaluate the chunks through ``executor.map`` (a process pool, or dask.distributed's
        ``Client.get_executor()``): each worker loads the workbook once; the results are the
        chunks' in order, the same numbers as in one process.

    Returns
    -------
    SweepResult
        All scenarios, in memory; :func:`write_sweep` streams chunks to a file instead.

    Raises
    ------
    RecalcError
        Unusable workbook, unknown input, or more than :data:`MAX_SCENARIOS` scenarios.
    """
    chunks = iter_sweep(path, vary, zip_inputs=zip_inputs, functions=functions, max_cells=max_cells,
                        fixed=fixed, chunk_size=chunk_size, draws=draws, seed=seed, level=level, executor=executor)
    if progress:
        chunks = with_progress(chunks, count_scenarios(vary, zip_inputs))
    return SweepResult.concat(list(chunks))


def with_progress(chunks, total: int):
    """Pass ``chunks`` through, advancing a progress bar by each chunk's scenarios."""
    with tqdm.tqdm(total=total, desc="sweep", unit="scenario", unit_scale=True, file=sys.stderr,
              leave=False) as bar:
        for res in chunks:
            bar.update(res.n)
            yield res


def write_sweep(chunks, path, *, keep: bool = False):
    """Stream sweep chunks (:func:`iter_sweep`) to ``path`` (.csv or .xlsx), atomically.

    Returns
    -------
    Written
        ``scenarios`` and ``outputs`` written, the worst ``exit_code``, and ``result``: all
        chunks joined when ``keep`` (for a plot), else None (memory stays bounded by a chunk).
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".csv", ".xlsx"):
        raise InputError(f"{path}: the results file must end in .csv or .xlsx")
    n, code, kept, outputs = 0, EXIT_OK, [], 0
    errors: dict[str, int] = {}
    with atomic_target(path) as tmp:
        with _writer(tmp, suffix) as write:
            for res in chunks:
                try:
                    write(res, header=n == 0)
                except MemoryError:
                    # the chunk's rows as text: several times its numbers (the temporary file goes)
                    raise RecalcError(f"{path}: the rows of a chunk of {res.n:,} scenarios do not fit in memory "
                                      f"as text; give a smaller --chunk-size (chunk_size), e.g. "
                                      f"{max(1, res.n // 8):,}") from None
                n += res.n
                outputs = len(res.output_keys())
                code = max(code, res.exit_code)
                if code >= EXIT_ERROR_VALUES:
                    for k, c in res.error_counts().items():
                        errors[k] = errors.get(k, 0) + c
                if keep:
                    kept.append(res)
    return Written(n, outputs, code, SweepResult.concat(kept) if keep else None, errors)


class Written(NamedTuple):
    """What :func:`write_sweep` wrote; ``errors``: ``{output key: scenarios with an error}``."""
    scenarios: int
    outputs: int
    exit_code: int
    result: "SweepResult | None"
    errors: dict = {}


def error_summary(errors: dict, scenarios: int) -> str:
    """One line naming the outputs that hold errors and in how many of the scenarios.

    Parameters
    ----------
    errors : dict
        ``{output key: number of scenarios whose value is an error}`` (:attr:`Written.errors`).
    scenarios : int
        Scenarios swept.

    Returns
    -------
    str
        E.g. ``2 outputs hold errors: "Accelerator utilization (RMF summary)" in 3 of 10
        scenarios; ...``.
    """
    parts = [f'"{k}" in {n:,} of {scenarios:,} scenarios' for k, n in errors.items()]
    verb = "output holds" if len(errors) == 1 else "outputs hold"
    return f"{len(errors)} {verb} errors: " + "; ".join(parts)


@contextmanager
def _writer(tmp, suffix: str):
    """A function ``write(result, header)`` appending rows to the file ``tmp``."""
    if suffix == ".csv":
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)

            def write(res, header):
                keys = list(res.inputs) + res.output_keys()
                if header:
                    w.writerow([_csv(k) for k in keys])
                if res._outputs is not None:
                    w.writerows([_csv(row[k]) for k in keys] for row in res.rows())
                    return
                cols = [[_quoted(_csv(v)) for v in col] for col in res.inputs.values()]
                cols += [_csv_fields(*res._columns[k]) for k in res.output_keys()]
                fh.write("".join(map(_ROW.format, map(",".join, zip(*cols)))))
            yield write
        return
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Sweep")

    def cell(v):
        v = _xlsx(v)
        if not isinstance(v, str):
            return v
        c = openpyxl.cell.WriteOnlyCell(ws, value=ooxml_string(v))   # openpyxl escapes the rest
        c.data_type = "s"    # text stays text: never a formula, whatever it starts with
        return c

    def write_xlsx(res, header):
        keys = list(res.inputs) + list(res.outputs)
        if header:
            ws.append([cell(k) for k in keys])
        for row in res.rows():
            ws.append([cell(row[k]) for k in keys])
    yield write_xlsx
    wb.save(tmp)


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
