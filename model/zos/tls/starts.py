"""MQ channel starts and stops: rates, CPU by address space, Crypto Express time and load.

The published start and stop tables (seed 002 and the MQ for z/OS z15/z16 reports) are rows of
``data/figures.csv`` (ids in each docstring); a start's handshake flights cost TCPIP as
traffic does (:mod:`.traffic`).

References
----------
.. [1] A. Sharkey, "MQ for z/OS using AT-TLS to provide channel encryption", 2021 (seed 002).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from ..._validate import UnstableQueueError
from ...domains import CARDS, START_RATE
from ...figures import figure
from ...params import (CIPHERS, normalize_address_space, normalize_choice, normalize_cipher,
                       normalize_mode, param)
from .traffic import cipher_family

__all__ = ["channel_start_rate", "channel_start_cost_us", "channel_stop_cost_us", "channel_start_card_ms",
           "channel_start_card_utilization", "START_PLATFORMS", "HANDSHAKE_FLIGHTS"]


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
        fam = cipher_family(c)
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



def _start_rate_id(cipher: str, plat: str) -> str:
    """The start-table row of an SSLCIPH cipher: its handshake, not its bulk cipher, sets the rate."""
    if cipher_family(cipher).startswith("tls13"):
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
           if plat == "z16" or not cipher_family(c).startswith("tls13")}
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

