"""Benchmark: the bootstrap refits of the TLS sub-model (``cryptoplan fit --out``'s 201 of them).

Run as a script from a checkout (not collected by pytest)::

    python tests/bench_tls_refits.py [--runs 3] [--refits 61] [--seeds 0 1] [--save F | --check F]

Timed, medians of ``--runs`` runs in this process, BLAS and OpenMP held to one thread:
:func:`~cryptoplan.model.calibration.bootstrap.refits` of the ``tls`` block as
``tests/test_bands_coverage.py`` calls it, one replication per seed in ``--seeds``: the block's
figures made from the packaged fit's values, moved by one normal draw of their tolerance, fitted
(least squares, then the robust loss), then ``--refits`` refits of that fit on the figures moved
again (the bootstrap).  The fit before the refits is not timed.  Printed: the median per
replication and per refit.

Every result is checked: the refits are finite and inside their bounds, and the same on every
run; ``--save`` keeps them (one array per seed, ``.npz``) and ``--check`` compares them with a
saved run bit for bit (``numpy.array_equal``): a speed-up must not change a number.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from bench_ams import _median  # noqa: E402  (median of runs, each result checked)
from test_bands_coverage import _fit, _synthetic  # noqa: E402  (the coverage test's problem and fit)

from cryptoplan.model.calibration.bootstrap import refits  # noqa: E402
from cryptoplan.model.calibration.free import free_bounds  # noqa: E402
from cryptoplan.model.params import load_params  # noqa: E402

GROUP = "tls"


def replication(truth: dict, seed: int, n: int):
    """The coverage test's replication ``seed`` up to its refits: ``(run, check)``.

    ``run()`` makes the ``n`` refits from the same stream state each time; ``check(rows)``
    asserts they are finite, inside their bounds and the first run's.
    """
    rng = np.random.default_rng(seed)
    names, batch, point = _synthetic(GROUP, truth, rng)
    sol = _fit(names, batch)
    scale = sol.scale if np.isfinite(sol.scale) else 1.0
    state = rng.bit_generator.state
    bounds = np.array([free_bounds(k) for k in names], dtype=float)
    first = []

    def run():
        rng.bit_generator.state = state
        return refits(names, batch, point, sol.x, scale, n, rng, repeat=False)

    def check(rows):
        assert rows.shape == (n, len(names)) and np.all(np.isfinite(rows)), rows.shape
        assert np.all((rows >= bounds[:, 0]) & (rows <= bounds[:, 1])), "a refit outside its bounds"
        if not first:
            first.append(rows)
        assert np.array_equal(rows, first[0]), "the refits differ from one run to the next"
    return run, check, first


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--refits", type=int, default=61)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--save", help="Keep the refits (.npz) as the reference of a later --check.")
    group.add_argument("--check", help="Compare the refits with a --save'd run, bit for bit.")
    a = ap.parse_args()
    truth = {k: float(v["value"]) for k, v in load_params()["parameters"].items()}
    rows, times = {}, []
    for seed in a.seeds:
        run, check, first = replication(truth, seed, a.refits)
        t = _median(run, a.runs, check)
        rows[f"seed{seed}"] = first[0]
        times.append(t)
        print(f"seed {seed}: {t:7.3f} s for {a.refits} refits, {1000 * t / a.refits:6.1f} ms a refit")
    total = sum(times)
    print(f"all {len(a.seeds)} replications: {total:.3f} s, {1000 * total / (a.refits * len(a.seeds)):.1f} ms a refit "
          f"(medians of {a.runs} runs)")
    if a.save:
        np.savez(a.save, **rows)
        print(f"saved to {a.save}")
    if a.check:
        ref = np.load(a.check)
        assert sorted(ref.files) == sorted(rows), (ref.files, list(rows))
        bad = [k for k in rows if not np.array_equal(ref[k], rows[k])]
        if bad:
            raise SystemExit(f"the refits differ from {a.check}: {bad}")
        print(f"bit-identical to {a.check} ({len(rows)} replications x {a.refits} refits)")


if __name__ == "__main__":
    main()
