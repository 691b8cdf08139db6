"""MQ AMS operations, throughput, utilization and card counts (model/zos/ams.py).

Expected values come from: the ref_ops_* rows of data/figures.csv (operations
per message, quoted from MQ performance reports V901 p.3 / V913 p.5), seed
001's three mechanism sentences (quoted below), the fitted parameters read
straight from data/params.json, and formulas written out in the tests:

* card time per transaction: 2 messages x operations per message x the power
  law t(n) = t(2048) (n/2048)^alpha (MODEL.md), certificate checks on ME;
* one requester: X = 1000 / (z + n_req t_call + D_cpu + D_cop + D_acc) tx/s
  (closed loop, no queueing);
* N requesters: asymptotic bounds of a closed network, X(N) <= N X(1) and
  X(N) <= min over stations of capacity = servers / D, reached as N grows;
  exact MVA compared with tests/_exact_mva.py (the numerically solved chain);
* utilization U = lambda D / cards (RMF's summary: requests x EXEC TIME);
* M/G/1 waits: the Pollaczek-Khinchine formula with the mix's moments.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model._validate import UnstableQueueError
from cryptoplan.model.zos.ams import (accelerators_required, ams_card_demands_ms, ams_cost_at_rate_us, ams_cost_us,
                       ams_message_cost_us, ams_operations, ams_throughput, card_utilization,
                       coprocessors_required, crypto_wait_ms)
from cryptoplan.model.datafiles import data_path
from cryptoplan.model.figures import figure
from cryptoplan.model.params import RSA_KEY_SIZES


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)


with open(data_path("params.json"), encoding="utf-8") as _fh:
    _P = {k: float(v["value"]) for k, v in json.load(_fh)["parameters"].items()}


def P(name: str) -> float:
    """A parameter value read directly from the committed data/params.json."""
    return _P[name]


def op_ms(op: str, n: int) -> float:
    """RSA operation time at n bits: t(2048) (s + (1 - s) (n/2048)^alpha), s the fixed share of the
    coprocessor's sign, and for the accelerator's operations the fixed time per request over the
    function's 2048-bit time (model/zos/crypto.py docstring; MODEL.md card mapping)."""
    t0, alpha = {"sign": ("cop_rsa_ms_2048", "exp_private"),
                 "verify": ("acc_me_ms_2048", "exp_public"),
                 "cert_check": ("acc_me_ms_2048", "exp_public"),
                 "key_encrypt": ("acc_me_ms_2048", "exp_public"),
                 "key_decrypt": ("acc_crt_ms_2048", "exp_private")}[op]
    s = P("cop_rsa_fixed_share") if op == "sign" else P("acc_fixed_ms") / P(t0)
    return P(t0) * (s + (1 - s) * (n / 2048.0) ** P(alpha))


def ops_per_msg(policy: str, k: float = 1.0, r: int = 1) -> dict:
    """Operations per message as the reference rows state them (ref_ops_*), plus AMS's
    certificate checks: the signer's certificate on MQGET, each recipient's on MQPUT."""
    c = P("ams_cert_checks")
    if policy == "integrity":
        return {"sign": 1, "verify": 1, "cert_check": c}
    if policy == "privacy":
        return {"sign": 1, "key_encrypt": r, "key_decrypt": 1, "verify": 1, "cert_check": c * (1 + r)}
    return {"key_encrypt": r / k, "key_decrypt": 1 / k, "cert_check": c * r / k}


def demands(policy: str, n: int, k: float = 1.0, r: int = 1) -> tuple[float, float]:
    """(coprocessor ms, accelerator ms) per transaction = 2 messages."""
    cop = acc = 0.0
    for op, count in ops_per_msg(policy, k, r).items():
        t = 2.0 * count * op_ms(op, n)
        if op == "sign":
            cop += t
        else:
            acc += t
    return cop, acc


def requests(policy: str, k: float = 1.0, r: int = 1) -> float:
    """Crypto requests per transaction (2 messages)."""
    return 2.0 * sum(ops_per_msg(policy, k, r).values())


def path_ms(policy: str, k: float = 1.0, r: int = 1) -> float:
    """Delay station: ams_fixed_ms + requests x crypto_call_ms, as params.json describes them."""
    return P("ams_fixed_ms") + requests(policy, k, r) * P("crypto_call_ms")


def cpu_ms(policy: str, kb: float, k: float = 1.0, r: int = 1) -> float:
    """General-processor time per transaction without MSTR's per-second cost, on z16."""
    return ams_cost_at_rate_us(1e300, policy, "RSA", 2048, kb, None if k == 1.0 else k, r) / 1000.0


PROCESSORS = figure("ref_start_cfg_cps").target()   # the default: the MQ reports' 3 dedicated CPs
POLICY_CASES = [("integrity", None), ("privacy", None), ("confidentiality", 1), ("confidentiality", 32)]


# ------------------------------------------------------------ operations
@pytest.mark.parametrize("policy", ["integrity", "privacy"])
@pytest.mark.parametrize("op", ["sign", "verify", "key_encrypt", "key_decrypt"])
def test_operations_per_message_match_reference_rows(policy, op):
    fid = f"ref_ops_{policy}_{op}"
    try:
        expected = figure(fid).target()  # e.g. "Integrity: MQPUT = 1 sign ...; MQGET = 1 verify"
    except KeyError:
        expected = 0.0  # the quote names no such operation for this policy
    assert ams_operations(policy)[op] == expected


def test_privacy_key_encrypt_is_per_recipient():
    # ref_ops_privacy_key_encrypt: "1 key-encrypt per recipient" (value is per recipient)
    per_recipient = figure("ref_ops_privacy_key_encrypt").target()
    for r in (1, 2, 5):
        assert ams_operations("privacy", recipients=r)["key_encrypt"] == r * per_recipient


@settings(max_examples=50, deadline=None)
@given(k=st.one_of(st.integers(1, 9_999_999), st.just("unlimited")), r=st.integers(1, 20))
def test_confidentiality_operations_follow_reference_formula(k, r):
    # ref_ops_conf_per_key: "about (1 + recipients) / K asymmetric operations per message"
    kk = math.inf if k == "unlimited" else float(k)
    ops = ams_operations("confidentiality", key_reuse=k, recipients=r)
    assert_allclose(ops["key_encrypt"] + ops["key_decrypt"], (1 + r) / kk, rtol=1e-12, atol=0)
    # plus AMS's check of each recipient's certificate when a new key is wrapped for it
    assert_allclose(ops["cert_check"], P("ams_cert_checks") * r / kk, rtol=1e-12, atol=0)
    assert_allclose(ops["key_encrypt"], r / kk, rtol=1e-12, atol=0)
    assert_allclose(ops["key_decrypt"], 1 / kk, rtol=1e-12, atol=0)
    assert ops["sign"] == ops["verify"] == 0


def test_confidentiality_row_value_at_k1():
    f = figure("ref_ops_conf_per_key")
    assert f.conditions["key_reuse"] == "1" and f.conditions["function"] == "key_decrypt"
    assert ams_operations("confidentiality", key_reuse=1)["key_decrypt"] == f.target()


@pytest.mark.parametrize("policy, reuse", POLICY_CASES)
@pytest.mark.parametrize("n", RSA_KEY_SIZES)
def test_card_demands_equal_formula(policy, reuse, n):
    d = ams_card_demands_ms(policy, "RSA", n, reuse)
    cop, acc = demands(policy, n, reuse or 1)
    assert_allclose([d["coprocessor"], d["accelerator"]], [cop, acc], rtol=1e-12, atol=0)


# ------------------------------------------------ seed 001 mechanism sentences
def _fn_time(d: dict, fn: str) -> float:
    ms = {"CCA_RSA": op_ms("sign", 2048), "RSA_ME": op_ms("verify", 2048), "RSA_CRT": op_ms("key_decrypt", 2048)}
    return d["ops"].get(fn, 0.0) * ms[fn]


def test_integrity_relies_primarily_on_coprocessor_with_me():
    # seed 001: Integrity "relies primarily on the coprocessor, but can exploit the
    # accelerator ME functions"
    d = ams_card_demands_ms("integrity", "RSA", 2048)
    assert d["coprocessor"] > d["accelerator"] > 0
    assert d["ops"].get("RSA_ME", 0) > 0
    assert d["ops"].get("RSA_CRT", 0) == 0


