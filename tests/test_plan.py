"""The whole system in one plan (model/zos/plan.py).

Expected values come from:

* the single-workload functions (``ams_plan``, ``handshake_card_utilization``,
  ``channel_start_card_utilization``, ``channel_start_cost_us``, ``tls_cost_us``): a plan
  of one workload must give exactly their answers (rtol 1e-12: the same floating-point
  operations in another order);
* arithmetic written out here: utilizations of workloads on one pool add; with one
  growth rate g for every workload the months to a target are 12 ln(x) / ln(1 + g) for a
  headroom x; the counts required at the horizon are the counts of the plan evaluated at
  that month;
* seed 001's RMF example (A. Sharkey, "MQ for z/OS: Impact of key-size on Advanced Message
  Security performance", 2024; rows ``s001_rmf_*`` of data/figures.csv, each quoted there);
* a Ciw simulation of the pooled multiclass FCFS queue (slow tier).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.zos.ams import RMF_EXAMPLE, ams_plan
from cryptoplan.model.figures import figure
from cryptoplan.model.zos.plan import (KIND_ARGUMENTS, MAX_MONTHS, PlanError, System, Workload,
                                   handshake_baseline_cpu_us, plan, plan_from_dict)
from cryptoplan.model.zos.tls import (channel_start_card_utilization, channel_start_cost_us, handshake_card_utilization,
                                  handshake_cpu_factor, tls_cost_us)

EXACT = 1e-12      # same operations, another order


@pytest.fixture(autouse=True)
def _default_params(monkeypatch):
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)


def ams(name, rate, **args):
    return Workload(name, "ams", rate, args=args)


# ----------------------------------------------------------------- one workload alone
AMS_CASES = [
    dict(policy="privacy", key_type="RSA", key_size=2048, message_kb=2.0),
    dict(policy="integrity", key_type="RSA", key_size=4096, message_kb=64.0),
    dict(policy="integrity", key_type="NISTECC", key_size=521, message_kb=2.0),
    dict(policy="confidentiality", key_type="RSA", key_size=1024, message_kb=4096.0, key_reuse=32),
    dict(policy="privacy", key_type="RSA", key_size=3072, message_kb=2.0, recipients=3),
]


@pytest.mark.parametrize("case", AMS_CASES)
@pytest.mark.parametrize("system", [dict(processors=3, coprocessors=2, accelerators=1),
                                    dict(processors=16, coprocessors=4, accelerators=3, platform="z15",
                                         card_generation="CEX6S", other_coprocessor_util=0.2,
                                         other_accelerator_util=0.1, max_utilization=0.6)])
def test_one_ams_workload_is_ams_plan(case, system):
    rate = 150.0
    s = System(**system)
    r = plan(s, [ams("a", rate, **case)])
    a = ams_plan(rate, case["policy"], case["key_type"], case["key_size"], case["message_kb"], case.get("key_reuse"),
                 case.get("recipients", 1), processors=s.processors, coprocessors=s.coprocessors,
                 accelerators=s.accelerators, platform=s.platform, other_coprocessor_util=s.other_coprocessor_util,
                 other_accelerator_util=s.other_accelerator_util, max_utilization=s.max_utilization,
                 card_generation=s.card_generation)
    for pool, one in (("processors", "processor"), ("coprocessors", "coprocessor"), ("accelerators", "accelerator")):
        res = r.resources[pool]
        assert_allclose(res.utilization, getattr(a, f"{one}_utilization"), rtol=EXACT)
        assert res.required == getattr(a, f"{pool}_required")
    assert_allclose(r.resources["processors"].busy, a.processors_busy, rtol=EXACT)
    acc, cop = r.resources["accelerators"], r.resources["coprocessors"]
    assert_allclose(acc.rows["ME"], a.accelerator_me_utilization, rtol=EXACT, atol=1e-300)
    assert_allclose(acc.rows["CRT"], a.accelerator_crt_utilization, rtol=EXACT, atol=1e-300)
    assert_allclose([cop.exec_ms, acc.exec_ms], [a.coprocessor_exec_ms, a.accelerator_exec_ms], rtol=EXACT)
    assert_allclose([cop.scv, acc.scv], [a.coprocessor_scv, a.accelerator_scv], rtol=1e-9, atol=1e-12)
    assert_allclose([cop.rate, acc.rate], [a.coprocessor_rate, a.accelerator_me_rate + a.accelerator_crt_rate],
                    rtol=EXACT)
    w = r.workloads["a"]
    for space in ("total", "application", "AMSM", "MSTR"):
        assert_allclose(w.cpu_us[space], a.cost_us[space], rtol=EXACT)
    # the plan's queueing per transaction is ams_plan's three waits (cards' per request x requests)
    assert_allclose(w.queueing_ms, a.processor_wait_ms + a.coprocessor_wait_ms + a.accelerator_wait_ms, rtol=1e-9)
    assert r.bottleneck == a.bottleneck


@pytest.mark.parametrize("cipher", ["TLS_RSA_WITH_AES_256_CBC_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                                    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"])
@pytest.mark.parametrize("share", [0.0, 0.7])
def test_one_handshake_workload_is_handshake_card_utilization(cipher, share):
    s = System(processors=4, coprocessors=3, accelerators=2, other_coprocessor_util=0.1, other_accelerator_util=0.05)
    r = plan(s, [Workload("tls", "handshakes", 400.0, args={"cipher": cipher, "resumed_share": share})])
    for pool, card in (("coprocessors", "coprocessor"), ("accelerators", "accelerator")):
        u = handshake_card_utilization(400.0, cipher, card, s.installed(pool), share, s.other(pool))
        assert_allclose(r.resources[pool].utilization, u, rtol=EXACT)
    # CPU: the baseline handshake times the cipher's factors, full and resumed mixed by the share
    kx = "RSA" if cipher.startswith("TLS_RSA") else "ECDHE"
    kw = dict(key_exchange=kx, certificate="ECDSA" if "ECDSA" in cipher else "RSA",
              protocol="TLS1.3" if cipher == "TLS_AES_256_GCM_SHA384" else "TLS1.2")
    want = handshake_baseline_cpu_us() * ((1 - share) * handshake_cpu_factor(**kw)
                                          + share * handshake_cpu_factor(resumption=True, **kw))
    assert_allclose(r.workloads["tls"].cpu_us["TCPIP"], want, rtol=EXACT)


def test_handshake_baseline_is_the_attls_start_less_the_unsecured_one():
    # (210 - 30) µs of TCPIP per AT-TLS TLS_RSA start, over the RSA key exchange's factor 1/1.26
    tcp = figure("s002_start_cost_tcpip_attls_tls12_us").target() - figure("s002_start_cost_tcpip_none_us").target()
    assert_allclose(handshake_baseline_cpu_us(), tcp * (1 + figure("s003_ecdhe_vs_rsa_kx_cost").target() / 100),
                    rtol=EXACT)


@pytest.mark.parametrize("cipher", ["TLS_RSA_WITH_AES_256_CBC_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
                                    "TLS_AES_128_GCM_SHA256"])
def test_one_channel_start_workload_is_the_channel_start_functions(cipher):
    s = System(processors=3, coprocessors=2, accelerators=1, platform="z16")
    r = plan(s, [Workload("storm", "channel_starts", 120.0, args={"cipher": cipher})])
    for pool, card in (("coprocessors", "coprocessor"), ("accelerators", "accelerator")):
        u = channel_start_card_utilization(120.0, cipher, card, s.installed(pool))
        assert_allclose(r.resources[pool].utilization, u, rtol=EXACT)
    cpu = channel_start_cost_us("SSLCIPH", cipher, "total", "z16")
    assert_allclose(r.workloads["storm"].cpu_us["total"], cpu, rtol=EXACT)
    assert_allclose(r.resources["processors"].utilization, 120.0 * cpu / 1e6 / 3, rtol=EXACT)


@pytest.mark.parametrize("mode,cipher", [("none", None), ("SSLCIPH", "TLS_RSA_WITH_AES_256_CBC_SHA256"),
                                         ("ATTLS", "TLS_AES_256_GCM_SHA384"),
                                         ("SSLCIPH", "TLS_CHACHA20_POLY1305_SHA256")])
@pytest.mark.parametrize("ends,flow,share", [("both", "request_reply", 1.0), ("local", "request_reply", 0.5),
                                             (None, None, 0.5), ("both", "one_way", 0.5), ("local", "one_way", 0.25)])
def test_one_channel_workload_is_tls_cost_times_rate(mode, cipher, ends, flow, share):
    # tls_cost_us is the published cost of a request/reply transaction at both queue managers'
    # ends; one end is half of it (docs/models.md: no figure splits sender and receiver), a
    # one-way message half a transaction
    s = System(processors=5, coprocessors=1, accelerators=1, platform="z15")
    args = {"mode": mode, "message_kb": 32.0, "ends": ends, "flow": flow}
    if cipher:
        args["cipher"] = cipher
    r = plan(s, [Workload("ch", "channel", 3000.0, args=args)])
    total = share * tls_cost_us(mode, cipher or "NULL_SHA", 32.0, "total", 0, "z15")
    assert_allclose(r.workloads["ch"].cpu_us["total"], total, rtol=EXACT)
    assert_allclose(r.resources["processors"].busy, 3000.0 * total / 1e6, rtol=EXACT)
    assert r.resources["coprocessors"].utilization == 0.0 and r.resources["accelerators"].utilization == 0.0
    assert r.workloads["ch"].unit == ("messages/s" if flow == "one_way" else "transactions/s")


# ----------------------------------------------------------------- together
WORKLOADS = [
    ams("pay", 300.0, policy="privacy", message_kb=2.0),
    ams("stmt", 200.0, policy="integrity", key_size=4096, message_kb=64.0),
    Workload("ch", "channel", 2000.0, args={"mode": "ATTLS", "cipher": "TLS_AES_256_GCM_SHA384", "message_kb": 2.0}),
    Workload("web", "handshakes", 100.0, args={"cipher": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                                               "resumed_share": 0.5}),
    Workload("storm", "channel_starts", 40.0, args={"cipher": "TLS_RSA_WITH_AES_256_CBC_SHA256"}),
    Workload("rmf", "measured", 200.0, args={"card": "coprocessor", "exec_ms": 0.6}),
]
SYSTEM = System(processors=8, coprocessors=4, accelerators=2, other_coprocessor_util=0.05,
                other_accelerator_util=0.1)


def test_utilizations_add_and_shares_sum():
    together = plan(SYSTEM, WORKLOADS)
    for pool in ("processors", "coprocessors", "accelerators"):
        res = together.resources[pool]
        other = SYSTEM.other(pool)
        alone = [plan(SYSTEM, [w]).resources[pool] for w in WORKLOADS]
        # each alone counts the fixed part (other LPARs; MSTR administration once per queue manager)
        own = [a.utilization - a.other for a in alone]
        assert_allclose(res.utilization - res.other, sum(own), rtol=1e-12)
        assert_allclose(sum(res.by_workload.values()) + res.other, res.utilization, rtol=1e-12)
        assert_allclose([res.by_workload[w.name] for w in WORKLOADS], own, rtol=1e-12, atol=1e-18)
        if pool == "accelerators":      # RMF's ME and CRT rows: each workload's part adds up to the row
            for row in ("ME", "CRT"):
                assert_allclose(sum(res.row_shares[row].values()), res.rows[row], rtol=1e-12)
                assert_allclose([res.row_shares[row][w.name] for w in WORKLOADS],
                                [a.rows[row] for a in alone], rtol=1e-12, atol=1e-300)
        assert_allclose(res.other - (other if pool != "processors" else 0.0),
                        max(a.other for a in alone) - (other if pool != "processors" else 0.0), rtol=1e-12)


def test_the_pooled_wait_is_one_per_request_and_grows_with_company():
    alone = plan(SYSTEM, [WORKLOADS[0]])
    together = plan(SYSTEM, WORKLOADS)
    for pool in ("coprocessors", "accelerators"):
        assert together.resources[pool].wait_ms > alone.resources[pool].wait_ms
    # a workload's delay: the processor wait plus its requests x each pool's wait per request
    w = together.workloads["pay"]
    want = together.resources["processors"].wait_ms + sum(
        w.requests[p] * together.resources[p].wait_ms for p in ("coprocessors", "accelerators"))
    assert_allclose(w.queueing_ms, want, rtol=1e-12)


def test_mstr_administration_is_counted_once_per_queue_manager():
    one_qm = plan(SYSTEM, WORKLOADS[:2])
    two_qm = plan(SYSTEM, [WORKLOADS[0], ams("stmt", 200.0, policy="integrity", key_size=4096, message_kb=64.0,
                                              queue_manager="QM2")])
    alone = [plan(SYSTEM, [w]) for w in WORKLOADS[:2]]
    admin = [a.resources["processors"].other for a in alone]
    assert_allclose(one_qm.resources["processors"].other, max(admin), rtol=EXACT)
    assert_allclose(two_qm.resources["processors"].other, sum(admin), rtol=EXACT)
    # spread over the queue manager's AMS rate
    total = sum(one_qm.workloads[n].rate for n in ("pay", "stmt"))
    assert_allclose(one_qm.workloads["pay"].cpu_us["MSTR"], max(admin) * SYSTEM.processors * 1e6 / total, rtol=1e-12)


def test_cpu_per_unit_holds_mstr_and_the_processors_share_does_not_as_the_report_says():
    """Issue 63, finding 7: "CPU µs/unit" held an AMS workload's share of MQ MSTR administration
    and its processors column did not (rate x column / CPs = 6.08% where the table printed 5.71%),
    and nothing said so.  The report says it; here the two are reconciled: a flat day's
    processors share times the CPs is the rate times the CPU per unit less its MSTR share, and the
    MSTR administration is the processors' other load, counted once."""
    from cryptoplan.workbook.report.plan import plan_text
    r = plan(SYSTEM, WORKLOADS[:2])
    for name in ("pay", "stmt"):
        w = r.workloads[name]
        own = float(w.cpu_us["total"]) - float(w.cpu_us["MSTR"])
        assert_allclose(r.resources["processors"].by_workload[name] * SYSTEM.processors, w.rate * own / 1e6,
                        rtol=1e-12)
    assert "CPU µs/unit includes an AMS workload's share of its queue manager's MSTR administration" in plan_text(r)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 400.0)), min_size=6, max_size=6), st.floats(0.05, 3.0))
