"""The fit itself: each sub-model's free parameters against its published figures.

Each sub-model of :data:`~cryptoplan.model.calibration.free.GROUPS` (crypto + AMS, TLS, the
handshake factors) is its own least-squares problem over its free parameters and its targets
(:func:`~cryptoplan.model.calibration.scoring.group_members`), solved twice by
:func:`cryptoplan.model.calibration.leastsq.solve`: plain least squares from the starting
points (:func:`~cryptoplan.model.calibration.free.initial`), then the Cauchy loss
(:data:`~cryptoplan.model.calibration.free.LOSS`) from there.  The round-trip model is fitted
apart (:func:`cryptoplan.model.calibration.roundtrip.fit_roundtrip`).  The statistical model
(residuals, loss, standard errors) is described in :mod:`cryptoplan.model.calibration.fit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
import time

from ..zos.tls import ROUNDTRIP_PARAMS
from .free import FREE, GROUPS, LOSS, PRIORS, derived_parameters, initial
from .leastsq import solve
from .roundtrip import fit_roundtrip
from .scoring import TOLERANCE_UNCERTAINTY, group_batch, measured, roundtrip_cost
from ..lazy import lazy_module

# lmfit takes ~0.4 s to import: loaded on first use, as the figure table (MODEL_FIGURES) never fits
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import lmfit
else:
    lmfit = lazy_module("lmfit")

__all__ = ["fit", "fit_twice", "free_parameters", "FIT_TOL"]

#: Where each sub-model's two fits stop (:func:`~cryptoplan.model.calibration.leastsq.solve`'s
#: ``tol``: relative step, relative change of the cost, scaled gradient).  While a range figure
#: said of several conditions was scored on the condition farthest from its middle, the TLS
#: cost jumped where that condition changed side, and the fit stopped on the jump at 3.637,
#: 3.667 or 3.692 as the last digits of its inputs moved (``cryptoplan fit --check`` failed on
#: one machine and passed on another); 1e-10 made it stop at one of them.  Scored by its two
#: ends (:func:`~cryptoplan.model.calibration.targets.scored`), eight fits whose inputs were
#: moved by 1e-9 relative all end at 3.8898: within 1.1e-4 standard errors of each other at
#: SciPy's default 1e-8, within 4.4e-7 at 1e-10, which is kept for that margin.
FIT_TOL = 1e-10


def free_parameters(gnames, start: dict, exclude=()):
    """The sub-model's free parameters as :class:`lmfit.Parameters`: starting values and bounds."""
    out = lmfit.Parameters()
    for n in gnames:
        _, lo, hi = initial(n, exclude)
        out.add(n, value=min(max(float(start[n]), lo), hi), min=lo, max=hi)
    return out


def _start_values(init: dict, groups, start) -> dict:
    """Every parameter's value before the fit: the starts, the derived values, ``start``'s.

    Parameters
    ----------
    init : dict
        Free parameter name -> ``(start, low, high)`` (:func:`~cryptoplan.model.calibration.free.initial`).
    groups : sequence of str or None
        The sub-models to fit (None: all).
    start : dict or None
        Name -> value the sub-models not refitted keep.

    Returns
    -------
    dict
        Name -> value; the round-trip parameters NaN (they play no part in the other sub-models).
    """
    # the round-trip model is fitted on its own (see fit) and plays no part in the other
    # sub-models' targets: NaN would show if it did.  With every parameter given, the
    # evaluations depend on no parameter file (model.params.binding).
    values = dict.fromkeys(ROUNDTRIP_PARAMS, math.nan)
    values.update({k: v[0] for k, v in derived_parameters().items()})
    values.update({n: init[n][0] for n in FREE})
    if start:
        # other sub-models keep these values; the ones refitted start from scratch, so a
        # left-out figure cannot leak in through a starting point fitted with it
        values.update({n: float(v) for n, v in start.items()
                       if n in FREE and (groups is None or GROUPS[FREE[n].submodel] not in groups)})
    return values


def _fit_group(group: str, values: dict, init: dict, exclude, max_nfev: int, stderr: bool):
    """Fit one sub-model, the other parameters held at ``values``.

    Least squares first: the basin the figures as a whole point to; then the Cauchy loss
    from there, which lets the figures that contradict the rest go.  Cauchy alone from the
    starts stopped in a basin where it gives up on whole families of figures (AMS group: 15
    misses at loss 78.8 against 4 at 11.8); for TLS it reached 10 misses against 12, but at a
    higher loss (23.2 against 21.4).

    Returns
    -------
    tuple
        ``(names, first, solution)``: the sub-model's parameter names, the least-squares
        :class:`~cryptoplan.model.calibration.leastsq.Solution` and the Cauchy one.
    """
    gnames, tlist, batch = group_batch(group, values, exclude)      # figures' residuals, then priors'
    first, sol = fit_twice(batch, gnames, {n: init[n][0] for n in gnames}, exclude, max_nfev=max_nfev,
                           stderr=stderr, tol=FIT_TOL, noisy=measured(gnames, tlist))
    return gnames, first, sol


