"""Every native function of the formula engine against a case table with sourced values.

The table is tests/data/engine_cases.csv: one formula per row, as typed in Excel, with the
value it must give and where that value comes from (see tests/engine_cases_libreoffice.py,
which builds the workbook and obtained the LibreOffice values):

* ``source = "LibreOffice 7.4.7.2"``: the value LibreOffice 7.4 computes when it recalculates
  the workbook;
* ``source = "Excel documentation: <page>"``: where LibreOffice differs from Excel (or lacks
  the function: XLOOKUP, XMATCH), the value Microsoft's documentation gives, quoted in
  ``excel_doc``; ``libreoffice`` then records what LibreOffice gives instead.

Three tiers:

* fast: cryptoplan's engine evaluates the same workbook; every case equals ``expected``
  (numbers within ``rtol``, 1e-12 unless the row says otherwise: LibreOffice writes 15
  significant digits; text, booleans and error codes exactly, types included);
* slow: LibreOffice, run live, still gives the recorded value of every row (``expected`` for
  its own rows, ``libreoffice`` for the others), so the table cannot drift from its source.
  Under ``CI=true`` a missing LibreOffice is a failure, not a skip (conftest.require);
* coverage: every name in :data:`SUPPORTED` has at least three cases, one of them not a
  plain number-in-number-out case and one giving an error value (unless the function has
  none, :data:`NO_ERROR_CASE`); every function named in the table is supported.

The shared data sheet the formulas reference is
:data:`engine_cases_libreoffice.DATA`.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from cryptoplan.workbook.engine import SUPPORTED, Engine, Package, native_functions
from cryptoplan.workbook.engine.values import ExcelError

import engine_cases_libreoffice as cases_lo

ROWS = cases_lo.load_cases()
IDS = [r["id"] for r in ROWS]
DEFAULT_RTOL = 1e-12

#: Functions with no error case in the table, and why none exists.
NO_ERROR_CASE = {
    "COLUMN": "returns a column number for any reference",
    "COLUMNS": "counts the columns of any reference or array",
    "ROW": "returns a row number for any reference",
    "ROWS": "counts the rows of any reference or array",
    "COUNT": "skips error values instead of propagating them",
    "COUNTA": "counts error values instead of propagating them",
    "COUNTBLANK": "counts, never propagates an error",
    "COUNTIF": "counts: error values in the range are matched by the criterion, not propagated",
    "FALSE": "a constant",
    "PI": "a constant",
    "NOW": "no arguments",
    "TODAY": "no arguments",
    "ISBLANK": "IS functions classify any value, errors included",
    "ISERR": "IS functions classify any value, errors included",
    "ISERROR": "IS functions classify any value, errors included",
    "ISLOGICAL": "IS functions classify any value, errors included",
    "ISNA": "IS functions classify any value, errors included",
    "ISNONTEXT": "IS functions classify any value, errors included",
    "ISNUMBER": "IS functions classify any value, errors included",
    "ISREF": "IS functions classify any value, errors included",
    "ISTEXT": "IS functions classify any value, errors included",
    "TYPE": "classifies any value (an error is type 16)",
    "XMATCH": "Microsoft's XMATCH page documents no error value, and LibreOffice 7.4 lacks XMATCH",
}


def _typed(value) -> tuple[str, object]:
    """An engine value as ``(type, value)`` in the table's terms."""
    if isinstance(value, ExcelError):
        return "error", str(value)
    if isinstance(value, bool):
        return "boolean", value
    if isinstance(value, str):
        return "text", value
    if value is None:
        return "empty", None
    return "number", float(value)


def _expected(row):
    return row["type"], cases_lo.parse_value(row["type"], row["expected"])


def _rtol(row) -> float:
    return float(row["rtol"]) if row["rtol"] else DEFAULT_RTOL


