"""The cycle collector while a command runs: rare passes, and none a process about to end pays.

A command builds tens of thousands of small objects (cells, syntax trees, closures) and frees
few.  CPython's cycle collector, run every 700 allocations by default, scanned them again and
again: 30 ms of the template's 0.4 s recalc.  During a command it runs every 200,000
allocations instead, as mypy's command line does (``gc.set_threshold(200_000, 30, 30)``);
``recalc``, which keeps everything it builds until it has written its file, does not run it.

A program or test that runs a command (:func:`click.testing.CliRunner`, ``main(...)``) gets
its collector back as it was when the command ends.  The console script (:func:`.run`) owns
its process, which ends with the command: putting the thresholds back there would only make
the collector pass over every object the command built, once, just before the process ends
(11-14 ms of the template's recalc, measured with :data:`gc.callbacks`).
"""

from __future__ import annotations

import gc

import click

__all__ = ["THRESHOLD", "own_process", "give_back", "fewer_passes", "no_passes"]

#: Allocations between two passes over the youngest generation while a command runs.
THRESHOLD = 200_000

_owns_process = False


def own_process() -> tuple:
    """The console script's: this process runs one command and ends; collect rarely from now.

    Returns the collector's state before, for :func:`give_back` (a program that calls the
    console script and goes on after its ``SystemExit``).
    """
    global _owns_process
    before = (gc.get_threshold(), gc.isenabled())
    _owns_process = True
    gc.set_threshold(THRESHOLD, 30, 30)
    return before


def give_back(before: tuple) -> None:
    """The collector as :func:`own_process` found it (a command that returned or raised)."""
    global _owns_process
    _owns_process = False
    threshold, enabled = before
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()


def fewer_passes() -> None:
    """Every command's: the collector's thresholds raised to :data:`THRESHOLD` until it ends."""
    if _owns_process:
        return
    before = gc.get_threshold()
    gc.set_threshold(THRESHOLD, 30, 30)
    click.get_current_context().call_on_close(lambda: gc.set_threshold(*before))


def no_passes() -> None:
    """A command that keeps what it builds until it ends (``recalc``): no collection at all.

    How much memory it takes is bounded by what it reads (``--max-cells``), not by the
    collector, which would find next to nothing to free.
    """
    if not gc.isenabled():
        return
    ctx = None if _owns_process else click.get_current_context()
    gc.disable()
    if ctx is not None:
        ctx.call_on_close(gc.enable)
