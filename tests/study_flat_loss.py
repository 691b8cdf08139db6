"""Study (not a test): a loss flat inside each row's tolerance, Cauchy on the excess.

Issue 62 asks for "a loss flat inside each row's tolerance, Cauchy tails outside (so a figure
already within tolerance stops pulling)".  This script measures what that loss does, started
from the shipped fit (``data/params.json``), for each sub-model the fit solves with the
robust loss: the residual in tolerances ``r`` is replaced by
``sign(r) * max(|r| - m, 0)`` and solved with the same Cauchy loss and bounds, ``m`` the
margin (1: flat over the whole accepted interval).

Run from the checkout, after installing it::

    python tests/study_flat_loss.py 1.0 0.8 0.5
    python tests/study_flat_loss.py --loo 0.8      # leave-one-out under that loss (~1 min)

For each margin and sub-model it prints the scored terms within tolerance before and after (a
figure said of several conditions is scored at each end: the TLS sub-model's 36 terms come from
31 figures), the Cauchy cost before and after, and the figures that crossed their interval's
edge.  Measured on the fit of 2dabdfa (2026-11-29):

- m = 1.0 (terms): TLS 34 -> 36 of 36, AMS 27 -> 26 of 28, seed 000's z196 set 13 -> 11 of 14: the
  figures the loss moves land on their interval's edge (|r| = 1.00 to 1.04), where any
  parameter draw has about even odds of putting them outside.
- m = 0.8: every sub-model meets every figure (AMS 28, TLS 36, z196 14), the four "not forced"
  misses of data/misses.csv in (|r| 0.81 to 0.91), at a Cauchy cost 1.4 to 2.7 times the fit's.
- m = 0.5: AMS 27, TLS 35, z196 13 (two of the four misses stay out, one met figure goes out).

So the count within tolerance follows the margin, a free choice with no reading of its own
(a tolerance's half-width reading gives 1); and the loss's weights are 0 inside, so the
standard errors of its fit would need another convention.

``--loo m`` adds the flat stage to every refit of leave-one-out (the fit's two stages, then
Cauchy on the excess from there) and compares with ``cryptoplan crossval``.  Measured on 8243c53
(2026-11-30), m = 0.8: 57 of 86 figures predicted within tolerance when left out, against 62
with the shipped loss; median |error| 6.3% against 4.0%, p90 33.4% against 28.5%.  Three
figures come in and eight go out: a fit that stops pulling on a figure already within 0.8
tolerances uses less of what the figures say, and predicts the ones it has not seen worse.
Not adopted (fit.py says so).
"""

from __future__ import annotations

import sys

import numpy as np

from cryptoplan.model.calibration.fitting import free_parameters
from cryptoplan.model.calibration.free import LOSS
from cryptoplan.model.calibration.leastsq import solve
from cryptoplan.model.calibration.scoring import TOLERANCE_UNCERTAINTY, group_batch
from cryptoplan.model.params import load_params

GROUPS = ("ams", "tls", "tls_z196", "handshake")


def study(margin: float) -> dict:
    """Per sub-model: ``(figures, within before, within after, cost before, cost after, crossed)``."""
    base = {k: v["value"] for k, v in load_params()["parameters"].items()}
    out = {}
    for group in GROUPS:
        names, tl, batch = group_batch(group, base)
        nfig = len(tl)
        r0 = batch(np.array([[base[n]] for n in names]))[0]

        def flat(x, batch=batch):
            r = batch(x)
            return np.sign(r) * np.maximum(np.abs(r) - margin, 0.0)

        sol = solve(flat, free_parameters(names, {n: base[n] for n in names}), loss=LOSS, max_nfev=400,
                    stderr=False, sigma=TOLERANCE_UNCERTAINTY)
        r1 = batch(sol.x[:, None])[0]
        assert np.all(np.isfinite(r1)), group          # the study's own check: the solve succeeded
        crossed = [(t.figure_id, round(float(a), 2), round(float(b), 2))
                   for t, a, b in zip(tl, r0, r1) if (abs(a) <= 1) != (abs(b) <= 1)]
        out[group] = (nfig, int(np.sum(np.abs(r0[:nfig]) <= 1)), int(np.sum(np.abs(r1[:nfig]) <= 1)),
                      0.5 * float(np.sum(np.log1p(r0 ** 2))), 0.5 * float(np.sum(np.log1p(r1 ** 2))), crossed)
    return out


def loo(margin: float) -> tuple[list[dict], list[dict]]:
    """Leave-one-out with the shipped loss and with a third, flat stage; in this process."""
    from cryptoplan.model.calibration import crossval, fitting

    shipped = crossval.crossvalidate(workers=1)
    two_stages = fitting.fit_twice

    def three_stages(batch, names, start, exclude=(), **kw):
        first, sol = two_stages(batch, names, start, exclude, **kw)

        def flat(x, batch=batch):
            r = batch(x)
            return np.sign(r) * np.maximum(np.abs(r) - margin, 0.0)

        sol = solve(flat, free_parameters(names, sol.values(), exclude), loss=LOSS,
                    max_nfev=kw.get("max_nfev", 400), stderr=False, sigma=TOLERANCE_UNCERTAINTY)
        return first, sol

    fitting.fit_twice = three_stages
    try:
        flat = crossval.crossvalidate(workers=1)
    finally:
        fitting.fit_twice = two_stages
    return shipped, flat


def _loo_summary(rows: list[dict]) -> str:
    err = np.sort([abs(r["relative_error"]) for r in rows if r["relative_error"] is not None])
    assert np.all(np.isfinite(err)), "a refit failed"      # the study's own check
    return (f"{sum(r['within_tolerance'] for r in rows)} of {len(rows)} within tolerance, median "
            f"{100 * np.median(err):.1f}%, p90 {100 * np.percentile(err, 90):.1f}%")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--loo"]:
        m = float(sys.argv[2])
        shipped, flat = loo(m)
        print(f"leave-one-out, shipped loss: {_loo_summary(shipped)}")
        print(f"leave-one-out, flat inside {m:g} tolerance: {_loo_summary(flat)}")
        for a, b in zip(shipped, flat):
            if a["within_tolerance"] != b["within_tolerance"]:
                print(f"  {a['id']}: {'in' if a['within_tolerance'] else 'out'} -> "
                      f"{'in' if b['within_tolerance'] else 'out'} ({a['relative_error']:+.3f} -> {b['relative_error']:+.3f})")
        sys.exit()
    for m in [float(a) for a in sys.argv[1:]] or [1.0]:
        print(f"margin {m:g} tolerance")
        for group, (n, before, after, c0, c1, crossed) in study(m).items():
            print(f"  {group:10s} {before:3d} -> {after:3d} of {n:3d} terms within; Cauchy cost {c0:.3f} -> {c1:.3f}")
            for fid, a, b in crossed:
                print(f"      {fid}: |r| {abs(a):.2f} -> {abs(b):.2f}")
