"""Crypto Express service times per operation, by key type and size.

Which card does what (IBM documentation, ``data/figures.csv`` rows ``ref_*``):
an RSA private-key *sign* runs on the CCA coprocessor (CEXnC); RSA public-key
operations (*verify*, *key_encrypt*) run on the accelerator (CEXnA) in
Modulus-Exponent (ME) form; the private-key *key_decrypt* runs on the
accelerator in Chinese-Remainder-Theorem (CRT) form; NISTECC signatures and
verifications run on the coprocessor only, and NISTECC keys cannot encrypt.

Service time scales as a power of the key size (RSA modulus or curve size)
above a part that does not grow with it:

.. math::

    t_f(n) = t_f(n_0)\\,\\big(s_f + (1 - s_f)\\,(n / n_0)^{\\alpha_f}\\big),

with :math:`n_0` = 2048 bits for RSA (where RMF gives the measured times) and
192 bits for NISTECC, :math:`\\alpha` of the private-key operations fitted
within the textbook band (row ``ref_scaling_private_exponent``) and of the
public-key ones within theirs (``ref_scaling_public_exponent``).  The part
that does not grow, :math:`s_f\\,t_f(n_0)`, is:

* for the coprocessor's RSA sign (CCA_RSA), the fitted share
  ``cop_rsa_fixed_share`` (about a fifth of the 2048-bit time): the work a
  secure-key sign does whatever the modulus, the CCA verb and the private-key
  token, which the coprocessor unwraps under its master key for every request,
  where an accelerator is handed a clear key.  Seed 001 needs it: the RMF
  example's 0.596 ms per 2048-bit sign and Integrity's 1342 -> 122
  transactions/s from 1024 to 4096 bits cannot both hold with a pure power law
  (the 1024-bit sign would have to be too short for the 1342/s), and without it
  the fit had put a 0.05 ms "handling time" outside the card on every request,
  longer than a 1024-bit sign, to make up the difference;
* for the accelerator's RSA functions (ME and CRT), one fitted time per
  request, ``acc_fixed_ms`` (about 0.02 ms; :math:`s_f = t_{fixed} /
  t_f(n_0)`): the request's trip through the adapter (AP queue, firmware
  dispatch) whatever the modulus.  Seed 001 needs it: without it the fit put
  the public-key exponent at its band's flat edge (1.6), and Privacy at 1024
  bits sent 37% of its card time to the accelerator, where the blog's charts
  show it relying "almost equally" on both cards at every key size (row
  ``s001_privacy_accelerator_share``; the ME and CRT times of 1024-bit keys
  are not published, so this sentence and the 1024-bit rates are what place
  it: ``cryptoplan fit`` shows how loosely);
* 0 for NISTECC.

For NISTECC the size :math:`n` is the curve size rounded up to whole 64-bit words
(:data:`ECC_WORD_BITS`): multi-precision arithmetic works on whole machine words, so a
224-bit curve costs what a 256-bit one does (four words each) and a 521-bit one what 576 bits
would.  A modelling assumption about the coprocessor, not a published figure; seed 001 needs
it: with its two anchors (NISTECC 192 against RSA 1024, +67%; NISTECC 521 against RSA 4096,
-22%) any law smooth in the curve size makes NISTECC 224 cheaper than RSA 2048, where the
blog measured the RSA configurations faster "for the smaller key-sizes, including ... RSA of
2048-bits" (a local exponent of at least 2.2 from 192 to 224 bits, where 192 to 521 averages
1.9).  With whole words the same anchors give RSA 2048 the higher Integrity rate.

References
----------
.. [1] RMF Crypto Hardware Activity report, example in seed 001 (CEX8C,
   CEX8A, RSA ME/CRT 2048 execution times).
.. [2] A. J. Menezes, P. C. van Oorschot, S. A. Vanstone, *Handbook of
   Applied Cryptography*, CRC Press, 1996, §14.1 (cost of modular
   exponentiation grows as :math:`n^{2}` to :math:`n^{3}`).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from typing import NamedTuple

import numpy as np

from .._validate import as_array
from ..domains import KEY_SIZE
from ..params import normalize_choice, normalize_key, normalize_key_type, param

__all__ = ["OPERATIONS", "CardFunction", "CARD_FUNCTIONS", "ECC_WORD_BITS", "operation_function", "crypto_op_ms",
           "function_ms"]

# cert_check: the public-key check of a CA's signature on a certificate AMS validates
OPERATIONS = ("sign", "verify", "key_encrypt", "key_decrypt", "cert_check")


class CardFunction(NamedTuple):
    """A Crypto Express function's service-time law (module docstring): the card that runs it,
    the parameters holding its time at the reference size and its exponent, and the parameter
    holding the part that does not grow with the key, as a share of that time or in ms (at most
    one of the two; neither: 0)."""

    card: str
    time: str
    exponent: str
    fixed_share: str | None = None
    fixed_ms: str | None = None


CARD_FUNCTIONS = {
    "CCA_RSA": CardFunction("coprocessor", "cop_rsa_ms_2048", "exp_private", fixed_share="cop_rsa_fixed_share"),
    "RSA_ME": CardFunction("accelerator", "acc_me_ms_2048", "exp_public", fixed_ms="acc_fixed_ms"),
    "RSA_CRT": CardFunction("accelerator", "acc_crt_ms_2048", "exp_private", fixed_ms="acc_fixed_ms"),
    "CCA_ECC": CardFunction("coprocessor", "cop_ecc_ms_192", "exp_ecc"),
}
_REF_BITS = {"RSA": 2048.0, "NISTECC": 192.0}
#: Word size (bits) of the coprocessor's multi-precision arithmetic for NISTECC: a modelling
#: assumption, not a published figure (see the module docstring).
ECC_WORD_BITS = 64.0


def operation_function(operation, key_type) -> str:
    """The card function that serves an AMS/TLS operation for a key type.

    Returns one of ``CARD_FUNCTIONS``.  Raises ValueError for an unknown
    operation or for encryption with a NISTECC key (no DATAENCRYPT usage).
    """
    op = normalize_choice("operation", operation, OPERATIONS)
    kt = str(key_type).strip().upper()
    if kt == "NISTECC":
        if op in ("key_encrypt", "key_decrypt"):
            raise InputError("NISTECC keys cannot encrypt (RACDCERT KEYUSAGE has no DATAENCRYPT "
                             "for NISTECC): use RSA for Privacy and Confidentiality")
        return "CCA_ECC"
    return {"sign": "CCA_RSA", "verify": "RSA_ME", "key_encrypt": "RSA_ME",
            "key_decrypt": "RSA_CRT", "cert_check": "RSA_ME"}[op]


def function_ms(function: str, key_bits):
    """Service time (ms) of a card function at ``key_bits`` (array allowed)."""
    law = CARD_FUNCTIONS[function]
    ref = _REF_BITS["NISTECC" if function == "CCA_ECC" else "RSA"]
    bits = np.asarray(key_bits, dtype=float)
    if function == "CCA_ECC":       # the card's arithmetic works on whole words (module docstring)
        bits = ECC_WORD_BITS * np.ceil(bits / ECC_WORD_BITS)
    # np.power, not **: on a NumPy scalar ** is the C library's pow, on an array NumPy's own
    # (SIMD) loop, and the two differ in the last bit on some processors (AVX-512): a cell
    # must get the same number alone as in a column of cells or a sweep's scenarios
    grows = np.power(bits / ref, param(law.exponent))
    t0 = param(law.time)
    if law.fixed_ms is not None:
        fixed = param(law.fixed_ms)
        return fixed + (t0 - fixed) * grows
    if law.fixed_share is not None:
        s = param(law.fixed_share)
        return t0 * (s + (1.0 - s) * grows)
    return t0 * grows


def _law_params(operation, key_type) -> list:
    """The parameters an operation's card time reads."""
    law = CARD_FUNCTIONS[operation_function(operation, key_type)]
    return [p for p in (law.time, law.exponent, law.fixed_share, law.fixed_ms) if p]


