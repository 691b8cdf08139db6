"""Quantum-safe card times (model.zos.quantum_safe): the assumption, its sources, its band.

Expected numbers come from the published ``openssl speed`` lines quoted in data/quantum_safe.csv
(each row's time is checked against its own quote), from IBM's CCA 8.4 statement quoted in
data/quantum_safe_cards.csv, and from the formula re-evaluated here with mpmath from the parameter
file's values.
"""

from __future__ import annotations

import csv
import re

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.datafiles import data_path
from cryptoplan.model.errors import InputError
from cryptoplan.model.params import load_params, param, using_values
from cryptoplan.model.zos import quantum_safe as qs


def _rows(name):
    with open(data_path(name), encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_each_software_time_is_the_number_its_quoted_openssl_line_prints():
    rows = _rows("quantum_safe.csv")
    assert len({r["id"] for r in rows}) == len(rows)
    for r in rows:
        # openssl speed prints seconds per operation with six decimals: "0.000751s" is 751 µs
        printed = [float(x) * 1e6 for x in re.findall(r"(\d+\.\d{6})s", r["quote"])]
        assert float(r["us"]) in [round(p) for p in printed], r["id"]
        assert r["source"] and r["library"] and r["machine"], r["id"]
        assert r["operation"] in ("sign", "verify", "encapsulate", "decapsulate"), r["id"]


def test_the_capable_generation_and_cca_level_are_ibms_sentence():
    cards = {r["name"]: r for r in _rows("quantum_safe_cards.csv")}
    quote = cards["capable_generation"]["quote"]
    assert f"CCA firmware version {cards['cca_level']['value']} installed to IBM {cards['capable_generation']['value']}" in quote
    assert "ML-DSA" in cards["cca_level"]["quote"] and "ML-KEM" in cards["cca_level"]["quote"]


def test_software_ratios_from_the_two_runs():
    sw = {(r["id"][0], r["algorithm"], r["operation"]): mpmath.mpf(r["us"]) for r in _rows("quantum_safe.csv")}
    rsa = sw[("a", "RSA-2048", "sign")]
    for alg, ops in qs.QS_OPERATIONS.items():
        for op in ops:
            if ("a", alg, op) in sw:       # measured beside the RSA sign
                want = sw[("a", alg, op)] / rsa
            else:                          # chained through ML-DSA-44 (module docstring)
                want = sw[("b", alg, op)] / sw[("b", "ML-DSA-44", op)] * sw[("a", "ML-DSA-44", op)] / rsa
            assert_allclose(qs.software_ratio(alg, op), float(want), rtol=1e-14, err_msg=f"{alg} {op}")


@pytest.mark.parametrize("alg", qs.QS_ALGORITHMS)
def test_card_time_is_the_formula(alg):
    t0, s = mpmath.mpf(param("cop_rsa_ms_2048")), mpmath.mpf(param("cop_rsa_fixed_share"))
    for op in qs.QS_OPERATIONS[alg]:
        rho = mpmath.mpf(qs.software_ratio(alg, op))
        want = t0 * (s + (1 - s) * rho)       # factor 1 as shipped
        assert_allclose(qs.qs_op_ms(alg, op), float(want), rtol=1e-14)


def test_a_higher_security_level_never_costs_the_card_less():
    for family, levels in (("ML-DSA", (44, 65, 87)), ("ML-KEM", (512, 768, 1024))):
        for op in qs.QS_OPERATIONS[f"{family}-{levels[0]}"]:
            times = [qs.qs_op_ms(f"{family}-{k}", op) for k in levels]
            assert times == sorted(times) and times[0] < times[-1], (family, op, times)


@settings(max_examples=60, deadline=None)
@given(t0=st.floats(0.05, 5.0), s=st.floats(0.0, 1.0), f=st.floats(0.1, 10.0),
       alg=st.sampled_from(qs.QS_ALGORITHMS), data=st.data())
def test_time_is_positive_scales_with_the_factor_and_keeps_the_fixed_part(t0, s, f, alg, data):
    op = data.draw(st.sampled_from(qs.QS_OPERATIONS[alg]))
    values = {"cop_rsa_ms_2048": t0, "cop_rsa_fixed_share": s, qs.QS_FACTORS[alg[:6]]: f}
    with using_values(values):
        t = qs.qs_op_ms(alg, op)
    with using_values({**values, qs.QS_FACTORS[alg[:6]]: 1.0}):
        one = qs.qs_op_ms(alg, op)
    assert t > 0
    assert_allclose(t, f * one, rtol=1e-13)
    assert one >= s * t0 * (1 - 1e-12)                     # every verb pays the CCA fixed part
    rho = qs.software_ratio(alg, op)
    # no dearer than an RSA sign where its arithmetic is not, no cheaper where it is (to rounding)
    assert one <= t0 * (1 + 1e-12) if rho <= 1 else one >= t0 * (1 - 1e-12)


@pytest.mark.parametrize("generation", ["CEX6S", "CEX7S"])
def test_a_card_without_cca_8_4_is_an_error_naming_it(generation):
    with pytest.raises(InputError, match=rf"card_generation {generation} cannot run ML-DSA-65.*CCA 8\.4.*CEX8S"):
        qs.qs_op_ms("ML-DSA-65", "sign", generation)


@pytest.mark.parametrize("args, match", [
    (("ML-DSA-66", "sign"), r"algorithm must be one of ML-DSA-44, .*\(got 'ML-DSA-66'\)"),
    (("ML-KEM-768", "sign"), r"operation \(of ML-KEM-768\) must be one of encapsulate, decapsulate \(got 'sign'\)"),
    (("ML-DSA-65", "verify", "CEX9S"), r"card_generation must be one of CEX6S, CEX7S, CEX8S \(got 'CEX9S'\)"),
])
def test_bad_arguments_name_the_argument_value_and_choices(args, match):
    with pytest.raises(InputError, match=match):
        qs.qs_op_ms(*args)


def test_factor_draws_put_the_bands_ends_at_5_and_95_percent():
    n = 200_000
    f = qs.factor_draws(n, np.random.default_rng(3))
    band = qs.TIME_BAND
    # the share below each end is binomial(n, 0.05): sd 0.049%; 4 sd
    assert abs(np.mean(f < band.low) - 0.05) < 0.002
    assert abs(np.mean(f > band.high) - 0.05) < 0.002
    assert abs(np.mean(f < 1.0) - 0.5) < 0.005


def test_bands_draw_the_assumption_and_a_site_value_keeps_its_own():
    doc = load_params()
    draws = parameter_draws(4000, seed=5, doc=doc)
    with using_values(draws):
        t = qs.qs_op_ms("ML-DSA-65", "sign")
    point = qs.qs_op_ms("ML-DSA-65", "sign")
    lo, hi = np.percentile(t, [5, 95]) / point
    # the factor's 0.5..3 band, widened a little by the fitted parameters' own draws
    assert 0.4 < lo < 0.6 and 2.5 < hi < 3.6, (lo, hi)
    site = {**doc, "parameters": {**doc["parameters"], "qs_mldsa_time_factor": {
        **doc["parameters"]["qs_mldsa_time_factor"], "value": 1.7, "source": "site: measured"}}}
    kept = parameter_draws(500, seed=5, doc=site)
    assert np.all(kept["qs_mldsa_time_factor"] == 1.7)
    assert np.ptp(kept["qs_mlkem_time_factor"]) > 1.0       # the other family is still assumed


def test_spreadsheet_function_is_the_model_function():
    from cryptoplan.addin import udfs
    assert udfs.QS_OP_MS("ML-KEM-768", "decapsulate") == pytest.approx(qs.qs_op_ms("ML-KEM-768", "decapsulate"),
                                                                       rel=1e-15)
    cell = udfs.QS_OP_MS("ML-DSA-65", "sign", "CEX7S")
    assert cell.startswith("#VALUE! QS_OP_MS: card_generation CEX7S cannot run ML-DSA-65"), cell


def test_docs_table_is_what_the_model_computes():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (ML-(?:DSA|KEM)-\d+) (\w+) / (\w+) \| ([\d.]+) / ([\d.]+) \| ([\d.]+) / ([\d.]+) \|$",
                      text, flags=re.M)
    assert {r[0] for r in rows} == set(qs.QS_ALGORITHMS)
    for alg, op1, op2, r1, r2, t1, t2 in rows:
        for op, r, t in ((op1, r1, t1), (op2, r2, t2)):
            assert f"{qs.software_ratio(alg, op):.3f}" == r, (alg, op)
            assert f"{qs.qs_op_ms(alg, op):.3f}" == t, (alg, op)


