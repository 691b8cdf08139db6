"""model/zos/plan/profiles.py: a workload's profile, built once per workload, system, parameters and
figures in force (:func:`workload_profile`), and never served to another (issue 66)."""

from __future__ import annotations

import shutil
from collections import Counter

import numpy as np
import pytest

from cryptoplan.model.datafiles import data_path
from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.figures import using_figures
from cryptoplan.model.params import prepared_values, using_values
from cryptoplan.model.zos.plan import PlanError, System, Workload, plan
from cryptoplan.model.zos.plan import profiles

SYSTEM = System(processors=4, coprocessors=2, accelerators=2)


@pytest.fixture
def built(profile_builds) -> Counter:
    """conftest's count of profile builds, by workload name."""
    return profile_builds


def _ams(name="pay", **args) -> Workload:
    return Workload(name, "ams", 300, args={"policy": "privacy", "message_kb": 2, **args})


def test_the_same_workload_system_and_parameters_build_once(built):
    w = _ams()
    first = profiles.workload_profile(w, SYSTEM)
    assert profiles.workload_profile(_ams(), SYSTEM) is first        # an equal workload: the same build
    assert built["pay"] == 1
    profiles.workload_profile(w, System(processors=4, coprocessors=3, accelerators=2))   # another system
    profiles.workload_profile(_ams(message_kb=4), SYSTEM)                                # other arguments
    with using_values({"mq_us_per_kb": 1.3}):                                            # other parameters
        profiles.workload_profile(w, SYSTEM)
        profiles.workload_profile(w, SYSTEM)
    assert built["pay"] == 4


def test_a_value_equal_to_another_of_another_type_is_another_argument(built):
    # True == 1 in Python, but the model refuses a boolean recipient count: the profile built for
    # 1 must not answer for True (nor the one of 0.0 for -0.0)
    profiles.workload_profile(_ams(recipients=1), SYSTEM)
    with pytest.raises(PlanError, match="recipients"):
        profiles.workload_profile(_ams(recipients=True), SYSTEM)
    m0 = Workload("m", "measured", 10, args={"card": "processors", "cpu_us": 0.0})
    m1 = Workload("m", "measured", 10, args={"card": "processors", "cpu_us": -0.0})
    profiles.workload_profile(m0, SYSTEM)
    profiles.workload_profile(m1, SYSTEM)
    assert built["m"] == 2


def test_another_figures_table_is_another_profile(built, tmp_path):
    copy = tmp_path / "figures.csv"
    shutil.copyfile(data_path("figures.csv"), copy)
    w = _ams()
    profiles.workload_profile(w, SYSTEM)
    with using_figures(copy):
        profiles.workload_profile(w, SYSTEM)
    assert built["pay"] == 2


def test_a_plan_under_draws_builds_its_own_and_keeps_none(built):
    # a dict of draws is a block of values of its own in each call: nothing would be found again,
    # and remembering it would keep the draws alive
    d = parameter_draws(5, seed=1)
    w = [_ams()]
    a = plan(SYSTEM, w, draws=d)
    b = plan(SYSTEM, w, draws=d)
    assert built["pay"] == 2
    np.testing.assert_array_equal(a.resources["coprocessors"].utilization, b.resources["coprocessors"].utilization)
    assert len(profiles._BUILT) == 0 and len(profiles._DRAWN) == 0
    with using_values(prepared_values(d)):       # a block its maker does not share: the same
        profiles.workload_profile(w[0], SYSTEM)
    assert len(profiles._BUILT) == 0 and len(profiles._DRAWN) == 0


def test_the_same_block_of_draws_builds_once_and_another_its_own(built):
    """Issue 66: a sweep's chunks evaluate under the same draws, the same values block
    (workbook/drawing.py hands the same object over for the same draws, and says it shares it), and
    each chunk's plan built its workloads' profiles again (5% of a chunk).  Expected: one build for the same block,
    the same numbers as a build of their own, and a block with other values builds its own."""
    d = parameter_draws(5, seed=1)
    block = prepared_values(d, shared=True)
    w = _ams()
    with using_values(block):
        first = profiles.workload_profile(w, SYSTEM)
    with using_values(block):
        assert profiles.workload_profile(w, SYSTEM) is first
    assert built["pay"] == 1
    other = prepared_values({k: v * 1.5 if k == "mq_us_per_kb" else v for k, v in d.items()}, shared=True)
    with using_values(other):
        p = profiles.workload_profile(w, SYSTEM)
    assert built["pay"] == 2 and p is not first
    with using_values(prepared_values(dict(d), shared=True)):    # equal values, another block: built
        again = profiles.workload_profile(w, SYSTEM)
    assert built["pay"] == 3
    for part in ("cpu_us", "busy"):
        for k, v in getattr(first, part).items():
            np.testing.assert_array_equal(getattr(again, part)[k], v)
