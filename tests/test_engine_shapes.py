"""Formulas of one shape (``cryptoplan.workbook.engine.shapes``) and their cells evaluated as one call.

Where the expected values come from: the engine itself, evaluating every cell on its own
(``Engine(..., shapes=False)``, the path every other engine test checks against Excel's and
LibreOffice's values); and :func:`~cryptoplan.workbook.engine.parser.parse` of each formula
for the shaped parse.  Equality is exact: a lane of a vectorized call must be the cell's own
value, bit for bit, with the same diagnostics.
"""

from __future__ import annotations

import numpy as np
import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoplan.workbook.catalog_functions import default_functions
from cryptoplan.workbook.engine import Engine, EngineError, Package, native_functions
from cryptoplan.workbook.engine.evaluation import Group as _Group
from cryptoplan.workbook.engine.parser import FormulaError, parse
from cryptoplan.workbook.engine.shapes import parse_shaped, split
from cryptoplan.workbook.engine.values import BOOL, NUM, STR
from cryptoplan.workbook.template import write_template

TRICKY = [
    "=A1:B2:C3", "=A1:INDEX(B1:B3,2)", "=SUM(Sheet1!A1:Sheet1!B2)", "=[1]Sheet1!A1+B2",
    "='My sheet'!A1*'It''s'!$B$2", "=LOG10(A1)+ATAN2(B1,C1)", "=A1 B1", "=(A1,B2)", "=A1%", "=-A1^2",
    '="A1"&B1', '="say ""B2"""&C3', "=Données!A1", "=TAX2024", "=A:A", "=SUM(1:1)", "={1,2;3,4}*A1",
    "=IF(A1,,B2)", "=_xlfn.POISSON.DIST(A5,B5,FALSE)", "=#REF!A1", "=Sheet1:Sheet3!A1", "=T[Col]+A1",
    "=XFE1+A1", "=A1+", "=1E5+E5", "=SUM(A1:A3)*$B$1", "=_CPREF0_+A1", "=A1:_CPREF0_", "=a1+$b$2",
    "=Sheet_1.x!C7", "=N(Tables!A4)", "=SUM(A1, B2:C3 D2:E4)", "=A1=B1", "=A1<>B1", "=+A1",
]


def _same_tree(formula: str) -> None:
    try:
        want = parse(formula)
    except FormulaError as exc:
        with pytest.raises(FormulaError) as got:
            parse_shaped(formula)
        assert str(got.value) == str(exc)
        return
    got = parse_shaped(formula)
    assert got == want and repr(got) == repr(want), formula


@pytest.mark.parametrize("formula", TRICKY)
def test_a_shaped_parse_is_the_formulas_own(formula):
    _same_tree(formula)
    _same_tree(formula)     # the shape's tree is remembered: the second parse comes from it


@pytest.mark.slow        # over 1.3 s (docs/development.md, "Tiers")
def test_every_formula_of_the_template_parses_the_same_through_its_shape(tmp_path):
    eng = Engine(Package(write_template(tmp_path / "planner.xlsx")), native_functions())
    shapes = {split(c.formula)[0] for c in eng.formulas.values()}
    for cell in eng.formulas.values():
        _same_tree(cell.formula)
    assert len(shapes) < len(eng.formulas) / 10      # filled down: few shapes


_REFS = st.sampled_from(["A1", "$B$2", "C$3", "$D4", "Sheet2!E5", "'My sheet'!F6", "A1:B3", "Z99:$AA$100",
                         "TxRate", "A:A", "1:2", '"A1"', '"x""y"', "1.5", "2E3", "TRUE", "#N/A", "{1,2}"])
_FORMULAS = st.recursive(
    _REFS,
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "^", "&", "=", "<>", ":", " "]), inner).map(
            lambda t: f"{t[0]}{t[1]}{t[2]}"),
        st.tuples(st.sampled_from(["SUM", "IF", "N", "LOG10", "_xlfn.POISSON.DIST", "ISBLANK"]),
                  st.lists(inner, min_size=1, max_size=3)).map(lambda t: f"{t[0]}({','.join(t[1])})"),
        inner.map(lambda x: f"-({x})"), inner.map(lambda x: f"({x})%")),
    max_leaves=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FORMULAS)
