"""model/calibration/targets.py: a range figure said of several conditions is scored by its two ends.

Seed 002 says TCP/IP costs are "1.5-1.6 times higher" with either hardware cipher, and that each
cipher type's saving lies in a range at every message size; the z15 report puts the four ciphers'
32 KB costs in one range.  Scored on the condition farthest from the middle, such a figure's
residual jumped (changed sign, and size) where two conditions straddled the range, the TLS fit
stopped on the jump, and its refits stalled there.  Scored by its two ends (the highest condition
above the range, the lowest below it), each residual is continuous.

Expected values: the scorer's definition (:func:`cryptoplan.model.calibration.scoring._residual`,
one condition at a time), the figure's own ends (``data/figures.csv``), and the committed fit
(``data/params.json``) for the refits.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cryptoplan.model.calibration.free as free
from cryptoplan.model.calibration import targets as T
from cryptoplan.model.calibration.bootstrap import _refits, stalled
from cryptoplan.model.calibration.scoring import _residual, group_members
from cryptoplan.model.figures import figure
from cryptoplan.model.params import params_path

RANGES = ("s002_2k_tcpip_cost_hw", "s002_cost_range_tls12hw", "s002_cost_range_tls13hw", "s002_cost_range_tls13sw",
          "ref_32k_no_reneg_range_us")


def _ends(fid, values):
    """The two scored residuals of ``values`` (one per condition) for range figure ``fid``."""
    fs = [lambda v, i=i: v[i] for i in range(len(values))]
    fig = figure(fid)
    high, low = T._ends(fs, fig.low, fig.high)
    v = np.asarray(values, dtype=float)
    return _residual(fig, float(high(v))), _residual(fig, float(low(v)))


def test_each_range_of_several_conditions_is_scored_by_two_ends_and_nothing_else_changes():
    listed = T.targets()
    terms = T.scored(listed)
    with_ends = [t.figure_id for t in listed if t.ends]
    assert sorted(with_ends) == sorted(RANGES)
    assert len(terms) == len(listed) + len(RANGES)
    # in order: each other target as it was, each range as its high end then its low end
    it = iter(terms)
    for t in listed:
        if t.ends:
            hi, lo = next(it), next(it)
            assert (hi.figure_id, lo.figure_id) == (t.figure_id, t.figure_id)
            assert (hi.of, lo.of) == t.ends and hi.group == lo.group == t.group
        else:
            assert next(it) is t
    # the fit's problem is built from the terms
    _, tls_terms = group_members("tls")
    assert sum(t.figure_id == "s002_2k_tcpip_cost_hw" for t in tls_terms) == 2


@settings(max_examples=200, deadline=None)
@given(fid=st.sampled_from(RANGES), data=st.data())
def test_the_ends_score_the_worst_condition_on_each_side(fid, data):
    """0 and 0 iff every condition is inside the range; otherwise the high end is the residual of
    the highest condition above it, the low end that of the lowest condition below it (the
    scorer's definition, one condition at a time)."""
    fig = figure(fid)
    lo, hi = fig.low, fig.high
    width = hi - lo
    # conditions around the range: inside, and up to one width beyond either end
    n = data.draw(st.integers(1, 8))
    values = data.draw(st.lists(st.floats(lo - width, hi + width), min_size=n, max_size=n))
    if fig.unit != "pct_change":
        values = [max(v, 1e-3 * abs(hi)) for v in values]        # a cost or a ratio is positive
    r_high, r_low = _ends(fid, values)
    each = [_residual(fig, v) for v in values]
    assert r_high >= 0.0 >= r_low
    assert (r_high == 0.0 and r_low == 0.0) == all(lo <= v <= hi for v in values)
    assert r_high == max(max(each), 0.0)
    assert r_low == min(min(each), 0.0)


@pytest.mark.parametrize("fid", RANGES)
def test_the_ends_are_continuous_where_the_farthest_condition_jumps(fid):
    """Two conditions straddling the range at the same distance from its middle: moving them by
    1e-9 of the range's width moves the farthest condition's residual from one side to the
    other (by 0.1 to 0.5 tolerances here), each end's residual by less than 1e-6."""
    fig = figure(fid)
    mid, d, eps = fig.target(), 0.6 * (fig.high - fig.low), 1e-9 * (fig.high - fig.low)
    below, above = [mid - d - eps, mid + d], [mid - d, mid + d + eps]
    far = [_residual(fig, float(T._extreme(v, fid))) for v in (below, above)]
    assert far[0] < 0.0 < far[1] and far[1] - far[0] > 0.09
    ends = np.array([_ends(fid, v) for v in (below, above)])
    assert np.all(np.abs(ends[1] - ends[0]) < 1e-6)
    assert ends[0, 0] > 0.0 > ends[0, 1]            # both conditions miss: both ends say so


def test_tls_refits_started_at_the_fit_leave_it():
    """163 of 201 TLS refits stalled at the fit while a residual jumped there; none of 12 now."""
    doc = json.loads(open(params_path()).read())
    values = {k: v["value"] for k, v in doc["parameters"].items()}

    class Solution:
        scale = 1.0
    names = [k for k in free.FREE if free.GROUPS[free.FREE[k].submodel] == "tls"]
    rows = _refits("tls", values, Solution(), 12, np.random.default_rng(5))
    assert stalled(rows, [values[k] for k in names]) == 0


def test_a_table_that_makes_a_range_another_kind_is_scored_on_one_term(tmp_path):
    """A site's figures table (``cryptoplan fit --figures``) may state s002_2k_tcpip_cost_hw as
    an approximate 1.55: it is then one term, the farthest condition, as any other figure, and
    the other ranges keep their ends."""
    import csv

    from cryptoplan.model.datafiles import data_path
    from cryptoplan.model.figures import using_figures
    with open(data_path("figures.csv"), newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        if r["id"] == "s002_2k_tcpip_cost_hw":
            r.update(kind="approximate", value="1.55", low="", high="")
    path = tmp_path / "figures.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with using_figures(path):
        listed = T.targets()
        terms = T.scored(listed)
        assert sorted(t.figure_id for t in listed if t.ends) == sorted(set(RANGES) - {"s002_2k_tcpip_cost_hw"})
        assert len(terms) == len(listed) + len(RANGES) - 1
        _, tls_terms = group_members("tls")
        assert sum(t.figure_id == "s002_2k_tcpip_cost_hw" for t in tls_terms) == 1
