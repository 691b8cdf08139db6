"""M/M/c: Poisson arrivals, exponential service, ``c`` identical servers, FCFS.

All functions take the arrival rate :math:`\\lambda` and the mean service time
:math:`s` in *consistent* units (e.g. per second and seconds; or per
millisecond and milliseconds): every time they return is in the unit of
``service_time``.  Offered traffic is :math:`A = \\lambda s` erlangs and the
per-server utilization is :math:`\\rho = A / c`, which must be below 1.

Formulas (Kleinrock 1975, §3.5; Gross et al. 2008, §2.3) with
:math:`C = C(A, c)` the Erlang C probability of waiting:

.. math::

    W_q = \\frac{C\\, s}{c - A}, \\quad
    P(W_q > t) = C\\, e^{-(c - A) t / s}, \\quad
    L_q = \\lambda W_q, \\quad R = W_q + s, \\quad L = \\lambda R.

References
----------
.. [1] L. Kleinrock, *Queueing Systems, Volume 1: Theory*, Wiley, 1975.
.. [2] D. Gross, J. F. Shortle, J. M. Thompson, C. M. Harris,
   *Fundamentals of Queueing Theory*, 4th ed., Wiley, 2008, §2.3
   (response-time distribution of M/M/c, eq. 2.39).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from dataclasses import dataclass

import numpy as np

from .._validate import broadcast, check_stable, is_scalar
from ..domains import (ARRIVAL_RATE, MAX_PERCENTILE_WAIT, MAX_SERVER_UTILIZATION, MAX_WAIT, PERCENTILE, SERVERS,
                       SERVICE_TIME, WAIT_TIME)
from ._erlang_kernels import erlang_b_array, erlang_b_scalar, erlang_c_from_b

__all__ = [
    "MMCMetrics", "mmc_metrics", "mmc_utilization", "mmc_wait_probability",
    "mmc_wait", "mmc_response", "mmc_queue_length", "mmc_number_in_system",
    "mmc_wait_exceeds", "mmc_wait_percentile", "mmc_response_percentile",
    "mmc_servers",
]

# Largest server count mmc_servers will consider before declaring a target unreachable.
MAX_SERVERS = 10_000_000


def mmc_args(arrival_rate, service_time, servers):
    """Validate the three M/M/c arguments; return (lam, s, c, A) and check stability."""
    lam = ARRIVAL_RATE.check(arrival_rate)
    s = SERVICE_TIME.check(service_time)
    c = SERVERS.check(servers)
    if not is_scalar(lam, s, c):
        lam, s, c = broadcast(arrival_rate=np.asarray(lam, float), service_time=np.asarray(s, float),
                              servers=np.asarray(c, float))
    with np.errstate(over="ignore"):      # an overflowing load is unstable: check_stable says so
        a = lam * s
        u = a / c
    check_stable(u, what="utilization (arrival_rate * service_time / servers)")
    return lam, s, c, a


_TARGET_ARGS = {"u": "max_utilization", "w": "max_wait", "p": "wait_percentile", "t": "max_percentile_wait"}


def erlang_c_stable(a, c):
    """Erlang C for already validated, stable arguments."""
    if is_scalar(a, c):
        return erlang_c_from_b(erlang_b_scalar(a, c), a, c)
    return erlang_c_from_b(erlang_b_array(a, c), a, c)


def unwrap(x):
    """A 0-d array as its scalar; anything else unchanged."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