def test_vectorized_growth_equals_scalar_plans(rates, growth):
    ws = [Workload(w.name, w.kind, r, w.growth_per_year, w.args) for w, r in zip(WORKLOADS, rates)]
    g = np.array([0.5, growth, 1.0])
    vec = plan(SYSTEM, ws, growth=g)
    for j, gj in enumerate(g):
        one = plan(SYSTEM, ws, growth=float(gj))
        for pool in ("processors", "coprocessors", "accelerators"):
            a, b = vec.resources[pool], one.resources[pool]
            assert_allclose(np.asarray(a.utilization)[j], b.utilization, rtol=1e-12)
            assert np.asarray(a.required)[j] == b.required
            assert np.asarray(a.status)[j] == b.status
            if not b.overloaded:
                assert_allclose(np.asarray(a.wait_ms)[j], b.wait_ms, rtol=1e-12)


def test_a_rate_too_small_for_the_administration_is_named():
    # MSTR's administration per second spread over 1e-310 transactions/s is no float
    with pytest.raises(PlanError, match="queue manager QM1.*too small"):
        plan(SYSTEM, [ams("pay", 1e-310, policy="privacy", message_kb=2)])


# ----------------------------------------------------------------- growth
@pytest.mark.parametrize("g", [0.05, 0.3, 1.5])
def test_months_to_target_with_one_growth_rate_is_closed_form(g):
    ws = [Workload(w.name, w.kind, w.rate, g, w.args) for w in WORKLOADS]
    r = plan(SYSTEM, ws)
    for pool in ("coprocessors", "accelerators"):
        res = r.resources[pool]
        x = res.headroom     # every rate times x reaches the target; (1+g)^(t/12) = x
        want = 12 * math.log(x) / math.log1p(g) if x > 1 else 0.0
        assert_allclose(res.months_to_target, want if want <= MAX_MONTHS else math.inf, rtol=1e-9)
        if 0 < want < MAX_MONTHS:
            at = plan(SYSTEM, ws, months=res.months_to_target).resources[pool]
            assert_allclose(at.utilization, SYSTEM.max_utilization, rtol=1e-9)


