"""Fit the domain models' parameters to the published figures (SciPy least squares).

Each *target* pairs a figure of ``data/figures.csv`` with the model's
prediction of the same quantity under the same conditions.  Residuals are
taken in log-ratio space, so a percentage change and an absolute time weigh
alike, and each is divided by the figure's tolerance (floored at 1%):

.. math::

    r_i = \\frac{\\ln(\\hat y_i / y_i)}{\\max(\\tau_i, 0.01)}, \\qquad
    y = 1 + v/100 \\text{ for a percentage change}.

``up_to`` statements compare the extreme model value over the stated
conditions; bounds contribute only when violated.  Parameters are bounded
(exponents by the ranges the reference facts give), standard errors come from
the Jacobian at the optimum, :math:`\\mathrm{cov} = s^2 (J^T J)^{-1}`.

Derived parameters (read straight from rows, not fitted) are listed with the
row they come from.

References
----------
.. [1] SciPy ``scipy.optimize.least_squares`` (trust-region reflective).
.. [2] M. Newville et al., LMFIT (how to report standard errors of bounded fits).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import least_squares

from .figures import figure, load_figures
from .params import using_params

__all__ = ["Target", "targets", "FREE", "derived_parameters", "fit", "predict_all",
           "figure_table", "crossvalidate"]


@dataclass(frozen=True)
class Target:
    """A published figure and the model's prediction of it."""

    figure_id: str
    predict: Callable[[], float]
    how: str  # what the prediction computes, for the report


# Free parameters: name -> (initial value source, low, high, unit, sub-model, description)
FREE = {
    "cop_rsa_ms_2048": (0.1, 5.0, "ms", "crypto", "coprocessor time per RSA-2048 private-key sign"),
    "acc_me_ms_2048": (0.005, 0.5, "ms", "crypto", "accelerator time per RSA-2048 ME (public-key) op"),
    "acc_crt_ms_2048": (0.05, 5.0, "ms", "crypto", "accelerator time per RSA-2048 CRT (private-key) op"),
    "exp_private": ("ref_scaling_private_exponent", None, "1", "crypto", "key-size exponent, private-key ops"),
    "exp_public": ("ref_scaling_public_exponent", None, "1", "crypto", "key-size exponent, public-key ops"),
    "cop_ecc_ms_192": (0.01, 20.0, "ms", "crypto", "coprocessor time per NISTECC-192 sign or verify"),
    "exp_ecc": (0.0, 4.0, "1", "crypto", "key-size exponent, NISTECC ops"),
    "ams_path_ms": (0.0, 20.0, "ms", "ams", "non-crypto elapsed time per transaction, 1 requester"),
    "ams_path_ms_per_kb": (0.0, 1.0, "ms/KB", "ams", "elapsed time per KB of message"),
    "ams_enc_ms_per_kb": (0.0, 1.0, "ms/KB", "ams", "extra elapsed time per KB for encrypting policies"),
    "mstr_admin_us_per_s": (0.0, 1e6, "us/s", "ams", "MQ MSTR administration CPU per second"),
    "ams_asym_us": (0.0, 1000.0, "us", "ams", "AMS CPU per asymmetric operation (AMSM)"),
    "ams_hash_us_per_kb": (0.0, 100.0, "us/KB", "ams", "AMS hashing CPU per KB (signing policies)"),
    "ams_enc_us_per_kb": (0.0, 100.0, "us/KB", "ams", "AMS symmetric encryption CPU per KB"),
}


def derived_parameters() -> dict:
    """Parameters read from rows (name -> (value, figure id, unit, sub-model, description))."""
    return {
        "acc_parallelism": (figure("s001_rmf2_sum_util").target() / figure("s001_rmf2_accel_summary_util").target(),
                            "s001_rmf2_sum_util / s001_rmf2_accel_summary_util", "1", "crypto",
                            "requests one accelerator serves at once: by-function utilizations sum "
                            "past the 100% summary"),
        "cop_engines": (1.0, "structural assumption", "1", "crypto",
                        "requests one coprocessor card serves at once (RMF reports it as one server)"),
        "mq_base_us": (figure("ref_ams_txn_cost_2k_none_z14").target(), "ref_ams_txn_cost_2k_none_z14",
                       "us", "ams", "MQ CPU per request/reply transaction without AMS"),
    }


def _initial(name: str) -> tuple[float, float, float]:
    spec = FREE[name]
    if isinstance(spec[0], str):
        f = figure(spec[0])
        return 0.5 * (f.low + f.high), f.low, f.high
    lo, hi = spec[0], spec[1]
    seeds = {"cop_rsa_ms_2048": "s001_rmf_cex8c_exec_ms", "acc_me_ms_2048": "s001_rmf_me2048_exec_ms",
             "acc_crt_ms_2048": "s001_rmf_crt2048_exec_ms"}
    x0 = figure(seeds[name]).target() if name in seeds else (lo + hi) / 2 if hi < 100 else lo + 1.0
    return min(max(x0, lo), hi), lo, hi


