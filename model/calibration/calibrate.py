"""Calibrate the card-time parameters on a site's own RMF Crypto Hardware Activity report.

The published fit (:mod:`cryptoplan.model.calibration.fit`) gives IBM's measured card times; every source ends
with "measure in your own environment".  A site's RMF Crypto Hardware Activity report
gives, per Crypto Express card, the request rate, the average execution time (RMF
"EXEC TIME", the card's service time per request, without queueing) and the
utilization, and for accelerators the ME- and CRT-format RSA rows by key length.  Those
rows (:mod:`~cryptoplan.model.calibration.rmf_crypto`), a site's measured CPU per
transaction (:mod:`~cryptoplan.model.calibration.cpu_table`) and its channel initiator's SMF
statistics (:mod:`~cryptoplan.model.calibration.smf_calibration`) become site observations
(:mod:`~cryptoplan.model.calibration.observations`); this module finds which parameters they
identify, refits those (the others keep their published values) and reports what moved.  It
also gathers the readers' public names, where the command line imports them from.

The statistical model, in log space (every parameter is positive):

.. math::

    r_i = \\frac{\\ln m_i(\\theta) - \\ln y_i}{\\sigma_i}, \\qquad
    r_{p,j} = \\frac{\\ln \\theta_j - \\ln \\theta_{0,j}}{\\sigma_p}

``y_i`` is a report's EXEC TIME, ``m_i`` the model's card time for that row's function,
key length and card generation (:func:`cryptoplan.model.zos.crypto.function_ms`), ``sigma_i`` its
relative uncertainty: RMF prints milliseconds to three decimals (half a unit, uniform:
:math:`0.0005/\\sqrt{3}` ms) with a floor of :data:`MEASUREMENT_RTOL` for the variation
between intervals.  The published values :math:`\\theta_0` enter as a weak prior,
:data:`PRIOR_SIGMA` = ln 2 (a factor of two at one standard deviation): it only keeps a
parameter the data barely see from wandering, it does not pull an identified one.

A parameter the published fit left on a lower bound of 0 (the unprotected TCPIP cost per KB) has
no logarithm: it is refitted in its own units, from 0 up, without the prior (the figures said only
"as small as the bound allows"), and identified when the site rows pin it to the same share of its
order of magnitude (the fit's starting point).

A parameter is *identified* when the site rows shrink its prior uncertainty at least
:data:`IDENTIFIED_SHRINK`-fold (posterior standard deviation from
:math:`(J^T J + I/\\sigma_p^2)^{-1}` at the published values, J the rows' Jacobian in log
parameters); only those are refitted, by :func:`cryptoplan.model.calibration.leastsq.solve` (the
fits' one least-squares path, with its one standard-error convention: the stated sigmas
are taken at their word unless the site rows scatter more than they allow).

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report (SC34-2665).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
from dataclasses import dataclass, field

import numpy as np

from ..params import ParameterFileError, load_params, normalize_choice, using_values, validate_params
from ..zos.quantum_safe import QS_FACTORS
from ..zos.crypto import CARD_FUNCTIONS
from .cpu_table import CPU_COLUMNS, CpuRow, cpu_observations, read_cpu_table
from .card_speed import COPROCESSOR_TIMES, coprocessor_speed
from .free import FREE, free_bounds
from .leastsq import jacobian, solve
from .observations import MEASUREMENT_RTOL, CalibrationError, Observation
from .report import figure_table
from .rmf_crypto import (RMF_COLUMNS, RMF_FUNCTIONS, RmfRow, read_rmf_crypto, rmf_observations, rmf_rows,
                         util_consistency)
from .smf_calibration import smf_measured, smf_summary
# the readers' other public names, importable from here as before (not in __all__)
from .cpu_table import MAX_APPL_PCT, MAX_CPU_US  # noqa: F401
from .rmf_crypto import (RMF_MAX_EXEC_MS, RMF_MAX_RATE, RMF_MAX_ROW_UTIL_PCT, RMF_MAX_UTIL_PCT,  # noqa: F401
                         UTIL_DISAGREEMENT, UTIL_DISAGREEMENT_POINTS, consistency_warning)
from ..lazy import lazy_module

# lmfit takes ~0.4 s to import: loaded on first use, as reading a report needs no optimizer
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import lmfit
else:
    lmfit = lazy_module("lmfit")

__all__ = ["RMF_COLUMNS", "RMF_FUNCTIONS", "rmf_rows", "PRIOR_SIGMA", "MEASUREMENT_RTOL", "IDENTIFIED_SHRINK",
           "CalibrationError", "RmfRow", "CpuRow", "Observation", "Calibration", "read_rmf_crypto",
           "rmf_observations", "read_cpu_table", "cpu_observations", "smf_summary", "smf_measured", "CPU_COLUMNS", "calibrate"]

# The published values' weight (a factor of two at one standard deviation) and how much the
# site rows must shrink a parameter's uncertainty to refit it: see the module docstring.
PRIOR_SIGMA = math.log(2.0)
IDENTIFIED_SHRINK = 10.0
# The residual (in standard deviations) of a site number whose model value is not a positive
# time at the trial parameters: large enough that no fit ends there, finite so the solver can
# step back (an engineering constant of the solver, not a published figure).
OUTSIDE_DOMAIN_RESIDUAL = 1e3
# the parameters holding a card time's part that does not grow with the key (crypto module docstring)
_FIXED_PARTS = frozenset(p for law in CARD_FUNCTIONS.values() for p in (law.fixed_share, law.fixed_ms) if p)


@dataclass
class Calibration:
    """What :func:`calibrate` found; ``parameters`` is a parameter-file document's section."""

    parameters: dict
    identified: list
    unidentified: dict           # name -> why
    moved: list                  # dicts: name, published, calibrated, ratio, stderr
    residuals: list              # dicts: label, site, before, after
    consistency: list = field(default_factory=list)   # RMF UTIL% vs RATE x EXEC TIME
    contradicted: list = field(default_factory=list)  # published figures reproduced before, not now
    reproduced_before: int = 0                         # published figures within tolerance before
    cost: float = 0.0
    measured: list = field(default_factory=list)       # parameters set from direct site measurements
    solution: object = None                            # the leastsq.Solution (log parameters), if any refitted
    covariance: dict = field(default_factory=dict)     # the file's covariance blocks (_site_covariance)
    bootstrap: dict = field(default_factory=dict)      # the published bootstrap blocks less the site's (_site_bootstrap)
    speed: object = None                               # the coprocessors' CardSpeed, if one was given

    def document(self) -> dict:
        """A parameter file (``CRYPTOPLAN_PARAMS``) with the calibrated values, and the
        covariance and bootstrap refits :func:`cryptoplan.model.calibration.draws.parameter_draws`
        draws from."""
        out = {"parameters": self.parameters,
               "calibration": {"identified": self.identified, "unidentified": self.unidentified,
                               "measured": [m["name"] for m in self.measured],
                               "prior_sigma": PRIOR_SIGMA, "cost": self.cost}}
        if self.covariance:
            out["covariance"] = self.covariance
        if self.bootstrap:
            out["bootstrap"] = self.bootstrap
        return out