@dataclass(frozen=True)
class MMCMetrics:
    """Steady-state M/M/c metrics (times in the unit of ``service_time``)."""

    servers: np.ndarray | float
    traffic: np.ndarray | float
    utilization: np.ndarray | float
    wait_probability: np.ndarray | float
    mean_wait: np.ndarray | float
    mean_response: np.ndarray | float
    queue_length: np.ndarray | float
    number_in_system: np.ndarray | float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def mmc_metrics(arrival_rate, service_time, servers) -> MMCMetrics:
    """All mean-value M/M/c metrics in one call.

    Parameters
    ----------
    arrival_rate : float or array_like
        :math:`\\lambda`, arrivals per time unit, ``>= 0``.
    service_time : float or array_like
        Mean service time :math:`s`, ``> 0``.
    servers : float or array_like
        :math:`c`, ``1 <= c <= 1e12`` (real values use Erlang C's continuation).

    Returns
    -------
    MMCMetrics
        Utilization :math:`\\rho = \\lambda s / c`, :math:`P(W>0) = C(A, c)`,
        :math:`W_q`, :math:`R = W_q + s`, :math:`L_q = \\lambda W_q`,
        :math:`L = \\lambda R`.

    Raises
    ------
    UnstableQueueError
        If :math:`\\lambda s \\ge c`.
    """
    lam, s, c, a = mmc_args(arrival_rate, service_time, servers)
    pw = erlang_c_stable(a, c)
    wq = pw * s / (c - a)
    r = wq + s
    return MMCMetrics(servers=unwrap(c), traffic=unwrap(a), utilization=unwrap(a / c),
                      wait_probability=unwrap(pw), mean_wait=unwrap(wq), mean_response=unwrap(r),
                      queue_length=unwrap(lam * wq), number_in_system=unwrap(lam * r))


def mmc_utilization(arrival_rate, service_time, servers):
    """Per-server utilization :math:`\\rho = \\lambda s / c`, in [0, 1).

    Raises :class:`UnstableQueueError` at or above 1 (an open queue with
    :math:`\\rho \\ge 1` has no steady state). See :func:`mmc_metrics`.
    """
    _, _, c, a = mmc_args(arrival_rate, service_time, servers)
    return unwrap(a / c)


def mmc_wait_probability(arrival_rate, service_time, servers):
    """Probability that a request waits, :math:`C(\\lambda s, c)`. See :func:`mmc_metrics`."""
    _, _, c, a = mmc_args(arrival_rate, service_time, servers)
    return unwrap(erlang_c_stable(a, c))


def mmc_wait(arrival_rate, service_time, servers):
    """Mean time in queue :math:`W_q = C s / (c - \\lambda s)` (unit of ``service_time``).

    Arguments as :func:`mmc_metrics`.

    Examples
    --------
    >>> round(mmc_wait(1.0, 0.5, 1), 12)   # M/M/1: rho s / (1 - rho)
    0.5
    """
    _, s, c, a = mmc_args(arrival_rate, service_time, servers)
    return unwrap(erlang_c_stable(a, c) * s / (c - a))


def mmc_response(arrival_rate, service_time, servers):
    """Mean response time :math:`R = W_q + s`. See :func:`mmc_metrics`."""
    _, s, c, a = mmc_args(arrival_rate, service_time, servers)
    return unwrap(erlang_c_stable(a, c) * s / (c - a) + s)


def mmc_queue_length(arrival_rate, service_time, servers):
    """Mean number waiting :math:`L_q = \\lambda W_q` (Little's law)."""
    lam, s, c, a = mmc_args(arrival_rate, service_time, servers)
    return unwrap(lam * erlang_c_stable(a, c) * s / (c - a))


def mmc_number_in_system(arrival_rate, service_time, servers):
    """Mean number in system :math:`L = \\lambda R = L_q + A`."""
    lam, s, c, a = mmc_args(arrival_rate, service_time, servers)
    return unwrap(lam * (erlang_c_stable(a, c) * s / (c - a) + s))


def mmc_wait_exceeds(arrival_rate, service_time, servers, t):
    """Probability that the wait in queue exceeds ``t``: :math:`C e^{-(c-A) t / s}`.

    ``t >= 0`` in the unit of ``service_time``.
    """
    _, s, c, a = mmc_args(arrival_rate, service_time, servers)
    t = WAIT_TIME.check(t)
    return unwrap(erlang_c_stable(a, c) * np.exp(-(c - a) * np.asarray(t) / s))