def test_months_to_target_with_mixed_growth_solves_the_crossing():
    ws = [Workload(w.name, w.kind, w.rate, g, w.args) for w, g in zip(WORKLOADS, [0.5, -0.2, 0.1, 0.0, 0.3, 0.2])]
    r = plan(SYSTEM, ws)
    for pool in ("processors", "coprocessors", "accelerators"):
        t = r.resources[pool].months_to_target
        assert 0 < t < MAX_MONTHS
        before = plan(SYSTEM, ws, months=t * (1 - 1e-6)).resources[pool].utilization
        after = plan(SYSTEM, ws, months=t).resources[pool].utilization
        assert before < SYSTEM.max_utilization <= after * (1 + 1e-12)


def test_required_at_horizon_is_the_plan_at_the_horizon():
    ws = [Workload(w.name, w.kind, w.rate, 0.8, w.args) for w in WORKLOADS]
    s = System(processors=8, coprocessors=4, accelerators=2, horizon_months=30)
    now, later = plan(s, ws), plan(s, ws, months=30)
    for pool in ("processors", "coprocessors", "accelerators"):
        assert now.resources[pool].required_at_horizon == later.resources[pool].required
    assert now.resources["accelerators"].required_at_horizon > now.resources["accelerators"].required


def test_no_growth_never_reaches_the_target():
    r = plan(SYSTEM, WORKLOADS)
    assert all(math.isinf(r.resources[p].months_to_target) for p in ("processors", "coprocessors", "accelerators"))
    assert r.to_dict()["resources"]["coprocessors"]["months_to_target"] is None


