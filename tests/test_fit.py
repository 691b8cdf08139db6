"""The fit (model/calibration/fit.py), its published-vs-model table and the parameter file.

Expected values: data/params.json (the committed fit), rows of data/figures.csv
read by id, and an explicit list of the figures the models are known not to
reproduce within their printed-precision tolerance, each with its reason.
"""

from __future__ import annotations

import csv
import json
import math
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
import pytest
from numpy.testing import assert_allclose

import cryptoplan.model.calibration.fit as F
import cryptoplan.model.calibration.fitting as fitting
import cryptoplan.model.calibration.free as free
import cryptoplan.model.calibration.scoring as scoring
import cryptoplan.model.calibration.targets as targets_module
from cryptoplan.model.zos.crypto import crypto_op_ms
from cryptoplan.model.datafiles import data_path
from cryptoplan.model.figures import figure, load_figures
from cryptoplan.model.params import using_values
from cryptoplan.model.params import clear_cache, params_path
from cryptoplan.model.calibration.planning import model_figures
from cryptoplan.model.zos.tls import roundtrip_figure_ids, tls_roundtrip_us


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    clear_cache()
    yield
    clear_cache()


def committed() -> dict:
    with open(data_path("params.json"), encoding="utf-8") as fh:
        return json.load(fh)


# ------------------------------------------------------------ reproducibility
def test_committed_params_are_a_fresh_fit(fresh_fit):
    """data/params.json is what a fit of data/figures.csv gives today, within the allowances of
    model.fit.fit_differences, whose docstring says why those numbers: the cost at the committed
    parameters re-evaluated to 1e-9 (no optimiser: rounding only); every fitted parameter
    within 1e-2 of its standard error (measured: other NumPy/SciPy versions moved them by at
    most 2.7e-4 sigma, starting points moved by 1e-9 relative by up to 1.5e-3 sigma; an edited
    figure moves them by tenths of a sigma); one on a bound within 1e-9 of its bound interval;
    derived ones to 1e-12; the refitted cost to 1e-5 (measured: up to 4e-6)."""
    assert F.fit_differences(fresh_fit, committed()) == []


def test_committed_cost_is_the_cost_of_the_committed_parameters():
    # recomputed without an optimiser: the same arithmetic on the same numbers
    doc = committed()
    values = {k: v["value"] for k, v in doc["parameters"].items()}
    assert_allclose(F.fit_cost(values), doc["fit"]["cost"], rtol=1e-9)


def _with_figure_scaled(scaled_figures, fid, factor):
    from cryptoplan.model.figures import using_figures
    return using_figures(scaled_figures(lambda i: i == fid, factor))


@pytest.mark.parametrize("fid", ["s001_rmf_me2048_exec_ms", "s002_16k_chacha_attls_chin_ms",
                                 "s002_rt_attls_64k_us"])
def test_fit_check_sees_an_edited_figure_without_a_refit(scaled_figures, fid):
    """Edit one published figure by one tolerance in a copy of the table and do not refit: the
    check fails at once, on the re-evaluated cost of the sub-model the figure belongs to (a
    figure of each: crypto/AMS, TLS, round trip)."""
    doc = committed()
    with _with_figure_scaled(scaled_figures, fid, 1.0 + figure(fid).tolerance):
        diffs = F.fit_differences({"parameters": doc["parameters"], "cost": doc["fit"]["cost"]}, doc)
    which = "round-trip cost" if fid.startswith("s002_rt_") else "cost"
    assert [d.split(" at the")[0] for d in diffs] == [which], diffs


def test_fit_check_sees_a_refit_round_trip(scaled_figures, fresh_fit):
    """A round trip edited by 1% (about the model's error on that row, +0.8%; its printed
    tolerance, 1e-5, is below what the parameters can feel) and the round-trip model refitted:
    its parameters move by more than the check allows (1e-2 of their standard errors)."""
    fid = "s002_rt_attls_64k_us"
    with _with_figure_scaled(scaled_figures, fid, 1.01):
        moved = F.fit(groups=("roundtrip",), start={k: v["value"] for k, v in fresh_fit["parameters"].items()})
    doc = {"parameters": {**fresh_fit["parameters"], **moved["parameters"]}, "cost": fresh_fit["cost"]}
    diffs = F.fit_differences(doc, committed())
    assert diffs and all(d.startswith("rt_") for d in diffs), diffs


@pytest.mark.slow
def test_fit_check_sees_a_refit_crypto_figure(scaled_figures, fresh_fit):
    """The coprocessor's RMF exec time (0.596 ms) edited by one tolerance and the crypto/AMS
    sub-model refitted: the check names the parameters that moved."""
    fid = "s001_rmf_cex8c_exec_ms"
    with _with_figure_scaled(scaled_figures, fid, 1.0 + figure(fid).tolerance):
        moved = F.fit(groups=("ams",), start={k: v["value"] for k, v in fresh_fit["parameters"].items()})
    doc = {"parameters": {**fresh_fit["parameters"], **moved["parameters"]}, "cost": fresh_fit["cost"]}
    diffs = F.fit_differences(doc, committed())
    assert any(d.startswith("cop_rsa_ms_2048") for d in diffs), diffs


@pytest.mark.slow
@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_perturbed_starts_find_no_lower_loss(fresh_fit, monkeypatch, factor):
    """The fit is not convex: a fit started elsewhere may end elsewhere.  Every parameter's
    start halved or doubled (clipped to its bounds) must not reach a lower loss than the
    committed starting points do: the loss is what the fit minimises.  It does not count
    figures: measured under model v4's tolerances, halved starts end at a loss 6.60 with 5
    fitted figures out of tolerance, doubled ones at 6.41 with 6, the committed starts at 6.22
    with 6 (the TLS set trades the software cipher's 2 KB saving for a lower loss elsewhere;
    data/misses.csv, s002_cost_range_tls13sw).  It does not claim the committed loss is the
    lowest there is."""
    plain = free.initial

    def moved(name, exclude=()):
        x0, lo, hi = plain(name, exclude)
        return min(max(x0 * factor, lo), hi), lo, hi

    monkeypatch.setattr(fitting, "initial", moved)   # the name fit() reads
    assert F.fit(stderr=False)["cost"] >= fresh_fit["cost"] * (1 - 1e-4)


def test_fit_parameters_inside_their_bounds(fresh_fit):
    for name, spec in F.FREE.items():
        lo, hi = (figure(spec.bounds_from).low, figure(spec.bounds_from).high) if spec.bounds_from else (spec.low, spec.high)
        assert lo <= fresh_fit["parameters"][name]["value"] <= hi, name


def test_derived_parameters_come_from_their_rows(fresh_fit):
    p = fresh_fit["parameters"]
    # no concurrency inside a card is derived from seed 001's 152.7% by-function sum: the seed
    # calls it a reporting effect and plans on the summary utilization
    assert "acc_parallelism" not in p and "cop_engines" not in p
    assert p["ams_cert_checks"]["value"] == 1.0
    assert_allclose(p["mq_base_us"]["value"], figure("ref_ams_txn_cost_2k_none_z14").target(), rtol=1e-12)


# ------------------------------------------------------------ targets / table
def test_every_target_is_a_figure():
    ids = load_figures()
    targets = [t.figure_id for t in F.targets()] + roundtrip_figure_ids()
    assert targets and len(targets) == len(set(targets))
    missing = [t for t in targets if t not in ids]
    assert missing == []