def _params_of(observations) -> list:
    """The parameters the observations may depend on, each once, in order of first mention."""
    names = []
    for o in observations:
        for n in o.params:
            if n not in names:
                names.append(n)
    return names


#: A published value at or below this is a parameter the fit put on its lower bound 0 (the solver
#: stops within rounding of it: 1.1e-24 us/KB for the unprotected TCPIP cost per KB).
ZERO_VALUE = 1e-12


def _scale(name: str) -> float:
    """The order of magnitude of a parameter the published fit left at 0, in its unit: the fit's
    starting point (:class:`~.free.Free`'s ``start``), else a hundredth of its bounds' width."""
    spec = FREE.get(name)
    if spec is not None and spec.start:
        return float(spec.start)
    lo, hi = _bounds(name)
    return (hi - lo) / 100.0 if math.isfinite(hi) else 1.0


def _at_zero(name: str, value: float) -> bool:
    """A parameter the published fit left on a lower bound of 0 (its value 0 to rounding): handled in
    its own units, not in logarithms (module docstring)."""
    lo, _ = _bounds(name)
    return lo == 0.0 and value <= ZERO_VALUE


def _coords(names, base) -> tuple:
    """The solver's coordinates of ``names`` at ``base``: the logarithm of each, or the value itself
    for one at a zero bound (:func:`_at_zero`); and the mask of the latter."""
    linear = np.array([_at_zero(n, base[n]) for n in names], dtype=bool)
    x = np.array([base[n] if lin else math.log(base[n]) for n, lin in zip(names, linear)], dtype=float)
    return x, linear


