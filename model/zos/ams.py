"""MQ Advanced Message Security (AMS): one queueing network per workload.

A transaction is a request/reply: 2 MQPUTs that protect a message and 2
MQGETs that unprotect one.  Asymmetric operations per message (V901 p.3,
V913 p.5; rows ``ref_ams_ops_*``), with *r* recipients and key reuse *K*,
plus the certificate checks of AMS's certificate validation (IBM MQ
documentation: AMS "constructs a certificate chain that consists of the
signer's certificate and the CA's certificate chain up to a trust anchor"):
the getter validates the signer's certificate, the putter each recipient's
certificate before wrapping the key for it, with ``ams_cert_checks`` public-key
checks per certificate (1: a user certificate issued by the trust anchor, as
in the z/OS AMS examples; each intermediate CA adds one):

=================  ===============================================  =====================
policy             operations per message                           card functions
=================  ===============================================  =====================
Integrity          1 sign + 1 verify + 1 certificate check          CCA, ME, ME
Privacy            1 sign + r key_encrypt + 1 key_decrypt           CCA, ME, CRT, ME,
                   + 1 verify + (1 + r) certificate checks          ME
Confidentiality    (r key_encrypt + r certificate checks            ME, ME, CRT
                   + 1 key_decrypt) / K
=================  ===============================================  =====================

NISTECC keys sign, verify and check certificates on the coprocessor and
support Integrity only.  With one recipient Privacy sends 4 ME requests per
CRT request and as many coprocessor requests as CRT: the mix of seed 001's
RMF example (2706 ME/s, 676 CRT/s, about 705 coprocessor requests/s), which
the operations without certificate checks (2 ME per CRT) cannot give.

The network
-----------
=====================  ==============  ===============================================  =========================
station                servers         demand per transaction                           from
=====================  ==============  ===============================================  =========================
MQ path (delay)        infinite        :math:`z + n_{req}\\, t_{call}`                 fitted ``ams_fixed_ms``;
                                                                                        ``crypto_call_ms`` (0)
general processors     ``processors``  CPU per transaction without MSTR's per-second    :func:`ams_cost_us`'s
                                       administration, at the machine generation        CPU model
coprocessors           ``coprocessors``:math:`\\sum_f n_f t_f` over CCA functions,       :mod:`cryptoplan.model.zos.crypto`
                                       divided by :math:`1 - u_{other}`
accelerators           ``accelerators``:math:`\\sum_f n_f t_f` over ME and CRT,          :mod:`cryptoplan.model.zos.crypto`
                                       divided by :math:`1 - u_{other}`
=====================  ==============  ===============================================  =========================

:math:`n_{req}` is the transaction's crypto requests and :math:`t_{call}` the
elapsed time of one request beyond its card execution time (ICSF and
AP-queue handling): 0 as published (fitted, it went to its bound 0 once the
coprocessor's RSA sign has its fixed part, :mod:`cryptoplan.model.zos.crypto`), a
parameter a site may set.  A policy that sends few requests (Confidentiality
with key reuse) has a short path: the path is the work the policy does.
MQ MSTR's administration CPU per second runs beside the transactions: it
takes :math:`O_{MSTR}/10^6` of a processor from the processor station.

Two answers, never confused:

* **at the planned rate** (open network, :func:`ams_plan` and the functions
  taking ``tx_rate``): CPU per transaction with MSTR's per-second cost spread
  over *that* rate, processors busy, card utilizations as RMF prints them,
  waits (M/G/c with the service-time variability of the operation mix),
  response time, cards and processors required, the bottleneck; a rate the
  network cannot carry raises :class:`UnstableQueueError` naming the
  resource and how many are needed;
* **with N requesters** (closed network, :func:`ams_throughput`): the rate
  they reach (exact MVA; one requester in closed form) and the resource that
  caps it (:func:`ams_bottleneck`).

Each requester is served by its own server task (N request/reply pairs, as
seed 001's single pair multiplied).  Card utilization is RMF's summary
utilization, requests x EXEC TIME per card: seed 001 plans on that summary
and adds cards when it reaches 100%; its by-function sum past 100% (152.7%)
is a reporting effect, not extra capacity.  Other LPARs' use of shared cards
(``other_*_util``, the fraction of each card they keep busy) adds to the
summary; for the closed network it slows the cards by :math:`1/(1 -
u_{other})` (a reduced-capacity approximation: exact for the mean when the
other load is a preemptive-priority class, optimistic otherwise).

References
----------
.. [1] IBM MQ for z/OS performance reports V901 (p.3), V913 (p.5), "MQ for
   z/OS on z14" (pp.15-20); A. Sharkey, "MQ for z/OS: Impact of key-size on
   Advanced Message Security performance", IBM, 2024; IBM MQ documentation,
   "Certificate revocation lists (CRLs)" (AMS certificate validation).
.. [2] M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2), 1980.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .._validate import UnstableQueueError, as_choice_array, broadcast, index_text
from .crypto import CARD_FUNCTIONS, function_ms
from ..domains import (CARDS, MAX_UTILIZATION, MAX_WAIT_MS, MESSAGE_KB, OTHER_LPAR_UTIL,
                       PLANNED_TX_RATE, PROCESSORS, RECIPIENTS, REQUESTERS, SERVICE_SCV, TX_RATE)
from ..figures import figure, table_in_force
from ..queueing.mgc import mgc_wait_by_scv
from ..queueing.mva import mva_throughput
from ..params import (KEY_TYPES, POLICIES, normalize_choice, normalize_key,
                      normalize_key_reuse, normalize_key_type, normalize_policy, param)

__all__ = ["AmsWorkload", "card_generation_factor", "ams_operations", "ams_message_cost_us", "ams_card_demands_ms", "ams_demands",
           "ams_throughput", "ams_cost_us", "ams_cost_at_rate_us", "ams_plan", "AMSPlan",
           "ams_bottleneck", "card_utilization", "crypto_wait_ms", "accelerators_required",
           "coprocessors_required", "processors_required", "ams_platform_factors",
           "AMS_ADDRESS_SPACES", "AMS_PLATFORMS", "RESOURCES", "RMF_EXAMPLE", "CARD_GENERATIONS"]

AMS_ADDRESS_SPACES = ("total", "application", "AMSM", "MSTR")
AMS_PLATFORMS = ("z13", "z14", "z15", "z16")
# The z15 report's "small", "medium" and "large" AMS messages, which it does not give in KB:
# read as the sizes MQ's AMS measurements use (the z14 report's 2KB and 4MB, seed 001's
# 2KB, 64KB and 4MB).  An assumption, not a published figure: see ams_platform_factors.
SIZE_CLASSES_KB = {"small": 2.0, "medium": 64.0, "large": 4096.0}
CARD_MODES = ("accelerator", "coprocessor")
RESOURCES = ("processors", "coprocessors", "accelerators")
CARD_RMF_FUNCTIONS = ("summary", "ME", "CRT")
# Crypto Express generations: the card times are fitted to CEX8S (seed 001's z16)
CARD_GENERATIONS = ("CEX6S", "CEX7S", "CEX8S")
_FUNCTIONS = tuple(CARD_FUNCTIONS)   # CCA_RSA, RSA_ME, RSA_CRT, CCA_ECC
_ON_CARD = {c: np.array([CARD_FUNCTIONS[f][0] == c for f in _FUNCTIONS]) for c in CARD_MODES}

# The measured configuration's card and processor counts (model.planning.defaults reads the same rows).
_MEASURED = {"coprocessors": "s001_cfg_coprocessors_per_lpar",
             "accelerators": "s001_cfg_accelerators_shared",
             "processors": "ref_start_cfg_cps"}


# Seed 001's RMF example as one configuration: Privacy with RSA-2048 certificates, one
# recipient, seed 001's 2 coprocessors and 1 accelerator, at the transaction rate that sends
# the report's ME requests (8 per transaction): tx_rate = ME rate / 8.
RMF_EXAMPLE = {"policy": "privacy", "key_type": "RSA", "key_size": 2048, "message_kb": 2.0,
               "recipients": 1, "coprocessors": 2, "accelerators": 1}


# ------------------------------------------------------------------ inputs
def _codes(name, value, normalize, vocabulary):
    """Category codes (index into ``vocabulary``) of a scalar or array argument.

    Each distinct spelling is normalized once (np.unique), so an array of
    100,000 scenarios costs one normalization per distinct value.
    """
    if isinstance(value, str) or not isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray(vocabulary.index(normalize(value)))
    arr, keys = as_choice_array(name, value)
    if arr.ndim == 0:
        return np.asarray(vocabulary.index(normalize(arr.item())))
    uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    flat = arr.ravel()
    codes = np.array([vocabulary.index(normalize(flat[i])) for i in first], dtype=np.int64)
    return codes[inv].reshape(arr.shape)


def _reuse(value):
    """Key reuse as floats (inf = unlimited), with the spelling rules of normalize_key_reuse."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray(normalize_key_reuse(value))
    arr, keys = as_choice_array("key_reuse", value)
    if arr.ndim == 0:
        return np.asarray(normalize_key_reuse(arr.item()))
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    flat = arr.ravel()
    vals = np.array([normalize_key_reuse(flat[i]) for i in first], dtype=float)
    return vals[inv].reshape(arr.shape)


