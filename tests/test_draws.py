"""model/calibration/draws.py and bootstrap.py: parameter sets drawn from the fit's covariance, or
from its bootstrap refits where the covariance is not to be trusted (issue 46's base).

Expected values: the stored covariance and fitted values (the sample moments of the draws must
match them where truncation is negligible), the stored bootstrap table (every draw of a block is
one of its rows, whole), and the bounds; for the draws against the fitted figures, the figures'
accepted intervals (data/figures.csv through Figure.bounds)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.calibration.bootstrap import UNTRUSTED_SHARE, _refits, outside_share, stalled, untrusted
from cryptoplan.model.zos.quantum_safe import QS_FACTORS
from cryptoplan.model.calibration.draws import parameter_draws, recentred
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


@pytest.fixture(scope="module")
def normal_doc(doc):
    """The packaged file without its bootstrap: every block from the covariance."""
    return {k: v for k, v in doc.items() if k != "bootstrap"}


def test_parameters_without_a_covariance_keep_their_value(doc, draws):
    drawn = {k for section in ("covariance", "bootstrap") for block in doc[section].values() for k in block["names"]}
    # the assumed factors on the quantum-safe card times are drawn over their own band
    # (tests/test_quantum_safe.py): not the covariance's, and not fixed either
    assumed = {n for n in QS_FACTORS.values() if doc["parameters"][n]["source"] == "assumption"}
    assert assumed == set(QS_FACTORS.values())
    fixed = set(doc["parameters"]) - drawn - assumed
    assert {"tls_mstr_us", "mq_base_us"} <= fixed                     # structural, read from a row
    for name in fixed:
        assert np.all(draws[name] == doc["parameters"][name]["value"]), name


def test_identified_parameters_have_the_fitted_mean_and_covariance(doc, draws):
    """Where every bound of a block is more than 2.5 standard errors away the truncation is
    small (under 1% of the draws rejected; it moves a mean by under 0.02 standard errors and a
    variance by under 3%): the sample mean is the fitted value within five standard errors of
    a mean of N draws, and the sample covariance the stored one within 5%.  Today that is the
    round-trip block (its nearest bound: rt_attls_us_per_kb_log, 5.3 standard errors above 0)."""
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


def test_a_parameter_near_its_bound_is_truncated_not_clipped(normal_doc):
    """tls_chin_us (83.9 +- 39.2 µs, 2.1 standard errors above its bound 0) and tls_ssl_us
    (33.9 +- 14.3 µs) move together (correlation +0.97): whole draws are rejected, so no draw
    piles up on the bound 0 (clipping would put about 1.7% of the draws there) and the pair
    keeps its correlation."""
    draws = parameter_draws(N, seed=7, doc=normal_doc)
    a, b = draws["tls_chin_us"], draws["tls_ssl_us"]
    assert np.mean(a == 0.0) == 0.0 and np.mean(b == 0.0) == 0.0
    assert np.all(a > 0.0) and np.all(b > 0.0)
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


def test_the_bootstrapped_blocks_are_the_ones_the_normal_does_not_fit(doc):
    values = {k: v["value"] for k, v in doc["parameters"].items()}
    for group, block in doc["covariance"].items():
        assert (group in doc["bootstrap"]) == untrusted(values, block), group
    # the round trips: every bound more than 2.5 standard errors away; tls: two of its CPU
    # costs 2.1 and 2.4 standard errors above 0 (tls_chin_us, tls_ssl_us), 15.5% of its normal
    # draws outside its bounds
    assert outside_share(values, doc["covariance"]["roundtrip"]) < 0.01
    assert outside_share(values, doc["covariance"]["tls"]) > 10 * UNTRUSTED_SHARE


def test_a_bootstrapped_block_draws_whole_rows_of_its_refits(doc, draws):
    for group, block in doc["bootstrap"].items():
        names = block["names"]
        lo, hi = np.array([free_bounds(k) for k in names]).T
        fit = np.array([doc["parameters"][k]["value"] for k in names])
        rows = recentred(np.asarray(block["draws"]), fit, lo, hi)
        x = np.stack([draws[k] for k in names], axis=1)
        # every draw is one stored row recentred, all its parameters together (the correlations
        # hold), and each parameter's median over the recentred rows is exactly its fitted value
        median = np.quantile(rows, 0.5, axis=0, method="inverted_cdf")
        assert_allclose(median, fit, rtol=1e-12, atol=1e-12)
        match = (x[:, None, :] == rows[None, :, :]).all(axis=2).any(axis=1)
        assert match.all(), group
        assert len({tuple(r) for r in x[:2000]}) > 0.5 * rows.shape[0], group   # rows picked at random


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(1, 4), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_recentred_refits_have_the_fit_as_median_inside_the_bounds(n, k, seed, where):
    rng = np.random.default_rng(seed)
    lo, hi = np.zeros(k), np.full(k, 5.0)
    rows = np.clip(rng.gamma(0.7, 1.5, size=(n, k)), lo, hi)        # skewed, piled at a bound
    fit = lo + where * (hi - lo)
    got = recentred(rows, fit, lo, hi)
    assert ((got >= lo) & (got <= hi)).all()
    assert_allclose(np.quantile(got, 0.5, axis=0, method="inverted_cdf"), fit, rtol=0, atol=1e-12)
    # a positive parameter is scaled, another shifted: where neither end is reached the ratios
    # (scaled) or the differences (shifted) between refits are kept, and the order always
    median = np.quantile(rows, 0.5, axis=0, method="inverted_cdf")
    scaled = (fit > 0) & (median > 0)
    for j in range(k):
        inside = (got[:, j] > lo[j]) & (got[:, j] < hi[j]) & (rows[:, j] > 0)
        if inside.sum() >= 2:
            if scaled[j]:
                # (a subnormal fit, which hypothesis tries, keeps fewer digits: atol below any cost)
                assert_allclose(got[inside, j], rows[inside, j] * (fit[j] / median[j]), rtol=1e-12, atol=1e-300)
            else:
                assert_allclose(np.diff(got[inside, j]), np.diff(rows[inside, j]), rtol=0, atol=1e-12)
        order = np.argsort(rows[:, j], kind="stable")
        assert np.all(np.diff(got[order, j]) >= 0)


def test_the_tls_refits_move_and_spread_as_the_covariance_says(doc):
    """The packaged tls refits all left the fit (none stalled: a stalled refit holds the fit and
    narrows the band; 163 of 201 did while a range figure was scored on its farthest condition),
    the block says so, and where the covariance holds they spread as it says: over the parameters
    whose fitted value is 2 standard errors or more from each bound (a normal's 95% inside them;
    nearer, the bound shapes the refits and the normal approximation fails, which is why the block
    is bootstrapped), the median of the refits' standard deviation over the standard error is
    between 0.8 and 1.25 (measured 1.11 over 10; 0.94 to 1.21 per parameter; the errors are the
    sandwich's, test_the_printed_errors_are_how_far_the_fit_moves_when_its_figures_move, and the
    refits move the figures by their whole uncertainty, where figures cross their tolerances' edges
    and the refits spread wider than the first-order errors).  Without the prior on TCPIP's cost
    per KB it was 0.98 (0.67 to 1.06): that cost sat 0.56 errors from its bound 0, which truncated
    the refits of the costs that trade off with it.  Over all 12 it is 1.11: the two parameters
    within 2 standard errors of a bound (the per-KB TCPIP cost, 1.32 of its error from 0, now held
    by the prior; the NULL share, capped at 1 and held by a factor-2 prior) refit in 1.21 and 0.73
    of it."""
    block = doc["bootstrap"]["tls"]
    rows = np.asarray(block["draws"])
    # the rows are kept to six significant digits: a stalled one is the fit so rounded
    x_hat = [float(f"{doc['parameters'][k]['value']:.6g}") for k in block["names"]]
    assert block["stalled"] == stalled(rows, x_hat) == 0
    ratios = []
    for i, k in enumerate(block["names"]):
        value, se = doc["parameters"][k]["value"], doc["parameters"][k]["stderr"]
        lo, hi = free_bounds(k)
        if se is not None and min(value - lo, hi - value) >= 2 * se:
            ratios.append(rows[:, i].std() / se)
    assert len(ratios) >= 8
    assert 0.8 < np.median(ratios) < 1.25, ratios


@pytest.mark.parametrize("group", ["tls", pytest.param("ams", marks=pytest.mark.slow)])
def test_the_printed_errors_are_how_far_the_fit_moves_when_its_figures_move(doc, group):
    """The standard errors `cryptoplan fit` prints (model/calibration/leastsq.py: the robust fit's
    sandwich H^-1 B H^-1 with H the cost's whole curvature) against what they claim, simulated: 300
    refits of the sub-model from the packaged fit, every measured figure (and prior) moved by 1/100
    of its standard uncertainty (bootstrap.refits, scale 0.01, where the response is linear), spread
    1/100 of each parameter's printed error.  Reference: the refits' standard deviation, whose
    sampling error over 300 is 4.1%: each parameter's ratio within 0.85-1.18 (four of those) and
    their median within 0.95-1.05 (measured: TLS 0.95-1.10, median 0.99; crypto + AMS 0.94-1.08,
    median 1.01).  The errors printed before fail it for TLS, measured on the same refits: the
    reweighted least squares' (J' W J)^-1 u^2 (median 1.09, the channel initiator's fixed cost 1.33)
    and the Gauss-Newton sandwich A^-1 B A^-1, without the residuals' own curvature (median 1.09;
    before the prior on TCPIP's cost per KB 1.16, 8 of 12 parameters 1.15-1.25)."""
    from cryptoplan.model.calibration.bootstrap import refits
    from cryptoplan.model.calibration.scoring import group_batch, measured
    p = doc["parameters"]
    values = {k: float(v["value"]) for k, v in p.items()}
    names, tlist, batch = group_batch(group, values)
    x = np.array([values[k] for k in names])
    rows = refits(names, batch, measured(names, tlist), x, 0.01, 300, np.random.default_rng(5), repeat=False)
    ratio = {n: rows[:, i].std() / 0.01 / p[n]["stderr"] for i, n in enumerate(names) if p[n]["stderr"] is not None}
    assert len(ratio) >= len(names) - 1, ratio
    assert all(0.85 < q < 1.18 for q in ratio.values()), ratio
    assert 0.95 < np.median(list(ratio.values())) < 1.05, ratio


def test_the_printed_tls_errors_are_not_the_reweighted_covariance(doc):
    """docs/models.md and leastsq.py: the printed errors of the TLS block's fixed costs are 1.40
    (tls_chin_us) and 1.33 (tls_ssl_us) times the reweighted least squares' (J' W J)^-1 u^2 of the
    Cauchy weights W = 1/(1 + r^2), which `cryptoplan fit` printed before; recomputed here from the
    block's residuals and a central-difference Jacobian at the packaged fit (the reweighted errors
    to the differences' 1e-3).  The refits of test_the_printed_errors_are_how_far_the_fit_moves_when_
    its_figures_move follow the printed ones."""
    from cryptoplan.model.calibration.scoring import TOLERANCE_UNCERTAINTY as u, group_batch
    p = doc["parameters"]
    values = {k: float(v["value"]) for k, v in p.items()}
    names, _, batch = group_batch("tls", values)
    x = np.array([values[k] for k in names])
    r = batch(x[:, None])[0]
    h = 1e-6 * np.abs(x)
    got = batch(np.concatenate([x[:, None] + np.diag(h), x[:, None] - np.diag(h)], axis=1))
    jac = ((got[:x.size] - got[x.size:]) / (2 * h)[:, None]).T
    reweighted = np.sqrt(np.diag(np.linalg.inv(jac.T @ ((1 / (1 + r ** 2))[:, None] * jac)))) * u
    ratio = {n: p[n]["stderr"] / reweighted[i] for i, n in enumerate(names)}
    assert [round(float(ratio[n]), 2) for n in ("tls_chin_us", "tls_ssl_us")] == [1.40, 1.33], ratio


def test_each_bootstrap_block_draws_from_its_own_stream(fresh_fit, monkeypatch):
    """bootstrap_section seeds each block by the seed and the block's name, so a block that draws
    more (a prior or a figure added to the TLS block, which moved the handshake block's refits
    while the blocks shared one stream) leaves the others' draws as they were.  The refits are
    replaced by their random numbers (cheap), recorded per block."""
    from cryptoplan.model.calibration import bootstrap as B
    calls = {}

    def fake(extra):
        def refits(group, values, solution, n, rng):
            names = [k for k in FREE if B.GROUPS[FREE[k].submodel] == group]
            rng.standard_normal(extra if group == "tls" else 0)       # the TLS block draws more
            calls.setdefault(extra, {})[group] = rng.standard_normal((n, len(names)))
            return np.tile([fresh_fit["parameters"][k]["value"] for k in names], (n, 1))     # the fit, n times
        return refits
    for extra in (0, 7):
        monkeypatch.setattr(B, "_refits", fake(extra))
        B.bootstrap_section(fresh_fit, n=3, seed=0)
    assert set(calls[0]) == set(calls[7]) >= {"ams", "tls", "handshake"}
    for group in calls[0]:
        same = np.array_equal(calls[0][group], calls[7][group])
        assert same == (group != "tls"), group


def test_refits_without_noise_return_the_fit():
    """The refit is the fit's own problem: with the figures not moved (scale 0) it stays at the
    fitted values (the handshake block: 2 parameters, a fraction of a second)."""
    class Still:
        scale = 0.0
    doc = load_params()
    values = {k: v["value"] for k, v in doc["parameters"].items()}
    rows = _refits("handshake", values, Still(), 2, np.random.default_rng(0))
    assert_allclose(rows, [[values["hs_dhe_kx"], values["hs_sign_sw"]]] * 2, rtol=1e-4)


def test_a_broken_bootstrap_block_is_refused(doc):
    for change, match in ((lambda b: b["draws"][0].append(1.0), "not a table"),
                          (lambda b: b["draws"][0].__setitem__(0, -5.0), "outside its parameters' bounds"),
                          (lambda b: b["names"].__setitem__(0, "no_such"), "does not have: 'no_such'")):
        bad = copy.deepcopy(doc)
        change(bad["bootstrap"]["handshake"])
        with pytest.raises(CryptoplanError, match=match):
            parameter_draws(10, doc=bad)


def test_stalled_counts_the_refits_that_ended_where_they_started():
    from cryptoplan.model.calibration.bootstrap import stalled
    x_hat = np.array([66.5547, 1.24876, 0.0])
    rows = np.array([x_hat, x_hat * (1 + 1e-9), x_hat + [0.0, 0.0, 1e-300], x_hat, [1.0, 2.0, 3.0]])
    # rows 0 and 3 hold the fit to the last digit; a move of 1e-9 relative, or off a zero, is a move
    assert stalled(rows, x_hat) == 2
    assert stalled(rows[1:3], x_hat) == 0


def test_fit_out_warns_of_a_block_whose_refits_stalled(tmp_path, monkeypatch, fresh_fit):
    """cryptoplan fit --out says which bootstrap block holds refits that stopped at their start
    (its bands too narrow), instead of writing it silently."""
    import copy

    from click.testing import CliRunner
    from cryptoplan.cli import main
    from cryptoplan.model.calibration import fit as F
    real = F.bootstrap_section
    monkeypatch.setattr(F, "fit", lambda: copy.deepcopy(fresh_fit))     # the session's fit, not a new one

    def section(doc, n=5, seed=0):
        out = real(doc, n=n, seed=seed)
        out["tls"]["stalled"] = 2
        return out
    monkeypatch.setattr(F, "bootstrap_section", section)
    res = CliRunner().invoke(main, ["fit", "--out", str(tmp_path / "p.json")])
    assert res.exit_code == 0, res.output
    assert "warning: 2 of 5 tls refits stopped where they started" in res.output
    assert "bands drawn from that block are too narrow" in res.output
    assert "ams refits" not in res.output
    written = json.loads((tmp_path / "p.json").read_text())
    assert written["bootstrap"]["tls"]["stalled"] == 2
    assert all(isinstance(b["stalled"], int) for b in written["bootstrap"].values())


# --------------------------------------------------------------- draws against the fitted figures
def _draw_contradictions(n: int, seed: int) -> dict:
    """Share of ``n`` draws of the packaged parameters under which each fitted figure's model
    value falls outside the interval the figure accepts (Figure.bounds), and whether the fit
    itself is inside: ``{id: (share, inside_at_fit)}``, the crypto/AMS/TLS/handshake targets and
    the ten round trips."""
    from cryptoplan.model.calibration.targets import predictions, targets
    from cryptoplan.model.figures import figure
    from cryptoplan.model.params import using_values
    from cryptoplan.model.zos.tls import roundtrip_points, tls_roundtrip_us

    tl = targets()
    at_fit = {t.figure_id: float(t.predict()) for t in tl}
    at_fit.update({fid: float(tls_roundtrip_us(m, "TLS_CHACHA20_POLY1305_SHA256", kb))
                   for m, kb, _, fid in roundtrip_points()})
    drawn = parameter_draws(n, seed=seed)
    with using_values(drawn):
        got = {t.figure_id: p for t, p in zip(tl, predictions(tl))}
        got.update({fid: tls_roundtrip_us(m, "TLS_CHACHA20_POLY1305_SHA256", kb) for m, kb, _, fid in roundtrip_points()})
    out = {}
    for fid, values in got.items():
        lo, hi = figure(fid).bounds()
        v = np.broadcast_to(np.asarray(values, dtype=float), (n,))
        out[fid] = (float(np.mean((v < lo) | (v > hi))), bool(lo <= at_fit[fid] <= hi))
    return out


#: Fitted figures the fit meets that more than 10% of the packaged draws contradict (issue 62's bar
#: is none).  Measured on 20,000 draws (seeds 1-3), each bootstrap block drawn from its own stream:
#: the share of draws outside the accepted interval, and where the fit sits in it.  Most sit near an
#: edge, where any honest spread crosses it; for the others the draws' median is off the fit (the
#: refits are skewed) or the range is narrow for the spread.  Before a tolerance became a half-width
#: (scoring.TOLERANCE_UNCERTAINTY) and its log width exact (scoring._log_tolerance) 48 of the 82
#: figures the fit meets were over 10%.  Which figures near the bar cross it depends on the 201
#: refits drawn: while the blocks shared one stream, seed 002's 32 KB total saving was at 12-13%
#: and the NISTECC-192 rate at 12%, the ECC-521 comparison and the DHE note under 10%.  Four of the
#: nine are over the bar because of the recentring (draws.recentred moves each parameter alone,
#: which breaks the refits' relations): seed 001's 2 KB Confidentiality rate, the Privacy
#: accelerator share, the ECC-521 comparison and the DHE note, contradicted by 6.4%, 7.5%, 10.0% and
#: 10.4% of the refits as they came (seed 1); it brings seed 001's 64 KB 2048 -> 4096-bit cost
#: under (11.0% as they came).  The refits as they came leave six over the bar but put the plans'
#: point answers off their draws' medians (tests/test_plan_bands.py's bar); recentring each answer
#: instead leaves six too: ``python tests/study_draw_contradictions.py``.
OVER_TEN_PERCENT = {
    "s002_16k_chin_cost": "34%: fitted -49.54, the interval's end -49.5",
    "s001_64k_conf32_tput_4096": "28%: fitted 53.7 in [45, 55], draws' median 53.9",
    "s001_2k_conf32_tput_4096": "27-28%: fitted 25.05 in [23.75, 26.25], draws' median 25.3",
    "s001_privacy_accelerator_share": "23-24%: fitted 0.525 in [0.45, 0.55]",
    "s000_64k_chin_cost": "23%: fitted -46.3 in [-47.25, -42.75]",
    "ref_32k_rsa_aes128gcm_z15_us": "20%: fitted 445.8 in [378, 462], draws' median 451",
    "s001_tput_ecc521_vs_rsa4096": "15-16%: fitted 22.0 in [19, 25], draws' median 21.3",
    "s002_1m_total_cost": "14%: fitted -40.7 in [-46.2, -37.8], draws' median -40.4",
    "s003_coproc_vs_accel_dhe_cost_note": "11-12%: fitted -53.0 in [-55.65, -50.35], draws' median -52.6",
}

DRAWS_CHECKED = 20_000
#: A share of draws is measured, not known: "at most 10%" holds unless the share measured on
#: DRAWS_CHECKED draws is more than three binomial standard errors above it (0.64 points).
OVER = 0.10 + 3.0 * (0.10 * 0.90 / DRAWS_CHECKED) ** 0.5


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_draws_contradict_a_figure_the_fit_meets_in_at_most_ten_percent_of_draws_but_the_listed(seed):
    """Issue 62: draws should not contradict the figures they were fitted to by more than the
    figures' tolerance in more than 10% of draws.  Held for every fitted figure the fit meets
    (82 of 86) but the nine of :data:`OVER_TEN_PERCENT` (each with its measured share and where
    the fit sits); a figure the fit misses (data/misses.csv) is contradicted by most draws, as it
    is by the fit."""
    from cryptoplan.model.calibration.report import known_misses
    got = _draw_contradictions(DRAWS_CHECKED, seed)
    assert len(got) == 86
    misses = known_misses()
    for fid, (share, inside) in got.items():
        if not inside:
            assert fid in misses, fid
        elif share > OVER:
            assert fid in OVER_TEN_PERCENT, (fid, share)
    # the list is not stale: each is still over the bar
    for fid in OVER_TEN_PERCENT:
        assert got[fid][1] and got[fid][0] > OVER, (fid, got[fid])


def test_four_of_the_listed_are_the_recentrings_and_no_way_of_drawing_meets_the_bar():
    """docs/calibration.md's account of the figures over the bar, recomputed on the packaged file
    (tests/study_draw_contradictions.py, seed 1, 20,000 draws): the recentred draws contradict seed
    001's 2 KB Confidentiality rate and the Privacy accelerator share where the refits as they came
    do not; as they came, or recentred answer by answer, six figures are over the bar, and the
    README plan's accelerators sit off their draws' median (tests/test_plan_bands.py's bar)."""
    import re
    from pathlib import Path

    import study_draw_contradictions as S
    docs = " ".join((Path(__file__).resolve().parents[1] / "docs" / "calibration.md").read_text(encoding="utf-8").split())
    got = {v: S.shares(v) for v in ("shipped", "raw", "answer")}
    over = {v: sorted(f for f, (s, *_r) in g["figures"].items() if s > OVER) for v, g in got.items()}
    assert set(over["shipped"]) == set(OVER_TEN_PERCENT)
    pct = {v: {f: 100 * g["figures"][f][0] for f in ("s001_2k_conf32_tput_4096", "s001_privacy_accelerator_share")}
           for v, g in got.items()}
    said = (f"contradicted by {pct['shipped']['s001_2k_conf32_tput_4096']:.1f}% of the draws and by "
            f"{pct['raw']['s001_2k_conf32_tput_4096']:.1f}% of the refits as they came; the Privacy accelerator "
            f"share by {pct['shipped']['s001_privacy_accelerator_share']:.1f}% and "
            f"{pct['raw']['s001_privacy_accelerator_share']:.1f}%")
    assert said in docs, said
    assert set(over["shipped"]) - set(over["raw"]) == {"s001_2k_conf32_tput_4096", "s001_privacy_accelerator_share",
                                                       "s001_tput_ecc521_vs_rsa4096", "s003_coproc_vs_accel_dhe_cost_note"}
    assert set(over["raw"]) - set(over["shipped"]) == {"s001_64k_cost_2048_to_4096"}
    assert not {"s001_2k_conf32_tput_4096", "s001_privacy_accelerator_share"} & set(over["answer"])
    words = {6: "six"}
    assert f"The refits as they came leave {words[len(over['raw'])]} figures over the bar" in docs
    assert f"parameter leaves {words[len(over['answer'])]} too" in docs
    # each left over is met off the middle of its interval (a position in half-widths from it)
    assert all(abs(got["raw"]["figures"][f][1]) > 0.25 for f in over["raw"])
    q = {(p, pool): x for p, pool, x in got["raw"]["quantiles"]}
    z = 2.576 * 0.5 / np.sqrt(201)                  # test_plan_bands' noise of a median of 201 refits
    acc = q[("README plan", "accelerators")]
    assert not 0.5 - z <= acc <= 0.5 + z
    assert re.search(rf"README plan's accelerators at the {acc:.2f} quantile", docs)
    assert all(0.5 - z <= x <= 0.5 + z for _p, _pool, x in got["shipped"]["quantiles"])
