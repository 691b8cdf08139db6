"""Asymmetric operations and Crypto Express requests per AMS transaction, and the card
generation's speed.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from functools import lru_cache

import numpy as np

from ...figures import figure, table_in_force
from ...params import param, POLICIES
from ..crypto import function_ms
from ._scenario import CARD_GENERATIONS, FUNCTIONS, ON_CARD, Scenario, validated_scenario

__all__ = ["operation_counts", "ams_operations", "requests_per_txn", "times_per_request",
           "card_generation_factor", "card_ms_per_txn", "ams_card_demands_ms"]

def operation_counts(w: Scenario) -> dict:
    """Asymmetric operations per message, arrays shaped like the workload."""
    got = w.cache.get("ops")
    if got is None:     # the workload's counts; only the checks per certificate are a parameter
        integ = w.policy == POLICIES.index("integrity")
        priv = w.policy == POLICIES.index("privacy")
        conf = ~integ & ~priv
        signs = (integ | priv).astype(float)
        wrap = np.where(priv, w.recipients, np.where(conf, w.recipients / w.reuse, 0.0))
        unwrap = np.where(priv, 1.0, np.where(conf, 1.0 / w.reuse, 0.0))
        got = w.cache["ops"] = (signs, wrap, unwrap)
    signs, wrap, unwrap = got
    checks = param("ams_cert_checks")   # public-key checks per certificate validated
    return {"sign": signs, "verify": signs, "key_encrypt": wrap, "key_decrypt": unwrap,
            "cert_check": checks * (signs + wrap)}


def ams_operations(policy, key_reuse=None, recipients=1) -> dict:
    """Asymmetric operations per *message* for an AMS policy.

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    key_reuse : float or "unlimited", optional
        Confidentiality key reuse *K* (1..9,999,999 or unlimited).  Must be
        None (or 1) for Integrity and Privacy.
    recipients : int
        Recipients per message (1..10,000): one key_encrypt and one
        certificate check each.

    Returns
    -------
    dict
        ``{"sign", "verify", "key_encrypt", "key_decrypt", "cert_check"}``:
        operations per message (floats, or arrays when an argument is one).
        ``cert_check`` is the public-key check of the CA's signature on each
        certificate AMS validates: the signer's (on MQGET, signing policies)
        and each recipient's (on MQPUT, when a key is wrapped for it).
    """
    w = validated_scenario(policy, "RSA", 2048, 0.0, key_reuse, recipients)
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in operation_counts(w).items()}


def requests_per_txn(w: Scenario, o: dict | None = None) -> np.ndarray:
    """Card requests per transaction by card function, shape (4, *shape), order FUNCTIONS, of the
    scenario's operation counts (or of ``o``, counts per message by operation, such as those a
    migration leaves)."""
    o = operation_counts(w) if o is None else o
    rsa = ~w.ecc
    # (broadcast first: a count may carry a parameter's draws axis where another does not)
    per_msg = np.stack(np.broadcast_arrays(
        rsa * o["sign"],                                             # CCA_RSA
        rsa * (o["verify"] + o["cert_check"] + o["key_encrypt"]),    # RSA_ME
        rsa * o["key_decrypt"],                                      # RSA_CRT
        w.ecc * (o["sign"] + o["verify"] + o["cert_check"]),         # CCA_ECC
    ))
    return 2.0 * per_msg


def times_per_request(w: Scenario) -> np.ndarray:
    """Card EXEC TIME per request (ms) by card function, shape (4, *shape), on the card generation."""
    times = np.broadcast_arrays(*(np.asarray(function_ms(f, w.bits), dtype=float) for f in FUNCTIONS))
    return np.stack(times) * _generation(w.generation)


@lru_cache(maxsize=8)
def _generation_table(table: str) -> np.ndarray:
    """EXEC TIME of each generation relative to CEX8S, read from the row once per figures table."""
    change = figure("ref_cex7s_vs_cex6s_exec").target() / 100.0   # CEX7S vs CEX6S: up to -13%
    return np.array([1.0 / (1.0 + change), 1.0, 1.0])


def _generation(codes) -> np.ndarray:
    """Card-time factor of the generation codes.

    The card times are CEX8S's (seed 001).  CEX7S: the same ("Crypto Express 8S
    showed no significant benefit over 7S for MQ TLS or AMS", z16 report p.18);
    CEX6S: :math:`1/(1 - 0.13)` ("Crypto Express 7S execution times are up to 13%
    lower than 6S", z15 report p.20; row ``ref_cex7s_vs_cex6s_exec``), the one
    comparison's extreme, so an upper estimate of a CEX6S card's time.
    """
    return _generation_table(table_in_force())[np.asarray(codes)]


def card_generation_factor(card_generation) -> float:
    """EXEC TIME of a Crypto Express generation relative to the CEX8S times the model is fitted to.

    Parameters
    ----------
    card_generation : {"CEX6S", "CEX7S", "CEX8S"}

    Returns
    -------
    float
        1 for CEX7S and CEX8S; for CEX6S the inverse of the published "up to 13% lower"
        (data row ``ref_cex7s_vs_cex6s_exec``), an upper estimate.
    """
    if card_generation not in CARD_GENERATIONS:
        raise InputError(f"card_generation must be one of {', '.join(CARD_GENERATIONS)} (got {card_generation!r})")
    return float(_generation(CARD_GENERATIONS.index(card_generation)))


def card_ms_per_txn(req, t, card) -> np.ndarray:
    """Card time per transaction (ms) at one card type."""
    return np.tensordot(ON_CARD[card].astype(float), req * t, axes=1)


def ams_card_demands_ms(policy, key_type, key_size, key_reuse=None, recipients=1, card_generation="CEX8S") -> dict:
    """Card time per *transaction* (2 messages), ms, by card and by card function.

    Returns
    -------
    dict
        ``{"coprocessor": ms, "accelerator": ms, "ops": {function: requests per txn}}``
        for one scenario (scalars).
    """
    w = validated_scenario(policy, key_type, key_size, 0.0, key_reuse, recipients, card_generation=card_generation)
    if np.ndim(w.policy):
        raise InputError("ams_card_demands_ms takes one scenario; use ams_demands for arrays")
    req, t = requests_per_txn(w), times_per_request(w)
    return {"coprocessor": float(card_ms_per_txn(req, t, "coprocessor")),
            "accelerator": float(card_ms_per_txn(req, t, "accelerator")),
            "ops": {f: float(req[i]) for i, f in enumerate(FUNCTIONS) if req[i] > 0}}
