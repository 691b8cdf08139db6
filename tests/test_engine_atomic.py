"""Atomic writes (``workbook.engine.atomic``): a full disk, a folder one may not write to, a missing
folder end in one clear message naming the file, with nothing left behind.

Issue 14 found 8 tracebacks for ``sweep``/``template`` into a missing or read-only folder or
onto a full disk.  CI runs as root, whom ``chmod`` does not stop, so the operating system's
refusals are simulated where they surface: ``tempfile.mkstemp`` (EACCES, a folder one may not
write to) and the first write (ENOSPC, a full disk).
"""

from __future__ import annotations

import errno
import os
import tempfile

import pytest
from click.testing import CliRunner

from cryptoplan.workbook.engine import atomic as _atomic
from cryptoplan.workbook.engine.atomic import OutputError, atomic_target
from cryptoplan.cli import main


def _refuse_mkstemp(monkeypatch):
    def mkstemp(*a, **k):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def test_a_folder_one_may_not_write_to(tmp_path, monkeypatch):
    _refuse_mkstemp(monkeypatch)
    with pytest.raises(OutputError, match=r"cannot write .*out\.csv: Permission denied"):
        with atomic_target(tmp_path / "out.csv"):
            pass


def test_a_full_disk_leaves_the_old_file_and_no_temporary(tmp_path):
    dest = tmp_path / "out.csv"
    dest.write_text("old")
    with pytest.raises(OutputError, match=r"cannot write .*out\.csv: No space left on device"):
        with atomic_target(dest) as tmp:
            with open(tmp, "w") as fh:
                fh.write("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert dest.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_a_missing_folder(tmp_path):
    with pytest.raises(OutputError, match="the folder .*nope does not exist"):
        with atomic_target(tmp_path / "nope" / "out.csv"):
            pass


@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    path = tmp_path_factory.mktemp("atomic") / "planner.xlsx"
    assert CliRunner().invoke(main, ["template", "-o", str(path)]).exit_code == 0
    return path


def _commands(planner, out):
    return {
        "template": ["template", "-o", str(out.with_suffix(".xlsx"))],
        "recalc": ["recalc", str(planner), "-o", str(out.with_suffix(".xlsx"))],
        "sweep csv": ["sweep", str(planner), "--vary", "TxRate=1000,2000", "-o", str(out.with_suffix(".csv"))],
        "sweep xlsx": ["sweep", str(planner), "--vary", "TxRate=1000,2000", "-o", str(out.with_suffix(".xlsx"))],
    }


@pytest.mark.parametrize("command", ["template", "recalc", "sweep csv", "sweep xlsx"])
@pytest.mark.parametrize("failure", ["missing folder", "permission", "full disk"])
def test_cli_writes_fail_with_a_message(planner, tmp_path, monkeypatch, command, failure):
    out = (tmp_path / "missing" / "out") if failure == "missing folder" else tmp_path / "out"
    if failure == "permission":
        _refuse_mkstemp(monkeypatch)
    if failure == "full disk":
        real = os.replace

        def replace(src, dst):  # the last step of every write: the data did not fit
            if str(dst).startswith(str(tmp_path)):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(src, dst)
        monkeypatch.setattr(_atomic.os, "replace", replace)
    res = CliRunner().invoke(main, _commands(planner, out)[command])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    if command == "template" and failure == "missing folder":   # documented: template creates it
        assert res.exit_code == 0 and (tmp_path / "missing" / "out.xlsx").is_file(), res.output
        return
    assert res.exit_code in ((1,) if command == "template" else (2, 4)), res.output
    reason = {"missing folder": "does not exist", "permission": "Permission denied",
              "full disk": "No space left on device"}[failure]
    assert reason in res.output and "out." in res.output, res.output
    assert "Traceback" not in res.output
    left = [p.name for p in tmp_path.iterdir()] if tmp_path.exists() else []
    assert left == [] or left == ["missing"] and not any((tmp_path / "missing").iterdir()), left
