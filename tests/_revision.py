"""A revision of cryptoplan's source, importable from a folder: the benchmarks' "before" and "now".

Since the folders install as ``cryptoplan.model``, ``cryptoplan.workbook``, ``cryptoplan.addin``
and ``cryptoplan.data``, the code imports itself under those names; revisions before that
change import ``model``, ``workbook``, ``addin``.  :func:`source_tree` lays a revision out the
way its own code expects and says which names to use.
"""

from __future__ import annotations

import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("model", "workbook", "addin", "data")


def packaged(rev: str | None) -> bool:
    """True when ``rev`` (None: the checkout) installs its folders as ``cryptoplan.<folder>``."""
    text = ((ROOT / "pyproject.toml").read_text() if rev is None else
            subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:pyproject.toml"], check=True,
                           capture_output=True, text=True).stdout)
    return '"cryptoplan.model" = "model"' in text


def source_tree(rev: str | None, dest: Path, folders=FOLDERS) -> tuple[Path, str]:
    """Put ``rev``'s ``folders`` (None: the checkout's, linked) under ``dest``.

    Returns ``(path, prefix)``: put ``path`` first on ``PYTHONPATH`` and import
    ``prefix + "model.fit"``, ``prefix + "workbook.cli"``, ... (``prefix`` is ``"cryptoplan."``
    or ``""``).
    """
    prefix = "cryptoplan." if packaged(rev) else ""
    where = dest / "cryptoplan" if prefix else dest
    where.mkdir(parents=True, exist_ok=True)
    if rev is None:
        for f in folders:
            (where / f).symlink_to(ROOT / f, target_is_directory=True)
    else:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *folders], check=True,
                             capture_output=True).stdout
        tarfile.open(fileobj=BytesIO(tar)).extractall(where, filter="data")
    return dest, prefix
