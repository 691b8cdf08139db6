"""``cryptoplan sweep``: scenario grids, vectorized evaluation, agreement with ``recalc``.

Expected-value sources: grid values are written out by hand; every sweep row
is compared with an independent ``recalc`` of the same workbook with the same
inputs set (one evaluation per scenario, the definition of the right answer),
and UDF columns with the ``model`` function called directly.
"""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoplan import model
from cryptoplan.workbook import recalc, sweep
from cryptoplan.cli import main
from cryptoplan.workbook.engine.functions import native_functions
from cryptoplan.workbook.engine.values import ExcelError
from cryptoplan.workbook.recalculation import EXIT_BAD_FILE, EXIT_ERROR_VALUES, EXIT_OK, RecalcError
from cryptoplan.workbook.sweeps import grid_values, parse_vary

from test_recalc import make_wb, registry



def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# ------------------------------------------------------------------- grids
@pytest.mark.parametrize("spec, expect", [
    ((0.1, 0.3, 0.1), [0.1, 0.2, 0.3]),            # 0.1*3 = 0.30000000000000004: still included
    ((0.0, 1.0, 0.25), [0.0, 0.25, 0.5, 0.75, 1.0]),
    ((0.0, 1.0, 0.3), [0.0, 0.3, 0.6, 0.9]),       # stop not on the grid: excluded
    ((500.0, 2000.0, 500.0), [500.0, 1000.0, 1500.0, 2000.0]),
    ((10.0, 4.0, -3.0), [10.0, 7.0, 4.0]),
    ((1.0, 1.0, 1.0), [1.0]),
])
def test_grid_values(spec, expect):
    assert grid_values(*spec) == expect


def test_grid_errors():
    with pytest.raises(ValueError, match="non-zero"):
        grid_values(0, 1, 0)
    with pytest.raises(ValueError, match="wrong way"):
        grid_values(0, 1, -1)


def test_parse_vary():
    assert parse_vary("TxRate=500:1500:500") == ("TxRate", [500.0, 1000.0, 1500.0])
    assert parse_vary("Policy=integrity,privacy") == ("Policy", ["integrity", "privacy"])
    assert parse_vary("KeySize=2048, 4096") == ("KeySize", [2048.0, 4096.0])
    assert parse_vary("Inputs!B3=1,2") == ("Inputs!B3", [1.0, 2.0])
    for bad in ("TxRate", "=1,2", "TxRate=", "X=a:b:c"):
        with pytest.raises(ValueError):
            parse_vary(bad)


# ------------------------------------------------------------- evaluation
def _queue_wb(tmp_path) -> Path:
    return make_wb(tmp_path / "q.xlsx", {
        "Inputs": {"A1": "Rate", "B1": 1000.0, "A2": "Service ms", "B2": 0.5, "A3": "Servers", "B3": 2,
                   "A4": "Mode", "B4": "fast"},
        "Results": {"A1": "Traffic", "B1": "=Rate*Svc/1000",
                    "A2": "Wait probability", "B2": "=ERLANGC(B1,Servers)",
                    "A3": "Mean wait ms", "B3": "=MMC_WAIT(Rate/1000,Svc,Servers)",
                    "A4": "Verdict", "B4": '=IF(ISNUMBER(B2),IF(B2<0.5,"ok","busy"),"unstable")',
                    "A5": "Factor", "B5": '=VLOOKUP(Mode,{"fast",1;"slow",2},2,FALSE)*Servers',
                    "A6": "Sum", "B6": "=SUM(B1,B5)"}},
        names={"Rate": "Inputs!$B$1", "Svc": "Inputs!$B$2", "Servers": "Inputs!$B$3",
               "Mode": "Inputs!$B$4"})


def _udfs():
    return registry(ERLANGC=model.erlang_c, MMC_WAIT=model.mmc_wait)


def test_sweep_rows_equal_recalc(tmp_path):
    p = _queue_wb(tmp_path)
    vary = {"Rate": [500.0, 2000.0, 3900.0, 4000.0, 6000.0], "Servers": [2, 3], "Mode": ["fast", "slow"]}
    res = sweep(p, vary, functions=_udfs())
    assert res.n == 20
    for i, row in enumerate(res.rows()):
        inputs = {k: row[k] for k in vary}
        want = recalc(p, inputs, functions=_udfs())
        for k, v in want.items():
            got = res.outputs[k][i]
            assert type(got) is type(v) and got == v, (inputs, k, got, v)
    # Cartesian product, first input slowest
    assert res.inputs["Rate"][:4] == [500.0] * 4
    assert res.inputs["Mode"][:2] == ["fast", "slow"]


