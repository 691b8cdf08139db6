"""A coprocessor's speed from RMF's mean EXEC TIME and the mix of operations a plan sends it.

RMF's CCA coprocessor section prints one RATE and one EXEC TIME per card: the mean over every
request the LPAR sent it (signatures, symmetric work, MACs, key generation), with no breakdown
by function.  Such a line observes no one operation: reading it as an RSA-2048 sign put the
sign at 0.079 ms on IBM's 2018 example, where the published time is 0.617 ms.  What it does
observe is the card's speed *on the mix it was sent*.  A plan states that mix (its workloads:
requests per unit of work of each card function, at their rates), and the models predict the
mix's mean EXEC TIME on the report's card generation :math:`g`:

.. math::

    \\bar t_{model,g} = \\frac{\\sum_w \\lambda_w \\sum_c n_{wc}\\, t_{c,g}}{\\sum_w \\lambda_w \\sum_c n_{wc}},
    \\qquad
    \\bar t_{RMF} = \\frac{\\sum_l R_l E_l}{\\sum_l R_l},
    \\qquad
    f = \\frac{\\bar t_{RMF}}{\\sum_l R_l\\, \\bar t_{model,g(l)} / \\sum_l R_l}

over the report's coprocessor lines :math:`l` with RATE :math:`R_l > 0` and EXEC TIME
:math:`E_l`.  :math:`f` multiplies every coprocessor service time: the time parameters of each
coprocessor function (:data:`COPROCESSOR_TIMES`); the shares and key-length exponents stay, so
each function's time, and the mix's mean, is multiplied by :math:`f` exactly and the calibrated
mix reproduces the measured mean.  The plan's ``measured`` workloads (RMF's own residual among
them) are measurements, not functions of the parameters: they are left out of the mix.

The factor's relative standard deviation is the largest of the variation between intervals
(:data:`~.observations.MEASUREMENT_RTOL`), the print's rounding of EXEC TIME (half a unit of the
third decimal, uniform) and the scatter of the lines' own factors :math:`E_l / \\bar t_{model,g(l)}`
(their rate-weighted standard deviation over :math:`\\sqrt{L}`).  It does not hold the mix's own
uncertainty: a plan that sends the cards another mix than the LPAR did calibrates another factor,
which is why :attr:`CardSpeed.coverage` (the plan's request rate over the measured one) is
printed with it.

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


@dataclass(frozen=True)
class CardSpeed:
    """What :func:`coprocessor_speed` found.

    Attributes
    ----------
    factor : float
        :math:`f`, the measured mean EXEC TIME over the model's for the plan's mix (1 = as published).
    sigma_rel : float
        Its relative standard deviation (module docstring).
    measured_ms, model_ms : float
        The rate-weighted mean EXEC TIME of the lines, and the model's for the plan's mix on the
        lines' generations at the parameters in force (ms).
    measured_rate, plan_rate : float
        Requests per second: the lines' total, and what the plan's workloads send the coprocessors.
    lines : tuple of str
        The report lines used ("file line N: CEX6C 5").
    left_out : tuple of str
        The plan's workloads not in the mix (measured ones), by name.
    """

    factor: float
    sigma_rel: float
    measured_ms: float
    model_ms: float
    measured_rate: float
    plan_rate: float
    lines: tuple
    left_out: tuple = ()

    @property
    def coverage(self) -> float:
        """The plan's coprocessor request rate over the report's (1: the plan states all of it)."""
        return self.plan_rate / self.measured_rate

    def values(self, base: dict) -> dict:
        """``base``'s coprocessor time parameters multiplied by :attr:`factor`."""
        return {n: float(base[n]) * self.factor for n in COPROCESSOR_TIMES}


def coprocessor_lines(rows) -> list:
    """The report's CCA coprocessor card lines that carry a time (FUNCTION TOTAL, RATE > 0)."""
    return [r for r in rows if r.card == "coprocessor" and r.function == "TOTAL" and r.rate > 0]


