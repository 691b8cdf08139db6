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
from ..domains import CARDS, MAX_UTILIZATION, MESSAGE_KB, MIGRATED_SHARE, TX_RATE
from ..params import normalize_choice, param
from .ams import CARD_GENERATIONS
from .ams._open import overload_error, whole_count
from .ams._operations import card_ms_per_txn, operation_counts, requests_per_txn, times_per_request
from .ams._scenario import CARD_MODES, FUNCTIONS, other_utilization, validated_scenario
from .stations import count_needed

__all__ = ["QS_ALGORITHMS", "QS_OPERATIONS", "QS_FACTORS", "TimeBand", "TIME_BAND", "software_ratio",
           "qs_op_ms", "capable_generations", "check_capable", "factor_draws", "ams_migrated_card_ms",
           "migrated_card_utilization", "migrated_cards_required"]

#: Each algorithm's operations, in the order the functions list them.
QS_OPERATIONS = {
    "ML-DSA-44": ("sign", "verify"), "ML-DSA-65": ("sign", "verify"), "ML-DSA-87": ("sign", "verify"),
    "ML-KEM-512": ("encapsulate", "decapsulate"), "ML-KEM-768": ("encapsulate", "decapsulate"),
    "ML-KEM-1024": ("encapsulate", "decapsulate"),
}
QS_ALGORITHMS = tuple(QS_OPERATIONS)

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
    decapsulation, on a coprocessor.  The other operations stay where they were.  Per
    transaction (2 messages), with :math:`n_o` operations per message and :math:`t` card times:

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
        algorithm, or a card generation that does not run ``algorithm`` (:func:`check_capable`).
    """
    alg = _algorithm(algorithm)
    check_capable(card_generation, alg)
    w = validated_scenario(policy, key_type, key_size, 0.0, key_reuse, recipients, card_generation=card_generation)
    if np.ndim(w.policy):
        raise InputError("ams_migrated_card_ms takes one scenario (scalars)")
    o = operation_counts(w)
    times = times_per_request(w)
    t = dict(zip(FUNCTIONS, times))
    ecc = bool(w.ecc)
    before = {c: card_ms_per_txn(requests_per_txn(w), times, c) for c in CARD_MODES}
    if _family(alg) == "ML-DSA":
        signs, checks = o["sign"], o["verify"] + o["cert_check"]
        moved_cop = 2.0 * (signs + checks) * t["CCA_ECC"] if ecc else 2.0 * signs * t["CCA_RSA"]
        moved_acc = 0.0 if ecc else 2.0 * checks * t["RSA_ME"]
        new = 2.0 * (signs * qs_op_ms(alg, "sign", card_generation) + checks * qs_op_ms(alg, "verify", card_generation))
    else:
        enc, dec = o["key_encrypt"], o["key_decrypt"]
        moved_cop = 0.0
        moved_acc = 2.0 * (enc * t["RSA_ME"] + dec * t["RSA_CRT"])
        new = 2.0 * (enc * qs_op_ms(alg, "encapsulate", card_generation) + dec * qs_op_ms(alg, "decapsulate", card_generation))
    after = {"coprocessor": before["coprocessor"] - moved_cop + new, "accelerator": before["accelerator"] - moved_acc}
    tidy = lambda d: {k: (float(v) if np.ndim(v) == 0 else np.asarray(v, dtype=float)) for k, v in d.items()}  # noqa: E731
    return {"before": tidy(before), "after": tidy(after)}


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
    u = np.asarray(load / n + other, dtype=float)
    overload_error(f"{c}s", u, *np.broadcast_arrays(n, count_needed(load, other, 1.0 - 1e-9), lam), "cards")
    return float(u) if u.ndim == 0 else u


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
