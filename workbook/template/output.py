"""The template as a file: written with cached values, evaluated, and rendered to PNG.

:func:`write_template` saves the built workbook (:func:`~.build.build_workbook`), marks its
spilling formulas as dynamic arrays in the saved package (openpyxl 3.1 cannot write cell
metadata: :func:`_add_dynamic_array_metadata`), and stores every formula's value at the
default inputs as its cached value (:func:`cryptoplan.workbook.recalculation.recalc_report`).
:func:`evaluated_values` and :func:`snapshot` give the formula engine's values of a built
workbook; :func:`render_pngs` converts a snapshot of each chart sheet to PNG with LibreOffice
and ``pdftoppm``.
"""

from __future__ import annotations

from cryptoplan.model.errors import OutputExists

import io
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from openpyxl.utils import get_column_letter
from openpyxl.utils.cell import range_boundaries
from openpyxl.worksheet.formula import ArrayFormula

from ..engine import OutputError, atomic_target
from ..engine.atomic import check_destination
from ..recalculation import RecalcError, load_engine, recalc_report
from .build import build_workbook

__all__ = ["CHART_SHEETS", "evaluated_values", "snapshot", "write_template", "render_pngs"]

#: The sheets with charts, rendered by :func:`render_pngs`.
CHART_SHEETS = ("Plan", "What-if", "Calibration")
#: The printed pages of each chart sheet that :func:`render_pngs` writes (from the first): the
#: Plan sheet's second holds its charts; Calibration's chart is over its long table's first page.
_CHART_PAGES = {"Plan": 2, "What-if": 1, "Calibration": 1}


def evaluated_values(wb, b) -> dict:
    """What every formula of a built workbook evaluates to with its inputs, by the formula engine.

    The workbook is saved to a temporary file and recalculated by
    :func:`cryptoplan.workbook.recalculation.load_engine` (the engine of ``cryptoplan recalc``), so the
    values are the engine's, not a second computation beside the formulas.

    Returns
    -------
    dict
        ``{(sheet, coord): value}`` for every formula cell and every cell a dynamic array
        spills into; a value is a float, bool, str (error text included), None (empty) or an
        error string such as ``"#N/A"``.
    """
    with tempfile.TemporaryDirectory(prefix="cryptoplan-template-") as tmp:
        path = Path(tmp) / "template.xlsx"
        wb.save(path)
        engine = load_engine(path)
        engine.evaluate()
        out = {}
        for sheet, coord in b.formulas:
            cells = [coord]
            f = wb[sheet][coord].value
            if isinstance(f, ArrayFormula):
                c1, r1, c2, r2 = range_boundaries(f.ref)
                cells = [f"{get_column_letter(c)}{r}" for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]
            for cell in cells:
                v = engine.value(f"'{sheet}'!{cell}").element(0)
                out[(sheet, cell)] = v if isinstance(v, (float, bool, str, type(None))) else str(v)
    return out


def snapshot(sheet: str):
    """The template with ``sheet`` alone, its formulas replaced by their values (for rendering).

    LibreOffice without the Calc add-in cannot evaluate cryptoplan functions; the snapshot
    shows what the formula engine computes for the default inputs, charts included.
    """
    wb, b = build_workbook()
    values = evaluated_values(wb, b)
    ws = wb[sheet]
    for (title, coord), v in values.items():
        if title == sheet:
            ws[coord] = v
    for other in list(wb.worksheets):
        if other.title != sheet:
            wb.remove(other)
    for name in list(wb.defined_names):
        del wb.defined_names[name]
    wb.active = 0
    return wb