# ------------------------------------------------------------------ an AMS workload migrating
_POLICIES = st.sampled_from([("integrity", "RSA", 2048), ("privacy", "RSA", 4096), ("integrity", "NISTECC", 256),
                             ("confidentiality", "RSA", 2048), ("privacy", "RSA", 2048)])


def _moved_by_hand(policy, key_type, key_size, recipients, to, card):
    """The migrated card ms per transaction from the operation counts and the two time functions."""
    from cryptoplan.model import crypto_op_ms
    from cryptoplan.model.zos.ams import ams_operations
    reuse = 16 if policy == "confidentiality" else None
    o = ams_operations(policy, reuse, recipients)
    kt = key_type
    if to.startswith("ML-DSA"):
        checks = o["verify"] + o["cert_check"]
        old = {"coprocessor": o["sign"] * crypto_op_ms("sign", kt, key_size) + (
                   checks * crypto_op_ms("verify", kt, key_size) if kt == "NISTECC" else 0.0),
               "accelerator": 0.0 if kt == "NISTECC" else checks * crypto_op_ms("verify", kt, key_size)}
        new = o["sign"] * qs.qs_op_ms(to, "sign") + checks * qs.qs_op_ms(to, "verify")
    else:
        old = {"coprocessor": 0.0, "accelerator": o["key_encrypt"] * crypto_op_ms("key_encrypt", kt, key_size)
               + o["key_decrypt"] * crypto_op_ms("key_decrypt", kt, key_size)}
        new = o["key_encrypt"] * qs.qs_op_ms(to, "encapsulate") + o["key_decrypt"] * qs.qs_op_ms(to, "decapsulate")
    return 2.0 * ((new if card == "coprocessor" else 0.0) - old[card]), reuse


