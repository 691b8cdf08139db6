"""Spell a workbook's cryptoplan calls for Excel or for LibreOffice Calc.

Excel (xlwings) calls a function by its name, ``ERLANGC(...)``; LibreOffice
Calc saves an add-in call under the add-in's programmatic name,
``ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(...)``, and LibreOffice 7.4 reads only that
spelling from an ``.xlsx`` file (it maps the add-in's declared compatibility
names in its English function names, not in files).  :func:`retarget` rewrites
every formula of an ``.xlsx`` package for one application: the worksheets'
cell formulas and the workbook's defined names.  Every other part of the
package (charts, styles, cached values) is copied byte for byte.
``cryptoplan recalc`` reads both spellings, so either file recalculates here.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError, OutputExists

import os
import re
import zipfile
from xml.sax.saxutils import escape, unescape

from cryptoplan.addin.calc import EXPLAIN, PREFIX, retarget_formula
from cryptoplan.addin.catalog import CATALOG

from .engine import atomic_target
from .engine.package import Package, WorkbookFileError

__all__ = ["TARGETS", "retarget", "retarget_xml"]

TARGETS = ("calc", "excel")
_ENTITIES = {"&quot;": '"', "&apos;": "'"}
_FORMULA = re.compile(rb"(<(f|definedName)\b[^>]*>)([^<]*)(</\2>)")
_PARTS = re.compile(r"xl/(worksheets/[^/]+|workbook)\.xml$")


# A message cell: =IF(ISNUMBER(B5),"",B5) beside a cryptoplan call in B5 (the template's Results).
# In Excel the call's error is its text, so the cell repeats it; Calc returns a real error
# (#NUM!) that says nothing, so for Calc the cell asks the add-in for the message instead:
# =IF(ISNUMBER(B5),"",EXPLAIN("CARD_UTILIZATION",<B5's arguments>)).
_CELL = re.compile(rb'<c r="([A-Z]{1,3}[0-9]+)"[^>]*>\s*<f>([^<]*)</f>')
_MESSAGE = re.compile(r'IF\(ISNUMBER\(([A-Z]{1,3}[0-9]+)\),"",(?:\1|' + re.escape(PREFIX + EXPLAIN) + r'\((.*)\))\)')
_CALL_ONLY = re.compile(r"(?:" + re.escape(PREFIX) + r")?([A-Z][A-Z0-9_]*)\((.*)\)", re.S)
_FUNCTIONS = {f.name for f in CATALOG}


def _explained(text: str, cells: dict, to: str) -> str:
    """A message cell's formula spelt for ``to`` (unchanged if ``text`` is not one)."""
    m = _MESSAGE.fullmatch(text)
    if not m:
        return text
    ref = m.group(1)
    if to == "excel":
        return f'IF(ISNUMBER({ref}),"",{ref})'
    call = _CALL_ONLY.fullmatch(cells.get(ref, ""))
    if m.group(2) is not None or not call or call.group(1).upper() not in _FUNCTIONS \
            or not _balanced(call.group(2)):
        return text
    return f'IF(ISNUMBER({ref}),"",{PREFIX}{EXPLAIN}("{call.group(1).upper()}",{call.group(2)}))'


def _balanced(args: str) -> bool:
    """True if ``args`` (outside string literals) closes every parenthesis it opens: one call."""
    depth = 0
    for i, part in enumerate(re.split(r'("(?:[^"]|"")*")', args)):
        if i % 2:
            continue
        for ch in part:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                return False
    return depth == 0


def retarget_xml(xml: bytes, to: str) -> tuple[bytes, int]:
    """``xml`` (a worksheet or workbook part) with its formulas spelt for ``to``; and how many changed.

    Besides every cryptoplan call's spelling, a message cell that repeats a call's error
    (``=IF(ISNUMBER(B5),"",B5)``) asks Calc's add-in for the message (``EXPLAIN``), and back.
    """
    changed = 0
    cells = {m.group(1).decode(): unescape(m.group(2).decode("utf-8"), _ENTITIES) for m in _CELL.finditer(xml)}

    def sub(m):
        nonlocal changed
        text = unescape(m.group(3).decode("utf-8"), _ENTITIES)
        new = retarget_formula(_explained(text, cells, to), to)
        if new == text:
            return m.group(0)
        changed += 1
        return m.group(1) + escape(new).encode("utf-8") + m.group(4)
    return _FORMULA.sub(sub, xml), changed


def retarget(src, dest, to: str, *, force: bool = False) -> int:
    """Write ``src`` to ``dest`` with every cryptoplan call spelt for ``to``.

    Parameters
    ----------
    src, dest : path-like
        ``.xlsx`` workbooks; ``dest`` may be ``src`` (replaced atomically).
    to : {"calc", "excel"}
        The application the copy is for.
    force : bool
        Replace an existing ``dest``.

    Returns
    -------
    int
        Number of formulas rewritten (0: the copy equals the original).

    Raises
    ------
    ValueError
        ``to`` not one of :data:`TARGETS`; ``src`` not an xlsx package.
    FileExistsError
        ``dest`` exists and ``force`` is not set.
    """
    if to not in TARGETS:
        raise InputError(f"to must be one of {', '.join(TARGETS)} (got {to!r})")
    if os.path.exists(dest) and not force:
        raise OutputExists(f"{dest} exists; use --force to overwrite it")
    # the package reader recalc uses: a regular file, a ZIP, Open XML content types, no
    # encrypted or duplicate member, each part read with recalc's size cap
    try:
        pkg = Package(src)
    except WorkbookFileError as exc:
        raise InputError(str(exc)) from None
    total = 0
    try:
        with pkg.zip, atomic_target(dest) as tmp:
            with zipfile.ZipFile(tmp, "w") as zout:
                for info in pkg.zip.infolist():
                    data = pkg.read(info.filename)
                    if _PARTS.match(info.filename):
                        data, n = retarget_xml(data, to)
                        total += n
                    zout.writestr(info, data)
    except WorkbookFileError as exc:
        raise InputError(str(exc)) from None
    return total
