"""The fit of the channel round-trip model to seed 002's table of measured times.

:func:`cryptoplan.model.zos.tls.tls_roundtrip_us` is the model (one intercept per mode, SSLCIPH
linear in size, AT-TLS with a :math:`KB\\ln(1 + KB)` term); this module fits its five parameters through the one
least-squares path (:mod:`cryptoplan.model.calibration.leastsq`), and
:func:`cryptoplan.model.calibration.fit.fit` stores them in the parameter file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from functools import lru_cache

import numpy as np

from ..figures import figure, table_in_force
from ..params import using_values
from ..zos.tls import ROUNDTRIP_PARAMS, roundtrip_points, tls_roundtrip_us
from .leastsq import solve
from .scoring import TOLERANCE_UNCERTAINTY, Scorer
from ..lazy import lazy_module

# lmfit takes ~0.4 s to import: loaded on first use, as planning calls need not load the optimizer
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import lmfit
else:
    lmfit = lazy_module("lmfit")

__all__ = ["fit_roundtrip"]


def fit_roundtrip(exclude=()) -> dict:
    """Fit (r_S, r_A, a, b, q) to the published round trips; returns values, stderrs and residuals.

    One intercept per mode: with a shared one (before issue 32) AT-TLS's extra time came out
    +6.9% at 2 KB and +11.9% at 64 KB where the table gives +1.24% and +16.32%; with two,
    +0.7% and +13.6%, and the largest residual falls from 3.0% to 2.0% (both with the
    quadratic AT-TLS term of the time; with :math:`KB\\ln(1 + KB)`, +1.1% and +16.9%, largest
    residual 1.6%).

    Least squares (:func:`cryptoplan.model.calibration.leastsq.solve`) on each published time's
    residual as every figure is scored (:class:`~cryptoplan.model.calibration.scoring.Scorer`),
    the log-ratio in units of the tolerance's log width,

    .. math:: r_i = \\frac{\\ln(\\hat y_i / y_i)}{\\ln(1 + \\tau_i)},

    except the figure ids in ``exclude``.  The ten times are one measurement series with
    one tolerance (a measured time of one run: ``data/README.md``, *Tolerances*), so the
    weights are equal and the fit is least squares on the log times.  Cached per figures table, so
    :func:`cryptoplan.model.figures.using_figures` refits it.  :func:`cryptoplan.model.calibration.fit.fit`
    stores the result in the parameter file, which is what :func:`tls_roundtrip_us` reads.

    Returns
    -------
    dict
        ``values`` and ``stderr`` (name -> float), ``residuals`` (figure id -> relative
        error, every published time), ``solution`` (the :class:`~cryptoplan.model.calibration.leastsq.Solution`).
    """
    return _fit_roundtrip(table_in_force(), tuple(sorted(exclude)))


def _roundtrip_times(x, pts) -> np.ndarray:
    """Round trips (k, m) at the points ``pts`` of the parameter sets in the columns of ``x`` (5, k).

    Through :func:`~cryptoplan.model.zos.tls.tls_roundtrip_us` itself, so the model is written
    once; it reads only the five round-trip parameters, all given here (no parameter file)."""
    values = {n: np.asarray(v, dtype=float) for n, v in zip(ROUNDTRIP_PARAMS, x)}
    with using_values(values):
        return np.stack([np.broadcast_to(tls_roundtrip_us(m, figure(fid).conditions["cipher"], kb),
                                         values[next(iter(values))].shape)
                         for m, kb, _, fid in pts], axis=-1)


@lru_cache(maxsize=32)
def _fit_roundtrip(table: str, exclude: tuple) -> dict:
    every = roundtrip_points()
    pts = [p for p in every if p[3] not in exclude]
    score = Scorer([figure(fid) for _, _, _, fid in pts])

    def batch(x):
        return score(_roundtrip_times(x, pts))

    names = tuple(ROUNDTRIP_PARAMS)
    params = lmfit.Parameters()
    for n, x0 in zip(names, (1000.0, 1000.0, 600.0, 600.0, 10.0)):
        params.add(n, value=x0, min=0.0)
    sol = solve(batch, params, sigma=TOLERANCE_UNCERTAINTY)      # a tolerance is a half-width
    rel = _roundtrip_times(sol.x[:, None], every)[0] / np.array([v for _, _, v, _ in every]) - 1.0
    return {"values": sol.values(), "stderr": {n: float(e) for n, e in zip(names, sol.stderr)},
            "residuals": {fid: float(r) for (_, _, _, fid), r in zip(every, rel)}, "solution": sol}
