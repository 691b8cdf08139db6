"""A quantum-safe migration in the plan (model.zos.plan.migration, issue 65).

Expected values come from another path through the model: the AMS card functions and the
quantum-safe times (:func:`cryptoplan.model.zos.quantum_safe.migrated_card_utilization`, itself
checked against the operation counts in tests/test_quantum_safe.py), evaluated at the month's rate
and share; months and purchases are substituted back into the plan.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from cryptoplan.model.zos.plan import PlanError, System, Workload, plan, plan_from_dict
from cryptoplan.model.zos.plan.migration import Migration
from cryptoplan.model.zos.quantum_safe import migrated_card_utilization, migrated_handshake_card_utilization


def _system(cops=4, accs=2, migrations=(), **kw):
    return System(processors=8, coprocessors=cops, accelerators=accs, horizon_months=36, migrations=migrations, **kw)


def _payments(rate=120.0, growth=0.2, policy="integrity", key_size=2048):
    return Workload("payments", "ams", rate, growth, args={"policy": policy, "key_type": "RSA", "key_size": key_size,
                                                          "message_kb": 2.0})


def _share(m: Migration, t: float) -> float:
    """m(t) from the issue's reading: linear from start over months, then the share (a migration of
    0 months, or one too short to move ``start`` in floating point, is all there at ``start``).  As
    the plan states it (crossing.Schedule.at), a month within 8 units in the last place of a knot
    (of max(|knot|, 1)) is the nearest such knot's."""
    near = [k for k in (m.start, m.start + m.months) if abs(t - k) <= 8 * np.spacing(max(abs(k), 1.0))]
    if near:
        t = min(near, key=lambda k: abs(t - k))      # (a tie: the first, the start)
    if m.start + m.months == m.start:
        return m.share if t >= m.start else 0.0
    if t <= m.start:
        return 0.0
    return m.share * min(1.0, (t - m.start) / m.months)


@settings(max_examples=60, deadline=None)
@given(start=st.floats(0.0, 24.0), months=st.floats(0.0, 24.0), share=st.floats(0.05, 1.0),
       t=st.floats(0.0, 48.0), rate=st.floats(10.0, 150.0), growth=st.floats(0.0, 0.5),
       policy=st.sampled_from(["integrity", "privacy"]), to=st.sampled_from(["ML-DSA-65", "ML-DSA-44", "ML-KEM-768"]))
def test_each_month_is_the_pre_migration_mix_plus_the_migrated_share_at_the_quantum_safe_times(
        start, months, share, t, rate, growth, policy, to):
    """The issue's bar, substituted back: every pool's utilization at month t equals the AMS card
    utilization of the month's rate with m(t) of it at the quantum-safe times."""
    m = Migration("payments", to, start, months, share)
    s = _system(cops=8, accs=8, migrations=(m,))
    r = plan(s, [_payments(rate, growth, policy)], months=t)
    rate_t = rate * (1.0 + growth) ** (t / 12.0)
    for pool, card in (("coprocessors", "coprocessor"), ("accelerators", "accelerator")):
        want = migrated_card_utilization(rate_t, policy, "RSA", 2048, 2.0, algorithm=to, share=_share(m, t), card=card,
                                         cards=8)
        assert_allclose(float(r.resources[pool].utilization), want, rtol=1e-9, atol=1e-15, err_msg=pool)


@settings(max_examples=40, deadline=None)
@given(start=st.floats(0.0, 24.0), months=st.floats(0.0, 24.0), share=st.floats(0.05, 1.0),
       t=st.floats(0.0, 48.0), rate=st.floats(10.0, 1500.0), growth=st.floats(0.0, 0.5), resumed=st.floats(0.0, 0.9),
       to=st.sampled_from(["ML-DSA-65", "X25519MLKEM768", "ML-DSA-87+SecP384r1MLKEM1024"]),
       cipher=st.sampled_from(["TLS_AES_256_GCM_SHA384", "ECDHE_RSA_AES_256_CBC_SHA384"]))
