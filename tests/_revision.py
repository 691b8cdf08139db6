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


def _pyproject(rev: str | None) -> str:
    return ((ROOT / "pyproject.toml").read_text() if rev is None else
            subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:pyproject.toml"], check=True,
                           capture_output=True, text=True).stdout)


def folders(rev: str | None) -> tuple[str, ...]:
    """The source folders of ``rev``: :data:`FOLDERS`, and ``cli`` once the command line has its own."""
    return FOLDERS + (("cli",) if '"cryptoplan.cli" = "cli"' in _pyproject(rev) else ())


def cli_module(tree: tuple[Path, str]) -> str:
    """The module ``python -m`` runs as the ``cryptoplan`` command in a :func:`source_tree`
    (``cryptoplan.cli``; ``workbook.cli`` in revisions before the command line had a folder)."""
    path, prefix = tree
    where = path / "cryptoplan" if prefix else path
    return f"{prefix}cli" if (where / "cli").exists() else f"{prefix}workbook.cli"


def packaged(rev: str | None) -> bool:
    """True when ``rev`` (None: the checkout) installs its folders as ``cryptoplan.<folder>``."""
    return '"cryptoplan.model" = "model"' in _pyproject(rev)


def source_tree(rev: str | None, dest: Path, only=None) -> tuple[Path, str]:
    """Put ``rev``'s source folders (``only`` those, if given; None: the checkout's, linked) under ``dest``.

    Returns ``(path, prefix)``: put ``path`` first on ``PYTHONPATH`` and import
    ``prefix + "model.fit"``, :func:`cli_module`, ... (``prefix`` is ``"cryptoplan."``
    or ``""``).
    """
    prefix = "cryptoplan." if packaged(rev) else ""
    where = dest / "cryptoplan" if prefix else dest
    where.mkdir(parents=True, exist_ok=True)
    folders_ = [f for f in folders(rev) if only is None or f in only]
    if rev is None:
        for f in folders_:
            (where / f).symlink_to(ROOT / f, target_is_directory=True)
    else:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *folders_], check=True,
                             capture_output=True).stdout
        tarfile.open(fileobj=BytesIO(tar)).extractall(where, filter="data")
    return dest, prefix
