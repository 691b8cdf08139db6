"""The command line's main job and its fit/crossval entry points, run as a user would.

Expected values: the same model functions called directly (the demo must print what the
models compute), and the files the demo promises to write.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from openpyxl import Workbook, load_workbook

from cryptoplan import model
from cryptoplan.cli import main


@pytest.mark.slow
def test_demo_builds_recalculates_and_prints(tmp_path):
    out = tmp_path / "demo"
    res = CliRunner().invoke(main, ["demo", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "planner.xlsx").is_file() and (out / "planner-recalculated.xlsx").is_file()
    d = model.defaults()
    x = model.ams_throughput(d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"],
                             requesters=d["Requesters"], coprocessors=d["Coprocessors"],
                             accelerators=d["Accelerators"])
    line = next(ln for ln in res.output.splitlines() if ln.strip().startswith("Most the requesters reach"))
    assert f"{x:,.1f}" in line
    # the recalculated copy carries the values as cached results next to its formulas
    wb = load_workbook(out / "planner-recalculated.xlsx", data_only=True)
    ws = wb["Results"]
    cached = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(1, ws.max_row + 1)}
    assert abs(cached["Most the requesters reach"] - x) <= 1e-9 * x
    # a second run rewrites only the demo's own files
    assert CliRunner().invoke(main, ["demo", "--out", str(out)]).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [".cryptoplan-demo", "planner-recalculated.xlsx",
                                                     "planner.xlsx"]


def test_fit_prints_per_source_errors(fresh_fit, monkeypatch):
    # the command's printing and its --check, on the session's fit (tests/test_fit.py checks
    # the fit itself): `fit` computes nothing else that takes time
    import cryptoplan.model.calibration.fit as F
    monkeypatch.setattr(F, "fit", lambda: fresh_fit)
    res = CliRunner().invoke(main, ["fit", "--check"])
    assert res.exit_code == 0, res.output
    assert "median absolute relative error by source" in res.output
    assert "AMS key-size blog (Sharkey, 2024)" in res.output     # data/sources.csv, not a file name
    assert "is this fit's result" in res.output
    # each figure with the interval its tolerance accepts: "up to 30%" printed with a trailing
    # zero, tolerance 5/30 of 30 points (data/README.md, rule 1): -35.01 .. -24.99
    line = next(ln for ln in res.output.splitlines() if "s001_4m_tput_keysize" in ln)
    assert line.split("accepts")[1].split() == ["-35.01", "..", "-24.99", "up_to"], line


def test_fit_check_fails_on_a_stale_parameter_file(fresh_fit, monkeypatch, tmp_path, params_file):
    import json

    import cryptoplan.model.calibration.fit as F
    from cryptoplan.model.datafiles import data_path
    doc = json.loads(data_path("params.json").read_text(encoding="utf-8"))
    doc["parameters"]["acc_crt_ms_2048"]["value"] *= 1.001  # 0.15 standard errors
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(F, "fit", lambda: fresh_fit)
    params_file(stale)
    res = CliRunner().invoke(main, ["fit", "--check"])
    assert res.exit_code == 1, res.output
    assert "acc_crt_ms_2048: fresh" in res.output and "cost at the committed parameters" in res.output


@pytest.mark.slow
def test_fit_never_writes_a_parameter_file_the_models_would_refuse(fresh_fit, shared_bootstrap, monkeypatch, tmp_path):
    # a fit (e.g. to a --figures table) that put the accelerator's fixed time above its whole
    # RSA-2048 ME time would have been written, then refused by every later load; it is
    # refused before writing, naming the parameter, the value and the limit (as calibrate does),
    # and before the bootstrap is drawn (a refused fit does not spend its half minute)
    import copy
    import json

    F = shared_bootstrap
    bad = copy.deepcopy(fresh_fit)
    me = bad["parameters"]["acc_me_ms_2048"]["value"]
    bad["parameters"]["acc_fixed_ms"]["value"] = 2.0 * me
    monkeypatch.setattr(F, "fit", lambda: bad)
    drawn, shared = [], F.bootstrap_section
    monkeypatch.setattr(F, "bootstrap_section", lambda *a, **k: drawn.append(1))
    out, report = tmp_path / "p.json", tmp_path / "report"
    res = CliRunner().invoke(main, ["fit", "--out", str(out), "--report", str(report)])
    assert res.exit_code == 1, res.output
    assert "'acc_fixed_ms' must be less than acc_me_ms_2048" in res.output
    assert f"{2.0 * me:g}"[:6] in res.output and f"{out} not written" in res.output
    assert drawn == [] and "drawing the bootstrap" not in res.output
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["report"]   # the report, to read
    monkeypatch.setattr(F, "bootstrap_section", shared)
    monkeypatch.setattr(F, "fit", lambda: fresh_fit)           # the real fit is written
    assert CliRunner().invoke(main, ["fit", "--out", str(out)]).exit_code == 0 and out.is_file()
    # a parameter added to the fit (a new model term) is written: the fit defines the names
    grown = copy.deepcopy(fresh_fit)
    grown["parameters"]["a_new_term_us"] = dict(grown["parameters"]["acc_fixed_ms"], value=1.5)
    monkeypatch.setattr(F, "fit", lambda: grown)
    res = CliRunner().invoke(main, ["fit", "--out", str(out), "--force"])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text(encoding="utf-8"))["parameters"]["a_new_term_us"]["value"] == 1.5


def test_write_params_refuses_what_would_not_load(fresh_fit, tmp_path):
    import copy
    import json

    from cryptoplan.model.calibration.fit import write_params
    from cryptoplan.model.params import ParameterFileError, validate_params
    doc = {"parameters": copy.deepcopy(fresh_fit["parameters"])}
    doc["parameters"]["cop_rsa_fixed_share"]["value"] = 1.0
    with pytest.raises(ParameterFileError, match="'cop_rsa_fixed_share' must be less than 1"):
        write_params(doc, tmp_path / "bad.json")
    assert list(tmp_path.iterdir()) == []
    doc["parameters"]["cop_rsa_fixed_share"]["value"] = 0.5
    write_params(doc, tmp_path / "good.json")
    written = json.loads((tmp_path / "good.json").read_text(encoding="utf-8"))
    validate_params(written)                                    # loads: no error
    assert written["parameters"]["cop_rsa_fixed_share"]["value"] == 0.5


def test_every_command_is_registered():
    # The README and the issues promise these commands; a refactor once dropped four of them.
    res = CliRunner().invoke(main, ["--help"])
    for cmd in ("calibrate", "capacity", "crossval", "demo", "fit", "functions", "recalc", "sweep", "template"):
        assert f"  {cmd} " in res.output, cmd


@pytest.mark.slow
def test_outputs_never_overwrite_without_force(tmp_path):
    from cryptoplan.workbook.template import write_template
    wb = write_template(tmp_path / "planner.xlsx")
    before = wb.read_bytes()
    run = CliRunner().invoke
    # the sweep's results file may not be the input workbook, even with --force
    res = run(main, ["sweep", str(wb), "--vary", "TxRate=100,200", "-o", str(wb), "--force"])
    assert res.exit_code == 2 and "input workbook" in res.output
    assert wb.read_bytes() == before
    out = tmp_path / "s.csv"
    out.write_text("keep me")
    res = run(main, ["sweep", str(wb), "--vary", "TxRate=100,200", "-o", str(out)])
    assert res.exit_code == 2 and "--force" in res.output and out.read_text() == "keep me"
    assert run(main, ["sweep", str(wb), "--vary", "TxRate=100,200", "-o", str(out), "--force"]).exit_code in (0, 1)
    assert out.read_text().startswith("TxRate")
    # recalc -o onto an existing file, and onto the input itself
    res = run(main, ["recalc", str(wb), "-o", str(out)])
    assert res.exit_code == 2 and "--force" in res.output
    res = run(main, ["recalc", str(wb), "-o", str(wb)])
    assert res.exit_code == 4 and wb.read_bytes() == before
    # demo: a folder holding someone else's planner.xlsx is refused
    res = run(main, ["demo", "--out", str(tmp_path)])
    assert res.exit_code != 0 and wb.read_bytes() == before


def test_capacity_sizes_on_the_wait_it_prints():
    import json
    res = CliRunner().invoke(main, ["capacity", "--service-ms", "0.5", "--rates", "1000,5000",
                                    "--scv", "4", "--max-wait-ms", "0.05", "--json"])
    assert res.exit_code == 0, res.output
    for row in json.loads(res.output):
        assert row["mean_wait_ms_mgc"] <= 0.05
        # one server fewer misses the target (or is unstable)
        lam, c = row["rate_per_s"], row["servers"] - 1
        if lam * 0.5e-3 < c:
            assert model.mgc_wait(lam, 0.5e-3, c, service_scv=4.0) * 1e3 > 0.05


def _figures_copy(tmp_path, edit):
    from cryptoplan.model.datafiles import data_path
    lines = data_path("figures.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "my.csv"
    path.write_text("".join(edit(lines)), encoding="utf-8")
    return path


@pytest.mark.parametrize("content, match", [
    (b"root:x:0:0:root:/root:/bin/bash\n", "line 1: not a figures table: the header has none of its columns"),
    (b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xff\xfe", "is not UTF-8 text"),
    (b"", "the file is empty"),
])
def test_fit_refuses_a_file_that_is_not_a_figure_table(tmp_path, content, match):
    """Issue 13: /etc/passwd ended in a KeyError traceback, an .xlsx in a UnicodeDecodeError."""
    path = tmp_path / "my.csv"
    path.write_bytes(content)
    res = CliRunner().invoke(main, ["fit", "--figures", str(path)])
    assert res.exit_code == 2 and match in res.output and "my.csv" in res.output, res.output


def test_fit_refuses_rows_it_would_ignore(tmp_path):
    """Issue 13: three site_ rows appended to a copy of figures.csv were silently ignored."""
    site = "site_me,rmf,x,exec_time,z16,CEX8S,,,,,,RSA,2048,,,,accelerator,RSA_ME,,,0.05,,,ms,exact,0.1,\n"
    path = _figures_copy(tmp_path, lambda lines: lines + [site])
    res = CliRunner().invoke(main, ["fit", "--figures", str(path)])
    assert res.exit_code == 2 and "1 row(s) are not published figures (site_me)" in res.output, res.output


@pytest.mark.parametrize("column, value, match", [
    ("value", "abc", "value 'abc' is not a number"),
    ("value", "nan", "value 'nan' is not a finite number"),
    ("kind", "roughly", "kind 'roughly' is not one of approximate, exact"),
    ("tolerance", "-1", "tolerance '-1' must be a number >= 0"),
])
def test_fit_names_the_line_and_column_of_a_bad_row(tmp_path, column, value, match):
    import csv
    import io

    def edit(lines):
        header = next(csv.reader([lines[0]]))
        row = next(csv.reader([lines[5]]))
        row[header.index(column)] = value
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(row)
        return lines[:5] + [buf.getvalue()] + lines[6:]
    path = _figures_copy(tmp_path, edit)
    res = CliRunner().invoke(main, ["fit", "--figures", str(path)])
    assert res.exit_code == 2 and "my.csv line 6" in res.output and match in res.output, res.output


# A module that ran, not a placeholder lazy_loader.load put in sys.modules (its class is
# importlib's _LazyModule until the first attribute access executes it).
_LOADED = "def loaded(m):\n    return type(sys.modules.get(m)) is type(sys)\n"


@pytest.mark.subprocess
def test_help_loads_no_numerical_library():
    # `cryptoplan --help` and usage errors must not wait for NumPy, SciPy, openpyxl or matplotlib:
    # the command modules import click and the standard library only (tests/bench_cli.py times it)
    import subprocess
    import sys
    code = ("import sys\n"
            "from cryptoplan.cli import main\n"
            "try:\n"
            "    main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            f"{_LOADED}print(sorted(m for m in ('numpy', 'scipy', 'openpyxl', 'matplotlib', 'tqdm', 'lmfit',\n"
            "                         'cryptoplan.model.zos.ams', 'cryptoplan.model.params') if loaded(m)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout
    # the check sees a real load: a command that computes does load NumPy
    r = subprocess.run([sys.executable, "-c", code.replace("['--help']", "['capacity', '--service-ms', '5', '--rates', '100']")],
                       capture_output=True, text=True, check=True)
    assert "'numpy'" in r.stdout.strip().splitlines()[-1], r.stdout


def test_every_command_is_registered_in_one_place():
    from cryptoplan import cli
    assert sorted(main.commands) == ["calc-addin", "calibrate", "capacity", "crossval", "demo", "fit",
                                     "functions", "plan", "recalc", "retarget", "rmf", "sweep", "template"]
    for command in main.commands.values():
        assert command.callback.__module__.startswith("cryptoplan.cli."), command.name
    assert cli.main is main


@pytest.mark.subprocess
def test_the_old_module_path_is_a_deprecated_alias(tmp_path):
    """``cryptoplan.workbook.cli`` (where the command line lived until it got its own package)
    still imports, and runs with ``python -m``, for one release, with a DeprecationWarning."""
    import importlib
    import subprocess
    import sys
    sys.modules.pop("cryptoplan.workbook.cli", None)
    with pytest.warns(DeprecationWarning, match="use cryptoplan.cli"):
        old = importlib.import_module("cryptoplan.workbook.cli")
    assert old.main is main
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-m", "cryptoplan.workbook.cli", "--help"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "use cryptoplan.cli" in r.stderr     # it does warn
    r = subprocess.run([sys.executable, "-m", "cryptoplan.workbook.cli", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "Commands:" in r.stdout, r.stderr


@pytest.mark.subprocess
def test_recalc_loads_only_what_the_workbook_needs(tmp_path):
    # a CLI recalc pays for every module it imports (tests/bench_recalc.py times it against
    # LibreOffice): writing XML must not pull in urllib/http/email (xml.sax.saxutils does),
    # the engine's function table must not build the LibreOffice package module, and a
    # workbook without statistical functions must not load scipy.special or openpyxl
    import subprocess
    import sys
    book = tmp_path / "small.xlsx"
    subprocess.run([sys.executable, "-c",
                    "import openpyxl; wb = openpyxl.Workbook(); ws = wb.active; ws['A1'] = 2000; "
                    "ws['B1'] = '=ERLANGC(A1/1000,3)'; ws['C1'] = '=SQRT(A1)+B1'; "
                    f"wb.save({str(book)!r})"], check=True)
    code = ("import sys\n"
            f"{_LOADED}"
            "from cryptoplan.cli import main\n"
            "try:\n"
            f"    main(['recalc', {str(book)!r}, '-o', {str(tmp_path / 'out.xlsx')!r}])\n"
            "except SystemExit as e:\n"
            "    assert e.code == 0, e.code\n"
            "print(sorted(m for m in ('xml.sax.saxutils', 'urllib.request', 'cryptoplan.addin.calc', 'scipy.special',\n"
            "                         'openpyxl', 'concurrent.futures', 'numpy.ma') if loaded(m)))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]", r.stdout
    assert (tmp_path / "out.xlsx").is_file()


def test_a_command_gives_the_collector_thresholds_back():
    """The command line runs the cycle collector rarely while a command runs (a recalc builds
    tens of thousands of objects); a program or test running a command gets its own thresholds
    back, also after a failing command."""
    import gc
    before = gc.get_threshold()
    gc.set_threshold(500, 7, 9)
    try:
        assert CliRunner().invoke(main, ["functions"]).exit_code == 0
        assert gc.get_threshold() == (500, 7, 9)
        assert CliRunner().invoke(main, ["recalc", "no-such.xlsx"]).exit_code != 0
        assert gc.get_threshold() == (500, 7, 9) and gc.isenabled()
    finally:
        gc.set_threshold(*before)


def test_recalc_runs_without_the_collector_and_gives_it_back(tmp_path, monkeypatch):
    """recalc keeps all it builds until it ends: no collector pass while it runs (cli.collector);
    a test or program running it has the collector enabled again afterwards, also when the
    recalc fails."""
    import gc
    from cryptoplan.workbook import recalculation
    seen = []
    real = recalculation.recalc_report

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)
    monkeypatch.setattr(recalculation, "recalc_report", spy)
    wb = Workbook()
    wb.active["A1"] = "=1+1"
    wb.save(tmp_path / "w.xlsx")
    assert gc.isenabled()
    res = CliRunner().invoke(main, ["recalc", str(tmp_path / "w.xlsx"), "-o", str(tmp_path / "o.xlsx")])
    assert res.exit_code == 0, res.output
    assert seen == [False] and gc.isenabled()
    assert CliRunner().invoke(main, ["recalc", str(tmp_path / "missing.xlsx")]).exit_code != 0
    assert gc.isenabled()


@pytest.mark.subprocess
def test_recalc_ends_its_process_at_once_with_its_exit_code_and_every_line(tmp_path):
    # the console script ends recalc's process without Python's teardown (cli.run): the exit
    # code, every line on both streams and the file written must be what main() gives
    import subprocess
    import sys
    from pathlib import Path

    from cryptoplan.workbook.template import write_template
    book = write_template(tmp_path / "planner.xlsx")
    script = [str(Path(sys.executable).parent / "cryptoplan")]
    in_process = CliRunner().invoke(main, ["recalc", str(book), "--json"])
    for cli in (script, [sys.executable, "-m", "cryptoplan.cli"]):
        out = tmp_path / "out.xlsx"
        r = subprocess.run(cli + ["recalc", str(book), "-o", str(out), "--force", "--json"],
                           capture_output=True, text=True)
        assert r.returncode == in_process.exit_code == 0, r.stderr
        assert json_outputs(r.stdout) == json_outputs(in_process.output)
        assert load_workbook(out)["Results"]["B7"].value.startswith("=")
        bad = tmp_path / "bad.xlsx"
        from openpyxl import Workbook
        wb = Workbook()
        wb.active["A1"] = "=1)"
        wb.save(bad)
        r = subprocess.run(cli + ["recalc", str(bad)], capture_output=True, text=True)
        assert r.returncode == 1 and "Unmatched ')'" in r.stderr and "#NAME?" in r.stdout
        # output that cannot be written: said on standard error, exit 4 (as main() does)
        with open("/dev/full", "w") as full:
            r = subprocess.run(cli + ["recalc", str(bad), "--json"], stdout=full, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 4 and "cannot write the output" in r.stderr


def json_outputs(text):
    import json
    return [(o["key"], o["value"]) for o in json.loads(text)["outputs"]]


def test_the_console_script_gives_the_collector_back_to_a_caller_that_goes_on(monkeypatch):
    # cli.run() owns its process while a command runs (cli.collector); a program that calls it
    # and catches its SystemExit gets the thresholds and the enabled collector it had
    import gc
    import sys
    from cryptoplan.cli import run
    before = gc.get_threshold()
    gc.set_threshold(600, 8, 9)
    try:
        monkeypatch.setattr(sys, "argv", ["cryptoplan", "functions"])
        with pytest.raises(SystemExit) as done:
            run()
        assert done.value.code == 0
        assert gc.get_threshold() == (600, 8, 9) and gc.isenabled()
        # a recalc run in-process afterwards gives the collector back as well
        assert CliRunner().invoke(main, ["recalc", "no-such.xlsx"]).exit_code != 0
        assert gc.get_threshold() == (600, 8, 9) and gc.isenabled()
    finally:
        gc.set_threshold(*before)


def test_recalc_called_without_a_click_context_leaves_the_collector_on():
    import gc
    from cryptoplan.cli.workbook_commands import recalc_command
    with pytest.raises(RuntimeError):
        recalc_command.callback("w.xlsx", None, (), False, False, 1000, False, None, None, None, None)
    assert gc.isenabled()


def test_fit_prints_what_holds_a_parameter_on_its_bound(fresh_fit, monkeypatch):
    """A planning parameter the fit leaves on a bound, or with a standard error above its value,
    is printed with what holds it and which answers carry it, once, in its section.  The
    unprotected TCPIP cost per KB was on its bound 0 (a megabyte through TCPIP for free), then,
    with TLS 1.3 AES-GCM held at most TLS 1.2's cost per KB (issue 62), above 0 with a standard
    error above its value; a prior from seed 000's z196 ratio to the channel initiator's cost per
    KB now holds it (free.PRIORS), printed with the priors, and no fitted parameter's standard
    error exceeds its value, so that section is not printed."""
    import cryptoplan.model.calibration.fit as F
    monkeypatch.setattr(F, "fit", lambda: fresh_fit)
    res = CliRunner().invoke(main, ["fit"])
    assert res.exit_code == 0, res.output
    assert "tls_tcpip_us_per_kb" not in F.bound_parameters(fresh_fit)
    assert fresh_fit["parameters"]["tls_tcpip_us_per_kb"]["value"] > 0.1
    assert F.weak_parameters(fresh_fit) == {}
    assert "[[standard error above the value" not in res.output
    _, sep, priors = res.output.partition("[[priors: a published source other than the figures]]")
    assert sep and "    tls_tcpip_us_per_kb: within a factor 3 of the channel initiator's CPU per KB" in priors
    head, sep, section = res.output.partition("[[on a bound: what holds the parameter there, which answers carry it]]")
    section = section.partition("[[priors:")[0]
    assert "    tls_tcpip_us_per_kb:" not in section
    for name in F.bound_parameters(fresh_fit):
        if name in F.FREE and F.FREE[name].weakly:
            assert sep and f"    {name}: {F.FREE[name].weakly}" in section.splitlines()


@pytest.mark.slow
@pytest.mark.fail_slow("90s")
def test_crossval_prints_its_split_as_its_rows_mark_it():
    # the two summary lines' counts are those of the rows printed under them (a refit per figure in
    # two worker processes: about 7 s a run, two runs)
    import re
    res = CliRunner().invoke(main, ["crossval"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    n, held = map(int, re.search(r"over (\d+) figures: (\d+) of \1 predicted", lines[0]).groups())
    det, det_held, rest, rest_held = map(int, re.search(
        r"(\d+) of the \d+ are determined .*?: (\d+) of those \1 predicted within tolerance; (\d+) are not .*?: "
        r"(\d+) of those \3 within", lines[1]).groups())
    rows = lines[2:]
    assert len(rows) == n == det + rest
    out = ["outside tolerance" in r for r in rows]
    undetermined = ["not determined by the others" in r for r in rows]
    assert held == n - sum(out) and rest == sum(undetermined)
    [ecc] = [r for r in rows if r.startswith("s001_2k_tput_rsa1024_vs_ecc192 ")]
    assert "not determined by the others (cop_ecc_ms_192 not identified without it)" in ecc
    assert rest_held == sum(u and not o for u, o in zip(undetermined, out)) and det_held == held - rest_held
    # --json is strict JSON (no Infinity): a prediction resting on a parameter nothing identifies has
    # no standard error, and the row names the parameter
    import json

    def refuse(const):
        raise AssertionError(f"not JSON: {const}")
    res = CliRunner().invoke(main, ["crossval", "--json"])
    assert res.exit_code == 0, res.output
    rows = {r["id"]: r for r in json.loads(res.output, parse_constant=refuse)}
    assert len(rows) == n and sum(r["determined"] for r in rows.values()) == det
    ecc = rows["s001_2k_tput_rsa1024_vs_ecc192"]
    assert ecc["prediction_se"] is None and ecc["unidentified"] == ["cop_ecc_ms_192"] and not ecc["determined"]