@settings(max_examples=80, deadline=None)
@given(pol=_POLICIES, rate=st.floats(0.0, 400.0), share=st.floats(0.0, 1.0), recipients=st.integers(1, 4),
       to=st.sampled_from(qs.QS_ALGORITHMS), card=st.sampled_from(["coprocessor", "accelerator"]),
       cards=st.integers(2, 16), other=st.floats(0.0, 0.3))
def test_migrated_utilization_is_the_old_mix_plus_the_share_at_the_quantum_safe_times(pol, rate, share, recipients,
                                                                                      to, card, cards, other):
    """Substituted back: U(share) = U(0) + share x rate x (moved ops' new time - their old time) / cards."""
    from cryptoplan.model import card_utilization
    policy, kt, bits = pol
    if kt == "NISTECC" and to.startswith("ML-KEM"):
        to = "ML-DSA-44"            # NISTECC keys do integrity only: no key transport to move
    from cryptoplan.model._validate import UnstableQueueError
    delta, reuse = _moved_by_hand(policy, kt, bits, recipients, to, card)
    try:
        before = card_utilization(rate, policy, kt, bits, 2.0, reuse, card=card, cards=cards, recipients=recipients,
                                  other_lpar_util=other)
    except UnstableQueueError:
        return                      # overloaded before the migration: the error test covers it
    want = before + share * rate * delta / 1000.0 / cards
    if want >= 1.0:
        with pytest.raises(UnstableQueueError, match=f"{card}s would be"):
            qs.migrated_card_utilization(rate, policy, kt, bits, 2.0, reuse, algorithm=to, share=share, card=card,
                                         cards=cards, recipients=recipients, other_lpar_util=other)
        return
    got = qs.migrated_card_utilization(rate, policy, kt, bits, 2.0, reuse, algorithm=to, share=share, card=card, cards=cards,
                                       recipients=recipients, other_lpar_util=other)
    assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert got >= other - 1e-15