def test_sweep_udf_values_and_per_scenario_errors(tmp_path):
    p = _queue_wb(tmp_path)
    rates = grid_values(500, 6000, 500)
    res = sweep(p, {"Rate": rates}, functions=_udfs())
    for rate, pw, verdict in zip(rates, res.outputs["Wait probability"], res.outputs["Verdict"]):
        a = rate * 0.5 / 1000
        if a < 2:
            assert pw == model.erlang_c(a, 2.0)
            assert verdict == ("ok" if pw < 0.5 else "busy")
        else:  # unstable in this scenario only
            assert isinstance(pw, ExcelError) and pw == "#NUM!"
            assert verdict == "unstable"
    assert res.exit_code == EXIT_ERROR_VALUES


def test_sweep_is_vectorized(tmp_path):
    calls = []

    def counted(a, c):
        calls.append(np.size(a))
        return model.erlang_c(a, c)
    p = _queue_wb(tmp_path)
    rates = grid_values(1, 3900, 1)
    t = time.perf_counter()
    res = sweep(p, {"Rate": rates}, functions=registry(ERLANGC=counted, MMC_WAIT=model.mmc_wait))
    elapsed = time.perf_counter() - t
    assert calls == [3900]                      # one call for all scenarios
    got = np.array(res.outputs["Wait probability"], dtype=float)
    # same operation order as the cell: Rate*Svc/1000
    np.testing.assert_array_equal(got, model.erlang_c(np.array(rates) * 0.5 / 1000, 2.0))
    assert elapsed < 10.0


def test_zip_and_errors(tmp_path):
    p = _queue_wb(tmp_path)
    res = sweep(p, {"Rate": [100.0, 200.0], "Servers": [1, 4]}, zip_inputs=True, functions=_udfs())
    assert res.n == 2
    assert res.outputs["Factor"] == [1.0, 4.0]
    with pytest.raises(RecalcError, match="same number of values"):
        sweep(p, {"Rate": [1.0, 2.0], "Servers": [1]}, zip_inputs=True, functions=_udfs())
    with pytest.raises(RecalcError, match="no defined name"):
        sweep(p, {"Nope": [1.0]}, functions=_udfs())


def test_sweep_of_native_only_workbook(tmp_path):
    p = make_wb(tmp_path / "n.xlsx", {"Results": {
        "A1": "x", "B1": 1.0, "A2": "Square", "B2": "=B1^2", "A3": "Rounded", "B3": "=ROUND(B2/3,2)",
        "A4": "Pick", "B4": '=CHOOSE(MOD(B1,3)+1,"a","b","c")',
        "A5": "Lookup", "B5": "=INDEX({10,20,30},1,MOD(B1,3)+1)"}})
    xs = grid_values(1, 9, 1)
    res = sweep(p, {"Results!B1": xs}, functions=native_functions())
    assert res.outputs["Square"] == [x * x for x in xs]
    assert res.outputs["Rounded"] == [float(f"{x * x / 3:.2f}") if x != 3 else 3.0 for x in xs]
    assert res.outputs["Pick"] == ["abc"[int(x) % 3] for x in xs]
    assert res.outputs["Lookup"] == [(10.0, 20.0, 30.0)[int(x) % 3] for x in xs]


# --------------------------------------------------------------------- CLI
def test_cli_csv_xlsx_and_plot(tmp_path):
    p = _queue_wb(tmp_path)
    out = tmp_path / "r.csv"
    png = tmp_path / "r.png"
    res = CliRunner().invoke(main, ["sweep", str(p), "--vary", "Rate=500:1500:500", "--vary",
                                    "Mode=fast,slow", "-o", str(out), "--plot", str(png),
                                    "--y", "Factor", "--y", "Results!B1"],
                             catch_exceptions=False)
    # ERLANGC/MMC_WAIT are not catalog functions of this workbook's names? they are: the
    # default registry includes the add-in catalog, so every output is computed
    assert res.exit_code in (EXIT_OK, EXIT_ERROR_VALUES), res.output
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6
    assert rows[0]["Rate"] == "500" and rows[0]["Mode"] == "fast"
    assert rows[1]["Factor"] == "4"          # slow: 2 x 2 servers
    assert png.stat().st_size > 1000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    xlsx = tmp_path / "r.xlsx"
    assert run("sweep", p, "--vary", "Rate=1000,2000", "-o", xlsx).exit_code in (0, 1)
    ws = openpyxl.load_workbook(xlsx)["Sweep"]
    assert ws["A1"].value == "Rate" and ws["A3"].value == 2000


