"""Hostile input (issue 31): each reproduction of the campaign as a regression test.

What an attacker or a careless user can hand cryptoplan -- a parameter file nested 100,000
deep, integers beyond the float range, omitted spreadsheet arguments, odd zip packages,
unwritable output paths -- must end in a message naming the input, never a signal, a
traceback or "internal error".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from cryptoplan.cli import main


def run(*args, env=None):
    """The CLI in this process: an uncaught exception fails the test (no traceback is allowed)."""
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, env=env)


def _cli() -> str:
    return str(Path(sys.executable).parent / "cryptoplan")


def _workbook(tmp_path, cells=None, name="w.xlsx") -> Path:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Results"
    for coord, value in (cells or {"A1": "traffic", "B1": 9, "A2": "wait probability",
                                   "B2": "=ERLANGC(B1, 10)"}).items():
        ws[coord] = value
    path = tmp_path / name
    wb.save(path)
    return path


# ------------------------------------------------------------ parameter files (the crash)
@pytest.mark.subprocess
def test_deeply_nested_parameter_file_is_refused_not_a_segfault(tmp_path):
    # 9363a92: recalc and sweep died with SIGSEGV (exit 139): the JSON decoder recursed once
    # per level under the engine's raised recursion limit and overflowed the C stack
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    book = _workbook(tmp_path)
    env = {**os.environ, "CRYPTOPLAN_PARAMS": str(deep)}
    for args in (["recalc", book], ["sweep", book, "--vary", "B1=1,2", "-o", tmp_path / "s.csv"]):
        r = subprocess.run([_cli(), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 4, (args, r.returncode, r.stderr[-500:])
        assert "deep.json" in r.stderr and "nested 100,000 levels deep; at most 64" in r.stderr
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "s.csv").exists()


def test_parameter_file_refusals_name_the_file(tmp_path):
    from cryptoplan.model.params import MAX_PARAMS_BYTES, ParameterFileError, Parameters
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_PARAMS_BYTES + 1))
    with pytest.raises(ParameterFileError, match="big.json: .*larger than 16 MiB"):
        Parameters.load(big)
    nested = tmp_path / "nested.json"
    nested.write_text('{"parameters": ' + "[" * 65 + "]" * 65 + "}")
    with pytest.raises(ParameterFileError, match="nested 66 levels deep"):
        Parameters.load(nested)
    quoted = tmp_path / "quoted.json"               # brackets inside strings are not nesting
    quoted.write_text(json.dumps({"parameters": "[" * 1000 + '\\"{'}))
    with pytest.raises(ParameterFileError, match="no 'parameters' object"):
        Parameters.load(quoted)
    for target in (tmp_path, Path("/dev/zero"), tmp_path / ("x" * 300 + ".json")):
        with pytest.raises(FileNotFoundError, match="is not a file"):
            Parameters.load(target)


def test_parameter_value_beyond_the_float_range_is_a_user_error(tmp_path):
    from cryptoplan.model.params import ParameterFileError, Parameters, load_params
    doc = json.loads(json.dumps(load_params()))
    path = tmp_path / "site.json"
    doc["parameters"]["cop_rsa_ms_2048"]["value"] = 10**400
    path.write_text(json.dumps(doc))
    with pytest.raises(ParameterFileError, match=r"'cop_rsa_ms_2048' must have a 'value' that is a finite number "
                                                 r">= 0 \(got 1000000000000000000000000\.\.\.0{25} \(401 digits\)\)"):
        Parameters.load(path)
    with pytest.raises(ParameterFileError, match=r"'cop_rsa_ms_2048' must have a 'value' .*got an integer of "
                                                 r"about 5,001 digits"):
        Parameters.from_document({"parameters": {**doc["parameters"], "cop_rsa_ms_2048": {"value": 10**5000}}},
                                 "site.json")
    path.write_text(json.dumps(doc).replace("1" + "0" * 400, "1" + "0" * 5000))
    with pytest.raises(ParameterFileError, match="site.json: not a cryptoplan parameter file .*4300 digits"):
        Parameters.load(path)


@pytest.mark.parametrize("target", ["missing.json", "folder", "/dev/zero", "deep.json", "huge.json"])
def test_bad_environment_parameter_file_is_one_user_error(tmp_path, params_file, target):
    # 9363a92: every cell "internal error (FileNotFoundError ...); please report it", and
    # `cryptoplan demo` / `fit --check` a raw traceback
    (tmp_path / "folder").mkdir()
    (tmp_path / "deep.json").write_text("[" * 5000 + "]" * 5000)
    (tmp_path / "huge.json").write_text('{"parameters": {"cop_rsa_ms_2048": {"value": 1' + "0" * 400 + "}}}")
    path = target if target.startswith("/") else tmp_path / target
    params_file(path)
    book = _workbook(tmp_path)
    for args in (["recalc", book], ["demo", "--out", tmp_path / "demo"], ["fit", "--check"],
                 ["sweep", book, "--vary", "B1=1,2", "-o", tmp_path / "s.csv"]):
        res = run(*args)
        assert res.exit_code == 4, (args, res.output)
        assert res.output.count("error: ") == 1 and "CRYPTOPLAN_PARAMS" in res.output, (args, res.output)
        assert "internal error" not in res.output and "fitting" not in res.output


def test_bad_environment_parameter_file_in_a_cell_is_a_user_error(tmp_path, params_file):
    from cryptoplan.addin.catalog import get
    from cryptoplan.addin.convert import call
    params_file(tmp_path / "missing.json")
    got = call(get("CRYPTO_OP_MS"), ("sign",))
    assert got == f"#VALUE! CRYPTO_OP_MS: CRYPTOPLAN_PARAMS names {tmp_path / 'missing.json'}, which is not a file"


# ------------------------------------------------------------ the model API: huge and ragged numbers
# A valid call of each public model function (defaults where it has them): each argument in turn
# is replaced by a hostile value.
_VALID = dict(tx_rate=100.0, quantile=0.9, policy="privacy", key_type="RSA", key_size=2048, message_kb=2.0, mode="SSLCIPH",
              cipher="TLS_RSA_WITH_AES_256_CBC_SHA256", start_rate=1.0, handshake_rate=10.0, traffic=5.0,
              servers=10, arrival_rate=1.0, service_time=0.5, p=0.9, t=0.1, population=5, demands=[1.0, 2.0],
              populations=5, station=0, demand=[1.0], connection_cpu_us=10.0, k=3, mean=2.0, sslrkeyc=1000,
              operation="sign", resource="accelerators", quantity="utilization",
              workloads=(("name", "kind", "rate", "policy", "message_kb"), ("pay", "ams", 100.0, "privacy", 2.0)),
              system=(("processors", 4.0), ("coprocessors", 2.0), ("accelerators", 2.0)))
_VALID_FOR = {"plan": {}, "qs_op_ms": {"algorithm": "ML-DSA-65"}, "migrated_card_utilization": {"share": 0.5},
              "migrated_cards_required": {"share": 0.5},
              "mva": {"servers": [1, 1]}, "mva_response": {"servers": [1, 1]},
              "mva_throughput": {"servers": [1, 1]}, "tls_roundtrip_us": {"cipher": "TLS_CHACHA20_POLY1305_SHA256"},
              "tls_cost_change_pct": {"mode": "ATTLS"},
              "channel_demands_us": {"roundtrip_us": 500},
              "channel_pipeline": {"roundtrip_us": 500, "ssltasks": 8, "dispatchers": 5},
              "channel_throughput": {"roundtrip_us": 500, "ssltasks": 8, "dispatchers": 5}}
# read_plan reads a file: its hostile input is tests/test_hostile_plan.py's and test_rmf_plan.py's
_NOT_MODELS = {"model_figures", "model_parameters", "defaults", "using_parameters", "read_plan"}
_HOSTILE = {"10**400": 10**400, "-10**400": -10**400, "10**5000": 10**5000, "ragged": [[1], [2, 3]],
            "[1, 10**400]": [1, 10**400], "['RSA', 10**5000]": ["RSA", 10**5000]}
_RAW_TEXT = ("int too large", "Exceeds the limit", "inhomogeneous", "setting an array element", "sys.set_int")


def _model_calls():
    import inspect

    from cryptoplan import model
    for name in sorted(model.__all__):
        fn = getattr(model, name)
        if not callable(fn) or inspect.isclass(fn) or name in _NOT_MODELS:
            continue
        valid = dict(_VALID, **_VALID_FOR.get(name, {}))
        if name == "plan":              # the objects a Python caller builds
            valid.update(system=model.System(processors=4, coprocessors=2, accelerators=2),
                         workloads=[model.Workload("pay", "ams", 100.0, args={"policy": "privacy", "message_kb": 2})])
        params = list(inspect.signature(fn).parameters.values())
        kwargs = {p.name: valid.get(p.name, p.default) for p in params}
        for p in params:
            if isinstance(p.default, bool) or p.name == "full_output":
                continue
            yield name, fn, kwargs, p.name


def test_every_model_argument_refuses_huge_and_ragged_values_by_name():
    # 9363a92: uncaught OverflowError ("int too large to convert to float") for 10**400 in 30+
    # functions, "Exceeds the limit (4300 digits)" for 10**5000 in a text argument, NumPy's
    # "inhomogeneous shape" for ragged lists; now each names the argument, the value abbreviated
    calls = failures = 0
    problems = []
    for name, fn, kwargs, arg in _model_calls():
        fn(**kwargs)                                        # the baseline is valid
        for label, value in _HOSTILE.items():
            calls += 1
            try:
                fn(**dict(kwargs, **{arg: value}))
            except (ValueError, TypeError) as exc:
                msg = str(exc)
                if arg not in msg or any(r in msg for r in _RAW_TEXT) or "0" * 40 in msg:
                    problems.append((name, arg, label, msg[:160]))
            except Exception as exc:  # noqa: BLE001 - what the test is about
                problems.append((name, arg, label, f"{type(exc).__name__}: {str(exc)[:120]}"))
            else:
                problems.append((name, arg, label, "accepted"))
    failures = len(problems)
    assert calls > 1200 and failures == 0, problems[:20]


def test_huge_values_name_the_argument_the_value_and_the_range():
    from cryptoplan import model
    with pytest.raises(ValueError, match=r"^traffic must be in \[0, 1e\+12\] \(got 1000000000000000000000000\.\.\."
                                         r"0{25} \(401 digits\)\)$"):
        model.erlang_b(10**400, 10)
    with pytest.raises(ValueError, match=r"^servers must be in \[1, 1e\+12\] \(got an integer of about 5,001 digits\)$"):
        model.erlang_b(10, 10**5000)
    with pytest.raises(ValueError, match=r"traffic must be in \[0, 1e\+12\] \(got 1000.*\(401 digits\) at index 1\)$"):
        model.erlang_b([1, 10**400], 10)
    with pytest.raises(ValueError, match=r"^connection_cpu_us must be a finite number >= 0 \(got -1000"):
        model.ocsp_cpu_us(-10**400)
    with pytest.raises(ValueError, match=r"^operation must be one of sign, .* \(got an integer of about 5,001 digits\)$"):
        model.crypto_op_ms(10**5000)
    with pytest.raises(ValueError, match=r"^traffic must be a number or a rectangular array of numbers: its nested "
                                         r"lists have different lengths \(got \[\[1\], \[2, 3\]\]\)$"):
        model.erlang_b([[1], [2, 3]], 10)


def test_channel_requesters_beyond_the_numerical_limit_are_refused_at_once():
    # 9363a92: RuntimeError "Bard-Schweitzer MVA did not converge" after 10 s
    import time

    from cryptoplan import model
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"^requesters must be in \[1, 1e\+12\] \(got 1e\+308\)$"):
        model.channel_throughput("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256", 2, requesters=1e308, ssltasks=8,
                                 dispatchers=5, cps=4, roundtrip_us=500, task_elapsed_ratio=1)
    assert time.perf_counter() - t0 < 1.0
    # the throughput has long reached its asymptote at the limit
    at = [model.channel_throughput("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256", 2, requesters=r, ssltasks=8,
                                   dispatchers=5, cps=4, roundtrip_us=500, task_elapsed_ratio=1) for r in (1e6, 1e12)]
    assert at[1] == pytest.approx(at[0], rel=1e-5)


# ------------------------------------------------------------ spreadsheet functions through recalc
def test_omitted_required_argument_is_named_not_the_placeholder(tmp_path):
    # 9363a92: "#VALUE! ERLANGC: traffic must be a number or an array of numbers (got REQUIRED)"
    from cryptoplan.workbook import recalc
    book = _workbook(tmp_path, {"A1": "a", "B1": "=ERLANGC(,10)", "A2": "b", "B2": "=ERLANGC(9,)",
                                "A3": "c", "B3": '=CRYPTO_OP_MS(,"RSA")', "A4": "d", "B4": '=CRYPTO_OP_MS("sign",,)'})
    out = recalc(book)
    assert out["a"] == "#VALUE! ERLANGC: traffic is required (the argument is omitted)"
    assert out["b"] == "#VALUE! ERLANGC: servers is required (the argument is omitted)"
    assert out["c"] == "#VALUE! CRYPTO_OP_MS: operation is required (the argument is omitted)"
    assert isinstance(out["d"], float) and out["d"] > 0          # omitted optional ones: their defaults


def test_date_formatted_cells_are_refused_as_the_readme_says(tmp_path):
    # 9363a92: =ERLANGC(9, In!A6) with 2020-01-01 in A6 gave 0.0, =MMC_SERVERS(In!A6, 0.1) 6262
    import datetime as dt

    from cryptoplan.workbook import recalc
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Results"
    inp = wb.create_sheet("In")
    inp["A6"] = dt.datetime(2020, 1, 1)
    inp["A7"] = 43831
    inp["A7"].number_format = "mm-dd-yy"             # Excel's built-in format 14, no numFmt element
    inp["A8"] = 43831
    inp["A8"].number_format = '0.00 "days"'          # a number with text: not a date
    inp["B1"], inp["B2"] = 9, dt.datetime(2020, 1, 1)
    for r, (label, formula) in enumerate([("a", "=ERLANGC(9, In!A6)"), ("b", "=MMC_SERVERS(In!A6, 0.1)"),
                                          ("c", "=ERLANGC(9, In!A7)"), ("d", "=ERLANGC(1, In!A8)"),
                                          ("e", "=ERLANGC(In!B1:B2, 10)"), ("f", "=ERLANGC(9, DATE(2020,1,1))")], 1):
        ws.cell(r, 1, label)
        ws.cell(r, 2, formula)
    ws["A7"], ws["B7"] = "g", "=INDEX(ERLANGC(In!B1:B2, 10), 2)"
    wb.save(tmp_path / "d.xlsx")
    out = recalc(tmp_path / "d.xlsx")
    assert out["a"] == ("#VALUE! ERLANGC: servers must be a number, not a date (got 2020-01-01 00:00:00); "
                        "check the cell's number format")
    assert out["b"].startswith("#VALUE! MMC_SERVERS: arrival_rate must be a number, not a date")
    assert out["c"].startswith("#VALUE! ERLANGC: servers must be a number, not a date (got 2020-01-01")
    assert out["d"] == 0.0                            # 43831 servers for 1 erlang: no wait
    assert isinstance(out["e"], float)               # the range's first element, 9, is a number
    assert out["f"] == 0.0                            # DATE() returns a number, as in Excel
    assert out["g"].startswith("#VALUE! ERLANGC: traffic must be a number, not a date")   # only the date element


@pytest.mark.parametrize("code, is_date", [
    ("yyyy-mm-dd", True), ("h:mm", True), ("[h]:mm:ss", True), ("mm-dd-yy", True), ("d-mmm", True),
    ("General", False), ("0.00", False), ("0.00E+00", False), ('0 "days"', False), ("[Red]0.0", False),
    ("#,##0 ;[Red](#,##0)", False), ("[$-409]0.0", False), ("@", False), ("0%", False), (r"0\m", False),
])
def test_date_format_codes(code, is_date):
    from cryptoplan.workbook.engine.package import is_date_format
    assert is_date_format(code) is is_date


# ------------------------------------------------------------ workbook packages
def _rezip(src, dst, change=lambda name, data: data, extra=(), flags=0):
    """A copy of package ``src``: each member through ``change`` (None drops it), then ``extra``."""
    import zipfile
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = change(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info, data)
        for name, data in extra:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")          # zipfile warns of the duplicate name
                zout.writestr(name, data)
    if flags:     # set general-purpose flag bits (bit 0: encrypted) in every header
        raw = bytearray(Path(dst).read_bytes())
        for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            i = raw.find(sig)
            while i >= 0:
                raw[i + off] |= flags
                i = raw.find(sig, i + 4)
        Path(dst).write_bytes(bytes(raw))
    return dst


def _content_types_with_dtd(name, data):
    if name != "[Content_Types].xml":
        return data
    return (b'<?xml version="1.0"?><!DOCTYPE Types [<!ENTITY % ext SYSTEM "file:///etc/passwd"> %ext;]>'
            + data.split(b"?>", 1)[-1])


def _cell_like_names(name, data):
    if name != "xl/workbook.xml":
        return data
    return data.replace(b"</sheets>", b'</sheets><definedNames><definedName name="N1">N2+1</definedName>'
                                      b'<definedName name="N2">N1+1</definedName></definedNames>')


@pytest.mark.parametrize("kind, fragment", [
    ("encrypted", "ZIP member(s) encrypted"),
    ("no content types", "not an Open XML package (no [Content_Types].xml)"),
    ("dtd in content types", "unsafe XML in [Content_Types].xml refused"),
    ("duplicate member", "holds two members named xl/worksheets/sheet1.xml"),
    ("cell-like names", "defined name 'N1' is a cell reference"),
])
def test_unusable_packages_are_refused_with_nothing_written(tmp_path, kind, fragment):
    # 9363a92: encrypted -> RuntimeError traceback; the other four exit 0 (no content types: a file
    # openpyxl cannot open; the DTD copied into the output; the duplicate kept; N1 = N2+1 read as 0)
    base = _workbook(tmp_path, name="base.xlsx")
    bad = tmp_path / "bad.xlsx"
    if kind == "encrypted":
        _rezip(base, bad, flags=0x1)
    elif kind == "no content types":
        _rezip(base, bad, lambda n, d: None if n == "[Content_Types].xml" else d)
    elif kind == "dtd in content types":
        _rezip(base, bad, _content_types_with_dtd)
    elif kind == "duplicate member":
        import zipfile
        with zipfile.ZipFile(base) as z:
            sheet = z.read("xl/worksheets/sheet1.xml")
        _rezip(base, bad, extra=[("xl/worksheets/sheet1.xml", sheet)])
    else:
        _rezip(base, bad, _cell_like_names)
    out = tmp_path / "out.xlsx"
    res = run("recalc", bad, "-o", out)
    assert res.exit_code == 4 and fragment in res.output, res.output
    res = run("sweep", bad, "--vary", "B1=1,2", "-o", tmp_path / "s.csv")
    assert res.exit_code == 4 and fragment in res.output, res.output
    res = run("calibrate", "--rmf", bad, "--out", tmp_path / "p.json")
    assert res.exit_code == 2 and fragment in res.output, res.output
    assert not out.exists() and not (tmp_path / "s.csv").exists() and not (tmp_path / "p.json").exists()


def _with_shared_string(src, dst, text: bytes):
    """``src`` with cell A1 of its first sheet read from a sharedStrings part holding ``text``."""
    def change(name, data):
        if name == "xl/worksheets/sheet1.xml":
            import re
            return re.sub(rb'<c r="A1" t="inlineStr"><is><t>[^<]*</t></is></c>', b'<c r="A1" t="s"><v>0</v></c>', data)
        if name == "[Content_Types].xml":
            return data.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                                b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
        if name == "xl/_rels/workbook.xml.rels":
            return data.replace(b"</Relationships>", b'<Relationship Id="rIdSST" Type="http://schemas.openxmlformats'
                                b'.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
                                b"</Relationships>")
        return data
    sst = (b'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
           b'2006/main" count="1" uniqueCount="1"><si><t>' + text + b"</t></si></sst>")
    return _rezip(src, dst, change, extra=[("xl/sharedStrings.xml", sst)])


@pytest.mark.parametrize("text", [b"caf\xe9", b"a\x01b"], ids=["latin-1", "control character"])
def test_calibrate_reads_a_workbook_with_the_reader_recalc_uses(tmp_path, text):
    # 9363a92: calibrate --rmf -> xml.etree.ElementTree.ParseError traceback (recalc: exit 4)
    base = _workbook(tmp_path, name="base.xlsx")
    good = _with_shared_string(base, tmp_path / "good.xlsx", b"traffic")
    assert run("recalc", good, "--json").exit_code == 0           # the construction is a valid package
    bad = _with_shared_string(base, tmp_path / "bad.xlsx", text)
    res = run("recalc", bad)
    assert res.exit_code == 4 and "malformed XML in xl/sharedStrings.xml" in res.output
    res = run("calibrate", "--rmf", bad, "--out", tmp_path / "p.json")
    assert res.exit_code == 2 and "not an .xlsx workbook (malformed XML in xl/sharedStrings.xml" in res.output
    assert not (tmp_path / "p.json").exists()


# ------------------------------------------------------------ output paths, --set, --vary, site tables
def _rmf_csv(tmp_path) -> Path:
    from cryptoplan.model.calibration.calibrate import RMF_COLUMNS
    p = tmp_path / "rmf.csv"
    # an accelerator's ME row: a line that observes one card function (a CCA line needs a plan)
    p.write_text(",".join(RMF_COLUMNS) + "\nCEX8A,01,ME,2048,1000,0.046,4.6\n", encoding="utf-8")
    return p


def test_calibrate_output_paths_are_checked_before_any_work(tmp_path):
    # 9363a92: tracebacks (FileNotFoundError, OSError "File name too long", FileExistsError)
    rmf = _rmf_csv(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    cases = [(["--out", tmp_path / "no" / "x.json"], "--out: cannot write", "the folder"),
             (["--out", tmp_path / ("x" * 300 + ".json")], "--out: cannot write", "the file name is 305 bytes long")]
    for report in ("/dev/null", fifo, tmp_path / "dangling"):     # (a regular file: click refuses it)
        cases.append((["--out", tmp_path / "x.json", "--report", report], "--report:", "exists and is not a folder"))
    for args, first, second in cases:
        res = run("calibrate", "--rmf", rmf, *args)
        assert res.exit_code == 2 and first in res.output and second in res.output, (args, res.output)
        assert "published" not in res.output              # refused before calibrating
    assert not (tmp_path / "x.json").exists()
    res = run("calibrate", "--rmf", rmf, "--out", tmp_path / "x.json", "--report", tmp_path / "rep")
    assert res.exit_code == 0 and (tmp_path / "rep" / "report.txt").is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_template_and_fit_refuse_a_name_too_long(tmp_path):
    long = tmp_path / ("p" * 300 + ".xlsx")
    res = run("template", "-o", long)
    assert res.exit_code == 1 and "the file name is 305 bytes long; at most 233" in res.output
    res = run("fit", "--out", tmp_path / "none" / "p.json")
    assert res.exit_code == 2 and "--out: cannot write" in res.output and "fitting" not in res.output


@pytest.fixture
def full_folder(tmp_path):
    """A 64 KiB tmpfs with 40 KB taken: a full file system for a workbook (needs root; skipped else)."""
    with _tmpfs(tmp_path / "full", "size=64k") as mnt:
        (mnt / "filler").write_bytes(b"\0" * 40_000)
        yield mnt


@contextmanager
def _tmpfs(mnt, options):
    """A tmpfs mounted at ``mnt`` with ``options`` for the test's duration (skipped if not root)."""
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({options}) here (not root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.mark.subprocess
def test_full_file_system_is_one_clean_error(full_folder):
    # 9363a92: template -o printed the clean error, then "Exception ignored in: ZipFile.__del__ ...
    # OSError: [Errno 28]"; calibrate --report an OSError traceback
    r = subprocess.run([_cli(), "template", "-o", str(full_folder / "p.xlsx")], capture_output=True, text=True)
    assert r.returncode == 1 and "No space left on device" in r.stderr
    assert "Exception ignored" not in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in full_folder.iterdir()) == ["filler"]