def _batch(names, base, observations, prior=True):
    """Residuals (k, m) of the parameter sets in the columns of ``x`` (n, k), in the solver's
    coordinates (:func:`_coords`: logarithms, or units for a parameter at a zero bound).

    The site rows' :math:`r_i`, then (``prior``) the prior's :math:`r_{p,j}` of each parameter in
    logarithms: see the module docstring (a parameter the published fit put on 0 has no prior: the
    figures said only "as small as the bound allows", and the site's numbers decide).  The
    observations' models are scalar: one evaluation per column.
    """
    y = np.array([o.value for o in observations])
    s = np.array([o.sigma for o in observations])
    x0, linear = _coords(names, base)

    def batch(logx):
        logx = np.asarray(logx, dtype=float).reshape(len(names), -1)
        out = []
        for col in logx.T:
            values = dict(base)
            values.update({n: float(v if lin else np.exp(v)) for n, v, lin in zip(names, col, linear)})
            with using_values(values):
                m = np.array([o.predict() for o in observations], dtype=float)
            # outside the model's domain (a card time's fixed part above the whole, so that a longer
            # key takes no time or less than none): a wall the solver steps back from, not a NaN
            ok = np.isfinite(m) & (m > 0)
            r = np.where(ok, (np.log(np.where(ok, m, 1.0)) - np.log(y)) / s, OUTSIDE_DOMAIN_RESIDUAL)
            out.append(np.concatenate([r, ((col - x0) / PRIOR_SIGMA)[~linear]]) if prior else r)
        return np.array(out)
    return batch


def _identify(candidates: list, base: dict, observations) -> tuple:
    """Which candidates the site rows identify, from the posterior at the published values.

    The posterior covariance of the log parameters is :math:`(J^T J + I/\\sigma_p^2)^{-1}`,
    J the rows' Jacobian at ``base`` (:func:`cryptoplan.model.calibration.leastsq.jacobian`);
    a parameter is identified when its posterior standard deviation is at most
    :data:`PRIOR_SIGMA` / :data:`IDENTIFIED_SHRINK`.  A parameter the published fit left on a zero
    bound is in its own units, without the prior (:func:`_batch`), and identified when its
    standard deviation is at most that share of its order of magnitude (:func:`_scale`).

    Returns
    -------
    tuple
        ``(identified, sd, J)``: the names identified, every candidate's posterior standard
        deviation (of its logarithm) and the Jacobian (observations, candidates).
    """
    x0, linear = _coords(candidates, base)
    J = (jacobian(_batch(candidates, base, observations, prior=False), x0,
                  np.full(x0.size, -np.inf), np.full(x0.size, np.inf)) if candidates
         else np.zeros((len(observations), 0)))
    # (a parameter at a zero bound has no prior in the fit; here a vague one, a thousand times its
    # order of magnitude, keeps a direction no site number sees from reading as known: pinv would
    # give it variance 0)
    scale = np.array([_scale(n) for n in candidates], dtype=float)
    post = np.linalg.pinv(J.T @ J + np.diag(np.where(linear, 1.0 / (1e3 * scale) ** 2, 1.0 / PRIOR_SIGMA ** 2)))
    sd = np.sqrt(np.clip(np.diag(post), 0.0, None))
    # a parameter at a zero bound, in its units: pinned to the same share of its order of magnitude
    limit = np.array([(_scale(n) if lin else 1.0) * PRIOR_SIGMA / IDENTIFIED_SHRINK
                      for n, lin in zip(candidates, linear)])
    identified = [n for n, s, lim in zip(candidates, sd, limit) if s <= lim]
    return identified, sd, J


#: A parameter no site number depends on: an e-fold change of it moves none by more than this
#: many stated uncertainties.  The Jacobian is a forward difference with a step of about 1e-8 in
#: the logarithm, so a number that does not depend on the parameter still moves by its rounding,
#: about 1e-8 of its size: an SSL task cost (CHIN with SSLCIPH less CHIN without) moved by 7e-7
#: with the CHIN cost, which a limit of 1e-9 took for a dependence.
NO_EFFECT = 1e-4


