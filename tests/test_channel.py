"""MQ channel throughput over SSL tasks and dispatchers (model/zos/channel.py).

References: the published round trips (seed 002, fitted in model.tls) for one
pair and one requester; exact multi-class MVA (tests/_exact_mva.py) and exact
single-class MVA (model.mva.mva, itself checked against the Markov chain in
test_mva.py) for the queueing; the reference task statistics (rows
``ref_task_*``) and seed 002's sentences for the mechanisms.
"""

from __future__ import annotations

import pytest
from _exact_mva import dense_demands, exact_multiclass
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model import mva
from cryptoplan.model.zos.channel import _network, channel_demands_us, channel_pipeline, channel_throughput
from cryptoplan.model.figures import figure
from cryptoplan.model.zos.tls import tls_cost_parts_us, tls_cost_us, tls_roundtrip_us

CHACHA = "TLS_CHACHA20_POLY1305_SHA256"
SIZES = (2.0, 16.0, 32.0, 64.0, 1024.0)  # seed 002's round-trip columns
# Bard-Schweitzer vs exact MVA on channel networks: the worst seen over the
# grids below is 3.3% (single-class, one SSL task, 10 pairs at 2 KB), always
# an under-statement.  3.5% keeps that margin, not more.
SCHWEITZER_RTOL = 0.035


@pytest.mark.parametrize("mode", ["SSLCIPH", "ATTLS"])
@pytest.mark.parametrize("kb", SIZES)
def test_one_pair_one_requester_is_the_published_round_trip(mode, kb):
    r = channel_pipeline(mode, CHACHA, kb, channel_pairs=1, requesters=1, ssltasks=1)
    assert r["method"] == "exact"
    assert_allclose(r["throughput"], 1e6 / tls_roundtrip_us(mode, CHACHA, kb), rtol=1e-12)
    assert_allclose(r["roundtrip_us"], tls_roundtrip_us(mode, CHACHA, kb), rtol=1e-12)


@pytest.mark.parametrize("mode", ["SSLCIPH", "ATTLS"])
def test_demands_split_the_fitted_cpu(mode):
    # Both LPARs' protection CPU is 4 SSL-task visits (SSLCIPH) or 2 SRB
    # encryptions in CHIN and 2 decryptions in TCPIP (AT-TLS); the network
    # steps are the unprotected channel initiator CPU, 4 dispatcher visits.
    kb = 32.0
    d = channel_demands_us(mode, CHACHA, kb)
    none = tls_cost_parts_us("none", None, kb, "z16")
    prot = tls_cost_parts_us(mode, CHACHA, kb, "z16")
    assert_allclose(4 * d["dispatcher"], none["CHIN"], rtol=1e-12)
    if mode == "SSLCIPH":
        assert_allclose(4 * d["ssl_task"], prot["CHIN"] - none["CHIN"], rtol=1e-12)
    else:
        assert_allclose(2 * d["srb_encrypt"], prot["CHIN"] - none["CHIN"], rtol=1e-12)
        assert_allclose(2 * d["srb_decrypt"], prot["TCPIP"] - none["TCPIP"], rtol=1e-12)
    busy = 2 * (2 * d["ssl_task"] + 2 * d["dispatcher"] + d["srb_encrypt"] + d["srb_decrypt"])
    assert_allclose(busy + d["delay"], tls_roundtrip_us(mode, CHACHA, kb), rtol=1e-12)


def test_reference_task_elapsed_ratio_contradicts_the_1mb_round_trip():
    """The reference example (80 µs CPU, 364 µs elapsed per SSL-task request, of an
    unstated workload) applied to seed 002's 1 MB transaction gives SSL tasks more
    time than the whole published round trip *when the four protection steps are
    counted one after the other*, as this model does (per LPAR alone it would fit:
    it is the model's serial decomposition it contradicts, not the data)."""
    ratio = figure("ref_task_ssl_task_elapsed_us").value / figure("ref_task_ssl_task_cpu_us").value
    assert ratio > 4  # 364 / 80 = 4.55
    with pytest.raises(ValueError, match="exceeds the round trip.*task_elapsed_ratio"):
        channel_demands_us("SSLCIPH", CHACHA, 1024.0, task_elapsed_ratio=ratio)
    # ... while the CPU alone (ratio 1) fits inside it.
    assert channel_demands_us("SSLCIPH", CHACHA, 1024.0)["delay"] > 0
    # The dispatcher example (5 µs CPU, 38 µs elapsed) is no better a default.
    d_ratio = figure("ref_task_dispatcher_elapsed_us").value / figure("ref_task_dispatcher_cpu_us").value
    assert d_ratio > ratio