def mmc_wait_percentile(arrival_rate, service_time, servers, p):
    """The ``p``-quantile of the wait in queue.

    .. math::

        W_{(p)} = \\max\\Bigl(0, \\frac{s}{c - A} \\ln \\frac{C}{1 - p}\\Bigr)

    Parameters
    ----------
    p : float or array_like
        Probability in (0, 1), e.g. 0.95 for the 95th percentile.
    Other parameters as :func:`mmc_metrics`.

    Returns
    -------
    float or ndarray
        Zero when :math:`1 - C \\ge p` (at least a fraction ``p`` do not wait).
    """
    _, s, c, a = mmc_args(arrival_rate, service_time, servers)
    p = PERCENTILE.check(p)
    pw = erlang_c_stable(a, c)
    q = 1.0 - np.asarray(p)
    waits = np.asarray(pw) > q            # otherwise at least a fraction p do not wait: 0
    with np.errstate(divide="ignore", invalid="ignore"):
        w = s / (c - a) * np.log(np.divide(pw, q))
    return unwrap(np.where(waits, np.maximum(w, 0.0), 0.0))


def _response_sf(x, pw, k):
    """P(R > x s) for M/M/c; x in service times, k = c - 1 - A (Gross et al. eq. 2.39)."""
    # e^{-x} (1 - e^{-kx}) / k rewritten as e^{-min(1, 1+k) x} (1 - e^{-|k| x}) / |k|:
    # every exponent is <= 0 (k > -1 because A < c), so nothing overflows when
    # k < 0 and x is large (utilization near 1).
    ak = np.abs(k)
    g = np.where(k == 0.0, x, -np.expm1(-ak * x) / np.where(k == 0.0, 1.0, ak))
    return np.exp(-x) + pw * np.exp(-np.minimum(1.0, 1.0 + k) * x) * g


def mmc_response_percentile(arrival_rate, service_time, servers, p):
    """The ``p``-quantile of the response time (wait plus service).

    Solves :math:`P(R > t) = 1 - p` with

    .. math::

        P(R > t) = e^{-\\mu t}\\Bigl[1 + C\\,
            \\frac{1 - e^{-\\mu t (c - 1 - A)}}{c - 1 - A}\\Bigr]

    (the bracketed fraction tends to :math:`\\mu t` as :math:`c - 1 - A \\to 0`),
    by bisection to full double precision, vectorized.

    Parameters
    ----------
    p : float or array_like
        Probability in (0, 1).
    """
    _, s, c, a = mmc_args(arrival_rate, service_time, servers)
    p = PERCENTILE.check(p)
    pw = np.asarray(erlang_c_stable(a, c), float)
    a, c, s, p = broadcast(traffic=np.asarray(a, float), servers=np.asarray(c, float),
                           service_time=np.asarray(s, float), p=np.asarray(p, float))
    pw = np.broadcast_to(pw, a.shape)
    q = 1.0 - p
    k = c - 1.0 - a
    # Bracket (in units of s): R >= S gives lo; R > x needs W > x/2 or S > x/2.
    lo = -np.log(q)
    hi = 2.0 * np.log((1.0 + pw) / q) / np.minimum(1.0, c - a)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = _response_sf(mid, pw, k) > q
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return unwrap(0.5 * (lo + hi) * s)


def _smallest_feasible(start, feasible):
    """Per element, the smallest integer :math:`c \\ge` ``start`` with ``feasible(c, idx)`` true.

    ``feasible`` is monotone in :math:`c` (false then true); ``start - 1`` is known infeasible.
    Doubles until feasible (bracketing), then bisects on the integers, evaluating only the
    elements still open at each step.
    """
    everything = np.arange(start.size)
    good = start.copy()
    bad = good - 1.0                     # known infeasible (unstable or zero)
    pending = ~feasible(good, everything)
    while pending.any():                 # grow by doubling until feasible
        idx = everything[pending]
        bad[idx] = good[idx]
        good[idx] = np.maximum(2.0 * good[idx], good[idx] + 1.0)
        if (good[idx] > MAX_SERVERS).any():
            raise InputError(f"the targets need more than {MAX_SERVERS:,} servers; "
                             "check the units of max_wait and service_time")
        pending[idx] = ~feasible(good[idx], idx)
    gap = good - bad > 1.0               # bisect on integers: bad infeasible, good feasible
    while gap.any():
        idx = everything[gap]
        mid = np.floor(0.5 * (good[idx] + bad[idx]))
        ok = feasible(mid, idx)
        good[idx[ok]] = mid[ok]
        bad[idx[~ok]] = mid[~ok]
        gap = good - bad > 1.0
    return good


