"""What a fit shows: the published-vs-model table, the known misses, the check against the
committed parameter file, and the parameter file's text.

:func:`figure_table` lists every figure a model predicts with the model's value and a verdict
(within tolerance or not, and then the reason :func:`known_misses` gives);
:func:`fit_differences` says where a fresh fit disagrees with a committed parameter document,
with the allowances :data:`REFIT_SIGMAS`, :data:`REFIT_BOUND_ATOL` and :data:`REFIT_COST_RTOL`;
:func:`params_text` and :func:`write_params` write a parameter document.
"""

from __future__ import annotations

import csv
import json
import re
import math
import os
import tempfile
from pathlib import Path

import numpy as np

from ..datafiles import data_path
from ..figures import figure, source_label
from ..params import using_values, validate_params
from ..zos.tls import roundtrip_figure_ids, tls_roundtrip_us
from .free import FREE, PRIORS, free_bounds, role
from .scoring import fit_cost, roundtrip_cost
from .targets import predict_all, targets

__all__ = ["known_misses", "figure_table_ids", "figure_table", "figure_row", "REFIT_SIGMAS", "REFIT_BOUND_ATOL",
           "REFIT_COST_RTOL", "fit_differences", "params_text", "write_params", "weak_parameters",
           "bound_parameters",
           "parameter_roles", "covariance_section"]


def known_misses() -> dict:
    """Figures the shipped models are known not to reproduce: id -> reason (``data/misses.csv``).

    Each reason says why the model's structure cannot meet the figure;
    ``tests/test_fit.py`` fails when the list and the fit disagree.
    """
    with open(data_path("misses.csv"), encoding="utf-8", newline="") as fh:
        return {r["id"]: r["reason"] for r in csv.DictReader(fh)}


def weak_parameters(doc: dict) -> dict:
    """The fitted parameters whose standard error exceeds their value, or that the figures do
    not identify at all: name -> ``(partner, correlation)``, the parameter it moves with most
    (None when there is no covariance to read).

    Parameters
    ----------
    doc : dict
        A fit (:func:`cryptoplan.model.calibration.fitting.fit`) with its ``solutions``.
    """
    out = {}
    for sol in doc["solutions"].values():
        if sol.cov is None:
            continue
        sd = np.sqrt(np.abs(np.diag(sol.cov)))
        for i, name in enumerate(sol.names):
            se = sol.stderr[i]
            if not (np.isinf(se) or (np.isfinite(se) and se > abs(sol.x[i]))):
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                r = sol.cov[i] / (sd[i] * sd)
            r[i] = np.nan
            j = int(np.nanargmax(np.abs(r))) if np.any(np.isfinite(r)) else None
            out[name] = (None, None) if j is None else (sol.names[j], float(r[j]))
    return out


def covariance_section(doc: dict) -> dict:
    """The fit's covariances as a parameter file keeps them: ``{group: {"names", "matrix"}}``.

    One block per least-squares problem (:data:`~cryptoplan.model.calibration.free.GROUPS` and
    the round trips), over the parameters that have a standard error (not on a bound, not held,
    identified), in the parameters' units squared: what
    :func:`cryptoplan.model.calibration.draws.parameter_draws` draws from.  A parameter outside
    every block has no uncertainty the fit can state and is drawn at its value.
    """
    out = {}
    for group, sol in doc["solutions"].items():
        names, cov = sol.covariance_block()
        if names:
            out[group] = {"names": names, "matrix": cov.tolist()}
    return out


def bound_parameters(doc: dict) -> list[str]:
    """The fitted parameters the figures put on a bound of theirs, in the fit's order.

    Such a parameter has no standard error (:meth:`~cryptoplan.model.calibration.leastsq.Solution.flag`):
    its uncertainty is one-sided, and the bootstrap refits leave the bound in one direction only.

    Parameters
    ----------
    doc : dict
        A fit (:func:`cryptoplan.model.calibration.fitting.fit`) with its ``solutions``.
    """
    return [name for sol in doc["solutions"].values() for i, name in enumerate(sol.names)
            if sol.flag(i) == "at bound"]


def parameter_roles(doc: dict) -> dict:
    """What ``cryptoplan fit`` prints after each fitted parameter: its role (planning or
    descriptive: :func:`cryptoplan.model.calibration.free.role`; the round-trip model's are
    planning), whether a prior holds it, and whether its standard error exceeds its value."""
    weak = weak_parameters(doc)
    out = {}
    for sol in doc["solutions"].values():
        for name in sol.names:
            tag = role(name) if name in FREE else "planning"
            if name in PRIORS:
                tag += ", prior"
            if name in weak:
                tag += ", standard error above the value: see below"
            out[name] = f"[{tag}]"
    return out


def figure_table_ids() -> list[str]:
    """The ids :func:`figure_table` lists, in its order (the figures table's layout,
    without evaluating a model)."""
    ids = [t.figure_id for t in targets()]
    return ids + [fid for fid in roundtrip_figure_ids() if fid not in set(ids)]