def _exact_channel(mode, kb, pairs, n, tasks, disps):
    dem = channel_demands_us(mode, CHACHA, kb)
    station, demand, per_lpar, _, _ = _network(mode, pairs, tasks, disps, dem)
    dense = dense_demands(station, demand, 2 * per_lpar)
    return exact_multiclass([n] * pairs, dense, [dem["delay"]] * pairs)


@pytest.mark.parametrize("mode", ["SSLCIPH", "ATTLS"])
@pytest.mark.parametrize("kb", [2.0, 32.0, 1024.0])
@pytest.mark.parametrize("pairs, n, tasks, disps", [
    (2, 1, 1, 1), (4, 1, 1, 1), (6, 1, 1, 1), (3, 2, 1, 1), (4, 2, 2, 1), (2, 4, 1, 1),
    (3, 3, 2, 2), (1, 6, 1, 1), (5, 1, 2, 3),
])
def test_against_exact_multiclass_mva(mode, kb, pairs, n, tasks, disps):
    exact = _exact_channel(mode, kb, pairs, n, tasks, disps).sum() * 1e6
    got = channel_throughput(mode, CHACHA, kb, pairs, n, tasks, disps)
    assert_allclose(got, exact, rtol=SCHWEITZER_RTOL)


@pytest.mark.parametrize("kb", [2.0, 32.0, 1024.0])
def test_against_exact_single_class_mva_up_to_60_pairs(kb):
    # One SSL task and one dispatcher per LPAR: every pair visits the same
    # stations, a single class of N customers with demands doubled (out + in).
    dem = channel_demands_us("SSLCIPH", CHACHA, kb)
    d = [2 * dem["ssl_task"], 2 * dem["ssl_task"], 2 * dem["dispatcher"], 2 * dem["dispatcher"]]
    exact = mva(60, d, think_time=dem["delay"]).throughput * 1e6
    got = [channel_throughput("SSLCIPH", CHACHA, kb, n, 1, 1, 1) for n in range(1, 61)]
    assert_allclose(got, exact, rtol=SCHWEITZER_RTOL)


def test_attls_slower_than_sslciph_for_chacha20_growing_with_size():
    """Seed 002: "with regards to the TLS 1.3 cipher TLS_CHACHA20_POLY1305_SHA256, we
    are seeing the AT-TLS throughput degrade relative to the MQ with System SSL
    configuration, particularly as the message size grows".  With one pair and one
    requester this is a consistency check of the fitted round trips carried
    through the throughput, not a test of the queueing."""
    ratio = [channel_throughput("ATTLS", CHACHA, k) / channel_throughput("SSLCIPH", CHACHA, k, ssltasks=5)
             for k in SIZES]
    assert all(r < 1 for r in ratio)
    assert all(b < a for a, b in zip(ratio, ratio[1:]))


@pytest.mark.parametrize("kb", SIZES)
def test_enough_ssl_tasks_reach_parity_few_do_not(kb):
    """Seed 002: "There are instances when MQ is able to exploit parallel processing
    when sufficient SSL tasks and dispatchers are available such that MQ can
    achieve parity or indeed higher throughput over the channels" (than AT-TLS,
    whose SRB per socket needs no task).  With a task and a dispatcher per
    channel nothing is shared, so ``many >= attls`` only carries the fitted round
    trips through; the queueing is in ``one``: a single SSL task for 50 pairs
    falls below AT-TLS."""
    pairs = 50
    attls = channel_throughput("ATTLS", CHACHA, kb, pairs, dispatchers=2 * pairs)
    many = channel_throughput("SSLCIPH", CHACHA, kb, pairs, ssltasks=2 * pairs, dispatchers=2 * pairs)
    one = channel_throughput("SSLCIPH", CHACHA, kb, pairs, ssltasks=1, dispatchers=2 * pairs)
    assert many >= attls > one


def test_attls_srb_queues_with_several_requesters():
    # The socket SRB is private to its channel, but the requesters of one pair
    # queue for it: its utilization is reported, and more requesters per pair
    # gain less than proportionally.
    one = channel_pipeline("ATTLS", CHACHA, 1024.0, channel_pairs=1, requesters=1)
    many = channel_pipeline("ATTLS", CHACHA, 1024.0, channel_pairs=1, requesters=8)
    assert one["ssl_task_utilization"] == 0.0 and 0 < one["srb_utilization"] < many["srb_utilization"] < 1
    assert many["throughput"] < 8 * one["throughput"]


