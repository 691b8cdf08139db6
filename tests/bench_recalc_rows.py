"""Benchmark: ``cryptoplan recalc -o`` time against the number of formula rows (linear, not quadratic).

Run as a script (not collected by pytest)::

    python tests/bench_recalc_rows.py [--runs 3] [--rows 20000,50000,100000]

Each size: a one-sheet workbook of ``n`` rows (a number and ``=A{i}*2``), recalculated with
``-o`` in a fresh process (``python -m cryptoplan.cli``), median of ``--runs``; every run must
exit 0 and write the file.  The issue measured 17 s, 100 s and more than 240 s for 20k, 50k
and 100k rows before the writer indexed its cell writes by row; the ratio column shows
seconds per 10,000 rows, which stays flat when the time is linear.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from openpyxl import Workbook


def workbook(path: str, n: int) -> None:
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Results")
    for i in range(1, n + 1):
        ws.append([i, f"=A{i}*2"])
    wb.save(path)


def one_run(src: str, out: str) -> float:
    if os.path.exists(out):
        os.unlink(out)
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "cryptoplan.cli", "recalc", src, "-o", out],
                       capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if r.returncode != 0 or not os.path.isfile(out):
        raise SystemExit(f"recalc failed (exit {r.returncode}): {r.stderr[-1000:]}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rows", default="20000,50000,100000")
    a = ap.parse_args()
    print(f"{'rows':>8s} {'median s':>9s} {'s per 10k rows':>15s}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.rows.split(",")):
            src, out = os.path.join(tmp, f"r{n}.xlsx"), os.path.join(tmp, f"o{n}.xlsx")
            workbook(src, n)
            t = statistics.median(one_run(src, out) for _ in range(a.runs))
            print(f"{n:8,d} {t:9.2f} {t / n * 1e4:15.2f}")


if __name__ == "__main__":
    main()