def test_sweep_refuses_a_plot_name_and_a_range_before_computing(tmp_path):
    book = _workbook(tmp_path)
    res = run("sweep", book, "--vary", "B1=1,2", "-o", tmp_path / "s.csv", "--plot", tmp_path / "out.txt",
              "--y", "wait probability")
    assert res.exit_code == 2 and "a plot is an image; end the name in .png" in res.output
    assert not (tmp_path / "s.csv").exists()          # refused before the sweep was computed and written
    # 9363a92: OverflowError: cannot convert float infinity to integer
    for spec, shown in (("1:1e300:1e-300", "1:1e+300:1e-300"), ("-1e308:1e308:1", "-1e+308:1e+308:1")):
        res = run("sweep", book, "--vary", f"B1={spec}", "-o", tmp_path / "s.csv")
        assert res.exit_code == 2 and f"{shown} has more than 1e308 values, over the limit of 1,000,000" in res.output
    res = run("sweep", book, "--vary", "B1=1:1e7:1", "-o", tmp_path / "s.csv")
    assert res.exit_code == 2 and "has about 1e+07 values" in res.output


def test_carriage_return_in_a_set_value_is_stored_escaped(tmp_path):
    # 9363a92: --set Policy=$'\r=1+1' read back as '\n=1+1' (XML reads a raw CR as LF)
    import zipfile

    from cryptoplan.workbook.recalculation import load_engine
    book = _workbook(tmp_path, {"A1": "note", "B1": "x", "A2": "copy", "B2": "=B1"})
    out = tmp_path / "out.xlsx"
    assert run("recalc", book, "--set", "Results!B1=\r=1+1", "-o", out).exit_code == 0
    with zipfile.ZipFile(out) as z:
        assert b"_x000D_=1+1" in z.read("xl/worksheets/sheet1.xml")
    eng = load_engine(out)
    eng.evaluate()
    assert eng.value("Results!B1").element(0) == "\r=1+1" == eng.value("Results!B2").element(0)