def test_each_month_of_a_handshake_migration_is_the_old_mix_plus_the_migrated_share(
        start, months, share, t, rate, growth, resumed, to, cipher):
    """As the AMS bar, for TLS handshakes: every card pool's utilization at month t equals the
    handshake card utilization of the month's rate with m(t) of it migrated."""
    m = Migration("web", to, start, months, share)
    s = _system(cops=8, accs=8, migrations=(m,))
    w = Workload("web", "handshakes", rate, growth, args={"cipher": cipher, "resumed_share": resumed})
    r = plan(s, [w], months=t)
    rate_t = rate * (1.0 + growth) ** (t / 12.0)
    for pool, card in (("coprocessors", "coprocessor"), ("accelerators", "accelerator")):
        want = migrated_handshake_card_utilization(rate_t, cipher, to, _share(m, t), card, 8, resumed)
        assert_allclose(float(r.resources[pool].utilization), want, rtol=1e-9, atol=1e-15, err_msg=pool)


def test_a_channel_start_migrating_keeps_its_certificates_card_work_unless_its_signature_moves():
    """Each start's card work after the migration, from the published rows (read here from
    data/figures.csv) and the assumed times: an AT-TLS start had none on the cards (seed 002's
    certificates did not use them) and gets only the quantum-safe operations; an SSLCIPH start
    migrating its key exchange alone keeps its cipher's published card time and adds one ML-KEM
    operation; one migrating its signature swaps that time for 1 ML-DSA sign and 2 verifies (the z16
    report's TLS 1.3 call counts)."""
    from test_quantum_safe import _figure
    from cryptoplan.model.zos.quantum_safe import qs_op_ms
    signs, checks = _figure("ref_start_cex_chacha_coproc_calls"), _figure("ref_start_cex_chacha_accel_calls")
    cipher_ms = {"coprocessor": _figure("ref_start_cex_tls13_coproc_ms"),
                 "accelerator": _figure("ref_start_cex_tls13_accel_ms")}
    kem = max(qs_op_ms("ML-KEM-768", "encapsulate"), qs_op_ms("ML-KEM-768", "decapsulate"))
    sig = signs * qs_op_ms("ML-DSA-65", "sign") + checks * qs_op_ms("ML-DSA-65", "verify")
    cases = {("ATTLS", "ML-DSA-65+ML-KEM-768"): {"coprocessor": sig + kem, "accelerator": 0.0},
             ("ATTLS", "X25519MLKEM768"): {"coprocessor": kem, "accelerator": 0.0},
             ("SSLCIPH", "X25519MLKEM768"): {"coprocessor": cipher_ms["coprocessor"] + kem,
                                             "accelerator": cipher_ms["accelerator"]},
             ("SSLCIPH", "ML-DSA-65"): {"coprocessor": sig, "accelerator": 0.0}}
    for (mode, to), per_start in cases.items():
        s = _system(cops=2, accs=2, migrations=(Migration("mq", to, 0, 0),))
        w = Workload("mq", "channel_starts", 50.0, args={"mode": mode, "cipher": "TLS_AES_256_GCM_SHA384"})
        r = plan(s, [w])
        for pool, card in (("coprocessors", "coprocessor"), ("accelerators", "accelerator")):
            assert_allclose(float(r.resources[pool].utilization), 50.0 * per_start[card] / 1000.0 / 2, rtol=1e-12,
                            atol=1e-15, err_msg=(mode, to, pool))
        assert r.workloads[f"mq ({to})"].rate == 50.0 and r.workloads["mq"].rate == 0.0


@settings(max_examples=25, deadline=None)
@given(start=st.floats(0.0, 24.0), months=st.floats(0.0, 24.0), rate=st.floats(60.0, 200.0),
       growth=st.floats(0.05, 0.5))
# two knots within an ulp of month 0: the month between them is the later knot's
@example(start=0.0, months=2.4909920126121606e-198, rate=60.0, growth=0.5)
def test_months_to_target_substitute_back(start, months, rate, growth):
    """Evaluating the plan at the months to its target gives the target (to the root's tolerance)."""
    m = Migration("payments", "ML-DSA-65", start, months)
    s = _system(cops=2, migrations=(m,))
    r = plan(s, [_payments(rate, growth)])
    t = float(r.resources["coprocessors"].months_to_target)
    if not np.isfinite(t) or t == 0.0:
        return
    at = float(plan(s, [_payments(rate, growth)], months=t).resources["coprocessors"].utilization)
    if months >= 1e-3:      # (a migration within a scan step is a jump: it may cross the target by a step)
        assert_allclose(at, s.max_utilization, rtol=1e-6)
    assert at >= s.max_utilization * (1 - 1e-6)
    if t > 1e-3:        # and below it a little before
        before = plan(s, [_payments(rate, growth)], months=max(t - 1e-3, 0.0))
        assert float(before.resources["coprocessors"].utilization) < s.max_utilization


