"""The engine's case table (tests/data/engine_cases.csv) as a workbook, recalculated by LibreOffice.

The table holds one formula per row, as typed in Excel, with the value it must give and
where that value comes from.  This module

* builds one ``.xlsx`` from the table (:func:`build_workbook`): a sheet ``Data`` with the
  shared data below (:data:`DATA`), and every case's formula in sheet ``Cases`` (column A,
  row = the case's position in the table, unless the row's ``cell`` column places it
  elsewhere, for the cases whose value depends on where they stand, e.g. ``ROW()``).
  Formulas are written by openpyxl with no cached value, as single-cell array formulas
  only where the row's ``array`` column says so;
* has LibreOffice recalculate it (:func:`libreoffice_values`, through
  :func:`cryptoplan.workbook.libreoffice.convert`, every formula recalculated on load) and
  reads the values back from the saved file's XML, with their types (number, text,
  boolean, error);
* ``python tests/engine_cases_libreoffice.py --write`` records those values in the
  table: in ``expected`` for the rows whose source is LibreOffice, in ``libreoffice`` for
  the rows whose expected value comes from Excel's documentation (where LibreOffice
  differs).  Without ``--write`` it only lists the rows where LibreOffice now disagrees
  with the table.

It is how the table's LibreOffice values were obtained: never from cryptoplan's engine.
tests/test_engine_cases.py evaluates the same workbook with the engine (fast tier) and
re-runs LibreOffice (slow tier) so the table cannot drift from its source.

Functions Excel added after the 2007 file format ("future functions") are stored in a file
with the prefix ``_xlfn.``; :func:`file_formula` adds it, as Excel does when it saves.
LibreOffice 7.4 reads those names only with the prefix (without it: ``#NAME?``).
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
import tempfile
import zipfile
from pathlib import Path
from xml.etree import ElementTree

CASES = Path(__file__).resolve().parent / "data" / "engine_cases.csv"
LIBREOFFICE = "LibreOffice 7.4.7.2"
COLUMNS = ["id", "function", "formula", "expected", "type", "source", "excel_doc", "libreoffice",
           "cell", "array", "rtol"]
TYPES = ("number", "text", "boolean", "error")

#: The shared data sheet ``Data`` every case may reference: a column of mixed values
#: (numbers, a text, TRUE, a blank at A7, a numeric text), formula cells holding errors and
#: an empty text, lookup tables (ascending numbers, texts with a literal ``*``, a
#: horizontal table), a small sales table for the criteria functions, a descending list.
#: Strings starting with ``=`` are formulas.
DATA = {
    # mixed column: A7 is blank
    "A1": 10, "A2": 2.5, "A3": -3, "A4": 0, "A5": "apple", "A6": True, "A8": "12", "A9": 7,
    # plain numbers
    "B1": 1, "B2": 2, "B3": 3, "B4": 4, "B5": 5,
    # an error, an empty text, #N/A (formula cells)
    "C1": "=1/0", "C2": '=""', "C3": "=NA()",
    # ascending lookup table
    "D1": 0, "E1": "low", "F1": 1.5,
    "D2": 100, "E2": "mid", "F2": 2.5,
    "D3": 1000, "E3": "high", "F3": 4,
    "D4": 5000, "E4": "very high", "F4": 8,
    "D5": 10000, "E5": "max", "F5": 16,
    # text keys (unsorted), one with a literal asterisk
    "H1": "integrity", "I1": 1,
    "H2": "privacy", "I2": 2,
    "H3": "confidentiality", "I3": 3,
    "H4": "availability", "I4": 4,
    "H5": "a*b", "I5": 5,
    # horizontal table
    "K1": "a", "L1": "b", "M1": "c", "N1": "d",
    "K2": 10, "L2": 20, "M2": 30, "N2": 40,
    # sales: region, product, amount
    "P1": "East", "Q1": "Apple", "R1": 120,
    "P2": "West", "Q2": "Pear", "R2": 80,
    "P3": "East", "Q3": "Banana", "R3": 45,
    "P4": "North", "Q4": "Apple", "R4": 200,
    "P5": "West", "Q5": "Apple", "R5": 60,
    "P6": "East", "Q6": "Pear", "R6": 75,
    "P7": "South", "Q7": "Cherry", "R7": 30,
    "P8": "East", "Q8": "Apple", "R8": 10,
    # descending list
    "T1": 50, "T2": 40, "T3": 30, "T4": 20, "T5": 10,
    # a reference as text (INDIRECT)
    "V1": "Data!B4",
}

#: Functions stored as ``_xlfn.NAME`` in a file (Excel's "future functions" among the
#: engine's; LibreOffice 7.4 gives #NAME? for each of them written without the prefix).
FUTURE = frozenset({
    "CEILING.MATH", "CEILING.PRECISE", "CONCAT", "EXPON.DIST", "FLOOR.MATH", "FLOOR.PRECISE",
    "GAMMALN.PRECISE", "IFNA", "IFS", "MAXIFS", "MINIFS", "NORM.DIST", "NORM.INV", "NORM.S.DIST",
    "NORM.S.INV", "POISSON.DIST", "SWITCH", "TEXTJOIN", "XLOOKUP", "XMATCH", "XOR",
})

_CALL = re.compile(r'"[^"]*"|(?<![A-Za-z0-9_.!])([A-Z][A-Z0-9.]*)\(')


def calls(formula: str) -> list[str]:
    """Function names called in ``formula`` (outside string literals), in order."""
    return [m.group(1) for m in _CALL.finditer(formula) if m.group(1)]


def file_formula(formula: str) -> str:
    """``formula`` as a file stores it: future functions get their ``_xlfn.`` prefix."""
    def sub(m):
        name = m.group(1)
        if name and name in FUTURE:
            return "_xlfn." + m.group(0)
        return m.group(0)
    return _CALL.sub(sub, formula)


def load_cases(path=CASES) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for c in COLUMNS:
            r.setdefault(c, "")
            if r[c] is None:
                r[c] = ""
    return rows


def save_cases(rows: list[dict], path=CASES) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})


def from_libreoffice(row: dict) -> bool:
    """Whether a row's expected value is LibreOffice's (else Excel's documentation)."""
    return row["source"].startswith("LibreOffice")


def case_cells(rows: list[dict]) -> dict[str, tuple[str, str]]:
    """``id -> (sheet, A1 cell)`` where each case's formula goes."""
    out = {}
    taken = {}
    for i, r in enumerate(rows, start=1):
        if r["cell"]:
            sheet, coord = r["cell"].split("!")
            if sheet == "Cases" and re.match(r"A\d+$", coord):
                raise ValueError(f"{r['id']}: column A of Cases holds the unplaced cases")
        else:
            sheet, coord = "Cases", f"A{i}"
        if (sheet, coord) in taken:
            raise ValueError(f"{r['id']} and {taken[(sheet, coord)]} share {sheet}!{coord}")
        taken[(sheet, coord)] = r["id"]
        out[r["id"]] = (sheet, coord)
    return out


def build_workbook(rows: list[dict], path) -> Path:
    """Write the data sheet and every case's formula (no cached values) to ``path``."""
    import openpyxl
    from openpyxl.worksheet.formula import ArrayFormula

    wb = openpyxl.Workbook()
    cases = wb.active
    cases.title = "Cases"
    data = wb.create_sheet("Data")
    for coord, value in DATA.items():
        data[coord] = value
    cells = case_cells(rows)
    for r in rows:
        sheet, coord = cells[r["id"]]
        ws = wb[sheet] if sheet in wb.sheetnames else wb.create_sheet(sheet)
        f = file_formula(r["formula"])
        ws[coord] = ArrayFormula(coord, f) if r["array"] == "TRUE" else f
    wb.save(path)
    return Path(path)


_NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def read_values(path) -> dict[tuple[str, str], tuple[str, object]]:
    """Every cell of a saved workbook: ``(sheet, coord) -> (type, value)``, from the XML.

    ``type`` is one of :data:`TYPES`; numbers are the float the file holds, booleans
    ``True``/``False``, errors their literal (``"#N/A"``), texts the string (``""``
    included, which openpyxl would read as an empty cell).
    """
    out = {}
    with zipfile.ZipFile(path) as z:
        shared = []
        if "xl/sharedStrings.xml" in z.namelist():
            for si in ElementTree.fromstring(z.read("xl/sharedStrings.xml")).findall("m:si", _NS):
                shared.append("".join(t.text or "" for t in si.iter(f"{{{_NS['m']}}}t")))
        wbx = ElementTree.fromstring(z.read("xl/workbook.xml"))
        rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
        target = {r.get("Id"): r.get("Target") for r in rels}
        for sh in wbx.find("m:sheets", _NS):
            part = target[sh.get(_REL)].lstrip("/")
            part = part if part.startswith("xl/") else "xl/" + part
            root = ElementTree.fromstring(z.read(part))
            for c in root.iter(f"{{{_NS['m']}}}c"):
                v = c.find("m:v", _NS)
                t = c.get("t", "n")
                if t == "inlineStr":
                    is_ = c.find("m:is", _NS)
                    out[(sh.get("name"), c.get("r"))] = ("text", "".join(x.text or "" for x in is_.iter(f"{{{_NS['m']}}}t")))
                    continue
                if v is None:
                    if t == "str":
                        out[(sh.get("name"), c.get("r"))] = ("text", "")
                    continue
                text = v.text or ""
                if t == "b":
                    val = ("boolean", text.strip() == "1")
                elif t == "e":
                    val = ("error", text)
                elif t == "s":
                    val = ("text", shared[int(text)])
                elif t == "str":
                    val = ("text", text)
                else:
                    val = ("number", float(text))
                out[(sh.get("name"), c.get("r"))] = val
    return out


def libreoffice_values(rows: list[dict], workdir, profile_dir=None) -> dict[str, tuple[str, object]]:
    """``id -> (type, value)`` for every case, as LibreOffice recalculates the workbook."""
    from cryptoplan.workbook.libreoffice import convert

    workdir = Path(workdir)
    src = build_workbook(rows, workdir / "engine_cases.xlsx")
    (out,) = convert([src], workdir / "libreoffice", recalc=True, profile_dir=profile_dir)
    values = read_values(out)
    cells = case_cells(rows)
    return {r["id"]: values.get(cells[r["id"]], ("text", "")) for r in rows}


def value_text(typ: str, value) -> str:
    """A value as the table writes it: numbers in full precision (whole ones without
    ``.0``), ``TRUE``/``FALSE``, error literals, texts as they are."""
    if typ == "number":
        v = float(value)
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    if typ == "boolean":
        return "TRUE" if value else "FALSE"
    return str(value)


def parse_value(typ: str, text: str):
    """The Python value of a table entry (inverse of :func:`value_text`)."""
    if typ == "number":
        return float(text)
    if typ == "boolean":
        if text not in ("TRUE", "FALSE"):
            raise ValueError(f"boolean {text!r}")
        return text == "TRUE"
    if typ in ("text", "error"):
        return text
    raise ValueError(f"type {typ!r}")


def same(typ_a, a, typ_b, b, rtol=1e-12) -> bool:
    """Equal values: numbers within ``rtol`` (LibreOffice writes 15 significant digits),
    everything else exactly, types included."""
    if typ_a != typ_b:
        return False
    if typ_a == "number":
        return math.isclose(a, b, rel_tol=rtol, abs_tol=0.0) or a == b
    return a == b


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true",
                    help="record LibreOffice's values in the table (expected for LibreOffice rows, "
                         "libreoffice for rows sourced from Excel's documentation)")
    ap.add_argument("--cases", default=str(CASES))
    args = ap.parse_args(argv)
    rows = load_cases(args.cases)
    with tempfile.TemporaryDirectory(prefix="engine-cases-") as tmp:
        got = libreoffice_values(rows, tmp, profile_dir=Path(tmp) / "profile")
    changed = 0
    for r in rows:
        typ, val = got[r["id"]]
        text = value_text(typ, val)
        if not r["source"]:
            r["source"] = LIBREOFFICE
        if from_libreoffice(r):
            old = (r["type"], r["expected"])
            if old != (typ, text):
                print(f"{r['id']}: {r['formula']}  table {old}  LibreOffice {(typ, text)}")
                changed += 1
                r["type"], r["expected"] = typ, text
            r["libreoffice"] = ""
        else:
            if r["libreoffice"] != text:
                print(f"{r['id']}: {r['formula']}  (Excel: {r['expected']})  table libreoffice "
                      f"{r['libreoffice']!r}  LibreOffice {text!r}")
                changed += 1
                r["libreoffice"] = text
    if args.write:
        save_cases(rows, args.cases)
        print(f"{len(rows)} cases, {changed} values recorded in {args.cases}")
    else:
        print(f"{len(rows)} cases, {changed} differ from LibreOffice (run with --write to record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