def _keys(key_type, key_size):
    """(is_ecc, bits) arrays after checking every (type, size) pair against the supported sizes."""
    kt = _codes("key_type", key_type, normalize_key_type, KEY_TYPES)
    if kt.ndim == 0 and not isinstance(key_size, (list, tuple, np.ndarray)):
        return np.asarray(bool(kt == 1)), np.asarray(float(normalize_key(KEY_TYPES[int(kt)], key_size)[1]))
    size, size_keys = as_choice_array("key_size", key_size)
    kt, size, size_keys = np.broadcast_arrays(kt, size, size_keys)
    pairs = np.char.add(np.char.add(kt.astype(str), ":"), size_keys)
    _, first, inv = np.unique(pairs, return_index=True, return_inverse=True)
    flat_t, flat_s = kt.ravel(), size.ravel()
    bits = np.array([normalize_key(KEY_TYPES[int(flat_t[i])], flat_s[i])[1] for i in first],
                    dtype=float)
    return kt == 1, bits[inv].reshape(kt.shape)


def _measured(value, key):
    """``value``, or the measured configuration's count when it is None."""
    if value is None:
        return figure(_MEASURED[key]).target()
    return value


@dataclass(frozen=True)
class _Workload:
    """Validated, broadcast inputs of one or many AMS scenarios (arrays of one shape)."""

    policy: np.ndarray      # int codes into POLICIES
    ecc: np.ndarray         # bool
    bits: np.ndarray
    kb: np.ndarray
    reuse: np.ndarray       # inf = unlimited
    recipients: np.ndarray
    platform: np.ndarray    # int codes into AMS_PLATFORMS
    generation: np.ndarray  # int codes into CARD_GENERATIONS
    cache: dict = field(default_factory=dict, compare=False, repr=False)   # figures-only arrays

    def factors(self):
        """(mq, ams) platform factors: read from the figures, once per figures table."""
        key = ("factors", table_in_force())
        got = self.cache.get(key)
        if got is None:
            got = self.cache[key] = _factors(self.policy, self.kb, self.platform)
        return got


def _workload(policy, key_type, key_size, message_kb, key_reuse=None, recipients=1, platform="z16",
              card_generation="CEX8S"):
    pol = _codes("policy", policy, normalize_policy, POLICIES)
    ecc, bits = _keys(key_type, key_size)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    k = _reuse(key_reuse)
    r = np.asarray(RECIPIENTS.check(recipients), dtype=float)
    plat = _codes("platform", platform, lambda v: normalize_choice("platform", v, AMS_PLATFORMS),
                  AMS_PLATFORMS)
    gen = _codes("card_generation", card_generation,
                 lambda v: normalize_choice("card_generation", v, CARD_GENERATIONS), CARD_GENERATIONS)
    pol, ecc, bits, kb, k, r, plat, gen = broadcast(
        policy=pol, key_type=ecc, key_size=bits, message_kb=kb, key_reuse=k, recipients=r, platform=plat,
        card_generation=gen)
    conf = pol == POLICIES.index("confidentiality")
    bad = ~conf & (k != 1.0)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        raise ValueError(f"key_reuse applies to the confidentiality policy only (got "
                         f"{'unlimited' if np.isinf(k[i]) else f'{k[i]:g}'} with {POLICIES[int(pol[i])]}"
                         f"{f' at index {index_text(i)}' if bad.ndim else ''}); leave it empty")
    bad = ecc & (pol != POLICIES.index("integrity"))
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        raise ValueError(f"NISTECC keys support the integrity policy only (got "
                         f"{POLICIES[int(pol[i])]}{f' at index {index_text(i)}' if bad.ndim else ''}): NISTECC "
                         "certificates have no DATAENCRYPT key usage")
    return _Workload(pol, ecc, bits, kb, k, r, plat, gen)


def _count(domain, name, value, key):
    if value is None and key is None:
        value = 1.0
    return np.asarray(domain.check(_measured(value, key), name), dtype=float)


def _other(name, value):
    return np.asarray(OTHER_LPAR_UTIL.check(value, name), dtype=float)


# --------------------------------------------------------------- operations
def _ops(w: _Workload) -> dict:
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
    w = _workload(policy, "RSA", 2048, 0.0, key_reuse, recipients)
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in _ops(w).items()}


def _requests(w: _Workload) -> np.ndarray:
    """Card requests per transaction by card function, shape (4, *shape), order _FUNCTIONS."""
    o = _ops(w)
    rsa = ~w.ecc
    per_msg = np.stack([
        rsa * o["sign"],                                             # CCA_RSA
        rsa * (o["verify"] + o["cert_check"] + o["key_encrypt"]),    # RSA_ME
        rsa * o["key_decrypt"],                                      # RSA_CRT
        w.ecc * (o["sign"] + o["verify"] + o["cert_check"]),         # CCA_ECC
    ])
    return 2.0 * per_msg


