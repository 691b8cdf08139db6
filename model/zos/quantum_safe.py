"""Quantum-safe operations on a Crypto Express coprocessor: ML-DSA signatures and ML-KEM keys.

No card time of ML-DSA (FIPS 204) or ML-KEM (FIPS 203) is published, on any Crypto Express
generation or on CPACF.  Until a site measures its own, the model **assumes** a card time: the
cost of the operation relative to an RSA-2048 sign in software on one x86 core (the table
``data/quantum_safe.csv``, each number with the line of ``openssl speed`` output it is read
from), applied to the part of the coprocessor's measured RSA-2048 sign time that grows with the
arithmetic:

.. math::

    t_q = f_q \\, t_{RSA}\\,\\big(s + (1 - s)\\,\\rho_q\\big), \\qquad
    \\rho_q = \\frac{t^{sw}_q}{t^{sw}_{RSA\\text{-}2048\\ sign}},

with :math:`t_{RSA}` the coprocessor's RSA-2048 sign time (``cop_rsa_ms_2048``, fitted to the
RMF example of Sharkey's AMS key-size blog), :math:`s` its share that does not grow with the
modulus (``cop_rsa_fixed_share``: the CCA verb and the secure key token, which every quantum-safe
verb also passes through: an assumption), and :math:`f_q` a factor, 1 as shipped
(``qs_mldsa_time_factor``, ``qs_mlkem_time_factor``), that carries the assumption's uncertainty:
drawn by ``--bands`` between :data:`time band <TIME_BAND>`'s two factors (0.5 to 3, 90% of the
draws), and set by a site that measures its own times.

The software ratios :math:`\\rho_q`:

* ML-KEM-512/768/1024 encapsulate and decapsulate: read in one ``openssl speed`` run beside the
  RSA-2048 sign (OpenSSL 3.4.0 with the Open Quantum Safe provider);
* ML-DSA-44 sign and verify: a second run of the same image on the same processor;
* ML-DSA-65 and ML-DSA-87: no run gives them beside RSA; their ratio to ML-DSA-44 comes from
  OpenSSL's own ML-DSA on a Xeon 8455C (pull request #30654's baseline), chained:
  :math:`\\rho_{65} = (t^{B}_{65} / t^{B}_{44})\\,(t^{A}_{44} / t^{A}_{RSA})`.

So an ML-DSA-65 signature is assumed to cost the card about 1.2 times the arithmetic of an
RSA-2048 sign, and its verification (which an accelerator does not run: every quantum-safe verb
is a CCA coprocessor's) about 0.28 times; an ML-KEM-768 encapsulation about 0.08.

**In TLS** (:func:`tls_migrated_card_ms`), ML-DSA and ML-KEM are TLS 1.3's (IETF drafts
draft-ietf-tls-mldsa and draft-ietf-tls-ecdhe-mlkem), so a migrated handshake is a TLS 1.3 one.
IBM's z16 report counts a TLS 1.3 channel start's card work from RMF: one coprocessor call (the
certificate's signature, about 0.57 ms) and two accelerator calls (the peer's checks, about 0.04
ms each).  Migrated to ML-DSA, a handshake's certificate work (its cipher's card time) becomes
that many ML-DSA signs and verifies, on a coprocessor; migrated to ML-KEM (or a hybrid group,
which keeps its classical ECDHE on the processors and adds the ML-KEM), the handshake adds one
ML-KEM operation, at the dearer of encapsulate (the server's) and decapsulate (the client's; its
key generation has no published time), and keeps its cipher's certificate work (no card time of
TLS 1.3 with those certificates is published).  ``algorithm`` names one, or a signature and a
key exchange joined by ``+`` (``"ML-DSA-65+X25519MLKEM768"``).

Which cards run them: CCA 8.4 on a Crypto Express8S coprocessor (z16, z17) runs ML-DSA and
ML-KEM (``data/quantum_safe_cards.csv``, with IBM's sentence); an accelerator never does, and an
earlier generation (CEX7S runs the round-3 CRYSTALS-Dilithium and Kyber variants, not the FIPS
algorithms) is an error naming it.

References
----------
.. [1] NIST FIPS 203, *Module-Lattice-Based Key-Encapsulation Mechanism Standard*, 2024;
   FIPS 204, *Module-Lattice-Based Digital Signature Standard*, 2024.
.. [2] J. Cox, G. Arquero, J. Craig, R. Kisley, "CCA 8.4 for IBM z17, z16: ML-KEM, ML-DSA",
   IBM Crypto Education Community blog, June 2025.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from ..datafiles import data_path
from ..errors import InputError
from .._text import value_text
from ..domains import CARDS, MAX_UTILIZATION, MESSAGE_KB, MIGRATED_SHARE, TX_RATE
from ..params import normalize_choice, param
from .ams import CARD_GENERATIONS, card_generation_factor
from .tls import channel_start_card_ms
from .ams._open import overload_error, whole_count
from .ams._operations import card_ms_per_txn, operation_counts, requests_per_txn, times_per_request
from .ams._scenario import CARD_MODES, other_utilization, validated_scenario
from .stations import count_needed
from ..domains import HANDSHAKE_RATE, RESUMED_SHARE
from ..figures import figure
from ..params import normalize_cipher

__all__ = ["QS_ALGORITHMS", "QS_OPERATIONS", "QS_FACTORS", "HYBRID_GROUPS", "QS_TARGETS", "Target",
           "migration_target", "TimeBand", "TIME_BAND", "software_ratio",
           "qs_op_ms", "capable_generations", "check_capable", "factor_draws", "ams_migrated_card_ms",
           "migrated_card_utilization", "migrated_cards_required", "ams_migrated_operations", "tls_migrated_operations",
           "tls_migrated_card_ms", "migrated_handshake_card_utilization"]

#: Each algorithm's operations, in the order the functions list them.
QS_OPERATIONS = {
    "ML-DSA-44": ("sign", "verify"), "ML-DSA-65": ("sign", "verify"), "ML-DSA-87": ("sign", "verify"),
    "ML-KEM-512": ("encapsulate", "decapsulate"), "ML-KEM-768": ("encapsulate", "decapsulate"),
    "ML-KEM-1024": ("encapsulate", "decapsulate"),
}
QS_ALGORITHMS = tuple(QS_OPERATIONS)

#: Hybrid TLS 1.3 key-exchange groups (IETF draft-ietf-tls-ecdhe-mlkem) and the ML-KEM each adds to
#: its classical ECDHE (which stays on the processors, as before).
HYBRID_GROUPS = {"X25519MLKEM768": "ML-KEM-768", "SecP256r1MLKEM768": "ML-KEM-768",
                 "SecP384r1MLKEM1024": "ML-KEM-1024"}

#: The names a migration's ``to`` (or a function's ``algorithm``) is made of: one, or a signature
#: and a key exchange joined by ``+``.
QS_TARGETS = QS_ALGORITHMS + tuple(HYBRID_GROUPS)

#: The parameter carrying each family's assumption (1 as shipped; a site's measurement sets it).
QS_FACTORS = {"ML-DSA": "qs_mldsa_time_factor", "ML-KEM": "qs_mlkem_time_factor"}


class TimeBand(NamedTuple):
    """The assumed card time's band: ``low`` and ``high`` factors on it, ``level`` of the draws between."""

    low: float
    high: float
    level: float


