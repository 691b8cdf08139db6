"""TLS channel traffic: CPU per request/reply transaction by address space, and round trips.

Round trip (seed 002, TLS_CHACHA20_POLY1305_SHA256, software cipher).  MQ
with System SSL encrypts on SSL tasks while dispatchers send (a pipeline), so
its round trip grows linearly with size, and every message crosses from a
dispatcher to an SSL task and back, a fixed cost of its own.  The AT-TLS SRB
encrypts *then* sends on the same socket, in line; the seed's charts show its
congestion window growing and resetting and its smooth trip time and variance
much higher, where SSLCIPH's window grows smoothly.  The table's own "% increase"
row says how that cost grows: +7.48, +11.64, +16.32% at 16, 32 and 64 KB, about
4.5 points per doubling of size, i.e. AT-TLS's time per KB grows with the
logarithm of the size.  With SSLCIPH linear, a term :math:`q\\,\\mathrm{KB}\\ln(1 + \\mathrm{KB})`
gives that: AT-TLS's time over SSLCIPH's, less one, tends to :math:`c + d \\ln \\mathrm{KB}`:

.. math::

    RT_{SSLCIPH} = r_S + a\\,\\mathrm{KB}, \\qquad
    RT_{ATTLS} = r_A + b\\,\\mathrm{KB} + q\\,\\mathrm{KB}\\,\\ln(1 + \\mathrm{KB}),

increasing in size for every non-negative parameter set.  The shape is the table's,
not a derived mechanism.  Until model v5 the last term was :math:`q\\,\\mathrm{KB}^2` (the
same parameter count): that gives a gap growing in proportion to size, +10.9% and
+13.6% at 16 and 64 KB where the table prints +7.48 and +16.32, AT-TLS's 1 MB time
predicted 69% high when that cell is left out of the fit, and, extrapolated, a 100 MB
AT-TLS round trip 25 times SSLCIPH's; this one gives +8.0% and +16.9%, 5.3% low
for the left-out 1 MB cell, and keeps the ten times within 1.6%.  Below the first column (2 KB) nothing is published: there the
two intercepts, extrapolated, put AT-TLS's extra time at 78 µs at zero size, falling
to 23 µs near 1.8 KB before it grows.

Fitted by least squares to the ten published times, each scored as every figure is (a log-ratio)
(:func:`cryptoplan.model.calibration.roundtrip.fit_roundtrip`, stored in the parameter file by
``cryptoplan fit``); the "% increase" row is each column's two times' ratio, printed to
0.01 point, and is checked as a prediction, not fitted (fitting it too would count
the same ten measurements twice).  Only the software cipher was measured; hardware
ciphers raise ValueError rather than extrapolate.

CPU per transaction: :func:`tls_cost_parts_us` (the model and its parameters) and
:func:`tls_cost_us` (one address space, renegotiation amortized).

References
----------
.. [1] A. Sharkey, "MQ for z/OS using AT-TLS to provide channel encryption", 2021 (seed 002).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from ...domains import MESSAGE_KB, ROUNDTRIP_MESSAGE_KB, SSLRKEYC
from ...figures import figure
from ...params import (CIPHERS, normalize_address_space, normalize_choice, normalize_cipher,
                       normalize_mode, param)

__all__ = ["roundtrip_points", "roundtrip_figure_ids", "ROUNDTRIP_PARAMS", "tls_roundtrip_us", "tls_cost_us",
           "tls_cost_parts_us", "tls_cost_change_pct", "normalize_platform", "Z196_ANCHOR", "Z196_OF",
           "CHANGE_PLATFORMS", "renegotiation_cost_us", "cipher_family", "CIPHER_FAMILIES",
           "CHANNEL_COST_PARAMS", "PLATFORMS"]


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
    "rt_attls_us_per_kb_log": ("us/KB", "AT-TLS round trip per KB per unit of ln(1 + KB) (encrypt-then-send: "
                               "the congestion window)"),
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
        .. math:: r_S + a\\,KB \\;\\text{(SSLCIPH)}, \\qquad r_A + b\\,KB + q\\,KB\\ln(1 + KB) \\;\\text{(ATTLS)}
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
               + param("rt_attls_us_per_kb_log") * kb_a * np.log1p(kb_a))
    return float(out) if out.ndim == 0 else out




# Symmetric-cipher families and the parameter holding their CPU per KB.
CIPHER_FAMILIES = {"null": "tls_sym_us_per_kb_null", "tls12": "tls_sym_us_per_kb_tls12",
                   "tls13hw": "tls_sym_us_per_kb_tls13hw", "tls13sw": "tls_sym_us_per_kb_sw"}


# The parameters a channel's CPU per transaction is linear in (tls_cost_parts_us), in order.
CHANNEL_COST_PARAMS = ("tls_mstr_us", "tls_mstr_us_per_kb", "tls_chin_us", "tls_chin_us_per_kb", "tls_tcpip_us",
                       "tls_tcpip_us_per_kb", "tls_ssl_us", "tls_ssl_us_per_kb", "tls_attls_tcpip_us",
                       *CIPHER_FAMILIES.values())


def cipher_family(cipher: str) -> str:
    """The symmetric-cipher family of a cipher (a key of :data:`CIPHER_FAMILIES`)."""
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


#: Seed 000's descriptive z196 set (a z196 with z/OS 1.13): the z15 set's parameters it has a twin
#: of (``"z196_" + name``), in units of the z196's unprotected channel-initiator CPU per
#: transaction (``Z196_ANCHOR``, 1 by definition).  It has no TLS 1.3 cipher (seed 000 measured
#: NULL_SHA and TLS_RSA_WITH_AES_256_CBC_SHA), and its queue manager costs are 0, as the z15
#: set's.  :func:`tls_cost_change_pct` reads it; the fit (:mod:`cryptoplan.model.calibration.free`)
#: declares it from these names.
Z196_ANCHOR = "tls_chin_us"
Z196_OF = ("tls_chin_us_per_kb", "tls_tcpip_us", "tls_tcpip_us_per_kb",
           "tls_ssl_us", "tls_ssl_us_per_kb", "tls_attls_tcpip_us", "tls_sym_us_per_kb_null",
           "tls_sym_us_per_kb_tls12")
#: Platforms of :func:`tls_cost_change_pct`: the planning ones and seed 000's z196 (relative only).
CHANGE_PLATFORMS = PLATFORMS + ("z196",)


def _z196_param(name: str):
    """The z196 set's value of the z15 set's parameter ``name`` (see :data:`Z196_OF`)."""
    if name == Z196_ANCHOR:
        return 1.0
    return param("z196_" + name) if name in Z196_OF else 0.0


def _cost_parts(m: str, cipher, kb, get, g) -> dict:
    """:func:`tls_cost_parts_us`'s sums, the parameters read through ``get``, times ``g``."""
    mstr = get("tls_mstr_us") + get("tls_mstr_us_per_kb") * kb
    chin = get("tls_chin_us") + get("tls_chin_us_per_kb") * kb
    tcp = get("tls_tcpip_us") + get("tls_tcpip_us_per_kb") * kb
    if m != "none":
        e = get(CIPHER_FAMILIES[cipher_family(normalize_cipher(cipher))])
        if m == "SSLCIPH":
            chin = chin + get("tls_ssl_us") + (get("tls_ssl_us_per_kb") + 4.0 * e) * kb
        else:
            chin = chin + 2.0 * e * kb
            tcp = tcp + get("tls_attls_tcpip_us") + 2.0 * e * kb
    return {"MSTR": g * mstr, "CHIN": g * chin, "TCPIP": g * tcp}


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
    out = _cost_parts(m, cipher, kb, param, g)
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


