"""MQ Advanced Message Security (AMS): crypto operations, throughput, CPU cost, cards.

A transaction is a request/reply: 2 MQPUTs that protect a message and 2
MQGETs that unprotect one.  Asymmetric operations per message (V901 p.3,
V913 p.5; rows ``ref_ams_ops_*``), with *r* recipients and key reuse *K*:

=================  =========================================  ===================
policy             operations per message                     card functions
=================  =========================================  ===================
Integrity          1 sign + 1 verify                          CCA, ME (RSA)
Privacy            1 sign + r key_encrypt + 1 key_decrypt     CCA, ME, CRT, ME
                   + 1 verify
Confidentiality    (r key_encrypt + 1 key_decrypt) / K        ME, CRT
=================  =========================================  ===================

(NISTECC keys sign and verify on the coprocessor and support Integrity only.)

Throughput of *N* requesters is a closed network solved exactly by
:func:`model.mva.mva`: a delay station for the MQ path (fitted per message
size), the coprocessors and the accelerators as multi-server stations with the
card demands per transaction.  With one requester,

.. math:: X = 1 / (T_{path}(size) + D_{cop} + D_{acc}).

CPU cost per transaction (µs) has three parts:

.. math::

    c = c_{MQ} + 2\\,c_{msg} + \\frac{O_{MSTR}}{X}, \\qquad
    c_{msg} = f + (n_{sign} + n_{verify})\\,c_{sig} + (n_{enc} + n_{dec})\\,c_{key}
              + (h + e)\\,\\mathrm{KB}

the MQ cost without AMS, the AMS cost of protecting and unprotecting the two
messages (:func:`ams_message_cost_us`: a fixed interception cost :math:`f`
and per-KB hashing :math:`h` for signing policies and encryption :math:`e` for
encrypting policies, charged to the application; CPU per signature operation
:math:`c_{sig}` and per key-wrapping operation :math:`c_{key}`, charged to
AMSM), and the MQ MSTR "administration" cost per second :math:`O_{MSTR}`
spread over the transaction rate: why cost per transaction rises with key
size although the crypto work is on the cards (seed 001).
The CPU parameters are fitted to the z14 report's costs; other machine
generations multiply the MQ and AMS parts by the published ratios
(:func:`ams_platform_factors`).

References
----------
.. [1] IBM MQ for z/OS performance reports V901 (p.3), V913 (p.5), "MQ for
   z/OS on z14" (pp.15-20); A. Sharkey, "MQ for z/OS: Impact of key-size on
   Advanced Message Security performance", 2024 (seed 001).
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import UnstableQueueError, check
from .crypto import CARD_FUNCTIONS, function_ms, operation_function
from .figures import figure
from .mgc import mgc_wait
from .mva import mva
from .params import (MAX_MESSAGE_KB, normalize_choice, normalize_key, normalize_key_reuse, normalize_policy,
                     param)

__all__ = ["ams_operations", "ams_message_cost_us", "ams_card_demands_ms", "ams_throughput",
           "ams_cost_us",
           "card_utilization", "crypto_wait_ms", "accelerators_required",
           "coprocessors_required", "ams_platform_factors", "AMS_ADDRESS_SPACES", "AMS_PLATFORMS"]

AMS_ADDRESS_SPACES = ("total", "application", "AMSM", "MSTR")
AMS_PLATFORMS = ("z13", "z14", "z15", "z16")
# The z15 report's "small", "medium" and "large" AMS messages, which it does not give in KB:
# read as the sizes MQ's AMS measurements use (the z14 report's 2KB and 4MB, seed 001's
# 2KB, 64KB and 4MB).  An assumption, not a published figure: see ams_platform_factors.
SIZE_CLASSES_KB = {"small": 2.0, "medium": 64.0, "large": 4096.0}
CARDS = ("accelerator", "coprocessor")


def ams_operations(policy, key_reuse=None, recipients=1) -> dict:
    """Asymmetric operations per *message* for an AMS policy.

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    key_reuse : float or "unlimited", optional
        Confidentiality key reuse *K* (1..9,999,999 or unlimited).  Ignored
        (must be None or 1) for Integrity and Privacy.
    recipients : int
        Recipients per message (>= 1): one key_encrypt each.

    Returns
    -------
    dict
        ``{"sign": .., "verify": .., "key_encrypt": .., "key_decrypt": ..}``
    """
    pol = normalize_policy(policy)
    k = normalize_key_reuse(key_reuse)
    r = check("recipients", recipients, 1.0, integer=True)
    if pol != "confidentiality" and k != 1.0:
        raise ValueError(f"key_reuse applies to the confidentiality policy only (got {key_reuse!r} "
                         f"with {pol}); leave it empty")
    if pol == "integrity":
        return {"sign": 1.0, "verify": 1.0, "key_encrypt": 0.0, "key_decrypt": 0.0}
    if pol == "privacy":
        return {"sign": 1.0, "verify": 1.0, "key_encrypt": r, "key_decrypt": 1.0}
    return {"sign": 0.0, "verify": 0.0, "key_encrypt": r / k, "key_decrypt": 1.0 / k}


def _check_key(policy, key_type, key_size):
    pol = normalize_policy(policy)
    kt, n = normalize_key(key_type, key_size)
    if kt == "NISTECC" and pol != "integrity":
        raise ValueError(f"NISTECC keys support the integrity policy only (got {pol}): NISTECC "
                         "certificates have no DATAENCRYPT key usage")
    return pol, kt, n


def ams_message_cost_us(policy, message_kb, key_reuse=None, recipients=1, platform="z16"):
    """AMS CPU to protect and unprotect one message (µs), excluding the MQPUT/MQGET itself.

    The quantity the MQ for z/OS on z14 report tabulates (``ref_ams_cost_*``):
    a fixed interception cost per message, the asymmetric operations of
    :func:`ams_operations` at a CPU cost that differs between signatures and
    key wrapping, and CPACF hashing / encryption per KB:

    .. math::

        c = f + (n_{sign} + n_{verify})\\,c_{sig} + (n_{enc} + n_{dec})\\,c_{key}
            + KB\\,(h\\,[\\text{signs}] + e\\,[\\text{encrypts}])

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    message_kb : float or array_like
        Message size in KB, 0..102400.
    key_reuse, recipients
        As :func:`ams_operations`.
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation: the z14 cost times the AMS factor of
        :func:`ams_platform_factors` (z14 is what the parameters are fitted to).

    Returns
    -------
    float or ndarray
        CPU µs per message (a request/reply transaction has two).
    """
    pol = normalize_policy(policy)
    kb = np.asarray(check("message_kb", message_kb, 0.0, MAX_MESSAGE_KB), dtype=float)
    ops = ams_operations(pol, key_reuse, recipients)
    sign = 1.0 if pol in ("integrity", "privacy") else 0.0
    enc = 1.0 if pol in ("privacy", "confidentiality") else 0.0
    out = (param("ams_msg_us") + _amsm_us(ops)
           + kb * (sign * param("ams_hash_us_per_kb") + enc * param("ams_enc_us_per_kb")))
    out = out * ams_platform_factors(pol, kb, platform)["ams"]
    return float(out) if np.ndim(out) == 0 else out


def ams_platform_factors(policy, message_kb, platform="z16") -> dict:
    """CPU of an AMS transaction on a machine generation relative to z14, read from the reports.

    The AMS CPU model is calibrated on the z14 report's absolute costs
    (``ref_ams_cost_*_z14``).  Other generations differ by CPU speed and by
    CPACF hashing and encryption speed, in proportions the model has no
    mechanism for (z13 -> z14: -3% for 4MB Integrity, which is mostly SHA-256,
    -42% for 4MB Confidentiality, mostly AES), so it applies the published
    ratios, as an LSPR table of processor ratios by workload is applied:

    * **z13**: the z14 report's z13 (CEX5S) and z14 (CEX6S) columns.  The AMS
      part is :math:`c_{z13}/c_{z14}` of the policy's message-cost cells at 2KB
      and 4MB (``ref_ams_cost_{2k,4m}_<policy>_z13`` / ``_z14``), the MQ part
      the ratio of the 2KB costs without AMS (``ref_ams_txn_cost_2k_none_*``,
      the only size published).
    * **z15**: the z15 report's change of the whole transaction cost from z14,
      per policy, for small, medium and large messages
      (``ref_z15_vs_z14_cost_<size>_<policy>``): :math:`1 + \\Delta/100` for
      both parts.  The report does not give the sizes in KB; they are read as
      :data:`SIZE_CLASSES_KB` (2KB, 64KB and 4MB, the sizes of the z14 report
      and seed 001).
    * **z16**: no AMS CPU comparison with z15 is published (only throughput of
      large messages, ``ref_z16_vs_z15_tput_large_*``), so z16 uses the z15
      factors: an upper estimate on a faster machine, as for the TLS channel
      costs.

    Between the published sizes a factor is interpolated linearly in
    :math:`\\log KB`; below the smallest and above the largest it is held at the
    end value:

    .. math::

        r(KB) = r_i + (r_{i+1} - r_i)\\,
                \\frac{\\ln \\mathrm{clip}(KB) - \\ln KB_i}{\\ln KB_{i+1} - \\ln KB_i}

    The factors do not depend on the key, so on z15 and z16 (one factor per
    transaction) the key-size ratios of seed 001 (a z16) are kept; on z13 the
    MQ and AMS parts scale differently and the ratios move slightly (the
    AMSM share grows with key size).  The 2KB Confidentiality cells (16 -> 13
    µs, printed to the microsecond) fix their ratio only to about ±7%.  The Crypto Express times are CEX8S's on
    every platform (the cards' own generation change, ``ref_cex7s_vs_cex6s_exec``,
    is not modelled).

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    message_kb : float or array_like
        Message size in KB, 0..102400.
    platform : {"z13", "z14", "z15", "z16"}

    Returns
    -------
    dict
        ``{"mq": r, "ams": r}``: the factor for the MQ work without AMS (and
        the queue manager's MSTR cost) and for the AMS work (interception,
        hashing, encryption, asymmetric-operation handling); floats, or
        arrays shaped like ``message_kb``.

    References
    ----------
    .. [1] IBM, "MQ for z/OS on z14", pp.15-20; "MQ for z/OS on z15", p.25;
       "MQ for z/OS on z16", p.34 (github.com/ibm-messaging/mqperf).
    """
    pol = normalize_policy(policy)
    kb = np.asarray(check("message_kb", message_kb, 0.0, MAX_MESSAGE_KB), dtype=float)
    plat = normalize_choice("platform", platform, AMS_PLATFORMS)
    if plat == "z14":
        mq, ams = np.ones_like(kb), np.ones_like(kb)
    elif plat == "z13":
        sizes = np.array([2.0, 4096.0])
        cells = np.array([figure(f"ref_ams_cost_{t}_{pol}_z13").target()
                          / figure(f"ref_ams_cost_{t}_{pol}_z14").target() for t in ("2k", "4m")])
        ams = _log_interp(kb, sizes, cells)
        mq = np.full_like(kb, figure("ref_ams_txn_cost_2k_none_z13").target()
                          / figure("ref_ams_txn_cost_2k_none_z14").target())
    else:
        sizes = np.array(list(SIZE_CLASSES_KB.values()))
        change = np.array([figure(f"ref_z15_vs_z14_cost_{c}_{pol}").target() for c in SIZE_CLASSES_KB])
        mq = _log_interp(kb, sizes, 1.0 + change / 100.0)
        ams = mq.copy()
    out = {"mq": mq, "ams": ams}
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


def _log_interp(kb, sizes, values):
    """Piecewise-linear in log size between the published sizes, constant outside them."""
    x = np.log(np.clip(kb, sizes[0], sizes[-1]))
    return np.interp(x, np.log(sizes), values)


def _amsm_us(ops: dict) -> float:
    """AMSM CPU for one message's asymmetric operations (µs)."""
    return ((ops["sign"] + ops["verify"]) * param("ams_sig_op_us")
            + (ops["key_encrypt"] + ops["key_decrypt"]) * param("ams_key_op_us"))