# ----------------------------------------------------------------- overload: numbers, not errors
def test_an_overloaded_plan_gives_counts_and_says_by_how_much():
    s = System(processors=3, coprocessors=2, accelerators=1)
    r = plan(s, [ams("privacy", 1500.0, policy="privacy", message_kb=2.0)])
    acc = r.resources["accelerators"]
    assert acc.overloaded and acc.utilization > 1.0 and math.isnan(acc.wait_ms)
    assert f"{acc.utilization:.0%} busy" in acc.status and "overloaded" in acc.status
    assert f"{acc.required:.0f} needed" in acc.status
    assert math.isnan(r.workloads["privacy"].queueing_ms)
    # the count it names carries the rate within the target
    fixed = plan(System(processors=3, coprocessors=2, accelerators=int(acc.required)),
                 [ams("privacy", 1500.0, policy="privacy", message_kb=2.0)])
    assert fixed.resources["accelerators"].utilization <= s.max_utilization
    d = r.to_dict()["resources"]["accelerators"]
    assert d["wait_ms"] is None and d["overloaded"] is True and "overloaded" in d["status"]


def test_a_pool_with_no_cards_that_gets_work_is_named():
    r = plan(System(processors=3, coprocessors=0, accelerators=1), [ams("p", 10.0, policy="privacy", message_kb=2)])
    cop = r.resources["coprocessors"]
    assert cop.overloaded and "none installed" in cop.status and cop.required == 1
    idle = plan(System(processors=3, coprocessors=0, accelerators=1),
                [Workload("ch", "channel", 10.0, args={"mode": "none", "cipher": "NULL_SHA", "message_kb": 2})])
    assert idle.resources["coprocessors"].utilization == 0.0 and not idle.resources["coprocessors"].overloaded