def _why_unidentified(name: str, sd: float, column) -> str:
    """Why the site rows do not identify ``name``: its Jacobian ``column`` and posterior ``sd``."""
    if not np.any(np.abs(column) > NO_EFFECT):
        why = "no site number depends on it"
        if name.startswith("exp_") or name in _FIXED_PARTS:
            why += (" (a key-length exponent, or the part of a card time that does not grow with the key, "
                    "has no effect at the reference key length, RSA 2048 or ECC 192 bits)")
        elif name == "tls_z14_vs_z15":
            why += " (it scales z14 costs only)"
        return why
    return (f"uncertain to a factor {math.exp(sd):.2f} (1 sd): the site numbers move it only together "
            "with other parameters (e.g. one key length cannot separate a time from its key-length "
            "exponent, one message size a fixed cost from a per-KB one)")


def _unidentified(candidates: list, sd, J, identified: list, base: dict) -> dict:
    """name -> why, for each candidate not identified."""
    unidentified = {n: _why_unidentified(n, s, col) for n, s, col in zip(candidates, sd, J.T)
                    if n not in identified}
    for n in unidentified:       # one at a zero bound is in its units: its sd is not a factor
        if _at_zero(n, base[n]) and unidentified[n].startswith("uncertain to a factor"):
            i = candidates.index(n)
            unidentified[n] = (f"uncertain by {sd[i]:.3g} in its unit (1 sd) from its published 0: the site numbers "
                               "move it only together with other parameters")
    return unidentified


def _refit(identified: list, base: dict, observations) -> tuple:
    """Refit the identified parameters in log space, the others held at ``base``.

    Returns
    -------
    tuple
        ``(values, cost, stderr, solution)``: every parameter's value (``base`` with the
        refitted ones), the fit's cost, name -> standard error of each refitted parameter
        in its unit (the log-parameter's, carried over by the delta method
        :math:`\\sigma_\\theta = \\theta\\,\\sigma_{\\ln\\theta}`), and the
        :class:`~cryptoplan.model.calibration.leastsq.Solution` (None when nothing is refitted).
    """
    values = dict(base)
    if not identified:
        return values, 0.0, {}, None
    x0, linear = _coords(identified, base)
    start = lmfit.Parameters()
    for n, x, lin in zip(identified, x0, linear):
        lo, hi = _bounds(n)
        # within the parameter's bounds (the published fit's): a site's numbers do not take a time
        # below what a card can do or an exponent out of its textbook band; in log space, or in the
        # parameter's units for one the published fit left on 0
        if lin:
            start.add(n, value=x, min=lo, max=hi if math.isfinite(hi) else np.inf)
        else:
            start.add(n, value=x, min=math.log(lo) if lo > 0 else -np.inf,
                      max=math.log(hi) if math.isfinite(hi) else np.inf)
    solution = solve(_batch(identified, base, observations), start)
    values.update({n: float(v if lin else np.exp(v)) for n, v, lin in zip(identified, solution.x, linear)})
    # the standard error of a log-parameter, carried to the parameter (delta method); none (NaN)
    # for a parameter the site numbers pushed onto a bound
    stderr = {n: float(e if lin else np.exp(v) * e)
              for n, v, e, lin in zip(identified, solution.x, solution.stderr, linear)}
    return values, solution.cost, stderr, solution


def _rows_source(rows) -> str:
    """The file the report lines come from, for messages ("the reports" for several)."""
    sources = {r.source for r in rows if getattr(r, "source", None)}
    return sources.pop() if len(sources) == 1 else "the reports"


def _bounds(name: str) -> tuple[float, float]:
    """A parameter's bounds: the fit's (:func:`~.free.free_bounds`), else positive."""
    return free_bounds(name) if name in FREE else (0.0, math.inf)


