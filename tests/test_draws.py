"""model/calibration/draws.py: parameter sets drawn from the fit's covariance (issue 46's base)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.calibration.free import FREE, free_bounds
from cryptoplan.model.errors import CryptoplanError
from cryptoplan.model.params import load_params

N = 20_000


@pytest.fixture(scope="module")
def doc():
    return load_params()


@pytest.fixture(scope="module")
def draws(doc):
    return parameter_draws(N, seed=7, doc=doc)


def test_every_parameter_is_drawn_inside_its_bounds(doc, draws):
    assert set(draws) == set(doc["parameters"])
    for name, x in draws.items():
        assert x.shape == (N,) and np.all(np.isfinite(x)), name
        lo, hi = free_bounds(name) if name in FREE else (0.0, np.inf)
        assert np.all((x >= lo) & (x <= hi)), name


def test_parameters_without_a_covariance_keep_their_value(doc, draws):
    drawn = {k for block in doc["covariance"].values() for k in block["names"]}
    fixed = set(doc["parameters"]) - drawn
    assert {"tls_mstr_us", "mq_base_us", "exp_public"} <= fixed       # structural, read, on a bound
    for name in fixed:
        assert np.all(draws[name] == doc["parameters"][name]["value"]), name


def test_identified_parameters_have_the_fitted_mean_and_covariance(doc, draws):
    """Where every bound of a block is more than 2.5 standard errors away the truncation is
    small (under 1% of the draws rejected; it moves a mean by under 0.02 standard errors and a
    variance by under 3%): the sample mean is the fitted value within five standard errors of
    a mean of N draws, and the sample covariance the stored one within 5%.  Today that is the
    round-trip block (its nearest bound: rt_attls_us_per_kb2, 2.96 standard errors above 0)."""
    checked = []
    for group, block in doc["covariance"].items():
        names = block["names"]
        cov = np.asarray(block["matrix"])
        sd = np.sqrt(np.diag(cov))
        mean = np.array([doc["parameters"][k]["value"] for k in names])
        lo, hi = np.array([free_bounds(k) if k in FREE else (0.0, np.inf) for k in names]).T
        if not np.all((mean - 2.5 * sd > lo) & (mean + 2.5 * sd < hi)):
            continue                                   # a truncated block: checked below
        x = np.stack([draws[k] for k in names])
        assert np.all(np.abs(x.mean(axis=1) - mean) < 5 * sd / np.sqrt(N)), group
        assert_allclose(np.cov(x), cov, rtol=0.05, atol=0.05 * np.outer(sd, sd).max(), err_msg=group)
        checked.append(group)
    assert "roundtrip" in checked, checked


def test_a_weak_parameter_is_truncated_at_its_bound_not_clipped(doc, draws):
    """tls_attls_tcpip_us (2.7 +- 12.6 µs) and tls_tcpip_us_per_kb move together (correlation
    +0.99): whole draws are rejected, so no draw piles up on the bound 0 and the pair keeps
    its correlation."""
    a, b = draws["tls_attls_tcpip_us"], draws["tls_tcpip_us_per_kb"]
    assert np.mean(a == 0.0) == 0.0 and np.mean(b == 0.0) == 0.0
    assert np.corrcoef(a, b)[0, 1] > 0.9


def test_draws_are_reproducible_with_a_seed(doc):
    a, b = parameter_draws(50, seed=3, doc=doc), parameter_draws(50, seed=3, doc=doc)
    assert all(np.array_equal(a[k], b[k]) for k in a)


@settings(max_examples=25, deadline=None)
@given(sd=st.floats(0.01, 3.0), rho=st.floats(-0.95, 0.95), mean=st.floats(0.0, 2.0))
def test_a_truncated_block_keeps_every_draw_inside(sd, rho, mean):
    doc = {"parameters": {"rt_sslciph_base_us": {"value": mean}, "rt_attls_base_us": {"value": mean + 0.5}},
           "covariance": {"g": {"names": ["rt_sslciph_base_us", "rt_attls_base_us"],
                                "matrix": [[sd * sd, rho * sd * sd], [rho * sd * sd, sd * sd]]}}}
    d = parameter_draws(200, seed=1, doc=doc)
    assert all(np.all(d[k] >= 0.0) and d[k].shape == (200,) for k in d)


@pytest.mark.parametrize("n", [0, -1, 1.5, True, 2_000_000, float("nan"), "ten"])
def test_a_bad_number_of_draws_is_refused(doc, n):
    with pytest.raises(CryptoplanError, match="^n "):
        parameter_draws(n, doc=doc)


def test_a_file_without_covariance_or_with_a_broken_block_is_refused(doc):
    bare = {k: v for k, v in doc.items() if k != "covariance"}
    with pytest.raises(CryptoplanError, match="no 'covariance' section"):
        parameter_draws(10, doc=bare)
    bad = copy.deepcopy(doc)
    bad["covariance"]["roundtrip"]["matrix"][0][0] = -1.0
    with pytest.raises(CryptoplanError, match="not positive semi-definite"):
        parameter_draws(10, doc=bad)