def test_random_formulas_parse_the_same_through_their_shape(body):
    _same_tree("=" + body)


# ---------------------------------------------------------------- evaluation
def _values(eng: Engine) -> dict:
    """Every formula cell's value and diagnostics, text compared where it is text."""
    out = {}
    for key in eng.formulas:
        v = eng.values[key]
        text = None if v.text is None else [t for t, k in zip(v.text.ravel(), v.kind.ravel()) if k == STR]
        out[key] = (v.num.tobytes(), v.kind.tobytes(), text or None,
                    [(d.function, d.code, d.message, d.scenarios) for d in eng.diagnostics.get(key, [])])
    return out


def _both(path, functions):
    one = Engine(Package(path), functions, shapes=False)
    one.evaluate()
    grouped = Engine(Package(path), functions)
    grouped.evaluate()
    return one, grouped


def _groups(eng: Engine) -> list:
    return list({id(g): g for g in eng._groups().values()}.values())


@pytest.mark.slow
def test_the_template_grouped_equals_cell_by_cell(tmp_path):
    one, grouped = _both(write_template(tmp_path / "planner.xlsx"), default_functions())
    assert _values(grouped) == _values(one)
    groups = _groups(grouped)
    # the mirrors and the growth table's three columns of 17 months are groups that held
    grouped_cells = sum(len(g.members) for g in groups)
    assert grouped_cells > 0.8 * len(grouped.formulas)
    assert any("PLAN_VALUE" in g.shape and len(g.members) == 17 for g in groups)


def _book(tmp_path, fill) -> str:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "S"
    fill(wb, ws)
    path = tmp_path / "book.xlsx"
    wb.save(path)
    return str(path)


def test_cells_of_one_shape_that_read_their_own_row_or_intersect_are_evaluated_one_by_one(tmp_path):
    def fill(wb, ws):
        for r in range(1, 11):
            ws[f"A{r}"] = r * 1.5
            ws[f"B{r}"] = f"=A{r}*ROW()"                # its own row: no one row for the lanes
            ws[f"C{r}"] = "=$A$1:$A$10*2"               # implicit intersection with its own row
            ws[f"D{r}"] = f"=ROWS(A{r})+ISREF(A{r})"    # the reference itself, not its value
            ws[f"E{r}"] = f"=A{r}/(A{r}-4.5)"           # #DIV/0! in one lane: that cell on its own
            ws[f"F{r}"] = f'=IF(A{r}>6,"big",A{r})'     # text in some lanes
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert grouped.value("S!B3").num[0, 0, 0] == 4.5 * 3
    assert grouped.value("S!C4").num[0, 0, 0] == 12.0
    assert grouped.diagnostics.get((0, 3, 5)) == one.diagnostics.get((0, 3, 5))
    shapes = {g.shape: g for g in _groups(grouped)}
    assert any(s.startswith("IF(") for s in shapes)     # F: evaluated as one call
    assert not any("ROWS" in s for s in shapes)         # D: compiled one by one
    assert not any("ROW()" in s for s in shapes)        # B: given up at run time


def test_a_cell_a_shape_names_twice_is_one_lane_read_once(tmp_path, monkeypatch):
    # the template's mirrors name their cell four times: IF(ISBLANK(X),"",IF(ISLOGICAL(X),N(X),X))
    def fill(wb, ws):
        for r in range(1, 9):
            ws[f"A{r}"] = [1.5, True, None, "t"][r % 4]
            ws[f"B{r}"] = f'=IF(ISBLANK(A{r}),"",IF(ISLOGICAL(A{r}),N(A{r}),A{r}+$C$1))'
        ws["C1"] = 2
    path = _book(tmp_path, fill)
    one = Engine(Package(path), native_functions(), shapes=False)
    one.evaluate()
    grouped = Engine(Package(path), native_functions())
    reads = []
    real = Engine.read_lanes
    monkeypatch.setattr(Engine, "read_lanes", lambda self, lane: reads.append(lane) or real(self, lane))
    grouped.evaluate()
    assert _values(grouped) == _values(one)
    (g,) = _groups(grouped)
    assert len(g.members) == 8 and len(reads) == 1 and len(reads[0].refs) == 8
    assert all(grouped._deps[k].count((0, r, 1)) <= 1 for r, k in enumerate(g.members, 1))


