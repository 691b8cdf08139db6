"""``cryptoplan plan FILE``: the report, ``--json`` and ``--report DIR`` (workbook/report/plan.py,
cli/plan_command.py).

Expected values: the model's own plan of the same file (the command must print what
:func:`cryptoplan.model.zos.plan.plan` computes, nothing else); the JSON shape the plan issue fixes
(``resources.{pool}.{installed, utilization, required, by_workload, months_to_target}``,
``workloads.{name}.{cpu_us, queueing_ms}``); PNG files checked by their signature and size.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cryptoplan.model.zos.plan import POOLS, System, Workload, plan, read_plan
from cryptoplan.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_plan() -> str:
    """The README's worked plan file (the ```toml block of "The whole system in one plan")."""
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "the README's plan example is missing"
    return blocks[0]


@pytest.fixture
def plan_file(tmp_path, monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    monkeypatch.chdir(tmp_path)
    Path("site.toml").write_text(readme_plan(), encoding="utf-8")
    return "site.toml"


def test_the_readme_plan_prints_the_report_the_readme_shows(plan_file):
    text = README.read_text(encoding="utf-8")
    m = re.search(r"```sh\ncryptoplan plan site\.toml\n```\n\n```text\n(.*?)```", text, re.S)
    assert m, "the README shows `cryptoplan plan site.toml` and its output"
    res = CliRunner().invoke(main, ["plan", plan_file])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines() == m.group(1).strip().splitlines()


def test_the_readme_prose_under_the_plan_quotes_its_table(plan_file):
    """Issue 63, finding 7: the prose under the README's plan said 44.3% / 24.8% / 89% / 0.8 months
    where the table it describes printed 44.1% / 24.7% / 88.2% / 1.0.  The numbers the prose
    quotes are the plan's, as the table prints them."""
    system, workloads = read_plan(plan_file)
    acc = plan(system, workloads).resources["accelerators"]
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert (f"the accelerators at {acc.peak_interval}, at {100 * acc.utilization:.1f}%, where their day averages "
            f"{100 * acc.average_utilization:.1f}%") in text
    assert (f"one alone would run at {100 * acc.failover.utilization:.1f}%: within the 90% limit today, over it in "
            f"{acc.failover.months_to_limit:.1f} months") in text
    assert f"Two accelerators at {100 * acc.utilization:.0f}% are within the 70% target" in text


def test_json_has_the_documented_shape_and_the_models_numbers(plan_file):
    res = CliRunner().invoke(main, ["plan", plan_file, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    system, workloads = read_plan(plan_file)
    want = plan(system, workloads)
    assert set(doc["resources"]) == {"processors", "coprocessors", "accelerators"}
    for pool, r in doc["resources"].items():
        for key in ("installed", "utilization", "required", "by_workload", "months_to_target", "status"):
            assert key in r, (pool, key)
        assert r["utilization"] == pytest.approx(want.resources[pool].utilization, rel=1e-12)
        assert set(r["by_workload"]) == {w.name for w in workloads}
    for w in workloads:
        got = doc["workloads"][w.name]
        assert got["cpu_us"]["total"] == pytest.approx(want.workloads[w.name].cpu_us["total"], rel=1e-12)
        q = want.workloads[w.name].queueing_ms
        if np.isnan(q):     # a workload on an overloaded pool: no finite wait, JSON null
            assert got["queueing_ms"] is None
        else:
            assert got["queueing_ms"] == pytest.approx(q, rel=1e-12)


def test_json_carries_the_peak_one_card_failed_the_timeline_the_scenario_and_warnings(plan_file):
    # issue 42's "Done when": per resource months_to_target, peak {interval, utilization,
    # average_utilization}, one_card_failed {utilization, required, months_to_limit} for card
    # pools; at the top timeline, scenario and warnings.  The reference is plan() itself.
    doc = json.loads(CliRunner().invoke(main, ["plan", plan_file, "--json", "--months", "3"]).output)
    system, workloads = read_plan(plan_file)
    want = plan(system, workloads, months=3.0)
    for pool, r in doc["resources"].items():
        w = want.resources[pool]
        assert r["months_to_target"] == pytest.approx(w.months_to_target, rel=1e-12)
        assert r["peak"] == {"interval": w.peak_interval, "utilization": pytest.approx(w.utilization, rel=1e-12),
                             "average_utilization": pytest.approx(w.average_utilization, rel=1e-12)}
        if pool == "processors":
            assert "one_card_failed" not in r
        else:
            f = r["one_card_failed"]
            assert f["utilization"] == pytest.approx(w.failover.utilization, rel=1e-12)
            assert f["required"] == int(w.failover.required)
            assert f["months_to_limit"] == pytest.approx(w.failover.months_to_limit, rel=1e-12)
    assert doc["timeline"] == [p.to_dict() for p in want.timeline] and doc["timeline"]
    for p in doc["timeline"]:
        assert set(p) >= {"resource", "add", "install_by_month", "order_by_month"}
    sc = doc["scenario"]
    assert (sc["growth"], sc["months"], sc["intervals"], sc["interval_minutes"]) == (1.0, 3.0, 96, 15.0)
    assert (sc["failover"], sc["lead_time_months"]) == (system.failover, system.lead_time_months)
    assert "params" in sc and doc["warnings"] == list(want.warnings)


def test_the_text_and_page_state_the_scenario(plan_file):
    out = CliRunner().invoke(main, ["plan", plan_file, "--growth", "1.5", "--months", "6"]).output
    assert "Scenario: growth x1.5 on every rate, 6 months ahead; 96 intervals of 15 minutes" in out
    assert "lead time 6 months; horizon 36 months" in out and "Model parameters:" in out
    assert CliRunner().invoke(main, ["plan", plan_file, "--months", "6", "--report", "rep"]).exit_code == 0
    page = Path("rep/plan.html").read_text(encoding="utf-8")
    assert "6 months ahead" in page and "What to buy, by when" in page and "if one coprocessor fails" in page


@pytest.mark.parametrize("bands, forecast", [([], False), (["--bands", "--draws", "300"], False),
                                             (["--bands", "--draws", "300"], True)],
                         ids=["point", "bands", "bands-with-a-forecast"])
@pytest.mark.libreoffice
def test_the_page_prints_on_one_a4_landscape_page(plan_file, tmp_path, bands, forecast):
    # the manager prints it: Chromium's print of the page, counted by poppler; with --bands the
    # resource table's cells carry their bands and the growth chart its shaded ones; with a
    # forecast's range the page names it (a longer sentence under the table)
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is needed (.ci/run installs it)"
    if forecast:
        text = Path(plan_file).read_text(encoding="utf-8")
        assert "growth_per_year = 0.4 " in text
        Path(plan_file).write_text(text.replace("growth_per_year = 0.4 ", "growth_per_year = [0.25, 0.55] ", 1),
                                   encoding="utf-8")
    assert CliRunner().invoke(main, ["plan", plan_file, "--report", "rep", *bands]).exit_code == 0
    if forecast:
        assert "payments: growth 25% to 55% a year" in Path("rep/plan.html").read_text(encoding="utf-8")
    if bands:
        page = Path("rep/plan.html").read_text(encoding="utf-8")
        assert "In brackets: the 90% band over 300 draws" in page and "P(over) at horizon" in page
        assert re.search(r"90%: needed by month [\d.]+ to [\d.]+; order now in \d+% of draws", page)
    pdf = tmp_path / "plan.pdf"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                    f"--print-to-pdf={pdf}", str(Path("rep/plan.html").resolve())], check=True,
                   capture_output=True, timeout=180)
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    assert re.search(r"^Pages:\s+1$", info, re.M), info
    w, h = map(float, re.search(r"Page size:\s+([\d.]+) x ([\d.]+) pts", info).groups())
    assert w > h and abs(w - 841.9) < 1 and abs(h - 595.3) < 1      # A4 landscape


def test_growth_and_months_options_scale_the_rates(plan_file):
    doc = json.loads(CliRunner().invoke(main, ["plan", plan_file, "--json", "--growth", "2"]).output)
    base = json.loads(CliRunner().invoke(main, ["plan", plan_file, "--json"]).output)
    for name, w in base["workloads"].items():
        assert doc["workloads"][name]["rate"] == pytest.approx(2 * w["rate"], rel=1e-12)
    later = json.loads(CliRunner().invoke(main, ["plan", plan_file, "--json", "--months", "12"]).output)
    assert later["resources"]["accelerators"]["utilization"] > base["resources"]["accelerators"]["utilization"]


def test_report_writes_the_page_and_charts_and_never_overwrites_unasked(plan_file):
    res = CliRunner().invoke(main, ["plan", plan_file, "--report", "rep"])
    assert res.exit_code == 0, res.output
    page = Path("rep/plan.html").read_text(encoding="utf-8")
    for w in read_plan(plan_file)[1]:
        assert w.name in page
    for png in ("utilization.png", "growth.png"):
        data = Path("rep", png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    before = Path("rep/plan.html").stat().st_mtime_ns
    again = CliRunner().invoke(main, ["plan", plan_file, "--report", "rep"])
    assert again.exit_code == 2 and "exists; use --force" in again.output
    assert Path("rep/plan.html").stat().st_mtime_ns == before
    assert CliRunner().invoke(main, ["plan", plan_file, "--report", "rep", "--force"]).exit_code == 0
    assert not [p for p in Path("rep").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("content,words", [
    ("[system]\nprocessors = 4\n", ["site.toml", "coprocessors is required"]),
    ("[system]\nprocessors = 4\ncoprocessors = 1\naccelerators = 1\n", ["site.toml", "[[workload]]"]),
    ("[system\n", ["site.toml", "not a valid TOML plan"]),
    ("[system]\nprocessors = 4\ncoprocessors = 1\naccelerators = 1\n[[workload]]\nname = \"a\"\nkind = \"ams\"\n"
     "rate = 10\npolicy = \"privacy\"\nmessage_kb = 2\nsize = 3\n", ["site.toml", "'a'", "unknown key 'size'"]),
])
def test_a_bad_plan_file_is_a_usage_error_naming_file_and_key(tmp_path, monkeypatch, content, words):
    monkeypatch.chdir(tmp_path)
    Path("site.toml").write_text(content, encoding="utf-8")
    res = CliRunner().invoke(main, ["plan", "site.toml"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    for w in words:
        assert w in res.output, res.output


@pytest.mark.parametrize("make", [lambda p: None, lambda p: p.mkdir(), lambda p: p.write_bytes(b"\xff\xfe[x")])
def test_a_missing_folder_or_binary_plan_file_is_named(tmp_path, make):
    path = tmp_path / "x.toml"
    make(path)
    res = CliRunner().invoke(main, ["plan", str(path)])
    assert res.exit_code == 2 and "Traceback" not in res.output and str(path) in res.output, res.output


def test_each_workloads_profile_is_built_once_for_reading_planning_and_the_report(plan_file, profile_builds):
    # issue 66: a plan's workloads were built two or three times a run (checked when read, again in
    # plan(), a third time for --report); conftest's profile_builds counts each kind's builder
    from collections import Counter

    built = profile_builds
    res = CliRunner().invoke(main, ["plan", plan_file, "--months", "6", "--report", "rep"])
    assert res.exit_code == 0, res.output
    names = [w.name for w in read_plan(plan_file)[1]]
    assert built == Counter(names), built
    # other parameters in force are other profiles: built again, once
    from cryptoplan.model.params import using_values
    system, workloads = read_plan(plan_file)
    with using_values({"mq_us_per_kb": 1.3}):
        plan(system, workloads)
        plan(system, workloads, months=3.0)
    assert built == Counter({n: 2 for n in names}), built


def test_orders_of_one_month_are_one_marker_with_a_line_each(tmp_path, monkeypatch):
    """Issue 63, finding 7: three month-0 orders drew one triangle and overprinted their labels
    ("ordrder 1").  Orders closer than a label is wide are one marker and one label, a line per
    order naming its pool."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from cryptoplan.workbook.report import charts
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    s = System(processors=4, coprocessors=2, accelerators=1, lead_time_months=6)
    r = plan(s, [Workload("pay", "ams", 900, 0.4, {"policy": "privacy", "message_kb": 2})])
    assert sum(p.order_now for p in r.timeline) >= 2
    seen = {}
    real = plt.Axes.annotate

    def spy(self, text, *a, **k):
        seen.setdefault(self, []).append(text)
        return real(self, text, *a, **k)
    monkeypatch.setattr(plt.Axes, "annotate", spy)
    months = np.linspace(0.0, 24.0, 25)
    curves = {p: np.full(months.size, 50.0) for p in POOLS}
    charts.growth_chart(r, {p: p for p in POOLS}, months, curves, tmp_path / "g.png", orders=r.timeline)
    labels = [t for texts in seen.values() for t in texts if t.startswith("order")]
    now = [p for p in r.timeline if p.order_by_month == 0.0]
    assert labels[0] == "\n".join(f"order {p.add} {charts._SHORT[p.resource]}" for p in now), labels