def _table() -> list[dict]:
    with open(data_path("quantum_safe.csv"), encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@lru_cache(maxsize=1)
def _cards() -> dict:
    with open(data_path("quantum_safe_cards.csv"), encoding="utf-8", newline="") as fh:
        return {r["name"]: r["value"] for r in csv.DictReader(fh)}


@lru_cache(maxsize=1)
def _software_us() -> dict:
    """``{(run, algorithm, operation): µs}`` of ``data/quantum_safe.csv`` (run "a" or "b")."""
    return {(r["id"][0], r["algorithm"], r["operation"]): float(r["us"]) for r in _table()}


class Target(NamedTuple):
    """What a migration moves to: its signature algorithm and key exchange (each None if it keeps its own).

    ``kem`` is the ML-KEM algorithm; ``hybrid`` the hybrid group that carries it, if one does.
    ``name`` is the canonical spelling (signature first, ``+`` between).
    """

    name: str
    signature: str | None
    kem: str | None
    hybrid: str | None


def migration_target(to, argument: str = "to") -> Target:
    """``to`` read as a :class:`Target`: one of :data:`QS_TARGETS` (case-insensitive), or a
    signature (ML-DSA-n) and a key exchange (ML-KEM-n or a hybrid group) joined by ``+``.

    Raises
    ------
    InputError
        Naming ``argument`` and the value: an unknown name, two signatures or two key exchanges.
    """
    if not isinstance(to, str) or not to.strip():
        raise InputError(f"{argument} must be a quantum-safe algorithm ({', '.join(QS_TARGETS)}), or a signature "
                         f"and a key exchange joined by '+' (got {value_text(to)})")
    try:
        parts = [normalize_choice(argument, p.strip(), QS_TARGETS) for p in to.split("+")]
    except InputError:
        raise InputError(f"{argument} must be one of {', '.join(QS_TARGETS)}, or a signature and a key exchange "
                         f"joined by '+' (got {value_text(to)})") from None
    sig = [p for p in parts if p.startswith("ML-DSA")]
    kex = [p for p in parts if not p.startswith("ML-DSA")]
    if len(sig) > 1 or len(kex) > 1:
        raise InputError(f"{argument} names at most one signature (ML-DSA-n) and one key exchange (ML-KEM-n or a "
                         f"hybrid group such as X25519MLKEM768) joined by '+' (got {value_text(to)})")
    k = kex[0] if kex else None
    kem = HYBRID_GROUPS.get(k, k) if k else None
    return Target("+".join(sig + kex), sig[0] if sig else None, kem, k if k in HYBRID_GROUPS else None)


def _band() -> TimeBand:
    c = _cards()
    return TimeBand(float(c["time_factor_low"]), float(c["time_factor_high"]), float(c["band_level"]))


def capable_generations() -> tuple:
    """The Crypto Express generations whose coprocessors run ML-DSA and ML-KEM."""
    return tuple(g.strip() for g in _cards()["capable_generation"].split(";"))


def _family(algorithm: str) -> str:
    return algorithm.rsplit("-", 1)[0]


def _algorithm(algorithm) -> str:
    return normalize_choice("algorithm", algorithm, QS_ALGORITHMS)


def _operation(algorithm: str, operation) -> str:
    return normalize_choice(f"operation (of {algorithm})", operation, QS_OPERATIONS[algorithm])


def check_capable(card_generation, what: str = "quantum-safe work") -> str:
    """The card generation, checked to run ML-DSA and ML-KEM on its coprocessors.

    Raises
    ------
    InputError
        Naming the generation and the ones that do (with their CCA level): an unknown
        generation, or one whose coprocessors do not run the FIPS 203/204 algorithms.
    """
    gen = normalize_choice("card_generation", card_generation, CARD_GENERATIONS)
    ok = capable_generations()
    if gen not in ok:
        raise InputError(f"card_generation {gen} cannot run {what}: ML-DSA and ML-KEM run on a Crypto Express "
                         f"coprocessor with CCA {_cards()['cca_level']} or later, which is {' or '.join(ok)} "
                         "(an accelerator runs neither)")
    return gen


def software_ratio(algorithm, operation) -> float:
    """The operation's software time over an RSA-2048 sign's (module docstring), dimensionless.

    .. math:: \\rho_q = t^{sw}_q / t^{sw}_{RSA\\text{-}2048\\ sign}

    ML-DSA-65 and -87 chained through ML-DSA-44 (:math:`t^B_k / t^B_{44}` from the second table).
    """
    alg = _algorithm(algorithm)
    op = _operation(alg, operation)
    sw = _software_us()
    rsa = sw[("a", "RSA-2048", "sign")]
    if ("a", alg, op) in sw:
        return sw[("a", alg, op)] / rsa
    return sw[("b", alg, op)] / sw[("b", "ML-DSA-44", op)] * sw[("a", "ML-DSA-44", op)] / rsa


def qs_op_ms(algorithm, operation, card_generation="CEX8S"):
    """Assumed Crypto Express coprocessor execution time of one quantum-safe operation (ms).

    Parameters
    ----------
    algorithm : {"ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"}
    operation : {"sign", "verify"} for ML-DSA, {"encapsulate", "decapsulate"} for ML-KEM
    card_generation : {"CEX8S"}
        The coprocessors' generation; an earlier one is an error naming it (module docstring).

    Returns
    -------
    float or ndarray
        Milliseconds of coprocessor time (RMF's EXEC TIME), excluding queueing: an assumption
        (module docstring).  Inside :func:`~cryptoplan.model.params.using_values` with ``k``
        parameter sets (draws), one per set, shape ``(k,)``.

    .. math:: t_q = f_q\\, t_{RSA}\\, \\big(s + (1 - s)\\,\\rho_q\\big)

    Examples
    --------
    >>> round(qs_op_ms("ML-DSA-65", "sign") / qs_op_ms("ML-DSA-65", "verify"), 2) > 1
    True
    """
    alg = _algorithm(algorithm)
    rho = software_ratio(alg, operation)
    check_capable(card_generation, f"{alg}")
    t0, s = param("cop_rsa_ms_2048"), param("cop_rsa_fixed_share")
    f = param(QS_FACTORS[_family(alg)])
    out = f * t0 * (s + (1.0 - s) * rho)
    return out if np.ndim(out) else float(out)


def factor_draws(n: int, rng) -> np.ndarray:
    """``n`` draws of an assumed time factor: median 1, :data:`TIME_BAND`'s ends at 5% and 95%.

    A split (two-piece) log-normal, as a plan's forecast ranges are drawn:
    :math:`\\ln f = \\sigma_{\\pm} z`, :math:`z \\sim N(0, 1)`, with
    :math:`\\sigma_- = -\\ln(low) / z_{p}` below the median and :math:`\\sigma_+ = \\ln(high) / z_{p}`
    above, :math:`z_p` the normal quantile of :math:`(1 + level) / 2` (1.645 for 90%).
    """
    band = TIME_BAND
    zp = NormalDist().inv_cdf(0.5 + band.level / 2.0)
    z = rng.standard_normal(int(n))
    return np.exp(np.where(z < 0, z * (-np.log(band.low)), z * np.log(band.high)) / zp)


def ams_migrated_card_ms(policy, key_type, key_size, key_reuse=None, recipients=1, algorithm="ML-DSA-65",
                         card_generation="CEX8S") -> dict:
    """Card time per AMS transaction (ms) before and after moving its operations to ``algorithm``.

    An ML-DSA algorithm takes over the transaction's signatures: each sign, verify and
    certificate check (the certificates are then ML-DSA certificates: an assumption) runs as an
    ML-DSA sign or verify on a coprocessor.  An ML-KEM algorithm takes over the key transport of
    Privacy and Confidentiality: each key_encrypt becomes an encapsulation and each key_decrypt a
    decapsulation, on a coprocessor.  ``"ML-DSA-65+ML-KEM-768"`` moves both.  The other
    operations stay where they were.  Per transaction (2 messages), with :math:`n_o` operations
    per message and :math:`t` card times:

    .. math::

        D_{after}(card) = D_{before}(card) - 2 \\sum_{o \\in moved} n_o\\, t_{f(o)}\\,[f(o) \\text{ on } card]
                          + 2\\,[card = \\text{coprocessor}] \\sum_{o \\in moved} n_o\\, t^{qs}_{o}

    Returns
    -------
    dict
        ``{"before": {"coprocessor": ms, "accelerator": ms}, "after": {...}}``, each a float, or
        an array over parameter draws.

    Raises
    ------
    InputError
        A bad AMS argument (as :func:`~cryptoplan.model.zos.ams.card_utilization`), an unknown
        algorithm, a hybrid group (a TLS 1.3 key exchange: AMS's key transport moves to ML-KEM
        itself), or a card generation that does not run it (:func:`check_capable`).
    """
    w, left, added = ams_migrated_operations(policy, key_type, key_size, key_reuse, recipients, algorithm, card_generation)
    times = times_per_request(w)
    before = {c: card_ms_per_txn(requests_per_txn(w), times, c) for c in CARD_MODES}
    after = {c: card_ms_per_txn(left, times, c) for c in CARD_MODES}
    after["coprocessor"] = after["coprocessor"] + sum((n * np.asarray(t) for _, n, t in added), np.zeros(()))
    return {"before": _tidy(before), "after": _tidy(after)}


def ams_migrated_operations(policy, key_type, key_size, key_reuse, recipients, algorithm, card_generation) -> tuple:
    """``(scenario, left, added)``: the card requests per transaction by function the migration
    leaves (order ``FUNCTIONS``: its moved operations' counts set to 0) and the coprocessor
    operations it adds, ``((label, count per transaction, ms each), ...)``."""
    tgt = _ams_target(algorithm, "algorithm")
    check_capable(card_generation, tgt.name)
    w = validated_scenario(policy, key_type, key_size, 0.0, key_reuse, recipients, card_generation=card_generation)
    if np.ndim(w.policy):
        raise InputError("a migrated AMS workload takes one scenario (scalars)")
    o = operation_counts(w)
    left, added = dict(o), []
    if tgt.signature:
        for op in ("sign", "verify", "cert_check"):
            left[op] = 0.0 * np.asarray(o[op])
        added += [(f"{tgt.signature} sign", 2.0 * o["sign"], qs_op_ms(tgt.signature, "sign", card_generation)),
                  (f"{tgt.signature} verify", 2.0 * (o["verify"] + o["cert_check"]),
                   qs_op_ms(tgt.signature, "verify", card_generation))]
    if tgt.kem:
        for op in ("key_encrypt", "key_decrypt"):
            left[op] = 0.0 * np.asarray(o[op])
        added += [(f"{tgt.kem} encapsulate", 2.0 * o["key_encrypt"], qs_op_ms(tgt.kem, "encapsulate", card_generation)),
                  (f"{tgt.kem} decapsulate", 2.0 * o["key_decrypt"], qs_op_ms(tgt.kem, "decapsulate", card_generation))]
    return w, requests_per_txn(w, left), tuple(added)


def _tidy(d: dict) -> dict:
    return {k: (float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float)) for k, v in d.items()}


