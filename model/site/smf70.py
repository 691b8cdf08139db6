"""RMF's crypto hardware activity as SMF writes it, type 70 subtype 2 records: :func:`read_smf70`.

The numbers of the Postprocessor's CRYPTO HARDWARE ACTIVITY report (:mod:`.rmf_report`) come
from SMF type 70 subtype 2 records, one per system and interval.  This reader takes the
records as a data set is transferred to a workstation (binary, each record with its 4-byte
record descriptor word) and returns the same :class:`~.rmf_records.CryptoActivity` records as
the report reader, computed with the formulas IBM documents for the report:

.. math::

    \\text{RATE} = \\frac{C}{T_{int}}, \\qquad
    \\text{UTIL\\%} = \\frac{t \\cdot s \\cdot 100}{T_{int} \\cdot E}, \\qquad
    \\text{EXEC TIME} = \\frac{t \\cdot s}{C} \\times 1000 \\;\\text{ms}

with :math:`C` the operations counted in the interval, :math:`t` their execution time as
recorded, :math:`s` the section's scaling factor (seconds per unit of :math:`t`),
:math:`T_{int}` the interval (SMF70INT, seconds) and :math:`E` the accelerator's engines
(R7024EN; 1 for coprocessors).  A row with no operations has RATE 0, EXEC TIME 0 and the
UTIL% its time gives (0), as RMF prints it.  A card's summary sums its functions'
counts and times (PKCS11: the five function groups; accelerator: the six RSA groups, each
summed over the engines' timer-counter blocks); a CCA coprocessor's summary is its
"all operations" pair (R7023T0, R7023C0) and its KEY-GEN row a rate only (R7023C1).

The stream
----------
A stream of variable-length records, each led by its record descriptor word (RDW: a
2-byte big-endian length that counts the RDW, then 2 bytes whose first holds the spanning
code: 0 a complete record, 1 the first, 3 a middle and 2 the last segment of a spanned
(RECFM=VBS) record).  Segments are reassembled into one logical record.  This is what a
binary transfer with RDWs gives (FTP ``quote site rdw`` then ``binary``, or a copy of the
dump data set written by IFASMFDP/IFASMFDL kept as RECFM=VB/VBS).  A copy without RDWs is not
self-delimiting and is refused at its first bytes, saying how to transfer the data set;
so is one that still carries block descriptor words (a RECFM=U copy of the blocks).
Records of other types or subtypes are skipped and counted in a warning; a file with no
type 70 subtype 2 record is an error naming the file.

Layout (IBM, "z/OS MVS System Management Facilities (SMF)", record type 70)
-----------------------------------------------------------------------------
Offsets below are from the start of the record, RDW included, as in IBM's tables.

*Header/Self-defining Section*: 0 SMF70LEN (2, binary), 2 SMF70SEG (2), 4 SMF70FLG (1),
5 SMF70RTY (1, 70), 6 SMF70TME (4, hundredths of a second), 10 SMF70DTE (4, packed
0cyydddF), 14 SMF70SID (4, EBCDIC), 18 SMF70SSI (4, ``RMF``), 22 SMF70STY (2, subtype 2),
24 SMF70TRN (2, number of triplets), 26 reserved (2), 28 SMF70PRS/PRL/PRN (4/2/2: offset,
length and number of RMF product sections); the individual header extension for subtype 2:
36 SMF7023S/L/N (Cryptographic CCA Coprocessor data section), 44 SMF7024S/L/N
(Cryptographic Accelerator data section), 52 SMF702CS/L/N (ICSF Services data section),
60 SMF7025S/L/N (Cryptographic PKCS11 Coprocessor data section).  Each triplet's offset is
from the RDW; a triplet whose sections would end beyond the record is an error naming it.

*RMF Product Section* (offsets within it): 10 SMF70IST (4, packed 0hhmmssF, interval start
time), 14 SMF70DAT (4, packed 0cyydddF, interval start date), 18 SMF70INT (4, packed
mmsstttF, interval length), 51 SMF70SRL (1, SMF record level).

*Cryptographic CCA Coprocessor Data Section* (R702TYP3, one per coprocessor and scope): 0
R7023AX index, 1 R7023CT type, 2 R7023MSK validity mask (bit 0 all operations, bit 1 RSA key
generation; valid with SMF70SRL >= X'61'), 8 R7023SF scaling factor, 16 R7023T0 execution
time and 24 R7023C0 number of all operations, 40 R7023C1 number of RSA key generations, 48
R7023SCOPE (0 CPC scope, 1 system scope), 49 R7023DID domain.  Floating fields are HFP long
(8 bytes, :mod:`.hfp`).

*Cryptographic Accelerator Data Section* (R702TYP4): 0 R7024AX, 1 R7024CT, 2 R7024MSK (bits
0-5: 1024-bit ME, 2048-bit ME, 1024-bit CRT, 2048-bit CRT, 4096-bit ME, 4096-bit CRT; valid
with SMF70SRL >= X'5B'), 4 R7024EN engines (4, binary: the valid entries of R7024TC), 8
R7024SF, 16 R7024TC: five 64-byte blocks, one per engine, each R7021MET/MEC, R7022MET/MEC,
R7021CRT/CRC, R7022CRT/CRC (time and number of 1024- and 2048-bit ME and CRT operations);
336 R7023MET/MEC, 352 R7023CRT/CRC (4096-bit ME and CRT), 368 R7024SCOPE, 369 R7024DID.

*Cryptographic PKCS11 Coprocessor Data Section* (R702TYP5): 0 R7025AX, 1 R7025CT, 2
R7025MSK (bits 0-4: slow asymmetric, fast asymmetric, symmetric partial, symmetric
complete, asymmetric key generation), 8 R7025SF, 16 R7025SAT/SAC (slow asymmetric time,
count), 32 R7025FAT/FAC (fast asymmetric), 48 R7025SPT/SPC (symmetric, partial results), 64
R7025SCT/SCC (symmetric, complete results), 80 R7025AGT/AGC (asymmetric key generation),
96 R7025SCOPE, 97 R7025DID.

*ICSF Services Data Section*: its triplet is checked, its content is not read.  It counts
ICSF calls, bytes and instructions by service (DES, AES, MAC, hash, PIN...) for the system,
most of them CPACF work on the processors rather than requests to a Crypto Express card, and
it has no card, execution time or utilization: nothing of it belongs in a
:class:`~.rmf_records.CryptoActivity`.

Scope: APAR OA54952 added R702xSCOPE; from then on each card has a section with system
scope (``LPAR``: this system's requests) and one with CPC scope (``CPC``: every LPAR sharing
the card), or only the CPC one (as RMF prints an accelerator whose LPAR columns are blank).
A section too short to hold the scope byte (the earlier layout) is ``TOTAL``.

Card types (R702xCT, IBM's value lists): 11 to 14 are Crypto Express 5 to 8 (CEX5C...CEX8C,
CEX5A..., CEX5P...), 10 CEX4, 9 CEX3C, 8 CEX3A, 7 CEX2C, 6 CEX2A, 5 PCIXCC, 3 PCICC.  A higher
code, from an RMF newer than this reader, is named by the same rule (code - 6: 15 is
``CEX9C`` in the CCA section) and read with a warning naming it; a code the rule does not
cover is ``UNKNOWN(code)``, also with a warning.  A section longer than the layout above
(fields added by a newer RMF) is read with a warning that the extra bytes are not.

Bad input is an :class:`Smf70Error` naming the file and the byte offset in it: a
truncated record or segment, a broken segment sequence, a triplet beyond its record, a
packed-decimal or HFP field that is not one (:func:`.hfp.hfp_to_float`), a negative count
or time.  Nothing is written anywhere: the reader only reads.

References
----------
IBM, "z/OS MVS System Management Facilities (SMF)", record type 70 (RMF Processor Activity),
subtype 2: Header/Self-defining Section, RMF Product Section, Cryptographic CCA Coprocessor
Data Section, Cryptographic Accelerator Data Section, ICSF Services Data Section,
Cryptographic PKCS11 Coprocessor Data Section; IBM, "z/OS RMF User's Guide", Overview
conditions for the Crypto Hardware Activity report (SMF record type 70-2: the formulas
above); IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report.
"""