def test_the_timeline_names_the_month_the_migration_forces_a_coprocessor():
    """Payments signing RSA-2048 on 2 coprocessors is within the 70% target until its signatures move
    to ML-DSA-65 (months 6 to 18); the purchase lands inside the migration, where the plan at that
    month reaches the limit that buys it."""
    m = Migration("payments", "ML-DSA-65", 6.0, 12.0)
    s = _system(cops=2, accs=2, migrations=(m,), failover="none")
    w = [_payments(rate=600.0, growth=0.0)]
    before = plan(_system(cops=2, accs=2, failover="none"), w)
    assert before.timeline == [] or all(p.resource != "coprocessors" for p in before.timeline)
    r = plan(s, w)
    buys = [p for p in r.timeline if p.resource == "coprocessors"]
    assert buys, r.timeline
    need = buys[0].install_by_month
    assert 6.0 < need < 18.0
    at = plan(s, w, months=need)
    assert_allclose(float(at.resources["coprocessors"].utilization), s.max_utilization, rtol=1e-6)
    assert "ML-DSA-65" in " ".join(r.warnings)
    assert buys[0].migration == ("the migration of payments to ML-DSA-65 (months 6 to 18); without it: not within "
                                 "the 36-month horizon")
    assert buys[0].text().endswith("brought forward by " + buys[0].migration)


@settings(max_examples=12, deadline=None)
@given(web_rate=st.floats(1e-3, 2000.0), web_start=st.floats(0.0, 20.0), growth=st.floats(0.0, 0.3))
@example(web_rate=1500.0, web_start=0.0, growth=0.1)       # one named (the web's), then both
@example(web_rate=500.0, web_start=3.0, growth=0.1)        # both named
def test_a_purchase_names_the_migrations_that_bring_it_forward_and_when_it_would_be_without_them(
        web_rate, web_start, growth):
    """Two migrations filling the coprocessors: the purchase names each one that, undone alone, moves
    it later, and its "without" month is the same count's install month in the plan without the
    named migrations (substituted: planned again without them)."""
    ms = (Migration("payments", "ML-DSA-65", 6.0, 12.0), Migration("web", "ML-DSA-87", web_start, 6.0))
    w = [_payments(rate=300.0, growth=growth),
         Workload("web", "handshakes", web_rate, growth, args={"cipher": "TLS_AES_256_GCM_SHA384"})]
    s = _system(cops=2, accs=2, migrations=ms, failover="none")
    buys = [p for p in plan(s, w).timeline if p.resource == "coprocessors"]
    for b in buys:
        if not b.migration:
            continue
        named = [m for m in ms if f" {m.workload} " in b.migration.split(";")[0] + " "]
        assert named, b.migration
        assert (b.migration.startswith("the migration of ") if len(named) == 1 else
                b.migration.startswith("the migrations of "))
        kept = tuple(m for m in ms if m not in named)
        without = [p for p in plan(_system(cops=2, accs=2, migrations=kept, failover="none"), w).timeline
                   if p.resource == "coprocessors" and p.after >= b.after]
        when = b.migration.split("without ")[1]
        if without and without[0].after == b.after and without[0].install_by_month <= s.horizon_months:
            assert when == f"{'it' if len(named) == 1 else 'them'}: month {without[0].install_by_month:.1f}"
        else:
            assert when.endswith("not within the 36-month horizon"), (when, without)
        moves = []               # which, undone alone, move the purchase later (none: only together)
        for m in ms:
            alone = tuple(x for x in ms if x is not m)
            later = [p for p in plan(_system(cops=2, accs=2, migrations=alone, failover="none"), w).timeline
                     if p.resource == "coprocessors" and p.after >= b.after]
            if not later or later[0].after > b.after or later[0].install_by_month > b.install_by_month + 0.05:
                moves.append(m)
        assert named == (moves or list(ms)), (b.migration, moves)


