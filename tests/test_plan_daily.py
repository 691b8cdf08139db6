"""The busiest day (model/zos/plan/daily.py) and one card failed (evaluate.py's failover).

Expected values come from arithmetic written out here: a plan's loads are linear in its rates,
so a profiled workload's utilization in an interval is the flat plan's at the profile's factor
times that rate, and the day's average is the flat plan's; a window's share of an interval is
the minutes it covers over the interval's minutes; a pool with one of its k cards failed carries
its load and other LPARs' share of k cards on k - 1 (checked by substituting the counts back).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.zos.plan import DailyProfile, PlanError, System, Window, Workload, plan, plan_from_dict
from cryptoplan.model.zos.plan import evaluate
from cryptoplan.model.zos.plan.daily import distinct_intervals, interval_label

EXACT = 1e-12


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)


def pay(rate=300.0, **kw):
    return Workload("pay", "ams", rate, 0.0, {"policy": "privacy", "message_kb": 2.0}, **kw)


def stmt(rate=100.0, **kw):
    return Workload("stmt", "ams", rate, 0.0, {"policy": "integrity", "message_kb": 64.0}, **kw)


S = System(processors=8, coprocessors=4, accelerators=3, other_coprocessor_util=0.05, failover="none")


# ----------------------------------------------------------------- profiles
def test_a_profile_is_normalized_to_mean_one_and_names_its_interval():
    p = DailyProfile("online", [0, 2] * 12)
    assert_allclose(np.mean(p.factors), 1.0, rtol=EXACT)
    assert p.factors[1] == 2.0 and p.minutes == 60
    assert DailyProfile("q", [1] * 96).minutes == 15 and DailyProfile("h", [1] * 48).minutes == 30


@pytest.mark.parametrize("factors,words", [([1] * 23, "24 .hourly., 48 .half-hourly. or 96"),
                                           ([0] * 24, "every factor is 0"),
                                           ([1] * 23 + [-1], r"factor 24 \(23:00\).*factors must be in"),
                                           ([1] * 23 + ["x"], "factor 24 .23:00. must be a number"),
                                           ([1] * 23 + [True], "must be a number"),
                                           ("24 ones", "must be a list")])
def test_a_bad_profile_is_named(factors, words):
    with pytest.raises(PlanError, match=words):
        DailyProfile("online", factors)


def test_a_profiled_workload_peaks_where_its_profile_does_and_averages_the_flat_plan():
    f = np.ones(24)
    f[9] = 5.0                                          # 09:00 the busiest hour
    prof = DailyProfile("online", f)
    flat = plan(S, [pay(), stmt()])
    day = plan(S, [pay(profile=prof), stmt()])
    for pool in ("coprocessors", "accelerators"):
        r, r0 = day.resources[pool], flat.resources[pool]
        assert r.peak_interval == "09:00"
        # the average day's utilization is the flat plan's (loads are linear in the rates)
        assert_allclose(r.average_utilization, r0.utilization, rtol=1e-12)
        # at 09:00 pay runs at 5 / mean(f) times its average, stmt as always
        k = S.installed(pool)
        expect = (r0.by_workload["pay"] * 5.0 / f.mean() + r0.by_workload["stmt"]) + S.other(pool)
        assert_allclose(r.utilization, expect, rtol=1e-12)
        assert_allclose(r.by_workload["pay"], r0.by_workload["pay"] * 5.0 / f.mean(), rtol=1e-12)
        assert k == r.installed


def test_the_peak_day_factor_scales_the_peak_not_the_average():
    s = System(processors=8, coprocessors=4, accelerators=3, peak_day_factor=1.5, failover="none")
    r, r0 = plan(s, [pay()]), plan(System(processors=8, coprocessors=4, accelerators=3, failover="none"), [pay()])
    acc, acc0 = r.resources["accelerators"], r0.resources["accelerators"]
    assert_allclose(acc.utilization, 1.5 * acc0.utilization, rtol=1e-12)
    assert_allclose(acc.average_utilization, acc0.utilization, rtol=1e-12)
    assert acc.required >= acc0.required


def test_counts_and_months_are_for_the_peak_interval():
    f = [1.0] * 24
    f[14] = 8.0
    prof = DailyProfile("p", f)
    r = plan(S, [pay(rate=500.0, profile=prof)])
    peak_rate = 500.0 * 8.0 / np.mean(f)
    alone = plan(S, [pay(rate=peak_rate)])
    for pool in ("processors", "coprocessors", "accelerators"):
        assert r.resources[pool].required == alone.resources[pool].required
        assert_allclose(r.resources[pool].utilization, alone.resources[pool].utilization, rtol=1e-12)
    assert r.workloads["pay"].peak_rate == pytest.approx(peak_rate, rel=1e-12)
    assert r.workloads["pay"].rate == 500.0


# ----------------------------------------------------------------- windows (storms)
@pytest.mark.parametrize("start,minutes,n,expect", [
    (7 * 60, 10.0, 96, {28: 10 / 15}),
    (7 * 60 + 10, 20.0, 96, {28: 5 / 15, 29: 15 / 15}),
    (23 * 60 + 50, 20.0, 96, {95: 10 / 15, 0: 10 / 15}),     # past midnight: the same day's first minutes
    (7 * 60, 90.0, 24, {7: 1.0, 8: 0.5}),
])
def test_a_window_covers_its_minutes_of_each_interval(start, minutes, n, expect):
    got = Window(start, minutes).fractions(n)
    want = np.zeros(n)
    for j, v in expect.items():
        want[j] = v
    assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert_allclose(got.sum() * 1440 / n, minutes, rtol=1e-12)


def test_a_storm_runs_at_its_rate_in_its_window_only():
    storm = Workload("storm", "channel_starts", 30.0, args={"cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"},
                     window=Window.checked("07:00", 15, "test"))
    r = plan(S, [storm])
    alone = plan(S, [Workload("storm", "channel_starts", 30.0, args={"cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"})])
    cop = r.resources["coprocessors"]
    assert cop.peak_interval == "07:00" and r.intervals == 96
    assert_allclose(cop.utilization, alone.resources["coprocessors"].utilization, rtol=1e-12)
    assert_allclose(cop.average_utilization - 0.05, (alone.resources["coprocessors"].utilization - 0.05) / 96,
                    rtol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 1439), st.floats(1.0, 240.0), st.floats(1.0, 120.0))
def test_a_storm_off_the_quarter_hours_is_judged_at_its_own_rate(start, minutes, rate):
    """Issue 63, finding 3: 2,000 starts in 10 minutes (3.33/s) were judged as 2.78/s over their
    quarter hour, and a 2-minute burst at 400/s as 66.7/s.  A window that starts or ends inside a
    quarter hour puts the day in minutes: a storm of a minute or more fills one, and the pool's
    peak is the plan of the same rate all day (the storm's own rate), its day average the storm's
    minutes' share of that (the other LPARs' 5% apart)."""
    cipher = {"cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"}
    storm = Workload("storm", "channel_starts", rate, args=cipher,
                     window=Window.checked(f"{start // 60:02d}:{start % 60:02d}", minutes, "test"))
    r = plan(S, [storm])
    alone = plan(S, [Workload("storm", "channel_starts", rate, args=cipher)]).resources["coprocessors"]
    cop = r.resources["coprocessors"]
    aligned = start % 15 == 0 and minutes % 15 == 0
    assert r.intervals == (96 if aligned else 1440)
    assert_allclose(cop.utilization, alone.utilization, rtol=1e-12)
    assert_allclose(cop.average_utilization - 0.05, (alone.utilization - 0.05) * minutes / 1440, rtol=1e-9)
    assert_allclose(r.workloads["storm"].peak_rate, rate, rtol=1e-12)


def test_a_two_minute_burst_above_what_the_channel_initiator_sustains_is_warned_at_its_rate():
    """Issue 63, finding 3: a 2-minute burst at 400 starts/s was averaged over its quarter hour to
    66.7/s, under the 95/s one channel initiator sustains, and got no warning."""
    burst = Workload("burst", "channel_starts", 400.0, args={"cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"},
                     window=Window.checked("08:05", 2, "test"))
    r = plan(System(processors=8, coprocessors=8, accelerators=3, failover="none"), [burst])
    said = [w for w in r.warnings if "burst" in w]
    assert len(said) == 1 and "400 channel starts/s at its peak" in said[0], r.warnings
    assert r.resources["coprocessors"].peak_interval == "08:05"


@pytest.mark.parametrize("start,minutes,words", [
    ("09:00", 45.0, "window start must be whole minutes after midnight, 0 to 1439 (got '09:00')"),
    (1440, 45.0, "0 to 1439 (got 1440)"),
    (True, 45.0, "got True"),
    (540.5, 45.0, "got 540.5"),
    (540, 0.0, "minutes"),
    (540, "45", "minutes"),
])
def test_a_window_built_directly_is_checked_naming_the_value(start, minutes, words):
    # the Python API's Window(start, minutes) (Window.checked parses "HH:MM"): a bad value is a PlanError
    # naming it, not a ValueError from inside the plan
    with pytest.raises(PlanError, match=re.escape(words)):
        Window(start, minutes)


@pytest.mark.parametrize("start", ["7", "24:00", "07:60", "seven", None])
def test_a_bad_start_is_named(start):
    doc = {"system": {"processors": 4, "coprocessors": 2, "accelerators": 1},
           "workload": [{"name": "s", "kind": "channel_starts", "rate": 5, "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256",
                         "start": start, "duration_minutes": 10}]}
    with pytest.raises(PlanError, match=r"p.toml.*'s'.*(start must be a time of day|takes both start)"):
        plan_from_dict(doc, "p.toml")


def test_interval_labels():
    assert [interval_label(j, 96) for j in (0, 1, 95)] == ["00:00", "00:15", "23:45"]
    assert interval_label(13, 24) == "13:00"


@given(st.integers(1, 4), st.sampled_from([1, 24, 48, 96]), st.data())
def test_distinct_intervals_are_each_distinct_column_at_its_first_interval(w, n, data):
    values = st.sampled_from([0.0, -0.0, 0.5, 1.0, 1.0 + 2.0 ** -52, 3.0])
    f = np.array(data.draw(st.lists(st.lists(values, min_size=n, max_size=n), min_size=w, max_size=w)))
    first, inverse = distinct_intervals(f)
    bits = f.view(np.int64)
    assert (bits[:, first][:, inverse] == bits).all()                      # the day rebuilt, to the bit
    assert list(first) == sorted(first)
    assert len({bits[:, j].tobytes() for j in first}) == len(first)      # each once
    for j in range(n):                                                    # at its first interval
        assert first[inverse[j]] == min(i for i in range(n) if (bits[:, i] == bits[:, j]).all())


def _every_interval(factors):
    return np.arange(factors.shape[1]), np.arange(factors.shape[1])


@pytest.mark.slow        # over 1.3 s (docs/development.md, "Tiers")
@pytest.mark.fail_slow("60s")     # 60 examples of two plans each: 6.7 s on an idle machine, 21.6 s beside the suite
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 13.7, 311.3]),
                          st.lists(st.sampled_from([0.0, 0.37, 1.0, 1.1, 4.0]), min_size=24, max_size=24),
                          st.sampled_from(["hourly", "quarter hours", "window"]), st.sampled_from([0.0, 0.3])),
                min_size=1, max_size=3),
       st.sampled_from([None, 0.5]), st.sampled_from([1.0, list(np.linspace(0.5, 4.0, 7))]))
def test_a_plan_of_the_distinct_intervals_is_the_plan_of_every_interval_to_the_bit(spec, max_wait, growth):
    # evaluating each distinct interval once (intervals with the same factors have the same answers) against
    # evaluating all of them: every answer equal, to the bit, in the scalar and the array plan, but the day's
    # average (to 1e-14); a plan whose average skipped the repeated intervals, or whose peak was not the
    # day's first, fails
    ws = []
    for i, (rate, factors, day, g) in enumerate(spec):
        if sum(factors) == 0:
            factors[i] = 1.0
        if day == "window":                    # a ten-minute storm: 96 intervals, most of them empty
            when = {"window": Window.checked(f"{8 + i:02d}:10", 40.0 + 15 * i, "w")}
        else:                                  # quarter hours: each hour's factor four times
            when = {"profile": DailyProfile(f"p{i}", list(np.repeat(factors, 4)) if day == "quarter hours" else factors)}
        args = {"policy": "integrity", "message_kb": 64.0} if i == 1 else {"policy": "privacy", "message_kb": 2.0}
        ws.append(Workload(f"w{i}", "ams", rate, g, args, **when))
    s = System(processors=3, coprocessors=2, accelerators=1, other_coprocessor_util=0.05, max_wait_ms=max_wait,
               peak_day_factor=1.2)
    got = plan(s, ws, growth=growth).to_dict()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(evaluate, "distinct_intervals", _every_interval)
        want = plan(s, ws, growth=growth).to_dict()
    # the day's average weights each distinct interval by its count: a sum in another order
    for pool in got["resources"]:
        a, b = (np.atleast_1d(d["resources"][pool]["peak"].pop("average_utilization")) for d in (got, want))
        assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-14, atol=0)
    assert json.dumps(got) == json.dumps(want)


def test_plan_file_profiles_are_checked_and_used():
    base = {"system": {"processors": 4, "coprocessors": 2, "accelerators": 1, "failover": "none"},
            "profile": {"online": {"factors": [1] * 96, "interval_minutes": 15}},
            "workload": [{"name": "a", "kind": "ams", "rate": 10, "policy": "privacy", "message_kb": 2,
                          "profile": "online"}]}
    s, ws = plan_from_dict(base, "p.toml")
    assert ws[0].profile.minutes == 15
    for change, words in (
            ({"profile": {"online": {"factors": [1] * 24, "interval_minutes": 15}}}, "interval_minutes is 15 but"),
            ({"profile": {"online": {"factors": [1] * 24, "colour": 1}}}, "unknown key 'colour'"),
            ({"profile": {"online": {"factors": [1] * 24}, "night": {"factors": [1] * 24}}}, "'night' is defined but"),
            ({"profile": {}}, "profile 'online' is not a profile of the plan")):
        with pytest.raises(PlanError, match=words):
            plan_from_dict({**base, **change}, "p.toml")


# ----------------------------------------------------------------- one card failed
@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(st.floats(10.0, 3000.0), st.integers(0, 12), st.floats(0.0, 0.5), st.floats(0.55, 0.95))
def test_the_failover_count_is_the_fewest_cards_that_survive_one_failing(rate, cards, other, limit):
    s = System(processors=64, coprocessors=cards, accelerators=cards, other_coprocessor_util=other,
               other_accelerator_util=other, failover_max_utilization=limit, max_utilization=0.99)
    r = plan(s, [pay(rate)])
    for pool in ("coprocessors", "accelerators"):
        f = r.resources[pool].failover
        n = int(f.required)
        assert n >= 2

        def util(k):          # substitute a count back: the failover utilization with k installed
            s2 = System(processors=64, coprocessors=k, accelerators=k, other_coprocessor_util=other,
                        other_accelerator_util=other, failover_max_utilization=limit)
            return plan(s2, [pay(rate)]).resources[pool].failover.utilization
        if n <= 64:
            assert util(n) <= limit * (1 + 1e-12)
            if n > 2:
                assert util(n - 1) > limit
        if cards >= 2:
            load = r.resources[pool].busy
            assert_allclose(f.utilization, (load + other * cards) / (cards - 1), rtol=1e-12)
        assert (f.utilization <= limit) == (cards >= n) or cards < 2


def test_one_card_is_never_enough_with_failover_on():
    s = System(processors=8, coprocessors=1, accelerators=1)
    r = plan(s, [pay(5.0)])
    acc = r.resources["accelerators"]
    assert acc.required == 1 and acc.failover.required == 2
    assert acc.failover.utilization == np.inf and acc.failover.months_to_limit == 0.0
    assert acc.failover.status == "if the only accelerator fails, none is left: 2 needed to survive one failing"
    assert plan(System(processors=8, coprocessors=1, accelerators=1, failover="none"), [pay(5.0)]).resources[
        "accelerators"].failover is None


def test_the_failover_status_says_how_busy_the_rest_run():
    s = System(processors=8, coprocessors=2, accelerators=2)
    r = plan(s, [pay(1500.0)])
    f = r.resources["accelerators"].failover
    pct = round(100 * f.utilization)
    assert f.status.startswith(f"if one accelerator fails, the other one runs at {pct}%")
    assert ("overloaded" in f.status) == (f.utilization >= 1.0)


def test_other_lpars_above_the_failover_limit_are_refused():
    with pytest.raises(PlanError, match="other_coprocessor_util .0.9. leaves no room below failover_max_utilization"):
        System(processors=4, coprocessors=2, accelerators=1, other_coprocessor_util=0.9, max_utilization=0.95)


def test_the_site_failover_factor_multiplies_only_the_marked_workloads():
    s = System(processors=8, coprocessors=4, accelerators=3, site_failover_factor=2.0, failover="none")
    r = plan(s, [pay(site_failover=True), stmt()])
    r0 = plan(System(processors=8, coprocessors=4, accelerators=3, failover="none"), [pay(), stmt()])
    for pool in ("coprocessors", "accelerators"):
        assert_allclose(r.resources[pool].by_workload["pay"], 2 * r0.resources[pool].by_workload["pay"], rtol=1e-12)
        assert_allclose(r.resources[pool].by_workload["stmt"], r0.resources[pool].by_workload["stmt"], rtol=1e-12)
    unused = plan(s, [pay(), stmt()])
    assert any("no workload is marked site_failover" in w for w in unused.warnings)


def test_a_workload_may_stay_off_the_busiest_days_factor_and_a_storm_does_by_default():
    """Issue 63, finding 4: the busiest-day factor multiplied everything, storms and flat batch
    feeds included (a storm of 250/s quoted at 500/s with a factor 2).  ``peak_day = false`` keeps a
    workload's rate as given; a window (a storm: its rate is the rate while it runs) is off by
    default and can be put back on.  From TOML, the Workloads table and Python alike: the plan of a
    factor-2 day with the feed off is the plan with the feed at its rate and the rest doubled."""
    from cryptoplan.model.zos.plan.files import plan_from_tables
    sysd = {"processors": 4, "coprocessors": 2, "accelerators": 2, "failover": "none", "peak_day_factor": 2.0}
    pay = {"name": "pay", "kind": "ams", "rate": 100, "policy": "privacy", "message_kb": 2}
    feed = {"name": "feed", "kind": "ams", "rate": 80, "policy": "integrity", "message_kb": 64, "peak_day": False}
    s, ws = plan_from_dict({"system": sysd, "workload": [pay, feed]})
    assert [w.peak_day for w in ws] == [True, False]
    got = plan(s, ws)
    ref_s, ref_ws = plan_from_dict({"system": {**sysd, "peak_day_factor": 1.0},
                                    "workload": [{**pay, "rate": 200}, {**feed, "peak_day": True}]})
    want = plan(ref_s, ref_ws)
    for pool in ("processors", "coprocessors", "accelerators"):
        assert_allclose(got.resources[pool].utilization, want.resources[pool].utilization, rtol=1e-12)
    assert_allclose(got.workloads["feed"].peak_rate, 80.0, rtol=1e-12)
    # the day's average: each workload's own busiest-day factor off its load (pay's halved, feed's not)
    day_s, day_ws = plan_from_dict({"system": {**sysd, "peak_day_factor": 1.0}, "workload": [pay, feed]})
    for pool in ("processors", "coprocessors", "accelerators"):
        assert_allclose(got.resources[pool].average_utilization,
                        plan(day_s, day_ws).resources[pool].average_utilization, rtol=1e-12)
    assert got.to_dict()["workloads"]["feed"]["peak_day"] is False
    # the Workloads table (Calc hands a boolean to an add-in as 0/1, a typed word as text)
    head = ["name", "kind", "rate", "policy", "message_kb", "peak_day"]
    for off in (False, 0, "FALSE", "false", "no"):
        rows = [head, ["pay", "ams", 100, "privacy", 2, None], ["feed", "ams", 80, "integrity", 64, off]]
        ts, tws = plan_from_tables(rows, [["processors", 4], ["coprocessors", 2], ["accelerators", 2],
                                          ["failover", "none"], ["peak_day_factor", 2]])
        assert [w.peak_day for w in tws] == [True, False]
        assert_allclose(plan(ts, tws).resources["accelerators"].utilization,
                        got.resources["accelerators"].utilization, rtol=1e-12)
    # a storm is off by default, on when asked
    storm = {"name": "storm", "kind": "channel_starts", "rate": 250, "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256",
             "start": "07:00", "duration_minutes": 10}
    for said, factor in ((None, 1.0), (True, 2.0), (False, 1.0)):
        w = {**storm} if said is None else {**storm, "peak_day": said}
        s2, ws2 = plan_from_dict({"system": sysd, "workload": [w]})
        assert_allclose(plan(s2, ws2).workloads["storm"].peak_rate, 250 * factor, rtol=1e-12)
    with pytest.raises(PlanError, match=r"workload 'feed': peak_day must be true or false \(got 'maybe'\)"):
        Workload("feed", "ams", 80, args={"policy": "integrity", "message_kb": 64}, peak_day="maybe")


def _arrays_kept(obj, seen=None) -> list:
    """Every NumPy array a callable keeps (its closure's cells, through the callables, partials,
    dicts, tuples and lists they hold)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, dict):
        return [a for v in obj.values() for a in _arrays_kept(v, seen)]
    if isinstance(obj, (tuple, list)):
        return [a for v in obj for a in _arrays_kept(v, seen)]
    inner = getattr(obj, "__wrapped__", None) or getattr(obj, "func", None)
    out = _arrays_kept(inner, seen) if inner is not None else []
    for attr in ("args", "keywords"):
        out += _arrays_kept(getattr(obj, attr, None) or (), seen) if not callable(getattr(obj, attr, None)) else []
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            out += _arrays_kept(cell.cell_contents, seen)
        except ValueError:        # an empty cell
            pass
    return out