def _ams_target(algorithm, argument: str) -> Target:
    """A migration target an AMS workload can take: no hybrid group (an error naming it)."""
    tgt = migration_target(algorithm, argument)
    if tgt.hybrid:
        raise InputError(f"{argument} {tgt.hybrid} is a TLS 1.3 hybrid key exchange; an AMS workload's key "
                         f"transport moves to {tgt.kem} itself (got {value_text(algorithm)})")
    return tgt


def tls_migrated_operations(algorithm, card_generation="CEX8S") -> tuple:
    """The quantum-safe card work a migration gives one full TLS handshake: ``((label, pool, count, ms), ...)``.

    ML-DSA certificates and ML-KEM key exchange are TLS 1.3's (module docstring).  A signature
    migrated replaces the handshake's certificate work (the cipher's own card time goes,
    :func:`tls_migrated_card_ms`) with TLS 1.3's as IBM's z16 report counts it from RMF
    (``ref_start_cex_chacha_coproc_calls``: 1 coprocessor call, the signature;
    ``ref_start_cex_chacha_accel_calls``: 2 accelerator calls, the checks): that many ML-DSA signs
    and verifies, on a coprocessor.  A key exchange migrated adds one ML-KEM operation on a
    coprocessor, at the dearer of encapsulate and decapsulate; alone, it leaves the cipher's own
    certificate work as it was (no card time of TLS 1.3 with those certificates is published).

    Parameters
    ----------
    algorithm : str
        As :func:`migration_target` (a signature, a key exchange, or both joined by ``+``).
    card_generation : {"CEX8S"}

    Returns
    -------
    tuple of (str, str, float, float or ndarray)
        Label, pool (always "coprocessor"), operations per full handshake, ms each (an array over
        parameter draws inside ``using_values``).
    """
    tgt = migration_target(algorithm, "algorithm")
    gen = check_capable(card_generation, tgt.name)
    ops: list = []
    if tgt.signature:
        signs = figure("ref_start_cex_chacha_coproc_calls").target()
        checks = figure("ref_start_cex_chacha_accel_calls").target()
        ops += [(f"{tgt.signature} sign", "coprocessor", signs, qs_op_ms(tgt.signature, "sign", gen)),
                (f"{tgt.signature} verify", "coprocessor", checks, qs_op_ms(tgt.signature, "verify", gen))]
    if tgt.kem:
        t = np.maximum(qs_op_ms(tgt.kem, "encapsulate", gen), qs_op_ms(tgt.kem, "decapsulate", gen))
        ops.append((f"{tgt.kem} key exchange", "coprocessor", 1.0, t if np.ndim(t) else float(t)))
    return tuple(ops)