def ams_card_demands_ms(policy, key_type, key_size, key_reuse=None, recipients=1) -> dict:
    """Card time per *transaction* (2 messages), ms, by card and by card function.

    Returns
    -------
    dict
        ``{"coprocessor": ms, "accelerator": ms, "ops": {function: requests per txn}}``.
    """
    pol, kt, n = _check_key(policy, key_type, key_size)
    ops = ams_operations(pol, key_reuse, recipients)
    per_fn: dict[str, float] = {}
    for op, count in ops.items():
        if count:
            fn = operation_function(op, kt)
            per_fn[fn] = per_fn.get(fn, 0.0) + 2.0 * count
    out = {"coprocessor": 0.0, "accelerator": 0.0, "ops": per_fn}
    for fn, count in per_fn.items():
        out[CARD_FUNCTIONS[fn][0]] += count * float(function_ms(fn, n))
    return out


def _path_ms(policy: str, kb: float) -> float:
    """Non-crypto elapsed time per transaction of one requester (ms)."""
    enc = 1.0 if policy in ("privacy", "confidentiality") else 0.0
    return param("ams_path_ms") + kb * (param("ams_path_ms_per_kb") + enc * param("ams_enc_ms_per_kb"))


def _throughput_one(pol, kt, n, kb, k, r, requesters, coprocessors, accelerators) -> float:
    d = ams_card_demands_ms(pol, kt, n, k, r)
    path = _path_ms(pol, kb)
    if requesters == 1:
        return 1000.0 / (path + d["coprocessor"] + d["accelerator"])
    stations = [_station(d["coprocessor"], coprocessors * param("cop_engines")),
                _station(d["accelerator"], accelerators * param("acc_parallelism"))]
    res = mva(int(requesters), [s[0] for s in stations], servers=[s[1] for s in stations],
              think_time=path + sum(s[2] for s in stations))
    return 1000.0 * float(res.throughput[-1])


