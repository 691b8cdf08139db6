"""Reading the xlsx/xlsm package (the ZIP of XML parts) safely: :class:`Package`.

Every XML part is refused if it holds a DTD, an entity declaration or an external reference
(:mod:`defusedxml`'s guards, :mod:`.safexml`), every part is read with a size cap
(so a ZIP bomb cannot exhaust memory) and a sheet is read as a stream that
stops at :data:`MAX_CELLS` cells.  Macro sheets, VBA projects, ActiveX and
OLE parts are never interpreted: macros never run.

Writing the package back, with the computed values, is :mod:`.writer`'s.
"""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError

import datetime as _dt
import math
import os
import posixpath
import re
import stat
import zipfile
from dataclasses import dataclass, field
from typing import NoReturn

from defusedxml import DefusedXmlException
from xml.etree.ElementTree import ParseError

import lazy_loader

from .limits import MAX_CELLS
from .parser import FormulaError, cell_name, split_cell
from .safexml import fromstring as _safe_fromstring
from .safexml import iterparse as _safe_iterparse
from .values import ERROR_CODES, ERR_VALUE, ExcelError


# openpyxl (0.15 s), for its formula translator only: loaded when a workbook has shared formulas
openpyxl = lazy_loader.load("openpyxl")

__all__ = ["WorkbookFileError", "Package", "SheetData", "Cell", "MAX_CELLS", "MAX_PART_BYTES",
           "is_date_format", "xml_untext"]

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


class WorkbookFileError(CryptoplanError):
    """The file is not a readable, safe xlsx/xlsm workbook (or breaks a documented limit)."""


@dataclass(slots=True)
class Cell:
    """One cell as stored in the file.

    ``value`` is the constant (or the cached value of a formula): float, bool,
    str, :class:`~cryptoplan.workbook.engine.values.ExcelError` or ``None``.
    ``formula`` is the formula text without ``=`` (``None`` for a constant);
    ``ftype`` is ``"normal"``, ``"array"`` or ``"dataTable"``; ``fref`` the
    array formula's range (``"C1:C3"``); ``fattrs`` the data-table attributes.
    ``vtype`` is the ``t`` attribute ``value`` was read under (``"n"`` when absent), with a
    ``~`` after it where the reading lost the text (``t="e"`` with ``#BUSY!`` reads as
    ``#N/A``, ``t="b"`` with ``yes`` as FALSE): the writer keeps a value as written only when
    it reads back exactly.
    """

    value: object = None
    formula: str | None = None
    ftype: str = "normal"
    fref: str | None = None
    fattrs: dict | None = None
    style: int = 0
    vtype: str = "n"


@dataclass
class SheetData:
    """One sheet of the package: its name, part, index, kind and cells ``{(row, col): Cell}``."""

    name: str
    part: str
    index: int
    kind: str = "worksheet"          # worksheet | chartsheet | macrosheet | dialogsheet
    cells: dict = field(default_factory=dict)   # (row, col) -> Cell
    max_row: int = 0
    max_col: int = 0


_LOCAL: dict[str, str] = {}


def _local(tag: str) -> str:
    """A tag's local name (``{namespace}c`` -> ``c``), remembered: a package has few tags."""
    name = _LOCAL.get(tag)
    if name is None:
        name = tag.rsplit("}", 1)[-1]
        if len(_LOCAL) < 4096:          # a hostile part's made-up tags are not remembered
            _LOCAL[tag] = name
    return name


def _attr(el, name: str, default=None):
    """Attribute by local name (``r:id`` and ``id`` in any namespace)."""
    v = el.get(name)
    if v is not None:
        return v
    for k, val in el.attrib.items():
        if _local(k) == name:
            return val
    return default


def _related_part(rels: dict, type_suffix: str) -> str | None:
    """The first part of a relationships table whose type ends with ``type_suffix``."""
    return next((p for t, p in rels.values() if t.endswith(type_suffix)), None)


