"""Benchmark: start-up of the ``cryptoplan`` command line, now and at an earlier revision.

Run as a script from a checkout (not collected by pytest)::

    python tests/bench_cli.py [--runs 7] [--before f77fdcb]

Each command runs in a fresh process (``python -m cryptoplan.cli ...`` from the
checkout's folders, and from a ``git archive`` of ``--before``'s, laid out by
tests/_revision.py), median wall time of ``--runs`` runs:

* ``--help``: the command list (issue 15's target: under 0.15 s);
* ``capacity --service-ms -1``: a usage error (exit 2), which needs no model;
* ``recalc`` of the template workbook with ``-o``: the whole job (imports, evaluation,
  write), each revision on the template it makes (an older one does not know today's
  functions); LibreOffice recalculating the same file is timed by tests/bench_recalc.py.

Every run is checked: the exit status each command must give, and the text it must print.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _revision import cli_module, source_tree


def timed(tree: tuple[Path, str], args: list[str], code: int, must: str, runs: int) -> float:
    cwd, prefix = tree
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", cli_module(tree), *args], cwd=cwd, env=env,
                           capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if r.returncode != code or must not in r.stdout + r.stderr:
            raise SystemExit(f"{' '.join(args)} in {cwd}: exit {r.returncode}, expected {code} and "
                             f"{must!r}:\n{r.stdout[-1000:]}{r.stderr[-1000:]}")
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before", default="f77fdcb")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = source_tree(a.before, Path(tmp) / "old")
        now = source_tree(None, Path(tmp) / "now")
        # like for like: each revision recalculates the template it makes itself (an older revision
        # does not know today's functions: it would answer #NAME? and time nothing comparable)
        books = {}
        for key, tree in (("now", now), ("old", old)):
            books[key] = Path(tmp) / f"planner-{key}.xlsx"
            subprocess.run([sys.executable, "-m", cli_module(tree), "template", "-o", str(books[key])], cwd=tree[0],
                           env={**os.environ, "PYTHONPATH": str(tree[0])}, check=True, capture_output=True)

        def recalc(key):
            return ["recalc", str(books[key]), "-o", str(Path(tmp) / f"out-{key}.xlsx"), "--force"]
        cases = [("--help", ["--help"], ["--help"], 0, "Commands:"),
                 ("usage error", ["capacity", "--service-ms", "-1"], ["capacity", "--service-ms", "-1"], 2,
                  "--service-ms"),
                 ("recalc template", recalc("now"), recalc("old"), 0, "wrote")]
        print(f"fresh process each, median of {a.runs} runs; before = {a.before} "
              "(recalc: each revision's own template)")
        print(f"{'command':18s} {'now':>8s} {'before':>8s} {'ratio':>7s}")
        for label, args_now, args_old, code, must in cases:
            t_now = timed(now, args_now, code, must, a.runs)
            t_old = timed(old, args_old, code, must, a.runs)
            print(f"{label:18s} {t_now:7.3f}s {t_old:7.3f}s {t_old / t_now:6.1f}x")
        t_help = timed(now, ["--help"], 0, "Commands:", a.runs)
        print(f"target: --help under 0.15 s: {'met' if t_help < 0.15 else 'missed'} ({t_help:.3f} s)")


if __name__ == "__main__":
    main()