def test_cli_errors(tmp_path):
    p = _queue_wb(tmp_path)
    assert run("sweep", p, "--vary", "Rate=1,2", "-o", tmp_path / "x.txt").exit_code == 2
    assert run("sweep", p, "--vary", "Rate", "-o", tmp_path / "x.csv").exit_code == 2
    assert run("sweep", p, "--vary", "Rate=1,2", "-o", tmp_path / "x.csv", "--plot",
               tmp_path / "p.png").exit_code == 2
    r = run("sweep", p, "--vary", "Rate=1,2", "-o", tmp_path / "x.csv", "--plot",
            tmp_path / "p.png", "--y", "nothing-like-this")
    assert r.exit_code == 2 and "no output" in r.output
    bad = tmp_path / "bad.xlsx"
    bad.write_text("nope")
    r = run("sweep", bad, "--vary", "Rate=1,2", "-o", tmp_path / "y.csv")
    assert r.exit_code == EXIT_BAD_FILE and not (tmp_path / "y.csv").exists()


# --------------------------------------------------------------- template
def _template(tmp_path):
    from cryptoplan.workbook.template import write_template
    return write_template(tmp_path / "planner.xlsx")


@pytest.mark.slow
def test_template_sweep_row_equals_recalc_with_set(tmp_path):
    p = _template(tmp_path)
    out = tmp_path / "s.csv"
    r = run("sweep", p, "--vary", "TxRate=500:3000:500", "--vary", "Policy=integrity,privacy",
            "-o", out)
    assert r.exit_code in (EXIT_OK, EXIT_ERROR_VALUES, 3), r.output
    res = sweep(p, {"TxRate": grid_values(500, 3000, 500), "Policy": ["integrity", "privacy"]})
    for i in (0, 5, 11):
        inputs = {"TxRate": res.inputs["TxRate"][i], "Policy": res.inputs["Policy"][i]}
        want = recalc(p, inputs)
        for k, v in want.items():
            got = res.outputs[k][i]
            if isinstance(v, float) and isinstance(got, float):
                # the model's array and scalar code paths may differ in the last bit
                assert got == pytest.approx(v, rel=1e-12, abs=0), (i, k)
            else:
                assert got == v, (i, k, got, v)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 12 and rows[3]["Policy"] == "privacy"
    # the CLI way: a CSV row equals `cryptoplan recalc --set ... --json` for that scenario
    import json
    row = rows[5]
    r = run("recalc", p, "--set", f"TxRate={row['TxRate']}", "--set", f"Policy={row['Policy']}",
            "--json")
    for o in json.loads(r.output)["outputs"]:
        cell = row[o["key"]]
        if isinstance(o["value"], float):
            assert float(cell) == pytest.approx(o["value"], rel=1e-12), o["key"]
        elif isinstance(o["value"], bool):
            assert cell == ("TRUE" if o["value"] else "FALSE")
        else:
            assert cell == ("" if o["value"] is None else str(o["value"])), o["key"]


# (over 1.3 s, kept in the fast tier: the only traced test of lines it reaches; docs/development.md, "Tiers")
def test_template_10k_scenarios_every_value_a_number_or_a_message(tmp_path):
    # speed is measured in tests/bench_recalc.py, not here
    p = _template(tmp_path)
    res = sweep(p, {"TxRate": grid_values(10, 2000, 1.99), "MessageKB": grid_values(1, 10, 1)})
    assert res.n >= 10_000
    col = res.outputs["Accelerator utilization (RMF summary)"]
    assert all(isinstance(v, (float, str)) and not (isinstance(v, float) and math.isnan(v)) for v in col)


# ------------------------------------------------------------------ chunks
def _same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=0)
    return a == b and type(a) is type(b)


