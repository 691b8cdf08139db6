"""cryptoplan's LibreOffice Calc add-in, generated from :data:`cryptoplan.addin.catalog.CATALOG`.

The same functions as the xlwings module :mod:`cryptoplan.addin.udfs`, as a Python UNO
component that LibreOffice Calc calls like its own functions.  An extension
package (``.oxt``) holds four generated files:

``types.rdb``
    The UNO interface ``org.cryptoplan.XFunctions``: one method per catalog
    function, every argument and the result of type ``any`` (a cell value or a
    range, omitted optional arguments arrive as void).  Written as IDL by
    :func:`idl_source` and compiled with ``unoidl-write`` (Debian package
    ``libreoffice-dev``).
``CalcAddIns.xcu``
    Function-wizard metadata (:func:`xcu_source`): display name, description,
    category, argument names and help, and the *compatibility name* (the Excel
    name) under which LibreOffice versions that support it read and write the
    call in ``.xlsx`` files.
``cryptoplan_calc.py``
    The component (:func:`component_source`): it puts the folders holding
    cryptoplan and its dependencies on LibreOffice's ``sys.path`` and forwards
    every call to :func:`evaluate`.
``META-INF/manifest.xml``

Values and errors
    :func:`evaluate` hands the arguments to :func:`cryptoplan.addin.convert.call`, the
    conversion layer the Excel functions use, so both spreadsheets convert,
    broadcast and validate identically.  Errors become *real* Calc errors, per
    element of an array: ``#VALUE!`` for bad input, ``#NUM!`` for an unstable
    queue, ``#N/A`` passed through.  Calc represents an error inside a number
    as a NaN whose payload is its error code; :func:`error_value` builds it.
    The message is reachable with ``=EXPLAIN("FUNCTION"; arg1; ...)``, which
    returns the text the same call gives in Excel (or its value).

Names across Excel and Calc
    Calc writes an add-in call into a file under the add-in's programmatic
    name, ``ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(...)``, unless it maps a declared
    compatibility name; LibreOffice 7.4 maps compatibility names only in its
    English function names, not in ``.xlsx`` (later versions do), so there
    :func:`retarget_formula` (``cryptoplan retarget``) rewrites a workbook's
    calls for the other application.  ``cryptoplan recalc`` reads both
    spellings.

Notes
-----
LibreOffice runs the component in its own Python (on Debian the system
``python3``, with ``python3-uno`` and ``libreoffice-script-provider-python``).
That Python must be able to import numpy and scipy: the component adds the
folders of the cryptoplan installation that built it, which works when both
Pythons have the same major.minor version (checked when building); otherwise
install cryptoplan into LibreOffice's Python and build from there.

References
----------
LibreOffice Developer's Guide, "Spreadsheet Add-Ins" (``com.sun.star.sheet.AddIn``,
``CalcAddIns.xcu``, ``XCompatibilityNames``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptoplan.model.errors import InputError

import inspect
import io
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


from . import convert
from .catalog import CALC_PREFIX, CALC_SERVICE, CATALOG, Function
from cryptoplan.model.lazy import lazy_module


# loaded on first use: saxutils costs 40 ms (urllib, email, ssl); NumPy and SciPy only for their paths
if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import numpy as np
    from xml.sax import saxutils
    import scipy
else:
    np = lazy_module("numpy")
    saxutils = lazy_module("xml.sax.saxutils")
    scipy = lazy_module("scipy")

__all__ = [
    "SERVICE", "INTERFACE", "PREFIX", "EXPLAIN", "ERROR_CODES", "error_value", "evaluate",
    "explain", "idl_source", "xcu_source", "component_source", "unoidl_write", "package",
    "install", "retarget_formula",
]

SERVICE = CALC_SERVICE
INTERFACE = "org.cryptoplan.XFunctions"
# How Calc spells an add-in call in a saved file when it maps no compatibility name.
PREFIX = CALC_PREFIX
EXPLAIN = "EXPLAIN"
# LibreOffice's FormulaError numbers (formula/errorcodes.hxx) of the error literals.
ERROR_CODES = {"#NULL!": 521, "#DIV/0!": 532, "#VALUE!": 519, "#REF!": 524, "#NAME?": 525,
               "#NUM!": 503, "#N/A": 32767}
_UNKNOWN_ERROR = ERROR_CODES["#VALUE!"]
_NAMES = {f.name for f in CATALOG}
_SDK_BIN = Path("/usr/lib/libreoffice/sdk/bin")
_TYPES = Path("/usr/lib/libreoffice/program/types.rdb")


# ------------------------------------------------------------ values, errors
def error_value(literal: str) -> float:
    """The Calc error ``literal`` (``"#NUM!"``) as a double Calc reads as that error.

    Calc stores an error in a formula result as a quiet NaN whose low 32 bits
    are the error number (``CreateDoubleError`` in LibreOffice's
    ``formula/errorcodes.hxx``); an unknown literal becomes ``#VALUE!``.
    """
    code = ERROR_CODES.get(literal, _UNKNOWN_ERROR)
    return struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000000 | code))[0]


def _literal(text: str) -> str:
    """The Excel error literal of error text: its code when typed, else its prefix."""
    code = getattr(text, "code", None)
    return code if code is not None else next(e for e in convert.EXCEL_ERRORS if text.startswith(e))


def _to_calc(value):
    """One result element as Calc takes it: a float, text, or an error NaN."""
    if convert.is_error_text(value):
        return error_value(_literal(value))
    if isinstance(value, bool):      # Calc's TRUE is the number 1 (an array takes no booleans)
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        v = float(value)
        return v if math.isfinite(v) else error_value("#NUM!")
    return str(value)


def evaluate(spec: Function, args: tuple):
    """Evaluate ``spec`` on the arguments Calc passes; the result as Calc takes it.

    Parameters
    ----------
    spec : Function
        Catalog entry.
    args : tuple
        One value per catalog argument as the UNO bridge delivers ``any``
        arguments: float or str for a constant, a tuple of row tuples for a
        cell or a range (an empty cell is None), None for an omitted argument.

    Returns
    -------
    float, str or tuple of tuple
        A scalar for a 1x1 result, else rows; a failing element is the error
        NaN of :func:`error_value`.  Never raises.
    """
    out = convert.call(spec, tuple(args))
    if isinstance(out, list):
        return tuple(tuple(_to_calc(x) for x in row) for row in out)
    return _to_calc(out)


def explain(name, args: tuple) -> str | float | bool:
    """What ``=EXPLAIN("NAME"; args...)`` shows: the call's error text, else its value.

    A 1x1 value is returned as it is; a larger result as ``"NAME returns a RxC array"``.
    """
    key = str(name).strip().upper() if isinstance(name, str) else ""
    if key.startswith(PREFIX):
        key = key[len(PREFIX):]
    if key not in _NAMES:
        return convert.error_text("#VALUE!", EXPLAIN, f"function must be the name of a cryptoplan "
                                  f"function, e.g. \"ERLANGC\" (got {name!r})")
    spec = next(f for f in CATALOG if f.name == key)
    if len(args) > len(spec.args):
        return convert.error_text("#VALUE!", EXPLAIN, f"{key} takes at most {len(spec.args)} "
                                  f"arguments (got {len(args)})")
    padded = tuple(args) + (None,) * (len(spec.args) - len(args))
    out = convert.call(spec, padded)
    if isinstance(out, list):
        errors = [x for row in out for x in row if convert.is_error_text(x)]
        return errors[0] if errors else f"{key} returns a {len(out)}x{len(out[0])} array"
    return out


# ------------------------------------------------------------ generated files
def _idl_arg(name: str) -> str:
    """UNOIDL admits no underscore in a lower-case identifier: ``arrival_rate`` -> ``arrivalRate``."""
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def idl_source(catalog=CATALOG) -> str:
    """UNOIDL of the interface: one ``any NAME([in] any arg, ...)`` method per function."""
    lines = ["#include <com/sun/star/uno/XInterface.idl>", "",
             "module org { module cryptoplan {",
             "  interface XFunctions : com::sun::star::uno::XInterface {"]
    for spec in catalog:
        params = ", ".join(f"[in] any {_idl_arg(a.name)}" for a in spec.args)
        lines.append(f"    sequence< sequence< any > > {spec.name}({params});")
    lines.append(f"    any {EXPLAIN}([in] any function, [in] sequence<any> arguments);")
    lines += ["  };", "}; };", ""]
    return "\n".join(lines)


def _prop(name: str, value: str, lang: str | None = "en-US") -> str:
    attr = f' xml:lang="{lang}"' if lang else ""
    return f'<prop oor:name="{name}"><value{attr}>{saxutils.escape(value)}</value></prop>'


def _function_node(name: str, help: str, category: str, params: list) -> list:
    out = [f'    <node oor:name="{name}" oor:op="replace">',
           "      " + _prop("DisplayName", name),
           "      " + _prop("Description", help),
           "      " + _prop("Category", "Add-In", None),
           "      " + _prop("CategoryDisplayName", category),
           "      " + _prop("CompatibilityName", name),
           '      <node oor:name="Parameters">']
    for pname, phelp in params:
        out += [f'        <node oor:name="{_idl_arg(pname)}" oor:op="replace">',
                "          " + _prop("DisplayName", pname),
                "          " + _prop("Description", phelp),
                "        </node>"]
    out += ["      </node>", "    </node>"]
    return out


def xcu_source(catalog=CATALOG) -> str:
    """``CalcAddIns.xcu``: the function wizard's names, help and compatibility names."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<oor:component-data xmlns:oor="http://openoffice.org/2001/registry" '
             'xmlns:xs="http://www.w3.org/2001/XMLSchema" oor:name="CalcAddIns" '
             'oor:package="org.openoffice.Office">',
             ' <node oor:name="AddInInfo">',
             f'  <node oor:name="{SERVICE}" oor:op="replace">',
             '   <node oor:name="AddInFunctions">']
    for spec in catalog:
        lines += _function_node(spec.name, spec.help, spec.category,
                                [(a.name, a.wizard_text()) for a in spec.args])
    lines += _function_node(
        EXPLAIN, "The message of a cryptoplan function's error (the text Excel shows), or its "
        "value: EXPLAIN(\"CARD_UTILIZATION\"; arguments as in the call).", "cryptoplan",
        [("function", "Name of the cryptoplan function, as text."),
         ("arguments", "The arguments of the call, in order.")])
    lines += ["   </node>", "  </node>", " </node>", "</oor:component-data>", ""]
    return "\n".join(lines)


