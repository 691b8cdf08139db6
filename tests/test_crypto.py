"""Crypto Express service times (model/zos/crypto.py).

Expected values come from: the card-function mapping stated in shared/MODEL.md
("sign to the coprocessor, verify and key-encrypt to accelerator ME,
key-decrypt to accelerator CRT"; NISTECC on the coprocessor only), the fitted
parameters read straight from data/params.json (JSON, not through the model),
the power law t(n) = t(n0) (n/n0)^alpha written out in the tests, and rows of
data/figures.csv read by id.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.zos.crypto import CARD_FUNCTIONS, crypto_op_ms, function_ms, operation_function
from cryptoplan.model.datafiles import data_path
from cryptoplan.model.params import using_values
from cryptoplan.model.figures import figure
from cryptoplan.model.params import ECC_KEY_SIZES, RSA_KEY_SIZES


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)


def fitted(name: str) -> float:
    """A fitted value read directly from the committed parameter file."""
    with open(data_path("params.json"), encoding="utf-8") as fh:
        return float(json.load(fh)["parameters"][name]["value"])


# --------------------------------------------------------------- mapping
# Source: shared/MODEL.md, "AMS: operations per transaction" and the resource table.
@pytest.mark.parametrize("operation, function, card", [
    ("sign", "CCA_RSA", "coprocessor"),
    ("verify", "RSA_ME", "accelerator"),
    ("key_encrypt", "RSA_ME", "accelerator"),
    ("key_decrypt", "RSA_CRT", "accelerator"),
])
def test_rsa_operation_maps_to_card_function(operation, function, card):
    assert operation_function(operation, "RSA") == function
    assert CARD_FUNCTIONS[function][0] == card


@pytest.mark.parametrize("operation", ["sign", "verify"])
def test_nistecc_sign_and_verify_run_on_coprocessor(operation):
    # Source: MODEL.md "ECC (NISTECC ...) runs on the coprocessor only".
    assert operation_function(operation, "NISTECC") == "CCA_ECC"
    assert CARD_FUNCTIONS["CCA_ECC"][0] == "coprocessor"


@pytest.mark.parametrize("operation", ["key_encrypt", "key_decrypt"])
def test_nistecc_cannot_encrypt(operation):
    # Source: MODEL.md "supports Integrity only" (RACF NISTECC keys have no DATAENCRYPT usage).
    with pytest.raises(ValueError, match="DATAENCRYPT"):
        operation_function(operation, "NISTECC")
    with pytest.raises(ValueError, match="DATAENCRYPT"):
        crypto_op_ms(operation, "NISTECC", 256)


def test_unknown_operation_lists_the_operations():
    with pytest.raises(ValueError, match="sign, verify, key_encrypt, key_decrypt"):
        operation_function("hash", "RSA")


# --------------------------------------------------------------- power law
# Formula (model/zos/crypto.py docstring, MODEL.md "Key size"): t(n) = t(2048) (s + (1-s) (n/2048)^alpha),
# alpha = exp_private for sign / key_decrypt, exp_public for verify / key_encrypt; s the
# fitted cop_rsa_fixed_share for the coprocessor's sign, the fitted acc_fixed_ms over t(2048)
# for the accelerator's operations (one fixed time per request, ME and CRT alike).
@pytest.mark.parametrize("operation, t0, alpha, fixed", [
    ("sign", "cop_rsa_ms_2048", "exp_private", "cop_rsa_fixed_share"),
    ("key_decrypt", "acc_crt_ms_2048", "exp_private", "acc_fixed_ms"),
    ("verify", "acc_me_ms_2048", "exp_public", "acc_fixed_ms"),
    ("key_encrypt", "acc_me_ms_2048", "exp_public", "acc_fixed_ms"),
])
@pytest.mark.parametrize("n", RSA_KEY_SIZES)
def test_rsa_time_is_power_law_in_key_size(operation, t0, alpha, fixed, n):
    s = fitted(fixed) / fitted(t0) if fixed.endswith("_ms") else fitted(fixed)
    expected = fitted(t0) * (s + (1 - s) * (n / 2048.0) ** fitted(alpha))
    assert_allclose(crypto_op_ms(operation, "RSA", n), expected, rtol=1e-12)
    # the part that grows is the fitted exponent's power, whatever t0 is
    t2048 = crypto_op_ms(operation, "RSA", 2048)
    grows = (crypto_op_ms(operation, "RSA", n) - s * t2048) / ((1 - s) * t2048)
    assert_allclose(grows, (n / 2048.0) ** fitted(alpha), rtol=1e-12)


def test_the_coprocessor_sign_has_a_fixed_part_the_rmf_example_and_the_1024_bit_rate_both_need():
    # Seed 001: "Each request processed by the coprocessor is taking approximately 0.596
    # milliseconds" (RSA 2048) and Integrity's 1342 transactions/s at 1024 bits.  The fitted
    # sign keeps about a fifth of its 2048-bit time at any size, so the 2048-bit sign is the
    # RMF example's within its "approximately" (10%), and a 1024-bit sign takes more than
    # a pure power law from it would give (a share of a sign cannot be negative or all of it).
    assert 0.0 < fitted("cop_rsa_fixed_share") < 1.0
    assert abs(crypto_op_ms("sign", "RSA", 2048) / 0.596 - 1) <= 0.10
    pure = crypto_op_ms("sign", "RSA", 2048) * 0.5 ** fitted("exp_private")
    assert crypto_op_ms("sign", "RSA", 1024) > 1.5 * pure


@pytest.mark.parametrize("n", ECC_KEY_SIZES)
def test_nistecc_time_is_power_law_from_192_bits(n):
    # in whole 64-bit words (crypto.py's docstring): 224 bits cost 256, 521 cost 576
    words = 64.0 * np.ceil(n / 64.0)
    expected = fitted("cop_ecc_ms_192") * (words / 192.0) ** fitted("exp_ecc")
    assert_allclose(crypto_op_ms("sign", "NISTECC", n), expected, rtol=1e-12)
    assert_allclose(crypto_op_ms("verify", "NISTECC", n), expected, rtol=1e-12)


def test_array_key_sizes_match_scalars():
    sizes = np.array([[1024, 2048], [3072, 4096]])
    out = crypto_op_ms("sign", "RSA", sizes)
    assert out.shape == sizes.shape
    assert_allclose(out, [[crypto_op_ms("sign", "RSA", int(s)) for s in row] for row in sizes], rtol=1e-15)


@settings(max_examples=40, deadline=None)
@given(op=st.sampled_from(["sign", "verify", "key_encrypt", "key_decrypt"]),
       pair=st.lists(st.sampled_from(RSA_KEY_SIZES), min_size=2, max_size=2, unique=True))
def test_rsa_time_increases_with_key_size(op, pair):
    small, large = sorted(pair)
    assert crypto_op_ms(op, "RSA", large) > crypto_op_ms(op, "RSA", small)


@settings(max_examples=30, deadline=None)
@given(op=st.sampled_from(["sign", "verify"]),
       pair=st.lists(st.sampled_from(ECC_KEY_SIZES), min_size=2, max_size=2, unique=True))
def test_ecc_time_increases_with_key_size(op, pair):
    small, large = sorted(pair)
    if -(-small // 64) == -(-large // 64):      # the same number of 64-bit words: the same time
        assert crypto_op_ms(op, "NISTECC", large) == crypto_op_ms(op, "NISTECC", small)
    else:
        assert crypto_op_ms(op, "NISTECC", large) > crypto_op_ms(op, "NISTECC", small)


@pytest.mark.parametrize("name, fid", [("exp_private", "ref_scaling_private_exponent"),
                                       ("exp_public", "ref_scaling_public_exponent")])
def test_fitted_exponents_inside_reference_ranges(name, fid):
    # Source: figures.csv rows quoting "RSA private-key operations grow roughly as n^2.6-3
    # ... public-key operations (small exponent) as n^1.6-2"; the fit bounds the exponent
    # by [low, high], so the value must lie in the un-widened range.
    f = figure(fid)
    assert f.low is not None and f.high is not None
    assert f.low <= fitted(name) <= f.high


# --------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [1000, 8192, 2048.5, "abc", None, float("nan"), 0, -2048])
def test_bad_rsa_key_size_lists_accepted_sizes(bad):
    with pytest.raises(ValueError, match="1024, 2048, 3072, 4096"):
        crypto_op_ms("sign", "RSA", bad)


def test_bad_size_in_array_lists_accepted_sizes():
    with pytest.raises(ValueError, match="1024, 2048, 3072, 4096"):
        crypto_op_ms("verify", "RSA", [2048, 1000])


@pytest.mark.parametrize("bad", [2048, 255, "abc"])
def test_bad_ecc_key_size_lists_accepted_sizes(bad):
    with pytest.raises(ValueError, match="192, 224, 256, 384, 521"):
        crypto_op_ms("sign", "NISTECC", bad)


def test_bad_key_type_lists_accepted_types():
    with pytest.raises(ValueError, match="RSA, NISTECC"):
        crypto_op_ms("sign", "DSA", 2048)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([1024.0, 2048.0, 3072.0, 4096.0, 192.0, 224.0, 256.0, 384.0, 521.0]),
                min_size=1, max_size=19),
       st.floats(1.0, 3.5))
def test_a_card_time_alone_is_the_same_number_as_in_an_array(sizes, exponent):
    """A cell alone and in a column of cells (or a sweep's scenarios) must get the same number,
    bit for bit: on AVX-512 processors NumPy's array power and a NumPy scalar's ``**`` (the C
    library's pow) differed in the last bit (2048-bit and 4096-bit RSA at the fitted exponent).
    Expected values: the same function on one key size at a time (not hard-coded)."""
    with using_values({"exp_private": exponent, "exp_public": exponent, "exp_ecc": exponent}):
        for f in CARD_FUNCTIONS:
            together = np.asarray(function_ms(f, np.array(sizes)))
            alone = [float(function_ms(f, s)) for s in sizes]
            assert together.tolist() == alone, f