from __future__ import annotations

import bisect
import calendar
import datetime as _dt
import functools
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .hfp import HfpError, hfp_to_float
from .errors import SiteFileError
from .rmf_records import CryptoActivity, system_id

__all__ = ["read_smf70", "Smf70Error", "MAX_SMF_BYTES", "CARD_TYPE_CODES", "card_type_name"]

#: A dump of RMF's records for many days is large; filter it to type 70 beyond this.
MAX_SMF_BYTES = 2_000_000_000

#: R702xCT values IBM documents, by section: code -> name.
CARD_TYPE_CODES = {
    "CCA": {3: "PCICC", 5: "PCIXCC", 7: "CEX2C", 9: "CEX3C", 10: "CEX4C", 11: "CEX5C", 12: "CEX6C", 13: "CEX7C",
            14: "CEX8C"},
    "ACCELERATOR": {6: "CEX2A", 8: "CEX3A", 10: "CEX4A", 11: "CEX5A", 12: "CEX6A", 13: "CEX7A", 14: "CEX8A"},
    "PKCS11": {10: "CEX4P", 11: "CEX5P", 12: "CEX6P", 13: "CEX7P", 14: "CEX8P"},
}
_MODE_LETTER = {"CCA": "C", "ACCELERATOR": "A", "PKCS11": "P"}
_HOW = ("transfer the SMF data set in binary with its record descriptor words (FTP: 'quote site rdw', then "
        "'binary'), after dumping RMF's records with IFASMFDP or IFASMFDL, TYPE(70(2))")

