"""Vocabulary normalisation (model/params.py).

Expected names come from data/vocabulary.csv (the controlled vocabularies the
figures use) and the aliases the docstrings promise (AT-TLS, MQ's ECDHE short
cipher names, "unlimited" key reuse).
"""

from __future__ import annotations

import csv
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.datafiles import data_path
from cryptoplan.model.params import (
    ADDRESS_SPACES,
    CIPHERS,
    ECC_KEY_SIZES,
    KEY_TYPES,
    MODES,
    POLICIES,
    RSA_KEY_SIZES,
    normalize_address_space,
    normalize_cipher,
    normalize_key,
    normalize_key_reuse,
    normalize_mode,
    normalize_policy,
    prepared_values,
)


def vocabulary(column: str) -> set[str]:
    with open(data_path("vocabulary.csv"), newline="", encoding="utf-8") as fh:
        return {row["value"] for row in csv.DictReader(fh) if row["column"] == column}


def test_model_vocabularies_are_in_the_data_vocabulary():
    # the names the models accept are the names data/figures.csv uses
    assert set(POLICIES) <= vocabulary("policy")
    assert set(MODES) == vocabulary("mode")
    assert set(KEY_TYPES) <= vocabulary("key_type")
    assert set(ADDRESS_SPACES) <= vocabulary("address_space")


def _case_variants(draw_name):
    return st.tuples(st.sampled_from(draw_name), st.randoms(use_true_random=False)).map(
        lambda t: "".join(c.upper() if t[1].random() < 0.5 else c.lower() for c in t[0]))


@settings(max_examples=50, deadline=None)
@given(name=_case_variants(POLICIES))
def test_policy_case_insensitive(name):
    assert normalize_policy(name) == name.lower()
    assert normalize_policy(f"  {name} ") == name.lower()


@settings(max_examples=50, deadline=None)
@given(name=_case_variants(MODES))
def test_mode_case_insensitive(name):
    assert normalize_mode(name) == {m.lower(): m for m in MODES}[name.lower()]


@pytest.mark.parametrize("alias", ["AT-TLS", "at-tls", "AT_TLS", "attls"])
def test_mode_attls_aliases(alias):
    assert normalize_mode(alias) == "ATTLS"


@settings(max_examples=50, deadline=None)
@given(name=_case_variants(tuple(CIPHERS)))
def test_cipher_case_insensitive(name):
    assert normalize_cipher(name) == name.upper()


