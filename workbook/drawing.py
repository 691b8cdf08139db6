"""A workbook evaluated under draws of the model's parameters: each scenario one draw.

A sweep with ``draws`` (:func:`cryptoplan.workbook.sweeps.iter_sweep`) evaluates each of its
scenarios ``D`` times, as ``m x D`` scenarios of the engine (scenario ``i``'s draws at engine
scenarios ``i D .. i D + D - 1``), inside :func:`drawing`.  While it is in force, every catalog
function whose answer depends on the parameters (those with a ``params_file`` argument)
evaluates engine scenario ``s`` under draw ``s mod D`` of the parameters then in force: the
parameter file the cell names, else the environment's
(:func:`cryptoplan.model.calibration.draws.parameter_draws`, the same seed for every file and
cell, so that two cells of one workbook see the same draw in the same scenario).  The engine's
grouping of identical argument rows counts the draw as an argument, so a cell whose other
arguments do not vary is evaluated once per draw, in one vectorized call with the parameters as
arrays (:func:`cryptoplan.model.params.using_values`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from cryptoplan.model.lazy import lazy_module
from cryptoplan.model.remember import Remembered

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model.calibration import draws as draws_module
    from cryptoplan.model import params as model_params
else:
    draws_module = lazy_module("cryptoplan.model.calibration.draws")
    model_params = lazy_module("cryptoplan.model.params")

__all__ = ["drawing", "active", "shared", "Drawing"]


@dataclass
class Drawing:
    """``n`` draws with ``seed``; the draws of each parameter set met, made once."""

    n: int
    seed: int
    _made: Remembered = field(default_factory=lambda: Remembered(8), compare=False, repr=False)
    _picked: Remembered = field(default_factory=lambda: Remembered(16), compare=False, repr=False)
    _each: Remembered = field(default_factory=lambda: Remembered(4), compare=False, repr=False)

    def values(self) -> dict:
        """The draws of the parameters in force (name -> array of ``n``), made once per set."""
        bound = model_params.binding()
        return self._made.get(tuple(map(id, bound)),
                              lambda: draws_module.parameter_draws(self.n, seed=self.seed), keep=bound)

    def at(self, draw) -> dict:
        """The parameter values of ``draw`` (an index: floats; an array of indices: arrays), as
        :func:`~cryptoplan.model.params.prepared_values`: the same draws asked again (the same
        indices, the next cell of the sweep) are the same object, so the plans remembered for
        one cell serve the next."""
        v = self.values()
        idx = np.asarray(draw, dtype=np.int64)
        bound = model_params.binding()
        if idx.ndim == 0:       # one draw: the n draws' values made at once, each asked many times
            return self._each.get(tuple(map(id, bound)), lambda: model_params.parameter_sets(v), keep=bound)[int(idx)]

        def pick():
            return model_params.prepared_values({k: x[idx] for k, x in v.items()}, shared=True)
        # the entry keeps the binding whose ids its key holds (they were once not kept)
        return self._picked.get((tuple(map(id, bound)), idx.shape, idx.tobytes()), pick, keep=bound)


_ACTIVE: ContextVar = ContextVar("cryptoplan_workbook_drawing", default=None)


def active() -> Drawing | None:
    """The :class:`Drawing` in force, or None."""
    return _ACTIVE.get()


# The Drawing of each (n, seed) met: every chunk of a sweep evaluates under the same one, so what it
# made (the draws, each chunk's picks of them) and what is remembered by those objects (a channel's
# answers per draw, the workloads' per-unit costs) is found again in the next chunk, not made anew.
_DRAWINGS = Remembered(4)


def shared(n: int, seed: int = 0) -> Drawing:
    """The :class:`Drawing` of ``n`` draws with ``seed`` that :func:`drawing` puts in force (one per
    pair, remembered for the last few pairs)."""
    n, seed = int(n), int(seed)
    return _DRAWINGS.get((n, seed), lambda: Drawing(n, seed))


@contextmanager
def drawing(n: int, seed: int = 0):
    """Evaluate the catalog functions under ``n`` parameter draws (module docstring)."""
    token = _ACTIVE.set(shared(n, seed))
    try:
        yield
    finally:
        _ACTIVE.reset(token)