@pytest.mark.parametrize("bits", RSA_KEY_SIZES)
def test_privacy_relies_almost_equally_and_more_on_crt(bits):
    # seed 001: Privacy "relies almost equally between coprocessor and accelerator ...
    # more heavily on CRT than ME": the accelerator's share of the card time per transaction
    # is a half within row s001_privacy_accelerator_share's tolerance (0.10, a number word),
    # at every key size (the blog charts each).  Before the accelerator's requests had their
    # fixed part the share was 0.37 at 1024 bits (issue 32 item 2).
    row = figure("s001_privacy_accelerator_share")
    d = ams_card_demands_ms("privacy", "RSA", bits)
    share = d["accelerator"] / (d["accelerator"] + d["coprocessor"])
    assert abs(share / row.target() - 1) <= row.tolerance
    assert _fn_time(d, "RSA_CRT") > _fn_time(d, "RSA_ME") > 0


def test_4mb_key_size_drop_privacy_as_published_and_reuse_1_bounded_by_the_linear_cost():
    # seed 001: at 4MB larger keys "still can affect the transaction rates by up to 30% (AMS
    # Privacy)".  Privacy's own drop (1024 -> 4096 bits) is 30% within the row's tolerance
    # (0.167: "30" printed without significant trailing zero).  Over the policies the largest
    # drop is Confidentiality with key reuse 1 (data/misses.csv, s001_4m_tput_keysize); the
    # reason's arithmetic rests on two facts of the model checked here: reuse 1 adds exactly
    # 32 times the 1024 -> 4096-bit time per transaction that reuse 32 adds, and the time per
    # transaction is linear in message size on one machine (z14, where the CPU model is fitted;
    # z16 applies z15's per-size changes, -12/-8.8/-7.4%, which bend it by 0.3%).
    row = figure("s001_4m_tput_keysize")
    def x(policy, bits, kb, reuse=None):
        return ams_throughput(policy, "RSA", bits, kb, reuse)
    privacy = 100 * (x("privacy", 4096, 4096) / x("privacy", 1024, 4096) - 1)
    assert abs((1 + privacy / 100) / (1 + row.target() / 100) - 1) <= row.tolerance
    for kb in (2.0, 64.0, 4096.0):
        added = [1000 / x("confidentiality", 4096, kb, k) - 1000 / x("confidentiality", 1024, kb, k) for k in (1, 32)]
        assert_allclose(added[0], 32 * added[1], rtol=1e-9)
    t = [1000 / ams_throughput("confidentiality", "RSA", 1024, kb, 32, platform="z14") for kb in (2.0, 64.0, 4096.0)]
    assert_allclose((t[2] - t[1]) / (4096 - 64), (t[1] - t[0]) / (64 - 2), rtol=1e-9)


def test_confidentiality_relies_on_crt_with_less_me_and_no_coprocessor():
    # seed 001: Confidentiality "relies heavily on the accelerator's CRT function with
    # less ME function use" (key reuse 1: every message pays)
    d = ams_card_demands_ms("confidentiality", "RSA", 2048, 1)
    assert d["coprocessor"] == 0.0
    assert "CCA_RSA" not in d["ops"]
    assert _fn_time(d, "RSA_CRT") > _fn_time(d, "RSA_ME") > 0
    assert_allclose(_fn_time(d, "RSA_CRT") + _fn_time(d, "RSA_ME"), d["accelerator"], rtol=1e-12)


# ------------------------------------------------------------ throughput
@pytest.mark.parametrize("policy, reuse", POLICY_CASES)
@pytest.mark.parametrize("n", RSA_KEY_SIZES)
@pytest.mark.parametrize("kb", [0.0, 2.0, 64.0, 4096.0])
def test_one_requester_throughput_is_closed_loop_formula(policy, reuse, n, kb):
    cop, acc = demands(policy, n, reuse or 1)
    # MSTR's administration keeps b processors busy; the rest serve the transactions, so the
    # CPU demand is seen through 1 / (1 - b / P) (the model's reduced-capacity station)
    b = ams_cost_at_rate_us(1.0, policy, "RSA", n, kb, reuse, address_space="MSTR") / 1e6
    cpu = cpu_ms(policy, kb, reuse or 1) / (1.0 - b / PROCESSORS)
    expected = 1000.0 / (path_ms(policy, reuse or 1) + cpu + cop + acc)
    assert_allclose(ams_throughput(policy, "RSA", n, kb, reuse), expected, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from([("integrity", None), ("privacy", None), ("confidentiality", 1),
                             ("confidentiality", 2), ("confidentiality", 32), ("confidentiality", 1000)]),
       pair=st.lists(st.sampled_from(RSA_KEY_SIZES), min_size=2, max_size=2, unique=True),
       kb=st.floats(0.0, 4096.0), requesters=st.sampled_from([1, 4]))
def test_throughput_decreases_with_key_size(case, pair, kb, requesters):
    policy, reuse = case
    small, large = sorted(pair)
    x_small = ams_throughput(policy, "RSA", small, kb, reuse, requesters=requesters)
    x_large = ams_throughput(policy, "RSA", large, kb, reuse, requesters=requesters)
    assert x_large < x_small


def _capacity(policy, n, reuse, coprocessors, accelerators, kb=2.0, processors=PROCESSORS) -> float:
    """Bottleneck capacity (tx/s) = min over stations of servers / D (processors less MSTR's share)."""
    cop, acc = demands(policy, n, reuse or 1)
    mstr = ams_cost_at_rate_us(1.0, policy, "RSA", n, kb, reuse, address_space="MSTR") / 1e6  # CPs
    caps = [1000.0 * (processors - mstr) / cpu_ms(policy, kb, reuse or 1)]
    if cop:
        caps.append(1000.0 * coprocessors / cop)
    if acc:
        caps.append(1000.0 * accelerators / acc)
    return min(caps)


@settings(max_examples=30, deadline=None)
@given(case=st.sampled_from(POLICY_CASES), n=st.sampled_from(RSA_KEY_SIZES),
       kb=st.sampled_from([2.0, 64.0]), n_req=st.integers(1, 40),
       coprocessors=st.integers(1, 3), accelerators=st.integers(1, 3))
def test_mva_throughput_nondecreasing_and_bounded(case, n, kb, n_req, coprocessors, accelerators):
    policy, reuse = case
    kw = dict(coprocessors=coprocessors, accelerators=accelerators)
    x1 = ams_throughput(policy, "RSA", n, kb, reuse, requesters=1, **kw)
    xn = ams_throughput(policy, "RSA", n, kb, reuse, requesters=n_req, **kw)
    xn1 = ams_throughput(policy, "RSA", n, kb, reuse, requesters=n_req + 1, **kw)
    assert xn1 >= xn * (1 - 1e-12)
    assert xn <= n_req * x1 * (1 + 1e-12)                       # no faster than N without queueing
    assert xn <= _capacity(policy, n, reuse, coprocessors, accelerators, kb) * (1 + 1e-9)


@pytest.mark.parametrize("policy, reuse", POLICY_CASES)
def test_mva_throughput_reaches_bottleneck_capacity(policy, reuse):
    # with many requesters a closed network saturates its bottleneck: X -> cards * m / D
    cap = _capacity(policy, 4096, reuse, 2, 1)
    x = ams_throughput(policy, "RSA", 4096, 2.0, reuse, requesters=400, coprocessors=2, accelerators=1)
    assert_allclose(x, cap, rtol=2e-3)


@pytest.mark.parametrize("policy, reuse", POLICY_CASES)
@pytest.mark.parametrize("kb", [2.0, 64.0])
def test_cost_rises_with_key_size(policy, reuse, kb):
    # seed 001: cost per transaction rises with key size (rows s001_2k_cost_1024_to_2048 +10%,
    # s001_64k_cost_1024_to_2048 +4%: positive changes)
    assert figure("s001_2k_cost_1024_to_2048").target() > 0
    assert figure("s001_64k_cost_1024_to_2048").target() > 0
    costs = [ams_cost_us(policy, "RSA", n, kb, reuse) for n in RSA_KEY_SIZES]
    assert all(b > a for a, b in zip(costs, costs[1:])), costs


# ----------------------------------------------------- AMS CPU per message
def message_us(policy: str, kb: float, k: float = 1.0, r: int = 1) -> float:
    """The stated form: interception + sign/verify and key-wrap ops + CPACF per KB."""
    ops = ops_per_msg(policy, k, r)
    sig = ops.get("sign", 0) + ops.get("verify", 0)
    key = ops.get("key_encrypt", 0) + ops.get("key_decrypt", 0)
    signs, encrypts = policy != "confidentiality", policy != "integrity"
    return (P("ams_msg_us") + sig * P("ams_sig_op_us") + key * P("ams_key_op_us")
            + kb * (signs * P("ams_hash_us_per_kb") + encrypts * P("ams_enc_us_per_kb")))