@pytest.mark.parametrize("short, full", [
    ("ECDHE_RSA_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"),
    ("ecdhe_ecdsa_aes_256_cbc_sha384", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384"),
])
def test_cipher_mq_short_forms(short, full):
    # the reference facts print these short forms (figures.csv rows ref_start_rate_ecdhe_*)
    assert normalize_cipher(short) == full


@pytest.mark.parametrize("key_type, expected", [("rsa", "RSA"), ("Rsa", "RSA"), ("nistecc", "NISTECC"),
                                                ("ECC", "NISTECC"), ("ec", "NISTECC"),
                                                ("NIST ECC", "NISTECC")])
def test_key_type_aliases(key_type, expected):
    size = 2048 if expected == "RSA" else 256
    assert normalize_key(key_type, size) == (expected, size)


@pytest.mark.parametrize("size", [*RSA_KEY_SIZES, "2048", 3072.0])
def test_rsa_sizes_accepted(size):
    assert normalize_key("RSA", size) == ("RSA", int(float(size)))


@pytest.mark.parametrize("size", ECC_KEY_SIZES)
def test_ecc_sizes_accepted(size):
    assert normalize_key("NISTECC", size) == ("NISTECC", size)


@pytest.mark.parametrize("value", ["unlimited", "UNLIMITED", " Unlimited ", "inf", "infinite", math.inf])
def test_key_reuse_unlimited_is_inf(value):
    assert normalize_key_reuse(value) == math.inf


@pytest.mark.parametrize("value, expected", [(None, 1.0), ("disabled", 1.0), ("", 1.0), (1, 1.0),
                                             ("32", 32.0), (9_999_999, 9_999_999.0)])
def test_key_reuse_numbers(value, expected):
    assert normalize_key_reuse(value) == expected


@pytest.mark.parametrize("name, expected", [("chinit", "CHIN"), ("Channel Initiator", "CHIN"),
                                            ("qmgr", "MSTR"), ("tcp/ip", "TCPIP"), ("TOTAL", "total"),
                                            (None, "total")])
def test_address_space_aliases(name, expected):
    assert normalize_address_space(name) == expected


# ------------------------------------------------------------ rejection
@pytest.mark.parametrize("fn, bad, listing", [
    (normalize_policy, "secrecy", "integrity, privacy, confidentiality"),
    (normalize_policy, None, "integrity, privacy, confidentiality"),
    (normalize_mode, "IPsec", "none, SSLCIPH, ATTLS"),
    (normalize_cipher, "TLS_FOO", "TLS_CHACHA20_POLY1305_SHA256"),
    (normalize_address_space, "AMSM", "total, MSTR, CHIN, TCPIP"),
])
def test_rejects_unknown_names_listing_accepted(fn, bad, listing):
    with pytest.raises(ValueError, match=listing):
        fn(bad)


def test_rejects_unknown_key_type():
    with pytest.raises(ValueError, match="RSA, NISTECC"):
        normalize_key("DSA", 2048)


@pytest.mark.parametrize("key_type, bad, listing", [
    ("RSA", 1000, "1024, 2048, 3072, 4096"), ("RSA", 2048.5, "1024, 2048, 3072, 4096"),
    ("RSA", "abc", "1024, 2048, 3072, 4096"), ("RSA", None, "1024, 2048, 3072, 4096"),
    ("RSA", 256, "1024, 2048, 3072, 4096"), ("NISTECC", 2048, "192, 224, 256, 384, 521"),
])
def test_rejects_bad_key_sizes_listing_accepted(key_type, bad, listing):
    with pytest.raises(ValueError, match=listing):
        normalize_key(key_type, bad)


@pytest.mark.parametrize("bad", [0, -1, 1.5, 10_000_000, "lots", math.nan])
def test_rejects_bad_key_reuse(bad):
    with pytest.raises(ValueError, match="1..9999999 or 'unlimited'"):
        normalize_key_reuse(bad)


# ------------------------------------------------ parameter files (issue 13: not validated)
import json  # noqa: E402


def _doc():
    with open(data_path("params.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("value, shown", [(-0.46, "-0.46"), (float("nan"), "nan"), (True, "True"),
                                          ("1.5", "'1.5'"), ([1.0], "[1.0]"), (None, "None"),
                                          (float("inf"), "inf")])
def test_a_bad_parameter_value_names_the_file_and_the_parameter(tmp_path, monkeypatch, value, shown):
    # negating cop_rsa_ms_2048 gave "Throughput -4,379.5 txn/s"; NaN, true, "1.5", lists and nulls
    # were accepted or failed with messages naming neither the file nor the parameter
    from cryptoplan import model
    doc = _doc()
    doc["parameters"]["cop_rsa_ms_2048"]["value"] = value
    path = tmp_path / "site.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    import re
    with pytest.raises(ValueError, match=rf"site.json: parameter 'cop_rsa_ms_2048' .* \(got {re.escape(shown)}"):
        model.ams_throughput("integrity", "RSA", 2048, 2.0)


@pytest.mark.parametrize("name, value, limit", [("acc_fixed_ms", 0.08, "acc_me_ms_2048"),
                                                 ("cop_rsa_fixed_share", 1.0, "1")])
def test_a_fixed_card_time_above_its_whole_is_refused(tmp_path, monkeypatch, name, value, limit):
    # acc_fixed_ms could reach 0.1 ms (its fit bound) above the RSA-2048 ME time (0.046 ms):
    # ME and CRT times would then fall as keys grow, and a large enough one go negative
    from cryptoplan import model
    from cryptoplan.model.zos.crypto import function_ms
    doc = _doc()
    doc["parameters"][name]["value"] = value
    path = tmp_path / "site.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    with pytest.raises(ValueError, match=rf"site.json: parameter '{name}' must be less than {limit}"):
        model.ams_throughput("integrity", "RSA", 2048, 2.0)
    # the shipped values are inside: the card times grow with the modulus
    monkeypatch.delenv("CRYPTOPLAN_PARAMS")
    for fn in ("RSA_ME", "RSA_CRT", "CCA_RSA"):
        t = [float(function_ms(fn, n)) for n in (1024, 2048, 4096)]
        assert 0 < t[0] < t[1] < t[2], (fn, t)


def test_missing_unknown_and_non_json_parameter_files_are_named(tmp_path, monkeypatch):
    from cryptoplan import model
    doc = _doc()
    doc["parameters"].pop("crypto_call_ms")
    doc["parameters"]["my_guess"] = {"value": 1.0}
    path = tmp_path / "site.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(path))
    with pytest.raises(ValueError, match="site.json: lacks the parameters crypto_call_ms"):
        model.ams_throughput("integrity", "RSA", 2048, 2.0)
    doc["parameters"]["crypto_call_ms"] = {"value": 0.05}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="site.json: unknown parameters my_guess; accepted: "):
        model.ams_throughput("integrity", "RSA", 2048, 2.0)
    bad = tmp_path / "x.json"
    bad.write_bytes(b"PK\x03\x04 not json")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(bad))
    with pytest.raises(ValueError, match="x.json: not a cryptoplan parameter file"):
        model.ams_throughput("integrity", "RSA", 2048, 2.0)