def test_figure_table_models_are_finite():
    values = {k: v["value"] for k, v in committed()["parameters"].items()}
    rows = F.figure_table(values)
    assert len(rows) == len(F.targets()) + len(roundtrip_figure_ids())
    for r in rows:
        assert math.isfinite(r["model"]), r["id"]
        assert r["published"] == figure(r["id"]).target()


@pytest.mark.parametrize("fid", ["s001_2k_integrity_tput_1024", "s001_2k_integrity_tput_4096"])
def test_seed001_integrity_throughput_within_10pct(fid):
    # "AMS Integrity throughput decreases from 1342 to 122 transactions per second"
    # (measured relative errors ~7% and ~2%; the bound leaves room, the rows' own
    # printed-digit tolerances are in the known-exception list below)
    row = {r["id"]: r for r in model_figures()}[fid]
    assert_allclose(row["model"], figure(fid).target(), rtol=0.10)


# ------------------------------------------------------------ known exceptions
# data/misses.csv lists each figure the models do not reproduce with the reason the model's
# structure cannot meet it; the residuals are in the fit report and in MODEL_FIGURES.
KNOWN_OUT_OF_TOLERANCE = F.known_misses()


def _coverage_uses() -> dict:
    with open(data_path("coverage.csv"), encoding="utf-8", newline="") as fh:
        return {r["id"]: r["use"] for r in csv.DictReader(fh)}


def test_every_listed_miss_has_a_reason():
    assert KNOWN_OUT_OF_TOLERANCE and all(len(r) > 20 for r in KNOWN_OUT_OF_TOLERANCE.values())


def test_figure_table_carries_conditions_and_reasons():
    rows = {r["id"]: r for r in model_figures()}
    assert "message_kb=32" in rows["s002_32k_total_cost"]["conditions"]
    for fid, r in rows.items():
        assert r["reason"] == ("" if r["within_tolerance"] else KNOWN_OUT_OF_TOLERANCE[fid]), fid


def test_known_exceptions_are_few():
    """The issue's bar: at most 10% of the table's rows listed as out of tolerance
    (26 of 307 rows when this was written; of the 81 figures the models predict, 26)."""
    assert len(KNOWN_OUT_OF_TOLERANCE) <= 0.10 * len(load_figures())


def test_known_out_of_tolerance_list_is_current():
    rows = model_figures()
    failing = {r["id"] for r in rows if not r["within_tolerance"]}
    ids = {r["id"] for r in rows}
    # a listed figure is a model target, or a checked row its test scores (test_tls.py's round-trip cells)
    checked = {fid for fid, use in _coverage_uses().items() if use == "checked"}
    assert set(KNOWN_OUT_OF_TOLERANCE) <= ids | checked, "a listed figure is no longer a model target"
    newly_failing = sorted(failing - set(KNOWN_OUT_OF_TOLERANCE))
    now_passing = sorted((set(KNOWN_OUT_OF_TOLERANCE) & ids) - failing)
    assert newly_failing == [], "figures fell out of tolerance: add a reason or fix the model"
    assert now_passing == [], "listed figures now pass: remove them from KNOWN_OUT_OF_TOLERANCE"


def test_within_tolerance_agrees_with_bounds():
    for r in model_figures():
        lo, hi = figure(r["id"]).bounds()
        assert r["within_tolerance"] == (lo <= r["model"] <= hi), r["id"]


# data/README.md's table of points, typed from the README, not imported from model/figures.py
_POINTS = {"exact": 1.0, "lower_bound": 1.0, "upper_bound": 1.0, "approximate": 2.0, "range": 2.0, "up_to": 3.0}


def test_accepted_interval_is_the_figures_tolerance_read_from_the_table():
    """The interval MODEL_FIGURES shows (accepted_low, accepted_high) is the row's value +- its
    tolerance times |value|, or the kind's percentage points when wider (a range widened outward;
    an open end n/a), recomputed here from the
    figures.csv row itself, not from Figure.bounds; within_tolerance is the model inside it."""
    rows = {r["id"]: r for r in model_figures()}
    with open(data_path("figures.csv"), encoding="utf-8", newline="") as fh:
        table = {r["id"]: r for r in csv.DictReader(fh)}
    kinds = set()
    for fid, r in rows.items():
        row, kinds = table[fid], kinds | {table[fid]["kind"]}
        t = float(row["tolerance"])
        # data/README.md, Tolerances: the wider of t * |v| and, for a percentage, the kind's points
        points = _POINTS[row["kind"]] if row["unit"] in ("pct_change", "pct", "pct_of_baseline") else 0.0

        def w(v):
            return max(t * abs(v), points)
        if row["kind"] == "range":
            lo, hi = float(row["low"]), float(row["high"])
            want = (lo - w(lo), hi + w(hi))
        elif row["kind"] in ("upper_bound", "lower_bound"):
            v = float(row["high"] or row["value"]) if row["kind"] == "upper_bound" else float(row["low"] or row["value"])
            want = (None, v + w(v)) if row["kind"] == "upper_bound" else (v - w(v), None)
        else:
            v = float(row["value"])
            want = (v - w(v), v + w(v))
        got = (r["accepted_low"], r["accepted_high"])
        assert [g is None for g in got] == [w is None for w in want], fid
        assert_allclose([g for g in got if g is not None], [w for w in want if w is not None], rtol=1e-12,
                        err_msg=fid)
        inside = (got[0] is None or got[0] <= r["model"]) and (got[1] is None or r["model"] <= got[1])
        assert r["within_tolerance"] == inside, fid
    assert {"exact", "approximate", "up_to", "range", "upper_bound"} <= kinds
    assert any(None in (r["accepted_low"], r["accepted_high"]) for r in rows.values())    # an open end
    # the 2c row as a reader checks it: "up to 30%" printed with a trailing zero, +-5 points
    r = rows["s001_4m_tput_keysize"]
    assert_allclose((r["accepted_low"], r["accepted_high"]), (-35.01, -24.99), rtol=0, atol=1e-9)
    assert r["kind"] == "up_to"


# ------------------------------------------------------------ CRYPTOPLAN_PARAMS
def test_params_override_file(tmp_path, monkeypatch):
    doc = committed()
    base_sign = crypto_op_ms("sign", "RSA", 4096)
    base_verify = crypto_op_ms("verify", "RSA", 4096)
    doc["parameters"]["cop_rsa_ms_2048"]["value"] *= 2.0
    doc["parameters"]["exp_public"]["value"] = 2.0
    path = tmp_path / "site_params.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    clear_cache()
    assert params_path() == path
    # sign time doubles at any size; verify's growing part now scales as (n/2048)^2
    assert_allclose(crypto_op_ms("sign", "RSA", 4096), 2.0 * base_sign, rtol=1e-12)
    me = committed()["parameters"]["acc_me_ms_2048"]["value"]
    fixed = committed()["parameters"]["acc_fixed_ms"]["value"]
    assert_allclose(crypto_op_ms("verify", "RSA", 4096), fixed + (me - fixed) * 2.0 ** 2, rtol=1e-12)
    assert crypto_op_ms("verify", "RSA", 4096) != pytest.approx(base_verify)
    monkeypatch.delenv("CRYPTOPLAN_PARAMS")
    clear_cache()
    assert_allclose(crypto_op_ms("sign", "RSA", 4096), base_sign, rtol=1e-15)


