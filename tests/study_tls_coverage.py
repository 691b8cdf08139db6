"""Study (not a test): why the TLS block's 90% bands covered the truth 83-85% of the time.

``tests/test_bands_coverage.py`` measures how often the band of the processors' utilization of
two channel workloads covers the truth on 200 synthetic fits of the TLS block.  Until
2026-11-30 it read 85.0% and 83.0% (seeds 0 and 1), at and below issue 62's bar of 85-95%.
This script repeats that measurement with the variants tried to find out why, each printing the
coverage and on which side of the band the truth fell:

- ``--without-ranges``: the synthetic problems as they were, the figures that are ranges left
  out (the test now keeps them unmoved, as the fit's bootstrap keeps them);
- ``--refits N``: refits a replication (the test's 61; the parameter file has 201);
- for each replication, three bands from the same refits and the same picks: the shipped one
  (refits recentred on the fit, :func:`~cryptoplan.model.calibration.draws.recentred`), refits
  reflected through the fit (``2 x_hat - x``, held in the bounds, then recentred), and refits
  recentred on a bias-corrected centre (``x_hat**2 / median`` for a positive parameter,
  ``2 x_hat - median`` otherwise).

Run from the checkout, after installing it (about 4 minutes a seed on two cores at 61 refits,
11 at 201)::

    python tests/study_tls_coverage.py --seed 0
    python tests/study_tls_coverage.py --seed 0 --without-ranges --refits 201

Measured on 816deb7's fit (2026-11-30), shipped / reflected / bias-corrected:

========================  ======  ======  =====================
synthetic problems         seed    refits  coverage
========================  ======  ======  =====================
without the ranges         0       61      85.0 / -    / 80.0
without the ranges         1       61      83.0 / 82.5 / 78.0
without the ranges         0       201     83.5 / 83.5 / -
with the ranges            0       61      89.0 / -    / 82.0
with the ranges            1       61      90.0 / -    / 83.0
========================  ======  ======  =====================

Without the ranges the truth fell below the band 12.5-14.5% of the time and above it 2-4.5%:
the synthetic fits that overestimated the utilization were the misses.  Those fits had lost
seed 002's 2 KB AT-TLS/SSLCIPH TCPIP range, whose two ends are active at the fit and which is
what pins the AT-TLS SRB's cost per transaction (``tls_attls_tcpip_us``): 200 synthetic fits put
it from 0 to 32 µs (5th to 95th percentile, 34% at 0), 12.5 times its 0.9 µs standard error,
where refits of the real figures keep it within 2.8-5.0 µs (from the fit or repeating the fit
from its starts alike).  With the ranges kept the misses are 7% below and 4% above (seed 0), 5%
and 5% (seed 1).  More refits, reflection and bias correction do not help; the bands' method is
unchanged, and the test now keeps the ranges.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import test_bands_coverage as T  # noqa: E402

from cryptoplan.model.calibration.bootstrap import refits  # noqa: E402
from cryptoplan.model.calibration.draws import recentred  # noqa: E402
from cryptoplan.model.calibration.free import free_bounds  # noqa: E402
from cryptoplan.model.params import load_params  # noqa: E402
from cryptoplan.model.zos.plan import plan, plan_bands  # noqa: E402

VARIANTS = ("shipped", "reflected", "bias-corrected")


def _without_ranges(group: str, truth: dict, rng):
    """The synthetic problem as the test made it until 2026-11-30: bounded figures left out."""
    names, synthetic, point = T._synthetic(group, truth, rng)

    def without(x):
        return np.where(point, synthetic(x), 0.0)
    return names, without, point


def _rows(variant: str, rows, x_hat, lo, hi):
    if variant == "shipped":
        return recentred(rows, x_hat, lo, hi)
    med = np.quantile(rows, 0.5, axis=0, method="inverted_cdf")
    if variant == "reflected":
        return recentred(np.clip(2.0 * x_hat - rows, lo, hi), x_hat, lo, hi)
    positive = (lo >= 0.0) & (x_hat > 0.0) & (med > 0.0)
    centre = np.where(positive, x_hat ** 2 / np.where(positive, med, 1.0), 2.0 * x_hat - med)
    return recentred(rows, np.clip(centre, lo, hi), lo, hi)


def _work(states: list, seed: int, n_refits: int, without: bool) -> list:
    """Per replication: the truth, then each variant's band (low, high)."""
    T.REFITS = n_refits
    truth = {k: float(v["value"]) for k, v in load_params()["parameters"].items()}
    wl = T.WORKLOADS["tls"]
    true = float(plan(T.SYSTEM, wl).resources["processors"].utilization)
    make = _without_ranges if without else T._synthetic
    out = []
    for state in states:
        rng = np.random.default_rng(seed)
        rng.bit_generator.state = state
        names, batch, point = make("tls", truth, rng)
        sol = T._fit(names, batch)
        bounds = np.array([free_bounds(k) for k in names], dtype=float)
        scale = sol.scale if np.isfinite(sol.scale) else 1.0
        rows = refits(names, batch, point, sol.x, scale, n_refits, rng, False)
        pick = rng.integers(0, rows.shape[0], T.DRAWS)
        row = [true]
        for v in VARIANTS:
            d = {k: np.full(T.DRAWS, val) for k, val in {**truth, **dict(zip(names, sol.x))}.items()}
            d.update(zip(names, _rows(v, rows, sol.x, bounds[:, 0], bounds[:, 1])[pick].T))
            b = plan_bands(T.SYSTEM, wl, d, level=T.LEVEL).resources["processors"].utilization
            row += [b.low, b.high]
        out.append(row)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=T.REPS)
    ap.add_argument("--refits", type=int, default=T.REFITS)
    ap.add_argument("--without-ranges", action="store_true")
    a = ap.parse_args(argv)
    T.REFITS = a.refits                      # the stream's replay draws this many moves a replication
    states = T._stream_states("tls", a.reps, a.seed)
    parts = np.array_split(np.arange(a.reps), min(T.CHUNKS, a.reps))
    got = np.array([r for part in T._in_processes(_work, [([states[i] for i in p], a.seed, a.refits, a.without_ranges)
                                                          for p in parts]) for r in part])
    assert got.shape == (a.reps, 1 + 2 * len(VARIANTS)) and np.isfinite(got).all()
    t = got[:, 0]
    print(f"seed {a.seed}, {a.reps} synthetic fits, {a.refits} refits each, "
          f"{'without' if a.without_ranges else 'with'} the ranges:")
    for j, v in enumerate(VARIANTS):
        lo, hi = got[:, 1 + 2 * j], got[:, 2 + 2 * j]
        print(f"  {v:15s} covered {np.mean((lo <= t) & (t <= hi)):6.1%}; truth below the band "
              f"{np.mean(lo > t):5.1%}, above it {np.mean(hi < t):5.1%}")


if __name__ == "__main__":
    main()