# ------------------------------------------------------------ the parameter set object (issue 13)
def test_parameter_set_is_loaded_once_and_looked_up_without_file_access(monkeypatch):
    import builtins
    import os

    from cryptoplan.model.zos.crypto import crypto_op_ms
    from cryptoplan.model.params import current_parameters, param
    current_parameters()           # loaded (once per process and CRYPTOPLAN_PARAMS value)
    expected = crypto_op_ms("sign", "RSA", 4096)

    def refuse(*a, **k):
        raise AssertionError("file access during a model call")
    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(os, "stat", refuse)
    monkeypatch.setattr(os.path, "isfile", refuse)
    assert param("cop_rsa_ms_2048") > 0
    assert crypto_op_ms("sign", "RSA", 4096) == expected


def test_using_parameters_selects_a_set_for_a_block(tmp_path):
    import json

    from cryptoplan.model import Parameters, using_parameters
    from cryptoplan.model.zos.crypto import crypto_op_ms
    from cryptoplan.model.params import load_params, param
    doc = json.loads(json.dumps(load_params()))
    doc["parameters"]["cop_rsa_ms_2048"]["value"] *= 2.0
    path = tmp_path / "site.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    site = Parameters.load(path)
    assert site.path == str(path) and site["cop_rsa_ms_2048"] == doc["parameters"]["cop_rsa_ms_2048"]["value"]
    base = crypto_op_ms("sign", "RSA", 2048)
    with using_parameters(site):
        assert_allclose(crypto_op_ms("sign", "RSA", 2048), 2.0 * base, rtol=1e-12)
        assert load_params() is site.document
    assert crypto_op_ms("sign", "RSA", 2048) == base
    with pytest.raises(TypeError):
        site.values["cop_rsa_ms_2048"] = 1.0          # read-only
    with pytest.raises(TypeError, match="takes a Parameters set"):
        with using_parameters({"cop_rsa_ms_2048": 1.0}):
            pass
    with pytest.raises(KeyError, match="parameter 'nope' missing from"):
        param("nope")


