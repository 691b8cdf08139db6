"""The template's Workloads and Plan sheets (workbook/plan_sheet.py, the PLAN_* functions).

Expected values: ``cryptoplan plan planner.xlsx`` (model.plan over the Workloads sheet, read by
workbook.plan_sheet) against the Plan sheet as ``cryptoplan recalc`` evaluates it through the
catalog functions PLAN_RESOURCES, PLAN_WORKLOADS and PLAN_VALUE; and ``cryptoplan sweep`` over
the growth factor against model.plan with an array of growth factors.  LibreOffice with the Calc
add-in evaluates the same cells in tests/test_calc_libreoffice.py (every formula cell of the
template against ``cryptoplan recalc``, 1e-9 relative), which closes the chain.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import openpyxl
import pytest
from click.testing import CliRunner
from numpy.testing import assert_allclose

from cryptoplan.model.zos.plan import RESOURCE_COLUMNS, WORKLOAD_COLUMNS, PlanError, plan
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
    ws = openpyxl.load_workbook(path, data_only=True)["Plan"]
    res = {ws.cell(r, 1).value: {k: ws.cell(r, c).value for c, k in enumerate(RESOURCE_COLUMNS, 1)}
           for r in range(9, 12)}
    wl = {}
    for r in range(15, 35):
        if ws.cell(r, 1).value in (None, "#N/A"):
            break
        wl[ws.cell(r, 1).value] = {k: ws.cell(r, c).value for c, k in enumerate(WORKLOAD_COLUMNS, 1)}
    return res, wl


@pytest.mark.parametrize("inputs", [[], ["--set", "Coprocessors=4", "--set", "Processors=8"],
                                    ["--set", "PlanMonths=18", "--set", "PlanGrowth=2.5"]])
def test_the_plan_sheet_is_what_cryptoplan_plan_says(planner, inputs):
    res = CliRunner().invoke(main, ["recalc", planner, "-o", "out.xlsx", *inputs])
    assert res.exit_code == 0, res.output
    sheet_res, sheet_wl = _plan_sheet("out.xlsx")
    growth = {"PlanGrowth": 1.0, "PlanMonths": 0.0}
    for i in range(0, len(inputs), 2):
        k, v = inputs[i + 1].split("=")
        growth[k] = float(v)
    # the same workbook with the same inputs (out.xlsx keeps them), planned by the command line
    args = ["plan", "out.xlsx" if inputs else planner, "--json", "--growth", str(growth["PlanGrowth"]),
            "--months", str(growth["PlanMonths"])]
    doc = json.loads(CliRunner().invoke(main, args).output)
    assert set(sheet_res) == set(doc["resources"])
    for pool, row in sheet_res.items():
        want = doc["resources"][pool]
        for key in ("installed", "utilization", "required", "required_at_horizon", "headroom", "months_to_target",
                    "wait_ms"):
            assert_allclose(row[key], want[key], rtol=1e-12, err_msg=f"{pool} {key}")
        assert row["status"] == want["status"]
    assert list(sheet_wl) == list(doc["workloads"])
    for name, row in sheet_wl.items():
        want = doc["workloads"][name]
        assert_allclose([row["rate"], row["cpu_us"], row["queueing_ms"]],
                        [want["rate"], want["cpu_us"]["total"], want["queueing_ms"]], rtol=1e-12)
        for pool in ("processors", "coprocessors", "accelerators"):
            assert_allclose(row[pool], doc["resources"][pool]["by_workload"][name], rtol=1e-12)


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
    assert len(plan_rows) == 9 and not any(o["error"] for o in plan_rows), plan_rows


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
    wb["Workloads"]["C18"] = -5             # statements' rate
    wb.save("bad.xlsx")
    res = CliRunner().invoke(main, ["plan", "bad.xlsx"])
    assert res.exit_code == 2
    for words in ("PlanWorkloads", "row 3", "'statements'", "rate", "-5"):
        assert words in res.output, res.output