def figure_table(values: dict) -> list[dict]:
    """Published vs model for every figure a model predicts, with residual and verdict.

    The targets of the fitted sub-models, then the round-trip rows.  ``reason``
    is the listed reason (:func:`known_misses`) for a figure out of tolerance.

    Parameters
    ----------
    values : dict
        Parameter name -> value (a parameter file's values), each in its unit.

    Returns
    -------
    list of dict
        One per figure (:func:`figure_table_ids`' order): ``id``, ``source``, ``quantity``,
        ``conditions``, ``unit``, ``kind``, ``published``, ``low``, ``high``, ``model`` (in the
        figure's unit), ``residual`` (model - published), ``relative_error`` (None where the
        published value is 0), ``tolerance``, ``accepted_low`` and ``accepted_high`` (the
        interval the model must fall in, :meth:`~cryptoplan.model.figures.Figure.bounds`; None
        for an open end), ``within_tolerance`` (the model inside it) and ``reason``.
    """
    preds = predict_all(values)
    with using_values(values):
        for fid in roundtrip_figure_ids():
            c = figure(fid).conditions
            preds[fid] = float(tls_roundtrip_us(c["mode"], c["cipher"], float(c["message_kb"])))
    misses = known_misses()
    return [figure_row(figure(fid), preds[fid], misses) for fid in figure_table_ids()]


def figure_row(f, model: float, misses: dict) -> dict:
    """One row of :func:`figure_table` (and of the predictions' table): figure ``f`` against the
    model's value ``model`` in its unit, scored against its accepted interval, with the reason
    ``misses`` (:func:`known_misses`) gives when it is outside."""
    lo, hi = f.bounds()
    pub = f.target()
    ok = bool(lo <= model <= hi)
    return {"id": f.id, "source": source_label(f.source), "quantity": f.quantity,
            "conditions": "; ".join(f"{k}={v}" for k, v in f.conditions.items() if v),
            "unit": f.unit, "kind": f.kind, "published": pub, "low": f.low, "high": f.high,
            "model": model, "residual": model - pub,
            "relative_error": (model - pub) / abs(pub) if pub else None,
            "tolerance": f.tolerance, "accepted_low": lo if math.isfinite(lo) else None,
            "accepted_high": hi if math.isfinite(hi) else None, "within_tolerance": ok,
            "reason": "" if ok else misses.get(f.id, "not listed in data/misses.csv")}


# How far a fresh fit may stand from the committed one (see fit_differences).
REFIT_SIGMAS = 1e-2
REFIT_BOUND_ATOL = 1e-9
REFIT_COST_RTOL = 1e-5


def fit_differences(fresh: dict, committed: dict, *, sigmas: float = REFIT_SIGMAS,
                    bound_atol: float = REFIT_BOUND_ATOL, cost_rtol: float = REFIT_COST_RTOL) -> list[str]:
    """Where a fresh fit disagrees with a committed parameter document; ``[]`` when it does not.

    Three checks, each with an allowance that follows from what can differ
    between two honest fits of the same figures with the same model:

    1. **The committed costs, re-evaluated.**  :func:`fit_cost` and
       :func:`roundtrip_cost` at the committed parameters must equal the costs
       recorded with them (``fit.cost``, ``fit.roundtrip_cost``) to 1e-9 relative:
       no optimiser is involved, so only rounding may differ.  Any edit of a
       fitted figure or of the model's arithmetic changes it.
    2. **The parameters, refitted.**  Another NumPy, SciPy or BLAS rounds
       differently, and the fit does not end at one point to the last digit:
       the TLS sub-model's cost has kinks (targets that are the largest or
       smallest of several conditions switch condition), and least squares
       stops where a kink and its tolerances meet.  Measured: the committed
       file refitted with NumPy 2.4.6/SciPy 1.17.1 moved by at most
       :math:`2.7\\times10^{-4}\\sigma`; starting points moved by 1e-9
       relative (a rounding difference) end up to
       :math:`4.4\\times10^{-7}\\sigma` apart at
       :data:`~cryptoplan.model.calibration.fitting.FIT_TOL`
       (:math:`1.1\\times10^{-4}\\sigma` at SciPy's default; up to
       :math:`1.5\\times10^{-3}\\sigma`, and at SciPy's default two minima
       tenths of a :math:`\\sigma` apart, while the TLS range figures were
       scored on their farthest condition, a cost with jumps).  A figure edited by one
       tolerance and refitted moves the parameters it pins by tenths of a
       :math:`\\sigma`.  So a fitted parameter with a standard error must
       satisfy :math:`|x - x_c| \\le \\text{sigmas}\\,\\sigma_c` (1e-2: about
       37 times the largest move measured, 10 times below an edit's); one on a
       bound, or not identified by the figures (no standard error),
       :math:`|x - x_c| \\le \\text{bound\\_atol}\\,(hi - lo)`, a floor for a
       value the bound pins; a parameter read from a row (derived), equality
       to 1e-12 relative; and every parameter keeps its source (fit, at
       bound, derived).
    3. **The refitted cost**, to ``cost_rtol`` relative (1e-5; measured under
       the moves above: up to 4e-6).

    Parameters
    ----------
    fresh : dict
        A :func:`fit` result.
    committed : dict
        A parameter document (``data/params.json``): ``{"parameters": ..., "fit": {"cost": ...}}``.
    sigmas, bound_atol, cost_rtol : float
        The allowances of checks 2 and 3.

    Returns
    -------
    list of str
        One line per disagreement, naming the parameter, both values and the allowance.
    """
    new, old = fresh["parameters"], committed["parameters"]
    recorded = committed.get("fit")
    if not isinstance(recorded, dict) or "cost" not in recorded:
        # a site calibration's or a hand-written file: the models load it, but no fit made it
        return ["the parameter file has no fit block (fit.cost): it is not the output of `cryptoplan fit`, "
                "so there is no fit to compare (a calibrated or hand-written file; check it with "
                "`cryptoplan calibrate` or compare against data/params.json)"]
    cost_c = float(recorded["cost"])
    out = _recorded_cost_differences(committed)
    for name in sorted(set(new) ^ set(old)):
        out.append(f"{name}: only in the {'fresh fit' if name in new else 'committed file'}")
    for name in sorted(set(new) & set(old)):
        out += _parameter_differences(name, new[name], old[name], sigmas, bound_atol)
    cost = float(fresh["cost"])
    if not abs(cost - cost_c) <= cost_rtol * abs(cost_c):
        out.append(f"cost: fresh fit {cost:.12g}, committed {cost_c:.12g} (> {cost_rtol:g} relative)")
    return out