def _times(w: _Workload) -> np.ndarray:
    """Card EXEC TIME per request (ms) by card function, shape (4, *shape), on the card generation."""
    return np.stack([np.asarray(function_ms(f, w.bits), dtype=float) for f in _FUNCTIONS]) * _generation(w.generation)


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
        raise ValueError(f"card_generation must be one of {', '.join(CARD_GENERATIONS)} (got {card_generation!r})")
    return float(_generation(CARD_GENERATIONS.index(card_generation)))


def _card_ms(req, t, card) -> np.ndarray:
    """Card time per transaction (ms) at one card type."""
    return np.tensordot(_ON_CARD[card].astype(float), req * t, axes=1)


def ams_card_demands_ms(policy, key_type, key_size, key_reuse=None, recipients=1, card_generation="CEX8S") -> dict:
    """Card time per *transaction* (2 messages), ms, by card and by card function.

    Returns
    -------
    dict
        ``{"coprocessor": ms, "accelerator": ms, "ops": {function: requests per txn}}``
        for one scenario (scalars).
    """
    w = _workload(policy, key_type, key_size, 0.0, key_reuse, recipients, card_generation=card_generation)
    if np.ndim(w.policy):
        raise ValueError("ams_card_demands_ms takes one scenario; use ams_demands for arrays")
    req, t = _requests(w), _times(w)
    return {"coprocessor": float(_card_ms(req, t, "coprocessor")),
            "accelerator": float(_card_ms(req, t, "accelerator")),
            "ops": {f: float(req[i]) for i, f in enumerate(_FUNCTIONS) if req[i] > 0}}


# ------------------------------------------------------------------- CPU model
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

    The 2KB Confidentiality cells (16 -> 13 µs, printed to the microsecond)
    fix their ratio only to about ±7%.

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"} or array_like
    message_kb : float or array_like
        Message size in KB, 0..102400.
    platform : {"z13", "z14", "z15", "z16"} or array_like

    Returns
    -------
    dict
        ``{"mq": r, "ams": r}``: the factor for the MQ work without AMS (and
        the queue manager's MSTR cost) and for the AMS work (interception,
        hashing, encryption, asymmetric-operation handling); floats, or
        arrays of the broadcast shape.

    References
    ----------
    .. [1] IBM, "MQ for z/OS on z14", pp.15-20; "MQ for z/OS on z15", p.25;
       "MQ for z/OS on z16", p.34 (github.com/ibm-messaging/mqperf).
    """
    pol = _codes("policy", policy, normalize_policy, POLICIES)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    plat = _codes("platform", platform, lambda v: normalize_choice("platform", v, AMS_PLATFORMS),
                  AMS_PLATFORMS)
    mq, ams = _factors(pol, kb, plat)
    return {"mq": float(mq) if mq.ndim == 0 else mq, "ams": float(ams) if ams.ndim == 0 else ams}


@lru_cache(maxsize=8)
def _factor_table(table: str) -> dict:
    """(policy code, platform code) -> (sizes KB, mq factors, ams factors), read once per figures table."""
    out = {}
    for p_i, p in enumerate(POLICIES):
        for g_i, g in enumerate(AMS_PLATFORMS):
            if g == "z14":
                out[p_i, g_i] = (np.array([2.0]), np.array([1.0]), np.array([1.0]))
            elif g == "z13":
                sizes = np.array([2.0, 4096.0])
                cells = np.array([figure(f"ref_ams_cost_{t}_{p}_z13").target()
                                  / figure(f"ref_ams_cost_{t}_{p}_z14").target() for t in ("2k", "4m")])
                mq = (figure("ref_ams_txn_cost_2k_none_z13").target()
                      / figure("ref_ams_txn_cost_2k_none_z14").target())
                out[p_i, g_i] = (sizes, np.full(2, mq), cells)
            else:
                sizes = np.array(list(SIZE_CLASSES_KB.values()))
                change = np.array([figure(f"ref_z15_vs_z14_cost_{c}_{p}").target() for c in SIZE_CLASSES_KB])
                out[p_i, g_i] = (sizes, 1.0 + change / 100.0, 1.0 + change / 100.0)
    return out


def _factors(pol, kb, plat):
    """(mq, ams) platform factor arrays for policy codes, sizes and platform codes."""
    table = _factor_table(table_in_force())
    pol, kb, plat = np.broadcast_arrays(pol, kb, plat)
    if pol.ndim == 0:
        sizes, mq, ams = table[int(pol), int(plat)]
        return _log_interp(kb, sizes, mq), _log_interp(kb, sizes, ams)
    mq, ams = np.ones(kb.shape), np.ones(kb.shape)
    combo = pol * len(AMS_PLATFORMS) + plat
    for c in np.unique(combo):          # at most 12 (policy, platform) pairs
        sel = combo == c
        sizes, f_mq, f_ams = table[divmod(int(c), len(AMS_PLATFORMS))]
        mq[sel], ams[sel] = _log_interp(kb[sel], sizes, f_mq), _log_interp(kb[sel], sizes, f_ams)
    return mq, ams


def _log_interp(kb, sizes, values):
    """Piecewise-linear in log size between the published sizes, constant outside them."""
    if sizes.size == 1:
        return np.full(np.shape(kb), float(values[0]))
    x = np.log(np.clip(kb, sizes[0], sizes[-1]))
    return np.interp(x, np.log(sizes), values)


def _mq_us(kb):
    """MQ's own CPU per request/reply transaction without AMS (µs): the measured 2 KB baseline
    plus the copying of the request and reply, per KB beyond the baseline's size.

    .. math:: c_{MQ} = c_{2K} + k\\,(KB - KB_{2K})

    :math:`c_{2K}` is ``mq_base_us`` (row ``ref_ams_txn_cost_2k_none_z14``, 2 KB), :math:`k` the
    fitted ``mq_us_per_kb``: a 4 MB message is moved and copied 2,000 times the bytes of a 2 KB
    one, and the key-size effects at 64 KB and 4 MB (seed 001) are diluted by it.
    """
    kb0 = float(figure("ref_ams_txn_cost_2k_none_z14").conditions["message_kb"])
    return param("mq_base_us") + param("mq_us_per_kb") * (kb - kb0)


def _cpu_parts(w: _Workload) -> dict:
    """CPU µs per transaction by address space, without MSTR's per-second cost; and that cost (µs/s)."""
    o = _ops(w)
    integ = w.policy == POLICIES.index("integrity")
    priv = w.policy == POLICIES.index("privacy")
    sign = (integ | priv).astype(float)
    enc = (~integ).astype(float)
    g_mq, g_ams = w.factors()
    per_msg = param("ams_msg_us") + w.kb * (sign * param("ams_hash_us_per_kb") + enc * param("ams_enc_us_per_kb"))
    amsm = (o["sign"] + o["verify"]) * param("ams_sig_op_us") + (o["key_encrypt"] + o["key_decrypt"]) * param("ams_key_op_us")
    mq = _mq_us(w.kb)                                              # the MQPUTs and MQGETs themselves
    return {"application": g_mq * mq + g_ams * 2.0 * per_msg,
            "AMSM": g_ams * 2.0 * amsm,
            "mstr_per_s": g_mq * param("mstr_admin_us_per_s")}


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
    return AmsWorkload(policy, "RSA", 2048, message_kb, key_reuse, recipients, platform).message_cost_us()


