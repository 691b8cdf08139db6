"""Reading and writing the xlsx/xlsm package (the ZIP of XML parts) safely.

Reading
    Every XML part is parsed with :mod:`defusedxml` (no DTDs, no entity
    declarations, no external references), every part is read with a size cap
    (so a ZIP bomb cannot exhaust memory) and a sheet is read as a stream that
    stops at :data:`MAX_CELLS` cells.  Macro sheets, VBA projects, ActiveX and
    OLE parts are never interpreted: macros never run.

Writing
    The output is the *input package* with only two kinds of change, so that
    defined names, styles, validation, conditional formats, charts, pivot
    caches and a ``vbaProject.bin`` stay byte-identical:

    * in each worksheet part, the ``<c>`` elements of formula cells get their
      cached value (``<v>`` with ``t="str"``/``"b"``/``"e"`` as the value's type
      requires) next to their untouched ``<f>``; cells changed by ``--set``
      get the new constant (text as an inline string, so a value such as
      ``"=1+1"`` stays text and is never written as a formula);
    * ``xl/workbook.xml``'s ``<calcPr>`` gets ``fullCalcOnLoad="1"`` when asked.

    The edit is textual (regular expressions over the ``<sheetData>`` element
    of a part that was first validated by the defused parser), not a
    parse-and-reserialize, which would rename namespace prefixes that Excel
    relies on.  The new package goes to a temporary file in the destination
    folder and is renamed over the destination with :func:`os.replace`.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import io
import math
import os
import posixpath
import re
import zipfile
from dataclasses import dataclass, field

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as _safe_fromstring
from defusedxml.ElementTree import iterparse as _safe_iterparse
from xml.etree.ElementTree import ParseError

from .parser import FormulaError, cell_name, split_cell
from .limits import MAX_CELLS
from .values import ERROR_CODES, ERR_VALUE, ExcelError

# XML character data: the three characters xml.sax.saxutils.escape replaces (importing that
# module pulls in urllib.request, http.client, email and ssl: 40 ms of every recalc's start-up).
_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

__all__ = ["WorkbookFileError", "Package", "SheetData", "Cell", "MAX_CELLS", "MAX_PART_BYTES",
           "write_package"]

#: Largest uncompressed size of one part of the package (bytes).
MAX_PART_BYTES = 256 * 1024 * 1024

_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_C_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c[\s/>]")
_T_OFFICEDOC = "/officeDocument"
_T_WORKSHEET = "/worksheet"
_T_SST = "/sharedStrings"


_BUILTIN_FORMATS = {0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%",
                    10: "0.00%", 11: "0.00E+00", 12: "# ?/?", 13: "# ??/??", 37: "#,##0 ;(#,##0)",
                    38: "#,##0 ;[Red](#,##0)", 39: "#,##0.00;(#,##0.00)",
                    40: "#,##0.00;[Red](#,##0.00)", 48: "##0.0E+0", 49: "@"}


# Excel's built-in date and time formats (numFmtId 14-22, 45-47): a cell styled with one holds
# a date serial, which Excel hands an add-in as a date, not a number.
_DATE_FORMAT_IDS = frozenset((14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47))
_QUOTED_OR_ESCAPED = re.compile(r'"[^"]*"|\\.|_.|\*.')
_BRACKETED = re.compile(r"\[([^\]]*)\]")


def is_date_format(code: str) -> bool:
    """Whether a number format code shows a date or a time (``yyyy-mm-dd``, ``h:mm``, ``[h]:mm``).

    Quoted text, escaped characters and colour/condition brackets are ignored; a
    ``d``, ``m``, ``y``, ``h`` or ``s`` left (or an elapsed-time bracket ``[h]``) marks a date or time.
    """
    if not code or code.lower() in ("general", "@"):
        return False
    text = _QUOTED_OR_ESCAPED.sub("", code)
    if any(b.lower().strip("hms") == "" and b for b in _BRACKETED.findall(text)):
        return True
    text = _BRACKETED.sub("", text).lower()
    return any(ch in text for ch in "dmyhs")


_R1C1_NAME = re.compile(r"^[Rr][0-9]*[Cc]?[0-9]*$|^[Cc][0-9]*$")


def _is_cell_like(name: str) -> bool:
    """Whether a defined name is a cell reference in A1 (``N1``) or R1C1 (``R1C1``, ``R``, ``C2``) style."""
    try:
        split_cell(name)
        return True
    except FormulaError:
        return bool(_R1C1_NAME.match(name))


class WorkbookFileError(Exception):
    """The file is not a readable, safe xlsx/xlsm workbook (or breaks a documented limit)."""


@dataclass(slots=True)
class Cell:
    """One cell as stored in the file.

    ``value`` is the constant (or the cached value of a formula): float, bool,
    str, :class:`~cryptoplan.workbook.engine.values.ExcelError` or ``None``.
    ``formula`` is the formula text without ``=`` (``None`` for a constant);
    ``ftype`` is ``"normal"``, ``"array"`` or ``"dataTable"``; ``fref`` the
    array formula's range (``"C1:C3"``); ``fattrs`` the data-table attributes.
    """

    value: object = None
    formula: str | None = None
    ftype: str = "normal"
    fref: str | None = None
    fattrs: dict | None = None
    style: int = 0


@dataclass
class SheetData:
    name: str
    part: str
    index: int
    kind: str = "worksheet"          # worksheet | chartsheet | macrosheet | dialogsheet
    cells: dict = field(default_factory=dict)   # (row, col) -> Cell
    max_row: int = 0
    max_col: int = 0


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _attr(el, name: str, default=None):
    """Attribute by local name (``r:id`` and ``id`` in any namespace)."""
    v = el.get(name)
    if v is not None:
        return v
    for k, val in el.attrib.items():
        if _local(k) == name:
            return val
    return default


class Package:
    """A workbook package opened for reading.

    Parameters
    ----------
    path : str or Path
        The ``.xlsx``/``.xlsm`` file.
    max_cells : int
        Cell limit (default :data:`MAX_CELLS`).

    Raises
    ------
    WorkbookFileError
        With a one-line reason: not a ZIP, truncated or corrupt, encrypted or
        legacy ``.xls``, unsafe XML (DTD / entities), a part over
        :data:`MAX_PART_BYTES`, more than ``max_cells`` cells, missing parts.
    """

    def __init__(self, path, max_cells: int = MAX_CELLS):
        self.path = os.fspath(path)
        self.max_cells = max_cells
        if not os.path.isfile(self.path):
            raise WorkbookFileError(f"{self.path}: no such file")
        with open(self.path, "rb") as fh:
            head = fh.read(8)
        if head.startswith(b"\xd0\xcf\x11\xe0"):
            raise WorkbookFileError(
                f"{self.path}: an OLE compound file (legacy .xls or a password-encrypted "
                "workbook), not an xlsx/xlsm package; save it as .xlsx without a password")
        if not head.startswith(b"PK"):
            raise WorkbookFileError(f"{self.path}: not an xlsx/xlsm workbook (not a ZIP package)")
        try:
            self.zip = zipfile.ZipFile(self.path)
            self.infos = {i.filename: i for i in self.zip.infolist()}
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise WorkbookFileError(f"{self.path}: corrupt or truncated ZIP package ({exc})") from None
        try:
            self._check_members()
            self._load()
        except WorkbookFileError:
            self.zip.close()
            raise
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as exc:
            self.zip.close()
            raise WorkbookFileError(f"{self.path}: corrupt or truncated package ({exc})") from None

    # ---------------------------------------------------------------- parts
    def _check_members(self) -> None:
        """Refuse what no spreadsheet application writes: encrypted or duplicate members, no content types.

        A member flagged encrypted cannot be read without a password (zipfile raises
        RuntimeError on it); two members of one name are read as one and written back as
        two; a package without ``[Content_Types].xml`` is not Open XML, and one whose
        content types hold a DTD is refused like any other part (it would be copied into
        the output).
        """
        members = self.zip.infolist()
        encrypted = [i.filename for i in members if i.flag_bits & 0x1]
        if encrypted:
            raise WorkbookFileError(
                f"{self.path}: {len(encrypted)} ZIP member(s) encrypted ({encrypted[0]}...): a workbook "
                "package is never encrypted member by member; save it from Excel without a password")
        if len(self.infos) != len(members):
            seen, dup = set(), None
            for i in members:
                if i.filename in seen:
                    dup = i.filename
                    break
                seen.add(i.filename)
            raise WorkbookFileError(f"{self.path}: the ZIP package holds two members named {dup}: "
                                    "a damaged or tampered file")

    def _check_content_types(self) -> None:
        """``[Content_Types].xml`` is present and a safe content-types part (see :meth:`_check_members`)."""
        if "[Content_Types].xml" not in self.infos:
            raise WorkbookFileError(f"{self.path}: not an Open XML package (no [Content_Types].xml); "
                                    "save it from Excel or LibreOffice as .xlsx")
        if _local(self.xml("[Content_Types].xml").tag) != "Types":
            raise WorkbookFileError(f"{self.path}: [Content_Types].xml is not a content-types part")

    def has(self, name: str) -> bool:
        return name in self.infos

    def read(self, name: str) -> bytes:
        info = self.infos.get(name)
        if info is None:
            raise WorkbookFileError(f"{self.path}: part {name} is missing")
        if info.file_size > MAX_PART_BYTES:
            raise WorkbookFileError(f"{self.path}: part {name} is {info.file_size:,} bytes "
                                    f"uncompressed, over the {MAX_PART_BYTES:,}-byte limit")
        try:
            with self.zip.open(info) as fh:
                data = fh.read(MAX_PART_BYTES + 1)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
            raise WorkbookFileError(f"{self.path}: part {name} cannot be read: corrupt, "
                                    f"truncated or encrypted ({exc})") from None
        if len(data) > MAX_PART_BYTES:
            raise WorkbookFileError(f"{self.path}: part {name} is over the "
                                    f"{MAX_PART_BYTES:,}-byte limit")
        return data

    def xml(self, name: str):
        data = self.read(name)
        try:
            return _safe_fromstring(data, forbid_dtd=True)
        except DefusedXmlException as exc:
            raise WorkbookFileError(f"{self.path}: unsafe XML in {name} refused "
                                    f"({type(exc).__name__}: DTDs and entity declarations "
                                    "are not allowed in a workbook)") from None
        except ParseError as exc:
            raise WorkbookFileError(f"{self.path}: malformed XML in {name} ({exc})") from None

    def _rels(self, part: str) -> dict:
        d, b = posixpath.split(part)
        rels = posixpath.join(d, "_rels", b + ".rels")
        if not self.has(rels):
            return {}
        out = {}
        for el in self.xml(rels):
            if _local(el.tag) != "Relationship":
                continue
            target = el.get("Target", "")
            if el.get("TargetMode") == "External":
                continue
            if target.startswith("/"):
                path = target.lstrip("/")
            else:
                path = posixpath.normpath(posixpath.join(d, target))
            out[el.get("Id")] = (el.get("Type", ""), path)
        return out

    # ----------------------------------------------------------------- load
    def _load(self) -> None:
        root_rels = self._rels("")
        wb_part = next((p for t, p in root_rels.values() if t.endswith(_T_OFFICEDOC)), None)
        if wb_part is None:
            wb_part = "xl/workbook.xml"
        if not self.has(wb_part):
            raise WorkbookFileError(f"{self.path}: not an Excel workbook (no {wb_part}; "
                                    "is it a Word or PowerPoint file?)")
        self._check_content_types()
        self.workbook_part = wb_part
        root = self.xml(wb_part)
        if _local(root.tag) != "workbook":
            raise WorkbookFileError(f"{self.path}: {wb_part} is not a workbook part")
        rels = self._rels(wb_part)
        self.date1904 = False
        self.sheets: list[SheetData] = []
        self.defined_names: list[tuple[str, int | None, str]] = []
        for el in root:
            tag = _local(el.tag)
            if tag == "workbookPr":
                self.date1904 = el.get("date1904") in ("1", "true")
            elif tag == "sheets":
                for sh in el:
                    if _local(sh.tag) != "sheet":
                        continue
                    rid = _attr(sh, "id")
                    typ, part = rels.get(rid, ("", None))
                    kind = typ.rsplit("/", 1)[-1].lower() if typ else "worksheet"
                    if kind == "xlmacrosheet":
                        kind = "macrosheet"
                    elif kind == "xlintlmacrosheet":
                        kind = "macrosheet"
                    self.sheets.append(SheetData(name=sh.get("name", ""), part=part or "",
                                                 index=len(self.sheets), kind=kind))
            elif tag == "definedNames":
                for dn in el:
                    if _local(dn.tag) != "definedName":
                        continue
                    local = dn.get("localSheetId")
                    self.defined_names.append((dn.get("name", ""),
                                               int(local) if local is not None else None,
                                               (dn.text or "").strip()))
        if not self.sheets:
            raise WorkbookFileError(f"{self.path}: the workbook has no sheets")
        for name, _, _ in self.defined_names:
            if _is_cell_like(name):
                raise WorkbookFileError(
                    f"{self.path}: defined name {name!r} is a cell reference, which Excel does not allow "
                    "as a name (a formula =" + name + " would read the cell, not the name); rename it")
        styles_part = next((p for t, p in rels.values() if t.endswith("/styles")), None)
        self._style_formats = []
        self.number_formats = self._load_styles(styles_part) if styles_part and self.has(styles_part) else []
        #: cell styles (cellXfs indices) that show a date or a time
        self.date_styles = frozenset(i for i, (fid, code) in enumerate(self._style_formats)
                                     if fid in _DATE_FORMAT_IDS or is_date_format(code))
        sst_part = next((p for t, p in rels.values() if t.endswith(_T_SST)), None)
        self.shared_strings = self._load_sst(sst_part) if sst_part and self.has(sst_part) else []
        total = 0
        for sh in self.sheets:
            if sh.kind != "worksheet":
                continue
            if not sh.part or not self.has(sh.part):
                raise WorkbookFileError(f"{self.path}: sheet {sh.name!r} has no part in the package")
            total = self._load_sheet(sh, total)

    def _load_styles(self, part: str) -> list[str]:
        """Number format code of each cell style (``cellXfs`` index)."""
        root = self.xml(part)
        codes = dict(_BUILTIN_FORMATS)
        xfs = []
        for el in root:
            tag = _local(el.tag)
            if tag == "numFmts":
                for nf in el:
                    if nf.get("numFmtId") is not None:
                        codes[int(nf.get("numFmtId"))] = nf.get("formatCode", "General")
            elif tag == "cellXfs":
                for xf in el:
                    xfs.append(int(xf.get("numFmtId", "0") or 0))
        self._style_formats = [(i, codes.get(i, "General")) for i in xfs]
        return [codes.get(i, "General") for i in xfs]

    def number_format(self, cell: "Cell | None") -> str:
        if cell is None or not (0 <= cell.style < len(self.number_formats)):
            return "General"
        return self.number_formats[cell.style]

    def _load_sst(self, part: str) -> list[str]:
        out = []
        root = self.xml(part)
        for si in root:
            if _local(si.tag) != "si":
                continue
            out.append(_inline_text(si))
        return out

    def _load_sheet(self, sh: SheetData, total: int) -> int:
        data = self.read(sh.part)
        # quick pre-count of <c> elements, so a huge sheet is refused before parsing it
        if total + data.count(b"<c") - data.count(b"<col") - data.count(b"<cfRule") \
                - data.count(b"<cols") > self.max_cells:
            approx = total + sum(1 for _ in _C_TAG.finditer(data))
            if approx > self.max_cells:
                raise WorkbookFileError(
                    f"{self.path}: more than {self.max_cells:,} cells (sheet {sh.name!r} holds "
                    f"about {approx - total:,}); the engine's limit is {self.max_cells:,} cells "
                    "(--max-cells)")
        row = 0
        col = 0
        shared: dict[str, tuple[str, int, int]] = {}
        pending: list[tuple[int, int, str]] = []
        cells = sh.cells
        try:
            for event, el in _safe_iterparse(io.BytesIO(data), events=("start", "end"),
                                             forbid_dtd=True):
                tag = _local(el.tag)
                if event == "start":
                    if tag == "row":
                        r = el.get("r")
                        row = int(r) if r is not None else row + 1
                        col = 0
                    continue
                if tag != "c":
                    if tag == "row":
                        el.clear()
                    continue
                ref = el.get("r")
                if ref is not None:
                    row, col = split_cell(ref)
                else:
                    col += 1
                total += 1
                if total > self.max_cells:
                    raise WorkbookFileError(
                        f"{self.path}: more than {self.max_cells:,} cells (sheet {sh.name!r} "
                        f"reaches {cell_name(row, col)}); the engine's limit is "
                        f"{self.max_cells:,} cells (--max-cells)")
                cell = self._cell(el, sh, row, col, shared, pending)
                if cell is not None:
                    cells[(row, col)] = cell
                    if row > sh.max_row:
                        sh.max_row = row
                    if col > sh.max_col:
                        sh.max_col = col
                el.clear()
        except DefusedXmlException as exc:
            raise WorkbookFileError(f"{self.path}: unsafe XML in {sh.part} refused "
                                    f"({type(exc).__name__}: DTDs and entity declarations "
                                    "are not allowed in a workbook)") from None
        except ParseError as exc:
            raise WorkbookFileError(f"{self.path}: malformed XML in {sh.part} ({exc})") from None
        except FormulaError as exc:
            raise WorkbookFileError(f"{self.path}: sheet {sh.name!r}: {exc}") from None
        if pending:
            from openpyxl.formula.translate import Translator
            for r, c, si in pending:
                if si not in shared:
                    raise WorkbookFileError(f"{self.path}: {sh.name}!{cell_name(r, c)} uses shared "
                                            f"formula {si} that has no master cell")
                text, mr, mc = shared[si]
                try:
                    t = Translator("=" + text, origin=cell_name(mr, mc)).translate_formula(
                        cell_name(r, c))
                except Exception as exc:  # openpyxl raises several types here
                    raise WorkbookFileError(f"{self.path}: {sh.name}!{cell_name(r, c)}: cannot "
                                            f"expand shared formula ({exc})") from None
                cells[(r, c)].formula = t[1:]
        return total

    def _cell(self, el, sh, row, col, shared, pending):
        t = el.get("t", "n")
        v = None
        f = None
        inline = None
        for ch in el:
            tag = _local(ch.tag)
            if tag == "v":
                v = ch.text if ch.text is not None else ""
            elif tag == "f":
                f = ch
            elif tag == "is":
                inline = _inline_text(ch)
        value = self._value(t, v, inline, sh, row, col)
        st = el.get("s")
        style = int(st) if st and st.isdigit() else 0
        if f is None:
            if value is None and not style:
                return None
            return Cell(value=value, style=style)
        ftype = f.get("t", "normal")
        text = (f.text or "").strip()
        if text.startswith("="):
            text = text[1:]
        cell = Cell(value=value, formula=text, style=style)
        if ftype == "shared":
            si = f.get("si", "")
            if text:
                shared[si] = (text, row, col)
            else:
                pending.append((row, col, si))
                cell.formula = ""
        elif ftype == "array":
            cell.ftype = "array"
            cell.fref = f.get("ref") or cell_name(row, col)
        elif ftype == "dataTable":
            cell.ftype = "dataTable"
            cell.fref = f.get("ref")
            cell.fattrs = {k: v for k, v in f.attrib.items()}
        return cell

    def _value(self, t, v, inline, sh, row, col):
        if t == "inlineStr":
            return inline if inline is not None else (v or "")
        if v is None:
            return None
        try:
            if t == "n":
                if v == "":
                    return None
                x = float(v)
                return x if math.isfinite(x) else ExcelError(ERR_VALUE)
            if t == "s":
                return self.shared_strings[int(v)]
            if t == "str":
                return v
            if t == "b":
                return v.strip() in ("1", "true")
            if t == "e":
                return ExcelError(ERROR_CODES.get(v.strip(), ERR_VALUE))
            if t == "d":
                return _iso_to_serial(v, self.date1904)
        except (ValueError, IndexError):
            raise WorkbookFileError(f"{self.path}: {sh.name}!{cell_name(row, col)}: bad cell "
                                    f"value {v!r} (type {t!r})") from None
        return v

    def close(self) -> None:
        self.zip.close()


def _inline_text(el) -> str:
    """Text of a ``<si>``/``<is>``: plain ``<t>`` or rich-text runs, without phonetic runs."""
    parts = []
    for ch in el:
        tag = _local(ch.tag)
        if tag == "t":
            parts.append(ch.text or "")
        elif tag == "r":
            for t in ch:
                if _local(t.tag) == "t":
                    parts.append(t.text or "")
    return xml_untext("".join(parts))


_XML_ESCAPED = re.compile("_x([0-9A-Fa-f]{4})_")


def xml_untext(text: str) -> str:
    """Decode Excel's ``_xHHHH_`` escapes (the inverse of :func:`xml_text`'s)."""
    if "_x" not in text:
        return text
    return _XML_ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def _iso_to_serial(v: str, date1904: bool) -> float:
    d = _dt.datetime.fromisoformat(v.strip().rstrip("Z"))
    base = _dt.datetime(1904, 1, 1) if date1904 else _dt.datetime(1899, 12, 30)
    return (d - base).total_seconds() / 86400.0


# =================================================================== writing
@dataclass(slots=True)
class CellWrite:
    """What to write into one cell.

    ``mode``: ``"cached"`` keeps the cell's ``<f>`` and writes ``value`` as its
    cached value (``value=None`` removes any cached value: not computed);
    ``"constant"`` replaces the cell's content with the constant ``value``;
    ``"spill"`` writes ``value`` in a cell covered by an array formula.
    """

    mode: str
    value: object = None


_CELL_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)c\b([^>]*?)(/>|>(.*?)</\1c>)", re.S)
_ROW_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)row\b([^>]*?)(/>|>(.*?)</\1row>)", re.S)
_ATTR_RE = re.compile(r"""([\w:.-]+)\s*=\s*("[^"]*"|'[^']*')""")
_F_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)f\b[^>]*?(?:/>|>.*?</\1f>)", re.S)
_EXT_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)extLst\b.*?</\1extLst>", re.S)
_SHEETDATA_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)sheetData\b[^>]*?(?:/>|>(.*?)</\1sheetData>)", re.S)


