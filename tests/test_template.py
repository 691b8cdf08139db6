"""The template planning workbook: structure, formulas, names, validation, charts, writing.

Every formula is tokenized with openpyxl's Excel tokenizer; function names
must be Excel built-ins used here (with their documented argument counts) or
catalog functions (required..total arguments), and every name a formula uses
must be a defined name pointing at a cell.  Expected defaults come from
model.defaults() (the measured configuration, read from data/figures.csv) and
TEMPLATE_DEFAULTS.
"""

import os
import re
import zipfile
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from numpy.testing import assert_allclose
from click.testing import CliRunner
from openpyxl.formula import Tokenizer
from openpyxl.worksheet.formula import ArrayFormula

from cryptoplan import model
from cryptoplan.addin.catalog import CATALOG
from cryptoplan.model import domains as D
from cryptoplan.model.figures import figure
from cryptoplan.model.params import CIPHERS, KEY_TYPES, MODES, POLICIES
from cryptoplan.workbook import template
from cryptoplan.workbook.template._builder import CATALOG_BY_NAME
from cryptoplan.cli import main

# Excel built-ins the template may use: name -> (min args, max args), from Excel's
# function reference.  _xlfn. marks functions newer than Excel 2007 in the file format.
BUILTINS = {"IF": (2, 3), "ISNUMBER": (1, 1), "ISBLANK": (1, 1), "AND": (1, 255), "OR": (1, 255), "LEFT": (1, 2),
            "NA": (0, 0), "IFERROR": (2, 2), "ERROR.TYPE": (1, 1), "MAX": (1, 255), "N": (1, 1),
            "_xlfn.POISSON.DIST": (3, 3), "TEXT": (2, 2), "ISLOGICAL": (1, 1), "ROUND": (2, 2), "ISERROR": (1, 1),
            "LEN": (1, 1), "ISNA": (1, 1), "SEARCH": (2, 3)}
UDFS = {f.name: (sum(a.required for a in f.args), len(f.args)) for f in CATALOG}
CELL = re.compile(r"^(?:(?:'[^']+'|[A-Za-z0-9_\-]+)!)?\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?$")
BRIEF_NAMES = ["TxRate", "MessageKB", "Policy", "KeyType", "KeySize", "KeyReuse", "Requesters",
               "Mode", "Cipher", "Coprocessors", "Accelerators", "MaxUtilization", "MaxWaitMs"]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return template.write_template(tmp_path_factory.mktemp("tpl") / "planner.xlsx")


@pytest.fixture(scope="module")
def wb(path):
    return openpyxl.load_workbook(path)


def formulas(wb):
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                v = c.value
                if isinstance(v, ArrayFormula):
                    yield ws.title, c.coordinate, v.text
                elif isinstance(v, str) and v.startswith("="):
                    yield ws.title, c.coordinate, v


def calls(formula: str):
    """(function name, argument count) for every call in a formula; names used."""
    out, names, stack = [], [], []
    for tok in Tokenizer(formula).items:
        if stack and tok.type != "WHITE-SPACE" and not (tok.type == "FUNC" and tok.subtype == "CLOSE"):
            stack[-1]["seen"] = True
        if tok.type == "FUNC" and tok.subtype == "OPEN":
            stack.append({"name": tok.value[:-1], "seps": 0, "seen": False, "func": True})
        elif tok.type == "PAREN" and tok.subtype == "OPEN":
            stack.append({"name": None, "seps": 0, "seen": False, "func": False})
        elif tok.type == "SEP" and tok.subtype == "ARG":
            stack[-1]["seps"] += 1
        elif tok.subtype == "CLOSE" and tok.type in ("FUNC", "PAREN"):
            frame = stack.pop()
            if frame["func"]:
                n = frame["seps"] + 1 if (frame["seen"] or frame["seps"]) else 0
                out.append((frame["name"], n))
        elif tok.type == "OPERAND" and tok.subtype == "RANGE" and not CELL.match(tok.value):
            names.append(tok.value)
    assert not stack, formula
    return out, names


def test_sheets(wb):
    assert wb.sheetnames == ["Guide", "Inputs", "Results", "Workloads", "Plan", "What-if", "Calibration", "Parameters",
                             "Site RMF", "Check", "xlwings.conf", "Tables", "Lists"]
    assert wb["Lists"].sheet_state == "hidden" and wb["Tables"].sheet_state == "hidden"
    assert wb.active.title == "Inputs"


def test_every_formula_parses_and_names_known_functions(wb):
    defined = set(wb.defined_names)
    seen = set()
    n = 0
    for sheet, coord, f in formulas(wb):
        n += 1
        found, names = calls(f)
        for name, argc in found:
            allowed = BUILTINS.get(name) or UDFS.get(name)
            assert allowed, f"{sheet}!{coord}: unknown function {name} in {f}"
            lo, hi = allowed
            assert lo <= argc <= hi, f"{sheet}!{coord}: {name} with {argc} args in {f}"
            seen.add(name)
        for name in names:
            assert name in defined, f"{sheet}!{coord}: undefined name {name} in {f}"
    assert n > 150
    # the workbook exercises the planning functions, not just one of them
    assert {"AMS_THROUGHPUT", "AMS_COST_US", "CARD_UTILIZATION", "CRYPTO_WAIT_MS",
            "ACCELERATORS_REQUIRED", "COPROCESSORS_REQUIRED", "TLS_COST_US", "TLS_ROUNDTRIP_US", "CHANNEL_THROUGHPUT", "ERLANGC",
            "MODEL_FIGURES", "MODEL_PARAMETERS", "_xlfn.POISSON.DIST"} <= seen


