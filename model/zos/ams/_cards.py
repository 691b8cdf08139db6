"""Per-card functions at a planned rate: utilization, queueing wait and the counts required.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from ...domains import CARDS, MAX_UTILIZATION, MAX_WAIT_MS, SERVICE_SCV, TX_RATE
from ...params import normalize_choice
from ._cpu import cpu_parts
from ._open import card_wait_ms, count_needed, MAX_REQUIRED, overload_error, request_scv, whole_count
from ._operations import card_ms_per_txn, requests_per_txn, times_per_request
from ._scenario import (CARD_MODES, CARD_RMF_FUNCTIONS, FUNCTIONS, ON_CARD, other_utilization, validated_scenario)

__all__ = ["card_utilization", "crypto_wait_ms", "accelerators_required", "coprocessors_required",
           "processors_required"]

def _card(card) -> str:
    return normalize_choice("card", card, CARD_MODES, {"acc": "accelerator", "cexa": "accelerator",
                                                  "cop": "coprocessor", "cexc": "coprocessor"})


def card_utilization(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                     card="accelerator", cards=1, recipients=1, rmf_row="summary", other_lpar_util=0.0,
                     card_generation="CEX8S"):
    """Utilization of the cards of one mode at a transaction rate, as RMF prints it.

    .. math:: U = \\frac{\\lambda \\sum_f n_f t_f}{n_{cards}} + u_{other}

    RMF's Crypto Hardware Activity report: requests x EXEC TIME per card
    (seed 001's first report: 2706/s x 0.046 ms + 676/s x 0.507 ms = 46.6%).
    ``rmf_row`` "ME" or "CRT" gives the accelerator's by-function rows (this
    LPAR's requests only).  Seed 001's rule: plan on the summary; when it
    reaches 100%, provision more cards.

    Parameters
    ----------
    tx_rate : float or array_like
        Transactions (request/reply) per second, >= 0.
    policy, key_type, key_size, key_reuse, recipients
        As :func:`ams_throughput`.
    message_kb : float
        Checked (0..102400) but not used: seed 001 finds the EXEC TIME
        "remains similar regardless of message size".
    card : {"accelerator", "coprocessor"}
    cards : int
        Cards of that mode, 1..64.
    rmf_row : {"summary", "ME", "CRT"}
        The summary row, or one accelerator function's row.
    other_lpar_util : float
        Fraction of each card other LPARs keep busy, [0, 1) (summary only).

    Returns
    -------
    float or ndarray
        Utilization in [0, 1).

    Raises
    ------
    UnstableQueueError
        If the summary utilization is 1 or more: the cards cannot keep up.
    """
    c = _card(card)
    fn = normalize_choice("rmf_row", rmf_row, CARD_RMF_FUNCTIONS)
    if fn != "summary" and c != "accelerator":
        raise InputError(f"rmf_row {fn!r} is an accelerator row of the RMF report; the coprocessor has "
                         "only its summary (rmf_row='summary')")
    lam = np.asarray(TX_RATE.check(tx_rate), dtype=float)
    w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, card_generation=card_generation)
    n = np.asarray(CARDS.check(cards), dtype=float)
    other = other_utilization("other_lpar_util", other_lpar_util)
    req, t = requests_per_txn(w), times_per_request(w)
    load = lam * card_ms_per_txn(req, t, c) / 1000.0
    u = load / n + other
    overload_error(f"{c}s", np.asarray(u), *np.broadcast_arrays(n, count_needed(load, other, 1.0 - 1e-9), lam), "cards")
    if fn != "summary":
        i = FUNCTIONS.index("RSA_ME" if fn == "ME" else "RSA_CRT")
        u = lam * req[i] * t[i] / 1000.0 / n
    u = np.asarray(u, dtype=float)
    return float(u) if u.ndim == 0 else u


def crypto_wait_ms(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                   card="accelerator", cards=1, recipients=1, service_scv=None, other_lpar_util=0.0,
                   card_generation="CEX8S"):
    """Mean queueing delay per *transaction* at one card type (ms), M/G/c.

    Requests queue for ``cards`` servers.  The service time is the mix of the
    card functions the workload sends (e.g. ME 0.046 ms and CRT 0.507 ms on an
    accelerator), whose squared coefficient of variation (:func:`request_scv`, 0.7
    to 1.8 for the RSA policies on accelerators) sets the wait: Cosmetatos
    for :math:`c_s^2 \\le 1`, Allen-Cunneen above.  ``service_scv`` overrides
    it.  The delay is summed over the transaction's requests at that card type.

    Parameters
    ----------
    service_scv : float, optional
        Card service-time SCV to use instead of the mix's, >= 0.
    Other parameters as :func:`card_utilization`.
    """
    c = _card(card)
    card_utilization(tx_rate, policy, key_type, key_size, message_kb, key_reuse, c, cards, recipients,
                     other_lpar_util=other_lpar_util, card_generation=card_generation)
    lam = np.asarray(TX_RATE.check(tx_rate), dtype=float)
    w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, card_generation=card_generation)
    n = np.asarray(CARDS.check(cards), dtype=float)
    other = other_utilization("other_lpar_util", other_lpar_util)
    req, t = requests_per_txn(w), times_per_request(w)
    on = ON_CARD[c].astype(float)
    per_txn = np.tensordot(on, req, axes=1)
    dem = card_ms_per_txn(req, t, c)
    scv = request_scv(req, t, c) if service_scv is None else SERVICE_SCV.check(service_scv)
    out = card_wait_ms(lam, per_txn, dem, other, n, scv)
    out = np.asarray(out, dtype=float)
    return float(out) if out.ndim == 0 else out


def _required(card, tx_rate, policy, key_type, key_size, message_kb, key_reuse, max_utilization,
              max_wait_ms, recipients, service_scv, other_lpar_util, card_generation):
    c = _card(card)
    lam = np.asarray(TX_RATE.check(tx_rate), dtype=float)
    w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, card_generation=card_generation)
    u_max = MAX_UTILIZATION.check(max_utilization, scalar=True)
    w_max = (None if max_wait_ms is None
             else MAX_WAIT_MS.check(max_wait_ms, scalar=True))
    scv_in = None if service_scv is None else SERVICE_SCV.check(service_scv)   # used with w_max only
    other = other_utilization("other_lpar_util", other_lpar_util)
    if np.any(other >= u_max):
        raise InputError(f"other_lpar_util ({float(np.max(other)):g}) leaves no room below max_utilization "
                         f"({u_max:g}): no number of shared {c}s meets the target")
    req, t = requests_per_txn(w), times_per_request(w)
    on = ON_CARD[c].astype(float)
    per_txn = np.tensordot(on, req, axes=1)
    dem = card_ms_per_txn(req, t, c)
    lam, per_txn, dem, other = np.broadcast_arrays(lam, per_txn, dem, other)
    with np.errstate(over="ignore", invalid="ignore"):
        load = lam * dem / 1000.0
        k = count_needed(load, other, u_max)
    whole_count(k, f"{c}s", lam)   # before the wait search: a unit mistake is named, not iterated
    if w_max is not None:
        scv = np.broadcast_to(request_scv(req, t, c) if scv_in is None else scv_in, lam.shape)
        for _ in range(10000):   # add a card where the wait target is missed, all scenarios at once
            wait = card_wait_ms(lam, per_txn, dem, other, np.maximum(k, 1.0), scv)
            miss = (k > 0) & (wait > w_max)
            if not miss.any():
                break
            k = k + miss
            if np.any(k > MAX_REQUIRED):
                break
    return whole_count(k, f"{c}s", lam)


def accelerators_required(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                          max_utilization=0.7, max_wait_ms=None, recipients=1, service_scv=None,
                          other_lpar_util=0.0, card_generation="CEX8S"):
    """Smallest number of accelerator cards meeting the utilization and wait targets.

    .. math:: k = \\min\\{k : \\lambda D_{acc} / k + u_{other} \\le U_{max},\\;
              W_q(k) \\le W_{max}\\}

    with utilization RMF's summary (requests x EXEC TIME per card; seed 001's
    rule is to add cards before it reaches 100%).

    Parameters
    ----------
    tx_rate : float or array_like
        Transactions per second (>= 0).
    max_utilization : float
        Ceiling on the summary utilization per card, (0, 1).
    max_wait_ms : float, optional
        Ceiling on the mean queueing delay per transaction at the
        accelerators (ms), M/G/c with the mix's service variability
        (:func:`crypto_wait_ms`).
    service_scv : float, optional
        Card service-time SCV for the wait target instead of the mix's, >= 0
        (checked even without ``max_wait_ms``).
    other_lpar_util : float
        Fraction of each shared card other LPARs keep busy, [0, max_utilization).
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    int or ndarray
        0 when the workload sends nothing to accelerators (NISTECC, or
        unlimited key reuse).
    """
    return _required("accelerator", tx_rate, policy, key_type, key_size, message_kb, key_reuse,
                     max_utilization, max_wait_ms, recipients, service_scv, other_lpar_util, card_generation)


def coprocessors_required(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                          max_utilization=0.7, max_wait_ms=None, recipients=1, service_scv=None,
                          other_lpar_util=0.0, card_generation="CEX8S"):
    """Smallest number of coprocessor cards meeting the targets. See :func:`accelerators_required`."""
    return _required("coprocessor", tx_rate, policy, key_type, key_size, message_kb, key_reuse,
                     max_utilization, max_wait_ms, recipients, service_scv, other_lpar_util, card_generation)


def processors_required(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                        max_utilization=0.7, recipients=1, platform="z16"):
    """Smallest number of general processors keeping their utilization at or below the target.

    .. math:: P = \\lceil (\\lambda\\, c_{txn} + O_{MSTR}) / (10^6\\, U_{max}) \\rceil

    with :math:`c_{txn}` the CPU µs per transaction without MSTR's per-second
    cost :math:`O_{MSTR}` (µs/s).

    Parameters
    ----------
    tx_rate : float or array_like
        Planned transactions per second, >= 0 (at 0: the processors MSTR's own
        CPU needs).
    Other parameters as :func:`ams_plan`.

    Returns
    -------
    int or ndarray
    """
    lam = np.asarray(TX_RATE.check(tx_rate), dtype=float)
    w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, platform)
    u_max = MAX_UTILIZATION.check(max_utilization, scalar=True)
    parts = cpu_parts(w)
    with np.errstate(over="ignore", invalid="ignore"):
        busy = (lam * (parts["application"] + parts["AMSM"]) + parts["mstr_per_s"]) / 1e6
        k = np.maximum(count_needed(busy, 0.0, u_max), 1.0)
    return whole_count(k, "processors", lam)