def test_share_zero_is_the_ams_card_utilization_and_signatures_leave_the_accelerators():
    from cryptoplan.model import card_utilization
    args = (120.0, "privacy", "RSA", 2048, 2.0)
    for card in ("coprocessor", "accelerator"):
        assert_allclose(qs.migrated_card_utilization(*args, share=0.0, card=card, cards=2),
                        card_utilization(*args, card=card, cards=2), rtol=1e-14)
    # Integrity signs and verifies only: all of it moves to the coprocessors
    assert qs.migrated_card_utilization(120.0, "integrity", "RSA", 2048, 2.0, share=1.0, card="accelerator",
                                        cards=2) == 0.0


def test_an_overloaded_pool_after_migration_names_it_and_the_count_needed():
    from cryptoplan.model._validate import UnstableQueueError
    with pytest.raises(UnstableQueueError, match=r"coprocessors would be \d+% busy .* cards needed"):
        qs.migrated_card_utilization(5000.0, "privacy", "RSA", 2048, 2.0, share=1.0, cards=1)


def test_migration_on_a_card_without_cca_8_4_is_an_error_naming_it():
    with pytest.raises(InputError, match=r"card_generation CEX7S cannot run ML-DSA-65"):
        qs.migrated_card_utilization(100.0, "integrity", "RSA", 2048, 2.0, share=0.5, card_generation="CEX7S")
    with pytest.raises(ValueError, match=r"share must be in \[0, 1\] \(got 1\.5\)"):
        qs.migrated_card_utilization(100.0, "integrity", "RSA", 2048, 2.0, share=1.5)


# ------------------------------------------------------------------ what a migration moves to
@pytest.mark.parametrize("to, want", [
    ("ml-dsa-65", ("ML-DSA-65", "ML-DSA-65", None, None)),
    ("x25519mlkem768", ("X25519MLKEM768", None, "ML-KEM-768", "X25519MLKEM768")),
    ("SecP384r1MLKEM1024 + ML-DSA-87", ("ML-DSA-87+SecP384r1MLKEM1024", "ML-DSA-87", "ML-KEM-1024",
                                        "SecP384r1MLKEM1024")),
    ("ML-KEM-768+ML-DSA-44", ("ML-DSA-44+ML-KEM-768", "ML-DSA-44", "ML-KEM-768", None)),
])
def test_a_target_is_a_signature_a_key_exchange_or_both(to, want):
    assert tuple(qs.migration_target(to)) == want


@pytest.mark.parametrize("to, match", [
    ("ML-DSA-65+ML-DSA-44", r"to names at most one signature .* \(got 'ML-DSA-65\+ML-DSA-44'\)"),
    ("ML-KEM-768+X25519MLKEM768", r"to names at most one signature .*one key exchange"),
    ("RSA-2048", r"to must be one of ML-DSA-44, .*X25519MLKEM768.* \(got 'RSA-2048'\)"),
    ("ML-DSA-65+RSA", r"to must be one of .*SecP384r1MLKEM1024, or a signature and a key exchange joined by '\+' "
                      r"\(got 'ML-DSA-65\+RSA'\)"),
    ("ML-DSA-65+", r"to must be one of .* \(got 'ML-DSA-65\+'\)"),
    ("", r"to must be a quantum-safe algorithm"),
    (7, r"to must be a quantum-safe algorithm .*\(got 7\)"),
])
def test_a_bad_target_names_the_argument_and_value(to, match):
    with pytest.raises(InputError, match=match):
        qs.migration_target(to)


