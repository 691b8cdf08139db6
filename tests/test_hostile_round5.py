"""Hostile input, round 5 (issue 64): each finding's reproduction, handled.

Each test is named by the finding's number in the issue and reproduces its case exactly; the
expected behaviour is the issue's bar: a clear one-line error naming the input and a non-zero
exit, or a correct answer; no traceback, hang, silent last-wins or escape sequence.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _cli() -> str:
    return str(Path(sys.executable).parent / "cryptoplan")


def _readme_plan(path: Path) -> Path:
    block = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)[0]
    path.write_text(block, encoding="utf-8")
    return path


@pytest.mark.subprocess
@pytest.mark.fail_slow(60)
def test_1_two_reports_racing_into_one_new_folder_one_wins_the_other_is_refused(tmp_path):
    """Two ``plan --report DIR`` started together into a new DIR: exactly one writes the report,
    the other exits 2 with "exists; use --force", and the folder holds one run's complete set."""
    plan = _readme_plan(tmp_path / "site.toml")
    for trial in range(2):
        out = tmp_path / f"rep{trial}"
        procs = [subprocess.Popen([_cli(), "plan", str(plan), "--report", str(out)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(p.wait(timeout=120), p.stdout.read() + p.stderr.read()) for p in procs]
        codes = sorted(rc for rc, _ in results)
        assert codes == [0, 2], results
        loser = next(text for rc, text in results if rc == 2)
        assert "exists" in loser and "use --force" in loser and "Traceback" not in loser, loser
        assert sorted(p.name for p in out.iterdir()) == ["growth.png", "plan.html", "utilization.png"]


REPORT = Path(__file__).resolve().parent / "data" / "rmf-reports" / "z15-cex7-lpar-cpc-2019.txt"
_CARD_1 = "        1   1997    0.209    41.7    4873    0.205    99.8       0.86           0.86\n"


def _report(tmp_path, text=None, name="r.txt") -> str:
    p = tmp_path / name
    p.write_text(text if text is not None else REPORT.read_text(encoding="utf-8"), encoding="utf-8")
    return str(p)


def _plan_with_rmf(tmp_path, report: str) -> str:
    p = tmp_path / "p.toml"
    p.write_text(f'[system]\nprocessors = 4\nrmf = "{Path(report).name}"\n\n[[workload]]\nname = "pay"\nkind = "ams"\n'
                 'rate = 100\npolicy = "privacy"\nmessage_kb = 2\n', encoding="utf-8")
    return str(p)


def _run(*args) -> tuple[int, str]:
    r = subprocess.run([_cli(), *args], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


@pytest.mark.subprocess
def test_2_a_card_line_repeated_in_one_interval_is_refused_on_every_route(tmp_path):
    """The same card in one interval twice (the last line used to win: 1,111/s for 4,380/s):
    ``rmf``, a plan's ``rmf =`` and the workbook's RMF fill refuse it, naming both lines."""
    text = REPORT.read_text(encoding="utf-8")
    doubled = _report(tmp_path, text.replace(_CARD_1, _CARD_1 + _CARD_1.replace("1997", "1111")))
    for args in (["rmf", doubled], ["plan", _plan_with_rmf(tmp_path, doubled)],
                 ["template", "-o", str(tmp_path / "t.xlsx"), "--rmf", doubled]):
        rc, out = _run(*args)
        assert rc == 2 and "Traceback" not in out, (args, out)
        assert re.search(r"r\.txt:\d+: CEX7C 1 \(LPAR\) of system CB89 in the interval .* was read before, at "
                         r".*r\.txt:\d+", out), (args, out)


@pytest.mark.subprocess
def test_2_the_same_report_twice_is_refused_not_counted_twice(tmp_path):
    """``calibrate --rmf-report R --rmf-report R`` counted every line twice (the sign time's standard
    error halved); ``rmf R R`` likewise."""
    r = _report(tmp_path)
    for args in (["rmf", r, r], ["calibrate", "--rmf-report", r, "--rmf-report", r, "--out",
                                  str(tmp_path / "site.json")]):
        rc, out = _run(*args)
        assert rc != 0 and "was read before" in out and "Traceback" not in out, (args, out)
    assert not (tmp_path / "site.json").exists()


@pytest.mark.subprocess
def test_3_a_utilization_above_100_percent_is_refused_by_rmf_and_a_plans_rmf(tmp_path):
    """LPAR UTIL% 999.9 gave other LPARs' share 39.0% and EXEC TIME 0.588 ms, exit 0."""
    bad = _report(tmp_path, REPORT.read_text(encoding="utf-8").replace(_CARD_1, _CARD_1.replace("41.7", "999.9")))
    for args in (["rmf", bad], ["plan", _plan_with_rmf(tmp_path, bad)]):
        rc, out = _run(*args)
        assert rc == 2 and "UTIL% 999.9 is above 100" in out and "Traceback" not in out, (args, out)


@pytest.mark.subprocess
@pytest.mark.fail_slow(30)
def test_8_a_plans_rmf_naming_a_fifo_is_refused_not_waited_on(tmp_path):
    import os
    fifo = tmp_path / "r.txt"
    os.mkfifo(fifo)
    rc, out = _run("plan", _plan_with_rmf(tmp_path, str(fifo)))
    assert rc == 2 and "not a regular file" in out, out
