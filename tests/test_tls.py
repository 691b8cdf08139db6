"""TLS channels, handshakes and OCSP (model/zos/tls/: traffic, starts, handshakes).

Every expected value is a row of data/figures.csv read by id (its quote is the
source) or arithmetic on such rows written out in the test.
"""

from __future__ import annotations

import contextlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.figures import figure
from cryptoplan.model.params import CIPHERS
from cryptoplan.model.zos.tls import (channel_start_rate, channel_stop_cost_us, handshake_cpu_factor,
                       handshake_latency_factor, ocsp_cpu_us, tls_roundtrip_us)

CHACHA = "TLS_CHACHA20_POLY1305_SHA256"
SIZES = {"2k": 2.0, "16k": 16.0, "32k": 32.0, "64k": 64.0, "1m": 1024.0}


def pct(fid: str) -> float:
    """A pct_change row as a multiplier 1 + v/100."""
    f = figure(fid)
    assert f.unit == "pct_change", fid
    return 1.0 + f.target() / 100.0


# ------------------------------------------------------------ round trip
# Bound 5% relative.  Seed 002 prints one value per table cell and no repeat runs,
# so its run-to-run scatter is not published and cannot be cited.  The bound is set
# (a) above the fit's measured residuals (largest 1.6%, SSLCIPH 16KB) and
# (b) below the smallest AT-TLS vs SSLCIPH difference the model has to resolve at
# 16KB and above (s002_rt_attls_vs_sslciph_16k_pct, +7.48%), so a model that cannot tell
# the two modes apart fails.  The printed-digit tolerances of the rows (1e-6..2e-4) are
# not what a five-parameter physical model is asked for (see test_fit's known exceptions).
@pytest.mark.parametrize("mode, tag", [(m, t) for m in ("sslciph", "attls") for t in SIZES])
def test_roundtrip_reproduces_seed002_table(mode, tag):
    f = figure(f"s002_rt_{mode}_{tag}_us")
    assert float(f.conditions["message_kb"]) == SIZES[tag]
    model = tls_roundtrip_us(f.conditions["mode"], f.conditions["cipher"], SIZES[tag])
    assert_allclose(model, f.target(), rtol=0.05)


def test_attls_gap_grows_with_size():
    # seed 002: AT-TLS round trip increase over SSLCIPH grows with size over the table's columns
    # (+1.24 +7.48 +11.64 +16.32 +37.87%: the SRB encrypts then sends)
    published = [figure(f"s002_rt_attls_vs_sslciph_{t}_pct").target() for t in SIZES]
    assert published == sorted(published)
    kb = np.array(list(SIZES.values()))
    gap = tls_roundtrip_us("ATTLS", CHACHA, kb) - tls_roundtrip_us("SSLCIPH", CHACHA, kb)
    assert np.all(np.diff(gap) > 0)
    assert gap[0] > 0


def test_roundtrip_increase_rows_are_scored_against_their_tolerance():
    """Seed 002's "% increase in round-trip time" row (+1.24 +7.48 +11.64 +16.32 +37.87), each
    cell against its own accepted interval (exact: 5% or 1 point, the wider), never a trend: a
    cell outside it is listed in data/misses.csv with its reason, and a listed cell is outside."""
    from cryptoplan.model.calibration.fit import known_misses
    misses = known_misses()
    for tag, kb in SIZES.items():
        fid = f"s002_rt_attls_vs_sslciph_{tag}_pct"
        extra = 100 * (tls_roundtrip_us("ATTLS", CHACHA, kb) / tls_roundtrip_us("SSLCIPH", CHACHA, kb) - 1)
        lo, hi = figure(fid).bounds()
        assert (lo <= extra <= hi) == (fid not in misses), (fid, extra, lo, hi)
    assert sum(f"s002_rt_attls_vs_sslciph_{tag}_pct" in misses for tag in SIZES) <= 2


def test_attls_at_one_megabyte_costs_measurably_more_than_an_unprotected_channel():
    """Issue 45: the AT-TLS per-KB cost is positive and sourced.  A 1 MB request/reply over an
    AT-TLS channel encrypts and decrypts 4 MB; at the CPACF prior's lower end (half of one AES
    pass per KB as the MQ for z/OS on z14 report's AMS cost gives it: ams_enc_us_per_kb / 2 / 2)
    that is at least 1 µs/KB x 4096 KB more CPU than the unprotected channel, in TCPIP (the
    decrypting SRB) and in CHIN (the encrypting caller) alike."""
    from cryptoplan.model.params import param
    from cryptoplan.model.zos.tls import tls_cost_us
    floor = param("ams_enc_us_per_kb") / 4.0                          # µs/KB per pass, the prior's low end
    for cipher in ("TLS_RSA_WITH_AES_256_CBC_SHA256", "TLS_AES_256_GCM_SHA384", "NULL_SHA"):
        for space in ("CHIN", "TCPIP"):
            extra = tls_cost_us("ATTLS", cipher, 1024.0, space) - tls_cost_us("none", None, 1024.0, space)
            assert extra >= 2 * 1024 * floor, (cipher, space, extra)
        total = tls_cost_us("ATTLS", cipher, 1024.0) - tls_cost_us("none", None, 1024.0)
        assert total >= 4 * 1024 * floor and total > 0.25 * tls_cost_us("none", None, 1024.0), (cipher, total)


@settings(max_examples=50, deadline=None)
@given(a=st.floats(0.0, 1024.0), b=st.floats(0.0, 1024.0), mode=st.sampled_from(["SSLCIPH", "ATTLS"]))
def test_roundtrip_grows_with_size_everywhere(a, b, mode):
    """More data never takes less time: each mode's round trip is increasing on 0..1 MB."""
    lo, hi = sorted((a, b))
    assert tls_roundtrip_us(mode, CHACHA, hi) >= tls_roundtrip_us(mode, CHACHA, lo)


@settings(max_examples=50, deadline=None)
@given(a=st.floats(2.0, 1024.0), b=st.floats(2.0, 1024.0))
def test_attls_gap_monotone_over_the_published_sizes(a, b):
    """AT-TLS's extra time grows with size from the table's first column (2 KB) to its last.

    Below 2 KB nothing is published and the two intercepts are extrapolations: the model's
    gap falls from about 78 µs at zero size to about 23 µs near 1.8 KB (the traffic module says
    so); it is not asserted there."""
    lo, hi = sorted((a, b))
    def gap(kb):
        return tls_roundtrip_us("ATTLS", CHACHA, kb) - tls_roundtrip_us("SSLCIPH", CHACHA, kb)
    assert gap(hi) >= gap(lo) - 1e-6