def _mix(system, workloads, generation: str) -> tuple[float, float, float, tuple]:
    """``(R, S, F, left out)`` of the plan's mix on coprocessors of ``generation``: requests per
    second, and the card ms per second of the part of their times the speed factor scales (``S``)
    and of the part it does not (``F``).  Each class's time is affine in the coprocessor time
    parameters (:data:`COPROCESSOR_TIMES`): with them doubled, :math:`t_2 = 2S + F`, so
    :math:`S = t_2 - t`."""
    from ..params import current_parameters, param, prepared_values, using_values
    from ..zos.plan.profiles import workload_profile
    on = dataclasses.replace(system, card_generation=generation)
    R = S = F = 0.0
    left_out = []
    doubled = None
    for w in workloads:
        p = workload_profile(w, on)
        if p.util_form:          # a measured utilization: busy, no request count
            left_out.append(w.name)
            continue
        n, t = (np.asarray(x, dtype=float) for x in p.classes["coprocessors"][:2])
        if doubled is None:      # every parameter as in force (an outer using_values too), the times doubled
            base = {k: param(k) for k in current_parameters().values}
            doubled = prepared_values({**base, **{k: 2.0 * float(base[k]) for k in COPROCESSOR_TIMES}})
        with using_values(doubled):
            t2 = np.asarray(workload_profile(w, on).classes["coprocessors"][1], dtype=float)
        rate = float(w.rate)
        R += rate * float(np.sum(n))
        S += rate * float(np.sum(n * (t2 - t)))
        F += rate * float(np.sum(n * (2.0 * t - t2)))
    return R, S, F, tuple(left_out)


def mix_mean_ms(system, workloads, generation: str) -> tuple[float, float, tuple]:
    """The plan's mix on the coprocessors of ``generation`` (``"CEX6S"`` ...), at the parameters in force.

    Returns
    -------
    tuple
        ``(mean EXEC ms, requests/s, names left out)``: :math:`\\bar t_{model,g}` and
        :math:`\\sum_w \\lambda_w \\sum_c n_{wc}`, and the names of the workloads given as a
        measured utilization (no request count), left out.
    """
    R, S, F, left_out = _mix(system, workloads, generation)
    return ((S + F) / R if R > 0 else math.nan), R, left_out


def coprocessor_speed(rows, system, workloads, path: str = "the report") -> CardSpeed:
    """The coprocessors' speed factor the report's lines give for the plan's mix (module docstring).

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
        raise CalibrationError(f"{path}: no CCA coprocessor line with RATE > 0: no mean EXEC TIME to calibrate "
                               "the coprocessors' speed on")
    mix = {g: _mix(system, workloads, g) for g in sorted({r.generation for r in lines})}
    plan_rate, _, _, left_out = next(iter(mix.values()))
    if not plan_rate > 0:
        raise CalibrationError("the plan's workloads send the coprocessors no request (measured utilizations left "
                               "out): it states no mix of operations to calibrate the coprocessor lines against")
    if not all(m[1] > 0 for m in mix.values()):
        raise CalibrationError("the plan's coprocessor requests all have fixed times (published per-start times, "
                               "measured EXEC TIMEs): no coprocessor time parameter for the lines to calibrate")
    rate = np.array([r.rate for r in lines])
    exec_ms = np.array([r.exec_ms for r in lines])
    a = np.array([mix[r.generation][1] / plan_rate for r in lines])     # ms the factor scales, per request
    b = np.array([mix[r.generation][2] / plan_rate for r in lines])     # ms it does not
    w = rate / rate.sum()
    measured = float(np.sum(w * exec_ms))
    factor = (measured - float(np.sum(w * b))) / float(np.sum(w * a))
    if not factor > 0:
        raise CalibrationError(f"{path}: the lines' mean EXEC TIME {measured:.4g} ms is below what the plan's "
                               "coprocessor requests with fixed times (channel starts, measured) take alone: the "
                               "plan does not state this LPAR's mix")
    each = (exec_ms - b) / a
    scatter = (math.sqrt(float(np.sum(w * (each - factor) ** 2))) / math.sqrt(len(lines)) / factor
               if len(lines) > 1 else 0.0)
    scaled = float(np.sum(w * a)) * factor
    sigma = max(MEASUREMENT_RTOL, _PRINT_SD_MS / scaled, scatter)
    return CardSpeed(factor=factor, sigma_rel=sigma, measured_ms=measured, model_ms=float(np.sum(w * (a + b))),
                     measured_rate=float(rate.sum()), plan_rate=plan_rate,
                     lines=tuple(f"{located(path, r.line)}: {r.type} {r.id}" for r in lines), left_out=left_out)
