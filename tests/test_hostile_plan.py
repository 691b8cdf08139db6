"""Hostile input, round 4 (issue 43): the plan file, its report and standard output.

Each test reproduces one cause of the campaign exactly as the issue states it (the number is the
issue's) and checks the answer is a message naming the file, key or value and what is accepted,
with a documented exit code (2: usage, 4: unusable input or output), nothing half-written and no
temporary file left.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cryptoplan.cli import main
from cryptoplan.model import ams_message_cost_us
from cryptoplan.model.zos.plan import PlanError, Workload, read_plan

PLAN = """[system]
processors = 4
coprocessors = 2
accelerators = 2

[[workload]]
name = "{name}"
kind = "ams"
rate = {rate}
policy = "privacy"
message_kb = 2
{extra}
"""


def _plan(tmp_path, name="pay", rate="300", extra="", file="p.toml") -> Path:
    p = tmp_path / file
    p.write_text(PLAN.format(name=name, rate=rate, extra=extra), encoding="utf-8")
    return p


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _cli() -> str:
    return str(Path(sys.executable).parent / "cryptoplan")


def test_3_a_table_as_key_reuse_names_the_argument():
    with pytest.raises(ValueError, match=r"key_reuse must be a whole number .* \(got \{\}\)"):
        ams_message_cost_us("confidentiality", 2, key_reuse={})


@pytest.mark.parametrize("rate,words", [("[300, 600]", "rate must be a single number (got [300, 600])"),
                                        ("[" * 33 + "1" + "]" * 33, "rate must be a single number")])
def test_6_a_list_as_a_rate_is_refused_at_once(tmp_path, rate, words):
    res = run("plan", _plan(tmp_path, rate=rate))
    assert res.exit_code == 2 and words in res.output and "p.toml" in res.output


@pytest.mark.parametrize("name", ["$\\\\foo$", "_payments", "$x$"])
def test_7_names_are_text_in_the_charts_never_markup(tmp_path, name, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = run("plan", _plan(tmp_path, name=name), "--report", "rep")
    assert res.exit_code == 0, res.output
    import matplotlib.figure  # noqa: F401  (the legend's text is checked through the chart function)
    from cryptoplan.workbook.report.charts import plain_text
    assert "$" not in plain_text(name).replace("\\$", "")


@pytest.mark.subprocess
def test_8_missing_glyphs_are_one_note_not_warnings_with_paths(tmp_path):
    p = _plan(tmp_path, name="監査 🔐")
    out = subprocess.run([_cli(), "plan", str(p), "--report", str(tmp_path / "rep")], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "site-packages" not in out.stderr and "Warning" not in out.stderr
    assert "note: the chart font has no glyph for some characters of the names" in out.stderr


@pytest.mark.subprocess
def test_8_two_thousand_workloads_fold_into_one_legend_entry(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    body = "[system]\nprocessors = 64\ncoprocessors = 64\naccelerators = 64\n" + "".join(
        f'[[workload]]\nname = "w{i}"\nkind = "channel"\nrate = 1\nmode = "none"\nmessage_kb = 2\n' for i in range(2000))
    Path("big.toml").write_text(body, encoding="utf-8")
    out = subprocess.run([_cli(), "plan", "big.toml", "--report", "rep"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and "Warning" not in out.stderr, out.stderr


@pytest.mark.parametrize("extra,words", [
    ('[[workload]]\nname = "m"\nkind = "measured"\nrate = 1\ncard = "coprocessors"\nexec_ms = 1e308',
     r"exec_ms must be in \(0, 60000\] \(got 1e\+308\)"),
    ('[[workload]]\nname = "h"\nkind = "handshakes"\nrate = 1\ncipher = "TLS_AES_256_GCM_SHA384"\ncpu_us = 1e308',
     r"cpu_us must be in \[0, 1e\+06\]")])
def test_9_huge_times_are_refused_not_overflowed(tmp_path, extra, words):
    res = run("plan", _plan(tmp_path, extra=extra))
    assert res.exit_code == 2 and re.search(words, res.output), res.output


def test_9_an_overloaded_pool_never_reads_minus_one_percent():
    from cryptoplan.model.zos.plan import System, plan
    r = plan(System(processors=4, coprocessors=2, accelerators=2),
             [Workload("m", "measured", 1e12, args={"card": "coprocessors", "exec_ms": 60_000})])
    assert "-1%" not in r.resources["coprocessors"].status
    assert "more than 100 times as busy as it can be" in r.resources["coprocessors"].status


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.subprocess
def test_10_a_fifo_or_a_device_is_no_plan_file(tmp_path):
    fifo = tmp_path / "p.toml"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        out = subprocess.run([_cli(), "plan", str(path)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "not a regular file" in out.stderr, out.stderr


@pytest.mark.parametrize("extra,words", [
    ('[[workload]]\nname = "ch"\nkind = "channel"\nrate = 1\nmode = ""\nmessage_kb = 2', "mode is empty"),
    ('[[workload]]\nname = "st"\nkind = "channel_starts"\nrate = 1\nmode = ""\ncipher = '
     '"TLS_RSA_WITH_AES_256_CBC_SHA256"', "mode is empty"),
    ('[[workload]]\nname = "c"\nkind = "ams"\nrate = 1\npolicy = "confidentiality"\nmessage_kb = 2\nkey_reuse = true',
     "key_reuse must be a number (got True)"),
    ('queue_manager = {a = 1}', "queue_manager must be a single value"),
    ('queue_manager = [1]', "queue_manager must be a single value"),
    ('queue_manager = 2020-01-01', "queue_manager must be a single value"),
    ('queue_manager = -1', "queue_manager must be text (got -1)"),
    ('queue_manager = true', "queue_manager must be text (got True)"),
])
def test_11_12_13_empty_boolean_and_structured_values_are_refused(tmp_path, extra, words):
    res = run("plan", _plan(tmp_path, extra=extra))
    assert res.exit_code == 2 and words in res.output, res.output


@pytest.mark.parametrize("name,char", [("a\\u0000b", "U+0000"), ("a\\u001b[31mred", "U+001B"), ("a\\rb", "U+000D"),
                                       ("pay\\u200b", "U+200B")])
def test_14_control_and_invisible_characters_in_names_are_refused(tmp_path, name, char):
    res = run("plan", _plan(tmp_path, name=name))
    assert res.exit_code == 2 and char in res.output and "\x1b" not in res.output


def test_14_names_alike_after_normalization_are_one_name(tmp_path):
    extra = '[[workload]]\nname = "cafe\\u0301"\nkind = "ams"\nrate = 1\npolicy = "privacy"\nmessage_kb = 2'
    res = run("plan", _plan(tmp_path, name="caf\\u00e9", extra=extra))
    assert res.exit_code == 2 and "the name is used twice" in res.output


def test_15_a_folder_name_too_long_is_a_message(tmp_path):
    res = run("plan", _plan(tmp_path), "--report", tmp_path / ("x" * 300))
    assert res.exit_code == 2 and "File name too long" in res.output


def test_16_a_fifo_among_the_targets_refuses_before_anything_is_replaced(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = _plan(tmp_path)
    assert run("plan", p, "--report", "rep").exit_code == 0
    before = {n: Path("rep", n).read_bytes() for n in ("plan.html", "utilization.png")}
    Path("rep/growth.png").unlink()
    os.mkfifo("rep/growth.png")
    res = run("plan", p, "--report", "rep", "--force")
    assert res.exit_code == 2 and "rep/growth.png is a FIFO" in res.output
    assert {n: Path("rep", n).read_bytes() for n in before} == before
    assert not [q for q in Path("rep").iterdir() if q.name.endswith(".tmp")]


def test_16_a_failure_while_drawing_leaves_no_new_folder_and_no_temporary_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from cryptoplan.workbook.report import charts

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(charts, "growth_chart", full)
    res = run("plan", _plan(tmp_path), "--report", "rep")
    assert res.exit_code == 2 and "No space left on device" in res.output
    assert not Path("rep").exists()


@pytest.mark.subprocess
def test_17_a_full_standard_output_is_exit_4_and_the_report_is_written(tmp_path):
    p = _plan(tmp_path)
    with open("/dev/full", "w") as full:
        out = subprocess.run([_cli(), "plan", str(p), "--json", "--report", str(tmp_path / "rep")], stdout=full,
                             stderr=subprocess.PIPE, text=True, timeout=300)
    assert out.returncode == 4 and "cannot write the output: No space left on device" in out.stderr
    assert "Traceback" not in out.stderr and (tmp_path / "rep" / "plan.html").exists()


@pytest.mark.parametrize("args", [["plan", "{p}", "--json"], ["functions", "--json"],
                                  ["capacity", "--service-ms", "0.5", "--rates", "1000", "--json"]])
@pytest.mark.subprocess
def test_18_a_closed_standard_output_is_exit_4(tmp_path, args):
    p = _plan(tmp_path)
    out = subprocess.run([_cli(), *[a.format(p=p) for a in args]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True, timeout=300, pass_fds=(), close_fds=True,
                         preexec_fn=lambda: os.close(1))
    assert out.returncode == 4 and "standard output is closed" in out.stderr, out.stderr


def test_19_an_empty_report_folder_is_refused(tmp_path):
    res = run("plan", _plan(tmp_path), "--report", "")
    assert res.exit_code == 2 and "--report needs a folder name" in res.output


def test_a_byte_order_mark_is_read_as_the_csv_readers_do(tmp_path):
    p = _plan(tmp_path)
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    system, workloads = read_plan(p)
    assert workloads[0].name == "pay"


def test_growth_as_a_percent_is_refused_with_its_meaning(tmp_path):
    res = run("plan", _plan(tmp_path, extra="growth_per_year = 50"))
    assert res.exit_code == 2 and "growth_per_year is a fraction per year (0.5 = +50% a year" in res.output


def test_a_plan_error_is_a_value_error():
    assert issubclass(PlanError, ValueError)


# ----------------------------------------------------------------- the model API and the other commands
@pytest.mark.parametrize("call", ["mva", "mva_response", "mva_throughput"])
def test_1_an_array_of_think_times_is_named(call):
    import numpy as np
    from cryptoplan import model
    with pytest.raises(ValueError, match=r"think_time must be a single number >= 0 \(got an array of shape \(3,\)\)"):
        getattr(model, call)(7, 1.0, think_time=np.array([1., 2., 3.]))


def test_2_shapes_that_do_not_broadcast_are_named():
    import numpy as np
    from cryptoplan.model import poisson_pmf
    with pytest.raises(ValueError, match=r"k \(2, 2\), mean \(1, 3\)"):
        poisson_pmf(np.ones((2, 2)), np.ones((1, 3)))


def test_4_an_error_value_in_recalc_json_carries_its_message(tmp_path):
    import json

    import openpyxl
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Results"
    ws["A1"], ws["B1"] = "wait", "=ERLANGC(9,10,1)"
    wb.save(tmp_path / "e.xlsx")
    res = CliRunner().invoke(main, ["recalc", str(tmp_path / "e.xlsx"), "--json"])
    out = json.loads(res.output)["outputs"][0]
    assert out["value"] == "#VALUE!" and "ERLANGC() takes" in out["message"]


def test_21_22_a_date_cell_and_a_column_headed_twice_are_named():
    import datetime

    from cryptoplan.model.zos.plan import workloads_from_rows
    with pytest.raises(PlanError, match=r"row 2, column 3: the cell holds a date or time \(2020-01-01 00:00:00\)"):
        workloads_from_rows([["name", "kind", "rate"], ["a", "ams", datetime.datetime(2020, 1, 1)]], "W")
    with pytest.raises(PlanError, match="columns 3 and 4 are both headed 'rate'"):
        workloads_from_rows([["name", "kind", "rate", "rate"], ["a", "ams", 1, 2]], "W")


def test_24_fit_check_of_a_file_without_its_fit_block_is_a_difference(tmp_path, monkeypatch):
    import json
    doc = json.loads((Path(__file__).resolve().parents[1] / "data" / "params.json").read_text())
    doc.pop("fit")
    (tmp_path / "p.json").write_text(json.dumps(doc))
    res = CliRunner().invoke(main, ["fit", "--check"], env={"CRYPTOPLAN_PARAMS": str(tmp_path / "p.json")})
    assert res.exit_code == 1 and "has no fit block" in res.output and "Traceback" not in res.output


def test_25_a_chunk_larger_than_memory_names_chunk_size(tmp_path, monkeypatch):
    import openpyxl

    from cryptoplan.workbook import sweeps
    from cryptoplan.workbook.engine.core import Engine
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Inputs"
    ws["A1"], ws["B1"] = "x", 1
    wb.create_sheet("Results")
    wb["Results"]["A1"], wb["Results"]["B1"] = "y", "=Inputs!B1*2"
    from openpyxl.workbook.defined_name import DefinedName
    wb.defined_names["X"] = DefinedName("X", attr_text="Inputs!$B$1")
    wb.save(tmp_path / "w.xlsx")

    def no_memory(self, *a, **k):
        raise MemoryError
    monkeypatch.setattr(Engine, "evaluate", no_memory)
    with pytest.raises(sweeps.RecalcError, match=r"does not fit in memory; give a smaller --chunk-size"):
        list(sweeps.iter_sweep(tmp_path / "w.xlsx", {"X": [1, 2, 3]}))


# ----------------------------------------------------------------- retarget reads as recalc reads (cause 5)
def _package(tmp_path, members, name="w.xlsx"):
    import zipfile
    p = tmp_path / name
    with zipfile.ZipFile(p, "w") as z:
        for n, data in members:
            z.writestr(zipfile.ZipInfo(n), data)
    return p


_CT = b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'


@pytest.mark.parametrize("case,words", [
    ("no content types", "no [Content_Types].xml"),
    ("duplicate", "two members named xl/workbook.xml"),
    ("encrypted", "encrypted"),
])
def test_5_retarget_refuses_what_recalc_refuses(tmp_path, case, words):
    import warnings
    from cryptoplan.workbook.retarget import retarget
    if case == "no content types":
        src = _package(tmp_path, [("xl/workbook.xml", b"<workbook/>")])
    elif case == "duplicate":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # zipfile's own "Duplicate name" while building it
            src = _package(tmp_path, [("[Content_Types].xml", _CT), ("xl/workbook.xml", b"<a/>"),
                                      ("xl/workbook.xml", b"<b/>")])
    else:
        # the "encrypted" bit (general purpose flag bit 0) set in the local and central headers
        src = _package(tmp_path, [("[Content_Types].xml", _CT), ("xl/workbook.xml", b"<a/>")])
        data = bytearray(src.read_bytes())
        for sig, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
            i = data.find(sig)
            while i >= 0:
                data[i + at] |= 0x1
                i = data.find(sig, i + 4)
        src.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=re.escape(words)):
        retarget(src, tmp_path / "out.xlsx", "calc")
    assert not (tmp_path / "out.xlsx").exists()
    res = CliRunner().invoke(main, ["retarget", str(src), "--to", "calc", "-o", str(tmp_path / "o.xlsx")])
    assert res.exit_code == 4 and "Traceback" not in res.output and not (tmp_path / "o.xlsx").exists()


def test_5_retarget_caps_a_part_as_recalc_does(tmp_path, monkeypatch):
    from cryptoplan.workbook import retarget as rt
    from cryptoplan.workbook.engine import package
    src = Path(__file__).resolve().parent / "data" / "planner-before-profiles.xlsx"
    if not src.exists():
        from cryptoplan.workbook.template import build_template
        src = tmp_path / "planner.xlsx"
        build_template(src)
    monkeypatch.setattr(package, "MAX_PART_BYTES", 1000)
    with pytest.raises(ValueError, match="over the 1,000-byte limit|bytes uncompressed, over the 1,000-byte"):
        rt.retarget(src, tmp_path / "out.xlsx", "calc")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.subprocess
def test_10_a_fifo_is_no_workbook_for_retarget(tmp_path):
    fifo = tmp_path / "w.xlsx"
    os.mkfifo(fifo)
    out = subprocess.run([_cli(), "retarget", str(fifo), "--to", "calc", "-o", str(tmp_path / "o.xlsx")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode in (2, 4) and "not a regular file" in out.stderr, out.stderr


# ----------------------------------------------------------------- plan book.xlsx (causes 20, 21, 23, the rows)
@pytest.fixture(scope="module")
def book(tmp_path_factory):
    folder = tmp_path_factory.mktemp("book")
    assert CliRunner().invoke(main, ["template", "-o", str(folder / "planner.xlsx")]).exit_code == 0
    return folder / "planner.xlsx"


def _edited(book, tmp_path, edit):
    import openpyxl
    wb = openpyxl.load_workbook(book)
    edit(wb)
    out = tmp_path / "edited.xlsx"
    wb.save(out)
    return out


def _rate_cell(wb):
    ws = wb["Workloads"]
    top = int(wb.defined_names["PlanWorkloads"].attr_text.split("$")[2].split(":")[0])
    col = next(c.column for c in ws[top] if c.value == "rate")
    return ws, top, col


def test_20_a_date_typed_as_a_rate_is_named_with_its_sheet_row(book, tmp_path):
    import datetime

    def edit(wb):
        ws, top, col = _rate_cell(wb)
        ws.cell(top + 1, col).value = datetime.datetime(2020, 1, 1)
        ws.cell(top + 1, col).number_format = "yyyy-mm-dd"
    res = run("plan", _edited(book, tmp_path, edit))
    import openpyxl
    _, top, col = _rate_cell(openpyxl.load_workbook(book))
    assert res.exit_code == 2, res.output
    assert f"PlanWorkloads (sheet Workloads), row {top + 1}, column {col}: the cell holds a date or time " \
           "(2020-01-01 00:00:00)" in res.output
    assert "datetime.datetime" not in res.output and res.output.count("edited.xlsx") == 1


def test_rows_are_counted_as_the_sheet_counts_them(book, tmp_path):
    def edit(wb):
        ws, top, col = _rate_cell(wb)
        ws.cell(top + 2, col).value = "abc"
    res = run("plan", _edited(book, tmp_path, edit))
    import openpyxl
    _, top, _ = _rate_cell(openpyxl.load_workbook(book))
    assert res.exit_code == 2 and f"row {top + 2}:" in res.output and "got 'abc'" in res.output


def test_23_a_range_to_the_end_of_the_sheet_reads_as_far_as_the_sheet_has_cells(book, tmp_path):
    # 17 billion cells were walked one by one (MemoryError, or minutes of CPU); now the range ends
    # where the sheet's cells do, and the rows below the table (the Profiles block's heading) are
    # named like any other row
    from openpyxl.workbook.defined_name import DefinedName

    def edit(wb):
        top = int(wb.defined_names["PlanWorkloads"].attr_text.split("$")[2].split(":")[0])
        wb.defined_names["PlanWorkloads"] = DefinedName("PlanWorkloads",
                                                        attr_text=f"Workloads!$A${top}:$XFD$1048576")
    res = run("plan", _edited(book, tmp_path, edit))
    assert res.exit_code == 2 and "PlanWorkloads (sheet Workloads), row " in res.output, res.output