def mmc_servers(arrival_rate, service_time, max_utilization=None, max_wait=None,
                wait_percentile=None, max_percentile_wait=None, *, full_output=False):
    """Smallest integer number of servers that meets every target given.

    Parameters
    ----------
    arrival_rate : float or array_like
        :math:`\\lambda`, ``>= 0``.
    service_time : float or array_like
        Mean service time :math:`s`, ``> 0``.
    max_utilization : float or array_like, optional
        Upper limit on :math:`\\rho = \\lambda s / c`, in (0, 1].
    max_wait : float or array_like, optional
        Upper limit on the mean wait :math:`W_q`, ``> 0`` (unit of ``service_time``).
    wait_percentile, max_percentile_wait : float or array_like, optional
        Together: the ``wait_percentile`` quantile of the wait (a probability in
        (0, 1)) must not exceed ``max_percentile_wait`` (``>= 0``), i.e.
        :math:`P(W_q > t) \\le 1 - p`.  Give both or neither.
    full_output : bool
        Also return the exact :class:`MMCMetrics` at the returned count.

    Returns
    -------
    int or ndarray of int64
        The minimal :math:`c` (always at least :math:`\\lfloor A \\rfloor + 1`,
        the smallest stable count).  With ``full_output``, a tuple
        ``(servers, MMCMetrics)``.

    Notes
    -----
    Every constraint is monotone in :math:`c`, so the search brackets the
    answer by doubling from the stability bound and bisects on the integers,
    evaluating the exact Erlang C formulas (no approximation) at each step,
    vectorized over all elements.

    Raises
    ------
    ValueError
        For out-of-range arguments, or a target that needs more than
        ``MAX_SERVERS`` servers.
    """
    lam = ARRIVAL_RATE.check(arrival_rate)
    s = SERVICE_TIME.check(service_time)
    targets = {}
    if max_utilization is not None:
        targets["u"] = MAX_SERVER_UTILIZATION.check(max_utilization)
    if max_wait is not None:
        targets["w"] = MAX_WAIT.check(max_wait)
    if (wait_percentile is None) != (max_percentile_wait is None):
        raise InputError("wait_percentile and max_percentile_wait go together: give both or neither")
    if wait_percentile is not None:
        targets["p"] = PERCENTILE.check(wait_percentile, "wait_percentile")
        targets["t"] = MAX_PERCENTILE_WAIT.check(max_percentile_wait)
    arrays = broadcast(arrival_rate=np.asarray(lam, float), service_time=np.asarray(s, float),
                       **{_TARGET_ARGS[k]: np.asarray(v, float) for k, v in targets.items()})
    shape = arrays[0].shape
    lam_a, s_a = arrays[0], arrays[1]
    a = (lam_a * s_a).reshape(-1)
    sf = s_a.reshape(-1)
    tg = {key: v.reshape(-1) for key, v in zip(targets, arrays[2:])}

    def feasible(c, idx):
        aa, cc, ss = a[idx], c, sf[idx]
        ok = aa < cc
        if "u" in tg:
            ok &= aa / cc <= tg["u"][idx]
        if "w" in tg or "p" in tg:
            safe = np.where(ok, cc, aa + 1.0)
            pw = erlang_c_from_b(erlang_b_array(aa, safe), aa, safe)
            if "w" in tg:
                ok &= pw * ss / (safe - aa) <= tg["w"][idx]
            if "p" in tg:
                ok &= pw * np.exp(-(safe - aa) * tg["t"][idx] / ss) <= 1.0 - tg["p"][idx]
        return ok

    if (np.floor(a) + 1.0 > MAX_SERVERS).any():     # before the doubling, which would overflow at 1e308
        raise InputError(f"the targets need more than {MAX_SERVERS:,} servers: the offered load arrival_rate x "
                         f"service_time is {float(a.max()):g} erlangs; check the units of arrival_rate and "
                         "service_time")
    good = _smallest_feasible(np.floor(a) + 1.0, feasible)
    n = good.reshape(shape).astype(np.int64)
    result = int(n) if n.ndim == 0 else n
    if full_output:
        return result, mmc_metrics(lam_a if n.ndim else float(lam_a), s_a if n.ndim else float(s_a),
                                   n.astype(float) if n.ndim else float(n))
    return result
