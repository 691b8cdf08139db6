"""Writing the xlsx/xlsm package back with the computed values, safely: :func:`write_package`.

The output is the *input package* with only two kinds of change, so that
defined names, styles, validation, conditional formats, charts, pivot
caches and a ``vbaProject.bin`` stay byte-identical:

* in each worksheet part, the ``<c>`` elements of formula cells get their
  cached value (``<v>`` with ``t="str"``/``"b"``/``"e"`` as the value's type
  requires) next to their untouched ``<f>``, unless the cell already holds
  that value (then it stays as written); cells changed by ``--set``
  get the new constant (text as an inline string, so a value such as
  ``"=1+1"`` stays text and is never written as a formula);
* ``xl/workbook.xml``'s ``<calcPr>`` gets ``fullCalcOnLoad="1"`` when asked.

A package with nothing to change is the input file, copied byte for byte.

The edit is textual (regular expressions over the ``<sheetData>`` element
of a part that was first checked by the guarded parser (:mod:`.safexml`) when
:class:`~cryptoplan.workbook.engine.package.Package` read it), not a
parse-and-reserialize, which would rename namespace prefixes that Excel
relies on.  The new package goes to a temporary file in the destination
folder and is renamed over the destination with :func:`os.replace`.
"""

from __future__ import annotations

import bisect
import math
import os
import re
import shutil
import zipfile
from dataclasses import dataclass

from .atomic import atomic_target
from .package import Package, WorkbookFileError
from .parser import cell_name, col_to_index
from .values import ExcelError

__all__ = ["CellWrite", "write_package", "ooxml_string", "xml_text"]

# XML character data: the three characters xml.sax.saxutils.escape replaces (importing that
# module pulls in urllib.request, http.client, email and ssl: 40 ms of every recalc's start-up).
_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})

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


_ATTR_RE = re.compile(r"""([\w:.-]+)\s*=\s*("[^"]*"|'[^']*')""")
_F_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)f\b[^>]*?(?:/>|>.*?</\1f>)", re.S)
_EXT_RE = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)extLst\b.*?</\1extLst>", re.S)
# a cell's r attribute (not xr:r or the like): its column letters
_R_ATTR_RE = re.compile(r"""(?:^|\s)r\s*=\s*["']\$?([A-Za-z]{1,3})\$?[0-9]+["']""")
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
    (:func:`~cryptoplan.workbook.engine.package.xml_untext` reads it back).
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
    """The ``<c>`` element of a written cell: its attributes but ``t`` kept in order (an ``r``
    added first when the cell had none and ``ref`` is given), the formula and extensions kept."""
    if ref is None and attrs[:1] in (" ", "\t", "\r", "\n") and _T_ATTR_RE.search(attrs) is None:
        attr_text = attrs           # no t to drop: the attributes as written
        pairs: list = []
    else:
        attr_text = ""
        if attrs:
            pairs = [(k, v) for k, v in _ATTR_RE.findall(attrs) if k != "t"]
            if ref is not None and not any(k == "r" for k, _ in pairs):
                pairs.insert(0, ("r", f'"{ref}"'))
        else:
            pairs = [] if ref is None else [("r", f'"{ref}"')]
    inner = inner or ""
    if w.mode == "cached" or w.mode == "spill":
        f = _formula_element(inner, prefix) if "f" in inner else ""
        t, v = _value_xml(w.value, prefix)
    else:
        f = ""
        t, v = _constant_xml(w.value, prefix)
    ext = _EXT_RE.search(inner) if "extLst" in inner else None
    body = f + v + (ext.group(0) if ext else "")
    if t is not None:
        pairs.append(("t", f'"{t}"'))
    attr_text += "".join([f" {k}={v}" for k, v in pairs])
    if not body:
        return f"<{prefix}c{attr_text}/>"
    return f"<{prefix}c{attr_text}>{body}</{prefix}c>"


#: A ``t`` attribute in a start tag's attribute text (or text that looks like one inside another
#: attribute's value: the cell is then rebuilt the long way, which drops only a real ``t``)
_T_ATTR_RE = re.compile(r"""\st\s*=""")