def _station(demand: float, m: float) -> tuple[float, int, float]:
    """(queueing demand, whole servers, delay) for a station of ``m`` parallel servers.

    MVA needs whole servers; ``m`` is real (accelerator parallelism 1.527).  A
    station of ``k = floor(m)`` servers with demand ``D k / m`` plus a delay
    ``D (1 - k / m)`` keeps both the capacity ``m / D`` (the same as
    :func:`card_utilization`) and the unloaded time ``D``; exact when ``m`` is
    whole.  (Seidmann, Schweitzer and Shalev-Oren, 1987, split a multi-server
    station the same way with ``k = 1``; keeping ``floor(m)`` servers stays
    exact for whole ``m``.)
    """
    if m < 1.0:
        return demand / m, 1, 0.0
    k = math.floor(m)
    return demand * k / m, k, demand * (1.0 - k / m)


def _common(policy, key_type, key_size, message_kb, key_reuse, recipients):
    pol, kt, n = _check_key(policy, key_type, key_size)
    kb = check("message_kb", message_kb, 0.0, MAX_MESSAGE_KB)
    k = normalize_key_reuse(key_reuse)
    r = check("recipients", recipients, 1.0, integer=True)
    ams_operations(pol, key_reuse, r)  # validates key_reuse against the policy
    return pol, kt, n, kb, k, r


