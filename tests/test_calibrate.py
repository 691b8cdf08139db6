"""Calibration on a site's RMF Crypto Hardware Activity report (model.calibrate, issue 13).

Expected values: the identifiability tests synthesize report lines through the model from
known parameters (model.crypto.function_ms under using_values) and check that calibration
recovers them within their standard errors; the worked example is seed 001's RMF extract
("2 CEX8C ... each approximately 21% busy", "Each request processed by the coprocessor is
taking approximately 0.596 milliseconds", "1 CEX8A ... 46.6% utilized ... 0.138
milliseconds", ME 2048 "2706 of the 3382 operations ... 0.046 milliseconds", CRT 2048
"676 ... 0.507 milliseconds"), read from data/figures.csv.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from numpy.testing import assert_allclose

from cryptoplan.model.calibration.calibrate import (
    CalibrationError, calibrate, read_rmf_crypto, rmf_observations,
)
from cryptoplan.model.zos.crypto import function_ms
from cryptoplan.model.figures import figure_value
from cryptoplan.model.params import load_params, using_values
from cryptoplan.cli import main

HEADER = "TYPE,ID,FUNCTION,KEY,RATE,EXEC TIME,UTIL%\n"


def _write(tmp_path, lines, name="rmf.csv"):
    p = tmp_path / name
    p.write_text(HEADER + "".join(lines), encoding="utf-8")
    return p


def _seed001_lines():
    f = figure_value
    cop_rate = f("s001_rmf_cex8c_util") / 100 / (f("s001_rmf_cex8c_exec_ms") / 1000)
    return [f"CEX8C,01,TOTAL,,{cop_rate:.1f},{f('s001_rmf_cex8c_exec_ms')},{f('s001_rmf_cex8c_util')}\n",
            f"CEX8C,02,TOTAL,,{cop_rate:.1f},{f('s001_rmf_cex8c_exec_ms')},{f('s001_rmf_cex8c_util')}\n",
            f"CEX8A,03,TOTAL,,{f('s001_rmf_accel_total_rate')},{f('s001_rmf_cex8a_exec_ms')},{f('s001_rmf_cex8a_util')}\n",
            f"CEX8A,03,ME,2048,{f('s001_rmf_me2048_rate')},{f('s001_rmf_me2048_exec_ms')},12.4\n",
            f"CEX8A,03,CRT,2048,{f('s001_rmf_crt2048_rate')},{f('s001_rmf_crt2048_exec_ms')},34.3\n"]


#: Seed 001's RMF example ran AMS Privacy with RSA 2048 keys on CEX8S cards: its coprocessors'
#: only work is the CCA RSA-2048 sign (the blog's configuration), the mix a plan states.
PRIVACY_PLAN = """
[system]
processors = 4
coprocessors = 2
accelerators = 1
card_generation = "CEX8S"

