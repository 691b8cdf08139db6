"""The fit (model/fit.py), its published-vs-model table and the parameter file.

Expected values: data/params.json (the committed fit), rows of data/figures.csv
read by id, and an explicit list of the figures the models are known not to
reproduce within their printed-precision tolerance, each with its reason.
"""

from __future__ import annotations

import json
import math

import pytest
from numpy.testing import assert_allclose

import model.fit as F
from model.crypto import crypto_op_ms
from model.datafiles import data_path
from model.figures import figure, load_figures
from model.params import clear_cache, params_path
from model.planning import model_figures
from model.tls import fit_roundtrip


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    clear_cache()
    yield
    clear_cache()


def committed() -> dict:
    with open(data_path("params.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def fresh_fit():
    return F.fit()


# ------------------------------------------------------------ reproducibility
def test_committed_params_are_a_fresh_fit(fresh_fit):
    # least_squares (TRF) is deterministic for the same inputs: same start point, same
    # residual functions, no randomness, so rtol 1e-6 is far above any floating-point
    # difference.  atol 1e-12 only matters for a parameter sitting on its zero bound
    # (ams_enc_ms_per_kb ~ 2e-22), where a relative comparison is meaningless.
    file_params = committed()["parameters"]
    assert set(fresh_fit["parameters"]) == set(file_params)
    for name, p in fresh_fit["parameters"].items():
        assert_allclose(p["value"], file_params[name]["value"], rtol=1e-6, atol=1e-12, err_msg=name)
        assert p["source"] == file_params[name]["source"], name
    assert_allclose(fresh_fit["cost"], committed()["fit"]["cost"], rtol=1e-6)


def test_fit_parameters_inside_their_bounds(fresh_fit):
    for name, spec in F.FREE.items():
        lo, hi = (figure(spec[0]).low, figure(spec[0]).high) if isinstance(spec[0], str) else spec[:2]
        assert lo <= fresh_fit["parameters"][name]["value"] <= hi, name


def test_derived_parameters_come_from_their_rows(fresh_fit):
    p = fresh_fit["parameters"]
    # "for a total of 152.7%" over "the accelerator is reported as 100% utilized"
    assert_allclose(p["acc_parallelism"]["value"],
                    figure("s001_rmf2_sum_util").target() / figure("s001_rmf2_accel_summary_util").target(),
                    rtol=1e-12)
    assert_allclose(p["mq_base_us"]["value"], figure("ref_ams_txn_cost_2k_none_z14").target(), rtol=1e-12)


# ------------------------------------------------------------ targets / table
def test_every_target_is_a_figure():
    ids = load_figures()
    targets = [t.figure_id for t in F.targets()] + list(fit_roundtrip()["residuals"])
    assert targets and len(targets) == len(set(targets))
    missing = [t for t in targets if t not in ids]
    assert missing == []


def test_figure_table_models_are_finite():
    values = {k: v["value"] for k, v in committed()["parameters"].items()}
    rows = F.figure_table(values)
    assert len(rows) == len(F.targets())
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
_ROUNDING = "printed to the last digit (tolerance < 0.1%); a smooth fitted model cannot match to that"
_AMS_COST = ("one AMSM cost per asymmetric op (sign=verify=encrypt=decrypt) and one per-KB cost per "
             "stage: 3 parameters cannot meet 6 z14 cells printed to 3-5 digits")
_RT = ("4-parameter round-trip model (linear / quadratic) fits within 3%; tolerance is the printed "
       "microsecond (see test_tls 5% bound)")

_TLS_GEN = ("seed 000 was measured on a 2817 (z196) with z/OS 1.13, seed 002 on a z15: one set of "
            "TLS cost parameters serves both machines and both papers' ciphers")
_CHIN_HALF = ("structural: AT-TLS moves the decrypt half of the symmetric work to TCPIP, so the "
              "CHIN saving tends to 50% at large sizes; the published 55-60% needs more")
_Z15 = ("the 32KB renegotiation rows differ between z14 and z15 for the same cipher; the model has "
        "no platform factor for the base cost, only the per-platform renegotiation rows")

KNOWN_OUT_OF_TOLERANCE = {
    "s000_2k_total_cost": _TLS_GEN + " (-21% vs -15%)",
    "s000_2k_chin_cost": _TLS_GEN + " (-34% vs -24%)",
    "s000_2k_tcpip_cost": _TLS_GEN + " (x1.75 vs 'double')",
    "s000_16k_chin_cost": _TLS_GEN + " (-43.6% vs -45%); tolerance is the printed percent",
    "s000_64k_total_cost": _TLS_GEN + " (-26% vs -24%)",
    "s000_64k_chin_cost": _TLS_GEN + " (-47% vs -45%)",
    "s000_1m_total_cost": _TLS_GEN + " (-27% vs -24%)",
    "s000_1m_tcpip_cost_aes256": _TLS_GEN + " (x2.8 vs 'approximately 2.5')",
    "s002_2k_total_cost": "up to -25% vs model -23.5%; tolerance is the printed percent",
    "s002_2k_chin_cost": "up to -45% vs model -47.6%; tolerance is the printed percent",
    "s002_16k_total_cost": _TLS_GEN + " (-34% vs up to -42%)",
    "s002_16k_chin_cost": _CHIN_HALF + " (-49.6% vs -55%)",
    "s002_32k_total_cost": "up to -34% vs model -36.5%; tolerance is the printed percent",
    "s002_64k_total_cost": _TLS_GEN + " (-38% vs up to -34%)",
    "s002_1m_total_cost": "up to -42% vs model -40.7%; tolerance is the printed percent",
    "s002_1m_chin_cost": _CHIN_HALF + " (-49.9% vs -60%)",
    "s002_2k_tcpip_cost_hw": _TLS_GEN + " (x1.75 vs 1.5-1.6)",
    "s002_cost_range_tls12hw": "by-cipher range -18..-25% while the by-size maxima reach -42%: the "
                               "model spreads the saving over both ciphers (-27% at one size)",
    "s002_cost_range_tls13hw": "TLS 1.3 hardware range -25..-43%; the model's smallest saving is -23.5% at 2KB",
    "s002_cost_range_tls13sw": "CHACHA20 -1..-2%: the model's fixed SSLCIPH overheads give -3.5%",
    "ref_32k_rsa_aes128gcm_z15_us": _Z15 + " (519 vs ~420 us)",
    "ref_32k_rsa_aes256cbc_z15_us": _Z15 + " (515 vs ~455 us)",
    "s001_rmf_cex8c_exec_ms": "one sign-time parameter also drives the 1-requester 1342->122 txn/s chain; "
                              "the fit trades the ~0.596 ms RMF reading (-24%) for the exact throughputs",
    "s001_rmf_crt2048_exec_ms": "CRT time shared with privacy/confidentiality throughput and cost rows "
                                "(+5%); " + _ROUNDING,
    "s001_rmf_cex8a_exec_ms": "rate-weighted mean of the ME and CRT times: inherits the CRT miss (+4%)",
    "s001_2k_integrity_tput_1024": "power law with exponents bounded to the reference bands reaches ~7%; "
                                   + _ROUNDING,
    "s001_2k_integrity_tput_4096": "~2% off; " + _ROUNDING,
    "s001_2k_conf32_tput_4096": "structural: reuse 32 divides asymmetric ops by 32, so key size cannot "
                                "cut confidentiality throughput to 25% (model 67%)",
    "s001_64k_conf32_tput_4096": "structural: same reuse-32 key-size insensitivity (model 76% vs ~50%)",
    "s001_4m_tput_keysize": "private exponent pinned at 3 by the 2KB drop makes 4096-bit card time too "
                            "large against the 4MB path time (-44% vs up to -30%)",
    "s001_64k_cost_1024_to_2048": "one MSTR admin CPU/s for all sizes: fitted to the 2KB rises, "
                                  "overshoots at 64KB (+5.1% vs up to 4%)",
    "s001_64k_cost_2048_to_4096": "same single MSTR admin CPU/s (+37% vs up to 30%)",
    "ref_ams_txn_cost_2k_confidentiality_z14": _AMS_COST + " (-19%)",
    "ref_ams_cost_2k_integrity_z14": _AMS_COST,
    "ref_ams_cost_4m_integrity_z14": _AMS_COST,
    "ref_ams_cost_2k_privacy_z14": _AMS_COST + " (+44%)",
    "ref_ams_cost_4m_privacy_z14": _AMS_COST,
    "ref_ams_cost_2k_confidentiality_z14": _AMS_COST + " (-57%)",
    "ref_ams_cost_4m_confidentiality_z14": _AMS_COST,
    **{f"s002_rt_{m}_{t}_us": _RT for m in ("sslciph", "attls") for t in ("2k", "16k", "32k", "64k", "1m")},
}


def test_known_out_of_tolerance_list_is_current():
    rows = model_figures()
    failing = {r["id"] for r in rows if not r["within_tolerance"]}
    ids = {r["id"] for r in rows}
    assert set(KNOWN_OUT_OF_TOLERANCE) <= ids, "a listed figure is no longer a model target"
    newly_failing = sorted(failing - set(KNOWN_OUT_OF_TOLERANCE))
    now_passing = sorted(set(KNOWN_OUT_OF_TOLERANCE) - failing)
    assert newly_failing == [], "figures fell out of tolerance: add a reason or fix the model"
    assert now_passing == [], "listed figures now pass: remove them from KNOWN_OUT_OF_TOLERANCE"


def test_within_tolerance_agrees_with_bounds():
    for r in model_figures():
        lo, hi = figure(r["id"]).bounds()
        assert r["within_tolerance"] == (lo <= r["model"] <= hi), r["id"]


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
    # sign time doubles at any size; verify now scales as (n/2048)^2
    assert_allclose(crypto_op_ms("sign", "RSA", 4096), 2.0 * base_sign, rtol=1e-12)
    me = committed()["parameters"]["acc_me_ms_2048"]["value"]
    assert_allclose(crypto_op_ms("verify", "RSA", 4096), me * 2.0 ** 2, rtol=1e-12)
    assert crypto_op_ms("verify", "RSA", 4096) != pytest.approx(base_verify)
    monkeypatch.delenv("CRYPTOPLAN_PARAMS")
    clear_cache()
    assert_allclose(crypto_op_ms("sign", "RSA", 4096), base_sign, rtol=1e-15)


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
def test_fit_follows_a_user_figures_table(scaled_figures):
    """`cryptoplan fit --figures F`: doubling the published RMF ME time in a copy of the
    table roughly doubles the fitted ME time (it is the only figure that pins it alone)."""
    from model.figures import using_figures
    path = scaled_figures(lambda fid: fid == "s001_rmf_me2048_exec_ms", 2.0)
    base = F.fit(groups=("ams",))["parameters"]["acc_me_ms_2048"]["value"]
    with using_figures(path):
        site = F.fit(groups=("ams",))["parameters"]["acc_me_ms_2048"]["value"]
    assert 1.5 < site / base < 2.5


@pytest.mark.parametrize("fid", ["s001_rmf_me2048_exec_ms", "s002_16k_chacha_attls_chin_ms"])
def test_leave_one_out_does_not_see_the_left_out_figure(scaled_figures, fid):
    """No leakage: the left-out prediction of a figure is the same whatever its published
    value (a fit that still used it would move with it)."""
    from model.figures import using_figures
    [plain] = F.crossvalidate(ids={fid})
    with using_figures(scaled_figures(lambda i: i == fid, 3.0)):
        [moved] = F.crossvalidate(ids={fid})
    assert plain["id"] == moved["id"] == fid
    assert_allclose(moved["loo_prediction"], plain["loo_prediction"], rtol=1e-9)
    assert moved["published"] == pytest.approx(3 * plain["published"])