@pytest.mark.parametrize("policy, reuse", POLICY_CASES)
@pytest.mark.parametrize("kb", [0.0, 2.0, 4096.0])
def test_message_cost_is_the_stated_formula(policy, reuse, kb):
    # the parameters are the z14 report's: the formula holds as stated on z14
    assert_allclose(ams_message_cost_us(policy, kb, reuse, platform="z14"),
                    message_us(policy, kb, reuse or 1.0), rtol=1e-12)


Z14_CELLS = [(f"ref_ams_cost_{tag}_{pol}_z14", pol, reuse, kb)
             for pol, reuse in (("integrity", None), ("privacy", None), ("confidentiality", 32))
             for tag, kb in (("2k", 2.0), ("4m", 4096.0))]


def test_message_cost_reproduces_the_z14_table():
    # z14 report pp.15-20 ("| 2KB | 124 -> 107 | 162 -> 150 | 16 -> 13 |" and the 4MB line):
    # six cells and five parameters, so at most one cell may miss its printed-digit tolerance,
    # and only if data/misses.csv lists it with its reason
    from cryptoplan.model.calibration.fit import known_misses
    misses = known_misses()
    out = []
    for fid, policy, reuse, kb in Z14_CELLS:
        lo, hi = figure(fid).bounds()
        if not lo <= ams_message_cost_us(policy, kb, reuse, platform="z14") <= hi:
            out.append(fid)
    assert len(out) <= 1 and all(fid in misses for fid in out), out


def test_signing_costs_more_cpu_than_key_wrapping():
    # the z14 table: Privacy - Integrity at 2KB (one key encrypt + decrypt pair, ~43 us) is
    # less than Integrity's sign + verify pair (~91 us after the fixed part); a single cost
    # per asymmetric operation could not hold both
    assert P("ams_sig_op_us") > P("ams_key_op_us") > 0


def test_message_cost_parts_add_up_in_transaction_cost():
    # ams_cost_us = MQ base + MQ per KB + 2 messages' AMS CPU + MSTR administration / throughput
    for policy, reuse in POLICY_CASES:
        for kb in (2.0, 64.0, 4096.0):
            x = ams_throughput(policy, "RSA", 2048, kb, reuse, platform="z14")
            total = ams_cost_us(policy, "RSA", 2048, kb, reuse, platform="z14")
            # MQ's own CPU: the 2 KB baseline (ref_ams_txn_cost_2k_none_z14) + mq_us_per_kb beyond 2 KB
            mq = P("mq_base_us") + P("mq_us_per_kb") * (kb - 2.0)
            expect = mq + 2 * ams_message_cost_us(policy, kb, reuse, platform="z14") + P("mstr_admin_us_per_s") / x
            assert_allclose(total, expect, rtol=1e-12)


def test_mq_cpu_without_ams_grows_with_message_size():
    # issue 32: total CPU per transaction less twice the AMS cost per message was 178.5 / 181.3 /
    # 184.0 / 185.3 us at 2 KB / 64 KB / 1 MB / 4 MB: MQPUT/MQGET of 4 MB cost what 2 KB did
    kbs = np.array([2.0, 64.0, 1024.0, 4096.0])
    mq = (ams_cost_at_rate_us(100.0, "integrity", "RSA", 2048, kbs, platform="z14")
          - 2 * ams_message_cost_us("integrity", kbs, platform="z14"))
    assert np.all(np.diff(mq) > 0)
    # the copies of a 4 MB request and reply are more than ten times the 2 KB transaction's MQ work
    assert mq[-1] > 10 * mq[0]


# ----------------------------------------------------- machine generations
POLICY_REUSE = (("integrity", None), ("privacy", None), ("confidentiality", 32))
Z15_SIZES = {"small": 2.0, "medium": 64.0, "large": 4096.0}  # the assumption ams.py states


@pytest.mark.parametrize("policy, reuse", POLICY_REUSE)
@pytest.mark.parametrize("size", ["small", "medium", "large"])
@pytest.mark.parametrize("space", ["total", "application", "AMSM", "MSTR"])
def test_z15_cost_change_is_the_z15_reports(policy, reuse, size, space):
    # "z14 -> z15 (z15 report p.25), transaction cost, Integrity / Privacy / Confidentiality:
    # small -8 / -7.8 / -12%; medium -6.6 / -6.9 / -8.8%; large -4.5 / -6.3 / -7.4%."
    # The report gives one change per transaction, so every address space changes by it, at
    # the same transaction rate (a closed loop runs faster on the faster machine: its MSTR
    # share per transaction then falls further, see test_faster_processors_raise_the_closed_rate)
    kb = Z15_SIZES[size]
    published = figure(f"ref_z15_vs_z14_cost_{size}_{policy}").target()
    z15 = ams_cost_at_rate_us(500.0, policy, "RSA", 1024, kb, reuse, address_space=space, platform="z15")
    z14 = ams_cost_at_rate_us(500.0, policy, "RSA", 1024, kb, reuse, address_space=space, platform="z14")
    assert_allclose(100.0 * (z15 / z14 - 1.0), published, rtol=1e-12)


@pytest.mark.parametrize("policy, reuse", POLICY_REUSE)
@pytest.mark.parametrize("tag, kb", [("2k", 2.0), ("4m", 4096.0)])
def test_z13_message_cost_follows_the_z14_reports_z13_column(policy, reuse, tag, kb):
    # z14 report pp.15-20, "| 2KB | 124 -> 107 | 162 -> 150 | 16 -> 13 |" and
    # "| 4MB | 13,582 -> 13,180 | 19,749 -> 17,418 | 8,219 -> 4,741 |": the z13 cost is the
    # z14 model's times the published z13/z14 ratio, so it misses the z13 cell by exactly the
    # relative error of the z14 fit (test_message_cost_reproduces_the_z14_table bounds that)
    z13_cell = figure(f"ref_ams_cost_{tag}_{policy}_z13").target()
    z14_cell = figure(f"ref_ams_cost_{tag}_{policy}_z14").target()
    z13 = ams_message_cost_us(policy, kb, reuse, platform="z13")
    z14 = ams_message_cost_us(policy, kb, reuse, platform="z14")
    assert_allclose(z13 / z13_cell, z14 / z14_cell, rtol=1e-12)


def test_z13_mq_part_is_the_no_ams_ratio():
    # "2KB baseline without AMS: 52.87 -> 49.15 us per transaction": the MQ work without AMS
    # and MSTR scale by 52.87/49.15 on z13; the AMS parts by the policy's cells
    ratio = figure("ref_ams_txn_cost_2k_none_z13").target() / figure("ref_ams_txn_cost_2k_none_z14").target()
    for policy, reuse in POLICY_REUSE:
        x = ams_throughput(policy, "RSA", 2048, 2.0, reuse, platform="z13")
        total = ams_cost_us(policy, "RSA", 2048, 2.0, reuse, platform="z13")
        expect = (ratio * (P("mq_base_us") + P("mstr_admin_us_per_s") / x)
                  + 2 * ams_message_cost_us(policy, 2.0, reuse, platform="z13"))
        assert_allclose(total, expect, rtol=1e-12)


def test_z16_uses_the_z15_factors_and_is_the_default():
    # no AMS CPU comparison of z16 with z15 is published (only throughput of large messages)
    kb = np.array([0.5, 2.0, 16.0, 64.0, 1024.0, 4096.0, 102400.0])
    for policy, reuse in POLICY_REUSE:
        z15 = ams_message_cost_us(policy, kb, reuse, platform="z15")
        assert_allclose(ams_message_cost_us(policy, kb, reuse, platform="z16"), z15, rtol=0)
        assert_allclose(ams_message_cost_us(policy, kb, reuse), z15, rtol=0)