def test_a_one_way_flow_is_half_a_request_reply_transaction_per_message():
    # each message is put (protected) once and got (unprotected) once: 2m one-way messages/s put the
    # card requests and CPU of m request/reply transactions/s on every station
    rr = plan(SYSTEM, [ams("a", 150.0, policy="privacy", message_kb=2)])
    ow = plan(SYSTEM, [ams("a", 300.0, policy="privacy", message_kb=2, flow="one_way")])
    for pool in ("processors", "coprocessors", "accelerators"):
        assert_allclose(ow.resources[pool].utilization, rr.resources[pool].utilization, rtol=1e-12)
    for pool in ("coprocessors", "accelerators"):      # the same requests: the same wait per request
        assert_allclose(ow.resources[pool].wait_ms, rr.resources[pool].wait_ms, rtol=1e-12)
    # the processors' jobs are messages, half a transaction's CPU each: at the same utilization the
    # M/M/c wait scales with the service time
    assert_allclose(ow.resources["processors"].wait_ms, rr.resources["processors"].wait_ms / 2, rtol=1e-9)
    assert ow.workloads["a"].unit == "messages/s"
    assert_allclose(ow.workloads["a"].cpu_us["total"], rr.workloads["a"].cpu_us["total"] / 2, rtol=1e-12)
    assert_allclose(ow.workloads["a"].queueing_ms - ow.resources["processors"].wait_ms,
                    (rr.workloads["a"].queueing_ms - rr.resources["processors"].wait_ms) / 2, rtol=1e-12)
    with pytest.raises(PlanError, match="flow must be one of request_reply, one_way"):
        plan(SYSTEM, [ams("a", 1.0, policy="privacy", message_kb=2, flow="both")])


# ----------------------------------------------------------------- a wait target
@pytest.mark.parametrize("target", [0.5, 0.05, 0.005])
def test_counts_required_meet_the_wait_target_and_no_fewer_do(target):
    """With max_wait_ms the counts required are the fewest whose pooled wait per request is at
    most the target (and that meet the utilization target): checked by planning with that many
    cards installed, and with one fewer."""
    s = System(processors=8, coprocessors=4, accelerators=2, other_coprocessor_util=0.05,
               other_accelerator_util=0.1, max_wait_ms=target)
    r = plan(s, WORKLOADS)
    plain = plan(System(**{**s.__dict__, "max_wait_ms": None}), WORKLOADS)
    for pool in ("coprocessors", "accelerators"):
        k = r.resources[pool].required
        assert k >= plain.resources[pool].required
        at = plan(System(**{**s.__dict__, pool: int(k)}), WORKLOADS).resources[pool]
        assert at.wait_ms <= target and at.utilization <= s.max_utilization
        if k > plain.resources[pool].required:
            fewer = plan(System(**{**s.__dict__, pool: int(k) - 1}), WORKLOADS).resources[pool]
            assert fewer.wait_ms > target


def test_the_wait_target_applies_at_the_horizon_too():
    ws = [Workload(w.name, w.kind, w.rate, 0.5, w.args) for w in WORKLOADS]
    s = System(processors=8, coprocessors=4, accelerators=2, max_wait_ms=0.01, horizon_months=24)
    now, later = plan(s, ws), plan(s, ws, months=24)
    for pool in ("coprocessors", "accelerators"):
        assert now.resources[pool].required_at_horizon == later.resources[pool].required
    g = np.array([0.5, 1.0, 2.0])
    vec = plan(s, ws, growth=g)
    for j, gj in enumerate(g):
        assert np.asarray(vec.resources["accelerators"].required)[j] == plan(s, ws, growth=gj).resources[
            "accelerators"].required


# ----------------------------------------------------------------- measured load
def test_measured_utilization_adds_as_rmf_reads_it():
    s = System(processors=4, coprocessors=2, accelerators=1)
    base = plan(s, [WORKLOADS[0]])
    more = plan(s, [WORKLOADS[0], Workload("other-appl", "measured", None, 0.1,
                                           {"card": "coprocessors", "utilization": 0.12})])
    assert_allclose(more.resources["coprocessors"].utilization, base.resources["coprocessors"].utilization + 0.12,
                    rtol=EXACT)
    cpu = plan(s, [WORKLOADS[0], Workload("batch", "measured", None, args={"card": "processors",
                                                                          "utilization": 0.25})])
    assert_allclose(cpu.resources["processors"].utilization, base.resources["processors"].utilization + 0.25,
                    rtol=EXACT)


