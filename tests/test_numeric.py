"""model/_numeric.py: the guarded ratio the models share, and the distinct rows of an array
(against NumPy's own ``np.unique`` over rows)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_array_equal

from cryptoplan.model._numeric import draw_quantiles, ratio, unique_rows

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


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(X=arrays(float, st.tuples(st.integers(1, 200), st.integers(1, 4)),
                elements=st.integers(-3, 40).map(float)),
       constant=st.sampled_from([None, 0.0, -0.0, 2048.0]))
def test_unique_rows_of_whole_numbers_are_counted_as_numpy_sorts_them(X, constant):
    # a sweep's rows: whole numbers (the draw index) beside arguments that do not vary (a constant
    # column): counted by their codes, not sorted, and the same answer as np.unique over rows
    if constant is not None:
        X = np.column_stack([np.full(len(X), constant), X])
    u, first, inv = unique_rows(X)
    ref_u, ref_first, ref_inv = np.unique(X, axis=0, return_index=True, return_inverse=True)
    assert_array_equal(u, ref_u)
    assert_array_equal(first, ref_first)
    assert_array_equal(inv, ref_inv.reshape(-1))


@settings(max_examples=300, deadline=None)
@given(x=arrays(float, st.tuples(st.integers(1, 6), st.integers(1, 40)),
                elements=st.one_of(st.floats(-1e6, 1e6), st.just(np.nan), st.sampled_from([0.0, -0.0, 1.0]))),
       q=st.lists(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.05, 0.5, 0.95, 1.0, 0.1])), min_size=1,
                  max_size=4))
def test_draw_quantiles_are_numpys_nanquantile_inverted_cdf(x, q):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)        # an all-NaN row: NaN
        want = np.nanquantile(x, q, axis=-1, method="inverted_cdf")
    assert_array_equal(draw_quantiles(x, q), want)
