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

import os
import re
import zipfile
from xml.sax.saxutils import escape, unescape

from cryptoplan.addin.calc import retarget_formula

from .engine import atomic_target

__all__ = ["TARGETS", "retarget", "retarget_xml"]

TARGETS = ("calc", "excel")
_ENTITIES = {"&quot;": '"', "&apos;": "'"}
_FORMULA = re.compile(rb"(<(f|definedName)\b[^>]*>)([^<]*)(</\2>)")
_PARTS = re.compile(r"xl/(worksheets/[^/]+|workbook)\.xml$")


def retarget_xml(xml: bytes, to: str) -> tuple[bytes, int]:
    """``xml`` (a worksheet or workbook part) with its formulas spelt for ``to``; and how many changed."""
    changed = 0

    def sub(m):
        nonlocal changed
        text = unescape(m.group(3).decode("utf-8"), _ENTITIES)
        new = retarget_formula(text, to)
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
        raise ValueError(f"to must be one of {', '.join(TARGETS)} (got {to!r})")
    if os.path.exists(dest) and not force:
        raise FileExistsError(f"{dest} exists; use --force to overwrite it")
    try:
        zin = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{src} is not an .xlsx workbook: {exc}") from None
    total = 0
    with zin, atomic_target(dest) as tmp:
        if "xl/workbook.xml" not in zin.namelist():
            raise ValueError(f"{src} is not an .xlsx workbook (no xl/workbook.xml)")
        with zipfile.ZipFile(tmp, "w") as zout:
            for info in zin.infolist():
                data = zin.read(info)
                if _PARTS.match(info.filename):
                    data, n = retarget_xml(data, to)
                    total += n
                zout.writestr(info, data)
    return total
