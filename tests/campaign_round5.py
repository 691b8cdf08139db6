"""The hostile-input campaign's round 5 (issue 64) as a regression list: every case, handled or not.

Run from a checkout with ``.venv`` (not collected by pytest)::

    .venv/bin/python tests/campaign_round5.py

It runs tests/test_hostile_round5.py (one test, or one parameter, per case of the issue's 19
findings, named ``test_N_...`` by the finding) and prints, finding by finding, each case and
whether it is handled: a clear error naming the input, or a correct answer, as the issue's bar
asks.  Exit status 0 when every case is handled.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

FINDINGS = {
    1: "two plan --report runs into one new folder", 2: "a card's line read twice", 3: "UTIL% above 100",
    4: "a profile whose mean underflows", 5: "a parameter file's blocks taken on trust",
    6: "--scheduler at something that is no dask scheduler", 7: "--scheduler ''", 8: "rmf = a FIFO",
    9: "quadratic report parsing", 10: "the SMF reader holding every record", 11: "a chunk larger than memory",
    12: "control characters in SYSTEM ID", 13: "numbers converted without a guard", 14: "a NUL in a file name",
    15: "a report for a horizon above 960 months", 16: "an empty level, 3-D tables",
    17: "Python's repr of a date in messages", 18: "a killed writer's temporary files",
    19: "calibrate --report on a full disk",
}


class _Collect:
    def __init__(self):
        self.cases = defaultdict(list)

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            m = re.search(r"::test_(\d+)_(\w+?)(\[.*\])?$", report.nodeid)
            if m:
                self.cases[int(m.group(1))].append((m.group(2) + (m.group(3) or ""), report.outcome))


def main() -> int:
    here = Path(__file__).resolve().parent
    collect = _Collect()
    pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", str(here / "test_hostile_round5.py"),
                 "-p", "no:randomly"], plugins=[collect])
    bad = 0
    print("\nissue 64, hostile input round 5: every case")
    for n, what in FINDINGS.items():
        cases = collect.cases.get(n, [])
        if not cases:
            print(f"  {n:2d}. {what}: NO CASE RUN")
            bad += 1
            continue
        for name, outcome in cases:
            ok = outcome in ("passed", "skipped")
            bad += not ok
            shown = {"passed": "handled", "skipped": "skipped here (needs root or an optional package)"}.get(
                outcome, "NOT HANDLED")
            print(f"  {n:2d}. {what}: {name.replace('_', ' ')}: {shown}")
    print(f"{'every case handled' if not bad else f'{bad} case(s) not handled'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
