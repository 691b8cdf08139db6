"""The LibreOffice Calc add-in (addin/calc.py): generated files, values and errors as Calc takes them.

Expected values: the xlwings path (:func:`addin.convert.call`), which tests/test_udfs.py
checks against the model; Calc's error numbers from LibreOffice's formula/errorcodes.hxx
(``#NUM!`` 503, ``#VALUE!`` 519, ``#N/A`` 32767), confirmed in real LibreOffice by
tests/test_calc_libreoffice.py.
"""

from __future__ import annotations

import math
import struct

import pytest
from defusedxml import ElementTree
from hypothesis import given
from hypothesis import strategies as st

from cryptoplan.addin import calc, convert
from cryptoplan.addin.catalog import CATALOG, get

_OOR = "{http://openoffice.org/2001/registry}"


def _payload(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0] & 0xFFFFFFFF


def test_error_value_is_a_nan_carrying_calcs_error_number():
    for literal, code in (("#NUM!", 503), ("#VALUE!", 519), ("#N/A", 32767), ("#DIV/0!", 532)):
        x = calc.error_value(literal)
        assert math.isnan(x) and _payload(x) == code
    assert _payload(calc.error_value("#SPILL!")) == 519      # no Calc equivalent: #VALUE!


def test_evaluate_scalar_array_and_per_element_errors():
    erlangc = get("ERLANGC")
    assert calc.evaluate(erlangc, (9.0, 10.0)) == convert.call(erlangc, (9.0, 10.0))
    out = calc.evaluate(erlangc, (((8.0, 11.0, "x"),), 10.0))     # a 1x3 row, as Calc passes a range
    assert isinstance(out, tuple) and len(out) == 1 and len(out[0]) == 3
    assert out[0][0] == pytest.approx(convert.call(erlangc, (8.0, 10.0)), rel=1e-15)
    assert _payload(out[0][1]) == 503 and _payload(out[0][2]) == 519
    assert _payload(calc.evaluate(erlangc, (None, 10.0))) == 519       # required argument omitted


def test_evaluate_tables_have_no_booleans_or_blanks():
    """Calc takes no booleans in an array (TRUE is 1) and None would be an empty cell."""
    rows = calc.evaluate(get("MODEL_FIGURES"), (None,))
    assert rows[0] == tuple(get("MODEL_FIGURES").columns)
    cells = [x for row in rows for x in row]
    assert all(isinstance(x, (float, str)) for x in cells)
    assert not any(isinstance(x, float) and math.isnan(x) for x in cells)


def test_explain_gives_the_text_excel_shows():
    assert calc.explain("ERLANGC", (11.0, 10.0)) == convert.call(get("ERLANGC"), (11.0, 10.0))
    assert calc.explain("erlangc", (9.0, 10.0)) == pytest.approx(0.6687315241076979, rel=1e-12)
    assert calc.explain(calc.PREFIX + "ERLANGC", (9.0, 10.0)) == calc.explain("ERLANGC", (9.0, 10.0))
    assert calc.explain("ERLANGC", ()).startswith("#VALUE! ERLANGC: traffic is required")
    assert calc.explain("NOPE", ()).startswith("#VALUE! EXPLAIN: function must be the name")
    assert calc.explain(3.0, ()).startswith("#VALUE! EXPLAIN:")
    assert "at most 2 arguments" in calc.explain("ERLANGC", (1.0, 2.0, 3.0))
    assert calc.explain("MODEL_FIGURES", ()).startswith("MODEL_FIGURES returns a ")


def test_idl_declares_every_catalog_function_with_its_arguments():
    idl = calc.idl_source()
    for spec in CATALOG:
        args = ", ".join(f"[in] any {calc._idl_arg(a.name)}" for a in spec.args)
        assert f"sequence< sequence< any > > {spec.name}({args});" in idl
    assert "any EXPLAIN([in] any function, [in] sequence<any> arguments);" in idl


def test_xcu_names_help_and_compatibility_names():
    root = ElementTree.fromstring(calc.xcu_source().encode())
    service = root.find("node").find("node")
    assert service.get(_OOR + "name") == calc.SERVICE
    functions = {n.get(_OOR + "name"): n for n in service.find("node")}
    assert set(functions) == {f.name for f in CATALOG} | {calc.EXPLAIN}
    for spec in CATALOG:
        node = functions[spec.name]
        props = {p.get(_OOR + "name"): p.find("value").text for p in node.findall("prop")}
        assert props["DisplayName"] == props["CompatibilityName"] == spec.name
        assert props["Description"] == spec.help
        params = node.find("node")
        assert [p.get(_OOR + "name") for p in params] == [calc._idl_arg(a.name) for a in spec.args]


def test_component_source_compiles_and_records_the_installation():
    src = calc.component_source(paths=["/x/site-packages"], python=(3, 11))
    compile(src, "cryptoplan_calc.py", "exec")
    assert "PATHS = ['/x/site-packages']" in src and "PYTHON = (3, 11)" in src
    assert repr(calc.SERVICE) in src


@pytest.mark.parametrize("excel, calc_text", [
    ("=ERLANGC(9,10)", "=ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(9,10)"),
    ('=IF(A1>0,erlangc(A1,B1),"ERLANGC(x)")', '=IF(A1>0,ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(A1,B1),"ERLANGC(x)")'),
    ("=SUM(A1:A3)+MMC_WAIT(1,2,3)", "=SUM(A1:A3)+ORG.CRYPTOPLAN.FUNCTIONS.MMC_WAIT(1,2,3)"),
    ("=MY_ERLANGC(1,2)+ERLANGC2(1)", "=MY_ERLANGC(1,2)+ERLANGC2(1)"),
    ('="a""ERLANGC(""b"&ERLANGC(1,2)', '="a""ERLANGC(""b"&ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(1,2)'),
])
def test_retarget_formula(excel, calc_text):
    assert calc.retarget_formula(excel, "calc") == calc_text
    assert calc.retarget_formula(calc_text, "excel") == calc.retarget_formula(excel, "excel")
    with pytest.raises(ValueError, match="to must be 'calc' or 'excel'"):
        calc.retarget_formula(excel, "numbers")


@given(st.lists(st.sampled_from(["ERLANGC(", "erlangc(", "SUM(", '"ERLANGC("', "A1", ",", ")", "1",
                                 "ORG.CRYPTOPLAN.FUNCTIONS.MMC_WAIT(", "X.ERLANGC("]), max_size=12))
def test_retarget_round_trip_is_stable(parts):
    """Excel -> Calc -> Excel is the Excel spelling; applying a direction twice changes nothing."""
    f = "=" + "".join(parts)
    to_calc = calc.retarget_formula(f, "calc")
    assert calc.retarget_formula(to_calc, "calc") == to_calc
    assert calc.retarget_formula(to_calc, "excel") == calc.retarget_formula(f, "excel")


def test_package_needs_unoidl_write_and_names_the_package(monkeypatch):
    monkeypatch.setattr(calc, "_SDK_BIN", calc.Path("/nonexistent"))
    monkeypatch.setattr(calc.shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="apt-get install libreoffice-dev"):
        calc.unoidl_write()


def test_package_refuses_a_libreoffice_python_of_another_version(monkeypatch):
    monkeypatch.setattr(calc, "_office_python", lambda: (2, 7))
    with pytest.raises(RuntimeError, match=r"LibreOffice's Python is 2\.7 but this cryptoplan runs on"):
        calc.package()