def test_argument_counter_is_honest():
    assert calls("=NA()")[0] == [("NA", 0)]
    assert calls("=IF(ISNUMBER(A1),(A1+1)*2,NA())")[0] == [("ISNUMBER", 1), ("NA", 0), ("IF", 3)]
    assert calls('=ERLANGC(TxRate,"x,y")') == ([("ERLANGC", 2)], ["TxRate"])


def test_named_inputs_point_at_styled_cells_with_defaults(wb):
    defaults = template.input_defaults()
    measured = model.defaults()
    for key in ("Coprocessors", "Accelerators", "KeyType", "KeySize", "MessageKB", "Requesters"):
        assert defaults[key] == measured[key]
    assert (defaults["Coprocessors"], defaults["Accelerators"], defaults["KeyType"],
            defaults["KeySize"], defaults["MessageKB"], defaults["Requesters"]) == (
        2, 1, "RSA", 2048, 2.0, 1)  # the measured configuration of the source documents
    for name in BRIEF_NAMES + ["Recipients"]:
        dn = wb.defined_names[name]
        (sheet, ref), = list(dn.destinations)
        assert sheet == "Inputs" and re.fullmatch(r"\$B\$\d+", ref), (name, ref)
        cell = wb[sheet][ref.replace("$", "")]
        assert cell.value == defaults[name], name
        assert cell.style == "Input", name
        assert cell.number_format, name
        assert wb[sheet].cell(cell.row, 5).value == name   # the name is printed beside it


def test_dropdowns_list_what_the_model_accepts(wb):
    ws = wb["Inputs"]
    expected = {"Policy": POLICIES, "KeyType": KEY_TYPES, "Mode": MODES, "Cipher": tuple(CIPHERS),
                "KeySize": (1024, 2048, 3072, 4096, 192, 224, 256, 384, 521),
                "Platform": ("z14", "z15", "z16")}
    lists = wb["Lists"]
    found = {}
    for dv in ws.data_validations.dataValidation:
        if dv.type != "list":
            continue
        m = re.fullmatch(r"=Lists!\$([A-Z])\$(\d+):\$([A-Z])\$(\d+)", dv.formula1)
        assert m, dv.formula1
        values = tuple(lists[f"{m[1]}{r}"].value for r in range(int(m[2]), int(m[4]) + 1))
        for rng in dv.sqref.ranges:
            name = ws.cell(rng.min_row, 5).value
            found[name] = values
    for name, vals in expected.items():
        assert found[name] == tuple(vals), name
    numeric = {ws.cell(r.min_row, 5).value: dv for dv in ws.data_validations.dataValidation
               if dv.type in ("whole", "decimal") for r in dv.sqref.ranges}
    assert numeric["Coprocessors"].type == "whole" and numeric["Coprocessors"].formula2 == "64"
    assert numeric["MaxUtilization"].formula1 == "0.01" and numeric["MaxUtilization"].formula2 == "0.99"
    assert numeric["SSLRKEYC"].type == "whole" and numeric["SSLRKEYC"].formula2 == "999999999"
    assert numeric["TxRate"].operator == "greaterThan" and numeric["TxRate"].formula1 == "0"
    assert numeric["Recipients"].formula2 == "10000"


def test_numeric_inputs_are_validated_as_their_domains(wb):
    """Each numeric input's data validation is its domain's Excel form, and its error names the range."""
    ws = wb["Inputs"]
    numeric = {ws.cell(r.min_row, 5).value: dv for dv in ws.data_validations.dataValidation
               if dv.type in ("whole", "decimal") for r in dv.sqref.ranges}
    with_domain = {i.name: i for i in template.INPUTS if i.domain is not None}
    assert numeric.keys() == with_domain.keys() and len(numeric) == 13
    for name, inp in with_domain.items():
        dv = numeric[name]
        assert (dv.type, dv.operator or "between", dv.formula1, dv.formula2) == template.excel_validation(inp.domain)
        assert inp.domain.text() in dv.error, name


@pytest.mark.parametrize("domain, validation", [
    (D.CARDS, ("whole", "between", "1", "64")),
    (D.TX_RATE, ("decimal", "greaterThanOrEqual", "0", None)),
    (D.PLANNED_TX_RATE, ("decimal", "greaterThan", "0", None)),
    (D.SSLTASKS, ("whole", "greaterThanOrEqual", "1", None)),
    (D.MESSAGE_KB, ("decimal", "between", "0", "102400")),
    (D.Domain("n", 0.0, 10.0, lo_open=True, integer=True), ("whole", "between", "1", "10")),
    (D.Domain("x", high=1.0, hi_open=True), ("decimal", "lessThan", "1", None)),
    (D.Domain("x", high=1.0), ("decimal", "lessThanOrEqual", "1", None)),
])
def test_excel_validation_of_a_domain(domain, validation):
    assert template.excel_validation(domain) == validation


def test_an_open_decimal_interval_must_be_narrowed_for_excel():
    with pytest.raises(ValueError, match="between includes both bounds"):
        template.excel_validation(D.MAX_UTILIZATION)
    cell = template.MAX_UTILIZATION_CELL
    assert template.excel_validation(cell) == ("decimal", "between", "0.01", "0.99")
    assert cell.within(D.MAX_UTILIZATION) and not D.MAX_UTILIZATION.within(cell)


# Where an input may hold more than one of its formulas accepts, on purpose: MessageKB serves
# the AMS and CPU results up to MQ's 100 MB; round trips are published up to 1 MB only, so
# those two results refuse a larger message (the input's note says so).
WIDER_THAN_THE_FORMULA = {("MessageKB", "TLS_ROUNDTRIP_US"), ("MessageKB", "CHANNEL_THROUGHPUT")}


