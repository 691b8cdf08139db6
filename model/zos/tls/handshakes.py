"""TLS handshakes and OCSP: CPU and latency factors, and the load a handshake rate puts on the cards.

Seed 003's factors (key exchange, certificate, protocol, resumption, sysplex-wide tickets, FIPS,
coprocessor or accelerator, HEAPPOOLS64) compose as docs/models.md describes; seed 004's OCSP
offload changes a measured cost per connection.

References
----------
.. [1] C. Nyamful, "z/OS 3.1 Communications Server TLS Performance Update", 2024 (seed 003).
.. [2] z/VM 7.2 performance report, "TLS/SSL Server OCSP Support" (seed 004).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from ..._validate import UnstableQueueError
from ...domains import CARDS, CONNECTION_CPU_US, HANDSHAKE_RATE, OTHER_LPAR_UTIL, RESUMED_SHARE
from ...figures import figure
from ...params import normalize_choice, param
from .starts import channel_start_card_ms

__all__ = ["handshake_card_utilization", "handshake_cpu_factor", "handshake_latency_factor", "ocsp_cpu_us",
           "KEY_EXCHANGES"]


KEY_EXCHANGES = ("RSA", "ECDHE", "DHE")


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