@settings(max_examples=50, deadline=None)
@given(a=st.floats(0.0, 512.0), b=st.floats(0.0, 512.0))
def test_sslciph_roundtrip_is_linear(a, b):
    # seed 002 / MODEL.md: SSLCIPH is pipelined, round trip close to linear in size:
    # f(a + b) - f(0) == (f(a) - f(0)) + (f(b) - f(0))
    def f(kb):
        return tls_roundtrip_us("SSLCIPH", CHACHA, kb)
    assert_allclose(f(a + b) - f(0.0), (f(a) - f(0.0)) + (f(b) - f(0.0)), rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("cipher", [c for c, (_, hw) in CIPHERS.items() if hw])
def test_roundtrip_hardware_cipher_raises(cipher):
    with pytest.raises(ValueError, match=CHACHA):
        tls_roundtrip_us("SSLCIPH", cipher, 2.0)


def test_roundtrip_mode_none_raises():
    with pytest.raises(ValueError, match="SSLCIPH or ATTLS"):
        tls_roundtrip_us("none", CHACHA, 2.0)


def test_roundtrip_outside_measured_sizes_raises():
    with pytest.raises(ValueError, match="message_kb"):
        tls_roundtrip_us("ATTLS", CHACHA, 2048.0)


# ------------------------------------------------------ channel start / stop
START_STEMS = ("rsa_aes256cbc", "ecdhe_rsa", "ecdhe_ecdsa")


@pytest.mark.parametrize("stem", START_STEMS)
@pytest.mark.parametrize("platform", ["z15", "z16"])
def test_sslciph_start_rate_is_the_platform_row_for_its_cipher(stem, platform):
    # the reference channel-start table, "| TLS_RSA_WITH_AES_256_CBC_SHA256 | 174 | 2.21 | 150 |
    # 1.97 |" and its ECDHE rows: starts/s and CPU ms per start, z15 and z16 columns
    f = figure(f"ref_start_rate_{stem}_{platform}")
    assert channel_start_rate("SSLCIPH", f.conditions["cipher"], platform) == f.target()
    if platform == "z16":
        assert channel_start_rate("SSLCIPH", f.conditions["cipher"]) == f.target()  # the default
    cpu = figure(f"ref_start_cpu_{stem}_{platform}_ms")
    assert_allclose(model.channel_start_cost_us("SSLCIPH", f.conditions["cipher"], platform=platform),
                    1000.0 * cpu.target(), rtol=1e-12)


def test_channel_starts_have_no_z14_column_and_no_z15_tls13_rate():
    with pytest.raises(ValueError, match="platform must be one of z15, z16 .got .z14.*columns only"):
        channel_start_rate("SSLCIPH", HW12, "z14")
    with pytest.raises(ValueError, match="platform must be one of z15, z16 .got .z14.*columns only"):
        model.channel_start_cost_us("none", None, "total", "z14")
    with pytest.raises(ValueError, match="no TLS 1.3 channel-start rate is published for z15"):
        channel_start_rate("SSLCIPH", "TLS_AES_256_GCM_SHA384", "z15")


def _seed002_start_rows(platform):
    """The start-table rates of the SSLCIPH ciphers seed 002 measured (its cipher column:
    TLS_RSA_WITH_AES_256_CBC_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256)
    that the platform's column has: TLS_RSA on z15; TLS_RSA and the TLS 1.3 range on z16."""
    ciphers = figure("s002_start_rate_sslciph").conditions["cipher"].split("|")
    assert ciphers == ["TLS_RSA_WITH_AES_256_CBC_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]
    ids = [f"ref_start_rate_rsa_aes256cbc_{platform}"] + (["ref_start_rate_tls13_z16"] if platform == "z16" else [])
    return [figure(i).target() for i in ids]


@pytest.mark.parametrize("platform", ["z15", "z16"])
def test_unsecured_start_rate_is_the_middle_of_what_the_range_allows(platform):
    # seed 002: "between 33 to 50% of the rate of unsecured channels" for the ciphers it measured:
    # U must put each of their rates in [33%, 50%] of U; the model takes the middle of those U.
    # The ECDHE rows are not among them (their handshakes are slower: below 33% is allowed).
    rates = _seed002_start_rows(platform)
    a, b = figure("s002_start_rate_sslciph").low / 100, figure("s002_start_rate_sslciph").high / 100
    expect = 0.5 * (max(rates) / b + min(rates) / a)
    assert_allclose(channel_start_rate("none", None, platform), expect, rtol=1e-12)
    # worked numbers: z15 174/s -> U = 174 (1/0.5 + 1/0.33) / 2 = 437.6/s; z16 (150, 139/s) -> 360.6/s
    assert_allclose(expect, {"z15": 437.636, "z16": 360.606}[platform], rtol=1e-5)


@pytest.mark.parametrize("cipher", [c for c, (p, _) in CIPHERS.items() if p == "TLS1.3"])
def test_sslciph_tls13_start_rate_is_range_midpoint(cipher):
    f = figure("ref_start_rate_tls13_z16")  # "~135-143 channels/s on z16"
    assert_allclose(channel_start_rate("SSLCIPH", cipher), 0.5 * (f.low + f.high), rtol=1e-12)


@pytest.mark.parametrize("cipher", ["TLS_RSA_WITH_AES_256_CBC_SHA", CHACHA, "TLS_AES_256_GCM_SHA384"])
def test_attls_start_rate_ratio_to_unsecured(cipher):
    f = figure("s002_start_rate_attls")  # "75% to 80% of the rate of unsecured channels"
    ratio = channel_start_rate("ATTLS", cipher) / channel_start_rate("none")
    assert_allclose(ratio, 0.5 * (f.low + f.high) / 100.0, rtol=1e-12)


@pytest.mark.parametrize("platform", ["z15", "z16"])
def test_sslciph_start_rates_within_33_to_50_pct_of_unsecured(platform):
    # s002_start_rate_sslciph: "between 33 to 50% of the rate of unsecured channels", for seed
    # 002's ciphers (TLS 1.3 only where the column has it), without the row's tolerance
    f = figure("s002_start_rate_sslciph")
    none = channel_start_rate("none", None, platform)
    ciphers = f.conditions["cipher"].split("|")
    for cipher in ciphers if platform == "z16" else ciphers[:1]:
        share = 100.0 * channel_start_rate("SSLCIPH", cipher, platform) / none
        assert f.low <= share <= f.high, (cipher, share)


@pytest.mark.parametrize("mode, chin_id, tcp_id", [
    ("none", "s002_stop_cost_chin_none_attls_us", "s002_stop_cost_tcpip_none_sslciph_us"),
    ("SSLCIPH", "s002_stop_cost_chin_sslciph_us", "s002_stop_cost_tcpip_none_sslciph_us"),
    ("ATTLS", "s002_stop_cost_chin_none_attls_us", "s002_stop_cost_tcpip_attls_us"),
])
def test_channel_stop_cost_per_rows(mode, chin_id, tcp_id):
    chin, tcp = figure(chin_id).target(), figure(tcp_id).target()
    assert_allclose(channel_stop_cost_us(mode, "CHIN"), chin, rtol=1e-12)
    assert_allclose(channel_stop_cost_us(mode, "TCPIP"), tcp, rtol=1e-12)
    assert_allclose(channel_stop_cost_us(mode), chin + tcp, rtol=1e-12)
    assert_allclose(channel_stop_cost_us(mode, "total"), chin + tcp, rtol=1e-12)


def test_attls_stop_tcpip_is_midpoint_of_100_150():
    f = figure("s002_stop_cost_tcpip_attls_us")  # "100-150 CPU microseconds per channel"
    assert (f.low, f.high) == (100.0, 150.0)
    assert_allclose(channel_stop_cost_us("AT-TLS", "TCPIP"), 125.0, rtol=1e-12)


def test_stop_cost_mstr_raises():
    with pytest.raises(ValueError, match="total, CHIN or TCPIP"):
        channel_stop_cost_us("SSLCIPH", "MSTR")


# ------------------------------------------------------------ handshakes
def test_baseline_factor_is_one():
    assert handshake_cpu_factor() == 1.0
    assert handshake_latency_factor() == 1.0


@pytest.mark.parametrize("fid, model", [
    # "Up to 97% reduction in CPU cost per transaction compared to DHE key exchange"
    ("s003_ecdhe_vs_dhe_cost", lambda: 100 * (handshake_cpu_factor("ECDHE") / handshake_cpu_factor("DHE") - 1)),
    # "... offloaded onto the Coprocessor card and not the Accelerator card, which translate into
    # 53% and 98% CPU savings, respectively"
    ("s003_coproc_vs_accel_ecdhe_cost_note",
     lambda: 100 * (handshake_cpu_factor("ECDHE") / handshake_cpu_factor("ECDHE", card_mode="accelerator") - 1)),
    ("s003_coproc_vs_accel_dhe_cost_note",
     lambda: 100 * (handshake_cpu_factor("DHE") / handshake_cpu_factor("DHE", card_mode="accelerator") - 1)),
])
def test_the_three_key_exchange_statements_hold_to_their_printed_digit(fid, model):
    # Read directly, the first two made the third 59.5% (issue 32 item 5); the two handshake
    # parameters are now fitted to all three: each within its row's interval (printed precision).
    lo, hi = figure(fid).bounds()
    assert lo <= model() <= hi, (fid, model(), (lo, hi))


def test_tls13_cpu_factor_is_1_16():
    # s003_tls13_vs_tls12_cost: "just 16% increase in network CPU cost"
    assert figure("s003_tls13_vs_tls12_cost").target() == 16.0
    assert_allclose(handshake_cpu_factor(protocol="TLS1.3"), 1.16, rtol=1e-12)


def test_rsa_key_exchange_factor():
    # s003_ecdhe_vs_rsa_kx_cost: ECDHE adds up to 26% over RSA key exchange
    assert_allclose(handshake_cpu_factor("RSA"), 1.0 / pct("s003_ecdhe_vs_rsa_kx_cost"), rtol=1e-12)


# Seed 003's sentences, one test each: the composed factors must state what the sentence states
# (expected values: the sentence's own numbers, through the rows that quote them).
def test_sentence_ecdhe_adds_up_to_26_pct_over_rsa_key_exchange():
    # "up to a 26% increase for full handshake processing in this comparison"
    assert_allclose(handshake_cpu_factor("ECDHE") / handshake_cpu_factor("RSA") - 1, 0.26, rtol=1e-12)


def test_sentence_ecdhe_similar_to_rsa_with_resumption():
    # "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 ... has similar performance impact as RSA key
    # exchange when using TLS session resumption" (the old product gave 1.26x)
    assert_allclose(handshake_cpu_factor("ECDHE", resumption=True),
                    handshake_cpu_factor("RSA", resumption=True), rtol=1e-12)


def test_sentence_dhe_software_cost_mostly_removed_by_resumption():
    # "Most of the processing done in software for the DHE key exchange is removed when you
    # enable TLS session resumption" (the old product kept half of it: 16.7x)
    full_dhe, full_ecdhe = handshake_cpu_factor("DHE"), handshake_cpu_factor("ECDHE")
    software = full_dhe - full_ecdhe               # what DHE adds in software over ECDHE
    removed = full_dhe - handshake_cpu_factor("DHE", resumption=True)
    assert removed > 0.5 * software
    assert handshake_cpu_factor("DHE", resumption=True) <= full_ecdhe


def test_sentence_resumption_saves_up_to_50_pct_on_tls12():
    # "enabling TLS session resumption for selected TLSv1.2 protocol ciphers (up to 50%
    # savings in CPU cost)": the largest saving over the ciphers measured (ECDHE-RSA, RSA) is 50%
    savings = [1 - handshake_cpu_factor(kx, resumption=True) / handshake_cpu_factor(kx) for kx in ("ECDHE", "RSA")]
    assert_allclose(max(savings), 0.50, rtol=1e-12)
    assert min(savings) > 0


def test_sentence_tls13_resumption_saves_up_to_30_pct():
    # "Figure 7 shows up to 30% CPU savings for TLSv1.3 protocol"
    assert_allclose(1 - handshake_cpu_factor(protocol="TLS1.3", resumption=True)
                    / handshake_cpu_factor(protocol="TLS1.3"), 0.30, rtol=1e-12)


def test_sentence_sysplex_tickets_save_up_to_30_pct_of_resumed_handshakes():
    # "Up to 30% reduction in CPU cost on target systems" with "sysplex-wide session tickets
    # caching": a ticket resumes a session, so the saving is the resumed handshakes'
    kw = dict(protocol="TLS1.3", resumption=True)
    assert_allclose(handshake_cpu_factor(sysplex_tickets=True, **kw) / handshake_cpu_factor(**kw), 0.70,
                    rtol=1e-12)


def test_sysplex_tickets_save_nothing_without_resumption():
    # a full handshake uses no session ticket (issue 32: the model gave 0.81, a 30% saving)
    for kx, card in (("ECDHE", "coprocessor"), ("ECDHE", "accelerator")):
        kw = dict(key_exchange=kx, protocol="TLS1.3", card_mode=card)
        assert handshake_cpu_factor(sysplex_tickets=True, **kw) == handshake_cpu_factor(**kw)


def test_sentence_coprocessor_saving_is_one_software_signature_and_dhe_within_the_seeds_bounds():
    # "Required RSA signing operations for DHE and ECDHE based cipher suite are offloaded onto
    # the Coprocessor card and not the Accelerator card" and, above it, "especially for the
    # DHE-based ciphers (up to 98% CPU savings)".  One software signature (the same RSA-2048
    # sign for both) is added on accelerators; DHE's saving lies between the two DHE statements.
    def saving(kx):
        return 1 - handshake_cpu_factor(kx) / handshake_cpu_factor(kx, card_mode="accelerator")
    assert -pct_value("s003_coproc_vs_accel_dhe_cost_note") / 100 * (1 - figure(
        "s003_coproc_vs_accel_dhe_cost_note").tolerance) <= saving("DHE") \
        <= -pct_value("s003_coproc_vs_accel_dhe_cost") / 100
    # added, not multiplied: DHE on accelerators = DHE + the software signature
    assert_allclose(handshake_cpu_factor("DHE", card_mode="accelerator") - handshake_cpu_factor("DHE"),
                    handshake_cpu_factor(card_mode="accelerator") - handshake_cpu_factor(), rtol=1e-12)
    # "There are no signing operations for the TLS_RSA_XXXX based cipher suite"
    assert handshake_cpu_factor("RSA", card_mode="accelerator") == handshake_cpu_factor("RSA")


def test_sentence_fips_accelerator_saves_up_to_97_pct():
    # "great CPU cost savings (up to 97%) ... using Accelerator mode compared to Coprocessor
    # mode in a FIPS environment"
    assert_allclose(1 - handshake_cpu_factor(fips=True, card_mode="accelerator") / handshake_cpu_factor(fips=True),
                    0.97, rtol=1e-12)


def test_tls13_rsa_pss_signature_is_not_offloaded_to_an_accelerator():
    # ICSF offloads clear-key "RSA Sign/Verify (but not RSA PSS)" (z/OS ICSF Overview); a TLS 1.3
    # RSA signature is RSASSA-PSS (RFC 8446 4.2.3).  FIPS mode sends TLS 1.2's signature to the
    # accelerator (seed 003's 97% saving, above); TLS 1.3's stays in software: the full TLS 1.3
    # handshake plus the software signature s, the same s the non-FIPS accelerator case adds
    s = param("hs_sign_sw")
    tls13_accel = handshake_cpu_factor(protocol="TLS1.3", fips=True, card_mode="accelerator")
    assert_allclose(tls13_accel, handshake_cpu_factor(protocol="TLS1.3") + s, rtol=1e-12)
    assert_allclose(tls13_accel, handshake_cpu_factor(protocol="TLS1.3", card_mode="accelerator"), rtol=1e-12)
    assert handshake_cpu_factor(fips=True, card_mode="accelerator") == 1.0       # TLS 1.2: offloaded
    # a coprocessor signs PSS with the PKDS key: seed 003's TLS 1.3 +16% on a coprocessor holds
    assert_allclose(handshake_cpu_factor(protocol="TLS1.3"), 1.16, rtol=1e-12)
    # a resumed handshake signs nothing
    assert handshake_cpu_factor(protocol="TLS1.3", fips=True, card_mode="accelerator", resumption=True) == \
        handshake_cpu_factor(protocol="TLS1.3", resumption=True)


def pct_value(fid):
    return figure(fid).target()


def test_latency_factors_from_rows():
    # s003_ecdhe_vs_dhe_latency: "(95%) reduction in transactional latency compared to DHE"
    assert_allclose(handshake_latency_factor("DHE"), 1.0 / (1.0 - 0.95), rtol=1e-12)
    # s003_fips_accel_vs_coproc_latency: "93% reduction in network latency" (accelerator vs coprocessor)
    assert_allclose(handshake_latency_factor(fips=True), 1.0 / (1.0 - 0.93), rtol=1e-12)
    assert_allclose(handshake_latency_factor(fips=True, card_mode="accelerator"), 1.0, rtol=1e-12)


@pytest.mark.parametrize("kwargs, name", [
    (dict(key_exchange="RSA"), "key_exchange=RSA"),
    (dict(protocol="TLS1.3"), "protocol=TLS1.3"),
    (dict(resumption=True), "resumption"),
    (dict(card_mode="accelerator"), "card_mode=accelerator"),
])
def test_latency_factor_raises_for_unpublished_options(kwargs, name):
    with pytest.raises(ValueError, match=name):
        handshake_latency_factor(**kwargs)


@pytest.mark.parametrize("fn", [handshake_cpu_factor, handshake_latency_factor])
def test_heappools64_off_raises(fn):
    with pytest.raises(ValueError, match="HEAPPOOLS64"):
        fn(heappools64=False)
    with pytest.raises(ValueError, match="HEAPPOOLS64"):
        fn(heappools64="FALSE")


@pytest.mark.parametrize("kwargs, match", [
    (dict(key_exchange="PSK"), "RSA, ECDHE, DHE"),
    (dict(certificate="DSA"), "certificate must be one of RSA, ECDSA"),
    (dict(protocol="SSLv3"), "protocol must be one of TLS1.2, TLS1.3"),
    (dict(card_mode="cpacf"), "card_mode must be one of coprocessor, accelerator"),
    (dict(protocol="TLS1.3", key_exchange="RSA"), "ECDHE"),
    (dict(sysplex_tickets=True), "TLS 1.3"),
    (dict(fips="maybe"), "TRUE or FALSE"),
])
def test_handshake_bad_options_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        handshake_cpu_factor(**kwargs)


# ------------------------------------------------------------ OCSP
@pytest.mark.parametrize("space, fid, change", [
    ("total", "s004_ocsp_total_pct", -0.20),        # "decreased by 0.732 ms or 20%"
    ("SSL_server", "s004_ocsp_ssl_server_pct", -0.27),  # "decreased by 0.868 ms or 27%"
    ("TCPIP", "s004_ocsp_tcpip_pct", +0.47),        # "increased by 0.136 ms or 47%"
])
def test_ocsp_applies_published_change(space, fid, change):
    assert figure(fid).target() == 100.0 * change
    assert_allclose(ocsp_cpu_us(1000.0, space), 1000.0 * (1.0 + change), rtol=1e-12)
    assert_allclose(ocsp_cpu_us([0.0, 3660.0], space), [0.0, 3660.0 * (1.0 + change)], rtol=1e-12)


def test_ocsp_bad_input():
    with pytest.raises(ValueError, match="total, SSL_server, TCPIP"):
        ocsp_cpu_us(1000.0, "MSTR")
    with pytest.raises(ValueError, match="connection_cpu_us"):
        ocsp_cpu_us(-1.0)


# ------------------------------------------------------------ TLS CPU cost per transaction
# Expected values: the cost model's stated form (tls_cost_parts_us docstring) evaluated in
# the test from the parameters in force, and published rows read by id.
from cryptoplan import model  # noqa: E402
from cryptoplan.model.params import param  # noqa: E402

HW12 = "TLS_RSA_WITH_AES_256_CBC_SHA256"
SW = "TLS_CHACHA20_POLY1305_SHA256"


@pytest.mark.parametrize("kb", [0.0, 2.0, 64.0, 1024.0])
def test_total_is_the_sum_of_the_address_spaces(kb):
    for mode, cipher in (("none", None), ("SSLCIPH", HW12), ("ATTLS", SW)):
        parts = [model.tls_cost_us(mode, cipher, kb, sp) for sp in ("MSTR", "CHIN", "TCPIP")]
        assert_allclose(model.tls_cost_us(mode, cipher, kb), sum(parts), rtol=1e-12)


def test_who_pays_for_encryption():
    # seeds 000/002: SSLCIPH pays encryption and decryption in CHIN; AT-TLS charges the
    # encryption to CHIN and the decryption to the TCPIP SRB.  Symmetric CPU per KB: e.
    e = param("tls_sym_us_per_kb_sw")
    kb = 64.0
    none_chin = model.tls_cost_us("none", None, kb, "CHIN")
    none_tcp = model.tls_cost_us("none", None, kb, "TCPIP")
    ssl_chin = model.tls_cost_us("SSLCIPH", SW, kb, "CHIN")
    at_chin = model.tls_cost_us("ATTLS", SW, kb, "CHIN")
    at_tcp = model.tls_cost_us("ATTLS", SW, kb, "TCPIP")
    assert_allclose(ssl_chin - none_chin, param("tls_ssl_us") + (param("tls_ssl_us_per_kb") + 4 * e) * kb,
                    rtol=1e-12)
    assert_allclose(at_chin - none_chin, 2 * e * kb, rtol=1e-12)  # encryption only
    assert_allclose(at_tcp - none_tcp, param("tls_attls_tcpip_us") + 2 * e * kb, rtol=1e-12)
    assert_allclose(model.tls_cost_us("SSLCIPH", SW, kb, "TCPIP"), none_tcp, rtol=1e-12)


@pytest.mark.parametrize("kb", [2.0, 16.0, 32.0, 64.0, 1024.0])
def test_attls_cheaper_in_chin_dearer_in_tcpip(kb):
    # seed 002: "Channel initiator costs are up to ... lower when using AT-TLS" and TCP/IP
    # costs are higher, for every cipher and size measured.
    for ssl, at in ((HW12, "TLS_RSA_WITH_AES_256_CBC_SHA"), (SW, SW),
                    ("TLS_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384")):
        assert model.tls_cost_us("ATTLS", at, kb, "CHIN") < model.tls_cost_us("SSLCIPH", ssl, kb, "CHIN")
        assert model.tls_cost_us("ATTLS", at, kb, "TCPIP") > model.tls_cost_us("SSLCIPH", ssl, kb, "TCPIP")


def test_chacha_attls_absolute_cpu_within_ten_percent():
    # seed 002 prints CHIN = TCPIP ~ 2.2 / 4.3 / 8.4 / 133 CPU ms per transaction (approximate,
    # read as each address space); the fit reaches 2-7%.
    for tag, kb in (("16k", 16.0), ("32k", 32.0), ("64k", 64.0), ("1m", 1024.0)):
        for sp in ("chin", "tcpip"):
            pub = figure(f"s002_{tag}_chacha_attls_{sp}_ms").target()
            assert_allclose(model.tls_cost_us("ATTLS", SW, kb, sp.upper()) / 1000.0, pub, rtol=0.10)


def test_renegotiation_amortization():
    # reference facts: CPU ms per negotiation; each of the 2 channels renegotiates every
    # SSLRKEYC bytes it carries; 1..32KB counts as 32KB; TLS 1.3 does not renegotiate.
    per_neg_us = figure("ref_reneg_ecdhe_rsa_z16_ms").target() * 1000
    c = "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"
    assert_allclose(model.renegotiation_cost_us(c, 32, 1048576), 2 * 32 / 1024 * per_neg_us, rtol=1e-12)
    assert_allclose(model.renegotiation_cost_us(c, 32, 1000), model.renegotiation_cost_us(c, 32, 32768),
                    rtol=1e-12)
    assert model.renegotiation_cost_us(c, 32, 0) == 0.0
    assert model.renegotiation_cost_us("TLS_AES_256_GCM_SHA384", 32, 1048576) == 0.0
    with_r = model.tls_cost_us("SSLCIPH", c, 32, "CHIN", sslrkeyc=1048576)
    without = model.tls_cost_us("SSLCIPH", c, 32, "CHIN")
    assert_allclose(with_r - without, 2 * 32 / 1024 * per_neg_us, rtol=1e-12)
    with pytest.raises(ValueError, match="sslrkeyc"):
        model.tls_cost_us("ATTLS", c, 32, sslrkeyc=1048576)
    with pytest.raises(ValueError, match="platform"):
        model.renegotiation_cost_us(c, 32, 1048576, platform="z13")


@pytest.mark.parametrize("mode, cipher", [("none", None), ("SSLCIPH", HW12), ("ATTLS", SW)])
@pytest.mark.parametrize("space", ["MSTR", "CHIN", "TCPIP"])
def test_platforms_scale_the_z15_costs(mode, cipher, space):
    # the stated platform rule (tls_cost_parts_us docstring): z14 = g x z15 in every address
    # space, with g the fitted tls_z14_vs_z15; z16 = z15 (no z16 channel costs are published)
    g = param("tls_z14_vs_z15")
    z15 = model.tls_cost_us(mode, cipher, 32.0, space, platform="z15")
    assert_allclose(model.tls_cost_us(mode, cipher, 32.0, space, platform="z14"), g * z15, rtol=1e-12)
    assert_allclose(model.tls_cost_us(mode, cipher, 32.0, space, platform="z16"), z15, rtol=1e-12)


def test_z14_dearer_than_z15_like_the_reference_rows():
    # reference facts (z15 report pp.22/24): every 32KB cipher costs more on z14 than on z15
    # (~715 -> ~650 ... ~520 -> ~455 us/txn); the fitted ratio must say the same
    pairs = [(figure(f"ref_32k_{c}_z14_us").target(), figure(f"ref_32k_{c}_z15_us").target())
             for c in ("ecdhe_ecdsa", "ecdhe_rsa", "rsa_aes128gcm", "rsa_aes256cbc")]
    assert all(a > b for a, b in pairs)
    assert param("tls_z14_vs_z15") > 1.0


def test_unknown_platform_lists_the_accepted_ones():
    with pytest.raises(ValueError, match="platform must be one of z14, z15, z16"):
        model.tls_cost_us("SSLCIPH", HW12, 2.0, platform="z196")


def test_channel_start_cost_from_rows():
    tcp0 = figure("s002_start_cost_tcpip_none_us").target()
    total12 = figure("ref_start_cpu_rsa_aes256cbc_z16_ms").target() * 1000
    doubling = figure("s002_start_cost_chin_tls12").target()
    # SSLCIPH's TCPIP: the unprotected cost plus the handshake's flights (4 in TLS 1.2, 3 in
    # TLS 1.3: RFC 5246 / RFC 8446) at half the fitted TCPIP cost per transaction each
    tcp12, tcp13 = tcp0 + 2.0 * param("tls_tcpip_us"), tcp0 + 1.5 * param("tls_tcpip_us")
    chin0 = (total12 - tcp12) / doubling
    assert_allclose(model.channel_start_cost_us("none"), chin0 + tcp0, rtol=1e-12)
    z15_total12 = figure("ref_start_cpu_rsa_aes256cbc_z15_ms").target() * 1000
    assert_allclose(model.channel_start_cost_us("none", platform="z15"),
                    (z15_total12 - tcp12) / doubling + tcp0, rtol=1e-12)
    assert_allclose(model.channel_start_cost_us("SSLCIPH", HW12), total12, rtol=1e-12)
    assert_allclose(model.channel_start_cost_us("SSLCIPH", HW12, "CHIN"), doubling * chin0, rtol=1e-12)
    assert_allclose(model.channel_start_cost_us("ATTLS", SW, "TCPIP"),
                    figure("s002_start_cost_tcpip_attls_tls13sw_us").target(), rtol=1e-12)
    # seed 002: TLS 1.3 SSLCIPH CHIN "three times" (hardware) / "3.5 times" (CHACHA20) the
    # unsecured channel's
    for cipher, fid in (("TLS_AES_256_GCM_SHA384", "s002_start_cost_chin_tls13hw"),
                        (SW, "s002_start_cost_chin_tls13sw")):
        assert_allclose(model.channel_start_cost_us("SSLCIPH", cipher, "CHIN"),
                        figure(fid).target() * chin0, rtol=1e-12)
        assert_allclose(model.channel_start_cost_us("SSLCIPH", cipher, "TCPIP"), tcp13, rtol=1e-12)
    assert_allclose(model.channel_start_cost_us("SSLCIPH", HW12, "TCPIP"), tcp12, rtol=1e-12)
    assert figure("s002_start_cost_chin_tls13sw").target() == 3.5
    with pytest.raises(ValueError, match="MSTR"):
        model.channel_start_cost_us("none", None, "MSTR")


@pytest.mark.parametrize("platform", ["z15", "z16"])
@pytest.mark.parametrize("cipher", [HW12, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "TLS_AES_256_GCM_SHA384", SW])
def test_sslciph_channel_start_adds_a_small_tcpip_increase(cipher, platform):
    # Seed 002: "With secure channels, MQ using System SSL does see a small increase in TCPIP
    # costs but the additional cost is primarily in the channel initiator address space", and
    # AT-TLS's TCPIP increase (30 -> 210..690 us) is the large one.
    tcp0 = model.channel_start_cost_us("none", None, "TCPIP", platform)
    chin0 = model.channel_start_cost_us("none", None, "CHIN", platform)
    tcp = model.channel_start_cost_us("SSLCIPH", cipher, "TCPIP", platform)
    chin = model.channel_start_cost_us("SSLCIPH", cipher, "CHIN", platform)
    attls_tcp = min(figure(f"s002_start_cost_tcpip_attls_{f}_us").target() for f in ("tls12", "tls13hw", "tls13sw"))
    assert tcp > tcp0                                   # an increase
    assert tcp - tcp0 < 0.1 * (chin - chin0)            # primarily in the channel initiator
    assert tcp - tcp0 < 0.25 * (attls_tcp - tcp0)       # small beside AT-TLS's (the handshake itself)


# Expected values: the z16 report's RMF card time per channel start (ref_start_cex_* rows,
# a range at its midpoint) and U = rate x time / (cards x requests per card).
@pytest.mark.parametrize("cipher, stem", [(HW12, "rsa"), ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", "ecdhe_rsa"),
                                          ("TLS_AES_256_GCM_SHA384", "tls13"), (SW, "tls13"),
                                          ("NULL_SHA", "rsa")])
def test_channel_start_card_time_from_rows(cipher, stem):
    for card, tag in (("coprocessor", "coproc"), ("accelerator", "accel")):
        f = figure(f"ref_start_cex_{stem}_{tag}_ms")
        assert_allclose(model.channel_start_card_ms(cipher, card), f.target(), rtol=1e-12)
        assert f.bounds()[0] <= model.channel_start_card_ms(cipher, card) <= f.bounds()[1]


def test_ecdsa_channel_start_uses_the_coprocessor_only():
    # "ECDHE_ECDSA ~1.03-1.15 ms coprocessor only (3 coprocessor calls)"
    c = "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384"
    assert model.channel_start_card_ms(c, "accelerator") == 0.0
    assert_allclose(model.channel_start_card_ms(c), 0.5 * (1.03 + 1.15), rtol=1e-12)


@pytest.mark.parametrize("card", ["coprocessor", "accelerator"])
@pytest.mark.parametrize("cards", [1, 3])
def test_channel_start_card_utilization_formula(card, cards):
    t = model.channel_start_card_ms(HW12, card) / 1000.0
    m = 1.0   # RMF's summary utilization: requests x EXEC TIME per card
    rates = np.array([0.0, 100.0, 0.9 * cards * m / t])
    assert_allclose(model.channel_start_card_utilization(rates, HW12, card, cards),
                    rates * t / (cards * m), rtol=1e-12)
    assert_allclose(model.channel_start_card_utilization(rates[2], HW12, card, cards), 0.9, rtol=1e-12)
    with pytest.raises(model.UnstableQueueError, match=card):
        model.channel_start_card_utilization(1.01 * cards * m / t, HW12, card, cards)
    with pytest.raises(ValueError, match="start_rate"):
        model.channel_start_card_utilization(-1.0, HW12, card, cards)
    with pytest.raises(ValueError, match="card must be one of coprocessor, accelerator"):
        model.channel_start_card_utilization(1.0, HW12, "gpu", cards)


@pytest.mark.parametrize("kb", [64.0, 1024.0])
def test_chacha_attls_slower_but_cheaper_in_chin(kb):
    # seed 002: with TLS_CHACHA20_POLY1305_SHA256 "we are seeing the AT-TLS throughput degrade
    # relative to the MQ with System SSL configuration, particularly as the message size grows",
    # while AT-TLS still reduces the channel initiator's cost.
    assert model.tls_roundtrip_us("ATTLS", SW, kb) > model.tls_roundtrip_us("SSLCIPH", SW, kb)
    assert model.tls_cost_us("ATTLS", SW, kb, "CHIN") < model.tls_cost_us("SSLCIPH", SW, kb, "CHIN")
    gap = [model.tls_roundtrip_us("ATTLS", SW, k) / model.tls_roundtrip_us("SSLCIPH", SW, k)
           for k in (16.0, kb)]
    assert gap[1] > gap[0]


def test_roundtrip_refits_for_a_site_table(scaled_figures):
    # The round-trip fit is cached per figures table: a site's table with every published
    # round trip doubled doubles every term (the form is linear in its parameters and the
    # fit minimises relative errors), and the shipped table's fit is untouched afterwards.
    from cryptoplan.model.figures import using_figures
    from cryptoplan.model.calibration.roundtrip import fit_roundtrip
    path = scaled_figures(lambda fid: fid.startswith("s002_rt_") and fid.endswith("_us"), 2.0)
    from cryptoplan.model.calibration.fit import REFIT_SIGMAS
    base, se = fit_roundtrip()["values"], fit_roundtrip()["stderr"]
    with using_figures(path):
        site = fit_roundtrip()["values"]
    for name, value in base.items():
        # two optimiser runs: equal within the refit allowance of model.fit.fit_differences
        # (1e-2 standard errors, here of the doubled terms)
        assert abs(site[name] - 2 * value) <= REFIT_SIGMAS * 2 * se[name], name
    assert fit_roundtrip()["values"] == base


# ------------------------------------------------------------ handshakes on the cards
@pytest.mark.parametrize("card", ["coprocessor", "accelerator"])
def test_handshake_rate_puts_load_on_the_cards(card):
    # a full handshake uses the card time of an MQ channel start (the z16 report's RMF readings,
    # e.g. "ECDHE_RSA ~0.66-0.90 ms coprocessor + ~0.08 ms accelerator"); resumed ones none
    c = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
    t = model.channel_start_card_ms(c, card) / 1000.0
    rates = np.array([0.0, 100.0, 500.0])
    assert_allclose(model.handshake_card_utilization(rates, c, card), rates * t, rtol=1e-12)
    assert_allclose(model.handshake_card_utilization(500.0, c, card, cards=2, resumed_share=0.75),
                    500.0 * 0.25 * t / 2, rtol=1e-12)
    assert_allclose(model.handshake_card_utilization(100.0, c, card, other_lpar_util=0.3), 100.0 * t + 0.3,
                    rtol=1e-12)


def test_handshake_overload_names_the_cards_needed():
    c = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
    t = model.channel_start_card_ms(c) / 1000.0
    with pytest.raises(model.UnstableQueueError, match=r"coprocessors would be 150% busy.*2 cards needed"):
        model.handshake_card_utilization(1.5 / t, c)
    with pytest.raises(ValueError, match="resumed_share"):
        model.handshake_card_utilization(10.0, c, resumed_share=1.5)


@pytest.mark.parametrize("cipher, name", [("NULL_SHA", "tls_sym_us_per_kb_null"),
                                           ("TLS_AES_256_GCM_SHA384", "tls_sym_us_per_kb_tls13hw")])
def test_null_sha_and_gcm_never_cost_more_than_aes_cbc_with_hmac(cipher, name):
    """Issue 62, findings 2 and 3: NULL_SHA (a MAC alone) was planned dearer than AES-CBC with HMAC
    (1.58 against 1.31 us/KB per side: 9,930 against 8,862 us per 1MB transaction under SSLCIPH),
    and TLS 1.3 AES-GCM (the AES pass without the HMAC pass) was below it only as far as the fit
    happened to put it.  Both costs per KB are now TLS 1.2's times a share in [0, 1]
    (params.DERIVED): at the fit and in every one of 1,000 draws, such a channel costs no more than
    an AES-CBC one, in every mode, size and address space."""
    import numpy as np
    from cryptoplan.model.calibration.draws import parameter_draws
    from cryptoplan.model.params import param, using_values
    from cryptoplan.model.zos.tls import tls_cost_us
    kb = np.array([0.5, 2.0, 32.0, 1024.0, 100_000.0])
    assert param(name) < param("tls_sym_us_per_kb_tls12")
    for values in (None, parameter_draws(1000, seed=4)):
        with using_values(values) if values else contextlib.nullcontext():
            assert np.all(np.asarray(param(name)) <= np.asarray(param("tls_sym_us_per_kb_tls12")))
            for mode in ("SSLCIPH", "ATTLS"):
                for space in ("total", "CHIN", "TCPIP"):
                    for k in kb:
                        cost = np.asarray(tls_cost_us(mode, cipher, float(k), space))
                        aes = np.asarray(tls_cost_us(mode, "TLS_RSA_WITH_AES_256_CBC_SHA", float(k), space))
                        assert np.all(cost <= aes * (1 + 1e-12)), (mode, space, k)
    # a value given for the cipher's cost itself wins (the fit's cost table takes each cipher's column so)
    with using_values({name: 7.0}):
        assert param(name) == 7.0


@settings(max_examples=50, deadline=None)
@given(a=st.floats(0.0, 100_000.0), b=st.floats(0.0, 100_000.0))
def test_an_unprotected_channels_tcpip_cost_grows_with_the_message(a, b):
    """Issue 62, finding 1: TCPIP's cost per KB sat on its bound 0, so an unprotected or SSLCIPH
    channel moved a megabyte through TCPIP for what it moved 2 KB (11.63 us at both).  A stack
    copies and checksums what it sends: a larger message costs strictly more, unprotected and under
    SSLCIPH, at the fit, and never less in any of 200 draws (16% of the TCPIP refits end on the bound
    0, where that cost is flat: no z15 figure pins it, docs/models.md)."""
    from cryptoplan.model.calibration.draws import parameter_draws
    from cryptoplan.model.params import using_values
    from cryptoplan.model.zos.tls import tls_cost_us
    lo, hi = sorted((a, b))
    if hi - lo < 1e-3:
        return
    for values in (None, parameter_draws(200, seed=7)):
        with using_values(values) if values else contextlib.nullcontext():
            for mode, cipher in (("none", None), ("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256")):
                small = np.asarray(tls_cost_us(mode, cipher, lo, "TCPIP"))
                large = np.asarray(tls_cost_us(mode, cipher, hi, "TCPIP"))
                assert np.all(large > small) if values is None else np.all(large >= small), (mode, lo, hi)


# ------------------------------------------------------------ tls_cost_change_pct (issue 62: z196 in the public API)
def test_seed_000s_figures_are_what_tls_cost_change_pct_gives_on_the_z196():
    """Issue 62: seed 000's statements are reproducible from a function a user calls.  Each of its
    fifteen figures' model values (the fit's own evaluation: the targets' linear tables, another
    code path; fourteen fitted, the forced 16KB total scored apart) equals tls_cost_change_pct(..., platform="z196") at the figure's
    conditions, to rounding (rtol 1e-12); a TCPIP ratio is 1 + change / 100."""
    from cryptoplan.model.calibration.predictions import prediction_table
    from cryptoplan.model.calibration.report import figure_table
    from cryptoplan.model.params import load_params
    values = {k: v["value"] for k, v in load_params()["parameters"].items()}
    rows = {r["id"]: r for r in figure_table(values) + prediction_table(values)}   # one left out of the fit
    seen = 0
    for fid, r in rows.items():
        if not fid.startswith("s000_"):
            continue
        c = figure(fid).conditions
        kb = float(c["message_kb"])
        cipher = "NULL_SHA" if fid.endswith("_nullsha") else "TLS_RSA_WITH_AES_256_CBC_SHA"
        space = "TCPIP" if "_tcpip_" in fid else "CHIN" if "_chin_" in fid else None
        pct = model.tls_cost_change_pct("ATTLS", cipher, kb, space, platform="z196")
        got = 1.0 + pct / 100.0 if "_tcpip_" in fid else pct
        assert_allclose(got, r["model"], rtol=1e-12, err_msg=fid)
        seen += 1
    assert seen == 15


@settings(max_examples=60, deadline=None)
@given(kb=st.floats(0.0, 102400.0), mode=st.sampled_from(["none", "SSLCIPH", "ATTLS"]),
       base=st.sampled_from(["none", "SSLCIPH", "ATTLS"]), space=st.sampled_from([None, "CHIN", "TCPIP"]),
       cipher=st.sampled_from(sorted(CIPHERS)), platform=st.sampled_from(["z14", "z15", "z16"]))
def test_tls_cost_change_pct_is_the_ratio_of_tls_cost_us(kb, mode, base, space, cipher, platform):
    """On a planning platform the change is the ratio of the two costs tls_cost_us gives (no
    renegotiation), substituted back: 100 (C_mode / C_base - 1), rtol 1e-12."""
    if mode == base:
        with pytest.raises(ValueError, match="must differ"):
            model.tls_cost_change_pct(mode, cipher, kb, space, base, platform)
        return
    want = 100.0 * (model.tls_cost_us(mode, cipher, kb, space, platform=platform)
                    / model.tls_cost_us(base, cipher, kb, space, platform=platform) - 1.0)
    assert_allclose(model.tls_cost_change_pct(mode, cipher, kb, space, base, platform), want, rtol=1e-12, atol=1e-12)


def test_tls_cost_change_pct_refuses_what_it_has_no_numbers_for():
    """The z196 set has no TLS 1.3 cipher; MSTR's channel CPU is 0 in every mode; a platform
    outside the list is named with the allowed ones.  The default platform is z16, not z196."""
    with pytest.raises(ValueError, match="z196.*TLS_AES_256_GCM_SHA384 is a TLS 1.3 cipher"):
        model.tls_cost_change_pct("ATTLS", "TLS_AES_256_GCM_SHA384", 16.0, platform="z196")
    with pytest.raises(ValueError, match="MSTR.*baseline SSLCIPH is 0"):
        model.tls_cost_change_pct("ATTLS", "NULL_SHA", 16.0, "MSTR")
    from cryptoplan.model.params import using_values
    with using_values({"tls_mstr_us": 5.0}):          # a site file that gives the queue manager a cost
        assert model.tls_cost_change_pct("ATTLS", "NULL_SHA", 16.0, "MSTR") == 0.0   # "not affected"
    with pytest.raises(ValueError, match="platform.*z12"):
        model.tls_cost_change_pct("ATTLS", "NULL_SHA", 16.0, platform="z12")
    import inspect
    assert inspect.signature(model.tls_cost_change_pct).parameters["platform"].default == "z16"
    z16 = model.tls_cost_change_pct("ATTLS", "NULL_SHA", 16.0)
    assert z16 == model.tls_cost_change_pct("ATTLS", "NULL_SHA", 16.0, platform="z15")
    assert z16 != model.tls_cost_change_pct("ATTLS", "NULL_SHA", 16.0, platform="z196")


def test_docs_models_quotes_the_z196_tcpip_change_as_computed():
    """docs/models.md's example of tls_cost_change_pct on the z196, run: its printed percent is
    the function's, to the printed digit."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    m = re.search(r"`(tls_cost_change_pct\(\"ATTLS\"[^`]*platform=\"z196\"\))`\s+is ([+-]\d+\.\d)%", text)
    assert m, "the z196 example is missing from docs/models.md"
    got = eval("model." + m.group(1), {"model": model})
    assert f"{got:+.1f}" == m.group(2)


def test_docs_models_quotes_the_z15_tcpip_ratios_and_their_causes_as_computed():
    """Issue 62 asks that TCPIP's AT-TLS/SSLCIPH ratio at 64KB-1MB be plausible on the z15, its
    source said.  docs/models.md's paragraph on it, recomputed from the public function and the
    packaged parameter file: each ratio (1 + change/100) to the printed digit, the two costs it
    rests on, their ratio against the z196's (2.5 = 1 + 2 e/t for AES-CBC there), the TLS 1.2 band
    at 1MB (the plan's own band of 1,000 draws, seed 1), and how many TCPIP refits are on 0."""
    from pathlib import Path
    from cryptoplan.model.calibration.draws import parameter_draws
    from cryptoplan.model.params import load_params, param, using_values
    from cryptoplan.model.zos.plan.bands import band
    doc = " ".join((Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8").split())

    def ratio(cipher, kb, platform="z15"):
        return 1.0 + model.tls_cost_change_pct("ATTLS", cipher, kb, "TCPIP", platform=platform) / 100.0

    gcm, cbc, null = "TLS_AES_256_GCM_SHA384", "TLS_RSA_WITH_AES_256_CBC_SHA", "NULL_SHA"
    two = f"the model {ratio(cbc, 2.0):.2f} and {ratio(gcm, 2.0):.2f}"
    gcm_large = f"{ratio(gcm, 64.0):.2f} and {ratio(gcm, 1024.0):.2f} for TLS 1.3 AES-GCM"
    z196 = (f"{ratio(null, 64.0, 'z196'):.2f}-{ratio(null, 1024.0, 'z196'):.2f} for NULL_SHA, "
            f"{ratio(cbc, 64.0, 'z196'):.2f}-{ratio(cbc, 1024.0, 'z196'):.2f} for AES-CBC")
    cbc_large = f"{ratio(cbc, 64.0):.2f} and {ratio(cbc, 1024.0):.2f} for TLS 1.2 AES-CBC with HMAC"
    null_large = f"{ratio(null, 64.0):.2f} and {ratio(null, 1024.0):.2f} for NULL_SHA"
    e, t = param("tls_sym_us_per_kb_tls12"), param("tls_tcpip_us_per_kb")
    costs = f"e is TLS 1.2's {e:.2f} µs/KB"
    t_text = f"t the {t:.2f} no z15 figure pins, so e/t = {e / t:.1f} on the z15 against 0.75 on the z196"
    assert 1.0 + 2.0 * 0.75 == pytest.approx(figure("s000_1m_tcpip_cost_aes256").target())
    point = ratio(cbc, 1024.0)
    with using_values(parameter_draws(1000, seed=1)):
        b = band(point, ratio(cbc, 1024.0), 0.90)
    band_text = f"at 1MB the TLS 1.2 ratio's 90% band runs from {b.low:.1f} to {b.high:.0f} (1,000 draws, seed 1)"
    block = load_params()["bootstrap"]["tls"]
    rows = np.asarray(block["draws"])[:, block["names"].index("tls_tcpip_us_per_kb")]
    on_zero = f"{int(np.sum(rows < 1e-9))} of the {rows.size} are on 0 (below 1e-9 µs/KB)"
    for text in (two, gcm_large, z196, cbc_large, null_large, costs, t_text, band_text, on_zero):
        assert text in doc, text