PLAN_CELLS = {"PlanWorkloads", "PlanSystem", "PlanGrowth", "PlanMonths"}


def test_no_input_accepts_what_its_formulas_refuse():
    """The data validation of every input lies within the domain of each catalog argument the
    template passes it as: a value Excel lets in is one every formula reading it accepts."""
    _, b = template.build_workbook()
    inputs = {i.name: i for i in template.INPUTS}
    args = {(f.name, a.name): a for f in CATALOG for a in f.args}
    checked, wider = set(), set()
    for name, fn, arg_name in sorted(b.uses):
        arg = args[(fn, arg_name)]
        if arg.domain is None:
            continue
        if name in PLAN_CELLS:       # the Plan sheet's own inputs (growth, months): checked below
            continue
        inp = inputs[name]
        assert inp.domain is not None or name == "KeyReuse", (name, fn)   # KeyReuse: a number or "unlimited"
        if inp.domain is None:
            continue
        checked.add(name)
        if (name, fn) in WIDER_THAN_THE_FORMULA:
            assert not inp.domain.within(arg.domain), (name, fn)        # the exception is still needed
            wider.add((name, fn))
        else:
            assert inp.domain.within(arg.domain), (name, fn, inp.domain.text(), arg.domain.text())
    assert wider == WIDER_THAN_THE_FORMULA
    assert checked == {i.name for i in template.INPUTS if i.domain is not None}


def test_channel_results_follow_sslrkeyc_and_platform(path):
    # the batch engine evaluates the template's TLS formulas; expected values: model.tls_cost_us
    from cryptoplan.workbook.recalculation import recalc
    cipher = "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"
    inputs = {"Mode": "SSLCIPH", "Cipher": cipher, "MessageKB": 32, "SSLRKEYC": 1048576, "Platform": "z14"}
    out = recalc(path, inputs)
    assert out["CHIN (channel initiator)"] == pytest.approx(
        model.tls_cost_us("SSLCIPH", cipher, 32, "CHIN", sslrkeyc=1048576, platform="z14"), rel=1e-12)
    assert out["Channel CPU per transaction, total"] == pytest.approx(
        model.tls_cost_us("SSLCIPH", cipher, 32, sslrkeyc=1048576, platform="z14"), rel=1e-12)
    plain = recalc(path, {**inputs, "SSLRKEYC": 0, "Platform": "z15"})
    assert plain["CHIN (channel initiator)"] < out["CHIN (channel initiator)"]


def test_ams_cost_follows_platform(path):
    # the batch engine evaluates the template's AMS formulas; expected: model.ams_cost_us
    from cryptoplan.workbook.recalculation import recalc
    inputs = {"Policy": "privacy", "KeyType": "RSA", "KeySize": 2048, "MessageKB": 64, "Requesters": 4,
              "Platform": "z14"}
    z14 = recalc(path, inputs)
    z15 = recalc(path, {**inputs, "Platform": "z15"})
    ams_total = "AMS CPU per transaction at that rate, total"
    for out, plat in ((z14, "z14"), (z15, "z15")):
        assert out[ams_total] == pytest.approx(
            model.ams_cost_us("privacy", "RSA", 2048, 64, requesters=4, address_space="total",
                              platform=plat), rel=1e-12), plat
        assert out["AMSM (asymmetric operations)"] == pytest.approx(
            model.ams_cost_at_rate_us(1000.0, "privacy", "RSA", 2048, 64, address_space="AMSM",
                                      platform=plat), rel=1e-12), plat
    # the z15 report: medium Privacy messages cost 6.9% less on z15 (ref_z15_vs_z14_cost_medium_privacy),
    # per transaction at one rate: the AMSM part has no per-second share.  (The closed-loop total also
    # moves with the rate, which the faster processors raise.)
    assert z15["AMSM (asymmetric operations)"] / z14["AMSM (asymmetric operations)"] == pytest.approx(
        1 + figure("ref_z15_vs_z14_cost_medium_privacy").target() / 100, rel=1e-12)


def test_channel_starts_follow_platform(path):
    # the batch engine evaluates the template's start formulas; expected: model.channel_start_*
    from cryptoplan.workbook.recalculation import recalc
    cipher = "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"
    for plat in ("z15", "z16"):
        out = recalc(path, {"Mode": "SSLCIPH", "Cipher": cipher, "Platform": plat})
        assert out["Channel starts per second"] == pytest.approx(
            model.channel_start_rate("SSLCIPH", cipher, plat), rel=1e-12)
        assert out["CPU per channel start"] == pytest.approx(
            model.channel_start_cost_us("SSLCIPH", cipher, "total", plat), rel=1e-12)
    # z14 has no channel-start column: the cell explains instead of showing a number
    out = recalc(path, {"Mode": "SSLCIPH", "Cipher": cipher, "Platform": "z14"})
    assert "platform must be one of z15, z16" in str(out["Channel starts per second"])


def test_channel_throughput_follows_the_task_inputs(path):
    # the batch engine evaluates the template's formula; expected: model.channel_throughput
    from cryptoplan.workbook.recalculation import recalc
    chacha = "TLS_CHACHA20_POLY1305_SHA256"
    label = "Channel throughput (ChannelPairs, SSLTASKS, CHIDISPS)"
    inputs = {"Mode": "SSLCIPH", "Cipher": chacha, "MessageKB": 32, "ChannelPairs": 20, "SSLTASKS": 2,
              "CHIDISPS": 3, "Platform": "z14"}
    few = recalc(path, inputs)[label]
    assert few == pytest.approx(model.channel_throughput("SSLCIPH", chacha, 32, 20, 1, 2, 3, "z14"), rel=1e-12)
    many = recalc(path, {**inputs, "SSLTASKS": 40})[label]
    assert many > 2 * few