[[workload]]
name = "seed001"
kind = "ams"
rate = 352.3
policy = "privacy"
key_type = "RSA"
key_size = 2048
message_kb = 2
"""


def _plan(tmp_path, text=PRIVACY_PLAN):
    p = tmp_path / "mix.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_seed001_rmf_example_calibrates_the_card_times(tmp_path):
    from cryptoplan.model.zos.plan import read_plan
    path = _write(tmp_path, _seed001_lines())
    rows = read_rmf_crypto(path)
    cal = calibrate(rmf_observations(rows, path=str(path)), rows)
    # the coprocessor lines are means over every CCA service: without a plan's mix, no observation
    assert cal.identified == ["acc_me_ms_2048", "acc_crt_ms_2048"] and cal.speed is None
    # one key length cannot separate the exponents (or the fixed part of a time) from the times
    assert set(cal.unidentified) == {"exp_private", "exp_public", "acc_fixed_ms"}
    published = load_params()["parameters"]
    assert cal.parameters["cop_rsa_ms_2048"]["value"] == published["cop_rsa_ms_2048"]["value"]
    got = {m["name"]: m["calibrated"] for m in cal.moved}
    # RMF prints three decimals; the weak prior pulls by less than a tenth of that
    assert_allclose(got["acc_me_ms_2048"], figure_value("s001_rmf_me2048_exec_ms"), rtol=1e-3)
    assert_allclose(got["acc_crt_ms_2048"], figure_value("s001_rmf_crt2048_exec_ms"), rtol=1e-3)
    # the report's identity UTIL% = RATE x EXEC TIME holds on its card lines to 0.2 points
    for c in cal.consistency:
        assert abs(c["util_pct"] - c["rate_x_exec_pct"]) < 0.2, c
    # parameters not identified keep the published values exactly
    for n in cal.unidentified:
        assert cal.parameters[n]["value"] == published[n]["value"]
    # with the blog's mix (Privacy, RSA 2048: the coprocessors only sign) the two lines' mean,
    # 0.596 ms, is the sign's time: the speed factor puts it there, to rounding
    system, workloads = read_plan(_plan(tmp_path))
    cal = calibrate(rmf_observations(rows, path=str(path)), rows, mix=(system, workloads))
    assert_allclose(cal.parameters["cop_rsa_ms_2048"]["value"], figure_value("s001_rmf_cex8c_exec_ms"), rtol=1e-12)
    assert_allclose(cal.speed.factor, figure_value("s001_rmf_cex8c_exec_ms") / published["cop_rsa_ms_2048"]["value"],
                    rtol=1e-12)
    assert_allclose(cal.parameters["cop_ecc_ms_192"]["value"], published["cop_ecc_ms_192"]["value"] * cal.speed.factor,
                    rtol=1e-12)


def _synthetic(tmp_path, truth, keys, generation="8"):
    """Report lines computed by the model from ``truth`` (EXEC TIME to RMF's 3 decimals)."""
    lines = []
    with using_values(truth):
        for k in keys:
            lines.append(f"CEX{generation}A,03,ME,{k},1000,{float(function_ms('RSA_ME', k)):.3f},10\n")
            lines.append(f"CEX{generation}A,03,CRT,{k},100,{float(function_ms('RSA_CRT', k)):.3f},10\n")
        lines.append(f"CEX{generation}C,01,TOTAL,,100,{float(function_ms('CCA_RSA', 2048)):.3f},10\n")
    return _write(tmp_path, lines)


def test_synthetic_site_calibrates_back_to_its_parameters(tmp_path):
    """Identifiability: a site whose cards are 30% slower on ME, 20% faster on CRT, with a
    steeper private-key exponent, measured at three key lengths."""
    base = {n: p["value"] for n, p in load_params()["parameters"].items()}
    # (the exponents inside their textbook bands, which bound the refit: 2.6-3 and 1.6-2)
    truth = dict(base, acc_me_ms_2048=base["acc_me_ms_2048"] * 1.3, acc_crt_ms_2048=base["acc_crt_ms_2048"] * 0.8,
                 exp_private=2.98, exp_public=1.8)
    path = _synthetic(tmp_path, truth, keys=(1024, 2048, 4096))
    rows = read_rmf_crypto(path)
    cal = calibrate(rmf_observations(rows, path=str(path)), rows)
    # ME and CRT at three key lengths also separate the accelerator's fixed time per request
    # (the coprocessor's TOTAL line observes no one function: not a refit)
    assert set(cal.identified) == {"acc_me_ms_2048", "acc_crt_ms_2048", "exp_private", "exp_public",
                                   "acc_fixed_ms"}
    for m in cal.moved:
        # within 3 standard errors (the rounding to 3 decimals is the only noise)
        assert abs(m["calibrated"] - truth[m["name"]]) <= 3 * m["stderr"], m
        assert m["stderr"] < 0.05 * m["calibrated"], m


def test_one_key_length_does_not_identify_an_exponent(tmp_path):
    base = {n: p["value"] for n, p in load_params()["parameters"].items()}
    path = _synthetic(tmp_path, dict(base, acc_me_ms_2048=base["acc_me_ms_2048"] * 1.3), keys=(4096,))
    rows = read_rmf_crypto(path)
    cal = calibrate(rmf_observations(rows, path=str(path)), rows)
    # at 4096 bits alone the time at 2048 and the exponent trade off: neither is pinned down
    assert {"acc_me_ms_2048", "exp_public"} <= set(cal.unidentified)
    assert "uncertain to a factor" in cal.unidentified["acc_me_ms_2048"]
    # not identified, so not moved: the published value stays, and so does the line's miss
    assert cal.parameters["acc_me_ms_2048"]["value"] == base["acc_me_ms_2048"]
    me = next(r for r in cal.residuals if " ME 4096" in r["label"])
    assert me["after"] == me["before"]


@pytest.mark.parametrize("text, match", [
    ("TYPE,ID,RATE\nCEX8C,1,5\n", "missing columns FUNCTION, KEY, EXEC TIME, UTIL%"),
    (HEADER.strip() + ",COLOUR\n", "unknown columns 'COLOUR'"),
    (HEADER + "CEX9X,1,TOTAL,,1,0.5,1\n", "line 2: TYPE 'CEX9X' is not a Crypto Express type"),
    (HEADER + "CEX8P,1,TOTAL,,1,0.5,1\n", "EP11 coprocessor"),
    (HEADER + "CEX8C,1,ME,2048,1,0.5,1\n", "ME rows belong to accelerators"),
    (HEADER + "CEX8A,1,ME,2000,1,0.5,1\n", "KEY '2000' is not an RSA key length"),
    (HEADER + "CEX8A,1,ME,2048,1,abc,1\n", "EXEC TIME 'abc' is not a number"),
    (HEADER + "CEX8A,1,ME,2048,-1,0.5,1\n", r"RATE '-1' must be a finite number in \[0, 1e\+07\]"),
    (HEADER + "CEX8A,1,SIGN,,1,0.5,1\n", "FUNCTION 'SIGN' is not one of TOTAL, ME, CRT"),
    (HEADER, "no report lines"),
])
def test_bad_rmf_tables_name_file_line_and_what_is_accepted(tmp_path, text, match):
    p = tmp_path / "rmf.csv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(CalibrationError, match=match):
        read_rmf_crypto(p)


def test_cli_writes_a_parameter_file_the_models_accept(tmp_path, params_file):
    path = _write(tmp_path, _seed001_lines())
    out = tmp_path / "site.json"
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(path), "--plan", str(_plan(tmp_path)), "--out", str(out),
                                    "--report", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    assert "cop_rsa_ms_2048" in res.output and "cannot identify" in res.output and "coprocessor speed" in res.output
    assert (tmp_path / "rep" / "calibration.png").stat().st_size > 10_000
    doc = json.loads(out.read_text())
    from cryptoplan import model

    def util():
        return float(model.card_utilization(1000, "privacy", "RSA", 2048, 2.0, card="coprocessor", cards=2))
    published, published_cop = util(), load_params()["parameters"]["cop_rsa_ms_2048"]["value"]
    params_file(out)
    calibrated = util()
    cop = doc["parameters"]["cop_rsa_ms_2048"]["value"]
    assert_allclose(cop, figure_value("s001_rmf_cex8c_exec_ms"), rtol=1e-3)
    # the coprocessors' only work under privacy is the CCA RSA sign: their utilization
    # scales with the calibrated time exactly (to rounding)
    assert_allclose(calibrated / published, cop / published_cop, rtol=1e-12)
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(path), "--out", str(out)])
    assert res.exit_code == 2 and "exists; use --force" in res.output
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xff\xfe")
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(bad), "--out", str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "bad.csv" in res.output and "not UTF-8" in res.output