# ----------------------------------------------------------------- seed 001's RMF example as a plan
def test_seed_001_rmf_example_as_a_plan():
    """The RMF Crypto Hardware Activity extract: privacy, RSA 2048, 2 coprocessors, 1 accelerator.

    The rate is the one that sends the report's 2706 ME requests/s (8 per transaction): an input,
    so the ME rate is an echo; the CRT rate, the utilizations and the EXEC TIMEs are predictions.
    The coprocessor's 21% / 0.596 ms were a known miss (16.3% at 0.48 ms) until the coprocessor's
    RSA sign got its fixed part (model/zos/crypto.py).
    """
    ex = RMF_EXAMPLE
    me_rate = figure("s001_rmf_me2048_rate").target()
    s = System(processors=3, coprocessors=ex["coprocessors"], accelerators=ex["accelerators"])
    r = plan(s, [ams("rmf-example", me_rate / 8, policy=ex["policy"], key_type=ex["key_type"],
                     key_size=ex["key_size"], message_kb=ex["message_kb"], recipients=ex["recipients"])])
    acc, cop = r.resources["accelerators"], r.resources["coprocessors"]
    side_by_side = {   # id: (report, plan)
        "s001_rmf_me2048_rate": (me_rate, acc.row_rates["ME"]),
        "s001_rmf_crt2048_rate": (figure("s001_rmf_crt2048_rate").target(), acc.row_rates["CRT"]),
        "s001_rmf_me2048_exec_ms": (figure("s001_rmf_me2048_exec_ms").target(),
                                    acc.rows["ME"] / acc.row_rates["ME"] * 1000),
        "s001_rmf_crt2048_exec_ms": (figure("s001_rmf_crt2048_exec_ms").target(),
                                     acc.rows["CRT"] / acc.row_rates["CRT"] * 1000),
        "s001_rmf_accel_total_rate": (figure("s001_rmf_accel_total_rate").target(), acc.rate),
        "s001_rmf_cex8a_util": (figure("s001_rmf_cex8a_util").target() / 100, acc.utilization),
        "s001_rmf_cex8a_exec_ms": (figure("s001_rmf_cex8a_exec_ms").target(), acc.exec_ms),
        "s001_rmf_cex8c_util": (figure("s001_rmf_cex8c_util").target() / 100, cop.utilization),
        "s001_rmf_cex8c_exec_ms": (figure("s001_rmf_cex8c_exec_ms").target(), cop.exec_ms),
    }
    for fid, (report, model) in side_by_side.items():
        tol = figure(fid).tolerance
        assert abs(model / report - 1) <= tol, f"{fid}: report {report:.4g}, plan {model:.4g} (tolerance {tol:.2%})"


def test_seed_001_rmf_report_as_a_calibrated_plan(tmp_path):
    """The planner's path: calibrate on the report's lines, then plan the AMS workload and what
    the AMS model does not explain as a ``measured`` workload, and read the report back.

    Inputs taken from the report (echoes): the card times (calibrated on its lines), the rate
    (its ME requests / 8) and the coprocessor requests the AMS workload does not send (its 704.6/s
    less the AMS workload's).  Predictions checked against it: the CRT rate, the accelerator's
    utilization and mean EXEC TIME, the coprocessors' utilization and mean EXEC TIME, each within
    the row's tolerance.
    """
    from cryptoplan.model.calibration.calibrate import calibrate, read_rmf_crypto, rmf_observations
    from cryptoplan.model.params import Parameters, using_parameters
    f = lambda fid: figure(fid).target()                                    # noqa: E731
    cop_rate = 2 * f("s001_rmf_cex8c_util") / 100 / (f("s001_rmf_cex8c_exec_ms") / 1000)   # both cards
    lines = ["TYPE,ID,FUNCTION,KEY,RATE,EXEC TIME,UTIL%",
             f"CEX8C,01,TOTAL,,{cop_rate / 2:.1f},{f('s001_rmf_cex8c_exec_ms')},{f('s001_rmf_cex8c_util')}",
             f"CEX8C,02,TOTAL,,{cop_rate / 2:.1f},{f('s001_rmf_cex8c_exec_ms')},{f('s001_rmf_cex8c_util')}",
             f"CEX8A,03,TOTAL,,{f('s001_rmf_accel_total_rate')},{f('s001_rmf_cex8a_exec_ms')},{f('s001_rmf_cex8a_util')}",
             f"CEX8A,03,ME,2048,{f('s001_rmf_me2048_rate')},{f('s001_rmf_me2048_exec_ms')},12.4",
             f"CEX8A,03,CRT,2048,{f('s001_rmf_crt2048_rate')},{f('s001_rmf_crt2048_exec_ms')},34.3"]
    path = tmp_path / "rmf.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = read_rmf_crypto(path)
    site = Parameters.from_document(calibrate(rmf_observations(rows, path=str(path)), rows).document())
    ex = RMF_EXAMPLE
    s = System(processors=3, coprocessors=ex["coprocessors"], accelerators=ex["accelerators"])
    pay = ams("rmf-example", f("s001_rmf_me2048_rate") / 8, policy=ex["policy"], key_type=ex["key_type"],
              key_size=ex["key_size"], message_kb=ex["message_kb"], recipients=ex["recipients"])
    with using_parameters(site):
        alone = plan(s, [pay])
        rest = cop_rate - alone.resources["coprocessors"].rate     # requests/s the AMS model does not send
        assert 0 < rest < 0.1 * cop_rate                            # a small remainder: 28 of 705 per second
        r = plan(s, [pay, Workload("unattributed", "measured", rest,
                                   args={"card": "coprocessors", "exec_ms": f("s001_rmf_cex8c_exec_ms")})])
    acc, cop = r.resources["accelerators"], r.resources["coprocessors"]
    side_by_side = {
        "s001_rmf_crt2048_rate": acc.row_rates["CRT"], "s001_rmf_cex8a_exec_ms": acc.exec_ms,
        "s001_rmf_cex8c_util": 100 * cop.utilization, "s001_rmf_cex8c_exec_ms": cop.exec_ms}
    for fid, model in side_by_side.items():
        assert abs(model / f(fid) - 1) <= figure(fid).tolerance, (fid, f(fid), model)
    # the accelerator's summary: the report's own lines disagree by 0.1 point (46.6% printed, its ME and
    # CRT rows 12.4% + 34.3% = 46.7%, RATE x EXEC TIME 46.67%); the plan's 46.75% is held to 0.2 point
    assert abs(100 * acc.utilization - f("s001_rmf_cex8a_util")) <= 0.2