def tls_migrated_card_ms(cipher, algorithm="ML-DSA-65", card_generation="CEX8S") -> dict:
    """Card time per full TLS handshake (ms) before and after its migration to ``algorithm``.

    Before: the cipher's published card time per MQ channel start
    (:func:`~cryptoplan.model.zos.tls.channel_start_card_ms`, which a System SSL handshake's
    profile also uses).  After: :func:`tls_migrated_operations`' card work, plus the cipher's own
    where only the key exchange migrates (:math:`[\\neg sig] = 1`):

    .. math:: D_{after}(card) = [\\neg sig]\\, D_{before}(card) + \\sum_{o \\,\\text{on}\\, card} n_o\\, t_o

    A resumed handshake uses no card, before or after.

    Returns
    -------
    dict
        ``{"before": {"coprocessor": ms, "accelerator": ms}, "after": {...}}``, floats, or arrays
        over parameter draws.

    Raises
    ------
    InputError
        An unknown cipher or algorithm, or a card generation that does not run it.
    """
    c = normalize_cipher(cipher)
    ops = tls_migrated_operations(algorithm, card_generation)
    kept = 0.0 if migration_target(algorithm, "algorithm").signature else 1.0     # the certificates' work
    g = card_generation_factor(check_capable(card_generation))
    before = {card: channel_start_card_ms(c, card) * g for card in CARD_MODES}
    after = {card: kept * before[card] + sum((n * np.asarray(t, dtype=float) for _, pool, n, t in ops if pool == card),
                                             np.zeros(())) for card in CARD_MODES}
    return {"before": _tidy(before), "after": _tidy(after)}


