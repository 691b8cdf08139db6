"""model/_numeric.py: the guarded ratio the models share."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_array_equal

from cryptoplan.model._numeric import ratio

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