def test_params_override_calibrates_the_round_trip(tmp_path, monkeypatch):
    # the round-trip terms live in the parameter file like every fitted parameter, so a
    # site's own file moves tls_roundtrip_us: RT = r0 + a KB (SSLCIPH)
    doc = committed()
    doc["parameters"]["rt_sslciph_us_per_kb"]["value"] = 1000.0
    path = tmp_path / "site_params.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    clear_cache()
    sw = "TLS_CHACHA20_POLY1305_SHA256"
    r0 = doc["parameters"]["rt_sslciph_base_us"]["value"]
    assert_allclose(tls_roundtrip_us("SSLCIPH", sw, 64.0), r0 + 1000.0 * 64.0, rtol=1e-12)


def test_params_override_missing_file_names_path(tmp_path, monkeypatch):
    path = tmp_path / "no_such_params.json"
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    clear_cache()
    with pytest.raises(FileNotFoundError, match="no_such_params.json"):
        crypto_op_ms("sign", "RSA", 2048)


def test_params_override_not_a_parameter_file(tmp_path, monkeypatch):
    path = tmp_path / "other.json"
    path.write_text('{"something": 1}', encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    clear_cache()
    with pytest.raises(ValueError, match="parameters"):
        crypto_op_ms("sign", "RSA", 2048)


# ------------------------------------------------------------ calibration on a site's own table
def test_fit_follows_a_user_figures_table(scaled_figures, fresh_fit):
    """`cryptoplan fit --figures F`: a site's own RMF accelerator report (ME, CRT and the
    card's mean EXEC TIME all twice the published ones) doubles the fitted ME and CRT times.
    (Under the Cauchy loss a single row contradicting the rest of the table is treated as
    an outlier, which is why a site replaces the related rows together: data/README.md.)"""
    from cryptoplan.model.figures import using_figures
    rmf = {"s001_rmf_me2048_exec_ms", "s001_rmf_crt2048_exec_ms", "s001_rmf_cex8a_exec_ms"}
    path = scaled_figures(lambda fid: fid in rmf, 2.0)
    base = fresh_fit["parameters"]  # the AMS sub-model's fit reads no other sub-model's parameters
    with using_figures(path):
        site = F.fit(groups=("ams",))["parameters"]
    for name in ("acc_me_ms_2048", "acc_crt_ms_2048"):
        # measured: 2.000 for both; the throughput rows, unchanged, pull the other way
        assert 1.9 < site[name]["value"] / base[name]["value"] < 2.1, name


@pytest.mark.parametrize("fid", [pytest.param("s001_rmf_me2048_exec_ms", marks=pytest.mark.slow),
                                 pytest.param("s002_16k_chacha_attls_chin_ms", marks=pytest.mark.slow),
                                 "s002_rt_attls_64k_us"])
def test_leave_one_out_does_not_see_the_left_out_figure(scaled_figures, fid):
    """No leakage: the left-out prediction of a figure is the same whatever its published
    value (a fit that still used it would move with it).  Two refits of a sub-model each: the
    round-trip case in the fast tier, the AMS and TLS ones (about 10 s each) in the slow."""
    from cryptoplan.model.figures import using_figures
    [plain] = F.crossvalidate(ids={fid})
    with using_figures(scaled_figures(lambda i: i == fid, 3.0)):
        [moved] = F.crossvalidate(ids={fid})
    assert plain["id"] == moved["id"] == fid
    assert_allclose(moved["loo_prediction"], plain["loo_prediction"], rtol=1e-9)
    assert moved["published"] == pytest.approx(3 * plain["published"])


def _loo_refit(fid: str, group: str):
    """The left-out refit crossval makes of ``fid`` (its sub-model alone, from the packaged values):
    the solution and the parameter values it gives."""
    from cryptoplan.model.params import load_params
    base = {k: v["value"] for k, v in load_params()["parameters"].items()}
    doc = F.fit(exclude=(fid,), max_nfev=200, groups=(group,), start=base, stderr=True)
    return doc["solutions"][group], {**base, **{k: v["value"] for k, v in doc["parameters"].items()}}


def test_a_left_out_figure_that_is_a_parameter_has_that_parameters_standard_error():
    # RMF's mean coprocessor time of the example is the model's cop_rsa_ms_2048 itself, so the
    # delta method's g is a unit vector: the prediction's standard error is the refit's own
    # standard error of that parameter, computed here by a separate refit
    [row] = F.crossvalidate(ids={"s001_rmf_cex8c_exec_ms"}, workers=1)
    sol, vals = _loo_refit("s001_rmf_cex8c_exec_ms", "ams")
    assert row["loo_prediction"] == pytest.approx(vals["cop_rsa_ms_2048"], rel=1e-12)
    assert_allclose(row["prediction_se"], sol.errors()["cop_rsa_ms_2048"], rtol=1e-6)  # central differences
    assert row["determined"] and row["unidentified"] == []


@pytest.mark.parametrize("fid,group", [("s002_rt_sslciph_16k_us", "roundtrip"), ("s001_64k_conf32_tput_4096", "ams"),
                                       ("s002_64k_chin_cost", "tls")])
def test_the_left_out_predictions_standard_error_is_the_spread_of_its_refits_covariance_draws(fid, group):
    # independent of the delta method: 4,000 parameter sets drawn from the refit's covariance
    # shrunk to a tenth (the delta method is a first-order answer: at full size the TLS block's
    # draws reach where the savings bend, and s002_64k_chin_cost's spread was 0.62-0.76 times it
    # with the prior on TCPIP's cost per KB, 0.81 without), each evaluated; ten times their
    # predictions' standard deviation estimates the same error to about 1.1% (1/sqrt(2 x 4,000))
    # plus the first-order method's own error.  Measured: ratios 0.991, 1.001, 1.009
    from cryptoplan.model.calibration import crossval
    [row] = F.crossvalidate(ids={fid}, workers=1)
    sol, vals = _loo_refit(fid, group)
    names, cov = sol.covariance_block()
    x = np.array([vals[n] for n in names])
    draws = x + 0.1 * np.random.default_rng(1).multivariate_normal(np.zeros(x.size), cov, size=4000, method="eigh")
    with using_values({**vals, **{n: draws[:, i] for i, n in enumerate(names)}}):
        spread = 10.0 * float(np.std(np.asarray(crossval._predictor(fid, group)(), dtype=float)))
    assert_allclose(row["prediction_se"], spread, rtol=0.05)
    lo, hi = figure(fid).bounds()
    assert row["determined"] == (row["prediction_se"] <= (hi - lo) / 2)


def test_the_only_nistecc_rates_left_out_rest_on_a_parameter_nothing_else_identifies():
    # seed 001's one NISTECC-192 rate is the only figure of the coprocessor's ECC time, and its one
    # NISTECC-521 comparison the only one of the ECC key-size exponent: left out, the refit has
    # no standard error for that parameter, and the prediction none (not determined), whatever
    # it lands on; a 16KB channel-initiator saving, beside the other sizes, is determined
    rows = {r["id"]: r for r in F.crossvalidate(ids={"s001_2k_tput_rsa1024_vs_ecc192", "s001_tput_ecc521_vs_rsa4096",
                                                      "s002_16k_chin_cost"}, workers=1)}
    for fid, name in (("s001_2k_tput_rsa1024_vs_ecc192", "cop_ecc_ms_192"), ("s001_tput_ecc521_vs_rsa4096", "exp_ecc")):
        assert rows[fid]["unidentified"] == [name] and math.isinf(rows[fid]["prediction_se"])
        assert not rows[fid]["determined"]
    assert rows["s002_16k_chin_cost"]["determined"] and rows["s002_16k_chin_cost"]["unidentified"] == []


def test_a_left_out_prediction_without_a_number_near_its_refit_is_an_error_naming_the_figure():
    # a site's figures could take the refit where the model gives no number a step away: the
    # prediction's standard error is then an error that names the figure and the parameter,
    # not a NaN counted as "not determined"
    from types import SimpleNamespace
    from cryptoplan.model.calibration import crossval
    from cryptoplan.model.errors import InputError
    from cryptoplan.model.params import param
    sol = SimpleNamespace(names=("cop_rsa_ms_2048",), stderr=np.array([0.02]), cov=np.array([[4e-4]]))

    def of():
        v = np.asarray(param("cop_rsa_ms_2048"), dtype=float)
        return np.where(v > 0.6, np.nan, v)       # no number above the refit's value
    with pytest.raises(InputError, match=r"figure f1: .*cop_rsa_ms_2048"):
        crossval._prediction_se("f1", of, {"cop_rsa_ms_2048": 0.6}, sol, 0.6)


@pytest.mark.slow
def test_crossval_in_worker_processes_equals_in_process():
    # the refits are independent: two worker processes give what one process gives
    ids = {"s002_rt_sslciph_2k_us", "s002_rt_attls_1m_us"}
    ticks = []
    serial = F.crossvalidate(ids=ids, workers=1, progress=lambda: ticks.append("serial"))
    parallel = F.crossvalidate(ids=ids, workers=2, progress=lambda: ticks.append("parallel"))
    assert [r["id"] for r in serial] == [r["id"] for r in parallel] and len(serial) == 2
    assert ticks == ["serial"] * 2 + ["parallel"] * 2      # progress: once per refit
    for a, b in zip(serial, parallel):
        assert_allclose(b["loo_prediction"], a["loo_prediction"], rtol=1e-12)


@pytest.mark.slow
def test_crossval_workers_see_a_site_table(scaled_figures):
    # a TLS and a round-trip refit in worker processes, under a site's table chosen with
    # using_figures (context variables do not cross process boundaries: the table path
    # is passed explicitly, the same way for every sub-model), equal the same refits in
    # this process
    from cryptoplan.model.figures import using_figures
    ids = {"s002_rt_attls_64k_us", "s002_16k_chacha_attls_chin_ms"}
    with using_figures(scaled_figures(lambda fid: fid in ids, 1.5)):
        serial = F.crossvalidate(ids=ids, workers=1)
        parallel = F.crossvalidate(ids=ids, workers=2)
    assert [r["id"] for r in serial] == [r["id"] for r in parallel] and len(serial) == 2
    for a, b in zip(serial, parallel):
        assert_allclose(b["loo_prediction"], a["loo_prediction"], rtol=1e-12)
        assert b["published"] == pytest.approx(1.5 * figure(b["id"]).target())


def test_ams_grid_equals_the_public_functions():
    # the fit evaluates seed 001's scenarios in one vectorized batch (targets._AmsGrid); each value
    # must be what the public scalar functions give
    from cryptoplan.model.zos import ams
    grid = targets_module._AmsGrid()
    g = grid.current()
    for row, i in grid.index.items():
        pol, kt, n, kb, reuse = row
        assert_allclose(g.x[i], ams.ams_throughput(pol, kt, n, kb, reuse), rtol=1e-12)
        assert_allclose(g.cost[i], ams.ams_cost_us(pol, kt, n, kb, reuse), rtol=1e-12)
    for (pol, kb, reuse), i in grid.msg_index.items():
        assert_allclose(g.msg[i], ams.ams_message_cost_us(pol, kb, reuse, platform="z14"), rtol=1e-12)
    cfg = dict(ams.RMF_EXAMPLE)
    tx = figure("s001_rmf_me2048_rate").target() / 8.0
    plan = ams.ams_plan(tx, **cfg)
    for attr in ("accelerator_crt_rate", "accelerator_utilization", "coprocessor_utilization",
                 "accelerator_exec_ms"):
        assert_allclose(getattr(g.plan, attr), getattr(plan, attr), rtol=1e-12)


def test_ams_grid_follows_the_parameters():
    # the grid's arrays are recomputed when the parameters in force change, and only then
    from cryptoplan.model.zos import ams
    grid = targets_module._AmsGrid()
    base = {n: p["value"] for n, p in committed()["parameters"].items()}
    i = grid.index[("privacy", "RSA", 4096, 64.0, None)]
    for scale in (1.0, 1.7, 0.6):
        values = {**base, "ams_sig_op_us": scale * base["ams_sig_op_us"],
                  "cop_rsa_ms_2048": scale * base["cop_rsa_ms_2048"]}
        with using_values(values):
            assert_allclose(grid.current().x[i], ams.ams_throughput("privacy", "RSA", 4096, 64.0), rtol=1e-12)
            assert_allclose(grid.current().cost[i], ams.ams_cost_us("privacy", "RSA", 4096, 64.0), rtol=1e-12)


def test_tls_table_is_the_scalar_model():
    """The fit's channel-cost table (one matrix product per parameter set) against
    model.tls.tls_cost_us called one condition at a time, under random parameter values."""
    import itertools

    from cryptoplan.model.calibration.free import FREE
    from cryptoplan.model.calibration.targets import _TlsTable
    from cryptoplan.model.zos.tls import tls_cost_us
    rng = np.random.default_rng(20261123)
    base = {n: p["value"] for n, p in committed()["parameters"].items()}
    table = _TlsTable()
    conditions = [(m, c, kb, sp, plat, rk) for m, c in (("none", None), ("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256"),
                                                         ("SSLCIPH", "TLS_CHACHA20_POLY1305_SHA256"),
                                                         ("ATTLS", "TLS_AES_256_GCM_SHA384"), ("ATTLS", "NULL_SHA"))
                  for kb, sp, plat, rk in itertools.product((2.0, 32.0, 1024.0), (None, "MSTR", "CHIN", "TCPIP"),
                                                            ("z14", "z15"), (0, 1048576))
                  if rk == 0 or m == "SSLCIPH"]
    for _ in range(3):
        values = dict(base, **{n: base[n] * rng.uniform(0.3, 3.0) + 0.01 for n in FREE if FREE[n].submodel == "tls"})
        with using_values(values):
            for m, c, kb, sp, plat, rk in conditions:
                assert_allclose(table.cost(m, c, kb, sp, plat, sslrkeyc=rk),
                                float(tls_cost_us(m, c, kb, sp, sslrkeyc=rk, platform=plat)), rtol=1e-12)


def test_tls_terms_are_their_definitions_to_the_bit():
    """targets._TlsTerms (every TLS target in a dozen array operations) against each term and
    column computed one at a time as the targets define them: a cost v[a], in ms v[a] / 1000, a
    ratio v[a] / v[b], a change 100 (v[a] / v[b] - 1); the lowest of several (np.minimum.reduce),
    a range's ends (targets._ends), its farthest condition (targets._extreme) of the conditions
    so computed.  Bit for bit (the bytes, so -0.0 is not 0.0), under 5 random parameter sets at
    once, under one as an array and under one as plain floats (what predict_all and the reports
    evaluate): the fit's numbers, and the packaged parameter file's, must not move by an ulp.  The
    fit's stacking of them (targets.Stacker) is np.stack of the predictions, to the bit, in C order.
    (That the registered conditions are the published ones is the targets' own tests' and the
    fit's; old against new, every TLS target was compared byte for byte when _TlsTerms came.)"""
    from cryptoplan.model.calibration.free import FREE

    def same(x, y) -> bool:
        x, y = np.asarray(x), np.asarray(y)
        return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
    rng = np.random.default_rng(20260501)
    base = {n: p["value"] for n, p in committed()["parameters"].items()}
    tlist = [t for t in F.targets() if t.group in ("tls", "tls_z196")]
    programs = {t.source.__self__ for t in tlist}
    assert len(programs) == 2 and all(isinstance(p, targets_module._TlsTerms) for p in programs)
    tls_names = [n for n in FREE if FREE[n].submodel in ("tls", "tls_z196")]
    for sets in (rng.uniform(0.3, 3.0, 5), rng.uniform(0.3, 3.0, 1), float(rng.uniform(0.3, 3.0))):
        values = dict(base, **{n: base[n] * sets * rng.uniform(0.8, 1.2) + 0.01 for n in tls_names})
        if isinstance(sets, float):
            assert all(type(values[n]) is float for n in tls_names)
        with using_values(values):
            want_of = {}
            for prog in programs:
                got, v = prog.current(), prog.table.current()

                def definition(a, b, divisor, scale, offset):
                    x = (v[a] if divisor == 1.0 else v[a] / divisor) if b is None else v[a] / v[b]
                    return x if (scale, offset) == (1.0, 0.0) else scale * (x - offset)
                want = want_of[prog] = [definition(*spec) for spec in prog.terms]
                assert all(same(got.terms[i], w) for i, w in enumerate(want))
                for j, (g, side, limit) in enumerate(prog.columns):
                    start, stop = prog._span(g)
                    fs = [lambda _, w=w: w for w in want[start:stop]]
                    if side == "low" and limit == np.inf:
                        expect = np.minimum.reduce([f(None) for f in fs])
                    elif side == "low":
                        expect = targets_module._ends(fs, -np.inf, limit)[1](None)
                    else:
                        expect = targets_module._ends(fs, limit, np.inf)[0](None)
                    assert same(got.columns[j], expect), (j, side, limit)
            farthest = [t for t in tlist if isinstance(t.of, targets_module._Farthest)]
            assert farthest
            for t in farthest:
                conditions = want_of[t.source.__self__][t.of.start:t.of.stop]     # the range's conditions
                assert len(conditions) >= 2
                assert same(t.of(t.source()), targets_module._extreme(conditions, t.figure_id))
            for group in ("tls", "tls_z196", "ams"):
                _, terms = scoring.group_members(group)
                stacked = targets_module.Stacker(terms)()
                assert stacked.flags.c_contiguous
                assert same(stacked, np.stack(np.broadcast_arrays(*targets_module.predictions(terms)), axis=-1))


def test_vectorized_residuals_are_the_scalar_definition():
    """scoring.Scorer (one array pass per evaluation) against scoring._residual figure by figure.

    Model values: each figure's target, its bounds' ends and points just outside and inside
    them, a random spread around the target, zero and negatives (the 1e3 floor); every kind
    and unit of data/figures.csv that a target uses. rtol 1e-12: the two differ only in the
    order of floating-point operations.
    """
    rng = np.random.default_rng(11)
    figs = [figure(t.figure_id) for t in F.targets()]
    assert {f.kind for f in figs} >= {"exact", "range"} and len({f.unit for f in figs}) >= 3
    score = scoring.Scorer(figs)
    probes = []
    for f in figs:
        lo, hi = f.bounds()
        ends = [v for v in (f.low, f.high, lo, hi) if v is not None and np.isfinite(v)]
        probes.append([f.target(), *ends, *[e * s for e in ends for s in (0.999, 1.001)],
                       *(f.target() * rng.uniform(0.2, 3.0, 6)), 0.0, -1.0])
    width = max(len(p) for p in probes)
    values = np.array([p + [p[0]] * (width - len(p)) for p in probes])
    for k in range(width):
        got = score(values[:, k])
        want = np.array([scoring._residual(f, v) for f, v in zip(figs, values[:, k])])
        assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_each_source_is_evaluated_once_per_fit_evaluation():
    """targets.predictions evaluates the AMS grid, the TLS table (the z15 set's and seed 000's
    descriptive z196 set's) and the handshake targets' (empty) source once for all their
    targets, and gives what each target's own predict() gives."""
    import dataclasses

    tlist = F.targets()
    want = [t.predict() for t in tlist]
    counts = {}

    def counting(src):
        def call():
            counts[src] = counts.get(src, 0) + 1
            return src()
        return call

    wrap = {}
    copies = [dataclasses.replace(t, source=wrap.setdefault(t.source, counting(t.source))) for t in tlist]
    assert list(targets_module.predictions(copies)) == want
    assert len(counts) == 4 and set(counts.values()) == {1}, counts


# ------------------------------------------------------- k parameter sets at once
@pytest.mark.parametrize("group", ["ams", "tls"])
def test_parameter_sets_evaluate_as_each_one_alone(group):
    """The fit's finite differences evaluate k parameter sets in one model call (parameters as
    arrays of k values, model.params.using_values).  Each row must be what that set gives
    alone: rtol 1e-12 (the same operations, broadcast; only a product's summation order
    may differ).  Sets: the committed values scaled by 0.7..1.3 at random (inside the bounds
    the fit uses)."""
    rng = np.random.default_rng(5)
    names, tlist = scoring.group_members(group)
    base = {k: v["value"] for k, v in committed()["parameters"].items()}
    x = np.array([base[n] for n in names])
    lo, hi = np.array([free.free_bounds(n) for n in names]).T
    sets = np.clip(x[:, None] * rng.uniform(0.7, 1.3, (len(names), 6)), lo[:, None], hi[:, None])
    together = scoring.residuals({**base, **dict(zip(names, sets))}, tlist)
    assert together.shape == (6, len(tlist))
    for j in range(6):
        alone = scoring.residuals({**base, **dict(zip(names, sets[:, j]))}, tlist)
        assert alone.shape == (1, len(tlist))
        assert_allclose(together[j], alone[0], rtol=1e-12, atol=1e-12)




def test_a_leave_one_out_fit_prints_no_numerical_warning():
    """lmfit inverts J^T J for uncertainties model.leastsq does not use; without the AMS fit's
    s001_2k_tput_rsa1024_vs_ecc192 (the one figure that ties the ECC time to RSA's) that matrix is
    near-singular and lmfit warned "invalid value encountered in sqrt" into `cryptoplan crossval`'s
    output (found by running every leave-one-out fit with warnings as errors)."""
    base = {n: p["value"] for n, p in committed()["parameters"].items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        doc = F.fit(exclude=("s001_2k_tput_rsa1024_vs_ecc192",), max_nfev=200, groups=("ams",),
                    start=base, stderr=False)
    assert np.isfinite(doc["cost"])


# ------------------------------------------------------------ model v4: roles, priors, weak parameters
def test_every_planning_parameter_with_a_standard_error_above_its_value_says_why(fresh_fit):
    """Issue 45: no planning answer rests on a parameter whose standard error exceeds its value
    without `cryptoplan fit` saying so: each such parameter carries its `weakly` text, and the
    descriptive set (seed 000's z196) is the only other place one may be."""
    weak = F.weak_parameters(fresh_fit)
    for name in weak:
        assert name in F.FREE, name
        if free.role(name) == "planning":
            assert len(F.FREE[name].weakly) > 40, name
    # the identified ones carry no such text: it would go stale unseen (one on a bound may)
    on_bound = F.bound_parameters(fresh_fit)
    for name, spec in F.FREE.items():
        if spec.weakly:
            assert name in weak or name in on_bound, f"{name} is identified now: drop its weakly text"


def test_every_planning_parameter_on_a_bound_states_what_holds_it_there(fresh_fit):
    """Issue 62: no planning parameter on a bound without a stated source.  Each one the fit
    leaves on a bound carries its `weakly` text (`cryptoplan fit` prints it under "on a bound"),
    which names the bound's source: the published range it is read from (``bounds_from``), or the
    physics (a time or a cost is at least 0)."""
    on_bound = [n for n in F.bound_parameters(fresh_fit) if n in F.FREE and free.role(n) == "planning"]
    assert on_bound, "no planning parameter on a bound: the test has nothing to check (keep it honest)"
    for name in on_bound:
        spec = F.FREE[name]
        assert len(spec.weakly) > 40, name
        lo, _ = spec.bounds()
        if spec.bounds_from is not None:
            assert spec.bounds_from in spec.weakly, name
        else:
            assert lo == 0.0 and "at least 0" in spec.weakly, name


def test_the_bound_texts_numbers_are_what_a_freed_fit_gives(fresh_fit, monkeypatch):
    """The numbers ams_fixed_ms's `weakly` text quotes, re-run: the crypto + AMS fit with it freed
    below 0 (0 within one standard error of where it goes).  The value is -0.0021 ms wherever it
    was run; its standard error was 0.0099 ms in the clean-clone CI runs up to 2026-11-30 and is
    0.0074 ms on another machine with the same code and packages (constraints.txt), so the text
    quotes both ends and the test holds the error to them."""
    import dataclasses
    monkeypatch.setitem(free.FREE, "ams_fixed_ms", dataclasses.replace(free.FREE["ams_fixed_ms"], low=-5.0))
    start = {n: p["value"] for n, p in fresh_fit["parameters"].items()}
    fixed = F.fit(groups=("ams",), start=start)["parameters"]["ams_fixed_ms"]
    assert fixed["value"] < 0 and abs(fixed["value"]) < fixed["stderr"], fixed
    assert fixed["value"] == pytest.approx(-0.0021, abs=5e-5)
    assert 0.0074 - 5e-5 <= fixed["stderr"] <= 0.0099 + 5e-5, fixed
    assert "-0.0021 ms with a standard error of 0.0074 to 0.0099 ms" in free.FREE["ams_fixed_ms"].weakly


def test_the_public_exponent_is_the_priors_not_the_figures(fresh_fit, monkeypatch):
    """free.py's comment on the exponents' priors, re-run: without its prior and freed to 0.5-3,
    exp_public goes to 2.52 with a standard error of 2.45, wider than half the range it is free in
    (the figures do not identify it); with the prior (the published range's middle, its ends one
    factor away) it is 1.79 +- 0.12, inside the range, off both ends."""
    import dataclasses
    lo, hi = free.free_bounds("exp_public")
    got = fresh_fit["parameters"]["exp_public"]
    assert lo < got["value"] < hi and got["stderr"] < min(got["value"] - lo, hi - got["value"]) * 2, got
    assert got["value"] == pytest.approx(1.79, abs=0.005) and got["stderr"] == pytest.approx(0.115, abs=0.005)
    assert free.PRIORS["exp_public"].centre({}) == pytest.approx((lo * hi) ** 0.5)
    monkeypatch.delitem(free.PRIORS, "exp_public")
    monkeypatch.setitem(free.FREE, "exp_public", dataclasses.replace(free.FREE["exp_public"], bounds_from=None,
                                                                    low=0.5, high=3.0))
    start = {n: p["value"] for n, p in fresh_fit["parameters"].items()}
    freed = F.fit(groups=("ams",), start=start)["parameters"]["exp_public"]
    assert freed["stderr"] > (3.0 - 0.5) / 2, freed
    assert freed["value"] == pytest.approx(2.52, abs=0.005) and freed["stderr"] == pytest.approx(2.45, abs=0.05)


def test_fit_prints_each_parameters_role(fresh_fit):
    tags = F.parameter_roles(fresh_fit)
    assert tags["cop_rsa_ms_2048"] == "[planning]"
    assert tags["z196_tls_chin_us_per_kb"] == "[descriptive]"
    assert tags["tls_sym_us_per_kb_tls12"].startswith("[planning, prior")
    assert free.role("tls_mstr_us") == "fixed"
    # no planning function reads the descriptive set: outside the fit, one function names its
    # parameters (tls_cost_change_pct, issue 62: seed 000's statements from a public function),
    # and only when asked for platform "z196", which no planning path passes and tls_cost_us refuses
    import pathlib
    import re
    from cryptoplan.model.zos.tls import traffic
    root = pathlib.Path(__file__).resolve().parent.parent
    names = re.compile(r"[\"']z196_")
    readers = [path.relative_to(root).as_posix() for path in (root / "model").rglob("*.py")
               if "calibration" not in path.parts and names.search(path.read_text(encoding="utf-8"))]
    assert readers == ["model/zos/tls/traffic.py"], readers
    text = (root / "model/zos/tls/traffic.py").read_text(encoding="utf-8")
    assert "def _z196_param" in text
    import ast
    for top in ("model", "workbook", "addin", "cli"):
        for path in (root / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value == "z196":
                    assert path.name == "traffic.py", (path, node.lineno)   # CHANGE_PLATFORMS and its test
    with pytest.raises(ValueError, match="platform"):
        traffic.tls_cost_us("ATTLS", "NULL_SHA", 2.0, platform="z196")


def test_a_prior_holds_the_hardware_cipher_costs_near_the_published_cpacf_cost(fresh_fit):
    """The priors (free.PRIORS) centre on the AMS fit's CPACF costs; each fitted value sits
    within twice the prior's factor of its centre, and its standard error is below its value."""
    values = {k: v["value"] for k, v in fresh_fit["parameters"].items()}
    for name, prior in F.PRIORS.items():
        x, c = values[name], prior.target(values)
        assert c / prior.factor ** 2 <= x <= c * prior.factor ** 2, (name, x, c)
        assert fresh_fit["parameters"][name]["stderr"] < x, name


def test_fitted_and_predicted_figures_are_counted_apart_and_echoes_not_at_all():
    """Issue 62's counting, from the tables: the fitted figures within their accepted interval
    (MODEL_FIGURES, 82 of 86), and the predictions, the published rows no fit uses (``checked``),
    each scored against its own accepted interval by F.prediction_table (which `cryptoplan fit`
    prints): 4 of 11, the z16 report's three large-message rows among the misses (the model runs
    z16 on z15's factors), seed 003's "up to 98%" DHE saving, which contradicts the note the
    handshake model is fitted to (53%), the round-trip table's 1 MB "% increase" cell (0.06
    points short: the ratio of two fitted times), and the two forced misses the fit leaves out (issue 62:
    82 of 88 fitted while they were fitted).  Until the table scored it, that row's test read "up to"
    as a bound and the count was 4 of 9 (93 of 104).  The seven ref_ops_* rows are AMS's
    operation counts per message, which the model is built from and returns as they are
    (``echo``): not counted.  Counted as issue 62 counts them (echoes among the 104): 93 of 104;
    the bar here is today's count, so that a change that loses a figure fails."""
    rows = model_figures()
    uses = _coverage_uses()
    checked = {fid for fid, use in uses.items() if use == "checked"}
    echoes = {fid for fid, use in uses.items() if use == "echo"}
    fitted = {fid for fid, use in uses.items() if use == "fitted"}
    assert {r["id"] for r in rows} == fitted
    values = {k: v["value"] for k, v in committed()["parameters"].items()}
    predicted = F.prediction_table(values)
    assert {r["id"] for r in predicted} == checked == set(F.predicted_ids())
    fitted_held = sum(r["within_tolerance"] for r in rows)
    predicted_held = sum(r["within_tolerance"] for r in predicted)
    assert (len(fitted), len(checked), len(echoes)) == (86, 11, 7)
    assert all(fid.startswith("ref_ops_") for fid in echoes)
    assert fitted_held >= 82 and predicted_held >= 4, (fitted_held, predicted_held)
    assert fitted_held + predicted_held + len(echoes) == 93 and len(fitted) + len(checked) + len(echoes) == 104
    counts = F.figure_counts(rows, predicted)
    assert counts == {"fitted": (fitted_held, 86), "predicted": (predicted_held, 11), "echoes": 7,
                      "descriptive": (13, 14)}


@pytest.mark.parametrize(("seed", "scipy_default"), [(s, False) for s in range(6)] + [(s, True) for s in range(6, 9)])
def test_the_tls_fit_ends_at_the_committed_minimum_when_its_inputs_move_in_the_last_digits(seed, scipy_default,
                                                                                           monkeypatch):
    """While the TLS range figures were scored on their farthest condition, the Cauchy cost of
    the TLS sub-model jumped where that condition changed side, and the fit stopped on a jump
    at 3.637, 3.667 or 3.692 as the values of the sub-models fitted before it moved by 1e-9
    relative (what another processor's rounding does), so ``cryptoplan fit --check`` passed on
    one machine and failed on another; the tighter ``FIT_TOL`` made it stop at one of them.
    Scored by their ends (model/calibration/targets.py), expected: the committed file's
    parameters (within the check's 0.01 standard errors; one on a bound within the check's
    share of its bounds) and its TLS cost, whatever the moves, also at SciPy's default
    stopping tolerance."""
    if scipy_default:
        monkeypatch.setattr(fitting, "FIT_TOL", None)
    doc = json.loads(open(params_path()).read())
    committed = {k: v["value"] for k, v in doc["parameters"].items()}
    rng = np.random.default_rng(100 + seed)
    moved = {k: v * (1.0 + 1e-9 * rng.standard_normal()) for k, v in committed.items()}
    init = {n: free.initial(n, ()) for n in free.FREE}
    names, _, sol = fitting._fit_group("tls", moved, init, (), 400, False)
    for i, name in enumerate(names):
        se = doc["parameters"][name]["stderr"]
        lo, hi = free.free_bounds(name)
        allowed = F.REFIT_SIGMAS * se if se is not None else F.REFIT_BOUND_ATOL * (hi - lo)
        assert abs(sol.x[i] - committed[name]) <= allowed, (name, sol.x[i], committed[name])
    want = fitting._fit_group("tls", committed, init, (), 400, False)[2].cost
    assert sol.cost == pytest.approx(want, rel=1e-6)


# (over 1.3 s, kept in the fast tier: the only traced test of lines it reaches; docs/development.md, "Tiers")
def test_the_leave_one_out_count_docs_models_quotes_is_crossvals():
    """Issue 62: leave-one-out within tolerance is the headline number; docs/models.md quotes
    `cryptoplan crossval`'s (count, median and 90th percentile of |error|), as it prints them, and
    each row's within_tolerance is the fitted table's rule (the prediction inside the figure's
    accepted interval)."""
    from pathlib import Path
    rows = F.crossvalidate(workers=2)
    for r in rows:
        lo, hi = figure(r["id"]).bounds()
        assert r["within_tolerance"] == (lo <= r["loo_prediction"] <= hi), r["id"]
    errs = [abs(r["relative_error"]) for r in rows if r["relative_error"] is not None]
    said = (f"{sum(r['within_tolerance'] for r in rows)} of the {len(rows)} fitted figures are predicted within "
            f"tolerance (`cryptoplan crossval`: median |error| {np.median(errs):.1%}, 90th percentile "
            f"{np.percentile(errs, 90):.1%})")
    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8").split())
    assert said in doc, said
    # and the split crossval prints beside it: how many the others determine, how many of each hold
    det = [r for r in rows if r["determined"]]
    rest = [r for r in rows if not r["determined"]]
    split = (f"{len(det)} are determined by the others (the left-out prediction's standard error is within the "
             f"figure's tolerance), and {sum(r['within_tolerance'] for r in det)} of those are predicted within it; "
             f"the other {len(rest)} are each the main measurement of something the others leave to bounds and "
             f"priors, and {sum(r['within_tolerance'] for r in rest)} of them land within tolerance")
    assert split in doc, split
    for r in rest:
        assert f"`{r['id']}`" in doc, r["id"]      # each named
    se = {r["id"]: r["prediction_se"] for r in rest}
    assert (f"standard errors are {se['s002_64k_chin_cost']:.1f} and {se['s002_1m_chin_cost']:.1f} points "
            "against tolerances of 5 and 6") in doc


def test_the_4mb_keysize_miss_is_a_loss_trade_not_forced():
    """data/misses.csv's reason for s001_4m_tput_keysize, re-run (issue 62, finding 5): the shipped
    AMS fit misses it (-36.2%, accepted down to -35.0%); with MQ's CPU per KB held at 1.15 us/KB
    (inside one standard error of its fitted value) the AMS fit meets all 28 of its figures at a
    loss 1.2% higher (the number misses.csv quotes), so the miss is the robust loss's trade, not
    the model's structure."""
    import dataclasses
    import cryptoplan.model.calibration.free as free
    import cryptoplan.model.calibration.fitting as fitting
    from cryptoplan.model.calibration.report import figure_table
    from cryptoplan.model.calibration.targets import targets
    from cryptoplan.model.params import load_params
    doc = load_params()
    base = {n: p["value"] for n, p in doc["parameters"].items()}
    ams = {t.figure_id for t in targets() if t.group == "ams"}

    def run(hold=None):
        saved = free.FREE["mq_us_per_kb"]
        if hold is not None:
            free.FREE["mq_us_per_kb"] = dataclasses.replace(saved, low=hold, high=hold * (1 + 1e-9), start=hold)
        try:
            fitted = fitting.fit(groups=("ams",), start=base, stderr=False)
        finally:
            free.FREE["mq_us_per_kb"] = saved
        values = {**base, **{k: v["value"] for k, v in fitted["parameters"].items()}}
        rows = {r["id"]: r for r in figure_table(values) if r["id"] in ams}
        return fitted["cost"], rows
    cost, rows = run()
    assert len(rows) == 28 and [i for i, r in rows.items() if not r["within_tolerance"]] == ["s001_4m_tput_keysize"]
    assert abs(1.15 - base["mq_us_per_kb"]) < doc["parameters"]["mq_us_per_kb"]["stderr"]
    held_cost, held = run(1.15)
    assert all(r["within_tolerance"] for r in held.values())
    assert cost < held_cost
    # the reason quotes the loss it costs, as this run computes it
    assert f"at a loss {100 * (held_cost / cost - 1):.1f}% higher" in F.known_misses()["s001_4m_tput_keysize"]


@settings(max_examples=300, deadline=None)
@given(a=st.floats(1e-3, 1e4), b=st.floats(1e-3, 1e4), c=st.floats(1e-3, 1e4), d=st.floats(1e-3, 1e4))
def test_the_seed000_forced_miss_proof_holds_for_every_linear_cost(a, b, c, d):
    """data/misses.csv's proof for s000_16k_total_cost: with CPU linear in size and positive
    (A + B kb, C + D kb), the saving's rise from 2 to 16KB is at most 9.33 times its rise from 16 to
    64KB (14 (64 + c)/(48 (2 + c)), c = C/D > 0), where the rows need 42.8: checked over random
    positive costs (hypothesis), in exact rational arithmetic (fractions: the costs' floats are
    rationals, and the identity holds exactly; 50-digit mpmath lost it to cancellation where the
    saving is nearly flat, A/C close to B/D: 2.5e-34 off for costs near 1e-3)."""
    from fractions import Fraction
    A, B, C, D = (Fraction(x) for x in (a, b, c, d))

    def s(kb):
        return 1 - (A + B * kb) / (C + D * kb)
    rise, after = s(16) - s(2), s(64) - s(16)
    if rise > 0:                   # increasing (a falling saving misses the 2 -> 16KB rise outright)
        assert after > 0 and rise / after <= Fraction(14 * 64, 48 * 2)
        assert rise / after == 14 * (64 + C / D) / (48 * (2 + C / D))


def _tls_refit(fid: str, pull: float = 1.0, drop=()):
    """The TLS block refitted from the packaged values with ``fid``'s residual times ``pull`` and
    the priors ``drop`` left out: its cost, the figure table (id -> row) at its values, and the values."""
    from cryptoplan.model.calibration.report import figure_table
    from cryptoplan.model.params import load_params
    base = {n: p["value"] for n, p in load_params()["parameters"].items()}
    init, call = scoring.Scorer.__init__, scoring.Scorer.__call__

    def weighted_init(self, figs):
        init(self, figs)
        self.pull = np.array([pull if f.id == fid else 1.0 for f in figs])

    def weighted_call(self, model):
        return call(self, model) * self.pull
    scoring.Scorer.__init__, scoring.Scorer.__call__ = weighted_init, weighted_call
    saved = {p: free.PRIORS.pop(p) for p in drop}
    try:
        fitted = fitting.fit(groups=("tls",), start=base, stderr=False)
    finally:
        scoring.Scorer.__init__, scoring.Scorer.__call__ = init, call
        free.PRIORS.update(saved)
    values = {**base, **{k: v["value"] for k, v in fitted["parameters"].items()}}
    return fitted["cost"], {r["id"]: r for r in figure_table(values)}, values


#: The two CPACF priors on the hardware ciphers' costs per KB (free.PRIORS).
CPACF_PRIORS = ("tls_sym_us_per_kb_tls12", "tls_gcm_share")


def _seed002_out(rows) -> set:
    return {i for i, r in rows.items() if not r["within_tolerance"] and i.startswith("s002")}


def test_the_software_cipher_miss_is_a_trade_not_the_priors():
    """data/misses.csv's reason for s002_cost_range_tls13sw, re-run: the shipped TLS fit misses it
    at 2 KB; with its residual doubled (pulled twice as hard) the TLS fit meets it and gives up
    seed 002's 1 MB total and CHIN savings, at the loss misses.csv quotes; refitted without the two
    CPACF priors on the hardware ciphers' costs per KB it still misses (the priors are not why)."""
    fid = "s002_cost_range_tls13sw"
    cost, rows, _ = _tls_refit(fid)
    assert _seed002_out(rows) == {fid, "s002_2k_tcpip_cost_hw"}
    pulled_cost, pulled, _ = _tls_refit(fid, pull=2.0)
    assert _seed002_out(pulled) == {"s002_2k_tcpip_cost_hw", "s002_1m_total_cost", "s002_1m_chin_cost"}
    _, no_priors, _ = _tls_refit(fid, drop=CPACF_PRIORS)
    assert fid in _seed002_out(no_priors)
    reason = F.known_misses()[fid]
    for said in (f"-{abs(rows[fid]['model']):.1f}% at 2KB", f"the total's ({pulled['s002_1m_total_cost']['model']:.1f}%",
                 f"the channel initiator's ({pulled['s002_1m_chin_cost']['model']:.1f}%",
                 f"at a TLS loss {100 * (pulled_cost / cost - 1):.1f}% higher",
                 f"it still misses ({no_priors[fid]['model']:.1f}%)"):
        assert said in reason, said


def test_the_2kb_tcpip_miss_is_a_trade_with_the_tls12_range():
    """data/misses.csv's reason for s002_2k_tcpip_cost_hw, re-run: pulled three times as hard the
    TLS fit meets it and TLS 1.2's cost range goes out instead; without the two CPACF priors the
    costs per KB and the two ratios are what the reason quotes, and the row still misses."""
    from cryptoplan.model.calibration.targets import predictions, scored, targets
    fid = "s002_2k_tcpip_cost_hw"
    cost, rows, _ = _tls_refit(fid)
    pulled_cost, pulled, _ = _tls_refit(fid, pull=3.0)
    assert _seed002_out(rows) == {fid, "s002_cost_range_tls13sw"}
    assert _seed002_out(pulled) == {"s002_cost_range_tls12hw", "s002_cost_range_tls13sw"}
    reason = F.known_misses()[fid]
    assert (f"puts TLS 1.2's saving at {pulled['s002_cost_range_tls12hw']['model']:.1f}%, past the accepted "
            f"{figure('s002_cost_range_tls12hw').bounds()[0]:.1f}, at a TLS loss {100 * (pulled_cost / cost - 1):.1f}% "
            "higher") in reason
    # without the priors: the costs and both ratios (the row is scored on both ciphers)
    _, _, v = _tls_refit(fid, drop=CPACF_PRIORS)
    terms = [t for t in scored([t for t in targets() if t.group == "tls"]) if t.figure_id == fid]
    with using_values(v):
        ratios = sorted(float(np.ravel(p)[0]) for p in predictions(terms))
    assert not figure(fid).bounds()[0] <= ratios[1] <= figure(fid).bounds()[1]
    gcm = v["tls_gcm_share"] * v["tls_sym_us_per_kb_tls12"]
    assert (f"the costs are {v['tls_sym_us_per_kb_tls12']:.2f} and {gcm:.2f} us/KB and the ratios "
            f"{ratios[1]:.2f} and {ratios[0]:.2f}") in reason


def test_the_seed000_16kb_chin_miss_is_the_two_families_trade():
    """data/misses.csv's reason for s000_16k_chin_cost, re-run: seed 000's z196 set refitted
    without its seven TCPIP ratios, or without its three fitted total savings, meets the 16 KB CHIN
    saving; with both it misses by the points the reason quotes."""
    from cryptoplan.model.calibration.report import figure_table
    from cryptoplan.model.params import load_params
    fid = "s000_16k_chin_cost"
    base = {n: p["value"] for n, p in load_params()["parameters"].items()}
    tcpip = ["s000_2k_tcpip_cost"] + [f"s000_{s}_tcpip_cost_{c}" for s in ("16k", "64k", "1m") for c in ("nullsha", "aes256")]
    totals = ["s000_2k_total_cost", "s000_64k_total_cost", "s000_1m_total_cost"]

    def saving(exclude):
        fitted = fitting.fit(groups=("tls_z196",), exclude=exclude, start=base, stderr=False)
        values = {**base, **{k: v["value"] for k, v in fitted["parameters"].items()}}
        return {r["id"]: r for r in figure_table(values)}[fid]
    both, no_tcpip, no_totals = saving([]), saving(tcpip), saving(totals)
    assert not both["within_tolerance"] and no_tcpip["within_tolerance"] and no_totals["within_tolerance"]
    assert f"{no_tcpip['model']:.1f}" == f"{no_totals['model']:.1f}"
    lo, hi = figure(fid).bounds()
    reason = F.known_misses()[fid]
    assert f"puts the 16KB CHIN saving at {no_tcpip['model']:.1f}% (within)" in reason
    assert f"it gives {both['model']:.1f}%, {both['model'] - hi:.2f} points short of the accepted {hi:.2f}" in reason