# --------------------------------------------------------- dynamic arrays
_METADATA_XML = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<metadata xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:xda="http://schemas.microsoft.com/office/spreadsheetml/2017/dynamicarray">'
    '<metadataTypes count="1"><metadataType name="XLDAPR" minSupportedVersion="120000" copy="1" '
    'pasteAll="1" pasteValues="1" merge="1" splitFirst="1" rowColShift="1" clearFormats="1" '
    'clearComments="1" assign="1" coerce="1" cellMeta="1"/></metadataTypes>'
    '<futureMetadata name="XLDAPR" count="1"><bk><extLst>'
    '<ext uri="{bdbb8cdc-fa1e-496e-a857-3c3f30c029c3}">'
    '<xda:dynamicArrayProperties fDynamic="1" fCollapsed="0"/></ext></extLst></bk>'
    '</futureMetadata><cellMetadata count="1"><bk><rc t="1" v="0"/></bk></cellMetadata>'
    '</metadata>')
_METADATA_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheetMetadata+xml"
_METADATA_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/sheetMetadata"


def _sheet_parts(zf: zipfile.ZipFile) -> dict:
    """Sheet title -> part name inside the package (via workbook.xml and its relationships)."""
    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    rel_id = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    rels = ElementTree.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target") for r in rels}
    out = {}
    for sheet in ElementTree.fromstring(zf.read("xl/workbook.xml")).iter(f"{main}sheet"):
        target = targets[sheet.get(rel_id)]
        if target is None:              # openpyxl writes a Target on every relationship
            raise RuntimeError(f"sheet {sheet.get('name')!r}: its relationship in workbook.xml.rels has no Target")
        t = target.lstrip("/")
        out[sheet.get("name")] = t if t.startswith("xl/") else "xl/" + t
    return out


def _add_dynamic_array_metadata(package: bytes, cells: list) -> bytes:
    """``package`` with ``cells`` ((sheet, coord) holding array formulas) marked as dynamic arrays."""
    if not cells:
        return package
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        items = {i.filename: zf.read(i.filename) for i in zf.infolist()}
        parts = _sheet_parts(zf)
    for sheet, coord in cells:
        part = parts[sheet]
        xml = items[part].decode("utf-8")
        pattern = re.compile(rf'<c r="{coord}"(?![^>]*\bcm=)([^>]*)>(\s*<f t="array")')
        xml, count = pattern.subn(rf'<c r="{coord}" cm="1"\1>\2', xml)
        if count != 1:
            raise RuntimeError(f"array formula cell {sheet}!{coord} not found in {part}")
        items[part] = xml.encode("utf-8")
    ct = items["[Content_Types].xml"].decode("utf-8")
    if "/xl/metadata.xml" not in ct:
        ct = ct.replace("</Types>", f'<Override PartName="/xl/metadata.xml" '
                                    f'ContentType="{_METADATA_CT}"/></Types>')
    rels = items["xl/_rels/workbook.xml.rels"].decode("utf-8")
    if _METADATA_REL not in rels:
        ids = {int(i) for i in re.findall(r'Id="rId(\d+)"', rels)}
        rid = f"rId{max(ids, default=0) + 1}"
        rels = rels.replace("</Relationships>", f'<Relationship Id="{rid}" Type="{_METADATA_REL}" '
                                                f'Target="metadata.xml"/></Relationships>')
    items["[Content_Types].xml"] = ct.encode("utf-8")
    items["xl/_rels/workbook.xml.rels"] = rels.encode("utf-8")
    items["xl/metadata.xml"] = _METADATA_XML.encode("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in items.items():
            out.writestr(name, data)
    return buf.getvalue()


# ------------------------------------------------------------------ output
def write_template(path, force: bool = False) -> Path:
    """Write the template workbook to ``path`` atomically.

    Parameters
    ----------
    path : str or Path
        Destination ``.xlsx``.
    force : bool
        Overwrite an existing file.  Missing folders on the way are created.

    Returns
    -------
    Path
        The path written: formulas with their values at the default inputs as cached values.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``force`` is false.
    OutputError
        If the file cannot be written (a folder cannot be created, no permission,
        a full disk: the message names the path and the reason); nothing is left behind.
    """
    dest = Path(path)
    check_destination(dest)             # a name too long, a folder, a device: named before any work
    if dest.exists() and not force:
        raise OutputExists(f"{dest} exists; use --force to overwrite it")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot write {dest}: cannot create the folder {dest.parent} "
                          f"({exc.strerror or exc})") from None
    wb, b = build_workbook()
    # the package is built in memory and written in one call: a full disk fails that write,
    # never a ZipFile left open on the file (its __del__ then failed again, "Exception ignored")
    buf = io.BytesIO()
    wb.save(buf)
    package = _add_dynamic_array_metadata(buf.getvalue(), b.dynamic_arrays)
    with atomic_target(dest) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(package)
        # every formula's value at the default inputs as its cached value (as `cryptoplan recalc
        # -o` writes it): a spreadsheet without the add-in, or a viewer, shows numbers, not
        # #NAME?; Excel still recalculates on open (fullCalcOnLoad)
        try:
            recalc_report(tmp, in_place=True)
        except RecalcError as exc:          # a write that failed (a full disk): say so, leave nothing
            raise OutputError(str(exc)) from None
        if not force and dest.exists():
            raise OutputExists(f"{dest} appeared while writing; use --force to overwrite it")
    return dest