# ----------------------------------------------------------------- plan documents
GOOD = {"system": {"processors": 4, "coprocessors": 2, "accelerators": 1},
        "workload": [{"name": "pay", "kind": "ams", "rate": 100, "policy": "privacy", "message_kb": 2}]}


def _doc(**changes):
    import copy
    d = copy.deepcopy(GOOD)
    for path, v in changes.items():
        table, _, key = path.partition("__")
        target = d["system"] if table == "system" else d["workload"][0]
        if v is None:
            target.pop(key)
        else:
            target[key] = v
    return d


@pytest.mark.parametrize("changes,words", [
    (dict(workload__polcy="privacy"), ["plan.toml", "'pay'", "unknown key 'polcy'", "policy"]),
    (dict(workload__policy="secret"), ["plan.toml", "'pay'", "policy", "secret"]),
    (dict(workload__rate=-5), ["plan.toml", "'pay'", "rate", "-5", "[0, 1e+12]"]),
    (dict(workload__rate=None), ["'pay'", "rate is required", "transactions/s"]),
    (dict(workload__kind="batch"), ["'pay'", "kind", "batch", "ams"]),
    (dict(workload__platform="z16"), ["'pay'", "platform", "set it in the system"]),
    (dict(system__coprocessors=65), ["system", "coprocessors", "65", "[0, 64]"]),
    (dict(system__processors=None), ["system", "processors is required"]),
    (dict(system__cards=3), ["system", "unknown key 'cards'", "accelerators"]),
    (dict(system__max_utilization=1.0), ["max_utilization", "(0, 1)"]),
    (dict(workload__key_reuse=32), ["'pay'", "key_reuse", "confidentiality"]),
    (dict(workload__growth_per_year=-1), ["growth_per_year", "-1"]),
])
def test_a_bad_plan_document_names_the_file_workload_key_and_value(changes, words):
    with pytest.raises(PlanError) as e:
        plan_from_dict(_doc(**changes), "plan.toml")
    for w in words:
        assert w in str(e.value), str(e.value)


def test_every_kind_takes_exactly_its_documented_keys():
    s = System(processors=4, coprocessors=2, accelerators=1)
    for kind, keys in KIND_ARGUMENTS.items():
        with pytest.raises(PlanError, match="unknown key 'nonsense'"):
            Workload("w", kind, 1.0, args={"nonsense": 1})
        assert set(keys) >= {k for k, v in keys.items() if v is not None}
    assert plan(s, [Workload("m", "measured", 5.0, args={"card": "accelerator", "exec_ms": 0.2})]).resources[
        "accelerators"].utilization == pytest.approx(5.0 * 0.2 / 1000)


def test_duplicate_names_and_empty_plans_are_refused():
    with pytest.raises(PlanError, match="used twice"):
        plan(SYSTEM, [WORKLOADS[0], WORKLOADS[0]])
    with pytest.raises(PlanError, match="at least one workload"):
        plan(SYSTEM, [])
    with pytest.raises(PlanError, match="workload"):
        plan_from_dict({"system": GOOD["system"], "workload": []}, "x.toml")


# ----------------------------------------------------------------- the pooled wait against a simulation
def _ciw_pool_wait(classes, servers, seed, until_ms=25_000.0, warm_ms=2_000.0):
    """Mean wait in queue (ms) of a multiclass FCFS M/D/c pool simulated by Ciw: one Poisson
    stream and one constant service time per (workload, card function) class."""
    import ciw
    ciw.seed(seed)
    net = ciw.create_network(
        arrival_distributions={f"C{i}": [ciw.dists.Exponential(rate=lam)] for i, (lam, _) in enumerate(classes)},
        service_distributions={f"C{i}": [ciw.dists.Deterministic(value=t)] for i, (_, t) in enumerate(classes)},
        number_of_servers=[servers])
    sim = ciw.Simulation(net)
    sim.simulate_until_max_time(until_ms)
    return float(np.mean([r.waiting_time for r in sim.get_all_records() if r.arrival_date > warm_ms]))