def test_tasks_beyond_the_channels_are_idle():
    # Each channel is tied to one task: 10**15 SSL tasks behave as 2 per pair.
    a = channel_throughput("SSLCIPH", CHACHA, 32.0, 3, 2, 10**15, 10**3)
    b = channel_throughput("SSLCIPH", CHACHA, 32.0, 3, 2, 6, 6)
    assert a == b


def test_one_ssl_task_saturates_at_its_demand():
    # Asymptotic bound: the task serves 2 visits per transaction per LPAR.
    dem = channel_demands_us("SSLCIPH", CHACHA, 32.0)
    r = channel_pipeline("SSLCIPH", CHACHA, 32.0, channel_pairs=2000, ssltasks=1)
    cap = 1e6 / (2 * dem["ssl_task"])
    assert r["throughput"] <= cap
    assert r["throughput"] > 0.99 * cap
    assert r["ssl_task_utilization"] > 0.99


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(["SSLCIPH", "ATTLS"]), kb=st.floats(0.5, 1024.0),
       pairs=st.integers(1, 200), n=st.integers(1, 5), tasks=st.integers(1, 50), disps=st.integers(1, 50))
def test_bounds_and_monotonicity(mode, kb, pairs, n, tasks, disps):
    r = channel_pipeline(mode, CHACHA, kb, pairs, n, tasks, disps)
    x = r["throughput"]
    rt1 = tls_roundtrip_us(mode, CHACHA, kb)
    assert x <= pairs * n * 1e6 / rt1 * (1 + 1e-9)          # nobody is faster than alone
    assert r["ssl_task_utilization"] <= 1 + 1e-9 and r["dispatcher_utilization"] <= 1 + 1e-9
    assert r["roundtrip_us"] >= rt1 * (1 - 1e-9)
    # Another requester or SSL task never lowers the throughput.
    assert channel_throughput(mode, CHACHA, kb, pairs, n + 1, tasks, disps) >= x * (1 - 1e-9)
    if mode == "SSLCIPH":
        assert channel_throughput(mode, CHACHA, kb, pairs, n, tasks + 1, disps) >= x * (1 - 1e-6)


def test_cpu_check():
    r = channel_pipeline("ATTLS", CHACHA, 32.0, channel_pairs=10, cps=3)
    cost = tls_cost_us("ATTLS", CHACHA, 32.0, platform="z16")
    assert_allclose(r["cpu_utilization"], r["throughput"] * cost / 2 / 3 / 1e6, rtol=1e-12)
    assert 0 < r["cpu_utilization"] < 1
    # the issue: 500 pairs on 3 CPs raised; the CPs are a station now and cap the rate
    cap = 3 * 2 / cost * 1e6                              # cps / (CPU per transaction per LPAR)
    big = channel_pipeline("ATTLS", CHACHA, 32.0, channel_pairs=500, cps=3)
    free = channel_pipeline("ATTLS", CHACHA, 32.0, channel_pairs=500)
    assert big["throughput"] <= cap * (1 + 1e-9) and big["throughput"] < free["throughput"]
    assert big["cpu_utilization"] > 0.95 and big["cpu_utilization"] < 1
    # one pair, one requester: the published round trip, CPs or not
    assert_allclose(channel_throughput("ATTLS", CHACHA, 32.0, cps=3), channel_throughput("ATTLS", CHACHA, 32.0),
                    rtol=1e-12)
    # more CPs never lower the rate
    assert channel_throughput("ATTLS", CHACHA, 32.0, channel_pairs=500, cps=4) > big["throughput"]


def test_hardware_cipher_with_a_measured_round_trip():
    c = "TLS_AES_256_GCM_SHA384"
    r = channel_pipeline("SSLCIPH", c, 32.0, channel_pairs=1, ssltasks=1, roundtrip_us=1500.0)
    assert_allclose(r["throughput"], 1e6 / 1500.0, rtol=1e-12)
    # z14 costs more CPU per transaction: the same round trip leaves less delay.
    z14 = channel_demands_us("SSLCIPH", c, 32.0, roundtrip_us=1500.0, platform="z14")
    z15 = channel_demands_us("SSLCIPH", c, 32.0, roundtrip_us=1500.0, platform="z15")
    assert z14["ssl_task"] > z15["ssl_task"] and z14["delay"] < z15["delay"]


