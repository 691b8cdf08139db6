"""A coprocessor's speed from RMF's mean EXEC TIME and the mix of operations a plan sends it.

RMF's CCA coprocessor section prints one RATE and one EXEC TIME per card: the mean over every
request the LPAR sent it (signatures, symmetric work, MACs, key generation), with no breakdown
by function.  Such a line observes no one operation: reading it as an RSA-2048 sign put the
sign at 0.079 ms on IBM's 2018 example, where the published time is 0.617 ms.  What it does
observe is the card's speed *on the mix it was sent*.  A plan states that mix (its workloads:
requests per unit of work of each card function, at their rates).  Each request class's time on
the report's card generation :math:`g` is affine in the coprocessor time parameters
(:data:`COPROCESSOR_TIMES`; the shares and key-length exponents held): a part :math:`a` those
parameters scale and a part :math:`b` they do not (a handshake's published card time per start, a
measured EXEC TIME).  One factor :math:`f` on the parameters gives the mix the mean

.. math::

    \\bar t_g(f) = f\\,\\bar a_g + \\bar b_g, \\qquad
    \\bar a_g = \\frac{\\sum_w \\lambda_w \\sum_c n_{wc} a_{c,g}}{\\sum_w \\lambda_w \\sum_c n_{wc}}

(:math:`\\bar b_g` alike), and :math:`f` is the one that makes the mix's mean over the report's
lines the measured one:

.. math::

    f = \\frac{\\bar t_{RMF} - \\sum_l w_l \\bar b_{g(l)}}{\\sum_l w_l \\bar a_{g(l)}},
    \\qquad \\bar t_{RMF} = \\sum_l w_l E_l, \\quad w_l = R_l / \\sum_l R_l

over this LPAR's coprocessor lines :math:`l` (LPAR or TOTAL columns; a CPC-wide line carries
other LPARs' mix) with RATE :math:`R_l > 0` and EXEC TIME :math:`E_l`.  Substituted back, the mix's
mean under the calibrated parameters is :math:`\\bar t_{RMF}` exactly.  The plan's ``measured``
workloads (RMF's own residual among them) are measurements of the very lines calibrated, not
operations: they are left out of the mix.

The factor's relative standard deviation is the largest of the variation between intervals
(:data:`~.observations.MEASUREMENT_RTOL`), the print's rounding of EXEC TIME (half a unit of the
third decimal, uniform), the scatter of the lines' own factors (their rate-weighted standard
deviation over :math:`\\sqrt{L}`), and the mix's own uncertainty, :math:`|\\ln c|` at most
:math:`\\ln 2`, with :math:`c` the plan's request rate over the measured one (per interval): a
plan that states a tenth of the LPAR's coprocessor requests states little of its mix.  The
first and last are the mean's and are multiplied by :math:`\\bar t_{RMF} / (f \\sum_l w_l \\bar a_l)`,
the mean over the part of it the factor scales (1 for a mix of parameter-given times only; a
mix with published per-start times, or a quantum-safe factor on a share of the requests, pins
the factor less surely than the mean).

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report (SC34-2665): EXEC TIME is the
card's average execution time per request, over every request of the interval.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..zos.crypto import CARD_FUNCTIONS
from .observations import MEASUREMENT_RTOL, CalibrationError, located

__all__ = ["CardSpeed", "COPROCESSOR_TIMES", "coprocessor_lines", "coprocessor_speed", "mix_mean_ms"]

#: The parameters holding the coprocessor functions' times at their reference key size: a speed
#: factor multiplies these (and nothing else).
COPROCESSOR_TIMES = tuple(law.time for law in CARD_FUNCTIONS.values() if law.card == "coprocessor")

# RMF prints EXEC TIME in ms to three decimals: half a unit, uniform.
_PRINT_SD_MS = 0.0005 / math.sqrt(3.0)
# The mix's uncertainty is at most a factor of two at one standard deviation (the calibration's
# weak prior on everything, calibrate.PRIOR_SIGMA): a plan far from the measured rate says little.
_MIX_SD_MAX = math.log(2.0)


@dataclass(frozen=True)
class CardSpeed:
    """What :func:`coprocessor_speed` found.

    Attributes
    ----------
    factor : float
        :math:`f`, the factor on the parameters :attr:`names` (the coprocessor time parameters, or
        one quantum-safe family's time factor) that gives the plan's mix the measured mean EXEC
        TIME (1: the parameters in force).
    sigma_rel : float
        Its relative standard deviation (module docstring).
    measured_ms, model_ms : float
        The rate-weighted mean EXEC TIME of the lines, and the model's for the plan's mix on the
        lines' generations at the parameters in force (ms).
    measured_rate, plan_rate : float
        Requests per second: the lines' total (a mean over the report's intervals), and what the
        plan's workloads send the coprocessors.
    lines : tuple of str
        The report lines used ("file line N: CEX6C 5").
    left_out : tuple of str
        The plan's workloads not in the mix (measured ones), by name.
    names : tuple of str
        The parameters the factor scales.
    """

    factor: float
    sigma_rel: float
    measured_ms: float
    model_ms: float
    measured_rate: float
    plan_rate: float
    lines: tuple
    left_out: tuple = ()
    names: tuple = COPROCESSOR_TIMES

    @property
    def coverage(self) -> float:
        """The plan's coprocessor request rate over the report's (1: the plan states all of it)."""
        return self.plan_rate / self.measured_rate

    def values(self, base: dict) -> dict:
        """``base``'s parameters the factor scales (:attr:`names`) multiplied by :attr:`factor`."""
        return {n: float(base[n]) * self.factor for n in self.names}


