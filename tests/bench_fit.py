"""Benchmark: ``model.fit.fit`` and ``model.fit.crossvalidate``, now and at an earlier revision.

Run as a script from a checkout (not collected by pytest)::

    python tests/bench_fit.py [--runs 3] [--before 06521ad] [--crossval]

Timed in this process (medians of ``--runs``): the whole fit (the AMS and TLS sub-models'
least squares, their standard errors, the round-trip model), and with ``--crossval`` the
leave-one-out cross-validation on every core this process may use (one run: it is long).

The peer is the same code at ``--before`` (a git revision: ``git archive`` of its ``model``
and ``data`` folders, run in a subprocess with its own parameter file), timed the same way.

Every timed call is checked: the fresh fit must agree with the committed parameter file
(``fit_differences`` empty: the speed-up does not change the answer), cross-validation must
return one finite prediction per fitted figure, and the old run must exit 0.

Targets (issue 13): fit in about 1 s, cross-validation under 20 s on this machine (2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _revision import source_tree

_TIMER = r"""
import importlib, json, math, statistics, sys, time
runs, crossval, prefix = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3]
def _module(*names):
    # the revision's layout: model/calibration/fit.py since issue 34, model/fit.py before
    for name in names:
        try:
            return importlib.import_module(prefix + name)
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"none of {names} in this revision")

F = _module("model.calibration.fit", "model.fit")
roundtrip_figure_ids = _module("model.zos.tls", "model.tls").roundtrip_figure_ids
load_params = importlib.import_module(prefix + "model.params").load_params

def main():
    committed = load_params()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        doc = F.fit()
        times.append(time.perf_counter() - t0)
        diff = F.fit_differences(doc, committed)
        if diff:
            raise SystemExit("the fit disagrees with the committed parameters:\n" + "\n".join(diff))
    out = {"fit": statistics.median(times)}
    if crossval:
        t0 = time.perf_counter()
        rows = F.crossvalidate()
        out["crossval"] = time.perf_counter() - t0
        bad = [r["id"] for r in rows if not math.isfinite(r["loo_prediction"])]
        expected = len(F.targets()) + len(roundtrip_figure_ids())
        if bad or len(rows) != expected:
            raise SystemExit(f"cross-validation failed: {len(rows)} rows of {expected}, not finite: {bad}")
        out["rows"] = len(rows)
    print(json.dumps(out))

if __name__ == "__main__":
    main()
"""


def run(tree: tuple[Path, str], runs: int, crossval: bool, params: Path | None = None) -> dict:
    """Time the fit (and cross-validation) of the model in ``tree`` (:func:`_revision.source_tree`)."""
    cwd, prefix = tree
    env = {**os.environ, "PYTHONPATH": str(cwd)}      # that checkout's model before an installed one
    if params is not None:
        env["CRYPTOPLAN_PARAMS"] = str(params)
    with tempfile.TemporaryDirectory() as tmp:     # a file, not -c: the spawned workers import it
        script = Path(tmp) / "bench_fit_timer.py"
        script.write_text(_TIMER)
        res = subprocess.run([sys.executable, str(script), str(runs), "1" if crossval else "0", prefix], cwd=cwd,
                             env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"the fit in {cwd} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", default="06521ad")
    ap.add_argument("--crossval", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        now = run(source_tree(None, Path(tmp) / "now", ("model", "data")), a.runs, a.crossval)
        before = source_tree(a.before, Path(tmp) / "old", ("model", "data"))
        data = before[0] / before[1].replace(".", "/") / "data"
        old = run(before, a.runs, a.crossval, data / "params.json")
    print(f"medians of {a.runs} runs (cross-validation: one run, every core); before = {a.before}")
    print(f"{'':12s} {'now':>9s} {'before':>9s} {'ratio':>7s}  target")
    for what, target in (("fit", 1.0), ("crossval", 20.0)):
        if what in now:
            print(f"{what:12s} {now[what]:8.2f}s {old[what]:8.2f}s {old[what] / now[what]:6.1f}x  "
                  f"{'met' if now[what] <= target else 'missed'} (about {target:g} s)")
    if "rows" in now:
        print(f"cross-validation rows: {now['rows']} now, {old['rows']} before")


if __name__ == "__main__":
    main()
