"""Lookup and reference functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import numpy as np

from ..arguments import ARRAY, LAZY, MISSING, REF, VALUE, ScenarioSplit
from ..nodes import Name, Reference
from ..ops import first_error, to_bool, to_num, to_text
from ..parser import MAX_COL, MAX_ROW, parse_ref
from ..references import Ref, RefList
from ..values import ERR_NA, ERR_REF, ERR_VALUE, Val
from ._search import positions
from .base import NATIVE, error_array, or_default, range_value, register, select

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)

#: XMATCH's and XLOOKUP's match_mode -> the mode :func:`._search.positions` takes.
_X_MATCH_MODES = {0: 0, -1: "next_smaller", 1: "next_larger", 2: 2}


def _int_arg(v: Val):
    """An argument as whole numbers per scenario (truncated), shape ``(n,)``, and its errors."""
    x, e = to_num(v)
    return np.trunc(x).reshape(v.n, -1)[:, 0].astype(np.int64), (None if e is None else e.reshape(v.n, -1)[:, 0])


@register("MATCH", VALUE, REF, VALUE, min_args=2)
def _match(ctx, lookup, arr, mtype=MISSING):
    """MATCH(lookup_value, lookup_array, [match_type]): the 1-based position of the value
    (match_type 0 exact, 1 largest <= in ascending data, -1 smallest >= in descending)."""
    vec = range_value(ctx, arr) if not isinstance(arr, RefList) else None
    if vec is None:
        return Val.error(ERR_NA)
    t, te = _int_arg(or_default(mtype, 1.0))
    if t.shape[0] > 1 and len(set(t.tolist())) > 1:
        raise ScenarioSplit()
    mode = 0 if t[0] == 0 else (1 if t[0] > 0 else -1)
    pos, err = positions(lookup, vec, mode)
    if pos is None:
        return Val.error(ERR_NA)
    e = first_error(err, te, error_array(pos < 0, ERR_NA))
    return Val.numbers((pos + 1).astype(float).reshape(-1, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@register("XMATCH", VALUE, REF, VALUE, VALUE, min_args=2)
def _xmatch(ctx, lookup, arr, match_mode=MISSING, search_mode=MISSING):
    """XMATCH(lookup_value, lookup_array, [match_mode], [search_mode]): the 1-based position
    (match_mode 0 exact, -1 next smaller, 1 next larger, 2 wildcard)."""
    vec = range_value(ctx, arr)
    mm, _ = _int_arg(or_default(match_mode, 0.0))
    sm, _ = _int_arg(or_default(search_mode, 1.0))
    mode = _X_MATCH_MODES.get(int(mm[0]))
    if mode is None:
        return Val.error(ERR_VALUE)
    pos, err = positions(lookup, vec, mode, int(sm[0]))
    if pos is None:
        return Val.error(ERR_VALUE)
    e = first_error(err, error_array(pos < 0, ERR_NA))
    return Val.numbers((pos + 1).astype(float).reshape(-1, 1, 1), None if e is None else e.reshape(-1, 1, 1))


def _gather(tab: Val, rows, cols) -> Val:
    """Elements ``tab[s, rows[s], cols[s]]`` (0-based index arrays of length n)."""
    n = max(tab.n, rows.shape[0], cols.shape[0])
    s = np.arange(n) if tab.n > 1 else np.zeros(n, dtype=np.int64)
    rows = np.broadcast_to(rows, (n,))
    cols = np.broadcast_to(cols, (n,))
    num = tab.num[s, rows, cols].reshape(n, 1, 1)
    kind = tab.kind[s, rows, cols].reshape(n, 1, 1)
    text = None if tab.text is None else tab.text[s, rows, cols].reshape(n, 1, 1)
    return Val(num.astype(float), kind.astype(np.int8), text)


def _vhlookup(ctx, lookup, table, idx, approx, vertical):
    """VLOOKUP (``vertical``) or HLOOKUP: the value in column (row) ``idx`` of the row (column)
    whose first cell matches; exact or, by default, approximate in ascending data."""
    tab = range_value(ctx, table)
    if isinstance(table, RefList):
        return Val.error(ERR_REF)
    ap, ae = to_bool(or_default(approx, True))
    ap = ap.reshape(ap.shape[0], -1)[:, 0]
    if ap.shape[0] > 1 and len(set(ap.tolist())) > 1:
        raise ScenarioSplit()
    mode = 1 if ap[0] else 0
    first = Val(tab.num[:, :, :1], tab.kind[:, :, :1], None if tab.text is None else tab.text[:, :, :1]) \
        if vertical else Val(tab.num[:, :1, :], tab.kind[:, :1, :], None if tab.text is None else tab.text[:, :1, :])
    pos, err = positions(lookup, first, mode)
    ci, ce = _int_arg(idx)
    width = tab.shape[1] if vertical else tab.shape[0]
    bad_lo = ci < 1
    bad_hi = ci > width
    n = max(pos.shape[0], ci.shape[0])
    pos = np.broadcast_to(pos, (n,))
    ci = np.broadcast_to(ci, (n,))
    ok = (pos >= 0) & ~np.broadcast_to(bad_lo | bad_hi, (n,))
    p = np.where(ok, pos, 0)
    c = np.where(ok, ci - 1, 0)
    out = _gather(tab, p, c) if vertical else _gather(tab, c, p)
    e = first_error(None if err is None else np.broadcast_to(err, (n,)), ce,
                    None if ae is None else ae.reshape(-1),
                    error_array(np.broadcast_to(bad_lo, (n,)), ERR_VALUE),
                    error_array(np.broadcast_to(bad_hi, (n,)), ERR_REF), error_array(pos < 0, ERR_NA))
    if e is not None:
        e = np.broadcast_to(e, (n,)).reshape(n, 1, 1)
        out = Val(np.where(e > 0, 0.0, out.num), np.where(e > 0, e, out.kind).astype(np.int8), out.text)
    # a looked-up empty cell gives 0
    return out


@register("VLOOKUP", VALUE, REF, VALUE, VALUE, min_args=3)
def _vlookup(ctx, lookup, table, idx, approx=MISSING):
    """VLOOKUP(lookup_value, table_array, col_index_num, [range_lookup])."""
    return _vhlookup(ctx, lookup, table, idx, approx, True)


@register("HLOOKUP", VALUE, REF, VALUE, VALUE, min_args=3)
def _hlookup(ctx, lookup, table, idx, approx=MISSING):
    """HLOOKUP(lookup_value, table_array, row_index_num, [range_lookup])."""
    return _vhlookup(ctx, lookup, table, idx, approx, False)


@register("XLOOKUP", VALUE, REF, REF, LAZY, VALUE, VALUE, min_args=3)
def _xlookup(ctx, lookup, arr, ret, if_not_found=MISSING, match_mode=MISSING, search_mode=MISSING):
    """XLOOKUP(lookup_value, lookup_array, return_array, [if_not_found], [match_mode],
    [search_mode]): the row (or column) of ``return_array`` where the value is found."""
    vec = range_value(ctx, arr)
    rv = range_value(ctx, ret)
    modes = _xlookup_modes(match_mode, search_mode)
    if modes is None:
        return Val.error(ERR_VALUE)
    pos, err = positions(lookup, vec, *modes)
    if pos is None:
        return Val.error(ERR_VALUE)
    n = pos.shape[0]
    found = pos >= 0
    out = _returned(rv, vec.shape, np.where(found, pos, 0))
    if out is None:
        return Val.error(ERR_VALUE)
    if (~found).any():
        nf = Val.error(ERR_NA) if if_not_found is MISSING else if_not_found.val()
        out = select(found.reshape(n, 1, 1), None, out, nf)
    if err is not None:
        out = select(err.reshape(n, 1, 1) == 0, err.reshape(n, 1, 1), out, out)
    return out


def _xlookup_modes(match_mode, search_mode):
    """XLOOKUP's ``(mode, direction)`` for :func:`._search.positions` (None for an invalid
    one); search modes 2 and -2 (binary search) search as 1 and -1 do."""
    mm, _ = _int_arg(or_default(match_mode, 0.0))
    sm, _ = _int_arg(or_default(search_mode, 1.0))
    if mm.shape[0] > 1 or sm.shape[0] > 1:
        if len(set(mm.tolist())) > 1 or len(set(sm.tolist())) > 1:
            raise ScenarioSplit()
    mode = _X_MATCH_MODES.get(int(mm[0]))
    search = int(sm[0])
    if mode is None or search not in (1, -1, 2, -2):
        return None
    return mode, 1 if search > 0 else -1


def _returned(rv: Val, vec_shape: tuple[int, int], p: np.ndarray) -> Val | None:
    """The row (lookup vector a column) or column (a row) of ``rv`` at position ``p`` of each
    scenario; None if ``rv`` does not match the lookup vector's length."""
    vr, vc = vec_shape
    n = p.shape[0]
    s = np.arange(n) if rv.n > 1 else np.zeros(n, dtype=np.int64)
    if vc == 1 and vr > 1 or (vr == 1 and vc == 1 and rv.shape[0] >= 1 and rv.shape[1] == 1):
        if rv.shape[0] != vr:
            return None
        num = rv.num[s, p, :][:, None, :]
        kind = rv.kind[s, p, :][:, None, :]
        text = None if rv.text is None else rv.text[s, p, :][:, None, :]
    else:
        if rv.shape[1] != vc:
            return None
        num = rv.num[s, :, p][:, :, None]
        kind = rv.kind[s, :, p][:, :, None]
        text = None if rv.text is None else rv.text[s, :, p][:, :, None]
    return Val(num.astype(float), kind.astype(np.int8), text)