def _parameter_section(doc: dict, identified: list, measured: dict, published: dict, values: dict,
                       stderr: dict, speed=None) -> dict:
    """The calibrated parameter file's ``parameters``: ``doc``'s, the refitted, measured and
    speed-scaled ones replaced."""
    parameters = {}
    scaled = set(COPROCESSOR_TIMES) if speed is not None else set()
    for n, p in doc["parameters"].items():
        q = dict(p)
        if n in identified:
            held = not math.isfinite(stderr[n])
            q.update(value=values[n], stderr=None if held else stderr[n],
                     source=f"calibrated on site data{' (at bound)' if held else ''} (published {published[n]:.6g})")
        elif n in scaled:
            q.update(value=values[n], stderr=values[n] * speed.sigma_rel,
                     source=f"calibrated on site data: coprocessor speed factor {speed.factor:.6g} from RMF's mean "
                            f"EXEC TIME on the plan's mix (published {published[n]:.6g})")
        elif n in measured:
            q.update(value=values[n], stderr=measured[n]["stderr"],
                     source=f"measured on site data: {measured[n]['note']} (published {published[n]:.6g})")
        parameters[n] = q
    return parameters


def _site_set(solution, measured, speed=None) -> set:
    """The parameters a site calibration set: measured directly, refitted, or scaled by a speed factor."""
    return (set(measured) | (set(solution.names) if solution is not None else set())
            | (set(COPROCESSOR_TIMES) if speed is not None else set()))


def _site_covariance(doc: dict, values: dict, solution, measured: dict, speed=None) -> dict:
    """The calibrated file's ``covariance``: the published blocks without the parameters the site
    set, a ``site`` block for the refitted ones (the log-space covariance carried to the
    parameters, :math:`C_{ij} = \\theta_i \\theta_j C^{\\ln}_{ij}`), and a diagonal
    ``site_measured`` block for the ones measured directly (their stated standard errors), and a
    ``site_speed`` block for the coprocessor times a speed factor scaled (one factor: correlated
    fully, :math:`C_{ij} = \\sigma_f^2 \\theta_i \\theta_j` with :math:`\\sigma_f` its relative sd).

    A parameter's rows and columns deleted from a block leave it a covariance (positive
    semi-definite); what the site set is taken as independent of what it did not.
    """
    site = _site_set(solution, measured, speed)
    out = {}
    for group, block in (doc.get("covariance") or {}).items():
        keep = [i for i, k in enumerate(block["names"]) if k not in site]
        if keep:
            m = np.asarray(block["matrix"], dtype=float)[np.ix_(keep, keep)]
            out[group] = {"names": [block["names"][i] for i in keep], "matrix": m.tolist()}
    names, cov = solution.covariance_block() if solution is not None else ([], None)
    if names:
        # from the solver's coordinates to the parameters': d theta / d ln theta = theta, or 1 for a
        # parameter refitted in its units (published at a zero bound)
        x = np.array([1.0 if _at_zero(n, doc["parameters"][n]["value"]) else values[n] for n in names])
        out["site"] = {"names": names, "matrix": (cov * np.outer(x, x)).tolist()}
    sd = {n: m.get("stderr") for n, m in measured.items()}
    sd = {n: float(e) for n, e in sd.items() if isinstance(e, (int, float)) and math.isfinite(e) and e > 0}
    if sd:
        out["site_measured"] = {"names": list(sd), "matrix": np.diag([e * e for e in sd.values()]).tolist()}
    if speed is not None:
        x = np.array([values[n] for n in COPROCESSOR_TIMES])
        out["site_speed"] = {"names": list(COPROCESSOR_TIMES),
                             "matrix": (speed.sigma_rel ** 2 * np.outer(x, x)).tolist()}
    return out


def _site_bootstrap(doc: dict, site: set) -> dict:
    """The published file's bootstrap blocks without the parameters the site set (their draws come
    from the ``site`` and ``site_measured`` covariance blocks): the other columns of each refit,
    whole, so what the site did not touch keeps its published spread and correlations."""
    out = {}
    for group, block in (doc.get("bootstrap") or {}).items():
        keep = [i for i, k in enumerate(block["names"]) if k not in site]
        if keep:
            rows = np.asarray(block["draws"], dtype=float)[:, keep]
            out[group] = {**block, "names": [block["names"][i] for i in keep], "draws": rows.tolist()}
    return out


def _off(model: float, published: float) -> float:
    """How far a model value is from a published one: relative (model / published - 1), or the
    difference where the published value is 0."""
    return model / published - 1.0 if published else model - published