# ----------------------------------------------------------------- targets
def targets() -> list[Target]:
    """Every figure the crypto and AMS models predict, with how."""
    from . import ams

    def tput(pol, kt, n, kb, reuse=None):
        return float(ams.ams_throughput(pol, kt, n, kb, reuse))

    def cost(pol, kt, n, kb, reuse=None):
        return float(ams.ams_cost_us(pol, kt, n, kb, reuse))

    def pct(a, b):
        return 100.0 * (a / b - 1.0)

    def msg_us(pol, kb, reuse=None):
        # AMS CPU to protect + unprotect one message (what the z14 report tabulates)
        n_asym = sum(ams.ams_operations(pol, reuse).values())
        from .params import param
        sign = pol in ("integrity", "privacy")
        enc = pol in ("privacy", "confidentiality")
        return n_asym * param("ams_asym_us") + kb * (sign * param("ams_hash_us_per_kb")
                                                     + enc * param("ams_enc_us_per_kb"))

    from .params import param
    me_rate = figure("s001_rmf_me2048_rate").target()
    crt_rate = figure("s001_rmf_crt2048_rate").target()
    rsa_policies = [("integrity", None), ("privacy", None), ("confidentiality", 1)]

    def worst_cost_change(kb, n_from, n_to):
        return max(pct(cost(p, "RSA", n_to, kb, r), cost(p, "RSA", n_from, kb, r)) for p, r in rsa_policies)

    t = [
        Target("s001_rmf_cex8c_exec_ms", lambda: param("cop_rsa_ms_2048"), "coprocessor sign time, RSA 2048"),
        Target("s001_rmf_me2048_exec_ms", lambda: param("acc_me_ms_2048"), "ME time, RSA 2048"),
        Target("s001_rmf_crt2048_exec_ms", lambda: param("acc_crt_ms_2048"), "CRT time, RSA 2048"),
        Target("s001_rmf_cex8a_exec_ms",
               lambda: (me_rate * param("acc_me_ms_2048") + crt_rate * param("acc_crt_ms_2048")) / (me_rate + crt_rate),
               "rate-weighted mean of ME and CRT times at the RMF rates"),
        Target("s001_rmf_accel_total_rate", lambda: me_rate + crt_rate, "ME rate + CRT rate"),
        Target("s001_2k_integrity_tput_1024", lambda: tput("integrity", "RSA", 1024, 2), "X, 1 requester"),
        Target("s001_2k_integrity_tput_4096", lambda: tput("integrity", "RSA", 4096, 2), "X, 1 requester"),
        Target("s001_2k_integrity_tput_change",
               lambda: pct(tput("integrity", "RSA", 4096, 2), tput("integrity", "RSA", 1024, 2)), "X(4096)/X(1024)"),
        Target("s001_2k_conf32_tput_4096",
               lambda: 100 * tput("confidentiality", "RSA", 4096, 2, 32) / tput("confidentiality", "RSA", 1024, 2, 32),
               "X(4096)/X(1024), reuse 32"),
        Target("s001_64k_conf32_tput_4096",
               lambda: 100 * tput("confidentiality", "RSA", 4096, 64, 32) / tput("confidentiality", "RSA", 1024, 64, 32),
               "X(4096)/X(1024), reuse 32"),
        Target("s001_4m_tput_keysize",
               lambda: min(pct(tput("privacy", "RSA", n, 4096), tput("privacy", "RSA", 1024, 4096)) for n in (2048, 4096)),
               "largest drop over 2048 and 4096 vs 1024, Privacy 4MB"),
        Target("s001_2k_tput_rsa1024_vs_ecc192",
               lambda: pct(tput("integrity", "RSA", 1024, 2), tput("integrity", "NISTECC", 192, 2)), "2KB"),
        Target("s001_tput_ecc521_vs_rsa4096",
               lambda: max(pct(tput("integrity", "NISTECC", 521, kb), tput("integrity", "RSA", 4096, kb))
                           for kb in (2, 64, 4096)), "max over 2KB, 64KB, 4MB"),
        Target("s001_2k_cost_1024_to_2048", lambda: worst_cost_change(2, 1024, 2048), "max over policies"),
        Target("s001_2k_cost_2048_to_4096", lambda: worst_cost_change(2, 2048, 4096), "max over policies"),
        Target("s001_64k_cost_1024_to_2048", lambda: worst_cost_change(64, 1024, 2048), "max over policies"),
        Target("s001_64k_cost_2048_to_4096", lambda: worst_cost_change(64, 2048, 4096), "max over policies"),
        Target("s001_4m_cost_keysize", lambda: max(worst_cost_change(4096, 1024, n) for n in (2048, 4096)),
               "max over policies and 2048/4096 vs 1024"),
        Target("ref_ams_txn_cost_2k_confidentiality_z14",
               lambda: param("mq_base_us") + 2 * msg_us("confidentiality", 2, 32), "base + 2 messages"),
    ]
    for pol, reuse in (("integrity", None), ("privacy", None), ("confidentiality", 32)):
        for kb, tag in ((2, "2k"), (4096, "4m")):
            t.append(Target(f"ref_ams_cost_{tag}_{pol}_z14", (lambda p=pol, k=kb, r=reuse: msg_us(p, k, r)),
                            "asymmetric ops x cost + per-KB hashing/encryption"))
    return t