def fit_twice(batch, names, start: dict, exclude=(), *, max_nfev: int = 400, stderr: bool = False,
              tol: float | None = FIT_TOL, noisy=None):
    """A sub-model's problem solved as the fit solves it: least squares from ``start``, then
    the robust loss (:data:`~cryptoplan.model.calibration.free.LOSS`) from there.

    The one place the two stages are written: :func:`fit` solves each sub-model with it, and a
    bootstrap refit (:func:`cryptoplan.model.calibration.bootstrap.refits`) repeats it on its
    moved figures from the same starts, since the robust loss has more than one basin and a
    refit must be able to land where a fit of such figures would.

    Parameters
    ----------
    batch : callable
        The residuals, as for :func:`~cryptoplan.model.calibration.leastsq.solve`.
    names : sequence of str
        The free parameters (bounds: :func:`~cryptoplan.model.calibration.free.initial`).
    start : dict
        Name -> starting value of the first stage.
    exclude : sequence of str
        Figures left out (their parameters' bounds may depend on them).
    noisy : array_like of bool, optional
        The residuals that are measurements, for the standard errors
        (:func:`~cryptoplan.model.calibration.scoring.measured`; default all).

    Returns
    -------
    tuple
        ``(first, solution)``: the least-squares and the robust
        :class:`~cryptoplan.model.calibration.leastsq.Solution`.
    """
    first = solve(batch, free_parameters(names, start, exclude), max_nfev=max_nfev, stderr=False, tol=tol)
    sol = solve(batch, free_parameters(names, first.values(), exclude), loss=LOSS, max_nfev=max_nfev,
                stderr=stderr, tol=tol, sigma=TOLERANCE_UNCERTAINTY, noisy=noisy)
    return first, sol


def _fitted_entry(name: str, sol, i: int) -> dict:
    """The parameter-file entry of free parameter ``name``, the ``i``-th of ``sol``."""
    spec = FREE[name]
    why = sol.flag(i)
    note = {"at bound": " (at bound)",
            "not identified": " (not identified by the figures: trades off with others)"}.get(why, "")
    if name in PRIORS:
        note += f"; prior: within a factor {PRIORS[name].factor:g} of {PRIORS[name].basis}"
    return {"value": float(sol.x[i]), "stderr": sol.errors()[name],
            "unit": spec.unit, "submodel": spec.submodel, "description": spec.description,
            "source": "fit" + note}


def _roundtrip_entries(exclude) -> tuple[dict, object]:
    """The round-trip model's parameter-file entries, and its solution."""
    rt = fit_roundtrip(exclude=tuple(exclude))
    params = {}
    for name, (unit, desc) in ROUNDTRIP_PARAMS.items():
        params[name] = {"value": rt["values"][name], "stderr": rt["stderr"][name], "unit": unit,
                        "submodel": "tls", "description": desc,
                        "source": "fit (round-trip table of Sharkey's AT-TLS channels blog, 2021; least squares on log-ratios)"}
    return params, rt["solution"]


def _derived_entries() -> dict:
    """The parameter-file entries of the parameters read from rows (no standard error)."""
    return {name: {"value": float(val), "stderr": None, "unit": unit, "submodel": sub,
                   "description": desc, "source": src}
            for name, (val, src, unit, sub, desc) in derived_parameters().items()}


def fit(exclude=(), max_nfev=400, groups=None, start=None, stderr=True) -> dict:
    """Fit each sub-model's free parameters to its targets, except ``exclude`` (figure ids).

    Sub-models (``GROUPS``) are fitted one after the other with their own
    least-squares problem: crypto + AMS (coupled through throughput), then TLS,
    then the round-trip model (group ``"roundtrip"``, :func:`cryptoplan.model.calibration.roundtrip.fit_roundtrip`).
    ``groups`` limits the fit to those sub-models, the others keeping the
    values in ``start`` (a name -> value dict, e.g. the parameter file's).
    ``stderr=False`` leaves the standard errors out (None), as cross-validation,
    which uses the values only, does.

    Returns
    -------
    dict
        ``{"parameters": {name: {value, stderr, unit, submodel, description, source}},
        "cost": ..., "nfev": ..., "seconds": ...}``
    """
    t0 = time.perf_counter()
    init = {n: initial(n, tuple(exclude)) for n in FREE}
    values = _start_values(init, groups, start)
    params, total_cost, nfev, solutions = {}, 0.0, 0, {}
    for group in dict.fromkeys(GROUPS.values()):
        if groups is not None and group not in groups:
            continue
        gnames, first, sol = _fit_group(group, values, init, exclude, max_nfev, stderr)
        solutions[group] = sol
        values.update(sol.values())
        total_cost += sol.cost
        nfev += first.nfev + sol.nfev
        params.update({name: _fitted_entry(name, sol, i) for i, name in enumerate(gnames)})
    with_roundtrip = groups is None or "roundtrip" in groups
    if with_roundtrip:
        rt_params, solutions["roundtrip"] = _roundtrip_entries(exclude)
        params.update(rt_params)
    params.update(_derived_entries())
    out = {"parameters": params, "cost": total_cost, "nfev": nfev,
           "seconds": time.perf_counter() - t0, "excluded": sorted(exclude), "solutions": solutions}
    if with_roundtrip:
        out["roundtrip_cost"] = roundtrip_cost({k: v["value"] for k, v in params.items()})
    return out