_MANIFEST = """<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="http://openoffice.org/2001/manifest">
 <manifest:file-entry manifest:media-type="application/vnd.sun.star.uno-typelibrary;type=RDB" manifest:full-path="types.rdb"/>
 <manifest:file-entry manifest:media-type="application/vnd.sun.star.configuration-data" manifest:full-path="CalcAddIns.xcu"/>
 <manifest:file-entry manifest:media-type="application/vnd.sun.star.uno-component;type=Python" manifest:full-path="cryptoplan_calc.py"/>
</manifest:manifest>
"""

_DESCRIPTION = """<?xml version="1.0" encoding="UTF-8"?>
<description xmlns="http://openoffice.org/extensions/description/2006" xmlns:xlink="http://www.w3.org/1999/xlink">
 <identifier value="org.cryptoplan.calc"/>
 <version value="{version}"/>
 <display-name><name lang="en">cryptoplan functions</name></display-name>
</description>
"""

_COMPONENT = '''"""cryptoplan's functions for LibreOffice Calc (generated by `cryptoplan calc-addin`; do not edit)."""
import sys

import unohelper

# Where cryptoplan, numpy and scipy were installed when this add-in was built, and
# the Python version they were built for.
PATHS = {paths!r}
PYTHON = {python!r}
SERVICE = {service!r}

sys.path[:0] = [p for p in PATHS]       # first: this installation wins over any other
sys.path[len(PATHS):] = [p for p in sys.path[len(PATHS):] if p not in PATHS]


def _implementation():
    from org.cryptoplan import XFunctions
    try:
        from cryptoplan.addin import calc
        from cryptoplan.addin.catalog import CATALOG
        problem = None
    except Exception as exc:  # reported by every function, and in full by EXPLAIN
        calc, CATALOG = None, ()
        problem = (f"cryptoplan cannot be imported by LibreOffice's Python "
                   f"{{sys.version_info[0]}}.{{sys.version_info[1]}} (built for "
                   f"{{PYTHON[0]}}.{{PYTHON[1]}} from {{PATHS}}): {{type(exc).__name__}}: {{exc}}")

    class Functions(unohelper.Base, XFunctions):
        def __init__(self, ctx):
            self.ctx = ctx

    def method(spec):
        def call(self, *args):
            out = calc.evaluate(spec, args)
            # declared sequence<sequence<any>>: Calc shows a 1x1 array as a plain value
            return out if isinstance(out, tuple) else ((out,),)
        call.__name__ = spec.name
        return call

    for spec in CATALOG:
        setattr(Functions, spec.name, method(spec))
    if problem is None:
        Functions.EXPLAIN = lambda self, function, arguments: calc.explain(function, tuple(arguments))
    else:
        nan = ((float("nan"),),)
        Functions.__getattr__ = lambda self, name: (lambda *args: nan)
        Functions.EXPLAIN = lambda self, function, arguments: problem
    return Functions


def createInstance(ctx):
    return _implementation()(ctx)


g_ImplementationHelper = unohelper.ImplementationHelper()
g_ImplementationHelper.addImplementation(createInstance, SERVICE, ("com.sun.star.sheet.AddIn",))
'''