def tls_cost_change_pct(mode, cipher, message_kb, address_space=None, baseline="SSLCIPH", platform="z16"):
    """Change of a channel's CPU per request/reply transaction from ``baseline`` to ``mode`` (%).

    .. math:: 100\\,\\Big(\\frac{C_{mode}(KB)}{C_{baseline}(KB)} - 1\\Big)

    with :math:`C` the CPU of :func:`tls_cost_parts_us` in the address space asked (MSTR + CHIN +
    TCPIP for the total), the same cipher in both modes, no renegotiation (as the seeds measured).
    The seeds print exactly this: AT-TLS against SSLCIPH in total, in CHIN and in TCPIP (seed 000
    as a ratio: 1 + change / 100).

    ``platform="z196"`` evaluates seed 000's descriptive set (a z196 with z/OS 1.13, fitted to
    that seed's fifteen relative figures alone, in units of its unprotected channel-initiator
    cost: :data:`Z196_OF`), so that seed's statements can be reproduced from a function a user
    calls.  It is never the default and no planning function reads it; a change in % needs no
    unit, which is why only this function offers it.

    Parameters
    ----------
    mode, baseline : {"none", "SSLCIPH", "ATTLS"}
        The protection compared and the one compared against (they differ).
    cipher : str
        IBM cipher name, the same for whichever of the two is protected.  On the z196, NULL_SHA or a
        TLS 1.2 hardware cipher (seed 000 measured no TLS 1.3 cipher).
    message_kb : float or array_like
        Message size in KB (request and reply), 0..102400.
    address_space : {None, "total", "MSTR", "CHIN", "TCPIP"}
        None or "total": MSTR + CHIN + TCPIP.  An address space whose CPU under the baseline is 0
        has no change to give and is refused: MSTR under the packaged parameters (a channel's MQPUT
        and MQGET are charged to CHIN) and on the z196; a site file that gives MSTR a cost has one.
    platform : {"z14", "z15", "z16", "z196"}

    Returns
    -------
    float or ndarray
        Percent (negative: ``mode`` costs less).

    References
    ----------
    .. [1] IBM, "Using AT-TLS to encrypt data flowing over IBM MQ channels", SupportPac MP16
       (seed 000's z196 measurements).
    .. [2] A. Sharkey, "MQ for z/OS using AT-TLS to provide channel encryption", 2021.
    """
    m, b = normalize_mode(mode), normalize_mode(baseline, "baseline")
    if m == b:
        raise InputError(f"mode and baseline must differ (both {m!r}): a change from a protection to itself is 0")
    space = normalize_address_space(address_space)
    plat = normalize_choice("platform", platform, CHANGE_PLATFORMS)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    if plat == "z196":
        if cipher_family(normalize_cipher(cipher)) not in ("null", "tls12"):
            raise InputError(f"platform 'z196' (seed 000's descriptive set) has costs for NULL_SHA and the TLS 1.2 "
                             f"hardware ciphers only; {normalize_cipher(cipher)} is a TLS 1.3 cipher")
        get, g = _z196_param, 1.0
    else:
        get, g = param, (param("tls_z14_vs_z15") if plat == "z14" else 1.0)

    def cost(mm):
        parts = _cost_parts(mm, cipher, kb, get, g)
        return parts["MSTR"] + parts["CHIN"] + parts["TCPIP"] if space == "total" else parts[space]
    base = cost(b)
    if np.any(np.asarray(base) <= 0.0):
        raise InputError(f"address_space {space!r} has no change to give: its CPU under the baseline {b} is 0 "
                         "(the packaged parameters charge a channel's MQPUT and MQGET to CHIN, so MSTR's is 0); "
                         "choose total, CHIN or TCPIP")
    out = 100.0 * (cost(m) / base - 1.0)
    return float(out) if np.ndim(out) == 0 else out


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

