"""Benchmark: a 10-workload plan with its bands over 1,000 parameter draws (issue 46).

Run as a script from a checkout (not collected by pytest)::

    python tests/bench_bands.py [--runs 5] [--draws 1000] [--sample 50]

Timed, medians of ``--runs`` runs in this process, BLAS and OpenMP held to one thread:

* ``parameter_draws(--draws)``: the draws themselves (the truncated normal of the covariance
  blocks, the bootstrap refits' rows);
* ``plan_bands`` of the 10 workloads of ``bench_plan.py`` under those draws: one vectorized plan
  (the draws a last scenario axis), every pool's quantiles and P(overloaded), the timeline's bands;
  on one interval (daily averages) and on the busiest day of 96 intervals;
* the peer, what a planner without a vectorized plan does: one scalar plan per draw under
  ``using_values`` of that draw, in a Python loop: timed on ``--sample`` draws and scaled.

Every timed result is checked: the bands' quantiles against ``numpy.quantile`` of the loop's
answers on the sampled draws are not comparable (other draws), so the check is that the loop's
answers equal the vectorized plan's for those draws (rtol 1e-12) and that every band is ordered
``low <= median <= high`` with the point answer the scalar plan's.

Target (issue 46): 10 workloads x 1,000 draws under 1 s.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from bench_ams import _median  # noqa: E402  (median of runs, each result checked)
from bench_plan import SYSTEM, day_workloads, workloads  # noqa: E402

from cryptoplan.model.calibration.draws import parameter_draws  # noqa: E402
from cryptoplan.model.params import using_values  # noqa: E402
from cryptoplan.model.zos.plan import System, plan, plan_bands  # noqa: E402

POOLS = ("processors", "coprocessors", "accelerators")


def _check_bands(system, ws):
    point = plan(system, ws)

    def check(b):
        for p in POOLS:
            for attr in ("utilization", "months_to_target", "required", "required_at_horizon"):
                band = getattr(b.resources[p], attr)
                assert band.low <= band.median <= band.high, (p, attr, band)
                assert band.point == float(getattr(point.resources[p], attr)), (p, attr)
            assert 0.0 <= b.resources[p].p_overloaded <= 1.0
    return check


def loop(system, ws, draws, idx) -> np.ndarray:
    """One scalar plan per draw; returns (3, len(idx)) peak utilizations."""
    out = np.empty((3, len(idx)))
    for j, i in enumerate(idx):
        with using_values({k: float(v[i]) for k, v in draws.items()}):
            r = plan(system, ws)
        out[:, j] = [r.resources[p].utilization for p in POOLS]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--sample", type=int, default=50)
    a = ap.parse_args()
    system = System(**SYSTEM)

    def check_draws(d):
        assert all(np.shape(v) == (a.draws,) and np.all(np.isfinite(v)) for v in d.values())
    t_draws = _median(lambda: parameter_draws(a.draws, seed=1), a.runs, check_draws)
    d = parameter_draws(a.draws, seed=1)

    results = {}
    for label, ws in (("1 interval", workloads()), ("96 intervals", day_workloads())):
        t = _median(lambda ws=ws: plan_bands(system, ws, d), a.runs, _check_bands(system, ws))
        idx = np.linspace(0, a.draws - 1, a.sample).astype(int)
        drawn = plan(system, ws, draws=d)
        want = np.stack([np.asarray(drawn.resources[p].utilization)[idx] for p in POOLS])

        def check_loop(u, want=want):
            np.testing.assert_allclose(u, want, rtol=1e-12)
        t_loop = _median(lambda ws=ws, idx=idx: loop(system, ws, d, idx), max(1, a.runs // 2), check_loop)
        results[label] = (t, t_loop * a.draws / a.sample)

    print(f"parameter_draws({a.draws:,}): {1000 * t_draws:.1f} ms")
    for label, (t, t_loop) in results.items():
        total = t + t_draws
        print(f"plan_bands, 10 workloads x {a.draws:,} draws, {label}: {total:.3f} s with the draws "
              f"({t:.3f} s the plan and its bands; target < 1 s)  {'OK' if total < 1 else 'MISSED'}; "
              f"a scalar plan per draw: {t_loop:.1f} s -> {t_loop / t:,.0f}x")


if __name__ == "__main__":
    main()
