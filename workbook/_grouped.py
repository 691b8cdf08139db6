"""Evaluating a Python function over many spreadsheet elements in as few calls as possible.

The machinery under :mod:`cryptoplan.workbook.catalog_functions`: elements are grouped by
their non-numeric arguments and identical argument rows are computed once (:func:`group_ids`,
:func:`first_of_groups`, :func:`run_groups`); a vector call that fails for some elements gives
those their messages and the rest one more call; results collect in an :class:`Out` and
become the engine's value with :func:`finish`.  Arguments broadcast as Excel does
(:func:`broadcast_args`).
"""

from __future__ import annotations

import math

import numpy as np

from cryptoplan.addin.errors import ErrorText
from cryptoplan.model._numeric import unique_rows

from .engine.ops import expand
from .engine.values import BOOL, EMPTY, ERR_NUM, ERR_VALUE, NUM, STR, Val

__all__ = ["ERROR_TEXT_CODE", "Out", "run_groups", "group_ids", "first_of_groups", "broadcast_args", "finish"]

#: Diagnostic code for an add-in error *text* (the add-in returns text, not error values).
ERROR_TEXT_CODE = STR


def _result_element(x):
    """(num, kind, text) of one Python result."""
    if isinstance(x, (bool, np.bool_)):
        return float(x), BOOL, None
    if isinstance(x, str):
        return 0.0, STR, x
    if x is None:
        return 0.0, EMPTY, None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return 0.0, ERR_VALUE, None
    if not math.isfinite(f):
        return 0.0, ERR_NUM, None
    return f, NUM, None


class Out:
    """Flat result buffers for E elements."""

    def __init__(self, E):
        self.num = np.zeros(E)
        self.kind = np.zeros(E, dtype=np.int8)
        self.text = None
        self.errors = 0             # elements holding the add-in's error text
        self.first_error = None

    def put(self, i, x):
        num, kind, text = _result_element(x)
        self.num[i] = num
        self.kind[i] = kind
        if text is not None:
            if self.text is None:
                self.text = np.empty(self.num.shape, dtype=object)
            self.text[i] = text
            if isinstance(text, ErrorText):     # a failed element: counted by its type
                self.errors += 1
                self.first_error = self.first_error or text

    def put_rows(self, idx, rows, which):
        """Python results ``rows[which[j]]`` at elements ``idx[j]`` (a unique argument row's result
        spread to its members): each row's result converted once, then placed as arrays."""
        one = type(self)(len(rows))
        for u, v in enumerate(rows.tolist()):
            one.put(u, v)
        self.num[idx] = one.num[which]
        self.kind[idx] = one.kind[which]
        if one.text is not None:
            if self.text is None:
                self.text = np.empty(self.num.shape, dtype=object)
            self.text[idx] = one.text[which]
        if one.errors:                  # counted per element, the first in the order of idx
            bad = np.array([isinstance(t, ErrorText) for t in one.text.tolist()])[which]
            self.errors += int(bad.sum())
            if bad.any():
                self.first_error = self.first_error or one.text[which[int(np.argmax(bad))]]

    def put_many(self, idx, arr):
        self.num[idx] = arr
        self.kind[idx] = NUM


def run_groups(E, fast, keys, numcols, call_vec, call_one, out: Out, call_leaf=None, call_failed=None,
               distinct: bool = False):
    """Evaluate elements: slow ones one by one, fast ones in vectorized groups.

    ``keys[i]``: hashable group key of element i (its text/categorical args);
    ``numcols``: list of float arrays (E,); ``call_vec(key, arrays, scalar)``
    returns an array/scalar for the group's unique rows; ``call_one(i)`` the
    Python result of (slow) element i; ``call_leaf(i)`` that of a fast
    element whose vectorized call failed (default ``call_one``);
    ``call_failed(exc_type, messages)`` the Python results of elements the vector call
    reported failed, given their messages (see :func:`_evaluate_rows`; without it such
    elements go to ``call_leaf``).  Each distinct argument tuple is evaluated once; with
    ``distinct`` the rows are taken as they are, without searching for equal ones (a sweep's
    scenarios under draws: the draw makes nearly every row its own, so the search gains nothing).
    """
    call_leaf = call_leaf or call_one
    idx_fast = np.nonzero(fast)[0]
    for i in np.nonzero(~fast)[0]:
        out.put(i, call_one(int(i)))
    if not len(idx_fast):
        return
    gk = np.asarray(keys)[idx_fast]
    # group ids are integers: sorted(set()) is np.unique's order, without the 6 ms import of
    # numpy.ma that a plain np.unique makes on first use (numpy 2.x checks for masked arrays)
    for key in sorted(set(gk.tolist())):
        members = idx_fast[gk == key]
        if numcols and distinct:
            uniq = np.column_stack([c[members] for c in numcols])
            first = inv = np.arange(len(members))
        elif numcols:
            X = np.column_stack([c[members] for c in numcols])
            uniq, first, inv = unique_rows(X)
        else:
            uniq = np.zeros((1, 0))
            first = np.zeros(1, dtype=np.int64)
            inv = np.zeros(len(members), dtype=np.int64)
        res = np.zeros(len(uniq))
        ok = np.zeros(len(uniq), dtype=bool)
        failed: list | None = [] if call_failed is not None else None
        _evaluate_rows(key, uniq, np.arange(len(uniq)), call_vec, res, ok, failed)
        good = ok[inv]
        out.put_many(members[good], res[inv[good]])
        if good.all():
            continue
        # one result per failing unique row, spread to its members through the inverse index
        per_row = np.empty(len(uniq), dtype=object)
        told = np.zeros(len(uniq), dtype=bool)
        for exc_type, rows, messages in failed or ():
            per_row[rows] = call_failed(exc_type, messages)
            told[rows] = True
        for u in np.nonzero(~ok & ~told)[0].tolist():
            per_row[u] = call_leaf(int(members[first[u]]))
        out.put_rows(members[~good], per_row, inv[~good])