def test_errors_name_what_is_wrong():
    w = [_payments()]
    with pytest.raises(PlanError, match=r"card_generation CEX7S cannot run the migration of 'payments' to ML-DSA-65"):
        plan(_system(migrations=(Migration("payments", "ML-DSA-65", 0, 12),), card_generation="CEX7S"), w)
    with pytest.raises(PlanError, match=r"runs on CCA coprocessors only, and the system has none"):
        plan(_system(cops=0, migrations=(Migration("payments", "ML-DSA-65", 0, 12),)), w)
    with pytest.raises(PlanError, match=r"migration of 'pay': the plan has no workload of that name"):
        plan(_system(migrations=(Migration("pay", "ML-DSA-65", 0, 12),)), w)
    with pytest.raises(PlanError, match=r"one migration per workload"):
        plan(_system(migrations=(Migration("payments", "ML-DSA-65", 0, 12),
                                 Migration("payments", "ML-KEM-768", 0, 12))), w)
    with pytest.raises(PlanError, match=r"migration of 'payments': share must be in \(0, 1\] \(got 0\)"):
        Migration("payments", "ML-DSA-65", 0, 12, share=0)
    with pytest.raises(PlanError, match=r"migration of 'payments': to must be one of ML-DSA-44"):
        Migration("payments", "RSA-4096", 0, 12)
    chan = Workload("link", "channel", 100.0, args={"mode": "ATTLS", "cipher": "TLS_AES_256_GCM_SHA384",
                                                    "message_kb": 2.0})
    with pytest.raises(PlanError, match=r"'link' is a channel workload"):
        plan(_system(migrations=(Migration("link", "ML-KEM-768", 0, 12),)), w + [chan])
    with pytest.raises(PlanError, match=r"migration of 'payments': X25519MLKEM768 is a TLS 1.3 hybrid key exchange; "
                                        r"an AMS workload's key transport moves to ML-KEM-768 itself"):
        plan(_system(migrations=(Migration("payments", "X25519MLKEM768", 0, 12),)), w)
    bare = Workload("mq", "channel_starts", 5.0, args={"mode": "none", "cipher": "TLS_AES_256_GCM_SHA384"})
    with pytest.raises(PlanError, match=r"migration of 'mq': its channels are unprotected \(mode none\)"):
        plan(_system(migrations=(Migration("mq", "ML-DSA-65", 0, 12),)), w + [bare])
    long = "w" * 95                 # a valid name; its moved part's would be 122 characters
    with pytest.raises(PlanError, match=r"its moved part is named '<workload> \(ML-DSA-65\+X25519MLKEM768\)' in the "
                                        r"plan's tables, 122 characters, at most 100: give the workload a name of at "
                                        r"most 73 characters"):
        plan(_system(migrations=(Migration(long, "ML-DSA-65+X25519MLKEM768", 0, 12),)),
             [Workload(long, "handshakes", 10.0, args={"cipher": "TLS_AES_256_GCM_SHA384"})])
    with pytest.raises(PlanError, match=r"migration of 'payments': to names at most one signature"):
        Migration("payments", "ML-DSA-65+ML-DSA-87", 0, 12)


def test_a_plan_file_reads_its_migrations():
    doc = {"system": {"processors": 8, "coprocessors": 4, "accelerators": 2},
           "workload": [{"name": "payments", "kind": "ams", "rate": 120, "policy": "integrity", "message_kb": 2}],
           "migration": [{"workload": "payments", "to": "ML-DSA-65", "start": 6, "months": 12}]}
    system, workloads = plan_from_dict(doc, "site.toml")
    assert system.migrations == (Migration("payments", "ML-DSA-65", 6.0, 12.0, 1.0),)
    bad = {**doc, "migration": [{"workload": "payments", "to": "ML-DSA-65", "start": 6, "month": 12}]}
    with pytest.raises(PlanError, match=r"site.toml: migration 1: unknown key 'month'; accepted: workload, to, start"):
        plan_from_dict(bad, "site.toml")


