"""One number set of RMF's Crypto Hardware Activity report: :class:`CryptoActivity`.

Both ways a planner has the report produce these records: the printed Postprocessor report
(:mod:`.rmf_report`, ``ERBRMFPP ... REPORTS(CRYPTO)``) and the SMF type 70 subtype 2 records
RMF builds it from (:mod:`.smf70`).  A record is one card's line (``function`` None: the card's
summary, RMF's TOTAL, LPAR or CPC columns) or one of its by-function rows (a PKCS11
coprocessor's ``ASYM FAST``..., an accelerator's ``RSA ME``/``RSA CRT`` by key size, a CCA
coprocessor's ``KEY-GEN``), in one scope (``LPAR``: this system's requests; ``CPC``: every
LPAR sharing the card; ``TOTAL``: the single-scope layout of reports before APAR OA54952).

RMF's identities, which every record respects where its numbers are printed:

.. math:: \\text{UTIL\\%} = \\text{RATE} \\times \\text{EXEC TIME} / 10 \\;(\\text{ms} \\to \\%), \\qquad
          \\text{EXEC TIME} = \\text{busy time} / \\text{count}

(an accelerator's utilization is divided by its engines in SMF; the report prints it so).
EXEC TIME is the card's service time per request: queueing for the card is not in it.

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report; IBM, "z/OS MVS System
Management Facilities (SMF)", record type 70 subtype 2.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

__all__ = ["CryptoActivity", "CARD_TYPE", "card_mode", "card_generation", "SCOPES", "SECTIONS", "check_records",
           "MAX_SUMMARY_UTIL_PCT", "SYSTEM_ID", "system_id"]

#: An SMF system id (SMF70SID, the report's SYSTEM ID; 4 characters in SMF, a SYSNAME up to 8):
#: letters, digits and the national characters @ # $; nothing else reaches a message or a terminal.
SYSTEM_ID = re.compile(r"[A-Za-z0-9@#$]{1,8}")


def system_id(text: str, where: str) -> str:
    """``text`` as a system id, or SiteFileError naming ``where`` (a control character in it, an
    escape sequence, would colour or retitle the terminal that prints it)."""
    from .._text import value_text
    from .errors import SiteFileError
    if not SYSTEM_ID.fullmatch(text):
        raise SiteFileError(f"{where}: SYSTEM ID {value_text(text)} is not a system name (1 to 8 letters, digits, "
                            "@, # or $)")
    return text

#: A card's summary line is busy at most the whole interval: RMF caps UTIL% there (a by-function
#: row may pass it, concurrency inside the card; the calibration holds those to its own limit).
MAX_SUMMARY_UTIL_PCT = 100.0

#: Where a record's numbers count requests from: this LPAR, the whole machine, or the
#: single-scope layout's TOTAL.
SCOPES = ("LPAR", "CPC", "TOTAL")

#: The report's sections.
SECTIONS = ("CCA", "PKCS11", "ACCELERATOR")

#: A Crypto Express type as RMF prints it: generation and mode letter (C CCA coprocessor,
#: P PKCS11 (EP11) coprocessor, A accelerator).
CARD_TYPE = re.compile(r"CEX([0-9]+)([CPA])")

_MODES = {"C": "coprocessor", "P": "pkcs11", "A": "accelerator"}


def card_mode(card_type: str) -> str:
    """``coprocessor``, ``pkcs11`` or ``accelerator`` from a type such as ``CEX6C``."""
    m = CARD_TYPE.fullmatch(card_type)
    return _MODES[m.group(2)] if m else "unknown"


def card_generation(card_type: str) -> int | None:
    """The generation number of a type such as ``CEX6C`` (6), or None for an unknown type."""
    m = CARD_TYPE.fullmatch(card_type)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class CryptoActivity:
    """One card's numbers in one interval and scope, as RMF reports them.

    Attributes
    ----------
    source : where it was read (``file:line`` or ``file@byte``), for messages.
    system : the SMF system id (``SYSTEM ID``).
    date : ``YYYY-MM-DD``.
    time : the interval's start, ``HH:MM:SS``.
    interval_s : the interval's length, seconds.
    scope : one of :data:`SCOPES`.
    section : one of :data:`SECTIONS`.
    card_type : as printed, e.g. ``CEX6C``.
    card_id : the card (AP) number.
    function : None for the card's summary; else the by-function row (``ASYM FAST``, ``RSA ME``,
        ``RSA CRT``, ``KEY-GEN``...).
    key_size : the key length of an accelerator's RSA row, else None.
    rate : requests per second (None: not printed, as an accelerator's blank LPAR columns).
    exec_ms : EXEC TIME, ms per request (None: not printed).
    util_pct : UTIL%, percent (None: not printed).
    """

    source: str
    system: str
    date: str
    time: str
    interval_s: float
    scope: str
    section: str
    card_type: str
    card_id: int
    function: str | None = None
    key_size: int | None = None
    rate: float | None = None
    exec_ms: float | None = None
    util_pct: float | None = None

    @property
    def mode(self) -> str:
        """``coprocessor``, ``pkcs11`` or ``accelerator``."""
        return card_mode(self.card_type)

    @property
    def generation(self) -> int | None:
        """The card's generation number (5 for CEX5C), None for an unknown type."""
        return card_generation(self.card_type)

    @property
    def interval(self) -> str:
        """``YYYY-MM-DD HH:MM:SS``: the interval's start, a key for grouping."""
        return f"{self.date} {self.time}"

    def to_dict(self) -> dict:
        """JSON-ready, with ``mode`` and ``generation``."""
        return {**asdict(self), "mode": self.mode, "generation": self.generation}


def check_records(records) -> None:
    """Refuse what no RMF report holds, naming where it was read: the same card's line twice in
    one interval and scope (a report or SMF file repeated, or a line pasted twice; the last
    would silently win, or be counted twice), and a card's summary UTIL% above 100.

    Raises
    ------
    SiteFileError
    """
    from .errors import SiteFileError
    seen: dict = {}
    for r in records:
        if not isinstance(r, CryptoActivity):
            continue
        if r.function is None and r.util_pct is not None and r.util_pct > MAX_SUMMARY_UTIL_PCT:
            raise SiteFileError(f"{r.source}: {r.card_type} {r.card_id} ({r.scope}) UTIL% {r.util_pct:g} is above "
                                f"{MAX_SUMMARY_UTIL_PCT:g}: a card is busy at most the whole interval")
        key = (r.system, r.date, r.time, r.scope, r.card_type, r.card_id, r.function, r.key_size)
        first = seen.get(key)
        seen[key] = r.source if first is None else first
        if first is not None:
            what = f"{r.card_type} {r.card_id}" + (f" {r.function}" if r.function else "") + (
                f" {r.key_size}" if r.key_size else "")
            raise SiteFileError(f"{r.source}: {what} ({r.scope}) of system {r.system} in the interval {r.date} "
                                f"{r.time} was read before, at {first}: each card's line once per interval (the "
                                "same report or SMF file given twice, or a line repeated)")