def _soffice() -> str | None:
    """The LibreOffice executable on PATH, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def render_pngs(out_dir, dpi: int = 110, timeout: float = 180.0) -> list:
    """Render each chart sheet (:data:`CHART_SHEETS`) of the template to a PNG.

    Each sheet is written alone as a values snapshot (see the module
    docstring), converted to PDF by LibreOffice headless with a private user
    profile, and its pages with the charts rasterised by ``pdftoppm``: the first as
    ``<sheet>.png``, a second (the Plan sheet's) as ``<sheet>-2.png``.

    Parameters
    ----------
    out_dir : str or Path
        Directory for ``<sheet>.png`` (created if needed).
    dpi : int
        Resolution passed to ``pdftoppm -r``.
    timeout : float
        Seconds allowed for each external command.

    Returns
    -------
    list of Path
        The PNG files written.

    Raises
    ------
    RuntimeError
        If ``soffice`` or ``pdftoppm`` is missing or fails.
    """
    soffice = _soffice()
    pdftoppm = shutil.which("pdftoppm")
    if not soffice or not pdftoppm:
        raise RuntimeError("rendering needs LibreOffice (soffice) and poppler-utils (pdftoppm)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="cryptoplan-render-") as tmpd:
        tmp = Path(tmpd)
        for title in CHART_SHEETS:
            wb = snapshot(title)
            slug = re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()
            xlsx = tmp / f"{slug}.xlsx"
            wb.save(xlsx)
            profile = (tmp / "lo-profile").as_uri()
            cmd = [soffice, f"-env:UserInstallation={profile}", "--headless", "--norestore",
                   "--convert-to", "pdf", "--outdir", str(tmp), str(xlsx)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            pdf = tmp / f"{slug}.pdf"
            if r.returncode != 0 or not pdf.exists():
                raise RuntimeError(f"LibreOffice PDF export failed: {r.stderr.strip() or r.stdout}")
            # the pages with the charts: the first as <sheet>.png, the next as <sheet>-2.png
            pages = tmp / f"{slug}-page"
            r = subprocess.run([pdftoppm, "-png", "-r", str(dpi), "-f", "1", "-l", str(_CHART_PAGES[title]), str(pdf),
                                str(pages)], capture_output=True, text=True, timeout=timeout)
            made = sorted(tmp.glob(f"{slug}-page-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
            if r.returncode != 0 or not made:
                raise RuntimeError(f"pdftoppm failed: {r.stderr.strip()}")
            for k, page in enumerate(made, 1):
                png = out / (f"{slug}.png" if k == 1 else f"{slug}-{k}.png")
                shutil.move(page, png)
                written.append(png)
    return written