def test_a_cell_named_twice_is_still_a_reference_where_a_function_takes_one(tmp_path):
    # ISREF takes the reference itself: its second mention of A{r} must give the group up too
    def fill(wb, ws):
        for r in range(1, 6):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=A{r}+ISREF(A{r})"
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert not any("ISREF" in g.shape for g in _groups(grouped) if g.f is not None)


def test_cells_of_one_shape_that_depend_on_each_other_are_evaluated_in_order(tmp_path):
    def fill(wb, ws):
        ws["A1"] = 1
        ws["B1"] = "=A1"
        for r in range(2, 12):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=B{r - 1}+A{r}"             # a running sum: each lane needs the one above
            ws[f"C{r}"] = f"=D{r}*2"                    # C needs D, D needs C of the row above
            ws[f"D{r}"] = f"=C{r - 1}+1" if r > 2 else "=1"
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert grouped.value("S!B11").num[0, 0, 0] == sum(range(1, 12))


def test_a_cycle_through_a_shape_is_reported_as_cell_by_cell(tmp_path):
    def fill(wb, ws):
        for r in range(1, 9):
            ws[f"A{r}"] = f"=B{r}+1"
            ws[f"B{r}"] = f"=A{r}*2" if r == 5 else r
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert sorted(map(sorted, grouped.cycles)) == sorted(map(sorted, one.cycles)) != []


def test_a_dynamic_shape_is_evaluated_one_by_one(tmp_path):
    def fill(wb, ws):
        for r in range(1, 9):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=OFFSET(A{r},1,0)*2"
            ws[f"C{r}"] = f'=INDIRECT("A"&A{r})+1'
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert _groups(grouped) == []


def test_many_scenarios_evaluate_cell_by_cell(tmp_path):
    def fill(wb, ws):
        for r in range(1, 9):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=A{r}*$C$1"
        ws["C1"] = 2
    eng = Engine(Package(_book(tmp_path, fill)), native_functions(), n=3)
    eng.set_input("S!C1", [1, 2, 3])
    eng.evaluate()
    assert eng._groups() == {}
    assert eng.value("S!B4").num[:, 0, 0].tolist() == [4.0, 8.0, 12.0]


@pytest.mark.parametrize("values", [[1.0, 2, 3.5], list(np.array([1.0, 2.0, 3.5])), [np.int64(1), 2.0, np.float32(3.5)],
                                    np.array([1.0, 2.0, 3.5])])
def test_a_column_of_numbers_of_any_float_or_int_type_is_numbers(tmp_path, values):
    # np.float64 is a float: a list of them (list(np.linspace(...))) is the grid's column as it is
    # given, not per element; bool is an int to Python but not a number here
    eng = Engine(Package(_book(tmp_path, lambda wb, ws: ws.__setitem__("A1", 0))), native_functions(), n=3)
    eng.set_input("S!A1", values)
    v = next(iter(eng.overrides.values()))
    assert v.num[:, 0, 0].tolist() == [1.0, 2.0, 3.5] and (v.kind == NUM).all()
    eng.set_input("S!A1", [True, 1, "x"])
    v = next(iter(eng.overrides.values()))
    assert v.kind[:, 0, 0].tolist() == [BOOL, NUM, STR]


@pytest.mark.parametrize("values", [[1.0, np.float64("inf"), 2.0], [1.0, "x", np.nan]])
def test_a_column_with_a_value_that_is_not_finite_is_refused_naming_it(tmp_path, values):
    eng = Engine(Package(_book(tmp_path, lambda wb, ws: ws.__setitem__("A1", 0))), native_functions(), n=3)
    with pytest.raises(EngineError, match="is not a finite number"):
        eng.set_input("S!A1", values)


