"""RMF's crypto activity from a file, whichever form it has: :func:`read_activity`.

A planner has the Crypto Hardware Activity report as the Postprocessor printed it (text,
:mod:`.rmf_report`) or the SMF type 70 subtype 2 records it is made from (binary, :mod:`.smf70`).
Every route that reads one (``cryptoplan rmf``, ``calibrate --rmf-report``/``--smf``, a plan's
``rmf = "FILE"``, the Site RMF sheet) reads it here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .._text import value_text
from .rmf_records import CryptoActivity, check_records
from .rmf_report import RmfReportError, read_rmf_report
from .smf70 import read_smf70

__all__ = ["read_activity"]


def read_activity(path, smf: bool | None = None) -> tuple[list[CryptoActivity], list[str]]:
    """``(records, warnings)`` of the report or SMF 70-2 file at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
    smf : bool, optional
        True: SMF 70-2 records; False: the printed report; None: decided from the file, binary
        when its first record descriptor word holds a NUL byte (its third and fourth bytes are
        zero; no report text has one).

    Raises
    ------
    RmfReportError, Smf70Error
        Both :class:`~.errors.SiteFileError`: the file, the line or byte offset, and
        what was expected; a file that cannot be read is an RmfReportError naming it.
    """
    try:
        mode = os.stat(Path(path)).st_mode          # before any open: a FIFO's open would wait for a writer
    except (OSError, ValueError) as e:              # ValueError: a NUL in the name
        name = os.fspath(path)
        raise RmfReportError(f"{name if name.isprintable() else value_text(name)}: cannot read RMF's report "
                             f"({getattr(e, 'strerror', None) or e})") from None
    if not stat.S_ISREG(mode):
        name = os.fspath(path)
        raise RmfReportError(f"{name if name.isprintable() else value_text(name)}: not a regular file (a folder, "
                             "FIFO or device): give RMF's report or SMF 70-2 records as a file")
    if smf is None:
        try:
            with open(Path(path), "rb") as f:
                smf = b"\x00" in f.read(4)
        except OSError as e:
            raise RmfReportError(f"{path}: cannot read RMF's report ({e.strerror or e})") from None
    records, warnings = read_smf70(path) if smf else read_rmf_report(path)
    check_records(records)
    return records, warnings