@register("INDEX", REF, VALUE, VALUE, VALUE, min_args=2)
def _index(ctx, arr, row, col=MISSING, area=MISSING):
    """INDEX(array, row, [column], [area]): the cell (row 0: the whole column, column 0: the
    whole row) of a reference -- a reference itself -- or of an array value."""
    if isinstance(arr, RefList):
        a, _ = _int_arg(or_default(area, 1.0))
        if a.shape[0] > 1:
            raise ScenarioSplit()
        if not 1 <= a[0] <= len(arr):
            return Val.error(ERR_REF)
        arr = arr[a[0] - 1]
    R, C = (arr.rows, arr.cols) if isinstance(arr, Ref) else arr.shape
    r, re_ = _int_arg(or_default(row, 0.0) if row is not MISSING else Val.number(0.0))
    if col is MISSING:
        if R == 1 and C > 1:        # INDEX(row vector, n): the n-th column
            c, ce = r, re_
            r, re_ = np.zeros_like(c), None
        else:
            c, ce = np.zeros_like(r), None
    else:
        c, ce = _int_arg(col)
    err = first_error(re_, ce)
    if r.shape[0] == 1 and c.shape[0] == 1:
        if err is not None and err[0]:
            return Val.error(int(err[0]))
        return _index_one(arr, int(r[0]), int(c[0]), R, C)
    return _index_each(ctx, arr, r, c, R, C, err)