# ------------------------------------------------------------------- demands
def _demands(w: _Workload, processors, cop_other, acc_other) -> dict:
    """Station demands (ms per transaction) and what the open and closed answers need."""
    req, t = _requests(w), _times(w)
    parts = _cpu_parts(w)
    cpu_ms = (parts["application"] + parts["AMSM"]) / 1000.0
    background = parts["mstr_per_s"] / 1e6        # processors kept busy by MSTR administration
    return {"req": req, "t": t, "cpu_us": parts, "cpu_ms": cpu_ms, "background": background,
            "cop_ms": _card_ms(req, t, "coprocessor"), "acc_ms": _card_ms(req, t, "accelerator"),
            "path_ms": param("ams_fixed_ms") + req.sum(axis=0) * param("crypto_call_ms"),
            "processors": processors, "cop_other": cop_other, "acc_other": acc_other}


def ams_demands(policy, key_type, key_size, message_kb, key_reuse=None, recipients=1, platform="z16",
                card_generation="CEX8S") -> dict:
    """Per-transaction demands of the AMS network's stations (ms), vectorized.

    Returns
    -------
    dict
        ``path_ms`` (delay station: :math:`z + n_{req} t_{call}`), ``cpu_ms``
        (general-processor time without MSTR's per-second cost),
        ``coprocessor_ms`` and ``accelerator_ms`` (card EXEC TIME),
        ``mstr_us_per_s`` (MSTR administration CPU per second) and
        ``requests`` (``{function: requests per transaction}``); floats or
        arrays of the broadcast shape.
    """
    return AmsWorkload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform,
                       card_generation).demands()


def _demand_table(d) -> dict:
    """The public view (:func:`ams_demands`) of :func:`_demands`' dict."""
    return {"path_ms": d["path_ms"], "cpu_ms": d["cpu_ms"], "coprocessor_ms": d["cop_ms"],
            "accelerator_ms": d["acc_ms"], "mstr_us_per_s": d["cpu_us"]["mstr_per_s"],
            "requests": {f: d["req"][i] for i, f in enumerate(_FUNCTIONS)}}


def _scalars(obj):
    if isinstance(obj, dict):
        return {k: _scalars(v) for k, v in obj.items()}
    a = np.asarray(obj)
    return float(a) if a.ndim == 0 and a.dtype.kind == "f" else (a.item() if a.ndim == 0 else a)


# ------------------------------------------------------------------ closed network
def _closed_stations(d):
    """(think ms, demands (3, ...), servers (3, ...)) of the closed network, capacity-adjusted."""
    p = d["processors"]
    if np.any(d["background"] >= p):
        raise UnstableQueueError("general processors: MQ MSTR administration alone needs "
                                 f"{float(np.max(d['background'])):.2f} processors; give more processors")
    cpu = d["cpu_ms"] / (1.0 - d["background"] / p)
    cop = d["cop_ms"] / (1.0 - d["cop_other"])
    acc = d["acc_ms"] / (1.0 - d["acc_other"])
    return d["path_ms"], np.stack(np.broadcast_arrays(cpu, cop, acc))


def _stations_to(a, shape):
    """Broadcast a (3, *s) per-station array to (3, *shape), aligning the scenario axes on the right."""
    a = np.asarray(a, dtype=float)
    return np.broadcast_to(a.reshape((3,) + (1,) * (len(shape) - (a.ndim - 1)) + a.shape[1:]), (3, *shape))


def _closed_x(d, n, servers) -> np.ndarray:
    """Throughput (txn/s) of ``n`` requesters: closed form at 1, exact MVA per distinct network above."""
    z, dem = _closed_stations(d)
    shape = np.broadcast_shapes(np.shape(z), np.shape(n), dem.shape[1:], servers.shape[1:])
    z, n = np.broadcast_to(z, shape), np.broadcast_to(n, shape)
    dem, servers = _stations_to(dem, shape), _stations_to(servers, shape)
    x = np.array(1000.0 / (z + dem.sum(axis=0)), dtype=float, ndmin=1).reshape(shape)
    many = n > 1
    if many.any():
        rows = np.column_stack([n[many], z[many], *dem[:, many], *servers[:, many]])
        uniq, inv = np.unique(rows, axis=0, return_inverse=True)
        xs = np.empty(len(uniq))
        for i, row in enumerate(uniq):           # one exact MVA per distinct network
            # exact MVA, stopped once saturated, within its cost budget (model.mva.mva_throughput)
            xs[i] = 1000.0 * mva_throughput(int(row[0]), row[2:5], row[5:8], float(row[1]))
        x = np.array(x, dtype=float)
        x[many] = xs[inv.ravel()]
    return x


def _servers(processors, coprocessors, accelerators):
    return np.stack(np.broadcast_arrays(processors, coprocessors, accelerators))


def ams_throughput(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                   coprocessors=None, accelerators=None, recipients=1, processors=None, platform="z16",
                   other_coprocessor_util=0.0, other_accelerator_util=0.0, card_generation="CEX8S"):
    """AMS request/reply transactions per second of *N* requesters (closed network).

    One requester waits for each reply before the next request, so

    .. math:: X(1) = \\frac{1}{z + n_{req} t_{call} + D_{cpu} + D_{cop} + D_{acc}}

    and for :math:`N > 1` exact MVA over the processors, coprocessors and
    accelerators as multi-server stations (Reiser and Lavenberg, load-dependent
    with marginal probabilities: :func:`cryptoplan.model.queueing.mva.mva`).  The rate never
    exceeds what the processors or cards can serve:
    :math:`X \\le \\min(P/D_{cpu}, c/D_{cop}, a/D_{acc})`.

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
        the configuration seed 001 measured (2 and 1, ``data/figures.csv``).
    recipients : int
        Recipients per message (1..10,000).
    processors : int, optional
        General processors of the LPAR (1..256).  None: the 3 dedicated CPs of
        the MQ for z/OS performance reports' LPAR (row ``ref_start_cfg_cps``).
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation of the processors (the CPU demand; card times are
        Crypto Express 8S's, seed 001's z16).
    other_coprocessor_util, other_accelerator_util : float
        Fraction of each shared card other LPARs keep busy, [0, 1).
    card_generation : {"CEX6S", "CEX7S", "CEX8S"}
        Crypto Express generation (:func:`_generation`): card times are CEX8S's.

    Returns
    -------
    float or ndarray
        Transactions per second.
    """
    return AmsWorkload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform,
                       card_generation).throughput(requesters, coprocessors, accelerators, processors,
                                                   other_coprocessor_util, other_accelerator_util)