def test_site_tables_with_a_huge_field_or_absurd_numbers_are_refused(tmp_path):
    from cryptoplan.model.calibration.calibrate import CPU_COLUMNS, RMF_COLUMNS
    big = tmp_path / "big.csv"
    big.write_text(",".join(RMF_COLUMNS) + '\nCEX8C,01,TOTAL,,"' + "9" * 200_000 + '",1,1\n', encoding="utf-8")
    res = run("calibrate", "--rmf", big, "--out", tmp_path / "x.json")       # 9363a92: _csv.Error traceback
    assert res.exit_code == 2 and "big.csv line 2: not an RMF crypto table (field larger than field limit" in res.output
    head = ",".join(CPU_COLUMNS) + "\n"
    for line, fragment in (("AMS,privacy,,RSA 2048,,2,total,1e-300,1e308", "APPL% 1e308 must be at most 25,600"),
                           ("AMS,privacy,,RSA 2048,,2,total,1e-300,50",
                            "is 5e+305 CPU us per transaction, over 1e+09")):
        cpu = tmp_path / "cpu.csv"
        cpu.write_text(head + line + "\n", encoding="utf-8")
        res = run("calibrate", "--cpu", cpu, "--out", tmp_path / "x.json")   # 9363a92: LinAlgError traceback
        assert res.exit_code == 2 and fragment in res.output, res.output
    assert not (tmp_path / "x.json").exists()
    # an RMF line beyond what a card can report: refused naming the line, not an absurd parameter file
    # (a TOTAL line's UTIL% is capped at 100 by RMF; by-function rows may sum past it)
    for cells, fragment in (("1,1e308,21.0", "EXEC TIME '1e308' must be a finite number in [0, 1000]"),
                            ("352.3,0.596,1e308", "UTIL% '1e308' must be a finite number in [0, 100]"),
                            ("1e300,0.596,21.0", "RATE '1e300' must be a finite number in [0, 1e+07]")):
        rmf = tmp_path / "rmf.csv"
        rmf.write_text(",".join(RMF_COLUMNS) + f"\nCEX8C,01,TOTAL,,{cells}\n", encoding="utf-8")
        res = run("calibrate", "--rmf", rmf, "--out", tmp_path / "x.json")
        assert res.exit_code == 2 and "rmf.csv line 2: " + fragment in res.output, res.output
    assert not (tmp_path / "x.json").exists()


