"""The add-in's functions in the engine (``cryptoplan.workbook.catalog_functions``): grouping.

The grouping helpers are checked against NumPy's own definitions (``np.unique`` over rows),
with hypothesis generating the columns; what the catalog functions compute is checked against
the add-in's cell-by-cell path in tests/test_recalc.py and tests/test_sweep.py.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numpy.testing import assert_array_equal

from cryptoplan.workbook.catalog_functions import _group_ids, _unique_rows

_FEW = st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e300, -7.0])


@settings(max_examples=200, deadline=None)
@given(X=hnp.arrays(float, st.tuples(st.integers(1, 40), st.integers(1, 4)), elements=_FEW))
def test_unique_rows_is_numpys_unique_over_rows(X):
    u, first, inv = _unique_rows(X)
    ref_u, ref_first, ref_inv = np.unique(X, axis=0, return_index=True, return_inverse=True)
    assert_array_equal(u, ref_u)
    assert_array_equal(first, ref_first)            # the first occurrence of each row
    assert_array_equal(inv, ref_inv.reshape(-1))
    assert_array_equal(u[inv], X)


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(hnp.arrays(np.int64, 30, elements=st.integers(0, 5)), min_size=0, max_size=4))
def test_group_ids_are_equal_exactly_for_equal_code_tuples(parts):
    ids = _group_ids(parts, 30)
    tuples = list(zip(*parts)) if parts else [()] * 30
    for i in range(30):
        for j in range(30):
            assert (ids[i] == ids[j]) == (tuples[i] == tuples[j])


def test_group_ids_compress_when_the_radix_product_would_overflow():
    big = np.array([0, 2 ** 40, 5, 2 ** 40], dtype=np.int64)
    ids = _group_ids([big, big, np.array([1, 1, 0, 1])], 4)
    assert ids[1] == ids[3] and len(set(ids.tolist())) == 3
