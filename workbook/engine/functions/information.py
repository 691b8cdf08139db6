"""Information functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations


import numpy as np

from ..arguments import MISSING, REF, VALUE, Fn
from ..ops import (
    to_num,
)
from ..references import Ref, RefList
from ..values import (
    BOOL, EMPTY, ERR_NA, ERR_NULL, NUM, STR,
    Val, not_computed,
)
from .base import (
    NATIVE, error_array, register,
)

__all__ = ["FUNCTIONS"]

_BEFORE = frozenset(NATIVE)


def _is(code_test):
    def impl(ctx, x):
        if x is MISSING:
            x = Val.empty()
        k = x.kind
        internal = not_computed(k)
        r = code_test(k, x)
        return Val.bools(r, error_array(internal, int(k[internal].flat[0])) if internal.any() else None)
    return impl


for _name, _test in {
    "ISERROR": lambda k, x: k >= ERR_NULL,
    "ISERR": lambda k, x: (k >= ERR_NULL) & (k != ERR_NA),
    "ISNA": lambda k, x: k == ERR_NA,
    "ISNUMBER": lambda k, x: k == NUM,
    "ISTEXT": lambda k, x: k == STR,
    "ISNONTEXT": lambda k, x: k != STR,
    "ISLOGICAL": lambda k, x: k == BOOL,
    "ISBLANK": lambda k, x: k == EMPTY,
}.items():
    NATIVE[_name] = Fn(_name, _is(_test), (VALUE,))


@register("ISEVEN", VALUE)
def _iseven(ctx, x):
    n, e = to_num(x)
    return Val.bools(np.trunc(n) % 2 == 0, e)


@register("ISODD", VALUE)
def _isodd(ctx, x):
    n, e = to_num(x)
    return Val.bools(np.trunc(n) % 2 == 1, e)


@register("ISREF", REF)
def _isref(ctx, x):
    return Val.boolean(isinstance(x, (Ref, RefList)))


@register("ERROR.TYPE", VALUE)
def _error_type(ctx, x):
    k = x.kind.astype(float)
    is_err = (k >= ERR_NULL) & (k < ERR_NULL + 8)
    return Val.numbers(np.where(is_err, k - ERR_NULL + 1, 0), error_array(~is_err, ERR_NA))


@register("N", VALUE)
def _n(ctx, x):
    k = x.kind
    num = np.where((k == NUM) | (k == BOOL), x.num, 0.0)
    e = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    return Val.numbers(num, e if e.any() else None)


@register("T", VALUE)
def _t(ctx, x):
    k = x.kind
    t = np.full(k.shape, "", dtype=object)
    if x.text is not None:
        t = np.where(k == STR, x.text, t)
    e = np.where(k >= ERR_NULL, k, 0).astype(np.int8)
    return Val.texts(t, e if e.any() else None)


@register("TYPE", VALUE)
def _type(ctx, x):
    k = x.kind
    code = np.select([k == NUM, k == STR, k == BOOL, k >= ERR_NULL, k == EMPTY], [1, 2, 4, 16, 1], 1)
    if x.shape != (1, 1):
        code = np.full((x.n, 1, 1), 64)
    return Val.numbers(code.astype(float))

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