def migrated_handshake_card_utilization(handshake_rate, cipher, algorithm="ML-DSA-65", share=0.0,
                                        card="coprocessor", cards=1, resumed_share=0.0, other_lpar_util=0.0,
                                        card_generation="CEX8S"):
    """RMF's utilization of one card pool at a TLS handshake rate with a share of it migrated.

    .. math:: U = \\frac{\\lambda\\,(1 - r)\\,\\big((1 - m)\\,D_{before} + m\\,D_{after}\\big)}{1000\\, n_{cards}}
              + u_{other}

    with :math:`r` the resumed share (a resumed handshake uses no card), :math:`m` the share
    migrated and :math:`D` the card ms per full handshake of :func:`tls_migrated_card_ms`.

    Parameters
    ----------
    handshake_rate : float
        TLS handshakes (or SSLCIPH channel starts) per second, >= 0.
    cipher : str
        The IBM cipher name the handshakes use before their migration.
    algorithm : str
        As :func:`migration_target`: ML-DSA-n, ML-KEM-n, a hybrid group, or a signature and a
        key exchange joined by ``+``.
    share : float
        Share of the handshakes migrated, [0, 1].
    card : {"coprocessor", "accelerator"}
    cards : int
        Cards of that mode, 1..64.
    resumed_share : float
        Share of the handshakes that resume a session, [0, 1].
    other_lpar_util : float
        Share of each card other LPARs keep busy, [0, 1).
    card_generation : {"CEX8S"}

    Returns
    -------
    float or ndarray
        Utilization in [0, 1); an array over parameter draws inside ``using_values``.

    Raises
    ------
    UnstableQueueError
        Utilization of 1 or more: the error names the cards and how many carry the rate.
    """
    n = float(CARDS.check(cards, scalar=True))
    c = normalize_choice("card", card, CARD_MODES)
    lam = float(HANDSHAKE_RATE.check(handshake_rate, scalar=True))
    m = float(MIGRATED_SHARE.check(share, scalar=True))
    r = float(RESUMED_SHARE.check(resumed_share, scalar=True))
    other = other_utilization("other_lpar_util", other_lpar_util)
    d = tls_migrated_card_ms(cipher, algorithm, card_generation)
    load = lam * (1.0 - r) * ((1.0 - m) * np.asarray(d["before"][c]) + m * np.asarray(d["after"][c])) / 1000.0
    return _pool_utilization(c, load, n, other, lam, ("handshake_rate", "handshakes per second"))