@pytest.mark.slow
def test_chunked_sweep_equals_one_pass_and_counts_scenarios(tmp_path, capsys):
    """The chunks change memory and the progress bar, never a value: a sweep with half its
    scenarios saturated gives the same table and exit code in chunks of 7 as in one pass."""
    from cryptoplan.workbook.sweeps import iter_sweep, write_sweep
    p = _template(tmp_path)
    vary = {"TxRate": grid_values(500, 5000, 500), "Policy": ["integrity", "privacy"],
            "KeySize": [2048, 4096, 1000]}            # 1000 bits: an error in every AMS output
    whole = sweep(p, vary, chunk_size=10_000)
    parts = list(iter_sweep(p, vary, chunk_size=7))
    assert [q.n for q in parts] == [7] * 8 + [4]
    chunked = sweep(p, vary, chunk_size=7, progress=True)
    assert list(chunked.outputs) == list(whole.outputs) and chunked.inputs == whole.inputs
    for k in whole.outputs:
        bad = [i for i, (a, b) in enumerate(zip(whole.outputs[k], chunked.outputs[k])) if not _same(a, b)]
        assert not bad, (k, bad[:3])
    assert "scenario" in capsys.readouterr().err        # the bar counts scenarios, not formula cells
    # the vectorized exit code agrees with checking every value (the definition)
    assert whole.exit_code == chunked.exit_code == EXIT_ERROR_VALUES
    slow = sweep(p, vary)
    slow._exit = None
    assert slow.exit_code == EXIT_ERROR_VALUES
    # streamed to a file: the same rows, and nothing kept in memory unless asked
    written = write_sweep(iter_sweep(p, vary, chunk_size=5), tmp_path / "s.csv")
    assert (written.scenarios, written.outputs, written.exit_code, written.result) == (
        60, len(whole.outputs), EXIT_ERROR_VALUES, None)
    rows = list(csv.DictReader((tmp_path / "s.csv").open()))
    whole.write(tmp_path / "w.csv")
    assert rows == list(csv.DictReader((tmp_path / "w.csv").open()))


def test_chunk_size_is_checked(tmp_path):
    from cryptoplan.workbook.sweeps import iter_sweep
    p = _template(tmp_path)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="chunk_size"):
            next(iter_sweep(p, {"TxRate": [1000]}, chunk_size=bad))
    r = run("sweep", p, "--vary", "TxRate=1000", "-o", tmp_path / "s.csv", "--chunk-size", "0")
    assert r.exit_code == 2 and "--chunk-size" in r.output


# ------------------------------------------------------- hostile input (issue 14)
def _small(tmp_path):
    return make_wb(tmp_path / "p.xlsx", {"Inputs": {"A1": "Policy", "B1": "integrity", "B2": 5},
                                         "Results": {"A1": "echo", "B1": "=Inputs!B1",
                                                     "A2": "twice", "B2": "=Inputs!B2*2"}},
                   names={"Policy": "Inputs!$B$1", "Rate": "Inputs!$B$2"})


def test_text_is_never_written_as_a_formula_in_xlsx(tmp_path):
    # the fuzz: --vary 'Policy==HYPERLINK("http://127.0.0.1/x")' wrote <f>HYPERLINK(...)</f>
    import zipfile
    p = _small(tmp_path)
    evil = '=HYPERLINK("http://127.0.0.1/x")'
    res = sweep(p, {"Policy": [evil, "=1+1"]})
    out = tmp_path / "s.xlsx"
    res.write(out)
    with zipfile.ZipFile(out) as z:
        xml = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
    assert b"<f>" not in xml and b"<f " not in xml
    ws = openpyxl.load_workbook(out)["Sweep"]
    values = [c.value for row in ws.iter_rows(min_row=2) for c in row]
    assert evil in values and "=1+1" in values     # the text itself, input and computed echo
    assert all(ws.cell(r, c).data_type == "s" for r in (2, 3) for c in (1, 2))


def test_csv_text_that_a_spreadsheet_would_run_gets_an_apostrophe(tmp_path):
    # OWASP CSV injection: text starting with = + - @ tab or CR is written with a leading '
    p = _small(tmp_path)
    texts = ["=cmd|' /C calc'!A0", "+1+1", "-2-2", "@SUM(A1)", "\tx", "plain"]
    res = sweep(p, {"Policy": texts})
    out = tmp_path / "s.csv"
    res.write(out)
    rows = list(csv.reader(open(out, newline="", encoding="utf-8")))
    col = [r[rows[0].index("echo")] for r in rows[1:]]
    assert col == ["'" + t for t in texts[:5]] + ["plain"]
    assert [r[rows[0].index("twice")] for r in rows[1:]] == ["10"] * 6   # numbers stay numbers
    # a negative number is a number, not text: no apostrophe
    res = sweep(p, {"Rate": [-3.0]})
    res.write(tmp_path / "n.csv")
    rows = list(csv.reader(open(tmp_path / "n.csv", newline="", encoding="utf-8")))
    assert rows[1][rows[0].index("twice")] == "-6"