# header and triplets (record offsets)
_RTY, _SID, _STY, _TRN, _PRODUCT = 5, 14, 22, 24, 28
_TRIPLETS = {"CCA": 36, "ACCELERATOR": 44, "ICSF": 52, "PKCS11": 60}
_TRIPLET_NAMES = {"PRODUCT": "SMF70PRS", "CCA": "SMF7023S", "ACCELERATOR": "SMF7024S", "ICSF": "SMF702CS",
                  "PKCS11": "SMF7025S"}
# data section lengths: decoded fields end, with scope, full layout
_MIN_LEN = {"CCA": 48, "ACCELERATOR": 336, "PKCS11": 96}
_SCOPE_AT = {"CCA": 48, "ACCELERATOR": 368, "PKCS11": 96}
_FULL_LEN = {"CCA": 52, "ACCELERATOR": 372, "PKCS11": 100}
_SCOPES = {0: "CPC", 1: "LPAR"}
# validity masks: SMF70SRL from which they are set
_MASK_SRL = {"CCA": 0x61, "ACCELERATOR": 0x5B, "PKCS11": 0}
# accelerator: (function, key size, mask bit, offset of the time in an engine block or None, fixed offset)
_ACCEL_ROWS = (("RSA ME", 1024, 0x80, 0, None), ("RSA ME", 2048, 0x40, 16, None), ("RSA ME", 4096, 0x08, None, 336),
               ("RSA CRT", 1024, 0x20, 32, None), ("RSA CRT", 2048, 0x10, 48, None),
               ("RSA CRT", 4096, 0x04, None, 352))
# PKCS11: (function, mask bit, offset of the time; the count follows it), in the report's order
_PKCS11_ROWS = (("ASYM FAST", 0x40, 32), ("ASYM GEN", 0x08, 80), ("ASYM SLOW", 0x80, 16),
                ("SYMM COMPLETE", 0x10, 64), ("SYMM PARTIAL", 0x20, 48))
_SECTION_ORDER = ("CCA", "PKCS11", "ACCELERATOR")       # as the report prints them
_SCOPE_ORDER = {"LPAR": 0, "CPC": 1, "TOTAL": 2}


class Smf70Error(SiteFileError):
    """SMF data that cannot be read as type 70 subtype 2 records: names the file and the byte offset."""


def card_type_name(section: str, code: int) -> tuple[str, bool]:
    """``(name, known)`` of a card type code R702xCT in ``section`` (``CCA``, ``ACCELERATOR``, ``PKCS11``).

    Known codes are IBM's (:data:`CARD_TYPE_CODES`); a code above them is named by IBM's rule
    (generation = code - 6, the section's mode letter: 15 in the CCA section is ``CEX9C``);
    any other is ``UNKNOWN(code)``.  ``known`` is False for both of the latter.
    """
    table = CARD_TYPE_CODES[section]
    if code in table:
        return table[code], True
    if code > max(table):
        return f"CEX{code - 6}{_MODE_LETTER[section]}", False
    return f"UNKNOWN({code})", False