def test_the_readme_migration_block_plans_with_the_readme_site(tmp_path, monkeypatch):
    """The README's [[migration]] block, added to its worked plan file, plans: the moved part is a row
    of its own and the coprocessors at the horizon carry more than without it."""
    import re
    from pathlib import Path

    from click.testing import CliRunner

    from cryptoplan.cli import main
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    site, migration = blocks[0], next(b for b in blocks if "[[migration]]" in b)
    (tmp_path / "site.toml").write_text(site, encoding="utf-8")
    (tmp_path / "moving.toml").write_text(site + "\n" + migration, encoding="utf-8")
    out = {}
    for name in ("site.toml", "moving.toml"):
        res = CliRunner().invoke(main, ["plan", str(tmp_path / name), "--json"])
        assert res.exit_code == 0, res.output
        import json
        out[name] = json.loads(res.output)
    assert "payments (ML-DSA-65)" in out["moving.toml"]["workloads"]
    cop = [out[n]["resources"]["coprocessors"]["utilization_at_horizon"] for n in ("site.toml", "moving.toml")]
    assert cop[1] > cop[0]


def test_bands_show_the_assumptions_width_and_a_site_value_narrows_it():
    """The issue's bar: --bands on a migrating plan carries the assumed card time's 0.5-3 band; a
    parameter file whose ML-DSA factor is a site's (another source) keeps it and the band narrows to
    the fitted parameters' own."""
    import copy

    from cryptoplan.model.calibration.draws import parameter_draws
    from cryptoplan.model.params import load_params
    from cryptoplan.model.zos.plan import plan_bands
    m = Migration("payments", "ML-DSA-65", 6.0, 12.0)
    s = _system(cops=8, accs=4, migrations=(m,))
    w = [_payments(rate=300.0, growth=0.1)]
    doc = load_params()
    site = copy.deepcopy(doc)
    site["parameters"]["qs_mldsa_time_factor"].update(value=1.3, source="site: measured on our CEX8S")
    widths = []
    for d in (doc, site):
        b = plan_bands(s, w, parameter_draws(400, seed=7, doc=d))
        u = b.resources["coprocessors"].utilization_at_horizon
        widths.append(u.high / u.low)
    assert widths[0] > 3.0            # the assumption's 0.5..3 on most of the coprocessors' work
    assert widths[1] < 1.2            # the fitted parameters' alone


def test_a_pool_the_migration_empties_is_still_bought_for_now_and_one_it_fills_has_a_month():
    """Confidentiality's key transport moving to ML-KEM-768: the accelerators, overloaded now, are empty
    at the horizon but for their certificate checks, so the count required at the horizon cannot be what the timeline buys; the
    coprocessors, idle now, reach their target during the migration.  (The certificate checks stay RSA
    verifies on the accelerators: ML-KEM moves the key transport only.)"""
    w = [Workload("audit", "ams", 3000.0, 0.0, args={"policy": "confidentiality", "message_kb": 2.0, "key_reuse": 1})]
    s = _system(cops=2, accs=2, failover="none", migrations=(Migration("audit", "ML-KEM-768", 6.0, 12.0),))
    r = plan(s, w)
    assert float(r.resources["accelerators"].required_at_horizon) < 2   # the certificate checks stay
    acc = [p for p in r.timeline if p.resource == "accelerators"]
    now = plan(_system(cops=2, accs=2, failover="none"), w)
    assert acc and acc[0].after == int(now.resources["accelerators"].required) and acc[0].order_now
    t = float(r.resources["coprocessors"].months_to_target)
    assert float(r.resources["coprocessors"].utilization) == 0.0 and 6.0 < t < 18.0
    assert_allclose(float(plan(s, w, months=t).resources["coprocessors"].utilization), s.max_utilization, rtol=1e-6)