def test_control_characters_round_trip_through_a_well_formed_xlsx(tmp_path):
    # "\x01 in sweep output" ended in a traceback; Excel stores it as _x0001_
    import xml.etree.ElementTree as ET
    import zipfile
    p = _small(tmp_path)
    res = sweep(p, {"Policy": ["a\x01b", "_x0041_"]})
    out = tmp_path / "s.xlsx"
    res.write(out)
    with zipfile.ZipFile(out) as z:
        for n in z.namelist():
            if n.endswith(".xml"):
                ET.fromstring(z.read(n))               # well-formed
    from cryptoplan.workbook.engine.package import Package
    pkg = Package(out)
    from cryptoplan.workbook.engine import Engine
    eng = Engine(pkg, functions=registry())
    eng.evaluate()
    assert eng.value("Sweep!A2").element(0) == "a\x01b"
    assert eng.value("Sweep!A3").element(0) == "_x0041_"   # literal text of that shape is kept


@pytest.mark.parametrize("args, match", [
    (["--vary", "Rate=1,2", "--vary", "rate=3"], "given twice"),
    (["--vary", "Rate=1:2"], "start:stop:step, three numbers"),
])
def test_cli_vary_mistakes_are_usage_errors(tmp_path, args, match):
    p = _small(tmp_path)
    res = run("sweep", p, *args, "-o", tmp_path / "s.csv")
    assert res.exit_code == 2 and match in res.output
    assert not (tmp_path / "s.csv").exists()


def test_unwritable_targets_fail_before_computing_and_write_nothing(tmp_path):
    p = _small(tmp_path)
    res = run("sweep", p, "--vary", "Rate=1,2", "-o", tmp_path / "s.csv", "--y", "twice",
              "--plot", tmp_path / "missing" / "p.png")
    assert res.exit_code == 2 and "does not exist" in res.output
    assert not (tmp_path / "s.csv").exists()        # the CSV is not written first
    res = run("sweep", p, "--vary", "Rate=1,2", "-o", tmp_path / "nope" / "s.csv")
    assert res.exit_code == 2 and "does not exist" in res.output


def test_sweep_output_gets_the_umask_mode(tmp_path):
    import os
    import stat
    p = _small(tmp_path)
    old = os.umask(0o022)
    try:
        assert run("sweep", p, "--vary", "Rate=1,2", "-o", tmp_path / "s.csv").exit_code == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "s.csv").st_mode) == 0o644


def test_vary_text_into_a_number_cell_is_refused(tmp_path):
    # the fuzz: --vary TxRate=abc was accepted (a column of #VALUE!); text into a text cell is fine
    p = _small(tmp_path)
    res = run("sweep", p, "--vary", "Rate=1,abc", "-o", tmp_path / "s.csv")
    assert res.exit_code == EXIT_BAD_FILE and "holds a number and 'abc' is not one" in res.output
    assert run("sweep", p, "--vary", "Policy=privacy,42", "-o", tmp_path / "t.csv").exit_code == EXIT_OK


