"""The RMF Postprocessor's CRYPTO HARDWARE ACTIVITY report, read as printed: :func:`read_rmf_report`.

A planner's measured crypto load is the report ``ERBRMFPP`` prints with ``REPORTS(CRYPTO)``.
This reader takes its text as a SYSOUT data set is transferred (with or without ASA carriage
control in column 1, page ejects, form feeds, several systems and intervals one after another)
and returns one :class:`~.rmf_records.CryptoActivity` per number set: each card's summary in
each scope and each by-function row.  Both layouts are read:

* the single-scope layout (``TOTAL`` columns; accelerators with ``ME-FORMAT`` and
  ``CRT-FORMAT RSA OPERATIONS`` column groups by ``KEY``);
* the layout with ``LPAR`` and ``CPC`` columns (APAR OA54952), by-function rows in a
  ``FUNCTION`` column (``ASYM FAST``, ``RSA ME 1024``...).

The columns are located from each section's headings: a value belongs to the heading its
printed characters overlap (a blank column, such as an accelerator's LPAR columns on a CEX7A
line, is a number not printed, None).  Anything that fits no heading is an error naming the
file, the line and what was expected: never a silent skip.  A card type or function this
version does not know (a newer RMF's ``CEX9C``) is read, with a warning naming it.

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import SiteFileError
from .._text import value_text
from .rmf_records import CARD_TYPE, CryptoActivity, system_id

__all__ = ["read_rmf_report", "parse_rmf_report", "RmfReportError", "MAX_REPORT_BYTES", "KNOWN_FUNCTIONS"]

#: A printed report of many intervals and systems is a few megabytes; more is not one.
MAX_REPORT_BYTES = 200_000_000

#: By-function rows this version knows (others are read with a warning).
KNOWN_FUNCTIONS = ("KEY-GEN", "ASYM FAST", "ASYM GEN", "ASYM SLOW", "SYMM COMPLETE", "SYMM PARTIAL", "RSA ME",
                   "RSA CRT")

_TITLE = re.compile(r"C\s?R\s?Y\s?P\s?T\s?O\s+H\s?A\s?R\s?D\s?W\s?A\s?R\s?E\s+A\s?C\s?T\s?I\s?V\s?I\s?T\s?Y")
_SECTION = re.compile(r"^\s*-+\s*CRYPTOGRAPHIC\s+(CCA COPROCESSOR|PKCS11 COPROCESSOR|ACCELERATOR)\b")
_SECTIONS = {"CCA COPROCESSOR": "CCA", "PKCS11 COPROCESSOR": "PKCS11", "ACCELERATOR": "ACCELERATOR"}
_HEADING = re.compile(r"EXEC TIME|KEY-GEN RATE|UTIL%|RATE|TYPE|ID|FUNCTION|KEY|\S+")
# (a run of dashes is entered at its first dash only and never given back: a line of a million
# dashes is read in one pass, where trying each dash as a start backtracked quadratically)
_GROUP = re.compile(r"(?<!-)-{2,}+ ?([A-Z0-9%](?:[A-Z0-9% ]|-(?=[A-Z]))*?) ?-{2,}|\bKEY-GEN\b")
# (a column of RMF's is at most a dozen characters wide: a longer run of digits is no number it prints,
# and would be an inf, an overflow or past Python's 4,300-digit conversion limit)
_NUMBER = re.compile(r"[0-9]{1,12}(?:\.[0-9]{0,9})?[KM]?|\.[0-9]{1,9}")
_INTERVAL = re.compile(r"INTERVAL\s+([0-9]{1,4})\.([0-9]{2})\.([0-9]{3})")
_DIGITS = re.compile(r"[0-9]{1,5}")       # a card id (AP number) or a key size, as RMF prints them
_DATE = re.compile(r"DATE\s+(\d{2})/(\d{2})/(\d{4})")
_TIME = re.compile(r"TIME\s+(\d{2})\.(\d{2})\.(\d{2})")
_SYSTEM = re.compile(r"SYSTEM ID\s+(\S+)")


class RmfReportError(SiteFileError):
    """The report's text cannot be read: the message names the file, the line and what was expected."""


@dataclass(frozen=True)
class _Column:
    kind: str            # TYPE, ID, FUNCTION, KEY, RATE, EXEC, UTIL, KEYGEN
    start: int
    end: int
    scope: str = "TOTAL"
    level: str = "card"  # card or function
    function: str | None = None   # ME / CRT from a column group