# ---------------------------------------------------------------------------------------------
# the stream: RDWs, spanned segments


@dataclass(frozen=True)
class _Record:
    """One logical record (RDW included) and where its bytes lie in the file."""

    data: bytes
    pieces: tuple        # (logical start, file start, length), in order

    @functools.cached_property
    def _starts(self) -> list:
        return [start for start, _, _ in self.pieces]

    def at(self, offset: int) -> int:
        """The file offset of the record's byte ``offset`` (its piece found by bisection: a spanned
        record of half a million 5-byte segments is asked for offsets many times)."""
        k = bisect.bisect_right(self._starts, offset) - 1
        if k >= 0:
            start, file_start, length = self.pieces[k]
            if offset < start + length:
                return file_start + offset - start
        last = self.pieces[-1]
        return last[1] + offset - last[0]


def _rdw(data, pos):
    return int.from_bytes(data[pos:pos + 2], "big"), data[pos + 2], data[pos + 3]


def _plausible_rdw(data, pos, limit) -> bool:
    if min(limit, len(data)) - pos < 4:
        return False
    length, code, zero = _rdw(data, pos)
    return 5 <= length <= limit - pos and code <= 3 and zero == 0


def _looks_blocked(data) -> bool:
    """Block descriptor words: a first 'record' whose body is exactly a run of RDW'd records."""
    n = len(data)
    if not _plausible_rdw(data, 0, n) or data[2] != 0:
        return False
    end = int.from_bytes(data[0:2], "big")
    pos = 4
    while pos < end:
        if not _plausible_rdw(data, pos, end):
            return False
        pos += int.from_bytes(data[pos:pos + 2], "big")
    return pos == end and end > 8


def _records(data, name, warnings):
    """The logical records of an RDW'd stream, spanned segments reassembled: yielded one at a
    time, so the reader checks each before the next is read (30 MB of 5-byte records after a
    good one were all held, 2.4 GB, before the first was refused)."""
    n = len(data)
    if n == 0:
        raise Smf70Error(f"{name}: empty; {_HOW}")
    if _looks_blocked(data):
        raise Smf70Error(f"{name}@0: the data begins with a block descriptor word (a RECFM=U copy of the "
                         f"blocks); {_HOW}")
    if not _plausible_rdw(data, 0, 0x10000):
        raise Smf70Error(f"{name}@0: X'{bytes(data[:4]).hex().upper()}' is not a record descriptor word (2-byte "
                         f"length, 2 bytes of segment flags); the data set was not transferred with RDWs: {_HOW}")
    pending = None      # (file offset of the first segment, bytearray body, pieces)
    pos = 0
    while pos < n:
        if not any(data[pos:pos + 4]) and not any(data[pos:]):
            warnings.append(f"{name}@{pos}: {n - pos} bytes of zeros after the last record (block padding), "
                            "ignored")
            break
        if n - pos < 4:
            raise Smf70Error(f"{name}@{pos}: truncated: {n - pos} bytes left, less than a record descriptor word")
        length, code, zero = _rdw(data, pos)
        if length < 5 or code > 3 or zero != 0:
            raise Smf70Error(f"{name}@{pos}: X'{bytes(data[pos:pos + 4]).hex().upper()}' is not a record "
                             "descriptor word (length of at least 5 bytes, segment code 0-3, then 0)")
        if pos + length > n:
            raise Smf70Error(f"{name}@{pos}: truncated record: its descriptor word gives {length} bytes, "
                             f"{n - pos} are left in the file")
        body = bytes(data[pos + 4:pos + length])
        if code == 0 or code == 1:
            if pending is not None:
                raise Smf70Error(f"{name}@{pos}: a new record begins while the spanned record begun at byte "
                                 f"{pending[0]} has had no last segment")
            if code == 0:
                yield _Record(bytes(data[pos:pos + 4]) + body, ((0, pos, 4), (4, pos + 4, len(body))))
            else:
                pending = (pos, bytearray(body), [(0, pos, 4), (4, pos + 4, len(body))])
        else:
            if pending is None:
                raise Smf70Error(f"{name}@{pos}: a {'middle' if code == 3 else 'last'} segment of a spanned "
                                 "record without its first segment")
            start, buf, pieces = pending
            pieces.append((4 + len(buf), pos + 4, len(body)))
            buf += body
            if code == 2:
                total = 4 + len(buf)
                rdw = (total if total <= 0xFFFF else 0).to_bytes(2, "big") + b"\0\0"
                pending = None
                yield _Record(rdw + bytes(buf), tuple(pieces))
        pos += length
    if pending is not None:
        raise Smf70Error(f"{name}@{pending[0]}: truncated: the spanned record begun here has no last segment "
                         "before the end of the file")


