"""Calibrate the card-time parameters on a site's own RMF Crypto Hardware Activity report.

The published fit (:mod:`model.fit`) gives IBM's measured card times; every source ends
with "measure in your own environment".  A site's RMF Crypto Hardware Activity report
gives, per Crypto Express card, the request rate, the average execution time (RMF
"EXEC TIME", the card's service time per request, without queueing) and the
utilization, and for accelerators the ME- and CRT-format RSA rows by key length.  This
module turns those rows into site observations, finds which parameters they identify,
refits those (the others keep their published values) and reports what moved.

The statistical model, in log space (every parameter is positive):

.. math::

    r_i = \\frac{\\ln m_i(\\theta) - \\ln y_i}{\\sigma_i}, \\qquad
    r_{p,j} = \\frac{\\ln \\theta_j - \\ln \\theta_{0,j}}{\\sigma_p}

``y_i`` is a report's EXEC TIME, ``m_i`` the model's card time for that row's function,
key length and card generation (:func:`model.crypto.function_ms`), ``sigma_i`` its
relative uncertainty: RMF prints milliseconds to three decimals (half a unit, uniform:
:math:`0.0005/\\sqrt{3}` ms) with a floor of :data:`MEASUREMENT_RTOL` for the variation
between intervals.  The published values :math:`\\theta_0` enter as a weak prior,
:data:`PRIOR_SIGMA` = ln 2 (a factor of two at one standard deviation): it only keeps a
parameter the data barely see from wandering, it does not pull an identified one.

A parameter is *identified* when the site rows shrink its prior uncertainty at least
:data:`IDENTIFIED_SHRINK`-fold (posterior standard deviation from
:math:`(J^T J + I/\\sigma_p^2)^{-1}` at the published values, J the rows' Jacobian in log
parameters); only those are refitted.

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report (SC34-2665).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from .ams import card_generation_factor
from .crypto import CARD_FUNCTIONS, function_ms
from .datafiles import read_csv_table
from .params import load_params, using_params

__all__ = ["RMF_COLUMNS", "RMF_FUNCTIONS", "PRIOR_SIGMA", "MEASUREMENT_RTOL", "IDENTIFIED_SHRINK",
           "CalibrationError", "RmfRow", "Observation", "Calibration", "read_rmf_crypto",
           "rmf_observations", "calibrate"]

# The report's column headings (RMF prints EXEC TIME in ms, UTIL% in percent, RATE per second).
RMF_COLUMNS = ("TYPE", "ID", "FUNCTION", "KEY", "RATE", "EXEC TIME", "UTIL%")
# FUNCTION: TOTAL for a card's summary line; ME and CRT for the accelerator's
# "ME-FORMAT RSA OPERATIONS" and "CRT-FORMAT RSA OPERATIONS" lines.
RMF_FUNCTIONS = ("TOTAL", "ME", "CRT")
_RSA_KEYS = (1024, 2048, 3072, 4096)
_ECC_KEYS = (192, 224, 256, 384, 521)
PRIOR_SIGMA = math.log(2.0)
MEASUREMENT_RTOL = 0.01
IDENTIFIED_SHRINK = 10.0
_TYPE = re.compile(r"CEX([5-8])([CAP])")


class CalibrationError(ValueError):
    """Site data that cannot be used: names the file, the line and what is accepted."""


@dataclass(frozen=True)
class RmfRow:
    """One line of the Crypto Hardware Activity report."""

    line: int
    type: str          # e.g. CEX8C
    id: str            # card (AP) number as printed
    function: str      # TOTAL, ME or CRT
    key: int | None    # key length (ME/CRT rows)
    rate: float        # requests per second
    exec_ms: float     # EXEC TIME, ms
    util_pct: float    # UTIL%

    @property
    def generation(self) -> str:
        return f"CEX{self.type[3]}S"

    @property
    def card(self) -> str:
        return {"C": "coprocessor", "A": "accelerator"}[self.type[4]]


@dataclass(frozen=True)
class Observation:
    """A site number the model predicts from parameters."""

    label: str
    value: float
    sigma: float                 # relative (log-space) standard deviation
    function: str                # card function (model.crypto.CARD_FUNCTIONS)
    key_bits: float
    generation_factor: float

    def predict(self) -> float:
        """The model's value under the parameters in force (:func:`model.params.using_params`)."""
        return float(function_ms(self.function, self.key_bits)) * self.generation_factor


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

    def document(self) -> dict:
        """A parameter file (``CRYPTOPLAN_PARAMS``) with the calibrated values."""
        return {"parameters": self.parameters,
                "calibration": {"identified": self.identified, "unidentified": self.unidentified,
                                "prior_sigma": PRIOR_SIGMA, "cost": self.cost}}


def _number(path, line, column, text, lo=0.0):
    try:
        v = float(text)
    except ValueError:
        raise CalibrationError(f"{path} line {line}: {column} {text!r} is not a number") from None
    if not math.isfinite(v) or v < lo:
        raise CalibrationError(f"{path} line {line}: {column} {text!r} must be a finite number >= {lo:g}")
    return v