def _vectorize(fn, *args):
    """Apply a scalar model function over broadcast numeric arguments."""
    arrays = [a for a in args if isinstance(a, (list, tuple, np.ndarray))]
    if not arrays:
        return fn(*args)
    shaped = np.broadcast_arrays(*[np.asarray(a, dtype=object) for a in args])
    out = np.empty(shaped[0].shape, dtype=float)
    for idx in np.ndindex(out.shape):
        out[idx] = fn(*(s[idx] for s in shaped))
    return out


# The measured configuration's card counts (model.planning.defaults reads the same rows).
_MEASURED = {"Coprocessors": "s001_cfg_coprocessors_per_lpar", "Accelerators": "s001_cfg_accelerators_shared"}


def _measured(value, key):
    """``value``, or the measured configuration's value when it is None."""
    if value is None:
        return figure(_MEASURED[key]).target()
    return value


def ams_throughput(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                   coprocessors=None, accelerators=None, recipients=1):
    """AMS request/reply transactions per second of *N* requesters (closed loop, exact MVA).

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    key_type : {"RSA", "NISTECC"}
    key_size : int
        Certificate key size in bits (RSA 1024-4096, NISTECC 192-521).
    message_kb : float
        Message size in KB (1 MB = 1024), 0..102400.
    key_reuse : float or "unlimited", optional
        Confidentiality key reuse.
    requesters : int
        Parallel requesters, each with one request outstanding (1..100,000).
    coprocessors, accelerators : int, optional
        Crypto Express cards in each mode available to the LPAR (1..64).  None:
        the configuration the source measurements used (:func:`model.defaults`,
        read from ``data/figures.csv``).
    recipients : int
        Recipients per message.

    Returns
    -------
    float or ndarray
        Transactions per second.
    """
    def one(policy, key_type, key_size, message_kb, key_reuse, requesters, coprocessors,
            accelerators, recipients):
        pol, kt, n, kb, k, r = _common(policy, key_type, key_size, message_kb, key_reuse, recipients)
        nreq = check("requesters", requesters, 1.0, 100000.0, integer=True)
        ncop = check("coprocessors", _measured(coprocessors, "Coprocessors"), 1.0, 64.0, integer=True)
        nacc = check("accelerators", _measured(accelerators, "Accelerators"), 1.0, 64.0, integer=True)
        return _throughput_one(pol, kt, n, kb, k, r, int(nreq), int(ncop), int(nacc))
    return _vectorize(one, policy, key_type, key_size, message_kb, key_reuse, requesters,
                      coprocessors, accelerators, recipients)


