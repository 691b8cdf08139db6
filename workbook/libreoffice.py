"""LibreOffice (headless) as a reference spreadsheet engine, for tests and benchmarks.

``soffice --headless --convert-to xlsx`` loads a workbook and saves it again.
By default LibreOffice *keeps* the cached values of an xlsx file (its
"Recalculation on file load" option for Excel 2007+ files defaults to
"Never"), computing only cells that have none.  :func:`convert` can run it
with a private user profile whose ``OOXMLRecalcMode`` is 0 ("Always"), so
that every formula is recalculated: a true second engine to compare with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from cryptoplan.model.lazy import lazy_module


if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.addin import calc
else:
    calc = lazy_module("cryptoplan.addin.calc")   # when an add-in is installed

__all__ = ["soffice", "convert", "profile", "install_extension"]

_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>{mode}</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>{mode}</value></prop></item>
</oor:items>
"""


def soffice() -> str | None:
    """Path of the LibreOffice executable, or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def profile(folder, recalc: bool) -> str:
    """Create a LibreOffice user profile in ``folder``; return its ``-env`` URL."""
    user = Path(folder) / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(_XCU.format(mode=0 if recalc else 1))
    return Path(folder).resolve().as_uri()


def _shared_cache(folder) -> str:
    """Bootstrap setting that keeps "shared" extensions inside the profile ``folder``."""
    return f"UNO_SHARED_PACKAGES_CACHE={(Path(folder) / 'shared').resolve().as_uri()}"


def _shared_packages(folder) -> list[str]:
    """``-env:`` arguments for ``folder``: its own shared-extension cache, if it has one."""
    return [f"-env:{_shared_cache(folder)}"] if (Path(folder) / "shared").is_dir() else []


def install_extension(folder, oxt, *, timeout: float = 300.0) -> None:
    """Install the extension ``oxt`` into the private profile ``folder`` (for tests).

    ``unopkg`` refuses a per-user install as root, and a ``--shared`` one would change the
    LibreOffice installation for everyone; with its shared-package cache moved into the
    profile (``UNO_SHARED_PACKAGES_CACHE``, given again by :func:`convert`) the install
    stays in ``folder``.
    """
    (Path(folder) / "shared").mkdir(parents=True, exist_ok=True)
    calc.install(oxt, shared=True, timeout=timeout,
            env=[f"UserInstallation={Path(folder).resolve().as_uri()}", _shared_cache(folder)])


def convert(paths, outdir, *, recalc: bool = True, profile_dir=None, timeout: float = 300.0) -> list[Path]:
    """Open ``paths`` in headless LibreOffice and save them as xlsx in ``outdir``.

    Parameters
    ----------
    paths : list of path
        Workbooks to convert (one LibreOffice start for all).
    outdir : path
        Destination folder (created).
    recalc : bool
        Recalculate every formula on load (private profile with
        ``OOXMLRecalcMode=0``); ``False`` keeps cached values (LibreOffice's default).
    profile_dir : path, optional
        Reuse this profile folder (faster after the first start).

    Returns
    -------
    list of Path
        The converted files, in the order of ``paths``.
    """
    exe = soffice()
    if exe is None:
        raise FileNotFoundError("LibreOffice (soffice) is not installed")
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    tmp = None
    if profile_dir is None:
        tmp = tempfile.mkdtemp(prefix="lo-profile-")
        profile_dir = tmp
    url = profile(profile_dir, recalc)
    try:
        cmd = [exe, f"-env:UserInstallation={url}", *_shared_packages(profile_dir), "--headless", "--norestore",
               "--convert-to", "xlsx", "--outdir", str(outdir)] + [str(p) for p in paths]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "HOME": os.environ.get("HOME", str(outdir))})
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    outs = [outdir / (Path(p).stem + ".xlsx") for p in paths]
    missing = [str(o) for o in outs if not o.exists()]
    if r.returncode != 0 or missing:
        raise RuntimeError(f"LibreOffice conversion failed (exit {r.returncode}): {r.stderr[-2000:]}"
                           f" missing: {missing}")
    return outs