def test_a_group_read_on_demand_first_is_evaluated_one_by_one(tmp_path):
    # A1's INDIRECT, first in the order, reads B3 while the group of B is pending: B3 is evaluated on
    # its own, and so is the rest of the group (and again when evaluated twice)
    def fill(wb, ws):
        ws["A1"] = '=INDIRECT("B3")+1'
        for r in range(2, 10):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=A{r}^2"
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert grouped.value("S!A1").num[0, 0, 0] == 10.0
    assert _groups(grouped) == []                     # given up
    grouped.evaluate()
    assert _values(grouped) == _values(one)


def test_a_group_given_up_at_run_time_evaluates_again_after_an_input_changes(tmp_path):
    # ROW() in the untaken branch of some lanes: the group is given up while running; its cells,
    # compiled one by one, keep their precedents for the next evaluations
    def fill(wb, ws):
        for r in range(1, 6):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=IF(A{r}>0,1/(A{r}-3),ROW())"
    path = _book(tmp_path, fill)
    one, grouped = _both(path, native_functions())
    for eng in (one, grouped):
        eng.set_input("S!A1", -1)
        eng.evaluate()
        eng.evaluate()
    assert _values(grouped) == _values(one)
    assert grouped.value("S!B1").num[0, 0, 0] == 1.0


def test_a_sweep_after_a_single_scenario_does_not_group_its_scenarios(tmp_path):
    # the sweep's engine is kept between calls: resized from one scenario to four, no group is left
    from cryptoplan.workbook.sweeps import sweep

    def fill(wb, ws):
        ws.title = "Results"
        for r in range(1, 5):
            ws[f"A{r}"] = r
            ws[f"B{r}"] = f"=A{r}*$C$1"
        ws["C1"] = 1
    path = _book(tmp_path, fill)
    sweep(path, {"Results!C1": [2]})
    res = sweep(path, {"Results!C1": [1, 2, 3, 4]})
    for r in range(1, 5):
        column = next(v for k, v in res.outputs.items() if k.endswith(f"B{r}"))
        assert list(column) == [r * c for c in (1, 2, 3, 4)]


def test_text_functions_keep_their_numbers_where_another_lane_errs(tmp_path):
    def fill(wb, ws):
        for r, text in enumerate(("abc", "xyz", "b", "q"), 1):
            ws[f"A{r}"] = text
            ws[f"B{r}"] = f'=ISNUMBER(SEARCH("b",A{r}))'
            ws[f"C{r}"] = f'=FIND("b",A{r})'
    one, grouped = _both(_book(tmp_path, fill), native_functions())
    assert _values(grouped) == _values(one)
    assert grouped.value("S!C1").kind[0, 0, 0] != STR and grouped.value("S!C1").num[0, 0, 0] == 2.0
    assert grouped.value("S!B3").num[0, 0, 0] == 1.0


def test_a_date_handed_to_an_add_in_through_if_is_its_cells_own_call(tmp_path):
    import datetime as dt

    def fill(wb, ws):
        for r in range(1, 7):
            ws[f"A{r}"] = 1 if r % 2 else -1
            ws[f"D{r}"] = dt.datetime(2026, 1, r)
            ws[f"D{r}"].number_format = "dd/mm/yyyy"
            ws[f"B{r}"] = f"=ERLANGC(IF(A{r}>0,D{r},0.5),5)"
    one, grouped = _both(_book(tmp_path, fill), default_functions())
    assert _values(grouped) == _values(one)
    assert "date" in grouped.value("S!B1").text[0, 0, 0]


