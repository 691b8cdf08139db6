"""Leave-one-out cross-validation of the fit: refit without each figure and predict it.

:func:`crossvalidate` refits, for each target figure and each published round trip, only
the sub-model the figure belongs to (:func:`cryptoplan.model.calibration.fitting.fit` with
``exclude``), and compares the refitted model's prediction with the published value.  The
refits are independent and run in worker processes.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import sys

from ..figures import figure, table_in_force, using_figures
from ..params import load_params, using_values
from ..zos.tls import roundtrip_figure_ids, tls_roundtrip_us
from .fitting import fit
from .targets import predict_all, targets

__all__ = ["crossvalidate"]


def _loo_one(job) -> dict:
    """One leave-one-out prediction: ``job = (figure id, group, figures table, base values)``.

    Module-level and self-contained so a worker process can run it.
    """
    fid, group, table, base = job
    with using_figures(table):
        doc = fit(exclude=(fid,), max_nfev=200, groups=(group,), start=base, stderr=False)
        vals = {**base, **{k: v["value"] for k, v in doc["parameters"].items()}}
        f = figure(fid)
        if group == "roundtrip":
            with using_values(vals):
                pred = float(tls_roundtrip_us(f.conditions["mode"], f.conditions["cipher"],
                                              float(f.conditions["message_kb"])))
        else:
            [t] = [t for t in targets() if t.figure_id == fid]
            pred = predict_all(vals, [t])[fid]
        pub = f.target()
        lo, hi = f.bounds()
    return {"id": fid, "published": pub, "loo_prediction": pred,
            "relative_error": (pred - pub) / abs(pub) if pub else None,
            "within_tolerance": bool(lo <= pred <= hi)}


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
        ``relative_error`` (None where the published value is 0) and ``within_tolerance`` (the
        prediction inside the figure's accepted interval, as the fitted table judges it:
        :meth:`~cryptoplan.model.figures.Figure.bounds`).
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