def _install_paths() -> list[str]:
    """Folders that must be on ``sys.path`` to import cryptoplan and its dependencies."""
    # the folder that holds cryptoplan/ (site-packages/cryptoplan/addin/calc.py), numpy/, scipy/
    folders = [str(Path(__file__).resolve().parents[2])]
    folders += [str(Path(inspect.getfile(m)).resolve().parent.parent) for m in (np, scipy)]
    folders += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    return list(dict.fromkeys(folders))


def component_source(paths=None, python=None) -> str:
    """Source of the UNO component ``cryptoplan_calc.py``.

    Parameters
    ----------
    paths : list of str, optional
        Folders put first on LibreOffice's ``sys.path`` (default: those of this
        installation of cryptoplan, numpy and scipy).
    python : tuple of int, optional
        ``(major, minor)`` of the Python those folders were installed for
        (default: this interpreter's).
    """
    paths = _install_paths() if paths is None else list(paths)
    python = tuple(sys.version_info[:2]) if python is None else tuple(python)
    return _COMPONENT.format(paths=paths, python=python, service=SERVICE)


# ------------------------------------------------------------ build, install
def unoidl_write() -> str:
    """Path of LibreOffice's ``unoidl-write``; FileNotFoundError naming the package if absent."""
    found = shutil.which("unoidl-write") or (str(_SDK_BIN / "unoidl-write")
                                             if (_SDK_BIN / "unoidl-write").exists() else None)
    if found is None:
        raise FileNotFoundError("unoidl-write (LibreOffice SDK) is not installed; on Debian/Ubuntu: "
                                "apt-get install libreoffice-dev")
    return found


