"""Atomic file replacement: write to a temporary file beside the destination, then rename."""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError

import errno
import os
import re
import signal
import socket
import stat
import tempfile
import threading
import time
from contextlib import contextmanager

__all__ = ["atomic_target", "atomic_files", "check_destination", "check_folder_writable", "OutputError", "STALE_SECONDS"]

# A temporary file of our own naming, ".NAME.PID.XXXXXXXX.tmp", whose process PID is no longer
# running was left by a process that was killed (SIGKILL cannot be caught): the next write to NAME
# removes it.  One older than this is removed whatever its PID (a PID reused since, or a file of
# the earlier naming ".NAME.XXXXXXXX.tmp").
STALE_SECONDS = 3600.0
_PID_PART = re.compile(r"\.(?:cryptoplan-[A-Za-z0-9]{1,16}-)?([0-9]{1,10})\.[A-Za-z0-9_]{8}\.tmp")
_OLD_PART = re.compile(r"\.[A-Za-z0-9_]{8}\.tmp")             # before the PID was in the name
#: Our temporary files, whatever they were for: marked with this tool's name and the host whose
#: process wrote them (a process is only known to be gone on its own host: a folder shared over
#: NFS may hold another host's files being written)
_ANY_OURS = re.compile(r"\..+\.cryptoplan-([A-Za-z0-9]{1,16})-([0-9]{1,10})\.[A-Za-z0-9_]{8}\.tmp")


def _host() -> str:
    """This host's name as our temporary files carry it (letters and digits, at most 16)."""
    return re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:16] or "host"


def _tmp_prefix(dest: str) -> str:
    """``.NAME.cryptoplan-HOST-PID.``: the start of a temporary file's name for ``dest``."""
    return f".{os.path.basename(dest)}.cryptoplan-{_host()}-{os.getpid()}."


class OutputError(CryptoplanError, ValueError):
    """An output file cannot be written where the user asked (a ``ValueError``: bad input)."""


# The temporary file's name adds this to the destination's: "." before, ".PID.XXXXXXXX.tmp"
# after (a PID has at most 7 digits on Linux, pid_max 4194304).
_TMP_EXTRA = len("." + ".4194304.XXXXXXXX.tmp")


def check_destination(dest: str | os.PathLike[str]) -> None:
    """Only regular files are ever replaced: never a device, FIFO, socket, directory or link.

    Also refuses a name the file system cannot hold once the temporary file's 14
    characters are added (most allow 255 bytes a name), naming the limit.

    Raises
    ------
    OutputError
        Naming the path and the reason.
    """
    dest = os.fspath(dest)
    folder = os.path.dirname(os.path.abspath(dest)) or "."
    name = os.path.basename(dest)
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX") if os.path.isdir(folder) else 255
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(name))
    if size + _TMP_EXTRA > limit:
        raise OutputError(f"cannot write {dest[:60]}...: the file name is {size} bytes long; at most "
                          f"{limit - _TMP_EXTRA} (the file system allows {limit} a name, and the temporary "
                          f"file written first adds {_TMP_EXTRA})")
    try:
        st = os.lstat(dest)
    except FileNotFoundError:
        return
    except OSError as exc:          # a path component that is not a folder, a name too long
        raise OutputError(f"cannot write {dest}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(f"{dest} is a symbolic link: give the file it points to "
                          f"({os.path.realpath(dest)}); cryptoplan only replaces regular files")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise OutputError(f"{dest} is {kind}: cryptoplan only replaces regular files")