@settings(max_examples=40, deadline=None)
@given(pol=_POLICIES, sig=st.sampled_from(["ML-DSA-44", "ML-DSA-65", "ML-DSA-87"]),
       kem=st.sampled_from(["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"]), recipients=st.integers(1, 4))
def test_an_ams_signature_and_key_transport_migrating_together_move_what_each_moves_alone(pol, sig, kem, recipients):
    """D_after(both) - D_before = (D_after(signature) - D_before) + (D_after(key exchange) - D_before):
    the two move disjoint operations (signs, verifies, checks; key_encrypt, key_decrypt)."""
    policy, kt, bits = pol
    if kt == "NISTECC":
        return                      # NISTECC keys do integrity only: no key transport
    reuse = 16 if policy == "confidentiality" else None
    one = {to: qs.ams_migrated_card_ms(policy, kt, bits, reuse, recipients, to) for to in (sig, kem, f"{sig}+{kem}")}
    for card in ("coprocessor", "accelerator"):
        before = one[sig]["before"][card]
        want = before + (one[sig]["after"][card] - before) + (one[kem]["after"][card] - before)
        assert_allclose(one[f"{sig}+{kem}"]["after"][card], want, rtol=1e-12, atol=1e-12)
        assert one[f"{sig}+{kem}"]["after"][card] >= 0.0


def test_an_ams_key_transport_is_not_a_hybrid_group():
    with pytest.raises(InputError, match=r"algorithm X25519MLKEM768 is a TLS 1.3 hybrid key exchange; an AMS "
                                         r"workload's key transport moves to ML-KEM-768 itself"):
        qs.migrated_card_utilization(100.0, "privacy", "RSA", 2048, 2.0, algorithm="X25519MLKEM768", share=0.5)


# ------------------------------------------------------------------ TLS handshakes migrating
def _figure(fid):
    """A row of data/figures.csv read here (its value, or its range's midpoint)."""
    r = next(r for r in _rows("figures.csv") if r["id"] == fid)
    return float(r["value"]) if r["value"] else (float(r["low"]) + float(r["high"])) / 2.0


@pytest.mark.parametrize("to", ["ML-DSA-65", "ML-DSA-87+ML-KEM-1024", "X25519MLKEM768", "ML-KEM-512"])
@pytest.mark.parametrize("cipher", ["TLS_AES_256_GCM_SHA384", "TLS_RSA_WITH_AES_256_CBC_SHA256",
                                    "ECDHE_ECDSA_AES_256_CBC_SHA384"])
def test_a_migrated_handshake_is_tls_1_3_with_the_z16_reports_call_counts(cipher, to):
    """Before: the cipher's own published card time.  After: with the signature migrated, the z16
    report's TLS 1.3 channel start counts (1 coprocessor call, 2 accelerator calls) as ML-DSA signs
    and verifies; with the key exchange alone, the cipher's own time (an ECDSA cipher's coprocessor
    does not get lighter); plus one ML-KEM operation at the dearer of its two where it migrates."""
    d = qs.tls_migrated_card_ms(cipher, to)
    stem = {"TLS_AES_256_GCM_SHA384": "tls13", "TLS_RSA_WITH_AES_256_CBC_SHA256": "rsa",
            "ECDHE_ECDSA_AES_256_CBC_SHA384": "ecdsa"}[cipher]
    assert_allclose(d["before"]["coprocessor"], _figure(f"ref_start_cex_{stem}_coproc_ms"), rtol=1e-14)
    assert_allclose(d["before"]["accelerator"], 0.0 if stem == "ecdsa" else _figure(f"ref_start_cex_{stem}_accel_ms"),
                    rtol=1e-14)
    t = qs.migration_target(to)
    signs, checks = _figure("ref_start_cex_chacha_coproc_calls"), _figure("ref_start_cex_chacha_accel_calls")
    assert (signs, checks) == (1.0, 2.0)
    if t.signature:          # the certificates' work: the z16 report's TLS 1.3 counts, as ML-DSA operations
        cop = signs * qs.qs_op_ms(t.signature, "sign") + checks * qs.qs_op_ms(t.signature, "verify")
        acc = 0.0
    else:                    # the key exchange alone: the cipher's own certificate work stays
        cop, acc = d["before"]["coprocessor"], d["before"]["accelerator"]
    if t.kem:
        cop += max(qs.qs_op_ms(t.kem, "encapsulate"), qs.qs_op_ms(t.kem, "decapsulate"))
    assert_allclose(d["after"]["coprocessor"], cop, rtol=1e-14)
    assert_allclose(d["after"]["accelerator"], acc, rtol=1e-14, atol=0)


