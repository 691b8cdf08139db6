"""A site's typed quantum-safe time replaces the assumption (model.calibration.qs_times, issue 65).

Expected values: the typed times themselves, substituted back (the calibrated file's qs_op_ms of
the measured operation is the time typed), and the draws' spread against the stated uncertainty.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.cli import main
from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.calibration.qs_times import DEFAULT_RTOL, parse_qs_time, qs_measured
from cryptoplan.model.errors import InputError
from cryptoplan.model.params import Parameters, using_parameters, using_values
from cryptoplan.model.zos.quantum_safe import QS_ALGORITHMS, QS_FACTORS, QS_OPERATIONS, qs_op_ms


def test_the_typed_forms():
    assert parse_qs_time("ML-DSA-65:sign=0.9") == ("ML-DSA-65", "sign", 0.9, pytest.approx(DEFAULT_RTOL * 0.9))
    assert parse_qs_time(" ml-kem-768 : decapsulate = 0.2 +- 0.01 ") == ("ML-KEM-768", "decapsulate", 0.2, 0.01)


@pytest.mark.parametrize("text, match", [
    ("ML-DSA-65 sign 0.9", r"ALGORITHM:OPERATION=MS .*got 'ML-DSA-65 sign 0.9'"),
    ("ML-DSA-66:sign=0.9", r"algorithm must be one of ML-DSA-44"),
    ("ML-KEM-768:sign=0.9", r"operation \(of ML-KEM-768\) must be one of encapsulate, decapsulate"),
    ("ML-DSA-65:sign=fast", r"MS and SD are numbers of milliseconds"),
    ("ML-DSA-65:sign=0", r"ML-DSA-65 sign time must be in \(0, 60000\]"),
    ("ML-DSA-65:sign=900000", r"ML-DSA-65 sign time must be in \(0, 60000\]"),
    ("ML-DSA-65:sign=0.9+-2", r"standard uncertainty must be above 0 and below the time"),
])
def test_a_bad_time_names_what_is_wrong(text, match):
    with pytest.raises(ValueError, match=match):     # InputError, or the domain's ArgumentError
        parse_qs_time(text)


def test_two_times_of_one_family_are_refused():
    with pytest.raises(InputError, match=r"two measured times of one family .*qs_mldsa_time_factor"):
        qs_measured(["ML-DSA-65:sign=0.9", "ML-DSA-44:verify=0.2"])


@settings(max_examples=60, deadline=None)
@given(alg=st.sampled_from(QS_ALGORITHMS), ms=st.floats(0.01, 50.0), rel=st.floats(0.01, 0.9), data=st.data())
def test_the_factor_gives_back_the_time_typed(alg, ms, rel, data):
    """Substituted back: with the factor in force, the measured operation's time is the one typed,
    and the standard error is the typed uncertainty on the same scale."""
    op = data.draw(st.sampled_from(QS_OPERATIONS[alg]))
    (name, m), = qs_measured([f"{alg}:{op}={ms!r}+-{rel * ms!r}"]).items()
    assert name == QS_FACTORS[alg.rsplit("-", 1)[0]]
    with using_values({name: m["value"]}):
        assert_allclose(qs_op_ms(alg, op), ms, rtol=1e-12)
    assert_allclose(m["stderr"] / m["value"], rel, rtol=1e-12)


def test_calibrate_writes_the_site_time_and_bands_draw_its_uncertainty(tmp_path, monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    out = tmp_path / "site.json"
    res = CliRunner().invoke(main, ["calibrate", "--qs-time", "ML-DSA-65:sign=0.9+-0.045", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "qs_mldsa_time_factor" in res.output and "ML-DSA-65 sign 0.9 ms +- 0.045 ms typed" in res.output
    doc = json.loads(out.read_text(encoding="utf-8"))
    entry = doc["parameters"]["qs_mldsa_time_factor"]
    assert entry["source"].startswith("measured on site data")
    with using_parameters(Parameters.load(str(out))):
        assert_allclose(qs_op_ms("ML-DSA-65", "sign"), 0.9, rtol=1e-12)
    draws = parameter_draws(4000, seed=3, doc=doc)["qs_mldsa_time_factor"]
    # drawn from the site's 5% (a normal truncated at 0, which is 20 sd away): sd within 5% of it
    assert_allclose(np.std(draws) / entry["value"], 0.05, rtol=0.05)
    assert_allclose(np.median(draws), entry["value"], rtol=0.01)
    # the other family is still the assumption, drawn over its 0.5..3 band
    assert doc["parameters"]["qs_mlkem_time_factor"]["source"] == "assumption"


def test_calibrate_names_a_bad_time(tmp_path):
    res = CliRunner().invoke(main, ["calibrate", "--qs-time", "ML-DSA-65=0.9", "--out", str(tmp_path / "x.json")])
    assert res.exit_code == 2 and "--qs-time: a quantum-safe time is ALGORITHM:OPERATION=MS" in res.output


def test_the_calibration_page_quotes_the_factor_it_gets():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "calibration.md").read_text(encoding="utf-8")
    (_, m), = qs_measured(["ML-DSA-65:sign=0.9+-0.045"]).items()
    assumed = qs_op_ms("ML-DSA-65", "sign")
    assert f"0.9 / {assumed:.4f} = {m['value']:.3f}" in text
