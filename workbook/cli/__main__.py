"""``python -m cryptoplan.workbook.cli``: the ``cryptoplan`` command."""

from cryptoplan.workbook.cli import main

main()