def ams_bottleneck(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                   coprocessors=None, accelerators=None, recipients=1, processors=None, platform="z16",
                   other_coprocessor_util=0.0, other_accelerator_util=0.0, card_generation="CEX8S"):
    """The resource that caps the closed network's throughput: the largest demand per server.

    .. math:: \\arg\\max_k D_k / m_k, \\qquad X(N) \\to \\min_k m_k / D_k \\; (N \\to \\infty)

    Returns ``"processors"``, ``"coprocessors"`` or ``"accelerators"`` (a str,
    or an array of them), whatever N: with few requesters the path, not a
    resource, limits the rate, but adding requesters meets this one first.
    Arguments as :func:`ams_throughput`.
    """
    w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform, card_generation)
    _count(REQUESTERS, "requesters", requesters, None)
    servers = _servers(_count(PROCESSORS, "processors", processors, "processors"),
                       _count(CARDS, "coprocessors", coprocessors, "coprocessors"),
                       _count(CARDS, "accelerators", accelerators, "accelerators"))
    d = _demands(w, servers[0], _other("other_coprocessor_util", other_coprocessor_util),
                 _other("other_accelerator_util", other_accelerator_util))
    _, dem = _closed_stations(d)
    shape = np.broadcast_shapes(dem.shape[1:], servers.shape[1:])
    dem, servers = _stations_to(dem, shape), _stations_to(servers, shape)
    out = np.asarray(RESOURCES)[np.argmax(dem / servers, axis=0)]
    return str(out) if out.ndim == 0 else out


def ams_cost_us(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                coprocessors=None, accelerators=None, recipients=1, address_space="total",
                platform="z16", processors=None, other_coprocessor_util=0.0, other_accelerator_util=0.0,
                card_generation="CEX8S"):
    """CPU per AMS transaction (µs) at the rate *N* requesters reach (closed loop).

    What seed 001 measured: MSTR's administration CPU per second
    :math:`O_{MSTR}` spread over the closed-loop throughput
    :math:`X(N)` of :func:`ams_throughput`,

    .. math:: c = c_{app} + c_{AMSM} + O_{MSTR} / X(N)

    so it equals :func:`ams_cost_at_rate_us` at ``tx_rate`` = X(N) and differs
    from it at any other rate by :math:`O_{MSTR}(1/X(N) - 1/\\lambda)` only.

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
        CPACF, AMSM) are multiplied by :func:`ams_platform_factors`.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    float or ndarray
        CPU microseconds per transaction.
    """
    x = ams_throughput(policy, key_type, key_size, message_kb, key_reuse, requesters, coprocessors,
                       accelerators, recipients, processors, platform, other_coprocessor_util,
                       other_accelerator_util, card_generation)
    return ams_cost_at_rate_us(x, policy, key_type, key_size, message_kb, key_reuse, recipients,
                               address_space, platform)


def _space(address_space):
    return _codes("address_space", address_space,
                  lambda v: normalize_choice("address_space", v, AMS_ADDRESS_SPACES), AMS_ADDRESS_SPACES)


def ams_cost_at_rate_us(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None, recipients=1,
                        address_space="total", platform="z16"):
    """CPU per AMS transaction (µs) at a planned rate, in total or by address space.

    .. math:: c(\\lambda) = c_{app} + c_{AMSM} + O_{MSTR} / \\lambda

    Parameters
    ----------
    tx_rate : float or array_like
        Planned transactions (request/reply) per second, > 0.
    address_space : {"total", "application", "AMSM", "MSTR"}
        As :func:`ams_cost_us`.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    float or ndarray
        CPU microseconds per transaction at ``tx_rate``.  Whether the
        processors can carry the rate is :func:`ams_plan`'s question.
    """
    lam = PLANNED_TX_RATE.check(tx_rate)
    return AmsWorkload(policy, key_type, key_size, message_kb, key_reuse, recipients,
                       platform).cost_at_rate_us(lam, address_space)


# ------------------------------------------------------------ a workload, validated once
class AmsWorkload:
    """AMS scenarios whose inputs are validated once and evaluated under any parameter set.

    The functions :func:`ams_throughput`, :func:`ams_cost_at_rate_us`,
    :func:`ams_demands` and :func:`ams_message_cost_us` build one of these and
    ask it one question.  A caller that asks the same scenarios many questions,
    or the same questions under many parameter sets (the fit, calibration),
    builds it once: the policies, keys, sizes and platforms are normalized and
    checked here, and the figures-only quantities (platform factors) are read
    once per figures table; each method reads the parameters in force when it
    is called (:func:`cryptoplan.model.params.param`).

    Parameters
    ----------
    policy, key_type, key_size, message_kb, key_reuse, recipients, platform, card_generation
        As :func:`ams_throughput`; arrays broadcast together.

    Examples
    --------
    >>> w = AmsWorkload(["integrity", "privacy"], "RSA", 2048, 2.0)
    >>> bool(np.all(w.throughput() > 0))
    True
    """

    def __init__(self, policy, key_type, key_size, message_kb, key_reuse=None, recipients=1, platform="z16",
                 card_generation="CEX8S"):
        self._w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform,
                            card_generation)

    @property
    def shape(self) -> tuple:
        """Broadcast shape of the scenarios (``()`` for one)."""
        return self._w.policy.shape

    def demands(self) -> dict:
        """Per-transaction station demands, as :func:`ams_demands` returns them."""
        return _scalars(_demand_table(_demands(self._w, None, 0.0, 0.0)))

    def _closed(self, requesters, coprocessors, accelerators, processors, other_cop, other_acc):
        """(demands dict, throughput array) of the closed network, arguments checked."""
        n = _count(REQUESTERS, "requesters", requesters, None)
        servers = _servers(_count(PROCESSORS, "processors", processors, "processors"),
                           _count(CARDS, "coprocessors", coprocessors, "coprocessors"),
                           _count(CARDS, "accelerators", accelerators, "accelerators"))
        d = _demands(self._w, servers[0], _other("other_coprocessor_util", other_cop),
                     _other("other_accelerator_util", other_acc))
        return d, _closed_x(d, n, servers)

    def throughput(self, requesters=1, coprocessors=None, accelerators=None, processors=None,
                   other_coprocessor_util=0.0, other_accelerator_util=0.0):
        """Transactions per second of *N* requesters, as :func:`ams_throughput`."""
        _, x = self._closed(requesters, coprocessors, accelerators, processors, other_coprocessor_util,
                            other_accelerator_util)
        return float(x) if x.ndim == 0 else x

    def closed_loop(self, requesters=1, coprocessors=None, accelerators=None, processors=None,
                    other_coprocessor_util=0.0, other_accelerator_util=0.0) -> dict:
        """Throughput of *N* requesters, the total CPU per transaction at it, and the demands.

        One evaluation of the network for the three answers :func:`ams_throughput`,
        :func:`ams_cost_us` (``address_space="total"``) and :func:`ams_demands` give
        separately: ``{"throughput": txn/s, "cost_us": µs, "demands": dict}``.
        """
        d, x = self._closed(requesters, coprocessors, accelerators, processors, other_coprocessor_util,
                            other_accelerator_util)
        parts = d["cpu_us"]
        cost = parts["application"] + parts["AMSM"] + parts["mstr_per_s"] / x
        return _scalars({"throughput": x, "cost_us": cost, "demands": _demand_table(d)})

    def cost_at_rate_us(self, tx_rate, address_space="total"):
        """CPU µs per transaction at ``tx_rate`` (txn/s, > 0), as :func:`ams_cost_at_rate_us`."""
        lam = np.asarray(PLANNED_TX_RATE.check(tx_rate), dtype=float)
        parts = _cpu_parts(self._w)
        mstr = parts["mstr_per_s"] / lam
        space = _space(address_space)
        table = np.stack(np.broadcast_arrays(parts["application"] + parts["AMSM"] + mstr,
                                             parts["application"], parts["AMSM"], mstr))
        space = np.broadcast_to(space, table.shape[1:])
        out = np.take_along_axis(table, space[None].astype(np.int64), axis=0)[0]
        return float(out) if out.ndim == 0 else out

    def card_requests(self) -> tuple:
        """Card requests per transaction and EXEC TIME per request (ms), by card function.

        Returns
        -------
        (requests, exec_ms) : tuple of ndarray
            Each shaped ``(4, *shape)``, rows in the order of
            :data:`cryptoplan.model.zos.crypto.CARD_FUNCTIONS` (CCA_RSA, RSA_ME, RSA_CRT,
            CCA_ECC); times on the workload's card generation.  What :func:`ams_plan`
            adds up per card type.
        """
        return _requests(self._w), _times(self._w)

    def cpu_parts_us(self) -> dict:
        """CPU µs per transaction by address space, without MSTR's administration, and that (µs/s).

        ``{"application", "AMSM", "mstr_per_s"}``: what :func:`ams_plan` charges the
        processors (``mstr_per_s`` once per second, whatever the rate).
        """
        return _cpu_parts(self._w)

    def message_cost_us(self):
        """AMS CPU µs to protect and unprotect one message, as :func:`ams_message_cost_us`."""
        parts = _cpu_parts(self._w)
        g_mq, _ = self._w.factors()
        out = (parts["application"] - g_mq * _mq_us(self._w.kb) + parts["AMSM"]) / 2.0
        return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------ open network
