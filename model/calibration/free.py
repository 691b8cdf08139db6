"""The fit's free parameters: what :func:`cryptoplan.model.calibration.fitting.fit` adjusts.

:data:`FREE` declares each fitted parameter (:class:`Free`: bounds, unit, sub-model, starting
point); :data:`GROUPS` maps a sub-model to the least-squares problem that fits it;
:func:`derived_parameters` lists the parameters read straight from rows (not fitted) with the
row they come from; :func:`initial` gives a parameter's starting value and bounds.

The bounds of the key-size exponents are the ranges the reference facts give
(``bounds_from``: a range figure of ``data/figures.csv``); the others are engineering limits
wide enough that a parameter at one is reported "at bound".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..figures import figure

__all__ = ["Free", "FREE", "GROUPS", "LOSS", "derived_parameters", "initial", "free_bounds"]


@dataclass(frozen=True)
class Free:
    """A fitted parameter's declaration.

    Attributes
    ----------
    low, high : float or None
        Its bounds; None when ``bounds_from`` gives them.
    unit, submodel, description : str
        As the parameter file records them; ``submodel`` picks the fit group (``GROUPS``).
    bounds_from : str or None
        Id of a range figure whose ends are the bounds (a published band, e.g. a key-size exponent).
    start : float or None
        Starting point of the fit; None: the RMF figure the parameter is read from when it has
        one, else the middle of the bounds (or ``low + 1`` when they are wide).
    """

    low: float | None = None
    high: float | None = None
    unit: str = "1"
    submodel: str = "ams"
    description: str = ""
    bounds_from: str | None = None
    start: float | None = None

    def bounds(self) -> tuple[float, float]:
        """(low, high), from the range figure when ``bounds_from`` names one."""
        if self.bounds_from is not None:
            f = figure(self.bounds_from)
            if f.low is None or f.high is None:
                raise InputError(f"bounds_from {self.bounds_from!r}: figure {f.id} has no low and high "
                                 "(a range figure has both)")
            return f.low, f.high
        if self.low is None or self.high is None:
            raise InputError(f"a free parameter needs low and high, or bounds_from; has low {self.low!r}, "
                             f"high {self.high!r}")
        return self.low, self.high


# The free parameters, name -> Free.  The TLS parameters' starting points (``start``) are orders
# of magnitude, not data: the fit is not convex, so its optimum can depend on the start (an
# earlier measurement: of fourteen random starts at 0.3..3 times these, eight reached the same
# optimum, the others ones with 2 to 6 more misses).  tests/test_fit.py::
# test_perturbed_starts_find_no_fit_with_fewer_misses refits from 0.5 and 2 times the starts.
FREE = {
    "cop_rsa_ms_2048": Free(low=0.1, high=5.0, unit="ms", submodel="crypto",
                            description="coprocessor time per RSA-2048 private-key sign"),
    "acc_me_ms_2048": Free(low=0.005, high=0.5, unit="ms", submodel="crypto",
                           description="accelerator time per RSA-2048 ME (public-key) op"),
    "acc_crt_ms_2048": Free(low=0.05, high=5.0, unit="ms", submodel="crypto",
                            description="accelerator time per RSA-2048 CRT (private-key) op"),
    "exp_private": Free(bounds_from="ref_scaling_private_exponent", unit="1", submodel="crypto",
                        description="key-size exponent, private-key ops"),
    "exp_public": Free(bounds_from="ref_scaling_public_exponent", unit="1", submodel="crypto",
                       description="key-size exponent, public-key ops"),
    "cop_rsa_fixed_share": Free(low=0.0, high=0.95, unit="1", submodel="crypto",
                                description="share of the coprocessor's RSA-2048 sign time that does not "
                                            "grow with the modulus (CCA secure-key handling)"),
    "acc_fixed_ms": Free(low=0.0, high=0.1, unit="ms", submodel="crypto",
                         description="accelerator time per RSA request (ME or CRT) that does not grow with the "
                                     "modulus (adapter handling)"),
    "cop_ecc_ms_192": Free(low=0.01, high=20.0, unit="ms", submodel="crypto",
                           description="coprocessor time per NISTECC-192 sign or verify"),
    "exp_ecc": Free(low=0.0, high=4.0, unit="1", submodel="crypto",
                    description="key-size exponent, NISTECC ops"),
    "ams_fixed_ms": Free(low=0.0, high=20.0, unit="ms", submodel="ams",
                         description="elapsed per transaction outside the processors and cards"),
    "mq_us_per_kb": Free(low=0.0, high=50.0, unit="us/KB", submodel="ams",
                         description="MQ CPU per KB of message without AMS (MQPUT/MQGET copies), per "
                                     "transaction"),
    "mstr_admin_us_per_s": Free(low=0.0, high=1000000.0, unit="us/s", submodel="ams",
                                description="MQ MSTR administration CPU per second"),
    "ams_sig_op_us": Free(low=0.0, high=1000.0, unit="us", submodel="ams",
                          description="AMS CPU per sign or verify operation (AMSM)"),
    "ams_key_op_us": Free(low=0.0, high=1000.0, unit="us", submodel="ams",
                          description="AMS CPU per key encrypt or key decrypt operation (AMSM)"),
    "ams_msg_us": Free(low=0.0, high=1000.0, unit="us", submodel="ams",
                       description="AMS interception CPU per protected message, any policy"),
    "ams_hash_us_per_kb": Free(low=0.0, high=100.0, unit="us/KB", submodel="ams",
                               description="AMS hashing CPU per KB (signing policies)"),
    "ams_enc_us_per_kb": Free(low=0.0, high=100.0, unit="us/KB", submodel="ams",
                              description="AMS symmetric encryption CPU per KB"),
    "tls_mstr_us": Free(low=0.0, high=2000.0, unit="us", submodel="tls", start=20.0,
                        description="queue manager CPU per channel transaction"),
    "tls_mstr_us_per_kb": Free(low=0.0, high=20.0, unit="us/KB", submodel="tls", start=0.5,
                               description="queue manager CPU per KB"),
    "tls_chin_us": Free(low=0.0, high=2000.0, unit="us", submodel="tls", start=50.0,
                        description="channel initiator CPU per transaction, unprotected"),
    "tls_chin_us_per_kb": Free(low=0.0, high=20.0, unit="us/KB", submodel="tls", start=1.0,
                               description="channel initiator CPU per KB, unprotected"),
    "tls_tcpip_us": Free(low=0.0, high=2000.0, unit="us", submodel="tls", start=15.0,
                         description="TCPIP CPU per transaction, unprotected"),
    "tls_tcpip_us_per_kb": Free(low=0.0, high=20.0, unit="us/KB", submodel="tls", start=0.5,
                                description="TCPIP CPU per KB, unprotected"),
    "tls_ssl_us": Free(low=0.0, high=2000.0, unit="us", submodel="tls", start=50.0,
                       description="MQ SSLCIPH overhead per transaction (CHIN)"),
    "tls_ssl_us_per_kb": Free(low=0.0, high=50.0, unit="us/KB", submodel="tls", start=1.0,
                              description="MQ SSLCIPH record handling per KB (CHIN)"),
    "tls_attls_tcpip_us": Free(low=0.0, high=2000.0, unit="us", submodel="tls", start=10.0,
                               description="AT-TLS SRB overhead per transaction in TCPIP"),
    "tls_sym_us_per_kb_null": Free(low=0.0, high=100.0, unit="us/KB", submodel="tls", start=0.2,
                                   description="NULL_SHA hashing per KB per side"),
    "tls_sym_us_per_kb_tls12": Free(low=0.0, high=100.0, unit="us/KB", submodel="tls", start=0.5,
                                    description="TLS 1.2 AES (CPACF) per KB per side"),
    "tls_sym_us_per_kb_tls13hw": Free(low=0.0, high=100.0, unit="us/KB", submodel="tls", start=0.5,
                                      description="TLS 1.3 AES-GCM (CPACF) per KB per side"),
    "tls_sym_us_per_kb_sw": Free(low=0.0, high=1000.0, unit="us/KB", submodel="tls", start=60.0,
                                 description="TLS 1.3 CHACHA20 (software) per KB per side"),
    "tls_z14_vs_z15": Free(low=0.5, high=2.0, unit="1", submodel="tls", start=1.0,
                           description="z14 channel CPU per transaction relative to z15"),
    "hs_dhe_kx": Free(low=1.0, high=1000.0, unit="1", submodel="handshake", start=30.0,
                      description="DHE full handshake CPU (key exchange in software) relative to ECDHE's, "
                                  "coprocessor"),
    "hs_sign_sw": Free(low=0.0, high=1000.0, unit="1", submodel="handshake", start=50.0,
                       description="the (EC)DHE server's RSA signature in software (accelerators only, FIPS "
                                   "off), relative to the ECDHE full handshake"),
}
GROUPS = {"crypto": "ams", "ams": "ams", "tls": "tls", "handshake": "handshake"}
# Robust loss on tolerance-scaled residuals (f_scale = one tolerance): see the docstring of
# cryptoplan.model.calibration.fit.
# leastsq.LOSSES gives its IRLS weights for the standard errors.
LOSS = "cauchy"


def derived_parameters() -> dict:
    """Parameters read from rows, or structural assumptions, rather than fitted.

    Returns
    -------
    dict
        name -> ``(value, figure id or "structural assumption", unit, sub-model, description)``;
        the value in the stated unit.
    """
    return {
        "ams_cert_checks": (1.0, "structural assumption", "1", "ams",
                            "public-key checks per certificate AMS validates (the issuing CA's signature; "
                            "one per intermediate CA more); the RMF mix of 4 ME per CRT request in Sharkey's AMS "
                            "key-size blog (2024) checks it"),
        "mq_base_us": (figure("ref_ams_txn_cost_2k_none_z14").target(), "ref_ams_txn_cost_2k_none_z14",
                       "us", "ams", "MQ CPU per request/reply transaction without AMS"),
        "crypto_call_ms": (0.0, "structural assumption", "ms", "ams",
                           "elapsed per crypto request beyond its EXEC TIME (ICSF, AP queue): 0; fitted, it went to its "
                           "bound 0 once the coprocessor's sign has its fixed part (cop_rsa_fixed_share); a site may set it"),
        "chin_task_elapsed_ratio": (1.0, "structural assumption", "1", "tls",
                                    "SSL-task and dispatcher elapsed time per CPU time (model.channel's rho); "
                                    "1: the runs of Sharkey's AT-TLS channels blog (2021) were neither CPU nor network constrained; a site "
                                    "measures it on its SMF 115 task statistics (cryptoplan calibrate --smf)"),
    }


def initial(name: str, exclude=()) -> tuple[float, float, float]:
    """(start, low, high) of a free parameter, the start as :class:`Free` says.

    Parameters
    ----------
    name : str
        A key of :data:`FREE`.
    exclude : sequence of str
        Figure ids left out of the fit: a parameter whose start would be read from one of
        them (an RMF card time) starts in the middle of its bounds instead, so a left-out
        figure cannot leak into a cross-validation refit through its starting point.

    Returns
    -------
    tuple of float
        ``(start, low, high)`` in the parameter's unit (``FREE[name].unit``); ``start`` is
        clipped to ``[low, high]``.
    """
    spec = FREE[name]
    lo, hi = spec.bounds()
    if spec.bounds_from is not None:
        return 0.5 * (lo + hi), lo, hi
    seeds = {"cop_rsa_ms_2048": "s001_rmf_cex8c_exec_ms", "acc_me_ms_2048": "s001_rmf_me2048_exec_ms",
             "acc_crt_ms_2048": "s001_rmf_crt2048_exec_ms"}
    if spec.start is not None:
        x0 = spec.start
    else:
        x0 = (figure(seeds[name]).target() if name in seeds and seeds[name] not in exclude
          else (lo + hi) / 2 if hi < 100 else lo + 1.0)
    return min(max(x0, lo), hi), lo, hi


def free_bounds(name: str) -> tuple[float, float]:
    """(low, high) of the free parameter ``name``, in its unit (:meth:`Free.bounds`)."""
    return FREE[name].bounds()
