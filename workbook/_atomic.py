"""Atomic file replacement: write to a temporary file beside the destination, then rename."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

__all__ = ["atomic_target"]


@contextmanager
def atomic_target(dest):
    """Yield a temporary path in ``dest``'s folder; rename it onto ``dest`` on success.

    On any exception (including a check inside the block raising) the
    temporary file is removed and ``dest`` is left as it was: a reader never
    sees a half-written workbook or results file.
    """
    dest = os.fspath(dest)
    folder = os.path.dirname(os.path.abspath(dest))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(dest) + ".", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