def _out_of_bounds(values: dict, sources: dict) -> None:
    """A CalibrationError naming every parameter the site set outside its bounds: the value, the
    bound and the site numbers it came from (``sources``: name -> where)."""
    bad = []
    for n, where in sources.items():
        lo, hi = _bounds(n)
        v = values[n]
        if not lo <= v <= hi:
            bound = f"below its lower bound {lo:g}" if v < lo else f"above its upper bound {hi:g}"
            bad.append(f"{n} = {v:.6g} is {bound} (from {where})")
    if bad:
        raise CalibrationError("the site numbers put parameters outside the range the models accept, so no "
                               "parameter file is written: " + "; ".join(bad))


def _contradicted(published: dict, values: dict) -> tuple[list, int]:
    """The published figures reproduced under ``published`` but not under ``values``.

    Returns
    -------
    tuple
        ``(lost, reproduced_before)``: dicts ``id``, ``published``, ``model``, ``off`` (model /
        published - 1; the difference where the published value is 0) of each figure lost, and the
        count of figures within tolerance before.
    """
    table = {r["id"]: r for r in figure_table(published)}
    lost = [{"id": r["id"], "published": r["published"], "model": r["model"],
             "off": _off(r["model"], r["published"])}
            for r in figure_table(values) if not r["within_tolerance"] and table[r["id"]]["within_tolerance"]]
    return lost, sum(r["within_tolerance"] for r in table.values())


