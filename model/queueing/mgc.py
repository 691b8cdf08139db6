"""M/G/c and G/G/c mean waiting time: two-moment approximations.

Crypto Express operations take nearly constant time (squared coefficient of
variation of service near 0), so M/M/c overstates queueing on the cards by
about a factor of two.  Two published approximations are offered, and every
result says which was used through the ``method`` argument:

``"allen-cunneen"`` (G/G/c, any arrival and service variability)
    .. math:: W_q \\approx W_q^{M/M/c}\\, \\frac{c_a^2 + c_s^2}{2}

    A. O. Allen, *Probability, Statistics, and Queueing Theory*, 2nd ed.,
    Academic Press, 1990, §6.4 (eq. 6.93); exact for M/M/c and M/G/1.

``"cosmetatos"`` (M/G/c, Poisson arrivals, :math:`0 \\le c_s^2 \\le 1`)
    Cosmetatos's correction for deterministic service, interpolated in
    :math:`c_s^2` between M/D/c and M/M/c:

    .. math::

        W_q^{M/D/c} \\approx \\tfrac12 W_q^{M/M/c}\\Bigl[1 + (1 - \\rho)(c - 1)
            \\frac{\\sqrt{4 + 5c} - 2}{16\\, \\rho\\, c}\\Bigr], \\qquad
        W_q \\approx c_s^2\\, W_q^{M/M/c} + (1 - c_s^2)\\, W_q^{M/D/c}

    G. P. Cosmetatos, "Some approximate equilibrium results for the
    multi-server queue (M/G/r)", *Operational Research Quarterly* 27(3),
    1976, pp. 615-620; H. C. Tijms, *A First Course in Stochastic Models*,
    Wiley, 2003, §5.2.

The error of both against simulation (Ciw) is measured in
``tests/test_mgc.py`` (slow tier) and reported in the README.
"""

from __future__ import annotations

import numpy as np

from .._validate import is_scalar
from ..domains import ARRIVAL_SCV, COSMETATOS_ARRIVAL_SCV, COSMETATOS_SERVICE_SCV, SERVICE_SCV, SERVICE_TIME
from ..params import normalize_choice
from .mmc import mmc_args, erlang_c_stable, unwrap

__all__ = ["mgc_wait", "mgc_response", "mgc_wait_by_scv", "MGC_METHODS"]

MGC_METHODS = ("allen-cunneen", "cosmetatos")


def _method(method: str) -> str:
    return normalize_choice("method", method, MGC_METHODS)


