"""TLS on MQ channels and in handshakes: round trip, channel start/stop, handshake and OCSP factors.

Round trip (seed 002, TLS_CHACHA20_POLY1305_SHA256, software cipher).  MQ
with System SSL encrypts on SSL tasks while dispatchers send (a pipeline), so
its round trip grows linearly with size; the AT-TLS SRB encrypts *then*
sends on the same socket, and its blocking disturbs the congestion window,
which adds a term growing faster than linearly:

.. math::

    RT_{SSLCIPH} = r_0 + a\\,\\mathrm{KB}, \\qquad
    RT_{ATTLS} = r_0 + b\\,\\mathrm{KB} + q\\,\\mathrm{KB}^2,

fitted by least squares on the relative error to the ten published times
(:func:`fit_roundtrip`).  Only the software cipher was measured; hardware
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

from functools import lru_cache

import numpy as np
from scipy.optimize import least_squares

from ._validate import check
from .figures import figure
from .params import CIPHERS, normalize_address_space, normalize_cipher, normalize_mode

__all__ = ["fit_roundtrip", "tls_roundtrip_us", "channel_start_rate", "channel_stop_cost_us",
           "handshake_cpu_factor", "handshake_latency_factor", "ocsp_cpu_us", "KEY_EXCHANGES"]

KEY_EXCHANGES = ("RSA", "ECDHE", "DHE")
_RT_IDS = {"SSLCIPH": "s002_rt_sslciph_{}_us", "ATTLS": "s002_rt_attls_{}_us"}
_RT_SIZES = {"2k": 2.0, "16k": 16.0, "32k": 32.0, "64k": 64.0, "1m": 1024.0}


@lru_cache(maxsize=1)
def fit_roundtrip() -> dict:
    """Fit (r0, a, b, q) to the published round trips; returns values, stderrs and residuals."""
    pts = [(mode, kb, figure(pat.format(tag)).target())
           for mode, pat in _RT_IDS.items() for tag, kb in _RT_SIZES.items()]

    def model(x, mode, kb):
        r0, a, b, q = x
        return r0 + a * kb if mode == "SSLCIPH" else r0 + b * kb + q * kb * kb

    def fun(x):
        return np.array([model(x, m, kb) / y - 1.0 for m, kb, y in pts])

    res = least_squares(fun, x0=[1000.0, 600.0, 600.0, 0.1], bounds=([0, 0, 0, 0], np.inf), x_scale="jac")
    dof = max(len(pts) - 4, 1)
    cov = np.linalg.pinv(res.jac.T @ res.jac) * float(res.fun @ res.fun) / dof
    names = ("rt_base_us", "rt_sslciph_us_per_kb", "rt_attls_us_per_kb", "rt_attls_us_per_kb2")
    return {"values": dict(zip(names, map(float, res.x))),
            "stderr": dict(zip(names, map(float, np.sqrt(np.clip(np.diag(cov), 0, None))))),
            "residuals": {f"{_RT_IDS[m].format(t)}": float(model(res.x, m, kb) / y - 1.0)
                          for (m, kb, y), t in zip(pts, list(_RT_SIZES) * 2)}}


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
        .. math:: r_0 + a\\,KB \\;\\text{(SSLCIPH)}, \\qquad r_0 + b\\,KB + q\\,KB^2 \\;\\text{(ATTLS)}
    """
    m = normalize_mode(mode)
    c = normalize_cipher(cipher)
    if m == "none":
        raise ValueError("mode must be SSLCIPH or ATTLS for tls_roundtrip_us: no unprotected round "
                         "trips are published")
    if CIPHERS[c][1]:
        raise ValueError(f"round trips are published for the software cipher "
                         f"TLS_CHACHA20_POLY1305_SHA256 only (got {c}); with hardware ciphers "
                         "seed 002 reports SSLCIPH and AT-TLS round trips as similar and network-bound")
    kb = check("message_kb", message_kb, 0.0, 1024.0)
    p = fit_roundtrip()["values"]
    kb_a = np.asarray(kb, dtype=float)
    if m == "SSLCIPH":
        out = p["rt_base_us"] + p["rt_sslciph_us_per_kb"] * kb_a
    else:
        out = p["rt_base_us"] + p["rt_attls_us_per_kb"] * kb_a + p["rt_attls_us_per_kb2"] * kb_a ** 2
    return float(out) if out.ndim == 0 else out