def _sheet_kind(rel_type: str) -> str:
    """``worksheet``, ``chartsheet``, ``macrosheet`` or ``dialogsheet`` from a sheet's
    relationship type (a worksheet if it has none)."""
    kind = rel_type.rsplit("/", 1)[-1].lower() if rel_type else "worksheet"
    return "macrosheet" if kind in ("xlmacrosheet", "xlintlmacrosheet") else kind


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
        try:
            st = os.stat(self.path)
        except OSError as exc:
            why = "no such file" if isinstance(exc, FileNotFoundError) else exc.strerror or exc
            raise WorkbookFileError(f"{self.path}: {why}") from None
        if not stat.S_ISREG(st.st_mode):
            # a FIFO would block the read, a device never end
            raise WorkbookFileError(f"{self.path}: not a regular file (a workbook is an .xlsx/.xlsm file)")
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
            return _safe_fromstring(data)
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
        """Read the package: the workbook part (sheets, defined names), the number formats,
        the shared strings, then the cells of every worksheet."""
        wb_part = self._workbook_part_name()
        self._check_content_types()
        self.workbook_part = wb_part
        root = self.xml(wb_part)
        if _local(root.tag) != "workbook":
            raise WorkbookFileError(f"{self.path}: {wb_part} is not a workbook part")
        rels = self._rels(wb_part)
        self._read_workbook(root, rels)
        self._load_number_formats(_related_part(rels, "/styles"))
        sst_part = _related_part(rels, _T_SST)
        self.shared_strings = self._load_sst(sst_part) if sst_part and self.has(sst_part) else []
        total = 0
        for sh in self.sheets:
            if sh.kind != "worksheet":
                continue
            if not sh.part or not self.has(sh.part):
                raise WorkbookFileError(f"{self.path}: sheet {sh.name!r} has no part in the package")
            total = self._load_sheet(sh, total)

    def _workbook_part_name(self) -> str:
        """The workbook part the package's relationships name (``xl/workbook.xml`` if none);
        refused if absent (a Word or PowerPoint file)."""
        wb_part = _related_part(self._rels(""), _T_OFFICEDOC)
        if wb_part is None:
            wb_part = "xl/workbook.xml"
        if not self.has(wb_part):
            raise WorkbookFileError(f"{self.path}: not an Excel workbook (no {wb_part}; "
                                    "is it a Word or PowerPoint file?)")
        return wb_part

    def _read_workbook(self, root, rels: dict) -> None:
        """From the workbook part: the date system, the sheets in order (with their parts and
        kinds) and the defined names; a workbook without sheets, or with a defined name that
        is a cell reference, is refused."""
        self.date1904 = False
        self.sheets: list[SheetData] = []
        self.defined_names: list[tuple[str, int | None, str]] = []
        for el in root:
            tag = _local(el.tag)
            if tag == "workbookPr":
                self.date1904 = el.get("date1904") in ("1", "true")
            elif tag == "sheets":
                for sh in el:
                    if _local(sh.tag) == "sheet":
                        typ, part = rels.get(_attr(sh, "id"), ("", None))
                        self.sheets.append(SheetData(name=sh.get("name", ""), part=part or "",
                                                     index=len(self.sheets), kind=_sheet_kind(typ)))
            elif tag == "definedNames":
                for dn in el:
                    if _local(dn.tag) == "definedName":
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

    def _load_number_formats(self, styles_part: str | None) -> None:
        """The number format of each cell style, and the styles that show a date or a time."""
        self._style_formats: list[tuple[int, str]] = []      # (numFmtId, format code) per cell style
        self.number_formats = self._load_styles(styles_part) if styles_part and self.has(styles_part) else []
        #: cell styles (cellXfs indices) that show a date or a time
        self.date_styles = frozenset(i for i, (fid, code) in enumerate(self._style_formats)
                                     if fid in _DATE_FORMAT_IDS or is_date_format(code))

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
        """Read the cells of worksheet ``sh`` into ``sh.cells``; ``total`` is the count of cells
        read so far (the limit is on the workbook), the new count is returned."""
        data = self.read(sh.part)
        self._precount_cells(sh, data, total)
        shared: dict[str, tuple[str, int, int]] = {}
        pending: list[tuple[int, int, str]] = []
        try:
            total = self._read_cells(sh, data, total, shared, pending)
        except DefusedXmlException as exc:
            raise WorkbookFileError(f"{self.path}: unsafe XML in {sh.part} refused "
                                    f"({type(exc).__name__}: DTDs and entity declarations "
                                    "are not allowed in a workbook)") from None
        except ParseError as exc:
            raise WorkbookFileError(f"{self.path}: malformed XML in {sh.part} ({exc})") from None
        except FormulaError as exc:
            raise WorkbookFileError(f"{self.path}: sheet {sh.name!r}: {exc}") from None
        if pending:
            self._expand_shared_formulas(sh, shared, pending)
        return total

    def _precount_cells(self, sh: SheetData, data: bytes, total: int) -> None:
        """Refuse a sheet that would take the workbook over the cell limit before parsing it,
        from a quick count of its ``<c>`` elements."""
        if total + data.count(b"<c") - data.count(b"<col") - data.count(b"<cfRule") \
                - data.count(b"<cols") > self.max_cells:
            approx = total + sum(1 for _ in _C_TAG.finditer(data))
            if approx > self.max_cells:
                raise WorkbookFileError(
                    f"{self.path}: more than {self.max_cells:,} cells (sheet {sh.name!r} holds "
                    f"about {approx - total:,}); the engine's limit is {self.max_cells:,} cells "
                    "(--max-cells)")

    def _read_cells(self, sh: SheetData, data: bytes, total: int, shared: dict, pending: list) -> int:
        """Stream the sheet's XML into ``sh.cells`` (and its used area), a row at a time;
        shared formulas' masters go to ``shared``, the cells that use them to ``pending``.
        Returns the new cell count."""
        row = 0
        cells = sh.cells
        for _, el in _safe_iterparse(data):
            kind = _local(el.tag)
            if kind != "row":
                if kind == "sheetData" and any(_local(x.tag) == "c" for x in el.iter()):
                    self._stray_cell(sh)            # the rows' cells were read and cleared
                continue
            r = el.get("r")
            row = int(r) if r is not None else row + 1
            col = 0
            for c in el:
                if _local(c.tag) != "c":
                    if any(_local(x.tag) in ("c", "row") for x in c.iter()):
                        self._stray_cell(sh)        # a cell in a wrapper, or a row in a row
                    continue
                ref = c.get("r")
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
                cell = self._cell(c, sh, row, col, shared, pending)
                if cell is not None:
                    cells[(row, col)] = cell
                    if row > sh.max_row:
                        sh.max_row = row
                    if col > sh.max_col:
                        sh.max_col = col
            el.clear()
        return total

    def _stray_cell(self, sh: SheetData) -> NoReturn:
        """Refuse a sheet with a cell that is not a child of a row of its ``<sheetData>`` (no
        application writes one; read, it would have no row, skipped it would vanish unsaid)."""
        raise WorkbookFileError(f"{self.path}: sheet {sh.name!r}: a cell (<c>) or row outside a "
                                "<row> of <sheetData>: not a worksheet layout Excel writes")

    def _expand_shared_formulas(self, sh: SheetData, shared: dict, pending: list) -> None:
        """Give each cell that uses a shared formula its own text, translated from the master
        cell's as Excel does (relative references move with the cell)."""
        for r, c, si in pending:
            if si not in shared:
                raise WorkbookFileError(f"{self.path}: {sh.name}!{cell_name(r, c)} uses shared "
                                        f"formula {si} that has no master cell")
            text, mr, mc = shared[si]
            try:
                t = openpyxl.formula.translate.Translator("=" + text, origin=cell_name(mr, mc)).translate_formula(cell_name(r, c))
            except Exception as exc:  # openpyxl raises several types here
                raise WorkbookFileError(f"{self.path}: {sh.name}!{cell_name(r, c)}: cannot "
                                        f"expand shared formula ({exc})") from None
            sh.cells[(r, c)].formula = t[1:]

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
        if (t == "e" and v != value) or (t == "b" and v not in ("0", "1")):
            t += "~"            # read losing its text (#BUSY! as #N/A, "yes" as FALSE)
        st = el.get("s")
        style = int(st) if st and st.isdigit() else 0
        if f is None:
            if value is None and not style:
                return None
            return Cell(value=value, style=style, vtype=t)
        ftype = f.get("t", "normal")
        text = (f.text or "").strip()
        if text.startswith("="):
            text = text[1:]
        cell = Cell(value=value, formula=text, style=style, vtype=t)
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