def mgc_wait(arrival_rate, service_time, servers, service_scv=0.0, arrival_scv=1.0,
             method="allen-cunneen"):
    """Approximate mean wait in queue for M/G/c (or G/G/c with Allen-Cunneen).

    Parameters
    ----------
    arrival_rate : float or array_like
        :math:`\\lambda`, ``>= 0`` (per time unit of ``service_time``).
    service_time : float or array_like
        Mean service time :math:`s`, ``> 0``.
    servers : float or array_like
        :math:`c`, ``1 <= c <= 1e12``.
    service_scv : float or array_like
        Squared coefficient of variation of service, :math:`c_s^2 = \\sigma_s^2 / s^2`,
        ``>= 0``; 0 is constant service (crypto operations), 1 is exponential.
        ``"cosmetatos"`` accepts [0, 1].
    arrival_scv : float or array_like
        :math:`c_a^2`, ``>= 0``; 1 is Poisson.  ``"cosmetatos"`` requires 1.
    method : {"allen-cunneen", "cosmetatos"}
        The approximation (see the module documentation).

    Returns
    -------
    float or ndarray
        :math:`W_q` in the unit of ``service_time``.

    Notes
    -----
    Measured against the exact M/D/c mean wait (numerically solved chain, see
    ``tests/test_mgc.py``): Cosmetatos is within 2.7% for :math:`\\rho \\ge 0.5`
    (c = 2..32) while Allen-Cunneen underestimates by up to 45%.  At low load
    with many servers Cosmetatos's correction term (which grows like
    :math:`1/\\rho`) overshoots: e.g. +39% at c = 32, :math:`\\rho` = 0.3, and
    above the M/M/c wait at c = 12, :math:`\\rho` = 0.25; there the absolute
    waits are tiny and the error is on the safe (high) side; the M/D/c term is
    capped at the M/M/c wait (constant service never waits longer than
    exponential service).  Allen-Cunneen gives half the M/M/c wait for
    constant service, an underestimate for c > 1.

    Raises
    ------
    UnstableQueueError
        If :math:`\\lambda s \\ge c`.
    ValueError
        For out-of-range arguments or an unknown method.
    """
    m = _method(method)
    _, s, c, a = mmc_args(arrival_rate, service_time, servers)
    if m == "cosmetatos":
        cs2 = COSMETATOS_SERVICE_SCV.check(service_scv)
        ca2 = COSMETATOS_ARRIVAL_SCV.check(arrival_scv)
    else:
        cs2 = SERVICE_SCV.check(service_scv)
        ca2 = ARRIVAL_SCV.check(arrival_scv)
    wq = erlang_c_stable(a, c) * s / (c - a)
    if m == "allen-cunneen":
        return unwrap(wq * (ca2 + cs2) / 2.0)
    rho = a / c
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        corr = (1.0 - rho) * (c - 1.0) * (np.sqrt(4.0 + 5.0 * c) - 2.0) / (16.0 * rho * c)
    # rho == 0 means no traffic and no wait: the correction's 0/0 is irrelevant.
    # Cosmetatos's correction grows like 1/rho and can exceed the M/M/c wait at low
    # load; constant service never waits longer than exponential service, so cap there:
    # a correction of 1 already reaches the cap (a subnormal rho's infinite one likewise).
    corr = np.where(rho > 0.0, np.minimum(corr, 1.0), 0.0)
    wq_md = np.minimum(0.5 * wq * (1.0 + corr), wq)
    out = cs2 * wq + (1.0 - cs2) * wq_md
    return float(out) if is_scalar(arrival_rate, service_time, servers, service_scv) else unwrap(np.asarray(out))


def mgc_response(arrival_rate, service_time, servers, service_scv=0.0, arrival_scv=1.0,
                 method="allen-cunneen"):
    """Approximate mean response time :math:`W_q + s`. See :func:`mgc_wait`."""
    s = SERVICE_TIME.check(service_time)
    return unwrap(np.asarray(mgc_wait(arrival_rate, service_time, servers, service_scv,
                                    arrival_scv, method) + s))


def mgc_wait_by_scv(arrival_rate, service_time, servers, service_scv):
    """M/G/c mean wait with the approximation each element's variability calls for.

    Cosmetatos where :math:`c_s^2 \\le 1` (near-constant crypto service: the better of
    the two there), Allen-Cunneen above (mixtures of exponential CPU bursts); 0 where
    nothing arrives or the service time is 0.  Arrays broadcast; the caller has
    checked stability (:math:`\\lambda s < c`) and the ranges.

    Parameters
    ----------
    arrival_rate, service_time, servers, service_scv : array_like
        As :func:`mgc_wait` (any consistent time unit).

    Returns
    -------
    ndarray
        :math:`W_q` in the unit of ``service_time``, shaped like the broadcast inputs.
    """
    lam, s, c, scv = np.broadcast_arrays(*(np.asarray(v, float) for v in
                                           (arrival_rate, service_time, servers, service_scv)))
    out = np.zeros(lam.shape)
    busy = (lam > 0) & (s > 0)
    if not busy.any():
        return out
    lo = busy & (scv <= 1.0)
    hi = busy & ~lo
    if lo.any():
        out[lo] = mgc_wait(lam[lo], s[lo], c[lo], service_scv=scv[lo], method="cosmetatos")
    if hi.any():
        out[hi] = mgc_wait(lam[hi], s[hi], c[hi], service_scv=scv[hi], method="allen-cunneen")
    return out
