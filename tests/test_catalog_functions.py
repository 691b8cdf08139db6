"""The add-in's functions in the engine (``cryptoplan.workbook.catalog_functions``): grouping.

The grouping helpers are checked against their definitions, with hypothesis generating the
columns (the distinct rows, ``model._numeric.unique_rows``, in tests/test_numeric.py); what the catalog functions compute is checked against
the add-in's cell-by-cell path in tests/test_recalc.py and tests/test_sweep.py.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_array_equal

from cryptoplan.addin.errors import ErrorText
from cryptoplan.workbook._grouped import Out
from cryptoplan.workbook._grouped import group_ids as _group_ids

@settings(max_examples=200, deadline=None)
@given(parts=st.lists(hnp.arrays(np.int64, 30, elements=st.integers(0, 5)), min_size=0, max_size=4))
def test_group_ids_are_equal_exactly_for_equal_code_tuples(parts):
    ids = _group_ids(parts, 30)
    tuples = list(zip(*parts)) if parts else [()] * 30
    for i in range(30):
        for j in range(30):
            assert (ids[i] == ids[j]) == (tuples[i] == tuples[j])


def test_group_ids_compress_when_the_radix_product_would_overflow():
    big = np.array([0, 2 ** 40, 5, 2 ** 40], dtype=np.int64)
    ids = _group_ids([big, big, np.array([1, 1, 0, 1])], 4)
    assert ids[1] == ids[3] and len(set(ids.tolist())) == 3


# ------------------------------------------- the engine converts cells as the add-in does
# Every kind of cell a user can give an argument: numbers (whole or not, out of range),
# numeric text with spaces, booleans, empty and blank cells, choice text in any case,
# yes/no text, and text starting with an Excel error literal (an error cell as xlwings
# delivers it).  The expected value of each element is the add-in's own cell-by-cell
# path, :func:`cryptoplan.addin.convert.call` (what Excel shows).
_CELLS = st.sampled_from([
    1.0, 2.0, 2048.0, 2048.5, 0.0, -3.0, 64.0, 700.0, True, False, None, "", "  ", "2048", " 12.5 ",
    "abc", "yes", "no", "TRUE", "integrity", " Privacy ", "confidentiality", "RSA", "ECDSA",
    "unlimited", "z16", "total", "AMSM", "TLS1.3", "#N/A", "#NUM! ERLANGC: elsewhere",
])
_CALLS = {
    # every argument kind but vector: number, text, integer, number_or_text, bool
    "AMS_COST_AT_RATE_US": [100.0, "confidentiality", "RSA", 2048.0, 10.0, None, 1.0, "total", "z16"],
    "HANDSHAKE_CPU_FACTOR": ["ECDHE", "RSA", "TLS1.2", False, False, False, "coprocessor", True],
}


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(_CALLS)), data=st.data())
def test_every_cell_kind_converts_as_the_add_in_converts_it(tmp_path_factory, name, data):
    """One argument varies over the scenarios (the others keep a valid cell): each scenario's
    result is what the add-in returns for those cells, number or error text."""
    import openpyxl
    from numpy.testing import assert_allclose

    from cryptoplan.addin import catalog, convert
    from cryptoplan.workbook.catalog_functions import default_functions
    from cryptoplan.workbook.engine import Engine, Package

    spec = catalog.get(name)
    cells = _CALLS[name]
    j = data.draw(st.integers(0, len(cells) - 1), label="varied argument")
    column = data.draw(st.lists(_CELLS, min_size=1, max_size=12), label="its cells")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    letters = "ABCDEFGHIJ"
    for k, c in enumerate(cells):
        if c is not None:
            ws[f"{letters[k]}1"] = c
    ws["A2"] = f"={name}({','.join(f'{letters[k]}1' for k in range(len(cells)))})"
    path = tmp_path_factory.mktemp("kinds") / "k.xlsx"
    wb.save(path)
    eng = Engine(Package(path), default_functions(), n=len(column))
    eng.set_input(f"S!{letters[j]}1", column)
    eng.evaluate()
    got = eng.value("S!A2")
    for s, cell in enumerate(column):
        args = list(cells)
        args[j] = cell
        want = convert.call(spec, tuple(args))
        have = got.element(s)
        if isinstance(want, str):
            assert have == want, (s, cell)
        else:
            assert not isinstance(have, str), (s, cell, have)
            assert_allclose(have, want, rtol=1e-13, atol=0)   # vector vs scalar model call


def test_an_argument_past_the_catalog_entry_is_an_error_not_ignored(tmp_path):
    """=ERLANGC(1,2,3): the catalog entry takes two arguments; the third was once dropped in
    silence (the function declared an unlimited count).  Excel refuses such a formula; the
    engine gives #VALUE! naming the function and the counts."""
    import openpyxl
    from cryptoplan.workbook.recalculation import recalc_report
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Results"
    ws["A1"], ws["B1"] = "extra", "=ERLANGC(1,2,3)"
    ws["A2"], ws["B2"] = "plain", "=ERLANGC(1,2)"
    wb.save(tmp_path / "b.xlsx")
    rec = recalc_report(tmp_path / "b.xlsx")
    out = rec.as_dict()
    assert out["extra"] == "#VALUE!" and isinstance(out["plain"], float)
    assert [p.message for p in rec.problems] == ["#VALUE! ERLANGC() takes 0 to 2 arguments, got 3"]