def read_rmf_crypto(path) -> list[RmfRow]:
    """Read a CSV of the report's lines, with the columns :data:`RMF_COLUMNS`.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV.  One row per printed line: ``TYPE`` as RMF prints it (``CEX8C``
        coprocessor, ``CEX8A`` accelerator; CEX5 to CEX8), ``ID`` the card number,
        ``FUNCTION`` ``TOTAL`` (the card's line) or ``ME``/``CRT`` (accelerator RSA rows),
        ``KEY`` the key length of an ME/CRT row (empty on TOTAL lines), ``RATE`` per second,
        ``EXEC TIME`` in ms, ``UTIL%`` in percent.

    Raises
    ------
    CalibrationError
        For anything else, naming the file, the line and what is accepted.
    """
    path = str(path)
    rows = []
    for line, cells in read_csv_table(path, RMF_COLUMNS, "an RMF crypto table", CalibrationError,
                                      heading=str.upper):
        r = {h: v.strip() for h, v in cells.items()}
        m = _TYPE.fullmatch(r["TYPE"].upper())
        if not m:
            raise CalibrationError(f"{path} line {line}: TYPE {r['TYPE']!r} is not a Crypto Express type as RMF "
                                   "prints it (CEX5C to CEX8C coprocessors, CEX5A to CEX8A accelerators)")
        if m.group(2) == "P":
            raise CalibrationError(f"{path} line {line}: TYPE {r['TYPE']} is an EP11 coprocessor, which the "
                                   "models do not cover (CCA coprocessors CEXnC, accelerators CEXnA)")
        if m.group(1) == "5":
            raise CalibrationError(f"{path} line {line}: TYPE {r['TYPE']}: the models know CEX6S to CEX8S "
                                   "card times; a CEX5S has no published comparison")
        func = r["FUNCTION"].upper()
        if func not in RMF_FUNCTIONS:
            raise CalibrationError(f"{path} line {line}: FUNCTION {r['FUNCTION']!r} is not one of "
                                   f"{', '.join(RMF_FUNCTIONS)}")
        if func != "TOTAL" and m.group(2) != "A":
            raise CalibrationError(f"{path} line {line}: {func} rows belong to accelerators (CEXnA), "
                                   f"not {r['TYPE']}")
        key = None
        if func == "TOTAL":
            if r["KEY"]:
                raise CalibrationError(f"{path} line {line}: a TOTAL line has no KEY (got {r['KEY']!r})")
        else:
            k = _number(path, line, "KEY", r["KEY"], 1)
            if k not in _RSA_KEYS:
                raise CalibrationError(f"{path} line {line}: KEY {r['KEY']!r} is not an RSA key length RMF "
                                       f"reports ({', '.join(map(str, _RSA_KEYS))})")
            key = int(k)
        rate = _number(path, line, "RATE", r["RATE"])
        exec_ms = _number(path, line, "EXEC TIME", r["EXEC TIME"])
        util = _number(path, line, "UTIL%", r["UTIL%"])
        if exec_ms == 0 and rate > 0:
            raise CalibrationError(f"{path} line {line}: EXEC TIME 0 with RATE {rate:g}: a card that serves "
                                   "requests takes time")
        rows.append(RmfRow(line, r["TYPE"].upper(), r["ID"], func, key, rate, exec_ms, util))
    if not rows:
        raise CalibrationError(f"{path}: no report lines under the header")
    return rows


def rmf_observations(rows, key_type: str = "RSA", key_size: int = 2048, path: str = "the RMF table") -> list:
    """The rows the card-time parameters predict, as :class:`Observation`.

    ME and CRT rows are the accelerator's RSA public- and private-key functions at their key
    length.  A coprocessor's TOTAL line is its CCA private-key function at the workload's key
    (``key_type``/``key_size``: the model has no mix of CCA functions, so the site says which
    key its coprocessor work uses).  An accelerator's TOTAL line mixes ME and CRT and is not an
    observation of one function: it is checked for consistency instead.  Lines with RATE 0
    (an idle card) carry no time.
    """
    if key_type not in ("RSA", "NISTECC"):
        raise CalibrationError(f"key_type must be RSA or NISTECC (got {key_type!r})")
    keys = _RSA_KEYS if key_type == "RSA" else _ECC_KEYS
    if key_size not in keys:
        raise CalibrationError(f"key_size for {key_type} must be one of {', '.join(map(str, keys))} (got {key_size!r})")
    out = []
    for r in rows:
        if r.rate == 0 or (r.card == "accelerator" and r.function == "TOTAL"):
            continue
        if r.function == "TOTAL":
            function, bits = ("CCA_RSA" if key_type == "RSA" else "CCA_ECC"), key_size
        else:
            function, bits = ("RSA_ME" if r.function == "ME" else "RSA_CRT"), r.key
        sigma = max(MEASUREMENT_RTOL, 0.0005 / math.sqrt(3.0) / r.exec_ms)
        label = f"{path} line {r.line}: {r.type} {r.id} {r.function}{'' if r.key is None else ' ' + str(r.key)}"
        out.append(Observation(label, r.exec_ms, sigma, function, float(bits), card_generation_factor(r.generation)))
    if not out:
        raise CalibrationError(f"{path}: no line carries a card time (every RATE is 0, or only accelerator "
                               "TOTAL lines, which mix ME and CRT)")
    return out


