"""Counts one workload needs at a confidence level (``cryptoplan.model.calibration.planning``:
``ACCELERATORS_REQUIRED``, ``COPROCESSORS_REQUIRED`` and ``PROCESSORS_REQUIRED`` with ``level``).

Where the expected values come from: each of the 1,000 parameter draws (seed 0, the ones the
functions use) is evaluated on its own by the plain count functions of ``cryptoplan.model.zos``
under ``using_values``; the count at a level is then checked by substituting it back into its
definition (enough in at least that share of the draws, one fewer not enough).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from cryptoplan.addin import catalog, convert
from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.calibration.planning import (
    BAND_DRAWS, BAND_SEED, accelerators_required_at_level, coprocessors_required_at_level,
    processors_required_at_level,
)
from cryptoplan.model.errors import CryptoplanError
from cryptoplan.model.params import using_values
from cryptoplan.model.zos.ams import accelerators_required, coprocessors_required, processors_required

PAIRS = [(accelerators_required_at_level, accelerators_required),
         (coprocessors_required_at_level, coprocessors_required),
         (processors_required_at_level, processors_required)]
WORKLOAD = ("privacy", "RSA", 2048, 2.0)

_PER_DRAW: dict = {}


def _per_draw(count, rate: float, max_wait_ms=None) -> np.ndarray:
    """The count under each draw, one scalar evaluation per draw (remembered per case)."""
    key = (count.__name__, rate, max_wait_ms)
    if key not in _PER_DRAW:
        draws = parameter_draws(BAND_DRAWS, seed=BAND_SEED)
        extra = {} if max_wait_ms is None else {"max_wait_ms": max_wait_ms}
        out = []
        for i in range(BAND_DRAWS):
            with using_values({k: float(v[i]) for k, v in draws.items()}):
                out.append(count(rate, *WORKLOAD, **extra))
        _PER_DRAW[key] = np.array(out, dtype=float)
    return _PER_DRAW[key]


@pytest.mark.parametrize("at_level, count", PAIRS, ids=lambda f: getattr(f, "__name__", ""))
def test_without_a_level_the_count_is_the_fitted_parameters_one(at_level, count):
    rates = np.array([0.0, 300.0, 1500.0, 6000.0])
    assert_array_equal(at_level(rates, *WORKLOAD), count(rates, *WORKLOAD))
    assert at_level(1500.0, *WORKLOAD) == count(1500.0, *WORKLOAD)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(q=st.floats(0.01, 0.99), rate=st.sampled_from([400.0, 1500.0, 4000.0]),
       which=st.sampled_from(range(len(PAIRS))))
def test_the_count_at_a_level_suffices_in_that_share_of_the_draws_and_one_fewer_does_not(q, rate, which):
    at_level, count = PAIRS[which]
    k = at_level(rate, *WORKLOAD, level=q)
    per = _per_draw(count, rate)
    assert np.mean(per <= k) >= q                   # enough in at least q of the draws
    assert np.mean(per <= k - 1) < q                # the smallest such count
    assert k in per                                 # one of the draws' own counts


def test_the_wait_target_is_searched_under_every_draw():
    k = accelerators_required_at_level(4000.0, *WORKLOAD, max_wait_ms=0.05, level=0.9)
    per = _per_draw(accelerators_required, 4000.0, 0.05)
    assert np.mean(per <= k) >= 0.9 > np.mean(per <= k - 1)
    assert k >= accelerators_required(4000.0, *WORKLOAD, max_wait_ms=0.05) - 1


def test_a_higher_level_never_asks_for_fewer_and_a_sweep_of_levels_is_each_levels_own():
    rates = np.array([400.0, 1500.0, 4000.0])
    levels = np.array([0.1, 0.5, 0.95])
    grid = accelerators_required_at_level(rates[:, None], *WORKLOAD, level=levels[None, :])
    assert np.all(np.diff(grid, axis=1) >= 0)
    for j, lv in enumerate(levels):
        assert_array_equal(grid[:, j], accelerators_required_at_level(rates, *WORKLOAD, level=float(lv)))


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.1, float("nan")])
def test_a_level_outside_zero_to_one_is_refused_naming_it(bad):
    with pytest.raises(CryptoplanError, match=r"level must be (in \(0, 1\)|a finite number)"):
        accelerators_required_at_level(1500.0, *WORKLOAD, level=bad)


def test_the_spreadsheet_function_takes_the_level_after_params_file():
    spec = catalog.get("ACCELERATORS_REQUIRED")
    names = [a.name for a in spec.args]
    assert names[-2:] == ["params_file", "level"]
    point = convert.call(spec, (1500.0, *WORKLOAD))
    at90 = convert.call(spec, (1500.0, *WORKLOAD) + (None,) * (len(names) - 6) + (0.9,))
    assert point == accelerators_required(1500.0, *WORKLOAD)
    assert at90 == accelerators_required_at_level(1500.0, *WORKLOAD, level=0.9) >= point
    bad = convert.call(spec, (1500.0, *WORKLOAD) + (None,) * (len(names) - 6) + (2.0,))
    assert isinstance(bad, str) and bad.startswith("#") and "level" in bad and "2" in bad