def _flat(v, i=None, key="") -> dict:
    """``{path: number}`` of a number or a (nested) dict of them, element ``i`` of each array."""
    if isinstance(v, dict):
        return {k2: x for k, u in v.items() for k2, x in _flat(u, i, f"{key}/{k}").items()}
    return {key: float(np.asarray(v, dtype=float)[i] if i is not None else v)}


def test_the_peaks_mix_the_horizon_shares_and_warnings_are_made_when_asked_from_scenario_sized_arrays():
    """Issue 66: a sweep of the utilizations and counts never reads the wait at the peak, the
    counts at the horizon, each workload's share or the warnings, and computing them was a fifth
    of a sweep with draws; they are made when first asked.  Expected: each is what a plan of that
    scenario alone gives (every attribute of a one-scenario plan is read there, as its report
    reads it), and what the plan keeps to make them later is no per-interval array (a plan kept
    for later holds arrays of the scenarios' shape only: no more than W x S numbers each)."""
    prof = DailyProfile("online", [1.0] * 8 + [4.0] * 8 + [2.0] * 8)
    ws = [pay(profile=prof), Workload("stmt", "ams", 100.0, 0.3, {"policy": "integrity", "message_kb": 64.0}),
          Workload("starts", "channel_starts", 5000.0, 0.0,
                   {"mode": "SSLCIPH", "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"})]
    s = System(processors=8, coprocessors=3, accelerators=2, other_coprocessor_util=0.05, failover="one_card",
               max_wait_ms=0.5, horizon_months=30)
    growth = np.linspace(0.5, 30.0, 40)
    r = plan(s, ws, growth=growth)
    lazy = ("rate", "exec_ms", "scv", "wait_ms", "rows", "row_rates", "row_shares", "required_at_horizon",
            "utilization_at_horizon", "by_workload")
    for pool, x in r.resources.items():
        assert not set(lazy) & set(vars(x)), pool
        for group in (x.shares, x.at_peak, x.horizon, x.statuses, r.warned):
            big = [a.shape for a in _arrays_kept(group) if a.size > len(ws) * growth.size]
            assert not big, (pool, big)
    assert "warnings" not in vars(r)
    for i in (0, 17, 39):
        one = plan(s, ws, growth=float(growth[i]))
        for pool, x in r.resources.items():
            y = one.resources[pool]
            for name in lazy:
                a, b = _flat(getattr(x, name), i), _flat(getattr(y, name))
                assert a.keys() == b.keys(), (pool, name)
                for k in b:
                    assert_allclose(a[k], b[k], rtol=EXACT, err_msg=f"{pool} {name} {k}")
            if y.failover is not None:
                assert_allclose(np.asarray(x.failover.required_at_horizon, float)[i], y.failover.required_at_horizon,
                                rtol=EXACT)
    # the warnings: the channel starts' peak over the scenarios and the pools beyond what an LPAR
    # can have by the horizon in some scenario, the largest growth's (each is monotone in it)
    assert len(r.warnings) == 3 and r.warnings == plan(s, ws, growth=float(growth[-1])).warnings, r.warnings
    assert "warnings" in vars(r)
    bare = evaluate.ResourceResult(*(None,) * 12)          # made without its groups: each attribute says so
    with pytest.raises(PlanError, match="wait_ms was not given"):
        bare.wait_ms