def _consistency(rows) -> list:
    """RMF's UTIL% against RATE x EXEC TIME: how far the report's own identity holds."""
    out = []
    for r in rows:
        if r.rate > 0 and r.function == "TOTAL":
            implied = r.rate * r.exec_ms / 10.0   # per s x ms -> percent
            out.append({"line": r.line, "card": f"{r.type} {r.id}", "util_pct": r.util_pct,
                        "rate_x_exec_pct": implied})
    return out


def _params_of(observations) -> list:
    names = []
    for o in observations:
        _, t0, alpha = CARD_FUNCTIONS[o.function]
        for n in (t0, alpha):
            if n not in names:
                names.append(n)
    return names


def _residuals(names, base, observations, logx, prior=True):
    values = dict(base)
    values.update({n: float(np.exp(v)) for n, v in zip(names, logx)})
    with using_params(values):
        m = np.array([o.predict() for o in observations])
    y = np.array([o.value for o in observations])
    s = np.array([o.sigma for o in observations])
    r = (np.log(m) - np.log(y)) / s
    if not prior:
        return r
    x0 = np.log([base[n] for n in names])
    return np.concatenate([r, (np.asarray(logx) - x0) / PRIOR_SIGMA])


def _jacobian(names, base, observations, logx, h=1e-6):
    r0 = _residuals(names, base, observations, logx, prior=False)
    cols = []
    for j in range(len(names)):
        x = np.array(logx, dtype=float)
        x[j] += h
        cols.append((_residuals(names, base, observations, x, prior=False) - r0) / h)
    return np.column_stack(cols)


def calibrate(observations, rows=()) -> Calibration:
    """Refit the parameters the site observations identify; keep the rest.

    Parameters
    ----------
    observations : list of Observation
        From :func:`rmf_observations`.
    rows : list of RmfRow, optional
        The report's lines, for the UTIL% consistency check.

    Returns
    -------
    Calibration
    """
    doc = load_params()
    base = {n: float(p["value"]) for n, p in doc["parameters"].items()}
    candidates = _params_of(observations)
    x0 = np.log([base[n] for n in candidates])
    J = _jacobian(candidates, base, observations, x0)
    post = np.linalg.pinv(J.T @ J + np.eye(len(candidates)) / PRIOR_SIGMA ** 2)
    sd = np.sqrt(np.clip(np.diag(post), 0.0, None))
    identified = [n for n, s in zip(candidates, sd) if s <= PRIOR_SIGMA / IDENTIFIED_SHRINK]
    unidentified = {}
    for n, s, col in zip(candidates, sd, J.T):
        if n in identified:
            continue
        unidentified[n] = ("no site line depends on it: no line of its card function, or every line at "
                           "the reference key length (RSA 2048, ECC 192 bits), where a key-length exponent "
                           "has no effect" if not np.any(np.abs(col) > 1e-9) else
                           f"the site lines leave it uncertain to a factor {math.exp(s):.2f} (1 sd); they "
                           "move it only together with other parameters (e.g. one key length cannot "
                           "separate a time from its key-length exponent)")
    before = [o.predict() for o in observations]
    values = dict(base)
    cost = 0.0
    stderr = {}
    if identified:
        xi = np.log([base[n] for n in identified])
        sol = least_squares(lambda x: _residuals(identified, base, observations, x), xi, method="lm")
        values.update({n: float(np.exp(v)) for n, v in zip(identified, sol.x)})
        cost = float(sol.cost)
        cov = np.linalg.pinv(sol.jac.T @ sol.jac)
        stderr = {n: float(np.exp(v) * math.sqrt(max(cov[j, j], 0.0)))
                  for j, (n, v) in enumerate(zip(identified, sol.x))}
    with using_params(values):
        after = [o.predict() for o in observations]
    parameters = {}
    for n, p in doc["parameters"].items():
        q = dict(p)
        if n in identified:
            q.update(value=values[n], stderr=stderr[n],
                     source=f"calibrated on site RMF data (published {base[n]:.6g})")
        parameters[n] = q
    moved = [{"name": n, "published": base[n], "calibrated": values[n], "ratio": values[n] / base[n],
              "stderr": stderr[n], "unit": doc["parameters"][n].get("unit", "")} for n in identified]
    residuals = [{"label": o.label, "site": o.value, "before": b, "after": a}
                 for o, b, a in zip(observations, before, after)]
    from .fit import figure_table
    published = {r["id"]: r for r in figure_table(base)}
    lost = [{"id": r["id"], "published": r["published"], "model": r["model"]}
            for r in figure_table(values) if not r["within_tolerance"] and published[r["id"]]["within_tolerance"]]
    return Calibration(parameters=parameters, identified=identified, unidentified=unidentified, moved=moved,
                       residuals=residuals, consistency=_consistency(rows), contradicted=lost,
                       reproduced_before=sum(r["within_tolerance"] for r in published.values()), cost=cost)
