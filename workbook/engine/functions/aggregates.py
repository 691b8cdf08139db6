"""Aggregates and conditional aggregates (COUNTIF, SUMIFS, ...) functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import re

import numpy as np

from ..arguments import ARRAY, MISSING, REF, VALUE, Fn
from ..ops import (
    approx_equal, first_error, to_num,
)
from ..references import Ref, RefList
from ..values import (
    BOOL, EMPTY, ERR_DIV0, ERR_NUM, ERR_VALUE, ERROR_CODES, NUM, STR,
    ExcelError, Val, text_to_number,
)
from .base import (
    NATIVE, error_array, first_error_rows, range_value, register,
    NotARange, wildcard_regex,
)

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)




def _collect(ctx, args, direct_mode="num"):
    """Numbers of SUM-like arguments: list of (values (n,K), used mask (n,K)), first error (n,)."""
    parts = []
    errs = []
    for a in args:
        if a is MISSING:
            continue
        if isinstance(a, (Ref, RefList)):
            for ref in ([a] if isinstance(a, Ref) else list(a)):
                v = ctx.engine.read(ref, ctx.scen)
                k = v.kind.reshape(v.n, -1)
                parts.append((v.num.reshape(v.n, -1), k == NUM))
                errs.append(first_error_rows(k))
            continue
        v = a
        if v.shape == (1, 1):
            if direct_mode == "num":
                x, e = to_num(v)
                ok = np.ones((v.n, 1), bool)
                if e is not None:
                    ok = (e.reshape(v.n, -1) == 0)
                parts.append((x.reshape(v.n, -1), ok))
                errs.append(None if e is None else e.reshape(v.n, -1)[:, 0])
            else:  # COUNT: direct numbers, bools and numeric text count, errors don't propagate
                x, e = to_num(v)
                ok = (v.kind != EMPTY).reshape(v.n, -1)
                if e is not None:
                    ok = ok & (e.reshape(v.n, -1) == 0)
                parts.append((x.reshape(v.n, -1), ok))
            continue
        k = v.kind.reshape(v.n, -1)
        parts.append((v.num.reshape(v.n, -1), k == NUM))
        errs.append(first_error_rows(k))
    return parts, first_error(*[None if e is None else e.astype(np.int8) for e in errs])


def _reduce(ctx, args, how):
    parts, err = _collect(ctx, args, "count" if how == "count" else "num")
    n = max([p[0].shape[0] for p in parts] + [1 if err is None else err.shape[0], 1])
    if parts:
        vals = np.concatenate([np.broadcast_to(p[0], (n, p[0].shape[1])) for p in parts], axis=1)
        used = np.concatenate([np.broadcast_to(p[1], (n, p[1].shape[1])) for p in parts], axis=1)
    else:
        vals = np.zeros((n, 0))
        used = np.zeros((n, 0), bool)
    cnt = used.sum(axis=1).astype(float)
    e2 = None
    with np.errstate(all="ignore"):
        if how == "sum":
            r = np.where(used, vals, 0.0).sum(axis=1)
        elif how == "count":
            return Val.numbers(cnt.reshape(n, 1, 1))
        elif how == "product":
            r = np.where(used, vals, 1.0).prod(axis=1)
            r = np.where(cnt == 0, 0.0, r)
        elif how == "average":
            r = np.where(used, vals, 0.0).sum(axis=1) / np.where(cnt == 0, 1, cnt)
            e2 = error_array(cnt == 0, ERR_DIV0)
        elif how == "min":
            r = np.where(cnt == 0, 0.0, np.where(used, vals, np.inf).min(axis=1, initial=np.inf))
        elif how == "max":
            r = np.where(cnt == 0, 0.0, np.where(used, vals, -np.inf).max(axis=1, initial=-np.inf))
        elif how == "sumsq":
            r = np.where(used, vals * vals, 0.0).sum(axis=1)
        elif how == "median":
            v = np.where(used, vals, np.nan)
            r = np.where(cnt == 0, 0.0, np.nan_to_num(np.nanmedian(v, axis=1) if v.shape[1] else np.zeros(n)))
            e2 = error_array(cnt == 0, ERR_NUM)
        else:  # pragma: no cover
            raise InputError(how)
    e = first_error(err, e2)
    return Val.numbers(r.reshape(n, 1, 1), None if e is None else e.reshape(-1, 1, 1))


for _name, _how in {"SUM": "sum", "COUNT": "count", "PRODUCT": "product", "AVERAGE": "average",
                    "MIN": "min", "MAX": "max", "SUMSQ": "sumsq", "MEDIAN": "median"}.items():
    NATIVE[_name] = Fn(_name, (lambda how: lambda ctx, *a: _reduce(ctx, a, how))(_how), (), 1,
                       rest=(REF,))


@register("COUNTA", rest=(REF,), min_args=1)
def _counta(ctx, *args):
    total = None
    for a in args:
        if a is MISSING:
            c = np.zeros(1)
        elif isinstance(a, (Ref, RefList)):
            c = 0
            for ref in ([a] if isinstance(a, Ref) else list(a)):
                v = ctx.engine.read(ref, ctx.scen)
                c = c + (v.kind != EMPTY).reshape(v.n, -1).sum(axis=1)
        elif a.shape == (1, 1):
            c = np.ones(a.n)
        else:
            c = (a.kind != EMPTY).reshape(a.n, -1).sum(axis=1)
        total = c if total is None else total + c
    return Val.numbers(np.asarray(total, float).reshape(-1, 1, 1))


@register("COUNTBLANK", REF)
def _countblank(ctx, a):
    v = ctx.engine.read(a, ctx.scen) if isinstance(a, Ref) else a
    blank = (v.kind == EMPTY)
    if v.text is not None:
        blank = blank | ((v.kind == STR) & (v.text == ""))
    return Val.numbers(blank.reshape(v.n, -1).sum(axis=1).astype(float).reshape(-1, 1, 1))


@register("SUMPRODUCT", rest=(ARRAY,), min_args=1)
def _sumproduct(ctx, *args):
    vals = []
    for a in args:
        v = ctx.engine.read(a, ctx.scen) if isinstance(a, Ref) else ctx.value(a)
        vals.append(v)
    shape = vals[0].shape
    if any(v.shape != shape for v in vals):
        return Val.error(ERR_VALUE)
    n = max(v.n for v in vals)
    prod = np.ones((n,) + shape)
    errs = []
    for v in vals:
        x = np.where(v.kind == NUM, v.num, 0.0)
        prod = prod * x
        errs.append(first_error_rows(v.kind.reshape(v.n, -1)))
    e = first_error(*errs)
    return Val.numbers(prod.reshape(n, -1).sum(axis=1).reshape(n, 1, 1),
                       None if e is None else e.reshape(-1, 1, 1))


# -------------------------------------------------------------- criteria
_CRIT_RE = re.compile(r"^(<=|>=|<>|<|>|=)?(.*)$", re.S)




def _criterion_mask(v: Val, crit) -> np.ndarray:
    """Boolean mask over ``v`` for one criterion (a Python value)."""
    k = v.kind
    if isinstance(crit, bool):
        return (k == BOOL) & ((v.num != 0) == crit)
    if isinstance(crit, float):
        return (k == NUM) & approx_equal(v.num, crit)
    if crit is None:
        return (k == EMPTY)
    if isinstance(crit, ExcelError):
        return k == crit.code
    m = _CRIT_RE.match(crit)
    assert m is not None                # the pattern matches every string
    op, rhs = m.group(1) or "=", m.group(2)
    num = text_to_number(rhs) if rhs.strip() else None
    code = ERROR_CODES.get(rhs.upper())
    if code is not None:  # "#N/A": the cells holding that error
        eq = k == code
        return eq if op == "=" else ~eq if op == "<>" else np.zeros(k.shape, bool)
    if rhs.upper() in ("TRUE", "FALSE"):
        b = rhs.upper() == "TRUE"
        eq = (k == BOOL) & ((v.num != 0) == b)
        return eq if op == "=" else ~eq if op == "<>" else np.zeros(k.shape, bool)
    if num is not None:
        isn = k == NUM
        x = v.num
        # the number, and the same text ("12" matches 12 and the text "12", not " 12")
        eq = isn & approx_equal(x, num)
        if op in ("=", "<>") and v.text is not None:
            low = rhs.lower()
            same = np.frompyfunc(lambda t: isinstance(t, str) and t.lower() == low, 1, 1)(v.text)
            eq = eq | ((k == STR) & same.astype(bool))
        res = {"=": eq, "<>": ~eq,
               "<": isn & (x < num) & ~approx_equal(x, num), "<=": isn & ((x < num) | approx_equal(x, num)),
               ">": isn & (x > num) & ~approx_equal(x, num), ">=": isn & ((x > num) | approx_equal(x, num))}[op]
        return res
    if rhs == "":
        blank = (k == EMPTY)
        if v.text is not None:
            blank = blank | ((k == STR) & (v.text == ""))
        if op == "=":
            return blank if m.group(1) else blank
        if op == "<>":
            return ~blank
        return np.zeros(k.shape, bool)
    isstr = k == STR
    texts = v.text if v.text is not None else np.full(k.shape, "", dtype=object)
    if op in ("=", "<>"):
        if any(ch in rhs for ch in "*?"):
            rx = wildcard_regex(rhs)
            hit = np.frompyfunc(lambda t: bool(rx.match(t)) if isinstance(t, str) else False, 1, 1)(texts)
        else:
            low = rhs.lower()
            hit = np.frompyfunc(lambda t: isinstance(t, str) and t.lower() == low, 1, 1)(texts)
        eq = isstr & hit.astype(bool)
        return eq if op == "=" else ~eq
    low = rhs.lower()
    cmp = {"<": lambda t: t.lower() < low, "<=": lambda t: t.lower() <= low,
           ">": lambda t: t.lower() > low, ">=": lambda t: t.lower() >= low}[op]
    hit = np.frompyfunc(lambda t: isinstance(t, str) and cmp(t), 1, 1)(texts)
    return isstr & hit.astype(bool)


def _crit_masks(ctx, rng: Val, crit: Val) -> np.ndarray:
    """Mask (n, R, C) over ``rng`` for a criterion that may vary by scenario."""
    n = max(rng.n, crit.n)
    if crit.n == 1:
        return np.broadcast_to(_criterion_mask(rng, _crit_py(crit, 0)), (n,) + rng.shape)
    out = np.zeros((n,) + rng.shape, bool)
    groups: dict = {}
    for s in range(crit.n):
        groups.setdefault(_key(_crit_py(crit, s)), []).append(s)
    for idx in groups.values():
        m = _criterion_mask(rng, _crit_py(crit, idx[0]))
        out[idx] = m if rng.n == 1 else m[idx]
    return out


def _crit_py(v: Val, s):
    x = v.element(s)
    if isinstance(x, float):
        return x
    return x


def _key(x):
    return (type(x).__name__, x if not isinstance(x, str) else x)






def _nominal_shape(a):
    """Rows and columns of a range argument as written (a whole column is 1,048,576 rows)."""
    if isinstance(a, Ref):
        return a.rows, a.cols
    if isinstance(a, RefList):
        raise NotARange()
    return a.shape


def _ifs_reduce(ctx, how, target, pairs, same_size=False):
    """``same_size``: the *IFS functions, whose ranges must all have the target's rows and
    columns (else #VALUE!); SUMIF and AVERAGEIF instead take the target from its top-left
    cell with the size of the criteria range."""
    try:
        if same_size:
            shapes = {_nominal_shape(a) for a in [rng for rng, _ in pairs] + ([target] if target is not None else [])}
            if len(shapes) > 1:
                return Val.error(ERR_VALUE)
        first_ref = pairs[0][0] if isinstance(pairs[0][0], Ref) else None
        mask = None
        shape = None
        for rng, crit in pairs:
            rv = range_value(ctx, rng, first_ref if rng is not pairs[0][0] else None)
            if shape is None:
                shape = rv.shape
            elif rv.shape != shape:
                return Val.error(ERR_VALUE)
            m = _crit_masks(ctx, rv, crit)
            mask = m if mask is None else (mask & m)
        tv = None
        if target is not None:
            tv = range_value(ctx, target, first_ref)
            if tv.shape != shape:
                return Val.error(ERR_VALUE)
    except NotARange:
        return Val.error(ERR_VALUE)
    n = mask.shape[0] if tv is None else max(mask.shape[0], tv.n)
    mask = np.broadcast_to(mask, (n,) + shape).reshape(n, -1)
    if how == "count":
        return Val.numbers(mask.sum(axis=1).astype(float).reshape(n, 1, 1))
    k = np.broadcast_to(tv.kind, (n,) + shape).reshape(n, -1)
    x = np.broadcast_to(tv.num, (n,) + shape).reshape(n, -1)
    use = mask & (k == NUM)
    err = first_error_rows(np.where(mask, k, 0))
    cnt = use.sum(axis=1)
    e2 = None
    if how == "sum":
        r = np.where(use, x, 0).sum(axis=1)
    elif how == "average":
        r = np.where(use, x, 0).sum(axis=1) / np.maximum(cnt, 1)
        e2 = error_array(cnt == 0, ERR_DIV0)
    elif how == "max":
        r = np.where(cnt == 0, 0, np.where(use, x, -np.inf).max(axis=1, initial=-np.inf))
    else:
        r = np.where(cnt == 0, 0, np.where(use, x, np.inf).min(axis=1, initial=np.inf))
    e = first_error(err, e2)
    return Val.numbers(r.reshape(n, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@register("COUNTIF", REF, VALUE)
def _countif(ctx, rng, crit):
    return _ifs_reduce(ctx, "count", None, [(rng, crit)])


@register("SUMIF", REF, VALUE, REF, min_args=2)
def _sumif(ctx, rng, crit, target=MISSING):
    return _ifs_reduce(ctx, "sum", rng if target is MISSING else target, [(rng, crit)])


@register("AVERAGEIF", REF, VALUE, REF, min_args=2)
def _averageif(ctx, rng, crit, target=MISSING):
    return _ifs_reduce(ctx, "average", rng if target is MISSING else target, [(rng, crit)])


def _pairs(args):
    if len(args) % 2:
        raise NotARange()
    return [(args[i], args[i + 1]) for i in range(0, len(args), 2)]


def _ifs_fn(how, with_target):
    def impl(ctx, *args):
        try:
            if with_target:
                return _ifs_reduce(ctx, how, args[0], _pairs(args[1:]), same_size=True)
            return _ifs_reduce(ctx, how, None, _pairs(args), same_size=True)
        except NotARange:
            return Val.error(ERR_VALUE)
    return impl


# COUNTIFS(range, criterion, ...); SUMIFS(sum range, range, criterion, ...)
NATIVE["COUNTIFS"] = Fn("COUNTIFS", _ifs_fn("count", False), (), 2, rest=(REF, VALUE))
for _name, _how in {"SUMIFS": "sum", "AVERAGEIFS": "average", "MAXIFS": "max", "MINIFS": "min"}.items():
    NATIVE[_name] = Fn(_name, _ifs_fn(_how, True), (REF,), 3, rest=(REF, VALUE))

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