def _pool_utilization(card: str, load, n: float, other, lam: float, rate: tuple):
    """RMF's utilization of ``n`` cards carrying ``load`` cards' worth beside other LPARs' share,
    :math:`U = L / n + u_{other}`; UnstableQueueError naming the cards, ``rate`` and the count
    needed at 1 or more."""
    u = np.asarray(load / n + other, dtype=float)
    count, needed, rates = np.broadcast_arrays(n, count_needed(load, other, 1.0 - 1e-9), lam)
    overload_error(f"{card}s", u, count, needed, rates, "cards", rate=rate)
    return float(u) if u.ndim == 0 else u


def _migrated_load(tx_rate, policy, key_type, key_size, message_kb, key_reuse, algorithm, share, card, recipients,
                   other_lpar_util, card_generation) -> tuple:
    """The arguments checked, and ``(card, rate, load, other)``: this LPAR's load on the pool in
    cards' worth, :math:`\\lambda ((1 - m) D_{before} + m D_{after}) / 1000`, and other LPARs' share."""
    c = normalize_choice("card", card, CARD_MODES)
    lam = float(TX_RATE.check(tx_rate, scalar=True))
    m = float(MIGRATED_SHARE.check(share, scalar=True))
    other = other_utilization("other_lpar_util", other_lpar_util)
    MESSAGE_KB.check(message_kb, scalar=True)
    d = ams_migrated_card_ms(policy, key_type, key_size, key_reuse, recipients, algorithm, card_generation)
    load = lam * ((1.0 - m) * np.asarray(d["before"][c]) + m * np.asarray(d["after"][c])) / 1000.0
    return c, lam, load, other


