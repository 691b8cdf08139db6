"""Leave-one-out cross-validation of the fit: refit without each figure and predict it.

:func:`crossvalidate` refits, for each target figure and each published round trip, only
the sub-model the figure belongs to (:func:`cryptoplan.model.calibration.fitting.fit` with
``exclude``), and compares the refitted model's prediction with the published value.  The
refits are independent and run in worker processes.

Whether the figures left in *determine* a left-out figure is said apart from whether its
prediction holds: a figure that is the only measurement of some quantity (the one NISTECC-192
rate, the one 2 KB round trip of a mode) can be predicted from the others only by what bounds
and priors say of that quantity, and one that lands within its tolerance then does so by
chance.  Each refit's covariance (the fit's one standard-error rule,
:mod:`cryptoplan.model.calibration.leastsq`) gives the left-out prediction's standard error by
the delta method,

.. math:: u_{\\hat y} = \\sqrt{g^T C g}, \\qquad g_j = \\partial \\hat y / \\partial \\theta_j

(central differences of the prediction over the refitted sub-model's parameters; a parameter a
bound holds contributes nothing, one the others do not identify makes it infinite).  The figure
is *determined* by the others when :math:`u_{\\hat y}` is at most its tolerance, the half-width
of its accepted interval.
"""

from __future__ import annotations

import concurrent.futures
import math
import multiprocessing
import os
import sys

import numpy as np

from ..errors import InputError
from ..figures import figure, table_in_force, using_figures
from ..params import load_params, using_values
from ..zos.tls import roundtrip_figure_ids, tls_roundtrip_us
from .fitting import fit
from .targets import targets

__all__ = ["crossvalidate"]


def _loo_one(job) -> dict:
    """One leave-one-out prediction: ``job = (figure id, group, figures table, base values)``.

    Module-level and self-contained so a worker process can run it.
    """
    fid, group, table, base = job
    with using_figures(table):
        doc = fit(exclude=(fid,), max_nfev=200, groups=(group,), start=base, stderr=True)
        vals = {**base, **{k: v["value"] for k, v in doc["parameters"].items()}}
        f = figure(fid)
        of = _predictor(fid, group)
        with using_values(vals):
            pred = float(of())
        se, unidentified = _prediction_se(fid, of, vals, doc["solutions"][group], pred)
        pub = f.target()
        lo, hi = f.bounds()
    return {"id": fid, "published": pub, "loo_prediction": pred,
            "relative_error": (pred - pub) / abs(pub) if pub else None,
            "within_tolerance": bool(lo <= pred <= hi),
            "prediction_se": se, "determined": bool(se <= (hi - lo) / 2.0), "unidentified": unidentified}


def _predictor(fid: str, group: str):
    """The model's value of figure ``fid`` under the parameters in force (arrays of k values: k answers)."""
    if group == "roundtrip":
        c = figure(fid).conditions
        return lambda: tls_roundtrip_us(c["mode"], c["cipher"], float(c["message_kb"]))
    [t] = [t for t in targets() if t.figure_id == fid]
    return t.predict


def _prediction_se(fid: str, of, vals: dict, sol, pred: float) -> tuple[float, list]:
    """The left-out prediction's standard error :math:`\\sqrt{g^T C g}` under the refit's covariance
    (module docstring), and the parameters it depends on that the refit does not identify.

    Central differences with the standard errors' steps
    (:func:`~cryptoplan.model.calibration.leastsq.standard_errors`: 1e-6 of the value), all
    parameter sets in one evaluation; a parameter on a bound (no variance: the bound holds it)
    adds nothing; one not identified (infinite standard error) that moves the prediction by more
    than 1e-6 of itself per relative unit makes the error infinite.
    """
    names = list(sol.names)
    x = np.array([vals[n] for n in names], dtype=float)
    h = 1e-6 * np.maximum(np.abs(x), 1e-12)
    cols = np.repeat(x[:, None], 2 * len(names), axis=1)
    cols[np.arange(len(names)), np.arange(len(names))] += h
    cols[np.arange(len(names)), len(names) + np.arange(len(names))] -= h
    with using_values({**vals, **{n: cols[i] for i, n in enumerate(names)}}):
        got = np.broadcast_to(np.asarray(of(), dtype=float).reshape(-1), (2 * len(names),))
    g = (got[:len(names)] - got[len(names):]) / (2.0 * h)
    moves = np.abs(g) * np.maximum(np.abs(x), 1e-12) > 1e-6 * max(abs(pred), 1e-12)
    unidentified = [n for i, n in enumerate(names) if np.isinf(sol.stderr[i]) and moves[i]]
    if unidentified:
        return math.inf, unidentified
    cov = np.asarray(sol.cov, dtype=float)
    has_var = np.isfinite(np.diag(cov))          # not on a bound, not held, identified
    g = np.where(has_var, g, 0.0)
    if not np.all(np.isfinite(g)):
        raise InputError(f"figure {fid}: left out, the refit's model gives no number for it within 1e-6 of "
                         f"{[n for n, v in zip(names, g) if not np.isfinite(v)]} (no standard error for its prediction)")
    cov = np.nan_to_num(cov, nan=0.0)
    return float(np.sqrt(max(float(g @ cov @ g), 0.0))), []