def check_folder_writable(dest: str | os.PathLike[str]) -> None:
    """Refuse, before any work, a destination whose folder cannot take a new file.

    Creates and removes an unnamed temporary file in the folder (``tempfile.TemporaryFile``:
    ``O_TMPFILE`` where the system has it, so nothing is ever visible there), which fails as the
    real write would on a read-only file system or a folder without write permission.  An empty
    file needs no space: a full disk is found by the write itself, which leaves nothing behind.

    Raises
    ------
    OutputError
        Naming the path and the system's reason.
    """
    folder = os.path.dirname(os.path.abspath(os.fspath(dest))) or "."
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise OutputError(f"cannot write {os.fspath(dest)}: {exc.strerror or exc}") from None


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists (on this host)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0          # another user's live process; an absurd number is nobody's
    return True


def _sweep_stale(folder: str, *names: str) -> None:
    """Remove the temporary files killed runs left behind in ``folder`` (issue 64, finding 18),
    reading the folder once for every destination ``names`` in it.

    Ours are ``.NAME.cryptoplan-HOST-PID.XXXXXXXX.tmp``: any of them, whatever NAME, is removed
    when written on this host by a process PID that no longer runs (a SIGKILL'd writer of another
    file in the folder); one for a name of ``names`` also when older than :data:`STALE_SECONDS` (so
    are the earlier ``.NAME.PID.XXXXXXXX.tmp`` and ``.NAME.XXXXXXXX.tmp``, and one of a gone PID).  A file
    a live process is writing is never touched before the hour; another name's file without the
    mark (a user's ``.backup.2024.20240101.tmp``) never.
    """
    now = time.time()
    prefixes = sorted(("." + name for name in names), key=len, reverse=True)   # the longest name first
    host = _host()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        base = entry.name
        if not (base.startswith(".") and base.endswith(".tmp")):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            m = _ANY_OURS.fullmatch(base)
            dead = m is not None and m.group(1) == host and not _running(int(m.group(2)))
            prefix = next((p for p in prefixes if base.startswith(p + ".")), None)
            rest = None if prefix is None else base[len(prefix):]
            pid = None if rest is None else _PID_PART.fullmatch(rest)
            mine = rest is not None and (pid is not None or _OLD_PART.fullmatch(rest) is not None)
            # an unmarked one for NAME (written before the mark) as before: gone when its PID is
            dead = dead or (pid is not None and m is None and not _running(int(pid.group(1))))
            if dead or (mine and now - st.st_mtime > STALE_SECONDS):
                os.unlink(entry.path)
        except OSError:
            pass  # another process removed or renamed it first


