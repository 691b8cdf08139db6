"""The ``cryptoplan`` command line: every command, in one place.

========================  =========================================================
module                    commands
========================  =========================================================
:mod:`.model_commands`    ``capacity``, ``fit``, ``calibrate``, ``crossval``
:mod:`.demo`              ``demo`` (the main job)
:mod:`.workbook_commands` ``template``, ``recalc``, ``sweep``, ``functions``
:mod:`.plan_command`      ``plan`` (every workload of a TOML plan file)
========================  =========================================================

The command modules import click and the standard library only; each command loads
the model, the formula engine or openpyxl when it runs, so ``cryptoplan --help`` and
usage errors answer without loading NumPy or SciPy (``tests/bench_cli.py`` times it).
"""

from __future__ import annotations

import click

from .demo import demo
from .model_commands import calibrate, capacity, crossval, fit
from .plan_command import plan_command
from .workbook_commands import (
    calc_addin_command, functions_command, recalc_command, retarget_command, sweep_command,
    template_command,
)

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cryptoplan")
def main() -> None:
    """cryptoplan: capacity planning for z/OS crypto workloads (Crypto Express, AT-TLS, MQ AMS)."""


for _command in (plan_command, capacity, fit, calibrate, crossval, demo, functions_command, template_command, recalc_command,
                 sweep_command, calc_addin_command, retarget_command):
    main.add_command(_command)
del _command