def migrated_card_utilization(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None, algorithm="ML-DSA-65",
                              share=0.0, card="coprocessor", cards=1, recipients=1, other_lpar_util=0.0,
                              card_generation="CEX8S"):
    """RMF's utilization of one card pool at an AMS rate with a share of it migrated to ``algorithm``.

    .. math:: U = \\frac{\\lambda\\,\\big((1 - m)\\,D_{before} + m\\,D_{after}\\big)}{1000\\, n_{cards}} + u_{other}

    with :math:`m` the share migrated and :math:`D` the card ms per transaction of
    :func:`ams_migrated_card_ms` (RMF's requests x EXEC TIME per card, as
    :func:`~cryptoplan.model.zos.ams.card_utilization`, which ``share = 0`` reproduces).

    Parameters
    ----------
    tx_rate : float
        AMS request/reply transactions per second, >= 0.
    policy, key_type, key_size, message_kb, key_reuse, recipients
        As :func:`~cryptoplan.model.zos.ams.card_utilization` (``message_kb`` checked, not used).
    algorithm : str
        The quantum-safe algorithm the share moves to (:data:`QS_ALGORITHMS`): ML-DSA for the
        signatures, ML-KEM for the key transport.
    share : float
        Share of the workload's transactions migrated, [0, 1].
    card : {"coprocessor", "accelerator"}
    cards : int
        Cards of that mode, 1..64.
    other_lpar_util : float
        Share of each card other LPARs keep busy, [0, 1).
    card_generation : {"CEX8S"}
        CEX8S (CCA 8.4); an earlier one is an error naming it, even at share 0 (the question is
        a migration's).

    Returns
    -------
    float or ndarray
        Utilization in [0, 1); an array over parameter draws inside ``using_values``.

    Raises
    ------
    UnstableQueueError
        Utilization of 1 or more: the error names the cards and how many carry the rate.
    """
    n = float(CARDS.check(cards, scalar=True))
    c, lam, load, other = _migrated_load(tx_rate, policy, key_type, key_size, message_kb, key_reuse, algorithm, share,
                                         card, recipients, other_lpar_util, card_generation)
    return _pool_utilization(c, load, n, other, lam, ("tx_rate", "transactions per second"))


