"""Other LPARs' load on the shared cards as work that stays, or as a share of every card (issue 61).

Expected values: the counts required are checked by substituting them back into their
definitions over random loads (hypothesis): with other LPARs' work ``W`` (cards' worth), the least
``n`` with ``(B + W)/n`` within the target (``B`` this LPAR's busy at the peak), and with one card
failed the least ``n >= 2`` with ``(B + W)/(n - 1)`` within the failover limit.  The 2018 excerpt's
numbers are its printed LPAR and CPC columns (tests/data/rmf-reports).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.zos.plan import PlanError, System, Workload, plan, read_plan
from cryptoplan.model.zos.plan.read import PlanTables

F2018 = Path(__file__).resolve().parent / "data" / "rmf-reports" / "z14-cex5-cex6-lpar-cpc-2018.txt"


def _pay(rate):
    return [Workload("pay", "ams", rate, args={"policy": "privacy", "message_kb": 2})]


@settings(max_examples=80, deadline=None)
@given(rate=st.floats(10.0, 20_000.0), work=st.floats(0.0, 12.0), k=st.integers(1, 16),
       target=st.floats(0.3, 0.85))
def test_the_counts_required_carry_own_work_plus_other_lpars_work(rate, work, k, target):
    s = System(processors=64, coprocessors=k, accelerators=8, max_utilization=target,
               other_coprocessor_cards=work, failover_max_utilization=0.9)
    r = plan(s, _pay(rate)).resources["coprocessors"]
    own = float(r.busy)                              # this LPAR's cards' worth at the peak
    assert own > 0
    assert_allclose(float(r.utilization), (own + work) / k, rtol=1e-12)
    n = float(r.required)
    assert (own + work) / n <= target * (1 + 1e-9)
    assert n == 1 or (own + work) / (n - 1) > target * (1 - 1e-9)
    f = float(r.failover.required)
    lim = s.failover_max_utilization
    assert f >= 2 and (own + work) / (f - 1) <= lim * (1 + 1e-9)
    assert f == 2 or (own + work) / (f - 2) > lim * (1 - 1e-9)
    if k >= 2:
        assert_allclose(float(r.failover.utilization), (own + work) / (k - 1), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(rate=st.floats(10.0, 5000.0), share=st.floats(0.0, 0.6), k=st.integers(1, 8))
def test_the_two_readings_agree_on_the_cards_installed_and_part_on_cards_added(rate, share, k):
    """At the installed count the two readings are the same load (W = s k).  Cards added carry a
    share too under the share reading, so where the plan needs more cards than installed the work
    reading needs no more than it; where fewer would do, the work (which stays) needs no fewer."""
    by_share = plan(System(processors=64, coprocessors=k, accelerators=8, other_coprocessor_util=share,
                           failover="none"), _pay(rate)).resources["coprocessors"]
    by_work = plan(System(processors=64, coprocessors=k, accelerators=8, other_coprocessor_cards=share * k,
                          failover="none"), _pay(rate)).resources["coprocessors"]
    assert_allclose(float(by_work.utilization), float(by_share.utilization), rtol=1e-12)
    n_work, n_share = float(by_work.required), float(by_share.required)
    assert n_work <= n_share if n_share >= k else n_work >= n_share


@pytest.mark.parametrize("work", [1.2, 1.6, 2.5])      # below, above the 70% target of 2 cards, overloaded
def test_other_lpars_work_alone_needs_none_of_this_lpars_cards(work):
    """A pool this LPAR sends nothing: no count, no month its growth reaches the target (so never
    the first to reach it), and the status says whose work it is (the reviewer's case: 1.6 of 2 cards)."""
    s = System(processors=4, coprocessors=2, accelerators=1, other_coprocessor_cards=work)
    res = plan(s, [Workload("tls", "channel", 100, args={"mode": "none", "message_kb": 2})])
    r = res.resources["coprocessors"]
    assert float(r.required) == 0 and float(r.failover.required) == 0
    assert_allclose(float(r.utilization), work / 2, rtol=1e-12)
    assert math.isinf(float(r.months_to_target))
    assert "with other LPARs' work alone; this LPAR sends them nothing" in str(r.status)
    # the busiest pool is the busiest (as ams_plan's), but this LPAR's growth never brings it to the target
    assert str(res.binds_first) != "coprocessors"


def test_both_readings_for_one_pool_are_refused_and_each_is_named_in_the_scenario():
    with pytest.raises(PlanError, match="given twice, as other_coprocessor_util .* and as other_coprocessor_cards"):
        System(processors=4, coprocessors=2, accelerators=1, other_coprocessor_util=0.1, other_coprocessor_cards=0.5)
    with pytest.raises(PlanError, match=r"other_accelerator_cards .*\[0, 64\]"):
        System(processors=4, coprocessors=2, accelerators=1, other_accelerator_cards=65)
    from cryptoplan.model.zos.plan.tables import scenario_lines
    r = plan(System(processors=4, coprocessors=2, accelerators=1, other_coprocessor_cards=0.5,
                    other_accelerator_util=0.1), _pay(100))
    text = "\n".join(scenario_lines(r))
    assert "0.5 coprocessors' worth of work (stays as cards are added)" in text
    assert "10% of each accelerator (cards added too)" in text


def test_toml_tables_and_python_read_both_keys(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('[system]\nprocessors = 4\ncoprocessors = 2\naccelerators = 1\nother_coprocessor_cards = 0.75\n'
                 '[[workload]]\nname = "pay"\nkind = "ams"\nrate = 100\npolicy = "privacy"\nmessage_kb = 2\n',
                 encoding="utf-8")
    assert read_plan(p).system.other_coprocessor_cards == 0.75
    tables = PlanTables([["name", "kind", "rate", "policy", "message_kb"], ["pay", "ams", 100, "privacy", 2]],
                        [["processors", 4], ["coprocessors", 2], ["accelerators", 1],
                         ["other_accelerator_cards", 0.25]])
    assert read_plan(tables).system.other_accelerator_cards == 0.25


PLAN_2018 = """
[system]
processors = 8
rmf = "{report}"
platform = "z14"
card_generation = "CEX6S"
failover = "none"
{extra}
[[workload]]
name = "payments"
kind = "ams"
rate = {rate}
policy = "privacy"
message_kb = 2
growth_per_year = 0.3
"""


def test_the_2018_excerpt_read_as_work_asks_for_fewer_cards_than_as_a_share(tmp_path):
    """Issue 61: other LPARs keep 48.9% of each of the six coprocessors (2.94 cards' worth).  Read as
    work that stays, the count required carries 2.94 cards' worth whatever the count; read as a
    share of every card, each card added arrives 48.9% busy."""
    def read(extra, name):
        p = tmp_path / name
        p.write_text(PLAN_2018.format(report=F2018, extra=extra, rate=3000), encoding="utf-8")
        return read_plan(p)
    work = read("", "work.toml")
    share = read(f"other_coprocessor_util = {work.pools.other['coprocessors']!r}", "share.toml")
    rw = plan(work.system, work.workloads).resources["coprocessors"]
    rs = plan(share.system, share.workloads).resources["coprocessors"]
    assert_allclose(float(rw.utilization), float(rs.utilization), rtol=1e-5)   # the same cards today
    W, target = work.system.other_coprocessor_cards, work.system.max_utilization
    own = float(rw.busy)
    n = float(rw.required)
    assert (own + W) / n <= target and (own + W) / (n - 1) > target
    assert float(rs.required) > n
    assert math.isclose(W, 2.937, abs_tol=1e-6)
    # docs/calibration.md quotes these counts
    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "calibration.md").read_text(encoding="utf-8").split())
    said = (f"the work reading needs {n:.0f} coprocessors ({float(rw.required_at_horizon):.0f} at the horizon), the "
            f"share reading {float(rs.required):.0f} ({float(rs.required_at_horizon):.0f})")
    assert said in doc, said


def test_no_card_installed_with_other_lpars_work():
    """k = 0: this LPAR's work cannot be carried (the status says so) and the count it needs carries
    other LPARs' work too; with no work of its own, nothing is needed and nothing is busy."""
    s = System(processors=4, coprocessors=0, accelerators=1, other_coprocessor_cards=0.8)
    r = plan(s, _pay(300)).resources["coprocessors"]
    assert math.isinf(float(r.utilization)) and "none installed" in str(r.status)
    n = float(r.required)
    own = float(r.busy)
    assert (own + 0.8) / n <= s.max_utilization * (1 + 1e-9) and (n == 1 or (own + 0.8) / (n - 1) > s.max_utilization)
    idle = plan(s, [Workload("tls", "channel", 100, args={"mode": "none", "message_kb": 2})]).resources["coprocessors"]
    assert float(idle.required) == 0 and float(idle.utilization) == 0