# ------------------------------------------------------------ temporary files after SIGKILL
@pytest.mark.subprocess
def test_temporary_file_of_a_killed_writer_is_removed_by_the_next_write(tmp_path):
    # 9363a92: after SIGKILL, sweep and template left .target.*.tmp files, swept only after an hour
    dest = tmp_path / "o.xlsx"
    code = ("import os, signal, sys\n"
            "from cryptoplan.workbook.engine import atomic_target\n"
            "with atomic_target(sys.argv[1]) as tmp:\n"
            "    open(tmp, 'w').write('partial')\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n")
    r = subprocess.run([sys.executable, "-c", code, str(dest)], capture_output=True)
    assert r.returncode == -9
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".o.xlsx.") and left[0].endswith(".tmp")
    live = tmp_path / f".o.xlsx.{os.getpid()}.abcd1234.tmp"      # a live process's: kept
    live.write_text("being written")
    book = _workbook(tmp_path)
    assert run("recalc", book, "-o", dest).exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "o.xlsx", "w.xlsx"])


def test_text_formula_on_a_first_sheet_that_is_not_results_is_an_output(tmp_path):
    # 9363a92: A1 ="abc", B1 =1+1 on a sheet "Sheet": A1 became B1's row label and dropped out
    from cryptoplan.workbook import recalc
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["B1"], ws["A2"], ws["B2"] = '="abc"', "=1+1", "label", "=2+2"
    wb.save(tmp_path / "s.xlsx")
    assert recalc(tmp_path / "s.xlsx") == {"Sheet!A1": "abc", "Sheet!B1": 2.0, "label": 4.0}
    ws.title = "Results"                         # a Results sheet keeps its computed labels
    wb.save(tmp_path / "r.xlsx")
    assert recalc(tmp_path / "r.xlsx") == {"abc": 2.0, "label": 4.0}


