"""Array arithmetic the models share: a ratio that is defined where its denominator is not, the
distinct rows of an array, and quantiles of draws that leave out the missing ones.

NumPy evaluates both branches of ``np.where``, so ``np.where(d > 0, n / d, 0)`` divides by zero
(and warns) where it then throws the quotient away; the models wrote the guard out as
``np.where(d > 0, n / np.where(d > 0, d, 1), 0)`` in a dozen places.  :func:`ratio` is that idiom
once, as SciPy's ``scipy._lib._util._lazywhere`` is for a function evaluated only where a
condition holds.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ratio", "unique_rows", "draw_quantiles"]


def ratio(num, den, fill=0.0):
    """``num / den`` where ``den > 0``, ``fill`` elsewhere; nothing is divided by zero.

    Parameters
    ----------
    num, den : array_like
        Broadcast together.  A mean service time from a load and a count, a rate from a busy
        fraction and a service time, ...: ``den`` is a count, a rate or a time, 0 where the
        quantity it divides is absent (a card function no request uses, a pool with no jobs).
    fill : float or array_like
        The value where ``den <= 0`` (or NaN): 0 for an absent quantity, ``np.inf`` for a
        headroom with nothing to grow.

    Returns
    -------
    ndarray
        :math:`r = n / d` where :math:`d > 0`, else ``fill``; float.

    Examples
    --------
    >>> ratio([1.0, 2.0, 3.0], [2.0, 0.0, 4.0]).tolist()
    [0.5, 0.0, 0.75]
    >>> ratio(1.0, 0.0, fill=np.inf)
    array(inf)
    """
    den = np.asarray(den, dtype=float)
    pos = den > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pos, np.asarray(num, dtype=float) / np.where(pos, den, 1.0), fill)


def unique_rows(X: np.ndarray):
    """``(unique rows, index of each one's first occurrence, inverse)`` of a 2-D float array.

    What ``np.unique(X, axis=0, return_index=True, return_inverse=True)`` returns (rows in
    lexicographic order), by a stable ``lexsort`` of the columns instead of sorting rows as
    opaque byte strings: several times faster for the scenario counts of a sweep.  Rows are
    equal when their values are (``0.0 == -0.0``).

    Examples
    --------
    >>> u, first, inv = unique_rows(np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0]]))
    >>> u.tolist(), first.tolist(), inv.tolist()
    ([[1.0, 5.0], [2.0, 1.0]], [1, 0], [1, 0, 1])
    """
    coded = _small_codes(X)
    if coded is not None:                # a few whole numbers and constants: counted, not sorted
        code, k = coded
        present = np.bincount(code, minlength=k) > 0
        inv = (np.cumsum(present) - 1)[code]
        first = np.full(int(present.sum()), len(X), dtype=np.int64)
        np.minimum.at(first, inv, np.arange(len(X), dtype=np.int64))
        return X[first], first, inv
    order = np.lexsort(X.T[::-1])       # (not np.unique: its first call imports numpy.ma, 6 ms)
    Xs = X[order]
    starts = np.empty(len(X), dtype=bool)
    starts[:1] = True
    np.any(Xs[1:] != Xs[:-1], axis=1, out=starts[1:])
    inv = np.empty(len(X), dtype=np.int64)
    inv[order] = np.cumsum(starts) - 1
    return Xs[starts], order[starts], inv


#: Most distinct codes :func:`unique_rows` counts rather than sorts (a bincount this long).
_MAX_CODES = 1 << 22


def _small_codes(X: np.ndarray):
    """``(code, k)``: each row of ``X`` as one integer in ``[0, k)``, ordered as the rows are
    lexicographically, when every column is constant or holds whole numbers spanning less than
    :data:`_MAX_CODES` (a sweep's draw index beside arguments that do not vary); else None."""
    if len(X) == 0:
        return None
    code = np.zeros(len(X), dtype=np.int64)
    k = 1
    for c in X.T:
        lo, hi = c.min(), c.max()
        if lo == hi:                     # the same in every row (0.0 and -0.0 are equal): no order
            continue
        if not (np.isfinite(lo) and np.isfinite(hi) and hi - lo < _MAX_CODES) or (c != np.floor(c)).any():
            return None
        span = int(hi - lo) + 1
        k *= span
        if k > _MAX_CODES:
            return None
        code = code * span + (c - lo).astype(np.int64)
    return code, k


def draw_quantiles(x, q) -> np.ndarray:
    r"""Quantiles of each row's values, NaN left out: the draws' own values.

    ``np.nanquantile(x, q, axis=-1, method="inverted_cdf")`` to the bit, without the per-row loop
    NumPy runs where a row holds a NaN: each row sorted once (NaN last), and for the
    :math:`n` values that are not NaN the value at index :math:`\lceil n q \rceil - 1`
    (Hyndman and Fan's definition 1, the inverse of the empirical distribution function, as
    NumPy computes the index: :math:`n q - 1`, rounded up unless it is whole, at least 0).

    Parameters
    ----------
    x : array_like, shape (m, d)
        ``d`` draws of each of ``m`` answers; NaN: a draw without a value.
    q : array_like, shape (k,)
        Probabilities in [0, 1].

    Returns
    -------
    ndarray, shape (k, m)
        NaN for a row with no value.

    References
    ----------
    .. [1] R. J. Hyndman and Y. Fan, "Sample quantiles in statistical packages", The American
       Statistician 50(4), 1996, definition 1.
    """
    x = np.asarray(x, dtype=float)
    q = np.asarray(q, dtype=float)
    n = np.count_nonzero(~np.isnan(x), axis=-1)                     # (m,)
    at = n[None, :] * q[:, None] - 1.0                              # (k, m), NumPy's virtual index
    below = np.floor(at)
    pick = np.where(at - below == 0, below, below + 1.0)
    pick = np.clip(pick, 0, np.maximum(n - 1, 0)[None, :]).astype(np.intp)
    out = np.take_along_axis(np.sort(x, axis=-1), pick.T, axis=-1).T
    return np.where(n[None, :] > 0, out, np.nan)