def test_parameter_set_errors_name_file_and_parameter(tmp_path):
    import json

    from cryptoplan.model import Parameters
    from cryptoplan.model.params import load_params
    with pytest.raises(FileNotFoundError, match="missing.json is not a file"):
        Parameters.load(tmp_path / "missing.json")
    doc = json.loads(json.dumps(load_params()))
    doc["parameters"]["chin_task_elapsed_ratio"]["value"] = 0.5
    with pytest.raises(ValueError, match="'chin_task_elapsed_ratio' must have a 'value' that is a finite number "
                                         ">= 1 \\(got 0.5\\)"):
        Parameters.from_document(doc, "site.json")


def test_load_cached_reads_a_file_again_only_when_it_changes(tmp_path):
    """What a spreadsheet cell's params_file relies on: one stat per call, a changed file re-read."""
    import json
    import os

    from cryptoplan.model.params import Parameters, load_params
    doc = json.loads(json.dumps(load_params()))
    path = tmp_path / "site.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    first = Parameters.load_cached(path)
    assert Parameters.load_cached(path) is first
    assert Parameters.load_cached(str(path)) is first        # str and Path are the same file
    doc["parameters"]["cop_rsa_ms_2048"]["value"] *= 3.0
    path.write_text(json.dumps(doc) + " ", encoding="utf-8")   # another size: surely another key
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    second = Parameters.load_cached(path)
    assert second is not first
    assert_allclose(second["cop_rsa_ms_2048"], 3.0 * first["cop_rsa_ms_2048"], rtol=1e-15)
    doc["parameters"]["cop_rsa_ms_2048"]["value"] = float("nan")
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"site.json: parameter 'cop_rsa_ms_2048' must have a 'value'"):
        Parameters.load_cached(path)
    with pytest.raises(FileNotFoundError, match="nope.json is not a file"):
        Parameters.load_cached(tmp_path / "nope.json")
    with pytest.raises(FileNotFoundError, match="is not a file"):
        Parameters.load_cached(tmp_path)                     # a folder


def test_using_params_is_a_deprecated_alias_of_using_values():
    """The old name, kept for one release, warns and does what using_values does."""
    from cryptoplan.model.params import param, using_params, using_values
    with using_values({"ams_fixed_ms": 1.25}):
        expect = param("ams_fixed_ms")
    with pytest.warns(DeprecationWarning, match="using_values"):
        with using_params({"ams_fixed_ms": 1.25}):
            assert param("ams_fixed_ms") == expect == 1.25


@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=5), st.lists(st.floats(allow_nan=False), min_size=1, max_size=5))
def test_a_values_key_is_equal_exactly_when_the_names_and_the_bits_are(a, b):
    # what the channel's remembered answers are keyed by: -0.0 is not 0.0, 1.0 is 1
    ka = prepared_values({f"p{i}": v for i, v in enumerate(a)}).key()
    kb = prepared_values({f"p{i}": v for i, v in enumerate(b)}).key()
    same = len(a) == len(b) and all(math.copysign(1.0, x) == math.copysign(1.0, y) and x == y for x, y in zip(a, b))
    assert (ka == kb) == same
    assert prepared_values({"p0": 1}).key() == prepared_values({"p0": 1.0}).key()


def test_a_values_key_is_none_for_arrays_and_numpy_scalars():
    import numpy as np
    assert prepared_values({"p0": np.array([1.0, 2.0])}).key() is None
    assert prepared_values({"p0": np.float32(1.0)}).key() is None
    assert prepared_values({"p0": 1.0, "p1": np.array([1.0])}).key() is None


def test_parameter_sets_split_arrays_into_sets_and_keep_single_values():
    import numpy as np
    from cryptoplan.model.params import parameter_sets
    sets = parameter_sets({"a": np.array([1.0, 2.0, 3.0]), "b": 0.5, "c": np.array([4.0, 5.0, 6.0])})
    assert [dict(s) for s in sets] == [{"b": 0.5, "a": x, "c": y} for x, y in ((1.0, 4.0), (2.0, 5.0), (3.0, 6.0))]
    assert all(s.key() is not None for s in sets)          # floats: each set has its key
    assert parameter_sets({"a": 1.0}) is None
    assert parameter_sets({"a": np.array([1.0, 2.0]), "c": np.array([1.0])}) is None     # not one length