def _recorded_cost_differences(committed: dict) -> list[str]:
    """Check 1 of :func:`fit_differences`: the committed costs re-evaluated, to 1e-9 relative."""
    out = []
    recorded = committed["fit"]
    values = {k: float(v["value"]) for k, v in committed["parameters"].items()}
    cost_c = float(recorded["cost"])
    for what, again, then in (("cost", fit_cost(values), cost_c),
                              ("round-trip cost", roundtrip_cost(values), recorded.get("roundtrip_cost"))):
        if then is None:
            out.append(f"{what}: not recorded in the committed file")
        elif not abs(again - float(then)) <= 1e-9 * abs(float(then)):
            out.append(f"{what} at the committed parameters: now {again:.12g}, recorded {float(then):.12g}: "
                       "the figures, the model or the parameter values changed since the fit")
    return out


def _parameter_differences(name: str, a: dict, b: dict, sigmas: float, bound_atol: float) -> list[str]:
    """Check 2 of :func:`fit_differences` for one parameter: fresh entry ``a``, committed ``b``."""
    out = []
    x, xc = float(a["value"]), float(b["value"])
    if a.get("source") != b.get("source"):
        out.append(f"{name}: source {a.get('source')!r}, committed {b.get('source')!r}")
    if not str(b.get("source", "")).startswith("fit"):
        allowed, how = 1e-12 * abs(xc), "1e-12 relative (read from a row)"
    elif b.get("stderr") is not None:
        allowed, how = sigmas * float(b["stderr"]), f"{sigmas:g} standard errors"
    else:
        lo, hi = free_bounds(name) if name in FREE else (0.0, max(abs(xc), 1.0))
        allowed, how = bound_atol * (hi - lo), f"{bound_atol:g} of the bound interval"
    if not abs(x - xc) <= allowed:
        out.append(f"{name}: fresh {x:.12g}, committed {xc:.12g} (|diff| {abs(x - xc):.3g} > {how}, "
                   f"{allowed:.3g})")
    return out


def params_text(doc: dict) -> str:
    """A parameter document as a parameter file holds it: sorted keys, indented JSON, a list of
    numbers (a covariance matrix's row, a bootstrap draw) on one line."""
    text = json.dumps(doc, indent=2, sort_keys=True)
    return _NUMBER_LIST.sub(lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]", text) + "\n"


_NUMBER = r"-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|Infinity|NaN)"
_NUMBER_LIST = re.compile(r"\[\s*(" + _NUMBER + r"(?:,\s*" + _NUMBER + r")*)\s*\]")


def write_params(doc: dict, path) -> None:
    """Write a parameter document atomically (temporary file, then rename).

    The command line writes through ``cryptoplan.workbook.engine.atomic_target`` instead
    (its temporary files are swept after a kill); this is the model layer's own writer.

    Raises
    ------
    cryptoplan.model.params.ParameterFileError
        A value or a relation the models would refuse to load
        (:func:`~cryptoplan.model.params.validate_params`; the names are the document's own);
        nothing is written.
    """
    validate_params(doc, f"the parameters for {path}", names=False)
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(params_text(doc))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