def test_readme_worked_calibration(tmp_path, params_file):
    """The README's RMF example: typed lines -> calibrate -> the template at 2,000 txn/s shows
    the coprocessors overloaded with the published and the calibrated times, 4 required, as
    docs/calibration.md says."""
    import re
    from pathlib import Path

    from cryptoplan.workbook.recalculation import recalc
    from cryptoplan.workbook.template import write_template

    readme = (Path(__file__).resolve().parent.parent / "docs" / "calibration.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- rmf-example:start -->\n```csv\n(.*?)```\n<!-- rmf-example:end -->", readme, re.S)
    assert block, "the README's RMF example block is missing"
    rmf = tmp_path / "rmf.csv"
    rmf.write_text(block.group(1), encoding="utf-8")
    # the README's lines are seed 001's numbers (data/figures.csv)
    import csv
    typed = list(csv.reader(block.group(1).strip().splitlines()[1:]))
    derived = list(csv.reader(s.strip() for s in _seed001_lines()))
    for a, b in zip(typed, derived, strict=True):
        assert a[:4] == b[:4]
        assert_allclose([float(x) for x in a[4:6]], [float(x) for x in b[4:6]], rtol=1e-12)
        if b[3] == "":   # UTIL% of the card lines is the paper's; ME/CRT UTIL% is not printed there
            assert float(a[6]) == float(b[6])
    out = tmp_path / "site-params.json"
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(rmf), "--plan", str(_plan(tmp_path)), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "(-4.5%)" in res.output and "now contradict: 0 " in res.output   # the page's numbers
    planner = write_template(tmp_path / "planner.xlsx")
    before = recalc(planner, {"TxRate": 2000})
    params_file(out)
    after = recalc(planner, {"TxRate": 2000})
    assert (before["Coprocessors required"], after["Coprocessors required"]) == (4, 4)
    for got, busy in ((before, "125% busy"), (after, "119% busy")):
        util = got["Coprocessor utilization (RMF summary)"]
        assert isinstance(util, str) and busy in util and "2 cards" in util, util