@pytest.mark.parametrize("platform", ["z15", "z16"])
def test_faster_processors_raise_the_closed_rate(platform):
    # the processors are a station of the network: a generation that needs less CPU per
    # transaction (the z15 report's -4.5..-12%) shortens one requester's cycle by exactly
    # that CPU, and the card time stays (Crypto Express 8S on every platform)
    for policy, reuse in POLICY_REUSE:
        for kb in (2.0, 4096.0):
            x14 = ams_throughput(policy, "RSA", 2048, kb, reuse, platform="z14")
            xp = ams_throughput(policy, "RSA", 2048, kb, reuse, platform=platform)
            cpu14 = ams_cost_at_rate_us(1e300, policy, "RSA", 2048, kb, reuse, platform="z14") / 1000.0
            cpup = ams_cost_at_rate_us(1e300, policy, "RSA", 2048, kb, reuse, platform=platform) / 1000.0
            b14 = ams_cost_at_rate_us(1.0, policy, "RSA", 2048, kb, reuse, address_space="MSTR",
                                      platform="z14") / 1e6
            bp = ams_cost_at_rate_us(1.0, policy, "RSA", 2048, kb, reuse, address_space="MSTR",
                                     platform=platform) / 1e6
            cycle_gain = cpu14 / (1 - b14 / PROCESSORS) - cpup / (1 - bp / PROCESSORS)
            assert xp > x14
            assert_allclose(1000.0 / x14 - 1000.0 / xp, cycle_gain, rtol=1e-9)


@settings(max_examples=200, deadline=None)
@given(kb=st.floats(0.0, 102400.0), policy=st.sampled_from(["integrity", "privacy", "confidentiality"]),
       platform=st.sampled_from(["z13", "z15"]))
def test_platform_factor_stays_between_its_published_neighbours(kb, policy, platform):
    # interpolated in log size between the published sizes, held constant outside them
    from cryptoplan.model.zos.ams import ams_platform_factors
    if platform == "z13":
        sizes = [2.0, 4096.0]
        r = [figure(f"ref_ams_cost_{t}_{policy}_z13").target() / figure(f"ref_ams_cost_{t}_{policy}_z14").target()
             for t in ("2k", "4m")]
    else:
        sizes = list(Z15_SIZES.values())
        r = [1 + figure(f"ref_z15_vs_z14_cost_{c}_{policy}").target() / 100 for c in Z15_SIZES]
    g = ams_platform_factors(policy, kb, platform)["ams"]
    i = int(np.searchsorted(sizes, kb))
    lo, hi = (r[0], r[0]) if i == 0 else (r[-1], r[-1]) if i == len(sizes) else sorted(r[i - 1:i + 1])
    assert lo - 1e-12 <= g <= hi + 1e-12


def test_platform_factors_are_vectorized_and_reject_bad_input():
    from cryptoplan.model.zos.ams import ams_platform_factors
    kb = np.array([2.0, 64.0, 4096.0])
    g = ams_platform_factors("privacy", kb, "z15")
    expect = [1 + figure(f"ref_z15_vs_z14_cost_{c}_privacy").target() / 100 for c in Z15_SIZES]
    assert_allclose(g["ams"], expect, rtol=1e-12)
    assert_allclose(g["mq"], expect, rtol=1e-12)
    with pytest.raises(ValueError, match="platform must be one of z13, z14, z15, z16"):
        ams_platform_factors("privacy", 2.0, "z12")
    with pytest.raises(ValueError, match="platform must be one of"):
        ams_cost_us("integrity", "RSA", 2048, 2.0, platform="LinuxONE")
    with pytest.raises(ValueError, match="message_kb"):
        ams_platform_factors("privacy", -1.0, "z15")


def test_message_cost_rejects_bad_input():
    with pytest.raises(ValueError, match="policy must be one of"):
        ams_message_cost_us("secrecy", 2.0)
    with pytest.raises(ValueError, match="message_kb"):
        ams_message_cost_us("integrity", -1.0)
    with pytest.raises(ValueError, match="key_reuse"):
        ams_message_cost_us("integrity", 2.0, 32)


# ----------------------------------------------------- utilization and cards
@pytest.mark.parametrize("policy, reuse, card", [("integrity", None, "coprocessor"),
                                                 ("integrity", None, "accelerator"),
                                                 ("privacy", None, "coprocessor"),
                                                 ("privacy", None, "accelerator"),
                                                 ("confidentiality", 1, "accelerator")])
@pytest.mark.parametrize("cards", [1, 2, 3])
def test_card_utilization_formula(policy, reuse, card, cards):
    cop, acc = demands(policy, 2048, reuse or 1)
    d, m = (cop, 1.0) if card == "coprocessor" else (acc, 1.0)   # RMF: one request at a time per card
    rate = 0.5 * 1000.0 * cards * m / d                       # half the capacity
    expected = rate * d / 1000.0 / (cards * m)
    assert_allclose(card_utilization(rate, policy, "RSA", 2048, 2, reuse, card=card, cards=cards),
                    expected, rtol=1e-12)
    assert_allclose(expected, 0.5, rtol=1e-12)
    rates = np.array([0.0, 0.1, 0.7]) * 1000.0 * cards * m / d
    assert_allclose(card_utilization(rates, policy, "RSA", 2048, 2, reuse, card=card, cards=cards),
                    [0.0, 0.1, 0.7], rtol=1e-12, atol=1e-15)


def test_rmf_utilization_is_rate_times_exec_time():
    # seed 001's first RMF report: "1 CEX8A (accelerator) that is 46.6% utilized" with
    # RSA ME 2048 at 2706/s x 0.046 ms and RSA CRT 2048 at 676/s x 0.507 ms: RMF's figure is
    # rate x EXEC TIME (12.4% + 34.3% = 46.7%, within the rounding of the printed numbers).
    # Every printed number is rounded to its last digit (half a unit: rates 0.5/s, times
    # 0.0005 ms, the utilization 0.05%), so the product is compared within the rounding
    # error it inherits: sum of rate x dt + time x dr, plus the utilization's own.
    rmf = err = 0.0
    for f in ("me", "crt"):
        rate, ms = figure(f"s001_rmf_{f}2048_rate").target(), figure(f"s001_rmf_{f}2048_exec_ms").target()
        rmf += rate * ms / 10.0                    # percent: /s x ms / 1000 x 100
        err += (rate * 0.0005 + ms * 0.5) / 10.0
    assert abs(rmf - figure("s001_rmf_cex8a_util").target()) <= err + 0.05, (rmf, err)
    # the model's utilization is that quantity: requests x EXEC TIME per card, no parallelism
    tx = 300.0
    u = card_utilization(tx, "privacy", "RSA", 2048, 2.0, card="accelerator")
    assert_allclose(u, tx * demands("privacy", 2048)[1] / 1000.0, rtol=1e-12)
    me = card_utilization(tx, "privacy", "RSA", 2048, 2.0, card="accelerator", rmf_row="ME")
    crt = card_utilization(tx, "privacy", "RSA", 2048, 2.0, card="accelerator", rmf_row="CRT")
    assert_allclose(me + crt, u, rtol=1e-12)   # one LPAR's rows add up to its summary
    assert_allclose(crt, tx * 2 * op_ms("key_decrypt", 2048) / 1000.0, rtol=1e-12)


def test_cards_are_planned_on_the_summary_not_the_by_function_sum():
    # seed 001: "When summary section of the report indicates that the 100% value is met, then
    # it is advisable to provision additional accelerator resources"; the 152.7% by-function
    # sum is "common processing", not capacity.  At a rate where one accelerator's summary
    # reads 80%, a 70% target needs a second card (with the old 1.527 parallelism it did not).
    acc = demands("privacy", 2048)[1]
    tx = 0.8 * 1000.0 / acc
    assert_allclose(card_utilization(tx, "privacy", "RSA", 2048, 2.0), 0.8, rtol=1e-12)
    assert accelerators_required(tx, "privacy", "RSA", 2048, 2.0, max_utilization=0.7) == 2
    assert accelerators_required(tx, "privacy", "RSA", 2048, 2.0, max_utilization=0.85) == 1


def test_other_lpars_load_adds_to_the_summary():
    acc = demands("privacy", 2048)[1]
    tx = 0.3 * 1000.0 / acc
    u = card_utilization(tx, "privacy", "RSA", 2048, 2.0, other_lpar_util=0.25)
    assert_allclose(u, 0.55, rtol=1e-12)
    with pytest.raises(UnstableQueueError, match="accelerators would be 105% busy"):
        card_utilization(tx, "privacy", "RSA", 2048, 2.0, other_lpar_util=0.75)
    # 30% of own load plus 50% from others: a 70% target needs cards with 0.3/k + 0.5 <= 0.7
    assert accelerators_required(tx, "privacy", "RSA", 2048, 2.0, other_lpar_util=0.5) == 2
    with pytest.raises(ValueError, match="other_lpar_util.*max_utilization"):
        accelerators_required(tx, "privacy", "RSA", 2048, 2.0, other_lpar_util=0.7)