@pytest.mark.parametrize("kwargs, pattern", [
    (dict(mode="SSLCIPH", cipher=CHACHA, message_kb=32), "ssltasks .* is required for mode SSLCIPH"),
    (dict(mode="SSLCIPH", cipher="TLS_AES_256_GCM_SHA384", message_kb=32, ssltasks=5),
     "roundtrip_us is required.*TLS_CHACHA20_POLY1305_SHA256"),
    (dict(mode="none", cipher=None, message_kb=32), "roundtrip_us is required"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=2048), "message_kb must be in \\[0, 1024\\]"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=32, channel_pairs=5000), "channel_pairs must be in \\[1, 4999\\]"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=32, dispatchers=0), "dispatchers must be in \\[1, 9999\\]"),
    (dict(mode="SSLCIPH", cipher=CHACHA, message_kb=32, ssltasks=0), "ssltasks must be >= 1"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=32, requesters=1.5), "requesters must be a whole number"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=32, task_elapsed_ratio=0.5), "task_elapsed_ratio must be >= 1"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=32, cps=0), "cps must be > 0"),
    (dict(mode="ATTLS", cipher=CHACHA, message_kb=32, roundtrip_us=-1), "roundtrip_us must be > 0"),
    (dict(mode="bogus", cipher=CHACHA, message_kb=32), "mode must be one of none, SSLCIPH, ATTLS"),
])
def test_bad_input(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        channel_pipeline(**kwargs)


@settings(max_examples=40, deadline=None)
@given(mode=st.sampled_from(["ATTLS", "SSLCIPH"]), kb=st.sampled_from([1.0, 32.0, 1024.0]),
       pairs=st.integers(1, 6), n=st.integers(1, 4), scale=st.floats(1.1, 2.0))
def test_a_remembered_answer_is_the_computed_one_under_the_same_parameters(mode, kb, pairs, n, scale):
    """A sweep under parameter draws asks each draw's throughput again in every chunk; the
    remembered answer equals the one computed afresh (exactly), and other parameter values give
    the other parameters' answer, never the remembered one."""
    from cryptoplan.model.params import using_values
    from cryptoplan.model.zos import channel

    args = (mode, "TLS_CHACHA20_POLY1305_SHA256", kb, pairs, n, 2 if mode == "SSLCIPH" else None)
    name = "chin_task_elapsed_ratio"             # the share of the round trip the tasks take
    answers = []
    for values in ({}, {name: _parameter(name) * scale}, {}):
        with using_values(values):
            first = channel_pipeline(*args)
            again = channel_pipeline(*args)
            channel._ANSWERS.clear()
            fresh = channel_pipeline(*args)
        assert first == fresh and again == fresh
        answers.append(fresh["demands"])
        first["demands"]["delay"] = -1.0          # the caller's own copy
        with using_values(values):
            assert channel_pipeline(*args)["demands"]["delay"] == fresh["demands"]["delay"]
    assert answers[0] == answers[2] and answers[1] != answers[0]


def test_arguments_equal_in_value_but_not_in_type_are_not_one_answer():
    """True is refused where 1 is taken: a remembered answer for 1 must not answer True."""
    from cryptoplan.model.errors import CryptoplanError
    channel_pipeline("ATTLS", "TLS_CHACHA20_POLY1305_SHA256", 32.0, 1, 1)
    with pytest.raises(CryptoplanError, match="TRUE/FALSE"):
        channel_pipeline("ATTLS", "TLS_CHACHA20_POLY1305_SHA256", 32.0, True, 1)


def _parameter(name):
    from cryptoplan.model.params import current_parameters
    return current_parameters()[name]


@settings(max_examples=20, deadline=None)
@given(mode=st.sampled_from(["ATTLS", "SSLCIPH"]), pairs=st.integers(1, 6),
       scales=st.lists(st.floats(1.0, 2.0), min_size=1, max_size=5))
def test_parameter_sets_as_arrays_give_each_sets_throughput(mode, pairs, scales):
    # a sweep under draws asks the throughput of k parameter sets at once (arrays in using_values):
    # each is the throughput under that set alone, and a value given as a number holds in every set
    import numpy as np
    from cryptoplan.model.params import using_values

    args = (mode, "TLS_CHACHA20_POLY1305_SHA256", 32.0, pairs, 2, 2 if mode == "SSLCIPH" else None)
    ratio, delay = "chin_task_elapsed_ratio", "rt_attls_base_us"
    k = np.array([_parameter(ratio) * s for s in scales])
    fixed = _parameter(delay) * 1.3
    with using_values({ratio: k, delay: fixed}):
        got = channel_throughput(*args)
    assert np.shape(got) == (len(scales),)
    for j, x in enumerate(k.tolist()):
        with using_values({ratio: x, delay: fixed}):
            assert got[j] == channel_throughput(*args)