# ------------------------------------------------------------------ the engine
@pytest.fixture(scope="module")
def engine_values(tmp_path_factory):
    path = cases_lo.build_workbook(ROWS, tmp_path_factory.mktemp("engine-cases") / "engine_cases.xlsx")
    eng = Engine(Package(path), native_functions())
    cells = cases_lo.case_cells(ROWS)
    return {r["id"]: _typed(eng.value(f"{cells[r['id']][0]}!{cells[r['id']][1]}").element(0)) for r in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_engine_gives_the_expected_value(row, engine_values):
    got = engine_values[row["id"]]
    want = _expected(row)
    assert cases_lo.same(*got, *want, rtol=_rtol(row)), (
        f"{row['formula']}: engine {got}, expected {want} ({row['source']})")


# ---------------------------------------------------------------- LibreOffice
@pytest.fixture(scope="module")
def libreoffice_values(lo_profile, tmp_path_factory):
    return cases_lo.libreoffice_values(ROWS, tmp_path_factory.mktemp("engine-cases-lo"), profile_dir=lo_profile)


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_libreoffice_still_gives_the_recorded_value(row, libreoffice_values):
    typ, value = libreoffice_values[row["id"]]
    got = cases_lo.value_text(typ, value)
    if cases_lo.from_libreoffice(row):
        assert (typ, got) == (row["type"], row["expected"]), (
            f"{row['formula']}: LibreOffice now gives {typ} {got!r}, the table records "
            f"{row['type']} {row['expected']!r}; re-run tests/engine_cases_libreoffice.py")
    else:
        assert got == row["libreoffice"], (
            f"{row['formula']}: LibreOffice now gives {got!r}, the table records {row['libreoffice']!r}")


# ------------------------------------------------------------------- coverage
def _plain_number_case(row) -> bool:
    """A number in, number out case: no reference, text, logical, error or array in it."""
    f = row["formula"]
    return (row["type"] == "number" and not row["array"] and not row["cell"]
            and not re.search(r'[!":{#]|TRUE|FALSE', f))


def test_every_supported_function_has_three_cases_one_not_plain_numbers():
    by_fn = {}
    for r in ROWS:
        by_fn.setdefault(r["function"], []).append(r)
    few = {n: len(by_fn.get(n, [])) for n in SUPPORTED if len(by_fn.get(n, [])) < 3}
    assert not few, f"functions with fewer than 3 cases: {few}"
    plain = [n for n in SUPPORTED if all(_plain_number_case(r) for r in by_fn[n])]
    assert not plain, f"functions tested only with numbers in, numbers out: {plain}"


def test_every_function_with_an_error_value_has_an_error_case():
    with_error = {r["function"] for r in ROWS if r["type"] == "error"}
    missing = sorted(set(SUPPORTED) - with_error - set(NO_ERROR_CASE))
    assert not missing, f"functions with no error case: {missing}"
    assert not (set(NO_ERROR_CASE) & with_error), "NO_ERROR_CASE lists a function that has one"


def test_the_table_names_only_supported_functions_and_calls_them():
    unknown = sorted({r["function"] for r in ROWS} - set(SUPPORTED))
    assert not unknown, f"not in SUPPORTED: {unknown}"
    for r in ROWS:
        called = cases_lo.calls(r["formula"])
        assert r["function"] in called, f"{r['id']}: {r['formula']} does not call {r['function']}"
        assert set(called) <= set(SUPPORTED), f"{r['id']}: calls {set(called) - set(SUPPORTED)}"


def test_the_table_is_well_formed():
    dup = [i for i, c in Counter(IDS).items() if c > 1]
    assert not dup, f"duplicate ids: {dup}"
    cases_lo.case_cells(ROWS)          # no two cases share a cell
    for r in ROWS:
        assert r["formula"].startswith("="), r["id"]
        assert r["type"] in cases_lo.TYPES, r["id"]
        cases_lo.parse_value(r["type"], r["expected"])
        if r["type"] == "error":
            assert r["expected"] in ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A"), r["id"]
        if r["rtol"]:
            assert r["type"] == "number" and 0 < float(r["rtol"]) < 1e-6, r["id"]
        if cases_lo.from_libreoffice(r):
            assert r["source"] == cases_lo.LIBREOFFICE, r["id"]
            assert not r["excel_doc"] and not r["libreoffice"], r["id"]
        else:
            assert r["source"].startswith("Excel documentation: "), r["id"]
            assert r["excel_doc"], f"{r['id']}: no quotation of the documentation"
            assert r["libreoffice"] and r["libreoffice"] != r["expected"], (
                f"{r['id']}: a row sourced from Excel's documentation must record LibreOffice's differing value")
        if r["type"] == "number":
            assert math.isfinite(float(r["expected"])), r["id"]