@settings(max_examples=60, deadline=None)
@given(rate=st.floats(0.0, 3000.0), share=st.floats(0.0, 1.0), resumed=st.floats(0.0, 1.0),
       to=st.sampled_from(["ML-DSA-65", "ML-DSA-44+X25519MLKEM768", "SecP256r1MLKEM768", "ML-KEM-1024"]),
       cipher=st.sampled_from(["TLS_AES_128_GCM_SHA256", "ECDHE_RSA_AES_256_CBC_SHA384"]),
       card=st.sampled_from(["coprocessor", "accelerator"]), cards=st.integers(1, 16), other=st.floats(0.0, 0.3))
def test_migrated_handshake_utilization_is_the_old_mix_plus_the_share_at_the_migrated_time(
        rate, share, resumed, to, cipher, card, cards, other):
    """Substituted back: U(m) = U(0) + m x rate x (1 - resumed) x (D_after - D_before) / cards, with
    U(0) from the TLS model's own handshake_card_utilization."""
    from cryptoplan.model._validate import UnstableQueueError
    from cryptoplan.model.zos.tls import handshake_card_utilization
    d = qs.tls_migrated_card_ms(cipher, to)
    try:
        before = handshake_card_utilization(rate, cipher, card, cards, resumed, other)
    except UnstableQueueError:
        return
    want = before + share * rate * (1.0 - resumed) * (d["after"][card] - d["before"][card]) / 1000.0 / cards
    args = (rate, cipher, to, share, card, cards, resumed, other)
    if want >= 1.0:
        with pytest.raises(UnstableQueueError, match=f"{card}s would be"):
            qs.migrated_handshake_card_utilization(*args)
        return
    assert_allclose(qs.migrated_handshake_card_utilization(*args), want, rtol=1e-12, atol=1e-15)


def test_an_overloaded_handshake_pool_names_the_rate_argument_and_one_card():
    from cryptoplan.model._validate import UnstableQueueError
    with pytest.raises(UnstableQueueError, match=r"^coprocessors would be \d+% busy at handshake_rate 3000/s with 1 card:"):
        qs.migrated_handshake_card_utilization(3000.0, "TLS_AES_256_GCM_SHA384", "ML-DSA-65", share=1.0, cards=1)


def test_the_handshake_spreadsheet_function_is_the_model_function_and_names_a_bad_generation():
    from cryptoplan.addin import udfs
    args = (400.0, "TLS_AES_256_GCM_SHA384", "ML-DSA-65+X25519MLKEM768", 0.5, "coprocessor", 2)
    assert udfs.QS_HANDSHAKE_CARD_UTILIZATION(*args) == pytest.approx(
        qs.migrated_handshake_card_utilization(*args), rel=1e-15)
    cell = udfs.QS_HANDSHAKE_CARD_UTILIZATION(*args, 0.0, 0.0, "CEX7S")
    assert cell.startswith("#VALUE! QS_HANDSHAKE_CARD_UTILIZATION: card_generation CEX7S cannot run "
                           "ML-DSA-65+X25519MLKEM768"), cell