def ams_cost_us(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                coprocessors=None, accelerators=None, recipients=1, address_space="total",
                platform="z16"):
    """General-CP CPU cost per AMS transaction (µs), in total or by address space.

    Parameters
    ----------
    address_space : {"total", "application", "AMSM", "MSTR"}
        ``application``: MQ API work without AMS, AMS interception and
        symmetric hashing and encryption (CPACF); ``AMSM``: asymmetric-operation handling;
        ``MSTR``: the queue manager's administration cost per second spread
        over the transaction rate.
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation.  The parameters are fitted to the z14 report's
        costs; the MQ part (MQ API work, MSTR) and the AMS part (interception,
        CPACF, AMSM) are multiplied by :func:`ams_platform_factors`.  The
        throughput that spreads MSTR is :func:`ams_throughput`'s, the same on
        every platform.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    float or ndarray
        CPU microseconds per transaction.
    """
    def one(policy, key_type, key_size, message_kb, key_reuse, requesters, coprocessors,
            accelerators, recipients, address_space, platform):
        match = normalize_choice("address_space", address_space, AMS_ADDRESS_SPACES)
        pol, kt, n, kb, k, r = _common(policy, key_type, key_size, message_kb, key_reuse, recipients)
        x = ams_throughput(pol, kt, n, kb, key_reuse, requesters, coprocessors, accelerators, r)
        ops = ams_operations(pol, key_reuse, r)
        sign = 1.0 if pol in ("integrity", "privacy") else 0.0
        enc = 1.0 if pol in ("privacy", "confidentiality") else 0.0
        g = ams_platform_factors(pol, kb, platform)
        parts = {
            "application": g["mq"] * param("mq_base_us")
            + g["ams"] * 2.0 * (param("ams_msg_us") + kb * (sign * param("ams_hash_us_per_kb")
                                                          + enc * param("ams_enc_us_per_kb"))),
            "AMSM": g["ams"] * 2.0 * _amsm_us(ops),
            "MSTR": g["mq"] * param("mstr_admin_us_per_s") / x,
        }
        return sum(parts.values()) if match == "total" else parts[match]
    return _vectorize(one, policy, key_type, key_size, message_kb, key_reuse, requesters,
                      coprocessors, accelerators, recipients, address_space, platform)


