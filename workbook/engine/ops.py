"""Excel coercions and operators over :class:`~cryptoplan.workbook.engine.values.Val`.

Semantics follow Excel (and LibreOffice, which agrees on these):

* arithmetic coerces booleans to 0/1, empty cells to 0 and numeric text
  (``"2"``, ``"1,000"``, ``"50%"``) to numbers; other text gives ``#VALUE!``;
* the first error in operand order propagates;
* comparisons order numbers < text < booleans, compare text without regard to
  case, treat an empty cell as 0, ``""`` or FALSE (whatever the other side is),
  and treat numbers equal within 15 significant digits as equal (so
  ``=0.1+0.2=0.3`` is TRUE, as in Excel);
* ``&`` joins the text forms (numbers in General format, TRUE/FALSE);
* arrays of different sizes are expanded Excel's way: a single row or column
  is repeated, and cells outside the smaller array are ``#N/A``.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from .values import (
    BOOL, EMPTY, ERR_DIV0, ERR_NA, ERR_NULL, ERR_NUM, ERR_VALUE, NUM, STR, Val,
    number_to_text, text_to_number,
)

__all__ = ["to_num", "to_bool", "to_text", "first_error", "align", "binary_op", "unary_minus",
           "percent", "compare", "concat", "approx_equal", "approx15"]

_EPS = 2.0 ** -48  # LibreOffice's rtl::math::approxEqual tolerance


def first_error(*errs):
    """Element-wise first non-zero error code among ``errs`` (``None`` entries skipped)."""
    out = None
    for e in errs:
        if e is None:
            continue
        out = e if out is None else np.where(out > 0, out, e)
    return out


def _text_numbers(text: np.ndarray, mask: np.ndarray):
    """Convert the text elements under ``mask`` to numbers; unparsable ones -> #VALUE!."""
    num = np.zeros(text.shape)
    err = np.zeros(text.shape, dtype=np.int8)
    cache: dict[str, float | None] = {}
    for idx in zip(*np.nonzero(mask)):
        s = text[idx]
        if s not in cache:
            cache[s] = text_to_number(s)
        v = cache[s]
        if v is None:
            err[idx] = ERR_VALUE
        else:
            num[idx] = v
    return num, err


def to_num(v: Val):
    """``(numbers, errors)``: Excel's arithmetic coercion; ``errors`` is None when none."""
    if v.is_plain_number():
        return v.num, None
    k = v.kind
    err = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    num = v.num
    s = k == STR
    if s.any():
        assert v.text is not None       # string elements come with their text
        tn, te = _text_numbers(v.text, s)
        num = np.where(s, tn, num)
        err = np.where(s, te, err).astype(np.int8)
    # EMPTY and BOOL already carry 0 / 0-1 in ``num``
    return num, (err if err.any() else None)


_TRUE_FALSE = {"TRUE": 1.0, "FALSE": 0.0}


def to_bool(v: Val):
    """``(bools as 0/1 floats, errors)``: Excel's logical coercion (text TRUE/FALSE only)."""
    if v.is_plain_number():
        return (v.num != 0).astype(float), None
    k = v.kind
    err = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    b = (v.num != 0).astype(float)
    s = k == STR
    if s.any():
        assert v.text is not None       # string elements come with their text
        for idx in zip(*np.nonzero(s)):
            t = str(v.text[idx]).strip().upper()
            if t in _TRUE_FALSE:
                b[idx] = _TRUE_FALSE[t]
            else:
                err[idx] = ERR_VALUE
    return b, (err if err.any() else None)


def to_text(v: Val):
    """``(object array of str, errors)``: the text Excel's ``&`` would use."""
    k = v.kind
    out = np.empty(k.shape, dtype=object)
    err = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    out[...] = ""
    numk = k == NUM
    if numk.any():      # each distinct number formatted once
        uniq, inv = np.unique(v.num[numk], return_inverse=True)
        out[numk] = np.array([number_to_text(x) for x in uniq.tolist()], dtype=object)[inv.reshape(-1)]
    b = k == BOOL
    if b.any():
        out[b] = np.where(v.num[b] != 0, "TRUE", "FALSE")
    s = k == STR
    if s.any():
        assert v.text is not None       # string elements come with their text
        out[s] = v.text[s]
    return out, (err if err.any() else None)


def align(a: Val, b: Val):
    """Expand two values to a common array shape (Excel's array expansion)."""
    (ra, ca), (rb, cb) = a.shape, b.shape
    if (ra, ca) == (rb, cb):
        return a, b
    r = max(ra, rb)
    c = max(ca, cb)
    return expand(a, r, c), expand(b, r, c)


def expand(v: Val, r: int, c: int) -> Val:
    """``v`` spread to ``r`` x ``c`` as Excel expands a row, a column or a single cell (#N/A outside a larger range)."""
    vr, vc = v.shape
    if (vr, vc) == (r, c):
        return v
    n = v.n
    rr = r if vr == 1 else vr
    cc = c if vc == 1 else vc
    v = v.broadcast(n, rr, cc)
    if (rr, cc) == (r, c):
        return v
    num = np.zeros((n, r, c))
    kind = np.full((n, r, c), ERR_NA, dtype=np.int8)
    num[:, :rr, :cc] = v.num
    kind[:, :rr, :cc] = v.kind
    text = None
    if v.text is not None:
        text = np.empty((n, r, c), dtype=object)
        text[:, :rr, :cc] = v.text
    return Val(num, kind, text)