def _family(cipher: str) -> str:
    proto, hw = CIPHERS[cipher]
    if proto == "TLS1.3":
        return "tls13hw" if hw else "tls13sw"
    return "tls12"


def channel_start_rate(mode, cipher=None):
    """MQ channel starts per second (4,000 channel pairs, 3 dedicated CPs, z16).

    SSLCIPH: the z16 rates of the reference table per cipher
    (``ref_start_rate_*_z16``; TLS 1.3: midpoint of ``ref_start_rate_tls13_z16``).
    none: the SSLCIPH rates divided by the midpoint of "33 to 50% of the rate
    of unsecured channels" (``s002_start_rate_sslciph``), averaged over the
    ciphers.  ATTLS: the unsecured rate times the midpoint of 75-80%
    (``s002_start_rate_attls``).
    """
    m = normalize_mode(mode)

    def sslciph(c):
        fam = _family(c)
        if fam.startswith("tls13"):
            return figure("ref_start_rate_tls13_z16").target()
        if "ECDHE_ECDSA" in c:
            return figure("ref_start_rate_ecdhe_ecdsa_z16").target()
        if "ECDHE_RSA" in c:
            return figure("ref_start_rate_ecdhe_rsa_z16").target()
        return figure("ref_start_rate_rsa_aes256cbc_z16").target()

    if m == "SSLCIPH":
        return sslciph(normalize_cipher(cipher))
    share = figure("s002_start_rate_sslciph").target() / 100.0
    rates = [figure(i).target() for i in ("ref_start_rate_rsa_aes256cbc_z16", "ref_start_rate_ecdhe_rsa_z16",
                                          "ref_start_rate_ecdhe_ecdsa_z16", "ref_start_rate_tls13_z16")]
    unsecured = float(np.mean(rates)) / share
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
        raise ValueError("no MSTR cost is published for channel stops: address_space must be total, CHIN or TCPIP")
    return {"CHIN": chin, "TCPIP": tcp, "total": chin + tcp}[space]


def _ratio(fid: str) -> float:
    """A published percentage change as a multiplier (1 + v/100)."""
    f = figure(fid)
    if f.unit != "pct_change":
        raise ValueError(f"{fid} is not a percentage change")
    return 1.0 + f.target() / 100.0


def _flag(name, value) -> bool:
    if isinstance(value, str):
        v = value.strip().lower()
        if v in ("true", "yes", "on", "1"):
            return True
        if v in ("false", "no", "off", "0", ""):
            return False
        raise ValueError(f"{name} must be TRUE or FALSE (got {value!r})")
    return bool(value)


