"""Exact mean value analysis (MVA) of a closed, single-class queueing network.

The measured workloads behind the fitted models are closed loops: a fixed
number of requesters (1 requester, or 40 connections) each wait for their
reply, "think", and send again.  Their throughput is
:math:`X(N) = N / (Z + R(N))`, and :math:`R(N)` needs the queueing at every
station for *N* customers, which MVA gives exactly for product-form networks.

Stations are described by their service demand :math:`D_k` (visits times
service time per visit, per transaction) and number of servers :math:`m_k`:

* :math:`m_k = 1`: FCFS single server (or processor sharing),
* :math:`m_k > 1`: multi-server station, the load-dependent rate
  :math:`\\min(j, m_k)/D_k` handled exactly with marginal probabilities,
* :math:`m_k = \\infty`: delay (infinite-server) station, residence :math:`D_k`.

A think time :math:`Z` is a delay station outside the response time.

Recursion, for :math:`n = 1, \\dots, N` (Reiser and Lavenberg 1980; Bolch et
al. 2006, §8.2, eqs. 8.38-8.41):

.. math::

    R_k(n) &= \\frac{D_k}{m_k}\\Bigl[1 + Q_k(n-1)
              + \\sum_{j=0}^{m_k-2} (m_k - 1 - j)\\, p_k(j \\mid n-1)\\Bigr] \\\\
    X(n)   &= \\frac{n}{Z + \\sum_k R_k(n)}, \\qquad Q_k(n) = X(n) R_k(n) \\\\
    p_k(j \\mid n) &= \\frac{X(n) D_k}{j}\\, p_k(j-1 \\mid n-1), \\quad 1 \\le j \\le m_k - 1 \\\\
    p_k(0 \\mid n) &= p_k(0 \\mid n-1)\\, \\frac{X(n)}{X_{-k}(n)}

where :math:`X_{-k}` is the throughput of the network without station *k*
(Reiser 1981).  The textbook alternative
:math:`p_k(0 \\mid n) = 1 - \\frac{1}{m_k}[X(n) D_k + \\sum_j (m_k - j) p_k(j \\mid n)]`
is a subtraction that loses all accuracy once the station is busy.

References
----------
.. [1] M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", *J. ACM* 27(2), 1980, pp. 313-322.
.. [2] G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks
   and Markov Chains*, 2nd ed., Wiley, 2006, §8.2.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from dataclasses import dataclass

import numpy as np

from .._validate import as_array, as_float_array
from ..domains import DEMAND, MAX_ITERATIONS, MAX_STATIONS, MVA_TOLERANCE, POPULATION, STATIONS, THINK_TIME

__all__ = ["MVAResult", "mva", "mva_throughput", "mva_response", "SchweitzerResult", "mva_schweitzer",
           "mva_work", "MAX_MVA_WORK", "SATURATION_RTOL"]


@dataclass(frozen=True)
class MVAResult:
    """Exact MVA results for populations 1..N.

    Arrays indexed ``[n - 1]`` (population) and, for per-station quantities,
    ``[n - 1, k]`` (station).  Times in the unit of the demands.
    """

    population: np.ndarray       # (N,) 1..N
    throughput: np.ndarray       # (N,) X(n), transactions per time unit
    response: np.ndarray         # (N,) R(n) = sum of residences (excludes think time)
    residence: np.ndarray        # (N, K) R_k(n)
    queue_length: np.ndarray     # (N, K) Q_k(n), mean customers at station k
    utilization: np.ndarray      # (N, K) X(n) D_k / m_k (0 for delay stations)


def _network(population, demands, servers, think_time):
    n_max = POPULATION.check(population)
    if not np.isscalar(n_max):
        raise InputError(f"population must be a single whole number {POPULATION.text()}")
    d = np.atleast_1d(DEMAND.check(demands)).astype(float)
    if d.ndim != 1:
        raise InputError("demands must be a 1-D list of per-station service demands")
    if d.size == 0:
        raise InputError("demands must list at least one station (got an empty list)")
    if servers is None:
        m = np.ones_like(d)
    else:
        m = np.atleast_1d(as_float_array("servers", servers))
        if m.shape != d.shape:
            raise InputError(f"servers must have one entry per station ({d.size}), got {m.size}")
        bad = ~((m >= 1) & ((m == np.floor(m)) | np.isinf(m)))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"servers must be whole numbers >= 1 or inf for a delay station "
                             f"(got {m[i]:g} at index {i})")
    z = THINK_TIME.check(think_time)
    if np.ndim(z) != 0:
        raise InputError(f"think_time must be a single number {THINK_TIME.text()} (got an array of shape "
                         f"{np.shape(z)}): one network has one think time; call mva once per think time")
    # One customer's cycle time is z + sum(d); below ~1e-300 its reciprocal
    # (the throughput) overflows a double, so such input is rejected, not returned as inf.
    if z + d.sum() < 1e-300:
        raise InputError("demands and think_time are all zero or below 1e-300 in sum (got "
                         f"{z + d.sum():g}): a cycle must take some time, or the throughput "
                         "would be infinite")
    return int(n_max), d, m, float(z)


def _unit(d, z) -> float:
    """A power of two near the largest time: dividing by it is exact and keeps MVA's
    products (demand x queue length x population) inside a double for any valid input."""
    return float(np.ldexp(1.0, np.frexp(max(float(d.max()), z))[1] - 1))


def mva(population, demands, servers=None, think_time=0.0) -> MVAResult:
    """Exact MVA for a closed single-class network, for every population 1..N.

    Parameters
    ----------
    population : int
        Number of customers :math:`N \\ge 1` (requesters, connections).
    demands : array_like, shape (K,)
        Service demand per transaction at each station, :math:`D_k \\ge 0`
        (time unit of your choice, e.g. ms).
    servers : array_like, shape (K,), optional
        Servers per station: whole numbers :math:`\\ge 1`, or ``inf`` for a
        delay station. Default: all single-server.
    think_time : float
        Think time :math:`Z \\ge 0` per cycle (same unit as the demands).

    Returns
    -------
    MVAResult
        Throughput, response time, residence times, queue lengths and
        utilizations for every population 1..N.

    Notes
    -----
    Cost is about :math:`N\\, 2^M` recursion steps for :math:`M` multi-server
    stations (:func:`mva_work`): their idle probabilities come from the
    complement networks (see :func:`_mva`), each solved once, which keeps
    load-dependent MVA exact to rounding at any utilization; tests compare
    with the numerically solved Markov chain and the convolution algorithm.
    A network over :data:`MAX_MVA_WORK` steps raises ValueError (use
    :func:`mva_schweitzer`, or fewer multi-server stations or customers).

    Examples
    --------
    >>> r = mva(2, [1.0], think_time=0.0)
    >>> float(r.throughput[-1])   # a single server saturates: X = 1/D
    1.0
    """
    n_max, d, m, z = _network(population, demands, servers, think_time)
    _check_work(n_max, d, m)
    unit = _unit(d, z)
    out_x, out_r, out_q = _mva(n_max, d / unit, m, z / unit)
    delay = np.isinf(m)
    mfin = np.where(delay, 1.0, m)
    util = np.where(delay[None, :], 0.0, out_x[:, None] * (d / unit)[None, :] / mfin[None, :])
    with np.errstate(over="ignore", under="ignore"):
        out_x, out_r = out_x / unit, out_r * unit
    if not (np.isfinite(out_r).all() and np.isfinite(out_r.sum(axis=1)).all()):
        raise InputError(f"the response time at population {n_max} exceeds the largest double "
                         f"(demands up to {d.max():g}, think_time {z:g}): use a larger time unit")
    return MVAResult(population=np.arange(1, n_max + 1), throughput=out_x,
                     response=out_r.sum(axis=1), residence=out_r, queue_length=out_q,
                     utilization=util)


# What one exact MVA call may cost, in recursion steps (each a few NumPy operations on arrays
# of the stations' servers, about 30-60 us on the 2-core machine): 2e5 steps are a few seconds.
# Beyond, a clear error instead of minutes (or a MemoryError).
MAX_MVA_WORK = 2e5


def mva_work(n_max: int, d, m) -> float:
    """Recursion steps exact MVA needs: :math:`N\\, 2^{M} \\max(1, \\sum_k \\min(m_k, N) / 64)`.

    :math:`2^M` networks (the complements, for M multi-server stations), N
    steps each, each step over arrays as wide as the servers.
    """
    d, m = np.asarray(d, float), np.asarray(m, float)
    finite = np.where(np.isinf(m), 1.0, np.minimum(m, n_max))
    multi = int(np.sum((finite > 1.0) & (d > 0.0)))
    if multi > 900:                 # 2.0 ** multi would overflow: more than any budget
        return float("inf")
    return float(n_max) * 2.0 ** multi * max(1.0, float(finite.sum()) / 64.0)


def _check_work(n_max, d, m):
    work = mva_work(n_max, d, m)
    if work > MAX_MVA_WORK:
        multi = int(np.sum((np.where(np.isinf(m), 1.0, m) > 1.0) & (d > 0.0)))
        population = f"{n_max:,}" if n_max < 1e15 else f"{float(n_max):.3g}"
        raise InputError(
            f"exact MVA of this network takes {'about %.2g' % work if np.isfinite(work) else 'more than 1e300'} "
            f"recursion steps (population {population}, "
            f"{multi} multi-server stations: 2^{multi} networks), over the {MAX_MVA_WORK:.0e} one call "
            "may take: lower the population or the number of multi-server stations, or use "
            "mva_schweitzer")


def _mva(n_max, d, m, z, _cache=None):
    """The MVA recursion on validated input: X(n), R_k(n), Q_k(n) for n = 1..n_max.

    The idle probability of a multi-server station is *not* taken from
    :math:`p_k(0 \\mid n) = 1 - \\frac{1}{m_k}[\\dots]` (a subtraction that
    loses all accuracy once the station is busy: 60% error in X at N = 160,
    m = 16), but from the complement network (station k removed, Reiser 1981),

    .. math:: p_k(0 \\mid n) = \\frac{G_{-k}(n)}{G(n)}
              = p_k(0 \\mid n-1)\\, \\frac{X(n)}{X_{-k}(n)},

    a product of positive terms.  The complement networks are solved once
    each (memoized by the set of stations removed): :math:`2^M` recursions for
    M multi-server stations, not :math:`M!`.
    """
    if _cache is None:
        _cache = {}
    key = (n_max, d.tobytes(), m.tobytes(), z)
    if key in _cache:
        return _cache[key]
    k = d.size
    delay = np.isinf(m)
    mfin = np.where(delay, 1.0, m)
    multi = (mfin > 1.0) & (d > 0.0)
    # Throughput of each complement network, or None if it takes no time
    # (then every customer is at station k: p_k(0 | n) = 0 for n >= 1).
    x_comp = np.ones((n_max, k))
    for i in np.flatnonzero(multi):
        keep = np.arange(k) != i
        # Same floor as _network: a complement cycle shorter than 1e-300 has a
        # throughput beyond double range, i.e. it "takes no time".
        if z + d[keep].sum() >= 1e-300:
            x_comp[:, i] = _mva(n_max, d[keep], m[keep], z, _cache)[0]
        else:
            x_comp[:, i] = np.inf
    width = int(min(mfin.max(initial=1.0), n_max + 1))  # marginal probabilities p_k(j), j < width
    j_idx = np.arange(width)
    # p[k, j] = p_k(j | n-1); multi-server stations only use j <= m_k - 1 (and j <= n).
    p = np.zeros((k, width))
    p[:, 0] = 1.0
    in_range = j_idx[None, :] <= (mfin[:, None] - 1.0)
    # weights (m_k - 1 - j) for j in 0..m_k-2
    w_corr = np.where(j_idx[None, :] <= mfin[:, None] - 2.0, mfin[:, None] - 1.0 - j_idx[None, :], 0.0)
    inv_j = np.where(j_idx >= 1, 1.0 / np.maximum(j_idx, 1), 0.0)

    q = np.zeros(k)
    out_x = np.empty(n_max)
    out_r = np.empty((n_max, k))
    out_q = np.empty((n_max, k))
    for n in range(1, n_max + 1):
        rk = d / mfin * (1.0 + q + (w_corr * p).sum(axis=1))
        rk = np.where(delay, d, rk)
        x = n / (z + rk.sum())
        q = x * rk
        xd = x * d
        new = np.zeros_like(p)
        new[:, 1:] = (xd[:, None] * inv_j[None, 1:]) * p[:, :-1]
        new = np.where(in_range, new, 0.0)
        new[:, 0] = np.where(multi, p[:, 0] * (x / x_comp[n - 1]), 1.0)
        p = new
        out_x[n - 1], out_r[n - 1], out_q[n - 1] = x, rk, q
    _cache[key] = (out_x, out_r, out_q)
    return out_x, out_r, out_q


def mva_throughput(population, demands, servers=None, think_time=0.0) -> float:
    """Throughput :math:`X(N)` of the closed network at population N. See :func:`mva`.

    Beyond saturation :math:`X(n)` only creeps towards its bound
    :math:`\\min_k m_k / D_k`: the recursion runs to populations 256, 1024, ...
    and stops once X is within :data:`SATURATION_RTOL` (1e-12, relative) of
    the bound, so a million requesters cost what a few hundred do.
    """
    n_max, d, m, z = _network(population, demands, servers, think_time)
    unit = _unit(d, z)
    d, z = d / unit, z / unit   # exact (a power of two); the throughput is per unit
    busy = (d > 0) & ~np.isinf(m)
    with np.errstate(over="ignore"):   # a demand below ~1e-308 of the largest: never the bound
        xmax = float(np.min(m[busy] / d[busy])) if busy.any() else np.inf
    k = min(n_max, 256)
    while True:
        _check_work(k, d, m)
        x = float(_mva(k, d, m, z)[0][-1])
        if k == n_max or x >= xmax * (1.0 - SATURATION_RTOL):
            with np.errstate(under="ignore"):
                return x / unit
        k = min(n_max, 4 * k)


SATURATION_RTOL = 1e-12


def mva_response(population, demands, servers=None, think_time=0.0) -> float:
    """Response time :math:`R(N) = N / X(N) - Z` at population N. See :func:`mva`."""
    return float(mva(population, demands, servers, think_time).response[-1])


@dataclass(frozen=True)
class SchweitzerResult:
    """Approximate multi-class MVA results (Bard-Schweitzer), at the given populations.

    Per-class arrays are indexed ``[c]``; per-visit arrays ``[c, v]`` follow the
    ``station`` / ``demand`` layout given to :func:`mva_schweitzer`; per-station
    arrays ``[k]``.  Times in the unit of the demands.
    """

    throughput: np.ndarray       # (C,) X_c
    response: np.ndarray         # (C,) R_c = sum of the class's residences (excludes think time)
    residence: np.ndarray        # (C, V) residence per visit
    utilization: np.ndarray      # (K,) sum_c X_c D_ck
    queue_length: np.ndarray     # (K,) mean customers at each station, all classes
    iterations: int


def _schweitzer_inputs(populations, station, demand, think_time, stations, tol, max_iter) -> tuple:
    """:func:`mva_schweitzer`'s arguments checked and shaped: (populations (C,), demands (C, V),
    station indices (C, V), number of stations, think times (C,), iteration limit)."""
    n = np.atleast_1d(POPULATION.check(populations, "populations")).astype(float)
    if n.ndim != 1:
        raise InputError(f"populations must be a 1-D list, one whole number per class (got shape {n.shape})")
    d = np.atleast_2d(DEMAND.check(demand, "demand")).astype(float)
    s = np.atleast_2d(as_array("station", station))
    if d.ndim != 2 or d.shape != s.shape or d.shape[0] != n.size:
        raise InputError(f"station and demand must both have shape (classes, visits) = ({n.size}, V); "
                         f"got {s.shape} and {d.shape}")
    if s.size and (not np.issubdtype(s.dtype, np.integer) or s.min() < 0):
        raise InputError("station must hold whole-number station indices >= 0")
    s = s.astype(np.int64)
    if stations is None:
        k = int(s.max(initial=-1)) + 1
        if k > MAX_STATIONS:
            raise InputError(f"station indices must be below {MAX_STATIONS:.0f} (got {k - 1}): number the "
                             "stations densely")
    else:
        k = int(STATIONS.check(stations, scalar=True))
    if s.size and s.max() >= k:
        raise InputError(f"station indices must be below stations={k} (got {int(s.max())})")
    z = np.asarray(THINK_TIME.check(think_time), dtype=float)
    if z.ndim > 1 or (z.ndim == 1 and z.size != n.size):
        raise InputError(f"think_time must be one number or one per class ({n.size}), got shape {z.shape}")
    z = np.broadcast_to(z, n.shape)
    MVA_TOLERANCE.check(tol, scalar=True)
    max_iter = int(MAX_ITERATIONS.check(max_iter, scalar=True))
    if np.any(z + d.sum(axis=1) < 1e-300):
        raise InputError("every class needs a cycle that takes some time: demands and think_time "
                         "sum to 0 for at least one class")
    return n, d, s, k, z, max_iter


def mva_schweitzer(populations, station, demand, think_time=0.0, stations=None, *,
                   tol=1e-10, max_iter=100_000) -> SchweitzerResult:
    """Approximate MVA of a closed multi-class network of single-server stations.

    Exact multi-class MVA needs every population vector below the target, a
    cost exponential in the number of classes; MQ channels (a class each,
    thousands of them) need the Bard-Schweitzer approximation instead: a
    customer of class *c* arriving at station *k* sees the full-population
    queue less its own share,

    .. math::

        R_{ck} &= D_{ck}\\Bigl[1 + Q_k - \\frac{Q_{ck}}{N_c}\\Bigr], \\qquad
        X_c = \\frac{N_c}{Z_c + \\sum_k R_{ck}}, \\qquad
        Q_{ck} = X_c R_{ck}, \\quad Q_k = \\sum_c Q_{ck},

    iterated to a fixed point.  With one customer per class and classes that
    share no station it is exact; elsewhere its throughput errors are
    typically a few percent (Lazowska et al. 1984, §7.4.2.2), which the tests
    measure against exact multi-class MVA.

    Parameters
    ----------
    populations : array_like, shape (C,)
        Customers of each class, :math:`N_c \\ge 1`, whole numbers.
    station : array_like of int, shape (C, V)
        Station index of each of the class's visits (a class may visit a
        station more than once: its demands there add).
    demand : array_like, shape (C, V)
        Service demand of each visit, :math:`\\ge 0` (e.g. µs per transaction).
    think_time : float or array_like, shape (C,)
        Delay per cycle outside the stations, :math:`Z_c \\ge 0`.
    stations : int, optional
        Number of stations :math:`K` (default: the largest index + 1).
    tol : float
        Stop when no class throughput changes by more than this fraction in
        one sweep, > 0 (a step-size rule: at very large populations the
        distance to the fixed point can be larger than the last step).
    max_iter : int
        Sweeps before giving up, >= 1.

    Returns
    -------
    SchweitzerResult

    Raises
    ------
    RuntimeError
        If the iteration has not converged after ``max_iter`` sweeps.

    References
    ----------
    .. [1] P. J. Schweitzer, "Approximate analysis of multiclass closed
       networks of queues", Proc. Int. Conf. on Stochastic Control and
       Optimization, Amsterdam, 1979.
    .. [2] Y. Bard, "Some extensions to multiclass queueing network analysis",
       Proc. 4th Int. Symp. on Modelling and Performance Evaluation of
       Computer Systems, 1979.
    .. [3] E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik,
       *Quantitative System Performance*, Prentice-Hall, 1984, §7.4.
    """
    n, d, s, k, z, max_iter = _schweitzer_inputs(populations, station, demand, think_time, stations, tol, max_iter)
    # same[c, v, w]: visits v and w of class c are at the same station.
    same = s[:, :, None] == s[:, None, :]
    flat = s.ravel()
    x = n / (z + d.sum(axis=1))
    r = d.copy()
    for it in range(1, max_iter + 1):
        qv = x[:, None] * r                                   # (C, V) this class's queue, per visit
        qk = np.bincount(flat, weights=qv.ravel(), minlength=k)
        own = np.einsum("cvw,cw->cv", same, qv)               # class c's customers at that station
        r = d * (1.0 + qk[s] - own / n[:, None])
        x_new = n / (z + r.sum(axis=1))
        done = np.max(np.abs(x_new - x) / x_new) <= tol
        x = x_new
        if done:
            break
    else:
        raise RuntimeError(f"Bard-Schweitzer MVA did not converge in {max_iter} iterations")
    qv = x[:, None] * r
    util = np.bincount(flat, weights=(x[:, None] * d).ravel(), minlength=k)
    return SchweitzerResult(throughput=x, response=r.sum(axis=1), residence=r, utilization=util,
                            queue_length=np.bincount(flat, weights=qv.ravel(), minlength=k),
                            iterations=it)
