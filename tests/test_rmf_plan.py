"""A plan's ``[system] rmf = "FILE"``: cards, other LPARs' share and the measured load from RMF's
report (:mod:`cryptoplan.model.zos.plan.read`, issue 44; the one reader since issue 66).

Expected values come from the report excerpts' printed lines (tests/data/rmf-reports/, transcribed
from IBM's public RMF presentations; the numbers are copied below from those lines), and from an
identity the plan must respect when it takes the report's numbers: this LPAR's measured busy plus
other LPARs' share is the CPC's utilization the report prints (per pool, the mean over its cards),
computed here from the printed CPC column, while the plan computes it from requests x EXEC TIME
through its own pool model.
"""

from __future__ import annotations

import dataclasses

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st
from numpy.testing import assert_allclose

from cryptoplan.cli import main
from cryptoplan.model.zos.plan.read import MEASURED_NAMES, read_plan, rmf_pools
from cryptoplan.model.site.rmf_report import read_rmf_report
from cryptoplan.model.zos.plan import PlanError, plan
from test_smf70 import records_2018

DATA = Path(__file__).parent / "data" / "rmf-reports"
F2017 = DATA / "z14-cex5-cex6-2017.txt"
F2018 = DATA / "z14-cex5-cex6-lpar-cpc-2018.txt"
F2019 = DATA / "z15-cex7-lpar-cpc-2019.txt"

# The 2018 excerpt, S21 at 11:00: (LPAR UTIL%, CPC UTIL%) per card as printed.
COP_2018 = {"CEX5C 0": (0.0, 0.0), "CEX5C 1": (43.9, 99.8), "CEX6C 5": (40.0, 99.5), "CEX6C 6": (40.2, 99.5),
            "CEX6C 7": (39.9, 99.5), "CEX6C 8": (40.1, 99.5)}
ACC_2018 = {"CEX5A 2": (77.5, 99.8)}


def _plan_file(tmp_path, report, system_extra="", workloads=None, name="plan.toml") -> Path:
    wl = workloads if workloads is not None else (
        '[[workload]]\nname = "payments"\nkind = "ams"\nrate = 300\npolicy = "privacy"\nmessage_kb = 2\n')
    p = tmp_path / name
    p.write_text(f'[system]\nprocessors = 8\nrmf = "{report}"\nplatform = "z14"\ncard_generation = "CEX6S"\n'
                 f'max_utilization = 0.85\nfailover = "none"\n{system_extra}\n{wl}', encoding="utf-8")
    return p


def _mean(values):
    return sum(values) / len(values)


def test_the_2018_report_gives_the_cards_the_other_lpars_and_says_where(tmp_path):
    r = read_plan(_plan_file(tmp_path, F2018))
    s = r.system
    assert (s.coprocessors, s.accelerators) == (6, 1)      # CEX5C 0 idle at 0.0% is installed too
    assert r.pools.cards["coprocessors"] == list(COP_2018)
    assert r.pools.cards["accelerators"] == ["CEX5A 2"]
    assert r.pools.cards["pkcs11"] == ["CEX5P 3"]          # listed apart
    # other LPARs as work (issue 61): CPC minus LPAR summed over the cards, which stays as cards are
    # added; the share of each card is only a note
    assert_allclose(s.other_coprocessor_cards, sum(c - lpar for lpar, c in COP_2018.values()) / 100, atol=1e-6)
    assert_allclose(s.other_accelerator_cards, (99.8 - 77.5) / 100, atol=1e-6)
    assert s.other_coprocessor_util == s.other_accelerator_util == 0.0
    text = "\n".join(r.notes)
    assert "z14-cex5-cex6-lpar-cpc-2018.txt, system S21, peak interval 2018-07-12 11:00:00" in text
    assert "coprocessors = 6" in text and "accelerators = 1" in text and "CEX5P 3" in text
    assert "other_coprocessor_cards = 2.94" in text and "48.9%" in text
    assert "idle at the peak (no request, 0.0%): CEX5C 0" in text           # listed apart, still capacity
    for card, (_, c) in {**COP_2018, **ACC_2018}.items():                     # 90% CPC-wide and above: named
        assert (f"warning: {card} is {c:.1f}% busy CPC-wide" in text) == (c > 90.0), card