def _card(card) -> str:
    return normalize_choice("card", card, CARDS, {"acc": "accelerator", "cexa": "accelerator",
                                                  "cop": "coprocessor", "cexc": "coprocessor"})


def _per_card_servers(card: str) -> float:
    return param("acc_parallelism") if card == "accelerator" else param("cop_engines")


def _card_load(tx_rate, policy, key_type, key_size, key_reuse, card, recipients):
    """Requests at one card type for an open transaction rate.

    Returns ``(rate, per_txn, service)``: requests per second (array like
    ``tx_rate``), requests per transaction, and mean service time per request
    in seconds (0 when the workload sends nothing to that card type).
    """
    d = ams_card_demands_ms(policy, key_type, key_size, key_reuse, recipients)
    per_txn = sum(cnt for fn, cnt in d["ops"].items() if CARD_FUNCTIONS[fn][0] == card)
    rate = np.asarray(check("tx_rate", tx_rate, 0.0), float) * per_txn
    service = d[card] / per_txn / 1000.0 if per_txn else 0.0
    return rate, per_txn, service


def card_utilization(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                     card="accelerator", cards=1, recipients=1):
    """Utilization of the cards of one mode at an open transaction rate.

    .. math:: U = \\frac{\\lambda\\, D_{card}}{n_{cards}\\, m}

    with :math:`D_{card}` the card time per transaction and :math:`m` the
    effective parallel requests per card (accelerator: ``acc_parallelism``,
    read from seed 001's RMF report whose by-function utilizations add up
    to 152.7% under a 100% summary; coprocessor: ``cop_engines`` = 1).

    This is the fraction of the cards' capacity.  RMF's accelerator figures
    are request rate x EXEC TIME (seed 001's first report: 2706/s x 0.046 ms
    + 676/s x 0.507 ms = 46.6%), which is :math:`U\\,m`: multiply by
    ``acc_parallelism`` before comparing with an RMF report.

    Parameters
    ----------
    tx_rate : float or array_like
        Transactions (request/reply) per second, >= 0.
    policy, key_type, key_size, key_reuse, recipients
        As :func:`ams_throughput`.
    message_kb : float
        Checked (0..MAX_MESSAGE_KB) but not used: seed 001 finds the EXEC TIME
        "remains similar regardless of message size".
    card : {"accelerator", "coprocessor"}
    cards : int
        Cards of that mode, 1..64.

    Returns
    -------
    float or ndarray
        Utilization in [0, 1).

    Raises
    ------
    UnstableQueueError
        If the utilization is 1 or more: the cards cannot keep up.
    """
    c = _card(card)
    check("message_kb", message_kb, 0.0, MAX_MESSAGE_KB)
    n_cards = check("cards", cards, 1.0, 64.0, integer=True)
    rate, _, service = _card_load(tx_rate, policy, key_type, key_size, key_reuse, c, recipients)
    u = rate * service / (np.asarray(n_cards) * _per_card_servers(c))
    if np.any(u >= 1.0):
        raise UnstableQueueError(f"{c} utilization would be {float(np.max(u)):.0%}: the {c}s cannot "
                                 f"sustain tx_rate; add cards (see {c}s_required)")
    return float(u) if np.ndim(u) == 0 else u


