"""Benchmark: the AMS planning functions over many scenarios, against the model before the redesign.

Run as a script from a checkout (not collected by pytest)::

    python tests/bench_ams.py [--runs 5] [--scenarios 100000] [--sample 2000] [--before b35da08]

Scenarios are random valid AMS cases (policy, RSA or NISTECC key and size, message size, key
reuse for Confidentiality, planned rate), one array per argument.  Timed, medians of ``--runs``
runs in this process on one core:

* ``ams_throughput`` (one requester: the closed form, the common sweep case);
* ``ams_plan`` at the planned rate (CPU, utilizations, waits, counts, bottleneck);
* ``accelerators_required``, ``coprocessors_required``, ``processors_required``.

The peer is the model as it was before (``--before``, a git revision: ``git archive`` of its
``model`` and ``data`` folders into a temporary directory, run in a subprocess with its own
parameter file): its ``ams_throughput`` looped over broadcast arguments in Python and its
``*_required`` took arrays of rates only, so it is timed on ``--sample`` scenarios (one call per
scenario for the required counts) and scaled to the full count.  Every timed call is checked:
the right shape, finite values, whole counts, and the old run's exit status and row count.

Target (issue 12): 100,000 scenarios in under 1 s on one core for each function.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _revision import source_tree


def scenarios(n: int, seed: int = 1) -> dict:
    """Random valid AMS scenarios as arrays."""
    rng = np.random.default_rng(seed)
    policy = rng.choice(np.array(["integrity", "privacy", "confidentiality"], dtype=object), n)
    ecc = (policy == "integrity") & (rng.random(n) < 0.25)
    key_type = np.where(ecc, "NISTECC", "RSA").astype(object)
    key_size = np.where(ecc, rng.choice([192, 224, 256, 384, 521], n), rng.choice([1024, 2048, 3072, 4096], n))
    kb = rng.choice([0.5, 2.0, 10.0, 64.0, 1024.0, 4096.0], n)
    reuse = np.where(policy == "confidentiality", rng.choice([1, 32, 64, 1000], n), 1).astype(object)
    reuse[policy != "confidentiality"] = None
    tx = rng.uniform(1.0, 50.0, n)
    return dict(policy=policy, key_type=key_type, key_size=key_size, message_kb=kb, key_reuse=reuse, tx=tx)


def _median(fn, runs, check):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        check(out)
    return statistics.median(times)


def _finite(n):
    def check(out):
        a = np.asarray(out, dtype=float)
        assert a.shape == (n,), a.shape
        assert np.all(np.isfinite(a)), "non-finite result"
    return check


def _counts(n):
    def check(out):
        a = np.asarray(out)
        assert a.shape == (n,) and np.issubdtype(a.dtype, np.integer) and a.min() >= 0, (a.shape, a.dtype)
    return check


def now(s: dict, runs: int) -> dict:
    from cryptoplan import model
    n = s["tx"].size
    args = (s["policy"], s["key_type"], s["key_size"], s["message_kb"], s["key_reuse"])
    big = dict(processors=256, coprocessors=64, accelerators=64)

    def plan():
        p = model.ams_plan(s["tx"], *args, **big)
        return p.response_ms

    return {
        "ams_throughput": _median(lambda: model.ams_throughput(*args), runs, _finite(n)),
        "ams_plan": _median(plan, runs, _finite(n)),
        "accelerators_required": _median(lambda: model.accelerators_required(s["tx"], *args), runs, _counts(n)),
        "coprocessors_required": _median(lambda: model.coprocessors_required(s["tx"], *args), runs, _counts(n)),
        "processors_required": _median(lambda: model.processors_required(s["tx"], *args), runs, _counts(n)),
    }


_BEFORE = r"""
import importlib, json, statistics, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
model = importlib.import_module(sys.argv[4] + "model")
s = json.load(open(sys.argv[2]))
runs = int(sys.argv[3])
args = [s["policy"], s["key_type"], s["key_size"], s["message_kb"], s["key_reuse"]]
n = len(s["tx"])
def med(fn):
    ts = []
    for _ in range(runs):
        t = time.perf_counter(); out = fn(); ts.append(time.perf_counter() - t)
        a = np.asarray(out, dtype=float)
        assert a.shape == (n,) and np.all(np.isfinite(a))
    return statistics.median(ts)
def per(fn):
    return lambda: [fn(s["tx"][i], *(a[i] for a in args)) for i in range(n)]
out = {
  "ams_throughput": med(lambda: model.ams_throughput(*args)),
  "accelerators_required": med(per(model.accelerators_required)),
  "coprocessors_required": med(per(model.coprocessors_required)),
}
print(json.dumps({"n": n, "seconds": out}))
"""


def before(rev: str, s: dict, sample: int, runs: int) -> dict:
    """Time the model at ``rev`` on the first ``sample`` scenarios, in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        tree, prefix = source_tree(rev, Path(tmp) / "src", ("model", "data"))
        data = tree / prefix.replace(".", "/") / "data"
        sub = {k: (v[:sample].tolist()) for k, v in s.items()}
        for k in ("key_size",):
            sub[k] = [int(x) for x in sub[k]]
        path = Path(tmp) / "scenarios.json"
        path.write_text(json.dumps(sub))
        env = {**os.environ, "CRYPTOPLAN_PARAMS": str(data / "params.json")}
        res = subprocess.run([sys.executable, "-c", _BEFORE, str(tree), str(path), str(runs), prefix], env=env,
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"the model at {rev} failed:\n{res.stderr[-2000:]}")
        doc = json.loads(res.stdout)
        assert doc["n"] == sample, doc
        return doc["seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scenarios", type=int, default=100_000)
    ap.add_argument("--sample", type=int, default=2000)
    ap.add_argument("--before", default="b35da08")
    a = ap.parse_args()
    s = scenarios(a.scenarios)
    t_now = now(s, a.runs)
    t_old = before(a.before, s, a.sample, max(1, a.runs // 2))
    scale = a.scenarios / a.sample
    print(f"{a.scenarios:,} AMS scenarios, medians of {a.runs} runs, one process "
          f"(before: {a.before}, timed on {a.sample:,} and scaled)")
    print(f"{'function':24s} {'now':>10s} {'per scenario':>13s} {'before':>10s} {'ratio':>8s}")
    for name, t in t_now.items():
        old = t_old.get(name)
        old_s = f"{old * scale:9.2f}s" if old is not None else "       n/a"
        ratio = f"{old * scale / t:7.0f}x" if old is not None else "     n/a"
        print(f"{name:24s} {t:9.3f}s {1e6 * t / a.scenarios:10.2f} us {old_s} {ratio}")
    slow = [k for k, t in t_now.items() if t >= 1.0]
    print("target (< 1 s each):", "met" if not slow else f"missed by {', '.join(slow)}")


if __name__ == "__main__":
    main()
