"""Text functions of the formula engine (Excel's category of the same name)."""

from __future__ import annotations

import math
import re

import numpy as np

from ..arguments import MISSING, REF, VALUE, Fn, ScenarioSplit
from ..ops import (
    approx15, concat, first_error, to_bool, to_num, to_text,
)
from ..references import Ref, RefList
from ..values import (
    BOOL, ERR_NULL, ERR_VALUE, NUM, STR,
    Val, number_to_text, text_to_number,
)
from .base import (
    NATIVE, align_all, first_error_rows, register,
    wildcard_regex,
)

__all__ = ["FUNCTIONS", "format_number"]

_BEFORE = frozenset(NATIVE)


def _text_fn(name, f, coercions, min_args=None, defaults=()):
    """Register ``name``, the element-wise function ``f`` over Python strings and numbers.

    ``coercions`` gives, per parameter, how the argument is coerced before ``f`` gets it:
    ``to_text``, ``to_num`` or ``to_bool`` (of :mod:`cryptoplan.workbook.engine.ops`).  The
    parameters from ``min_args`` on (by default the last ``len(defaults)``) are optional and
    take ``defaults`` when omitted.
    """
    nargs = len(coercions)
    min_args = nargs - len(defaults) if min_args is None else min_args

    def impl(ctx, *args):
        args = list(args) + [MISSING] * (nargs - len(args))
        vals = []
        for i, a in enumerate(args):
            if a is MISSING:
                vals.append(Val.from_python(defaults[i - min_args]) if i >= min_args else Val.empty())
            else:
                vals.append(a)
        vals = align_all(vals)
        conv, errs = [], []
        for coerce, v in zip(coercions, vals):
            x, e = coerce(v)
            conv.append(x)
            errs.append(e)
        err = first_error(*errs)
        out, eout = _distinct(element_wise, conv)
        out = np.asarray(out, dtype=object)
        eout = np.asarray(eout, dtype=np.int8)
        err = first_error(err, eout if eout.any() else None)
        # the result's type is its good elements' (an error element holds "" but is an error: with
        # many scenarios, or the cells of one shape, one error must not make FIND's numbers text)
        good = out if err is None else out[np.broadcast_to(np.asarray(err) == 0, out.shape)]
        types = set(map(type, good.flat)) or set(map(type, out.flat))
        if types <= _NUMBER_TYPES:
            if err is not None:
                out = np.where(np.broadcast_to(np.asarray(err) == 0, out.shape), out, 0.0)
            return Val.numbers(out.astype(float), err)
        if types == {bool}:
            if err is not None:
                out = np.where(np.broadcast_to(np.asarray(err) == 0, out.shape), out, False)
            return Val.bools(out.astype(float), err)
        return Val.texts(out, err)

    def guarded(*xs):
        """``(result, 0)``, or ``("", error code)`` for an element the function refuses."""
        try:
            return f(*xs), 0
        except _TextError as exc:
            return "", exc.code
        except (ValueError, OverflowError, IndexError):
            return "", ERR_VALUE

    element_wise = np.frompyfunc(guarded, nargs, 2)     # one C loop, broadcasting the arguments
    NATIVE[name] = Fn(name, impl, (VALUE,) * nargs, min_args, nargs)


_NUMBER_TYPES = frozenset({int, float, np.float64, np.int64})