@pytest.mark.parametrize("card", ["coprocessor", "accelerator"])
@pytest.mark.parametrize("factor", [1.0 + 1e-9, 1.5])
def test_card_utilization_at_or_above_capacity_raises(card, factor):
    cop, acc = demands("privacy", 2048)
    d, m = (cop, 1.0) if card == "coprocessor" else (acc, 1.0)
    with pytest.raises(UnstableQueueError, match=card):
        card_utilization(factor * 1000.0 * 2 * m / d, "privacy", "RSA", 2048, 2, card=card, cards=2)
    assert card_utilization(0.99 * 1000.0 * 2 * m / d, "privacy", "RSA", 2048, 2, card=card, cards=2) < 1


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(POLICY_CASES), n=st.sampled_from(RSA_KEY_SIZES),
       tx=st.floats(1.0, 20000.0), u_max=st.floats(0.1, 0.999),
       card=st.sampled_from(["coprocessor", "accelerator"]))
def test_cards_required_is_minimal(case, n, tx, u_max, card):
    policy, reuse = case
    cop, acc = demands(policy, n, reuse or 1)
    d, m = (cop, 1.0) if card == "coprocessor" else (acc, 1.0)
    assume(d > 0)
    fn = coprocessors_required if card == "coprocessor" else accelerators_required
    k = fn(tx, policy, "RSA", n, 2.0, reuse, max_utilization=u_max)

    def util(cards):
        return tx * d / 1000.0 / (cards * m)

    assert k >= 1
    assert util(k) <= u_max * (1 + 1e-12) and util(k) < 1
    if k > 1:
        assert util(k - 1) > u_max * (1 - 1e-12) or util(k - 1) >= 1


def test_cards_required_zero_when_card_unused():
    # NISTECC signs and verifies on the coprocessor only (MODEL.md): no accelerator work
    assert accelerators_required(1000.0, "integrity", "NISTECC", 256, 2) == 0
    assert coprocessors_required(1000.0, "integrity", "NISTECC", 256, 2) >= 1
    # confidentiality with unlimited reuse: (1 + r)/K -> 0 asymmetric operations
    assert accelerators_required(1000.0, "confidentiality", "RSA", 2048, 2, "unlimited") == 0
    assert accelerators_required(1000.0, "confidentiality", "RSA", 2048, 2, math.inf) == 0
    assert coprocessors_required(1000.0, "confidentiality", "RSA", 2048, 2, "unlimited") == 0
    # confidentiality never signs: no coprocessor work at any reuse
    assert coprocessors_required(1000.0, "confidentiality", "RSA", 2048, 2, 1) == 0
    # no traffic, no cards
    assert accelerators_required(0.0, "privacy", "RSA", 2048, 2) == 0


def test_cards_required_refuses_a_bad_service_scv_without_a_wait_target():
    # service_scv only matters with max_wait_ms, but a value outside its domain is an error
    # either way (all or nothing): it was silently ignored without a wait target
    for fn in (accelerators_required, coprocessors_required):
        with pytest.raises(ValueError, match=r"^service_scv must be >= 0 \(got -0.5\)$"):
            fn(1000.0, "privacy", "RSA", 2048, 2, service_scv=-0.5)
        assert fn(1000.0, "privacy", "RSA", 2048, 2, service_scv=0.5) == fn(1000.0, "privacy", "RSA", 2048, 2)


def test_cards_required_vectorised():
    out = accelerators_required([0.0, 100.0, 5000.0], "privacy", "RSA", 4096, 2)
    assert out.shape == (3,)
    assert out[0] == 0 and list(out) == sorted(out)


# ------------------------------------------------------------ bad input
def test_ecc_with_privacy_raises():
    with pytest.raises(ValueError, match="NISTECC.*integrity"):
        ams_throughput("privacy", "NISTECC", 256, 2)
    with pytest.raises(ValueError, match="NISTECC.*integrity"):
        ams_card_demands_ms("confidentiality", "NISTECC", 256, 32)


def test_unknown_policy_lists_accepted():
    with pytest.raises(ValueError, match="integrity, privacy, confidentiality"):
        ams_throughput("secrecy", "RSA", 2048, 2)


def test_negative_message_kb_raises_naming_it():
    with pytest.raises(ValueError, match="message_kb"):
        ams_throughput("integrity", "RSA", 2048, -1)
    with pytest.raises(ValueError, match="message_kb"):
        card_utilization(10, "integrity", "RSA", 2048, -1)


@pytest.mark.parametrize("policy", ["integrity", "privacy"])
def test_key_reuse_only_with_confidentiality(policy):
    with pytest.raises(ValueError, match="key_reuse"):
        ams_throughput(policy, "RSA", 2048, 2, 32)
    with pytest.raises(ValueError, match="key_reuse"):
        ams_operations(policy, key_reuse="unlimited")


def test_bad_key_size_lists_accepted():
    with pytest.raises(ValueError, match="1024, 2048, 3072, 4096"):
        ams_throughput("integrity", "RSA", 8192, 2)


def _mix(policy, card, n=2048, k=1.0):
    """(requests per transaction, mean ms, E[S^2] ms^2) of a card type's request mix."""
    ops = ops_per_msg(policy, k)
    on_card = {"sign": "coprocessor"}
    reqs = [(2.0 * c, op_ms(op, n)) for op, c in ops.items() if on_card.get(op, "accelerator") == card and c]
    total = sum(c for c, _ in reqs)
    mean = sum(c * t for c, t in reqs) / total
    return total, mean, sum(c * t * t for c, t in reqs) / total


@pytest.mark.parametrize("policy, card", [("integrity", "accelerator"), ("privacy", "accelerator"),
                                          ("confidentiality", "accelerator"), ("privacy", "coprocessor")])
@pytest.mark.parametrize("load", [0.2, 0.6, 0.9])
def test_one_card_wait_is_pollaczek_khinchine_for_the_mix(policy, card, load):
    # Each card function's EXEC TIME is constant, so a card type serves a discrete mix
    # (e.g. ME 0.046 ms and CRT 0.507 ms).  With one card the queue is M/G/1, whose mean
    # wait is exact: Wq = lambda E[S^2] / (2 (1 - rho)) (Pollaczek-Khinchine).
    per_txn, mean, m2 = _mix(policy, card)
    lam_req = load / (mean / 1000.0)                           # requests/s at this utilization
    tx = lam_req / per_txn
    expect_ms = lam_req * (m2 / 1e6) / (2 * (1 - load)) * 1000.0 * per_txn
    got = crypto_wait_ms(tx, policy, "RSA", 2048, 2.0, None if policy != "confidentiality" else 1,
                         card=card, cards=1)
    assert_allclose(got, expect_ms, rtol=1e-10)


def test_accelerator_mix_is_far_from_constant_service():
    # The accelerator serves ME and CRT requests of very different times: the mix's SCV is
    # about 1.8 for Privacy (4 ME per CRT, the RMF example's mix) and 1.2 for Confidentiality
    # (2 ME per CRT); M/D/c (SCV 0) would give under half the M/G/1 wait.
    scv = {}
    for pol, k in (("integrity", 1.0), ("privacy", 1.0), ("confidentiality", 1.0)):
        _, mean, m2 = _mix(pol, "accelerator", k=k)
        scv[pol] = m2 / mean ** 2 - 1
    assert scv["integrity"] == pytest.approx(0.0, abs=1e-12)   # ME only: constant
    assert 1.5 < scv["privacy"] < 2.0 and 1.0 < scv["confidentiality"] < 1.5
    tx = 0.6 * 1000.0 / demands("privacy", 2048)[1]
    mix = crypto_wait_ms(tx, "privacy", "RSA", 2048, 2.0, cards=1)
    const = crypto_wait_ms(tx, "privacy", "RSA", 2048, 2.0, cards=1, service_scv=0.0)
    assert_allclose(mix / const, 1 + scv["privacy"], rtol=1e-10)   # P-K: Wq proportional to 1 + SCV


@pytest.mark.parametrize("card", ["accelerator", "coprocessor"])
@pytest.mark.parametrize("tx", [300.0, 1500.0, 4000.0])
def test_cards_required_for_a_wait_target_are_minimal(card, tx):
    # Minimality through the public functions: with k cards both the utilization ceiling and
    # the mean-wait target hold; with k - 1 one of them fails (or the cards saturate).
    from cryptoplan import model
    from cryptoplan.model import UnstableQueueError
    required = model.accelerators_required if card == "accelerator" else model.coprocessors_required
    args = ("privacy", "RSA", 2048, 2.0)
    k = required(tx, *args, max_utilization=0.8, max_wait_ms=0.05)
    assert k >= 1
    assert model.card_utilization(tx, *args, card=card, cards=k) <= 0.8
    assert model.crypto_wait_ms(tx, *args, card=card, cards=k) <= 0.05
    if k > 1:
        try:
            u = model.card_utilization(tx, *args, card=card, cards=k - 1)
            w = model.crypto_wait_ms(tx, *args, card=card, cards=k - 1)
            assert u > 0.8 or w > 0.05
        except UnstableQueueError:
            pass