# ------------------------------------------------------------ measured CPU per transaction
CPU_HEADER = "WORKLOAD,SETTING,CIPHER,KEY,KEY REUSE,MESSAGE KB,ADDRESS SPACE,RATE,APPL%\n"


def test_synthetic_cpu_table_calibrates_back_to_its_parameters(tmp_path):
    """Identifiability: a site whose channel initiator costs 20% more per transaction and 10% less
    per KB than published, measured unprotected at three sizes (APPL% to RMF's two decimals)."""
    from cryptoplan.model.calibration.calibrate import cpu_observations, read_cpu_table
    from cryptoplan.model.zos.tls import tls_cost_us
    base = {n: p["value"] for n, p in load_params()["parameters"].items()}
    truth = dict(base, tls_chin_us=base["tls_chin_us"] * 1.2, tls_chin_us_per_kb=base["tls_chin_us_per_kb"] * 0.9)
    rate = 2000.0
    lines = []
    with using_values(truth):
        for kb in (2, 32, 64):
            appl = float(tls_cost_us("none", None, kb, "CHIN")) * rate / 1e4
            lines.append(f"CHANNEL,none,,,,{kb},CHIN,{rate:g},{appl:.2f}\n")
    p = tmp_path / "cpu.csv"
    p.write_text(CPU_HEADER + "".join(lines), encoding="utf-8")
    cal = calibrate(cpu_observations(read_cpu_table(p), path=str(p)))
    assert cal.identified == ["tls_chin_us", "tls_chin_us_per_kb"]
    for m in cal.moved:
        assert abs(m["calibrated"] - truth[m["name"]]) <= 3 * m["stderr"], m
    assert cal.unidentified["tls_ssl_us"] == "no site number depends on it"
    for r in cal.residuals:
        assert abs(r["after"] / r["site"] - 1) < 0.01, r


def test_cpu_table_ams_line_is_the_models_cost_at_its_rate(tmp_path):
    from cryptoplan.model.zos.ams import ams_cost_at_rate_us
    from cryptoplan.model.calibration.calibrate import cpu_observations, read_cpu_table
    p = tmp_path / "cpu.csv"
    p.write_text(CPU_HEADER + "AMS,Confidentiality,,RSA 4096,32,64,AMSM,250,12.5\n", encoding="utf-8")
    (o,) = cpu_observations(read_cpu_table(p), platform="z15", path=str(p))
    assert o.value == 12.5 * 1e4 / 250      # APPL% of one processor over the rate, µs
    assert_allclose(o.predict(), float(ams_cost_at_rate_us(250, "confidentiality", "RSA", 4096, 64, 32, 1, "AMSM",
                                                           "z15")), rtol=0)