def _mode_for(dest: str) -> int:
    """The destination's mode if it exists, else what a new file gets under the umask."""
    try:
        return stat.S_IMODE(os.stat(dest).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextmanager
def _signals_raise():
    """While writing, SIGTERM and SIGHUP unwind like Ctrl-C, so the temporary file is removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    old = {}
    for sig in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if sig is not None:
            old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


@contextmanager
def atomic_target(dest):
    """Yield a temporary path in ``dest``'s folder; rename it onto ``dest`` on success.

    On any exception (including a check inside the block raising, Ctrl-C,
    SIGTERM or SIGHUP) the temporary file is removed and ``dest`` is left as
    it was: a reader never sees a half-written workbook or results file.
    Only a regular file (or nothing) is replaced; the new file keeps the old
    one's permissions, or gets the umask's.

    Raises
    ------
    OutputError
        If ``dest`` is not a regular file, or its folder is missing or not
        writable (the message names the path and the reason).
    """
    dest = os.fspath(dest)
    check_destination(dest)
    folder = os.path.dirname(os.path.abspath(dest))
    if not os.path.isdir(folder):
        raise OutputError(f"cannot write {dest}: the folder {folder} does not exist")
    _sweep_stale(folder, os.path.basename(dest))
    try:
        fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(dest), suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write {dest}: {exc.strerror or exc}") from None
    os.close(fd)
    try:
        with _signals_raise():
            yield tmp
            os.chmod(tmp, _mode_for(dest))
            check_destination(dest)   # it may have been replaced by something else meanwhile
            os.replace(tmp, dest)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise OutputError(f"cannot write {dest}: {exc.strerror or exc}") from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@contextmanager
def atomic_files(dests, replace: bool = True):
    """Several files written as one: yield a temporary path for each of ``dests``, rename them
    all onto their destinations once every one is written.

    Every destination is checked (:func:`check_destination`) before anything is written, so a
    FIFO or a link among them refuses the whole set; on any exception (a full disk, Ctrl-C,
    SIGTERM, SIGHUP) every temporary file is removed and no destination has changed.  The
    renames themselves come last, one after another.

    ``replace`` False: a destination that exists when the files are put in place (another process
    wrote it since the caller checked) is not replaced: each file is published with a hard link,
    which fails where the name exists (:func:`_publish_new`), in the same order in every writer,
    so of two writers racing for one new set the second finds the first's first file and stops,
    having published nothing.

    Raises
    ------
    OutputError
        If a destination is not a regular file, its folder is missing, or a write fails; with
        ``replace`` False, ``"... exists; use --force"`` if a destination appeared meanwhile.
    """
    dests = [os.fspath(d) for d in dests]
    for d in dests:
        check_destination(d)
        if not os.path.isdir(os.path.dirname(os.path.abspath(d))):
            raise OutputError(f"cannot write {d}: the folder {os.path.dirname(os.path.abspath(d))} does not exist")
    by_folder: dict[str, list[str]] = {}
    for d in dests:
        by_folder.setdefault(os.path.dirname(os.path.abspath(d)), []).append(os.path.basename(d))
    tmps = []
    try:
        with _signals_raise():
            for folder, names in by_folder.items():
                _sweep_stale(folder, *names)
            for d in dests:
                folder = os.path.dirname(os.path.abspath(d))
                fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(d), suffix=".tmp", dir=folder)
                os.close(fd)
                tmps.append(tmp)
            yield list(tmps)
            for d, tmp in zip(dests, tmps):
                os.chmod(tmp, _mode_for(d))
                check_destination(d)
            if replace:
                for d, tmp in zip(dests, tmps):
                    os.replace(tmp, d)
            else:
                _publish_new(dests, tmps)
    except OSError as exc:
        _remove(tmps)
        raise OutputError(f"cannot write {', '.join(dests)}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmps)
        raise


def _written_meanwhile(d: str) -> OutputError:
    return OutputError(f"{d} exists (written meanwhile by another run); use --force to replace it")


def _publish_new(dests, tmps) -> None:
    """Put each ``tmps[i]`` at ``dests[i]`` where no file of that name exists, else raise
    OutputError (naming it) with none of this call's destinations left in place.

    A hard link is atomic and fails on an existing name; where the file system has none (some
    network and FUSE mounts), an exclusive create claims the name and the rename fills it."""
    done: list[tuple[str, tuple]] = []          # (destination, (device, inode) of what we put there)
    try:
        for d, tmp in zip(dests, tmps):
            st = os.stat(tmp)
            ident = (st.st_dev, st.st_ino)
            try:
                os.link(tmp, d)
            except FileExistsError:
                raise _written_meanwhile(d) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK, errno.ENOSYS):
                    raise
                try:
                    os.close(os.open(d, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                except FileExistsError:
                    raise _written_meanwhile(d) from None
                done.append((d, _ident(d)))
                os.replace(tmp, d)
                done[-1] = (d, ident)           # (the rename keeps the temporary file's inode)
                continue
            done.append((d, ident))
            try:
                os.unlink(tmp)
            except OSError:
                pass                            # published; the next writer into the folder sweeps it
    except BaseException:
        # only what is still ours: a run with --force may have replaced a name since we put it there
        _remove([d for d, ident in done if _ident(d) == ident])
        raise


def _ident(path: str):
    """``(device, inode)`` of ``path`` (not followed), or None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _remove(paths) -> None:
    for p in paths:
        try:
            if os.path.lexists(p):
                os.unlink(p)
        except OSError:
            pass
