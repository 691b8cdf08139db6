"""Do the bands cover the truth as often as they say?  Synthetic refits (issue 46's bar).

The truth is known because the figures are made from it: the packaged fit's values are taken as
the true parameters, each point figure of a sub-model is moved by one normal draw of its standard
uncertainty (the noise the fit assumes: a tolerance over the square root of 3,
:data:`~cryptoplan.model.calibration.scoring.TOLERANCE_UNCERTAINTY`), the sub-model is
fitted to them as ``cryptoplan fit`` fits it (least squares, then the robust loss), its draws are
made as ``cryptoplan fit --out`` and :func:`~cryptoplan.model.calibration.draws.parameter_draws`
make them, and the plan's 90% band is checked against the plan under the true parameters.  200
such refits (1,000 for the round trips, which take seconds: :data:`RT_REPS`); the band must cover
the truth 85-95% of the time (the binomial noise of 200 at 90% is 2.1 points: the range is 2.4 of
them each side; of 1,000, 0.9 points).

Both ways of drawing are checked on a sub-model they serve: the covariance's truncated normal on
the round-trip block (the ten published round trips, fitted by least squares; its answer the
round trip of a 32 KB AT-TLS message and a 4 KB SSLCIPH one), and the bootstrap refits, recentred
on the fit as :func:`~cryptoplan.model.calibration.draws.parameter_draws` recentres them, on the
TLS block (its answer the processors' utilization of two channel workloads), with 61 refits a
replication to keep the test to a few minutes; and, run as a script, on the crypto + AMS block
(the coprocessors', accelerators' and processors' utilization of two AMS workloads:
:func:`ams_coverage`, 45 minutes on two processes).  Bounded figures (ranges, upper and lower bounds)
are constraints, not measurements: the synthetic problems keep them as the fit and its bootstrap do,
unmoved (:func:`_synthetic`).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from cryptoplan.model.calibration.bootstrap import REPEATED, refits, starts
from cryptoplan.model.calibration.draws import _truncated_normal, recentred
from cryptoplan.model.calibration.fitting import fit_twice
from cryptoplan.model.calibration.free import free_bounds, initial
from cryptoplan.model.calibration.leastsq import solve
from cryptoplan.model.calibration.scoring import TOLERANCE_UNCERTAINTY, group_batch, measured
from cryptoplan.model.figures import figure
from cryptoplan.model.params import load_params, using_values
from cryptoplan.model.zos.plan import System, Workload, plan, plan_bands
from cryptoplan.model.zos.plan.bands import band
from cryptoplan.model.zos.tls import ROUNDTRIP_PARAMS, roundtrip_points, tls_roundtrip_us

pytestmark = pytest.mark.slow

REPS = 200
CHUNKS = 8           # tasks the bootstrap replications are split into (two processes take them in turn)
REFITS = 61          # bootstrap refits a replication (the packaged file has 201)
DRAWS = 1000
LEVEL = 0.9

SYSTEM = System(processors=4, coprocessors=2, accelerators=2, failover="none")
WORKLOADS = {
    "ams": [Workload("pay", "ams", 300, args={"policy": "privacy", "message_kb": 2}),
            Workload("sig", "ams", 200, args={"policy": "integrity", "key_size": 4096, "message_kb": 32})],
    "tls": [Workload("chl", "channel", 2000, args={"mode": "SSLCIPH", "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256",
                                                   "message_kb": 4}),
            Workload("tls", "channel", 1500, args={"mode": "ATTLS", "cipher": "TLS_AES_256_GCM_SHA384",
                                                   "message_kb": 32})],
}
RT_ANSWERS = (("ATTLS", 32.0), ("SSLCIPH", 4.0))       # the round trips' answers: (mode, message KB)
RT_CIPHER = "TLS_CHACHA20_POLY1305_SHA256"
# the answer each sub-model informs: (pool, attribute)
ANSWERS = {"ams": [("coprocessors", "utilization"), ("accelerators", "utilization"), ("processors", "utilization")],
           "tls": [("processors", "utilization")]}


def _synthetic(group: str, truth: dict, rng):
    """The sub-model's problem on figures made from ``truth`` with their stated noise.

    Every residual is taken relative to its value at the truth, so the truth fits exactly; a
    point figure or a prior is then moved by a draw of its standard uncertainty, and a bounded
    figure (a range, an upper or a lower bound) is kept unmoved, a constraint, as the bootstrap
    keeps it (:func:`~cryptoplan.model.calibration.bootstrap.refits`' ``noisy``).  A range whose
    end is active at the truth (the model past it) is thereby a statement without noise that the
    truth meets, pulling from both sides near it, in the synthetic fit and in its refits alike; in
    the real fit it pulls the fit towards its end, and its refits feel the same pull.  Until
    2026-11-30 the bounded figures were left out of the synthetic problems: the TLS block then
    lost seed 002's 2 KB AT-TLS/SSLCIPH TCPIP range, which is what pins the AT-TLS SRB's cost per
    transaction (``tls_attls_tcpip_us``; at the packaged fit both its ends are active).  Fitted
    without it, that parameter spread from 0 to 32 µs (5th to 95th percentile of 200 synthetic
    fits, 34% of them at 0), 12.5 times its standard error of 0.9 µs, while refits of the real
    figures keep it within 2.8-5.0 µs; the fits that landed high pushed the processors'
    utilization up, and the 90% band missed the truth below it 13-14.5% of the time and above it
    2-4.5% (coverage 85.0% and 83.0%, seeds 0 and 1).  With the ranges kept: 89.0% and 90.0%,
    missing the truth 7% below and 4% above (seed 0), 5% and 5% (seed 1).
    """
    names, tlist, batch = group_batch(group, truth)
    x_true = np.array([truth[k] for k in names])
    r_true = batch(x_true[:, None])[0]
    point = measured(names, tlist)                               # figures, then priors
    e = np.where(point, TOLERANCE_UNCERTAINTY * rng.standard_normal(r_true.size), 0.0)

    def synthetic(x):
        return batch(x) - r_true[None, :] - e
    return names, synthetic, point


def _fit(names, batch):
    return fit_twice(batch, names, {n: initial(n)[0] for n in names}, stderr=True)[1]


def _draws(method, names, batch, point, sol, truth, rng, group: str) -> dict:
    x_hat = dict(zip(names, sol.x))
    out = {k: np.full(DRAWS, v) for k, v in {**truth, **x_hat}.items()}
    bounds = np.array([free_bounds(k) for k in names], dtype=float)
    if method == "normal":
        block, cov = sol.covariance_block()
        if block:
            idx = [names.index(k) for k in block]
            x = _truncated_normal(rng, sol.x[idx], cov, bounds[idx, 0], bounds[idx, 1], DRAWS, "synthetic")
            out.update(zip(block, x))
    else:
        scale = sol.scale if np.isfinite(sol.scale) else 1.0
        repeat = group in REPEATED
        rows = refits(names, batch, point, starts(names) if repeat else sol.x, scale, REFITS, rng, repeat)
        if method == "bootstrap":           # "as_they_came": the refits without it (study_draw_contradictions.py)
            rows = recentred(rows, sol.x, bounds[:, 0], bounds[:, 1])
        out.update(zip(names, rows[rng.integers(0, rows.shape[0], DRAWS)].T))
    return out


def _replications(group: str, method: str, states: list, seed: int) -> np.ndarray:
    """Whether each replication covers each answer: (len(states), answers).

    Replication ``i`` starts from ``states[i]``, the state one sequential stream
    (``default_rng(seed)``) has when it reaches that replication (:func:`_stream_states`): the
    numbers are those of a loop over the replications in one process, whichever process runs it.
    """
    doc = load_params()
    truth = {k: float(v["value"]) for k, v in doc["parameters"].items()}
    workloads = WORKLOADS[group]
    true = plan(SYSTEM, workloads)
    out = np.zeros((len(states), len(ANSWERS[group])), dtype=bool)
    for row, state in enumerate(states):
        rng = np.random.default_rng(seed)
        rng.bit_generator.state = state
        names, batch, point = _synthetic(group, truth, rng)
        sol = _fit(names, batch)
        b = plan_bands(SYSTEM, workloads, _draws(method, names, batch, point, sol, truth, rng, group), level=LEVEL)
        for col, (pool, attr) in enumerate(ANSWERS[group]):
            band = getattr(b.resources[pool], attr)
            out[row, col] = band.low <= float(getattr(true.resources[pool], attr)) <= band.high
    return out


def _stream_states(group: str, reps: int, seed: int) -> list:
    """The state of one stream ``default_rng(seed)`` at the start of each of ``reps`` bootstrap
    replications, found by making the replications' draws without their fits.

    A bootstrap replication draws the same amounts whatever its fit gives: the figures' noise
    (one normal per residual), :data:`REFITS` moves of the residuals
    (:func:`~cryptoplan.model.calibration.bootstrap.refits`) and :data:`DRAWS` picks among the
    refits.  So the replications can run in any process from these states and draw exactly the
    numbers the one-process loop of earlier revisions drew.
    """
    truth = {k: float(v["value"]) for k, v in load_params()["parameters"].items()}
    names, _, batch = group_batch(group, truth)
    m = batch(np.array([[truth[k]] for k in names]))[0].size
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(reps):
        states.append(rng.bit_generator.state)
        rng.standard_normal(m)                     # _synthetic: the figures' noise
        for _ in range(REFITS):                    # refits: each refit's moves
            rng.standard_normal(m)
        rng.integers(0, REFITS, DRAWS)             # _draws: the refits drawn
    return states


def _in_processes(work, jobs: list[tuple]) -> list:
    """``[work(*job) for job in jobs]``, on both cores: two worker processes (spawned, so they
    start clean whether pytest runs alone or as an xdist worker), each job in its own task."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    workers = max(1, min(2, os.cpu_count() or 1))
    if workers == 1:
        return [work(*job) for job in jobs]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
        return [f.result() for f in [ex.submit(work, *job) for job in jobs]]


def coverage(group: str, method: str = "bootstrap", reps: int = REPS, seed: int = 0) -> dict:
    """Share of ``reps`` synthetic bootstrap refits whose band covers the true answer, per answer.

    The replications run in :data:`CHUNKS` tasks on two processes (:func:`_in_processes`), each
    from its state in one sequential stream (:func:`_stream_states`).  ``method``: ``"bootstrap"``,
    the refits recentred as the draws recentre them; ``"as_they_came"``, the same refits without.
    """
    assert method in ("bootstrap", "as_they_came"), "only the bootstrap's draws are the same amounts whatever the fit"
    states = _stream_states(group, reps, seed)
    parts = np.array_split(np.arange(reps), min(CHUNKS, reps))
    hits = np.concatenate(_in_processes(_replications, [(group, method, [states[i] for i in p], seed)
                                                        for p in parts]))
    return {a: float(h) for a, h in zip(ANSWERS[group], hits.mean(axis=0))}


def roundtrip_coverage(reps: int = REPS, seed: int = 0) -> dict:
    """The normal path: the round-trip block refitted to synthetic times, its truncated normal draws.

    One process, one stream: the truncated normal's rejection draws as many as its fit's bounds
    reject, so a replication's start in the stream is only known by running the ones before it
    (a few seconds in all)."""
    doc = load_params()
    truth = {k: float(v["value"]) for k, v in doc["parameters"].items()}
    names = list(ROUNDTRIP_PARAMS)
    pts = roundtrip_points()
    tol = np.array([figure(fid).tolerance for *_, fid in pts])
    answers = {a: None for a in RT_ANSWERS}
    true = {a: float(tls_roundtrip_us(a[0], RT_CIPHER, a[1])) for a in answers}

    def times(x):
        with using_values({**truth, **dict(zip(names, x))}):
            return np.stack(np.broadcast_arrays(*(tls_roundtrip_us(m, RT_CIPHER, kb) for m, kb, _, _ in pts)), axis=-1)
    y_true = times(np.array([truth[k] for k in names])[:, None])[0]
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(answers, 0)
    for _ in range(reps):
        # the fit's reading: a time's log-ratio has standard uncertainty ln(1 + tolerance) / sqrt 3,
        # and its residual is the Scorer's rule for a point figure in µs, against the synthetic time
        y = y_true * np.exp(np.log1p(tol) * TOLERANCE_UNCERTAINTY * rng.standard_normal(y_true.size))
        sol = solve(lambda x: np.log(times(x) / y) / np.log1p(tol),
                    free_parameters_of(names, {k: truth[k] for k in names}), sigma=TOLERANCE_UNCERTAINTY)
        block, cov = sol.covariance_block()
        idx = [names.index(k) for k in block]
        x = _truncated_normal(rng, sol.x[idx], cov, np.zeros(len(idx)), np.full(len(idx), np.inf), DRAWS, "rt")
        drawn = {**{k: np.full(DRAWS, v) for k, v in zip(names, sol.x)}, **dict(zip(block, x))}
        with using_values({**{k: np.full(DRAWS, v) for k, v in truth.items()}, **drawn}):
            for a in answers:
                b = band(0.0, tls_roundtrip_us(a[0], RT_CIPHER, a[1]), LEVEL)
                hits[a] += b.low <= true[a] <= b.high
    return {a: h / reps for a, h in hits.items()}


def free_parameters_of(names, start):
    """The round trips' parameters as their fit states them (>= 0, no upper bound)."""
    import lmfit
    p = lmfit.Parameters()
    for n in names:
        p.add(n, value=start[n], min=0.0)
    return p


def test_each_replication_starts_where_the_one_process_loop_reached():
    # the replications run in any process from _stream_states: each must start where a loop over
    # them in one process is when it gets there, i.e. replication 0 run in full ends where the
    # replay says replication 1 starts
    truth = {k: float(v["value"]) for k, v in load_params()["parameters"].items()}
    states = _stream_states("tls", 2, seed=0)
    rng = np.random.default_rng(0)
    assert rng.bit_generator.state == states[0]
    names, batch, point = _synthetic("tls", truth, rng)
    _draws("bootstrap", names, batch, point, _fit(names, batch), truth, rng, "tls")
    assert rng.bit_generator.state == states[1]


#: Replications of the round trips' check: at 200 a share's binomial standard error is 2.1 points, so a
#: 90% band lands outside 85-95% by chance in about 2% of runs per answer.  The log-scored fit of
#: 2026-11-30 read 95.5% for AT-TLS on seed 0's 200 and 88.0 to 93.0% on seeds 1-5 (91.6% pooled
#: over the six); 1,000 replications (0.9 points of standard error, about 20 s on one process)
#: read 92.2% and 91.1%.
RT_REPS = 1000


@pytest.mark.fail_slow("90s")
def test_the_normal_90_percent_band_covers_the_truth_85_to_95_percent_of_the_time():
    for answer, share in roundtrip_coverage(reps=RT_REPS).items():
        assert 0.85 <= share <= 0.95, (answer, share)


#: The TLS check's seeds: 400 replications, a share's binomial standard error 1.5 points.  One seed of
#: 200 (2.1 points) decides the 85% bar by a replication or two: six seeds of the packaged fit read
#: 83.0, 89.0, 87.5, 89.5, 89.0 and 87.0% on 2026-11-30 (87.5% over the 1,200; 89.5, 90.0, 86.0,
#: 91.5, 86.5 and 84.5% before the prior on TCPIP's cost per KB), and seed 0 read 89.0% on the
#: machine of 2026-11-29 and 89.5% on that of 2026-11-30, with the same code and packages (before
#: the prior).
TLS_SEEDS = (0, 1)


# Per seed: 63-82 s on two processes alone and 141 s inside a clean-clone CI on 2026-11-30; 177-222 s
# beside the suite and 463 s in a clean-clone CI on 2026-11-29, a slower day (`make test-fast` 165-181 s)
@pytest.mark.fail_slow("1200s")
def test_the_bootstrap_90_percent_band_covers_the_truth_85_to_95_percent_of_the_time():
    got = [coverage("tls", "bootstrap", seed=s) for s in TLS_SEEDS]
    for answer in got[0]:
        share = float(np.mean([g[answer] for g in got]))
        assert 0.85 <= share <= 0.95, (answer, share, got)


# Not run by the suite: the AMS block's refits repeat the fit from its starts (bootstrap.REPEATED),
# and its 200 replications took 3,608 s on two processes beside other coverage runs (covered 88.5,
# 84.5 and 87.5% of the time: coprocessors, accelerators, processors; 2,736 s and 90.0, 88.5, 91.0%
# while a tolerance was read as one standard deviation).  On 7fc88be a seed took about 13 minutes on
# two cores alone: two seeds, as the TLS test takes, would more than double the suite's CI time
# (issue 66 halved it), so it stays a script.  Run
# as a script (below) it prints them (the same 88.5, 84.5 and 87.5% with seed 001's 4 MB upper bound
# kept, as _synthetic keeps it now, or left out: 2,060 s on two processes on 2026-11-30); on 7fc88be
# seed 0 gave 89.5, 85.0 and 87.0% and seed 1 89.5, 84.5 and 86.5% (89.5, 84.8 and 86.8% over the
# 400, bands.MEASURED_COVERAGE; about 13 minutes a seed on two cores).  The TLS
# test's seeds 0 and 1 give 83.0% and 89.0% (89.5% and 90.0% before the prior on TCPIP's cost per
# KB; 85.0% and 83.0% while the synthetic problems left out the ranges).
def ams_coverage(reps: int = REPS, seed: int = 0) -> dict:
    """The crypto + AMS block's coverage, as the TLS test measures the TLS block's."""
    return coverage("ams", "bootstrap", reps=reps, seed=seed)


if __name__ == "__main__":        # the coverage measured, for the record
    print("round trips, normal:", roundtrip_coverage(reps=RT_REPS))
    print("tls, bootstrap:", coverage("tls", "bootstrap"))
    print("ams, bootstrap:", ams_coverage())
