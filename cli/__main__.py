"""``python -m cryptoplan.cli``: the ``cryptoplan`` command."""

from cryptoplan.cli import run

run()