def crypto_wait_ms(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                   card="accelerator", cards=1, recipients=1, service_scv=0.0):
    """Mean queueing delay per *transaction* at one card type (ms), M/G/c (Cosmetatos).

    Requests queue for ``cards * m`` servers (m as in :func:`card_utilization`,
    real-valued through Erlang C's continuation); crypto operations are nearly
    constant in time, so the default service SCV is 0.  The delay is summed
    over the transaction's requests at that card type.
    """
    c = _card(card)
    card_utilization(tx_rate, policy, key_type, key_size, message_kb, key_reuse, c, cards, recipients)
    rate, per_txn, service = _card_load(tx_rate, policy, key_type, key_size, key_reuse, c, recipients)
    if service == 0.0:
        return 0.0 if np.ndim(rate) == 0 else np.zeros_like(rate)
    servers = check("cards", cards, 1.0, 64.0, integer=True, scalar=True) * _per_card_servers(c)
    wq = _card_wait(rate, service, servers, service_scv)
    out = np.asarray(wq) * per_txn * 1000.0
    return float(out) if np.ndim(out) == 0 else out


def _card_wait(lam, service, servers, service_scv):
    """Mean wait per request at a card type (s): M/G/c with Poisson arrivals.

    Cosmetatos (within 2.7% of the exact M/D/c wait at utilization >= 0.5,
    high at low load: the safe side) for service SCV <= 1, which covers
    nearly constant crypto operations; Allen-Cunneen above that.
    """
    service_scv = check("service_scv", service_scv, 0.0, scalar=True)
    method = "cosmetatos" if service_scv <= 1.0 else "allen-cunneen"
    return mgc_wait(lam, service, servers, service_scv=service_scv, method=method)


def _required(card, tx_rate, policy, key_type, key_size, message_kb, key_reuse, max_utilization,
              max_wait_ms, recipients, service_scv):
    c = _card(card)
    check("message_kb", message_kb, 0.0, MAX_MESSAGE_KB)
    u_max = check("max_utilization", max_utilization, 0.0, 1.0, lo_open=True, scalar=True)
    w_max = (None if max_wait_ms is None
             else check("max_wait_ms", max_wait_ms, 0.0, lo_open=True, scalar=True))
    rate, per_txn, service = _card_load(tx_rate, policy, key_type, key_size, key_reuse, c, recipients)
    rate = np.atleast_1d(rate)
    m = _per_card_servers(c)
    out = np.zeros(rate.shape, dtype=np.int64)
    for i, lam in np.ndenumerate(rate):
        if service == 0.0 or lam == 0.0:
            continue
        a = lam * service
        k = max(1, math.ceil(a / (m * u_max) - 1e-12))
        while True:
            if a / (k * m) < 1.0 and a / (k * m) <= u_max:
                if w_max is None:
                    break
                wq = _card_wait(lam, service, k * m, service_scv)
                if wq * per_txn * 1000.0 <= w_max:  # ms of queueing per transaction
                    break
            k += 1
            if k > 10000:
                raise ValueError("more than 10,000 cards needed: check tx_rate and max_wait_ms units")
        out[i] = k
    return int(out[0]) if np.ndim(tx_rate) == 0 else out.reshape(np.shape(tx_rate))


def accelerators_required(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                          max_utilization=0.7, max_wait_ms=None, recipients=1, service_scv=0.0):
    """Smallest number of accelerator cards meeting the utilization and wait targets.

    Parameters
    ----------
    tx_rate : float or array_like
        Transactions per second (>= 0).
    max_utilization : float
        Ceiling on card utilization, (0, 1].
    max_wait_ms : float, optional
        Ceiling on the mean queueing delay per transaction at the
        accelerators (ms), computed with M/G/c (Cosmetatos for ``service_scv`` <= 1,
        else Allen-Cunneen).
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    int or ndarray
        0 when the workload sends nothing to accelerators (NISTECC, or
        unlimited key reuse).
    """
    return _required("accelerator", tx_rate, policy, key_type, key_size, message_kb, key_reuse,
                     max_utilization, max_wait_ms, recipients, service_scv)


def coprocessors_required(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                          max_utilization=0.7, max_wait_ms=None, recipients=1, service_scv=0.0):
    """Smallest number of coprocessor cards meeting the targets. See :func:`accelerators_required`."""
    return _required("coprocessor", tx_rate, policy, key_type, key_size, message_kb, key_reuse,
                     max_utilization, max_wait_ms, recipients, service_scv)
