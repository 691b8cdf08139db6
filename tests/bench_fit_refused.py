"""Benchmark: a ``cryptoplan fit --out`` that is refused, now and at an earlier revision (issue 66).

Run as a script from a checkout, as root (not collected by pytest)::

    python tests/bench_fit_refused.py [--runs 5] [--before 90985a6]

Each case runs the command in a fresh process (``python -m cryptoplan.cli``, from the checkout's
folders and from a ``git archive`` of ``--before``'s, laid out by tests/_revision.py), median wall
time of ``--runs`` runs:

* ``read-only``: ``fit --out`` into a read-only file system (a tmpfs mounted ``ro``: root ignores
  a folder's mode bits, not a read-only mount);
* ``values``: a fit whose values the models would refuse (the accelerator's fixed time above its
  whole RSA-2048 ME time, as tests/test_cli.py plants it): the real fit runs, its result is
  altered, and ``fit --out`` must refuse it.

Target (issue 66): each refused in under 2 s (it took about 17 s at 90985a6: the 201-refit
bootstrap was drawn before the refusal).  Every run is checked: its exit code, the message it must
print, and that no file was written.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _revision import cli_module, source_tree

# the values case: the command line in-process, its fit altered (as tests/test_cli.py does)
_VALUES = """
import sys
import {prefix}model.calibration.fit as F
real = F.fit
def bad():
    doc = real()
    doc["parameters"]["acc_fixed_ms"]["value"] = 2.0 * doc["parameters"]["acc_me_ms_2048"]["value"]
    return doc
F.fit = bad
from {cli} import main
main(["fit", "--out", sys.argv[1]])
"""


@contextlib.contextmanager
def read_only_mount(where: Path):
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def timed(tree, args, must: str, out: Path, runs: int) -> float:
    cwd, prefix = tree
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        assert r.returncode in (1, 2), (args, r.returncode, r.stderr[-2000:])
        assert must in (r.stdout + r.stderr).lower(), (args, r.stdout[-2000:], r.stderr[-2000:])
        assert not out.exists(), out
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--before", default="90985a6")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"now": source_tree(None, tmp / "now"), a.before: source_tree(a.before, tmp / "before")}
        with read_only_mount(tmp / "ro") as ro:
            rows = {}
            for label, tree in trees.items():
                module, prefix = cli_module(tree), tree[1]
                out = ro / "params.json"
                t_ro = timed(tree, ["-m", module, "fit", "--out", str(out)], "read-only", out, a.runs)
                out = tmp / f"values-{label}.json"
                script = _VALUES.format(prefix=prefix, cli=module)
                t_val = timed(tree, ["-c", script, str(out)], "must be less than acc_me_ms_2048", out, a.runs)
                rows[label] = (t_ro, t_val)
    print(f"cryptoplan fit --out, refused: median wall time of {a.runs} runs (s)")
    print(f"{'case':12s} {a.before:>10s} {'now':>10s} {'ratio':>8s}")
    for i, case in enumerate(("read-only", "values")):
        before, now = rows[a.before][i], rows["now"][i]
        print(f"{case:12s} {before:10.2f} {now:10.2f} {before / now:7.1f}x")
    worst = max(rows["now"])
    print(f"target: each under 2 s -> {'met' if worst < 2.0 else 'NOT met'} (slowest {worst:.2f} s)")


if __name__ == "__main__":
    main()