def _blank_as_empty(name: str) -> str:
    # an input that may be empty: "" reaches the add-in as "not given" in Excel and in Calc
    return f'IF(ISBLANK({name}),"",{name})'


def test_results_are_udf_formulas_over_named_inputs(wb):
    ws = wb["Results"]
    rows = {ws.cell(r, 1).value: ws.cell(r, 2) for r in range(5, ws.max_row + 1)}
    kr, pf, mw = (_blank_as_empty(n) for n in ("KeyReuse", "ParamsFile", "MaxWaitMs"))
    expect = {
        "Most the requesters reach": f"=AMS_THROUGHPUT(Policy,KeyType,KeySize,MessageKB,"
                                     f"{kr},Requesters,Coprocessors,Accelerators,Recipients,"
                                     f"Processors,Platform,,,,{pf})",
        "AMS CPU per transaction at TxRate, total": f"=AMS_COST_AT_RATE_US(TxRate,Policy,KeyType,KeySize,"
                                                    f'MessageKB,{kr},Recipients,"total",Platform,{pf})',
        "Processors required at TxRate": f"=PROCESSORS_REQUIRED(TxRate,Policy,KeyType,KeySize,MessageKB,"
                                         f"{kr},MaxUtilization,Recipients,Platform,{pf})",
        "Accelerator utilization (RMF summary)": f'=CARD_UTILIZATION(TxRate,Policy,KeyType,KeySize,MessageKB,'
                                   f'{kr},"accelerator",Accelerators,Recipients,,,,{pf})',
        "Coprocessors required": f"=COPROCESSORS_REQUIRED(TxRate,Policy,KeyType,KeySize,MessageKB,"
                                 f"{kr},MaxUtilization,{mw},Recipients,,,,{pf})",
    }
    for label, formula in expect.items():
        assert rows[label].value == formula
    for label in ("AMS CPU per transaction at that rate, total", "  AMSM (asymmetric operations)",
                  "  MSTR (queue manager administration)", "Coprocessor utilization (RMF summary)",
                  "Accelerator queueing delay per transaction",
                  "Coprocessor queueing delay per transaction", "Accelerators required",
                  "Bottleneck at TxRate (busiest card type)", "  CHIN (channel initiator)",
                  "  TCPIP (AT-TLS)", "Round trip per transaction", "Channel starts per second"):
        assert str(rows[label].value).startswith("="), label
    assert '"AMSM",Platform,' + pf + ')' in rows["  AMSM (asymmetric operations)"].value
    assert rows["  AMSM (asymmetric operations)"].value.startswith("=AMS_COST_AT_RATE_US(TxRate,")
    # the message column repeats error text in full, wrapped (the Function column E is not printed)
    r = rows["Most the requesters reach"].row
    assert ws.cell(r, 4).value == f'=IF(ISNUMBER(B{r}),"",B{r})'
    assert rows["Most the requesters reach"].number_format == template.F_TPS
    assert rows["Accelerator utilization (RMF summary)"].number_format == "0.0%"
    assert "ms" in rows["Accelerator queueing delay per transaction"].number_format
    assert "card" in rows["Accelerators required"].number_format