# ---------------------------------------------------------------------------------------------
# fields


def _packed(rec: _Record, off: int, size: int, name: str, field: str) -> str:
    """The digits of a packed-decimal field (the sign nibble checked and dropped)."""
    raw = rec.data[off:off + size]
    digits = raw.hex().upper()
    if len(raw) != size or not digits[:-1].isdigit() or digits[-1] not in "ABCDEF":
        raise Smf70Error(f"{name}@{rec.at(off)}: {field} X'{digits}' is not packed decimal (digits 0-9 and a "
                         "sign nibble A-F)")
    return digits[:-1]


def _hfp(rec: _Record, off: int, name: str, field: str) -> float:
    try:
        return hfp_to_float(rec.data, off)
    except HfpError as exc:
        reason = str(exc).partition(": ")[2]
        raise Smf70Error(f"{name}@{rec.at(off)}: {field} at record offset {off}: {reason}") from None


def _u(rec: _Record, off: int, size: int) -> int:
    return int.from_bytes(rec.data[off:off + size], "big")


@dataclass(frozen=True)
class _Interval:
    system: str
    date: str
    time: str
    seconds: float
    srl: int


def _product(rec: _Record, off: int, length: int, name: str) -> _Interval:
    """System, interval start and length and the record level from the RMF product section."""
    if length < 22:
        raise Smf70Error(f"{name}@{rec.at(_PRODUCT)}: the RMF product section is {length} bytes, too short to hold "
                         "SMF70IST, SMF70DAT and SMF70INT (22)")
    ist = _packed(rec, off + 10, 4, name, "SMF70IST (interval start, 0hhmmssF)")
    dat = _packed(rec, off + 14, 4, name, "SMF70DAT (interval start date, 0cyydddF)")
    itv = _packed(rec, off + 18, 4, name, "SMF70INT (interval length, mmsstttF)")
    hh, mm, ss = int(ist[1:3]), int(ist[3:5]), int(ist[5:7])
    if ist[0] != "0" or hh > 23 or mm > 59 or ss > 59:
        raise Smf70Error(f"{name}@{rec.at(off + 10)}: SMF70IST {ist} is not a time of day 0hhmmss")
    year = 1900 + 100 * int(dat[:2]) + int(dat[2:4])
    day = int(dat[4:7])
    if dat[0] != "0" or not 1 <= day <= (366 if calendar.isleap(year) else 365):
        raise Smf70Error(f"{name}@{rec.at(off + 14)}: SMF70DAT {dat} is not a date 0cyyddd")
    date = _dt.date(year, 1, 1) + _dt.timedelta(days=day - 1)
    seconds = 60 * int(itv[0:2]) + int(itv[2:4]) + int(itv[4:7]) / 1000.0
    if int(itv[2:4]) > 59 or seconds <= 0:
        raise Smf70Error(f"{name}@{rec.at(off + 18)}: SMF70INT {itv} is not an interval length mmssttt > 0")
    system = system_id(rec.data[_SID:_SID + 4].decode("cp037").strip(), f"{name}@{rec.at(_SID)}: SMF70SID")
    srl = rec.data[off + 51] if length >= 52 else 0
    return _Interval(system, date.isoformat(), f"{hh:02d}:{mm:02d}:{ss:02d}", seconds, srl)


# ---------------------------------------------------------------------------------------------
# validation and the numbers: one place


def _pair(rec, name, base, t_off, c_off, scale, what) -> tuple[float, float]:
    """``(count, busy seconds)`` of a timer-counter pair: count >= 0, time >= 0, busy = time x scale."""
    time = _hfp(rec, base + t_off, name, f"{what} execution time")
    count = _hfp(rec, base + c_off, name, f"{what} count")
    for value, off, field in ((time, t_off, "execution time"), (count, c_off, "count")):
        if value < 0:
            raise Smf70Error(f"{name}@{rec.at(base + off)}: {what} {field} {value!r} is negative")
    if time > 0 and not scale > 0:
        raise Smf70Error(f"{name}@{rec.at(base + 8)}: the scaling factor {scale!r} is not positive while "
                         f"{what} has an execution time")
    return count, time * scale