def test_an_add_in_function_gets_one_value_per_cell_and_dates_are_refused_as_one_by_one(tmp_path):
    import datetime as dt

    def fill(wb, ws):
        for r in range(1, 9):
            ws[f"A{r}"] = 0.4 * r
            ws[f"B{r}"] = f"=ERLANGC(A{r},5)"           # the cell itself: a date reaches the add-in
        ws["A8"] = dt.datetime(2026, 1, 1)              # a date handed to an add-in: its own message
        ws["A8"].number_format = "dd/mm/yyyy"
        ws["A9"] = 3.0
        ws["B9"] = "=ERLANGC(A9*4,5)"                   # unstable: the add-in's error text
        ws["B10"] = "=ERLANGC(A10*4,5)"
        ws["B11"] = "=ERLANGC(A11*4,5)"
        ws["B12"] = "=ERLANGC(A12*4,5)"
        ws["A10"], ws["A11"], ws["A12"] = 0.5, 0.7, 0.9
    one, grouped = _both(_book(tmp_path, fill), default_functions())
    assert _values(grouped) == _values(one)
    assert (8, 1) in grouped.date_cells(0)
    assert "date" in grouped.value("S!B8").text[0, 0, 0]      # the add-in's message, as one by one
    assert grouped.diagnostics[(0, 9, 2)] and grouped.value("S!B9").kind[0, 0, 0] == STR
    # the date's shape was given up (one by one); the other held
    assert [g.shape for g in _groups(grouped)] == ["ERLANGC(_CPREF0_*4,5)"]


def test_a_group_is_a_group_of_one_sheet_and_one_shape(tmp_path):
    def fill(wb, ws):
        other = wb.create_sheet("T")
        for r in range(1, 6):
            ws[f"A{r}"] = f"=B{r}+1"
            other[f"A{r}"] = f"=B{r}+1"
    eng = Engine(Package(_book(tmp_path, fill)), native_functions())
    eng.evaluate()
    groups = _groups(eng)
    assert len(groups) == 2 and all(isinstance(g, _Group) and len({k[0] for k in g.members}) == 1 for g in groups)


def _column_and_each_alone(tmp_path, formula: str, xs: list):
    """B1's ``formula`` of A1 (A2 = 2) over the scenarios ``xs`` at once, and each of the first 70
    scenarios evaluated alone: ``[(x, value of the sweep's scenario, value alone)]``."""
    def fill(wb, ws):
        ws["A1"] = "x"
        ws["A2"] = 2
        ws["B1"] = f"={formula}"
    path = _book(tmp_path, fill)
    many = Engine(Package(path), native_functions(), n=len(xs))
    many.set_input("S!A1", xs)
    many.evaluate()
    got = many.value("S!B1")
    pairs = []
    for i, x in enumerate(xs[:70]):
        one = Engine(Package(path), native_functions())
        one.set_input("S!A1", x)
        one.evaluate()
        pairs.append((x, got.take(np.array([i])) if got.n > 1 else got, one.value("S!B1")))
    return pairs


def _same(a, b) -> bool:
    """One scenario's values equal: kind, then the text or the number."""
    if a.kind[0, 0, 0] != b.kind[0, 0, 0]:
        return False
    if b.kind[0, 0, 0] == STR:
        return a.text[0, 0, 0] == b.text[0, 0, 0]
    return a.num[0, 0, 0] == b.num[0, 0, 0]


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, 1.5, -2.25, 1234567.891, 0.005, 1e-9, 2.5]), min_size=65, max_size=120),
       st.sampled_from(["0.00", "#,##0", "0%", "0.0", "General", "0.000E+00", "@@"]))
def test_text_of_a_sweeps_column_is_each_scenarios_text_alone(tmp_path, xs, fmt):
    # TEXT over many scenarios formats each distinct number once: the same texts (and the same
    # errors for a format the engine refuses) as one scenario at a time
    for x, got, want in _column_and_each_alone(tmp_path, f'TEXT(A1,"{fmt}")', xs):
        assert _same(got, want), (x, fmt)


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["#NUM! X: overloaded", "abc", "ABC", "", "2.5", 0.0, -0.0, 3.0, 12345.678, True]),
                min_size=65, max_size=100),
       st.sampled_from(['LEFT(A1,5)="#NUM!"', "MID(A1,2,2)", 'FIND("b",A1)', 'SUBSTITUTE(A1,"b","x")', "LEN(A1)",
                        "RIGHT(A1,A2)", "UPPER(A1)&LOWER(A1)"]))
def test_a_text_function_over_a_sweeps_column_is_each_scenarios_result_alone(tmp_path, xs, formula):
    # each distinct argument tuple computed once (numbers told apart by their bits): the same kinds,
    # numbers and texts as one scenario at a time
    for x, got, want in _column_and_each_alone(tmp_path, formula, xs):
        assert _same(got, want), (x, formula)
