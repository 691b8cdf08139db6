"""A quantum-safe migration in the plan: a share of a workload moving to ML-DSA or ML-KEM over months.

A plan's ``[[migration]]`` entry (:class:`Migration`) moves ``share`` of a workload's
transactions (an AMS workload), handshakes or channel starts to a quantum-safe signature, key
exchange or both (``to``: ``"ML-DSA-65"``, ``"X25519MLKEM768"``, ``"ML-DSA-65+ML-KEM-768"``),
linearly from month ``start`` over ``months`` (0: at once):

.. math::

    m(t) = share \\cdot \\min\\big(1, \\max(0, (t - start) / months)\\big)

The workload is then two: what is left, at :math:`(1 - m(t))` of its rate with its own card
times, and what has moved, at :math:`m(t)` of its rate with the migrated times
(:func:`migrated_profile`.  AMS: ML-DSA takes the signs, verifies and certificate checks, ML-KEM the
key_encrypt and key_decrypt, each onto the coprocessors at
:func:`~cryptoplan.model.zos.quantum_safe.qs_op_ms`'s assumed time.  A handshake or channel start
becomes a TLS 1.3 one whose certificate work is ML-DSA's where its signature migrates and whose
key exchange adds an ML-KEM operation where that migrates:
:func:`~cryptoplan.model.zos.quantum_safe.tls_migrated_operations`).  Both grow as the workload
does.  So every month of the plan, its peak, one card failed, the months to a target and the
purchase timeline follow the migration: the crossings through a
:class:`~.crossing.Schedule` of the two parts' multipliers.

Assumed, and said in the plan's warnings: the general processors' CPU per transaction does not
change (the AMS CPU model's per-call costs are the same whatever the card computes; a
handshake's CPU is its cipher's, a hybrid group keeping its classical ECDHE on the processors); a
migrated workload's certificates are ML-DSA certificates (their checks are ML-DSA verifies).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...params import load_params, normalize_mode
from ..ams._scenario import FUNCTIONS
from ..quantum_safe import QS_FACTORS, TIME_BAND, ams_migrated_operations, check_capable, migration_target, tls_migrated_operations
from .errors import PlanError
from .inputs import CARD_POOLS, MAX_NAME, MIGRATION_KEYS, Migration

#: The kinds of workload a migration moves.
MIGRATING_KINDS = ("ams", "handshakes", "channel_starts")

__all__ = ["Migration", "MIGRATION_KEYS", "MIGRATING_KINDS", "migrated_profile", "expand_migrations", "migrated_name", "moved_parts"]


def migrated_name(m: Migration) -> str:
    """The name of a workload's migrated part in the plan's tables."""
    return f"{m.workload} ({m.to})"


def moved_parts(system) -> set:
    """The names of the plan's migrated parts (each a workload's, not a workload of its own)."""
    return {migrated_name(m) for m in system.migrations}


def _classes(profile, left: dict, added: tuple) -> dict:
    """The card classes of a migrated part: each pool's rows with ``left`` requests per unit (by
    label; a row it does not name keeps its own) and, appended, ``added``'s operations
    ``(label, pool, per unit, ms)``.  A function wholly moved keeps a row of 0 requests: the
    card's RMF rows stay the same rows."""
    classes = {}
    for pool, card in CARD_POOLS.items():
        req, t, labels = profile.classes[pool]
        reqs = [np.asarray(left.get(f, r), dtype=float) for r, f in zip(req, labels)]
        times = [np.asarray(x, dtype=float) for x in t]
        labs = list(labels)
        for label, on, n, ms in added:
            if on == card:
                reqs.append(np.asarray(n, dtype=float))
                times.append(np.asarray(ms, dtype=float))
                labs.append(label)
        if reqs:
            classes[pool] = (np.stack(np.broadcast_arrays(*reqs)), np.stack(np.broadcast_arrays(*times)), tuple(labs))
        else:
            classes[pool] = (np.zeros(0), np.zeros(0), ())
    return classes


def _times_said(m: Migration) -> str:
    """How the plan's quantum-safe card times are known: assumed (the packaged factor, drawn over
    the band), or from the site (a parameter file whose factor has another source)."""
    params = load_params()["parameters"]
    tgt = migration_target(m.to)
    sources = {str(params[QS_FACTORS[a.rsplit("-", 1)[0]]].get("source", "assumption"))
               for a in (tgt.signature, tgt.kem) if a}
    if sources == {"assumption"}:
        return f"card times assumed (bands: {TIME_BAND.low:g} to {TIME_BAND.high:g} times)"
    return "card times from the site's measurement" if "assumption" not in sources else \
        "card times partly assumed, partly the site's"