def _numbers(count: float, busy_s: float, interval_s: float, engines: int = 1) -> dict:
    """RATE (/s), EXEC TIME (ms) and UTIL% of ``count`` operations busy ``busy_s`` seconds (see the module)."""
    return {"rate": count / interval_s,
            "exec_ms": busy_s / count * 1000.0 if count > 0 else 0.0,
            "util_pct": busy_s * 100.0 / (interval_s * engines)}


_BLANK = {"rate": None, "exec_ms": None, "util_pct": None}


def _summed(pairs) -> tuple[float, float]:
    return sum(c for c, _ in pairs), sum(b for _, b in pairs)


# ---------------------------------------------------------------------------------------------
# data sections


def _cca(rec, name, base, valid, interval):
    scale = _hfp(rec, base + 8, name, "R7023SF scaling factor")
    count, busy = _pair(rec, name, base, 16, 24, scale, "R7023T0/R7023C0 (all operations)")
    keygen = _hfp(rec, base + 40, name, "R7023C1 (RSA key generations)")
    if keygen < 0:
        raise Smf70Error(f"{name}@{rec.at(base + 40)}: R7023C1 (RSA key generations) {keygen!r} is negative")
    rows = [((None, None), _numbers(count, busy, interval) if valid(0x80) else dict(_BLANK)),
            (("KEY-GEN", None), {"rate": keygen / interval if valid(0x40) else None, "exec_ms": None,
                                 "util_pct": None})]
    invalid = [w for bit, w in ((0x80, "all operations"), (0x40, "RSA key generation")) if not valid(bit)]
    return rows, invalid


def _pkcs11(rec, name, base, valid, interval):
    scale = _hfp(rec, base + 8, name, "R7025SF scaling factor")
    rows, good, invalid = [], [], []
    for function, bit, t_off in _PKCS11_ROWS:
        pair = _pair(rec, name, base, t_off, t_off + 8, scale, f"PKCS11 {function}")
        if valid(bit):
            good.append(pair)
            rows.append(((function, None), _numbers(*pair, interval)))
        else:
            invalid.append(function)
            rows.append(((function, None), dict(_BLANK)))
    return [((None, None), _numbers(*_summed(good), interval))] + rows, invalid


def _accelerator(rec, name, base, length, valid, interval):
    engines = _u(rec, base + 4, 4)
    if not 1 <= engines <= 5:
        raise Smf70Error(f"{name}@{rec.at(base + 4)}: R7024EN {engines} engines; the section's R7024TC array "
                         "holds 1 to 5")
    scale = _hfp(rec, base + 8, name, "R7024SF scaling factor")
    rows, good, invalid = [], [], []
    for function, key, bit, t_off, fixed in _ACCEL_ROWS:
        what = f"accelerator {function} {key}"
        if fixed is None:
            pair = _summed([_pair(rec, name, base, 16 + 64 * k + t_off, 16 + 64 * k + t_off + 8, scale,
                                  f"{what} (engine {k + 1})") for k in range(engines)])
        elif length >= fixed + 16:
            pair = _pair(rec, name, base, fixed, fixed + 8, scale, what)
        else:                                   # the layout before 4096-bit keys: no such row
            continue
        if valid(bit):
            good.append(pair)
            rows.append(((function, key), _numbers(*pair, interval, engines)))
        else:
            invalid.append(f"{function} {key}")
            rows.append(((function, key), dict(_BLANK)))
    return [((None, None), _numbers(*_summed(good), interval, engines))] + rows, invalid


def _triplet(rec, name, at, what, header_end):
    """``(offset, length, number)`` of the triplet at record offset ``at``, checked against the record."""
    off, length, number = _u(rec, at, 4), _u(rec, at + 4, 2), _u(rec, at + 6, 2)
    if number == 0:
        return off, length, 0
    size = len(rec.data)
    label = f"triplet {_TRIPLET_NAMES[what]} (record offset {at})"
    end = off + length * number
    if end > size:
        raise Smf70Error(f"{name}@{rec.at(at)}: {label}: {number} section(s) of {length} bytes at offset {off} "
                         f"end at byte {end}, beyond the {size}-byte record")
    if length == 0 or off < header_end:
        raise Smf70Error(f"{name}@{rec.at(at)}: {label}: offset {off}, length {length}: a section must lie after "
                         f"the {header_end}-byte header and not be empty")
    return off, length, number