@pytest.mark.slow
def test_sweep_set_fixes_an_input_in_every_scenario(tmp_path):
    """--set KeySize=4096 with --vary TxRate equals recalc --set for both inputs, row by row."""
    p = _template(tmp_path)
    out = tmp_path / "s.csv"
    r = run("sweep", p, "--vary", "TxRate=100,200", "--set", "KeySize=4096", "--set", "Policy=privacy",
            "-o", out)
    assert r.exit_code in (EXIT_OK, EXIT_ERROR_VALUES), r.output
    rows = list(csv.DictReader(out.open()))
    assert [(x["TxRate"], x["KeySize"], x["Policy"]) for x in rows] == [
        ("100", "4096", "privacy"), ("200", "4096", "privacy")]
    for row in rows:
        want = recalc(p, {"TxRate": float(row["TxRate"]), "KeySize": 4096.0, "Policy": "privacy"})
        default = recalc(p, {"TxRate": float(row["TxRate"])})
        key = "Coprocessor utilization (RMF summary)"
        assert float(row[key]) == pytest.approx(want[key], rel=1e-12)
        assert want[key] != pytest.approx(default[key], rel=1e-3)     # the --set took effect
    r = run("sweep", p, "--vary", "TxRate=500,1000", "--set", "txrate=5", "-o", tmp_path / "t.csv")
    assert r.exit_code == 4 and "both set (--set) and varied (--vary)" in r.output
    r = run("sweep", p, "--vary", "TxRate=500", "--set", "KeySize", "-o", tmp_path / "t.csv")
    assert r.exit_code == 2 and "expected NAME=VALUE" in r.output
    r = run("sweep", p, "--vary", "TxRate=500", "--set", "Nope=1", "-o", tmp_path / "t.csv")
    assert r.exit_code == 4 and "Nope" in r.output


def test_saturated_scenarios_carry_the_add_ins_own_message(tmp_path):
    """A saturated scenario's text is what the add-in returns for that scenario alone
    (addin.convert.call, the xlwings path), though the sweep computed it from the vector
    call's mask without calling the model per scenario."""
    from cryptoplan.addin import catalog, convert
    p = make_wb(tmp_path / "c.xlsx", {
        "Inputs": {"A1": "rate", "B1": 1000, "A2": "cards", "B2": 2},
        "Results": {"A1": "Coprocessor utilization",
                    "B1": '=CARD_UTILIZATION(Inputs!B1,"integrity","RSA",2048,2,,"coprocessor",Inputs!B2)',
                    "A2": "Wait", "B2": '=CRYPTO_WAIT_MS(Inputs!B1,"integrity","RSA",2048,2,,"coprocessor",Inputs!B2)'}},
        names={"Rate": "Inputs!$B$1", "Cards": "Inputs!$B$2"})
    rates, cards = grid_values(100, 6000, 150), [1, 2, 3]
    res = sweep(p, {"Cards": cards, "Rate": rates})
    assert res.exit_code == EXIT_ERROR_VALUES
    n_err = 0
    for fn, key in (("CARD_UTILIZATION", "Coprocessor utilization"), ("CRYPTO_WAIT_MS", "Wait")):
        spec = catalog.get(fn)
        for c, r, got in zip(res.inputs["Cards"], res.inputs["Rate"], res.outputs[key]):
            want = convert.call(spec, (r, "integrity", "RSA", 2048, 2, None, "coprocessor", c))
            assert _same(got, want), (fn, c, r, got, want)
            n_err += isinstance(want, str)
    assert 40 < n_err < 2 * len(rates) * len(cards) - 40     # both kinds of scenario, many of each


def test_csv_text_is_the_one_cell_to_text_rule():
    """One rule for a value in a CSV (the sweep's results and the Site RMF reader share it);
    the sweep adds the apostrophe only in front of text a spreadsheet would run."""
    from cryptoplan.workbook.engine.values import csv_text
    from cryptoplan.workbook.sweeps import _csv
    cases = [(None, ""), (True, "TRUE"), (3.0, "3"), (-5, "-5"), (0.1, "0.1"), (1e15, "1000000000000000.0"), (2.5e20, "2.5e+20"),
             (float("inf"), "inf"), ("=1+1", "=1+1")]
    for value, want in cases:
        assert csv_text(value) == want, value
    assert _csv(-5.0) == "-5" and _csv("=1+1") == "'=1+1" and _csv("-x") == "'-x"


