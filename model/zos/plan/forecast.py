"""A forecast's uncertainty: a workload's rate and yearly growth given as 90% intervals, drawn.

A planner rarely knows next year's rate or growth to a percent.  A workload may give either as a
range, ``rate_range = (lo, hi)`` or ``growth_range = (lo, hi)``, read as the central 90% interval
of what it will be; its point value (``rate``, ``growth_per_year``) is the median, the number the
plan without bands uses.  Given as a range only, the point is the interval's geometric middle,
:math:`\\sqrt{lo \\cdot hi}` for a rate and :math:`\\sqrt{(1 + lo)(1 + hi)} - 1` for a growth.

Each range is drawn as a split (two-piece) lognormal with that median: for a rate :math:`r`
with point :math:`m`,

.. math::

    \\ln r = \\ln m + z\\,\\sigma_\\pm, \\qquad
    \\sigma_- = \\frac{\\ln m - \\ln lo}{z_{0.95}}, \\quad
    \\sigma_+ = \\frac{\\ln hi - \\ln m}{z_{0.95}}

(:math:`\\sigma_-` for :math:`z < 0`), :math:`z` standard normal, :math:`z_{0.95} = 1.6449`; a
growth likewise on :math:`1 + g`, which is positive.  So 5% of draws fall below ``lo``, 5% above
``hi``, half below the point, and a rate never goes negative.  The draws are stratified (Latin
hypercube, [1]_): a workload's ``D`` draws take the normal quantiles of :math:`(k + 1/2)/D`,
``k = 0 .. D-1``, in an order shuffled with a fixed seed, each range independently of the others
and of the model's parameters, so that a band of a forecast alone reproduces the range to the
draws' spacing and every recalculation sees the same draws.

Assumed, and said where bands are printed: the ranges are independent of each other and of the
model's parameters (a growth that is fast for one workload says nothing about another).

References
----------
.. [1] M. D. McKay, R. J. Beckman and W. J. Conover, "A comparison of three methods for
   selecting values of input variables in the analysis of output from a computer code",
   Technometrics 21 (1979), 239-245.
.. [2] K. F. Wallis, "The two-piece normal, binormal, or double Gaussian distribution: its
   origin and rediscoveries", Statistical Science 29 (2014), 106-112.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = ["FORECAST_LEVEL", "FORECAST_SEED", "range_point", "split_lognormal", "forecast_draws",
           "has_forecast", "forecast_text"]

#: The probability a range holds: a 90% central interval.
FORECAST_LEVEL = 0.9

#: The seed of the draws' order (fixed: every cell and recalculation sees the same draws).
FORECAST_SEED = 20261129

_Z = NormalDist().inv_cdf(0.5 + FORECAST_LEVEL / 2.0)      # 1.6449: the 95% normal quantile


def range_point(lo: float, hi: float, offset: float = 0.0) -> float:
    """The geometric middle of ``(lo, hi)`` on ``x + offset``: the median a range alone implies.

    :math:`\\sqrt{(lo + o)(hi + o)} - o`; ``offset`` 0 for a rate, 1 for a growth."""
    return math.sqrt((lo + offset) * (hi + offset)) - offset


def split_lognormal(z, point: float, lo: float, hi: float, offset: float = 0.0) -> np.ndarray:
    """The split lognormal's value at standard normal ``z``: median ``point``, 5% and 95% quantiles
    ``lo`` and ``hi`` (on ``x + offset``, all positive there).

    .. math:: x = (m + o)\\, e^{z \\sigma_\\pm} - o
    """
    z = np.asarray(z, dtype=float)
    m = point + offset
    down = math.log(m / (lo + offset)) / _Z
    up = math.log((hi + offset) / m) / _Z
    return m * np.exp(z * np.where(z < 0.0, down, up)) - offset


def _stratified_z(n: int, rng) -> np.ndarray:
    """``n`` standard normal values at the quantiles :math:`(k + 1/2)/n`, in a shuffled order."""
    from scipy.special import ndtri          # (here: a plan without a range does not load scipy.special)
    return ndtri((rng.permutation(n) + 0.5) / n)


def has_forecast(workloads) -> bool:
    """Whether any workload gives its rate or growth as a range."""
    return any(w.rate_range is not None or w.growth_range is not None for w in workloads)


def forecast_draws(workloads, n: int, seed: int = FORECAST_SEED) -> tuple:
    """``n`` draws of each workload's rate factor and yearly growth.

    Parameters
    ----------
    workloads : sequence of Workload
    n : int
        Draws, >= 1.
    seed : int
        The shuffles' seed (:data:`FORECAST_SEED`).

    Returns
    -------
    (ndarray or None, ndarray or None)
        ``(W, n)`` factors on each workload's point rate (1 where it gives no range), None when no
        workload gives a rate range; ``(W, n)`` yearly growths (the point where no range), None
        when no workload gives a growth range.
    """
    rng = np.random.default_rng(seed)
    rates = np.ones((len(workloads), n))
    growth = np.empty((len(workloads), n))
    for i, w in enumerate(workloads):
        # (two shuffles per workload whatever it gives: one workload's draws do not change when
        # another gains a range)
        z_rate, z_growth = _stratified_z(n, rng), _stratified_z(n, rng)
        if w.rate_range is not None:          # (a range's rate is > 0: Workload checks it)
            lo, hi = w.rate_range
            rates[i] = split_lognormal(z_rate, float(w.rate), lo, hi) / float(w.rate)
        if w.growth_range is not None:
            lo, hi = w.growth_range
            growth[i] = split_lognormal(z_growth, w.growth_per_year, lo, hi, offset=1.0)
        else:
            growth[i] = w.growth_per_year
    any_rate = any(w.rate_range is not None for w in workloads)
    any_growth = any(w.growth_range is not None for w in workloads)
    return (rates if any_rate else None), (growth if any_growth else None)


def forecast_text(workloads) -> str:
    """The ranges given, in words ("payments: rate 250 to 400, growth 25% to 55% a year"), or ""."""
    parts = []
    for w in workloads:
        bits = []
        if w.rate_range is not None:
            bits.append(f"rate {w.rate_range[0]:,.6g} to {w.rate_range[1]:,.6g}")
        if w.growth_range is not None:
            bits.append(f"growth {100 * w.growth_range[0]:.3g}% to {100 * w.growth_range[1]:.3g}% a year")
        if bits:
            parts.append(f"{w.name}: {', '.join(bits)}")
    return "; ".join(parts)