def _record(rec: _Record, name: str, warnings: list) -> list[CryptoActivity]:
    """The activity records of one type 70 subtype 2 record."""
    size = len(rec.data)
    trn = _u(rec, _TRN, 2) if size >= _TRN + 2 else 0
    read = min(trn, 5)
    header_end = _PRODUCT + 8 * read
    if size < _PRODUCT + 8 or size < header_end:
        raise Smf70Error(f"{name}@{rec.at(0)}: truncated SMF record: {size} bytes, its header and "
                         f"{trn} triplets need {max(header_end, _PRODUCT + 8)}")
    if trn > 5:
        warnings.append(f"{name}@{rec.at(_TRN)}: the record has {trn} triplets; this reader knows 5 (product, "
                        "CCA, accelerator, ICSF, PKCS11): the others are not read")
    p_off, p_len, p_num = _triplet(rec, name, _PRODUCT, "PRODUCT", header_end)
    if p_num < 1:
        raise Smf70Error(f"{name}@{rec.at(_PRODUCT)}: the record has no RMF product section (SMF70PRN 0): no "
                         "interval to compute rates over")
    interval = _product(rec, p_off, p_len, name)
    found: dict = {s: {} for s in _SECTION_ORDER}      # section -> {(card type, id): {row: {scope: numbers}}}
    sources: dict = {}
    for section, at in _TRIPLETS.items():
        if at + 8 > header_end:
            continue                            # an earlier layout with fewer triplets
        off, length, number = _triplet(rec, name, at, section, header_end)
        if section == "ICSF" or number == 0:
            continue
        if length < _MIN_LEN[section]:
            raise Smf70Error(f"{name}@{rec.at(at)}: triplet {_TRIPLET_NAMES[section]}: {section} sections of "
                             f"{length} bytes; the layout needs at least {_MIN_LEN[section]}")
        if length > _FULL_LEN[section]:
            warnings.append(f"{name}@{rec.at(at)}: {section} sections are {length} bytes, this reader knows "
                            f"{_FULL_LEN[section]}: the bytes after them (fields of a newer RMF) are not read")
        for i in range(number):
            base = off + i * length
            where = rec.at(base)
            ax, ct, mask = rec.data[base], rec.data[base + 1], rec.data[base + 2]
            ctype, known = card_type_name(section, ct)
            if not known:
                warnings.append(f"{name}@{where}: {section} card {ax}: type code {ct} is not one this version "
                                f"knows (IBM's 11-14 are CEX5 to CEX8): read as {ctype}")
            if length > _SCOPE_AT[section]:
                code = rec.data[base + _SCOPE_AT[section]]
                if code not in _SCOPES:
                    warnings.append(f"{name}@{rec.at(base + _SCOPE_AT[section])}: {section} card {ax}: scope "
                                    f"code {code} is neither 0 (CPC) nor 1 (system): section not read")
                    continue
                scope = _SCOPES[code]
            else:
                scope = "TOTAL"
            srl_ok = interval.srl >= _MASK_SRL[section]

            def valid(bit, mask=mask, srl_ok=srl_ok):
                return not srl_ok or bool(mask & bit)

            if section == "CCA":
                rows, invalid = _cca(rec, name, base, valid, interval.seconds)
            elif section == "PKCS11":
                rows, invalid = _pkcs11(rec, name, base, valid, interval.seconds)
            else:
                rows, invalid = _accelerator(rec, name, base, length, valid, interval.seconds)
            if invalid:
                warnings.append(f"{name}@{where}: {ctype} {ax} ({scope}): the validity mask marks "
                                f"{', '.join(invalid)} invalid: not printed (None), left out of the card's summary")
            card = found[section].setdefault((ctype, ax), {})
            for row, numbers in rows:
                by_scope = card.setdefault(row, {})
                if scope in by_scope:
                    raise Smf70Error(f"{name}@{where}: a second {section} section for card {ax} in scope {scope} "
                                     "in one record")
                by_scope[scope] = numbers
                sources[(section, ctype, ax, row, scope)] = f"{name}@{where}"
    out = []
    for section in _SECTION_ORDER:
        for (ctype, ax), rows in found[section].items():
            for (function, key), by_scope in rows.items():
                for scope in sorted(by_scope, key=_SCOPE_ORDER.__getitem__):
                    nums = by_scope[scope]
                    out.append(CryptoActivity(
                        source=sources[(section, ctype, ax, (function, key), scope)], system=interval.system,
                        date=interval.date, time=interval.time, interval_s=interval.seconds, scope=scope,
                        section=section, card_type=ctype, card_id=ax, function=function, key_size=key,
                        rate=nums["rate"], exec_ms=nums["exec_ms"], util_pct=nums["util_pct"]))
    return out