def test_streamed_csv_is_what_csv_writer_writes_cell_by_cell(tmp_path):
    """write_sweep formats whole output columns at once; the reference is Python's csv.writer
    fed each scenario's values one by one (SweepResult.write on the joined result), for every
    kind of value: whole, fractional, huge and negative numbers, booleans, empty cells, text
    that needs quoting or an apostrophe, Excel errors and the add-in's error text."""
    from cryptoplan.workbook.sweeps import iter_sweep, write_sweep
    p = make_wb(tmp_path / "k.xlsx", {
        "Inputs": {"A1": "Rate", "B1": 2.0, "B2": "x"},
        "Results": {
            "A1": "whole", "B1": "=Inputs!B1*3",
            "A2": "fraction", "B2": "=Inputs!B1/7",
            "A3": "huge", "B3": "=Inputs!B1*1E+300",
            "A4": "negative", "B4": "=-Inputs!B1/3",
            "A5": "bool", "B5": "=Inputs!B1>2",
            "A6": "empty", "B6": "=Inputs!Z99",
            "A7": "quoted", "B7": '=Inputs!B2&", ""q"""',
            "A8": "formula-like", "B8": '="=" & Inputs!B1',
            "A9": "error", "B9": "=IF(Inputs!B1>3,1/0,NA())",
            "A10": "addin", "B10": "=ERLANGC(Inputs!B1,2)",
            "A11": "big whole", "B11": "=Inputs!B1*1E+15",
        }}, names={"Rate": "Inputs!$B$1", "Text": "Inputs!$B$2"})
    vary = {"Rate": [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 1e-7], "Text": ["a", "-b", "c,d\ny", "e\"f", "", "@g", "h"]}
    streamed = tmp_path / "streamed.csv"
    write_sweep(iter_sweep(p, vary, zip_inputs=True, chunk_size=3), streamed)
    joined = tmp_path / "joined.csv"
    sweep(p, vary, zip_inputs=True).write(joined)
    assert streamed.read_bytes() == joined.read_bytes()
    rows = list(csv.reader(open(streamed, newline="", encoding="utf-8")))
    col = {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}
    assert col["whole"][:2] == ["1.5", "3"] and col["bool"][:4] == ["FALSE"] * 3 + ["FALSE"]
    assert col["quoted"][2] == 'c,d\ny, "q"' and col["formula-like"][0] == "'=0.5"
    assert col["error"][:5] == ["#N/A"] * 4 + ["#N/A"] and col["error"][5] == "#DIV/0!"
    assert col["addin"][4].startswith("#NUM! ERLANGC:") and col["big whole"][0] == "500000000000000"
    assert col["huge"][6] == repr(1e-7 * 1e300) and col["empty"][0] == "0"


@settings(max_examples=60, deadline=None)
@given(lists=st.lists(st.lists(st.one_of(st.floats(-1e6, 1e6), st.text(max_size=3), st.booleans(), st.none()),
                               min_size=1, max_size=5), min_size=1, max_size=3),
       chunk=st.integers(1, 50), zip_inputs=st.booleans())
def test_chunk_columns_are_itertools_product_a_chunk_at_a_time(lists, chunk, zip_inputs):
    """Each chunk's input columns, made from the scenario index alone (memory follows the
    chunk), are the slices of what itertools.product (or zip) gives for the whole sweep."""
    import itertools

    from cryptoplan.workbook.sweeps import _as_objects, _chunk_columns
    if zip_inputs:
        lists = [v[:min(map(len, lists))] for v in lists]
        whole = [list(v) for v in lists]
    else:
        whole = [list(c) for c in zip(*itertools.product(*lists))]
    n = len(whole[0])
    objects = [_as_objects(v) for v in lists]
    got = [[] for _ in lists]
    for start in range(0, n, chunk):
        for col, part in zip(got, _chunk_columns(objects, zip_inputs, start, min(chunk, n - start))):
            col.extend(part)
    assert [[(type(x), x) for x in c] for c in got] == [[(type(x), x) for x in c] for c in whole]


def _template(tmp_path) -> Path:
    from cryptoplan.workbook.template import write_template
    return write_template(tmp_path / "planner.xlsx")


def test_exit_1_says_once_how_many_outputs_are_errors_and_which(tmp_path, monkeypatch):
    """Issue 33: `cryptoplan sweep` exited 1 with nothing on stderr saying why.  The counts are
    the CSV's own: each column's cells that hold an error text."""
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    book, out = _template(tmp_path), tmp_path / "s.csv"
    res = CliRunner().invoke(main, ["sweep", str(book), "--vary", "TxRate=500,1000,1500", "--set", "Policy=privacy",
                                    "-o", str(out)])
    assert res.exit_code == EXIT_ERROR_VALUES, res.output
    with open(out, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    bad = {k: sum(1 for r in rows if r[k].startswith("#")) for k in rows[0] if k not in ("TxRate", "Policy")}
    bad = {k: n for k, n in bad.items() if n}
    assert bad, "the scenario was meant to overload the installed accelerator"
    lines = [ln for ln in res.stderr.splitlines() if "hold errors" in ln or "holds errors" in ln]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"{len(bad)} output")
    for k, n in bad.items():
        assert f'"{k}" in {n} of 3 scenarios' in lines[0]


