"""model/_numeric.py: the guarded ratio the models share, and the distinct rows of an array
(against NumPy's own ``np.unique`` over rows)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_array_equal

from cryptoplan.model._numeric import ratio, unique_rows

finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(num=arrays(float, 8, elements=finite), den=arrays(float, 8, elements=st.sampled_from([0.0, -1.0, 1e-300, 2.5, 7.0])))
def test_ratio_divides_where_the_denominator_is_positive_and_fills_elsewhere(num, den):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                # no division by zero is evaluated
        got = ratio(num, den, fill=-7.0)
    pos = den > 0
    assert_array_equal(got[pos], num[pos] / den[pos])   # the same floating-point division
    assert np.all(got[~pos] == -7.0)


def test_ratio_broadcasts_and_keeps_nan_denominators_out():
    got = ratio(np.array([[1.0], [2.0]]), np.array([0.0, 4.0, np.nan]), fill=np.inf)
    assert got.shape == (2, 3)
    assert_array_equal(got, [[np.inf, 0.25, np.inf], [np.inf, 0.5, np.inf]])


_FEW = st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e300, -7.0])


@settings(max_examples=200, deadline=None)
@given(X=arrays(float, st.tuples(st.integers(1, 40), st.integers(1, 4)), elements=_FEW))
def test_unique_rows_is_numpys_unique_over_rows(X):
    u, first, inv = unique_rows(X)
    ref_u, ref_first, ref_inv = np.unique(X, axis=0, return_index=True, return_inverse=True)
    assert_array_equal(u, ref_u)
    assert_array_equal(first, ref_first)            # the first occurrence of each row
    assert_array_equal(inv, ref_inv.reshape(-1))
    assert_array_equal(u[inv], X)