def _formula_element(inner: str, prefix: str) -> str:
    """The ``<f>`` element of a cell's content (``""`` if none): found by ``str.find`` when the
    content starts with it, as the cells Excel, LibreOffice and openpyxl write do."""
    opening = f"<{prefix}f"
    if inner.startswith(opening) and inner[len(opening):len(opening) + 1] in (">", " "):
        gt = inner.find(">")
        if inner[gt - 1] == "/":
            return inner[:gt + 1]
        close = f"</{prefix}f>"
        k = inner.find(close, gt)
        if k >= 0:
            return inner[:k + len(close)]
    m = _F_RE.search(inner)
    return m.group(0) if m else ""


def _elements(text: str, open_re, name: str, start: int = 0, end: int | None = None):
    """The elements ``name`` (any namespace prefix) of ``text[start:end]``, not nested in each
    other, as ``(start, end, prefix, attributes, inner)`` (``inner`` None: an empty element).

    What ``<P:name ATTRS>(.*?)</P:name>`` finds with a regular expression, with the end tag
    found by ``str.find`` instead of a lazy match that retries at every character (the part
    was parsed when it was read, so it is well-formed XML).
    """
    end = len(text) if end is None else end
    pos = start
    while True:
        m = open_re.search(text, pos, end)
        if m is None:
            return
        prefix, attrs = m.group(1), m.group(2)
        if m.group(3):
            yield m.start(), m.end(), prefix, attrs, None
            pos = m.end()
            continue
        close = f"</{prefix}{name}>"
        k = text.find(close, m.end(), end)
        if k < 0:                       # not an element of this level: look further on
            pos = m.start() + 1
            continue
        yield m.start(), k + len(close), prefix, attrs, text[m.end():k]
        pos = k + len(close)