def _number(text: str, where: str) -> float:
    m = _NUMBER.fullmatch(text)
    if not m:
        raise RmfReportError(f"{where}: {value_text(text)} is not a number as RMF prints one")
    scale = {"K": 1e3, "M": 1e6}.get(text[-1], 1.0)
    return float(text.rstrip("KM")) * scale


def _lines(data: bytes, name: str) -> list[tuple[int, str]]:
    """(line number, text) with ASA carriage control, form feeds and trailing blanks removed."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")       # a code page translation's odd byte: kept, never guessed
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # ASA: every line's first character is carriage control; a page eject '1' before a title says so
    asa = any(line[:1] == "1" and _TITLE.search(line) for line in raw)
    out = []
    for i, line in enumerate(raw, 1):
        line = line.replace("\f", "")
        if asa:
            line = line[1:] if line[:1] in " 01-+" else line
        out.append((i, line.rstrip()))
    return out


def _groups(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), (m.group(1) or m.group(0)).strip()) for m in _GROUP.finditer(line)]


def _columns(head: str, above: str, where: str) -> list[_Column]:
    """The columns of a section from its heading line and the group line above it."""
    groups = _groups(above)                     # disjoint and in order: found by bisection
    group_starts = [s for s, _, _ in groups]
    cols = []
    after_function = False
    for m in _HEADING.finditer(head):
        word, a, b = m.group(0), m.start(), m.end()
        kind = {"EXEC TIME": "EXEC", "UTIL%": "UTIL", "KEY-GEN RATE": "KEYGEN"}.get(word, word)
        if kind not in ("TYPE", "ID", "FUNCTION", "KEY", "RATE", "EXEC", "UTIL", "KEYGEN"):
            raise RmfReportError(f"{where}: a column headed {value_text(word)}; expected TYPE, ID, RATE, EXEC TIME, "
                                 "UTIL%, KEY-GEN RATE, FUNCTION or KEY")
        center = (a + b) / 2
        k = bisect.bisect_right(group_starts, center) - 1
        label = groups[k][2] if k >= 0 and groups[k][0] <= center < groups[k][1] else ""
        scope = "LPAR" if "LPAR" in label else "CPC" if "CPC" in label else "TOTAL"
        function = "ME" if label.startswith("ME-FORMAT") else "CRT" if label.startswith("CRT-FORMAT") else None
        if kind == "RATE" and label == "KEY-GEN":
            kind = "KEYGEN"
        level = "function" if (after_function or function or "OPERATIONS DETAILS" in label) else "card"
        if kind in ("FUNCTION", "KEY"):
            after_function = True
        cols.append(_Column(kind, a, b, scope, level, function))
    if not cols or cols[0].kind != "TYPE":
        raise RmfReportError(f"{where}: the heading line must begin with TYPE")
    return cols


def _near(starts, ends, a: int, b: int) -> tuple[int, int]:
    """The columns (indices ``lo..hi``) that can hold the characters ``a..b``: from the last one
    ending at or before ``a`` to the first starting at or after ``b`` (disjoint columns, in order)."""
    return max(bisect.bisect_right(ends, a) - 1, 0), min(bisect.bisect_left(starts, b), len(starts) - 1)


def _assign(tokens, cols, where):
    """Each token to the column its characters overlap most (nearest centre on a tie).

    The heading's columns are disjoint and in order, so the best is among those from the last one
    ending at or before the token to the first starting at or after it: found by bisection, the
    line read in O(tokens log columns) however wide the heading (a heading of 20,000 columns
    compared every token with every column)."""
    out = {}
    numeric = [c for c in cols if c.kind not in ("TYPE", "ID", "FUNCTION")]
    starts, ends = [c.start for c in numeric], [c.end for c in numeric]
    for text, a, b in tokens:
        lo, hi = _near(starts, ends, a, b)
        best = max(numeric[lo:hi + 1], key=lambda c: (min(b, c.end) - max(a, c.start),
                                                     -abs((a + b) / 2 - (c.start + c.end) / 2)))
        if min(b, best.end) - max(a, best.start) <= -6:
            raise RmfReportError(f"{where}: {text!r} at column {a + 1} is under no heading")
        if best in out:
            raise RmfReportError(f"{where}: two values ({out[best][0]!r} and {text!r}) under one heading at column "
                                 f"{best.start + 1}")
        out[best] = (text, a)
    return out


_ROW = re.compile(r"^(\s*)(CEX[0-9]+[A-Z]|[A-Z][A-Z0-9]*)?\s*")


def parse_rmf_report(data: bytes, name: str = "the report") -> tuple[list[CryptoActivity], list[str]]:
    """The records of a report's text (see the module documentation); ``(records, warnings)``.

    Raises
    ------
    RmfReportError
        Naming ``name``, the line and what was expected.
    """
    lines = _lines(data, name)
    records: list[CryptoActivity] = []
    warnings: list[str] = []
    header = None
    i = 0
    n = len(lines)
    seen_title = False
    while i < n:
        no, line = lines[i]
        where = f"{name}:{no}"
        if _TITLE.search(line):
            header, i = _header(lines, i, name)
            seen_title = True
            continue
        m = _SECTION.match(line)
        if m:
            if header is None:
                raise RmfReportError(f"{where}: a section before the report's title and header (SYSTEM ID, DATE, "
                                     "TIME, INTERVAL)")
            i = _section(lines, i, _SECTIONS[m.group(1)], header, name, records, warnings)
            continue
        if line.strip() and header is not None and not _is_noise(line):
            raise RmfReportError(f"{where}: {line.strip()[:60]!r} is neither a report title, a section nor a card "
                                 "line of the CRYPTO HARDWARE ACTIVITY report")
        i += 1
    if not seen_title:
        raise RmfReportError(f"{name}: no 'C R Y P T O   H A R D W A R E   A C T I V I T Y' report in it "
                             "(the RMF Postprocessor's REPORTS(CRYPTO) output)")
    return records, warnings


def _is_noise(line: str) -> bool:
    """Page headings and footers RMF prints between sections (page numbers, the RMF banner)."""
    s = line.strip()
    return bool(re.fullmatch(r"(PAGE\s+\d+|RMF\b.*|z/OS\s+V\S+.*|RPT VERSION.*)", s))


def _header(lines, i, name):
    """(system, date, time, interval seconds) from the title's header lines; the next line index."""
    text = []
    j = i + 1
    while j < len(lines) and not _SECTION.match(lines[j][1]) and not _TITLE.search(lines[j][1]) and j < i + 8:
        text.append(lines[j][1])
        j += 1
    blob = " ".join(text)
    where = f"{name}:{lines[i][0]}"
    found = {k: r.search(blob) for k, r in (("SYSTEM ID", _SYSTEM), ("DATE", _DATE), ("TIME", _TIME),
                                            ("INTERVAL", _INTERVAL))}
    missing = [k for k, v in found.items() if v is None]
    if missing:
        raise RmfReportError(f"{where}: the report's header lacks {', '.join(missing)} (expected SYSTEM ID name, "
                             "DATE mm/dd/yyyy, TIME hh.mm.ss, INTERVAL mm.ss.ttt)")
    mo, d, y = found["DATE"].groups()
    hh, mm, ss = found["TIME"].groups()
    im, isec, ims = found["INTERVAL"].groups()
    return (system_id(found["SYSTEM ID"].group(1), where), f"{y}-{mo}-{d}", f"{hh}:{mm}:{ss}",
            60 * int(im) + int(isec) + int(ims) / 1000.0), j