def _index_one(arr, ri: int, ci: int, R: int, C: int):
    """INDEX with the same row and column in every scenario: a reference into a reference, a
    slice of a value (0 takes the whole row or column); ``#REF!`` outside."""
    if ri < 0 or ci < 0 or ri > R or ci > C:
        return Val.error(ERR_REF)
    if isinstance(arr, Ref):
        r1 = arr.r1 + ri - 1 if ri else arr.r1
        r2 = r1 if ri else arr.r2
        c1 = arr.c1 + ci - 1 if ci else arr.c1
        c2 = c1 if ci else arr.c2
        return Ref(arr.sheet, r1, c1, r2, c2)
    rs = slice(ri - 1, ri) if ri else slice(None)
    cs = slice(ci - 1, ci) if ci else slice(None)
    return Val(arr.num[:, rs, cs], arr.kind[:, rs, cs], None if arr.text is None else arr.text[:, rs, cs])


def _index_each(ctx, arr, r, c, R: int, C: int, err):
    """INDEX with a row or column that varies by scenario: one element per scenario
    (``#REF!`` outside; a whole row or column, 0, is evaluated scenario by scenario)."""
    if (r == 0).any() or (c == 0).any():
        raise ScenarioSplit()
    tab = ctx.engine.read(arr, ctx.scen) if isinstance(arr, Ref) else arr
    n = max(r.shape[0], c.shape[0])
    r = np.broadcast_to(r, (n,))
    c = np.broadcast_to(c, (n,))
    bad = (r < 1) | (r > R) | (c < 1) | (c > C)
    out = _gather(tab, np.where(bad, 0, r - 1), np.where(bad, 0, c - 1))
    e = first_error(None if err is None else np.broadcast_to(err, (n,)), error_array(bad, ERR_REF))
    if e is not None:
        e = e.reshape(n, 1, 1)
        out = Val(np.where(e > 0, 0.0, out.num), np.where(e > 0, e, out.kind).astype(np.int8), out.text)
    return out


@register("CHOOSE", VALUE, rest=(LAZY,), min_args=2)
def _choose(ctx, idx, *choices):
    """CHOOSE(index_num, value1, [value2], ...): the chosen value, only it evaluated when the
    index is the same in every scenario."""
    i, e = _int_arg(idx)
    if i.shape[0] == 1 and (e is None or not e[0]):
        k = int(i[0])
        if not 1 <= k <= len(choices):
            return Val.error(ERR_VALUE)
        ch = choices[k - 1]
        return Val.number(0.0) if ch is MISSING else ch.raw()
    if e is not None and i.shape[0] == 1:
        return Val.error(int(e[0]))
    out = Val.error(ERR_VALUE)
    n = i.shape[0]
    for k in sorted(set(i.tolist())):
        if 1 <= k <= len(choices):
            ch = choices[k - 1]
            v = Val.number(0.0) if ch is MISSING else ch.val()
            out = select((i == k).reshape(n, 1, 1), None, v, out)
    if e is not None:
        out = select(np.ones((n, 1, 1), bool), e.reshape(n, 1, 1), out, out)
    return out


