"""Every public model function under parameter draws (issue 62, finding 8).

Inside a ``using_values`` block that gives ``k`` values of the parameters (draws), a public function
answers for every set at once: shape ``(k,)``, each element the answer under that set alone.  The
expected values are the same function called once per set (``parameter_sets``), so the test checks
the vectorized path against the scalar one; an answer that depends on no parameter may stay a
single value when every set gives it.  ``crypto_op_ms`` once returned the first draw for one key
size and failed on a list with a numpy reshape error.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

import cryptoplan.model as m
from cryptoplan.model.calibration.draws import parameter_draws
from cryptoplan.model.errors import InputError
from cryptoplan.model.params import parameter_sets, using_values

K = 5
AMS = ("privacy", "RSA", 2048, 2.0)
CHACHA = ("SSLCIPH", "TLS_CHACHA20_POLY1305_SHA256", 32.0)   # the cipher with published round trips
RSA_CBC = ("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256", 2.0)

CALLS = {
    "crypto_op_ms": lambda: m.crypto_op_ms("sign", "RSA", 2048),
    "card_utilization": lambda: m.card_utilization(300, *AMS, card="coprocessor", cards=2),
    "ams_cost_us": lambda: m.ams_cost_us(*AMS),
    "ams_cost_at_rate_us": lambda: m.ams_cost_at_rate_us(300, *AMS),
    "ams_message_cost_us": lambda: m.ams_message_cost_us("privacy", 2.0),
    "ams_throughput": lambda: m.ams_throughput(*AMS),
    "ams_demands": lambda: m.ams_demands(*AMS),
    "ams_plan": lambda: m.ams_plan(300, *AMS).coprocessor_utilization,
    "accelerators_required": lambda: m.accelerators_required(300, *AMS),
    "coprocessors_required": lambda: m.coprocessors_required(300, *AMS),
    "processors_required": lambda: m.processors_required(300, *AMS),
    "crypto_wait_ms": lambda: m.crypto_wait_ms(300, *AMS),
    "tls_cost_us": lambda: m.tls_cost_us(*RSA_CBC),
    "tls_cost_change_pct": lambda: m.tls_cost_change_pct("ATTLS", "TLS_RSA_WITH_AES_256_CBC_SHA256", 64.0),
    "tls_cost_change_pct_z196": lambda: m.tls_cost_change_pct("ATTLS", "NULL_SHA", 64.0, "TCPIP", platform="z196"),
    "tls_roundtrip_us": lambda: m.tls_roundtrip_us(*CHACHA),
    "channel_demands_us": lambda: m.channel_demands_us(*CHACHA),
    "channel_pipeline": lambda: {k: v for k, v in m.channel_pipeline(*CHACHA, ssltasks=1).items() if k != "demands"},
    "channel_throughput": lambda: m.channel_throughput(*CHACHA, ssltasks=1),
    "channel_start_cost_us": lambda: m.channel_start_cost_us("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256"),
    "renegotiation_cost_us": lambda: m.renegotiation_cost_us("TLS_RSA_WITH_AES_256_CBC_SHA256", 2.0, 1000),
    "handshake_card_utilization": lambda: m.handshake_card_utilization(100, "TLS_RSA_WITH_AES_256_CBC_SHA256"),
    "qs_op_ms": lambda: m.qs_op_ms("ML-DSA-65", "sign"),
    "migrated_card_utilization": lambda: m.migrated_card_utilization(300, *AMS, share=0.4, cards=4),
    "migrated_cards_required": lambda: m.migrated_cards_required(3000, *AMS, share=0.4),
}


@pytest.fixture(scope="module")
def draws():
    return parameter_draws(K, seed=11)


def _numbers(x) -> dict:
    """An answer's numbers by name (a dict's numeric values; one number as ``""``)."""
    if isinstance(x, dict):
        return {k: v for k, v in x.items() if v is not None and not isinstance(v, (str, list, dict))}
    return {"": x}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_public_function_answers_each_draw_as_that_draw_alone(name, draws):
    f = CALLS[name]
    with using_values(draws):
        together = _numbers(f())
    alone = []
    for values in parameter_sets(draws):
        with using_values(values):
            alone.append(_numbers(f()))
    for key, got in together.items():
        want = np.array([float(a[key]) for a in alone])
        got = np.asarray(got, dtype=float)
        if got.shape == ():       # depends on no parameter: every set must give it
            assert_allclose(want, float(got), rtol=0, atol=0, err_msg=f"{name}[{key}]")
            continue
        assert got.shape == (K,), (name, key, got.shape)
        # rtol 1e-12: the same arithmetic, vectorized (numpy's SIMD loops may differ in the last bit)
        assert_allclose(got, want, rtol=1e-12, err_msg=f"{name}[{key}]")


def test_crypto_op_ms_takes_one_key_per_draw_or_one_for_all(draws):
    with using_values(draws):
        one = m.crypto_op_ms("sign", "RSA", 2048)
        each = m.crypto_op_ms("sign", "RSA", [2048] * K)
        with pytest.raises(InputError, match=r"key_size has 2 values and the parameters in force are 5 sets"):
            m.crypto_op_ms("sign", "RSA", [2048, 4096])
    assert np.shape(one) == (K,) and len(set(np.round(one, 12))) > 1
    assert_allclose(each, one, rtol=0)