def _scv(req, t, card) -> np.ndarray:
    """Squared coefficient of variation of the service time of a card type's request mix.

    Each function's time is constant (seed 001: EXEC TIME "remains similar
    regardless of message size"), so the mix is a discrete distribution:

    .. math:: c_s^2 = \\frac{\\sum_f p_f t_f^2}{(\\sum_f p_f t_f)^2} - 1, \\qquad
              p_f = n_f / \\sum_g n_g
    """
    on = _ON_CARD[card].astype(float)
    n = np.tensordot(on, req, axes=1)
    m1 = np.tensordot(on, req * t, axes=1)
    m2 = np.tensordot(on, req * t * t, axes=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.maximum(m2 * n / np.where(m1 > 0, m1 * m1, 1.0) - 1.0, 0.0), 0.0)


def _mgc(lam, s, c, scv):
    """M/G/c mean wait (s): Cosmetatos for scv <= 1, Allen-Cunneen above (see model.mgc)."""
    return mgc_wait_by_scv(lam, s, c, scv)


def _card_wait_ms(lam, per_txn, card_ms, other, cards, scv):
    """Mean queueing per transaction (ms) at one card type: M/G/c on this LPAR's requests and
    other LPARs' (taken at the same mean service time, so that their utilization is ``other``).

    .. math:: \\lambda_{tot} = \\lambda n \\frac{\\lambda D + u_{other} c}{\\lambda D}, \\qquad
              W = n\\, W_q^{M/G/c}(\\lambda_{tot}, D / n, c_s^2)
    """
    own = lam * card_ms / 1000.0                       # cards' worth of this LPAR's work
    with np.errstate(invalid="ignore", divide="ignore"):
        s_ms = np.where(per_txn > 0, card_ms / np.where(per_txn > 0, per_txn, 1.0), 0.0)
        total = np.where(own > 0, lam * per_txn * (own + other * cards) / np.where(own > 0, own, 1.0), 0.0)
    return _mgc(total, s_ms / 1000.0, cards, scv) * per_txn * 1000.0


@dataclass(frozen=True)
class AMSPlan:
    """The open network at a planned rate (arrays shaped like the broadcast inputs; ms, µs, fractions).

    Attributes
    ----------
    tx_rate : planned transactions per second.
    cost_us : CPU µs per transaction by address space ({"total", "application", "AMSM", "MSTR"}),
        MSTR's per-second cost spread over ``tx_rate``.
    processors_busy : general processors busy (CPU seconds per second), MSTR's administration included.
    processor_utilization : ``processors_busy / processors``.
    coprocessor_utilization, accelerator_utilization : RMF summary utilization per card
        (requests x EXEC TIME / cards), other LPARs' load included.
    accelerator_me_utilization, accelerator_crt_utilization : RMF's by-function rows (this LPAR).
    coprocessor_rate, accelerator_me_rate, accelerator_crt_rate : requests per second (this LPAR).
    coprocessor_exec_ms, accelerator_exec_ms : mean EXEC TIME per request, as RMF's average.
    coprocessor_scv, accelerator_scv : squared coefficient of variation of the request mix's service.
    processor_wait_ms, coprocessor_wait_ms, accelerator_wait_ms : queueing per transaction.
    response_ms : path + CPU + card time + waits, one transaction.
    processors_required, coprocessors_required, accelerators_required : smallest counts meeting
        ``max_utilization`` (0 cards when the workload sends none).
    bottleneck : the resource with the highest utilization.
    """

    tx_rate: np.ndarray
    cost_us: dict
    processors_busy: np.ndarray
    processor_utilization: np.ndarray
    coprocessor_utilization: np.ndarray
    accelerator_utilization: np.ndarray
    accelerator_me_utilization: np.ndarray
    accelerator_crt_utilization: np.ndarray
    coprocessor_rate: np.ndarray
    accelerator_me_rate: np.ndarray
    accelerator_crt_rate: np.ndarray
    coprocessor_exec_ms: np.ndarray
    accelerator_exec_ms: np.ndarray
    coprocessor_scv: np.ndarray
    accelerator_scv: np.ndarray
    processor_wait_ms: np.ndarray
    coprocessor_wait_ms: np.ndarray
    accelerator_wait_ms: np.ndarray
    response_ms: np.ndarray
    processors_required: np.ndarray
    coprocessors_required: np.ndarray
    accelerators_required: np.ndarray
    bottleneck: np.ndarray


# The most cards or processors a required-count function answers with: more means a unit mistake.
MAX_REQUIRED = 10000


def _whole(k, what, lam):
    """Required counts as integers; above MAX_REQUIRED (or overflowing) a ValueError naming tx_rate."""
    k = np.asarray(k, dtype=float)
    bad = ~(k <= MAX_REQUIRED)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        lam = np.broadcast_to(np.asarray(lam, dtype=float), k.shape)
        raise ValueError(f"more than {MAX_REQUIRED:,} {what} would be needed at tx_rate {float(lam[i]):g}/s"
                         f"{f' (at index {index_text(i)})' if bad.ndim else ''}: check tx_rate (transactions per "
                         "second) and the targets")
    out = k.astype(np.int64)
    return int(out) if out.ndim == 0 else out