@pytest.mark.parametrize("row, match", [
    ("BATCH,none,,,,2,CHIN,1,1", "WORKLOAD 'BATCH' is not AMS or CHANNEL"),
    ("CHANNEL,TLS,,,,2,CHIN,1,1", "SETTING 'TLS' is not a channel protection mode"),
    ("CHANNEL,none,NULL_SHA,,,2,CHIN,1,1", "CIPHER must be empty for mode none"),
    ("CHANNEL,SSLCIPH,ROT13,,,2,CHIN,1,1", "line 2: cipher"),
    ("CHANNEL,none,,RSA 2048,,2,CHIN,1,1", "KEY must be empty on a CHANNEL line"),
    ("CHANNEL,none,,,,2,AMSM,1,1", "ADDRESS SPACE 'AMSM' is not one of total, MSTR, CHIN, TCPIP"),
    ("AMS,privacy,,2048,,2,total,1,1", "KEY '2048' must be a key type and length"),
    ("AMS,privacy,,RSA 2048,32,2,total,1,1", "KEY REUSE must be empty under policy privacy"),
    ("AMS,secrecy,,RSA 2048,,2,total,1,1", "SETTING 'secrecy' is not an AMS policy"),
    ("AMS,privacy,,RSA 2048,,2,total,0,1", "RATE and APPL% must be > 0"),
    ("AMS,privacy,,RSA 2048,,2,total,1,nan", "APPL% 'nan' must be a finite number"),
])
def test_bad_cpu_tables_name_file_line_and_what_is_accepted(tmp_path, row, match):
    from cryptoplan.model.calibration.calibrate import read_cpu_table
    p = tmp_path / "cpu.csv"
    p.write_text(CPU_HEADER + row + "\n", encoding="utf-8")
    with pytest.raises(CalibrationError, match=match):
        read_cpu_table(p)