# Expected values: the exact M/D/c mean wait of the embedded Markov chain
# (tests/test_mgc.py::md_c_exact_wait, checked there against Pollaczek-Khinchine at c = 1).
@pytest.mark.parametrize("tx", [250.0, 500.0, 800.0, 1200.0, 1500.0, 2000.0, 2600.0])
@pytest.mark.parametrize("max_wait_ms", [0.02, 0.1, 0.5])
def test_coprocessors_for_a_wait_target_match_the_exact_md_c_chain(tx, max_wait_ms):
    """Integrity sends only signs to the coprocessors: one constant-time request stream,
    an M/D/c queue with one server per card.  The card count chosen with
    Cosmetatos must be the count the exact chain chooses, wherever the exact wait at the
    deciding counts is not within Cosmetatos' error band (10% here, 2.7% measured at
    utilization >= 0.5) of the target."""
    from test_mgc import md_c_exact_wait

    per_txn = 2.0                                   # one sign per message, 2 messages
    service = op_ms("sign", 4096) / 1000.0          # s, constant
    lam = tx * per_txn

    def exact_ms(k):  # queueing delay per transaction with k coprocessors
        return md_c_exact_wait(lam, service, k) * per_txn * 1000.0

    k_exact = next(k for k in range(1, 200)
                   if lam * service / k <= 0.95 and exact_ms(k) <= max_wait_ms)
    deciding = [exact_ms(k) for k in (k_exact - 1, k_exact) if k >= 1 and lam * service / k <= 0.95]
    if any(abs(w / max_wait_ms - 1.0) < 0.10 for w in deciding):
        pytest.skip("target within the approximation's error band: either count is defensible")
    k_model = coprocessors_required(tx, "integrity", "RSA", 4096, 2.0, max_utilization=0.95,
                                    max_wait_ms=max_wait_ms)
    assert k_model == k_exact, (k_model, k_exact, [exact_ms(k) for k in range(max(k_exact - 1, 1), k_exact + 2)])  # noqa: E501


# ------------------------------------------------ the network: planning answers
from cryptoplan.model.zos.ams import (RMF_EXAMPLE, ams_bottleneck, ams_demands, ams_plan,  # noqa: E402
                       processors_required)


def _within(fid, model_value):
    """The figure's own comparison: inside its tolerance band (figure.bounds())."""
    lo, hi = figure(fid).bounds()
    return lo <= model_value <= hi


@pytest.mark.parametrize("kb, fid", [(2.0, "s001_2k_conf32_tput_4096"), (64.0, "s001_64k_conf32_tput_4096")])
def test_confidentiality_reuse_32_keeps_25_and_50_percent(kb, fid):
    # seed 001: "with key-size 4096, AMS Confidentiality with key reuse 32 can sustain
    # approximately 50% of the rate achieved when using a key-size of 1024" (64KB) and "Using a
    # 2KB message, the measurement using the 4096-bit certificate was able to sustain only 25%"
    ratio = 100.0 * (ams_throughput("confidentiality", "RSA", 4096, kb, 32)
                     / ams_throughput("confidentiality", "RSA", 1024, kb, 32))
    assert _within(fid, ratio), (ratio, figure(fid).bounds())


def test_a_policy_that_does_less_has_a_shorter_path():
    # the path is the work the policy does: Confidentiality with reuse 32 sends 6/32 crypto
    # requests per transaction and no signature; Integrity 6 and Privacy 12
    def cycle(p, r):
        d = ams_demands(p, "RSA", 2048, 2.0, r)
        return d["path_ms"] + d["cpu_ms"]
    assert cycle("confidentiality", 32) < cycle("confidentiality", 1) < cycle("privacy", None)
    assert cycle("confidentiality", 32) < cycle("integrity", None) < cycle("privacy", None)


def test_rmf_example_is_one_configuration():
    # seed 001's RMF example: 2 CEX8C "each approximately 21% busy" at "approximately 0.596
    # milliseconds", 1 CEX8A "46.6% utilized ... average request time of 0.138 milliseconds",
    # ME 2048 "2706 of the 3382 operations" at 0.046 ms and CRT 2048 "676" at 0.507 ms per
    # second.  Named configuration (model.ams.RMF_EXAMPLE): Privacy, RSA 2048, one recipient,
    # 2 coprocessors, 1 accelerator, at the rate that sends 2706 ME requests per second.
    cfg = dict(RMF_EXAMPLE)
    me_per_txn = ams_demands(cfg["policy"], cfg["key_type"], cfg["key_size"], cfg["message_kb"])["requests"]["RSA_ME"]
    assert me_per_txn == 8.0                       # 4 ME per message: key wrap, verify, 2 certificates
    tx = figure("s001_rmf_me2048_rate").target() / me_per_txn
    plan = ams_plan(tx, **cfg)
    # the mix: CRT 676/s (printed to the request: +-0.5) and as many coprocessor requests
    assert abs(plan.accelerator_crt_rate - figure("s001_rmf_crt2048_rate").target()) <= 0.5
    assert_allclose(plan.accelerator_me_rate + plan.accelerator_crt_rate,
                    figure("s001_rmf_accel_total_rate").target(), atol=0.5)
    # coprocessor requests: 2 x 21% / 0.596 ms = 705/s in the report ("approximately": its 10%
    # tolerance); the configuration sends one sign per CRT, 676.5/s
    rmf_cop_rate = (figure("s001_rmf_cex8c_count").target() * figure("s001_rmf_cex8c_util").target() / 100.0
                    / (figure("s001_rmf_cex8c_exec_ms").target() / 1000.0))
    assert abs(plan.coprocessor_rate / rmf_cop_rate - 1.0) <= figure("s001_rmf_cex8c_util").tolerance
    # utilization and mean EXEC TIME with the fitted times, each within its row's tolerance
    assert _within("s001_rmf_cex8a_util", 100.0 * plan.accelerator_utilization)
    assert _within("s001_rmf_cex8a_exec_ms", plan.accelerator_exec_ms)
    # and the coprocessor utilization is rate x EXEC TIME per card, as RMF computes it
    assert_allclose(plan.coprocessor_utilization, plan.coprocessor_rate * op_ms("sign", 2048) / 1000.0 / 2,
                    rtol=1e-12)


def _buzen_x(n, demands, servers, think):
    """X(N) by the convolution algorithm (Buzen 1973) with load-dependent stations: an
    independent exact reference for MVA.  G(N) = sum over allocations of prod_k f_k(n_k),
    f_k(n) = D_k^n / prod_{j<=n} min(j, m_k); the delay station f(n) = Z^n / n!."""
    import mpmath
    g = [mpmath.mpf(1)] + [mpmath.mpf(0)] * n
    stations = [(think, math.inf)] + list(zip(demands, servers))
    for d, m in stations:
        f = [mpmath.mpf(1)]
        for j in range(1, n + 1):
            f.append(f[-1] * mpmath.mpf(d) / (j if math.isinf(m) else min(j, m)))
        g = [sum(f[j] * g[i - j] for j in range(i + 1)) for i in range(n + 1)]
    return float(g[n - 1] / g[n])


@pytest.mark.parametrize("policy, reuse, kb", [("privacy", None, 2.0), ("integrity", None, 4096.0),
                                               ("confidentiality", 1, 64.0)])
@pytest.mark.parametrize("n", [2, 5, 17])
def test_closed_network_is_exact_mva(policy, reuse, kb, n):
    d = ams_demands(policy, "RSA", 4096, kb, reuse)
    b = d["mstr_us_per_s"] / 1e6
    stations = [d["cpu_ms"] / (1 - b / PROCESSORS), d["coprocessor_ms"], d["accelerator_ms"]]
    expect = 1000.0 * _buzen_x(n, stations, [int(PROCESSORS), 2, 1], d["path_ms"])
    got = ams_throughput(policy, "RSA", 4096, kb, reuse, requesters=n, coprocessors=2, accelerators=1)
    assert_allclose(got, expect, rtol=1e-9)


@pytest.mark.parametrize("policy, reuse, kb, requesters", [
    ("confidentiality", "unlimited", 2.0, 100), ("confidentiality", "unlimited", 2.0, 100000),
    ("privacy", None, 4096.0, 256)])