def _office_python() -> tuple | None:
    """``(major, minor)`` of the Python LibreOffice embeds (its libpython), or None if unknown."""
    program = Path(os.environ.get("CRYPTOPLAN_LO_PROGRAM", "/usr/lib/libreoffice/program"))
    lib = program / "libpyuno.so"
    if not lib.exists():
        return None
    try:
        out = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"libpython(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def package(paths=None) -> bytes:
    """The extension package (``.oxt``, a zip) as bytes: see the module docstring.

    Parameters
    ----------
    paths : list of str, optional
        See :func:`component_source`.  When omitted, LibreOffice's Python must have
        this interpreter's major.minor version (checked when it can be found).

    Raises
    ------
    FileNotFoundError
        ``unoidl-write`` is missing (the message names the package).
    RuntimeError
        ``unoidl-write`` failed, or LibreOffice's Python has another version than this one.
    """
    office = _office_python()
    if paths is None and office is not None and office != tuple(sys.version_info[:2]):
        raise RuntimeError(
            f"LibreOffice's Python is {office[0]}.{office[1]} but this cryptoplan runs on "
            f"{sys.version_info[0]}.{sys.version_info[1]}: numpy and scipy built for one cannot be "
            f"imported by the other. Install cryptoplan with Python {office[0]}.{office[1]} and run "
            "`cryptoplan calc-addin` from there.")
    tool = unoidl_write()
    with tempfile.TemporaryDirectory(prefix="cryptoplan-oxt-") as tmp:
        idl = Path(tmp) / "XFunctions.idl"
        rdb = Path(tmp) / "types.rdb"
        idl.write_text(idl_source())
        r = subprocess.run([tool, str(_TYPES), str(idl), str(rdb)], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0 or not rdb.exists():
            raise RuntimeError(f"unoidl-write failed (exit {r.returncode}): {r.stderr.strip()[-1000:]}")
        types = rdb.read_bytes()
    try:
        ver = version("cryptoplan")
    except PackageNotFoundError:
        ver = "0"
    files: dict[str, str | bytes] = {
        "META-INF/manifest.xml": _MANIFEST, "description.xml": _DESCRIPTION.format(version=ver),
        "CalcAddIns.xcu": xcu_source(), "cryptoplan_calc.py": component_source(paths), "types.rdb": types}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def install(oxt, *, shared: bool = False, env: list | None = None, timeout: float = 300.0) -> str:
    """Install ``oxt`` with ``unopkg add --force`` (``--shared``: for all users, needed as root).

    ``env`` are extra ``-env:NAME=value`` bootstrap settings (tests use a private profile).
    Returns unopkg's output; RuntimeError with it if unopkg fails.
    """
    unopkg = shutil.which("unopkg")
    if unopkg is None:
        raise FileNotFoundError("unopkg (LibreOffice) is not installed")
    cmd = [unopkg, "add", "--force", *(["--shared"] if shared else []),
           *[f"-env:{e}" for e in env or []], str(Path(oxt).resolve())]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    text = (r.stdout + r.stderr).strip()
    if r.returncode != 0 or "ERROR" in text:
        raise RuntimeError(f"unopkg add failed (exit {r.returncode}): {text[-2000:]}")
    return text


# ------------------------------------------------------------ names in files
_CALL = re.compile(r"(?<![A-Za-z0-9_.])(?:" + re.escape(PREFIX) + r")?([A-Z][A-Z0-9_]*)(?=\()",
                   re.IGNORECASE)


def retarget_formula(formula: str, to: str) -> str:
    """``formula`` with every cryptoplan call spelt for ``to`` (``"calc"`` or ``"excel"``).

    ``excel``: ``ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC(`` -> ``ERLANGC(``; ``calc``: the reverse.
    Text inside string literals is left alone; other functions are unchanged.
    """
    if to not in ("calc", "excel"):
        raise InputError(f"to must be 'calc' or 'excel' (got {to!r})")
    parts = re.split(r'("(?:[^"]|"")*")', formula)

    def name(m):
        fn = m.group(1).upper()
        if fn not in _NAMES:
            return m.group(0)
        return PREFIX + fn if to == "calc" else fn
    return "".join(p if i % 2 else _CALL.sub(name, p) for i, p in enumerate(parts))