def _handshake(key_exchange, certificate, protocol, resumption, sysplex_tickets, fips, card_mode,
               heappools64, latency: bool) -> float:
    kx = str(key_exchange).strip().upper()
    if kx not in KEY_EXCHANGES:
        raise ValueError(f"key_exchange must be one of {', '.join(KEY_EXCHANGES)} (got {key_exchange!r})")
    cert = str(certificate).strip().upper()
    if cert not in ("RSA", "ECDSA"):
        raise ValueError(f"certificate must be RSA or ECDSA (got {certificate!r})")
    proto = str(protocol).strip().upper().replace("V", "").replace(" ", "")
    proto = {"TLS1.2": "TLS1.2", "1.2": "TLS1.2", "TLS1.3": "TLS1.3", "1.3": "TLS1.3"}.get(proto)
    if proto is None:
        raise ValueError(f"protocol must be TLS1.2 or TLS1.3 (got {protocol!r})")
    card = str(card_mode).strip().lower()
    if card not in ("coprocessor", "accelerator"):
        raise ValueError(f"card_mode must be coprocessor or accelerator (got {card_mode!r})")
    resumption, sysplex_tickets, fips, heappools64 = (_flag("resumption", resumption),
                                                      _flag("sysplex_tickets", sysplex_tickets),
                                                      _flag("fips", fips), _flag("heappools64", heappools64))
    if not heappools64:
        raise ValueError("seed 003 prints no factor for HEAPPOOLS64(OFF) (only that the savings are "
                         "'tremendous'); APAR PH59425 makes it always ON: use heappools64=TRUE")
    if proto == "TLS1.3" and kx != "ECDHE":
        raise ValueError("TLS 1.3 always uses an (EC)DHE key share: key_exchange must be ECDHE")
    if sysplex_tickets and proto != "TLS1.3":
        raise ValueError("sysplex-wide session tickets apply to TLS 1.3 only")
    f = 1.0
    if latency:
        unpublished = [what for what, on in (
            ("key_exchange=RSA", kx == "RSA"), ("protocol=TLS1.3", proto == "TLS1.3"),
            ("resumption", resumption), ("sysplex_tickets", sysplex_tickets),
            ("card_mode=accelerator with FIPS off", card == "accelerator" and not fips)) if on]
        if unpublished:
            raise ValueError("seed 003 prints latency numbers only for DHE vs ECDHE and for FIPS on a "
                             f"coprocessor vs an accelerator; none for {', '.join(unpublished)}: "
                             "use handshake_cpu_factor")
        if kx == "DHE":
            f /= _ratio("s003_ecdhe_vs_dhe_latency")
        if fips and card == "coprocessor":
            f /= _ratio("s003_fips_accel_vs_coproc_latency")
        return f
    if kx == "RSA":
        f /= _ratio("s003_ecdhe_vs_rsa_kx_cost")
    elif kx == "DHE":
        f /= _ratio("s003_ecdhe_vs_dhe_cost")
    if proto == "TLS1.3":
        f *= _ratio("s003_tls13_vs_tls12_cost")
    if resumption:
        f *= _ratio("s003_resumption_tls13_cost" if proto == "TLS1.3" else "s003_resumption_tls12_cost")
    if sysplex_tickets:
        f *= _ratio("s003_sysplex_tickets_cost")
    if card == "accelerator" and not fips and kx in ("ECDHE", "DHE"):
        fid = "s003_coproc_vs_accel_ecdhe_cost_note" if kx == "ECDHE" else "s003_coproc_vs_accel_dhe_cost_note"
        f /= _ratio(fid)
    if fips and card == "coprocessor":
        f /= _ratio("s003_fips_accel_vs_coproc_cost")
    # certificate: seed 003 reports RSA-2048 and ECDSA-256 as "relatively equivalent" (factor 1)
    return f


def handshake_cpu_factor(key_exchange="ECDHE", certificate="RSA", protocol="TLS1.2", resumption=False,
                         sysplex_tickets=False, fips=False, card_mode="coprocessor", heappools64=True):
    """Network CPU per TLS connection relative to the baseline full handshake.

    Baseline: TLS 1.2 ECDHE-RSA full handshake, Crypto Express coprocessor,
    FIPS off, HEAPPOOLS64 on (seed 003's reference configuration).  Factors
    multiply; "up to" statements enter at their published extreme, so the
    result is the largest effect seed 003 reports, not a typical one.

    Rows: ``s003_ecdhe_vs_rsa_kx_cost`` (RSA key exchange), ``s003_ecdhe_vs_dhe_cost``
    (DHE), ``s003_tls13_vs_tls12_cost``, ``s003_resumption_tls12_cost`` /
    ``s003_resumption_tls13_cost``, ``s003_sysplex_tickets_cost``,
    ``s003_coproc_vs_accel_*_cost_note`` (accelerator instead of coprocessor, FIPS off),
    ``s003_fips_accel_vs_coproc_cost`` (FIPS on a coprocessor).
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
    cpu = check("connection_cpu_us", connection_cpu_us, 0.0)
    space = str(address_space).strip().lower()
    ids = {"total": "s004_ocsp_total_pct", "ssl_server": "s004_ocsp_ssl_server_pct",
           "ssl server": "s004_ocsp_ssl_server_pct", "tcpip": "s004_ocsp_tcpip_pct"}
    if space not in ids:
        raise ValueError(f"address_space must be one of total, SSL_server, TCPIP (got {address_space!r})")
    out = np.asarray(cpu) * _ratio(ids[space])
    return float(out) if out.ndim == 0 else out