def group_ids(parts, E) -> np.ndarray:
    """One integer group id per element from the per-argument key columns (small codes >= 0).

    Mixed-radix: ``id = ((p0 * m1) + p1) * m2 + ...`` with ``m_j`` one more than part ``j``'s
    largest code, so equal ids mean equal code tuples without sorting rows; the ids are
    compressed (1-D ``unique``) only if the product of the radices would pass 2**62.
    """
    ids = np.zeros(E, dtype=np.int64)
    span = 1
    for p in parts:
        p = np.asarray(p, dtype=np.int64)
        m = int(p.max()) + 1 if p.size else 1
        if span * m >= 2 ** 62:
            ids = np.unique(ids, return_inverse=True)[1].reshape(-1).astype(np.int64)
            span = int(ids.max()) + 1 if ids.size else 1
        ids = ids * m + p
        span *= m
    return ids


def first_of_groups(keys, fast) -> dict:
    """``{group key: index of its first fast element}``: the element whose arguments stand for the group."""
    idx = np.nonzero(fast)[0]
    if not len(idx):
        return {}
    g, first = np.unique(keys[idx], return_index=True)
    return dict(zip(g.tolist(), idx[first].tolist()))


def _evaluate_rows(key, uniq, rows, call_vec, res, ok, failed=None):
    """Evaluate ``rows`` of ``uniq`` in one vector call; set aside the elements that fail.

    An error that says which elements failed and why (``exc.mask`` over the call's elements
    or 0-d for a single-valued argument, ``exc.element_message(i)``: the model's
    :class:`~cryptoplan.model.ArgumentError` and :class:`~cryptoplan.model.UnstableQueueError`)
    records those in ``failed`` (a list of ``(exception type, rows, messages)``: each row's
    message is what a call with that element alone raises) and the rest are computed in one
    more call.  Any other failure leaves the remaining rows not ``ok``: the caller evaluates
    them one by one, each with its own message.
    """
    while len(rows):
        try:
            arrays = [uniq[rows, j] for j in range(uniq.shape[1])]
            arr = np.asarray(call_vec(key, arrays, len(rows) == 1))
            if arr.dtype == object or arr.dtype.kind not in "fiub":
                return
            if arr.ndim == 0:
                arr = np.broadcast_to(arr, (len(rows),))
            elif arr.shape != (len(rows),):
                return
            arr = arr.astype(float)
            fin = np.isfinite(arr)
            res[rows[fin]] = arr[fin]
            ok[rows[fin]] = True  # non-finite ones go element by element (exact error text)
            return
        except Exception as exc:  # noqa: BLE001 - any failure: its elements are set aside
            mask = getattr(exc, "mask", None)
            message = getattr(exc, "element_message", None)
            if failed is None or mask is None or message is None:
                return
            mask = np.asarray(mask, dtype=bool)
            if mask.shape == ():      # a single-valued argument is bad: for every element
                if mask:
                    failed.append((type(exc), rows, [message(0)] * len(rows)))
                return
            if mask.shape != (len(rows),) or not mask.any():
                return
            bad = np.nonzero(mask)[0]
            failed.append((type(exc), rows[bad], [message(k) for k in bad.tolist()]))
            rows = rows[~mask]


def broadcast_args(vals):
    """Align element-wise arguments to one Excel shape; None if they do not fit."""
    rows = cols = 1
    for v in vals:
        r, c = v.shape
        if r != 1:
            if rows not in (1, r):
                return None
            rows = r
        if c != 1:
            if cols not in (1, c):
                return None
            cols = c
    n = max(v.n for v in vals) if vals else 1
    return [expand(v, rows, cols).broadcast(n, rows, cols) for v in vals], n, rows, cols


def finish(out: Out, n, rows, cols, ctx, name):
    """The engine value (n, rows, cols) of collected results; error texts recorded as one diagnostic of ``name``."""
    kind = out.kind.reshape(n, rows, cols)
    val = Val(out.num.reshape(n, rows, cols), kind,
              None if out.text is None else out.text.reshape(n, rows, cols))
    if out.errors:
        ctx.diag(name, ERROR_TEXT_CODE, out.first_error, out.errors)
    return val
