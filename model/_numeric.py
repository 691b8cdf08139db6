"""Array arithmetic the models share: a ratio that is defined where its denominator is not, and
the distinct rows of an array.

NumPy evaluates both branches of ``np.where``, so ``np.where(d > 0, n / d, 0)`` divides by zero
(and warns) where it then throws the quotient away; the models wrote the guard out as
``np.where(d > 0, n / np.where(d > 0, d, 1), 0)`` in a dozen places.  :func:`ratio` is that idiom
once, as SciPy's ``scipy._lib._util._lazywhere`` is for a function evaluated only where a
condition holds.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ratio", "unique_rows"]


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
    if X.shape[1] == 1:
        u, first, inv = np.unique(X[:, 0], return_index=True, return_inverse=True)
        return u[:, None], first, inv.reshape(-1)
    order = np.lexsort(X.T[::-1])
    Xs = X[order]
    starts = np.empty(len(X), dtype=bool)
    starts[:1] = True
    np.any(Xs[1:] != Xs[:-1], axis=1, out=starts[1:])
    inv = np.empty(len(X), dtype=np.int64)
    inv[order] = np.cumsum(starts) - 1
    return Xs[starts], order[starts], inv
