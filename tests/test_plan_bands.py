"""A plan under parameter draws and its bands (model/zos/plan/bands.py, ``cryptoplan plan --bands``).

Expected values, and where they come from:

* the vectorized plan under ``D`` draws against ``D`` separate plans, each evaluated with one
  parameter set (:func:`~cryptoplan.model.params.using_values` of scalars: the path every other
  plan test checks), draw by draw;
* draws that all equal the fitted values give the point plan in every draw;
* quantiles against ``numpy.quantile`` of the same draws, and P(overloaded) against a count;
* the JSON's ``point`` against ``cryptoplan plan --json`` without ``--bands``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from numpy.testing import assert_allclose

from cryptoplan.cli import main
from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.params import load_params, using_values
from cryptoplan.model.zos.plan import PlanError, System, Workload, plan, plan_bands, read_plan
from cryptoplan.model.zos.plan.bands import band, quantile_keys

README = Path(__file__).resolve().parents[1] / "README.md"

POOLS = ("processors", "coprocessors", "accelerators")
ANSWERS = ("utilization", "average_utilization", "utilization_at_horizon", "months_to_target", "headroom",
           "required", "required_at_horizon")


@pytest.fixture
def readme_plan(tmp_path, monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    monkeypatch.chdir(tmp_path)
    block = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)[0]
    Path("site.toml").write_text(block, encoding="utf-8")
    return "site.toml"


def _workloads():
    return [Workload("pay", "ams", 300, args={"policy": "privacy", "message_kb": 2}, growth_per_year=0.3),
            Workload("chl", "channel", 900, args={"mode": "SSLCIPH", "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256",
                                                  "message_kb": 4}),
            Workload("tls", "channel", 700, args={"mode": "ATTLS", "cipher": "TLS_AES_256_GCM_SHA384",
                                                  "message_kb": 32}, growth_per_year=0.1),
            Workload("hs", "handshakes", 50, args={"cipher": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"}),
            Workload("st", "channel_starts", 5, args={"mode": "SSLCIPH",
                                                      "cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"}),
            Workload("m", "measured", 20, args={"card": "accelerators", "exec_ms": 0.5})]


SYSTEM = System(processors=4, coprocessors=2, accelerators=2, failover="one_card", horizon_months=36)


def test_the_vectorized_plan_under_draws_is_each_draw_planned_alone():
    d = parameter_draws(6, seed=3)
    growth = np.array([1.0, 2.5])
    drawn = plan(SYSTEM, _workloads(), growth=growth, draws=d)
    for j in range(6):
        with using_values({k: float(v[j]) for k, v in d.items()}):
            alone = plan(SYSTEM, _workloads(), growth=growth)
        for pool in POOLS:
            a, b = drawn.resources[pool], alone.resources[pool]
            for attr in ANSWERS + ("busy", "rate", "exec_ms", "scv", "wait_ms"):
                assert_allclose(np.asarray(getattr(a, attr))[:, j], getattr(b, attr), rtol=1e-12, atol=1e-15,
                                err_msg=f"{pool}.{attr}, draw {j}")
            if a.failover is not None:
                for attr in ("utilization", "required", "required_at_horizon", "months_to_limit"):
                    assert_allclose(np.asarray(getattr(a.failover, attr))[:, j], getattr(b.failover, attr),
                                    rtol=1e-12, err_msg=f"{pool}.failover.{attr}, draw {j}")
            for row in a.rows:
                assert_allclose(np.asarray(a.rows[row])[:, j], b.rows[row], rtol=1e-12, atol=1e-15)
        for name, w in drawn.workloads.items():
            for space, v in w.cpu_us.items():
                assert_allclose(np.asarray(v)[..., j], alone.workloads[name].cpu_us[space], rtol=1e-12)
            assert_allclose(np.asarray(w.queueing_ms)[:, j], alone.workloads[name].queueing_ms, rtol=1e-12)


def test_draws_at_the_fitted_values_give_the_point_plan_in_every_draw():
    values = {k: np.full(4, float(e["value"])) for k, e in load_params()["parameters"].items()}
    drawn = plan(SYSTEM, _workloads(), draws=values)
    point = plan(SYSTEM, _workloads())
    for pool in POOLS:
        for attr in ANSWERS:
            assert_allclose(getattr(drawn.resources[pool], attr), np.full(4, getattr(point.resources[pool], attr)),
                            rtol=1e-13, err_msg=f"{pool}.{attr}")


def test_bands_are_the_draws_quantiles_and_p_overloaded_counts_draws():
    d = parameter_draws(400, seed=5)
    b = plan_bands(SYSTEM, _workloads(), d, level=0.8)
    drawn = plan(SYSTEM, _workloads(), draws=d)
    point = plan(SYSTEM, _workloads())
    for pool in POOLS:
        for attr in ANSWERS:
            got = getattr(b.resources[pool], attr)
            x = np.asarray(getattr(drawn.resources[pool], attr))
            want = np.quantile(x, [0.1, 0.5, 0.9], method="inverted_cdf")
            assert_allclose([got.low, got.median, got.high], want, rtol=0, atol=0)
            assert got.point == pytest.approx(float(getattr(point.resources[pool], attr)), rel=1e-13)
        u = np.asarray(drawn.resources[pool].utilization)
        assert b.resources[pool].p_overloaded == np.count_nonzero(u >= 1.0) / u.size


def test_a_pool_near_saturation_gets_the_chance_it_is_overloaded_not_an_infinite_mean():
    # one accelerator at ~99% in the point plan: some draws overload it; the band's ends stay
    # numbers and P(overloaded) is strictly between 0 and 1
    w = [Workload("pay", "ams", 1, args={"policy": "privacy", "message_kb": 2})]
    one = System(processors=8, coprocessors=4, accelerators=1, failover="none")
    u1 = plan(one, w).resources["accelerators"].utilization
    rate = 0.99 / u1
    w = [Workload("pay", "ams", rate, args={"policy": "privacy", "message_kb": 2})]
    b = plan_bands(one, w, parameter_draws(1000, seed=2))
    acc = b.resources["accelerators"]
    assert 0.05 < acc.p_overloaded < 0.95
    assert acc.utilization.low < 1.0 <= acc.utilization.high
    assert np.isfinite([acc.utilization.low, acc.utilization.high]).all()


@pytest.mark.parametrize("which", ["test", "readme"])
def test_where_the_point_answer_sits_among_the_draws(which, readme_plan):
    """The issue's bar: the medians agree with the point answers within the draws' noise.

    The bootstrapped blocks hold 201 refits each (``data/params.json``), so a median is known to
    the binomial noise of 201 draws, not of the 4,000 drawn from them: within the noise, the
    point lies between the draws' quantiles :math:`1/2 \\pm 2.576 \\cdot \\tfrac{1}{2}/\\sqrt{201}`
    (0.41 and 0.59; 99%).  Measured (seeds 11 and 12) with the refits recentred on the fit
    (:func:`~cryptoplan.model.calibration.draws.recentred`): this file's plan at 0.49 to 0.52,
    the README's at 0.44 to 0.56; with the RSA exponents' priors and the AMS refits repeating the
    fit (seed 11), 0.46 to 0.56 and 0.48 to 0.52.  With the refits as they came, the README plan's processors
    sat at 0.38 to 0.62 and its accelerators at 0.37 to 0.63: the point was not the median
    where the refits are skewed near a bound, and this assertion failed for them.
    """
    system, workloads = (SYSTEM, _workloads()) if which == "test" else read_plan(readme_plan)
    d = parameter_draws(4000, seed=11)
    drawn = plan(system, workloads, draws=d)
    point = plan(system, workloads)
    z = 2.576 * 0.5 / np.sqrt(201)
    for pool in POOLS:
        for attr in ("utilization", "utilization_at_horizon", "months_to_target", "headroom"):
            x = np.asarray(getattr(drawn.resources[pool], attr))
            q = np.mean(x < getattr(point.resources[pool], attr))
            assert 0.5 - z <= q <= 0.5 + z, (pool, attr, q)


def test_timeline_bands_follow_each_purchase():
    b = plan_bands(SYSTEM, [Workload("pay", "ams", 900, args={"policy": "privacy", "message_kb": 2},
                                     growth_per_year=0.5)], parameter_draws(300, seed=1))
    assert b.timeline and len(b.timeline) == len(b.result.timeline)
    for t in b.timeline:
        p, m = t["purchase"], t["install_by_month"]
        assert m.point == p.install_by_month
        assert m.low <= m.median <= m.high
        assert 0.0 <= t["p_order_now"] <= 1.0


def test_bad_band_arguments_name_the_argument():
    d = parameter_draws(10, seed=0)
    with pytest.raises(PlanError, match="level"):
        plan_bands(SYSTEM, _workloads(), d, level=1.0)
    with pytest.raises(PlanError, match="one scenario"):
        plan_bands(SYSTEM, _workloads(), d, growth=[1.0, 2.0])
    with pytest.raises(PlanError, match="draws must give every parameter a 1-D array"):
        plan(SYSTEM, _workloads(), draws={"cop_rsa_ms_2048": np.ones(3), "acc_me_ms_2048": np.ones(4)})
    with pytest.raises(PlanError, match="draws must be a dict"):
        plan(SYSTEM, _workloads(), draws=[1, 2])
    with pytest.raises(PlanError, match="NaN"):
        band(1.0, [1.0, np.nan], 0.9)


def test_quantile_keys_name_the_interval_ends():
    assert quantile_keys(0.9) == ("p05", "p95")
    assert quantile_keys(0.8) == ("p10", "p90")
    assert quantile_keys(0.95) == ("p2.5", "p97.5")


def test_cli_bands_json_carries_point_quantiles_and_p_overloaded(readme_plan):
    plain = json.loads(CliRunner().invoke(main, ["plan", readme_plan, "--json"]).output)
    res = CliRunner().invoke(main, ["plan", readme_plan, "--json", "--bands", "--draws", "300", "--seed", "4"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    holds = doc["bands"].pop("holds")
    assert doc["bands"] == {"level": 0.9, "draws": 300, "low": "p05", "high": "p95", "forecast": False}
    assert holds.startswith("Bands hold the model's parameters only")
    for pool, r in doc["resources"].items():
        for key in ("utilization", "months_to_target", "required", "required_at_horizon"):
            assert set(r[key]) == {"point", "p05", "median", "p95"}, (pool, key)
            assert r[key]["point"] == plain["resources"][pool][key], (pool, key)
        assert 0.0 <= r["p_overloaded"] <= 1.0 and 0.0 <= r["p_overloaded_at_horizon"] <= 1.0
        if pool != "processors":
            assert r["one_card_failed"]["required"]["point"] == plain["resources"][pool]["one_card_failed"]["required"]
    # the same seed gives the same bands
    again = CliRunner().invoke(main, ["plan", readme_plan, "--json", "--bands", "--draws", "300", "--seed", "4"])
    assert again.output == res.output
    system, workloads = read_plan(readme_plan)
    assert doc["timeline"][0]["install_by_month"]["point"] == pytest.approx(
        plan(system, workloads).timeline[0].install_by_month, rel=1e-13)


def test_cli_band_options_without_bands_are_refused(readme_plan):
    res = CliRunner().invoke(main, ["plan", readme_plan, "--draws", "10"])
    assert res.exit_code == 2 and "--draws is for --bands" in res.output


def test_cli_bands_text_shows_each_pool_and_the_timeline_band(readme_plan):
    res = CliRunner().invoke(main, ["plan", readme_plan, "--bands", "--draws", "200"])
    assert res.exit_code == 0, res.output
    assert "How sure: each answer and its 90% band, over 200 draws" in res.output
    assert re.search(r"Coprocessors \(CEXnC\)\s+\d+\.\d% \(\d+\.\d% to \d+\.\d%\)", res.output)
    assert re.search(r"90%: needed by month [\d.]+ to [\d.]+; order now in \d+% of draws", res.output)


def test_the_growth_band_is_the_plans_utilization_over_the_draws(readme_plan):
    """growth_band grows each draw's loads analytically; checked against the plan evaluated
    at each month under the same draws (quantiles of the same numbers: equal)."""
    from cryptoplan.workbook.report.plan import growth_band
    system, workloads = read_plan(readme_plan)
    d = parameter_draws(50, seed=2)
    months = np.array([0.0, 7.5, 30.0])
    got = growth_band(system, workloads, months, d, 0.8)
    drawn = plan(system, workloads, months=months, draws=d)
    for pool in POOLS:
        u = np.asarray(drawn.resources[pool].utilization)
        want = np.quantile(u, [0.1, 0.9], axis=-1, method="inverted_cdf")
        assert_allclose(got[pool][0], want[0], rtol=1e-12)
        assert_allclose(got[pool][1], want[1], rtol=1e-12)


def test_the_readme_bands_example_prints_what_the_readme_shows(readme_plan):
    text = README.read_text(encoding="utf-8")
    m = re.search(r"```sh\ncryptoplan plan site\.toml --bands\n```\n\n```text\n(.*?)```", text, re.S)
    assert m, "the README shows `cryptoplan plan site.toml --bands` and an excerpt of its output"
    res = CliRunner().invoke(main, ["plan", readme_plan, "--bands"])
    assert res.exit_code == 0, res.output
    out = [ln.rstrip() for ln in res.output.splitlines()]
    at = 0
    for want in (ln.rstrip() for ln in m.group(1).strip().splitlines()):
        if want == "...":
            continue
        assert want in out[at:], want
        at = out.index(want, at) + 1


def test_plan_band_is_the_bands_quantile_of_the_same_draws():
    """PLAN_BAND (the workbook's function) against plan_bands on the same 1,000 draws (seed 0)."""
    from cryptoplan.model.calibration.planning import BAND_DRAWS, BAND_SEED, plan_band
    from cryptoplan.model.zos.plan.read import PlanTables, read_plan
    wl = (("name", "kind", "rate", "growth_per_year", "policy", "message_kb"), ("pay", "ams", 1000.0, 0.3, "privacy", 2.0))
    sy = (("processors", 8.0), ("coprocessors", 3.0), ("accelerators", 2.0), ("horizon_months", 24.0))
    system, workloads = read_plan(PlanTables(wl, sy))
    b = plan_bands(system, workloads, parameter_draws(BAND_DRAWS, seed=BAND_SEED), level=0.9)
    for attr in ("utilization", "months_to_target"):
        want = getattr(b.resources["coprocessors"], attr)
        got = [plan_band(wl, sy, "coprocessors", attr, q) for q in (0.05, 0.5, 0.95)]
        assert got == [want.low, want.median, want.high], attr
    curve = plan_band(wl, sy, "accelerators", "utilization", 0.95, growth=[1.0, 1.5])
    assert curve.shape == (2,) and curve[1] > curve[0]
    with pytest.raises(PlanError, match="quantile"):
        plan_band(wl, sy, "coprocessors", "utilization", 1.5)


def test_draws_planned_a_chunk_at_a_time_give_the_same_bands(monkeypatch):
    """Many draws are planned in chunks (memory bounded by MAX_DRAW_ELEMENTS): the bands are the
    ones one evaluation of every draw gives, number for number."""
    from cryptoplan.model.zos.plan import bands
    d = parameter_draws(90, seed=4)
    whole = plan_bands(SYSTEM, _workloads(), d).to_dict()
    monkeypatch.setattr(bands, "MAX_DRAW_ELEMENTS", 7 * len(_workloads()))      # chunks of 7 draws
    assert plan_bands(SYSTEM, _workloads(), d).to_dict() == whole


def test_bands_text_says_now_and_none_left_once(tmp_path, monkeypatch):
    """Issue 63, finding 5: an order-now purchase's band read "needed by month 0.0 to 0.0" and a pool
    with no card left after one failed "none left (none left to none left)".  Said once: "needed now
    in every draw", "none left"; a band from now to a month says so."""
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    path = tmp_path / "tight.toml"
    path.write_text('[system]\nprocessors = 4\ncoprocessors = 2\naccelerators = 1\nfailover = "one_card"\n'
                    'lead_time_months = 6\n\n[[workload]]\nname = "pay"\nkind = "ams"\nrate = 900\n'
                    'growth_per_year = 0.4\npolicy = "privacy"\nmessage_kb = 2\n', encoding="utf-8")
    res = CliRunner().invoke(main, ["plan", str(path), "--bands", "--draws", "200"])
    assert res.exit_code == 0, res.output
    assert "0.0 to 0.0" not in res.output and "(none left to none left)" not in res.output
    assert "90%: needed now in every draw; order now in 100% of draws" in res.output
    assert re.search(r"Accelerators \(CEXnA\).* none left ", res.output)


def test_every_surface_with_a_band_says_what_it_holds_and_how_well_bands_covered(readme_plan, tmp_path):
    """Issue 63, finding 5: the bands leave out the forecast (growth is the planner's input) and
    docs/calibration.md says the AMS bands covered the truth 64% / 77% of the time where they print
    90%; the page said neither.  One sentence (bands.what_bands_hold) on the command line, the page
    and the Plan sheet; its numbers are docs/calibration.md's (measured by tests/test_bands_coverage.py)."""
    from cryptoplan.model.zos.plan import read_plan
    from cryptoplan.model.zos.plan.bands import MEASURED_COVERAGE, what_bands_hold
    from cryptoplan.workbook.template.output import build_workbook
    said = what_bands_hold(read_plan(readme_plan).workloads)      # the README's plan gives no range
    assert "the rates and their growth are taken as given" in said
    res = CliRunner().invoke(main, ["plan", readme_plan, "--bands", "--draws", "100"])
    assert res.exit_code == 0 and said in res.output
    assert CliRunner().invoke(main, ["plan", readme_plan, "--bands", "--draws", "100", "--report", "rep"]).exit_code == 0
    page = " ".join(Path("rep/plan.html").read_text(encoding="utf-8").split())
    assert said.replace("'", "&#x27;") in page
    wb, _ = build_workbook()
    # the Plan sheet's workloads are the user's to change: its sentence names where ranges come from
    sheet = what_bands_hold()
    assert "a workload's rate_range and growth_range, where given" in sheet
    assert sheet in [c.value for row in wb["Plan"].iter_rows() for c in row]      # right of the band table
    docs = " ".join((README.parent / "docs" / "calibration.md").read_text(encoding="utf-8").split())
    c = MEASURED_COVERAGE
    assert (f"and {100 * c['channel CPU']:.1f}% for the TLS block's recentred refits" in docs
            and f"covered the truth {100 * c['AMS coprocessors']:.1f}%, {100 * c['AMS accelerators']:.1f}% and "
                f"{100 * c['AMS processors']:.1f}% of the time" in docs)


def test_plan_band_of_a_workloads_wait_and_of_a_count_the_draws_do_not_move():
    """A workload's queueing at a quantile of the draws (its pools chosen by whether it sends them
    requests in any draw), and the servers installed (the same in every draw: itself), over a curve
    of growth; an overloaded draw at the quantile names the pool.  Expected: the draw's own value
    at that quantile (``numpy.quantile``'s inverted_cdf of the per-draw plan values, made by
    plan_bands' vectorized plan, which the tests above check against one plan per draw)."""
    from cryptoplan.model.calibration.planning import BAND_DRAWS, BAND_SEED, plan_band
    from cryptoplan.model.zos.plan.read import PlanTables, read_plan
    from cryptoplan.model.zos.plan.tables import UnstableQueueError
    wl = (("name", "kind", "rate", "policy", "message_kb"), ("pay", "ams", 300.0, "privacy", 2.0))
    sy = (("processors", 4.0), ("coprocessors", 2.0), ("accelerators", 2.0))
    g = [1.0, 2.0]
    system, workloads = read_plan(PlanTables(wl, sy))
    draws = parameter_draws(BAND_DRAWS, seed=BAND_SEED)
    got = plan_band(wl, sy, "pay", "queueing_ms", 0.95, growth=g)
    per_draw = np.asarray(plan(system, workloads, np.array(g), draws=draws).workloads["pay"].queueing_ms)
    assert_allclose(got, np.quantile(per_draw, 0.95, axis=-1, method="inverted_cdf"), rtol=0, atol=0)
    assert plan_band(wl, sy, "processors", "installed", 0.5, growth=g) == 4.0
    # at 40 times the rate the median draw overloads the processors and the coprocessors; the
    # error names one of them (the coprocessors before the RSA exponents' priors, the processors since)
    with pytest.raises(UnstableQueueError, match=r"\b(co)?processors: overloaded, \d+% busy with [24]\b"):
        plan_band(wl, sy, "pay", "queueing_ms", 0.5, growth=[1.0, 40.0])
