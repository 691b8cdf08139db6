"""The command line's own error: an unusable file or input, exit code 4 (click and the standard library only)."""

from __future__ import annotations

import click

__all__ = ["UnusableInput"]


class UnusableInput(click.ClickException):
    """Exit code 4 with ``error: MESSAGE``, as ``recalc`` reports an unusable file or input."""

    exit_code = 4

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True)
