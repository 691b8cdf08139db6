"""Logical functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations


import numpy as np

from ..arguments import LAZY, MISSING, REF, VALUE, Fn
from ..ops import (
    compare, first_error, to_bool, to_num,
)
from ..references import Ref, RefList
from ..values import (
    BOOL, ERR_NA, ERR_NULL, ERR_VALUE, NUM, Val,
)
from .base import (
    NATIVE, error_array, first_error_rows, register,
    select,
)

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)




@register("IF", VALUE, LAZY, LAZY, min_args=1)
def _if(ctx, cond, then=MISSING, other=None):
    if cond is MISSING:
        cond = Val.empty()
    b, e = to_bool(cond)
    has_other = other is not None
    then_raw = (lambda: Val.number(0.0)) if then is MISSING else then.raw
    if not has_other:
        def other_raw():
            return Val.boolean(False)
    elif other is MISSING:
        def other_raw():
            return Val.number(0.0)
    else:
        other_raw = other.raw
    if e is None and cond.shape == (1, 1):
        if b.all():
            return then_raw()
        if not b.any():
            return other_raw()
    t = ctx.value(then_raw())
    f = ctx.value(other_raw())
    return select(b != 0, e, t, f)


def _catch(ctx, value, alt, codes):
    if value is MISSING:
        value = Val.empty()
    k = value.kind
    caught = np.isin(k, list(codes))
    if not caught.any():
        return value
    a = Val.number(0.0) if alt is MISSING else alt.val()
    return select(caught, None, a, value)


_ALL_ERRORS = [c for c in range(ERR_NULL, ERR_NULL + 8)]


@register("IFERROR", VALUE, LAZY)
def _iferror(ctx, value, alt):
    return _catch(ctx, value, alt, _ALL_ERRORS)


@register("IFNA", VALUE, LAZY)
def _ifna(ctx, value, alt):
    return _catch(ctx, value, alt, [ERR_NA])


def _ifs(ctx, *args):
    if len(args) % 2:
        ctx.diag("IFS", ERR_VALUE, "IFS() takes condition/value pairs")
        return Val.error(ERR_VALUE)
    result = Val.error(ERR_NA)  # no condition TRUE
    # compose from the last pair: the first TRUE condition (or error) wins
    for i in range(len(args) - 2, -1, -2):
        cond = Val.empty() if args[i] is MISSING else args[i]
        b, e = to_bool(cond)
        v = Val.number(0.0) if args[i + 1] is MISSING else args[i + 1].val()
        result = select(b != 0, e, v, result)
    return result


# IFS(condition, value, condition, value, ...)
NATIVE["IFS"] = Fn("IFS", _ifs, (), 2, rest=(VALUE, LAZY))


def _values_for_logic(ctx, args):
    """Booleans (n, K) from AND/OR arguments; text and empty cells in ranges are skipped."""
    parts = []
    errs = []
    for a in args:
        if a is MISSING:
            continue
        if isinstance(a, (Ref, RefList)):
            refs = [a] if isinstance(a, Ref) else list(a)
            for ref in refs:
                v = ctx.engine.read(ref, ctx.scen)
                k = v.kind.reshape(v.n, -1)
                use = (k == NUM) | (k == BOOL)
                parts.append((v.num.reshape(v.n, -1) != 0, use))
                errs.append(first_error_rows(k))
        else:
            v = a
            if v.shape == (1, 1):
                b, e = to_bool(v)
                parts.append((b.reshape(v.n, -1) != 0, np.ones((v.n, 1), bool)))
                errs.append(None if e is None else e.reshape(v.n, -1)[:, 0])
            else:
                k = v.kind.reshape(v.n, -1)
                use = (k == NUM) | (k == BOOL)
                parts.append((v.num.reshape(v.n, -1) != 0, use))
                errs.append(first_error_rows(k))
    return parts, first_error(*errs)


def _logic(ctx, args, how):
    parts, err = _values_for_logic(ctx, args)
    n = max([p[0].shape[0] for p in parts] + [1])
    count = np.zeros(n)
    acc = np.zeros(n) if how != "and" else np.ones(n)
    for b, use in parts:
        b = np.broadcast_to(b, (n, b.shape[1]))
        use = np.broadcast_to(use, b.shape)
        count += use.sum(axis=1)
        t = (b & use).sum(axis=1)
        if how == "and":
            acc = acc * ((t == use.sum(axis=1)))
        elif how == "or":
            acc = np.maximum(acc, (t > 0))
        else:
            acc = (acc + t) % 2
    e = first_error(err, error_array(count == 0, ERR_VALUE))
    return Val.bools(acc.reshape(n, 1, 1), None if e is None else e.reshape(-1, 1, 1))


@register("AND", rest=(REF,), min_args=1)
def _and(ctx, *args):
    return _logic(ctx, args, "and")


@register("OR", rest=(REF,), min_args=1)
def _or(ctx, *args):
    return _logic(ctx, args, "or")


@register("XOR", rest=(REF,), min_args=1)
def _xor(ctx, *args):
    return _logic(ctx, args, "xor")


@register("NOT", VALUE)
def _not(ctx, x):
    b, e = to_bool(x)
    return Val.bools(b == 0, e)


@register("TRUE")
def _true(ctx):
    return Val.boolean(True)


@register("FALSE")
def _false(ctx):
    return Val.boolean(False)


@register("NA")
def _na(ctx):
    return Val.error(ERR_NA)


@register("SWITCH", VALUE, rest=(LAZY,), min_args=3)
def _switch(ctx, expr, *rest):
    pairs = rest[:len(rest) - len(rest) % 2]
    default = rest[-1] if len(rest) % 2 else None
    result = Val.error(ERR_NA) if default is None else default.val()
    # later pairs first so that the first match wins
    for i in range(len(pairs) - 2, -1, -2):
        v = pairs[i].val()
        eq = compare("=", expr, v)
        m, e = to_num(eq)
        result = select(m != 0, e, pairs[i + 1].val(), result)
    return result

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