def coprocessor_lines(rows) -> list:
    """The report's CCA coprocessor card lines that carry a time (FUNCTION TOTAL, RATE > 0) of this
    LPAR (not CPC-wide lines, which carry other LPARs' mix)."""
    return [r for r in rows if r.card == "coprocessor" and r.function == "TOTAL" and r.rate > 0
            and r.scope != "CPC"]


def _parts(system, workloads) -> tuple:
    """``(workloads, profiles, rate factors, left out)`` the coprocessors see at the plan's month 0:
    the measured workloads left out, and each migration's remaining and moved parts at their
    month-0 shares (:mod:`~cryptoplan.model.zos.plan.migration`: a site measuring during its
    migration states the share migrated then as a migration with ``start = 0, months = 0``)."""
    from ..zos.plan.errors import PlanError
    from ..zos.plan.migration import expand_migrations
    from ..zos.plan.profiles import workload_profile
    kept = [w for w in workloads if w.kind != "measured"]    # a measurement (RMF's residual among them)
    left_out = tuple(w.name for w in workloads if w.kind == "measured")
    profiles = [workload_profile(w, system) for w in kept]
    # only the migrations with a share moved at month 0 are in the mix RMF measured
    now = tuple(m for m in system.migrations if float(np.interp(0.0, *m.knots())) > 0.0)
    if not now:
        return kept, profiles, [1.0] * len(kept), left_out
    try:
        ws, ps, knots, _ = expand_migrations(dataclasses.replace(system, migrations=now), kept, profiles)
    except PlanError as e:
        raise CalibrationError(f"the plan's quantum-safe work at month 0 on the report's {system.card_generation} "
                               f"coprocessors: {str(e).removeprefix('system: ')}") from None
    shares = [1.0 if k is None else float(np.interp(0.0, *k)) for k in knots]
    return ws, ps, shares, left_out


def _mix(system, workloads, generation: str, scaled=COPROCESSOR_TIMES) -> tuple[float, float, float, tuple]:
    """``(R, S, F, left out)`` of the plan's mix on coprocessors of ``generation``: requests per
    second, and the card ms per second of the part of their times the factor scales (``S``)
    and of the part it does not (``F``).  Each class's time is affine in the parameters ``scaled``
    (the coprocessor time parameters, or a quantum-safe family's factor): with them doubled,
    :math:`t_2 = 2S + F`, so :math:`S = t_2 - t`."""
    from ..params import current_parameters, param, prepared_values, using_values
    on = dataclasses.replace(system, card_generation=generation)
    ws, profiles, shares, left_out = _parts(on, workloads)
    base = {k: param(k) for k in current_parameters().values}
    # every parameter as in force (an outer using_values too), the scaled ones doubled
    doubled = prepared_values({**base, **{k: 2.0 * float(base[k]) for k in scaled}})
    with using_values(doubled):
        profiles2 = _parts(on, workloads)[1]
    R = S = F = 0.0
    for w, p, p2, share in zip(ws, profiles, profiles2, shares):
        n, t = (np.asarray(x, dtype=float) for x in p.classes["coprocessors"][:2])
        t2 = np.asarray(p2.classes["coprocessors"][1], dtype=float)
        rate = float(w.rate) * share
        R += rate * float(np.sum(n))
        S += rate * float(np.sum(n * (t2 - t)))
        F += rate * float(np.sum(n * (2.0 * t - t2)))
    return R, S, F, left_out


def mix_mean_ms(system, workloads, generation: str) -> tuple[float, float, tuple]:
    """The plan's mix on the coprocessors of ``generation`` (``"CEX6S"`` ...), at the parameters in force.

    Returns
    -------
    tuple
        ``(mean EXEC ms, requests/s, names left out)``: :math:`\\bar t_g` at the parameters in
        force and :math:`\\sum_w \\lambda_w \\sum_c n_{wc}`, and the names of the measured
        workloads, left out.
    """
    R, S, F, left_out = _mix(system, workloads, generation)
    return ((S + F) / R if R > 0 else math.nan), R, left_out