def _section(lines, i, section, header, name, records, warnings):
    """Read one section from its title line ``i``; returns the index after it."""
    system, date, time, interval = header
    j = i + 1
    while j < len(lines) and not lines[j][1].strip():
        j += 1
    if j + 1 >= len(lines) or not lines[j + 1][1].lstrip().startswith("TYPE"):
        raise RmfReportError(f"{name}:{lines[i][0]}: a section title must be followed by its column groups and a "
                             "heading line beginning with TYPE")
    cols = _columns(lines[j + 1][1], lines[j][1], f"{name}:{lines[j + 1][0]}")
    j += 2
    card = None                     # (type, id) of the current card
    ctype = None
    type_col = cols[0]
    id_col = next((c for c in cols if c.kind == "ID"), None)
    fn_col = next((c for c in cols if c.kind == "FUNCTION"), None)
    while j < len(lines):
        no, line = lines[j]
        if not line.strip() or _SECTION.match(line) or _TITLE.search(line):
            break
        where = f"{name}:{no}"
        tokens = [(m.group(0), m.start(), m.end()) for m in re.finditer(r"\S+", line)]
        # the card's type and id: a type in the TYPE column starts a card; an id alone continues the type
        if tokens and tokens[0][1] < (id_col.start if id_col else type_col.end) and CARD_TYPE.fullmatch(tokens[0][0]):
            ctype = tokens.pop(0)[0]
            if card_generation_known(ctype) is False:
                warnings.append(f"{where}: card type {ctype} is newer than this version knows (CEX5 to CEX8): "
                                "read as printed")
        elif tokens and tokens[0][1] < (id_col.start if id_col else 6) and re.fullmatch(r"[A-Z]\S*", tokens[0][0]):
            raise RmfReportError(f"{where}: {tokens[0][0]!r} in the TYPE column is not a Crypto Express type "
                                 "as RMF prints it (CEXnC, CEXnP, CEXnA)")
        if id_col and tokens and abs(tokens[0][2] - id_col.end) <= 2 and _DIGITS.fullmatch(tokens[0][0]) and (
                fn_col is None or tokens[0][2] < fn_col.start):
            if ctype is None:
                raise RmfReportError(f"{where}: a card id before any card type")
            card = (ctype, int(tokens.pop(0)[0]))
        if card is None:
            raise RmfReportError(f"{where}: a line of numbers before any card's TYPE and ID")
        function, key = None, None
        if fn_col is not None:
            words = [t for t in tokens if t[1] >= fn_col.start - 1 and re.fullmatch(r"[A-Z][A-Z0-9\-/]*", t[0])]
            if words:
                start = words[0][1]
                seq = []
                for t in tokens:
                    if t[1] >= start and re.fullmatch(r"[A-Z][A-Z0-9\-/]*", t[0]) and (not seq or t is not None):
                        if seq and t[1] - seq[-1][2] > 3:
                            break
                        seq.append(t)
                    elif seq:
                        break
                function = " ".join(t[0] for t in seq)
                tokens = [t for t in tokens if t not in seq]
                if function.startswith("RSA"):
                    nxt = next((t for t in tokens if t[1] > seq[-1][1]), None)
                    if nxt is None or not _DIGITS.fullmatch(nxt[0]):
                        raise RmfReportError(f"{where}: {function} without its key size (a whole number of "
                                             f"bits{'' if nxt is None else f', got {value_text(nxt[0])}'})")
                    key = int(nxt[0])
                    tokens.remove(nxt)
                if function not in KNOWN_FUNCTIONS:
                    warnings.append(f"{where}: function {function!r} is not one this version knows: read as printed")
        values = _assign(tokens, cols, where)
        _emit(values, card, function, key, (system, date, time, interval), section, where, records)
        j += 1
    return j