def _to_ratio(fig, v: float) -> float:
    if fig.unit == "pct_change":
        return 1.0 + v / 100.0
    if fig.unit in ("pct_of_baseline", "pct"):
        return v / 100.0
    return v


def _residual(fig, model: float) -> float:
    m = _to_ratio(fig, model)
    w = max(fig.tolerance, 0.01)
    if m <= 0:
        return 1e3
    if fig.kind in ("upper_bound", "lower_bound"):
        lo, hi = fig.bounds()
        if fig.kind == "upper_bound" and model > hi:
            return math.log(m / _to_ratio(fig, hi)) / w
        if fig.kind == "lower_bound" and model < lo:
            return math.log(m / _to_ratio(fig, lo)) / w
        return 0.0
    return math.log(m / _to_ratio(fig, fig.target())) / w


def _values(x) -> dict:
    vals = {k: v[0] for k, v in derived_parameters().items()}
    vals.update(dict(zip(FREE, x)))
    return vals


def predict_all(values: dict, tlist=None) -> dict:
    """Model prediction of every target under the given parameter values."""
    out = {}
    with using_params(values):
        for t in tlist or targets():
            out[t.figure_id] = float(t.predict())
    return out


def fit(exclude=(), max_nfev=400) -> dict:
    """Fit the free parameters to every target except ``exclude`` (figure ids).

    Returns
    -------
    dict
        ``{"parameters": {name: {value, stderr, unit, submodel, description, source}},
        "residuals": [...], "seconds": ..., "cost": ...}``
    """
    t0 = time.perf_counter()
    tlist = [t for t in targets() if t.figure_id not in set(exclude)]
    figs = [figure(t.figure_id) for t in tlist]
    init = [_initial(n) for n in FREE]
    x0 = np.array([i[0] for i in init])
    lo = np.array([i[1] for i in init])
    hi = np.array([i[2] for i in init])

    def fun(x):
        with using_params(_values(x)):
            return np.array([_residual(f, t.predict()) for f, t in zip(figs, tlist)])

    res = least_squares(fun, x0, bounds=(lo, hi), x_scale="jac", method="trf", max_nfev=max_nfev)
    m, n = res.fun.size, res.x.size
    dof = max(m - n, 1)
    s2 = float(res.fun @ res.fun) / dof
    try:
        cov = np.linalg.pinv(res.jac.T @ res.jac) * s2
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    except np.linalg.LinAlgError:
        se = np.full(n, np.nan)
    at_bound = (np.isclose(res.x, lo, rtol=1e-6, atol=1e-12) | np.isclose(res.x, hi, rtol=1e-6, atol=1e-12))
    params = {}
    for i, name in enumerate(FREE):
        spec = FREE[name]
        params[name] = {"value": float(res.x[i]),
                        "stderr": None if (at_bound[i] or not np.isfinite(se[i])) else float(se[i]),
                        "unit": spec[2], "submodel": spec[3], "description": spec[4],
                        "source": "fit" + (" (at bound)" if at_bound[i] else "")}
    for name, (val, src, unit, sub, desc) in derived_parameters().items():
        params[name] = {"value": float(val), "stderr": None, "unit": unit, "submodel": sub,
                        "description": desc, "source": src}
    return {"parameters": params, "cost": float(res.cost), "nfev": int(res.nfev),
            "seconds": time.perf_counter() - t0, "excluded": sorted(exclude)}


def figure_table(values: dict) -> list[dict]:
    """Published vs model for every target figure, with residual and verdict."""
    preds = predict_all(values)
    rows = []
    for fid, model in preds.items():
        f = figure(fid)
        lo, hi = f.bounds()
        pub = f.target()
        rows.append({"id": fid, "source": f.source, "quantity": f.quantity, "unit": f.unit,
                     "kind": f.kind, "published": pub, "low": f.low, "high": f.high, "model": model,
                     "residual": model - pub,
                     "relative_error": (model - pub) / abs(pub) if pub else None,
                     "tolerance": f.tolerance, "within_tolerance": bool(lo <= model <= hi)})
    return rows


def crossvalidate() -> list[dict]:
    """Leave-one-out: refit without each target figure and predict it."""
    out = []
    for t in targets():
        doc = fit(exclude=(t.figure_id,), max_nfev=200)
        vals = {k: v["value"] for k, v in doc["parameters"].items()}
        pred = predict_all(vals, [t])[t.figure_id]
        f = figure(t.figure_id)
        out.append({"id": t.figure_id, "published": f.target(), "loo_prediction": pred,
                    "relative_error": (pred - f.target()) / abs(f.target()) if f.target() else None})
    return out


def write_params(doc: dict, path) -> None:
    """Write a parameter document atomically (temporary file, then rename)."""
    import os
    import tempfile
    from pathlib import Path
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


_ = load_figures  # re-exported for callers that fit against their own table
