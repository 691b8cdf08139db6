"""Lookup and reference functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import bisect

import numpy as np

from ..core import MISSING, Ref, RefList, ScenarioSplit
from ..ops import (
    approx15, approx_equal, first_error, to_bool, to_num, to_text,
)
from ..parser import MAX_COL, MAX_ROW, parse_ref
from ..values import (
    BOOL, EMPTY, ERR_NA, ERR_NULL, ERR_REF, ERR_VALUE, NUM, STR,
    Val,
)
from .base import (
    NATIVE, error_array, or_default, range_value, register,
    select, wildcard_regex,
)

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)


def _flat_vector(v: Val):
    """(kinds, nums, texts) of a one-row or one-column value, or None if 2-D."""
    r, c = v.shape
    if r != 1 and c != 1:
        return None
    return v.kind.reshape(v.n, -1), v.num.reshape(v.n, -1), \
        (None if v.text is None else v.text.reshape(v.n, -1))


def _norm_key(k, x, t):
    if k == NUM:
        return ("n", float(approx15(np.asarray(x))))
    if k == STR:
        return ("s", t.lower())
    if k == BOOL:
        return ("b", bool(x))
    return None


class _Table:
    """A lookup vector (constant across scenarios) with indexes built on demand."""

    def __init__(self, kinds, nums, texts):
        self.k = kinds
        self.x = nums
        self.t = texts
        self._exact = None
        self._sorted = {}

    def exact(self):
        if self._exact is None:
            d = {}
            for i in range(len(self.k)):
                key = _norm_key(self.k[i], self.x[i], None if self.t is None else self.t[i])
                if key is not None and key not in d:
                    d[key] = i
            self._exact = d
        return self._exact

    def last_exact(self, key):
        for i in range(len(self.k) - 1, -1, -1):
            if _norm_key(self.k[i], self.x[i], None if self.t is None else self.t[i]) == key:
                return i
        return -1

    def typed(self, kind):
        if kind not in self._sorted:
            pos = [i for i in range(len(self.k)) if self.k[i] == kind]
            if kind == STR:
                vals = [self.t[i].lower() for i in pos]
            else:
                vals = [float(self.x[i]) for i in pos]
            self._sorted[kind] = (pos, vals)
        return self._sorted[kind]


def _lookup_one(table: _Table, k, x, t, mode, search=1):
    """Position (0-based) of one lookup value or -1.

    ``mode``: 0 exact, 1 largest <= (sorted ascending), -1 smallest >= (sorted
    descending), 2 wildcard, and for XLOOKUP "next_smaller"/"next_larger".
    """
    if k == EMPTY:
        k, x = NUM, 0.0
    key = _norm_key(k, x, t)
    if key is None:
        return -1
    if mode in (0, 2):
        if k == STR and (mode == 2 or mode == 0) and any(ch in t for ch in "*?~") and mode != "plain":
            rx = wildcard_regex(t)
            rng = range(len(table.k)) if search >= 0 else range(len(table.k) - 1, -1, -1)
            for i in rng:
                if table.k[i] == STR and rx.match(table.t[i]):
                    return i
            return -1
        if search < 0:
            return table.last_exact(key)
        return table.exact().get(key, -1)
    pos, vals = table.typed(k)
    v = t.lower() if k == STR else float(x)
    if mode == 1:
        i = bisect.bisect_right(vals, v) - 1
        if i >= 0 and k == NUM and i + 1 < len(vals) and approx_equal(vals[i + 1], v):
            i += 1
        return pos[i] if i >= 0 else -1
    if mode == -1:
        # descending: last position with value >= v
        best = -1
        for j, w in enumerate(vals):
            if w >= v or (k == NUM and approx_equal(w, v)):
                best = j
            else:
                break
        return pos[best] if best >= 0 else -1
    if mode in ("next_smaller", "next_larger"):
        best, bestv = -1, None
        order = range(len(vals)) if search >= 0 else range(len(vals) - 1, -1, -1)
        for j in order:
            w = vals[j]
            if k == NUM and approx_equal(w, v):
                return pos[j]
            if k == STR and w == v:
                return pos[j]
            if mode == "next_smaller" and w < v and (bestv is None or w > bestv):
                best, bestv = j, w
            if mode == "next_larger" and w > v and (bestv is None or w < bestv):
                best, bestv = j, w
        return pos[best] if best >= 0 else -1
    raise ValueError(mode)  # pragma: no cover


def _positions(lookup: Val, vec: Val, mode, search=1):
    """Positions (n,) (-1: not found) and lookup errors for each scenario."""
    flat = _flat_vector(vec)
    if flat is None:
        return None, None
    kinds, nums, texts = flat
    if vec.n > 1:
        raise ScenarioSplit()
    table = _Table(kinds[0], nums[0], None if texts is None else texts[0])
    lk = lookup.kind.reshape(lookup.n, -1)[:, 0]
    lx = lookup.num.reshape(lookup.n, -1)[:, 0]
    lt = None if lookup.text is None else lookup.text.reshape(lookup.n, -1)[:, 0]
    n = lookup.n
    pos = np.full(n, -1, dtype=np.int64)
    cache = {}
    for s in range(n):
        k = int(lk[s])
        if k >= ERR_NULL:
            continue
        key = (k, float(lx[s]), None if lt is None or k != STR else lt[s])
        p = cache.get(key)
        if p is None:
            p = _lookup_one(table, k, lx[s], key[2], mode, search)
            cache[key] = p
        pos[s] = p
    err = np.where(lk >= ERR_NULL, lk, 0).astype(np.int8)
    return pos, (err if err.any() else None)


def _int_arg(v: Val):
    x, e = to_num(v)
    return np.trunc(x).reshape(v.n, -1)[:, 0].astype(np.int64), (None if e is None else e.reshape(v.n, -1)[:, 0])


@register("MATCH", "vrv", 2, 3)
def _match(ctx, lookup, arr, mtype=MISSING):
    vec = range_value(ctx, arr) if not isinstance(arr, RefList) else None
    if vec is None:
        return Val.error(ERR_NA)
    t, te = _int_arg(or_default(mtype, 1.0))
    if t.shape[0] > 1 and len(set(t.tolist())) > 1:
        raise ScenarioSplit()
    mode = 0 if t[0] == 0 else (1 if t[0] > 0 else -1)
    pos, err = _positions(lookup, vec, mode)
    if pos is None:
        return Val.error(ERR_NA)
    e = first_error(err, te, error_array(pos < 0, ERR_NA))
    return Val.numbers((pos + 1).astype(float).reshape(-1, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@register("XMATCH", "vrvv", 2, 4)
def _xmatch(ctx, lookup, arr, match_mode=MISSING, search_mode=MISSING):
    vec = range_value(ctx, arr)
    mm, _ = _int_arg(or_default(match_mode, 0.0))
    sm, _ = _int_arg(or_default(search_mode, 1.0))
    mode = {0: 0, -1: "next_smaller", 1: "next_larger", 2: 2}.get(int(mm[0]))
    if mode is None:
        return Val.error(ERR_VALUE)
    pos, err = _positions(lookup, vec, mode, int(sm[0]))
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
    pos, err = _positions(lookup, first, mode)
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


@register("VLOOKUP", "vrvv", 3, 4)
def _vlookup(ctx, lookup, table, idx, approx=MISSING):
    return _vhlookup(ctx, lookup, table, idx, approx, True)


@register("HLOOKUP", "vrvv", 3, 4)
def _hlookup(ctx, lookup, table, idx, approx=MISSING):
    return _vhlookup(ctx, lookup, table, idx, approx, False)


@register("XLOOKUP", "vrrlvv", 3, 6)
def _xlookup(ctx, lookup, arr, ret, if_not_found=MISSING, match_mode=MISSING, search_mode=MISSING):
    vec = range_value(ctx, arr)
    rv = range_value(ctx, ret)
    mm, _ = _int_arg(or_default(match_mode, 0.0))
    sm, _ = _int_arg(or_default(search_mode, 1.0))
    if mm.shape[0] > 1 or sm.shape[0] > 1:
        if len(set(mm.tolist())) > 1 or len(set(sm.tolist())) > 1:
            raise ScenarioSplit()
    mode = {0: 0, -1: "next_smaller", 1: "next_larger", 2: 2}.get(int(mm[0]))
    search = int(sm[0])
    if mode is None or search not in (1, -1, 2, -2):
        return Val.error(ERR_VALUE)
    if abs(search) == 2 and mode == 0:
        search = 1 if search > 0 else -1
    pos, err = _positions(lookup, vec, mode, 1 if search > 0 else -1)
    if pos is None:
        return Val.error(ERR_VALUE)
    vr, vc = vec.shape
    n = pos.shape[0]
    found = pos >= 0
    p = np.where(found, pos, 0)
    if vc == 1 and vr > 1 or (vr == 1 and vc == 1 and rv.shape[0] >= 1 and rv.shape[1] == 1):
        if rv.shape[0] != vr:
            return Val.error(ERR_VALUE)
        s = np.arange(n) if rv.n > 1 else np.zeros(n, dtype=np.int64)
        num = rv.num[s, p, :][:, None, :]
        kind = rv.kind[s, p, :][:, None, :]
        text = None if rv.text is None else rv.text[s, p, :][:, None, :]
    else:
        if rv.shape[1] != vc:
            return Val.error(ERR_VALUE)
        s = np.arange(n) if rv.n > 1 else np.zeros(n, dtype=np.int64)
        num = rv.num[s, :, p][:, :, None]
        kind = rv.kind[s, :, p][:, :, None]
        text = None if rv.text is None else rv.text[s, :, p][:, :, None]
    out = Val(num.astype(float), kind.astype(np.int8), text)
    if (~found).any():
        nf = Val.error(ERR_NA) if if_not_found is MISSING else if_not_found.val()
        out = select(found.reshape(n, 1, 1), None, out, nf)
    if err is not None:
        out = select(err.reshape(n, 1, 1) == 0, err.reshape(n, 1, 1), out, out)
    return out


@register("INDEX", "rvvv", 2, 4)
def _index(ctx, arr, row, col=MISSING, area=MISSING):
    if isinstance(arr, RefList):
        a, ae = _int_arg(or_default(area, 1.0))
        if a.shape[0] > 1:
            raise ScenarioSplit()
        if not 1 <= a[0] <= len(arr):
            return Val.error(ERR_REF)
        arr = arr[a[0] - 1]
    if isinstance(arr, Ref):
        R, C = arr.rows, arr.cols
    else:
        R, C = arr.shape
    r, re_ = _int_arg(or_default(row, 0.0) if row is not MISSING else Val.number(0.0))
    if col is MISSING:
        if R == 1 and C > 1:
            c, ce = r, re_
            r, re_ = np.zeros_like(c), None
        else:
            c, ce = np.zeros_like(r), None
    else:
        c, ce = _int_arg(col)
    err = first_error(re_, ce)
    uniform = r.shape[0] == 1 and c.shape[0] == 1
    if uniform:
        if err is not None and err[0]:
            return Val.error(int(err[0]))
        ri, ci = int(r[0]), int(c[0])
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


@register("CHOOSE", "vl*", 2)
def _choose(ctx, idx, *choices):
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


@register("ROW", "r", 0, 1)
def _row(ctx, ref=MISSING):
    if ref is MISSING:
        return Val.number(ctx.row)
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    if ctx.array and ref.rows > 1:
        return Val.numbers(np.arange(ref.r1, ref.r2 + 1, dtype=float).reshape(1, -1, 1))
    return Val.number(ref.r1)


@register("COLUMN", "r", 0, 1)
def _column(ctx, ref=MISSING):
    if ref is MISSING:
        return Val.number(ctx.col)
    if not isinstance(ref, Ref):
        return Val.error(ERR_VALUE)
    if ctx.array and ref.cols > 1:
        return Val.numbers(np.arange(ref.c1, ref.c2 + 1, dtype=float).reshape(1, 1, -1))
    return Val.number(ref.c1)


@register("ROWS", "r")
def _rows(ctx, x):
    if isinstance(x, Ref):
        return Val.number(x.rows)
    if isinstance(x, Val):
        return Val.number(x.shape[0])
    return Val.error(ERR_VALUE)


@register("COLUMNS", "r")
def _columns(ctx, x):
    if isinstance(x, Ref):
        return Val.number(x.cols)
    if isinstance(x, Val):
        return Val.number(x.shape[1])
    return Val.error(ERR_VALUE)


def _uniform_ints(*vals):
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


@register("OFFSET", "rvvvv", 3, 5, volatile=True)
def _offset(ctx, ref, rows, cols, height=MISSING, width=MISSING):
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


@register("INDIRECT", "vv", 1, 2, volatile=True)
def _indirect(ctx, text, a1=MISSING):
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
    if node[0] == "name":
        target = eng.resolve_name(node[2], ctx.sheet if node[1] is None else eng.sheet_index.get(node[1].lower()))
        if target is None:
            return Val.error(ERR_REF)
        node = target[0]
        if node[0] != "ref":
            return Val.error(ERR_REF)
    if node[0] != "ref":
        return Val.error(ERR_REF)
    _, sname, r1, c1, r2, c2 = node
    si = ctx.sheet if sname is None else eng.sheet_index.get(sname.lower())
    if si is None or eng.sheets[si].kind != "worksheet":
        return Val.error(ERR_REF)
    return Ref(si, r1, c1, r2, c2)


@register("TRANSPOSE", "a")
def _transpose(ctx, x):
    v = ctx.engine.read(x, ctx.scen) if isinstance(x, Ref) else ctx.value(x)
    return Val(v.num.transpose(0, 2, 1), v.kind.transpose(0, 2, 1),
               None if v.text is None else v.text.transpose(0, 2, 1))

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