@pytest.mark.subprocess
def test_the_builder_computes_nothing():
    """Formulas only: building the workbook never calls the functions (xlwings, behind
    cryptoplan.addin.udfs, is not even imported); values come from the formula engine."""
    code = ("import sys; from cryptoplan.workbook.template import build_workbook; wb, b = build_workbook(); "
            "assert 'cryptoplan.addin.udfs' not in sys.modules and 'xlwings' not in sys.modules, sorted(sys.modules); "
            "assert not hasattr(b, 'values')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    assert r.returncode == 0, r.stderr


def test_snapshot_values_are_what_the_model_returns():
    # the engine's values (template.snapshot) against the model functions called directly
    wb = template.snapshot("Results")
    assert wb.sheetnames == ["Results"]
    ws = wb["Results"]
    d = template.input_defaults()
    label = {ws.cell(r, 1).value: ws.cell(r, 2).value for r in range(5, ws.max_row + 1)}
    assert_allclose(label["Most the requesters reach"], model.ams_throughput(
        d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"], None, d["Requesters"],
        d["Coprocessors"], d["Accelerators"], d["Recipients"], d["Processors"], d["Platform"]), rtol=1e-12)
    assert_allclose(label["AMS CPU per transaction at TxRate, total"], model.ams_cost_at_rate_us(
        d["TxRate"], d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"], None, d["Recipients"],
        "total", d["Platform"]), rtol=1e-12)
    assert_allclose(label["Coprocessor utilization (RMF summary)"], model.card_utilization(
        d["TxRate"], d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"], None,
        "coprocessor", d["Coprocessors"]), rtol=1e-12)
    assert label["Bottleneck at TxRate (busiest card type)"] == "coprocessors"
    assert not any(str(v).startswith("=") for v in label.values() if v is not None)


def test_whatif_tables_and_charts(wb):
    ws = wb["What-if"]
    # the limit: 1 / (the busier card type's utilization at 1 txn/s), utilization being linear in the rate
    assert ws["I5"].value.startswith("=CARD_UTILIZATION(1,Policy,") and '"accelerator"' in ws["I5"].value
    assert ws["J5"].value.startswith("=CARD_UTILIZATION(1,Policy,") and '"coprocessor"' in ws["J5"].value
    assert ws["C5"].value == "=IF(AND(ISNUMBER(I5),ISNUMBER(J5)),1/MAX(I5,J5),IF(ISNUMBER(I5),J5,I5))"
    assert ws["A7"].value == "=$C$5*B7" and ws["B7"].value == 0.1
    assert ws["C7"].value.startswith("=CARD_UTILIZATION(A7,")
    assert ws["I7"].value == "=IF(ISNUMBER(C7),C7,NA())"
    charts = ws._charts
    assert [type(c).__name__ for c in charts] == ["ScatterChart"] * 4     # number x axes
    titles = [c.title.tx.rich.p[0].r[0].t for c in charts]
    assert titles == ["Card utilization vs transaction rate", "Queueing delay per transaction",
                      "Cards required vs transaction rate", "AMS throughput vs RSA key size"]
    # y series read the NA()-guarded chart columns I-L, x the rate (key size) column A
    ys = [s.yVal.numRef.f for c in charts for s in c.series]
    xs = [s.xVal.numRef.f for c in charts for s in c.series]
    assert ys and all(re.search(r"!\$[I-L]\$\d+:\$[I-L]\$\d+$", r) for r in ys), ys
    assert all(re.search(r"!\$A\$\d+:\$A\$\d+$", r) for r in xs), xs
    assert all(s.smooth is False for c in charts for s in c.series)
    assert all(c.display_blanks == "gap" for c in charts)


def test_whatif_at_the_defaults_has_no_errors_and_reaches_the_limit(path):
    """The issue's #NUM! from 2,500 txn/s on: the installed-cards table now stops at 95% of the
    limit, and at the defaults no What-if cell is an error."""
    from cryptoplan.workbook.recalculation import load_engine
    eng = load_engine(path)
    eng.evaluate()
    ws = openpyxl.load_workbook(path)["What-if"]
    values = {c.coordinate: eng.value(f"'What-if'!{c.coordinate}").element(0)
              for row in ws.iter_rows() for c in row if isinstance(c.value, str) and c.value.startswith("=")}
    bad = {k: v for k, v in values.items() if not isinstance(v, (float, bool))}
    assert not bad, bad
    rates = [values[f"A{r}"] for r in range(7, 17)]
    assert all(b > a for a, b in zip(rates, rates[1:]))
    # at 95% of the limit the busier card type is 95% busy (linearity, RMF's definition)
    assert_allclose(max(values["C16"], values["D16"]), 0.95, rtol=1e-12)
    # growth rows: required cards never fall as the rate grows
    acc = [values[f"C{r}"] for r in range(20, 30)]
    assert acc == sorted(acc)


def test_whatif_chart_columns_are_gaps_for_errors(path):
    """An error result feeds #N/A (a chart gap in Excel and LibreOffice), never text or zero."""
    from cryptoplan.workbook.engine.values import ExcelError
    from cryptoplan.workbook.recalculation import load_engine
    eng = load_engine(path)
    eng.set_input("KeySize", 1000)        # not a key size: every AMS function fails
    eng.evaluate()
    c7 = eng.value("'What-if'!C7").element(0)
    assert isinstance(c7, (str, ExcelError))
    i7 = eng.value("'What-if'!I7").element(0)
    assert isinstance(i7, ExcelError) and str(i7) == "#N/A"


@pytest.mark.parametrize("inputs, verdict", [
    ({}, "installed cards meet the targets"),
    # the model refuses 65 cards (1..64): the verdict may not judge an installed count it refused
    ({"Coprocessors": 65}, "see the errors above"),
    ({"Accelerators": 0}, "see the errors above"),
    # one coprocessor cannot carry 3000 txn/s (its utilization is the #NUM! of overload)
    # ... and the verdict says how many to add (required at 3000 txn/s, from the model, minus 1)
    ({"Coprocessors": 1, "TxRate": 3000}, "overloaded: add {} coprocessor{}"),
])
def test_verdict_judges_only_installed_counts_the_model_accepts(path, inputs, verdict):
    """A user's finding: Coprocessors=65 errored in the utilization cells while the verdict said
    "installed cards meet the targets".  The expected verdicts follow from the model's domain
    (cards 1..64) and from ``coprocessors_required`` at 3000 txn/s (checked here, > 1)."""
    from cryptoplan.workbook.recalculation import load_engine
    eng = load_engine(path)
    for name, value in inputs.items():
        eng.set_input(name, value)
    eng.evaluate()
    ws = openpyxl.load_workbook(path)["Results"]
    row = {ws.cell(r, 1).value: r for r in range(5, ws.max_row + 1)}
    if "TxRate" in inputs:
        d = template.input_defaults()
        need = model.coprocessors_required(3000, d["Policy"], d["KeyType"], d["KeySize"], d["MessageKB"],
                                           None, d["MaxUtilization"], None, d["Recipients"])
        assert need > 1
        verdict = verdict.format(need - 1, "s" if need - 1 > 1 else "")
    assert eng.value(f"Results!B{row['Verdict for the installed cards']}").element(0) == verdict


def test_check_sheet_uses_native_poisson(wb):
    ws = wb["Check"]
    for r in range(5, 5 + len(template.CHECK_PAIRS)):
        assert ws[f"D{r}"].value == (f"=_xlfn.POISSON.DIST(B{r},A{r},FALSE)/"
                                     f"_xlfn.POISSON.DIST(B{r},A{r},TRUE)")
        assert ws[f"E{r}"].value == f"=D{r}/(1-(A{r}/B{r})*(1-D{r}))"
        assert ws[f"F{r}"].value == f"=ERLANGC(A{r},B{r})"
    assert len(template.CHECK_PAIRS) >= 5


def test_layout_for_a_manager(wb):
    for name in ("Guide", "Inputs", "Results", "What-if", "Calibration", "Check"):
        ws = wb[name]
        assert ws.freeze_panes, name
        assert ws.print_area, name
        assert ws.page_setup.orientation in ("landscape", "portrait")
        assert ws.column_dimensions["A"].width >= 16, name
        assert ws["A1"].font.b and ws["A1"].font.sz >= 14, name


def test_xlwings_conf_sheet(wb):
    ws = wb["xlwings.conf"]
    assert (ws["A1"].value, ws["B1"].value) == ("UDF MODULES", "cryptoplan.addin.udfs")
    assert ws["A2"].value is None    # xlwings reads column A down to the first blank


def _spill_of(wb, sheet, coord):
    """The spilling formula on the hidden Tables sheet that a shown table cell references."""
    ref = re.fullmatch(r'=(?:IFERROR\()?IF\(ISBLANK\((Tables!([A-Z]+)(\d+))\),"",IF\(ISLOGICAL\(\1\),N\(\1\),\1\)\)(?:,""\))?',
                       wb[sheet][coord].value)
    assert ref, f"{sheet}!{coord} is not a plain reference to the Tables sheet: {wb[sheet][coord].value}"
    return ref.group(2), int(ref.group(3))


def test_calibration_is_dynamic_array(path, wb):
    """The table functions spill on the hidden Tables sheet; the shown tables are plain
    references (LibreOffice recomputes array formulas on load: issue 33's #NAME?).  Calibration
    shows MODEL_FIGURES' columns in its own order (the accepted interval beside published)."""
    from cryptoplan.workbook.template.calibration import CALIBRATION_COLUMNS
    for sheet, coord, name in (("Calibration", "A22", "MODEL_FIGURES"), ("Parameters", "A4", "MODEL_PARAMETERS")):
        col, row = _spill_of(wb, sheet, coord)
        v = wb["Tables"][f"{col}{row}"].value
        # the ParamsFile input selects the parameter file the tables show (and validates it)
        assert isinstance(v, ArrayFormula) and v.text == f"={name}({_blank_as_empty('ParamsFile')})"
        rows = len(getattr(model, name.lower())()) + 1
        assert int(re.search(r"(\d+)$", v.ref).group(1)) == row + rows - 1   # sized to the table
        columns = CATALOG_BY_NAME[name].columns
        shown = CALIBRATION_COLUMNS if sheet == "Calibration" else columns
        assert sorted(shown) == sorted(columns)                          # every column, once
        top = int(coord[1:])
        for j, c in enumerate(shown, 1):        # the header and the last row of each shown column
            src = openpyxl.utils.get_column_letter(columns.index(c) + 1)
            for r in (0, rows - 1):
                assert _spill_of(wb, sheet, f"{openpyxl.utils.get_column_letter(j)}{top + r}") == (src, row + r)
        assert not any(isinstance(c.value, ArrayFormula) for r in wb[sheet].iter_rows() for c in r
                       if c.value is not None and "MODEL_" in str(getattr(c.value, "text", "")))
    with zipfile.ZipFile(path) as z:
        meta = z.read("xl/metadata.xml").decode()
        ct = z.read("[Content_Types].xml").decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
        sheets = {n: z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/sheet")}
    assert 'name="XLDAPR"' in meta and 'fDynamic="1"' in meta
    assert 'PartName="/xl/metadata.xml"' in ct
    assert 'relationships/sheetMetadata" Target="metadata.xml"' in rels
    cm_cells = [(n, m) for n, x in sheets.items() for m in re.findall(r'<c r="([A-Z]+\d+)" cm="1"', x)]
    # Plan's four (text, resources, timeline, workloads), Calibration, Parameters: on Tables
    assert len(cm_cells) == 6 and len({n for n, _ in cm_cells}) == 1


def test_calibration_sources_and_chart(wb):
    ws = wb["Calibration"]
    [ch] = ws._charts
    assert type(ch).__name__ == "ScatterChart"
    assert ch.x_axis.scaling.logBase == 10 and ch.y_axis.scaling.logBase == 10
    pts, diag = ch.series
    # the diagonal is the published column against itself: y = x wherever there is a point
    assert diag.xVal.numRef.f == diag.yVal.numRef.f == pts.xVal.numRef.f
    assert ws.print_title_rows == "$22:$22"
    # the figures table names sources as a reader knows them (data/sources.csv), not by file name
    sources = {r["source"] for r in model.model_figures()}
    assert "AMS key-size blog (Sharkey, 2024)" in sources and "MQ for z/OS on z14 pp.15-20" in sources
    assert not any(s.endswith(".txt") for s in sources), sources


def test_write_refuses_to_overwrite_and_is_atomic(tmp_path, monkeypatch):
    dest = tmp_path / "p.xlsx"
    dest.write_bytes(b"precious")
    with pytest.raises(FileExistsError):
        template.write_template(dest)
    assert dest.read_bytes() == b"precious"
    r = CliRunner().invoke(main, ["template", "-o", str(dest)])
    assert r.exit_code != 0 and "--force" in r.output
    assert dest.read_bytes() == b"precious"
    # a failure while building leaves neither the target nor a temp file behind
    monkeypatch.setattr(template.output, "_add_dynamic_array_metadata",
                        lambda *a: (_ for _ in ()).throw(RuntimeError("boom")))
    with pytest.raises(RuntimeError):
        template.write_template(dest, force=True)
    assert dest.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp_path)) == ["p.xlsx"]
    monkeypatch.undo()
    r = CliRunner().invoke(main, ["template", "-o", str(dest), "--force"])
    assert r.exit_code == 0, r.output
    assert zipfile.is_zipfile(dest)
    assert sorted(os.listdir(tmp_path)) == ["p.xlsx"]


