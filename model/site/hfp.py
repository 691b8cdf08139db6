"""IBM hexadecimal floating point (HFP, the System/360 format) read as Python floats: :func:`hfp_to_float`.

RMF writes the counters, times and scaling factors of SMF type 70 subtype 2 records as HFP
numbers ("floating" in the format column of IBM's record layouts): a sign bit, a 7-bit
exponent in excess-64 notation, base 16, and a fraction of 24 bits (short, 4 bytes) or
56 bits (long, 8 bytes), big-endian:

.. math:: x = (-1)^{s} \\times 0.f_1 f_2 \\ldots f_n \\times 16^{\\,e - 64}

with hexadecimal fraction digits :math:`f_i`.  A number is *normalized* when its first
fraction digit :math:`f_1` is not zero; the true zero is all zero bits (a negative zero,
sign bit only, is also zero).  Every HFP long number has at most 56 significant bits, so
the conversion rounds once, to the nearest IEEE double (53 bits): exact for every value a
double can hold, such as counts below :math:`2^{53}`.

Patterns RMF does not write are refused, naming their byte offset: an unnormalized number
(a non-zero fraction whose first digit is 0), a zero fraction under a non-zero exponent,
and the all-ones patterns (``7FFFFFFF``, ``FFFFFFFF`` and their long forms) that
uninitialized or overflowed storage shows, HFP's nearest thing to a NaN.

References
----------
IBM, "z/Architecture Principles of Operation", chapter "Hexadecimal-Floating-Point
Instructions" (formats and normalization); IBM, "z/OS MVS System Management Facilities
(SMF)", record type 70 subtype 2 (the fields in HFP long format).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from .errors import SiteFileError

import math

__all__ = ["HfpError", "hfp_to_float", "HFP_SHORT", "HFP_LONG"]

#: Bytes of a short and of a long HFP number.
HFP_SHORT, HFP_LONG = 4, 8


class HfpError(SiteFileError):
    """Bytes that are not an HFP number RMF writes; ``offset`` is where they start."""

    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


def hfp_to_float(raw, offset: int = 0, length: int = HFP_LONG) -> float:
    """The value of the HFP number of ``length`` bytes (4 or 8) at ``raw[offset:]``.

    Parameters
    ----------
    raw : bytes-like
        The buffer holding the number (big-endian, as stored on z/OS).
    offset : int
        Where the number starts in ``raw``, bytes; named in errors.
    length : int
        4 (short, 24-bit fraction) or 8 (long, 56-bit fraction).

    Returns
    -------
    float
        :math:`(-1)^s \\times F \\times 16^{e-64}`, rounded once to the nearest double.

    Raises
    ------
    HfpError
        Too few bytes, or a pattern RMF does not write (see the module documentation); the
        message names the byte offset and the bytes in hexadecimal.
    """
    if length not in (HFP_SHORT, HFP_LONG):
        raise InputError(f"an HFP number is 4 or 8 bytes, not {length}")
    chunk = bytes(raw[offset:offset + length])
    if len(chunk) != length:
        raise HfpError(f"byte offset {offset}: an HFP number of {length} bytes runs past the end of the data "
                       f"({len(chunk)} bytes left)", offset)
    word = int.from_bytes(chunk, "big")
    bits = 8 * length - 8                         # fraction bits: 24 or 56
    sign = word >> (8 * length - 1)
    exponent = (word >> bits) & 0x7F
    fraction = word & ((1 << bits) - 1)
    if exponent == 0x7F and fraction == (1 << bits) - 1:
        raise HfpError(f"byte offset {offset}: X'{chunk.hex().upper()}' is the all-ones pattern, not a number RMF "
                       "writes (uninitialized or overflowed storage)", offset)
    if fraction == 0:
        if exponent:
            raise HfpError(f"byte offset {offset}: X'{chunk.hex().upper()}' has a zero fraction under a non-zero "
                           "exponent (not the HFP true zero)", offset)
        return 0.0
    if fraction >> (bits - 4) == 0:
        raise HfpError(f"byte offset {offset}: X'{chunk.hex().upper()}' is an unnormalized HFP number (its first "
                       "fraction digit is 0)", offset)
    value = math.ldexp(float(fraction), 4 * (exponent - 64) - bits)
    return -value if sign else value