def card_generation_known(card_type: str) -> bool:
    m = CARD_TYPE.fullmatch(card_type)
    return m is not None and 5 <= int(m.group(1)) <= 8


def _emit(values, card, function, key, header, section, where, records) -> None:
    """Records of one line: the card's summary per scope, key generation, its function rows."""
    system, date, time, interval = header
    ctype, cid = card
    by: dict = {}
    for col, (text, _) in values.items():
        if col.kind == "KEY":
            key = int(_number(text, where))
            continue
        v = _number(text, where)
        if col.kind == "KEYGEN":
            by.setdefault(("KEY-GEN", None, col.scope), {})["RATE"] = v
            continue
        fn = function if col.level == "function" else None
        if col.function:
            fn = f"RSA {col.function}"
        by.setdefault((fn, key if fn else None, col.scope), {})[col.kind] = v
    for (fn, k, scope), nums in by.items():
        if fn is None and function is not None and not nums:
            continue
        records.append(CryptoActivity(source=where, system=system, date=date, time=time, interval_s=interval,
                                      scope=scope, section=section, card_type=ctype, card_id=cid, function=fn,
                                      key_size=k, rate=nums.get("RATE"), exec_ms=nums.get("EXEC"),
                                      util_pct=nums.get("UTIL")))


def read_rmf_report(path) -> tuple[list[CryptoActivity], list[str]]:
    """Read a report file (see :func:`parse_rmf_report`): a regular file of at most
    :data:`MAX_REPORT_BYTES`.

    Raises
    ------
    RmfReportError
        Naming the file (and the line) and what was expected.
    """
    p = Path(path)
    try:
        if not p.is_file():
            raise RmfReportError(f"{path}: not a regular file (an RMF report is a text file)")
        if p.stat().st_size > MAX_REPORT_BYTES:
            raise RmfReportError(f"{path}: {p.stat().st_size:,} bytes; an RMF crypto report is at most "
                                 f"{MAX_REPORT_BYTES:,}")
        data = p.read_bytes()
    except OSError as e:
        raise RmfReportError(f"{path}: cannot read it ({e.strerror or e})") from None
    return parse_rmf_report(data, str(path))