def approx15(x: np.ndarray) -> np.ndarray:
    """Round to 15 significant digits (Excel/LibreOffice's view of a double)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ax = np.abs(x)
        e = np.floor(np.log10(np.where(ax > 0, ax, 1.0)))
        scale = 10.0 ** (14 - e)
        y = np.round(x * scale) / scale
    return np.where(np.isfinite(y) & (ax > 0) & (ax < 1e300), y, x)


def approx_equal(a, b):
    """Spreadsheet equality of numbers: equal, or within a relative 2**-48 (LibreOffice's approxEqual)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return (a == b) | (np.abs(a - b) <= _EPS * np.maximum(np.abs(a), np.abs(b)))


def binary_op(op: str, a: Val, b: Val) -> Val:
    """``+ - * / ^`` element-wise with Excel coercion and error rules."""
    a, b = align(a, b)
    x, ex = to_num(a)
    y, ey = to_num(b)
    err = first_error(ex, ey)
    with np.errstate(all="ignore"):
        if op == "+":
            # LibreOffice's approxAdd: operands that cancel within 15 digits give 0
            r = np.where(approx_equal(x, -y), 0.0, x + y)
        elif op == "-":
            r = np.where(approx_equal(x, y), 0.0, x - y)
        elif op == "*":
            r = x * y
        elif op == "/":
            z = y == 0
            r = np.where(z, 0.0, x / np.where(z, 1.0, y))
            if z.any():
                err = first_error(err, np.where(z, ERR_DIV0, 0).astype(np.int8))
        elif op == "^":
            bad = (x == 0) & (y <= 0)  # 0^0 is #NUM! in Excel; 0^-1 is #DIV/0!
            r = np.power(x, y)
            if bad.any():
                err = first_error(err, np.where(bad, np.where(y == 0, ERR_NUM, ERR_DIV0), 0)
                                  .astype(np.int8))
                r = np.where(bad, 0.0, r)
        else:  # pragma: no cover - parser only emits the above
            raise InputError(op)
    return Val.numbers(r, err)


def unary_minus(a: Val) -> Val:
    """``-a`` (text that reads as a number converted, other text #VALUE!)."""
    x, e = to_num(a)
    return Val.numbers(-x, e)


def percent(a: Val) -> Val:
    """``a%``: ``a / 100``."""
    x, e = to_num(a)
    return Val.numbers(x / 100.0, e)


#: Each element's str.lower, called from the C loop (every element here is a str).
_LOWER = np.frompyfunc(str.lower, 1, 1)


def compare(op: str, a: Val, b: Val) -> Val:
    """``= <> < <= > >=`` with Excel's type ordering (numbers < text < booleans)."""
    a, b = align(a, b)
    ka, kb = a.kind, b.kind
    err = first_error(np.where(ka >= ERR_NULL, ka, 0).astype(np.int8) if not a.is_plain_number() else None,
                      np.where(kb >= ERR_NULL, kb, 0).astype(np.int8) if not b.is_plain_number() else None)
    if a.is_plain_number() and b.is_plain_number():
        return Val.bools(_num_cmp(op, a.num, b.num))
    shape = np.broadcast_shapes(ka.shape, kb.shape)
    ka = np.broadcast_to(ka, shape)
    kb = np.broadcast_to(kb, shape)
    # an empty cell takes the type of the other side (0, "" or FALSE)
    ea, eb = ka == EMPTY, kb == EMPTY
    ta = np.where(ea, np.where(eb, NUM, kb), ka)
    tb = np.where(eb, np.where(ea, NUM, ka), kb)
    rank = {NUM: 0, STR: 1, BOOL: 2}
    ra = np.select([ta == NUM, ta == STR, ta == BOOL], [0, 1, 2], 0)
    rb = np.select([tb == NUM, tb == STR, tb == BOOL], [0, 1, 2], 0)
    del rank
    xa = np.broadcast_to(a.num, shape)
    xb = np.broadcast_to(b.num, shape)
    res = _num_cmp(op, ra.astype(float), rb.astype(float))
    same = ra == rb
    numeric = same & (ra != 1)
    if numeric.any():
        res = np.where(numeric, _num_cmp(op, xa, xb), res)
    strs = same & (ra == 1)
    if strs.any():
        sa = np.full(shape, "", dtype=object)
        sb = np.full(shape, "", dtype=object)
        if a.text is not None:
            sa = np.where(ka == STR, np.broadcast_to(a.text, shape), sa)
        if b.text is not None:
            sb = np.where(kb == STR, np.broadcast_to(b.text, shape), sb)
        la = _LOWER(sa[strs])
        lb = _LOWER(sb[strs])
        cmp = _TEXT_CMP[op](la, lb)                       # the one comparison asked for
        res = res.copy()
        res[strs] = np.asarray(cmp, dtype=bool)
    return Val.bools(res, err)


_TEXT_CMP = {"=": np.equal, "<>": np.not_equal, "<": np.less, "<=": np.less_equal, ">": np.greater,
             ">=": np.greater_equal}


def _num_cmp(op: str, x, y):
    eq = approx_equal(x, y)
    if op == "=":
        return eq
    if op == "<>":
        return ~eq
    if op == "<":
        return (x < y) & ~eq
    if op == "<=":
        return (x < y) | eq
    if op == ">":
        return (x > y) & ~eq
    if op == ">=":
        return (x > y) | eq
    raise InputError(op)  # pragma: no cover


def concat(a: Val, b: Val) -> Val:
    """``a & b``: both as text, broadcast as Excel does; errors pass through."""
    a, b = align(a, b)
    ta, ea = to_text(a)
    tb, eb = to_text(b)
    shape = np.broadcast_shapes(ta.shape, tb.shape)
    ta = np.broadcast_to(ta, shape)
    tb = np.broadcast_to(tb, shape)
    out = np.add(ta, tb, dtype=object).reshape(shape)     # str + str for each element, in C
    return Val.texts(out, first_error(ea, eb))