def test_no_throughput_above_what_the_processors_serve(policy, reuse, kb, requesters):
    # the issue measured 1.67e5 / 1.67e8 txn/s for unlimited reuse and 1,275 txn/s at 32.7 ms
    # CPU each (42 processors busy) for Privacy 4MB: the processors are a station now
    x = ams_throughput(policy, "RSA", 2048, kb, reuse, requesters=requesters)
    d = ams_demands(policy, "RSA", 2048, kb, reuse)
    busy = x * d["cpu_ms"] / 1000.0 + d["mstr_us_per_s"] / 1e6
    assert busy <= PROCESSORS * (1 + 1e-9)
    assert ams_bottleneck(policy, "RSA", 2048, kb, reuse, requesters=requesters) == "processors"
    more = ams_throughput(policy, "RSA", 2048, kb, reuse, requesters=requesters, processors=6)
    assert more > x


@pytest.mark.parametrize("policy, reuse", POLICY_CASES)
@pytest.mark.parametrize("tx", [50.0, 359.0, 5000.0])
def test_cost_at_the_planned_rate_differs_from_the_closed_loop_by_the_mstr_term(policy, reuse, tx):
    # the issue: TxRate 5,000/s showed CPU per transaction at the closed loop's 359/s.
    # c(lambda) - c(X) = O_MSTR (1/lambda - 1/X), and c(X) is the closed-loop cost exactly
    x = ams_throughput(policy, "RSA", 2048, 10.0, reuse)
    closed = ams_cost_us(policy, "RSA", 2048, 10.0, reuse)
    at_rate = ams_cost_at_rate_us(tx, policy, "RSA", 2048, 10.0, reuse)
    mstr_per_s = ams_cost_at_rate_us(1.0, policy, "RSA", 2048, 10.0, reuse, address_space="MSTR")
    assert_allclose(at_rate - closed, mstr_per_s * (1.0 / tx - 1.0 / x), rtol=1e-9, atol=1e-9)
    assert_allclose(ams_cost_at_rate_us(x, policy, "RSA", 2048, 10.0, reuse), closed, rtol=1e-12)
    for space in ("application", "AMSM"):
        assert_allclose(ams_cost_at_rate_us(tx, policy, "RSA", 2048, 10.0, reuse, address_space=space),
                        ams_cost_us(policy, "RSA", 2048, 10.0, reuse, address_space=space), rtol=1e-12)


def test_an_unsustainable_rate_names_the_resource_and_the_count():
    # the new user: TxRate 5,000/s, Privacy, RSA 2048, 10KB on the measured 2 + 1 cards
    with pytest.raises(UnstableQueueError, match=r"coprocessors would be \d+% busy.*(\d+) coprocessors needed"):
        ams_plan(5000.0, "privacy", "RSA", 2048, 10.0)
    plan = ams_plan(5000.0, "privacy", "RSA", 2048, 10.0, coprocessors=8, accelerators=8, processors=8)
    assert plan.coprocessors_required == coprocessors_required(5000.0, "privacy", "RSA", 2048, 10.0)
    assert plan.accelerators_required == accelerators_required(5000.0, "privacy", "RSA", 2048, 10.0)
    assert plan.processors_required == processors_required(5000.0, "privacy", "RSA", 2048, 10.0)
    # processors busy is the CPU per transaction at that rate times the rate
    assert_allclose(plan.processors_busy, 5000.0 * plan.cost_us["total"] / 1e6, rtol=1e-12)
    assert_allclose(plan.cost_us["total"], ams_cost_at_rate_us(5000.0, "privacy", "RSA", 2048, 10.0),
                    rtol=1e-12)
    assert_allclose(plan.accelerator_utilization,
                    card_utilization(5000.0, "privacy", "RSA", 2048, 10.0, cards=8), rtol=1e-12)
    assert_allclose(plan.coprocessor_wait_ms,
                    crypto_wait_ms(5000.0, "privacy", "RSA", 2048, 10.0, card="coprocessor", cards=8),
                    rtol=1e-12)
    assert plan.bottleneck in ("processors", "coprocessors", "accelerators")
    with pytest.raises(UnstableQueueError, match="general processors would be"):
        ams_plan(5000.0, "privacy", "RSA", 2048, 4096.0, coprocessors=8, accelerators=8, processors=8)


def test_processors_required_is_minimal():
    for tx in (10.0, 500.0, 5000.0):
        p = processors_required(tx, "privacy", "RSA", 2048, 64.0)
        busy = tx * ams_cost_at_rate_us(tx, "privacy", "RSA", 2048, 64.0) / 1e6
        assert busy / p <= 0.7 and (p == 1 or busy / (p - 1) > 0.7)


def test_other_lpars_slow_the_closed_loop():
    base = ams_throughput("privacy", "RSA", 2048, 2.0, requesters=50)
    shared = ams_throughput("privacy", "RSA", 2048, 2.0, requesters=50, other_accelerator_util=0.5)
    assert shared < base
    one = ams_throughput("privacy", "RSA", 2048, 2.0)
    d = ams_demands("privacy", "RSA", 2048, 2.0)
    one_shared = ams_throughput("privacy", "RSA", 2048, 2.0, other_accelerator_util=0.5)
    assert_allclose(1000.0 / one_shared - 1000.0 / one, d["accelerator_ms"], rtol=1e-9)  # D / (1 - 0.5) - D


def test_vectorized_answers_equal_scalar_ones():
    pol = np.array(["integrity", "privacy", "confidentiality", "Integrity", "confidentiality"], dtype=object)
    kt = np.array(["RSA", "RSA", "RSA", "NISTECC", "RSA"], dtype=object)
    n = np.array([2048, 4096, 1024, 521, 3072])
    kb = np.array([2.0, 64.0, 4096.0, 2.0, 0.0])
    reuse = np.array([None, None, 32, None, "unlimited"], dtype=object)
    req = np.array([1, 4, 1, 2, 9])
    x = ams_throughput(pol, kt, n, kb, reuse, requesters=req)
    c = ams_cost_at_rate_us(100.0, pol, kt, n, kb, reuse)
    acc = accelerators_required(100.0, pol, kt, n, kb, reuse)
    for i in range(pol.size):
        assert_allclose(x[i], ams_throughput(pol[i], kt[i], int(n[i]), kb[i], reuse[i], requesters=int(req[i])),
                        rtol=1e-12)
        assert_allclose(c[i], ams_cost_at_rate_us(100.0, pol[i], kt[i], int(n[i]), kb[i], reuse[i]), rtol=1e-12)
        assert acc[i] == accelerators_required(100.0, pol[i], kt[i], int(n[i]), kb[i], reuse[i])
    with pytest.raises(ValueError, match="key_reuse applies to the confidentiality policy only.*index"):
        ams_throughput(pol, kt, n, kb, np.array([32, None, 32, None, 1], dtype=object))


def test_card_generations_follow_the_published_rows():
    # "Crypto Express 7S execution times are up to 13% lower than 6S (z15 report p.20); Crypto
    # Express 8S showed no significant benefit over 7S for MQ TLS or AMS (z16 report p.18)":
    # the card times are fitted to CEX8S; CEX7S the same; CEX6S 1 / (1 - 0.13) of them
    change = figure("ref_cex7s_vs_cex6s_exec").target() / 100.0
    d8 = ams_demands("privacy", "RSA", 2048, 2.0)
    d7 = ams_demands("privacy", "RSA", 2048, 2.0, card_generation="CEX7S")
    d6 = ams_demands("privacy", "RSA", 2048, 2.0, card_generation="cex6s")
    for card in ("coprocessor_ms", "accelerator_ms"):
        assert d7[card] == d8[card]
        assert_allclose(d6[card] * (1.0 + change), d8[card], rtol=1e-12)
    assert d6["cpu_ms"] == d8["cpu_ms"]
    tx = 200.0
    assert_allclose(card_utilization(tx, "privacy", "RSA", 2048, 2.0, card_generation="CEX6S") * (1 + change),
                    card_utilization(tx, "privacy", "RSA", 2048, 2.0), rtol=1e-12)
    assert ams_throughput("integrity", "RSA", 4096, 2.0, card_generation="CEX6S") < \
        ams_throughput("integrity", "RSA", 4096, 2.0)
    with pytest.raises(ValueError, match="card_generation must be one of CEX6S, CEX7S, CEX8S"):
        ams_throughput("integrity", "RSA", 2048, 2.0, card_generation="CEX5S")


@pytest.mark.parametrize("policy, reuse, kb", [("confidentiality", "unlimited", 2.0), ("privacy", None, 4096.0),
                                               ("integrity", None, 2.0)])