def test_a_cycle_through_two_defined_names_is_an_error_naming_them(tmp_path):
    base = _workbook(tmp_path, {"A1": "n", "B1": "=Na", "A2": "self", "B2": "=Selfish"}, name="base.xlsx")

    def names(name, data):
        if name != "xl/workbook.xml":
            return data
        return data.replace(b"</sheets>", b'</sheets><definedNames><definedName name="Na">Nb+1</definedName>'
                                          b'<definedName name="Nb">Na+1</definedName>'
                                          b'<definedName name="Selfish">Selfish*2</definedName></definedNames>')
    book = _rezip(base, tmp_path / "names.xlsx", names)
    res = run("recalc", book, "--json")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert [o["value"] for o in doc["outputs"]] == ["#REF!", "#REF!"]
    messages = " | ".join(p["message"] for p in doc["problems"])
    assert "defined names Na -> Nb -> Na refer to each other in a circle" in messages
    assert "defined name Selfish refers to itself" in messages


@pytest.fixture
def read_only_folder(tmp_path):
    """A read-only tmpfs (needs root to mount; skipped else): root ignores a folder's mode bits,
    a read-only mount it cannot."""
    with _tmpfs(tmp_path / "ro", "size=64k,ro") as mnt:
        yield mnt


@pytest.mark.subprocess
def test_a_read_only_folder_is_one_clean_error(read_only_folder, tmp_path):
    # the campaign's read-only cases (calibrate --out/--report, template -o), and the plan's report
    plan_file = tmp_path / "p.toml"
    plan_file.write_text('[system]\nprocessors = 2\ncoprocessors = 1\naccelerators = 1\n[[workload]]\nname = "a"\n'
                         'kind = "ams"\nrate = 10\npolicy = "integrity"\nmessage_kb = 2\n', encoding="utf-8")
    for args in (["template", "-o", str(read_only_folder / "p.xlsx")],
                 ["plan", str(plan_file), "--report", str(read_only_folder / "rep")],
                 ["fit", "--out", str(read_only_folder / "params.json")]):
        r = subprocess.run([_cli(), *args], capture_output=True, text=True)
        assert r.returncode in (1, 2) and "Traceback" not in r.stderr, (args, r.stderr)
        assert "Read-only file system" in r.stderr or "read-only" in r.stderr.lower(), (args, r.stderr)
        assert list(read_only_folder.iterdir()) == []