def coprocessor_speed(rows, system, workloads, path: str = "the report", scaled=COPROCESSOR_TIMES) -> CardSpeed:
    """The coprocessors' speed factor the report's lines give for the plan's mix (module docstring).

    With ``scaled`` a quantum-safe family's time factor (``("qs_mldsa_time_factor",)``), the
    factor on that alone, every other coprocessor time held: the lines' mean then measures the
    quantum-safe operations' time, the plan's quantum-safe share (its migrations at month 0)
    stating how many of the requests they are.  A factor's relative standard deviation is the
    module docstring's, its measurement and mix terms multiplied by
    :math:`\\bar t_{RMF} / (f \\sum_l w_l \\bar a_l)` (the mean over the part it scales: a share of
    the requests carries the whole mean's uncertainty).

    Parameters
    ----------
    rows : list of RmfRow
        The report's lines (:func:`~.rmf_crypto.rmf_rows`); its coprocessor card lines with RATE > 0
        are used.
    system : System
        The plan's system (its card generation is replaced by each line's).
    workloads : sequence of Workload
        The plan's workloads: the mix.
    path : str
        The report, named in messages.
    scaled : tuple of str
        The parameters the factor scales (default: every coprocessor time parameter).

    Returns
    -------
    CardSpeed

    Raises
    ------
    CalibrationError
        No coprocessor line with RATE > 0, or a plan whose workloads send the coprocessors nothing.
    """
    lines = coprocessor_lines(rows)
    if not lines:
        raise CalibrationError(f"{path}: no CCA coprocessor line of this LPAR with RATE > 0: no mean EXEC TIME "
                               "to calibrate the coprocessors' speed on")
    systems = sorted({r.system for r in lines if r.system})
    if len(systems) > 1:
        raise CalibrationError(f"{path}: coprocessor lines of systems {', '.join(systems)}: a plan states one LPAR's "
                               "mix; calibrate on one system's report")
    scaled = tuple(scaled)
    mix = {g: _mix(system, workloads, g, scaled) for g in sorted({r.generation for r in lines})}
    plan_rate, _, _, left_out = next(iter(mix.values()))
    if not plan_rate > 0:
        raise CalibrationError("the plan's workloads send the coprocessors no request (measured workloads left "
                               "out): it states no mix of operations to calibrate the coprocessor lines against")
    if not all(m[1] > 0 for m in mix.values()):
        if scaled != COPROCESSOR_TIMES:
            raise CalibrationError(f"the plan sends the coprocessors no operation {', '.join(scaled)} scales at month "
                                   "0: state the share migrated when RMF measured as a [[migration]] with start = 0 "
                                   "and months = 0")
        raise CalibrationError("the plan's coprocessor requests all have fixed times (published per-start times): "
                               "no coprocessor time parameter for the lines to calibrate")
    rate = np.array([r.rate for r in lines])
    exec_ms = np.array([r.exec_ms for r in lines])
    a = np.array([mix[r.generation][1] / plan_rate for r in lines])     # ms the factor scales, per request
    b = np.array([mix[r.generation][2] / plan_rate for r in lines])     # ms it does not
    w = rate / rate.sum()
    measured = float(np.sum(w * exec_ms))
    factor = (measured - float(np.sum(w * b))) / float(np.sum(w * a))
    if not factor > 0:
        held = ("its other coprocessor requests" if scaled != COPROCESSOR_TIMES else
                "coprocessor requests with fixed times (channel starts)")
        raise CalibrationError(f"{path}: the lines' mean EXEC TIME {measured:.4g} ms is below what the plan's "
                               f"{held} take alone: the plan does not state this LPAR's mix")
    each = (exec_ms - b) / a
    scatter = (math.sqrt(float(np.sum(w * (each - factor) ** 2))) / math.sqrt(len(lines)) / factor
               if len(lines) > 1 else 0.0)
    part = float(np.sum(w * a)) * factor        # ms of the mean the factor scales
    intervals = max(len({r.interval for r in lines}), 1)
    measured_rate = float(rate.sum()) / intervals
    mix_sd = min(abs(math.log(plan_rate / measured_rate)), _MIX_SD_MAX)
    amp = measured / part
    sigma = max(MEASUREMENT_RTOL * amp, _PRINT_SD_MS / part, scatter, mix_sd * amp)
    return CardSpeed(factor=factor, sigma_rel=sigma, measured_ms=measured, model_ms=float(np.sum(w * (a + b))),
                     measured_rate=measured_rate, plan_rate=plan_rate,
                     lines=tuple(f"{located(r.source or path, r.line)}: {r.type} {r.id}" for r in lines),
                     left_out=left_out, names=scaled)
