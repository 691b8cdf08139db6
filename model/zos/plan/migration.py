"""A quantum-safe migration in the plan: a share of a workload moving to ML-DSA or ML-KEM over months.

A plan's ``[[migration]]`` entry (:class:`Migration`) moves ``share`` of an AMS workload's
transactions to a quantum-safe algorithm, linearly from month ``start`` over ``months`` (0: at
once):

.. math::

    m(t) = share \\cdot \\min\\big(1, \\max(0, (t - start) / months)\\big)

The workload is then two: what is left, at :math:`(1 - m(t))` of its rate with its own card
times, and what has moved, at :math:`m(t)` of its rate with the migrated times
(:func:`migrated_profile`: ML-DSA takes the signs, verifies and certificate checks, ML-KEM the
key_encrypt and key_decrypt, each onto the coprocessors at
:func:`~cryptoplan.model.zos.quantum_safe.qs_op_ms`'s assumed time).  Both grow as the workload
does.  So every month of the plan, its peak, one card failed, the months to a target and the
purchase timeline follow the migration: the crossings through a
:class:`~.crossing.Schedule` of the two parts' multipliers.

Assumed, and said in the plan's warnings: the general processors' CPU per transaction does not
change (the AMS CPU model's per-call costs are the same whatever the card computes); a migrated
workload's certificates are ML-DSA certificates (their checks are ML-DSA verifies).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..quantum_safe import QS_OPERATIONS, check_capable, qs_op_ms
from ..ams import ams_operations
from .errors import PlanError
from .inputs import CARD_POOLS, MIGRATION_KEYS, Migration

__all__ = ["Migration", "MIGRATION_KEYS", "migrated_profile", "expand_migrations", "migrated_name", "moved_parts"]


def migrated_name(m: Migration) -> str:
    """The name of a workload's migrated part in the plan's tables."""
    return f"{m.workload} ({m.to})"


def moved_parts(system) -> set:
    """The names of the plan's migrated parts (each a workload's, not a workload of its own)."""
    return {migrated_name(m) for m in system.migrations}


def migrated_profile(profile, w, m: Migration, system):
    """The :class:`~.profiles.Profile` of ``w``'s migrated part: its card classes with the moved
    operations taken off their RSA (or NISTECC) functions and put on the coprocessors as
    ``m.to``'s operations (per unit: the profile's requests per transaction times its
    transactions per unit); the CPU as before (module docstring)."""
    half = profile.txn_per_unit
    o = ams_operations(w.arg("policy"), w.arg("key_reuse"), w.arg("recipients"))
    per_unit = {k: 2.0 * half * np.asarray(v, dtype=float) for k, v in o.items()}     # 2 messages a txn
    ecc = str(w.arg("key_type")).strip().upper() == "NISTECC"
    moved: dict = {}
    if m.to.startswith("ML-DSA"):
        checks = per_unit["verify"] + per_unit["cert_check"]
        if ecc:
            moved["CCA_ECC"] = per_unit["sign"] + checks
        else:
            moved["CCA_RSA"], moved["RSA_ME"] = per_unit["sign"], checks
        added = {"sign": per_unit["sign"], "verify": checks}
    else:
        moved["RSA_ME"], moved["RSA_CRT"] = per_unit["key_encrypt"], per_unit["key_decrypt"]
        added = {"encapsulate": per_unit["key_encrypt"], "decapsulate": per_unit["key_decrypt"]}
    classes = {}
    for pool in CARD_POOLS:
        req, t, labels = profile.classes[pool]
        # (a function wholly moved keeps a row of 0 requests: the card's RMF rows stay the same rows)
        reqs = [np.maximum(np.asarray(r, dtype=float) - moved.get(f, 0.0), 0.0) for r, f in zip(req, labels)]
        times = [np.asarray(x, dtype=float) for x in t]
        labs = list(labels)
        if pool == "coprocessors":
            for op in QS_OPERATIONS[m.to]:
                reqs.append(np.asarray(added[op], dtype=float))
                times.append(np.asarray(qs_op_ms(m.to, op, system.card_generation), dtype=float))
                labs.append(f"{m.to} {op}")
        if reqs:
            classes[pool] = (np.stack(np.broadcast_arrays(*reqs)), np.stack(np.broadcast_arrays(*times)), tuple(labs))
        else:
            classes[pool] = (np.zeros(0), np.zeros(0), ())
    notes = profile.notes + (f"{m.share:.0%} of {m.workload} moves to {m.to} from month {m.start:g} over "
                             f"{m.months:g} months; its card times are assumed (relative software cost x the "
                             "measured RSA-2048 card time: bands draw them from 0.5 to 3 times), its CPU per "
                             "transaction as before",)
    return dataclasses.replace(profile, classes=classes, notes=notes)


def expand_migrations(system, workloads, profiles) -> tuple:
    """``(workloads, profiles, knots, origin)``: the workloads and profiles with each migrated
    workload's moved part appended, each one's :class:`~.crossing.Schedule` knots (None: not
    migrating) and the index of the workload each comes from.

    Raises
    ------
    PlanError
        A migration of a workload the plan does not have, of one that is not an AMS workload, a
        second migration of one workload, or on a system whose card generation does not run the
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
        if w.kind != "ams":
            raise PlanError(f"migration of {m.workload!r}: a migration moves an AMS workload's signatures or key "
                            f"transport; {m.workload!r} is a {w.kind} workload")
        if m.workload in seen:
            raise PlanError(f"migration of {m.workload!r}: one migration per workload (it has two)")
        seen.add(m.workload)
        try:
            check_capable(system.card_generation, f"the migration of {m.workload!r} to {m.to}")
        except ValueError as e:
            raise PlanError(f"system: {e}") from None
        if system.coprocessors == 0:
            raise PlanError(f"migration of {m.workload!r} to {m.to}: {m.to} runs on CCA coprocessors only, and "
                            "the system has none (coprocessors = 0)")
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