def migrated_cards_required(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None, algorithm="ML-DSA-65",
                            share=0.0, card="coprocessor", max_utilization=0.7, recipients=1, other_lpar_util=0.0,
                            card_generation="CEX8S"):
    """Fewest cards of one mode keeping RMF's utilization within ``max_utilization`` at an AMS rate
    with ``share`` of it moved to ``algorithm`` (0 where the pool has no work).

    .. math:: k = \\min\\{k \\ge 1 : L / k + u_{other} \\le U_{max}\\}, \\qquad
              L = \\lambda\\,\\big((1 - m)\\,D_{before} + m\\,D_{after}\\big) / 1000

    Parameters as :func:`migrated_card_utilization`; ``max_utilization`` in (0, 1).

    Returns
    -------
    int or ndarray
        Cards; an array over parameter draws inside ``using_values``.

    Raises
    ------
    InputError
        ``other_lpar_util`` at or above ``max_utilization`` (no count meets it), or an argument
        out of its range.
    """
    u_max = float(MAX_UTILIZATION.check(max_utilization, scalar=True))
    c, lam, load, other = _migrated_load(tx_rate, policy, key_type, key_size, message_kb, key_reuse, algorithm, share,
                                         card, recipients, other_lpar_util, card_generation)
    if np.any(other >= u_max):
        raise InputError(f"other_lpar_util ({float(np.max(other)):g}) leaves no room below max_utilization "
                         f"({u_max:g}): no number of shared {c}s meets the target")
    k = count_needed(load, other, u_max)
    out = whole_count(np.asarray(k, dtype=float), f"{c}s", np.broadcast_to(lam, np.shape(k)))
    return out


TIME_BAND = _band()