def test_the_sweep_plot_has_units_steps_distinct_lines_and_its_parameter_source(tmp_path, monkeypatch):
    """Issue 33: x axis with its unit, card counts as steps, lines that coincide still told
    apart (marker and dash differ), and the parameter file named on the figure."""
    from matplotlib.figure import Figure
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    figures = []
    save = Figure.savefig       # the figure the chart saves, kept to read its axes

    def saving(fig, *args, **kwargs):
        figures.append(fig)
        return save(fig, *args, **kwargs)
    monkeypatch.setattr(Figure, "savefig", saving)
    book = _template(tmp_path)
    res = sweep(book, {"TxRate": [500, 1000, 2000, 4000], "Policy": ["integrity", "privacy"]})
    res.plot(tmp_path / "p.png", ["Accelerators required", "Coprocessor utilization (RMF summary)"])
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = figures[-1]
    counts, util = fig.axes[0], fig.axes[1]
    from cryptoplan.workbook.template import INPUTS
    unit = next(i.unit for i in INPUTS if i.name == "TxRate")
    assert util.get_xlabel() == f"TxRate ({unit})"
    assert "(cards)" in counts.get_ylabel().replace("\n", " ") and "(%)" in util.get_ylabel().replace("\n", " ")
    assert all(ln.get_drawstyle() == "steps-post" for ln in counts.lines)
    assert all(ln.get_drawstyle() == "default" for ln in util.lines)
    styles = {(ln.get_marker(), ln.get_linestyle()) for ln in counts.lines}
    assert len(styles) == len(counts.lines) == 2
    assert any("model parameters: the packaged fit" in t.get_text() for t in fig.texts)
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", "site.json")
    assert res.params_source() == "site.json (CRYPTOPLAN_PARAMS)"


# (over 1.3 s, kept in the fast tier: the only traced test of lines it reaches; docs/development.md, "Tiers")
def test_cells_the_varied_inputs_cannot_reach_keep_their_values_only_under_the_same_parameters(tmp_path,
                                                                                               monkeypatch):
    """Issue 66: the chunks of a sweep evaluate the cells the varied inputs cannot reach once (the
    single-workload calculator under a PlanGrowth sweep) and the next chunks take their values;
    the answers are one pass's; nothing is carried into another sweep (under other parameters,
    or other fixed inputs): each answer is what a fresh engine gives."""
    from cryptoplan.model.params import using_values
    from cryptoplan.workbook import sweeps
    from cryptoplan.workbook.engine import evaluation
    p = _template(tmp_path)
    vary = {"PlanGrowth": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]}     # three chunks of two
    key = "AMS CPU per transaction at TxRate, total"
    evaluated: list = []
    real_cell, real_chunk = evaluation.evaluate_cell, sweeps._evaluated

    def cell(engine, k):
        evaluated[-1].add(k)
        return real_cell(engine, k)

    def chunk(*args, **kw):
        evaluated.append(set())
        return real_chunk(*args, **kw)
    monkeypatch.setattr(evaluation, "evaluate_cell", cell)
    monkeypatch.setattr(sweeps, "_evaluated", chunk)
    chunked = sweep(p, vary, chunk_size=2)
    free = sweeps._LOCAL.kept["free"]
    assert len(evaluated) == 3 and len(free & evaluated[0]) > 40
    assert all(e and not free & e for e in evaluated[1:]), [sorted(free & e)[:5] for e in evaluated[1:]]
    monkeypatch.undo()
    whole = sweep(p, vary, chunk_size=100)
    for k in whole.outputs:
        assert all(_same(a, b) for a, b in zip(whole.outputs[k], chunked.outputs[k])), k
    base = chunked.column(key)
    with using_values({"ams_sig_op_us": 2 * 45.5287}):          # other parameters: made again
        other = sweep(p, vary, chunk_size=2).column(key)
        sweeps._LOCAL.__dict__.pop("kept", None)
        sweeps._LOCAL.__dict__.pop("engine", None)
        fresh = sweep(p, vary, chunk_size=2).column(key)
    assert other == fresh and other[0] > base[0]
    assert sweep(p, vary, chunk_size=2, fixed={"TxRate": 2000}).column("Accelerators required") == \
        sweep(p, vary, chunk_size=100, fixed={"TxRate": 2000}).column("Accelerators required")
