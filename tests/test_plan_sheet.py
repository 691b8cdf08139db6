"""The template's Workloads and Plan sheets (workbook/plan_sheet.py, the PLAN_* functions).

Expected values: ``cryptoplan plan planner.xlsx`` (model.plan over the Workloads sheet, read by
workbook.plan_sheet) against the Plan sheet as ``cryptoplan recalc`` evaluates it through the
catalog functions PLAN_TEXT, PLAN_RESOURCES, PLAN_TIMELINE, PLAN_WORKLOADS and PLAN_VALUE; and
``cryptoplan sweep`` over the growth factor against model.plan with an array of growth factors.
LibreOffice with the Calc add-in evaluates the same cells in tests/test_calc_libreoffice.py
(every formula cell of the template against ``cryptoplan recalc``, 1e-9 relative), which closes
the chain; tests/test_template_libreoffice.py reads the Plan sheet's cached values as LibreOffice
shows them without the add-in.  tests/data/planner-before-profiles.xlsx is the template as it was
written before the Profiles table (commit 12672a2): its formulas, without the profiles argument,
still recalculate to model.plan of its tables.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner
from numpy.testing import assert_allclose

from cryptoplan.model.zos.plan import RESOURCE_COLUMNS, PlanError, plan
from cryptoplan.cli import main
from cryptoplan.workbook.plan_sheet import read_plan_workbook
from cryptoplan.workbook.template import write_template


@pytest.fixture
def planner(tmp_path, monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    monkeypatch.chdir(tmp_path)
    write_template(tmp_path / "planner.xlsx")
    return "planner.xlsx"


def _plan_sheet(path):
    """The Plan sheet's resources, workloads, sentences and timeline, and the stacked chart's series."""
    from cryptoplan.workbook.template.plan import (PLAN_ROWS, RESOURCES_SHOWN, RESOURCES_TOP, TEXT_ROWS, TIMELINE_ROWS,
                                                   WORKLOADS_SHOWN, _DATA, _TEXT_TOP, _TIMELINE_TOP, workload_row)
    ws = openpyxl.load_workbook(path, data_only=True)["Plan"]
    res = {ws.cell(r, 1).value: {k: ws.cell(r, c).value for c, (k, _) in enumerate(RESOURCES_SHOWN, 1)}
           for r in range(RESOURCES_TOP + 1, RESOURCES_TOP + 4)}
    wl = {}
    for r in map(workload_row, range(PLAN_ROWS)):
        if ws.cell(r, 1).value in (None, "", "#N/A"):
            break
        wl[ws.cell(r, 1).value] = {k: ws.cell(r, c).value for c, (k, _) in enumerate(WORKLOADS_SHOWN, 1)}
        wl[ws.cell(r, 1).value]["meaning"] = ws.cell(r + 1, 1).value      # the row under: the rate in words
    text = [ws.cell(r, 1).value for r in range(_TEXT_TOP + 1, _TEXT_TOP + TEXT_ROWS + 1)]
    timeline = [ws.cell(r, 1).value for r in range(_TIMELINE_TOP + 1, _TIMELINE_TOP + TIMELINE_ROWS + 1)]
    c0 = _DATA + 6                                 # the stacked chart's series: name, then a share per pool
    stack = [[ws.cell(r, c0 + j).value for j in range(4)] for r in range(5, 5 + 2 + PLAN_ROWS)]
    return res, wl, [t for t in text if t], [t for t in timeline if t], stack


# what a table shows where the JSON has null (an infinite or undefined number): the word that says why
_WORDS = {"overloaded", "never", "unbounded", "none installed", "none left"}


def _same(got, want, what):
    if want is None:
        assert got in _WORDS, (what, got)
    else:
        assert_allclose(got, want, rtol=1e-12, err_msg=what)


def _recalc_and_plan(planner, inputs, out="out.xlsx"):
    """The Plan sheet of ``cryptoplan recalc`` with ``inputs``, and ``cryptoplan plan``'s JSON and text
    of the same workbook at the same growth and months."""
    res = CliRunner().invoke(main, ["recalc", planner, "-o", out, *inputs])
    assert res.exit_code == 0, res.output
    growth = {"PlanGrowth": 1.0, "PlanMonths": 0.0}
    for i in range(0, len(inputs), 2):
        k, v = inputs[i + 1].split("=")
        growth[k] = float(v)
    args = [out, "--growth", str(growth["PlanGrowth"]), "--months", str(growth["PlanMonths"])]
    doc = json.loads(CliRunner().invoke(main, ["plan", *args, "--json"]).output)
    text = CliRunner().invoke(main, ["plan", *args]).output
    return _plan_sheet(out), doc, text


@pytest.mark.slow
@pytest.mark.parametrize("inputs", [[], ["--set", "Coprocessors=4", "--set", "Processors=8"],
                                    ["--set", "PlanMonths=18", "--set", "PlanGrowth=2.5"]])
def test_the_plan_sheet_is_what_cryptoplan_plan_says(planner, inputs):
    (sheet_res, sheet_wl, text, timeline, stack), doc, cli = _recalc_and_plan(planner, inputs)
    assert set(sheet_res) == set(doc["resources"])
    for pool, row in sheet_res.items():
        want = doc["resources"][pool]
        for key in ("installed", "utilization", "headroom", "months_to_target", "wait_ms"):
            _same(row[key], want[key], f"{pool} {key}")
        for key in ("required", "required_at_horizon"):      # a count, or "more than N"
            assert row[key] == want[key], (pool, key)
        assert row["peak_interval"] == want["peak"]["interval"]
        _same(row["average_utilization"], want["peak"]["average_utilization"], f"{pool} day average")
        assert row["status"] == want["status"]
        failed = want.get("one_card_failed")
        if failed is None:
            assert [row[k] for k in ("failover_utilization", "failover_required", "months_to_limit")] == ["n/a"] * 3
        else:
            _same(row["failover_utilization"], failed["utilization"], f"{pool} one card failed")
            assert row["failover_required"] == failed["required"]
            _same(row["months_to_limit"], failed["months_to_limit"], f"{pool} months to limit")
    assert list(sheet_wl) == list(doc["workloads"])
    for name, row in sheet_wl.items():
        want = doc["workloads"][name]
        for got, key in ((row["rate"], "rate"), (row["cpu_us"], "cpu_us"), (row["queueing_ms"], "queueing_ms"),
                         (row["peak_rate"], "peak_rate")):
            _same(got, want[key]["total"] if key == "cpu_us" else want[key], f"{name} {key}")
        assert row["meaning"] == want["meaning"]
        for pool in ("processors", "coprocessors", "accelerators"):
            _same(row[pool], doc["resources"][pool]["by_workload"][name], f"{name} {pool}")
    # the sentences: the scenario, verdicts and warnings as the command line prints them
    assert text[0].startswith("Scenario:") and text[1].startswith("Failover:")
    for line in text:
        line = line.removeprefix("Warning: ")
        assert line.split("  ")[0] in cli, line
    assert len([t for t in text if t.startswith("Warning: ")]) == len(doc["warnings"])
    # the timeline: the command line's purchases, in its order
    assert timeline == ([f"nothing to add within the {doc['system']['horizon_months']:g}-month horizon"]
                        if not doc["timeline"] else [line.strip() for line in cli.splitlines()
                                                     if line.strip().startswith("order ")])
    assert len(timeline) == max(1, len(doc["timeline"]))
    # the stacked chart: other LPARs, MQ MSTR and each workload, adding up to the table's utilization
    for j, pool in enumerate(("processors", "coprocessors", "accelerators"), 1):
        if doc["resources"][pool]["utilization"] is not None:
            assert_allclose(sum(row[j] for row in stack), doc["resources"][pool]["utilization"], rtol=1e-12)
        assert_allclose(stack[0][j] + stack[1][j], doc["resources"][pool]["other"], rtol=1e-12, atol=1e-300)
    assert [row[0] for row in stack[2:] if row[0]] == list(doc["workloads"])


@pytest.mark.slow
def test_the_scenario_of_the_workloads_sheet_reaches_the_plan_sheet(planner):
    """The profile, the storm's window, site failover, a shared card's other-LPAR share and the
    lead time typed into the Workloads sheet: the Plan sheet says what the command line says, and its
    stacked chart carries the other LPARs' share the table's utilization includes."""
    from cryptoplan.workbook.template.plan import SYSTEM_ROW
    wb = openpyxl.load_workbook(planner)
    ws = wb["Workloads"]
    for key, value in (("other_accelerator_util", 0.1), ("site_failover_factor", 1.5), ("lead_time_months", 9),
                       ("peak_day_factor", 1.2), ("horizon_months", 36)):
        ws[f"B{SYSTEM_ROW[key]}"] = value
    wb.save("edited.xlsx")
    (res, wl, text, timeline, stack), doc, cli = _recalc_and_plan("edited.xlsx", [], out="edited-out.xlsx")
    system, workloads = read_plan_workbook("edited.xlsx")
    want = plan(system, workloads)
    assert want.intervals == 96 and "96 intervals of 15 minutes" in text[0] and "busiest day x1.2" in text[0]
    assert "site failover x1.5 on payments" in text[1] and "lead time 9 months" in text[1]
    assert wl["payments"]["meaning"].endswith("(profile online)")
    assert "from 07:00 for 15 minutes" in wl["restart-storm"]["meaning"]
    assert_allclose(wl["payments"]["peak_rate"], float(want.workloads["payments"].peak_rate), rtol=1e-12)
    assert timeline == [p.text() for p in want.timeline] and timeline
    assert any(t.startswith("if one") or t.startswith("if the only") for t in text)
    acc = want.resources["accelerators"]
    assert_allclose(res["accelerators"]["utilization"], acc.utilization, rtol=1e-12)
    assert_allclose(stack[0][3], 0.1, rtol=1e-12)           # other LPARs, in the stacked chart too
    assert_allclose(sum(row[3] for row in stack), acc.utilization, rtol=1e-12)


def test_a_workbook_of_the_template_before_profiles_still_recalculates(tmp_path, monkeypatch):
    """tests/data/planner-before-profiles.xlsx: PLAN_* formulas without the profiles argument (and
    no PlanProfiles name) recalculate to model.plan of the workbook's tables, and cryptoplan plan
    reads it."""
    import shutil
    from pathlib import Path
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    monkeypatch.chdir(tmp_path)
    shutil.copy(Path(__file__).parent / "data" / "planner-before-profiles.xlsx", "old.xlsx")
    res = CliRunner().invoke(main, ["recalc", "old.xlsx", "-o", "old-out.xlsx"])
    assert res.exit_code == 0, res.output
    system, workloads = read_plan_workbook("old.xlsx")
    assert all(w.profile is None and w.window is None for w in workloads)
    want = plan(system, workloads)
    ws = openpyxl.load_workbook("old-out.xlsx", data_only=True)["Plan"]
    old_columns = RESOURCE_COLUMNS[:9]                      # its table is 9 columns wide at A8
    got = {ws.cell(r, 1).value: {k: ws.cell(r, c).value for c, k in enumerate(old_columns, 1)} for r in range(9, 12)}
    for pool, x in want.resources.items():
        assert_allclose([got[pool]["utilization"], got[pool]["months_to_target"]],
                        [x.utilization, x.months_to_target], rtol=1e-12)
        assert got[pool]["required"] == x.required and got[pool]["status"] == x.status
    names = [ws.cell(r, 1).value for r in range(15, 15 + len(workloads))]
    assert names == [w.name for w in workloads]
    out = CliRunner().invoke(main, ["plan", "old.xlsx"])
    assert out.exit_code == 0 and "one interval, the whole day" in out.output, out.output


def test_a_sweep_over_the_growth_factor_is_the_plans_capacity_curve(planner):
    res = CliRunner().invoke(main, ["sweep", planner, "--vary", "PlanGrowth=0.5:4:0.5", "-o", "curve.csv"])
    assert res.exit_code in (0, 1), res.output
    rows = list(csv.DictReader(open("curve.csv", encoding="utf-8")))
    system, workloads = read_plan_workbook(planner)
    g = np.array([float(r["PlanGrowth"]) for r in rows])
    want = plan(system, workloads, growth=g)
    for pool, label in (("coprocessors", "Coprocessor"), ("accelerators", "Accelerator")):
        got = [float(r[f"{label} utilization (all workloads)"]) for r in rows]
        assert_allclose(got, want.resources[pool].utilization, rtol=1e-12)
    assert [int(float(r["Accelerators required (all workloads)"])) for r in rows] == \
        want.resources["accelerators"].required.tolist()


def test_the_template_opens_with_numbers_not_errors(planner):
    """The first numbers a planner reads (Plan sheet, Results' whole-system section) are numbers."""
    res = CliRunner().invoke(main, ["recalc", planner, "--json"])
    doc = json.loads(res.output)
    plan_rows = [o for o in doc["outputs"] if "all workloads" in o["key"] or o["key"].startswith("Months until")]
    assert len(plan_rows) == 11 and not any(o["error"] for o in plan_rows), plan_rows


def test_a_workbook_without_the_plan_names_is_refused_by_name(tmp_path):
    wb = openpyxl.Workbook()
    wb.active["A1"] = 1
    wb.save(tmp_path / "x.xlsx")
    with pytest.raises(PlanError, match="PlanWorkloads"):
        read_plan_workbook(tmp_path / "x.xlsx")
    res = CliRunner().invoke(main, ["plan", str(tmp_path / "x.xlsx")])
    assert res.exit_code == 2 and "PlanWorkloads" in res.output and "Traceback" not in res.output


def test_a_bad_row_of_the_workloads_table_is_named(planner):
    wb = openpyxl.load_workbook(planner)
    from cryptoplan.workbook.template.plan import _PLAN_HEAD
    wb["Workloads"][f"C{_PLAN_HEAD + 2}"] = -5             # statements' rate
    wb.save("bad.xlsx")
    res = CliRunner().invoke(main, ["plan", "bad.xlsx"])
    assert res.exit_code == 2
    # the row as the sheet counts it (issue 43: it was the range's row 3)
    for words in ("PlanWorkloads", f"row {_PLAN_HEAD + 2}:", "'statements'", "rate", "-5"):
        assert words in res.output, res.output


def test_plan_value_reads_the_tables_once_for_a_growth_table(monkeypatch):
    """The Plan sheet's growth table asks PLAN_VALUE at a dozen months of the same tables: the
    tables are read (and each workload's model checked) once per parameter set, and a value
    read through the remembered tables is the one a fresh read gives."""
    from cryptoplan.model.params import load_params, using_values
    from cryptoplan.model.zos.plan import tables
    workloads = (("name", "kind", "rate", "growth_per_year", "policy", "message_kb"),
                 ("payments", "ams", 300.0, 0.25, "privacy", 2.0))
    system = (("processors", 8.0), ("coprocessors", 2.0), ("accelerators", 2.0))
    calls = []
    real = tables.reader.read_plan
    monkeypatch.setattr(tables.reader, "read_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    tables._CACHE.clear()
    tables._READ.clear()
    got = [tables.plan_value(workloads, system, "accelerators", "utilization", 1.0, float(m)) for m in range(16)]
    assert len(calls) == 1
    fresh = plan(*real(tables.reader.PlanTables(workloads, system)), 1.0, 12.0).resources["accelerators"].utilization
    assert got[12] == fresh and got[0] < got[12]
    # other parameter values read the tables again (a workload's model may refuse them there)
    # and plan again: a slower accelerator is busier, not the remembered plan's utilization
    doc = load_params()
    slower = {k: v["value"] for k, v in doc["parameters"].items()}
    slower["acc_crt_ms_2048"] *= 2.0
    with using_values(slower):
        busier = tables.plan_value(workloads, system, "accelerators", "utilization", 1.0, 12.0)
    assert len(calls) == 2 and busier > 1.5 * got[12]


def test_plan_value_under_another_figures_table_is_that_tables_plan(tmp_path):
    """A remembered plan is the figures table's it was made under: AT-TLS channel starts whose
    published TCPIP cost (s002_start_cost_tcpip_attls_tls12_us) is doubled in a copy of
    data/figures.csv cost the processors more there, and the packaged table's plan again after."""
    from cryptoplan.model.datafiles import data_path
    from cryptoplan.model.figures import using_figures
    from cryptoplan.model.zos.plan import tables
    workloads = (("name", "kind", "rate", "mode", "cipher"),
                 ("storm", "channel_starts", 50.0, "ATTLS", "TLS_RSA_WITH_AES_256_CBC_SHA"))
    system = (("processors", 4.0), ("coprocessors", 2.0), ("accelerators", 2.0))
    rows = list(csv.reader(data_path("figures.csv").open(encoding="utf-8", newline="")))
    col = rows[0].index("value")
    row = next(r for r in rows if r[0] == "s002_start_cost_tcpip_attls_tls12_us")
    row[col] = str(2 * float(row[col]))
    copy = tmp_path / "figures.csv"
    with copy.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    before = tables.plan_value(workloads, system, "processors", "utilization")
    with using_figures(copy):
        dearer = tables.plan_value(workloads, system, "processors", "utilization")
    after = tables.plan_value(workloads, system, "processors", "utilization")
    assert dearer > before and after == before


def test_a_sweeps_growth_array_is_planned_once_for_every_cell(monkeypatch):
    """A sweep hands each PLAN_VALUE cell the same growth array: the plan is made once for all
    of them (the array is part of the key by its bytes), and another array is another plan."""
    from cryptoplan.model.zos.plan import tables
    workloads = (("name", "kind", "rate", "growth_per_year", "policy", "message_kb"),
                 ("payments", "ams", 300.0, 0.25, "privacy", 2.0))
    system = (("processors", 8.0), ("coprocessors", 2.0), ("accelerators", 2.0))
    calls = []
    real = tables.plan
    monkeypatch.setattr(tables, "plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    tables._CACHE.clear()
    g = np.linspace(0.5, 3.0, 6)
    u = tables.plan_value(workloads, system, "accelerators", "utilization", g)
    k = tables.plan_value(workloads, system, "coprocessors", "required", g.copy())
    assert len(calls) == 1 and u.shape == k.shape == (6,)
    other = tables.plan_value(workloads, system, "accelerators", "utilization", g * 2.0)
    assert len(calls) == 2
    np.testing.assert_allclose(other, 2.0 * u, rtol=1e-12)        # utilization is linear in the rates


@pytest.mark.slow
def test_the_band_table_is_cryptoplan_plan_bands(planner):
    """PlanBandLevel empty (the default): the band table is blank, nothing drawn.  At 90%: each resource's
    row is the 5% and 95% quantiles ``cryptoplan plan --bands --json`` gives (plan_bands over the same
    1,000 draws, seed 0) of its peak utilization, months to target and count required at the horizon."""
    from cryptoplan.workbook.template.plan import BANDS_SHOWN, BANDS_TOP
    res = CliRunner().invoke(main, ["recalc", planner, "-o", "plain.xlsx"])
    assert res.exit_code == 0, res.output
    ws = openpyxl.load_workbook("plain.xlsx", data_only=True)["Plan"]
    assert ws[f"A{BANDS_TOP - 1}"].value.startswith("How sure: type a Band level")
    assert [ws.cell(r, c).value or "" for r in range(BANDS_TOP + 1, BANDS_TOP + 4) for c in range(1, 8)] == [""] * 21

    res = CliRunner().invoke(main, ["recalc", planner, "-o", "banded.xlsx", "--set", "PlanBandLevel=0.9"])
    assert res.exit_code == 0, res.output
    ws = openpyxl.load_workbook("banded.xlsx", data_only=True)["Plan"]
    assert ws[f"A{BANDS_TOP - 1}"].value.startswith("How sure: the 90% band")
    doc = json.loads(CliRunner().invoke(main, ["plan", "banded.xlsx", "--json", "--bands", "--level", "0.9",
                                               "--draws", "1000", "--seed", "0"]).output)
    pools = [ws.cell(r, 1).value for r in range(BANDS_TOP + 1, BANDS_TOP + 4)]
    assert pools == ["processors", "coprocessors", "accelerators"]
    for i, pool in enumerate(pools):
        for j, (quantity, _, _) in enumerate(BANDS_SHOWN):
            for k, end in enumerate(("p05", "p95")):
                got = ws.cell(BANDS_TOP + 1 + i, 2 + 2 * j + k).value
                want = doc["resources"][pool][quantity][end]
                if want is None:            # never reached: PLAN_BAND's own message, not a made-up word
                    assert isinstance(got, str) and got.startswith("#"), (pool, quantity, end, got)
                else:
                    assert_allclose(got, want, rtol=1e-12, err_msg=f"{pool} {quantity} {end}")


@pytest.mark.parametrize("level", ["1.5", "0", "-0.2", "ninety"])
def test_a_band_level_outside_zero_to_one_is_named_in_every_band_cell(planner, level):
    from cryptoplan.workbook.template.plan import BANDS_TOP
    res = CliRunner().invoke(main, ["recalc", planner, "-o", "bad.xlsx", "--set", f"PlanBandLevel={level}"])
    assert res.exit_code in (0, 1), res.output
    ws = openpyxl.load_workbook("bad.xlsx", data_only=True)["Plan"]
    said = "Band level (K4) must be a number in (0, 1)"
    assert said in ws[f"A{BANDS_TOP - 1}"].value and level.lstrip("-") in ws[f"A{BANDS_TOP - 1}"].value
    cells = [ws.cell(r, c).value for r in range(BANDS_TOP + 1, BANDS_TOP + 4) for c in range(2, 8)]
    assert cells == ["#VALUE!"] * 18, cells       # what fits a narrow cell: the heading says the rest


@pytest.mark.slow
def test_cryptoplan_plan_of_a_workbook_uses_its_params_file(planner):
    """The workbook's ParamsFile input (a site's calibration, relative to the workbook's folder)
    is what the Plan sheet plans with: ``cryptoplan plan`` of the workbook used to ignore it and
    plan with the packaged fit.  Expected: the model's plan under that file (rel 1e-12), and the
    Plan sheet's own numbers from ``cryptoplan recalc``; a coprocessor twice as slow changes the
    coprocessor utilization, so ignoring the file fails the test."""
    from pathlib import Path

    from cryptoplan.model.params import Parameters, params_path, using_parameters
    doc = json.loads(Path(params_path()).read_text(encoding="utf-8"))
    doc["parameters"]["cop_rsa_ms_2048"]["value"] *= 2.0
    Path("site.json").write_text(json.dumps(doc), encoding="utf-8")
    wb = openpyxl.load_workbook(planner)
    name = wb.defined_names["ParamsFile"]
    sheet, coord = next(iter(name.destinations))
    wb[sheet][coord.replace("$", "")] = "site.json"
    wb.save("site-planner.xlsx")
    system, workloads = read_plan_workbook("site-planner.xlsx")
    with using_parameters(Parameters.load("site.json")):
        want = plan(system, workloads)
    packaged = plan(system, workloads)
    out = CliRunner().invoke(main, ["plan", "site-planner.xlsx", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    got = doc["resources"]["coprocessors"]["utilization"]
    assert_allclose(got, want.resources["coprocessors"].utilization, rtol=1e-12)
    assert abs(got / packaged.resources["coprocessors"].utilization - 1) > 0.05
    assert doc["scenario"]["params"].endswith("site.json")
    rec = CliRunner().invoke(main, ["recalc", "site-planner.xlsx", "-o", "site-out.xlsx", "--json"])
    assert rec.exit_code in (0, 1), rec.output
    res = _plan_sheet("site-out.xlsx")[0]
    assert_allclose(res["coprocessors"]["utilization"], got, rtol=1e-12)


@pytest.mark.parametrize("value, fragment", [("missing.json", "missing.json"), (12, "must be the path")])
def test_a_workbook_params_file_that_cannot_be_used_is_named(planner, value, fragment):
    """A ParamsFile that names no file, or holds a number: the command names the input and the
    value (exit 2), never a plan with other parameters."""
    wb = openpyxl.load_workbook(planner)
    sheet, coord = next(iter(wb.defined_names["ParamsFile"].destinations))
    wb[sheet][coord.replace("$", "")] = value
    wb.save("bad-params.xlsx")
    out = CliRunner().invoke(main, ["plan", "bad-params.xlsx"])
    assert out.exit_code == 2 and "ParamsFile" in out.output and fragment in out.output, out.output


def test_the_growth_chart_draws_a_resource_above_100_percent(monkeypatch):
    """Issue 63, finding 2: the growth chart's y axis stopped at 100% (``<c:max val="1"/>``), so a
    bottleneck at 114% now and 213% at the horizon was not drawn and a line crossing 100% stopped.
    The axis has no fixed maximum (it scales to the data), 100% is a line of its own, and the
    horizon's line reaches the top of the data.  With the default workloads' rates tripled (the
    formula engine evaluates the sheet), the accelerators' series runs above 100% and is drawn."""
    from openpyxl.utils import get_column_letter
    from cryptoplan.workbook.template.output import build_workbook, evaluated_values
    from cryptoplan.workbook.template.plan import _DATA, _PLAN_MONTHS
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    wb, b = build_workbook()
    growth = next(c for c in wb["Plan"]._charts if "Growth" in str(c.title.tx.rich.p[0].r[0].t))
    assert growth.y_axis.scaling.max is None and growth.y_axis.scaling.min == 0
    ws = wb["Workloads"]
    head = next(c for row in ws.iter_rows(max_row=80) for c in row if c.value == "rate")
    r = head.row + 1
    while isinstance(ws.cell(r, head.column).value, (int, float)):
        ws.cell(r, head.column).value *= 3
        r += 1
    values = evaluated_values(wb, b)
    first, last = 5, 4 + _PLAN_MONTHS
    util = np.array([[values[("Plan", f"{get_column_letter(_DATA + j)}{i}")] for j in (1, 2, 3)]
                     for i in range(first, last + 1)], dtype=float)
    assert util.max() > 1.0                                  # above 100%: what the fixed axis cut off
    full = [wb["Plan"].cell(i, _DATA + 5).value for i in range(first, last + 1)]
    assert full == [1] * _PLAN_MONTHS and wb["Plan"].cell(4, _DATA + 5).value == "100% (full)"
    top = values[("Plan", f"{get_column_letter(_DATA + 1)}{last + 4}")]   # the horizon line's upper end
    assert_allclose(top, util.max(), rtol=1e-12)


@pytest.mark.slow
def test_the_orders_table_reaches_the_plan_sheets_timeline_and_cryptoplan_plan(planner):
    """Issue 63, finding 6: servers already ordered, typed into the Workloads sheet's Orders table
    (a month from the scenario, and a calendar month with the System block's start), are what the
    Plan sheet's timeline and ``cryptoplan plan`` of the workbook take in: the same lines as
    model.plan of the plan file stating the same orders (TOML's [[order]])."""
    from cryptoplan.model.zos.plan import plan_from_dict
    from cryptoplan.model.zos.plan.inputs import Order
    from cryptoplan.workbook.template.plan import _PROFILE_HEAD, ORDERS_COLUMN, SYSTEM_ROW
    wb = openpyxl.load_workbook(planner)
    ws = wb["Workloads"]
    assert [ws.cell(_PROFILE_HEAD, ORDERS_COLUMN + j).value for j in range(3)] == ["resource", "count", "arrives"]
    ws[f"B{SYSTEM_ROW['start']}"] = "2027-01"
    for i, row in enumerate((("accelerators", 1, 3), ("coprocessors", 2, "2027-06")), 1):
        for j, v in enumerate(row):
            ws.cell(_PROFILE_HEAD + i, ORDERS_COLUMN + j, v)
    wb.save("ordered.xlsx")
    system, workloads = read_plan_workbook("ordered.xlsx")
    assert system.orders == (Order("accelerators", 1, 3.0), Order("coprocessors", 2, 5.0))
    res = CliRunner().invoke(main, ["recalc", "ordered.xlsx", "-o", "ordered-out.xlsx"])
    assert res.exit_code == 0, res.output
    timeline = [t for t in _plan_sheet("ordered-out.xlsx")[3] if t]
    want = plan(system, workloads)
    assert timeline == [p.text(system.start) for p in want.timeline]
    assert [t.split(" (")[0] for t in timeline if t.startswith("on order")] == ["on order 1 accelerator",
                                                                                "on order 2 coprocessors"]
    cli = CliRunner().invoke(main, ["plan", "ordered.xlsx"]).output
    assert all(t in cli for t in timeline)
    # the plan file that states the same orders plans the same
    doc = {"system": {"processors": system.processors, "coprocessors": system.coprocessors,
                      "accelerators": system.accelerators, "start": "2027-01"},
           "order": [{"resource": "accelerators", "count": 1, "arrives": 3},
                     {"resource": "coprocessors", "count": 2, "arrives": "2027-06"}]}
    assert plan_from_dict({**doc, "workload": [{"name": "x", "kind": "ams", "rate": 1, "policy": "privacy",
                                                "message_kb": 2}]})[0].orders == system.orders


@pytest.mark.slow
def test_the_migrations_table_reaches_the_plan_sheet_and_agrees_with_toml_and_python(planner):
    """Issue 65: a quantum-safe migration typed into the Workloads sheet's Migrations table is the
    migration ``cryptoplan plan`` of the workbook, the Plan sheet's timeline and model.plan take in,
    and the one a plan file's [[migration]] and Python's Migration state."""
    from cryptoplan.model.zos.plan import Migration, plan_from_dict
    from cryptoplan.workbook.template.plan import MIGRATIONS_COLUMN, MIGRATIONS_HEAD
    wb = openpyxl.load_workbook(planner)
    ws = wb["Workloads"]
    assert [ws.cell(MIGRATIONS_HEAD, MIGRATIONS_COLUMN + j).value for j in range(5)] == [
        "workload", "to", "start", "months", "share"]
    system0, workloads0 = read_plan_workbook(planner)
    ams = next(w.name for w in workloads0 if w.kind == "ams")
    tls = next(w.name for w in workloads0 if w.kind == "handshakes")
    for j, v in enumerate((ams, "ML-DSA-65", 6, 12, None)):
        ws.cell(MIGRATIONS_HEAD + 1, MIGRATIONS_COLUMN + j, v)
    # a TLS workload's signature and hybrid key exchange, typed in another case
    for j, v in enumerate((tls, "ml-dsa-65+x25519mlkem768", 3, 12, 0.5)):
        ws.cell(MIGRATIONS_HEAD + 2, MIGRATIONS_COLUMN + j, v)
    wb.save("migrating.xlsx")
    system, workloads = read_plan_workbook("migrating.xlsx")
    assert system.migrations == (Migration(ams, "ML-DSA-65", 6.0, 12.0, 1.0),
                                 Migration(tls, "ML-DSA-65+X25519MLKEM768", 3.0, 12.0, 0.5))
    doc_system = {k: getattr(system, k) for k in ("processors", "coprocessors", "accelerators")}
    toml = plan_from_dict({"system": doc_system, "workload": [
        {"name": ams, "kind": "ams", "rate": 1, "policy": "privacy", "message_kb": 2},
        {"name": tls, "kind": "handshakes", "rate": 1, "cipher": "TLS_AES_256_GCM_SHA384"}],
        "migration": [{"workload": ams, "to": "ML-DSA-65", "start": 6, "months": 12},
                      {"workload": tls, "to": "X25519MLKEM768+ML-DSA-65", "start": 3, "months": 12, "share": 0.5}]})[0]
    assert toml.migrations == system.migrations
    res = CliRunner().invoke(main, ["recalc", "migrating.xlsx", "-o", "migrating-out.xlsx"])
    assert res.exit_code == 0, res.output
    timeline = [t for t in _plan_sheet("migrating-out.xlsx")[3] if t]
    want = plan(system, workloads)
    assert timeline == [p.text(system.start) for p in want.timeline]
    # the migration moves work onto the coprocessors by the horizon (36 months: past its month 18)
    before = plan(system0, workloads0).resources["coprocessors"].utilization_at_horizon
    assert want.resources["coprocessors"].utilization_at_horizon > before
    cli = CliRunner().invoke(main, ["plan", "migrating.xlsx"]).output
    assert f"{ams} (ML-DSA-65)" in cli and f"{tls} (ML-DSA-65+X25519MLKEM768)" in cli
    assert all(t in cli for t in timeline)