def _distinct(element_wise, args):
    """``element_wise(*args)`` (a text function over broadcast arguments) computed once per
    distinct argument tuple: a sweep's column holds the same few texts and numbers again and
    again."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    if math.prod(shape) <= 64:
        return element_wise(*args)
    cols = [np.broadcast_to(a, shape).reshape(-1) for a in args]
    first, inv = _distinct_rows(cols)
    out, err = element_wise(*(c[first] for c in cols))
    return (np.asarray(out, dtype=object)[inv].reshape(shape), np.asarray(err, dtype=np.int8)[inv].reshape(shape))


def _distinct_rows(cols) -> tuple:
    """``(first, inverse)`` of the rows of equal-length columns, in order of first appearance:
    numbers told apart by their bits (-0.0 is not 0.0, which some formats show), texts by value."""
    size = len(cols[0])
    keys = [c.tolist() if c.dtype == object else
            np.ascontiguousarray(c, dtype=float).view(np.int64).tolist() for c in cols]
    items = keys[0] if len(keys) == 1 else list(zip(*keys))
    at = {k: i for i, k in enumerate(dict.fromkeys(items))}
    inv = np.fromiter(map(at.__getitem__, items), dtype=np.intp, count=size)
    first = np.full(len(at), size, dtype=np.intp)
    np.minimum.at(first, inv, np.arange(size, dtype=np.intp))
    return first, inv


class _TextError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def _need(cond):
    if not cond:
        raise _TextError(ERR_VALUE)


def _left(s, n):
    n = int(n)
    _need(n >= 0)
    return s[:n]


def _right(s, n):
    n = int(n)
    _need(n >= 0)
    return s[len(s) - n:] if n else ""


def _mid(s, start, n):
    start, n = int(start), int(n)
    _need(start >= 1 and n >= 0)
    return s[start - 1:start - 1 + n]


_TIME_RE = re.compile(r"^\s*(\d+):(\d{1,2})(?::(\d{1,2}(?:\.\d*)?))?\s*(?:([AP])M?)?\s*$", re.I)


def _time_of_day(s):
    """A time of day written h:mm[:ss][ AM|PM], as a fraction of a day; None if not one."""
    m = _TIME_RE.match(s)
    if not m:
        return None
    h, mi, sec = int(m.group(1)), int(m.group(2)), float(m.group(3) or 0)
    if mi > 59 or sec >= 60:
        return None
    if m.group(4):
        if not 0 <= h <= 12:
            return None
        h = h % 12 + (12 if m.group(4).upper() == "P" else 0)
    return (h * 3600 + mi * 60 + sec) / 86400.0


def _value(s):
    v = text_to_number(s)
    if v is None:
        v = _time_of_day(s)
    if v is None:
        raise _TextError(ERR_VALUE)
    return v


def _find(needle, hay, start, case=True):
    start = int(start)
    _need(1 <= start <= len(hay) + 1)
    if case:
        i = hay.find(needle, start - 1)
    else:
        # the wildcard pattern without its ^...$ anchors, searched from start_num on
        body = wildcard_regex(needle).pattern[1:-1]
        found = re.compile(body, re.S | re.I).search(hay, start - 1)
        i = found.start() if found else -1
    _need(i >= 0)
    return float(i + 1)


def _substitute(s, old, new, inst):
    if inst == "":
        return s.replace(old, new) if old else s
    k = int(float(inst))
    _need(k >= 1)
    if not old:
        return s
    idx = -1
    for _ in range(k):
        idx = s.find(old, idx + 1)
        if idx < 0:
            return s
    return s[:idx] + new + s[idx + len(old):]


_text_fn("LEN", lambda s: float(len(s)), (to_text,))
_text_fn("LEFT", _left, (to_text, to_num), defaults=(1.0,))
_text_fn("RIGHT", _right, (to_text, to_num), defaults=(1.0,))
_text_fn("MID", _mid, (to_text, to_num, to_num))
_text_fn("UPPER", lambda s: s.upper(), (to_text,))
_text_fn("LOWER", lambda s: s.lower(), (to_text,))
_text_fn("PROPER", lambda s: s.title(), (to_text,))
_text_fn("TRIM", lambda s: re.sub(" +", " ", s.strip(" ")), (to_text,))
_text_fn("VALUE", _value, (to_text,))
_text_fn("EXACT", lambda a, b: a == b, (to_text, to_text))
def _rept(s, n):
    _need(n >= 0 and len(s) * int(n) <= 32767)
    return s * int(n)


_text_fn("REPT", _rept, (to_text, to_num))
_text_fn("FIND", lambda a, b, st: _find(a, b, st, True), (to_text, to_text, to_num), defaults=(1.0,))
_text_fn("SEARCH", lambda a, b, st: _find(a, b, st, False), (to_text, to_text, to_num), defaults=(1.0,))
_text_fn("SUBSTITUTE", _substitute, (to_text, to_text, to_text, to_text), min_args=3, defaults=("",))


def _concat_impl(ctx, *args, ranges=False):
    acc = None
    for a in args:
        if a is MISSING:
            v = Val.string("")
        elif isinstance(a, (Ref, RefList)) and ranges:
            parts = []
            for ref in ([a] if isinstance(a, Ref) else list(a)):
                parts.append(ctx.engine.read(ref, ctx.scen))
            strs = []
            n = max(p.n for p in parts)
            errs = []
            for p in parts:
                t, e = to_text(p)
                strs.append(np.broadcast_to(t, (n,) + p.shape).reshape(n, -1))
                errs.append(first_error_rows(np.broadcast_to(p.kind, (n,) + p.shape).reshape(n, -1)))
            joined = np.array(["".join(row) for row in np.concatenate(strs, axis=1)], dtype=object)
            e = first_error(*errs)
            v = Val.texts(joined.reshape(n, 1, 1), None if e is None else e.reshape(n, 1, 1))
        else:
            v = ctx.value(a)
        if acc is None:
            acc = v
        else:
            acc = concat(acc, v)
    if acc is None:
        return Val.string("")
    t, e = to_text(acc)
    return Val.texts(t, e)


NATIVE["CONCATENATE"] = Fn("CONCATENATE", lambda ctx, *a: _concat_impl(ctx, *a), (), 1,
                           rest=(VALUE,))
NATIVE["CONCAT"] = Fn("CONCAT", lambda ctx, *a: _concat_impl(ctx, *a, ranges=True), (), 1,
                      rest=(REF,))


@register("TEXTJOIN", VALUE, VALUE, rest=(REF,), min_args=3)
def _textjoin(ctx, delim, ignore_empty, *args):
    d, de = to_text(delim)
    ig, ie = to_bool(ignore_empty)
    if d.shape[0] > 1 or ig.shape[0] > 1:
        raise ScenarioSplit()
    sep = d.reshape(-1)[0]
    skip = bool(ig.reshape(-1)[0])
    items = []
    n = 1
    for a in args:
        if a is MISSING:
            continue
        v = ctx.engine.read(a, ctx.scen) if isinstance(a, Ref) else ctx.value(a)
        t, e = to_text(v)
        if e is not None:
            return Val.error(int(e[e > 0].flat[0]))
        items.append(t.reshape(v.n, -1))
        n = max(n, v.n)
    rows = []
    for s in range(n):
        parts = []
        for t in items:
            for x in t[s if t.shape[0] > 1 else 0]:
                if skip and x == "":
                    continue
                parts.append(x)
        rows.append(sep.join(parts))
    return Val.texts(np.array(rows, dtype=object).reshape(n, 1, 1))


# TEXT(value, format): the number formats a planning sheet uses
_FMT_RE = re.compile(r"^(?P<pre>[^0#.,%]*?)(?P<int>[#0,]*0|#)(?:\.(?P<dec>[0#]+))?(?P<exp>[eE][+-]0+)?(?P<pct>%?)(?P<post>[^0#]*)$")


_BRACKET = re.compile(r"\[[^\]]*\]")
_COND = re.compile(r"^\[(<=|>=|<>|<|>|=)(-?[\d.]+)\]")
_TESTS = {"=": float.__eq__, "<>": float.__ne__, "<": float.__lt__, "<=": float.__le__, ">": float.__gt__,
          ">=": float.__ge__}


def _sections(fmt: str) -> list[str]:
    """A number format's ``;``-separated sections; a ``;`` inside double quotes is text."""
    out, cur, quoted = [], "", False
    for ch in fmt:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def format_number(x: float, fmt: str) -> str:
    """``x`` as Excel shows it in number format ``fmt``: the one routine for TEXT() and for the
    recalculated tables (the common formats: see docs/batch.md).

    Sections: ``positive;negative;zero``, the negative one shown without its sign, or
    conditions (``[<1]0.00;0``: the first section whose condition holds, else the last);
    colours and other brackets, ``_)`` padding, ``*`` fill and ``\\`` escapes are dropped,
    quoted text is kept as text.
    """
    f = fmt.strip()
    if f.lower() in ("general", "@", ""):
        return number_to_text(x)
    sections = _sections(f)
    chosen = sections[0]
    conds = [(_COND.match(sec), sec) for sec in sections]
    if any(m for m, _ in conds):
        chosen = sections[-1]
        for m, sec in conds:
            if m and _TESTS[m.group(1)](float(x), float(m.group(2))):
                chosen = sec
                break
    elif x < 0 and len(sections) > 1:
        chosen, x = sections[1], abs(x)
    elif x == 0 and len(sections) > 2:
        chosen = sections[2]
    chosen = _BRACKET.sub("", chosen).replace("\\", "").replace("_)", "").replace("*", "")
    return _format_section(x, chosen.replace('"', ""))