def read_smf70(path_or_bytes, source=None) -> tuple[list[CryptoActivity], list[str]]:
    """The crypto activity records of SMF type 70 subtype 2 records; ``(records, warnings)``.

    Parameters
    ----------
    path_or_bytes : str, os.PathLike or bytes-like
        A file of at most :data:`MAX_SMF_BYTES`, or its content: variable-length records with
        their record descriptor words (see the module documentation).
    source : str, optional
        The name messages and each record's ``source`` use (``name@byte``); default the path,
        or ``<bytes>``.

    Returns
    -------
    records : list of CryptoActivity
        Per type 70 subtype 2 record, in the report's order: CCA, PKCS11, accelerator
        sections; per card its summary (``function`` None) then its functions, each in scope
        LPAR, CPC (or TOTAL).  RATE per second, EXEC TIME in ms, UTIL% in percent.
    warnings : list of str
        Records skipped (other types), card types or section lengths this version does not
        know, validity bits off, block padding.

    Raises
    ------
    Smf70Error
        Naming the file and the byte offset: no RDWs, truncated records, triplets beyond
        their record, fields that are not packed decimal or HFP, negative counts, no type 70
        subtype 2 record in the file.
    """
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        name = source or "<bytes>"
        if len(data) > MAX_SMF_BYTES:
            raise Smf70Error(f"{name}: {len(data):,} bytes; more than {MAX_SMF_BYTES:,}: dump only type 70 "
                             "subtype 2 (IFASMFDP TYPE(70(2)))")
    else:
        p = Path(path_or_bytes)
        name = source or str(path_or_bytes)
        try:
            if not p.is_file():
                raise Smf70Error(f"{name}: not a regular file (SMF records are a binary file)")
            if p.stat().st_size > MAX_SMF_BYTES:
                raise Smf70Error(f"{name}: {p.stat().st_size:,} bytes; more than {MAX_SMF_BYTES:,}: dump only "
                                 "type 70 subtype 2 (IFASMFDP TYPE(70(2)))")
            data = p.read_bytes()
        except OSError as exc:
            raise Smf70Error(f"{name}: cannot be read ({exc.strerror or exc})") from None
    warnings: list[str] = []
    records: list[CryptoActivity] = []
    skipped: Counter = Counter()
    wanted = 0
    for rec in _records(data, name, warnings):
        if len(rec.data) <= _RTY or (rec.data[_RTY] == 70 and len(rec.data) < _STY + 2):
            raise Smf70Error(f"{name}@{rec.at(0)}: truncated SMF record: {len(rec.data)} bytes, less than the "
                             f"{_STY + 2}-byte standard header with subtype")
        rty = rec.data[_RTY]
        sty = _u(rec, _STY, 2) if rty == 70 else None
        if rty != 70 or sty != 2:
            skipped[f"{rty}" if rty != 70 else f"70 subtype {sty}"] += 1
            continue
        wanted += 1
        records.extend(_record(rec, name, warnings))
    seen = ", ".join(f"type {k} x{v}" for k, v in sorted(skipped.items()))
    if not wanted:
        raise Smf70Error(f"{name}: no SMF type 70 subtype 2 record in it ({seen or 'no records'}); {_HOW}")
    if skipped:
        warnings.insert(0, f"{name}: skipped {sum(skipped.values())} records that are not type 70 subtype 2 "
                           f"({seen})")
    return records, warnings