@register("ROW", REF, min_args=0)
def _row(ctx, ref=MISSING):
    """ROW([reference]): the row number (of the formula's cell without an argument; every
    row of a range in an array formula)."""
    if ref is MISSING:
        return Val.number(ctx.row)
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    if ctx.array and ref.rows > 1:
        return Val.numbers(np.arange(ref.r1, ref.r2 + 1, dtype=float).reshape(1, -1, 1))
    return Val.number(ref.r1)


@register("COLUMN", REF, min_args=0)
def _column(ctx, ref=MISSING):
    """COLUMN([reference]): the column number, as :func:`_row` gives the row."""
    if ref is MISSING:
        return Val.number(ctx.col)
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    if ctx.array and ref.cols > 1:
        return Val.numbers(np.arange(ref.c1, ref.c2 + 1, dtype=float).reshape(1, 1, -1))
    return Val.number(ref.c1)


@register("ROWS", REF)
def _rows(ctx, x):
    """ROWS(array): the number of rows."""
    if isinstance(x, Ref):
        return Val.number(x.rows)
    if isinstance(x, Val):
        return Val.number(x.shape[0])
    return Val.error(ERR_VALUE)


@register("COLUMNS", REF)
def _columns(ctx, x):
    """COLUMNS(array): the number of columns."""
    if isinstance(x, Ref):
        return Val.number(x.cols)
    if isinstance(x, Val):
        return Val.number(x.shape[1])
    return Val.error(ERR_VALUE)


def _uniform_ints(*vals):
    """Whole-number arguments that are the same in every scenario (None for an omitted one):
    ``(ints, None)``, or ``(None, error code)``; :class:`ScenarioSplit` if one varies."""
    out = []
    for v in vals:
        if v is MISSING:
            out.append(None)
            continue
        i, e = _int_arg(v)
        if i.shape[0] > 1 and len(set(i.tolist())) > 1:
            raise ScenarioSplit()
        if e is not None and e[0]:
            return None, int(e[0])
        out.append(int(i[0]))
    return out, None


@register("OFFSET", REF, VALUE, VALUE, VALUE, VALUE, min_args=3, volatile=True)
def _offset(ctx, ref, rows, cols, height=MISSING, width=MISSING):
    """OFFSET(reference, rows, cols, [height], [width]): a reference moved and resized
    (``#REF!`` off the sheet)."""
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    ints, err = _uniform_ints(rows, cols, height, width)
    if err:
        return Val.error(err)
    dr, dc, h, w = ints
    h = ref.rows if h is None else h
    w = ref.cols if w is None else w
    if h < 1 or w < 1:
        return Val.error(ERR_REF)
    r1, c1 = ref.r1 + dr, ref.c1 + dc
    if r1 < 1 or c1 < 1 or r1 + h - 1 > MAX_ROW or c1 + w - 1 > MAX_COL:
        return Val.error(ERR_REF)
    return Ref(ref.sheet, r1, c1, r1 + h - 1, c1 + w - 1)


@register("INDIRECT", VALUE, VALUE, min_args=1, volatile=True)
def _indirect(ctx, text, a1=MISSING):
    """INDIRECT(ref_text, [a1]): the reference (A1 style, or a defined name) the text names."""
    t, e = to_text(text)
    if t.shape[0] > 1 and len(set(t.reshape(-1).tolist())) > 1:
        raise ScenarioSplit()
    if e is not None:
        return Val.error(int(e.flat[0]))
    if a1 is not MISSING:
        b, _ = to_bool(a1)
        if not b.reshape(-1)[0]:
            ctx.diag("INDIRECT", 16, "R1C1-style INDIRECT is not supported")
            return Val.error(16)
    node = parse_ref(str(t.reshape(-1)[0]))
    eng = ctx.engine
    if isinstance(node, Name):
        target = eng.defined_name(node.name, ctx.sheet if node.sheet is None else eng.sheet_index.get(node.sheet.lower()))
        if target is None:
            return Val.error(ERR_REF)
        node = target[0]
    if not isinstance(node, Reference):
        return Val.error(ERR_REF)
    si = ctx.sheet if node.sheet is None else eng.sheet_index.get(node.sheet.lower())
    if si is None or eng.sheets[si].kind != "worksheet":
        return Val.error(ERR_REF)
    return Ref(si, node.r1, node.c1, node.r2, node.c2)


@register("TRANSPOSE", ARRAY)
def _transpose(ctx, x):
    """TRANSPOSE(array): rows as columns."""
    v = ctx.engine.read(x, ctx.scen) if isinstance(x, Ref) else ctx.value(x)
    return Val(v.num.transpose(0, 2, 1), v.kind.transpose(0, 2, 1),
               None if v.text is None else v.text.transpose(0, 2, 1))

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
