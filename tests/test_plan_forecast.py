"""A forecast's ranges (model/zos/plan/forecast.py) and bands that draw them (issue 63, finding 5).

Expected values come from:

* the definition of a 90% interval: the split lognormal's 5%, 50% and 95% quantiles are the
  range's ends and its point, checked at the normal quantiles themselves (mpmath, 30 digits);
* substitution: a band of a plan under a forecast is the quantile of the point plans evaluated,
  one at a time and without draws, at each drawn rate or growth (the parameters held fixed), so
  the vectorized draws agree with the scalar path that has its own tests;
* the three ways to state a plan (TOML, the Workloads table, Python) giving the same workloads.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.params import using_values
from cryptoplan.model.zos.plan import PlanError, System, Workload, plan, plan_bands, plan_from_dict
from cryptoplan.model.zos.plan.bands import what_bands_hold
from cryptoplan.model.zos.plan.files import plan_from_tables
from cryptoplan.model.zos.plan.forecast import (FORECAST_SEED, forecast_draws, range_point, split_lognormal)


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)


def _fixed_draws(n: int) -> tuple[dict, dict]:
    """``n`` copies of one parameter set (the forecast is then all that varies), and that set."""
    from cryptoplan.model.calibration.draws import parameter_draws
    one = {k: float(np.asarray(v)[0]) for k, v in parameter_draws(1, seed=3).items()}
    return {k: np.full(n, v) for k, v in one.items()}, one


@settings(max_examples=100, deadline=None)
@given(lo=st.floats(-0.9, 5.0), width=st.floats(0.0, 4.0), at=st.floats(0.0, 1.0), offset=st.sampled_from([0.0, 1.0]))
def test_the_split_lognormal_has_the_range_as_its_90_percent_interval_and_the_point_as_median(lo, width, at, offset):
    if offset == 0.0:
        lo = abs(lo) + 0.01                # a rate range is above 0
    hi = lo + width
    point = lo + at * (hi - lo)
    with mpmath.workdps(30):             # (a context: the precision other tests set is left alone)
        z95 = float(mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf("0.9")))    # the 95% normal quantile
    x = split_lognormal(np.array([-z95, 0.0, z95]), point, lo, hi, offset)
    assert_allclose(x, [lo, point, hi], rtol=1e-12, atol=1e-12)


def test_a_range_alone_puts_its_point_at_the_geometric_middle():
    assert_allclose(range_point(100.0, 400.0), 200.0, rtol=1e-15)
    w = Workload("p", "ams", None, [0.21, 0.44], {"policy": "privacy", "message_kb": 2}, rate_range=(100, 400))
    assert_allclose(w.growth_per_year, 0.32, rtol=1e-12)          # sqrt(1.21 x 1.44) - 1
    assert w.growth_range == (0.21, 0.44) and w.rate_range == (100.0, 400.0) and w.rate == 200.0


def test_the_draws_are_stratified_so_their_quantiles_are_the_range_to_their_spacing():
    w = [Workload("p", "ams", 300, None, {"policy": "privacy", "message_kb": 2}, rate_range=(250, 400),
                  growth_range=(0.25, 0.55)),
         Workload("flat", "ams", 100, 0.1, {"policy": "privacy", "message_kb": 2})]
    n = 1000
    rate, growth = forecast_draws(w, n)
    x = 300 * rate[0]
    assert_allclose(np.quantile(x, [0.05, 0.5, 0.95]), [250, 300, 400], rtol=0.01)
    assert_allclose(np.quantile(growth[0], [0.05, 0.95]), [0.25, 0.55], rtol=0.01)
    assert np.all(rate[1] == 1.0) and np.all(growth[1] == 0.1)            # no range: its point in every draw
    # the same draws every time (every cell of a workbook sees them), and independent orders
    r2, g2 = forecast_draws(w, n, FORECAST_SEED)
    assert np.array_equal(r2, rate) and np.array_equal(g2, growth)
    assert abs(np.corrcoef(rate[0], growth[0])[0, 1]) < 0.1


def test_a_band_under_a_growth_range_is_the_point_plans_at_the_drawn_growths():
    """Months to target and the horizon's utilization under a growth range, the parameters held
    fixed: each draw's answer equals the point plan at that draw's growth (no draws, one at a time)."""
    n = 60
    draws, one = _fixed_draws(n)
    s = System(processors=4, coprocessors=2, accelerators=1, horizon_months=24, failover="none")
    args = {"policy": "privacy", "message_kb": 2}
    w = [Workload("p", "ams", 300, None, args, growth_range=(0.25, 0.55)),
         Workload("flat", "ams", 100, 0.05, args)]
    b = plan_bands(s, w, draws)
    _, growth = forecast_draws(w, n)
    with using_values(one):
        each = [plan(s, [Workload("p", "ams", 300, g, args), w[1]]) for g in growth[0]]
    for pool in ("coprocessors", "accelerators"):
        for attr in ("months_to_target", "utilization_at_horizon"):
            got = getattr(b.resources[pool], attr)
            want = np.quantile([float(getattr(r.resources[pool], attr)) for r in each], [0.05, 0.95],
                               method="inverted_cdf")
            assert_allclose([got.low, got.high], want, rtol=1e-9, err_msg=f"{pool} {attr}")
        # growth alone leaves today's utilization where it is (the point is at the fitted parameters,
        # the draws at the one set held)
        u = b.resources[pool].utilization
        assert_allclose([u.low, u.high], float(each[0].resources[pool].utilization), rtol=1e-12)
    assert b.forecast and "p: growth 25% to 55% a year" in b.holds


def test_a_band_under_a_rate_range_is_the_point_plans_at_the_drawn_rates():
    n = 60
    draws, one = _fixed_draws(n)
    s = System(processors=4, coprocessors=2, accelerators=1, failover="none")
    args = {"policy": "privacy", "message_kb": 2}
    w = [Workload("p", "ams", 300, 0.2, args, rate_range=(250, 400))]
    b = plan_bands(s, w, draws)
    rate, _ = forecast_draws(w, n)
    with using_values(one):
        each = [plan(s, [Workload("p", "ams", 300 * f, 0.2, args)]) for f in rate[0]]
    for pool in ("processors", "coprocessors", "accelerators"):
        for attr in ("utilization", "required", "months_to_target"):
            got = getattr(b.resources[pool], attr)
            want = np.quantile([float(getattr(r.resources[pool], attr)) for r in each], [0.05, 0.95],
                               method="inverted_cdf")
            assert_allclose([got.low, got.high], want, rtol=1e-9, err_msg=f"{pool} {attr}")
    assert "p: rate 250 to 400" in b.holds and "p: rate 250 to 400" in what_bands_hold(w)


def test_without_ranges_the_draws_are_the_parameters_alone():
    """A plan with no range: the bands are those of the parameters only, and say so."""
    draws, _ = _fixed_draws(20)
    w = [Workload("p", "ams", 300, 0.2, {"policy": "privacy", "message_kb": 2})]
    b = plan_bands(System(processors=4, coprocessors=2, accelerators=1), w, draws)
    u = b.resources["accelerators"].months_to_target
    assert u.low == u.high and not b.forecast and "parameters only" in b.holds


def test_toml_the_workloads_table_and_python_state_the_same_ranges():
    args = {"policy": "privacy", "message_kb": 2}
    py = Workload("p", "ams", 300, [0.25, 0.55], args, rate_range=(250, 400))
    _, tw = plan_from_dict({"system": {"processors": 4, "coprocessors": 2, "accelerators": 1},
                            "workload": [{"name": "p", "kind": "ams", "rate": 300, "growth_per_year": [0.25, 0.55],
                                          "rate_range": [250, 400], **args}]})
    _, tw2 = plan_from_dict({"system": {"processors": 4, "coprocessors": 2, "accelerators": 1},
                             "workload": [{"name": "p", "kind": "ams", "rate": 300, "growth_range": [0.25, 0.55],
                                           "rate_range": [250, 400], **args}]})
    rows = [["name", "kind", "rate", "policy", "message_kb", "rate_low", "rate_high", "growth_low", "growth_high"],
            ["p", "ams", 300, "privacy", 2, 250, 400, 0.25, 0.55]]
    _, xw = plan_from_tables(rows, [["processors", 4], ["coprocessors", 2], ["accelerators", 1]])
    assert tw[0] == py and tw2[0] == py and xw[0] == py


@pytest.mark.parametrize("row, message", [
    ({"rate_low": 250}, "rate_low is given and rate_high is not"),
    ({"growth_high": 0.5}, "growth_high is given and growth_low is not"),
    ({"rate_low": "many", "rate_high": 400}, "rate_low must be a number"),
    ({"rate_low": 400, "rate_high": 250}, "rate_range is .400, 250.; give the low end first"),
    ({"rate_low": 310, "rate_high": 400}, "rate 300 is outside its range"),
    ({"growth_per_year": 0.9, "growth_low": 0.25, "growth_high": 0.55}, "growth_per_year 0.9 is outside its range"),
    ({"growth_low": 0.1, "growth_high": 50}, "growth_range must be in .-1, 10."),
])
def test_a_bad_range_in_the_workloads_table_is_named(row, message):
    head = ["name", "kind", "rate", "policy", "message_kb", *row]
    with pytest.raises(PlanError, match=message):
        plan_from_tables([head, ["p", "ams", 300, "privacy", 2, *row.values()]],
                         [["processors", 4], ["coprocessors", 2], ["accelerators", 1]])


@pytest.mark.parametrize("workload, message", [
    ({"rate_range": [1, 2, 3]}, "rate_range must be one number or two"),
    ({"rate_range": 250}, "rate_range must be two numbers"),
    ({"growth_per_year": [0.1, "x"]}, "growth_per_year must be one number or two"),
    ({"rate_range": [0, 400]}, "rate_range starts at 0"),
])
def test_a_bad_range_in_a_plan_file_is_named(workload, message):
    with pytest.raises(PlanError, match=message):
        plan_from_dict({"system": {"processors": 4, "coprocessors": 2, "accelerators": 1},
                        "workload": [{"name": "p", "kind": "ams", "rate": 300, "policy": "privacy", "message_kb": 2,
                                      **workload}]})


def test_a_range_needs_one_rate_and_a_measured_utilization_takes_none():
    args = {"policy": "privacy", "message_kb": 2}
    with pytest.raises(PlanError, match="rate_range is the range of one rate"):
        Workload("p", "ams", [300, 310], 0.0, args, rate_range=(250, 400))
    with pytest.raises(PlanError, match="rate and utilization are two ways"):
        Workload("m", "measured", None, 0.0, {"card": "coprocessors", "utilization": 0.2}, rate_range=(1, 2))
    with pytest.raises(PlanError, match="growth_per_year is a range and growth_range is given"):
        Workload("p", "ams", 300, [0.1, 0.2], args, growth_range=(0.1, 0.2))


def test_the_plan_says_it_uses_the_median_and_that_bands_draw_the_range():
    """A range is never silently ignored: the plan without bands uses the point and says so."""
    args = {"policy": "privacy", "message_kb": 2}
    r = plan(System(processors=4, coprocessors=2, accelerators=1),
             [Workload("p", "ams", 300, [0.25, 0.55], args, rate_range=(250, 400))])
    assert ("workload 'p': rate 250 to 400 and growth 25.0% to 55.0% a year are a forecast's 90% intervals; "
            "the plan uses their medians, 300 and 39.2%") in " ".join(r.warnings)


def test_a_growth_range_under_scenario_arrays_is_each_scenarios_own():
    """A second read's case: with growth an array of scenarios and draws, the drawn growth (W, D)
    was lined up against the scenarios' axis: months at growth x3 came out 2.9 where the same plan
    at a scalar x3 gives 1.05.  Each scenario of the array equals its own scalar plan, draw by draw."""
    draws, _ = _fixed_draws(8)
    s = System(processors=4, coprocessors=2, accelerators=1, horizon_months=24)
    args = {"policy": "privacy", "message_kb": 2}
    w = [Workload("p", "ams", 300, None, args, growth_range=(0.2, 0.6)), Workload("q", "ams", 50, 0.1, args)]
    many = plan(s, w, growth=np.array([1.0, 3.0]), draws=draws)
    for j, g in enumerate((1.0, 3.0)):
        one = plan(s, w, growth=g, draws=draws)
        for pool in ("processors", "coprocessors", "accelerators"):
            for attr in ("months_to_target", "utilization_at_horizon", "required_at_horizon"):
                got = np.asarray(getattr(many.resources[pool], attr))[j]
                want = np.asarray(getattr(one.resources[pool], attr))
                assert_allclose(got, want, rtol=1e-9, err_msg=f"{pool} {attr} x{g}")
            f_many = many.resources[pool].failover
            if f_many is not None:
                assert_allclose(np.asarray(f_many.months_to_limit)[j],
                                np.asarray(one.resources[pool].failover.months_to_limit), rtol=1e-9)
    three = plan(s, w, growth=np.array([1.0, 2.0, 3.0]), draws=draws)      # a bare ValueError before
    assert np.shape(three.resources["processors"].months_to_target) == (3, 8)