def _needed(load, other, max_u):
    """Smallest whole count k >= 1 with load / k + other <= max_u (load in servers' worth)."""
    room = max_u - other
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.ceil(load / np.where(room > 0, room, np.nan) - 1e-12)
    return np.where(load > 0, np.maximum(k, 1.0), 0.0)


def _overload(name, util, count, needed, lam, unit):
    """Raise UnstableQueueError naming the resource, its utilization and how many are needed.

    For arrays the error names the busiest element and carries the mask of overloaded
    elements and each one's own (scalar-call) message.
    """
    bad = util >= 1.0
    if not bad.any():
        return
    util, count, needed, lam = np.broadcast_arrays(util, count, needed, lam)

    def message(u: float, c: float, k: float, rate: float, where: str = "") -> str:
        busy = f"{u:.0%} busy" if u < 100.0 else "more than 100 times as busy as they can be"
        more = (f"{int(k):,} {unit} needed to stay below 100%" if k <= MAX_REQUIRED
                else f"more than {MAX_REQUIRED:,} {unit} would be needed: check tx_rate (transactions per second)")
        return (f"{name} would be {busy} at tx_rate {rate:g}/s with "
                f"{c:g} {unit}{where}: the rate cannot be carried; {more}")
    # element values as Python floats, flat: a sweep asks for one message per failing element
    u, c, k, rate = (np.asarray(a, dtype=float).ravel().tolist() for a in (util, count, needed, lam))
    if util.ndim == 0:
        raise UnstableQueueError(message(u[0], c[0], k[0], rate[0]))
    i = int(np.argmax(np.where(bad, util, -1.0)))
    where = f" (at index {index_text(np.unravel_index(i, util.shape))})"
    said: dict = {}     # elements of a sweep repeat (u, c, k, rate): each message is made once

    def element_message(j: int) -> str:
        key = (u[j], c[j], k[j], rate[j])
        return said.get(key) or said.setdefault(key, message(*key))
    raise UnstableQueueError(message(u[i], c[i], k[i], rate[i], where), mask=bad,
                             element_message=element_message)


def ams_plan(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None, recipients=1,
             processors=None, coprocessors=None, accelerators=None, platform="z16",
             other_coprocessor_util=0.0, other_accelerator_util=0.0, max_utilization=0.7,
             service_scv=None, card_generation="CEX8S") -> AMSPlan:
    """The AMS network at a planned transaction rate (open): CPU, utilizations, waits, counts needed.

    Per resource with :math:`m` servers and demand :math:`D` per transaction:

    .. math::

        U = \\frac{\\lambda D}{m} + u_{other}, \\qquad
        W_q = W_q^{M/G/m}(\\lambda_{total}, \\bar s, c_s^2), \\qquad
        m_{req} = \\min\\{k : \\lambda D / k + u_{other} \\le U_{max}\\}

    Processors carry the transactions' CPU and MSTR's administration
    (:math:`O_{MSTR}/10^6` processors); their wait is M/M/m on the CPU per
    transaction (a coarse view: a transaction's CPU is several dispatches).
    Cards are RMF's: utilization = requests x EXEC TIME per card; their wait
    is M/G/m with the service-time SCV of the request mix (:func:`_scv`)
    unless ``service_scv`` is given, other LPARs' requests taken at the same
    mean service time.

    Parameters
    ----------
    tx_rate : float or array_like
        Planned transactions per second, > 0.
    processors, coprocessors, accelerators : int, optional
        As :func:`ams_throughput`.
    max_utilization : float
        Target ceiling for the ``*_required`` counts, (0, 1).
    service_scv : float, optional
        Card service-time SCV to use instead of the mix's, >= 0.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    AMSPlan

    Raises
    ------
    UnstableQueueError
        If the processors or either card type would be 100% busy or more: the
        message names the resource and how many would carry the rate.
    """
    lam = np.asarray(PLANNED_TX_RATE.check(tx_rate), dtype=float)
    w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform, card_generation)
    procs = _count(PROCESSORS, "processors", processors, "processors")
    cops = _count(CARDS, "coprocessors", coprocessors, "coprocessors")
    accs = _count(CARDS, "accelerators", accelerators, "accelerators")
    cop_o = _other("other_coprocessor_util", other_coprocessor_util)
    acc_o = _other("other_accelerator_util", other_accelerator_util)
    u_max = np.asarray(MAX_UTILIZATION.check(max_utilization), dtype=float)
    scv_in = None if service_scv is None else np.asarray(SERVICE_SCV.check(service_scv), float)
    d = _demands(w, procs, cop_o, acc_o)
    lam, procs, cops, accs, cop_o, acc_o, u_max = np.broadcast_arrays(
        lam, procs, cops, accs, cop_o, acc_o, u_max, np.empty(np.shape(d["cpu_ms"])))[:7]
    req, t = d["req"], d["t"]
    req, t = np.broadcast_to(req, (4, *lam.shape)), np.broadcast_to(t, (4, *lam.shape))

    busy = lam * d["cpu_ms"] / 1000.0 + d["background"]
    u_cpu = busy / procs
    load_cop = lam * d["cop_ms"] / 1000.0
    load_acc = lam * d["acc_ms"] / 1000.0
    u_cop = load_cop / cops + cop_o
    u_acc = load_acc / accs + acc_o
    _overload("general processors", u_cpu, procs, _needed(busy, 0.0, 1.0 - 1e-9), lam, "processors")
    _overload("coprocessors", u_cop, cops, _needed(load_cop, cop_o, 1.0 - 1e-9), lam, "coprocessors")
    _overload("accelerators", u_acc, accs, _needed(load_acc, acc_o, 1.0 - 1e-9), lam, "accelerators")
    too_busy = [(n, o) for n, o in (("coprocessor", cop_o), ("accelerator", acc_o)) if np.any(o >= u_max)]
    if too_busy:
        n, o = too_busy[0]
        raise ValueError(f"other_{n}_util ({float(np.max(o)):g}) leaves no room below max_utilization "
                         f"({float(np.min(u_max)):g}): no number of shared {n}s meets the target")

    n_cop = np.tensordot(_ON_CARD["coprocessor"].astype(float), req, axes=1)
    n_acc = np.tensordot(_ON_CARD["accelerator"].astype(float), req, axes=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s_cop = np.where(n_cop > 0, d["cop_ms"] / np.where(n_cop > 0, n_cop, 1.0), 0.0)
        s_acc = np.where(n_acc > 0, d["acc_ms"] / np.where(n_acc > 0, n_acc, 1.0), 0.0)
    scv_cop = _scv(req, t, "coprocessor") if scv_in is None else np.broadcast_to(scv_in, lam.shape)
    scv_acc = _scv(req, t, "accelerator") if scv_in is None else np.broadcast_to(scv_in, lam.shape)

    w_cop = _card_wait_ms(lam, n_cop, d["cop_ms"], cop_o, cops, scv_cop)
    w_acc = _card_wait_ms(lam, n_acc, d["acc_ms"], acc_o, accs, scv_acc)
    # processors: the transactions' CPU as one M/M/m job each, MSTR's load added at the same mean
    cpu_s = d["cpu_ms"] / 1000.0
    with np.errstate(invalid="ignore", divide="ignore"):
        lam_cpu = np.where(cpu_s > 0, busy / np.where(cpu_s > 0, cpu_s, 1.0), 0.0)
    w_cpu = _mgc(lam_cpu, cpu_s, procs, 1.0) * 1000.0

    fn = {f: i for i, f in enumerate(_FUNCTIONS)}
    me_rate, crt_rate = lam * req[fn["RSA_ME"]], lam * req[fn["RSA_CRT"]]
    cost = {"application": d["cpu_us"]["application"], "AMSM": d["cpu_us"]["AMSM"],
            "MSTR": d["cpu_us"]["mstr_per_s"] / lam}
    cost["total"] = cost["application"] + cost["AMSM"] + cost["MSTR"]
    utils = np.stack([u_cpu, u_cop, u_acc])
    out = dict(
        tx_rate=lam, cost_us={k: cost[k] for k in AMS_ADDRESS_SPACES},
        processors_busy=busy, processor_utilization=u_cpu,
        coprocessor_utilization=u_cop, accelerator_utilization=u_acc,
        accelerator_me_utilization=me_rate * t[fn["RSA_ME"]] / 1000.0 / accs,
        accelerator_crt_utilization=crt_rate * t[fn["RSA_CRT"]] / 1000.0 / accs,
        coprocessor_rate=lam * n_cop, accelerator_me_rate=me_rate, accelerator_crt_rate=crt_rate,
        coprocessor_exec_ms=s_cop, accelerator_exec_ms=s_acc,
        coprocessor_scv=scv_cop, accelerator_scv=scv_acc,
        processor_wait_ms=w_cpu, coprocessor_wait_ms=w_cop, accelerator_wait_ms=w_acc,
        response_ms=d["path_ms"] + d["cpu_ms"] + w_cpu + d["cop_ms"] + d["acc_ms"] + w_cop + w_acc,
        processors_required=_needed(busy, 0.0, u_max),
        coprocessors_required=_needed(load_cop, cop_o, u_max),
        accelerators_required=_needed(load_acc, acc_o, u_max),
        bottleneck=np.asarray(RESOURCES)[np.argmax(utils, axis=0)],
    )
    return AMSPlan(**{k: (_scalars(v) if k != "bottleneck" else (str(v) if np.ndim(v) == 0 else v))
                      for k, v in out.items()})


# ---------------------------------------------------------- per-card functions
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
        raise ValueError(f"rmf_row {fn!r} is an accelerator row of the RMF report; the coprocessor has "
                         "only its summary (rmf_row='summary')")
    lam = np.asarray(TX_RATE.check(tx_rate), dtype=float)
    w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, card_generation=card_generation)
    n = np.asarray(CARDS.check(cards), dtype=float)
    other = _other("other_lpar_util", other_lpar_util)
    req, t = _requests(w), _times(w)
    load = lam * _card_ms(req, t, c) / 1000.0
    u = load / n + other
    _overload(f"{c}s", np.asarray(u), *np.broadcast_arrays(n, _needed(load, other, 1.0 - 1e-9), lam), "cards")
    if fn != "summary":
        i = _FUNCTIONS.index("RSA_ME" if fn == "ME" else "RSA_CRT")
        u = lam * req[i] * t[i] / 1000.0 / n
    u = np.asarray(u, dtype=float)
    return float(u) if u.ndim == 0 else u