def test_cli_cpu_table(tmp_path):
    p = tmp_path / "cpu.csv"
    p.write_text(CPU_HEADER + "CHANNEL,none,,,,2,CHIN,1000,3.10\nCHANNEL,none,,,,32,CHIN,1000,17.50\n",
                 encoding="utf-8")
    res = CliRunner().invoke(main, ["calibrate", "--cpu", str(p), "--platform", "z15", "--out",
                                    str(tmp_path / "o.json")])
    assert res.exit_code == 0, res.output
    assert "tls_chin_us" in res.output and "CPU per transaction, µs" in res.output
    res = CliRunner().invoke(main, ["calibrate", "--cpu", str(p), "--key-size", "4096", "--out",
                                    str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "--key-type/--key-size are gone" in res.output and "--plan" in res.output
    res = CliRunner().invoke(main, ["calibrate", "--cpu", str(p), "--plan", str(_plan(tmp_path)), "--out",
                                    str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "give it with --rmf, --rmf-report or --smf" in res.output


def test_readme_cpu_example(tmp_path):
    """The README's measured-CPU example runs and prints the numbers the README quotes."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parent.parent / "docs" / "calibration.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- cpu-example:start -->\n```csv\n(.*?)```\n<!-- cpu-example:end -->", readme, re.S)
    assert block, "the README's CPU example block is missing"
    (tmp_path / "cpu.csv").write_text(block.group(1), encoding="utf-8")
    res = CliRunner().invoke(main, ["calibrate", "--cpu", str(tmp_path / "cpu.csv"), "--platform", "z15",
                                    "--out", str(tmp_path / "site-params.json")])
    assert res.exit_code == 0, res.output
    assert re.search(r"tls_chin_us +published +93\.27 +calibrated +21\.42 .*\(-77\.0%\)", res.output)
    assert re.search(r"tls_chin_us_per_kb +published +1\.1 +calibrated +4\.796 ", res.output)
    assert "now contradict: 10 " in res.output
    assert "from 93.3 to 21.4 µs per transaction (-77.0%) and from\n1.10 to 4.80 µs per KB" in readme


def test_a_line_whose_util_disagrees_with_rate_x_exec_time_is_named_on_stderr(tmp_path):
    """Issue 33: UTIL% 21.0 on a line whose RATE x EXEC TIME is 24.7% was accepted and only listed.
    The published example's lines agree and draw no warning; the same lines with one RATE
    mistyped (414.4 for 352.3) draw one warning, naming the line and both numbers."""
    good = _seed001_lines()
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(_write(tmp_path, good)), "--out",
                                    str(tmp_path / "a.json")])
    assert res.exit_code == 0, res.output
    assert "warning" not in res.stderr
    bad = list(good)
    fields = bad[0].split(",")
    fields[4] = "414.4"                                       # 414.4/s x 0.596 ms = 24.7%
    bad[0] = ",".join(fields)
    path = _write(tmp_path, bad, "typo.csv")
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(path), "--out", str(tmp_path / "b.json")])
    assert res.exit_code == 0, res.output
    warnings = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    implied = 414.4 * float(fields[5]) / 10
    assert len(warnings) == 1, res.stderr
    assert "line 2 (CEX8C 01)" in warnings[0] and str(path) in warnings[0]
    assert f"UTIL% {float(fields[6]):.1f}" in warnings[0] and f"{implied:.1f}%" in warnings[0]
    assert "<- disagree" in res.stdout


def test_a_calibration_that_breaks_a_parameter_relation_is_refused_not_written():
    # validate_params refuses acc_fixed_ms above the RSA-2048 ME time (tests/test_params.py);
    # calibrate checks its result the same way, so it never hands the CLI a file that would
    # not load
    from cryptoplan.model.calibration.calibrate import calibrate
    from cryptoplan.model.calibration.observations import CalibrationError
    me = load_params()["parameters"]["acc_me_ms_2048"]["value"]
    bad = {"acc_fixed_ms": {"value": 2.0 * me, "stderr": 0.0, "note": "a test value"}}
    with pytest.raises(CalibrationError, match="'acc_fixed_ms' must be less than acc_me_ms_2048"):
        calibrate([], measured=bad)
    ok = {"acc_fixed_ms": {"value": 0.5 * me, "stderr": 0.0, "note": "a test value"}}
    assert calibrate([], measured=ok).parameters["acc_fixed_ms"]["value"] == 0.5 * me


def test_a_site_calibration_narrows_the_band_of_the_card_time_it_informs(tmp_path):
    """Issue 46: the calibrated file keeps a covariance (the published blocks without what the
    site set, and a block for what it refitted), so parameter draws under it are narrower where
    the site's RMF lines inform: the coprocessor's RSA-2048 sign time, 0.624 +- 0.021 ms
    published, is drawn with the site's standard error instead.  Each band is asserted to be its
    own source's: the calibrated one 2 x 1.645 site standard errors, the published one the spread
    of the published refits (the file's bootstrap rows, recentred as the draws recentre them).
    Their ratio is then what the two sources give, 2.9 today (0.0567 ms wide published, 0.0195 ms
    calibrated from a speed factor on the plan's mix; 4.9 while a figure's tolerance was read as
    one standard deviation rather than as a half-width, 0.095 ms published); the bar is that the
    site's lines at least halve it.  A parameter no line touches keeps its published spread (its
    bootstrap refits, unchanged)."""
    import numpy as np
    from cryptoplan.model.calibration.draws import parameter_draws
    out = tmp_path / "site.json"
    res = CliRunner().invoke(main, ["calibrate", "--rmf", str(_write(tmp_path, _seed001_lines())), "--plan",
                                    str(_plan(tmp_path)), "--out", str(out)])
    assert res.exit_code == 0, res.output
    site = json.loads(out.read_text(encoding="utf-8"))
    published = load_params()
    assert "cop_rsa_ms_2048" in site["covariance"]["site_speed"]["names"]
    assert all("cop_rsa_ms_2048" not in b["names"] for g, b in site["covariance"].items() if g != "site_speed")
    before = parameter_draws(20_000, seed=5, doc=published)
    after = parameter_draws(20_000, seed=5, doc=site)
    width = {k: (np.percentile(d["cop_rsa_ms_2048"], 95) - np.percentile(d["cop_rsa_ms_2048"], 5))
             for k, d in (("before", before), ("after", after))}
    assert width["after"] < width["before"] / 2, width
    # the 90% band's width is 2 x 1.645 standard errors of the calibrated parameter (rtol: draws)
    assert_allclose(width["after"], 2 * 1.645 * site["parameters"]["cop_rsa_ms_2048"]["stderr"], rtol=0.05)
    # and the published one the published refits' 5-95% spread (rtol: 20,000 picks of 201 rows)
    from cryptoplan.model.calibration.draws import recentred as _recentred
    from cryptoplan.model.calibration.free import free_bounds as _bounds
    block = published["bootstrap"]["ams"]
    lo, hi = np.array([_bounds(n) for n in block["names"]]).T
    rows = _recentred(np.asarray(block["draws"]), np.array([published["parameters"][n]["value"] for n in block["names"]]),
                      lo, hi)[:, block["names"].index("cop_rsa_ms_2048")]
    assert_allclose(width["before"], np.percentile(rows, 95) - np.percentile(rows, 5), rtol=0.05)
    assert abs(np.median(after["cop_rsa_ms_2048"]) - site["parameters"]["cop_rsa_ms_2048"]["value"]) < 1e-3
    # untouched: the TLS channel costs keep their published refits, row for row, and the AMS
    # block's refits keep every column the site did not set
    assert site["bootstrap"]["tls"] == published["bootstrap"]["tls"]
    ams, pub = site["bootstrap"]["ams"], published["bootstrap"]["ams"]
    assert "cop_rsa_ms_2048" not in ams["names"] and set(ams["names"]) < set(pub["names"])
    for j, name in enumerate(ams["names"]):
        i = pub["names"].index(name)
        assert [r[j] for r in ams["draws"]] == [r[i] for r in pub["draws"]], name
    # and the TLS draws are those refits (recentred as published): every value drawn is one of them
    from cryptoplan.model.calibration.draws import recentred
    from cryptoplan.model.calibration.free import free_bounds
    tls = published["bootstrap"]["tls"]
    j = tls["names"].index("tls_chin_us")
    lo, hi = np.array([free_bounds(n) for n in tls["names"]]).T
    x_hat = np.array([published["parameters"][n]["value"] for n in tls["names"]])
    refits = recentred(np.asarray(tls["draws"]), x_hat, lo, hi)[:, j]
    assert np.isin(after["tls_chin_us"], refits).all() and np.isin(before["tls_chin_us"], refits).all()


def test_a_parameter_the_fit_left_at_zero_is_calibrated_in_its_units(tmp_path):
    """A parameter a fit leaves on its bound 0 (the unprotected TCPIP cost per KB was, at 1.1e-24
    us/KB, until TLS 1.3 AES-GCM was held at most TLS 1.2's cost; here a set with it at 0).  In logarithms no site number moved it ("no
    site number depends on it": d/d ln x = x d/dx is 0 there), so docs/models.md's "plan
    large-message TCPIP on a site's measured cost" could not be done.  It is now refitted in its
    own units: lines made by the model from a known 0.4 us/KB (APPL% to RMF's two decimals)
    calibrate back within 3 standard errors, and draws under the file spread by that standard
    error."""
    import copy
    from cryptoplan.model.params import Parameters, using_parameters
    # the packaged fit had it at 1.1e-24 until issue 62's order constraint: a parameter set with it at 0
    at_zero = copy.deepcopy(load_params())
    at_zero["parameters"]["tls_tcpip_us_per_kb"]["value"] = 0.0
    with using_parameters(Parameters.from_document(at_zero, "a set with TCPIP per KB at 0")):
        _zero_bound_round_trip(tmp_path)


def _zero_bound_round_trip(tmp_path):
    import numpy as np
    from cryptoplan.model.calibration.calibrate import cpu_observations, read_cpu_table
    from cryptoplan.model.calibration.draws import parameter_draws
    from cryptoplan.model.zos.tls import tls_cost_us
    base = {n: p["value"] for n, p in load_params()["parameters"].items()}
    assert base["tls_tcpip_us_per_kb"] == 0.0
    truth = dict(base, tls_tcpip_us_per_kb=0.4)
    rate, lines = 1000.0, []
    with using_values(truth):
        for kb in (2, 32, 64):
            appl = float(tls_cost_us("none", None, kb, "TCPIP", platform="z15")) * rate / 1e4
            lines.append(f"CHANNEL,none,,,,{kb},TCPIP,{rate:g},{appl:.2f}\n")
    p = tmp_path / "cpu.csv"
    p.write_text(CPU_HEADER + "".join(lines), encoding="utf-8")
    cal = calibrate(cpu_observations(read_cpu_table(p), platform="z15", path=str(p)))
    assert "tls_tcpip_us_per_kb" in cal.identified
    got = next(m for m in cal.moved if m["name"] == "tls_tcpip_us_per_kb")
    assert abs(got["calibrated"] - 0.4) <= 3 * got["stderr"] and got["stderr"] < 0.05
    doc = cal.document()
    draws = parameter_draws(20_000, seed=2, doc={**load_params(), **doc})
    assert_allclose(np.std(draws["tls_tcpip_us_per_kb"]), got["stderr"], rtol=0.05)   # draws: 20,000