def test_measured_load_plus_other_lpars_is_the_cpc_utilization_rmf_printed(tmp_path):
    r = read_plan(_plan_file(tmp_path, F2018))
    names = [w.name for w in r.workloads]
    assert MEASURED_NAMES["coprocessors"] in names and MEASURED_NAMES["accelerators"] in names
    res = plan(r.system, r.workloads)
    # the plan's pool utilization (requests x EXEC TIME / cards + other) against the printed CPC mean;
    # the shares are stored to 1e-6
    assert_allclose(float(res.resources["coprocessors"].utilization), _mean([c for _, c in COP_2018.values()]) / 100,
                    atol=2e-6)
    assert_allclose(float(res.resources["accelerators"].utilization), 99.8 / 100, atol=2e-6)
    # and this LPAR's busy is the LPAR column's sum
    assert_allclose(float(res.resources["coprocessors"].busy), sum(lpar for lpar, _ in COP_2018.values()) / 100, rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(rate=st.one_of(st.just(0.0), st.floats(1e-3, 5000)))   # below 1e-300 is refused by design
def test_the_measured_workload_solves_busy_equals_measured(tmp_path_factory, rate):
    # lambda = (B - B_plan) / s substituted back: the plan's busy is the measured busy whenever the
    # planned workloads need less than it, and their own busy (no measured workload) otherwise
    tmp = tmp_path_factory.mktemp("p")
    wl = (f'[[workload]]\nname = "payments"\nkind = "ams"\nrate = {rate!r}\npolicy = "privacy"\nmessage_kb = 2\n')
    r = read_plan(_plan_file(tmp, F2018, workloads=wl))
    alone = plan(r.system, [w for w in r.workloads if w.name not in MEASURED_NAMES.values()])
    res = plan(r.system, r.workloads)
    for pool, measured in (("coprocessors", sum(lpar for lpar, _ in COP_2018.values()) / 100), ("accelerators", 0.775)):
        mine = float(alone.resources[pool].busy)
        assert_allclose(float(res.resources[pool].busy), max(measured, mine), rtol=1e-9, atol=6e-4)
        assert (MEASURED_NAMES[pool] in res.workloads) == (measured - mine > 5e-4)


def test_a_count_the_plan_file_gives_wins_and_is_said(tmp_path):
    r = read_plan(_plan_file(tmp_path, F2018, "coprocessors = 8"))
    assert r.system.coprocessors == 8
    assert any("coprocessors = 8 from the plan file (RMF's report lists 6 CCA coprocessors" in n for n in r.notes)
    base = read_plan(_plan_file(tmp_path, F2018, name="b.toml"))
    m = {w.name: w.rate for w in r.workloads}
    mb = {w.name: w.rate for w in base.workloads}
    assert m[MEASURED_NAMES["coprocessors"]] == mb[MEASURED_NAMES["coprocessors"]]   # requests, not per card


def test_the_single_scope_report_has_no_other_lpars_share(tmp_path):
    r = read_plan(_plan_file(tmp_path, F2017, "other_coprocessor_util = 0.05"))
    assert r.system.other_coprocessor_util == 0.05                  # the plan's stands
    assert r.system.other_accelerator_util == 0.0
    assert (r.system.coprocessors, r.system.accelerators) == (5, 1)  # CEX5C 0-1, CEX6C 5-7; CEX6A 4
    text = "\n".join(r.notes)
    assert "no CPC columns" in text
    assert r.pools.cards["pkcs11"] == ["CEX5P 3", "CEX6P 8"]


def test_an_accelerator_with_cpc_columns_only_is_other_lpars_work_and_gets_no_measured_load(tmp_path):
    """The 2019 excerpt's CEX7A 2 prints only CPC columns (99.7%): its load is other LPARs' work,
    not a free accelerator (issue 61); the CPC columns count this LPAR's requests too, so other
    LPARs' work is the CPC utilization less the plan's own busy there, and the plan's utilization
    today is the CPC utilization RMF printed.  This LPAR's own busy on it is unknown: no measured load."""
    r = read_plan(_plan_file(tmp_path, F2019))
    assert (r.system.coprocessors, r.system.accelerators) == (2, 1)
    assert r.pools.busy["accelerators"] is None
    assert MEASURED_NAMES["accelerators"] not in [w.name for w in r.workloads]
    assert any("RMF prints no LPAR columns" in n for n in r.notes)
    assert_allclose(r.system.other_coprocessor_cards, (99.8 - 41.7) / 100, atol=1e-6)
    res = plan(r.system, r.workloads)
    own = float(res.resources["accelerators"].busy)
    assert 0 < own < 0.997
    assert_allclose(r.system.other_accelerator_cards, 0.997 - own, atol=1e-6)
    assert_allclose(float(res.resources["accelerators"].utilization), 0.997, atol=1e-6)   # RMF's CPC-wide
    assert any("CEX7A 2 is 99.7% busy CPC-wide" in n for n in r.notes)


def test_several_systems_need_rmf_system(tmp_path):
    both = tmp_path / "both.txt"
    both.write_bytes(F2018.read_bytes() + F2019.read_bytes())
    with pytest.raises(PlanError, match=r"systems CB89, S21: say which LPAR .*rmf_system = \"CB89\""):
        read_plan(_plan_file(tmp_path, "both.txt"))
    r = read_plan(_plan_file(tmp_path, "both.txt", 'rmf_system = "CB89"'))
    assert r.pools.system == "CB89" and r.system.coprocessors == 2
    with pytest.raises(PlanError, match="rmf_system 'S99' is not in RMF's report"):
        read_plan(_plan_file(tmp_path, "both.txt", 'rmf_system = "S99"'))


def test_smf70_records_give_the_same_plan(tmp_path):
    (tmp_path / "smf70.bin").write_bytes(records_2018())
    a = read_plan(_plan_file(tmp_path, "smf70.bin"))
    b = read_plan(_plan_file(tmp_path, F2018, name="b.toml"))
    assert (a.system.coprocessors, a.system.accelerators) == (b.system.coprocessors, b.system.accelerators)
    assert a.pools.cards == b.pools.cards
    # SMF's counts and times against the report's print (UTIL% to 0.1: 0.05 points each)
    assert_allclose(a.system.other_coprocessor_util, b.system.other_coprocessor_util, atol=1e-3)
    assert_allclose(a.pools.busy["coprocessors"], b.pools.busy["coprocessors"], atol=6 * 5e-4)


@pytest.mark.parametrize("extra, match", [
    ('rmf_system = "S21"\n', None),
    ("", "cannot read RMF's report"),
])
def test_rmf_errors_name_the_file(tmp_path, extra, match):
    if match is None:
        p = tmp_path / "p.toml"
        p.write_text('[system]\nprocessors = 8\ncoprocessors = 2\naccelerators = 1\nrmf_system = "S21"\n'
                     '[[workload]]\nname = "w"\nkind = "measured"\ncard = "coprocessors"\nutilization = 0.1\n',
                     encoding="utf-8")
        with pytest.raises(PlanError, match="rmf_system names a system of RMF's report: give rmf"):
            read_plan(p)
        return
    with pytest.raises(PlanError, match=f"nothing.txt: {match}"):
        read_plan(_plan_file(tmp_path, "nothing.txt"))


def test_bad_rmf_values_and_reports(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('[system]\nprocessors = 8\nrmf = 5\n[[workload]]\nname = "w"\nkind = "measured"\n'
                 'card = "coprocessors"\nutilization = 0.1\n', encoding="utf-8")
    with pytest.raises(PlanError, match=r"rmf must be a file name in quotes \(got 5\)"):
        read_plan(p)
    (tmp_path / "bad.txt").write_text("not a report\n", encoding="utf-8")
    with pytest.raises(PlanError, match="bad.txt"):
        read_plan(_plan_file(tmp_path, "bad.txt"))
    taken = ('[[workload]]\nname = "RMF measured (coprocessors)"\nkind = "measured"\ncard = "coprocessors"\n'
             'utilization = 0.1\n')
    with pytest.raises(PlanError, match="the measured workload's RMF's report adds"):
        read_plan(_plan_file(tmp_path, F2018, workloads=taken))


def test_cli_prints_where_each_value_came_from(tmp_path):
    p = _plan_file(tmp_path, F2018)
    res = CliRunner().invoke(main, ["plan", str(p)])
    assert res.exit_code == 0, res.output
    assert "From RMF's report:" in res.output and "6 coprocessors, 1 accelerator (" in res.output
    res = CliRunner().invoke(main, ["plan", str(p), "--json"])
    doc = json.loads(res.output)
    assert doc["rmf"]["system"] == "S21" and doc["rmf"]["cards"]["pkcs11"] == ["CEX5P 3"]
    assert doc["rmf"]["peak_interval"]["coprocessors"] == "2018-07-12 11:00:00"
    missing = _plan_file(tmp_path, "nothing.txt", name="m.toml")
    res = CliRunner().invoke(main, ["plan", str(missing)])
    assert res.exit_code == 2 and "nothing.txt" in res.output and "Traceback" not in res.output


def test_rmf_pools_of_records(tmp_path):
    records, _ = read_rmf_report(F2018)
    pools = rmf_pools(records, "r")
    assert_allclose(pools.busy["coprocessors"], sum(lpar for lpar, _ in COP_2018.values()) / 100)
    # the pool's mean EXEC TIME is busy over rate: the LPAR rates as printed
    rates = [0, 2185, 4380, 4435, 4446, 4462]
    assert_allclose(pools.exec_ms("coprocessors"), pools.busy["coprocessors"] / sum(rates) * 1000)
    with pytest.raises(PlanError, match="holds no card"):
        rmf_pools([], "r")


def test_the_calibration_page_plan_runs_as_printed(tmp_path):
    # docs/calibration.md's plan with rmf = "crypto-report.txt", on the 2018 excerpt: the numbers
    # the page states are the plan's
    from _docs import DOCS, doc_block
    toml = doc_block("calibration.md", "### From the report to the plan", lang="toml")
    section = (DOCS / "calibration.md").read_text(encoding="utf-8").split("### From the report to the plan", 1)[1]
    section = section.split("\n## ", 1)[0]
    (tmp_path / "crypto-report.txt").write_bytes(F2018.read_bytes())
    (tmp_path / "site.toml").write_text(toml, encoding="utf-8")
    res = CliRunner().invoke(main, ["plan", str(tmp_path / "site.toml"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["resources"]["coprocessors"]["installed"] == 6 and doc["resources"]["accelerators"]["installed"] == 1
    assert f"{doc['resources']['coprocessors']['utilization']:.1%}" == "83.0%"
    assert f"{doc['resources']['accelerators']['utilization']:.1%}" == "99.8%"
    assert f"{doc['resources']['coprocessors']['other']:.2%}" == "48.95%"
    for stated in ("6 coprocessors", "1 accelerator (CEX5A 2)", "CEX5P 3", "83.0%", "99.8%", "48.95%", "22.3%",
                   "other_coprocessor_cards = 2.94", "other_accelerator_cards = 0.223"):
        assert stated in section


@pytest.mark.parametrize("path", [None, 5, 10**400, "", b"plan.toml"])
def test_a_path_that_is_no_file_name_is_named(path):
    with pytest.raises(PlanError, match="path must be a plan file's name"):
        read_plan(path)


def test_the_command_line_the_plan_sheet_and_python_read_plans_through_one_reader(tmp_path, monkeypatch):
    """issue 66: one reader of a plan, ``cryptoplan.model.read_plan``, for a TOML file (with and
    without ``rmf =``), a workbook's Plan sheet (``cryptoplan plan book.xlsx``) and the sheet's
    PLAN_* functions (``cryptoplan recalc``), and Python."""
    import cryptoplan.model as model
    from cryptoplan.model.zos.plan import read as reader
    from cryptoplan.model.zos.plan import tables
    assert model.read_plan is reader.read_plan and model.PlanTables is reader.PlanTables
    real, seen = reader.read_plan, []
    monkeypatch.setattr(reader, "read_plan", lambda source: seen.append(type(source).__name__) or real(source))
    book = tmp_path / "planner.xlsx"
    assert CliRunner().invoke(main, ["template", "-o", str(book)]).exit_code == 0
    tables._CACHE.clear()
    tables._READ.clear()
    res = CliRunner().invoke(main, ["recalc", str(book), "-o", str(tmp_path / "computed.xlsx")])
    assert res.exit_code == 0, res.output[-2000:]
    assert seen and set(seen) == {"PlanTables"}, seen          # the Plan sheet's PLAN_* cells
    seen.clear()
    assert CliRunner().invoke(main, ["plan", str(book)]).exit_code == 0
    assert seen == ["PlanTables"], seen                        # cryptoplan plan of a workbook
    plain = tmp_path / "plain.toml"
    plain.write_text('[system]\nprocessors = 4\ncoprocessors = 2\naccelerators = 1\n[[workload]]\nname = "a"\n'
                     'kind = "ams"\nrate = 50\npolicy = "integrity"\nmessage_kb = 2\n', encoding="utf-8")
    for path in (plain, _plan_file(tmp_path, F2018)):
        seen.clear()
        assert CliRunner().invoke(main, ["plan", str(path)]).exit_code == 0
        assert seen == ["str"], seen                           # the file's name, as the command got it


def test_the_measured_residual_is_taken_in_the_reports_own_interval(tmp_path):
    """Issue 61: the residual was this LPAR's busy at the report's peak (11:00-11:30 in the 2018
    excerpt) less the plan's busy at the plan's own peak (09:00 here).  Now less the plan's busy in
    the report's interval of its day: substituted back, the plan's own busy in that interval plus
    the measured load is the measured busy (the LPAR columns' sum)."""
    from cryptoplan.model.zos.plan.daily import daily_factors, day_intervals, distinct_intervals
    from cryptoplan.model.zos.plan.evaluate import plan_with_loads
    # peaks at 09:00 (factor 10), 5 at 11:00: the plan's busy in the two intervals differ 2:1
    prof = '[profile.online]\nfactors = [1, 1, 1, 1, 1, 1, 2, 4, 8, 10, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1]\n'
    wl = (prof + '[[workload]]\nname = "payments"\nkind = "ams"\nrate = 500\npolicy = "privacy"\nmessage_kb = 2\n'
          'profile = "online"\n')
    r = read_plan(_plan_file(tmp_path, F2018, workloads=wl))
    measured = [w for w in r.workloads if w.name == MEASURED_NAMES["coprocessors"]]
    assert measured, r.notes
    today = dataclasses.replace(r.system, peak_day_factor=1.0)
    _, loads, _, _ = plan_with_loads(today, r.workloads, growth=1.0, months=0.0)
    n = day_intervals(r.workloads)
    _, inverse = distinct_intervals(daily_factors(r.workloads, n))
    per = loads["coprocessors"].sum(axis=0)[inverse]            # every workload's busy, each interval
    at_11 = per[11 * n // 24]
    assert_allclose(at_11, sum(lpar for lpar, _ in COP_2018.values()) / 100, rtol=1e-9)
    assert per.argmax() == 9 * n // 24 and per[9 * n // 24] > at_11      # the plan's own peak is 09:00
    assert any("(2018-07-12 11:00:00)" in note and "in the same interval of their day" in note for note in r.notes)


@pytest.mark.parametrize("when, seconds, n, want", [
    ("2018-07-12 11:00:00", 1800.009, 96, [44, 45]),          # RMF's 30 minutes and 9 ms: two quarter hours
    ("2019-08-11 22:45:00", 900.001, 96, [91]),
    ("2019-08-11 10:00:01", 3600.0, 24, [10]),                 # a second past the hour: that hour
    ("2019-08-11 23:30:00", 3600.0, 48, [47, 0]),              # across midnight: wraps
    ("2019-08-11 10:15:00", 1800.0, 24, [10]),                 # inside one hour
    ("2019-08-11 10:45:00", 1800.0, 24, [10, 11]),             # half in each
])
def test_the_report_interval_weights_the_plan_intervals_it_overlaps(when, seconds, n, want):
    """_busy_in: the plan's busy in the report's interval, each plan interval weighted by the
    minutes it shares with it (the reviewer's cases: 9 ms past 30 minutes, a second past the hour,
    midnight)."""
    import numpy as np
    from cryptoplan.model.zos.plan.read import _busy_in
    from cryptoplan.model.zos.plan import Workload
    from cryptoplan.model.zos.plan.daily import DailyProfile
    factors = list(np.arange(1.0, n + 1.0))                      # interval i busy i + 1: which ones are read
    w = Workload("w", "measured", 1.0, 0.0, {"card": "coprocessors", "exec_ms": 1.0},
                 profile=DailyProfile("p", tuple(factors)))
    loads = np.array([np.asarray(factors) / np.mean(factors)])   # (W, J): every interval distinct
    got = _busy_in([w], loads, when, seconds)
    assert got == pytest.approx(float(np.mean(loads[0][want])), rel=1e-12), (want, got)   # equal overlaps here