def crypto_op_ms(operation, key_type="RSA", key_size=2048):
    """Crypto Express execution time of one operation (ms).

    Parameters
    ----------
    operation : {"sign", "verify", "key_encrypt", "key_decrypt", "cert_check"}
        The asymmetric operation (AMS: sign on MQPUT, verify on MQGET,
        key_encrypt per recipient, key_decrypt by the getter, cert_check
        per certificate validated: a public-key operation like verify).
    key_type : {"RSA", "NISTECC"}
    key_size : int or array_like
        RSA 1024, 2048, 3072, 4096 or NISTECC 192, 224, 256, 384, 521 bits.

    Returns
    -------
    float or ndarray
        Milliseconds of card time (RMF "EXEC TIME"), excluding queueing; inside a
        :func:`~cryptoplan.model.params.using_values` block of ``k`` parameter sets (draws), one per
        set, shape ``(k,)`` (a list of key sizes then has one per set too).

    .. math:: t(n) = t(n_0)\\,\\big(s + (1 - s)\\,(n / n_0)^{\\alpha}\\big)

    (:math:`s > 0` for the RSA functions, 0 for NISTECC: see the module docstring).
    """
    kt = normalize_key_type(key_type)
    shape = np.shape(as_array("key_size", key_size)) if isinstance(key_size, (list, tuple)) else np.shape(key_size)
    if shape == ():  # as the AMS functions: text accepted, errors list the sizes
        key_size = normalize_key(kt, key_size)[1]
    sizes = np.atleast_1d(KEY_SIZE.check(key_size))
    for s in sizes.ravel():
        normalize_key(kt, s)
    try:
        out = np.asarray(function_ms(operation_function(operation, kt), sizes))
    except ValueError:        # k parameter sets in force (draws) and n key sizes: one of the two must be 1
        raise InputError(f"key_size has {sizes.size} values and the parameters in force are "
                         f"{np.broadcast_shapes(*(np.shape(param(n)) for n in _law_params(operation, kt)))[0]} "
                         "sets (draws): give one key size, or one per set") from None
    if shape == ():           # one key: a float, or one time per parameter set in force (draws)
        return float(out[0]) if out.size == 1 else out
    return out.reshape(shape) if out.size == int(np.prod(shape)) else out