@settings(max_examples=20, deadline=None)
@given(start=st.floats(0.0, 30.0), months=st.floats(0.0, 12.0), t0=st.floats(0.0, 40.0))
@example(start=0.0, months=1.0, t0=1.8497375170217992e-105)      # t0 an ulp past the knot: the knot's month
@example(start=3.2420059075777657e-40, months=0.0, t0=0.0)       # a jump an ulp after month 0: at month 0
def test_one_card_that_fails_is_over_its_limit_from_the_month_a_migration_first_brings_it_work(start, months, t0):
    """With one coprocessor, one card failed is over its limit as soon as this LPAR has work on it:
    an AT-TLS channel start (no card work) migrating from month ``start`` has none before it and
    some just after it (substituted back into the plan: utilization 0 before, above 0 after)."""
    s = _system(cops=1, accs=1, migrations=(Migration("mq", "ML-DSA-65", start, months),))
    w = Workload("mq", "channel_starts", 20.0, 0.1, args={"mode": "ATTLS", "cipher": "TLS_AES_256_GCM_SHA384"})
    got = float(plan(s, [w], months=t0).resources["coprocessors"].failover.months_to_limit)
    # (the crossings read a month within 8 ulps of a knot as the knot's, Schedule.at: 1e-12 months)
    assert got == pytest.approx(max(start - t0, 0.0), rel=0, abs=1e-12)
    if got > 0:           # no work on the card before the migration starts, some just after
        assert float(plan(s, [w], months=t0 + 0.5 * got).resources["coprocessors"].utilization) == 0.0
    after = t0 + got + max(months, 1.0) * 1e-3
    assert float(plan(s, [w], months=after).resources["coprocessors"].utilization) > 0.0


@settings(max_examples=15, deadline=None)
@given(rate=st.floats(4000.0, 6000.0), start=st.floats(0.0, 12.0), months=st.floats(1.0, 18.0),
       share=st.floats(0.5, 1.0))
def test_a_purchase_a_migration_later_makes_unneeded_says_until_when_and_it_substitutes_back(rate, start, months,
                                                                                          share):
    """Integrity's verifies leave the accelerators as they move to ML-DSA: one accelerator over its
    target now is needed only until the month from which the migration leaves one enough, through the
    horizon (substituted back: at or under the target from that month on, over it just before)."""
    s = System(processors=32, coprocessors=32, accelerators=1, horizon_months=36, failover="none",
               migrations=(Migration("payments", "ML-DSA-65", start, months, share),))
    w = _payments(rate, 0.0)
    buy = [p for p in plan(s, [w]).timeline if p.resource == "accelerators"]
    util = lambda t: float(plan(s, [w], months=t).resources["accelerators"].utilization)  # noqa: E731
    if util(0.0) <= s.max_utilization:
        assert not buy
        return
    assert len(buy) == 1 and buy[0].after == 2
    u = buy[0].needed_until_month
    if util(s.horizon_months) > s.max_utilization:         # a share too small to relieve one accelerator
        assert u == np.inf
        return
    assert start <= u <= start + months
    assert all(util(t) <= s.max_utilization * (1 + 1e-12) for t in np.linspace(u, s.horizon_months, 25))
    assert util(u - 2e-3) > s.max_utilization
    assert f"needed until month {u:.1f} only: from then the migration leaves 1 enough" in buy[0].text()


def test_a_pool_busiest_now_is_bought_for_now_and_a_fall_not_the_migrations_is_said_as_such():
    """A handshake workload shrinking 60% a year is 144% of 4 coprocessors now and within one card
    at the horizon: the timeline buys for now (it bought nothing: it counted the horizon's need
    only) and says until when, from the workloads' fall; an unrelated migration from month 30 is
    not said to relieve them (a second read found "from then the migration leaves 4 enough").
    Substituted back: at the month, the count before is within the target, just before it is not."""
    pay = _payments(rate=50.0, growth=0.0)
    web = Workload("web", "handshakes", 10000.0, -0.6, args={"cipher": "TLS_AES_256_GCM_SHA384"})
    for migrations in ((), (Migration("payments", "ML-DSA-65", 30.0, 6.0),)):
        s = System(processors=8, coprocessors=4, accelerators=1, horizon_months=36, failover="none",
                   migrations=migrations)
        now = plan(s, [pay, web]).resources["coprocessors"]
        assert now.utilization > 1.0
        buys = [p for p in plan(s, [pay, web]).timeline if p.resource == "coprocessors"]
        assert len(buys) == 1 and buys[0].after == now.required and buys[0].order_now
        u = buys[0].needed_until_month
        assert not buys[0].relieved_by_migration
        assert f"from then the workloads' fall leaves {buys[0].after - buys[0].add} enough" in buys[0].text()
        held = lambda t: float(plan(s, [pay, web], months=t).resources["coprocessors"].utilization) * 4 / (  # noqa: E731
            buys[0].after - buys[0].add)
        assert held(u) <= s.max_utilization * (1 + 1e-9) < held(u - 2e-3)