@pytest.mark.slow
# 31 s alone (90985a6), 53 s alone and 173 s beside the suite in a clean-clone CI on 2026-11-29, a day the
# machine ran `make test-fast` in 165-181 s (77-95 s the day before): a Ciw simulation of the pooled cards
@pytest.mark.fail_slow("360s")
def test_pooled_accelerator_wait_matches_a_multiclass_simulation():
    """Two workloads on 2 accelerators, 72% busy: AMS privacy's ME and CRT requests and TLS
    handshakes (three constant service times, SCV 1.74 mixed).  The plan's M/G/c wait per request
    (Allen-Cunneen, SCV > 1) against 4 Ciw replications of the FCFS multiclass queue: within 5%
    (the approximation; 0.9% measured with 4 runs of 200 s simulated) plus 3 standard errors."""
    from cryptoplan.model.zos.ams import AmsWorkload
    from cryptoplan.model.zos.tls import channel_start_card_ms
    s = System(processors=8, coprocessors=2, accelerators=2)
    cipher = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
    r = plan(s, [ams("pay", 900.0, policy="privacy", message_kb=2),
                 Workload("web", "handshakes", 2500.0, args={"cipher": cipher})])
    acc = r.resources["accelerators"]
    assert 0.7 < acc.utilization < 0.75 and acc.scv > 1
    req, t = AmsWorkload("privacy", "RSA", 2048, 2).card_requests()      # rows: CCA_RSA, RSA_ME, RSA_CRT, CCA_ECC
    classes = [(0.9 * req[1], t[1]), (0.9 * req[2], t[2]), (2.5, channel_start_card_ms(cipher, "accelerator"))]
    runs = np.array([_ciw_pool_wait(classes, 2, seed) for seed in range(4)])
    mean, se = runs.mean(), runs.std(ddof=1) / math.sqrt(runs.size)
    assert abs(acc.wait_ms - mean) <= 0.05 * mean + 3 * se, f"plan {acc.wait_ms:.4f} ms, simulated {mean:.4f} +- {se:.4f}"


def test_ocsp_checking_is_a_plan_workload(tmp_path):
    """Issue 63, finding 6: OCSP checking existed as a function (ocsp_cpu_us) and a planner computed
    its load by hand.  kind = "ocsp": new connections/s with the site's CPU per connection without
    OCSP; the processors carry rate x ocsp_cpu_us(connection_cpu_us) (seed 004's -20%), the cards
    nothing (the responder validates); TOML, the Workloads table and Python agree."""
    from cryptoplan.model.zos.plan import plan_from_dict
    from cryptoplan.model.zos.plan.files import plan_from_tables
    from cryptoplan.model.zos.tls import ocsp_cpu_us
    s = System(processors=4, coprocessors=2, accelerators=1, failover="none")
    w = Workload("tn3270", "ocsp", 200.0, args={"connection_cpu_us": 3000.0})
    r = plan(s, [w])
    assert_allclose(r.resources["processors"].utilization, 200.0 * ocsp_cpu_us(3000.0) / 1e6 / 4, rtol=EXACT)
    assert_allclose(ocsp_cpu_us(3000.0), 2400.0, rtol=1e-12)       # seed 004: total CPU per connection -20%
    assert r.resources["coprocessors"].by_workload["tn3270"] == 0.0 and r.workloads["tn3270"].unit == "connections/s"
    assert "checked by an OCSP responder, 3,000 µs of CPU each without it" in r.workloads["tn3270"].meaning
    ts, tw = plan_from_dict({"system": {"processors": 4, "coprocessors": 2, "accelerators": 1, "failover": "none"},
                             "workload": [{"name": "tn3270", "kind": "ocsp", "rate": 200, "connection_cpu_us": 3000}]})
    rows = [["name", "kind", "rate", "connection_cpu_us"], ["tn3270", "ocsp", 200, 3000]]
    xs, xw = plan_from_tables(rows, [["processors", 4], ["coprocessors", 2], ["accelerators", 1], ["failover", "none"]])
    for other in (plan(ts, tw), plan(xs, xw)):
        assert_allclose(other.resources["processors"].utilization, r.resources["processors"].utilization, rtol=EXACT)
    with pytest.raises(PlanError, match="connection_cpu_us is required for kind ocsp"):
        Workload("tn3270", "ocsp", 200.0)
    with pytest.raises(PlanError, match="workload 'tn3270': connection_cpu_us"):
        plan(s, [Workload("tn3270", "ocsp", 200.0, args={"connection_cpu_us": -1.0})])