def _num_text(x: float) -> str:
    if x == math.floor(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


# What XML cannot hold, and CR: XML may hold it but every parser reads it back as LF (XML 1.0,
# 2.11 end-of-line handling), so "\r=1+1" would come back "\n=1+1"; Excel writes it _x000D_.
_XML_ILLEGAL = re.compile("[\x00-\x08\x0b-\x1f\ufffe\uffff\ud800-\udfff]")
_XML_ESCAPE_LIKE = re.compile("_(x[0-9A-Fa-f]{4}_)")


def ooxml_string(value: str) -> str:
    """Text with the characters XML cannot hold written as Excel's ``_xHHHH_``.

    Excel stores a control character such as U+0001 in a cell as ``_x0001_``
    (ECMA-376 Part 1, 22.9.2.19, ST_Xstring) and reads it back as the
    character; literal text of that shape is protected as ``_x005F_xHHHH_``.
    The file stays well-formed XML and the text survives a round trip
    (:func:`xml_untext` reads it back).
    """
    value = _XML_ESCAPE_LIKE.sub(r"_x005F_\1", value)
    return _XML_ILLEGAL.sub(lambda m: f"_x{ord(m.group()):04X}_", value)


def xml_text(value: str) -> str:
    """Text for an OOXML string element: :func:`ooxml_string`, then XML-escaped."""
    return ooxml_string(value).translate(_XML_ESCAPES)


def _value_xml(value, prefix: str):
    """(t attribute or None, inner XML) for a cached value."""
    if isinstance(value, ExcelError):
        return "e", f"<{prefix}v>{xml_text(str(value))}</{prefix}v>"
    if isinstance(value, bool):
        return "b", f"<{prefix}v>{int(value)}</{prefix}v>"
    if isinstance(value, str):
        return "str", f"<{prefix}v>{xml_text(value)}</{prefix}v>"
    if value is None:
        return None, ""
    return None, f"<{prefix}v>{_num_text(float(value))}</{prefix}v>"


def _constant_xml(value, prefix: str):
    if isinstance(value, str):
        sp = ' xml:space="preserve"' if value != value.strip() or "\n" in value else ""
        return "inlineStr", f"<{prefix}is><{prefix}t{sp}>{xml_text(value)}</{prefix}t></{prefix}is>"
    return _value_xml(value, prefix)


def _rebuild_cell(prefix: str, attrs: str, inner: str | None, w: CellWrite, ref: str | None) -> str:
    pairs = [(k, v) for k, v in _ATTR_RE.findall(attrs) if k != "t"]
    if ref is not None and not any(k == "r" for k, _ in pairs):
        pairs.insert(0, ("r", f'"{ref}"'))
    inner = inner or ""
    if w.mode == "cached":
        m = _F_RE.search(inner)
        f = m.group(0) if m else ""
        t, v = _value_xml(w.value, prefix)
    elif w.mode == "spill":
        m = _F_RE.search(inner)
        f = m.group(0) if m else ""
        t, v = _value_xml(w.value, prefix)
    else:
        f = ""
        t, v = _constant_xml(w.value, prefix)
    ext = _EXT_RE.search(inner)
    body = f + v + (ext.group(0) if ext else "")
    if t is not None:
        pairs.append(("t", f'"{t}"'))
    attr_text = "".join(f" {k}={v}" for k, v in pairs)
    if not body:
        return f"<{prefix}c{attr_text}/>"
    return f"<{prefix}c{attr_text}>{body}</{prefix}c>"


def _rewrite_sheet(xml: bytes, writes: dict) -> bytes:
    """Apply ``{(row, col): CellWrite}`` to a worksheet part's XML text."""
    text = xml.decode("utf-8")
    m = _SHEETDATA_RE.search(text)
    if m is None:
        raise WorkbookFileError("worksheet part has no <sheetData>")
    prefix = m.group(1)
    body = m.group(2) or ""
    # writes indexed by row, rows not yet reached in order: each row's writes are found in
    # O(1) and the rows to create in O(log n), so a sheet of n rows is rewritten in O(n log n)
    # (scanning every write per row was quadratic: 100,000 formula rows took minutes)
    remaining = {}
    for (r, c), w in writes.items():
        remaining.setdefault(r, {})[c] = w
    pending = sorted(remaining)
    out = []
    pos = 0
    row = 0
    for rm in _ROW_RE.finditer(body):
        rattrs = dict((k, v[1:-1]) for k, v in _ATTR_RE.findall(rm.group(2)))
        new_row = int(rattrs["r"]) if "r" in rattrs else row + 1
        # rows that must be created before this one
        out.append(body[pos:rm.start()])
        out.append(_new_rows(prefix, remaining, pending, new_row))
        row = new_row
        pos = rm.end()
        wanted = remaining.pop(row, {})
        if not wanted:
            out.append(rm.group(0))
            continue
        rprefix = rm.group(1)
        inner = rm.group(4) or ""
        cells_out = []
        cpos = 0
        col = 0
        for cm in _CELL_RE.finditer(inner):
            cattrs = dict((k, v[1:-1]) for k, v in _ATTR_RE.findall(cm.group(2)))
            if "r" in cattrs:
                _, col_new = split_cell(cattrs["r"])
            else:
                col_new = col + 1
            cells_out.append(inner[cpos:cm.start()])
            for c in sorted(k for k in wanted if col < k < col_new):
                cells_out.append(_rebuild_cell(cm.group(1), "", None, wanted.pop(c),
                                               cell_name(row, c)))
            col = col_new
            if col in wanted:
                w = wanted.pop(col)
                cells_out.append(_rebuild_cell(cm.group(1), cm.group(2), cm.group(4), w,
                                               cell_name(row, col)))
            else:
                cells_out.append(cm.group(0))
            cpos = cm.end()
        cells_out.append(inner[cpos:])
        for c in sorted(wanted):
            cells_out.append(_rebuild_cell(rprefix, "", None, wanted[c], cell_name(row, c)))
        out.append(f"<{rprefix}row{rm.group(2)}>{''.join(cells_out)}</{rprefix}row>")
    out.append(body[pos:])
    out.append(_new_rows(prefix, remaining, pending, None))
    new_body = "".join(out)
    if m.group(2) is None:  # <sheetData/>
        new = f"<{prefix}sheetData>{new_body}</{prefix}sheetData>"
    else:
        new = text[m.start():m.start(2)] + new_body + text[m.end(2):m.end()]
    return (text[:m.start()] + new + text[m.end():]).encode("utf-8")


def _new_rows(prefix: str, remaining: dict, pending: list, before: int | None) -> str:
    """Rows to create (written to but absent from the sheet) before row ``before`` (None: all).

    ``remaining`` maps row -> {col: CellWrite} for the rows not yet written; ``pending`` is its
    keys in ascending order, consumed from the front (rows already passed are gone from it).
    """
    stop = len(pending) if before is None else bisect.bisect_left(pending, before)
    out = []
    for r in pending[:stop]:
        cols = remaining.pop(r, None)
        if not cols:
            continue                       # an existing row already took its writes
        cells = "".join(_rebuild_cell(prefix, "", None, cols[c], cell_name(r, c)) for c in sorted(cols))
        out.append(f'<{prefix}row r="{r}">{cells}</{prefix}row>')
    del pending[:stop]
    return "".join(out)


_CALCPR_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)calcPr\b([^>]*?)(/>|>)", re.S)
_AFTER_CALCPR = ("oleSize", "customWorkbookViews", "pivotCaches", "smartTagPr", "smartTagTypes",
                 "webPublishing", "fileRecoveryPr", "webPublishObjects", "extLst")