def test_formulas_openpyxls_tokenizer_misread_are_errors_that_say_why(tmp_path):
    # with openpyxl's tokenizer "=1)" crashed the recalc (IndexError: pop from empty list) and
    # "=inf" / "=nan" were an infinite and a missing number (Python's float() read them)
    book = _workbook(tmp_path, {"A1": "closer", "B1": "=1)", "A2": "inf", "B2": "=inf", "A3": "nan",
                                "B3": "=nan*2", "A4": "line break", "B4": "=SUM(1,\n2)"})
    res = run("recalc", book, "--json")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert [o["value"] for o in doc["outputs"]] == ["#NAME?", "#NAME?", "#NAME?", 3.0]
    messages = " | ".join(p["message"] for p in doc["problems"])
    assert "Unmatched ')' at position 2" in messages
    assert "unknown name INF" in messages and "unknown name NAN" in messages


@pytest.mark.parametrize("layout", [
    b'<c r="Z1"><f>1+1</f><v></v></c><row r="1">',          # a cell straight in <sheetData>
    b'<row r="1"><x><c r="Z1"><f>1+1</f><v></v></c></x>',     # a cell in a wrapper in a row
    b'<row r="1"><row r="3"><c r="Z3"><v>1</v></c></row>',   # a row in a row
], ids=["in sheetData", "in a wrapper", "row in a row"])
def test_a_cell_outside_a_row_is_refused_not_lost(tmp_path, layout):
    # reading the sheet a row at a time once dropped such a cell silently (a second read found it)
    base = _workbook(tmp_path, name="base.xlsx")

    def stray(name, data):
        if name != "xl/worksheets/sheet1.xml":
            return data
        assert b'<row r="1">' in data
        return data.replace(b'<row r="1">', layout, 1)
    book = _rezip(base, tmp_path / "stray.xlsx", stray)
    assert b"Z" in __import__("zipfile").ZipFile(book).read("xl/worksheets/sheet1.xml")
    res = run("recalc", book, "-o", tmp_path / "out.xlsx")
    assert res.exit_code == 4, res.output
    assert "a cell (<c>) or row outside a <row> of <sheetData>" in res.output
    assert not (tmp_path / "out.xlsx").exists()