# ------------------------------------- whole ranges remembered between calls of one recalc
_TABLE_CELLS = st.sampled_from([1.0, 2.5, -3.0, True, False, None, "", " a ", "b", "#N/A", "2048"])


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(st.lists(_TABLE_CELLS, min_size=2, max_size=2), min_size=1, max_size=3),
       i=st.integers(0, 5), new=_TABLE_CELLS)
def test_a_remembered_range_is_its_cells_own_conversion(cells, i, new):
    """The PLAN_* functions' whole-range argument is converted once per distinct cells: a call
    with the same cells gets the same conversion as a fresh one, a call with one cell changed
    gets that cell's conversion (never the remembered one of other cells)."""
    from cryptoplan.addin import catalog, convert
    from cryptoplan.workbook import catalog_functions as cf
    from cryptoplan.workbook._grouped import Out
    from cryptoplan.workbook.engine.values import Val

    arg = next(a for a in catalog.get("PLAN_VALUE").args if a.kind == "range")

    def val(grid):
        rows, cols = len(grid), len(grid[0])
        o = Out(rows * cols)
        for k, x in enumerate(x for row in grid for x in row):
            o.put(k, x)
        return Val(o.num.reshape(1, rows, cols), o.kind.reshape(1, rows, cols),
                   None if o.text is None else o.text.reshape(1, rows, cols))

    def fresh(grid):
        g = [[cf._py(val(grid), r * len(grid[0]) + c) for c in range(len(grid[0]))] for r in range(len(grid))]
        try:
            if any(convert.is_error_text(x) for row in g for x in row):
                return g, None
            return g, convert.whole_argument(arg, g)
        except convert.CellError:
            return g, None

    changed = [list(row) for row in cells]
    r, c = divmod(i % (len(cells) * 2), 2)
    changed[r][c] = new
    for grid in (cells, changed, cells, changed):
        grids, conv = cf._whole_converted(arg, val(grid))
        want_grid, want = fresh(grid)
        assert grids == [want_grid] and conv == [want]


def test_a_table_key_is_remembered_only_for_what_cannot_change():
    """A list of rows can change between calls: its key is computed again, so a changed cell is a
    new plan; a tuple of tuples of scalars is remembered by identity."""
    from cryptoplan.model.zos.plan import tables

    rows = [["name", "rate"], ["a", 1.0]]
    k1 = tables._table_key(rows)
    rows[1][1] = 2.0
    assert tables._table_key(rows) != k1
    frozen = (("name", "rate"), ("a", 1.0))
    assert tables._table_key(frozen) is tables._table_key(frozen)
    assert tables._table_key((("a", [1.0]),)) == tables._key((("a", [1.0]),))


_RESULTS = st.sampled_from([1.5, -0.0, float("inf"), float("nan"), True, False, None, "text", 3,
                            ErrorText("#NUM! F: overloaded", "#NUM!"), ErrorText("#VALUE! F: bad", "#VALUE!"),
                            np.float64(2.0)])


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(_RESULTS, min_size=1, max_size=6), data=st.data())
def test_a_unique_rows_result_spread_to_its_members_is_each_member_put_alone(rows, data):
    # put_rows converts each unique argument row's result once and spreads it; the reference puts
    # every element's result one by one (kind, number, text, the error count and the first error)
    E = 12
    idx = np.array(data.draw(st.permutations(range(E)))[:data.draw(st.integers(1, E))])
    which = np.array(data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=len(idx), max_size=len(idx))))
    per_row = np.empty(len(rows), dtype=object)
    per_row[:] = rows
    got, want = Out(E), Out(E)
    got.put_rows(idx, per_row, which)
    for i, u in zip(idx.tolist(), which.tolist()):
        want.put(i, per_row[u])
    assert_array_equal(got.kind, want.kind)
    assert_array_equal(got.num, want.num)
    def texts(o):
        return [None] * E if o.text is None else list(o.text)
    assert texts(got) == texts(want)
    assert (got.errors, got.first_error) == (want.errors, want.first_error)