def test_saturated_networks_stop_early_within_their_tolerance(policy, reuse, kb):
    # beyond saturation MVA runs to 256, 1024, ... requesters and stops once X is within
    # SATURATION_RTOL of its bound: the answer must equal the full recursion's to that tolerance
    from cryptoplan.model.queueing.mva import SATURATION_RTOL, _mva, mva_throughput
    d = ams_demands(policy, "RSA", 2048, kb, reuse)
    b = d["mstr_us_per_s"] / 1e6
    dem = np.array([d["cpu_ms"] / (1 - b / PROCESSORS), d["coprocessor_ms"], d["accelerator_ms"]])
    srv = np.array([PROCESSORS, 2.0, 1.0])
    n = 5000
    full = _mva(n, dem, srv, d["path_ms"])[0][-1]
    assert_allclose(mva_throughput(n, dem, srv, d["path_ms"]), full, rtol=SATURATION_RTOL, atol=0)
    assert_allclose(ams_throughput(policy, "RSA", 2048, kb, reuse, requesters=n), 1000.0 * full,
                    rtol=SATURATION_RTOL, atol=0)


@pytest.mark.parametrize("fn", [accelerators_required, coprocessors_required, processors_required])
def test_absurd_rates_are_named_not_overflowed(fn):
    # the fuzz: ACCELERATORS_REQUIRED(1e308, ...) gave "internal error (OverflowError ...)"; the
    # vectorized counts then cast 1e308 to int64 (-9.2e18).  More than 10,000 is a unit mistake.
    with pytest.raises(ValueError, match=r"more than 10,000 .* tx_rate 1e\+308/s"):
        fn(1e308, "privacy", "RSA", 2048, 2.0)
    with pytest.raises(ValueError, match="at index 1"):
        fn([10.0, 1e308], "privacy", "RSA", 2048, 2.0)
    with pytest.raises(UnstableQueueError, match="more than 100 times as busy"):
        ams_plan(1e308, "privacy", "RSA", 2048, 2.0)


def test_tiny_rates_give_finite_waits():
    # the fuzz: crypto_wait_ms(1e-310, ..., cards=64) -> nan
    w = crypto_wait_ms(1e-310, "privacy", "RSA", 2048, 2.0, cards=64)
    assert np.isfinite(w) and w >= 0.0


def test_workload_answers_what_the_functions_answer():
    # AmsWorkload validates once and answers many questions; each answer must equal the public
    # function's, for arrays of scenarios and with several requesters (exact MVA)
    from cryptoplan.model.zos.ams import AmsWorkload
    pol = ["integrity", "privacy", "confidentiality", "confidentiality"]
    reuse = [1, 1, 32, "unlimited"]
    kb = [2.0, 64.0, 4096.0, 2.0]
    w = AmsWorkload(pol, "RSA", 4096, kb, reuse, platform="z15", card_generation="CEX6S")
    assert w.shape == (4,)
    for n in (1, 6):
        got = w.closed_loop(requesters=n, coprocessors=2, accelerators=1, processors=4)
        x = ams_throughput(pol, "RSA", 4096, kb, reuse, n, 2, 1, processors=4, platform="z15",
                           card_generation="CEX6S")
        assert_allclose(got["throughput"], x, rtol=1e-12)
        assert_allclose(got["cost_us"], ams_cost_us(pol, "RSA", 4096, kb, reuse, n, 2, 1, processors=4,
                                                    platform="z15", card_generation="CEX6S"), rtol=1e-12)
        assert_allclose(w.throughput(n, 2, 1, 4), x, rtol=1e-12)
    d = ams_demands(pol, "RSA", 4096, kb, reuse, platform="z15", card_generation="CEX6S")
    for k in ("path_ms", "cpu_ms", "coprocessor_ms", "accelerator_ms", "mstr_us_per_s"):
        assert_allclose(got["demands"][k], d[k], rtol=1e-12)
        assert_allclose(w.demands()[k], d[k], rtol=1e-12)
    assert_allclose(w.cost_at_rate_us(300.0, "AMSM"),
                    ams_cost_at_rate_us(300.0, pol, "RSA", 4096, kb, reuse, address_space="AMSM",
                                        platform="z15"), rtol=1e-12)
    assert_allclose(w.message_cost_us(), ams_message_cost_us(pol, kb, reuse, platform="z15"), rtol=1e-12)


def test_workload_is_validated_once_when_built():
    from cryptoplan.model.zos.ams import AmsWorkload
    with pytest.raises(ValueError, match="key_reuse applies to the confidentiality policy only"):
        AmsWorkload(["integrity", "privacy"], "RSA", 2048, 2.0, [1, 32])
    with pytest.raises(ValueError, match="requesters"):
        AmsWorkload("integrity", "RSA", 2048, 2.0).throughput(requesters=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(10.0, 6000.0), min_size=2, max_size=12), st.integers(1, 3),
       st.sampled_from(["accelerator", "coprocessor"]))
def test_overload_reports_each_element_as_its_scalar_call_would(rates, cards, card):
    """An array call that overloads names the busiest element and carries the mask of the
    overloaded ones with each one's own message: exactly what the scalar call raises (the
    sweep reports saturated scenarios from it without calling the model once per scenario)."""
    from cryptoplan.model.zos.ams import card_utilization
    args = ("integrity", "RSA", 2048, 2.0)
    scalar = []
    for r in rates:
        try:
            card_utilization(r, *args, card=card, cards=cards)
            scalar.append(None)
        except UnstableQueueError as exc:
            scalar.append(str(exc))
    assume(any(scalar))
    with pytest.raises(UnstableQueueError) as info:
        card_utilization(np.array(rates), *args, card=card, cards=cards)
    exc = info.value
    assert exc.mask.tolist() == [m is not None for m in scalar]
    for k, want in enumerate(scalar):
        if want is not None:
            assert exc.element_message(k) == want
    assert "(at index " in str(exc)


def test_unstable_queue_error_pickles_as_its_message():
    import pickle
    exc = UnstableQueueError("cards would be 120% busy", mask=np.array([True]), element_message=lambda k: "x")
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is UnstableQueueError and str(back) == str(exc) and back.mask is None


def test_rsa_beats_nistecc_at_the_smaller_comparable_key_sizes():
    """Seed 001 (A. Sharkey, "MQ for z/OS: Impact of key-size on AMS performance"): "For the
    smaller key-sizes, including ... RSA of 2048-bits, the performance is better than the
    comparable key-size for NISTECC" (comparable: rows s001_equiv_nistecc192_rsa and
    s001_equiv_nistecc224_rsa), and NISTECC 521 beats RSA 4096 (row s001_tput_ecc521_vs_rsa4096).
    Integrity at 2 KB on the measured configuration, the figures' own conditions."""
    def rate(kt, bits):
        return float(ams_throughput("integrity", kt, bits, 2.0))
    assert rate("RSA", 1024) > rate("NISTECC", 192)
    assert rate("RSA", 2048) > rate("NISTECC", 224)
    assert rate("NISTECC", 521) > rate("RSA", 4096)
    # whole 64-bit words: a 224-bit curve costs what a 256-bit one does
    assert rate("NISTECC", 224) == pytest.approx(rate("NISTECC", 256), rel=1e-12)


@pytest.mark.parametrize("policy", ["integrity", "privacy", "confidentiality"])
def test_z16_large_message_throughput_rows_are_predictions(policy):
    """The z16 report's "throughput of large messages: +44.9 / +40.5 / +46.9%" (z15 with CEX7S to
    z16 with CEX8S) scored as a prediction (issue 62: they were 'unmodelled' while the model, which
    runs z16 on z15's AMS CPU factors, predicts 0.0%): the model's change at 4MB, one requester,
    RSA 2048 (the row gives no key or size; 'large' read as 4MB, as the z15 report's), against the
    row's accepted interval; a row outside it is listed in data/misses.csv with its reason, and a
    listed row is outside."""
    from cryptoplan.model.calibration.fit import known_misses
    fid = f"ref_z16_vs_z15_tput_large_{policy}"
    z15 = ams_throughput(policy, "RSA", 2048, 4096.0, platform="z15", card_generation="CEX7S")
    z16 = ams_throughput(policy, "RSA", 2048, 4096.0, platform="z16", card_generation="CEX8S")
    change = 100.0 * (float(z16) / float(z15) - 1.0)
    lo, hi = figure(fid).bounds()
    assert (lo <= change <= hi) == (fid not in known_misses()), (fid, change, lo, hi)
