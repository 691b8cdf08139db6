"""A pool of servers as every planning model sees it: utilization, counts needed, the request mix
and the pooled wait.  One formula each, used by the single-workload plan
(:func:`~cryptoplan.model.zos.ams.ams_plan`) and the whole-system plan
(:func:`~cryptoplan.model.zos.plan.plan`).

A pool of :math:`k` servers (general processors, or Crypto Express cards of one mode) carries
this LPAR's load :math:`L` (servers' worth: requests per second times the mean service time) and
other LPARs keep each server busy a share :math:`u_o` (RMF's view from the other LPARs):

.. math::

    U = L / k + u_o, \\qquad
    k_{req} = \\min\\{k \\ge 1 : L / k + u_o \\le U_{max}\\}, \\qquad
    k_{fail} = \\min\\{k \\ge 2 : (L + u_o k)/(k - 1) \\le F\\}

Requests of several classes (card functions, workloads) with constant service times :math:`t_j`
at rates :math:`r_j` form one FCFS stream whose service time has mean and squared coefficient
of variation

.. math:: \\bar s = \\frac{\\sum_j r_j t_j}{\\sum_j r_j}, \\qquad
          c_s^2 = \\frac{\\sum_j r_j t_j^2 \\, \\sum_j r_j}{(\\sum_j r_j t_j)^2} - 1

and the wait of one request is M/G/c (:func:`~cryptoplan.model.queueing.mgc.mgc_wait_by_scv`)
on that stream plus other LPARs' requests, taken at the same mean service time so that their
utilization is :math:`u_o`: :math:`\\lambda_{tot} = \\lambda + (B + u_o k)/\\bar s`, with
:math:`B` cards' worth of load that comes with no request count (a measured utilization).

References
----------
.. [1] H. C. Tijms, *A First Course in Stochastic Models*, Wiley, 2003, §5.2 (two-moment
   approximations for M/G/c).
"""

from __future__ import annotations

import numpy as np

from .._numeric import ratio
from ..queueing.mgc import mgc_wait_by_scv

__all__ = ["count_needed", "failover_count_needed", "request_mix", "mix_from_moments", "pooled_wait"]


def count_needed(load, other, target):
    """Smallest whole :math:`k \\ge 1` with :math:`L/k + u_o \\le U_{max}`; 0 where there is no load.

    Parameters
    ----------
    load : array_like
        This LPAR's load, servers' worth (>= 0).
    other : array_like
        Share of each server other LPARs keep busy, [0, 1).
    target : array_like
        The utilization target, (0, 1); NaN where no count meets it (``other >= target``).

    Returns
    -------
    ndarray of float
        Counts (floats: a load too large for any LPAR stays a number, never an overflowed integer).
    """
    room = np.asarray(target, dtype=float) - other
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = np.ceil(load / np.where(room > 0, room, np.nan) - 1e-12)
    return np.where(np.asarray(load) > 0, np.maximum(k, 1.0), 0.0)


def failover_count_needed(load, other, limit):
    """Smallest whole :math:`k \\ge 2` with :math:`(L + u_o k)/(k - 1) \\le F`: the pool survives one
    server failing; 0 where there is no load.

    .. math:: k = \\max\\left(2, \\left\\lceil \\frac{L + F}{F - u_o} \\right\\rceil\\right)
    """
    room = np.asarray(limit, dtype=float) - other
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        k = np.ceil((load + limit) / np.where(room > 0, room, np.nan) - 1e-12)
    return np.where(np.asarray(load) > 0, np.maximum(k, 2.0), 0.0)


def request_mix(rates, times, axis=0) -> tuple:
    """(requests per second, mean service time, SCV) of a mixture of constant-time classes.

    Parameters
    ----------
    rates : array_like
        Requests per second of each class (along ``axis``), >= 0.
    times : array_like
        Each class's service time (any unit; the mean comes back in it), broadcast with ``rates``.
    axis : int
        The class axis.

    Returns
    -------
    tuple of ndarray
        ``(r, s, scv)``: total rate, rate-weighted mean time and the squared coefficient of
        variation of the time (0 where there are no requests).
    """
    r = np.sum(rates, axis=axis)
    return (r, *mix_from_moments(r, np.sum(rates * times, axis=axis), np.sum(rates * times * times, axis=axis)))


def mix_from_moments(rate, first, second) -> tuple:
    r"""(mean, SCV) of a mixture's service time from :math:`\sum r_j`, :math:`\sum r_j t_j` and
    :math:`\sum r_j t_j^2` (0 where there are no requests)."""
    s = ratio(first, rate)                           # moments per request
    s2 = ratio(second, rate)
    scv = np.where(s > 0, np.maximum(ratio(s2, s * s) - 1.0, 0.0), 0.0)
    return s, scv


def pooled_wait(rate, mean_s, scv, servers, other, unknown=0.0):
    """Mean queueing of one request (in ``mean_s``'s unit) in a pool shared with other LPARs.

    Parameters
    ----------
    rate : array_like
        This LPAR's requests per second.
    mean_s : array_like
        Their mean service time, seconds.
    scv : array_like
        Its squared coefficient of variation.
    servers : array_like
        Servers of the pool, >= 1.
    other : array_like
        Share of each server other LPARs keep busy: their requests are added at ``mean_s``.
    unknown : array_like
        Servers' worth of load with no request count (a measured utilization), added likewise.

    Returns
    -------
    ndarray
        Seconds; the caller keeps the queue stable (utilization below 1).
    """
    total = rate + ratio(unknown + other * servers, mean_s)
    return mgc_wait_by_scv(total, mean_s, servers, scv)