_ROW_OPEN = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)row\b([^>]*?)(/?)>")
_CELL_OPEN = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?)c\b([^>]*?)(/?)>")
_ROW_R_ATTR_RE = re.compile(r"""(?:^|\s)r\s*=\s*["']([^"']*)["']""")


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
    remaining: dict[int, dict[int, CellWrite]] = {}
    for (r, c), w in writes.items():
        remaining.setdefault(r, {})[c] = w
    pending = sorted(remaining)
    out = []
    pos = 0
    row = 0
    for r0, r1, rprefix, rattrs, inner in _elements(body, _ROW_OPEN, "row"):
        ra = _ROW_R_ATTR_RE.findall(rattrs)
        new_row = int(ra[-1]) if ra else row + 1
        # rows that must be created before this one
        out.append(body[pos:r0])
        if pending and pending[0] < new_row:
            out.append(_new_rows(prefix, remaining, pending, new_row))
        row = new_row
        pos = r1
        wanted = remaining.pop(row, {})
        if not wanted:
            out.append(body[r0:r1])
            continue
        inner = inner or ""
        cells_out = []
        cpos = 0
        col = 0
        for c0, c1, cprefix, cattrs, cinner in _elements(inner, _CELL_OPEN, "c"):
            rm_ = _R_ATTR_RE.search(cattrs)
            # the column letters were checked when the package was read
            col_new = col_to_index(rm_.group(1)) if rm_ is not None else col + 1
            cells_out.append(inner[cpos:c0])
            if col_new > col + 1:       # cells to create between the last one and this one
                for c in sorted(k for k in wanted if col < k < col_new):
                    cells_out.append(_rebuild_cell(cprefix, "", None, wanted.pop(c),
                                                   cell_name(row, c)))
            col = col_new
            w = wanted.pop(col, None)
            if w is not None:
                cells_out.append(_rebuild_cell(cprefix, cattrs, cinner, w,
                                               None if rm_ is not None else cell_name(row, col)))
            else:
                cells_out.append(inner[c0:c1])
            cpos = c1
        cells_out.append(inner[cpos:])
        for c in sorted(wanted):
            cells_out.append(_rebuild_cell(rprefix, "", None, wanted[c], cell_name(row, c)))
        out.append(f"<{rprefix}row{rattrs}>{''.join(cells_out)}</{rprefix}row>")
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
    """The workbook part with ``<calcPr fullCalcOnLoad="1">``; as it is when it says so already."""
    text = xml.decode("utf-8")
    m = _CALCPR_RE.search(text)
    if m:
        found = _ATTR_RE.findall(m.group(2))
        if ("fullCalcOnLoad", '"1"') in found or ("fullCalcOnLoad", "'1'") in found:
            return xml
        attrs = [(k, v) for k, v in found if k != "fullCalcOnLoad"]
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

    Notes
    -----
    A cached (or spilled) value the cell already holds in the file, of the same type, is left
    as it is written there: rebuilding its ``<c>`` element would give the same value.  A
    package that nothing changes (a workbook recalculated as it was saved) is copied byte for
    byte from the file it was read from.
    """
    sheets = {sh.part: sh.cells for sh in pkg.sheets}
    changes = {}
    for part, writes in sheet_writes.items():
        cells = sheets.get(part, {})
        kept = {rc: w for rc, w in writes.items() if not _holds(cells.get(rc), w)}
        if kept:
            changes[part] = kept
    workbook = None
    if full_calc_on_load:
        before = pkg.read(pkg.workbook_part)
        workbook = _set_full_calc(before)
        if workbook == before:
            workbook = None
    with atomic_target(os.fspath(out_path)) as tmp, open(tmp, "wb") as fh:
        if not changes and workbook is None:
            _copy_source(pkg, fh)
            return
        _write_parts(pkg, fh, changes, workbook)


#: The ``t`` attributes a value is read back from exactly, by the value's type: a number
#: (``<v>`` with no ``t``; a date ``t="d"`` stands for one), a string (a formula's ``t="str"``,
#: a shared or an inline string), a boolean, an error (the reader marks one whose text it lost:
#: :attr:`~.package.Cell.vtype`).
_EXACT = {float: ("n",), str: ("str", "s", "inlineStr"), bool: ("b",), ExcelError: ("e",)}


def _holds(cell, w: CellWrite) -> bool:
    """Whether the file's cell already holds what ``w`` would write there: the same cached or
    spilled value, of the same type (``1.0`` is not ``TRUE``, ``"1"`` not ``1``), stored as it
    is read (:data:`_EXACT`; a string without ``_xHHHH_``, which a string element may or may
    not have decoded)."""
    if w.mode == "constant" or cell is None:
        return False
    kinds = _EXACT.get(type(w.value))
    return (kinds is not None and cell.vtype in kinds and type(cell.value) is type(w.value)
            and cell.value == w.value and not (type(w.value) is str and "_x" in w.value))


def _copy_source(pkg: Package, fh) -> None:
    """The bytes of the file ``pkg`` was read from, through the handle it holds open."""
    src = pkg.zip.fp
    if src is None:
        raise WorkbookFileError(f"{pkg.path}: the package was closed before it was written")
    src.seek(0)
    shutil.copyfileobj(src, fh)


def _write_parts(pkg: Package, fh, changes: dict, workbook: bytes | None) -> None:
    """Every part of ``pkg`` into a new ZIP archive on ``fh``: the worksheet parts with cell
    writes ``changes`` rewritten, the workbook part replaced by ``workbook`` (None: as it was)."""
    with zipfile.ZipFile(fh, "w") as zout:
        for info in pkg.zip.infolist():
            name = info.filename
            if info.is_dir():
                zout.writestr(info, b"")
                continue
            if name == pkg.workbook_part and workbook is not None:
                data = workbook
            else:
                data = pkg.read(name)
            if name in changes:
                try:
                    data = _rewrite_sheet(data, changes[name])
                except UnicodeDecodeError:
                    raise WorkbookFileError(f"{pkg.path}: {name} is not UTF-8 encoded") from None
            zinfo = zipfile.ZipInfo(name, date_time=info.date_time)
            zinfo.compress_type = info.compress_type
            zinfo.external_attr = info.external_attr
            zinfo.create_system = info.create_system
            zinfo.comment = info.comment
            zout.writestr(zinfo, data)
