"""The command line's own errors and output checks (click and the standard library only).

:class:`UnusableInput` is exit code 4, as ``recalc`` reports an unusable file or input.
:func:`check_output_file`, :func:`writing` and :func:`report_folder` give every command that
writes a file or a report folder the same refusals, before any work and while writing: a
missing folder, a name too long, a device, FIFO or dangling link, a read-only or full file
system are each one line naming the path, never a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import math
import os
from contextlib import contextmanager
from pathlib import Path

import click

from cryptoplan.model.lazy import lazy_module

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.workbook.engine import atomic
else:
    atomic = lazy_module("cryptoplan.workbook.engine.atomic")   # file writes: tempfile, uuid on first use
__all__ = ["UnusableInput", "Finite", "Finished", "check_output_file", "writing", "report_folder"]


class Finite(click.FloatRange):
    """A finite number in a range: click's FloatRange, which lets inf and nan through (the CLI's
    numeric options use it)."""

    def convert(self, value, param, ctx):
        v = super().convert(value, param, ctx)
        if not math.isfinite(v):
            self.fail(f"{v} is not a finite number.", param, ctx)
        return v


class UnusableInput(click.ClickException):
    """Exit code 4 with ``error: MESSAGE``, as ``recalc`` reports an unusable file or input."""

    exit_code = 4

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True)


class Finished(SystemExit):
    """A command's end with its exit code, after which its process may end at once.

    Raised instead of :func:`sys.exit` by a command whose files are written and closed and
    whose answers are printed, and that leaves nothing for Python's exit to do (no temporary
    file or connection to clean up; a worker thread of the Erlang kernels, if any, is idle):
    the console script (:func:`cryptoplan.cli.run`) then ends
    the process without freeing the objects the command built one by one.  Anywhere else (a
    test's ``CliRunner``, a program calling :func:`cryptoplan.cli.main`) it is ``SystemExit``.
    """


def check_output_file(path, option: str) -> None:
    """Refuse an output file that cannot be written, before the command computes anything.

    Raises
    ------
    click.UsageError
        Naming ``option``, the path and the reason (its folder is missing, the name is too
        long, it is a folder, device, FIFO or link, the folder takes no new file: read-only or
        no permission).
    """
    try:
        atomic.check_destination(path)
    except atomic.OutputError as exc:
        raise click.UsageError(f"{option}: {exc}") from None
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise click.UsageError(f"{option}: cannot write {path}: the folder {folder} does not exist")
    try:
        atomic.check_folder_writable(path)
    except atomic.OutputError as exc:
        raise click.UsageError(f"{option}: {exc}") from None


@contextmanager
def writing(path):
    """A temporary path beside ``path``, renamed onto it on success (see ``atomic_target``).

    Raises
    ------
    click.ClickException
        The file cannot be written (read-only folder, full file system...); nothing is left behind.
    """
    try:
        with atomic.atomic_target(path) as tmp:
            yield tmp
    except atomic.OutputError as exc:
        raise click.ClickException(str(exc)) from None


def report_folder(path, option: str = "--report"):
    """The report folder ``path``, created if missing (a ``pathlib.Path``).

    Raises
    ------
    click.UsageError
        ``path`` exists and is not a folder (a file, ``/dev/null``, a FIFO, a dangling link).
    click.ClickException
        The folder cannot be created (read-only parent, name too long...).
    """
    folder = Path(path)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise click.UsageError(f"{option}: {folder} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(f"{option}: cannot create the folder {folder} ({exc.strerror or exc})") from None
    return folder