def _format_section(x: float, f: str) -> str:
    """``x`` in one section of a number format (no ``;``, brackets or quotes left)."""
    if f.strip().lower() in ("general", ""):
        return number_to_text(x)
    if not any(ch in f for ch in "0#?"):      # a section of text alone ("zero"): shown as written
        return f
    m = _FMT_RE.match(f)
    if not m:
        raise _TextError(16)
    dec = len(m.group("dec") or "")
    opt_dec = (m.group("dec") or "").count("#")
    if m.group("pct"):
        x = x * 100.0
    if m.group("exp"):
        s = f"{x:.{dec}E}"
        mant, e = s.split("E")
        digits = len(m.group("exp")) - 2
        return f"{m.group('pre')}{mant}E{e[0]}{abs(int(e)):0{digits}d}{m.group('pct')}{m.group('post')}"
    # Excel rounds half away from zero
    q = math.floor(abs(float(approx15(np.asarray(abs(x) * 10 ** dec)))) + 0.5) / 10 ** dec
    q = math.copysign(q, x) if x < 0 else q
    s = f"{abs(q):,.{dec}f}" if "," in (m.group("int") or "") else f"{abs(q):.{dec}f}"
    if opt_dec and "." in s:
        s = s.rstrip("0").rstrip(".") if opt_dec == dec else s
    if (m.group("int") or "").lstrip(",").startswith("#") and s.startswith("0.") and "0" not in m.group("int"):
        s = s[1:]
    neg = "-" if q < 0 and float(s.replace(",", "") or 0) != 0 else ""
    return f"{m.group('pre')}{neg}{s}{m.group('pct')}{m.group('post')}"


