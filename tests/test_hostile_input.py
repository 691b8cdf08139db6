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
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from cryptoplan.workbook.cli import main


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
                                                 r">= 0 \(got 1000000000000000000000000000\.\.\.0{28} \(401 characters\)"):
        Parameters.load(path)
    with pytest.raises(ParameterFileError, match=r"'cop_rsa_ms_2048' must have a 'value' .*got an integer of "
                                                 r"about 5,000 digits"):
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
