"""The ``cryptoplan`` command line: every command, in one place.

========================  =========================================================
module                    commands
========================  =========================================================
:mod:`.model_commands`    ``capacity``, ``fit``, ``calibrate``, ``crossval``
:mod:`.demo`              ``demo`` (the main job)
:mod:`.workbook_commands` ``template``, ``recalc``, ``sweep``, ``functions``
:mod:`.plan_command`      ``plan`` (every workload of a TOML plan file)
:mod:`.rmf_command`       ``rmf`` (RMF's CRYPTO HARDWARE ACTIVITY report, read)
========================  =========================================================

The command modules import click and the standard library; the model, the formula engine
and openpyxl are bound at their tops with :func:`~cryptoplan.model.lazy.lazy_module` and load when a command
runs, so ``cryptoplan --help`` and usage errors answer without loading NumPy or SciPy
(``tests/bench_cli.py`` times it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import errno
import os
import sys

import click

from . import collector
from .demo import demo
from .errors import Finished, UnusableInput
from .model_commands import calibrate, capacity, crossval, fit
from .plan_command import plan_command
from .rmf_command import rmf_command
from .workbook_commands import (
    calc_addin_command, functions_command, recalc_command, retarget_command, sweep_command,
    template_command,
)
from cryptoplan.model.errors import CryptoplanError
from cryptoplan.model.lazy import lazy_module

__all__ = ["main", "run"]

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model import params as model_params
else:
    model_params = lazy_module("cryptoplan.model.params")

class _Main(click.Group):
    """The command group: a parameter file that cannot be used is a user error, not a traceback.

    Any command may load the parameter file ``$CRYPTOPLAN_PARAMS`` names (``demo``, ``fit
    --check``, ``capacity``...); its :class:`~cryptoplan.model.params.ParameterFileError`
    becomes the one-line message ``recalc`` gives, exit code 4 (unusable file or input).
    """

    def main(self, *args, **kwargs):
        """Run the command; an unusable standard output is one line on standard error, exit 4.

        Closed (``>&-``): Python has no ``sys.stdout`` and every answer would vanish; full or
        failing (``> /dev/full``): the write raises.  Neither is a traceback or a silent exit 0.
        """
        if sys.stdout is None:
            if sys.stderr is not None:
                sys.stderr.write("error: standard output is closed: cryptoplan prints its answers there; "
                                 "redirect it to a file or to /dev/null\n")
            sys.exit(UnusableInput.exit_code)
        try:
            return super().main(*args, **kwargs)
        except OSError as exc:
            if exc.errno == errno.EPIPE:        # a reader that stopped early (| head): as click does
                sys.exit(1)
            try:
                sys.stderr.write(f"error: cannot write the output: {exc.strerror or exc}\n")
            except (OSError, AttributeError):
                pass
            sys.exit(UnusableInput.exit_code)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except CryptoplanError as exc:
            if isinstance(exc, model_params.ParameterFileError):
                text = str(exc)
                named = "CRYPTOPLAN_PARAMS" in text or not os.environ.get("CRYPTOPLAN_PARAMS")
                raise UnusableInput(text if named else f"CRYPTOPLAN_PARAMS: {text}") from None
            # what a command did not turn into its own message is still the user's input, named
            # by the error itself: one line and exit 2, never a traceback
            raise click.UsageError(str(exc)) from None


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cryptoplan")
def main() -> None:
    """cryptoplan: capacity planning for z/OS crypto workloads (Crypto Express, AT-TLS, MQ AMS)."""
    collector.fewer_passes()
    # A file name the shell handed over as invalid UTF-8 (surrogate escapes) must not make
    # "wrote NAME" fail after the file was written: such characters print as \udcff escapes.
    for stream in (sys.stdout, sys.stderr):
        # io.TextIOWrapper's method: a stream put in their place (or None) may not have it
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:
            continue
        try:
            reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass


def run() -> None:
    """The ``cryptoplan`` console script (and ``python -m cryptoplan.cli``): :func:`main`.

    A command that ends with :class:`~.errors.Finished` (``recalc``) has written and closed its
    files and printed its answers; the process then ends at once with the command's exit code,
    standard output and error flushed.  Python's own exit would free every object the command
    built, one by one, and tear every module down: 23-26 ms of the template's 0.37 s recalc
    (medians of 25 interleaved runs).  Every other command ends as Python ends, with the
    cycle collector as it was before (:mod:`.collector`).
    """
    before = collector.own_process()
    try:
        main()
    except Finished as done:
        code = done.code if isinstance(done.code, int) else 1
        try:
            sys.stdout.flush()
        except OSError as exc:          # what main() says of a write that fails, said here
            if exc.errno == errno.EPIPE:
                code = 1
            else:
                code = UnusableInput.exit_code
                _say(f"error: cannot write the output: {exc.strerror or exc}\n")
        _say("")
        os._exit(code)
    finally:        # a command that returned or raised (SystemExit): a caller that goes on
        collector.give_back(before)


def _say(text: str) -> None:
    """Write ``text`` to standard error and flush it, if it can be."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


for _command in (plan_command, rmf_command, capacity, fit, calibrate, crossval, demo, functions_command, template_command, recalc_command,
                 sweep_command, calc_addin_command, retarget_command):
    main.add_command(_command)
del _command