def _text_format(x, fmt):
    return format_number(float(x), fmt)


def _text_impl(ctx, value, fmt):
    vals = align_all([value, fmt])
    v, f = vals
    ft, fe = to_text(f)
    shape = np.broadcast_shapes(v.num.shape, ft.shape)
    out = np.empty(shape, dtype=object)
    err = np.zeros(shape, dtype=np.int8)
    vk = np.broadcast_to(v.kind, shape)
    vx = np.broadcast_to(v.num, shape)
    vt = None if v.text is None else np.broadcast_to(v.text, shape)
    ftb = np.broadcast_to(ft, shape)
    if vk.size > 64 and fe is None and (vk == NUM).all() and np.all(ftb == ftb.flat[0]):
        done = _text_of_distinct(vx, str(ftb.flat[0]))     # a sweep's column of numbers, one format
        if done is not None:
            return Val.texts(done, None)
    shown: dict = {}        # (number, format) -> its text: a sweep formats the same numbers again and again
    for idx in np.ndindex(shape):
        k = vk[idx]
        if k >= ERR_NULL:
            err[idx] = k
            out[idx] = ""
            continue
        if k == STR:
            num = text_to_number(vt[idx])
            if num is None:
                out[idx] = vt[idx]
                continue
        elif k == BOOL:
            out[idx] = "TRUE" if vx[idx] else "FALSE"
            continue
        else:
            num = float(vx[idx])
        key = (num, math.copysign(1.0, num), ftb[idx])     # -0.0 is not 0.0 to every format
        if key in shown:
            out[idx] = shown[key]
            continue
        try:
            out[idx] = shown[key] = format_number(num, ftb[idx])
        except _TextError:
            ctx.diag("TEXT", 16, f"number format {ftb[idx]!r} is not supported by the engine")
            err[idx] = 16
            out[idx] = ""
    return Val.texts(out, first_error(fe, err if err.any() else None))


def _text_of_distinct(x, fmt: str):
    """TEXT of every number of ``x`` in one format, each distinct number (to the bit) formatted
    once; None if the format is one the engine does not support."""
    flat = np.ascontiguousarray(x, dtype=float).reshape(-1)
    first, inv = _distinct_rows([flat])
    try:
        texts = np.array([format_number(u, fmt) for u in flat[first].tolist()], dtype=object)
    except _TextError:
        return None
    return texts[inv].reshape(np.shape(x))


NATIVE["TEXT"] = Fn("TEXT", _text_impl, (VALUE, VALUE))

#: The Excel functions this module adds to the registry, by name.
FUNCTIONS = tuple(sorted(set(NATIVE) - _BEFORE))