def crypto_wait_ms(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                   card="accelerator", cards=1, recipients=1, service_scv=None, other_lpar_util=0.0,
                   card_generation="CEX8S"):
    """Mean queueing delay per *transaction* at one card type (ms), M/G/c.

    Requests queue for ``cards`` servers.  The service time is the mix of the
    card functions the workload sends (e.g. ME 0.046 ms and CRT 0.507 ms on an
    accelerator), whose squared coefficient of variation (:func:`_scv`, 0.7
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
    w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, card_generation=card_generation)
    n = np.asarray(CARDS.check(cards), dtype=float)
    other = _other("other_lpar_util", other_lpar_util)
    req, t = _requests(w), _times(w)
    on = _ON_CARD[c].astype(float)
    per_txn = np.tensordot(on, req, axes=1)
    dem = _card_ms(req, t, c)
    scv = _scv(req, t, c) if service_scv is None else SERVICE_SCV.check(service_scv)
    out = _card_wait_ms(lam, per_txn, dem, other, n, scv)
    out = np.asarray(out, dtype=float)
    return float(out) if out.ndim == 0 else out


def _required(card, tx_rate, policy, key_type, key_size, message_kb, key_reuse, max_utilization,
              max_wait_ms, recipients, service_scv, other_lpar_util, card_generation):
    c = _card(card)
    lam = np.asarray(TX_RATE.check(tx_rate), dtype=float)
    w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, card_generation=card_generation)
    u_max = MAX_UTILIZATION.check(max_utilization, scalar=True)
    w_max = (None if max_wait_ms is None
             else MAX_WAIT_MS.check(max_wait_ms, scalar=True))
    scv_in = None if service_scv is None else SERVICE_SCV.check(service_scv)   # used with w_max only
    other = _other("other_lpar_util", other_lpar_util)
    if np.any(other >= u_max):
        raise ValueError(f"other_lpar_util ({float(np.max(other)):g}) leaves no room below max_utilization "
                         f"({u_max:g}): no number of shared {c}s meets the target")
    req, t = _requests(w), _times(w)
    on = _ON_CARD[c].astype(float)
    per_txn = np.tensordot(on, req, axes=1)
    dem = _card_ms(req, t, c)
    lam, per_txn, dem, other = np.broadcast_arrays(lam, per_txn, dem, other)
    with np.errstate(over="ignore", invalid="ignore"):
        load = lam * dem / 1000.0
        k = _needed(load, other, u_max)
    _whole(k, f"{c}s", lam)   # before the wait search: a unit mistake is named, not iterated
    if w_max is not None:
        scv = np.broadcast_to(_scv(req, t, c) if scv_in is None else scv_in, lam.shape)
        for _ in range(10000):   # add a card where the wait target is missed, all scenarios at once
            wait = _card_wait_ms(lam, per_txn, dem, other, np.maximum(k, 1.0), scv)
            miss = (k > 0) & (wait > w_max)
            if not miss.any():
                break
            k = k + miss
            if np.any(k > MAX_REQUIRED):
                break
    return _whole(k, f"{c}s", lam)


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
    w = _workload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform)
    u_max = MAX_UTILIZATION.check(max_utilization, scalar=True)
    parts = _cpu_parts(w)
    with np.errstate(over="ignore", invalid="ignore"):
        busy = (lam * (parts["application"] + parts["AMSM"]) + parts["mstr_per_s"]) / 1e6
        k = np.maximum(_needed(busy, 0.0, u_max), 1.0)
    return _whole(k, "processors", lam)
