"""TLS on MQ channels and in handshakes: round trip, channel start/stop, handshake and OCSP factors.

Round trip (seed 002, TLS_CHACHA20_POLY1305_SHA256, software cipher).  MQ
with System SSL encrypts on SSL tasks while dispatchers send (a pipeline), so
its round trip grows linearly with size, and every message crosses from a
dispatcher to an SSL task and back, a fixed cost of its own; the AT-TLS SRB
encrypts *then* sends on the same socket, in line (no task switch), and its
blocking disturbs the congestion window, which adds a term growing faster
than linearly:

.. math::

    RT_{SSLCIPH} = r_S + a\\,\\mathrm{KB}, \\qquad
    RT_{ATTLS} = r_A + b\\,\\mathrm{KB} + q\\,\\mathrm{KB}^2,

fitted by least squares on the relative error to the ten published times
(:func:`cryptoplan.model.calibration.roundtrip.fit_roundtrip`, stored in the parameter file by
``cryptoplan fit``).  Only the software cipher was measured; hardware
ciphers raise ValueError rather than extrapolate.

Channel starts, stops, handshakes and OCSP are published as rates, costs and
ratios; the functions below compute them from the rows of
``data/figures.csv`` (ids in each docstring) so a planner can apply them to
a baseline of their own.

References
----------
.. [1] A. Sharkey, "MQ for z/OS using AT-TLS to provide channel encryption", 2021 (seed 002).
.. [2] C. Nyamful, "z/OS 3.1 Communications Server TLS Performance Update", 2024 (seed 003).
.. [3] z/VM 7.2 performance report, "TLS/SSL Server OCSP Support" (seed 004).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from .._validate import UnstableQueueError
from ..domains import (CARDS, CONNECTION_CPU_US, HANDSHAKE_RATE, MESSAGE_KB, OTHER_LPAR_UTIL, RESUMED_SHARE,
                       ROUNDTRIP_MESSAGE_KB, SSLRKEYC, START_RATE)
from ..figures import figure
from ..params import (CIPHERS, normalize_address_space, normalize_choice, normalize_cipher,
                      normalize_mode, param)

__all__ = ["roundtrip_points", "roundtrip_figure_ids", "ROUNDTRIP_PARAMS", "tls_roundtrip_us", "tls_cost_us",
           "tls_cost_parts_us", "normalize_platform", "renegotiation_cost_us", "channel_start_rate",
           "channel_start_cost_us", "channel_stop_cost_us", "channel_start_card_ms",
           "channel_start_card_utilization", "handshake_card_utilization", "handshake_cpu_factor",
           "handshake_latency_factor",
           "ocsp_cpu_us", "KEY_EXCHANGES", "CIPHER_FAMILIES", "CHANNEL_COST_PARAMS", "PLATFORMS",
           "START_PLATFORMS", "HANDSHAKE_FLIGHTS"]

KEY_EXCHANGES = ("RSA", "ECDHE", "DHE")
_RT_IDS = {"SSLCIPH": "s002_rt_sslciph_{}_us", "ATTLS": "s002_rt_attls_{}_us"}
_RT_TAGS = ("2k", "16k", "32k", "64k", "1m")  # the table's columns; sizes come from the rows


def roundtrip_points() -> list[tuple[str, float, float, str]]:
    """(mode, message KB, published µs, figure id) of every round-trip row (seed 002's table)."""
    out = []
    for mode, pat in _RT_IDS.items():
        for tag in _RT_TAGS:
            f = figure(pat.format(tag))
            out.append((mode, float(f.conditions["message_kb"]), f.target(), f.id))
    return out


ROUNDTRIP_PARAMS = {
    "rt_sslciph_base_us": ("us", "SSLCIPH round trip at zero size (the SSL-task hand-off included)"),
    "rt_attls_base_us": ("us", "AT-TLS round trip at zero size (encryption in line in the SRB)"),
    "rt_sslciph_us_per_kb": ("us/KB", "SSLCIPH round trip per KB (pipelined: linear)"),
    "rt_attls_us_per_kb": ("us/KB", "AT-TLS round trip per KB"),
    "rt_attls_us_per_kb2": ("us/KB^2", "AT-TLS round trip per KB squared (encrypt-then-send)"),
}


def roundtrip_figure_ids() -> list[str]:
    """Ids of the published round-trip rows (seed 002's table)."""
    return [fid for _, _, _, fid in roundtrip_points()]


def tls_roundtrip_us(mode, cipher, message_kb):
    """Request/reply round trip over a channel pair (µs), SSLCIPH vs AT-TLS.

    Parameters
    ----------
    mode : {"SSLCIPH", "ATTLS"}
    cipher : str
        Only TLS_CHACHA20_POLY1305_SHA256 (the software cipher) was measured.
    message_kb : float or array_like
        Message size in KB, 0..1024 (the measured range).

    Returns
    -------
    float or ndarray
        .. math:: r_S + a\\,KB \\;\\text{(SSLCIPH)}, \\qquad r_A + b\\,KB + q\\,KB^2 \\;\\text{(ATTLS)}
    """
    m = normalize_mode(mode)
    c = normalize_cipher(cipher)
    if m == "none":
        raise InputError("mode must be SSLCIPH or ATTLS for tls_roundtrip_us: no unprotected round "
                         "trips are published")
    if CIPHERS[c][1]:
        raise InputError(f"round trips are published for the software cipher "
                         f"TLS_CHACHA20_POLY1305_SHA256 only (got {c}); with hardware ciphers "
                         "Sharkey's AT-TLS channels blog (2021) reports SSLCIPH and AT-TLS round trips as similar and network-bound")
    kb = ROUNDTRIP_MESSAGE_KB.check(message_kb)  # the measured range only
    kb_a = np.asarray(kb, dtype=float)
    if m == "SSLCIPH":
        out = param("rt_sslciph_base_us") + param("rt_sslciph_us_per_kb") * kb_a
    else:
        out = (param("rt_attls_base_us") + param("rt_attls_us_per_kb") * kb_a
               + param("rt_attls_us_per_kb2") * kb_a ** 2)
    return float(out) if out.ndim == 0 else out


# Symmetric-cipher families and the parameter holding their CPU per KB.
CIPHER_FAMILIES = {"null": "tls_sym_us_per_kb_null", "tls12": "tls_sym_us_per_kb_tls12",
                   "tls13hw": "tls_sym_us_per_kb_tls13hw", "tls13sw": "tls_sym_us_per_kb_sw"}


# The parameters a channel's CPU per transaction is linear in (tls_cost_parts_us), in order.
CHANNEL_COST_PARAMS = ("tls_mstr_us", "tls_mstr_us_per_kb", "tls_chin_us", "tls_chin_us_per_kb", "tls_tcpip_us",
                       "tls_tcpip_us_per_kb", "tls_ssl_us", "tls_ssl_us_per_kb", "tls_attls_tcpip_us",
                       *CIPHER_FAMILIES.values())


def _family(cipher: str) -> str:
    proto, hw = CIPHERS[cipher]
    if cipher == "NULL_SHA":
        return "null"
    if proto == "TLS1.3":
        return "tls13hw" if hw else "tls13sw"
    return "tls12"


PLATFORMS = ("z14", "z15", "z16")


def normalize_platform(platform) -> str:
    """Machine generation of a TLS channel cost: z14, z15 or z16 (case-insensitive)."""
    return normalize_choice("platform", platform, PLATFORMS)


def tls_cost_parts_us(mode, cipher, message_kb, platform="z16") -> dict:
    """CPU µs per request/reply transaction by address space (both LPARs), no renegotiation.

    A transaction sends the request and the reply (``message_kb`` each); every
    flow is encrypted by its sender and decrypted by its receiver, so a
    transaction carries :math:`4\\,KB` of symmetric work at :math:`e_f` µs/KB for
    the cipher family *f* (null, TLS 1.2 hardware, TLS 1.3 hardware, TLS 1.3
    software):

    .. math::

        MSTR &= g\\,(m_0 + m_1 KB) \\quad\\text{(any mode: "not affected by the level of encryption")}\\\\
        CHIN &= g\\,\\Big(c_0 + c_1 KB + \\begin{cases} s_0 + s_1 KB + 4 e_f KB & \\text{SSLCIPH}\\\\
                                              2 e_f KB & \\text{AT-TLS (encrypt)}\\end{cases}\\Big)\\\\
        TCPIP &= g\\,\\big(t_0 + t_1 KB + [b_0 + 2 e_f KB]_{\\text{AT-TLS (decrypt in the SRB)}}\\big)

    (seeds 000 and 002: "the cost of encryption is charged to the callers unit
    of work (i.e. the channel initiator) and decryption is incurred by the
    TCPIP address space").  Parameters are fitted by :func:`cryptoplan.model.calibration.fit.fit`.
    Under AT-TLS the channel initiator pays its unprotected cost plus the
    encryption and nothing else: the published figures are relative (AT-TLS
    against SSLCIPH) and cannot tell a fixed AT-TLS cost in CHIN from the
    unprotected CHIN cost, so the model takes the seeds' sentence literally
    rather than leave the unprotected cost undetermined.

    No published figure gives the queue manager alone: the seeds print relative
    changes (MSTR "not affected") and the absolute 32KB costs are totals.  Fitted,
    its two terms had standard errors hundreds of times their values; they are
    fixed at 0 (:func:`cryptoplan.model.calibration.free.derived_parameters`),
    which is what z/OS's accounting leads one to expect: the channels' MQPUT and
    MQGET run as program calls under the channel initiator's tasks, so their CPU
    is charged to CHIN (the caller's home address space), and non-persistent
    messages write no log.  A site parameter file may set them.

    The symmetric costs :math:`e_f` of the hardware ciphers sit beside larger
    per-KB costs in every ratio seed 002 prints, which bounds them only weakly;
    the fit holds them near the CPACF costs the MQ for z/OS on z14 report
    measured for AMS (one AES-256 pass per KB for AES-GCM, an AES and a SHA-256
    pass for AES-CBC with its HMAC, the SHA pass alone for NULL_SHA), within a
    factor 2 (:data:`cryptoplan.model.calibration.free.PRIORS`).

    Platforms: the parameters are those of seed 002's z15 and the z15 report
    (``g = 1``); z14 multiplies everything by the fitted z14/z15 CPU ratio ``g``
    (``tls_z14_vs_z15``, from the reference 32KB rows of both machines); z16 has
    no published per-transaction channel costs and uses the z15 ones (the z16
    report found no significant Crypto Express 8S benefit for MQ TLS, note of
    ``ref_cex7s_vs_cex6s_exec``): an upper estimate on a faster machine.  Seed
    000's relative figures (a z196, z/OS 1.13) are fitted apart, by the same
    costs in a set of their own (``z196_*``, in units of the z196's unprotected
    CHIN cost per transaction), which is descriptive: no planning function
    reads it, and the z196 is never planned on.
    """
    m = normalize_mode(mode)
    plat = normalize_platform(platform)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    g = param("tls_z14_vs_z15") if plat == "z14" else 1.0
    mstr = param("tls_mstr_us") + param("tls_mstr_us_per_kb") * kb
    chin = param("tls_chin_us") + param("tls_chin_us_per_kb") * kb
    tcp = param("tls_tcpip_us") + param("tls_tcpip_us_per_kb") * kb
    if m != "none":
        e = param(CIPHER_FAMILIES[_family(normalize_cipher(cipher))])
        if m == "SSLCIPH":
            chin = chin + param("tls_ssl_us") + (param("tls_ssl_us_per_kb") + 4.0 * e) * kb
        else:
            chin = chin + 2.0 * e * kb
            tcp = tcp + param("tls_attls_tcpip_us") + 2.0 * e * kb
    out = {"MSTR": g * mstr, "CHIN": g * chin, "TCPIP": g * tcp}
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


def renegotiation_cost_us(cipher, message_kb, sslrkeyc, platform="z16"):
    """Channel-initiator CPU per transaction for SSLCIPH secret-key renegotiation (µs).

    Each of the two channels of a request/reply pair sends ``message_kb`` per
    transaction and renegotiates every SSLRKEYC bytes (1..32 KB count as
    32 KB, 0 disables it), at the CPU per negotiation of the reference table
    (rows ``ref_reneg_*``, the platform's column; z15 from the z15 report):

    .. math:: 2\\,\\frac{1024\\,KB}{\\max(SSLRKEYC, 32768)}\\, c_{reneg}

    TLS 1.3 ciphers do not renegotiate at the SSLRKEYC threshold: 0.

    Parameters
    ----------
    sslrkeyc : float
        Bytes, 0..999,999,999 (``ref_sslrkeyc_range``).
    platform : {"z14", "z15", "z16"}
    """
    c = normalize_cipher(cipher)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    rk = SSLRKEYC.check(sslrkeyc, scalar=True)
    plat = normalize_platform(platform)
    if rk == 0 or CIPHERS[c][0] == "TLS1.3":
        out = np.zeros_like(kb)
    else:
        if "ECDHE_ECDSA" in c:
            stem = "ecdhe_ecdsa"
        elif "ECDHE_RSA" in c:
            stem = "ecdhe_rsa"
        elif "GCM" in c:
            stem = "rsa_aes128gcm"
        else:
            stem = "rsa_aes256cbc"
        per_neg_us = figure(f"ref_reneg_{stem}_{plat}_ms").target() * 1000.0
        floor = figure("ref_sslrkeyc_min_effective").target() * 1024.0
        out = 2.0 * kb * 1024.0 / max(rk, floor) * per_neg_us
    return float(out) if out.ndim == 0 else out


def tls_cost_us(mode, cipher, message_kb, address_space=None, sslrkeyc=0, platform="z16"):
    """CPU per MQ channel request/reply transaction (µs), in total or by address space.

    Parameters
    ----------
    mode : {"none", "SSLCIPH", "ATTLS"}
    cipher : str
        IBM cipher name (ignored for mode none).
    message_kb : float or array_like
        Message size in KB (both request and reply), 0..102400.
    address_space : {None, "total", "MSTR", "CHIN", "TCPIP"}
        None or "total" is MSTR + CHIN + TCPIP, both LPARs.
    sslrkeyc : float
        SSLCIPH secret-key reset threshold in bytes (0 = never, as measured);
        adds :func:`renegotiation_cost_us` to CHIN.
    platform : {"z14", "z15", "z16"}
        Machine generation: the z14/z15 CPU ratio and the renegotiation costs
        (see :func:`tls_cost_parts_us`).

    Returns
    -------
    float or ndarray
        See :func:`tls_cost_parts_us` for the model.
    """
    space = normalize_address_space(address_space)
    plat = normalize_platform(platform)
    parts = tls_cost_parts_us(mode, cipher, message_kb, plat)
    if normalize_mode(mode) == "SSLCIPH":
        parts["CHIN"] = parts["CHIN"] + renegotiation_cost_us(cipher, message_kb, sslrkeyc, plat)
    elif SSLRKEYC.check(sslrkeyc, scalar=True) != 0:
        raise InputError("sslrkeyc applies to mode SSLCIPH only (AT-TLS renegotiates on a timer)")
    if space == "total":
        return parts["MSTR"] + parts["CHIN"] + parts["TCPIP"]
    return parts[space]


START_PLATFORMS = ("z15", "z16")

# Flights of a full handshake with client authentication (MQ's SSLCAUTH REQUIRED): the
# protocol's message flow, not a measurement.  TLS 1.2 (RFC 5246, section 7.3, figure 1):
# ClientHello; ServerHello ... ServerHelloDone; Certificate ... Finished; ChangeCipherSpec,
# Finished.  TLS 1.3 (RFC 8446, section 2, figure 1): ClientHello; ServerHello ... Finished;
# Certificate, CertificateVerify, Finished.
HANDSHAKE_FLIGHTS = {"TLS1.2": 4, "TLS1.3": 3}


def _handshake_records_tcpip_us(protocol: str) -> float:
    """TCPIP CPU (µs, both LPARs) to carry a full handshake's flights as ordinary records.

    One flight is sent by one LPAR and received by the other, as one message of a channel
    request/reply transaction is, so it costs half the fitted TCPIP cost per transaction
    (``tls_tcpip_us``, :func:`tls_cost_parts_us`).
    """
    return HANDSHAKE_FLIGHTS[protocol] * 0.5 * param("tls_tcpip_us")


def _start_platform(platform) -> str:
    """Machine of a channel-start figure: the reference table has z15 and z16 columns only."""
    try:
        return normalize_choice("platform", platform, START_PLATFORMS)
    except ValueError as e:
        raise InputError(f"{e}: the channel-start table has z15 and z16 columns only") from None


def channel_start_cost_us(mode, cipher=None, address_space=None, platform="z16"):
    """CPU per channel start (µs), by address space (reference table totals, seed 002 ratios).

    * SSLCIPH total: the reference table's CPU per start for the cipher on the
      platform (``ref_start_cpu_*_{z15,z16}_ms``: 4,000 channel pairs, 3
      dedicated CPs); TLS 1.3 has no row and uses the ratio below.
    * TCPIP unprotected: 30 µs (``s002_start_cost_tcpip_none_us``); AT-TLS
      210 / 530 / 690 µs for TLS 1.2 / TLS 1.3 hardware / software
      (``s002_start_cost_tcpip_attls_*``: the handshake runs in TCPIP).
    * TCPIP with SSLCIPH: MQ "does see a small increase in TCPIP costs" (seed
      002, not quantified there).  The handshake runs in the channel initiator,
      so TCPIP only carries its records: :data:`HANDSHAKE_FLIGHTS` flights
      more, each sent by one LPAR and received by the other as a message of a
      request/reply transaction is, at the fitted TCPIP cost per message
      (half of ``tls_tcpip_us``, both LPARs; the certificates' bytes are not
      counted, so this is a lower estimate):

      .. math:: TCPIP_{SSLCIPH} = TCPIP_{none} + \\frac{F_{protocol}}{2}\\, t_0

    * CHIN unprotected: the TLS 1.2 SSLCIPH total less its TCPIP, halved,
      because SSLCIPH TLS 1.2 "results in the channel initiator cost doubling"
      (``s002_start_cost_chin_tls12``); AT-TLS leaves CHIN at that value ("the
      impact is primarily in the TCPIP address space").
    * CHIN with a TLS 1.3 SSLCIPH cipher: the unprotected CHIN cost times 3
      (hardware) or 3.5 (CHACHA20) (``s002_start_cost_chin_tls13hw`` /
      ``_tls13sw``, measured on seed 002's z15 and applied to the platform's
      unprotected cost).

    The TCPIP costs and the ratios are seed 002's (a z15) on both platforms:
    only the SSLCIPH totals have a column per platform.

    Parameters
    ----------
    mode : {"none", "SSLCIPH", "ATTLS"}
    cipher : str, optional
        IBM cipher name (required unless mode is none).
    address_space : {None, "total", "CHIN", "TCPIP"}
    platform : {"z15", "z16"}
        The reference table's column (it has none for z14).
    """
    m = normalize_mode(mode)
    space = normalize_address_space(address_space)
    plat = _start_platform(platform)
    if space == "MSTR":
        raise InputError("no MSTR cost is published for channel starts: use total, CHIN or TCPIP")
    tcp_none = figure("s002_start_cost_tcpip_none_us").target()
    tls12_total = figure(f"ref_start_cpu_rsa_aes256cbc_{plat}_ms").target() * 1000.0
    chin_none = ((tls12_total - tcp_none - _handshake_records_tcpip_us("TLS1.2"))
                 / figure("s002_start_cost_chin_tls12").target())
    if m == "none":
        chin, tcp = chin_none, tcp_none
    else:
        c = normalize_cipher(cipher)
        fam = _family(c)
        if m == "ATTLS":
            fid = {"tls12": "tls12", "null": "tls12", "tls13hw": "tls13hw", "tls13sw": "tls13sw"}[fam]
            chin, tcp = chin_none, figure(f"s002_start_cost_tcpip_attls_{fid}_us").target()
        else:
            tcp = tcp_none + _handshake_records_tcpip_us(CIPHERS[c][0])
            if fam.startswith("tls13"):
                # "three times" / "3.5 times that of an unsecured channel" (seed 002)
                chin = chin_none * figure(f"s002_start_cost_chin_{fam}").target()
            else:
                stem = ("ecdhe_ecdsa" if "ECDHE_ECDSA" in c else "ecdhe_rsa" if "ECDHE_RSA" in c
                        else "rsa_aes256cbc")
                total = figure(f"ref_start_cpu_{stem}_{plat}_ms").target() * 1000.0
                chin = total - tcp
    return {"CHIN": chin, "TCPIP": tcp, "total": chin + tcp}[space]


def channel_start_card_ms(cipher, card="coprocessor"):
    """Crypto Express time per MQ (SSLCIPH) channel start, by card mode (ms).

    The z16 report's RMF readings, execution time x calls per start
    (``ref_start_cex_*``, CEX8S): TLS_RSA ~0.52 ms coprocessor + ~0.08 ms
    accelerator; ECDHE_ECDSA 1.03-1.15 ms coprocessor only; ECDHE_RSA
    0.66-0.90 ms coprocessor + ~0.08 ms accelerator; TLS 1.3 0.56-0.58 ms
    coprocessor + ~0.08 ms accelerator.  A range enters at its midpoint.
    TLS 1.2 ciphers without a row of their own (NULL_SHA, the TLS_RSA GCM and
    SHA-1 suites) use the TLS_RSA row: the handshake, not the bulk cipher,
    uses the cards.  AT-TLS channel starts are not listed: seed 002's AT-TLS
    certificates did not use Crypto Express.

    Parameters
    ----------
    cipher : str
        IBM cipher name of the SSLCIPH channel.
    card : {"coprocessor", "accelerator"}
    """
    c = normalize_cipher(cipher)
    mode = normalize_choice("card", card, ("coprocessor", "accelerator"))
    if CIPHERS[c][0] == "TLS1.3":
        stem = "tls13"
    elif "ECDHE_ECDSA" in c:
        stem = "ecdsa"
    elif "ECDHE_RSA" in c:
        stem = "ecdhe_rsa"
    else:
        stem = "rsa"
    if stem == "ecdsa" and mode == "accelerator":
        return 0.0  # "coprocessor only (3 coprocessor calls)"
    return figure(f"ref_start_cex_{stem}_{'coproc' if mode == 'coprocessor' else 'accel'}_ms").target()


def channel_start_card_utilization(start_rate, cipher, card="coprocessor", cards=1):
    """Utilization of the Crypto Express cards of one mode by MQ channel starts.

    .. math:: U = \\frac{r\\, t_{card}}{n_{cards}}

    with :math:`r` channel starts per second and :math:`t_{card}` from
    :func:`channel_start_card_ms`: RMF's summary utilization (requests x EXEC
    TIME per card, as :func:`cryptoplan.model.zos.ams.card_utilization`).  For a channel-start
    storm: how busy the cards get, or (with :func:`channel_start_rate`) whether
    they or the CPs limit the rate.

    Parameters
    ----------
    start_rate : float or array_like
        Channel starts per second, >= 0.
    cipher : str
        IBM cipher name of the SSLCIPH channels.
    card : {"coprocessor", "accelerator"}
    cards : int
        Cards of that mode, 1..64.

    Raises
    ------
    UnstableQueueError
        If the utilization is 1 or more.
    """
    rate = np.asarray(START_RATE.check(start_rate), dtype=float)
    n = CARDS.check(cards, scalar=True)
    mode = normalize_choice("card", card, ("coprocessor", "accelerator"))
    u = rate * channel_start_card_ms(cipher, mode) / 1000.0 / n
    if np.any(u >= 1.0):
        raise UnstableQueueError(f"{mode} utilization would be {float(np.max(u)):.0%} at this start rate: "
                                 f"add {mode}s or lower start_rate")
    return float(u) if u.ndim == 0 else u


def handshake_card_utilization(handshake_rate, cipher, card="coprocessor", cards=1, resumed_share=0.0,
                               other_lpar_util=0.0):
    """Crypto Express utilization from TLS handshakes at a rate, as RMF would print it.

    .. math:: U = \\frac{r\\,(1 - p_{resumed})\\, t_{card}}{n_{cards}} + u_{other}

    with :math:`t_{card}` the card time of one full handshake of that cipher
    (:func:`channel_start_card_ms`: the z16 report's RMF EXEC TIMEs per MQ
    channel start, each a full handshake) and :math:`p_{resumed}` the share of
    abbreviated handshakes, which skip the private-key and key-exchange
    operations (seed 003: "the TLS server avoids many of the costly asymmetric
    operations required in a full handshake"); they are taken to use no card
    time (an assumption: no card time of a resumed handshake is published).
    Their CPU is :func:`handshake_cpu_factor`'s.

    Parameters
    ----------
    handshake_rate : float or array_like
        TLS handshakes (new connections or channel starts) per second, >= 0.
    cipher : str
        IBM cipher name.
    card : {"coprocessor", "accelerator"}
    cards : int
        Cards of that mode, 1..64.
    resumed_share : float or array_like
        Fraction of handshakes resumed (session ID or ticket), [0, 1].
    other_lpar_util : float
        Fraction of each card other LPARs keep busy, [0, 1).

    Raises
    ------
    UnstableQueueError
        If the utilization is 1 or more, naming the cards needed.
    """
    rate = np.asarray(HANDSHAKE_RATE.check(handshake_rate), dtype=float)
    share = np.asarray(RESUMED_SHARE.check(resumed_share), dtype=float)
    other = np.asarray(OTHER_LPAR_UTIL.check(other_lpar_util), dtype=float)
    n = CARDS.check(cards, scalar=True)
    mode = normalize_choice("card", card, ("coprocessor", "accelerator"))
    load = rate * (1.0 - share) * channel_start_card_ms(cipher, mode) / 1000.0
    u = load / n + other
    if np.any(u >= 1.0):
        i = int(np.argmax(np.ravel(u)))
        need = int(np.ceil(float(np.ravel(load)[i]) / (1.0 - float(np.ravel(np.broadcast_to(other, u.shape))[i]))
                           - 1e-12))
        raise UnstableQueueError(f"{mode}s would be {float(np.ravel(u)[i]):.0%} busy at this handshake rate "
                                 f"with {n:g} cards: {max(need, int(n) + 1)} cards needed to stay below 100%")
    return float(u) if u.ndim == 0 else u


def _start_rate_id(cipher: str, plat: str) -> str:
    """The start-table row of an SSLCIPH cipher: its handshake, not its bulk cipher, sets the rate."""
    if _family(cipher).startswith("tls13"):
        if plat != "z16":
            raise InputError(f"no TLS 1.3 channel-start rate is published for {plat} (the table "
                             "has z16's only): use platform z16 or a TLS 1.2 cipher")
        return "ref_start_rate_tls13_z16"
    if "ECDHE_ECDSA" in cipher:
        return f"ref_start_rate_ecdhe_ecdsa_{plat}"
    if "ECDHE_RSA" in cipher:
        return f"ref_start_rate_ecdhe_rsa_{plat}"
    return f"ref_start_rate_rsa_aes256cbc_{plat}"


def channel_start_rate(mode, cipher=None, platform="z16"):
    """MQ channel starts per second (4,000 channel pairs, 3 dedicated CPs).

    SSLCIPH: the platform's rates of the reference table per cipher
    (``ref_start_rate_*_{z15,z16}``; TLS 1.3: midpoint of
    ``ref_start_rate_tls13_z16``, published for z16 only: z15 raises);
    TLS 1.2 ciphers without a row of their own (NULL_SHA, the TLS_RSA GCM and
    SHA-1 suites) use the TLS_RSA_WITH_AES_256_CBC_SHA256 row: the handshake, not
    the bulk cipher, sets the start rate.
    none: seed 002 gives the unsecured rate only through "between 33 to 50% of
    the rate of unsecured channels" (``s002_start_rate_sslciph``,
    :math:`[a, b]`), for the ciphers it measured (its ``cipher`` column:
    TLS_RSA_WITH_AES_256_CBC_SHA256 and two TLS 1.3 ciphers, not the ECDHE
    suites).  The unsecured rate is the middle of the rates :math:`U` that put
    the platform's rows :math:`r_i` for those ciphers in that range (z15:
    TLS_RSA only; z16: TLS_RSA and TLS 1.3):

    .. math:: U = \\tfrac12\\Big(\\frac{\\max_i r_i}{b} + \\frac{\\min_i r_i}{a}\\Big)

    (an error if no :math:`U` does).  ATTLS: the unsecured rate times the
    midpoint of 75-80% (``s002_start_rate_attls``).

    Parameters
    ----------
    mode : {"none", "SSLCIPH", "ATTLS"}
    cipher : str, optional
        IBM cipher name (required unless mode is none).
    platform : {"z15", "z16"}
        The reference table's column (z16's rates are the lower ones).
    """
    m = normalize_mode(mode)
    plat = _start_platform(platform)
    if m == "SSLCIPH":
        return figure(_start_rate_id(normalize_cipher(cipher), plat)).target()
    span = figure("s002_start_rate_sslciph")
    ids = {_start_rate_id(c, plat) for c in span.conditions["cipher"].split("|")
           if plat == "z16" or not _family(c).startswith("tls13")}
    rates = [figure(i).target() for i in sorted(ids)]
    low_u, high_u = max(rates) / (span.high / 100.0), min(rates) / (span.low / 100.0)
    if low_u > high_u:
        raise InputError(f"the {plat} SSLCIPH start rates ({', '.join(f'{r:g}' for r in rates)}/s) spread "
                         "wider than 's002_start_rate_sslciph' allows: no unsecured rate puts them all "
                         f"between {span.low:g}% and {span.high:g}% of it")
    unsecured = 0.5 * (low_u + high_u)
    if m == "none":
        return unsecured
    normalize_cipher(cipher)
    return unsecured * figure("s002_start_rate_attls").target() / 100.0


def channel_stop_cost_us(mode, address_space=None):
    """CPU µs to stop one channel (seed 002): CHIN 670 (none, AT-TLS) or 950 (SSLCIPH);
    TCPIP 45 (not AT-TLS) or the 100-150 midpoint (AT-TLS); total is their sum."""
    m = normalize_mode(mode)
    space = normalize_address_space(address_space)
    chin = figure("s002_stop_cost_chin_sslciph_us" if m == "SSLCIPH" else "s002_stop_cost_chin_none_attls_us").target()
    tcp = figure("s002_stop_cost_tcpip_attls_us" if m == "ATTLS" else "s002_stop_cost_tcpip_none_sslciph_us").target()
    if space == "MSTR":
        raise InputError("no MSTR cost is published for channel stops: address_space must be total, CHIN or TCPIP")
    return {"CHIN": chin, "TCPIP": tcp, "total": chin + tcp}[space]


def _ratio(fid: str) -> float:
    """A published percentage change as a multiplier (1 + v/100)."""
    f = figure(fid)
    if f.unit != "pct_change":
        raise InputError(f"{fid} is not a percentage change")
    return 1.0 + f.target() / 100.0


def _flag(name, value) -> bool:
    """TRUE/FALSE, 1/0 or the words true/false, yes/no, on/off; anything else is an error."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "yes", "on", "1"):
            return True
        if v in ("false", "no", "off", "0", ""):
            return False
    elif isinstance(value, (int, float, np.integer, np.floating)) and value in (0, 1):
        return bool(value)
    raise InputError(f"{name} must be TRUE or FALSE (got {value!r})")


def _handshake(key_exchange, certificate, protocol, resumption, sysplex_tickets, fips, card_mode,
               heappools64, latency: bool) -> float:
    kx = normalize_choice("key_exchange", key_exchange, KEY_EXCHANGES)
    normalize_choice("certificate", certificate, ("RSA", "ECDSA"))  # equivalent cost (seed 003)
    proto = normalize_choice("protocol", protocol, ("TLS1.2", "TLS1.3"),
                             {v: p for p in ("TLS1.2", "TLS1.3")
                              for v in (p[3:], "TLSv" + p[3:], "TLS " + p[3:], "TLS v" + p[3:])})
    card = normalize_choice("card_mode", card_mode, ("coprocessor", "accelerator"))
    resumption, sysplex_tickets, fips, heappools64 = (_flag("resumption", resumption),
                                                      _flag("sysplex_tickets", sysplex_tickets),
                                                      _flag("fips", fips), _flag("heappools64", heappools64))
    if not heappools64:
        raise InputError("Nyamful's z/OS 3.1 TLS update (2024) prints no factor for HEAPPOOLS64(OFF) (only that the savings are "
                         "'tremendous'); APAR PH59425 makes it always ON: use heappools64=TRUE")
    if proto == "TLS1.3" and kx != "ECDHE":
        raise InputError("TLS 1.3 always uses an (EC)DHE key share: key_exchange must be ECDHE")
    if sysplex_tickets and proto != "TLS1.3":
        raise InputError("sysplex-wide session tickets apply to TLS 1.3 only")
    f = 1.0
    if latency:
        unpublished = [what for what, on in (
            ("key_exchange=RSA", kx == "RSA"), ("protocol=TLS1.3", proto == "TLS1.3"),
            ("resumption", resumption), ("sysplex_tickets", sysplex_tickets),
            ("card_mode=accelerator with FIPS off", card == "accelerator" and not fips)) if on]
        if unpublished:
            raise InputError("Nyamful's z/OS 3.1 TLS update (2024) prints latency numbers only for DHE vs ECDHE and for FIPS on a "
                             f"coprocessor vs an accelerator; none for {', '.join(unpublished)}: "
                             "use handshake_cpu_factor")
        if kx == "DHE":
            f /= _ratio("s003_ecdhe_vs_dhe_latency")
        if fips and card == "coprocessor":
            f /= _ratio("s003_fips_accel_vs_coproc_latency")
        return f
    return _handshake_cpu(kx, proto, resumption, sysplex_tickets, fips, card)


def _handshake_cpu(kx, proto, resumption, sysplex_tickets, fips, card) -> float:
    """Handshake CPU in units of the baseline, from additive components (see handshake_cpu_factor)."""
    ecdhe = 1.0                                                   # the baseline full handshake
    full = {"ECDHE": ecdhe,
            "RSA": ecdhe / _ratio("s003_ecdhe_vs_rsa_kx_cost"),   # ECDHE adds up to 26% over RSA
            "DHE": ecdhe * param("hs_dhe_kx")}[kx]                # ECDHE is up to 97% below DHE
    hkdf = (_ratio("s003_tls13_vs_tls12_cost") - 1.0) * ecdhe    # TLS 1.3's extra key derivation
    if resumption:
        # an abbreviated handshake skips the key exchange and the certificate's private-key
        # operation whatever they were: one cost per protocol, the largest saving at ECDHE
        f = ecdhe * _ratio("s003_resumption_tls12_cost")
        if proto == "TLS1.3":
            f = (ecdhe + hkdf) * _ratio("s003_resumption_tls13_cost")
    else:
        f = full + (hkdf if proto == "TLS1.3" else 0.0)
        if kx in ("ECDHE", "DHE") and card == "accelerator" and (not fips or proto == "TLS1.3"):
            # the (EC)DHE server's RSA signature runs in software when only accelerators are
            # configured: seed 003's note, "offloaded onto the Coprocessor card and not the
            # Accelerator card, which translate into 53% and 98% CPU savings".  In FIPS mode
            # System SSL sends RSA signing to an accelerator (seed 003, FIPS section), but ICSF
            # offloads clear-key RSA sign/verify "but not RSA PSS" (ICSF Overview, optional
            # Crypto Express adapters), and a TLS 1.3 RSA CertificateVerify is always RSASSA-PSS
            # (RFC 8446, 4.2.3): that signature stays in software
            f = f + ecdhe * param("hs_sign_sw")
        if fips and card == "coprocessor":
            f /= _ratio("s003_fips_accel_vs_coproc_cost")
    if sysplex_tickets and resumption:
        # a session ticket is used only to resume: with the sysplex-wide cache a resumption that
        # Sysplex Distributor sends to another target still finds its session.  A full handshake
        # costs the same with or without the cache.
        f *= _ratio("s003_sysplex_tickets_cost")
    # certificate: seed 003 reports RSA-2048 and ECDSA-256 as "relatively equivalent" (factor 1)
    return f


def handshake_cpu_factor(key_exchange="ECDHE", certificate="RSA", protocol="TLS1.2", resumption=False,
                         sysplex_tickets=False, fips=False, card_mode="coprocessor", heappools64=True):
    """Network CPU per TLS connection relative to the baseline full handshake.

    Baseline: TLS 1.2 ECDHE-RSA full handshake, Crypto Express coprocessor,
    FIPS off, HEAPPOOLS64 on (seed 003's reference configuration).  The
    factor is a sum of the CPU parts each of seed 003's comparisons isolates,
    so that "up to" extremes of different comparisons are not multiplied:

    .. math::

        f = k_{kx} + h\\,[\\text{TLS 1.3}] + s\\,[\\text{(EC)DHE on accelerators, FIPS off}]
        \\quad\\text{(full)}, \\qquad
        f = r_{1.2} \\text{ or } r_{1.3} \\quad\\text{(resumed)}

    * key exchange :math:`k`: ECDHE 1; RSA :math:`1/1.26` ("up to a 26%
      increase" for ECDHE, ``s003_ecdhe_vs_rsa_kx_cost``); DHE the fitted
      ``hs_dhe_kx`` (about 35);
    * TLS 1.3's key derivation :math:`h = 0.16` ("just 16% increase",
      ``s003_tls13_vs_tls12_cost``; TLS 1.3 always uses an ECDHE key share);
    * accelerators only, FIPS off, or FIPS on with TLS 1.3: the (EC)DHE
      server's RSA signature in software, the fitted ``hs_sign_sw`` :math:`s`
      (about 40).  A coprocessor signs with the certificate's key in the PKDS,
      RSASSA-PSS included (seed 003 measured TLS 1.3 on a coprocessor at
      +16%, its signature pairs RSASSA-PSS); an accelerator signs only in FIPS
      mode (seed 003's FIPS section) and not RSASSA-PSS, which ICSF does not
      offload ("RSA Sign/Verify (but not RSA PSS)", z/OS ICSF Overview,
      "Optional Crypto Express adapters") and which every TLS 1.3 RSA
      signature is (RFC 8446, section 4.2.3): TLS 1.3 in FIPS mode on
      accelerators signs in software, TLS 1.2 does not.  :math:`k` and
      :math:`s` are fitted (:func:`cryptoplan.model.calibration.fit.fit`, group "handshake")
      to three statements: ECDHE's "Up to 97% reduction ... compared to DHE"
      (:math:`1/k - 1`, ``s003_ecdhe_vs_dhe_cost``) and the note's coprocessor
      savings, 98% for ECDHE (:math:`1/(1+s) - 1`) and 53% for DHE
      (:math:`k/(k+s) - 1`, ``s003_coproc_vs_accel_*_cost_note``).  Reading
      :math:`k = 1/0.03` and :math:`s = 1/0.02 - 1` from the first two made
      the third 59.5%; the fit meets all three to their printed digit.  The
      text above the note says "up to 98%" for the DHE ciphers, which the
      note's 53% contradicts: that row is checked as a bound;
    * a resumed handshake skips the key exchange and the certificate's
      private-key operation, whatever they were: one cost per protocol,
      :math:`r_{1.2} = 1 - 0.50` (``s003_resumption_tls12_cost``, "up to 50%"
      over the TLS 1.2 ciphers: the largest saving is ECDHE's, the largest
      full handshake of the two measured with resumption) and
      :math:`r_{1.3} = (1 + h)(1 - 0.30)` (``s003_resumption_tls13_cost``),
      so resumed ECDHE equals resumed RSA ("similar performance impact") and
      resumed DHE loses nearly all its software cost ("Most of the processing
      done in software for the DHE key exchange is removed");
    * FIPS on a coprocessor: :math:`1/0.03` times the full handshake (the
      accelerator's "up to 97%" savings in FIPS mode,
      ``s003_fips_accel_vs_coproc_cost``); sysplex-wide tickets (TLS 1.3):
      a *resumed* handshake times :math:`1 - 0.30` (``s003_sysplex_tickets_cost``), their
      own comparison; a full handshake uses no ticket and costs the same with them.

    Assumptions (not published): FIPS mode on an *accelerator* costs the same
    as the non-FIPS coprocessor baseline (seed 003 compares the two cards only
    within FIPS mode and within non-FIPS mode); a software RSASSA-PSS signature
    in FIPS mode costs what the non-FIPS software signature :math:`s` does; TLS_RSA key exchange on an
    accelerator costs as on a coprocessor ("offloaded to Coprocessor or
    Accelerator when available"); a resumed handshake has no FIPS card cost.
    """
    return _handshake(key_exchange, certificate, protocol, resumption, sysplex_tickets, fips, card_mode,
                      heappools64, latency=False)


def handshake_latency_factor(key_exchange="ECDHE", certificate="RSA", protocol="TLS1.2", resumption=False,
                             sysplex_tickets=False, fips=False, card_mode="coprocessor", heappools64=True):
    """Handshake latency relative to the same baseline as :func:`handshake_cpu_factor`.

    Seed 003 prints latency numbers for two effects only: DHE vs ECDHE
    (``s003_ecdhe_vs_dhe_latency``) and FIPS coprocessor vs accelerator
    (``s003_fips_accel_vs_coproc_latency``); other options raise ValueError.
    """
    return _handshake(key_exchange, certificate, protocol, resumption, sysplex_tickets, fips, card_mode,
                      heappools64, latency=True)


def ocsp_cpu_us(connection_cpu_us, address_space="total"):
    """CPU per new TLS connection once certificate checks are offloaded to an OCSP responder.

    Applies seed 004's average relative changes (z/VM 7.2 SSL server, Telnet
    connection ramp-up) to a measured cost without OCSP:
    SSL server x(1 - 27%) (``s004_ocsp_ssl_server_pct``), TCPIP x(1 + 47%)
    (``s004_ocsp_tcpip_pct``), total x(1 - 20%) (``s004_ocsp_total_pct``).

    Parameters
    ----------
    connection_cpu_us : float or array_like
        CPU µs per new connection without OCSP, in that address space (>= 0).
    address_space : {"total", "SSL_server", "TCPIP"}
    """
    cpu = CONNECTION_CPU_US.check(connection_cpu_us)
    space = normalize_choice("address_space", address_space, ("total", "SSL_server", "TCPIP"))
    ids = {"total": "s004_ocsp_total_pct", "SSL_server": "s004_ocsp_ssl_server_pct",
           "TCPIP": "s004_ocsp_tcpip_pct"}
    with np.errstate(over="ignore"):
        out = np.asarray(cpu) * _ratio(ids[space])
    if not np.all(np.isfinite(out)):
        raise InputError(f"connection_cpu_us is too large: times {_ratio(ids[space]):g} it exceeds the "
                         "largest number a spreadsheet holds (about 1.8e308)")
    return float(out) if out.ndim == 0 else out