def migrated_profile(profile, w, m: Migration, system):
    """The :class:`~.profiles.Profile` of ``w``'s migrated part on ``system``.

    An AMS workload: its card classes with the moved operations taken off their RSA (or NISTECC)
    functions and put on the coprocessors as ``m.to``'s operations
    (:func:`~cryptoplan.model.zos.quantum_safe.ams_migrated_operations`; per unit, the
    transaction's counts times the profile's transactions per unit).  Handshakes and channel
    starts: each full handshake gets :func:`~cryptoplan.model.zos.quantum_safe.tls_migrated_operations`'
    quantum-safe card work, and loses its cipher's own (its certificates') where the signature
    migrates (an AT-TLS channel start had none on the cards); a resumed handshake uses no card.
    The CPU as before (module docstring).
    """
    gen = system.card_generation
    if w.kind == "ams":
        _, left, added = ams_migrated_operations(w.arg("policy"), w.arg("key_type"), w.arg("key_size"),
                                                 w.arg("key_reuse"), w.arg("recipients"), m.to, gen)
        half = profile.txn_per_unit
        per_label = dict(zip(FUNCTIONS, half * np.asarray(left, dtype=float)))
        ops = tuple((label, "coprocessor", half * np.asarray(n, dtype=float), t) for label, n, t in added)
        cpu_note = "CPU per transaction as before"
    else:
        full = 1.0 - float(w.arg("resumed_share") or 0.0) if w.kind == "handshakes" else 1.0
        label = "handshake" if w.kind == "handshakes" else "channel start"
        # a signature migrated takes the certificates' card work (the cipher's row) with it
        per_label = {label: 0.0} if migration_target(m.to).signature else {}
        ops = tuple((lab, card, full * n, t) for lab, card, n, t in tls_migrated_operations(m.to, gen))
        cpu_note = "as TLS 1.3, CPU per handshake as before"
    # (one printed line of the Plan sheet with the workload's name before it: the assumption said
    # in full is in the functions' and docs' words)
    notes = profile.notes + (f"{m.share:.0%} of {m.workload} moves from month {m.start:g} over {m.months:g} months; "
                             f"{_times_said(m)}, {cpu_note}",)
    return dataclasses.replace(profile, classes=_classes(profile, per_label, ops), notes=notes)


def expand_migrations(system, workloads, profiles) -> tuple:
    """``(workloads, profiles, knots, origin)``: the workloads and profiles with each migrated
    workload's moved part appended, each one's :class:`~.crossing.Schedule` knots (None: not
    migrating) and the index of the workload each comes from.

    Raises
    ------
    PlanError
        A migration of a workload the plan does not have, of one that is not an AMS, handshakes
        or channel_starts workload (an unprotected channel's starts, a hybrid group on AMS), a
        second migration of one workload, a moved part's name too long, or on a system whose card generation does not run the
        algorithm (naming it) or that has no coprocessors.
    """
    names = [w.name for w in workloads]
    knots: list = [None] * len(workloads)
    origin = list(range(len(workloads)))
    out_w, out_p = list(workloads), list(profiles)
    seen = set()
    for m in system.migrations:
        if m.workload not in names:
            raise PlanError(f"migration of {m.workload!r}: the plan has no workload of that name "
                            f"(it has {', '.join(repr(n) for n in names)})")
        i = names.index(m.workload)
        w = workloads[i]
        if w.kind not in MIGRATING_KINDS:
            raise PlanError(f"migration of {m.workload!r}: a migration moves the signatures or key exchange of an "
                            f"AMS, handshakes or channel_starts workload; {m.workload!r} is a {w.kind} workload")
        if w.kind == "ams" and migration_target(m.to).hybrid:
            raise PlanError(f"migration of {m.workload!r}: {migration_target(m.to).hybrid} is a TLS 1.3 hybrid key "
                            f"exchange; an AMS workload's key transport moves to {migration_target(m.to).kem} itself")
        if w.kind == "channel_starts" and normalize_mode(w.arg("mode")) == "none":
            raise PlanError(f"migration of {m.workload!r}: its channels are unprotected (mode none): a start has no "
                            "handshake to migrate")
        if m.workload in seen:
            raise PlanError(f"migration of {m.workload!r}: one migration per workload (it has two); a signature "
                            "and a key exchange moving together are one, to = \"ML-DSA-65+ML-KEM-768\"")
        seen.add(m.workload)
        try:
            check_capable(system.card_generation, f"the migration of {m.workload!r} to {m.to}")
        except ValueError as e:
            raise PlanError(f"system: {e}") from None
        if system.coprocessors == 0:
            raise PlanError(f"migration of {m.workload!r} to {m.to}: {m.to} runs on CCA coprocessors only, and "
                            "the system has none (coprocessors = 0)")
        if len(migrated_name(m)) > MAX_NAME:
            room = MAX_NAME - len(migrated_name(m)) + len(m.workload)
            raise PlanError(f"migration of {m.workload[:40]!r}{'...' if len(m.workload) > 40 else ''}: its moved part "
                            f"is named '<workload> ({m.to})' in the plan's tables, {len(migrated_name(m))} characters, "
                            f"at most {MAX_NAME}: give the workload a name of at most {room} characters")
        if migrated_name(m) in names:
            raise PlanError(f"migration of {m.workload!r}: its moved part is named {migrated_name(m)!r} in the "
                            "plan's tables, which is another workload's name")
        xs, ys = m.knots()
        knots[i] = (xs, 1.0 - ys)
        origin.append(i)
        out_w.append(dataclasses.replace(w, name=migrated_name(m)))
        out_p.append(migrated_profile(profiles[i], w, m, system))
        knots.append((xs, ys))
    return out_w, out_p, tuple(knots), origin