def test_cli_writes_new_file(tmp_path):
    out = tmp_path / "sub" / "planner.xlsx"
    r = CliRunner().invoke(main, ["template", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert f"wrote {out}" in r.output
    assert openpyxl.load_workbook(out).sheetnames[0] == "Guide"
    assert Path(out).stat().st_size > 10_000


def test_workloads_prints_three_pages_wide_each_with_the_names(path):
    """The Workloads table's 24 columns printed on one page came out at about a third of full
    size; it prints on three landscape pages (the keys every kind takes with the forecast's ranges,
    the AMS keys, the other kinds' keys: two held it until the ranges came), each
    repeating name and kind.  tests/test_template_libreoffice.py counts the pages LibreOffice prints."""
    from cryptoplan.workbook.template.plan import WORKLOADS_PRINT_SCALE
    ws = openpyxl.load_workbook(path)["Workloads"]
    assert ws.page_setup.orientation == "landscape"
    assert not ws.sheet_properties.pageSetUpPr.fitToPage      # Excel ignores manual breaks under fit-to-page
    assert ws.page_setup.scale == WORKLOADS_PRINT_SCALE >= 40
    # after column M (peak_day): N (policy) starts page 2; after U (flow): V (mode) page 3
    assert [b.id for b in ws.col_breaks.brk] == [13, 21]
    head = next(r for r in range(1, 60) if ws.cell(r, 1).value == "name")
    assert (ws[f"M{head}"].value, ws[f"N{head}"].value) == ("peak_day", "policy")
    assert (ws[f"U{head}"].value, ws[f"V{head}"].value) == ("flow", "mode")
    assert str(ws.print_title_cols).replace("$", "") == "A:B"
    assert (ws[f"A{head}"].value, ws[f"B{head}"].value) == ("name", "kind")


def test_results_prints_as_one_landscape_page_a_manager_can_read(path):
    """Issue 33: Results fits one landscape page, restates the scenario, and the internal
    Function column is not printed (it sits right of the print area)."""
    ws = openpyxl.load_workbook(path)["Results"]
    assert ws.page_setup.orientation == "landscape"
    assert ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToHeight == 1
    assert ws.page_setup.fitToWidth == 1
    area = str(ws.print_area).replace("$", "")
    assert area.split(":")[1].startswith("D"), area
    assert [ws.cell(4, c).value for c in range(1, 6)] == ["Result", "Value", "What it means", "Message (if any)",
                                                          "Function"]
    # printed width in characters: the fit-to-page scale stays readable (>= ~70% on A4 landscape)
    assert sum(ws.column_dimensions[c].width for c in "ABCD") <= 190
    # the whole system leads (its scenario line on row 3); the single-workload calculator follows
    # under its own title, with its own scenario line
    assert ws["A3"].value == "Whole system" and "PlanGrowth" in ws["B3"].value and "Coprocessors" in ws["B3"].value
    rows = [ws.cell(r, 1).value for r in range(5, ws.max_row + 1)]
    title = next(i for i, v in enumerate(rows) if str(v).startswith("Single-workload calculator"))
    assert rows[0].startswith("The whole system") and all("all workloads" not in str(v) for v in rows[title:])
    assert rows[title + 1] == "Scenario" and "TxRate" in ws.cell(5 + title + 1, 2).value
    assert ws.cell(5 + title, 1).font.sz >= 14
    # what is always computable leads: the counts required come before the installed cards' utilization
    assert rows.index("Accelerators required") < rows.index("Accelerator utilization (RMF summary)")
    assert rows.index("Coprocessor utilization at the required count") < rows.index("Verdict for the installed cards")


def test_printed_sheets_keep_to_their_tables(path):
    """Issue 33, as printed through LibreOffice: What-if's chart-feeding columns I-L and their
    label stay out of the print area, the Check sheet's subtitle wraps within its printed
    columns, the xlwings.conf sheet prints as one page, and the Calibration chart ends above
    its table's header row (default row height 15 pt)."""
    wb = openpyxl.load_workbook(path)
    whatif = wb["What-if"]
    assert str(whatif.print_area).replace("$", "").split("!")[-1].split(":")[1].startswith("H")
    assert all(whatif.cell(r, c).value is None for r in range(3, 7) for c in range(7, 9)), "helper text in G-H"
    check = wb["Check"]
    assert "A2:G2" in {str(m) for m in check.merged_cells.ranges} and check["A2"].alignment.wrap_text
    conf = wb["xlwings.conf"]
    assert str(conf.print_area).replace("$", "").endswith("A1:D1") and conf["D1"].alignment.wrap_text
    cal = wb["Calibration"]
    chart = cal._charts[0]
    top = chart.anchor._from.row + 1                       # 1-based first row under the chart
    header = next(r for r in range(top, 60) if "Tables!" in str(cal.cell(r, 1).value or ""))
    room_cm = sum((cal.row_dimensions[r].height or 15) for r in range(top, header)) * 2.54 / 72
    assert chart.height < room_cm, (chart.height, room_cm)
    from cryptoplan.workbook.template.calibration import CALIBRATION_COLUMNS
    for name in ("relative_error", "within_tolerance", "accepted_low", "accepted_high"):  # not broken mid-word
        letter = openpyxl.utils.get_column_letter(CALIBRATION_COLUMNS.index(name) + 1)
        assert cal.column_dimensions[letter].width >= len(name) - 1


def test_plan_sheet_text_does_not_run_together(wb):
    """On the printed Plan page the Growth factor's note ran into its value ("1.00on every
    rate") and the workloads' queueing numbers stood at the right edge of the status-wide
    column, far from their header: the notes are indented, the status too; each workload's rate
    in words has its own row under its numbers, over the table's width; the charts stand right
    of the workloads' numbers, and long text stops at column O."""
    ws = wb["Plan"]
    for r in (4, 5):
        assert ws.cell(r, 3).alignment.horizontal == "left" and ws.cell(r, 3).alignment.indent >= 1
    from cryptoplan.workbook.template.plan import (_PLAN_LAST, MEANING_SHOWN, PLAN_ROWS, PLAN_TABLE_TOP as top,
                                                   RESOURCES_SHOWN, RESOURCES_TOP, WORKLOAD_COLUMNS, WORKLOADS_SHOWN,
                                                   workload_row)
    col, row = _spill_of(wb, "Plan", f"A{top}")                 # the table shown there
    assert "PLAN_WORKLOADS" in wb["Tables"][f"{col}{row}"].value.text
    last = openpyxl.utils.get_column_letter(len(WORKLOADS_SHOWN))
    merged = {str(m) for m in ws.merged_cells.ranges}
    meaning = openpyxl.utils.get_column_letter(WORKLOAD_COLUMNS.index(MEANING_SHOWN[0]) + 1)
    for i in range(PLAN_ROWS):
        r = workload_row(i)
        assert f"A{r + 1}:{last}{r + 1}" in merged                # the rate in words, under the numbers
        assert ws[f"A{r + 1}"].value == f'=IFERROR(IF(ISBLANK(Tables!{meaning}{row + 1 + i}),"",IF(ISLOGICAL(' \
            f'Tables!{meaning}{row + 1 + i}),N(Tables!{meaning}{row + 1 + i}),Tables!{meaning}{row + 1 + i})),"")'
    status = len(RESOURCES_SHOWN)
    assert all(ws.cell(r, status).alignment.indent >= 1 and ws.cell(r, status).alignment.wrap_text
               for r in range(RESOURCES_TOP + 1, RESOURCES_TOP + 4))
    assert all(ws.cell(r, 15).value == " " for r in range(1, _PLAN_LAST + 1))
    anchors = [ch.anchor._from for ch in ws._charts]
    assert all(a.col >= len(WORKLOADS_SHOWN) and a.row + 1 >= top for a in anchors)


def test_plan_prints_on_two_pages_at_eight_points_or_more(wb):
    """Issue 63: the Plan sheet printed on one page at about 5 pt.  It prints on two A4 landscape
    pages at a fixed scale (Excel ignores manual breaks under fit-to-page), broken above the
    workloads, and every font in the print area, cells and charts, prints at 8 pt or more.
    tests/test_template_libreoffice.py counts the pages LibreOffice prints and reads their words."""
    from openpyxl.utils.cell import range_boundaries

    from cryptoplan.workbook.template.plan import (_PLAN_LAST, PAGE_BREAK_AFTER, PLAN_MIN_FONT, PLAN_PRINT_SCALE,
                                                   PLAN_TABLE_TOP)
    ws = wb["Plan"]
    assert ws.page_setup.orientation == "landscape" and int(ws.page_setup.paperSize) == int(ws.PAPERSIZE_A4)
    assert not ws.sheet_properties.pageSetUpPr.fitToPage
    assert int(ws.page_setup.scale) == PLAN_PRINT_SCALE
    assert [b.id for b in ws.row_breaks.brk] == [PAGE_BREAK_AFTER] and PAGE_BREAK_AFTER < PLAN_TABLE_TOP - 1
    c0, r0, c1, r1 = range_boundaries(str(ws.print_area).split("!")[-1].replace("$", ""))
    assert (c0, r0, c1, r1) == (1, 1, 14, _PLAN_LAST)
    assert PLAN_PRINT_SCALE / 100 * PLAN_MIN_FONT >= 8.0
    sizes = {float(ws.cell(r, c).font.sz) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)}
    assert min(sizes) >= PLAN_MIN_FONT, sorted(sizes)
    # each cell names its face (a nameless font prints as a wider serif in LibreOffice)
    assert {ws.cell(r, c).font.name for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)} == {"Calibri"}
    assert len(ws._charts) == 2
    for ch in ws._charts:
        texts = [ch.title.tx.rich] + [ax.txPr for ax in (ch.x_axis, ch.y_axis)]
        texts += [ax.title.tx.rich for ax in (ch.x_axis, ch.y_axis) if ax.title is not None]
        texts += [ch.legend.txPr] if ch.legend is not None else []
        for rich in texts:
            for para in rich.p:
                # the paragraph's size, and any run's own (a run without one takes the paragraph's)
                props = [para.pPr.defRPr] + [run.rPr for run in (para.r or []) if run.rPr is not None]
                assert all(p.sz is not None and p.sz / 100 >= PLAN_MIN_FONT for p in props), props
    # the page-1 rows have a height (Excel's default row, 15 pt, where nothing else is set), so
    # LibreOffice (whose default row is lower) prints what Excel prints
    assert all(ws.row_dimensions[r].height for r in range(1, PAGE_BREAK_AFTER + 1))


def test_plan_headers_fit_their_columns(wb):
    """Issue 33's raw headers broken mid-word ("required_at_ho/rizon"): each word of a header of the
    Plan sheet's tables fits its column (they wrap between words)."""
    from cryptoplan.workbook.template.plan import PLAN_TABLE_TOP, RESOURCES_SHOWN, RESOURCES_TOP, WORKLOADS_SHOWN
    ws = wb["Plan"]
    for top, shown in ((RESOURCES_TOP, RESOURCES_SHOWN), (PLAN_TABLE_TOP, WORKLOADS_SHOWN)):
        for i, (_, label) in enumerate(shown, 1):
            letter = openpyxl.utils.get_column_letter(i)
            if i > 1:                                  # the anchor shows the function's own header
                assert ws[f"{letter}{top}"].value == label
            assert ws[f"{letter}{top}"].alignment.wrap_text
            assert all(ws.column_dimensions[letter].width >= len(w) + 1 for w in label.split()), (letter, label)