def _cores() -> int:
    """Cores this process may run on (affinity-aware where the OS says)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # macOS, Windows
        return max(os.cpu_count() or 1, 1)


def crossvalidate(ids=None, workers=None, progress=None) -> list[dict]:
    """Leave-one-out: refit without each target figure and predict it.

    Only the left-out figure's sub-model is refitted, from the same starting
    points as :func:`~cryptoplan.model.calibration.fitting.fit` (the others
    cannot see it; a start taken from the full fit would carry the left-out
    figure in); the round-trip rows refit the round-trip model.  The refits are independent and run in ``workers``
    processes (default: one per core this process may use; ``workers=1`` runs
    them in this process).  The processes are *spawned*, so a script calling
    this with more than one worker needs the usual ``if __name__ == "__main__":``
    guard.  Where the fit is not convex, a refit can stop in another basin than
    the full fit, so a large left-out error can be the optimiser's as well as
    the model's.

    Parameters
    ----------
    ids : collection of str, optional
        The figure ids to leave out, one at a time; default every target and round trip.
    workers : int, optional
        Processes to run the refits in.
    progress : callable, optional
        Called with no argument as each refit ends.

    Returns
    -------
    list of dict
        One per figure, in the order of :func:`~cryptoplan.model.calibration.targets.targets`
        then the round trips: ``id``, ``published``, ``loo_prediction`` (in the figure's unit),
        ``relative_error`` (None where the published value is 0), ``within_tolerance`` (the
        prediction inside the figure's accepted interval, as the fitted table judges it:
        :meth:`~cryptoplan.model.figures.Figure.bounds`), ``prediction_se`` (the left-out
        prediction's standard error, in the figure's unit; infinity where it rests on a
        parameter the others do not identify), ``determined`` (``prediction_se`` within the
        figure's tolerance: module docstring) and ``unidentified`` (those parameters' names).
    """
    base = {k: v["value"] for k, v in load_params()["parameters"].items()}
    table = table_in_force()
    figure_groups = [(t.figure_id, t.group) for t in targets()] + [(fid, "roundtrip") for fid in roundtrip_figure_ids()]
    jobs = [(fid, group, table, base) for fid, group in figure_groups if ids is None or fid in ids]
    workers = _cores() if workers is None else int(workers)
    if sys.platform == "win32":
        workers = min(workers, 61)  # ProcessPoolExecutor's limit on Windows
    tick = progress or (lambda: None)
    if workers <= 1 or len(jobs) <= 1:
        out = []
        for job in jobs:
            out.append(_loo_one(job))
            tick()
        return out
    return _in_processes(jobs, workers, tick)


def _in_processes(jobs: list, workers: int, tick) -> list[dict]:
    """:func:`_loo_one` of each job in up to ``workers`` spawned processes, in the jobs' order."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process holding thread pools
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=ctx) as pool:
        futures = [pool.submit(_loo_one, job) for job in jobs]
        try:
            for f in concurrent.futures.as_completed(futures):
                f.result()
                tick()
            return [f.result() for f in futures]
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # queued refits are dropped
            raise