def _set_full_calc(xml: bytes) -> bytes:
    text = xml.decode("utf-8")
    m = _CALCPR_RE.search(text)
    if m:
        attrs = [(k, v) for k, v in _ATTR_RE.findall(m.group(2)) if k != "fullCalcOnLoad"]
        attrs.append(("fullCalcOnLoad", '"1"'))
        new = f"<{m.group(1)}calcPr" + "".join(f" {k}={v}" for k, v in attrs) + m.group(3)
        return (text[:m.start()] + new + text[m.end():]).encode("utf-8")
    wm = re.search(r"<((?:[A-Za-z_][\w.-]*:)?)workbook\b", text)
    prefix = wm.group(1) if wm else ""
    element = f'<{prefix}calcPr fullCalcOnLoad="1"/>'
    for tag in _AFTER_CALCPR:
        mm = re.search(rf"<{re.escape(prefix)}{tag}\b", text)
        if mm:
            return (text[:mm.start()] + element + text[mm.start():]).encode("utf-8")
    end = text.rfind(f"</{prefix}workbook>")
    return (text[:end] + element + text[end:]).encode("utf-8")


def write_package(pkg: Package, out_path, sheet_writes: dict, full_calc_on_load: bool) -> None:
    """Write ``pkg`` to ``out_path`` with cell writes applied (atomically).

    Parameters
    ----------
    pkg : Package
        The opened input package (its parts are copied; only the changed
        worksheet parts and, if ``full_calc_on_load``, the workbook part differ).
    out_path : path
        Destination.  A temporary file in the same folder is written first and
        renamed over it with :func:`os.replace`; on any error nothing is left.
    sheet_writes : dict
        ``{worksheet part name: {(row, col): CellWrite}}``.
    full_calc_on_load : bool
        Set ``<calcPr fullCalcOnLoad="1">`` so Excel recalculates on open.
    """
    from .atomic import atomic_target
    with atomic_target(os.fspath(out_path)) as tmp, open(tmp, "wb") as fh, zipfile.ZipFile(fh, "w") as zout:
        for info in pkg.zip.infolist():
            name = info.filename
            if info.is_dir():
                zout.writestr(info, b"")
                continue
            data = pkg.read(name)
            if name in sheet_writes and sheet_writes[name]:
                try:
                    data = _rewrite_sheet(data, sheet_writes[name])
                except UnicodeDecodeError:
                    raise WorkbookFileError(f"{pkg.path}: {name} is not UTF-8 encoded") from None
            elif name == pkg.workbook_part and full_calc_on_load:
                data = _set_full_calc(data)
            zinfo = zipfile.ZipInfo(name, date_time=info.date_time)
            zinfo.compress_type = info.compress_type
            zinfo.external_attr = info.external_attr
            zinfo.create_system = info.create_system
            zinfo.comment = info.comment
            zout.writestr(zinfo, data)