def calibrate(observations, rows=(), measured=None, mix=None, qs_family=None) -> Calibration:
    """Refit the parameters the site observations identify; keep the rest.

    The model and the rule that picks the parameters refitted are the module docstring's:
    log-space residuals of the site numbers in their relative uncertainties, a weak prior
    (:data:`PRIOR_SIGMA`) at the published values, and a parameter refitted when the site
    numbers shrink its uncertainty :data:`IDENTIFIED_SHRINK`-fold.

    Parameters
    ----------
    observations : list of Observation
        From :func:`rmf_observations`, :func:`cpu_observations` and :func:`smf_summary`;
        may be empty when ``measured`` is given.
    rows : list of RmfRow, optional
        The report's lines, for the UTIL% consistency check.
    measured : dict, optional
        Parameters the site measures directly (name -> {value, stderr, note}, e.g.
        :func:`smf_measured`): set, not fitted.
    mix : tuple, optional
        ``(system, workloads)``: a plan whose workloads state the mix of operations this LPAR sends
        its coprocessors.  ``rows``' coprocessor lines then calibrate one speed factor on every
        coprocessor time parameter
        (:func:`~cryptoplan.model.calibration.card_speed.coprocessor_speed`), at the other
        parameters as refitted (a key-length exponent the accelerator rows move is shared with the
        coprocessor's sign), so that the file written reproduces the lines' mean.  The
        observations must not depend on those parameters.
    qs_family : {"ML-DSA", "ML-KEM"}, optional
        With ``mix``: the lines calibrate that quantum-safe family's time factor on the plan's mix
        instead (every other coprocessor time held), the plan's migrations at month 0 stating the
        share of the requests that are its operations; the factor is then set as a site
        measurement (its standard error the factor's), as ``measured``'s are.

    Returns
    -------
    Calibration

    Raises
    ------
    CalibrationError
        When there is no observation, measured parameter or speed factor; when the site numbers
        put a parameter outside its bounds (naming it, the value, the bound and the site numbers).
    """
    doc = load_params()
    measured = dict(measured or {})
    if not observations and not measured and mix is None:
        raise CalibrationError("no site number to calibrate on")
    published = {n: float(p["value"]) for n, p in doc["parameters"].items()}
    base = dict(published)
    base.update({n: float(m["value"]) for n, m in measured.items()})
    wanted = _params_of(observations)
    if mix is not None and set(wanted) & set(COPROCESSOR_TIMES):
        raise CalibrationError("a coprocessor speed factor and site numbers of the coprocessor times cannot both "
                               "set them")
    candidates = list(wanted)
    identified, sd, J = _identify(candidates, base, observations)
    unidentified = _unidentified(candidates, sd, J, identified, base)
    with using_values(published):
        before = [o.predict() for o in observations]
    values, cost, stderr, solution = _refit(identified, base, observations)
    speed = None
    if mix is not None and qs_family is not None:      # the family's factor, at the refitted values
        qs_family = normalize_choice("qs_family", qs_family, tuple(QS_FACTORS))
        name = QS_FACTORS[qs_family]
        if name in measured:
            raise CalibrationError(f"{qs_family}: a typed time (--qs-time) and RMF's coprocessor lines cannot both "
                                   "set its time factor")
        with using_values(values):
            system, workloads = mix
            qs = coprocessor_speed(rows, system, workloads, path=_rows_source(rows), scaled=(name,))
        first = qs.lines[0] + (f" and {len(qs.lines) - 1} more" if len(qs.lines) > 1 else "")
        measured[name] = {"value": values[name] * qs.factor, "stderr": values[name] * qs.factor * qs.sigma_rel,
                          "note": f"RMF's mean EXEC TIME {qs.measured_ms:.4g} ms of {first} on the plan's mix with "
                                  f"its {qs_family} share ({qs.model_ms:.4g} ms with the assumed times)"}
        values[name] = measured[name]["value"]
    elif mix is not None:        # the speed factor at the refitted values (their exponents included)
        with using_values(values):
            system, workloads = mix
            speed = coprocessor_speed(rows, system, workloads, path=_rows_source(rows))
        values.update(speed.values(values))
    with using_values(values):
        after = [o.predict() for o in observations]
    held = dict(zip(solution.names, solution.at_bound.tolist())) if solution is not None else {}
    moved = [{"name": n, "published": published[n], "calibrated": values[n],
              "ratio": values[n] / published[n] if published[n] > ZERO_VALUE else math.inf,
              "stderr": stderr[n], "unit": doc["parameters"][n].get("unit", ""), "at_bound": bool(held.get(n)),
              "bounds": _bounds(n), "published_stderr": doc["parameters"][n].get("stderr")} for n in identified]
    direct = [{"name": n, "published": published[n], "calibrated": values[n], "stderr": m["stderr"],
               "note": m["note"], "unit": doc["parameters"][n].get("unit", "")} for n, m in measured.items()]
    sources = {n: f"site data: {m['note']}" for n, m in measured.items()}
    if speed is not None:
        note = (f"coprocessor speed factor {speed.factor:.4g} on the plan's mix: RMF's mean EXEC TIME "
                f"{speed.measured_ms:.4g} ms, the mix's {speed.model_ms:.4g} ms before")
        direct += [{"name": n, "published": published[n], "calibrated": values[n],
                    "stderr": values[n] * speed.sigma_rel, "note": note,
                    "unit": doc["parameters"][n].get("unit", "")} for n in COPROCESSOR_TIMES]
        first = speed.lines[0] + (f" and {len(speed.lines) - 1} more" if len(speed.lines) > 1 else "")
        hint = (": the plan's operations would need a card faster than the models accept, so the LPAR's coprocessors "
                "more likely ran mostly services the plan does not state (symmetric work, MACs, hashing)"
                if speed.factor < 1 else "")
        sources.update({n: f"the coprocessor speed factor {speed.factor:.4g}: the mean EXEC TIME "
                           f"{speed.measured_ms:.4g} ms of {first} on the plan's mix, {speed.model_ms:.4g} ms "
                           f"before{hint}" for n in COPROCESSOR_TIMES})
    _out_of_bounds(values, sources)
    residuals = [{"label": o.label, "quantity": o.quantity, "site": o.value, "before": b, "after": a}
                 for o, b, a in zip(observations, before, after)]
    lost, reproduced_before = _contradicted(published, values)
    section = _parameter_section(doc, identified, measured, published, values, stderr, speed)
    try:   # the file written must load: the same checks as any parameter file
        validate_params({"parameters": section}, "the calibrated parameters")
    except ParameterFileError as e:
        raise CalibrationError(f"{e}; the site numbers cannot be met with a valid parameter set") from None
    return Calibration(parameters=section,
                       identified=identified, unidentified=unidentified, moved=moved,
                       residuals=residuals, consistency=util_consistency(rows), contradicted=lost,
                       reproduced_before=reproduced_before, cost=cost, measured=direct, solution=solution,
                       covariance=_site_covariance(doc, values, solution, measured, speed),
                       bootstrap=_site_bootstrap(doc, _site_set(solution, measured, speed)), speed=speed)
